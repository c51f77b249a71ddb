//! `TransmitMachine`: the requester's transmit path: it takes the scheduler's pick, has the
//! QP claimed by the table engine, fetches its WQE, has it committed, and sends the expect
//! event, the message and its payload. Three stages, so the next WQE is claimed and fetched
//! while the current message commits and streams:
//! - claim stage: take a pick (not a QP whose WQE in a later stage is not yet committed:
//!   its claim would read the same `sq_next`; not while a payload longer than the buffer is
//!   read or still to be read), request the claim, then the WQE's fetch;
//! - the [`WqeFetch`] (`requester/wqe_fetch.rs`): words 0-4 (5-7 for a WQE that uses them),
//!   handed to the send stage with the last one;
//! - send stage: copy the WQE's fields and class (the clock after it takes the WQE, so the
//!   fetch may read the next one), request the commit, then by class: the local completion
//!   (a bad WQE, NOP, BIND RKEY, DELAY), the expect event (READ, atomic), the message, the
//!   payload (read into the [`PayloadBuffer`]: one that fits the buffer right after the
//!   commit, before the message is offered; a longer one after the message's grant), an
//!   inline payload from the WQE's words 3, 5, 6, 7 or an atomic's two operands.
//!
//! Follows "SendQueueEngine: design notes" and "Message rate of short messages" in
//! `docs/nic-blocks.md` and the commit point of `docs/nic-architecture.md` (the WQE fetch
//! is speculative; the PSN is taken by the table engine's atomic re-check; a QP reset or
//! moved ring since the claim drops the fetched WQE).
//!
//! Ports (valid/ready handshakes; a source holds its fields while valid and not ready):
//! - `clock`, `reset` (synchronous, active high: every stage idle, the buffer empty).
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
//!   (24), `m_local_status` (8).
//! - `s_una_qp` (6), `s_una_psn` (24), `m_on_una` (combinational): that PSN of that QP is
//!   being transmitted (the send stage's message, or one whose payload is in the buffer).
//! - Message, payload, expect event and tx DMA read client: as `SendQueueEngine`'s ports of
//!   the same names; `stat_requests_sent` (32, messages taken).
//!
//! Latency: a pick is claimed when the engine grants it (claims go after commits); the
//! fetch request follows the claim by one clock (once the fetch is free); the send stage
//! takes the WQE in the clock of its last word (or when it becomes free) and requests the
//! commit the next clock; a payload that fits the buffer is requested the clock after the
//! commit, the message offered once that request is taken and the previous message's
//! payload has left the buffer.
//! Throughput: the tx read port carries the next WQE's words while the current payload is
//! requested; one-cell messages on several QPs follow each other every 13 port words
//! (segmenter-bound at 16 clocks: `nic bench nic --size 64`).
//! Limits: one WQE per stage; two messages' payloads in the buffer (at most
//! `PAYLOAD_BUFFER_DEPTH` words of early payloads); at most four bursts in flight on the tx
//! read port (a WQE's two reads, two payloads); a payload of up to 8192 words.

use crate::common::bundles::MessageDescriptor;
use crate::requester::payload_buffer::PAYLOAD_BUFFER_DEPTH;
use crate::requester::{PayloadBuffer, WqeFetch};
use crate::sim::ClockedBlock;
use nic_abi::{
    CompletionStatus, WqeOpcode, BIND_OPCODE, DELAY_CYCLES_MASK, DELAY_OPCODE, INLINE_MAX_BYTES,
    MAX_MESSAGE_LENGTH, NOP_OPCODE,
};
use rust_hdl::prelude::*;

/// The claim stage: pick a QP, claim it (read `sq_next`), request its WQE's fetch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqClaimState {
    Idle,
    ClaimReq,
    ClaimWait,
    /// Waiting for the WQE fetch to be free (its previous WQE handed to the send stage).
    FetchReq,
}

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
    requests_reg: DFF<Bits<32>>,
    // Claim stage.
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
    /// The send stage's message had its payload requested before its grant (it fits the
    /// buffer): its words wait in the buffer until the message is taken.
    tx_early: DFF<Bit>,
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
    commit_req: Signal<Local, Bit>,
    /// The pick is a QP whose WQE in the fetch or send stage is not yet committed.
    pick_blocked: Signal<Local, Bit>,
    /// The claim stage may take the pick.
    tx_pick_ok: Signal<Local, Bit>,
    /// The send stage takes the fetched WQE this clock.
    accept: Signal<Local, Bit>,
    /// The send stage's message is being transmitted (expect event to its last payload
    /// word, or its payload request).
    tx_streaming: Signal<Local, Bit>,
    /// The WQE fetch: the read of the WQE's words into its fields.
    fetch: WqeFetch,
    /// The payload words read from host memory, on their way to `m_payload_*`.
    payload_buffer: PayloadBuffer,
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
    /// A payload longer than the buffer is arriving.
    pl_long: DFF<Bit>,
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
    /// The buffer's words may go out (those of granted messages).
    pl_out_ok: Signal<Local, Bit>,
    // Combinational: the WQE in the fetch's fields.
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
    need_empty: Signal<Local, Bit>,
    msg_length: Signal<Local, Bits<32>>,
    len_round: Signal<Local, Bits<16>>,
    /// The payload read fits the buffer: requested before the message is offered.
    pl_early: Signal<Local, Bit>,
    inline_data: Signal<Local, Bits<64>>,
    payload_buffer_depth: Constant<Bits<16>>,
    max_length: Constant<Bits<32>>,
    inline_max: Constant<Bits<32>>,
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
    st_address: Constant<Bits<8>>,
    st_opcode: Constant<Bits<8>>,
}

/// `Bits<N>` constant from a `u64`.
fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.to_bits())
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
            requests_reg: Default::default(),
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
            tx_state: Default::default(),
            tx_qp: Default::default(),
            tx_psn: Default::default(),
            tx_remote: Default::default(),
            tx_resync: Default::default(),
            tx_stale: Default::default(),
            tx_beat: Default::default(),
            tx_early: Default::default(),
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
            commit_req: Default::default(),
            pick_blocked: Default::default(),
            tx_pick_ok: Default::default(),
            accept: Default::default(),
            tx_streaming: Default::default(),
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
            pl_long: Default::default(),
            pl_room: Default::default(),
            pl_push: Default::default(),
            pl_pop: Default::default(),
            pl_pop_last: Default::default(),
            pl_msgs_left: Default::default(),
            pl_granted_left: Default::default(),
            pl_grant: Default::default(),
            msg_free: Default::default(),
            pl_out_ok: Default::default(),
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
            need_empty: Default::default(),
            msg_length: Default::default(),
            len_round: Default::default(),
            pl_early: Default::default(),
            inline_data: Default::default(),
            fetch: WqeFetch::new(),
            payload_buffer: PayloadBuffer::new(),
            payload_buffer_depth: k(PAYLOAD_BUFFER_DEPTH as u64),
            max_length: k(MAX_MESSAGE_LENGTH as u64),
            inline_max: k(INLINE_MAX_BYTES as u64),
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
            st_address: k(CompletionStatus::LOCAL_ADDRESS_ERROR as u64),
            st_opcode: k(CompletionStatus::BAD_OPCODE as u64),
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
            requests_reg,
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
            tx_early,
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
            pl_long
        );
        self.stat_requests_sent.next = self.requests_reg.q.val();
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
        self.m_op_valid.next =
            self.commit_req.val() | (self.fa_state.q.val() == SqClaimState::ClaimReq);
        self.m_op_commit.next = self.commit_req.val();
        self.m_op_qp.next = self.fa_qp.q.val();
        if self.commit_req.val() {
            self.m_op_qp.next = self.tx_qp.q.val();
        }
        self.m_commit_psn.next = self.tx_psn.q.val();
        self.m_commit_stale.next = self.tx_stale.q.val();
        self.m_commit_need_empty.next = self.b_need_empty.q.val();
        self.m_commit_local_only.next = self.b_local_only.q.val();
        self.m_commit_needs_response.next = self.b_op_read.q.val() | self.b_op_atomic.q.val();
        self.m_commit_delay.next = self.b_delay_ok.q.val();
        self.m_delay_cycles.next = self.b_vaddr.q.val().get_bits::<24>(0);
        self.m_local_valid.next = self.tx_state.q.val() == SqTxState::Local;
        self.m_local_qp.next = self.tx_qp.q.val();
        self.m_local_psn.next = self.tx_psn.q.val();
        self.m_local_status.next = self.b_status.q.val();
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
        self.m_on_una.next = (self.tx_streaming.val()
            & (self.tx_qp.q.val() == self.s_una_qp.val())
            & (self.tx_psn.q.val() == self.s_una_psn.val()))
            | ((self.pl_msgs.q.val() != 0)
                & (self.pl_a_qp.q.val() == self.s_una_qp.val())
                & (self.pl_a_psn.q.val() == self.s_una_psn.val()))
            | ((self.pl_msgs.q.val() == 2)
                & (self.pl_b_qp.q.val() == self.s_una_qp.val())
                & (self.pl_b_psn.q.val() == self.s_una_psn.val()));

        // Three stages, so the next WQE is fetched while the current message streams: the
        // claim stage (pick, claim, fetch request), the WQE fetch, the send stage (commit,
        // expect event, message, payload). A QP is claimed only while no WQE of it waits
        // for its commit in the later stages (the claim reads `sq_next`).
        self.m_pick_taken.next = false;
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
            & (self.fw_qp.q.val() == self.s_pick_qp.val()))
            | (((self.tx_state.q.val() == SqTxState::CommitReq)
                | (self.tx_state.q.val() == SqTxState::CommitWait))
                & (self.tx_qp.q.val() == self.s_pick_qp.val()));
        self.tx_pick_ok.next = (self.fa_state.q.val() == SqClaimState::Idle)
            & !self.pl_long.q.val()
            & !((self.tx_state.q.val() != SqTxState::Idle)
                & (self.copy_pending.q.val() | self.b_pl_long.q.val()))
            & !self.pick_blocked.val();
        // A reset or moved ring (CSR write) invalidates a claim of that QP in any stage.
        if self.s_moved_valid.val() & (self.s_moved_qp.val() == self.fa_qp.q.val()) {
            self.fa_stale.d.next = true;
        }
        if self.s_moved_valid.val() & (self.s_moved_qp.val() == self.fw_qp.q.val()) {
            self.fw_stale.d.next = true;
        }
        if self.s_moved_valid.val() & (self.s_moved_qp.val() == self.tx_qp.q.val()) {
            self.tx_stale.d.next = true;
        }
        match self.fa_state.q.val() {
            SqClaimState::Idle => {
                if self.s_pick_valid.val() & self.tx_pick_ok.val() {
                    self.m_pick_taken.next = true;
                    self.fa_qp.d.next = self.s_pick_qp.val();
                    self.fa_stale.d.next = false;
                    self.fa_state.d.next = SqClaimState::ClaimReq;
                }
            }
            SqClaimState::ClaimReq => {
                if self.s_op_grant.val() & !self.commit_req.val() {
                    self.fa_state.d.next = SqClaimState::ClaimWait;
                }
            }
            SqClaimState::ClaimWait => {
                if self.s_claim_done.val() {
                    self.fa_psn.d.next = self.s_claim_psn.val();
                    self.fa_wqe_addr.d.next = self.s_claim_addr.val();
                    self.fa_remote.d.next = self.s_claim_remote.val();
                    self.fa_state.d.next = SqClaimState::Idle;
                    if self.s_op_ok.val() {
                        self.fa_state.d.next = SqClaimState::FetchReq;
                    }
                }
            }
            SqClaimState::FetchReq => {
                // Once the fetch's previous WQE has been taken by the send stage (its
                // fields are copied in the clock after: the next WQE's words come later).
                if !self.fw_busy.q.val() & !self.fw_ready.q.val() {
                    self.fetch.s_fetch_valid.next = true;
                    if self.fetch.s_fetch_ready.val() {
                        self.fw_busy.d.next = true;
                        self.fw_qp.d.next = self.fa_qp.q.val();
                        self.fw_psn.d.next = self.fa_psn.q.val();
                        self.fw_remote.d.next = self.fa_remote.q.val();
                        self.fw_stale.d.next = self.fa_stale.q.val()
                            | (self.s_moved_valid.val()
                                & (self.s_moved_qp.val() == self.fa_qp.q.val()));
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
                | (self.s_moved_valid.val() & (self.s_moved_qp.val() == self.fw_qp.q.val()));
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
                if self.m_local_ready.val() {
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

        self.m_msg.next.opcode = self.b_opcode.q.val();
        self.m_msg.next.dest_node = self.tx_remote.q.val().get_bits::<16>(0);
        self.m_msg.next.src_node = self.cfg_node_id.val();
        self.m_msg.next.dest_qp = self.tx_remote.q.val().get_bits::<16>(16);
        self.m_msg.next.src_qp = bit_cast::<16, 6>(self.tx_qp.q.val());
        self.m_msg.next.psn = self.tx_psn.q.val();
        self.m_msg.next.length = self.b_msg_length.q.val();
        self.m_msg.next.vaddr = self.b_vaddr.q.val();
        self.m_msg.next.stag = self.b_stag.q.val();
        self.m_msg.next.dma_length = self.b_length.q.val();
        self.m_msg.next.immediate = 0.into();
        if self.b_op_imm.q.val() {
            self.m_msg.next.immediate = self.b_immediate.q.val();
        }
        self.m_msg.next.has_immediate = self.b_op_imm.q.val();
        self.m_msg.next.invalidate = self.b_invalidate.q.val();
        self.m_msg.next.resync = self.tx_resync.q.val();
        self.m_expect_qp.next = self.tx_qp.q.val();
        self.m_expect_psn.next = self.tx_psn.q.val();
        self.m_expect_addr.next = self.b_local.q.val();
        self.m_expect_length.next = self.b_length.q.val();
        self.m_expect_atomic.next = self.b_op_atomic.q.val();
        if self.reset.val() {
            self.requests_reg.d.next = 0.into();
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
            self.m_pick_taken.next = false;
            self.m_op_valid.next = false;
            self.m_local_valid.next = false;
            self.m_txrd_req_valid.next = false;
            self.s_txrd_ready.next = false;
            self.m_expect_valid.next = false;
            self.m_msg_valid.next = false;
            self.m_payload_valid.next = false;
        }
    }
}
