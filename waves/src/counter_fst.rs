//! Verilator's FST of the test counter (`waves/tests/fixtures/counter.v` stepped by
//! `counter_harness.cpp` built with `--trace-fst`), built on demand for the tests of the FST reader and of
//! `nic waves`: an FST is a build product, not a file kept in git.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the counter with `verilator --trace-fst` in `dir` and runs it there; returns
/// the path of `counter_verilator.fst`. The error names the command that failed.
pub fn build_counter_fst(dir: &Path) -> Result<PathBuf, String> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let run = |cmd: &mut Command| -> Result<(), String> {
        let out = cmd
            .current_dir(dir)
            .output()
            .map_err(|e| format!("{cmd:?}: {e} (Verilator is installed by scripts/setup.sh)"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{cmd:?}: {}", String::from_utf8_lossy(&out.stderr)))
        }
    };
    run(Command::new("verilator")
        .args([
            "--cc",
            "--exe",
            "--build",
            "--trace-fst",
            "-Wno-WIDTH",
            "--top-module",
            "top",
            "--prefix",
            "Vnic_counter",
        ])
        .arg(fixtures.join("counter.v"))
        .arg(fixtures.join("counter_harness.cpp")))?;
    run(&mut Command::new(dir.join("obj_dir/Vnic_counter")))?;
    Ok(dir.join("counter_verilator.fst"))
}
