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
//! - Completion requests: `m_cpl_valid` / `m_cpl_ready`, `m_cpl_opcode` (8), `m_cpl_status`
//!   (8), `m_cpl_qp` (6), `m_cpl_is_receive` (0), `m_cpl_has_immediate` (0),
//!   `m_cpl_byte_count` (32), `m_cpl_wqe_index` (24), `m_cpl_src_node` (16), `m_cpl_src_qp`
//!   (16), `m_cpl_wr_id` (64), `m_cpl_immediate` (0).
//! - Counters (32, wrapping, cleared by reset): `stat_requests_sent` (messages accepted on
//!   `m_msg_*`), `stat_retransmissions` (go-back-N events: retryable NACK or timeout).
//!
//! Structure: the per-QP state lives in the child block [`QpTable`]
//! (`requester/qp_table.rs`: one [`QpEntry`](crate::requester::QpEntry) per QP in six
//! `QpRam`s of `queue_pairs` rounded up to a power of two words, synchronous read, cleared
//! for 64 clocks after reset; three flags stored with each entry, outstanding, has work
//! and window full, spare the decision PSN arithmetic; a QP number at or beyond
//! `queue_pairs` reads an all-zero
//! entry and its write-backs are ignored, so no table address — a CSR access, an
//! acknowledgement event's QP, a write-back — reaches another QP's word), owned by one
//! read-modify-write engine. An operation takes three clocks (grant and read; register the
//! entry as read, nothing behind the block RAM's output; decide from those registers and
//! write back); the evaluation of an acknowledgement event takes four (a Derive clock
//! registers the event's classification from the registered entry before the decision).
//! The next one is granted while one executes if it is for another QP, so they follow
//! every two clocks, and a timer scan that is still reading gives way to a CSR access or
//! a transmit operation (and is dropped for an acknowledgement event or local completion
//! offered meanwhile). The timer check compares the registered `timer_start` against two
//! bounds registered a clock earlier from `now` and `cfg_retry_timeout` (no subtraction
//! behind the entry). By
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

use crate::requester::{
    AckMachine, EventEvaluator, QpEntry, QpTable, Scheduler, SqCsrAccess, TransmitMachine,
};
use crate::sim::ClockedBlock;
use nic_abi::{CompletionStatus, MAX_QUEUE_PAIRS, SEND_WINDOW, WQE_BYTES};
use rust_hdl::prelude::*;

pub use crate::requester::qp_table::QP_TABLE_ADDRESS_BITS;

/// The table engine's state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqEngineState {
    /// Granting the next operation (its QP's entry is read at the clock edge), once the
    /// per-QP table has been cleared after reset.
    Idle,
    /// The entry is valid at the table's output and is registered (nothing else follows
    /// the block RAM's output in this clock).
    Read,
    /// Evaluations of an acknowledgement event only: the values derived from the
    /// registered entry (PSN distances, the event's classification, retry count) are
    /// registered.
    Derive,
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
    /// `op_qp < queue_pairs`, registered with it.
    op_qp_valid: DFF<Bit>,
    csr_reg_reg: DFF<Bits<4>>,
    csr_wdata_reg: DFF<Bits<32>>,
    rdata_valid_reg: DFF<Bit>,
    rdata_reg: DFF<Bits<64>>,
    /// Free-running cycle counter (the timers' time base).
    now: DFF<Bits<32>>,
    retransmissions_reg: DFF<Bits<32>>,
    /// Which QP the transmit machine serves next (eligibility bits and round robin).
    scheduler: Scheduler,
    /// The transmit machine: claim, WQE fetch, commit, message and payload.
    tm: TransmitMachine,
    tx_req_qp: Signal<Local, Bits<6>>,
    /// A CSR write executed this clock resets `op_qp` or moves its ring.
    csr_moved: Signal<Local, Bit>,
    /// The acknowledgement machine: events, completion jobs (re-read, completion request,
    /// advance) and the timer scan; its evaluations and advances run in the table engine.
    pub(crate) ack: AckMachine,
    /// The CSR write being executed resets its QP (a job of that QP goes stale).
    csr_qp_reset: Signal<Local, Bit>,
    /// The judgement of an acknowledgement event against the entry (Derive and Exec).
    ev: EventEvaluator,
    /// The entry read, registered in the Read clock (the block RAM's output goes straight
    /// into these flip-flops; everything derived from the entry starts from them).
    ent: DFF<QpEntry>,
    /// The entry's flags (`QpTable`), registered with it.
    ent_outstanding: DFF<Bit>,
    ent_has_work: DFF<Bit>,
    ent_window_full: DFF<Bit>,
    // Derive stage (acknowledgement operations): values derived from the registered
    // entry, registered for the Exec clock (the timing cut between the PSN arithmetic and
    // the decision).
    /// `sq_una` is the advance's WQE index (an advance decides from the registered entry).
    una_is_adv: Signal<Local, Bit>,
    /// `sq_next` is the commit's PSN (held while the commit is in the engine).
    next_is_commit: Signal<Local, Bit>,
    /// The same from the registered entry, for a timer check (which has no Derive clock).
    retry_kept: Signal<Local, Bits<4>>,
    retry_kept_exceeded: Signal<Local, Bit>,
    /// `sq_next + 1` (a commit's write-back, from the registered entry).
    next_p1: Signal<Local, Bits<24>>,
    /// `sq_una + 1` from the registered entry (a timer check's write-back).
    una_p1_now: Signal<Local, Bits<24>>,
    /// The QP's retry timer has expired (as of the Exec clock).
    /// The retry timer as of the next clock, for the comparison of a timer check's Exec
    /// clock without a subtraction behind the entry: the timer has expired when
    /// `(now - timer_start) mod 2^32 >= cfg_retry_timeout`, that is when `timer_start`
    /// lies in the circular interval from `now + 1` (`timer_lo`) up to
    /// `now - cfg_retry_timeout` (`timer_hi`); `timer_wrap`: that interval wraps past
    /// 2^32 - 1; `timer_never`: the timeout is 0.
    timer_lo: DFF<Bits<32>>,
    timer_hi: DFF<Bits<32>>,
    timer_wrap: DFF<Bit>,
    timer_never: DFF<Bit>,
    timer_ge_lo: Signal<Local, Bit>,
    timer_le_hi: Signal<Local, Bit>,
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
    timer_lo_next: Signal<Local, Bits<32>>,
    timer_hi_next: Signal<Local, Bits<32>>,
    job_idx_p1: Signal<Local, Bits<24>>,
    /// The stored retry count + 1.
    retry_inc: Signal<Local, Bits<5>>,
    /// The engine executes an operation this clock.
    exec_now: Signal<Local, Bit>,
    /// A timer scan is reading: a CSR access or a transmit operation may take its place.
    timer_preemptible: Signal<Local, Bit>,
    /// It did (the acknowledgement machine goes back to Idle; the scan retries the QP).
    timer_preempted: Signal<Local, Bit>,
    /// A scan that is only reading is dropped for an event or local completion offered.
    timer_abandoned: Signal<Local, Bit>,
    /// The QP of the operation the priority order picks this clock.
    next_qp: Signal<Local, Bits<6>>,
    /// An operation executes and the next one is for another QP: grant it now.
    overlap_ok: Signal<Local, Bit>,
    /// `now + 1`: the cycle counter as of the next clock.
    now_p1: Signal<Local, Bits<32>>,
    timer_expired: Signal<Local, Bit>,
    // Combinational: requests and grants.
    tx_req: Signal<Local, Bit>,
    tx_req_op: Signal<Local, SqOp>,
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
    /// The entry written back (the one read, changed by the operation executed).
    wr: Signal<Local, QpEntry>,
    /// The entry an operation that changes nothing writes back.
    wr_kept: Signal<Local, QpEntry>,
    /// The per-QP CSR registers: a read's answer, a write's entry.
    csr: SqCsrAccess,
    // Constants.
    num_qps: Constant<Bits<7>>,
    /// log2 of a WQE's bytes (`nic_abi::WQE_BYTES`).
    wqe_shift: Constant<Bits<32>>,
    ones24: Constant<Bits<24>>,
    st_retry: Constant<Bits<8>>,
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
            qp_table: QpTable::new(queue_pairs),
            eng_state: Default::default(),
            op: Default::default(),
            op_qp: Default::default(),
            op_qp_valid: Default::default(),
            csr_reg_reg: Default::default(),
            csr_wdata_reg: Default::default(),
            rdata_valid_reg: Default::default(),
            rdata_reg: Default::default(),
            now: Default::default(),
            retransmissions_reg: Default::default(),
            scheduler: Scheduler::new(queue_pairs),
            tm: TransmitMachine::new(),
            tx_req_qp: Default::default(),
            csr_moved: Default::default(),
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
            ent: Default::default(),
            ent_outstanding: Default::default(),
            ent_has_work: Default::default(),
            ent_window_full: Default::default(),
            ev: EventEvaluator::new(SEND_WINDOW as usize),
            next_is_commit: Default::default(),
            una_is_adv: Default::default(),
            retry_kept: Default::default(),
            retry_kept_exceeded: Default::default(),
            timer_lo: Default::default(),
            timer_hi: Default::default(),
            timer_wrap: Default::default(),
            timer_never: Default::default(),
            timer_ge_lo: Default::default(),
            timer_le_hi: Default::default(),
            exec_now: Default::default(),
            timer_preemptible: Default::default(),
            timer_preempted: Default::default(),
            timer_abandoned: Default::default(),
            next_qp: Default::default(),
            overlap_ok: Default::default(),
            now_p1: Default::default(),
            timer_expired: Default::default(),
            rd_mask: Default::default(),
            rd_slot: Default::default(),
            rd_wqe_addr: Default::default(),
            qp_valid: Default::default(),
            timer_lo_next: Default::default(),
            timer_hi_next: Default::default(),
            next_p1: Default::default(),
            una_p1_now: Default::default(),
            job_idx_p1: Default::default(),
            retry_inc: Default::default(),
            tx_req: Default::default(),
            tx_req_op: Default::default(),
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
            wr: Default::default(),
            wr_kept: Default::default(),
            csr: SqCsrAccess::new(queue_pairs),
            num_qps: k(queue_pairs as u64),
            wqe_shift: k(WQE_BYTES.trailing_zeros() as u64),
            ones24: k(0xFF_FFFF),
            st_retry: k(CompletionStatus::RETRY_EXCEEDED as u64),
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
            ent,
            ent_outstanding,
            ent_has_work,
            ent_window_full,
            timer_lo,
            timer_hi,
            timer_wrap,
            timer_never,
            op,
            op_qp,
            op_qp_valid,
            csr_granted_last,
            csr_reg_reg,
            csr_wdata_reg,
            rdata_valid_reg,
            rdata_reg,
            now,
            retransmissions_reg
        );
        self.qp_table.clock.next = self.clock.val();
        self.qp_table.reset.next = self.reset.val();
        self.scheduler.clock.next = self.clock.val();
        self.scheduler.reset.next = self.reset.val();
        self.now_p1.next = self.now.q.val() + 1;
        self.now.d.next = self.now_p1.val();
        self.exec_now.next = self.eng_state.q.val() == SqEngineState::Exec;

        // ---- The entry read last clock, registered in the Read clock (valid in Derive and
        // Exec) ----
        if self.eng_state.q.val() == SqEngineState::Read {
            self.ent.d.next = self.qp_table.m_rd_entry.val();
            self.ent_outstanding.d.next = self.qp_table.m_rd_outstanding.val();
            self.ent_has_work.d.next = self.qp_table.m_rd_has_work.val();
            self.ent_window_full.d.next = self.qp_table.m_rd_window_full.val();
        }
        self.rd_base.next = self.ent.q.val().base;
        self.rd_remote.next = self.ent.q.val().remote;
        self.rd_pi.next = self.ent.q.val().sq_pi;
        self.rd_size.next = self.ent.q.val().size_log2;
        self.rd_next.next = self.ent.q.val().sq_next;
        self.rd_enable.next = self.ent.q.val().enable;
        self.rd_resync.next = self.ent.q.val().resync;
        self.rd_waiting.next = self.ent.q.val().waiting;
        self.rd_drain.next = self.ent.q.val().draining;
        self.rd_retry.next = self.ent.q.val().retry;
        self.rd_una.next = self.ent.q.val().sq_una;
        self.rd_una_rsp.next = self.ent.q.val().una_needs_response;
        self.rd_tstart.next = self.ent.q.val().timer_start;
        self.qp_valid.next = self.op_qp_valid.q.val();
        // The timer's interval as of the next clock (whose `now` is `now_p1`).
        self.timer_lo_next.next = self.now_p1.val() + 1;
        self.timer_hi_next.next = self.now_p1.val() - self.cfg_retry_timeout.val();
        self.timer_lo.d.next = self.timer_lo_next.val();
        self.timer_hi.d.next = self.timer_hi_next.val();
        self.timer_wrap.d.next = self.timer_lo_next.val() > self.timer_hi_next.val();
        self.timer_never.d.next = self.cfg_retry_timeout.val() == 0;
        self.next_p1.next = self.rd_next.val() + 1;
        self.una_p1_now.next = self.rd_una.val() + 1;
        self.job_idx_p1.next = self.ack.m_adv_idx.val() + 1;
        // The entry's flags, stored with it (no PSN arithmetic behind the entry).
        self.rd_outstanding.next = self.ent_outstanding.q.val();
        self.rd_eligible.next = self.qp_valid.val()
            & self.rd_enable.val()
            & self.ent_has_work.q.val()
            & !self.ent_window_full.q.val()
            & !self.rd_waiting.val()
            & !(self.rd_drain.val() & self.rd_outstanding.val());
        // WQE address of sq_next: SQ_BASE + (sq_next mod 2^SQ_SIZE_LOG2) * 64.
        self.rd_mask.next = !(self.ones24.val() << self.rd_size.val());
        self.rd_slot.next = self.rd_next.val() & self.rd_mask.val();
        self.rd_wqe_addr.next =
            self.rd_base.val() + (bit_cast::<32, 24>(self.rd_slot.val()) << self.wqe_shift.val());
        // A timer check's retry count (an event's is the evaluator's).
        self.retry_inc.next = bit_cast::<5, 4>(self.rd_retry.val()) + 1;
        // `(now - timer_start) mod 2^32 >= cfg_retry_timeout` (two comparisons side by side).
        self.timer_ge_lo.next = self.rd_tstart.val() >= self.timer_lo.q.val();
        self.timer_le_hi.next = self.rd_tstart.val() <= self.timer_hi.q.val();
        self.timer_expired.next = !self.timer_never.q.val()
            & (self.timer_ge_lo.val() & self.timer_le_hi.val()
                | (self.timer_wrap.q.val() & (self.timer_ge_lo.val() | self.timer_le_hi.val())));
        // A claim, commit or advance decides from the registered entry directly.
        self.next_is_commit.next = self.rd_next.val() == self.tm.m_commit_psn.val();
        self.una_is_adv.next = self.rd_una.val() == self.ack.m_adv_idx.val();
        self.retry_kept.next = self.retry_inc.val().get_bits::<4>(0);
        self.retry_kept_exceeded.next =
            self.retry_inc.val() > bit_cast::<5, 4>(self.cfg_retry_limit.val());
        // ---- Requests of the transmit machine (from its registers) ----
        self.tx_req.next = self.tm.m_op_valid.val();
        self.tx_req_op.next = SqOp::Claim;
        if self.tm.m_op_commit.val() {
            self.tx_req_op.next = SqOp::Commit;
        }
        self.tx_req_qp.next = self.tm.m_op_qp.val();
        // (Compared in the timer check's Exec clock, from the registered entry.)
        self.tm.s_una_qp.next = self.op_qp.q.val();
        self.tm.s_una_psn.next = self.rd_una.val();
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
        // The stored draining flag holds only while messages are outstanding (tested
        // here, from the registered entry, not behind the write-back's PSN muxes).
        self.wr_kept.next = self.ent.q.val();
        self.wr_kept.next.draining = self.rd_drain.val() & self.rd_outstanding.val();
        self.wr.next = self.wr_kept.val();
        match self.eng_state.q.val() {
            SqEngineState::Idle => {
                // Granting: below.
            }
            SqEngineState::Read => {
                // The entry is valid and registered; an acknowledgement operation then
                // registers the values derived from it.
                self.eng_state.d.next = SqEngineState::Exec;
                if self.op.q.val() == SqOp::Eval {
                    self.eng_state.d.next = SqEngineState::Derive;
                }
            }
            SqEngineState::Derive => {
                self.eng_state.d.next = SqEngineState::Exec;
            }
            SqEngineState::Exec => {
                self.eng_state.d.next = SqEngineState::Idle;
                match self.op.q.val() {
                    SqOp::CsrRead => {
                        self.rdata_valid_reg.d.next = true;
                        self.rdata_reg.d.next = self.csr.m_rdata.val();
                    }
                    SqOp::CsrWrite => {
                        // Writes to QPs beyond `queue_pairs` are ignored (`SqCsrAccess`).
                        self.ex_ok.next = self.qp_valid.val();
                        self.wr.next = self.csr.m_entry.val();
                        self.csr_qp_reset.next = self.csr.m_qp_reset.val();
                        self.csr_moved.next = self.csr.m_moved.val();
                    }
                    SqOp::Claim => {
                        self.ex_ok.next = self.rd_eligible.val();
                    }
                    SqOp::Commit => {
                        self.ex_ok.next = self.rd_eligible.val()
                            & self.next_is_commit.val()
                            & !self.tm.m_commit_stale.val()
                            & (!self.tm.m_commit_need_empty.val() | !self.rd_outstanding.val());
                        if self.ex_ok.val() {
                            self.wr.next.sq_next = self.next_p1.val();
                            if self.tm.m_commit_local_only.val() {
                                // Nothing more is sent until the local completion is done.
                                self.wr.next.draining = true;
                            } else if self.tm.m_commit_needs_response.val() {
                                // Committed only with nothing outstanding: it is sq_una.
                                self.wr.next.waiting = true;
                                self.wr.next.una_needs_response = true;
                            }
                            if !self.rd_outstanding.val() {
                                self.wr.next.timer_start = self.now.q.val();
                            }
                        } else if self.rd_eligible.val()
                            & self.next_is_commit.val()
                            & !self.tm.m_commit_stale.val()
                        {
                            // READ, atomic or bad WQE behind outstanding messages: wait
                            // until the QP drains.
                            self.wr.next.draining = true;
                        }
                    }
                    SqOp::Eval => {
                        // The evaluator's decision on the event (registered in Derive).
                        self.ex_job_valid.next = self.ev.m_job_valid.val();
                        self.ex_job_succ.next = self.ev.m_job_succ.val();
                        self.ex_job_run_status.next = self.ev.m_job_run_status.val();
                        self.ex_job_final.next = self.ev.m_job_final.val();
                        self.ex_job_status.next = self.ev.m_job_status.val();
                        self.ex_job_resync.next = self.ev.m_job_resync.val();
                        self.ex_retx.next = self.ev.m_retx.val();
                        if self.ev.m_restart.val() {
                            self.wr.next.waiting = false;
                            self.wr.next.timer_start = self.now.q.val();
                        }
                        if self.ev.m_set_next.val() {
                            self.wr.next.sq_next = self.ev.m_next.val();
                        }
                        if self.ev.m_set_retry.val() {
                            self.wr.next.retry = self.ev.m_retry.val();
                        }
                        if self.ev.m_set_drain.val() {
                            self.wr.next.draining = true;
                        }
                    }
                    SqOp::Advance => {
                        self.ex_ok.next = self.qp_valid.val()
                            & self.una_is_adv.val()
                            & !self.ack.m_adv_stale.val();
                        if self.ex_ok.val() {
                            self.wr.next.sq_una = self.job_idx_p1.val();
                            self.wr.next.una_needs_response = false;
                            if !self.rd_outstanding.val() {
                                self.wr.next.sq_next = self.job_idx_p1.val();
                            }
                            self.wr.next.resync = self.ack.m_adv_set_resync.val();
                            self.wr.next.timer_start = self.now.q.val();
                        }
                    }
                    SqOp::Timer => {
                        // The timer runs while messages are outstanding.
                        self.ex_ok.next = self.qp_valid.val() & self.rd_outstanding.val();
                        if self.ex_ok.val() {
                            if self.tm.m_on_una.val() {
                                // sq_una is still being transmitted: not yet waiting for
                                // its answer. (Later messages do not hold the timer: it
                                // measures the oldest message's wait.)
                                self.wr.next.timer_start = self.now.q.val();
                            } else if self.timer_expired.val() {
                                self.ex_retx.next = true;
                                self.wr.next.timer_start = self.now.q.val();
                                self.wr.next.waiting = false;
                                self.wr.next.sq_next = self.rd_una.val();
                                self.wr.next.retry = self.retry_kept.val();
                                if self.retry_kept_exceeded.val() {
                                    self.ex_job_valid.next = true;
                                    self.ex_job_final.next = true;
                                    self.ex_job_status.next = self.st_retry.val();
                                    self.ex_job_resync.next = true;
                                    self.wr.next.sq_next = self.una_p1_now.val();
                                    self.wr.next.draining = true;
                                    self.wr.next.retry = 0.into();
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
                self.op_qp_valid.d.next = bit_cast::<7, 6>(self.read_qp.val()) < self.num_qps.val();
                self.eng_state.d.next = SqEngineState::Read;
            }
        }
        // A scan that is only reading also gives way to an acknowledgement event or a local
        // completion offered meanwhile (the acknowledgement machine takes it the next clock,
        // not after the scan's Exec clock).
        self.timer_abandoned.next = self.timer_preemptible.val()
            & !self.grant_csr.val()
            & !self.grant_tx.val()
            & (self.s_ack_valid.val() | self.tm.m_local_valid.val());
        if self.timer_abandoned.val() {
            self.eng_state.d.next = SqEngineState::Idle;
        }
        self.timer_preempted.next = self.timer_preemptible.val()
            & (self.grant_csr.val() | self.grant_tx.val() | self.timer_abandoned.val());
        self.ex_has_job.next =
            self.ex_job_valid.val() & ((self.ex_job_succ.val() != 0) | self.ex_job_final.val());
        if self.ex_retx.val() {
            self.retransmissions_reg.d.next = self.retransmissions_reg.q.val() + 1;
        }
        // Write back the entry. The scheduler's eligibility bit follows two clocks later,
        // from the entry as written (registered: the PSN arithmetic of the decision and the
        // window test are in different clocks). Nothing else reads it; the transmit
        // machine, if it picks a QP in that clock, finds it ineligible at its claim.
        self.scheduler.s_wb_valid.next = self.eng_state.q.val() == SqEngineState::Exec;
        self.scheduler.s_wb_qp.next = self.op_qp.q.val();
        self.scheduler.s_wb_next.next = self.wr.val().sq_next;
        self.scheduler.s_wb_una.next = self.wr.val().sq_una;
        self.scheduler.s_wb_pi.next = self.wr.val().sq_pi;
        self.scheduler.s_wb_ready.next =
            self.qp_valid.val() & self.wr.val().enable & !self.wr.val().waiting;
        // The draining flag as written; the scheduler tests `una != next` from its
        // registered copies, the table engine at the next read.
        self.scheduler.s_wb_drain.next = self.wr.val().draining;
        self.qp_table.s_rd_addr.next = self.read_qp.val();
        self.qp_table.s_wr_valid.next = self.eng_state.q.val() == SqEngineState::Exec;
        self.qp_table.s_wr_addr.next = self.op_qp.q.val();
        self.qp_table.s_wr_entry.next = self.wr.val();

        // A DELAY's commit holds its QP (from the next clock; its drain already keeps the
        // QP out until the local completion, so no pick can come between).
        self.scheduler.s_hold_valid.next = (self.eng_state.q.val() == SqEngineState::Exec)
            & (self.op.q.val() == SqOp::Commit)
            & self.ex_ok.val()
            & self.tm.m_commit_delay.val();
        self.scheduler.s_hold_qp.next = self.op_qp.q.val();
        self.scheduler.s_hold_cycles.next = self.tm.m_delay_cycles.val();
        // A QP reset drops the QP's hold: the DELAY belonged to the ring the reset restarts.
        self.scheduler.s_drop_valid.next = self.csr_qp_reset.val();
        self.scheduler.s_drop_qp.next = self.op_qp.q.val();

        // ---- CSR registers (the entry as it would be written back unchanged) ----
        self.csr.s_qp.next = self.op_qp.q.val();
        self.csr.s_reg.next = self.csr_reg_reg.q.val();
        self.csr.s_wdata.next = self.csr_wdata_reg.q.val();
        self.csr.s_entry.next = self.wr_kept.val();
        self.csr.s_now.next = self.now.q.val();

        // ---- Event evaluator (its inputs are held through Derive and Exec) ----
        self.ev.clock.next = self.clock.val();
        self.ev.cfg_retry_limit.next = self.cfg_retry_limit.val();
        self.ev.s_qp_valid.next = self.qp_valid.val();
        self.ev.s_una.next = self.rd_una.val();
        self.ev.s_next.next = self.rd_next.val();
        self.ev.s_pi.next = self.rd_pi.val();
        self.ev.s_retry.next = self.rd_retry.val();
        self.ev.s_una_rsp.next = self.rd_una_rsp.val();
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
        self.tm.s_op_grant.next = self.grant_tx.val();
        self.tm.s_claim_done.next = self.exec_now.val() & (self.op.q.val() == SqOp::Claim);
        self.tm.s_commit_done.next = self.exec_now.val() & (self.op.q.val() == SqOp::Commit);
        self.tm.s_op_ok.next = self.ex_ok.val();
        self.tm.s_claim_psn.next = self.rd_next.val();
        self.tm.s_claim_addr.next = self.rd_wqe_addr.val();
        self.tm.s_claim_remote.next = self.rd_remote.val();
        self.tm.s_commit_resync.next = self.rd_resync.val() & !self.rd_outstanding.val();
        self.tm.s_moved_valid.next = self.csr_moved.val();
        self.tm.s_moved_qp.next = self.op_qp.q.val();
        self.tm.m_local_ready.next = self.ack.s_local_ready.val();
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
        self.ack.s_local_valid.next = self.tm.m_local_valid.val();
        self.ack.s_local_qp.next = self.tm.m_local_qp.val();
        self.ack.s_local_psn.next = self.tm.m_local_psn.val();
        self.ack.s_local_status.next = self.tm.m_local_status.val();
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
        self.stat_retransmissions.next = self.retransmissions_reg.q.val();

        if self.reset.val() {
            self.eng_state.d.next = SqEngineState::Idle;
            self.now.d.next = 0.into();
            self.retransmissions_reg.d.next = 0.into();
            self.rdata_valid_reg.d.next = false;
            self.s_csr_ready.next = false;
        }
    }
}

impl ClockedBlock for SendQueueEngine {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
