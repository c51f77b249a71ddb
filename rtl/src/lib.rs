//! RustHDL blocks of the NIC datapath and their Verilog export.
//!
//! One block per file; each block's doc comment lists its ports, latency, throughput,
//! limits and the source it follows. [`export`] turns each block into a Verilog module
//! named `nic_<block>`.

pub mod cell_faults;
pub mod cell_format;
pub mod common;
pub mod export;
pub mod requester;

pub use cell_format::{CellStatus, Message, DEFAULT_CELL_PAYLOAD};
pub mod crc32;
pub mod crc32_prepad;
pub mod crc32_step;
pub mod crc32_unshift;
pub mod sim;

pub use crc32::Crc32;
pub use crc32_prepad::Crc32Prepad;
pub use crc32_step::Crc32Step;
pub use crc32_unshift::Crc32Unshift;
pub mod cell_segmenter;
pub use cell_segmenter::CellSegmenter;
pub mod cell_reassembler;
pub use cell_reassembler::CellReassembler;
pub mod cell_datapath;
pub use cell_datapath::CellDatapath;
pub mod nic_config;
pub use nic_config::NicConfig;
pub mod ack_event_queue;
pub use ack_event_queue::AckEventQueue;
pub mod tx_arbiter;
pub use tx_arbiter::TxArbiter;
pub mod response_generator;
pub use response_generator::ResponseGenerator;
pub mod dma_write_arbiter;
pub use dma_write_arbiter::DmaWriteArbiter;
pub mod dma_read_arbiter;
pub use dma_read_arbiter::DmaReadArbiter;
pub mod completion_queue;
pub use completion_queue::CompletionQueue;
pub mod nic_csr;
pub use nic_csr::NicCsr;
pub mod tpt;
pub use tpt::Tpt;
pub mod send_queue_engine;
pub use send_queue_engine::SendQueueEngine;
pub mod nack_generator;
pub use nack_generator::NackGenerator;
pub mod receive_queue_engine;
pub use receive_queue_engine::ReceiveQueueEngine;
pub mod nic_top;
pub mod receive_queue_model;
pub use nic_top::NicTop;
