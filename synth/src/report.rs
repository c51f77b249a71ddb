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
    /// Logic cells (`ICESTORM_LC`) nextpnr used for the block inside its timing wrapper
    /// (the wrapper's shift registers included), when nextpnr got that far.
    #[serde(default)]
    pub logic_cells: Option<u64>,
    /// Set when nextpnr could not place the wrapper on the HX8K: the over-full resources
    /// (`ICESTORM_LC 20287/7680`); `fmax_mhz` is then 0.
    #[serde(default)]
    pub does_not_fit: Option<String>,
    /// nextpnr's critical clock-to-clock path of the placed design.
    #[serde(default)]
    pub critical_path: Option<CriticalPath>,
}

/// The path that limits Fmax, from nextpnr's `--report` (`critical_paths`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CriticalPath {
    /// The cell the path starts at (a flip-flop or RAM, `dut.` = inside the block).
    pub from: String,
    /// The cell it ends at.
    pub to: String,
    /// LUTs (and carries) on the path.
    pub logic_levels: u32,
    /// Total delay, ns (logic plus routing plus clock-to-q and setup).
    pub delay_ns: f64,
}

impl SynthReport {
    /// The Fmax column: the frequency, or `does not fit: <over-full resources>`.
    pub fn fmax_text(&self) -> String {
        match &self.does_not_fit {
            Some(reason) => format!("does not fit: {}", short_misfit(reason)),
            None => format!("{:.2}", self.fmax_mhz),
        }
    }
}

/// The over-full resource counts of a misfit reason (`ICESTORM_LC 20287/7680`), without
/// nextpnr's sentence about the cell it could not place.
fn short_misfit(reason: &str) -> String {
    let counts: Vec<&str> = reason
        .split("; ")
        .filter(|part| part.starts_with("ICESTORM_") || part.starts_with("SB_"))
        .collect();
    if counts.is_empty() {
        reason.to_string()
    } else {
        counts.join(", ")
    }
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
                r.fmax_text(),
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
    for r in reports {
        if let Some(p) = &r.critical_path {
            out.push_str(&format!(
                "{}: critical path {:.2} ns, {} logic levels: {} -> {}\n",
                r.module, p.delay_ns, p.logic_levels, p.from, p.to
            ));
        }
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
            logic_cells: None,
            does_not_fit: None,
            critical_path: None,
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
    fn misfit_and_critical_path_are_shown() {
        let mut big = report("nic_top", 16383, 0.0);
        big.does_not_fit =
            Some("ICESTORM_LC 20287/7680; Unable to place cell 'x', no BELs remaining".into());
        let mut fast = report("nic_crc32", 530, 120.0);
        fast.critical_path = Some(CriticalPath {
            from: "dut.state_reg.q_DFFLC".into(),
            to: "out_reg_DFFLC".into(),
            logic_levels: 5,
            delay_ns: 8.33,
        });
        let t = render_table(&[big, fast]);
        assert!(
            t.contains("does not fit: ICESTORM_LC 20287/7680  100.00  NO"),
            "{t}"
        );
        assert!(
            t.contains("nic_crc32: critical path 8.33 ns, 5 logic levels: dut.state_reg.q_DFFLC -> out_reg_DFFLC"),
            "{t}"
        );
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
