//! `AckRetire`: the back of the requester's [`AckMachine`](crate::requester::AckMachine):
//! the two-slot read queue of completions whose WQE re-read is requested, and the retire of
//! the oldest one: take its words, issue its completion request, have the table engine
//! advance `sq_una` past it, in order.
//!
//! Follows `docs/nic-architecture.md` ("Host memory structures": a completion's opcode,
//! byte count and `wr_id` come from the WQE) and "SendQueueEngine: design notes" in
//! `docs/nic-blocks.md`.
//!
//! Ports (every handshake valid/ready; a source holds its fields while valid and not ready):
//! - `clock`, `reset` (synchronous, active high: the queue empty, the back free).
//!   Reset steers no handshake (`docs/nic-blocks.md`, "Reset"): what is taken in a reset
//!   clock is dropped at that edge.
//! - Push (the front's re-read request taken; only while not `m_full`): `s_push`, the
//!   completion's `s_push_qp` (6), `s_push_idx` (24, its WQE index), `s_push_status` (8),
//!   `s_push_set_resync` (its advance sets the QP's resync flag), `s_push_remote` (32,
//!   QP_REMOTE), `s_push_stale` (the front's job went stale).
//! - `s_front_qp` (6): the front's QP. `m_hazard`: it has a completion in the queue or the
//!   back; `m_fail_front`: this clock's advance failed for it (see below).
//! - Queue: `m_full` (both slots hold a completion), `m_all_idle` (the queue empty and
//!   the back free).
//! - Advance: `m_adv_req` (the back requests its advance), `m_adv_busy` (requesting or
//!   waiting for it), `m_adv_qp` (6); `s_adv_grant`: the engine granted the advance on
//!   this clock's edge; `s_exec`, `s_exec_ok`: the engine executes an operation this clock
//!   (the first one after the grant is the advance) and applied it. `m_adv_idx` (24),
//!   `m_adv_set_resync`, `m_adv_stale` (the QP was reset since the completion's job
//!   started: the advance is void). A void advance ends its job: the queued completions of
//!   its QP are dropped (their words taken, no request).
//! - QP reset: `s_qp_reset_valid`, `s_qp_reset_qp` (6): the queued completions and the
//!   back's completion of that QP go stale.
//! - Re-read words: `s_cplrd_data` (64), `s_cplrd_valid`, `s_cplrd_ready` (the back is
//!   free and a completion is queued), `s_cplrd_last`; the words come in request order.
//! - Completion requests: `m_cpl_valid` / `m_cpl_ready`, `m_cpl` (a [`CompletionRequest`]):
//!   `opcode` (word 0 bits 7:0), `status`, `qp`, `is_receive` (0), `has_immediate` (0),
//!   `byte_count` (word 0 bits 63:32), `wqe_index`, `src_node` (remote bits 15:0), `src_qp`
//!   (remote bits 31:16), `wr_id` (word 1), `immediate` (0).
//!
//! Latency: a pushed completion is queued the next clock; the back takes the oldest one's
//! words while free; the completion request follows one clock after the last word, the
//! advance request one clock after the completion is taken; the back is free the clock
//! after the advance's execute clock.
//! Throughput: two completions queued, one being issued and advanced.
//! Limits: the queue holds two completions (the front pushes only while not `m_full`).

use crate::common::CompletionRequest;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// The back: the completion whose words arrived, retired in order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqAckRetire {
    /// Takes the words of the oldest re-read in the queue.
    Free,
    Cpl,
    AdvReq,
    AdvWait,
}

#[derive(LogicBlock, Default)]
pub struct AckRetire {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_push: Signal<In, Bit>,
    pub s_push_qp: Signal<In, Bits<6>>,
    pub s_push_idx: Signal<In, Bits<24>>,
    pub s_push_status: Signal<In, Bits<8>>,
    pub s_push_set_resync: Signal<In, Bit>,
    pub s_push_remote: Signal<In, Bits<32>>,
    pub s_push_stale: Signal<In, Bit>,
    pub s_front_qp: Signal<In, Bits<6>>,
    pub m_hazard: Signal<Out, Bit>,
    pub m_fail_front: Signal<Out, Bit>,
    pub m_full: Signal<Out, Bit>,
    pub m_all_idle: Signal<Out, Bit>,
    pub m_adv_req: Signal<Out, Bit>,
    pub m_adv_busy: Signal<Out, Bit>,
    pub m_adv_qp: Signal<Out, Bits<6>>,
    pub s_adv_grant: Signal<In, Bit>,
    pub s_exec: Signal<In, Bit>,
    pub s_exec_ok: Signal<In, Bit>,
    pub m_adv_idx: Signal<Out, Bits<24>>,
    pub m_adv_set_resync: Signal<Out, Bit>,
    pub m_adv_stale: Signal<Out, Bit>,
    pub s_qp_reset_valid: Signal<In, Bit>,
    pub s_qp_reset_qp: Signal<In, Bits<6>>,
    pub s_cplrd_data: Signal<In, Bits<64>>,
    pub s_cplrd_valid: Signal<In, Bit>,
    pub s_cplrd_ready: Signal<Out, Bit>,
    pub s_cplrd_last: Signal<In, Bit>,
    pub m_cpl_valid: Signal<Out, Bit>,
    pub m_cpl_ready: Signal<In, Bit>,
    pub m_cpl: Signal<Out, CompletionRequest>,
    // The read queue: two slots of completions whose re-read is requested, in request
    // order (write pointer `wptr`, read pointer `rptr`).
    wptr: DFF<Bit>,
    rptr: DFF<Bit>,
    qv0: DFF<Bit>,
    qv1: DFF<Bit>,
    qqp0: DFF<Bits<6>>,
    qqp1: DFF<Bits<6>>,
    qidx0: DFF<Bits<24>>,
    qidx1: DFF<Bits<24>>,
    qst0: DFF<Bits<8>>,
    qst1: DFF<Bits<8>>,
    qrs0: DFF<Bit>,
    qrs1: DFF<Bit>,
    qrem0: DFF<Bits<32>>,
    qrem1: DFF<Bits<32>>,
    qstale0: DFF<Bit>,
    qstale1: DFF<Bit>,
    /// An earlier advance of the same job failed: the words are taken and dropped.
    qvoid0: DFF<Bit>,
    qvoid1: DFF<Bit>,
    // The back: the completion being issued and advanced.
    pub(crate) bstate: DFF<SqAckRetire>,
    bqp: DFF<Bits<6>>,
    bidx: DFF<Bits<24>>,
    bst: DFF<Bits<8>>,
    brs: DFF<Bit>,
    brem: DFF<Bits<32>>,
    bstale: DFF<Bit>,
    cpl_beat: DFF<Bit>,
    cpl_opcode: DFF<Bits<8>>,
    cpl_len: DFF<Bits<32>>,
    cpl_wr_id: DFF<Bits<64>>,
    pop: Signal<Local, Bit>,
    fail: Signal<Local, Bit>,
    head_valid: Signal<Local, Bit>,
    h_qp: Signal<Local, Bits<6>>,
    h_idx: Signal<Local, Bits<24>>,
    h_st: Signal<Local, Bits<8>>,
    h_rs: Signal<Local, Bit>,
    h_rem: Signal<Local, Bits<32>>,
    h_stale: Signal<Local, Bit>,
    h_void: Signal<Local, Bit>,
}

impl AckRetire {
    /// The back of an `AckMachine` (no parameters).
    pub fn new() -> Self {
        Self::default()
    }
}

impl ClockedBlock for AckRetire {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

impl Logic for AckRetire {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, wptr, rptr, qv0, qv1, qqp0, qqp1, qidx0, qidx1, qst0, qst1, qrs0, qrs1,
            qrem0, qrem1, qstale0, qstale1, qvoid0, qvoid1, bstate, bqp, bidx, bst, brs, brem,
            bstale, cpl_beat, cpl_opcode, cpl_len, cpl_wr_id
        );
        self.m_full.next = self.qv0.q.val() & self.qv1.q.val();
        self.m_all_idle.next =
            (self.bstate.q.val() == SqAckRetire::Free) & !self.qv0.q.val() & !self.qv1.q.val();
        self.m_hazard.next = (self.qv0.q.val() & (self.qqp0.q.val() == self.s_front_qp.val()))
            | (self.qv1.q.val() & (self.qqp1.q.val() == self.s_front_qp.val()))
            | ((self.bstate.q.val() != SqAckRetire::Free)
                & (self.bqp.q.val() == self.s_front_qp.val()));
        self.m_adv_req.next = self.bstate.q.val() == SqAckRetire::AdvReq;
        self.m_adv_busy.next = (self.bstate.q.val() == SqAckRetire::AdvReq)
            | (self.bstate.q.val() == SqAckRetire::AdvWait);
        self.m_adv_qp.next = self.bqp.q.val();

        // ---- The read queue's head ----
        self.head_valid.next = self.qv0.q.val();
        self.h_qp.next = self.qqp0.q.val();
        self.h_idx.next = self.qidx0.q.val();
        self.h_st.next = self.qst0.q.val();
        self.h_rs.next = self.qrs0.q.val();
        self.h_rem.next = self.qrem0.q.val();
        self.h_stale.next = self.qstale0.q.val();
        self.h_void.next = self.qvoid0.q.val();
        if self.rptr.q.val() {
            self.head_valid.next = self.qv1.q.val();
            self.h_qp.next = self.qqp1.q.val();
            self.h_idx.next = self.qidx1.q.val();
            self.h_st.next = self.qst1.q.val();
            self.h_rs.next = self.qrs1.q.val();
            self.h_rem.next = self.qrem1.q.val();
            self.h_stale.next = self.qstale1.q.val();
            self.h_void.next = self.qvoid1.q.val();
        }
        self.s_cplrd_ready.next =
            (self.bstate.q.val() == SqAckRetire::Free) & self.head_valid.val();
        self.pop.next =
            self.s_cplrd_ready.val() & self.s_cplrd_valid.val() & self.s_cplrd_last.val();
        // A failed advance ends its job: the queued completions of its QP (all of that job)
        // are dropped and the front stops issuing it.
        self.fail.next = (self.bstate.q.val() == SqAckRetire::AdvWait)
            & self.s_exec.val()
            & !self.s_exec_ok.val();
        self.m_fail_front.next = self.fail.val() & (self.bqp.q.val() == self.s_front_qp.val());

        // ---- The read queue: a slot loads on its push, empties on its pop ----
        self.qstale0.d.next = self.qstale0.q.val()
            | (self.s_qp_reset_valid.val() & (self.s_qp_reset_qp.val() == self.qqp0.q.val()));
        self.qstale1.d.next = self.qstale1.q.val()
            | (self.s_qp_reset_valid.val() & (self.s_qp_reset_qp.val() == self.qqp1.q.val()));
        self.qvoid0.d.next =
            self.qvoid0.q.val() | (self.fail.val() & (self.bqp.q.val() == self.qqp0.q.val()));
        self.qvoid1.d.next =
            self.qvoid1.q.val() | (self.fail.val() & (self.bqp.q.val() == self.qqp1.q.val()));
        if self.s_push.val() {
            self.wptr.d.next = !self.wptr.q.val();
        }
        if self.pop.val() {
            self.rptr.d.next = !self.rptr.q.val();
        }
        if self.pop.val() & !self.rptr.q.val() {
            self.qv0.d.next = false;
        }
        if self.pop.val() & self.rptr.q.val() {
            self.qv1.d.next = false;
        }
        if self.s_push.val() & !self.wptr.q.val() {
            self.qv0.d.next = true;
            self.qqp0.d.next = self.s_push_qp.val();
            self.qidx0.d.next = self.s_push_idx.val();
            self.qst0.d.next = self.s_push_status.val();
            self.qrs0.d.next = self.s_push_set_resync.val();
            self.qrem0.d.next = self.s_push_remote.val();
            self.qstale0.d.next = self.s_push_stale.val();
            self.qvoid0.d.next = self.fail.val() & (self.bqp.q.val() == self.s_push_qp.val());
        }
        if self.s_push.val() & self.wptr.q.val() {
            self.qv1.d.next = true;
            self.qqp1.d.next = self.s_push_qp.val();
            self.qidx1.d.next = self.s_push_idx.val();
            self.qst1.d.next = self.s_push_status.val();
            self.qrs1.d.next = self.s_push_set_resync.val();
            self.qrem1.d.next = self.s_push_remote.val();
            self.qstale1.d.next = self.s_push_stale.val();
            self.qvoid1.d.next = self.fail.val() & (self.bqp.q.val() == self.s_push_qp.val());
        }

        // ---- The back: words in, completion out, then the advance ----
        if self.s_qp_reset_valid.val()
            & (self.s_qp_reset_qp.val() == self.bqp.q.val())
            & (self.bstate.q.val() != SqAckRetire::Free)
        {
            self.bstale.d.next = true;
        }
        self.m_cpl_valid.next = false;
        match self.bstate.q.val() {
            SqAckRetire::Free => {
                if self.s_cplrd_ready.val() & self.s_cplrd_valid.val() {
                    self.cpl_beat.d.next = !self.s_cplrd_last.val();
                    if self.cpl_beat.q.val() {
                        self.cpl_wr_id.d.next = self.s_cplrd_data.val();
                    } else {
                        self.cpl_opcode.d.next = self.s_cplrd_data.val().get_bits::<8>(0);
                        self.cpl_len.d.next = self.s_cplrd_data.val().get_bits::<32>(32);
                    }
                }
                if self.pop.val() {
                    self.bqp.d.next = self.h_qp.val();
                    self.bidx.d.next = self.h_idx.val();
                    self.bst.d.next = self.h_st.val();
                    self.brs.d.next = self.h_rs.val();
                    self.brem.d.next = self.h_rem.val();
                    self.bstale.d.next = self.h_stale.val()
                        | (self.s_qp_reset_valid.val()
                            & (self.s_qp_reset_qp.val() == self.h_qp.val()));
                    if !self.h_void.val() {
                        self.bstate.d.next = SqAckRetire::Cpl;
                    }
                }
            }
            SqAckRetire::Cpl => {
                self.m_cpl_valid.next = true;
                if self.m_cpl_ready.val() {
                    self.bstate.d.next = SqAckRetire::AdvReq;
                }
            }
            SqAckRetire::AdvReq => {
                if self.s_adv_grant.val() {
                    self.bstate.d.next = SqAckRetire::AdvWait;
                }
            }
            SqAckRetire::AdvWait => {
                if self.s_exec.val() {
                    self.bstate.d.next = SqAckRetire::Free;
                }
            }
            _ => {
                self.bstate.d.next = SqAckRetire::Free;
            }
        }

        // ---- Outputs ----
        self.m_adv_idx.next = self.bidx.q.val();
        self.m_adv_set_resync.next = self.brs.q.val();
        self.m_adv_stale.next = self.bstale.q.val();
        self.m_cpl.next.opcode = self.cpl_opcode.q.val();
        self.m_cpl.next.status = self.bst.q.val();
        self.m_cpl.next.qp = self.bqp.q.val();
        self.m_cpl.next.is_receive = false;
        self.m_cpl.next.has_immediate = false;
        self.m_cpl.next.byte_count = self.cpl_len.q.val();
        self.m_cpl.next.wqe_index = self.bidx.q.val();
        self.m_cpl.next.src_node = self.brem.q.val().get_bits::<16>(0);
        self.m_cpl.next.src_qp = self.brem.q.val().get_bits::<16>(16);
        self.m_cpl.next.wr_id = self.cpl_wr_id.q.val();
        self.m_cpl.next.immediate = 0.into();

        if self.reset.val() {
            self.bstate.d.next = SqAckRetire::Free;
            self.wptr.d.next = false;
            self.rptr.d.next = false;
            self.qv0.d.next = false;
            self.qv1.d.next = false;
            self.cpl_beat.d.next = false;
        }
    }
}
