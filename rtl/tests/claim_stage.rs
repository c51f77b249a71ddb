//! `ClaimStage` against `nic_model::claim_stage::ClaimStageModel` (written from its doc
//! comment) on seeded random stimulus: picks with idle gaps, a table engine that grants
//! late (back-pressure on the claim request) and answers after a random delay, refused
//! claims, a fetch that takes requests now and then (up to two WQEs in it) and hands WQEs
//! over after a random number of words each, in fetch order, a send stage that is busy now and then, QP moves and resets.

use nic_model::claim_stage::{ClaimInputs, ClaimOutputs, ClaimStageModel};
use nic_model::Throttle;
use nic_rtl::requester::ClaimStage;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn drive(uut: &mut ClaimStage, i: &ClaimInputs, junk: u64) {
    uut.reset.next = i.reset;
    uut.s_pick_valid.next = i.pick.is_some();
    uut.s_pick_qp.next = (i.pick.unwrap_or(junk as u8 & 3) as u64).to_bits();
    uut.s_pick_hold.next = i.pick_hold;
    uut.s_tx_uncommitted.next = i.tx_uncommitted;
    uut.s_commit_first.next = i.commit_first;
    uut.s_op_grant.next = i.op_grant;
    let (ok, psn, addr, remote) = i.claim_done.unwrap_or((
        junk & 1 == 1,
        junk as u32 & 0xFF_FFFF,
        (junk >> 8) as u32,
        (junk >> 24) as u32,
    ));
    uut.s_claim_done.next = i.claim_done.is_some();
    uut.s_op_ok.next = ok;
    uut.s_claim_psn.next = (psn as u64).to_bits();
    uut.s_claim_addr.next = (addr as u64).to_bits();
    uut.s_claim_remote.next = (remote as u64).to_bits();
    uut.s_fetch_ready.next = i.fetch_ready;
    uut.s_moved_valid.next = i.moved.is_some();
    uut.s_moved_qp.next = (i.moved.unwrap_or(junk as u8 >> 4 & 3) as u64).to_bits();
    uut.s_wqe_done.next = i.wqe_done;
    uut.s_tx_free.next = i.tx_free;
}

fn seen(uut: &ClaimStage) -> ClaimOutputs {
    ClaimOutputs {
        pick_taken: uut.m_pick_taken.val(),
        claim: uut
            .m_claim_valid
            .val()
            .then(|| uut.m_claim_qp.val().to_u64() as u8),
        fetch: uut
            .m_fetch_valid
            .val()
            .then(|| uut.m_fetch_addr.val().to_u32()),
        handoff: uut.m_handoff.val(),
        tx: (
            uut.m_tx_qp.val().to_u64() as u8,
            uut.m_tx_psn.val().to_u32(),
            uut.m_tx_remote.val().to_u32(),
            uut.m_tx_stale.val(),
        ),
    }
}

/// Runs `clocks` clocks with the given probabilities of a pick, a grant, a taken fetch
/// request and a free send stage; returns the hand-offs.
fn run(seed: u64, p_pick: f64, p_grant: f64, p_fetch: f64, p_free: f64, clocks: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = ClaimStage::new();
    uut.connect_all();
    let mut model = ClaimStageModel::new();
    let (pick, grant, fetch, free) = (
        Throttle::new(p_pick),
        Throttle::new(p_grant),
        Throttle::new(p_fetch),
        Throttle::new(p_free),
    );
    // The table engine's answer (clocks to go, answer) and the fetch's words to go.
    let mut answer: Option<(u32, (bool, u32, u32, u32))> = None;
    // Words to go of each WQE in the fetch, oldest first (only the oldest's arrive).
    let mut words: std::collections::VecDeque<u32> = Default::default();
    let mut handoffs = 0;
    for clock in 0..clocks {
        let mut i = ClaimInputs {
            reset: clock == 0 || rng.gen_bool(0.002),
            pick: pick.go(&mut rng).then(|| rng.gen_range(0..4)),
            pick_hold: rng.gen_bool(0.1),
            tx_uncommitted: rng.gen_bool(0.3),
            commit_first: rng.gen_bool(0.15),
            op_grant: grant.go(&mut rng),
            fetch_ready: fetch.go(&mut rng),
            moved: rng.gen_bool(0.03).then(|| rng.gen_range(0..4)),
            tx_free: free.go(&mut rng),
            ..ClaimInputs::default()
        };
        if let Some((0, a)) = answer {
            i.claim_done = Some(a);
            answer = None;
        }
        if words.front() == Some(&0) {
            i.wqe_done = true;
            words.pop_front();
        }
        drive(&mut uut, &i, rng.gen());
        settle(&mut uut);
        let want = model.outputs(&i);
        assert_eq!(seen(&uut), want, "clock {clock} (seed {seed:#x}): {i:?}");
        // The environment reacts to what the ports showed.
        if let Some((n, _)) = answer.as_mut() {
            *n -= 1;
        }
        if let Some(n) = words.front_mut() {
            *n -= 1;
        }
        if want.claim.is_some() && i.op_grant && !i.commit_first {
            let a = (
                rng.gen_bool(0.85),
                rng.gen::<u32>() & 0xFF_FFFF,
                rng.gen(),
                rng.gen(),
            );
            answer = Some((rng.gen_range(0..3), a));
        }
        if want.fetch.is_some() && i.fetch_ready {
            words.push_back(rng.gen_range(1..8));
        }
        if i.reset {
            answer = None;
            words.clear();
        }
        handoffs += want.handoff as u64;
        model.step(&i);
        tick(&mut uut);
    }
    handoffs
}

#[test]
fn synthesises() {
    let mut uut = ClaimStage::new();
    uut.connect_all();
    yosys_validate("nic_rtl_claim_stage", &generate_verilog(&uut))
        .expect("yosys accepts ClaimStage");
}

/// Seeded random stimulus, from everything ready to a slow table engine, fetch and send
/// stage.
#[test]
fn matches_model_with_gaps_and_backpressure() {
    let mut handoffs = 0;
    for (n, p) in [
        (1.0, 1.0, 1.0, 1.0),
        (0.3, 0.5, 0.5, 0.5),
        (1.0, 0.2, 0.3, 0.1),
        (0.1, 1.0, 1.0, 0.8),
    ]
    .into_iter()
    .enumerate()
    {
        handoffs += run(0xc1a1_0000 + n as u64, p.0, p.1, p.2, p.3, 5000);
    }
    assert!(handoffs > 800, "only {handoffs} WQEs handed over");
}

/// The stage has no parameters; its one precondition is a QP number of six bits, which
/// the ports' width enforces: a wider pick is refused by RustHDL with a message.
#[test]
#[should_panic(expected = "does not fit")]
fn rejects_a_queue_pair_number_wider_than_its_port() {
    let mut uut = ClaimStage::new();
    uut.connect_all();
    uut.s_pick_qp.next = 64u64.to_bits();
}
