//! `AnswerRouter`: hands an answer to one of this NIC's own requests (an ACK, a NACK, an
//! RDMA READ or atomic response) to the requester as acknowledgement events, a child of
//! [`crate::ReceiveQueueEngine`].
//!
//! An ACK or NACK whose AETH reports refused PSNs (`docs/nic-architecture.md`, "Refused
//! PSNs"; the report `nic_abi::AethRefusals`) gives one event per refusal first, oldest
//! first: the refused PSN's final NACK (PSN `psn - k`, the reported syndrome, the answer's
//! `response` and `resync` flags); then the answer's own event. A NACK itself may have
//! been lost, so the report is what tells the requester.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: forgets an answer half handed on).
//! - `s_valid` / `s_ready`, `s_answer` (an [`AckEvent`]: the answer's own event),
//!   `s_refusals` (21: the AETH's bits 28:8, bits `3(k-1)+2 .. 3(k-1)` the refusal code of
//!   PSN `psn - k`, k = 1..=7, 0 where not refused; code 1 is RECEIVER_NOT_READY, code
//!   c >= 2 the syndrome `0x60 + c - 1`). The answer and its report are held until
//!   taken: `s_ready` is high when the next event is the answer's own and `m_ready` is
//!   high (so the answer is taken with its own event).
//! - `m_valid` / `m_ready`, `m_ack` (an [`AckEvent`]): the events, in order. `m_valid` is
//!   `s_valid`; while nothing is offered `m_ack` shows `s_answer`.
//!
//! Latency: combinational (an event is offered in the clock the answer is). Throughput:
//! one event per clock; an answer reporting `n` refusals takes `n + 1` clocks with
//! `m_ready` high. State: the refusals not yet handed on (21 bits) and whether the
//! answer on offer has started (1 bit).
//! Limits: none (no parameters).

use crate::common::AckEvent;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct AnswerRouter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    pub s_answer: Signal<In, AckEvent>,
    pub s_refusals: Signal<In, Bits<21>>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    pub m_ack: Signal<Out, AckEvent>,
    /// The refusals of the answer on offer not yet handed on (valid while `started`).
    pending: DFF<Bits<21>>,
    /// Some of the answer's events were taken.
    started: DFF<Bit>,
    /// The refusals still to hand on this clock.
    codes: Signal<Local, Bits<21>>,
    /// The oldest of them: how far before the answer's PSN (1..=7, 0: none), its code
    /// and its bits in `codes`.
    pick: Signal<Local, Bits<3>>,
    pick_code: Signal<Local, Bits<3>>,
    pick_mask: Signal<Local, Bits<21>>,
    /// Nothing is offered and nothing started: `m_ack` shows `s_answer`.
    offered_none: Signal<Local, Bit>,
}

impl AnswerRouter {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for AnswerRouter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, pending, started);
        // The refusals still to hand on, as if the answer were offered: `s_valid` (decoded
        // from the parent's state) acts only at the end, where nothing offered shows
        // `s_answer` (it is not on the path through the pick and the PSN subtraction).
        self.codes.next = self.s_refusals.val();
        if self.started.q.val() {
            self.codes.next = self.pending.q.val();
        }
        self.offered_none.next = !self.started.q.val() & !self.s_valid.val();
        // The farthest entry wins (unrolled).
        self.pick.next = 0.into();
        self.pick_code.next = 0.into();
        self.pick_mask.next = 0.into();
        if self.codes.val().get_bits::<3>(0).any() {
            self.pick.next = 1.into();
            self.pick_code.next = self.codes.val().get_bits::<3>(0);
            self.pick_mask.next = bits::<21>(7) << 0;
        }
        if self.codes.val().get_bits::<3>(3).any() {
            self.pick.next = 2.into();
            self.pick_code.next = self.codes.val().get_bits::<3>(3);
            self.pick_mask.next = bits::<21>(7) << 3;
        }
        if self.codes.val().get_bits::<3>(6).any() {
            self.pick.next = 3.into();
            self.pick_code.next = self.codes.val().get_bits::<3>(6);
            self.pick_mask.next = bits::<21>(7) << 6;
        }
        if self.codes.val().get_bits::<3>(9).any() {
            self.pick.next = 4.into();
            self.pick_code.next = self.codes.val().get_bits::<3>(9);
            self.pick_mask.next = bits::<21>(7) << 9;
        }
        if self.codes.val().get_bits::<3>(12).any() {
            self.pick.next = 5.into();
            self.pick_code.next = self.codes.val().get_bits::<3>(12);
            self.pick_mask.next = bits::<21>(7) << 12;
        }
        if self.codes.val().get_bits::<3>(15).any() {
            self.pick.next = 6.into();
            self.pick_code.next = self.codes.val().get_bits::<3>(15);
            self.pick_mask.next = bits::<21>(7) << 15;
        }
        if self.codes.val().get_bits::<3>(18).any() {
            self.pick.next = 7.into();
            self.pick_code.next = self.codes.val().get_bits::<3>(18);
            self.pick_mask.next = bits::<21>(7) << 18;
        }

        self.m_valid.next = self.s_valid.val();
        self.m_ack.next = self.s_answer.val();
        self.s_ready.next = false;
        if self.offered_none.val() {
            self.s_ready.next = self.m_ready.val();
        } else if self.pick.val() != 0 {
            // A refused PSN's final NACK.
            self.m_ack.next.psn = self.s_answer.val().psn - bit_cast::<24, 3>(self.pick.val());
            self.m_ack.next.syndrome = 0x20.into();
            if self.pick_code.val() != 1 {
                self.m_ack.next.syndrome =
                    bit_cast::<8, 3>(self.pick_code.val() - 1) | bits::<8>(0x60);
            }
            if self.s_valid.val() & self.m_ready.val() {
                self.pending.d.next = self.codes.val() & !self.pick_mask.val();
                self.started.d.next = true;
            }
        } else {
            // The answer's own event.
            self.s_ready.next = self.m_ready.val();
            if self.s_valid.val() & self.m_ready.val() {
                self.started.d.next = false;
            }
        }
        if self.reset.val() {
            self.started.d.next = false;
        }
    }
}

impl ClockedBlock for AnswerRouter {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
