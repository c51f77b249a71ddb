//! The NIC's host interface, shared by the RTL's tests, the driver and the co-simulation:
//! the CSR map (`docs/csr-map.md`), the host-memory structures and the NACK syndromes
//! (`docs/nic-architecture.md`). Pure data, no dependencies.

pub mod csr;
pub mod queue_entries;
pub mod syndrome;

pub use queue_entries::{
    cqe_field, wqe_field, Cqe, Rqe, Wqe, WqeOpcode, BIND_OPCODE, DELAY_CYCLES_BITS,
    DELAY_CYCLES_MASK, DELAY_CYCLES_WORD, DELAY_OPCODE, INLINE_MAX_BYTES, INLINE_WORDS, NOP_OPCODE,
};
pub use syndrome::{
    AethRefusals, CompletionStatus, Syndrome, AETH_REFUSALS_REPORTED, AETH_REFUSALS_SHIFT,
    AETH_REFUSAL_CODE_BITS,
};

/// Largest number of queue pairs a NIC can be configured with (6-bit QP index).
pub const MAX_QUEUE_PAIRS: usize = 64;
/// Largest message (work request) length in bytes.
pub const MAX_MESSAGE_LENGTH: u32 = 65536;
/// Unacknowledged messages allowed per queue pair.
pub const SEND_WINDOW: u32 = 8;
/// Packet sequence numbers are 24 bits.
pub const PSN_BITS: u32 = 24;
pub const PSN_MASK: u32 = (1 << PSN_BITS) - 1;
/// Bytes per send work queue entry, receive queue entry, completion queue entry.
pub const WQE_BYTES: u32 = 64;
pub const RQE_BYTES: u32 = 32;
pub const CQE_BYTES: u32 = 32;
/// Largest `*_SIZE_LOG2` value.
pub const MAX_RING_SIZE_LOG2: u32 = 16;
/// Physical host addresses are 32 bits; every DMA address is 8-aligned.
pub const HOST_ADDRESS_BITS: u32 = 32;

/// `(a - b) mod 2^24`.
pub fn psn_distance(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b) & PSN_MASK
}
