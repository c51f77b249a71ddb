//! Blocks and types shared by the NIC's engines and host-side blocks.
//!
//! - [`RoundRobin`]: the one round-robin arbiter, used by every block that arbitrates.
//! - [`EventCounter`]: a 32-bit statistics counter with its count pulse registered first.
//! - [`NackCounters`]: the eight NACK counters per syndrome (`NACK_SENT`, `NACK_RECEIVED`).
//! - [`zeroed_ram`]: a RAM whose words start at zero in every simulator.
//! - [`QpRam`]: a per-queue-pair RAM (zero at start) whose depth follows the queue-pair count.
//! - [`bundles`]: the payload types of the handshakes ([`AckEvent`], [`CellOutcomeHeader`], [`CompletionRequest`], [`FinishedCell`], [`MessageDescriptor`], [`OutcomeClass`], [`SendWqe`], [`TptRequest`]).

pub mod event_counter;
pub use event_counter::EventCounter;
pub mod nack_counters;
pub use nack_counters::NackCounters;
pub mod qp_ram;
pub mod round_robin;
pub mod zeroed_ram;
pub use qp_ram::QpRam;
pub use round_robin::RoundRobin;
pub use zeroed_ram::zeroed_ram;
pub mod bundles;
pub use bundles::{
    AckEvent, CellOutcomeHeader, CompletionRequest, FinishedCell, MessageDescriptor, OutcomeClass,
    OwedResponse, SendWqe, TptBindWrite, TptRequest,
};
