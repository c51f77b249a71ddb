//! `TransmitMachine`: the requester's transmit path: it takes the scheduler's pick, has the
//! QP claimed by the table engine, fetches its WQE, has it committed, and sends the expect
//! event, the message and its payload. Three stages, so the next WQE is claimed and fetched
//! while the current message commits and streams:
//! - the [`ClaimStage`] (`requester/claim_stage.rs`): take a pick (not a QP whose WQE in a
//!   later stage is not yet committed: its claim would read the same `sq_next`; not while
//!   a payload longer than the buffer is read or still to be read), request the claim, then
//!   the WQE's fetch; it keeps the claim's values of the WQEs in the fetch and the send
//!   stage;
//! - the [`WqeFetch`] (`requester/wqe_fetch.rs`): words 0-4 (5-7 for a WQE that uses them),
//!   handed to the send stage with the last one;
//! - send stage (this block's state machine): copy the WQE's fields and class into the
//!   [`WqeLatch`] (the clock after it takes the WQE, so the fetch may read the next one),
//!   request the commit, then by class: the local completion (a bad WQE, NOP, BIND RKEY,
//!   DELAY), the expect event (READ, atomic), the message, the payload (read through the
//!   [`TxReadPort`] into its `PayloadBuffer`: one that fits the buffer right after the
//!   commit, before the message is offered, when the [`PayloadLedger`] has room; a longer
//!   one after the message's grant), an inline payload from the WQE's words 3, 5, 6, 7 or
//!   an atomic's two operands;
//! - send slot (the [`SendSlot`], `requester/send_slot.rs`, which also builds the
//!   descriptor and offers the message): a message whose payload was requested early
//!   moves, with its descriptor, into the slot once the request is taken (or once the slot
//!   is free), so the send stage takes the next WQE meanwhile; the slot offers it once the
//!   buffer holds only its payload (and the send stage's early one). The send stage's own
//!   messages and expect events wait for the slot.
//!
//! Follows "SendQueueEngine: design notes" and "Message rate of short messages" in
//! `docs/nic-blocks.md` and the commit point of `docs/nic-architecture.md` (the WQE fetch
//! is speculative; the PSN is taken by the table engine's atomic re-check; a QP reset or
//! moved ring since the claim drops the fetched WQE).
//!
//! Ports (valid/ready handshakes; a source holds its fields while valid and not ready):
//! - `clock`, `reset` (synchronous, active high: every stage idle, the buffer empty).
//!   Reset steers no handshake (`docs/nic-blocks.md`, "Reset"): what is taken in a reset
//!   clock is dropped at that edge.
//! - `cfg_node_id` (16): source node of every message.
//! - Pick: `s_pick_valid`, `s_pick_qp` (6), `m_pick_taken` (the scheduler's round robin).
//! - Table operations: `m_op_valid`, `m_op_commit` (0 claim, 1 commit), `m_op_qp` (6), from
//!   registers; `s_op_grant`: the engine takes the operation shown this clock. Answers in the
//!   clock the operation executes: `s_claim_done` / `s_commit_done`, `s_op_ok`; a claim's
//!   `s_claim_psn` (24, `sq_next`), `s_claim_addr` (32, the WQE's address), `s_claim_remote`
//!   (32, QP_REMOTE); a commit's `s_commit_resync` (the message carries RESYNC). The commit
//!   is judged by the engine from `m_commit_psn` (24), `m_commit_stale`,
//!   `m_commit_need_empty` (committed only with nothing outstanding: READ, atomic, local
//!   only), `m_commit_local_only`, `m_commit_needs_response` (READ, atomic),
//!   `m_commit_delay` (a good DELAY) and `m_delay_cycles` (24), all registered.
//! - `s_moved_valid`, `s_moved_qp` (6): a CSR write reset that QP or moved its ring; a WQE of
//!   it claimed in any stage goes stale (its commit fails).
//! - Local completion: `m_local_valid` / `m_local_ready`, `m_local_qp` (6), `m_local_psn`
//!   (24), `m_local_status` (8), `m_local_wqe` (the WQE's fields, for a BIND's TPT write).
//! - `s_una_qp` (6), `s_una_psn` (24), `m_on_una` (combinational): that PSN of that QP is
//!   being transmitted (the send stage's message, or one whose payload is in the buffer).
//! - Message, payload, expect event and tx DMA read client: as `SendQueueEngine`'s ports of
//!   the same names; `stat_requests_sent` (32, messages taken).
//!
//! Latency: a pick is claimed when the engine grants it (claims go after commits); the
//! fetch request follows the claim by one clock (once the fetch is free); the send stage
//! takes the WQE in the clock of its last word (or when it becomes free) and requests the
//! commit the next clock; a payload that fits the buffer is requested the clock after the
//! commit; taken, its message moves into the send slot (if free) and is offered the next
//! clock once the previous message's payload has left the buffer.
//! Throughput: the tx read port carries the next WQE's words while the current payload is
//! requested; one-cell messages on several QPs follow each other every 13 port words
//! (segmenter-bound at 16 clocks: `nic bench nic --size 64`).
//! Limits: one WQE per stage and one message in the send slot; two messages' payloads in the buffer (at most
//! `PAYLOAD_BUFFER_DEPTH` words of early payloads); at most four bursts in flight on the tx
//! read port (a WQE's two reads, two payloads); a payload of up to 8192 words.

use crate::common::bundles::{MessageDescriptor, SendWqe};
pub use crate::requester::claim_stage::SqClaimState;
use crate::requester::payload_buffer::PAYLOAD_BUFFER_DEPTH;
use crate::requester::{ClaimStage, PayloadLedger, SendSlot, TxReadPort, WqeFetch, WqeLatch};
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// The send stage: commit the fetched WQE, then its expect event, message and payload.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqTxState {
    /// Free: takes the fetched WQE once the fetch hands it off.
    Idle,
    CommitReq,
    CommitWait,
    /// Handing a bad or local-only WQE's completion to the acknowledgement machine.
    Local,
    Expect,
    Msg,
    /// Requesting the payload read (into the payload buffer; the stage goes on once the
    /// request is taken).
    PayloadReq,
    /// Streaming an inline SEND's payload from the WQE.
    Inline,
    Atomic0,
    Atomic1,
}

#[derive(LogicBlock)]
pub struct TransmitMachine {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub cfg_node_id: Signal<In, Bits<16>>,
    pub s_pick_valid: Signal<In, Bit>,
    pub s_pick_qp: Signal<In, Bits<6>>,
    pub m_pick_taken: Signal<Out, Bit>,
    pub m_op_valid: Signal<Out, Bit>,
    pub m_op_commit: Signal<Out, Bit>,
    pub m_op_qp: Signal<Out, Bits<6>>,
    pub s_op_grant: Signal<In, Bit>,
    pub s_claim_done: Signal<In, Bit>,
    pub s_commit_done: Signal<In, Bit>,
    pub s_op_ok: Signal<In, Bit>,
    pub s_claim_psn: Signal<In, Bits<24>>,
    pub s_claim_addr: Signal<In, Bits<32>>,
    pub s_claim_remote: Signal<In, Bits<32>>,
    pub s_commit_resync: Signal<In, Bit>,
    pub m_commit_psn: Signal<Out, Bits<24>>,
    pub m_commit_stale: Signal<Out, Bit>,
    pub m_commit_need_empty: Signal<Out, Bit>,
    pub m_commit_local_only: Signal<Out, Bit>,
    pub m_commit_needs_response: Signal<Out, Bit>,
    pub m_commit_delay: Signal<Out, Bit>,
    pub m_delay_cycles: Signal<Out, Bits<24>>,
    pub s_moved_valid: Signal<In, Bit>,
    pub s_moved_qp: Signal<In, Bits<6>>,
    pub m_local_valid: Signal<Out, Bit>,
    pub m_local_ready: Signal<In, Bit>,
    pub m_local_qp: Signal<Out, Bits<6>>,
    pub m_local_psn: Signal<Out, Bits<24>>,
    pub m_local_status: Signal<Out, Bits<8>>,
    pub m_local_wqe: Signal<Out, SendWqe>,
    pub s_una_qp: Signal<In, Bits<6>>,
    pub s_una_psn: Signal<In, Bits<24>>,
    pub m_on_una: Signal<Out, Bit>,
    pub m_msg_valid: Signal<Out, Bit>,
    pub m_msg_ready: Signal<In, Bit>,
    pub m_msg: Signal<Out, MessageDescriptor>,
    pub m_payload_data: Signal<Out, Bits<64>>,
    pub m_payload_valid: Signal<Out, Bit>,
    pub m_payload_ready: Signal<In, Bit>,
    pub m_payload_last: Signal<Out, Bit>,
    pub m_txrd_req_valid: Signal<Out, Bit>,
    pub m_txrd_req_ready: Signal<In, Bit>,
    pub m_txrd_req_addr: Signal<Out, Bits<32>>,
    pub m_txrd_req_words: Signal<Out, Bits<16>>,
    pub s_txrd_data: Signal<In, Bits<64>>,
    pub s_txrd_valid: Signal<In, Bit>,
    pub s_txrd_ready: Signal<Out, Bit>,
    pub s_txrd_last: Signal<In, Bit>,
    pub m_expect_valid: Signal<Out, Bit>,
    pub m_expect_ready: Signal<In, Bit>,
    pub m_expect_qp: Signal<Out, Bits<6>>,
    pub m_expect_psn: Signal<Out, Bits<24>>,
    pub m_expect_addr: Signal<Out, Bits<32>>,
    pub m_expect_length: Signal<Out, Bits<32>>,
    pub m_expect_atomic: Signal<Out, Bit>,
    pub stat_requests_sent: Signal<Out, Bits<32>>,
    // Send stage.
    tx_state: DFF<SqTxState>,
    tx_resync: DFF<Bit>,
    tx_beat: DFF<Bits<3>>,
    /// The send stage's message had its payload requested before its grant (it fits the
    /// buffer): its words wait in the buffer until the message is taken.
    tx_early: DFF<Bit>,
    /// The send stage took a WQE last clock: its fields (valid in the fetch this clock)
    /// are copied into the `wqe` latch, so the fetch may read the next WQE.
    copy_pending: DFF<Bit>,
    commit_req: Signal<Local, Bit>,
    /// The send stage takes the fetched WQE this clock.
    accept: Signal<Local, Bit>,
    /// The send stage's message is being transmitted (expect event to its last payload
    /// word, or its payload request).
    tx_streaming: Signal<Local, Bit>,
    /// The claim stage and the WQE in the fetch.
    claim: ClaimStage,
    /// The WQE fetch: the read of the WQE's words into its fields.
    fetch: WqeFetch,
    /// The send stage's copy of the fetched WQE and its class.
    wqe: WqeLatch,
    /// The tx DMA read client: WQE and payload reads, the payload buffer.
    port: TxReadPort,
    /// The messages whose payload is in the buffer (or on its way), the words reserved.
    ledger: PayloadLedger,
    /// A payload read is taken this clock.
    pl_push: Signal<Local, Bit>,
    pl_pop: Signal<Local, Bit>,
    pl_pop_last: Signal<Local, Bit>,
    /// A message with its payload already requested is granted.
    pl_grant: Signal<Local, Bit>,
    /// The message output: the send stage's descriptor, the send slot (a message whose
    /// payload was requested early, kept until it is taken so that the send stage takes,
    /// commits and requests the payload of the next WQE meanwhile) and the offer.
    slot: SendSlot,
    /// The send stage's early message moves into the send slot this clock.
    slot_load: Signal<Local, Bit>,
}

impl TransmitMachine {
    /// The transmit machine (no parameters: the WQE layout is `nic_abi::Wqe`'s, the buffer
    /// `PAYLOAD_BUFFER_DEPTH` words).
    pub fn new() -> Self {
        TransmitMachine {
            clock: Default::default(),
            reset: Default::default(),
            cfg_node_id: Default::default(),
            s_pick_valid: Default::default(),
            s_pick_qp: Default::default(),
            m_pick_taken: Default::default(),
            m_op_valid: Default::default(),
            m_op_commit: Default::default(),
            m_op_qp: Default::default(),
            s_op_grant: Default::default(),
            s_claim_done: Default::default(),
            s_commit_done: Default::default(),
            s_op_ok: Default::default(),
            s_claim_psn: Default::default(),
            s_claim_addr: Default::default(),
            s_claim_remote: Default::default(),
            s_commit_resync: Default::default(),
            m_commit_psn: Default::default(),
            m_commit_stale: Default::default(),
            m_commit_need_empty: Default::default(),
            m_commit_local_only: Default::default(),
            m_commit_needs_response: Default::default(),
            m_commit_delay: Default::default(),
            m_delay_cycles: Default::default(),
            s_moved_valid: Default::default(),
            s_moved_qp: Default::default(),
            m_local_valid: Default::default(),
            m_local_ready: Default::default(),
            m_local_qp: Default::default(),
            m_local_psn: Default::default(),
            m_local_status: Default::default(),
            m_local_wqe: Default::default(),
            s_una_qp: Default::default(),
            s_una_psn: Default::default(),
            m_on_una: Default::default(),
            m_msg_valid: Default::default(),
            m_msg_ready: Default::default(),
            m_msg: Default::default(),
            m_payload_data: Default::default(),
            m_payload_valid: Default::default(),
            m_payload_ready: Default::default(),
            m_payload_last: Default::default(),
            m_txrd_req_valid: Default::default(),
            m_txrd_req_ready: Default::default(),
            m_txrd_req_addr: Default::default(),
            m_txrd_req_words: Default::default(),
            s_txrd_data: Default::default(),
            s_txrd_valid: Default::default(),
            s_txrd_ready: Default::default(),
            s_txrd_last: Default::default(),
            m_expect_valid: Default::default(),
            m_expect_ready: Default::default(),
            m_expect_qp: Default::default(),
            m_expect_psn: Default::default(),
            m_expect_addr: Default::default(),
            m_expect_length: Default::default(),
            m_expect_atomic: Default::default(),
            stat_requests_sent: Default::default(),
            tx_state: Default::default(),
            tx_resync: Default::default(),
            tx_beat: Default::default(),
            tx_early: Default::default(),
            copy_pending: Default::default(),
            commit_req: Default::default(),
            accept: Default::default(),
            tx_streaming: Default::default(),
            pl_push: Default::default(),
            pl_pop: Default::default(),
            pl_pop_last: Default::default(),
            pl_grant: Default::default(),
            slot_load: Default::default(),
            claim: ClaimStage::new(),
            fetch: WqeFetch::new(),
            wqe: WqeLatch::new(PAYLOAD_BUFFER_DEPTH),
            port: TxReadPort::new(),
            ledger: PayloadLedger::new(PAYLOAD_BUFFER_DEPTH),
            slot: SendSlot::new(),
        }
    }
}

impl Default for TransmitMachine {
    fn default() -> Self {
        Self::new()
    }
}

impl ClockedBlock for TransmitMachine {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

impl Logic for TransmitMachine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            tx_state,
            tx_resync,
            tx_beat,
            tx_early,
            copy_pending
        );
        // The send stage's copy of the WQE, taken the clock after it takes the WQE (the
        // fetch's fields are valid then; the next fetch's words come later).
        self.wqe.clock.next = self.clock.val();
        self.wqe.s_load.next = self.copy_pending.q.val();
        self.wqe.s_wqe.next = self.fetch.m_wqe.val();
        self.wqe.s_inline_beat.next = self.tx_beat.q.val();

        // ---- Requests to the table engine (from registers only) ----
        // The send stage's commit goes before the claim stage's claim.
        self.commit_req.next = self.tx_state.q.val() == SqTxState::CommitReq;
        self.m_op_valid.next = self.commit_req.val() | self.claim.m_claim_valid.val();
        self.m_op_commit.next = self.commit_req.val();
        self.m_op_qp.next = self.claim.m_claim_qp.val();
        if self.commit_req.val() {
            self.m_op_qp.next = self.claim.m_tx_qp.val();
        }
        self.m_commit_psn.next = self.claim.m_tx_psn.val();
        self.m_commit_stale.next = self.claim.m_tx_stale.val();
        self.m_commit_need_empty.next = self.wqe.m_need_empty.val();
        self.m_commit_local_only.next = self.wqe.m_local_only.val();
        self.m_commit_needs_response.next = self.wqe.m_op_read.val() | self.wqe.m_op_atomic.val();
        self.m_commit_delay.next = self.wqe.m_delay_ok.val();
        self.m_delay_cycles.next = bit_cast::<24, 64>(self.wqe.m_wqe.val().vaddr);
        // After the send slot's message (the events leave in commit order).
        self.m_local_valid.next =
            (self.tx_state.q.val() == SqTxState::Local) & !self.slot.m_slot_valid.val();
        self.m_local_qp.next = self.claim.m_tx_qp.val();
        self.m_local_psn.next = self.claim.m_tx_psn.val();
        self.m_local_status.next = self.wqe.m_status.val();
        self.m_local_wqe.next = self.wqe.m_wqe.val();
        // Expect event to its last payload word, or its payload request.
        self.tx_streaming.next = (self.tx_state.q.val() != SqTxState::Idle)
            & (self.tx_state.q.val() != SqTxState::CommitReq)
            & (self.tx_state.q.val() != SqTxState::CommitWait)
            & (self.tx_state.q.val() != SqTxState::Local);
        self.ledger.s_una_qp.next = self.s_una_qp.val();
        self.ledger.s_una_psn.next = self.s_una_psn.val();
        self.ledger.s_cur_valid.next = self.tx_streaming.val();
        self.m_on_una.next = self.ledger.m_on_una.val();

        // Three stages, so the next WQE is fetched while the current message streams: the
        // claim stage (pick, claim, fetch request), the WQE fetch, the send stage (commit,
        // expect event, message, payload). A QP is claimed only while no WQE of it waits
        // for its commit in the later stages (the claim reads `sq_next`).
        self.fetch.clock.next = self.clock.val();
        self.fetch.reset.next = self.reset.val();
        self.fetch.s_fetch_valid.next = self.claim.m_fetch_valid.val();
        self.fetch.s_fetch_addr.next = self.claim.m_fetch_addr.val();
        self.ledger.clock.next = self.clock.val();
        self.ledger.reset.next = self.reset.val();
        // The tx DMA read client: the fetch's reads and the payload reads (PayloadReq; an
        // early one once it fits beside the words reserved, and fewer than two messages'
        // are in the buffer); the payload words wait in its buffer.
        self.port.clock.next = self.clock.val();
        self.port.reset.next = self.reset.val();
        self.port.s_fetch_req_valid.next = self.fetch.m_rd_req_valid.val();
        self.fetch.m_rd_req_ready.next = self.port.s_fetch_req_ready.val();
        self.port.s_fetch_req_addr.next = self.fetch.m_rd_req_addr.val();
        self.port.s_fetch_req_words.next = self.fetch.m_rd_req_words.val();
        self.port.s_pay_req_valid.next = (self.tx_state.q.val() == SqTxState::PayloadReq)
            & (!self.tx_early.q.val() | self.ledger.m_room.val());
        // One burst: ceil(length / 8) <= 8192 words.
        self.port.s_pay_req_addr.next = self.wqe.m_wqe.val().local_addr;
        self.port.s_pay_req_words.next = self.wqe.m_len_round.val();
        self.pl_push.next = self.port.m_pay_req_taken.val();
        self.m_txrd_req_valid.next = self.port.m_req_valid.val();
        self.port.m_req_ready.next = self.m_txrd_req_ready.val();
        self.m_txrd_req_addr.next = self.port.m_req_addr.val();
        self.m_txrd_req_words.next = self.port.m_req_words.val();
        self.port.s_rd_data.next = self.s_txrd_data.val();
        self.port.s_rd_valid.next = self.s_txrd_valid.val();
        self.s_txrd_ready.next = self.port.s_rd_ready.val();
        self.port.s_rd_last.next = self.s_txrd_last.val();
        self.fetch.s_rd_data.next = self.port.m_fetch_data.val();
        self.fetch.s_rd_valid.next = self.port.m_fetch_valid.val();
        self.port.m_fetch_ready.next = self.fetch.s_rd_ready.val();
        // The payload from the buffer, words of granted messages only (an inline or atomic
        // payload overrides it below: its message is offered only once the buffer is
        // empty).
        self.m_expect_valid.next = false;
        self.m_payload_valid.next = self.port.m_pay_valid.val() & self.ledger.m_out_ok.val();
        self.m_payload_data.next = self.port.m_pay_data.val();
        self.m_payload_last.next = self.port.m_pay_last.val();
        self.port.m_pay_ready.next = self.m_payload_ready.val() & self.ledger.m_out_ok.val();
        self.pl_pop.next =
            self.port.m_pay_valid.val() & self.m_payload_ready.val() & self.ledger.m_out_ok.val();
        self.pl_pop_last.next = self.pl_pop.val() & self.port.m_pay_last.val();
        self.pl_grant.next = false;
        // The ledger: a payload read taken (the send stage's message), its grant, the
        // words out, the end of a payload burst (a long payload has arrived).
        self.ledger.s_push.next = self.pl_push.val();
        self.ledger.s_push_qp.next = self.claim.m_tx_qp.val();
        self.ledger.s_push_psn.next = self.claim.m_tx_psn.val();
        self.ledger.s_push_words.next = self.wqe.m_len_round.val();
        self.ledger.s_pop.next = self.pl_pop.val();
        self.ledger.s_pop_last.next = self.pl_pop_last.val();
        self.ledger.s_burst_end.next = self.port.m_pay_burst_end.val();
        self.ledger.s_words.next = self.wqe.m_len_round.val();
        // The pick: not while a long payload arrives or the send stage holds one still to
        // be read (it holds the read client; a pick made now could be thousands of clocks
        // stale when its WQE can be read).
        self.claim.clock.next = self.clock.val();
        self.claim.reset.next = self.reset.val();
        self.claim.s_pick_valid.next = self.s_pick_valid.val();
        self.claim.s_pick_qp.next = self.s_pick_qp.val();
        self.m_pick_taken.next = self.claim.m_pick_taken.val();
        self.claim.s_pick_hold.next = self.ledger.m_long.val()
            | ((self.tx_state.q.val() != SqTxState::Idle)
                & (self.copy_pending.q.val() | self.wqe.m_pl_long.val()));
        self.claim.s_tx_uncommitted.next = (self.tx_state.q.val() == SqTxState::CommitReq)
            | (self.tx_state.q.val() == SqTxState::CommitWait);
        self.claim.s_commit_first.next = self.commit_req.val();
        self.claim.s_op_grant.next = self.s_op_grant.val();
        self.claim.s_claim_done.next = self.s_claim_done.val();
        self.claim.s_op_ok.next = self.s_op_ok.val();
        self.claim.s_claim_psn.next = self.s_claim_psn.val();
        self.claim.s_claim_addr.next = self.s_claim_addr.val();
        self.claim.s_claim_remote.next = self.s_claim_remote.val();
        self.claim.s_fetch_ready.next = self.fetch.s_fetch_ready.val();
        self.claim.s_moved_valid.next = self.s_moved_valid.val();
        self.claim.s_moved_qp.next = self.s_moved_qp.val();
        self.claim.s_wqe_done.next = self.fetch.m_wqe_done.val();
        self.claim.s_tx_free.next = self.tx_state.q.val() == SqTxState::Idle;
        self.accept.next = self.claim.m_handoff.val();
        self.fetch.s_handoff.next = self.claim.m_handoff.val();
        self.copy_pending.d.next = self.accept.val();
        if self.accept.val() {
            self.tx_state.d.next = SqTxState::CommitReq;
        }
        // The message output: the send stage's message (not read early) or the send
        // slot's, as `SendSlot` says.
        self.slot.clock.next = self.clock.val();
        self.slot.reset.next = self.reset.val();
        self.slot.s_wqe.next = self.wqe.m_wqe.val();
        self.slot.s_op_imm.next = self.wqe.m_op_imm.val();
        self.slot.s_msg_length.next = self.wqe.m_msg_length.val();
        self.slot.s_remote.next = self.claim.m_tx_remote.val();
        self.slot.s_qp.next = self.claim.m_tx_qp.val();
        self.slot.s_psn.next = self.claim.m_tx_psn.val();
        self.slot.cfg_node_id.next = self.cfg_node_id.val();
        self.slot.s_resync.next = self.tx_resync.q.val();
        self.slot.s_stage_valid.next =
            (self.tx_state.q.val() == SqTxState::Msg) & !self.tx_early.q.val();
        self.slot.s_stage_early.next =
            (self.tx_state.q.val() == SqTxState::Msg) & self.tx_early.q.val();
        self.slot.s_msgs.next = self.ledger.m_msgs.val();
        self.m_msg_valid.next = self.slot.m_msg_valid.val();
        self.slot.m_msg_ready.next = self.m_msg_ready.val();
        self.m_msg.next = self.slot.m_msg.val();
        self.stat_requests_sent.next = self.slot.stat_requests_sent.val();
        self.slot_load.next = false;
        match self.tx_state.q.val() {
            SqTxState::Idle => {
                // Takes the fetched WQE: above.
            }
            SqTxState::CommitReq => {
                if self.s_op_grant.val() {
                    self.tx_state.d.next = SqTxState::CommitWait;
                }
            }
            SqTxState::CommitWait => {
                if self.s_commit_done.val() {
                    self.tx_resync.d.next = self.s_commit_resync.val();
                    self.tx_state.d.next = SqTxState::Idle;
                    if self.s_op_ok.val() {
                        self.tx_state.d.next = SqTxState::Msg;
                        if self.wqe.m_pl_early.val() {
                            self.tx_state.d.next = SqTxState::PayloadReq;
                        }
                        self.tx_early.d.next = self.wqe.m_pl_early.val();
                        if self.wqe.m_op_read.val() | self.wqe.m_op_atomic.val() {
                            self.tx_state.d.next = SqTxState::Expect;
                        }
                        if self.wqe.m_local_only.val() {
                            self.tx_state.d.next = SqTxState::Local;
                        }
                    }
                }
            }
            SqTxState::Local => {
                if self.m_local_ready.val() & !self.slot.m_slot_valid.val() {
                    self.tx_state.d.next = SqTxState::Idle;
                }
            }
            SqTxState::Expect => {
                // After the send slot's message.
                self.m_expect_valid.next = !self.slot.m_slot_valid.val();
                if self.m_expect_ready.val() & !self.slot.m_slot_valid.val() {
                    self.tx_state.d.next = SqTxState::Msg;
                }
            }
            SqTxState::Msg => {
                // Read early: into the send slot once it is free. Otherwise offered after
                // the earlier messages' payload words have left the buffer.
                if self.tx_early.q.val() & !self.slot.m_slot_valid.val() {
                    self.slot_load.next = true;
                    self.tx_state.d.next = SqTxState::Idle;
                    self.tx_early.d.next = false;
                }
                if self.m_msg_ready.val() & self.slot.m_stage_free.val() & !self.tx_early.q.val() {
                    self.tx_state.d.next = SqTxState::Idle;
                    self.tx_beat.d.next = 0.into();
                    self.tx_early.d.next = false;
                    self.pl_grant.next = self.tx_early.q.val();
                    if (self.wqe.m_msg_length.val() != 0)
                        & !self.wqe.m_op_atomic.val()
                        & !self.tx_early.q.val()
                    {
                        self.tx_state.d.next = SqTxState::PayloadReq;
                        if self.wqe.m_wqe.val().inline_payload {
                            self.tx_state.d.next = SqTxState::Inline;
                        }
                    }
                    if self.wqe.m_op_atomic.val() {
                        self.tx_state.d.next = SqTxState::Atomic0;
                    }
                }
            }
            SqTxState::PayloadReq => {
                // The words go to the payload buffer; the stage goes on to the next WQE
                // (or offers this message, if read early) while they arrive.
                if self.pl_push.val() {
                    self.tx_state.d.next = SqTxState::Idle;
                    if self.tx_early.q.val() {
                        // Into the send slot (the send stage takes the next WQE), or wait
                        // for it in Msg.
                        if self.slot.m_slot_valid.val() {
                            self.tx_state.d.next = SqTxState::Msg;
                        } else {
                            self.slot_load.next = true;
                            self.tx_early.d.next = false;
                        }
                    } else {
                        // Read after its grant.
                        self.pl_grant.next = true;
                    }
                }
            }
            SqTxState::Inline => {
                // The payload from the WQE's words 3, 5, 6, 7 (`INLINE_WORDS`).
                self.m_payload_valid.next = true;
                self.m_payload_data.next = self.wqe.m_inline_word.val();
                self.m_payload_last.next =
                    bit_cast::<16, 3>(self.tx_beat.q.val()) + 1 == self.wqe.m_len_round.val();
                if self.m_payload_ready.val() {
                    self.tx_beat.d.next = self.tx_beat.q.val() + 1;
                    if bit_cast::<16, 3>(self.tx_beat.q.val()) + 1 == self.wqe.m_len_round.val() {
                        self.tx_state.d.next = SqTxState::Idle;
                    }
                }
            }
            SqTxState::Atomic0 => {
                self.m_payload_valid.next = true;
                self.m_payload_data.next = self.wqe.m_wqe.val().compare;
                self.m_payload_last.next = false;
                if self.m_payload_ready.val() {
                    self.tx_state.d.next = SqTxState::Atomic1;
                }
            }
            SqTxState::Atomic1 => {
                self.m_payload_valid.next = true;
                self.m_payload_data.next = self.wqe.m_wqe.val().swap;
                self.m_payload_last.next = true;
                if self.m_payload_ready.val() {
                    self.tx_state.d.next = SqTxState::Idle;
                }
            }
            _ => {
                self.tx_state.d.next = SqTxState::Idle;
            }
        }
        // The send slot's message, taken, is granted (its words may leave).
        self.ledger.s_grant.next = self.pl_grant.val() | self.slot.m_slot_taken.val();
        self.slot.s_load.next = self.slot_load.val();
        self.m_expect_qp.next = self.claim.m_tx_qp.val();
        self.m_expect_psn.next = self.claim.m_tx_psn.val();
        self.m_expect_addr.next = self.wqe.m_wqe.val().local_addr;
        self.m_expect_length.next = self.wqe.m_wqe.val().length;
        self.m_expect_atomic.next = self.wqe.m_op_atomic.val();
        if self.reset.val() {
            self.tx_state.d.next = SqTxState::Idle;
            self.copy_pending.d.next = false;
            self.tx_early.d.next = false;
        }
    }
}
