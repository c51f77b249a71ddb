//! The `nic` command line, run as a user would.

use std::path::PathBuf;
use std::process::{Command, Output};

fn nic(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nic"))
        .args(args)
        .output()
        .expect("run nic")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn every_subcommand_has_help() {
    for cmd in [
        vec!["--help"],
        vec!["verilog", "--help"],
        vec!["lint", "--help"],
        vec!["synth", "--help"],
        vec!["cell", "encode", "--help"],
        vec!["cell", "decode", "--help"],
        vec!["sim", "datapath", "--help"],
        vec!["agree", "--help"],
        vec!["bench", "datapath", "--help"],
        vec!["bench", "nic", "--help"],
        vec!["bench", "rejoin", "--help"],
        vec!["bench", "pools", "--help"],
        vec!["bench", "regcache", "--help"],
        vec!["plot", "--help"],
        vec!["plot", "rejoin", "--help"],
        vec!["measurements", "rejoin", "--help"],
        vec!["measurements", "synth", "--help"],
        vec!["measurements", "all", "--help"],
        vec!["check", "rejoin", "--help"],
        vec!["flow", "--help"],
        vec!["soak", "--help"],
        vec!["waves", "--help"],
        vec!["waves", "show", "--help"],
        vec!["waves", "diff", "--help"],
        vec!["waves", "render", "--help"],
        vec!["waves", "gtkw", "--help"],
    ] {
        let o = nic(&cmd);
        assert!(o.status.success(), "{cmd:?}: {}", text(&o));
        assert!(text(&o).contains("Usage"), "{cmd:?}");
    }
}

#[test]
fn encode_then_decode_round_trips() {
    let dir = scratch("cli_roundtrip");
    let o = nic(&[
        "cell",
        "encode",
        "--opcode",
        "RDMA_WRITE_IMMEDIATE",
        "--vaddr",
        "0x1000",
        "--stag",
        "0x4201",
        "--immediate",
        "0xabcd",
        "--payload-len",
        "600",
        "--src-qp",
        "9",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let cells = dir.join("cells.txt");
    std::fs::write(&cells, &o.stdout).unwrap();
    let d = nic(&["cell", "decode", cells.to_str().unwrap()]);
    let out = text(&d);
    assert!(d.status.success(), "{out}");
    assert_eq!(out.matches("cell CRC").count(), 3, "{out}");
    assert!(
        out.contains("RETH: vaddr 0x0000000000001000 stag 0x00004201"),
        "{out}"
    );
    assert!(out.contains("immediate 0x0000abcd"), "{out}");
    assert!(
        out.contains("message complete: 600 bytes, packet CRC ok"),
        "{out}"
    );
}

#[test]
fn decode_names_the_field_and_offset_that_is_wrong() {
    let dir = scratch("cli_bad_cells");
    let o = nic(&["cell", "encode", "--payload-len", "40", "--bytes"]);
    let good = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .to_string();
    // Flip a payload bit: the cell CRC (at byte offset 24 + 40 + 8 = 72) no longer matches.
    let mut bad: Vec<char> = good.chars().collect();
    bad[2 * 30] = if bad[2 * 30] == '0' { '1' } else { '0' };
    let bad: String = bad.into_iter().collect();
    let truncated = &good[..good.len() - 16];
    let path = dir.join("bad.txt");
    std::fs::write(&path, format!("{bad}\n{truncated}\nnot hex at all\n")).unwrap();
    let d = nic(&["cell", "decode", "--bytes", path.to_str().unwrap()]);
    let out = text(&d);
    assert!(!d.status.success(), "{out}");
    assert!(
        out.contains("Crc error in cell CRC at byte offset 72"),
        "{out}"
    );
    assert!(
        out.contains("Length error in cell length at byte offset 2: truncated cell"),
        "{out}"
    );
    assert!(out.contains("line 3): malformed input"), "{out}");
    assert!(!out.contains("panicked"), "{out}");
    // Hex with a character of several bytes in it.
    std::fs::write(&path, "a\u{e9}0\n").unwrap();
    let d = nic(&["cell", "decode", "--bytes", path.to_str().unwrap()]);
    let out = text(&d);
    assert!(!d.status.success(), "{out}");
    assert!(out.contains("line 1): malformed input"), "{out}");
    assert!(!out.contains("panicked"), "{out}");
}

/// A message whose LAST cell never comes is an error naming the message, not "ok".
#[test]
fn decode_refuses_a_message_cut_off_before_its_last_cell() {
    let dir = scratch("cli_cut_message");
    let o = nic(&[
        "cell",
        "encode",
        "--opcode",
        "RDMA_WRITE",
        "--psn",
        "18",
        "--payload-len",
        "600",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let full = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    assert_eq!(lines.len(), 4, "a comment and three cells: {full}");
    let path = dir.join("cut.txt");
    std::fs::write(&path, lines[..3].join("\n")).unwrap();
    let d = nic(&["cell", "decode", path.to_str().unwrap()]);
    let out = text(&d);
    assert!(!d.status.success(), "{out}");
    assert!(
        out.contains("message ends after cell 1 of PSN 0x12 without a LAST cell"),
        "{out}"
    );
    assert!(!out.contains("panicked"), "{out}");
    // The whole message still decodes cleanly.
    let whole = dir.join("whole.txt");
    std::fs::write(&whole, &full).unwrap();
    let d = nic(&["cell", "decode", whole.to_str().unwrap()]);
    assert!(d.status.success(), "{}", text(&d));
}

#[test]
fn bad_arguments_are_errors_not_panics() {
    for args in [
        vec!["cell", "encode", "--cell-payload", "12"],
        vec!["cell", "encode", "--opcode", "FLY"],
        vec!["cell", "encode", "--psn", "16777216"],
        vec!["cell", "encode", "--payload-hex", "abc"],
        vec!["cell", "encode", "--payload-hex", "a\u{e9}0"],
        vec!["verilog", "--config", "cell_payload=7"],
        vec!["verilog", "--config", "queue_pairs=99"],
        vec!["synth", "--config", "tpt_entries=3"],
        vec!["synth", "--target", "ecp5-45"],
        vec!["sim", "datapath", "--idle", "1.5"],
        vec!["agree", "--block", "no_such_block"],
    ] {
        let o = nic(&args);
        let out = text(&o);
        assert!(!o.status.success(), "{args:?} succeeded: {out}");
        assert!(out.contains("error"), "{args:?}: {out}");
        assert!(!out.contains("panicked"), "{args:?}: {out}");
    }
}

/// `nic agree` on two small blocks: one line each, identical in the three simulators.
#[test]
fn agree_replays_chosen_blocks_in_three_simulators() {
    let o = nic(&[
        "agree",
        "--block",
        "crc32",
        "--block",
        "tx_arbiter",
        "--cycles",
        "300",
        "--icarus-cycles",
        "100",
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    for block in ["crc32", "tx_arbiter"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(block))
            .unwrap_or_else(|| panic!("no line for {block}: {out}"));
        assert!(line.contains(" 300 ") && line.contains(" 100 "), "{line}");
        assert!(line.ends_with("identical"), "{line}");
    }
    let o = nic(&["agree", "--block", "no_such_block"]);
    assert!(text(&o).contains("no exported block `no_such_block`; the blocks are crc32,"));
}

#[test]
fn synth_target_names_the_devices_and_rejects_others() {
    let help = text(&nic(&["synth", "--help"]));
    assert!(help.contains("--target <TARGET>"), "{help}");
    assert!(help.contains("[default: ecp5-85]"), "{help}");
    let o = nic(&["synth", "--target", "ecp5-45", "--block", "crc32"]);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("unknown target \"ecp5-45\"; targets: ecp5-85, ecp5-25, hx8k"),
        "{out}"
    );
    for flag in [&["--json"][..], &["--report", "x.json"][..]] {
        let o = nic(&[&["synth", "--breakdown"][..], flag].concat());
        assert!(!o.status.success());
        assert!(
            text(&o).contains("go with place and route, not --breakdown"),
            "{}",
            text(&o)
        );
    }
    for flag in ["--json", "--quiet", "--report <FILE>"] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
}

/// A missing nextpnr-ecp5 stops `nic synth` before anything runs, saying what to do.
#[test]
fn synth_without_nextpnr_ecp5_says_to_run_setup() {
    let dir = scratch("cli_synth_no_pnr");
    let o = Command::new(env!("CARGO_BIN_EXE_nic"))
        .args(["synth", "--target", "ecp5-25", "--block", "crc32", "--out"])
        .arg(&dir)
        .env("NIC_NEXTPNR_ECP5", dir.join("no-such-nextpnr"))
        .output()
        .expect("run nic");
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("nextpnr-ecp5"), "{out}");
    assert!(out.contains("does not exist"), "{out}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing ran");
}

/// `nic synth --target ecp5-25` on the CRC block: yosys `synth_ecp5` and nextpnr-ecp5 from
/// the command line, a report naming the device and its capacity.
#[test]
fn synth_runs_ecp5_place_and_route_on_a_small_block() {
    let dir = scratch("cli_synth_ecp5");
    let o = nic(&[
        "synth",
        "--target",
        "ecp5-25",
        "--block",
        "crc32_prepad",
        "--out",
        dir.to_str().unwrap(),
        "--report",
        dir.join("copy/synth-small.json").to_str().unwrap(),
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("LFE5U-25F CABGA381 speed 8  24288  24288     56  (capacity)"),
        "{out}"
    );
    let run = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .ends_with("-ecp5-25")
        })
        .expect("a run-<stamp>-ecp5-25 folder");
    let json = std::fs::read_to_string(run.join("report.json")).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("copy/synth-small.json")).unwrap(),
        json,
        "--report writes report.json's copy"
    );
    let reports: serde_json::Value = serde_json::from_str(&json).unwrap();
    let r = &reports[0];
    assert_eq!(r["module"], "nic_crc32_prepad");
    assert_eq!(r["device"], "ecp5-25");
    assert_eq!(r["capacity"]["block_rams"], 56);
    assert!(r["fmax_mhz"].as_f64().unwrap() > 0.0, "{json}");
    assert!(r["luts"].as_u64().unwrap() > 100, "{json}");
}

#[test]
fn verilog_writes_one_renamed_module_per_block_and_lint_is_clean() {
    let dir = scratch("cli_verilog");
    let o = nic(&["verilog", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    for m in [
        "nic_crc32",
        "nic_cell_segmenter",
        "nic_cell_reassembler",
        "nic_cell_datapath",
        "nic_send_queue_engine",
        "nic_receive_queue_engine",
        "nic_top",
    ] {
        let v = std::fs::read_to_string(dir.join(format!("{m}.v"))).unwrap();
        assert!(v.contains(&format!("module {m}(")), "{m}");
        assert!(!v.contains("module top"), "{m}");
    }
    let l = nic(&["lint", "--dir", dir.join("lint").to_str().unwrap()]);
    assert!(l.status.success(), "lint: {}", text(&l));
    let modules = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "v")
        })
        .count();
    assert!(
        modules >= 14,
        "the datapath and NIC blocks and the NIC top: {modules}"
    );
    assert_eq!(text(&l).matches("clean").count(), modules, "{}", text(&l));
}

#[test]
fn sim_datapath_writes_a_json_report() {
    let dir = scratch("cli_sim");
    let json = dir.join("report.json");
    let o = nic(&[
        "sim",
        "datapath",
        "--messages",
        "20",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let report = std::fs::read_to_string(&json).unwrap();
    assert!(report.contains("\"messages_delivered\": 20"), "{report}");
}

#[test]
fn soak_runs_a_seed_range_and_reports_json() {
    let dir = scratch("cli_soak");
    let regressions = dir.join("regressions");
    let o = nic(&[
        "soak",
        "--cases",
        "2",
        "--seed",
        "3",
        "--json",
        "--regressions",
        regressions.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["cases"], 2);
    assert_eq!(v["first_seed"], 3);
    assert_eq!(v["failing_cases"], 0);
    assert!(v["simulated_cycles"].as_u64().unwrap() > 40_000);
    assert!(
        !regressions.exists(),
        "nothing written when every case passes"
    );
    let o = nic(&["soak", "--cases", "0"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("--cases"), "{}", text(&o));
}

#[test]
fn a_scenario_with_a_bad_fault_names_the_file_line_and_field() {
    let dir = scratch("cli_bad_fault");
    let path = dir.join("bad.toml");
    std::fs::write(
        &path,
        "name = \"x\"\nhosts = 2\ncycles = 1000\n\n[[fault]]\nkind = \"delay\"\nfrom = 10\n",
    )
    .unwrap();
    let o = nic(&["sim", "--scenario", path.to_str().unwrap(), "--quiet"]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        t.contains("bad.toml") && t.contains("line 5") && t.contains("`cycles`"),
        "{t}"
    );
    std::fs::write(
        &path,
        "name = \"x\"\nhosts = 2\ncycles = 1000\n\n[[fault]]\nkind = \"drop\"\nfrom = 10\nsrc = [7]\n",
    )
    .unwrap();
    let o = nic(&["sim", "--scenario", path.to_str().unwrap(), "--quiet"]);
    let t = text(&o);
    assert!(
        t.contains("line 5") && t.contains("host 7 does not exist"),
        "{t}"
    );
}

/// Verilator's VCD and FST of the counter (waves/tests/fixtures).
fn counter_fixture(ext: &str) -> String {
    if ext == "fst" {
        static FST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        return FST
            .get_or_init(|| {
                let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-fst");
                let fst = nic_waves::counter_fst::build_counter_fst(&dir).unwrap();
                fst.to_str().unwrap().to_string()
            })
            .clone();
    }
    format!(
        "{}/waves/tests/fixtures/counter_verilator.{ext}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn waves_list_show_diff_render_gtkw() {
    let dir = scratch("cli_waves");
    let (vcd, fst) = (counter_fixture("vcd.expect"), counter_fixture("fst"));
    let o = nic(&["waves", "list", &fst]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("count                               4 bits"),
        "{}",
        text(&o)
    );

    let o = nic(&[
        "waves",
        "show",
        &vcd,
        "-s",
        "count,enable",
        "--from",
        "30ns",
        "--to",
        "40ns",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        text(&o),
        "time (ps)  count  enable\n    30000  3      1\n    35000  3      0*\n"
    );

    // The same run in two formats: equal, exit 0.
    let o = nic(&["waves", "diff", &vcd, &fst]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("same: no difference up to 200 ns"),
        "{}",
        text(&o)
    );
    // A planted value: exit 1, the time and the signal named.
    let planted = dir.join("planted.vcd");
    let original = std::fs::read_to_string(&vcd).unwrap();
    std::fs::write(&planted, original.replacen("#40000\n", "#40000\n1$\n", 1)).unwrap();
    let o = nic(&["waves", "diff", &fst, planted.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("first difference at 40 ns in `enable`"),
        "{}",
        text(&o)
    );

    let svg = dir.join("counter.svg");
    let o = nic(&[
        "waves",
        "render",
        &fst,
        "-s",
        "clock,count",
        "--out",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read_to_string(&svg)
        .unwrap()
        .contains(">count</text>"));

    let save = dir.join("counter.gtkw");
    let o = nic(&["waves", "gtkw", &vcd, "--out", save.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read_to_string(&save)
        .unwrap()
        .contains("-Clock and reset"));
    assert!(dir.join("counter.sucl").exists());
}

#[test]
fn waves_bad_input_is_an_error_not_a_panic() {
    let dir = scratch("cli_waves_bad");
    let junk = dir.join("junk.vcd");
    std::fs::write(&junk, "not a waveform").unwrap();
    let fst = counter_fixture("fst");
    for (args, expect) in [
        (
            vec!["waves", "list", junk.to_str().unwrap()],
            "not a waveform",
        ),
        (
            vec!["waves", "show", &fst, "-s", "nope"],
            "no signal matches `nope`",
        ),
        (
            vec![
                "waves", "show", &fst, "-s", "count", "--from", "9ns", "--to", "1ns",
            ],
            "is after --to",
        ),
        (
            vec!["waves", "show", &fst, "-s", "count", "--from", "1ms"],
            "empty window",
        ),
        (
            vec!["waves", "diff", &fst, junk.to_str().unwrap()],
            "junk.vcd: not a waveform",
        ),
    ] {
        let o = nic(&args);
        assert!(!o.status.success(), "{args:?}");
        let t = text(&o);
        assert!(
            t.contains(expect) && !t.contains("panicked"),
            "{args:?}: {t}"
        );
    }
}

/// Every bench takes --json (JSON alone on stdout), --quiet, --plot DIR and --out FILE;
/// `nic bench nic --sizes` is cheap at small cycle counts.
#[test]
fn bench_writes_json_and_charts_for_scripts() {
    let dir = scratch("cli_bench_plot");
    let json = dir.join("nic.json");
    let o = nic(&[
        "bench",
        "nic",
        "--cycles",
        "2000",
        "--rusthdl-cycles",
        "200",
        "--min-seconds",
        "0.01",
        "--goodput-messages",
        "2",
        "--sizes",
        "64,4096",
        "--json",
        "--plot",
        dir.to_str().unwrap(),
        "--out",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON alone ({e}): {}", text(&o)));
    let sizes: Vec<u64> = printed["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["message_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [64, 4096]);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(written, printed);
    for chart in ["speed.svg", "goodput.svg", "message-rate.svg"] {
        let svg = std::fs::read_to_string(dir.join(chart)).unwrap();
        assert!(svg.starts_with("<svg"), "{chart}");
    }
    // Drawn again from the JSON, without running the bench.
    let again = dir.join("again");
    let o = nic(&[
        "plot",
        "speed",
        "--nic",
        json.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(again.join("message-rate.svg").exists(), "{}", text(&o));

    // The rejoin bench at CI size (2 and 4 hosts, one seed) draws its two charts.
    let rejoin = dir.join("rejoin");
    let o = nic(&[
        "bench",
        "rejoin",
        "--hosts",
        "2,4",
        "--seeds",
        "1",
        "--search-seeds",
        "1",
        "--precision",
        "0.5",
        "--quiet",
        "--plot",
        rejoin.to_str().unwrap(),
        "--out",
        rejoin.join("rejoin.json").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains(" ..."), "--quiet: {}", text(&o));
    for chart in ["rejoin-latency.svg", "rejoin-stale-writes.svg"] {
        assert!(rejoin.join(chart).exists(), "{chart}: {}", text(&o));
    }

    let o = nic(&["bench", "nic", "--sizes", "0", "--quiet"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("message sizes must be 1..=65536 bytes, got 0"),
        "{}",
        text(&o)
    );
}

#[test]
fn plot_draws_from_json_and_names_bad_files() {
    let dir = scratch("cli_plot");
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("plots/tests/fixtures");
    let rejoin = fixtures.join("rejoin.json");
    let out = dir.join("charts");
    let o = nic(&[
        "plot",
        "rejoin",
        rejoin.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join("rejoin-latency.svg").exists());
    assert!(out.join("rejoin-stale-writes.svg").exists());
    let synth = fixtures.join("synth-report.json");
    let o = nic(&[
        "plot",
        "synth",
        synth.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join("synth-fmax.svg").exists());

    let empty = dir.join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let truncated = dir.join("truncated.json");
    let full = std::fs::read_to_string(&rejoin).unwrap();
    std::fs::write(&truncated, &full[..1000]).unwrap();
    for (args, wanted) in [
        (
            vec!["plot", "rejoin", empty.to_str().unwrap()],
            "is empty; expected the JSON of `nic bench rejoin`",
        ),
        (
            vec!["plot", "rejoin", truncated.to_str().unwrap()],
            "not the JSON of `nic bench rejoin`",
        ),
        (
            vec!["plot", "synth", rejoin.to_str().unwrap()],
            "not `nic synth`'s report.json",
        ),
        (
            vec!["plot", "rejoin", dir.join("missing.json").to_str().unwrap()],
            "missing.json",
        ),
        (
            vec!["plot", "speed"],
            "give --datapath FILE and/or --nic FILE",
        ),
        (
            vec!["plot", "all", "--dir", dir.join("none").to_str().unwrap()],
            "no bench JSON",
        ),
    ] {
        let o = nic(&args);
        let t = text(&o);
        assert!(!o.status.success(), "{args:?}: {t}");
        assert!(t.contains(wanted), "{args:?}: {t}");
        assert!(!t.contains("panicked"), "{args:?}: {t}");
    }
}
/// A three-host scenario in which host 1 reboots, written under `dir`.
fn rejoin_scenario(dir: &std::path::Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\nhosts = 3\ncycles = 6000\n[workload]\nrate = 0.0\n\
             [[event]]\nat = 2000\naction = \"reboot\"\nhost = 1\ndown_cycles = 300\n"
        ),
    )
    .unwrap();
    path
}

/// The `#time` lines of a VCD: the first and the last.
fn vcd_time_range(path: &std::path::Path) -> (u64, u64) {
    let text = std::fs::read_to_string(path).unwrap();
    let times: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|t| t.trim().parse().unwrap())
        .collect();
    (times[0], *times.last().unwrap())
}

#[test]
fn scenario_waves_cover_only_the_window_and_the_hosts_asked_for() {
    let dir = scratch("cli_scenario_waves");
    let name = "cli-waves-window";
    let file = rejoin_scenario(&dir, name);
    let waves = nic_waves::workspace_root().join("waves").join(name);
    let _ = std::fs::remove_dir_all(&waves);
    // A file of an earlier run that dumped host 0 goes.
    std::fs::create_dir_all(&waves).unwrap();
    std::fs::write(waves.join("nic0.vcd"), "old").unwrap();
    let report = dir.join("report.json");
    let o = nic(&[
        "sim",
        "--scenario",
        file.to_str().unwrap(),
        "--waves",
        "--waves-window",
        "1000..5000",
        "--waves-hosts",
        "1-2",
        "--report",
        report.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let mut files: Vec<String> = std::fs::read_dir(&waves)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["nic1.vcd", "nic2.vcd"]);
    // Cycle n starts at n * 10 ns; host 1 was off for 300 cycles in the window and its
    // file still ends at cycle 5000 (the trace follows the fabric's clock).
    for f in &files {
        assert_eq!(
            vcd_time_range(&waves.join(f)),
            (1000 * 10_000, 5000 * 10_000),
            "{f}"
        );
    }
    let _ = std::fs::remove_dir_all(&waves);
}

#[test]
fn bad_waves_options_are_refused_before_the_run() {
    let dir = scratch("cli_scenario_waves_bad");
    let name = "cli-waves-bad";
    let file = rejoin_scenario(&dir, name);
    let waves = nic_waves::workspace_root().join("waves").join(name);
    let _ = std::fs::remove_dir_all(&waves);
    let f = file.to_str().unwrap();
    for (args, expected) in [
        (vec!["--waves-window", "5000..1000"], "the window is empty"),
        (vec!["--waves-window", "10..x"], "is not a cycle number"),
        (
            vec!["--waves-window", "1000"],
            "is not a window of cycles FROM..TO",
        ),
        (vec!["--waves-window", "0..7000"], "runs 6000 cycles"),
        (vec!["--waves-hosts", "1,7"], "no host 7"),
        (vec!["--waves-hosts", "3-1"], "runs backwards"),
        (vec!["--waves-hosts", "a"], "is not a host number"),
        (vec!["--waves", "ghw"], "unknown waves format"),
    ] {
        let mut all = vec!["sim", "--scenario", f, "--quiet"];
        if args[0] != "--waves" {
            all.push("--waves");
        }
        all.extend(&args);
        let o = nic(&all);
        assert!(!o.status.success(), "{args:?}");
        assert!(text(&o).contains(expected), "{args:?}: {}", text(&o));
        assert!(!text(&o).contains("panicked"), "{args:?}: {}", text(&o));
        assert!(!waves.exists(), "{args:?}: nothing may be written");
    }
}

/// FST waves: written by the `--trace-fst` models, read back by `nic waves`, markers
/// included.
#[cfg(feature = "fst")]
#[test]
fn scenario_waves_in_fst_are_read_back_with_their_markers() {
    let dir = scratch("cli_scenario_fst");
    let name = "cli-waves-fst";
    let file = rejoin_scenario(&dir, name);
    let waves = nic_waves::workspace_root().join("waves").join(name);
    let _ = std::fs::remove_dir_all(&waves);
    let report = dir.join("report.json");
    let o = nic(&[
        "sim",
        "--scenario",
        file.to_str().unwrap(),
        "--waves",
        "fst",
        "--waves-hosts",
        "1",
        "--report",
        report.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let fst = waves.join("nic1.fst");
    let bytes = std::fs::read(&fst).unwrap();
    assert_eq!(bytes[0], 0, "an FST header block");
    let o = nic(&["waves", "list", fst.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("booting_sent"), "{}", text(&o));
    let o = nic(&[
        "waves",
        "show",
        fst.to_str().unwrap(),
        "-s",
        "markers.powered",
        "--from",
        "19us",
        "--to",
        "24us",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // Host 1 powers off after cycle 1999 and on at cycle 2300.
    let t = text(&o);
    assert!(t.contains("19995001") && t.contains("23005001"), "{t}");
    let _ = std::fs::remove_dir_all(&waves);
}

#[cfg(not(feature = "fst"))]
#[test]
fn fst_waves_without_the_fst_models_are_a_clear_error() {
    let dir = scratch("cli_scenario_no_fst");
    let file = rejoin_scenario(&dir, "cli-waves-no-fst");
    let o = nic(&[
        "sim",
        "--scenario",
        file.to_str().unwrap(),
        "--waves",
        "fst",
        "--quiet",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("--features fst"), "{}", text(&o));
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
}

/// `nic measurements rejoin` writes the bench's tables between the page's markers and
/// nothing else; a page without markers, or a size in two files, is an error that writes
/// nothing.
#[test]
fn measurements_writes_the_rejoin_tables_between_the_markers() {
    let dir = scratch("measurements");
    let json = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("plots/tests/fixtures/rejoin.json");
    let json = json.to_str().unwrap();
    let doc = dir.join("m.md");
    let page = "# Page\n\nprose before\n<!-- rejoin-tables:begin -->\nold table\n<!-- rejoin-tables:end -->\nprose after\n";
    std::fs::write(&doc, page).unwrap();
    let doc_s = doc.to_str().unwrap();
    let o = nic(&["measurements", "rejoin", json, "--doc", doc_s]);
    assert!(o.status.success(), "{}", text(&o));
    let out = std::fs::read_to_string(&doc).unwrap();
    assert!(out.starts_with("# Page\n\nprose before\n<!-- rejoin-tables:begin -->\n<!-- Generated by `nic measurements rejoin`"), "{out}");
    assert!(
        out.ends_with("<!-- rejoin-tables:end -->\nprose after\n"),
        "{out}"
    );
    assert!(!out.contains("old table"));
    assert!(
        out.contains("| hosts | period, timeout | protocol latency"),
        "{out}"
    );
    assert!(out.contains("| 2 | "), "a row per size: {out}");
    assert!(
        out.contains("- 2 hosts, heartbeat: "),
        "the searches: {out}"
    );
    // The same file twice: its sizes collide.
    let o = nic(&["measurements", "rejoin", json, json, "--doc", doc_s]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("hosts are in an earlier file too"),
        "{}",
        text(&o)
    );
    // No markers: an error, the page untouched.
    std::fs::write(&doc, "# Page without markers\n").unwrap();
    let o = nic(&["measurements", "rejoin", json, "--doc", doc_s]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("no `<!-- rejoin-tables:begin -->`"),
        "{}",
        text(&o)
    );
    assert_eq!(
        std::fs::read_to_string(&doc).unwrap(),
        "# Page without markers\n"
    );
}

/// `nic measurements synth` writes a report.json's blocks as a table between the markers
/// its `--section` names; a section the page lacks is an error that writes nothing.
#[test]
fn measurements_writes_a_synthesis_table_between_its_markers() {
    let dir = scratch("measurements-synth");
    let json =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("plots/tests/fixtures/synth-report.json");
    let json = json.to_str().unwrap();
    let doc = dir.join("m.md");
    let page = "a\n<!-- synth-tops:begin -->\n<!-- synth-tops:end -->\nb\n";
    std::fs::write(&doc, page).unwrap();
    let doc_s = doc.to_str().unwrap();
    let o = nic(&[
        "measurements",
        "synth",
        json,
        "--section",
        "tops",
        "--doc",
        doc_s,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = std::fs::read_to_string(&doc).unwrap();
    assert!(out.contains("| block | device | LUTs |"), "{out}");
    assert!(
        out.contains("Generated by `nic measurements synth`"),
        "{out}"
    );
    assert!(out.ends_with("<!-- synth-tops:end -->\nb\n"), "{out}");
    let o = nic(&[
        "measurements",
        "synth",
        json,
        "--section",
        "other",
        "--doc",
        doc_s,
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("no `<!-- synth-other:begin -->`"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), out);
}

/// `nic measurements all` writes every block whose JSON is in the source folder (the
/// check's and the soak's `--out` files among them), stamps each, lists them all, and
/// leaves the prose and the blocks without JSON as they are. A malformed file, a file no
/// block reads, a block without markers or an unknown block is an error that writes
/// nothing.
#[test]
fn measurements_all_writes_every_block_from_the_json_present() {
    let dir = scratch("measurements-all");
    let from = dir.join("json");
    std::fs::create_dir_all(&from).unwrap();
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("plots/tests/fixtures");
    std::fs::copy(fixtures.join("rejoin.json"), from.join("rejoin.json")).unwrap();
    std::fs::copy(
        fixtures.join("synth-report.json"),
        from.join("synth-tops.a.json"),
    )
    .unwrap();
    let check = from.join("check.cold.json");
    let o = nic(&[
        "check",
        "rejoin",
        "--nodes",
        "2",
        "--cold",
        "--reboots",
        "0",
        "--losses",
        "0",
        "--json",
        "--out",
        check.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(
        v,
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&check).unwrap())
            .unwrap()
    );
    assert_eq!(v["failed"], serde_json::json!([]));
    let o = nic(&[
        "soak",
        "--cases",
        "1",
        "--seed",
        "3",
        "--quiet",
        "--out",
        from.join("soak.3.json").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let scenario =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/multi-nic-route-change.toml");
    let o = nic(&[
        "sim",
        "--scenario",
        scenario.to_str().unwrap(),
        "--quiet",
        "--report",
        from.join("multi-nic.route-change.json").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(
        from.join("pools.json"),
        r#"[{"mode":"pools","packet_bytes":256,"goodput":{"min":2.5,"median":2.76,"max":2.8},"by_idata":600,"by_message":0}]"#,
    )
    .unwrap();
    let doc = dir.join("m.md");
    let mut page =
        String::from("# Page\n\n<!-- generated-blocks:begin -->\n<!-- generated-blocks:end -->\n");
    for name in [
        "synth-tops",
        "rejoin-tables",
        "check-depth-first",
        "check-breadth-first",
        "soak",
        "multi-nic-slow-path",
        "pools",
    ] {
        page.push_str(&format!(
            "\n## {name}\n\n<!-- {name}:begin -->\nby hand\n<!-- {name}:end -->\n"
        ));
    }
    std::fs::write(&doc, &page).unwrap();
    let (doc_s, from_s) = (doc.to_str().unwrap(), from.to_str().unwrap());
    let o = nic(&["measurements", "all", "--from", from_s, "--doc", doc_s]);
    assert!(o.status.success(), "{}", text(&o));
    let out = std::fs::read_to_string(&doc).unwrap();
    assert_eq!(
        out.matches("<!-- Generated by `nic measurements all` on ")
            .count(),
        6,
        "{out}"
    );
    assert_eq!(
        out.matches("\nby hand\n").count(),
        1,
        "breadth-first has no JSON: {out}"
    );
    for table in [
        "| block | device | LUTs |",
        "| hosts | period, timeout | protocol latency",
        "| `--nodes 2 --cold --reboots 0 --losses 0` | cold | depth-first, symmetry reduction |",
        "| `nic soak --seed 3 --cases 1` | 1 | ",
        "| 256 | 2.76 (2.50 .. 2.80) | 600 / 0 | - |",
        "| `multi-nic-route-change` | 2 | 4 | 4 | 0 | ",
    ] {
        assert!(out.contains(table), "{table}: {out}");
    }
    assert!(
        out.contains(&format!(
            "- Soak (`soak`): generated by `nic measurements all` on "
        )),
        "{out}"
    );
    assert!(
        out.contains("- Rejoin model check, breadth-first (`check-breadth-first`): written by hand; the next run generates it: `nic check rejoin ... --max-depth N"),
        "{out}"
    );
    assert!(
        out.contains("\n## pools\n\n<!-- pools:begin -->\n"),
        "{out}"
    );

    // Each error leaves the page as it is.
    let fails = |what: &str, expect: &str| {
        let o = nic(&["measurements", "all", "--from", from_s, "--doc", doc_s]);
        assert!(!o.status.success(), "{what}");
        assert!(text(&o).contains(expect), "{what}: {}", text(&o));
        assert!(!text(&o).contains("panicked"), "{}", text(&o));
        assert_eq!(std::fs::read_to_string(&doc).unwrap(), out, "{what}");
    };
    std::fs::write(from.join("regcache.json"), "{\"runs\": [").unwrap();
    fails(
        "malformed JSON",
        "regcache.json: not the JSON of `nic bench regcache`",
    );
    std::fs::remove_file(from.join("regcache.json")).unwrap();
    std::fs::copy(from.join("pools.json"), from.join("pools.again.json")).unwrap();
    fails(
        "two files of a one-file source",
        "one `pools` file is read, not 2",
    );
    std::fs::remove_file(from.join("pools.again.json")).unwrap();
    std::fs::write(from.join("notes.json"), "{}").unwrap();
    fails(
        "a file no block reads",
        "notes.json: no block of the page reads `notes` files",
    );
    std::fs::remove_file(from.join("notes.json")).unwrap();
    std::fs::copy(
        fixtures.join("synth-report.json"),
        from.join("synth-other.json"),
    )
    .unwrap();
    fails(
        "a block without markers",
        "no `<!-- synth-other:begin -->` ... `<!-- synth-other:end -->` markers for",
    );
    std::fs::remove_file(from.join("synth-other.json")).unwrap();
    let o = nic(&["measurements", "all", "--from", from_s, "--doc", doc_s]);
    assert!(o.status.success(), "{}", text(&o));
    let again = std::fs::read_to_string(&doc).unwrap();
    std::fs::write(
        &doc,
        format!("{again}<!-- bogus:begin -->\n<!-- bogus:end -->\n"),
    )
    .unwrap();
    let o = nic(&["measurements", "all", "--from", from_s, "--doc", doc_s]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("no block is called `bogus`"),
        "{}",
        text(&o)
    );
}
