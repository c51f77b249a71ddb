//! `MessageContext` against its plain-Rust model (`nic_model::message_context`, written
//! from the block's documentation): seeded random states, strobes and data, with the
//! handshakes it loads on (TPT answer, entry fetched, operand read) completing rarely or
//! often; every output compared every clock. Then synthesis.

use nic_model::message_context::{Answers, CtxInputs, Header, MessageContextModel, Owe, WriteBack};
use nic_rtl::responder::receive_queue_engine::{MessageMode, ResponderState};
use nic_rtl::responder::{MessageContext, OwedAnswer, QpWriteBack};
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

const MODES: [MessageMode; 4] = [
    MessageMode::Discard,
    MessageMode::ExecWrite,
    MessageMode::ExecAtomic,
    MessageMode::ResponseWrite,
];

const STATES: [ResponderState; 19] = [
    ResponderState::Clear,
    ResponderState::Idle,
    ResponderState::Lookup,
    ResponderState::FailLookup,
    ResponderState::FailDecide,
    ResponderState::Decide,
    ResponderState::Act,
    ResponderState::TptRequest,
    ResponderState::TptWait,
    ResponderState::RqeFetch,
    ResponderState::Stream,
    ResponderState::Owe,
    ResponderState::AckEvent,
    ResponderState::Drain,
    ResponderState::AtomicRead,
    ResponderState::AtomicData,
    ResponderState::AtomicWrite,
    ResponderState::Commit,
    ResponderState::Complete,
];

fn to_wb(w: &WriteBack) -> QpWriteBack {
    QpWriteBack {
        state: w.state,
        rq_ci: (w.rq_ci as u64).to_bits(),
        expected: (w.expected as u64).to_bits(),
        atomic: w.atomic,
        refused: w.refused,
        window: (w.window as u64).to_bits(),
        rs_set: w.rs_set,
        rs_psn: (w.rs_psn as u64).to_bits(),
        rs_clear: w.rs_clear,
        synced_set: w.synced_set,
        nak_set: w.nak_set,
        nak_clear: w.nak_clear,
    }
}

fn from_wb(w: &QpWriteBack) -> WriteBack {
    WriteBack {
        state: w.state,
        rq_ci: w.rq_ci.index() as u32,
        expected: w.expected.index() as u32,
        atomic: w.atomic,
        refused: w.refused,
        window: w.window.index() as u32,
        rs_set: w.rs_set,
        rs_psn: w.rs_psn.index() as u32,
        rs_clear: w.rs_clear,
        synced_set: w.synced_set,
        nak_set: w.nak_set,
        nak_clear: w.nak_clear,
    }
}

fn to_owe(o: &Owe) -> OwedAnswer {
    OwedAnswer {
        kind: (o.kind as u64).to_bits(),
        psn: (o.psn as u64).to_bits(),
        syndrome: (o.syndrome as u64).to_bits(),
        resync: o.resync,
        refusal: (o.refusal as u64).to_bits(),
    }
}

fn from_owe(o: &OwedAnswer) -> Owe {
    Owe {
        kind: o.kind.index() as u8,
        psn: o.psn.index() as u32,
        syndrome: o.syndrome.index() as u8,
        resync: o.resync,
        refusal: o.refusal.index() as u32,
    }
}

fn apply(u: &mut MessageContext, i: &CtxInputs) {
    u.reset.next = i.reset;
    u.state.next = i.state;
    u.first_taken.next = i.first_taken;
    u.fail_owe.next = i.fail_owe;
    u.response_answer.next = i.response_answer;
    u.commit.next = i.commit;
    u.end_mode.next = i.end_mode;
    u.qp.next = (i.qp as u64).to_bits();
    u.is_send.next = i.is_send;
    u.is_response.next = i.is_response;
    u.is_atomic_response.next = i.is_atomic_response;
    u.consumes.next = i.consumes;
    u.s_outcome.next.vaddr = (i.vaddr as u64).to_bits();
    u.s_outcome.next.dma_length = (i.dma_length as u64).to_bits();
    u.s_outcome.next.msg_length = (i.msg_length as u64).to_bits();
    u.s_outcome.next.psn = (i.psn as u64).to_bits();
    u.s_lookup.next.expected = (i.rd_expected as u64).to_bits();
    u.s_lookup.next.refused = (i.rd_refused as u64).to_bits();
    u.s_lookup.next.rs_psn = (i.rd_rs_psn as u64).to_bits();
    u.s_lookup.next.rs_valid = i.rd_rs_valid;
    u.s_lookup.next.expect_addr = (i.rd_expect_addr as u64).to_bits();
    u.s_lookup.next.expect_length = (i.rd_expect_length as u64).to_bits();
    u.s_lookup.next.atomic_value = i.rd_atomic_value.to_bits();
    u.rq_ci.next = (i.rq_ci as u64).to_bits();
    u.act_write_back.next = to_wb(&i.act_write_back);
    u.s_act.next.owe_load = i.act_owe_load;
    u.act_owe.next = to_owe(&i.act_owe);
    u.s_act.next.ack_load = i.act_ack_load;
    u.s_act.next.ack_syndrome = (i.act_ack_syndrome as u64).to_bits();
    u.s_act.next.ack_refusals = (i.act_ack_refusals as u64).to_bits();
    u.s_act.next.resync_load = i.act_resync_load;
    u.s_act.next.ack_resync = i.act_ack_resync;
    u.s_act.next.position_load = i.act_position_load;
    u.s_act.next.rs_forget = i.act_rs_forget;
    u.act_mode.next = i.act_mode;
    u.resynced_q.next = i.resynced_q;
    u.s_window.next.effective = (i.win_effective as u64).to_bits();
    u.s_window.next.window_eff = (i.win_window_eff as u64).to_bits();
    u.s_window.next.expected_next = (i.win_expected_next as u64).to_bits();
    u.s_window.next.code = (i.win_code as u64).to_bits();
    u.s_window.next.far_commit = i.win_far_commit;
    u.tpt_answered.next = i.tpt_answered;
    u.tpt_paddr.next = (i.tpt_paddr as u64).to_bits();
    u.rqe_fetched.next = i.rqe_fetched;
    u.rqe_buffer_addr.next = (i.rqe_buffer_addr as u64).to_bits();
    u.rqe_buffer_length.next = (i.rqe_buffer_length as u64).to_bits();
    u.rqrd_valid.next = i.rqrd_valid;
    u.rqrd_data.next = i.rqrd_data.to_bits();
    u.header.next.opcode = (i.header.opcode as u64).to_bits();
    u.header.next.psn = (i.header.psn as u64).to_bits();
    u.header.next.src_node = (i.header.src_node as u64).to_bits();
    u.header.next.src_qp = (i.header.src_qp as u64).to_bits();
    u.header.next.msg_length = (i.header.msg_length as u64).to_bits();
    u.header.next.has_immediate = i.header.has_immediate;
    u.wr_id.next = i.wr_id.to_bits();
    u.message_end.next = i.message_end;
    u.s_outcome.next.immediate = (i.immediate as u64).to_bits();
}

/// The block's answers, field by field.
fn answers(u: &MessageContext) -> Answers {
    let (o, a, c) = (u.m_owe.val(), u.m_answer.val(), u.m_cpl.val());
    Answers {
        owe: (
            o.qp.index() as u8,
            o.kind.index() as u8,
            o.psn.index() as u32,
            o.syndrome.index() as u8,
            o.refusal.index() as u32,
            o.addr.index() as u32,
            o.length.index() as u32,
            o.value.to_u64(),
            o.dest_node.index() as u16,
            o.dest_qp.index() as u16,
            o.resync,
        ),
        answer: (
            a.qp.index() as u8,
            a.psn.index() as u32,
            a.syndrome.index() as u8,
            a.response,
            a.resync,
        ),
        cpl: (
            c.opcode.index() as u8,
            c.status.index() as u8,
            c.qp.index() as u8,
            c.is_receive,
            c.has_immediate,
            c.byte_count.index() as u32,
            c.wqe_index.index() as u32,
            c.src_node.index() as u16,
            c.src_qp.index() as u16,
            c.wr_id.to_u64(),
            c.immediate.index() as u32,
        ),
    }
}

/// The block's outputs as the model's registers, and `far_next`.
fn outputs(u: &MessageContext) -> (MessageContextModel, bool) {
    (
        MessageContextModel {
            ctx_qp: u.ctx_qp.val().index() as u8,
            base: u.base.val().index() as u32,
            limit: u.limit.val().index() as u32,
            value: u.value.val().to_u64(),
            cpl_status: u.m_cpl.val().status.index() as u8,
            length_error: u.length_error.val(),
            rqe_done: u.rqe_done.val(),
            atomic_done: u.atomic_done.val(),
            expected: u.expected.val().index() as u32,
            refused: u.refused.val().index() as u32,
            rs_psn: u.rs_psn.val().index() as u32,
            rs_valid: u.rs_valid.val(),
            owe: from_owe(&u.owe.val()),
            ack_syndrome: u.m_answer.val().syndrome.index() as u8,
            ack_response: u.m_answer.val().response,
            ack_refusals: u.ack_refusals.val().index() as u32,
            ack_resync: u.m_answer.val().resync,
            write_back: from_wb(&u.write_back.val()),
            far_commit: false,
            far_psn: false,
            immediate: u.m_cpl.val().immediate.index() as u32,
        },
        u.far_next.val(),
    )
}

/// A value near a boundary half the time (0, 7, 8, 9, the top), else any `bits`-bit one.
fn near(rng: &mut ChaCha8Rng, bits: u32) -> u32 {
    let top = if bits == 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    };
    match rng.gen_range(0..8) {
        0 => 0,
        1 => 7,
        2 => 8,
        3 => 9,
        4 => top,
        5 => rng.gen_range(0..16),
        _ => rng.gen::<u32>() & top,
    }
}

fn random_wb(rng: &mut ChaCha8Rng) -> WriteBack {
    WriteBack {
        state: rng.gen(),
        rq_ci: near(rng, 24),
        expected: near(rng, 24),
        atomic: rng.gen(),
        refused: rng.gen(),
        window: near(rng, 24),
        rs_set: rng.gen(),
        rs_psn: near(rng, 24),
        rs_clear: rng.gen(),
        synced_set: rng.gen(),
        nak_set: rng.gen(),
        nak_clear: rng.gen(),
    }
}

/// Inputs for one clock; `p_ready` is the chance that a handshake the block loads on
/// completes.
fn random_inputs(rng: &mut ChaCha8Rng, p_ready: f64) -> CtxInputs {
    CtxInputs {
        reset: rng.gen_bool(0.01),
        state: STATES[rng.gen_range(0..STATES.len())],
        first_taken: rng.gen_bool(p_ready),
        fail_owe: rng.gen(),
        response_answer: rng.gen_bool(p_ready),
        commit: rng.gen_bool(0.8),
        end_mode: MODES[rng.gen_range(0..4)],
        qp: rng.gen_range(0..64),
        is_send: rng.gen(),
        is_response: rng.gen(),
        is_atomic_response: rng.gen(),
        consumes: rng.gen(),
        vaddr: near(rng, 32),
        dma_length: near(rng, 32),
        msg_length: near(rng, 32),
        psn: near(rng, 24),
        rd_expected: near(rng, 24),
        rd_refused: near(rng, 24),
        rd_rs_psn: near(rng, 24),
        rd_rs_valid: rng.gen(),
        rd_expect_addr: near(rng, 32),
        rd_expect_length: near(rng, 32),
        rd_atomic_value: rng.gen(),
        rq_ci: near(rng, 24),
        act_write_back: random_wb(rng),
        act_owe_load: rng.gen(),
        act_owe: Owe {
            kind: rng.gen_range(0..4),
            psn: near(rng, 24),
            syndrome: rng.gen(),
            resync: rng.gen(),
            refusal: near(rng, 21),
        },
        act_ack_load: rng.gen(),
        act_ack_syndrome: rng.gen(),
        act_ack_refusals: near(rng, 21),
        act_resync_load: rng.gen(),
        act_ack_resync: rng.gen(),
        act_position_load: rng.gen(),
        act_rs_forget: rng.gen_bool(0.3),
        act_mode: MODES[rng.gen_range(0..4)],
        resynced_q: rng.gen(),
        win_effective: near(rng, 24),
        win_window_eff: near(rng, 24),
        win_expected_next: near(rng, 24),
        win_code: rng.gen_range(0..8),
        win_far_commit: rng.gen(),
        tpt_answered: rng.gen_bool(p_ready),
        tpt_paddr: near(rng, 32),
        rqe_fetched: rng.gen_bool(p_ready),
        rqe_buffer_addr: near(rng, 32),
        rqe_buffer_length: near(rng, 32),
        rqrd_valid: rng.gen_bool(p_ready),
        rqrd_data: rng.gen(),
        header: Header {
            opcode: rng.gen(),
            psn: near(rng, 24),
            src_node: rng.gen(),
            src_qp: rng.gen(),
            msg_length: near(rng, 32),
            has_immediate: rng.gen(),
        },
        wr_id: rng.gen(),
        message_end: rng.gen_bool(0.2),
        immediate: rng.gen(),
    }
}

fn run(seed: u64, clocks: u64, p_ready: f64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = MessageContext::new();
    uut.connect_all();
    let mut model = MessageContextModel::new();
    let mut loads = 0;
    for clock in 0..clocks {
        let i = random_inputs(&mut rng, p_ready);
        apply(&mut uut, &i);
        settle(&mut uut);
        let (got, far_next) = outputs(&uut);
        let want = MessageContextModel {
            far_commit: false,
            far_psn: false,
            ..model
        };
        assert_eq!(got, want, "seed {seed}, clock {clock}: {i:?}");
        assert_eq!(
            answers(&uut),
            model.answers(&i),
            "seed {seed}, clock {clock}: answers"
        );
        assert_eq!(
            far_next,
            model.far_next(&i),
            "seed {seed}, clock {clock}: far_next"
        );
        let before = model;
        model.step(&i);
        if model != before {
            loads += 1;
        }
        tick(&mut uut);
    }
    assert!(
        loads > clocks / 4,
        "seed {seed}: only {loads} clocks load anything"
    );
}

#[test]
fn matches_model_with_backpressure_and_gaps() {
    for (seed, p_ready) in [(1, 1.0), (2, 0.5), (3, 0.1)] {
        run(seed, 20_000, p_ready);
    }
}

#[test]
fn synthesises() {
    let mut uut = MessageContext::new();
    uut.connect_all();
    yosys_validate("nic_rtl_responder_message_context", &generate_verilog(&uut))
        .expect("yosys accepts MessageContext");
}
