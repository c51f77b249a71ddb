//! Assertions on one waveform and cycle-by-cycle comparison of two.

use crate::value::Value;
use crate::waveform::{SignalId, Waveform};
use crate::WaveError;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Rows of context shown before the first difference in a diff table.
const CONTEXT_BEFORE: usize = 3;
/// Rows shown from the first difference on.
const ROWS_AFTER: usize = 8;

/// Check that the signal matching `name` (see [`Waveform::find`]) changes exactly at
/// the given `(time in ps, value)` pairs and nowhere else; the first pair is usually
/// the value at time 0.
///
/// On a difference the error holds a table of expected against actual changes around
/// the first difference. Values with `x`/`z` bits never match.
pub fn assert_transitions(
    w: &Waveform,
    name: &str,
    expected: &[(u64, u128)],
) -> Result<(), WaveError> {
    let id = w.find(name)?;
    let actual = w.transitions(id);
    let same = |i: usize| match (expected.get(i), actual.get(i)) {
        (Some((te, ve)), Some((ta, va))) => te == ta && va.as_u128() == Some(*ve),
        _ => false,
    };
    let n = expected.len().max(actual.len());
    let Some(first) = (0..n).find(|&i| !same(i)) else {
        return Ok(());
    };
    let mut diff = format!(
        "{} changes expected, {} found; first difference at change #{first}\n",
        expected.len(),
        actual.len()
    );
    let _ = writeln!(
        diff,
        "  {:>5}  {:<32}  {:<32}",
        "#", "expected (ps: value)", "actual (ps: value)"
    );
    let from = first.saturating_sub(CONTEXT_BEFORE);
    let to = n.min(first + ROWS_AFTER);
    for i in from..to {
        let e = expected
            .get(i)
            .map(|(t, v)| format!("{t}: {:#x}", v))
            .unwrap_or_else(|| "-".into());
        let a = actual
            .get(i)
            .map(|(t, v)| format!("{t}: {}", show(v)))
            .unwrap_or_else(|| "-".into());
        let mark = if same(i) { ' ' } else { '!' };
        let _ = writeln!(diff, "{mark} {i:>5}  {e:<32}  {a:<32}");
    }
    if to < n {
        let _ = writeln!(diff, "  ... {} more", n - to);
    }
    Err(WaveError::Unexpected {
        path: w.path().to_path_buf(),
        signal: w.name(id).to_string(),
        diff,
    })
}

/// Check the value of the signal matching `name` at each given time (as
/// [`Waveform::value_at`]: changes at that very time included).
pub fn assert_values_at(
    w: &Waveform,
    name: &str,
    expected: &[(u64, u128)],
) -> Result<(), WaveError> {
    let id = w.find(name)?;
    let bad: Vec<usize> = expected
        .iter()
        .enumerate()
        .filter(|(_, (t, v))| w.value_at(id, *t).and_then(Value::as_u128) != Some(*v))
        .map(|(i, _)| i)
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    let mut diff = format!("{} of {} samples differ\n", bad.len(), expected.len());
    let _ = writeln!(
        diff,
        "  {:>12}  {:<20}  {:<20}",
        "time (ps)", "expected", "actual"
    );
    for &i in bad.iter().take(ROWS_AFTER + CONTEXT_BEFORE) {
        let (t, v) = expected[i];
        let a = w
            .value_at(id, t)
            .map(show)
            .unwrap_or_else(|| "(none yet)".into());
        let _ = writeln!(diff, "! {t:>12}  {:<20}  {a:<20}", format!("{v:#x}"));
    }
    Err(WaveError::Unexpected {
        path: w.path().to_path_buf(),
        signal: w.name(id).to_string(),
        diff,
    })
}

fn show(v: &Value) -> String {
    match v.as_u128() {
        Some(n) => format!("{n:#x}"),
        None => v.to_string(),
    }
}

/// How [`compare_with`] lines up two waveforms.
#[derive(Clone, Debug, Default)]
pub struct CompareOptions {
    /// Cycles at the start not compared (reset, or a different start-up in the two
    /// simulators). Cycles are still numbered from the first rising edge.
    pub skip_cycles: usize,
    /// Compare only the cycles both have instead of reporting a different count.
    pub allow_different_lengths: bool,
}

/// One waveform's side of a [`Mismatch`].
#[derive(Clone, Debug)]
pub struct Side {
    /// The VCD file.
    pub path: PathBuf,
    /// The full name of the signal in that file.
    pub name: String,
    /// Time of the rising edge, in ps.
    pub time_ps: u64,
    /// The value there (`None`: the signal had no value yet).
    pub value: Option<Value>,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self
            .value
            .as_ref()
            .map(show)
            .unwrap_or_else(|| "(no value)".into());
        write!(
            f,
            "{} @ {} ps = {v}  [{}]",
            self.name,
            self.time_ps,
            self.path.display()
        )
    }
}

/// Why [`compare`] failed: the first cycle where the waveforms differ, a different
/// number of cycles, or a name that could not be looked up.
#[derive(Debug, thiserror::Error)]
pub enum Mismatch {
    /// A signal has different values at the same cycle.
    #[error("`{signal}` differs at cycle {cycle}:\n  a: {a}\n  b: {b}")]
    Value {
        /// The name as passed to `compare`.
        signal: String,
        /// 0 for the first rising edge of the clock.
        cycle: usize,
        /// Waveform `a`'s side.
        a: Box<Side>,
        /// Waveform `b`'s side.
        b: Box<Side>,
    },
    /// Every compared cycle agreed but the clocks have a different number of rising edges.
    #[error("clock `{clock}` has {a_cycles} rising edges in {} but {b_cycles} in {}", a_path.display(), b_path.display())]
    CycleCount {
        /// The clock name as passed.
        clock: String,
        /// Rising edges in `a`.
        a_cycles: usize,
        /// Rising edges in `b`.
        b_cycles: usize,
        /// File of `a`.
        a_path: PathBuf,
        /// File of `b`.
        b_path: PathBuf,
    },
    /// A signal or the clock is missing or ambiguous in one of the waveforms.
    #[error(transparent)]
    Lookup(#[from] WaveError),
}

/// Compare the named signals of two waveforms cycle by cycle: at the `n`-th rising
/// edge of `clock` in `a` and the `n`-th in `b`, each signal's settled value at that
/// edge ([`Waveform::value_at`], so registers show their new value and inputs the
/// value they had while the edge was taken, provided each simulator records both at or
/// before the edge). Values are compared as numbers, so widths may differ.
///
/// Names are looked up with [`Waveform::find`]; one that is not found is tried again
/// with its last component only, so `"top.count"` finds `uut.count` (RustHDL),
/// `TOP.count` (Verilator) alike; and where a name matches different signals, a single
/// one nearest the top wins (a port `TOP.valid` over a sub-block's `TOP.top.fifo.valid`). Both waveforms must have the same number of rising
/// edges; see [`compare_with`] to relax that or skip the first cycles.
pub fn compare(a: &Waveform, b: &Waveform, signals: &[&str], clock: &str) -> Result<(), Mismatch> {
    compare_with(a, b, signals, clock, &CompareOptions::default())
}

/// [`compare`] with [`CompareOptions`].
pub fn compare_with(
    a: &Waveform,
    b: &Waveform,
    signals: &[&str],
    clock: &str,
    options: &CompareOptions,
) -> Result<(), Mismatch> {
    let edges_a = a.rising_edges(lookup(a, clock)?);
    let edges_b = b.rising_edges(lookup(b, clock)?);
    let ids: Vec<(SignalId, SignalId)> = signals
        .iter()
        .map(|s| Ok((lookup(a, s)?, lookup(b, s)?)))
        .collect::<Result<_, WaveError>>()?;
    let cycles = edges_a.len().min(edges_b.len());
    for cycle in options.skip_cycles..cycles {
        let (ta, tb) = (edges_a[cycle], edges_b[cycle]);
        for (k, &(ia, ib)) in ids.iter().enumerate() {
            let (va, vb) = (a.value_at(ia, ta), b.value_at(ib, tb));
            let same = match (va, vb) {
                (Some(x), Some(y)) => x.same_as(y),
                (None, None) => true,
                _ => false,
            };
            if !same {
                return Err(Mismatch::Value {
                    signal: signals[k].to_string(),
                    cycle,
                    a: Box::new(Side {
                        path: a.path().to_path_buf(),
                        name: a.name(ia).to_string(),
                        time_ps: ta,
                        value: va.cloned(),
                    }),
                    b: Box::new(Side {
                        path: b.path().to_path_buf(),
                        name: b.name(ib).to_string(),
                        time_ps: tb,
                        value: vb.cloned(),
                    }),
                });
            }
        }
    }
    if edges_a.len() != edges_b.len() && !options.allow_different_lengths {
        return Err(Mismatch::CycleCount {
            clock: clock.to_string(),
            a_cycles: edges_a.len(),
            b_cycles: edges_b.len(),
            a_path: a.path().to_path_buf(),
            b_path: b.path().to_path_buf(),
        });
    }
    Ok(())
}

/// [`Waveform::find`], retried with the last component when the full name is not
/// found; of several different matches, the one nearest the top (fewest dots) wins if
/// it is the only one at that depth.
fn lookup(w: &Waveform, name: &str) -> Result<SignalId, WaveError> {
    let result = match w.find(name) {
        Err(WaveError::NotFound { .. }) if name.contains('.') => {
            w.find(name.rsplit('.').next().unwrap_or(name))
        }
        r => r,
    };
    match result {
        Err(WaveError::Ambiguous { candidates, .. }) => {
            let depth = |n: &String| n.matches('.').count();
            let top = candidates.iter().map(depth).min().unwrap_or(0);
            let shallowest: Vec<&String> = candidates.iter().filter(|c| depth(c) == top).collect();
            match shallowest[..] {
                [only] => w.find(only),
                _ => w.find(name),
            }
        }
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wave(name: &str, body: &str) -> Waveform {
        let text = format!(
            "$timescale 1ps $end $scope module TOP $end $var wire 1 ! clock $end \
             $var wire 8 \" data [7:0] $end $upscope $end $enddefinitions $end\n{body}"
        );
        Waveform::parse_str(&text, name).unwrap()
    }

    #[test]
    fn values_at_report_each_wrong_sample() {
        let w = wave("a.vcd", "#0 0! b0 \" #10 1! b101 \" #20 0!\n");
        assert_values_at(&w, "data", &[(0, 0), (10, 5), (19, 5)]).unwrap();
        let err = assert_values_at(&w, "data", &[(0, 0), (9, 5), (10, 6)])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "a.vcd: signal `TOP.data` does not match the expectation\n2 of 3 samples differ"
            ),
            "{err}"
        );
        assert!(
            err.contains("!            9  0x5                   0x0"),
            "{err}"
        );
        assert!(
            err.contains("!           10  0x6                   0x5"),
            "{err}"
        );
    }

    #[test]
    fn a_top_level_port_wins_over_deeper_namesakes() {
        let text = "$scope module TOP $end $var wire 1 ! clock $end $var wire 1 \" valid $end \
                    $scope module top $end $var wire 1 \" valid $end $scope module fifo $end \
                    $var wire 1 # valid $end $upscope $end $upscope $end $upscope $end $enddefinitions $end \
                    #0 0! 0\" 1# #10 1! #20 0! 1\" #30 1!";
        let w = Waveform::parse_str(text, "v.vcd").unwrap();
        assert!(matches!(w.find("valid"), Err(WaveError::Ambiguous { .. })));
        assert_eq!(w.name(lookup(&w, "valid").unwrap()), "TOP.valid");
        assert_eq!(w.name(lookup(&w, "uut.valid").unwrap()), "TOP.valid");
        assert_eq!(
            w.name(lookup(&w, "fifo.valid").unwrap()),
            "TOP.top.fifo.valid"
        );
        let b = wave("b.vcd", "#0 0! b0 \" #10 1! #20 0! #30 1!\n");
        let err = compare(&w, &b, &["valid"], "clock").unwrap_err();
        assert!(
            matches!(err, Mismatch::Lookup(WaveError::NotFound { .. })),
            "{err}"
        );
    }

    #[test]
    fn unknown_values_differ_from_known_ones() {
        let a = wave(
            "a.vcd",
            "#0 0! bxxxxxxxx \" #10 1! #20 0! b1 \" #30 1! #40 0!\n",
        );
        let b = wave("b.vcd", "#0 0! b0 \" #10 1! #20 0! b1 \" #30 1! #40 0!\n");
        let err = compare(&a, &b, &["data"], "clock").unwrap_err();
        assert!(matches!(err, Mismatch::Value { cycle: 0, .. }), "{err}");
        assert!(
            err.to_string()
                .contains("a: TOP.data @ 10 ps = 8'bxxxxxxxx"),
            "{err}"
        );
        compare_with(
            &a,
            &b,
            &["data"],
            "clock",
            &CompareOptions {
                skip_cycles: 1,
                ..Default::default()
            },
        )
        .unwrap();
    }
}
