//! Write a VCD while stepping a RustHDL counter directly, read it back, and compare it
//! with the Verilator run of the same block (fixtures/counter_verilator.vcd.expect).

mod common;
use common::*;
use nic_waves::*;
use rust_hdl::prelude::*;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

const CYCLES: usize = 20;
const VERILATOR_FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/counter_verilator.vcd.expect"
);

/// A path of this test's own under the target directory.
fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("nic-waves")
        .join(name)
}

/// Run the counter with `enables` into a fresh VCD at `tmp(name)` and load it.
fn record(name: &str, enables: &[bool]) -> Waveform {
    let path = tmp(name);
    let mut uut = new_counter();
    let mut vcd = RustHdlVcd::create(&path, &uut).unwrap();
    run_counter(&mut uut, enables, Some(&mut vcd));
    vcd.finish().unwrap();
    Waveform::load(&path).unwrap()
}

/// `(time, count)` changes expected: 0 at time 0, then +1 at each enabled rising edge.
fn expected_count(enables: &[bool]) -> Vec<(u64, u128)> {
    let mut out = vec![(0, 0)];
    let mut count = 0;
    for (k, &en) in enables.iter().enumerate() {
        if en {
            count = (count + 1) % 16;
            out.push(((2 * k as u64 + 1) * HALF_PERIOD_PS, count));
        }
    }
    out
}

#[test]
fn rusthdl_vcd_round_trip() {
    let enables = enable_pattern(CYCLES);
    let w = record("round_trip.vcd", &enables);

    assert_eq!(
        w.signals(),
        [
            "uut.clock",
            "uut.enable",
            "uut.count",
            "uut.counter.d",
            "uut.counter.q",
            "uut.counter.clock"
        ]
    );
    let count = w.find("count").unwrap();
    assert_eq!(w.width(count), 4);
    assert_eq!(w.name(count), "uut.count");

    // Values and times; the count wraps 15 → 0 in cycle 19.
    let expected = expected_count(&enables);
    assert_eq!(expected.last(), Some(&(195_000, 1)));
    assert_transitions(&w, "count", &expected).unwrap();
    assert_transitions(&w, "counter.q", &expected).unwrap();
    assert_transitions(
        &w,
        "uut.enable",
        &[
            (0, 0),
            (5_000, 1),
            (35_000, 0),
            (55_000, 1),
            (95_000, 0),
            (105_000, 1),
        ],
    )
    .unwrap();

    // One rising edge per cycle, at (2k+1) half periods; the DFF's clock input too.
    let edges: Vec<u64> = (0..CYCLES as u64)
        .map(|k| (2 * k + 1) * HALF_PERIOD_PS)
        .collect();
    assert_eq!(w.rising_edges(w.find("uut.clock").unwrap()), edges);
    assert_eq!(w.rising_edges(w.find("counter.clock").unwrap()), edges);
    assert_eq!(w.end_time(), 2 * CYCLES as u64 * HALF_PERIOD_PS);

    // value_at includes a change at that time, value_before does not.
    assert_eq!(w.value_at(count, 5_000).and_then(Value::as_u128), Some(1));
    assert_eq!(
        w.value_before(count, 5_000).and_then(Value::as_u128),
        Some(0)
    );
    assert_eq!(w.value_at(count, 4_999).and_then(Value::as_u128), Some(0));
    assert_values_at(&w, "count", &[(40_000, 3), (50_000, 3), (55_000, 4)]).unwrap();
}

#[test]
fn wrong_expectation_gives_a_readable_diff() {
    let w = record("wrong_expectation.vcd", &enable_pattern(CYCLES));
    let mut expected = expected_count(&enable_pattern(CYCLES));
    expected[4].0 += 1; // time of the 4th change off by one ps
    let err = assert_transitions(&w, "count", &expected)
        .unwrap_err()
        .to_string();
    assert!(err.contains("signal `uut.count` does not match"), "{err}");
    assert!(err.contains("first difference at change #4"), "{err}");
    assert!(err.contains("!     4  55001: 0x4"), "{err}");
    assert!(err.contains("55000: 0x4"), "{err}");
}

#[test]
fn rusthdl_matches_verilator() {
    let rusthdl = record("matches_verilator.vcd", &enable_pattern(CYCLES));
    let verilator = Waveform::load(VERILATOR_FIXTURE).unwrap();
    // Verilator lists ports under TOP and TOP.top (same id code): one signal.
    assert_eq!(
        verilator.name(verilator.find("count").unwrap()),
        "TOP.count"
    );
    assert_eq!(
        verilator.name(verilator.find("counter.q").unwrap()),
        "TOP.top.counter.q"
    );
    assert_transitions(
        &verilator,
        "count",
        &expected_count(&enable_pattern(CYCLES)),
    )
    .unwrap();

    let signals = ["enable", "count", "counter.d", "counter.q"];
    compare(&rusthdl, &verilator, &signals, "clock").unwrap();
    compare(&verilator, &rusthdl, &signals, "top.clock").unwrap();
}

#[test]
fn compare_reports_the_first_differing_cycle() {
    let mut enables = enable_pattern(CYCLES);
    enables[12] = false; // the RustHDL run misses one count at cycle 12
    let rusthdl = record("mismatch.vcd", &enables);
    let verilator = Waveform::load(VERILATOR_FIXTURE).unwrap();

    let err = compare(&rusthdl, &verilator, &["count", "enable"], "clock").unwrap_err();
    let Mismatch::Value {
        signal,
        cycle,
        a,
        b,
    } = &err
    else {
        panic!("expected a value mismatch, got {err}");
    };
    assert_eq!((signal.as_str(), *cycle), ("count", 12));
    assert_eq!(
        (
            a.name.as_str(),
            a.time_ps,
            a.value.as_ref().and_then(Value::as_u128)
        ),
        ("uut.count", 125_000, Some(9))
    );
    assert_eq!(
        (
            b.name.as_str(),
            b.time_ps,
            b.value.as_ref().and_then(Value::as_u128)
        ),
        ("TOP.count", 125_000, Some(10))
    );
    let text = err.to_string();
    assert!(text.starts_with("`count` differs at cycle 12:"), "{text}");
    assert!(text.contains("a: uut.count @ 125000 ps = 0x9"), "{text}");
    assert!(text.contains("b: TOP.count @ 125000 ps = 0xa"), "{text}");

    // Skipping the cycles up to and including the mismatch of `enable` alone passes.
    let later = CompareOptions {
        skip_cycles: 13,
        ..Default::default()
    };
    compare_with(&rusthdl, &verilator, &["enable"], "clock", &later).unwrap();
}

#[test]
fn compare_reports_a_different_number_of_cycles() {
    let rusthdl = record("short.vcd", &enable_pattern(CYCLES - 2));
    let verilator = Waveform::load(VERILATOR_FIXTURE).unwrap();
    let err = compare(&rusthdl, &verilator, &["count"], "clock").unwrap_err();
    assert!(
        matches!(
            err,
            Mismatch::CycleCount {
                a_cycles: 18,
                b_cycles: 20,
                ..
            }
        ),
        "{err}"
    );
    let relaxed = CompareOptions {
        allow_different_lengths: true,
        ..Default::default()
    };
    compare_with(&rusthdl, &verilator, &["count"], "clock", &relaxed).unwrap();
}

#[test]
fn compare_names_a_missing_signal() {
    let rusthdl = record("missing.vcd", &enable_pattern(4));
    let err = compare(&rusthdl, &rusthdl, &["m_count"], "clock")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no signal matches `m_count`; candidates: uut.count"),
        "{err}"
    );
    // `q` alone would be fine here; `clock` is one signal in three places in Verilator.
    let verilator = Waveform::load(VERILATOR_FIXTURE).unwrap();
    assert_eq!(
        verilator.name(verilator.find("clock").unwrap()),
        "TOP.clock"
    );
}

#[test]
fn sample_time_must_not_go_backwards() {
    let uut = new_counter();
    let mut vcd = RustHdlVcd::new(Vec::new(), &uut).unwrap();
    vcd.sample(10, &uut).unwrap();
    vcd.sample(10, &uut).unwrap();
    let err = vcd.sample(9, &uut).unwrap_err().to_string();
    assert_eq!(err, "VCD sample time went backwards: 9 ps after 10 ps");
    let text = String::from_utf8(vcd.finish().unwrap()).unwrap();
    assert_eq!(text.matches("#10\n").count(), 1, "{text}");
}

/// Accepts `limit` bytes, then fails.
struct FailingWriter {
    limit: usize,
}

impl std::io::Write for FailingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() > self.limit {
            return Err(std::io::Error::other("disk full"));
        }
        self.limit -= buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn write_errors_are_returned_not_panics() {
    let mut uut = new_counter();
    let err = RustHdlVcd::new(FailingWriter { limit: 10 }, &uut)
        .err()
        .unwrap();
    assert_eq!(err.to_string(), "<writer>: disk full");

    let mut vcd = RustHdlVcd::new(FailingWriter { limit: 400 }, &uut).unwrap();
    settle(&mut uut);
    for t in 0..10 {
        uut.enable.next = t % 2 == 0;
        settle(&mut uut);
        vcd.sample(t, &uut).unwrap(); // buffered
    }
    let err = vcd.finish().err().unwrap();
    assert_eq!(err.to_string(), "<writer>: disk full");
}

#[test]
fn sampling_another_block_is_an_error() {
    let uut = new_counter();
    let other = new_counter();
    let mut vcd = RustHdlVcd::new(Vec::new(), &uut).unwrap();
    vcd.sample(0, &uut).unwrap();
    let err = vcd.sample(1, &other).unwrap_err().to_string();
    assert!(err.contains("sampled a block other than the one"), "{err}");
}

/// A `Write` whose bytes stay readable after rust-hdl-core's probe has taken it.
#[derive(Clone, Default)]
struct SharedBuf(Rc<RefCell<Vec<u8>>>);

impl std::io::Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The writer's output is byte for byte what rust-hdl-core's own VCD functions write
/// (`Simulation::run_traced` uses them) for the same samples.
#[test]
fn output_matches_rust_hdl_core() {
    let enables = enable_pattern(CYCLES);
    let mut uut = new_counter();
    let mut ours = RustHdlVcd::new(Vec::new(), &uut).unwrap();
    run_counter(&mut uut, &enables, Some(&mut ours));
    let ours = String::from_utf8(ours.finish().unwrap()).unwrap();

    let buf = SharedBuf::default();
    let mut uut = new_counter();
    let mut theirs = write_vcd_header(buf.clone(), &uut);
    settle(&mut uut);
    theirs.timestamp(0).unwrap();
    theirs = write_vcd_dump(theirs, &uut);
    for (k, &en) in enables.iter().enumerate() {
        let k = k as u64;
        uut.enable.next = en;
        settle(&mut uut);
        uut.clock.next = Clock::from(true);
        settle(&mut uut);
        theirs.timestamp((2 * k + 1) * HALF_PERIOD_PS).unwrap();
        theirs = write_vcd_change(theirs, &uut);
        uut.clock.next = Clock::from(false);
        settle(&mut uut);
        theirs.timestamp((2 * k + 2) * HALF_PERIOD_PS).unwrap();
        theirs = write_vcd_change(theirs, &uut);
    }
    drop(theirs);
    let theirs = String::from_utf8(buf.0.take()).unwrap();
    assert_eq!(ours, theirs);
}

/// Enum, struct-valued and wide signals: same bytes as rust-hdl-core, and readable.
#[test]
fn mixed_signal_kinds() {
    let gos = [true, false, false, false, false, true, false];
    let mut uut = Mixed::default();
    uut.connect_all();
    let mut ours = RustHdlVcd::new(Vec::new(), &uut).unwrap();
    run_mixed(&mut uut, &gos, &mut ours);
    let ours = String::from_utf8(ours.finish().unwrap()).unwrap();

    let buf = SharedBuf::default();
    let mut uut = Mixed::default();
    uut.connect_all();
    let mut theirs = write_vcd_header(buf.clone(), &uut);
    settle(&mut uut);
    theirs.timestamp(0).unwrap();
    theirs = write_vcd_dump(theirs, &uut);
    for (k, &go) in gos.iter().enumerate() {
        let k = k as u64;
        uut.go.next = go;
        settle(&mut uut);
        uut.clock.next = Clock::from(true);
        settle(&mut uut);
        theirs.timestamp((2 * k + 1) * HALF_PERIOD_PS).unwrap();
        theirs = write_vcd_change(theirs, &uut);
        uut.clock.next = Clock::from(false);
        settle(&mut uut);
        theirs.timestamp((2 * k + 2) * HALF_PERIOD_PS).unwrap();
        theirs = write_vcd_change(theirs, &uut);
    }
    drop(theirs);
    assert_eq!(ours, String::from_utf8(buf.0.take()).unwrap());

    let w = Waveform::parse_str(&ours, "mixed.vcd").unwrap();
    assert_eq!(
        w.signals(),
        [
            "uut.clock",
            "uut.go",
            "uut.status$phase",
            "uut.status$flag",
            "uut.status$len",
            "uut.wide",
            "uut.phase.d",
            "uut.phase.q",
            "uut.phase.clock",
            "uut.len.d",
            "uut.len.q",
            "uut.len.clock"
        ]
    );
    let phase = w.find("status$phase").unwrap();
    assert_eq!(w.width(phase), 0);
    let states: Vec<(u64, String)> = w
        .transitions(phase)
        .iter()
        .map(|(t, v)| (*t, v.bits()))
        .collect();
    assert_eq!(
        states,
        [
            (0, "Idle".into()),
            (5_000, "Busy".into()),
            (35_000, "Done".into()),
            (45_000, "Idle".into()),
            (55_000, "Busy".into())
        ]
    );
    let wide = w.find("wide").unwrap();
    assert_eq!(w.width(wide), 200);
    let at = |t| w.value_at(wide, t).unwrap();
    assert_eq!(
        at(5_000).to_string(),
        "200'h80000000000000000000000000000000000000000000000001"
    );
    assert_eq!(at(5_000).as_u128(), None);
    assert_eq!(at(15_000).words().unwrap()[3], 1 << 7);
    assert_eq!(at(45_000).as_u128(), Some(0));
    assert_transitions(
        &w,
        "status$len",
        &[
            (0, 0),
            (15_000, 1),
            (25_000, 2),
            (35_000, 3),
            (45_000, 0),
            (65_000, 1),
        ],
    )
    .unwrap();
}

#[test]
fn create_makes_the_directory() {
    let dir = tmp("new_dir");
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("deeper").join("x.vcd");
    let uut = new_counter();
    let mut vcd = RustHdlVcd::create(&path, &uut).unwrap();
    vcd.sample(0, &uut).unwrap();
    assert_eq!(vcd.path(), path);
    vcd.finish().unwrap();
    assert!(Waveform::load(&path).unwrap().find("count").is_ok());
}

/// Direct stepping speed with and without a VCD (printed; run with `--release
/// -- --nocapture` for numbers worth quoting).
#[test]
fn stepping_speed() {
    let cycles = if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };
    let enables = enable_pattern(cycles);

    let mut uut = new_counter();
    let start = Instant::now();
    run_counter::<Vec<u8>>(&mut uut, &enables, None);
    let plain = cycles as f64 / start.elapsed().as_secs_f64();

    let path = tmp("speed.vcd");
    let mut uut = new_counter();
    let start = Instant::now();
    let mut vcd = RustHdlVcd::create(&path, &uut).unwrap();
    run_counter(&mut uut, &enables, Some(&mut vcd));
    vcd.finish().unwrap();
    let traced = cycles as f64 / start.elapsed().as_secs_f64();

    // The same through rust-hdl-core's write_vcd_change, for comparison.
    let mut uut = new_counter();
    let start = Instant::now();
    let file = std::io::BufWriter::new(std::fs::File::create(tmp("speed_core.vcd")).unwrap());
    let mut core = write_vcd_header(file, &uut);
    settle(&mut uut);
    core.timestamp(0).unwrap();
    core = write_vcd_dump(core, &uut);
    for (k, &en) in enables.iter().enumerate() {
        let k = k as u64;
        uut.enable.next = en;
        settle(&mut uut);
        uut.clock.next = Clock::from(true);
        settle(&mut uut);
        core.timestamp((2 * k + 1) * HALF_PERIOD_PS).unwrap();
        core = write_vcd_change(core, &uut);
        uut.clock.next = Clock::from(false);
        settle(&mut uut);
        core.timestamp((2 * k + 2) * HALF_PERIOD_PS).unwrap();
        core = write_vcd_change(core, &uut);
    }
    drop(core);
    let core = cycles as f64 / start.elapsed().as_secs_f64();

    let start = Instant::now();
    let w = Waveform::load(&path).unwrap();
    let load = start.elapsed().as_secs_f64();
    assert_eq!(w.rising_edges(w.find("clock").unwrap()).len(), cycles);
    let bytes = std::fs::metadata(&path).unwrap().len();
    println!(
        "counter, {cycles} cycles: direct stepping {plain:.0} cycles/s without VCD, {traced:.0} cycles/s with \
         RustHdlVcd ({bytes} bytes), {core:.0} cycles/s with rust-hdl-core's write_vcd_change; \
         Waveform::load {load:.3} s ({:.0} cycles/s)",
        cycles as f64 / load
    );
}
