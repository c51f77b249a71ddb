//! The host interface: the blocks between the engines and the host's CSR port, DMA ports
//! and completion ring, and the one transmit path to the segmenter.
//!
//! - [`NicCsr`] (`csr.rs`): global registers and counters; forwards per-QP and TPT accesses.
//! - [`CompletionQueue`]: writes CQEs for the send and the receive side.
//! - [`DmaReadArbiter`], [`DmaWriteArbiter`]: two clients onto one host-memory port each.
//! - [`TxArbiter`]: the requester's and the responder's messages onto the segmenter.

pub mod completion_queue;
pub mod csr;
pub mod dma_read_arbiter;
pub mod dma_write_arbiter;
pub mod tx_arbiter;

pub use completion_queue::CompletionQueue;
pub use csr::NicCsr;
pub use dma_read_arbiter::DmaReadArbiter;
pub use dma_write_arbiter::DmaWriteArbiter;
pub use tx_arbiter::TxArbiter;
