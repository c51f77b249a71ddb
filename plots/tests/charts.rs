//! Each chart is written, parses as XML, and names its series and axes; bad JSON gives a
//! clear error naming the file. The rejoin fixture is `nic bench rejoin`'s result at
//! commit 604499e (docs/measurements.md), its tuning candidates cut to two per search.

use nic_plots::{bench, load_json, synth, BarChart, BarSeries, ChartError, Scale, Spread};
use nic_synth::{BlockShare, SynthReport};
use nic_testbench::bench::DatapathBench;
use nic_testbench::nic_bench::{Goodput, NicBench};
use nic_testbench::pools_bench::PoolsBenchRow;
use nic_testbench::regcache_bench::Spread as BenchSpread;
use nic_testbench::rejoin_bench::BenchResult;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A fresh folder per test under target/ (never the shared temp dir).
fn out_dir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/plots-tests")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The SVG's text, every `<text>` node joined by newlines; panics if it is not XML or
/// resvg cannot render it (the PNG is left beside the SVG to look at).
fn svg_text(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = roxmltree::Document::parse(&text)
        .unwrap_or_else(|e| panic!("{} is not XML: {e}", path.display()));
    let png = path.with_extension("png");
    match nic_waves::inspect::svg_to_png(&text, &png) {
        Ok(bytes) => std::fs::write(&png, bytes).unwrap(),
        // Without a system font resvg could only draw the lines; the XML check stands.
        Err(e) if e.to_string().contains("no system font") => {}
        Err(e) => panic!("{} does not render: {e}", path.display()),
    }
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_has(path: &Path, wanted: &[&str]) {
    let text = svg_text(path);
    for w in wanted {
        assert!(
            text.contains(w),
            "{} lacks {w:?}; its text:\n{text}",
            path.display()
        );
    }
}

fn datapath() -> DatapathBench {
    DatapathBench {
        cycles: 25_000,
        verilator_cycles_per_s: 13_100_000.0,
        rusthdl_cycles_per_s: 151_000.0,
        speedup: 86.8,
        goodput_ratio: 1.0,
        format_limit: 0.94,
        scoreboard: Default::default(),
    }
}

fn nic(sizes: &[u32]) -> NicBench {
    NicBench {
        recorded_cycles: 60_000,
        rusthdl_replayed_cycles: 6_000,
        verilator_cycles_per_s: 1_900_000.0,
        rusthdl_cycles_per_s: 9_000.0,
        speedup: 211.0,
        system_nic_cycles_per_s: 700_000.0,
        goodput_bytes: 393_216,
        goodput_cycles: 55_000,
        goodput_ratio: 0.96,
        format_limit: 0.93,
        sizes: sizes
            .iter()
            .map(|&b| Goodput {
                message_bytes: b,
                messages: 24,
                bytes: 24 * b as u64,
                cycles: 24 * (b as u64 / 7 + 12),
                ratio: 0.9,
                format_limit: 0.9,
            })
            .collect(),
    }
}

fn pools() -> Vec<PoolsBenchRow> {
    let row = |mode: &str, bytes: u32, g: f64| PoolsBenchRow {
        mode: mode.into(),
        packet_bytes: bytes,
        goodput: BenchSpread {
            min: g * 0.9,
            median: g,
            max: g * 1.05,
        },
        by_idata: 10,
        by_message: 0,
    };
    vec![
        row("pools", 256, 2.1),
        row("send", 256, 1.7),
        row("pools", 1000, 4.4),
        row("send", 1000, 3.0),
        row("pools", 4096, 6.3),
    ]
}

#[test]
fn speed_chart_names_backends_and_axis() {
    let dir = out_dir("speed");
    let paths = bench::write_speed(Some(&datapath()), Some(&nic(&[])), &dir).unwrap();
    assert_eq!(paths, vec![dir.join(bench::SPEED_SVG)]);
    assert_has(
        &paths[0],
        &[
            "Simulation speed per backend",
            "cycles per second (log scale)",
            "Verilator",
            "RustHDL stepping",
            "co-simulation",
            "cell datapath (25000 cycles)",
            "NIC top (60000 cycles)",
            "13.1 M",
            "151 k",
        ],
    );
}

#[test]
fn nic_size_sweep_draws_goodput_and_message_rate() {
    let dir = out_dir("nic-sizes");
    let paths = bench::write_speed(None, Some(&nic(&[64, 256, 4096, 65536])), &dir).unwrap();
    assert_eq!(paths.len(), 3, "{paths:?}");
    for (p, title) in paths[1..].iter().zip(["Goodput", "Message rate"]) {
        assert_has(
            p,
            &[
                title,
                "message size, bytes (log scale)",
                "RDMA WRITE stream, one QP (bench nic --sizes)",
                "64 Ki",
                "256",
            ],
        );
    }
    assert_has(&paths[1], &["payload bytes per cycle"]);
    assert_has(&paths[2], &["messages per 1000 cycles (log scale)"]);
}

#[test]
fn pools_rows_draw_both_modes() {
    let dir = out_dir("pools");
    let paths = bench::write_sizes(Some(&pools()), None, &dir).unwrap();
    for p in &paths {
        assert_has(
            p,
            &[
                "buffer pools: RDMA WRITE + immediate (bench pools)",
                "SendData: SEND / RECV (bench pools)",
                "4 Ki",
            ],
        );
    }
}

#[test]
fn rejoin_charts_from_the_bench_json() {
    let b: BenchResult =
        load_json(&fixture("rejoin.json"), "the JSON of `nic bench rejoin`").unwrap();
    let dir = out_dir("rejoin");
    let paths = bench::write_rejoin(&b, &dir).unwrap();
    assert_has(
        &paths[0],
        &[
            "Rejoin latency",
            "hosts in the cluster (log scale)",
            "power-on to usable by all peers, cycles (log scale)",
            "protocol",
            "heartbeat",
            "heartbeat+inc",
            "2",
            "64",
        ],
    );
    assert_has(
        &paths[1],
        &[
            "Stale writes landed",
            "stale writes per run",
            "2 hosts",
            "64 hosts",
            "protocol",
            "naive",
        ],
    );
    // The safe modes have a latency at every size of this run; the naive baseline's runs
    // fail (stale accesses) and have none, so it has no line and no legend entry.
    let chart = bench::rejoin_latency_chart(&b).unwrap();
    let points: Vec<(&str, usize)> = chart
        .series
        .iter()
        .map(|s| (s.name.as_str(), s.points.len()))
        .collect();
    assert_eq!(
        points,
        [
            ("protocol", 6),
            ("heartbeat", 6),
            ("heartbeat+inc", 6),
            ("naive (unsafe: stale accesses)", 0)
        ]
    );
    assert!(!svg_text(&paths[0]).contains("naive"));
    // The protocol lands no stale write; the naive baseline does at some size.
    let stale = bench::rejoin_stale_chart(&b).unwrap();
    let max = |name: &str| {
        stale
            .series
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .values
            .iter()
            .flatten()
            .map(|v| v.max)
            .fold(0.0, f64::max)
    };
    assert_eq!(max("protocol"), 0.0);
    assert!(max("naive") > 0.0);
}

fn synth_report(module: &str, luts: u64, fmax: f64, misfit: bool) -> SynthReport {
    SynthReport {
        module: module.into(),
        luts,
        flip_flops: luts / 2,
        block_rams: luts / 500,
        carries: 0,
        fmax_mhz: if misfit { 0.0 } else { fmax },
        target_mhz: 100.0,
        meets_target: fmax >= 100.0,
        log_dir: PathBuf::from("synth/out/default/run-0").join(module),
        logic_cells: None,
        does_not_fit: misfit.then(|| "ICESTORM_LC 20287/7680; Unable to place cell".into()),
        critical_path: None,
        device: nic_synth::Device::Hx8k,
        capacity: nic_synth::Device::Hx8k.capacity(),
        lut_rams: 0,
    }
}

#[test]
fn synth_charts_show_capacity_and_target() {
    let reports = vec![
        synth_report("nic_crc32", 530, 121.5, false),
        synth_report("nic_send_queue_engine", 2799, 50.8, false),
        synth_report("nic_top", 16383, 0.0, true),
    ];
    let dir = out_dir("synth");
    let paths = synth::write_synth(&reports, &dir).unwrap();
    assert_has(
        &paths[0],
        &[
            "Resources per block",
            "share of the iCE40 HX8K ct256, percent",
            "LUTs (of 7680)",
            "flip-flops (of 7680)",
            "RAM4K block RAMs (of 32)",
            "device capacity (100%)",
            "nic_send_queue_engine",
            "213.3%",
        ],
    );
    // A report for an ECP5 part is scaled to that part.
    let ecp5: Vec<SynthReport> = reports
        .iter()
        .cloned()
        .map(|r| SynthReport {
            device: nic_synth::Device::Ecp5_85,
            capacity: nic_synth::Device::Ecp5_85.capacity(),
            ..r
        })
        .collect();
    let ecp5_paths = synth::write_synth(&ecp5, &out_dir("synth-ecp5")).unwrap();
    assert_has(
        &ecp5_paths[0],
        &["share of the LFE5U-85F", "LUTs (of 83640)", "(of 208)"],
    );
    assert_has(
        &paths[1],
        &[
            "Fmax per block",
            "Fmax, MHz",
            "target 100.0 MHz",
            "121.5 MHz",
            "does not fit: ICESTORM_LC 20287/7680",
        ],
    );
}

/// `report.json` of `nic synth --block crc32_step` (yosys 0.23, nextpnr-ice40 0.4), read
/// through the same path the CLI uses.
#[test]
fn synth_charts_from_a_real_report() {
    let reports: Vec<SynthReport> =
        load_json(&fixture("synth-report.json"), "`nic synth`'s report.json").unwrap();
    assert!(!reports.is_empty());
    let dir = out_dir("synth-real");
    let paths = synth::write_synth(&reports, &dir).unwrap();
    assert_has(
        &paths[0],
        &[reports[0].module.as_str(), "device capacity (100%)"],
    );
    assert_has(&paths[1], &[reports[0].module.as_str(), "target 100.0 MHz"]);
}

#[test]
fn breakdown_chart_names_instances() {
    let rows = vec![
        BlockShare {
            instance: "sq".into(),
            module: "nic_top__sq".into(),
            luts: 2800,
            flip_flops: 1400,
            block_rams: 12,
            carries: 600,
            lut_rams: 0,
        },
        BlockShare {
            instance: "(top glue)".into(),
            module: "nic_top".into(),
            luts: 100,
            flip_flops: 10,
            block_rams: 0,
            carries: 0,
            lut_rams: 0,
        },
    ];
    let dir = out_dir("breakdown");
    let path = dir.join(synth::RESOURCES_SVG);
    synth::breakdown_chart("nic_top", &rows, &synth::Device::hx8k())
        .unwrap()
        .write_svg(&path)
        .unwrap();
    assert_has(&path, &["inside nic_top", "sq", "(top glue)", "36.5%"]);
}

#[test]
fn bad_json_is_a_clear_error() {
    let dir = out_dir("bad-json");
    std::fs::create_dir_all(&dir).unwrap();
    let what = "the JSON of `nic bench rejoin`";
    let empty = dir.join("empty.json");
    std::fs::write(&empty, "  \n").unwrap();
    let e = load_json::<BenchResult>(&empty, what).unwrap_err();
    assert!(matches!(e, ChartError::EmptyFile { .. }));
    assert_eq!(
        e.to_string(),
        format!("{}: is empty; expected {what}", empty.display())
    );

    let truncated = dir.join("truncated.json");
    let full = std::fs::read_to_string(fixture("rejoin.json")).unwrap();
    std::fs::write(&truncated, &full[..full.len() / 2]).unwrap();
    let e = load_json::<BenchResult>(&truncated, what)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("{}: not {what}: ", truncated.display())),
        "{e}"
    );
    assert!(e.contains("EOF"), "{e}");

    let other = dir.join("pools.json");
    std::fs::write(&other, "[{\"mode\": \"pools\"}]").unwrap();
    let e = load_json::<BenchResult>(&other, what)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not the JSON of `nic bench rejoin`"), "{e}");

    let missing = dir.join("missing.json");
    let e = load_json::<BenchResult>(&missing, what)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with(&missing.display().to_string()), "{e}");
}

#[test]
fn nothing_to_draw_is_an_error_not_an_empty_picture() {
    let mut b: BenchResult = load_json(&fixture("rejoin.json"), "rejoin").unwrap();
    b.sizes.clear();
    let dir = out_dir("nothing");
    let e = bench::write_rejoin(&b, &dir).unwrap_err().to_string();
    assert_eq!(e, "nothing to draw: the rejoin result has no cluster sizes");
    assert!(!dir.join(bench::REJOIN_LATENCY_SVG).exists());

    let e = bench::write_sizes(None, Some(&nic(&[])), &dir)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no message sizes"), "{e}");
    let e = synth::write_synth(&[], &dir).unwrap_err().to_string();
    assert_eq!(e, "nothing to draw: the synthesis report has no blocks");

    let ragged = BarChart {
        title: "ragged".into(),
        value_label: "x".into(),
        scale: Scale::Linear,
        rows: vec!["a".into(), "b".into()],
        series: vec![BarSeries {
            name: "s".into(),
            values: vec![Some(Spread::one(1.0))],
            notes: vec![None],
        }],
        reference: None,
        value_format: nic_plots::draw::number,
    };
    let e = ragged
        .write_svg(&dir.join("r.svg"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("series s has 1 values for 2 rows"), "{e}");
}

/// A division by a zero time (an infinite rate) or a zero on a log axis draws no bar or
/// point; the chart is still written.
#[test]
fn values_off_the_axis_are_left_out() {
    let mut d = datapath();
    d.rusthdl_cycles_per_s = f64::INFINITY;
    d.verilator_cycles_per_s = 0.0;
    let dir = out_dir("off-axis");
    let paths = bench::write_speed(Some(&d), Some(&nic(&[64])), &dir).unwrap();
    let text = svg_text(&paths[0]);
    assert!(!text.contains("inf"), "{text}");
    let mut g = nic(&[64, 256]);
    g.sizes[1].cycles = 0;
    g.sizes[0].bytes = 0;
    let e = bench::write_sizes(None, Some(&g), &dir)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no points to draw"), "{e}");
}

/// `nic bench nic`'s JSON from before the size sweep (no `sizes`) still reads and draws.
#[test]
fn nic_json_without_a_size_sweep_reads() {
    let mut v = serde_json::to_value(nic(&[])).unwrap();
    v.as_object_mut().unwrap().remove("sizes");
    let dir = out_dir("old-nic-json");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("nic.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let n: NicBench = load_json(&path, "the JSON of `nic bench nic`").unwrap();
    assert!(n.sizes.is_empty());
    let paths = bench::write_speed(None, Some(&n), &dir).unwrap();
    assert_eq!(paths, vec![dir.join(bench::SPEED_SVG)]);
}

/// The capacity line and percentages follow the device the chart is given.
#[test]
fn resources_scale_to_the_device_given() {
    let device = synth::Device {
        name: "a part of 1000 LUTs".into(),
        luts: 1000,
        flip_flops: 2000,
        block_rams: 10,
        block_ram_name: "BRAM".into(),
    };
    let chart =
        synth::resources_chart(&[synth_report("nic_x", 500, 120.0, false)], &device).unwrap();
    let medians: Vec<f64> = chart
        .series
        .iter()
        .map(|s| s.values[0].unwrap().median)
        .collect();
    // 500 LUTs, 250 flip-flops, 1 block RAM.
    assert_eq!(medians, [50.0, 12.5, 10.0]);
    let dir = out_dir("device");
    let path = dir.join(synth::RESOURCES_SVG);
    chart.write_svg(&path).unwrap();
    assert_has(
        &path,
        &[
            "a part of 1000 LUTs",
            "LUTs (of 1000)",
            "BRAM block RAMs (of 10)",
            "50.0%",
        ],
    );
}
