//! `ActStage` against its plain-Rust model (`nic_model::act_stage`, written from the
//! block's documentation): seeded random decisions held for a few clocks (as from Decide
//! to Act) or changing every clock, the cell's kind and the engine's flags weighted toward
//! the cases the rules tell apart; every output compared every clock (the value outputs
//! where their load strobe is set).

use nic_model::act_stage::{
    ActDecision, ActInputs, ActMode, ActNext, ActOutputs, ActStageModel, Owed, PsnWriteBack,
};
use nic_rtl::responder::receive_queue_engine::{MessageMode, ResponderState};
use nic_rtl::responder::ActStage;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn apply(u: &mut ActStage, i: &ActInputs) {
    let d = &i.decision;
    u.action.next = (d.action as u64).to_bits();
    u.syndrome.next = (d.syndrome as u64).to_bits();
    u.resynced.next = d.resynced;
    u.in_sequence.next = d.in_sequence;
    u.ack_psn.next = (d.ack_psn as u64).to_bits();
    u.slot_refused.next = d.slot_refused;
    u.check_access.next = d.check_access;
    u.count_dropped.next = d.count_dropped;
    u.qp_ok.next = d.qp_ok;
    u.expect_match.next = d.expect_match;
    u.s_class.next.is_ackish = i.is_ackish;
    u.s_class.next.is_nack = i.is_nack;
    u.s_class.next.is_response = i.is_response;
    u.s_class.next.is_read = i.is_read;
    u.s_class.next.is_atomic = i.is_atomic;
    u.s_class.next.consumes = i.consumes;
    u.s_class.next.resync = i.resync_flag;
    u.psn.next = (i.psn as u64).to_bits();
    u.aeth.next = ((i.immediate & 0x1FFF_FFFF) as u64).to_bits();
    u.aborted.next = i.abort;
    u.node_ok.next = i.node_ok;
    u.access_done.next = i.access_done;
    u.rqe_done.next = i.rqe_done;
    u.rs_valid.next = i.rs_valid;
    u.last_refused.next = i.refused_window & 7 != 0;
    u.rq_ci.next = (i.rq_ci as u64).to_bits();
    u.s_window.next.effective = (i.effective as u64).to_bits();
    u.s_window.next.effective_next = (i.effective_next as u64).to_bits();
    u.s_window.next.window_eff = (i.window_eff as u64).to_bits();
    u.s_window.next.code = (i.code as u64).to_bits();
    u.s_window.next.report_dup = (i.report_dup as u64).to_bits();
    u.s_window.next.report_after1 = (i.report_after1 as u64).to_bits();
    u.far_next.next = i.far_next;
}

fn outputs(u: &ActStage) -> ActOutputs {
    let next = match u.next_state.val() {
        ResponderState::Stream => ActNext::Stream,
        ResponderState::AckEvent => ActNext::AckEvent,
        ResponderState::TptRequest => ActNext::TptRequest,
        ResponderState::RqeFetch => ActNext::RqeFetch,
        ResponderState::Owe => ActNext::Owe,
        other => panic!("ActStage: unexpected next state {other:?}"),
    };
    let mode = match u.mode.val() {
        MessageMode::Discard => ActMode::Discard,
        MessageMode::ExecWrite => ActMode::ExecWrite,
        MessageMode::ExecAtomic => ActMode::ExecAtomic,
        MessageMode::ResponseWrite => ActMode::ResponseWrite,
    };
    let wb = u.m_write_back.val();
    let write_back = wb.state;
    assert!(!wb.atomic, "the Act clock never writes the saved atomic");
    assert_eq!(
        wb.rs_psn,
        u.psn.val(),
        "the resync point is the request's PSN"
    );
    // The flags written with the PSN state come together, and only with it.
    for (name, flag) in [
        ("synced_set", wb.synced_set),
        ("nak_clear", wb.nak_clear),
        ("refused", wb.refused),
        ("position_load", u.m_loads.val().position_load),
    ] {
        assert_eq!(
            flag, write_back,
            "{name} without the state write-back (or it without {name})"
        );
    }
    if !write_back {
        assert!(
            !wb.rs_set && !wb.rs_clear && !u.m_loads.val().rs_forget,
            "a resync point change without the write-back"
        );
    }
    ActOutputs {
        next,
        go: u.go.val(),
        mode,
        drop: u.drop.val(),
        nack_count: u.nack_count.val(),
        rqe_start: u.rqe_start.val(),
        owe: u.m_loads.val().owe_load.then(|| {
            let owed = u.m_owe.val();
            Owed {
                kind: owed.kind.to_u64() as u8,
                psn: owed.psn.to_u32(),
                syndrome: owed.syndrome.to_u64() as u8,
                resync: owed.resync,
                refusal: owed.refusal.to_u32(),
            }
        }),
        ack: u.m_loads.val().ack_load.then(|| {
            (
                u.m_loads.val().ack_syndrome.to_u64() as u8,
                u.m_loads.val().ack_refusals.to_u32(),
            )
        }),
        ack_resync: u
            .m_loads
            .val()
            .resync_load
            .then(|| u.m_loads.val().ack_resync),
        nak_set: wb.nak_set,
        write_back: write_back.then(|| PsnWriteBack {
            wdata: wb.rq_ci.to_u64() | wb.expected.to_u64() << 24,
            window: wb.window.to_u32(),
            rs_set: wb.rs_set,
            rs_clear: wb.rs_clear,
            rs_forget: u.m_loads.val().rs_forget,
        }),
        syndrome_q: u.syndrome_q.val().to_u64() as u8,
        resynced_q: u.resynced_q.val(),
    }
}

fn random_decision(rng: &mut ChaCha8Rng) -> ActDecision {
    let action = rng.gen_range(0..4u8);
    ActDecision {
        action,
        syndrome: match rng.gen_range(0..4) {
            0 => 0,
            1 => 0x60,
            2 => *[0x20u8, 0x61, 0x62, 0x63, 0x65]
                .get(rng.gen_range(0..5))
                .unwrap(),
            _ => rng.gen(),
        },
        resynced: rng.gen_bool(0.3),
        in_sequence: rng.gen_bool(0.6),
        ack_psn: rng.gen_range(0..1 << 24),
        slot_refused: rng.gen_bool(0.2),
        check_access: rng.gen_bool(0.5),
        count_dropped: rng.gen(),
        qp_ok: rng.gen_bool(0.8),
        expect_match: rng.gen_bool(0.7),
    }
}

fn random_inputs(rng: &mut ChaCha8Rng, decision: ActDecision) -> ActInputs {
    // One opcode kind at a time, as a cell has.
    let kind = rng.gen_range(0..7);
    ActInputs {
        decision,
        is_ackish: kind == 0,
        is_nack: kind == 0 && rng.gen(),
        is_response: kind == 1,
        is_read: kind == 2,
        is_atomic: kind == 3,
        consumes: kind == 4 || (kind == 5 && rng.gen()),
        resync_flag: rng.gen_bool(0.3),
        psn: rng.gen_range(0..1 << 24),
        immediate: rng.gen(),
        abort: rng.gen_bool(0.05),
        node_ok: rng.gen_bool(0.9),
        access_done: rng.gen(),
        rqe_done: rng.gen(),
        rs_valid: rng.gen(),
        refused_window: if rng.gen() {
            0
        } else {
            rng.gen_range(0..1 << 24)
        },
        rq_ci: rng.gen_range(0..1 << 24),
        effective: rng.gen_range(0..1 << 24),
        effective_next: rng.gen_range(0..1 << 24),
        window_eff: rng.gen_range(0..1 << 24),
        code: rng.gen_range(0..8),
        report_dup: rng.gen_range(0..1 << 21),
        report_after1: rng.gen_range(0..1 << 21),
        far_next: rng.gen(),
    }
}

/// Runs `clocks` clocks; a decision is held for a few clocks with probability `p_hold`
/// (idle gaps between decisions otherwise). Returns how often each next state was seen.
fn run(seed: u64, tpt_present: bool, clocks: u64, p_hold: f64) -> [u32; 5] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = ActStage::new(tpt_present);
    uut.connect_all();
    let mut model = ActStageModel::new(tpt_present);
    let mut seen = [0; 5];
    let mut decision = random_decision(&mut rng);
    for clock in 0..clocks {
        if !rng.gen_bool(p_hold) {
            decision = random_decision(&mut rng);
        }
        let i = random_inputs(&mut rng, decision);
        apply(&mut uut, &i);
        settle(&mut uut);
        let got = outputs(&uut);
        let want = model.outputs(&i);
        assert_eq!(got, want, "seed {seed}, clock {clock}: {i:?}");
        seen[got.next as usize] += 1;
        model.clock(&i);
        tick(&mut uut);
    }
    seen
}

#[test]
fn matches_model_with_held_and_changing_decisions() {
    for (seed, tpt_present, p_hold) in [
        (1, true, 0.7),
        (2, false, 0.7),
        (3, true, 0.0),
        (4, false, 0.3),
    ] {
        let seen = run(seed, tpt_present, 20_000, p_hold);
        let reached = if tpt_present { 5 } else { 4 };
        assert!(
            seen.iter().filter(|&&n| n > 50).count() >= reached,
            "seed {seed}: next states rarely reached {seen:?}"
        );
    }
}

/// Without a TPT the stage never asks for one, whatever the decision.
#[test]
fn never_asks_a_missing_tpt() {
    let seen = run(5, false, 20_000, 0.5);
    assert_eq!(seen[ActNext::TptRequest as usize], 0);
}

#[test]
fn synthesises() {
    for tpt_present in [false, true] {
        let mut uut = ActStage::new(tpt_present);
        uut.connect_all();
        yosys_validate(
            &format!("nic_rtl_responder_act_stage_{tpt_present}"),
            &generate_verilog(&uut),
        )
        .expect("yosys accepts ActStage");
    }
}

/// The cosimulation unpacks an owed answer from its bits: unpacking inverts packing.
#[test]
fn owed_answer_unpacks_what_it_packs() {
    use nic_rtl::responder::OwedAnswer;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for _ in 0..200 {
        let owed = OwedAnswer {
            kind: rng.gen_range(0..4u64).to_bits(),
            psn: rng.gen_range(0..1u64 << 24).to_bits(),
            syndrome: rng.gen_range(0..256u64).to_bits(),
            resync: rng.gen(),
            refusal: rng.gen_range(0..1u64 << 21).to_bits(),
        };
        let bits: Bits<{ <OwedAnswer as Synth>::BITS }> = owed.into();
        assert_eq!(OwedAnswer::from(bits), owed);
    }
}
