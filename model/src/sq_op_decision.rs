//! Reference model of the requester's `SqOpDecision`: the send engine's decision on the
//! registered QP entry (claim, commit, advance, timer check; a CSR write's entry and an
//! event evaluation's decision taken over) and its cycle counter, written from its doc
//! comment (`rtl/src/requester/sq_op_decision.rs`).

use crate::sq_csr_access::SqEntry;
use nic_abi::CompletionStatus;

pub use crate::sq_op_grant::Op;

/// The event evaluator's decision (the inputs of an Eval).
#[derive(Clone, Copy, Debug, Default)]
pub struct EvDecision {
    pub job_valid: bool,
    pub job_succ: u8,
    pub job_run_status: u8,
    pub job_final: bool,
    pub job_status: u8,
    pub job_resync: bool,
    pub retx: bool,
    pub restart: bool,
    pub set_next: bool,
    pub next: u32,
    pub set_retry: bool,
    pub retry: u8,
    pub set_drain: bool,
}

/// The inputs of one clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inputs {
    pub reset: bool,
    pub retry_timeout: u32,
    pub retry_limit: u8,
    pub read: bool,
    pub rd_entry: SqEntry,
    pub rd_outstanding: bool,
    pub rd_has_work: bool,
    pub rd_window_full: bool,
    pub exec: bool,
    pub op: Op,
    /// With `read`: the operation's QP is below `queue_pairs` (held to its Exec clock).
    pub qp_valid: bool,
    pub csr_entry: SqEntry,
    pub csr_qp_reset: bool,
    pub csr_moved: bool,
    pub commit_psn: u32,
    pub commit_stale: bool,
    pub commit_need_empty: bool,
    pub commit_local_only: bool,
    pub commit_needs_response: bool,
    pub adv_idx: u32,
    pub adv_stale: bool,
    pub adv_set_resync: bool,
    /// With `read`: the read entry's `sq_una` is being transmitted.
    pub rd_on_una: bool,
    pub ev: EvDecision,
}

/// The outputs of one clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    pub now: u32,
    pub entry: SqEntry,
    pub outstanding: bool,
    pub kept: SqEntry,
    pub wqe_addr: u32,
    pub wr: SqEntry,
    pub ok: bool,
    pub retx: bool,
    pub job_valid: bool,
    pub job_succ: u8,
    pub job_run_status: u8,
    pub job_final: bool,
    pub job_status: u8,
    pub job_resync: bool,
    pub has_job: bool,
    pub csr_qp_reset: bool,
    pub csr_moved: bool,
}

/// The counter, the registered entry and its flags, and the timeout of the last clock.
#[derive(Clone, Debug, Default)]
pub struct OpDecision {
    now: u32,
    entry: SqEntry,
    outstanding: bool,
    has_work: bool,
    window_full: bool,
    /// Expired, decided at the last read for the clock after it.
    expired: bool,
    /// `sq_una` was being transmitted at the last read.
    on_una: bool,
    /// The operation's QP was valid at the last read.
    qp_valid: bool,
    last_timeout: u32,
}

const PSN_MASK: u32 = 0xFF_FFFF;

impl OpDecision {
    pub fn new() -> Self {
        Self::default()
    }

    /// The outputs of this clock for `i`, and the registers at its edge.
    pub fn step(&mut self, i: &Inputs) -> Outputs {
        let e = self.entry;
        let o_flag = self.outstanding;
        let mut kept = e;
        kept.draining = e.draining && o_flag;
        let slot_mask = if e.size_log2 >= 24 {
            PSN_MASK
        } else {
            (1u32 << e.size_log2) - 1
        };
        let mut o = Outputs {
            now: self.now,
            entry: e,
            outstanding: o_flag,
            kept,
            wqe_addr: e.base.wrapping_add((e.sq_next & slot_mask) << 6),
            wr: kept,
            ..Default::default()
        };
        let qp_valid = self.qp_valid;
        let eligible = qp_valid
            && e.enable
            && self.has_work
            && !self.window_full
            && !e.waiting
            && !(e.draining && o_flag);
        let now = self.now;
        if i.exec {
            let wr = &mut o.wr;
            match i.op {
                Op::CsrRead => {}
                Op::CsrWrite => {
                    o.ok = qp_valid;
                    *wr = i.csr_entry;
                    o.csr_qp_reset = i.csr_qp_reset;
                    o.csr_moved = i.csr_moved;
                }
                Op::Claim => o.ok = eligible,
                Op::Commit => {
                    let matches = eligible && e.sq_next == i.commit_psn && !i.commit_stale;
                    o.ok = matches && (!i.commit_need_empty || !o_flag);
                    if o.ok {
                        wr.sq_next = (e.sq_next + 1) & PSN_MASK;
                        if i.commit_local_only {
                            wr.draining = true;
                        } else if i.commit_needs_response {
                            wr.waiting = true;
                            wr.una_needs_response = true;
                        }
                        if !o_flag {
                            wr.timer_start = now;
                        }
                    } else if matches {
                        wr.draining = true;
                    }
                }
                Op::Eval => {
                    let ev = i.ev;
                    o.job_valid = ev.job_valid;
                    o.job_succ = ev.job_succ;
                    o.job_run_status = ev.job_run_status;
                    o.job_final = ev.job_final;
                    o.job_status = ev.job_status;
                    o.job_resync = ev.job_resync;
                    o.retx = ev.retx;
                    if ev.restart {
                        wr.waiting = false;
                        wr.timer_start = now;
                    }
                    if ev.set_next {
                        wr.sq_next = ev.next;
                    }
                    if ev.set_retry {
                        wr.retry = ev.retry;
                    }
                    if ev.set_drain {
                        wr.draining = true;
                    }
                }
                Op::Advance => {
                    o.ok = qp_valid && e.sq_una == i.adv_idx && !i.adv_stale;
                    if o.ok {
                        let idx = (i.adv_idx + 1) & PSN_MASK;
                        wr.sq_una = idx;
                        wr.una_needs_response = false;
                        if !o_flag {
                            wr.sq_next = idx;
                        }
                        wr.resync = i.adv_set_resync;
                        wr.timer_start = now;
                    }
                }
                Op::Timer => {
                    o.ok = qp_valid && o_flag;
                    let expired = self.expired;
                    if o.ok && self.on_una {
                        wr.timer_start = now;
                    } else if o.ok && expired {
                        o.retx = true;
                        wr.timer_start = now;
                        wr.waiting = false;
                        wr.sq_next = e.sq_una;
                        let retry = e.retry + 1;
                        wr.retry = retry & 0xF;
                        if retry > i.retry_limit {
                            o.job_valid = true;
                            o.job_final = true;
                            o.job_status = CompletionStatus::RETRY_EXCEEDED as u8;
                            o.job_resync = true;
                            wr.sq_next = (e.sq_una + 1) & PSN_MASK;
                            wr.draining = true;
                            wr.retry = 0;
                        }
                    }
                }
            }
        }
        o.has_job = o.job_valid && (o.job_succ != 0 || o.job_final);
        // The edge.
        self.now = if i.reset { 0 } else { now.wrapping_add(1) };
        if i.read {
            self.expired = self.last_timeout != 0
                && now.wrapping_add(1).wrapping_sub(i.rd_entry.timer_start) >= self.last_timeout;
            self.entry = i.rd_entry;
            self.outstanding = i.rd_outstanding;
            self.has_work = i.rd_has_work;
            self.window_full = i.rd_window_full;
            self.on_una = i.rd_on_una;
            self.qp_valid = i.qp_valid;
        }
        self.last_timeout = i.retry_timeout;
        o
    }
}
