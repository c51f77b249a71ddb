//! Blocks and types shared by the NIC's engines and host-side blocks.
//!
//! - [`RoundRobin`]: the one round-robin arbiter, used by every block that arbitrates.
//! - [`NackCounters`]: the eight NACK counters per syndrome (`NACK_SENT`, `NACK_RECEIVED`).
//! - [`bundles`]: the payload types of the handshakes ([`AckEvent`]).

pub mod nack_counters;
pub use nack_counters::NackCounters;
pub mod round_robin;
pub use round_robin::RoundRobin;
pub mod bundles;
pub use bundles::AckEvent;
