//! `TptClient`: the access check of an RDMA or atomic request, a child of
//! [`crate::ReceiveQueueEngine`]: the TPT request the engine makes for it and the answer,
//! or, without a TPT, the check that the range lies below 2^32.
//!
//! Follows `docs/nic-architecture.md` ("Reliability", rule 5: the access check; rule 6:
//! a SEND-like request that RECEIVER_NOT_READY refuses is checked only) and the TPT's
//! lookup port (`docs/nic-blocks.md`, "TPT"). Access codes: 1 remote read, 2 remote
//! write, 4 remote atomic.
//!
//! Ports:
//! - `clock`.
//! - The cell, held from its first clock to the decision: `s_outcome` (a
//!   [`CellOutcomeHeader`]: its `vaddr` (64), `stag` (32), `dma_length` (32) are read) and
//!   `s_class` (an [`OutcomeClass`]: its `is_read`, `is_atomic`, `invalidate` (the
//!   INVALIDATE flag), `consumes` (a SEND or RDMA WRITE with immediate) are read); `qp` (6, the message's) and
//!   `rq_empty` (its receive queue, looked up).
//! - `capture` (the first cell's clock): the range end `vaddr[31:0] + length` (33 bits;
//!   `length` is 8 for an atomic, else `dma_length`) and whether `vaddr[63:32]` is 0 are
//!   registered. `init` (a clock later): `access_ok` becomes `range_ok | tpt_present`
//!   (`range_ok`: the registered `vaddr[63:32]` is 0 and the end is at most 2^32),
//!   `access_done` becomes `!tpt_present`.
//! - `request` (the engine asks): `m_tpt_req_valid` = `request & tpt_present`, with
//!   `m_tpt_req` (a [`TptRequest`] bundle, `common/bundles.rs`): `stag`, `vaddr`,
//!   `length` (the length above), `access`, `invalidate`, `qp` and `commit` (0 when
//!   `consumes & rq_empty`: the request is refused anyway, so the TPT must not use up a
//!   one-shot entry or honour the invalidate flag);
//!   `m_tpt_req_ready` in; `req_taken` = `request & m_tpt_req_ready`.
//! - `waiting` (the engine waits for the answer), `s_tpt_resp_valid`, `s_tpt_resp_ok`,
//!   `s_tpt_resp_paddr` (32): `answered` = `waiting & s_tpt_resp_valid`, `paddr` the
//!   answer's address; when answered `access_ok` becomes `ok` and the address 8-aligned,
//!   `access_done` 1 (an answer takes precedence over `init`).
//! - `access_ok`, `access_done`: registered.
//!
//! Latency: `access_ok` / `access_done` the clock after `init` or the answer; the
//! request and `answered` are combinational. Throughput: one check at a time (the engine
//! has one message in progress). Limits: none beyond the boolean `tpt_present`.

use crate::common::{CellOutcomeHeader, OutcomeClass, TptRequest};
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct TptClient {
    pub clock: Signal<In, Clock>,
    pub s_outcome: Signal<In, CellOutcomeHeader>,
    pub s_class: Signal<In, OutcomeClass>,
    pub qp: Signal<In, Bits<6>>,
    pub rq_empty: Signal<In, Bit>,
    pub capture: Signal<In, Bit>,
    pub init: Signal<In, Bit>,
    pub request: Signal<In, Bit>,
    pub waiting: Signal<In, Bit>,
    pub m_tpt_req_valid: Signal<Out, Bit>,
    pub m_tpt_req_ready: Signal<In, Bit>,
    pub m_tpt_req: Signal<Out, TptRequest>,
    pub s_tpt_resp_valid: Signal<In, Bit>,
    pub s_tpt_resp_ok: Signal<In, Bit>,
    pub s_tpt_resp_paddr: Signal<In, Bits<32>>,
    pub req_taken: Signal<Out, Bit>,
    pub answered: Signal<Out, Bit>,
    pub paddr: Signal<Out, Bits<32>>,
    pub access_ok: Signal<Out, Bit>,
    pub access_done: Signal<Out, Bit>,
    range_end_reg: DFF<Bits<33>>,
    vaddr_high_zero: DFF<Bit>,
    ok_reg: DFF<Bit>,
    done_reg: DFF<Bit>,
    length: Signal<Local, Bits<32>>,
    range_ok: Signal<Local, Bit>,
    tpt_present: Constant<Bit>,
}

impl TptClient {
    /// The access check of an engine with or without a TPT.
    pub fn new(tpt_present: bool) -> Self {
        TptClient {
            clock: Default::default(),
            s_outcome: Default::default(),
            s_class: Default::default(),
            qp: Default::default(),
            rq_empty: Default::default(),
            capture: Default::default(),
            init: Default::default(),
            request: Default::default(),
            waiting: Default::default(),
            m_tpt_req_valid: Default::default(),
            m_tpt_req_ready: Default::default(),
            m_tpt_req: Default::default(),
            s_tpt_resp_valid: Default::default(),
            s_tpt_resp_ok: Default::default(),
            s_tpt_resp_paddr: Default::default(),
            req_taken: Default::default(),
            answered: Default::default(),
            paddr: Default::default(),
            access_ok: Default::default(),
            access_done: Default::default(),
            range_end_reg: Default::default(),
            vaddr_high_zero: Default::default(),
            ok_reg: Default::default(),
            done_reg: Default::default(),
            length: Default::default(),
            range_ok: Default::default(),
            tpt_present: Constant::new(tpt_present),
        }
    }
}

impl Logic for TptClient {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            range_end_reg,
            vaddr_high_zero,
            ok_reg,
            done_reg
        );
        self.length.next = self.s_outcome.val().dma_length;
        if self.s_class.val().is_atomic {
            self.length.next = 8.into();
        }
        if self.capture.val() {
            self.range_end_reg.d.next =
                bit_cast::<33, 32>(bit_cast::<32, 64>(self.s_outcome.val().vaddr))
                    + bit_cast::<33, 32>(self.length.val());
            self.vaddr_high_zero.d.next = (self.s_outcome.val().vaddr >> 32) == 0;
        }
        // At most 2^32: bit 32 clear, or exactly 2^32.
        self.range_ok.next = self.vaddr_high_zero.q.val()
            & (!self.range_end_reg.q.val().get_bit(32)
                | (self.range_end_reg.q.val().get_bits::<32>(0) == 0));
        if self.init.val() {
            self.ok_reg.d.next = self.range_ok.val() | self.tpt_present.val();
            self.done_reg.d.next = !self.tpt_present.val();
        }
        self.answered.next = self.waiting.val() & self.s_tpt_resp_valid.val();
        if self.answered.val() {
            self.ok_reg.d.next =
                self.s_tpt_resp_ok.val() & (self.s_tpt_resp_paddr.val().get_bits::<3>(0) == 0);
            self.done_reg.d.next = true;
        }
        self.paddr.next = self.s_tpt_resp_paddr.val();
        self.access_ok.next = self.ok_reg.q.val();
        self.access_done.next = self.done_reg.q.val();
        self.m_tpt_req_valid.next = self.request.val() & self.tpt_present.val();
        self.req_taken.next = self.request.val() & self.m_tpt_req_ready.val();
        self.m_tpt_req.next.stag = self.s_outcome.val().stag;
        self.m_tpt_req.next.vaddr = self.s_outcome.val().vaddr;
        self.m_tpt_req.next.length = self.length.val();
        self.m_tpt_req.next.access = 2.into();
        if self.s_class.val().is_read {
            self.m_tpt_req.next.access = 1.into();
        }
        if self.s_class.val().is_atomic {
            self.m_tpt_req.next.access = 4.into();
        }
        self.m_tpt_req.next.invalidate = self.s_class.val().invalidate;
        self.m_tpt_req.next.qp = self.qp.val();
        self.m_tpt_req.next.commit = !(self.s_class.val().consumes & self.rq_empty.val());
    }
}

impl ClockedBlock for TptClient {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
