//! `SendQueueEngine`: the requester side of the NIC: doorbells, round-robin scheduling,
//! WQE fetch and validation, message build, payload read, go-back-N, retry timers and
//! send completions.
//!
//! Follows `docs/nic-architecture.md` ("Host memory structures", "Reliability: queue pairs,
//! PSNs, go-back-N" — normative — and "Deadlock freedom"), the port bundles of
//! `docs/nic-blocks.md` and the per-QP registers of `docs/csr-map.md`; design choices where
//! those are silent are listed in `docs/nic-blocks.md`, "SendQueueEngine: design notes".
//!
//! Ports (every handshake valid/ready; a source holds its fields while valid and not ready):
//! - `clock`, `reset` (synchronous, active high; afterwards the per-QP table is cleared
//!   for 64 clocks, during which CSR accesses wait).
//! - Configuration: `cfg_node_id` (16, source node of every message), `cfg_retry_timeout`
//!   (32, clocks without acknowledgement before go-back-N; 0 = never), `cfg_retry_limit` (4).
//! - Per-QP CSR side port: `s_csr_valid` / `s_csr_ready`, `s_csr_write`, `s_csr_qp` (6),
//!   `s_csr_reg` (4: 0 SQ_BASE .. 10 QP_STATUS), `s_csr_wdata` (64, bits 31:0 used);
//!   `m_csr_rdata_valid` / `m_csr_rdata` (64): one answer per accepted read, three clocks
//!   after acceptance. QP_CTRL writes: bit 0 enable, bit 1 reset, bit 2 send-side reset
//!   (the same here; the receive engine resets its responder state on bit 1 only).
//!   Answers SQ_BASE, SQ_SIZE_LOG2, SQ_PI, SQ_CI, QP_REMOTE, QP_CTRL (bit 0),
//!   QP_STATUS (23:0 sq_next, 49 waiting, 55:52 retry count); zero for everything else and
//!   for queue pairs `>= queue_pairs` (whose writes are ignored).
//! - Message source: `m_msg_valid` / `m_msg_ready` with `m_msg` (a
//!   `common::MessageDescriptor`: opcode, nodes, QPs, PSN, length, RETH, immediate, flags);
//!   then the payload `m_payload_data` (64) / `m_payload_valid` / `m_payload_ready` /
//!   `m_payload_last` (`ceil(length / 8)` words, none for length 0).
//! - Tx DMA read client (WQE fetch, payload): `m_txrd_req_valid` / `m_txrd_req_ready`,
//!   `m_txrd_req_addr` (32), `m_txrd_req_words` (16); `s_txrd_data` (64), `s_txrd_valid`,
//!   `s_txrd_ready`, `s_txrd_last`.
//! - Rx-port DMA read client (completion-time re-read of WQE words 0-1): the same with
//!   prefix `m_cplrd_req_` / `s_cplrd_`.
//! - Expect event (before an RDMA READ or atomic request): `m_expect_valid` /
//!   `m_expect_ready`, `m_expect_qp` (6), `m_expect_psn` (24), `m_expect_addr` (32),
//!   `m_expect_length` (32), `m_expect_atomic`.
//! - Acknowledgement events: `s_ack_valid` / `s_ack_ready`, `s_ack_qp` (6), `s_ack_psn` (24),
//!   `s_ack_syndrome` (8, 0 = ACK), `s_ack_response`, `s_ack_resync` (the answer carried
//!   RESYNC: the responder restarted its PSN sequence at `psn`, see "Responder restarts").
//! - Completion requests: `m_cpl_valid` / `m_cpl_ready`, `m_cpl` (a [`CompletionRequest`],
//!   the `AckMachine`'s; `is_receive`, `has_immediate` and `immediate` 0).
//! - Counters (32, wrapping, cleared by reset): `stat_requests_sent` (messages accepted on
//!   `m_msg_*`), `stat_retransmissions` (go-back-N events: retryable NACK or timeout).
//! - TPT bind write: `m_bind_valid` / `m_bind_ready`, `m_bind` (a
//!   [`TptBindWrite`](crate::common::TptBindWrite)): a good BIND RKEY's entry, offered by the
//!   child block [`BindWriter`] (`requester/bind_writer.rs`) when the BIND's local
//!   completion is offered; the completion goes on to the acknowledgement machine once the
//!   write is accepted. Tie `m_bind_ready` high without a TPT (nothing changes then).
//!
//! Structure: the per-QP state lives in the child block [`QpTable`]
//! (`requester/qp_table.rs`: one [`QpEntry`](crate::requester::QpEntry) per QP in six
//! `QpRam`s of `queue_pairs` rounded up to a power of two words, synchronous read, cleared
//! for 64 clocks after reset; three flags stored with each entry, outstanding, has work
//! and window full, spare the decision PSN arithmetic; a QP number at or beyond
//! `queue_pairs` reads an all-zero
//! entry and its write-backs are ignored, so no table address — a CSR access, an
//! acknowledgement event's QP, a write-back — reaches another QP's word), owned by one
//! read-modify-write engine (its grants and clocks: the child block [`SqOpGrant`],
//! `requester/sq_op_grant.rs`; the entry registered and the decision on it: the child block
//! [`SqOpDecision`], `requester/sq_op_decision.rs`). An operation takes three clocks
//! (grant and read; register the entry as read, nothing behind the block RAM's output but
//! the timer's comparisons and the on-una test; decide from those registers and write back); the evaluation of an acknowledgement event takes four (a Derive clock
//! registers the event's classification from the registered entry before the decision).
//! The next one is granted while one executes if it is for another QP, so they follow
//! every two clocks, and a timer scan that is still reading gives way to a CSR access or
//! a transmit operation (and is dropped for an acknowledgement event or local completion
//! offered meanwhile). The timer check compares `timer_start` as the table reads it (its
//! registered read data) against two bounds registered a clock earlier from `now` and
//! `cfg_retry_timeout`, in the Read clock, and registers the expiry for the Exec clock (no
//! subtraction or comparison behind the registered entry); whether `sq_una` is being
//! transmitted (the transmit machine's `m_on_una`, which then holds the timer) is compared
//! in the same Read clock, from the read data, and registered beside it. By
//! priority:
//! CSR access, acknowledgement handling, transmit, timer scan; a CSR access right after
//! another one yields to a waiting acknowledgement or transmit operation, so a driver
//! programming queue pairs does not stall the traffic of those it has already programmed. Besides the CSR port, two
//! machines use it:
//! - transmit (the child block [`TransmitMachine`]): take the pick of the child block [`Scheduler`] (`requester/scheduler.rs`:
//!   round robin over the QPs whose eligibility bit is set, bits it keeps in step with the
//!   table's write-backs: enabled, `sq_next != sq_pi`, fewer than `SEND_WINDOW`
//!   outstanding, not waiting, not draining), claim (read), fetch the WQE through the
//!   child block [`WqeFetch`](crate::requester::WqeFetch) (`requester/wqe_fetch.rs`: one burst of 8 words; a WQE
//!   that uses only words 0-4, every one but an atomic or an inline SEND over 8 bytes,
//!   goes on to its commit after word 4 while words 5-7 drain, and no read is requested
//!   before they have), validate, commit (re-check and
//!   `sq_next++` atomically), then the expect
//!   event, the message and the payload, read by one DMA burst into the child block
//!   [`PayloadBuffer`](crate::requester::PayloadBuffer) (`requester/payload_buffer.rs`: 16 words), from which it streams
//!   (one word per clock, no bubbles). A payload that fits the buffer is requested right
//!   after the commit, before the message is offered (once the previous payload has left
//!   the buffer; its words go out after the message's grant); a longer one after the
//!   message's grant. Once the message is taken and its payload request too, the machine
//!   goes on: it picks, claims and fetches the next WQE while the payload arrives and
//!   streams out (the fetch's words come after the payload's on the read port); the next
//!   message is offered only after the previous payload's last word has left. A payload longer than the buffer holds the read client until its burst ends,
//!   and the next pick waits for that (so it is not made thousands of clocks before its
//!   WQE can be read). An inline SEND (WQE
//!   word 0 bit 9, at most 32 bytes) streams its payload from the fetched WQE's words 3,
//!   5, 6, 7 instead, with no read; a NOP (opcode 0x0F) takes its PSN and completes
//!   locally with success, like a bad WQE, once the queue has drained; so do a BIND RKEY
//!   (0x0D: with a hardware TPT its entry is written through `m_bind_*` before its
//!   completion goes on; without one the driver applies the binding at its completion)
//!   and a DELAY (0x0E), which also holds the QP in the [`Scheduler`] for
//!   its cycle count (word 3 bits 23:0; higher bits set: LOCAL_LENGTH_ERROR, no hold)
//!   from its commit, so the QP's next WQE waits while the others are served;
//! - acknowledgement, the child block [`AckMachine`] (`requester/ack_machine.rs`): takes
//!   one `s_ack` event at a time (or a local completion from the transmit machine), has it
//!   evaluated against `[sq_una, sq_next)`, then per completed WQE re-reads words 0-1 on
//!   the rx-port client (up to two re-reads queued), issues the completion request and has
//!   `sq_una` advanced, in order; the next event is evaluated while those are in flight
//!   unless its QP has one. It never waits on the transmit path. When idle it scans one
//!   QP's timer per operation.
//!
//! Final NACK for p: p completes with the syndrome and `sq_next = p + 1` (the responder
//! may have dropped p+1.. while its answer slot held the NACK: they are resent at once,
//! not after a timeout; not a retry event). Foreign retryable NACK (PSN more than
//! `SEND_WINDOW` from `sq_una`: the responder expects a PSN this QP cannot have sent
//! lately): go back to `sq_una` as on a timeout. Timer: measures the wait of `sq_una`
//! (held only while `sq_una` itself is transmitted, restarted by acknowledgement progress);
//! later transmissions do not restart it.
//!
//! Implied NAK: a READ or atomic completes only with its response. While the WQE at
//! `sq_una` is a READ or atomic that has been sent (bit 24 of the `sq_una` entry: set by
//! its commit, which only happens with nothing outstanding; kept across go-backs; cleared
//! when `sq_una` moves on), an ACK, or a NACK for a later PSN, without RESYNC for a later
//! PSN, completes nothing: the responder executed it and the response was lost. The QP
//! goes back to `sq_una` as on a foreign NACK, and it is a retry event (the count is
//! incremented, never cleared first: RETRY_EXCEEDED after `RETRY_LIMIT` of them); while
//! `sq_next == sq_una` it is ignored (already going back). The classification is
//! registered in the Derive clock beside `ev_restarted` (not behind `ev_hit`).
//!
//! Refused PSNs (a NACK in flight across a go-back): an event is evaluated for any PSN
//! from `sq_una` up to the last one the QP can have sent (`sq_pi`, at most `SEND_WINDOW`
//! on), not only up to `sq_next`: an answer to a message sent before a go-back still tells
//! the truth, so a non-retryable NACK that crosses a timeout still completes its WQE with
//! the syndrome (and `sq_next` moves past it), before the answer to the retransmitted
//! duplicate (`docs/nic-architecture.md`, "Refused PSNs";
//! `rtl/tests/receive_queue_engine.rs`, `duplicate_of_a_refused_psn_is_refused_again`). A NACK
//! lost on the way is reported again by every later answer's AETH, which the
//! `ReceiveQueueEngine` hands over as that PSN's final NACK before the answer's own event
//! (several, oldest first): nothing here changes for it.
//!
//! Responder restarts: an event for PSN p that carries RESYNC says the responder adopted p
//! as its expected PSN (its QP had been reset: it rebooted), so it never applied the PSNs
//! before p in its current incarnation. When p is in `[sq_una, sq_next)` and not `sq_una`,
//! WQEs `sq_una .. p-1` complete with status RESPONDER_RESTARTED (0x05) instead of success,
//! then the event is handled for p as usual (ACK or response: p completes with success;
//! non-retryable NACK: with the syndrome; retryable NACK: go-back-N from p). Those
//! completions do not set the QP's resync flag (the responder is in step from p on).
//!
//! Latency (L = DMA read latency in clocks; measured with L = 3 in `latency_figures`): a
//! doorbell on an idle QP leads to `m_msg_valid` (or `m_expect_valid`) 16 + L clocks
//! later (19; 20 + L for an atomic or an inline SEND over 8 bytes, 16 + 2L if L > 4: its
//! words 5-7 are a second read, issued after word 0; one clock more for a
//! payload read that fits the buffer, whose request goes first: 20 in `latency_figures`);
//! the payload request follows the commit by one clock, or for a longer payload the
//! message's grant (or the fetch's last word, if later). An
//! acknowledgement event is accepted within three clocks when no completion run is in
//! progress; its first completion request follows 9 + L clocks later (12 in
//! `latency_figures`), each further one about 9 + L clocks after the previous one is
//! accepted. A timeout fires between
//! `cfg_retry_timeout` and `cfg_retry_timeout + 3 * queue_pairs` clocks (more when the
//! table engine is busy) after the QP's last progress or the end of `sq_una`'s transmission.
//! Throughput: payload one word per clock, without bubbles. The transmit machine
//! ([`TransmitMachine`], `requester/transmit_machine.rs`) claims and fetches the next WQE
//! while the current message commits and streams: on several QPs one-cell messages follow
//! each other every 13 words of the tx read port (WQE words 0-4, 8 payload words); on one
//! QP the next WQE is claimed only after the commit, and its words come behind the
//! payload's: every 16 clocks with a one-word payload (`latency_figures`), `L + 16` with an
//! 8-word payload (see `docs/nic-blocks.md`, "Message rate of short messages").
//! Each table operation registers the entry before anything is derived from it (a block
//! RAM's output is slow), and an event's evaluation registers its PSN arithmetic before
//! the decision it feeds.
//! Limits: `queue_pairs` in 1..=64; one WQE in each stage of the transmit machine, two
//! messages' payloads in the payload buffer;
//! `SEND_WINDOW` (8) unacknowledged messages per QP; messages up to 65536 bytes (one
//! payload burst of at most 8192 words).

use crate::common::{CompletionRequest, TptBindWrite};
use crate::requester::{
    AckMachine, BindWriter, EventEvaluator, QpTable, Scheduler, SqCsrAccess, SqOpDecision,
    SqOpGrant, TransmitMachine,
};
use crate::sim::ClockedBlock;
use nic_abi::{MAX_QUEUE_PAIRS, SEND_WINDOW};
use rust_hdl::prelude::*;

pub use crate::requester::qp_table::QP_TABLE_ADDRESS_BITS;
pub use crate::requester::sq_op_grant::{SqEngineState, SqOp};

pub use crate::requester::ack_machine::SqAckState;
pub use crate::requester::transmit_machine::{SqClaimState, SqTxState};

#[derive(LogicBlock)]
pub struct SendQueueEngine {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub cfg_node_id: Signal<In, Bits<16>>,
    pub cfg_retry_timeout: Signal<In, Bits<32>>,
    pub cfg_retry_limit: Signal<In, Bits<4>>,
    // Per-QP CSR side port.
    pub s_csr_valid: Signal<In, Bit>,
    pub s_csr_ready: Signal<Out, Bit>,
    pub s_csr_write: Signal<In, Bit>,
    pub s_csr_qp: Signal<In, Bits<6>>,
    pub s_csr_reg: Signal<In, Bits<4>>,
    pub s_csr_wdata: Signal<In, Bits<64>>,
    pub m_csr_rdata_valid: Signal<Out, Bit>,
    pub m_csr_rdata: Signal<Out, Bits<64>>,
    // Message source.
    pub m_msg_valid: Signal<Out, Bit>,
    pub m_msg_ready: Signal<In, Bit>,
    pub m_msg: Signal<Out, crate::common::MessageDescriptor>,
    pub m_payload_data: Signal<Out, Bits<64>>,
    pub m_payload_valid: Signal<Out, Bit>,
    pub m_payload_ready: Signal<In, Bit>,
    pub m_payload_last: Signal<Out, Bit>,
    // Tx DMA read client.
    pub m_txrd_req_valid: Signal<Out, Bit>,
    pub m_txrd_req_ready: Signal<In, Bit>,
    pub m_txrd_req_addr: Signal<Out, Bits<32>>,
    pub m_txrd_req_words: Signal<Out, Bits<16>>,
    pub s_txrd_data: Signal<In, Bits<64>>,
    pub s_txrd_valid: Signal<In, Bit>,
    pub s_txrd_ready: Signal<Out, Bit>,
    pub s_txrd_last: Signal<In, Bit>,
    // Rx-port DMA read client (completion re-read).
    pub m_cplrd_req_valid: Signal<Out, Bit>,
    pub m_cplrd_req_ready: Signal<In, Bit>,
    pub m_cplrd_req_addr: Signal<Out, Bits<32>>,
    pub m_cplrd_req_words: Signal<Out, Bits<16>>,
    pub s_cplrd_data: Signal<In, Bits<64>>,
    pub s_cplrd_valid: Signal<In, Bit>,
    pub s_cplrd_ready: Signal<Out, Bit>,
    pub s_cplrd_last: Signal<In, Bit>,
    // Expect event.
    pub m_expect_valid: Signal<Out, Bit>,
    pub m_expect_ready: Signal<In, Bit>,
    pub m_expect_qp: Signal<Out, Bits<6>>,
    pub m_expect_psn: Signal<Out, Bits<24>>,
    pub m_expect_addr: Signal<Out, Bits<32>>,
    pub m_expect_length: Signal<Out, Bits<32>>,
    pub m_expect_atomic: Signal<Out, Bit>,
    // Acknowledgement events.
    pub s_ack_valid: Signal<In, Bit>,
    pub s_ack_ready: Signal<Out, Bit>,
    pub s_ack_qp: Signal<In, Bits<6>>,
    pub s_ack_psn: Signal<In, Bits<24>>,
    pub s_ack_syndrome: Signal<In, Bits<8>>,
    pub s_ack_response: Signal<In, Bit>,
    pub s_ack_resync: Signal<In, Bit>,
    // Completion requests.
    pub m_cpl_valid: Signal<Out, Bit>,
    pub m_cpl_ready: Signal<In, Bit>,
    pub m_cpl: Signal<Out, CompletionRequest>,
    // Counters.
    pub stat_requests_sent: Signal<Out, Bits<32>>,
    pub stat_retransmissions: Signal<Out, Bits<32>>,
    // TPT bind write.
    pub m_bind_valid: Signal<Out, Bit>,
    pub m_bind_ready: Signal<In, Bit>,
    pub m_bind: Signal<Out, TptBindWrite>,
    /// The per-QP table (six RAMs read and written together; cleared after reset).
    qp_table: QpTable,
    /// The table engine's grants and the clocks of the operation granted.
    grant: SqOpGrant,
    /// The entry registered and the operation's decision on it; the cycle counter.
    dec: SqOpDecision,
    csr_reg_reg: DFF<Bits<4>>,
    csr_wdata_reg: DFF<Bits<32>>,
    rdata_valid_reg: DFF<Bit>,
    rdata_reg: DFF<Bits<64>>,
    retransmissions_reg: DFF<Bits<32>>,
    /// Which QP the transmit machine serves next (eligibility bits and round robin).
    scheduler: Scheduler,
    /// The transmit machine: claim, WQE fetch, commit, message and payload.
    tm: TransmitMachine,
    /// The acknowledgement machine: events, completion jobs (re-read, completion request,
    /// advance) and the timer scan; its evaluations and advances run in the table engine.
    pub(crate) ack: AckMachine,
    /// The judgement of an acknowledgement event against the entry (Derive and Exec).
    ev: EventEvaluator,
    /// The per-QP CSR registers: a read's answer, a write's entry.
    csr: SqCsrAccess,
    /// A good BIND's TPT write, before its local completion goes on.
    bw: BindWriter,
}

impl SendQueueEngine {
    /// A send queue engine for `queue_pairs` queue pairs (QP indices `0..queue_pairs`).
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "SendQueueEngine: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        SendQueueEngine {
            clock: Default::default(),
            reset: Default::default(),
            cfg_node_id: Default::default(),
            cfg_retry_timeout: Default::default(),
            cfg_retry_limit: Default::default(),
            s_csr_valid: Default::default(),
            s_csr_ready: Default::default(),
            s_csr_write: Default::default(),
            s_csr_qp: Default::default(),
            s_csr_reg: Default::default(),
            s_csr_wdata: Default::default(),
            m_csr_rdata_valid: Default::default(),
            m_csr_rdata: Default::default(),
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
            m_cplrd_req_valid: Default::default(),
            m_cplrd_req_ready: Default::default(),
            m_cplrd_req_addr: Default::default(),
            m_cplrd_req_words: Default::default(),
            s_cplrd_data: Default::default(),
            s_cplrd_valid: Default::default(),
            s_cplrd_ready: Default::default(),
            s_cplrd_last: Default::default(),
            m_expect_valid: Default::default(),
            m_expect_ready: Default::default(),
            m_expect_qp: Default::default(),
            m_expect_psn: Default::default(),
            m_expect_addr: Default::default(),
            m_expect_length: Default::default(),
            m_expect_atomic: Default::default(),
            s_ack_valid: Default::default(),
            s_ack_ready: Default::default(),
            s_ack_qp: Default::default(),
            s_ack_psn: Default::default(),
            s_ack_syndrome: Default::default(),
            s_ack_response: Default::default(),
            s_ack_resync: Default::default(),
            m_cpl_valid: Default::default(),
            m_cpl_ready: Default::default(),
            m_cpl: Default::default(),
            stat_requests_sent: Default::default(),
            stat_retransmissions: Default::default(),
            m_bind_valid: Default::default(),
            m_bind_ready: Default::default(),
            m_bind: Default::default(),
            qp_table: QpTable::new(queue_pairs),
            grant: SqOpGrant::new(queue_pairs),
            dec: SqOpDecision::new(),
            csr_reg_reg: Default::default(),
            csr_wdata_reg: Default::default(),
            rdata_valid_reg: Default::default(),
            rdata_reg: Default::default(),
            retransmissions_reg: Default::default(),
            scheduler: Scheduler::new(queue_pairs),
            tm: TransmitMachine::new(),
            ack: AckMachine::new(queue_pairs),
            ev: EventEvaluator::new(SEND_WINDOW as usize),
            csr: SqCsrAccess::new(queue_pairs),
            bw: BindWriter::new(),
        }
    }
}

impl Default for SendQueueEngine {
    fn default() -> Self {
        Self::new(MAX_QUEUE_PAIRS)
    }
}

impl Logic for SendQueueEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            csr_reg_reg,
            csr_wdata_reg,
            rdata_valid_reg,
            rdata_reg,
            retransmissions_reg
        );
        self.qp_table.clock.next = self.clock.val();
        self.qp_table.reset.next = self.reset.val();
        self.scheduler.clock.next = self.clock.val();
        self.scheduler.reset.next = self.reset.val();

        // ---- Grants: CSR access, acknowledgement machine, transmit machine, timer scan ----
        self.grant.clock.next = self.clock.val();
        self.grant.reset.next = self.reset.val();
        self.grant.s_table_ready.next = self.qp_table.m_ready.val();
        self.grant.s_csr_valid.next = self.s_csr_valid.val();
        self.s_csr_ready.next = self.grant.s_csr_ready.val();
        self.grant.s_csr_write.next = self.s_csr_write.val();
        self.grant.s_csr_qp.next = self.s_csr_qp.val();
        self.grant.s_ak_valid.next = self.ack.m_req_valid.val();
        self.grant.s_ak_qp.next = self.ack.m_req_qp.val();
        self.grant.s_ak_advance.next = self.ack.m_req_advance.val();
        self.grant.s_tx_valid.next = self.tm.m_op_valid.val();
        self.grant.s_tx_qp.next = self.tm.m_op_qp.val();
        self.grant.s_tx_commit.next = self.tm.m_op_commit.val();
        self.grant.s_scan_valid.next = self.ack.m_scan_valid.val();
        self.grant.s_scan_qp.next = self.ack.m_scan_qp.val();
        self.grant.s_ak_offered.next = self.s_ack_valid.val() | self.bw.m_local_valid.val();
        if self.grant.m_grant_csr.val() {
            self.csr_reg_reg.d.next = self.s_csr_reg.val();
            self.csr_wdata_reg.d.next = self.s_csr_wdata.val().get_bits::<32>(0);
        }
        self.qp_table.s_rd_addr.next = self.grant.m_read_qp.val();

        // ---- The entry registered in the Read clock; the decision in the Exec clock ----
        self.dec.clock.next = self.clock.val();
        self.dec.reset.next = self.reset.val();
        self.dec.cfg_retry_timeout.next = self.cfg_retry_timeout.val();
        self.dec.cfg_retry_limit.next = self.cfg_retry_limit.val();
        self.dec.s_read.next = self.grant.m_state.val() == SqEngineState::Read;
        self.dec.s_rd_entry.next = self.qp_table.m_rd_entry.val();
        self.dec.s_rd_outstanding.next = self.qp_table.m_rd_outstanding.val();
        self.dec.s_rd_has_work.next = self.qp_table.m_rd_has_work.val();
        self.dec.s_rd_window_full.next = self.qp_table.m_rd_window_full.val();
        self.dec.s_exec.next = self.grant.m_exec.val();
        self.dec.s_op.next = self.grant.m_op.val();
        self.dec.s_qp_valid.next = self.grant.m_op_qp_valid.val();
        self.dec.s_csr_entry.next = self.csr.m_entry.val();
        self.dec.s_csr_qp_reset.next = self.csr.m_qp_reset.val();
        self.dec.s_csr_moved.next = self.csr.m_moved.val();
        self.dec.s_commit_psn.next = self.tm.m_commit_psn.val();
        self.dec.s_commit_stale.next = self.tm.m_commit_stale.val();
        self.dec.s_commit_need_empty.next = self.tm.m_commit_need_empty.val();
        self.dec.s_commit_local_only.next = self.tm.m_commit_local_only.val();
        self.dec.s_commit_needs_response.next = self.tm.m_commit_needs_response.val();
        self.dec.s_adv_idx.next = self.ack.m_adv_idx.val();
        self.dec.s_adv_stale.next = self.ack.m_adv_stale.val();
        self.dec.s_adv_set_resync.next = self.ack.m_adv_set_resync.val();
        // Whether the QP's sq_una is being transmitted, compared with the entry's read (the
        // QP of the operation is registered at its grant) and registered for the timer
        // check's Exec clock.
        self.dec.s_rd_on_una.next = self.tm.m_on_una.val();
        self.dec.s_ev_job_valid.next = self.ev.m_job_valid.val();
        self.dec.s_ev_job_succ.next = self.ev.m_job_succ.val();
        self.dec.s_ev_job_run_status.next = self.ev.m_job_run_status.val();
        self.dec.s_ev_job_final.next = self.ev.m_job_final.val();
        self.dec.s_ev_job_status.next = self.ev.m_job_status.val();
        self.dec.s_ev_job_resync.next = self.ev.m_job_resync.val();
        self.dec.s_ev_retx.next = self.ev.m_retx.val();
        self.dec.s_ev_restart.next = self.ev.m_restart.val();
        self.dec.s_ev_set_next.next = self.ev.m_set_next.val();
        self.dec.s_ev_next.next = self.ev.m_next.val();
        self.dec.s_ev_set_retry.next = self.ev.m_set_retry.val();
        self.dec.s_ev_retry.next = self.ev.m_retry.val();
        self.dec.s_ev_set_drain.next = self.ev.m_set_drain.val();
        // A CSR read answers three clocks after its grant.
        self.rdata_valid_reg.d.next = false;
        if self.grant.m_exec.val() & (self.grant.m_op.val() == SqOp::CsrRead) {
            self.rdata_valid_reg.d.next = true;
            self.rdata_reg.d.next = self.csr.m_rdata.val();
        }
        if self.dec.m_retx.val() {
            self.retransmissions_reg.d.next = self.retransmissions_reg.q.val() + 1;
        }
        // Write back the entry. The scheduler's eligibility bit follows two clocks later,
        // from the entry as written (registered: the PSN arithmetic of the decision and the
        // window test are in different clocks). Nothing else reads it; the transmit
        // machine, if it picks a QP in that clock, finds it ineligible at its claim.
        self.scheduler.s_wb_valid.next = self.grant.m_exec.val();
        self.scheduler.s_wb_qp.next = self.grant.m_op_qp.val();
        self.scheduler.s_wb_next.next = self.dec.m_wr.val().sq_next;
        self.scheduler.s_wb_una.next = self.dec.m_wr.val().sq_una;
        self.scheduler.s_wb_pi.next = self.dec.m_wr.val().sq_pi;
        self.scheduler.s_wb_ready.next = self.grant.m_op_qp_valid.val()
            & self.dec.m_wr.val().enable
            & !self.dec.m_wr.val().waiting;
        // The draining flag as written; the scheduler tests `una != next` from its
        // registered copies, the table engine at the next read.
        self.scheduler.s_wb_drain.next = self.dec.m_wr.val().draining;
        self.qp_table.s_wr_valid.next = self.grant.m_exec.val();
        self.qp_table.s_wr_addr.next = self.grant.m_op_qp.val();
        self.qp_table.s_wr_entry.next = self.dec.m_wr.val();

        // A DELAY's commit holds its QP (from the next clock; its drain already keeps the
        // QP out until the local completion, so no pick can come between).
        self.scheduler.s_hold_valid.next = self.grant.m_exec.val()
            & (self.grant.m_op.val() == SqOp::Commit)
            & self.dec.m_ok.val()
            & self.tm.m_commit_delay.val();
        self.scheduler.s_hold_qp.next = self.grant.m_op_qp.val();
        self.scheduler.s_hold_cycles.next = self.tm.m_delay_cycles.val();
        // A QP reset drops the QP's hold: the DELAY belonged to the ring the reset restarts.
        self.scheduler.s_drop_valid.next = self.dec.m_csr_qp_reset.val();
        self.scheduler.s_drop_qp.next = self.grant.m_op_qp.val();

        // ---- CSR registers (the entry as it would be written back unchanged) ----
        self.csr.s_qp_valid.next = self.grant.m_op_qp_valid.val();
        self.csr.s_reg.next = self.csr_reg_reg.q.val();
        self.csr.s_wdata.next = self.csr_wdata_reg.q.val();
        self.csr.s_entry.next = self.dec.m_kept.val();
        self.csr.s_now.next = self.dec.m_now.val();

        // ---- Event evaluator (its inputs are held through Derive and Exec) ----
        self.ev.clock.next = self.clock.val();
        self.ev.cfg_retry_limit.next = self.cfg_retry_limit.val();
        self.ev.s_qp_valid.next = self.grant.m_op_qp_valid.val();
        self.ev.s_una.next = self.dec.m_entry.val().sq_una;
        self.ev.s_next.next = self.dec.m_entry.val().sq_next;
        self.ev.s_pi.next = self.dec.m_entry.val().sq_pi;
        self.ev.s_retry.next = self.dec.m_entry.val().retry;
        self.ev.s_una_rsp.next = self.dec.m_entry.val().una_needs_response;
        self.ev.s_evt_psn.next = self.ack.m_evt_psn.val();
        self.ev.s_evt_syndrome.next = self.ack.m_evt_syndrome.val();
        self.ev.s_evt_response.next = self.ack.m_evt_response.val();
        self.ev.s_evt_resync.next = self.ack.m_evt_resync.val();
        self.ev.s_evt_local.next = self.ack.m_evt_local.val();
        self.ev.s_evt_local_status.next = self.ack.m_evt_local_status.val();

        // ---- Transmit machine ----
        self.tm.clock.next = self.clock.val();
        self.tm.reset.next = self.reset.val();
        self.tm.cfg_node_id.next = self.cfg_node_id.val();
        self.tm.s_pick_valid.next = self.scheduler.m_pick_valid.val();
        self.tm.s_pick_qp.next = self.scheduler.m_pick_qp.val();
        self.scheduler.s_pick_taken.next = self.tm.m_pick_taken.val();
        self.tm.s_op_grant.next = self.grant.m_grant_tx.val();
        self.tm.s_claim_done.next =
            self.grant.m_exec.val() & (self.grant.m_op.val() == SqOp::Claim);
        self.tm.s_commit_done.next =
            self.grant.m_exec.val() & (self.grant.m_op.val() == SqOp::Commit);
        self.tm.s_op_ok.next = self.dec.m_ok.val();
        self.tm.s_claim_psn.next = self.dec.m_entry.val().sq_next;
        self.tm.s_claim_addr.next = self.dec.m_wqe_addr.val();
        self.tm.s_claim_remote.next = self.dec.m_entry.val().remote;
        self.tm.s_commit_resync.next =
            self.dec.m_entry.val().resync & !self.dec.m_outstanding.val();
        self.tm.s_moved_valid.next = self.dec.m_csr_moved.val();
        self.tm.s_moved_qp.next = self.grant.m_op_qp.val();
        // (Compared in the Read clock, from the table's read data; registered by `dec`.)
        self.tm.s_una_qp.next = self.grant.m_op_qp.val();
        self.tm.s_una_psn.next = self.qp_table.m_rd_entry.val().sq_una;
        self.tm.m_local_ready.next = self.bw.s_local_ready.val();
        self.m_msg_valid.next = self.tm.m_msg_valid.val();
        self.tm.m_msg_ready.next = self.m_msg_ready.val();
        self.m_msg.next = self.tm.m_msg.val();
        self.m_payload_data.next = self.tm.m_payload_data.val();
        self.m_payload_valid.next = self.tm.m_payload_valid.val();
        self.tm.m_payload_ready.next = self.m_payload_ready.val();
        self.m_payload_last.next = self.tm.m_payload_last.val();
        self.m_txrd_req_valid.next = self.tm.m_txrd_req_valid.val();
        self.tm.m_txrd_req_ready.next = self.m_txrd_req_ready.val();
        self.m_txrd_req_addr.next = self.tm.m_txrd_req_addr.val();
        self.m_txrd_req_words.next = self.tm.m_txrd_req_words.val();
        self.tm.s_txrd_data.next = self.s_txrd_data.val();
        self.tm.s_txrd_valid.next = self.s_txrd_valid.val();
        self.s_txrd_ready.next = self.tm.s_txrd_ready.val();
        self.tm.s_txrd_last.next = self.s_txrd_last.val();
        self.m_expect_valid.next = self.tm.m_expect_valid.val();
        self.tm.m_expect_ready.next = self.m_expect_ready.val();
        self.m_expect_qp.next = self.tm.m_expect_qp.val();
        self.m_expect_psn.next = self.tm.m_expect_psn.val();
        self.m_expect_addr.next = self.tm.m_expect_addr.val();
        self.m_expect_length.next = self.tm.m_expect_length.val();
        self.m_expect_atomic.next = self.tm.m_expect_atomic.val();
        self.stat_requests_sent.next = self.tm.stat_requests_sent.val();

        // ---- Acknowledgement machine ----
        self.ack.clock.next = self.clock.val();
        self.ack.reset.next = self.reset.val();
        self.ack.s_ack_valid.next = self.s_ack_valid.val();
        self.s_ack_ready.next = self.ack.s_ack_ready.val();
        self.ack.s_ack_qp.next = self.s_ack_qp.val();
        self.ack.s_ack_psn.next = self.s_ack_psn.val();
        self.ack.s_ack_syndrome.next = self.s_ack_syndrome.val();
        self.ack.s_ack_response.next = self.s_ack_response.val();
        self.ack.s_ack_resync.next = self.s_ack_resync.val();
        // A local completion: a good BIND's TPT write first (`BindWriter`).
        self.bw.clock.next = self.clock.val();
        self.bw.reset.next = self.reset.val();
        self.bw.s_local_valid.next = self.tm.m_local_valid.val();
        self.bw.s_local_qp.next = self.tm.m_local_qp.val();
        self.bw.s_local_psn.next = self.tm.m_local_psn.val();
        self.bw.s_local_status.next = self.tm.m_local_status.val();
        self.bw.s_local_wqe.next = self.tm.m_local_wqe.val();
        self.m_bind_valid.next = self.bw.m_bind_valid.val();
        self.bw.m_bind_ready.next = self.m_bind_ready.val();
        self.m_bind.next = self.bw.m_bind.val();
        self.bw.m_local_ready.next = self.ack.s_local_ready.val();
        self.ack.s_local_valid.next = self.bw.m_local_valid.val();
        self.ack.s_local_qp.next = self.bw.m_local_qp.val();
        self.ack.s_local_psn.next = self.bw.m_local_psn.val();
        self.ack.s_local_status.next = self.bw.m_local_status.val();
        self.ack.s_grant.next = self.grant.m_grant_ak.val();
        self.ack.s_scan_preempted.next = self.grant.m_scan_preempted.val();
        self.ack.s_exec.next = self.grant.m_exec.val();
        self.ack.s_exec_ok.next = self.dec.m_ok.val();
        // A job starts from the entry just evaluated (timer or event).
        self.ack.s_job_valid.next = self.dec.m_has_job.val();
        self.ack.s_job_first.next = self.dec.m_entry.val().sq_una;
        self.ack.s_job_succ.next = self.dec.m_job_succ.val();
        self.ack.s_job_run_status.next = self.dec.m_job_run_status.val();
        self.ack.s_job_final.next = self.dec.m_job_final.val();
        self.ack.s_job_status.next = self.dec.m_job_status.val();
        self.ack.s_job_resync.next = self.dec.m_job_resync.val();
        self.ack.s_job_base.next = self.dec.m_entry.val().base;
        self.ack.s_job_size.next = self.dec.m_entry.val().size_log2;
        self.ack.s_job_remote.next = self.dec.m_entry.val().remote;
        self.ack.s_qp_reset_valid.next = self.dec.m_csr_qp_reset.val();
        self.ack.s_qp_reset_qp.next = self.grant.m_op_qp.val();
        self.m_cplrd_req_valid.next = self.ack.m_cplrd_req_valid.val();
        self.ack.m_cplrd_req_ready.next = self.m_cplrd_req_ready.val();
        self.m_cplrd_req_addr.next = self.ack.m_cplrd_req_addr.val();
        self.m_cplrd_req_words.next = self.ack.m_cplrd_req_words.val();
        self.ack.s_cplrd_data.next = self.s_cplrd_data.val();
        self.ack.s_cplrd_valid.next = self.s_cplrd_valid.val();
        self.s_cplrd_ready.next = self.ack.s_cplrd_ready.val();
        self.ack.s_cplrd_last.next = self.s_cplrd_last.val();
        self.m_cpl_valid.next = self.ack.m_cpl_valid.val();
        self.ack.m_cpl_ready.next = self.m_cpl_ready.val();
        self.m_cpl.next = self.ack.m_cpl.val();

        // ---- Outputs ----
        self.m_csr_rdata_valid.next = self.rdata_valid_reg.q.val();
        self.m_csr_rdata.next = self.rdata_reg.q.val();
        self.stat_retransmissions.next = self.retransmissions_reg.q.val();

        if self.reset.val() {
            self.retransmissions_reg.d.next = 0.into();
            self.rdata_valid_reg.d.next = false;
        }
    }
}

impl ClockedBlock for SendQueueEngine {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
