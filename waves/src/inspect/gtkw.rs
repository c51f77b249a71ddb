//! GTKWave save files (`.gtkw`) and Surfer command files (`.sucl`) that open a
//! waveform on the groups of [`super::nic_groups`].

use super::groups::Group;
use super::header::{Header, Var};
use std::fmt::Write as _;
use std::path::Path;

// GTKWave trace flags (gtkwave's analyzer.h).
const TR_HEX: u32 = 0x2;
const TR_BIN: u32 = 0x8;
const TR_RJUSTIFY: u32 = 0x20;
const TR_BLANK: u32 = 0x200;
const TR_COLLAPSED: u32 = 0x1000;
const TR_CLOSED: u32 = 0x40_0000;
const TR_GRP_BEGIN: u32 = 0x80_0000;
const TR_GRP_END: u32 = 0x100_0000;

/// A GTKWave save file for `header`'s file (named by `dumpfile`, written as given):
/// one GTKWave group per [`Group`], nested, closed where the group is; bits in binary,
/// vectors in hex.
pub fn write_gtkw(header: &Header, groups: &[Group], dumpfile: &Path) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "[*] Written by nic waves gtkw: the NIC's signals by block"
    );
    let _ = writeln!(s, "[dumpfile] \"{}\"", dumpfile.display());
    let _ = writeln!(s, "[timestart] 0");
    let _ = writeln!(s, "[size] 1600 1000");
    let _ = writeln!(s, "[pos] -1 -1");
    let _ = writeln!(s, "[sst_width] 260");
    let _ = writeln!(s, "[signals_width] 320");
    let _ = writeln!(s, "[sst_expanded] 1");
    let _ = writeln!(s, "[sst_vpaned_height] 320");
    if let Some(top) = header.vars.first().and_then(|v| v.scopes.first()) {
        let _ = writeln!(s, "[treeopen] {top}.");
    }
    for g in groups {
        gtkw_group(&mut s, g);
    }
    let _ = writeln!(s, "[pattern_trace] 1");
    let _ = writeln!(s, "[pattern_trace] 0");
    s
}

fn gtkw_group(s: &mut String, g: &Group) {
    let begin = TR_GRP_BEGIN | TR_BLANK | if g.closed { TR_CLOSED } else { 0 };
    let _ = writeln!(s, "@{begin:x}");
    let _ = writeln!(s, "-{}", g.title);
    let mut last_flags = None;
    for v in &g.vars {
        let flags = TR_RJUSTIFY | if v.width > 1 { TR_HEX } else { TR_BIN };
        if last_flags != Some(flags) {
            let _ = writeln!(s, "@{flags:x}");
            last_flags = Some(flags);
        }
        let _ = writeln!(s, "{}", gtkwave_name(v));
    }
    for c in &g.children {
        gtkw_group(s, c);
    }
    let end = TR_GRP_END
        | TR_BLANK
        | if g.closed {
            TR_CLOSED | TR_COLLAPSED
        } else {
            0
        };
    let _ = writeln!(s, "@{end:x}");
    let _ = writeln!(s, "-{}", g.title);
}

/// GTKWave's name of a variable: its path, with `[msb:lsb]` for vectors.
fn gtkwave_name(v: &Var) -> String {
    match &v.range {
        Some(r) if v.width > 1 => format!("{}{r}", v.path()),
        _ if v.width > 1 => format!("{}[{}:0]", v.path(), v.width - 1),
        _ => v.path(),
    }
}

/// A Surfer command file: a divider per group (Surfer's command files have no
/// groups), then `variable_add` for each signal by its full path. Run it with
/// `surfer FILE --command-file FILE.sucl`.
pub fn write_surfer(groups: &[Group]) -> String {
    let mut s = String::new();
    for g in groups {
        surfer_group(&mut s, g, "");
    }
    s
}

fn surfer_group(s: &mut String, g: &Group, parent: &str) {
    let title = if parent.is_empty() {
        g.title.clone()
    } else {
        format!("{parent} / {}", g.title)
    };
    let _ = writeln!(s, "divider_add {title}");
    for v in &g.vars {
        let _ = writeln!(s, "variable_add {}", v.path());
    }
    for c in &g.children {
        surfer_group(s, c, &title);
    }
}
