//! `nic bench rejoin`: the rejoin protocol against the heartbeat baseline of 000 [0006] on
//! identical workloads, at several cluster sizes.
//!
//! Per size N: N hosts cold-boot; once every mode has joined (the safe baseline's hold-down
//! is the longest wait), host 1 reboots under RDMA traffic from every other host to it, and
//! comes back after `down_cycles`, faster than the heartbeat timeout (a quick reboot is the
//! case 000 is about). Three modes run the same scenario text:
//! - `rejoin`: the protocol of 000 Figs. 7-8;
//! - `heartbeat-safe`: the baseline with the hold-down its design needs to be safe
//!   (`timeout + 2 * period` of silence after boot, so every peer declares the node down
//!   and drops its old TPT part before it can be reached again, plus the NIC's
//!   retransmission span, so no request sent before that is still being retried);
//! - `heartbeat-naive`: the baseline as [0006] describes it, no hold-down.
//!
//! The traffic is sized to what host 1 can take, not per host: "heavy" means an offered
//! load of `load` (default 0.9) of host 1's *capacity*, split evenly among the other hosts,
//! so every size sees the same heavily loaded host and not an incast that grows with N
//! (with a fixed rate per host, 63 senders offer host 1 many times what it takes, and every
//! latency, the baseline's heartbeats included, becomes queueing delay). The capacity is
//! measured first ([`measure_capacity`]): the words per cycle delivered into host 1 of
//! this mix when 15 senders saturate it. It is below the link's one word per cycle: the
//! NIC's receive side spends cycles per message (the decision, the receive queue entry
//! read, the completion), about 0.73 words per cycle for this mix. Sizing the load to the
//! link instead (`capacity` = 1.0) offers host 1 about 1.2 times what it takes, so its
//! queues, and every peer's backlog of requests when it reboots, grow until the windows
//! stop them. `rate` overrides it all with a fixed chance per cycle per host, for the
//! overload case. The measured load (words delivered into host 1 per cycle of traffic) is
//! reported beside it.
//!
//! Reported per mode: host 1's rejoin latency (power-on to usable by all peers), the stale
//! accesses that landed in it, and the co-simulation's NIC-cycles per second; per size, the
//! bare Verilator model's speed on host 1's own recorded inputs, so the share the whole
//! system keeps is measured side by side in one run.

use crate::scenario::{MixSpec, ProtocolKind, Scenario};
use crate::scenario_run::{run_scenario, Report, RunOptions};
use nic_cosim::cluster::{nic_model, Backend};
use nic_cosim::Stepper;
use serde::Serialize;
use std::time::Instant;

/// Options of the rejoin bench.
#[derive(Clone, Debug)]
pub struct RejoinBenchOptions {
    pub hosts: Vec<usize>,
    /// Heartbeat period and timeout of the baseline (cycles).
    pub heartbeat_period: u64,
    pub heartbeat_timeout: u64,
    /// Cycles host 1 stays powered off (below the timeout: a quick reboot).
    pub down_cycles: u64,
    /// Offered load on host 1: a fraction of `capacity`, split evenly among the other
    /// hosts.
    pub load: f64,
    /// Words per cycle host 1 takes of the bench's mix (`None`: measure it, see
    /// [`measure_capacity`]; 1.0: its link).
    pub capacity: Option<f64>,
    /// Instead of `load`: the chance per cycle that each other host starts an operation.
    pub rate: Option<f64>,
    pub threads: usize,
    pub seed: u64,
}

impl Default for RejoinBenchOptions {
    fn default() -> Self {
        RejoinBenchOptions {
            hosts: vec![2, 4, 8, 16, 32, 64],
            heartbeat_period: 2000,
            heartbeat_timeout: 6000,
            down_cycles: 500,
            load: 0.9,
            capacity: None,
            rate: None,
            threads: 1,
            seed: 11,
        }
    }
}

/// Payload bytes of the bench's operations: uniform whole words in 8..=`MAX_BYTES`.
pub const MAX_BYTES: u32 = 256;

/// Mean words one operation of `mix` puts on the target's link (the request: cells of
/// header, RETH on the first cell of an RDMA request, payload words, the LAST cell's
/// immediate word and the CRC word; answers travel the other way), for payloads of whole
/// words uniform in `min_bytes..=max_bytes` as the workload draws them.
pub fn request_words_per_operation(mix: &MixSpec, min_bytes: u32, max_bytes: u32) -> f64 {
    use nic_rtl::cell_format::{HEADER_WORDS, RETH_WORDS};
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
            seed = o.seed,
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

/// One mode at one size.
#[derive(Clone, Debug, Serialize)]
pub struct ModeResult {
    pub mode: &'static str,
    /// Host 1's rejoin latency after the reboot (`None`: never usable by all peers).
    pub latency: Option<u64>,
    pub stale_writes_landed: u64,
    pub stale_reads_and_atomics_landed: u64,
    pub unregistered_writes: u64,
    pub passed: bool,
    pub nic_cycles_per_second: f64,
    pub cycles: u64,
    /// Words delivered into host 1 per cycle of traffic (cold boot to the workload's end).
    pub measured_load: f64,
}

/// One cluster size.
#[derive(Clone, Debug, Serialize)]
pub struct SizeResult {
    pub hosts: usize,
    /// Chance per cycle that each other host starts an operation.
    pub rate_per_host: f64,
    /// Words per cycle the other hosts offer host 1 together.
    pub offered_load: f64,
    pub modes: Vec<ModeResult>,
    /// The bare Verilator NIC model on host 1's recorded inputs (rejoin mode), cycles/s.
    pub bare_model_cycles_per_second: f64,
}

impl SizeResult {
    /// The rejoin mode's NIC-cycles/s over the bare model's cycles/s.
    pub fn system_share(&self) -> f64 {
        self.modes[0].nic_cycles_per_second / self.bare_model_cycles_per_second.max(1e-9)
    }
}

/// The scenario text for `n` hosts.
pub fn scenario_text(n: usize, o: &RejoinBenchOptions) -> String {
    let hold_down =
        o.heartbeat_timeout + 2 * o.heartbeat_period + crate::scenario_run::retransmit_span();
    // Every mode has joined well before the reboot; every mode has rejoined before the end.
    let reboot_at = hold_down + 5000 + 40 * n as u64;
    let cycles = reboot_at + o.down_cycles + hold_down + 20_000 + 400 * n as u64;
    format!(
        r#"name = "bench-rejoin-{n}"
hosts = {n}
cycles = {cycles}
seed = {seed}
rejoin_bound = {bound}

[heartbeat]
period = {p}
timeout = {t}

[workload]
rate = {rate}
targets = [1]
max_bytes = {max_bytes}
stop_at = {stop}

[[event]]
at = {reboot_at}
action = "reboot"
host = 1
down_cycles = {down}
"#,
        seed = o.seed,
        bound = cycles,
        p = o.heartbeat_period,
        t = o.heartbeat_timeout,
        rate = o.rate_per_host(n),
        max_bytes = MAX_BYTES,
        stop = reboot_at + o.down_cycles + hold_down + 10_000,
        down = o.down_cycles,
    )
}

fn mode(name: &'static str, r: &Report, traffic_cycles: u64) -> ModeResult {
    let latency = r
        .rejoins
        .iter()
        .find(|x| x.host == 1 && x.epoch == 2)
        .and_then(|x| x.latency);
    ModeResult {
        mode: name,
        latency,
        stale_writes_landed: r.stale.stale_writes_landed,
        stale_reads_and_atomics_landed: r.stale.stale_reads_and_atomics_landed,
        unregistered_writes: r.stale.unregistered_writes,
        passed: r.passed,
        nic_cycles_per_second: r.nic_cycles_per_second,
        cycles: r.cycles,
        measured_load: r.delivered_words.get(1).copied().unwrap_or(0) as f64
            / traffic_cycles.max(1) as f64,
    }
}

/// Run the bench; `progress` hears about each run as it starts.
pub fn bench_rejoin(
    o: &RejoinBenchOptions,
    mut progress: impl FnMut(&str),
) -> Result<Vec<SizeResult>, String> {
    let mut out = vec![];
    for &n in &o.hosts {
        let text = scenario_text(n, o);
        let scenario =
            Scenario::parse(&text, &format!("bench-rejoin-{n}")).map_err(|e| e.to_string())?;
        let mut modes = vec![];
        let mut bare = 0.0;
        for (name, protocol, hold_down) in [
            ("rejoin", ProtocolKind::Rejoin, None),
            ("heartbeat-safe", ProtocolKind::Heartbeat, None),
            ("heartbeat-naive", ProtocolKind::Heartbeat, Some(0)),
        ] {
            progress(&format!("{n} hosts, {name}"));
            let record = protocol == ProtocolKind::Rejoin;
            let opts = RunOptions {
                protocol: Some(protocol),
                hold_down,
                threads: Some(o.threads),
                record_host_inputs: record.then_some(1),
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
                bare = inputs.len() as f64 / start.elapsed().as_secs_f64().max(1e-9);
            }
            modes.push(mode(name, &report, scenario.workload_stop()));
        }
        out.push(SizeResult {
            hosts: n,
            rate_per_host: o.rate_per_host(n),
            offered_load: o.rate_per_host(n)
                * (n - 1) as f64
                * request_words_per_operation(&MixSpec::default(), 8, MAX_BYTES),
            modes,
            bare_model_cycles_per_second: bare,
        });
    }
    Ok(out)
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
