//! Link faults of a scenario (`[[fault]]` tables): cells dropped, corrupted or delayed in
//! windows of cycles, per link or fabric-wide, and ports that flap.
//!
//! ```toml
//! [[fault]]
//! kind = "drop"            # drop | corrupt | delay | flap
//! from = 10000             # the window: cycles [from, until)
//! until = 20000
//! rate = 0.01              # chance per cell (default 1)
//! src = [2]                # cells from these hosts (default: any)
//! dst = [1]                # cells to these hosts (default: any)
//! messages = ["booting"]   # which cells (default: any), see below
//! count = 3                # at most this many messages hit (default: no limit)
//! ```
//!
//! - `drop`: the cell disappears; a hit on a message's first cell takes its later cells
//!   too (the message is lost whole, what a lost packet of several cells looks like to
//!   the receiver's reassembly).
//! - `corrupt`: one bit flips, in `field = "header" | "payload" | "crc" | "any"` (default
//!   any); the receiver's cell CRC must catch it.
//! - `delay`: the cell is held `1..=cycles` extra cycles, uniformly (jitter); the fabric
//!   keeps each source-destination pair in order, so cells behind it wait too.
//! - `flap`: host `host`'s cable is pulled at `from` and plugged back `down_cycles` later
//!   (default 500), again `every` cycles while before `until` (default once).
//! - `forge_stag`: the STag of a hit RDMA request (READ, WRITE, atomic; its first cell) is
//!   replaced by a deliberately invalid one, which no NIC's table can hold: its index is
//!   moved beyond any table ([`FORGED_INDEX_BIT`]); the cell CRC is recomputed so the cell
//!   arrives intact. The target must refuse it (REMOTE_ACCESS_ERROR) and write nothing;
//!   with a hardware TPT it goes through the exception queue to the driver (source 003).
//!
//! With several NICs per host the fabric has a port per NIC; `src` and `dst` name hosts,
//! whatever NIC the cell leaves or reaches ([`ScheduledFaults::set_port_hosts`]).
//!
//! `messages` names classes of cells: `"request"` (RDMA WRITE / READ / atomic cells),
//! `"response"` (ACK, NACK, READ and atomic responses), `"send"` (application SENDs),
//! `"control"` (any driver control message), or one control message kind: `"booting"`,
//! `"ack"`, `"rdma_ready"`, `"tpt_update"`, `"tpt_remove"`, `"probe"`, `"heartbeat"`. A
//! control SEND is a SEND_IMMEDIATE whose first cell's payload starts with the control
//! magic; it matches a kind when any of its messages (as far as the first cell holds them)
//! has that kind.
//!
//! The hook draws from its own generator, seeded from the scenario's seed, so a run is
//! reproducible and the workload's draws do not depend on the faults.

use nic_cosim::fabric::{CellFate, FaultHook};
use nic_rtl::cell::format::{opcode, words_to_bytes, CellHeader, CRC32, HEADER_WORDS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What a fault does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    Drop,
    Corrupt,
    Delay,
    Flap,
    ForgeStag,
}

/// `forge_stag` sets this bit of an STag's 24-bit index (bit 23 of the index, bit 31 of the
/// STag): beyond any NIC's table (at most 2^24 / 2 entries here; the models have 256).
pub const FORGED_INDEX_BIT: u32 = 1 << 31;

/// Where a corruption flips its bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CorruptField {
    Header,
    Payload,
    Crc,
    #[default]
    Any,
}

/// A class of cells a fault applies to (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageClass {
    Request,
    Response,
    Send,
    Control,
    Booting,
    Ack,
    RdmaReady,
    TptUpdate,
    TptRemove,
    Probe,
    Heartbeat,
}

impl MessageClass {
    /// The control message kind code (driver/src/control.rs) of a kind class.
    fn control_code(self) -> Option<u8> {
        use nic_driver::control::ControlKind as K;
        Some(match self {
            MessageClass::Booting => K::Booting as u8,
            MessageClass::Ack => K::Ack as u8,
            MessageClass::RdmaReady => K::RdmaReady as u8,
            MessageClass::TptUpdate => K::TptUpdate as u8,
            MessageClass::TptRemove => K::TptRemove as u8,
            MessageClass::Probe => K::Probe as u8,
            MessageClass::Heartbeat => K::Heartbeat as u8,
            _ => return None,
        })
    }
}

/// One `[[fault]]` table.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    pub kind: FaultKind,
    /// First cycle of the window.
    pub from: u64,
    /// End of the window (exclusive); default: the end of the run.
    pub until: Option<u64>,
    /// Chance per matching cell (default 1).
    pub rate: Option<f64>,
    pub src: Option<Vec<usize>>,
    pub dst: Option<Vec<usize>>,
    pub messages: Option<Vec<MessageClass>>,
    /// At most this many messages hit.
    pub count: Option<u64>,
    /// `corrupt`: where.
    pub field: Option<CorruptField>,
    /// `delay`: the largest extra delay.
    pub cycles: Option<u64>,
    /// `flap`: the host whose cable is pulled.
    pub host: Option<usize>,
    /// `flap`: cycles unplugged (default 500).
    pub down_cycles: Option<u64>,
    /// `flap`: period of repeats within the window.
    pub every: Option<u64>,
}

/// Default cycles a flapping port stays unplugged.
pub const DEFAULT_FLAP_DOWN: u64 = 500;

impl FaultSpec {
    /// Check the table against a run of `hosts` hosts and `cycles` cycles; the message
    /// names the field.
    pub fn check(&self, hosts: usize, cycles: u64) -> Result<(), String> {
        let until = self.until.unwrap_or(cycles);
        if until <= self.from {
            return Err(format!(
                "fault field `until`: the window [{}, {until}) is empty",
                self.from
            ));
        }
        if let Some(r) = self.rate {
            if !(r > 0.0 && r <= 1.0) {
                return Err(format!("fault field `rate`: must be in (0, 1], got {r}"));
            }
        }
        for (field, list) in [("src", &self.src), ("dst", &self.dst)] {
            if let Some(h) = list.iter().flatten().find(|&&h| h >= hosts) {
                return Err(format!(
                    "fault field `{field}`: host {h} does not exist (hosts are 0..{hosts})"
                ));
            }
        }
        let only = |field: &str, present: bool, kinds: &[FaultKind]| {
            if present && !kinds.contains(&self.kind) {
                Err(format!(
                    "fault field `{field}`: not used by a {:?} fault",
                    self.kind
                ))
            } else {
                Ok(())
            }
        };
        only("field", self.field.is_some(), &[FaultKind::Corrupt])?;
        only("cycles", self.cycles.is_some(), &[FaultKind::Delay])?;
        let flap = [FaultKind::Flap];
        only("host", self.host.is_some(), &flap)?;
        only("down_cycles", self.down_cycles.is_some(), &flap)?;
        only("every", self.every.is_some(), &flap)?;
        let cells = [
            FaultKind::Drop,
            FaultKind::Corrupt,
            FaultKind::Delay,
            FaultKind::ForgeStag,
        ];
        only("rate", self.rate.is_some(), &cells)?;
        only("src", self.src.is_some(), &cells)?;
        only("dst", self.dst.is_some(), &cells)?;
        only("messages", self.messages.is_some(), &cells)?;
        only("count", self.count.is_some(), &cells)?;
        match self.kind {
            FaultKind::Delay if self.cycles.unwrap_or(0) == 0 => {
                Err("fault field `cycles`: a delay fault needs `cycles` >= 1".into())
            }
            FaultKind::Flap => match self.host {
                None => Err("fault field `host`: a flap fault needs the host".into()),
                Some(h) if h >= hosts => Err(format!(
                    "fault field `host`: host {h} does not exist (hosts are 0..{hosts})"
                )),
                Some(_) if self.down_cycles == Some(0) => {
                    Err("fault field `down_cycles`: must be positive".into())
                }
                Some(_)
                    if self
                        .every
                        .is_some_and(|e| e <= self.down_cycles.unwrap_or(DEFAULT_FLAP_DOWN)) =>
                {
                    Err(format!(
                        "fault field `every`: must be longer than `down_cycles` ({})",
                        self.down_cycles.unwrap_or(DEFAULT_FLAP_DOWN)
                    ))
                }
                Some(_) => {
                    // Each flap becomes two timeline events: bounded like `[[event]] repeat`.
                    let until = self.until.unwrap_or(cycles);
                    let flaps = match self.every {
                        Some(e) => until.saturating_sub(self.from).div_ceil(e.max(1)),
                        None => 1,
                    };
                    let max = crate::scenario::MAX_EVENT_OCCURRENCES;
                    if flaps > max {
                        Err(format!(
                            "fault field `every`: {flaps} flaps from {} to {until}, more than {max}",
                            self.from
                        ))
                    } else {
                        Ok(())
                    }
                }
            },
            _ => Ok(()),
        }
    }

    /// A flap's `(unplug, plug)` cycles, within a run of `cycles` cycles.
    pub fn flaps(&self, cycles: u64) -> Vec<(u64, u64)> {
        if self.kind != FaultKind::Flap {
            return vec![];
        }
        let until = self.until.unwrap_or(cycles);
        let down = self.down_cycles.unwrap_or(DEFAULT_FLAP_DOWN);
        let mut out = vec![];
        let mut at = self.from;
        while at < until {
            out.push((at, at.saturating_add(down)));
            match self.every {
                Some(e) => at = at.saturating_add(e.max(1)),
                None => break,
            }
        }
        out
    }
}

/// Cells each fault hit, for the report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FaultStats {
    /// Per `[[fault]]` table, in file order: cells it dropped, corrupted or delayed.
    pub hits: Vec<u64>,
}

/// The fabric's fault hook for a scenario's `[[fault]]` tables.
pub struct ScheduledFaults {
    faults: Vec<FaultSpec>,
    cycles: u64,
    rng: ChaCha8Rng,
    /// Messages hit per fault (for `count`).
    messages_hit: Vec<u64>,
    /// `(src, dst)` -> the fault dropping the message in progress on that link.
    dropping: HashMap<(usize, usize), usize>,
    stats: Arc<Mutex<FaultStats>>,
    /// Port -> host (empty: port `n` is host `n`).
    port_hosts: Vec<usize>,
}

impl ScheduledFaults {
    /// The hook for `faults` in a run of `cycles` cycles, and the statistics it keeps.
    pub fn new(faults: &[FaultSpec], cycles: u64, seed: u64) -> (Self, Arc<Mutex<FaultStats>>) {
        let stats = Arc::new(Mutex::new(FaultStats {
            hits: vec![0; faults.len()],
        }));
        (
            ScheduledFaults {
                faults: faults.to_vec(),
                cycles,
                rng: ChaCha8Rng::seed_from_u64(seed ^ 0xFA01_7FA0_17FA_0170),
                messages_hit: vec![0; faults.len()],
                dropping: HashMap::new(),
                stats: Arc::clone(&stats),
                port_hosts: vec![],
            },
            stats,
        )
    }

    /// The host behind each fabric port (several NICs per host): `src` and `dst` of the
    /// faults name hosts.
    pub fn set_port_hosts(&mut self, port_hosts: Vec<usize>) {
        self.port_hosts = port_hosts;
    }

    fn host_of(&self, port: usize) -> usize {
        self.port_hosts.get(port).copied().unwrap_or(port)
    }

    fn matches(
        &self,
        f: &FaultSpec,
        cycle: u64,
        src: usize,
        dst: usize,
        classes: &[MessageClass],
    ) -> bool {
        let until = f.until.unwrap_or(self.cycles);
        f.kind != FaultKind::Flap
            && (f.from..until).contains(&cycle)
            && f.src.as_ref().is_none_or(|l| l.contains(&src))
            && f.dst.as_ref().is_none_or(|l| l.contains(&dst))
            && f.messages
                .as_ref()
                .is_none_or(|m| m.iter().any(|c| classes.contains(c)))
    }

    fn hit(&mut self, i: usize) {
        self.stats.lock().expect("fault stats").hits[i] += 1;
    }
}

/// The classes a cell belongs to (a non-first cell: none, it follows its message).
fn classes(header: &CellHeader, cell: &[u64]) -> Vec<MessageClass> {
    let mut out = vec![];
    match header.opcode {
        opcode::RDMA_WRITE
        | opcode::RDMA_WRITE_IMMEDIATE
        | opcode::RDMA_READ_REQUEST
        | opcode::ATOMIC_COMPARE_SWAP
        | opcode::ATOMIC_FETCH_ADD => out.push(MessageClass::Request),
        opcode::ACK | opcode::NACK | opcode::RDMA_READ_RESPONSE | opcode::ATOMIC_RESPONSE => {
            out.push(MessageClass::Response)
        }
        opcode::SEND => out.push(MessageClass::Send),
        opcode::SEND_IMMEDIATE => {
            let payload: Vec<u8> = cell
                .iter()
                .skip(HEADER_WORDS)
                .flat_map(|w| w.to_le_bytes())
                .take(header.cell_length as usize)
                .collect();
            if payload
                .first()
                .is_some_and(|b| b >> 4 == nic_driver::control::MAGIC)
            {
                out.push(MessageClass::Control);
                out.extend(control_kinds(&payload));
            } else {
                out.push(MessageClass::Send);
            }
        }
        _ => {}
    }
    out
}

/// The control message kinds of a control SEND, as far as `payload` (its first cell) holds
/// it: after the header, each message is a kind byte and its body.
fn control_kinds(payload: &[u8]) -> Vec<MessageClass> {
    const KINDS: [MessageClass; 7] = [
        MessageClass::Booting,
        MessageClass::Ack,
        MessageClass::RdmaReady,
        MessageClass::TptUpdate,
        MessageClass::TptRemove,
        MessageClass::Probe,
        MessageClass::Heartbeat,
    ];
    let mut out = vec![];
    let mut rest = payload
        .get(nic_driver::control::HEADER_BYTES..)
        .unwrap_or_default();
    while let Some(&code) = rest.first() {
        if let Some(k) = KINDS.iter().find(|k| k.control_code() == Some(code)) {
            out.push(*k);
        }
        match nic_driver::control::ControlMessage::decode_prefix(rest) {
            Ok((_, used)) if used > 0 => rest = &rest[used..],
            _ => break,
        }
    }
    out
}

impl FaultHook for ScheduledFaults {
    fn on_cell(
        &mut self,
        cycle: u64,
        src: usize,
        dst: usize,
        header: &CellHeader,
        cell: &[u64],
    ) -> CellFate {
        if !header.first() {
            if let Some(&i) = self.dropping.get(&(src, dst)) {
                if header.last() {
                    self.dropping.remove(&(src, dst));
                }
                self.hit(i);
                return CellFate::Drop;
            }
        }
        let classes = if header.first() {
            classes(header, cell)
        } else {
            vec![]
        };
        let (src_host, dst_host) = (self.host_of(src), self.host_of(dst));
        for i in 0..self.faults.len() {
            let f = &self.faults[i];
            if !self.matches(f, cycle, src_host, dst_host, &classes) {
                continue;
            }
            if f.kind == FaultKind::ForgeStag
                && !(header.first() && header.has_reth() && cell.len() > HEADER_WORDS + 2)
            {
                continue;
            }
            if f.messages.is_some() && !header.first() {
                continue;
            }
            if f.count.is_some_and(|c| self.messages_hit[i] >= c) {
                continue;
            }
            if !self.rng.gen_bool(f.rate.unwrap_or(1.0)) {
                continue;
            }
            let fate = match f.kind {
                FaultKind::Drop => {
                    if header.first() && !header.last() {
                        self.dropping.insert((src, dst), i);
                    }
                    CellFate::Drop
                }
                FaultKind::Corrupt => {
                    let last = cell.len() - 1;
                    let word = match f.field.unwrap_or_default() {
                        CorruptField::Header => self.rng.gen_range(0..HEADER_WORDS),
                        CorruptField::Payload if last > HEADER_WORDS => {
                            self.rng.gen_range(HEADER_WORDS..last)
                        }
                        CorruptField::Payload | CorruptField::Crc => last,
                        CorruptField::Any => self.rng.gen_range(0..=last),
                    };
                    CellFate::Corrupt {
                        word,
                        mask: 1 << self.rng.gen_range(0..64),
                    }
                }
                FaultKind::Delay => CellFate::Delay {
                    cycles: self.rng.gen_range(1..=f.cycles.unwrap_or(1)),
                },
                FaultKind::ForgeStag => {
                    let mut forged = cell.to_vec();
                    forged[HEADER_WORDS + 1] |= FORGED_INDEX_BIT as u64;
                    let last = forged.len() - 1;
                    let crc = CRC32.checksum(&words_to_bytes(&forged[..last]));
                    forged[last] = crc as u64;
                    CellFate::Replace(forged.into())
                }
                FaultKind::Flap => continue,
            };
            self.messages_hit[i] += 1;
            self.hit(i);
            return fate;
        }
        CellFate::Deliver
    }
}
