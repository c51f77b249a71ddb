//! The reference model of `HeaderCapture` (`rtl/src/responder/header_capture.rs`),
//! written from its documentation and the cell format's names (`nic_rtl::cell::format`):
//! what a presented header is, and the message header kept from a capture.

use nic_rtl::cell::format::{flag, opcode};

/// The presented header fields, `s_valid`, `idle` and `busy`, in one clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeaderInputs {
    pub status: u8,
    pub opcode: u8,
    pub flags: u8,
    pub cell_seq: u16,
    pub dest_qp: u16,
    pub src_node: u16,
    pub src_qp: u16,
    pub psn: u32,
    pub msg_length: u32,
    pub s_valid: bool,
    pub idle: bool,
    pub busy: bool,
}

/// The kept header of the message in progress.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeptHeader {
    pub opcode: u8,
    pub psn: u32,
    pub src_node: u16,
    pub src_qp: u16,
    pub msg_length: u32,
    pub has_immediate: bool,
}

/// What the block shows in one clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderOutputs {
    pub capture: bool,
    pub first: bool,
    pub last_cell: bool,
    pub ok: bool,
    pub qp: u8,
    pub resync: bool,
    pub invalidate: bool,
    pub is_send: bool,
    pub is_read: bool,
    pub is_atomic: bool,
    pub consumes: bool,
    pub is_request: bool,
    pub is_ackish: bool,
    pub is_nack: bool,
    pub is_response: bool,
    pub is_atomic_response: bool,
    pub header: KeptHeader,
    pub hdr_consumes: bool,
    pub hdr_cas: bool,
}

fn consumes(op: u8) -> bool {
    matches!(
        op,
        opcode::SEND | opcode::SEND_IMMEDIATE | opcode::RDMA_WRITE_IMMEDIATE
    )
}

/// A first or a failed cell, presented while the engine is idle and not busy: it is
/// taken for its lookup (a continuation cell, good and not first, is not).
fn capture(i: &HeaderInputs) -> bool {
    let first = i.flags & flag::FIRST != 0 && i.cell_seq == 0;
    let ok = i.status == 0 && i.flags & flag::RESERVED_MASK == 0;
    i.idle && i.s_valid && !i.busy && !(ok && !first)
}

/// The kept header (zero at power-on).
#[derive(Clone, Debug, Default)]
pub struct HeaderCaptureModel {
    header: KeptHeader,
}

impl HeaderCaptureModel {
    pub fn new() -> Self {
        Self::default()
    }

    /// The outputs for `i` before the clock edge.
    pub fn outputs(&self, i: &HeaderInputs) -> HeaderOutputs {
        let op = i.opcode;
        let is_send = op == opcode::SEND || op == opcode::SEND_IMMEDIATE;
        let first = i.flags & flag::FIRST != 0 && i.cell_seq == 0;
        let ok = i.status == 0 && i.flags & flag::RESERVED_MASK == 0;
        HeaderOutputs {
            capture: capture(i),
            first,
            last_cell: i.flags & flag::LAST != 0,
            ok,
            qp: (i.dest_qp & 0x3F) as u8,
            resync: i.flags & flag::RESYNC != 0,
            invalidate: i.flags & flag::INVALIDATE != 0,
            is_send,
            is_read: op == opcode::RDMA_READ_REQUEST,
            is_atomic: op == opcode::ATOMIC_COMPARE_SWAP || op == opcode::ATOMIC_FETCH_ADD,
            consumes: consumes(op),
            is_request: is_send || (opcode::RDMA_WRITE..=opcode::ATOMIC_FETCH_ADD).contains(&op),
            is_ackish: op == opcode::ACK || op == opcode::NACK,
            is_nack: op == opcode::NACK,
            is_response: op == opcode::RDMA_READ_RESPONSE || op == opcode::ATOMIC_RESPONSE,
            is_atomic_response: op == opcode::ATOMIC_RESPONSE,
            header: self.header,
            hdr_consumes: consumes(self.header.opcode),
            hdr_cas: self.header.opcode == opcode::ATOMIC_COMPARE_SWAP,
        }
    }

    /// The clock edge.
    pub fn clock(&mut self, i: &HeaderInputs) {
        if capture(i) {
            self.header = KeptHeader {
                opcode: i.opcode,
                psn: i.psn & 0xFF_FFFF,
                src_node: i.src_node,
                src_qp: i.src_qp,
                msg_length: i.msg_length,
                has_immediate: i.flags & flag::IMMEDIATE != 0,
            };
        }
    }
}
