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

/// Most payload bytes an inline SEND carries in its WQE.
pub const INLINE_MAX_BYTES: usize = 32;
/// The WQE words that hold an inline payload, in payload order (the fields a SEND does not
/// use: remote address, compare/add, swap, reserved).
pub const INLINE_WORDS: [usize; 4] = [3, 5, 6, 7];

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

    pub fn to_words(&self) -> [u64; 8] {
        [
            self.opcode as u64
                | (self.invalidate as u64) << 8
                | (self.inline as u64) << 9
                | (self.length as u64) << 32,
            self.wr_id,
            self.local_addr as u64,
            self.remote_vaddr,
            self.stag as u64 | (self.immediate as u64) << 32,
            self.compare_add,
            self.swap,
            self.reserved,
        ]
    }

    pub fn from_words(w: &[u64; 8]) -> Self {
        Wqe {
            opcode: w[0] as u8,
            invalidate: (w[0] >> 8) & 1 != 0,
            inline: (w[0] >> 9) & 1 != 0,
            length: (w[0] >> 32) as u32,
            wr_id: w[1],
            local_addr: w[2] as u32,
            remote_vaddr: w[3],
            stag: w[4] as u32,
            immediate: (w[4] >> 32) as u32,
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
                | (self.status as u64) << 8
                | (self.qp as u64) << 16
                | (self.is_receive as u64) << 24
                | (self.has_immediate as u64) << 25
                | (self.byte_count as u64) << 32,
            (self.wqe_index & crate::PSN_MASK) as u64
                | (self.src_node as u64) << 32
                | (self.src_qp as u64) << 48,
            self.wr_id,
            self.immediate as u64 | (self.sequence as u64) << 32,
        ]
    }

    pub fn from_words(w: &[u64; 4]) -> Self {
        Cqe {
            opcode: w[0] as u8,
            status: (w[0] >> 8) as u8,
            qp: (w[0] >> 16) as u8,
            is_receive: (w[0] >> 24) & 1 != 0,
            has_immediate: (w[0] >> 25) & 1 != 0,
            byte_count: (w[0] >> 32) as u32,
            wqe_index: (w[1] as u32) & crate::PSN_MASK,
            src_node: (w[1] >> 32) as u16,
            src_qp: (w[1] >> 48) as u16,
            wr_id: w[2],
            immediate: w[3] as u32,
            sequence: (w[3] >> 32) as u32,
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
    fn opcode_classes() {
        assert!(WqeOpcode::RdmaRead.is_rdma() && !WqeOpcode::Send.is_rdma());
        assert!(WqeOpcode::RdmaWriteImmediate.consumes_receive());
        assert!(!WqeOpcode::RdmaWrite.consumes_receive());
        assert_eq!(WqeOpcode::from_code(0x14), Some(WqeOpcode::AtomicFetchAdd));
        assert_eq!(WqeOpcode::from_code(0x15), None);
    }
}
