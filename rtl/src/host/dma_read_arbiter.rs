//! `DmaReadArbiter`: two DMA read clients onto one host-memory read port, one burst at a
//! time.
//!
//! Follows the DMA read client bundle and the "DMA ports" paragraph of
//! `docs/nic-blocks.md` (tx read: `SendQueueEngine` and `ResponseGenerator`; rx read:
//! `ReceiveQueueEngine` and the `SendQueueEngine` completion re-read); host-memory rules
//! (exactly `words` beats per read, in request order) in `docs/nic-architecture.md`.
//!
//! Ports (all valid/ready: a beat moves on a rising edge where both are high):
//! - `clock`, `reset` (synchronous, active high: forgets the burst in flight and the
//!   round-robin state).
//! - Client A: request `s_a_req_valid` / `s_a_req_ready`, `s_a_req_addr` (32, 8-aligned),
//!   `s_a_req_words` (16, >= 1); data `m_a_valid` / `m_a_ready`, `m_a_data` (64),
//!   `m_a_last`.
//! - Client B: the same with `s_b_req_*` / `m_b_*`.
//! - Towards host memory: request `m_req_valid` / `m_req_ready`, `m_req_addr` (32),
//!   `m_req_words` (16); data `s_data_valid` / `s_data_ready`, `s_data` (64),
//!   `s_data_last`.
//!
//! Arbitration: one burst outstanding at a time. While idle the arbiter shows one
//! client's request on `m_req_*` (round robin per burst: when both ask, the one not served
//! last goes first; once shown, a request stays until host memory takes it). From the
//! clock host memory takes it until the beat with `s_data_last`, every data beat goes to
//! that client and no other request is issued; then the arbiter is idle again.
//!
//! Latency: none on either path (requests and data pass through combinationally; a
//! client's `ready` depends on host memory's and, for requests, on the other client's
//! `valid`). Throughput: a burst streams one word per clock; each burst costs one more
//! clock, its request (issued the clock after the previous burst's last word) plus host
//! memory's latency. No starvation: a waiting client is served after at most one burst of
//! the other.
//! Limits: relies on host memory ending every burst with `s_data_last` (it returns exactly
//! `words` beats); data beats arriving while no burst is outstanding are not accepted.

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
    /// A burst is outstanding (request taken, last beat not yet delivered).
    busy: DFF<Bit>,
    /// The client that owns the outstanding burst (1 = B).
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
    /// Requests may move this clock (idle, not in reset).
    idle: Signal<Local, Bit>,
    /// `s_data_ready`: the owner's data `ready` during a burst.
    taking: Signal<Local, Bit>,
}

impl DmaReadArbiter {
    /// The arbiter has no parameters.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for DmaReadArbiter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, owner_b, hold, held_b);
        self.rr.clock.next = self.clock.val();
        self.rr.reset.next = self.reset.val();
        self.idle.next = !self.busy.q.val() & !self.reset.val();
        // Request side.
        self.rr.s_request.next = bit_cast::<2, 1>(self.s_a_req_valid.val().into())
            | (bit_cast::<2, 1>(self.s_b_req_valid.val().into()) << 1);
        self.grant_b.next = self.rr.m_grant_index.val().any();
        if self.hold.q.val() {
            self.grant_b.next = self.held_b.q.val();
        }
        self.asking.next = self.idle.val() & self.s_a_req_valid.val();
        if self.grant_b.val() {
            self.asking.next = self.idle.val() & self.s_b_req_valid.val();
        }
        self.m_req_valid.next = self.asking.val();
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
        if self.asking.val() & self.m_req_ready.val() {
            self.busy.d.next = true;
            self.owner_b.d.next = self.grant_b.val();
        }
        // Data side: the owner's data while a burst is outstanding.
        self.taking.next = false;
        if self.busy.q.val() & !self.reset.val() {
            self.taking.next = self.m_a_ready.val();
            if self.owner_b.q.val() {
                self.taking.next = self.m_b_ready.val();
            }
        }
        self.s_data_ready.next = self.taking.val();
        self.m_a_data.next = self.s_data.val();
        self.m_b_data.next = self.s_data.val();
        self.m_a_last.next = self.s_data_last.val();
        self.m_b_last.next = self.s_data_last.val();
        self.m_a_valid.next =
            self.busy.q.val() & !self.owner_b.q.val() & self.s_data_valid.val() & !self.reset.val();
        self.m_b_valid.next =
            self.busy.q.val() & self.owner_b.q.val() & self.s_data_valid.val() & !self.reset.val();
        if self.taking.val() & self.s_data_valid.val() & self.s_data_last.val() {
            self.busy.d.next = false;
        }
        if self.reset.val() {
            self.busy.d.next = false;
            self.hold.d.next = false;
        }
    }
}

impl ClockedBlock for DmaReadArbiter {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
