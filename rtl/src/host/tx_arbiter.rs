//! `TxArbiter`: the requester's and the responder's message sources onto the one
//! `CellSegmenter`, round robin per message, locked to a source for its payload.
//!
//! Follows `docs/nic-blocks.md` ("Message source" bundle, "Acceptance of the message is the
//! grant") and `docs/nic-architecture.md` ("Deadlock freedom": a source starts its payload
//! read only after it has won the arbiter, so the tx DMA read port is only ever held by the
//! message being segmented).
//!
//! Ports (three message-source bundles, each: `*_msg_valid`, `*_msg_ready`, `*_msg` (a
//! [`MessageDescriptor`], 291 bits); then `*_payload_data` (64), `*_payload_valid`,
//! `*_payload_ready`, `*_payload_last`):
//! - `clock`, `reset` (synchronous, active high: drops the lock, the held offer and the
//!   round-robin state at the edge). Reset steers no handshake: the multiplexers and
//!   readies follow the registered lock and hold, also in a clock with `reset` high (for
//!   timing: the NIC's reset is one register fanned across the die, kept out of the
//!   handshake paths). In `NicTop` both sources and the segmenter share the reset: a
//!   handshake in a clock with `reset` high changes nothing, since every block on either
//!   side forces its registers to their reset values at that edge (what it writes into
//!   RAM is data only, read once a later message sets its state again), and from the
//!   second clock of a reset on neither source offers anything (the requester's valids are
//!   forced low in reset, the responder is idle), so no handshake passes.
//! - `s_req_msg*` / `s_req_payload_*`: the requester (`SendQueueEngine`).
//! - `s_resp_msg*` / `s_resp_payload_*`: the responder (`ResponseGenerator`).
//! - `m_msg*` / `m_payload_*`: to the `CellSegmenter`'s `s_msg*` / `s_payload_*`.
//!
//! Behaviour: while no payload is in flight the arbiter offers one source's message on
//! `m_msg`: the one that did not win last time when both are valid, else the valid one.
//! The requester counts as valid for that choice when it was valid and not granted on the
//! clock before (a message source holds its offer until it is taken); a requester offer
//! that first appears in a clock in which the responder offers too, after the responder
//! won last, waits for the responder's message. So the responder's `s_resp_msg_ready`
//! does not depend on `s_req_msg_valid` in the same clock (the two sources' decisions stay
//! apart for timing), and the arbiter still never idles while a source offers.
//! An offer that is not taken is held (same source, so the fields stay stable) until the
//! segmenter takes it. The source's `*_msg_ready` is `m_msg_ready` routed to it, so the
//! clock edge on which the segmenter accepts the message is the source's grant. A granted
//! message with `length != 0` locks the arbiter to its source: `m_payload_*` is that
//! source's payload, and no message is offered until the beat with `*_payload_last` has
//! passed. A message of length 0 does not lock.
//!
//! Latency: none; messages and payload pass combinationally (multiplexers steered by
//! registers and the responder's valid only; no path from an input valid to an output
//! ready other than `s_resp_msg_valid` to `s_req_msg_ready`).
//! Throughput: one payload word per clock, no bubbles; a new message can be offered on the
//! clock after the previous message's last payload beat (or right after a length-0 grant).
//! Limits: relies on each source's `*_payload_last` marking its message's final word.

use crate::common::{MessageDescriptor, RoundRobin};
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct TxArbiter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Requester source.
    pub s_req_msg_valid: Signal<In, Bit>,
    pub s_req_msg_ready: Signal<Out, Bit>,
    pub s_req_msg: Signal<In, MessageDescriptor>,
    pub s_req_payload_data: Signal<In, Bits<64>>,
    pub s_req_payload_valid: Signal<In, Bit>,
    pub s_req_payload_ready: Signal<Out, Bit>,
    pub s_req_payload_last: Signal<In, Bit>,
    // Responder source.
    pub s_resp_msg_valid: Signal<In, Bit>,
    pub s_resp_msg_ready: Signal<Out, Bit>,
    pub s_resp_msg: Signal<In, MessageDescriptor>,
    pub s_resp_payload_data: Signal<In, Bits<64>>,
    pub s_resp_payload_valid: Signal<In, Bit>,
    pub s_resp_payload_ready: Signal<Out, Bit>,
    pub s_resp_payload_last: Signal<In, Bit>,
    // To the segmenter.
    pub m_msg_valid: Signal<Out, Bit>,
    pub m_msg_ready: Signal<In, Bit>,
    pub m_msg: Signal<Out, MessageDescriptor>,
    pub m_payload_data: Signal<Out, Bits<64>>,
    pub m_payload_valid: Signal<Out, Bit>,
    pub m_payload_ready: Signal<In, Bit>,
    pub m_payload_last: Signal<Out, Bit>,
    /// A granted message's payload is in flight: payload path open, no message offered.
    locked: DFF<Bit>,
    /// The locked payload is the responder's.
    lock_resp: DFF<Bit>,
    /// The round robin between the responder (index 0: it goes first after reset) and
    /// the requester (index 1), per message; asked for `resp_first`, one clock ahead.
    rr: RoundRobin<2, 1>,
    /// Last clock's offer was not taken: offer the same source again.
    hold: DFF<Bit>,
    hold_resp: DFF<Bit>,
    /// The responder's offer goes first this clock (when nothing is held): the round robin
    /// favours it, or the requester was not left waiting on the clock before. Decided
    /// one clock ahead, so `s_req_msg_valid` does not reach `s_resp_msg_ready`.
    resp_first: DFF<Bit>,
    /// The source whose message is offered this clock (1 = responder).
    pick_resp: Signal<Local, Bit>,
    /// Messages may pass (no payload in flight).
    msg_open: Signal<Local, Bit>,
    /// Payload may pass (locked).
    payload_open: Signal<Local, Bit>,
    grant: Signal<Local, Bit>,
    payload_beat: Signal<Local, Bit>,
}

impl TxArbiter {
    /// An arbiter for the requester and responder message sources (no parameters).
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for TxArbiter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, locked, lock_resp, hold, hold_resp, resp_first);
        self.rr.clock.next = self.clock.val();
        self.rr.reset.next = self.reset.val();
        // Which source to offer: the held one, else the responder if it offers and goes
        // first (decided at the last edge), else the requester.
        self.pick_resp.next = self.s_resp_msg_valid.val() & self.resp_first.q.val();
        if self.hold.q.val() {
            self.pick_resp.next = self.hold_resp.q.val();
        }
        // From the lock register only: reset is kept out of the handshakes (timing). In
        // NicTop a handshake in a reset clock has no effect all the same: the sources and
        // the segmenter reset their registers at the same edge as the arbiter, and from the
        // second reset clock on no source is valid (module doc).
        self.msg_open.next = !self.locked.q.val();
        self.payload_open.next = self.locked.q.val();
        // Message path: the picked source, nothing while a payload is in flight.
        self.m_msg_valid.next = self.msg_open.val() & self.s_req_msg_valid.val();
        self.m_msg.next = self.s_req_msg.val();
        if self.pick_resp.val() {
            self.m_msg_valid.next = self.msg_open.val() & self.s_resp_msg_valid.val();
            self.m_msg.next = self.s_resp_msg.val();
        }
        // The segmenter's ready, routed to the offered source: its acceptance is the grant.
        self.s_req_msg_ready.next =
            self.msg_open.val() & !self.pick_resp.val() & self.m_msg_ready.val();
        self.s_resp_msg_ready.next =
            self.msg_open.val() & self.pick_resp.val() & self.m_msg_ready.val();
        self.grant.next = self.m_msg_valid.val() & self.m_msg_ready.val();
        // Payload path: the locked source, straight through.
        self.m_payload_valid.next = self.payload_open.val() & self.s_req_payload_valid.val();
        self.m_payload_data.next = self.s_req_payload_data.val();
        self.m_payload_last.next = self.s_req_payload_last.val();
        if self.lock_resp.q.val() {
            self.m_payload_valid.next = self.payload_open.val() & self.s_resp_payload_valid.val();
            self.m_payload_data.next = self.s_resp_payload_data.val();
            self.m_payload_last.next = self.s_resp_payload_last.val();
        }
        self.s_req_payload_ready.next =
            self.payload_open.val() & !self.lock_resp.q.val() & self.m_payload_ready.val();
        self.s_resp_payload_ready.next =
            self.payload_open.val() & self.lock_resp.q.val() & self.m_payload_ready.val();
        self.payload_beat.next = self.m_payload_valid.val() & self.m_payload_ready.val();
        // State.
        self.hold.d.next = self.m_msg_valid.val() & !self.m_msg_ready.val();
        self.hold_resp.d.next = self.pick_resp.val();
        self.rr.s_served.next = self.grant.val();
        self.rr.s_served_index.next = bit_cast::<1, 1>((!self.pick_resp.val()).into());
        // Next clock's order, from this clock's requester valid and the pointer as it is
        // after this edge: the round robin asked with the responder always requesting
        // grants the responder when the requester does not ask or the pointer favours the
        // responder. A grant this clock moves the pointer past the granted source: after
        // the requester's the responder goes first; after the responder's, the requester
        // does if it is still valid.
        self.rr.s_request.next =
            bit_cast::<2, 1>(1.into()) | (bit_cast::<2, 1>(self.s_req_msg_valid.val().into()) << 1);
        self.resp_first.d.next = self.rr.m_grant_valid.val() & !self.rr.m_grant_index.val().any();
        if self.grant.val() {
            self.resp_first.d.next = !self.pick_resp.val() | !self.s_req_msg_valid.val();
        }
        if self.grant.val() {
            if self.m_msg.val().length != 0 {
                self.locked.d.next = true;
                self.lock_resp.d.next = self.pick_resp.val();
            }
        }
        if self.payload_beat.val() & self.m_payload_last.val() {
            self.locked.d.next = false;
        }
        if self.reset.val() {
            self.locked.d.next = false;
            self.lock_resp.d.next = false;
            self.hold.d.next = false;
            self.hold_resp.d.next = false;
            self.resp_first.d.next = true;
        }
    }
}

impl ClockedBlock for TxArbiter {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
