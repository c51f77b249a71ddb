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
//! - acknowledgement, the child block [`AckMachine`] (`requester/ack_machine.rs`): takes
//!   one `s_ack` event at a time (or a local completion from the transmit machine), has it
//!   evaluated against `[sq_una, sq_next)`, then per completed WQE re-reads words 0-1 on
//!   the rx-port client, issues the completion request and has `sq_una` advanced; it never
//!   waits on the transmit path. When idle it scans one QP's timer per operation.
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
use crate::requester::{AckMachine, PayloadBuffer, QpTable, Scheduler, WqeFetch};
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

/// The transmit machine's claim stage: pick a QP, claim it (read `sq_next`), request its
/// WQE's fetch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqClaimState {
    Idle,
    ClaimReq,
    ClaimWait,
    /// Waiting for the WQE fetch to be free (its previous WQE handed to the send stage).
    FetchReq,
}

/// The transmit machine's send stage: commit the fetched WQE, then its expect event,
/// message and payload.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqTxState {
    /// Free: takes the fetched WQE once the fetch hands it off.
    Idle,
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

pub use crate::requester::ack_machine::SqAckState;

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
    // Transmit machine, claim stage.
    fa_state: DFF<SqClaimState>,
    fa_qp: DFF<Bits<6>>,
    fa_psn: DFF<Bits<24>>,
    fa_wqe_addr: DFF<Bits<32>>,
    fa_remote: DFF<Bits<32>>,
    /// The claimed QP was reset or its ring moved (CSR write) since the claim.
    fa_stale: DFF<Bit>,
    // The WQE in the fetch (`fw_busy`: its words are awaited; `fw_ready`: handed off by
    // the fetch, waiting for the send stage), with its claim's values.
    fw_busy: DFF<Bit>,
    fw_ready: DFF<Bit>,
    fw_qp: DFF<Bits<6>>,
    fw_psn: DFF<Bits<24>>,
    fw_remote: DFF<Bits<32>>,
    fw_stale: DFF<Bit>,
    // Send stage.
    tx_state: DFF<SqTxState>,
    tx_qp: DFF<Bits<6>>,
    tx_psn: DFF<Bits<24>>,
    tx_remote: DFF<Bits<32>>,
    tx_resync: DFF<Bit>,
    tx_stale: DFF<Bit>,
    tx_beat: DFF<Bits<3>>,
    /// The send stage took a WQE last clock: its fields (valid in the fetch this clock)
    /// are copied into the `b_*` registers, so the fetch may read the next WQE.
    copy_pending: DFF<Bit>,
    b_opcode: DFF<Bits<8>>,
    b_invalidate: DFF<Bit>,
    b_inline: DFF<Bit>,
    b_length: DFF<Bits<32>>,
    b_local: DFF<Bits<32>>,
    b_vaddr: DFF<Bits<64>>,
    b_stag: DFF<Bits<32>>,
    b_immediate: DFF<Bits<32>>,
    b_compare: DFF<Bits<64>>,
    b_swap: DFF<Bits<64>>,
    b_word7: DFF<Bits<64>>,
    // The WQE's class, decoded from the fetch's fields as they are copied.
    b_op_read: DFF<Bit>,
    b_op_atomic: DFF<Bit>,
    b_op_imm: DFF<Bit>,
    b_status: DFF<Bits<8>>,
    b_local_only: DFF<Bit>,
    b_need_empty: DFF<Bit>,
    /// A good DELAY: its commit holds the QP in the scheduler.
    b_delay_ok: DFF<Bit>,
    b_msg_length: DFF<Bits<32>>,
    b_len_round: DFF<Bits<16>>,
    /// Its payload is read early (fits the buffer).
    b_pl_early: DFF<Bit>,
    /// Its payload is read after the grant and is longer than the buffer.
    b_pl_long: DFF<Bit>,
    // Claim and commit requests to the table engine (a commit goes first).
    claim_req: Signal<Local, Bit>,
    commit_req: Signal<Local, Bit>,
    tx_req_qp: Signal<Local, Bits<6>>,
    /// The scheduler's pick is a QP whose WQE in the fetch or send stage is not yet
    /// committed (its claim would read the same `sq_next`).
    pick_blocked: Signal<Local, Bit>,
    /// The send stage takes the fetched WQE this clock.
    accept: Signal<Local, Bit>,
    /// A CSR write executed this clock resets `op_qp` or moves its ring.
    csr_moved: Signal<Local, Bit>,
    // The tx DMA read port: bursts in flight in request order (bit i of `port_tags`: the
    // i-th oldest is a payload read; at most four: one WQE's two reads, two payloads).
    port_tags: DFF<Bits<4>>,
    port_count: DFF<Bits<3>>,
    /// A payload (fetch) request shown last clock and not taken: it keeps the port.
    port_pay_held: DFF<Bit>,
    port_fetch_held: DFF<Bit>,
    head_pay: Signal<Local, Bit>,
    port_ready: Signal<Local, Bit>,
    burst_end: Signal<Local, Bit>,
    pay_want: Signal<Local, Bit>,
    pay_show: Signal<Local, Bit>,
    req_taken: Signal<Local, Bit>,
    port_left: Signal<Local, Bits<3>>,
    port_tags_left: Signal<Local, Bits<4>>,
    /// The WQE fetch: the read of the WQE's words into its fields (words 5-7 only when
    /// the WQE uses them) and their hand-off.
    fetch: WqeFetch,
    /// The payload words read from host memory, on their way to `m_payload_*`.
    payload_buffer: PayloadBuffer,
    /// Messages whose payload read has been requested and whose last word has not left
    /// on `m_payload_*` (at most two: `pl_a_*` the oldest, `pl_b_*`), and how many of
    /// them have been granted (their words may go out).
    pl_msgs: DFF<Bits<2>>,
    pl_granted: DFF<Bits<2>>,
    pl_a_qp: DFF<Bits<6>>,
    pl_a_psn: DFF<Bits<24>>,
    pl_b_qp: DFF<Bits<6>>,
    pl_b_psn: DFF<Bits<24>>,
    /// Payload words requested and not yet taken from the buffer.
    pl_reserved: DFF<Bits<16>>,
    /// An early payload fits beside the words reserved (and fewer than two messages').
    pl_room: Signal<Local, Bit>,
    /// A payload read is taken this clock.
    pl_push: Signal<Local, Bit>,
    pl_pop: Signal<Local, Bit>,
    pl_pop_last: Signal<Local, Bit>,
    pl_msgs_left: Signal<Local, Bits<2>>,
    pl_granted_left: Signal<Local, Bits<2>>,
    /// A message with its payload already requested is granted.
    pl_grant: Signal<Local, Bit>,
    /// The message may be offered: no earlier message's payload is left in the buffer.
    msg_free: Signal<Local, Bit>,
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
    /// The acknowledgement machine: events, completion jobs (re-read, completion request,
    /// advance) and the timer scan; its evaluations and advances run in the table engine.
    pub(crate) ack: AckMachine,
    /// The CSR write being executed resets its QP (a job of that QP goes stale).
    csr_qp_reset: Signal<Local, Bit>,
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
    /// `sq_next + 1` and `sq_una + 1` (the Exec clock's write-back takes them from registers,
    /// not through a carry chain behind the table's read data).
    next_p1: DFF<Bits<24>>,
    una_p1: DFF<Bits<24>>,
    /// An implied NAK (see `ev_implied`).
    ev_implied_reg: DFF<Bit>,
    /// `(event PSN - sq_una) mod 16`: the WQEs the event completes before its own PSN.
    evt_run_reg: DFF<Bits<4>>,
    /// The QP's retry timer has expired (as of the Exec clock).
    timer_expired_reg: DFF<Bit>,
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
    /// message, or one whose payload streams from the payload buffer); registered in the
    /// Read clock for the Exec clock.
    tx_on_una: Signal<Local, Bit>,
    tx_on_una_reg: DFF<Bit>,
    grant_csr: Signal<Local, Bit>,
    /// The last operation granted was a CSR access.
    csr_granted_last: DFF<Bit>,
    /// A waiting machine goes before this CSR access.
    csr_yield: Signal<Local, Bit>,
    grant_tx: Signal<Local, Bit>,
    grant_ak: Signal<Local, Bit>,
    read_qp: Signal<Local, Bits<6>>,
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
            fa_state: Default::default(),
            fa_qp: Default::default(),
            fa_psn: Default::default(),
            fa_wqe_addr: Default::default(),
            fa_remote: Default::default(),
            fa_stale: Default::default(),
            fw_busy: Default::default(),
            fw_ready: Default::default(),
            fw_qp: Default::default(),
            fw_psn: Default::default(),
            fw_remote: Default::default(),
            fw_stale: Default::default(),
            copy_pending: Default::default(),
            b_opcode: Default::default(),
            b_invalidate: Default::default(),
            b_inline: Default::default(),
            b_length: Default::default(),
            b_local: Default::default(),
            b_vaddr: Default::default(),
            b_stag: Default::default(),
            b_immediate: Default::default(),
            b_compare: Default::default(),
            b_swap: Default::default(),
            b_word7: Default::default(),
            b_op_read: Default::default(),
            b_op_atomic: Default::default(),
            b_op_imm: Default::default(),
            b_status: Default::default(),
            b_local_only: Default::default(),
            b_need_empty: Default::default(),
            b_delay_ok: Default::default(),
            b_msg_length: Default::default(),
            b_len_round: Default::default(),
            b_pl_early: Default::default(),
            b_pl_long: Default::default(),
            claim_req: Default::default(),
            commit_req: Default::default(),
            tx_req_qp: Default::default(),
            pick_blocked: Default::default(),
            accept: Default::default(),
            csr_moved: Default::default(),
            port_tags: Default::default(),
            port_count: Default::default(),
            port_pay_held: Default::default(),
            port_fetch_held: Default::default(),
            head_pay: Default::default(),
            port_ready: Default::default(),
            burst_end: Default::default(),
            pay_want: Default::default(),
            pay_show: Default::default(),
            req_taken: Default::default(),
            port_left: Default::default(),
            port_tags_left: Default::default(),
            pl_msgs: Default::default(),
            pl_granted: Default::default(),
            pl_a_qp: Default::default(),
            pl_a_psn: Default::default(),
            pl_b_qp: Default::default(),
            pl_b_psn: Default::default(),
            pl_reserved: Default::default(),
            pl_room: Default::default(),
            pl_push: Default::default(),
            pl_pop: Default::default(),
            pl_pop_last: Default::default(),
            pl_msgs_left: Default::default(),
            pl_granted_left: Default::default(),
            pl_grant: Default::default(),
            tx_on_una_reg: Default::default(),
            msg_free: Default::default(),
            tx_qp: Default::default(),
            tx_psn: Default::default(),
            tx_remote: Default::default(),
            tx_resync: Default::default(),
            tx_stale: Default::default(),
            tx_beat: Default::default(),
            fetch: WqeFetch::new(),
            payload_buffer: PayloadBuffer::new(),
            pl_long: Default::default(),
            tx_early: Default::default(),
            pl_early: Default::default(),
            pl_out_ok: Default::default(),
            tx_pick_ok: Default::default(),
            payload_buffer_depth: k(PAYLOAD_BUFFER_DEPTH as u64),
            ack: AckMachine::new(queue_pairs),
            csr_qp_reset: Default::default(),
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
            grant_csr: Default::default(),
            csr_granted_last: Default::default(),
            csr_yield: Default::default(),
            grant_tx: Default::default(),
            grant_ak: Default::default(),
            read_qp: Default::default(),
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
            next_p1,
            una_p1,
            evt_run_reg,
            timer_expired_reg,
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
            fa_state,
            fa_qp,
            fa_psn,
            fa_wqe_addr,
            fa_remote,
            fa_stale,
            fw_busy,
            fw_ready,
            fw_qp,
            fw_psn,
            fw_remote,
            fw_stale,
            tx_state,
            tx_qp,
            tx_psn,
            tx_remote,
            tx_resync,
            tx_stale,
            tx_beat,
            copy_pending,
            b_opcode,
            b_invalidate,
            b_inline,
            b_length,
            b_local,
            b_vaddr,
            b_stag,
            b_immediate,
            b_compare,
            b_swap,
            b_word7,
            b_op_read,
            b_op_atomic,
            b_op_imm,
            b_status,
            b_local_only,
            b_need_empty,
            b_delay_ok,
            b_msg_length,
            b_len_round,
            b_pl_early,
            b_pl_long,
            port_tags,
            port_count,
            port_pay_held,
            port_fetch_held,
            pl_msgs,
            pl_granted,
            pl_a_qp,
            pl_a_psn,
            pl_b_qp,
            pl_b_psn,
            pl_reserved,
            pl_long,
            tx_early,
            tx_on_una_reg
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
        self.d_evt.next = self.ack.m_evt_psn.val() - self.rd_una.val();
        // As of the Exec clock, one after the Read clock that registers the result.
        self.elapsed.next = self.now_p1.val() - self.rd_tstart.val();
        self.next_p1.d.next = self.rd_next.val() + 1;
        self.una_p1.d.next = self.rd_una.val() + 1;
        self.psn_p1.next = self.ack.m_evt_psn.val() + 1;
        self.job_idx_p1.next = self.ack.m_adv_idx.val() + 1;
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
        self.ev_success.next = self.ack.m_evt_response.val() | (self.ack.m_evt_syndrome.val() == 0);
        self.ev_retry.next = !self.ev_success.val()
            & ((self.ack.m_evt_syndrome.val() == self.syn_sequence.val())
                | (self.ack.m_evt_syndrome.val() == self.syn_crc.val()));
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
        self.ev_restarted.next = self.ack.m_evt_resync.val() & (self.d_evt.val() != 0);
        // Beside the classification, not after it: a registered bit and `d_evt != 0`
        // (as in `ev_restarted`); Exec combines it with `ev_hit`.
        self.ev_implied.next = self.rd_una_rsp.val()
            & !self.ack.m_evt_response.val()
            & !self.ev_restarted.val()
            & ((self.ack.m_evt_syndrome.val() == 0) | (self.d_evt.val() != 0));
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
        self.need_empty.next =
            self.wqe_local_only.val() | self.op_read.val() | self.op_atomic.val();
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
        // The send stage's copy of the WQE, taken the clock after it takes the WQE (the
        // fetch's fields are valid then; the next fetch's words come later).
        if self.copy_pending.q.val() {
            self.b_opcode.d.next = self.fetch.m_opcode.val();
            self.b_invalidate.d.next = self.fetch.m_invalidate.val();
            self.b_inline.d.next = self.fetch.m_inline.val();
            self.b_length.d.next = self.fetch.m_length.val();
            self.b_local.d.next = self.fetch.m_local.val();
            self.b_vaddr.d.next = self.fetch.m_vaddr.val();
            self.b_stag.d.next = self.fetch.m_stag.val();
            self.b_immediate.d.next = self.fetch.m_immediate.val();
            self.b_compare.d.next = self.fetch.m_compare.val();
            self.b_swap.d.next = self.fetch.m_swap.val();
            self.b_word7.d.next = self.fetch.m_word7.val();
            self.b_op_read.d.next = self.op_read.val();
            self.b_op_atomic.d.next = self.op_atomic.val();
            self.b_op_imm.d.next = self.op_imm.val();
            self.b_status.d.next = self.wqe_status.val();
            self.b_local_only.d.next = self.wqe_local_only.val();
            self.b_need_empty.d.next = self.need_empty.val();
            self.b_delay_ok.d.next = self.op_delay.val() & !self.wqe_bad.val();
            self.b_msg_length.d.next = self.msg_length.val();
            self.b_len_round.d.next = self.len_round.val();
            self.b_pl_early.d.next = self.pl_early.val();
            self.b_pl_long.d.next = !self.wqe_local_only.val()
                & !self.op_read.val()
                & !self.op_atomic.val()
                & !self.fetch.m_inline.val()
                & (self.len_round.val() > self.payload_buffer_depth.val());
        }
        self.inline_data.next = self.b_word7.q.val();
        if self.tx_beat.q.val() == 0 {
            self.inline_data.next = self.b_vaddr.q.val();
        }
        if self.tx_beat.q.val() == 1 {
            self.inline_data.next = self.b_compare.q.val();
        }
        if self.tx_beat.q.val() == 2 {
            self.inline_data.next = self.b_swap.q.val();
        }

        // ---- Requests to the table engine (from registers only) ----
        // The send stage's commit goes before the claim stage's claim.
        self.commit_req.next = self.tx_state.q.val() == SqTxState::CommitReq;
        self.claim_req.next = self.fa_state.q.val() == SqClaimState::ClaimReq;
        self.tx_req.next = self.commit_req.val() | self.claim_req.val();
        self.tx_req_op.next = SqOp::Claim;
        self.tx_req_qp.next = self.fa_qp.q.val();
        if self.commit_req.val() {
            self.tx_req_op.next = SqOp::Commit;
            self.tx_req_qp.next = self.tx_qp.q.val();
        }
        self.tx_streaming.next = false;
        match self.tx_state.q.val() {
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
        // (Compared in the Read clock, used in Exec: a message that starts streaming in
        // between is the commit's, which executed before this operation's read; one that
        // ends in between restarts the timer once more.)
        self.tx_on_una.next = (self.tx_streaming.val()
            & (self.tx_qp.q.val() == self.op_qp.q.val())
            & (self.tx_psn.q.val() == self.rd_una.val()))
            | ((self.pl_msgs.q.val() != 0)
                & (self.pl_a_qp.q.val() == self.op_qp.q.val())
                & (self.pl_a_psn.q.val() == self.rd_una.val()))
            | ((self.pl_msgs.q.val() == 2)
                & (self.pl_b_qp.q.val() == self.op_qp.q.val())
                & (self.pl_b_psn.q.val() == self.rd_una.val()));
        self.tx_on_una_reg.d.next = self.tx_on_una.val();
        // ---- Table engine ----
        self.csr_yield.next =
            self.csr_granted_last.q.val() & (self.ack.m_req_valid.val() | self.tx_req.val());
        self.grant_csr.next = false;
        self.grant_tx.next = false;
        self.grant_ak.next = false;
        self.s_csr_ready.next = false;
        self.read_qp.next = self.op_qp.q.val();
        self.rdata_valid_reg.d.next = false;
        self.ex_ok.next = false;
        self.csr_qp_reset.next = false;
        self.csr_moved.next = false;
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
                                    self.csr_qp_reset.next = true;
                                }
                            }
                            // A reset or a moved ring invalidates a WQE being fetched.
                            if (self.csr_reg_reg.q.val() == 0)
                                | (self.csr_reg_reg.q.val() == 1)
                                | ((self.csr_reg_reg.q.val() == 9)
                                    & (self.csr_wdata_reg.q.val().get_bit(1)
                                        | self.csr_wdata_reg.q.val().get_bit(2)))
                            {
                                self.csr_moved.next = true;
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
                            & (!self.b_need_empty.q.val() | !self.rd_outstanding_reg.q.val());
                        if self.ex_ok.val() {
                            self.wr_next.next = self.next_p1.q.val();
                            if self.b_local_only.q.val() {
                                // Nothing more is sent until the local completion is done.
                                self.wr_drain.next = true;
                            } else if self.b_op_read.q.val() | self.b_op_atomic.q.val() {
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
                        if self.ack.m_evt_local.val() {
                            self.ex_job_valid.next = self.qp_valid.val()
                                & (self.rd_una.val() == self.ack.m_evt_psn.val())
                                & self.rd_outstanding_reg.q.val();
                            self.ex_job_final.next = true;
                            self.ex_job_status.next = self.ack.m_evt_local_status.val();
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
                                self.wr_next.next = self.ack.m_evt_psn.val();
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
                                self.ex_job_status.next = self.ack.m_evt_syndrome.val();
                                // PORT_DOWN is the fabric's: the responder never saw p,
                                // which may have been the QP's RESYNC message, so the
                                // resync stays pending.
                                self.ex_job_resync.next =
                                    self.ack.m_evt_syndrome.val() == self.syn_port_down.val();
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
                                    self.wr_next.next = self.una_p1.q.val();
                                    self.wr_drain.next = true;
                                    self.wr_retry.next = 0.into();
                                }
                            }
                        }
                    }
                    SqOp::Advance => {
                        self.ex_ok.next = self.qp_valid.val()
                            & (self.rd_una.val() == self.ack.m_adv_idx.val())
                            & !self.ack.m_adv_stale.val();
                        if self.ex_ok.val() {
                            self.wr_una.next = self.job_idx_p1.val();
                            self.wr_una_rsp.next = false;
                            if !self.rd_outstanding_reg.q.val() {
                                self.wr_next.next = self.job_idx_p1.val();
                            }
                            self.wr_resync.next = self.ack.m_adv_set_resync.val();
                            self.wr_tstart.next = self.now.q.val();
                        }
                    }
                    SqOp::Timer => {
                        // The timer runs while messages are outstanding.
                        self.ex_ok.next = self.qp_valid.val() & self.rd_outstanding_reg.q.val();
                        if self.ex_ok.val() {
                            if self.tx_on_una_reg.q.val() {
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
                                    self.wr_next.next = self.una_p1.q.val();
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
        self.next_qp.next = self.ack.m_scan_qp.val();
        if self.tx_req.val() {
            self.next_qp.next = self.tx_req_qp.val();
        }
        if self.ack.m_req_valid.val() {
            self.next_qp.next = self.ack.m_req_qp.val();
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
            } else if self.ack.m_req_valid.val() {
                self.grant_ak.next = true;
                self.read_qp.next = self.ack.m_req_qp.val();
                self.op.d.next = SqOp::Eval;
                if self.ack.m_req_advance.val() {
                    self.op.d.next = SqOp::Advance;
                }
            } else if self.tx_req.val() {
                self.grant_tx.next = true;
                self.read_qp.next = self.tx_req_qp.val();
                self.op.d.next = self.tx_req_op.val();
            } else if self.ack.m_scan_valid.val() & !self.timer_preemptible.val() {
                self.grant_ak.next = true;
                self.read_qp.next = self.ack.m_scan_qp.val();
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
            & self.b_delay_ok.q.val();
        self.scheduler.s_hold_qp.next = self.op_qp.q.val();
        self.scheduler.s_hold_cycles.next = self.b_vaddr.q.val().get_bits::<24>(0);

        // ---- Transmit machine ----
        // Three stages, so the next WQE is fetched while the current message streams: the
        // claim stage (pick, claim, fetch request), the WQE fetch, the send stage (commit,
        // expect event, message, payload). A QP is claimed only while no WQE of it waits
        // for its commit in the later stages (the claim reads `sq_next`).
        self.scheduler.s_pick_taken.next = false;
        self.fetch.clock.next = self.clock.val();
        self.fetch.reset.next = self.reset.val();
        self.fetch.s_fetch_valid.next = false;
        self.fetch.s_fetch_addr.next = self.fa_wqe_addr.q.val();
        self.payload_buffer.clock.next = self.clock.val();
        self.payload_buffer.reset.next = self.reset.val();
        // The tx DMA read port's data, in request order: to the payload buffer when the
        // oldest burst in flight is a payload read, else to the fetch.
        self.head_pay.next = (self.port_count.q.val() != 0) & self.port_tags.q.val().get_bit(0);
        self.fetch.s_rd_data.next = self.s_txrd_data.val();
        self.fetch.s_rd_valid.next = self.s_txrd_valid.val() & !self.head_pay.val();
        self.payload_buffer.s_data.next = self.s_txrd_data.val();
        self.payload_buffer.s_valid.next = self.s_txrd_valid.val() & self.head_pay.val();
        self.payload_buffer.s_last.next = self.s_txrd_last.val();
        self.port_ready.next = self.fetch.s_rd_ready.val();
        if self.head_pay.val() {
            self.port_ready.next = self.payload_buffer.s_ready.val();
        }
        self.s_txrd_ready.next = self.port_ready.val();
        self.burst_end.next =
            self.s_txrd_valid.val() & self.port_ready.val() & self.s_txrd_last.val();
        // The port's requests: the payload read (PayloadReq; an early one once it fits
        // beside the words reserved, and fewer than two messages' are in the buffer) or
        // the fetch's; one shown and not taken keeps the port.
        self.pl_room.next = (self.pl_msgs.q.val() != 2)
            & ((self.pl_reserved.q.val() + self.b_len_round.q.val())
                <= self.payload_buffer_depth.val());
        self.pay_want.next = (self.tx_state.q.val() == SqTxState::PayloadReq)
            & (!self.tx_early.q.val() | self.pl_room.val());
        self.pay_show.next =
            (self.pay_want.val() & !self.port_fetch_held.q.val()) | self.port_pay_held.q.val();
        self.fetch.m_rd_req_ready.next = self.m_txrd_req_ready.val() & !self.pay_show.val();
        self.m_txrd_req_valid.next = self.fetch.m_rd_req_valid.val();
        self.m_txrd_req_addr.next = self.fetch.m_rd_req_addr.val();
        self.m_txrd_req_words.next = self.fetch.m_rd_req_words.val();
        if self.pay_show.val() {
            // One burst: ceil(length / 8) <= 8192 words.
            self.m_txrd_req_valid.next = true;
            self.m_txrd_req_addr.next = self.b_local.q.val();
            self.m_txrd_req_words.next = self.b_len_round.q.val();
        }
        self.port_pay_held.d.next = self.pay_show.val() & !self.m_txrd_req_ready.val();
        self.port_fetch_held.d.next =
            !self.pay_show.val() & self.fetch.m_rd_req_valid.val() & !self.m_txrd_req_ready.val();
        self.pl_push.next = self.pay_show.val() & self.m_txrd_req_ready.val();
        self.req_taken.next =
            self.m_txrd_req_ready.val() & (self.pay_show.val() | self.fetch.m_rd_req_valid.val());
        self.port_left.next = self.port_count.q.val();
        self.port_tags_left.next = self.port_tags.q.val();
        if self.burst_end.val() {
            self.port_left.next = self.port_count.q.val() - 1;
            self.port_tags_left.next = self.port_tags.q.val() >> 1;
        }
        self.port_count.d.next = self.port_left.val();
        self.port_tags.d.next = self.port_tags_left.val();
        if self.req_taken.val() {
            self.port_count.d.next = self.port_left.val() + 1;
            self.port_tags.d.next = self.port_tags_left.val()
                | (bit_cast::<4, 1>(self.pl_push.val().into()) << self.port_left.val());
        }
        // A long payload's burst is arriving (it was requested with no other payload in
        // flight: the first payload burst to end is its).
        if self.burst_end.val() & self.head_pay.val() {
            self.pl_long.d.next = false;
        }
        if self.pl_push.val() & (self.b_len_round.q.val() > self.payload_buffer_depth.val()) {
            self.pl_long.d.next = true;
        }
        // The payload from the buffer, words of granted messages only (an inline or atomic
        // payload overrides it below: its message is offered only once the buffer is
        // empty).
        self.m_expect_valid.next = false;
        self.m_msg_valid.next = false;
        self.pl_out_ok.next = self.pl_granted.q.val() != 0;
        self.m_payload_valid.next = self.payload_buffer.m_valid.val() & self.pl_out_ok.val();
        self.m_payload_data.next = self.payload_buffer.m_data.val();
        self.m_payload_last.next = self.payload_buffer.m_last.val();
        self.payload_buffer.m_ready.next = self.m_payload_ready.val() & self.pl_out_ok.val();
        self.pl_pop.next =
            self.payload_buffer.m_valid.val() & self.m_payload_ready.val() & self.pl_out_ok.val();
        self.pl_pop_last.next = self.pl_pop.val() & self.payload_buffer.m_last.val();
        self.pl_grant.next = false;
        // Words reserved in the buffer: + a payload read's words, - each word out.
        if self.pl_push.val() {
            if self.pl_pop.val() {
                self.pl_reserved.d.next = self.pl_reserved.q.val() + self.b_len_round.q.val() - 1;
            } else {
                self.pl_reserved.d.next = self.pl_reserved.q.val() + self.b_len_round.q.val();
            }
        } else if self.pl_pop.val() {
            self.pl_reserved.d.next = self.pl_reserved.q.val() - 1;
        }
        // The pick: not while a long payload arrives or the send stage holds one still to
        // be read (it holds the read client; a pick made now could be thousands of clocks
        // stale when its WQE can be read).
        self.pick_blocked.next = ((self.fw_busy.q.val() | self.fw_ready.q.val())
            & (self.fw_qp.q.val() == self.scheduler.m_pick_qp.val()))
            | (((self.tx_state.q.val() == SqTxState::CommitReq)
                | (self.tx_state.q.val() == SqTxState::CommitWait))
                & (self.tx_qp.q.val() == self.scheduler.m_pick_qp.val()));
        self.tx_pick_ok.next = (self.fa_state.q.val() == SqClaimState::Idle)
            & !self.pl_long.q.val()
            & !((self.tx_state.q.val() != SqTxState::Idle)
                & (self.copy_pending.q.val() | self.b_pl_long.q.val()))
            & !self.pick_blocked.val();
        // A reset or moved ring (CSR write) invalidates a claim of that QP in any stage.
        if self.csr_moved.val() & (self.op_qp.q.val() == self.fa_qp.q.val()) {
            self.fa_stale.d.next = true;
        }
        if self.csr_moved.val() & (self.op_qp.q.val() == self.fw_qp.q.val()) {
            self.fw_stale.d.next = true;
        }
        if self.csr_moved.val() & (self.op_qp.q.val() == self.tx_qp.q.val()) {
            self.tx_stale.d.next = true;
        }
        match self.fa_state.q.val() {
            SqClaimState::Idle => {
                if self.scheduler.m_pick_valid.val() & self.tx_pick_ok.val() {
                    self.scheduler.s_pick_taken.next = true;
                    self.fa_qp.d.next = self.scheduler.m_pick_qp.val();
                    self.fa_stale.d.next = false;
                    self.fa_state.d.next = SqClaimState::ClaimReq;
                }
            }
            SqClaimState::ClaimReq => {
                if self.grant_tx.val() & !self.commit_req.val() {
                    self.fa_state.d.next = SqClaimState::ClaimWait;
                }
            }
            SqClaimState::ClaimWait => {
                if self.exec_now.val() & (self.op.q.val() == SqOp::Claim) {
                    self.fa_psn.d.next = self.rd_next.val();
                    self.fa_wqe_addr.d.next = self.rd_wqe_addr_reg.q.val();
                    self.fa_remote.d.next = self.rd_remote.val();
                    self.fa_state.d.next = SqClaimState::Idle;
                    if self.ex_ok.val() {
                        self.fa_state.d.next = SqClaimState::FetchReq;
                    }
                }
            }
            SqClaimState::FetchReq => {
                // Once the fetch's previous WQE is handed off (its fields are copied in
                // the clock after: the next WQE's words come later).
                if !self.fw_busy.q.val() & (!self.fw_ready.q.val() | self.accept.val()) {
                    self.fetch.s_fetch_valid.next = true;
                    if self.fetch.s_fetch_ready.val() {
                        self.fw_busy.d.next = true;
                        self.fw_qp.d.next = self.fa_qp.q.val();
                        self.fw_psn.d.next = self.fa_psn.q.val();
                        self.fw_remote.d.next = self.fa_remote.q.val();
                        self.fw_stale.d.next = self.fa_stale.q.val()
                            | (self.csr_moved.val() & (self.op_qp.q.val() == self.fa_qp.q.val()));
                        self.fa_state.d.next = SqClaimState::Idle;
                    }
                }
            }
            _ => {
                self.fa_state.d.next = SqClaimState::Idle;
            }
        }
        // The fetch hands the WQE off with its last word (word 4, or word 7 of a WQE
        // that uses them); the send stage takes it when free.
        self.accept.next = (self.tx_state.q.val() == SqTxState::Idle)
            & (self.fw_ready.q.val() | (self.fw_busy.q.val() & self.fetch.m_wqe_done.val()));
        if self.fw_busy.q.val() & self.fetch.m_wqe_done.val() {
            self.fw_busy.d.next = false;
            self.fw_ready.d.next = !self.accept.val();
        }
        self.copy_pending.d.next = self.accept.val();
        if self.accept.val() {
            self.fw_ready.d.next = false;
            self.tx_qp.d.next = self.fw_qp.q.val();
            self.tx_psn.d.next = self.fw_psn.q.val();
            self.tx_remote.d.next = self.fw_remote.q.val();
            self.tx_stale.d.next = self.fw_stale.q.val()
                | (self.csr_moved.val() & (self.op_qp.q.val() == self.fw_qp.q.val()));
            self.tx_state.d.next = SqTxState::CommitReq;
        }
        self.msg_free.next = self.pl_msgs.q.val() == 0;
        if self.tx_early.q.val() {
            self.msg_free.next = self.pl_msgs.q.val() == 1;
        }
        match self.tx_state.q.val() {
            SqTxState::Idle => {
                // Takes the fetched WQE: above.
            }
            SqTxState::CommitReq => {
                if self.grant_tx.val() {
                    self.tx_state.d.next = SqTxState::CommitWait;
                }
            }
            SqTxState::CommitWait => {
                if self.exec_now.val() & (self.op.q.val() == SqOp::Commit) {
                    self.tx_resync.d.next = self.rd_resync.val() & !self.rd_outstanding_reg.q.val();
                    self.tx_state.d.next = SqTxState::Idle;
                    if self.ex_ok.val() {
                        self.tx_state.d.next = SqTxState::Msg;
                        if self.b_pl_early.q.val() {
                            self.tx_state.d.next = SqTxState::PayloadReq;
                        }
                        self.tx_early.d.next = self.b_pl_early.q.val();
                        if self.b_op_read.q.val() | self.b_op_atomic.q.val() {
                            self.tx_state.d.next = SqTxState::Expect;
                        }
                        if self.b_local_only.q.val() {
                            self.tx_state.d.next = SqTxState::Local;
                        }
                    }
                }
            }
            SqTxState::Local => {
                if self.ack.s_local_ready.val() {
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
                // After the earlier messages' payload words have left the buffer (its own
                // may wait there, read early).
                self.m_msg_valid.next = self.msg_free.val();
                if self.m_msg_ready.val() & self.msg_free.val() {
                    self.requests_reg.d.next = self.requests_reg.q.val() + 1;
                    self.tx_state.d.next = SqTxState::Idle;
                    self.tx_beat.d.next = 0.into();
                    self.tx_early.d.next = false;
                    self.pl_grant.next = self.tx_early.q.val();
                    if (self.b_msg_length.q.val() != 0)
                        & !self.b_op_atomic.q.val()
                        & !self.tx_early.q.val()
                    {
                        self.tx_state.d.next = SqTxState::PayloadReq;
                        if self.b_inline.q.val() {
                            self.tx_state.d.next = SqTxState::Inline;
                        }
                    }
                    if self.b_op_atomic.q.val() {
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
                        self.tx_state.d.next = SqTxState::Msg;
                    } else {
                        // Read after its grant.
                        self.pl_grant.next = true;
                    }
                }
            }
            SqTxState::Inline => {
                // The payload from the WQE's words 3, 5, 6, 7 (`INLINE_WORDS`).
                self.m_payload_valid.next = true;
                self.m_payload_data.next = self.inline_data.val();
                self.m_payload_last.next =
                    bit_cast::<16, 3>(self.tx_beat.q.val()) + 1 == self.b_len_round.q.val();
                if self.m_payload_ready.val() {
                    self.tx_beat.d.next = self.tx_beat.q.val() + 1;
                    if bit_cast::<16, 3>(self.tx_beat.q.val()) + 1 == self.b_len_round.q.val() {
                        self.tx_state.d.next = SqTxState::Idle;
                    }
                }
            }
            SqTxState::Atomic0 => {
                self.m_payload_valid.next = true;
                self.m_payload_data.next = self.b_compare.q.val();
                self.m_payload_last.next = false;
                if self.m_payload_ready.val() {
                    self.tx_state.d.next = SqTxState::Atomic1;
                }
            }
            SqTxState::Atomic1 => {
                self.m_payload_valid.next = true;
                self.m_payload_data.next = self.b_swap.q.val();
                self.m_payload_last.next = true;
                if self.m_payload_ready.val() {
                    self.tx_state.d.next = SqTxState::Idle;
                }
            }
            _ => {
                self.tx_state.d.next = SqTxState::Idle;
            }
        }
        // Messages with payload in the buffer (or on its way): + a payload read, - its
        // last word out; the granted ones among them: + a grant, - its last word out.
        self.pl_msgs_left.next = self.pl_msgs.q.val();
        self.pl_granted_left.next = self.pl_granted.q.val();
        if self.pl_pop_last.val() {
            self.pl_msgs_left.next = self.pl_msgs.q.val() - 1;
            self.pl_granted_left.next = self.pl_granted.q.val() - 1;
            self.pl_a_qp.d.next = self.pl_b_qp.q.val();
            self.pl_a_psn.d.next = self.pl_b_psn.q.val();
        }
        self.pl_msgs.d.next = self.pl_msgs_left.val();
        self.pl_granted.d.next = self.pl_granted_left.val();
        if self.pl_push.val() {
            self.pl_msgs.d.next = self.pl_msgs_left.val() + 1;
            if self.pl_msgs_left.val() == 0 {
                self.pl_a_qp.d.next = self.tx_qp.q.val();
                self.pl_a_psn.d.next = self.tx_psn.q.val();
            } else {
                self.pl_b_qp.d.next = self.tx_qp.q.val();
                self.pl_b_psn.d.next = self.tx_psn.q.val();
            }
        }
        if self.pl_grant.val() {
            self.pl_granted.d.next = self.pl_granted_left.val() + 1;
        }

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
        self.ack.s_local_valid.next = self.tx_state.q.val() == SqTxState::Local;
        self.ack.s_local_qp.next = self.tx_qp.q.val();
        self.ack.s_local_psn.next = self.tx_psn.q.val();
        self.ack.s_local_status.next = self.b_status.q.val();
        self.ack.s_grant.next = self.grant_ak.val();
        self.ack.s_scan_preempted.next = self.timer_preempted.val();
        self.ack.s_exec.next = self.exec_now.val();
        self.ack.s_exec_ok.next = self.ex_ok.val();
        // A job starts from the entry just evaluated (timer or event).
        self.ack.s_job_valid.next = self.ex_has_job.val();
        self.ack.s_job_first.next = self.rd_una.val();
        self.ack.s_job_succ.next = self.ex_job_succ.val();
        self.ack.s_job_run_status.next = self.ex_job_run_status.val();
        self.ack.s_job_final.next = self.ex_job_final.val();
        self.ack.s_job_status.next = self.ex_job_status.val();
        self.ack.s_job_resync.next = self.ex_job_resync.val();
        self.ack.s_job_base.next = self.rd_base.val();
        self.ack.s_job_size.next = self.rd_size.val();
        self.ack.s_job_remote.next = self.rd_remote.val();
        self.ack.s_qp_reset_valid.next = self.csr_qp_reset.val();
        self.ack.s_qp_reset_qp.next = self.op_qp.q.val();
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
        self.m_cpl_opcode.next = self.ack.m_cpl_opcode.val();
        self.m_cpl_status.next = self.ack.m_cpl_status.val();
        self.m_cpl_qp.next = self.ack.m_cpl_qp.val();
        self.m_cpl_is_receive.next = self.ack.m_cpl_is_receive.val();
        self.m_cpl_has_immediate.next = self.ack.m_cpl_has_immediate.val();
        self.m_cpl_byte_count.next = self.ack.m_cpl_byte_count.val();
        self.m_cpl_wqe_index.next = self.ack.m_cpl_wqe_index.val();
        self.m_cpl_src_node.next = self.ack.m_cpl_src_node.val();
        self.m_cpl_src_qp.next = self.ack.m_cpl_src_qp.val();
        self.m_cpl_wr_id.next = self.ack.m_cpl_wr_id.val();
        self.m_cpl_immediate.next = self.ack.m_cpl_immediate.val();

        // ---- Outputs ----
        self.m_csr_rdata_valid.next = self.rdata_valid_reg.q.val();
        self.m_csr_rdata.next = self.rdata_reg.q.val();
        self.m_msg_opcode.next = self.b_opcode.q.val();
        self.m_msg_dest_node.next = self.tx_remote.q.val().get_bits::<16>(0);
        self.m_msg_src_node.next = self.cfg_node_id.val();
        self.m_msg_dest_qp.next = self.tx_remote.q.val().get_bits::<16>(16);
        self.m_msg_src_qp.next = bit_cast::<16, 6>(self.tx_qp.q.val());
        self.m_msg_psn.next = self.tx_psn.q.val();
        self.m_msg_length.next = self.b_msg_length.q.val();
        self.m_msg_vaddr.next = self.b_vaddr.q.val();
        self.m_msg_stag.next = self.b_stag.q.val();
        self.m_msg_dma_length.next = self.b_length.q.val();
        self.m_msg_immediate.next = 0.into();
        if self.b_op_imm.q.val() {
            self.m_msg_immediate.next = self.b_immediate.q.val();
        }
        self.m_msg_has_immediate.next = self.b_op_imm.q.val();
        self.m_msg_invalidate.next = self.b_invalidate.q.val();
        self.m_msg_resync.next = self.tx_resync.q.val();
        self.m_expect_qp.next = self.tx_qp.q.val();
        self.m_expect_psn.next = self.tx_psn.q.val();
        self.m_expect_addr.next = self.b_local.q.val();
        self.m_expect_length.next = self.b_length.q.val();
        self.m_expect_atomic.next = self.b_op_atomic.q.val();
        self.stat_requests_sent.next = self.requests_reg.q.val();
        self.stat_retransmissions.next = self.retransmissions_reg.q.val();

        if self.reset.val() {
            self.eng_state.d.next = SqEngineState::Idle;
            self.now.d.next = 0.into();
            self.requests_reg.d.next = 0.into();
            self.retransmissions_reg.d.next = 0.into();
            self.rdata_valid_reg.d.next = false;
            self.tx_state.d.next = SqTxState::Idle;
            self.fa_state.d.next = SqClaimState::Idle;
            self.fw_busy.d.next = false;
            self.fw_ready.d.next = false;
            self.copy_pending.d.next = false;
            self.port_count.d.next = 0.into();
            self.port_tags.d.next = 0.into();
            self.port_pay_held.d.next = false;
            self.port_fetch_held.d.next = false;
            self.pl_msgs.d.next = 0.into();
            self.pl_granted.d.next = 0.into();
            self.pl_reserved.d.next = 0.into();
            self.pl_long.d.next = false;
            self.tx_early.d.next = false;
            self.s_csr_ready.next = false;
            self.m_txrd_req_valid.next = false;
            self.s_txrd_ready.next = false;
            self.m_expect_valid.next = false;
            self.m_msg_valid.next = false;
            self.m_payload_valid.next = false;
        }
    }
}

impl ClockedBlock for SendQueueEngine {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
