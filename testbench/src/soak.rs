//! `nic soak`: random schedules on the Verilated NICs, every scoreboard on; a failing
//! schedule is shrunk to a small one and written as a scenario file.
//!
//! A case is drawn from its seed alone ([`SoakCase::generate`]), so the seed range
//! `seed..seed + cases` names a soak exactly and shards split it across machines
//! (`--seed 0 --cases 5000` here, `--seed 5000 --cases 5000` there). A case:
//! - 2 to 16 hosts, software TPT; one case in four NICs with the hardware TPT (2 to 4
//!   hosts, the model's queue pairs);
//! - 0 to 4 reboots at any cycle of the disturbed span, some aimed at a host's own rejoin
//!   (a few hundred cycles after its power-on) or another host's;
//! - 0 to 4 link faults of every kind (drop, corrupt, delay, flap), fabric-wide, per link
//!   or per message class, in windows;
//! - a random workload (rate, sizes, mix with every operation), and in half the cases
//!   write regions deregistered and registered again under traffic through the
//!   registration cache (004: free hook, range change, owner exit);
//! - in a third of the cases the split-driver exchange of 002 between hosts 0 and 1
//!   (buffer pools or SendData, pool flushes, random sizes; `[split_driver]`);
//! - in one case in six ([`MULTI_NIC_ONE_IN`]), and in every case with `nic soak
//!   --multi-nic` ([`SoakCase::generate_multi_nic`]), a host with two NICs (source 003,
//!   docs/multi-nic.md) and one to three of its NIC events: a route change to the other
//!   NIC, the route back, the first NIC's cable pulled (and plugged back later or not).
//!   Its draws come from a generator of their own, so the rest of the case is the
//!   one-NIC case of the same seed.
//! - then a quiet tail of [`SETTLE_CYCLES`]: every live host must be usable by all peers
//!   within [`SOAK_REJOIN_BOUND`] of the last disturbance, and every operation completes.
//!
//! A failing case is shrunk greedily ([`shrink`]): drop one event or fault, halve a fault
//! window, lower the host count, the workload rate and the payload size, as long as the
//! run still fails with the kind of violation it first failed with. The result is TOML that [`Scenario::parse`] reads:
//! `scenarios/regressions/` keeps each one, and the default test suite runs them all.

use crate::faults::{CorruptField, FaultKind, MessageClass};
use crate::scenario::Scenario;
use crate::scenario_run::{run_scenario, PlantedBug, Report, RunOptions};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write;

/// Cycles in which the disturbances of a case fall.
pub const DISTURBED_CYCLES: u64 = 16_000;
/// Quiet cycles after the last disturbance.
pub const SETTLE_CYCLES: u64 = 24_000;
/// A case's bound on rejoin after the last disturbance.
pub const SOAK_REJOIN_BOUND: u64 = 20_000;
/// One plain soak case in this many has a host with two NICs.
pub const MULTI_NIC_ONE_IN: u32 = 6;
/// Runs one shrink may spend.
pub const SHRINK_BUDGET: usize = 80;

/// One timed event of a case.
#[derive(Clone, Debug, PartialEq)]
pub struct SoakEvent {
    pub at: u64,
    pub host: usize,
    pub down_cycles: u64,
}

/// One link fault of a case.
#[derive(Clone, Debug, PartialEq)]
pub struct SoakFault {
    pub kind: FaultKind,
    pub from: u64,
    pub until: u64,
    pub rate: f64,
    pub src: Option<usize>,
    pub dst: Option<usize>,
    pub messages: Option<MessageClass>,
    pub field: CorruptField,
    /// Delay: the largest extra delay; flap: cycles unplugged.
    pub cycles: u64,
    /// Flap: the host.
    pub host: usize,
}

/// A random schedule (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct SoakCase {
    pub seed: u64,
    pub hosts: usize,
    pub hardware_tpt: bool,
    pub rate: f64,
    pub max_bytes: u32,
    /// Chance per cycle that a host deregisters its write region (and registers it again).
    pub dereg_rate: f64,
    pub reboots: Vec<SoakEvent>,
    pub faults: Vec<SoakFault>,
    /// The split-driver exchange of 002 between hosts 0 and 1, in a third of the cases.
    pub split: Option<crate::scenario::SplitDriverSpec>,
    /// `--multi-nic`: the host with two NICs and its NIC events.
    pub multi_nic: Option<SoakMultiNic>,
}

/// What happens to a NIC of the two-NIC host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoakNicAction {
    Route,
    Unplug,
    Plug,
}

/// The host with two NICs and its NIC events (`nic soak --multi-nic`).
#[derive(Clone, Debug, PartialEq)]
pub struct SoakMultiNic {
    pub host: usize,
    /// (cycle, action, NIC), in time order.
    pub events: Vec<(u64, SoakNicAction, usize)>,
}

fn pick<T: Copy>(rng: &mut ChaCha8Rng, items: &[T]) -> T {
    *items.choose(rng).expect("a non-empty list")
}

impl SoakCase {
    /// The case of `seed`: one case in [`MULTI_NIC_ONE_IN`] has a host with two NICs (as
    /// [`SoakCase::generate_multi_nic`]), drawn from a generator of its own.
    pub fn generate(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0003_0003_5A5A_5A5A);
        if rng.gen_ratio(1, MULTI_NIC_ONE_IN) {
            Self::generate_multi_nic(seed)
        } else {
            Self::generate_one_nic(seed)
        }
    }

    /// The case of `seed` with one NIC per host.
    fn generate_one_nic(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x50A4_50A4_50A4_50A4);
        let hardware_tpt = rng.gen_ratio(1, 4);
        let hosts = if hardware_tpt {
            rng.gen_range(2..=4)
        } else {
            rng.gen_range(2..=16)
        };
        let mut reboots: Vec<SoakEvent> = vec![];
        for _ in 0..rng.gen_range(0..=4) {
            let host = rng.gen_range(0..hosts);
            let down_cycles = rng.gen_range(20..=2000);
            // Some reboots land in a rejoin: shortly after an earlier one's power-on.
            let at = match reboots.choose(&mut rng) {
                Some(e) if rng.gen_bool(0.5) => e.at + e.down_cycles + rng.gen_range(0..=1500),
                _ => rng.gen_range(1000..DISTURBED_CYCLES),
            }
            .min(DISTURBED_CYCLES);
            reboots.push(SoakEvent {
                at,
                host,
                down_cycles,
            });
        }
        let mut faults = vec![];
        for _ in 0..rng.gen_range(0..=4) {
            let kind = pick(
                &mut rng,
                &[
                    FaultKind::Drop,
                    FaultKind::Corrupt,
                    FaultKind::Delay,
                    FaultKind::Flap,
                ],
            );
            let from = rng.gen_range(0..DISTURBED_CYCLES);
            let until = (from + rng.gen_range(200..=6000)).min(DISTURBED_CYCLES + 1);
            let link = |rng: &mut ChaCha8Rng| rng.gen_bool(0.4).then(|| rng.gen_range(0..hosts));
            let src = link(&mut rng);
            let dst = link(&mut rng);
            let messages = rng.gen_bool(0.4).then(|| {
                pick(
                    &mut rng,
                    &[
                        MessageClass::Request,
                        MessageClass::Response,
                        MessageClass::Control,
                        MessageClass::Booting,
                        MessageClass::Ack,
                        MessageClass::RdmaReady,
                        MessageClass::TptUpdate,
                        MessageClass::TptRemove,
                    ],
                )
            });
            let rate = match kind {
                FaultKind::Delay => rng.gen_range(0.05..=0.5),
                _ if messages.is_some() => rng.gen_range(0.2..=1.0),
                _ => rng.gen_range(0.001..=0.05),
            };
            faults.push(SoakFault {
                kind,
                from,
                until,
                rate,
                src,
                dst,
                messages,
                field: pick(
                    &mut rng,
                    &[
                        CorruptField::Header,
                        CorruptField::Payload,
                        CorruptField::Crc,
                        CorruptField::Any,
                    ],
                ),
                cycles: match kind {
                    FaultKind::Flap => rng.gen_range(50..=3000),
                    _ => rng.gen_range(1..=2000),
                },
                host: rng.gen_range(0..hosts),
            });
        }
        let rate = pick(&mut rng, &[0.005, 0.01, 0.02, 0.05]);
        let max_bytes = pick(&mut rng, &[64, 256, 512, 1024]);
        let dereg_rate = pick(&mut rng, &[0.0, 0.0, 0.0002, 0.001]);
        // Drawn last, so the fields above are what they were for every seed.
        let split = rng.gen_ratio(1, 3).then(|| {
            let packet_bytes = pick(&mut rng, &[64, 256, 512, 1000]);
            let send = rng.gen_bool(0.3);
            crate::scenario::SplitDriverSpec {
                host: 0,
                io_unit: 1,
                packets: rng.gen_range(20..=150),
                packet_bytes,
                elements: pick(&mut rng, &[4, 16, 64]),
                element_bytes: packet_bytes.max(pick(&mut rng, &[512, 1024, 2048])),
                mode: if send {
                    crate::scenario::SplitMode::Send
                } else {
                    crate::scenario::SplitMode::Pools
                },
                flush_every: pick(&mut rng, &[0, 10, 40]),
                start_at: rng.gen_range(0..DISTURBED_CYCLES / 2),
            }
        });
        SoakCase {
            seed,
            hosts,
            hardware_tpt,
            rate,
            max_bytes,
            dereg_rate,
            reboots,
            faults,
            split,
            multi_nic: None,
        }
    }

    /// The case of `seed` with a two-NIC host and its NIC events (see the module docs).
    pub fn generate_multi_nic(seed: u64) -> Self {
        let mut case = Self::generate_one_nic(seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0003_3003_0003_3003);
        let host = rng.gen_range(0..case.hosts);
        let t1 = rng.gen_range(1000..DISTURBED_CYCLES / 2);
        let t2 = rng.gen_range(t1 + 200..=DISTURBED_CYCLES);
        use SoakNicAction::*;
        let events = match rng.gen_range(0..4) {
            0 => vec![(t1, Route, 1)],
            1 => vec![(t1, Route, 1), (t2, Route, 0)],
            2 => vec![(t1, Unplug, 0)],
            _ => vec![(t1, Unplug, 0), (t2, Plug, 0)],
        };
        case.multi_nic = Some(SoakMultiNic { host, events });
        case
    }

    /// The last disturbed cycle.
    pub fn last_disturbance(&self) -> u64 {
        let m = self
            .multi_nic
            .iter()
            .flat_map(|m| m.events.iter().map(|e| e.0));
        let r = self.reboots.iter().map(|e| e.at + e.down_cycles).chain(m);
        let f = self.faults.iter().map(|f| match f.kind {
            FaultKind::Flap => f.from + f.cycles,
            _ => f.until,
        });
        r.chain(f).max().unwrap_or(0)
    }

    /// The case as a scenario file.
    pub fn to_toml(&self, name: &str, comment: &str) -> String {
        let mut s = String::new();
        for line in comment.lines() {
            let _ = writeln!(s, "# {line}");
        }
        let last = self.last_disturbance();
        let _ = writeln!(s, "name = \"{name}\"");
        let _ = writeln!(
            s,
            "description = \"soak case of seed {} (nic soak --seed {} --cases 1{})\"",
            self.seed,
            self.seed,
            if self.multi_nic.is_some() {
                " --multi-nic"
            } else {
                ""
            }
        );
        let _ = writeln!(s, "hosts = {}", self.hosts);
        let _ = writeln!(s, "cycles = {}", last + SETTLE_CYCLES);
        let _ = writeln!(
            s,
            "tpt = \"{}\"",
            if self.hardware_tpt {
                "hardware"
            } else {
                "software"
            }
        );
        let _ = writeln!(s, "seed = {}", self.seed);
        if let Some(m) = &self.multi_nic {
            let nics: Vec<String> = (0..self.hosts)
                .map(|h| if h == m.host { "2" } else { "1" }.to_string())
                .collect();
            let _ = writeln!(s, "nics = [{}]", nics.join(", "));
        }
        let _ = writeln!(s, "rejoin_bound = {SOAK_REJOIN_BOUND}");
        let _ = writeln!(s, "\n[workload]");
        let _ = writeln!(s, "rate = {}", self.rate);
        let _ = writeln!(
            s,
            "mix = {{ rdma_write = 6, rdma_read = 2, send = 1, fetch_add = 1, compare_swap = 1 }}"
        );
        let _ = writeln!(s, "max_bytes = {}", self.max_bytes);
        if self.dereg_rate > 0.0 {
            let _ = writeln!(s, "dereg_rate = {}", self.dereg_rate);
        }
        let _ = writeln!(s, "stop_at = {}", last + SETTLE_CYCLES / 4);
        if let Some(sd) = &self.split {
            let mode = if sd.mode == crate::scenario::SplitMode::Send {
                "send"
            } else {
                "pools"
            };
            let _ = writeln!(
                s,
                "\n[split_driver]\nhost = {}\nio_unit = {}\npackets = {}\npacket_bytes = {}\nelements = {}\nelement_bytes = {}\nmode = \"{mode}\"\nflush_every = {}\nstart_at = {}",
                sd.host, sd.io_unit, sd.packets, sd.packet_bytes, sd.elements, sd.element_bytes, sd.flush_every, sd.start_at
            );
        }
        for e in &self.reboots {
            let _ = writeln!(
                s,
                "\n[[event]]\nat = {}\naction = \"reboot\"\nhost = {}\ndown_cycles = {}",
                e.at, e.host, e.down_cycles
            );
        }
        if let Some(m) = &self.multi_nic {
            for &(at, action, nic) in &m.events {
                let action = match action {
                    SoakNicAction::Route => "route",
                    SoakNicAction::Unplug => "unplug",
                    SoakNicAction::Plug => "plug",
                };
                let _ = writeln!(
                    s,
                    "\n[[event]]\nat = {at}\naction = \"{action}\"\nhost = {}\nnic = {nic}",
                    m.host
                );
            }
        }
        for f in &self.faults {
            let kind = match f.kind {
                FaultKind::Drop => "drop",
                FaultKind::Corrupt => "corrupt",
                FaultKind::Delay => "delay",
                FaultKind::Flap => "flap",
                FaultKind::ForgeStag => "forge_stag",
            };
            let _ = writeln!(s, "\n[[fault]]\nkind = \"{kind}\"\nfrom = {}", f.from);
            if f.kind == FaultKind::Flap {
                let _ = writeln!(s, "host = {}\ndown_cycles = {}", f.host, f.cycles);
                continue;
            }
            let _ = writeln!(s, "until = {}\nrate = {}", f.until, f.rate);
            if let Some(h) = f.src {
                let _ = writeln!(s, "src = [{h}]");
            }
            if let Some(h) = f.dst {
                let _ = writeln!(s, "dst = [{h}]");
            }
            if let Some(m) = f.messages {
                let name = toml::Value::try_from(m).expect("a class name");
                let _ = writeln!(s, "messages = [{name}]");
            }
            match f.kind {
                FaultKind::Corrupt => {
                    let name = toml::Value::try_from(f.field).expect("a field name");
                    let _ = writeln!(s, "field = {name}");
                }
                FaultKind::Delay => {
                    let _ = writeln!(s, "cycles = {}", f.cycles);
                }
                _ => {}
            }
        }
        s
    }

    /// The case as a scenario.
    pub fn scenario(&self) -> Scenario {
        let text = self.to_toml(&format!("soak-{}", self.seed), "");
        Scenario::parse(&text, &format!("soak case {}", self.seed))
            .unwrap_or_else(|e| panic!("a generated soak case is a valid scenario: {e}\n{text}"))
    }

    /// Smaller variants, the most reducing first (see [`shrink`]).
    fn smaller(&self) -> Vec<SoakCase> {
        let mut out = vec![];
        for i in 0..self.reboots.len() {
            let mut c = self.clone();
            c.reboots.remove(i);
            out.push(c);
        }
        for i in 0..self.faults.len() {
            let mut c = self.clone();
            c.faults.remove(i);
            out.push(c);
        }
        if let Some(m) = &self.multi_nic {
            for i in 0..m.events.len() {
                let mut c = self.clone();
                if let Some(cm) = c.multi_nic.as_mut() {
                    cm.events.remove(i);
                }
                out.push(c);
            }
        }
        let top = self.hosts - 1;
        let names_top = self.multi_nic.as_ref().is_some_and(|m| m.host == top)
            || self.reboots.iter().any(|e| e.host == top)
            || self.faults.iter().any(|f| {
                f.src == Some(top)
                    || f.dst == Some(top)
                    || (f.kind == FaultKind::Flap && f.host == top)
            });
        if self.hosts > 2 && !names_top {
            let mut c = self.clone();
            c.hosts -= 1;
            out.push(c);
        }
        for i in 0..self.faults.len() {
            let f = &self.faults[i];
            if f.kind != FaultKind::Flap && f.until - f.from >= 200 {
                let mut c = self.clone();
                c.faults[i].until = f.from + (f.until - f.from) / 2;
                out.push(c);
                let mut c = self.clone();
                c.faults[i].from = f.from + (f.until - f.from) / 2;
                out.push(c);
            }
        }
        if self.max_bytes > 64 {
            let mut c = self.clone();
            c.max_bytes /= 2;
            out.push(c);
        }
        if self.rate > 0.005 {
            let mut c = self.clone();
            c.rate = (self.rate / 2.0).max(0.005);
            out.push(c);
        }
        if self.dereg_rate > 0.0 {
            let mut c = self.clone();
            c.dereg_rate = 0.0;
            out.push(c);
        }
        if let Some(sd) = &self.split {
            let mut c = self.clone();
            c.split = None;
            out.push(c);
            if sd.packets > 10 {
                let mut c = self.clone();
                if let Some(x) = c.split.as_mut() {
                    x.packets /= 2;
                }
                out.push(c);
            }
        }
        out
    }
}

/// The outcome of one case.
pub struct CaseResult {
    pub case: SoakCase,
    pub report: Report,
}

/// Run one case with every scoreboard on.
pub fn run_case(case: &SoakCase) -> Result<CaseResult, String> {
    run_case_planted(case, None)
}

/// Run one case with a bug planted (tests show the soak finds and shrinks it).
pub fn run_case_planted(case: &SoakCase, plant: Option<PlantedBug>) -> Result<CaseResult, String> {
    let opts = RunOptions {
        plant,
        ..Default::default()
    };
    let report = run_scenario(&case.scenario(), opts).map_err(|e| e.to_string())?;
    Ok(CaseResult {
        case: case.clone(),
        report,
    })
}

/// Shrink a failing case: take any smaller variant that still fails the same way (its
/// findings include the kind of the original's first violation), until none does or the
/// budget of runs is spent. Returns the smallest such case and its report.
pub fn shrink(failing: CaseResult, on_try: impl FnMut(usize)) -> Result<CaseResult, String> {
    shrink_with(failing, SHRINK_BUDGET, None, on_try)
}

/// [`shrink`] with a budget of runs and a planted bug kept in every run.
pub fn shrink_with(
    failing: CaseResult,
    budget: usize,
    plant: Option<PlantedBug>,
    mut on_try: impl FnMut(usize),
) -> Result<CaseResult, String> {
    let kind = failing
        .report
        .violations
        .first()
        .map(|v| v.kind.clone())
        .unwrap_or_default();
    let mut best = failing;
    let mut runs = 0;
    'outer: while runs < budget {
        for c in best.case.smaller() {
            if runs >= budget {
                break 'outer;
            }
            runs += 1;
            on_try(runs);
            let r = run_case_planted(&c, plant)?;
            if !r.report.passed && r.report.findings.contains_key(&kind) {
                best = r;
                continue 'outer;
            }
        }
        break;
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_generated_case_is_a_valid_scenario_and_seeds_are_reproducible() {
        for seed in 0..300 {
            let c = SoakCase::generate(seed);
            assert_eq!(c, SoakCase::generate(seed));
            let s = c.scenario();
            assert!((2..=16).contains(&s.hosts));
            assert!(s.cycles > c.last_disturbance());
            for smaller in c.smaller() {
                smaller.scenario();
            }
        }
        let kinds: std::collections::HashSet<_> = (0..100)
            .flat_map(|s| SoakCase::generate(s).faults)
            .map(|f| format!("{:?}", f.kind))
            .collect();
        assert_eq!(kinds.len(), 4, "every fault kind is drawn: {kinds:?}");
        assert!((0..100).any(|s| SoakCase::generate(s).hardware_tpt));
        assert!((0..100).any(|s| SoakCase::generate(s).dereg_rate > 0.0));
    }

    #[test]
    fn multi_nic_cases_are_valid_and_keep_the_plain_case() {
        let drawn = (0..600)
            .filter(|&s| SoakCase::generate(s).multi_nic.is_some())
            .count();
        assert!(
            (60..=140).contains(&drawn),
            "{drawn} of 600 plain cases have two NICs"
        );
        for seed in 0..100 {
            let c = SoakCase::generate_multi_nic(seed);
            let plain = SoakCase::generate_one_nic(seed);
            assert_eq!(
                (c.hosts, &c.reboots, &c.faults),
                (plain.hosts, &plain.reboots, &plain.faults)
            );
            let m = c.multi_nic.as_ref().expect("a two-NIC host");
            let s = c.scenario();
            assert_eq!(s.nics_of(m.host), 2);
            assert_eq!(s.total_nics(), c.hosts + 1);
            assert!(s.cycles > c.last_disturbance());
            for smaller in c.smaller() {
                smaller.scenario();
            }
        }
    }
}

/// What a soak did (`nic soak --json` prints it, `--out FILE` writes it).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct SoakSummary {
    pub first_seed: u64,
    pub cases: u64,
    /// Cases run side by side (`--jobs`).
    #[serde(default)]
    pub jobs: usize,
    /// Every case has a two-NIC host (`--multi-nic`).
    #[serde(default)]
    pub multi_nic: bool,
    pub simulated_cycles: u64,
    pub nic_cycles: u64,
    /// Cases that failed a scoreboard.
    pub failing_cases: u64,
    /// Violations over every failing case (before shrinking).
    pub violations: u64,
    /// Each failure: seed, violation kinds, and the regression file written.
    pub failures: Vec<SoakFailure>,
    pub wall_seconds: f64,
}

/// One failing case of a soak.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SoakFailure {
    pub seed: u64,
    pub kinds: Vec<String>,
    pub first: String,
    pub file: String,
}

impl SoakSummary {
    /// The command that ran this soak.
    pub fn command(&self) -> String {
        format!(
            "nic soak --seed {} --cases {}{}{}",
            self.first_seed,
            self.cases,
            if self.jobs > 1 {
                format!(" --jobs {}", self.jobs)
            } else {
                String::new()
            },
            if self.multi_nic { " --multi-nic" } else { "" }
        )
    }
}

/// Soaks as the Markdown table of docs/measurements.md (`nic measurements`): per soak its
/// command, cases, simulated cycles and NIC-cycles, wall time, and the failing cases with
/// their seeds; then a line with the totals when there are several.
pub fn render_markdown(soaks: &[SoakSummary]) -> String {
    use crate::markdown::{si, thousands};
    use std::fmt::Write as _;
    let mut s = String::from(
        "| command | cases | simulated cycles | NIC-cycles | wall time | failing cases |\n| --- | ---: | ---: | ---: | ---: | --- |\n",
    );
    let failing = |failing: u64, seeds: &[u64]| {
        if failing == 0 {
            "**0**".to_string()
        } else {
            let seeds: Vec<String> = seeds.iter().map(|x| x.to_string()).collect();
            format!("**{failing}**: seed {}", seeds.join(", "))
        }
    };
    for k in soaks {
        let seeds: Vec<u64> = k.failures.iter().map(|f| f.seed).collect();
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {:.0} s | {} |",
            k.command(),
            thousands(k.cases),
            si(k.simulated_cycles as f64),
            si(k.nic_cycles as f64),
            k.wall_seconds,
            failing(k.failing_cases, &seeds)
        );
    }
    if soaks.len() > 1 {
        let sum = |f: fn(&SoakSummary) -> u64| soaks.iter().map(f).sum::<u64>();
        let seeds: Vec<u64> = soaks
            .iter()
            .flat_map(|k| k.failures.iter().map(|f| f.seed))
            .collect();
        let _ = writeln!(
            s,
            "| all {} soaks | {} | {} | {} | {:.0} s | {} |",
            soaks.len(),
            thousands(sum(|k| k.cases)),
            si(sum(|k| k.simulated_cycles) as f64),
            si(sum(|k| k.nic_cycles) as f64),
            soaks.iter().map(|k| k.wall_seconds).sum::<f64>(),
            failing(sum(|k| k.failing_cases), &seeds)
        );
    }
    s
}

#[cfg(test)]
mod summary_tests {
    use super::*;

    #[test]
    fn soaks_render_as_a_table_with_their_failing_seeds_and_totals() {
        let a = SoakSummary {
            first_seed: 11000,
            cases: 1000,
            jobs: 2,
            simulated_cycles: 37_500_000,
            nic_cycles: 281_000_000,
            failing_cases: 1,
            violations: 3,
            failures: vec![SoakFailure {
                seed: 11889,
                kinds: vec!["tpt".into()],
                first: "empty copy".into(),
                file: "scenarios/regressions/soak-11889.toml".into(),
            }],
            wall_seconds: 234.2,
            ..Default::default()
        };
        let b = SoakSummary {
            first_seed: 0,
            cases: 1000,
            jobs: 1,
            multi_nic: true,
            simulated_cycles: 38_100_000,
            nic_cycles: 324_000_000,
            wall_seconds: 646.0,
            ..Default::default()
        };
        let t = render_markdown(&[a, b]);
        assert!(
            t.contains("| `nic soak --seed 11000 --cases 1000 --jobs 2` | 1,000 | 37.5 M | 281 M | 234 s | **1**: seed 11889 |"),
            "{t}"
        );
        assert!(
            t.contains("| `nic soak --seed 0 --cases 1000 --multi-nic` | 1,000 | 38.1 M | 324 M | 646 s | **0** |"),
            "{t}"
        );
        assert!(
            t.contains("| all 2 soaks | 2,000 | 75.6 M | 605 M | 880 s | **1**: seed 11889 |"),
            "{t}"
        );
    }
}
