//! The cell fabric of a multi-host co-simulation: an N-port store-and-forward switch
//! between the NICs' network ports (SPEC.md, "Fabric").
//!
//! # Model
//! - **Ingress** (port `p`'s `m_cell_*`): a cell is taken word by word while
//!   `m_cell_ready` is high, then routed by its header's `dest_node` into the virtual output
//!   queue (VOQ) of the pair `(p, dest)`, where `dest` is the port the **routing table**
//!   maps the node to: port `n` for node `n` unless [`Fabric::set_route`] changed it (a
//!   host with several NICs has a port per NIC, source 003; a route change applies to the
//!   cells routed from then on, those already queued go where they were routed). `m_cell_ready` is low while `p`'s cells waiting in
//!   all its VOQs (and its partial cell) fill [`FabricConfig::input_capacity_words`]: an
//!   input-buffered switch, so a congested destination back-pressures its sources.
//! - **Latency**: a cell can leave [`FabricConfig::latency`] cycles after its last word
//!   entered (plus any delay a fault hook adds).
//! - **Order**: each VOQ is a FIFO and only its head may leave, so cells between one source
//!   and one destination never overtake each other (a delayed cell holds back those behind
//!   it).
//! - **Egress** (port `d`'s `s_cell_*`): per destination, round-robin over the sources
//!   whose head cell is due, one whole **message** at a time: once a source's cell without
//!   the LAST flag has gone out, the port takes only that source's cells until its LAST
//!   cell (the reassembler keeps one message context: a message's cells arrive
//!   contiguously, docs/cell-format.md). A source that goes down, or whose LAST cell a fault
//!   hook drops, releases the port, and a cell that fails its CRC holds none (its LAST
//!   flag may be the bit that flipped). Once a cell's first word is offered it is held until
//!   the NIC takes every word (AXI-stream rules).
//! - **Port down** ([`Fabric::set_port_up`]): the NIC behind the port is unplugged or
//!   powered off. Its partial ingress cell is discarded; cells to it are discarded as soon
//!   as they are due, every one in the same cycle (a switch drops what it cannot forward
//!   rather than clocking it out of a dead link a word at a time, which would hold the
//!   requesters' traffic for the length of the backlog), and the first cell of every
//!   request is answered by the fabric with the PORT_DOWN NACK of
//!   [`crate::cell_link::port_down_nack`], queued back to the requester.
//! - **Faults** ([`FaultHook`]): every routed cell is shown to the hook, which may deliver,
//!   drop, corrupt or delay it (the reliability issue's injection points).
//! - A cell whose header names no port is dropped and counted in
//!   [`FabricStats::misrouted`] (the NIC sent something the fabric cannot route).
//!
//! Each cycle the caller takes every port's inputs from [`Fabric::drive`], steps the NICs,
//! and hands their outputs to [`Fabric::observe`] (which advances one cycle). What the
//! fabric drives depends only on its own state, never on the NICs' outputs of the same
//! cycle.

use crate::cell_link::{is_request, port_down_nack};
use nic_rtl::cell::format::{decode_cell, CellHeader, HEADER_WORDS, MAX_CELL_PAYLOAD};
use std::collections::VecDeque;
use std::sync::Arc;

/// Configuration of a [`Fabric`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricConfig {
    /// Ports (NICs); port `n` is node `n`.
    pub ports: usize,
    /// Cycles from a cell's last word in to its first word out (>= 1).
    pub latency: u64,
    /// Words a source may have buffered in the fabric before it is back-pressured (at least
    /// one cell of the largest size the NICs send).
    pub input_capacity_words: usize,
}

impl FabricConfig {
    /// `ports` ports, 16 cycles of latency, 4 KiB of buffering per source.
    pub fn new(ports: usize) -> Self {
        FabricConfig {
            ports,
            latency: 16,
            input_capacity_words: 512,
        }
    }

    /// Checks the values; the message names the bad one.
    pub fn validate(&self) -> Result<(), String> {
        if self.ports == 0 || self.ports > 1 << 16 {
            return Err(format!(
                "fabric ports must be in 1..=65536, got {}",
                self.ports
            ));
        }
        if self.latency == 0 {
            return Err("fabric latency must be at least 1 cycle".into());
        }
        // The largest cell: header, RETH, 1024 payload bytes, trailer, CRC.
        let largest = HEADER_WORDS + 2 + 128 + 2;
        if self.input_capacity_words < largest {
            return Err(format!(
                "fabric input_capacity_words must hold the largest cell ({largest} words), got {}",
                self.input_capacity_words
            ));
        }
        Ok(())
    }
}

/// What a [`FaultHook`] decides for one cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CellFate {
    /// Deliver unchanged.
    Deliver,
    /// The cell disappears.
    Drop,
    /// Word `word` is XORed with `mask` (the receiver's cell CRC catches it).
    Corrupt { word: usize, mask: u64 },
    /// Deliver `cycles` later than the latency says (cells behind it wait too).
    Delay { cycles: u64 },
    /// Deliver these words instead, routed as the original was (a forged cell: a
    /// misbehaving peer; counted as corrupted).
    Replace(Arc<[u64]>),
}

/// Fault injection: called once for every cell a NIC sends, after routing.
pub trait FaultHook: Send {
    /// `cell` is the cell as sent; `header` its parsed header.
    fn on_cell(
        &mut self,
        cycle: u64,
        src: usize,
        dst: usize,
        header: &CellHeader,
        cell: &[u64],
    ) -> CellFate;
}

/// One cell in a virtual output queue.
#[derive(Clone, Debug)]
struct QueuedCell {
    due: u64,
    /// Empty: a marker left by a dropped LAST cell, which ends its message at the egress.
    words: Arc<[u64]>,
    /// Counted against its source's input buffer (the fabric's own NACKs are not).
    charged: bool,
}

/// What the fabric drives into one NIC in a cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortDrive {
    /// To the NIC's `m_cell_ready`.
    pub m_cell_ready: bool,
    /// To the NIC's `s_cell_valid`, `s_cell_data`, `s_cell_last`.
    pub s_cell_valid: bool,
    pub s_cell_data: u64,
    pub s_cell_last: bool,
}

/// A NIC's network-side outputs in a cycle (`None` for a port that is down).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortOutputs {
    pub m_cell_valid: bool,
    pub m_cell_data: u64,
    pub m_cell_last: bool,
    pub s_cell_ready: bool,
}

/// A cell that left the fabric into a NIC (recorded when [`Fabric::record_deliveries`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The cycle its last word was taken.
    pub cycle: u64,
    /// The cycle the fabric could first deliver it (taken from the source plus the latency
    /// and any delay): `cycle - ready` is how long it queued at the egress.
    pub ready: u64,
    pub src: usize,
    pub dst: usize,
    pub words: Arc<[u64]>,
}

/// Counters of a [`Fabric`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FabricStats {
    /// Cells taken from the NICs.
    pub cells_in: u64,
    /// Cells delivered into NICs.
    pub cells_out: u64,
    /// Cells dropped, corrupted and delayed by the fault hook.
    pub dropped: u64,
    pub corrupted: u64,
    pub delayed: u64,
    /// Cells absorbed by a port that was down.
    pub absorbed: u64,
    /// PORT_DOWN NACKs the fabric sent.
    pub port_down_nacks: u64,
    /// Cells whose header named no port (dropped).
    pub misrouted: u64,
    /// Partial cells discarded when their port went down.
    pub truncated: u64,
    /// Words an unplugged NIC sent into its disconnected port.
    pub lost_words: u64,
    /// Cycles a source was back-pressured while it had a cell to send.
    pub backpressure_cycles: u64,
}

struct Ingress {
    partial: Vec<u64>,
    buffered_words: usize,
    /// The NIC is part way through a cell (it sent words of it, not its last), whether the
    /// port took them or, down, discarded them.
    nic_mid_cell: bool,
}

struct Egress {
    /// The cell being offered: (source VOQ, next word).
    current: Option<(usize, usize)>,
    /// Next source to consider first.
    round_robin: usize,
    /// The source whose message is part way through this port.
    message_from: Option<usize>,
    /// VOQs toward this port that hold at least one cell.
    busy_sources: usize,
}

/// The N-port switch (see the module docs).
pub struct Fabric {
    config: FabricConfig,
    cycle: u64,
    up: Vec<bool>,
    ingress: Vec<Ingress>,
    egress: Vec<Egress>,
    /// `voq[dst][src]`.
    voq: Vec<Vec<VecDeque<QueuedCell>>>,
    drive: Vec<PortDrive>,
    /// Node -> port.
    route: Vec<usize>,
    hook: Option<Box<dyn FaultHook>>,
    record: bool,
    deliveries: Vec<Delivery>,
    stats: FabricStats,
}

impl Fabric {
    /// A fabric with every port up. Panics with the reason on a bad configuration (check
    /// it with [`FabricConfig::validate`] first when it comes from a user).
    pub fn new(config: FabricConfig) -> Self {
        if let Err(e) = config.validate() {
            panic!("Fabric: {e}");
        }
        let n = config.ports;
        Fabric {
            config,
            cycle: 0,
            up: vec![true; n],
            ingress: (0..n)
                .map(|_| Ingress {
                    partial: Vec::new(),
                    buffered_words: 0,
                    nic_mid_cell: false,
                })
                .collect(),
            egress: (0..n)
                .map(|_| Egress {
                    current: None,
                    round_robin: 0,
                    message_from: None,
                    busy_sources: 0,
                })
                .collect(),
            voq: (0..n)
                .map(|_| (0..n).map(|_| VecDeque::new()).collect())
                .collect(),
            drive: vec![PortDrive::default(); n],
            route: (0..n).collect(),
            hook: None,
            record: false,
            deliveries: Vec::new(),
            stats: FabricStats::default(),
        }
    }

    pub fn config(&self) -> &FabricConfig {
        &self.config
    }

    /// Cycles observed since construction.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    pub fn stats(&self) -> FabricStats {
        self.stats
    }

    /// Install the fault hook (replacing any earlier one).
    pub fn set_fault_hook(&mut self, hook: Box<dyn FaultHook>) {
        self.hook = Some(hook);
    }

    /// Record every delivered cell for [`Fabric::take_deliveries`].
    pub fn record_deliveries(&mut self, on: bool) {
        self.record = on;
    }

    /// Cells delivered since the last call, in delivery order.
    pub fn take_deliveries(&mut self) -> Vec<Delivery> {
        std::mem::take(&mut self.deliveries)
    }

    pub fn is_port_up(&self, port: usize) -> bool {
        self.up[port]
    }

    /// Nodes `0..nodes` exist (routed to ports `0..nodes`); a header naming another node
    /// is misrouted. By default every port is a node.
    pub fn set_nodes(&mut self, nodes: usize) {
        self.route = (0..nodes.min(self.config.ports)).collect();
    }

    /// Cells for `node` go to `port` from now on. Panics on a node or port the fabric does
    /// not have (callers check them).
    pub fn set_route(&mut self, node: usize, port: usize) {
        assert!(
            node < self.route.len() && port < self.config.ports,
            "Fabric::set_route: node {node} or port {port} out of range"
        );
        self.route[node] = port;
    }

    /// The port cells for `node` go to.
    pub fn route_of(&self, node: usize) -> Option<usize> {
        self.route.get(node).copied()
    }

    /// Plug (`true`) or unplug (`false`) the NIC behind `port`. Going down discards the
    /// cell it was sending and everything it had queued; cells on their way to it are
    /// answered as the module docs say.
    pub fn set_port_up(&mut self, port: usize, up: bool) {
        if self.up[port] == up {
            return;
        }
        self.up[port] = up;
        if !up {
            let ing = &mut self.ingress[port];
            if !ing.partial.is_empty() {
                self.stats.truncated += 1;
            }
            ing.partial.clear();
            ing.buffered_words = 0;
            for dst in 0..self.config.ports {
                if self.egress[dst].message_from == Some(port) {
                    self.egress[dst].message_from = None;
                }
                let q = &mut self.voq[dst][port];
                let in_progress = self.egress[dst].current.is_some_and(|(s, _)| s == port);
                // A cell already partly delivered is finished (the wire carries it).
                let keep = usize::from(in_progress && !q.is_empty());
                let was_busy = !q.is_empty();
                q.truncate(keep);
                if let Some(c) = q.front_mut() {
                    c.charged = false;
                }
                if was_busy && q.is_empty() {
                    self.egress[dst].busy_sources -= 1;
                }
            }
        }
    }

    /// The NIC behind `port` was reset (powered on): it starts a new cell, whatever it was
    /// sending before.
    pub fn nic_reset(&mut self, port: usize) {
        self.ingress[port].nic_mid_cell = false;
    }

    /// Words in flight in the fabric (all VOQs and partial cells).
    pub fn words_in_flight(&self) -> usize {
        let queued: usize = self
            .voq
            .iter()
            .flatten()
            .flat_map(|q| q.iter())
            .map(|c| c.words.len())
            .sum();
        queued + self.ingress.iter().map(|i| i.partial.len()).sum::<usize>()
    }

    /// Every port's inputs for this cycle.
    pub fn drive(&mut self) -> &[PortDrive] {
        let cap = self.config.input_capacity_words;
        for p in 0..self.config.ports {
            let ing = &self.ingress[p];
            let mut d = PortDrive {
                // An unplugged NIC transmits into nothing: its cells are lost, not held.
                m_cell_ready: !self.up[p] || ing.buffered_words + ing.partial.len() < cap,
                ..Default::default()
            };
            if self.egress[p].current.is_none() && self.egress[p].busy_sources > 0 {
                self.pick(p);
            }
            if let (Some((src, word)), true) = (self.egress[p].current, self.up[p]) {
                let cell = &self.voq[p][src][0].words;
                d.s_cell_valid = true;
                d.s_cell_data = cell[word];
                d.s_cell_last = word + 1 == cell.len();
            }
            self.drive[p] = d;
        }
        &self.drive
    }

    /// The next cell for `dst`: the rest of the message in progress, else round robin over
    /// the sources whose head cell is due.
    fn pick(&mut self, dst: usize) {
        let n = self.config.ports;
        if let Some(src) = self.egress[dst].message_from {
            self.pop_markers(dst, src);
            if self.voq[dst][src]
                .front()
                .is_some_and(|c| c.due <= self.cycle && !c.words.is_empty())
            {
                self.egress[dst].current = Some((src, 0));
            }
            if self.egress[dst].message_from.is_some() {
                return;
            }
        }
        let start = self.egress[dst].round_robin;
        for k in 0..n {
            let src = (start + k) % n;
            self.pop_markers(dst, src);
            if self.voq[dst][src]
                .front()
                .is_some_and(|c| c.due <= self.cycle)
            {
                self.egress[dst].current = Some((src, 0));
                self.egress[dst].round_robin = (src + 1) % n;
                return;
            }
        }
    }

    /// Remove due end-of-message markers at the head of VOQ `(src, dst)`.
    fn pop_markers(&mut self, dst: usize, src: usize) {
        while self.voq[dst][src]
            .front()
            .is_some_and(|c| c.words.is_empty() && c.due <= self.cycle)
        {
            self.voq[dst][src].pop_front();
            if self.voq[dst][src].is_empty() {
                self.egress[dst].busy_sources -= 1;
            }
            if self.egress[dst].message_from == Some(src) {
                self.egress[dst].message_from = None;
            }
        }
    }

    /// Apply this cycle's handshakes given each port's outputs (`None`: the port is down
    /// or its NIC is not stepped), then advance one cycle.
    pub fn observe(&mut self, outputs: &[Option<PortOutputs>]) {
        assert_eq!(
            outputs.len(),
            self.config.ports,
            "Fabric::observe: one entry per port"
        );
        for (dst, output) in outputs.iter().enumerate() {
            if !self.up[dst] {
                self.discard_due(dst);
                continue;
            }
            if self.drive[dst].s_cell_valid && output.is_some_and(|o| o.s_cell_ready) {
                self.advance_egress(dst);
            }
        }
        for (src, o) in outputs.iter().enumerate() {
            let Some(o) = o else { continue };
            if !o.m_cell_valid {
                continue;
            }
            if !self.drive[src].m_cell_ready {
                self.stats.backpressure_cycles += 1;
                continue;
            }
            let tail = self.ingress[src].nic_mid_cell && self.ingress[src].partial.is_empty();
            self.ingress[src].nic_mid_cell = !o.m_cell_last;
            // Down: the words go nowhere. Up again in the middle of a cell: its head was
            // lost, so its tail is too (a receiver finds frames at their start, it does not
            // take the tail of one for a header).
            if !self.up[src] || tail {
                self.stats.lost_words += 1;
                continue;
            }
            self.ingress[src].partial.push(o.m_cell_data);
            if o.m_cell_last {
                let cell = std::mem::take(&mut self.ingress[src].partial);
                self.route(src, cell);
            }
        }
        self.cycle += 1;
    }

    /// A down port drives nothing: every cell that reaches it is discarded as soon as it
    /// is due, all in the same cycle (a switch drops what it cannot forward; it does not
    /// clock it out of a dead link one word at a time), each request answered PORT_DOWN.
    fn discard_due(&mut self, dst: usize) {
        loop {
            if self.egress[dst].current.is_none() && self.egress[dst].busy_sources > 0 {
                self.pick(dst);
            }
            if self.egress[dst].current.is_none() {
                return;
            }
            while self.egress[dst].current.is_some() {
                self.advance_egress(dst);
            }
        }
    }

    fn advance_egress(&mut self, dst: usize) {
        let Some((src, word)) = self.egress[dst].current else {
            return;
        };
        let len = self.voq[dst][src][0].words.len();
        if word + 1 < len {
            self.egress[dst].current = Some((src, word + 1));
            return;
        }
        self.egress[dst].current = None;
        let cell = self.voq[dst][src]
            .pop_front()
            .expect("the offered cell is queued");
        if self.voq[dst][src].is_empty() {
            self.egress[dst].busy_sources -= 1;
        }
        if cell.charged {
            self.ingress[src].buffered_words -= cell.words.len();
        }
        let header = CellHeader::from_words([cell.words[0], cell.words[1], cell.words[2]]);
        // The rest of the message is awaited only from a source that is up (one that went
        // down while this cell was going out sends no more of it), and only after a cell
        // that checks: a bit flip can clear a LAST flag, and no rest comes then.
        let holds =
            !header.last() && self.up[src] && decode_cell(&cell.words, MAX_CELL_PAYLOAD).is_ok();
        self.egress[dst].message_from = holds.then_some(src);
        if self.up[dst] {
            self.stats.cells_out += 1;
            if self.record {
                self.deliveries.push(Delivery {
                    cycle: self.cycle,
                    ready: cell.due,
                    src,
                    dst,
                    words: cell.words,
                });
            }
        } else {
            self.absorb(dst, src, &cell.words);
        }
    }

    /// A cell reached a port that is down: answer a request with PORT_DOWN.
    fn absorb(&mut self, dst: usize, src: usize, words: &[u64]) {
        self.stats.absorbed += 1;
        if words.len() < HEADER_WORDS {
            return;
        }
        let header = CellHeader::from_words([words[0], words[1], words[2]]);
        // A switch acts only on a cell that checks: a corrupted header names the wrong
        // requester, PSN or opcode.
        let intact = decode_cell(words, MAX_CELL_PAYLOAD).is_ok();
        if header.first() && is_request(header.opcode) && src != dst && intact {
            let Some(nack) = port_down_nack(&header) else {
                return;
            };
            let nack: Arc<[u64]> = nack.into();
            self.stats.port_down_nacks += 1;
            self.enqueue(
                src,
                dst,
                QueuedCell {
                    due: self.cycle + self.config.latency,
                    words: nack,
                    charged: false,
                },
            );
        }
    }

    fn enqueue(&mut self, dst: usize, src: usize, cell: QueuedCell) {
        if self.voq[dst][src].is_empty() {
            self.egress[dst].busy_sources += 1;
        }
        self.voq[dst][src].push_back(cell);
    }

    fn route(&mut self, src: usize, mut cell: Vec<u64>) {
        self.stats.cells_in += 1;
        if cell.len() < HEADER_WORDS {
            self.stats.misrouted += 1;
            return;
        }
        let header = CellHeader::from_words([cell[0], cell[1], cell[2]]);
        let Some(dst) = self.route_of(header.dest_node as usize) else {
            self.stats.misrouted += 1;
            return;
        };
        let mut due = self.cycle + self.config.latency;
        if let Some(hook) = self.hook.as_mut() {
            match hook.on_cell(self.cycle, src, dst, &header, &cell) {
                CellFate::Deliver => {}
                CellFate::Drop => {
                    self.stats.dropped += 1;
                    if header.last() {
                        // End the message at the egress all the same.
                        self.enqueue(
                            dst,
                            src,
                            QueuedCell {
                                due,
                                words: Arc::from(Vec::new()),
                                charged: false,
                            },
                        );
                    }
                    return;
                }
                CellFate::Corrupt { word, mask } => {
                    self.stats.corrupted += 1;
                    if let Some(w) = cell.get_mut(word) {
                        *w ^= mask;
                    }
                }
                CellFate::Delay { cycles } => {
                    self.stats.delayed += 1;
                    due += cycles;
                }
                CellFate::Replace(words) => {
                    self.stats.corrupted += 1;
                    cell = words.to_vec();
                }
            }
        }
        self.ingress[src].buffered_words += cell.len();
        self.enqueue(
            dst,
            src,
            QueuedCell {
                due,
                words: cell.into(),
                charged: true,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nic_rtl::cell::format::{decode_cell, encode_message, opcode, Message};

    fn cell(op: u8, src: u16, dst: u16, psn: u32, len: usize) -> Vec<u64> {
        let m = Message {
            opcode: op,
            src_node: src,
            dest_node: dst,
            psn,
            payload: vec![psn as u8; len],
            ..Default::default()
        };
        let mut cells = encode_message(&m, 256).unwrap();
        assert_eq!(cells.len(), 1);
        cells.pop().unwrap()
    }

    /// Ports that send `to_send[p]` cells and take cells with readiness `ready(p, cycle)`;
    /// returns the cells each port received, in order.
    fn run(
        fabric: &mut Fabric,
        mut to_send: Vec<VecDeque<Vec<u64>>>,
        ready: impl Fn(usize, u64) -> bool,
        cycles: u64,
    ) -> Vec<Vec<Vec<u64>>> {
        let n = fabric.config().ports;
        let mut got = vec![vec![]; n];
        let mut cur = vec![vec![]; n];
        let mut word = vec![0usize; n];
        for c in 0..cycles {
            let drive = fabric.drive().to_vec();
            let mut outs = vec![None; n];
            for p in 0..n {
                let mut o = PortOutputs {
                    s_cell_ready: ready(p, c),
                    ..Default::default()
                };
                if let Some(cell) = to_send[p].front() {
                    o.m_cell_valid = true;
                    o.m_cell_data = cell[word[p]];
                    o.m_cell_last = word[p] + 1 == cell.len();
                }
                if drive[p].s_cell_valid && o.s_cell_ready {
                    cur[p].push(drive[p].s_cell_data);
                    if drive[p].s_cell_last {
                        got[p].push(std::mem::take(&mut cur[p]));
                    }
                }
                if o.m_cell_valid && drive[p].m_cell_ready {
                    word[p] += 1;
                    if o.m_cell_last {
                        word[p] = 0;
                        to_send[p].pop_front();
                    }
                }
                outs[p] = Some(o);
            }
            fabric.observe(&outs);
        }
        got
    }

    /// A port that goes down in the middle of a cell and comes back before the NIC has
    /// sent the rest: the rest is dropped (its head is gone), not taken for a header, and
    /// the next whole cell goes through. (A tail taken for a header once routed a
    /// non-LAST cell that locked the output port for good: found by `nic soak`.)
    #[test]
    fn the_tail_of_a_cell_cut_by_a_port_down_is_dropped() {
        let mut f = Fabric::new(FabricConfig::new(2));
        let a = cell(opcode::SEND, 0, 1, 1, 64);
        let b = cell(opcode::SEND, 0, 1, 2, 64);
        let send = |f: &mut Fabric, w: u64, last: bool| {
            f.drive();
            f.observe(&[
                Some(PortOutputs {
                    m_cell_valid: true,
                    m_cell_data: w,
                    m_cell_last: last,
                    ..Default::default()
                }),
                Some(PortOutputs::default()),
            ]);
        };
        send(&mut f, a[0], false);
        f.set_port_up(0, false);
        send(&mut f, a[1], false);
        f.set_port_up(0, true);
        for (i, &w) in a.iter().enumerate().skip(2) {
            send(&mut f, w, i + 1 == a.len());
        }
        for (i, &w) in b.iter().enumerate() {
            send(&mut f, w, i + 1 == b.len());
        }
        let got = run(
            &mut f,
            vec![VecDeque::new(), VecDeque::new()],
            |_, _| true,
            200,
        );
        assert_eq!(got[1].len(), 1, "only the whole cell arrives");
        assert_eq!(decode_cell(&got[1][0], 256).unwrap().header.psn, 2);
        assert_eq!(f.stats().misrouted, 0);
    }

    #[test]
    fn keeps_pair_order_and_shares_an_output_fairly() {
        let mut f = Fabric::new(FabricConfig {
            ports: 3,
            latency: 3,
            input_capacity_words: 140,
        });
        // Ports 0 and 1 both flood port 2, which takes a word every other cycle.
        let q = |src: u16| {
            (0..20)
                .map(|i| cell(opcode::SEND, src, 2, i, 64))
                .collect::<VecDeque<_>>()
        };
        let got = run(
            &mut f,
            vec![q(0), q(1), VecDeque::new()],
            |p, c| p != 2 || c % 2 == 0,
            4000,
        );
        assert_eq!(got[2].len(), 40);
        for src in [0u16, 1] {
            let psns: Vec<u32> = got[2]
                .iter()
                .map(|c| decode_cell(c, 256).unwrap().header)
                .filter(|h| h.src_node == src)
                .map(|h| h.psn)
                .collect();
            assert_eq!(psns, (0..20).collect::<Vec<_>>(), "source {src} in order");
        }
        // Fair: in the first 20 delivered cells each source has about half.
        let first: usize = got[2][..20]
            .iter()
            .filter(|c| decode_cell(c, 256).unwrap().header.src_node == 0)
            .count();
        assert!((8..=12).contains(&first), "source 0 got {first} of 20");
        assert!(
            f.stats().backpressure_cycles > 0,
            "the slow output pushed back"
        );
        assert_eq!(f.words_in_flight(), 0);
    }

    #[test]
    fn a_down_port_answers_requests_with_port_down() {
        let mut f = Fabric::new(FabricConfig::new(2));
        f.set_port_up(1, false);
        let sends: VecDeque<_> = [
            cell(opcode::RDMA_WRITE, 0, 1, 7, 16),
            cell(opcode::ACK, 0, 1, 8, 0),
        ]
        .into();
        let got = run(&mut f, vec![sends, VecDeque::new()], |_, _| true, 200);
        assert!(got[1].is_empty());
        assert_eq!(got[0].len(), 1, "only the request is answered");
        let nack = decode_cell(&got[0][0], 256).unwrap();
        assert_eq!(nack.header.opcode, opcode::NACK);
        assert_eq!(nack.header.psn, 7);
        assert_eq!(
            nack.immediate,
            Some(crate::cell_link::PORT_DOWN_SYNDROME as u32)
        );
        assert_eq!(f.stats().port_down_nacks, 1);
        assert_eq!(f.stats().absorbed, 2);
    }

    /// A backlog queued towards a port is discarded in one cycle when the port goes down
    /// (not clocked out a word at a time), every request answered PORT_DOWN.
    #[test]
    fn a_down_port_discards_its_backlog_at_once() {
        let mut f = Fabric::new(FabricConfig::new(3));
        let q = |src: u16| {
            (0..5)
                .map(|i| cell(opcode::RDMA_WRITE, src, 2, i, 64))
                .collect::<VecDeque<_>>()
        };
        // Port 2 takes nothing: both sources' cells wait for it.
        run(
            &mut f,
            vec![q(0), q(1), VecDeque::new()],
            |p, _| p != 2,
            100,
        );
        assert_eq!(f.stats().cells_in, 10);
        assert_eq!(f.stats().absorbed, 0);
        f.set_port_up(2, false);
        let idle = vec![Some(PortOutputs::default()); 3];
        f.drive();
        f.observe(&idle);
        assert_eq!(f.stats().absorbed, 10, "the whole backlog in one cycle");
        assert_eq!(f.stats().port_down_nacks, 10);
        let got = run(&mut f, vec![VecDeque::new(); 3], |_, _| true, 200);
        assert_eq!(
            (got[0].len(), got[1].len()),
            (5, 5),
            "each request answered"
        );
        assert_eq!(f.words_in_flight(), 0);
    }

    /// A source unplugged while the first cell of a message is going out to a port: the
    /// cell is finished, but the port does not wait for the rest of the message (it never
    /// comes) and takes the other sources' cells. (It locked the port for good: found by
    /// `nic soak --multi-nic`, a host's first NIC unplugged mid-message.)
    #[test]
    fn a_source_unplugged_mid_message_does_not_lock_the_output() {
        let mut f = Fabric::new(FabricConfig::new(3));
        let m = Message {
            opcode: opcode::SEND,
            src_node: 0,
            dest_node: 2,
            psn: 1,
            payload: vec![7; 700],
            ..Default::default()
        };
        let cells: VecDeque<Vec<u64>> = encode_message(&m, 256).unwrap().into();
        assert!(cells.len() > 1);
        // Port 0 sends its message's cells; port 2 takes nothing yet, then the first
        // cell's first word only.
        let _ = run(
            &mut f,
            vec![cells, VecDeque::new(), VecDeque::new()],
            |p, _| p != 2,
            100,
        );
        assert!(f.drive()[2].s_cell_valid, "the first cell is offered");
        let mut outs = vec![Some(PortOutputs::default()); 3];
        outs[2] = Some(PortOutputs {
            s_cell_ready: true,
            ..Default::default()
        });
        f.observe(&outs);
        f.set_port_up(0, false);
        let other: VecDeque<_> = [cell(opcode::SEND, 1, 2, 9, 8)].into();
        let got = run(
            &mut f,
            vec![VecDeque::new(), other, VecDeque::new()],
            |_, _| true,
            300,
        );
        let psns: Vec<u32> = got[2]
            .iter()
            .filter_map(|c| decode_cell(c, 256).ok())
            .map(|c| c.header.psn)
            .collect();
        assert!(psns.contains(&9), "port 1's cell got through: {psns:?}");
    }

    /// A one-cell message whose LAST flag a bit flip cleared (its CRC fails) does not hold
    /// the port for a rest that never comes: another source's cell gets through. (It
    /// locked the port for good: `scenarios/regressions/soak-3322.toml`, a corrupted
    /// READ RESPONSE.)
    #[test]
    fn a_corrupted_last_flag_does_not_lock_the_output() {
        let mut f = Fabric::new(FabricConfig::new(3));
        let mut bad = cell(opcode::SEND, 0, 2, 1, 8);
        bad[0] ^= (nic_rtl::cell::format::flag::LAST as u64) << 8;
        assert!(decode_cell(&bad, 256).is_err(), "the flip breaks the CRC");
        let later: VecDeque<_> = [cell(opcode::SEND, 1, 2, 9, 8)].into();
        let got = run(
            &mut f,
            vec![[bad].into(), later, VecDeque::new()],
            |_, _| true,
            300,
        );
        assert_eq!(got[2].len(), 2, "both cells delivered: {:?}", got[2]);
        assert_eq!(decode_cell(&got[2][1], 256).map(|c| c.header.psn), Ok(9));
    }

    #[test]
    fn a_message_s_cells_stay_together_at_the_output() {
        let mut f = Fabric::new(FabricConfig::new(3));
        let q = |src: u16| {
            let mut cells = VecDeque::new();
            for psn in 0..6 {
                let m = Message {
                    opcode: opcode::SEND,
                    src_node: src,
                    dest_node: 2,
                    psn,
                    payload: vec![src as u8; 700],
                    ..Default::default()
                };
                cells.extend(encode_message(&m, 256).unwrap());
            }
            cells
        };
        let got = run(&mut f, vec![q(0), q(1), VecDeque::new()], |_, _| true, 3000);
        assert_eq!(got[2].len(), 36, "6 messages of 3 cells from each source");
        let headers: Vec<CellHeader> = got[2]
            .iter()
            .map(|c| decode_cell(c, 256).unwrap().header)
            .collect();
        for w in headers.windows(2) {
            if !w[0].last() {
                assert_eq!(
                    (w[1].src_node, w[1].psn),
                    (w[0].src_node, w[0].psn),
                    "a message was interleaved"
                );
            }
        }
        let from0 = headers[..18].iter().filter(|h| h.src_node == 0).count();
        assert!((6..=12).contains(&from0), "fair per message: {from0} of 18");
    }

    struct DropSecond(u64);
    impl FaultHook for DropSecond {
        fn on_cell(&mut self, _: u64, _: usize, _: usize, _: &CellHeader, _: &[u64]) -> CellFate {
            self.0 += 1;
            match self.0 {
                2 => CellFate::Drop,
                3 => CellFate::Delay { cycles: 50 },
                _ => CellFate::Deliver,
            }
        }
    }

    #[test]
    fn fault_hook_drops_and_delays_without_reordering() {
        let mut f = Fabric::new(FabricConfig::new(2));
        f.set_fault_hook(Box::new(DropSecond(0)));
        let sends: VecDeque<_> = (0..4).map(|i| cell(opcode::SEND, 0, 1, i, 8)).collect();
        let got = run(&mut f, vec![sends, VecDeque::new()], |_, _| true, 400);
        let psns: Vec<u32> = got[1]
            .iter()
            .map(|c| decode_cell(c, 256).unwrap().header.psn)
            .collect();
        assert_eq!(psns, vec![0, 2, 3]);
        assert_eq!((f.stats().dropped, f.stats().delayed), (1, 1));
    }

    /// A route change sends the cells routed from then on to the new port; a cell already
    /// queued still goes to the old one. A node beyond `set_nodes` is misrouted.
    #[test]
    fn a_route_change_moves_later_cells_to_the_other_port() {
        let mut f = Fabric::new(FabricConfig::new(3));
        f.set_nodes(2);
        let first: VecDeque<_> = [cell(opcode::SEND, 0, 1, 1, 8)].into();
        let got = run(
            &mut f,
            vec![first, VecDeque::new(), VecDeque::new()],
            |_, _| true,
            100,
        );
        assert_eq!((got[1].len(), got[2].len()), (1, 0));
        // Port 1 takes nothing for a while: a cell waits queued for it.
        let queued: VecDeque<_> = [cell(opcode::SEND, 0, 1, 2, 8)].into();
        let _ = run(
            &mut f,
            vec![queued, VecDeque::new(), VecDeque::new()],
            |p, _| p != 1,
            50,
        );
        f.set_route(1, 2);
        let later: VecDeque<_> = [
            cell(opcode::SEND, 0, 1, 3, 8),
            cell(opcode::SEND, 0, 2, 4, 8),
        ]
        .into();
        let got = run(
            &mut f,
            vec![later, VecDeque::new(), VecDeque::new()],
            |_, _| true,
            200,
        );
        let psns = |cells: &Vec<Vec<u64>>| -> Vec<u32> {
            cells
                .iter()
                .map(|c| decode_cell(c, 256).unwrap().header.psn)
                .collect()
        };
        assert_eq!(psns(&got[1]), vec![2], "queued before the change: old port");
        assert_eq!(psns(&got[2]), vec![3], "routed after it: new port");
        assert_eq!(f.stats().misrouted, 1, "node 2 is no node");
    }

    #[test]
    fn misrouted_cells_are_counted_and_bad_configs_named() {
        let mut f = Fabric::new(FabricConfig::new(2));
        let sends: VecDeque<_> = [cell(opcode::SEND, 0, 9, 1, 8)].into();
        run(&mut f, vec![sends, VecDeque::new()], |_, _| true, 100);
        assert_eq!(f.stats().misrouted, 1);
        let e = FabricConfig {
            latency: 0,
            ..FabricConfig::new(2)
        }
        .validate()
        .unwrap_err();
        assert!(e.contains("latency"), "{e}");
        let e = FabricConfig {
            input_capacity_words: 10,
            ..FabricConfig::new(2)
        }
        .validate()
        .unwrap_err();
        assert!(e.contains("input_capacity_words"), "{e}");
    }
}
