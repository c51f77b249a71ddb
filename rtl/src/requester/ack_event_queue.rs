//! `AckEventQueue`: a four-entry queue of acknowledgement events between the
//! `ReceiveQueueEngine` (which decodes ACKs, NACKs and responses of this NIC's own
//! requests) and the `SendQueueEngine` (whose acknowledgement machine completes the WQEs
//! they answer).
//!
//! Why it exists: the send engine takes one event at a time and spends about 8 + L clocks
//! per completed WQE on it (L = host-memory read latency: it re-reads the WQE's words
//! 0-1). Without a queue the receive engine holds the event, and so the whole ingress
//! (every cell behind it, whatever queue pair it is for) for that long; with it the
//! receive engine hands the event over and goes on with the next cell while the send
//! engine works through the queue. Follows the acknowledgement-event bundle of
//! `docs/nic-blocks.md`; order is kept (events leave in the order they came), which the
//! send engine's rules rely on (a response before the ACK that covers it).
//!
//! Ports (valid/ready; a beat moves on a rising edge where both are high):
//! - `clock`, `reset` (synchronous, active high: empties the queue).
//! - `s_ack_valid` / `s_ack_ready`, `s_ack` (40, an [`AckEvent`]: `qp` (6), `psn` (24),
//!   `syndrome` (8), `response`, `resync`): from the receive engine.
//! - `m_ack_valid` / `m_ack_ready`, `m_ack` (40, an [`AckEvent`]): to the send engine.
//!
//! The event is RustHDL `LogicStruct` ([`AckEvent`], `common/bundles.rs`): one port per
//! bundle in Verilog (`s_ack [39:0]`), one wire per field in RustHDL's VCD (`s_ack$qp`).
//!
//! Latency: one clock (an event taken at a rising edge is offered from that edge on).
//! Throughput: one event per clock in and out at the same time. `s_ack_ready` is high while
//! fewer than [`ACK_EVENT_QUEUE_DEPTH`] events wait; it depends on registers only (no path
//! from `m_ack_ready`), and nothing on `m_*` depends combinationally on `s_*`.
//! Limits: fixed depth (a ring of four 40-bit registers: no block RAM, which the iCE40
//! build has none of to spare): 102 iCE40 LUTs, 167 flip-flops, 131 MHz alone (a shift
//! register took 260 LUTs: every entry had a multiplexer in front of it).

use crate::common::AckEvent;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Events the queue holds.
pub const ACK_EVENT_QUEUE_DEPTH: usize = 4;

#[derive(LogicBlock, Default)]
pub struct AckEventQueue {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_ack_valid: Signal<In, Bit>,
    pub s_ack_ready: Signal<Out, Bit>,
    pub s_ack: Signal<In, AckEvent>,
    pub m_ack_valid: Signal<Out, Bit>,
    pub m_ack_ready: Signal<In, Bit>,
    pub m_ack: Signal<Out, AckEvent>,
    /// A ring: `count` events from entry `head` on (mod 4). Nothing moves between entries
    /// (an entry is loaded only when an event is pushed into it), so each bit costs a
    /// flip-flop with enable and the head a 4-way multiplexer.
    entry0: DFF<AckEvent>,
    entry1: DFF<AckEvent>,
    entry2: DFF<AckEvent>,
    entry3: DFF<AckEvent>,
    head: DFF<Bits<2>>,
    tail: DFF<Bits<2>>,
    count: DFF<Bits<3>>,
    head_entry: Signal<Local, AckEvent>,
    push: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
}

impl AckEventQueue {
    pub fn new() -> Self {
        Self::default()
    }
}

impl ClockedBlock for AckEventQueue {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

impl Logic for AckEventQueue {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, entry0, entry1, entry2, entry3, head, tail, count);
        self.s_ack_ready.next = self.count.q.val() != 4;
        self.m_ack_valid.next = self.count.q.val() != 0;
        self.head_entry.next = self.entry0.q.val();
        if self.head.q.val() == 1 {
            self.head_entry.next = self.entry1.q.val();
        }
        if self.head.q.val() == 2 {
            self.head_entry.next = self.entry2.q.val();
        }
        if self.head.q.val() == 3 {
            self.head_entry.next = self.entry3.q.val();
        }
        self.m_ack.next = self.head_entry.val();
        self.push.next = self.s_ack_valid.val() & (self.count.q.val() != 4);
        self.pop.next = self.m_ack_ready.val() & (self.count.q.val() != 0);
        if self.pop.val() {
            self.head.d.next = self.head.q.val() + 1;
        }
        if self.push.val() {
            self.tail.d.next = self.tail.q.val() + 1;
            if self.tail.q.val() == 0 {
                self.entry0.d.next = self.s_ack.val();
            }
            if self.tail.q.val() == 1 {
                self.entry1.d.next = self.s_ack.val();
            }
            if self.tail.q.val() == 2 {
                self.entry2.d.next = self.s_ack.val();
            }
            if self.tail.q.val() == 3 {
                self.entry3.d.next = self.s_ack.val();
            }
        }
        if self.push.val() & !self.pop.val() {
            self.count.d.next = self.count.q.val() + 1;
        }
        if self.pop.val() & !self.push.val() {
            self.count.d.next = self.count.q.val() - 1;
        }
        if self.reset.val() {
            self.count.d.next = 0.into();
            self.head.d.next = 0.into();
            self.tail.d.next = 0.into();
        }
    }
}
