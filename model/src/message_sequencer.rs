//! The reference model of `MessageSequencer` (`rtl/src/responder/message_sequencer.rs`),
//! written from its documentation: the receive engine's message state machine (where it
//! stands, the message's mode, its end-sequence mode, whether it was abandoned) and the
//! strobes each state gives.

use nic_rtl::responder::receive_queue_engine::{MessageMode, ResponderState};

/// Everything the sequencer is given in one clock.
#[derive(Clone, Copy, Debug)]
pub struct SeqInputs {
    pub reset: bool,
    pub sweep_done: bool,
    pub valid: bool,
    pub cell_ok: bool,
    pub cell_first: bool,
    pub write_back_busy: bool,
    pub fail_owes: bool,
    pub act_next: ResponderState,
    pub act_go: bool,
    pub act_mode: MessageMode,
    pub tpt_req_taken: bool,
    pub tpt_answered: bool,
    pub rqe_fetched: bool,
    pub owe_ready: bool,
    pub hdr_consumes: bool,
    pub router_ready: bool,
    pub writer_busy: bool,
    pub atomic_done: bool,
    pub rqrd_req_ready: bool,
    pub rqrd_valid: bool,
    pub cpl_ready: bool,
    pub outcome_end: bool,
    pub message_end: bool,
    pub end_runs: bool,
    pub eff_mode: MessageMode,
    pub ctx_abort: bool,
}

/// What it shows in that clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqOutputs {
    pub state: ResponderState,
    pub mode: MessageMode,
    pub end_mode: MessageMode,
    pub aborted: bool,
    pub first_taken: bool,
    pub stream_now: bool,
    pub ram_use: bool,
    pub go: bool,
    pub go_mode: MessageMode,
    pub acting: bool,
    pub fail_owe: bool,
    pub response_answer: bool,
    pub commit: bool,
    pub expect_clear: bool,
}

/// The sequencer's registers.
#[derive(Clone, Copy, Debug)]
pub struct MessageSequencerModel {
    pub state: ResponderState,
    pub mode: MessageMode,
    pub end_mode: MessageMode,
    pub aborted: bool,
    pub in_end: bool,
}

impl Default for MessageSequencerModel {
    fn default() -> Self {
        Self::new()
    }
}

impl MessageSequencerModel {
    /// As after power-up (every register at its first value).
    pub fn new() -> Self {
        MessageSequencerModel {
            state: ResponderState::Clear,
            mode: MessageMode::Discard,
            end_mode: MessageMode::Discard,
            aborted: false,
            in_end: false,
        }
    }

    /// Idle takes a presented first or failed cell for its lookup.
    fn takes_first(&self, i: &SeqInputs) -> bool {
        self.state == ResponderState::Idle
            && i.valid
            && !(i.cell_ok && !i.cell_first)
            && !i.write_back_busy
    }

    /// Drain ends this clock, and the message was not abandoned.
    fn drains_to(&self, i: &SeqInputs, mode: MessageMode) -> bool {
        self.state == ResponderState::Drain
            && !i.writer_busy
            && !self.aborted
            && self.end_mode == mode
    }

    /// The outputs in this clock (the registers and the combinational strobes).
    pub fn outputs(&self, i: &SeqInputs) -> SeqOutputs {
        use ResponderState as S;
        let acting = self.state == S::Act;
        SeqOutputs {
            state: self.state,
            mode: self.mode,
            end_mode: self.end_mode,
            aborted: self.aborted,
            first_taken: self.takes_first(i),
            stream_now: self.state == S::Stream
                || (self.state == S::Idle && i.valid && i.cell_ok && !i.cell_first),
            ram_use: self.takes_first(i)
                || matches!(
                    self.state,
                    S::FailLookup | S::FailDecide | S::Decide | S::Act | S::Commit
                ),
            go: acting && i.act_go,
            go_mode: if acting {
                i.act_mode
            } else {
                MessageMode::Discard
            },
            acting,
            fail_owe: self.state == S::FailDecide && i.fail_owes,
            response_answer: self.drains_to(i, MessageMode::ResponseWrite),
            commit: self.state == S::Commit && !self.aborted,
            expect_clear: self.state == S::AckEvent && i.router_ready && self.in_end,
        }
    }

    /// Where the state machine goes from its state, before the beat-driven overrides.
    fn transition(&self, i: &SeqInputs) -> ResponderState {
        use ResponderState as S;
        match self.state {
            S::Clear if i.sweep_done => S::Idle,
            S::Idle if self.takes_first(i) => {
                if i.cell_ok {
                    S::Lookup
                } else {
                    S::FailLookup
                }
            }
            S::Lookup => S::Decide,
            S::FailLookup => S::FailDecide,
            S::FailDecide if i.fail_owes => S::Owe,
            S::FailDecide => S::Stream,
            S::Decide => S::Act,
            S::Act => i.act_next,
            S::TptRequest if i.tpt_req_taken => S::TptWait,
            S::TptWait | S::RqeFetch
                if (self.state == S::TptWait && i.tpt_answered)
                    || (self.state == S::RqeFetch && i.rqe_fetched) =>
            {
                S::Decide
            }
            S::Owe if i.owe_ready => match (self.in_end, self.end_mode, i.hdr_consumes) {
                (false, _, _) => S::Stream,
                (true, MessageMode::ExecWrite, true) => S::Complete,
                (true, _, _) => S::Idle,
            },
            S::AckEvent if i.router_ready => {
                if self.in_end {
                    S::Idle
                } else {
                    S::Stream
                }
            }
            S::Drain if !i.writer_busy => match (self.aborted, self.end_mode) {
                (true, _) => S::Idle,
                (false, MessageMode::ExecWrite) => S::Commit,
                (false, MessageMode::ExecAtomic) if i.atomic_done => S::Commit,
                (false, MessageMode::ExecAtomic) => S::AtomicRead,
                (false, MessageMode::ResponseWrite) => S::AckEvent,
                (false, MessageMode::Discard) => S::Idle,
            },
            S::AtomicRead if i.rqrd_req_ready => S::AtomicData,
            S::AtomicData if i.rqrd_valid => S::AtomicWrite,
            S::AtomicWrite => S::Drain,
            S::Commit if self.aborted => S::Idle,
            S::Commit => S::Owe,
            S::Complete if i.cpl_ready => S::Idle,
            other => other,
        }
    }

    /// One clock edge with inputs `i`.
    pub fn step(&mut self, i: &SeqInputs) {
        let first = self.takes_first(i);
        let mut state = self.transition(i);
        let mut mode = self.mode;
        let mut end_mode = self.end_mode;
        let mut aborted = self.aborted && !first;
        let mut in_end = self.in_end && !first;
        if first {
            mode = MessageMode::Discard;
        }
        if self.state == ResponderState::Act {
            mode = i.act_mode;
        }
        if i.outcome_end {
            state = ResponderState::Idle;
        }
        if i.message_end {
            end_mode = i.eff_mode;
            mode = MessageMode::Discard;
        }
        if i.end_runs {
            in_end = true;
            state = ResponderState::Drain;
        }
        aborted |= i.ctx_abort;
        if i.reset {
            state = ResponderState::Clear;
            mode = MessageMode::Discard;
            aborted = false;
        }
        *self = MessageSequencerModel {
            state,
            mode,
            end_mode,
            aborted,
            in_end,
        };
    }
}
