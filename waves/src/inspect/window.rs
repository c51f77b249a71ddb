//! Walking a window of time over some signals, holding only their current values.

use super::header::Var;
use super::source::WaveFile;
use super::time::format_time;
use crate::value::Value;
use crate::WaveError;

/// One row of a window: the time and every selected signal's value then.
pub struct Row<'a> {
    /// Femtoseconds.
    pub time: u64,
    /// Per selected signal, its value after everything recorded at `time` (`None`: no
    /// value yet).
    pub values: &'a [Option<Value>],
    /// Per selected signal, whether it changed at `time` (all false on the first row,
    /// which gives the values at the window's start).
    pub changed: &'a [bool],
}

/// Call `row` once for the values at `from`, then once per time in `(from, to]` at
/// which a selected signal changes. Memory is one value per signal, whatever the
/// file's size.
///
/// Errors: `from > to`; a window that starts after the file's last value change;
/// anything wrong in the file.
pub fn scan_window(
    file: WaveFile,
    vars: &[Var],
    from: u64,
    to: u64,
    mut row: impl FnMut(Row<'_>) -> Result<(), WaveError>,
) -> Result<(), WaveError> {
    check_window(from, to)?;
    let path = file.header().path.clone();
    let mut wanted = vec![false; file.header().slots];
    // slot -> indices of the selected signals reading it
    let mut columns: Vec<Vec<usize>> = vec![Vec::new(); file.header().slots];
    for (i, v) in vars.iter().enumerate() {
        wanted[v.slot] = true;
        columns[v.slot].push(i);
    }
    let mut values: Vec<Option<Value>> = vec![None; vars.len()];
    let mut changed = vec![false; vars.len()];
    let mut started = false;
    let mut changes = file.changes(wanted, from, Some(to))?;
    for step in changes.by_ref() {
        let step = step?;
        if step.time > from && !started {
            row(Row {
                time: from,
                values: &values,
                changed: &changed,
            })?;
            started = true;
        }
        for (slot, value) in step.changes {
            for &c in &columns[slot] {
                if values[c].as_ref() != Some(&value) {
                    changed[c] = true;
                    values[c] = Some(value.clone());
                }
            }
        }
        if started && changed.iter().any(|c| *c) {
            row(Row {
                time: step.time,
                values: &values,
                changed: &changed,
            })?;
        }
        changed.iter_mut().for_each(|c| *c = false);
    }
    if !started {
        let end = changes.last_time();
        if end < from {
            return Err(WaveError::BadArgument {
                message: format!(
                    "{}: empty window: it starts at {} but the file ends at {}",
                    path.display(),
                    format_time(from),
                    format_time(end)
                ),
            });
        }
        row(Row {
            time: from,
            values: &values,
            changed: &changed,
        })?;
    }
    Ok(())
}

/// `from` must not be after `to`.
pub fn check_window(from: u64, to: u64) -> Result<(), WaveError> {
    if from > to {
        return Err(WaveError::BadArgument {
            message: format!(
                "--from {} is after --to {}: the window is empty",
                format_time(from),
                format_time(to)
            ),
        });
    }
    Ok(())
}
