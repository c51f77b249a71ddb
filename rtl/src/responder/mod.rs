//! The responder: requests arriving from the network, decided, executed into host memory
//! and answered (`docs/nic-architecture.md`, "Reliability").
//!
//! - [`ReceiveQueueEngine`]: the parent. Its state machine takes the reassembler's cell
//!   outcomes, asks the TPT and reads receive queue entries and atomic operands, owes
//!   answers, requests receive completions and routes answers of this NIC's own requests
//!   to the requester. Its children:
//!   - [`QpState`] (`qp_state.rs`, the lookup): the per-QP state table (RAMs with typed
//!     entries, flag bits, the reset sweep), the per-QP CSR side port, the expect events,
//!     the engine's lookups and write-backs; its child [`QpFlags`] (`qp_flags.rs`) holds the
//!     one-bit-per-QP flags (enabled, synced, NAK sent, the valid bits of the refusal
//!     window, resync point, saved atomic and expected response);
//!   - [`LookupCapture`] (`lookup_capture.rs`): the table's answer registered in the
//!     Lookup clock and compared with the cell (source, saved atomic, expected response)
//!     in the Decide clock;
//!   - [`MessageContext`] (`message_context.rs`): the message's registers (QP, write
//!     window, PSN position, answers, write-back), loaded by its states, and the answers
//!     assembled from them (`m_owe`, `m_answer`, `m_cpl`);
//!   - [`MessageSequencer`] (`message_sequencer.rs`): the message's state machine, its
//!     transitions and the strobes of what each state does;
//!   - [`NackGenerator`] (the decision): rules 1-7 for a request message;
//!   - [`ActStage`] (`act_stage.rs`): the decision registered in the Decide clock and
//!     what the Act clock does with it (the next state, the answer owed, the write-backs);
//!   - [`Writer`] (`writer.rs`): the host-memory write path: payload beats into their
//!     window with byte strobes, an atomic's operands and result, the DMA write register;
//!   - [`AnswerRouter`] (`answer_router.rs`): answers of this NIC's own requests to the
//!     requester, the refusals their AETH reports first;
//!   - [`PsnWindow`] (`psn_window.rs`): the PSN arithmetic of a decided request (the
//!     expected PSN it leaves, the resync point's distance, the refusal window's report);
//!   - [`RqeFetch`] (`rqe_fetch.rs`): the receive queue entry a consuming request takes
//!     (its buffer address, length and `wr_id`), read over the rx DMA read port;
//!   - [`TptClient`] (`tpt_client.rs`): a request's access check, the TPT request and
//!     its answer, or the range check without a TPT;
//!   - [`ReceiveCounters`] (`receive_counters.rs`): the `stat_*` counters (messages
//!     received, dropped, and in its `NackCounters` the NACKs received per syndrome).
//! - [`ResponseGenerator`]: the owed ACK, NACK, READ and atomic responses; its child
//!   [`SlotRams`] (`slot_rams.rs`) holds the slots' RAMs and the read stage of the slot served,
//!   [`BurstSize`] (`burst_size.rs`) sizes a READ response's DMA bursts.
//!
//! The plain-Rust reference model of the responder is `nic_model::responder`; the engine's
//! block tests are `rtl/tests/receive_queue_engine.rs`.

pub mod act_stage;
pub mod answer_router;
pub mod burst_size;
pub mod header_capture;
pub mod lookup_capture;
pub mod message_context;
pub mod message_sequencer;
pub mod nack_generator;
pub mod payload_take;
pub mod psn_window;
pub mod qp_flags;
pub mod qp_state;
pub mod receive_counters;
pub mod receive_queue_engine;
pub mod response_generator;
pub mod rqe_fetch;
pub mod slot_rams;
pub mod tpt_client;
pub mod writer;

pub use act_stage::{ActLoads, ActStage, OwedAnswer};
pub use answer_router::AnswerRouter;
pub use burst_size::BurstSize;
pub use header_capture::{HeaderCapture, MessageHeader};
pub use lookup_capture::LookupCapture;
pub use message_context::MessageContext;
pub use message_sequencer::MessageSequencer;
pub use nack_generator::NackGenerator;
pub use payload_take::PayloadTake;
pub use psn_window::{PsnWindow, WindowReport};
pub use qp_flags::QpFlags;
pub use qp_state::{QpLookup, QpState, QpWriteBack};
pub use receive_counters::ReceiveCounters;
pub use receive_queue_engine::ReceiveQueueEngine;
pub use response_generator::ResponseGenerator;
pub use rqe_fetch::RqeFetch;
pub use slot_rams::SlotRams;
pub use tpt_client::TptClient;
pub use writer::Writer;
