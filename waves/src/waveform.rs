//! Reading a VCD file (RustHDL's or Verilator's) into memory.

use crate::value::{Logic, Value};
use crate::WaveError;
use std::collections::HashMap;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use vcd::{Command, IdCode, ScopeItem, TimescaleUnit};

/// A signal of a [`Waveform`], from [`Waveform::find`] or [`Waveform::ids`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SignalId(usize);

#[derive(Debug)]
struct Signal {
    /// Full dotted name: scopes then the variable, e.g. `TOP.nic_counter.count`.
    name: String,
    width: u32,
    /// Index into `Waveform::data`; signals with the same VCD id code share it.
    data: usize,
}

/// A whole VCD file in memory: signal names, and per signal only the times at which
/// its value changed.
///
/// Names are the `$scope` identifiers and the `$var` reference joined by `.`, without
/// any `[msb:lsb]` index (an index is appended only when two variables would
/// otherwise get the same name). Times are converted from the file's `$timescale` to
/// picoseconds (a file without `$timescale` is taken as 1 ps). Values before the first
/// timestamp (a leading `$dumpvars`) count as time 0.
#[derive(Debug)]
pub struct Waveform {
    path: PathBuf,
    signals: Vec<Signal>,
    data: Vec<Vec<(u64, Value)>>,
    end_time: u64,
}

impl Waveform {
    /// Read the VCD file at `path`.
    ///
    /// Errors name the file and, for content problems, the line.
    pub fn load(path: impl AsRef<Path>) -> Result<Waveform, WaveError> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|source| WaveError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(file, path)
    }

    /// Read VCD text held in memory; `name` stands for the file name in errors.
    pub fn parse_str(text: &str, name: &str) -> Result<Waveform, WaveError> {
        Self::parse(text.as_bytes(), Path::new(name))
    }

    fn parse<R: Read>(reader: R, path: &Path) -> Result<Waveform, WaveError> {
        // The vcd crate needs whitespace after the last token; a file need not end in a
        // newline. A file cut inside a command still fails.
        let mut parser =
            vcd::Parser::new(BufReader::with_capacity(1 << 16, reader.chain(&b"\n"[..])));
        let parse_err = |line: u64, message: String| WaveError::Parse {
            path: path.to_path_buf(),
            line,
            message,
        };
        let io_err = |parser: &vcd::Parser<_>, e: std::io::Error| {
            let (line, message) = match e
                .get_ref()
                .and_then(|x| x.downcast_ref::<vcd::ParseError>())
            {
                Some(pe) => (pe.line(), pe.kind().to_string()),
                // The line count has passed the newline appended above.
                None if e.kind() == std::io::ErrorKind::UnexpectedEof => (
                    parser.line().saturating_sub(1).max(1),
                    format!("file ends inside a command (truncated?): {e}"),
                ),
                None => {
                    return WaveError::Io {
                        path: path.to_path_buf(),
                        source: e,
                    }
                }
            };
            WaveError::Parse {
                path: path.to_path_buf(),
                line,
                message,
            }
        };

        let header = parser.parse_header().map_err(|e| io_err(&parser, e))?;
        let (scale_num, scale_div) = match header.timescale {
            None => (1u128, 1u128),
            Some((n, unit)) => picoseconds_per_tick(n, unit),
        };

        // Names, widths and the id code → data slot map.
        let mut vars = Vec::new();
        collect_vars(&header.items, &mut Vec::new(), &mut vars);
        let mut slots: HashMap<IdCode, (usize, u32), BuildCodeHasher> = HashMap::default();
        let mut signals = Vec::with_capacity(vars.len());
        for v in &vars {
            let next = slots.len();
            let (slot, width) = *slots.entry(v.code).or_insert((next, v.size));
            // Aliased codes with different declared widths: keep the widest.
            if v.size > width {
                slots.insert(v.code, (slot, v.size));
            }
            signals.push(Signal {
                name: v.name.clone(),
                width: v.size,
                data: slot,
            });
        }
        disambiguate(&mut signals, &vars);
        let mut data: Vec<Vec<(u64, Value)>> = vec![Vec::new(); slots.len()];

        let mut now: u64 = 0;
        let mut bits: Vec<Logic> = Vec::new();
        while let Some(cmd) = parser.next() {
            let cmd = cmd.map_err(|e| io_err(&parser, e))?;
            let (code, value) = match cmd {
                Command::Timestamp(t) => {
                    let ps = (t as u128) * scale_num;
                    if !ps.is_multiple_of(scale_div) {
                        return Err(parse_err(
                            parser.line(),
                            format!("time #{t} is not a whole number of picoseconds"),
                        ));
                    }
                    let ps = u64::try_from(ps / scale_div).map_err(|_| {
                        parse_err(
                            parser.line(),
                            format!("time #{t} overflows 64-bit picoseconds"),
                        )
                    })?;
                    if ps < now {
                        return Err(parse_err(
                            parser.line(),
                            format!("time #{t} goes backwards (after {now} ps)"),
                        ));
                    }
                    now = ps;
                    continue;
                }
                Command::ChangeScalar(code, v) => {
                    bits.clear();
                    bits.push(Logic::from_vcd(v));
                    (code, None)
                }
                Command::ChangeVector(code, v) => {
                    bits.clear();
                    bits.extend(v.iter().map(Logic::from_vcd));
                    (code, None)
                }
                Command::ChangeReal(code, r) => (code, Some(Value::real(r))),
                Command::ChangeString(code, s) => (code, Some(Value::text(&s))),
                // $dumpvars/$dumpall/$end, $comment and the like carry no values.
                _ => continue,
            };
            let Some(&(slot, width)) = slots.get(&code) else {
                return Err(parse_err(
                    parser.line(),
                    format!("value change for identifier `{code}` that no $var declares"),
                ));
            };
            let value = value.unwrap_or_else(|| Value::from_logic(width, &bits));
            push_change(&mut data[slot], now, value);
        }

        Ok(Waveform {
            path: path.to_path_buf(),
            signals,
            data,
            end_time: now,
        })
    }

    /// The file this waveform was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every signal's full dotted name, in declaration order.
    pub fn signals(&self) -> Vec<String> {
        self.signals.iter().map(|s| s.name.clone()).collect()
    }

    /// Every signal's id, in declaration order.
    pub fn ids(&self) -> impl Iterator<Item = SignalId> + '_ {
        (0..self.signals.len()).map(SignalId)
    }

    /// The full dotted name of a signal.
    pub fn name(&self, id: SignalId) -> &str {
        &self.signals[id.0].name
    }

    /// The declared width of a signal in bits (0 for RustHDL's enum-typed signals).
    pub fn width(&self, id: SignalId) -> u32 {
        self.signals[id.0].width
    }

    /// The time of the last timestamp in the file, in picoseconds.
    pub fn end_time(&self) -> u64 {
        self.end_time
    }

    /// The signal whose name ends with the dot-separated components of `name`:
    /// `"m_cell_valid"` matches `TOP.m_cell_valid`, `"counter.q"` matches
    /// `uut.counter.q`. A full name matches itself. Case matters.
    ///
    /// When several signals match but all carry the same changes (Verilator lists each
    /// port under `TOP` and again under `TOP.<module>`), they are one signal and the
    /// shortest name wins. Otherwise the name is [`WaveError::Ambiguous`]; with no
    /// match it is [`WaveError::NotFound`], listing names that resemble it.
    pub fn find(&self, name: &str) -> Result<SignalId, WaveError> {
        let want: Vec<&str> = name.split('.').collect();
        let mut matches: Vec<usize> = (0..self.signals.len())
            .filter(|&i| {
                let have: Vec<&str> = self.signals[i].name.split('.').collect();
                have.len() >= want.len() && have[have.len() - want.len()..] == want[..]
            })
            .collect();
        if matches.is_empty() {
            let last = want.last().copied().unwrap_or("").to_ascii_lowercase();
            let mut candidates: Vec<String> = self
                .signals
                .iter()
                .filter(|s| {
                    let tail = s.name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
                    !last.is_empty() && (tail.contains(&last) || last.contains(&tail))
                })
                .map(|s| s.name.clone())
                .take(20)
                .collect();
            if candidates.is_empty() {
                candidates = self
                    .signals
                    .iter()
                    .take(20)
                    .map(|s| s.name.clone())
                    .collect();
            }
            return Err(WaveError::NotFound {
                path: self.path.clone(),
                name: name.to_string(),
                candidates,
            });
        }
        matches.sort_by_key(|&i| (self.signals[i].name.len(), i));
        let first = &self.data[self.signals[matches[0]].data];
        if matches[1..]
            .iter()
            .all(|&i| same_changes(first, &self.data[self.signals[i].data]))
        {
            return Ok(SignalId(matches[0]));
        }
        Err(WaveError::Ambiguous {
            path: self.path.clone(),
            name: name.to_string(),
            candidates: matches
                .iter()
                .map(|&i| self.signals[i].name.clone())
                .collect(),
        })
    }

    /// The changes of a signal: `(time in ps, new value)`, times increasing, each value
    /// different from the one before it.
    pub fn transitions(&self, id: SignalId) -> &[(u64, Value)] {
        &self.data[self.signals[id.0].data]
    }

    /// The value of a signal at `time_ps`, including a change at exactly that time (the
    /// settled value after everything recorded at `time_ps`); `None` before its first
    /// change.
    pub fn value_at(&self, id: SignalId, time_ps: u64) -> Option<&Value> {
        let t = self.transitions(id);
        let n = t.partition_point(|(at, _)| *at <= time_ps);
        n.checked_sub(1).map(|i| &t[i].1)
    }

    /// The value a signal had just before `time_ps` (changes at exactly `time_ps` not
    /// included); `None` before its first change.
    pub fn value_before(&self, id: SignalId, time_ps: u64) -> Option<&Value> {
        let t = self.transitions(id);
        let n = t.partition_point(|(at, _)| *at < time_ps);
        n.checked_sub(1).map(|i| &t[i].1)
    }

    /// Times at which the signal went from known zero to a known non-zero value (for a
    /// clock, 0 → 1). A signal that starts at 1 has no edge there, and x → 1 is not
    /// counted.
    pub fn rising_edges(&self, id: SignalId) -> Vec<u64> {
        self.transitions(id)
            .windows(2)
            .filter(|w| w[0].1.as_bool() == Some(false) && w[1].1.as_bool() == Some(true))
            .map(|w| w[1].0)
            .collect()
    }
}

/// Record a change, keeping only the last value at any one time and only real changes.
fn push_change(changes: &mut Vec<(u64, Value)>, time: u64, value: Value) {
    if let Some((t, _)) = changes.last() {
        if *t == time {
            changes.pop();
        }
    }
    if changes.last().map(|(_, v)| v) != Some(&value) {
        changes.push((time, value));
    }
}

fn same_changes(a: &[(u64, Value)], b: &[(u64, Value)]) -> bool {
    std::ptr::eq(a, b)
        || (a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|((ta, va), (tb, vb))| ta == tb && va.same_as(vb)))
}

/// Hasher for id codes (a `u64` inside): one multiplication instead of SipHash, which
/// took a third of the time spent on each value change.
#[derive(Default)]
struct CodeHasher(u64);

impl std::hash::Hasher for CodeHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type BuildCodeHasher = std::hash::BuildHasherDefault<CodeHasher>;

/// Picoseconds per file tick as a fraction `num / div`.
fn picoseconds_per_tick(n: u32, unit: TimescaleUnit) -> (u128, u128) {
    let ticks_per_second = unit.divisor() as u128;
    let ps_per_second = 1_000_000_000_000u128;
    let num = n as u128 * ps_per_second;
    // Reduce so that a 1 fs or 100 fs scale still gives exact results when possible.
    let g = gcd(num, ticks_per_second);
    (num / g, ticks_per_second / g)
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

struct VarInfo {
    name: String,
    code: IdCode,
    size: u32,
    index: Option<String>,
}

fn collect_vars(items: &[ScopeItem], scope: &mut Vec<String>, out: &mut Vec<VarInfo>) {
    for item in items {
        match item {
            ScopeItem::Scope(s) => {
                scope.push(s.identifier.clone());
                collect_vars(&s.items, scope, out);
                scope.pop();
            }
            ScopeItem::Var(v) => {
                let mut name = scope.join(".");
                if !name.is_empty() {
                    name.push('.');
                }
                name.push_str(&v.reference);
                out.push(VarInfo {
                    name,
                    code: v.code,
                    size: v.size,
                    index: v.index.map(|i| i.to_string()),
                });
            }
            _ => {}
        }
    }
}

/// Append `[index]` to names that would otherwise collide (bit-blasted vectors).
fn disambiguate(signals: &mut [Signal], vars: &[VarInfo]) {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for v in vars {
        *count.entry(v.name.as_str()).or_default() += 1;
    }
    for (s, v) in signals.iter_mut().zip(vars) {
        if count[v.name.as_str()] > 1 {
            if let Some(index) = &v.index {
                s.name.push_str(index);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Header in the style of Verilator 5's VerilatedVcdC: ports under `TOP` and again
    /// under `TOP.<module>` with the same id codes, vectors with a `[msb:lsb]` index.
    const VERILATOR_STYLE: &str = "$version Generated by VerilatedVcd $end
$date Sat Jan 20 12:00:00 2024 $end
$timescale 1ps $end

 $scope module TOP $end
  $var wire  1 # clock $end
  $var wire 64 $ data [63:0] $end
  $var wire  1 % m_cell_valid $end
  $scope module nic_cell_segmenter $end
   $var wire  1 # clock $end
   $var wire 64 $ data [63:0] $end
   $var wire  1 % m_cell_valid $end
   $var wire  8 & state [7:0] $end
   $var wire  1 ' q $end
  $upscope $end
  $scope module other $end
   $var wire  1 ( q $end
  $upscope $end
 $upscope $end
$enddefinitions $end


#0
0#
b0000000000000000000000000000000000000000000000000000000000000001 $
x%
bxxxxxxxx &
0'
z(
#5000
1#
b1000000000000000000000000000000000000000000000000000000000000000 $
0%
b101 &
#10000
0#
1'
0'
#15000
1#
1%
b0000000000000000000000000000000000000000000000000000000000000001 $
1(
#20000
0#
";

    fn fixture() -> Waveform {
        Waveform::parse_str(VERILATOR_STYLE, "verilator_style.vcd").unwrap()
    }

    fn values(w: &Waveform, name: &str) -> Vec<(u64, String)> {
        let id = w.find(name).unwrap();
        w.transitions(id)
            .iter()
            .map(|(t, v)| (*t, v.bits()))
            .collect()
    }

    #[test]
    fn verilator_style_names() {
        let w = fixture();
        assert_eq!(
            w.signals(),
            [
                "TOP.clock",
                "TOP.data",
                "TOP.m_cell_valid",
                "TOP.nic_cell_segmenter.clock",
                "TOP.nic_cell_segmenter.data",
                "TOP.nic_cell_segmenter.m_cell_valid",
                "TOP.nic_cell_segmenter.state",
                "TOP.nic_cell_segmenter.q",
                "TOP.other.q"
            ]
        );
        // A port listed twice with one id code is one signal: the shorter name wins.
        let valid = w.find("m_cell_valid").unwrap();
        assert_eq!(w.name(valid), "TOP.m_cell_valid");
        assert_eq!(
            w.name(w.find("nic_cell_segmenter.m_cell_valid").unwrap()),
            "TOP.nic_cell_segmenter.m_cell_valid"
        );
        assert_eq!(w.name(w.find("TOP.other.q").unwrap()), "TOP.other.q");
        assert_eq!(w.width(w.find("data").unwrap()), 64);
        assert_eq!(w.end_time(), 20_000);
    }

    #[test]
    fn ambiguous_and_missing_names_list_candidates() {
        let w = fixture();
        let err = w.find("q").unwrap_err().to_string();
        assert_eq!(
            err,
            "verilator_style.vcd: `q` is ambiguous; candidates: TOP.other.q, TOP.nic_cell_segmenter.q"
        );
        let err = w.find("cell_valid").unwrap_err().to_string();
        assert!(
            err.starts_with(
                "verilator_style.vcd: no signal matches `cell_valid`; candidates: TOP.m_cell_valid"
            ),
            "{err}"
        );
        // Only whole components match.
        assert!(matches!(w.find("valid"), Err(WaveError::NotFound { .. })));
        assert!(matches!(
            w.find("segmenter.q"),
            Err(WaveError::NotFound { .. })
        ));
    }

    #[test]
    fn values_x_z_and_wide_vectors() {
        let w = fixture();
        let data = w.find("data").unwrap();
        let at = |t| w.value_at(data, t).unwrap().as_u128();
        assert_eq!(
            (at(0), at(5_000), at(15_000)),
            (Some(1), Some(1 << 63), Some(1))
        );

        assert_eq!(
            values(&w, "m_cell_valid"),
            [(0, "x".into()), (5_000, "0".into()), (15_000, "1".into())]
        );
        let valid = w.find("m_cell_valid").unwrap();
        assert_eq!(w.value_at(valid, 0).unwrap().as_u128(), None);
        assert!(!w.value_at(valid, 0).unwrap().is_known());

        // `b101` for an 8-bit variable is zero-extended; `bxxxxxxxx` stays unknown.
        assert_eq!(
            values(&w, "state"),
            [(0, "xxxxxxxx".into()), (5_000, "00000101".into())]
        );
        assert_eq!(
            values(&w, "other.q"),
            [(0, "z".into()), (15_000, "1".into())]
        );
        // 1 then 0 at the same time is no change at all.
        assert_eq!(values(&w, "nic_cell_segmenter.q"), [(0, "0".into())]);
    }

    #[test]
    fn clock_edges_and_sampling() {
        let w = fixture();
        let clock = w.find("clock").unwrap();
        assert_eq!(w.rising_edges(clock), [5_000, 15_000]);
        assert_eq!(w.transitions(clock).len(), 5);
        let valid = w.find("m_cell_valid").unwrap();
        assert_eq!(w.value_at(valid, 15_000).unwrap().as_u128(), Some(1));
        assert_eq!(w.value_before(valid, 15_000).unwrap().as_u128(), Some(0));
        let empty = Waveform::parse_str(
            "$scope module t $end $var wire 1 ! a $end $upscope $end $enddefinitions $end",
            "e.vcd",
        )
        .unwrap();
        assert_eq!(empty.value_at(empty.find("a").unwrap(), 100), None);
    }

    #[test]
    fn repeated_values_are_not_changes() {
        let text = "$timescale 1 ps $end $scope module uut $end $var wire 4 ! n $end $upscope $end $enddefinitions $end
$dumpvars
b0011 !
$end
#10
b0011 !
#20
b11 !
#30
b0100 !
";
        let w = Waveform::parse_str(text, "r.vcd").unwrap();
        assert_eq!(values(&w, "n"), [(0, "0011".into()), (30, "0100".into())]);
    }

    #[test]
    fn timescale_is_converted_to_picoseconds() {
        let text = |scale: &str, t: u64| {
            format!("$timescale {scale} $end $scope module m $end $var wire 1 ! c $end $upscope $end $enddefinitions $end #0 0! #{t} 1!")
        };
        let edge = |scale: &str, t: u64| {
            let w = Waveform::parse_str(&text(scale, t), "t.vcd")?;
            Ok::<_, WaveError>(w.rising_edges(w.find("c").unwrap())[0])
        };
        assert_eq!(edge("10ns", 3).unwrap(), 30_000);
        assert_eq!(edge("1 us", 2).unwrap(), 2_000_000);
        assert_eq!(edge("100 fs", 30).unwrap(), 3);
        let err = edge("1fs", 1500).unwrap_err().to_string();
        assert_eq!(
            err,
            "t.vcd:1: time #1500 is not a whole number of picoseconds"
        );
    }

    #[test]
    fn errors_name_file_and_line() {
        let parse = |text: &str| {
            Waveform::parse_str(text, "bad.vcd")
                .unwrap_err()
                .to_string()
        };

        // Cut off in the header, in a value change, and garbage.
        let cut_header = &VERILATOR_STYLE[..VERILATOR_STYLE.find("$upscope").unwrap()];
        assert_eq!(
            parse(cut_header),
            "bad.vcd:15: file ends inside a command (truncated?): unexpected EOF with open $scope"
        );
        let cut_value = &VERILATOR_STYLE[..VERILATOR_STYLE.find("b1000").unwrap() + 10];
        assert_eq!(
            parse(cut_value),
            "bad.vcd:32: file ends inside a command (truncated?): unexpected end of VCD file"
        );
        assert_eq!(
            parse("PK\u{3}\u{4} this is a zip file"),
            "bad.vcd:1: unexpected character at start of command"
        );
        assert_eq!(parse(""), "bad.vcd:1: file ends inside a command (truncated?): unexpected end of VCD file before $enddefinitions");
        let mut bad_value = VERILATOR_STYLE.to_string();
        bad_value.push_str("b10q1 $\n");
        assert_eq!(parse(&bad_value), "bad.vcd:46: invalid VCD logic value");
        let mut undeclared = VERILATOR_STYLE.to_string();
        undeclared.push_str("#25000\n1Q\n");
        assert_eq!(
            parse(&undeclared),
            "bad.vcd:47: value change for identifier `Q` that no $var declares"
        );
        let mut backwards = VERILATOR_STYLE.to_string();
        backwards.push_str("#100\n");
        assert_eq!(
            parse(&backwards),
            "bad.vcd:46: time #100 goes backwards (after 20000 ps)"
        );

        let err = Waveform::load("/nonexistent/x.vcd")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("/nonexistent/x.vcd: No such file"), "{err}");
    }

    #[test]
    fn colliding_names_get_their_bit_index() {
        let text = "$scope module m $end $var wire 1 ! v [0] $end $var wire 1 \" v [1] $end $upscope $end $enddefinitions $end #0 0! 1\"";
        let w = Waveform::parse_str(text, "b.vcd").unwrap();
        assert_eq!(w.signals(), ["m.v[0]", "m.v[1]"]);
        assert_eq!(
            w.value_at(w.find("v[1]").unwrap(), 0).unwrap().as_u128(),
            Some(1)
        );
    }
}
