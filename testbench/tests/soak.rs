//! `nic soak` in the default suite: a slice of the random schedules passes every
//! scoreboard, and a planted bug is found and shrunk to a smaller schedule that still
//! fails and reads back as a scenario file.

use nic_testbench::scenario::Scenario;
use nic_testbench::scenario_run::PlantedBug;
use nic_testbench::soak::{run_case, run_case_planted, shrink_with, SoakCase};

/// Seeds `0..SLICE` (the full soak is `nic soak --cases 10000`; docs/scenarios.md).
const SLICE: u64 = 20;

#[test]
fn a_slice_of_the_soak_passes_every_scoreboard() {
    let mut failing = vec![];
    let mut cycles = 0;
    for seed in 0..SLICE {
        let r = run_case(&SoakCase::generate(seed))
            .expect("the case runs (Verilator: scripts/setup.sh)");
        cycles += r.report.cycles;
        if !r.report.passed {
            failing.push(format!(
                "seed {seed} (`nic soak --seed {seed} --cases 1` shrinks it): {}",
                r.report
                    .violations
                    .first()
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            ));
        }
    }
    assert!(failing.is_empty(), "{}", failing.join("\n"));
    assert!(cycles > SLICE * 20_000);
}

/// With RDMA forced on at boot, a case with reboots and traffic lands stale requests; the
/// shrinker keeps it failing with the same kind while it drops what does not matter.
#[test]
fn a_planted_bug_is_found_and_shrunk_to_a_scenario_file() {
    let plant = Some(PlantedBug::RdmaEnabledAtBoot);
    // The first seed whose case fails with the bug planted.
    let (case, report) = (0..200)
        .map(SoakCase::generate)
        .filter(|c| !c.reboots.is_empty() && !c.faults.is_empty() && c.rate >= 0.02)
        .find_map(|c| {
            let r = run_case_planted(&c, plant).expect("the case runs");
            (!r.report.passed).then_some((c, r))
        })
        .expect("a case that fails with RDMA forced on");
    let kind = report.report.violations[0].kind.clone();
    let size = |c: &SoakCase| c.reboots.len() + c.faults.len();
    let shrunk = shrink_with(report, 30, plant, |_| {}).expect("the shrink runs");
    assert!(!shrunk.report.passed);
    assert!(
        shrunk.report.findings.contains_key(&kind),
        "{:?}",
        shrunk.report.findings
    );
    assert!(
        size(&shrunk.case) < size(&case) || shrunk.case.hosts < case.hosts,
        "shrunk from {case:?} to {:?}",
        shrunk.case
    );
    let text = shrunk.case.to_toml("shrunk", "a planted bug");
    let s = Scenario::parse(&text, "shrunk.toml").expect("the file reads back");
    assert_eq!(s.hosts, shrunk.case.hosts);
    assert_eq!(s.faults.len(), shrunk.case.faults.len());
}
