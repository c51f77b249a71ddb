//! `nic bench regcache` in small: both modes move every message byte for byte, and the
//! cache registers less and finishes sooner on a reused working set.

use nic_testbench::regcache_bench::{bench_regcache, run_once, RegcacheBenchOptions};

fn small() -> RegcacheBenchOptions {
    RegcacheBenchOptions {
        hosts: 3,
        messages: 60,
        seeds: vec![5],
        ..Default::default()
    }
}

#[test]
fn the_cache_registers_less_and_every_message_lands() {
    let o = small();
    let report = bench_regcache(&o, |_| {}).expect("the bench runs");
    let (without, with) = (&report.runs[0], &report.runs[1]);
    assert!(!without.cached && with.cached);
    assert_eq!(without.verified, 60);
    assert_eq!(with.verified, 60);
    assert_eq!(without.registrations, 60, "one registration per message");
    assert!(with.registrations < 30, "{with:?}");
    assert!(with.hits > with.misses, "{with:?}");
    assert!(with.cycles < without.cycles, "{with:?} vs {without:?}");
    assert!(with.cells < without.cells, "{with:?} vs {without:?}");
}

#[test]
fn bad_options_are_named() {
    let o = RegcacheBenchOptions {
        working_set: 40,
        ..small()
    };
    let e = run_once(&o, 1, true).unwrap_err();
    assert!(e.contains("working set"), "{e}");
    let o = RegcacheBenchOptions {
        message_bytes: 12,
        ..small()
    };
    assert!(run_once(&o, 1, true).unwrap_err().contains("message bytes"));
}
