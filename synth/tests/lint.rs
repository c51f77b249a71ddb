//! Verilator lint through `lint()` with the project's waiver file.

use std::path::{Path, PathBuf};

use nic_synth::lint;

fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("nic-synth/lint")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn waiver() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl/lint/verilator_waiver.vlt")
}

#[test]
fn clean_module_has_no_warnings() {
    let report = lint(
        &[fixture("nic_fixture_counter.v")],
        "nic_fixture_counter",
        &waiver(),
        &out_dir().join("counter.log"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.module, "nic_fixture_counter");
    assert!(report.is_clean(), "{report}");
}

#[test]
fn unused_signal_is_reported_with_rule_and_line_despite_waiver() {
    let report = lint(
        &[fixture("nic_fixture_unused.v")],
        "nic_fixture_unused",
        &waiver(),
        &out_dir().join("unused.log"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.warnings.len(), 1, "{report}");
    let w = &report.warnings[0];
    assert_eq!(w.rule, "UNUSEDSIGNAL");
    assert!(w.file.ends_with("nic_fixture_unused.v"), "{w}");
    assert_eq!(w.line, 10);
    assert_eq!(w.message, "Signal is not used: 'spare'");
}

#[test]
fn syntax_error_is_a_tool_error_with_the_error_line() {
    let err = lint(
        &[fixture("bad_syntax.v")],
        "bad_syntax",
        &waiver(),
        &out_dir().join("bad.log"),
    )
    .unwrap_err();
    assert_eq!(err.tool, "verilator");
    assert!(err.status().is_some_and(|s| !s.success()), "{err}");
    assert!(
        err.diagnostics
            .iter()
            .any(|d| d.contains("bad_syntax.v:2:32: ERROR: syntax error")),
        "{err}"
    );
    assert!(
        err.command
            .contains("--lint-only -Wall -Wno-fatal --top-module bad_syntax"),
        "{}",
        err.command
    );
}

#[test]
fn missing_file_is_a_tool_error() {
    let err = lint(
        &[fixture("nic_no_such_file.v")],
        "nic_no_such_file",
        &waiver(),
        &out_dir().join("missing.log"),
    )
    .unwrap_err();
    assert!(err.status().is_some_and(|s| !s.success()), "{err}");
    assert!(
        err.diagnostics
            .iter()
            .any(|d| d.contains("nic_no_such_file")),
        "{err}"
    );
}
