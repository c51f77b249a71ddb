//! `QpFlags`: the responder's one-bit-per-queue-pair state, a child of [`super::QpState`].
//!
//! Follows `docs/nic-architecture.md` ("Reliability": the saved atomic and the expected
//! response; "Refused PSNs": the refusal window; "Rejoin support": `synced` and the resync
//! point) and the per-QP register map of `docs/csr-map.md` (QP_CTRL bits 0 enable, 1 reset,
//! 3 resume).
//!
//! Seven flags per queue pair: `enabled`, `synced`, `nak_sent`, `refused` (the refusal
//! window is valid), `rs_valid` (the resync point is valid), `atomic_valid` (a saved atomic
//! is valid), `expect_valid` (an expected response is valid).
//!
//! Ports (every change takes effect at the clock edge; outputs read the flags as of this
//! clock):
//! - `clock`, `reset` (synchronous, active high: every flag clears).
//! - The CSR write of queue pair `csr_qp` (6): `ctrl_write` (a write of QP_CTRL is taken)
//!   with `ctrl_enable` (its enable bit) sets or clears `enabled`; `qp_reset` (QP_CTRL reset
//!   taken) clears `synced`, `nak_sent`, `refused`, `rs_valid`, `atomic_valid`,
//!   `expect_valid`; `qp_resume` (QP_CTRL resume taken) clears `nak_sent` and `refused` and
//!   sets `synced` and `rs_valid`.
//! - The engine's updates of queue pair `ctx_qp` (6): `synced_set`, `nak_set`, `nak_clear`,
//!   `refused_set`, `rs_set`, `rs_clear`, `atomic_set`, `expect_clear`.
//! - The expect event of queue pair `expect_qp` (6): `expect_set`.
//! - Per flag, clears apply before sets: a clear and a set of the same bit in one clock
//!   leave it set.
//! - `ctx_enabled`, `ctx_synced`, `ctx_nak_sent`, `ctx_refused`, `ctx_rs_valid`,
//!   `ctx_atomic_valid`, `ctx_expect_valid`: the flags of `ctx_qp`; `status_synced`: the
//!   `synced` flag of `status_qp` (6) (the QP_STATUS read).
//!
//! Latency: a change is seen on the outputs from the next clock. Throughput: every input
//! every clock. Limits: `queue_pairs` in 1..=64; flags of queue pairs `>= queue_pairs`
//! stay clear (their outputs read zero).

use crate::sim::ClockedBlock;
use nic_abi::MAX_QUEUE_PAIRS;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct QpFlags {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub csr_qp: Signal<In, Bits<6>>,
    pub ctrl_write: Signal<In, Bit>,
    pub ctrl_enable: Signal<In, Bit>,
    pub qp_reset: Signal<In, Bit>,
    pub qp_resume: Signal<In, Bit>,
    pub ctx_qp: Signal<In, Bits<6>>,
    pub synced_set: Signal<In, Bit>,
    pub nak_set: Signal<In, Bit>,
    pub nak_clear: Signal<In, Bit>,
    pub refused_set: Signal<In, Bit>,
    pub rs_set: Signal<In, Bit>,
    pub rs_clear: Signal<In, Bit>,
    pub atomic_set: Signal<In, Bit>,
    pub expect_clear: Signal<In, Bit>,
    pub expect_qp: Signal<In, Bits<6>>,
    pub expect_set: Signal<In, Bit>,
    pub status_qp: Signal<In, Bits<6>>,
    pub ctx_enabled: Signal<Out, Bit>,
    pub ctx_synced: Signal<Out, Bit>,
    pub ctx_nak_sent: Signal<Out, Bit>,
    pub ctx_refused: Signal<Out, Bit>,
    pub ctx_rs_valid: Signal<Out, Bit>,
    pub ctx_atomic_valid: Signal<Out, Bit>,
    pub ctx_expect_valid: Signal<Out, Bit>,
    pub status_synced: Signal<Out, Bit>,
    enable_bits: DFF<Bits<64>>,
    synced_bits: DFF<Bits<64>>,
    nak_bits: DFF<Bits<64>>,
    refused_bits: DFF<Bits<64>>,
    rs_bits: DFF<Bits<64>>,
    atomic_bits: DFF<Bits<64>>,
    expect_bits: DFF<Bits<64>>,
    ctx_mask: Signal<Local, Bits<64>>,
    csr_mask: Signal<Local, Bits<64>>,
    expect_mask: Signal<Local, Bits<64>>,
    /// `csr_mask` while a QP reset / resume is taken, else zero.
    reset_mask: Signal<Local, Bits<64>>,
    resume_mask: Signal<Local, Bits<64>>,
    enable_clear_mask: Signal<Local, Bits<64>>,
    enable_set_mask: Signal<Local, Bits<64>>,
    synced_set_mask: Signal<Local, Bits<64>>,
    nak_clear_mask: Signal<Local, Bits<64>>,
    nak_set_mask: Signal<Local, Bits<64>>,
    refused_set_mask: Signal<Local, Bits<64>>,
    rs_clear_mask: Signal<Local, Bits<64>>,
    rs_set_mask: Signal<Local, Bits<64>>,
    atomic_set_mask: Signal<Local, Bits<64>>,
    expect_clear_mask: Signal<Local, Bits<64>>,
    expect_set_mask: Signal<Local, Bits<64>>,
    /// Bit q set for every queue pair q < queue_pairs (no other flag bit is ever set).
    qp_mask: Constant<Bits<64>>,
}

impl QpFlags {
    /// The flags of `queue_pairs` queue pairs.
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "QpFlags: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        let qp_mask = if queue_pairs >= 64 {
            u64::MAX
        } else {
            (1u64 << queue_pairs) - 1
        };
        QpFlags {
            clock: Default::default(),
            reset: Default::default(),
            csr_qp: Default::default(),
            ctrl_write: Default::default(),
            ctrl_enable: Default::default(),
            qp_reset: Default::default(),
            qp_resume: Default::default(),
            ctx_qp: Default::default(),
            synced_set: Default::default(),
            nak_set: Default::default(),
            nak_clear: Default::default(),
            refused_set: Default::default(),
            rs_set: Default::default(),
            rs_clear: Default::default(),
            atomic_set: Default::default(),
            expect_clear: Default::default(),
            expect_qp: Default::default(),
            expect_set: Default::default(),
            status_qp: Default::default(),
            ctx_enabled: Default::default(),
            ctx_synced: Default::default(),
            ctx_nak_sent: Default::default(),
            ctx_refused: Default::default(),
            ctx_rs_valid: Default::default(),
            ctx_atomic_valid: Default::default(),
            ctx_expect_valid: Default::default(),
            status_synced: Default::default(),
            enable_bits: Default::default(),
            synced_bits: Default::default(),
            nak_bits: Default::default(),
            refused_bits: Default::default(),
            rs_bits: Default::default(),
            atomic_bits: Default::default(),
            expect_bits: Default::default(),
            ctx_mask: Default::default(),
            csr_mask: Default::default(),
            expect_mask: Default::default(),
            reset_mask: Default::default(),
            resume_mask: Default::default(),
            enable_clear_mask: Default::default(),
            enable_set_mask: Default::default(),
            synced_set_mask: Default::default(),
            nak_clear_mask: Default::default(),
            nak_set_mask: Default::default(),
            refused_set_mask: Default::default(),
            rs_clear_mask: Default::default(),
            rs_set_mask: Default::default(),
            atomic_set_mask: Default::default(),
            expect_clear_mask: Default::default(),
            expect_set_mask: Default::default(),
            qp_mask: Constant::new(qp_mask.to_bits()),
        }
    }
}

impl Logic for QpFlags {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            enable_bits,
            synced_bits,
            nak_bits,
            refused_bits,
            rs_bits,
            atomic_bits,
            expect_bits
        );
        self.ctx_enabled.next = self.enable_bits.q.val().get_bit(self.ctx_qp.val().index());
        self.ctx_synced.next = self.synced_bits.q.val().get_bit(self.ctx_qp.val().index());
        self.ctx_nak_sent.next = self.nak_bits.q.val().get_bit(self.ctx_qp.val().index());
        self.ctx_refused.next = self.refused_bits.q.val().get_bit(self.ctx_qp.val().index());
        self.ctx_rs_valid.next = self.rs_bits.q.val().get_bit(self.ctx_qp.val().index());
        self.ctx_atomic_valid.next = self.atomic_bits.q.val().get_bit(self.ctx_qp.val().index());
        self.ctx_expect_valid.next = self.expect_bits.q.val().get_bit(self.ctx_qp.val().index());
        self.status_synced.next = self
            .synced_bits
            .q
            .val()
            .get_bit(self.status_qp.val().index());

        self.ctx_mask.next = bits::<64>(1) << self.ctx_qp.val();
        self.csr_mask.next = bits::<64>(1) << self.csr_qp.val();
        self.expect_mask.next = bits::<64>(1) << self.expect_qp.val();
        self.reset_mask.next = 0.into();
        if self.qp_reset.val() {
            self.reset_mask.next = self.csr_mask.val();
        }
        self.resume_mask.next = 0.into();
        if self.qp_resume.val() {
            self.resume_mask.next = self.csr_mask.val();
        }
        self.enable_clear_mask.next = 0.into();
        self.enable_set_mask.next = 0.into();
        if self.ctrl_write.val() {
            self.enable_clear_mask.next = self.csr_mask.val();
            if self.ctrl_enable.val() {
                self.enable_set_mask.next = self.csr_mask.val();
            }
        }
        self.synced_set_mask.next = self.resume_mask.val();
        if self.synced_set.val() {
            self.synced_set_mask.next = self.ctx_mask.val() | self.resume_mask.val();
        }
        self.nak_clear_mask.next = self.reset_mask.val() | self.resume_mask.val();
        if self.nak_clear.val() {
            self.nak_clear_mask.next =
                self.reset_mask.val() | self.resume_mask.val() | self.ctx_mask.val();
        }
        self.nak_set_mask.next = 0.into();
        if self.nak_set.val() {
            self.nak_set_mask.next = self.ctx_mask.val();
        }
        self.refused_set_mask.next = 0.into();
        if self.refused_set.val() {
            self.refused_set_mask.next = self.ctx_mask.val();
        }
        self.rs_clear_mask.next = self.reset_mask.val();
        if self.rs_clear.val() {
            self.rs_clear_mask.next = self.reset_mask.val() | self.ctx_mask.val();
        }
        self.rs_set_mask.next = self.resume_mask.val();
        if self.rs_set.val() {
            self.rs_set_mask.next = self.ctx_mask.val() | self.resume_mask.val();
        }
        self.atomic_set_mask.next = 0.into();
        if self.atomic_set.val() {
            self.atomic_set_mask.next = self.ctx_mask.val();
        }
        self.expect_clear_mask.next = self.reset_mask.val();
        if self.expect_clear.val() {
            self.expect_clear_mask.next = self.reset_mask.val() | self.ctx_mask.val();
        }
        self.expect_set_mask.next = 0.into();
        if self.expect_set.val() {
            self.expect_set_mask.next = self.expect_mask.val();
        }

        self.enable_bits.d.next = ((self.enable_bits.q.val() & !self.enable_clear_mask.val())
            | self.enable_set_mask.val())
            & self.qp_mask.val();
        self.synced_bits.d.next = ((self.synced_bits.q.val() & !self.reset_mask.val())
            | self.synced_set_mask.val())
            & self.qp_mask.val();
        self.nak_bits.d.next = ((self.nak_bits.q.val() & !self.nak_clear_mask.val())
            | self.nak_set_mask.val())
            & self.qp_mask.val();
        self.refused_bits.d.next = ((self.refused_bits.q.val()
            & !(self.reset_mask.val() | self.resume_mask.val()))
            | self.refused_set_mask.val())
            & self.qp_mask.val();
        self.rs_bits.d.next = ((self.rs_bits.q.val() & !self.rs_clear_mask.val())
            | self.rs_set_mask.val())
            & self.qp_mask.val();
        self.atomic_bits.d.next = ((self.atomic_bits.q.val() & !self.reset_mask.val())
            | self.atomic_set_mask.val())
            & self.qp_mask.val();
        self.expect_bits.d.next = ((self.expect_bits.q.val() & !self.expect_clear_mask.val())
            | self.expect_set_mask.val())
            & self.qp_mask.val();

        if self.reset.val() {
            self.enable_bits.d.next = 0.into();
            self.synced_bits.d.next = 0.into();
            self.nak_bits.d.next = 0.into();
            self.refused_bits.d.next = 0.into();
            self.rs_bits.d.next = 0.into();
            self.atomic_bits.d.next = 0.into();
            self.expect_bits.d.next = 0.into();
        }
    }
}

impl ClockedBlock for QpFlags {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
