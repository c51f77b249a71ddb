//! `LookupCapture` against its plain-Rust model (`nic_model::lookup_capture`, written from
//! the block's documentation): seeded random lookups captured with idle gaps between them,
//! the cell changing after the capture (the comparisons are the captured cell's), values
//! weighted toward the
//! interesting cases (PSNs near each other and across the 24-bit wrap, matching sources,
//! the expected response's PSN and kind); every output compared every clock.

use nic_model::lookup_capture::{LookupCaptureInputs, LookupCaptureModel, LookupCaptureOutputs};
use nic_rtl::responder::LookupCapture;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn outputs(u: &LookupCapture) -> LookupCaptureOutputs {
    LookupCaptureOutputs {
        node_ok: u.node_ok.val(),
        qp_exists: u.qp_exists.val(),
        qp_enabled: u.qp_enabled.val(),
        synced: u.synced.val(),
        nak_sent: u.nak_sent.val(),
        rq_empty: u.rq_empty.val(),
        rq_ci: u.rq_ci.val().to_u32(),
        rqe_addr: u.rqe_addr.val().to_u32(),
        behind: u.behind.val().to_u32(),
        behind_rs: u.behind_rs.val(),
        source_match: u.source_match.val(),
        qp_ok: u.qp_ok.val(),
        atomic_match: u.atomic_match.val(),
        expect_match: u.expect_match.val(),
    }
}

fn apply(u: &mut LookupCapture, i: &LookupCaptureInputs) {
    u.capture.next = i.capture;
    u.s_outcome.next.dest_node = (i.dest_node as u64).to_bits();
    u.s_outcome.next.dest_qp = (i.dest_qp as u64).to_bits();
    u.s_outcome.next.src_node = (i.src_node as u64).to_bits();
    u.s_outcome.next.src_qp = (i.src_qp as u64).to_bits();
    u.s_outcome.next.psn = (i.psn as u64).to_bits();
    u.s_outcome.next.opcode = (i.opcode as u64).to_bits();
    u.node_id.next = (i.node_id as u64).to_bits();
    u.s_lookup.next.expected = (i.rd_expected as u64).to_bits();
    u.s_lookup.next.rq_ci = (i.rd_rq_ci as u64).to_bits();
    u.s_lookup.next.rs_psn = (i.rd_rs_psn as u64).to_bits();
    u.s_lookup.next.atomic_psn = (i.rd_atomic_psn as u64).to_bits();
    u.s_lookup.next.expect_psn = (i.rd_expect_psn as u64).to_bits();
    u.s_lookup.next.rq_empty = i.rd_rq_empty;
    u.s_lookup.next.rqe_addr = i.rd_rqe_addr.to_bits();
    u.s_lookup.next.remote = i.rd_remote.to_bits();
    u.s_lookup.next.expect_atomic = i.rd_expect_atomic;
    u.s_lookup.next.expect_addr = (i.rd_expect_addr_low as u64).to_bits();
    u.s_lookup.next.enabled = i.ctx_enabled;
    u.s_lookup.next.synced = i.ctx_synced;
    u.s_lookup.next.nak_sent = i.ctx_nak_sent;
    u.s_lookup.next.atomic_valid = i.ctx_atomic_valid;
    u.s_lookup.next.expect_valid = i.ctx_expect_valid;
}

/// A cell and a table answer; `near` is the PSN the cell's is drawn around.
fn random_inputs(rng: &mut ChaCha8Rng, queue_pairs: usize, p_capture: f64) -> LookupCaptureInputs {
    let psn24 = |rng: &mut ChaCha8Rng| -> u32 {
        if rng.gen_bool(0.2) {
            rng.gen_range(0..16u32).wrapping_sub(8) & 0xFF_FFFF
        } else {
            rng.gen_range(0..1 << 24)
        }
    };
    let near = |rng: &mut ChaCha8Rng, p: u32| -> u32 {
        p.wrapping_add(rng.gen_range(0..20)).wrapping_sub(10) & 0xFF_FFFF
    };
    let psn = psn24(rng);
    let (src_node, src_qp) = (rng.gen_range(0..4u16), rng.gen_range(0..4u16));
    let remote = if rng.gen_bool(0.6) {
        src_node as u32 | (src_qp as u32) << 16
    } else {
        rng.gen_range(0..4u32) | rng.gen_range(0..4u32) << 16
    };
    let node_id = rng.gen_range(0..3u16);
    LookupCaptureInputs {
        capture: rng.gen_bool(p_capture),
        dest_node: rng.gen_range(0..3u16),
        dest_qp: rng.gen_range(0..(queue_pairs as u16 + 3).min(70)),
        src_node,
        src_qp,
        psn,
        opcode: *[0x00u8, 0x10, 0x12, 0x13, 0x20, 0x21, 0x30, 0x31]
            .get(rng.gen_range(0..8))
            .unwrap(),
        node_id,
        rd_expected: if rng.gen_bool(0.7) {
            near(rng, psn)
        } else {
            psn24(rng)
        },
        rd_rq_ci: rng.gen_range(0..1 << 24),
        rd_rs_psn: if rng.gen_bool(0.7) {
            near(rng, psn)
        } else {
            psn24(rng)
        },
        rd_atomic_psn: if rng.gen_bool(0.5) {
            psn
        } else {
            near(rng, psn)
        },
        rd_expect_psn: if rng.gen_bool(0.5) {
            psn
        } else {
            near(rng, psn)
        },
        rd_rq_empty: rng.gen(),
        rd_rqe_addr: rng.gen(),
        rd_remote: remote,
        rd_expect_atomic: rng.gen(),
        rd_expect_addr_low: if rng.gen_bool(0.7) {
            0
        } else {
            rng.gen_range(0..8)
        },
        ctx_enabled: rng.gen_bool(0.8),
        ctx_synced: rng.gen_bool(0.7),
        ctx_nak_sent: rng.gen_bool(0.3),
        ctx_atomic_valid: rng.gen_bool(0.6),
        ctx_expect_valid: rng.gen_bool(0.6),
    }
}

/// Runs `clocks` clocks; returns how many comparisons found each of `qp_ok`,
/// `atomic_match`, `expect_match` and `behind_rs` set, and `behind_rs` clear (so that the
/// run is known to reach them).
fn run(seed: u64, queue_pairs: usize, clocks: u64, p_capture: f64) -> [u32; 5] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = LookupCapture::new(queue_pairs);
    uut.connect_all();
    let mut model = LookupCaptureModel::new(queue_pairs);
    let mut hits = [0; 5];
    // A cell is held for a few clocks (as from the lookup to the decision); the table's
    // answer changes every clock.
    let mut i = random_inputs(&mut rng, queue_pairs, p_capture);
    for clock in 0..clocks {
        let next = random_inputs(&mut rng, queue_pairs, p_capture);
        let cell = i;
        i = next;
        if rng.gen_bool(0.7) {
            i.dest_node = cell.dest_node;
            i.dest_qp = cell.dest_qp;
            i.src_node = cell.src_node;
            i.src_qp = cell.src_qp;
            i.psn = cell.psn;
            i.opcode = cell.opcode;
            i.node_id = cell.node_id;
        }
        apply(&mut uut, &i);
        settle(&mut uut);
        let got = outputs(&uut);
        let want = model.outputs(&i);
        assert_eq!(got, want, "seed {seed}, clock {clock}: {i:?}");
        hits[0] += got.qp_ok as u32;
        hits[1] += got.atomic_match as u32;
        hits[2] += got.expect_match as u32;
        hits[3] += got.behind_rs as u32;
        hits[4] += !got.behind_rs as u32;
        model.clock(&i);
        tick(&mut uut);
    }
    hits
}

#[test]
fn matches_model_with_idle_gaps() {
    for (seed, queue_pairs, p_capture) in [(1, 4, 1.0), (2, 64, 0.3), (3, 1, 0.1), (4, 17, 0.6)] {
        let hits = run(seed, queue_pairs, 6_000, p_capture);
        assert!(
            hits.iter().all(|&h| h > 10),
            "seed {seed}: comparisons rarely true {hits:?}"
        );
    }
}

/// `behind_rs` as `LookupCapture` computes it, at `bits` bits: from three unsigned
/// comparisons side by side (`wa`: `expected - psn` wraps, `wb`: `expected - rs_psn` wraps).
fn behind_rs_by_compares(expected: u32, psn: u32, rs_psn: u32) -> bool {
    let (wa, wb) = (expected < psn, expected < rs_psn);
    (wa && !wb) || (wa == wb && rs_psn > psn)
}

/// `behind > rs_back` by its definition: the two distances mod 2^`bits`, compared.
fn behind_rs_by_definition(bits: u32, expected: u32, psn: u32, rs_psn: u32) -> bool {
    let mask = (1u32 << bits) - 1;
    expected.wrapping_sub(psn) & mask > expected.wrapping_sub(rs_psn) & mask
}

/// The identity `LookupCapture` relies on, for every triple of 8-bit PSNs (the width does
/// not enter the argument), and for random and edge 24-bit triples.
#[test]
fn behind_rs_identity_holds() {
    for expected in 0..256 {
        for psn in 0..256 {
            for rs_psn in 0..256 {
                assert_eq!(
                    behind_rs_by_compares(expected, psn, rs_psn),
                    behind_rs_by_definition(8, expected, psn, rs_psn),
                    "expected {expected}, psn {psn}, rs_psn {rs_psn}"
                );
            }
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let edge = [0, 1, 0x7F_FFFF, 0x80_0000, 0xFF_FFFE, 0xFF_FFFF];
    for _ in 0..200_000 {
        let mut pick = || {
            if rng.gen_bool(0.3) {
                edge[rng.gen_range(0..edge.len())]
            } else {
                rng.gen_range(0..1 << 24)
            }
        };
        let (e, p, r) = (pick(), pick(), pick());
        assert_eq!(
            behind_rs_by_compares(e, p, r),
            behind_rs_by_definition(24, e, p, r)
        );
    }
}

#[test]
fn synthesises() {
    let mut uut = LookupCapture::new(4);
    uut.connect_all();
    yosys_validate("nic_rtl_responder_lookup_capture", &generate_verilog(&uut))
        .expect("yosys accepts LookupCapture");
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64")]
fn rejects_zero_queue_pairs() {
    LookupCapture::new(0);
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64")]
fn rejects_too_many_queue_pairs() {
    LookupCapture::new(65);
}
