//! The split-model driver of source document 002 on the Verilated NICs: a host and an I/O
//! unit push packets to each other with the push-push buffer pools of
//! [`nic_driver::pools`] (or, in `mode = "send"`, in SendData messages: plain SEND/RECV),
//! scenario table `[split_driver]`.
//!
//! # What each end does
//!
//! Each end is a **target** for its own pools and an **initiator** into its peer's:
//! - it registers a pool (`elements` × `element_bytes` in its split-driver memory `X`) and
//!   advertises it (BufferRecvPool); every `flush_every` packets it received it flushes the
//!   pool (BufferPoolFlushRequest), advertises a new one in the other half of its pool
//!   memory, and once the initiator has replied deregisters the old one; the memory is
//!   free at the driver's `Deregistered` (the memory verdict then checks that nothing is
//!   written there until it is registered again);
//! - it takes a free element of the peer's pool, RDMA-writes a packet into it from its
//!   staging memory with the indication in the immediate (pool, element, bytes) or, when it
//!   does not fit, a BufferRDMAIndicate behind the write;
//! - it checks every packet it receives byte for byte and in order (the payload names the
//!   sender, the session and the packet's number), takes the element and gives elements back
//!   in BufferRecvPoolUpdates.
//!
//! Pool messages are SENDs on the pair's queue pair (the workload sends no SENDs between
//! the two and posts no receives for them). A reboot of either end, or a write or message
//! that fails (a flush after a link change, a retry limit), starts a new *session*: both
//! ends forget the peer's pools, deregister their own and number packets from 0 again;
//! a packet of an earlier session that still arrives is counted late and not checked.
//!
//! # Memory `X` of one host (after the workload's regions)
//! | part | size |
//! | --- | --- |
//! | pools | 2 halves of `elements × element_bytes` (the new pool goes in the half the old one is not in) |
//! | staging | [`STAGING`] slots of the larger of a packet and a receive buffer |
//! | receives | [`RECEIVES`] receive buffers of the driver's `recv_buffer_bytes` |

use crate::memory_verdict::MemoryVerdict;
use crate::scenario::{SplitDriverSpec, SplitMode};
use crate::scoreboard::{MemoryRange, Scoreboard};
use nic_abi::CompletionStatus;
use nic_cosim::cluster::Cluster;
use nic_driver::pools::{
    Element, Indication, PoolBody, PoolDescriptor, PoolInitiator, PoolMessage, PoolTarget,
    TargetEvent,
};
use nic_driver::tpt::{Protection, RegionRef};
use nic_driver::Completion;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// Work-request ids of the split driver carry this bit (the workload's never do).
pub const SPLIT_TAG: u64 = 1 << 62;
/// Outgoing SENDs and WRITEs in flight per end.
pub const STAGING: usize = 8;
/// Receive buffers an end keeps posted to its peer.
pub const RECEIVES: usize = 32;
/// Logical address of `X` (both ends).
const X_LOGICAL: u64 = 0x50_0000_0000;
const KIND_SEND: u64 = 1 << 56;
const KIND_WRITE: u64 = 2 << 56;
const KIND_RECV: u64 = 3 << 56;

/// Where `X` lies (the same physical address on every host).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SplitLayout {
    pub base: u32,
    pub pool_bytes: u32,
    pub staging_base: u32,
    pub stage_bytes: u32,
    pub recv_base: u32,
    pub recv_bytes: u32,
    pub len: u32,
}

impl SplitLayout {
    /// `X` for `spec` at `base`, with receive buffers of `recv_bytes`.
    pub fn new(spec: &SplitDriverSpec, base: u32, recv_bytes: u32) -> Self {
        let align = |x: u32, a: u32| x.div_ceil(a) * a;
        let pool_bytes = spec.elements * spec.element_bytes;
        let staging_base = base + 2 * align(pool_bytes, 4096);
        let stage_bytes = align(spec.packet_bytes.max(recv_bytes), 64);
        let recv_base = staging_base + STAGING as u32 * stage_bytes;
        let len = align(recv_base + RECEIVES as u32 * recv_bytes - base, 4096);
        SplitLayout {
            base,
            pool_bytes,
            staging_base,
            stage_bytes,
            recv_base,
            recv_bytes,
            len,
        }
    }

    /// Bytes `X` needs for `spec`.
    pub fn bytes_needed(spec: &SplitDriverSpec, recv_bytes: u32) -> u32 {
        Self::new(spec, 0, recv_bytes).len
    }

    fn pool_base(&self, half: usize) -> u32 {
        self.base + half as u32 * self.pool_bytes.div_ceil(4096) * 4096
    }
}

/// Counters of the exchange, per direction and in all.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SplitStats {
    pub mode: String,
    /// Packets sent and checked on arrival, per direction ("0->1").
    pub sent: BTreeMap<String, u64>,
    pub delivered: BTreeMap<String, u64>,
    /// Cycles from the first packet sent to the last delivered, per direction.
    pub cycles: BTreeMap<String, u64>,
    /// Payload bytes per cycle, per direction.
    pub goodput_bytes_per_cycle: BTreeMap<String, f64>,
    pub by_idata: u64,
    pub by_message: u64,
    pub send_data: u64,
    pub pools_advertised: u64,
    pub pools_flushed: u64,
    pub pools_freed: u64,
    /// Messages refused (malformed) or out of protocol, both sides: must stay 0.
    pub malformed: u64,
    pub out_of_protocol: u64,
    /// Sessions started over (a reboot, a failed write or message).
    pub restarts: u64,
    /// Packets of an earlier session that arrived after a restart.
    pub late: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PoolHalf {
    Free,
    /// Registered and advertised: the pool's reference and handle.
    Live {
        pool: u32,
        handle: u32,
    },
    /// Flush requested; the initiator may write until it replies.
    Flushing {
        pool: u32,
        handle: u32,
    },
    /// Left from before a restart: to deregister.
    Stale {
        handle: u32,
    },
    /// Deregistration started; free at the driver's `Deregistered`.
    Freeing {
        handle: u32,
    },
}

impl PoolHalf {
    /// The pool the initiator may still write (live or flushing).
    fn writable_pool(&self) -> Option<u32> {
        match *self {
            PoolHalf::Live { pool, .. } | PoolHalf::Flushing { pool, .. } => Some(pool),
            _ => None,
        }
    }
}

/// One end's state for its current epoch.
struct End {
    node: usize,
    peer: usize,
    session: u32,
    x_handle: Option<u32>,
    target: PoolTarget,
    initiator: PoolInitiator,
    halves: [PoolHalf; 2],
    next_pool: u32,
    outgoing: VecDeque<PoolMessage>,
    /// Staging slot -> what is in flight from it.
    staging: [Option<InFlight>; STAGING],
    /// Elements taken, waiting for the peer's copy of their registration.
    waiting: VecDeque<Element>,
    /// Packets sent / next expected from the peer (session, number).
    next_seq: u32,
    expect: Option<(u32, u32)>,
    received_since_flush: u32,
    /// Elements taken since the last BufferRecvPoolUpdate.
    taken: u32,
    receives_posted: bool,
    first_sent: Option<u64>,
}

/// What a staging slot carries, and in which session it was posted.
#[derive(Clone, Copy, Debug)]
enum InFlight {
    Message(u32),
    Write(Element, u32),
}

impl End {
    /// It has sent packets or set up pools (its session has something to lose).
    fn started(&self) -> bool {
        self.first_sent.is_some() || self.halves.iter().any(|h| *h != PoolHalf::Free)
    }

    fn new(node: usize, peer: usize, session: u32) -> Self {
        End {
            node,
            peer,
            session,
            x_handle: None,
            target: PoolTarget::new(),
            initiator: PoolInitiator::new(),
            halves: [PoolHalf::Free; 2],
            next_pool: 0,
            outgoing: VecDeque::new(),
            staging: [None; STAGING],
            waiting: VecDeque::new(),
            next_seq: 0,
            expect: None,
            received_since_flush: 0,
            taken: 0,
            receives_posted: false,
            first_sent: None,
        }
    }
}

/// A packet's payload: word 0 names sender, session and number.
fn packet(src: usize, session: u32, seq: u32, len: u32) -> Vec<u8> {
    let head = (src as u64) << 56 | ((session as u64) & 0xFF_FFFF) << 32 | seq as u64;
    (0..len as u64 / 8)
        .flat_map(|i| {
            if i == 0 {
                head
            } else {
                head ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            }
            .to_le_bytes()
        })
        .collect()
}

fn packet_head(bytes: &[u8]) -> Option<(usize, u32, u32)> {
    let w = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
    Some(((w >> 56) as usize, (w >> 32) as u32 & 0xFF_FFFF, w as u32))
}

/// The exchange (see the module docs).
pub struct SplitDriver {
    /// A planted bug: the target takes a pool's memory as free when it sends the flush
    /// request, without waiting for the initiator's reply and the deregistration.
    pub free_at_flush: bool,
    /// From this cycle on nothing new starts (no packet, pool or flush), as the
    /// workload's `stop_at`: what is under way drains before the run ends.
    pub stop_at: u64,
    spec: SplitDriverSpec,
    layout: SplitLayout,
    ends: [Option<End>; 2],
    session: u32,
    pub stats: SplitStats,
    last_delivered: [Option<u64>; 2],
}

impl SplitDriver {
    pub fn new(spec: SplitDriverSpec, layout: SplitLayout) -> Self {
        SplitDriver {
            free_at_flush: false,
            stop_at: u64::MAX,
            stats: SplitStats {
                mode: format!("{:?}", spec.mode).to_lowercase(),
                ..Default::default()
            },
            spec,
            layout,
            ends: [None, None],
            session: 0,
            last_delivered: [None, None],
        }
    }

    /// The two hosts of the exchange.
    pub fn pair(&self) -> (usize, usize) {
        (self.spec.host, self.spec.io_unit)
    }

    fn side(&self, h: usize) -> Option<usize> {
        [self.spec.host, self.spec.io_unit]
            .iter()
            .position(|&x| x == h)
    }

    fn dir(src: usize, dst: usize) -> String {
        format!("{src}->{dst}")
    }

    /// Whether `c` (a completion of host `h`) belongs to the exchange.
    pub fn owns(&self, h: usize, c: &Completion) -> bool {
        match c {
            Completion::Send { wr_id, .. }
            | Completion::Receive { wr_id, .. }
            | Completion::Local { wr_id, .. } => wr_id & SPLIT_TAG != 0,
            Completion::Deregistered { entry } => self.side(h).is_some_and(|s| {
                self.ends[s].as_ref().is_some_and(|e| {
                    e.halves.iter().any(|x| {
                        matches!(x, PoolHalf::Freeing { handle } | PoolHalf::Stale { handle } if *handle == entry.handle)
                    })
                })
            }),
        }
    }

    /// Host `h` booted (a new epoch).
    pub fn on_boot(&mut self, h: usize, _epoch: u32) {
        let Some(s) = self.side(h) else { return };
        let peer = [self.spec.io_unit, self.spec.host][s];
        self.session += 1;
        self.ends[s] = Some(End::new(h, peer, self.session));
        if self.restart_end(1 - s) {
            self.stats.restarts += 1;
        }
    }

    /// Host `h` powered off.
    pub fn on_power_off(&mut self, h: usize) {
        let Some(s) = self.side(h) else { return };
        // Packets of the end that dies may be lost with it (sent, not yet delivered): a
        // restart even when the surviving end had not started (found by `nic soak`, seed
        // 880: one end received before it could send, the other died with 5 in flight).
        let died_started = self.ends[s].as_ref().is_some_and(End::started);
        self.ends[s] = None;
        self.session += 1;
        if self.restart_end(1 - s) | died_started {
            self.stats.restarts += 1;
        }
    }

    /// A write or message of the current session failed: both ends start a new one.
    fn restart_both(&mut self) {
        self.session += 1;
        if self.restart_end(0) | self.restart_end(1) {
            self.stats.restarts += 1;
        }
    }

    /// Side `s` starts session `self.session`: it forgets its pools and the peer's (its
    /// pools are deregistered by [`SplitDriver::step`]) and numbers packets from 0.
    /// Returns whether it had started (sent, or set up pools).
    fn restart_end(&mut self, s: usize) -> bool {
        let session = self.session;
        let Some(e) = self.ends[s].as_mut() else {
            return false;
        };
        e.session = session;
        if !e.started() {
            return false;
        }
        e.initiator.reset();
        e.target = PoolTarget::new();
        e.outgoing.clear();
        e.waiting.clear();
        e.expect = None;
        e.next_seq = 0;
        e.received_since_flush = 0;
        e.taken = 0;
        for h in e.halves.iter_mut() {
            if let PoolHalf::Live { handle, .. } | PoolHalf::Flushing { handle, .. } = *h {
                *h = PoolHalf::Stale { handle };
            }
        }
        true
    }

    /// One cycle: completions of the exchange (`own[h]`), then new work.
    pub fn step(
        &mut self,
        cluster: &mut Cluster,
        sb: &mut Scoreboard,
        verdict: &mut MemoryVerdict,
        own: Vec<(usize, Completion)>,
    ) {
        let now = cluster.cycle();
        for (h, c) in own {
            self.on_completion(cluster, sb, verdict, h, c, now);
        }
        for s in 0..2 {
            self.step_end(cluster, sb, verdict, s, now);
        }
    }

    fn peer_ready(cluster: &Cluster, e: &End) -> bool {
        let (Some(d), Some(dp)) = (cluster.host(e.node).driver(), cluster.host(e.peer).driver())
        else {
            return false;
        };
        d.is_joined() && dp.is_joined() && !d.is_barred(e.peer as u16)
    }

    fn step_end(
        &mut self,
        cluster: &mut Cluster,
        sb: &mut Scoreboard,
        verdict: &mut MemoryVerdict,
        s: usize,
        now: u64,
    ) {
        let spec = self.spec.clone();
        let l = self.layout;
        let Some(e) = self.ends[s].as_mut() else {
            return;
        };
        // The end's own memory and receives need only its own driver joined: a receive
        // posted while the peer is still barred here is harmless, and one not posted lets
        // the peer's messages (it may see this end ready first) fill the driver's bounce
        // buffers until the control messages that would unbar it are refused too
        // (found by `nic soak`, seed 658). Pools and sending wait for the peer.
        let own_ready = cluster.host(e.node).driver().is_some_and(|d| d.is_joined());
        if now < spec.start_at || !own_ready {
            return;
        }
        let peer_ready = Self::peer_ready(cluster, e);
        let node = e.node;
        let peer = e.peer as u16;
        let d = cluster
            .host_mut(node)
            .driver_mut()
            .expect("a live end has a driver");
        // Deregister pools left from before a restart.
        for h in e.halves.iter_mut() {
            if let PoolHalf::Stale { handle } = *h {
                *h = match d.deregister(handle) {
                    Ok(_) => PoolHalf::Freeing { handle },
                    Err(_) => PoolHalf::Free,
                };
            }
        }
        if e.x_handle.is_none() {
            match d.register(
                X_LOGICAL + l.staging_base as u64,
                l.staging_base,
                l.len - (l.staging_base - l.base),
                Protection::ReadWrite,
            ) {
                Ok(entry) => {
                    e.x_handle = Some(entry.handle);
                    sb.register(
                        node,
                        MemoryRange {
                            start: entry.physical,
                            len: entry.length,
                            writable: true,
                        },
                    );
                }
                Err(err) => {
                    sb.violation(
                        now,
                        "split-driver",
                        vec![node],
                        None,
                        format!("registering the staging memory failed: {err}"),
                    );
                    return;
                }
            }
        }
        let x = e.x_handle.expect("registered");
        if !e.receives_posted {
            for j in 0..RECEIVES {
                let at = l.recv_base + j as u32 * l.recv_bytes;
                if let Err(err) = d.post_receive(
                    peer,
                    RegionRef::new(x, X_LOGICAL + at as u64),
                    l.recv_bytes,
                    SPLIT_TAG | KIND_RECV | j as u64,
                ) {
                    sb.violation(
                        now,
                        "split-driver",
                        vec![node],
                        None,
                        format!("posting a receive failed: {err}"),
                    );
                    return;
                }
            }
            e.receives_posted = true;
        }
        if !peer_ready {
            return;
        }
        // Target: a live pool, advertised (pools mode).
        if spec.mode == SplitMode::Pools
            && now < self.stop_at
            && !e.halves.iter().any(|h| matches!(h, PoolHalf::Live { .. }))
        {
            if let Some(half) = e.halves.iter().position(|h| *h == PoolHalf::Free) {
                let base = l.pool_base(half);
                match d.register(
                    X_LOGICAL + base as u64,
                    base,
                    l.pool_bytes,
                    Protection::ReadWrite,
                ) {
                    Ok(entry) => {
                        let pool = e.next_pool % 256;
                        e.next_pool += 1;
                        let desc = PoolDescriptor {
                            pool,
                            count: spec.elements,
                            size: spec.element_bytes,
                            handle: entry.handle,
                            address: X_LOGICAL + base as u64,
                            context: node as u64,
                        };
                        if let Ok(m) = e.target.advertise(desc) {
                            e.outgoing.push_back(m);
                            e.halves[half] = PoolHalf::Live {
                                pool,
                                handle: entry.handle,
                            };
                            self.stats.pools_advertised += 1;
                            verdict.registered(node, base, l.pool_bytes);
                            sb.register(
                                node,
                                MemoryRange {
                                    start: base,
                                    len: l.pool_bytes,
                                    writable: true,
                                },
                            );
                        }
                    }
                    Err(err) => sb.violation(
                        now,
                        "split-driver",
                        vec![node],
                        None,
                        format!("registering a pool failed: {err}"),
                    ),
                }
            }
        }
        // Messages first (one SEND each, in order): the BufferRecvPoolUpdates that keep
        // the peer writing must not wait behind this end's own writes.
        while let Some(m) = e.outgoing.front() {
            let Some(slot) = e.staging.iter().position(|x| x.is_none()) else {
                break;
            };
            // The session rides in the upper half of the transaction context.
            let mut m = m.clone();
            m.context = (e.session as u64) << 32 | (m.context & 0xFFFF_FFFF);
            let bytes = m.encode();
            let at = l.staging_base + slot as u32 * l.stage_bytes;
            cluster.host(node).nic().mem.write_bytes(at, &bytes);
            let d = cluster.host_mut(node).driver_mut().expect("live");
            match d.post_send(
                peer,
                RegionRef::new(x, X_LOGICAL + at as u64),
                bytes.len() as u32,
                None,
                SPLIT_TAG | KIND_SEND | slot as u64,
            ) {
                Ok(()) => {
                    e.staging[slot] = Some(InFlight::Message(e.session));
                    e.outgoing.pop_front();
                }
                Err(_) => break,
            }
        }

        // Initiator: the next packet.
        let dir = Self::dir(node, e.peer);
        let sent = self.stats.sent.entry(dir.clone()).or_default();
        if (*sent as u32) < spec.packets && e.waiting.is_empty() && now < self.stop_at {
            match spec.mode {
                SplitMode::Pools => {
                    if let Some(el) = e.initiator.take(spec.packet_bytes) {
                        e.waiting.push_back(el);
                    }
                }
                SplitMode::Send => {
                    if e.outgoing.is_empty() {
                        let data = packet(node, e.session, e.next_seq, spec.packet_bytes);
                        e.next_seq += 1;
                        *sent += 1;
                        e.first_sent.get_or_insert(now);
                        self.stats.send_data += 1;
                        e.outgoing.push_back(PoolMessage {
                            context: 0,
                            body: PoolBody::SendData(data),
                        });
                    }
                }
            }
        }
        // Post a waiting write once the peer's copy holds the pool's registration.
        if let Some(el) = e.waiting.front().copied() {
            let known = cluster
                .host(node)
                .driver()
                .expect("live")
                .tpt()
                .remote_entries(peer)
                .map(|mut it| it.any(|t| t.handle == el.handle))
                .unwrap_or(false);
            if let (true, Some(slot)) = (known, e.staging.iter().position(|x| x.is_none())) {
                let at = l.staging_base + slot as u32 * l.stage_bytes;
                let data = packet(node, e.session, e.next_seq, spec.packet_bytes);
                cluster.host(node).nic().mem.write_bytes(at, &data);
                let d = cluster.host_mut(node).driver_mut().expect("live");
                let ind = e.initiator.indication(&el, spec.packet_bytes);
                let imm = match &ind {
                    Indication::Idata(imm) => Some(*imm),
                    Indication::Message(_) => None,
                };
                let r = d.rdma_write(
                    peer,
                    RegionRef::new(x, X_LOGICAL + at as u64),
                    RegionRef::new(el.handle, el.address),
                    spec.packet_bytes,
                    imm,
                    SPLIT_TAG | KIND_WRITE | slot as u64,
                );
                match r {
                    Ok(()) => {
                        e.waiting.pop_front();
                        e.staging[slot] = Some(InFlight::Write(el, e.session));
                        e.next_seq += 1;
                        *self.stats.sent.entry(dir.clone()).or_default() += 1;
                        e.first_sent.get_or_insert(now);
                        match ind {
                            Indication::Idata(_) => self.stats.by_idata += 1,
                            Indication::Message(m) => {
                                self.stats.by_message += 1;
                                e.outgoing.push_front(m);
                            }
                        }
                    }
                    Err(
                        nic_driver::VerbsError::RingFull { .. }
                        | nic_driver::VerbsError::NodeBarred { .. },
                    ) => {}
                    Err(err) => sb.violation(
                        now,
                        "split-driver",
                        vec![node],
                        None,
                        format!(
                            "RDMA WRITE into pool {} element {}: {err}",
                            el.pool, el.element
                        ),
                    ),
                }
            }
        }
    }

    fn on_completion(
        &mut self,
        cluster: &mut Cluster,
        sb: &mut Scoreboard,
        verdict: &mut MemoryVerdict,
        h: usize,
        c: Completion,
        now: u64,
    ) {
        let spec = self.spec.clone();
        let l = self.layout;
        let Some(s) = self.side(h) else { return };
        let Some(e) = self.ends[s].as_mut() else {
            return;
        };
        match c {
            Completion::Send { wr_id, status, .. } => {
                let slot = (wr_id & 0xFF) as usize;
                let Some(what) = e.staging.get_mut(slot).and_then(|x| x.take()) else {
                    return;
                };
                let session = match what {
                    InFlight::Write(el, session) => {
                        if session == e.session {
                            if let Some(reply) = e.initiator.written(&el) {
                                e.outgoing.push_back(reply);
                            }
                        }
                        session
                    }
                    InFlight::Message(session) => session,
                };
                // A failure of this session leaves the peer's view unknown (the write or
                // message may or may not have landed): both ends start over.
                if status != CompletionStatus::Success && session == e.session {
                    self.restart_both();
                }
            }
            Completion::Receive {
                wr_id,
                immediate,
                byte_count,
                status,
                ..
            } => {
                let j = (wr_id & 0xFF) as u32;
                let at = l.recv_base + j * l.recv_bytes;
                let mut event = None;
                if status == CompletionStatus::Success {
                    match immediate {
                        Some(imm) => event = e.target.on_idata(imm),
                        None => {
                            let mut bytes = cluster
                                .host(h)
                                .nic()
                                .mem
                                .read_bytes(at, byte_count.min(l.recv_bytes) as usize)
                                .to_vec();
                            // A message of an earlier session (still on the wire when the
                            // session started over) names pools that are gone: dropped.
                            let decoded = PoolMessage::decode(&bytes);
                            if let Ok(m) = &decoded {
                                if m.context >> 32 != e.session as u64 {
                                    self.stats.late += 1;
                                    bytes.clear();
                                } else {
                                    let mut m = m.clone();
                                    m.context &= 0xFFFF_FFFF;
                                    bytes = m.encode();
                                }
                            }
                            let f = decoded.map(|m| m.function());
                            use nic_driver::pools::Function as F;
                            match f {
                                _ if bytes.is_empty() => {}
                                Ok(
                                    F::BufferRecvPool
                                    | F::BufferRecvPoolUpdate
                                    | F::BufferPoolFlushRequest,
                                ) => {
                                    if let Some(reply) = e.initiator.on_message(&bytes) {
                                        e.outgoing.push_back(reply);
                                    }
                                }
                                _ => {
                                    let (ev, reply) = e.target.on_message(&bytes);
                                    event = ev;
                                    if let Some(r) = reply {
                                        e.outgoing.push_back(r);
                                    }
                                }
                            }
                        }
                    }
                }
                // The receive buffer goes back.
                if let (Some(x), Some(d)) = (e.x_handle, cluster.host_mut(h).driver_mut()) {
                    let _ = d.post_receive(
                        e.peer as u16,
                        RegionRef::new(x, X_LOGICAL + at as u64),
                        l.recv_bytes,
                        SPLIT_TAG | KIND_RECV | j as u64,
                    );
                }
                let data = match event {
                    Some(TargetEvent::Data {
                        pool,
                        element,
                        bytes,
                    }) => {
                        let Some(half) = e
                            .halves
                            .iter()
                            .position(|x| x.writable_pool() == Some(pool))
                        else {
                            return;
                        };
                        let addr = l.pool_base(half) + element * spec.element_bytes;
                        let got = cluster
                            .host(h)
                            .nic()
                            .mem
                            .read_bytes(addr, bytes as usize)
                            .to_vec();
                        e.target.take(pool, element);
                        Some(got)
                    }
                    Some(TargetEvent::SendData(d)) => Some(d),
                    Some(TargetEvent::Flushed(pools)) => {
                        for p in pools {
                            if let Some(desc) = e.target.remove_flushed(p) {
                                self.stats.pools_flushed += 1;
                                if let Some(d) = cluster.host_mut(h).driver_mut() {
                                    let _ = d.deregister(desc.handle);
                                }
                                for half in e.halves.iter_mut() {
                                    if half.writable_pool() == Some(p) {
                                        *half = PoolHalf::Freeing {
                                            handle: desc.handle,
                                        };
                                    }
                                }
                            }
                        }
                        None
                    }
                    _ => None,
                };
                if let Some(got) = data {
                    let peer = e.peer;
                    let current = e.session;
                    let head = packet_head(&got);
                    let want = e.expect;
                    let ok = match head {
                        Some((src, session, _))
                            if src == peer && session < (current & 0xFF_FFFF) =>
                        {
                            self.stats.late += 1;
                            return;
                        }
                        Some((src, session, seq)) if src == peer => {
                            let expected = match e.expect {
                                Some((sn, n)) if sn == session => n,
                                _ => 0,
                            };
                            let good = seq == expected
                                && got.len() == spec.packet_bytes as usize
                                && got == packet(src, session, seq, got.len() as u32);
                            e.expect = Some((session, seq + 1));
                            good
                        }
                        _ => false,
                    };
                    if !ok {
                        sb.violation(now, "split-driver", vec![h, peer], None, format!("host {h} received a packet from host {peer} that is not the next one, byte for byte: (source, session, number) {head:?} of {} bytes, expected (session, number) {want:?} of {} bytes in session {current}", got.len(), spec.packet_bytes));
                    }
                    *self.stats.delivered.entry(Self::dir(peer, h)).or_default() += 1;
                    self.last_delivered[1 - s] = Some(now);
                    e.received_since_flush += 1;
                    e.taken += 1;
                    // Elements go back a quarter of a pool at a time (one message).
                    let mut msgs = if e.taken * 4 >= spec.elements {
                        e.taken = 0;
                        e.target.replenish()
                    } else {
                        vec![]
                    };
                    if spec.flush_every > 0
                        && e.received_since_flush >= spec.flush_every
                        && now < self.stop_at
                    {
                        let live = e.halves.iter().find_map(|x| match x {
                            PoolHalf::Live { pool, .. } => Some(*pool),
                            _ => None,
                        });
                        if let (Some(pool), true) =
                            (live, e.halves.iter().any(|x| *x == PoolHalf::Free))
                        {
                            if let Some(m) = e.target.flush(pool) {
                                msgs.push(m);
                                e.received_since_flush = 0;
                                if self.free_at_flush {
                                    if let Some(half) = e
                                        .halves
                                        .iter()
                                        .position(|x| x.writable_pool() == Some(pool))
                                    {
                                        verdict.freed(h, l.pool_base(half), l.pool_bytes);
                                    }
                                }
                                // The next pool goes in the free half at the next step.
                                for x in e.halves.iter_mut() {
                                    if let PoolHalf::Live { pool: p, handle } = *x {
                                        if p == pool {
                                            *x = PoolHalf::Flushing { pool, handle };
                                        }
                                    }
                                }
                            }
                        }
                    }
                    e.outgoing.extend(msgs);
                }
            }
            Completion::Deregistered { entry } => {
                for (half, x) in e.halves.iter_mut().enumerate() {
                    if *x
                        == (PoolHalf::Freeing {
                            handle: entry.handle,
                        })
                    {
                        *x = PoolHalf::Free;
                        self.stats.pools_freed += 1;
                        verdict.freed(h, l.pool_base(half), l.pool_bytes);
                        sb.deregister(h, l.pool_base(half));
                    }
                }
            }
            // The exchange posts no local work requests.
            Completion::Local { .. } => {}
        }
    }

    /// End of run: counters of both ends, goodput per direction.
    pub fn finish(&mut self) {
        for e in self.ends.iter().flatten() {
            let t = e.target.stats();
            let i = e.initiator.stats();
            self.stats.malformed += t.malformed + i.malformed;
            self.stats.out_of_protocol += t.out_of_protocol + i.out_of_protocol;
        }
        for (s, e) in self.ends.iter().enumerate() {
            let Some(e) = e else { continue };
            let dir = Self::dir(e.node, e.peer);
            if let (Some(first), Some(last)) = (e.first_sent, self.last_delivered[s]) {
                let cycles = last.saturating_sub(first).max(1);
                let bytes = self.stats.delivered.get(&dir).copied().unwrap_or(0)
                    * self.spec.packet_bytes as u64;
                self.stats.cycles.insert(dir.clone(), cycles);
                self.stats
                    .goodput_bytes_per_cycle
                    .insert(dir, bytes as f64 / cycles as f64);
            }
        }
    }
}
