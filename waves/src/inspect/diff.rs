//! `nic waves diff`: two runs compared signal by signal, in time order, streamed.

use super::edges::{clock_slot, Sampler};
use super::format::short;
use super::names::design_names;
use super::select::matches;
use super::source::{Changes, Step, WaveFile};
use super::time::format_time;
use crate::value::Value;
use crate::WaveError;
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

/// What to compare.
#[derive(Clone, Debug, Default)]
pub struct DiffOptions {
    /// Only signals whose design name matches one of these (dotted suffix or glob, as
    /// [`super::select`]); empty: every signal both files have.
    pub signals: Vec<String>,
    /// Differences before this time (femtoseconds) are ignored (reset, start-up).
    pub from: u64,
    /// Compare up to this time (femtoseconds, inclusive); `None`: to the end of both.
    pub to: Option<u64>,
    /// Compare only at the rising edges of this clock (a design name or pattern naming
    /// one signal in each file): the n-th edge of A against the n-th edge of B, each
    /// signal's value after everything recorded at the edge. For runs that record
    /// changes at different instants within a cycle.
    pub clock: Option<String>,
}

/// The first place two runs disagree.
#[derive(Clone, Debug)]
pub struct Difference {
    /// Femtoseconds (in A, with a clock: A's edge).
    pub time: u64,
    /// With a clock: the cycle (0 for the first rising edge) and B's time of that edge.
    pub cycle: Option<(usize, u64)>,
    /// The design name both files share (see [`super::names`]).
    pub signal: String,
    /// Full path in file A and its value then.
    pub a_name: String,
    /// `None`: no value yet.
    pub a: Option<Value>,
    /// Full path in file B.
    pub b_name: String,
    /// B's value.
    pub b: Option<Value>,
}

/// The outcome of [`diff`].
#[derive(Clone, Debug)]
pub struct DiffReport {
    /// Files A and B.
    pub paths: [PathBuf; 2],
    /// Signals compared (present in both).
    pub compared: usize,
    /// Signals left out because one file holds a string (an enum state's name) and
    /// the other a number.
    pub incomparable: Vec<String>,
    /// Design names only A has (compared with nothing).
    pub only_a: Vec<String>,
    /// Design names only B has.
    pub only_b: Vec<String>,
    /// Last time read in each file (femtoseconds).
    pub ends: [u64; 2],
    /// The first difference; `None`: the runs agree (see also `edges`).
    pub first: Option<Difference>,
    /// With a clock: the rising edges compared in A and B (they differ when one run
    /// has more cycles, which counts as a difference).
    pub edges: Option<[usize; 2]>,
}

impl DiffReport {
    /// Whether the runs differ: a value, or (with a clock) the number of cycles.
    pub fn differs(&self) -> bool {
        self.first.is_some() || self.edges.is_some_and(|[a, b]| a != b)
    }
}

/// The pairs compared, and the names of those skipped (`skip`: values not comparable).
fn compared(pairs: &[(String, usize, usize)], skip: &[bool]) -> (usize, Vec<String>) {
    let incomparable: Vec<String> = pairs
        .iter()
        .zip(skip)
        .filter(|(_, s)| **s)
        .map(|(p, _)| p.0.clone())
        .collect();
    (pairs.len() - incomparable.len(), incomparable)
}

impl fmt::Display for DiffReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "a: {}", self.paths[0].display())?;
        writeln!(f, "b: {}", self.paths[1].display())?;
        writeln!(
            f,
            "{} signals compared; {} only in a, {} only in b, {} not comparable (enum name against number)",
            self.compared,
            self.only_a.len(),
            self.only_b.len(),
            self.incomparable.len()
        )?;
        let show = |v: &Option<Value>| v.as_ref().map(short).unwrap_or_else(|| "(none)".into());
        if let Some([a, b]) = self.edges {
            writeln!(f, "rising edges: {a} in a, {b} in b")?;
        }
        if let (None, Some([a, b])) = (&self.first, self.edges) {
            if a != b {
                return write!(
                    f,
                    "the values agree at the {} edges both have, but a has {a} cycles and b {b}",
                    a.min(b)
                );
            }
        }
        match &self.first {
            None => write!(
                f,
                "same: no difference up to {} (a ends at {}, b at {})",
                format_time(self.ends[0].max(self.ends[1])),
                format_time(self.ends[0]),
                format_time(self.ends[1])
            ),
            Some(d) => write!(
                f,
                "first difference at {}{} in `{}`:\n  a: {} = {}\n  b: {} = {}",
                format_time(d.time),
                d.cycle
                    .map(|(c, tb)| format!(" (cycle {c}; b's edge at {})", format_time(tb)))
                    .unwrap_or_default(),
                d.signal,
                d.a_name,
                show(&d.a),
                d.b_name,
                show(&d.b)
            ),
        }
    }
}

/// Compare two waveform files: signals are paired by design name (exactly, else by a
/// unique dotted suffix of one name in the other), then every change in either file is
/// taken in time order (femtoseconds, whatever each file's timescale) and the paired
/// values compared as numbers (widths may differ). Stops at the first difference.
pub fn diff(a: WaveFile, b: WaveFile, options: &DiffOptions) -> Result<DiffReport, WaveError> {
    let paths = [a.header().path.clone(), b.header().path.clone()];
    let names_a = keyed(&a, options)?;
    let names_b = keyed(&b, options)?;
    let mut pairs: Vec<(String, usize, usize)> = Vec::new();
    let mut only_a = Vec::new();
    let mut unmatched_b: HashMap<&String, usize> = names_b.iter().map(|(k, v)| (k, v.0)).collect();
    let mut keys_a: Vec<&String> = names_a.keys().collect();
    keys_a.sort();
    for key in keys_a {
        let slot_a = names_a[key].0;
        if let Some(slot_b) = unmatched_b.remove(key) {
            pairs.push((key.clone(), slot_a, slot_b));
            continue;
        }
        let suffix_of =
            |x: &str, y: &str| x.ends_with(&format!(".{y}")) || y.ends_with(&format!(".{x}"));
        let found: Vec<&String> = unmatched_b
            .keys()
            .filter(|k| suffix_of(key, k))
            .copied()
            .collect();
        match found[..] {
            [k] => {
                let slot_b = unmatched_b.remove(k).unwrap_or_default();
                pairs.push((key.clone(), slot_a, slot_b));
            }
            _ => only_a.push(key.clone()),
        }
    }
    let mut only_b: Vec<String> = unmatched_b.keys().map(|k| (*k).clone()).collect();
    only_b.sort();
    if pairs.is_empty() {
        return Err(WaveError::BadArgument {
            message: format!(
                "{} and {} have no signal in common to compare",
                paths[0].display(),
                paths[1].display()
            ),
        });
    }

    let mut want_a = vec![false; a.header().slots];
    let mut want_b = vec![false; b.header().slots];
    // slot -> pair indices
    let mut by_a: Vec<Vec<usize>> = vec![Vec::new(); a.header().slots];
    let mut by_b: Vec<Vec<usize>> = vec![Vec::new(); b.header().slots];
    for (i, (_, sa, sb)) in pairs.iter().enumerate() {
        want_a[*sa] = true;
        want_b[*sb] = true;
        by_a[*sa].push(i);
        by_b[*sb].push(i);
    }
    let b_names: HashMap<usize, String> = names_b.values().map(|v| (v.0, v.1.clone())).collect();
    let describe = |time: u64,
                    cycle: Option<(usize, u64)>,
                    i: usize,
                    va: &[Option<Value>],
                    vb: &[Option<Value>]| {
        let key = &pairs[i].0;
        Difference {
            time,
            cycle,
            signal: key.clone(),
            a_name: names_a[key].1.clone(),
            a: va[i].clone(),
            b_name: b_names.get(&pairs[i].2).cloned().unwrap_or_default(),
            b: vb[i].clone(),
        }
    };
    if let Some(clock) = &options.clock {
        let clock_a = clock_slot(&a, clock)?;
        let clock_b = clock_slot(&b, clock)?;
        want_a[clock_a] = true;
        want_b[clock_b] = true;
        let mut sa = Sampler::new(
            a.changes(want_a, 0, options.to)?,
            by_a,
            clock_a,
            pairs.len(),
        );
        let mut sb = Sampler::new(
            b.changes(want_b, 0, options.to)?,
            by_b,
            clock_b,
            pairs.len(),
        );
        let mut skip = vec![false; pairs.len()];
        let all: Vec<usize> = (0..pairs.len()).collect();
        let mut checked_all = false;
        let mut first = None;
        let mut cycle = 0usize;
        let mut edges = [0usize; 2];
        loop {
            let (ta, tb) = (sa.next_edge()?, sb.next_edge()?);
            edges[0] += ta.is_some() as usize;
            edges[1] += tb.is_some() as usize;
            let (Some(ta), Some(tb)) = (ta, tb) else {
                // Count the rest of the longer run's edges.
                while sa.next_edge()?.is_some() {
                    edges[0] += 1;
                }
                while sb.next_edge()?.is_some() {
                    edges[1] += 1;
                }
                break;
            };
            if ta >= options.from {
                let mut check: Vec<usize> = if checked_all {
                    let mut c = sa.dirty.list.clone();
                    c.extend(sb.dirty.list.iter().copied().filter(|i| !sa.dirty.flag[*i]));
                    c
                } else {
                    all.clone()
                };
                checked_all = true;
                check.sort_unstable();
                if let Some((_, i)) = first_bad(&check, ta, &sa.values, &sb.values, &mut skip) {
                    first = Some(describe(ta, Some((cycle, tb)), i, &sa.values, &sb.values));
                    break;
                }
            }
            sa.dirty.clear();
            sb.dirty.clear();
            cycle += 1;
        }
        let (compared, incomparable) = compared(&pairs, &skip);
        return Ok(DiffReport {
            paths,
            compared,
            incomparable,
            only_a,
            only_b,
            ends: [sa.changes.last_time(), sb.changes.last_time()],
            first,
            edges: Some(edges),
        });
    }
    let mut sa = Ahead::new(a.changes(want_a, 0, options.to)?);
    let mut sb = Ahead::new(b.changes(want_b, 0, options.to)?);
    let mut va: Vec<Option<Value>> = vec![None; pairs.len()];
    let mut vb: Vec<Option<Value>> = vec![None; pairs.len()];
    let mut touched = Touched {
        list: Vec::new(),
        flag: vec![false; pairs.len()],
    };
    let mut checked_all = false;
    let mut skip = vec![false; pairs.len()];
    let mut first = None;
    let all: Vec<usize> = (0..pairs.len()).collect();
    let mut now = 0;
    loop {
        let ta = sa.time()?;
        let tb = sb.time()?;
        now = match (ta, tb) {
            (None, None) => break,
            (Some(x), None) | (None, Some(x)) => x,
            (Some(x), Some(y)) => x.min(y),
        };
        if now > options.from && !checked_all {
            // Differences that began before the window and last into it.
            checked_all = true;
            if let Some(d) = first_bad(&all, options.from, &va, &vb, &mut skip) {
                first = Some(d);
                break;
            }
        }
        touched.clear();
        if ta == Some(now) {
            apply(sa.take(), &by_a, &mut va, &mut touched);
        }
        if tb == Some(now) {
            apply(sb.take(), &by_b, &mut vb, &mut touched);
        }
        if now < options.from {
            continue;
        }
        checked_all |= now == options.from;
        let check = if now == options.from {
            &all
        } else {
            &touched.list
        };
        if let Some(d) = first_bad(check, now, &va, &vb, &mut skip) {
            first = Some(d);
            break;
        }
    }
    if first.is_none() && !checked_all && now <= options.from {
        first = first_bad(&all, options.from, &va, &vb, &mut skip);
    }
    let first = first.map(|(time, i)| describe(time, None, i, &va, &vb));
    let (compared, incomparable) = compared(&pairs, &skip);
    Ok(DiffReport {
        paths,
        compared,
        incomparable,
        only_a,
        only_b,
        ends: [sa.changes.last_time(), sb.changes.last_time()],
        first,
        edges: None,
    })
}

/// The first (by design name order) of `which` whose values differ, with `time`.
/// A pair where one side is a string and the other a number (RustHDL writes enum
/// states by name, Verilator by encoding) cannot be compared: it is marked in `skip`
/// and left out from then on.
fn first_bad(
    which: &[usize],
    time: u64,
    va: &[Option<Value>],
    vb: &[Option<Value>],
    skip: &mut [bool],
) -> Option<(u64, usize)> {
    let mut bad = None;
    for &i in which {
        if skip[i] {
            continue;
        }
        if let (Some(x), Some(y)) = (&va[i], &vb[i]) {
            if x.is_text() != y.is_text() {
                skip[i] = true;
                continue;
            }
        }
        if !same(&va[i], &vb[i]) && bad.is_none_or(|b| i < b) {
            bad = Some(i);
        }
    }
    bad.map(|i| (time, i))
}

/// A stream of steps with one step of look-ahead.
struct Ahead {
    changes: Changes,
    next: Option<Step>,
}

impl Ahead {
    fn new(changes: Changes) -> Ahead {
        Ahead {
            changes,
            next: None,
        }
    }

    fn time(&mut self) -> Result<Option<u64>, WaveError> {
        if self.next.is_none() {
            self.next = self.changes.next().transpose()?;
        }
        Ok(self.next.as_ref().map(|s| s.time))
    }

    fn take(&mut self) -> Option<Step> {
        self.next.take()
    }
}

fn same(a: &Option<Value>, b: &Option<Value>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x.same_as(y),
        (None, None) => true,
        _ => false,
    }
}

/// The pairs changed at the current time, as a list and as flags.
pub(super) struct Touched {
    pub(super) list: Vec<usize>,
    pub(super) flag: Vec<bool>,
}

impl Touched {
    pub(super) fn clear(&mut self) {
        for &i in &self.list {
            self.flag[i] = false;
        }
        self.list.clear();
    }

    pub(super) fn add(&mut self, i: usize) {
        if !self.flag[i] {
            self.flag[i] = true;
            self.list.push(i);
        }
    }
}

fn apply(
    step: Option<Step>,
    by_slot: &[Vec<usize>],
    values: &mut [Option<Value>],
    touched: &mut Touched,
) {
    let Some(step) = step else { return };
    for (slot, value) in step.changes {
        for &i in by_slot.get(slot).map(Vec::as_slice).unwrap_or(&[]) {
            values[i] = Some(value.clone());
            touched.add(i);
        }
    }
}

/// Design name -> (slot, full path of the first variable with that name), for the
/// signals the options select.
fn keyed(
    file: &WaveFile,
    options: &DiffOptions,
) -> Result<HashMap<String, (usize, String)>, WaveError> {
    let header = file.header();
    let mut out: HashMap<String, (usize, String)> = HashMap::new();
    let mut used = vec![false; options.signals.len()];
    for (v, key) in header.vars.iter().zip(design_names(header)) {
        if !options.signals.is_empty() {
            let mut design = v.clone();
            let mut parts: Vec<String> = key.split('.').map(String::from).collect();
            design.name = parts.pop().unwrap_or_default();
            design.scopes = parts;
            let hit = options
                .signals
                .iter()
                .position(|p| matches(p, &design) || matches(p, v));
            match hit {
                Some(i) => used[i] = true,
                None => continue,
            }
        }
        out.entry(key).or_insert((v.slot, v.path()));
    }
    if let Some(i) = used.iter().position(|u| !u) {
        return Err(WaveError::NotFound {
            path: header.path.clone(),
            name: options.signals[i].clone(),
            candidates: Vec::new(),
        });
    }
    Ok(out)
}
