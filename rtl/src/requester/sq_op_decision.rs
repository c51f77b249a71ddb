//! `SqOpDecision`: the send queue engine's decision on the registered entry: it registers
//! the QP entry read from the table, and in the operation's Exec clock decides the
//! claim, commit, advance and timer check (and takes over a CSR write's entry or an event
//! evaluation's decision), giving the entry written back and the completion job. It also
//! keeps the engine's cycle counter, the retry timers' time base.
//!
//! Follows "Reliability: queue pairs, PSNs, go-back-N" in `docs/nic-architecture.md` and
//! "SendQueueEngine: design notes" in `docs/nic-blocks.md` (the commit point, the drain
//! before a READ, atomic or local-only WQE, the retry timer, `RETRY_LIMIT`).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: the counter restarts at 0).
//! - `cfg_retry_timeout` (32, 0 = never), `cfg_retry_limit` (4).
//! - `m_now` (32): the cycle counter (registered: clocks since reset, wrapping).
//! - `s_read`: register the entry: `s_rd_entry` ([`QpEntry`]) and its flags
//!   `s_rd_outstanding`, `s_rd_has_work`, `s_rd_window_full` (`QpTable`), and
//!   `s_rd_on_una` (the read entry's `sq_una` is being transmitted, for a timer check's
//!   Exec clock). `m_entry`,
//!   `m_outstanding`: the registered entry and flag (held until the next `s_read`).
//! - `m_kept` ([`QpEntry`]): the entry an operation that changes nothing writes back:
//!   `m_entry` with `draining` only while outstanding (`draining & outstanding`).
//! - `m_wqe_addr` (32): the address of the WQE at `sq_next`:
//!   `base + (sq_next mod 2^size_log2) * 64` (all 24 bits for `size_log2 >= 24`).
//! - The operation: `s_exec` (decide this clock), `s_op` ([`SqOp`]), `s_qp_valid` (its QP
//!   is below `queue_pairs`; sampled with `s_read`, like the entry, and held for the
//!   operation's Exec clock). Its inputs, each used only by its operation: CSR write
//!   `s_csr_entry`, `s_csr_qp_reset`, `s_csr_moved`; commit `s_commit_psn` (24),
//!   `s_commit_stale`, `s_commit_need_empty`, `s_commit_local_only`,
//!   `s_commit_needs_response`; advance `s_adv_idx` (24), `s_adv_stale`,
//!   `s_adv_set_resync`; evaluation:
//!   the `EventEvaluator`'s decision `s_ev_job_valid`, `s_ev_job_succ` (4),
//!   `s_ev_job_run_status` (8), `s_ev_job_final`, `s_ev_job_status` (8),
//!   `s_ev_job_resync`, `s_ev_retx`, `s_ev_restart`, `s_ev_set_next`, `s_ev_next` (24),
//!   `s_ev_set_retry`, `s_ev_retry` (4), `s_ev_set_drain`.
//! - Results (combinational; all low or zero and `m_wr == m_kept` unless `s_exec`):
//!   `m_wr` ([`QpEntry`]), `m_ok`, `m_retx` (a go-back-N event), the job `m_job_valid`,
//!   `m_job_succ` (4), `m_job_run_status` (8), `m_job_final`, `m_job_status` (8),
//!   `m_job_resync`, `m_has_job` (`m_job_valid` and a completion: `succ != 0` or final);
//!   `m_csr_qp_reset`, `m_csr_moved`.
//!
//! Decisions (E: the registered entry, O: its outstanding flag; eligible: `s_qp_valid`,
//! enabled, has work, window not full, not waiting, not draining while outstanding; now:
//! `m_now` of this clock):
//! - CsrRead: nothing. CsrWrite: ok = `s_qp_valid`; `m_wr = s_csr_entry`, the CSR flags
//!   passed on.
//! - Claim: ok = eligible.
//! - Commit: it matches when eligible, `sq_next == s_commit_psn` and not stale; ok when it
//!   matches and (not `s_commit_need_empty` or not O). Ok: `sq_next + 1`; a local-only WQE
//!   sets draining, else one that needs a response sets waiting and
//!   `una_needs_response`; `timer_start = now` if not O. Matching but not ok: draining.
//! - Eval: the evaluator's job and `m_retx`; restart: not waiting, `timer_start = now`;
//!   `sq_next`, `retry` set when told; draining set when told.
//! - Advance: ok = `s_qp_valid`, `sq_una == s_adv_idx`, not stale. Ok:
//!   `sq_una = s_adv_idx + 1`, `una_needs_response` cleared, `sq_next` the same if not O,
//!   `resync = s_adv_set_resync`, `timer_start = now`.
//! - Timer: ok = `s_qp_valid` and O. Ok and on-una (`s_rd_on_una` registered with the
//!   entry's read): `timer_start = now`. Ok and
//!   expired: a go-back-N event: `timer_start = now`, not
//!   waiting, `sq_next = sq_una`, `retry + 1` (4 bits); if `retry + 1 > cfg_retry_limit`
//!   instead a final job (status RETRY_EXCEEDED, resync, no leading run),
//!   `sq_next = sq_una + 1`, draining, `retry = 0`. Expired is decided with the entry's
//!   read, for the clock after it (a timer check's Exec clock): `cfg_retry_timeout` of the
//!   clock before the read is not 0 and `(now + 1 - timer_start) mod 2^32 >=` it, `now` of
//!   the read clock and `timer_start` of `s_rd_entry`.
//!
//! Timing: `s_qp_valid` and the eligibility (`s_qp_valid` and the read entry's flags) are
//! registered with the entry, so the Exec clock's decision does not start from the
//! operation's QP test. The entry is registered with nothing behind the table's output but
//! the timer test and that eligibility AND, which compares `s_rd_entry.timer_start` (the table's registered read data)
//! against two bounds registered a clock earlier from the counter and the timeout (no
//! subtraction) and registers the result, so the Exec clock's decision starts from one
//! flip-flop, not from a 32-bit comparison.
//! Latency: the entry one clock after `s_read`; decisions combinational. Throughput: one
//! operation per clock. Limits: none beyond the port widths; no parameters.

use crate::requester::sq_op_grant::SqOp;
use crate::requester::QpEntry;
use crate::sim::ClockedBlock;
use nic_abi::{CompletionStatus, WQE_BYTES};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct SqOpDecision {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub cfg_retry_timeout: Signal<In, Bits<32>>,
    pub cfg_retry_limit: Signal<In, Bits<4>>,
    pub m_now: Signal<Out, Bits<32>>,
    pub s_read: Signal<In, Bit>,
    pub s_rd_entry: Signal<In, QpEntry>,
    pub s_rd_outstanding: Signal<In, Bit>,
    pub s_rd_has_work: Signal<In, Bit>,
    pub s_rd_window_full: Signal<In, Bit>,
    pub m_entry: Signal<Out, QpEntry>,
    pub m_outstanding: Signal<Out, Bit>,
    pub m_kept: Signal<Out, QpEntry>,
    pub m_wqe_addr: Signal<Out, Bits<32>>,
    pub s_exec: Signal<In, Bit>,
    pub s_op: Signal<In, SqOp>,
    pub s_qp_valid: Signal<In, Bit>,
    pub s_csr_entry: Signal<In, QpEntry>,
    pub s_csr_qp_reset: Signal<In, Bit>,
    pub s_csr_moved: Signal<In, Bit>,
    pub s_commit_psn: Signal<In, Bits<24>>,
    pub s_commit_stale: Signal<In, Bit>,
    pub s_commit_need_empty: Signal<In, Bit>,
    pub s_commit_local_only: Signal<In, Bit>,
    pub s_commit_needs_response: Signal<In, Bit>,
    pub s_adv_idx: Signal<In, Bits<24>>,
    pub s_adv_stale: Signal<In, Bit>,
    pub s_adv_set_resync: Signal<In, Bit>,
    pub s_rd_on_una: Signal<In, Bit>,
    pub s_ev_job_valid: Signal<In, Bit>,
    pub s_ev_job_succ: Signal<In, Bits<4>>,
    pub s_ev_job_run_status: Signal<In, Bits<8>>,
    pub s_ev_job_final: Signal<In, Bit>,
    pub s_ev_job_status: Signal<In, Bits<8>>,
    pub s_ev_job_resync: Signal<In, Bit>,
    pub s_ev_retx: Signal<In, Bit>,
    pub s_ev_restart: Signal<In, Bit>,
    pub s_ev_set_next: Signal<In, Bit>,
    pub s_ev_next: Signal<In, Bits<24>>,
    pub s_ev_set_retry: Signal<In, Bit>,
    pub s_ev_retry: Signal<In, Bits<4>>,
    pub s_ev_set_drain: Signal<In, Bit>,
    pub m_wr: Signal<Out, QpEntry>,
    pub m_ok: Signal<Out, Bit>,
    pub m_retx: Signal<Out, Bit>,
    pub m_job_valid: Signal<Out, Bit>,
    pub m_job_succ: Signal<Out, Bits<4>>,
    pub m_job_run_status: Signal<Out, Bits<8>>,
    pub m_job_final: Signal<Out, Bit>,
    pub m_job_status: Signal<Out, Bits<8>>,
    pub m_job_resync: Signal<Out, Bit>,
    pub m_has_job: Signal<Out, Bit>,
    pub m_csr_qp_reset: Signal<Out, Bit>,
    pub m_csr_moved: Signal<Out, Bit>,
    /// Free-running cycle counter.
    now: DFF<Bits<32>>,
    /// The entry read, registered (the block RAM's output goes straight into these).
    ent: DFF<QpEntry>,
    ent_outstanding: DFF<Bit>,
    ent_has_work: DFF<Bit>,
    ent_window_full: DFF<Bit>,
    /// `sq_una` of the entry read was being transmitted (sampled with the read).
    ent_on_una: DFF<Bit>,
    /// `s_qp_valid`, and the eligibility of the entry read (sampled with the read).
    ent_qp_valid: DFF<Bit>,
    ent_eligible: DFF<Bit>,
    /// The retry timer for the clock after the next one (`e`): expired when `timer_start`
    /// lies in the circular interval from `now_e + 1` (`timer_lo`) up to
    /// `now_e - cfg_retry_timeout` (`timer_hi`); `timer_wrap`: that interval wraps past
    /// 2^32 - 1; `timer_never`: the timeout is 0.
    timer_lo: DFF<Bits<32>>,
    timer_hi: DFF<Bits<32>>,
    timer_wrap: Signal<Local, Bit>,
    timer_never: DFF<Bit>,
    /// Expired, decided with the entry's read for the clock after it.
    timer_expired: DFF<Bit>,
    timer_ge_lo: Signal<Local, Bit>,
    timer_le_hi: Signal<Local, Bit>,
    eligible: Signal<Local, Bit>,
    commit_match: Signal<Local, Bit>,
    mask: Signal<Local, Bits<24>>,
    slot: Signal<Local, Bits<24>>,
    next_p1: Signal<Local, Bits<24>>,
    una_p1: Signal<Local, Bits<24>>,
    adv_p1: Signal<Local, Bits<24>>,
    retry_inc: Signal<Local, Bits<4>>,
    wr_kept: Signal<Local, QpEntry>,
    wr: Signal<Local, QpEntry>,
    ok: Signal<Local, Bit>,
    job_valid: Signal<Local, Bit>,
    job_succ: Signal<Local, Bits<4>>,
    job_final: Signal<Local, Bit>,
    wqe_shift: Constant<Bits<32>>,
    ones24: Constant<Bits<24>>,
    one: Constant<Bits<32>>,
    st_retry: Constant<Bits<8>>,
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.to_bits())
}

impl SqOpDecision {
    /// The decision block (no parameters).
    pub fn new() -> Self {
        SqOpDecision {
            clock: Default::default(),
            reset: Default::default(),
            cfg_retry_timeout: Default::default(),
            cfg_retry_limit: Default::default(),
            m_now: Default::default(),
            s_read: Default::default(),
            s_rd_entry: Default::default(),
            s_rd_outstanding: Default::default(),
            s_rd_has_work: Default::default(),
            s_rd_window_full: Default::default(),
            m_entry: Default::default(),
            m_outstanding: Default::default(),
            m_kept: Default::default(),
            m_wqe_addr: Default::default(),
            s_exec: Default::default(),
            s_op: Default::default(),
            s_qp_valid: Default::default(),
            s_csr_entry: Default::default(),
            s_csr_qp_reset: Default::default(),
            s_csr_moved: Default::default(),
            s_commit_psn: Default::default(),
            s_commit_stale: Default::default(),
            s_commit_need_empty: Default::default(),
            s_commit_local_only: Default::default(),
            s_commit_needs_response: Default::default(),
            s_adv_idx: Default::default(),
            s_adv_stale: Default::default(),
            s_adv_set_resync: Default::default(),
            s_rd_on_una: Default::default(),
            s_ev_job_valid: Default::default(),
            s_ev_job_succ: Default::default(),
            s_ev_job_run_status: Default::default(),
            s_ev_job_final: Default::default(),
            s_ev_job_status: Default::default(),
            s_ev_job_resync: Default::default(),
            s_ev_retx: Default::default(),
            s_ev_restart: Default::default(),
            s_ev_set_next: Default::default(),
            s_ev_next: Default::default(),
            s_ev_set_retry: Default::default(),
            s_ev_retry: Default::default(),
            s_ev_set_drain: Default::default(),
            m_wr: Default::default(),
            m_ok: Default::default(),
            m_retx: Default::default(),
            m_job_valid: Default::default(),
            m_job_succ: Default::default(),
            m_job_run_status: Default::default(),
            m_job_final: Default::default(),
            m_job_status: Default::default(),
            m_job_resync: Default::default(),
            m_has_job: Default::default(),
            m_csr_qp_reset: Default::default(),
            m_csr_moved: Default::default(),
            now: Default::default(),
            ent: Default::default(),
            ent_outstanding: Default::default(),
            ent_has_work: Default::default(),
            ent_window_full: Default::default(),
            ent_on_una: Default::default(),
            ent_qp_valid: Default::default(),
            ent_eligible: Default::default(),
            timer_lo: Default::default(),
            timer_hi: Default::default(),
            timer_wrap: Default::default(),
            timer_never: Default::default(),
            timer_ge_lo: Default::default(),
            timer_le_hi: Default::default(),
            timer_expired: Default::default(),
            eligible: Default::default(),
            commit_match: Default::default(),
            mask: Default::default(),
            slot: Default::default(),
            next_p1: Default::default(),
            una_p1: Default::default(),
            adv_p1: Default::default(),
            retry_inc: Default::default(),
            wr_kept: Default::default(),
            wr: Default::default(),
            ok: Default::default(),
            job_valid: Default::default(),
            job_succ: Default::default(),
            job_final: Default::default(),
            wqe_shift: k(WQE_BYTES.trailing_zeros() as u64),
            ones24: k(0xFF_FFFF),
            one: k(1),
            st_retry: k(CompletionStatus::RETRY_EXCEEDED as u64),
        }
    }
}

impl Default for SqOpDecision {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for SqOpDecision {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            now,
            ent,
            ent_outstanding,
            ent_has_work,
            ent_window_full,
            ent_on_una,
            ent_qp_valid,
            ent_eligible,
            timer_lo,
            timer_hi,
            timer_never,
            timer_expired
        );
        // ---- Cycle counter and the timer's interval as of the next clock ----
        // (Each bound from the counter's register, not behind its increment; a reset
        // chooses the bounds of a counter restarting at 0.)
        self.now.d.next = self.now.q.val() + 1;
        self.m_now.next = self.now.q.val();
        self.timer_lo.d.next = self.now.q.val() + 3;
        self.timer_hi.d.next = self.now.q.val() + 2 - self.cfg_retry_timeout.val();
        self.timer_never.d.next = self.cfg_retry_timeout.val() == 0;
        if self.reset.val() {
            self.now.d.next = 0.into();
            self.timer_lo.d.next = 2.into();
            self.timer_hi.d.next = self.one.val() - self.cfg_retry_timeout.val();
        }
        // ---- The entry, registered ----
        if self.s_read.val() {
            self.ent.d.next = self.s_rd_entry.val();
            self.ent_outstanding.d.next = self.s_rd_outstanding.val();
            self.ent_has_work.d.next = self.s_rd_has_work.val();
            self.ent_window_full.d.next = self.s_rd_window_full.val();
            self.ent_on_una.d.next = self.s_rd_on_una.val();
            self.ent_qp_valid.d.next = self.s_qp_valid.val();
            self.ent_eligible.d.next = self.s_qp_valid.val()
                & self.s_rd_entry.val().enable
                & self.s_rd_has_work.val()
                & !self.s_rd_window_full.val()
                & !self.s_rd_entry.val().waiting
                & !(self.s_rd_entry.val().draining & self.s_rd_outstanding.val());
        }
        self.m_entry.next = self.ent.q.val();
        self.m_outstanding.next = self.ent_outstanding.q.val();
        self.eligible.next = self.ent_eligible.q.val();
        // WQE address of sq_next: SQ_BASE + (sq_next mod 2^SQ_SIZE_LOG2) * 64.
        self.mask.next = !(self.ones24.val() << self.ent.q.val().size_log2);
        self.slot.next = self.ent.q.val().sq_next & self.mask.val();
        self.m_wqe_addr.next =
            self.ent.q.val().base + (bit_cast::<32, 24>(self.slot.val()) << self.wqe_shift.val());
        self.next_p1.next = self.ent.q.val().sq_next + 1;
        self.una_p1.next = self.ent.q.val().sq_una + 1;
        self.adv_p1.next = self.s_adv_idx.val() + 1;
        self.retry_inc.next = self.ent.q.val().retry + 1;
        // `(now + 1 - timer_start) mod 2^32 >= cfg_retry_timeout` for the entry read (two
        // comparisons side by side), registered with it.
        self.timer_ge_lo.next = self.s_rd_entry.val().timer_start >= self.timer_lo.q.val();
        self.timer_le_hi.next = self.s_rd_entry.val().timer_start <= self.timer_hi.q.val();
        self.timer_wrap.next = self.timer_lo.q.val() > self.timer_hi.q.val();
        if self.s_read.val() {
            self.timer_expired.d.next = !self.timer_never.q.val()
                & (self.timer_ge_lo.val() & self.timer_le_hi.val()
                    | (self.timer_wrap.val() & (self.timer_ge_lo.val() | self.timer_le_hi.val())));
        }
        self.commit_match.next = self.eligible.val()
            & (self.ent.q.val().sq_next == self.s_commit_psn.val())
            & !self.s_commit_stale.val();
        // ---- The decision ----
        // The stored draining flag holds only while messages are outstanding (tested here,
        // from the registered entry, not behind the write-back's PSN muxes).
        self.wr_kept.next = self.ent.q.val();
        self.wr_kept.next.draining = self.ent.q.val().draining & self.ent_outstanding.q.val();
        self.m_kept.next = self.wr_kept.val();
        self.wr.next = self.wr_kept.val();
        self.ok.next = false;
        self.m_retx.next = false;
        self.job_valid.next = false;
        self.job_succ.next = 0.into();
        self.m_job_run_status.next = 0.into();
        self.job_final.next = false;
        self.m_job_status.next = 0.into();
        self.m_job_resync.next = false;
        self.m_csr_qp_reset.next = false;
        self.m_csr_moved.next = false;
        if self.s_exec.val() {
            match self.s_op.val() {
                SqOp::CsrRead => {}
                SqOp::CsrWrite => {
                    self.ok.next = self.ent_qp_valid.q.val();
                    self.wr.next = self.s_csr_entry.val();
                    self.m_csr_qp_reset.next = self.s_csr_qp_reset.val();
                    self.m_csr_moved.next = self.s_csr_moved.val();
                }
                SqOp::Claim => {
                    self.ok.next = self.eligible.val();
                }
                SqOp::Commit => {
                    self.ok.next = self.commit_match.val()
                        & (!self.s_commit_need_empty.val() | !self.ent_outstanding.q.val());
                    if self.ok.val() {
                        self.wr.next.sq_next = self.next_p1.val();
                        if self.s_commit_local_only.val() {
                            // Nothing more is sent until the local completion is done.
                            self.wr.next.draining = true;
                        } else if self.s_commit_needs_response.val() {
                            // Committed only with nothing outstanding: it is sq_una.
                            self.wr.next.waiting = true;
                            self.wr.next.una_needs_response = true;
                        }
                        if !self.ent_outstanding.q.val() {
                            self.wr.next.timer_start = self.now.q.val();
                        }
                    } else if self.commit_match.val() {
                        // READ, atomic or bad WQE behind outstanding messages: wait until
                        // the QP drains.
                        self.wr.next.draining = true;
                    }
                }
                SqOp::Eval => {
                    self.job_valid.next = self.s_ev_job_valid.val();
                    self.job_succ.next = self.s_ev_job_succ.val();
                    self.m_job_run_status.next = self.s_ev_job_run_status.val();
                    self.job_final.next = self.s_ev_job_final.val();
                    self.m_job_status.next = self.s_ev_job_status.val();
                    self.m_job_resync.next = self.s_ev_job_resync.val();
                    self.m_retx.next = self.s_ev_retx.val();
                    if self.s_ev_restart.val() {
                        self.wr.next.waiting = false;
                        self.wr.next.timer_start = self.now.q.val();
                    }
                    if self.s_ev_set_next.val() {
                        self.wr.next.sq_next = self.s_ev_next.val();
                    }
                    if self.s_ev_set_retry.val() {
                        self.wr.next.retry = self.s_ev_retry.val();
                    }
                    if self.s_ev_set_drain.val() {
                        self.wr.next.draining = true;
                    }
                }
                SqOp::Advance => {
                    self.ok.next = self.ent_qp_valid.q.val()
                        & (self.ent.q.val().sq_una == self.s_adv_idx.val())
                        & !self.s_adv_stale.val();
                    if self.ok.val() {
                        self.wr.next.sq_una = self.adv_p1.val();
                        self.wr.next.una_needs_response = false;
                        if !self.ent_outstanding.q.val() {
                            self.wr.next.sq_next = self.adv_p1.val();
                        }
                        self.wr.next.resync = self.s_adv_set_resync.val();
                        self.wr.next.timer_start = self.now.q.val();
                    }
                }
                _ => {
                    // Timer (also an op code beyond the enum's seven: what a Verilog
                    // `default` does with it, so all three simulators agree).
                    // The timer runs while messages are outstanding.
                    self.ok.next = self.ent_qp_valid.q.val() & self.ent_outstanding.q.val();
                    if self.ok.val() {
                        if self.ent_on_una.q.val() {
                            // sq_una is still being transmitted: not yet waiting for its
                            // answer. (Later messages do not hold the timer: it measures
                            // the oldest message's wait.)
                            self.wr.next.timer_start = self.now.q.val();
                        } else if self.timer_expired.q.val() {
                            self.m_retx.next = true;
                            self.wr.next.timer_start = self.now.q.val();
                            self.wr.next.waiting = false;
                            self.wr.next.sq_next = self.ent.q.val().sq_una;
                            self.wr.next.retry = self.retry_inc.val();
                            // `retry + 1 > cfg_retry_limit` as a 4-bit compare, no adder.
                            if self.ent.q.val().retry >= self.cfg_retry_limit.val() {
                                self.job_valid.next = true;
                                self.job_final.next = true;
                                self.m_job_status.next = self.st_retry.val();
                                self.m_job_resync.next = true;
                                self.wr.next.sq_next = self.una_p1.val();
                                self.wr.next.draining = true;
                                self.wr.next.retry = 0.into();
                            }
                        }
                    }
                }
            }
        }
        self.m_wr.next = self.wr.val();
        self.m_ok.next = self.ok.val();
        self.m_job_valid.next = self.job_valid.val();
        self.m_job_succ.next = self.job_succ.val();
        self.m_job_final.next = self.job_final.val();
        self.m_has_job.next =
            self.job_valid.val() & ((self.job_succ.val() != 0) | self.job_final.val());
    }
}

impl ClockedBlock for SqOpDecision {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
