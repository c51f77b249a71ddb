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
//! - Message source: `m_msg_valid` / `m_msg_ready` with `m_msg_opcode` (8), `m_msg_dest_node`,
//!   `m_msg_src_node`, `m_msg_dest_qp`, `m_msg_src_qp` (16 each), `m_msg_psn` (24),
//!   `m_msg_length` (32), `m_msg_vaddr` (64), `m_msg_stag` (32), `m_msg_dma_length` (32),
//!   `m_msg_immediate` (32), `m_msg_has_immediate`, `m_msg_invalidate`, `m_msg_resync`;
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
//! - Completion requests: `m_cpl_valid` / `m_cpl_ready`, `m_cpl_opcode` (8), `m_cpl_status`
//!   (8), `m_cpl_qp` (6), `m_cpl_is_receive` (0), `m_cpl_has_immediate` (0),
//!   `m_cpl_byte_count` (32), `m_cpl_wqe_index` (24), `m_cpl_src_node` (16), `m_cpl_src_qp`
//!   (16), `m_cpl_wr_id` (64), `m_cpl_immediate` (0).
//! - Counters (32, wrapping, cleared by reset): `stat_requests_sent` (messages accepted on
//!   `m_msg_*`), `stat_retransmissions` (go-back-N events: retryable NACK or timeout).
//!
//! Structure: the per-QP state lives in the child block [`QpTable`]
//! (`requester/qp_table.rs`: one [`QpEntry`](crate::requester::QpEntry) per QP in six
//! 64-entry RAMs, synchronous read, cleared for 64 clocks after reset), owned by one
//! read-modify-write engine. An operation takes three clocks (grant and read; register the
//! values derived from the entry; decide and write back); the next one is granted while
//! one executes if it is for another QP, so they follow every two clocks, and a timer
//! scan that is still reading gives way to a CSR access or a transmit operation. By
//! priority:
//! CSR access, acknowledgement handling, transmit, timer scan; a CSR access right after
//! another one yields to a waiting acknowledgement or transmit operation, so a driver
//! programming queue pairs does not stall the traffic of those it has already programmed. Besides the CSR port, two
//! machines use it:
//! - transmit: take the pick of the child block [`Scheduler`] (`requester/scheduler.rs`:
//!   round robin over the QPs whose eligibility bit is set, bits it keeps in step with the
//!   table's write-backs: enabled, `sq_next != sq_pi`, fewer than `SEND_WINDOW`
//!   outstanding, not waiting, not draining), claim (read), fetch the WQE through the
//!   child block [`WqeFetch`] (`requester/wqe_fetch.rs`: one burst of 8 words; a WQE
//!   that uses only words 0-4, every one but an atomic or an inline SEND over 8 bytes,
//!   goes on to its commit after word 4 while words 5-7 drain, and no read is requested
//!   before they have), validate, commit (re-check and
//!   `sq_next++` atomically), then the expect
//!   event, the message and the payload, read by one DMA burst into the child block
//!   [`PayloadBuffer`] (`requester/payload_buffer.rs`: 16 words), from which it streams
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
//!   (0x0D: its ordering is the NIC's part, the driver applies the binding at its
//!   completion) and a DELAY (0x0E), which also holds the QP in the [`Scheduler`] for
//!   its cycle count (word 3 bits 23:0; higher bits set: LOCAL_LENGTH_ERROR, no hold)
//!   from its commit, so the QP's next WQE waits while the others are served;
//! - acknowledgement: takes one `s_ack` event at a time (or a local completion from the
//!   transmit machine), evaluates it against `[sq_una, sq_next)`, then per completed WQE
//!   re-reads words 0-1 on the rx-port client, issues the completion request and advances
//!   `sq_una`; it never waits on the transmit path. When idle it scans one QP's timer per
//!   operation.
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
//! registered in the Read clock beside `ev_restarted` (not behind `ev_hit`).
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
//! progress; its first completion request follows 8 + L clocks later (11), each further
//! one about 9 + L clocks after the previous one is accepted. A timeout fires between
//! `cfg_retry_timeout` and `cfg_retry_timeout + 3 * queue_pairs` clocks (more when the
//! table engine is busy) after the QP's last progress or the end of `sq_una`'s transmission.
//! Throughput: payload one word per clock, without bubbles. Short messages follow each
//! other as fast as the tx read port serves one WQE burst (words 0-4) and one payload
//! burst per message, the next WQE's words behind the payload's: every 18 clocks with a
//! one-word payload (`latency_figures`), `L + 16` with an 8-word payload (see
//! `docs/nic-blocks.md`, "Message rate of short messages").
//! Each table operation takes three clocks so that the entry's PSN arithmetic and the
//! decision it feeds are in different clocks.
//! Limits: `queue_pairs` in 1..=64; one WQE in the transmit machine, the payload of the
//! message before it in the payload buffer;
//! `SEND_WINDOW` (8) unacknowledged messages per QP; messages up to 65536 bytes (one
//! payload burst of at most 8192 words).

use crate::requester::payload_buffer::PAYLOAD_BUFFER_DEPTH;
use crate::requester::{PayloadBuffer, QpTable, Scheduler, WqeFetch};
use crate::sim::ClockedBlock;
use nic_abi::{
    CompletionStatus, Syndrome, WqeOpcode, BIND_OPCODE, DELAY_CYCLES_MASK, DELAY_OPCODE,
    INLINE_MAX_BYTES, MAX_MESSAGE_LENGTH, MAX_QUEUE_PAIRS, NOP_OPCODE, SEND_WINDOW,
};
use rust_hdl::prelude::*;

pub use crate::requester::qp_table::QP_TABLE_ADDRESS_BITS;

/// The table engine's state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqEngineState {
    /// Granting the next operation (its QP's entry is read at the clock edge), once the
    /// per-QP table has been cleared after reset.
    Idle,
    /// The entry is valid: the values derived from it (PSN distances, the event's
    /// classification, eligibility, the WQE address, timer expiry) are registered.
    Read,
    /// Executing the granted operation from those registers; entry written back.
    Exec,
}

/// Operations of the table engine.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqOp {
    CsrRead,
    CsrWrite,
    /// Transmit: read the QP to fetch the WQE at `sq_next`.
    Claim,
    /// Transmit: re-check and take PSN `sq_next` (or mark the QP draining).
    Commit,
    /// Acknowledgement event (or local completion) against `[sq_una, sq_next)`.
    Eval,
    /// One WQE completed: `sq_una++`.
    Advance,
    /// Retry timer check of one QP.
    Timer,
}

/// The transmit machine's state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqTxState {
    Idle,
    ClaimReq,
    ClaimWait,
    FetchReq,
    FetchData,
    CommitReq,
    CommitWait,
    /// Handing a bad WQE's local completion to the acknowledgement machine.
    Local,
    Expect,
    Msg,
    /// Requesting the payload read (into the payload buffer; the machine goes on once the
    /// request is taken).
    PayloadReq,
    /// Streaming an inline SEND's payload from the fetched WQE.
    Inline,
    Atomic0,
    Atomic1,
}

/// The acknowledgement (completion) machine's state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqAckState {
    Idle,
    TimerWait,
    EvalReq,
    EvalWait,
    ReadReq,
    ReadData,
    Cpl,
    AdvReq,
    AdvWait,
}

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
    pub m_msg_opcode: Signal<Out, Bits<8>>,
    pub m_msg_dest_node: Signal<Out, Bits<16>>,
    pub m_msg_src_node: Signal<Out, Bits<16>>,
    pub m_msg_dest_qp: Signal<Out, Bits<16>>,
    pub m_msg_src_qp: Signal<Out, Bits<16>>,
    pub m_msg_psn: Signal<Out, Bits<24>>,
    pub m_msg_length: Signal<Out, Bits<32>>,
    pub m_msg_vaddr: Signal<Out, Bits<64>>,
    pub m_msg_stag: Signal<Out, Bits<32>>,
    pub m_msg_dma_length: Signal<Out, Bits<32>>,
    pub m_msg_immediate: Signal<Out, Bits<32>>,
    pub m_msg_has_immediate: Signal<Out, Bit>,
    pub m_msg_invalidate: Signal<Out, Bit>,
    pub m_msg_resync: Signal<Out, Bit>,
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
    pub m_cpl_opcode: Signal<Out, Bits<8>>,
    pub m_cpl_status: Signal<Out, Bits<8>>,
    pub m_cpl_qp: Signal<Out, Bits<6>>,
    pub m_cpl_is_receive: Signal<Out, Bit>,
    pub m_cpl_has_immediate: Signal<Out, Bit>,
    pub m_cpl_byte_count: Signal<Out, Bits<32>>,
    pub m_cpl_wqe_index: Signal<Out, Bits<24>>,
    pub m_cpl_src_node: Signal<Out, Bits<16>>,
    pub m_cpl_src_qp: Signal<Out, Bits<16>>,
    pub m_cpl_wr_id: Signal<Out, Bits<64>>,
    pub m_cpl_immediate: Signal<Out, Bits<32>>,
    // Counters.
    pub stat_requests_sent: Signal<Out, Bits<32>>,
    pub stat_retransmissions: Signal<Out, Bits<32>>,
    /// The per-QP table (six RAMs read and written together; cleared after reset).
    qp_table: QpTable,
    // Table engine.
    eng_state: DFF<SqEngineState>,
    op: DFF<SqOp>,
    op_qp: DFF<Bits<6>>,
    csr_reg_reg: DFF<Bits<4>>,
    csr_wdata_reg: DFF<Bits<32>>,
    rdata_valid_reg: DFF<Bit>,
    rdata_reg: DFF<Bits<64>>,
    /// Free-running cycle counter (the timers' time base).
    now: DFF<Bits<32>>,
    requests_reg: DFF<Bits<32>>,
    retransmissions_reg: DFF<Bits<32>>,
    /// Which QP the transmit machine serves next (eligibility bits and round robin).
    scheduler: Scheduler,
    // Transmit machine.
    tx_state: DFF<SqTxState>,
    tx_qp: DFF<Bits<6>>,
    tx_psn: DFF<Bits<24>>,
    tx_wqe_addr: DFF<Bits<32>>,
    tx_remote: DFF<Bits<32>>,
    tx_resync: DFF<Bit>,
    /// The claimed QP was reset or its ring moved (CSR write) since the claim.
    tx_stale: DFF<Bit>,
    tx_beat: DFF<Bits<3>>,
    /// The WQE fetch: the read of the WQE's words into its fields (words 5-7 only when
    /// the WQE uses them) and their hand-off.
    fetch: WqeFetch,
    /// The payload words read from host memory, on their way to `m_payload_*`.
    payload_buffer: PayloadBuffer,
    /// The payload read's burst is arriving (its words go to the payload buffer).
    pl_busy: DFF<Bit>,
    /// A message's payload read has been requested and its last word has not yet left on
    /// `m_payload_*` (the message of `pl_qp`, `pl_psn` is still being transmitted).
    pl_streaming: DFF<Bit>,
    pl_qp: DFF<Bits<6>>,
    pl_psn: DFF<Bits<24>>,
    /// The arriving payload is longer than the payload buffer: it holds the read client
    /// until its burst ends, so the next pick waits for that (a pick made now could be
    /// thousands of clocks stale when its WQE can be read).
    pl_long: DFF<Bit>,
    /// The transmit machine's message had its payload requested before its grant (it
    /// fits the buffer): its words wait in the buffer until the message is taken.
    tx_early: DFF<Bit>,
    /// The WQE being committed reads a payload that fits the buffer: it is requested
    /// before the message is offered.
    pl_early: Signal<Local, Bit>,
    /// The payload buffer's words may go out (not those of a message read early and not
    /// yet taken).
    pl_out_ok: Signal<Local, Bit>,
    /// The transmit machine may take the scheduler's pick (idle, and no long payload
    /// burst arriving).
    tx_pick_ok: Signal<Local, Bit>,
    payload_buffer_depth: Constant<Bits<16>>,
    // Acknowledgement machine.
    ak_state: DFF<SqAckState>,
    ak_qp: DFF<Bits<6>>,
    ak_psn: DFF<Bits<24>>,
    ak_syn: DFF<Bits<8>>,
    ak_resp: DFF<Bit>,
    /// The event carried RESYNC (the responder restarted at `ak_psn`).
    ak_resync: DFF<Bit>,
    ak_local: DFF<Bit>,
    ak_local_status: DFF<Bits<8>>,
    /// The job's QP was reset (CSR write) since the job started.
    ak_stale: DFF<Bit>,
    tscan: DFF<Bits<6>>,
    job_idx: DFF<Bits<24>>,
    /// Completions of the job's leading run (before the final one), with `job_run_status`.
    job_succ: DFF<Bits<4>>,
    /// Status of the leading run: success, or RESPONDER_RESTARTED.
    job_run_status: DFF<Bits<8>>,
    job_final: DFF<Bit>,
    job_status: DFF<Bits<8>>,
    job_resync: DFF<Bit>,
    job_base: DFF<Bits<32>>,
    job_size: DFF<Bits<5>>,
    job_remote: DFF<Bits<32>>,
    cpl_beat: DFF<Bit>,
    cpl_opcode: DFF<Bits<8>>,
    cpl_len: DFF<Bits<32>>,
    cpl_wr_id: DFF<Bits<64>>,
    // Read stage: values derived from the entry, registered for the Exec clock (the
    // engine's timing cut between the table read and the decision).
    rd_eligible_reg: DFF<Bit>,
    rd_outstanding_reg: DFF<Bit>,
    rd_wqe_addr_reg: DFF<Bits<32>>,
    ev_hit_reg: DFF<Bit>,
    ev_ahead_reg: DFF<Bit>,
    ev_foreign_reg: DFF<Bit>,
    ev_restarted_reg: DFF<Bit>,
    /// The retry count after a retry event.
    retry_new_reg: DFF<Bits<4>>,
    retry_exceeded_reg: DFF<Bit>,
    /// The stored retry count + 1 (never cleared first) and whether it exceeds the limit:
    /// for a go-back to sq_una that completes nothing (foreign NACK, implied NAK).
    retry_kept_reg: DFF<Bits<4>>,
    retry_kept_exceeded_reg: DFF<Bit>,
    /// An implied NAK (see `ev_implied`).
    ev_implied_reg: DFF<Bit>,
    /// `(event PSN - sq_una) mod 16`: the WQEs the event completes before its own PSN.
    evt_run_reg: DFF<Bits<4>>,
    /// The QP's retry timer has expired (as of the Exec clock).
    timer_expired_reg: DFF<Bit>,
    // The fetched WQE's class, registered for the commit (its words are stable from the
    // clock before the commit is requested).
    wqe_local_only_reg: DFF<Bit>,
    /// A good DELAY: its commit holds the QP in the scheduler.
    delay_ok_reg: DFF<Bit>,
    need_empty_reg: DFF<Bit>,
    /// A READ or an atomic: the QP waits for the response.
    needs_response_reg: DFF<Bit>,
    // Combinational: the entry read.
    rd_base: Signal<Local, Bits<32>>,
    rd_remote: Signal<Local, Bits<32>>,
    rd_pi: Signal<Local, Bits<24>>,
    rd_size: Signal<Local, Bits<5>>,
    rd_next: Signal<Local, Bits<24>>,
    rd_enable: Signal<Local, Bit>,
    rd_resync: Signal<Local, Bit>,
    rd_waiting: Signal<Local, Bit>,
    rd_drain: Signal<Local, Bit>,
    rd_retry: Signal<Local, Bits<4>>,
    rd_una: Signal<Local, Bits<24>>,
    /// Bit 24 of the sq_una entry: sq_una is a READ or atomic already sent.
    rd_una_rsp: Signal<Local, Bit>,
    rd_tstart: Signal<Local, Bits<32>>,
    rd_outstanding: Signal<Local, Bit>,
    rd_eligible: Signal<Local, Bit>,
    rd_mask: Signal<Local, Bits<24>>,
    rd_slot: Signal<Local, Bits<24>>,
    rd_wqe_addr: Signal<Local, Bits<32>>,
    qp_valid: Signal<Local, Bit>,
    d_out: Signal<Local, Bits<24>>,
    /// `sq_pi - sq_una`.
    d_posted: Signal<Local, Bits<24>>,
    /// PSNs that can have been sent and not yet completed: `min(sq_pi - sq_una, SEND_WINDOW)`.
    /// The event is for a PSN at or after `sq_next` (sent before a go-back).
    ev_ahead: Signal<Local, Bit>,
    d_evt: Signal<Local, Bits<24>>,
    elapsed: Signal<Local, Bits<32>>,
    next_p1: Signal<Local, Bits<24>>,
    una_p1: Signal<Local, Bits<24>>,
    psn_p1: Signal<Local, Bits<24>>,
    job_idx_p1: Signal<Local, Bits<24>>,
    /// The event completes WQEs: the retry count restarts from 0.
    retry_cleared: Signal<Local, Bit>,
    /// The stored retry count + 1.
    retry_inc: Signal<Local, Bits<5>>,
    retry_new: Signal<Local, Bits<4>>,
    retry_exceeded: Signal<Local, Bit>,
    ev_success: Signal<Local, Bit>,
    ev_retry: Signal<Local, Bit>,
    ev_hit: Signal<Local, Bit>,
    /// A retryable NACK for a PSN more than `SEND_WINDOW` from `sq_una` (the responder
    /// expects a PSN this QP cannot have sent lately): go back to `sq_una`.
    ev_foreign: Signal<Local, Bit>,
    /// The event carries RESYNC for a PSN after `sq_una`.
    ev_restarted: Signal<Local, Bit>,
    /// Implied NAK: sq_una is a READ or atomic already sent, and the event is an ACK, or
    /// a NACK for a later PSN, without RESYNC for a later PSN: the responder executed it,
    /// its response was lost; the event completes nothing, the QP goes back to sq_una.
    ev_implied: Signal<Local, Bit>,
    csr_value: Signal<Local, Bits<64>>,
    /// The engine executes an operation this clock.
    exec_now: Signal<Local, Bit>,
    /// A timer scan is reading: a CSR access or a transmit operation may take its place.
    timer_preemptible: Signal<Local, Bit>,
    /// It did (the acknowledgement machine goes back to Idle; the scan retries the QP).
    timer_preempted: Signal<Local, Bit>,
    /// The QP of the operation the priority order picks this clock.
    next_qp: Signal<Local, Bits<6>>,
    /// An operation executes and the next one is for another QP: grant it now.
    overlap_ok: Signal<Local, Bit>,
    /// `now + 1`: the cycle counter as of the next clock.
    now_p1: Signal<Local, Bits<32>>,
    timer_expired: Signal<Local, Bit>,
    // Combinational: the fetched WQE.
    op_known: Signal<Local, Bit>,
    op_read: Signal<Local, Bit>,
    op_atomic: Signal<Local, Bit>,
    op_rdma: Signal<Local, Bit>,
    op_imm: Signal<Local, Bit>,
    len_ok: Signal<Local, Bit>,
    addr_ok: Signal<Local, Bit>,
    wqe_status: Signal<Local, Bits<8>>,
    wqe_bad: Signal<Local, Bit>,
    op_nop: Signal<Local, Bit>,
    /// Local operations besides the NOP: BIND RKEY and DELAY.
    op_bind: Signal<Local, Bit>,
    op_delay: Signal<Local, Bit>,
    /// A DELAY's cycle count fits `DELAY_CYCLES_BITS` (word 3's other bits are zero).
    delay_fits: Signal<Local, Bit>,
    /// The WQE completes locally, without a message: a bad WQE, a NOP, a BIND or a DELAY.
    wqe_local_only: Signal<Local, Bit>,
    op_send: Signal<Local, Bit>,
    inline_data: Signal<Local, Bits<64>>,
    need_empty: Signal<Local, Bit>,
    msg_length: Signal<Local, Bits<32>>,
    len_round: Signal<Local, Bits<16>>,
    // Combinational: requests and grants.
    tx_req: Signal<Local, Bit>,
    tx_req_op: Signal<Local, SqOp>,
    tx_streaming: Signal<Local, Bit>,
    /// The operation's QP has its `sq_una` being transmitted (the transmit machine's
    /// message, or the one whose payload streams from the payload buffer).
    tx_on_una: Signal<Local, Bit>,
    local_take: Signal<Local, Bit>,
    ak_req_hi: Signal<Local, Bit>,
    ak_req_lo: Signal<Local, Bit>,
    ak_req_op: Signal<Local, SqOp>,
    grant_csr: Signal<Local, Bit>,
    /// The last operation granted was a CSR access.
    csr_granted_last: DFF<Bit>,
    /// A waiting machine goes before this CSR access.
    csr_yield: Signal<Local, Bit>,
    grant_tx: Signal<Local, Bit>,
    grant_ak: Signal<Local, Bit>,
    read_qp: Signal<Local, Bits<6>>,
    // Combinational: the acknowledgement job.
    cur_status: Signal<Local, Bits<8>>,
    cur_set_resync: Signal<Local, Bit>,
    job_more: Signal<Local, Bit>,
    ak_mask: Signal<Local, Bits<24>>,
    ak_slot: Signal<Local, Bits<24>>,
    ak_addr: Signal<Local, Bits<32>>,
    // Combinational: results of the operation being executed.
    ex_ok: Signal<Local, Bit>,
    ex_retx: Signal<Local, Bit>,
    ex_job_valid: Signal<Local, Bit>,
    ex_job_succ: Signal<Local, Bits<4>>,
    ex_job_run_status: Signal<Local, Bits<8>>,
    ex_job_final: Signal<Local, Bit>,
    ex_job_status: Signal<Local, Bits<8>>,
    ex_job_resync: Signal<Local, Bit>,
    ex_has_job: Signal<Local, Bit>,
    // Combinational: the entry written back.
    wr_base: Signal<Local, Bits<32>>,
    wr_remote: Signal<Local, Bits<32>>,
    wr_pi: Signal<Local, Bits<24>>,
    wr_size: Signal<Local, Bits<5>>,
    wr_next: Signal<Local, Bits<24>>,
    wr_enable: Signal<Local, Bit>,
    wr_resync: Signal<Local, Bit>,
    wr_waiting: Signal<Local, Bit>,
    wr_drain: Signal<Local, Bit>,
    wr_retry: Signal<Local, Bits<4>>,
    wr_una: Signal<Local, Bits<24>>,
    wr_una_rsp: Signal<Local, Bit>,
    wr_tstart: Signal<Local, Bits<32>>,
    wr_drain_kept: Signal<Local, Bit>,
    // Constants.
    num_qps: Constant<Bits<7>>,
    last_qp: Constant<Bits<6>>,
    ones24: Constant<Bits<24>>,
    send_window: Constant<Bits<24>>,
    /// `2^24 - SEND_WINDOW`: an event PSN distance at or above it lies at most
    /// `SEND_WINDOW` before `sq_una`.
    window_before: Constant<Bits<24>>,
    max_length: Constant<Bits<32>>,
    inline_max: Constant<Bits<32>>,
    syn_sequence: Constant<Bits<8>>,
    syn_port_down: Constant<Bits<8>>,
    syn_crc: Constant<Bits<8>>,
    opc_send: Constant<Bits<8>>,
    opc_send_imm: Constant<Bits<8>>,
    opc_nop: Constant<Bits<8>>,
    opc_bind: Constant<Bits<8>>,
    opc_delay: Constant<Bits<8>>,
    /// Word 3 bits a DELAY must leave zero (above `DELAY_CYCLES_BITS`).
    delay_high: Constant<Bits<64>>,
    opc_write: Constant<Bits<8>>,
    opc_write_imm: Constant<Bits<8>>,
    opc_read: Constant<Bits<8>>,
    opc_cas: Constant<Bits<8>>,
    opc_faa: Constant<Bits<8>>,
    st_length: Constant<Bits<8>>,
    st_retry: Constant<Bits<8>>,
    st_address: Constant<Bits<8>>,
    st_opcode: Constant<Bits<8>>,
    st_restarted: Constant<Bits<8>>,
}

/// `Bits<N>` constant from a `u64`.
fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.to_bits())
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
            m_msg_opcode: Default::default(),
            m_msg_dest_node: Default::default(),
            m_msg_src_node: Default::default(),
            m_msg_dest_qp: Default::default(),
            m_msg_src_qp: Default::default(),
            m_msg_psn: Default::default(),
            m_msg_length: Default::default(),
            m_msg_vaddr: Default::default(),
            m_msg_stag: Default::default(),
            m_msg_dma_length: Default::default(),
            m_msg_immediate: Default::default(),
            m_msg_has_immediate: Default::default(),
            m_msg_invalidate: Default::default(),
            m_msg_resync: Default::default(),
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
            m_cpl_opcode: Default::default(),
            m_cpl_status: Default::default(),
            m_cpl_qp: Default::default(),
            m_cpl_is_receive: Default::default(),
            m_cpl_has_immediate: Default::default(),
            m_cpl_byte_count: Default::default(),
            m_cpl_wqe_index: Default::default(),
            m_cpl_src_node: Default::default(),
            m_cpl_src_qp: Default::default(),
            m_cpl_wr_id: Default::default(),
            m_cpl_immediate: Default::default(),
            stat_requests_sent: Default::default(),
            stat_retransmissions: Default::default(),
            qp_table: QpTable::new(),
            eng_state: Default::default(),
            op: Default::default(),
            op_qp: Default::default(),
            csr_reg_reg: Default::default(),
            csr_wdata_reg: Default::default(),
            rdata_valid_reg: Default::default(),
            rdata_reg: Default::default(),
            now: Default::default(),
            requests_reg: Default::default(),
            retransmissions_reg: Default::default(),
            scheduler: Scheduler::new(queue_pairs),
            tx_state: Default::default(),
            tx_qp: Default::default(),
            tx_psn: Default::default(),
            tx_wqe_addr: Default::default(),
            tx_remote: Default::default(),
            tx_resync: Default::default(),
            tx_stale: Default::default(),
            tx_beat: Default::default(),
            fetch: WqeFetch::new(),
            payload_buffer: PayloadBuffer::new(),
            pl_busy: Default::default(),
            pl_streaming: Default::default(),
            pl_qp: Default::default(),
            pl_psn: Default::default(),
            pl_long: Default::default(),
            tx_early: Default::default(),
            pl_early: Default::default(),
            pl_out_ok: Default::default(),
            tx_pick_ok: Default::default(),
            payload_buffer_depth: k(PAYLOAD_BUFFER_DEPTH as u64),
            ak_state: Default::default(),
            ak_qp: Default::default(),
            ak_psn: Default::default(),
            ak_syn: Default::default(),
            ak_resp: Default::default(),
            ak_resync: Default::default(),
            ak_local: Default::default(),
            ak_local_status: Default::default(),
            ak_stale: Default::default(),
            tscan: Default::default(),
            job_idx: Default::default(),
            job_succ: Default::default(),
            job_run_status: Default::default(),
            job_final: Default::default(),
            job_status: Default::default(),
            job_resync: Default::default(),
            job_base: Default::default(),
            job_size: Default::default(),
            job_remote: Default::default(),
            cpl_beat: Default::default(),
            cpl_opcode: Default::default(),
            cpl_len: Default::default(),
            cpl_wr_id: Default::default(),
            rd_base: Default::default(),
            rd_remote: Default::default(),
            rd_pi: Default::default(),
            rd_size: Default::default(),
            rd_next: Default::default(),
            rd_enable: Default::default(),
            rd_resync: Default::default(),
            rd_waiting: Default::default(),
            rd_drain: Default::default(),
            rd_retry: Default::default(),
            rd_una: Default::default(),
            rd_una_rsp: Default::default(),
            rd_tstart: Default::default(),
            rd_outstanding: Default::default(),
            rd_eligible: Default::default(),
            rd_eligible_reg: Default::default(),
            rd_outstanding_reg: Default::default(),
            rd_wqe_addr_reg: Default::default(),
            ev_hit_reg: Default::default(),
            ev_ahead_reg: Default::default(),
            ev_foreign_reg: Default::default(),
            ev_restarted_reg: Default::default(),
            retry_new_reg: Default::default(),
            retry_exceeded_reg: Default::default(),
            retry_kept_reg: Default::default(),
            retry_kept_exceeded_reg: Default::default(),
            ev_implied_reg: Default::default(),
            evt_run_reg: Default::default(),
            timer_expired_reg: Default::default(),
            wqe_local_only_reg: Default::default(),
            delay_ok_reg: Default::default(),
            need_empty_reg: Default::default(),
            needs_response_reg: Default::default(),
            exec_now: Default::default(),
            timer_preemptible: Default::default(),
            timer_preempted: Default::default(),
            next_qp: Default::default(),
            overlap_ok: Default::default(),
            now_p1: Default::default(),
            timer_expired: Default::default(),
            rd_mask: Default::default(),
            rd_slot: Default::default(),
            rd_wqe_addr: Default::default(),
            qp_valid: Default::default(),
            d_out: Default::default(),
            d_posted: Default::default(),
            ev_ahead: Default::default(),
            d_evt: Default::default(),
            elapsed: Default::default(),
            next_p1: Default::default(),
            una_p1: Default::default(),
            psn_p1: Default::default(),
            job_idx_p1: Default::default(),
            retry_cleared: Default::default(),
            retry_inc: Default::default(),
            retry_new: Default::default(),
            retry_exceeded: Default::default(),
            ev_success: Default::default(),
            ev_retry: Default::default(),
            ev_hit: Default::default(),
            ev_foreign: Default::default(),
            ev_restarted: Default::default(),
            ev_implied: Default::default(),
            csr_value: Default::default(),
            op_known: Default::default(),
            op_read: Default::default(),
            op_atomic: Default::default(),
            op_rdma: Default::default(),
            op_imm: Default::default(),
            len_ok: Default::default(),
            addr_ok: Default::default(),
            wqe_status: Default::default(),
            wqe_bad: Default::default(),
            op_nop: Default::default(),
            op_bind: Default::default(),
            op_delay: Default::default(),
            delay_fits: Default::default(),
            wqe_local_only: Default::default(),
            op_send: Default::default(),
            inline_data: Default::default(),
            need_empty: Default::default(),
            msg_length: Default::default(),
            len_round: Default::default(),
            tx_req: Default::default(),
            tx_req_op: Default::default(),
            tx_streaming: Default::default(),
            tx_on_una: Default::default(),
            local_take: Default::default(),
            ak_req_hi: Default::default(),
            ak_req_lo: Default::default(),
            ak_req_op: Default::default(),
            grant_csr: Default::default(),
            csr_granted_last: Default::default(),
            csr_yield: Default::default(),
            grant_tx: Default::default(),
            grant_ak: Default::default(),
            read_qp: Default::default(),
            cur_status: Default::default(),
            cur_set_resync: Default::default(),
            job_more: Default::default(),
            ak_mask: Default::default(),
            ak_slot: Default::default(),
            ak_addr: Default::default(),
            ex_ok: Default::default(),
            ex_retx: Default::default(),
            ex_job_valid: Default::default(),
            ex_job_succ: Default::default(),
            ex_job_run_status: Default::default(),
            ex_job_final: Default::default(),
            ex_job_status: Default::default(),
            ex_job_resync: Default::default(),
            ex_has_job: Default::default(),
            wr_base: Default::default(),
            wr_remote: Default::default(),
            wr_pi: Default::default(),
            wr_size: Default::default(),
            wr_next: Default::default(),
            wr_enable: Default::default(),
            wr_resync: Default::default(),
            wr_waiting: Default::default(),
            wr_drain: Default::default(),
            wr_retry: Default::default(),
            wr_una: Default::default(),
            wr_una_rsp: Default::default(),
            wr_tstart: Default::default(),
            wr_drain_kept: Default::default(),
            num_qps: k(queue_pairs as u64),
            last_qp: k(queue_pairs as u64 - 1),
            ones24: k(0xFF_FFFF),
            send_window: k(SEND_WINDOW as u64),
            window_before: k((1 << 24) - SEND_WINDOW as u64),
            max_length: k(MAX_MESSAGE_LENGTH as u64),
            inline_max: k(INLINE_MAX_BYTES as u64),
            syn_sequence: k(Syndrome::SequenceError as u64),
            syn_port_down: k(Syndrome::PortDown as u64),
            syn_crc: k(Syndrome::CrcOrMalformed as u64),
            opc_send: k(WqeOpcode::Send as u64),
            opc_send_imm: k(WqeOpcode::SendImmediate as u64),
            opc_nop: k(NOP_OPCODE as u64),
            opc_bind: k(BIND_OPCODE as u64),
            opc_delay: k(DELAY_OPCODE as u64),
            delay_high: k(!DELAY_CYCLES_MASK),
            opc_write: k(WqeOpcode::RdmaWrite as u64),
            opc_write_imm: k(WqeOpcode::RdmaWriteImmediate as u64),
            opc_read: k(WqeOpcode::RdmaRead as u64),
            opc_cas: k(WqeOpcode::AtomicCompareSwap as u64),
            opc_faa: k(WqeOpcode::AtomicFetchAdd as u64),
            st_length: k(CompletionStatus::LOCAL_LENGTH_ERROR as u64),
            st_retry: k(CompletionStatus::RETRY_EXCEEDED as u64),
            st_address: k(CompletionStatus::LOCAL_ADDRESS_ERROR as u64),
            st_opcode: k(CompletionStatus::BAD_OPCODE as u64),
            st_restarted: k(CompletionStatus::RESPONDER_RESTARTED as u64),
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
            eng_state,
            rd_eligible_reg,
            rd_outstanding_reg,
            rd_wqe_addr_reg,
            ev_hit_reg,
            ev_ahead_reg,
            ev_foreign_reg,
            ev_restarted_reg,
            retry_new_reg,
            retry_exceeded_reg,
            retry_kept_reg,
            retry_kept_exceeded_reg,
            ev_implied_reg,
            evt_run_reg,
            timer_expired_reg,
            wqe_local_only_reg,
            delay_ok_reg,
            need_empty_reg,
            needs_response_reg,
            op,
            op_qp,
            csr_granted_last,
            csr_reg_reg,
            csr_wdata_reg,
            rdata_valid_reg,
            rdata_reg,
            now,
            requests_reg,
            retransmissions_reg,
            tx_state,
            tx_qp,
            tx_psn,
            tx_wqe_addr,
            tx_remote,
            tx_resync,
            tx_stale,
            tx_beat,
            pl_busy,
            pl_streaming,
            pl_qp,
            pl_psn,
            pl_long,
            tx_early,
            ak_state,
            ak_qp,
            ak_psn,
            ak_syn,
            ak_resp,
            ak_resync,
            ak_local,
            ak_local_status,
            ak_stale,
            tscan,
            job_idx,
            job_succ,
            job_run_status,
            job_final,
            job_status,
            job_resync,
            job_base,
            job_size,
            job_remote,
            cpl_beat,
            cpl_opcode,
            cpl_len,
            cpl_wr_id
        );
        self.qp_table.clock.next = self.clock.val();
        self.qp_table.reset.next = self.reset.val();
        self.scheduler.clock.next = self.clock.val();
        self.scheduler.reset.next = self.reset.val();
        self.now_p1.next = self.now.q.val() + 1;
        self.now.d.next = self.now_p1.val();
        self.exec_now.next = self.eng_state.q.val() == SqEngineState::Exec;

        // ---- The entry read last clock (valid while the engine executes) ----
        self.rd_base.next = self.qp_table.m_rd_entry.val().base;
        self.rd_remote.next = self.qp_table.m_rd_entry.val().remote;
        self.rd_pi.next = self.qp_table.m_rd_entry.val().sq_pi;
        self.rd_size.next = self.qp_table.m_rd_entry.val().size_log2;
        self.rd_next.next = self.qp_table.m_rd_entry.val().sq_next;
        self.rd_enable.next = self.qp_table.m_rd_entry.val().enable;
        self.rd_resync.next = self.qp_table.m_rd_entry.val().resync;
        self.rd_waiting.next = self.qp_table.m_rd_entry.val().waiting;
        self.rd_drain.next = self.qp_table.m_rd_entry.val().draining;
        self.rd_retry.next = self.qp_table.m_rd_entry.val().retry;
        self.rd_una.next = self.qp_table.m_rd_entry.val().sq_una;
        self.rd_una_rsp.next = self.qp_table.m_rd_entry.val().una_needs_response;
        self.rd_tstart.next = self.qp_table.m_rd_entry.val().timer_start;
        self.qp_valid.next = bit_cast::<7, 6>(self.op_qp.q.val()) < self.num_qps.val();
        self.d_out.next = self.rd_next.val() - self.rd_una.val();
        self.d_evt.next = self.ak_psn.q.val() - self.rd_una.val();
        // As of the Exec clock, one after the Read clock that registers the result.
        self.elapsed.next = self.now_p1.val() - self.rd_tstart.val();
        self.next_p1.next = self.rd_next.val() + 1;
        self.una_p1.next = self.rd_una.val() + 1;
        self.psn_p1.next = self.ak_psn.q.val() + 1;
        self.job_idx_p1.next = self.job_idx.q.val() + 1;
        self.rd_outstanding.next = self.rd_una.val() != self.rd_next.val();
        self.rd_eligible.next = self.qp_valid.val()
            & self.rd_enable.val()
            & (self.rd_next.val() != self.rd_pi.val())
            & (self.d_out.val() < self.send_window.val())
            & !self.rd_waiting.val()
            & !(self.rd_drain.val() & self.rd_outstanding.val());
        // WQE address of sq_next: SQ_BASE + (sq_next mod 2^SQ_SIZE_LOG2) * 64.
        self.rd_mask.next = !(self.ones24.val() << self.rd_size.val());
        self.rd_slot.next = self.rd_next.val() & self.rd_mask.val();
        self.rd_wqe_addr.next = self.rd_base.val() + (bit_cast::<32, 24>(self.rd_slot.val()) << 6);
        self.ev_success.next = self.ak_resp.q.val() | (self.ak_syn.q.val() == 0);
        self.ev_retry.next = !self.ev_success.val()
            & ((self.ak_syn.q.val() == self.syn_sequence.val())
                | (self.ak_syn.q.val() == self.syn_crc.val()));
        // An answer is for a message this QP sent: any PSN from sq_una up to the last one
        // it can have sent (sq_pi, at most SEND_WINDOW on). That includes PSNs at or after
        // sq_next: sent before a go-back, their answers still tell the truth (a refused
        // PSN's NACK that crossed a timeout is not lost).
        // (`d_evt < min(d_posted, SEND_WINDOW)` as two compares side by side.)
        self.d_posted.next = self.rd_pi.val() - self.rd_una.val();
        self.ev_ahead.next = self.d_evt.val() >= self.d_out.val();
        self.ev_hit.next = self.qp_valid.val()
            & (self.d_evt.val() < self.d_posted.val())
            & (self.d_evt.val() < self.send_window.val());
        // Foreign: a NACK more than SEND_WINDOW after sq_una, or before it (a final NACK
        // up to SEND_WINDOW before sq_una answers a PSN already completed, e.g. a refusal
        // a later answer's AETH reports again: stale).
        self.ev_foreign.next = self.qp_valid.val()
            & self.rd_outstanding.val()
            & !self.ev_success.val()
            & (self.d_evt.val() > self.send_window.val())
            & (self.ev_retry.val() | (self.d_evt.val() < self.window_before.val()));
        // Retry count after a retry event; an event that completes WQEs clears it first
        // (both outcomes computed, then selected: the event's classification is the
        // longest path of the Read clock).
        self.retry_cleared.next =
            (self.op.q.val() == SqOp::Eval) & self.ev_hit.val() & (self.d_evt.val() != 0);
        self.retry_inc.next = bit_cast::<5, 4>(self.rd_retry.val()) + 1;
        self.retry_new.next = self.retry_inc.val().get_bits::<4>(0);
        self.retry_exceeded.next =
            self.retry_inc.val() > bit_cast::<5, 4>(self.cfg_retry_limit.val());
        if self.retry_cleared.val() {
            self.retry_new.next = 1.into();
            self.retry_exceeded.next = self.cfg_retry_limit.val() == 0;
        }
        self.ev_restarted.next = self.ak_resync.q.val() & (self.d_evt.val() != 0);
        // Beside the classification, not after it: a registered bit and `d_evt != 0`
        // (as in `ev_restarted`); Exec combines it with `ev_hit`.
        self.ev_implied.next = self.rd_una_rsp.val()
            & !self.ak_resp.q.val()
            & !self.ev_restarted.val()
            & ((self.ak_syn.q.val() == 0) | (self.d_evt.val() != 0));
        self.timer_expired.next = (self.cfg_retry_timeout.val() != 0)
            & (self.elapsed.val() >= self.cfg_retry_timeout.val());
        // Registered every clock; only the values of the Read clock are used (in Exec).
        self.rd_eligible_reg.d.next = self.rd_eligible.val();
        self.rd_outstanding_reg.d.next = self.rd_outstanding.val();
        self.rd_wqe_addr_reg.d.next = self.rd_wqe_addr.val();
        self.ev_hit_reg.d.next = self.ev_hit.val();
        self.ev_ahead_reg.d.next = self.ev_ahead.val();
        self.ev_foreign_reg.d.next = self.ev_foreign.val();
        self.ev_restarted_reg.d.next = self.ev_restarted.val();
        self.retry_new_reg.d.next = self.retry_new.val();
        self.retry_exceeded_reg.d.next = self.retry_exceeded.val();
        self.retry_kept_reg.d.next = self.retry_inc.val().get_bits::<4>(0);
        self.retry_kept_exceeded_reg.d.next =
            self.retry_inc.val() > bit_cast::<5, 4>(self.cfg_retry_limit.val());
        self.ev_implied_reg.d.next = self.ev_implied.val();
        self.evt_run_reg.d.next = self.d_evt.val().get_bits::<4>(0);
        self.timer_expired_reg.d.next = self.timer_expired.val();
        self.csr_value.next = 0.into();
        if self.qp_valid.val() {
            if self.csr_reg_reg.q.val() == 0 {
                self.csr_value.next = bit_cast::<64, 32>(self.rd_base.val());
            }
            if self.csr_reg_reg.q.val() == 1 {
                self.csr_value.next = bit_cast::<64, 5>(self.rd_size.val());
            }
            if self.csr_reg_reg.q.val() == 2 {
                self.csr_value.next = bit_cast::<64, 24>(self.rd_pi.val());
            }
            if self.csr_reg_reg.q.val() == 3 {
                self.csr_value.next = bit_cast::<64, 24>(self.rd_una.val());
            }
            if self.csr_reg_reg.q.val() == 8 {
                self.csr_value.next = bit_cast::<64, 32>(self.rd_remote.val());
            }
            if self.csr_reg_reg.q.val() == 9 {
                self.csr_value.next = bit_cast::<64, 1>(self.rd_enable.val().into());
            }
            if self.csr_reg_reg.q.val() == 10 {
                self.csr_value.next = bit_cast::<64, 24>(self.rd_next.val())
                    | (bit_cast::<64, 1>(self.rd_waiting.val().into()) << 49)
                    | (bit_cast::<64, 4>(self.rd_retry.val()) << 52);
            }
        }

        // ---- The fetched WQE ----
        self.op_read.next = self.fetch.m_opcode.val() == self.opc_read.val();
        self.op_atomic.next = (self.fetch.m_opcode.val() == self.opc_cas.val())
            | (self.fetch.m_opcode.val() == self.opc_faa.val());
        self.op_imm.next = (self.fetch.m_opcode.val() == self.opc_send_imm.val())
            | (self.fetch.m_opcode.val() == self.opc_write_imm.val());
        self.op_send.next = (self.fetch.m_opcode.val() == self.opc_send.val())
            | (self.fetch.m_opcode.val() == self.opc_send_imm.val());
        self.op_nop.next = self.fetch.m_opcode.val() == self.opc_nop.val();
        self.op_bind.next = self.fetch.m_opcode.val() == self.opc_bind.val();
        self.op_delay.next = self.fetch.m_opcode.val() == self.opc_delay.val();
        self.delay_fits.next = (self.fetch.m_vaddr.val() & self.delay_high.val()) == 0;
        // Inline payloads come with SENDs only (the other opcodes use the words).
        self.op_known.next = ((self.fetch.m_opcode.val() == self.opc_send.val())
            | (self.fetch.m_opcode.val() == self.opc_write.val())
            | self.op_read.val()
            | self.op_atomic.val()
            | self.op_imm.val()
            | self.op_nop.val()
            | self.op_bind.val()
            | self.op_delay.val())
            & (!self.fetch.m_inline.val() | self.op_send.val());
        self.op_rdma.next = self.fetch.m_opcode.val().get_bits::<4>(4) == 1;
        // A BIND's length is the bound range's (any 32-bit value), not a message's.
        self.len_ok.next = ((self.fetch.m_length.val() <= self.max_length.val())
            | self.op_bind.val())
            & (!self.op_delay.val() | self.delay_fits.val())
            & (!self.op_atomic.val() | (self.fetch.m_length.val() == 8))
            & (!self.fetch.m_inline.val() | (self.fetch.m_length.val() <= self.inline_max.val()));
        self.addr_ok.next = ((self.fetch.m_local.val().get_bits::<3>(0) == 0)
            | self.fetch.m_inline.val())
            & (!self.op_rdma.val() | (self.fetch.m_vaddr.val().get_bits::<3>(0) == 0));
        // Checked in this order: opcode, length, alignment (the first failure is reported).
        self.wqe_status.next = 0.into();
        if !self.addr_ok.val() {
            self.wqe_status.next = self.st_address.val();
        }
        if !self.len_ok.val() {
            self.wqe_status.next = self.st_length.val();
        }
        if !self.op_known.val() {
            self.wqe_status.next = self.st_opcode.val();
        }
        self.wqe_bad.next = !self.op_known.val() | !self.len_ok.val() | !self.addr_ok.val();
        self.wqe_local_only.next =
            self.wqe_bad.val() | self.op_nop.val() | self.op_bind.val() | self.op_delay.val();
        self.delay_ok_reg.d.next = self.op_delay.val() & !self.wqe_bad.val();
        self.need_empty.next =
            self.wqe_local_only.val() | self.op_read.val() | self.op_atomic.val();
        self.wqe_local_only_reg.d.next = self.wqe_local_only.val();
        self.need_empty_reg.d.next = self.need_empty.val();
        self.needs_response_reg.d.next = self.op_read.val() | self.op_atomic.val();
        self.msg_length.next = self.fetch.m_length.val();
        if self.op_read.val() {
            self.msg_length.next = 0.into();
        }
        if self.op_atomic.val() {
            self.msg_length.next = 16.into();
        }
        self.len_round.next = bit_cast::<16, 32>((self.fetch.m_length.val() + 7) >> 3);
        // A payload read that fits the buffer completes without the segmenter, so it may
        // start before the message's grant ("Deadlock freedom").
        self.pl_early.next = !self.wqe_local_only.val()
            & !self.op_read.val()
            & !self.op_atomic.val()
            & !self.fetch.m_inline.val()
            & (self.fetch.m_length.val() != 0)
            & (self.len_round.val() <= self.payload_buffer_depth.val());
        self.inline_data.next = self.fetch.m_word7.val();
        if self.tx_beat.q.val() == 0 {
            self.inline_data.next = self.fetch.m_vaddr.val();
        }
        if self.tx_beat.q.val() == 1 {
            self.inline_data.next = self.fetch.m_compare.val();
        }
        if self.tx_beat.q.val() == 2 {
            self.inline_data.next = self.fetch.m_swap.val();
        }

        // ---- Requests to the table engine (from registers only) ----
        self.tx_req.next = false;
        self.tx_req_op.next = SqOp::Claim;
        self.tx_streaming.next = false;
        match self.tx_state.q.val() {
            SqTxState::ClaimReq => {
                self.tx_req.next = true;
            }
            SqTxState::CommitReq => {
                self.tx_req.next = true;
                self.tx_req_op.next = SqOp::Commit;
            }
            SqTxState::Expect => {
                self.tx_streaming.next = true;
            }
            SqTxState::Msg => {
                self.tx_streaming.next = true;
            }
            SqTxState::PayloadReq => {
                self.tx_streaming.next = true;
            }
            SqTxState::Inline => {
                self.tx_streaming.next = true;
            }
            SqTxState::Atomic0 => {
                self.tx_streaming.next = true;
            }
            SqTxState::Atomic1 => {
                self.tx_streaming.next = true;
            }
            _ => {}
        }
        self.tx_on_una.next = (self.tx_streaming.val()
            & (self.tx_qp.q.val() == self.op_qp.q.val())
            & (self.tx_psn.q.val() == self.rd_una.val()))
            | (self.pl_streaming.q.val()
                & (self.pl_qp.q.val() == self.op_qp.q.val())
                & (self.pl_psn.q.val() == self.rd_una.val()));
        self.local_take.next = (self.ak_state.q.val() == SqAckState::Idle)
            & (self.tx_state.q.val() == SqTxState::Local);
        self.ak_req_hi.next = false;
        self.ak_req_lo.next = false;
        self.ak_req_op.next = SqOp::Eval;
        self.s_ack_ready.next = false;
        match self.ak_state.q.val() {
            SqAckState::Idle => {
                self.s_ack_ready.next = !self.local_take.val();
                self.ak_req_lo.next = !self.local_take.val() & !self.s_ack_valid.val();
            }
            SqAckState::EvalReq => {
                self.ak_req_hi.next = true;
            }
            SqAckState::AdvReq => {
                self.ak_req_hi.next = true;
                self.ak_req_op.next = SqOp::Advance;
            }
            _ => {}
        }

        // ---- The acknowledgement job's current completion ----
        self.cur_status.next = self.job_status.q.val();
        self.cur_set_resync.next = self.job_resync.q.val();
        self.job_more.next = false;
        if self.job_succ.q.val() != 0 {
            self.cur_status.next = self.job_run_status.q.val();
            self.cur_set_resync.next = false;
            self.job_more.next = (self.job_succ.q.val() != 1) | self.job_final.q.val();
        }
        self.ak_mask.next = !(self.ones24.val() << self.job_size.q.val());
        self.ak_slot.next = self.job_idx.q.val() & self.ak_mask.val();
        self.ak_addr.next = self.job_base.q.val() + (bit_cast::<32, 24>(self.ak_slot.val()) << 6);

        // ---- Table engine ----
        self.csr_yield.next =
            self.csr_granted_last.q.val() & (self.ak_req_hi.val() | self.tx_req.val());
        self.grant_csr.next = false;
        self.grant_tx.next = false;
        self.grant_ak.next = false;
        self.s_csr_ready.next = false;
        self.read_qp.next = self.op_qp.q.val();
        self.rdata_valid_reg.d.next = false;
        self.ex_ok.next = false;
        self.ex_retx.next = false;
        self.ex_job_valid.next = false;
        self.ex_job_succ.next = 0.into();
        self.ex_job_run_status.next = 0.into();
        self.ex_job_final.next = false;
        self.ex_job_status.next = 0.into();
        self.ex_job_resync.next = false;
        self.wr_base.next = self.rd_base.val();
        self.wr_remote.next = self.rd_remote.val();
        self.wr_pi.next = self.rd_pi.val();
        self.wr_size.next = self.rd_size.val();
        self.wr_next.next = self.rd_next.val();
        self.wr_enable.next = self.rd_enable.val();
        self.wr_resync.next = self.rd_resync.val();
        self.wr_waiting.next = self.rd_waiting.val();
        self.wr_drain.next = self.rd_drain.val();
        self.wr_retry.next = self.rd_retry.val();
        self.wr_una.next = self.rd_una.val();
        self.wr_una_rsp.next = self.rd_una_rsp.val();
        self.wr_tstart.next = self.rd_tstart.val();
        match self.eng_state.q.val() {
            SqEngineState::Idle => {
                // Granting: below.
            }
            SqEngineState::Read => {
                // The entry is valid; its derived values are registered for Exec.
                self.eng_state.d.next = SqEngineState::Exec;
            }
            SqEngineState::Exec => {
                self.eng_state.d.next = SqEngineState::Idle;
                match self.op.q.val() {
                    SqOp::CsrRead => {
                        self.rdata_valid_reg.d.next = true;
                        self.rdata_reg.d.next = self.csr_value.val();
                    }
                    SqOp::CsrWrite => {
                        // Writes to QPs beyond `queue_pairs` are ignored.
                        self.ex_ok.next = self.qp_valid.val();
                        if self.ex_ok.val() {
                            if self.csr_reg_reg.q.val() == 0 {
                                self.wr_base.next = self.csr_wdata_reg.q.val();
                            }
                            if self.csr_reg_reg.q.val() == 1 {
                                self.wr_size.next = self.csr_wdata_reg.q.val().get_bits::<5>(0);
                            }
                            if self.csr_reg_reg.q.val() == 2 {
                                self.wr_pi.next = self.csr_wdata_reg.q.val().get_bits::<24>(0);
                            }
                            if self.csr_reg_reg.q.val() == 8 {
                                self.wr_remote.next = self.csr_wdata_reg.q.val();
                            }
                            if self.csr_reg_reg.q.val() == 9 {
                                self.wr_enable.next = self.csr_wdata_reg.q.val().get_bit(0);
                                if self.csr_wdata_reg.q.val().get_bit(1)
                                    | self.csr_wdata_reg.q.val().get_bit(2)
                                {
                                    // QP reset (bit 1), or send-side reset (bit 2: the
                                    // responder side is the receive engine's and is kept):
                                    // sq_pi = sq_next = sq_una = start PSN.
                                    self.wr_pi.next = self.csr_wdata_reg.q.val().get_bits::<24>(8);
                                    self.wr_next.next =
                                        self.csr_wdata_reg.q.val().get_bits::<24>(8);
                                    self.wr_una.next = self.csr_wdata_reg.q.val().get_bits::<24>(8);
                                    self.wr_resync.next = true;
                                    self.wr_retry.next = 0.into();
                                    self.wr_waiting.next = false;
                                    self.wr_una_rsp.next = false;
                                    self.wr_drain.next = false;
                                    self.wr_tstart.next = self.now.q.val();
                                    if (self.op_qp.q.val() == self.ak_qp.q.val())
                                        & (self.ak_state.q.val() != SqAckState::Idle)
                                    {
                                        self.ak_stale.d.next = true;
                                    }
                                }
                            }
                            // A reset or a moved ring invalidates a WQE being fetched.
                            if (self.op_qp.q.val() == self.tx_qp.q.val())
                                & (self.tx_state.q.val() != SqTxState::Idle)
                                & ((self.csr_reg_reg.q.val() == 0)
                                    | (self.csr_reg_reg.q.val() == 1)
                                    | ((self.csr_reg_reg.q.val() == 9)
                                        & (self.csr_wdata_reg.q.val().get_bit(1)
                                            | self.csr_wdata_reg.q.val().get_bit(2))))
                            {
                                self.tx_stale.d.next = true;
                            }
                        }
                    }
                    SqOp::Claim => {
                        self.ex_ok.next = self.rd_eligible_reg.q.val();
                    }
                    SqOp::Commit => {
                        self.ex_ok.next = self.rd_eligible_reg.q.val()
                            & (self.rd_next.val() == self.tx_psn.q.val())
                            & !self.tx_stale.q.val()
                            & (!self.need_empty_reg.q.val() | !self.rd_outstanding_reg.q.val());
                        if self.ex_ok.val() {
                            self.wr_next.next = self.next_p1.val();
                            if self.wqe_local_only_reg.q.val() {
                                // Nothing more is sent until the local completion is done.
                                self.wr_drain.next = true;
                            } else if self.needs_response_reg.q.val() {
                                // Committed only with nothing outstanding: it is sq_una.
                                self.wr_waiting.next = true;
                                self.wr_una_rsp.next = true;
                            }
                            if !self.rd_outstanding_reg.q.val() {
                                self.wr_tstart.next = self.now.q.val();
                            }
                        } else if self.rd_eligible_reg.q.val()
                            & (self.rd_next.val() == self.tx_psn.q.val())
                            & !self.tx_stale.q.val()
                        {
                            // READ, atomic or bad WQE behind outstanding messages: wait
                            // until the QP drains.
                            self.wr_drain.next = true;
                        }
                    }
                    SqOp::Eval => {
                        if self.ak_local.q.val() {
                            self.ex_job_valid.next = self.qp_valid.val()
                                & (self.rd_una.val() == self.ak_psn.q.val())
                                & self.rd_outstanding_reg.q.val();
                            self.ex_job_final.next = true;
                            self.ex_job_status.next = self.ak_local_status.q.val();
                            self.ex_job_resync.next = true;
                        } else if self.ev_hit_reg.q.val() & !self.ev_implied_reg.q.val() {
                            self.ex_job_valid.next = true;
                            self.wr_waiting.next = false;
                            self.wr_tstart.next = self.now.q.val();
                            self.wr_retry.next = 0.into();
                            self.ex_job_succ.next = self.evt_run_reg.q.val();
                            if self.ev_restarted_reg.q.val() {
                                // The responder restarted at this PSN: the WQEs before it
                                // were not applied there.
                                self.ex_job_run_status.next = self.st_restarted.val();
                            }
                            if self.ev_success.val() & self.ev_ahead_reg.q.val() {
                                // Answered a message sent before a go-back: resume after it.
                                self.wr_next.next = self.psn_p1.val();
                            }
                            if self.ev_success.val() {
                                self.ex_job_succ.next = self.evt_run_reg.q.val() + 1;
                                if self.ev_restarted_reg.q.val() {
                                    // The restarted run, then this PSN with success.
                                    self.ex_job_succ.next = self.evt_run_reg.q.val();
                                    self.ex_job_final.next = true;
                                }
                            } else if self.ev_retry.val() {
                                // Go back N from the NACK's PSN.
                                self.ex_retx.next = true;
                                self.wr_next.next = self.ak_psn.q.val();
                                self.wr_retry.next = self.retry_new_reg.q.val();
                                if self.retry_exceeded_reg.q.val() {
                                    self.ex_job_final.next = true;
                                    self.ex_job_status.next = self.st_retry.val();
                                    self.ex_job_resync.next = true;
                                    self.wr_next.next = self.psn_p1.val();
                                    self.wr_drain.next = true;
                                    self.wr_retry.next = 0.into();
                                }
                            } else {
                                self.ex_job_final.next = true;
                                self.ex_job_status.next = self.ak_syn.q.val();
                                // PORT_DOWN is the fabric's: the responder never saw p,
                                // which may have been the QP's RESYNC message, so the
                                // resync stays pending.
                                self.ex_job_resync.next =
                                    self.ak_syn.q.val() == self.syn_port_down.val();
                                // The responder consumed p, but may have dropped what
                                // followed while its answer slot held this NACK: resend
                                // from p+1 (not a retry: the count stays cleared).
                                self.wr_next.next = self.psn_p1.val();
                                self.ex_retx.next = self.rd_next.val() != self.psn_p1.val();
                            }
                        } else if self.ev_foreign_reg.q.val()
                            | (self.ev_hit_reg.q.val()
                                & self.ev_implied_reg.q.val()
                                & self.rd_outstanding_reg.q.val())
                        {
                            // A NACK for a PSN this QP has not sent lately. Retryable: the
                            // responder expects something else (a lost RESYNC message, a
                            // skipped PSN). Final: it answers a request sent before this
                            // QP's send side was reset, and while that NACK sat in its
                            // answer slot it may have dropped what this QP sent since.
                            // Or an implied NAK: an answer past the READ or atomic at
                            // sq_una, whose response was lost (while it is not
                            // outstanding, the QP already went back to it: ignored).
                            // Either way go back to sq_una, as on a timeout (with RESYNC
                            // if the QP's resync is pending); a retryable NACK and an
                            // implied NAK count a retry (nothing completes: the count
                            // is not cleared).
                            self.ex_retx.next = true;
                            self.wr_tstart.next = self.now.q.val();
                            self.wr_waiting.next = false;
                            self.wr_next.next = self.rd_una.val();
                            if self.ev_retry.val()
                                | (self.ev_hit_reg.q.val() & self.ev_implied_reg.q.val())
                            {
                                self.wr_retry.next = self.retry_kept_reg.q.val();
                                if self.retry_kept_exceeded_reg.q.val() {
                                    self.ex_job_valid.next = true;
                                    self.ex_job_final.next = true;
                                    self.ex_job_status.next = self.st_retry.val();
                                    self.ex_job_resync.next = true;
                                    self.wr_next.next = self.una_p1.val();
                                    self.wr_drain.next = true;
                                    self.wr_retry.next = 0.into();
                                }
                            }
                        }
                    }
                    SqOp::Advance => {
                        self.ex_ok.next = self.qp_valid.val()
                            & (self.rd_una.val() == self.job_idx.q.val())
                            & !self.ak_stale.q.val();
                        if self.ex_ok.val() {
                            self.wr_una.next = self.job_idx_p1.val();
                            self.wr_una_rsp.next = false;
                            if !self.rd_outstanding_reg.q.val() {
                                self.wr_next.next = self.job_idx_p1.val();
                            }
                            self.wr_resync.next = self.cur_set_resync.val();
                            self.wr_tstart.next = self.now.q.val();
                        }
                    }
                    SqOp::Timer => {
                        // The timer runs while messages are outstanding.
                        self.ex_ok.next = self.qp_valid.val() & self.rd_outstanding_reg.q.val();
                        if self.ex_ok.val() {
                            if self.tx_on_una.val() {
                                // sq_una is still being transmitted: not yet waiting for
                                // its answer. (Later messages do not hold the timer: it
                                // measures the oldest message's wait.)
                                self.wr_tstart.next = self.now.q.val();
                            } else if self.timer_expired_reg.q.val() {
                                self.ex_retx.next = true;
                                self.wr_tstart.next = self.now.q.val();
                                self.wr_waiting.next = false;
                                self.wr_next.next = self.rd_una.val();
                                self.wr_retry.next = self.retry_new_reg.q.val();
                                if self.retry_exceeded_reg.q.val() {
                                    self.ex_job_valid.next = true;
                                    self.ex_job_final.next = true;
                                    self.ex_job_status.next = self.st_retry.val();
                                    self.ex_job_resync.next = true;
                                    self.wr_next.next = self.una_p1.val();
                                    self.wr_drain.next = true;
                                    self.wr_retry.next = 0.into();
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        // Grant the next operation: when idle; while one executes, if the next one is for
        // another QP (its entry is read at the edge this one's is written: a different
        // address), so operations of different QPs follow each other every two clocks; or
        // in place of a timer scan that is only reading (it has no effect before Exec, and
        // the scan retries the same QP later), so a background scan never delays a CSR
        // access or a transmit operation.
        // A CSR access goes first, except right after another one when the
        // acknowledgement or transmit machine waits: a burst of CSR writes (a driver
        // programming its queue pairs) then alternates with them instead of stalling the
        // traffic of the queue pairs already programmed.
        self.timer_preemptible.next =
            (self.eng_state.q.val() == SqEngineState::Read) & (self.op.q.val() == SqOp::Timer);
        // The QP the priority order would grant (lowest priority first, then overridden).
        self.next_qp.next = self.tscan.q.val();
        if self.tx_req.val() {
            self.next_qp.next = self.tx_qp.q.val();
        }
        if self.ak_req_hi.val() {
            self.next_qp.next = self.ak_qp.q.val();
        }
        if self.s_csr_valid.val() & !self.csr_yield.val() {
            self.next_qp.next = self.s_csr_qp.val();
        }
        self.overlap_ok.next = (self.eng_state.q.val() == SqEngineState::Exec)
            & (self.next_qp.val() != self.op_qp.q.val());
        if ((self.eng_state.q.val() == SqEngineState::Idle) & self.qp_table.m_ready.val())
            | self.overlap_ok.val()
            | self.timer_preemptible.val()
        {
            self.s_csr_ready.next = !self.csr_yield.val();
            self.csr_granted_last.d.next = false;
            if self.s_csr_valid.val() & !self.csr_yield.val() {
                self.csr_granted_last.d.next = true;
                self.grant_csr.next = true;
                self.read_qp.next = self.s_csr_qp.val();
                self.op.d.next = SqOp::CsrRead;
                if self.s_csr_write.val() {
                    self.op.d.next = SqOp::CsrWrite;
                }
                self.csr_reg_reg.d.next = self.s_csr_reg.val();
                self.csr_wdata_reg.d.next = self.s_csr_wdata.val().get_bits::<32>(0);
            } else if self.ak_req_hi.val() {
                self.grant_ak.next = true;
                self.read_qp.next = self.ak_qp.q.val();
                self.op.d.next = self.ak_req_op.val();
            } else if self.tx_req.val() {
                self.grant_tx.next = true;
                self.read_qp.next = self.tx_qp.q.val();
                self.op.d.next = self.tx_req_op.val();
            } else if self.ak_req_lo.val() & !self.timer_preemptible.val() {
                self.grant_ak.next = true;
                self.read_qp.next = self.tscan.q.val();
                self.op.d.next = SqOp::Timer;
            }
            if self.grant_csr.val() | self.grant_ak.val() | self.grant_tx.val() {
                self.op_qp.d.next = self.read_qp.val();
                self.eng_state.d.next = SqEngineState::Read;
            }
        }
        self.timer_preempted.next =
            self.timer_preemptible.val() & (self.grant_csr.val() | self.grant_tx.val());
        self.ex_has_job.next =
            self.ex_job_valid.val() & ((self.ex_job_succ.val() != 0) | self.ex_job_final.val());
        if self.ex_retx.val() {
            self.retransmissions_reg.d.next = self.retransmissions_reg.q.val() + 1;
        }
        // Write back the entry. The scheduler's eligibility bit follows two clocks later,
        // from the entry as written (registered: the PSN arithmetic of the decision and the
        // window test are in different clocks). Nothing else reads it; the transmit
        // machine, if it picks a QP in that clock, finds it ineligible at its claim.
        self.wr_drain_kept.next = self.wr_drain.val() & (self.wr_una.val() != self.wr_next.val());
        self.scheduler.s_wb_valid.next = self.eng_state.q.val() == SqEngineState::Exec;
        self.scheduler.s_wb_qp.next = self.op_qp.q.val();
        self.scheduler.s_wb_next.next = self.wr_next.val();
        self.scheduler.s_wb_una.next = self.wr_una.val();
        self.scheduler.s_wb_pi.next = self.wr_pi.val();
        self.scheduler.s_wb_ready.next =
            self.qp_valid.val() & self.wr_enable.val() & !self.wr_waiting.val();
        // The draining flag as written; the scheduler tests `una != next` again from its
        // registered copies (the one in `wr_drain_kept` ends the longest path of the Exec
        // clock, into the RAM's data).
        self.scheduler.s_wb_drain.next = self.wr_drain.val();
        self.qp_table.s_rd_addr.next = self.read_qp.val();
        self.qp_table.s_wr_valid.next = self.eng_state.q.val() == SqEngineState::Exec;
        self.qp_table.s_wr_addr.next = self.op_qp.q.val();
        self.qp_table.s_wr_entry.next.base = self.wr_base.val();
        self.qp_table.s_wr_entry.next.remote = self.wr_remote.val();
        self.qp_table.s_wr_entry.next.sq_pi = self.wr_pi.val();
        self.qp_table.s_wr_entry.next.size_log2 = self.wr_size.val();
        self.qp_table.s_wr_entry.next.sq_next = self.wr_next.val();
        self.qp_table.s_wr_entry.next.enable = self.wr_enable.val();
        self.qp_table.s_wr_entry.next.resync = self.wr_resync.val();
        self.qp_table.s_wr_entry.next.waiting = self.wr_waiting.val();
        self.qp_table.s_wr_entry.next.draining = self.wr_drain_kept.val();
        self.qp_table.s_wr_entry.next.retry = self.wr_retry.val();
        self.qp_table.s_wr_entry.next.sq_una = self.wr_una.val();
        self.qp_table.s_wr_entry.next.una_needs_response = self.wr_una_rsp.val();
        self.qp_table.s_wr_entry.next.timer_start = self.wr_tstart.val();

        // A DELAY's commit holds its QP (from the next clock; its drain already keeps the
        // QP out until the local completion, so no pick can come between).
        self.scheduler.s_hold_valid.next = (self.eng_state.q.val() == SqEngineState::Exec)
            & (self.op.q.val() == SqOp::Commit)
            & self.ex_ok.val()
            & self.delay_ok_reg.q.val();
        self.scheduler.s_hold_qp.next = self.op_qp.q.val();
        self.scheduler.s_hold_cycles.next = self.fetch.m_vaddr.val().get_bits::<24>(0);

        // ---- Transmit machine ----
        self.scheduler.s_pick_taken.next = false;
        self.fetch.clock.next = self.clock.val();
        self.fetch.reset.next = self.reset.val();
        self.fetch.s_fetch_valid.next = false;
        self.fetch.s_fetch_addr.next = self.tx_wqe_addr.q.val();
        self.fetch.m_rd_req_ready.next = self.m_txrd_req_ready.val();
        self.fetch.s_rd_data.next = self.s_txrd_data.val();
        self.fetch.s_rd_valid.next = self.s_txrd_valid.val() & !self.pl_busy.q.val();
        self.fetch.s_rd_last.next = self.s_txrd_last.val();
        self.payload_buffer.clock.next = self.clock.val();
        self.payload_buffer.reset.next = self.reset.val();
        self.payload_buffer.s_data.next = self.s_txrd_data.val();
        self.payload_buffer.s_valid.next = self.s_txrd_valid.val() & self.pl_busy.q.val();
        self.payload_buffer.s_last.next = self.s_txrd_last.val();
        // The tx DMA read port: the WQE fetch's, but for the payload read (PayloadReq),
        // which waits until the fetch has drained. Read data go in request order: to the
        // payload buffer while the payload's burst arrives, else to the fetch (whose next
        // request may already be waiting behind the payload's).
        self.m_txrd_req_valid.next = self.fetch.m_rd_req_valid.val();
        self.m_txrd_req_addr.next = self.fetch.m_rd_req_addr.val();
        self.m_txrd_req_words.next = self.fetch.m_rd_req_words.val();
        self.s_txrd_ready.next = self.fetch.s_rd_ready.val();
        if self.pl_busy.q.val() {
            self.s_txrd_ready.next = self.payload_buffer.s_ready.val();
            if self.s_txrd_valid.val() & self.payload_buffer.s_ready.val() & self.s_txrd_last.val()
            {
                self.pl_busy.d.next = false;
            }
        }
        // The payload from the buffer (an inline or atomic payload overrides it below: it
        // follows its message, which is offered only once the buffer's last one has left).
        self.m_expect_valid.next = false;
        self.m_msg_valid.next = false;
        // (Until its request is taken, an early message's machine waits for the previous
        // payload to leave: that one's words go out.)
        self.pl_out_ok.next = !(self.tx_early.q.val() & (self.tx_state.q.val() == SqTxState::Msg));
        self.m_payload_valid.next = self.payload_buffer.m_valid.val() & self.pl_out_ok.val();
        self.m_payload_data.next = self.payload_buffer.m_data.val();
        self.m_payload_last.next = self.payload_buffer.m_last.val();
        self.payload_buffer.m_ready.next = self.m_payload_ready.val() & self.pl_out_ok.val();
        if self.payload_buffer.m_valid.val()
            & self.m_payload_ready.val()
            & self.pl_out_ok.val()
            & self.payload_buffer.m_last.val()
        {
            self.pl_streaming.d.next = false;
        }
        self.tx_pick_ok.next = (self.tx_state.q.val() == SqTxState::Idle)
            & !(self.pl_busy.q.val() & self.pl_long.q.val());
        match self.tx_state.q.val() {
            SqTxState::Idle => {
                if self.scheduler.m_pick_valid.val() & self.tx_pick_ok.val() {
                    self.scheduler.s_pick_taken.next = true;
                    self.tx_qp.d.next = self.scheduler.m_pick_qp.val();
                    self.tx_stale.d.next = false;
                    self.tx_state.d.next = SqTxState::ClaimReq;
                }
            }
            SqTxState::ClaimReq => {
                if self.grant_tx.val() {
                    self.tx_state.d.next = SqTxState::ClaimWait;
                }
            }
            SqTxState::ClaimWait => {
                if self.exec_now.val() {
                    self.tx_psn.d.next = self.rd_next.val();
                    self.tx_wqe_addr.d.next = self.rd_wqe_addr_reg.q.val();
                    self.tx_remote.d.next = self.rd_remote.val();
                    self.tx_state.d.next = SqTxState::Idle;
                    if self.ex_ok.val() {
                        self.tx_state.d.next = SqTxState::FetchReq;
                    }
                }
            }
            SqTxState::FetchReq => {
                self.fetch.s_fetch_valid.next = true;
                if self.fetch.s_fetch_ready.val() {
                    self.tx_state.d.next = SqTxState::FetchData;
                }
            }
            SqTxState::FetchData => {
                // Word 7, or word 4 of a WQE that uses no more (its words 5-7 are not
                // read).
                if self.fetch.m_wqe_done.val() {
                    self.tx_state.d.next = SqTxState::CommitReq;
                }
            }
            SqTxState::CommitReq => {
                if self.grant_tx.val() {
                    self.tx_state.d.next = SqTxState::CommitWait;
                }
            }
            SqTxState::CommitWait => {
                if self.exec_now.val() {
                    self.tx_resync.d.next = self.rd_resync.val() & !self.rd_outstanding_reg.q.val();
                    self.tx_state.d.next = SqTxState::Idle;
                    if self.ex_ok.val() {
                        self.tx_state.d.next = SqTxState::Msg;
                        if self.pl_early.val() {
                            self.tx_state.d.next = SqTxState::PayloadReq;
                        }
                        self.tx_early.d.next = self.pl_early.val();
                        if self.op_read.val() | self.op_atomic.val() {
                            self.tx_state.d.next = SqTxState::Expect;
                        }
                        if self.wqe_local_only.val() {
                            self.tx_state.d.next = SqTxState::Local;
                        }
                    }
                }
            }
            SqTxState::Local => {
                if self.local_take.val() {
                    self.tx_state.d.next = SqTxState::Idle;
                }
            }
            SqTxState::Expect => {
                self.m_expect_valid.next = true;
                if self.m_expect_ready.val() {
                    self.tx_state.d.next = SqTxState::Msg;
                }
            }
            SqTxState::Msg => {
                // After the previous message's last payload word (from the buffer); the
                // words there are this message's own if it was read early.
                self.m_msg_valid.next = !self.pl_streaming.q.val() | self.tx_early.q.val();
                if self.m_msg_ready.val() & (!self.pl_streaming.q.val() | self.tx_early.q.val()) {
                    self.requests_reg.d.next = self.requests_reg.q.val() + 1;
                    self.tx_state.d.next = SqTxState::Idle;
                    self.tx_beat.d.next = 0.into();
                    self.tx_early.d.next = false;
                    if (self.msg_length.val() != 0) & !self.op_atomic.val() & !self.tx_early.q.val()
                    {
                        self.tx_state.d.next = SqTxState::PayloadReq;
                        if self.fetch.m_inline.val() {
                            self.tx_state.d.next = SqTxState::Inline;
                        }
                    }
                    if self.op_atomic.val() {
                        self.tx_state.d.next = SqTxState::Atomic0;
                    }
                }
            }
            SqTxState::PayloadReq => {
                // One burst: ceil(length / 8) <= 8192 words. Read early (before the
                // message's grant), it waits until the previous payload has left the
                // buffer (one message's words at a time).
                self.m_txrd_req_valid.next = !self.fetch.m_draining.val()
                    & !(self.tx_early.q.val() & self.pl_streaming.q.val());
                self.m_txrd_req_addr.next = self.fetch.m_local.val();
                self.m_txrd_req_words.next = self.len_round.val();
                if self.m_txrd_req_ready.val()
                    & !self.fetch.m_draining.val()
                    & !(self.tx_early.q.val() & self.pl_streaming.q.val())
                {
                    // The words go to the payload buffer; the machine goes on to the next
                    // WQE (or to offer this message, if read early) while they arrive.
                    self.pl_busy.d.next = true;
                    self.pl_streaming.d.next = true;
                    self.pl_qp.d.next = self.tx_qp.q.val();
                    self.pl_psn.d.next = self.tx_psn.q.val();
                    self.pl_long.d.next = self.len_round.val() > self.payload_buffer_depth.val();
                    self.tx_state.d.next = SqTxState::Idle;
                    if self.tx_early.q.val() {
                        self.tx_state.d.next = SqTxState::Msg;
                    }
                }
            }
            SqTxState::Inline => {
                // The payload from the WQE's words 3, 5, 6, 7 (`INLINE_WORDS`).
                self.m_payload_valid.next = true;
                self.m_payload_data.next = self.inline_data.val();
                self.m_payload_last.next =
                    bit_cast::<16, 3>(self.tx_beat.q.val()) + 1 == self.len_round.val();
                if self.m_payload_ready.val() {
                    self.tx_beat.d.next = self.tx_beat.q.val() + 1;
                    if bit_cast::<16, 3>(self.tx_beat.q.val()) + 1 == self.len_round.val() {
                        self.tx_state.d.next = SqTxState::Idle;
                    }
                }
            }
            SqTxState::Atomic0 => {
                self.m_payload_valid.next = true;
                self.m_payload_data.next = self.fetch.m_compare.val();
                self.m_payload_last.next = false;
                if self.m_payload_ready.val() {
                    self.tx_state.d.next = SqTxState::Atomic1;
                }
            }
            SqTxState::Atomic1 => {
                self.m_payload_valid.next = true;
                self.m_payload_data.next = self.fetch.m_swap.val();
                self.m_payload_last.next = true;
                if self.m_payload_ready.val() {
                    self.tx_state.d.next = SqTxState::Idle;
                }
            }
            _ => {
                self.tx_state.d.next = SqTxState::Idle;
            }
        }

        // ---- Acknowledgement machine ----
        self.m_cplrd_req_valid.next = false;
        self.s_cplrd_ready.next = false;
        self.m_cpl_valid.next = false;
        match self.ak_state.q.val() {
            SqAckState::Idle => {
                self.ak_stale.d.next = false;
                if self.local_take.val() {
                    self.ak_qp.d.next = self.tx_qp.q.val();
                    self.ak_psn.d.next = self.tx_psn.q.val();
                    self.ak_local.d.next = true;
                    self.ak_resync.d.next = false;
                    self.ak_local_status.d.next = self.wqe_status.val();
                    self.ak_state.d.next = SqAckState::EvalReq;
                } else if self.s_ack_valid.val() {
                    self.ak_qp.d.next = self.s_ack_qp.val();
                    self.ak_psn.d.next = self.s_ack_psn.val();
                    self.ak_syn.d.next = self.s_ack_syndrome.val();
                    self.ak_resp.d.next = self.s_ack_response.val();
                    self.ak_resync.d.next = self.s_ack_resync.val();
                    self.ak_local.d.next = false;
                    self.ak_state.d.next = SqAckState::EvalReq;
                } else if self.grant_ak.val() {
                    self.ak_qp.d.next = self.tscan.q.val();
                    self.ak_state.d.next = SqAckState::TimerWait;
                }
            }
            SqAckState::TimerWait => {
                if self.timer_preempted.val() {
                    self.ak_state.d.next = SqAckState::Idle;
                }
                if self.exec_now.val() {
                    self.tscan.d.next = self.tscan.q.val() + 1;
                    if self.tscan.q.val() == self.last_qp.val() {
                        self.tscan.d.next = 0.into();
                    }
                    self.ak_state.d.next = SqAckState::Idle;
                    if self.ex_has_job.val() {
                        self.ak_state.d.next = SqAckState::ReadReq;
                    }
                }
            }
            SqAckState::EvalReq => {
                if self.grant_ak.val() {
                    self.ak_state.d.next = SqAckState::EvalWait;
                }
            }
            SqAckState::EvalWait => {
                if self.exec_now.val() {
                    self.ak_state.d.next = SqAckState::Idle;
                    if self.ex_has_job.val() {
                        self.ak_state.d.next = SqAckState::ReadReq;
                    }
                }
            }
            SqAckState::ReadReq => {
                self.m_cplrd_req_valid.next = true;
                if self.m_cplrd_req_ready.val() {
                    self.cpl_beat.d.next = false;
                    self.ak_state.d.next = SqAckState::ReadData;
                }
            }
            SqAckState::ReadData => {
                self.s_cplrd_ready.next = true;
                if self.s_cplrd_valid.val() {
                    self.cpl_beat.d.next = true;
                    if self.cpl_beat.q.val() {
                        self.cpl_wr_id.d.next = self.s_cplrd_data.val();
                    } else {
                        self.cpl_opcode.d.next = self.s_cplrd_data.val().get_bits::<8>(0);
                        self.cpl_len.d.next = self.s_cplrd_data.val().get_bits::<32>(32);
                    }
                    if self.s_cplrd_last.val() {
                        self.ak_state.d.next = SqAckState::Cpl;
                    }
                }
            }
            SqAckState::Cpl => {
                self.m_cpl_valid.next = true;
                if self.m_cpl_ready.val() {
                    self.ak_state.d.next = SqAckState::AdvReq;
                }
            }
            SqAckState::AdvReq => {
                if self.grant_ak.val() {
                    self.ak_state.d.next = SqAckState::AdvWait;
                }
            }
            SqAckState::AdvWait => {
                if self.exec_now.val() {
                    self.ak_state.d.next = SqAckState::Idle;
                    if self.ex_ok.val() {
                        if self.job_succ.q.val() != 0 {
                            self.job_succ.d.next = self.job_succ.q.val() - 1;
                        } else {
                            self.job_final.d.next = false;
                        }
                        self.job_idx.d.next = self.job_idx_p1.val();
                        if self.job_more.val() {
                            self.ak_state.d.next = SqAckState::ReadReq;
                        }
                    }
                }
            }
            _ => {
                self.ak_state.d.next = SqAckState::Idle;
            }
        }
        // A job starts from the entry just evaluated (timer or event).
        if self.ex_has_job.val() {
            self.ak_stale.d.next = false;
            self.job_idx.d.next = self.rd_una.val();
            self.job_succ.d.next = self.ex_job_succ.val();
            self.job_run_status.d.next = self.ex_job_run_status.val();
            self.job_final.d.next = self.ex_job_final.val();
            self.job_status.d.next = self.ex_job_status.val();
            self.job_resync.d.next = self.ex_job_resync.val();
            self.job_base.d.next = self.rd_base.val();
            self.job_size.d.next = self.rd_size.val();
            self.job_remote.d.next = self.rd_remote.val();
        }

        // ---- Outputs ----
        self.m_csr_rdata_valid.next = self.rdata_valid_reg.q.val();
        self.m_csr_rdata.next = self.rdata_reg.q.val();
        self.m_msg_opcode.next = self.fetch.m_opcode.val();
        self.m_msg_dest_node.next = self.tx_remote.q.val().get_bits::<16>(0);
        self.m_msg_src_node.next = self.cfg_node_id.val();
        self.m_msg_dest_qp.next = self.tx_remote.q.val().get_bits::<16>(16);
        self.m_msg_src_qp.next = bit_cast::<16, 6>(self.tx_qp.q.val());
        self.m_msg_psn.next = self.tx_psn.q.val();
        self.m_msg_length.next = self.msg_length.val();
        self.m_msg_vaddr.next = self.fetch.m_vaddr.val();
        self.m_msg_stag.next = self.fetch.m_stag.val();
        self.m_msg_dma_length.next = self.fetch.m_length.val();
        self.m_msg_immediate.next = 0.into();
        if self.op_imm.val() {
            self.m_msg_immediate.next = self.fetch.m_immediate.val();
        }
        self.m_msg_has_immediate.next = self.op_imm.val();
        self.m_msg_invalidate.next = self.fetch.m_invalidate.val();
        self.m_msg_resync.next = self.tx_resync.q.val();
        self.m_expect_qp.next = self.tx_qp.q.val();
        self.m_expect_psn.next = self.tx_psn.q.val();
        self.m_expect_addr.next = self.fetch.m_local.val();
        self.m_expect_length.next = self.fetch.m_length.val();
        self.m_expect_atomic.next = self.op_atomic.val();
        self.m_cplrd_req_addr.next = self.ak_addr.val();
        self.m_cplrd_req_words.next = 2.into();
        self.m_cpl_opcode.next = self.cpl_opcode.q.val();
        self.m_cpl_status.next = self.cur_status.val();
        self.m_cpl_qp.next = self.ak_qp.q.val();
        self.m_cpl_is_receive.next = false;
        self.m_cpl_has_immediate.next = false;
        self.m_cpl_byte_count.next = self.cpl_len.q.val();
        self.m_cpl_wqe_index.next = self.job_idx.q.val();
        self.m_cpl_src_node.next = self.job_remote.q.val().get_bits::<16>(0);
        self.m_cpl_src_qp.next = self.job_remote.q.val().get_bits::<16>(16);
        self.m_cpl_wr_id.next = self.cpl_wr_id.q.val();
        self.m_cpl_immediate.next = 0.into();
        self.stat_requests_sent.next = self.requests_reg.q.val();
        self.stat_retransmissions.next = self.retransmissions_reg.q.val();

        if self.reset.val() {
            self.eng_state.d.next = SqEngineState::Idle;
            self.now.d.next = 0.into();
            self.requests_reg.d.next = 0.into();
            self.retransmissions_reg.d.next = 0.into();
            self.rdata_valid_reg.d.next = false;
            self.tx_state.d.next = SqTxState::Idle;
            self.pl_busy.d.next = false;
            self.pl_streaming.d.next = false;
            self.tx_early.d.next = false;
            self.ak_state.d.next = SqAckState::Idle;
            self.tscan.d.next = 0.into();
            self.s_csr_ready.next = false;
            self.s_ack_ready.next = false;
            self.m_txrd_req_valid.next = false;
            self.s_txrd_ready.next = false;
            self.m_cplrd_req_valid.next = false;
            self.s_cplrd_ready.next = false;
            self.m_expect_valid.next = false;
            self.m_msg_valid.next = false;
            self.m_payload_valid.next = false;
            self.m_cpl_valid.next = false;
        }
    }
}

impl ClockedBlock for SendQueueEngine {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{settle, tick};
    use nic_abi::{csr, psn_distance, Wqe, INLINE_WORDS, PSN_MASK};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::{HashMap, HashSet, VecDeque};

    // Register numbers on the per-QP CSR side port: `(offset - 0x1000) % 0x80 / 8`.
    const SQ_BASE: u8 = (csr::QP_SQ_BASE / 8) as u8;
    const SQ_SIZE_LOG2: u8 = (csr::QP_SQ_SIZE_LOG2 / 8) as u8;
    const SQ_PI: u8 = (csr::QP_SQ_PI / 8) as u8;
    const SQ_CI: u8 = (csr::QP_SQ_CI / 8) as u8;
    const RQ_BASE: u8 = (csr::QP_RQ_BASE / 8) as u8;
    const RQ_CI: u8 = (csr::QP_RQ_CI / 8) as u8;
    const QP_REMOTE: u8 = (csr::QP_REMOTE / 8) as u8;
    const QP_CTRL: u8 = (csr::QP_CTRL / 8) as u8;
    const QP_STATUS: u8 = (csr::QP_STATUS / 8) as u8;

    const SUCCESS: u8 = CompletionStatus::SUCCESS;
    const RETRY_EXCEEDED: u8 = CompletionStatus::RETRY_EXCEEDED;
    const RESPONDER_RESTARTED: u8 = CompletionStatus::RESPONDER_RESTARTED;

    // ------------------------------------------------------------------------------------
    // Host memory: WQE rings written by the test; every other word reads as a hash of its
    // address (payload sources).
    // ------------------------------------------------------------------------------------

    fn filler(addr: u32) -> u64 {
        (addr as u64 ^ 0xA5A5_0000_0000_5A5A).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    #[derive(Default)]
    struct Memory {
        words: HashMap<u32, u64>,
    }

    impl Memory {
        fn read(&self, addr: u32) -> u64 {
            self.words
                .get(&addr)
                .copied()
                .unwrap_or_else(|| filler(addr))
        }
        fn write_wqe(&mut self, addr: u32, w: &Wqe) {
            for (i, word) in w.to_words().iter().enumerate() {
                self.words.insert(addr.wrapping_add(8 * i as u32), *word);
            }
        }
        fn wqe(&self, addr: u32) -> Wqe {
            let mut w = [0u64; 8];
            for (i, word) in w.iter_mut().enumerate() {
                *word = self.read(addr.wrapping_add(8 * i as u32));
            }
            Wqe::from_words(&w)
        }
    }

    // ------------------------------------------------------------------------------------
    // Transactions on the engine's ports.
    // ------------------------------------------------------------------------------------

    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Msg {
        opcode: u8,
        dest_node: u16,
        src_node: u16,
        dest_qp: u16,
        src_qp: u16,
        psn: u32,
        length: u32,
        vaddr: u64,
        stag: u32,
        dma_length: u32,
        immediate: u32,
        has_immediate: bool,
        invalidate: bool,
        resync: bool,
        payload: Vec<u64>,
    }

    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Expect {
        qp: usize,
        psn: u32,
        addr: u32,
        length: u32,
        atomic: bool,
    }

    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Cpl {
        opcode: u8,
        status: u8,
        qp: usize,
        byte_count: u32,
        wqe_index: u32,
        src_node: u16,
        src_qp: u16,
        wr_id: u64,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct AckEvent {
        qp: usize,
        psn: u32,
        syndrome: u8,
        response: bool,
        /// The answer carried RESYNC (the responder restarted at `psn`).
        resync: bool,
    }

    impl AckEvent {
        fn ack(qp: usize, psn: u32) -> Self {
            AckEvent {
                qp,
                psn,
                syndrome: 0,
                response: false,
                resync: false,
            }
        }
        fn nack(qp: usize, psn: u32, syndrome: Syndrome) -> Self {
            AckEvent {
                qp,
                psn,
                syndrome: syndrome as u8,
                response: false,
                resync: false,
            }
        }
        fn response(qp: usize, psn: u32) -> Self {
            AckEvent {
                qp,
                psn,
                syndrome: 0,
                response: true,
                resync: false,
            }
        }
        /// The same answer, marked: the responder restarted its PSN sequence at `psn`.
        fn resynced(self) -> Self {
            AckEvent {
                resync: true,
                ..self
            }
        }
    }

    #[derive(Clone, Copy, Debug)]
    struct CsrAccess {
        write: bool,
        qp: usize,
        reg: u8,
        wdata: u64,
    }

    // ------------------------------------------------------------------------------------
    // The requester's rules in plain Rust (docs/nic-architecture.md "Reliability" and the
    // design notes in docs/nic-blocks.md).
    // ------------------------------------------------------------------------------------

    /// The opcodes that never send a message: NOP, BIND RKEY, DELAY.
    fn is_local_op(opcode: u8) -> bool {
        matches!(opcode, NOP_OPCODE | BIND_OPCODE | DELAY_OPCODE)
    }

    /// The status a WQE completes with locally (0 = it is sent).
    fn wqe_status(w: &Wqe) -> u8 {
        if is_local_op(w.opcode) && !w.inline {
            let aligned = w.local_addr.is_multiple_of(8);
            // A BIND's length is the bound range's; a DELAY's count has 24 bits.
            let length_ok = (w.length <= MAX_MESSAGE_LENGTH || w.opcode == BIND_OPCODE)
                && (w.opcode != DELAY_OPCODE || w.remote_vaddr <= DELAY_CYCLES_MASK);
            return match (length_ok, aligned) {
                (false, _) => CompletionStatus::LOCAL_LENGTH_ERROR,
                (true, false) => CompletionStatus::LOCAL_ADDRESS_ERROR,
                (true, true) => SUCCESS,
            };
        }
        let Some(op) = WqeOpcode::from_code(w.opcode) else {
            return CompletionStatus::BAD_OPCODE;
        };
        let send = matches!(op, WqeOpcode::Send | WqeOpcode::SendImmediate);
        if w.inline && !send {
            return CompletionStatus::BAD_OPCODE;
        }
        if w.length > MAX_MESSAGE_LENGTH
            || (op.is_atomic() && w.length != 8)
            || (w.inline && w.length as usize > INLINE_MAX_BYTES)
        {
            return CompletionStatus::LOCAL_LENGTH_ERROR;
        }
        if (!w.inline && !w.local_addr.is_multiple_of(8))
            || (op.is_rdma() && !w.remote_vaddr.is_multiple_of(8))
        {
            return CompletionStatus::LOCAL_ADDRESS_ERROR;
        }
        SUCCESS
    }

    fn needs_response(w: &Wqe) -> bool {
        matches!(
            WqeOpcode::from_code(w.opcode),
            Some(WqeOpcode::RdmaRead | WqeOpcode::AtomicCompareSwap | WqeOpcode::AtomicFetchAdd)
        )
    }

    fn psn_add(a: u32, b: u32) -> u32 {
        a.wrapping_add(b) & PSN_MASK
    }

    /// The message a WQE becomes (without `resync`, which depends on the QP).
    fn message_for(qp: usize, remote: u32, node_id: u16, psn: u32, w: &Wqe, mem: &Memory) -> Msg {
        let op = WqeOpcode::from_code(w.opcode).expect("valid WQE");
        let (length, payload) = if op.is_atomic() {
            (16, vec![w.compare_add, w.swap])
        } else if op == WqeOpcode::RdmaRead {
            (0, vec![])
        } else if w.inline {
            let words = w.to_words();
            let n = w.length.div_ceil(8) as usize;
            (
                w.length,
                INLINE_WORDS[..n].iter().map(|&i| words[i]).collect(),
            )
        } else {
            let words = w.length.div_ceil(8);
            (
                w.length,
                (0..words).map(|i| mem.read(w.local_addr + 8 * i)).collect(),
            )
        };
        Msg {
            opcode: w.opcode,
            dest_node: remote as u16,
            src_node: node_id,
            dest_qp: (remote >> 16) as u16,
            src_qp: qp as u16,
            psn,
            length,
            vaddr: w.remote_vaddr,
            stag: w.stag,
            dma_length: w.length,
            immediate: if op.has_immediate() { w.immediate } else { 0 },
            has_immediate: op.has_immediate(),
            invalidate: w.invalidate,
            resync: false,
            payload,
        }
    }

    #[derive(Clone, Copy, Debug, Default)]
    struct QpModel {
        base: u32,
        size: u32,
        pi: u32,
        next: u32,
        una: u32,
        remote: u32,
        enable: bool,
        resync: bool,
        waiting: bool,
        /// `sq_una` is an RDMA READ or atomic that has been sent and has not completed
        /// (kept across go-backs).
        una_needs_response: bool,
        drain: bool,
        retry: u32,
        tstart: u32,
    }

    impl QpModel {
        fn outstanding(&self) -> bool {
            self.una != self.next
        }
        fn eligible(&self) -> bool {
            self.enable
                && self.next != self.pi
                && psn_distance(self.next, self.una) < SEND_WINDOW
                && !self.waiting
                && !(self.drain && self.outstanding())
        }
        fn wqe_addr(&self, index: u32) -> u32 {
            let mask = if self.size >= 24 {
                PSN_MASK
            } else {
                (1 << self.size) - 1
            };
            self.base.wrapping_add((index & mask) << 6)
        }
        /// The draining flag only lasts while messages are outstanding.
        fn settle(&mut self) {
            if !self.outstanding() {
                self.drain = false;
            }
        }
    }

    #[derive(Clone, Copy, Debug)]
    struct Claim {
        qp: usize,
        psn: u32,
        addr: u32,
        stale: bool,
    }

    /// A run of completions of one QP: `succ` completions with `run_status` (success, or
    /// RESPONDER_RESTARTED) from `index`, then optionally one with `final_status`.
    #[derive(Clone, Copy, Debug)]
    struct Job {
        qp: usize,
        index: u32,
        succ: u32,
        run_status: u8,
        final_status: Option<u8>,
        resync: bool,
        stale: bool,
        state: QpModel,
    }

    /// The engine at transaction level: the per-QP table, round robin, the rules for
    /// commits, acknowledgement events, timers and completions. Stepped in the order in
    /// which the engine executes its table operations (the only thing taken from the
    /// design); everything it predicts is compared with the engine's ports.
    struct Model {
        n: usize,
        qp: Vec<QpModel>,
        rr_ptr: usize,
        tscan: usize,
        node_id: u16,
        timeout: u32,
        limit: u32,
        retransmissions: u32,
        requests: u32,
        claim: Option<Claim>,
        pending_local: Option<(usize, u32, u8)>,
        /// The scheduler's holds (DELAY), as its doc comment says: the hold committed this
        /// clock (QP, deadline), the held bits as of last clock and this one, the
        /// deadlines, and the QP held last clock (its scan compare is not fresh).
        hold_now: Option<(usize, u32)>,
        held_hist: [u64; 2],
        hold_deadline: [u32; 64],
        hold_blocked: Option<usize>,
        job: Option<Job>,
        /// The QP and PSN of the messages being transmitted: from the commit until the
        /// last payload word is taken (the next message's commit can come before that).
        streaming: Vec<(usize, u32)>,
        exp_msgs: VecDeque<Msg>,
        /// The payload read each expected message makes after its grant.
        exp_msg_reads: VecDeque<Option<(u32, u32)>>,
        exp_expects: VecDeque<Expect>,
        exp_cpls: VecDeque<Cpl>,
        exp_rdata: VecDeque<u64>,
        exp_txrd: VecDeque<(u32, u32)>,
        exp_cplrd: VecDeque<(u32, u32)>,
    }

    impl Model {
        fn new(n: usize) -> Self {
            Model {
                n,
                qp: vec![QpModel::default(); MAX_QUEUE_PAIRS],
                rr_ptr: 0,
                tscan: 0,
                node_id: 0,
                timeout: 0,
                limit: 0,
                retransmissions: 0,
                requests: 0,
                claim: None,
                pending_local: None,
                hold_now: None,
                held_hist: [0; 2],
                hold_deadline: [0; 64],
                hold_blocked: None,
                job: None,
                streaming: Vec::new(),
                exp_msgs: VecDeque::new(),
                exp_msg_reads: VecDeque::new(),
                exp_expects: VecDeque::new(),
                exp_cpls: VecDeque::new(),
                exp_rdata: VecDeque::new(),
                exp_txrd: VecDeque::new(),
                exp_cplrd: VecDeque::new(),
            }
        }

        /// The scheduler's holds at the edge after clock `now`: the release scan (QP
        /// `(now - 1) mod n` compares the deadline it read), then this clock's hold.
        fn hold_clock(&mut self, now: u32) {
            let scan_q = if now == 0 {
                0
            } else {
                ((now - 1) as usize) % self.n
            };
            let mut held = self.held_hist[1];
            if self.hold_blocked != Some(scan_q)
                && now.wrapping_sub(self.hold_deadline[scan_q]) as i32 >= 0
            {
                held &= !(1 << scan_q);
            }
            self.hold_blocked = None;
            if let Some((qp, deadline)) = self.hold_now.take() {
                held |= 1 << qp;
                self.hold_deadline[qp] = deadline;
                self.hold_blocked = Some(qp);
            }
            self.held_hist = [self.held_hist[1], held];
        }

        fn elig(&self) -> u64 {
            (0..self.n)
                .filter(|&q| self.qp[q].eligible())
                .fold(0, |m, q| m | 1 << q)
        }

        /// Round robin: the first eligible QP at or after `rr_ptr`.
        /// `elig`: the eligibility register as the engine sees it (a clock behind the
        /// table's last write-back).
        fn pick(&mut self, elig: u64) -> usize {
            let masked = elig & (u64::MAX << self.rr_ptr);
            let q = if masked != 0 { masked } else { elig }.trailing_zeros() as usize;
            self.rr_ptr = (q + 1) % 64;
            self.claim = Some(Claim {
                qp: q,
                psn: 0,
                addr: 0,
                stale: false,
            });
            q
        }

        fn csr_read(&self, qp: usize, reg: u8) -> u64 {
            if qp >= self.n {
                return 0;
            }
            let s = &self.qp[qp];
            match reg {
                SQ_BASE => s.base as u64,
                SQ_SIZE_LOG2 => s.size as u64,
                SQ_PI => s.pi as u64,
                SQ_CI => s.una as u64,
                QP_REMOTE => s.remote as u64,
                QP_CTRL => s.enable as u64,
                QP_STATUS => s.next as u64 | (s.waiting as u64) << 49 | (s.retry as u64) << 52,
                _ => 0,
            }
        }

        fn csr_write(&mut self, qp: usize, reg: u8, wdata: u64, now: u32) {
            if qp >= self.n {
                return;
            }
            let w = wdata as u32;
            let s = &mut self.qp[qp];
            // Bit 1 resets the QP, bit 2 its send side only: the same here.
            let reset = reg == QP_CTRL && w & 6 != 0;
            match reg {
                SQ_BASE => s.base = w,
                SQ_SIZE_LOG2 => s.size = w & 31,
                SQ_PI => s.pi = w & PSN_MASK,
                QP_REMOTE => s.remote = w,
                QP_CTRL => {
                    s.enable = w & 1 != 0;
                    if reset {
                        let start = (w >> 8) & PSN_MASK;
                        (s.pi, s.next, s.una) = (start, start, start);
                        s.resync = true;
                        s.retry = 0;
                        s.waiting = false;
                        s.una_needs_response = false;
                        s.drain = false;
                        s.tstart = now;
                    }
                }
                _ => {}
            }
            s.settle();
            if let Some(c) = self.claim.as_mut() {
                if c.qp == qp && (reg == SQ_BASE || reg == SQ_SIZE_LOG2 || reset) {
                    c.stale = true;
                }
            }
            if let Some(j) = self.job.as_mut() {
                if j.qp == qp && reset {
                    j.stale = true;
                }
            }
        }

        fn claim(&mut self, qp: usize, mem: &Memory) -> bool {
            let c = self.claim.as_mut().expect("claim without pick");
            assert_eq!(c.qp, qp, "claimed QP");
            let s = &mut self.qp[qp];
            let ok = qp < self.n && s.eligible();
            c.psn = s.next;
            c.addr = s.wqe_addr(s.next);
            s.settle();
            if ok {
                // Words 0-4, and words 5-7 in a second read if the WQE uses them.
                self.exp_txrd.push_back((c.addr, Wqe::SHORT_WORDS as u32));
                if !mem.wqe(c.addr).is_short() {
                    self.exp_txrd
                        .push_back((c.addr + 8 * Wqe::SHORT_WORDS as u32, 3));
                }
            } else {
                self.claim = None;
            }
            ok
        }

        fn commit(&mut self, qp: usize, mem: &Memory, now: u32) -> bool {
            let c = self.claim.take().expect("commit without claim");
            assert_eq!(c.qp, qp, "committed QP");
            let w = mem.wqe(c.addr);
            let status = wqe_status(&w);
            let local = status != SUCCESS || is_local_op(w.opcode);
            let need_empty = local || needs_response(&w);
            let s = &mut self.qp[qp];
            let base_ok = qp < self.n && s.eligible() && s.next == c.psn && !c.stale;
            let ok = base_ok && (!need_empty || !s.outstanding());
            if ok {
                let resync = s.resync && !s.outstanding();
                if !s.outstanding() {
                    s.tstart = now;
                }
                s.next = psn_add(s.next, 1);
                if local {
                    s.drain = true;
                    self.pending_local = Some((qp, c.psn, status));
                    if w.opcode == DELAY_OPCODE && status == SUCCESS {
                        self.hold_now = Some((qp, now.wrapping_add(w.remote_vaddr as u32)));
                    }
                } else {
                    let mut m = message_for(qp, s.remote, self.node_id, c.psn, &w, mem);
                    m.resync = resync;
                    if needs_response(&w) {
                        s.waiting = true;
                        s.una_needs_response = true;
                        self.exp_expects.push_back(Expect {
                            qp,
                            psn: c.psn,
                            addr: w.local_addr,
                            length: w.length,
                            atomic: WqeOpcode::from_code(w.opcode).unwrap().is_atomic(),
                        });
                    }
                    let read = (!needs_response(&w) && w.length > 0 && !w.inline)
                        .then(|| (w.local_addr, w.length.div_ceil(8)));
                    match read {
                        // A payload that fits the buffer is read before the grant.
                        Some(r) if r.1 <= PAYLOAD_BUFFER_DEPTH as u32 => {
                            self.exp_txrd.push_back(r);
                            self.exp_msg_reads.push_back(None);
                        }
                        _ => self.exp_msg_reads.push_back(read),
                    }
                    self.exp_msgs.push_back(m);
                    self.streaming.push((qp, c.psn));
                }
            } else if base_ok {
                s.drain = true;
            }
            s.settle();
            ok
        }

        /// Starts a job of completions (if it has any) and predicts its first completion.
        fn start_job(
            &mut self,
            qp: usize,
            succ: u32,
            run_status: u8,
            final_status: Option<u8>,
            resync: bool,
            mem: &Memory,
        ) -> bool {
            if succ == 0 && final_status.is_none() {
                return false;
            }
            let state = self.qp[qp];
            self.job = Some(Job {
                qp,
                index: state.una,
                succ,
                run_status,
                final_status,
                resync,
                stale: false,
                state,
            });
            self.predict_completion(mem);
            true
        }

        fn predict_completion(&mut self, mem: &Memory) {
            let j = self.job.as_ref().unwrap();
            let addr = j.state.wqe_addr(j.index);
            let w = mem.wqe(addr);
            self.exp_cplrd.push_back((addr, 2));
            self.exp_cpls.push_back(Cpl {
                opcode: w.opcode,
                status: if j.succ > 0 {
                    j.run_status
                } else {
                    j.final_status.unwrap()
                },
                qp: j.qp,
                byte_count: w.length,
                wqe_index: j.index,
                src_node: j.state.remote as u16,
                src_qp: (j.state.remote >> 16) as u16,
                wr_id: w.wr_id,
            });
        }

        fn eval(&mut self, ev: AckEvent, mem: &Memory, now: u32) -> bool {
            let limit = self.limit;
            let s = &mut self.qp[ev.qp];
            let d_evt = psn_distance(ev.psn, s.una);
            let success = ev.response || ev.syndrome == 0;
            let retryable =
                !success && Syndrome::from_code(ev.syndrome).is_some_and(|syn| syn.is_retryable());
            // A final NACK up to SEND_WINDOW before sq_una answers a completed PSN (a
            // refusal reported again): stale, not foreign.
            let recent_final = !retryable && psn_distance(s.una, ev.psn) <= SEND_WINDOW;
            if ev.qp < self.n && s.outstanding() && !success && d_evt > SEND_WINDOW && !recent_final
            {
                // A NACK for a PSN this QP has not sent lately: go back to sq_una as on a
                // timeout; only a retryable one counts a retry.
                self.retransmissions += 1;
                s.tstart = now;
                s.waiting = false;
                s.next = s.una;
                if !retryable {
                    s.settle();
                    return false;
                }
                let count = s.retry + 1;
                if count > limit {
                    s.next = psn_add(s.una, 1);
                    s.drain = true;
                    s.retry = 0;
                    s.settle();
                    return self.start_job(ev.qp, 0, SUCCESS, Some(RETRY_EXCEEDED), true, mem);
                }
                s.retry = count;
                s.settle();
                return false;
            }
            let sent = psn_distance(s.pi, s.una).min(SEND_WINDOW);
            if ev.qp >= self.n || d_evt >= sent {
                s.settle();
                return false; // stale
            }
            // Implied NAK: an ACK, or a NACK for a later PSN, while sq_una is a READ or
            // atomic already sent says its response was lost (unless RESYNC for a later
            // PSN: the READ or atomic completes with RESPONDER_RESTARTED below). Nothing
            // completes; go back to sq_una and count a retry, unless the QP already went
            // back to it.
            let restarted = ev.resync && d_evt != 0;
            if s.una_needs_response
                && !ev.response
                && !restarted
                && (ev.syndrome == 0 || d_evt != 0)
            {
                if !s.outstanding() {
                    s.settle();
                    return false;
                }
                self.retransmissions += 1;
                s.tstart = now;
                s.waiting = false;
                s.next = s.una;
                let count = s.retry + 1;
                if count > limit {
                    s.next = psn_add(s.una, 1);
                    s.drain = true;
                    s.retry = 0;
                    s.settle();
                    return self.start_job(ev.qp, 0, SUCCESS, Some(RETRY_EXCEEDED), true, mem);
                }
                s.retry = count;
                s.settle();
                return false;
            }
            // Sent before a go-back: the answer still holds.
            let ahead = d_evt >= psn_distance(s.next, s.una);
            let old_retry = s.retry;
            s.waiting = false;
            s.tstart = now;
            s.retry = 0;
            // The responder restarted at ev.psn: the WQEs before it were not applied there.
            let run_status = if restarted {
                RESPONDER_RESTARTED
            } else {
                SUCCESS
            };
            if success && ahead {
                s.next = psn_add(ev.psn, 1);
            }
            let (succ, final_status, resync) = if success && restarted {
                (d_evt, Some(SUCCESS), false)
            } else if success {
                (d_evt + 1, None, false)
            } else if retryable {
                self.retransmissions += 1;
                s.next = ev.psn;
                let count = if d_evt != 0 { 0 } else { old_retry } + 1;
                if count > limit {
                    s.next = psn_add(ev.psn, 1);
                    s.drain = true;
                    (d_evt, Some(RETRY_EXCEEDED), true)
                } else {
                    s.retry = count;
                    (d_evt, None, false)
                }
            } else {
                // p is consumed; what followed may have been dropped: resend from p+1.
                let p1 = psn_add(ev.psn, 1);
                if s.next != p1 {
                    self.retransmissions += 1;
                    s.next = p1;
                }
                // PORT_DOWN is the fabric's: the responder never saw p, which may have
                // been the QP's RESYNC message, so the resync stays pending.
                (
                    d_evt,
                    Some(ev.syndrome),
                    ev.syndrome == Syndrome::PortDown as u8,
                )
            };
            s.settle();
            self.start_job(ev.qp, succ, run_status, final_status, resync, mem)
        }

        fn eval_local(&mut self, mem: &Memory) -> bool {
            let (qp, psn, status) = self
                .pending_local
                .take()
                .expect("no local completion pending");
            let s = &mut self.qp[qp];
            s.settle();
            let ok = qp < self.n && s.una == psn && s.outstanding();
            ok && self.start_job(qp, 0, SUCCESS, Some(status), true, mem)
        }

        fn advance(&mut self, qp: usize, mem: &Memory, now: u32) -> bool {
            let j = self.job.as_mut().expect("advance without a job");
            assert_eq!(j.qp, qp, "advanced QP");
            let s = &mut self.qp[qp];
            let ok = qp < self.n && s.una == j.index && !j.stale;
            if ok {
                let was_outstanding = s.outstanding();
                s.una = psn_add(j.index, 1);
                s.una_needs_response = false;
                if !was_outstanding {
                    s.next = s.una;
                }
                s.resync = j.succ == 0 && j.resync;
                s.tstart = now;
            }
            s.settle();
            if !ok {
                self.job = None;
                return false;
            }
            if j.succ > 0 {
                j.succ -= 1;
            } else {
                j.final_status = None;
            }
            j.index = psn_add(j.index, 1);
            if j.succ == 0 && j.final_status.is_none() {
                self.job = None;
            } else {
                self.predict_completion(mem);
            }
            true
        }

        /// Returns (go-back-N happened, a RETRY_EXCEEDED job started).
        fn timer(&mut self, qp: usize, mem: &Memory, now: u32) -> (bool, bool) {
            assert_eq!(qp, self.tscan, "timer scan order");
            self.tscan = (self.tscan + 1) % self.n;
            let (timeout, limit) = (self.timeout, self.limit);
            let streaming = self.streaming.contains(&(qp, self.qp[qp].una));
            let s = &mut self.qp[qp];
            let mut fired = (false, false);
            if qp < self.n && s.outstanding() {
                if streaming {
                    s.tstart = now;
                } else if timeout != 0 && now.wrapping_sub(s.tstart) >= timeout {
                    self.retransmissions += 1;
                    s.tstart = now;
                    s.waiting = false;
                    s.next = s.una;
                    let count = s.retry + 1;
                    if count > limit {
                        s.next = psn_add(s.una, 1);
                        s.drain = true;
                        s.retry = 0;
                        s.settle();
                        fired = (
                            true,
                            self.start_job(qp, 0, SUCCESS, Some(RETRY_EXCEEDED), true, mem),
                        );
                    } else {
                        s.retry = count;
                        fired = (true, false);
                    }
                }
            }
            self.qp[qp].settle();
            fired
        }
    }

    // ------------------------------------------------------------------------------------
    // Testbench: DMA servers, sources and sinks with idle gaps and back-pressure, the model
    // in lockstep, and optionally a responder and a driver closing the loop.
    // ------------------------------------------------------------------------------------

    #[derive(Clone, Copy, Debug)]
    struct Knobs {
        /// Idle clocks on every source the bench drives (CSR, events, DMA data).
        gaps: bool,
        /// Random `ready` on every sink the bench drives (messages, payload, expect,
        /// completions, DMA requests).
        backpressure: bool,
        /// DMA read latency range (clocks from request to first beat).
        latency: (u64, u64),
    }

    const SMOOTH: Knobs = Knobs {
        gaps: false,
        backpressure: false,
        latency: (2, 3),
    };
    const ROUGH: Knobs = Knobs {
        gaps: true,
        backpressure: true,
        latency: (1, 12),
    };

    struct Burst {
        addr: u32,
        left: u32,
        ready_at: u64,
    }

    #[derive(Default)]
    struct DmaServer {
        bursts: VecDeque<Burst>,
        offer: Option<(u64, bool)>,
    }

    impl DmaServer {
        fn drive(&mut self, rng: &mut ChaCha8Rng, knobs: Knobs, cycle: u64, mem: &Memory) -> bool {
            if self.offer.is_none() {
                if let Some(b) = self.bursts.front() {
                    if b.ready_at <= cycle && (!knobs.gaps || rng.gen_bool(0.75)) {
                        self.offer = Some((mem.read(b.addr), b.left == 1));
                    }
                }
            }
            self.bursts.len() < 4 && (!knobs.backpressure || rng.gen_bool(0.7))
        }
        fn beat_taken(&mut self) {
            let b = self.bursts.front_mut().unwrap();
            b.addr += 8;
            b.left -= 1;
            if b.left == 0 {
                self.bursts.pop_front();
            }
            self.offer = None;
        }
        fn request(&mut self, addr: u32, words: u32, ready_at: u64) {
            assert!(
                words >= 1 && addr.is_multiple_of(8),
                "bad DMA request {addr:#x} x {words}"
            );
            self.bursts.push_back(Burst {
                addr,
                left: words,
                ready_at,
            });
        }
    }

    /// What the responder did with a request PSN.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Fate {
        Applied,
        Refused(u8),
    }

    #[derive(Default)]
    struct ResponderQp {
        expected: u32,
        synced: bool,
        nak_sent: bool,
        fates: HashMap<u32, Fate>,
        /// The last refused PSN and its syndrome: its duplicate is refused again, and older
        /// duplicates are acknowledged only up to the PSN before it (a simpler responder
        /// than "Refused PSNs": it answers through `s_ack` events, so no AETH report).
        refused: Option<(u32, u8)>,
        /// PSNs a read or atomic response was sent for (not lost).
        responded: HashSet<u32>,
    }

    /// A remote responder following the responder rules of docs/nic-architecture.md, with
    /// random losses, refusals and delays; it answers through `s_ack` events.
    struct Responder {
        qps: Vec<ResponderQp>,
        p_drop: f64,
        p_refuse: f64,
        p_corrupt: f64,
        p_ack_loss: f64,
        delay: (u64, u64),
    }

    impl Responder {
        fn new(n: usize) -> Self {
            Responder {
                qps: (0..n).map(|_| ResponderQp::default()).collect(),
                p_drop: 0.04,
                p_refuse: 0.04,
                p_corrupt: 0.03,
                p_ack_loss: 0.1,
                delay: (3, 80),
            }
        }

        /// Answers to one received request message.
        fn receive(&mut self, m: &Msg, rng: &mut ChaCha8Rng) -> Vec<AckEvent> {
            let q = m.src_qp as usize;
            let r = &mut self.qps[q];
            if rng.gen_bool(self.p_drop) {
                return vec![]; // lost on the way
            }
            let just_before = |p: u32, e: u32| (1..=SEND_WINDOW).contains(&psn_distance(e, p));
            if r.synced && rng.gen_bool(self.p_corrupt) {
                // A cell of the message failed the reassembler's checks (whatever its PSN:
                // a resent READ too): NACK CRC_OR_MALFORMED with the expected PSN, once
                // per gap.
                if r.nak_sent {
                    return vec![];
                }
                r.nak_sent = true;
                return vec![AckEvent::nack(q, r.expected, Syndrome::CrcOrMalformed)];
            }
            // A resync adopts the PSN; the answer to this message says so (RESYNC) unless
            // the request asked for it (then it is the requester's oldest PSN).
            let resynced = !r.synced || (m.resync && !just_before(m.psn, r.expected));
            let marked = resynced && !m.resync;
            if resynced {
                r.expected = m.psn;
                r.synced = true;
                r.nak_sent = false;
                r.refused = None;
            }
            if r.refused
                .is_some_and(|(p, _)| psn_distance(r.expected, p) > SEND_WINDOW)
            {
                r.refused = None;
            }
            let is_response = needs_response(&Wqe {
                opcode: m.opcode,
                ..Default::default()
            });
            let mut out = vec![];
            if m.psn == r.expected {
                r.expected = psn_add(r.expected, 1);
                r.nak_sent = false;
                if rng.gen_bool(self.p_refuse) {
                    let syn = [
                        Syndrome::ReceiverNotReady,
                        Syndrome::InvalidRequest,
                        Syndrome::RemoteAccessError,
                        Syndrome::RemoteOperationalError,
                        Syndrome::RdmaDisabled,
                        Syndrome::PortDown,
                    ][rng.gen_range(0..6)];
                    assert!(r.fates.insert(m.psn, Fate::Refused(syn as u8)).is_none());
                    r.refused = Some((m.psn, syn as u8));
                    out.push(AckEvent::nack(q, m.psn, syn));
                } else {
                    assert!(
                        r.fates.insert(m.psn, Fate::Applied).is_none(),
                        "QP {q} PSN {:#x} applied twice",
                        m.psn
                    );
                    if !rng.gen_bool(self.p_ack_loss) {
                        out.push(if is_response {
                            r.responded.insert(m.psn);
                            AckEvent::response(q, m.psn)
                        } else {
                            AckEvent::ack(q, m.psn)
                        });
                    }
                }
            } else if (1..1 << 23).contains(&psn_distance(r.expected, m.psn)) {
                // Duplicate: not applied again, acknowledged again.
                let lost = rng.gen_bool(self.p_ack_loss);
                let before_refused = r
                    .refused
                    .filter(|&(p, _)| (1..1 << 23).contains(&psn_distance(p, m.psn)));
                let ev = match (r.refused, r.fates.get(&m.psn)) {
                    (Some((p, s)), _) if p == m.psn => AckEvent {
                        qp: q,
                        psn: m.psn,
                        syndrome: s,
                        response: false,
                        resync: false,
                    },
                    (_, Some(Fate::Applied)) if is_response => {
                        if !lost {
                            r.responded.insert(m.psn);
                        }
                        AckEvent::response(q, m.psn)
                    }
                    _ => match before_refused {
                        Some((p, _)) => AckEvent::ack(q, psn_add(p, PSN_MASK)),
                        None => AckEvent::ack(q, psn_add(r.expected, PSN_MASK)),
                    },
                };
                if !lost {
                    out.push(ev);
                }
            } else if !r.nak_sent {
                r.nak_sent = true;
                out.push(AckEvent::nack(q, r.expected, Syndrome::SequenceError));
            }
            if marked {
                for ev in out.iter_mut() {
                    ev.resync = true;
                }
            }
            out
        }
    }

    /// A driver posting random WQEs on every QP and consuming the completions.
    struct DriverQp {
        start: u32,
        size: u32,
        base: u32,
        wqes: Vec<Wqe>,
        posted: usize,
        completed: usize,
    }

    fn random_wqe(rng: &mut ChaCha8Rng, max_len: u32) -> Wqe {
        let ops = WqeOpcode::ALL;
        let op = ops[rng.gen_range(0..ops.len())];
        let mut w = Wqe {
            opcode: op as u8,
            invalidate: rng.gen_bool(0.2),
            length: match op {
                WqeOpcode::AtomicCompareSwap | WqeOpcode::AtomicFetchAdd => 8,
                _ if rng.gen_bool(0.1) => 0,
                _ => rng.gen_range(1..=max_len),
            },
            wr_id: rng.gen(),
            local_addr: 0x0010_0000 + 8 * rng.gen_range(0..0x4000),
            remote_vaddr: rng.gen::<u64>() & !7,
            stag: rng.gen(),
            immediate: rng.gen(),
            compare_add: rng.gen(),
            swap: rng.gen(),
            reserved: rng.gen(),
            ..Wqe::default()
        };
        // Inline SENDs (the payload in the WQE, any local address), and now and then a bad
        // inline WQE: another opcode, or too long.
        if matches!(op, WqeOpcode::Send | WqeOpcode::SendImmediate) && rng.gen_bool(0.3) {
            w.inline = true;
            w.length = rng.gen_range(0..=INLINE_MAX_BYTES as u32);
            w.local_addr = rng.gen();
        }
        match rng.gen_range(0..100) {
            0..=1 => w.opcode = [0x02, 0x15, 0x20, 0xFF][rng.gen_range(0..4)],
            8..=9 => {
                w.opcode = NOP_OPCODE;
                w.inline = false;
            }
            10 => {
                // A BIND RKEY (any range length), or a DELAY: mostly short, now and then
                // with bits above its 24-bit count (LOCAL_LENGTH_ERROR, no hold).
                w.inline = false;
                if rng.gen_bool(0.5) {
                    w.opcode = BIND_OPCODE;
                    w.length = rng.gen();
                } else {
                    w.opcode = DELAY_OPCODE;
                    w.remote_vaddr = match rng.gen_range(0..8) {
                        0 => 1 << rng.gen_range(24..64),
                        1 => rng.gen_range(100..300),
                        _ => rng.gen_range(0..40),
                    };
                }
            }
            2 => w.length = MAX_MESSAGE_LENGTH + 1 + rng.gen_range(0..1000),
            3 if op.is_atomic() => w.length = 16,
            4 => w.local_addr += rng.gen_range(1..8),
            5 if op.is_rdma() => w.remote_vaddr |= rng.gen_range(1..8),
            6 if w.inline => w.length = INLINE_MAX_BYTES as u32 + rng.gen_range(1..64),
            7 => w.inline = true,
            _ => {}
        }
        w
    }

    struct Bench {
        uut: SendQueueEngine,
        rng: ChaCha8Rng,
        knobs: Knobs,
        cycle: u64,
        now: u32,
        mem: Memory,
        model: Model,
        txrd: DmaServer,
        cplrd: DmaServer,
        csr_queue: VecDeque<CsrAccess>,
        csr_offer: Option<CsrAccess>,
        csr_accepted: VecDeque<CsrAccess>,
        csr_reads: Vec<u64>,
        acks: VecDeque<(u64, AckEvent)>,
        ack_offer: Option<AckEvent>,
        acks_accepted: VecDeque<AckEvent>,
        /// Messages (with payload) in the order the engine sent them.
        sent: Vec<Msg>,
        sent_cycle: Vec<u64>,
        cur: Option<(Msg, usize)>,
        new_msgs: VecDeque<Msg>,
        expects: Vec<Expect>,
        cpls: Vec<Cpl>,
        new_cpls: VecDeque<Cpl>,
        payload_cycles: Vec<u64>,
        /// Posted PSNs per QP (next doorbell value).
        pi: Vec<u32>,
        // Held-output checks: what was offered and not taken last clock.
        held_msg: Option<Msg>,
        held_expect: Option<Expect>,
        held_cpl: Option<Cpl>,
        held_payload: Option<(u64, bool)>,
        held_txrd: Option<(u32, u32)>,
        held_cplrd: Option<(u32, u32)>,
        timer_fires: usize,
        local_evals: usize,
        /// Most messages outstanding on one QP so far.
        max_outstanding: u32,
        /// The model's eligibility at the end of the last three clocks (oldest first).
        elig_history: [u64; 3],
        /// The QP of the operation that executed last clock, if one did.
        executed_last_clock: Option<usize>,
        /// Operations granted while another one executed.
        overlapped_ops: usize,
    }

    impl Bench {
        fn new(queue_pairs: usize, seed: u64, knobs: Knobs) -> Self {
            let mut uut = SendQueueEngine::new(queue_pairs);
            uut.connect_all();
            let mut b = Bench {
                uut,
                rng: ChaCha8Rng::seed_from_u64(seed),
                knobs,
                cycle: 0,
                now: 0,
                mem: Memory::default(),
                model: Model::new(queue_pairs),
                txrd: DmaServer::default(),
                cplrd: DmaServer::default(),
                csr_queue: VecDeque::new(),
                csr_offer: None,
                csr_accepted: VecDeque::new(),
                csr_reads: vec![],
                acks: VecDeque::new(),
                ack_offer: None,
                acks_accepted: VecDeque::new(),
                sent: vec![],
                sent_cycle: vec![],
                cur: None,
                new_msgs: VecDeque::new(),
                expects: vec![],
                cpls: vec![],
                new_cpls: VecDeque::new(),
                payload_cycles: vec![],
                pi: vec![0; queue_pairs],
                held_msg: None,
                held_expect: None,
                held_cpl: None,
                held_payload: None,
                held_txrd: None,
                held_cplrd: None,
                timer_fires: 0,
                local_evals: 0,
                max_outstanding: 0,
                elig_history: [0; 3],
                executed_last_clock: None,
                overlapped_ops: 0,
            };
            b.set_cfg(0x0042, 0, 7);
            b.uut.reset.next = true;
            tick(&mut b.uut);
            b.uut.reset.next = false;
            b.run(70); // the table is cleared after reset
            b
        }

        fn set_cfg(&mut self, node_id: u16, timeout: u32, limit: u32) {
            self.uut.cfg_node_id.next = (node_id as u64).to_bits();
            self.uut.cfg_retry_timeout.next = (timeout as u64).to_bits();
            self.uut.cfg_retry_limit.next = (limit as u64).to_bits();
            (self.model.node_id, self.model.timeout, self.model.limit) = (node_id, timeout, limit);
        }

        fn csr(&mut self, write: bool, qp: usize, reg: u8, wdata: u64) {
            self.csr_queue.push_back(CsrAccess {
                write,
                qp,
                reg,
                wdata,
            });
        }

        /// Configure and reset a QP: ring at `base` with `2^size` WQEs, remote node/QP,
        /// start PSN, enabled.
        fn setup_qp(&mut self, qp: usize, base: u32, size: u32, remote: u32, start: u32) {
            self.csr(true, qp, SQ_BASE, base as u64);
            self.csr(true, qp, SQ_SIZE_LOG2, size as u64);
            self.csr(true, qp, QP_REMOTE, remote as u64);
            self.csr(true, qp, QP_CTRL, 1 | 2 | (start as u64) << 8);
            if qp < self.pi.len() {
                self.pi[qp] = start;
            }
        }

        /// Write WQEs into QP `qp`'s ring (as configured in the model) and ring the doorbell.
        fn post(&mut self, qp: usize, wqes: &[Wqe]) {
            self.flush_csr();
            let s = self.model.qp[qp];
            for w in wqes {
                self.mem.write_wqe(s.wqe_addr(self.pi[qp]), w);
                self.pi[qp] = psn_add(self.pi[qp], 1);
            }
            self.csr(true, qp, SQ_PI, self.pi[qp] as u64);
        }

        fn flush_csr(&mut self) {
            let mut n = 0;
            while !self.csr_queue.is_empty()
                || self.csr_offer.is_some()
                || !self.csr_accepted.is_empty()
            {
                self.step();
                n += 1;
                assert!(n < 10_000, "CSR port stalled");
            }
        }

        fn read_csr(&mut self, qp: usize, reg: u8) -> u64 {
            self.flush_csr();
            let before = self.csr_reads.len();
            self.csr(false, qp, reg, 0);
            self.run_until(|b| b.csr_reads.len() > before, 1000);
            self.csr_reads[before]
        }

        fn push_ack(&mut self, ev: AckEvent) {
            self.acks.push_back((self.cycle, ev));
        }

        fn run(&mut self, cycles: u64) {
            for _ in 0..cycles {
                self.step();
            }
        }

        fn run_until(&mut self, mut done: impl FnMut(&Bench) -> bool, max: u64) {
            let start = self.cycle;
            while !done(self) {
                assert!(
                    self.cycle - start < max,
                    "condition not reached in {max} clocks"
                );
                self.step();
            }
        }

        fn step(&mut self) {
            let knobs = self.knobs;
            // Inputs.
            if self.csr_offer.is_none() && (!knobs.gaps || self.rng.gen_bool(0.6)) {
                self.csr_offer = self.csr_queue.pop_front();
            }
            let u = &mut self.uut;
            u.s_csr_valid.next = self.csr_offer.is_some();
            if let Some(a) = self.csr_offer {
                u.s_csr_write.next = a.write;
                u.s_csr_qp.next = (a.qp as u64).to_bits();
                u.s_csr_reg.next = (a.reg as u64).to_bits();
                u.s_csr_wdata.next = a.wdata.to_bits();
            }
            if self.ack_offer.is_none() {
                if let Some(&(t, ev)) = self.acks.front() {
                    if t <= self.cycle && (!knobs.gaps || self.rng.gen_bool(0.6)) {
                        self.ack_offer = Some(ev);
                        self.acks.pop_front();
                    }
                }
            }
            u.s_ack_valid.next = self.ack_offer.is_some();
            if let Some(ev) = self.ack_offer {
                u.s_ack_qp.next = (ev.qp as u64).to_bits();
                u.s_ack_psn.next = (ev.psn as u64).to_bits();
                u.s_ack_syndrome.next = (ev.syndrome as u64).to_bits();
                u.s_ack_response.next = ev.response;
                u.s_ack_resync.next = ev.resync;
            }
            let tx_req_ready = self.txrd.drive(&mut self.rng, knobs, self.cycle, &self.mem);
            u.m_txrd_req_ready.next = tx_req_ready;
            u.s_txrd_valid.next = self.txrd.offer.is_some();
            let (d, l) = self.txrd.offer.unwrap_or((0, false));
            u.s_txrd_data.next = d.to_bits();
            u.s_txrd_last.next = l;
            let cpl_req_ready = self
                .cplrd
                .drive(&mut self.rng, knobs, self.cycle, &self.mem);
            u.m_cplrd_req_ready.next = cpl_req_ready;
            u.s_cplrd_valid.next = self.cplrd.offer.is_some();
            let (d, l) = self.cplrd.offer.unwrap_or((0, false));
            u.s_cplrd_data.next = d.to_bits();
            u.s_cplrd_last.next = l;
            let bp = knobs.backpressure;
            u.m_msg_ready.next = !bp || self.rng.gen_bool(0.5);
            u.m_payload_ready.next = !bp || self.rng.gen_bool(0.7);
            u.m_expect_ready.next = !bp || self.rng.gen_bool(0.5);
            u.m_cpl_ready.next = !bp || self.rng.gen_bool(0.5);
            u.reset.next = false;
            settle(u);
            self.check_model();
            self.model.hold_clock(self.now);
            self.observe();
            tick(&mut self.uut);
            self.cycle += 1;
            self.now = self.now.wrapping_add(1);
        }

        /// Step the model in the engine's operation order and compare.
        fn check_model(&mut self) {
            // An operation granted while another executes is for another QP.
            let state = self.uut.eng_state.q.val();
            let qp = self.uut.op_qp.q.val().index();
            if let Some(executed) = self.executed_last_clock {
                if state == SqEngineState::Read {
                    assert_ne!(
                        qp, executed,
                        "overlapped operations on one QP at clock {}",
                        self.cycle
                    );
                    self.overlapped_ops += 1;
                }
            }
            self.executed_last_clock = (state == SqEngineState::Exec).then_some(qp);
            self.check_model_clock();
            self.elig_history = [
                self.elig_history[1],
                self.elig_history[2],
                self.model.elig(),
            ];
        }

        /// `elig_history[1]` is the model's eligibility after the operations executed up to
        /// two clocks ago: the engine's `elig` register follows the table's write-back a
        /// clock later; the round robin picks from the register as of last clock
        /// (`elig_history[0]`).
        fn check_model_clock(&mut self) {
            let u = &self.uut;
            let m = &mut self.model;
            let elig = self.elig_history[1];
            // A held QP (DELAY) is never picked: the round robin sees the bits without it.
            let elig_picked = self.elig_history[0] & !m.held_hist[0];
            assert_eq!(u.now.q.val().to_u32(), self.now, "cycle counter");
            assert_eq!(
                u.scheduler.eligible.q.val().to_u64(),
                elig,
                "eligible QPs differ at clock {}",
                self.cycle
            );
            assert_eq!(
                u.stat_retransmissions.val().to_u32(),
                m.retransmissions,
                "stat_retransmissions"
            );
            assert_eq!(
                u.stat_requests_sent.val().to_u32(),
                m.requests,
                "stat_requests_sent"
            );
            if u.tx_pick_ok.val() && elig_picked != 0 {
                let q = m.pick(elig_picked);
                assert_eq!(
                    u.scheduler.m_pick_qp.val().index(),
                    q,
                    "round-robin pick at clock {}",
                    self.cycle
                );
            }
            let most =
                m.qp.iter()
                    .map(|s| psn_distance(s.next, s.una))
                    .max()
                    .unwrap();
            self.max_outstanding = self.max_outstanding.max(most);
            if u.eng_state.q.val() != SqEngineState::Exec {
                return;
            }
            let qp = u.op_qp.q.val().index();
            let now = self.now;
            let op = u.op.q.val();
            match op {
                SqOp::CsrRead | SqOp::CsrWrite => {
                    let a = self
                        .csr_accepted
                        .pop_front()
                        .expect("CSR operation without access");
                    assert_eq!((a.qp, a.write), (qp, op == SqOp::CsrWrite));
                    if a.write {
                        m.csr_write(qp, a.reg, a.wdata, now);
                    } else {
                        m.exp_rdata.push_back(m.csr_read(qp, a.reg));
                    }
                }
                SqOp::Claim => {
                    assert_eq!(
                        u.ex_ok.val(),
                        m.claim(qp, &self.mem),
                        "claim of QP {qp} at clock {}",
                        self.cycle
                    );
                }
                SqOp::Commit => {
                    let ok = m.commit(qp, &self.mem, now);
                    assert_eq!(
                        u.ex_ok.val(),
                        ok,
                        "commit on QP {qp} at clock {}",
                        self.cycle
                    );
                }
                SqOp::Eval => {
                    let job = if u.ak_local.q.val() {
                        self.local_evals += 1;
                        m.eval_local(&self.mem)
                    } else {
                        let ev = self
                            .acks_accepted
                            .pop_front()
                            .expect("evaluation without event");
                        assert_eq!(ev.qp, qp);
                        m.eval(ev, &self.mem, now)
                    };
                    assert_eq!(
                        u.ex_has_job.val(),
                        job,
                        "evaluation on QP {qp} at clock {}",
                        self.cycle
                    );
                }
                SqOp::Advance => {
                    let ok = m.advance(qp, &self.mem, now);
                    assert_eq!(
                        u.ex_ok.val(),
                        ok,
                        "advance on QP {qp} at clock {}",
                        self.cycle
                    );
                }
                SqOp::Timer => {
                    let (fired, job) = m.timer(qp, &self.mem, now);
                    self.timer_fires += fired as usize;
                    assert_eq!(
                        u.ex_retx.val(),
                        fired,
                        "timer of QP {qp} at clock {}",
                        self.cycle
                    );
                    assert_eq!(u.ex_has_job.val(), job, "timer job of QP {qp}");
                }
            }
        }

        fn msg_fields(&self) -> Msg {
            let u = &self.uut;
            Msg {
                opcode: u.m_msg_opcode.val().to_u8(),
                dest_node: u.m_msg_dest_node.val().to_u16(),
                src_node: u.m_msg_src_node.val().to_u16(),
                dest_qp: u.m_msg_dest_qp.val().to_u16(),
                src_qp: u.m_msg_src_qp.val().to_u16(),
                psn: u.m_msg_psn.val().to_u32(),
                length: u.m_msg_length.val().to_u32(),
                vaddr: u.m_msg_vaddr.val().to_u64(),
                stag: u.m_msg_stag.val().to_u32(),
                dma_length: u.m_msg_dma_length.val().to_u32(),
                immediate: u.m_msg_immediate.val().to_u32(),
                has_immediate: u.m_msg_has_immediate.val(),
                invalidate: u.m_msg_invalidate.val(),
                resync: u.m_msg_resync.val(),
                payload: vec![],
            }
        }

        /// Handshakes of this clock (after settling, before the edge).
        fn observe(&mut self) {
            let cycle = self.cycle;
            // CSR.
            if self.uut.s_csr_valid.val() && self.uut.s_csr_ready.val() {
                self.csr_accepted.push_back(self.csr_offer.take().unwrap());
            }
            if self.uut.m_csr_rdata_valid.val() {
                let want = self
                    .model
                    .exp_rdata
                    .pop_front()
                    .expect("unexpected CSR read data");
                let got = self.uut.m_csr_rdata.val().to_u64();
                assert_eq!(got, want, "CSR read data");
                self.csr_reads.push(got);
            }
            // Acknowledgement events.
            if self.uut.s_ack_valid.val() && self.uut.s_ack_ready.val() {
                self.acks_accepted.push_back(self.ack_offer.take().unwrap());
            }
            // Tx read client.
            let u = &self.uut;
            if u.m_txrd_req_valid.val() {
                let req = (
                    u.m_txrd_req_addr.val().to_u32(),
                    u.m_txrd_req_words.val().to_u32(),
                );
                if let Some(h) = self.held_txrd {
                    assert_eq!(h, req, "tx read request changed while waiting");
                }
                self.held_txrd = Some(req);
                if u.m_txrd_req_ready.val() {
                    let want = self.model.exp_txrd.pop_front().expect("unexpected tx read");
                    assert_eq!(req, want, "tx read request");
                    let lat = self
                        .rng
                        .gen_range(self.knobs.latency.0..=self.knobs.latency.1);
                    self.txrd.request(req.0, req.1, cycle + lat);
                    self.held_txrd = None;
                }
            } else {
                assert!(self.held_txrd.is_none(), "tx read request withdrawn");
            }
            let u = &self.uut;
            if u.s_txrd_valid.val() && u.s_txrd_ready.val() {
                self.txrd.beat_taken();
            }
            // Rx-port read client.
            if u.m_cplrd_req_valid.val() {
                let req = (
                    u.m_cplrd_req_addr.val().to_u32(),
                    u.m_cplrd_req_words.val().to_u32(),
                );
                if let Some(h) = self.held_cplrd {
                    assert_eq!(h, req, "completion read request changed while waiting");
                }
                self.held_cplrd = Some(req);
                if u.m_cplrd_req_ready.val() {
                    let want = self
                        .model
                        .exp_cplrd
                        .pop_front()
                        .expect("unexpected completion read");
                    assert_eq!(req, want, "completion read request");
                    let lat = self
                        .rng
                        .gen_range(self.knobs.latency.0..=self.knobs.latency.1);
                    self.cplrd.request(req.0, req.1, cycle + lat);
                    self.held_cplrd = None;
                }
            } else {
                assert!(
                    self.held_cplrd.is_none(),
                    "completion read request withdrawn"
                );
            }
            let u = &self.uut;
            if u.s_cplrd_valid.val() && u.s_cplrd_ready.val() {
                self.cplrd.beat_taken();
            }
            // Expect events.
            let u = &self.uut;
            if u.m_expect_valid.val() {
                let e = Expect {
                    qp: u.m_expect_qp.val().index(),
                    psn: u.m_expect_psn.val().to_u32(),
                    addr: u.m_expect_addr.val().to_u32(),
                    length: u.m_expect_length.val().to_u32(),
                    atomic: u.m_expect_atomic.val(),
                };
                if let Some(h) = &self.held_expect {
                    assert_eq!(h, &e, "expect event changed while waiting");
                }
                self.held_expect = Some(e.clone());
                if u.m_expect_ready.val() {
                    let want = self
                        .model
                        .exp_expects
                        .pop_front()
                        .expect("unexpected expect event");
                    assert_eq!(e, want, "expect event");
                    self.expects.push(e);
                    self.held_expect = None;
                }
            } else {
                assert!(self.held_expect.is_none(), "expect event withdrawn");
            }
            // Messages.
            if self.uut.m_msg_valid.val() {
                let m = self.msg_fields();
                if let Some(h) = &self.held_msg {
                    assert_eq!(h, &m, "message changed while waiting");
                }
                self.held_msg = Some(m.clone());
                if self.uut.m_msg_ready.val() {
                    self.held_msg = None;
                    assert!(
                        self.cur.is_none(),
                        "message before the previous payload ended"
                    );
                    let want = self.model.exp_msgs.pop_front().expect("unexpected message");
                    let mut head = want.clone();
                    head.payload.clear();
                    assert_eq!(m, head, "message at clock {cycle}");
                    if let Some(read) = self.model.exp_msg_reads.pop_front().unwrap() {
                        self.model.exp_txrd.push_back(read);
                    }
                    self.model.requests += 1;
                    self.sent_cycle.push(cycle);
                    if want.payload.is_empty() {
                        self.finish_message(want);
                    } else {
                        self.cur = Some((want, 0));
                    }
                }
            } else {
                assert!(self.held_msg.is_none(), "message withdrawn");
            }
            // Payload.
            let u = &self.uut;
            if u.m_payload_valid.val() {
                let beat = (u.m_payload_data.val().to_u64(), u.m_payload_last.val());
                if let Some(h) = self.held_payload {
                    assert_eq!(h, beat, "payload beat changed while waiting");
                }
                self.held_payload = Some(beat);
                if u.m_payload_ready.val() {
                    self.held_payload = None;
                    let (want, i) = self.cur.as_mut().expect("payload outside a message");
                    assert_eq!(
                        beat.0, want.payload[*i],
                        "payload word {i} of PSN {:#x}",
                        want.psn
                    );
                    assert_eq!(beat.1, *i + 1 == want.payload.len(), "payload last flag");
                    *i += 1;
                    self.payload_cycles.push(cycle);
                    if beat.1 {
                        let (m, _) = self.cur.take().unwrap();
                        self.finish_message(m);
                    }
                }
            } else {
                assert!(self.held_payload.is_none(), "payload beat withdrawn");
            }
            // Completions.
            let u = &self.uut;
            if u.m_cpl_valid.val() {
                assert!(!u.m_cpl_is_receive.val() && !u.m_cpl_has_immediate.val());
                assert_eq!(u.m_cpl_immediate.val().to_u32(), 0);
                let c = Cpl {
                    opcode: u.m_cpl_opcode.val().to_u8(),
                    status: u.m_cpl_status.val().to_u8(),
                    qp: u.m_cpl_qp.val().index(),
                    byte_count: u.m_cpl_byte_count.val().to_u32(),
                    wqe_index: u.m_cpl_wqe_index.val().to_u32(),
                    src_node: u.m_cpl_src_node.val().to_u16(),
                    src_qp: u.m_cpl_src_qp.val().to_u16(),
                    wr_id: u.m_cpl_wr_id.val().to_u64(),
                };
                if let Some(h) = &self.held_cpl {
                    assert_eq!(h, &c, "completion changed while waiting");
                }
                self.held_cpl = Some(c.clone());
                if u.m_cpl_ready.val() {
                    self.held_cpl = None;
                    let want = self
                        .model
                        .exp_cpls
                        .pop_front()
                        .expect("unexpected completion");
                    assert_eq!(c, want, "completion at clock {cycle}");
                    self.cpls.push(c.clone());
                    self.new_cpls.push_back(c);
                }
            } else {
                assert!(self.held_cpl.is_none(), "completion withdrawn");
            }
        }

        fn finish_message(&mut self, m: Msg) {
            let key = (m.src_qp as usize, m.psn);
            self.model.streaming.retain(|&k| k != key);
            self.sent.push(m.clone());
            self.new_msgs.push_back(m);
        }

        /// PSNs of the messages sent on `qp`.
        fn psns(&self, qp: usize) -> Vec<u32> {
            self.sent
                .iter()
                .filter(|m| m.src_qp as usize == qp)
                .map(|m| m.psn)
                .collect()
        }

        fn cpl_list(&self, qp: usize) -> Vec<(u32, u8)> {
            self.cpls
                .iter()
                .filter(|c| c.qp == qp)
                .map(|c| (c.wqe_index, c.status))
                .collect()
        }

        /// Nothing left in flight anywhere (model expectations all met).
        fn quiet(&self) -> bool {
            self.model.exp_msgs.is_empty()
                && self.model.exp_cpls.is_empty()
                && self.model.exp_expects.is_empty()
                && self.cur.is_none()
                && self.acks.is_empty()
                && self.ack_offer.is_none()
                && self.acks_accepted.is_empty()
                && self.model.job.is_none()
                && self.model.pending_local.is_none()
                && self.uut.tx_state.q.val() == SqTxState::Idle
                && self.uut.ak_state.q.val() == SqAckState::Idle
        }

        fn settle_down(&mut self) {
            self.run(4);
            self.run_until(|b| b.quiet(), 20_000);
            self.run(40);
        }
    }

    fn send(len: u32, wr_id: u64) -> Wqe {
        Wqe {
            opcode: WqeOpcode::Send as u8,
            length: len,
            wr_id,
            local_addr: 0x0020_0000 + 0x1_0000 * (wr_id as u32 % 16),
            ..Default::default()
        }
    }

    /// Ring base of QP q in the directed tests.
    fn ring(qp: usize) -> u32 {
        0x0001_0000 + 0x1000 * qp as u32
    }

    // ------------------------------------------------------------------------------------
    // Directed tests.
    // ------------------------------------------------------------------------------------

    /// Every opcode: message fields, payload, expect events and completions (each also
    /// checked against the model by the bench).
    #[test]
    fn every_opcode_message_fields_and_payload() {
        for knobs in [SMOOTH, ROUGH] {
            let mut b = Bench::new(4, 1, knobs);
            b.setup_qp(2, ring(2), 4, 0x0005_0077, 0x100);
            let base = Wqe {
                wr_id: 0x1111,
                local_addr: 0x0030_0000,
                remote_vaddr: 0x7777_0000_1234_5678,
                stag: 0xABCD_EF01,
                immediate: 0x5555_AAAA,
                compare_add: 0xC0C0,
                swap: 0x5A5A,
                ..Default::default()
            };
            let mk = |op: WqeOpcode, length: u32, invalidate: bool| Wqe {
                opcode: op as u8,
                length,
                invalidate,
                wr_id: base.wr_id + length as u64,
                ..base
            };
            let wqes = [
                mk(WqeOpcode::Send, 0, false),
                mk(WqeOpcode::Send, 13, false),
                mk(WqeOpcode::SendImmediate, 64, false),
                mk(WqeOpcode::RdmaWrite, 100, true),
                mk(WqeOpcode::RdmaWriteImmediate, 7, false),
                mk(WqeOpcode::RdmaRead, 40, true),
                mk(WqeOpcode::AtomicCompareSwap, 8, false),
                mk(WqeOpcode::AtomicFetchAdd, 8, false),
            ];
            b.post(2, &wqes);
            // Acknowledge each message as it arrives: responses for READ and atomics.
            for (i, w) in wqes.iter().enumerate() {
                b.run_until(|b| b.sent.len() > i, 5000);
                let psn = 0x100 + i as u32;
                let ev = if needs_response(w) {
                    AckEvent::response(2, psn)
                } else {
                    AckEvent::ack(2, psn)
                };
                b.push_ack(ev);
            }
            b.settle_down();
            assert_eq!(b.sent.len(), 8);
            for (i, (m, w)) in b.sent.iter().zip(&wqes).enumerate() {
                assert_eq!(m.psn, 0x100 + i as u32);
                assert_eq!((m.opcode, m.src_qp, m.src_node), (w.opcode, 2, 0x0042));
                assert_eq!((m.dest_node, m.dest_qp), (0x0077, 0x0005));
                assert_eq!(
                    (m.vaddr, m.stag, m.dma_length),
                    (w.remote_vaddr, w.stag, w.length)
                );
                assert_eq!(m.invalidate, w.invalidate);
                assert_eq!(
                    m.resync,
                    i == 0,
                    "RESYNC only on the first message after reset"
                );
                let imm = matches!(i, 2 | 4);
                assert_eq!(
                    (m.has_immediate, m.immediate),
                    (imm, if imm { w.immediate } else { 0 })
                );
            }
            let lens: Vec<u32> = b.sent.iter().map(|m| m.length).collect();
            assert_eq!(lens, [0, 13, 64, 100, 7, 0, 16, 16]);
            let words: Vec<usize> = b.sent.iter().map(|m| m.payload.len()).collect();
            assert_eq!(words, [0, 2, 8, 13, 1, 0, 2, 2]);
            assert_eq!(b.sent[6].payload, [0xC0C0, 0x5A5A]);
            assert_eq!(b.sent[1].payload[0], filler(0x0030_0000));
            let expects: Vec<(u32, u32, bool)> = b
                .expects
                .iter()
                .map(|e| (e.psn, e.length, e.atomic))
                .collect();
            assert_eq!(
                expects,
                [(0x105, 40, false), (0x106, 8, true), (0x107, 8, true)]
            );
            assert!(b.expects.iter().all(|e| e.qp == 2 && e.addr == 0x0030_0000));
            assert_eq!(
                b.cpl_list(2),
                (0..8).map(|i| (0x100 + i, SUCCESS)).collect::<Vec<_>>()
            );
            for (c, w) in b.cpls.iter().zip(&wqes) {
                assert_eq!(
                    (c.opcode, c.byte_count, c.wr_id),
                    (w.opcode, w.length, w.wr_id)
                );
                assert_eq!((c.src_node, c.src_qp), (0x0077, 0x0005));
            }
            assert_eq!(b.uut.stat_requests_sent.val().to_u32(), 8);
            assert_eq!(b.read_csr(2, SQ_CI), 0x108);
        }
    }

    /// A long RDMA WRITE on QP 0 does not hold back the other QPs by more than one message.
    #[test]
    fn round_robin_long_message_does_not_starve_other_qps() {
        for (seed, knobs) in [(2, SMOOTH), (3, ROUGH)] {
            let mut b = Bench::new(3, seed, knobs);
            for q in 0..3 {
                b.setup_qp(q, ring(q), 4, 0x10 + q as u32, 0);
            }
            let long = |i: u64| Wqe {
                opcode: WqeOpcode::RdmaWrite as u8,
                length: 4096,
                wr_id: i,
                local_addr: 0x0050_0000,
                remote_vaddr: 0x8000,
                ..Default::default()
            };
            b.post(0, &[long(0), long(1), long(2), long(3)]);
            b.run_until(|b| b.cur.is_some(), 2000); // QP 0's first payload is streaming
            b.post(1, &[send(8, 1), send(8, 2), send(8, 3)]);
            b.post(2, &[send(16, 1), send(16, 2)]);
            b.run_until(|b| b.sent.len() == 9, 60_000);
            let order: Vec<u16> = b.sent.iter().map(|m| m.src_qp).collect();
            assert_eq!(order, [0, 1, 2, 0, 1, 2, 0, 1, 0]);
        }
    }

    /// At most SEND_WINDOW messages are outstanding; acknowledgements open the window,
    /// events outside `[sq_una, sq_next)` are ignored.
    #[test]
    fn window_limit_and_stale_events() {
        let start = 0xFF_FFFC; // the PSNs wrap through 0
        let mut b = Bench::new(1, 4, ROUGH);
        b.setup_qp(0, ring(0), 4, 0x99, start);
        let wqes: Vec<Wqe> = (0..12).map(|i| send(24, i)).collect();
        b.post(0, &wqes);
        b.run(3000);
        let first8: Vec<u32> = (0..8).map(|i| psn_add(start, i)).collect();
        assert_eq!(b.psns(0), first8);
        // Stale: before sq_una, and sq_next itself (a retryable NACK: up to sq_una +
        // SEND_WINDOW; further away it goes back, see `a_foreign_sequence_error_goes_back`).
        b.push_ack(AckEvent::ack(0, psn_add(start, PSN_MASK)));
        b.push_ack(AckEvent::ack(0, psn_add(start, 9)));
        b.push_ack(AckEvent::nack(
            0,
            psn_add(start, 8),
            Syndrome::SequenceError,
        ));
        b.settle_down();
        assert!(b.cpls.is_empty());
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 0);
        b.push_ack(AckEvent::ack(0, psn_add(start, 2)));
        b.run(3000);
        assert_eq!(
            b.cpl_list(0),
            (0..3)
                .map(|i| (psn_add(start, i), SUCCESS))
                .collect::<Vec<_>>()
        );
        assert_eq!(
            b.psns(0),
            (0..11).map(|i| psn_add(start, i)).collect::<Vec<_>>()
        );
        b.push_ack(AckEvent::ack(0, psn_add(start, 10)));
        b.run_until(|b| b.sent.len() == 12, 5000);
        b.push_ack(AckEvent::ack(0, psn_add(start, 11)));
        b.settle_down();
        assert_eq!(
            b.cpl_list(0),
            (0..12)
                .map(|i| (psn_add(start, i), SUCCESS))
                .collect::<Vec<_>>()
        );
        assert_eq!(b.sent.len(), 12);
        assert_eq!(b.read_csr(0, SQ_CI), psn_add(start, 12) as u64);
    }

    /// An RDMA READ or atomic is sent only when nothing is outstanding, after its expect
    /// event, and nothing follows it until its response.
    #[test]
    fn read_and_atomic_wait_for_an_empty_queue_and_their_response() {
        let mut b = Bench::new(2, 5, ROUGH);
        b.setup_qp(1, ring(1), 3, 0x1, 0x50);
        let read = Wqe {
            opcode: WqeOpcode::RdmaRead as u8,
            length: 64,
            wr_id: 7,
            local_addr: 0x0060_0000,
            remote_vaddr: 0x4000,
            ..Default::default()
        };
        let cas = Wqe {
            opcode: WqeOpcode::AtomicCompareSwap as u8,
            length: 8,
            wr_id: 8,
            local_addr: 0x0060_0100,
            remote_vaddr: 0x4008,
            compare_add: 1,
            swap: 2,
            ..Default::default()
        };
        b.post(1, &[send(8, 1), read, send(8, 2), cas, send(8, 3)]);
        b.run(2000);
        assert_eq!(b.psns(1), [0x50]);
        assert!(b.expects.is_empty());
        b.push_ack(AckEvent::ack(1, 0x50));
        b.run(2000);
        assert_eq!(b.psns(1), [0x50, 0x51]);
        assert_eq!(b.expects.len(), 1);
        let status = b.read_csr(1, QP_STATUS);
        assert_eq!(
            (status & 0xFF_FFFF, status >> 49 & 1),
            (0x52, 1),
            "waiting for the READ response"
        );
        b.push_ack(AckEvent::response(1, 0x51));
        b.run(2000);
        assert_eq!(b.psns(1), [0x50, 0x51, 0x52]);
        assert_eq!(b.read_csr(1, QP_STATUS) >> 49 & 1, 0);
        assert_eq!(b.expects.len(), 1, "the atomic waits for 0x52");
        b.push_ack(AckEvent::ack(1, 0x52));
        b.run(2000);
        assert_eq!(b.psns(1), [0x50, 0x51, 0x52, 0x53]);
        assert_eq!(b.expects.len(), 2);
        assert_eq!(b.sent[3].payload, [1, 2]);
        b.push_ack(AckEvent::response(1, 0x53));
        b.run(2000);
        assert_eq!(b.psns(1), [0x50, 0x51, 0x52, 0x53, 0x54]);
        b.push_ack(AckEvent::ack(1, 0x54));
        b.settle_down();
        assert_eq!(
            b.cpl_list(1),
            (0x50..0x55).map(|p| (p, SUCCESS)).collect::<Vec<_>>()
        );
        let expects: Vec<(u32, u32, u32, bool)> = b
            .expects
            .iter()
            .map(|e| (e.psn, e.addr, e.length, e.atomic))
            .collect();
        assert_eq!(
            expects,
            [(0x51, 0x0060_0000, 64, false), (0x53, 0x0060_0100, 8, true)]
        );
    }

    /// Implied NAK: an ACK, or a NACK for a later PSN, while an RDMA READ or atomic at
    /// `sq_una` awaits its response says the response was lost. It completes nothing: the
    /// QP goes back to the READ or atomic and resends it (a retry: counted, limited), and
    /// only its response completes it (the soak failure: NACK CRC_OR_MALFORMED with the
    /// expected PSN after a corrupted resend completed a READ whose response never came).
    /// Once the QP has gone back (nothing outstanding), such an answer is ignored.
    #[test]
    fn an_answer_past_a_read_or_atomic_without_its_response_resends_it() {
        for (seed, knobs) in [(31, SMOOTH), (32, ROUGH)] {
            let mut b = Bench::new(2, seed, knobs);
            b.set_cfg(0x42, 0, 2);
            b.setup_qp(1, ring(1), 3, 0x1, 0x50);
            let read = Wqe {
                opcode: WqeOpcode::RdmaRead as u8,
                length: 64,
                wr_id: 7,
                local_addr: 0x0060_0000,
                remote_vaddr: 0x4000,
                ..Default::default()
            };
            let faa = Wqe {
                opcode: WqeOpcode::AtomicFetchAdd as u8,
                length: 8,
                wr_id: 9,
                local_addr: 0x0060_0100,
                remote_vaddr: 0x4008,
                compare_add: 5,
                ..Default::default()
            };
            b.post(1, &[read, send(8, 1), faa, send(8, 2), read, send(8, 3)]);
            b.run(2000);
            assert_eq!(b.psns(1), [0x50]);
            // The READ's response is lost; the responder NACKs a corrupted resend with its
            // expected PSN, one past the READ.
            b.push_ack(AckEvent::nack(1, 0x51, Syndrome::CrcOrMalformed));
            b.run(2000);
            assert!(b.cpls.is_empty(), "the READ completed without its response");
            assert_eq!(b.psns(1), [0x50, 0x50], "the READ is resent");
            assert_eq!(b.read_csr(1, QP_STATUS) >> 52 & 0xF, 1, "a retry");
            b.push_ack(AckEvent::response(1, 0x50));
            b.run(2000);
            assert_eq!(b.cpl_list(1), [(0x50, SUCCESS)]);
            b.push_ack(AckEvent::ack(1, 0x51));
            b.run(2000);
            assert_eq!(b.psns(1), [0x50, 0x50, 0x51, 0x52]);
            // An ACK for the atomic's own PSN (its response lost): resent, twice.
            b.push_ack(AckEvent::ack(1, 0x52));
            b.run(2000);
            b.push_ack(AckEvent::ack(1, 0x52));
            b.run(2000);
            assert_eq!(
                b.cpl_list(1).len(),
                2,
                "the atomic completed without its response"
            );
            assert_eq!(b.psns(1), [0x50, 0x50, 0x51, 0x52, 0x52, 0x52]);
            assert_eq!(b.sent[5].payload, [5, 0], "the same atomic again");
            assert_eq!(b.read_csr(1, QP_STATUS) >> 52 & 0xF, 2);
            b.push_ack(AckEvent::response(1, 0x52));
            b.run(2000);
            b.push_ack(AckEvent::ack(1, 0x53));
            b.run(2000);
            assert_eq!(b.psns(1), [0x50, 0x50, 0x51, 0x52, 0x52, 0x52, 0x53, 0x54]);
            // A third implied NAK for the second READ exceeds the limit of 2; the first
            // two are ACKs for the READ's own PSN and a NACK past it.
            b.push_ack(AckEvent::ack(1, 0x54));
            b.run(2000);
            b.push_ack(AckEvent::nack(1, 0x55, Syndrome::SequenceError));
            b.run(2000);
            b.push_ack(AckEvent::ack(1, 0x54));
            b.run(2000);
            b.push_ack(AckEvent::ack(1, 0x55));
            b.settle_down();
            assert_eq!(
                b.cpl_list(1),
                [
                    (0x50, SUCCESS),
                    (0x51, SUCCESS),
                    (0x52, SUCCESS),
                    (0x53, SUCCESS),
                    (0x54, RETRY_EXCEEDED),
                    (0x55, SUCCESS)
                ]
            );
            assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 6);
        }
    }

    /// A SEQUENCE_ERROR NACK completes the WQEs before its PSN and re-sends the same PSNs
    /// with the same fields and payload.
    #[test]
    fn go_back_n_after_sequence_error() {
        for (seed, knobs) in [(6, SMOOTH), (7, ROUGH)] {
            let mut b = Bench::new(1, seed, knobs);
            b.setup_qp(0, ring(0), 4, 0x2, 10);
            let wqes: Vec<Wqe> = [30, 200, 64, 9, 1000]
                .iter()
                .enumerate()
                .map(|(i, &len)| Wqe {
                    opcode: WqeOpcode::RdmaWrite as u8,
                    length: len,
                    wr_id: i as u64,
                    local_addr: 0x0070_0000 + 0x1000 * i as u32,
                    remote_vaddr: 0x9000,
                    ..Default::default()
                })
                .collect();
            b.post(0, &wqes);
            b.run_until(|b| b.sent.len() == 5, 20_000);
            let first = b.sent.clone();
            b.push_ack(AckEvent::nack(0, 12, Syndrome::SequenceError));
            b.run_until(|b| b.sent.len() == 8, 20_000);
            b.settle_down();
            assert_eq!(b.cpl_list(0), [(10, SUCCESS), (11, SUCCESS)]);
            assert_eq!(&b.sent[5..], &first[2..], "the same messages again");
            assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 1);
            let status = b.read_csr(0, QP_STATUS);
            assert_eq!(
                (status & 0xFF_FFFF, status >> 52 & 15),
                (15, 1),
                "sq_next, retry count"
            );
            // CRC_OR_MALFORMED is retried the same way.
            b.push_ack(AckEvent::nack(0, 14, Syndrome::CrcOrMalformed));
            b.run_until(|b| b.sent.len() == 9, 20_000);
            assert_eq!(b.sent[8], first[4]);
            b.push_ack(AckEvent::ack(0, 14));
            b.settle_down();
            assert_eq!(
                b.cpl_list(0),
                (10..15).map(|p| (p, SUCCESS)).collect::<Vec<_>>()
            );
            assert_eq!(
                b.read_csr(0, QP_STATUS) >> 52 & 15,
                0,
                "acknowledgement clears the count"
            );
            assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 2);
        }
    }

    /// Without answers the timer goes back N; after RETRY_LIMIT retransmissions the oldest
    /// WQE completes with RETRY_EXCEEDED and the next one goes on (with RESYNC).
    #[test]
    fn timeout_retransmission_and_retry_exceeded() {
        let mut b = Bench::new(2, 8, SMOOTH);
        b.set_cfg(0x42, 300, 2);
        b.setup_qp(1, ring(1), 4, 0x3, 0x200);
        b.post(1, &[send(16, 1), send(16, 2)]);
        b.run_until(|b| b.cpls.len() == 2, 20_000);
        b.settle_down();
        assert_eq!(
            b.cpl_list(1),
            [(0x200, RETRY_EXCEEDED), (0x201, RETRY_EXCEEDED)]
        );
        assert_eq!(
            b.psns(1),
            [0x200, 0x201, 0x200, 0x201, 0x200, 0x201, 0x201, 0x201, 0x201]
        );
        let resync: Vec<bool> = b.sent.iter().map(|m| m.resync).collect();
        assert_eq!(
            resync,
            [true, false, true, false, true, false, true, true, true]
        );
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 6);
        // Each retransmission round waits the timeout after the previous one.
        // (The timer runs from sq_una's own transmission, not from the later messages'.)
        for (i, j) in [(2, 0), (4, 2), (7, 6), (8, 7)] {
            let gap = b.sent_cycle[i] - b.sent_cycle[j];
            assert!((300..400).contains(&gap), "round {i} after {gap} clocks");
        }
        // A timeout of 0 never fires.
        b.set_cfg(0x42, 0, 2);
        b.post(1, &[send(16, 3)]);
        b.run(3000);
        assert_eq!(b.psns(1).len(), 10);
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 6);
    }

    /// QP_CTRL bit 2, the send-side reset the driver uses to flush a QP whose peer
    /// restarted: like a reset, every pointer moves to the start PSN and the next message
    /// carries RESYNC; what was outstanding is forgotten (no completion). A final NACK for
    /// a PSN from before (the old incarnation's answer, far from `sq_una`) goes back to
    /// `sq_una` at once, without counting a retry: while that NACK sat in the responder's
    /// answer slot, the responder may have dropped what was sent since.
    #[test]
    fn send_side_reset_forgets_the_old_psns_and_their_late_nacks_resend_at_once() {
        for (seed, knobs) in [(41, SMOOTH), (42, ROUGH)] {
            let mut b = Bench::new(2, seed, knobs);
            b.set_cfg(0x42, 50_000, 3);
            b.setup_qp(1, ring(1), 4, 0x3, 0x700);
            b.post(1, &(1..=4).map(|i| send(8, i)).collect::<Vec<_>>());
            b.run_until(|b| b.sent.len() == 4, 20_000);
            b.csr(true, 1, QP_CTRL, 1 | 4 | 0x40_0000 << 8);
            assert_eq!(b.read_csr(1, SQ_CI), 0x40_0000);
            assert_eq!(b.read_csr(1, SQ_PI), 0x40_0000);
            assert_eq!(b.read_csr(1, QP_CTRL), 1, "still enabled");
            b.post(1, &[send(8, 5)]);
            b.run_until(|b| b.sent.len() == 5, 20_000);
            assert_eq!((b.sent[4].psn, b.sent[4].resync), (0x40_0000, true));
            // The old incarnation's NACK for 0x701: the new message is resent at once.
            b.push_ack(AckEvent::nack(1, 0x701, Syndrome::RdmaDisabled));
            b.run_until(|b| b.sent.len() == 6, 2000);
            assert_eq!((b.sent[5].psn, b.sent[5].resync), (0x40_0000, true));
            assert_eq!(b.read_csr(1, QP_STATUS) >> 52 & 15, 0, "not a retry");
            b.push_ack(AckEvent::ack(1, 0x40_0000));
            b.settle_down();
            // Only the WQE posted after the reset completes; the old four never do.
            assert_eq!(b.cpl_list(1), [(0x40_0000, SUCCESS)]);
            assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 1);
        }
    }

    /// A refused PSN's NACK that crosses a timeout: the QP went back to `sq_una` before it
    /// arrived, but it answers a message the QP sent, so it still completes that WQE with
    /// the syndrome (never later with success from the duplicate's answer), and `sq_next`
    /// moves past it. An ACK from before the go-back likewise completes what it covers.
    #[test]
    fn an_answer_to_a_message_sent_before_a_go_back_still_counts() {
        for (seed, knobs) in [(51, SMOOTH), (52, ROUGH)] {
            let mut b = Bench::new(1, seed, knobs);
            b.set_cfg(0x42, 300, 7);
            b.setup_qp(0, ring(0), 4, 0x4, 0x900);
            b.post(0, &(1..=4).map(|i| send(8, i)).collect::<Vec<_>>());
            b.run_until(|b| b.sent.len() == 4, 20_000);
            // The timer goes back to 0x900 and resends from there.
            b.run_until(|b| b.sent.len() == 5, 2000);
            assert_eq!(b.sent[4].psn, 0x900);
            b.push_ack(AckEvent::ack(0, 0x901));
            b.push_ack(AckEvent::nack(0, 0x902, Syndrome::RdmaDisabled));
            b.run_until(|b| b.cpls.len() == 3, 2000);
            assert_eq!(
                b.cpl_list(0),
                [
                    (0x900, SUCCESS),
                    (0x901, SUCCESS),
                    (0x902, Syndrome::RdmaDisabled as u8)
                ]
            );
            b.push_ack(AckEvent::ack(0, 0x903));
            b.settle_down();
            assert_eq!(b.cpls.len(), 4);
            // Nothing was resent past what the answers covered.
            assert!(
                b.psns(0)[4..].iter().all(|&p| p <= 0x903),
                "{:x?}",
                b.psns(0)
            );
        }
    }

    /// A NACK that is not retried completes its WQE with the syndrome (the WQEs before it
    /// with success) and the queue goes on.
    #[test]
    fn final_nack_completes_with_the_syndrome_and_the_next_wqe_proceeds() {
        let mut b = Bench::new(1, 9, ROUGH);
        b.setup_qp(0, ring(0), 4, 0x4, 0);
        b.post(0, &[send(8, 1), send(8, 2), send(8, 3), send(8, 4)]);
        b.run_until(|b| b.sent.len() == 4, 20_000);
        b.push_ack(AckEvent::nack(0, 1, Syndrome::RemoteAccessError));
        b.settle_down();
        assert_eq!(b.cpl_list(0), [(0, SUCCESS), (1, 0x62)]);
        // The responder may have dropped 2 and 3 (its answer slot held the NACK): resent.
        assert_eq!(b.psns(0), [0, 1, 2, 3, 2, 3]);
        b.push_ack(AckEvent::nack(0, 2, Syndrome::ReceiverNotReady));
        b.settle_down();
        assert_eq!(b.psns(0), [0, 1, 2, 3, 2, 3, 3]);
        b.push_ack(AckEvent::ack(0, 3));
        b.settle_down();
        assert_eq!(
            b.cpl_list(0),
            [(0, SUCCESS), (1, 0x62), (2, 0x20), (3, SUCCESS)]
        );
        assert_eq!(b.read_csr(0, QP_STATUS) >> 52 & 15, 0, "no retry counted");
        b.post(0, &[send(8, 5)]);
        b.run_until(|b| b.sent.len() == 8, 20_000);
        assert_eq!((b.sent[7].psn, b.sent[7].resync), (4, false));
        // Going back after a final NACK counts in stat_retransmissions (one per go-back).
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 2);
    }

    /// Multi-host scenarios: after a final NACK for p (RDMA_DISABLED while the peer
    /// rejoins) the responder's answer slot held the NACK, so p+1.. were dropped there
    /// without effect. The requester completes p with the syndrome and resends from p+1 at
    /// once, not after a RETRY_TIMEOUT; that is not counted against the retry limit.
    #[test]
    fn a_final_nack_resends_what_followed_at_once() {
        for (seed, knobs) in [(31, SMOOTH), (32, ROUGH)] {
            let mut b = Bench::new(1, seed, knobs);
            b.set_cfg(0x42, 4096, 3);
            b.setup_qp(0, ring(0), 4, 0x4, 0x10);
            let wqes: Vec<Wqe> = (0..4)
                .map(|i| Wqe {
                    opcode: WqeOpcode::RdmaWrite as u8,
                    length: 16,
                    wr_id: i,
                    local_addr: 0x0070_0000 + 0x1000 * i as u32,
                    remote_vaddr: 0x9000,
                    ..Default::default()
                })
                .collect();
            b.post(0, &wqes);
            b.run_until(|b| b.sent.len() == 4, 20_000);
            let first = b.sent.clone();
            b.push_ack(AckEvent::nack(0, 0x10, Syndrome::RdmaDisabled));
            b.run_until(|b| b.sent.len() == 7, 1000);
            assert_eq!(&b.sent[4..], &first[1..], "0x11..0x13 again, at once");
            assert!(b.sent_cycle[6] - b.sent_cycle[3] < 600);
            b.push_ack(AckEvent::ack(0, 0x13));
            b.settle_down();
            assert_eq!(
                b.cpl_list(0),
                [
                    (0x10, Syndrome::RdmaDisabled as u8),
                    (0x11, SUCCESS),
                    (0x12, SUCCESS),
                    (0x13, SUCCESS),
                ]
            );
            assert_eq!(b.read_csr(0, QP_STATUS) >> 52 & 15, 0, "no retry counted");
            assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 1);
            // A final NACK for the last PSN sent goes back nowhere.
            b.post(0, &[send(8, 9)]);
            b.run_until(|b| b.sent.len() == 8, 20_000);
            b.push_ack(AckEvent::nack(0, 0x14, Syndrome::RemoteAccessError));
            b.settle_down();
            assert_eq!(b.sent.len(), 8);
            assert_eq!(b.cpl_list(0)[4], (0x14, Syndrome::RemoteAccessError as u8));
            assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 1);
        }
    }

    /// A final NACK up to SEND_WINDOW before `sq_una` answers a PSN already completed (a
    /// refusal that a later answer's AETH reports again, docs/nic-architecture.md,
    /// "Refused PSNs"): stale, nothing is resent or completed. Further back it is foreign
    /// (an answer to a request from before a send-side reset) and goes back to `sq_una`.
    #[test]
    fn a_final_nack_just_before_sq_una_is_stale() {
        let mut b = Bench::new(1, 34, SMOOTH);
        b.set_cfg(0x42, 4096, 3);
        b.setup_qp(0, ring(0), 4, 0x4, 0x10);
        b.post(0, &[send(8, 0), send(8, 1), send(8, 2)]);
        b.run_until(|b| b.sent.len() == 3, 20_000);
        b.push_ack(AckEvent::nack(0, 0x10, Syndrome::RdmaDisabled));
        b.push_ack(AckEvent::ack(0, 0x11));
        b.settle_down();
        let sent = b.sent.len();
        assert_eq!(b.cpl_list(0).len(), 2);
        // sq_una = 0x12: the refusal of 0x10 reported again, and one 8 before sq_una.
        b.push_ack(AckEvent::nack(0, 0x10, Syndrome::RdmaDisabled));
        b.push_ack(AckEvent::nack(0, 0x0a, Syndrome::RemoteAccessError));
        b.settle_down();
        assert_eq!(b.sent.len(), sent, "a stale final NACK made the QP go back");
        assert_eq!(b.cpl_list(0).len(), 2);
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 1);
        // Nine before sq_una: foreign, sq_una (0x12) is resent at once.
        b.push_ack(AckEvent::nack(0, 0x09, Syndrome::RemoteAccessError));
        b.run_until(|b| b.sent.len() == sent + 1, 1000);
        assert_eq!(b.sent[sent].psn, 0x12);
        assert_eq!(b.cpl_list(0).len(), 2);
    }

    /// Multi-host scenarios: a driver posting more often than RETRY_TIMEOUT kept the timer
    /// from firing while the oldest message was lost. The timer measures the wait of
    /// `sq_una` (since its last transmission or the last acknowledgement progress), not
    /// the time since the QP last transmitted anything.
    #[test]
    fn later_messages_do_not_hold_the_timer_of_a_lost_oldest_one() {
        let mut b = Bench::new(1, 33, SMOOTH);
        b.set_cfg(0x42, 600, 3);
        b.setup_qp(0, ring(0), 4, 0x4, 0x700);
        // One new message every 200 clocks; no answers at all.
        for i in 0..6 {
            b.post(0, &[send(8, i)]);
            b.run_until(|b| b.sent.len() > i as usize, 20_000);
            b.run(200);
        }
        let resend = b.sent.iter().skip(1).position(|m| m.psn == 0x700).unwrap() + 1;
        let wait = b.sent_cycle[resend] - b.sent_cycle[0];
        assert!(
            (600..700).contains(&wait),
            "sq_una resent {wait} clocks after its transmission"
        );
        assert!(b.sent[resend].resync, "still the QP's RESYNC message");
    }

    /// A retryable NACK whose PSN lies more than SEND_WINDOW from `sq_una` (here: the
    /// responder still expects its old sequence because the RESYNC message was lost) goes
    /// back to `sq_una` at once, with RESYNC, as a retry event (RETRY_EXCEEDED beyond the
    /// limit). Up to `sq_una + SEND_WINDOW` it is stale (`window_limit_and_stale_events`).
    #[test]
    fn a_foreign_sequence_error_goes_back_to_sq_una() {
        for (seed, knobs) in [(34, SMOOTH), (35, ROUGH)] {
            let mut b = Bench::new(1, seed, knobs);
            b.set_cfg(0x42, 0, 1);
            b.setup_qp(0, ring(0), 4, 0x4, 0x500);
            b.post(0, &[send(8, 1), send(8, 2), send(8, 3)]);
            b.run_until(|b| b.sent.len() == 3, 20_000);
            b.push_ack(AckEvent::nack(0, 0x123456, Syndrome::SequenceError));
            b.run_until(|b| b.sent.len() == 6, 2000);
            let resent: Vec<(u32, bool)> = b.sent[3..].iter().map(|m| (m.psn, m.resync)).collect();
            assert_eq!(resent, [(0x500, true), (0x501, false), (0x502, false)]);
            assert_eq!(b.read_csr(0, QP_STATUS) >> 52 & 15, 1, "a retry event");
            // Before sq_una (the old expected PSN just below): the same; over the limit.
            b.push_ack(AckEvent::nack(0, 0x4ff, Syndrome::CrcOrMalformed));
            b.run_until(|b| b.sent.len() == 8, 2000);
            b.settle_down();
            assert_eq!(b.cpl_list(0), [(0x500, RETRY_EXCEEDED)]);
            let resent: Vec<(u32, bool)> = b.sent[6..].iter().map(|m| (m.psn, m.resync)).collect();
            assert_eq!(resent, [(0x501, true), (0x502, false)]);
            assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 2);
        }
    }

    /// The multi-host scoreboard's bug, requester side: an answer for PSN p that carries
    /// RESYNC (the responder restarted its PSN sequence at p) completes the WQEs before p
    /// with RESPONDER_RESTARTED, never with success, then p as usual: a NACK with its
    /// syndrome, an ACK with success, a retryable NACK goes back to p. RESYNC on an answer
    /// for `sq_una` itself changes nothing. The QP's next message carries no RESYNC.
    #[test]
    fn a_resynced_answer_completes_the_earlier_wqes_with_responder_restarted() {
        for (seed, knobs) in [(21, SMOOTH), (22, ROUGH)] {
            let mut b = Bench::new(1, seed, knobs);
            b.setup_qp(0, ring(0), 4, 0x4, 0xcce830);
            b.post(0, &(1..=8).map(|i| send(8, i)).collect::<Vec<_>>());
            b.run_until(|b| b.sent.len() == 8, 20_000);
            b.push_ack(AckEvent::ack(0, 0xcce832));
            // Host 1 rebooted: 0xcce833 was dropped there, 0xcce834 adopted and refused.
            b.push_ack(AckEvent::nack(0, 0xcce834, Syndrome::RdmaDisabled).resynced());
            b.run_until(|b| b.sent.len() == 11, 20_000);
            b.settle_down();
            let disabled = Syndrome::RdmaDisabled as u8;
            assert_eq!(
                b.cpl_list(0),
                [
                    (0xcce830, SUCCESS),
                    (0xcce831, SUCCESS),
                    (0xcce832, SUCCESS),
                    (0xcce833, RESPONDER_RESTARTED),
                    (0xcce834, disabled),
                ]
            );
            // What followed the refused PSN is resent (without RESYNC).
            let resent: Vec<(u32, bool)> = b.sent[8..].iter().map(|m| (m.psn, m.resync)).collect();
            assert_eq!(
                resent,
                [(0xcce835, false), (0xcce836, false), (0xcce837, false)]
            );
            let n0 = b.sent.len();
            b.push_ack(AckEvent::ack(0, 0xcce836).resynced());
            b.push_ack(AckEvent::ack(0, 0xcce837).resynced());
            b.settle_down();
            assert_eq!(
                &b.cpl_list(0)[5..],
                [
                    (0xcce835, RESPONDER_RESTARTED),
                    (0xcce836, SUCCESS),
                    (0xcce837, SUCCESS),
                ]
            );
            // A retryable NACK with RESYNC: the run before it, then go-back-N from its PSN.
            b.post(0, &(9..=12).map(|i| send(8, i)).collect::<Vec<_>>());
            b.run_until(|b| b.sent.len() == n0 + 4, 20_000);
            assert!(
                b.sent[8..].iter().all(|m| !m.resync),
                "no RESYNC after a restarted run"
            );
            b.push_ack(AckEvent::nack(0, 0xcce83a, Syndrome::SequenceError).resynced());
            b.run_until(|b| b.sent.len() == n0 + 6, 20_000);
            assert_eq!(
                (b.sent[n0 + 4].psn, b.sent[n0 + 5].psn),
                (0xcce83a, 0xcce83b)
            );
            b.push_ack(AckEvent::ack(0, 0xcce83b));
            b.settle_down();
            assert_eq!(
                &b.cpl_list(0)[8..],
                [
                    (0xcce838, RESPONDER_RESTARTED),
                    (0xcce839, RESPONDER_RESTARTED),
                    (0xcce83a, SUCCESS),
                    (0xcce83b, SUCCESS),
                ]
            );
            assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 2);
        }
    }

    /// QP_CTRL reset: all pointers at the start PSN, RESYNC on the first message (and its
    /// retransmissions), old events stale.
    #[test]
    fn qp_reset_with_start_psn_and_resync() {
        let mut b = Bench::new(2, 10, ROUGH);
        b.setup_qp(0, ring(0), 4, 0x5, 0xFF_FFFE);
        for reg in [SQ_PI, SQ_CI, QP_STATUS] {
            assert_eq!(b.read_csr(0, reg), 0xFF_FFFE);
        }
        assert_eq!(b.read_csr(0, QP_CTRL), 1);
        b.post(0, &[send(8, 1), send(8, 2), send(8, 3), send(8, 4)]);
        b.run_until(|b| b.sent.len() == 4, 20_000);
        assert_eq!(b.psns(0), [0xFF_FFFE, 0xFF_FFFF, 0, 1]);
        let resync: Vec<bool> = b.sent.iter().map(|m| m.resync).collect();
        assert_eq!(resync, [true, false, false, false]);
        b.push_ack(AckEvent::ack(0, 0xFF_FFFF));
        b.settle_down();
        assert_eq!(b.cpl_list(0), [(0xFF_FFFE, SUCCESS), (0xFF_FFFF, SUCCESS)]);
        // Reset while 0 and 1 are outstanding.
        b.setup_qp(0, ring(0), 4, 0x5, 0x12_3456);
        b.flush_csr();
        b.push_ack(AckEvent::ack(0, 1));
        b.settle_down();
        assert_eq!(b.cpls.len(), 2, "an event from before the reset is stale");
        for reg in [SQ_PI, SQ_CI, QP_STATUS] {
            assert_eq!(b.read_csr(0, reg), 0x12_3456);
        }
        b.post(0, &[send(8, 5), send(8, 6)]);
        b.run_until(|b| b.sent.len() == 6, 20_000);
        b.push_ack(AckEvent::nack(0, 0x12_3456, Syndrome::SequenceError));
        b.run_until(|b| b.sent.len() == 8, 20_000);
        let tail: Vec<(u32, bool)> = b.sent[4..].iter().map(|m| (m.psn, m.resync)).collect();
        assert_eq!(
            tail,
            [
                (0x12_3456, true),
                (0x12_3457, false),
                (0x12_3456, true),
                (0x12_3457, false)
            ]
        );
        b.push_ack(AckEvent::ack(0, 0x12_3456));
        b.settle_down();
        b.post(0, &[send(8, 7)]);
        b.push_ack(AckEvent::ack(0, 0x12_3457));
        b.run_until(|b| b.sent.len() == 9, 20_000);
        assert!(
            !b.sent[8].resync,
            "RESYNC clears once the first message is acknowledged"
        );
        b.push_ack(AckEvent::ack(0, 0x12_3458));
        b.settle_down();
        assert_eq!(b.cpls.len(), 5);
    }

    /// A final PORT_DOWN NACK comes from the fabric: the responder never saw the message,
    /// which may be the QP's RESYNC message, so the message resent after it carries RESYNC
    /// again. A final NACK from the responder itself (it saw the message and resynced on
    /// it) clears the resync as an ACK does. Without the rule, a PORT_DOWN that took the
    /// RESYNC message left the peer's responder in its old PSN sequence, dropping every
    /// later request as a far duplicate (`nic soak`, seed 11889).
    #[test]
    fn a_port_down_nack_keeps_the_resync_pending() {
        for (syndrome, resync_after) in [
            (Syndrome::PortDown, true),
            (Syndrome::RemoteAccessError, false),
        ] {
            let mut b = Bench::new(2, 10, SMOOTH);
            b.setup_qp(0, ring(0), 4, 0x5, 0x40);
            b.post(0, &[send(8, 1), send(8, 2)]);
            b.run_until(|b| b.sent.len() == 2, 20_000);
            let first: Vec<(u32, bool)> = b.sent.iter().map(|m| (m.psn, m.resync)).collect();
            assert_eq!(first, [(0x40, true), (0x41, false)]);
            b.push_ack(AckEvent::nack(0, 0x40, syndrome));
            b.run_until(|b| b.sent.len() == 3, 20_000);
            assert_eq!(
                (b.sent[2].psn, b.sent[2].resync),
                (0x41, resync_after),
                "the message resent after a final {syndrome:?} NACK for the RESYNC message"
            );
            b.push_ack(AckEvent::ack(0, 0x41));
            b.settle_down();
            assert_eq!(b.cpl_list(0), [(0x40, syndrome as u8), (0x41, SUCCESS)]);
        }
    }

    /// A QP reset while a WQE is being fetched drops what was fetched (the ring slot now
    /// holds another WQE); a reset during a run of completions ends the run after the
    /// completion in progress.
    #[test]
    fn reset_during_fetch_and_during_completions() {
        let knobs = Knobs {
            latency: (40, 40),
            ..SMOOTH
        };
        let mut b = Bench::new(2, 15, knobs);
        b.setup_qp(0, ring(0), 4, 0x9, 0x10);
        b.post(0, &[send(8, 1)]);
        b.run_until(|b| b.uut.tx_state.q.val() == SqTxState::FetchData, 1000);
        b.setup_qp(0, ring(0), 4, 0x9, 0x30); // same ring slot as 0x10
        b.post(0, &[send(16, 2)]);
        b.run_until(|b| b.sent.len() == 1, 2000);
        let m = &b.sent[0];
        assert_eq!((m.psn, m.resync, m.length), (0x30, true, 16));
        b.post(0, &[send(8, 3), send(8, 4), send(8, 5), send(8, 6)]);
        b.run_until(|b| b.sent.len() == 5, 5000);
        b.push_ack(AckEvent::ack(0, 0x34));
        b.run_until(|b| b.cpls.len() == 2, 2000);
        b.setup_qp(0, ring(0), 4, 0x9, 0x50);
        b.settle_down();
        // The ring registers before the reset alternate with the run's table updates
        // (a CSR access yields to a waiting machine after another one): the reset lands
        // during 0x32's completion and the run ends with 0x32.
        assert_eq!(
            b.cpl_list(0),
            [(0x30, SUCCESS), (0x31, SUCCESS), (0x32, SUCCESS)]
        );
        assert_eq!(b.read_csr(0, SQ_CI), 0x50);
        assert_eq!(b.sent.len(), 5);
    }

    /// A DELAY of N cycles holds its QP: the QP's next message leaves at least N clocks
    /// after the DELAY could start (the acknowledgement that completes the WQE before it),
    /// while another QP's messages keep going; the DELAY and a BIND RKEY complete with
    /// success, in order, and send nothing. A DELAY with bits above its 24-bit count
    /// completes with LOCAL_LENGTH_ERROR and holds nothing.
    #[test]
    fn delay_holds_its_queue_pair_only() {
        for (n, seed) in [(300u32, 21u64), (40, 22)] {
            let mut b = Bench::new(2, seed, SMOOTH);
            b.setup_qp(0, ring(0), 3, 0x6, 0x40);
            b.setup_qp(1, ring(1), 3, 0x7, 0x10);
            let delay = Wqe {
                wr_id: 2,
                ..Wqe::delay(n).unwrap()
            };
            let bind = Wqe {
                wr_id: 3,
                ..Wqe::bind(0x0000_0105, 0x1000, 0x2000, 1 << 20, 0b010)
            };
            b.post(0, &[send(8, 1), delay, bind, send(8, 4)]);
            b.run_until(|b| !b.sent.is_empty(), 2000);
            assert_eq!((b.sent[0].src_qp, b.sent[0].psn), (0, 0x40));
            b.post(1, &(0..6).map(|i| send(16, 10 + i)).collect::<Vec<_>>());
            let start = b.cycle;
            b.push_ack(AckEvent::ack(0, 0x40));
            b.run_until(
                |b| b.sent.iter().any(|m| m.src_qp == 0 && m.psn == 0x43),
                4000,
            );
            let at = b
                .sent
                .iter()
                .position(|m| m.src_qp == 0 && m.psn == 0x43)
                .unwrap();
            let waited = b.sent_cycle[at] - start;
            assert!(waited >= n as u64, "QP 0 waited {waited} clocks, DELAY {n}");
            assert!(
                waited <= n as u64 + 120,
                "QP 0 waited {waited} clocks, DELAY {n}"
            );
            let others = b.sent[..at].iter().filter(|m| m.src_qp == 1).count();
            if n >= 300 {
                assert_eq!(others, 6, "QP 1 sent while QP 0 was held");
            } else {
                assert!(others >= 1, "QP 1 sent while QP 0 was held");
            }
            assert_eq!(
                b.cpl_list(0),
                [(0x40, SUCCESS), (0x41, SUCCESS), (0x42, SUCCESS)]
            );
            assert_eq!(
                b.sent[at].resync, true,
                "the responder never saw 0x41, 0x42"
            );
        }
        let mut b = Bench::new(1, 23, SMOOTH);
        b.setup_qp(0, ring(0), 3, 0x6, 0x40);
        let too_long = Wqe {
            remote_vaddr: 1 << 24,
            ..Wqe::delay(0).unwrap()
        };
        b.post(0, &[too_long, send(8, 2)]);
        b.run_until(|b| !b.sent.is_empty(), 2000);
        assert_eq!(
            b.cpl_list(0),
            [(0x40, CompletionStatus::LOCAL_LENGTH_ERROR)]
        );
    }

    /// An inline SEND streams its payload from the WQE (no payload read); a NOP sends
    /// nothing and completes with success in order once the queue has drained, and the
    /// message after it carries RESYNC (the responder never saw its PSN).
    #[test]
    fn inline_send_and_nop() {
        let mut b = Bench::new(1, 12, SMOOTH);
        b.setup_qp(0, ring(0), 3, 0x6, 0x40);
        let message: Vec<u8> = (1..=27).collect();
        let inline = Wqe {
            wr_id: 1,
            local_addr: 0x0012_3403, // ignored: nothing is read there
            ..Wqe::send_inline(&message, Some(0x4354_524C)).unwrap()
        };
        let nop = Wqe {
            opcode: NOP_OPCODE,
            wr_id: 2,
            ..Wqe::default()
        };
        b.post(0, &[inline, nop, send(8, 3)]);
        b.run_until(|b| !b.sent.is_empty(), 2000);
        let m = &b.sent[0];
        assert_eq!((m.psn, m.opcode, m.length), (0x40, 0x01, 27));
        let bytes: Vec<u8> = m.payload.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(&bytes[..27], &message[..]);
        b.run(500);
        assert_eq!(b.sent.len(), 1, "the NOP waits for 0x40");
        b.push_ack(AckEvent::ack(0, 0x40));
        b.run_until(|b| b.sent.len() == 2, 2000);
        assert_eq!(b.cpl_list(0), [(0x40, SUCCESS), (0x41, SUCCESS)]);
        assert_eq!((b.sent[1].psn, b.sent[1].resync), (0x42, true));
    }

    /// Bad WQEs complete locally, in order, once the queue has drained, without a message;
    /// the message after one carries RESYNC (the responder never saw its PSN).
    #[test]
    fn bad_wqes_complete_locally_in_order() {
        let mut b = Bench::new(1, 11, ROUGH);
        b.setup_qp(0, ring(0), 3, 0x6, 0x40);
        let bad_opcode = Wqe {
            opcode: 0x15,
            ..send(8, 2)
        };
        let misaligned = Wqe {
            local_addr: 0x0012_3403,
            ..send(8, 3)
        };
        let too_long = send(MAX_MESSAGE_LENGTH + 1, 4);
        let atomic_len = Wqe {
            opcode: WqeOpcode::AtomicFetchAdd as u8,
            length: 4,
            ..send(8, 5)
        };
        let vaddr = Wqe {
            opcode: WqeOpcode::RdmaWrite as u8,
            remote_vaddr: 0x1001,
            ..send(8, 6)
        };
        let max = send(MAX_MESSAGE_LENGTH, 8);
        b.post(
            0,
            &[
                send(8, 1),
                bad_opcode,
                send(8, 7),
                misaligned,
                too_long,
                atomic_len,
                vaddr,
                max,
            ],
        );
        b.run(2000);
        assert_eq!(
            b.psns(0),
            [0x40],
            "the bad WQE waits until 0x40 is acknowledged"
        );
        assert!(b.cpls.is_empty());
        b.push_ack(AckEvent::ack(0, 0x40));
        b.run_until(|b| b.sent.len() == 2, 20_000);
        assert_eq!(
            b.cpl_list(0),
            [(0x40, SUCCESS), (0x41, CompletionStatus::BAD_OPCODE)]
        );
        assert_eq!((b.sent[1].psn, b.sent[1].resync), (0x42, true));
        b.push_ack(AckEvent::ack(0, 0x42));
        b.run_until(|b| b.sent.len() == 3, 40_000);
        assert_eq!(
            (b.sent[2].psn, b.sent[2].resync, b.sent[2].length),
            (0x47, true, 65536)
        );
        b.push_ack(AckEvent::ack(0, 0x47));
        b.settle_down();
        assert_eq!(
            b.cpl_list(0),
            [
                (0x40, SUCCESS),
                (0x41, CompletionStatus::BAD_OPCODE),
                (0x42, SUCCESS),
                (0x43, CompletionStatus::LOCAL_ADDRESS_ERROR),
                (0x44, CompletionStatus::LOCAL_LENGTH_ERROR),
                (0x45, CompletionStatus::LOCAL_LENGTH_ERROR),
                (0x46, CompletionStatus::LOCAL_ADDRESS_ERROR),
                (0x47, SUCCESS),
            ]
        );
        assert_eq!(b.cpls[1].wr_id, 2);
    }

    /// CSR side port: read back, field widths, read-only and unmapped registers, QPs
    /// beyond `queue_pairs`.
    #[test]
    fn csr_registers() {
        let mut b = Bench::new(3, 12, ROUGH);
        b.csr(true, 1, SQ_BASE, 0xFFFF_FFFF_DEAD_BEC0);
        b.csr(true, 1, SQ_SIZE_LOG2, 0x3F);
        b.csr(true, 1, SQ_PI, 0x1234_5678);
        b.csr(true, 1, QP_REMOTE, 0xAAAA_BBBB);
        b.csr(true, 1, SQ_CI, 0x77);
        b.csr(true, 1, QP_STATUS, 0x77);
        b.csr(true, 3, SQ_BASE, 0x1000);
        assert_eq!(b.read_csr(1, SQ_BASE), 0xDEAD_BEC0);
        assert_eq!(b.read_csr(1, SQ_SIZE_LOG2), 0x1F);
        assert_eq!(b.read_csr(1, SQ_PI), 0x34_5678);
        assert_eq!(b.read_csr(1, QP_REMOTE), 0xAAAA_BBBB);
        assert_eq!(b.read_csr(1, SQ_CI), 0);
        assert_eq!(b.read_csr(1, QP_STATUS), 0);
        assert_eq!(b.read_csr(1, QP_CTRL), 0);
        assert_eq!(b.read_csr(3, SQ_BASE), 0, "QP beyond queue_pairs");
        for reg in RQ_BASE..=RQ_CI {
            assert_eq!(b.read_csr(1, reg), 0);
        }
        for reg in 11..16 {
            assert_eq!(b.read_csr(1, reg), 0);
        }
        b.csr(true, 2, QP_CTRL, 1);
        assert_eq!(b.read_csr(2, QP_CTRL), 1);
        b.csr(true, 2, QP_CTRL, 0x1234_5602);
        assert_eq!(
            b.read_csr(2, QP_CTRL),
            0,
            "reset reads as 0, enable from the same write"
        );
        assert_eq!(b.read_csr(2, SQ_CI), 0x12_3456);
        assert_eq!(b.read_csr(2, SQ_PI), 0x12_3456);
        // Back-to-back accesses are answered in order.
        for reg in [SQ_BASE, SQ_SIZE_LOG2, SQ_PI, QP_REMOTE] {
            b.csr(false, 1, reg, 0);
        }
        let before = b.csr_reads.len();
        b.run_until(|b| b.csr_reads.len() == before + 4, 1000);
        assert_eq!(
            &b.csr_reads[before..],
            [0xDEAD_BEC0, 0x1F, 0x34_5678, 0xAAAA_BBBB]
        );
    }

    /// The payload of a long RDMA WRITE streams at one word per clock; messages follow each
    /// other with a short gap (claim, WQE fetch, commit).
    #[test]
    fn payload_streams_one_word_per_clock() {
        let mut b = Bench::new(1, 13, SMOOTH);
        b.setup_qp(0, ring(0), 2, 0x7, 0);
        let big = |len: u32, i: u64| Wqe {
            opcode: WqeOpcode::RdmaWrite as u8,
            length: len,
            wr_id: i,
            local_addr: 0x0040_0000,
            remote_vaddr: 0x1000,
            ..Default::default()
        };
        b.post(0, &[big(65536, 1), big(65533, 2), big(8, 3)]);
        b.run_until(|b| b.sent.len() == 3, 40_000);
        let beats = &b.payload_cycles;
        assert_eq!(beats.len(), 8192 + 8192 + 1);
        assert_eq!(
            beats[8191] - beats[0],
            8191,
            "first message without bubbles"
        );
        assert_eq!(
            beats[16383] - beats[8192],
            8191,
            "second message without bubbles"
        );
        let gap = beats[8192] - beats[8191];
        let gap2 = beats[16384] - beats[16383];
        assert!(
            gap <= 30 && gap2 <= 30,
            "clocks between messages' payloads: {gap}, {gap2}"
        );
    }

    /// The figures in the doc comment: doorbell to message, clocks per short message,
    /// acknowledgement to completion (DMA latency 3 clocks, no gaps, no back-pressure).
    #[test]
    fn latency_figures() {
        let knobs = Knobs {
            latency: (3, 3),
            ..SMOOTH
        };
        let mut b = Bench::new(1, 14, knobs);
        b.setup_qp(0, ring(0), 4, 0x8, 0);
        b.post(0, &[send(8, 1)]);
        b.flush_csr();
        let doorbell = b.cycle - 1; // the doorbell's table write
        b.run_until(|b| b.sent.len() == 1, 1000);
        let to_message = b.sent_cycle[0] - doorbell;
        let acked = b.cycle;
        b.push_ack(AckEvent::ack(0, 0));
        b.run_until(|b| b.cpls.len() == 1, 1000);
        let to_completion = b.cycle - acked;
        // Eight back-to-back one-word SENDs.
        b.post(0, &(2..10).map(|i| send(8, i)).collect::<Vec<_>>());
        b.run_until(|b| b.sent.len() == 9, 5000);
        let per_message = (b.sent_cycle[8] - b.sent_cycle[1]) / 7;
        eprintln!("doorbell to message {to_message}, per message {per_message}, ack to completion {to_completion}");
        assert!(to_message <= 20 && per_message <= 22 && to_completion <= 12);
    }

    #[test]
    fn synthesises() {
        let mut uut = SendQueueEngine::new(4);
        uut.connect_all();
        yosys_validate("nic_rtl_send_queue_engine", &generate_verilog(&uut))
            .expect("yosys accepts SendQueueEngine");
    }

    #[test]
    #[should_panic(expected = "queue_pairs must be between 1 and 64, got 0")]
    fn rejects_zero_queue_pairs() {
        SendQueueEngine::new(0);
    }

    #[test]
    #[should_panic(expected = "queue_pairs must be between 1 and 64, got 65")]
    fn rejects_too_many_queue_pairs() {
        SendQueueEngine::new(65);
    }

    // ------------------------------------------------------------------------------------
    // Random closed loop: a driver posting random WQEs (including bad ones) on every QP, a
    // responder losing, refusing and corrupting requests and losing acknowledgements, the
    // model in lockstep, every handshake with idle gaps and back-pressure.
    // ------------------------------------------------------------------------------------

    /// One closed-loop run.
    #[derive(Clone, Copy)]
    struct LoopCfg {
        seed: u64,
        queue_pairs: usize,
        knobs: Knobs,
        per_qp: usize,
        max_len: u32,
        /// Clocks between a request's arrival and its answer.
        delay: (u64, u64),
        timeout: u32,
        /// Only SEND and RDMA WRITE (no READ or atomic draining the queue), rings of at
        /// least 8 WQEs: the send window can fill up.
        streaming_only: bool,
        /// Many corrupted requests and lost answers: READ and atomic responses are lost
        /// and the resends NACKed past them (implied NAKs).
        lossy: bool,
    }

    struct LoopStats {
        max_outstanding: u32,
        overlapped_ops: usize,
        cycles: u64,
        messages: usize,
        completions: usize,
        timer_fires: usize,
        statuses: HashMap<u8, usize>,
    }

    fn closed_loop(cfg: LoopCfg) -> LoopStats {
        let LoopCfg {
            seed,
            queue_pairs,
            knobs,
            per_qp,
            max_len,
            ..
        } = cfg;
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5E9D);
        let mut b = Bench::new(queue_pairs, seed, knobs);
        b.set_cfg(0x1234, cfg.timeout, 7);
        let mut resp = Responder::new(queue_pairs);
        resp.delay = cfg.delay;
        if cfg.lossy {
            resp.p_corrupt = 0.2;
            resp.p_ack_loss = 0.3;
        }
        let mut drv: Vec<DriverQp> = (0..queue_pairs)
            .map(|q| DriverQp {
                start: rng.gen::<u32>() & PSN_MASK,
                size: rng.gen_range(if cfg.streaming_only { 3 } else { 1 }..=5),
                base: 0x0001_0000 + 0x1000 * q as u32,
                wqes: (0..per_qp)
                    .map(|_| loop {
                        let w = random_wqe(&mut rng, max_len);
                        if !(cfg.streaming_only && needs_response(&w)) {
                            break w;
                        }
                    })
                    .collect(),
                posted: 0,
                completed: 0,
            })
            .collect();
        for (q, d) in drv.iter().enumerate() {
            b.setup_qp(q, d.base, d.size, 0x0001_0000 * q as u32 + 0x77, d.start);
        }
        let mut statuses = HashMap::new();
        let mut last_ack = 0;
        let budget = 400_000;
        while drv.iter().any(|d| d.completed < d.wqes.len()) {
            assert!(b.cycle < budget, "closed loop did not finish (seed {seed})");
            // Driver: post a few WQEs where the ring has room, ring the doorbell.
            if rng.gen_bool(0.05) {
                let q = rng.gen_range(0..queue_pairs);
                let d = &mut drv[q];
                let room = (1usize << d.size) - (d.posted - d.completed);
                let k = rng.gen_range(1..=9).min(room).min(d.wqes.len() - d.posted);
                if k > 0 {
                    for _ in 0..k {
                        let index = psn_add(d.start, d.posted as u32);
                        let addr = d.base + ((index & ((1 << d.size) - 1)) << 6);
                        b.mem.write_wqe(addr, &d.wqes[d.posted]);
                        d.posted += 1;
                    }
                    let pi = psn_add(d.start, d.posted as u32);
                    b.csr(true, q, SQ_PI, pi as u64);
                }
            }
            // Occasional register reads (checked against the model).
            if rng.gen_bool(0.003) {
                let reg = [
                    SQ_BASE, SQ_PI, SQ_CI, QP_REMOTE, QP_CTRL, QP_STATUS, RQ_BASE,
                ][rng.gen_range(0..7)];
                b.csr(false, rng.gen_range(0..64), reg, 0);
            }
            // Responder.
            while let Some(m) = b.new_msgs.pop_front() {
                assert!((m.src_qp as usize) < queue_pairs);
                for ev in resp.receive(&m, &mut rng) {
                    let t = (b.cycle + rng.gen_range(resp.delay.0..=resp.delay.1)).max(last_ack);
                    last_ack = t;
                    b.acks.push_back((t, ev));
                }
            }
            // Completions: in order, each once, status consistent with the responder.
            while let Some(c) = b.new_cpls.pop_front() {
                let d = &mut drv[c.qp];
                let index = psn_add(d.start, d.completed as u32);
                assert_eq!(c.wqe_index, index, "QP {} completion order", c.qp);
                let w = &d.wqes[d.completed];
                assert_eq!(
                    (c.opcode, c.byte_count, c.wr_id),
                    (w.opcode, w.length, w.wr_id)
                );
                let local = wqe_status(w);
                let fate = resp.qps[c.qp].fates.get(&index);
                if local != SUCCESS || is_local_op(w.opcode) {
                    assert_eq!(c.status, local, "local status");
                    assert_eq!(fate, None, "a local completion's PSN is never sent");
                } else if c.status == RESPONDER_RESTARTED {
                    // The responder adopted a later PSN: it never saw this one.
                    assert_eq!(fate, None, "QP {} PSN {index:#x} restarted", c.qp);
                } else if c.status == SUCCESS {
                    assert_eq!(
                        fate,
                        Some(&Fate::Applied),
                        "QP {} PSN {index:#x} completed but not applied",
                        c.qp
                    );
                    // A READ or atomic completes with its response only.
                    assert!(
                        !needs_response(w) || resp.qps[c.qp].responded.contains(&index),
                        "QP {} PSN {index:#x}: READ or atomic completed without its response",
                        c.qp
                    );
                } else if c.status != RETRY_EXCEEDED {
                    assert_eq!(
                        fate,
                        Some(&Fate::Refused(c.status)),
                        "QP {} PSN {index:#x}",
                        c.qp
                    );
                }
                *statuses.entry(c.status).or_insert(0) += 1;
                d.completed += 1;
            }
            b.step();
        }
        b.settle_down();
        assert!(b.model.exp_txrd.is_empty() && b.model.exp_cplrd.is_empty());
        for (q, d) in drv.iter().enumerate() {
            let una = psn_add(d.start, d.wqes.len() as u32);
            assert_eq!(b.read_csr(q, SQ_CI), una as u64);
            assert_eq!(b.read_csr(q, QP_STATUS) & 0xFF_FFFF, una as u64);
        }
        LoopStats {
            max_outstanding: b.max_outstanding,
            overlapped_ops: b.overlapped_ops,
            cycles: b.cycle,
            messages: b.sent.len(),
            completions: b.cpls.len(),
            timer_fires: b.timer_fires,
            statuses,
        }
    }

    #[test]
    fn matches_model_in_closed_loop_with_gaps_and_backpressure() {
        let base = LoopCfg {
            seed: 0,
            queue_pairs: 4,
            knobs: ROUGH,
            per_qp: 40,
            max_len: 300,
            delay: (3, 80),
            timeout: 1500,
            streaming_only: false,
            lossy: false,
        };
        let slow = Knobs {
            gaps: true,
            backpressure: false,
            latency: (1, 30),
        };
        let pressed = Knobs {
            gaps: false,
            backpressure: true,
            latency: (1, 4),
        };
        let mut total = 0;
        for cfg in [
            LoopCfg { seed: 0x51, ..base },
            LoopCfg {
                seed: 0x52,
                knobs: SMOOTH,
                ..base
            },
            LoopCfg {
                seed: 0x53,
                queue_pairs: 3,
                knobs: slow,
                per_qp: 30,
                max_len: 2000,
                ..base
            },
            LoopCfg {
                seed: 0x54,
                queue_pairs: 2,
                knobs: pressed,
                max_len: 64,
                ..base
            },
            LoopCfg {
                seed: 0x55,
                queue_pairs: 64,
                per_qp: 3,
                max_len: 200,
                ..base
            },
            LoopCfg {
                seed: 0x56,
                queue_pairs: 1,
                per_qp: 60,
                max_len: 500,
                ..base
            },
            // Slow answers and short messages: the send window fills up.
            LoopCfg {
                seed: 0x57,
                knobs: SMOOTH,
                max_len: 16,
                delay: (300, 900),
                timeout: 4000,
                streaming_only: true,
                ..base
            },
            LoopCfg {
                seed: 0x58,
                queue_pairs: 2,
                per_qp: 60,
                max_len: 100,
                lossy: true,
                ..base
            },
        ] {
            let st = closed_loop(cfg);
            eprintln!(
                "seed {:#x}: {} QPs, {} clocks, {} messages, {} completions, {} timeouts, \
                 at most {} outstanding, statuses {:?}",
                cfg.seed,
                cfg.queue_pairs,
                st.cycles,
                st.messages,
                st.completions,
                st.timer_fires,
                st.max_outstanding,
                st.statuses
            );
            assert_eq!(st.completions, cfg.queue_pairs * cfg.per_qp);
            assert!(st.messages >= st.completions * 3 / 4);
            assert!(st.max_outstanding <= SEND_WINDOW);
            if cfg.seed == 0x57 {
                assert_eq!(st.max_outstanding, SEND_WINDOW, "the window was reached");
            }
            if cfg.queue_pairs > 1 {
                assert!(
                    st.overlapped_ops > 0,
                    "operations of different QPs overlapped"
                );
            }
            total += st.cycles;
        }
        assert!(total > 50_000);
    }
}
