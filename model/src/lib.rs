//! Plain-Rust reference models and the shared test doubles of the NIC's block tests and
//! replays (`docs/nic-blocks.md`, "Tests").
//!
//! Each double is one thing and draws only from the seeded RNG its caller passes, in a
//! fixed order, so a test's seed fixes its whole stimulus:
//! - [`Throttle`]: an idle-gap or back-pressure inserter (go with probability `p`).
//! - [`Source`]: a valid/ready source that offers items in order with idle gaps and holds
//!   each offer until it is taken.
//! - [`DmaReadServer`]: host memory's DMA read port (request back-pressure, latency per
//!   burst, gaps between words, data from a host-memory word function).
//! - [`DmaWriteSink`]: host memory's DMA write port (back-pressure, byte strobes, checks
//!   that a shown beat is held until taken).
//! - [`words`]: payload bytes as the 64-bit words a source drives (garbage past the length).
//! - [`cell_faults`]: random messages and cell-stream faults.
//! - [`responder`]: the reference model of the receive queue engine (the responder).
//! - [`requester`]: the send queue engine's port transactions, the rules a WQE becomes a
//!   message by, and the scoreboard that judges the engine's ports by the requester's rules.
//! - [`random_wqe`]: random send WQEs (every opcode, inline, local operations, bad ones)
//!   for the requester's block tests.
//! - [`remote_responder`]: a remote responder answering requests with acknowledgement
//!   events, with losses, refusals and resyncs, recording what it applied.
//! - [`qp_flags`]: the reference model of the responder's per-QP flags.
//! - [`claim_stage`], [`payload_ledger`], [`tx_read_port`], [`wqe_latch`]: reference
//!   models of the `TransmitMachine`'s claim stage, payload ledger, tx read client and WQE
//!   latch.
//! - [`bind_writer`]: the reference model of the requester's BIND TPT write (`BindWriter`).
//! - [`event_evaluator`]: the reference model of the requester's event evaluation.
//! - [`sq_csr_access`]: the reference model of the send engine's per-QP CSR registers.
//! - [`sq_op_grant`], [`sq_op_decision`]: reference models of the send engine's table-engine
//!   grants (`SqOpGrant`) and its decision on the registered entry (`SqOpDecision`).
//! - [`rqe_fetch`]: the reference model of the responder's receive queue entry read.
//! - [`act_stage`]: the reference model of the responder's Act clock (`ActStage`).
//! - [`tpt_client`]: the reference model of the responder's access check (`TptClient`).
//! - [`message_context`]: the reference model of the responder's message registers
//!   (`MessageContext`).
//! - [`message_sequencer`]: the reference model of the responder's message state machine
//!   (`MessageSequencer`).
//! - [`payload_take`]: the reference model of the responder's beat take (`PayloadTake`).
//! - [`header_capture`]: the reference model of the responder's header decode and capture
//!   (`HeaderCapture`).
//! - [`receive_counters`]: the reference model of the responder's statistics counters
//!   (`ReceiveCounters`).
//!
//! nic-rtl's block tests that use these live in `rtl/tests/` (integration tests see one
//! nic-rtl; a unit test inside nic-rtl would see a second copy of its types).

pub mod act_stage;
pub mod bind_writer;
pub mod cell_faults;
pub mod claim_stage;
pub mod event_evaluator;
pub mod header_capture;
pub mod host_memory;
pub mod lookup_capture;
pub mod message_context;
pub mod message_sequencer;
pub mod payload_ledger;
pub mod payload_take;
pub mod qp_flags;
pub mod random_wqe;
pub mod receive_counters;
pub mod remote_responder;
pub mod requester;
pub mod responder;
pub mod rqe_fetch;
pub mod sq_csr_access;
pub mod sq_op_decision;
pub mod sq_op_grant;
pub mod stream;
pub mod tpt_client;
pub mod tx_read_port;
pub mod words;
pub mod wqe_latch;

pub use host_memory::{host_bytes, host_word, DmaReadServer, DmaWriteSink};
pub use stream::{Source, Throttle};
