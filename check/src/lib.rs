//! Model checking of the driver's protocols with [`stateright`].
//!
//! [`rejoin`] checks the rejoin protocol of source document 000 on the driver's own
//! [`nic_driver::rejoin::RejoinMachine`] (not a re-implementation): every interleaving of a
//! few nodes with FIFO links, message loss and reboots, within bounds. [`check`] runs one
//! check and reports what it explored; `nic check rejoin` prints it. Without a depth bound
//! it searches depth-first and explores one state per class of states that differ only in
//! the nodes' numbers (symmetry reduction, [`rejoin::Cluster::canonical`]); with a depth
//! bound, breadth-first and without the reduction.
//! [`record`] keeps what a run explored as JSON and renders the runs as the tables of
//! docs/measurements.md. docs/rejoin-model-check.md says what is checked, the abstraction and the measured
//! state counts.

#![warn(missing_docs)]

pub mod record;
pub mod rejoin;

use std::time::{Duration, Instant};

use rejoin::{Bounds, Bug, Cluster, RejoinModel, Step};
use stateright::{Checker, HasDiscoveries, Model, Representative};

/// A property that failed, with the path that shows it.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The property's name.
    pub property: &'static str,
    /// The steps from the initial state (all nodes off) to the failing state.
    pub steps: Vec<Step>,
    /// The failing state.
    pub state: Cluster,
    /// For the liveness property: the fault-free continuation that did not converge.
    pub continuation: Option<Vec<Step>>,
}

/// What one check explored and found.
#[derive(Clone, Debug)]
pub struct Report {
    /// The bounds checked.
    pub bounds: Bounds,
    /// The planted bug, if any.
    pub bug: Option<Bug>,
    /// Distinct states explored.
    pub unique_states: usize,
    /// States generated (with repeats).
    pub states: usize,
    /// Longest path explored, in steps (depth-first: not the shortest path to a state).
    pub max_depth: usize,
    /// The check merged states that differ only in the nodes' numbers
    /// ([`Bounds::symmetry`], and no depth bound).
    pub symmetry: bool,
    /// Wall time of the check, seconds.
    pub seconds: f64,
    /// The properties that failed (empty: all hold within the bounds).
    pub failures: Vec<Failure>,
}

/// Checks the rejoin model within `bounds` (with `bug` planted, if given) on `threads`
/// threads; with `stop_at_first` the check ends at the first failure.
pub fn check(
    bounds: Bounds,
    bug: Option<Bug>,
    threads: usize,
    stop_at_first: bool,
) -> Result<Report, String> {
    check_reporting(bounds, bug, threads, stop_at_first, None, &mut |_| {})
}

/// How far a running check is.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Distinct states so far.
    pub unique_states: usize,
    /// States generated so far.
    pub states: usize,
    /// Longest path so far.
    pub max_depth: usize,
    /// Seconds since the start.
    pub seconds: f64,
}

/// [`check`], calling `progress` every `every` while it runs (never with `None`).
pub fn check_reporting(
    bounds: Bounds,
    bug: Option<Bug>,
    threads: usize,
    stop_at_first: bool,
    every: Option<Duration>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, String> {
    if threads == 0 {
        return Err("threads must be at least 1".into());
    }
    let model = RejoinModel::new(bounds.clone(), bug)?;
    let start = Instant::now();
    let mut builder = model.checker().threads(threads);
    if stop_at_first {
        builder = builder.finish_when(HasDiscoveries::AnyFailures);
    }
    // A depth bound needs breadth-first search (depth-first search with a visited set
    // misses states first met on a long path and then again on a short one); stateright's
    // breadth-first search ignores symmetry. Without a bound, depth-first search keeps only
    // the current path and its siblings, not a whole frontier.
    let symmetry = bounds.symmetry && bounds.max_depth.is_none();
    let mut checker: Box<dyn Checker<RejoinModel>> = match bounds.max_depth {
        Some(depth) => Box::new(builder.target_max_depth(depth).spawn_bfs()),
        None if symmetry => Box::new(
            builder
                .symmetry_fn(Representative::representative)
                .spawn_dfs(),
        ),
        None => Box::new(builder.spawn_dfs()),
    };
    let handles = checker.handles();
    if let Some(every) = every {
        let mut last = Instant::now();
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(100).min(every));
            if last.elapsed() >= every {
                last = Instant::now();
                progress(Progress {
                    unique_states: checker.unique_state_count(),
                    states: checker.state_count(),
                    max_depth: checker.max_depth(),
                    seconds: start.elapsed().as_secs_f64(),
                });
            }
        }
    }
    for h in handles {
        h.join()
            .map_err(|_| "a checker thread panicked".to_string())?;
    }
    let seconds = start.elapsed().as_secs_f64();
    let model = checker.model();
    let mut failures = Vec::new();
    for property in model.properties() {
        if let Some(path) = checker.discovery(property.name) {
            let state = path.last_state().clone();
            let continuation =
                (property.name == rejoin::CONVERGES).then(|| model.continuation(&state).0);
            failures.push(Failure {
                property: property.name,
                steps: path.into_actions(),
                state,
                continuation,
            });
        }
    }
    Ok(Report {
        bounds,
        bug,
        unique_states: checker.unique_state_count(),
        states: checker.state_count(),
        max_depth: checker.max_depth(),
        symmetry,
        seconds,
        failures,
    })
}
