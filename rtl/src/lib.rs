//! RustHDL blocks of the NIC datapath and their Verilog export.
//!
//! The folders follow the NIC: [`cell`] (layout, segmenter, reassembler), [`crc32`],
//! [`requester`] (send queue engine and its children), [`responder`] (receive queue engine,
//! decision, responses), [`host`] (CSR, completion queue, DMA arbiters, transmit arbiter),
//! [`tpt`] and [`common`] (round robin, handshake bundles); [`NicTop`] wires them. One block
//! per file; each block's doc comment lists its ports, latency, throughput, limits and the
//! source it follows. [`export`] turns each block into a Verilog module named
//! `nic_<block>`.

pub mod cell;
pub mod common;
pub mod config;
pub mod crc32;
pub mod export;
pub mod host;
pub mod nic_top;
pub mod requester;
pub mod responder;
pub mod sim;
pub mod tpt;

pub use cell::format::{CellStatus, Message, DEFAULT_CELL_PAYLOAD};
pub use cell::{CellDatapath, CellReassembler, CellSegmenter};
pub use config::NicConfig;
pub use crc32::{Crc32, Crc32Prepad, Crc32Step, Crc32Unshift};
pub use host::{CompletionQueue, DmaReadArbiter, DmaWriteArbiter, NicCsr, TxArbiter};
pub use nic_top::NicTop;
pub use requester::{AckEventQueue, SendQueueEngine};
pub use responder::{NackGenerator, ReceiveQueueEngine, ResponseGenerator};
pub use tpt::Tpt;
