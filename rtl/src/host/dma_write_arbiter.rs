//! `DmaWriteArbiter`: two DMA write clients onto the NIC's one host-memory write port.
//!
//! Follows the DMA write client bundle and the "DMA ports" paragraph of
//! `docs/nic-blocks.md` (write = `ReceiveQueueEngine` payload and atomic writes,
//! `CompletionQueue`); host-memory rules in `docs/nic-architecture.md`.
//!
//! Ports (all valid/ready: a beat moves on a rising edge where both are high):
//! - `clock`, `reset` (synchronous, active high: forgets the round-robin state). It steers
//!   no handshake with the clients (`docs/nic-blocks.md`, "Reset"), only host memory's,
//!   which leaves `NicTop`: `m_wr_valid` is low while it is high, so no beat reaches host
//!   memory (a client's beat taken then is dropped).
//! - `s_a_wr_valid` / `s_a_wr_ready`, `s_a_wr_addr` (32), `s_a_wr_data` (64),
//!   `s_a_wr_strobe` (8): client A.
//! - `s_b_wr_valid` / `s_b_wr_ready`, `s_b_wr_addr` (32), `s_b_wr_data` (64),
//!   `s_b_wr_strobe` (8): client B.
//! - `m_wr_valid` / `m_wr_ready`, `m_wr_addr` (32), `m_wr_data` (64), `m_wr_strobe` (8):
//!   towards host memory.
//!
//! Arbitration: round robin per beat. When both clients offer a beat, the one that did
//! not move the last beat goes first; a lone client takes every clock. Once a beat is
//! shown on `m_wr_*` it stays there (same client, same fields) until host memory takes
//! it, so `m_wr_*` keeps the valid/ready rule even when the other client turns up
//! meanwhile. Each client's beats leave in its own order, unchanged.
//!
//! Latency: none (combinational pass-through; `s_*_ready` depends on `m_wr_ready` and on
//! both clients' `valid`). Throughput: one beat per clock. No starvation: a waiting
//! client's beat moves after at most one beat of the other client.

use crate::common::RoundRobin;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct DmaWriteArbiter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_a_wr_valid: Signal<In, Bit>,
    pub s_a_wr_ready: Signal<Out, Bit>,
    pub s_a_wr_addr: Signal<In, Bits<32>>,
    pub s_a_wr_data: Signal<In, Bits<64>>,
    pub s_a_wr_strobe: Signal<In, Bits<8>>,
    pub s_b_wr_valid: Signal<In, Bit>,
    pub s_b_wr_ready: Signal<Out, Bit>,
    pub s_b_wr_addr: Signal<In, Bits<32>>,
    pub s_b_wr_data: Signal<In, Bits<64>>,
    pub s_b_wr_strobe: Signal<In, Bits<8>>,
    pub m_wr_valid: Signal<Out, Bit>,
    pub m_wr_ready: Signal<In, Bit>,
    pub m_wr_addr: Signal<Out, Bits<32>>,
    pub m_wr_data: Signal<Out, Bits<64>>,
    pub m_wr_strobe: Signal<Out, Bits<8>>,
    /// The round robin between A (index 0) and B (index 1), per beat.
    rr: RoundRobin<2, 1>,
    /// A beat was shown last clock and not taken: keep showing it.
    hold: DFF<Bit>,
    /// The client whose beat is held (1 = B).
    held_b: DFF<Bit>,
    /// The client shown on `m_wr_*` this clock (1 = B).
    grant_b: Signal<Local, Bit>,
    /// `m_wr_valid`: the granted client offers a beat (and not in reset).
    shown: Signal<Local, Bit>,
    /// Host memory ready: the granted client's `ready`.
    accept: Signal<Local, Bit>,
}

impl DmaWriteArbiter {
    /// The arbiter has no parameters.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for DmaWriteArbiter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, hold, held_b);
        self.rr.clock.next = self.clock.val();
        self.rr.reset.next = self.reset.val();
        self.rr.s_request.next = bit_cast::<2, 1>(self.s_a_wr_valid.val().into())
            | (bit_cast::<2, 1>(self.s_b_wr_valid.val().into()) << 1);
        self.grant_b.next = self.rr.m_grant_index.val().any();
        if self.hold.q.val() {
            self.grant_b.next = self.held_b.q.val();
        }
        self.shown.next = self.s_a_wr_valid.val();
        if self.grant_b.val() {
            self.shown.next = self.s_b_wr_valid.val();
        }
        self.accept.next = self.m_wr_ready.val();
        self.m_wr_valid.next = self.shown.val() & !self.reset.val();
        self.m_wr_addr.next = self.s_a_wr_addr.val();
        self.m_wr_data.next = self.s_a_wr_data.val();
        self.m_wr_strobe.next = self.s_a_wr_strobe.val();
        if self.grant_b.val() {
            self.m_wr_addr.next = self.s_b_wr_addr.val();
            self.m_wr_data.next = self.s_b_wr_data.val();
            self.m_wr_strobe.next = self.s_b_wr_strobe.val();
        }
        self.s_a_wr_ready.next = !self.grant_b.val() & self.accept.val();
        self.s_b_wr_ready.next = self.grant_b.val() & self.accept.val();
        self.hold.d.next = self.shown.val() & !self.m_wr_ready.val();
        self.held_b.d.next = self.grant_b.val();
        self.rr.s_served.next = self.shown.val() & self.m_wr_ready.val();
        self.rr.s_served_index.next = bit_cast::<1, 1>(self.grant_b.val().into());
    }
}

impl ClockedBlock for DmaWriteArbiter {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
