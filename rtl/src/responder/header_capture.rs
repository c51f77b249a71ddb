//! `HeaderCapture`: the receive engine's view of a cell's header, a child of
//! [`crate::ReceiveQueueEngine`]: what the presented outcome is (decoded from its header
//! fields, combinationally) and the header of the message in progress (registered from its
//! first cell as one [`MessageHeader`] bundle).
//!
//! Follows the cell format of `docs/cell-format.md` (opcodes and flag bits as
//! `crate::cell::format` names them) and the reassembler's outcome
//! (`docs/nic-blocks.md`, "Received cells": header fields held for the whole outcome).
//!
//! Ports:
//! - `clock`.
//! - The presented outcome's header: `s_outcome` (a [`CellOutcomeHeader`]), of which
//!   `opcode` (8), `flags` (8), `src_node`, `src_qp` (16 each), the low 6 bits of
//!   `dest_qp` (the engine range-checks the whole number in its `LookupCapture`), `psn`
//!   (24) and `msg_length` (32) are read; and `s_class`, that header decoded (an [`OutcomeClass`], `OutcomeClass::of`),
//!   as the [`crate::cell::OutcomeSlice`] registers it with the outcome: the decode is
//!   done there, so `capture` (which addresses the per-QP RAMs) starts at registers.
//! - Decoded (`s_class`'s fields, passed on): `first` (FIRST flag and cell sequence 0),
//!   `last_cell` (LAST flag), `ok` (status 0 and no reserved flag), `qp` (6, `dest_qp`'s low bits),
//!   `resync`, `invalidate` (those flags), `is_send` (SEND, SEND_IMMEDIATE), `is_read`
//!   (RDMA_READ_REQUEST), `is_atomic` (COMPARE_SWAP, FETCH_ADD), `consumes` (a SEND or
//!   RDMA_WRITE_IMMEDIATE: it takes a receive queue entry), `is_request` (a SEND or an
//!   opcode from RDMA_WRITE to FETCH_ADD), `is_ackish` (ACK, NACK), `is_nack`,
//!   `is_response` (RDMA_READ_RESPONSE, ATOMIC_RESPONSE), `is_atomic_response`.
//! - `s_valid` (an outcome is presented), `idle` (the engine waits for an outcome),
//!   `busy` (it cannot look a queue pair up this clock): `capture` =
//!   `idle & s_valid & !busy & !(ok & !first)`, a first or a failed cell is taken for
//!   its lookup now (a continuation cell is not: it follows its message's decision).
//!   Then `m_header` (a [`MessageHeader`]: `opcode`, `psn`, `src_node`, `src_qp`,
//!   `msg_length`, `has_immediate` (the IMMEDIATE flag)) takes the presented header at
//!   the clock edge. From the registered header, combinational: `hdr_consumes` (its
//!   opcode takes a receive queue entry), `hdr_cas` (it is a COMPARE_SWAP).
//!
//! Latency: the decoded outputs and `capture` are combinational; `m_header` the clock after `capture`.
//! Throughput: one capture per clock. Limits: none (no parameters). The header starts at
//! zero.

use crate::cell::format::{flag, opcode};
use crate::common::{CellOutcomeHeader, OutcomeClass};
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// The header fields the receive engine keeps for its message in progress (for the
/// completion, the answer's destination and the saved atomic's PSN).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct MessageHeader {
    pub opcode: Bits<8>,
    pub psn: Bits<24>,
    pub src_node: Bits<16>,
    pub src_qp: Bits<16>,
    pub msg_length: Bits<32>,
    pub has_immediate: Bit,
}

/// The fields of a packed [`MessageHeader`] (the inverse of the `LogicStruct` packing).
impl From<Bits<{ <MessageHeader as Synth>::BITS }>> for MessageHeader {
    fn from(b: Bits<{ <MessageHeader as Synth>::BITS }>) -> Self {
        let at = MessageHeader::default();
        MessageHeader {
            opcode: b.get_bits::<8>(at.get_my_offset_opcode()),
            psn: b.get_bits::<24>(at.get_my_offset_psn()),
            src_node: b.get_bits::<16>(at.get_my_offset_src_node()),
            src_qp: b.get_bits::<16>(at.get_my_offset_src_qp()),
            msg_length: b.get_bits::<32>(at.get_my_offset_msg_length()),
            has_immediate: b.get_bit(at.get_my_offset_has_immediate()),
        }
    }
}

#[derive(LogicBlock)]
pub struct HeaderCapture {
    pub clock: Signal<In, Clock>,
    pub s_outcome: Signal<In, CellOutcomeHeader>,
    pub s_class: Signal<In, OutcomeClass>,
    pub s_valid: Signal<In, Bit>,
    pub idle: Signal<In, Bit>,
    pub busy: Signal<In, Bit>,
    pub capture: Signal<Out, Bit>,
    pub first: Signal<Out, Bit>,
    pub last_cell: Signal<Out, Bit>,
    pub ok: Signal<Out, Bit>,
    pub qp: Signal<Out, Bits<6>>,
    pub resync: Signal<Out, Bit>,
    pub invalidate: Signal<Out, Bit>,
    pub is_send: Signal<Out, Bit>,
    pub is_read: Signal<Out, Bit>,
    pub is_atomic: Signal<Out, Bit>,
    pub consumes: Signal<Out, Bit>,
    pub is_request: Signal<Out, Bit>,
    pub is_ackish: Signal<Out, Bit>,
    pub is_nack: Signal<Out, Bit>,
    pub is_response: Signal<Out, Bit>,
    pub is_atomic_response: Signal<Out, Bit>,
    pub m_header: Signal<Out, MessageHeader>,
    pub hdr_consumes: Signal<Out, Bit>,
    pub hdr_cas: Signal<Out, Bit>,
    header: DFF<MessageHeader>,
    op_send: Constant<Bits<8>>,
    op_send_immediate: Constant<Bits<8>>,
    op_write_immediate: Constant<Bits<8>>,
    op_compare_swap: Constant<Bits<8>>,
    flag_immediate: Constant<Bits<8>>,
}

impl HeaderCapture {
    pub fn new() -> Self {
        let c = |v: u8| Constant::new((v as u64).to_bits());
        HeaderCapture {
            clock: Default::default(),
            s_outcome: Default::default(),
            s_class: Default::default(),
            s_valid: Default::default(),
            idle: Default::default(),
            busy: Default::default(),
            capture: Default::default(),
            first: Default::default(),
            last_cell: Default::default(),
            ok: Default::default(),
            qp: Default::default(),
            resync: Default::default(),
            invalidate: Default::default(),
            is_send: Default::default(),
            is_read: Default::default(),
            is_atomic: Default::default(),
            consumes: Default::default(),
            is_request: Default::default(),
            is_ackish: Default::default(),
            is_nack: Default::default(),
            is_response: Default::default(),
            is_atomic_response: Default::default(),
            m_header: Default::default(),
            hdr_consumes: Default::default(),
            hdr_cas: Default::default(),
            header: Default::default(),
            op_send: c(opcode::SEND),
            op_send_immediate: c(opcode::SEND_IMMEDIATE),
            op_write_immediate: c(opcode::RDMA_WRITE_IMMEDIATE),
            op_compare_swap: c(opcode::ATOMIC_COMPARE_SWAP),
            flag_immediate: c(flag::IMMEDIATE),
        }
    }
}

impl Default for HeaderCapture {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for HeaderCapture {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, header);
        self.first.next = self.s_class.val().first;
        self.last_cell.next = self.s_class.val().last_cell;
        self.ok.next = self.s_class.val().ok;
        self.qp.next = bit_cast::<6, 16>(self.s_outcome.val().dest_qp);
        self.resync.next = self.s_class.val().resync;
        self.invalidate.next = self.s_class.val().invalidate;
        self.is_send.next = self.s_class.val().is_send;
        self.is_read.next = self.s_class.val().is_read;
        self.is_atomic.next = self.s_class.val().is_atomic;
        self.consumes.next = self.s_class.val().consumes;
        self.is_request.next = self.s_class.val().is_request;
        self.is_ackish.next = self.s_class.val().is_ackish;
        self.is_nack.next = self.s_class.val().is_nack;
        self.is_response.next = self.s_class.val().is_response;
        self.is_atomic_response.next = self.s_class.val().is_atomic_response;
        self.capture.next = self.idle.val()
            & self.s_valid.val()
            & !self.busy.val()
            & !(self.ok.val() & !self.first.val());
        if self.capture.val() {
            self.header.d.next.opcode = self.s_outcome.val().opcode;
            self.header.d.next.psn = self.s_outcome.val().psn;
            self.header.d.next.src_node = self.s_outcome.val().src_node;
            self.header.d.next.src_qp = self.s_outcome.val().src_qp;
            self.header.d.next.msg_length = self.s_outcome.val().msg_length;
            self.header.d.next.has_immediate =
                (self.s_outcome.val().flags & self.flag_immediate.val()).any();
        }
        self.m_header.next = self.header.q.val();
        self.hdr_consumes.next = (self.header.q.val().opcode == self.op_send.val())
            | (self.header.q.val().opcode == self.op_send_immediate.val())
            | (self.header.q.val().opcode == self.op_write_immediate.val());
        self.hdr_cas.next = self.header.q.val().opcode == self.op_compare_swap.val();
    }
}

impl ClockedBlock for HeaderCapture {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
