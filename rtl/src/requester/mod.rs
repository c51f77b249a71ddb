//! The requester's child blocks (`docs/nic-blocks.md`, "SendQueueEngine"): the
//! `SendQueueEngine` (`send_queue_engine.rs`) instantiates them.
//!
//! - [`Scheduler`]: the eligibility bit per queue pair and the round robin among them.

pub mod scheduler;
pub use scheduler::Scheduler;
