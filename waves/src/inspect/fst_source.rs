//! FST files through `fst-reader`: the hierarchy at open, the value changes of the
//! wanted signals in a reader thread that hands over one time step at a time.
//!
//! `fst-reader` skips the blocks that end before the window, so a window near the end
//! reads the last blocks only (see [`FstBody::stream`] for the values at its start).

use super::header::{split_range, Format, Header, Var};
use super::source::{value_from_ascii, Step};
use super::time::fs_per_tick;
use crate::value::Value;
use crate::WaveError;
use fst_reader::{FstFilter, FstHierarchyEntry, FstReader, FstSignalHandle, FstSignalValue};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};

/// Time steps buffered between the reader thread and the consumer.
const STEPS_IN_FLIGHT: usize = 256;

/// An FST file whose header and hierarchy have been read.
pub struct FstBody {
    reader: FstReader<BufReader<File>>,
    path: PathBuf,
    widths: Vec<u32>,
    fs_per_tick: u64,
}

impl FstBody {
    pub(crate) fn open(file: BufReader<File>, path: &Path) -> Result<(Header, FstBody), WaveError> {
        let invalid = |message: String| WaveError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let mut reader = guard(|| FstReader::open(file))
            .map_err(|m| invalid(format!("corrupt FST file: {m}")))?
            .map_err(|e| invalid(format!("cannot read the FST header: {e}")))?;
        let fst_header = reader.get_header();
        let fs_per_tick =
            fs_per_tick(1, fst_header.timescale_exponent as i32).ok_or_else(|| {
                invalid(format!(
                    "timescale 1e{} s is finer than a femtosecond",
                    fst_header.timescale_exponent
                ))
            })?;
        let mut vars = Vec::new();
        let mut scopes: Vec<String> = Vec::new();
        let mut slots = 0usize;
        guard(|| {
            reader.read_hierarchy(|entry| match entry {
                FstHierarchyEntry::Scope { name, .. } => scopes.push(name),
                FstHierarchyEntry::UpScope => {
                    scopes.pop();
                }
                FstHierarchyEntry::Var {
                    name,
                    length,
                    handle,
                    ..
                } => {
                    let (name, range) = split_range(&name);
                    slots = slots.max(handle.get_index() + 1);
                    vars.push(Var {
                        scopes: scopes.clone(),
                        name,
                        range,
                        width: length,
                        slot: handle.get_index(),
                    });
                }
                _ => {}
            })
        })
        .map_err(|m| invalid(format!("corrupt FST hierarchy: {m}")))?
        .map_err(|e| invalid(format!("cannot read the FST hierarchy: {e}")))?;
        if vars.is_empty() {
            return Err(invalid("the FST file declares no variables".into()));
        }
        let mut widths = vec![0u32; slots];
        for v in &vars {
            widths[v.slot] = widths[v.slot].max(v.width);
        }
        let header = Header {
            path: path.to_path_buf(),
            format: Format::Fst,
            vars,
            slots,
            fs_per_tick,
        };
        Ok((
            header,
            FstBody {
                reader,
                path: path.to_path_buf(),
                widths,
                fs_per_tick,
            },
        ))
    }

    pub(crate) fn end_time(&self) -> u64 {
        self.reader
            .get_header()
            .end_time
            .saturating_mul(self.fs_per_tick)
    }

    /// Stream the wanted slots from `from` (femtoseconds) to `until`.
    ///
    /// `fst-reader` gives the values at the start of the first block it reads only when
    /// that block's first time step has no changes, so the values at `from` are found
    /// first, in a pass over `from` alone and, for signals still without a value, a
    /// pass from the start up to `from` over those signals only. They go out as one
    /// step at `from`; then the window's changes follow.
    pub(crate) fn stream(
        self,
        wanted: Vec<bool>,
        from: u64,
        until: Option<u64>,
    ) -> Result<FstStream, WaveError> {
        let FstBody {
            mut reader,
            path,
            widths,
            fs_per_tick,
        } = self;
        let end_time = reader.get_header().end_time;
        let from_tick = from / fs_per_tick;
        let until_tick = until.map(|u| u / fs_per_tick);
        let (tx, rx) = sync_channel::<Result<Step, WaveError>>(STEPS_IN_FLIGHT);
        let thread_path = path.clone();
        std::thread::spawn(move || {
            let error = |message: String| WaveError::Invalid {
                path: thread_path.clone(),
                message,
            };
            let convert = |slot: usize, value: FstSignalValue| {
                let width = widths.get(slot).copied().unwrap_or(0);
                match value {
                    FstSignalValue::String(chars) if width == 0 => {
                        Value::text(&String::from_utf8_lossy(chars))
                    }
                    FstSignalValue::String(chars) => value_from_ascii(width, chars),
                    FstSignalValue::Real(r) => Value::real(r),
                }
            };
            let report =
                |result: Result<Result<(), fst_reader::ReadSignalsError<()>>, String>| match result
                {
                    Ok(Ok(())) => Ok(()),
                    // The consumer stopped listening.
                    Ok(Err(fst_reader::ReadSignalsError::CallbackError(()))) => Err(None),
                    Ok(Err(fst_reader::ReadSignalsError::ReadError(e))) => Err(Some(error(
                        format!("cannot read the FST value changes: {e}"),
                    ))),
                    Err(m) => Err(Some(error(format!("corrupt FST value changes: {m}")))),
                };

            // The values at `from`.
            let mut initial: Vec<Option<Value>> = vec![None; widths.len()];
            let mut read_initial =
                |start: u64, include: Vec<FstSignalHandle>, initial: &mut Vec<Option<Value>>| {
                    let filter = FstFilter {
                        start,
                        end: Some(from_tick),
                        include: Some(include),
                    };
                    report(guard(|| {
                        reader.read_signals(&filter, |tick, handle, value| {
                            if tick <= from_tick {
                                let slot = handle.get_index();
                                initial[slot] = Some(convert(slot, value));
                            }
                            Ok(())
                        })
                    }))
                };
            let mut outcome = read_initial(from_tick, handles(&wanted, |_| true), &mut initial);
            if outcome.is_ok() && from_tick > 0 {
                let missing = handles(&wanted, |i| initial[i].is_none());
                if !missing.is_empty() {
                    outcome = read_initial(0, missing, &mut initial);
                }
            }
            let first = Step {
                time: from_tick.saturating_mul(fs_per_tick),
                changes: initial
                    .into_iter()
                    .enumerate()
                    .filter_map(|(slot, v)| v.map(|v| (slot, v)))
                    .collect(),
            };
            if outcome.is_ok() && !first.changes.is_empty() && tx.send(Ok(first)).is_err() {
                return;
            }

            // The window's changes after `from`.
            let mut step = Step {
                time: 0,
                changes: Vec::new(),
            };
            let mut position = vec![usize::MAX; widths.len()];
            if outcome.is_ok() {
                let filter = FstFilter {
                    start: from_tick,
                    end: until_tick,
                    include: Some(handles(&wanted, |_| true)),
                };
                outcome = report(guard(|| {
                    reader.read_signals(&filter, |tick, handle, value| {
                        if tick <= from_tick {
                            return Ok(());
                        }
                        let time = tick.saturating_mul(fs_per_tick);
                        if time != step.time && !step.changes.is_empty() {
                            for (slot, _) in &step.changes {
                                position[*slot] = usize::MAX;
                            }
                            let full = std::mem::replace(
                                &mut step,
                                Step {
                                    time,
                                    changes: Vec::new(),
                                },
                            );
                            tx.send(Ok(full)).map_err(|_| ())?;
                        }
                        step.time = time;
                        let slot = handle.get_index();
                        let value = convert(slot, value);
                        match position.get(slot).copied() {
                            Some(usize::MAX) => {
                                position[slot] = step.changes.len();
                                step.changes.push((slot, value));
                            }
                            Some(i) => step.changes[i].1 = value,
                            None => step.changes.push((slot, value)),
                        }
                        Ok(())
                    })
                }));
            }
            match outcome {
                Ok(()) => {
                    if !step.changes.is_empty() {
                        let _ = tx.send(Ok(step));
                    }
                }
                Err(None) => {}
                Err(Some(e)) => {
                    let _ = tx.send(Err(e));
                }
            }
        });
        Ok(FstStream {
            rx,
            end: end_time.saturating_mul(fs_per_tick),
        })
    }
}

/// The changes of an FST file, from the reader thread.
pub struct FstStream {
    rx: Receiver<Result<Step, WaveError>>,
    end: u64,
}

impl FstStream {
    pub(crate) fn last_time(&self) -> u64 {
        self.end
    }
}

impl Iterator for FstStream {
    type Item = Result<Step, WaveError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.rx.recv().ok()
    }
}

/// The handles of the wanted slots for which `keep` holds.
fn handles(wanted: &[bool], keep: impl Fn(usize) -> bool) -> Vec<FstSignalHandle> {
    (0..wanted.len())
        .filter(|&i| wanted[i] && keep(i))
        .map(FstSignalHandle::from_index)
        .collect()
}

/// Run `f`, turning a panic inside `fst-reader` (it asserts on some malformed input)
/// into an error message.
fn guard<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the reader stopped on malformed data".into())
    })
}
