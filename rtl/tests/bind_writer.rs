//! `BindWriter` against `nic_model::bind_writer` on seeded random local completions (BINDs,
//! unbinds, BINDs with an error status, and the shared random WQEs), offered with idle
//! gaps and held until taken, with back-pressure from the acknowledgement machine and from
//! the TPT: the outputs every clock, the write's entry, each good BIND's write accepted
//! exactly once and before its completion goes on; without a TPT (bind ready tied high)
//! every completion passes in the clock it is offered.

use nic_abi::{Wqe, BIND_OPCODE};
use nic_model::bind_writer::{BindEntry, BindWriterModel, BindWriterOut};
use nic_model::random_wqe::{random_wqe, WqeLengths};
use nic_model::Throttle;
use nic_rtl::requester::BindWriter;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn drive(uut: &mut BindWriter, c: Option<&(Wqe, u8, u8, u32)>) {
    uut.s_local_valid.next = c.is_some();
    let (w, status, qp, psn) = c.copied().unwrap_or_default();
    uut.s_local_qp.next = (qp as u64).to_bits();
    uut.s_local_psn.next = (psn as u64).to_bits();
    uut.s_local_status.next = (status as u64).to_bits();
    uut.s_local_wqe.next.opcode = (w.opcode as u64).to_bits();
    uut.s_local_wqe.next.invalidate = w.invalidate;
    uut.s_local_wqe.next.inline_payload = w.inline;
    uut.s_local_wqe.next.length = (w.length as u64).to_bits();
    uut.s_local_wqe.next.local_addr = (w.local_addr as u64).to_bits();
    uut.s_local_wqe.next.vaddr = w.remote_vaddr.to_bits();
    uut.s_local_wqe.next.stag = (w.stag as u64).to_bits();
    uut.s_local_wqe.next.immediate = (w.immediate as u64).to_bits();
    uut.s_local_wqe.next.compare = w.compare_add.to_bits();
    uut.s_local_wqe.next.swap = w.swap.to_bits();
    uut.s_local_wqe.next.word7 = w.reserved.to_bits();
}

fn bind_seen(uut: &BindWriter) -> BindEntry {
    let b = uut.m_bind.val();
    BindEntry {
        index: b.index.to_u32(),
        key: b.key.to_u64() as u8,
        rights: b.rights.to_u64() as u8,
        valid: b.valid,
        vaddr: b.vaddr.to_u64(),
        length: b.length.to_u32(),
        paddr: b.paddr.to_u32(),
    }
}

/// A random local completion: half BINDs (one in ten an unbind, one in eight with an
/// error status), the rest the shared random WQEs.
fn random_completion(rng: &mut ChaCha8Rng) -> (Wqe, u8, u8, u32) {
    let status = if rng.gen_bool(0.125) {
        rng.gen_range(1..=255)
    } else {
        0
    };
    let w = if rng.gen_bool(0.5) {
        if rng.gen_bool(0.1) {
            Wqe::bind(rng.gen(), 0, rng.gen(), 0, rng.gen())
        } else {
            Wqe {
                immediate: rng.gen(),
                ..Wqe::bind(rng.gen(), rng.gen(), rng.gen(), rng.gen(), 0)
            }
        }
    } else {
        random_wqe(rng, WqeLengths { max: 256, long: 0 })
    };
    (w, status, rng.gen_range(0..64), rng.gen_range(0..1 << 24))
}

/// Runs `n` completions; `p_bind_ready` 1.0 with `tpt` false ties the TPT's ready high.
/// Returns the clocks run.
fn run(seed: u64, n: usize, p_offer: f64, p_ack: f64, p_bind: f64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = BindWriter::new();
    uut.connect_all();
    uut.reset.next = true;
    drive(&mut uut, None);
    tick(&mut uut);
    uut.reset.next = false;
    let mut model = BindWriterModel::new();
    let (offer_t, ack_t, bind_t) = (
        Throttle::new(p_offer),
        Throttle::new(p_ack),
        Throttle::new(p_bind),
    );
    let mut current: Option<(Wqe, u8, u8, u32)> = None;
    let (mut done, mut cycles, mut writes_for_current) = (0, 0u64, 0);
    let mut waited = 0u64;
    while done < n {
        cycles += 1;
        assert!(cycles < 200 * n as u64, "stopped moving");
        if current.is_none() && offer_t.go(&mut rng) {
            current = Some(random_completion(&mut rng));
            writes_for_current = 0;
        }
        let (ack_ready, bind_ready) = (ack_t.go(&mut rng), bind_t.go(&mut rng));
        drive(&mut uut, current.as_ref());
        uut.m_local_ready.next = ack_ready;
        uut.m_bind_ready.next = bind_ready;
        settle(&mut uut);
        let want = model.step(
            current.as_ref().map(|(w, s, _, _)| (w, *s)),
            ack_ready,
            bind_ready,
        );
        let got = BindWriterOut {
            bind_valid: uut.m_bind_valid.val(),
            local_valid: uut.m_local_valid.val(),
            local_ready: uut.s_local_ready.val(),
        };
        assert_eq!(got, want, "clock {cycles}: {current:?}");
        if let Some((w, status, qp, psn)) = current {
            if got.bind_valid {
                assert_eq!(bind_seen(&uut), BindEntry::of(&w), "the write's entry");
                writes_for_current += bind_ready as u32;
            }
            if got.local_valid {
                assert_eq!(uut.m_local_qp.val().to_u64(), qp as u64);
                assert_eq!(uut.m_local_psn.val().to_u64(), psn as u64);
                assert_eq!(uut.m_local_status.val().to_u64(), status as u64);
            }
            if got.local_ready {
                let good_bind = w.opcode == BIND_OPCODE && status == 0;
                assert_eq!(
                    writes_for_current, good_bind as u32,
                    "a good BIND's write, once, before its completion: {w:?}"
                );
                if p_bind == 1.0 && p_ack == 1.0 {
                    assert_eq!(waited, 0, "passes in the clock it is offered");
                }
                current = None;
                done += 1;
                waited = 0;
            } else {
                waited += 1;
            }
        }
        tick(&mut uut);
    }
    cycles
}

#[test]
fn matches_model_with_gaps_and_backpressure() {
    let mut total = 0;
    for (i, (p_offer, p_ack, p_bind)) in [
        (1.0, 1.0, 1.0),
        (1.0, 0.3, 1.0),
        (1.0, 1.0, 0.2),
        (0.4, 0.5, 0.5),
        (0.8, 0.2, 0.7),
    ]
    .into_iter()
    .enumerate()
    {
        total += run(0xb1d_0000 + i as u64, 2_000, p_offer, p_ack, p_bind);
    }
    assert!(total > 10_000, "only {total} clocks");
}

#[test]
fn synthesises() {
    let mut uut = BindWriter::new();
    uut.connect_all();
    yosys_validate("nic_rtl_bind_writer", &generate_verilog(&uut))
        .expect("yosys accepts BindWriter");
}
