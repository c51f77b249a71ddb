//! End-to-end flow on small handwritten fixtures (the flow, not NIC hardware): the iCE40
//! HX8K, and ECP5 on the same fixtures.

use std::path::{Path, PathBuf};

use nic_synth::{
    render_table, synth_block, synth_block_report, write_json, Device, Port, SynthError,
    SynthInput, SynthReport,
};

fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("nic-synth/synth")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn counter_ports() -> Vec<Port> {
    vec![
        Port::input("clock", 1),
        Port::input("enable", 1),
        Port::input("limit", 8),
        Port::output("count", 8),
        Port::output("hit", 1),
    ]
}

#[test]
fn counter_synthesises_with_resources_and_fmax() {
    let input = SynthInput::new(
        "nic_fixture_counter",
        fixture("nic_fixture_counter.v"),
        counter_ports(),
    )
    .on(Device::Hx8k);
    let report = synth_block(&input, &out_dir()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.module, "nic_fixture_counter");
    assert!(report.luts > 0, "{report:?}");
    assert_eq!(report.flip_flops, 8, "{report:?}");
    assert_eq!(report.block_rams, 0, "{report:?}");
    assert!(report.fmax_mhz > 0.0, "{report:?}");
    assert_eq!(report.target_mhz, 100.0);
    assert_eq!(report.meets_target, report.fmax_mhz >= 100.0);

    let dir = out_dir().join("nic_fixture_counter");
    assert_eq!(report.log_dir, dir);
    for f in [
        "yosys.log",
        "yosys_wrap.log",
        "nextpnr.log",
        "nic_fixture_counter_synth_wrap.v",
        "stat.json",
        "nextpnr_report.json",
        "wrap.asc",
        "synth_report.json",
    ] {
        assert!(dir.join(f).is_file(), "missing {f}");
    }
    let saved: Vec<SynthReport> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("synth_report.json")).unwrap())
            .unwrap();
    assert_eq!(saved, std::slice::from_ref(&report));

    let table = render_table(std::slice::from_ref(&report));
    assert!(table.starts_with("block"), "{table}");
    assert!(
        table
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("nic_fixture_counter"),
        "{table}"
    );
    let all = out_dir().join("summary/reports.json");
    write_json(std::slice::from_ref(&report), &all).unwrap();
    let back: Vec<SynthReport> =
        serde_json::from_str(&std::fs::read_to_string(&all).unwrap()).unwrap();
    assert_eq!(back, [report]);
}

#[test]
fn unreachable_target_is_reported_not_an_error() {
    let mut input = SynthInput::new(
        "nic_fixture_counter",
        fixture("nic_fixture_counter.v"),
        counter_ports(),
    )
    .on(Device::Hx8k);
    input.target_mhz = 2000.0;
    let report = synth_block(&input, &out_dir().join("fast")).unwrap_or_else(|e| panic!("{e}"));
    assert!(!report.meets_target && report.fmax_mhz > 0.0, "{report:?}");
}

#[test]
fn wrong_ports_are_rejected_with_the_difference() {
    let mut ports = counter_ports();
    ports[2].width = 4; // limit is 8 bits
    ports.pop(); // hit missing
    let input = SynthInput::new(
        "nic_fixture_counter",
        fixture("nic_fixture_counter.v"),
        ports,
    )
    .on(Device::Hx8k);
    match synth_block(&input, &out_dir().join("wrong_ports")) {
        Err(SynthError::PortMismatch { detail, .. }) => {
            assert!(
                detail.contains("given input limit [4], netlist has input limit [8]"),
                "{detail}"
            );
            assert!(detail.contains("output hit [1] is missing"), "{detail}");
        }
        other => panic!("expected PortMismatch, got {other:?}"),
    }
}

#[test]
fn bad_inputs_are_rejected_before_running_tools() {
    let no_outputs = SynthInput::new(
        "nic_fixture_counter",
        fixture("nic_fixture_counter.v"),
        vec![Port::input("clock", 1)],
    )
    .on(Device::Hx8k);
    let err = synth_block(&no_outputs, &out_dir().join("bad")).unwrap_err();
    assert!(err.to_string().contains("no output port"), "{err}");

    let missing =
        SynthInput::new("nic_x", fixture("nic_no_such_file.v"), counter_ports()).on(Device::Hx8k);
    let err = synth_block(&missing, &out_dir().join("bad")).unwrap_err();
    assert!(
        matches!(err, SynthError::BadInput { .. }) && err.to_string().contains("does not exist"),
        "{err}"
    );
}

#[test]
fn yosys_failure_is_a_tool_error_with_log_tail() {
    let input = SynthInput::new(
        "bad_syntax",
        fixture("bad_syntax.v"),
        vec![Port::input("a", 1), Port::output("b", 1)],
    )
    .on(Device::Hx8k);
    match synth_block(&input, &out_dir()) {
        Err(SynthError::Tool(e)) => {
            assert_eq!(e.tool, "yosys");
            assert_eq!(e.status().and_then(|s| s.code()), Some(1), "{e}");
            assert!(e.tail.iter().any(|l| l.contains("syntax error")), "{e}");
            assert_eq!(e.diagnostics.len(), 1, "{e}");
            assert!(e.diagnostics[0].ends_with("bad_syntax.v:2: ERROR: syntax error, unexpected TOK_OUTPUT, expecting ',' or '=' or ')'"), "{e}");
            assert_eq!(e.log, out_dir().join("bad_syntax/yosys.log"));
        }
        other => panic!("expected a yosys error, got {other:?}"),
    }
}

/// A memory hog of tests/fixtures/nic_fixture_ramhog.v with `addr_bits` of address.
fn memory_hog(module: &str, addr_bits: usize) -> SynthInput {
    SynthInput::new(
        module,
        fixture("nic_fixture_ramhog.v"),
        vec![
            Port::input("clock", 1),
            Port::input("we", 1),
            Port::input("addr", addr_bits),
            Port::input("wdata", 16),
            Port::output("rdata", 16),
        ],
    )
}

/// A fixture that needs 40 RAM4K (the HX8K has 32).
fn ramhog() -> SynthInput {
    memory_hog("nic_fixture_ramhog", 8).on(Device::Hx8k)
}

#[test]
fn design_larger_than_the_device_does_not_fit() {
    let input = ramhog();
    match synth_block(&input, &out_dir()) {
        Err(SynthError::DoesNotFit { reason, tail, .. }) => {
            assert!(reason.contains("ICESTORM_RAM 40/32"), "{reason}");
            assert!(!tail.is_empty());
        }
        other => panic!("expected DoesNotFit, got {other:?}"),
    }
}

/// `nic synth`'s variant: a design that does not fit is a report row (its yosys counts,
/// the over-full resource), not an error; a placed one carries its critical path.
#[test]
fn misfit_is_a_report_and_a_fit_has_a_critical_path() {
    let input = ramhog();
    let dir = out_dir().join("report");
    let r = synth_block_report(&input, &dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.block_rams, 40, "{r:?}");
    assert!(!r.meets_target && r.fmax_mhz == 0.0, "{r:?}");
    let reason = r.does_not_fit.clone().expect("the RAM hog does not fit");
    assert!(reason.contains("ICESTORM_RAM 40/32"), "{reason}");
    let table = render_table(std::slice::from_ref(&r));
    assert!(
        table.contains("does not fit: ICESTORM_RAM 40/32"),
        "{table}"
    );

    let counter = SynthInput::new(
        "nic_fixture_counter",
        fixture("nic_fixture_counter.v"),
        counter_ports(),
    )
    .on(Device::Hx8k);
    let r = synth_block_report(&counter, &dir).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.does_not_fit.is_none() && r.fmax_mhz > 0.0, "{r:?}");
    assert!(r.logic_cells.is_some_and(|n| n > 8), "{r:?}");
    let path = r
        .critical_path
        .expect("nextpnr reports a clock-to-clock path");
    assert!(path.logic_levels >= 1 && path.delay_ns > 0.0, "{path:?}");
}

/// The counter on ECP5 (LFE5U-25F): the same flow with `synth_ecp5` and nextpnr-ecp5,
/// counted in ECP5 primitives, its bitstream text in `wrap.config`; seconds.
#[test]
fn counter_synthesises_on_ecp5() {
    let input = SynthInput::new(
        "nic_fixture_counter",
        fixture("nic_fixture_counter.v"),
        counter_ports(),
    )
    .on(Device::Ecp5_25);
    let dir = out_dir().join("ecp5");
    let r = synth_block_report(&input, &dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.device, Device::Ecp5_25);
    assert_eq!(r.capacity, Device::Ecp5_25.capacity());
    // An 8-bit counter: 8 TRELLIS_FF, its increment in CCU2C carries (two bits each).
    assert_eq!((r.flip_flops, r.block_rams, r.lut_rams), (8, 0, 0), "{r:?}");
    assert!(r.carries >= 4 && r.luts > 0, "{r:?}");
    assert!(r.does_not_fit.is_none() && r.fmax_mhz > 0.0, "{r:?}");
    assert!(r.logic_cells.is_some_and(|n| n > 8), "{r:?}");
    assert!(r.critical_path.is_some(), "{r:?}");
    let run = dir.join("nic_fixture_counter");
    assert!(run.join("wrap.config").is_file());
    assert!(!run.join("wrap.asc").exists());
    let script = std::fs::read_to_string(run.join("block.ys")).unwrap();
    assert!(
        script.contains("synth_ecp5 -top nic_fixture_counter"),
        "{script}"
    );
    let log = std::fs::read_to_string(run.join("nextpnr.log")).unwrap();
    assert!(
        log.lines()
            .next()
            .unwrap()
            .contains("--25k --package CABGA381 --speed 8"),
        "{log}"
    );
    let table = render_table(std::slice::from_ref(&r));
    assert!(
        table.contains("LFE5U-25F CABGA381 speed 8  24288  24288     56  (capacity)"),
        "{table}"
    );
}

/// 64 memories of 1024 x 16, one DP16KD each: more than the LFE5U-25F's 56.
#[test]
fn design_larger_than_the_ecp5_25_does_not_fit() {
    let input = memory_hog("nic_fixture_bramhog", 10).on(Device::Ecp5_25);
    let r = synth_block_report(&input, &out_dir().join("ecp5")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.block_rams, 64, "{r:?}");
    assert_eq!(r.fmax_text(), "does not fit: DP16KD 64/56");
}
