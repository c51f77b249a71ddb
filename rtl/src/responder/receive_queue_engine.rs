//! `ReceiveQueueEngine`: the responder side of the NIC, and the routing of answers to the
//! requester.
//!
//! Takes the [`crate::CellReassembler`]'s per-cell outcomes and applies the responder
//! rules of `docs/nic-architecture.md` ("Reliability", rules 1-7, decided by a
//! [`NackGenerator`] on each message's first cell): writes payload into host memory (receive
//! buffers, RDMA WRITE targets, read and atomic responses), consumes receive queue entries,
//! executes atomics, owes ACK / NACK / read and atomic responses to the
//! `ResponseGenerator`, requests receive completions, and hands acknowledgements and
//! responses of this NIC's own requests to the `SendQueueEngine`. Port bundles: the
//! contract `docs/nic-blocks.md`.
//!
//! Children: [`HeaderCapture`] gives the presented cell's classes (from `s_rx_class`),
//! says when a first or failed cell is taken for its lookup and keeps the message's
//! header (one bundle);
//! [`QpState`] holds every per-QP RAM and flag, serves the CSR side port and the
//! expect events, answers the lookup of a first cell and takes the engine's write-backs
//! (registered for a clock, a [`crate::responder::QpWriteBack`]); [`LookupCapture`]
//! registers that answer and its comparisons with the cell; [`NackGenerator`] decides; [`ActStage`] registers the
//! decision and says what the Act clock does with it; [`TptClient`] makes the access check
//! (the TPT request and answer, or the range without a TPT); [`PsnWindow`]
//! computes the decided request's PSN, resync and refusal-window arithmetic;
//! [`PayloadTake`] says whether the presented beat is taken and what it does; [`Writer`]
//! writes payload beats and atomic results to host memory; [`RqeFetch`] reads the receive
//! queue entry a consuming request takes; [`AnswerRouter`] hands answers
//! of this NIC's own requests to the requester; [`MessageSequencer`] holds the message's state machine (where the engine stands,
//! the message's mode, whether it was abandoned) and says what each state does;
//! [`MessageContext`] keeps the message's registers (its QP, write window, PSN position,
//! the answers and the write-back), loaded by the sequencer's states, and assembles the
//! answers (`m_owe`, the requester's answer, `m_cpl`) from them; [`ReceiveCounters`] keeps
//! the `stat_*` counters (the NACKs received in its `NackCounters`). The engine wires
//! them. Bundles between the children: the lookup's answer ([`crate::responder::QpLookup`]),
//! the PSN arithmetic ([`crate::responder::WindowReport`]), the Act clock's loads
//! ([`crate::responder::ActLoads`]), the outcome's header and classes.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: clears every queue pair's state, then
//!   sweeps the per-QP RAMs to zero for 64 clocks, during which nothing is accepted).
//! - `cfg_node_id` (16), `cfg_enable_send_recv`, `cfg_enable_rdma`.
//! - Received cells: `s_rx_valid`, `s_rx_ready`, per beat `s_rx_data` (64), `s_rx_bytes`
//!   (4), `s_rx_last`, and `s_rx_outcome`, a [`CellOutcomeHeader`] (`common/bundles.rs`:
//!   the cell's status, header fields, RETH, offset and immediate): one outcome per cell,
//!   the header held for the whole outcome (the reassembler's `m_*`); `s_rx_class`, an
//!   [`OutcomeClass`], the outcome's header decoded (`OutcomeClass::of(s_rx_outcome)`,
//!   registered with it by the [`crate::cell::OutcomeSlice`] in front): the decision, the
//!   access check and the `ActStage` take the classes from it, so they start at a
//!   register.
//! - Per-QP CSR side port: `s_csr_valid`, `s_csr_ready`, `s_csr_write`, `s_csr_qp` (6),
//!   `s_csr_reg` (4), `s_csr_wdata` (64); `m_csr_rdata_valid`, `m_csr_rdata` (64), one
//!   clock after the read was accepted. Answers RQ_BASE, RQ_SIZE_LOG2, RQ_PI, RQ_CI and
//!   QP_STATUS bits 47:24 (expected PSN) and 48 (synced); zero for every other register and
//!   for a QP at or beyond `queue_pairs` (whose writes are ignored). Takes QP_REMOTE and
//!   QP_CTRL (bit 0 enable, bit 1 reset, bit 3 responder resume at bits 31:8) as well. A
//!   reset clears `synced` and keeps the expected PSN readable.
//! - rx DMA read client `m_rqrd_req_valid/ready`, `m_rqrd_req_addr` (32),
//!   `m_rqrd_req_words` (16); `s_rqrd_data` (64), `s_rqrd_valid/ready`, `s_rqrd_last`: the
//!   receive queue entry (3 words) and the atomic's 64-bit operand (1 word).
//! - DMA write client `m_wr_valid/ready`, `m_wr_addr` (32), `m_wr_data` (64),
//!   `m_wr_strobe` (8). Only bytes the rules allow have their strobe set; a word with no
//!   such byte is not sent.
//! - Owed responses `m_owe_valid/ready`, `m_owe` (an [`OwedResponse`]): `qp` (6), `kind`
//!   (2: 0 ACK, 1 NACK, 2 READ_RESPONSE, 3 ATOMIC_RESPONSE), `psn` (24), `syndrome` (8),
//!   `addr` (32), `length` (32), `value` (64), `dest_node`, `dest_qp` (16), `resync` (the
//!   request's PSN became the expected one through a resync: the QP was not synced, or a
//!   RESYNC request restarted the sequence; the answer goes out with the RESYNC flag),
//!   `refusal` (21: the AETH's bits 28:8 of an ACK or NACK, `nic_abi::AethRefusals`: bits
//!   `3(k-1)+2 .. 3(k-1)` the refusal code of PSN `psn - k`, k = 1..=7, 0 where it was not
//!   refused; all 0 for a response and
//!   after a resync of this message); `slot_busy` (64, in).
//! - Acknowledgement events `m_ack_valid/ready`, `m_ack` (an [`AckEvent`]: `qp` (6),
//!   `psn` (24), `syndrome` (8), `response`, `resync`: the ACK, NACK or response carried
//!   the RESYNC flag, the remote responder restarted its PSN sequence at `psn`).
//!   An ACK or NACK whose AETH reports refusals gives one event per refusal first, oldest
//!   first: the refused PSN's final NACK (`psn - k`, the reported syndrome, the answer's
//!   RESYNC flag); then the answer's own, which alone counts in `stat_nack_received_*`.
//!   Expect events `s_expect_valid/ready`,
//!   `s_expect_qp` (6), `s_expect_psn` (24), `s_expect_addr` (32), `s_expect_length` (32),
//!   `s_expect_atomic`.
//! - Completion requests `m_cpl_valid/ready`, `m_cpl` (a [`CompletionRequest`];
//!   `is_receive` always 1).
//! - TPT lookup `m_tpt_req_valid/ready` and `m_tpt_req`, one [`TptRequest`] bundle
//!   (`common/bundles.rs`, 139 bits): `stag` (32), `vaddr` (64), `length` (32), `access`
//!   (3), `invalidate`, `qp` (6), `commit` (0 when the request is refused anyway if it
//!   passes: a SEND-like request (RDMA_WRITE_IMMEDIATE) with no receive buffer posted,
//!   RECEIVER_NOT_READY by rule 6, so the TPT must not use up a one-shot entry or honour
//!   the invalidate flag for it); `s_tpt_resp_valid`, `s_tpt_resp_ok`, `s_tpt_resp_paddr` (32). Only
//!   with `tpt_present`: without it `m_tpt_req_valid` stays 0, the physical address is the
//!   low 32 bits of the virtual address, and a range beyond 2^32 is refused.
//! - Counters (32, wrapping, cleared by reset): `stat_messages_received` (every message
//!   whose last cell passed the reassembler's checks), `stat_dropped` (messages dropped
//!   without an answer: another node, rule 1, a duplicate or resync while the slot is
//!   busy, a response nobody expects, a
//!   duplicate atomic that is not the saved one, an unknown opcode; not the silent
//!   discard after a SEQUENCE_ERROR NACK), `stat_nack_received_0`..`_7` (NACKs delivered to
//!   the requester, by `Syndrome::counter_index`).
//!
//! Behaviour beyond the contract's text (choices where it is silent):
//! - A receive buffer whose address is not 8-aligned is not written; the SEND completes
//!   with status 0x03 (LOCAL_ADDRESS_ERROR) and is NACKed INVALID_REQUEST, like a SEND
//!   longer than its buffer (status 0x01).
//! - A TPT translation to a physical address that is not 8-aligned counts as a failed
//!   check (REMOTE_ACCESS_ERROR). An RDMA WRITE whose message length differs from its
//!   RETH `dma_length` is INVALID_REQUEST; nothing is ever written beyond `dma_length`.
//! - A failed cell owes CRC_OR_MALFORMED only when its opcode is a request and its QP is
//!   synchronised (otherwise there is no expected PSN to name); a busy slot keeps it
//!   behind its item.
//! - Owed-slot rule (`docs/nic-architecture.md`, "Responses owed by the responder"): a
//!   request at or ahead of the expected PSN that would owe a NACK or a response while
//!   its QP's slot is busy is not applied and owes NACK SEQUENCE_ERROR with the expected
//!   PSN instead (the `NackGenerator`'s `slot_refused`; no TPT lookup, nothing consumed),
//!   which the `ResponseGenerator` sends right after the busy item.
//! - A response is written only when the expected local address is 8-aligned; an atomic
//!   response writes at most 8 bytes. A CAS that does not match writes nothing.
//! - A QP reset (QP_CTRL bit 1) or resume (bit 3) of the QP whose message is in progress
//!   abandons that message (no further writes, no completion, no answer not yet begun).
//! - A resume (`nic_abi::csr::QP_CTRL_RESUME`, a failover to this NIC): the expected PSN
//!   becomes bits 31:8, synced, and that PSN the resync point (as after a resync that did
//!   not carry RESYNC: answers carry RESYNC, a duplicate before it is NACKed
//!   SEQUENCE_ERROR); the refusal window and the SEQUENCE_ERROR-sent flag are cleared.
//! - Refused PSNs (`docs/nic-architecture.md`, "Refused PSNs"): per QP a refusal window,
//!   the refusal code of each of the `SEND_WINDOW` PSNs before the expected one (a 64 x 24
//!   RAM and a valid bit per QP), shifted by one entry whenever a PSN is consumed. The
//!   duplicate of a refused PSN is NACKed again with its syndrome (a READ is not executed
//!   again), no ACK names a refused PSN, and every ACK or NACK reports the refusals among
//!   the 7 PSNs before its own in its AETH. Forgotten on a QP reset and a resync.
//! - Resynced answers (`docs/nic-architecture.md`, "Rejoin support"): the answer to a
//!   request whose PSN a resync adopted although the request did not carry RESYNC (the
//!   QP was not synced: this host rebooted) is owed with `m_owe.resync`, whatever it is
//!   (ACK, NACK, READ or atomic response), and so is every answer while that resync point
//!   is kept (a bit and a 64 x 24 RAM per QP: until the expected PSN is more than
//!   `SEND_WINDOW` past it; forgotten on a QP reset and on a resync a RESYNC request asks
//!   for). A duplicate before the resync point is answered SEQUENCE_ERROR (the
//!   `NackGenerator`), never ACKed. A message that is dropped (rule 1, slot busy) does not
//!   resync the QP, so the next one is marked instead.
//!
//! Latency: a message's first cell, presented at clock t (Idle: the lookup is issued, the
//! range `vaddr + length` added up), is looked up (t+1, Lookup: the RAMs' answer
//! registered), decided (t+2, Decide: the `NackGenerator`'s outputs registered) and acted
//! on at t+3 (Act: the answer owed, the write-backs, the next state), where a message that
//! streams (executed, dropped or discarded) has its first beat taken; the TPT lookup and
//! the receive queue entry read, when the decision needs them, each add their own time
//! and a Decide and Act. An answer owed at decision time (a NACK, a duplicate's ACK, a
//! READ or atomic response) is on `m_owe` at t+4, an acknowledgement or response of this
//! NIC's own request on `m_ack` at t+4; a failed cell's CRC_OR_MALFORMED NACK is judged at
//! t+2 (FailDecide) and owed at t+3. A payload word leaves on `m_wr` the clock after it is
//! taken. After a message's last beat: its writes drain, then the state update, the owed
//! answer and the completion each take a clock plus their handshake (7 clocks in all
//! between two back-to-back RDMA WRITEs with every ready high). `stat_dropped` counts a
//! drop the clock after its decision.
//! Throughput: continuation cells are taken without a decision, one payload word per
//! clock for as long as `m_wr_ready` is high (tested: 4 x 4 KiB writes in 2069 clocks;
//! behind a `CellReassembler` it never holds up a continuation cell). CSR accesses (one
//! per clock, read data the clock after) and expect events are served while a message
//! streams or waits for the TPT; the CSR port waits only in the clocks the engine itself
//! reads or updates the per-QP RAMs.
//! Limits: `queue_pairs` in 1..=64; one message in progress (the reassembler delivers a
//! message's cells contiguously); host addresses wrap at 2^32.

use crate::common::{
    AckEvent, CellOutcomeHeader, CompletionRequest, OutcomeClass, OwedResponse, TptRequest,
};
use crate::responder::act_stage::ActStage;
use crate::responder::answer_router::AnswerRouter;
use crate::responder::header_capture::HeaderCapture;
use crate::responder::lookup_capture::LookupCapture;
use crate::responder::message_context::MessageContext;
use crate::responder::message_sequencer::MessageSequencer;
use crate::responder::nack_generator::NackGenerator;
use crate::responder::payload_take::PayloadTake;
use crate::responder::psn_window::PsnWindow;
use crate::responder::qp_state::QpState;
use crate::responder::receive_counters::ReceiveCounters;
use crate::responder::rqe_fetch::RqeFetch;
use crate::responder::tpt_client::TptClient;
use crate::responder::writer::Writer;
use crate::sim::ClockedBlock;
use nic_abi::MAX_QUEUE_PAIRS;
use rust_hdl::prelude::*;

/// Per-QP RAM address bits (64 entries).
pub use crate::responder::qp_state::QP_ADDRESS_BITS;

/// Where the engine stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum ResponderState {
    /// After reset: zero the per-QP RAMs.
    Clear,
    /// Waiting for an outcome; continuation cells of the current message stream here.
    Idle,
    /// The per-QP RAMs answer for a first cell.
    Lookup,
    /// The per-QP RAMs answer for a failed cell.
    FailLookup,
    /// A failed cell is judged (from the registered lookup).
    FailDecide,
    /// The NackGenerator decides (again after a TPT lookup or a receive queue entry read).
    Decide,
    /// The registered decision is acted on (a message that streams takes its first beat).
    Act,
    TptRequest,
    TptWait,
    /// The `RqeFetch` reads the receive queue entry.
    RqeFetch,
    /// Taking the decided first cell's beats.
    Stream,
    /// Owing a response (decision time or end of message).
    Owe,
    /// Handing an acknowledgement or a written response to the requester (the
    /// `AnswerRouter`: the final NACKs its AETH reports first, then its own event).
    AckEvent,
    /// Waiting for the last write to be accepted.
    Drain,
    AtomicRead,
    AtomicData,
    AtomicWrite,
    /// Writing the state update at the end of an executed message.
    Commit,
    /// Requesting the receive completion.
    Complete,
}

/// What the current message's payload beats do.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum MessageMode {
    Discard,
    /// SEND or RDMA WRITE being executed.
    ExecWrite,
    /// Atomic: collect the two operands.
    ExecAtomic,
    /// RDMA READ or atomic response for this NIC's request.
    ResponseWrite,
}

#[derive(LogicBlock)]
pub struct ReceiveQueueEngine {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub cfg_node_id: Signal<In, Bits<16>>,
    pub cfg_enable_send_recv: Signal<In, Bit>,
    pub cfg_enable_rdma: Signal<In, Bit>,
    pub s_rx_data: Signal<In, Bits<64>>,
    pub s_rx_bytes: Signal<In, Bits<4>>,
    pub s_rx_valid: Signal<In, Bit>,
    pub s_rx_ready: Signal<Out, Bit>,
    pub s_rx_last: Signal<In, Bit>,
    pub s_rx_outcome: Signal<In, CellOutcomeHeader>,
    pub s_rx_class: Signal<In, OutcomeClass>,
    pub s_csr_valid: Signal<In, Bit>,
    pub s_csr_ready: Signal<Out, Bit>,
    pub s_csr_write: Signal<In, Bit>,
    pub s_csr_qp: Signal<In, Bits<6>>,
    pub s_csr_reg: Signal<In, Bits<4>>,
    pub s_csr_wdata: Signal<In, Bits<64>>,
    pub m_csr_rdata_valid: Signal<Out, Bit>,
    pub m_csr_rdata: Signal<Out, Bits<64>>,
    pub m_rqrd_req_valid: Signal<Out, Bit>,
    pub m_rqrd_req_ready: Signal<In, Bit>,
    pub m_rqrd_req_addr: Signal<Out, Bits<32>>,
    pub m_rqrd_req_words: Signal<Out, Bits<16>>,
    pub s_rqrd_data: Signal<In, Bits<64>>,
    pub s_rqrd_valid: Signal<In, Bit>,
    pub s_rqrd_ready: Signal<Out, Bit>,
    pub s_rqrd_last: Signal<In, Bit>,
    pub m_wr_valid: Signal<Out, Bit>,
    pub m_wr_ready: Signal<In, Bit>,
    pub m_wr_addr: Signal<Out, Bits<32>>,
    pub m_wr_data: Signal<Out, Bits<64>>,
    pub m_wr_strobe: Signal<Out, Bits<8>>,
    pub m_owe_valid: Signal<Out, Bit>,
    pub m_owe_ready: Signal<In, Bit>,
    pub m_owe: Signal<Out, OwedResponse>,
    pub slot_busy: Signal<In, Bits<64>>,
    pub m_ack_valid: Signal<Out, Bit>,
    pub m_ack_ready: Signal<In, Bit>,
    pub m_ack: Signal<Out, AckEvent>,
    pub s_expect_valid: Signal<In, Bit>,
    pub s_expect_ready: Signal<Out, Bit>,
    pub s_expect_qp: Signal<In, Bits<6>>,
    pub s_expect_psn: Signal<In, Bits<24>>,
    pub s_expect_addr: Signal<In, Bits<32>>,
    pub s_expect_length: Signal<In, Bits<32>>,
    pub s_expect_atomic: Signal<In, Bit>,
    pub m_cpl_valid: Signal<Out, Bit>,
    pub m_cpl_ready: Signal<In, Bit>,
    pub m_cpl: Signal<Out, CompletionRequest>,
    pub m_tpt_req_valid: Signal<Out, Bit>,
    pub m_tpt_req_ready: Signal<In, Bit>,
    pub m_tpt_req: Signal<Out, TptRequest>,
    pub s_tpt_resp_valid: Signal<In, Bit>,
    pub s_tpt_resp_ok: Signal<In, Bit>,
    pub s_tpt_resp_paddr: Signal<In, Bits<32>>,
    pub stat_messages_received: Signal<Out, Bits<32>>,
    pub stat_dropped: Signal<Out, Bits<32>>,
    pub stat_nack_received_0: Signal<Out, Bits<32>>,
    pub stat_nack_received_1: Signal<Out, Bits<32>>,
    pub stat_nack_received_2: Signal<Out, Bits<32>>,
    pub stat_nack_received_3: Signal<Out, Bits<32>>,
    pub stat_nack_received_4: Signal<Out, Bits<32>>,
    pub stat_nack_received_5: Signal<Out, Bits<32>>,
    pub stat_nack_received_6: Signal<Out, Bits<32>>,
    pub stat_nack_received_7: Signal<Out, Bits<32>>,
    /// The message's state machine: where the engine stands, the message's mode, whether
    /// it was abandoned, and the strobes of what each state does.
    seq: MessageSequencer,
    // ---- The current message (from its first cell) ----
    /// The presented outcome decoded, and the message's header (registered from its
    /// first cell).
    header: HeaderCapture,
    /// The message's registers (QP, write window, PSN position, answers, write-back),
    /// loaded by its states.
    ctx: MessageContext,
    /// The `stat_*` counters.
    counters: ReceiveCounters,
    /// Answers of this NIC's own requests to the requester (`m_ack_*`).
    router: AnswerRouter,
    /// The PSN arithmetic of the decided request: expected PSN, resync point, refusals.
    psn_window: PsnWindow,
    /// The expected response's clear, decided last clock (the end of a response's
    /// sequence), reaching the flags this clock: the state's path to the flag vectors is
    /// cut there. Not set when an expect event for the same QP is taken in the clock it is
    /// decided (that event's set wins, as it would against a clear in the same clock).
    expect_clear_due: DFF<Bit>,
    /// An expect event for the message's QP is taken this clock.
    expect_same_qp: Signal<Local, Bit>,
    /// The per-QP state table (lookup, CSR side port, expect events, write-backs).
    qp_state: QpState,
    /// The host-memory write path.
    writer: Writer,
    /// Whether the presented beat is taken, and what it does.
    payload_take: PayloadTake,
    /// The receive queue entry read.
    rqe_fetch: RqeFetch,
    /// The lookup's answer, registered, and its comparisons with the cell.
    lookup: LookupCapture,
    nack: NackGenerator,
    /// The decision registered in the Decide clock, and what the Act clock does with it.
    act: ActStage,
    /// The access check: the TPT request and its answer, or the range without a TPT.
    tpt: TptClient,
    // ---- Combinational intermediates ----
    /// The syndrome of the answer consuming a PSN (the `PsnWindow` gives its refusal code).
    refusal_syndrome: Signal<Local, Bits<8>>,
    /// FailDecide: the failed cell owes CRC_OR_MALFORMED.
    fail_owes: Signal<Local, Bit>,
}

impl ReceiveQueueEngine {
    /// A responder for `queue_pairs` queue pairs, with or without a TPT.
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize, tpt_present: bool) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "ReceiveQueueEngine: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        ReceiveQueueEngine {
            clock: Default::default(),
            reset: Default::default(),
            cfg_node_id: Default::default(),
            cfg_enable_send_recv: Default::default(),
            cfg_enable_rdma: Default::default(),
            s_rx_data: Default::default(),
            s_rx_bytes: Default::default(),
            s_rx_valid: Default::default(),
            s_rx_ready: Default::default(),
            s_rx_last: Default::default(),
            s_rx_outcome: Default::default(),
            s_rx_class: Default::default(),
            s_csr_valid: Default::default(),
            s_csr_ready: Default::default(),
            s_csr_write: Default::default(),
            s_csr_qp: Default::default(),
            s_csr_reg: Default::default(),
            s_csr_wdata: Default::default(),
            m_csr_rdata_valid: Default::default(),
            m_csr_rdata: Default::default(),
            m_rqrd_req_valid: Default::default(),
            m_rqrd_req_ready: Default::default(),
            m_rqrd_req_addr: Default::default(),
            m_rqrd_req_words: Default::default(),
            s_rqrd_data: Default::default(),
            s_rqrd_valid: Default::default(),
            s_rqrd_ready: Default::default(),
            s_rqrd_last: Default::default(),
            m_wr_valid: Default::default(),
            m_wr_ready: Default::default(),
            m_wr_addr: Default::default(),
            m_wr_data: Default::default(),
            m_wr_strobe: Default::default(),
            m_owe_valid: Default::default(),
            m_owe_ready: Default::default(),
            m_owe: Default::default(),
            slot_busy: Default::default(),
            m_ack_valid: Default::default(),
            m_ack_ready: Default::default(),
            m_ack: Default::default(),
            s_expect_valid: Default::default(),
            s_expect_ready: Default::default(),
            s_expect_qp: Default::default(),
            s_expect_psn: Default::default(),
            s_expect_addr: Default::default(),
            s_expect_length: Default::default(),
            s_expect_atomic: Default::default(),
            m_cpl_valid: Default::default(),
            m_cpl_ready: Default::default(),
            m_cpl: Default::default(),
            m_tpt_req_valid: Default::default(),
            m_tpt_req_ready: Default::default(),
            m_tpt_req: Default::default(),
            s_tpt_resp_valid: Default::default(),
            s_tpt_resp_ok: Default::default(),
            s_tpt_resp_paddr: Default::default(),
            stat_messages_received: Default::default(),
            stat_dropped: Default::default(),
            stat_nack_received_0: Default::default(),
            stat_nack_received_1: Default::default(),
            stat_nack_received_2: Default::default(),
            stat_nack_received_3: Default::default(),
            stat_nack_received_4: Default::default(),
            stat_nack_received_5: Default::default(),
            stat_nack_received_6: Default::default(),
            stat_nack_received_7: Default::default(),
            seq: MessageSequencer::new(),
            ctx: MessageContext::new(),
            header: HeaderCapture::new(),
            refusal_syndrome: Default::default(),
            counters: ReceiveCounters::new(),
            router: AnswerRouter::new(),
            psn_window: PsnWindow::new(),
            expect_clear_due: Default::default(),
            expect_same_qp: Default::default(),
            qp_state: QpState::new(queue_pairs),
            writer: Writer::new(),
            payload_take: PayloadTake::new(),
            rqe_fetch: RqeFetch::new(),
            lookup: LookupCapture::new(queue_pairs),
            nack: Default::default(),
            act: ActStage::new(tpt_present),
            tpt: TptClient::new(tpt_present),
            fail_owes: Default::default(),
        }
    }
}

impl Logic for ReceiveQueueEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, expect_clear_due);
        self.qp_state.clock.next = self.clock.val();
        self.qp_state.reset.next = self.reset.val();
        self.writer.clock.next = self.clock.val();
        self.writer.reset.next = self.reset.val();
        self.rqe_fetch.clock.next = self.clock.val();
        self.rqe_fetch.reset.next = self.reset.val();
        self.router.clock.next = self.clock.val();
        self.router.reset.next = self.reset.val();

        // ---- The presented outcome, decoded; the message's header, from its first cell ----
        self.header.clock.next = self.clock.val();
        self.header.s_outcome.next = self.s_rx_outcome.val();
        self.header.s_class.next = self.s_rx_class.val();
        self.header.s_valid.next = self.s_rx_valid.val();
        self.header.idle.next = self.seq.state.val() == ResponderState::Idle;
        self.header.busy.next = self.qp_state.write_back_busy.val();

        // ---- Lookup: the per-QP state table answers for ctx_qp ----
        self.qp_state.ctx_qp.next = self.ctx.ctx_qp.val();
        // The lookup registered, and compared with the cell in the Decide clock.
        self.lookup.clock.next = self.clock.val();
        self.lookup.capture.next = (self.seq.state.val() == ResponderState::Lookup)
            | (self.seq.state.val() == ResponderState::FailLookup);
        self.lookup.s_outcome.next = self.s_rx_outcome.val();
        self.lookup.node_id.next = self.cfg_node_id.val();
        self.lookup.s_lookup.next = self.qp_state.m_lookup.val();
        // ---- The access check (the range registered with the first cell, judged in the
        // Lookup clock; the TPT asked in TptRequest, answering in TptWait) ----
        self.tpt.clock.next = self.clock.val();
        self.tpt.s_outcome.next = self.s_rx_outcome.val();
        self.tpt.s_class.next = self.s_rx_class.val();
        self.tpt.qp.next = self.ctx.ctx_qp.val();
        self.tpt.rq_empty.next = self.lookup.rq_empty.val();
        self.tpt.init.next = self.seq.state.val() == ResponderState::Lookup;
        self.tpt.request.next = self.seq.state.val() == ResponderState::TptRequest;
        self.tpt.waiting.next = self.seq.state.val() == ResponderState::TptWait;
        self.tpt.m_tpt_req_ready.next = self.m_tpt_req_ready.val();
        self.tpt.s_tpt_resp_valid.next = self.s_tpt_resp_valid.val();
        self.tpt.s_tpt_resp_ok.next = self.s_tpt_resp_ok.val();
        self.tpt.s_tpt_resp_paddr.next = self.s_tpt_resp_paddr.val();

        // ---- Decision ----
        // The request's classes, registered with the outcome by the `OutcomeSlice`.
        self.nack.s_class.next = self.s_rx_class.val();
        self.nack.qp_exists.next = self.lookup.qp_exists.val();
        self.nack.qp_enabled.next = self.lookup.qp_enabled.val();
        self.nack.source_match.next = self.lookup.source_match.val();
        self.nack.psn.next = self.s_rx_outcome.val().psn;
        self.nack.expected_psn.next = self.ctx.expected.val();
        self.nack.synced.next = self.lookup.synced.val();
        self.nack.nak_sent.next = self.lookup.nak_sent.val();
        self.nack.atomic_match.next = self.lookup.atomic_match.val();
        self.nack.enable_send_recv.next = self.cfg_enable_send_recv.val();
        self.nack.enable_rdma.next = self.cfg_enable_rdma.val();
        self.nack.access_ok.next = self.tpt.access_ok.val();
        self.nack.rq_empty.next = self.lookup.rq_empty.val();
        self.nack.length_error.next = self.ctx.length_error.val();
        self.nack.slot_busy.next = self.slot_busy.val().get_bit(self.ctx.ctx_qp.val().index());
        self.nack.refused_window.next = self.ctx.refused.val();
        self.nack.rs_valid.next = self.ctx.rs_valid.val();
        self.nack.behind.next = self.lookup.behind.val();
        self.nack.behind_rs.next = self.lookup.behind_rs.val();
        // ---- The PSN arithmetic of the decided request (or of the Commit) ----
        // The syndrome of the answer consuming the PSN, for its refusal code.
        self.refusal_syndrome.next = self.act.syndrome_q.val();
        if self.seq.state.val() == ResponderState::Commit {
            self.refusal_syndrome.next = self.ctx.owe.val().syndrome;
        }
        self.psn_window.expected.next = self.ctx.expected.val();
        self.psn_window.psn.next = self.s_rx_outcome.val().psn;
        self.psn_window.rs_psn.next = self.ctx.rs_psn.val();
        self.psn_window.window.next = self.ctx.refused.val();
        self.psn_window.behind.next = self.lookup.behind.val();
        self.psn_window.resynced.next = self.act.resynced_q.val();
        self.psn_window.syndrome.next = self.refusal_syndrome.val();

        // ---- Payload beats ----
        self.writer.base.next = self.ctx.base.val();
        self.writer.limit.next = self.ctx.limit.val();
        self.writer.s_data.next = self.s_rx_data.val();
        self.writer.s_bytes.next = self.s_rx_bytes.val();
        self.writer.s_offset.next = self.s_rx_outcome.val().offset;
        self.writer.s_last.next = self.s_rx_last.val();
        self.writer.s_empty.next =
            (self.s_rx_outcome.val().cell_length == 0) | !self.header.ok.val();
        self.writer.atomic_cas.next = self.header.hdr_cas.val();
        self.writer.atomic_old.next = self.ctx.value.val();
        self.writer.atomic_write.next =
            (self.seq.state.val() == ResponderState::AtomicWrite) & !self.seq.aborted.val();
        self.writer.m_wr_ready.next = self.m_wr_ready.val();

        // ---- Defaults ----
        self.qp_state.lookup_qp.next = self.header.qp.val();
        // Not in the clock a write-back lands (it would read the entry before it): the Act
        // clock's write-back lands in an Idle clock when its cell had one beat.
        self.qp_state.lookup.next = self.header.capture.val();
        self.tpt.capture.next = self.header.capture.val();
        self.m_rqrd_req_addr.next = self.rqe_fetch.m_req_addr.val();
        self.m_rqrd_req_words.next = self.rqe_fetch.m_req_words.val();

        // ---- What the message's states load (the `MessageSequencer` moves them on) ----
        // A failed cell owes CRC_OR_MALFORMED once per gap (behind a busy slot's item if
        // need be: the ResponseGenerator keeps it there).
        self.fail_owes.next = self.lookup.node_ok.val()
            & self.lookup.qp_ok.val()
            & self.lookup.synced.val()
            & !self.lookup.nak_sent.val()
            & self.header.is_request.val();
        // AtomicRead: the atomic's operand read shares the rx DMA read port.
        if self.seq.state.val() == ResponderState::AtomicRead {
            self.m_rqrd_req_addr.next = self.ctx.base.val();
            self.m_rqrd_req_words.next = 1.into();
        }

        // ---- The message's registers, loaded by its states (the `MessageContext`) ----
        self.ctx.clock.next = self.clock.val();
        self.ctx.reset.next = self.reset.val();
        self.ctx.state.next = self.seq.state.val();
        self.ctx.first_taken.next = self.seq.first_taken.val();
        self.ctx.fail_owe.next = self.seq.fail_owe.val();
        self.ctx.response_answer.next = self.seq.response_answer.val();
        self.ctx.commit.next = self.seq.commit.val();
        self.ctx.end_mode.next = self.seq.end_mode.val();
        self.ctx.qp.next = self.header.qp.val();
        self.ctx.is_send.next = self.header.is_send.val();
        self.ctx.is_response.next = self.header.is_response.val();
        self.ctx.is_atomic_response.next = self.header.is_atomic_response.val();
        self.ctx.consumes.next = self.header.hdr_consumes.val();
        self.ctx.s_outcome.next = self.s_rx_outcome.val();
        self.ctx.s_lookup.next = self.qp_state.m_lookup.val();
        self.ctx.rq_ci.next = self.lookup.rq_ci.val();
        self.ctx.act_write_back.next = self.act.m_write_back.val();
        self.ctx.s_act.next = self.act.m_loads.val();
        self.ctx.act_owe.next = self.act.m_owe.val();
        self.ctx.act_mode.next = self.act.mode.val();
        self.ctx.resynced_q.next = self.act.resynced_q.val();
        self.ctx.s_window.next = self.psn_window.m_window.val();
        self.ctx.tpt_answered.next = self.tpt.answered.val();
        self.ctx.tpt_paddr.next = self.tpt.paddr.val();
        self.ctx.rqe_fetched.next = self.rqe_fetch.done.val();
        self.ctx.rqe_buffer_addr.next = self.rqe_fetch.buffer_addr.val();
        self.ctx.rqe_buffer_length.next = self.rqe_fetch.buffer_length.val();
        self.ctx.rqrd_valid.next = self.s_rqrd_valid.val();
        self.ctx.rqrd_data.next = self.s_rqrd_data.val();
        self.ctx.header.next = self.header.m_header.val();
        self.ctx.wr_id.next = self.rqe_fetch.wr_id.val();
        self.ctx.message_end.next = self.payload_take.message_end.val();

        // ---- The message's state machine (the `MessageSequencer`) ----
        self.seq.clock.next = self.clock.val();
        self.seq.reset.next = self.reset.val();
        self.seq.sweep_done.next = self.qp_state.sweep_done.val();
        self.seq.s_valid.next = self.s_rx_valid.val();
        self.seq.cell_ok.next = self.header.ok.val();
        self.seq.cell_first.next = self.header.first.val();
        self.seq.write_back_busy.next = self.qp_state.write_back_busy.val();
        self.seq.fail_owes.next = self.fail_owes.val();
        self.seq.act_next.next = self.act.next_state.val();
        self.seq.act_go.next = self.act.go.val();
        self.seq.act_mode.next = self.act.mode.val();
        self.seq.tpt_req_taken.next = self.tpt.req_taken.val();
        self.seq.tpt_answered.next = self.tpt.answered.val();
        self.seq.rqe_fetched.next = self.rqe_fetch.done.val();
        self.seq.owe_ready.next = self.m_owe_ready.val();
        self.seq.hdr_consumes.next = self.header.hdr_consumes.val();
        self.seq.router_ready.next = self.router.s_ready.val();
        self.seq.writer_busy.next = self.writer.busy.val();
        self.seq.atomic_done.next = self.ctx.atomic_done.val();
        self.seq.rqrd_req_ready.next = self.m_rqrd_req_ready.val();
        self.seq.rqrd_valid.next = self.s_rqrd_valid.val();
        self.seq.cpl_ready.next = self.m_cpl_ready.val();
        self.seq.outcome_end.next = self.payload_take.outcome_end.val();
        self.seq.message_end.next = self.payload_take.message_end.val();
        self.seq.end_runs.next = self.payload_take.end_runs.val();
        self.seq.eff_mode.next = self.payload_take.eff_mode.val();
        self.seq.ctx_abort.next = self.qp_state.ctx_abort.val();

        // ---- The decision, registered for the Act clock (the `ActStage`) ----
        self.act.clock.next = self.clock.val();
        self.act.action.next = self.nack.action.val();
        self.act.syndrome.next = self.nack.syndrome.val();
        self.act.resynced.next = self.nack.resynced.val();
        self.act.in_sequence.next = self.nack.in_sequence.val();
        self.act.ack_psn.next = self.nack.ack_psn.val();
        self.act.slot_refused.next = self.nack.slot_refused.val();
        self.act.check_access.next = self.nack.check_access.val();
        self.act.count_dropped.next = self.nack.count_dropped.val();
        self.act.qp_ok.next = self.lookup.qp_ok.val();
        self.act.expect_match.next = self.lookup.expect_match.val();
        self.act.s_class.next = self.s_rx_class.val();
        self.act.psn.next = self.s_rx_outcome.val().psn;
        self.act.aeth.next = bit_cast::<29, 32>(self.s_rx_outcome.val().immediate);
        self.act.aborted.next = self.seq.aborted.val();
        self.act.node_ok.next = self.lookup.node_ok.val();
        self.act.access_done.next = self.tpt.access_done.val();
        self.act.rqe_done.next = self.ctx.rqe_done.val();
        self.act.rs_valid.next = self.ctx.rs_valid.val();
        self.act.last_refused.next = self.ctx.refused.val().get_bits::<3>(0).any();
        self.act.rq_ci.next = self.lookup.rq_ci.val();
        self.act.s_window.next = self.psn_window.m_window.val();
        // (A local first: a child input assigned twice in one evaluation retriggers the child
        // in an event-driven simulator.)
        self.act.far_next.next = self.ctx.far_next.val();

        // ---- Payload beats of the presented outcome (the `PayloadTake`) ----
        // The message's mode: the one decided in the Act clock, from its first beat on.
        self.payload_take.mode.next = self.seq.mode.val();
        self.payload_take.act_go.next = self.seq.go.val();
        self.payload_take.act_mode.next = self.seq.go_mode.val();
        self.payload_take.aborted.next = self.seq.aborted.val();
        self.payload_take.stream.next = self.seq.stream_now.val();
        self.payload_take.beat_ready.next = self.writer.beat_ready.val();
        self.payload_take.s_valid.next = self.s_rx_valid.val();
        self.payload_take.s_last.next = self.s_rx_last.val();
        self.payload_take.s_ok_last.next = self.header.ok.val() & self.header.last_cell.val();
        self.writer.s_write.next = self.payload_take.write.val();
        self.writer.s_collect.next = self.payload_take.collect.val();
        self.writer.s_take.next = self.payload_take.take.val();

        // ---- The per-QP state table: CSR side port, expect events, write-backs ----
        // The write-backs reach the RAMs a clock after they are decided (the decision's
        // path to the RAMs' write ports is cut there); the CSR port waits in both clocks.
        self.qp_state.hold.next = self.seq.ram_use.val() | self.qp_state.write_back_busy.val();
        self.qp_state.s_write_back.next = self.ctx.write_back.val();
        self.qp_state.s_csr_valid.next = self.s_csr_valid.val();
        self.s_csr_ready.next = self.qp_state.s_csr_ready.val();
        self.qp_state.s_csr_write.next = self.s_csr_write.val();
        self.qp_state.s_csr_qp.next = self.s_csr_qp.val();
        self.qp_state.s_csr_reg.next = self.s_csr_reg.val();
        self.qp_state.s_csr_wdata.next = self.s_csr_wdata.val();
        self.m_csr_rdata_valid.next = self.qp_state.m_csr_rdata_valid.val();
        self.m_csr_rdata.next = self.qp_state.m_csr_rdata.val();
        self.qp_state.s_expect_valid.next = self.s_expect_valid.val();
        self.s_expect_ready.next = self.qp_state.s_expect_ready.val();
        self.qp_state.s_expect_qp.next = self.s_expect_qp.val();
        self.qp_state.s_expect_psn.next = self.s_expect_psn.val();
        self.qp_state.s_expect_addr.next = self.s_expect_addr.val();
        self.qp_state.s_expect_length.next = self.s_expect_length.val();
        self.qp_state.s_expect_atomic.next = self.s_expect_atomic.val();
        self.qp_state.wr_atomic_psn.next = self.header.m_header.val().psn;
        self.qp_state.wr_atomic_value.next = self.ctx.value.val();
        self.expect_same_qp.next = self.s_expect_valid.val()
            & self.qp_state.s_expect_ready.val()
            & (self.s_expect_qp.val() == self.ctx.ctx_qp.val());
        self.expect_clear_due.d.next =
            self.seq.expect_clear.val() & !self.expect_same_qp.val() & !self.reset.val();
        self.qp_state.expect_clear.next = self.expect_clear_due.q.val();

        // ---- The receive queue entry read (the atomic's operand read shares the port) ----
        self.rqe_fetch.start.next = self.seq.acting.val() & self.act.rqe_start.val();
        self.rqe_fetch.addr.next = self.lookup.rqe_addr.val();
        self.rqe_fetch.m_req_ready.next = self.m_rqrd_req_ready.val();
        self.rqe_fetch.s_data.next = self.s_rqrd_data.val();
        self.rqe_fetch.s_valid.next = self.s_rqrd_valid.val();
        self.rqe_fetch.s_last.next = self.s_rqrd_last.val();

        // ---- Counters (a drop and a NACK counted when the Act clock decides them) ----
        self.counters.clock.next = self.clock.val();
        self.counters.reset.next = self.reset.val();
        self.counters.message_end.next = self.payload_take.message_end.val();
        self.counters.drop.next = self.seq.acting.val() & self.act.drop.val();
        self.counters.nack.next = self.seq.acting.val() & self.act.nack_count.val();
        self.counters.nack_syndrome.next = bit_cast::<8, 32>(self.s_rx_outcome.val().immediate);

        // ---- Outputs ----
        self.s_rx_ready.next = self.payload_take.ready.val();
        self.s_rqrd_ready.next =
            self.rqe_fetch.s_ready.val() | (self.seq.state.val() == ResponderState::AtomicData);
        self.m_rqrd_req_valid.next =
            self.rqe_fetch.m_req_valid.val() | (self.seq.state.val() == ResponderState::AtomicRead);
        self.m_wr_valid.next = self.writer.m_wr_valid.val();
        self.m_wr_addr.next = self.writer.m_wr_addr.val();
        self.m_wr_data.next = self.writer.m_wr_data.val();
        self.m_wr_strobe.next = self.writer.m_wr_strobe.val();
        self.m_owe_valid.next = self.seq.state.val() == ResponderState::Owe;
        self.m_owe.next = self.ctx.m_owe.val();
        self.router.s_valid.next = self.seq.state.val() == ResponderState::AckEvent;
        self.router.s_answer.next = self.ctx.m_answer.val();
        self.router.s_refusals.next = self.ctx.ack_refusals.val();
        self.router.m_ready.next = self.m_ack_ready.val();
        self.m_ack_valid.next = self.router.m_valid.val();
        self.m_ack.next = self.router.m_ack.val();
        self.m_cpl_valid.next = self.seq.state.val() == ResponderState::Complete;
        self.m_cpl.next = self.ctx.m_cpl.val();
        self.m_tpt_req_valid.next = self.tpt.m_tpt_req_valid.val();
        self.m_tpt_req.next = self.tpt.m_tpt_req.val();
        self.stat_messages_received.next = self.counters.stat_messages_received.val();
        self.stat_dropped.next = self.counters.stat_dropped.val();
        self.stat_nack_received_0.next = self.counters.stat_nack_received_0.val();
        self.stat_nack_received_1.next = self.counters.stat_nack_received_1.val();
        self.stat_nack_received_2.next = self.counters.stat_nack_received_2.val();
        self.stat_nack_received_3.next = self.counters.stat_nack_received_3.val();
        self.stat_nack_received_4.next = self.counters.stat_nack_received_4.val();
        self.stat_nack_received_5.next = self.counters.stat_nack_received_5.val();
        self.stat_nack_received_6.next = self.counters.stat_nack_received_6.val();
        self.stat_nack_received_7.next = self.counters.stat_nack_received_7.val();
    }
}

impl ReceiveQueueEngine {
    /// Where the engine's state machine stands (for tests and observers: idle means no
    /// message is in progress).
    pub fn responder_state(&self) -> ResponderState {
        self.seq.state.val()
    }
}

impl ClockedBlock for ReceiveQueueEngine {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
