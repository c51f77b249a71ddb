//! `nic bench rejoin` at CI size: 2 and 4 hosts, one seed, a coarse hold-down search. The
//! bench's own judgement is checked on what the runs did (memory verdict, rejoin records,
//! control SENDs on the wire), never on a mode's name.

use nic_testbench::rejoin_bench::{
    bench_rejoin, failure, reboot_at, render_text, scenario_text, ModeKind, RejoinBenchOptions,
};
use nic_testbench::scenario::Scenario;
use nic_testbench::scenario_run::{run_scenario, RunOptions};

fn small() -> RejoinBenchOptions {
    RejoinBenchOptions {
        hosts: vec![2, 4],
        seeds: 1,
        search_seeds: 1,
        precision: 0.5,
        capacity: Some(0.73),
        ..Default::default()
    }
}

#[test]
fn the_bench_tunes_both_baselines_and_splits_the_protocols_latency() {
    let b = bench_rejoin(&small(), |_| {}).expect("the bench runs");
    assert_eq!(b.sizes.len(), 2);
    for z in &b.sizes {
        // The period keeps the beats within 1% of a link.
        assert!(z.heartbeat_share <= 0.01 + 1e-9, "{}", z.heartbeat_share);
        let mode = |k| z.modes.iter().find(|m| m.mode == k).expect("mode run");
        let p = mode(ModeKind::Protocol);
        assert_eq!(p.failures, 0, "{:?}", p.runs);
        let run = &p.runs[0];
        assert!(run.latency.is_some());
        assert_eq!((run.stale_writes, run.stale_reads), (0, 0));
        // Requests of the old boot did reach host 1's new one (held in the fabric).
        assert!(
            run.rdma_disabled_nacks + run.stale_requests_delivered > 0,
            "{run:?}"
        );
        for t in &z.tunings {
            let h = t.hold_down.expect("a safe hold-down");
            // The search's answer passed, the largest candidate below it failed.
            assert!(t.candidates.iter().any(|c| c.hold_down == h && c.passed));
            if let Some(lo) = t.largest_failing {
                assert!(t.candidates.iter().any(|c| c.hold_down == lo && !c.passed));
                assert!(lo < h);
            }
            let m = mode(t.mode);
            assert_eq!(m.failures, 0, "{:?}", m.runs);
            assert_eq!(m.hold_down, Some(h));
        }
        // The naive baseline lands stale accesses, by the memory verdict.
        let naive = &mode(ModeKind::Naive).runs[0];
        assert!(naive.stale_writes + naive.stale_reads > 0, "{naive:?}");
        assert!(naive.failure.is_some());
        // The phases add up to the latency, and the link limit is what host 1 sent.
        let ph = run.phases.as_ref().expect("phases");
        assert_eq!(
            ph.to_first_booting
                + ph.booting_fanout
                + ph.waiting_for_answers
                + ph.rdma_ready_fanout
                + ph.to_usable,
            run.latency.unwrap()
        );
        assert!(ph.booting_words >= (z.hosts as u64 - 1) * 7, "{ph:?}");
        assert!(ph.rdma_ready_words >= (z.hosts as u64 - 1) * 7, "{ph:?}");
        assert!(ph.latency_over_limit > 1.0);
        assert!(z.ratio.is_some() && z.best_baseline.is_some());
    }
    let text = render_text(&b);
    assert!(text.contains("best safe baseline / protocol"), "{text}");
    assert!(text.contains("RDMA_DISABLED answers"), "{text}");
}

/// A run in which a live host never becomes usable by all peers fails, whatever else it
/// did (the 64-host baseline runs that "passed" while a host never rejoined).
#[test]
fn a_host_never_usable_fails_the_run() {
    let o = small();
    let text = scenario_text(2, 11, ModeKind::Heartbeat, 0, &o);
    let s = Scenario::parse(&text, "never-usable").unwrap();
    let mut r = run_scenario(
        &s,
        RunOptions {
            protocol: Some(nic_testbench::scenario::ProtocolKind::Heartbeat),
            cold_start_hold_down: Some(0),
            ..Default::default()
        },
    )
    .unwrap();
    // However the run went, a record left unfinished is a failure that names the host.
    r.memory.stale_writes = 0;
    r.memory.stale_reads = 0;
    let last = r.rejoins.iter_mut().rev().find(|x| x.host == 1).unwrap();
    last.usable = None;
    last.latency = None;
    last.interrupted = false;
    let f = failure(&r, reboot_at(2)).expect("a failure");
    assert!(
        f.contains("host 1") && f.contains("never became usable"),
        "{f}"
    );
}

#[test]
fn bad_options_are_refused_with_a_message() {
    let bad = |f: fn(&mut RejoinBenchOptions)| {
        let mut o = small();
        f(&mut o);
        o.check().expect_err("refused")
    };
    assert!(bad(|o| o.hosts = vec![1]).contains("hosts"));
    assert!(bad(|o| o.seeds = 0).contains("seeds"));
    assert!(bad(|o| o.budget = 0.0).contains("budget"));
    assert!(bad(|o| o.timeout_periods = 1).contains("timeout"));
    assert!(bad(|o| o.precision = 1.0).contains("precision"));
    assert!(bad(|o| {
        o.protocol_only = true;
        o.reference = true;
    })
    .contains("reference"));
}

/// `--protocol-only`: the protocol's runs, with their phases against the link limit, and
/// no baseline run at all (no search, no tuned or naive mode, no ratio).
#[test]
fn protocol_only_runs_the_protocol_alone() {
    let o = RejoinBenchOptions {
        hosts: vec![4],
        protocol_only: true,
        ..small()
    };
    let b = bench_rejoin(&o, |_| {}).expect("the bench runs");
    let z = &b.sizes[0];
    let modes: Vec<ModeKind> = z.modes.iter().map(|m| m.mode).collect();
    assert_eq!(modes, [ModeKind::Protocol]);
    assert!(z.tunings.is_empty() && z.ratio.is_none() && z.best_baseline.is_none());
    let run = &z.modes[0].runs[0];
    assert_eq!((run.stale_writes, run.stale_reads), (0, 0));
    let ph = run.phases.as_ref().expect("phases");
    assert!(ph.latency_over_limit >= 1.0, "{ph:?}");
    assert!(z.latency_over_limit.is_some());
    render_text(&b);
}
