//! `PayloadLedger` against `nic_model::payload_ledger::PayloadLedgerModel` (written from
//! its doc comment) on seeded random strobes: pushes with idle gaps, grants late, pops
//! under back-pressure (a consumer that takes a word only now and then), long payloads,
//! a changing `s_words`, and `m_on_una` queries for held and random PSNs.

use nic_model::payload_ledger::{LedgerInputs, LedgerOutputs, PayloadLedgerModel};
use nic_model::Throttle;
use nic_rtl::requester::PayloadLedger;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

const DEPTH: usize = 16;

fn new_ledger() -> PayloadLedger {
    let mut uut = PayloadLedger::new(DEPTH);
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    uut
}

/// The environment's own account (what a send stage and a buffer would allow): the
/// messages pushed and not yet out, with the words each has left and whether granted.
struct Env {
    msgs: VecDeque<(u8, u32, u16, bool)>,
    words: u16,
}

/// Runs `clocks` clocks with push, grant and pop probabilities; returns the pops seen.
fn run(seed: u64, p_push: f64, p_grant: f64, p_pop: f64, clocks: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = new_ledger();
    let mut model = PayloadLedgerModel::new(DEPTH as u32);
    let mut env = Env {
        msgs: VecDeque::new(),
        words: 4,
    };
    let (push, grant, pop) = (
        Throttle::new(p_push),
        Throttle::new(p_grant),
        Throttle::new(p_pop),
    );
    let mut pops = 0;
    for clock in 0..clocks {
        let mut i = LedgerInputs::default();
        // A consumer takes the oldest granted message's next word.
        if let Some(m) = env.msgs.front_mut() {
            if m.3 && m.2 > 0 && pop.go(&mut rng) {
                m.2 -= 1;
                i.pop = true;
                i.pop_last = m.2 == 0;
            }
        }
        if i.pop_last {
            env.msgs.pop_front();
            pops += 1;
        }
        let held_before = env.msgs.len() + i.pop_last as usize;
        if held_before < 2 && push.go(&mut rng) {
            let words = if rng.gen_bool(0.1) {
                rng.gen_range(17..40)
            } else {
                rng.gen_range(1..=DEPTH as u16)
            };
            let (qp, psn) = (rng.gen_range(0..4u8), rng.gen_range(0..8u32));
            i.push = Some((qp, psn, words));
            env.msgs.push_back((qp, psn, words, false));
        }
        if let Some(m) = env.msgs.iter_mut().find(|m| !m.3) {
            if grant.go(&mut rng) {
                m.3 = true;
                i.grant = true;
            }
        }
        i.burst_end = rng.gen_bool(0.05);
        if rng.gen_bool(0.1) {
            env.words = rng.gen_range(1..=20);
        }
        i.words = env.words;
        let (una_qp, una_psn) = match env.msgs.iter().nth(rng.gen_range(0..3)) {
            Some(m) if rng.gen_bool(0.7) => (m.0, m.1),
            _ => (rng.gen_range(0..4u8), rng.gen_range(0..8u32)),
        };
        uut.s_push.next = i.push.is_some();
        let (qp, psn, words) =
            i.push
                .unwrap_or((rng.gen_range(0..4), rng.gen_range(0..8), rng.gen()));
        uut.s_push_qp.next = (qp as u64 & 63).to_bits();
        uut.s_push_psn.next = (psn as u64 & 0xFF_FFFF).to_bits();
        uut.s_push_words.next = (words as u64).to_bits();
        let cur = rng.gen_bool(0.3).then_some((qp & 63, psn & 0xFF_FFFF));
        uut.s_cur_valid.next = cur.is_some();
        uut.s_grant.next = i.grant;
        uut.s_pop.next = i.pop;
        uut.s_pop_last.next = i.pop_last;
        uut.s_burst_end.next = i.burst_end;
        uut.s_words.next = (i.words as u64).to_bits();
        uut.s_una_qp.next = (una_qp as u64).to_bits();
        uut.s_una_psn.next = (una_psn as u64).to_bits();
        settle(&mut uut);
        let seen = LedgerOutputs {
            room: uut.m_room.val(),
            msgs: uut.m_msgs.val().to_u64() as u8,
            granted: uut.m_granted.val().to_u64() as u8,
            out_ok: uut.m_out_ok.val(),
            long: uut.m_long.val(),
        };
        assert_eq!(seen, model.outputs(), "clock {clock} (seed {seed:#x})");
        assert_eq!(
            uut.m_on_una.val(),
            model.on_una(una_qp, una_psn, cur),
            "m_on_una for {una_qp}/{una_psn} at clock {clock}"
        );
        model.step(i);
        tick(&mut uut);
    }
    pops
}

#[test]
fn synthesises() {
    let mut uut = PayloadLedger::new(DEPTH);
    uut.connect_all();
    yosys_validate("nic_rtl_payload_ledger", &generate_verilog(&uut))
        .expect("yosys accepts PayloadLedger");
}

/// Seeded random strobes from a fast consumer to a slow one, pushes with and without gaps.
#[test]
fn matches_model_with_gaps_and_backpressure() {
    let mut pops = 0;
    for (n, (p_push, p_grant, p_pop)) in [
        (1.0, 1.0, 1.0),
        (1.0, 0.3, 0.2),
        (0.2, 1.0, 1.0),
        (0.5, 0.5, 0.5),
        (0.9, 0.1, 0.8),
    ]
    .into_iter()
    .enumerate()
    {
        pops += run(0x1ed6e0 + n as u64, p_push, p_grant, p_pop, 4000);
    }
    assert!(pops > 1000, "only {pops} messages went through");
}

#[test]
#[should_panic(expected = "depth must be 1..=4096")]
fn rejects_a_zero_depth() {
    let _ = PayloadLedger::new(0);
}
