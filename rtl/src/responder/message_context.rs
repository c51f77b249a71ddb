//! `MessageContext`: the registers of the message in progress, a child of
//! [`crate::ReceiveQueueEngine`], loaded by the states of its [`MessageSequencer`].
//!
//! Follows the engine's documentation (`receive_queue_engine.rs`: the write window, the
//! owed answer, the refusal window and resync point a decision moves, the write-backs a
//! clock after they are decided). It keeps what each state of the message learns, so the
//! parent only wires: the message's QP, its write window (base and byte limit), the
//! atomic's value, the completion status, the receive queue entry's checks, the PSN
//! position (expected PSN, refusal window, resync point), the answer owed, the answer
//! handed to the requester and the write-back to the per-QP RAMs; and it assembles the
//! answers the engine hands on (the owed response, the answer to the requester, the
//! receive completion) from those registers and the message's header.
//!
//! The loads are one `match` on `state` (exclusive arms: one parallel multiplexer per
//! register, its hold the flip-flop's enable; a chain of `if`s on the sequencer's strobes
//! builds far bigger muxes on ECP5).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: no write-back; the other registers keep
//!   their value, as every message loads them before it uses them).
//! - `state` (the [`MessageSequencer`]'s), its strobes `first_taken`, `fail_owe`,
//!   `response_answer`, `commit` and its `end_mode`.
//! - The message: `qp` (6, the presented cell's), `is_send`, `is_response`,
//!   `is_atomic_response`, `consumes` (the message's header); the presented outcome
//!   `s_outcome` (a [`CellOutcomeHeader`]), of which `vaddr` (its low 32 bits),
//!   `dma_length`, `msg_length` (32), `psn` (24) and `immediate` (32) are read;
//!   `message_end` (the message ends with the presented outcome: its `immediate` is
//!   kept for the completion); `header` (a [`MessageHeader`], the message's, registered
//!   from its first cell); `wr_id` (64, the receive queue entry's).
//! - The lookup (`QpState`'s `m_lookup`, answering in Lookup and FailLookup): `s_lookup`
//!   (a [`QpLookup`]), of which `expected`, `refused`, `rs_psn` (24), `rs_valid`,
//!   `expect_addr`, `expect_length` (32) and `atomic_value` (64) are read (`rd_*` below);
//!   `rq_ci` (24, the registered lookup's).
//! - The Act clock (the `ActStage`): `act_write_back` (a [`QpWriteBack`]), `act_owe` (an
//!   [`OwedAnswer`]), `s_act` (an [`ActLoads`]: `owe_load` with `act_owe`, `ack_load` with
//!   `ack_syndrome` (8) and `ack_refusals` (21), `resync_load` with `ack_resync`,
//!   `position_load`, `rs_forget`; `act_*` below), `act_mode`, `resynced_q`.
//! - The PSN arithmetic (the `PsnWindow`): `s_window` (a [`WindowReport`]), of which
//!   `effective`, `window_eff`, `expected_next` (24), `code` (3) and `far_commit` are
//!   read (`win_*` below).
//! - `tpt_answered` with `tpt_paddr` (32); `rqe_fetched` with `rqe_buffer_addr`,
//!   `rqe_buffer_length` (32); `rqrd_valid` with `rqrd_data` (64) (the atomic's operand).
//! - Out, the registers: `ctx_qp` (6), `base`, `limit` (32), `value` (64),
//!   `length_error`, `rqe_done`, `atomic_done`, `expected`, `refused`, `rs_psn` (24),
//!   `rs_valid`, `owe` (an [`OwedAnswer`]), `ack_refusals` (21), `write_back` (a
//!   [`QpWriteBack`]: the write-backs decided last clock); and `far_next` (the Act
//!   clock's: the resync point's distance from the cell's PSN when `resynced_q`, else
//!   `win_far_commit`, both registered a clock before).
//! - Out, the answers: `m_owe` (an [`OwedResponse`]: `qp` = `ctx_qp`, the owed answer's
//!   `kind`, `psn`, `syndrome`, `resync`, and its `refusal` for an ACK or NACK (kind < 2;
//!   else 0), `addr` = `base`, `length` = `limit`, `value`, `dest_node` / `dest_qp` the
//!   header's source); `m_answer` (an [`AckEvent`]: `ctx_qp`, the header's `psn`, the
//!   answer's syndrome, response and resync registers); `m_cpl` (a [`CompletionRequest`]:
//!   the header's `opcode`, `has_immediate`, `msg_length` as `byte_count`, source; the
//!   completion status register, `ctx_qp`, `is_receive` 1, `rq_ci` as `wqe_index`, `wr_id`
//!   and the kept `immediate`).
//!
//! Loads (on the clock edge): Lookup and FailLookup: `expected`, `refused`, `rs_psn`,
//! `rs_valid` from the lookup; Idle with `first_taken`: `ctx_qp`; Lookup: `value`, the
//! window (the expected response's for a response, else `vaddr`, `dma_length`),
//! `rqe_done` and `length_error` cleared; FailDecide with `fail_owe`: a NACK
//! CRC_OR_MALFORMED naming `expected` (marked resync while `rs_valid`, reporting the
//! window's refusals), `nak_set`; Decide: a SEND's completion status (3 and no window when the
//! base is misaligned, 1 when longer than the window, else 0), an atomic response's
//! window at most 8; Act: `act_write_back`, and the loads the `ActStage` asks for
//! (`rs_psn` = `psn` with its `rs_set`), `atomic_done` cleared for an atomic; TptWait with
//! `tpt_answered`: `base` = `tpt_paddr`; RqeFetch with `rqe_fetched`: a SEND's window from
//! the entry and its `length_error`, `rqe_done`; Drain with `response_answer`: the
//! response's answer; AtomicData with `rqrd_valid`: `value`; AtomicWrite: `atomic_done`;
//! Commit with `commit`: the state write-back (`rq_ci` + `consumes`, `win_expected_next`,
//! the window shifted by one PSN, its code when the answer owed is a NACK, `rs_clear` when
//! far). Every other clock: no write-back. Any clock with `message_end`: the kept
//! `immediate`.
//!
//! Latency: every output is a register or assembled from registers and the held header
//! (but `far_next`, one multiplexer after them).
//! Throughput: one load per clock. Limits: none (no parameters).

use crate::common::{AckEvent, CellOutcomeHeader, CompletionRequest, OwedResponse};
use crate::responder::act_stage::{ActLoads, OwedAnswer};
use crate::responder::header_capture::MessageHeader;
use crate::responder::psn_window::WindowReport;
use crate::responder::qp_state::QpLookup;
use crate::responder::qp_state::QpWriteBack;
use crate::responder::receive_queue_engine::{MessageMode, ResponderState};
use crate::sim::ClockedBlock;
use nic_abi::Syndrome;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct MessageContext {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub state: Signal<In, ResponderState>,
    pub first_taken: Signal<In, Bit>,
    pub fail_owe: Signal<In, Bit>,
    pub response_answer: Signal<In, Bit>,
    pub commit: Signal<In, Bit>,
    pub end_mode: Signal<In, MessageMode>,
    pub qp: Signal<In, Bits<6>>,
    pub is_send: Signal<In, Bit>,
    pub is_response: Signal<In, Bit>,
    pub is_atomic_response: Signal<In, Bit>,
    pub consumes: Signal<In, Bit>,
    pub s_outcome: Signal<In, CellOutcomeHeader>,
    pub s_lookup: Signal<In, QpLookup>,
    pub rq_ci: Signal<In, Bits<24>>,
    pub act_write_back: Signal<In, QpWriteBack>,
    pub s_act: Signal<In, ActLoads>,
    pub act_owe: Signal<In, OwedAnswer>,
    pub act_mode: Signal<In, MessageMode>,
    pub resynced_q: Signal<In, Bit>,
    pub s_window: Signal<In, WindowReport>,
    pub tpt_answered: Signal<In, Bit>,
    pub tpt_paddr: Signal<In, Bits<32>>,
    pub rqe_fetched: Signal<In, Bit>,
    pub rqe_buffer_addr: Signal<In, Bits<32>>,
    pub rqe_buffer_length: Signal<In, Bits<32>>,
    pub rqrd_valid: Signal<In, Bit>,
    pub rqrd_data: Signal<In, Bits<64>>,
    pub header: Signal<In, MessageHeader>,
    pub wr_id: Signal<In, Bits<64>>,
    pub message_end: Signal<In, Bit>,
    pub ctx_qp: Signal<Out, Bits<6>>,
    pub base: Signal<Out, Bits<32>>,
    pub limit: Signal<Out, Bits<32>>,
    pub value: Signal<Out, Bits<64>>,
    pub length_error: Signal<Out, Bit>,
    pub rqe_done: Signal<Out, Bit>,
    pub atomic_done: Signal<Out, Bit>,
    pub expected: Signal<Out, Bits<24>>,
    pub refused: Signal<Out, Bits<24>>,
    pub rs_psn: Signal<Out, Bits<24>>,
    pub rs_valid: Signal<Out, Bit>,
    pub owe: Signal<Out, OwedAnswer>,
    pub ack_refusals: Signal<Out, Bits<21>>,
    pub write_back: Signal<Out, QpWriteBack>,
    pub far_next: Signal<Out, Bit>,
    pub m_owe: Signal<Out, OwedResponse>,
    pub m_answer: Signal<Out, AckEvent>,
    pub m_cpl: Signal<Out, CompletionRequest>,
    qp_reg: DFF<Bits<6>>,
    base_reg: DFF<Bits<32>>,
    limit_reg: DFF<Bits<32>>,
    value_reg: DFF<Bits<64>>,
    cpl_status_reg: DFF<Bits<8>>,
    /// The SEND does not fit its receive buffer (longer, or the buffer is misaligned).
    length_error_reg: DFF<Bit>,
    rqe_done_reg: DFF<Bit>,
    atomic_done_reg: DFF<Bit>,
    expected_reg: DFF<Bits<24>>,
    /// The refusal window (0 when not valid): bits `3(k-1)+2 .. 3(k-1)` the refusal code
    /// of PSN `expected - k`, k = 1..=8.
    refused_reg: DFF<Bits<24>>,
    rs_reg: DFF<Bits<24>>,
    rs_valid_reg: DFF<Bit>,
    /// `win_far_commit`, registered every clock: the Commit clock uses the one of the
    /// Drain clock before it, in which neither PSN register changes.
    far_commit_reg: DFF<Bit>,
    /// `psn + 1 - rs_psn > SEND_WINDOW` (the `PsnWindow`'s resync case), registered every
    /// clock: the Act clock takes it from the Decide clock before it.
    far_psn_reg: DFF<Bit>,
    owe_reg: DFF<OwedAnswer>,
    ack_syndrome_reg: DFF<Bits<8>>,
    ack_response_reg: DFF<Bit>,
    ack_refusals_reg: DFF<Bits<21>>,
    ack_resync_reg: DFF<Bit>,
    write_back_reg: DFF<QpWriteBack>,
    /// The message's immediate, from the outcome its last cell ends.
    immediate_reg: DFF<Bits<32>>,
    no_write_back: Constant<QpWriteBack>,
    syn_crc_or_malformed: Constant<Bits<8>>,
}

impl Default for MessageContext {
    fn default() -> Self {
        Self::new()
    }
}

impl MessageContext {
    pub fn new() -> Self {
        MessageContext {
            clock: Default::default(),
            reset: Default::default(),
            state: Default::default(),
            first_taken: Default::default(),
            fail_owe: Default::default(),
            response_answer: Default::default(),
            commit: Default::default(),
            end_mode: Default::default(),
            qp: Default::default(),
            is_send: Default::default(),
            is_response: Default::default(),
            is_atomic_response: Default::default(),
            consumes: Default::default(),
            s_outcome: Default::default(),
            s_lookup: Default::default(),
            rq_ci: Default::default(),
            act_write_back: Default::default(),
            s_act: Default::default(),
            act_owe: Default::default(),
            act_mode: Default::default(),
            resynced_q: Default::default(),
            s_window: Default::default(),
            tpt_answered: Default::default(),
            tpt_paddr: Default::default(),
            rqe_fetched: Default::default(),
            rqe_buffer_addr: Default::default(),
            rqe_buffer_length: Default::default(),
            rqrd_valid: Default::default(),
            rqrd_data: Default::default(),
            header: Default::default(),
            wr_id: Default::default(),
            message_end: Default::default(),
            ctx_qp: Default::default(),
            base: Default::default(),
            limit: Default::default(),
            value: Default::default(),
            length_error: Default::default(),
            rqe_done: Default::default(),
            atomic_done: Default::default(),
            expected: Default::default(),
            refused: Default::default(),
            rs_psn: Default::default(),
            rs_valid: Default::default(),
            owe: Default::default(),
            ack_refusals: Default::default(),
            write_back: Default::default(),
            far_next: Default::default(),
            m_owe: Default::default(),
            m_answer: Default::default(),
            m_cpl: Default::default(),
            qp_reg: Default::default(),
            base_reg: Default::default(),
            limit_reg: Default::default(),
            value_reg: Default::default(),
            cpl_status_reg: Default::default(),
            length_error_reg: Default::default(),
            rqe_done_reg: Default::default(),
            atomic_done_reg: Default::default(),
            expected_reg: Default::default(),
            refused_reg: Default::default(),
            rs_reg: Default::default(),
            rs_valid_reg: Default::default(),
            far_commit_reg: Default::default(),
            far_psn_reg: Default::default(),
            owe_reg: Default::default(),
            ack_syndrome_reg: Default::default(),
            ack_response_reg: Default::default(),
            ack_refusals_reg: Default::default(),
            ack_resync_reg: Default::default(),
            write_back_reg: Default::default(),
            immediate_reg: Default::default(),
            no_write_back: Constant::new(QpWriteBack::default()),
            syn_crc_or_malformed: Constant::new((Syndrome::CrcOrMalformed as u64).to_bits()),
        }
    }
}

impl Logic for MessageContext {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            qp_reg,
            base_reg,
            limit_reg,
            value_reg,
            cpl_status_reg,
            length_error_reg,
            rqe_done_reg,
            atomic_done_reg,
            expected_reg,
            refused_reg,
            rs_reg,
            rs_valid_reg,
            far_commit_reg,
            far_psn_reg,
            owe_reg,
            ack_syndrome_reg,
            ack_response_reg,
            ack_refusals_reg,
            ack_resync_reg,
            write_back_reg,
            immediate_reg
        );
        self.far_commit_reg.d.next = self.s_window.val().far_commit;
        self.far_psn_reg.d.next = ((self.s_outcome.val().psn + 1) - self.rs_reg.q.val()) > 8;
        // The write-backs decided this clock (none unless a state below decides them).
        self.write_back_reg.d.next = self.no_write_back.val();
        // The lookup's answer, registered for the decision (a first or a failed cell): the
        // message's PSN state, which the decision and the commit update.
        if (self.state.val() == ResponderState::Lookup)
            | (self.state.val() == ResponderState::FailLookup)
        {
            self.expected_reg.d.next = self.s_lookup.val().expected;
            self.refused_reg.d.next = self.s_lookup.val().refused;
            self.rs_reg.d.next = self.s_lookup.val().rs_psn;
            self.rs_valid_reg.d.next = self.s_lookup.val().rs_valid;
        }
        match self.state.val() {
            ResponderState::Idle => {
                if self.first_taken.val() {
                    self.qp_reg.d.next = self.qp.val();
                }
            }
            ResponderState::Lookup => {
                self.value_reg.d.next = self.s_lookup.val().atomic_value;
                if self.is_response.val() {
                    self.base_reg.d.next = self.s_lookup.val().expect_addr;
                    self.limit_reg.d.next = self.s_lookup.val().expect_length;
                } else {
                    self.base_reg.d.next = bit_cast::<32, 64>(self.s_outcome.val().vaddr);
                    self.limit_reg.d.next = self.s_outcome.val().dma_length;
                }
                self.rqe_done_reg.d.next = false;
                self.length_error_reg.d.next = false;
            }
            ResponderState::FailDecide => {
                if self.fail_owe.val() {
                    self.owe_reg.d.next.kind = 1.into();
                    self.owe_reg.d.next.syndrome = self.syn_crc_or_malformed.val();
                    self.owe_reg.d.next.psn = self.expected_reg.q.val();
                    // Marked while the resync point is kept (it acknowledges the PSNs
                    // before the expected one).
                    self.owe_reg.d.next.resync = self.rs_valid_reg.q.val();
                    // It names the expected PSN: the window's refusals are before it.
                    self.owe_reg.d.next.refusal = self.refused_reg.q.val().get_bits::<21>(0);
                    self.write_back_reg.d.next.nak_set = true;
                }
            }
            ResponderState::Decide => {
                // A SEND's completion status and write window (used only when it is
                // executed, so set whatever the decision): a misaligned buffer is not
                // written.
                self.cpl_status_reg.d.next = 0.into();
                if self.is_send.val() {
                    if self.base_reg.q.val().get_bits::<3>(0) != 0 {
                        self.cpl_status_reg.d.next = 3.into();
                        self.limit_reg.d.next = 0.into();
                    } else if self.s_outcome.val().msg_length > self.limit_reg.q.val() {
                        self.cpl_status_reg.d.next = 1.into();
                    }
                }
                // An atomic response writes at most 8 bytes.
                if self.is_response.val()
                    & self.is_atomic_response.val()
                    & (self.limit_reg.q.val() > 8)
                {
                    self.limit_reg.d.next = 8.into();
                }
            }
            ResponderState::Act => {
                // The registered decision is acted on: the answer owed, the write-backs.
                self.write_back_reg.d.next = self.act_write_back.val();
                if self.s_act.val().owe_load {
                    self.owe_reg.d.next = self.act_owe.val();
                }
                if self.s_act.val().ack_load {
                    self.ack_syndrome_reg.d.next = self.s_act.val().ack_syndrome;
                    self.ack_response_reg.d.next = false;
                    self.ack_refusals_reg.d.next = self.s_act.val().ack_refusals;
                }
                if self.s_act.val().resync_load {
                    self.ack_resync_reg.d.next = self.s_act.val().ack_resync;
                }
                if self.s_act.val().position_load {
                    self.expected_reg.d.next = self.s_window.val().effective;
                    self.refused_reg.d.next = self.s_window.val().window_eff;
                }
                if self.act_write_back.val().rs_set {
                    self.rs_reg.d.next = self.s_outcome.val().psn;
                    self.rs_valid_reg.d.next = true;
                }
                if self.s_act.val().rs_forget {
                    self.rs_valid_reg.d.next = false;
                }
                if self.act_mode.val() == MessageMode::ExecAtomic {
                    self.atomic_done_reg.d.next = false;
                }
            }
            ResponderState::TptWait => {
                if self.tpt_answered.val() {
                    self.base_reg.d.next = self.tpt_paddr.val();
                }
            }
            ResponderState::RqeFetch => {
                if self.rqe_fetched.val() {
                    // A SEND writes into the entry's buffer (an RDMA WRITE with
                    // immediate only consumes it).
                    if self.is_send.val() {
                        self.base_reg.d.next = self.rqe_buffer_addr.val();
                        self.limit_reg.d.next = self.rqe_buffer_length.val();
                        self.length_error_reg.d.next = (self.s_outcome.val().msg_length
                            > self.rqe_buffer_length.val())
                            | (self.rqe_buffer_addr.val().get_bits::<3>(0) != 0);
                    }
                    self.rqe_done_reg.d.next = true;
                }
            }
            ResponderState::Drain => {
                if self.response_answer.val() {
                    self.ack_syndrome_reg.d.next = 0.into();
                    self.ack_response_reg.d.next = true;
                    self.ack_refusals_reg.d.next = 0.into();
                }
            }
            ResponderState::AtomicData => {
                if self.rqrd_valid.val() {
                    self.value_reg.d.next = self.rqrd_data.val();
                }
            }
            ResponderState::AtomicWrite => {
                // The Writer writes the result.
                self.atomic_done_reg.d.next = true;
            }
            ResponderState::Commit => {
                if self.commit.val() {
                    self.write_back_reg.d.next.state = true;
                    self.write_back_reg.d.next.rq_ci = self.rq_ci.val();
                    if self.consumes.val() {
                        self.write_back_reg.d.next.rq_ci = self.rq_ci.val() + 1;
                    }
                    self.write_back_reg.d.next.expected = self.s_window.val().expected_next;
                    self.write_back_reg.d.next.atomic =
                        self.end_mode.val() == MessageMode::ExecAtomic;
                    // The PSN is consumed: shifted into the refusal window, as a refusal
                    // when NACKed after execution (a SEND longer than its buffer).
                    self.write_back_reg.d.next.refused = true;
                    self.write_back_reg.d.next.window = self.refused_reg.q.val() << 3;
                    if self.owe_reg.q.val().kind == 1 {
                        self.write_back_reg.d.next.window = (self.refused_reg.q.val() << 3)
                            | bit_cast::<24, 3>(self.s_window.val().code);
                    }
                    self.write_back_reg.d.next.rs_clear = self.far_commit_reg.q.val();
                }
            }
            _ => {}
        }
        if self.reset.val() {
            self.write_back_reg.d.next = self.no_write_back.val();
        }
        self.far_next.next = self.far_commit_reg.q.val();
        if self.resynced_q.val() {
            self.far_next.next = self.far_psn_reg.q.val();
        }
        self.ctx_qp.next = self.qp_reg.q.val();
        self.base.next = self.base_reg.q.val();
        self.limit.next = self.limit_reg.q.val();
        self.value.next = self.value_reg.q.val();
        self.length_error.next = self.length_error_reg.q.val();
        self.rqe_done.next = self.rqe_done_reg.q.val();
        self.atomic_done.next = self.atomic_done_reg.q.val();
        self.expected.next = self.expected_reg.q.val();
        self.refused.next = self.refused_reg.q.val();
        self.rs_psn.next = self.rs_reg.q.val();
        self.rs_valid.next = self.rs_valid_reg.q.val();
        self.owe.next = self.owe_reg.q.val();
        self.ack_refusals.next = self.ack_refusals_reg.q.val();
        self.write_back.next = self.write_back_reg.q.val();
        // ---- The answers, from the registers and the message's header ----
        if self.message_end.val() {
            self.immediate_reg.d.next = self.s_outcome.val().immediate;
        }
        self.m_owe.next.qp = self.qp_reg.q.val();
        self.m_owe.next.kind = self.owe_reg.q.val().kind;
        self.m_owe.next.psn = self.owe_reg.q.val().psn;
        self.m_owe.next.syndrome = self.owe_reg.q.val().syndrome;
        self.m_owe.next.addr = self.base_reg.q.val();
        self.m_owe.next.length = self.limit_reg.q.val();
        self.m_owe.next.value = self.value_reg.q.val();
        self.m_owe.next.dest_node = self.header.val().src_node;
        self.m_owe.next.dest_qp = self.header.val().src_qp;
        self.m_owe.next.resync = self.owe_reg.q.val().resync;
        // The AETH's refusals before the answer's PSN (which it acknowledges), ACKs and
        // NACKs only.
        self.m_owe.next.refusal = 0.into();
        if self.owe_reg.q.val().kind < 2 {
            self.m_owe.next.refusal = self.owe_reg.q.val().refusal;
        }
        self.m_answer.next.qp = self.qp_reg.q.val();
        self.m_answer.next.psn = self.header.val().psn;
        self.m_answer.next.syndrome = self.ack_syndrome_reg.q.val();
        self.m_answer.next.response = self.ack_response_reg.q.val();
        self.m_answer.next.resync = self.ack_resync_reg.q.val();
        self.m_cpl.next.opcode = self.header.val().opcode;
        self.m_cpl.next.status = self.cpl_status_reg.q.val();
        self.m_cpl.next.qp = self.qp_reg.q.val();
        self.m_cpl.next.is_receive = true;
        self.m_cpl.next.has_immediate = self.header.val().has_immediate;
        self.m_cpl.next.byte_count = self.header.val().msg_length;
        self.m_cpl.next.wqe_index = self.rq_ci.val();
        self.m_cpl.next.src_node = self.header.val().src_node;
        self.m_cpl.next.src_qp = self.header.val().src_qp;
        self.m_cpl.next.wr_id = self.wr_id.val();
        self.m_cpl.next.immediate = self.immediate_reg.q.val();
    }
}

impl ClockedBlock for MessageContext {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
