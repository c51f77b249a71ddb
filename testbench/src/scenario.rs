//! Scenario files: a multi-host co-simulation described in TOML (`nic sim --scenario`).
//!
//! ```toml
//! name = "reboot-during-traffic"
//! hosts = 4
//! cycles = 60000
//! protocol = "rejoin"          # or "heartbeat" (the baseline of 000 [0006])
//!
//! [workload]
//! rate = 0.02                  # operations a host starts per cycle (0..1)
//! mix = { rdma_write = 6, rdma_read = 2, send = 1, fetch_add = 1 }
//! targets = [1]                # only these hosts are targeted (default: all)
//!
//! [[event]]
//! at = 20000
//! action = "reboot"            # power_on | power_off | reboot | unplug | plug
//! host = 1                     # or hosts = [1, 2]
//! ```
//!
//! Every table and key is listed in `docs/scenarios.md`. Unknown keys are refused; a
//! malformed file gets an error naming the line and the field.

use crate::faults::{FaultKind, FaultSpec};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The membership protocol the drivers run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProtocolKind {
    /// The rejoin protocol of 000 Figs. 7-8.
    #[default]
    Rejoin,
    /// The heartbeat baseline of 000 [0006].
    Heartbeat,
}

/// Which simulator runs the NICs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    #[default]
    Verilator,
    Rusthdl,
}

/// Where translation and protection happen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TptKind {
    /// The driver's software TPT (000); the NIC has no TPT block.
    #[default]
    Software,
    /// A NIC with the hardware TPT block (`nic_top_tpt256`, at most
    /// [`nic_cosim::cluster::TPT_MODEL_QUEUE_PAIRS`] hosts): the driver programs it and
    /// RDMA carries STag + virtual address; the software TPT still runs 000's checks.
    Hardware,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FabricSpec {
    /// Cycles through the switch.
    pub latency: u64,
    /// Words of buffering per source.
    pub input_capacity_words: usize,
}

impl Default for FabricSpec {
    fn default() -> Self {
        FabricSpec {
            latency: 16,
            input_capacity_words: 512,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DriverSpec {
    /// Rejoin protocol: cycles before BOOTING is resent to nodes that have not answered.
    pub resend_timeout: u64,
    /// Cycles between two driver polls.
    pub poll_interval: u64,
    pub sq_log2: u32,
    pub rq_log2: u32,
    pub cq_log2: u32,
    /// Bytes per receive buffer (the largest SEND).
    pub recv_buffer_bytes: u32,
    /// Hardware TPT: cycles between two looks at the NIC's exception queue.
    pub exception_poll_interval: u64,
}

impl Default for DriverSpec {
    fn default() -> Self {
        DriverSpec {
            resend_timeout: 4000,
            poll_interval: 8,
            sq_log2: 4,
            rq_log2: 3,
            cq_log2: 9,
            recv_buffer_bytes: 1024,
            exception_poll_interval: 64,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HeartbeatSpec {
    /// Cycles between two heartbeats.
    pub period: u64,
    /// Silence after which a peer is declared down.
    pub timeout: u64,
    /// Silence after boot before the first heartbeat; absent: the safe value
    /// (`timeout + 2 * period` + the NIC's retransmission span); 0: the naive prior art.
    pub hold_down: Option<u64>,
    /// Heartbeats carry the sender's incarnation, so peers see a reboot at the first beat
    /// (the variant of driver/src/heartbeat.rs: beats from boot, RDMA off for the
    /// hold-down).
    pub incarnation: bool,
}

impl Default for HeartbeatSpec {
    fn default() -> Self {
        HeartbeatSpec {
            period: 5000,
            timeout: 15000,
            hold_down: None,
            incarnation: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemorySpec {
    /// Host memory read latency in cycles.
    pub latency: u32,
    /// Chance per cycle that host memory withholds a ready (0..1).
    pub stall: f64,
}

impl Default for MemorySpec {
    fn default() -> Self {
        MemorySpec {
            latency: 8,
            stall: 0.0,
        }
    }
}

/// Relative weights of the operations a host starts.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MixSpec {
    pub rdma_write: u32,
    pub rdma_read: u32,
    pub send: u32,
    pub fetch_add: u32,
    pub compare_swap: u32,
}

impl Default for MixSpec {
    fn default() -> Self {
        MixSpec {
            rdma_write: 6,
            rdma_read: 2,
            send: 1,
            fetch_add: 1,
            compare_swap: 0,
        }
    }
}

impl MixSpec {
    pub fn total(&self) -> u32 {
        self.rdma_write + self.rdma_read + self.send + self.fetch_add + self.compare_swap
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadSpec {
    /// Chance per cycle that a joined host starts an operation (0..1).
    pub rate: f64,
    pub mix: MixSpec,
    /// Payload sizes (rounded up to whole 8-byte words), 8..=max.
    pub min_bytes: u32,
    pub max_bytes: u32,
    /// Hosts that are targeted (default: all).
    pub targets: Option<Vec<usize>>,
    /// Hosts that start operations (default: all).
    pub sources: Option<Vec<usize>>,
    /// Cycle from which no new operation starts (default: 3/4 of `cycles`), so that
    /// everything drains before the end.
    pub stop_at: Option<u64>,
    /// Chance per cycle that a host deregisters its write region `W` (then registers an
    /// overlapping range again once the driver has freed it), under traffic.
    pub dereg_rate: f64,
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            rate: 0.01,
            mix: MixSpec::default(),
            min_bytes: 8,
            max_bytes: 512,
            targets: None,
            sources: None,
            stop_at: None,
            dereg_rate: 0.0,
        }
    }
}

/// How the split-driver exchange moves its packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitMode {
    /// RDMA WRITEs into the peer's advertised buffer pools (002's push-push RDMA).
    #[default]
    Pools,
    /// Each packet in a SendData message (plain SEND/RECV).
    Send,
}

/// `[split_driver]`: a split-model driver of 002 between a host and an I/O unit, each
/// pushing `packets` packets to the other (see [`crate::split_driver`]).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SplitDriverSpec {
    pub host: usize,
    pub io_unit: usize,
    /// Packets each way.
    pub packets: u32,
    /// Bytes per packet (a multiple of 8).
    pub packet_bytes: u32,
    /// Elements per pool (1..=256).
    pub elements: u32,
    /// Bytes per element (a multiple of 8, at least `packet_bytes`, at most 65536).
    pub element_bytes: u32,
    pub mode: SplitMode,
    /// The target flushes its pool and advertises a new one every this many packets
    /// received (0: never).
    pub flush_every: u32,
    /// Cycle the exchange starts at (once both ends have joined).
    pub start_at: u64,
}

impl Default for SplitDriverSpec {
    fn default() -> Self {
        SplitDriverSpec {
            host: 0,
            io_unit: 1,
            packets: 200,
            packet_bytes: 512,
            elements: 16,
            element_bytes: 1024,
            mode: SplitMode::Pools,
            flush_every: 64,
            start_at: 0,
        }
    }
}

/// A timed event's action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventAction {
    /// Power the host on (a new epoch; a powered host is power-cycled).
    PowerOn,
    /// Power the host off (its port goes down).
    PowerOff,
    /// Power off, then on again `down_cycles` later.
    Reboot,
    /// Pull the host's cable (it keeps running).
    Unplug,
    /// Plug the cable back in.
    Plug,
    /// A route change: the fabric delivers the host's traffic to its NIC `nic` from now
    /// on, and the host's driver fails over to it (source 003).
    Route,
}

/// One `[[event]]` table.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    /// Cycle of the (first) occurrence.
    pub at: u64,
    pub action: EventAction,
    /// The host (or use `hosts`).
    pub host: Option<usize>,
    pub hosts: Option<Vec<usize>>,
    /// Reboot: cycles powered off (default 500).
    pub down_cycles: Option<u64>,
    /// Occurrences (default 1), `every` cycles apart.
    pub repeat: Option<u32>,
    pub every: Option<u64>,
    /// `unplug` / `plug`: only this NIC of the host (default: all of them); `route`: the
    /// NIC the host's traffic goes to (required).
    pub nic: Option<usize>,
}

/// NICs per host: one count for every host, or one per host.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum NicsSpec {
    All(usize),
    PerHost(Vec<usize>),
}

impl Default for NicsSpec {
    fn default() -> Self {
        NicsSpec::All(1)
    }
}

/// A scenario file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Hosts (nodes 0..hosts), 2..=64.
    pub hosts: usize,
    /// NIC queue pairs (default: the smallest model with at least `hosts`).
    pub queue_pairs: Option<usize>,
    /// Cycles to run.
    pub cycles: u64,
    #[serde(default)]
    pub protocol: ProtocolKind,
    #[serde(default)]
    pub backend: BackendKind,
    #[serde(default)]
    pub tpt: TptKind,
    /// NICs per host (source 003): `nics = 2`, or `nics = [1, 2, 1]` per host.
    #[serde(default)]
    pub nics: NicsSpec,
    #[serde(default)]
    pub seed: u64,
    /// Hosts that are not powered on at cycle 0 (the others are: a cold boot).
    #[serde(default)]
    pub initially_off: Vec<usize>,
    /// Bound on rejoin: once faults stop, every live host is usable by all peers within
    /// this many cycles (default 30000).
    pub rejoin_bound: Option<u64>,
    /// Threads stepping the NICs (default 1).
    pub threads: Option<usize>,
    #[serde(default)]
    pub fabric: FabricSpec,
    #[serde(default)]
    pub driver: DriverSpec,
    #[serde(default)]
    pub heartbeat: HeartbeatSpec,
    #[serde(default)]
    pub memory: MemorySpec,
    #[serde(default)]
    pub workload: WorkloadSpec,
    #[serde(default, rename = "event")]
    pub events: Vec<toml::Spanned<EventSpec>>,
    /// Link faults (`[[fault]]`, see [`crate::faults`]).
    #[serde(default, rename = "fault")]
    pub faults: Vec<toml::Spanned<FaultSpec>>,
    /// The split-driver exchange of 002, if any.
    pub split_driver: Option<SplitDriverSpec>,
    /// BIND RKEY / UNBIND and DELAY work requests of 001, if any.
    pub local_work: Option<crate::local_work::LocalWorkSpec>,
}

/// A scenario file that could not be used: where and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct ScenarioError {
    pub file: String,
    /// Line (1-based) of the offending field, when known.
    pub line: Option<usize>,
    pub message: String,
}

/// One event occurrence, expanded from `[[event]]` tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TimedEvent {
    pub at: u64,
    pub action: EventAction,
    pub host: usize,
    pub down_cycles: u64,
    /// The NIC an `unplug` / `plug` / `route` names (`None`: all of the host's).
    pub nic: Option<usize>,
}

/// Default cycles a rebooting host stays powered off.
pub const DEFAULT_DOWN_CYCLES: u64 = 500;
/// Default bound on rejoin.
pub const DEFAULT_REJOIN_BOUND: u64 = 30_000;
/// The most hosts a scenario may have (the largest NIC model's queue pairs).
pub const MAX_HOSTS: usize = 64;
/// The most event occurrences (`repeat` times hosts, over all `[[event]]` tables).
pub const MAX_EVENT_OCCURRENCES: u64 = 1 << 20;

/// The key path of a `key = value` line: a dotted key split, quotes removed (`None` for
/// table headers, comments and lines without `=`).
fn key_path(line: &str) -> Option<Vec<&str>> {
    let t = line.trim_start();
    if t.starts_with('[') || t.starts_with('#') {
        return None;
    }
    let (key, _) = t.split_once('=')?;
    Some(
        key.split('.')
            .map(|p| p.trim().trim_matches(|c| c == '"' || c == '\''))
            .collect(),
    )
}

/// The 1-based line of byte `span.start`, counted as the `toml` crate counts it in its
/// messages (a position at the very end is on the last line).
fn line_of(text: &str, span: Range<usize>) -> usize {
    let at = span.start.min(text.len().saturating_sub(1));
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

impl Scenario {
    /// Parse and check a scenario; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, ScenarioError> {
        let scenario: Scenario = toml::from_str(text).map_err(|e| ScenarioError {
            file: file.to_string(),
            line: e.span().map(|s| line_of(text, s)),
            message: e.to_string().trim_end().to_string(),
        })?;
        scenario.check(text, file)?;
        Ok(scenario)
    }

    /// Read, parse and check a scenario file.
    pub fn load(path: &std::path::Path) -> Result<Self, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: file.clone(),
            line: None,
            message: format!("cannot read the scenario: {e}"),
        })?;
        Self::parse(&text, &file)
    }

    fn check(&self, text: &str, file: &str) -> Result<(), ScenarioError> {
        let err = |line: Option<usize>, message: String| ScenarioError {
            file: file.to_string(),
            line,
            message: match line {
                Some(l) => format!("line {l}: {message}"),
                None => message,
            },
        };
        // Line of the first `key = ...`, also as part of a dotted key (`workload.rate`).
        let key_line = |key: &str| {
            text.lines()
                .position(|l| key_path(l).is_some_and(|p| p.contains(&key)))
                .map(|i| i + 1)
        };
        // Line of the header `[table]`.
        let table_line = |table: &str| {
            let header = format!("[{table}]");
            text.lines().position(|l| l.trim() == header).map(|i| i + 1)
        };
        // Line of `key = ...` inside `[table]` or of `table.key = ...` (a key several
        // tables have), else the table's header or its inline table (`table = { ... }`).
        let key_line_in = |table: &str, key: &str| {
            let inside = table_line(table).and_then(|start| {
                text.lines()
                    .enumerate()
                    .skip(start)
                    .take_while(|(_, l)| !l.trim_start().starts_with('['))
                    .find(|(_, l)| key_path(l).is_some_and(|p| p == [key]))
                    .map(|(i, _)| i + 1)
            });
            let dotted: Vec<&str> = table.split('.').chain([key]).collect();
            inside
                .or_else(|| {
                    text.lines()
                        .position(|l| key_path(l).is_some_and(|p| p == dotted))
                        .map(|i| i + 1)
                })
                .or_else(|| table_line(table))
                .or_else(|| key_line(table.rsplit('.').next().unwrap_or(table)))
        };
        if !(2..=MAX_HOSTS).contains(&self.hosts) {
            return Err(err(
                key_line("hosts"),
                format!(
                    "field `hosts`: must be in 2..={MAX_HOSTS}, got {}",
                    self.hosts
                ),
            ));
        }
        if let Some(q) = self.queue_pairs {
            if q < self.hosts || q > MAX_HOSTS {
                return Err(err(
                    key_line("queue_pairs"),
                    format!(
                        "field `queue_pairs`: must be in {}..={MAX_HOSTS} (one per host), got {q}",
                        self.hosts
                    ),
                ));
            }
        }
        if self.tpt == TptKind::Hardware {
            let max = nic_cosim::cluster::TPT_MODEL_QUEUE_PAIRS;
            let want = self.queue_pairs.unwrap_or(self.hosts);
            if want > max {
                return Err(err(
                    key_line("tpt"),
                    format!(
                        "field `tpt`: \"hardware\" runs the NIC model with a hardware TPT (nic_top_tpt256), which has {max} queue pairs: at most {max} hosts (one queue pair per peer), got {} {}",
                        want,
                        if self.queue_pairs.is_some() { "queue pairs" } else { "hosts" }
                    ),
                ));
            }
        }
        if self.cycles == 0 {
            return Err(err(
                key_line("cycles"),
                "field `cycles`: must be positive".into(),
            ));
        }
        let in_hosts = |list: &[usize], field: &str| -> Result<(), ScenarioError> {
            match list.iter().find(|&&h| h >= self.hosts) {
                Some(h) => Err(err(
                    key_line(field),
                    format!(
                        "field `{field}`: host {h} does not exist (hosts are 0..{})",
                        self.hosts
                    ),
                )),
                None => Ok(()),
            }
        };
        in_hosts(&self.initially_off, "initially_off")?;
        let w = &self.workload;
        if !(0.0..=1.0).contains(&w.rate) {
            return Err(err(
                key_line("rate"),
                format!("field `workload.rate`: must be in 0..=1, got {}", w.rate),
            ));
        }
        let m = &w.mix;
        let weights = [
            m.rdma_write,
            m.rdma_read,
            m.send,
            m.fetch_add,
            m.compare_swap,
        ]
        .iter()
        .map(|&x| x as u64)
        .sum::<u64>();
        if weights > u32::MAX as u64 {
            return Err(err(
                key_line("mix").or(table_line("workload.mix")),
                format!(
                    "field `workload.mix`: the weights add up to {weights}, more than {}",
                    u32::MAX
                ),
            ));
        }
        if !(0.0..=1.0).contains(&w.dereg_rate) {
            return Err(err(
                key_line("dereg_rate"),
                format!(
                    "field `workload.dereg_rate`: must be in 0..=1, got {}",
                    w.dereg_rate
                ),
            ));
        }
        if w.rate > 0.0 && w.mix.total() == 0 {
            return Err(err(
                key_line("mix").or(table_line("workload.mix")),
                "field `workload.mix`: every weight is 0".into(),
            ));
        }
        if let Some(sd) = &self.split_driver {
            let bad = |key: &str, m: String| {
                Err(err(
                    key_line_in("split_driver", key),
                    format!("field `split_driver.{key}`: {m}"),
                ))
            };
            for (key, h) in [("host", sd.host), ("io_unit", sd.io_unit)] {
                if h >= self.hosts {
                    return bad(key, format!("must be a host of 0..{}, got {h}", self.hosts));
                }
            }
            if sd.host == sd.io_unit {
                return bad("io_unit", format!("must differ from host ({})", sd.host));
            }
            if sd.packets == 0 {
                return bad("packets", "must be at least 1".into());
            }
            if sd.packet_bytes == 0 || sd.packet_bytes % 8 != 0 {
                return bad(
                    "packet_bytes",
                    format!("must be a positive multiple of 8, got {}", sd.packet_bytes),
                );
            }
            if !(1..=256).contains(&sd.elements) {
                return bad(
                    "elements",
                    format!("must be in 1..=256, got {}", sd.elements),
                );
            }
            if sd.element_bytes % 8 != 0 || !(sd.packet_bytes..=65536).contains(&sd.element_bytes) {
                return bad(
                    "element_bytes",
                    format!(
                        "must be a multiple of 8 in packet_bytes ({})..=65536, got {}",
                        sd.packet_bytes, sd.element_bytes
                    ),
                );
            }
            let room = self
                .driver
                .recv_buffer_bytes
                .saturating_sub(nic_driver::pools::HEADER_BYTES as u32 + 4);
            if sd.mode == SplitMode::Send && sd.packet_bytes > room {
                return bad(
                    "packet_bytes",
                    format!(
                        "mode send: {} does not fit a receive buffer ({room} bytes with the SendData header; driver.recv_buffer_bytes {})",
                        sd.packet_bytes, self.driver.recv_buffer_bytes
                    ),
                );
            }
        }
        if let Some(lw) = &self.local_work {
            if let Err((key, m)) = lw.check(self.hosts, self.cycles) {
                return Err(err(
                    key_line_in("local_work", key),
                    format!("field `local_work.{key}`: {m}"),
                ));
            }
        }
        let d = &self.driver;
        let max_log2 = nic_abi::MAX_RING_SIZE_LOG2;
        for (key, v) in [
            ("sq_log2", d.sq_log2),
            ("rq_log2", d.rq_log2),
            ("cq_log2", d.cq_log2),
        ] {
            if !(1..=max_log2).contains(&v) {
                return Err(err(
                    key_line_in("driver", key),
                    format!("field `driver.{key}`: must be in 1..={max_log2}, got {v}"),
                ));
            }
        }
        let (min_recv, max_recv) = (
            nic_driver::control::MAX_CONTROL_BYTES as u32,
            nic_abi::MAX_MESSAGE_LENGTH,
        );
        if !d.recv_buffer_bytes.is_multiple_of(8)
            || !(min_recv..=max_recv).contains(&d.recv_buffer_bytes)
        {
            return Err(err(
                key_line_in("driver", "recv_buffer_bytes"),
                format!(
                    "field `driver.recv_buffer_bytes`: must be a multiple of 8 in {min_recv}..={max_recv}, got {}",
                    d.recv_buffer_bytes
                ),
            ));
        }
        if w.min_bytes == 0
            || w.min_bytes > w.max_bytes
            || w.max_bytes > self.driver.recv_buffer_bytes
        {
            return Err(err(
                key_line("max_bytes")
                    .or(key_line("min_bytes"))
                    .or(key_line("recv_buffer_bytes")),
                format!(
                    "fields `workload.min_bytes`/`max_bytes`: need 1 <= min <= max <= driver.recv_buffer_bytes ({}), got {}..{}",
                    self.driver.recv_buffer_bytes, w.min_bytes, w.max_bytes
                ),
            ));
        }
        if let Some(t) = &w.targets {
            in_hosts(t, "targets")?;
        }
        if let Some(s) = &w.sources {
            in_hosts(s, "sources")?;
        }
        if self.driver.poll_interval == 0 || self.driver.resend_timeout == 0 {
            return Err(err(
                key_line("poll_interval").or(key_line("resend_timeout")),
                "fields `driver.poll_interval` and `driver.resend_timeout` must be positive".into(),
            ));
        }
        if self.driver.exception_poll_interval == 0 {
            return Err(err(
                key_line("exception_poll_interval"),
                "field `driver.exception_poll_interval` must be positive".into(),
            ));
        }
        if self.protocol == ProtocolKind::Heartbeat
            && (self.heartbeat.period == 0 || self.heartbeat.timeout <= self.heartbeat.period)
        {
            return Err(err(
                key_line("timeout").or(key_line("period")),
                format!(
                    "fields `heartbeat.period`/`timeout`: need 0 < period < timeout, got {} and {}",
                    self.heartbeat.period, self.heartbeat.timeout
                ),
            ));
        }
        match &self.nics {
            NicsSpec::PerHost(v) if v.len() != self.hosts => {
                return Err(err(
                    key_line("nics"),
                    format!(
                        "field `nics`: one count per host: {} hosts, {} counts",
                        self.hosts,
                        v.len()
                    ),
                ));
            }
            _ => {}
        }
        let max_nics = nic_driver::multi_nic::MAX_NICS;
        if let Some(k) = (0..self.hosts)
            .map(|h| self.nics_of(h))
            .find(|k| !(1..=max_nics).contains(k))
        {
            return Err(err(
                key_line("nics"),
                format!("field `nics`: must be in 1..={max_nics} per host, got {k}"),
            ));
        }
        if let Err(e) = (nic_cosim::fabric::FabricConfig {
            ports: self.total_nics(),
            latency: self.fabric.latency,
            input_capacity_words: self.fabric.input_capacity_words,
        })
        .validate()
        {
            let key = if self.fabric.latency == 0 {
                "latency"
            } else {
                "input_capacity_words"
            };
            return Err(err(
                key_line_in("fabric", key),
                format!("table `fabric`: {e}"),
            ));
        }
        if !(0.0..1.0).contains(&self.memory.stall) || self.memory.latency == 0 {
            let key = if self.memory.latency == 0 {
                "latency"
            } else {
                "stall"
            };
            return Err(err(
                key_line_in("memory", key),
                "table `memory`: need latency >= 1 and stall in 0..1".into(),
            ));
        }
        let mut occurrences = 0u64;
        for ev in &self.events {
            let line = Some(line_of(text, ev.span()));
            let e = ev.get_ref();
            let hosts = match (&e.host, &e.hosts) {
                (Some(h), None) => vec![*h],
                (None, Some(hs)) if !hs.is_empty() => hs.clone(),
                _ => {
                    return Err(err(
                        line,
                        "event: give exactly one of `host` or a non-empty `hosts`".into(),
                    ))
                }
            };
            if let Some(h) = hosts.iter().find(|&&h| h >= self.hosts) {
                return Err(err(
                    line,
                    format!(
                        "event field `host`: host {h} does not exist (hosts are 0..{})",
                        self.hosts
                    ),
                ));
            }
            if e.repeat.unwrap_or(1) > 1 && e.every.unwrap_or(0) == 0 {
                return Err(err(
                    line,
                    "event field `every`: a repeated event needs `every` > 0".into(),
                ));
            }
            let repeat = e.repeat.unwrap_or(1) as u64;
            let last = repeat
                .saturating_sub(1)
                .checked_mul(e.every.unwrap_or(0))
                .and_then(|d| e.at.checked_add(d));
            if last.is_none() {
                return Err(err(
                    line,
                    format!(
                        "event fields `repeat`/`every`: occurrence {repeat} of an event at {} every {} cycles is past cycle {}",
                        e.at,
                        e.every.unwrap_or(0),
                        u64::MAX
                    ),
                ));
            }
            occurrences += repeat * hosts.len() as u64;
            if occurrences > MAX_EVENT_OCCURRENCES {
                return Err(err(
                    line,
                    format!(
                        "event field `repeat`: more than {MAX_EVENT_OCCURRENCES} event occurrences (repeat times hosts) in all"
                    ),
                ));
            }
            if e.down_cycles.is_some() && e.action != EventAction::Reboot {
                return Err(err(
                    line,
                    "event field `down_cycles`: only a reboot has one".into(),
                ));
            }
            let names_nic = matches!(
                e.action,
                EventAction::Unplug | EventAction::Plug | EventAction::Route
            );
            match e.nic {
                None if e.action == EventAction::Route => {
                    return Err(err(
                        line,
                        "event field `nic`: a route event names the NIC the traffic goes to".into(),
                    ))
                }
                Some(_) if !names_nic => {
                    return Err(err(
                        line,
                        "event field `nic`: only unplug, plug and route name a NIC".into(),
                    ))
                }
                Some(k) => {
                    if let Some(&h) = hosts.iter().find(|&&h| k >= self.nics_of(h)) {
                        return Err(err(
                            line,
                            format!(
                                "event field `nic`: host {h} has no NIC {k} (it has {})",
                                self.nics_of(h)
                            ),
                        ));
                    }
                }
                None => {}
            }
        }
        for f in &self.faults {
            if let Err(e) = f.get_ref().check(self.hosts, self.cycles) {
                return Err(err(Some(line_of(text, f.span())), e));
            }
        }
        if let Some(last) = self.timeline().iter().map(|e| e.at).max() {
            if last >= self.cycles {
                return Err(err(
                    key_line("cycles"),
                    format!(
                        "field `cycles`: {} ends before the last event at cycle {last}",
                        self.cycles
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Every event occurrence, in time order (ties in file order).
    pub fn timeline(&self) -> Vec<TimedEvent> {
        let mut out = vec![];
        for ev in &self.events {
            let e = ev.get_ref();
            let hosts = e
                .host
                .map(|h| vec![h])
                .or(e.hosts.clone())
                .unwrap_or_default();
            for k in 0..e.repeat.unwrap_or(1) as u64 {
                for &host in &hosts {
                    out.push(TimedEvent {
                        at: e.at + k * e.every.unwrap_or(0),
                        action: e.action,
                        host,
                        down_cycles: e.down_cycles.unwrap_or(DEFAULT_DOWN_CYCLES),
                        nic: e.nic,
                    });
                }
            }
        }
        for f in &self.faults {
            let f = f.get_ref();
            if f.kind != FaultKind::Flap {
                continue;
            }
            let host = f.host.unwrap_or(0);
            for (unplug, plug) in f.flaps(self.cycles) {
                for (at, action) in [(unplug, EventAction::Unplug), (plug, EventAction::Plug)] {
                    out.push(TimedEvent {
                        at,
                        action,
                        host,
                        down_cycles: DEFAULT_DOWN_CYCLES,
                        nic: None,
                    });
                }
            }
        }
        out.sort_by_key(|e| e.at);
        out
    }

    /// NICs of host `h`.
    pub fn nics_of(&self, h: usize) -> usize {
        match &self.nics {
            NicsSpec::All(k) => *k,
            NicsSpec::PerHost(v) => v.get(h).copied().unwrap_or(1),
        }
    }

    /// NICs of all hosts (the fabric's ports).
    pub fn total_nics(&self) -> usize {
        (0..self.hosts).map(|h| self.nics_of(h)).sum()
    }

    /// The link faults (drop, corrupt, delay) in file order.
    pub fn fault_specs(&self) -> Vec<FaultSpec> {
        self.faults.iter().map(|f| f.get_ref().clone()).collect()
    }

    /// The last cycle a fault or event disturbs the run (0: none).
    pub fn last_disturbance(&self) -> u64 {
        let faults = self
            .faults
            .iter()
            .map(|f| f.get_ref().until.unwrap_or(self.cycles).saturating_sub(1));
        self.timeline()
            .iter()
            .map(|e| e.at)
            .chain(faults)
            .max()
            .unwrap_or(0)
    }

    /// The cycle at which hosts stop starting operations.
    pub fn workload_stop(&self) -> u64 {
        let c = self.cycles;
        self.workload.stop_at.unwrap_or(c / 4 * 3 + c % 4 * 3 / 4)
    }

    pub fn rejoin_bound(&self) -> u64 {
        self.rejoin_bound.unwrap_or(DEFAULT_REJOIN_BOUND)
    }

    /// Queue pairs of the NIC each host gets.
    pub fn nic_queue_pairs(&self) -> usize {
        if self.tpt == TptKind::Hardware {
            return nic_cosim::cluster::TPT_MODEL_QUEUE_PAIRS;
        }
        let want = self.queue_pairs.unwrap_or(self.hosts);
        *nic_cosim::cluster::MODEL_QUEUE_PAIRS
            .iter()
            .find(|&&q| q >= want)
            .unwrap_or(&MAX_HOSTS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
hosts = 4
cycles = 1000

[workload]
rate = 0.5

[[event]]
at = 100
action = "reboot"
host = 1
repeat = 2
every = 300

[[event]]
at = 50
action = "unplug"
hosts = [2, 3]
"#;

    #[test]
    fn parses_and_expands_the_timeline() {
        let s = Scenario::parse(GOOD, "good.toml").unwrap();
        let t = s.timeline();
        assert_eq!(t.len(), 4);
        assert_eq!(
            (t[0].at, t[0].action, t[0].host),
            (50, EventAction::Unplug, 2)
        );
        assert_eq!((t[1].at, t[1].host), (50, 3));
        assert_eq!((t[2].at, t[2].down_cycles), (100, DEFAULT_DOWN_CYCLES));
        assert_eq!(t[3].at, 400);
        assert_eq!(s.nic_queue_pairs(), 4);
        assert_eq!(s.workload_stop(), 750);
    }

    fn error(text: &str) -> ScenarioError {
        Scenario::parse(text, "bad.toml").unwrap_err()
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        let e = error(&GOOD.replace("rate = 0.5", "rate = \"fast\""));
        assert_eq!(e.line, Some(7), "{e}");
        assert!(e.message.contains("rate"), "{e}");
        let e = error(&GOOD.replace("action = \"unplug\"", "action = \"explode\""));
        assert_eq!(e.line, Some(18), "{e}");
        assert!(e.message.contains("explode"), "{e}");
        let e = error(&GOOD.replace("host = 1", "hots = 1"));
        assert!(e.message.contains("hots"), "{e}");
        let e = error(&GOOD.replace("hosts = [2, 3]", "hosts = [2, 9]"));
        assert_eq!(e.line, Some(16), "{e}");
        assert!(e.message.contains("host 9 does not exist"), "{e}");
        let e = error(&GOOD.replace("hosts = 4", "hosts = 99"));
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("`hosts`"), "{e}");
        let e = error(&GOOD.replace("cycles = 1000", "cycles = 300"));
        assert!(e.message.contains("last event"), "{e}");
        let e = error("name = \"x\"\nhosts = 2\n");
        assert!(e.message.contains("cycles"), "{e}");
        let hw = Scenario::parse(
            &GOOD.replace("name = \"t\"", "name = \"t\"\ntpt = \"hardware\""),
            "hw.toml",
        )
        .unwrap();
        assert_eq!((hw.tpt, hw.nic_queue_pairs()), (TptKind::Hardware, 4));
        let e = error(&GOOD.replace(
            "name = \"t\"\nhosts = 4",
            "name = \"t\"\ntpt = \"hardware\"\nhosts = 5",
        ));
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("field `tpt`"), "{e}");
        assert!(e.message.contains("at most 4 hosts"), "{e}");
        assert!(e.message.contains("got 5 hosts"), "{e}");
        assert!(error("hosts = [").message.contains("line 1"));
    }

    /// `nics` for all hosts or per host; `route` needs a NIC the host has; `nic` only on
    /// unplug, plug and route.
    #[test]
    fn several_nics_per_host_and_their_events() {
        let multi = GOOD.replace("hosts = 4", "hosts = 4\nnics = [1, 2, 1, 3]")
            + "\n[[event]]\nat = 200\naction = \"route\"\nhost = 3\nnic = 2\n";
        let s = Scenario::parse(&multi, "multi.toml").unwrap();
        assert_eq!((s.nics_of(1), s.nics_of(3), s.total_nics()), (2, 3, 7));
        let route = s
            .timeline()
            .into_iter()
            .find(|e| e.action == EventAction::Route);
        assert_eq!(route.map(|e| (e.host, e.nic)), Some((3, Some(2))));
        let all = Scenario::parse(&GOOD.replace("hosts = 4", "hosts = 4\nnics = 2"), "a.toml");
        assert_eq!(all.unwrap().total_nics(), 8);
        let e = error(&multi.replace("nic = 2", "nic = 3"));
        assert!(e.message.contains("host 3 has no NIC 3 (it has 3)"), "{e}");
        let e = error(&multi.replace("nic = 2\n", ""));
        assert!(e.message.contains("a route event names the NIC"), "{e}");
        let e = error(&multi.replace("[1, 2, 1, 3]", "[1, 2]"));
        assert_eq!(e.line, Some(4), "{e}");
        assert!(
            e.message.contains("one count per host: 4 hosts, 2 counts"),
            "{e}"
        );
        let e = error(&multi.replace("[1, 2, 1, 3]", "[1, 2, 0, 1]"));
        assert!(e.message.contains("field `nics`: must be in 1..=8"), "{e}");
        let e = error(&GOOD.replace("repeat = 2", "repeat = 2\nnic = 0"));
        assert!(
            e.message.contains("only unplug, plug and route name a NIC"),
            "{e}"
        );
    }
}
