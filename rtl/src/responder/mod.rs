//! The responder: requests arriving from the network, decided, executed into host memory
//! and answered (`docs/nic-architecture.md`, "Reliability").
//!
//! - [`ReceiveQueueEngine`]: takes the reassembler's cell outcomes, looks up the queue
//!   pair, applies the decision, writes payload and atomics, and routes answers of this
//!   NIC's own requests to the requester.
//! - [`NackGenerator`]: the decision for a request message (rules 1-7).
//! - [`ResponseGenerator`]: the owed ACK, NACK, READ and atomic responses.
//! - [`receive_queue_model`]: the plain-Rust reference model of the responder.

pub mod nack_generator;
pub mod qp_state;
pub mod receive_queue_engine;
pub mod receive_queue_model;
pub mod response_generator;
pub mod writer;

pub use nack_generator::NackGenerator;
pub use qp_state::QpState;
pub use receive_queue_engine::ReceiveQueueEngine;
pub use response_generator::ResponseGenerator;
pub use writer::Writer;
