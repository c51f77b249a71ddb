//! Host-memory structures the NIC reads and writes by DMA: send work queue entries
//! (64 bytes), receive queue entries (32 bytes), completion queue entries (32 bytes).
//! Layouts: `docs/nic-architecture.md`.

/// Work-request opcodes (the same numbers as the request cells' opcodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum WqeOpcode {
    Send = 0x00,
    SendImmediate = 0x01,
    RdmaWrite = 0x10,
    RdmaWriteImmediate = 0x11,
    RdmaRead = 0x12,
    AtomicCompareSwap = 0x13,
    AtomicFetchAdd = 0x14,
}

impl WqeOpcode {
    pub const ALL: [WqeOpcode; 7] = [
        WqeOpcode::Send,
        WqeOpcode::SendImmediate,
        WqeOpcode::RdmaWrite,
        WqeOpcode::RdmaWriteImmediate,
        WqeOpcode::RdmaRead,
        WqeOpcode::AtomicCompareSwap,
        WqeOpcode::AtomicFetchAdd,
    ];

    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.iter().copied().find(|o| *o as u8 == code)
    }

    pub fn has_immediate(self) -> bool {
        matches!(
            self,
            WqeOpcode::SendImmediate | WqeOpcode::RdmaWriteImmediate
        )
    }

    pub fn is_atomic(self) -> bool {
        matches!(
            self,
            WqeOpcode::AtomicCompareSwap | WqeOpcode::AtomicFetchAdd
        )
    }

    /// RDMA and atomics need the remote side's RDMA enable (and TPT check).
    pub fn is_rdma(self) -> bool {
        (self as u8) >> 4 == 1
    }

    /// Whether the responder consumes a receive queue entry.
    pub fn consumes_receive(self) -> bool {
        matches!(
            self,
            WqeOpcode::Send | WqeOpcode::SendImmediate | WqeOpcode::RdmaWriteImmediate
        )
    }
}

/// WQE opcode of a NOP: nothing is sent; it completes locally with success, in order, once
/// every earlier WQE of its queue pair has completed (like a bad WQE, but status 0). Posted
/// behind a send-side reset, its completion tells the driver the NIC is done with every
/// WQE of before the reset: the transmit path reads a WQE's words on the same read port
/// as, and after, the payload of every message it committed before (the payload goes to
/// a buffer on its way to the wire), and completes the NOP only after its words have
/// arrived, so it has finished reading the payload of any message it had committed; a WQE
/// fetched but not yet committed when the reset came is dropped at its commit.
pub const NOP_OPCODE: u8 = 0x0F;

/// WQE opcode of a DELAY (source 001: "a delay WQE provides a command to SANIC hardware to
/// delay processing of the QP's WQEs for a specific time interval"; it lets a process
/// meter the flow of its operations into the fabric). Nothing is sent. Like a NOP it
/// starts once every earlier WQE of its queue pair has completed and completes locally
/// with success, in order; from the clock it starts, the queue pair is held: the NIC's
/// scheduler does not serve it (other queue pairs keep sending) until
/// [`DELAY_CYCLES_MASK`]-masked word [`DELAY_CYCLES_WORD`] NIC clock cycles have passed.
/// The next WQE of the queue pair is therefore transmitted at least that many NIC clock
/// cycles after the DELAY started (at most `queue_pairs + 2` cycles more, the hold's
/// release scan). A DELAY whose word 3 has bits above [`DELAY_CYCLES_BITS`] set completes
/// with LOCAL_LENGTH_ERROR (0x01) and holds nothing.
pub const DELAY_OPCODE: u8 = 0x0E;
/// The DELAY's WQE word holding its cycle count (the remote-address word: a DELAY sends
/// nothing).
pub const DELAY_CYCLES_WORD: usize = 3;
/// Width of the DELAY's cycle count: at most 2^24 - 1 NIC clock cycles (134 ms at 125 MHz).
pub const DELAY_CYCLES_BITS: u32 = 24;
pub const DELAY_CYCLES_MASK: u64 = (1 << DELAY_CYCLES_BITS) - 1;

/// WQE opcode of a BIND RKEY (source 001: "a bind/unbind remote access key (RKey) WQE
/// provides a command to SANIC hardware to modify the association of a RKey with a local
/// virtually contiguous buffer"). Nothing is sent. It is executed in send-queue order:
/// like a NOP it starts once every earlier WQE of its queue pair has completed, completes
/// locally, in order, and no later WQE of the queue pair is transmitted before its
/// completion has been posted. Fields ([`Wqe::bind`]): word 4 bits 31:0 the RKey
/// ([`BIND_RKEY_WORD`]), word 3 the virtual base ([`BIND_VADDR_WORD`]), word 0 bits 63:32
/// the length, word 2 the physical base ([`BIND_PADDR_WORD`]), word 4 bits 34:32 the rights
/// (bit 0 remote read, 1 remote write, 2 atomic; [`BIND_RIGHTS_SHIFT`]). An unbind is a
/// bind with a null address and zero length (001). With a hardware TPT the NIC writes the
/// entry itself (STag bits 31:8 the index, 7:0 the key; an unbind writes it invalid)
/// before the BIND completes and before any later WQE of the queue pair is transmitted;
/// without one the NIC's part is the ordering and the driver applies the binding to its
/// software TPT when it sees the completion (`docs/nic-architecture.md`, "Bind RKey and
/// Delay").
pub const BIND_OPCODE: u8 = 0x0D;
/// The BIND's WQE words: RKey (bits 31:0) and rights, virtual base, physical base.
pub const BIND_RKEY_WORD: usize = 4;
pub const BIND_VADDR_WORD: usize = 3;
pub const BIND_PADDR_WORD: usize = 2;
/// Position of the BIND's rights in word 4 (the immediate field's bits 2:0).
pub const BIND_RIGHTS_SHIFT: u32 = 32;
/// The rights bits a BIND may set.
pub const BIND_RIGHTS_MASK: u32 = 0x7;

/// Most payload bytes an inline SEND carries in its WQE.
pub const INLINE_MAX_BYTES: usize = 32;
/// The WQE words that hold an inline payload, in payload order (the fields a SEND does not
/// use: remote address, compare/add, swap, reserved).
pub const INLINE_WORDS: [usize; 4] = [3, 5, 6, 7];

/// Where a WQE's fields sit in its words: word 0 holds the opcode (bits 0..8), the flags
/// and the length; word 4 the STag and the immediate.
pub mod wqe_field {
    /// Word 0: the invalidate flag.
    pub const INVALIDATE_BIT: u32 = 8;
    /// Word 0: the inline flag.
    pub const INLINE_BIT: u32 = 9;
    /// Word 0: the lowest bit of the 32-bit length.
    pub const LENGTH_SHIFT: u32 = 32;
    /// Word 4: the lowest bit of the 32-bit immediate (the STag is bits 0..32).
    pub const IMMEDIATE_SHIFT: u32 = 32;
}

/// Where a CQE's fields sit in its four words (each the lowest bit of the field).
pub mod cqe_field {
    /// Word 0 (the opcode is bits 0..8).
    pub const STATUS_SHIFT: u32 = 8;
    pub const QP_SHIFT: u32 = 16;
    pub const IS_RECEIVE_BIT: u32 = 24;
    pub const HAS_IMMEDIATE_BIT: u32 = 25;
    pub const BYTE_COUNT_SHIFT: u32 = 32;
    /// Word 1 (the 24-bit WQE index is bits 0..24).
    pub const SRC_NODE_SHIFT: u32 = 32;
    pub const SRC_QP_SHIFT: u32 = 48;
    /// Word 3 (the immediate is bits 0..32).
    pub const SEQUENCE_SHIFT: u32 = 32;
}

/// Send work queue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Wqe {
    pub opcode: u8,
    pub invalidate: bool,
    /// SEND / SEND with immediate only: the payload (`length` <= [`INLINE_MAX_BYTES`]) is in
    /// the WQE's words [`INLINE_WORDS`], not at `local_addr`; the NIC reads no payload.
    pub inline: bool,
    pub length: u32,
    pub wr_id: u64,
    pub local_addr: u32,
    pub remote_vaddr: u64,
    pub stag: u32,
    pub immediate: u32,
    pub compare_add: u64,
    pub swap: u64,
    /// Word 7: zero, or the last word of an inline payload.
    pub reserved: u64,
}

impl Wqe {
    pub const WORDS: usize = 8;
    /// The words a WQE that is neither an atomic nor an inline SEND over 8 bytes uses
    /// (words 0-4); the rest (compare/add, swap, word 7) follow them.
    pub const SHORT_WORDS: usize = 5;

    /// The WQE uses words 0-4 only ([`Wqe::SHORT_WORDS`]): it is not an atomic and
    /// carries no inline payload over 8 bytes (which would reach past word 3).
    pub fn is_short(&self) -> bool {
        let atomic = WqeOpcode::from_code(self.opcode).is_some_and(|o| o.is_atomic());
        !(atomic || (self.inline && self.length > 8))
    }

    /// An inline SEND (with `immediate`, if any) of `payload` (at most
    /// [`INLINE_MAX_BYTES`]; `None` if longer).
    pub fn send_inline(payload: &[u8], immediate: Option<u32>) -> Option<Self> {
        if payload.len() > INLINE_MAX_BYTES {
            return None;
        }
        let mut words = [0u64; 4];
        for (i, chunk) in payload.chunks(8).enumerate() {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            words[i] = u64::from_le_bytes(b);
        }
        Some(Wqe {
            opcode: match immediate {
                Some(_) => WqeOpcode::SendImmediate as u8,
                None => WqeOpcode::Send as u8,
            },
            inline: true,
            length: payload.len() as u32,
            remote_vaddr: words[0],
            immediate: immediate.unwrap_or(0),
            compare_add: words[1],
            swap: words[2],
            reserved: words[3],
            ..Wqe::default()
        })
    }

    /// The inline payload's bytes (`length` of them), for an inline WQE.
    pub fn inline_payload(&self) -> Vec<u8> {
        let w = self.to_words();
        let mut bytes: Vec<u8> = INLINE_WORDS
            .iter()
            .flat_map(|&i| w[i].to_le_bytes())
            .collect();
        bytes.truncate((self.length as usize).min(INLINE_MAX_BYTES));
        bytes
    }

    /// A DELAY of `cycles` NIC clock cycles ([`DELAY_OPCODE`]; `None` above
    /// [`DELAY_CYCLES_MASK`]).
    pub fn delay(cycles: u32) -> Option<Self> {
        if cycles as u64 > DELAY_CYCLES_MASK {
            return None;
        }
        Some(Wqe {
            opcode: DELAY_OPCODE,
            remote_vaddr: cycles as u64,
            ..Wqe::default()
        })
    }

    /// The cycle count of a DELAY WQE (word [`DELAY_CYCLES_WORD`]).
    pub fn delay_cycles(&self) -> u64 {
        self.to_words()[DELAY_CYCLES_WORD]
    }

    /// A BIND RKEY ([`BIND_OPCODE`]): `rkey` to `length` bytes at virtual `vaddr`, physical
    /// `paddr`, with `rights` (bits 2:0 of [`BIND_RIGHTS_MASK`]). An unbind has `vaddr`,
    /// `paddr` and `length` 0.
    pub fn bind(rkey: u32, vaddr: u64, paddr: u32, length: u32, rights: u8) -> Self {
        Wqe {
            opcode: BIND_OPCODE,
            length,
            local_addr: paddr,
            remote_vaddr: vaddr,
            stag: rkey,
            immediate: rights as u32 & BIND_RIGHTS_MASK,
            ..Wqe::default()
        }
    }

    /// The rights of a BIND WQE.
    pub fn bind_rights(&self) -> u8 {
        ((self.to_words()[BIND_RKEY_WORD] >> BIND_RIGHTS_SHIFT) as u32 & BIND_RIGHTS_MASK) as u8
    }

    /// A BIND with null address and zero length: an unbind (001).
    pub fn is_unbind(&self) -> bool {
        self.opcode == BIND_OPCODE && self.remote_vaddr == 0 && self.length == 0
    }

    pub fn to_words(&self) -> [u64; 8] {
        [
            self.opcode as u64
                | (self.invalidate as u64) << wqe_field::INVALIDATE_BIT
                | (self.inline as u64) << wqe_field::INLINE_BIT
                | (self.length as u64) << wqe_field::LENGTH_SHIFT,
            self.wr_id,
            self.local_addr as u64,
            self.remote_vaddr,
            self.stag as u64 | (self.immediate as u64) << wqe_field::IMMEDIATE_SHIFT,
            self.compare_add,
            self.swap,
            self.reserved,
        ]
    }

    pub fn from_words(w: &[u64; 8]) -> Self {
        Wqe {
            opcode: w[0] as u8,
            invalidate: (w[0] >> wqe_field::INVALIDATE_BIT) & 1 != 0,
            inline: (w[0] >> wqe_field::INLINE_BIT) & 1 != 0,
            length: (w[0] >> wqe_field::LENGTH_SHIFT) as u32,
            wr_id: w[1],
            local_addr: w[2] as u32,
            remote_vaddr: w[3],
            stag: w[4] as u32,
            immediate: (w[4] >> wqe_field::IMMEDIATE_SHIFT) as u32,
            compare_add: w[5],
            swap: w[6],
            reserved: w[7],
        }
    }
}

/// Receive queue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Rqe {
    pub buffer_addr: u32,
    pub buffer_length: u32,
    pub wr_id: u64,
}

impl Rqe {
    pub const WORDS: usize = 4;

    pub fn to_words(&self) -> [u64; 4] {
        [
            self.buffer_addr as u64,
            self.buffer_length as u64,
            self.wr_id,
            0,
        ]
    }

    pub fn from_words(w: &[u64; 4]) -> Self {
        Rqe {
            buffer_addr: w[0] as u32,
            buffer_length: w[1] as u32,
            wr_id: w[2],
        }
    }
}

/// Completion queue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Cqe {
    pub opcode: u8,
    pub status: u8,
    pub qp: u8,
    pub is_receive: bool,
    pub has_immediate: bool,
    pub byte_count: u32,
    /// Send: the send queue index (= PSN); receive: the receive queue index. 24 bits.
    pub wqe_index: u32,
    pub src_node: u16,
    pub src_qp: u16,
    pub wr_id: u64,
    pub immediate: u32,
    /// n + 1 for the n-th completion since `CQ_BASE` was written; never 0.
    pub sequence: u32,
}

impl Cqe {
    pub const WORDS: usize = 4;

    pub fn to_words(&self) -> [u64; 4] {
        [
            self.opcode as u64
                | (self.status as u64) << cqe_field::STATUS_SHIFT
                | (self.qp as u64) << cqe_field::QP_SHIFT
                | (self.is_receive as u64) << cqe_field::IS_RECEIVE_BIT
                | (self.has_immediate as u64) << cqe_field::HAS_IMMEDIATE_BIT
                | (self.byte_count as u64) << cqe_field::BYTE_COUNT_SHIFT,
            (self.wqe_index & crate::PSN_MASK) as u64
                | (self.src_node as u64) << cqe_field::SRC_NODE_SHIFT
                | (self.src_qp as u64) << cqe_field::SRC_QP_SHIFT,
            self.wr_id,
            self.immediate as u64 | (self.sequence as u64) << cqe_field::SEQUENCE_SHIFT,
        ]
    }

    pub fn from_words(w: &[u64; 4]) -> Self {
        Cqe {
            opcode: w[0] as u8,
            status: (w[0] >> cqe_field::STATUS_SHIFT) as u8,
            qp: (w[0] >> cqe_field::QP_SHIFT) as u8,
            is_receive: (w[0] >> cqe_field::IS_RECEIVE_BIT) & 1 != 0,
            has_immediate: (w[0] >> cqe_field::HAS_IMMEDIATE_BIT) & 1 != 0,
            byte_count: (w[0] >> cqe_field::BYTE_COUNT_SHIFT) as u32,
            wqe_index: (w[1] as u32) & crate::PSN_MASK,
            src_node: (w[1] >> cqe_field::SRC_NODE_SHIFT) as u16,
            src_qp: (w[1] >> cqe_field::SRC_QP_SHIFT) as u16,
            wr_id: w[2],
            immediate: w[3] as u32,
            sequence: (w[3] >> cqe_field::SEQUENCE_SHIFT) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_through_words() {
        let wqe = Wqe {
            opcode: 0x13,
            invalidate: true,
            length: 8,
            wr_id: 0xDEAD_BEEF_0123_4567,
            local_addr: 0x1000,
            remote_vaddr: 0xFFFF_0000_1234_5678,
            stag: 0xABCD_EF01,
            immediate: 0x5555_AAAA,
            compare_add: 7,
            swap: 9,
            ..Wqe::default()
        };
        assert_eq!(Wqe::from_words(&wqe.to_words()), wqe);
        let message: Vec<u8> = (1..=31).collect();
        let inline = Wqe::send_inline(&message, Some(0x4354_524C)).unwrap();
        assert_eq!(Wqe::from_words(&inline.to_words()), inline);
        assert_eq!(inline.to_words()[0] >> 9 & 1, 1);
        assert_eq!(inline.inline_payload(), message);
        assert_eq!(
            inline.to_words()[5] & 0xFF,
            9,
            "payload byte 8 opens word 5"
        );
        assert!(Wqe::send_inline(&[0; 33], None).is_none());
        let rqe = Rqe {
            buffer_addr: 0x8000,
            buffer_length: 300,
            wr_id: 42,
        };
        assert_eq!(Rqe::from_words(&rqe.to_words()), rqe);
        let cqe = Cqe {
            opcode: 0x11,
            status: 0x62,
            qp: 63,
            is_receive: true,
            has_immediate: true,
            byte_count: 65536,
            wqe_index: 0xFF_FFFF,
            src_node: 0xFFFE,
            src_qp: 3,
            wr_id: u64::MAX,
            immediate: 1,
            sequence: 0xFFFF_FFFF,
        };
        assert_eq!(Cqe::from_words(&cqe.to_words()), cqe);
    }

    #[test]
    fn delay_and_bind_fields_sit_where_the_constants_say() {
        let d = Wqe::delay(0xAB_CDEF).unwrap();
        assert_eq!(d.to_words()[0] & 0xFF, DELAY_OPCODE as u64);
        assert_eq!(d.to_words()[DELAY_CYCLES_WORD], 0xAB_CDEF);
        assert_eq!(Wqe::from_words(&d.to_words()).delay_cycles(), 0xAB_CDEF);
        assert!(Wqe::delay(1 << DELAY_CYCLES_BITS).is_none());
        let b = Wqe::bind(0x1234_5678, 0x7000_0000_0010, 0x4000, 96, 0b110);
        let w = b.to_words();
        assert_eq!(w[0] & 0xFF, BIND_OPCODE as u64);
        assert_eq!(w[0] >> 32, 96);
        assert_eq!(w[BIND_RKEY_WORD] as u32, 0x1234_5678);
        assert_eq!(w[BIND_RKEY_WORD] >> BIND_RIGHTS_SHIFT, 0b110);
        assert_eq!(w[BIND_VADDR_WORD], 0x7000_0000_0010);
        assert_eq!(w[BIND_PADDR_WORD], 0x4000);
        let back = Wqe::from_words(&w);
        assert_eq!(back, b);
        assert_eq!(back.bind_rights(), 0b110);
        assert!(!b.is_unbind());
        assert!(Wqe::bind(0x1234_5678, 0, 0, 0, 0).is_unbind());
        for op in [NOP_OPCODE, DELAY_OPCODE, BIND_OPCODE] {
            assert_eq!(
                WqeOpcode::from_code(op),
                None,
                "{op:#x} is no message opcode"
            );
        }
    }

    #[test]
    fn opcode_classes() {
        assert!(WqeOpcode::RdmaRead.is_rdma() && !WqeOpcode::Send.is_rdma());
        assert!(WqeOpcode::RdmaWriteImmediate.consumes_receive());
        assert!(!WqeOpcode::RdmaWrite.consumes_receive());
        assert_eq!(WqeOpcode::from_code(0x14), Some(WqeOpcode::AtomicFetchAdd));
        assert_eq!(WqeOpcode::from_code(0x15), None);
    }
}
