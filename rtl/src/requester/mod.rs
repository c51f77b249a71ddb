//! The requester: work requests posted by the driver, sent as messages, acknowledged and
//! completed (`docs/nic-blocks.md`, "SendQueueEngine").
//!
//! - [`SendQueueEngine`]: the send queue engine; instantiates the child blocks below.
//! - [`QpTable`]: the per-QP table ([`QpEntry`] per queue pair), its read and write ports and
//!   the clear after reset.
//! - [`Scheduler`]: the eligibility bit per queue pair and the round robin among them.
//! - [`TransmitMachine`]: the transmit path in three stages (claim, WQE fetch, send:
//!   commit, message, payload), so the next WQE is fetched while a message streams.
//! - [`ClaimStage`]: the transmit machine's first stage (pick, claim, fetch request) and
//!   the claim's values of the WQE in the fetch, handed to the send stage.
//! - [`WqeFetch`]: the DMA read of a WQE's eight words into typed fields, the hand-off of a
//!   short WQE after word 4 and the drain of its unused words.
//! - [`WqeLatch`]: the send stage's copy of a fetched WQE and its class (status, local
//!   only, message length, payload words, early or long payload).
//! - [`PayloadBuffer`]: the payload words read from host memory, so the tx DMA read client
//!   is free for the next WQE while they stream out.
//! - [`TxReadPort`]: the transmit machine's tx DMA read client, shared by the WQE fetch
//!   and the payload reads, with the tag queue and the payload buffer.
//! - [`SendSlot`]: the transmit machine's message output: the send stage's descriptor, the
//!   send slot of a message read early, the offer and the count of messages sent.
//! - [`PayloadLedger`]: the messages whose payload is in the buffer, the words reserved
//!   and the registered room for the next early payload.
//! - [`AckMachine`]: the acknowledgement and completion machine: one event at a time, its
//!   completion jobs (WQE re-reads through a two-slot read queue, completion requests and
//!   `sq_una` advances in order, overlapping the next event's evaluation) and the timer
//!   scan.
//! - [`BindWriter`]: a good BIND RKEY's write into the hardware TPT, on the local
//!   completion's way from the transmit machine to the acknowledgement machine: the BIND
//!   completes (and its queue pair goes on) once the TPT has accepted it.
//! - [`AckRetire`]: the acknowledgement machine's back: the two-slot read queue of
//!   re-read completions, their completion requests and `sq_una` advances, in order.
//! - [`EventEvaluator`]: the judgement of one acknowledgement event against a queue pair's
//!   entry (completions, where transmission resumes, the retry count).
//! - [`SqCsrAccess`]: the per-QP CSR registers: a read's answer from the entry, the entry
//!   a write leaves.
//! - [`SqOpGrant`]: the table engine's grants (CSR access, acknowledgement, transmit, timer
//!   scan) and the clocks of the operation granted.
//! - [`SqOpDecision`]: the entry registered and the operation's decision on it (claim,
//!   commit, advance, timer check; a CSR write's or an evaluation's entry); the cycle counter.
//! - [`AckEventQueue`]: the acknowledgement events from the responder side.

pub mod ack_event_queue;
pub mod ack_machine;
pub mod ack_retire;
pub mod bind_writer;
pub mod claim_stage;
pub mod event_evaluator;
pub mod payload_buffer;
pub mod payload_ledger;
pub mod qp_table;
pub mod scheduler;
pub mod send_queue_engine;
pub mod send_slot;
pub mod sq_csr_access;
pub mod sq_op_decision;
pub mod sq_op_grant;
pub mod transmit_machine;
pub mod tx_read_port;
pub mod wqe_fetch;
pub mod wqe_latch;

pub use ack_event_queue::AckEventQueue;
pub use ack_machine::AckMachine;
pub use ack_retire::AckRetire;
pub use bind_writer::BindWriter;
pub use claim_stage::ClaimStage;
pub use event_evaluator::EventEvaluator;
pub use payload_buffer::PayloadBuffer;
pub use payload_ledger::PayloadLedger;
pub use qp_table::{QpEntry, QpTable};
pub use scheduler::Scheduler;
pub use send_queue_engine::SendQueueEngine;
pub use send_slot::SendSlot;
pub use sq_csr_access::SqCsrAccess;
pub use sq_op_decision::SqOpDecision;
pub use sq_op_grant::SqOpGrant;
pub use transmit_machine::TransmitMachine;
pub use tx_read_port::TxReadPort;
pub use wqe_fetch::WqeFetch;
pub use wqe_latch::WqeLatch;
