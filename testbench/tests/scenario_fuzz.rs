//! Fuzzing the scenario parser (issue 16, "Bad input"): random text, and the shipped
//! `scenarios/*.toml` with lines deleted, duplicated, cut short, values replaced by wrong
//! types and out-of-range numbers, and keys (known and unknown) inserted into every table.
//!
//! [`Scenario::parse`] never panics (nor runs out of memory); it returns a scenario whose
//! derived values hold (every event occurrence inside the run, no wrapped arithmetic), or
//! an error naming the file and the line, as docs/scenarios.md promises, and for a value of
//! the wrong type the line of that value.

use nic_testbench::scenario::Scenario;
use proptest::prelude::*;
use std::path::PathBuf;

const FILE: &str = "fuzz.toml";

fn shipped() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    assert!(out.len() >= 7, "the shipped scenarios: {out:?}");
    out
}

/// Every key of docs/scenarios.md, by table ("" for the top level).
const KEYS: &[(&str, &str)] = &[
    ("", "name"),
    ("", "description"),
    ("", "hosts"),
    ("", "cycles"),
    ("", "protocol"),
    ("", "backend"),
    ("", "tpt"),
    ("", "queue_pairs"),
    ("", "seed"),
    ("", "initially_off"),
    ("", "rejoin_bound"),
    ("", "threads"),
    ("fabric", "latency"),
    ("fabric", "input_capacity_words"),
    ("driver", "resend_timeout"),
    ("driver", "poll_interval"),
    ("driver", "sq_log2"),
    ("driver", "rq_log2"),
    ("driver", "cq_log2"),
    ("driver", "recv_buffer_bytes"),
    ("driver", "exception_poll_interval"),
    ("heartbeat", "period"),
    ("heartbeat", "timeout"),
    ("heartbeat", "hold_down"),
    ("memory", "latency"),
    ("memory", "stall"),
    ("workload", "rate"),
    ("workload", "mix"),
    ("workload", "min_bytes"),
    ("workload", "max_bytes"),
    ("workload", "targets"),
    ("workload", "sources"),
    ("workload", "stop_at"),
    ("[event]", "at"),
    ("[event]", "action"),
    ("[event]", "host"),
    ("[event]", "hosts"),
    ("[event]", "down_cycles"),
    ("[event]", "repeat"),
    ("[event]", "every"),
    ("", "unknown_key"),
    ("workload", "speed"),
    ("[event]", "when"),
];

/// A TOML value: wrong types, edge and out-of-range numbers, and plausible ones.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "0",
            "1",
            "-1",
            "2",
            "3",
            "7",
            "8",
            "63",
            "64",
            "65",
            "1000",
            "4294967295",
            "4294967296",
            "2147483648",
            "9007199254740993",
            "6148914691236517206",
            "9223372036854775807",
            "-9223372036854775808",
            "18446744073709551615",
            "0.0",
            "0.5",
            "1.0",
            "1.5",
            "-0.1",
            "nan",
            "inf",
            "-inf",
            "1e300",
            "true",
            "\"\"",
            "\"reboot\"",
            "\"hardware\"",
            "\"heartbeat\"",
            "\"rusthdl\"",
            "\"x\"",
            "[]",
            "[1]",
            "[0, 1, 99]",
            "[\"a\"]",
            "{}",
            "{ rdma_write = 4294967295, send = 1 }",
            "{ rdma_write = 0 }",
            "{ fly = 1 }",
            "1979-05-27",
        ])
        .prop_map(str::to_string),
        any::<i64>().prop_map(|v| v.to_string()),
        (0u64..200_000).prop_map(|v| v.to_string()),
    ]
}

/// What a value of the wrong type looks like for a line's original value.
fn wrong_type(original: &str) -> &'static str {
    let o = original.trim();
    if o.starts_with('"') {
        "5"
    } else if o.starts_with('[')
        || o.starts_with('{')
        || o.parse::<i64>().is_ok()
        || o.parse::<f64>().is_ok()
    {
        "\"x\""
    } else {
        "[1]"
    }
}

#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(prop::sample::Index),
    DuplicateLine(prop::sample::Index),
    SwapLines(prop::sample::Index, prop::sample::Index),
    /// Replace the value of a `key = value` line.
    ReplaceValue(prop::sample::Index, String),
    /// Replace the value of a `key = value` line by one of the wrong type.
    WrongType(prop::sample::Index),
    /// Insert `key = value` into its table (appending the table if absent).
    InsertKey(prop::sample::Index, String),
    /// Cut the text at a character.
    Cut(prop::sample::Index),
    /// Insert random text at a line.
    Garbage(prop::sample::Index, String),
    /// Write a `[table]`'s keys as dotted keys (`table.key = v`) at the top level.
    Dotted(prop::sample::Index),
    /// Quote a key (`"key" = v`).
    Quoted(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let i = any::<prop::sample::Index>;
    prop_oneof![
        1 => i().prop_map(Mutation::DeleteLine),
        1 => i().prop_map(Mutation::DuplicateLine),
        1 => (i(), i()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        4 => (i(), value()).prop_map(|(a, v)| Mutation::ReplaceValue(a, v)),
        2 => i().prop_map(Mutation::WrongType),
        4 => (i(), value()).prop_map(|(a, v)| Mutation::InsertKey(a, v)),
        1 => i().prop_map(Mutation::Cut),
        1 => (i(), "[a-z_=\\[\\]\"0-9 .,{}#\n-]{0,30}").prop_map(|(a, g)| Mutation::Garbage(a, g)),
        1 => i().prop_map(Mutation::Dotted),
        1 => i().prop_map(Mutation::Quoted),
    ]
}

/// Lines of a `key = value` form (not tables, comments or blanks).
fn key_lines(lines: &[String]) -> Vec<usize> {
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim_start();
            !t.starts_with('#') && !t.starts_with('[') && t.contains('=')
        })
        .map(|(i, _)| i)
        .collect()
}

/// Apply `m`; return the 1-based line of a value of the wrong type it wrote, if any.
fn apply(text: &mut String, m: &Mutation) -> Option<usize> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut wrong_line = None;
    match m {
        Mutation::DeleteLine(i) if !lines.is_empty() => {
            lines.remove(i.index(lines.len()));
        }
        Mutation::DuplicateLine(i) if !lines.is_empty() => {
            let n = i.index(lines.len());
            lines.insert(n, lines[n].clone());
        }
        Mutation::SwapLines(a, b) if !lines.is_empty() => {
            let (a, b) = (a.index(lines.len()), b.index(lines.len()));
            lines.swap(a, b);
        }
        Mutation::ReplaceValue(i, v) => {
            let keyed = key_lines(&lines);
            if !keyed.is_empty() {
                let n = keyed[i.index(keyed.len())];
                let key = lines[n].split('=').next().unwrap().to_string();
                lines[n] = format!("{key}= {v}");
            }
        }
        Mutation::WrongType(i) => {
            let keyed = key_lines(&lines);
            if !keyed.is_empty() {
                let n = keyed[i.index(keyed.len())];
                let (key, original) = lines[n].split_once('=').unwrap();
                // Only a single-line value (not the start of a multi-line array or table).
                let o = original.split('#').next().unwrap().trim();
                let closed = (!o.starts_with('[') || o.ends_with(']'))
                    && (!o.starts_with('{') || o.ends_with('}'));
                if closed && !o.is_empty() {
                    lines[n] = format!("{key}= {}", wrong_type(o));
                    wrong_line = Some(n + 1);
                }
            }
        }
        Mutation::InsertKey(i, v) => {
            let (table, key) = KEYS[i.index(KEYS.len())];
            let line = format!("{key} = {v}");
            if table.is_empty() {
                lines.insert(0, line);
            } else {
                let header = format!("[{table}]");
                match lines.iter().position(|l| l.trim() == header) {
                    Some(h) => lines.insert(h + 1, line),
                    None => {
                        lines.push(header);
                        lines.push(line);
                    }
                }
            }
        }
        Mutation::Cut(i) => {
            let chars: Vec<char> = text.chars().collect();
            if !chars.is_empty() {
                *text = chars[..i.index(chars.len())].iter().collect();
            }
            return None;
        }
        Mutation::Garbage(i, g) => {
            let n = i.index(lines.len() + 1);
            lines.insert(n, g.clone());
        }
        Mutation::Dotted(i) => {
            let tables: Vec<usize> = (0..lines.len())
                .filter(|&n| {
                    let t = lines[n].trim();
                    t.starts_with('[') && !t.starts_with("[[")
                })
                .collect();
            if !tables.is_empty() {
                let h = tables[i.index(tables.len())];
                let name = lines[h]
                    .trim()
                    .trim_matches(|c| c == '[' || c == ']')
                    .to_string();
                let mut body = vec![];
                let n = h + 1;
                while n < lines.len() && !lines[n].trim_start().starts_with('[') {
                    let l = lines.remove(n);
                    if l.contains('=') && !l.trim_start().starts_with('#') {
                        body.push(format!("{name}.{}", l.trim_start()));
                    }
                }
                lines.remove(h);
                // Top-level keys come before the first table.
                let first = lines
                    .iter()
                    .position(|l| l.trim_start().starts_with('['))
                    .unwrap_or(lines.len());
                for (k, b) in body.into_iter().enumerate() {
                    lines.insert(first + k, b);
                }
            }
        }
        Mutation::Quoted(i) => {
            let keyed = key_lines(&lines);
            if !keyed.is_empty() {
                let n = keyed[i.index(keyed.len())];
                let (key, value) = lines[n].split_once('=').unwrap();
                if !key.contains('"') && !key.contains('.') {
                    lines[n] = format!("\"{}\" ={value}", key.trim());
                }
            }
        }
        _ => {}
    }
    *text = lines.join("\n");
    text.push('\n');
    wrong_line
}

/// The parser's contract on any text.
fn check(text: &str, wrong_line: Option<usize>) -> Result<(), TestCaseError> {
    match Scenario::parse(text, FILE) {
        Ok(s) => {
            let t = s.timeline();
            prop_assert!(
                t.iter().all(|e| e.at < s.cycles && e.host < s.hosts),
                "an event outside the run accepted: {:?}",
                t.iter().find(|e| e.at >= s.cycles || e.host >= s.hosts)
            );
            let occurrences: u64 = s
                .events
                .iter()
                .map(|e| {
                    let e = e.get_ref();
                    let hosts = e
                        .host
                        .map(|_| 1)
                        .or(e.hosts.as_ref().map(|h| h.len()))
                        .unwrap_or(0);
                    e.repeat.unwrap_or(1) as u64 * hosts as u64
                })
                .sum();
            // A flapping port adds an unplug and a plug per flap.
            let flaps: u64 = s
                .fault_specs()
                .iter()
                .map(|f| 2 * f.flaps(s.cycles).len() as u64)
                .sum();
            prop_assert_eq!(t.len() as u64, occurrences + flaps);
            if s.workload.stop_at.is_none() {
                prop_assert!(
                    s.workload_stop() <= s.cycles,
                    "workload stops at {} after the run's {} cycles",
                    s.workload_stop(),
                    s.cycles
                );
            }
            let m = &s.workload.mix;
            let sum = [
                m.rdma_write,
                m.rdma_read,
                m.send,
                m.fetch_add,
                m.compare_swap,
            ]
            .iter()
            .map(|&w| w as u64)
            .sum::<u64>();
            prop_assert_eq!(m.total() as u64, sum, "the mix's total wraps");
            prop_assert!(
                wrong_line.is_none(),
                "a value of the wrong type was accepted"
            );
        }
        Err(e) => {
            let shown = e.to_string();
            prop_assert!(shown.starts_with(&format!("{FILE}: ")), "{}", shown);
            let lines = text.lines().count().max(1);
            match e.line {
                Some(l) => {
                    prop_assert!(
                        (1..=lines + 1).contains(&l),
                        "line {} of {}: {}",
                        l,
                        lines,
                        shown
                    );
                    prop_assert!(shown.contains(&format!("line {l}")), "{}", shown);
                }
                None => prop_assert!(false, "no line named: {}", shown),
            }
            if let Some(w) = wrong_line {
                prop_assert_eq!(e.line, Some(w), "{}", shown);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn mutated_shipped_scenarios_are_ok_or_a_clear_error(
        file in any::<prop::sample::Index>(),
        ms in prop::collection::vec(mutation(), 1..4),
    ) {
        let files = shipped();
        let (_, original) = &files[file.index(files.len())];
        let mut text = original.clone();
        let mut wrong_line = None;
        for m in &ms {
            wrong_line = apply(&mut text, m);
        }
        // With other damage, an earlier line may be what the parser refuses first.
        if ms.len() > 1 {
            wrong_line = None;
        }
        check(&text, wrong_line)?;
    }

    #[test]
    fn a_wrong_type_names_its_line(file in any::<prop::sample::Index>(), at in any::<prop::sample::Index>()) {
        let files = shipped();
        let (_, original) = &files[file.index(files.len())];
        let mut text = original.clone();
        let wrong_line = apply(&mut text, &Mutation::WrongType(at));
        check(&text, wrong_line)?;
    }

    /// An unknown key in any table is refused, naming the key and its line.
    #[test]
    fn an_unknown_key_is_refused(
        file in any::<prop::sample::Index>(),
        table in prop::sample::select(vec!["", "fabric", "driver", "heartbeat", "memory", "workload", "[event]"]),
        key in "[a-z][a-z_]{0,12}",
        v in value(),
    ) {
        prop_assume!(!KEYS.iter().any(|(_, k)| *k == key) && key != "mix" && key != "event");
        let files = shipped();
        let (_, original) = &files[file.index(files.len())];
        let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
        let line = format!("{key} = {v}");
        let at = if table.is_empty() {
            0
        } else {
            let header = format!("[{table}]");
            match lines.iter().position(|l| l.trim() == header) {
                Some(h) => h + 1,
                None => {
                    lines.push(header);
                    lines.len()
                }
            }
        };
        lines.insert(at, line);
        let text = lines.join("\n") + "\n";
        check(&text, None)?;
        let e = Scenario::parse(&text, FILE);
        prop_assert!(e.is_err(), "unknown key `{}` in [{}] accepted", key, table);
        let e = e.unwrap_err();
        // The value may be refused first (an invalid TOML value); else the key is named.
        if e.message.contains("unknown field") {
            prop_assert!(e.message.contains(&key), "{}", e);
            prop_assert_eq!(e.line, Some(at + 1), "{}", e);
        }
    }

    #[test]
    fn random_text_is_ok_or_a_clear_error(text in "[a-z_=\\[\\]\"0-9 .,{}#\n-]{0,300}") {
        check(&text, None)?;
    }

    #[test]
    fn arbitrary_unicode_is_ok_or_a_clear_error(text in ".{0,200}") {
        check(&text, None)?;
    }
}

/// The shipped scenarios parse.
#[test]
fn shipped_scenarios_parse() {
    for (name, text) in shipped() {
        if let Err(e) = Scenario::parse(&text, &name) {
            panic!("{e}");
        }
    }
}

// Regression tests: what the fuzzing found, shrunk.

const BASE: &str = "name = \"t\"\nhosts = 4\ncycles = 1000\n";

fn refused(text: &str) -> nic_testbench::scenario::ScenarioError {
    match Scenario::parse(text, FILE) {
        Ok(s) => panic!("accepted: {s:?}"),
        Err(e) => e,
    }
}

/// A bad `[fabric]` key alone (no `latency` line) names its own line.
#[test]
fn a_bad_fabric_key_names_its_line() {
    let e = refused(&format!("{BASE}[fabric]\ninput_capacity_words = 0\n"));
    assert_eq!(e.line, Some(5), "{e}");
    assert!(e.message.contains("input_capacity_words"), "{e}");
    let e = refused(&format!("{BASE}[fabric]\nlatency = 0\n"));
    assert_eq!(e.line, Some(5), "{e}");
}

/// `latency` is a key of `[fabric]` and of `[memory]`: each error names its own table's.
#[test]
fn a_bad_memory_latency_names_its_line_not_the_fabric_one() {
    let e = refused(&format!(
        "{BASE}[fabric]\nlatency = 16\n[memory]\nlatency = 0\n"
    ));
    assert_eq!(e.line, Some(7), "{e}");
    assert!(e.message.contains("memory"), "{e}");
}

/// A workload that does not fit a small receive buffer: the error names a line even when
/// the sizes are the defaults.
#[test]
fn a_receive_buffer_below_the_default_sizes_names_its_line() {
    let e = refused(&format!("{BASE}[driver]\nrecv_buffer_bytes = 256\n"));
    assert_eq!(e.line, Some(5), "{e}");
    assert!(e.message.contains("recv_buffer_bytes"), "{e}");
}

/// A mix given as a table names the table.
#[test]
fn a_zero_mix_table_names_its_line() {
    let e = refused(&format!(
        "{BASE}[workload.mix]\nrdma_write = 0\nrdma_read = 0\nsend = 0\nfetch_add = 0\n"
    ));
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.message.contains("workload.mix"), "{e}");
}

/// Weights that add up past 2^32 - 1 are refused (their total used to wrap: to 0 here,
/// refused as "every weight is 0"; to 1 with `send = 2`, accepted).
#[test]
fn mix_weights_that_overflow_are_refused() {
    for send in [1, 2] {
        let e = refused(&format!(
            "{BASE}[workload]\nmix = {{ rdma_write = 4294967295, send = {send} }}\n"
        ));
        assert_eq!(e.line, Some(5), "{e}");
        assert!(e.message.contains("add up"), "{e}");
    }
}

/// A repeated event whose occurrences pass 2^64 cycles is refused (its cycles used to wrap
/// around to before `cycles`, and the scenario was accepted).
#[test]
fn repeated_events_past_u64_are_refused() {
    let e = refused(&format!(
        "{BASE}[[event]]\nat = 10\naction = \"reboot\"\nhost = 1\nrepeat = 3\nevery = 9223372036854775807\n"
    ));
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.message.contains("every"), "{e}");
}

/// Millions of event occurrences are refused before they are expanded (4e9 occurrences
/// would take 128 GB).
#[test]
fn too_many_event_occurrences_are_refused() {
    let e = refused(
        "name = \"t\"\nhosts = 4\ncycles = 9000000000000000000\n[[event]]\nat = 10\naction = \"unplug\"\nhosts = [1, 2]\nrepeat = 2000000\nevery = 1\n",
    );
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.message.contains("repeat"), "{e}");
}

/// A flap fault repeated `every` cycles over a long run expands into timeline events: too
/// many is refused (the fuzzer's mutation of the flapping-port scenario took 24 GB).
#[test]
fn too_many_flaps_are_refused() {
    let e = refused(
        "name = \"t\"\nhosts = 2\ncycles = 100000000000\n[[fault]]\nkind = \"flap\"\nfrom = 10\nhost = 1\ndown_cycles = 1\nevery = 2\n",
    );
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.message.contains("flaps"), "{e}");
}

/// The default stop of the workload is 3/4 of `cycles`, also for the largest `cycles`.
#[test]
fn the_default_workload_stop_does_not_wrap() {
    let s = Scenario::parse(
        "name = \"t\"\nhosts = 2\ncycles = 9223372036854775807\n",
        FILE,
    )
    .unwrap();
    assert_eq!(s.workload_stop() as u128, (s.cycles as u128) * 3 / 4);
}

/// An error at the end of the text (an unclosed array): `line` is the line the message
/// names (not the line after the final newline).
#[test]
fn an_error_at_the_end_names_the_same_line_twice() {
    for text in [
        "name = \"t\"\nhosts = [\n",
        "name = \"t\"\nhosts = [",
        "hosts = [\u{e9}",
    ] {
        let e = refused(text);
        let l = e.line.expect("a line");
        assert!(
            e.message.contains(&format!("line {l}")),
            "{:?}: {e}",
            e.line
        );
    }
}

/// Dotted, quoted and inline-table keys are found for the error's line as plain ones are.
#[test]
fn dotted_quoted_and_inline_keys_name_their_line() {
    for (text, line, field) in [
        (format!("{BASE}workload.rate = 2\n"), 4, "workload.rate"),
        ("name = \"t\"\n\"hosts\" = 99\ncycles = 1000\n".to_string(), 2, "hosts"),
        (format!("{BASE}fabric = {{ latency = 0 }}\n"), 4, "fabric"),
        (format!("{BASE}memory.latency = 0\n[fabric]\nlatency = 16\n"), 4, "memory"),
        (format!("{BASE}workload.mix.send = 0\nworkload.mix.rdma_write = 0\nworkload.mix.rdma_read = 0\nworkload.mix.fetch_add = 0\n"), 4, "workload.mix"),
    ] {
        let e = refused(&text);
        assert_eq!(e.line, Some(line), "{text}: {e}");
        assert!(e.message.contains(field), "{text}: {e}");
    }
}

/// Ring sizes and receive buffers the driver refuses are refused by the parser, naming the
/// line (they used to be accepted, and the run failed in its set-up naming neither file
/// nor line: "the driver's arena ends at 0x4400000007100, beyond ...").
#[test]
fn driver_values_out_of_range_name_their_line() {
    for (key, value) in [
        ("sq_log2", "40"),
        ("rq_log2", "0"),
        ("cq_log2", "17"),
        ("recv_buffer_bytes", "4000000000"),
        ("recv_buffer_bytes", "1028"),
        ("recv_buffer_bytes", "512"),
    ] {
        let e = refused(&format!("{BASE}[driver]\n{key} = {value}\n"));
        assert_eq!(e.line, Some(5), "{key} = {value}: {e}");
        assert!(e.message.contains(&format!("driver.{key}")), "{e}");
    }
    // What the driver takes is taken.
    Scenario::parse(
        &format!(
            "{BASE}[driver]\nsq_log2 = 16\nrq_log2 = 1\ncq_log2 = 16\nrecv_buffer_bytes = 65536\n"
        ),
        FILE,
    )
    .unwrap();
}
