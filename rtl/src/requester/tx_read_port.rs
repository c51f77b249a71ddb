//! `TxReadPort`: the `TransmitMachine`'s tx DMA read client, shared by the WQE fetch and
//! the payload reads: it shows one request at a time (a payload read before the fetch's,
//! a request shown and not taken keeps the port), remembers which kind each burst in
//! flight is (a 4-deep tag queue, in request order), and routes the returning words to the
//! fetch or into the [`PayloadBuffer`], where payload words wait for the message source.
//!
//! Follows "DMA read client" (bursts come back in request order, exactly `words` beats)
//! and "Message rate of short messages" (the payload buffer frees the port for the next
//! WQE) in `docs/nic-blocks.md`.
//!
//! Ports (valid/ready; a beat moves on a rising edge where both are high):
//! - `clock`, `reset` (synchronous, active high: no burst in flight, the buffer empty).
//!   Reset steers no handshake (`docs/nic-blocks.md`, "Reset"): what is taken in a reset
//!   clock is dropped at that edge.
//! - Fetch requests: `s_fetch_req_valid` / `s_fetch_req_ready`, `s_fetch_req_addr` (32),
//!   `s_fetch_req_words` (16).
//! - Payload requests: `s_pay_req_valid`, `s_pay_req_addr` (32), `s_pay_req_words` (16);
//!   `m_pay_req_taken` (combinational): taken this clock. Shown unless a fetch request
//!   shown last clock is still waiting; the source keeps its fields while it waits.
//! - To host memory: `m_req_valid` / `m_req_ready`, `m_req_addr` (32), `m_req_words` (16);
//!   data `s_rd_data` (64), `s_rd_valid` / `s_rd_ready`, `s_rd_last`.
//! - To the fetch: `m_fetch_data` (64), `m_fetch_valid` / `m_fetch_ready` (words of the
//!   oldest burst in flight when it is a fetch's).
//! - Payload words out of the buffer: `m_pay_valid` / `m_pay_ready`, `m_pay_data` (64),
//!   `m_pay_last` (the last word of its burst).
//! - `m_pay_burst_end` (combinational): a payload burst's last word entered the buffer.
//!
//! Latency: a request goes out in the clock it is shown; a fetch word passes through
//! combinationally; a payload word is offered one clock after it enters the buffer.
//! Throughput: a request and a data word every clock.
//! Limits: at most four bursts in flight (the `TransmitMachine` has at most one WQE's two
//! reads and two payloads); the buffer holds `PAYLOAD_BUFFER_DEPTH` words (a longer burst
//! streams through, back-pressured by `m_pay_ready`). No parameters.

use crate::requester::PayloadBuffer;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct TxReadPort {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_fetch_req_valid: Signal<In, Bit>,
    pub s_fetch_req_ready: Signal<Out, Bit>,
    pub s_fetch_req_addr: Signal<In, Bits<32>>,
    pub s_fetch_req_words: Signal<In, Bits<16>>,
    pub s_pay_req_valid: Signal<In, Bit>,
    pub s_pay_req_addr: Signal<In, Bits<32>>,
    pub s_pay_req_words: Signal<In, Bits<16>>,
    pub m_pay_req_taken: Signal<Out, Bit>,
    pub m_req_valid: Signal<Out, Bit>,
    pub m_req_ready: Signal<In, Bit>,
    pub m_req_addr: Signal<Out, Bits<32>>,
    pub m_req_words: Signal<Out, Bits<16>>,
    pub s_rd_data: Signal<In, Bits<64>>,
    pub s_rd_valid: Signal<In, Bit>,
    pub s_rd_ready: Signal<Out, Bit>,
    pub s_rd_last: Signal<In, Bit>,
    pub m_fetch_data: Signal<Out, Bits<64>>,
    pub m_fetch_valid: Signal<Out, Bit>,
    pub m_fetch_ready: Signal<In, Bit>,
    pub m_pay_data: Signal<Out, Bits<64>>,
    pub m_pay_valid: Signal<Out, Bit>,
    pub m_pay_ready: Signal<In, Bit>,
    pub m_pay_last: Signal<Out, Bit>,
    pub m_pay_burst_end: Signal<Out, Bit>,
    /// The payload words read from host memory, on their way to `m_pay_*`.
    buffer: PayloadBuffer,
    // Bursts in flight in request order (bit i of `tags`: the i-th oldest is a payload
    // read).
    tags: DFF<Bits<4>>,
    count: DFF<Bits<3>>,
    /// A payload (fetch) request shown last clock and not taken: it keeps the port.
    pay_held: DFF<Bit>,
    fetch_held: DFF<Bit>,
    head_pay: Signal<Local, Bit>,
    rd_ready: Signal<Local, Bit>,
    burst_end: Signal<Local, Bit>,
    pay_show: Signal<Local, Bit>,
    req_taken: Signal<Local, Bit>,
    count_left: Signal<Local, Bits<3>>,
    tags_left: Signal<Local, Bits<4>>,
}

impl TxReadPort {
    /// The read client (no parameters: four bursts in flight, `PAYLOAD_BUFFER_DEPTH`
    /// words of buffer).
    pub fn new() -> Self {
        Self::default()
    }
}

impl ClockedBlock for TxReadPort {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

impl Logic for TxReadPort {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, tags, count, pay_held, fetch_held);
        self.buffer.clock.next = self.clock.val();
        self.buffer.reset.next = self.reset.val();
        // The data, in request order: into the buffer when the oldest burst in flight is
        // a payload read, else to the fetch.
        self.head_pay.next = (self.count.q.val() != 0) & self.tags.q.val().get_bit(0);
        self.m_fetch_data.next = self.s_rd_data.val();
        self.m_fetch_valid.next = self.s_rd_valid.val() & !self.head_pay.val();
        self.buffer.s_data.next = self.s_rd_data.val();
        self.buffer.s_valid.next = self.s_rd_valid.val() & self.head_pay.val();
        self.buffer.s_last.next = self.s_rd_last.val();
        self.rd_ready.next = self.m_fetch_ready.val();
        if self.head_pay.val() {
            self.rd_ready.next = self.buffer.s_ready.val();
        }
        self.s_rd_ready.next = self.rd_ready.val();
        self.burst_end.next = self.s_rd_valid.val() & self.rd_ready.val() & self.s_rd_last.val();
        self.m_pay_burst_end.next = self.burst_end.val() & self.head_pay.val();
        self.m_pay_data.next = self.buffer.m_data.val();
        self.m_pay_valid.next = self.buffer.m_valid.val();
        self.m_pay_last.next = self.buffer.m_last.val();
        self.buffer.m_ready.next = self.m_pay_ready.val();
        // The requests: the payload read or the fetch's; one shown and not taken keeps
        // the port.
        self.pay_show.next =
            (self.s_pay_req_valid.val() & !self.fetch_held.q.val()) | self.pay_held.q.val();
        self.s_fetch_req_ready.next = self.m_req_ready.val() & !self.pay_show.val();
        self.m_req_valid.next = self.s_fetch_req_valid.val();
        self.m_req_addr.next = self.s_fetch_req_addr.val();
        self.m_req_words.next = self.s_fetch_req_words.val();
        if self.pay_show.val() {
            self.m_req_valid.next = true;
            self.m_req_addr.next = self.s_pay_req_addr.val();
            self.m_req_words.next = self.s_pay_req_words.val();
        }
        self.pay_held.d.next = self.pay_show.val() & !self.m_req_ready.val();
        self.fetch_held.d.next =
            !self.pay_show.val() & self.s_fetch_req_valid.val() & !self.m_req_ready.val();
        self.m_pay_req_taken.next = self.pay_show.val() & self.m_req_ready.val();
        self.req_taken.next =
            self.m_req_ready.val() & (self.pay_show.val() | self.s_fetch_req_valid.val());
        // The tag queue: - the oldest at its burst's end, + a request taken.
        self.count_left.next = self.count.q.val();
        self.tags_left.next = self.tags.q.val();
        if self.burst_end.val() {
            self.count_left.next = self.count.q.val() - 1;
            self.tags_left.next = self.tags.q.val() >> 1;
        }
        self.count.d.next = self.count_left.val();
        self.tags.d.next = self.tags_left.val();
        if self.req_taken.val() {
            self.count.d.next = self.count_left.val() + 1;
            self.tags.d.next = self.tags_left.val()
                | (bit_cast::<4, 1>(self.m_pay_req_taken.val().into()) << self.count_left.val());
        }
        if self.reset.val() {
            self.count.d.next = 0.into();
            self.tags.d.next = 0.into();
            self.pay_held.d.next = false;
            self.fetch_held.d.next = false;
        }
    }
}
