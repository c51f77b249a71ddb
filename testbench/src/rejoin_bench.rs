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
//! Reported per mode: host 1's rejoin latency (power-on to usable by all peers), the stale
//! accesses that landed in it, and the co-simulation's NIC-cycles per second; per size, the
//! bare Verilator model's speed on host 1's own recorded inputs, so the share the whole
//! system keeps is measured side by side in one run.

use crate::scenario::{ProtocolKind, Scenario};
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
    /// Chance per cycle that each other host starts an operation to host 1.
    pub rate: f64,
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
            rate: 0.01,
            threads: 1,
            seed: 11,
        }
    }
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
}

/// One cluster size.
#[derive(Clone, Debug, Serialize)]
pub struct SizeResult {
    pub hosts: usize,
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
max_bytes = 256
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
        rate = o.rate,
        stop = reboot_at + o.down_cycles + hold_down + 10_000,
        down = o.down_cycles,
    )
}

fn mode(name: &'static str, r: &Report) -> ModeResult {
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
            modes.push(mode(name, &report));
        }
        out.push(SizeResult {
            hosts: n,
            modes,
            bare_model_cycles_per_second: bare,
        });
    }
    Ok(out)
}
