//! `PayloadLedger`: the `TransmitMachine`'s account of the messages whose payload is in the
//! [`PayloadBuffer`](crate::requester::PayloadBuffer) or on its way there: how many
//! (at most two), how many of them are granted (their words may leave), which QP and PSN
//! each is, the words reserved in the buffer, whether a payload longer than the buffer is
//! arriving, and whether the next early payload fits.
//!
//! Follows "Message rate of short messages" and "Deadlock freedom" in `docs/nic-blocks.md`
//! (an early payload is read before its message's grant only when it fits beside the
//! words reserved, and at most two messages' payloads are held).
//!
//! Ports (all events are single-clock strobes of the clock they happen in):
//! - `clock`, `reset` (synchronous, active high: nothing held, nothing reserved).
//! - `s_push`: a payload read is taken by the tx read port; `s_push_qp` (6), `s_push_psn`
//!   (24) name its message (the send stage's), `s_push_words` (16) its length in words. It
//!   becomes the newest message held and reserves its words.
//! - `s_cur_valid`: the message `s_push_qp` / `s_push_psn` is being transmitted (by the
//!   send stage; it counts for `m_on_una` as a held one does).
//! - `s_grant`: the oldest message held and not yet granted is granted (its message was
//!   taken; a push and its grant may come in the same clock).
//! - `s_pop`: a word leaves the buffer (one reserved word less); `s_pop_last`: that word is
//!   the last of the oldest message held, which leaves the ledger.
//! - `s_burst_end`: a payload burst ended on the read port: the long payload, if any, has
//!   arrived (`m_long` falls).
//! - `s_words` (16): the words of the payload that may be read early next.
//! - `m_room` (registered): at the last clock edge, after that clock's push and pops, fewer
//!   than two messages were held and `s_words` (its value before the edge) more words fit
//!   beside the words reserved within `depth`; low the clock after a push.
//! - `m_msgs` (2): messages held; `m_granted` (2): granted ones among them; `m_out_ok`:
//!   `m_granted != 0` (the buffer's words may go out).
//! - `m_long`: a payload of more than `depth` words was pushed and its burst has not ended.
//! - `s_una_qp` (6), `s_una_psn` (24), `m_on_una` (combinational): a message held, or
//!   the current one (`s_cur_valid`), is that QP's PSN.
//!
//! Latency: every output but `m_on_una` follows its inputs by one clock.
//! Throughput: a push, a grant and a pop in every clock.
//! Limits: at most two messages (a push while two are held, a grant with none ungranted
//! or a pop with nothing reserved is the caller's error, as the `TransmitMachine`'s
//! send stage never makes them); `depth` in 1..=4096 words, a push of at most 8192.
//!
//! `m_room` is a register so that the payload request does not wait for the adder and
//! compare of the words reserved (the ECP5 critical path of the `TransmitMachine` ran from
//! the send stage's rounded length through them); the value is the same as a compare in
//! the clock it is used, as long as `s_words` holds for a clock before it is used.

use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct PayloadLedger {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_push: Signal<In, Bit>,
    pub s_push_qp: Signal<In, Bits<6>>,
    pub s_push_psn: Signal<In, Bits<24>>,
    pub s_push_words: Signal<In, Bits<16>>,
    pub s_cur_valid: Signal<In, Bit>,
    pub s_grant: Signal<In, Bit>,
    pub s_pop: Signal<In, Bit>,
    pub s_pop_last: Signal<In, Bit>,
    pub s_burst_end: Signal<In, Bit>,
    pub s_words: Signal<In, Bits<16>>,
    pub m_room: Signal<Out, Bit>,
    pub m_msgs: Signal<Out, Bits<2>>,
    pub m_granted: Signal<Out, Bits<2>>,
    pub m_out_ok: Signal<Out, Bit>,
    pub m_long: Signal<Out, Bit>,
    pub s_una_qp: Signal<In, Bits<6>>,
    pub s_una_psn: Signal<In, Bits<24>>,
    pub m_on_una: Signal<Out, Bit>,
    msgs: DFF<Bits<2>>,
    granted: DFF<Bits<2>>,
    a_qp: DFF<Bits<6>>,
    a_psn: DFF<Bits<24>>,
    b_qp: DFF<Bits<6>>,
    b_psn: DFF<Bits<24>>,
    reserved: DFF<Bits<16>>,
    long: DFF<Bit>,
    room: DFF<Bit>,
    msgs_left: Signal<Local, Bits<2>>,
    granted_left: Signal<Local, Bits<2>>,
    /// `reserved + s_words`, compared against `depth` (no pop) and `depth + 1` (a pop).
    sum: Signal<Local, Bits<16>>,
    depth: Constant<Bits<16>>,
    depth_plus_one: Constant<Bits<16>>,
}

impl PayloadLedger {
    /// A ledger of a buffer of `depth` words (1..=4096).
    pub fn new(depth: usize) -> Self {
        assert!(
            (1..=4096).contains(&depth),
            "PayloadLedger: depth must be 1..=4096 words, got {depth}"
        );
        PayloadLedger {
            clock: Default::default(),
            reset: Default::default(),
            s_push: Default::default(),
            s_push_qp: Default::default(),
            s_push_psn: Default::default(),
            s_push_words: Default::default(),
            s_cur_valid: Default::default(),
            s_grant: Default::default(),
            s_pop: Default::default(),
            s_pop_last: Default::default(),
            s_burst_end: Default::default(),
            s_words: Default::default(),
            m_room: Default::default(),
            m_msgs: Default::default(),
            m_granted: Default::default(),
            m_out_ok: Default::default(),
            m_long: Default::default(),
            s_una_qp: Default::default(),
            s_una_psn: Default::default(),
            m_on_una: Default::default(),
            msgs: Default::default(),
            granted: Default::default(),
            a_qp: Default::default(),
            a_psn: Default::default(),
            b_qp: Default::default(),
            b_psn: Default::default(),
            reserved: Default::default(),
            long: Default::default(),
            room: Default::default(),
            msgs_left: Default::default(),
            granted_left: Default::default(),
            sum: Default::default(),
            depth: Constant::new((depth as u64).to_bits()),
            depth_plus_one: Constant::new((depth as u64 + 1).to_bits()),
        }
    }
}

impl ClockedBlock for PayloadLedger {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

impl Logic for PayloadLedger {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, msgs, granted, a_qp, a_psn, b_qp, b_psn, reserved, long, room);
        self.m_msgs.next = self.msgs.q.val();
        self.m_granted.next = self.granted.q.val();
        self.m_out_ok.next = self.granted.q.val() != 0;
        self.m_long.next = self.long.q.val();
        self.m_room.next = self.room.q.val();
        self.m_on_una.next = (self.s_cur_valid.val()
            & (self.s_push_qp.val() == self.s_una_qp.val())
            & (self.s_push_psn.val() == self.s_una_psn.val()))
            | ((self.msgs.q.val() != 0)
                & (self.a_qp.q.val() == self.s_una_qp.val())
                & (self.a_psn.q.val() == self.s_una_psn.val()))
            | ((self.msgs.q.val() == 2)
                & (self.b_qp.q.val() == self.s_una_qp.val())
                & (self.b_psn.q.val() == self.s_una_psn.val()));
        // Words reserved: + a push's words, - each word out.
        if self.s_push.val() {
            if self.s_pop.val() {
                self.reserved.d.next = self.reserved.q.val() + self.s_push_words.val() - 1;
            } else {
                self.reserved.d.next = self.reserved.q.val() + self.s_push_words.val();
            }
        } else if self.s_pop.val() {
            self.reserved.d.next = self.reserved.q.val() - 1;
        }
        // Messages held: + a push, - its last word out; the granted ones: + a grant, - its
        // last word out (the oldest goes first).
        self.msgs_left.next = self.msgs.q.val();
        self.granted_left.next = self.granted.q.val();
        if self.s_pop_last.val() {
            self.msgs_left.next = self.msgs.q.val() - 1;
            self.granted_left.next = self.granted.q.val() - 1;
            self.a_qp.d.next = self.b_qp.q.val();
            self.a_psn.d.next = self.b_psn.q.val();
        }
        self.msgs.d.next = self.msgs_left.val();
        self.granted.d.next = self.granted_left.val();
        if self.s_push.val() {
            self.msgs.d.next = self.msgs_left.val() + 1;
            if self.msgs_left.val() == 0 {
                self.a_qp.d.next = self.s_push_qp.val();
                self.a_psn.d.next = self.s_push_psn.val();
            } else {
                self.b_qp.d.next = self.s_push_qp.val();
                self.b_psn.d.next = self.s_push_psn.val();
            }
        }
        if self.s_grant.val() {
            self.granted.d.next = self.granted_left.val() + 1;
        }
        // A long payload's burst is arriving (pushed with no other payload in flight: the
        // first payload burst to end is its).
        if self.s_burst_end.val() {
            self.long.d.next = false;
        }
        if self.s_push.val() & (self.s_push_words.val() > self.depth.val()) {
            self.long.d.next = true;
        }
        // The room after this clock's pops (a pop frees one word, a last one a message),
        // from registers, with the pops selecting at the end.
        self.sum.next = self.reserved.q.val() + self.s_words.val();
        self.room.d.next = !self.s_push.val()
            & ((self.msgs.q.val() != 2) | self.s_pop_last.val())
            & ((self.sum.val() <= self.depth.val())
                | (self.s_pop.val() & (self.sum.val() <= self.depth_plus_one.val())));
        if self.reset.val() {
            self.msgs.d.next = 0.into();
            self.granted.d.next = 0.into();
            self.reserved.d.next = 0.into();
            self.long.d.next = false;
            self.room.d.next = false;
        }
    }
}
