//! Per-block resource breakdown of a top: where its LUTs, flip-flops and block RAMs go.
//!
//! [`synth_breakdown`] runs the device's yosys synthesis (`synth_ecp5`, `synth_ice40`)
//! on the whole top with the `keep_hierarchy` attribute set on the top's direct children
//! (the blocks `NicTop` instantiates: `nic_top__sq`, `nic_top__rq`, ...), so each block is
//! optimised on its own (everything inside it flattened, nothing merged across block
//! boundaries) and `stat` counts it separately. The sum of the rows is therefore a little
//! above the flattened top's count ([`crate::synth_block`]), which optimises across the
//! boundaries (constant ports, unused outputs); the rows say which block to work on.
//!
//! Files under `out_dir/<module>_breakdown/`: `breakdown.ys`, `yosys.log`, `stat.json`,
//! `stat.txt`, `breakdown.json` (the rows).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::device::Device;
use crate::flow::{run_yosys, CellCounts, SynthError};

/// One block of a top (or the top's own glue logic) and its cells.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockShare {
    /// Instance name inside the top (`sq`), or `(top glue)` for the top's own cells.
    pub instance: String,
    /// Module name (`nic_top__sq`).
    pub module: String,
    pub luts: u64,
    pub flip_flops: u64,
    pub block_rams: u64,
    pub carries: u64,
    /// Distributed RAMs (ECP5 `TRELLIS_DPR16X4`), not in `luts`.
    #[serde(default)]
    pub lut_rams: u64,
}

impl BlockShare {
    fn new(instance: String, module: String, c: &CellCounts) -> Self {
        BlockShare {
            instance,
            module,
            luts: c.luts,
            flip_flops: c.flip_flops,
            block_rams: c.block_rams,
            carries: c.carries,
            lut_rams: c.lut_rams,
        }
    }

    fn counts(&self) -> CellCounts {
        CellCounts {
            luts: self.luts,
            flip_flops: self.flip_flops,
            block_rams: self.block_rams,
            carries: self.carries,
            lut_rams: self.lut_rams,
        }
    }
}

/// The rows of a breakdown: one per direct child of the top, then the top's own cells.
pub type Breakdown = Vec<BlockShare>;

/// Name of the row holding the top's own cells (wiring logic between the blocks).
pub const TOP_GLUE: &str = "(top glue)";

/// The direct children of `top` in RustHDL's Verilog, renamed by `nic-rtl`'s export:
/// modules named `<top>__<instance>` (one `__` after the top's name, or two with an
/// element index, `<top>__tpt__0` for a `Vec` of blocks; deeper modules are
/// `<top>__<instance>__<sub>`).
pub fn direct_children(verilog: &str, top: &str) -> Vec<String> {
    let prefix = format!("{top}__");
    let mut out = vec![];
    for line in verilog.lines() {
        let Some(rest) = line.trim_start().strip_prefix("module ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        if let Some(inst) = name.strip_prefix(&prefix) {
            // `tpt__0`: element 0 of a `Vec` of blocks, still a direct child.
            let parts: Vec<&str> = inst.split("__").collect();
            let direct = match parts.as_slice() {
                [one] => !one.is_empty(),
                [one, index] => !one.is_empty() && index.chars().all(|c| c.is_ascii_digit()),
                _ => false,
            };
            if direct && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// Synthesise `top` from `verilog` for `device` with its direct children kept as separate
/// modules and return one row per child plus [`TOP_GLUE`], largest LUT count first (glue
/// last).
pub fn synth_breakdown(
    verilog: &Path,
    top: &str,
    device: Device,
    out_dir: &Path,
) -> Result<Breakdown, SynthError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SynthError::Io { path, source }
    };
    let dir = std::path::absolute(out_dir.join(format!("{top}_breakdown"))).map_err(io(out_dir))?;
    fs::create_dir_all(&dir).map_err(io(&dir))?;
    let verilog = std::path::absolute(verilog).map_err(io(verilog))?;
    let text = fs::read_to_string(&verilog).map_err(io(&verilog))?;
    let children = direct_children(&text, top);
    if children.is_empty() {
        return Err(SynthError::BadInput {
            module: top.to_string(),
            reason: format!(
                "{} has no module named {top}__<instance>: nothing to break down",
                verilog.display()
            ),
        });
    }
    let script = format!(
        "# nic-synth: per-block breakdown of {top} (children kept, each flattened)\n\
         read_verilog \"{}\"\nhierarchy -top {top}\nsetattr -mod -set keep_hierarchy 1 {}\n\
         {} -top {top}\ntee -q -o stat.json stat -json\ntee -q -o stat.txt stat\n",
        verilog.display(),
        children.join(" "),
        device.yosys_synth()
    );
    let script_path = dir.join("breakdown.ys");
    fs::write(&script_path, script).map_err(io(&script_path))?;
    run_yosys(&dir, "breakdown.ys", "yosys.log")?;
    let stat_path = dir.join("stat.json");
    let stat = fs::read_to_string(&stat_path).map_err(io(&stat_path))?;
    let rows = parse_breakdown(&stat, top, device).map_err(|detail| SynthError::Parse {
        what: "per-block cell counts",
        path: stat_path.clone(),
        detail,
    })?;
    let json_path = dir.join("breakdown.json");
    let mut json = serde_json::to_string_pretty(&rows).expect("rows serialise");
    json.push('\n');
    fs::write(&json_path, json).map_err(io(&json_path))?;
    Ok(rows)
}

/// Rows of a breakdown from yosys `stat -json` of a hierarchical design for `device`: each
/// module's cells are its own primitives plus, recursively, those of the modules it
/// instantiates.
pub fn parse_breakdown(text: &str, top: &str, device: Device) -> Result<Breakdown, String> {
    let start = text.find('{').ok_or("no JSON object")?;
    let v: Value = serde_json::from_str(&text[start..]).map_err(|e| e.to_string())?;
    let modules = v
        .get("modules")
        .and_then(Value::as_object)
        .ok_or("no \"modules\" object")?;
    // Module name (without yosys' leading backslash) -> cell type -> count.
    let mut cells: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for (name, m) in modules {
        let by_type = m
            .get("num_cells_by_type")
            .and_then(Value::as_object)
            .ok_or_else(|| format!("module {name} has no \"num_cells_by_type\""))?;
        let mut counts = BTreeMap::new();
        for (kind, n) in by_type {
            let n = n
                .as_u64()
                .ok_or_else(|| format!("{name}: count of {kind} is not a number"))?;
            counts.insert(kind.trim_start_matches('\\').to_string(), n);
        }
        cells.insert(name.trim_start_matches('\\').to_string(), counts);
    }
    fn total(
        module: &str,
        cells: &BTreeMap<String, BTreeMap<String, u64>>,
        device: Device,
        depth: usize,
    ) -> Result<CellCounts, String> {
        if depth > 64 {
            return Err(format!("module hierarchy too deep at {module}"));
        }
        let own = cells
            .get(module)
            .ok_or_else(|| format!("no module {module} in the statistics"))?;
        let mut c = CellCounts::default();
        for (kind, &n) in own {
            if cells.contains_key(kind) {
                c.add_times(&total(kind, cells, device, depth + 1)?, n);
            } else {
                c.add_primitive(device, kind, n);
            }
        }
        Ok(c)
    }
    let own = cells
        .get(top)
        .ok_or_else(|| format!("no module {top} in the statistics"))?;
    let prefix = format!("{top}__");
    let mut rows = vec![];
    let mut glue = CellCounts::default();
    for (kind, &n) in own {
        if cells.contains_key(kind) {
            let mut c = CellCounts::default();
            c.add_times(&total(kind, &cells, device, 0)?, n);
            let instance = kind.strip_prefix(&prefix).unwrap_or(kind).to_string();
            rows.push(BlockShare::new(instance, kind.clone(), &c));
        } else {
            glue.add_primitive(device, kind, n);
        }
    }
    rows.sort_by(|a, b| b.luts.cmp(&a.luts).then(a.instance.cmp(&b.instance)));
    rows.push(BlockShare::new(
        TOP_GLUE.to_string(),
        top.to_string(),
        &glue,
    ));
    Ok(rows)
}

/// An aligned text table of a breakdown with a total line and the device's capacity
/// (ECP5 adds a column of distributed RAMs, `TRELLIS_DPR16X4`).
pub fn render_breakdown(top: &str, device: Device, rows: &[BlockShare]) -> String {
    let lut_rams = !matches!(device, Device::Hx8k);
    let line = |name: &str, c: &CellCounts, carries: String| {
        let mut l = format!(
            "{name:<22} {:>6} {:>6} {:>6} {carries:>7}",
            c.luts, c.flip_flops, c.block_rams
        );
        if lut_rams && !carries.is_empty() {
            l.push_str(&format!(" {:>7}", c.lut_rams));
        }
        l.truncate(l.trim_end().len());
        l + "\n"
    };
    let mut out = format!(
        "{top}: per block on {} (yosys {}, each block flattened on its own)\n{:<22} {:>6} {:>6} {:>6} {:>7}{}\n",
        device.part(),
        device.yosys_synth(),
        "block",
        "LUTs",
        "FFs",
        device.block_ram_name(),
        "carries",
        if lut_rams { " LUTRAMs" } else { "" }
    );
    let mut sum = CellCounts::default();
    for r in rows {
        let c = r.counts();
        out.push_str(&line(&r.instance, &c, c.carries.to_string()));
        sum.add_times(&c, 1);
    }
    out.push_str(&line("total", &sum, sum.carries.to_string()));
    let cap = device.capacity();
    let cap = CellCounts {
        luts: cap.luts,
        flip_flops: cap.flip_flops,
        block_rams: cap.block_rams,
        ..CellCounts::default()
    };
    out.push_str(&line(device.part(), &cap, String::new()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `stat -json` shape of yosys 0.23 for a top with two kept children, one of which
    /// instantiates a kept grandchild.
    const STAT: &str = r#"{
   "creator": "Yosys 0.23",
   "modules": {
      "\\nic_t": {"num_cells_by_type": {"SB_LUT4": 3, "SB_DFF": 1, "nic_t__a": 1, "nic_t__b": 1}},
      "\\nic_t__a": {"num_cells_by_type": {"SB_LUT4": 10, "SB_DFFE": 4, "SB_RAM40_4K": 2}},
      "\\nic_t__b": {"num_cells_by_type": {"SB_LUT4": 20, "SB_CARRY": 5, "nic_t__b__c": 2}},
      "\\nic_t__b__c": {"num_cells_by_type": {"SB_LUT4": 7, "SB_DFFSR": 1}}
   }
}"#;

    #[test]
    fn rows_sum_children_recursively_and_keep_glue() {
        let rows = parse_breakdown(STAT, "nic_t", Device::Hx8k).unwrap();
        let row = |i: &str| rows.iter().find(|r| r.instance == i).unwrap().clone();
        assert_eq!(rows[0].instance, "b", "largest first: {rows:?}");
        let b = row("b");
        assert_eq!(
            (b.luts, b.flip_flops, b.block_rams, b.carries),
            (34, 2, 0, 5)
        );
        let a = row("a");
        assert_eq!((a.luts, a.flip_flops, a.block_rams), (10, 4, 2));
        let glue = rows.last().unwrap();
        assert_eq!(glue.instance, TOP_GLUE);
        assert_eq!((glue.luts, glue.flip_flops), (3, 1));
        assert!(parse_breakdown(STAT, "nic_other", Device::Hx8k)
            .unwrap_err()
            .contains("nic_other"));
        let table = render_breakdown("nic_t", Device::Hx8k, &rows);
        assert!(table.contains("total"), "{table}");
        assert!(
            table.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["total", "47", "7", "2", "5"]),
            "{table}"
        );
        assert!(
            table.ends_with("iCE40 HX8K ct256         7680   7680     32\n"),
            "{table}"
        );
    }

    /// The same shape with ECP5 primitives (yosys 0.23 `synth_ecp5` names).
    const STAT_ECP5: &str = r#"{
   "modules": {
      "\\nic_t": {"num_cells_by_type": {"LUT4": 3, "TRELLIS_FF": 1, "nic_t__a": 1, "nic_t__b": 2}},
      "\\nic_t__a": {"num_cells_by_type": {"LUT4": 10, "TRELLIS_FF": 4, "DP16KD": 2, "PFUMX": 6}},
      "\\nic_t__b": {"num_cells_by_type": {"LUT4": 20, "CCU2C": 5, "TRELLIS_DPR16X4": 3, "L6MUX21": 1}}
   }
}"#;

    #[test]
    fn ecp5_rows_count_dp16kd_ccu2c_and_lut_rams() {
        let rows = parse_breakdown(STAT_ECP5, "nic_t", Device::Ecp5_85).unwrap();
        let b = &rows[0];
        assert_eq!(b.instance, "b");
        assert_eq!(
            (b.luts, b.flip_flops, b.block_rams, b.carries, b.lut_rams),
            (40, 0, 0, 10, 6)
        );
        let a = &rows[1];
        assert_eq!((a.luts, a.flip_flops, a.block_rams), (10, 4, 2));
        let table = render_breakdown("nic_t", Device::Ecp5_85, &rows);
        assert!(table.contains("DP16KD carries LUTRAMs"), "{table}");
        assert!(
            table
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>()
                    == ["total", "53", "5", "2", "10", "6"]),
            "{table}"
        );
        assert!(
            table.ends_with("LFE5U-85F CABGA381 speed 8  83640  83640    208\n"),
            "{table}"
        );
    }

    #[test]
    fn direct_children_are_one_level_below_the_top() {
        let v = "module nic_t(clock);\nendmodule\nmodule nic_t__a(clock);\nendmodule\n\
                 module nic_t__b(d);\nendmodule\nmodule nic_t__b__c(d);\nendmodule\n\
                 module nic_t__v__0(d);\nendmodule\nmodule nic_t__v__0__q(d);\nendmodule\n\
                 module other__x(d);\nendmodule\n";
        assert_eq!(
            direct_children(v, "nic_t"),
            ["nic_t__a", "nic_t__b", "nic_t__v__0"]
        );
    }
}
