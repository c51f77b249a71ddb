//! `MessageSequencer` against its plain-Rust model (`nic_model::message_sequencer`,
//! written from the block's documentation): seeded random conditions with back-pressure
//! on every handshake it waits for, beats ending outcomes and messages only in clocks it
//! takes beats (as the `PayloadTake` gives them); every output compared every clock. Then
//! a message's directed walk, and synthesis.

use nic_model::message_sequencer::{MessageSequencerModel, SeqInputs, SeqOutputs};
use nic_rtl::responder::receive_queue_engine::{MessageMode, ResponderState};
use nic_rtl::responder::MessageSequencer;
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

/// The states the `ActStage` sends a message to.
const ACT_NEXT: [ResponderState; 5] = [
    ResponderState::Stream,
    ResponderState::AckEvent,
    ResponderState::TptRequest,
    ResponderState::RqeFetch,
    ResponderState::Owe,
];

fn apply(u: &mut MessageSequencer, i: &SeqInputs) {
    u.reset.next = i.reset;
    u.sweep_done.next = i.sweep_done;
    u.s_valid.next = i.valid;
    u.cell_ok.next = i.cell_ok;
    u.cell_first.next = i.cell_first;
    u.write_back_busy.next = i.write_back_busy;
    u.fail_owes.next = i.fail_owes;
    u.act_next.next = i.act_next;
    u.act_go.next = i.act_go;
    u.act_mode.next = i.act_mode;
    u.tpt_req_taken.next = i.tpt_req_taken;
    u.tpt_answered.next = i.tpt_answered;
    u.rqe_fetched.next = i.rqe_fetched;
    u.owe_ready.next = i.owe_ready;
    u.hdr_consumes.next = i.hdr_consumes;
    u.router_ready.next = i.router_ready;
    u.writer_busy.next = i.writer_busy;
    u.atomic_done.next = i.atomic_done;
    u.rqrd_req_ready.next = i.rqrd_req_ready;
    u.rqrd_valid.next = i.rqrd_valid;
    u.cpl_ready.next = i.cpl_ready;
    u.outcome_end.next = i.outcome_end;
    u.message_end.next = i.message_end;
    u.end_runs.next = i.end_runs;
    u.eff_mode.next = i.eff_mode;
    u.ctx_abort.next = i.ctx_abort;
}

fn outputs(u: &MessageSequencer) -> SeqOutputs {
    SeqOutputs {
        state: u.state.val(),
        mode: u.mode.val(),
        end_mode: u.end_mode.val(),
        aborted: u.aborted.val(),
        first_taken: u.first_taken.val(),
        stream_now: u.stream_now.val(),
        ram_use: u.ram_use.val(),
        go: u.go.val(),
        go_mode: u.go_mode.val(),
        acting: u.acting.val(),
        fail_owe: u.fail_owe.val(),
        response_answer: u.response_answer.val(),
        commit: u.commit.val(),
        expect_clear: u.expect_clear.val(),
    }
}

/// Conditions for one clock; `p_ready` is the chance that a handshake the sequencer
/// waits for completes, `p_valid` that a cell is presented. No beat ends yet.
fn random_inputs(rng: &mut ChaCha8Rng, p_ready: f64, p_valid: f64) -> SeqInputs {
    SeqInputs {
        reset: rng.gen_bool(0.002),
        sweep_done: rng.gen_bool(0.3),
        valid: rng.gen_bool(p_valid),
        cell_ok: rng.gen_bool(0.85),
        cell_first: rng.gen_bool(0.5),
        write_back_busy: rng.gen_bool(0.2),
        fail_owes: rng.gen(),
        act_next: ACT_NEXT[rng.gen_range(0..ACT_NEXT.len())],
        act_go: rng.gen_bool(0.6),
        act_mode: MODES[rng.gen_range(0..4)],
        tpt_req_taken: rng.gen_bool(p_ready),
        tpt_answered: rng.gen_bool(p_ready),
        rqe_fetched: rng.gen_bool(p_ready),
        owe_ready: rng.gen_bool(p_ready),
        hdr_consumes: rng.gen(),
        router_ready: rng.gen_bool(p_ready),
        writer_busy: !rng.gen_bool(p_ready),
        atomic_done: rng.gen(),
        rqrd_req_ready: rng.gen_bool(p_ready),
        rqrd_valid: rng.gen_bool(p_ready),
        cpl_ready: rng.gen_bool(p_ready),
        outcome_end: false,
        message_end: false,
        end_runs: false,
        eff_mode: MODES[rng.gen_range(0..4)],
        ctx_abort: rng.gen_bool(0.01),
    }
}

/// Runs `clocks` clocks; returns how often each state was seen.
fn run(seed: u64, clocks: u64, p_ready: f64, p_valid: f64) -> [u32; 19] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = MessageSequencer::new();
    uut.connect_all();
    let mut model = MessageSequencerModel::new();
    let mut seen = [0; 19];
    for clock in 0..clocks {
        let mut i = random_inputs(&mut rng, p_ready, p_valid);
        if clock == 0 {
            i.reset = true;
        }
        // Beats end only in a clock the sequencer takes them (`stream_now` or `go`).
        let before = model.outputs(&i);
        if (before.stream_now || before.go) && i.valid && rng.gen_bool(0.3) {
            i.outcome_end = true;
            i.message_end = rng.gen_bool(0.6);
            i.end_runs = i.message_end && i.eff_mode != MessageMode::Discard;
        }
        apply(&mut uut, &i);
        settle(&mut uut);
        let got = outputs(&uut);
        assert_eq!(got, model.outputs(&i), "seed {seed}, clock {clock}: {i:?}");
        seen[got.state as usize] += 1;
        model.step(&i);
        tick(&mut uut);
    }
    seen
}

#[test]
fn matches_model_with_backpressure_and_gaps() {
    for (seed, p_ready, p_valid) in [(1, 1.0, 1.0), (2, 0.5, 0.7), (3, 0.2, 0.3), (4, 0.8, 0.1)] {
        let seen = run(seed, 30_000, p_ready, p_valid);
        assert!(
            seen.iter().all(|&n| n > 0),
            "seed {seed}: a state is never reached {seen:?}"
        );
    }
}

fn quiet() -> SeqInputs {
    SeqInputs {
        reset: false,
        sweep_done: false,
        valid: false,
        cell_ok: true,
        cell_first: true,
        write_back_busy: false,
        fail_owes: false,
        act_next: ResponderState::Stream,
        act_go: false,
        act_mode: MessageMode::Discard,
        tpt_req_taken: false,
        tpt_answered: false,
        rqe_fetched: false,
        owe_ready: false,
        hdr_consumes: true,
        router_ready: false,
        writer_busy: false,
        atomic_done: false,
        rqrd_req_ready: false,
        rqrd_valid: false,
        cpl_ready: false,
        outcome_end: false,
        message_end: false,
        end_runs: false,
        eff_mode: MessageMode::Discard,
        ctx_abort: false,
    }
}

/// Applies `i` for one clock; returns the outputs seen before the edge.
fn clock(u: &mut MessageSequencer, i: &SeqInputs) -> SeqOutputs {
    apply(u, i);
    settle(u);
    let o = outputs(u);
    tick(u);
    o
}

/// A SEND's walk: reset sweep, lookup, decision, streaming its one beat, the drain, the
/// commit, the ACK owed and the completion; then one abandoned while it streams.
#[test]
fn a_send_walks_through_its_states() {
    use ResponderState as S;
    let mut u = MessageSequencer::new();
    u.connect_all();
    let q = quiet();
    clock(&mut u, &SeqInputs { reset: true, ..q });
    assert_eq!(clock(&mut u, &q).state, S::Clear, "the sweep holds Clear");
    assert_eq!(
        clock(
            &mut u,
            &SeqInputs {
                sweep_done: true,
                ..q
            }
        )
        .state,
        S::Clear
    );
    // A first cell behind a landing write-back waits.
    let first = SeqInputs { valid: true, ..q };
    let o = clock(
        &mut u,
        &SeqInputs {
            write_back_busy: true,
            ..first
        },
    );
    assert!(o.state == S::Idle && !o.first_taken && !o.ram_use);
    let o = clock(&mut u, &first);
    assert!(o.first_taken && o.ram_use && !o.stream_now);
    assert_eq!(clock(&mut u, &first).state, S::Lookup);
    assert_eq!(clock(&mut u, &first).state, S::Decide);
    let act = SeqInputs {
        act_next: S::Stream,
        act_go: true,
        act_mode: MessageMode::ExecWrite,
        ..first
    };
    let o = clock(&mut u, &act);
    assert!(o.acting && o.go && o.go_mode == MessageMode::ExecWrite);
    // Its last beat taken in Stream: the end sequence drains first.
    let last = SeqInputs {
        outcome_end: true,
        message_end: true,
        end_runs: true,
        eff_mode: MessageMode::ExecWrite,
        ..first
    };
    let o = clock(&mut u, &last);
    assert!(o.state == S::Stream && o.stream_now && o.mode == MessageMode::ExecWrite);
    let o = clock(
        &mut u,
        &SeqInputs {
            writer_busy: true,
            ..q
        },
    );
    assert!(o.state == S::Drain && o.end_mode == MessageMode::ExecWrite);
    assert_eq!(o.mode, MessageMode::Discard);
    assert_eq!(clock(&mut u, &q).state, S::Drain);
    let o = clock(&mut u, &q);
    assert!(o.state == S::Commit && o.commit && o.ram_use);
    assert_eq!(
        clock(&mut u, &q).state,
        S::Owe,
        "the owe waits for its ready"
    );
    assert_eq!(
        clock(
            &mut u,
            &SeqInputs {
                owe_ready: true,
                ..q
            }
        )
        .state,
        S::Owe
    );
    assert_eq!(clock(&mut u, &q).state, S::Complete);
    assert_eq!(
        clock(
            &mut u,
            &SeqInputs {
                cpl_ready: true,
                ..q
            }
        )
        .state,
        S::Complete
    );
    assert_eq!(clock(&mut u, &q).state, S::Idle);
    // Abandoned while its writes drain (its QP is reset): no commit after the drain.
    clock(&mut u, &first);
    clock(&mut u, &first);
    clock(&mut u, &first);
    clock(&mut u, &act);
    clock(&mut u, &last);
    let o = clock(
        &mut u,
        &SeqInputs {
            writer_busy: true,
            ctx_abort: true,
            ..q
        },
    );
    assert!(o.state == S::Drain && !o.aborted);
    let o = clock(&mut u, &q);
    assert!(o.state == S::Drain && o.aborted && !o.commit);
    assert_eq!(clock(&mut u, &q).state, S::Idle);
}

#[test]
fn synthesises() {
    let mut uut = MessageSequencer::new();
    uut.connect_all();
    yosys_validate(
        "nic_rtl_responder_message_sequencer",
        &generate_verilog(&uut),
    )
    .expect("yosys accepts MessageSequencer");
}
