//! Verilog export: every block as its own module `nic_<block>`.
//!
//! RustHDL's `generate_verilog` names the top module `top`; [`rename_top`] renames it so
//! that several blocks can sit in one synthesis or Verilator build.

use crate::NicConfig;
use rust_hdl::prelude::*;

/// Direction and width of one port of an exported module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub input: bool,
    pub width: usize,
}

/// One exported block: its short name (`cell_segmenter`), its Verilog module name
/// (`nic_cell_segmenter`), the Verilog text (the module plus its submodules, renamed
/// `nic_<name>__<sub>` so that files can be combined), its ports, and the Rust expression
/// that builds the same block (used by the co-simulation build to generate the RustHDL
/// side of each model).
#[derive(Clone, Debug)]
pub struct ExportedBlock {
    pub name: String,
    pub module: String,
    pub verilog: String,
    pub ports: Vec<Port>,
    pub rust_type: &'static str,
    pub rust_constructor: String,
}

/// Connect `block`, generate its Verilog and rename the modules after `name`.
pub fn export_block<U: Block>(
    name: impl Into<String>,
    mut block: U,
    rust_type: &'static str,
    rust_constructor: String,
) -> ExportedBlock {
    let name = name.into();
    block.connect_all();
    let module = format!("nic_{name}");
    let verilog = rename_top(&generate_verilog(&block), &module);
    let ports = top_ports(&verilog, &module);
    ExportedBlock {
        name,
        module,
        verilog,
        ports,
        rust_type,
        rust_constructor,
    }
}

/// Rename RustHDL's `top` module to `module` and its submodules `top$a$b` to
/// `module__a__b`, in module headers and instantiations.
pub fn rename_top(verilog: &str, module: &str) -> String {
    let rename = |name: &str| -> String {
        match name.strip_prefix("top") {
            Some("") => module.to_string(),
            Some(rest) if rest.starts_with('$') => format!("{module}{}", rest.replace('$', "__")),
            _ => name.to_string(),
        }
    };
    let mut out = String::with_capacity(verilog.len() + 64);
    for line in verilog.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let (keyword, rest) = match trimmed.strip_prefix("module ") {
            Some(rest) => ("module ", rest),
            None => ("", trimmed),
        };
        let name_len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        let is_module_or_instance = name == "top" || name.starts_with("top$");
        let follows = &rest[name_len..];
        if is_module_or_instance && (follows.starts_with('(') || follows.starts_with(' ')) {
            out.push_str(&format!("{indent}{keyword}{}{follows}", rename(name)));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// Ports of `module` as declared in RustHDL's Verilog (`input wire  [63:0] s_data;`).
pub fn top_ports(verilog: &str, module: &str) -> Vec<Port> {
    let mut ports = vec![];
    let mut inside = false;
    for line in verilog.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("module ") {
            inside = rest.starts_with(&format!("{module}("));
            continue;
        }
        if !inside {
            continue;
        }
        if t.starts_with("endmodule") {
            break;
        }
        let input = t.starts_with("input ");
        if !input && !t.starts_with("output ") {
            continue;
        }
        let decl = t.trim_end_matches(';');
        let width = match (decl.find('['), decl.find(':')) {
            (Some(a), Some(b)) if b > a => decl[a + 1..b]
                .trim()
                .parse::<usize>()
                .map(|msb| msb + 1)
                .unwrap_or(1),
            _ => 1,
        };
        let name = decl
            .split_whitespace()
            .last()
            .unwrap_or_default()
            .to_string();
        ports.push(Port { name, input, width });
    }
    ports
}

/// Every exported block for `config`, in dependency order (leaf blocks first, the tops
/// last): what `nic verilog`, `nic lint` and `nic synth` work on.
pub fn exported_blocks(config: &NicConfig) -> Vec<ExportedBlock> {
    datapath_blocks(config.cell_payload)
}

/// The blocks the co-simulation crate builds Verilator models of: the datapath blocks and
/// the NIC tops the test suite runs, at the default cell payload.
pub fn cosim_blocks() -> Vec<ExportedBlock> {
    datapath_blocks(crate::DEFAULT_CELL_PAYLOAD)
}

/// The cell datapath's blocks: CRC, segmenter, reassembler, and the datapath top.
pub fn datapath_blocks(cp: usize) -> Vec<ExportedBlock> {
    vec![
        export_block(
            "crc32",
            crate::Crc32::default(),
            "nic_rtl::Crc32",
            "nic_rtl::Crc32::default()".into(),
        ),
        export_block(
            "cell_segmenter",
            crate::CellSegmenter::new(cp),
            "nic_rtl::CellSegmenter",
            format!("nic_rtl::CellSegmenter::new({cp})"),
        ),
        export_block(
            "cell_reassembler",
            crate::CellReassembler::new(cp),
            "nic_rtl::CellReassembler",
            format!("nic_rtl::CellReassembler::new({cp})"),
        ),
        export_block(
            "cell_datapath",
            crate::CellDatapath::new(cp),
            "nic_rtl::CellDatapath",
            format!("nic_rtl::CellDatapath::new({cp})"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_renamed_and_ports_listed() {
        let blocks = exported_blocks(&NicConfig::default());
        let crc = blocks.iter().find(|b| b.name == "crc32").unwrap();
        assert!(crc.verilog.contains("module nic_crc32(clock,"));
        assert!(crc.verilog.contains("module nic_crc32__state_reg("));
        assert!(crc.verilog.contains("nic_crc32__step step("));
        assert!(!crc.verilog.contains("module top"));
        let data = crc.ports.iter().find(|p| p.name == "s_data").unwrap();
        assert_eq!((data.input, data.width), (true, 64));
        let out = crc.ports.iter().find(|p| p.name == "crc").unwrap();
        assert_eq!((out.input, out.width), (false, 32));
        assert_eq!(crc.ports.len(), 7);
    }
}
