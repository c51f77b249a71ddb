//! `nic waves list`: the scopes of a file and the signals in each, with widths.

use super::header::Header;
use std::collections::HashMap;
use std::io::Write;

/// Write every scope (indented by depth) and under it its signals with their widths;
/// a signal that reads the same values as one listed before (Verilator's ports in
/// `TOP` and in the top module) is marked `= <that path>`. Ends with a summary line.
pub fn write_listing(header: &Header, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{} ({:?}, timescale {} fs per tick): {} signals, {} distinct",
        header.path.display(),
        header.format,
        header.fs_per_tick,
        header.vars.len(),
        header.slots
    )?;
    let mut first_of_slot: HashMap<usize, String> = HashMap::new();
    let mut open: Vec<String> = Vec::new();
    for v in &header.vars {
        let common = open
            .iter()
            .zip(&v.scopes)
            .take_while(|(a, b)| a == b)
            .count();
        open.truncate(common);
        for s in &v.scopes[common..] {
            writeln!(out, "{}{s}/", "  ".repeat(open.len()))?;
            open.push(s.clone());
        }
        let indent = "  ".repeat(open.len());
        let width = if v.width == 0 {
            "string".to_string()
        } else {
            format!("{} bit{}", v.width, if v.width == 1 { "" } else { "s" })
        };
        let path = v.path();
        match first_of_slot.get(&v.slot) {
            Some(first) => writeln!(out, "{indent}{:<32} {width:>9}  = {first}", v.name)?,
            None => {
                writeln!(out, "{indent}{:<32} {width:>9}", v.name)?;
                first_of_slot.insert(v.slot, path);
            }
        }
    }
    Ok(())
}
