//! The tool wrapper against real processes: success, missing binary, failing tool.

use std::path::{Path, PathBuf};

use nic_synth::{run_tool, Failure, Tool};

fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("nic-synth/tool")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

#[test]
fn successful_run_keeps_output_in_log() {
    let log = out_dir().join("yosys_version.log");
    let run = run_tool(&Tool::new("yosys").arg("-V"), &log).unwrap_or_else(|e| panic!("{e}"));
    assert!(run.status.success());
    assert!(run.output.starts_with("$ yosys -V\n"), "{}", run.output);
    assert!(run.output.contains("Yosys 0."), "{}", run.output);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), run.output);
}

#[test]
fn missing_tool_says_not_found_on_path() {
    let log = out_dir().join("missing.log");
    let tool = Tool::new("nic-synth-no-such-tool").args(["--flag", "a b"]);
    let err = run_tool(&tool, &log).unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(err.tool, "nic-synth-no-such-tool");
    assert_eq!(err.command, "nic-synth-no-such-tool --flag 'a b'");
    assert_eq!(err.log, log);
    let msg = err.to_string();
    assert!(
        msg.starts_with(
            "nic-synth-no-such-tool: not found on PATH: install it with scripts/setup.sh"
        ),
        "{msg}"
    );
    assert!(
        msg.contains("command: nic-synth-no-such-tool --flag 'a b'"),
        "{msg}"
    );
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .contains("not found on PATH"));
}

#[test]
fn missing_working_dir_is_not_mistaken_for_missing_tool() {
    let tool = Tool::new("yosys")
        .arg("-V")
        .current_dir(out_dir().join("no/such/dir"));
    let err = run_tool(&tool, &out_dir().join("nodir.log")).unwrap_err();
    assert!(matches!(err.failure, Failure::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("working directory"), "{err}");
}

#[test]
fn failing_tool_reports_status_command_and_log_tail() {
    let log = out_dir().join("bad_syntax.log");
    let tool = Tool::new("yosys")
        .args(["-p", "read_verilog bad_syntax.v"])
        .current_dir(fixtures());
    let err = run_tool(&tool, &log).unwrap_err();
    assert_eq!(err.status().and_then(|s| s.code()), Some(1), "{err}");
    assert_eq!(err.tool, "yosys");
    assert!(
        err.command
            .ends_with("&& yosys -p 'read_verilog bad_syntax.v'"),
        "{}",
        err.command
    );
    assert!(
        !err.tail.is_empty() && err.tail.len() <= 20,
        "{:?}",
        err.tail
    );
    assert!(
        err.tail
            .iter()
            .any(|l| l.contains("bad_syntax.v:2: ERROR: syntax error")),
        "{:?}",
        err.tail
    );
    let msg = err.to_string();
    assert!(msg.starts_with("yosys failed: exit status 1\n"), "{msg}");
    assert!(msg.contains(&format!("log: {}", log.display())), "{msg}");
    assert!(
        msg.contains("| bad_syntax.v:2: ERROR: syntax error"),
        "{msg}"
    );
}
