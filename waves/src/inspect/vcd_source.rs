//! VCD files: the header through the `vcd` crate, then the body one command at a time.

use super::header::{split_range, Format, Header, Var};
use super::source::Step;
use super::time::fs_per_tick;
use crate::value::{Logic, Value};
use crate::WaveError;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Chain, Read};
use std::path::{Path, PathBuf};
use vcd::{Command, IdCode, ScopeItem};

type Input = BufReader<Chain<BufReader<File>, &'static [u8]>>;

/// A VCD file whose header has been read.
pub struct VcdBody {
    parser: vcd::Parser<Input>,
    path: PathBuf,
    codes: HashMap<IdCode, (usize, u32)>,
    fs_per_tick: u64,
}

impl VcdBody {
    pub(crate) fn open(file: BufReader<File>, path: &Path) -> Result<(Header, VcdBody), WaveError> {
        // The vcd crate needs whitespace after the last token; a file need not end in a
        // newline. A file cut inside a command still fails.
        let mut parser =
            vcd::Parser::new(BufReader::with_capacity(1 << 16, file.chain(&b"\n"[..])));
        let header = parser
            .parse_header()
            .map_err(|e| io_error(path, parser.line(), e))?;
        let fs_per_tick = match header.timescale {
            None => 1_000,
            Some((n, unit)) => {
                let exponent = -(unit.divisor().ilog10() as i32);
                fs_per_tick(n as u64, exponent).ok_or_else(|| WaveError::Invalid {
                    path: path.to_path_buf(),
                    message: format!("timescale {n} {unit} is finer than a femtosecond"),
                })?
            }
        };
        let mut vars = Vec::new();
        let mut codes: HashMap<IdCode, (usize, u32)> = HashMap::new();
        collect(&header.items, &mut Vec::new(), &mut |scopes, v| {
            let next = codes.len();
            let entry = codes.entry(v.code).or_insert((next, v.size));
            entry.1 = entry.1.max(v.size);
            let (name, range) = match v.index {
                Some(i) => (v.reference.clone(), Some(i.to_string())),
                None => split_range(&v.reference),
            };
            vars.push(Var {
                scopes: scopes.to_vec(),
                name,
                range,
                width: v.size,
                slot: entry.0,
            });
        });
        if vars.is_empty() {
            return Err(WaveError::Invalid {
                path: path.to_path_buf(),
                message: "the VCD header declares no variables".into(),
            });
        }
        let header = Header {
            path: path.to_path_buf(),
            format: Format::Vcd,
            slots: codes.len(),
            vars,
            fs_per_tick,
        };
        Ok((
            header,
            VcdBody {
                parser,
                path: path.to_path_buf(),
                codes,
                fs_per_tick,
            },
        ))
    }

    pub(crate) fn stream(self, wanted: Vec<bool>, until: Option<u64>) -> VcdStream {
        let slots = wanted.len();
        VcdStream {
            position: vec![usize::MAX; slots],
            body: self,
            wanted,
            until,
            now: 0,
            last: 0,
            pending: Vec::new(),
            done: false,
            bits: Vec::new(),
        }
    }
}

/// The changes of a VCD file's body, one time step at a time.
pub struct VcdStream {
    body: VcdBody,
    /// Per slot, its index in `pending` (`usize::MAX`: none yet at this time).
    position: Vec<usize>,
    wanted: Vec<bool>,
    until: Option<u64>,
    now: u64,
    last: u64,
    pending: Vec<(usize, Value)>,
    done: bool,
    bits: Vec<Logic>,
}

impl VcdStream {
    pub(crate) fn last_time(&self) -> u64 {
        self.last
    }

    fn emit(&mut self) -> Option<Step> {
        if self.pending.is_empty() {
            None
        } else {
            for (slot, _) in &self.pending {
                self.position[*slot] = usize::MAX;
            }
            Some(Step {
                time: self.now,
                changes: std::mem::take(&mut self.pending),
            })
        }
    }

    fn fail(&mut self, e: WaveError) -> Option<Result<Step, WaveError>> {
        self.done = true;
        Some(Err(e))
    }
}

impl Iterator for VcdStream {
    type Item = Result<Step, WaveError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            let Some(cmd) = self.body.parser.next() else {
                self.done = true;
                return self.emit().map(Ok);
            };
            let line = self.body.parser.line();
            let cmd = match cmd {
                Ok(c) => c,
                Err(e) => {
                    let err = io_error(&self.body.path, line, e);
                    return self.fail(err);
                }
            };
            let (code, value) = match cmd {
                Command::Timestamp(t) => {
                    let Some(fs) = t.checked_mul(self.body.fs_per_tick) else {
                        let err = parse_error(
                            &self.body.path,
                            line,
                            format!("time #{t} overflows 64-bit femtoseconds"),
                        );
                        return self.fail(err);
                    };
                    if fs < self.now {
                        let err =
                            parse_error(&self.body.path, line, format!("time #{t} goes backwards"));
                        return self.fail(err);
                    }
                    self.last = fs;
                    if self.until.is_some_and(|u| fs > u) {
                        self.done = true;
                        return self.emit().map(Ok);
                    }
                    if fs != self.now {
                        let step = self.emit();
                        self.now = fs;
                        if step.is_some() {
                            return step.map(Ok);
                        }
                    }
                    continue;
                }
                Command::ChangeScalar(code, v) => {
                    self.bits.clear();
                    self.bits.push(Logic::from_vcd(v));
                    (code, None)
                }
                Command::ChangeVector(code, v) => {
                    self.bits.clear();
                    self.bits.extend(v.iter().map(Logic::from_vcd));
                    (code, None)
                }
                Command::ChangeReal(code, r) => (code, Some(Value::real(r))),
                Command::ChangeString(code, s) => (code, Some(Value::text(&s))),
                _ => continue,
            };
            let Some(&(slot, width)) = self.body.codes.get(&code) else {
                let err = parse_error(
                    &self.body.path,
                    line,
                    format!("value change for identifier `{code}` that no $var declares"),
                );
                return self.fail(err);
            };
            if !self.wanted.get(slot).copied().unwrap_or(false) {
                continue;
            }
            let value = value.unwrap_or_else(|| Value::from_logic(width, &self.bits));
            match self.position[slot] {
                usize::MAX => {
                    self.position[slot] = self.pending.len();
                    self.pending.push((slot, value));
                }
                i => self.pending[i].1 = value,
            }
        }
    }
}

fn collect(
    items: &[ScopeItem],
    scopes: &mut Vec<String>,
    f: &mut impl FnMut(&[String], &vcd::Var),
) {
    for item in items {
        match item {
            ScopeItem::Scope(s) => {
                scopes.push(s.identifier.clone());
                collect(&s.items, scopes, f);
                scopes.pop();
            }
            ScopeItem::Var(v) => f(scopes, v),
            _ => {}
        }
    }
}

fn parse_error(path: &Path, line: u64, message: String) -> WaveError {
    WaveError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    }
}

/// The vcd crate reports syntax errors as `io::Error`s wrapping a `ParseError`.
fn io_error(path: &Path, line: u64, e: std::io::Error) -> WaveError {
    if let Some(pe) = e
        .get_ref()
        .and_then(|x| x.downcast_ref::<vcd::ParseError>())
    {
        return parse_error(path, pe.line(), pe.kind().to_string());
    }
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        // The line count has passed the newline appended after the file.
        return parse_error(
            path,
            line.saturating_sub(1).max(1),
            format!("file ends inside a command (truncated?): {e}"),
        );
    }
    if e.kind() == std::io::ErrorKind::InvalidData {
        return parse_error(path, line, format!("not VCD text: {e}"));
    }
    WaveError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}
