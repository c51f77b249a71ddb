//! `SqCsrAccess` against `nic_model::sq_csr_access` (written from `docs/csr-map.md` and
//! `nic_abi::csr`): seeded random entries, queue pairs (some beyond `queue_pairs`),
//! registers (all sixteen indices) and write data (resets with start PSNs near the wrap).

use nic_abi::csr;
use nic_model::sq_csr_access::{read, write, SqEntry, Written};
use nic_rtl::requester::{QpEntry, SqCsrAccess};
use nic_rtl::sim::settle;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn random_entry(rng: &mut ChaCha8Rng) -> SqEntry {
    SqEntry {
        base: rng.gen(),
        remote: rng.gen(),
        sq_pi: rng.gen_range(0..1 << 24),
        size_log2: rng.gen_range(0..32),
        sq_next: rng.gen_range(0..1 << 24),
        enable: rng.gen(),
        resync: rng.gen(),
        waiting: rng.gen(),
        draining: rng.gen(),
        retry: rng.gen_range(0..16),
        sq_una: rng.gen_range(0..1 << 24),
        una_needs_response: rng.gen(),
        timer_start: rng.gen(),
    }
}

/// Returns how many writes reset a queue pair and how many reads answered non-zero.
fn run(seed: u64, queue_pairs: usize, accesses: usize) -> (usize, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut u = SqCsrAccess::new(queue_pairs);
    u.connect_all();
    let (mut resets, mut answers) = (0, 0);
    for i in 0..accesses {
        let e = random_entry(&mut rng);
        let qp = if rng.gen_bool(0.8) {
            rng.gen_range(0..queue_pairs)
        } else {
            rng.gen_range(0..64)
        };
        let reg = if rng.gen_bool(0.6) {
            [
                csr::QP_SQ_BASE,
                csr::QP_SQ_SIZE_LOG2,
                csr::QP_SQ_PI,
                csr::QP_CTRL,
            ][rng.gen_range(0..4)]
        } else {
            rng.gen_range(0..16u16) * 8
        };
        let data: u32 = if reg == csr::QP_CTRL && rng.gen_bool(0.5) {
            let start: u32 = if rng.gen() {
                0xFF_FFFF - rng.gen_range(0..3)
            } else {
                rng.gen_range(0..1 << 24)
            };
            start << 8 | rng.gen_range(0..8)
        } else {
            rng.gen()
        };
        let now: u32 = rng.gen();
        u.s_qp_valid.next = qp < queue_pairs;
        u.s_reg.next = ((reg / 8) as u64).to_bits();
        u.s_wdata.next = (data as u64).to_bits();
        u.s_entry.next = QpEntry::from(&e);
        u.s_now.next = (now as u64).to_bits();
        settle(&mut u);
        let want_read = read(&e, qp, queue_pairs, reg);
        let want: Written = write(&e, qp, queue_pairs, reg, data, now);
        let at = format!("access {i}: QP {qp}, register {reg:#x}, data {data:#x}, entry {e:?}");
        assert_eq!(u.m_qp_valid.val(), qp < queue_pairs, "{at}");
        assert_eq!(u.m_rdata.val().to_u64(), want_read, "{at}");
        assert_eq!(u.m_entry.val(), QpEntry::from(&want.entry), "{at}");
        assert_eq!(
            (u.m_qp_reset.val(), u.m_moved.val()),
            (want.qp_reset, want.moved),
            "{at}"
        );
        resets += want.qp_reset as usize;
        answers += (want_read != 0) as usize;
    }
    (resets, answers)
}

#[test]
fn synthesises() {
    let mut uut = SqCsrAccess::new(4);
    uut.connect_all();
    yosys_validate("nic_rtl_requester_sq_csr_access", &generate_verilog(&uut))
        .expect("yosys accepts SqCsrAccess");
}

/// Seeded random accesses on 1, 4 and 64 queue pairs, one per clock (the block is
/// combinational: each is settled and judged before the next is driven).
#[test]
fn matches_model_on_seeded_random_accesses() {
    for (seed, qps) in [(1, 4), (2, 1), (3, 64)] {
        let (resets, answers) = run(seed, qps, 20_000);
        eprintln!("{qps} queue pairs: {resets} resets, {answers} non-zero reads");
        assert!(resets > 500 && answers > 5000);
    }
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64, got 0")]
fn rejects_zero_queue_pairs() {
    SqCsrAccess::new(0);
}
