//! `nic waves diff --clock`: reading a run edge by edge of its clock.

use super::diff::Touched;
use super::names::design_names;
use super::select::matches;
use super::source::{Changes, WaveFile};
use crate::value::Value;
use crate::WaveError;

/// The one value stream `clock` names in `file`: the signal whose design name is
/// `clock` exactly, else the one it matches as a pattern (design name or full path).
pub(super) fn clock_slot(file: &WaveFile, clock: &str) -> Result<usize, WaveError> {
    let header = file.header();
    let names = design_names(header);
    let exact: Vec<usize> = header
        .vars
        .iter()
        .zip(&names)
        .filter(|(_, n)| *n == clock)
        .map(|(v, _)| v.slot)
        .collect();
    let mut slots: Vec<usize> = header
        .vars
        .iter()
        .zip(&names)
        .filter(|(v, n)| {
            let mut design = (*v).clone();
            let mut parts: Vec<String> = n.split('.').map(String::from).collect();
            design.name = parts.pop().unwrap_or_default();
            design.scopes = parts;
            matches(clock, &design) || matches(clock, v)
        })
        .map(|(v, _)| v.slot)
        .collect();
    if !exact.is_empty() {
        slots = exact;
    }
    slots.sort_unstable();
    slots.dedup();
    match slots[..] {
        [slot] => Ok(slot),
        [] => Err(WaveError::NotFound {
            path: header.path.clone(),
            name: clock.to_string(),
            candidates: Vec::new(),
        }),
        _ => Err(WaveError::Ambiguous {
            path: header.path.clone(),
            name: clock.to_string(),
            candidates: header
                .vars
                .iter()
                .filter(|v| slots.contains(&v.slot))
                .map(|v| v.path())
                .collect(),
        }),
    }
}

/// One run read edge by edge of its clock: the values after each rising edge, and
/// which pairs changed since the edge before.
pub(super) struct Sampler {
    pub(super) changes: Changes,
    by_slot: Vec<Vec<usize>>,
    clock: usize,
    level: Option<bool>,
    pub(super) values: Vec<Option<Value>>,
    pub(super) dirty: Touched,
}

impl Sampler {
    pub(super) fn new(
        changes: Changes,
        by_slot: Vec<Vec<usize>>,
        clock: usize,
        pairs: usize,
    ) -> Sampler {
        Sampler {
            changes,
            by_slot,
            clock,
            level: None,
            values: vec![None; pairs],
            dirty: Touched {
                list: Vec::new(),
                flag: vec![false; pairs],
            },
        }
    }

    /// Read on to the next rising edge of the clock (0 to 1) and return its time.
    pub(super) fn next_edge(&mut self) -> Result<Option<u64>, WaveError> {
        for step in self.changes.by_ref() {
            let step = step?;
            let mut rose = false;
            let time = step.time;
            for (slot, value) in step.changes {
                if slot == self.clock {
                    let level = value.as_bool();
                    rose = self.level == Some(false) && level == Some(true);
                    self.level = level;
                }
                for &i in self.by_slot.get(slot).map(Vec::as_slice).unwrap_or(&[]) {
                    self.values[i] = Some(value.clone());
                    self.dirty.add(i);
                }
            }
            if rose {
                return Ok(Some(time));
            }
        }
        Ok(None)
    }
}
