//! The cell format on the network port: constants, a software encoder, a decoder that
//! names the failing field and byte offset, and the reference model of reassembly.
//!
//! This module is the single source of truth for the layout; `docs/cell-format.md`
//! documents it for readers outside the project, and the RTL blocks
//! ([`crate::CellSegmenter`], [`crate::CellReassembler`]) are checked against it.
//!
//! Header fields follow source document 002 (Fig. 8): opcode, flags, destination and
//! source node and queue pair, packet and cell sequence numbers, payload length. The RDMA
//! extended header (virtual address, STag, DMA length) follows InfiniBand's RETH.
//!
//! A cell is a sequence of 64-bit words, each serialised little-endian (byte 0 of the
//! cell is bits 7:0 of word 0):
//!
//! | words | present | content |
//! | --- | --- | --- |
//! | 0..3 | always | header (24 bytes) |
//! | 3..5 | first cell of an RDMA opcode | RETH (16 bytes) |
//! | next ceil(len/8) | always | payload, zero-padded to a whole word |
//! | next 1 | last cell of a message | packet CRC-32 (bytes 0..4), immediate (bytes 4..8) |
//! | final 1 | always | cell CRC-32 over every preceding byte (bytes 0..4), zero (bytes 4..8) |
//!
//! Both CRCs are CRC-32/ISO-HDLC (zlib's `crc32`). The packet CRC covers the message
//! payload bytes only (no padding, no headers).

use crc::{Crc, CRC_32_ISO_HDLC};
use std::fmt;

/// zlib / Ethernet CRC-32 (CRC-32/ISO-HDLC).
pub const CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);

/// Default payload bytes per cell (source document 002).
pub const DEFAULT_CELL_PAYLOAD: usize = 256;
/// Largest supported `cell_payload`: the reassembler buffers two cells in a 256-word
/// block RAM (four iCE40 RAM4K blocks at 64 bits wide).
pub const MAX_CELL_PAYLOAD: usize = 1024;
/// Header words at the start of every cell.
pub const HEADER_WORDS: usize = 3;
/// RDMA extended header words on the first cell of an RDMA opcode.
pub const RETH_WORDS: usize = 2;
/// Largest packet sequence number + 1 (24-bit PSN as in InfiniBand).
pub const PSN_MODULUS: u32 = 1 << 24;
/// Largest number of cells in one message (16-bit cell sequence number).
pub const MAX_CELLS_PER_MESSAGE: usize = 1 << 16;

/// Byte offsets of header fields within a cell.
pub mod offset {
    pub const OPCODE: usize = 0;
    pub const FLAGS: usize = 1;
    pub const CELL_LENGTH: usize = 2;
    pub const DEST_NODE: usize = 4;
    pub const SRC_NODE: usize = 6;
    pub const DEST_QP: usize = 8;
    pub const SRC_QP: usize = 10;
    pub const CELL_SEQ: usize = 12;
    pub const RESERVED_14: usize = 14;
    pub const PSN: usize = 16;
    pub const MESSAGE_LENGTH: usize = 20;
    pub const RETH_VADDR: usize = 24;
    pub const RETH_STAG: usize = 32;
    pub const RETH_DMA_LENGTH: usize = 36;
}

/// Flag bits (header byte 1).
pub mod flag {
    pub const FIRST: u8 = 1 << 0;
    pub const LAST: u8 = 1 << 1;
    pub const IMMEDIATE: u8 = 1 << 2;
    pub const INVALIDATE: u8 = 1 << 3;
    /// First message of a queue pair after its reset: the receiver restarts its
    /// expected packet sequence number from this message's (see docs/nic-architecture.md).
    pub const RESYNC: u8 = 1 << 4;
    pub const RESERVED_MASK: u8 = 0xE0;
}

/// Opcodes (header byte 0). Opcodes `0x10..=0x1F` carry the RETH on their first cell.
pub mod opcode {
    pub const SEND: u8 = 0x00;
    pub const SEND_IMMEDIATE: u8 = 0x01;
    pub const RDMA_WRITE: u8 = 0x10;
    pub const RDMA_WRITE_IMMEDIATE: u8 = 0x11;
    pub const RDMA_READ_REQUEST: u8 = 0x12;
    pub const ATOMIC_COMPARE_SWAP: u8 = 0x13;
    pub const ATOMIC_FETCH_ADD: u8 = 0x14;
    pub const RDMA_READ_RESPONSE: u8 = 0x20;
    pub const ATOMIC_RESPONSE: u8 = 0x21;
    pub const ACK: u8 = 0x30;
    pub const NACK: u8 = 0x31;

    /// Every opcode a cell may carry, in the order above.
    pub const ALL: [u8; 11] = [
        SEND,
        SEND_IMMEDIATE,
        RDMA_WRITE,
        RDMA_WRITE_IMMEDIATE,
        RDMA_READ_REQUEST,
        ATOMIC_COMPARE_SWAP,
        ATOMIC_FETCH_ADD,
        RDMA_READ_RESPONSE,
        ATOMIC_RESPONSE,
        ACK,
        NACK,
    ];

    /// Whether the first cell of a message with this opcode carries the RETH.
    pub const fn has_reth(op: u8) -> bool {
        op >> 4 == 1
    }

    /// Name of an opcode, for printing.
    pub fn name(op: u8) -> &'static str {
        match op {
            SEND => "SEND",
            SEND_IMMEDIATE => "SEND_IMMEDIATE",
            RDMA_WRITE => "RDMA_WRITE",
            RDMA_WRITE_IMMEDIATE => "RDMA_WRITE_IMMEDIATE",
            RDMA_READ_REQUEST => "RDMA_READ_REQUEST",
            ATOMIC_COMPARE_SWAP => "ATOMIC_COMPARE_SWAP",
            ATOMIC_FETCH_ADD => "ATOMIC_FETCH_ADD",
            RDMA_READ_RESPONSE => "RDMA_READ_RESPONSE",
            ATOMIC_RESPONSE => "ATOMIC_RESPONSE",
            ACK => "ACK",
            NACK => "NACK",
            _ => "UNKNOWN",
        }
    }

    /// Parse an opcode name (case-insensitive) or a number (`0x10`, `16`).
    pub fn parse(text: &str) -> Option<u8> {
        if let Some(op) = ALL.iter().find(|&&op| name(op).eq_ignore_ascii_case(text)) {
            return Some(*op);
        }
        let t = text.trim();
        if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            u8::from_str_radix(hex, 16).ok()
        } else {
            t.parse().ok()
        }
    }
}

/// Outcome class of a received cell, as the reassembler reports it (3 bits on `m_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CellStatus {
    /// Cell accepted; its payload is delivered.
    Ok = 0,
    /// Cell CRC or (on the last cell) packet CRC mismatch.
    Crc = 1,
    /// Cell shorter or longer than its header says, or a cell length / LAST flag that
    /// does not fit the message length.
    Length = 2,
    /// Unexpected cell sequence number or FIRST flag.
    Sequence = 3,
    /// Reserved bits set, or a header field that differs from the message's first cell.
    Malformed = 4,
}

impl CellStatus {
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => Self::Ok,
            1 => Self::Crc,
            2 => Self::Length,
            3 => Self::Sequence,
            4 => Self::Malformed,
            _ => return None,
        })
    }
}

/// One message as the segmenter takes it: header fields plus payload.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Message {
    pub opcode: u8,
    pub dest_node: u16,
    pub src_node: u16,
    pub dest_qp: u16,
    pub src_qp: u16,
    /// Packet sequence number, 24 bits.
    pub psn: u32,
    /// RETH fields; carried only when `opcode::has_reth(opcode)`.
    pub vaddr: u64,
    pub stag: u32,
    pub dma_length: u32,
    pub immediate: Option<u32>,
    pub invalidate: bool,
    /// Sets the RESYNC flag on every cell of the message.
    pub resync: bool,
    pub payload: Vec<u8>,
}

/// The 24-byte header of one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CellHeader {
    pub opcode: u8,
    pub flags: u8,
    pub cell_length: u16,
    pub dest_node: u16,
    pub src_node: u16,
    pub dest_qp: u16,
    pub src_qp: u16,
    pub cell_seq: u16,
    pub psn: u32,
    pub message_length: u32,
}

impl CellHeader {
    pub fn first(&self) -> bool {
        self.flags & flag::FIRST != 0
    }
    pub fn last(&self) -> bool {
        self.flags & flag::LAST != 0
    }
    pub fn has_reth(&self) -> bool {
        self.first() && opcode::has_reth(self.opcode)
    }
    /// Words the whole cell occupies, as this header describes it.
    pub fn cell_words(&self) -> usize {
        HEADER_WORDS
            + if self.has_reth() { RETH_WORDS } else { 0 }
            + (self.cell_length as usize).div_ceil(8)
            + usize::from(self.last())
            + 1
    }
    /// Header as its three little-endian words.
    pub fn to_words(&self) -> [u64; 3] {
        let w0 = self.opcode as u64
            | (self.flags as u64) << 8
            | (self.cell_length as u64) << 16
            | (self.dest_node as u64) << 32
            | (self.src_node as u64) << 48;
        let w1 = self.dest_qp as u64 | (self.src_qp as u64) << 16 | (self.cell_seq as u64) << 32;
        let w2 = self.psn as u64 | (self.message_length as u64) << 32;
        [w0, w1, w2]
    }
    /// Parse the three header words (no validity checks).
    pub fn from_words(w: [u64; 3]) -> Self {
        CellHeader {
            opcode: w[0] as u8,
            flags: (w[0] >> 8) as u8,
            cell_length: (w[0] >> 16) as u16,
            dest_node: (w[0] >> 32) as u16,
            src_node: (w[0] >> 48) as u16,
            dest_qp: w[1] as u16,
            src_qp: (w[1] >> 16) as u16,
            cell_seq: (w[1] >> 32) as u16,
            psn: w[2] as u32,
            message_length: (w[2] >> 32) as u32,
        }
    }
}

/// RDMA extended header (first cell of an RDMA opcode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Reth {
    pub vaddr: u64,
    pub stag: u32,
    pub dma_length: u32,
}

/// A cell that passed [`decode_cell`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedCell {
    pub header: CellHeader,
    pub reth: Option<Reth>,
    pub payload: Vec<u8>,
    /// Packet CRC and immediate from the trailer (last cell only).
    pub packet_crc: Option<u32>,
    pub immediate: Option<u32>,
    pub cell_crc: u32,
}

/// Why a message could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("cell_payload must be a multiple of 8 between 8 and {MAX_CELL_PAYLOAD}, got {0}")]
    CellPayload(usize),
    #[error("packet sequence number {0:#x} does not fit in 24 bits")]
    Psn(u32),
    #[error("message of {len} bytes needs {cells} cells; at most {MAX_CELLS_PER_MESSAGE} fit the 16-bit cell sequence number")]
    TooLong { len: usize, cells: usize },
    #[error("immediate data given but opcode {0:#04x} ({name}) is not sent with flags", name = opcode::name(*.0))]
    Unused(u8),
}

/// Why a cell failed to decode: the field, its byte offset within the cell, and the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellError {
    pub status: CellStatus,
    pub field: &'static str,
    pub offset: usize,
    pub problem: String,
}

impl fmt::Display for CellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} error in {} at byte offset {}: {}",
            self.status, self.field, self.offset, self.problem
        )
    }
}
impl std::error::Error for CellError {}

/// Check a `cell_payload` parameter.
pub fn check_cell_payload(cell_payload: usize) -> Result<(), EncodeError> {
    if cell_payload == 0 || cell_payload % 8 != 0 || cell_payload > MAX_CELL_PAYLOAD {
        Err(EncodeError::CellPayload(cell_payload))
    } else {
        Ok(())
    }
}

/// Payload bytes as little-endian words, the last one zero-padded.
pub fn bytes_to_words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect()
}

/// Words serialised little-endian.
pub fn words_to_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Segment a message into cells of at most `cell_payload` bytes.
pub fn encode_message(msg: &Message, cell_payload: usize) -> Result<Vec<Vec<u64>>, EncodeError> {
    check_cell_payload(cell_payload)?;
    if msg.psn >= PSN_MODULUS {
        return Err(EncodeError::Psn(msg.psn));
    }
    let len = msg.payload.len();
    let cells = len.div_ceil(cell_payload).max(1);
    if cells > MAX_CELLS_PER_MESSAGE || len > u32::MAX as usize {
        return Err(EncodeError::TooLong { len, cells });
    }
    let packet_crc = CRC32.checksum(&msg.payload);
    let mut out = Vec::with_capacity(cells);
    for seq in 0..cells {
        let start = seq * cell_payload;
        let chunk = &msg.payload[start.min(len)..(start + cell_payload).min(len)];
        let last = seq + 1 == cells;
        let mut flags = 0;
        if seq == 0 {
            flags |= flag::FIRST;
        }
        if last {
            flags |= flag::LAST;
        }
        if msg.immediate.is_some() {
            flags |= flag::IMMEDIATE;
        }
        if msg.invalidate {
            flags |= flag::INVALIDATE;
        }
        if msg.resync {
            flags |= flag::RESYNC;
        }
        let header = CellHeader {
            opcode: msg.opcode,
            flags,
            cell_length: chunk.len() as u16,
            dest_node: msg.dest_node,
            src_node: msg.src_node,
            dest_qp: msg.dest_qp,
            src_qp: msg.src_qp,
            cell_seq: seq as u16,
            psn: msg.psn,
            message_length: len as u32,
        };
        let mut words = header.to_words().to_vec();
        if header.has_reth() {
            words.push(msg.vaddr);
            words.push(msg.stag as u64 | (msg.dma_length as u64) << 32);
        }
        words.extend(bytes_to_words(chunk));
        if last {
            words.push(packet_crc as u64 | (msg.immediate.unwrap_or(0) as u64) << 32);
        }
        let cell_crc = CRC32.checksum(&words_to_bytes(&words));
        words.push(cell_crc as u64);
        out.push(words);
    }
    Ok(out)
}

fn err(status: CellStatus, field: &'static str, offset: usize, problem: String) -> CellError {
    CellError {
        status,
        field,
        offset,
        problem,
    }
}

/// Decode and check one cell on its own (no message context). `cell_payload` bounds the
/// cell length field. Checks, in this order: truncation, length consistency, cell CRC,
/// reserved fields, cell length bound.
pub fn decode_cell(words: &[u64], cell_payload: usize) -> Result<DecodedCell, CellError> {
    let bytes = words.len() * 8;
    if words.len() < HEADER_WORDS + 1 {
        return Err(err(
            CellStatus::Length,
            "cell",
            bytes,
            format!("truncated cell: {bytes} bytes, a cell has at least 32 (24-byte header + 8-byte CRC word)"),
        ));
    }
    let header = CellHeader::from_words([words[0], words[1], words[2]]);
    let expected = header.cell_words();
    if words.len() != expected {
        let what = if words.len() < expected {
            "truncated cell"
        } else {
            "cell too long"
        };
        return Err(err(
            CellStatus::Length,
            "cell length",
            offset::CELL_LENGTH,
            format!(
                "{what}: cell is {bytes} bytes but its header (cell length {} at offset 2, flags {:#04x} at offset 1, opcode {:#04x}) implies {} bytes",
                header.cell_length,
                header.flags,
                header.opcode,
                expected * 8
            ),
        ));
    }
    let crc_offset = bytes - 8;
    let computed = CRC32.checksum(&words_to_bytes(&words[..words.len() - 1]));
    let carried = words[words.len() - 1] as u32;
    if computed != carried {
        return Err(err(
            CellStatus::Crc,
            "cell CRC",
            crc_offset,
            format!(
                "cell carries {carried:#010x}, CRC-32 of bytes 0..{crc_offset} is {computed:#010x}"
            ),
        ));
    }
    if words[words.len() - 1] >> 32 != 0 {
        return Err(err(
            CellStatus::Malformed,
            "reserved (CRC word)",
            crc_offset + 4,
            format!("must be zero, is {:#010x}", words[words.len() - 1] >> 32),
        ));
    }
    if header.flags & flag::RESERVED_MASK != 0 {
        return Err(err(
            CellStatus::Malformed,
            "flags",
            offset::FLAGS,
            format!("reserved flag bits 5..7 set: {:#04x}", header.flags),
        ));
    }
    if (words[1] >> 48) != 0 {
        return Err(err(
            CellStatus::Malformed,
            "reserved",
            offset::RESERVED_14,
            format!("must be zero, is {:#06x}", words[1] >> 48),
        ));
    }
    if header.psn >= PSN_MODULUS {
        return Err(err(
            CellStatus::Malformed,
            "packet sequence number",
            offset::PSN + 3,
            format!("bits 24..31 are reserved, value {:#010x}", header.psn),
        ));
    }
    if header.cell_length as usize > cell_payload {
        return Err(err(
            CellStatus::Length,
            "cell length",
            offset::CELL_LENGTH,
            format!(
                "{} bytes exceeds cell_payload {cell_payload}",
                header.cell_length
            ),
        ));
    }
    let mut at = HEADER_WORDS;
    let reth = if header.has_reth() {
        at += RETH_WORDS;
        Some(Reth {
            vaddr: words[3],
            stag: words[4] as u32,
            dma_length: (words[4] >> 32) as u32,
        })
    } else {
        None
    };
    let payload_words = (header.cell_length as usize).div_ceil(8);
    let mut payload = words_to_bytes(&words[at..at + payload_words]);
    payload.truncate(header.cell_length as usize);
    at += payload_words;
    let (packet_crc, immediate) = if header.last() {
        let t = words[at];
        let imm = (header.flags & flag::IMMEDIATE != 0).then_some((t >> 32) as u32);
        (Some(t as u32), imm)
    } else {
        (None, None)
    };
    Ok(DecodedCell {
        header,
        reth,
        payload,
        packet_crc,
        immediate,
        cell_crc: carried,
    })
}

/// What the reassembler reports for one cell it did not drop silently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellOutcome {
    pub status: CellStatus,
    /// Header as received (trustworthy only when status is not `Crc`/`Length`).
    pub header: CellHeader,
    /// RETH of the message's first cell (zero when the message has none).
    pub reth: Reth,
    /// Byte offset of this cell's payload within the message.
    pub offset: u32,
    /// Immediate data (last cell of a message with the IMMEDIATE flag; else 0).
    pub immediate: u32,
    /// Delivered payload: empty unless status is `Ok`.
    pub payload: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Context {
    /// Expecting the first cell of a message.
    Idle,
    /// Inside a message: the first cell's header and RETH, the next cell number, the
    /// running packet CRC.
    InMessage {
        first: CellHeader,
        reth: Reth,
        next_seq: u16,
        offset: u32,
        payload_so_far: Vec<u8>,
    },
    /// After an error: non-first cells are dropped silently until a first cell.
    Discarding,
}

/// A message whose first cells arrived but whose LAST cell did not (see
/// [`ReassemblyModel::unfinished`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnfinishedMessage {
    /// Header of the message's first cell.
    pub first: CellHeader,
    /// Cells accepted so far (the last one is cell `cells - 1`).
    pub cells: u32,
    /// Payload bytes accepted so far.
    pub bytes: u32,
}

impl fmt::Display for UnfinishedMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "message ends after cell {} of PSN {:#x} without a LAST cell ({} ({:#04x}) from {}:{} to {}:{}, {} of {} bytes)",
            self.cells.saturating_sub(1),
            self.first.psn,
            opcode::name(self.first.opcode),
            self.first.opcode,
            self.first.src_node,
            self.first.src_qp,
            self.first.dest_node,
            self.first.dest_qp,
            self.bytes,
            self.first.message_length
        )
    }
}

/// Reference model of [`crate::CellReassembler`]: one message context, cells of one
/// message arrive contiguously. Every cell either yields one [`CellOutcome`] or, while
/// discarding the rest of a failed message, is dropped silently (and counted).
#[derive(Clone, Debug)]
pub struct ReassemblyModel {
    cell_payload: usize,
    context: Context,
    pub dropped_cells: u64,
}

impl ReassemblyModel {
    pub fn new(cell_payload: usize) -> Self {
        check_cell_payload(cell_payload).expect("ReassemblyModel");
        ReassemblyModel {
            cell_payload,
            context: Context::Idle,
            dropped_cells: 0,
        }
    }

    /// The message in progress, if its LAST cell has not arrived: at the end of a stream,
    /// a message cut off. `None` between messages and while discarding a failed one.
    pub fn unfinished(&self) -> Option<UnfinishedMessage> {
        match &self.context {
            Context::InMessage {
                first,
                next_seq,
                offset,
                ..
            } => Some(UnfinishedMessage {
                first: *first,
                cells: u32::from(*next_seq),
                bytes: *offset,
            }),
            Context::Idle | Context::Discarding => None,
        }
    }

    /// Feed one cell (its words, as framed by `last` on the stream).
    pub fn push_cell(&mut self, words: &[u64]) -> Option<CellOutcome> {
        let header = if words.len() >= HEADER_WORDS {
            CellHeader::from_words([words[0], words[1], words[2]])
        } else {
            let mut w = [0u64; 3];
            w[..words.len()].copy_from_slice(words);
            CellHeader::from_words(w)
        };
        if matches!(self.context, Context::Discarding) && !header.first() {
            self.dropped_cells += 1;
            return None;
        }
        // Failed cells report their header as received; RETH, offset and immediate are zero.
        let fail = |status| CellOutcome {
            status,
            header,
            reth: Reth::default(),
            offset: 0,
            immediate: 0,
            payload: vec![],
        };
        let cell = match decode_cell(words, self.cell_payload) {
            Ok(c) => c,
            Err(e) => {
                self.context = Context::Discarding;
                return Some(fail(e.status));
            }
        };
        let reth_in_cell = cell.reth.unwrap_or_default();
        // Sequence: a first cell must start a message, a continuation must follow one.
        let (first, reth, next_seq, offset, mut so_far) =
            match std::mem::replace(&mut self.context, Context::Discarding) {
                Context::InMessage {
                    first,
                    reth,
                    next_seq,
                    offset,
                    payload_so_far,
                } if !header.first() => (first, reth, next_seq, offset, payload_so_far),
                Context::InMessage { .. } => return Some(fail(CellStatus::Sequence)),
                Context::Idle | Context::Discarding if header.first() => {
                    (header, reth_in_cell, 0, 0, Vec::new())
                }
                Context::Idle | Context::Discarding => return Some(fail(CellStatus::Sequence)),
            };
        if header.cell_seq != next_seq {
            return Some(fail(CellStatus::Sequence));
        }
        let same = header.opcode == first.opcode
            && (header.flags & !(flag::FIRST | flag::LAST))
                == (first.flags & !(flag::FIRST | flag::LAST))
            && header.dest_node == first.dest_node
            && header.src_node == first.src_node
            && header.dest_qp == first.dest_qp
            && header.src_qp == first.src_qp
            && header.psn == first.psn
            && header.message_length == first.message_length;
        if !same {
            return Some(fail(CellStatus::Malformed));
        }
        let remaining = header.message_length - offset;
        let expected_len = remaining.min(self.cell_payload as u32);
        let ends = offset + header.cell_length as u32 == header.message_length;
        if header.cell_length as u32 != expected_len || header.last() != ends {
            return Some(fail(CellStatus::Length));
        }
        so_far.extend_from_slice(&cell.payload);
        if header.last() && cell.packet_crc != Some(CRC32.checksum(&so_far)) {
            return Some(fail(CellStatus::Crc));
        }
        self.context = if header.last() {
            Context::Idle
        } else {
            Context::InMessage {
                first,
                reth,
                next_seq: next_seq.wrapping_add(1),
                offset: offset + header.cell_length as u32,
                payload_so_far: so_far,
            }
        };
        Some(CellOutcome {
            status: CellStatus::Ok,
            header,
            reth,
            offset,
            immediate: cell.immediate.unwrap_or(0),
            payload: cell.payload,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(len: usize) -> Message {
        Message {
            opcode: opcode::RDMA_WRITE_IMMEDIATE,
            dest_node: 3,
            src_node: 7,
            dest_qp: 1,
            src_qp: 2,
            psn: 0x123456,
            vaddr: 0xdead_beef_0000,
            stag: 0x0100_0042,
            dma_length: len as u32,
            immediate: Some(0xcafe_f00d),
            invalidate: false,
            resync: false,
            payload: (0..len).map(|i| (i * 7 + 1) as u8).collect(),
        }
    }

    #[test]
    fn cells_split_at_cell_payload_and_carry_reth_and_trailer() {
        let cells = encode_message(&msg(600), 256).unwrap();
        assert_eq!(cells.len(), 3);
        assert_eq!(cells[0].len(), 3 + 2 + 32 + 1);
        assert_eq!(cells[1].len(), 3 + 32 + 1);
        assert_eq!(cells[2].len(), 3 + 11 + 1 + 1);
        let last = decode_cell(&cells[2], 256).unwrap();
        assert_eq!(last.immediate, Some(0xcafe_f00d));
        assert_eq!(last.packet_crc, Some(CRC32.checksum(&msg(600).payload)));
        let first = decode_cell(&cells[0], 256).unwrap();
        assert_eq!(first.reth.unwrap().vaddr, 0xdead_beef_0000);
    }

    #[test]
    fn empty_message_is_one_cell() {
        let cells = encode_message(&msg(0), 256).unwrap();
        assert_eq!(cells.len(), 1);
        let c = decode_cell(&cells[0], 256).unwrap();
        assert!(c.header.first() && c.header.last());
        assert!(c.payload.is_empty());
    }

    #[test]
    fn cell_crc_matches_plain_zlib_over_preceding_bytes() {
        for cell in encode_message(&msg(300), 256).unwrap() {
            let bytes = words_to_bytes(&cell);
            let n = bytes.len();
            let carried = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap());
            assert_eq!(carried, CRC32.checksum(&bytes[..n - 8]));
        }
    }

    #[test]
    fn decode_names_field_and_offset() {
        let mut cell = encode_message(&msg(20), 256).unwrap().remove(0);
        cell[7] ^= 1 << 9; // payload byte 1 of word 7 -> CRC error at the CRC word
        let e = decode_cell(&cell, 256).unwrap_err();
        assert_eq!(e.status, CellStatus::Crc);
        assert_eq!(e.offset, (cell.len() - 1) * 8);
        let e = decode_cell(&cell[..cell.len() - 2], 256).unwrap_err();
        assert_eq!(e.status, CellStatus::Length);
        assert!(e.to_string().contains("truncated"), "{e}");
        let e = decode_cell(&[1, 2], 256).unwrap_err();
        assert!(e.to_string().contains("truncated cell: 16 bytes"), "{e}");
    }

    #[test]
    fn bad_parameters_are_rejected_with_a_message() {
        assert_eq!(
            encode_message(&msg(1), 12),
            Err(EncodeError::CellPayload(12))
        );
        let mut m = msg(1);
        m.psn = 1 << 24;
        assert!(encode_message(&m, 256)
            .unwrap_err()
            .to_string()
            .contains("24 bits"));
    }

    #[test]
    fn model_reassembles_and_reports_errors_once_per_message() {
        let mut model = ReassemblyModel::new(256);
        let m = msg(700);
        let cells = encode_message(&m, 256).unwrap();
        let mut got = vec![];
        for c in &cells {
            let o = model.push_cell(c).unwrap();
            assert_eq!(o.status, CellStatus::Ok);
            got.extend(o.payload);
        }
        assert_eq!(got, m.payload);
        // Drop the middle cell: the last cell is a sequence error; nothing more is reported.
        let o = model.push_cell(&cells[0]).unwrap();
        assert_eq!(o.status, CellStatus::Ok);
        assert_eq!(
            model.push_cell(&cells[2]).unwrap().status,
            CellStatus::Sequence
        );
        // A continuation after the error is dropped silently.
        assert_eq!(model.push_cell(&cells[1]), None);
        assert_eq!(model.dropped_cells, 1);
        // A new first cell restarts.
        assert_eq!(model.push_cell(&cells[0]).unwrap().status, CellStatus::Ok);
    }

    #[test]
    fn model_names_a_message_cut_off_before_its_last_cell() {
        let mut model = ReassemblyModel::new(256);
        let cells = encode_message(&msg(700), 256).unwrap();
        assert_eq!(model.unfinished(), None);
        model.push_cell(&cells[0]).unwrap();
        model.push_cell(&cells[1]).unwrap();
        let u = model.unfinished().unwrap();
        assert_eq!((u.cells, u.bytes, u.first.psn), (2, 512, 0x123456));
        assert!(
            u.to_string()
                .starts_with("message ends after cell 1 of PSN 0x123456 without a LAST cell"),
            "{u}"
        );
        model.push_cell(&cells[2]).unwrap();
        assert_eq!(model.unfinished(), None);
    }
}
