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

/// Send work queue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Wqe {
    pub opcode: u8,
    pub invalidate: bool,
    pub length: u32,
    pub wr_id: u64,
    pub local_addr: u32,
    pub remote_vaddr: u64,
    pub stag: u32,
    pub immediate: u32,
    pub compare_add: u64,
    pub swap: u64,
}

impl Wqe {
    pub const WORDS: usize = 8;

    pub fn to_words(&self) -> [u64; 8] {
        [
            self.opcode as u64 | (self.invalidate as u64) << 8 | (self.length as u64) << 32,
            self.wr_id,
            self.local_addr as u64,
            self.remote_vaddr,
            self.stag as u64 | (self.immediate as u64) << 32,
            self.compare_add,
            self.swap,
            0,
        ]
    }

    pub fn from_words(w: &[u64; 8]) -> Self {
        Wqe {
            opcode: w[0] as u8,
            invalidate: (w[0] >> 8) & 1 != 0,
            length: (w[0] >> 32) as u32,
            wr_id: w[1],
            local_addr: w[2] as u32,
            remote_vaddr: w[3],
            stag: w[4] as u32,
            immediate: (w[4] >> 32) as u32,
            compare_add: w[5],
            swap: w[6],
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
        };
        assert_eq!(Wqe::from_words(&wqe.to_words()), wqe);
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
