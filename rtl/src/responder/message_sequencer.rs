//! `MessageSequencer`: the receive engine's message state machine, a child of
//! [`crate::ReceiveQueueEngine`].
//!
//! Follows the engine's documentation (`receive_queue_engine.rs`, "Latency": a first cell
//! is looked up, decided and acted on; the TPT lookup and the receive queue entry read
//! each add a Decide and Act; after the last beat the writes drain, then the state update,
//! the owed answer and the completion). It holds where the engine stands (a
//! [`ResponderState`]), the message's mode, the mode of the message in its end sequence,
//! whether the message was abandoned and whether it is in its end sequence, and moves
//! them on the conditions the engine's other children report. The data the states load
//! are the parent's and the [`crate::responder::MessageContext`]'s.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: `Clear`, mode `Discard`, not aborted).
//! - Conditions: `sweep_done` (the per-QP RAMs are cleared); the presented outcome
//!   `s_valid`, `cell_ok` (it passed the reassembler's checks), `cell_first` (it is a
//!   message's first cell); `write_back_busy` (a write-back lands this clock);
//!   `fail_owes` (a failed cell owes CRC_OR_MALFORMED); the Act clock's `act_next`,
//!   `act_go`, `act_mode` (the `ActStage`); `tpt_req_taken`, `tpt_answered` (the
//!   `TptClient`); `rqe_fetched` (the `RqeFetch` is done); `owe_ready` (`m_owe_ready`);
//!   `hdr_consumes` (the message consumes a receive queue entry); `router_ready` (the
//!   `AnswerRouter` takes the answer); `writer_busy`; `atomic_done` (the atomic's result
//!   is written); `rqrd_req_ready`, `rqrd_valid` (the atomic operand's read); `cpl_ready`
//!   (`m_cpl_ready`); the `PayloadTake`'s `outcome_end`, `message_end`, `end_runs` and
//!   `eff_mode`; `ctx_abort` (the message's QP is reset or resumed).
//! - `state`, `mode`, `end_mode`, `aborted`: the registers.
//! - Strobes, each for this clock: `first_taken` (Idle takes a first or failed cell for
//!   its lookup: the parent registers its QP), `stream_now` (beats are taken: a
//!   continuation cell in Idle, or Stream), `ram_use` (the engine uses the per-QP RAMs:
//!   the CSR port waits), `go` and `go_mode` (the Act clock goes on streaming and takes
//!   the first beat now, in `go_mode`; `Discard` otherwise), `acting` (the Act clock),
//!   `fail_owe` (FailDecide owes CRC_OR_MALFORMED), `response_answer` (a written response
//!   is handed to the requester next), `commit` (Commit writes the message's state
//!   update), `expect_clear` (a response's sequence ends: its expectation is cleared).
//!
//! Transitions (`state` on the clock edge; later lines win): Clear -> Idle on
//! `sweep_done`; Idle, a continuation cell (`s_valid & cell_ok & !cell_first`) streams in
//! place, any other presented cell, once `!write_back_busy`, -> Lookup (`cell_ok`) or
//! FailLookup, clearing `aborted`, the end sequence and `mode`; Lookup -> Decide;
//! FailLookup -> FailDecide -> Owe (`fail_owes`) or Stream; Decide -> Act; Act ->
//! `act_next`, `mode` = `act_mode`; TptRequest -> TptWait on `tpt_req_taken`; TptWait ->
//! Decide on `tpt_answered`; RqeFetch -> Decide on `rqe_fetched`; Owe, on `owe_ready`, ->
//! Stream, or in the end sequence -> Idle, -> Complete for an executed write that consumes
//! an entry; AckEvent, on `router_ready`, -> Stream, or in the end sequence -> Idle;
//! Drain, once `!writer_busy`, -> Idle, unless aborted: an executed write -> Commit, an
//! atomic -> AtomicRead (`!atomic_done`) or Commit, a response -> AckEvent; AtomicRead ->
//! AtomicData on `rqrd_req_ready`; AtomicData -> AtomicWrite on `rqrd_valid`; AtomicWrite
//! -> Drain; Commit -> Owe, or Idle when aborted; Complete -> Idle on `cpl_ready`. Then
//! `outcome_end` -> Idle; `message_end`: `end_mode` = `eff_mode`, `mode` = `Discard`;
//! `end_runs`: the end sequence starts, -> Drain; `ctx_abort` sets `aborted`; `reset`.
//!
//! Latency: the registers change on the clock edge, the strobes are combinational.
//! Throughput: one transition per clock. Limits: none (no parameters).

use super::receive_queue_engine::{MessageMode, ResponderState};
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct MessageSequencer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub sweep_done: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub cell_ok: Signal<In, Bit>,
    pub cell_first: Signal<In, Bit>,
    pub write_back_busy: Signal<In, Bit>,
    pub fail_owes: Signal<In, Bit>,
    pub act_next: Signal<In, ResponderState>,
    pub act_go: Signal<In, Bit>,
    pub act_mode: Signal<In, MessageMode>,
    pub tpt_req_taken: Signal<In, Bit>,
    pub tpt_answered: Signal<In, Bit>,
    pub rqe_fetched: Signal<In, Bit>,
    pub owe_ready: Signal<In, Bit>,
    pub hdr_consumes: Signal<In, Bit>,
    pub router_ready: Signal<In, Bit>,
    pub writer_busy: Signal<In, Bit>,
    pub atomic_done: Signal<In, Bit>,
    pub rqrd_req_ready: Signal<In, Bit>,
    pub rqrd_valid: Signal<In, Bit>,
    pub cpl_ready: Signal<In, Bit>,
    pub outcome_end: Signal<In, Bit>,
    pub message_end: Signal<In, Bit>,
    pub end_runs: Signal<In, Bit>,
    pub eff_mode: Signal<In, MessageMode>,
    pub ctx_abort: Signal<In, Bit>,
    pub state: Signal<Out, ResponderState>,
    pub mode: Signal<Out, MessageMode>,
    pub end_mode: Signal<Out, MessageMode>,
    pub aborted: Signal<Out, Bit>,
    pub first_taken: Signal<Out, Bit>,
    pub stream_now: Signal<Out, Bit>,
    pub ram_use: Signal<Out, Bit>,
    pub go: Signal<Out, Bit>,
    pub go_mode: Signal<Out, MessageMode>,
    pub acting: Signal<Out, Bit>,
    pub fail_owe: Signal<Out, Bit>,
    pub response_answer: Signal<Out, Bit>,
    pub commit: Signal<Out, Bit>,
    pub expect_clear: Signal<Out, Bit>,
    state_reg: DFF<ResponderState>,
    mode_reg: DFF<MessageMode>,
    end_mode_reg: DFF<MessageMode>,
    abort_reg: DFF<Bit>,
    /// In the end-of-message sequence (decides where Owe and AckEvent go next).
    in_end_reg: DFF<Bit>,
}

impl MessageSequencer {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for MessageSequencer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state_reg,
            mode_reg,
            end_mode_reg,
            abort_reg,
            in_end_reg
        );
        self.first_taken.next = false;
        self.stream_now.next = false;
        self.ram_use.next = false;
        self.go.next = false;
        self.go_mode.next = MessageMode::Discard;
        self.acting.next = false;
        self.fail_owe.next = false;
        self.response_answer.next = false;
        self.commit.next = false;
        self.expect_clear.next = false;
        match self.state_reg.q.val() {
            ResponderState::Clear => {
                if self.sweep_done.val() {
                    self.state_reg.d.next = ResponderState::Idle;
                }
            }
            ResponderState::Idle => {
                if self.s_valid.val() {
                    if self.cell_ok.val() & !self.cell_first.val() {
                        // A continuation cell: follows the message's decision.
                        self.stream_now.next = true;
                    } else if !self.write_back_busy.val() {
                        // A first or a failed cell: its QP is looked up (once the last
                        // write-back has landed).
                        self.first_taken.next = true;
                        self.ram_use.next = true;
                        self.abort_reg.d.next = false;
                        self.in_end_reg.d.next = false;
                        self.mode_reg.d.next = MessageMode::Discard;
                        self.state_reg.d.next = ResponderState::FailLookup;
                        if self.cell_ok.val() {
                            self.state_reg.d.next = ResponderState::Lookup;
                        }
                    }
                }
            }
            ResponderState::Lookup => {
                self.state_reg.d.next = ResponderState::Decide;
            }
            ResponderState::FailLookup => {
                self.ram_use.next = true;
                self.state_reg.d.next = ResponderState::FailDecide;
            }
            ResponderState::FailDecide => {
                self.ram_use.next = true;
                self.state_reg.d.next = ResponderState::Stream;
                if self.fail_owes.val() {
                    self.fail_owe.next = true;
                    self.state_reg.d.next = ResponderState::Owe;
                }
            }
            ResponderState::Decide => {
                self.ram_use.next = true;
                self.state_reg.d.next = ResponderState::Act;
            }
            ResponderState::Act => {
                self.ram_use.next = true;
                self.acting.next = true;
                self.state_reg.d.next = self.act_next.val();
                self.go.next = self.act_go.val();
                self.go_mode.next = self.act_mode.val();
                self.mode_reg.d.next = self.act_mode.val();
            }
            ResponderState::TptRequest => {
                if self.tpt_req_taken.val() {
                    self.state_reg.d.next = ResponderState::TptWait;
                }
            }
            ResponderState::TptWait => {
                if self.tpt_answered.val() {
                    self.state_reg.d.next = ResponderState::Decide;
                }
            }
            ResponderState::RqeFetch => {
                if self.rqe_fetched.val() {
                    self.state_reg.d.next = ResponderState::Decide;
                }
            }
            ResponderState::Stream => {
                self.stream_now.next = true;
            }
            ResponderState::Owe => {
                if self.owe_ready.val() {
                    self.state_reg.d.next = ResponderState::Stream;
                    if self.in_end_reg.q.val() {
                        self.state_reg.d.next = ResponderState::Idle;
                        if (self.end_mode_reg.q.val() == MessageMode::ExecWrite)
                            & self.hdr_consumes.val()
                        {
                            self.state_reg.d.next = ResponderState::Complete;
                        }
                    }
                }
            }
            ResponderState::AckEvent => {
                if self.router_ready.val() {
                    self.state_reg.d.next = ResponderState::Stream;
                    if self.in_end_reg.q.val() {
                        self.expect_clear.next = true;
                        self.state_reg.d.next = ResponderState::Idle;
                    }
                }
            }
            ResponderState::Drain => {
                if !self.writer_busy.val() {
                    self.state_reg.d.next = ResponderState::Idle;
                    if !self.abort_reg.q.val() {
                        match self.end_mode_reg.q.val() {
                            MessageMode::ExecWrite => {
                                self.state_reg.d.next = ResponderState::Commit;
                            }
                            MessageMode::ExecAtomic => {
                                self.state_reg.d.next = ResponderState::Commit;
                                if !self.atomic_done.val() {
                                    self.state_reg.d.next = ResponderState::AtomicRead;
                                }
                            }
                            MessageMode::ResponseWrite => {
                                self.response_answer.next = true;
                                self.state_reg.d.next = ResponderState::AckEvent;
                            }
                            _ => {}
                        }
                    }
                }
            }
            ResponderState::AtomicRead => {
                if self.rqrd_req_ready.val() {
                    self.state_reg.d.next = ResponderState::AtomicData;
                }
            }
            ResponderState::AtomicData => {
                if self.rqrd_valid.val() {
                    self.state_reg.d.next = ResponderState::AtomicWrite;
                }
            }
            ResponderState::AtomicWrite => {
                self.state_reg.d.next = ResponderState::Drain;
            }
            ResponderState::Commit => {
                self.ram_use.next = true;
                self.state_reg.d.next = ResponderState::Idle;
                if !self.abort_reg.q.val() {
                    self.commit.next = true;
                    self.state_reg.d.next = ResponderState::Owe;
                }
            }
            ResponderState::Complete => {
                if self.cpl_ready.val() {
                    self.state_reg.d.next = ResponderState::Idle;
                }
            }
            _ => {
                self.state_reg.d.next = ResponderState::Idle;
            }
        }
        // The presented outcome's last beat taken ends it; a message's last one moves its
        // mode to the end sequence, and nothing streams until the next first cell is
        // decided.
        if self.outcome_end.val() {
            self.state_reg.d.next = ResponderState::Idle;
        }
        if self.message_end.val() {
            self.end_mode_reg.d.next = self.eff_mode.val();
            self.mode_reg.d.next = MessageMode::Discard;
        }
        if self.end_runs.val() {
            self.in_end_reg.d.next = true;
            self.state_reg.d.next = ResponderState::Drain;
        }
        if self.ctx_abort.val() {
            self.abort_reg.d.next = true;
        }
        if self.reset.val() {
            self.state_reg.d.next = ResponderState::Clear;
            self.mode_reg.d.next = MessageMode::Discard;
            self.abort_reg.d.next = false;
        }
        self.state.next = self.state_reg.q.val();
        self.mode.next = self.mode_reg.q.val();
        self.end_mode.next = self.end_mode_reg.q.val();
        self.aborted.next = self.abort_reg.q.val();
    }
}

impl ClockedBlock for MessageSequencer {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
