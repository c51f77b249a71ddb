//! `QpFlags` against its plain-Rust model (`nic_model::qp_flags`, written from the block's
//! documentation): seeded random CSR controls, engine updates and expect events, with idle
//! clocks between them and the queue pairs drawn from a few (so that a clear and a set of
//! the same flag meet), queue pairs beyond `queue_pairs` included; every output compared
//! every clock, and resets in between.

use nic_model::qp_flags::{Flags, QpFlagsInputs, QpFlagsModel, QpFlagsOutputs};
use nic_rtl::responder::QpFlags;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn outputs(u: &QpFlags) -> QpFlagsOutputs {
    QpFlagsOutputs {
        ctx: Flags {
            enabled: u.ctx_enabled.val(),
            synced: u.ctx_synced.val(),
            nak_sent: u.ctx_nak_sent.val(),
            refused: u.ctx_refused.val(),
            rs_valid: u.ctx_rs_valid.val(),
            atomic_valid: u.ctx_atomic_valid.val(),
            expect_valid: u.ctx_expect_valid.val(),
        },
        status_synced: u.status_synced.val(),
    }
}

fn apply(u: &mut QpFlags, i: &QpFlagsInputs) {
    u.reset.next = i.reset;
    u.csr_qp.next = (i.csr_qp as u64).to_bits();
    u.ctrl_write.next = i.ctrl_write;
    u.ctrl_enable.next = i.ctrl_enable;
    u.qp_reset.next = i.qp_reset;
    u.qp_resume.next = i.qp_resume;
    u.ctx_qp.next = (i.ctx_qp as u64).to_bits();
    u.synced_set.next = i.synced_set;
    u.nak_set.next = i.nak_set;
    u.nak_clear.next = i.nak_clear;
    u.refused_set.next = i.refused_set;
    u.rs_set.next = i.rs_set;
    u.rs_clear.next = i.rs_clear;
    u.atomic_set.next = i.atomic_set;
    u.expect_clear.next = i.expect_clear;
    u.expect_qp.next = (i.expect_qp as u64).to_bits();
    u.expect_set.next = i.expect_set;
    u.status_qp.next = (i.status_qp as u64).to_bits();
}

/// One clock's inputs: idle with probability `p_idle`; queue pairs from `0..pool` mostly,
/// any of the 64 sometimes.
fn random_inputs(rng: &mut ChaCha8Rng, pool: u8, p_idle: f64) -> QpFlagsInputs {
    let qp = |rng: &mut ChaCha8Rng| -> u8 {
        if rng.gen_bool(0.9) {
            rng.gen_range(0..pool)
        } else {
            rng.gen_range(0..64)
        }
    };
    let (ctx_qp, csr_qp, expect_qp, status_qp) = (qp(rng), qp(rng), qp(rng), qp(rng));
    if rng.gen_bool(p_idle) {
        return QpFlagsInputs {
            ctx_qp,
            csr_qp,
            expect_qp,
            status_qp,
            ..Default::default()
        };
    }
    let ctrl_write = rng.gen_bool(0.3);
    QpFlagsInputs {
        reset: rng.gen_bool(0.002),
        csr_qp,
        ctrl_write,
        ctrl_enable: rng.gen_bool(0.7),
        qp_reset: ctrl_write && rng.gen_bool(0.2),
        qp_resume: ctrl_write && rng.gen_bool(0.2),
        ctx_qp,
        synced_set: rng.gen_bool(0.2),
        nak_set: rng.gen_bool(0.2),
        nak_clear: rng.gen_bool(0.2),
        refused_set: rng.gen_bool(0.2),
        rs_set: rng.gen_bool(0.2),
        rs_clear: rng.gen_bool(0.2),
        atomic_set: rng.gen_bool(0.2),
        expect_clear: rng.gen_bool(0.2),
        expect_qp,
        expect_set: rng.gen_bool(0.3),
        status_qp,
    }
}

/// Runs `clocks` clocks; returns how often each of the seven `ctx` flags was seen set.
fn run(seed: u64, queue_pairs: usize, pool: u8, clocks: u64, p_idle: f64) -> [u32; 7] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = QpFlags::new(queue_pairs);
    uut.connect_all();
    let mut model = QpFlagsModel::new(queue_pairs);
    let mut seen = [0; 7];
    // Power-on: a reset clock first (the block's flags start at zero too).
    let reset = QpFlagsInputs {
        reset: true,
        ..Default::default()
    };
    apply(&mut uut, &reset);
    settle(&mut uut);
    model.edge(&reset);
    tick(&mut uut);
    for clock in 0..clocks {
        let i = random_inputs(&mut rng, pool, p_idle);
        apply(&mut uut, &i);
        settle(&mut uut);
        let got = outputs(&uut);
        assert_eq!(got, model.outputs(&i), "seed {seed}, clock {clock}: {i:?}");
        let f = got.ctx;
        for (k, b) in [
            f.enabled,
            f.synced,
            f.nak_sent,
            f.refused,
            f.rs_valid,
            f.atomic_valid,
            f.expect_valid,
        ]
        .into_iter()
        .enumerate()
        {
            seen[k] += b as u32;
        }
        model.edge(&i);
        tick(&mut uut);
    }
    seen
}

#[test]
fn matches_model_with_idle_gaps() {
    for (seed, queue_pairs, pool, p_idle) in [
        (1, 4, 6, 0.2),
        (2, 64, 4, 0.5),
        (3, 1, 2, 0.1),
        (4, 17, 20, 0.3),
    ] {
        let seen = run(seed, queue_pairs, pool, 5_000, p_idle);
        assert!(
            seen.iter().all(|&n| n > 20),
            "seed {seed}: a flag is rarely set {seen:?}"
        );
    }
}

#[test]
fn synthesises() {
    let mut uut = QpFlags::new(4);
    uut.connect_all();
    yosys_validate("nic_rtl_responder_qp_flags", &generate_verilog(&uut))
        .expect("yosys accepts QpFlags");
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64")]
fn rejects_zero_queue_pairs() {
    QpFlags::new(0);
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64")]
fn rejects_too_many_queue_pairs() {
    QpFlags::new(65);
}
