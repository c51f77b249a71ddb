//! `nic lint`: Verilator `--lint-only -Wall` on every exported block through the one waiver file.

use super::verilog::write_all;
use nic_rtl::NicConfig;
use std::path::{Path, PathBuf};

/// The project's single lint waiver file; every waiver in it states its reason.
pub fn waiver_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("rtl/lint/verilator_waiver.vlt")
}

/// Export, then lint each block; prints every unwaived warning. Returns the number of warnings.
pub fn lint_all(dir: &Path, config: &NicConfig) -> Result<usize, String> {
    let waiver = waiver_file();
    let mut total = 0;
    for (block, path) in write_all(dir, config)? {
        let log = dir.join(format!("{}.lint.log", block.module));
        let report = nic_synth::lint(&[path.clone()], &block.module, &waiver, &log)
            .map_err(|e| e.to_string())?;
        if report.warnings.is_empty() {
            println!("lint {:<24} clean", block.module);
        } else {
            println!(
                "lint {:<24} {} warning(s) (log {})",
                block.module,
                report.warnings.len(),
                log.display()
            );
            for w in &report.warnings {
                println!("  %Warning-{} {}:{}: {}", w.rule, w.file, w.line, w.message);
            }
        }
        total += report.warnings.len();
    }
    Ok(total)
}
