//! `TptClient` against its plain-Rust model (`nic_model::tpt_client`, written from the
//! block's documentation): seeded random messages, each captured, begun, then asked of
//! the TPT with back-pressure on the request and a random wait for the answer (idle
//! clocks between messages), ranges weighted toward the 2^32 boundary; every output
//! compared every clock.

use nic_model::tpt_client::{TptClientInputs, TptClientModel, TptClientOutputs, TptRequest};
use nic_rtl::responder::TptClient;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn apply(u: &mut TptClient, i: &TptClientInputs) {
    u.s_outcome.next.vaddr = i.vaddr.to_bits();
    u.s_outcome.next.stag = (i.stag as u64).to_bits();
    u.s_outcome.next.dma_length = (i.dma_length as u64).to_bits();
    u.s_class.next.is_read = i.is_read;
    u.s_class.next.is_atomic = i.is_atomic;
    u.s_class.next.invalidate = i.invalidate;
    u.s_class.next.consumes = i.consumes;
    u.qp.next = (i.qp as u64).to_bits();
    u.rq_empty.next = i.rq_empty;
    u.capture.next = i.capture;
    u.init.next = i.init;
    u.request.next = i.request;
    u.waiting.next = i.waiting;
    u.m_tpt_req_ready.next = i.req_ready;
    u.s_tpt_resp_valid.next = i.resp_valid;
    u.s_tpt_resp_ok.next = i.resp_ok;
    u.s_tpt_resp_paddr.next = (i.resp_paddr as u64).to_bits();
}

fn outputs(u: &TptClient) -> TptClientOutputs {
    TptClientOutputs {
        request: u.m_tpt_req_valid.val().then(|| TptRequest {
            stag: u.m_tpt_req.val().stag.to_u32(),
            vaddr: u.m_tpt_req.val().vaddr.to_u64(),
            length: u.m_tpt_req.val().length.to_u32(),
            access: u.m_tpt_req.val().access.to_u64() as u8,
            invalidate: u.m_tpt_req.val().invalidate,
            qp: u.m_tpt_req.val().qp.to_u64() as u8,
            commit: u.m_tpt_req.val().commit,
        }),
        req_taken: u.req_taken.val(),
        answered: u.answered.val().then(|| u.paddr.val().to_u32()),
        access_ok: u.access_ok.val(),
        access_done: u.access_done.val(),
    }
}

/// A message's header: ranges near 2^32 half of the time.
fn random_message(rng: &mut ChaCha8Rng) -> TptClientInputs {
    let dma_length = if rng.gen() {
        rng.gen_range(0..64)
    } else {
        rng.gen()
    };
    let vaddr: u64 = match rng.gen_range(0..4) {
        0 => rng.gen::<u64>(),
        1 => (1u64 << 32) - rng.gen_range(0..80u64),
        2 => ((1u64 << 32) - dma_length as u64).wrapping_add(rng.gen_range(0..3)) & 0xFFFF_FFFF,
        _ => rng.gen::<u32>() as u64,
    };
    let kind = rng.gen_range(0..4);
    TptClientInputs {
        vaddr,
        stag: rng.gen(),
        dma_length,
        is_read: kind == 1,
        is_atomic: kind == 2,
        invalidate: rng.gen(),
        consumes: kind == 3 || (kind == 0 && rng.gen()),
        qp: rng.gen_range(0..64),
        rq_empty: rng.gen(),
        ..Default::default()
    }
}

/// Runs `messages` messages through capture, init, request and wait; returns how many
/// ended with `access_ok` set and clear (both must be reached).
fn run(seed: u64, tpt_present: bool, messages: usize, p_ready: f64, p_answer: f64) -> [u32; 2] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = TptClient::new(tpt_present);
    uut.connect_all();
    let mut model = TptClientModel::new(tpt_present);
    let mut verdicts = [0; 2];
    let mut clock = 0u64;
    let mut step = |i: &TptClientInputs,
                    uut: &mut TptClient,
                    model: &mut TptClientModel|
     -> TptClientOutputs {
        apply(uut, i);
        settle(uut);
        let got = outputs(uut);
        assert_eq!(got, model.outputs(i), "seed {seed}, clock {clock}: {i:?}");
        model.clock(i);
        tick(uut);
        clock += 1;
        got
    };
    for _ in 0..messages {
        // Idle clocks (the header may change; nothing is asked).
        for _ in 0..rng.gen_range(0..3) {
            let mut idle = random_message(&mut rng);
            idle.resp_valid = rng.gen_bool(0.2);
            idle.req_ready = rng.gen();
            step(&idle, &mut uut, &mut model);
        }
        let m = random_message(&mut rng);
        let with = |f: &dyn Fn(&mut TptClientInputs), rng: &mut ChaCha8Rng| {
            let mut i = m;
            i.req_ready = rng.gen_bool(p_ready);
            i.resp_valid = rng.gen_bool(p_answer);
            i.resp_ok = rng.gen_bool(0.7);
            i.resp_paddr = if rng.gen_bool(0.8) {
                rng.gen::<u32>() & !7
            } else {
                rng.gen()
            };
            f(&mut i);
            i
        };
        step(&with(&|i| i.capture = true, &mut rng), &mut uut, &mut model);
        step(&with(&|i| i.init = true, &mut rng), &mut uut, &mut model);
        // The Decide and Act clocks.
        for _ in 0..2 {
            step(&with(&|_| {}, &mut rng), &mut uut, &mut model);
        }
        let asked = tpt_present && rng.gen_bool(0.8);
        if asked {
            loop {
                let i = with(&|i| i.request = true, &mut rng);
                if step(&i, &mut uut, &mut model).req_taken {
                    break;
                }
            }
            loop {
                let i = with(&|i| i.waiting = true, &mut rng);
                if step(&i, &mut uut, &mut model).answered.is_some() {
                    break;
                }
            }
        }
        let got = step(&with(&|_| {}, &mut rng), &mut uut, &mut model);
        verdicts[got.access_ok as usize] += 1;
    }
    verdicts
}

#[test]
fn matches_model_with_backpressure_and_gaps() {
    for (seed, tpt_present, p_ready, p_answer) in [
        (1, true, 0.5, 0.3),
        (2, false, 0.5, 0.3),
        (3, true, 1.0, 1.0),
        (4, true, 0.1, 0.1),
        (5, false, 1.0, 1.0),
    ] {
        let verdicts = run(seed, tpt_present, 3_000, p_ready, p_answer);
        assert!(
            verdicts.iter().all(|&n| n > 100),
            "seed {seed}: verdicts {verdicts:?}"
        );
    }
}

/// Without a TPT nothing is ever asked, whatever `request` says.
#[test]
fn without_a_tpt_nothing_is_asked() {
    let mut uut = TptClient::new(false);
    uut.connect_all();
    uut.request.next = true;
    uut.m_tpt_req_ready.next = true;
    settle(&mut uut);
    assert!(!uut.m_tpt_req_valid.val());
}

#[test]
fn synthesises() {
    for tpt_present in [false, true] {
        let mut uut = TptClient::new(tpt_present);
        uut.connect_all();
        yosys_validate(
            &format!("nic_rtl_responder_tpt_client_{tpt_present}"),
            &generate_verilog(&uut),
        )
        .expect("yosys accepts TptClient");
    }
}
