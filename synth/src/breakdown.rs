//! Per-block resource breakdown of a top: where its LUTs, flip-flops and block RAMs go.
//!
//! [`synth_ice40_breakdown`] runs yosys `synth_ice40` on the whole top with the
//! `keep_hierarchy` attribute set on the top's direct children (the blocks `NicTop`
//! instantiates: `nic_top__sq`, `nic_top__rq`, ...), so each block is optimised on its own
//! (everything inside it flattened, nothing merged across block boundaries) and `stat`
//! counts it separately. The sum of the rows is therefore a little above the flattened
//! top's count ([`crate::synth_ice40`]), which optimises across the boundaries (constant
//! ports, unused outputs); the rows say which block to work on.
//!
//! Files under `out_dir/<module>_breakdown/`: `breakdown.ys`, `yosys.log`, `stat.json`,
//! `stat.txt`, `breakdown.json` (the rows).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ice40::{CellCounts, SynthError};
use crate::tool::Tool;

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

/// Synthesise `top` from `verilog` with its direct children kept as separate modules and
/// return one row per child plus [`TOP_GLUE`], largest LUT count first (glue last).
pub fn synth_ice40_breakdown(
    verilog: &Path,
    top: &str,
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
         synth_ice40 -top {top}\ntee -q -o stat.json stat -json\ntee -q -o stat.txt stat\n",
        verilog.display(),
        children.join(" ")
    );
    let script_path = dir.join("breakdown.ys");
    fs::write(&script_path, script).map_err(io(&script_path))?;
    let tool = Tool::new("yosys")
        .arg("-s")
        .arg("breakdown.ys")
        .current_dir(&dir);
    let run = tool.run_any_status(&dir.join("yosys.log"))?;
    if !run.status.success() {
        let errors = run
            .output
            .lines()
            .filter(|l| l.contains("ERROR:"))
            .map(|l| l.trim().to_string())
            .collect();
        return Err(run.error(&tool, errors).into());
    }
    let stat_path = dir.join("stat.json");
    let stat = fs::read_to_string(&stat_path).map_err(io(&stat_path))?;
    let rows = parse_breakdown(&stat, top).map_err(|detail| SynthError::Parse {
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

/// Rows of a breakdown from yosys `stat -json` of a hierarchical design: each module's
/// cells are its own primitives plus, recursively, those of the modules it instantiates.
pub fn parse_breakdown(text: &str, top: &str) -> Result<Breakdown, String> {
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
                let sub = total(kind, cells, depth + 1)?;
                c.luts += n * sub.luts;
                c.flip_flops += n * sub.flip_flops;
                c.block_rams += n * sub.block_rams;
                c.carries += n * sub.carries;
            } else {
                c.add_primitive(kind, n);
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
            let c = total(kind, &cells, 0)?;
            let instance = kind.strip_prefix(&prefix).unwrap_or(kind).to_string();
            rows.push(BlockShare {
                instance,
                module: kind.clone(),
                luts: n * c.luts,
                flip_flops: n * c.flip_flops,
                block_rams: n * c.block_rams,
                carries: n * c.carries,
            });
        } else {
            glue.add_primitive(kind, n);
        }
    }
    rows.sort_by(|a, b| b.luts.cmp(&a.luts).then(a.instance.cmp(&b.instance)));
    rows.push(BlockShare {
        instance: TOP_GLUE.to_string(),
        module: top.to_string(),
        luts: glue.luts,
        flip_flops: glue.flip_flops,
        block_rams: glue.block_rams,
        carries: glue.carries,
    });
    Ok(rows)
}

/// An aligned text table of a breakdown with a total line and each block's share of the
/// HX8K (7680 logic cells, 32 RAM4K).
pub fn render_breakdown(top: &str, rows: &[BlockShare]) -> String {
    let mut out = format!(
        "{top}: per block (yosys synth_ice40, each block flattened on its own)\n{:<22} {:>6} {:>6} {:>6} {:>7}\n",
        "block", "LUTs", "FFs", "RAM4K", "carries"
    );
    let mut sum = CellCounts::default();
    for r in rows {
        out.push_str(&format!(
            "{:<22} {:>6} {:>6} {:>6} {:>7}\n",
            r.instance, r.luts, r.flip_flops, r.block_rams, r.carries
        ));
        sum.luts += r.luts;
        sum.flip_flops += r.flip_flops;
        sum.block_rams += r.block_rams;
        sum.carries += r.carries;
    }
    out.push_str(&format!(
        "{:<22} {:>6} {:>6} {:>6} {:>7}\n",
        "total", sum.luts, sum.flip_flops, sum.block_rams, sum.carries
    ));
    out.push_str(&format!(
        "{:<22} {:>6} {:>6} {:>6}\n",
        "iCE40 HX8K", HX8K_LOGIC_CELLS, HX8K_LOGIC_CELLS, HX8K_BLOCK_RAMS
    ));
    out
}

/// Logic cells of the iCE40 HX8K (each one 4-input LUT and one flip-flop).
pub const HX8K_LOGIC_CELLS: u64 = 7680;
/// 4-kbit block RAMs (RAM4K, 256 x 16 at most 16 bits wide) of the iCE40 HX8K.
pub const HX8K_BLOCK_RAMS: u64 = 32;

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
        let rows = parse_breakdown(STAT, "nic_t").unwrap();
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
        assert!(parse_breakdown(STAT, "nic_other")
            .unwrap_err()
            .contains("nic_other"));
        let table = render_breakdown("nic_t", &rows);
        assert!(table.contains("total"), "{table}");
        assert!(
            table.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["total", "47", "7", "2", "5"]),
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
