//! `QpRam` against a plain array of `queue_pairs` rounded up to a power of two words (its
//! documentation: synchronous read of the old word, write at the edge, the address taken
//! modulo the depth, zero at start): seeded random reads and writes with idle clocks,
//! addresses over all 64 queue-pair numbers.

use nic_rtl::common::QpRam;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn run(queue_pairs: usize, seed: u64, clocks: usize) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut: QpRam<Bits<40>> = QpRam::new(queue_pairs);
    uut.connect_all();
    let depth = queue_pairs.next_power_of_two();
    assert_eq!(uut.depth(), depth);
    let mut words = vec![0u64; depth];
    let mut read: Option<u64> = None;
    let mut nonzero_reads = 0;
    for clock in 0..clocks {
        let write = rng.gen_bool(0.4);
        let (wa, ra) = (rng.gen_range(0..64u64), rng.gen_range(0..64u64));
        let wd = rng.gen::<u64>() & ((1 << 40) - 1);
        uut.write_enable.next = write;
        uut.write_address.next = wa.to_bits();
        uut.write_data.next = wd.to_bits();
        uut.read_address.next = ra.to_bits();
        settle(&mut uut);
        if let Some(want) = read {
            assert_eq!(
                uut.read_data.val().to_u64(),
                want,
                "queue_pairs {queue_pairs}, seed {seed}, clock {clock}"
            );
            nonzero_reads += (want != 0) as usize;
        }
        // The edge: the read takes the old word, then the write lands.
        read = Some(words[ra as usize % depth]);
        if write {
            words[wa as usize % depth] = wd;
        }
        tick(&mut uut);
    }
    nonzero_reads
}

#[test]
fn matches_an_array_of_its_depth() {
    for (queue_pairs, seed) in [(1, 1), (3, 2), (4, 3), (17, 4), (64, 5)] {
        let n = run(queue_pairs, seed, 4_000);
        assert!(
            n > 1_000,
            "queue_pairs {queue_pairs}: few written words read ({n})"
        );
    }
}

#[test]
fn synthesises_at_every_depth() {
    for queue_pairs in [1, 2, 4, 5, 64] {
        let mut uut: QpRam<Bits<40>> = QpRam::new(queue_pairs);
        uut.connect_all();
        yosys_validate(
            &format!("nic_rtl_common_qp_ram_{queue_pairs}"),
            &generate_verilog(&uut),
        )
        .expect("yosys accepts QpRam");
    }
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64")]
fn rejects_zero_queue_pairs() {
    let _: QpRam<Bits<8>> = QpRam::new(0);
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64")]
fn rejects_too_many_queue_pairs() {
    let _: QpRam<Bits<8>> = QpRam::new(65);
}
