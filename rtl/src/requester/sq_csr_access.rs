//! `SqCsrAccess`: the send engine's per-QP CSR registers: the value a read of one of them
//! answers from a queue pair's entry, and the entry a write leaves.
//!
//! Follows the per-QP registers of `docs/csr-map.md` (offsets and bits from
//! `nic_abi::csr`: SQ_BASE, SQ_SIZE_LOG2, SQ_PI, SQ_CI, QP_REMOTE, QP_CTRL, QP_STATUS) and
//! "SendQueueEngine: design notes" in `docs/nic-blocks.md`. Its parent `SendQueueEngine`
//! reads the entry, and in the operation's execute clock answers `m_rdata` (a read) or
//! writes back `m_entry` (a write).
//!
//! Ports (combinational; no clock):
//! - `s_qp_valid` (the access's queue pair is below `queue_pairs`: the parent's registered
//!   test, so no comparison of the QP index sits in the access's path), `s_reg` (4, the
//!   register's offset / 8), `s_wdata` (32, a write's data).
//! - `s_entry` ([`QpEntry`]): the queue pair's entry as it would be written back unchanged;
//!   `s_now` (32): the cycle counter (a reset restarts the retry timer from it).
//! - `m_qp_valid`: `s_qp_valid` (reads of other queue pairs answer 0, their writes
//!   are ignored).
//! - `m_rdata` (64): SQ_BASE (`base`), SQ_SIZE_LOG2 (`size_log2`), SQ_PI (`sq_pi`), SQ_CI
//!   (`sq_una`), QP_REMOTE (`remote`), QP_CTRL (bit 0 `enable`), QP_STATUS (23:0
//!   `sq_next`, 49 `waiting`, 55:52 `retry`); 0 for any other register.
//! - `m_entry` ([`QpEntry`]): `s_entry` after a write of `s_wdata`: SQ_BASE, SQ_SIZE_LOG2
//!   (bits 4:0), SQ_PI (23:0), QP_REMOTE set their field; QP_CTRL sets `enable` (bit 0), and
//!   with bit 1 (reset) or bit 2 (send-side reset) moves `sq_pi`, `sq_next` and `sq_una` to
//!   the start PSN (bits 31:8), sets `resync`, clears `retry`, `waiting`,
//!   `una_needs_response` and `draining` and restarts the timer at `s_now`. SQ_CI and
//!   QP_STATUS are read-only. Equal to `s_entry` for a queue pair `>= queue_pairs`.
//! - `m_qp_reset`: the write resets the queue pair (QP_CTRL bit 1 or 2); `m_moved`: it
//!   resets it or moves its ring (SQ_BASE, SQ_SIZE_LOG2), so a WQE being fetched is stale.
//!   Both low for a queue pair `>= queue_pairs`.
//!
//! Latency: combinational. Throughput: one access per clock. Limits: `queue_pairs` in
//! 1..=64; only bits 31:0 of a write are used.

use crate::requester::QpEntry;
use nic_abi::{csr, MAX_QUEUE_PAIRS};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct SqCsrAccess {
    pub s_qp_valid: Signal<In, Bit>,
    pub s_reg: Signal<In, Bits<4>>,
    pub s_wdata: Signal<In, Bits<32>>,
    pub s_entry: Signal<In, QpEntry>,
    pub s_now: Signal<In, Bits<32>>,
    pub m_qp_valid: Signal<Out, Bit>,
    pub m_rdata: Signal<Out, Bits<64>>,
    pub m_entry: Signal<Out, QpEntry>,
    pub m_qp_reset: Signal<Out, Bit>,
    pub m_moved: Signal<Out, Bit>,
    qp_valid: Signal<Local, Bit>,
    reset: Signal<Local, Bit>,
    start_psn: Signal<Local, Bits<24>>,
    reg_sq_base: Constant<Bits<4>>,
    reg_sq_size: Constant<Bits<4>>,
    reg_sq_pi: Constant<Bits<4>>,
    reg_sq_ci: Constant<Bits<4>>,
    reg_remote: Constant<Bits<4>>,
    reg_ctrl: Constant<Bits<4>>,
    reg_status: Constant<Bits<4>>,
    ctrl_enable: Constant<Bits<6>>,
    ctrl_reset: Constant<Bits<6>>,
    ctrl_send_reset: Constant<Bits<6>>,
    ctrl_start_psn: Constant<Bits<6>>,
    status_waiting: Constant<Bits<64>>,
    status_retry: Constant<Bits<64>>,
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.to_bits())
}

/// A per-QP register's index on the side port: its offset / 8.
const fn reg(offset: u16) -> u64 {
    (offset / 8) as u64
}

/// The bit number of a single-bit mask.
const fn bit_of(mask: u64) -> u64 {
    mask.trailing_zeros() as u64
}

impl SqCsrAccess {
    /// The registers of `queue_pairs` queue pairs.
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "SqCsrAccess: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        SqCsrAccess {
            s_qp_valid: Default::default(),
            s_reg: Default::default(),
            s_wdata: Default::default(),
            s_entry: Default::default(),
            s_now: Default::default(),
            m_qp_valid: Default::default(),
            m_rdata: Default::default(),
            m_entry: Default::default(),
            m_qp_reset: Default::default(),
            m_moved: Default::default(),
            qp_valid: Default::default(),
            reset: Default::default(),
            start_psn: Default::default(),
            reg_sq_base: k(reg(csr::QP_SQ_BASE)),
            reg_sq_size: k(reg(csr::QP_SQ_SIZE_LOG2)),
            reg_sq_pi: k(reg(csr::QP_SQ_PI)),
            reg_sq_ci: k(reg(csr::QP_SQ_CI)),
            reg_remote: k(reg(csr::QP_REMOTE)),
            reg_ctrl: k(reg(csr::QP_CTRL)),
            reg_status: k(reg(csr::QP_STATUS)),
            ctrl_enable: k(bit_of(csr::QP_CTRL_ENABLE)),
            ctrl_reset: k(bit_of(csr::QP_CTRL_RESET)),
            ctrl_send_reset: k(bit_of(csr::QP_CTRL_SEND_RESET)),
            ctrl_start_psn: k(csr::QP_CTRL_START_PSN_SHIFT as u64),
            status_waiting: k(csr::QpStatus::WAITING_BIT as u64),
            status_retry: k(csr::QpStatus::RETRY_COUNT_SHIFT as u64),
        }
    }
}

impl Logic for SqCsrAccess {
    #[hdl_gen]
    fn update(&mut self) {
        self.qp_valid.next = self.s_qp_valid.val();
        self.m_qp_valid.next = self.qp_valid.val();
        // ---- Read ----
        self.m_rdata.next = 0.into();
        if self.qp_valid.val() {
            if self.s_reg.val() == self.reg_sq_base.val() {
                self.m_rdata.next = bit_cast::<64, 32>(self.s_entry.val().base);
            }
            if self.s_reg.val() == self.reg_sq_size.val() {
                self.m_rdata.next = bit_cast::<64, 5>(self.s_entry.val().size_log2);
            }
            if self.s_reg.val() == self.reg_sq_pi.val() {
                self.m_rdata.next = bit_cast::<64, 24>(self.s_entry.val().sq_pi);
            }
            if self.s_reg.val() == self.reg_sq_ci.val() {
                self.m_rdata.next = bit_cast::<64, 24>(self.s_entry.val().sq_una);
            }
            if self.s_reg.val() == self.reg_remote.val() {
                self.m_rdata.next = bit_cast::<64, 32>(self.s_entry.val().remote);
            }
            if self.s_reg.val() == self.reg_ctrl.val() {
                self.m_rdata.next = bit_cast::<64, 1>(self.s_entry.val().enable.into());
            }
            if self.s_reg.val() == self.reg_status.val() {
                self.m_rdata.next = bit_cast::<64, 24>(self.s_entry.val().sq_next)
                    | (bit_cast::<64, 1>(self.s_entry.val().waiting.into())
                        << self.status_waiting.val())
                    | (bit_cast::<64, 4>(self.s_entry.val().retry) << self.status_retry.val());
            }
        }
        // ---- Write ----
        self.reset.next = (self.s_reg.val() == self.reg_ctrl.val())
            & (self.s_wdata.val().get_bit(self.ctrl_reset.val().index())
                | self
                    .s_wdata
                    .val()
                    .get_bit(self.ctrl_send_reset.val().index()));
        self.start_psn.next = self
            .s_wdata
            .val()
            .get_bits::<24>(self.ctrl_start_psn.val().index());
        self.m_entry.next = self.s_entry.val();
        self.m_qp_reset.next = false;
        self.m_moved.next = false;
        if self.qp_valid.val() {
            if self.s_reg.val() == self.reg_sq_base.val() {
                self.m_entry.next.base = self.s_wdata.val();
            }
            if self.s_reg.val() == self.reg_sq_size.val() {
                self.m_entry.next.size_log2 = self.s_wdata.val().get_bits::<5>(0);
            }
            if self.s_reg.val() == self.reg_sq_pi.val() {
                self.m_entry.next.sq_pi = self.s_wdata.val().get_bits::<24>(0);
            }
            if self.s_reg.val() == self.reg_remote.val() {
                self.m_entry.next.remote = self.s_wdata.val();
            }
            if self.s_reg.val() == self.reg_ctrl.val() {
                self.m_entry.next.enable =
                    self.s_wdata.val().get_bit(self.ctrl_enable.val().index());
            }
            if self.reset.val() {
                // QP reset (bit 1), or send-side reset (bit 2: the responder side is the
                // receive engine's and is kept): sq_pi = sq_next = sq_una = start PSN.
                self.m_entry.next.sq_pi = self.start_psn.val();
                self.m_entry.next.sq_next = self.start_psn.val();
                self.m_entry.next.sq_una = self.start_psn.val();
                self.m_entry.next.resync = true;
                self.m_entry.next.retry = 0.into();
                self.m_entry.next.waiting = false;
                self.m_entry.next.una_needs_response = false;
                self.m_entry.next.draining = false;
                self.m_entry.next.timer_start = self.s_now.val();
            }
            self.m_qp_reset.next = self.reset.val();
            // A reset or a moved ring invalidates a WQE being fetched.
            self.m_moved.next = (self.s_reg.val() == self.reg_sq_base.val())
                | (self.s_reg.val() == self.reg_sq_size.val())
                | self.reset.val();
        }
    }
}
