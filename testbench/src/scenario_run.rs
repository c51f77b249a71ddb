//! Runs a [`Scenario`]: builds the hosts and the fabric, plays the timeline, drives the
//! workload, keeps the scoreboards, and returns a [`Report`].
//!
//! Per cycle: timeline events due now; one cluster clock; host events (a boot registers
//! the application's memory); every NIC's DMA accesses checked; every delivered cell shown
//! to the wire scoreboard; the workload's completions and new operations. Every
//! [`REJOIN_CHECK_INTERVAL`] cycles the rejoin tracker looks at the hosts still rejoining.
//!
//! **Rejoin latency** of a boot: from power-on to the first check at which the host is
//! *usable by all peers*: its driver has joined, and every other live host (powered,
//! running, plugged in, joined) neither bars it nor withholds TPT updates from it and
//! holds a copy of its TPT local part equal to the original.
//!
//! End of run: every live host has finished rejoining (within [`Scenario::rejoin_bound`]
//! of its boot or of the last event after it), every pair of live hosts agrees on each
//! other's TPT parts, every operation of a live host has completed, and every successful
//! SEND to a host still in the same epoch was delivered.

use crate::control_trace::ControlCell;
use crate::faults::{FaultKind, FaultStats, ScheduledFaults};
use crate::memory_verdict::{MemoryCounts, MemoryVerdict};
use crate::scenario::{BackendKind, EventAction, ProtocolKind, Scenario, TimedEvent, TptKind};
use crate::scoreboard::{Scoreboard, StaleCounts, Violation};
use crate::wave_markers::WaveMarkers;
use crate::workload::{MemoryLayout, Workload, WorkloadStats};
use nic_cosim::cluster::{nic_model_tpt_traced, nic_model_traced, Backend, Cluster, ClusterConfig};
use nic_cosim::fabric::{FabricConfig, FabricStats};
use nic_cosim::host::{Host, HostConfig, HostEvent, HostPhase};
use nic_cosim::host_memory::HostMemoryTiming;
use nic_cosim::TraceFormat;
use nic_driver::heartbeat::HeartbeatConfig;
use nic_driver::membership::Protocol;
use nic_driver::rejoin::RejoinConfig;
use nic_driver::DriverConfig;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

/// Cycles between two looks of the rejoin tracker (the resolution of rejoin latencies).
pub const REJOIN_CHECK_INTERVAL: u64 = 16;
/// Maximum node count of the drivers (the bitmap size: the largest NIC model's queue pairs).
pub const MAX_NODES: usize = 64;

/// How to run a scenario (what the command line adds to the file).
#[derive(Default)]
pub struct RunOptions {
    /// Write the waves of each NIC here (`nic<N>.vcd`, `nic<N>-<k>.vcd` for a host's
    /// further NICs; `.fst` in FST), with the protocol's events as marker signals
    /// ([`crate::wave_markers`]).
    pub waves_dir: Option<PathBuf>,
    /// The waves' format (FST: the Verilator backend, built with feature `fst`).
    pub waves_format: TraceFormat,
    /// Dump only cycles `from..to` (the traces open before cycle `from` and close before
    /// cycle `to`).
    pub waves_window: Option<(u64, u64)>,
    /// Dump only these hosts' NICs.
    pub waves_hosts: Option<Vec<usize>>,
    /// Override the scenario's protocol (the bench runs both on one file).
    pub protocol: Option<ProtocolKind>,
    /// Override the heartbeat hold-down.
    pub hold_down: Option<u64>,
    /// Heartbeat hold-down of the boots at cycle 0 (the cluster's cold start, when no
    /// peer holds an entry of an earlier boot); later boots use the configured one. The
    /// bench sets 0, so its runs do not wait a long hold-down before the reboot they measure.
    pub cold_start_hold_down: Option<u64>,
    /// End the run this many cycles after every boot since the cold start is usable by all
    /// peers (for runs that are not strict: nothing is left to check for them then but
    /// stale accesses, and see [`crate::rejoin_bench`] for why the margin covers those).
    pub stop_after_rejoin: Option<u64>,
    /// End the run at the first stale write or read the memory verdict finds.
    pub stop_at_stale: bool,
    /// Record the control SENDs to and from this host ([`Report::control_cells`]).
    pub record_control_of: Option<usize>,
    /// Override the threads stepping the NICs.
    pub threads: Option<usize>,
    /// Fail on stale findings even under the baseline (`Some(true)`), or only count them
    /// (`Some(false)`); default: fail under the rejoin protocol, count under the baseline.
    pub strict: Option<bool>,
    /// Record this host's NIC inputs (returned in [`Report::recorded_inputs`]).
    pub record_host_inputs: Option<usize>,
    /// Called every 1024 cycles with (cycle, total).
    pub progress: Option<Box<dyn FnMut(u64, u64) + Send>>,
    /// A bug planted on purpose (tests prove the scoreboards catch it).
    pub plant: Option<PlantedBug>,
}

/// A bug the run plants on purpose, so that a test can show a scoreboard catches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlantedBug {
    /// Every booting host's NIC gets RDMA enabled (`ENABLE` = SEND/RECV | RDMA) right after
    /// its driver booted, as if the rejoin protocol's gate were missing: requests made with
    /// the previous boot's TPT entries land.
    RdmaEnabledAtBoot,
    /// The workload takes a deregistered region as free as soon as the deregistration
    /// starts, without the driver's fence: requests in flight against it land after.
    FreedAtDeregistration,
    /// The split driver's target takes a pool as free when it requests the flush, without
    /// waiting for the initiator's reply: writes already on their way land after.
    PoolFreedAtFlush,
    /// `[local_work]`: the window is bound over the whole of `V` instead of the range the
    /// scenario names (which the checks judge): WRITEs beside the window land.
    WindowTooWide,
    /// `[local_work]`: the DELAYs posted are a quarter of `delay_cycles` (which the check
    /// judges): the owner's next requests come too early.
    DelayShortened,
}

/// One boot of one host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RejoinRecord {
    pub host: usize,
    pub epoch: u32,
    pub power_on: u64,
    /// The driver booted (after reset and the NIC probe).
    pub driver_boot: Option<u64>,
    /// The driver joined (RDMA enabled).
    pub joined: Option<u64>,
    /// Usable by all peers (see the module docs).
    pub usable: Option<u64>,
    /// `usable - power_on`.
    pub latency: Option<u64>,
    /// The host lost power before finishing.
    pub interrupted: bool,
    /// Not usable by all peers at the end of the run: why (the first peer that keeps it
    /// from being usable).
    pub not_usable_because: Option<String>,
}

/// What a run produced (also written as JSON).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub scenario: String,
    pub protocol: ProtocolKind,
    /// Where translation happens (the NIC model with a hardware TPT, or none).
    pub tpt: TptKind,
    /// Hardware TPT: what the drivers did (summed over every boot).
    pub hw_tpt: HwTptStats,
    /// Several NICs per host (source 003): failovers and the exception-queue slow path.
    pub multi_nic: MultiNicReport,
    pub hosts: usize,
    pub nic_queue_pairs: usize,
    pub cycles: u64,
    pub wall_seconds: f64,
    /// NIC-cycles stepped (powered NICs x cycles) and their rate.
    pub nic_cycles: u64,
    pub nic_cycles_per_second: f64,
    pub events: Vec<TimedEvent>,
    pub workload: WorkloadStats,
    pub rejoins: Vec<RejoinRecord>,
    pub passed: bool,
    pub violation_count: u64,
    /// The first violations (at most 100).
    pub violations: Vec<Violation>,
    /// Findings per kind (violations, and under the baseline the counted findings too).
    pub findings: std::collections::BTreeMap<String, u64>,
    pub stale: StaleCounts,
    /// The memory verdict's counts (judged at the host-memory ports).
    pub memory: MemoryCounts,
    /// Cells each `[[fault]]` hit.
    pub faults: FaultStats,
    pub fabric: FabricStats,
    /// Words the fabric delivered into each host's NIC over the run (its link's load).
    pub delivered_words: Vec<u64>,
    pub layout: MemoryLayout,
    /// The split-driver exchange of 002, when the scenario has one.
    pub split_driver: Option<crate::split_driver::SplitStats>,
    /// The `[local_work]` exchange (BIND RKEY / UNBIND, DELAY), when the scenario has one.
    pub local_work: Option<crate::local_work::LocalWorkStats>,
    /// The NIC inputs of [`RunOptions::record_host_inputs`], every cycle it was powered.
    #[serde(skip)]
    pub recorded_inputs: Option<Vec<nic_cosim::NicTopInputs>>,
    /// The control SENDs of [`RunOptions::record_control_of`], as the fabric delivered
    /// them (first cells; retransmissions included).
    #[serde(skip)]
    pub control_cells: Vec<ControlCell>,
    /// The run ended early (see [`RunOptions::stop_after_rejoin`] and
    /// [`RunOptions::stop_at_stale`]): why.
    pub stopped_early: Option<String>,
}

impl Report {
    /// Rejoin latencies of the completed boots.
    pub fn latencies(&self) -> Vec<u64> {
        self.rejoins.iter().filter_map(|r| r.latency).collect()
    }

    /// A human summary (the CLI prints it).
    pub fn summary(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario {} ({:?}, {:?} TPT): {} hosts, {} cycles, {} NIC-cycles in {:.1} s ({:.0} NIC-cycles/s)",
            self.scenario,
            self.protocol,
            self.tpt,
            self.hosts,
            self.cycles,
            self.nic_cycles,
            self.wall_seconds,
            self.nic_cycles_per_second
        );
        let posted: u64 = self.workload.posted.values().sum();
        let _ = writeln!(s, "operations posted: {posted} {:?}", self.workload.posted);
        if self.workload.deregistrations > 0 {
            let _ = writeln!(
                s,
                "write regions deregistered {}, registered again {}",
                self.workload.deregistrations, self.workload.reregistrations
            );
            let c = &self.workload.cache;
            let _ = writeln!(
                s,
                "registration cache: {} hits, {} misses ({} registrations), let go {:?}",
                c.hits, c.misses, c.registrations, c.deregistrations
            );
        }
        if let Some(sd) = &self.split_driver {
            let _ = writeln!(
                s,
                "split driver ({}): sent {:?}, delivered {:?}, goodput bytes/cycle {:?}; idata {}, indicate messages {}, SendData {}; pools advertised {}, flushed {}, freed {}; restarts {}",
                sd.mode,
                sd.sent,
                sd.delivered,
                sd.goodput_bytes_per_cycle
                    .iter()
                    .map(|(k, v)| (k.clone(), (v * 100.0).round() / 100.0))
                    .collect::<std::collections::BTreeMap<_, _>>(),
                sd.by_idata,
                sd.by_message,
                sd.send_data,
                sd.pools_advertised,
                sd.pools_flushed,
                sd.pools_freed,
                sd.restarts
            );
        }
        if let Some(lw) = &self.local_work {
            let _ = writeln!(
                s,
                "local work: BIND completed at {:?}, UNBIND at {:?}, old binding freed at {:?}; WRITEs with the key: {} refused unbound, {} refused outside the window, {} landed, {} failed; DELAYs {} posted, {} completed, shortest gap after one {:?} cycles",
                lw.bind_completed_at,
                lw.unbind_completed_at,
                lw.freed_at,
                lw.refused_unbound,
                lw.refused_outside,
                lw.landed,
                lw.failed,
                lw.delays_posted,
                lw.delays_completed,
                lw.shortest_gap_after_delay
            );
        }
        for (kind, by) in &self.workload.completions {
            let _ = writeln!(s, "  completions {kind}: {by:?}");
        }
        let _ = writeln!(
            s,
            "verified: {} writes, {} reads, {} atomics, {} messages delivered",
            self.workload.writes_verified,
            self.workload.reads_verified,
            self.workload.atomics_verified,
            self.workload.messages_delivered
        );
        if !self.workload.refused.is_empty() {
            let _ = writeln!(s, "not started: {:?}", self.workload.refused);
        }
        let _ = writeln!(s, "rejoins (host epoch: latency in cycles):");
        for r in &self.rejoins {
            let what = match (r.latency, r.interrupted) {
                (Some(l), _) => format!("{l}"),
                (None, true) => "interrupted".into(),
                (None, false) => format!(
                    "not finished ({})",
                    r.not_usable_because.as_deref().unwrap_or("-")
                ),
            };
            let _ = writeln!(
                s,
                "  host {:2} epoch {}: power-on {:>7}, {}",
                r.host, r.epoch, r.power_on, what
            );
        }
        let m = &self.memory;
        let _ = writeln!(
            s,
            "memory verdict: {} tagged words checked; stale writes {}, stale reads {}, use after free {}, unmatched writes {}, duplicates {}, refused writes landed {}, disagreements with the answers {}",
            m.words_checked,
            m.stale_writes,
            m.stale_reads,
            m.use_after_free,
            m.unmatched_writes,
            m.duplicate_applies,
            m.refused_landed,
            m.disagreements
        );
        let _ = writeln!(
            s,
            "answers: stale requests delivered {}, RDMA_DISABLED NACKs {}, stale writes landed {}, stale reads/atomics landed {}, unregistered writes {}, reads {}",
            self.stale.stale_requests_delivered,
            self.stale.rdma_disabled_nacks,
            self.stale.stale_writes_landed,
            self.stale.stale_reads_and_atomics_landed,
            self.stale.unregistered_writes,
            self.stale.unregistered_reads
        );
        if self.tpt == TptKind::Hardware {
            let _ = writeln!(
                s,
                "hardware TPT: {} commands, exceptions {} refused ({} used up)",
                self.hw_tpt.commands,
                self.hw_tpt.exceptions_refused,
                self.hw_tpt.exceptions_used_up
            );
        }
        if self.multi_nic.nics > self.hosts || self.multi_nic.slow_path > 0 {
            let m = &self.multi_nic;
            let _ = writeln!(
                s,
                "multi-NIC: {} NICs on {} hosts, {} failovers; slow path (exception queue): {} requests ({} migrated, {} answered from a used-up key's last use, {} refused: unknown STag {}, used up {}, checks {}); latency added (cycles from arrival to the driver's answer) min {} / median {} / max {}",
                m.nics,
                self.hosts,
                m.failovers,
                m.slow_path,
                m.migrated,
                m.migrated_used_up,
                m.refused_unknown + m.refused_used_up + m.refused_checks,
                m.refused_unknown,
                m.refused_used_up,
                m.refused_checks,
                m.latency_min,
                m.latency_median,
                m.latency_max
            );
        }
        let _ = writeln!(
            s,
            "fabric: {} cells, {} PORT_DOWN NACKs; faults: {} dropped, {} corrupted, {} delayed (per [[fault]]: {:?})",
            self.fabric.cells_out,
            self.fabric.port_down_nacks,
            self.fabric.dropped,
            self.fabric.corrupted,
            self.fabric.delayed,
            self.faults.hits
        );
        if self.passed {
            let _ = writeln!(s, "scoreboard: PASS");
        } else {
            let _ = writeln!(
                s,
                "scoreboard: FAIL, {} violations; the first:",
                self.violation_count
            );
            for v in self.violations.iter().take(10) {
                let _ = writeln!(s, "  {v}");
            }
        }
        s
    }
}

/// What the drivers did with their NICs' hardware TPTs, summed over every driver of the
/// run (each boot's, up to its power-off).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HwTptStats {
    /// TPT commands completed (registrations' writes, deregistrations' invalidations).
    pub commands: u64,
    /// Exception-queue heads refused (the driver refuses every head).
    pub exceptions_refused: u64,
    /// Of those, heads that named a region of the host whose NIC entry a request had used
    /// up (one-shot) or invalidated (the driver retired the region).
    pub exceptions_used_up: u64,
}

impl HwTptStats {
    fn add(&mut self, host: &Host) {
        if let Some(s) = host.driver().map(|d| d.stats()) {
            self.commands += s.tpt_commands;
            self.exceptions_used_up += s.exceptions_used_up;
            self.exceptions_refused += s.exceptions_refused;
        }
    }
}

/// Several NICs per host (source 003): what the drivers' multi-NIC layer did over the run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct MultiNicReport {
    /// NICs of all hosts.
    pub nics: usize,
    /// Failovers to another NIC (route changes, unplugged active NICs), every boot.
    pub failovers: u64,
    /// Requests that took the slow path: exception-queue heads the drivers answered.
    pub slow_path: u64,
    /// Of those: migrated to the NIC that missed.
    pub migrated: u64,
    /// Answered from another NIC's entry that the request used up (one-shot, invalidate).
    pub migrated_used_up: u64,
    /// Refused: no NIC of the host holds the STag.
    pub refused_unknown: u64,
    /// Refused: the key was used up.
    pub refused_used_up: u64,
    /// Refused by the rights or bounds of the region.
    pub refused_checks: u64,
    /// Cycles from the delivery of the request's first cell at the NIC (the latest request
    /// naming the STag delivered there before the answer: the NIC's lookups wait behind
    /// the head, so it is the one that missed) to the driver's answer, over the slow-path
    /// requests whose arrival was seen (0 when none).
    pub latency_min: u64,
    pub latency_median: u64,
    pub latency_max: u64,
    /// Every slow-path latency measured, in answer order.
    pub latencies: Vec<u64>,
}

impl MultiNicReport {
    fn add_failovers(&mut self, host: &Host) {
        if let Some(d) = host.driver() {
            self.failovers += d.multi_nic().stats().failovers;
        }
    }

    fn record(&mut self, p: &nic_driver::multi_nic::SlowPath, latency: Option<u64>) {
        use nic_driver::multi_nic::SlowPathOutcome as O;
        self.slow_path += 1;
        match p.outcome {
            O::Migrated => self.migrated += 1,
            O::MigratedUsedUp => self.migrated_used_up += 1,
            O::Unknown => self.refused_unknown += 1,
            O::UsedUp => self.refused_used_up += 1,
            O::Refused => self.refused_checks += 1,
        }
        if let Some(l) = latency {
            self.latencies.push(l);
        }
    }

    fn finish(&mut self) {
        let mut l = self.latencies.clone();
        l.sort_unstable();
        if let (Some(&min), Some(&max)) = (l.first(), l.last()) {
            self.latency_min = min;
            self.latency_max = max;
            self.latency_median = l[l.len() / 2];
        }
    }
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Setup(String),
    #[error(transparent)]
    Cosim(#[from] nic_cosim::CosimError),
}

fn driver_config(
    s: &Scenario,
    protocol: ProtocolKind,
    hold_down: Option<u64>,
    node: usize,
) -> DriverConfig {
    let node16 = node as u16;
    let proto = match protocol {
        ProtocolKind::Rejoin => Protocol::Rejoin(RejoinConfig::new(
            node16,
            MAX_NODES,
            s.driver.resend_timeout,
        )),
        ProtocolKind::Heartbeat => Protocol::Heartbeat(HeartbeatConfig {
            node: node16,
            max_nodes: MAX_NODES,
            period: s.heartbeat.period,
            timeout: s.heartbeat.timeout,
            hold_down: hold_down.or(s.heartbeat.hold_down).unwrap_or(
                HeartbeatConfig::safe_hold_down(
                    s.heartbeat.period,
                    s.heartbeat.timeout,
                    retransmit_span(),
                ),
            ),
            incarnation_beats: s.heartbeat.incarnation,
        }),
    };
    let mut c = DriverConfig::new(proto, s.hosts, 0, 0);
    c.sq_log2 = s.driver.sq_log2;
    c.rq_log2 = s.driver.rq_log2;
    c.cq_log2 = s.driver.cq_log2;
    c.recv_buffer_bytes = s.driver.recv_buffer_bytes;
    c.exception_poll_interval = s.driver.exception_poll_interval;
    c
}

/// How long a NIC may keep retransmitting a request: (retry limit + 1) x retry timeout,
/// at their reset values (the drivers keep them).
pub fn retransmit_span() -> u64 {
    (nic_abi::csr::RETRY_LIMIT_RESET + 1) * nic_abi::csr::RETRY_TIMEOUT_RESET
}

/// `NIC_TRACE_CELLS=1`: one line per delivered cell on stderr (docs/scenarios.md).
fn trace_delivery(d: &nic_cosim::fabric::Delivery, epochs: &[u32]) {
    use nic_rtl::cell::format::{decode_cell, opcode, CellHeader};
    let h = CellHeader::from_words([d.words[0], d.words[1], d.words[2]]);
    let imm = decode_cell(&d.words, nic_rtl::DEFAULT_CELL_PAYLOAD)
        .ok()
        .and_then(|c| c.immediate);
    let control = ControlCell::decode(d)
        .map(|c| {
            format!(
                " control stream {} seq {} {:?}",
                c.stream, c.first_seq, c.messages
            )
        })
        .unwrap_or_default();
    eprintln!(
        "{} (ready {}) {}->{} {} psn {:#x} flags {:#x} imm {imm:x?} epochs {epochs:?}{control}",
        d.cycle,
        d.ready,
        d.src,
        d.dst,
        opcode::name(h.opcode),
        h.psn,
        h.flags
    );
}

struct RejoinTracker {
    records: Vec<RejoinRecord>,
    current: Vec<Option<usize>>,
}

impl RejoinTracker {
    fn power_on(&mut self, host: usize, epoch: u32, cycle: u64) {
        self.power_off(host);
        self.current[host] = Some(self.records.len());
        self.records.push(RejoinRecord {
            host,
            epoch,
            power_on: cycle,
            driver_boot: None,
            joined: None,
            usable: None,
            latency: None,
            interrupted: false,
            not_usable_because: None,
        });
    }

    fn power_off(&mut self, host: usize) {
        if let Some(i) = self.current[host].take() {
            if self.records[i].usable.is_none() {
                self.records[i].interrupted = true;
            }
        }
    }
}

fn live(cluster: &Cluster, h: usize) -> bool {
    let host = cluster.host(h);
    host.phase() == HostPhase::Running && cluster.is_connected(h)
}

/// The STag of an RDMA request's first cell (its RETH), if the cell is one.
fn request_stag(words: &[u64]) -> Option<u32> {
    use nic_rtl::cell::format::{CellHeader, HEADER_WORDS};
    if words.len() < HEADER_WORDS + 2 {
        return None;
    }
    let h = CellHeader::from_words([words[0], words[1], words[2]]);
    (h.first() && h.has_reth()).then_some(words[HEADER_WORDS + 1] as u32)
}

/// Whether host `t` is usable by every other live host.
pub(crate) fn usable_by_all(cluster: &Cluster, t: usize) -> bool {
    why_not_usable(cluster, t).is_none()
}

/// What keeps host `t` from being usable by every other live host (`None`: nothing).
fn why_not_usable(cluster: &Cluster, t: usize) -> Option<String> {
    let Some(dt) = cluster.host(t).driver() else {
        return Some("no driver".into());
    };
    if !dt.is_joined() || !live(cluster, t) {
        return Some("not joined or not live".into());
    }
    // What the peers should hold: with a hardware TPT, STag + virtual address (no physical).
    let key = |e: &nic_driver::tpt::TptEntry| {
        (
            e.handle,
            e.logical,
            e.physical,
            e.length,
            e.protection.code(),
        )
    };
    let local: BTreeSet<_> = dt.published_local_entries().iter().map(key).collect();
    (0..cluster.hosts().len())
        .filter(|&p| p != t && live(cluster, p))
        .find_map(|p| {
            let Some(dp) = cluster.host(p).driver() else {
                return Some(format!("host {p} has no driver"));
            };
            let copy: Option<BTreeSet<_>> = dp
                .tpt()
                .remote_entries(t as u16)
                .ok()
                .map(|it| it.map(key).collect());
            if !dp.is_joined() {
                Some(format!("host {p} has not joined"))
            } else if dp.is_barred(t as u16) {
                Some(format!("host {p} bars it"))
            } else if !dp.updates_enabled(t as u16) {
                Some(format!("host {p} withholds TPT updates from it"))
            } else if copy.as_ref() != Some(&local) {
                let copy = copy.unwrap_or_default();
                Some(format!(
                    "host {p}'s copy of its TPT part lacks {} of its {} entries and holds {} others",
                    local.difference(&copy).count(),
                    local.len(),
                    copy.difference(&local).count()
                ))
            } else {
                None
            }
        })
}

/// Where a host's driver arena lies and how much memory the host has.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostPlan {
    pub arena_base: u32,
    pub arena_len: u32,
    pub memory_bytes: usize,
}

/// The hosts of `scenario` (NICs of its TPT kind and backend, drivers running `protocol`,
/// memory as `plan` says) on its fabric, all powered off; and, with
/// `cold_start_hold_down`, the driver configuration each host boots with after the cold
/// start (empty otherwise).
pub(crate) fn build_cluster(
    scenario: &Scenario,
    protocol: ProtocolKind,
    plan: HostPlan,
    opts: &RunOptions,
) -> Result<(Cluster, Vec<nic_driver::DriverConfig>), RunError> {
    let n = scenario.hosts;
    let backend = match scenario.backend {
        BackendKind::Verilator => Backend::Verilator,
        BackendKind::Rusthdl => Backend::RustHdl,
    };
    let qps = scenario.nic_queue_pairs();
    let mut hosts = Vec::with_capacity(n);
    // What boots after the cold start use, when it differs (`cold_start_hold_down`).
    let mut later_drivers = vec![];
    for node in 0..n {
        let mut driver = driver_config(scenario, protocol, opts.hold_down, node);
        driver.arena_base = plan.arena_base;
        driver.arena_len = plan.arena_len;
        if opts.cold_start_hold_down.is_some() {
            later_drivers.push(driver.clone());
            driver.protocol =
                driver_config(scenario, protocol, opts.cold_start_hold_down, node).protocol;
        }
        driver.nics = scenario.nics_of(node);
        let config = HostConfig {
            driver,
            memory_bytes: plan.memory_bytes,
            timing: HostMemoryTiming {
                latency: scenario.memory.latency,
                stall: scenario.memory.stall,
                seed: scenario.seed ^ (node as u64) << 8,
            },
            poll_interval: scenario.driver.poll_interval,
            seed: scenario.seed,
        };
        // Only the NICs that are dumped need a model of the waves' format.
        let format = if opts.waves_dir.is_some()
            && opts.waves_hosts.as_ref().is_none_or(|l| l.contains(&node))
        {
            opts.waves_format
        } else {
            TraceFormat::Vcd
        };
        let model = || match scenario.tpt {
            TptKind::Software => nic_model_traced(backend, qps, format),
            TptKind::Hardware => nic_model_tpt_traced(backend, qps, format),
        };
        let mut host = Host::new(config, model()?).map_err(RunError::Setup)?;
        for _ in 1..scenario.nics_of(node) {
            host.add_nic(model()?).map_err(RunError::Setup)?;
        }
        host.record_dma_reads(true);
        if opts.record_host_inputs == Some(node) {
            host.nic().recorded_inputs = Some(vec![]);
        }
        hosts.push(host);
    }
    let fabric = FabricConfig {
        ports: scenario.total_nics(),
        latency: scenario.fabric.latency,
        input_capacity_words: scenario.fabric.input_capacity_words,
    };
    Cluster::new(
        ClusterConfig {
            fabric,
            threads: opts.threads.or(scenario.threads).unwrap_or(1),
        },
        hosts,
    )
    .map_err(RunError::Setup)
    .map(|c| (c, later_drivers))
}

/// Checks the waves options against the scenario: the window lies inside the run and is
/// not empty, the hosts exist. The message names the bad value.
pub fn check_waves(scenario: &Scenario, opts: &RunOptions) -> Result<(), String> {
    if let Some((from, to)) = opts.waves_window {
        if from >= to {
            return Err(format!(
                "--waves-window {from}..{to}: the window is empty (FROM must be below TO)"
            ));
        }
        if to > scenario.cycles {
            return Err(format!(
                "--waves-window {from}..{to}: the scenario `{}` runs {} cycles",
                scenario.name, scenario.cycles
            ));
        }
    }
    if let Some(hosts) = &opts.waves_hosts {
        if hosts.is_empty() {
            return Err("--waves-hosts: no host named".into());
        }
        if let Some(&h) = hosts.iter().find(|&&h| h >= scenario.hosts) {
            return Err(format!(
                "--waves-hosts: no host {h}: the scenario `{}` has hosts 0..={}",
                scenario.name,
                scenario.hosts - 1
            ));
        }
    }
    if opts.waves_dir.is_some()
        && opts.waves_format == TraceFormat::Fst
        && scenario.backend == BackendKind::Rusthdl
    {
        return Err(format!(
            "--waves fst: the scenario `{}` runs on the RustHDL backend, which writes VCD only",
            scenario.name
        ));
    }
    Ok(())
}

/// The wave file of NIC `k` of host `node`.
pub fn wave_file(dir: &std::path::Path, node: usize, k: usize, format: TraceFormat) -> PathBuf {
    let ext = format.extension();
    if k == 0 {
        dir.join(format!("nic{node}.{ext}"))
    } else {
        dir.join(format!("nic{node}-{k}.{ext}"))
    }
}

/// Opens the traces of the dumped NICs.
fn open_waves(cluster: &mut Cluster, opts: &RunOptions) -> Result<(), RunError> {
    let Some(dir) = &opts.waves_dir else {
        return Ok(());
    };
    for node in 0..cluster.hosts().len() {
        if opts
            .waves_hosts
            .as_ref()
            .is_some_and(|l| !l.contains(&node))
        {
            continue;
        }
        let host = cluster.host_mut(node);
        for k in 0..host.nics() {
            host.open_trace_of(k, &wave_file(dir, node, k, opts.waves_format))?;
        }
    }
    Ok(())
}

/// Run `scenario` (see the module docs).
pub fn run_scenario(scenario: &Scenario, mut opts: RunOptions) -> Result<Report, RunError> {
    check_waves(scenario, &opts).map_err(RunError::Setup)?;
    let started = Instant::now();
    let protocol = opts.protocol.unwrap_or(scenario.protocol);
    let n = scenario.hosts;
    let mut probe = driver_config(scenario, protocol, opts.hold_down, 0);
    probe.nics = (0..n).map(|h| scenario.nics_of(h)).max().unwrap_or(1);
    let mut workload = Workload::new(scenario, &probe);
    workload.free_at_deregistration = opts.plant == Some(PlantedBug::FreedAtDeregistration);
    let layout = workload.layout;
    let mut split = scenario.split_driver.clone().map(|spec| {
        let x = crate::split_driver::SplitLayout::new(
            &spec,
            layout.x_base,
            scenario.driver.recv_buffer_bytes,
        );
        let mut sd = crate::split_driver::SplitDriver::new(spec, x);
        sd.free_at_flush = opts.plant == Some(PlantedBug::PoolFreedAtFlush);
        sd.stop_at = scenario.workload_stop();
        sd
    });
    let mut local = scenario.local_work.clone().map(|spec| {
        let mut lw = crate::local_work::LocalWorkRun::new(spec, layout.v_base);
        lw.too_wide = opts.plant == Some(PlantedBug::WindowTooWide);
        lw.shorten_delay = opts.plant == Some(PlantedBug::DelayShortened);
        lw
    });
    let qps = scenario.nic_queue_pairs();
    let plan = HostPlan {
        arena_base: layout.arena_base,
        arena_len: layout.arena_len,
        memory_bytes: layout.total as usize,
    };
    let (mut cluster, later_drivers) = build_cluster(scenario, protocol, plan, &opts)?;
    cluster.fabric_mut().record_deliveries(true);
    let fault_specs = scenario.fault_specs();
    let mut fault_hook: Option<Box<dyn nic_cosim::fabric::FaultHook>> = None;
    let fault_stats = if fault_specs.iter().any(|f| f.kind != FaultKind::Flap) {
        let (mut hook, stats) = ScheduledFaults::new(&fault_specs, scenario.cycles, scenario.seed);
        hook.set_port_hosts(
            (0..scenario.total_nics())
                .map(|p| cluster.host_of_port(p))
                .collect(),
        );
        fault_hook = Some(Box::new(hook));
        Some(stats)
    } else {
        None
    };
    let mut markers = None;
    if opts.waves_dir.is_some() {
        markers = Some(WaveMarkers::install(&mut cluster, fault_hook.take()));
    } else if let Some(hook) = fault_hook.take() {
        cluster.fabric_mut().set_fault_hook(hook);
    }
    let (waves_from, waves_to) = opts.waves_window.unwrap_or((0, u64::MAX));
    // Cycles in which an event or a fault disturbs the run: `(first, last)`.
    let disturbances: Vec<(u64, u64)> = scenario
        .timeline()
        .iter()
        .map(|e| (e.at, e.at))
        .chain(
            fault_specs
                .iter()
                .map(|f| (f.from, f.until.unwrap_or(scenario.cycles).saturating_sub(1))),
        )
        .collect();
    let strict = opts.strict.unwrap_or(protocol == ProtocolKind::Rejoin);
    let mut sb = Scoreboard::new(n, strict, nic_rtl::DEFAULT_CELL_PAYLOAD);
    let mut verdict = MemoryVerdict::new(layout);
    let mut rng = ChaCha8Rng::seed_from_u64(scenario.seed);
    let mut tracker = RejoinTracker {
        records: vec![],
        current: vec![None; n],
    };
    let timeline = scenario.timeline();
    // Power-ons that reboots schedule: (cycle, host).
    let mut pending_on: Vec<(u64, usize)> = (0..n)
        .filter(|h| !scenario.initially_off.contains(h))
        .map(|h| (0, h))
        .collect();
    let mut next_event = 0;
    let mut epochs = vec![0u32; n];
    let bound = scenario.rejoin_bound();
    let mut hw_tpt = HwTptStats::default();
    let mut multi = MultiNicReport {
        nics: scenario.total_nics(),
        ..Default::default()
    };
    // Per port: STag -> the cycles requests naming it arrived (their first cells), in
    // order, since the last answer about it.
    let mut arrivals: Vec<BTreeMap<u32, Vec<u64>>> = vec![BTreeMap::new(); scenario.total_nics()];
    let trace_cells = std::env::var_os("NIC_TRACE_CELLS").is_some();
    let mut delivered_words = vec![0u64; n];
    let mut control_cells = vec![];
    let mut stopped_early = None;
    for cycle in 0..scenario.cycles {
        if cycle == waves_from {
            open_waves(&mut cluster, &opts)?;
        }
        if cycle == waves_to {
            for h in 0..n {
                cluster.host_mut(h).close_trace();
            }
        }
        // Timeline.
        let mut due: Vec<TimedEvent> = vec![];
        while next_event < timeline.len() && timeline[next_event].at == cycle {
            due.push(timeline[next_event]);
            next_event += 1;
        }
        for e in due {
            match e.action {
                EventAction::PowerOn => pending_on.push((cycle, e.host)),
                EventAction::PowerOff | EventAction::Reboot => {
                    hw_tpt.add(cluster.host(e.host));
                    multi.add_failovers(cluster.host(e.host));
                    cluster.power_off(e.host);
                    sb.power_off(e.host);
                    workload.on_power_off(e.host);
                    if let Some(sd) = split.as_mut() {
                        sd.on_power_off(e.host);
                    }
                    if let Some(lw) = local.as_mut() {
                        lw.on_power_off(e.host);
                    }
                    tracker.power_off(e.host);
                    pending_on.retain(|&(_, h)| h != e.host);
                    if e.action == EventAction::Reboot {
                        pending_on.push((cycle + e.down_cycles.max(1), e.host));
                    }
                }
                EventAction::Unplug => {
                    match e.nic {
                        Some(k) => cluster.unplug_nic(e.host, k),
                        None => cluster.unplug(e.host),
                    }
                    if let Some(m) = markers.as_mut() {
                        m.link(&cluster, e.host, e.nic, false);
                    }
                }
                EventAction::Plug => {
                    match e.nic {
                        Some(k) => cluster.plug_nic(e.host, k),
                        None => cluster.plug(e.host),
                    }
                    if let Some(m) = markers.as_mut() {
                        m.link(&cluster, e.host, e.nic, true);
                    }
                }
                EventAction::Route => cluster.route(e.host, e.nic.unwrap_or(0)),
            }
        }
        let mut k = 0;
        while k < pending_on.len() {
            if pending_on[k].0 <= cycle {
                let h = pending_on.swap_remove(k).1;
                if cycle > 0 {
                    if let Some(later) = later_drivers.get(h) {
                        cluster.host_mut(h).config_mut().driver = later.clone();
                    }
                }
                workload.on_power_off(h);
                if let Some(sd) = split.as_mut() {
                    sd.on_power_off(h);
                }
                if let Some(lw) = local.as_mut() {
                    if cycle > 0 {
                        lw.on_power_off(h);
                    }
                }
                hw_tpt.add(cluster.host(h));
                multi.add_failovers(cluster.host(h));
                cluster.power_on(h);
                let epoch = cluster.host(h).epoch();
                epochs[h] = epoch;
                sb.new_epoch(h, epoch, layout.arena());
                verdict.new_epoch(h, epoch);
                tracker.power_on(h, epoch, cycle);
            } else {
                k += 1;
            }
        }
        cluster.step();
        for h in 0..n {
            for ev in cluster.host_mut(h).take_events() {
                match ev {
                    HostEvent::Booted { epoch, cycle } => {
                        if let Some(i) = tracker.current[h] {
                            tracker.records[i].driver_boot = Some(cycle);
                        }
                        workload.on_boot(&mut cluster, &mut sb, h, epoch);
                        if let Some(sd) = split.as_mut() {
                            sd.on_boot(h, epoch);
                        }
                        if let Some(lw) = local.as_mut() {
                            lw.on_boot(&mut cluster, &mut sb, h);
                        }
                        if opts.plant == Some(PlantedBug::RdmaEnabledAtBoot) {
                            use nic_driver::NicAccess;
                            cluster.host_mut(h).nic().csr_write(
                                nic_abi::csr::ENABLE as u32,
                                nic_abi::csr::ENABLE_SEND_RECV | nic_abi::csr::ENABLE_RDMA,
                            );
                        }
                    }
                    HostEvent::Failed { cycle, error, .. } => {
                        sb.violation(cycle, "driver", vec![h], None, error)
                    }
                }
            }
            if cluster.host(h).is_powered() {
                let (writes, reads) = cluster.host_mut(h).take_dma();
                if !writes.is_empty() || !reads.is_empty() {
                    sb.check_dma(h, &writes, &reads);
                    verdict.check(&mut sb, h, &writes, &reads);
                    if let Some(lw) = local.as_mut() {
                        lw.check_dma(&mut sb, h, &writes);
                    }
                }
            }
        }
        let deliveries = cluster.fabric_mut().take_deliveries();
        if let Some(m) = markers.as_mut() {
            deliveries.iter().for_each(|d| m.on_delivery(d));
            m.mark(&mut cluster);
        }
        for mut d in deliveries {
            if let Some(stag) = request_stag(&d.words) {
                arrivals[d.dst].entry(stag).or_default().push(d.cycle);
            }
            // The scoreboards know hosts, not ports.
            d.src = cluster.host_of_port(d.src);
            d.dst = cluster.host_of_port(d.dst);
            delivered_words[d.dst] += d.words.len() as u64;
            if opts
                .record_control_of
                .is_some_and(|h| h == d.src || h == d.dst)
            {
                control_cells.extend(ControlCell::decode(&d));
            }
            if trace_cells {
                trace_delivery(&d, &epochs);
            }
            sb.on_delivery(&d, &epochs);
            if let Some(lw) = local.as_mut() {
                lw.on_delivery(&mut sb, &d);
            }
        }
        for h in 0..n {
            let Some(d) = cluster.host_mut(h).driver_mut() else {
                continue;
            };
            for p in d.multi_nic_mut().take_slow_path() {
                let port = cluster.ports_of(h)[p.nic];
                // The latest arrival before the answer's cycle is the request that missed:
                // a request delivered in the answer's own cycle (or later) cannot have
                // caused it, and waits for the next answer about that STag.
                let seen = arrivals[port].remove(&p.stag).unwrap_or_default();
                let (before, after): (Vec<u64>, Vec<u64>) =
                    seen.into_iter().partition(|&a| a < p.answered_at);
                if !after.is_empty() {
                    arrivals[port].insert(p.stag, after);
                }
                multi.record(&p, before.last().map(|&a| p.answered_at - a));
            }
        }
        let mut completions: Vec<Vec<nic_driver::Completion>> = (0..n)
            .map(|h| cluster.host_mut(h).take_completions())
            .collect();
        if let Some(sd) = split.as_mut() {
            let mut own = vec![];
            for (h, list) in completions.iter_mut().enumerate() {
                let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(list)
                    .into_iter()
                    .partition(|c| sd.owns(h, c));
                *list = rest;
                own.extend(mine.into_iter().map(|c| (h, c)));
            }
            sd.step(&mut cluster, &mut sb, &mut verdict, own);
        }
        if let Some(lw) = local.as_mut() {
            let mut own = vec![];
            for (h, list) in completions.iter_mut().enumerate() {
                let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(list)
                    .into_iter()
                    .partition(|c| lw.owns(h, c));
                *list = rest;
                own.extend(mine.into_iter().map(|c| (h, c)));
            }
            lw.step(&mut cluster, &mut sb, own);
        }
        workload.step(
            &mut cluster,
            &mut sb,
            &mut verdict,
            &mut rng,
            &mut completions,
        );
        if cycle % REJOIN_CHECK_INTERVAL == 0 {
            for h in 0..n {
                let Some(i) = tracker.current[h] else {
                    continue;
                };
                let r = &mut tracker.records[i];
                if r.usable.is_some() {
                    continue;
                }
                if r.joined.is_none() && cluster.host(h).driver().is_some_and(|d| d.is_joined()) {
                    r.joined = Some(cycle);
                }
                if usable_by_all(&cluster, h) {
                    r.usable = Some(cycle);
                    r.latency = Some(cycle - r.power_on);
                    let disturbed = disturbances
                        .iter()
                        .any(|&(first, last)| last > r.power_on && first <= cycle);
                    if cycle - r.power_on > bound && !disturbed {
                        let detail = format!(
                            "host {h} epoch {} took {} cycles to become usable by all peers (bound {bound})",
                            r.epoch,
                            cycle - r.power_on
                        );
                        let at = r.power_on;
                        if strict {
                            sb.violation(at, "rejoin-bound", vec![h], None, detail);
                        }
                    }
                }
            }
        }
        if cycle % 1024 == 0 {
            if let Some(p) = opts.progress.as_mut() {
                p(cycle, scenario.cycles);
            }
        }
        if opts.stop_at_stale {
            let m = verdict.counts();
            if m.stale_writes + m.stale_reads > 0 {
                stopped_early = Some(format!("stale access at cycle {cycle}"));
                break;
            }
        }
        if let Some(margin) = opts.stop_after_rejoin {
            let rebooted = pending_on.is_empty() && tracker.records.iter().any(|r| r.power_on > 0);
            let last = tracker
                .records
                .iter()
                .filter(|r| !r.interrupted)
                .map(|r| r.usable)
                .try_fold(0, |a, u| u.map(|u| a.max(u)));
            if let Some(last) = last.filter(|&l| rebooted && cycle >= l + margin) {
                stopped_early = Some(format!(
                    "every boot usable by all peers at cycle {last}, {margin} cycles before"
                ));
                break;
            }
        }
    }
    let end = cluster.cycle();
    workload.finish(&cluster, &mut sb);
    if let Some(lw) = local.as_mut() {
        if stopped_early.is_none() {
            lw.finish(&mut sb, end);
        }
    }
    if let Some(sd) = split.as_mut() {
        sd.finish();
        let st = &sd.stats;
        // After a restart, indications of the old session can still arrive: counted
        // out of protocol, never acted on.
        if st.malformed > 0 || (st.out_of_protocol > 0 && st.restarts == 0) {
            sb.violation(
                end,
                "split-driver",
                vec![],
                None,
                format!(
                    "{} malformed and {} out-of-protocol pool messages",
                    st.malformed, st.out_of_protocol
                ),
            );
        }
        if st.restarts == 0 && strict {
            for (dir, sent) in &st.sent {
                let got = st.delivered.get(dir).copied().unwrap_or(0);
                if got != *sent {
                    sb.violation(
                        end,
                        "split-driver",
                        vec![],
                        None,
                        format!("{dir}: {sent} packets sent, {got} delivered"),
                    );
                }
            }
        }
    }
    let answers_landed = sb.landed_tags();
    verdict.compare(&mut sb, end, &answers_landed);
    // End-of-run checks.
    let last_event = scenario.last_disturbance();
    for h in 0..n {
        if !live(&cluster, h) {
            continue;
        }
        if let Some(i) = tracker.current[h] {
            if tracker.records[i].usable.is_none() {
                tracker.records[i].not_usable_because = why_not_usable(&cluster, h);
            }
            let r = &tracker.records[i];
            let since = r.power_on.max(last_event);
            if r.usable.is_none() && end.saturating_sub(since) > bound && strict {
                sb.violation(
                    end,
                    "rejoin-bound",
                    vec![h],
                    None,
                    format!(
                        "host {h} (epoch {}, powered on at cycle {}) is not usable by all peers {} cycles after the last event",
                        r.epoch,
                        r.power_on,
                        end - since
                    ),
                );
            }
        }
        let outstanding = workload.outstanding(h);
        if outstanding > 0 && strict {
            sb.violation(
                end,
                "completion",
                vec![h],
                None,
                format!("host {h}: {outstanding} work requests never completed"),
            );
        }
        for p in (0..n).filter(|&p| p != h && live(&cluster, p)) {
            let (Some(dh), Some(dp)) = (cluster.host(h).driver(), cluster.host(p).driver()) else {
                continue;
            };
            let owner: BTreeSet<_> = dp.tpt().local_entries().map(|e| e.handle).collect();
            let copy: BTreeSet<_> = dh
                .tpt()
                .remote_entries(p as u16)
                .map(|it| it.map(|e| e.handle).collect())
                .unwrap_or_default();
            if owner != copy && strict {
                sb.violation(
                    end,
                    "tpt-disagree",
                    vec![h, p],
                    None,
                    format!("host {h}'s copy of host {p}'s TPT part has handles {copy:x?}, the owner has {owner:x?}"),
                );
            }
        }
    }
    for h in 0..n {
        hw_tpt.add(cluster.host(h));
        multi.add_failovers(cluster.host(h));
        cluster.host_mut(h).close_trace();
    }
    multi.finish();
    let recorded_inputs = opts
        .record_host_inputs
        .filter(|&h| h < n)
        .and_then(|h| cluster.host(h).nic().recorded_inputs.take());
    if let Some(p) = opts.progress.as_mut() {
        p(end, scenario.cycles);
    }
    let wall = started.elapsed().as_secs_f64();
    Ok(Report {
        scenario: scenario.name.clone(),
        protocol,
        tpt: scenario.tpt,
        hw_tpt,
        multi_nic: multi,
        hosts: n,
        nic_queue_pairs: qps,
        cycles: end,
        wall_seconds: wall,
        nic_cycles: cluster.nic_cycles(),
        nic_cycles_per_second: cluster.nic_cycles() as f64 / wall.max(1e-9),
        events: timeline,
        workload: workload.stats.clone(),
        rejoins: tracker.records,
        passed: sb.passed(),
        violation_count: sb.violation_count(),
        violations: sb.violations().to_vec(),
        findings: sb.by_kind.clone(),
        stale: sb.counts(),
        memory: verdict.counts(),
        faults: fault_stats
            .map(|s| s.lock().expect("fault stats").clone())
            .unwrap_or_default(),
        fabric: cluster.fabric().stats(),
        delivered_words,
        layout,
        split_driver: split.map(|sd| sd.stats),
        local_work: local.map(|lw| lw.stats),
        recorded_inputs,
        control_cells,
        stopped_early,
    })
}

/// The part of a scenario's JSON report that the slow-path table of docs/measurements.md
/// reads (`nic measurements`): the scenario, its verdict and its multi-NIC figures.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct SlowPathRun {
    pub scenario: String,
    pub passed: bool,
    pub multi_nic: MultiNicReport,
}

/// Scenario runs with several NICs per host as the Markdown table of docs/measurements.md:
/// failovers, slow-path requests, how they were answered, and the latency the slow path
/// adds (min / median / max cycles), with the run's verdict.
pub fn render_slow_path_markdown(runs: &[SlowPathRun]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "| scenario | failovers | slow-path requests | migrated | refused (unknown STag) | latency min / median / max | scoreboards |\n| --- | ---: | ---: | ---: | ---: | --- | --- |\n",
    );
    for r in runs {
        let m = &r.multi_nic;
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} / {} / {} | {} |",
            r.scenario,
            m.failovers,
            m.slow_path,
            m.migrated + m.migrated_used_up,
            m.refused_unknown,
            m.latency_min,
            m.latency_median,
            m.latency_max,
            if r.passed { "pass" } else { "**FAIL**" }
        );
    }
    s
}

#[cfg(test)]
mod slow_path_tests {
    use super::*;

    #[test]
    fn slow_path_runs_render_with_their_verdict() {
        let run = |scenario: &str, passed, refused_unknown| SlowPathRun {
            scenario: scenario.into(),
            passed,
            multi_nic: MultiNicReport {
                failovers: 2,
                slow_path: 4 + refused_unknown,
                migrated: 3,
                migrated_used_up: 1,
                refused_unknown,
                latency_min: 15,
                latency_median: 39,
                latency_max: 71,
                ..Default::default()
            },
        };
        let t = render_slow_path_markdown(&[
            run("multi-nic-route-change", true, 0),
            run("multi-nic-invalid-stag", false, 42),
        ]);
        assert!(
            t.contains("| `multi-nic-route-change` | 2 | 4 | 4 | 0 | 15 / 39 / 71 | pass |"),
            "{t}"
        );
        assert!(
            t.contains("| `multi-nic-invalid-stag` | 2 | 46 | 4 | 42 | 15 / 39 / 71 | **FAIL** |"),
            "{t}"
        );
    }
}
