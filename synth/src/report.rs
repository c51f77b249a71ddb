//! Synthesis results: [`SynthReport`], its text table and its JSON file.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ice40::SynthError;

/// Resource use and timing of one block on the iCE40 HX8K.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthReport {
    /// Verilog module name (`nic_cell_segmenter`).
    pub module: String,
    /// `SB_LUT4` cells of the block alone.
    pub luts: u64,
    /// All `SB_DFF*` cells of the block alone.
    pub flip_flops: u64,
    /// All `SB_RAM40_4K*` cells (4 kbit block RAMs) of the block alone.
    pub block_rams: u64,
    /// `SB_CARRY` cells of the block alone.
    pub carries: u64,
    /// Fmax reported by nextpnr for the block inside its timing wrapper (register to
    /// register through the block).
    pub fmax_mhz: f64,
    /// The frequency nextpnr was asked for.
    pub target_mhz: f64,
    /// `fmax_mhz >= target_mhz`.
    pub meets_target: bool,
    /// Folder holding the logs, scripts, netlists and reports of this run.
    pub log_dir: PathBuf,
}

/// An aligned text table of `reports`, one line per block:
///
/// ```text
/// block                LUTs  FFs  BRAMs  Fmax MHz  target  met
/// nic_cell_segmenter    812  640      2     87.31  100.00  NO
/// ```
pub fn render_table(reports: &[SynthReport]) -> String {
    let header = ["block", "LUTs", "FFs", "BRAMs", "Fmax MHz", "target", "met"];
    let rows: Vec<[String; 7]> = reports
        .iter()
        .map(|r| {
            [
                r.module.clone(),
                r.luts.to_string(),
                r.flip_flops.to_string(),
                r.block_rams.to_string(),
                format!("{:.2}", r.fmax_mhz),
                format!("{:.2}", r.target_mhz),
                if r.meets_target { "yes" } else { "NO" }.to_string(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: &[&str]| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if i == 0 || i == 6 {
                s.push_str(&format!("{cell:<w$}"));
            } else {
                s.push_str(&format!("{cell:>w$}"));
            }
        }
        s.truncate(s.trim_end().len());
        s.push('\n');
        s
    };
    let mut out = line(&header);
    for row in &rows {
        out.push_str(&line(&row.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    out
}

/// Write `reports` as a pretty-printed JSON array to `path` (parent folders created).
pub fn write_json(reports: &[SynthReport], path: &Path) -> Result<(), SynthError> {
    let io = |source| SynthError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(io)?;
    }
    let mut text = serde_json::to_string_pretty(reports).expect("SynthReport always serialises");
    text.push('\n');
    fs::write(path, text).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(module: &str, luts: u64, fmax: f64) -> SynthReport {
        SynthReport {
            module: module.into(),
            luts,
            flip_flops: 45,
            block_rams: 1,
            carries: 12,
            fmax_mhz: fmax,
            target_mhz: 100.0,
            meets_target: fmax >= 100.0,
            log_dir: PathBuf::from("synth/out/default").join(module),
        }
    }

    #[test]
    fn table_is_aligned() {
        let t = render_table(&[
            report("nic_probe", 48, 171.234),
            report("nic_cell_segmenter", 1234, 87.5),
        ]);
        let expected = "\
block               LUTs  FFs  BRAMs  Fmax MHz  target  met
nic_probe             48   45      1    171.23  100.00  yes
nic_cell_segmenter  1234   45      1     87.50  100.00  NO
";
        assert_eq!(t, expected);
    }

    #[test]
    fn json_round_trips() {
        let reports = vec![report("nic_probe", 48, 171.2)];
        let text = serde_json::to_string(&reports).unwrap();
        assert!(text.contains("\"fmax_mhz\":171.2"), "{text}");
        let back: Vec<SynthReport> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, reports);
    }
}
