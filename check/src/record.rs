//! What one `nic check rejoin` run explored, as JSON (`--json`, `--out FILE`);
//! `nic measurements` renders the records as the tables of docs/measurements.md.

use crate::rejoin::{Bug, Start};
use crate::Report;
use serde::{Deserialize, Serialize};

/// One check: its bounds, the search, what it explored, its cost and its verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckRecord {
    /// Nodes (`--nodes`).
    pub nodes: usize,
    /// Power-offs allowed (`--reboots`).
    pub reboots: u8,
    /// Control messages the network may lose (`--losses`).
    pub losses: u8,
    /// Messages a link may hold (`--link-capacity`).
    pub link_capacity: usize,
    /// Every node starts off (`--cold`); else joined.
    pub cold: bool,
    /// Nodes issue RDMA requests (no `--no-rdma`).
    pub rdma_requests: bool,
    /// RDMA requests travel on a path of their own (`--rdma-own-path`).
    pub rdma_own_path: bool,
    /// `--max-depth` (breadth-first search).
    pub max_depth: Option<usize>,
    /// The symmetry reduction was asked for (no `--no-symmetry`).
    pub symmetry_requested: bool,
    /// The planted bug's command-line name.
    pub bug: Option<String>,
    /// Checker threads (`--threads`).
    pub threads: usize,
    /// The search run: depth-first with the symmetry reduction (states are classes up to
    /// renumbering the nodes), depth-first, or breadth-first.
    pub symmetry: bool,
    /// Distinct states (classes with the reduction).
    pub unique_states: usize,
    /// States generated (with repeats).
    pub states: usize,
    /// Longest path explored.
    pub depth: usize,
    /// Wall time of the check, seconds.
    pub seconds: f64,
    /// The process's peak resident memory (`VmHWM`), when the system reports it.
    pub peak_memory_bytes: Option<u64>,
    /// The properties that failed (empty: every property holds within the bounds).
    pub failed: Vec<String>,
}

impl CheckRecord {
    /// The record of `report`, run on `threads` threads, the process peaking at
    /// `peak_memory_bytes`.
    pub fn new(report: &Report, threads: usize, peak_memory_bytes: Option<u64>) -> Self {
        let b = &report.bounds;
        CheckRecord {
            nodes: b.nodes,
            reboots: b.reboots,
            losses: b.losses,
            link_capacity: b.link_capacity,
            cold: b.start == Start::Cold,
            rdma_requests: b.rdma_requests,
            rdma_own_path: b.rdma_own_path,
            max_depth: b.max_depth,
            symmetry_requested: b.symmetry,
            bug: report.bug.map(|bug| {
                Bug::ALL
                    .iter()
                    .find(|(_, x)| *x == bug)
                    .map_or("?", |(name, _)| *name)
                    .to_string()
            }),
            threads,
            symmetry: report.symmetry,
            unique_states: report.unique_states,
            states: report.states,
            depth: report.max_depth,
            seconds: report.seconds,
            peak_memory_bytes,
            failed: report
                .failures
                .iter()
                .map(|f| f.property.to_string())
                .collect(),
        }
    }

    /// The command-line arguments of this check (`--nodes 3 --cold --reboots 1 --losses
    /// 1`): nodes, reboots and losses always, the rest where they differ from the defaults.
    pub fn arguments(&self) -> String {
        let mut a = format!("--nodes {}", self.nodes);
        if self.cold {
            a.push_str(" --cold");
        }
        a.push_str(&format!(
            " --reboots {} --losses {}",
            self.reboots, self.losses
        ));
        if self.link_capacity != 3 {
            a.push_str(&format!(" --link-capacity {}", self.link_capacity));
        }
        if !self.rdma_requests {
            a.push_str(" --no-rdma");
        }
        if self.rdma_own_path {
            a.push_str(" --rdma-own-path");
        }
        if let Some(d) = self.max_depth {
            a.push_str(&format!(" --max-depth {d}"));
        }
        if !self.symmetry_requested {
            a.push_str(" --no-symmetry");
        }
        if let Some(bug) = &self.bug {
            a.push_str(&format!(" --bug {bug}"));
        }
        if self.threads != 1 {
            a.push_str(&format!(" --threads {}", self.threads));
        }
        a
    }

    /// How the check searched.
    pub fn search(&self) -> &'static str {
        if self.symmetry {
            "depth-first, symmetry reduction"
        } else if self.max_depth.is_some() {
            "breadth-first"
        } else {
            "depth-first"
        }
    }
}

/// The peak resident memory of this process so far (`VmHWM` in /proc/self/status), or
/// `None` where the system does not report it.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rejoin::Bounds;

    #[test]
    fn a_check_records_its_arguments_and_round_trips_as_json() {
        let mut bounds = Bounds::small();
        bounds.nodes = 2;
        bounds.start = Start::Cold;
        bounds.rdma_own_path = true;
        let report = crate::check(bounds, None, 1, false).unwrap();
        let r = CheckRecord::new(&report, 1, Some(10_500_000));
        assert_eq!(
            r.arguments(),
            "--nodes 2 --cold --reboots 1 --losses 1 --rdma-own-path"
        );
        assert!(r.symmetry && r.failed.is_empty() && r.unique_states > 1000);
        assert_eq!(r.search(), "depth-first, symmetry reduction");
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<CheckRecord>(&json).unwrap(), r);
        // A time that serde_json's default float parser read back one ulp off.
        let r = CheckRecord {
            seconds: 1.594866727,
            ..r
        };
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<CheckRecord>(&json).unwrap(), r);
    }

    #[test]
    fn a_failing_check_and_a_depth_bound_show_in_the_arguments() {
        let mut bounds = Bounds::small();
        bounds.nodes = 2;
        bounds.reboots = 0;
        bounds.losses = 0;
        bounds.start = Start::Cold;
        let report = crate::check(bounds.clone(), Some(Bug::NoRdmaReady), 1, true).unwrap();
        let r = CheckRecord::new(&report, 1, None);
        assert!(!r.failed.is_empty(), "the planted bug is found");
        assert_eq!(
            r.arguments(),
            "--nodes 2 --cold --reboots 0 --losses 0 --bug no-rdma-ready"
        );
        bounds.max_depth = Some(6);
        let r = CheckRecord::new(&crate::check(bounds, None, 1, false).unwrap(), 1, None);
        assert_eq!(r.search(), "breadth-first");
        assert!(r.depth <= 6, "{r:?}");
        assert_eq!(
            r.arguments(),
            "--nodes 2 --cold --reboots 0 --losses 0 --max-depth 6"
        );
        assert!(peak_memory_bytes().is_some_and(|b| b > 0));
    }
}
