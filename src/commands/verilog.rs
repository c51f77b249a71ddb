//! `nic verilog`: write one Verilog file per block.

use nic_rtl::export::{exported_blocks, ExportedBlock};
use nic_rtl::NicConfig;
use std::path::{Path, PathBuf};

/// Write every exported block as `<dir>/<module>.v`; returns the blocks and their paths.
pub fn write_all(dir: &Path, config: &NicConfig) -> Result<Vec<(ExportedBlock, PathBuf)>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut out = vec![];
    for block in exported_blocks(config) {
        let path = dir.join(format!("{}.v", block.module));
        std::fs::write(&path, &block.verilog)
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
        out.push((block, path));
    }
    Ok(out)
}
