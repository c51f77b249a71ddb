//! `DmaReadArbiter`: two DMA read clients onto one host-memory read port; a client may
//! have up to [`DmaReadArbiter::MAX_BURSTS`] bursts in flight.
//!
//! Follows the DMA read client bundle and the "DMA ports" paragraph of
//! `docs/nic-blocks.md` (tx read: `SendQueueEngine` and `ResponseGenerator`; rx read:
//! `ReceiveQueueEngine` and the `SendQueueEngine` completion re-read); host-memory rules
//! (exactly `words` beats per read, in request order) in `docs/nic-architecture.md`.
//!
//! Ports (all valid/ready: a beat moves on a rising edge where both are high):
//! - `clock`, `reset` (synchronous, active high: forgets the bursts in flight and the
//!   round-robin state). It steers no handshake with the clients (`docs/nic-blocks.md`,
//!   "Reset"), only host memory's, which leaves `NicTop`: `m_req_valid` and `s_data_ready`
//!   are low while it is high (a client's request or word taken then is dropped).
//! - Client A: request `s_a_req_valid` / `s_a_req_ready`, `s_a_req_addr` (32, 8-aligned),
//!   `s_a_req_words` (16, >= 1); data `m_a_valid` / `m_a_ready`, `m_a_data` (64),
//!   `m_a_last`.
//! - Client B: the same with `s_b_req_*` / `m_b_*`.
//! - Towards host memory: request `m_req_valid` / `m_req_ready`, `m_req_addr` (32),
//!   `m_req_words` (16); data `s_data_valid` / `s_data_ready`, `s_data` (64),
//!   `s_data_last`.
//!
//! Arbitration: the arbiter counts the bursts in flight (request taken, last beat not yet
//! delivered) and remembers their client, the *owner*; all bursts in flight belong to
//! one client. One client's request is shown on `m_req_*` (round robin per burst: when
//! both ask, the one not served last goes first; once shown, a request stays until host
//! memory takes it), and only while no burst is in flight, or while the bursts in flight
//! are its own and fewer than `MAX_BURSTS`. So a client's next request goes out while its
//! current burst streams (host memory returns it after that one, in request order), but
//! another client's request waits until the owner's bursts have ended: one client's data
//! never wait behind the other's, whose `ready` may depend on anything. Every data beat
//! goes to the owner.
//!
//! Latency: none on either path (requests and data pass through combinationally; a
//! client's `ready` depends on host memory's and, for requests, on the other client's
//! `valid`). Throughput: a burst streams one word per clock. A client that asks again
//! while its burst streams pays host memory's latency once for the run of bursts; a
//! change of client costs one clock (the request, issued the clock after the previous
//! owner's last word) plus host memory's latency. No starvation: while the other client
//! asks, the round robin shows its request and the owner issues no more, so it is served
//! after at most `MAX_BURSTS` bursts of the owner.
//! Limits: relies on host memory ending every burst with `s_data_last` (it returns exactly
//! `words` beats, in request order); data beats arriving while no burst is in flight are
//! not accepted.

use crate::common::RoundRobin;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct DmaReadArbiter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_a_req_valid: Signal<In, Bit>,
    pub s_a_req_ready: Signal<Out, Bit>,
    pub s_a_req_addr: Signal<In, Bits<32>>,
    pub s_a_req_words: Signal<In, Bits<16>>,
    pub m_a_data: Signal<Out, Bits<64>>,
    pub m_a_valid: Signal<Out, Bit>,
    pub m_a_ready: Signal<In, Bit>,
    pub m_a_last: Signal<Out, Bit>,
    pub s_b_req_valid: Signal<In, Bit>,
    pub s_b_req_ready: Signal<Out, Bit>,
    pub s_b_req_addr: Signal<In, Bits<32>>,
    pub s_b_req_words: Signal<In, Bits<16>>,
    pub m_b_data: Signal<Out, Bits<64>>,
    pub m_b_valid: Signal<Out, Bit>,
    pub m_b_ready: Signal<In, Bit>,
    pub m_b_last: Signal<Out, Bit>,
    pub m_req_valid: Signal<Out, Bit>,
    pub m_req_ready: Signal<In, Bit>,
    pub m_req_addr: Signal<Out, Bits<32>>,
    pub m_req_words: Signal<Out, Bits<16>>,
    pub s_data: Signal<In, Bits<64>>,
    pub s_data_valid: Signal<In, Bit>,
    pub s_data_ready: Signal<Out, Bit>,
    pub s_data_last: Signal<In, Bit>,
    /// Bursts in flight (request taken, last beat not yet delivered), 0..=`MAX_BURSTS`
    /// (fewer than `MAX_BURSTS` while bit 2 is clear).
    inflight: DFF<Bits<3>>,
    /// The client that owns the bursts in flight (1 = B).
    owner_b: DFF<Bit>,
    /// The round robin between A (index 0) and B (index 1), per burst.
    rr: RoundRobin<2, 1>,
    /// A request was shown last clock and not taken: keep showing it.
    hold: DFF<Bit>,
    /// The client whose request is held (1 = B).
    held_b: DFF<Bit>,
    /// The client whose request is shown this clock (1 = B).
    grant_b: Signal<Local, Bit>,
    /// `m_req_valid`.
    asking: Signal<Local, Bit>,
    /// A burst is in flight.
    busy: Signal<Local, Bit>,
    /// The shown client may issue this clock: nothing in flight, or its own bursts and
    /// room for one more (not in reset).
    idle: Signal<Local, Bit>,
    /// A request is taken this clock.
    issue: Signal<Local, Bit>,
    /// A burst's last beat is delivered this clock.
    done: Signal<Local, Bit>,
    /// `s_data_ready`: the owner's data `ready` during a burst.
    taking: Signal<Local, Bit>,
}

impl DmaReadArbiter {
    /// Bursts one client may have in flight (the SendQueueEngine has at most three: a
    /// payload, the next WQE's words 0-4 and its words 5-7). `update()` tests the count's
    /// bit 2, so this is 4.
    pub const MAX_BURSTS: u64 = 4;

    /// The arbiter has no parameters.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for DmaReadArbiter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, inflight, owner_b, hold, held_b);
        self.rr.clock.next = self.clock.val();
        self.rr.reset.next = self.reset.val();
        self.busy.next = self.inflight.q.val().any();
        // Request side.
        self.rr.s_request.next = bit_cast::<2, 1>(self.s_a_req_valid.val().into())
            | (bit_cast::<2, 1>(self.s_b_req_valid.val().into()) << 1);
        self.grant_b.next = self.rr.m_grant_index.val().any();
        if self.hold.q.val() {
            self.grant_b.next = self.held_b.q.val();
        }
        self.idle.next = !self.busy.val()
            | ((self.owner_b.q.val() == self.grant_b.val()) & !self.inflight.q.val().get_bit(2));
        self.asking.next = self.idle.val() & self.s_a_req_valid.val();
        if self.grant_b.val() {
            self.asking.next = self.idle.val() & self.s_b_req_valid.val();
        }
        self.m_req_valid.next = self.asking.val() & !self.reset.val();
        self.m_req_addr.next = self.s_a_req_addr.val();
        self.m_req_words.next = self.s_a_req_words.val();
        if self.grant_b.val() {
            self.m_req_addr.next = self.s_b_req_addr.val();
            self.m_req_words.next = self.s_b_req_words.val();
        }
        self.s_a_req_ready.next = self.idle.val() & !self.grant_b.val() & self.m_req_ready.val();
        self.s_b_req_ready.next = self.idle.val() & self.grant_b.val() & self.m_req_ready.val();
        self.hold.d.next = self.asking.val() & !self.m_req_ready.val();
        self.rr.s_served.next = self.asking.val() & self.m_req_ready.val();
        self.rr.s_served_index.next = bit_cast::<1, 1>(self.grant_b.val().into());
        self.held_b.d.next = self.grant_b.val();
        self.issue.next = self.asking.val() & self.m_req_ready.val();
        if self.issue.val() {
            self.owner_b.d.next = self.grant_b.val();
        }
        // Data side: the owner's data while a burst is in flight.
        self.taking.next = false;
        if self.busy.val() {
            self.taking.next = self.m_a_ready.val();
            if self.owner_b.q.val() {
                self.taking.next = self.m_b_ready.val();
            }
        }
        self.s_data_ready.next = self.taking.val() & !self.reset.val();
        self.m_a_data.next = self.s_data.val();
        self.m_b_data.next = self.s_data.val();
        self.m_a_last.next = self.s_data_last.val();
        self.m_b_last.next = self.s_data_last.val();
        self.m_a_valid.next = self.busy.val() & !self.owner_b.q.val() & self.s_data_valid.val();
        self.m_b_valid.next = self.busy.val() & self.owner_b.q.val() & self.s_data_valid.val();
        self.done.next = self.taking.val() & self.s_data_valid.val() & self.s_data_last.val();
        if self.issue.val() & !self.done.val() {
            self.inflight.d.next = self.inflight.q.val() + 1;
        }
        if self.done.val() & !self.issue.val() {
            self.inflight.d.next = self.inflight.q.val() - 1;
        }
        if self.reset.val() {
            self.inflight.d.next = 0.into();
            self.hold.d.next = false;
        }
    }
}

impl ClockedBlock for DmaReadArbiter {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
