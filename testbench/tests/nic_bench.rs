//! `nic bench nic`'s goodput run per message size, in small.

use nic_testbench::nic_bench::{goodput, NicBenchOptions};

#[test]
fn goodput_per_size_carries_every_byte_within_the_format_limit() {
    let o = NicBenchOptions {
        goodput_messages: 3,
        ..Default::default()
    };
    let mut last_ratio = 0.0;
    for bytes in [8, 256, 4096] {
        let g = goodput(&o, bytes).unwrap();
        assert_eq!((g.message_bytes, g.messages), (bytes, 3));
        assert_eq!(g.bytes, 3 * bytes as u64);
        // The link moves at most one word per cycle, cell headers and CRCs included.
        assert!(g.cycles * 8 >= g.bytes, "{g:?}");
        assert!(g.ratio > 0.0 && g.ratio <= 1.0 + 1e-9, "{g:?}");
        // Larger messages amortise the per-message cost.
        assert!(g.ratio > last_ratio, "{g:?} after {last_ratio}");
        last_ratio = g.ratio;
    }
}

#[test]
fn a_message_size_out_of_range_is_an_error() {
    let o = NicBenchOptions::default();
    for bytes in [0, 65537] {
        let e = goodput(&o, bytes).unwrap_err();
        assert_eq!(
            e,
            format!("message size must be 1..=65536 bytes, got {bytes}")
        );
    }
}

/// By default the whole recording is replayed on RustHDL and compared every cycle;
/// `--rusthdl-cycles N` replays only its first N cycles.
#[test]
fn the_whole_recording_is_replayed_on_both_backends_unless_a_prefix_is_asked_for() {
    let o = NicBenchOptions {
        cycles: 3_000,
        goodput_messages: 2,
        min_seconds: 0.0,
        ..Default::default()
    };
    let b = nic_testbench::nic_bench::bench_nic(&o).unwrap_or_else(|e| panic!("{e}"));
    assert!(b.recorded_cycles >= 3_000, "{b:?}");
    assert_eq!(b.rusthdl_replayed_cycles, b.recorded_cycles);
    assert!(b.speedup > 1.0, "{b:?}");
    let prefix = NicBenchOptions {
        rusthdl_cycles: Some(500),
        ..o
    };
    let b = nic_testbench::nic_bench::bench_nic(&prefix).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.rusthdl_replayed_cycles, 500, "{b:?}");
}
