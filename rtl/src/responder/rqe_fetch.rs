//! `RqeFetch`: reads one receive queue entry (RQE) from host memory for the
//! [`crate::ReceiveQueueEngine`] (a SEND, or an RDMA WRITE with immediate, that consumes
//! a receive buffer).
//!
//! An entry is `nic_abi::Rqe`'s three 64-bit words (`docs/nic-architecture.md`, the
//! receive queue ring): word 0 bits 31:0 the buffer address, word 1 bits 31:0 the buffer
//! length, word 2 the `wr_id`.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: abandons a fetch in progress; the
//!   captured words are kept). Reset steers no handshake: a word taken in a reset clock
//!   is captured and the fetch abandoned at that edge (the DMA path shares the reset).
//! - `start`, `addr` (32): fetch the entry at `addr`; taken only while `busy` is low.
//!   `busy`: a fetch is in progress (from the clock after `start` until the clock after
//!   `done`).
//! - DMA read client `m_req_valid/ready`, `m_req_addr` (32: `addr` as taken),
//!   `m_req_words` (16: always 3); `s_data` (64), `s_valid`, `s_ready`, `s_last`.
//! - `done`: the entry's last word (the one marked `s_last`) is taken this clock.
//! - `buffer_addr`, `buffer_length` (32): the low halves of words 0 and 1 as taken (valid
//!   in the `done` clock); `wr_id` (64): word 2, from the clock after `done`. All three
//!   are held until the next fetch takes the same word.
//!
//! Latency: the request is shown the clock after `start`; `done` is combinational with
//! the last word. Throughput: one word per clock; one fetch at a time.
//! Limits: the fetch ends at the word marked `s_last` (a DMA server returns exactly the
//! words asked for); no parameters.
//! Follows the responder's rule 6 (`docs/nic-architecture.md`, "Reliability": a
//! consuming request takes the next receive queue entry).

use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Where a fetch stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum RqeFetchState {
    Idle,
    /// The read request is shown.
    Request,
    /// Taking the entry's words.
    Data,
}

#[derive(LogicBlock, Default)]
pub struct RqeFetch {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub start: Signal<In, Bit>,
    pub addr: Signal<In, Bits<32>>,
    pub busy: Signal<Out, Bit>,
    pub m_req_valid: Signal<Out, Bit>,
    pub m_req_ready: Signal<In, Bit>,
    pub m_req_addr: Signal<Out, Bits<32>>,
    pub m_req_words: Signal<Out, Bits<16>>,
    pub s_data: Signal<In, Bits<64>>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    pub s_last: Signal<In, Bit>,
    pub done: Signal<Out, Bit>,
    pub buffer_addr: Signal<Out, Bits<32>>,
    pub buffer_length: Signal<Out, Bits<32>>,
    pub wr_id: Signal<Out, Bits<64>>,
    state: DFF<RqeFetchState>,
    addr_reg: DFF<Bits<32>>,
    /// The index of the next word (0..=2).
    beat: DFF<Bits<2>>,
    buffer_addr_reg: DFF<Bits<32>>,
    buffer_length_reg: DFF<Bits<32>>,
    wr_id_reg: DFF<Bits<64>>,
    take: Signal<Local, Bit>,
}

impl RqeFetch {
    /// The fetcher (it has no parameters).
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for RqeFetch {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            addr_reg,
            beat,
            buffer_addr_reg,
            buffer_length_reg,
            wr_id_reg
        );
        self.take.next = (self.state.q.val() == RqeFetchState::Data) & self.s_valid.val();
        match self.state.q.val() {
            RqeFetchState::Idle => {
                if self.start.val() {
                    self.addr_reg.d.next = self.addr.val();
                    self.beat.d.next = 0.into();
                    self.state.d.next = RqeFetchState::Request;
                }
            }
            RqeFetchState::Request => {
                if self.m_req_ready.val() {
                    self.state.d.next = RqeFetchState::Data;
                }
            }
            _ => {
                if self.take.val() {
                    self.beat.d.next = self.beat.q.val() + 1;
                    if self.s_last.val() {
                        self.state.d.next = RqeFetchState::Idle;
                    }
                }
            }
        }
        if self.take.val() {
            if self.beat.q.val() == 0 {
                self.buffer_addr_reg.d.next = self.s_data.val().get_bits::<32>(0);
            }
            if self.beat.q.val() == 1 {
                self.buffer_length_reg.d.next = self.s_data.val().get_bits::<32>(0);
            }
            if self.beat.q.val() == 2 {
                self.wr_id_reg.d.next = self.s_data.val();
            }
        }
        if self.reset.val() {
            self.state.d.next = RqeFetchState::Idle;
        }
        self.busy.next = self.state.q.val() != RqeFetchState::Idle;
        self.m_req_valid.next = self.state.q.val() == RqeFetchState::Request;
        self.m_req_addr.next = self.addr_reg.q.val();
        self.m_req_words.next = 3.into();
        self.s_ready.next = self.state.q.val() == RqeFetchState::Data;
        self.done.next = self.take.val() & self.s_last.val();
        self.buffer_addr.next = self.buffer_addr_reg.q.val();
        self.buffer_length.next = self.buffer_length_reg.q.val();
        self.wr_id.next = self.wr_id_reg.q.val();
    }
}

impl ClockedBlock for RqeFetch {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
