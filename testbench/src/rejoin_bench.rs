//! `nic bench rejoin`: the rejoin protocol against the heartbeat baseline of 000 [0006],
//! tuned as its best advocate would, on identical workloads at several cluster sizes.
//!
//! Per size N and seed: N hosts cold-boot; host 1 reboots under RDMA traffic from every
//! other host to it, and comes back after `down_cycles` (a quick reboot, the case 000 is
//! about). Requests to host 1 sent in the [`RejoinBenchOptions::held_requests`] cycles
//! before the reboot are held in the fabric (a `delay` fault) and reach its new boot:
//! without them the peers learn of the power-off from the fabric's PORT_DOWN answers and
//! send nothing more, and "no stale access" would say nothing. Modes, each on the same scenario but for its `[heartbeat]` table:
//! - `protocol`: the rejoin protocol of 000 Figs. 7-8;
//! - `heartbeat`: the baseline with the smallest safe hold-down the bench finds (below);
//! - `heartbeat+inc`: the baseline's variant whose heartbeats carry the incarnation, so
//!   peers see the reboot at the first beat (driver/src/heartbeat.rs), with its own
//!   smallest safe hold-down;
//! - `naive`: the baseline as [0006] describes it, no hold-down;
//! - `reference` (with [`RejoinBenchOptions::reference`]): the hold-down the baseline's
//!   design argues for, `timeout + 2 * period` plus the NIC's retransmission span.
//!
//! **Heartbeat period** per size: the smallest that keeps the heartbeats within
//! [`RejoinBenchOptions::budget`] of a link (one word per cycle). Every host sends N-1
//! heartbeats per period and acknowledges the N-1 it receives, so each link direction
//! carries N-1 heartbeat SENDs and N-1 NIC ACK cells per period:
//! `period = ceil((N-1) * words_per_heartbeat / budget)` with
//! [`words_per_heartbeat`] words of one SEND and its ACK. The timeout is
//! [`RejoinBenchOptions::timeout_periods`] periods (3: two late or lost beats are not yet a
//! failure; an advocate would not go lower under load, where a beat waits behind data).
//!
//! **Hold-down search** per size and heartbeat mode: a candidate passes if on each of
//! [`RejoinBenchOptions::search_seeds`] seeds the run lands no stale write or read by the
//! memory verdict (`crate::memory_verdict`) and every live host becomes usable by all peers;
//! the search tries 0, then bisects on the first seed between the largest failing candidate
//! and the smallest passing one (at first the reference, not run) until they are within
//! [`RejoinBenchOptions::precision`] of the passing one, then runs that one on every seed;
//! if a seed fails it steps up by the precision and runs every seed again. A candidate stops at its first failing seed, and a run at its first stale
//! access.
//!
//! **A run** (baseline modes): the cluster's cold start runs without hold-down (no boot
//! before it can be stale; [`RunOptions::cold_start_hold_down`]), and the reboot of host 1
//! uses the mode's hold-down. A run fails if the memory verdict finds a stale access, if any
//! host (the cold start's too) never becomes usable by all peers, if a cold-start boot is
//! not usable by the time of the reboot, or if the scoreboard fails. A baseline run ends
//! [`STOP_MARGIN`] cycles after host 1 is usable by all: by then every peer has cleared
//! its copy of host 1's part and so flushed its queue pair to it (a copy equal to the new
//! part needs that), so its NIC retransmits nothing from before, and what it had on the
//! wire has long arrived. A protocol run plays the whole scenario (its end-of-run checks
//! are strict).
//!
//! **Traffic** is sized to what host 1 can take, not per host: an offered load of `load`
//! (default 0.9) of host 1's *capacity* ([`measure_capacity`]), split evenly among the other
//! hosts, so every size sees the same heavily loaded host and not an incast that grows with
//! N. `rate` overrides it with a fixed chance per cycle per host.
//!
//! **Reported** per size and mode: host 1's rejoin latency (power-on to usable by all peers)
//! min / median / max over [`RejoinBenchOptions::seeds`] seeds, the stale writes and reads
//! (memory verdict), and for the protocol the stale requests delivered to host 1 and the
//! RDMA_DISABLED answers, so "0 stale" cannot mean "none sent". The tuned modes' report
//! seeds are the first of the search seeds (their runs are the search's). Per size: the
//! ratio best safe baseline / protocol per seed, and where the protocol's cycles go
//! ([`Phases`], read from the control SENDs on the wire, `crate::control_trace`) against
//! the link limit: the cycles host 1's link needs, at one word per cycle, to carry what
//! the rejoin must send.

use crate::control_trace::{send_words, ControlCell};
use crate::scenario::{MixSpec, ProtocolKind, Scenario};
use crate::scenario_run::{retransmit_span, run_scenario, Report, RunOptions};
use nic_cosim::cluster::{nic_model, Backend};
use nic_cosim::Stepper;
use nic_driver::control::{ControlMessage, HEADER_BYTES};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// Options of the rejoin bench.
#[derive(Clone, Debug)]
pub struct RejoinBenchOptions {
    pub hosts: Vec<usize>,
    /// Seeds per size and mode in the report (`first_seed..`).
    pub seeds: usize,
    /// Seeds every hold-down candidate must pass (`first_seed..`).
    pub search_seeds: usize,
    pub first_seed: u64,
    /// Cycles host 1 stays powered off.
    pub down_cycles: u64,
    /// Requests to host 1 sent in this many cycles before its reboot are held in the
    /// fabric for up to twice as long (a `delay` fault), so requests made with its old TPT
    /// entries reach its new boot (0: none).
    pub held_requests: u64,
    /// Share of a link the heartbeats may take.
    pub budget: f64,
    /// Heartbeat timeout in periods.
    pub timeout_periods: u64,
    /// Override the budget's period (cycles).
    pub period: Option<u64>,
    /// The search stops when the smallest passing and the largest failing candidate are
    /// within this fraction of the passing one.
    pub precision: f64,
    /// Also run the reference hold-down (`timeout + 2 * period` + retransmission span).
    pub reference: bool,
    /// Only the protocol's runs: no baseline search, no baseline modes (its latency
    /// against the link limit, without the hour the search takes at every size).
    pub protocol_only: bool,
    /// Offered load on host 1: a fraction of `capacity`, split evenly among the other
    /// hosts.
    pub load: f64,
    /// Words per cycle host 1 takes of the bench's mix (`None`: measure it, see
    /// [`measure_capacity`]; 1.0: its link).
    pub capacity: Option<f64>,
    /// Instead of `load`: the chance per cycle that each other host starts an operation.
    pub rate: Option<f64>,
    pub threads: usize,
}

impl Default for RejoinBenchOptions {
    fn default() -> Self {
        RejoinBenchOptions {
            hosts: vec![2, 4, 8, 16, 32, 64],
            seeds: 3,
            search_seeds: 5,
            first_seed: 11,
            down_cycles: 500,
            held_requests: 1000,
            budget: 0.01,
            timeout_periods: 3,
            period: None,
            precision: 0.05,
            reference: false,
            protocol_only: false,
            load: 0.9,
            capacity: None,
            rate: None,
            threads: 1,
        }
    }
}

impl RejoinBenchOptions {
    /// A clear message for options out of range.
    pub fn check(&self) -> Result<(), String> {
        if let Some(n) = self.hosts.iter().find(|&&n| !(2..=64).contains(&n)) {
            return Err(format!("hosts: {n} is not in 2..=64"));
        }
        if self.hosts.is_empty() {
            return Err("hosts: give at least one size".into());
        }
        if self.protocol_only && self.reference {
            return Err(
                "reference: the reference hold-down is a baseline mode, which --protocol-only leaves out"
                    .into(),
            );
        }
        if self.seeds == 0 || self.search_seeds == 0 {
            return Err("seeds and search seeds must be at least 1".into());
        }
        if !(self.budget > 0.0 && self.budget <= 1.0) {
            return Err(format!("budget: {} is not in (0, 1]", self.budget));
        }
        if self.timeout_periods < 2 {
            return Err(format!(
                "timeout periods: {} (the timeout must be longer than a period: at least 2)",
                self.timeout_periods
            ));
        }
        if self.period == Some(0) {
            return Err("period: must be positive".into());
        }
        if !(self.precision > 0.0 && self.precision < 1.0) {
            return Err(format!("precision: {} is not in (0, 1)", self.precision));
        }
        if !(self.load > 0.0 && self.load <= 4.0) {
            return Err(format!("load: {} is not in (0, 4]", self.load));
        }
        if let Some(r) = self.rate.filter(|r| !(*r > 0.0 && *r <= 1.0)) {
            return Err(format!("rate: {r} is not in (0, 1]"));
        }
        if let Some(c) = self.capacity.filter(|c| !(*c > 0.0 && *c <= 1.0)) {
            return Err(format!("capacity: {c} is not in (0, 1] words per cycle"));
        }
        Ok(())
    }

    /// The heartbeat period at `n` hosts (see the module docs).
    pub fn period(&self, n: usize) -> u64 {
        self.period.unwrap_or_else(|| {
            ((n.max(2) - 1) as f64 * words_per_heartbeat() as f64 / self.budget).ceil() as u64
        })
    }

    /// The heartbeat timeout at `n` hosts.
    pub fn timeout(&self, n: usize) -> u64 {
        self.timeout_periods * self.period(n)
    }

    /// The hold-down the baseline's design argues for at `n` hosts.
    pub fn reference_hold_down(&self, n: usize) -> u64 {
        nic_driver::heartbeat::HeartbeatConfig::safe_hold_down(
            self.period(n),
            self.timeout(n),
            retransmit_span(),
        )
    }
}

/// Words one heartbeat puts on the links: its control SEND (header and a
/// HEARTBEAT_INCARNATION, 13 bytes: one cell) and the NIC's ACK cell (no payload) coming
/// back. The plain HEARTBEAT is 4 bytes shorter and takes the same words.
pub fn words_per_heartbeat() -> u64 {
    let beat = ControlMessage::HeartbeatIncarnation { incarnation: 0 }
        .encode()
        .len();
    let cell_payload = nic_rtl::DEFAULT_CELL_PAYLOAD as u64;
    send_words((HEADER_BYTES + beat) as u64, cell_payload) + send_words(0, cell_payload)
}

/// Cycles a baseline run goes on after host 1 is usable by all (see the module docs): a
/// retry timeout and as much again for what is queued in the fabric.
pub const STOP_MARGIN: u64 = 2 * nic_abi::csr::RETRY_TIMEOUT_RESET;

/// Payload bytes of the bench's operations: uniform whole words in 8..=`MAX_BYTES`.
pub const MAX_BYTES: u32 = 256;

/// Mean words one operation of `mix` puts on the target's link (the request: cells of
/// header, RETH on the first cell of an RDMA request, payload words, the LAST cell's
/// immediate word and the CRC word; answers travel the other way), for payloads of whole
/// words uniform in `min_bytes..=max_bytes` as the workload draws them.
pub fn request_words_per_operation(mix: &MixSpec, min_bytes: u32, max_bytes: u32) -> f64 {
    use nic_rtl::cell::format::{HEADER_WORDS, RETH_WORDS};
    let cell_payload = nic_rtl::DEFAULT_CELL_PAYLOAD as u64;
    let words = |bytes: u64, reth: bool| -> f64 {
        let cells = bytes.div_ceil(cell_payload).max(1);
        (cells * (HEADER_WORDS as u64 + 1)
            + if reth { RETH_WORDS as u64 } else { 0 }
            + bytes.div_ceil(8)
            + 1) as f64
    };
    let (lo, hi) = (min_bytes.div_ceil(8).max(1) as u64, max_bytes as u64 / 8);
    let sizes = (lo..=hi).map(|w| w * 8);
    let n = (hi + 1 - lo) as f64;
    let write = sizes.clone().map(|b| words(b, true)).sum::<f64>() / n;
    let send = sizes.map(|b| words(b, false)).sum::<f64>() / n;
    let total = (mix.total().max(1)) as f64;
    (mix.rdma_write as f64 * write
        + mix.rdma_read as f64 * words(0, true)
        + mix.send as f64 * send
        + mix.fetch_add as f64 * words(8, true)
        + mix.compare_swap as f64 * words(16, true))
        / total
}

impl RejoinBenchOptions {
    /// The chance per cycle that each of the `n - 1` other hosts starts an operation.
    pub fn rate_per_host(&self, n: usize) -> f64 {
        self.rate.unwrap_or_else(|| {
            let words = request_words_per_operation(&MixSpec::default(), 8, MAX_BYTES);
            let offered = self.load * self.capacity.unwrap_or(1.0);
            (offered / words / (n.max(2) - 1) as f64).min(1.0)
        })
    }
}

/// Senders of the capacity measurement.
pub const CAPACITY_HOSTS: usize = 16;
/// Cycles of the capacity measurement's two runs (the difference is the steady state).
pub const CAPACITY_CYCLES: (u64, u64) = (20_000, 40_000);

/// Host 1's capacity for the bench's mix, in words per cycle: [`CAPACITY_HOSTS`] hosts, the
/// others offering host 1 twice its link, no reboot; the words delivered into host 1
/// between cycles [`CAPACITY_CYCLES`] (two runs of the same seed, identical up to the
/// shorter one's end) over the cycles between.
pub fn measure_capacity(o: &RejoinBenchOptions) -> Result<f64, String> {
    let saturating = RejoinBenchOptions {
        load: 2.0,
        capacity: Some(1.0),
        rate: None,
        ..o.clone()
    };
    let rate = saturating.rate_per_host(CAPACITY_HOSTS);
    let mut words = vec![];
    for cycles in [CAPACITY_CYCLES.0, CAPACITY_CYCLES.1] {
        let text = format!(
            r#"name = "bench-capacity"
hosts = {CAPACITY_HOSTS}
cycles = {cycles}
seed = {seed}

[workload]
rate = {rate}
targets = [1]
max_bytes = {MAX_BYTES}
stop_at = {cycles}
"#,
            seed = o.first_seed,
        );
        let scenario = Scenario::parse(&text, "bench-capacity").map_err(|e| e.to_string())?;
        let opts = RunOptions {
            protocol: Some(ProtocolKind::Rejoin),
            threads: Some(o.threads),
            ..Default::default()
        };
        let report = run_scenario(&scenario, opts).map_err(|e| e.to_string())?;
        words.push(report.delivered_words.get(1).copied().unwrap_or(0));
    }
    Ok((words[1] - words[0]) as f64 / (CAPACITY_CYCLES.1 - CAPACITY_CYCLES.0) as f64)
}

/// What one run plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ModeKind {
    /// The rejoin protocol.
    Protocol,
    /// The heartbeat baseline with a hold-down.
    Heartbeat,
    /// The heartbeat baseline whose beats carry the incarnation, with a hold-down.
    HeartbeatIncarnation,
    /// The heartbeat baseline without hold-down, counting every stale access.
    Naive,
    /// The heartbeat baseline with the reference hold-down.
    Reference,
}

impl ModeKind {
    /// The mode's name in the table.
    pub fn name(self) -> &'static str {
        match self {
            ModeKind::Protocol => "protocol",
            ModeKind::Heartbeat => "heartbeat",
            ModeKind::HeartbeatIncarnation => "heartbeat+inc",
            ModeKind::Naive => "naive",
            ModeKind::Reference => "reference",
        }
    }

    fn incarnation(self) -> bool {
        self == ModeKind::HeartbeatIncarnation
    }
}

/// Cycle of host 1's reboot at `n` hosts: after the cold start (every host usable by all;
/// a run fails if not). The cold start exchanges a BOOTING bundle between every pair of
/// hosts, so it grows with n²: at 64 hosts the last host is usable by all at about cycle
/// 20,400 (seed 11), and this reboots at 28,192.
pub fn reboot_at(n: usize) -> u64 {
    let n = n as u64;
    4000 + 250 * n + 2 * n * n
}

/// The scenario text of `mode` with hold-down `hold_down` at `n` hosts and `seed`.
pub fn scenario_text(
    n: usize,
    seed: u64,
    mode: ModeKind,
    hold_down: u64,
    o: &RejoinBenchOptions,
) -> String {
    let reboot = reboot_at(n);
    let on = reboot + o.down_cycles;
    let (period, timeout) = (o.period(n), o.timeout(n));
    let (cycles, stop) = match mode {
        ModeKind::Protocol => (on + 20_000 + 400 * n as u64, on + 10_000 + 200 * n as u64),
        ModeKind::Naive => (on + 20_000 + 400 * n as u64, on + 20_000 + 400 * n as u64),
        // Long enough for a safe hold-down to end in usable; runs stop early.
        _ => {
            let c = on + hold_down + 2 * period + 20_000 + 400 * n as u64;
            (c, c)
        }
    };
    format!(
        r#"name = "bench-rejoin-{n}-{mode}-{hold_down}-{seed}"
hosts = {n}
cycles = {cycles}
seed = {seed}
rejoin_bound = {cycles}

[heartbeat]
period = {period}
timeout = {timeout}
hold_down = {hold_down}
incarnation = {inc}

[workload]
rate = {rate}
targets = [1]
max_bytes = {MAX_BYTES}
stop_at = {stop}

[[event]]
at = {reboot}
action = "reboot"
host = 1
down_cycles = {down}
{held}"#,
        held = if o.held_requests > 0 {
            format!(
                "\n[[fault]]\nkind = \"delay\"\nfrom = {}\nuntil = {reboot}\ndst = [1]\nmessages = [\"request\"]\ncycles = {}\n",
                reboot.saturating_sub(o.held_requests),
                2 * o.held_requests
            )
        } else {
            String::new()
        },
        mode = mode.name(),
        inc = mode.incarnation(),
        rate = o.rate_per_host(n),
        down = o.down_cycles,
    )
}

/// One run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub mode: ModeKind,
    pub seed: u64,
    pub hold_down: u64,
    /// Host 1's rejoin latency after the reboot (`None`: never usable by all peers).
    pub latency: Option<u64>,
    /// Stale writes and reads by the memory verdict.
    pub stale_writes: u64,
    pub stale_reads: u64,
    /// Requests made with a TPT copy of an earlier boot that reached their target, and the
    /// RDMA_DISABLED answers (the answers' accounting).
    pub stale_requests_delivered: u64,
    pub rdma_disabled_nacks: u64,
    /// Why the run fails (see the module docs), if it does.
    pub failure: Option<String>,
    pub cycles: u64,
    pub stopped_early: Option<String>,
    pub wall_seconds: f64,
    pub nic_cycles_per_second: f64,
    /// Words delivered into host 1 per cycle of the run.
    pub measured_load: f64,
    /// Protocol runs: where the cycles went.
    pub phases: Option<Phases>,
}

/// Why `r` fails, if it does (see the module docs).
pub fn failure(r: &Report, reboot: u64) -> Option<String> {
    let m = &r.memory;
    if m.stale_writes + m.stale_reads > 0 {
        return Some(format!(
            "{} stale writes, {} stale reads (memory verdict)",
            m.stale_writes, m.stale_reads
        ));
    }
    if let Some(x) = r
        .rejoins
        .iter()
        .find(|x| !x.interrupted && x.usable.is_none())
    {
        return Some(format!(
            "host {} (epoch {}, powered on at {}) never became usable by all peers ({})",
            x.host,
            x.epoch,
            x.power_on,
            x.not_usable_because.as_deref().unwrap_or("the run ended")
        ));
    }
    if let Some(x) = r
        .rejoins
        .iter()
        .find(|x| x.power_on == 0 && x.usable.is_none_or(|u| u > reboot))
    {
        return Some(format!(
            "host {} of the cold start was not usable by all peers at the reboot (cycle {reboot})",
            x.host
        ));
    }
    if !r.passed {
        return Some(format!(
            "scoreboard: {}",
            r.violations
                .first()
                .map_or("failed".to_string(), |v| v.to_string())
        ));
    }
    None
}

/// Where the protocol's rejoin latency goes, from host 1's control SENDs on the wire
/// (cycles at the fabric's delivery; from the power-on of the reboot).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Phases {
    /// Power-on to the first BOOTING delivered (NIC probe, driver boot, queue pair set-up,
    /// the first SEND through the NIC and the fabric).
    pub to_first_booting: u64,
    /// First to last peer's first BOOTING delivered.
    pub booting_fanout: u64,
    /// Last BOOTING to the last peer's ACK delivered to host 1.
    pub waiting_for_answers: u64,
    /// How long the peers' ACKs waited at host 1's port once due (delivered minus
    /// ready), the longest and the sum over the peers: behind the other peers' messages,
    /// which the port hands over one whole message at a time in round robin as host 1's
    /// NIC takes them, and behind the same peer's earlier cells (FIFO per pair, so also
    /// behind its held requests). Not the peers' fences, which come before ready.
    #[serde(default)]
    pub answer_queued_max: u64,
    #[serde(default)]
    pub answer_queued_total: u64,
    /// Last ACK to the last peer's RDMA_READY delivered.
    pub rdma_ready_fanout: u64,
    /// Last RDMA_READY delivered to usable by all (the peers handle it; the tracker looks
    /// every 16 cycles).
    pub to_usable: u64,
    /// Last peer's TPT push to host 1 delivered, from the power-on (after usable: the
    /// push that follows RDMA_READY is the peers' part for host 1).
    pub peer_pushes_done: Option<u64>,
    /// Words host 1 must send: its BOOTING bundles (with its TPT push), push SENDs apart
    /// from them, its RDMA_READYs (first transmission of each, one per peer).
    pub booting_words: u64,
    pub push_words: u64,
    pub rdma_ready_words: u64,
    /// The link limit: cycles host 1's link needs for those words at one word per cycle.
    pub link_limit: u64,
    /// The latency over the link limit.
    pub latency_over_limit: f64,
}

/// The protocol's phases in `r` for host 1's reboot at `power_on`, with `latency`.
pub fn phases(cells: &[ControlCell], power_on: u64, latency: u64) -> Option<Phases> {
    let after: Vec<&ControlCell> = cells.iter().filter(|c| c.cycle >= power_on).collect();
    let incarnation = after.iter().find(|c| c.src == 1).and_then(|c| {
        c.messages.iter().find_map(|m| match m {
            ControlMessage::Booting { incarnation } => Some(*incarnation),
            _ => None,
        })
    })?;
    // First SEND per peer that satisfies `f`, from host 1 (`out`) or to it.
    let first = |out: bool, f: &dyn Fn(&ControlMessage) -> bool| {
        let mut seen = BTreeMap::new();
        for c in &after {
            let peer = if out { c.dst } else { c.src };
            let ours = if out { c.src == 1 } else { c.dst == 1 };
            if ours && c.carries(f) {
                seen.entry(peer).or_insert(*c);
            }
        }
        seen
    };
    let bootings = first(
        true,
        &|m| matches!(m, ControlMessage::Booting { incarnation: i } if *i == incarnation),
    );
    let acks = first(
        false,
        &|m| matches!(m, ControlMessage::Ack { incarnation: i, .. } if *i == incarnation),
    );
    let readies = first(
        true,
        &|m| matches!(m, ControlMessage::RdmaReady { incarnation: i } if *i == incarnation),
    );
    let is_push =
        |m: &ControlMessage| matches!(m, ControlMessage::TptClear | ControlMessage::TptUpdate(_));
    let pushes_out = first(true, &is_push);
    let pushes_in = first(false, &is_push);
    let t = |m: &BTreeMap<usize, &ControlCell>, f: fn(u64, u64) -> u64| {
        m.values().map(|c| c.cycle).reduce(f)
    };
    let first_booting = t(&bootings, u64::min)?;
    let last_booting = t(&bootings, u64::max)?;
    let last_ack = t(&acks, u64::max).unwrap_or(last_booting).max(last_booting);
    let last_ready = t(&readies, u64::max).unwrap_or(last_ack).max(last_ack);
    let usable = power_on + latency;
    let sends: BTreeSet<(usize, u32)> = bootings
        .values()
        .chain(readies.values())
        .map(|c| (c.dst, c.psn))
        .collect();
    let words = |m: &BTreeMap<usize, &ControlCell>| m.values().map(|c| c.words).sum::<u64>();
    let push_words = pushes_out
        .values()
        .filter(|c| !sends.contains(&(c.dst, c.psn)))
        .map(|c| c.words)
        .sum();
    let ready_words = readies
        .values()
        .filter(|c| !bootings.get(&c.dst).is_some_and(|b| b.psn == c.psn))
        .map(|c| c.words)
        .sum();
    let booting_words = words(&bootings);
    let link_limit = booting_words + push_words + ready_words;
    Some(Phases {
        to_first_booting: first_booting - power_on,
        booting_fanout: last_booting - first_booting,
        waiting_for_answers: last_ack - last_booting,
        answer_queued_max: acks.values().map(|c| c.cycle - c.ready).max().unwrap_or(0),
        answer_queued_total: acks.values().map(|c| c.cycle - c.ready).sum(),
        rdma_ready_fanout: last_ready - last_ack,
        to_usable: usable.saturating_sub(last_ready),
        peer_pushes_done: t(&pushes_in, u64::max).map(|c| c - power_on),
        booting_words,
        push_words,
        rdma_ready_words: ready_words,
        link_limit,
        latency_over_limit: latency as f64 / link_limit.max(1) as f64,
    })
}

/// Min, median and max of some values (the median of an even count: the lower middle).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub count: usize,
}

impl Spread {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let mut v: Vec<f64> = values.into_iter().collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(|a, b| a.total_cmp(b));
        Some(Spread {
            min: v[0],
            median: v[(v.len() - 1) / 2],
            max: v[v.len() - 1],
            count: v.len(),
        })
    }
}

/// One hold-down candidate of a search.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Candidate {
    pub hold_down: u64,
    pub passed: bool,
    /// Seeds run (a candidate stops at its first failing seed).
    pub seeds_run: usize,
    /// The first failing seed and why.
    pub failure: Option<String>,
}

/// The search of one heartbeat mode at one size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tuning {
    pub mode: ModeKind,
    /// The smallest passing candidate (`None`: not even the reference passed).
    pub hold_down: Option<u64>,
    /// The largest failing candidate below it.
    pub largest_failing: Option<u64>,
    pub candidates: Vec<Candidate>,
}

/// One mode over the report seeds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ModeResult {
    pub mode: ModeKind,
    pub hold_down: Option<u64>,
    pub runs: Vec<RunResult>,
    /// Latencies of the runs that became usable.
    pub latency: Option<Spread>,
    /// Runs that failed (see the module docs).
    pub failures: usize,
}

impl ModeResult {
    fn of(mode: ModeKind, hold_down: Option<u64>, runs: Vec<RunResult>) -> Self {
        ModeResult {
            latency: Spread::of(runs.iter().filter_map(|r| r.latency.map(|l| l as f64))),
            failures: runs.iter().filter(|r| r.failure.is_some()).count(),
            mode,
            hold_down,
            runs,
        }
    }

    fn sum(&self, f: impl Fn(&RunResult) -> u64) -> Option<Spread> {
        Spread::of(self.runs.iter().map(|r| f(r) as f64))
    }
}

/// One cluster size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SizeResult {
    pub hosts: usize,
    pub period: u64,
    pub timeout: u64,
    /// Share of a link the heartbeats take (each direction).
    pub heartbeat_share: f64,
    pub reference_hold_down: u64,
    /// Chance per cycle that each other host starts an operation.
    pub rate_per_host: f64,
    /// Words per cycle the other hosts offer host 1 together.
    pub offered_load: f64,
    pub tunings: Vec<Tuning>,
    pub modes: Vec<ModeResult>,
    /// The safe baseline mode with the lowest median latency (no failing run).
    pub best_baseline: Option<ModeKind>,
    /// Its latency over the protocol's, per seed.
    pub ratio: Option<Spread>,
    /// The protocol's phases per seed, and the latency over the link limit.
    pub latency_over_limit: Option<Spread>,
    /// The bare Verilator NIC model on host 1's recorded inputs (first protocol run),
    /// cycles/s, against the protocol run's NIC-cycles/s.
    pub bare_model_cycles_per_second: f64,
}

/// The bench's result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BenchResult {
    pub capacity: Option<f64>,
    pub load: f64,
    pub down_cycles: u64,
    pub budget: f64,
    pub timeout_periods: u64,
    pub words_per_heartbeat: u64,
    pub search_seeds: Vec<u64>,
    pub report_seeds: Vec<u64>,
    pub precision: f64,
    pub sizes: Vec<SizeResult>,
    pub wall_seconds: f64,
}

/// Runs and remembers them (the search and the report share runs).
struct Runner<'a> {
    o: &'a RejoinBenchOptions,
    done: BTreeMap<(usize, ModeKind, u64, u64), RunResult>,
    bare: Option<f64>,
}

impl Runner<'_> {
    fn run(
        &mut self,
        n: usize,
        mode: ModeKind,
        hold_down: u64,
        seed: u64,
        progress: &mut dyn FnMut(&str),
    ) -> Result<RunResult, String> {
        let key = (n, mode, hold_down, seed);
        if let Some(r) = self.done.get(&key) {
            return Ok(r.clone());
        }
        progress(&format!(
            "{n} hosts, {}, hold-down {hold_down}, seed {seed}",
            mode.name()
        ));
        let o = self.o;
        let text = scenario_text(n, seed, mode, hold_down, o);
        let scenario = Scenario::parse(&text, "bench-rejoin").map_err(|e| e.to_string())?;
        let protocol = mode == ModeKind::Protocol;
        let record = protocol && self.bare.is_none();
        let opts = RunOptions {
            protocol: Some(if protocol {
                ProtocolKind::Rejoin
            } else {
                ProtocolKind::Heartbeat
            }),
            cold_start_hold_down: (!protocol).then_some(0),
            stop_after_rejoin: (!protocol).then_some(STOP_MARGIN),
            stop_at_stale: matches!(mode, ModeKind::Heartbeat | ModeKind::HeartbeatIncarnation),
            record_control_of: protocol.then_some(1),
            record_host_inputs: record.then_some(1),
            threads: Some(o.threads),
            ..Default::default()
        };
        let report = run_scenario(&scenario, opts).map_err(|e| e.to_string())?;
        if let Some(inputs) = &report.recorded_inputs {
            let mut model = nic_model(Backend::Verilator, scenario.nic_queue_pairs())
                .map_err(|e| e.to_string())?;
            let start = Instant::now();
            for i in inputs {
                model.step(i);
            }
            self.bare = Some(inputs.len() as f64 / start.elapsed().as_secs_f64().max(1e-9));
        }
        let record = report.rejoins.iter().find(|x| x.host == 1 && x.epoch == 2);
        let latency = record.and_then(|x| x.latency);
        let phases = match (protocol, record, latency) {
            (true, Some(x), Some(l)) => phases(&report.control_cells, x.power_on, l),
            _ => None,
        };
        let r = RunResult {
            mode,
            seed,
            hold_down,
            latency,
            stale_writes: report.memory.stale_writes,
            stale_reads: report.memory.stale_reads,
            stale_requests_delivered: report.stale.stale_requests_delivered,
            rdma_disabled_nacks: report.stale.rdma_disabled_nacks,
            failure: failure(&report, reboot_at(n)),
            cycles: report.cycles,
            stopped_early: report.stopped_early.clone(),
            wall_seconds: report.wall_seconds,
            nic_cycles_per_second: report.nic_cycles_per_second,
            measured_load: report.delivered_words.get(1).copied().unwrap_or(0) as f64
                / report.cycles.max(1) as f64,
            phases,
        };
        self.done.insert(key, r.clone());
        Ok(r)
    }

    /// Whether `hold_down` passes on the first `seeds` search seeds (stops at the first
    /// failure).
    fn candidate(
        &mut self,
        n: usize,
        mode: ModeKind,
        hold_down: u64,
        seeds: usize,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Candidate, String> {
        let mut c = Candidate {
            hold_down,
            passed: true,
            seeds_run: 0,
            failure: None,
        };
        for seed in search_seeds(self.o).take(seeds) {
            let r = self.run(n, mode, hold_down, seed, progress)?;
            c.seeds_run += 1;
            if let Some(f) = r.failure {
                c.passed = false;
                c.failure = Some(format!("seed {seed}: {f}"));
                break;
            }
        }
        Ok(c)
    }

    /// The smallest hold-down of `mode` at `n` hosts that passes (see the module docs).
    fn tune(
        &mut self,
        n: usize,
        mode: ModeKind,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Tuning, String> {
        let mut candidates = vec![];
        let mut t = Tuning {
            mode,
            hold_down: None,
            largest_failing: None,
            candidates: vec![],
        };
        let all = self.o.search_seeds;
        let zero = self.candidate(n, mode, 0, all, progress)?;
        let zero_passed = zero.passed;
        candidates.push(zero);
        if zero_passed {
            t.hold_down = Some(0);
            t.candidates = candidates;
            return Ok(t);
        }
        // Bisect on the first seed between 0 (failed) and the reference (not run: it is the
        // longest run), on a 16-cycle grid (the rejoin tracker's resolution).
        let reference = self.o.reference_hold_down(n);
        let close =
            |lo: u64, hi: u64| (hi - lo) as f64 <= self.o.precision * hi as f64 || hi - lo <= 16;
        let (mut lo, mut hi) = (0, reference);
        while !close(lo, hi) {
            let mid = (lo + hi) / 2 / 16 * 16;
            if mid <= lo || mid >= hi {
                break;
            }
            let c = self.candidate(n, mode, mid, 1, progress)?;
            if c.passed {
                hi = mid;
            } else {
                lo = mid;
            }
            candidates.push(c);
        }
        // Then the answer on every seed; if a seed fails, one step of the precision up.
        loop {
            let c = self.candidate(n, mode, hi, all, progress)?;
            let passed = c.passed;
            candidates.push(c);
            if passed {
                t.hold_down = Some(hi);
                t.largest_failing = Some(lo);
                break;
            }
            if hi >= reference {
                break;
            }
            lo = hi;
            let step = ((self.o.precision * hi as f64) as u64).max(16).div_ceil(16) * 16;
            hi = (hi + step).min(reference);
        }
        t.candidates = candidates;
        Ok(t)
    }
}

fn search_seeds(o: &RejoinBenchOptions) -> impl Iterator<Item = u64> {
    o.first_seed..o.first_seed + o.search_seeds as u64
}

fn report_seeds(o: &RejoinBenchOptions) -> impl Iterator<Item = u64> {
    o.first_seed..o.first_seed + o.seeds as u64
}

/// Run the bench; `progress` hears about each run as it starts.
pub fn bench_rejoin(
    o: &RejoinBenchOptions,
    mut progress: impl FnMut(&str),
) -> Result<BenchResult, String> {
    o.check()?;
    let started = Instant::now();
    let mut runner = Runner {
        o,
        done: BTreeMap::new(),
        bare: None,
    };
    let mut sizes = vec![];
    for &n in &o.hosts {
        runner.bare = None;
        let mut tunings = vec![];
        if !o.protocol_only {
            for mode in [ModeKind::Heartbeat, ModeKind::HeartbeatIncarnation] {
                tunings.push(runner.tune(n, mode, &mut progress)?);
            }
        }
        let mut modes = vec![];
        let mut plan: Vec<(ModeKind, Option<u64>)> = vec![(ModeKind::Protocol, Some(0))];
        if !o.protocol_only {
            plan.extend(tunings.iter().map(|t| (t.mode, t.hold_down)));
            plan.push((ModeKind::Naive, Some(0)));
            if o.reference {
                plan.push((ModeKind::Reference, Some(o.reference_hold_down(n))));
            }
        }
        for (mode, hold_down) in plan {
            let mut runs = vec![];
            if let Some(h) = hold_down {
                for seed in report_seeds(o) {
                    runs.push(runner.run(n, mode, h, seed, &mut progress)?);
                }
            }
            let shown = (mode != ModeKind::Protocol).then_some(hold_down).flatten();
            modes.push(ModeResult::of(mode, shown, runs));
        }
        let protocol = &modes[0];
        let best = modes
            .iter()
            .filter(|m| {
                matches!(m.mode, ModeKind::Heartbeat | ModeKind::HeartbeatIncarnation)
                    && !m.runs.is_empty()
                    && m.failures == 0
            })
            .min_by(|a, b| {
                let med = |m: &ModeResult| m.latency.map_or(f64::INFINITY, |s| s.median);
                med(a).total_cmp(&med(b))
            });
        let ratio = best.and_then(|b| {
            Spread::of(
                b.runs
                    .iter()
                    .zip(&protocol.runs)
                    .filter_map(|(b, p)| Some(b.latency? as f64 / p.latency?.max(1) as f64)),
            )
        });
        let latency_over_limit = Spread::of(
            protocol
                .runs
                .iter()
                .filter_map(|r| r.phases.as_ref().map(|p| p.latency_over_limit)),
        );
        let period = o.period(n);
        sizes.push(SizeResult {
            hosts: n,
            period,
            timeout: o.timeout(n),
            heartbeat_share: (n - 1) as f64 * words_per_heartbeat() as f64 / period as f64,
            reference_hold_down: o.reference_hold_down(n),
            rate_per_host: o.rate_per_host(n),
            offered_load: o.rate_per_host(n)
                * (n - 1) as f64
                * request_words_per_operation(&MixSpec::default(), 8, MAX_BYTES),
            best_baseline: best.map(|b| b.mode),
            ratio,
            latency_over_limit,
            tunings,
            modes,
            bare_model_cycles_per_second: runner.bare.unwrap_or(0.0),
        });
    }
    Ok(BenchResult {
        capacity: o.capacity,
        load: o.load,
        down_cycles: o.down_cycles,
        budget: o.budget,
        timeout_periods: o.timeout_periods,
        words_per_heartbeat: words_per_heartbeat(),
        search_seeds: search_seeds(o).collect(),
        report_seeds: report_seeds(o).collect(),
        precision: o.precision,
        sizes,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}

fn spread_text(s: Option<Spread>, digits: usize) -> String {
    match s {
        Some(s) if s.count > 1 => format!(
            "{:.d$} / {:.d$} / {:.d$}",
            s.min,
            s.median,
            s.max,
            d = digits
        ),
        Some(s) => format!("{:.d$}", s.median, d = digits),
        None => "-".into(),
    }
}

/// The result as a readable text table.
pub fn render_text(b: &BenchResult) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "report seeds {:?} (min / median / max), search seeds {:?}; heartbeat budget {}% of a link ({} words per beat with its ACK), timeout {} periods; search precision {}%",
        b.report_seeds,
        b.search_seeds,
        b.budget * 100.0,
        b.words_per_heartbeat,
        b.timeout_periods,
        b.precision * 100.0
    );
    for z in &b.sizes {
        let _ = writeln!(
            s,
            "\n{} hosts: period {}, timeout {} (heartbeats {:.2}% of a link), reference hold-down {}; offered {:.3} words/cycle into host 1",
            z.hosts,
            z.period,
            z.timeout,
            100.0 * z.heartbeat_share,
            z.reference_hold_down,
            z.offered_load
        );
        for t in &z.tunings {
            let tried: Vec<String> = t
                .candidates
                .iter()
                .map(|c| format!("{}{}", c.hold_down, if c.passed { "+" } else { "-" }))
                .collect();
            let _ = writeln!(
                s,
                "  tuned {:<14} hold-down {} (largest failing {}; tried {})",
                t.mode.name(),
                t.hold_down
                    .map_or("none passed".to_string(), |h| h.to_string()),
                t.largest_failing.map_or("-".to_string(), |h| h.to_string()),
                tried.join(" ")
            );
            if let Some(c) = t.candidates.iter().rev().find(|c| !c.passed) {
                let _ = writeln!(
                    s,
                    "    largest failing candidate {}: {}",
                    c.hold_down,
                    c.failure.as_deref().unwrap_or("-")
                );
            }
        }
        let _ = writeln!(
            s,
            "  {:<14} {:>9}  {:<24} {:>10} {:>10}  {}",
            "mode", "hold-down", "latency", "stale wr", "stale rd", "notes"
        );
        for m in &z.modes {
            let never = m.runs.iter().filter(|r| r.latency.is_none()).count();
            let mut lat = spread_text(m.latency, 0);
            if never > 0 {
                lat = format!("{lat} ({never} never)");
            }
            let mut notes = vec![];
            if m.mode == ModeKind::Protocol {
                notes.push(format!(
                    "stale requests delivered {}, RDMA_DISABLED answers {}",
                    spread_text(m.sum(|r| r.stale_requests_delivered), 0),
                    spread_text(m.sum(|r| r.rdma_disabled_nacks), 0)
                ));
            }
            if m.runs.is_empty() {
                notes.push("not run: no safe hold-down found".into());
            }
            if m.failures > 0 && m.mode != ModeKind::Naive {
                let first = m
                    .runs
                    .iter()
                    .find_map(|r| r.failure.clone())
                    .unwrap_or_default();
                notes.push(format!("{} failing runs: {first}", m.failures));
            }
            let _ = writeln!(
                s,
                "  {:<14} {:>9}  {:<24} {:>10} {:>10}  {}",
                m.mode.name(),
                m.hold_down.map_or("-".to_string(), |h| h.to_string()),
                lat,
                spread_text(m.sum(|r| r.stale_writes), 0),
                spread_text(m.sum(|r| r.stale_reads), 0),
                notes.join("; ")
            );
        }
        match (z.best_baseline, z.ratio) {
            (Some(best), Some(r)) => {
                let _ = writeln!(
                    s,
                    "  best safe baseline / protocol: {} {}x (target >= 10x: {})",
                    best.name(),
                    spread_text(Some(r), 1),
                    if r.min >= 10.0 { "met" } else { "NOT met" }
                );
            }
            _ => {
                let _ = writeln!(s, "  best safe baseline / protocol: no safe baseline");
            }
        }
        let ph: Vec<&Phases> = z.modes[0]
            .runs
            .iter()
            .filter_map(|r| r.phases.as_ref())
            .collect();
        let med =
            |f: fn(&Phases) -> u64| spread_text(Spread::of(ph.iter().map(|p| f(p) as f64)), 0);
        if !ph.is_empty() {
            let _ = writeln!(
                s,
                "  protocol phases (cycles): boot to first BOOTING {}; BOOTING fan-out {}; waiting for answers {}; RDMA_READY fan-out {}; to usable {}",
                med(|p| p.to_first_booting),
                med(|p| p.booting_fanout),
                med(|p| p.waiting_for_answers),
                med(|p| p.rdma_ready_fanout),
                med(|p| p.to_usable)
            );
            let _ = writeln!(
                s,
                "  peers' ACKs waited at host 1's port once due: longest {}, summed over the peers {}",
                med(|p| p.answer_queued_max),
                med(|p| p.answer_queued_total)
            );
            let _ = writeln!(
                s,
                "  link limit {} cycles (BOOTING bundles with the TPT push {} + other pushes {} + RDMA_READYs {} words at 1 word/cycle); latency / limit {}",
                med(|p| p.link_limit),
                med(|p| p.booting_words),
                med(|p| p.push_words),
                med(|p| p.rdma_ready_words),
                spread_text(z.latency_over_limit, 2)
            );
        }
        if z.bare_model_cycles_per_second > 0.0 {
            if let Some(r) = z.modes[0].runs.first() {
                let _ = writeln!(
                    s,
                    "  co-simulation {:.0} NIC-cycles/s; bare Verilator model {:.0} cycles/s on host 1's inputs: the system keeps {:.0}%",
                    r.nic_cycles_per_second,
                    z.bare_model_cycles_per_second,
                    100.0 * r.nic_cycles_per_second / z.bare_model_cycles_per_second
                );
            }
        }
    }
    let _ = writeln!(s, "\nwall time {:.0} s", b.wall_seconds);
    s
}

/// The results as the Markdown tables of docs/measurements.md ("Rejoin against the heartbeat
/// baseline"): latency and stale accesses per size and mode, where the protocol's cycles go
/// against the link limit, and every hold-down search. Medians of the phases over the
/// report seeds; `nic measurements rejoin` writes them into the page.
pub fn render_markdown(b: &BenchResult) -> String {
    use std::fmt::Write;
    let spread = |s: &Option<Spread>, decimals: usize| match s {
        Some(s) => format!(
            "{:.d$} / {:.d$} / {:.d$}",
            s.min,
            s.median,
            s.max,
            d = decimals
        ),
        None => "-".into(),
    };
    let median = |v: Vec<u64>| -> u64 {
        let mut v = v;
        v.sort_unstable();
        v.get((v.len().max(1) - 1) / 2).copied().unwrap_or(0)
    };
    let mut sizes: Vec<&SizeResult> = b.sizes.iter().collect();
    sizes.sort_by_key(|z| z.hosts);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| hosts | period, timeout | protocol latency | protocol: stale wr / rd (all seeds); stale requests delivered; RDMA_DISABLED | heartbeat: hold-down, latency | heartbeat+inc: hold-down, latency | naive: stale wr / rd (median) | best safe baseline / protocol |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for z in &sizes {
        let mode = |k: ModeKind| z.modes.iter().find(|m| m.mode == k);
        let tuned = |k: ModeKind| match mode(k) {
            Some(m) if !m.runs.is_empty() => format!(
                "{}: {}",
                m.hold_down.map_or("-".into(), |h| h.to_string()),
                spread(&m.latency, 0)
            ),
            _ => "-".into(),
        };
        let (protocol, stale, delivered, disabled) = match mode(ModeKind::Protocol) {
            Some(p) => (
                format!(
                    "{}{}",
                    spread(&p.latency, 0),
                    if p.failures > 0 {
                        format!(" ({} failing)", p.failures)
                    } else {
                        String::new()
                    }
                ),
                format!(
                    "{} / {}",
                    p.runs.iter().map(|r| r.stale_writes).sum::<u64>(),
                    p.runs.iter().map(|r| r.stale_reads).sum::<u64>()
                ),
                spread(&p.sum(|r| r.stale_requests_delivered), 0),
                spread(&p.sum(|r| r.rdma_disabled_nacks), 0),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        let naive = mode(ModeKind::Naive).map_or("-".into(), |m| {
            format!(
                "{} / {}",
                median(m.runs.iter().map(|r| r.stale_writes).collect()),
                median(m.runs.iter().map(|r| r.stale_reads).collect())
            )
        });
        let ratio = match (&z.ratio, z.best_baseline) {
            (Some(_), Some(best)) => format!("{}x ({})", spread(&z.ratio, 1), best.name()),
            _ => "-".into(),
        };
        let _ = writeln!(
            s,
            "| {} | {}, {} | {protocol} | {stale}; {delivered}; {disabled} | {} | {} | {naive} | {ratio} |",
            z.hosts,
            z.period,
            z.timeout,
            tuned(ModeKind::Heartbeat),
            tuned(ModeKind::HeartbeatIncarnation)
        );
    }
    let _ = writeln!(
        s,
        "\n| hosts | boot to first BOOTING | BOOTING fan-out | waiting for answers | RDMA_READY fan-out | to usable | link limit (words: BOOTING bundles + RDMA_READYs) | latency / limit |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for z in &sizes {
        let phases: Vec<&Phases> = z
            .modes
            .iter()
            .filter(|m| m.mode == ModeKind::Protocol)
            .flat_map(|m| m.runs.iter().filter_map(|r| r.phases.as_ref()))
            .collect();
        let med = |f: fn(&Phases) -> u64| median(phases.iter().map(|p| f(p)).collect());
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} ({} + {}) | {} |",
            z.hosts,
            med(|p| p.to_first_booting),
            med(|p| p.booting_fanout),
            med(|p| p.waiting_for_answers),
            med(|p| p.rdma_ready_fanout),
            med(|p| p.to_usable),
            med(|p| p.link_limit),
            med(|p| p.booting_words + p.push_words),
            med(|p| p.rdma_ready_words),
            spread(&z.latency_over_limit, 1)
        );
    }
    s.push('\n');
    for z in &sizes {
        for t in &z.tunings {
            let tried: Vec<String> = t
                .candidates
                .iter()
                .map(|c| {
                    format!(
                        "{}{}{}",
                        c.hold_down,
                        if c.passed { "+" } else { "-" },
                        c.seeds_run
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "- {} hosts, {}: {} (largest failing {}): {}",
                z.hosts,
                t.mode.name(),
                t.hold_down.map_or("none passed".into(), |h| h.to_string()),
                t.largest_failing.map_or("-".into(), |h| h.to_string()),
                tried.join(" ")
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only(f: impl FnOnce(&mut MixSpec)) -> MixSpec {
        let mut m = MixSpec {
            rdma_write: 0,
            rdma_read: 0,
            send: 0,
            fetch_add: 0,
            compare_swap: 0,
        };
        f(&mut m);
        m
    }

    #[test]
    fn request_words_follow_the_cell_format() {
        // A read request: header 3, RETH 2, no payload, immediate word, CRC: 7 words.
        let reads = only(|m| m.rdma_read = 1);
        assert_eq!(request_words_per_operation(&reads, 8, 256), 7.0);
        // One-word writes: 7 + 1; SENDs have no RETH: 6.
        let writes = only(|m| m.rdma_write = 1);
        assert_eq!(request_words_per_operation(&writes, 8, 8), 8.0);
        let sends = only(|m| m.send = 1);
        assert_eq!(request_words_per_operation(&sends, 8, 8), 6.0);
        // Two cells of 256 bytes and one of 8: 3 cells of header + CRC, 65 payload words.
        assert_eq!(
            request_words_per_operation(&writes, 520, 520),
            12.0 + 2.0 + 65.0 + 1.0
        );
        // Half and half: the mean.
        let mix = only(|m| (m.rdma_read, m.send) = (1, 1));
        assert_eq!(request_words_per_operation(&mix, 8, 8), 6.5);
    }

    /// Host 1 reboots at cycle 1000 with incarnation 7; peers 0 and 2 answer.
    fn cell(cycle: u64, ready: u64, src: usize, dst: usize, m: ControlMessage) -> ControlCell {
        ControlCell {
            cycle,
            ready,
            src,
            dst,
            psn: cycle as u32,
            words: 8,
            stream: 0,
            first_seq: 0,
            messages: vec![m],
        }
    }

    #[test]
    fn phases_split_the_latency_and_time_the_answers_at_host_1s_port() {
        use ControlMessage::*;
        let inc = 7;
        let cells = vec![
            // A BOOTING of the earlier boot and a message before the power-on: ignored.
            cell(
                900,
                890,
                0,
                1,
                Ack {
                    incarnation: 6,
                    joined: true,
                },
            ),
            cell(1170, 1160, 1, 0, Booting { incarnation: inc }),
            cell(1200, 1190, 1, 2, Booting { incarnation: inc }),
            // Peer 0's ACK queued 300 cycles at host 1's port, peer 2's 10.
            cell(
                1500,
                1200,
                0,
                1,
                Ack {
                    incarnation: inc,
                    joined: true,
                },
            ),
            cell(
                1520,
                1510,
                2,
                1,
                Ack {
                    incarnation: inc,
                    joined: true,
                },
            ),
            // A second ACK from peer 0 (a retransmission) does not count.
            cell(
                1600,
                1000,
                0,
                1,
                Ack {
                    incarnation: inc,
                    joined: true,
                },
            ),
            cell(1540, 1530, 1, 0, RdmaReady { incarnation: inc }),
            cell(1560, 1550, 1, 2, RdmaReady { incarnation: inc }),
        ];
        let p = phases(&cells, 1000, 600).expect("phases");
        assert_eq!(p.to_first_booting, 170);
        assert_eq!(p.booting_fanout, 30);
        assert_eq!(p.waiting_for_answers, 320);
        assert_eq!(p.rdma_ready_fanout, 40);
        assert_eq!(p.to_usable, 40);
        assert_eq!((p.answer_queued_max, p.answer_queued_total), (300, 310));
        assert_eq!(p.booting_words + p.rdma_ready_words, 32);
    }

    #[test]
    fn load_is_split_among_the_other_hosts() {
        let o = RejoinBenchOptions::default();
        let words = request_words_per_operation(&MixSpec::default(), 8, MAX_BYTES);
        for n in [2, 8, 64] {
            let offered = o.rate_per_host(n) * (n - 1) as f64 * words;
            assert!((offered - o.load).abs() < 1e-9, "{n} hosts offer {offered}");
        }
        let measured = RejoinBenchOptions {
            capacity: Some(0.7),
            ..Default::default()
        };
        let offered = measured.rate_per_host(8) * 7.0 * words;
        assert!(
            (offered - 0.9 * 0.7).abs() < 1e-9,
            "a fraction of the capacity"
        );
        let fixed = RejoinBenchOptions {
            rate: Some(0.01),
            ..Default::default()
        };
        assert_eq!(fixed.rate_per_host(64), 0.01);
    }
}
