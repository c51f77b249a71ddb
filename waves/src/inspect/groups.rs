//! The NIC's signals grouped by what they are for, for waveform viewers' save files
//! ([`super::write_gtkw`], [`super::write_surfer`]).
//!
//! The grouping goes by name, after the conventions of `docs/nic-architecture.md`
//! (ports `s_*` in, `m_*` out, `cfg_*`, `stat_*`; registers are flip-flops whose output
//! is `q`) and works on any block's waves, with what it finds:
//!
//! 0. the protocol's events (a scenario run's marker signals, scope `markers`), first;
//! 1. the top's ports: clock and reset, cells in (`s_cell_*`), cells out (`m_cell_*`),
//!    CSR (`csr_*`), DMA (`dma_tx_rd_*`, `dma_rx_rd_*`, `dma_wr_*`), the rest;
//! 2. state machines: every register named `*state*` in every block;
//! 3. per-QP state: the per-QP bit vectors (`*_bits`), `qp_enabled`, `qp_exists`, the
//!    QP a block works on (`*_qp` registers), and, closed, the writes into the blocks'
//!    tables (`*_ram` write ports: the per-QP tables and buffers);
//! 4. the top's own registers, closed;
//! 5. one closed group per block (a scope below the design root), with its ports and,
//!    in a closed sub-group, its registers.
//!
//! A signal Verilator declares twice (same values) is listed once, under its
//! shortest path.

use super::header::{Header, Var};
use super::names::{design_root, is_marker, MARKERS};
use std::collections::HashSet;

/// A named group of signals, possibly with sub-groups.
#[derive(Clone, Debug, Default)]
pub struct Group {
    /// Shown as the group's name.
    pub title: String,
    /// Whether the viewer shows it collapsed.
    pub closed: bool,
    /// Signals, in order.
    pub vars: Vec<Var>,
    /// Sub-groups, after the signals.
    pub children: Vec<Group>,
}

impl Group {
    fn new(title: &str, closed: bool) -> Group {
        Group {
            title: title.to_string(),
            closed,
            ..Group::default()
        }
    }

    /// Every signal in this group and its sub-groups.
    pub fn count(&self) -> usize {
        self.vars.len() + self.children.iter().map(Group::count).sum::<usize>()
    }
}

/// Top-level port groups: title and name prefixes.
const PORT_GROUPS: [(&str, &[&str]); 7] = [
    ("Clock and reset", &["clock", "clk", "reset", "rst"]),
    ("Cells in (network to NIC)", &["s_cell_"]),
    ("Cells out (NIC to network)", &["m_cell_"]),
    ("CSR (host to NIC)", &["csr_"]),
    ("DMA reads, send side", &["dma_tx_rd_"]),
    ("DMA reads, receive side", &["dma_rx_rd_"]),
    ("DMA writes", &["dma_wr_"]),
];

/// Friendly names of the NIC's blocks (scope names of `NicTop`'s fields).
const BLOCK_TITLES: [(&str, &str); 13] = [
    ("segmenter", "Cell segmenter (tx)"),
    ("reassembler", "Cell reassembler (rx)"),
    ("sq", "Requester (send queues)"),
    ("rq", "Responder (receive queues)"),
    ("resp", "Response generator"),
    ("ack_queue", "ACK event queue"),
    ("cq", "Completion queue"),
    ("csr", "CSR block"),
    ("tpt$0", "TPT"),
    ("tx_arbiter", "TX arbiter"),
    ("tx_read_arbiter", "DMA read arbiter (tx)"),
    ("rx_read_arbiter", "DMA read arbiter (rx)"),
    ("write_arbiter", "DMA write arbiter"),
];

/// Group the signals of `header` (see the module doc).
pub fn nic_groups(header: &Header) -> Vec<Group> {
    let root = design_root(header);
    // One variable per value stream: the shortest path.
    let mut order: Vec<&Var> = header.vars.iter().collect();
    order.sort_by_key(|v| v.scopes.len());
    let mut seen = HashSet::new();
    let mut keep: HashSet<*const Var> = HashSet::new();
    for v in order {
        if seen.insert(v.slot) {
            keep.insert(v as *const Var);
        }
    }
    let unique: Vec<&Var> = header
        .vars
        .iter()
        .filter(|v| keep.contains(&(*v as *const Var)))
        .collect();

    // Verilator declares the ports in the outermost scope (and again in the top
    // instance); RustHDL's top scope is the design root itself.
    let port_scope: Vec<String> = root.iter().take(1).cloned().collect();
    let is_port = |v: &Var| v.scopes == port_scope;
    let mut events = Group::new("Protocol events (markers)", false);
    // In the order the run declares them (levels, then sent, received, faults).
    events.vars = unique
        .iter()
        .filter(|v| is_marker(v))
        .map(|v| (*v).clone())
        .collect();
    sort_markers(&mut events.vars);
    let mut groups = vec![events];
    groups.extend(
        PORT_GROUPS
            .iter()
            .map(|(title, _)| Group::new(title, false)),
    );
    let mut other_ports = Group::new("Other ports", true);
    for v in unique.iter().filter(|v| is_port(v)) {
        if is_constant(v) {
            continue;
        }
        match PORT_GROUPS
            .iter()
            .position(|(_, prefixes)| prefixes.iter().any(|p| v.name.starts_with(p)))
        {
            Some(i) => groups[i + 1].vars.push((*v).clone()),
            None => other_ports.vars.push((*v).clone()),
        }
    }
    groups.push(other_ports);

    let inside = |v: &Var| v.scopes.len() > root.len() && v.scopes.starts_with(&root);
    let mut top_registers = Group::new("Top registers", true);
    let block_of = |v: &Var| v.scopes[root.len()].clone();
    let mut states = Group::new("State machines", false);
    let mut per_qp = Group::new("Per-QP state", false);
    let mut qp_tables = Group::new("Table (RAM) writes", true);
    let mut blocks: Vec<String> = Vec::new();
    for v in unique.iter().filter(|v| v.scopes == root) {
        if register_name(v, &root).is_some() {
            top_registers.vars.push((*v).clone());
        }
    }
    for v in unique.iter().filter(|v| inside(v)) {
        let b = block_of(v);
        if !blocks.contains(&b) {
            blocks.push(b);
        }
        if let Some(reg) = register_name(v, &root) {
            if reg.contains("state") {
                states.vars.push((*v).clone());
            } else if reg.ends_with("_bits")
                || reg == "qp_enabled"
                || reg == "qp_exists"
                || reg.ends_with("_qp")
            {
                per_qp.vars.push((*v).clone());
            }
        } else if v.scopes.len() == root.len() + 1
            && (v.name.ends_with("_ram$write_enable")
                || v.name.ends_with("_ram$write_address")
                || v.name.ends_with("_ram$write_data"))
        {
            qp_tables.vars.push((*v).clone());
        }
    }
    if !qp_tables.vars.is_empty() {
        per_qp.children.push(qp_tables);
    }
    groups.push(states);
    groups.push(per_qp);
    groups.push(top_registers);

    for b in blocks {
        let title = BLOCK_TITLES
            .iter()
            .find(|(scope, _)| *scope == b)
            .map(|(_, t)| format!("{t} [{b}]"))
            .unwrap_or_else(|| b.clone());
        let mut group = Group::new(&title, true);
        let mut registers = Group::new(&format!("{b} registers"), true);
        let mut block_scope = root.clone();
        block_scope.push(b.clone());
        for v in unique.iter().filter(|v| v.scopes.starts_with(&block_scope)) {
            if register_name(v, &root).is_some() {
                registers.vars.push((*v).clone());
            } else if v.scopes == block_scope && is_port_name(&v.name) {
                group.vars.push((*v).clone());
            }
        }
        if !registers.vars.is_empty() {
            group.children.push(registers);
        }
        if group.count() > 0 {
            groups.push(group);
        }
    }
    groups.retain(|g| g.count() > 0);
    groups
}

/// The marker signals in [`MARKERS`]' reading order (Verilator declares them sorted by
/// name).
fn sort_markers(vars: &mut [Var]) {
    vars.sort_by_key(|v| {
        MARKERS
            .iter()
            .position(|n| *n == v.name)
            .unwrap_or(MARKERS.len())
    });
}

/// The register's name when `v` is a flip-flop output inside a block: Verilator's
/// `block.name$q`, RustHDL's `block.name.q`.
fn register_name(v: &Var, root: &[String]) -> Option<String> {
    if v.scopes.len() < root.len() {
        return None;
    }
    if let Some(base) = v.name.strip_suffix("$q") {
        if !base.contains('$') {
            return Some(base.to_string());
        }
    }
    if v.name == "q" && v.scopes.len() >= root.len() + 2 {
        return v.scopes.last().cloned();
    }
    None
}

/// Ports by the naming convention: in `s_*`, out `m_*`, `cfg_*`, `stat_*`, `csr_*`,
/// `dma_*`, and the block's clock and reset are left out.
fn is_port_name(name: &str) -> bool {
    ["s_", "m_", "cfg_", "stat_", "csr_", "dma_", "rd_", "wr_"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// RustHDL's enum encodings, exported as constants (`SegmenterState$Idle`).
fn is_constant(v: &Var) -> bool {
    v.name
        .split_once('$')
        .is_some_and(|(ty, _)| ty.starts_with(|c: char| c.is_ascii_uppercase()))
}
