//! `PayloadBuffer`: the send engine's payload words between the tx DMA read client and
//! the message source, so the read port is free once a short payload has arrived.
//!
//! Why it exists: without it the payload burst streams straight through to the
//! `CellSegmenter`, at the segmenter's pace (after its header words), and the tx DMA read
//! client stays busy until the segmenter has taken the last word; the next WQE can only
//! be fetched after that. With it, a payload of up to [`PAYLOAD_BUFFER_DEPTH`] words is
//! read at the host memory's pace and the next WQE's read follows at once, while the
//! segmenter takes the words from here (`docs/nic-blocks.md`, "Message rate of short
//! messages"). A longer payload streams through it, back-pressured by the segmenter.
//!
//! Ports (valid/ready; a beat moves on a rising edge where both are high):
//! - `clock`, `reset` (synchronous, active high: empties the buffer).
//! - `s_valid` / `s_ready`, `s_data` (64), `s_last`: payload words in (from the DMA read).
//! - `m_valid` / `m_ready`, `m_data` (64), `m_last`: the same words out, in order.
//!
//! Latency: one clock (a word taken at a rising edge is offered from that edge on).
//! Throughput: one word per clock in and out at the same time, without bubbles.
//! `s_ready` is high while fewer than [`PAYLOAD_BUFFER_DEPTH`] words wait; it depends on
//! registers only (no path from `m_ready`), and nothing on `m_*` depends combinationally
//! on `s_*`. Words are kept in a 16 x 65-bit RAM (synchronous read: distributed RAM on
//! ECP5, block RAM on iCE40), read one word ahead; a word written into an empty buffer is
//! offered from a bypass register, since the RAM's read of that clock returns the old
//! contents (the first-word-fall-through FIFO of Cummings, "Simulation and Synthesis
//! Techniques for Asynchronous FIFO Design", reduced to one clock).
//! Limits: fixed depth; carries no message boundaries other than `last`.

use crate::common::zeroed_ram;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;
use rust_hdl::widgets::prelude::RAM;

/// Words the buffer holds: a 64-byte cell payload (8 words) and the next one's.
pub const PAYLOAD_BUFFER_DEPTH: usize = 16;

#[derive(LogicBlock)]
pub struct PayloadBuffer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    pub s_data: Signal<In, Bits<64>>,
    pub s_last: Signal<In, Bit>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    pub m_data: Signal<Out, Bits<64>>,
    pub m_last: Signal<Out, Bit>,
    /// Word (bits 63:0) and `last` (bit 64) per entry.
    ram: RAM<Bits<65>, 4>,
    head: DFF<Bits<4>>,
    tail: DFF<Bits<4>>,
    count: DFF<Bits<5>>,
    /// The head word was written into an empty buffer last clock: it is in `bypass_word`,
    /// not yet in the RAM's read register.
    bypass: DFF<Bit>,
    bypass_word: DFF<Bits<65>>,
    head_word: Signal<Local, Bits<65>>,
    push: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    /// `head` after this clock's pop: the entry the RAM reads for the next clock.
    head_next: Signal<Local, Bits<4>>,
    /// Words left after this clock's pop (before its push).
    count_left: Signal<Local, Bits<5>>,
    in_word: Signal<Local, Bits<65>>,
}

impl PayloadBuffer {
    pub fn new() -> Self {
        PayloadBuffer {
            clock: Default::default(),
            reset: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_data: Default::default(),
            s_last: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_data: Default::default(),
            m_last: Default::default(),
            ram: zeroed_ram(),
            head: Default::default(),
            tail: Default::default(),
            count: Default::default(),
            bypass: Default::default(),
            bypass_word: Default::default(),
            head_word: Default::default(),
            push: Default::default(),
            pop: Default::default(),
            head_next: Default::default(),
            count_left: Default::default(),
            in_word: Default::default(),
        }
    }
}

impl Default for PayloadBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl ClockedBlock for PayloadBuffer {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

impl Logic for PayloadBuffer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, head, tail, count, bypass, bypass_word);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.s_ready.next = self.count.q.val() != 16;
        self.m_valid.next = self.count.q.val() != 0;
        self.head_word.next = self.ram.read_data.val();
        if self.bypass.q.val() {
            self.head_word.next = self.bypass_word.q.val();
        }
        self.m_data.next = self.head_word.val().get_bits::<64>(0);
        self.m_last.next = self.head_word.val().get_bit(64);
        self.push.next = self.s_valid.val() & (self.count.q.val() != 16);
        self.pop.next = self.m_ready.val() & (self.count.q.val() != 0);
        self.in_word.next = bit_cast::<65, 64>(self.s_data.val())
            | (bit_cast::<65, 1>(self.s_last.val().into()) << 64);
        self.head_next.next = self.head.q.val();
        self.count_left.next = self.count.q.val();
        if self.pop.val() {
            self.head_next.next = self.head.q.val() + 1;
            self.count_left.next = self.count.q.val() - 1;
        }
        self.head.d.next = self.head_next.val();
        self.ram.read_address.next = self.head_next.val();
        self.ram.write_address.next = self.tail.q.val();
        self.ram.write_data.next = self.in_word.val();
        self.ram.write_enable.next = self.push.val();
        // The RAM reads the old contents of the entry written on the same edge: a word
        // pushed into a buffer that is empty after this clock's pop is the next head.
        self.bypass.d.next = self.push.val() & (self.count_left.val() == 0);
        self.bypass_word.d.next = self.in_word.val();
        if self.push.val() {
            self.tail.d.next = self.tail.q.val() + 1;
        }
        self.count.d.next = self.count_left.val();
        if self.push.val() {
            self.count.d.next = self.count_left.val() + 1;
        }
        if self.reset.val() {
            self.count.d.next = 0.into();
            self.head.d.next = 0.into();
            self.tail.d.next = 0.into();
            self.bypass.d.next = false;
        }
    }
}
