//! `[local_work]`: the local work requests of source 001 in a scenario: a memory window
//! (BIND RKEY / UNBIND) and DELAYs, driven through the hosts' drivers on the co-simulated
//! NICs and judged where harm happens: the owner's host-memory writes and the completions
//! the drivers return, and the cells on the fabric.
//!
//! Each host gets `V`, [`V_BYTES`] of memory after the workload's regions: the owner
//! registers its `V` read-write (the window's parent region), the peer its own `V`
//! read-only (the source of its WRITEs). At `bind_at` the owner allocates an RKey and binds
//! it to `window_bytes` at `window_offset` of its `V` on its queue pair to the peer; at
//! `unbind_at` it unbinds it. From the start the peer tries an RDMA WRITE with the key every
//! `write_every` cycles, alternating a target inside the window and one in `V` just outside
//! it. DELAYs of `delay_cycles` go on the owner's queue pair to the peer at each cycle of
//! `delay_at`.
//!
//! Checks (violations of kind `window` / `delay`):
//! - every NIC write into the owner's `V` lies inside the window, and happens after the
//!   BIND was posted and before the old binding was freed (`Completion::Deregistered`);
//! - the BIND and UNBIND complete with success and their completions come in order;
//! - a WRITE that completes with success targeted the window, and was posted after the
//!   BIND's completion and before the old binding was freed;
//! - after a DELAY's completion reaches the owner's driver at cycle c, no request cell of
//!   the owner to the peer is delivered before `c + delay_cycles - DELAY_SLACK` (the
//!   completion reaches the driver at most `DELAY_SLACK` after the hold began) - unless the
//!   queue pair was already transmitting that cell's message.
//!
//! The report counts WRITEs refused by the peer's driver before the binding reached it,
//! landed, refused outside the window, refused after the unbind. The exchange runs in the
//! first epoch of both hosts: a power-off of either ends it.

use std::collections::{BTreeMap, VecDeque};

use nic_abi::{CompletionStatus, Syndrome};
use nic_cosim::cluster::Cluster;
use nic_cosim::fabric::Delivery;
use nic_cosim::host_memory::DmaWrite;
use nic_driver::tpt::{Protection, RegionRef, TptEntry};
use nic_driver::{Completion, LocalWork};
use serde::{Deserialize, Serialize};

use crate::scoreboard::{MemoryRange, Scoreboard};

/// Bytes of `V` per host.
pub const V_BYTES: u32 = 4096;
/// Logical base of `V`.
pub const V_LOGICAL: u64 = 0x40_0000_0000;
/// Bound on the cycles between the start of a DELAY's hold and its completion reaching the
/// driver (completion write and the driver's poll).
pub const DELAY_SLACK: u64 = 200;
/// Bytes of each of the peer's WRITEs.
const WRITE_BYTES: u32 = 16;
/// Tag of this exchange's work-request ids.
const TAG: u64 = 0x4C57 << 48;

/// `[local_work]` in a scenario file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LocalWorkSpec {
    /// The host that binds the window (and posts the DELAYs).
    pub owner: usize,
    /// The host whose queue pair carries them, and that writes with the key.
    pub peer: usize,
    /// Cycle of the BIND and of the UNBIND (after it).
    pub bind_at: u64,
    pub unbind_at: u64,
    /// The window inside the owner's `V` (multiples of 8).
    pub window_offset: u32,
    pub window_bytes: u32,
    /// The peer tries a WRITE with the key every this many cycles (0: never).
    pub write_every: u64,
    /// Cycles at which the owner posts a DELAY.
    pub delay_at: Vec<u64>,
    /// Each DELAY's cycle count.
    pub delay_cycles: u32,
}

impl Default for LocalWorkSpec {
    fn default() -> Self {
        LocalWorkSpec {
            owner: 0,
            peer: 1,
            bind_at: 20_000,
            unbind_at: 40_000,
            window_offset: 1024,
            window_bytes: 512,
            write_every: 500,
            delay_at: vec![],
            delay_cycles: 2000,
        }
    }
}

impl LocalWorkSpec {
    /// What is wrong with it for a scenario of `hosts` hosts and `cycles` cycles, as
    /// `(key, message)`.
    pub fn check(&self, hosts: usize, cycles: u64) -> Result<(), (&'static str, String)> {
        for (key, h) in [("owner", self.owner), ("peer", self.peer)] {
            if h >= hosts {
                return Err((key, format!("must be a host of 0..{hosts}, got {h}")));
            }
        }
        if self.owner == self.peer {
            return Err(("peer", format!("must differ from owner ({})", self.owner)));
        }
        if self.unbind_at <= self.bind_at || self.unbind_at >= cycles {
            return Err((
                "unbind_at",
                format!(
                    "must be after bind_at ({}) and before the end ({cycles}), got {}",
                    self.bind_at, self.unbind_at
                ),
            ));
        }
        if self.window_bytes == 0
            || !self.window_offset.is_multiple_of(8)
            || !self.window_bytes.is_multiple_of(8)
            || self.window_offset as u64 + self.window_bytes as u64 > V_BYTES as u64
        {
            return Err((
                "window_bytes",
                format!(
                    "the window (offset {}, {} bytes) must be non-empty, 8-aligned and inside V ({V_BYTES} bytes)",
                    self.window_offset, self.window_bytes
                ),
            ));
        }
        if self.window_bytes < WRITE_BYTES || self.window_offset < WRITE_BYTES {
            return Err((
                "window_offset",
                format!(
                    "leave room for a {WRITE_BYTES}-byte WRITE inside the window and before it"
                ),
            ));
        }
        if self.delay_cycles as u64 > nic_abi::DELAY_CYCLES_MASK {
            return Err((
                "delay_cycles",
                format!(
                    "must be at most {}, got {}",
                    nic_abi::DELAY_CYCLES_MASK,
                    self.delay_cycles
                ),
            ));
        }
        if let Some(&at) = self.delay_at.iter().find(|&&at| at >= cycles) {
            return Err(("delay_at", format!("{at} is not before the end ({cycles})")));
        }
        Ok(())
    }
}

/// Counters of the exchange (in the report).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LocalWorkStats {
    pub bind_completed_at: Option<u64>,
    pub unbind_completed_at: Option<u64>,
    pub freed_at: Option<u64>,
    /// WRITEs the peer's driver refused because its copy held no binding (before the
    /// BIND's TPT_UPDATE reached it, or after the TPT_REMOVE).
    pub refused_unbound: u64,
    /// WRITEs refused because the target lay outside the window.
    pub refused_outside: u64,
    /// WRITEs posted and completed with success / with an error (other than below).
    pub landed: u64,
    pub failed: u64,
    /// WRITEs the owner's NIC refused (REMOTE_ACCESS_ERROR) after the UNBIND was posted:
    /// with a hardware TPT the NIC invalidates the window's entry when it executes the
    /// UNBIND, before the peer's copy hears of it (the TPT_REMOVE), so a WRITE the peer
    /// posts meanwhile is refused by the target. Never with a software TPT (the owner's
    /// NIC checks nothing; the deregistration fence covers that window).
    pub refused_by_target: u64,
    /// DELAYs posted and completed, and the shortest gap measured after one: cycles from
    /// its completion reaching the driver to the next request cell of the owner to the
    /// peer.
    pub delays_posted: u64,
    pub delays_completed: u64,
    pub shortest_gap_after_delay: Option<u64>,
}

/// The exchange's state.
pub struct LocalWorkRun {
    spec: LocalWorkSpec,
    v_base: u32,
    pub stats: LocalWorkStats,
    /// Both hosts booted in their first epoch and `V` registered: (owner's V handle, peer's).
    handles: Option<(u32, u32)>,
    over: bool,
    rkey: Option<u32>,
    bind_posted_at: Option<u64>,
    bound_entry: Option<TptEntry>,
    /// WRITEs in flight: wr_id -> (posted at, inside the window).
    writes: BTreeMap<u64, (u64, bool)>,
    next_wr: u64,
    next_delay: usize,
    /// Completions of DELAYs not yet followed by a request cell: (seen at, cycles).
    delay_watch: VecDeque<u64>,
    /// When the UNBIND was posted.
    unbind_posted_at: Option<u64>,
    /// Planted bugs ([`crate::scenario_run::PlantedBug`]): bind all of `V`; post DELAYs of
    /// a quarter of `delay_cycles`.
    pub too_wide: bool,
    pub shorten_delay: bool,
}

impl LocalWorkRun {
    pub fn new(spec: LocalWorkSpec, v_base: u32) -> Self {
        LocalWorkRun {
            spec,
            v_base,
            stats: LocalWorkStats::default(),
            handles: None,
            over: false,
            rkey: None,
            bind_posted_at: None,
            bound_entry: None,
            writes: BTreeMap::new(),
            next_wr: 0,
            next_delay: 0,
            delay_watch: VecDeque::new(),
            unbind_posted_at: None,
            too_wide: false,
            shorten_delay: false,
        }
    }

    /// Whether `c` (a completion of host `h`) belongs to the exchange.
    pub fn owns(&self, h: usize, c: &Completion) -> bool {
        let ours = |wr_id: &u64| wr_id & (0xFFFF << 48) == TAG;
        match c {
            Completion::Send { wr_id, .. } | Completion::Local { wr_id, .. } => ours(wr_id),
            Completion::Deregistered { entry } => {
                h == self.spec.owner && self.bound_entry.is_some_and(|e| e.handle == entry.handle)
            }
            Completion::Receive { .. } => false,
        }
    }

    /// Host `h` booted: register its `V` (the owner's and the peer's first epochs only).
    pub fn on_boot(&mut self, cluster: &mut Cluster, sb: &mut Scoreboard, h: usize) {
        let s = &self.spec;
        if self.over || (h != s.owner && h != s.peer) {
            return;
        }
        let writable = h == s.owner;
        let protection = if writable {
            Protection::ReadWrite
        } else {
            Protection::ReadOnly
        };
        let v_base = self.v_base;
        let host = cluster.host_mut(h);
        if !writable {
            host.nic()
                .mem
                .write_bytes(v_base, &[0x5A; V_BYTES as usize]);
        }
        let Some(d) = host.driver_mut() else { return };
        match d.register(V_LOGICAL, v_base, V_BYTES, protection) {
            Ok(e) => {
                sb.register(
                    h,
                    MemoryRange {
                        start: v_base,
                        len: V_BYTES,
                        writable,
                    },
                );
                let (o, p) = self.handles.unwrap_or((u32::MAX, u32::MAX));
                self.handles = Some(if writable {
                    (e.handle, p)
                } else {
                    (o, e.handle)
                });
            }
            Err(e) => {
                let at = cluster.cycle();
                sb.violation(at, "window", vec![h], None, format!("registering V: {e}"));
                self.over = true;
            }
        }
    }

    /// A host powered off: the exchange ends if it is one of its two.
    pub fn on_power_off(&mut self, h: usize) {
        if h == self.spec.owner || h == self.spec.peer {
            self.over = true;
        }
    }

    fn ready(&self) -> Option<(u32, u32)> {
        self.handles
            .filter(|&(o, p)| o != u32::MAX && p != u32::MAX && !self.over)
    }

    /// One cycle: post what is due, take this exchange's completions.
    pub fn step(
        &mut self,
        cluster: &mut Cluster,
        sb: &mut Scoreboard,
        own: Vec<(usize, Completion)>,
    ) {
        let now = cluster.cycle();
        for (h, c) in own {
            self.on_completion(sb, h, c, now);
        }
        let Some((owner_v, peer_v)) = self.ready() else {
            return;
        };
        let s = self.spec.clone();
        let joined =
            |cluster: &Cluster, h: usize| cluster.host(h).driver().is_some_and(|d| d.is_joined());
        if !joined(cluster, s.owner) || !joined(cluster, s.peer) {
            return;
        }
        if now >= s.bind_at && self.bind_posted_at.is_none() {
            let Some(d) = cluster.host_mut(s.owner).driver_mut() else {
                return;
            };
            let (offset, bytes) = match self.too_wide {
                false => (s.window_offset, s.window_bytes),
                true => (0, V_BYTES),
            };
            let result = d.allocate_rkey().and_then(|rkey| {
                let range = RegionRef::new(owner_v, V_LOGICAL + offset as u64);
                d.bind_rkey(
                    s.peer as u16,
                    rkey,
                    range,
                    bytes,
                    Protection::WriteOnly,
                    TAG | 1,
                )
                .map(|e| (rkey, e))
            });
            match result {
                Ok((rkey, e)) => {
                    self.rkey = Some(rkey);
                    self.bound_entry = Some(e);
                    self.bind_posted_at = Some(now);
                }
                // A full ring: try again next cycle.
                Err(nic_driver::VerbsError::RingFull { .. }) => {}
                Err(e) => {
                    sb.violation(
                        now,
                        "window",
                        vec![s.owner],
                        None,
                        format!("BIND refused: {e}"),
                    );
                    self.over = true;
                }
            }
        }
        if now >= s.unbind_at
            && self.stats.bind_completed_at.is_some()
            && self.unbind_posted_at.is_none()
        {
            if let (Some(rkey), Some(d)) = (self.rkey, cluster.host_mut(s.owner).driver_mut()) {
                match d.unbind_rkey(s.peer as u16, rkey, TAG | 2) {
                    Ok(()) => self.unbind_posted_at = Some(now),
                    Err(nic_driver::VerbsError::RingFull { .. }) => {}
                    Err(e) => {
                        sb.violation(
                            now,
                            "window",
                            vec![s.owner],
                            None,
                            format!("UNBIND refused: {e}"),
                        );
                        self.over = true;
                    }
                }
            }
        }
        if self.next_delay < s.delay_at.len() && now >= s.delay_at[self.next_delay] {
            if let Some(d) = cluster.host_mut(s.owner).driver_mut() {
                let wr = TAG | 0x100 | self.next_delay as u64;
                let cycles = match self.shorten_delay {
                    false => s.delay_cycles,
                    true => s.delay_cycles / 4,
                };
                match d.post_delay(s.peer as u16, cycles, wr) {
                    Ok(()) => {
                        self.stats.delays_posted += 1;
                        self.next_delay += 1;
                    }
                    Err(nic_driver::VerbsError::RingFull { .. }) => {}
                    Err(e) => {
                        sb.violation(
                            now,
                            "delay",
                            vec![s.owner],
                            None,
                            format!("DELAY refused: {e}"),
                        );
                        self.next_delay += 1;
                    }
                }
            }
        }
        if s.write_every > 0 && now.is_multiple_of(s.write_every) {
            let inside = self.next_wr.is_multiple_of(2);
            let offset = if inside {
                s.window_offset + (self.next_wr as u32 * 8) % (s.window_bytes - WRITE_BYTES + 8)
            } else {
                s.window_offset - WRITE_BYTES
            };
            let rkey = self.rkey.unwrap_or(u32::MAX - 1);
            let wr = TAG | 0x1000 | self.next_wr;
            self.next_wr += 1;
            if let Some(d) = cluster.host_mut(s.peer).driver_mut() {
                let from = RegionRef::new(peer_v, V_LOGICAL);
                let to = RegionRef::new(rkey, V_LOGICAL + offset as u64);
                match d.rdma_write(s.owner as u16, from, to, WRITE_BYTES, None, wr) {
                    Ok(()) => {
                        self.writes.insert(wr, (now, inside));
                    }
                    Err(nic_driver::VerbsError::Protection(
                        nic_driver::tpt::ProtectionError::UnknownRemoteHandle { .. },
                    )) => self.stats.refused_unbound += 1,
                    Err(nic_driver::VerbsError::Protection(_)) => self.stats.refused_outside += 1,
                    Err(_) => {}
                }
            }
        }
    }

    fn on_completion(&mut self, sb: &mut Scoreboard, h: usize, c: Completion, now: u64) {
        match c {
            Completion::Local { work, status, .. } => match work {
                LocalWork::Delay { .. } => {
                    self.stats.delays_completed += 1;
                    if status == CompletionStatus::Success {
                        self.delay_watch.push_back(now);
                    }
                }
                LocalWork::Bind { entry, .. } => {
                    if status != CompletionStatus::Success {
                        sb.violation(
                            now,
                            "window",
                            vec![h],
                            None,
                            format!("{work:?} completed with {status:?}"),
                        );
                        self.over = true;
                        return;
                    }
                    match entry {
                        Some(_) => self.stats.bind_completed_at = Some(now),
                        None => {
                            if self.stats.bind_completed_at.is_none() {
                                sb.violation(
                                    now,
                                    "window",
                                    vec![h],
                                    None,
                                    "the UNBIND completed before the BIND".into(),
                                );
                            }
                            self.stats.unbind_completed_at = Some(now);
                        }
                    }
                }
            },
            Completion::Send { wr_id, status, .. } => {
                let Some((posted, inside)) = self.writes.remove(&wr_id) else {
                    return;
                };
                if status != CompletionStatus::Success {
                    let unbound_at_target = status
                        == CompletionStatus::Remote(Syndrome::RemoteAccessError)
                        && self.unbind_posted_at.is_some_and(|u| now > u);
                    if unbound_at_target {
                        self.stats.refused_by_target += 1;
                    } else {
                        self.stats.failed += 1;
                    }
                    return;
                }
                self.stats.landed += 1;
                // Posted once the binding was applied, and before the old binding was
                // freed (a peer that posts before the TPT_REMOVE reaches it may still
                // land: the deregistration fence waits for it).
                let bound_then = self.stats.bind_completed_at.is_some_and(|b| posted > b)
                    && self.stats.freed_at.is_none_or(|f| posted < f);
                if !inside || !bound_then {
                    sb.violation(
                        now,
                        "window",
                        vec![self.spec.peer, self.spec.owner],
                        None,
                        format!(
                            "a WRITE with the window's key posted at {posted} ({}) completed with success",
                            if inside { "while not bound" } else { "outside the window" }
                        ),
                    );
                }
            }
            Completion::Deregistered { .. } => self.stats.freed_at = Some(now),
            Completion::Receive { .. } => {}
        }
    }

    /// The owner's NIC wrote host memory: every write into `V` must lie in the window while
    /// the binding can be in use.
    pub fn check_dma(&mut self, sb: &mut Scoreboard, h: usize, writes: &[DmaWrite]) {
        if h != self.spec.owner || self.handles.is_none() {
            return;
        }
        let (v0, v1) = (self.v_base, self.v_base + V_BYTES);
        let w0 = self.v_base + self.spec.window_offset;
        let w1 = w0 + self.spec.window_bytes;
        for w in writes.iter().filter(|w| (v0..v1).contains(&w.addr)) {
            let inside = (w0..w1).contains(&w.addr);
            let live = self.bind_posted_at.is_some_and(|b| w.cycle > b)
                && self.stats.freed_at.is_none_or(|f| w.cycle < f);
            if !inside || !live {
                sb.violation(
                    w.cycle,
                    "window",
                    vec![h],
                    Some(w.addr as u64),
                    format!(
                        "the NIC wrote V at {:#x} {}",
                        w.addr,
                        if inside {
                            "while the window was not bound"
                        } else {
                            "outside the window"
                        }
                    ),
                );
            }
        }
    }

    /// Cells the fabric delivered: the owner's requests to the peer wait out each DELAY.
    pub fn on_delivery(&mut self, sb: &mut Scoreboard, d: &Delivery) {
        use nic_rtl::cell::format::{CellHeader, HEADER_WORDS};
        if d.src != self.spec.owner || d.dst != self.spec.peer || d.words.len() < HEADER_WORDS {
            return;
        }
        let hdr = CellHeader::from_words([d.words[0], d.words[1], d.words[2]]);
        if !hdr.first() || !nic_cosim::cell_link::is_request(hdr.opcode) {
            return;
        }
        // The cell left the owner's NIC no later than `d.ready - latency`; `d.ready` bounds it.
        while let Some(&seen) = self.delay_watch.front() {
            if d.ready < seen {
                // Sent before the DELAY's completion was seen: its message was already
                // on the wire, or it was sent before the hold.
                break;
            }
            self.delay_watch.pop_front();
            let gap = d.ready - seen;
            let s = &mut self.stats.shortest_gap_after_delay;
            *s = Some(s.map_or(gap, |x| x.min(gap)));
            let least = (self.spec.delay_cycles as u64).saturating_sub(DELAY_SLACK);
            if gap < least {
                sb.violation(
                    d.ready,
                    "delay",
                    vec![self.spec.owner, self.spec.peer],
                    None,
                    format!(
                        "a request of host {} to host {} reached the fabric {gap} cycles after a DELAY of {} completed",
                        self.spec.owner, self.spec.peer, self.spec.delay_cycles
                    ),
                );
            }
        }
    }

    /// End of run: the BIND and UNBIND completed and the old binding was freed.
    pub fn finish(&mut self, sb: &mut Scoreboard, end: u64) {
        if self.over {
            return;
        }
        let s = &self.stats;
        let missing = [
            (s.bind_completed_at.is_none(), "the BIND never completed"),
            (
                s.unbind_completed_at.is_none(),
                "the UNBIND never completed",
            ),
            (s.freed_at.is_none(), "the old binding was never freed"),
            (
                s.delays_completed < s.delays_posted,
                "a DELAY never completed",
            ),
        ];
        for (bad, what) in missing {
            if bad {
                sb.violation(end, "window", vec![self.spec.owner], None, what.into());
            }
        }
    }
}
