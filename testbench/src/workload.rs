//! The application on every host of a multi-host run: it registers memory, starts RDMA
//! WRITEs, READs, atomics and SENDs through the driver's verbs, and checks every result
//! byte for byte.
//!
//! # Memory of one host (physical)
//! | region | protection | use |
//! | --- | --- | --- |
//! | driver arena | (driver) | completion ring, per-peer rings, staging and bounce buffers |
//! | `W`, `hosts` slots of [`MemoryLayout::slot`] | read-write | slot `s` belongs to source host `s`: an atomic counter (word 0), then [`RING`] RDMA WRITE targets |
//! | `R`, [`MemoryLayout::r_len`] | read-only | a pattern of (host, epoch, offset): the RDMA READ source |
//! | `L`, per peer [`MemoryLayout::l_per_peer`] | read-write | per op slot: outgoing data, READ destination, atomic result; then [`RECEIVES`] receive buffers |
//!
//! The same layout is used in every epoch, so a stale RDMA WRITE of the heartbeat baseline
//! lands in memory the new epoch has registered (000's data-corruption case) and only the
//! wire-level scoreboard can tell it apart.
//!
//! # Operations
//! At most [`RING`] operations are in flight from a host to one peer, each in its own op
//! slot, so the data of one never overlaps another's. Payloads are self-describing: word 0
//! is `source << 48 | source epoch << 32 | sequence`, the rest a pattern of that word.
//! Checks on completion: an RDMA WRITE's bytes are in the target's memory (if the target is
//! still in the epoch the sender wrote to); a READ returns the target's pattern of the
//! epoch whose TPT entry it used; an atomic returns the counter value its predecessors
//! left; a SEND arrives byte-identical, once, in order. At the end, every successful SEND
//! to a host still in the same epoch must have been delivered.

use crate::memory_verdict::{MemoryVerdict, OperationTag, READ_STRIPES};
use crate::scenario::{MixSpec, Scenario};
use crate::scoreboard::{ExpectedRequest, MemoryRange, Scoreboard};
use nic_abi::CompletionStatus;
use nic_cosim::cluster::Cluster;
use nic_driver::regcache::{OwnerId, RegistrationCache};
use nic_driver::tpt::{Protection, RegionRef, TptEntry};
use nic_driver::{Completion, DriverConfig, VerbsError};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Operations in flight from one host to one peer (op slots).
pub const RING: usize = 8;
/// Receive buffers a host keeps posted per peer.
pub const RECEIVES: usize = 4;
/// Logical (virtual) bases of the three regions.
const W_LOGICAL: u64 = 0x10_0000_0000;
const R_LOGICAL: u64 = 0x20_0000_0000;
const L_LOGICAL: u64 = 0x30_0000_0000;

fn align(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// Physical placement of the driver arena and the application's regions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryLayout {
    pub hosts: usize,
    /// Largest payload (a multiple of 8).
    pub max_bytes: u32,
    pub arena_base: u32,
    pub arena_len: u32,
    pub w_base: u32,
    /// Bytes of `W` per source host.
    pub slot: u32,
    pub r_base: u32,
    pub r_len: u32,
    /// Bytes of one stripe of `R` (a READ made with a TPT copy of epoch `e` reads stripe
    /// `e % READ_STRIPES`, see [`crate::memory_verdict`]).
    pub r_stripe: u32,
    pub l_base: u32,
    pub l_per_peer: u32,
    /// The split-driver exchange's memory `X` (see [`crate::split_driver`]; empty without one).
    pub x_base: u32,
    pub x_len: u32,
    /// The `[local_work]` exchange's memory `V` (see [`crate::local_work`]; empty without one).
    pub v_base: u32,
    pub v_len: u32,
    /// Host memory size.
    pub total: u32,
}

impl MemoryLayout {
    pub fn new(hosts: usize, max_bytes: u32, arena_needed: u64) -> Self {
        let mb = align(max_bytes as u64, 8);
        let arena_base = 0x1000u64;
        let arena_len = align(arena_needed, 4096);
        let w_base = arena_base + arena_len;
        let slot = 64 + RING as u64 * mb;
        let r_base = align(w_base + hosts as u64 * slot, 4096);
        let r_stripe = align((2 * mb).max(512), 64);
        let r_len = align(READ_STRIPES as u64 * r_stripe, 4096);
        let l_base = r_base + r_len;
        // Per op slot: data out, READ destination, atomic result (8, padded to 64).
        let l_per_peer = RING as u64 * (2 * mb + 64) + RECEIVES as u64 * mb;
        let total = align(l_base + hosts as u64 * l_per_peer, 1 << 16);
        MemoryLayout {
            hosts,
            max_bytes: mb as u32,
            arena_base: arena_base as u32,
            arena_len: arena_len as u32,
            w_base: w_base as u32,
            slot: slot as u32,
            r_base: r_base as u32,
            r_len: r_len as u32,
            r_stripe: r_stripe as u32,
            l_base: l_base as u32,
            l_per_peer: l_per_peer as u32,
            x_base: total as u32,
            x_len: 0,
            v_base: total as u32,
            v_len: 0,
            total: total as u32,
        }
    }

    /// The same layout with `bytes` of split-driver memory `X` after the regions.
    pub fn with_x(mut self, bytes: u32) -> Self {
        self.x_base = self.total;
        self.x_len = bytes;
        self.total = align(self.x_base as u64 + bytes as u64, 1 << 16) as u32;
        self.v_base = self.total;
        self
    }

    /// The same layout with `bytes` of local-work memory `V` after everything else.
    pub fn with_v(mut self, bytes: u32) -> Self {
        self.v_base = self.total;
        self.v_len = bytes;
        self.total = align(self.v_base as u64 + bytes as u64, 1 << 16) as u32;
        self
    }

    fn w_len(&self) -> u32 {
        self.hosts as u32 * self.slot
    }

    fn l_len(&self) -> u32 {
        self.hosts as u32 * self.l_per_peer
    }

    /// Offset in `L` of peer `p`'s op slot `k`: (data out, READ destination, atomic result).
    fn l_slot(&self, p: usize, k: usize) -> (u32, u32, u32) {
        let base = p as u32 * self.l_per_peer + k as u32 * (2 * self.max_bytes + 64);
        (base, base + self.max_bytes, base + 2 * self.max_bytes)
    }

    /// Offset in `L` of the `j`th receive buffer for peer `p`.
    fn l_receive(&self, p: usize, j: usize) -> u32 {
        p as u32 * self.l_per_peer
            + RING as u32 * (2 * self.max_bytes + 64)
            + j as u32 * self.max_bytes
    }

    /// The driver arena as a scoreboard range.
    pub fn arena(&self) -> MemoryRange {
        MemoryRange {
            start: self.arena_base,
            len: self.arena_len,
            writable: true,
        }
    }
}

/// 8 bytes of the payload pattern: word `i` of the payload headed by `head`.
fn pattern_word(head: u64, i: u64) -> u64 {
    if i == 0 {
        return head;
    }
    let mut z = head ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `len` bytes of the payload headed by `head`.
pub fn payload(head: u64, len: usize) -> Vec<u8> {
    (0..len.div_ceil(8) as u64)
        .flat_map(|i| pattern_word(head, i).to_le_bytes())
        .take(len)
        .collect()
}

/// An RDMA WRITE's payload: word `i` is the operation's tag for word `i`.
fn tagged_payload(tag: OperationTag, len: u32) -> Vec<u8> {
    (0..len.div_ceil(8))
        .flat_map(|i| tag.word(i).to_le_bytes())
        .take(len as usize)
        .collect()
}

fn payload_head(src: usize, epoch: u32, seq: u32) -> u64 {
    (src as u64) << 48 | ((epoch as u64) & 0xFFFF) << 32 | seq as u64
}

/// The read-only region's content: word at byte offset `o` of host `h` in `epoch`.
fn read_pattern(h: usize, epoch: u32, offset: u32, len: usize) -> Vec<u8> {
    let head = 0xA5A5_0000_0000_0000 ^ (h as u64) << 40 ^ (epoch as u64) << 20;
    (offset as u64 / 8..(offset as u64 + len as u64).div_ceil(8))
        .flat_map(|i| pattern_word(head, i + 1).to_le_bytes())
        .take(len)
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    RdmaWrite,
    RdmaRead,
    Send,
    FetchAdd,
    CompareSwap,
}

impl OpKind {
    fn pick(mix: &MixSpec, r: u32) -> OpKind {
        let mut r = r;
        for (w, k) in [
            (mix.rdma_write, OpKind::RdmaWrite),
            (mix.rdma_read, OpKind::RdmaRead),
            (mix.send, OpKind::Send),
            (mix.fetch_add, OpKind::FetchAdd),
            (mix.compare_swap, OpKind::CompareSwap),
        ] {
            if r < w {
                return k;
            }
            r -= w;
        }
        OpKind::RdmaWrite
    }
}

#[derive(Clone, Debug)]
struct Op {
    kind: OpKind,
    target: usize,
    /// The target's epoch the TPT entry came from (SEND: the target's epoch at post).
    target_epoch: u32,
    psn: u32,
    slot: usize,
    len: u32,
    seq: u32,
    /// Target physical address (WRITE, atomics) or offset in `R` (READ).
    remote: u32,
    /// Atomics: the sum of the addends this host epoch posted to the counter before this
    /// one (the value it returns is the counter's base plus this).
    before: u64,
    /// What the memory verdict knows the operation by (RDMA WRITE and atomics).
    tag: OperationTag,
}

/// This host epoch's view of its counter in one target epoch. The counter may hold a
/// sum left by this host's previous epochs, so the first result sets the base; then an
/// atomic returns the base plus the addends of the atomics posted before it (one QP
/// executes them in order, and only this host writes its counter). Addends are the
/// operations' tags ([`OperationTag::atomic`]), so the memory verdict can tell which
/// atomic a counter write came from.
#[derive(Clone, Copy, Debug, Default)]
struct CounterView {
    /// Sum of the addends posted so far (wrapping).
    posted: u64,
    base: Option<u64>,
    /// An atomic failed: whether it executed is unknown, so values are no longer checked.
    uncertain: bool,
}

/// One host's application state for its current epoch.
struct HostApp {
    epoch: u32,
    joined: bool,
    next_wr: u64,
    seq: u32,
    ops: HashMap<u64, Op>,
    busy: Vec<[bool; RING]>,
    /// `(target, target epoch)` -> this host's counter there.
    counters: HashMap<(usize, u32), CounterView>,
    /// `(source, source epoch)` -> last sequence received.
    last_seq: HashMap<(usize, u32), u32>,
    /// The write region's registration (deregistered and registered again under traffic
    /// when `[workload] dereg_rate` > 0).
    w: WRegion,
    /// Which of the two overlapping ranges of `W` the next registration takes.
    w_narrow: bool,
    /// The application's registrations go through the registration cache (004), `W`'s
    /// under the process `owner`; a new process takes over when one exits.
    cache: RegistrationCache,
    owner: OwnerId,
    /// Which way the next deregistration of `W` goes (see [`Churn`]).
    churn: usize,
    /// Registrations of `W` replaced by a range change, deregistering: `(handle, start,
    /// len)`; their memory stays in use by the new range.
    retiring: Vec<(u32, u32, u32)>,
}

/// The three ways the cache (004) lets go of the write region's registration, taken in
/// turn: the application frees the memory (the free hook), the range changes (a request
/// for the whole of `W` while the narrow range is registered: the cache deregisters the
/// narrow one and registers the whole), or the process exits and the garbage collector
/// deregisters what it owned. A change from the whole to the narrow range is a hit, so
/// from the whole range the turn goes to the next way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Churn {
    Free,
    Change,
    OwnerExit,
}

const CHURN_ORDER: [Churn; 3] = [Churn::Free, Churn::Change, Churn::OwnerExit];

/// Registrations the application's cache keeps that no request holds.
const CACHE_CAPACITY: usize = 8;

/// The registration of a host's write region `W`. It alternates between two overlapping
/// ranges: all of `W`, and `W` without source 0's slot (source 0 then has nowhere to write
/// on this host until the next turn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WRegion {
    Registered {
        handle: u32,
        start: u32,
        len: u32,
    },
    /// Deregistration started; the memory is not free until the driver says so.
    Freeing {
        handle: u32,
        start: u32,
        len: u32,
    },
    /// Freed; registered again (the other range) from cycle `until`.
    Free {
        until: u64,
    },
    /// Not registered (registration failed).
    None,
}

/// Whether hosts `a` and `b` are the split-driver exchange's two ends.
fn is_split_pair(pair: Option<(usize, usize)>, a: usize, b: usize) -> bool {
    pair.is_some_and(|(x, y)| (a, b) == (x, y) || (a, b) == (y, x))
}

/// `a` without `b`: up to two ranges `(start, len)`.
fn range_minus(a: (u32, u32), b: Option<(u32, u32)>) -> Vec<(u32, u32)> {
    let (a0, a1) = (a.0 as u64, a.0 as u64 + a.1 as u64);
    let Some(b) = b else {
        return vec![a];
    };
    let (b0, b1) = (b.0 as u64, b.0 as u64 + b.1 as u64);
    let mut out = vec![];
    if b0 > a0 {
        out.push((a0, b0.min(a1)));
    }
    if b1 < a1 {
        out.push((b1.max(a0), a1));
    }
    out.into_iter()
        .filter(|(s, e)| e > s)
        .map(|(s, e)| (s as u32, (e - s) as u32))
        .collect()
}

/// Cycles a freed write region stays unregistered before the next registration.
const W_FREE_CYCLES: u64 = 400;

impl HostApp {
    fn new(hosts: usize, epoch: u32) -> Self {
        HostApp {
            epoch,
            joined: false,
            next_wr: 0,
            seq: 0,
            ops: HashMap::new(),
            busy: vec![[false; RING]; hosts],
            counters: HashMap::new(),
            last_seq: HashMap::new(),
            w: WRegion::None,
            w_narrow: false,
            cache: RegistrationCache::new(CACHE_CAPACITY),
            owner: OwnerId(1),
            churn: 0,
            retiring: vec![],
        }
    }
}

/// Counters of the workload for the report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WorkloadStats {
    /// Operations posted, per kind.
    pub posted: BTreeMap<String, u64>,
    /// Verbs refused by the driver, per error.
    pub refused: BTreeMap<String, u64>,
    /// Completions per kind and status.
    pub completions: BTreeMap<String, BTreeMap<String, u64>>,
    /// Results checked byte for byte.
    pub writes_verified: u64,
    pub reads_verified: u64,
    pub atomics_verified: u64,
    pub messages_delivered: u64,
    /// Operations still in flight at the end (their host or target went away, or the run ended).
    pub in_flight_at_end: u64,
    /// Write regions deregistered (started) and registered again under traffic.
    pub deregistrations: u64,
    pub reregistrations: u64,
    /// The applications' registration caches (004), summed over hosts and epochs.
    pub cache: CacheCounts,
}

/// Registration-cache counters of the applications.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CacheCounts {
    pub hits: u64,
    pub misses: u64,
    pub registrations: u64,
    /// Deregistrations started, per reason (freed, changed, evicted, collected).
    pub deregistrations: BTreeMap<String, u64>,
}

impl CacheCounts {
    fn add(&mut self, c: &RegistrationCache) {
        let st = c.stats();
        self.hits += st.hits;
        self.misses += st.misses;
        self.registrations += st.registrations;
        for (r, n) in &st.deregistrations {
            *self
                .deregistrations
                .entry(format!("{r:?}").to_lowercase())
                .or_default() += n;
        }
    }
}

/// A SEND the sender saw succeed: `(target, target epoch, source, source epoch, seq)`.
type SentMessage = (usize, u32, usize, u32, u32);

/// The applications of every host (see the module docs).
pub struct Workload {
    pub layout: MemoryLayout,
    rate: f64,
    mix: MixSpec,
    min_bytes: u32,
    targets: Vec<bool>,
    sources: Vec<bool>,
    stop_at: u64,
    /// Chance per cycle that a host deregisters its write region.
    dereg_rate: f64,
    /// A planted bug: take the write region as free as soon as its deregistration starts
    /// (no fence), as the driver did before deregistration waited for its peers.
    pub free_at_deregistration: bool,
    /// Two hosts whose queue pair carries the split-driver exchange: no SENDs between
    /// them, and no receives posted for each other.
    pub split_pair: Option<(usize, usize)>,
    apps: Vec<Option<HostApp>>,
    /// `(host, handle)` -> the host's epoch that registered it.
    handle_epoch: HashMap<(usize, u32), u32>,
    sent_ok: Vec<SentMessage>,
    delivered: HashSet<SentMessage>,
    pub stats: WorkloadStats,
}

/// Data that does not match: when the target has moved to another epoch since the entry
/// the operation used, the consequence of a stale READ or atomic (counted with the stale
/// findings under the baseline, a violation under the protocol), else plain corruption.
fn data_finding(
    sb: &mut Scoreboard,
    stale: bool,
    cycle: u64,
    hosts: Vec<usize>,
    address: Option<u64>,
    detail: String,
) {
    if stale {
        sb.stale_finding(cycle, "stale-data", hosts, address, detail);
    } else {
        sb.violation(cycle, "data", hosts, address, detail);
    }
}

fn status_name(s: CompletionStatus) -> String {
    match s {
        CompletionStatus::Remote(syn) => syn.name().to_string(),
        other => format!("{other:?}"),
    }
}

fn verbs_error_name(e: &VerbsError) -> String {
    let d = format!("{e:?}");
    d.split(['(', ' ', '{']).next().unwrap_or("?").to_string()
}

impl Workload {
    /// The layout for `scenario` with its drivers' configuration.
    pub fn new(scenario: &Scenario, driver: &DriverConfig) -> Self {
        let n = scenario.hosts;
        let mut layout = MemoryLayout::new(n, scenario.workload.max_bytes, driver.arena_needed());
        if let Some(sd) = &scenario.split_driver {
            layout = layout.with_x(crate::split_driver::SplitLayout::bytes_needed(
                sd,
                scenario.driver.recv_buffer_bytes,
            ));
        }
        if scenario.local_work.is_some() {
            layout = layout.with_v(crate::local_work::V_BYTES);
        }
        let mask = |list: &Option<Vec<usize>>| match list {
            Some(l) => (0..n).map(|h| l.contains(&h)).collect(),
            None => vec![true; n],
        };
        Workload {
            layout,
            rate: scenario.workload.rate,
            mix: scenario.workload.mix.clone(),
            min_bytes: scenario.workload.min_bytes,
            targets: mask(&scenario.workload.targets),
            sources: mask(&scenario.workload.sources),
            stop_at: scenario.workload_stop(),
            dereg_rate: scenario.workload.dereg_rate,
            free_at_deregistration: false,
            split_pair: scenario
                .split_driver
                .as_ref()
                .map(|sd| (sd.host, sd.io_unit)),
            apps: (0..n).map(|_| None).collect(),
            handle_epoch: HashMap::new(),
            sent_ok: vec![],
            delivered: HashSet::new(),
            stats: WorkloadStats::default(),
        }
    }

    /// Host `h` booted epoch `epoch` (its driver exists): register the regions, fill the
    /// read pattern, post the receive buffers.
    pub fn on_boot(&mut self, cluster: &mut Cluster, sb: &mut Scoreboard, h: usize, epoch: u32) {
        let l = self.layout;
        let n = l.hosts;
        let app = HostApp::new(n, epoch);
        let host = cluster.host_mut(h);
        host.nic()
            .mem
            .write_bytes(l.r_base, &read_pattern(h, epoch, 0, l.r_len as usize));
        let Some(driver) = host.driver_mut() else {
            return;
        };
        let regions = [
            (W_LOGICAL, l.w_base, l.w_len(), Protection::ReadWrite),
            (R_LOGICAL, l.r_base, l.r_len, Protection::ReadOnly),
            (L_LOGICAL, l.l_base, l.l_len(), Protection::ReadWrite),
        ];
        let mut app = app;
        let mut entries = vec![];
        for (i, (logical, physical, len, protection)) in regions.into_iter().enumerate() {
            // `W` goes through the application's registration cache, which keeps it.
            let registered = if i == 0 {
                app.cache
                    .acquire(driver, app.owner, logical, physical, len, protection)
                    .map_err(|e| e.to_string())
                    .and_then(|lease| {
                        app.cache
                            .release(driver, lease)
                            .map(|_| lease.entry)
                            .map_err(|e| e.to_string())
                    })
            } else {
                driver
                    .register(logical, physical, len, protection)
                    .map_err(|e| e.to_string())
            };
            match registered {
                Ok(e) => entries.push(e),
                Err(e) => {
                    sb.violation(
                        host.boot_cycle(),
                        "workload",
                        vec![h],
                        Some(physical as u64),
                        format!("registering {len} bytes failed: {e}"),
                    );
                    return;
                }
            }
            sb.register(
                h,
                MemoryRange {
                    start: physical,
                    len,
                    writable: protection != Protection::ReadOnly,
                },
            );
        }
        for e in &entries {
            self.handle_epoch.insert((h, e.handle), epoch);
        }
        app.w = WRegion::Registered {
            handle: entries[0].handle,
            start: l.w_base,
            len: l.w_len(),
        };
        app.w_narrow = true;
        let l_handle = entries[2].handle;
        let pair = self.split_pair;
        for p in (0..n).filter(|&p| p != h && !is_split_pair(pair, h, p)) {
            for j in 0..RECEIVES {
                let at = RegionRef::new(l_handle, L_LOGICAL + l.l_receive(p, j) as u64);
                let wr = (1u64 << 63) | (p as u64) << 8 | j as u64;
                if let Err(e) = driver.post_receive(p as u16, at, l.max_bytes, wr) {
                    *self
                        .stats
                        .refused
                        .entry(format!("post_receive:{}", verbs_error_name(&e)))
                        .or_default() += 1;
                }
            }
        }
        self.apps[h] = Some(app);
    }

    /// Host `h` powered off: its application is gone.
    pub fn on_power_off(&mut self, h: usize) {
        if let Some(app) = self.apps[h].take() {
            self.stats.in_flight_at_end += app.ops.len() as u64;
            self.stats.cache.add(&app.cache);
        }
    }

    /// Start operations for this cycle and process the completions of every host.
    pub fn step(
        &mut self,
        cluster: &mut Cluster,
        sb: &mut Scoreboard,
        verdict: &mut MemoryVerdict,
        rng: &mut ChaCha8Rng,
        completions: &mut [Vec<Completion>],
    ) {
        let now = cluster.cycle();
        for h in 0..self.layout.hosts {
            for c in std::mem::take(&mut completions[h]) {
                self.on_completion(cluster, sb, verdict, h, c, now);
            }
            let Some(app) = self.apps[h].as_mut() else {
                continue;
            };
            if !app.joined {
                app.joined = cluster.host(h).driver().is_some_and(|d| d.is_joined());
            }
            if app.joined && self.dereg_rate > 0.0 {
                self.churn_w(cluster, sb, verdict, rng, h, now);
            }
            let Some(app) = self.apps[h].as_mut() else {
                continue;
            };
            if app.joined
                && self.sources[h]
                && now < self.stop_at
                && self.rate > 0.0
                && rng.gen_bool(self.rate)
            {
                self.start_op(cluster, sb, verdict, rng, h);
            }
        }
    }

    /// Deregister host `h`'s write region now and then (chance `dereg_rate` per cycle
    /// while the workload runs), each time one of the ways of [`Churn`] in turn, through
    /// the application's registration cache; register the other overlapping range once
    /// the driver has freed the old one and [`W_FREE_CYCLES`] have passed. In between,
    /// the application's requests for its slots of `W` are cache hits.
    fn churn_w(
        &mut self,
        cluster: &mut Cluster,
        sb: &mut Scoreboard,
        verdict: &mut MemoryVerdict,
        rng: &mut ChaCha8Rng,
        h: usize,
        now: u64,
    ) {
        let l = self.layout;
        let Some(app) = self.apps[h].as_mut() else {
            return;
        };
        let Some(driver) = cluster.host_mut(h).driver_mut() else {
            return;
        };
        // The other range: all of W, or W without source 0's slot.
        let skip = if app.w_narrow { l.slot } else { 0 };
        let (next_start, next_len) = (l.w_base + skip, l.w_len() - skip);
        let mut registered = None;
        match app.w {
            WRegion::Registered { handle, start, len }
                if now < self.stop_at && rng.gen_bool(self.dereg_rate) =>
            {
                let mut way = CHURN_ORDER[app.churn % CHURN_ORDER.len()];
                app.churn += 1;
                if way == Churn::Change && app.w_narrow {
                    // The next range is the narrow one, so the whole of W is registered,
                    // and a request for the narrow range is a hit: no change.
                    way = Churn::OwnerExit;
                    app.churn += 1;
                }
                let result = match way {
                    Churn::Free => app.cache.free(driver, start, len).map(|_| None),
                    Churn::OwnerExit => {
                        app.cache.owner_gone(app.owner);
                        app.owner = OwnerId(app.owner.0 + 1);
                        app.cache.collect_garbage(driver).map(|_| None)
                    }
                    Churn::Change => app
                        .cache
                        .acquire(
                            driver,
                            app.owner,
                            W_LOGICAL + skip as u64,
                            next_start,
                            next_len,
                            Protection::ReadWrite,
                        )
                        .and_then(|lease| {
                            app.cache.release(driver, lease).map(|_| Some(lease.entry))
                        }),
                };
                match result {
                    Ok(new) if self.free_at_deregistration && new.is_none() => {
                        self.stats.deregistrations += 1;
                        app.w = WRegion::Free {
                            until: now + W_FREE_CYCLES,
                        };
                        verdict.freed(h, start, len);
                        sb.deregister(h, start);
                    }
                    Ok(None) => {
                        self.stats.deregistrations += 1;
                        app.w = WRegion::Freeing { handle, start, len };
                    }
                    Ok(Some(entry)) => {
                        // The cache deregistered the narrow range and registered the whole.
                        self.stats.deregistrations += 1;
                        app.retiring.push((handle, start, len));
                        registered = Some(entry);
                    }
                    Err(e) => sb.violation(
                        now,
                        "workload",
                        vec![h],
                        Some(start as u64),
                        format!("letting go of the write region ({way:?}) failed: {e}"),
                    ),
                }
            }
            WRegion::Registered { start, len, .. } if rng.gen_bool(0.01) => {
                // A request on one slot of `W` (a message-passing library registering a
                // receive buffer): served by the cached registration.
                let slots = len / l.slot;
                let first = (start - l.w_base) / l.slot;
                let s = first + rng.gen_range(0..slots);
                let at = l.w_base + s * l.slot;
                let result = app
                    .cache
                    .acquire(
                        driver,
                        app.owner,
                        W_LOGICAL + (at - l.w_base) as u64,
                        at,
                        l.slot,
                        Protection::ReadWrite,
                    )
                    .and_then(|lease| app.cache.release(driver, lease).map(|_| lease.hit));
                match result {
                    Ok(true) => {}
                    other => sb.violation(
                        now,
                        "workload",
                        vec![h],
                        Some(at as u64),
                        format!("a request for slot {s} of the write region was not served by its cached registration: {other:?}"),
                    ),
                }
            }
            WRegion::Free { until } if now >= until => {
                let r = app
                    .cache
                    .acquire(
                        driver,
                        app.owner,
                        W_LOGICAL + skip as u64,
                        next_start,
                        next_len,
                        Protection::ReadWrite,
                    )
                    .and_then(|lease| app.cache.release(driver, lease).map(|_| lease.entry));
                match r {
                    Ok(e) => registered = Some(e),
                    Err(e) => {
                        app.w = WRegion::None;
                        sb.violation(
                            now,
                            "workload",
                            vec![h],
                            Some(next_start as u64),
                            format!("registering the write region again failed: {e}"),
                        );
                    }
                }
            }
            _ => {}
        }
        if let Some(e) = registered {
            self.stats.reregistrations += 1;
            app.w = WRegion::Registered {
                handle: e.handle,
                start: next_start,
                len: next_len,
            };
            app.w_narrow = !app.w_narrow;
            self.handle_epoch.insert((h, e.handle), app.epoch);
            verdict.registered(h, next_start, next_len);
            sb.register(
                h,
                MemoryRange {
                    start: next_start,
                    len: next_len,
                    writable: true,
                },
            );
        }
    }

    /// The entries of `t`'s regions that host `h`'s copy holds: one covering `h`'s slot of
    /// `W` (RDMA WRITE and atomics), and `R` (READ).
    fn remote_entries(
        &self,
        cluster: &Cluster,
        h: usize,
        t: usize,
    ) -> (Option<TptEntry>, Option<TptEntry>) {
        let l = self.layout;
        let Some(d) = cluster.host(h).driver() else {
            return (None, None);
        };
        let Ok(entries) = d.tpt().remote_entries(t as u16) else {
            return (None, None);
        };
        let slot = W_LOGICAL + h as u64 * l.slot as u64;
        let mut w = None;
        let mut r = None;
        for e in entries {
            match e.protection {
                Protection::ReadWrite if e.contains(slot, l.slot) => w = Some(*e),
                Protection::ReadOnly if e.logical == R_LOGICAL => r = Some(*e),
                _ => {}
            }
        }
        (w, r)
    }

    fn start_op(
        &mut self,
        cluster: &mut Cluster,
        sb: &mut Scoreboard,
        verdict: &mut MemoryVerdict,
        rng: &mut ChaCha8Rng,
        h: usize,
    ) {
        let l = self.layout;
        let n = l.hosts;
        let kind = OpKind::pick(&self.mix, rng.gen_range(0..self.mix.total()));
        let pair = self.split_pair;
        let candidates: Vec<usize> = (0..n)
            .filter(|&t| t != h && self.targets[t])
            .filter(|&t| kind != OpKind::Send || !is_split_pair(pair, h, t))
            .filter(|&t| {
                kind == OpKind::Send
                    || cluster
                        .host(h)
                        .driver()
                        .is_some_and(|d| !d.is_barred(t as u16))
            })
            .collect();
        if candidates.is_empty() {
            *self.stats.refused.entry("no-target".into()).or_default() += 1;
            return;
        }
        let t = candidates[rng.gen_range(0..candidates.len())];
        let app = self.apps[h].as_mut().expect("a joined host has an app");
        let Some(k) = app.busy[t].iter().position(|b| !b) else {
            *self.stats.refused.entry("window-full".into()).or_default() += 1;
            return;
        };
        let entry = if kind == OpKind::Send {
            None
        } else {
            let (w, r) = self.remote_entries(cluster, h, t);
            match if kind == OpKind::RdmaRead { r } else { w } {
                Some(e) => Some(e),
                None => {
                    *self
                        .stats
                        .refused
                        .entry("no-remote-entry".into())
                        .or_default() += 1;
                    return;
                }
            }
        };
        let app = self.apps[h].as_mut().expect("a joined host has an app");
        let words = rng.gen_range(self.min_bytes.div_ceil(8).max(1)..=l.max_bytes / 8);
        let len = words * 8;
        let seq = app.seq;
        let epoch = app.epoch;
        let wr_id = (epoch as u64) << 40 | app.next_wr;
        let (out_off, in_off, atomic_off) = l.l_slot(t, k);
        let l_handle = cluster
            .host(h)
            .driver()
            .and_then(|d| {
                d.tpt()
                    .local_entries()
                    .find(|e| e.logical == L_LOGICAL)
                    .map(|e| e.handle)
            })
            .unwrap_or(0);
        let local = |off: u32| RegionRef::new(l_handle, L_LOGICAL + off as u64);
        let target_epoch = match entry {
            Some(e) => self.handle_epoch.get(&(t, e.handle)).copied().unwrap_or(0),
            None => cluster.host(t).epoch(),
        };
        let mut op = Op {
            kind,
            target: t,
            target_epoch,
            psn: 0,
            slot: k,
            len,
            seq,
            remote: 0,
            before: 0,
            tag: OperationTag::new(h, epoch, target_epoch, seq),
        };
        let host = cluster.host_mut(h);
        let head = payload_head(h, epoch, seq);
        match kind {
            OpKind::Send => host
                .nic()
                .mem
                .write_bytes(l.l_base + out_off, &payload(head, len as usize)),
            OpKind::RdmaWrite => host
                .nic()
                .mem
                .write_bytes(l.l_base + out_off, &tagged_payload(op.tag, len)),
            _ => {}
        }
        let Some(driver) = host.driver_mut() else {
            return;
        };
        op.psn = driver.next_send_index(t as u16).unwrap_or(0);
        let node = t as u16;
        let result = match (kind, entry) {
            (OpKind::Send, _) => driver.post_send(node, local(out_off), len, None, wr_id),
            (OpKind::RdmaWrite, Some(w)) => {
                let off = h as u32 * l.slot + 64 + k as u32 * l.max_bytes;
                // The target's physical address from the layout (every host's is the
                // same): with a hardware TPT the copy holds no physical address.
                op.remote = l.w_base + off;
                driver.rdma_write(
                    node,
                    local(out_off),
                    RegionRef::new(w.handle, W_LOGICAL + off as u64),
                    len,
                    None,
                    wr_id,
                )
            }
            (OpKind::RdmaRead, Some(r)) => {
                // The stripe of the epoch the TPT copy came from (the memory verdict's
                // stale-read check).
                let stripe = MemoryVerdict::read_stripe(&l, target_epoch) - l.r_base;
                let off = stripe + rng.gen_range(0..=(l.r_stripe - len) / 8) * 8;
                op.remote = off;
                driver.rdma_read(
                    node,
                    local(in_off),
                    RegionRef::new(r.handle, R_LOGICAL + off as u64),
                    len,
                    wr_id,
                )
            }
            (OpKind::FetchAdd | OpKind::CompareSwap, Some(w)) => {
                let off = h as u32 * l.slot;
                op.remote = l.w_base + off;
                op.len = 8;
                let counter = *app.counters.entry((t, target_epoch)).or_default();
                op.before = counter.posted;
                let addend = op.tag.atomic();
                let remote = RegionRef::new(w.handle, W_LOGICAL + off as u64);
                match (kind, counter.base) {
                    (OpKind::CompareSwap, Some(base)) if !counter.uncertain => {
                        let c = base.wrapping_add(counter.posted);
                        let swap = c.wrapping_add(addend);
                        driver.compare_swap(node, local(atomic_off), remote, c, swap, wr_id)
                    }
                    _ => driver.fetch_add(node, local(atomic_off), remote, addend, wr_id),
                }
            }
            _ => return,
        };
        match result {
            Ok(()) => {
                app.next_wr += 1;
                app.seq += 1;
                app.busy[t][k] = true;
                match kind {
                    OpKind::FetchAdd | OpKind::CompareSwap => {
                        let view = app.counters.entry((t, target_epoch)).or_default();
                        view.posted = view.posted.wrapping_add(op.tag.atomic());
                        verdict.posted_atomic(op.tag, t, op.remote);
                    }
                    OpKind::RdmaWrite => verdict.posted_write(op.tag, t, op.remote, len / 8),
                    _ => {}
                }
                if kind != OpKind::Send {
                    sb.expect_request(
                        h,
                        t,
                        op.psn,
                        ExpectedRequest {
                            believed_epoch: target_epoch,
                            is_write: kind == OpKind::RdmaWrite,
                            tag: (kind != OpKind::RdmaRead).then_some(op.tag),
                        },
                    );
                }
                *self.stats.posted.entry(format!("{kind:?}")).or_default() += 1;
                app.ops.insert(wr_id, op);
            }
            Err(e) => {
                *self.stats.refused.entry(verbs_error_name(&e)).or_default() += 1;
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
        let l = self.layout;
        match c {
            Completion::Send {
                wr_id,
                status,
                node,
                ..
            } => {
                let Some(app) = self.apps[h].as_mut() else {
                    return;
                };
                let Some(op) = app.ops.remove(&wr_id) else {
                    sb.violation(
                        now,
                        "completion",
                        vec![h, node as usize],
                        None,
                        format!("host {h}: a completion for work request {wr_id:#x}, which is not outstanding (completed twice or never posted)"),
                    );
                    return;
                };
                app.busy[op.target][op.slot] = false;
                sb.forget_request(h, op.target, op.psn);
                *self
                    .stats
                    .completions
                    .entry(format!("{:?}", op.kind))
                    .or_default()
                    .entry(status_name(status))
                    .or_default() += 1;
                let epoch = app.epoch;
                // The responder refused it: it was never executed, and no copy of it
                // (a retransmission still on the wire) may be.
                if op.kind == OpKind::RdmaWrite
                    && matches!(
                        status,
                        CompletionStatus::Remote(
                            nic_abi::Syndrome::RemoteAccessError
                                | nic_abi::Syndrome::InvalidRequest
                                | nic_abi::Syndrome::RdmaDisabled
                        )
                    )
                {
                    verdict.refused(op.tag);
                }
                if status != CompletionStatus::Success {
                    if matches!(op.kind, OpKind::FetchAdd | OpKind::CompareSwap) {
                        app.counters
                            .entry((op.target, op.target_epoch))
                            .or_default()
                            .uncertain = true;
                    }
                    return;
                }
                let (_, in_off, atomic_off) = l.l_slot(op.target, op.slot);
                let t = op.target;
                let target_epoch_now = cluster.host(t).epoch();
                if op.kind != OpKind::Send {
                    sb.check_success(now, h, t, op.psn, target_epoch_now);
                }
                match op.kind {
                    OpKind::RdmaWrite => {
                        if target_epoch_now != op.target_epoch || !cluster.host(t).is_powered() {
                            return;
                        }
                        let want = tagged_payload(op.tag, op.len);
                        let got = cluster
                            .host(t)
                            .nic()
                            .mem
                            .read_bytes(op.remote, op.len as usize)
                            .to_vec();
                        if got != want {
                            let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
                            let word = at / 8 * 8;
                            let found = got.get(word..word + 8).and_then(|b| {
                                OperationTag::decode(u64::from_le_bytes(b.try_into().ok()?))
                            });
                            sb.violation(
                                now,
                                "data",
                                vec![t, h],
                                Some(op.remote as u64 + at as u64),
                                format!("RDMA WRITE of {} bytes from host {h} (seq {}, {:?}) completed, but host {t}'s memory differs from byte {at} (it holds {found:?})", op.len, op.seq, op.tag),
                            );
                        } else {
                            self.stats.writes_verified += 1;
                        }
                    }
                    OpKind::RdmaRead => {
                        let got = cluster
                            .host(h)
                            .nic()
                            .mem
                            .read_bytes(l.l_base + in_off, op.len as usize)
                            .to_vec();
                        let want = read_pattern(t, op.target_epoch, op.remote, op.len as usize);
                        if got == want {
                            self.stats.reads_verified += 1;
                        } else {
                            data_finding(
                                sb,
                                target_epoch_now != op.target_epoch,
                                now,
                                vec![h, t],
                                Some((l.l_base + in_off) as u64),
                                format!("RDMA READ of {} bytes from host {t} (offset {:#x} of its read-only region, epoch {}) returned other data", op.len, op.remote, op.target_epoch),
                            );
                        }
                    }
                    OpKind::FetchAdd | OpKind::CompareSwap => {
                        let got = cluster.host(h).nic().mem.read_u64(l.l_base + atomic_off);
                        let app = self.apps[h].as_mut().expect("checked above");
                        let view = app.counters.entry((t, op.target_epoch)).or_default();
                        if view.uncertain {
                            return;
                        }
                        let want = view
                            .base
                            .get_or_insert(got.wrapping_sub(op.before))
                            .wrapping_add(op.before);
                        if got != want {
                            data_finding(
                                sb,
                                target_epoch_now != op.target_epoch,
                                now,
                                vec![h, t],
                                Some(op.remote as u64),
                                format!(
                                    "{:?} {:?} on host {t}'s counter returned {got:#x}, expected {want:#x}",
                                    op.kind, op.tag
                                ),
                            );
                        } else {
                            self.stats.atomics_verified += 1;
                        }
                    }
                    OpKind::Send => {
                        self.sent_ok.push((t, op.target_epoch, h, epoch, op.seq));
                    }
                }
            }
            Completion::Receive {
                wr_id,
                node,
                byte_count,
                status,
                ..
            } => {
                let src = node as usize;
                let j = (wr_id & 0xFF) as usize;
                let Some(app) = self.apps[h].as_mut() else {
                    return;
                };
                let epoch = app.epoch;
                let addr = l.l_base + l.l_receive(src, j);
                if status == CompletionStatus::Success && byte_count >= 8 {
                    let got = cluster
                        .host(h)
                        .nic()
                        .mem
                        .read_bytes(addr, byte_count as usize)
                        .to_vec();
                    let head = u64::from_le_bytes(got[..8].try_into().expect("8 bytes"));
                    let (s, s_epoch, seq) = (
                        (head >> 48) as usize,
                        (head >> 32) as u16 as u32,
                        head as u32,
                    );
                    if s != src || got != payload(head, byte_count as usize) {
                        sb.violation(
                            now,
                            "data",
                            vec![h, src],
                            Some(addr as u64),
                            format!("a SEND of {byte_count} bytes from host {src} arrived altered (header says host {s}, seq {seq})"),
                        );
                    } else {
                        let last = app.last_seq.insert((src, s_epoch), seq);
                        if last.is_some_and(|p| seq <= p) {
                            sb.violation(
                                now,
                                "delivery",
                                vec![h, src],
                                None,
                                format!("SEND seq {seq} from host {src} delivered after seq {}: duplicated or out of order", last.unwrap_or(0)),
                            );
                        }
                        self.delivered.insert((h, epoch, src, s_epoch, seq));
                        self.stats.messages_delivered += 1;
                    }
                }
                // Post the buffer again.
                let l_handle = cluster.host(h).driver().and_then(|d| {
                    d.tpt()
                        .local_entries()
                        .find(|e| e.logical == L_LOGICAL)
                        .map(|e| e.handle)
                });
                if let (Some(handle), Some(d)) = (l_handle, cluster.host_mut(h).driver_mut()) {
                    let at = RegionRef::new(handle, L_LOGICAL + l.l_receive(src, j) as u64);
                    if let Err(e) = d.post_receive(node, at, l.max_bytes, wr_id) {
                        *self
                            .stats
                            .refused
                            .entry(format!("post_receive:{}", verbs_error_name(&e)))
                            .or_default() += 1;
                    }
                }
            }
            // The write region's memory is free from now on: a write into it is a
            // use after free until it is registered again.
            Completion::Deregistered { entry } => {
                let Some(app) = self.apps[h].as_mut() else {
                    return;
                };
                if let WRegion::Freeing { handle, start, len } = app.w {
                    if handle == entry.handle {
                        app.w = WRegion::Free {
                            until: now + W_FREE_CYCLES,
                        };
                        verdict.freed(h, start, len);
                        sb.deregister(h, start);
                    }
                }
                // A range replaced by a change: its memory outside the new range is free.
                if let Some(i) = app.retiring.iter().position(|r| r.0 == entry.handle) {
                    let (_, start, len) = app.retiring.remove(i);
                    let live = match app.w {
                        WRegion::Registered { start, len, .. }
                        | WRegion::Freeing { start, len, .. } => Some((start, len)),
                        _ => None,
                    };
                    for (s, l) in range_minus((start, len), live) {
                        verdict.freed(h, s, l);
                    }
                    sb.deregister(h, start);
                }
            }
            // The workload posts no local work requests (`[local_work]` has its own
            // driver, `crate::local_work`).
            Completion::Local { .. } => {}
        }
    }

    /// End of run: every successful SEND to a host still in that epoch was delivered.
    pub fn finish(&mut self, cluster: &Cluster, sb: &mut Scoreboard) {
        let now = cluster.cycle();
        for app in self.apps.iter().flatten() {
            self.stats.cache.add(&app.cache);
        }
        for &(t, t_epoch, s, s_epoch, seq) in &self.sent_ok {
            let target = cluster.host(t);
            if target.epoch() != t_epoch || !target.is_powered() {
                continue;
            }
            if !self.delivered.contains(&(t, t_epoch, s, s_epoch, seq)) {
                sb.violation(
                    now,
                    "delivery",
                    vec![t, s],
                    None,
                    format!("SEND seq {seq} from host {s} (epoch {s_epoch}) completed successfully but host {t} never received it"),
                );
            }
        }
        for app in self.apps.iter().flatten() {
            self.stats.in_flight_at_end += app.ops.len() as u64;
        }
    }

    /// Operations outstanding on host `h` that were posted before the workload stopped
    /// (they must all have completed by the end of the run).
    pub fn outstanding(&self, h: usize) -> usize {
        self.apps[h].as_ref().map_or(0, |a| a.ops.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_regions_do_not_overlap_and_slots_fit() {
        let l = MemoryLayout::new(64, 1000, 1_600_000);
        assert_eq!(l.max_bytes, 1000);
        assert!(l.arena_base + l.arena_len <= l.w_base);
        assert!(l.w_base + l.w_len() <= l.r_base);
        assert!(l.r_base + l.r_len <= l.l_base);
        assert!(l.l_base + l.l_len() <= l.total);
        let (o, i, a) = l.l_slot(63, RING - 1);
        assert!(o + l.max_bytes <= i && i + l.max_bytes <= a);
        assert!(a + 8 <= l.l_receive(63, 0));
        assert!(l.l_receive(63, RECEIVES - 1) + l.max_bytes <= l.l_len());
    }

    #[test]
    fn payloads_describe_themselves() {
        let head = payload_head(3, 2, 77);
        let p = payload(head, 20);
        assert_eq!(p.len(), 20);
        assert_eq!(u64::from_le_bytes(p[..8].try_into().unwrap()), head);
        assert_ne!(payload(payload_head(3, 2, 78), 20), p);
        let r = read_pattern(1, 1, 0, 64);
        assert_eq!(read_pattern(1, 1, 16, 16), r[16..32].to_vec());
        assert_ne!(read_pattern(1, 2, 0, 64), r, "epochs differ");
    }
}
