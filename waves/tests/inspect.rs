//! `nic waves`' library side (nic_waves::inspect) on small files: a RustHDL VCD written
//! here, Verilator's VCD and FST of the same counter (fixtures/), and broken files.

#[allow(dead_code)] // the Mixed block is for tests/counter.rs
mod common;
use common::*;
use nic_waves::inspect::*;
use nic_waves::{RustHdlVcd, WaveError};
use std::path::{Path, PathBuf};

const CYCLES: usize = 20;
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

/// Verilator's FST of the counter, built once per test run.
fn verilator_fst() -> PathBuf {
    static FST: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    FST.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nic-waves-fst");
        nic_waves::counter_fst::build_counter_fst(&dir).unwrap()
    })
    .clone()
}

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nic-waves-inspect");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The counter stepped by RustHDL with `enables`, into `tmp(name)`.
fn record(name: &str, enables: &[bool]) -> PathBuf {
    let path = tmp(name);
    let mut uut = new_counter();
    let mut vcd = RustHdlVcd::create(&path, &uut).unwrap();
    run_counter(&mut uut, enables, Some(&mut vcd));
    vcd.finish().unwrap();
    path
}

fn open(path: &Path) -> WaveFile {
    WaveFile::open(path).unwrap()
}

fn table(path: &Path, signals: &str, from: &str, to: &str) -> Result<String, WaveError> {
    let file = WaveFile::open(path)?;
    let vars = select(file.header(), &[signals.to_string()])?;
    let mut out = Vec::new();
    write_table(file, &vars, parse_time(from)?, parse_time(to)?, &mut out)?;
    Ok(String::from_utf8(out).unwrap())
}

fn diff_files(a: &Path, b: &Path) -> DiffReport {
    diff(open(a), open(b), &DiffOptions::default()).unwrap()
}

#[test]
fn list_gives_scopes_signals_and_widths() {
    let path = record("list.vcd", &enable_pattern(CYCLES));
    let file = open(&path);
    let h = file.header();
    assert_eq!(h.format, Format::Vcd);
    assert_eq!(h.scopes(), ["uut", "uut.counter"]);
    let widths: Vec<(String, u32)> = h.vars.iter().map(|v| (v.path(), v.width)).collect();
    assert!(widths.contains(&("uut.count".into(), 4)), "{widths:?}");
    assert!(widths.contains(&("uut.counter.q".into(), 4)), "{widths:?}");
    let mut out = Vec::new();
    write_listing(h, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("uut/\n"), "{text}");
    assert!(text.contains("  counter/\n"), "{text}");
    assert!(
        text.contains("count                               4 bits"),
        "{text}"
    );

    // Verilator's FST: ports in TOP and again in TOP.top, marked as the same signal.
    let fst = open(&verilator_fst());
    assert_eq!(fst.header().format, Format::Fst);
    let mut out = Vec::new();
    write_listing(fst.header(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("= TOP.count"), "{text}");
}

#[test]
fn show_prints_one_row_per_change() {
    let path = record("show.vcd", &enable_pattern(CYCLES));
    // `clock` alone would also match counter.clock (another signal in RustHDL).
    let text = table(&path, "uut.clock,enable,count", "30ns", "60ns").unwrap();
    assert_eq!(
        text,
        "time (ps)  clock  enable  count\n\
         \x20   30000  0      1       3\n\
         \x20   35000  1*     0*      3\n\
         \x20   40000  0*     0       3\n\
         \x20   45000  1*     0       3\n\
         \x20   50000  0*     0       3\n\
         \x20   55000  1*     1*      4*\n\
         \x20   60000  0*     1       4\n"
    );
    // A glob; buses in hex.
    let text = table(&path, "count", "150ns", "160ns").unwrap();
    assert_eq!(text, "time (ps)  count\n   150000  c\n   155000  d*\n");
}

#[test]
fn fst_and_vcd_from_verilator_show_the_same_window() {
    let vcd = table(
        &fixture("counter_verilator.vcd.expect"),
        "clock,count,counter.q",
        "0",
        "200ns",
    )
    .unwrap();
    let fst = table(&verilator_fst(), "clock,count,counter.q", "0", "200ns").unwrap();
    assert_eq!(vcd, fst);
    assert_eq!(vcd.lines().count(), 1 + 41, "{vcd}");
    // A window near the end of the FST: the value at its start comes from the block's frame.
    let late = table(&verilator_fst(), "count", "182ns", "200ns").unwrap();
    assert_eq!(
        late,
        "time (ps)  count\n   182000  f\n   185000  0*\n   195000  1*\n"
    );
}

#[test]
fn diff_passes_across_simulators_and_formats() {
    let rusthdl = record("diff_same.vcd", &enable_pattern(CYCLES));
    for other in [fixture("counter_verilator.vcd.expect"), verilator_fst()] {
        let report = diff_files(&rusthdl, &other);
        assert!(report.first.is_none(), "{report}");
        // clock, enable, count, counter.d, counter.q, counter.clock
        assert_eq!(report.compared, 6, "{report}");
        assert!(
            report.only_a.is_empty() && report.only_b.is_empty(),
            "{report}"
        );
        assert!(
            report
                .to_string()
                .contains("same: no difference up to 200 ns"),
            "{report}"
        );
    }
}

#[test]
fn diff_finds_a_planted_difference() {
    // Enable off in cycle 12 as well: count stops one edge early from 125 ns on.
    let mut enables = enable_pattern(CYCLES);
    enables[12] = false;
    let changed = record("diff_changed.vcd", &enables);
    let report = diff_files(&changed, &verilator_fst());
    let d = report.first.as_ref().expect("a difference");
    assert_eq!(d.time, 125_000_000, "{report}");
    // count and counter.d both differ from there; the first by name is reported.
    assert_eq!(d.signal, "count", "{report}");
    assert_eq!(
        (d.a_name.as_str(), d.b_name.as_str()),
        ("uut.count", "TOP.count")
    );
    assert!(
        report.to_string().contains(
            "first difference at 125 ns in `count`:\n  a: uut.count = 9\n  b: TOP.count = a"
        ),
        "{report}"
    );

    // One value changed by hand in Verilator's file: `count` at 100 ns.
    let text = std::fs::read_to_string(fixture("counter_verilator.vcd.expect")).unwrap();
    let at = text.find("#105000").unwrap();
    let mut planted = text[..at].to_string();
    planted.push_str("b1111 %\n");
    planted.push_str(&text[at..]);
    let path = tmp("planted.vcd");
    std::fs::write(&path, planted).unwrap();
    let report = diff_files(&record("diff_base.vcd", &enable_pattern(CYCLES)), &path);
    let d = report.first.as_ref().expect("a difference");
    assert_eq!(
        (d.time, d.signal.as_str()),
        (100_000_000, "count"),
        "{report}"
    );
    assert_eq!(d.a.as_ref().and_then(|v| v.as_u64()), Some(7));
    assert_eq!(d.b.as_ref().and_then(|v| v.as_u64()), Some(15));

    // Ignoring the time before the planted change does not hide it when it lasts.
    let options = DiffOptions {
        from: 102_000_000,
        ..Default::default()
    };
    let report = diff(
        open(&record("diff_base2.vcd", &enable_pattern(CYCLES))),
        open(&path),
        &options,
    )
    .unwrap();
    assert_eq!(report.first.map(|d| d.time), Some(102_000_000));
}

/// The same file with `$timescale` in another unit: times scaled, nothing else.
fn rescale(text: &str, unit: &str, factor_num: u64, factor_den: u64) -> String {
    text.lines()
        .map(|l| {
            if let Some(t) = l.strip_prefix('#') {
                format!("#{}", t.parse::<u64>().unwrap() * factor_num / factor_den)
            } else if l.starts_with("$timescale") {
                format!("$timescale {unit} $end")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn diff_compares_in_a_common_unit() {
    let text = std::fs::read_to_string(fixture("counter_verilator.vcd.expect")).unwrap();
    let ns = tmp("counter_ns.vcd");
    std::fs::write(&ns, rescale(&text, "1ns", 1, 1000)).unwrap();
    let fs = tmp("counter_100fs.vcd");
    std::fs::write(&fs, rescale(&text, "100fs", 10, 1)).unwrap();
    assert_eq!(open(&ns).header().fs_per_tick, 1_000_000);
    assert_eq!(open(&fs).header().fs_per_tick, 100);
    let rusthdl = record("diff_units.vcd", &enable_pattern(CYCLES));
    for other in [&ns, &fs] {
        let report = diff_files(&rusthdl, other);
        assert!(report.first.is_none(), "{report}");
    }
    // And a 1 ns file shifted by one tick differs at that tick.
    let shifted = tmp("counter_ns_shifted.vcd");
    std::fs::write(
        &shifted,
        rescale(&text, "1ns", 1, 1000).replace("#25\n", "#26\n"),
    )
    .unwrap();
    let report = diff_files(&ns, &shifted);
    assert_eq!(report.first.map(|d| d.time), Some(25_000_000));
}

/// Verilator's counter with every change of `enable` (id `$`) recorded 1 ns before the
/// clock edge it belongs to instead of at the edge.
fn enable_early() -> PathBuf {
    let text = std::fs::read_to_string(fixture("counter_verilator.vcd.expect")).unwrap();
    let mut out = String::new();
    let mut block: Vec<&str> = Vec::new();
    let mut time: Option<u64> = None;
    let flush = |out: &mut String, time: Option<u64>, block: &[&str]| {
        let (early, rest): (Vec<&str>, Vec<&str>) = block
            .iter()
            .partition(|l| time.is_some_and(|t| t > 0) && (**l == "0$" || **l == "1$"));
        if let Some(t) = time {
            if !early.is_empty() {
                out.push_str(&format!("#{}\n{}\n", t - 1000, early.join("\n")));
            }
            out.push_str(&format!("#{t}\n"));
        }
        for l in rest {
            out.push_str(l);
            out.push('\n');
        }
    };
    for line in text.lines() {
        if let Some(t) = line.strip_prefix('#') {
            flush(&mut out, time, &block);
            block.clear();
            time = Some(t.parse().unwrap());
        } else {
            block.push(line);
        }
    }
    flush(&mut out, time, &block);
    let path = tmp("enable_early.vcd");
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn diff_at_clock_edges_ignores_when_in_the_cycle_a_change_was_recorded() {
    let early = enable_early();
    let rusthdl = record("diff_clock.vcd", &enable_pattern(CYCLES));
    // Exactly in time: enable differs 1 ns before the first edge.
    let report = diff_files(&rusthdl, &early);
    let d = report.first.as_ref().expect("a difference");
    assert_eq!(
        (d.time, d.signal.as_str()),
        (4_000_000, "enable"),
        "{report}"
    );
    // At the rising edges of the clock: the same.
    let at_edges = DiffOptions {
        clock: Some("clock".into()),
        ..Default::default()
    };
    let report = diff(open(&rusthdl), open(&early), &at_edges).unwrap();
    assert!(!report.differs(), "{report}");
    assert_eq!(report.edges, Some([20, 20]));
    assert!(
        report
            .to_string()
            .contains("rising edges: 20 in a, 20 in b"),
        "{report}"
    );
    // A changed value is found at its cycle; a shorter run differs in its cycle count.
    let mut enables = enable_pattern(CYCLES);
    enables[12] = false;
    let changed = record("diff_clock_changed.vcd", &enables);
    let report = diff(open(&changed), open(&early), &at_edges).unwrap();
    let d = report.first.as_ref().expect("a difference");
    assert_eq!(
        (d.cycle, d.signal.as_str()),
        (Some((12, 125_000_000)), "count"),
        "{report}"
    );
    assert!(
        report
            .to_string()
            .contains("at 125 ns (cycle 12; b's edge at 125 ns) in `count`"),
        "{report}"
    );
    let short = record("diff_clock_short.vcd", &enable_pattern(CYCLES - 1));
    let report = diff(open(&short), open(&early), &at_edges).unwrap();
    assert!(report.first.is_none() && report.differs(), "{report}");
    assert!(
        report.to_string().contains("a has 19 cycles and b 20"),
        "{report}"
    );
    // A clock name that names several signals is refused.
    let e = diff(
        open(&short),
        open(&early),
        &DiffOptions {
            clock: Some("c*".into()),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("`c*` is ambiguous"), "{e}");
}

#[test]
fn render_draws_bits_and_buses_with_values() {
    let path = record("render.vcd", &enable_pattern(CYCLES));
    let file = open(&path);
    let vars = select(file.header(), &["clock,count".to_string()]).unwrap();
    let svg = render_svg(file, &vars, 0, 200_000_000, &RenderOptions::default()).unwrap();
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{svg}"
    );
    assert!(svg.trim_end().ends_with("</svg>"));
    // Labels without the root scope, one bus segment per count value.
    assert!(svg.contains(">clock</text>") && svg.contains(">count</text>"));
    assert_eq!(svg.matches("<polygon").count(), 18, "0..f, 0, 1");
    for v in ["3", "a", "f"] {
        assert!(
            svg.contains(&format!(">{v}</text>")),
            "value {v} written: {svg}"
        );
    }
    // 400 clock edges in 200 pixels: they merge into grey blocks.
    let file = open(&record("render_long.vcd", &enable_pattern(200)));
    let vars = select(file.header(), &["clock,count".to_string()]).unwrap();
    let options = RenderOptions {
        width_px: 300,
        title: Some("narrow".into()),
    };
    let svg = render_svg(file, &vars, 0, 2_000_000_000, &options).unwrap();
    assert!(svg.contains("changes too close to draw"), "{svg}");
    assert!(svg.contains(">narrow</text>"));
    let png = svg_to_png(&svg, Path::new("narrow.png"));
    if let Ok(bytes) = png {
        assert_eq!(&bytes[1..4], b"PNG");
    }
}

#[test]
fn gtkw_groups_ports_and_blocks() {
    let file = open(&fixture("counter_verilator.vcd.expect"));
    let groups = nic_groups(file.header());
    let titles: Vec<&str> = groups.iter().map(|g| g.title.as_str()).collect();
    assert_eq!(titles, ["Clock and reset", "Other ports", "Top registers"]);
    let gtkw = write_gtkw(file.header(), &groups, Path::new("/w/counter.vcd"));
    assert!(gtkw.contains("[dumpfile] \"/w/counter.vcd\"\n"), "{gtkw}");
    assert!(
        gtkw.contains("@800200\n-Clock and reset\n@28\nTOP.clock\n@1000200\n-Clock and reset\n"),
        "{gtkw}"
    );
    assert!(gtkw.contains("TOP.count[3:0]\n"), "{gtkw}");
    // Every group that opens closes.
    let opens = gtkw
        .lines()
        .filter(|l| *l == "@800200" || *l == "@c00200")
        .count();
    let closes = gtkw
        .lines()
        .filter(|l| *l == "@1000200" || *l == "@1401200")
        .count();
    assert_eq!(opens, closes, "{gtkw}");
    // The block's register in its closed sub-group.
    assert!(
        gtkw.contains("@c00200\n-Top registers\n@22\nTOP.top.counter$q[3:0]\n"),
        "{gtkw}"
    );
    let sucl = write_surfer(&groups);
    assert!(
        sucl.starts_with("divider_add Clock and reset\nvariable_add TOP.clock\n"),
        "{sucl}"
    );
}

fn err(r: Result<impl std::fmt::Debug, WaveError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn bad_files_get_clear_errors() {
    let text = tmp("notes.txt");
    std::fs::write(&text, "hello, not a waveform\n").unwrap();
    let e = err(WaveFile::open(&text));
    assert!(
        e.contains("notes.txt: not a waveform: neither VCD") && e.contains("\"hello, not a wav\""),
        "{e}"
    );

    let empty = tmp("empty.vcd");
    std::fs::write(&empty, "").unwrap();
    assert!(err(WaveFile::open(&empty)).contains("the file is empty"));

    let e = err(WaveFile::open(Path::new("/nonexistent/w.vcd")));
    assert!(e.starts_with("/nonexistent/w.vcd: No such file"), "{e}");
    let e = err(WaveFile::open(Path::new(env!("CARGO_TARGET_TMPDIR"))));
    assert!(e.contains("is a directory"), "{e}");

    // A VCD cut in the middle of a value change.
    let full = std::fs::read_to_string(fixture("counter_verilator.vcd.expect")).unwrap();
    let cut = full.find("b0111 %").unwrap() + 3;
    let truncated = tmp("truncated.vcd");
    std::fs::write(&truncated, &full[..cut]).unwrap();
    let e = err(table(&truncated, "count", "0", "1us"));
    assert!(
        e.contains("truncated.vcd:") && e.contains("file ends inside a command (truncated?)"),
        "{e}"
    );
    // ... and in its header.
    let cut_header = tmp("truncated_header.vcd");
    std::fs::write(
        &cut_header,
        &full[..full.find("$enddefinitions").unwrap() + 5],
    )
    .unwrap();
    let e = err(WaveFile::open(&cut_header));
    assert!(e.starts_with(&format!("{}:", cut_header.display())), "{e}");

    // Garbage in the body.
    let garbage = tmp("garbage.vcd");
    std::fs::write(&garbage, full.replace("#15000", "#15000\n@@@ junk")).unwrap();
    let e = err(table(&garbage, "count", "0", "1us"));
    assert!(e.starts_with(&format!("{}:", garbage.display())), "{e}");

    // An FST cut in half.
    let fst = std::fs::read(verilator_fst()).unwrap();
    let half = tmp("half.fst");
    std::fs::write(&half, &fst[..fst.len() / 2]).unwrap();
    let e = err(table(&half, "count", "0", "1us"));
    assert!(e.contains("half.fst"), "{e}");
    // FST bytes damaged after the header block.
    let mut damaged = fst.clone();
    for b in damaged[330..400].iter_mut() {
        *b = 0xff;
    }
    let broken = tmp("damaged.fst");
    std::fs::write(&broken, &damaged).unwrap();
    let e = err(table(&broken, "count", "0", "1us"));
    assert!(
        e.contains("damaged.fst: FST block at byte 330 (type 255) claims"),
        "{e}"
    );
    assert!(e.contains("truncated or damaged"), "{e}");
}

#[test]
fn bad_arguments_get_clear_errors() {
    let path = record("args.vcd", &enable_pattern(CYCLES));
    let e = err(table(&path, "cnt", "0", "1us"));
    assert!(e.contains("no signal matches `cnt`"), "{e}");
    let e = err(table(&path, "coun", "0", "1us"));
    assert!(
        e.contains("no signal matches `coun`; candidates: uut.count"),
        "{e}"
    );
    let e = err(table(&path, "count", "60ns", "50ns"));
    assert_eq!(e, "--from 60 ns is after --to 50 ns: the window is empty");
    let e = err(table(&path, "count", "1us", "2us"));
    assert!(
        e.contains("empty window: it starts at 1 us but the file ends at 200 ns"),
        "{e}"
    );
    let e = err(table(&path, "count", "5 parsecs", "2us"));
    assert!(
        e.contains("time `5 parsecs`: unknown unit `parsecs`"),
        "{e}"
    );
    let file = open(&path);
    let vars = select(file.header(), &["count".to_string()]).unwrap();
    let e = err(render_svg(file, &vars, 10, 10, &RenderOptions::default()));
    assert!(e.contains("a diagram needs a window of some length"), "{e}");
    let e = err(diff(
        open(&path),
        open(&verilator_fst()),
        &DiffOptions {
            signals: vec!["nothing_like_it".into()],
            ..Default::default()
        },
    ));
    assert!(e.contains("no signal matches `nothing_like_it`"), "{e}");
}

/// A pulse too short to draw is a narrow grey block, and the level it leaves is drawn after
/// it (not a grey block reaching to the next change or the end of the window).
#[test]
fn render_a_short_pulse_then_the_level_it_leaves() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("render_pulse.vcd");
    std::fs::write(
        &path,
        "$timescale 1ps $end\n$scope module top $end\n$var wire 1 ! mark $end\n$upscope $end\n\
         $enddefinitions $end\n#0\n0!\n#1000\n1!\n#1010\n0!\n#100000\n0!\n",
    )
    .unwrap();
    let file = open(&path);
    let vars = select(file.header(), &["mark".to_string()]).unwrap();
    let options = RenderOptions {
        width_px: 400,
        title: None,
    };
    let svg = render_svg(file, &vars, 0, 100_000_000, &options).unwrap();
    let rect = svg
        .lines()
        .find(|l| l.contains("changes too close to draw"))
        .expect("the pulse is a busy block");
    let width: f64 = rect
        .split("width=\"")
        .nth(1)
        .and_then(|w| w.split('"').next())
        .and_then(|w| w.parse().ok())
        .expect("a width");
    assert!(
        width <= 2.0 * MIN_SEGMENT_PX,
        "the block is {width} px: {rect}"
    );
    // After the block: the low level, drawn as a line to the end of the window.
    let lines_after = svg
        .lines()
        .skip_while(|l| !l.contains("changes too close to draw"))
        .filter(|l| l.starts_with("<line") && l.contains("stroke=\"#1a7f37\""))
        .count();
    assert!(lines_after >= 1, "no level after the block: {svg}");
}
