//! `ActStage`: the registered decision of a message's first cell and what the
//! [`crate::ReceiveQueueEngine`]'s Act clock does with it, a child of that engine.
//!
//! Follows `docs/nic-architecture.md` ("Reliability", rules 1-7 as the
//! [`crate::NackGenerator`] decides them; "Responses owed by the responder"; "Refused PSNs";
//! "Rejoin support") and the engine's first-cell pipeline (Idle, Lookup, Decide, Act).
//! In the Decide clock the `NackGenerator`'s outputs and the [`crate::responder::LookupCapture`]'s
//! two comparisons with the cell (`qp_ok`, `expect_match`) are registered here; in the Act
//! clock the outputs below, computed from those registers and the cell, say where the
//! message goes, what it owes and what it writes back. The Act clock's rules start from
//! these registers only (and from the held cell), so no comparison lies on its path to
//! the first beat.
//!
//! Ports:
//! - `clock`. Registered every clock (the engine holds them from Decide to Act): `action`
//!   (2, [`crate::responder::nack_generator::ACTION_EXECUTE`] .. `ACTION_NACK`),
//!   `syndrome` (8), `resynced`, `in_sequence`, `ack_psn` (24), `slot_refused`,
//!   `check_access`, `count_dropped` (the `NackGenerator`'s), `qp_ok`, `expect_match`
//!   (the `LookupCapture`'s).
//! - The cell, held: `s_class` (an [`OutcomeClass`], of which are read `is_ackish` (ACK
//!   or NACK), `is_nack`, `is_response` (READ or atomic response), `is_read`, `is_atomic`,
//!   `consumes` (SEND or RDMA WRITE with immediate) and `resync` (RESYNC; `resync_flag`
//!   below)), `psn` (24), `aeth` (29: an ACK's or NACK's immediate,
//!   the AETH: syndrome bits 7:0, refusals 28:8).
//! - The engine: `aborted` (the QP was reset meanwhile), `node_ok` (registered by the
//!   `LookupCapture`), `access_done` (the TPT answered, or there is none), `rqe_done` (the
//!   receive queue entry was read), `rs_valid` (the QP keeps a resync point),
//!   `last_refused` (PSN `expected - 1` was refused: the QP's refusal window's first
//!   entry is not 0), `rq_ci` (24). `s_window`, the `PsnWindow`'s [`WindowReport`],
//!   of which `effective`, `effective_next` (24), `window_eff` (24), `code` (3),
//!   `report_dup`, `report_after1` (21) are read; `far_next` (the `MessageContext`'s).
//! - `m_loads`, one [`ActLoads`] bundle of the loads of the message's registers below:
//!   `owe_load`, `ack_load`, `ack_syndrome`, `ack_refusals`, `resync_load`, `ack_resync`,
//!   `position_load`, `rs_forget`.
//! - Out, combinational, for the Act clock (the first rule that applies decides):
//!   1. `aborted`: the message is discarded (`go`, mode Discard).
//!   2. not `node_ok`: dropped (`drop`, `go`, Discard).
//!   3. an ACK or NACK: with `qp_ok` handed to the requester (`next_state` AckEvent, `ack_load`:
//!      `ack_syndrome` = `aeth[7:0]`, `ack_refusals` = `aeth[28:8]`,
//!      `resync_load`, `ack_resync` = `resync_flag`, `nack_count` for a NACK); else dropped.
//!   4. a response: with `qp_ok & expect_match` written (`go`, ResponseWrite,
//!      `resync_load`); else dropped.
//!   5. with a TPT (`tpt_present`), an action that is not a drop, not `slot_refused`,
//!      `check_access` and not `access_done`: `next_state` TptRequest.
//!   6. EXECUTE of a consuming request before `rqe_done`: `next_state` RqeFetch, `rqe_start`.
//!   7. DROP: `drop` = `count_dropped`, `go`, Discard.
//!   8. otherwise answered (`owe_load`, `m_owe` an [`OwedAnswer`]): `psn` the request's
//!      PSN, `syndrome`, `resync` (`rs_valid`, or after a resync whether the request did
//!      not carry RESYNC), `refusal` (the window's report); NACK: kind 1, SEQUENCE_ERROR
//!      names `effective` (and `nak_set`), a refused duplicate reports `report_dup`;
//!      DUPLICATE: READ 2, atomic 3, else an ACK of `ack_psn` reporting `report_after1`
//!      (`report_dup` when `expected - 1` was refused); EXECUTE: READ 2, atomic 3, else
//!      ACK (0) or, with a syndrome, NACK (1). In sequence and EXECUTE or NACK: the write-
//!      back `m_write_back` (a [`QpWriteBack`]): `state` (`rq_ci`, and `expected` =
//!      `effective`, or `effective_next` when the PSN is consumed now: a NACK or a READ),
//!      `synced_set`, `nak_clear`, `refused` (`window` = `window_eff`, shifted with `code`
//!      when consumed now), `position_load` (the engine's expected PSN and window become
//!      `effective`, `window_eff`), and the resync point: `rs_set` (a resync without
//!      RESYNC; `rs_psn` = `psn`), `rs_clear` + `rs_forget` (with RESYNC), or `rs_clear`
//!      when consumed now and `far_next`. Then `next_state` Owe (a NACK, a duplicate, a
//!      READ), or `go` with ExecAtomic or ExecWrite.
//!   `next_state` is Stream, `go` 1 and `mode` Discard unless a rule says otherwise; every
//!   strobe and write-back flag 0 (`m_write_back.atomic` always); the value outputs hold
//!   the defaults above (`m_owe.kind` 0, `m_write_back` `rq_ci` / `effective` /
//!   `window_eff` / `psn`).
//! - Out, registered: `syndrome_q`, `resynced_q` (the registered `syndrome` and
//!   `resynced`, for the `PsnWindow`).
//!
//! Latency: the registered inputs a clock after they are presented; the outputs follow
//! combinationally. Throughput: a decision every clock. Limits: none beyond the boolean
//! `tpt_present` (no parameter can be out of range).

use crate::common::OutcomeClass;
use crate::responder::psn_window::WindowReport;
use crate::responder::qp_state::QpWriteBack;
use crate::responder::receive_queue_engine::{MessageMode, ResponderState};
use crate::sim::ClockedBlock;
use nic_abi::Syndrome;
use rust_hdl::prelude::*;

/// An answer the responder owes for a request, which the `ResponseGenerator` sends: the
/// answer fields of the engine's `m_owe` (`crate::common::OwedResponse`): `kind` (0 ACK,
/// 1 NACK, 2 READ_RESPONSE, 3 ATOMIC_RESPONSE), `psn`, `syndrome`, `resync` and `refusal`
/// (the AETH's refusal report, bits
/// 28:8; the engine sends 0 for a response).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct OwedAnswer {
    pub kind: Bits<2>,
    pub psn: Bits<24>,
    pub syndrome: Bits<8>,
    pub resync: Bit,
    pub refusal: Bits<21>,
}

impl From<Bits<{ <OwedAnswer as Synth>::BITS }>> for OwedAnswer {
    fn from(b: Bits<{ <OwedAnswer as Synth>::BITS }>) -> Self {
        let at = OwedAnswer::default();
        OwedAnswer {
            kind: b.get_bits::<2>(at.get_my_offset_kind()),
            psn: b.get_bits::<24>(at.get_my_offset_psn()),
            syndrome: b.get_bits::<8>(at.get_my_offset_syndrome()),
            resync: b.get_bit(at.get_my_offset_resync()),
            refusal: b.get_bits::<21>(at.get_my_offset_refusal()),
        }
    }
}

/// The Act clock's loads of the message's registers (`m_loads`, the
/// [`crate::responder::MessageContext`]'s `s_act`): the strobes and values the port list
/// names, fields without a prefix.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct ActLoads {
    pub owe_load: Bit,
    pub ack_load: Bit,
    pub ack_syndrome: Bits<8>,
    pub ack_refusals: Bits<21>,
    pub resync_load: Bit,
    pub ack_resync: Bit,
    pub position_load: Bit,
    pub rs_forget: Bit,
}

impl From<Bits<{ <ActLoads as Synth>::BITS }>> for ActLoads {
    fn from(b: Bits<{ <ActLoads as Synth>::BITS }>) -> Self {
        let at = ActLoads::default();
        ActLoads {
            owe_load: b.get_bit(at.get_my_offset_owe_load()),
            ack_load: b.get_bit(at.get_my_offset_ack_load()),
            ack_syndrome: b.get_bits::<8>(at.get_my_offset_ack_syndrome()),
            ack_refusals: b.get_bits::<21>(at.get_my_offset_ack_refusals()),
            resync_load: b.get_bit(at.get_my_offset_resync_load()),
            ack_resync: b.get_bit(at.get_my_offset_ack_resync()),
            position_load: b.get_bit(at.get_my_offset_position_load()),
            rs_forget: b.get_bit(at.get_my_offset_rs_forget()),
        }
    }
}

#[derive(LogicBlock)]
pub struct ActStage {
    pub clock: Signal<In, Clock>,
    pub action: Signal<In, Bits<2>>,
    pub syndrome: Signal<In, Bits<8>>,
    pub resynced: Signal<In, Bit>,
    pub in_sequence: Signal<In, Bit>,
    pub ack_psn: Signal<In, Bits<24>>,
    pub slot_refused: Signal<In, Bit>,
    pub check_access: Signal<In, Bit>,
    pub count_dropped: Signal<In, Bit>,
    pub qp_ok: Signal<In, Bit>,
    pub expect_match: Signal<In, Bit>,
    pub s_class: Signal<In, OutcomeClass>,
    pub psn: Signal<In, Bits<24>>,
    pub aeth: Signal<In, Bits<29>>,
    pub aborted: Signal<In, Bit>,
    pub node_ok: Signal<In, Bit>,
    pub access_done: Signal<In, Bit>,
    pub rqe_done: Signal<In, Bit>,
    pub rs_valid: Signal<In, Bit>,
    pub last_refused: Signal<In, Bit>,
    pub rq_ci: Signal<In, Bits<24>>,
    pub s_window: Signal<In, WindowReport>,
    pub far_next: Signal<In, Bit>,
    pub next_state: Signal<Out, ResponderState>,
    pub go: Signal<Out, Bit>,
    pub mode: Signal<Out, MessageMode>,
    pub drop: Signal<Out, Bit>,
    pub nack_count: Signal<Out, Bit>,
    pub rqe_start: Signal<Out, Bit>,
    pub m_loads: Signal<Out, ActLoads>,
    pub m_owe: Signal<Out, OwedAnswer>,
    pub m_write_back: Signal<Out, QpWriteBack>,
    pub syndrome_q: Signal<Out, Bits<8>>,
    pub resynced_q: Signal<Out, Bit>,
    action_reg: DFF<Bits<2>>,
    syndrome_reg: DFF<Bits<8>>,
    resynced_reg: DFF<Bit>,
    in_sequence_reg: DFF<Bit>,
    ack_psn_reg: DFF<Bits<24>>,
    slot_refused_reg: DFF<Bit>,
    check_access_reg: DFF<Bit>,
    count_dropped_reg: DFF<Bit>,
    qp_ok_reg: DFF<Bit>,
    expect_match_reg: DFF<Bit>,
    /// The answer consumes its PSN now (a NACK, or a READ).
    consumed_now: Signal<Local, Bit>,
    tpt_present: Constant<Bit>,
    syn_sequence_error: Constant<Bits<8>>,
}

impl ActStage {
    /// The Act stage of an engine with or without a TPT.
    pub fn new(tpt_present: bool) -> Self {
        ActStage {
            clock: Default::default(),
            action: Default::default(),
            syndrome: Default::default(),
            resynced: Default::default(),
            in_sequence: Default::default(),
            ack_psn: Default::default(),
            slot_refused: Default::default(),
            check_access: Default::default(),
            count_dropped: Default::default(),
            qp_ok: Default::default(),
            expect_match: Default::default(),
            s_class: Default::default(),
            psn: Default::default(),
            aeth: Default::default(),
            aborted: Default::default(),
            node_ok: Default::default(),
            access_done: Default::default(),
            rqe_done: Default::default(),
            rs_valid: Default::default(),
            last_refused: Default::default(),
            rq_ci: Default::default(),
            s_window: Default::default(),
            far_next: Default::default(),
            next_state: Default::default(),
            go: Default::default(),
            mode: Default::default(),
            drop: Default::default(),
            nack_count: Default::default(),
            rqe_start: Default::default(),
            m_loads: Default::default(),
            m_owe: Default::default(),
            m_write_back: Default::default(),
            syndrome_q: Default::default(),
            resynced_q: Default::default(),
            action_reg: Default::default(),
            syndrome_reg: Default::default(),
            resynced_reg: Default::default(),
            in_sequence_reg: Default::default(),
            ack_psn_reg: Default::default(),
            slot_refused_reg: Default::default(),
            check_access_reg: Default::default(),
            count_dropped_reg: Default::default(),
            qp_ok_reg: Default::default(),
            expect_match_reg: Default::default(),
            consumed_now: Default::default(),
            tpt_present: Constant::new(tpt_present),
            syn_sequence_error: Constant::new((Syndrome::SequenceError as u64).to_bits()),
        }
    }
}

impl Logic for ActStage {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            action_reg,
            syndrome_reg,
            resynced_reg,
            in_sequence_reg,
            ack_psn_reg,
            slot_refused_reg,
            check_access_reg,
            count_dropped_reg,
            qp_ok_reg,
            expect_match_reg
        );
        self.action_reg.d.next = self.action.val();
        self.syndrome_reg.d.next = self.syndrome.val();
        self.resynced_reg.d.next = self.resynced.val();
        self.in_sequence_reg.d.next = self.in_sequence.val();
        self.ack_psn_reg.d.next = self.ack_psn.val();
        self.slot_refused_reg.d.next = self.slot_refused.val();
        self.check_access_reg.d.next = self.check_access.val();
        self.count_dropped_reg.d.next = self.count_dropped.val();
        self.qp_ok_reg.d.next = self.qp_ok.val();
        self.expect_match_reg.d.next = self.expect_match.val();
        self.syndrome_q.next = self.syndrome_reg.q.val();
        self.resynced_q.next = self.resynced_reg.q.val();
        self.consumed_now.next = (self.action_reg.q.val() == 3) | self.s_class.val().is_read;

        // ---- Defaults ----
        self.next_state.next = ResponderState::Stream;
        self.go.next = true;
        self.mode.next = MessageMode::Discard;
        self.drop.next = false;
        self.nack_count.next = false;
        self.rqe_start.next = false;
        self.m_loads.next.owe_load = false;
        self.m_owe.next.kind = 0.into();
        self.m_owe.next.psn = self.psn.val();
        self.m_owe.next.syndrome = self.syndrome_reg.q.val();
        self.m_owe.next.resync = self.rs_valid.val();
        self.m_owe.next.refusal = bit_cast::<21, 24>(self.s_window.val().window_eff);
        self.m_loads.next.ack_load = false;
        self.m_loads.next.ack_syndrome = self.aeth.val().get_bits::<8>(0);
        self.m_loads.next.ack_refusals = self.aeth.val().get_bits::<21>(8);
        self.m_loads.next.resync_load = false;
        self.m_loads.next.ack_resync = self.s_class.val().resync;
        self.m_write_back.next.state = false;
        self.m_write_back.next.rq_ci = self.rq_ci.val();
        self.m_write_back.next.expected = self.s_window.val().effective;
        self.m_write_back.next.atomic = false;
        self.m_write_back.next.refused = false;
        self.m_write_back.next.window = self.s_window.val().window_eff;
        self.m_write_back.next.rs_set = false;
        self.m_write_back.next.rs_psn = self.psn.val();
        self.m_write_back.next.rs_clear = false;
        self.m_write_back.next.synced_set = false;
        self.m_write_back.next.nak_set = false;
        self.m_write_back.next.nak_clear = false;
        self.m_loads.next.position_load = false;
        self.m_loads.next.rs_forget = false;

        if self.aborted.val() {
            // The QP was reset meanwhile: discard.
        } else if !self.node_ok.val() {
            self.drop.next = true;
        } else if self.s_class.val().is_ackish {
            if self.qp_ok_reg.q.val() {
                // The AETH reports refused PSNs before this one: the AnswerRouter hands on
                // their final NACKs first.
                self.m_loads.next.ack_load = true;
                self.m_loads.next.resync_load = true;
                self.nack_count.next = self.s_class.val().is_nack;
                self.next_state.next = ResponderState::AckEvent;
                self.go.next = false;
            } else {
                self.drop.next = true;
            }
        } else if self.s_class.val().is_response {
            if self.qp_ok_reg.q.val() & self.expect_match_reg.q.val() {
                self.mode.next = MessageMode::ResponseWrite;
                self.m_loads.next.resync_load = true;
            } else {
                self.drop.next = true;
            }
        } else if self.tpt_present.val()
            & (self.action_reg.q.val() != 2)
            & !self.slot_refused_reg.q.val()
            & self.check_access_reg.q.val()
            & !self.access_done.val()
        {
            self.next_state.next = ResponderState::TptRequest;
            self.go.next = false;
        } else if (self.action_reg.q.val() == 0)
            & self.s_class.val().consumes
            & !self.rqe_done.val()
        {
            self.next_state.next = ResponderState::RqeFetch;
            self.go.next = false;
            self.rqe_start.next = true;
        } else if self.action_reg.q.val() == 2 {
            self.drop.next = self.count_dropped_reg.q.val();
        } else {
            self.m_loads.next.owe_load = true;
            // Answered at a PSN adopted by a resync: the answer says so (RESYNC), and so
            // does every answer while the resync point is kept; not a resync the request
            // asked for (RESYNC: the requester has nothing before it).
            if self.resynced_reg.q.val() {
                self.m_owe.next.resync = !self.s_class.val().resync;
            }
            if self.action_reg.q.val() == 3 {
                self.m_owe.next.kind = 1.into();
                if self.syndrome_reg.q.val() == self.syn_sequence_error.val() {
                    self.m_owe.next.psn = self.s_window.val().effective;
                    self.m_write_back.next.nak_set = true;
                } else if !self.in_sequence_reg.q.val() {
                    // A refused duplicate's NACK names its own PSN.
                    self.m_owe.next.refusal = self.s_window.val().report_dup;
                }
            } else if self.action_reg.q.val() == 1 {
                if self.s_class.val().is_read {
                    self.m_owe.next.kind = 2.into();
                } else if self.s_class.val().is_atomic {
                    self.m_owe.next.kind = 3.into();
                } else {
                    self.m_owe.next.psn = self.ack_psn_reg.q.val();
                    self.m_owe.next.refusal = self.s_window.val().report_after1;
                    if self.last_refused.val() {
                        self.m_owe.next.refusal = self.s_window.val().report_dup;
                    }
                }
            } else if self.s_class.val().is_read {
                self.m_owe.next.kind = 2.into();
            } else if self.s_class.val().is_atomic {
                self.m_owe.next.kind = 3.into();
            } else if self.syndrome_reg.q.val() != 0 {
                self.m_owe.next.kind = 1.into();
            }
            if self.in_sequence_reg.q.val()
                & ((self.action_reg.q.val() == 3) | (self.action_reg.q.val() == 0))
            {
                // Resync, and the PSN a NACK or a READ consumes now (shifted into the
                // refusal window with its code); a resync forgets the window. A message
                // executed later consumes its PSN at the end of the message.
                self.m_write_back.next.state = true;
                self.m_write_back.next.synced_set = true;
                self.m_write_back.next.nak_clear = true;
                self.m_write_back.next.refused = true;
                self.m_loads.next.position_load = true;
                if self.consumed_now.val() {
                    self.m_write_back.next.expected = self.s_window.val().effective_next;
                    self.m_write_back.next.window = (self.s_window.val().window_eff << 3)
                        | bit_cast::<24, 3>(self.s_window.val().code);
                }
                // The resync point: set by a resync, forgotten once the expected PSN is
                // more than SEND_WINDOW past it.
                if self.resynced_reg.q.val() & !self.s_class.val().resync {
                    self.m_write_back.next.rs_set = true;
                } else if self.resynced_reg.q.val() {
                    // The requester restarted its sequence here.
                    self.m_write_back.next.rs_clear = true;
                    self.m_loads.next.rs_forget = true;
                } else if self.consumed_now.val() & self.far_next.val() {
                    self.m_write_back.next.rs_clear = true;
                }
            }
            if (self.action_reg.q.val() == 3)
                | (self.action_reg.q.val() == 1)
                | self.s_class.val().is_read
            {
                self.next_state.next = ResponderState::Owe;
                self.go.next = false;
            } else if self.s_class.val().is_atomic {
                self.mode.next = MessageMode::ExecAtomic;
            } else {
                self.mode.next = MessageMode::ExecWrite;
            }
        }
    }
}

impl ClockedBlock for ActStage {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
