//! Synthesis results: [`SynthReport`], its text table and its JSON file.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::device::{Capacity, Device};
use crate::flow::{CellCounts, SynthError, SynthInput};

/// Resource use and timing of one block on one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthReport {
    /// Verilog module name (`nic_cell_segmenter`).
    pub module: String,
    /// LUT4 cells of the block alone (`LUT4`, `SB_LUT4`).
    pub luts: u64,
    /// Flip-flops of the block alone (`TRELLIS_FF`, all `SB_DFF*`).
    pub flip_flops: u64,
    /// Block RAMs of the block alone (`DP16KD` of 18 kbit, all `SB_RAM40_4K*` of 4 kbit).
    pub block_rams: u64,
    /// Carry cells of the block alone (`CCU2C` of two bits, `SB_CARRY` of one).
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
    /// Logic cells (`TRELLIS_COMB`, `ICESTORM_LC`) nextpnr used for the block inside its
    /// timing wrapper (the wrapper's shift registers included), when nextpnr got that far.
    #[serde(default)]
    pub logic_cells: Option<u64>,
    /// Set when nextpnr could not place the wrapper on the device: the over-full
    /// resources (`ICESTORM_LC 20287/7680`, `DP16KD 64/56`); `fmax_mhz` is then 0.
    #[serde(default)]
    pub does_not_fit: Option<String>,
    /// nextpnr's critical clock-to-clock path of the placed design.
    #[serde(default)]
    pub critical_path: Option<CriticalPath>,
    /// The device synthesised for (`"ecp5-85"`, `"ecp5-25"`, `"hx8k"`); a report without
    /// it is an HX8K one.
    #[serde(default = "hx8k")]
    pub device: Device,
    /// The device's LUTs, flip-flops and block RAMs (zero in a report without it).
    #[serde(default)]
    pub capacity: Capacity,
    /// Distributed RAMs of the block alone (ECP5 `TRELLIS_DPR16X4`, 16 x 4 bits, built
    /// from LUT4s that `luts` does not count); 0 on the HX8K.
    #[serde(default)]
    pub lut_rams: u64,
}

fn hx8k() -> Device {
    Device::Hx8k
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
    /// A report of `input`'s block with the yosys `counts` and no timing yet (`fmax_mhz`
    /// 0, `meets_target` false, no nextpnr figures).
    pub fn of_counts(input: &SynthInput, counts: &CellCounts, log_dir: PathBuf) -> Self {
        SynthReport {
            module: input.module.clone(),
            luts: counts.luts,
            flip_flops: counts.flip_flops,
            block_rams: counts.block_rams,
            carries: counts.carries,
            fmax_mhz: 0.0,
            target_mhz: input.target_mhz,
            meets_target: false,
            log_dir,
            logic_cells: None,
            does_not_fit: None,
            critical_path: None,
            device: input.device,
            capacity: input.device.capacity(),
            lut_rams: counts.lut_rams,
        }
    }

    /// The Fmax column: the frequency, or `does not fit: <over-full resources>`.
    pub fn fmax_text(&self) -> String {
        match &self.does_not_fit {
            Some(reason) => format!("does not fit: {}", short_misfit(reason)),
            None => format!("{:.2}", self.fmax_mhz),
        }
    }
}

/// The over-full resource counts of a misfit reason (`ICESTORM_LC 20287/7680`,
/// `DP16KD 64/56`), without nextpnr's sentence about the cell it could not place.
fn short_misfit(reason: &str) -> String {
    let is_count = |part: &str| {
        part.split_once(' ').is_some_and(|(kind, counts)| {
            !kind.is_empty()
                && kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && counts.split_once('/').is_some_and(|(a, b)| {
                    !a.is_empty()
                        && !b.is_empty()
                        && a.chars().chain(b.chars()).all(|c| c.is_ascii_digit())
                })
        })
    };
    let counts: Vec<&str> = reason.split("; ").filter(|p| is_count(p)).collect();
    if counts.is_empty() {
        reason.to_string()
    } else {
        counts.join(", ")
    }
}

/// `reports` as a Markdown table for docs/measurements.md (`nic measurements synth`): per
/// block and device, LUT4s, flip-flops, block RAMs and logic cells against the device's
/// capacity, Fmax and the critical path (delay, logic levels).
pub fn render_markdown(reports: &[SynthReport]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "| block | device | LUTs | FFs | block RAMs | logic cells | Fmax | critical path |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    for r in reports {
        let c = r.device.capacity();
        let fmax = match &r.does_not_fit {
            Some(why) => format!("does not fit: {why}"),
            None => format!("{:.2} MHz", r.fmax_mhz),
        };
        let path = r.critical_path.as_ref().map_or("-".into(), |p| {
            format!("{:.2} ns, {} levels", p.delay_ns, p.logic_levels)
        });
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} / {} | {} / {} | {fmax} | {path} |",
            r.module,
            r.device.part(),
            r.luts,
            r.flip_flops,
            r.block_rams,
            c.block_rams,
            r.logic_cells.map_or("-".into(), |n| n.to_string()),
            c.luts
        );
    }
    s
}

/// An aligned text table of `reports`, one line per block, then one line with the
/// capacity of each device the reports are for:
///
/// ```text
/// block                        LUTs    FFs  BRAMs    Fmax MHz  target  met
/// nic_cell_segmenter            812    640      2       87.31  100.00  NO
/// LFE5U-85F CABGA381 speed 8  83640  83640    208  (capacity)
/// ```
pub fn render_table(reports: &[SynthReport]) -> String {
    let header = ["block", "LUTs", "FFs", "BRAMs", "Fmax MHz", "target", "met"];
    let mut rows: Vec<[String; 7]> = reports
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
    let mut devices: Vec<Device> = vec![];
    for r in reports {
        if !devices.contains(&r.device) {
            devices.push(r.device);
        }
    }
    for d in devices {
        let c = d.capacity();
        rows.push([
            d.part().to_string(),
            c.luts.to_string(),
            c.flip_flops.to_string(),
            c.block_rams.to_string(),
            "(capacity)".to_string(),
            String::new(),
            String::new(),
        ]);
    }
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
            device: Device::Hx8k,
            capacity: Device::Hx8k.capacity(),
            lut_rams: 0,
        }
    }

    #[test]
    fn table_is_aligned() {
        let t = render_table(&[
            report("nic_probe", 48, 171.234),
            report("nic_cell_segmenter", 1234, 87.5),
        ]);
        let expected = "\
block               LUTs   FFs  BRAMs    Fmax MHz  target  met
nic_probe             48    45      1      171.23  100.00  yes
nic_cell_segmenter  1234    45      1       87.50  100.00  NO
iCE40 HX8K ct256    7680  7680     32  (capacity)
";
        assert_eq!(t, expected);
    }

    #[test]
    fn each_device_gets_a_capacity_line() {
        let mut e = report("nic_top", 12144, 68.35);
        e.device = Device::Ecp5_85;
        let mut small = e.clone();
        small.device = Device::Ecp5_25;
        let t = render_table(&[e.clone(), small, e]);
        let caps: Vec<&str> = t.lines().filter(|l| l.contains("(capacity)")).collect();
        assert_eq!(caps.len(), 2, "{t}");
        assert!(
            caps[0].starts_with("LFE5U-85F CABGA381 speed 8  83640  83640    208"),
            "{t}"
        );
        assert!(
            caps[1].starts_with("LFE5U-25F CABGA381 speed 8  24288  24288     56"),
            "{t}"
        );
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
        let mut bram = report("nic_fixture_bramhog", 547, 0.0);
        bram.does_not_fit = Some(
            "DP16KD 64/56; Unable to place cell 'dut.bank[49].mem.0.0', no BELs remaining to implement cell type 'DP16KD'".into(),
        );
        assert_eq!(bram.fmax_text(), "does not fit: DP16KD 64/56");
        assert!(
            t.contains("nic_crc32: critical path 8.33 ns, 5 logic levels: dut.state_reg.q_DFFLC -> out_reg_DFFLC"),
            "{t}"
        );
    }

    #[test]
    fn json_round_trips() {
        let mut reports = vec![report("nic_probe", 48, 171.2)];
        reports[0].device = Device::Ecp5_25;
        reports[0].capacity = Device::Ecp5_25.capacity();
        let text = serde_json::to_string(&reports).unwrap();
        assert!(text.contains("\"fmax_mhz\":171.2"), "{text}");
        assert!(text.contains("\"device\":\"ecp5-25\""), "{text}");
        assert!(
            text.contains("\"capacity\":{\"luts\":24288,\"flip_flops\":24288,\"block_rams\":56}"),
            "{text}"
        );
        let back: Vec<SynthReport> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, reports);
    }

    #[test]
    fn a_report_without_device_fields_reads_as_hx8k() {
        let text = r#"[{"module": "nic_probe", "luts": 48, "flip_flops": 45, "block_rams": 1,
            "carries": 12, "fmax_mhz": 171.2, "target_mhz": 100.0, "meets_target": true,
            "log_dir": "synth/out/default/nic_probe"}]"#;
        let back: Vec<SynthReport> = serde_json::from_str(text).unwrap();
        assert_eq!(back[0].device, Device::Hx8k);
        assert_eq!(back[0].lut_rams, 0);
    }
}
