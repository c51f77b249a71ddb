//! The seed-system benches in small. `nic bench regcache`: both modes move every message
//! byte for byte, and the cache registers less and finishes sooner on a reused working set.
//! `nic bench pools`: both modes move every packet.

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

/// `nic bench pools` in small: both modes move every packet, the immediate carries the
/// indication when it fits and a BufferRDMAIndicate does when it does not.
#[test]
fn the_pools_bench_moves_every_packet_in_both_modes() {
    use nic_testbench::pools_bench::{bench_pools, PoolsBenchOptions};
    let rows = bench_pools(&PoolsBenchOptions {
        packet_bytes: vec![256, 65536],
        packets: 12,
        seeds: vec![1],
    })
    .expect("the bench runs");
    let modes: Vec<(String, u32)> = rows
        .iter()
        .map(|r| (r.mode.clone(), r.packet_bytes))
        .collect();
    assert_eq!(
        modes,
        [
            ("pools".into(), 256),
            ("send".into(), 256),
            ("pools".into(), 65536)
        ]
    );
    assert_eq!((rows[0].by_idata, rows[0].by_message), (24, 0));
    assert_eq!((rows[2].by_idata, rows[2].by_message), (0, 24));
    assert!(rows.iter().all(|r| r.goodput.min > 0.0), "{rows:?}");
}
