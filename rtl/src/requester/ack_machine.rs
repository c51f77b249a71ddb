//! `AckMachine`: the requester's acknowledgement and completion machine, in two parts.
//! The front takes one acknowledgement event (or one local completion of the transmit
//! machine) at a time, has the table engine evaluate it and requests, per completed WQE,
//! the re-read of the WQE's words 0-1 on the rx-port DMA read client into a two-slot read
//! queue (the completions in request order); then it takes the next event. The back (the
//! child [`AckRetire`], `requester/ack_retire.rs`, which holds the read queue) takes
//! the oldest queued completion's words, issues the completion request and has the table
//! engine advance `sq_una`, in order. So up to two re-reads are in flight while a
//! completion is issued and advanced, and the next event (for another QP) is evaluated
//! meanwhile. When all is idle it offers the retry timer scan, one QP per operation.
//!
//! Follows `docs/nic-architecture.md` ("Reliability: queue pairs, PSNs, go-back-N",
//! "Host memory structures": a completion's opcode, byte count and `wr_id` come from the
//! WQE) and "SendQueueEngine: design notes" in `docs/nic-blocks.md`; its parent
//! `SendQueueEngine` owns the per-QP table and decides (see its doc comment).
//!
//! Ports (every handshake valid/ready; a source holds its fields while valid and not ready):
//! - `clock`, `reset` (synchronous, active high: idle, the timer scan restarts at QP 0).
//!   Reset steers no handshake (`docs/nic-blocks.md`, "Reset"): what is taken in a reset
//!   clock is dropped at that edge.
//! - Acknowledgement events: `s_ack_valid` / `s_ack_ready`, `s_ack_qp` (6), `s_ack_psn`
//!   (24), `s_ack_syndrome` (8), `s_ack_response`, `s_ack_resync`. Ready while the front is
//!   idle and no local completion is offered.
//! - Local completion (a bad WQE, NOP, BIND or DELAY, from the transmit machine):
//!   `s_local_valid` / `s_local_ready` (ready while the front is idle; it goes before an
//!   event),
//!   `s_local_qp` (6), `s_local_psn` (24), `s_local_status` (8).
//! - Requests to the table engine (from registers only; one operation of this machine at a
//!   time): `m_req_valid` with `m_req_advance` (1: advance `sq_una` past the back's
//!   completion, first; 0: evaluate the front's event, which waits while a completion of
//!   its QP is queued or in the back) for QP `m_req_qp` (6); `m_scan_valid` (front, queue
//!   and back idle, nothing offered: the timer scan of QP `m_scan_qp` (6), the engine's
//!   lowest priority). `s_grant`: the engine
//!   granted this machine's request (or the scan) on this clock's edge; `s_scan_preempted`:
//!   a granted scan that was only reading gave way (the scan retries the same QP).
//!   `s_exec`: the engine executes an operation this clock (the first one after a grant is
//!   this machine's); with it `s_exec_ok` (an advance was applied) and `s_job_valid` (the
//!   evaluation or scan found WQEs to complete) with the job: `s_job_first` (24, `sq_una`),
//!   `s_job_succ` (4, completions of the leading run), `s_job_run_status` (8, their
//!   status), `s_job_final` (one more completion with `s_job_status` (8), which sets the
//!   QP's resync flag when `s_job_resync`), and the QP's `s_job_base` (32), `s_job_size`
//!   (5, log2 of the ring's entries), `s_job_remote` (32). The job's fields are taken (and
//!   the stale flag cleared) at the execute clock of every evaluation or scan of this
//!   machine, with a job or without one (then the machine goes idle and does not use
//!   them); `s_job_valid` decides only where the machine goes.
//! - The event under evaluation (held from its acceptance until the front is idle):
//!   `m_evt_psn` (24), `m_evt_syndrome` (8), `m_evt_response`, `m_evt_resync`,
//!   `m_evt_local`, `m_evt_local_status` (8). The back's completion, for the advance:
//!   `m_adv_idx` (24, its WQE index), `m_adv_set_resync` (the advance sets the QP's resync
//!   flag), `m_adv_stale` (the QP was reset since the job started: the advance is void).
//!   A void advance (not `s_exec_ok`) ends its job: the queued completions of its QP are
//!   dropped (their words taken, no request) and the front issues no more of them.
//! - QP reset (a CSR write that resets QP `s_qp_reset_qp` (6), `s_qp_reset_valid`): the
//!   front's job (while busy), the queued completions and the back's completion of that
//!   QP go stale; a stale job issues no more re-reads.
//! - Completion re-read: `m_cplrd_req_valid` / `m_cplrd_req_ready` (valid while the front
//!   has a completion to request and the queue has room), `m_cplrd_req_addr` (32,
//!   `base + (index mod 2^size) * 64`), `m_cplrd_req_words` (16, always 2); `s_cplrd_data`
//!   (64), `s_cplrd_valid`, `s_cplrd_ready` (the back is free and a re-read is queued),
//!   `s_cplrd_last`. The client relies on the words coming back in request order.
//! - Completion requests: `m_cpl_valid` / `m_cpl_ready`, `m_cpl` (a [`CompletionRequest`]):
//!   `opcode` (WQE word 0 bits 7:0), `status`, `qp`, `is_receive` (0), `has_immediate` (0),
//!   `byte_count` (word 0 bits 63:32), `wqe_index`, `src_node` (remote bits 15:0), `src_qp`
//!   (remote bits 31:16), `wr_id` (word 1), `immediate` (0).
//!
//! Latency: an event or local completion is taken in the clock it is offered while the
//! front is idle; its request follows the next clock (unless an advance goes first or its
//! QP has a completion in flight). After the evaluation's execute clock, the first re-read
//! request follows one clock later, the next ones one clock after each other while the
//! queue has room; the front is idle the clock after the job's last re-read is taken. The
//! completion request follows one clock after the read's last word (once the back is
//! free); the advance request one clock after the completion is taken; the back takes the
//! next queued words the clock after the advance's execute clock.
//! Throughput: three completions in flight (two re-reads queued, one being issued and
//! advanced); evaluations of other QPs overlap them. One table operation of this machine
//! at a time (advance before evaluation). Completions leave in the order of their jobs,
//! and within a job in WQE order.
//! Limits: `queue_pairs` in 1..=64 (the timer scan wraps after `queue_pairs - 1`); a job
//! completes at most 16 WQEs (15 of the leading run and the final one).

use crate::common::CompletionRequest;
pub use crate::requester::ack_retire::SqAckRetire;
use crate::requester::AckRetire;
use crate::sim::ClockedBlock;
use nic_abi::MAX_QUEUE_PAIRS;
use rust_hdl::prelude::*;

/// The acknowledgement machine's front: the event, its evaluation and the job's re-reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqAckState {
    Idle,
    TimerWait,
    EvalReq,
    EvalWait,
    /// Requesting the job's re-reads, one per completion, while the read queue has room.
    Issue,
}

#[derive(LogicBlock)]
pub struct AckMachine {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Acknowledgement events.
    pub s_ack_valid: Signal<In, Bit>,
    pub s_ack_ready: Signal<Out, Bit>,
    pub s_ack_qp: Signal<In, Bits<6>>,
    pub s_ack_psn: Signal<In, Bits<24>>,
    pub s_ack_syndrome: Signal<In, Bits<8>>,
    pub s_ack_response: Signal<In, Bit>,
    pub s_ack_resync: Signal<In, Bit>,
    // Local completion.
    pub s_local_valid: Signal<In, Bit>,
    pub s_local_ready: Signal<Out, Bit>,
    pub s_local_qp: Signal<In, Bits<6>>,
    pub s_local_psn: Signal<In, Bits<24>>,
    pub s_local_status: Signal<In, Bits<8>>,
    // Requests to the table engine.
    pub m_req_valid: Signal<Out, Bit>,
    pub m_req_advance: Signal<Out, Bit>,
    pub m_req_qp: Signal<Out, Bits<6>>,
    pub m_scan_valid: Signal<Out, Bit>,
    pub m_scan_qp: Signal<Out, Bits<6>>,
    pub s_grant: Signal<In, Bit>,
    pub s_scan_preempted: Signal<In, Bit>,
    pub s_exec: Signal<In, Bit>,
    pub s_exec_ok: Signal<In, Bit>,
    pub s_job_valid: Signal<In, Bit>,
    pub s_job_first: Signal<In, Bits<24>>,
    pub s_job_succ: Signal<In, Bits<4>>,
    pub s_job_run_status: Signal<In, Bits<8>>,
    pub s_job_final: Signal<In, Bit>,
    pub s_job_status: Signal<In, Bits<8>>,
    pub s_job_resync: Signal<In, Bit>,
    pub s_job_base: Signal<In, Bits<32>>,
    pub s_job_size: Signal<In, Bits<5>>,
    pub s_job_remote: Signal<In, Bits<32>>,
    // The event under evaluation and the current completion.
    pub m_evt_psn: Signal<Out, Bits<24>>,
    pub m_evt_syndrome: Signal<Out, Bits<8>>,
    pub m_evt_response: Signal<Out, Bit>,
    pub m_evt_resync: Signal<Out, Bit>,
    pub m_evt_local: Signal<Out, Bit>,
    pub m_evt_local_status: Signal<Out, Bits<8>>,
    pub m_adv_idx: Signal<Out, Bits<24>>,
    pub m_adv_set_resync: Signal<Out, Bit>,
    pub m_adv_stale: Signal<Out, Bit>,
    // QP reset.
    pub s_qp_reset_valid: Signal<In, Bit>,
    pub s_qp_reset_qp: Signal<In, Bits<6>>,
    // Completion re-read.
    pub m_cplrd_req_valid: Signal<Out, Bit>,
    pub m_cplrd_req_ready: Signal<In, Bit>,
    pub m_cplrd_req_addr: Signal<Out, Bits<32>>,
    pub m_cplrd_req_words: Signal<Out, Bits<16>>,
    pub s_cplrd_data: Signal<In, Bits<64>>,
    pub s_cplrd_valid: Signal<In, Bit>,
    pub s_cplrd_ready: Signal<Out, Bit>,
    pub s_cplrd_last: Signal<In, Bit>,
    // Completion requests.
    pub m_cpl_valid: Signal<Out, Bit>,
    pub m_cpl_ready: Signal<In, Bit>,
    pub m_cpl: Signal<Out, CompletionRequest>,
    pub(crate) state: DFF<SqAckState>,
    qp: DFF<Bits<6>>,
    psn: DFF<Bits<24>>,
    syn: DFF<Bits<8>>,
    resp: DFF<Bit>,
    /// The event carried RESYNC (the responder restarted at `psn`).
    resync: DFF<Bit>,
    pub(crate) evt_local: DFF<Bit>,
    local_status: DFF<Bits<8>>,
    /// The front's QP was reset (CSR write) since its job started.
    stale: DFF<Bit>,
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
    /// The back: the read queue and the retire of its completions.
    retire: AckRetire,
    local_take: Signal<Local, Bit>,
    cur_status: Signal<Local, Bits<8>>,
    cur_set_resync: Signal<Local, Bit>,
    job_more: Signal<Local, Bit>,
    mask: Signal<Local, Bits<24>>,
    slot: Signal<Local, Bits<24>>,
    adv_go: Signal<Local, Bit>,
    eval_go: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    stale_new: Signal<Local, Bit>,
    ones24: Constant<Bits<24>>,
    last_qp: Constant<Bits<6>>,
}

impl AckMachine {
    /// The machine of a `SendQueueEngine` for `queue_pairs` queue pairs (its timer scan
    /// visits `0..queue_pairs`).
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "AckMachine: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        AckMachine {
            clock: Default::default(),
            reset: Default::default(),
            s_ack_valid: Default::default(),
            s_ack_ready: Default::default(),
            s_ack_qp: Default::default(),
            s_ack_psn: Default::default(),
            s_ack_syndrome: Default::default(),
            s_ack_response: Default::default(),
            s_ack_resync: Default::default(),
            s_local_valid: Default::default(),
            s_local_ready: Default::default(),
            s_local_qp: Default::default(),
            s_local_psn: Default::default(),
            s_local_status: Default::default(),
            m_req_valid: Default::default(),
            m_req_advance: Default::default(),
            m_req_qp: Default::default(),
            m_scan_valid: Default::default(),
            m_scan_qp: Default::default(),
            s_grant: Default::default(),
            s_scan_preempted: Default::default(),
            s_exec: Default::default(),
            s_exec_ok: Default::default(),
            s_job_valid: Default::default(),
            s_job_first: Default::default(),
            s_job_succ: Default::default(),
            s_job_run_status: Default::default(),
            s_job_final: Default::default(),
            s_job_status: Default::default(),
            s_job_resync: Default::default(),
            s_job_base: Default::default(),
            s_job_size: Default::default(),
            s_job_remote: Default::default(),
            m_evt_psn: Default::default(),
            m_evt_syndrome: Default::default(),
            m_evt_response: Default::default(),
            m_evt_resync: Default::default(),
            m_evt_local: Default::default(),
            m_evt_local_status: Default::default(),
            m_adv_idx: Default::default(),
            m_adv_set_resync: Default::default(),
            m_adv_stale: Default::default(),
            s_qp_reset_valid: Default::default(),
            s_qp_reset_qp: Default::default(),
            m_cplrd_req_valid: Default::default(),
            m_cplrd_req_ready: Default::default(),
            m_cplrd_req_addr: Default::default(),
            m_cplrd_req_words: Default::default(),
            s_cplrd_data: Default::default(),
            s_cplrd_valid: Default::default(),
            s_cplrd_ready: Default::default(),
            s_cplrd_last: Default::default(),
            m_cpl_valid: Default::default(),
            m_cpl_ready: Default::default(),
            m_cpl: Default::default(),
            state: Default::default(),
            qp: Default::default(),
            psn: Default::default(),
            syn: Default::default(),
            resp: Default::default(),
            resync: Default::default(),
            evt_local: Default::default(),
            local_status: Default::default(),
            stale: Default::default(),
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
            retire: AckRetire::new(),
            local_take: Default::default(),
            cur_status: Default::default(),
            cur_set_resync: Default::default(),
            job_more: Default::default(),
            mask: Default::default(),
            slot: Default::default(),
            adv_go: Default::default(),
            eval_go: Default::default(),
            push: Default::default(),
            stale_new: Default::default(),
            ones24: Constant::new(0xFF_FFFFu64.to_bits()),
            last_qp: Constant::new((queue_pairs as u64 - 1).to_bits()),
        }
    }
}

impl Default for AckMachine {
    fn default() -> Self {
        Self::new(MAX_QUEUE_PAIRS)
    }
}

impl Logic for AckMachine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            qp,
            psn,
            syn,
            resp,
            resync,
            evt_local,
            local_status,
            stale,
            tscan,
            job_idx,
            job_succ,
            job_run_status,
            job_final,
            job_status,
            job_resync,
            job_base,
            job_size,
            job_remote
        );
        // ---- Who uses the table engine (from registers only) ----
        // One operation of this machine at a time: the back's advance first, then the
        // front's evaluation, which waits while its QP has a completion in the queue or
        // the back (its `sq_una` is not final yet); the scan only when all is idle.
        self.retire.clock.next = self.clock.val();
        self.retire.reset.next = self.reset.val();
        self.retire.s_front_qp.next = self.qp.q.val();
        self.adv_go.next = self.retire.m_adv_req.val()
            & (self.state.q.val() != SqAckState::EvalWait)
            & (self.state.q.val() != SqAckState::TimerWait);
        self.eval_go.next = (self.state.q.val() == SqAckState::EvalReq)
            & !self.retire.m_hazard.val()
            & !self.retire.m_adv_busy.val();
        self.s_local_ready.next = self.state.q.val() == SqAckState::Idle;
        self.local_take.next = self.s_local_ready.val() & self.s_local_valid.val();
        self.s_ack_ready.next = self.s_local_ready.val() & !self.local_take.val();
        self.m_scan_valid.next =
            self.s_ack_ready.val() & !self.s_ack_valid.val() & self.retire.m_all_idle.val();
        self.m_req_valid.next = self.adv_go.val() | self.eval_go.val();
        self.m_req_advance.next = self.adv_go.val();
        self.m_req_qp.next = self.qp.q.val();
        if self.adv_go.val() {
            self.m_req_qp.next = self.retire.m_adv_qp.val();
        }
        self.m_scan_qp.next = self.tscan.q.val();
        self.retire.s_adv_grant.next = self.s_grant.val() & self.adv_go.val();
        self.retire.s_exec.next = self.s_exec.val();
        self.retire.s_exec_ok.next = self.s_exec_ok.val();
        self.retire.s_qp_reset_valid.next = self.s_qp_reset_valid.val();
        self.retire.s_qp_reset_qp.next = self.s_qp_reset_qp.val();

        // ---- The front's job: its next completion ----
        self.cur_status.next = self.job_status.q.val();
        self.cur_set_resync.next = self.job_resync.q.val();
        self.job_more.next = false;
        if self.job_succ.q.val() != 0 {
            self.cur_status.next = self.job_run_status.q.val();
            self.cur_set_resync.next = false;
            self.job_more.next = (self.job_succ.q.val() != 1) | self.job_final.q.val();
        }
        self.mask.next = !(self.ones24.val() << self.job_size.q.val());
        self.slot.next = self.job_idx.q.val() & self.mask.val();

        // ---- The re-read requests into the back's read queue ----
        // A job whose QP was reset issues no more re-reads (those issued complete or are
        // dropped in order, as the back's advances say).
        self.m_cplrd_req_valid.next = (self.state.q.val() == SqAckState::Issue)
            & !self.retire.m_full.val()
            & !self.stale.q.val();
        self.push.next = self.m_cplrd_req_valid.val() & self.m_cplrd_req_ready.val();
        self.stale_new.next = self.stale.q.val()
            | (self.s_qp_reset_valid.val() & (self.s_qp_reset_qp.val() == self.qp.q.val()));
        self.retire.s_push.next = self.push.val();
        self.retire.s_push_qp.next = self.qp.q.val();
        self.retire.s_push_idx.next = self.job_idx.q.val();
        self.retire.s_push_status.next = self.cur_status.val();
        self.retire.s_push_set_resync.next = self.cur_set_resync.val();
        self.retire.s_push_remote.next = self.job_remote.q.val();
        self.retire.s_push_stale.next = self.stale_new.val();
        self.retire.s_cplrd_data.next = self.s_cplrd_data.val();
        self.retire.s_cplrd_valid.next = self.s_cplrd_valid.val();
        self.s_cplrd_ready.next = self.retire.s_cplrd_ready.val();
        self.retire.s_cplrd_last.next = self.s_cplrd_last.val();
        self.m_cpl_valid.next = self.retire.m_cpl_valid.val();
        self.retire.m_cpl_ready.next = self.m_cpl_ready.val();
        self.m_cpl.next = self.retire.m_cpl.val();

        // ---- The front ----
        if self.s_qp_reset_valid.val()
            & (self.s_qp_reset_qp.val() == self.qp.q.val())
            & (self.state.q.val() != SqAckState::Idle)
        {
            self.stale.d.next = true;
        }
        match self.state.q.val() {
            SqAckState::Idle => {
                self.stale.d.next = false;
                if self.local_take.val() {
                    self.qp.d.next = self.s_local_qp.val();
                    self.psn.d.next = self.s_local_psn.val();
                    self.evt_local.d.next = true;
                    self.resync.d.next = false;
                    self.local_status.d.next = self.s_local_status.val();
                    self.state.d.next = SqAckState::EvalReq;
                } else if self.s_ack_valid.val() {
                    self.qp.d.next = self.s_ack_qp.val();
                    self.psn.d.next = self.s_ack_psn.val();
                    self.syn.d.next = self.s_ack_syndrome.val();
                    self.resp.d.next = self.s_ack_response.val();
                    self.resync.d.next = self.s_ack_resync.val();
                    self.evt_local.d.next = false;
                    self.state.d.next = SqAckState::EvalReq;
                } else if self.s_grant.val() & self.retire.m_all_idle.val() {
                    self.qp.d.next = self.tscan.q.val();
                    self.state.d.next = SqAckState::TimerWait;
                }
            }
            SqAckState::TimerWait => {
                if self.s_scan_preempted.val() {
                    self.state.d.next = SqAckState::Idle;
                }
                if self.s_exec.val() {
                    self.tscan.d.next = self.tscan.q.val() + 1;
                    if self.tscan.q.val() == self.last_qp.val() {
                        self.tscan.d.next = 0.into();
                    }
                    self.state.d.next = SqAckState::Idle;
                    if self.s_job_valid.val() {
                        self.state.d.next = SqAckState::Issue;
                    }
                }
            }
            SqAckState::EvalReq => {
                if self.s_grant.val() & self.eval_go.val() {
                    self.state.d.next = SqAckState::EvalWait;
                }
            }
            SqAckState::EvalWait => {
                if self.s_exec.val() {
                    self.state.d.next = SqAckState::Idle;
                    if self.s_job_valid.val() {
                        self.state.d.next = SqAckState::Issue;
                    }
                }
            }
            SqAckState::Issue => {
                if self.push.val() {
                    if self.job_succ.q.val() != 0 {
                        self.job_succ.d.next = self.job_succ.q.val() - 1;
                    } else {
                        self.job_final.d.next = false;
                    }
                    self.job_idx.d.next = self.job_idx.q.val() + 1;
                    if !self.job_more.val() {
                        self.state.d.next = SqAckState::Idle;
                    }
                }
                // A failed advance of this QP ends the job.
                if self.stale.q.val() | self.retire.m_fail_front.val() {
                    self.state.d.next = SqAckState::Idle;
                }
            }
            _ => {
                self.state.d.next = SqAckState::Idle;
            }
        }
        // A job starts from the entry just evaluated (timer or event): its fields are taken
        // at every execute clock of this machine's evaluation or scan, job or not (without
        // one the machine goes idle and they are not used), so that `s_job_valid` steers
        // only the state, not the enables of the job's registers.
        if self.s_exec.val()
            & ((self.state.q.val() == SqAckState::EvalWait)
                | (self.state.q.val() == SqAckState::TimerWait))
        {
            self.stale.d.next = false;
            self.job_idx.d.next = self.s_job_first.val();
            self.job_succ.d.next = self.s_job_succ.val();
            self.job_run_status.d.next = self.s_job_run_status.val();
            self.job_final.d.next = self.s_job_final.val();
            self.job_status.d.next = self.s_job_status.val();
            self.job_resync.d.next = self.s_job_resync.val();
            self.job_base.d.next = self.s_job_base.val();
            self.job_size.d.next = self.s_job_size.val();
            self.job_remote.d.next = self.s_job_remote.val();
        }

        // ---- Outputs ----
        self.m_evt_psn.next = self.psn.q.val();
        self.m_evt_syndrome.next = self.syn.q.val();
        self.m_evt_response.next = self.resp.q.val();
        self.m_evt_resync.next = self.resync.q.val();
        self.m_evt_local.next = self.evt_local.q.val();
        self.m_evt_local_status.next = self.local_status.q.val();
        self.m_adv_idx.next = self.retire.m_adv_idx.val();
        self.m_adv_set_resync.next = self.retire.m_adv_set_resync.val();
        self.m_adv_stale.next = self.retire.m_adv_stale.val();
        self.m_cplrd_req_addr.next =
            self.job_base.q.val() + (bit_cast::<32, 24>(self.slot.val()) << 6);
        self.m_cplrd_req_words.next = 2.into();

        if self.reset.val() {
            self.state.d.next = SqAckState::Idle;
            self.tscan.d.next = 0.into();
        }
    }
}

impl ClockedBlock for AckMachine {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
