//! Payload bundles of the NIC's handshakes, declared once: a handshake is `*_valid` /
//! `*_ready` plus one of these, carried as one RustHDL `LogicStruct` signal, so wiring a
//! block is one line per bundle and a field added here appears everywhere.
//!
//! Costs of a `LogicStruct` port (measured on `AckEventQueue`, recorded in
//! `docs/nic-blocks.md`, "Bundles as LogicStruct"): the Verilog port is one vector
//! (`s_ack [39:0]`, fields at fixed offsets, first field lowest), so a Verilator trace
//! shows one bus; RustHDL's own VCD writes each field as its own wire (`s_ack$qp`).
//!
//! Follows `docs/nic-blocks.md` ("Shared port bundles", "Events between the engines").

use rust_hdl::prelude::*;

/// One acknowledgement event (`docs/nic-blocks.md`, "Events between the engines"): the
/// `ReceiveQueueEngine` decoded an ACK, NACK or response of this NIC's own request; the
/// `SendQueueEngine`'s acknowledgement machine completes the WQEs it answers.
///
/// Bits (first field lowest): `qp` 5:0, `psn` 29:6, `syndrome` 37:30 (0 = ACK), `response`
/// 38 (an RDMA READ or atomic response), `resync` 39 (the answer carried RESYNC: the
/// responder restarted its PSN sequence at `psn`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct AckEvent {
    pub qp: Bits<6>,
    pub psn: Bits<24>,
    pub syndrome: Bits<8>,
    pub response: Bit,
    pub resync: Bit,
}

/// The fields of a packed [`AckEvent`] (the inverse of the `LogicStruct` packing, at the
/// offsets it generates): for test benches and co-simulation ports.
impl From<Bits<{ <AckEvent as Synth>::BITS }>> for AckEvent {
    fn from(b: Bits<{ <AckEvent as Synth>::BITS }>) -> Self {
        let at = AckEvent::default();
        AckEvent {
            qp: b.get_bits::<6>(at.get_my_offset_qp()),
            psn: b.get_bits::<24>(at.get_my_offset_psn()),
            syndrome: b.get_bits::<8>(at.get_my_offset_syndrome()),
            response: b.get_bit(at.get_my_offset_response()),
            resync: b.get_bit(at.get_my_offset_resync()),
        }
    }
}

/// One TPT lookup (`docs/nic-blocks.md`, "TPT lookup"): the payload of the
/// `m_tpt_req_valid` / `m_tpt_req_ready` handshake from the `ReceiveQueueEngine` (its
/// `TptClient` makes it) to the `Tpt`. `access`: bit 0 remote read, bit 1 remote write,
/// bit 2 atomic; `commit` 0: check only (the request is refused by a later rule if it
/// passes, so the TPT must not use up a one-shot entry or honour `invalidate`).
///
/// Bits (first field lowest, 139 in all): `stag` 31:0, `vaddr` 95:32, `length` 127:96,
/// `access` 130:128, `invalidate` 131, `qp` 137:132, `commit` 138.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct TptRequest {
    pub stag: Bits<32>,
    pub vaddr: Bits<64>,
    pub length: Bits<32>,
    pub access: Bits<3>,
    pub invalidate: Bit,
    pub qp: Bits<6>,
    pub commit: Bit,
}

/// The fields of a packed [`TptRequest`] (the inverse of the `LogicStruct` packing).
impl From<Bits<{ <TptRequest as Synth>::BITS }>> for TptRequest {
    fn from(b: Bits<{ <TptRequest as Synth>::BITS }>) -> Self {
        let at = TptRequest::default();
        TptRequest {
            stag: b.get_bits::<32>(at.get_my_offset_stag()),
            vaddr: b.get_bits::<64>(at.get_my_offset_vaddr()),
            length: b.get_bits::<32>(at.get_my_offset_length()),
            access: b.get_bits::<3>(at.get_my_offset_access()),
            invalidate: b.get_bit(at.get_my_offset_invalidate()),
            qp: b.get_bits::<6>(at.get_my_offset_qp()),
            commit: b.get_bit(at.get_my_offset_commit()),
        }
    }
}

/// One TPT bind write (`docs/nic-blocks.md`, "TPT bind write port"): the payload of the
/// `m_bind_valid` / `m_bind_ready` handshake from the requester's `BindWriter` (a BIND
/// RKEY executed in send-queue order, source 001) to the `Tpt`. `index`: the STag's bits
/// 31:8; `key`: its bits 7:0; `rights`: bit 0 remote read, 1 remote write, 2 atomic;
/// `valid` 0 for an unbind (null address and zero length: the entry is written invalid).
/// The entry written is the one a CSR write command of the same fields leaves (one-shot 0).
///
/// Bits (first field lowest, 164 in all): `index` 23:0, `key` 31:24, `rights` 34:32,
/// `valid` 35, `vaddr` 99:36, `length` 131:100, `paddr` 163:132.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct TptBindWrite {
    pub index: Bits<24>,
    pub key: Bits<8>,
    pub rights: Bits<3>,
    pub valid: Bit,
    pub vaddr: Bits<64>,
    pub length: Bits<32>,
    pub paddr: Bits<32>,
}

/// The fields of a packed [`TptBindWrite`] (the inverse of the `LogicStruct` packing).
impl From<Bits<{ <TptBindWrite as Synth>::BITS }>> for TptBindWrite {
    fn from(b: Bits<{ <TptBindWrite as Synth>::BITS }>) -> Self {
        let at = TptBindWrite::default();
        TptBindWrite {
            index: b.get_bits::<24>(at.get_my_offset_index()),
            key: b.get_bits::<8>(at.get_my_offset_key()),
            rights: b.get_bits::<3>(at.get_my_offset_rights()),
            valid: b.get_bit(at.get_my_offset_valid()),
            vaddr: b.get_bits::<64>(at.get_my_offset_vaddr()),
            length: b.get_bits::<32>(at.get_my_offset_length()),
            paddr: b.get_bits::<32>(at.get_my_offset_paddr()),
        }
    }
}

/// One message for the cell segmenter (`docs/nic-blocks.md`, "Message source"): the
/// payload of the `*_msg_valid` / `*_msg_ready` handshake from a message source through
/// the `TxArbiter` to the `CellSegmenter`. `length` payload bytes follow on the source's
/// payload port; `vaddr`, `stag` and `dma_length` are the RETH, sent on the first cell when
/// `opcode[7:4] == 1`; `resync` sets the header's RESYNC flag.
///
/// Bits (first field lowest, 291 in all): `opcode` 7:0, `dest_node` 23:8, `src_node`
/// 39:24, `dest_qp` 55:40, `src_qp` 71:56, `psn` 95:72, `length` 127:96, `vaddr` 191:128,
/// `stag` 223:192, `dma_length` 255:224, `immediate` 287:256, `has_immediate` 288,
/// `invalidate` 289, `resync` 290.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct MessageDescriptor {
    pub opcode: Bits<8>,
    pub dest_node: Bits<16>,
    pub src_node: Bits<16>,
    pub dest_qp: Bits<16>,
    pub src_qp: Bits<16>,
    pub psn: Bits<24>,
    pub length: Bits<32>,
    pub vaddr: Bits<64>,
    pub stag: Bits<32>,
    pub dma_length: Bits<32>,
    pub immediate: Bits<32>,
    pub has_immediate: Bit,
    pub invalidate: Bit,
    pub resync: Bit,
}

/// The fields of a packed [`MessageDescriptor`] (the inverse of the `LogicStruct` packing).
impl From<Bits<{ <MessageDescriptor as Synth>::BITS }>> for MessageDescriptor {
    fn from(b: Bits<{ <MessageDescriptor as Synth>::BITS }>) -> Self {
        let at = MessageDescriptor::default();
        MessageDescriptor {
            opcode: b.get_bits::<8>(at.get_my_offset_opcode()),
            dest_node: b.get_bits::<16>(at.get_my_offset_dest_node()),
            src_node: b.get_bits::<16>(at.get_my_offset_src_node()),
            dest_qp: b.get_bits::<16>(at.get_my_offset_dest_qp()),
            src_qp: b.get_bits::<16>(at.get_my_offset_src_qp()),
            psn: b.get_bits::<24>(at.get_my_offset_psn()),
            length: b.get_bits::<32>(at.get_my_offset_length()),
            vaddr: b.get_bits::<64>(at.get_my_offset_vaddr()),
            stag: b.get_bits::<32>(at.get_my_offset_stag()),
            dma_length: b.get_bits::<32>(at.get_my_offset_dma_length()),
            immediate: b.get_bits::<32>(at.get_my_offset_immediate()),
            has_immediate: b.get_bit(at.get_my_offset_has_immediate()),
            invalidate: b.get_bit(at.get_my_offset_invalidate()),
            resync: b.get_bit(at.get_my_offset_resync()),
        }
    }
}

impl MessageDescriptor {
    /// The descriptor of `m` (`length` is its payload's length).
    pub fn of(m: &crate::cell::format::Message) -> Self {
        MessageDescriptor {
            opcode: (m.opcode as u64).to_bits(),
            dest_node: (m.dest_node as u64).to_bits(),
            src_node: (m.src_node as u64).to_bits(),
            dest_qp: (m.dest_qp as u64).to_bits(),
            src_qp: (m.src_qp as u64).to_bits(),
            psn: (m.psn as u64).to_bits(),
            length: (m.payload.len() as u64).to_bits(),
            vaddr: m.vaddr.to_bits(),
            stag: (m.stag as u64).to_bits(),
            dma_length: (m.dma_length as u64).to_bits(),
            immediate: (m.immediate.unwrap_or(0) as u64).to_bits(),
            has_immediate: m.immediate.is_some(),
            invalidate: m.invalidate,
            resync: m.resync,
        }
    }

    /// The message this descriptor describes, with an empty payload (the payload travels
    /// on its own port), and the payload length in bytes.
    pub fn message(&self) -> (crate::cell::format::Message, usize) {
        let m = crate::cell::format::Message {
            opcode: self.opcode.to_u64() as u8,
            dest_node: self.dest_node.to_u64() as u16,
            src_node: self.src_node.to_u64() as u16,
            dest_qp: self.dest_qp.to_u64() as u16,
            src_qp: self.src_qp.to_u64() as u16,
            psn: self.psn.to_u64() as u32,
            vaddr: self.vaddr.to_u64(),
            stag: self.stag.to_u64() as u32,
            dma_length: self.dma_length.to_u64() as u32,
            immediate: self.has_immediate.then(|| self.immediate.to_u64() as u32),
            invalidate: self.invalidate,
            resync: self.resync,
            payload: vec![],
        };
        (m, self.length.to_u64() as usize)
    }
}

/// One completion request (`docs/nic-blocks.md`, "Completion request"): the payload of the
/// `m_cpl_valid` / `m_cpl_ready` handshake from either engine to the `CompletionQueue`,
/// which writes it as one CQE (`nic_abi::Cqe`'s fields: word 0 opcode, status, QP, flags
/// and byte count; word 1 WQE index, source node and QP; word 2 the work request id; word
/// 3 the immediate, beside the sequence number the queue adds).
///
/// Bits (first field lowest, 208 in all): `opcode` 7:0, `status` 15:8, `qp` 21:16,
/// `is_receive` 22, `has_immediate` 23, `byte_count` 55:24, `wqe_index` 79:56, `src_node`
/// 95:80, `src_qp` 111:96, `wr_id` 175:112, `immediate` 207:176.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct CompletionRequest {
    pub opcode: Bits<8>,
    pub status: Bits<8>,
    pub qp: Bits<6>,
    pub is_receive: Bit,
    pub has_immediate: Bit,
    pub byte_count: Bits<32>,
    pub wqe_index: Bits<24>,
    pub src_node: Bits<16>,
    pub src_qp: Bits<16>,
    pub wr_id: Bits<64>,
    pub immediate: Bits<32>,
}

/// The fields of a packed [`CompletionRequest`] (the inverse of the `LogicStruct` packing).
impl From<Bits<{ <CompletionRequest as Synth>::BITS }>> for CompletionRequest {
    fn from(b: Bits<{ <CompletionRequest as Synth>::BITS }>) -> Self {
        let at = CompletionRequest::default();
        CompletionRequest {
            opcode: b.get_bits::<8>(at.get_my_offset_opcode()),
            status: b.get_bits::<8>(at.get_my_offset_status()),
            qp: b.get_bits::<6>(at.get_my_offset_qp()),
            is_receive: b.get_bit(at.get_my_offset_is_receive()),
            has_immediate: b.get_bit(at.get_my_offset_has_immediate()),
            byte_count: b.get_bits::<32>(at.get_my_offset_byte_count()),
            wqe_index: b.get_bits::<24>(at.get_my_offset_wqe_index()),
            src_node: b.get_bits::<16>(at.get_my_offset_src_node()),
            src_qp: b.get_bits::<16>(at.get_my_offset_src_qp()),
            wr_id: b.get_bits::<64>(at.get_my_offset_wr_id()),
            immediate: b.get_bits::<32>(at.get_my_offset_immediate()),
        }
    }
}

/// A send WQE's fields as the requester uses them (`docs/nic-architecture.md`, "Send WQE"):
/// the `WqeFetch` assembles them word by word and hands them to the `WqeLatch`, the send
/// stage's copy. `inline_payload`: word 0's INLINE flag; `local_addr`: word 2 (the payload's
/// or READ target's physical address); `vaddr`: word 3 (the remote address, or the first
/// inline word; a DELAY's count in bits 23:0); `stag` and `immediate`: word 4; `compare`,
/// `swap`, `word7`: words 5-7 (an atomic's operands, or inline payload words).
///
/// Bits (first field lowest, 394 in all): `opcode` 7:0, `invalidate` 8, `inline_payload`
/// 9, `length` 41:10, `local_addr` 73:42, `vaddr` 137:74, `stag` 169:138, `immediate`
/// 201:170, `compare` 265:202, `swap` 329:266, `word7` 393:330.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct SendWqe {
    pub opcode: Bits<8>,
    pub invalidate: Bit,
    pub inline_payload: Bit,
    pub length: Bits<32>,
    pub local_addr: Bits<32>,
    pub vaddr: Bits<64>,
    pub stag: Bits<32>,
    pub immediate: Bits<32>,
    pub compare: Bits<64>,
    pub swap: Bits<64>,
    pub word7: Bits<64>,
}

/// The fields of a packed [`SendWqe`] (the inverse of the `LogicStruct` packing).
impl From<Bits<{ <SendWqe as Synth>::BITS }>> for SendWqe {
    fn from(b: Bits<{ <SendWqe as Synth>::BITS }>) -> Self {
        let at = SendWqe::default();
        SendWqe {
            opcode: b.get_bits::<8>(at.get_my_offset_opcode()),
            invalidate: b.get_bit(at.get_my_offset_invalidate()),
            inline_payload: b.get_bit(at.get_my_offset_inline_payload()),
            length: b.get_bits::<32>(at.get_my_offset_length()),
            local_addr: b.get_bits::<32>(at.get_my_offset_local_addr()),
            vaddr: b.get_bits::<64>(at.get_my_offset_vaddr()),
            stag: b.get_bits::<32>(at.get_my_offset_stag()),
            immediate: b.get_bits::<32>(at.get_my_offset_immediate()),
            compare: b.get_bits::<64>(at.get_my_offset_compare()),
            swap: b.get_bits::<64>(at.get_my_offset_swap()),
            word7: b.get_bits::<64>(at.get_my_offset_word7()),
        }
    }
}

/// A finished cell in the reassembler's done slot (`docs/nic-blocks.md`, "Cell outcome"):
/// what the `CellReassembler` decided at the cell's end, handed to its `OutcomeSender` with
/// the `s_done_valid` / `s_done_ready` handshake (the header and RETH travel beside it, in
/// the reassembler's registers). `status`: 0 good, else the failure (`CellStatus`);
/// `offset`: the cell's byte offset in its message; `immediate`: the message's (last cell
/// only, else 0); `words`: payload words in the cell buffer; `last_bytes`: bytes of the last
/// payload word (1..=8).
///
/// Bits (first field lowest, 79 in all): `status` 2:0, `offset` 34:3, `immediate` 66:35,
/// `words` 74:67, `last_bytes` 78:75.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct FinishedCell {
    pub status: Bits<3>,
    pub offset: Bits<32>,
    pub immediate: Bits<32>,
    pub words: Bits<8>,
    pub last_bytes: Bits<4>,
}

/// The fields of a packed [`FinishedCell`] (the inverse of the `LogicStruct` packing).
impl From<Bits<{ <FinishedCell as Synth>::BITS }>> for FinishedCell {
    fn from(b: Bits<{ <FinishedCell as Synth>::BITS }>) -> Self {
        let at = FinishedCell::default();
        FinishedCell {
            status: b.get_bits::<3>(at.get_my_offset_status()),
            offset: b.get_bits::<32>(at.get_my_offset_offset()),
            immediate: b.get_bits::<32>(at.get_my_offset_immediate()),
            words: b.get_bits::<8>(at.get_my_offset_words()),
            last_bytes: b.get_bits::<4>(at.get_my_offset_last_bytes()),
        }
    }
}

/// What one reassembled cell's outcome says (`docs/nic-blocks.md`, "Cell outcome"), held
/// for every beat of the outcome: the payload of the `m_valid` / `m_ready` handshake from
/// the `CellReassembler` (its `OutcomeSender` makes it) to the `ReceiveQueueEngine`, beside
/// each beat's `data`, `bytes` and `last`. `status`: 0 good, 1 CRC, 2 length, 3 sequence,
/// 4 malformed (`CellStatus`); the header fields as received; for a good cell the
/// message's RETH (`vaddr`, `stag`, `dma_length`), the cell's byte `offset` in its message
/// and, on the last cell, the `immediate`; these five are zero for a failed cell.
///
/// Bits (first field lowest, 363 in all): `status` 2:0, `opcode` 10:3, `flags` 18:11,
/// `cell_length` 34:19, `dest_node` 50:35, `src_node` 66:51, `dest_qp` 82:67, `src_qp`
/// 98:83, `cell_seq` 114:99, `psn` 138:115, `msg_length` 170:139, `vaddr` 234:171, `stag`
/// 266:235, `dma_length` 298:267, `offset` 330:299, `immediate` 362:331.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct CellOutcomeHeader {
    pub status: Bits<3>,
    pub opcode: Bits<8>,
    pub flags: Bits<8>,
    pub cell_length: Bits<16>,
    pub dest_node: Bits<16>,
    pub src_node: Bits<16>,
    pub dest_qp: Bits<16>,
    pub src_qp: Bits<16>,
    pub cell_seq: Bits<16>,
    pub psn: Bits<24>,
    pub msg_length: Bits<32>,
    pub vaddr: Bits<64>,
    pub stag: Bits<32>,
    pub dma_length: Bits<32>,
    pub offset: Bits<32>,
    pub immediate: Bits<32>,
}

/// The fields of a packed [`CellOutcomeHeader`] (the inverse of the `LogicStruct` packing).
impl From<Bits<{ <CellOutcomeHeader as Synth>::BITS }>> for CellOutcomeHeader {
    fn from(b: Bits<{ <CellOutcomeHeader as Synth>::BITS }>) -> Self {
        let at = CellOutcomeHeader::default();
        CellOutcomeHeader {
            status: b.get_bits::<3>(at.get_my_offset_status()),
            opcode: b.get_bits::<8>(at.get_my_offset_opcode()),
            flags: b.get_bits::<8>(at.get_my_offset_flags()),
            cell_length: b.get_bits::<16>(at.get_my_offset_cell_length()),
            dest_node: b.get_bits::<16>(at.get_my_offset_dest_node()),
            src_node: b.get_bits::<16>(at.get_my_offset_src_node()),
            dest_qp: b.get_bits::<16>(at.get_my_offset_dest_qp()),
            src_qp: b.get_bits::<16>(at.get_my_offset_src_qp()),
            cell_seq: b.get_bits::<16>(at.get_my_offset_cell_seq()),
            psn: b.get_bits::<24>(at.get_my_offset_psn()),
            msg_length: b.get_bits::<32>(at.get_my_offset_msg_length()),
            vaddr: b.get_bits::<64>(at.get_my_offset_vaddr()),
            stag: b.get_bits::<32>(at.get_my_offset_stag()),
            dma_length: b.get_bits::<32>(at.get_my_offset_dma_length()),
            offset: b.get_bits::<32>(at.get_my_offset_offset()),
            immediate: b.get_bits::<32>(at.get_my_offset_immediate()),
        }
    }
}

/// What a cell outcome's header says, decoded (`docs/nic-blocks.md`, "Cell outcome"): the
/// classes the receive engine decides on, registered with the outcome by the
/// [`OutcomeSlice`](crate::cell::OutcomeSlice) (its `m_class`, beside `m_outcome`) so that
/// the engine's decision starts at a register. Opcodes and flag bits as
/// `crate::cell::format` names them.
///
/// `first` (FIRST flag and cell sequence 0), `last_cell` (LAST flag), `ok` (status 0 and
/// no reserved flag bit), `resync`, `invalidate` (those flags); `is_send` (SEND,
/// SEND_IMMEDIATE), `is_write` (RDMA_WRITE, RDMA_WRITE_IMMEDIATE), `is_read`
/// (RDMA_READ_REQUEST), `is_atomic` (COMPARE_SWAP, FETCH_ADD), `consumes` (a SEND or
/// RDMA_WRITE_IMMEDIATE: it takes a receive queue entry), `is_request` (a SEND or an
/// opcode from RDMA_WRITE to FETCH_ADD), `is_ackish` (ACK, NACK), `is_nack`,
/// `is_response` (RDMA_READ_RESPONSE, ATOMIC_RESPONSE), `is_atomic_response`;
/// `request_ok`, the static part of rule 5 (`docs/nic-architecture.md`, "Reliability"):
/// the RETH address is 8-aligned, an atomic's `dma_length` is 8 and its `msg_length` 16,
/// a write's `msg_length` equals its `dma_length`.
///
/// Bits (first field lowest): `first` 0, `last_cell` 1, `ok` 2, `resync` 3, `invalidate`
/// 4, `is_send` 5, `is_write` 6, `is_read` 7, `is_atomic` 8, `consumes` 9, `is_request`
/// 10, `is_ackish` 11, `is_nack` 12, `is_response` 13, `is_atomic_response` 14,
/// `request_ok` 15.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct OutcomeClass {
    pub first: Bit,
    pub last_cell: Bit,
    pub ok: Bit,
    pub resync: Bit,
    pub invalidate: Bit,
    pub is_send: Bit,
    pub is_write: Bit,
    pub is_read: Bit,
    pub is_atomic: Bit,
    pub consumes: Bit,
    pub is_request: Bit,
    pub is_ackish: Bit,
    pub is_nack: Bit,
    pub is_response: Bit,
    pub is_atomic_response: Bit,
    pub request_ok: Bit,
}

/// The fields of a packed [`OutcomeClass`] (the inverse of the `LogicStruct` packing).
impl From<Bits<{ <OutcomeClass as Synth>::BITS }>> for OutcomeClass {
    fn from(b: Bits<{ <OutcomeClass as Synth>::BITS }>) -> Self {
        let at = OutcomeClass::default();
        OutcomeClass {
            first: b.get_bit(at.get_my_offset_first()),
            last_cell: b.get_bit(at.get_my_offset_last_cell()),
            ok: b.get_bit(at.get_my_offset_ok()),
            resync: b.get_bit(at.get_my_offset_resync()),
            invalidate: b.get_bit(at.get_my_offset_invalidate()),
            is_send: b.get_bit(at.get_my_offset_is_send()),
            is_write: b.get_bit(at.get_my_offset_is_write()),
            is_read: b.get_bit(at.get_my_offset_is_read()),
            is_atomic: b.get_bit(at.get_my_offset_is_atomic()),
            consumes: b.get_bit(at.get_my_offset_consumes()),
            is_request: b.get_bit(at.get_my_offset_is_request()),
            is_ackish: b.get_bit(at.get_my_offset_is_ackish()),
            is_nack: b.get_bit(at.get_my_offset_is_nack()),
            is_response: b.get_bit(at.get_my_offset_is_response()),
            is_atomic_response: b.get_bit(at.get_my_offset_is_atomic_response()),
            request_ok: b.get_bit(at.get_my_offset_request_ok()),
        }
    }
}

impl OutcomeClass {
    /// The classes of an outcome header, in software (for test benches: the reference
    /// the `OutcomeSlice`'s decode is checked against).
    pub fn of(h: &CellOutcomeHeader) -> Self {
        use crate::cell::format::{flag, opcode};
        let op = h.opcode.to_u64() as u8;
        let flags = h.flags.to_u64() as u8;
        let msg_length = h.msg_length.to_u64();
        let dma_length = h.dma_length.to_u64();
        let is_send = op == opcode::SEND || op == opcode::SEND_IMMEDIATE;
        let is_write = op == opcode::RDMA_WRITE || op == opcode::RDMA_WRITE_IMMEDIATE;
        let is_atomic = op == opcode::ATOMIC_COMPARE_SWAP || op == opcode::ATOMIC_FETCH_ADD;
        OutcomeClass {
            first: flags & flag::FIRST != 0 && h.cell_seq.to_u64() == 0,
            last_cell: flags & flag::LAST != 0,
            ok: h.status.to_u64() == 0 && flags & flag::RESERVED_MASK == 0,
            resync: flags & flag::RESYNC != 0,
            invalidate: flags & flag::INVALIDATE != 0,
            is_send,
            is_write,
            is_read: op == opcode::RDMA_READ_REQUEST,
            is_atomic,
            consumes: is_send || op == opcode::RDMA_WRITE_IMMEDIATE,
            is_request: is_send || (opcode::RDMA_WRITE..=opcode::ATOMIC_FETCH_ADD).contains(&op),
            is_ackish: op == opcode::ACK || op == opcode::NACK,
            is_nack: op == opcode::NACK,
            is_response: op == opcode::RDMA_READ_RESPONSE || op == opcode::ATOMIC_RESPONSE,
            is_atomic_response: op == opcode::ATOMIC_RESPONSE,
            request_ok: h.vaddr.to_u64() & 7 == 0
                && (!is_atomic || (dma_length == 8 && msg_length == 16))
                && (!is_write || msg_length == dma_length),
        }
    }
}

/// A response the responder owes (`docs/nic-blocks.md`, "Owed responses"): the payload of
/// the `m_owe_valid` / `m_owe_ready` handshake from the `ReceiveQueueEngine` to the
/// `ResponseGenerator`. `kind`: 0 ACK, 1 NACK, 2 READ_RESPONSE, 3 ATOMIC_RESPONSE; `psn`
/// the PSN it names; `syndrome` a NACK's; `refusal` the AETH's bits 28:8 of an ACK or NACK
/// (`nic_abi::AethRefusals`: the refusals among the 7 PSNs before `psn`; 0 for a
/// response); `addr`, `length` a READ's local source, `value` an atomic's result;
/// `dest_node`, `dest_qp` the requester; `resync` the answer's PSN became the responder's
/// expected one through a resync (the message carries RESYNC).
///
/// Bits (first field lowest, 222 in all): `qp` 5:0, `kind` 7:6, `psn` 31:8, `syndrome`
/// 39:32, `refusal` 60:40, `addr` 92:61, `length` 124:93, `value` 188:125, `dest_node`
/// 204:189, `dest_qp` 220:205, `resync` 221.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct OwedResponse {
    pub qp: Bits<6>,
    pub kind: Bits<2>,
    pub psn: Bits<24>,
    pub syndrome: Bits<8>,
    pub refusal: Bits<21>,
    pub addr: Bits<32>,
    pub length: Bits<32>,
    pub value: Bits<64>,
    pub dest_node: Bits<16>,
    pub dest_qp: Bits<16>,
    pub resync: Bit,
}

/// The fields of a packed [`OwedResponse`] (the inverse of the `LogicStruct` packing).
impl From<Bits<{ <OwedResponse as Synth>::BITS }>> for OwedResponse {
    fn from(b: Bits<{ <OwedResponse as Synth>::BITS }>) -> Self {
        let at = OwedResponse::default();
        OwedResponse {
            qp: b.get_bits::<6>(at.get_my_offset_qp()),
            kind: b.get_bits::<2>(at.get_my_offset_kind()),
            psn: b.get_bits::<24>(at.get_my_offset_psn()),
            syndrome: b.get_bits::<8>(at.get_my_offset_syndrome()),
            refusal: b.get_bits::<21>(at.get_my_offset_refusal()),
            addr: b.get_bits::<32>(at.get_my_offset_addr()),
            length: b.get_bits::<32>(at.get_my_offset_length()),
            value: b.get_bits::<64>(at.get_my_offset_value()),
            dest_node: b.get_bits::<16>(at.get_my_offset_dest_node()),
            dest_qp: b.get_bits::<16>(at.get_my_offset_dest_qp()),
            resync: b.get_bit(at.get_my_offset_resync()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packing the documentation gives: the fields' offsets and the total width.
    #[test]
    fn ack_event_packs_its_fields_at_the_documented_offsets() {
        assert_eq!(AckEvent::BITS, 40);
        let e = AckEvent {
            qp: 0x2A.into(),
            psn: 0xABCDEF.into(),
            syndrome: 0x61.into(),
            response: false,
            resync: true,
        };
        let bits: Bits<40> = e.into();
        assert_eq!(bits.get_bits::<6>(0), 0x2A);
        assert_eq!(bits.get_bits::<24>(6), 0xABCDEF);
        assert_eq!(bits.get_bits::<8>(30), 0x61);
        assert!(!bits.get_bit(38));
        assert!(bits.get_bit(39));
        assert_eq!(AckEvent::from(bits), e, "unpacking inverts packing");
    }

    /// The documented offsets of a [`TptBindWrite`], and unpacking inverts packing.
    #[test]
    fn tpt_bind_write_packs_its_fields_at_the_documented_offsets() {
        assert_eq!(TptBindWrite::BITS, 164);
        let w = TptBindWrite {
            index: 0xABCDEFu64.to_bits(),
            key: 0x5Au64.to_bits(),
            rights: 5u64.to_bits(),
            valid: true,
            vaddr: 0x1122_3344_5566_7788u64.to_bits(),
            length: 0x99AA_BBCCu64.to_bits(),
            paddr: 0xDDEE_FF08u64.to_bits(),
        };
        let b: Bits<164> = w.into();
        assert_eq!(b.get_bits::<24>(0), 0xABCDEF);
        assert_eq!(b.get_bits::<8>(24), 0x5A);
        assert_eq!(b.get_bits::<3>(32), 5);
        assert!(b.get_bit(35));
        assert_eq!(b.get_bits::<64>(36), 0x1122_3344_5566_7788);
        assert_eq!(b.get_bits::<32>(100), 0x99AA_BBCC);
        assert_eq!(b.get_bits::<32>(132), 0xDDEE_FF08);
        assert_eq!(TptBindWrite::from(b), w, "unpacking inverts packing");
    }

    /// The documented offsets of a [`TptRequest`], and unpacking inverts packing.
    #[test]
    fn tpt_request_packs_its_fields_at_the_documented_offsets() {
        assert_eq!(TptRequest::BITS, 139);
        let r = TptRequest {
            stag: (0x1122_3344u64).to_bits(),
            vaddr: 0x5566_7788_99AA_BBCCu64.to_bits(),
            length: (0xDDEE_FF00u64).to_bits(),
            access: 5.into(),
            invalidate: true,
            qp: 0x2B.into(),
            commit: true,
        };
        let b: Bits<139> = r.into();
        assert_eq!(b.get_bits::<32>(0), 0x1122_3344u64);
        assert_eq!(b.get_bits::<64>(32), 0x5566_7788_99AA_BBCCu64);
        assert_eq!(b.get_bits::<32>(96), 0xDDEE_FF00u64);
        assert_eq!(b.get_bits::<3>(128), 5);
        assert!(b.get_bit(131) && b.get_bit(138));
        assert_eq!(b.get_bits::<6>(132), 0x2B);
        assert_eq!(TptRequest::from(b), r, "unpacking inverts packing");
    }

    /// The documented offsets of a [`MessageDescriptor`], and unpacking inverts packing.
    #[test]
    fn message_descriptor_packs_its_fields_at_the_documented_offsets() {
        assert_eq!(MessageDescriptor::BITS, 291);
        let m = MessageDescriptor {
            opcode: 0x11.into(),
            dest_node: 0x2233.into(),
            src_node: 0x4455.into(),
            dest_qp: 0x6677.into(),
            src_qp: 0x8899.into(),
            psn: 0xAABBCC.into(),
            length: (0xDDEE_FF01u64).to_bits(),
            vaddr: 0x0203_0405_0607_0809u64.to_bits(),
            stag: (0x0A0B_0C0Du64).to_bits(),
            dma_length: (0x0E0F_1011u64).to_bits(),
            immediate: (0x1213_1415u64).to_bits(),
            has_immediate: true,
            invalidate: false,
            resync: true,
        };
        let b: Bits<291> = m.into();
        assert_eq!(b.get_bits::<8>(0), 0x11);
        assert_eq!(b.get_bits::<16>(8), 0x2233);
        assert_eq!(b.get_bits::<16>(24), 0x4455);
        assert_eq!(b.get_bits::<16>(40), 0x6677);
        assert_eq!(b.get_bits::<16>(56), 0x8899);
        assert_eq!(b.get_bits::<24>(72), 0xAABBCC);
        assert_eq!(b.get_bits::<32>(96), 0xDDEE_FF01u64);
        assert_eq!(b.get_bits::<64>(128), 0x0203_0405_0607_0809u64);
        assert_eq!(b.get_bits::<32>(192), 0x0A0B_0C0Du64);
        assert_eq!(b.get_bits::<32>(224), 0x0E0F_1011u64);
        assert_eq!(b.get_bits::<32>(256), 0x1213_1415u64);
        assert!(b.get_bit(288) && !b.get_bit(289) && b.get_bit(290));
        assert_eq!(MessageDescriptor::from(b), m, "unpacking inverts packing");
    }

    /// The documented offsets of a [`CellOutcomeHeader`].
    #[test]
    fn cell_outcome_header_packs_its_fields_at_the_documented_offsets() {
        assert_eq!(CellOutcomeHeader::BITS, 363);
        let h = CellOutcomeHeader {
            status: 5.into(),
            opcode: 0x11.into(),
            flags: 0x22.into(),
            cell_length: 0x3344.into(),
            dest_node: 0x5566.into(),
            src_node: 0x7788.into(),
            dest_qp: 0x99AA.into(),
            src_qp: 0xBBCC.into(),
            cell_seq: 0xDDEE.into(),
            psn: 0x123456.into(),
            msg_length: (0x789A_BCDEu64).to_bits(),
            vaddr: 0x0102_0304_0506_0708u64.to_bits(),
            stag: (0x090A_0B0Cu64).to_bits(),
            dma_length: (0x0D0E_0F10u64).to_bits(),
            offset: (0x1112_1314u64).to_bits(),
            immediate: (0x1516_1718u64).to_bits(),
        };
        let b: Bits<363> = h.into();
        assert_eq!(b.get_bits::<3>(0), 5);
        assert_eq!(b.get_bits::<8>(3), 0x11);
        assert_eq!(b.get_bits::<8>(11), 0x22);
        assert_eq!(b.get_bits::<16>(19), 0x3344);
        assert_eq!(b.get_bits::<16>(35), 0x5566);
        assert_eq!(b.get_bits::<16>(51), 0x7788);
        assert_eq!(b.get_bits::<16>(67), 0x99AA);
        assert_eq!(b.get_bits::<16>(83), 0xBBCC);
        assert_eq!(b.get_bits::<16>(99), 0xDDEE);
        assert_eq!(b.get_bits::<24>(115), 0x123456);
        assert_eq!(b.get_bits::<32>(139), 0x789A_BCDEu64);
        assert_eq!(b.get_bits::<64>(171), 0x0102_0304_0506_0708u64);
        assert_eq!(b.get_bits::<32>(235), 0x090A_0B0Cu64);
        assert_eq!(b.get_bits::<32>(267), 0x0D0E_0F10u64);
        assert_eq!(b.get_bits::<32>(299), 0x1112_1314u64);
        assert_eq!(b.get_bits::<32>(331), 0x1516_1718u64);
        assert_eq!(CellOutcomeHeader::from(b), h, "unpacking inverts packing");
    }

    /// The documented offsets of a [`SendWqe`].
    #[test]
    fn send_wqe_packs_its_fields_at_the_documented_offsets() {
        assert_eq!(SendWqe::BITS, 394);
        let w = SendWqe {
            opcode: 0x12.into(),
            invalidate: false,
            inline_payload: true,
            length: (0x3456_789Au64).to_bits(),
            local_addr: (0xBCDE_F012u64).to_bits(),
            vaddr: 0x1122_3344_5566_7788u64.to_bits(),
            stag: (0x99AA_BBCCu64).to_bits(),
            immediate: (0xDDEE_FF00u64).to_bits(),
            compare: 0x0102_0304_0506_0708u64.to_bits(),
            swap: 0x090A_0B0C_0D0E_0F10u64.to_bits(),
            word7: 0x1112_1314_1516_1718u64.to_bits(),
        };
        let b: Bits<394> = w.into();
        assert_eq!(b.get_bits::<8>(0), 0x12);
        assert!(!b.get_bit(8) && b.get_bit(9));
        assert_eq!(b.get_bits::<32>(10), 0x3456_789Au64);
        assert_eq!(b.get_bits::<32>(42), 0xBCDE_F012u64);
        assert_eq!(b.get_bits::<64>(74), 0x1122_3344_5566_7788u64);
        assert_eq!(b.get_bits::<32>(138), 0x99AA_BBCCu64);
        assert_eq!(b.get_bits::<32>(170), 0xDDEE_FF00u64);
        assert_eq!(b.get_bits::<64>(202), 0x0102_0304_0506_0708u64);
        assert_eq!(b.get_bits::<64>(266), 0x090A_0B0C_0D0E_0F10u64);
        assert_eq!(b.get_bits::<64>(330), 0x1112_1314_1516_1718u64);
        assert_eq!(SendWqe::from(b), w, "unpacking inverts packing");
    }

    /// The documented offsets of a [`FinishedCell`], and unpacking inverts packing.
    #[test]
    fn finished_cell_packs_its_fields_at_the_documented_offsets() {
        assert_eq!(FinishedCell::BITS, 79);
        let c = FinishedCell {
            status: 3.into(),
            offset: (0x1234_5678u64).to_bits(),
            immediate: (0x9ABC_DEF0u64).to_bits(),
            words: 0xA5.into(),
            last_bytes: 7.into(),
        };
        let b: Bits<79> = c.into();
        assert_eq!(b.get_bits::<3>(0), 3);
        assert_eq!(b.get_bits::<32>(3), 0x1234_5678u64);
        assert_eq!(b.get_bits::<32>(35), 0x9ABC_DEF0u64);
        assert_eq!(b.get_bits::<8>(67), 0xA5);
        assert_eq!(b.get_bits::<4>(75), 7);
        assert_eq!(FinishedCell::from(b), c, "unpacking inverts packing");
    }

    /// The documented offsets of a [`CompletionRequest`], and unpacking inverts packing.
    #[test]
    fn completion_request_packs_its_fields_at_the_documented_offsets() {
        assert_eq!(CompletionRequest::BITS, 208);
        let c = CompletionRequest {
            opcode: 0x12.into(),
            status: 0x34.into(),
            qp: 0x2A.into(),
            is_receive: true,
            has_immediate: false,
            byte_count: (0x5678_9ABCu64).to_bits(),
            wqe_index: 0xDEF012.into(),
            src_node: 0x3456.into(),
            src_qp: 0x789A.into(),
            wr_id: 0x0102_0304_0506_0708u64.to_bits(),
            immediate: (0x1122_3344u64).to_bits(),
        };
        let b: Bits<208> = c.into();
        assert_eq!(b.get_bits::<8>(0), 0x12);
        assert_eq!(b.get_bits::<8>(8), 0x34);
        assert_eq!(b.get_bits::<6>(16), 0x2A);
        assert!(b.get_bit(22));
        assert!(!b.get_bit(23));
        assert_eq!(b.get_bits::<32>(24), 0x5678_9ABCu64);
        assert_eq!(b.get_bits::<24>(56), 0xDEF012);
        assert_eq!(b.get_bits::<16>(80), 0x3456);
        assert_eq!(b.get_bits::<16>(96), 0x789A);
        assert_eq!(b.get_bits::<64>(112), 0x0102_0304_0506_0708u64);
        assert_eq!(b.get_bits::<32>(176), 0x1122_3344u64);
        assert_eq!(CompletionRequest::from(b), c, "unpacking inverts packing");
    }

    /// The documented offsets of an [`OwedResponse`], and unpacking inverts packing.
    #[test]
    fn owed_response_packs_its_fields_at_the_documented_offsets() {
        assert_eq!(OwedResponse::BITS, 222);
        let o = OwedResponse {
            qp: 0x2A.into(),
            kind: 3.into(),
            psn: 0xABCDEF.into(),
            syndrome: 0x61.into(),
            refusal: 0x1F_FFFE.into(),
            addr: 0x1122_3344u64.to_bits(),
            length: 0x5566_7788u64.to_bits(),
            value: 0x99AA_BBCC_DDEE_FF01u64.to_bits(),
            dest_node: 0x1234.into(),
            dest_qp: 0x5678.into(),
            resync: true,
        };
        let b: Bits<222> = o.into();
        assert_eq!(b.get_bits::<6>(0), 0x2A);
        assert_eq!(b.get_bits::<2>(6), 3);
        assert_eq!(b.get_bits::<24>(8), 0xABCDEF);
        assert_eq!(b.get_bits::<8>(32), 0x61);
        assert_eq!(b.get_bits::<21>(40), 0x1F_FFFE);
        assert_eq!(b.get_bits::<32>(61), 0x1122_3344u64);
        assert_eq!(b.get_bits::<32>(93), 0x5566_7788u64);
        assert_eq!(b.get_bits::<64>(125), 0x99AA_BBCC_DDEE_FF01u64);
        assert_eq!(b.get_bits::<16>(189), 0x1234);
        assert_eq!(b.get_bits::<16>(205), 0x5678);
        assert!(b.get_bit(221));
        assert_eq!(OwedResponse::from(b), o, "unpacking inverts packing");
    }
}
