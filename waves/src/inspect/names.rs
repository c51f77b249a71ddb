//! Names that two simulators give the same signal.
//!
//! Verilator puts the ports under `TOP` and again, with the same identifiers, under
//! the instance of the top module (`TOP.top.count`; the co-simulation names them
//! `uut` and `uut.nic_top_tpt256`), and flattens a sub-block's ports with `$`
//! (`TOP.top.counter$q`) besides listing them in the sub-module
//! (`TOP.top.counter.q`). RustHDL writes `uut.count` and `uut.counter.q`.
//!
//! A signal's *design name* drops the outermost scope, then descends into a single
//! child scope as long as that child re-declares every variable of the scope above
//! (Verilator's top instance), and writes `$` as `.`. Both examples above become
//! `count` and `counter.q`.
//!
//! A scenario run's waves also hold the protocol's marker signals in a top-level scope
//! [`MARKER_SCOPE`] beside the design: they are not part of the design, and their
//! design names keep the scope (`markers.booting_sent`).

use super::header::{Header, Var};
use std::collections::{HashMap, HashSet};

/// The top-level scope of a scenario run's marker signals.
pub const MARKER_SCOPE: &str = "markers";

/// The marker signals a scenario run writes (docs/waves.md, "Scenario waves"), in reading
/// order: the levels, then what this NIC sent, what it received, and the faults that hit
/// its cells. The testbench declares them in this order (bit `i` = `MARKERS[i]`) and the
/// GTKWave and Surfer views list them in it.
pub const MARKERS: [&str; 12] = [
    "powered",
    "link_up",
    "rdma_enabled",
    "booting_sent",
    "rdma_ready_sent",
    "booting_received",
    "ack_received",
    "nack_received",
    "rdma_ready_received",
    "cell_dropped",
    "cell_corrupted",
    "cell_delayed",
];

/// Whether `v` is one of the marker signals.
pub fn is_marker(v: &Var) -> bool {
    v.scopes.len() == 1 && v.scopes[0] == MARKER_SCOPE
}

/// Per variable of `header` (same order), its design name.
pub fn design_names(header: &Header) -> Vec<String> {
    let root = design_root(header);
    header
        .vars
        .iter()
        .map(|v| {
            let skip = if is_marker(v) {
                0
            } else if v.scopes.starts_with(&root) {
                root.len()
            } else {
                v.scopes.len().min(1)
            };
            let mut parts: Vec<&str> = v.scopes[skip..].iter().map(String::as_str).collect();
            parts.push(&v.name);
            parts.join(".").replace('$', ".")
        })
        .collect()
}

/// The scope path that holds the design: the outermost scope, and below it each
/// single child that re-declares all of its parent's variables.
pub fn design_root(header: &Header) -> Vec<String> {
    let tops: HashSet<&str> = header
        .vars
        .iter()
        .filter(|v| !is_marker(v))
        .filter_map(|v| v.scopes.first().map(String::as_str))
        .collect();
    if tops.len() != 1 || header.vars.iter().any(|v| v.scopes.is_empty()) {
        return Vec::new();
    }
    let mut root: Vec<String> = vec![tops.into_iter().next().unwrap_or_default().to_string()];
    loop {
        let direct: Vec<&Var> = header.vars.iter().filter(|v| v.scopes == root).collect();
        let children: HashSet<&str> = header
            .vars
            .iter()
            .filter(|v| v.scopes.len() > root.len() && v.scopes.starts_with(&root))
            .map(|v| v.scopes[root.len()].as_str())
            .collect();
        if direct.is_empty() {
            // A scope with nothing but one child: step into it.
            if children.len() == 1 {
                root.push(children.into_iter().next().unwrap_or_default().to_string());
                continue;
            }
            return root;
        }
        let child = children.iter().find(|c| {
            let mut scope = root.clone();
            scope.push(c.to_string());
            let inside: HashMap<&str, usize> = header
                .vars
                .iter()
                .filter(|v| v.scopes == scope)
                .map(|v| (v.name.as_str(), v.slot))
                .collect();
            direct
                .iter()
                .all(|v| inside.get(v.name.as_str()) == Some(&v.slot))
        });
        match child {
            Some(c) => root.push(c.to_string()),
            None => return root,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::Format;

    fn header(paths: &[(&str, usize)]) -> Header {
        Header {
            path: "h.vcd".into(),
            format: Format::Vcd,
            vars: paths.iter().map(|(p, slot)| Var::at(p, *slot)).collect(),
            slots: 10,
            fs_per_tick: 1000,
        }
    }

    #[test]
    fn verilator_and_rusthdl_agree() {
        let verilator = header(&[
            ("TOP.clock", 0),
            ("TOP.count", 1),
            ("TOP.top.clock", 0),
            ("TOP.top.count", 1),
            ("TOP.top.counter$q", 2),
            ("TOP.top.counter.q", 3),
        ]);
        assert_eq!(design_root(&verilator), ["TOP", "top"]);
        assert_eq!(
            design_names(&verilator),
            ["clock", "count", "clock", "count", "counter.q", "counter.q"]
        );
        // RustHDL: a sub-block sharing the clock is not the top instance.
        let rusthdl = header(&[
            ("uut.clock", 0),
            ("uut.count", 1),
            ("uut.counter.clock", 0),
            ("uut.counter.q", 2),
        ]);
        assert_eq!(design_root(&rusthdl), ["uut"]);
        assert_eq!(
            design_names(&rusthdl),
            ["clock", "count", "counter.clock", "counter.q"]
        );
    }

    #[test]
    fn marker_signals_stay_beside_the_design() {
        let h = header(&[
            ("markers.booting_sent", 5),
            ("uut.clock", 0),
            ("uut.top.clock", 0),
            ("uut.top.x$q", 1),
        ]);
        assert_eq!(design_root(&h), ["uut", "top"]);
        assert_eq!(
            design_names(&h),
            ["markers.booting_sent", "clock", "clock", "x.q"]
        );
    }
}
