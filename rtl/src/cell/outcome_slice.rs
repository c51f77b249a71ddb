//! `OutcomeSlice`: a register slice on the cell outcome handshake, between the
//! [`CellReassembler`](crate::CellReassembler) and the
//! [`ReceiveQueueEngine`](crate::ReceiveQueueEngine) in [`NicTop`](crate::NicTop): every
//! output is a register, so neither the engine's ready nor its decisions on the outcome
//! reach back into the reassembler in the same clock.
//!
//! A skid buffer of two entries (the output register and one skid register), each holding
//! one beat: data, bytes, last, the [`CellOutcomeHeader`] and its [`OutcomeClass`], the
//! header decoded when the beat is taken, so the engine's first level of logic on the
//! outcome's classes is a register. Follows the outcome contract of `CellReassembler`
//! (its doc comment, `docs/nic-blocks.md`, "Cell outcome"): beats leave in the order they
//! came, unchanged.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: both entries empty).
//! - In: `s_valid` / `s_ready`, `s_data` (64), `s_bytes` (4), `s_last`, `s_outcome` (a
//!   [`CellOutcomeHeader`]). `s_ready` is a register: high while the skid entry is empty.
//! - Out: `m_valid` / `m_ready`, `m_data` (64), `m_bytes` (4), `m_last`, `m_outcome`, and
//!   `m_class` (an [`OutcomeClass`]: `OutcomeClass::of(m_outcome)`), all registers
//!   (reset steers no handshake: in a reset clock `m_valid` may still show the beat the
//!   reset drops, and a beat taken then is gone; the user shares the reset).
//! - `m_valid_next`: a beat will be shown in the next clock (as `m_valid` will stand after
//!   this clock's handshakes), combinational from `s_valid`, `m_ready` and the entries.
//!
//! Latency: a beat taken at clock t is shown at t+1 (one clock). Throughput: one beat per
//! clock sustained while `m_ready` is high; after a clock with `m_valid & !m_ready` the
//! beat taken then waits in the skid entry and `s_ready` is low until the output moves.
//! Limits: no parameters.

use crate::cell::format::{flag, opcode};
use crate::common::{CellOutcomeHeader, OutcomeClass};
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct OutcomeSlice {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    pub s_data: Signal<In, Bits<64>>,
    pub s_bytes: Signal<In, Bits<4>>,
    pub s_last: Signal<In, Bit>,
    pub s_outcome: Signal<In, CellOutcomeHeader>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    pub m_data: Signal<Out, Bits<64>>,
    pub m_bytes: Signal<Out, Bits<4>>,
    pub m_last: Signal<Out, Bit>,
    pub m_outcome: Signal<Out, CellOutcomeHeader>,
    pub m_class: Signal<Out, OutcomeClass>,
    pub m_valid_next: Signal<Out, Bit>,
    // The output entry.
    main_valid: DFF<Bit>,
    main_data: DFF<Bits<64>>,
    main_bytes: DFF<Bits<4>>,
    main_last: DFF<Bit>,
    main_outcome: DFF<CellOutcomeHeader>,
    main_class: DFF<OutcomeClass>,
    // The skid entry: the beat taken while the output entry was stalled.
    skid_valid: DFF<Bit>,
    skid_data: DFF<Bits<64>>,
    skid_bytes: DFF<Bits<4>>,
    skid_last: DFF<Bit>,
    skid_outcome: DFF<CellOutcomeHeader>,
    skid_class: DFF<OutcomeClass>,
    /// The output entry takes a beat this clock (it is empty or its beat leaves).
    advance: Signal<Local, Bit>,
    /// The input's beat is taken this clock.
    take: Signal<Local, Bit>,
    /// `s_outcome` decoded.
    in_class: Signal<Local, OutcomeClass>,
    op_send: Constant<Bits<8>>,
    op_send_immediate: Constant<Bits<8>>,
    op_write: Constant<Bits<8>>,
    op_write_immediate: Constant<Bits<8>>,
    op_read: Constant<Bits<8>>,
    op_compare_swap: Constant<Bits<8>>,
    op_fetch_add: Constant<Bits<8>>,
    op_read_response: Constant<Bits<8>>,
    op_atomic_response: Constant<Bits<8>>,
    op_ack: Constant<Bits<8>>,
    op_nack: Constant<Bits<8>>,
    flag_first: Constant<Bits<8>>,
    flag_last: Constant<Bits<8>>,
    flag_invalidate: Constant<Bits<8>>,
    flag_resync: Constant<Bits<8>>,
    flag_reserved: Constant<Bits<8>>,
}

impl OutcomeSlice {
    /// The slice (no parameters).
    pub fn new() -> Self {
        let c = |v: u8| Constant::new((v as u64).to_bits());
        OutcomeSlice {
            clock: Default::default(),
            reset: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_data: Default::default(),
            s_bytes: Default::default(),
            s_last: Default::default(),
            s_outcome: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_data: Default::default(),
            m_bytes: Default::default(),
            m_last: Default::default(),
            m_outcome: Default::default(),
            m_class: Default::default(),
            m_valid_next: Default::default(),
            main_valid: Default::default(),
            main_data: Default::default(),
            main_bytes: Default::default(),
            main_last: Default::default(),
            main_outcome: Default::default(),
            main_class: Default::default(),
            skid_valid: Default::default(),
            skid_data: Default::default(),
            skid_bytes: Default::default(),
            skid_last: Default::default(),
            skid_outcome: Default::default(),
            skid_class: Default::default(),
            advance: Default::default(),
            take: Default::default(),
            in_class: Default::default(),
            op_send: c(opcode::SEND),
            op_send_immediate: c(opcode::SEND_IMMEDIATE),
            op_write: c(opcode::RDMA_WRITE),
            op_write_immediate: c(opcode::RDMA_WRITE_IMMEDIATE),
            op_read: c(opcode::RDMA_READ_REQUEST),
            op_compare_swap: c(opcode::ATOMIC_COMPARE_SWAP),
            op_fetch_add: c(opcode::ATOMIC_FETCH_ADD),
            op_read_response: c(opcode::RDMA_READ_RESPONSE),
            op_atomic_response: c(opcode::ATOMIC_RESPONSE),
            op_ack: c(opcode::ACK),
            op_nack: c(opcode::NACK),
            flag_first: c(flag::FIRST),
            flag_last: c(flag::LAST),
            flag_invalidate: c(flag::INVALIDATE),
            flag_resync: c(flag::RESYNC),
            flag_reserved: c(flag::RESERVED_MASK),
        }
    }
}

impl Default for OutcomeSlice {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for OutcomeSlice {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            main_valid,
            main_data,
            main_bytes,
            main_last,
            main_outcome,
            main_class,
            skid_valid,
            skid_data,
            skid_bytes,
            skid_last,
            skid_outcome,
            skid_class
        );
        // ---- The input's header, decoded (`OutcomeClass`) ----
        self.in_class.next.first = (self.s_outcome.val().flags & self.flag_first.val()).any()
            & (self.s_outcome.val().cell_seq == 0);
        self.in_class.next.last_cell = (self.s_outcome.val().flags & self.flag_last.val()).any();
        self.in_class.next.ok = (self.s_outcome.val().status == 0)
            & ((self.s_outcome.val().flags & self.flag_reserved.val()) == 0);
        self.in_class.next.resync = (self.s_outcome.val().flags & self.flag_resync.val()).any();
        self.in_class.next.invalidate =
            (self.s_outcome.val().flags & self.flag_invalidate.val()).any();
        self.in_class.next.is_send = (self.s_outcome.val().opcode == self.op_send.val())
            | (self.s_outcome.val().opcode == self.op_send_immediate.val());
        self.in_class.next.is_write = (self.s_outcome.val().opcode == self.op_write.val())
            | (self.s_outcome.val().opcode == self.op_write_immediate.val());
        self.in_class.next.is_read = self.s_outcome.val().opcode == self.op_read.val();
        self.in_class.next.is_atomic = (self.s_outcome.val().opcode == self.op_compare_swap.val())
            | (self.s_outcome.val().opcode == self.op_fetch_add.val());
        self.in_class.next.consumes = (self.s_outcome.val().opcode == self.op_send.val())
            | (self.s_outcome.val().opcode == self.op_send_immediate.val())
            | (self.s_outcome.val().opcode == self.op_write_immediate.val());
        self.in_class.next.is_request = (self.s_outcome.val().opcode == self.op_send.val())
            | (self.s_outcome.val().opcode == self.op_send_immediate.val())
            | ((self.s_outcome.val().opcode >= self.op_write.val())
                & (self.s_outcome.val().opcode <= self.op_fetch_add.val()));
        self.in_class.next.is_ackish = (self.s_outcome.val().opcode == self.op_ack.val())
            | (self.s_outcome.val().opcode == self.op_nack.val());
        self.in_class.next.is_nack = self.s_outcome.val().opcode == self.op_nack.val();
        self.in_class.next.is_response = (self.s_outcome.val().opcode
            == self.op_read_response.val())
            | (self.s_outcome.val().opcode == self.op_atomic_response.val());
        self.in_class.next.is_atomic_response =
            self.s_outcome.val().opcode == self.op_atomic_response.val();
        self.in_class.next.request_ok = (bit_cast::<3, 64>(self.s_outcome.val().vaddr) == 0)
            & (((self.s_outcome.val().opcode != self.op_compare_swap.val())
                & (self.s_outcome.val().opcode != self.op_fetch_add.val()))
                | ((self.s_outcome.val().dma_length == 8)
                    & (self.s_outcome.val().msg_length == 16)))
            & (((self.s_outcome.val().opcode != self.op_write.val())
                & (self.s_outcome.val().opcode != self.op_write_immediate.val()))
                | (self.s_outcome.val().msg_length == self.s_outcome.val().dma_length));

        // ---- The handshakes ----
        self.s_ready.next = !self.skid_valid.q.val();
        self.take.next = self.s_valid.val() & !self.skid_valid.q.val();
        self.advance.next = !self.main_valid.q.val() | self.m_ready.val();
        if self.advance.val() {
            if self.skid_valid.q.val() {
                // The skid entry moves to the output (no input is taken this clock).
                self.main_valid.d.next = true;
                self.main_data.d.next = self.skid_data.q.val();
                self.main_bytes.d.next = self.skid_bytes.q.val();
                self.main_last.d.next = self.skid_last.q.val();
                self.main_outcome.d.next = self.skid_outcome.q.val();
                self.main_class.d.next = self.skid_class.q.val();
                self.skid_valid.d.next = false;
            } else {
                self.main_valid.d.next = self.s_valid.val();
                self.main_data.d.next = self.s_data.val();
                self.main_bytes.d.next = self.s_bytes.val();
                self.main_last.d.next = self.s_last.val();
                self.main_outcome.d.next = self.s_outcome.val();
                self.main_class.d.next = self.in_class.val();
            }
        } else if self.take.val() {
            // The output is stalled: the beat waits in the skid entry.
            self.skid_valid.d.next = true;
        }
        // The empty skid entry takes the input every clock (kept only when `skid_valid`
        // is set), so its wide load enable does not wait for `m_ready`.
        if !self.skid_valid.q.val() {
            self.skid_data.d.next = self.s_data.val();
            self.skid_bytes.d.next = self.s_bytes.val();
            self.skid_last.d.next = self.s_last.val();
            self.skid_outcome.d.next = self.s_outcome.val();
            self.skid_class.d.next = self.in_class.val();
        }
        self.m_valid_next.next = !self.advance.val() | self.skid_valid.q.val() | self.s_valid.val();
        self.m_valid.next = self.main_valid.q.val();
        self.m_data.next = self.main_data.q.val();
        self.m_bytes.next = self.main_bytes.q.val();
        self.m_last.next = self.main_last.q.val();
        self.m_outcome.next = self.main_outcome.q.val();
        self.m_class.next = self.main_class.q.val();
        if self.reset.val() {
            self.main_valid.d.next = false;
            self.skid_valid.d.next = false;
            self.m_valid_next.next = false;
        }
    }
}

impl ClockedBlock for OutcomeSlice {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
