//! `EventCounter`: a 32-bit statistics counter whose count pulse is registered first, so
//! that the pulse's logic (a cell's verdict, an engine's decision) and the 32-bit carry
//! chain are in different clocks.
//!
//! Follows the counter registers of `docs/csr-map.md` (32 bits, wrapping, cleared by
//! reset) and the counter latency of `CellReassembler`'s doc comment (a cell shows in its
//! counter three clocks after its CRC word).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: count 0, a pulse registered in the
//!   clock before is dropped).
//! - `s_event` (in): one event happens in this clock.
//! - `m_count` (out, 32): the count, registered, wrapping at 2^32.
//!
//! Latency: an event in clock t shows in `m_count` from clock t + 2 (registered at the edge
//! that ends t, counted at the next one). Throughput: one event per clock.
//! Limits: no parameters; 33 flip-flops and one 32-bit incrementer.

use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct EventCounter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_event: Signal<In, Bit>,
    pub m_count: Signal<Out, Bits<32>>,
    /// `s_event` of the clock before.
    pending: DFF<Bit>,
    count: DFF<Bits<32>>,
}

impl EventCounter {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for EventCounter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, pending, count);
        self.pending.d.next = self.s_event.val();
        if self.pending.q.val() {
            self.count.d.next = self.count.q.val() + 1;
        }
        if self.reset.val() {
            self.pending.d.next = false;
            self.count.d.next = 0.into();
        }
        self.m_count.next = self.count.q.val();
    }
}

impl ClockedBlock for EventCounter {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
