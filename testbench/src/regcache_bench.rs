//! `nic bench regcache`: the registration cache of 004 against registering for every
//! request, on the Verilated NICs, on the buffer reuse of a message-passing library.
//!
//! # The pattern
//!
//! Every host receives large messages by rendezvous, the way an MPI library moves a
//! message too large to copy: the receiver registers the receive buffer, the sender learns
//! the registration (here from its copy of the receiver's TPT part, filled by the
//! TPT_UPDATE of 000 Fig. 5), RDMA-writes the message into it, and when the write has
//! completed the receiver is done with the registration. Buffers come from a pool of
//! `buffers` per host, and the application reuses them as such programs do: a message goes
//! to one of a small working set of buffers (`working_set`, in turn) nine times in ten,
//! else to any buffer of the pool; now and then (`free_rate`) the application frees a
//! buffer and allocates it again (the cache's free hook).
//!
//! Two modes run the same messages (same seed, same choices):
//! - **cache**: the receiver takes the registration from its cache (004) and gives it back
//!   after the write; a hit costs nothing, a miss registers;
//! - **no cache**: the receiver registers before every message and deregisters after it
//!   (a TPT_REMOVE to every peer and the deregistration fence of [`nic_driver::dereg`]).
//!
//! Reported per mode, min / median / max over the seeds: cycles until every message has
//! landed, registrations and deregistrations performed, the cache's hit rate, and the
//! cells on the wire (data and control). Every message's bytes are checked in the
//! receiver's memory when its write completes.

use crate::scenario::{ProtocolKind, Scenario};
use crate::scenario_run::{build_cluster, HostPlan, RunError, RunOptions};
use nic_abi::CompletionStatus;
use nic_cosim::cluster::Cluster;
use nic_driver::regcache::{Lease, OwnerId, RegistrationCache};
use nic_driver::tpt::{Protection, RegionRef};
use nic_driver::{Completion, DriverConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Options of the bench.
#[derive(Clone, Debug)]
pub struct RegcacheBenchOptions {
    /// Hosts (each sends to and receives from every other).
    pub hosts: usize,
    /// Messages in all.
    pub messages: usize,
    /// Receive buffers per host.
    pub buffers: usize,
    /// Buffers most messages go to.
    pub working_set: usize,
    /// Bytes per message (and per buffer).
    pub message_bytes: u32,
    /// Chance per message that the receiver frees and reallocates its buffer first.
    pub free_rate: f64,
    /// Messages in flight per receiver.
    pub window: usize,
    /// Registrations the cache keeps that no request holds.
    pub capacity: usize,
    pub seeds: Vec<u64>,
    /// Give up after this many cycles per run.
    pub max_cycles: u64,
}

impl Default for RegcacheBenchOptions {
    fn default() -> Self {
        RegcacheBenchOptions {
            hosts: 4,
            messages: 240,
            buffers: 32,
            working_set: 4,
            message_bytes: 2048,
            free_rate: 0.02,
            window: 2,
            capacity: 16,
            seeds: vec![1, 2, 3],
            max_cycles: 2_000_000,
        }
    }
}

impl RegcacheBenchOptions {
    /// Checks the options; the error names the one that is wrong.
    pub fn check(&self) -> Result<(), String> {
        if !(2..=16).contains(&self.hosts) {
            return Err(format!("hosts: {} is not in 2..=16", self.hosts));
        }
        if self.messages == 0 || self.seeds.is_empty() {
            return Err("need at least one message and one seed".into());
        }
        if self.working_set == 0 || self.working_set > self.buffers {
            return Err(format!(
                "working set: {} is not in 1..=buffers ({})",
                self.working_set, self.buffers
            ));
        }
        if self.message_bytes == 0 || self.message_bytes % 8 != 0 || self.message_bytes > 65536 {
            return Err(format!(
                "message bytes: {} is not a multiple of 8 in 8..=65536",
                self.message_bytes
            ));
        }
        if !(0.0..=1.0).contains(&self.free_rate) {
            return Err(format!("free rate: {} is not in 0..=1", self.free_rate));
        }
        if self.window == 0 || self.window > 8 || self.capacity == 0 {
            return Err("window must be in 1..=8 and capacity at least 1".into());
        }
        Ok(())
    }
}

/// One run of one mode.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RegcacheRun {
    pub cached: bool,
    pub seed: u64,
    /// Cycles from the first message to the last landed.
    pub cycles: u64,
    pub registrations: u64,
    pub deregistrations: u64,
    pub hits: u64,
    pub misses: u64,
    /// Cells delivered by the fabric while the messages ran.
    pub cells: u64,
    /// Messages whose bytes were checked in the receiver's memory.
    pub verified: u64,
}

/// Min, median and max of one figure over the seeds.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        Spread {
            min: v[0],
            median: v[v.len() / 2],
            max: v[v.len() - 1],
        }
    }
}

/// The bench's result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RegcacheBenchReport {
    pub runs: Vec<RegcacheRun>,
    /// Cycles without the cache over cycles with it, per seed.
    pub speedup: Spread,
    /// Registrations without the cache over registrations with it, per seed.
    pub registration_ratio: Spread,
    pub hit_rate: Spread,
    /// Cycles saved per message (without minus with, over messages).
    pub cycles_saved_per_message: Spread,
}

/// Logical base of host memory as the applications address it.
const LOGICAL: u64 = 0x40_0000_0000;

struct Plan {
    arena_base: u32,
    arena_len: u32,
    /// Sender staging: per destination, `window` slots of `message_bytes`.
    src_base: u32,
    pool_base: u32,
    total: u32,
}

impl Plan {
    fn new(o: &RegcacheBenchOptions, arena_needed: u64) -> Plan {
        let align = |x: u64, a: u64| x.div_ceil(a) * a;
        let arena_base = 0x1000u64;
        let arena_len = align(arena_needed, 4096);
        let src_base = arena_base + arena_len;
        let src_len = (o.hosts * o.window) as u64 * o.message_bytes as u64;
        let pool_base = align(src_base + src_len, 4096);
        let total = align(
            pool_base + o.buffers as u64 * o.message_bytes as u64,
            1 << 16,
        );
        Plan {
            arena_base: arena_base as u32,
            arena_len: arena_len as u32,
            src_base: src_base as u32,
            pool_base: pool_base as u32,
            total: total as u32,
        }
    }

    fn buffer(&self, o: &RegcacheBenchOptions, b: usize) -> u32 {
        self.pool_base + b as u32 * o.message_bytes
    }

    fn staging(&self, o: &RegcacheBenchOptions, dst: usize, k: usize) -> u32 {
        self.src_base + ((dst * o.window + k) as u32) * o.message_bytes
    }
}

/// One message's progress.
#[derive(Clone, Debug)]
struct Message {
    src: usize,
    dst: usize,
    buffer: usize,
    /// Sender staging slot.
    slot: usize,
    handle: u32,
    lease: Option<Lease>,
    posted: bool,
    head: u64,
}

fn pattern(head: u64, len: u32) -> Vec<u8> {
    (0..len as u64 / 8)
        .flat_map(|i| (head ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_le_bytes())
        .collect()
}

/// The scenario text both modes run on (hosts, software TPT, rejoin protocol, no faults).
fn scenario(o: &RegcacheBenchOptions, seed: u64) -> Result<Scenario, String> {
    let text = format!(
        "name = \"regcache-bench\"\nhosts = {}\ncycles = {}\nseed = {seed}\n\n[workload]\nrate = 0.0\n",
        o.hosts, o.max_cycles
    );
    Scenario::parse(&text, "regcache-bench").map_err(|e| e.to_string())
}

/// Runs one mode on one seed.
pub fn run_once(o: &RegcacheBenchOptions, seed: u64, cached: bool) -> Result<RegcacheRun, String> {
    o.check()?;
    let s = scenario(o, seed)?;
    let probe = DriverConfig::new(
        nic_driver::membership::Protocol::Rejoin(nic_driver::rejoin::RejoinConfig::new(
            0,
            crate::scenario_run::MAX_NODES,
            s.driver.resend_timeout,
        )),
        o.hosts,
        0,
        0,
    );
    let plan = Plan::new(o, probe.arena_needed());
    let (mut cluster, _) = build_cluster(
        &s,
        ProtocolKind::Rejoin,
        HostPlan {
            arena_base: plan.arena_base,
            arena_len: plan.arena_len,
            memory_bytes: plan.total as usize,
        },
        &RunOptions::default(),
    )
    .map_err(|e: RunError| e.to_string())?;
    cluster.fabric_mut().record_deliveries(true);
    let n = o.hosts;
    for h in 0..n {
        cluster.power_on(h);
    }
    // Boot: every host joined and holds every peer's part.
    let mut local = vec![None; n];
    while !(0..n).all(|h| crate::scenario_run::usable_by_all(&cluster, h)) {
        step(&mut cluster);
        if cluster.cycle() > o.max_cycles {
            return Err("the hosts did not join".into());
        }
        for (h, l) in local.iter_mut().enumerate() {
            if l.is_none() {
                if let Some(d) = cluster.host_mut(h).driver_mut() {
                    // The senders' staging memory, registered once.
                    let len = plan.pool_base - plan.src_base;
                    *l = Some(
                        d.register(
                            LOGICAL + plan.src_base as u64,
                            plan.src_base,
                            len,
                            Protection::ReadWrite,
                        )
                        .map_err(|e| format!("host {h}: registering its staging memory: {e}"))?,
                    );
                }
            }
        }
    }
    let local: Vec<_> = local.into_iter().map(|l| l.expect("registered")).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut caches: Vec<RegistrationCache> =
        (0..n).map(|_| RegistrationCache::new(o.capacity)).collect();
    let mut registrations = 0u64;
    let mut deregistrations = 0u64;
    let mut verified = 0u64;
    let mut in_flight: HashMap<u64, Message> = HashMap::new();
    let mut busy_buffers = vec![vec![false; o.buffers]; n];
    let mut busy_slots = vec![vec![vec![false; o.window]; n]; n];
    let mut turn = vec![0usize; n];
    let start = cluster.cycle();
    let cells_before = cluster.fabric().stats().cells_out;
    let mut issued = 0usize;
    let mut done = 0usize;
    let mut next_id = 0u64;
    while done < o.messages {
        if cluster.cycle() - start > o.max_cycles {
            return Err(format!(
                "{done} of {} messages landed in {} cycles",
                o.messages, o.max_cycles
            ));
        }
        // Issue: receivers take turns; each keeps up to `window` messages in flight.
        if issued < o.messages {
            let dst = issued % n;
            let in_dst = in_flight.values().filter(|m| m.dst == dst).count();
            let src = (dst + 1 + (issued / n) % (n - 1)) % n;
            let slot = busy_slots[src][dst].iter().position(|b| !b);
            if in_dst < o.window {
                if let Some(slot) = slot {
                    let hot = rng.gen_bool(0.9);
                    let mut b = if hot {
                        turn[dst] = (turn[dst] + 1) % o.working_set;
                        turn[dst]
                    } else {
                        rng.gen_range(0..o.buffers)
                    };
                    while busy_buffers[dst][b] {
                        b = (b + 1) % o.buffers;
                    }
                    let free_first = rng.gen_bool(o.free_rate);
                    let phys = plan.buffer(o, b);
                    let d = cluster.host_mut(dst).driver_mut().expect("booted");
                    if free_first && cached {
                        deregistrations += caches[dst]
                            .free(d, phys, o.message_bytes)
                            .map_err(|e| e.to_string())?
                            .len() as u64;
                    }
                    let (handle, lease) = if cached {
                        let lease = caches[dst]
                            .acquire(
                                d,
                                OwnerId(1),
                                LOGICAL + phys as u64,
                                phys,
                                o.message_bytes,
                                Protection::ReadWrite,
                            )
                            .map_err(|e| format!("host {dst}: {e}"))?;
                        if !lease.hit {
                            registrations += 1;
                        }
                        (lease.entry.handle, Some(lease))
                    } else {
                        let e = d
                            .register(
                                LOGICAL + phys as u64,
                                phys,
                                o.message_bytes,
                                Protection::ReadWrite,
                            )
                            .map_err(|e| format!("host {dst}: {e}"))?;
                        registrations += 1;
                        (e.handle, None)
                    };
                    busy_buffers[dst][b] = true;
                    busy_slots[src][dst][slot] = true;
                    in_flight.insert(
                        next_id,
                        Message {
                            src,
                            dst,
                            buffer: b,
                            slot,
                            handle,
                            lease,
                            posted: false,
                            head: (seed << 40) ^ next_id << 8 ^ cached as u64,
                        },
                    );
                    next_id += 1;
                    issued += 1;
                }
            }
        }
        // Post every message whose sender's copy holds the registration.
        let mut ids: Vec<u64> = in_flight.keys().copied().collect();
        ids.sort();
        for id in ids {
            let m = in_flight[&id].clone();
            if m.posted {
                continue;
            }
            let sender = cluster.host_mut(m.src);
            let d = sender.driver_mut().expect("booted");
            let known = d
                .tpt()
                .remote_entries(m.dst as u16)
                .map(|mut it| it.any(|e| e.handle == m.handle))
                .unwrap_or(false);
            if !known {
                continue;
            }
            let staging = plan.staging(o, m.dst, m.slot);
            let phys = plan.buffer(o, m.buffer);
            sender
                .nic()
                .mem
                .write_bytes(staging, &pattern(m.head, o.message_bytes));
            let d = cluster.host_mut(m.src).driver_mut().expect("booted");
            let r = d.rdma_write(
                m.dst as u16,
                RegionRef::new(local[m.src].handle, LOGICAL + staging as u64),
                RegionRef::new(m.handle, LOGICAL + phys as u64),
                o.message_bytes,
                None,
                id,
            );
            match r {
                Ok(()) => in_flight.get_mut(&id).expect("in flight").posted = true,
                Err(nic_driver::VerbsError::RingFull { .. }) => {}
                Err(e) => return Err(format!("message {id}: {e}")),
            }
        }
        step(&mut cluster);
        for h in 0..n {
            for c in cluster.host_mut(h).take_completions() {
                let Completion::Send { wr_id, status, .. } = c else {
                    continue;
                };
                let Some(m) = in_flight.remove(&wr_id) else {
                    continue;
                };
                if status != CompletionStatus::Success {
                    return Err(format!("message {wr_id} completed {status:?}"));
                }
                // The bytes are in the receiver's buffer.
                let phys = plan.buffer(o, m.buffer);
                let got = cluster
                    .host(m.dst)
                    .nic()
                    .mem
                    .read_bytes(phys, o.message_bytes as usize)
                    .to_vec();
                if got != pattern(m.head, o.message_bytes).as_slice() {
                    return Err(format!(
                        "message {wr_id}: host {}'s buffer {} does not hold what host {} wrote",
                        m.dst, m.buffer, m.src
                    ));
                }
                verified += 1;
                let d = cluster.host_mut(m.dst).driver_mut().expect("booted");
                match m.lease {
                    Some(lease) => caches[m.dst].release(d, lease).map_err(|e| e.to_string())?,
                    None => {
                        d.deregister(m.handle).map_err(|e| e.to_string())?;
                        deregistrations += 1;
                    }
                }
                busy_buffers[m.dst][m.buffer] = false;
                busy_slots[m.src][m.dst][m.slot] = false;
                done += 1;
            }
        }
    }
    let cycles = cluster.cycle() - start;
    let cells = cluster.fabric().stats().cells_out - cells_before;
    let (mut hits, mut misses) = (0, 0);
    for c in &caches {
        hits += c.stats().hits;
        misses += c.stats().misses;
        deregistrations += c.stats().deregistered()
            - c.stats()
                .deregistrations
                .get(&nic_driver::regcache::Reason::Freed)
                .copied()
                .unwrap_or(0);
    }
    Ok(RegcacheRun {
        cached,
        seed,
        cycles,
        registrations,
        deregistrations,
        hits,
        misses,
        cells,
        verified,
    })
}

fn step(cluster: &mut Cluster) {
    cluster.step();
    cluster.fabric_mut().take_deliveries();
    for h in 0..cluster.hosts().len() {
        let _ = cluster.host_mut(h).take_events();
        if cluster.host(h).is_powered() {
            let _ = cluster.host_mut(h).take_dma();
        }
    }
}

/// Both modes on every seed (`progress` is told each run as it ends).
pub fn bench_regcache(
    o: &RegcacheBenchOptions,
    mut progress: impl FnMut(&RegcacheRun),
) -> Result<RegcacheBenchReport, String> {
    o.check()?;
    let mut runs = vec![];
    let (mut speedup, mut ratio, mut hit_rate, mut saved) = (vec![], vec![], vec![], vec![]);
    for &seed in &o.seeds {
        let without = run_once(o, seed, false)?;
        progress(&without);
        let with = run_once(o, seed, true)?;
        progress(&with);
        speedup.push(without.cycles as f64 / with.cycles.max(1) as f64);
        ratio.push(without.registrations as f64 / with.registrations.max(1) as f64);
        hit_rate.push(with.hits as f64 / (with.hits + with.misses).max(1) as f64);
        saved.push((without.cycles as f64 - with.cycles as f64) / o.messages as f64);
        runs.push(without);
        runs.push(with);
    }
    Ok(RegcacheBenchReport {
        runs,
        speedup: Spread::of(&speedup),
        registration_ratio: Spread::of(&ratio),
        hit_rate: Spread::of(&hit_rate),
        cycles_saved_per_message: Spread::of(&saved),
    })
}

/// The results as the Markdown of docs/measurements.md (`nic measurements`): per mode the
/// cycles, registrations, deregistrations, hit rate and cells on the wire over the seeds
/// (one figure when every seed gives it, else `min .. max`), then the comparison as
/// median (min .. max) over the seeds.
pub fn render_markdown(r: &RegcacheBenchReport) -> String {
    use std::fmt::Write as _;
    let range = |runs: &[&RegcacheRun], f: fn(&RegcacheRun) -> f64, decimals: usize| {
        let v: Vec<f64> = runs.iter().map(|r| f(r)).collect();
        if v.is_empty() {
            return "-".to_string();
        }
        let s = Spread::of(&v);
        if s.min == s.max {
            format!("{:.decimals$} (all seeds)", s.min)
        } else {
            format!("{:.decimals$} .. {:.decimals$}", s.min, s.max)
        }
    };
    let mut seeds: Vec<u64> = r.runs.iter().map(|x| x.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    let mut s = String::from(
        "| mode | cycles | registrations | deregistrations | hit rate | cells on the wire |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for cached in [false, true] {
        let runs: Vec<&RegcacheRun> = r.runs.iter().filter(|x| x.cached == cached).collect();
        let hit_rate = if cached {
            range(
                &runs,
                |x| x.hits as f64 / (x.hits + x.misses).max(1) as f64,
                2,
            )
        } else {
            "-".into()
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {hit_rate} | {} |",
            if cached { "cache" } else { "no cache" },
            range(&runs, |x| x.cycles as f64, 0),
            range(&runs, |x| x.registrations as f64, 0),
            range(&runs, |x| x.deregistrations as f64, 0),
            range(&runs, |x| x.cells as f64, 0),
        );
    }
    let m =
        |s: &Spread, d: usize, unit: &str| crate::markdown::spread(s.min, s.median, s.max, d, unit);
    let seeds: Vec<String> = seeds.iter().map(|x| x.to_string()).collect();
    let _ = writeln!(
        s,
        "\nWithout the cache against with it, median (min .. max) over seeds {}: registrations {}, cycles {}; {} saved per message.",
        seeds.join(", "),
        m(&r.registration_ratio, 1, "x"),
        m(&r.speedup, 2, "x"),
        m(&r.cycles_saved_per_message, 0, " cycles")
    );
    s
}

#[cfg(test)]
mod markdown_tests {
    use super::*;

    fn run(cached: bool, seed: u64, cycles: u64, registrations: u64) -> RegcacheRun {
        RegcacheRun {
            cached,
            seed,
            cycles,
            registrations,
            deregistrations: if cached { 2 } else { registrations },
            hits: if cached { 200 } else { 0 },
            misses: if cached { 40 } else { 0 },
            cells: if cached { 2400 } else { 6195 },
            verified: 240,
        }
    }

    #[test]
    fn the_comparison_renders_per_mode_with_the_spread_over_seeds() {
        let spread = |min, median, max| Spread { min, median, max };
        let r = RegcacheBenchReport {
            runs: vec![
                run(false, 1, 40968, 240),
                run(true, 1, 28096, 40),
                run(false, 2, 40968, 240),
                run(true, 2, 25984, 30),
            ],
            speedup: spread(1.44, 1.46, 1.58),
            registration_ratio: spread(5.58, 6.0, 8.0),
            hit_rate: spread(0.82, 0.83, 0.88),
            cycles_saved_per_message: spread(51.9, 53.6, 62.4),
        };
        let t = render_markdown(&r);
        assert!(
            t.contains("| no cache | 40968 (all seeds) | 240 (all seeds) | 240 (all seeds) | - | 6195 (all seeds) |"),
            "{t}"
        );
        assert!(
            t.contains("| cache | 25984 .. 28096 | 30 .. 40 | 2 (all seeds) | 0.83 (all seeds) | 2400 (all seeds) |"),
            "{t}"
        );
        assert!(
            t.contains("over seeds 1, 2: registrations 6.0x (5.6 .. 8.0), cycles 1.46x (1.44 .. 1.58); 54 cycles (52 .. 62) saved per message."),
            "{t}"
        );
    }
}
