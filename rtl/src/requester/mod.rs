//! The requester: work requests posted by the driver, sent as messages, acknowledged and
//! completed (`docs/nic-blocks.md`, "SendQueueEngine").
//!
//! - [`SendQueueEngine`]: the send queue engine; instantiates the child blocks below.
//! - [`QpTable`]: the per-QP table ([`QpEntry`] per queue pair), its read and write ports and
//!   the clear after reset.
//! - [`Scheduler`]: the eligibility bit per queue pair and the round robin among them.
//! - [`TransmitMachine`]: the transmit path in three stages (claim, WQE fetch, send:
//!   commit, message, payload), so the next WQE is fetched while a message streams.
//! - [`WqeFetch`]: the DMA read of a WQE's eight words into typed fields, the hand-off of a
//!   short WQE after word 4 and the drain of its unused words.
//! - [`PayloadBuffer`]: the payload words read from host memory, so the tx DMA read client
//!   is free for the next WQE while they stream out.
//! - [`AckMachine`]: the acknowledgement and completion machine: one event at a time, its
//!   completion jobs (WQE re-read, completion request, `sq_una` advance) and the timer scan.
//! - [`EventEvaluator`]: the judgement of one acknowledgement event against a queue pair's
//!   entry (completions, where transmission resumes, the retry count).
//! - [`SqCsrAccess`]: the per-QP CSR registers: a read's answer from the entry, the entry
//!   a write leaves.
//! - [`AckEventQueue`]: the acknowledgement events from the responder side.

pub mod ack_event_queue;
pub mod ack_machine;
pub mod event_evaluator;
pub mod payload_buffer;
pub mod qp_table;
pub mod scheduler;
pub mod send_queue_engine;
pub mod sq_csr_access;
pub mod transmit_machine;
pub mod wqe_fetch;

pub use ack_event_queue::AckEventQueue;
pub use ack_machine::AckMachine;
pub use event_evaluator::EventEvaluator;
pub use payload_buffer::PayloadBuffer;
pub use qp_table::{QpEntry, QpTable};
pub use scheduler::Scheduler;
pub use send_queue_engine::SendQueueEngine;
pub use sq_csr_access::SqCsrAccess;
pub use transmit_machine::TransmitMachine;
pub use wqe_fetch::WqeFetch;
