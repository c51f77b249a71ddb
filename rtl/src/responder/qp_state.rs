//! `QpState`: the responder's per-queue-pair state table, a child of
//! [`crate::ReceiveQueueEngine`] (the "lookup" stage of the responder). It holds what the
//! responder keeps per queue pair in RAMs and flag vectors, serves the per-QP CSR side port
//! and the expect events, answers the engine's lookups and takes its write-backs.
//!
//! Follows `docs/nic-architecture.md` ("Reliability": the expected PSN, the receive queue,
//! the saved atomic; "Refused PSNs": the refusal window; "Rejoin support": the resync
//! point and `synced`) and the per-QP register map of `docs/csr-map.md` (`nic_abi::csr`).
//!
//! State per queue pair: RQ_BASE (32), RQ_SIZE_LOG2 (5), RQ_PI (24), QP_REMOTE (32: node
//! 15:0, QP 31:16), the receive queue's consumer index `rq_ci` (24), the expected PSN (24),
//! the saved atomic ([`SavedAtomic`], valid bit), the refusal window (24, valid bit), the
//! resync point (24, valid bit), the expected response ([`ExpectedResponse`], valid bit),
//! and the flags enable (QP_CTRL bit 0), `synced`, `nak_sent`. RAMs have one word per queue
//! pair (one read port, one write port each); flags are one bit per queue pair.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: clears every flag and the CSR read in
//!   flight, then sweeps RQ_BASE, RQ_SIZE_LOG2, RQ_PI, QP_REMOTE, `rq_ci` and the expected
//!   PSN to zero for 64 clocks, during which neither the CSR port nor the expect port
//!   takes anything; `sweep_done` is high in the sweep's last clock). Reset steers no
//!   handshake: what a port takes in a reset clock is undone at that edge (the flags
//!   clear, the sweep rewrites the swept RAMs; the other RAMs hold data read only under a
//!   flag).
//! - Per-QP CSR side port `s_csr_valid`, `s_csr_ready`, `s_csr_write`, `s_csr_qp` (6),
//!   `s_csr_reg` (4: the register's offset / 8), `s_csr_wdata` (64); `m_csr_rdata_valid`,
//!   `m_csr_rdata` (64) one clock after the read was accepted. Answers RQ_BASE,
//!   RQ_SIZE_LOG2, RQ_PI, RQ_CI and QP_STATUS (bits 47:24 the expected PSN, bit 48
//!   `synced`), zero for any other register and for a QP at or beyond `queue_pairs`, whose
//!   writes are ignored. Takes RQ_BASE, RQ_SIZE_LOG2, RQ_PI, QP_REMOTE and QP_CTRL: bit 0
//!   enable; bit 1 reset (clears `rq_ci`, RQ_PI, `synced`, `nak_sent`, the refusal window,
//!   the resync point, the saved atomic and the expected response; keeps the expected PSN);
//!   bit 3 resume (the expected PSN and the resync point become bits 31:8, `synced` and the
//!   resync point valid, `nak_sent` and the refusal window cleared). Not ready while `hold`
//!   is high.
//! - Expect events `s_expect_valid`, `s_expect_ready`, `s_expect_qp` (6), `s_expect_psn`
//!   (24), `s_expect_addr` (32), `s_expect_length` (32), `s_expect_atomic`: the response
//!   this NIC's requester awaits on that QP (ignored for a QP at or beyond `queue_pairs`).
//!   Always ready outside the sweep.
//! - Lookup: `lookup`, `lookup_qp` (6): read that QP's RAMs; `hold`: the engine uses the RAM
//!   port this clock (a lookup or a write-back), so the CSR port waits. The clock after a
//!   lookup, `m_lookup` (one [`QpLookup`] bundle) gives the entry: `expected`, `rq_ci`
//!   (24), `rq_empty` (RQ_PI equals `rq_ci`), `rqe_addr` (32: RQ_BASE + 32 x (`rq_ci` mod
//!   2^RQ_SIZE_LOG2), the next receive queue entry), `remote` (32), `refused` (24, zero
//!   unless the window is valid), `rs_psn` (24), `atomic_psn` (24), `atomic_value` (64),
//!   `expect_psn` (24), `expect_atomic`, `expect_addr`, `expect_length` (32);
//!   all zero in a clock that does not follow a lookup, and after a lookup of a QP at or
//!   beyond `queue_pairs` (the RAMs hold no word for it). Without a lookup the RAMs read
//!   `s_csr_qp` (for the CSR port). RAM words start at zero.
//! - The message's queue pair `ctx_qp` (6): its flags, in `m_lookup` as well: `enabled`,
//!   `synced`, `nak_sent`, `rs_valid`, `atomic_valid`, `expect_valid` (as of this clock);
//!   and `ctx_abort`: a CSR reset or resume of `ctx_qp` is taken this clock.
//! - Write-backs to `ctx_qp` (each takes effect at the clock edge), `s_write_back` (a
//!   [`QpWriteBack`]): `state` with `rq_ci`, `expected` (24); `atomic` with
//!   `wr_atomic_psn` (24), `wr_atomic_value` (64) (saved, valid); `refused` with `window`
//!   (24) (valid); `rs_set` with `rs_psn` (24) (valid); `rs_clear`; `synced_set`;
//!   `nak_set`; `nak_clear`; and `expect_clear`. `write_back_busy` (out): one of
//!   `s_write_back`'s flags is set (the engine holds the CSR port with it). Write-backs to
//!   a `ctx_qp` at or beyond `queue_pairs` are
//!   ignored. A CSR write is taken only when `hold` is low, so it never
//!   meets a RAM write-back of the engine (which holds); on the flags a clear by the CSR
//!   and a set by the engine in the same clock leave the bit set.
//!
//! Latency: a lookup answers the next clock; a CSR read answers the clock after it is
//! taken; writes and flag changes are seen from the next clock.
//! Throughput: one CSR access or lookup per clock, one expect event per clock.
//! Limits: `queue_pairs` in 1..=64; flags of queue pairs `>= queue_pairs` stay clear. The
//! RAMs are [`QpRam`]s of `queue_pairs` rounded up to a power of two words, so their block
//! RAMs follow the queue-pair count (4 queue pairs: LUT RAM, no block RAM).

use crate::common::QpRam;
use crate::responder::QpFlags;
use crate::sim::ClockedBlock;
use nic_abi::{csr, MAX_QUEUE_PAIRS};
use rust_hdl::prelude::*;

/// Address bits of a queue pair's number (the RAMs are [`QpRam`]s, as deep as the queue-pair count).
pub const QP_ADDRESS_BITS: usize = crate::common::qp_ram::QP_RAM_ADDRESS_BITS;

/// The saved result of the last atomic a queue pair executed: its PSN and the word it read
/// (returned again for a duplicate of that PSN).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct SavedAtomic {
    pub psn: Bits<24>,
    pub value: Bits<64>,
}

/// The response a queue pair's requester awaits (the expect event): its PSN, whether it
/// is an atomic's, and the local buffer it is written to.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct ExpectedResponse {
    pub psn: Bits<24>,
    pub atomic: Bit,
    pub addr: Bits<32>,
    pub length: Bits<32>,
}

/// The engine's write-backs to its message's queue pair in one clock (`s_write_back`),
/// which the engine registers for a clock before they reach the RAMs: each flag enables
/// its write. The saved atomic's PSN and value are the engine's registers
/// (`wr_atomic_psn`, `wr_atomic_value`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct QpWriteBack {
    pub state: Bit,
    pub rq_ci: Bits<24>,
    pub expected: Bits<24>,
    pub atomic: Bit,
    pub refused: Bit,
    pub window: Bits<24>,
    pub rs_set: Bit,
    pub rs_psn: Bits<24>,
    pub rs_clear: Bit,
    pub synced_set: Bit,
    pub nak_set: Bit,
    pub nak_clear: Bit,
}

impl From<Bits<{ <QpWriteBack as Synth>::BITS }>> for QpWriteBack {
    fn from(b: Bits<{ <QpWriteBack as Synth>::BITS }>) -> Self {
        let at = QpWriteBack::default();
        QpWriteBack {
            state: b.get_bit(at.get_my_offset_state()),
            rq_ci: b.get_bits::<24>(at.get_my_offset_rq_ci()),
            expected: b.get_bits::<24>(at.get_my_offset_expected()),
            atomic: b.get_bit(at.get_my_offset_atomic()),
            refused: b.get_bit(at.get_my_offset_refused()),
            window: b.get_bits::<24>(at.get_my_offset_window()),
            rs_set: b.get_bit(at.get_my_offset_rs_set()),
            rs_psn: b.get_bits::<24>(at.get_my_offset_rs_psn()),
            rs_clear: b.get_bit(at.get_my_offset_rs_clear()),
            synced_set: b.get_bit(at.get_my_offset_synced_set()),
            nak_set: b.get_bit(at.get_my_offset_nak_set()),
            nak_clear: b.get_bit(at.get_my_offset_nak_clear()),
        }
    }
}

/// The table's answer (`m_lookup`): the looked-up queue pair's entry, the clock after
/// `lookup` (zero otherwise), and the flags of the message's queue pair `ctx_qp`. Fields
/// as the port list names them (`rd_*` without the prefix, `ctx_*` flags without theirs).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct QpLookup {
    pub expected: Bits<24>,
    pub rq_ci: Bits<24>,
    pub rq_empty: Bit,
    pub rqe_addr: Bits<32>,
    pub remote: Bits<32>,
    pub refused: Bits<24>,
    pub rs_psn: Bits<24>,
    pub atomic_psn: Bits<24>,
    pub atomic_value: Bits<64>,
    pub expect_psn: Bits<24>,
    pub expect_atomic: Bit,
    pub expect_addr: Bits<32>,
    pub expect_length: Bits<32>,
    pub enabled: Bit,
    pub synced: Bit,
    pub nak_sent: Bit,
    pub rs_valid: Bit,
    pub atomic_valid: Bit,
    pub expect_valid: Bit,
}

impl From<Bits<{ <QpLookup as Synth>::BITS }>> for QpLookup {
    fn from(b: Bits<{ <QpLookup as Synth>::BITS }>) -> Self {
        let at = QpLookup::default();
        QpLookup {
            expected: b.get_bits::<24>(at.get_my_offset_expected()),
            rq_ci: b.get_bits::<24>(at.get_my_offset_rq_ci()),
            rq_empty: b.get_bit(at.get_my_offset_rq_empty()),
            rqe_addr: b.get_bits::<32>(at.get_my_offset_rqe_addr()),
            remote: b.get_bits::<32>(at.get_my_offset_remote()),
            refused: b.get_bits::<24>(at.get_my_offset_refused()),
            rs_psn: b.get_bits::<24>(at.get_my_offset_rs_psn()),
            atomic_psn: b.get_bits::<24>(at.get_my_offset_atomic_psn()),
            atomic_value: b.get_bits::<64>(at.get_my_offset_atomic_value()),
            expect_psn: b.get_bits::<24>(at.get_my_offset_expect_psn()),
            expect_atomic: b.get_bit(at.get_my_offset_expect_atomic()),
            expect_addr: b.get_bits::<32>(at.get_my_offset_expect_addr()),
            expect_length: b.get_bits::<32>(at.get_my_offset_expect_length()),
            enabled: b.get_bit(at.get_my_offset_enabled()),
            synced: b.get_bit(at.get_my_offset_synced()),
            nak_sent: b.get_bit(at.get_my_offset_nak_sent()),
            rs_valid: b.get_bit(at.get_my_offset_rs_valid()),
            atomic_valid: b.get_bit(at.get_my_offset_atomic_valid()),
            expect_valid: b.get_bit(at.get_my_offset_expect_valid()),
        }
    }
}

#[derive(LogicBlock)]
pub struct QpState {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_csr_valid: Signal<In, Bit>,
    pub s_csr_ready: Signal<Out, Bit>,
    pub s_csr_write: Signal<In, Bit>,
    pub s_csr_qp: Signal<In, Bits<6>>,
    pub s_csr_reg: Signal<In, Bits<4>>,
    pub s_csr_wdata: Signal<In, Bits<64>>,
    pub m_csr_rdata_valid: Signal<Out, Bit>,
    pub m_csr_rdata: Signal<Out, Bits<64>>,
    pub s_expect_valid: Signal<In, Bit>,
    pub s_expect_ready: Signal<Out, Bit>,
    pub s_expect_qp: Signal<In, Bits<6>>,
    pub s_expect_psn: Signal<In, Bits<24>>,
    pub s_expect_addr: Signal<In, Bits<32>>,
    pub s_expect_length: Signal<In, Bits<32>>,
    pub s_expect_atomic: Signal<In, Bit>,
    pub lookup: Signal<In, Bit>,
    pub lookup_qp: Signal<In, Bits<6>>,
    pub hold: Signal<In, Bit>,
    pub ctx_qp: Signal<In, Bits<6>>,
    pub sweep_done: Signal<Out, Bit>,
    pub m_lookup: Signal<Out, QpLookup>,
    pub ctx_abort: Signal<Out, Bit>,
    pub s_write_back: Signal<In, QpWriteBack>,
    pub write_back_busy: Signal<Out, Bit>,
    pub wr_atomic_psn: Signal<In, Bits<24>>,
    pub wr_atomic_value: Signal<In, Bits<64>>,
    pub expect_clear: Signal<In, Bit>,
    // ---- The reset sweep ----
    /// Set once the sweep after reset is over (0 at power-on: the sweep runs then too).
    swept: DFF<Bit>,
    sweep: DFF<Bits<6>>,
    /// Last clock was a lookup: `rd_*` answer it (zero otherwise, so that no RAM word an
    /// event-driven simulator holds as unknown before its first write leaves the block).
    answer: DFF<Bit>,
    // ---- CSR read in flight ----
    csr_rd_pending: DFF<Bit>,
    csr_rd_reg: DFF<Bits<4>>,
    csr_rd_qp: DFF<Bits<6>>,
    csr_rd_ok: DFF<Bit>,
    /// The per-QP flags, one bit per QP.
    flags: QpFlags,
    // ---- Per-QP RAMs ----
    rq_base_ram: QpRam<Bits<32>>,
    rq_log2_ram: QpRam<Bits<5>>,
    rq_pi_ram: QpRam<Bits<24>>,
    remote_ram: QpRam<Bits<32>>,
    rq_ci_ram: QpRam<Bits<24>>,
    /// The expected PSN: a QP reset does not write it (it stays readable in QP_STATUS), a
    /// resume does.
    expected_ram: QpRam<Bits<24>>,
    /// The refusal window (valid: `refused_bits`).
    refused_ram: QpRam<Bits<24>>,
    /// The PSN the QP last resynced at (valid: `rs_bits`).
    rs_ram: QpRam<Bits<24>>,
    atomic_ram: QpRam<SavedAtomic>,
    expect_ram: QpRam<ExpectedResponse>,
    // ---- Combinational intermediates ----
    rd_addr: Signal<Local, Bits<6>>,
    /// `rd_refused` and `m_csr_rdata` before they leave (an output is assigned once, so
    /// that an event-driven simulator sees no glitch on it).
    refused_out: Signal<Local, Bits<24>>,
    /// All ones while `answer`, else zero.
    answer24: Signal<Local, Bits<24>>,
    answer32: Signal<Local, Bits<32>>,
    answer64: Signal<Local, Bits<64>>,
    csr_rdata: Signal<Local, Bits<64>>,
    ring_mask: Signal<Local, Bits<32>>,
    csr_open: Signal<Local, Bit>,
    csr_in_range: Signal<Local, Bit>,
    /// `lookup_qp` / `ctx_qp` is below `queue_pairs` (the RAMs hold no other QP's word).
    lookup_in_range: Signal<Local, Bit>,
    ctx_in_range: Signal<Local, Bit>,
    csr_take: Signal<Local, Bit>,
    csr_write_ok: Signal<Local, Bit>,
    /// A write of QP_CTRL is taken.
    ctrl_write: Signal<Local, Bit>,
    csr_reset: Signal<Local, Bit>,
    csr_resume: Signal<Local, Bit>,
    csr_resume_psn: Signal<Local, Bits<24>>,
    csr_status: Signal<Local, Bits<64>>,
    expect_take: Signal<Local, Bit>,
    // ---- Parameters ----
    /// Bit q set for every QP below `queue_pairs`: "QP q exists" is one bit select (a
    /// six-input function), not a compare with a carry chain.
    qp_exists: Constant<Bits<64>>,
    reg_rq_base: Constant<Bits<4>>,
    reg_rq_size_log2: Constant<Bits<4>>,
    reg_rq_pi: Constant<Bits<4>>,
    reg_rq_ci: Constant<Bits<4>>,
    reg_qp_remote: Constant<Bits<4>>,
    reg_qp_ctrl: Constant<Bits<4>>,
    reg_qp_status: Constant<Bits<4>>,
    ctrl_enable: Constant<Bits<6>>,
    ctrl_reset: Constant<Bits<6>>,
    ctrl_resume: Constant<Bits<6>>,
}

/// The `reg` number of a per-QP register on the CSR side port.
const fn reg(offset: u16) -> u64 {
    (offset / 8) as u64
}

/// The bit number of a single-bit mask.
const fn bit_of(mask: u64) -> u64 {
    mask.trailing_zeros() as u64
}

impl QpState {
    /// The state table of `queue_pairs` queue pairs.
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "QpState: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        QpState {
            clock: Default::default(),
            reset: Default::default(),
            s_csr_valid: Default::default(),
            s_csr_ready: Default::default(),
            s_csr_write: Default::default(),
            s_csr_qp: Default::default(),
            s_csr_reg: Default::default(),
            s_csr_wdata: Default::default(),
            m_csr_rdata_valid: Default::default(),
            m_csr_rdata: Default::default(),
            s_expect_valid: Default::default(),
            s_expect_ready: Default::default(),
            s_expect_qp: Default::default(),
            s_expect_psn: Default::default(),
            s_expect_addr: Default::default(),
            s_expect_length: Default::default(),
            s_expect_atomic: Default::default(),
            lookup: Default::default(),
            lookup_qp: Default::default(),
            hold: Default::default(),
            ctx_qp: Default::default(),
            sweep_done: Default::default(),
            m_lookup: Default::default(),
            ctx_abort: Default::default(),
            s_write_back: Default::default(),
            write_back_busy: Default::default(),
            wr_atomic_psn: Default::default(),
            wr_atomic_value: Default::default(),
            expect_clear: Default::default(),
            swept: Default::default(),
            sweep: Default::default(),
            answer: Default::default(),
            csr_rd_pending: Default::default(),
            csr_rd_reg: Default::default(),
            csr_rd_qp: Default::default(),
            csr_rd_ok: Default::default(),
            rq_base_ram: QpRam::new(queue_pairs),
            rq_log2_ram: QpRam::new(queue_pairs),
            rq_pi_ram: QpRam::new(queue_pairs),
            remote_ram: QpRam::new(queue_pairs),
            rq_ci_ram: QpRam::new(queue_pairs),
            expected_ram: QpRam::new(queue_pairs),
            refused_ram: QpRam::new(queue_pairs),
            rs_ram: QpRam::new(queue_pairs),
            atomic_ram: QpRam::new(queue_pairs),
            expect_ram: QpRam::new(queue_pairs),
            rd_addr: Default::default(),
            refused_out: Default::default(),
            answer24: Default::default(),
            answer32: Default::default(),
            answer64: Default::default(),
            csr_rdata: Default::default(),
            ring_mask: Default::default(),
            ctrl_write: Default::default(),
            csr_open: Default::default(),
            csr_in_range: Default::default(),
            lookup_in_range: Default::default(),
            ctx_in_range: Default::default(),
            csr_take: Default::default(),
            csr_write_ok: Default::default(),
            csr_reset: Default::default(),
            csr_resume: Default::default(),
            csr_resume_psn: Default::default(),
            csr_status: Default::default(),
            expect_take: Default::default(),
            flags: QpFlags::new(queue_pairs),
            qp_exists: Constant::new(
                (if queue_pairs == 64 {
                    u64::MAX
                } else {
                    (1u64 << queue_pairs) - 1
                })
                .to_bits(),
            ),
            reg_rq_base: Constant::new(reg(csr::QP_RQ_BASE).to_bits()),
            reg_rq_size_log2: Constant::new(reg(csr::QP_RQ_SIZE_LOG2).to_bits()),
            reg_rq_pi: Constant::new(reg(csr::QP_RQ_PI).to_bits()),
            reg_rq_ci: Constant::new(reg(csr::QP_RQ_CI).to_bits()),
            reg_qp_remote: Constant::new(reg(csr::QP_REMOTE).to_bits()),
            reg_qp_ctrl: Constant::new(reg(csr::QP_CTRL).to_bits()),
            reg_qp_status: Constant::new(reg(csr::QP_STATUS).to_bits()),
            ctrl_enable: Constant::new(bit_of(csr::QP_CTRL_ENABLE).to_bits()),
            ctrl_reset: Constant::new(bit_of(csr::QP_CTRL_RESET).to_bits()),
            ctrl_resume: Constant::new(bit_of(csr::QP_CTRL_RESUME).to_bits()),
        }
    }
}

impl Logic for QpState {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            swept,
            sweep,
            answer,
            csr_rd_pending,
            csr_rd_reg,
            csr_rd_qp,
            csr_rd_ok
        );
        self.rq_base_ram.clock.next = self.clock.val();
        self.rq_log2_ram.clock.next = self.clock.val();
        self.rq_pi_ram.clock.next = self.clock.val();
        self.remote_ram.clock.next = self.clock.val();
        self.rq_ci_ram.clock.next = self.clock.val();
        self.expected_ram.clock.next = self.clock.val();
        self.refused_ram.clock.next = self.clock.val();
        self.rs_ram.clock.next = self.clock.val();
        self.atomic_ram.clock.next = self.clock.val();
        self.expect_ram.clock.next = self.clock.val();

        // ---- The reset sweep ----
        self.sweep_done.next = !self.swept.q.val() & (self.sweep.q.val() == 63);
        if !self.swept.q.val() {
            self.sweep.d.next = self.sweep.q.val() + 1;
            if self.sweep.q.val() == 63 {
                self.swept.d.next = true;
            }
        }

        // ---- The entry read (the RAMs read `rd_addr` at the clock edge) ----
        self.rd_addr.next = self.s_csr_qp.val();
        if self.lookup.val() {
            self.rd_addr.next = self.lookup_qp.val();
        }
        self.lookup_in_range.next = self.qp_exists.val().get_bit(self.lookup_qp.val().index());
        self.ctx_in_range.next = self.qp_exists.val().get_bit(self.ctx_qp.val().index());
        self.answer.d.next = self.lookup.val() & self.lookup_in_range.val();
        self.answer24.next = 0.into();
        self.answer32.next = 0.into();
        self.answer64.next = 0.into();
        if self.answer.q.val() {
            self.answer24.next = !bits::<24>(0);
            self.answer32.next = !bits::<32>(0);
            self.answer64.next = !bits::<64>(0);
        }
        self.m_lookup.next.expected = self.expected_ram.read_data.val() & self.answer24.val();
        self.m_lookup.next.rq_ci = self.rq_ci_ram.read_data.val() & self.answer24.val();
        self.m_lookup.next.rq_empty = (self.rq_pi_ram.read_data.val()
            == self.rq_ci_ram.read_data.val())
            & self.answer.q.val();
        self.ring_mask.next = (bits::<32>(1) << self.rq_log2_ram.read_data.val()) - 1;
        self.m_lookup.next.rqe_addr = (self.rq_base_ram.read_data.val()
            + ((bit_cast::<32, 24>(self.rq_ci_ram.read_data.val()) & self.ring_mask.val()) << 5))
            & self.answer32.val();
        self.m_lookup.next.remote = self.remote_ram.read_data.val() & self.answer32.val();
        self.refused_out.next = 0.into();
        if self.flags.ctx_refused.val() {
            self.refused_out.next = self.refused_ram.read_data.val();
        }
        self.m_lookup.next.refused = self.refused_out.val() & self.answer24.val();
        self.m_lookup.next.rs_psn = self.rs_ram.read_data.val() & self.answer24.val();
        self.m_lookup.next.atomic_psn = self.atomic_ram.read_data.val().psn & self.answer24.val();
        self.m_lookup.next.atomic_value =
            self.atomic_ram.read_data.val().value & self.answer64.val();
        self.m_lookup.next.expect_psn = self.expect_ram.read_data.val().psn & self.answer24.val();
        self.m_lookup.next.expect_atomic =
            self.expect_ram.read_data.val().atomic & self.answer.q.val();
        self.m_lookup.next.expect_addr = self.expect_ram.read_data.val().addr & self.answer32.val();
        self.m_lookup.next.expect_length =
            self.expect_ram.read_data.val().length & self.answer32.val();
        self.m_lookup.next.enabled = self.flags.ctx_enabled.val();
        self.m_lookup.next.synced = self.flags.ctx_synced.val();
        self.m_lookup.next.nak_sent = self.flags.ctx_nak_sent.val();
        self.m_lookup.next.rs_valid = self.flags.ctx_rs_valid.val();
        self.m_lookup.next.atomic_valid = self.flags.ctx_atomic_valid.val();
        self.m_lookup.next.expect_valid = self.flags.ctx_expect_valid.val();

        // ---- CSR side port ----
        self.csr_open.next = !self.hold.val() & self.swept.q.val();
        self.csr_in_range.next = self.qp_exists.val().get_bit(self.s_csr_qp.val().index());
        self.s_csr_ready.next = self.csr_open.val();
        self.csr_take.next = self.s_csr_valid.val() & self.csr_open.val();
        self.csr_write_ok.next =
            self.csr_take.val() & self.s_csr_write.val() & self.csr_in_range.val();
        self.ctrl_write.next =
            self.csr_write_ok.val() & (self.s_csr_reg.val() == self.reg_qp_ctrl.val());
        self.csr_reset.next = self.ctrl_write.val()
            & self
                .s_csr_wdata
                .val()
                .get_bit(self.ctrl_reset.val().index());
        self.csr_resume.next = self.ctrl_write.val()
            & self
                .s_csr_wdata
                .val()
                .get_bit(self.ctrl_resume.val().index());
        self.csr_resume_psn.next = self.s_csr_wdata.val().get_bits::<24>(8);
        self.ctx_abort.next = (self.csr_reset.val() | self.csr_resume.val())
            & (self.s_csr_qp.val() == self.ctx_qp.val());
        self.csr_rd_pending.d.next = self.csr_take.val() & !self.s_csr_write.val();
        self.csr_rd_reg.d.next = self.s_csr_reg.val();
        self.csr_rd_qp.d.next = self.s_csr_qp.val();
        self.csr_rd_ok.d.next = self.csr_in_range.val();
        self.csr_status.next = bit_cast::<64, 24>(self.expected_ram.read_data.val()) << 24;
        if self.flags.status_synced.val() {
            self.csr_status.next = (bit_cast::<64, 24>(self.expected_ram.read_data.val()) << 24)
                | (bits::<64>(1) << 48);
        }
        self.m_csr_rdata_valid.next = self.csr_rd_pending.q.val();
        self.csr_rdata.next = 0.into();
        if self.csr_rd_ok.q.val() {
            if self.csr_rd_reg.q.val() == self.reg_rq_base.val() {
                self.csr_rdata.next = bit_cast::<64, 32>(self.rq_base_ram.read_data.val());
            }
            if self.csr_rd_reg.q.val() == self.reg_rq_size_log2.val() {
                self.csr_rdata.next = bit_cast::<64, 5>(self.rq_log2_ram.read_data.val());
            }
            if self.csr_rd_reg.q.val() == self.reg_rq_pi.val() {
                self.csr_rdata.next = bit_cast::<64, 24>(self.rq_pi_ram.read_data.val());
            }
            if self.csr_rd_reg.q.val() == self.reg_rq_ci.val() {
                self.csr_rdata.next = bit_cast::<64, 24>(self.rq_ci_ram.read_data.val());
            }
            if self.csr_rd_reg.q.val() == self.reg_qp_status.val() {
                self.csr_rdata.next = self.csr_status.val();
            }
        }
        self.m_csr_rdata.next = self.csr_rdata.val();

        // ---- Expect events ----
        self.s_expect_ready.next = self.swept.q.val();
        self.expect_take.next = self.s_expect_valid.val()
            & self.swept.q.val()
            & (self.qp_exists.val().get_bit(self.s_expect_qp.val().index()));

        // ---- RAM ports ----
        self.rq_base_ram.read_address.next = self.rd_addr.val();
        self.rq_log2_ram.read_address.next = self.rd_addr.val();
        self.rq_pi_ram.read_address.next = self.rd_addr.val();
        self.remote_ram.read_address.next = self.rd_addr.val();
        self.rq_ci_ram.read_address.next = self.rd_addr.val();
        self.expected_ram.read_address.next = self.rd_addr.val();
        self.refused_ram.read_address.next = self.rd_addr.val();
        self.rs_ram.read_address.next = self.rd_addr.val();
        self.atomic_ram.read_address.next = self.rd_addr.val();
        self.expect_ram.read_address.next = self.rd_addr.val();
        self.refused_ram.write_address.next = self.ctx_qp.val();
        self.refused_ram.write_data.next = self.s_write_back.val().window;
        self.refused_ram.write_enable.next =
            self.s_write_back.val().refused & self.ctx_in_range.val();
        self.rs_ram.write_address.next = self.ctx_qp.val();
        self.rs_ram.write_data.next = self.s_write_back.val().rs_psn;
        self.rs_ram.write_enable.next = self.s_write_back.val().rs_set & self.ctx_in_range.val();
        if self.csr_resume.val() {
            self.rs_ram.write_address.next = self.s_csr_qp.val();
            self.rs_ram.write_data.next = self.csr_resume_psn.val();
            self.rs_ram.write_enable.next = true;
        }
        self.rq_base_ram.write_address.next = self.s_csr_qp.val();
        self.rq_base_ram.write_data.next = self.s_csr_wdata.val().get_bits::<32>(0);
        self.rq_base_ram.write_enable.next =
            self.csr_write_ok.val() & (self.s_csr_reg.val() == self.reg_rq_base.val());
        self.rq_log2_ram.write_address.next = self.s_csr_qp.val();
        self.rq_log2_ram.write_data.next = self.s_csr_wdata.val().get_bits::<5>(0);
        self.rq_log2_ram.write_enable.next =
            self.csr_write_ok.val() & (self.s_csr_reg.val() == self.reg_rq_size_log2.val());
        self.rq_pi_ram.write_address.next = self.s_csr_qp.val();
        self.rq_pi_ram.write_data.next = 0.into();
        if self.s_csr_reg.val() == self.reg_rq_pi.val() {
            self.rq_pi_ram.write_data.next = self.s_csr_wdata.val().get_bits::<24>(0);
        }
        self.rq_pi_ram.write_enable.next = (self.csr_write_ok.val()
            & (self.s_csr_reg.val() == self.reg_rq_pi.val()))
            | self.csr_reset.val();
        self.remote_ram.write_address.next = self.s_csr_qp.val();
        self.remote_ram.write_data.next = self.s_csr_wdata.val().get_bits::<32>(0);
        self.remote_ram.write_enable.next =
            self.csr_write_ok.val() & (self.s_csr_reg.val() == self.reg_qp_remote.val());
        self.rq_ci_ram.write_address.next = self.ctx_qp.val();
        self.rq_ci_ram.write_data.next = self.s_write_back.val().rq_ci;
        self.rq_ci_ram.write_enable.next = self.s_write_back.val().state & self.ctx_in_range.val();
        self.expected_ram.write_address.next = self.ctx_qp.val();
        self.expected_ram.write_data.next = self.s_write_back.val().expected;
        self.expected_ram.write_enable.next =
            self.s_write_back.val().state & self.ctx_in_range.val();
        // CSR writes never meet a state write-back (the engine holds the port for it).
        if self.csr_reset.val() {
            self.rq_ci_ram.write_address.next = self.s_csr_qp.val();
            self.rq_ci_ram.write_data.next = 0.into();
            self.rq_ci_ram.write_enable.next = true;
        }
        if self.csr_resume.val() {
            self.expected_ram.write_address.next = self.s_csr_qp.val();
            self.expected_ram.write_data.next = self.csr_resume_psn.val();
            self.expected_ram.write_enable.next = true;
        }
        if !self.swept.q.val() {
            self.rq_base_ram.write_address.next = self.sweep.q.val();
            self.rq_base_ram.write_data.next = 0.into();
            self.rq_base_ram.write_enable.next = true;
            self.rq_log2_ram.write_address.next = self.sweep.q.val();
            self.rq_log2_ram.write_data.next = 0.into();
            self.rq_log2_ram.write_enable.next = true;
            self.rq_pi_ram.write_address.next = self.sweep.q.val();
            self.rq_pi_ram.write_data.next = 0.into();
            self.rq_pi_ram.write_enable.next = true;
            self.remote_ram.write_address.next = self.sweep.q.val();
            self.remote_ram.write_data.next = 0.into();
            self.remote_ram.write_enable.next = true;
            self.rq_ci_ram.write_address.next = self.sweep.q.val();
            self.rq_ci_ram.write_data.next = 0.into();
            self.rq_ci_ram.write_enable.next = true;
            self.expected_ram.write_address.next = self.sweep.q.val();
            self.expected_ram.write_data.next = 0.into();
            self.expected_ram.write_enable.next = true;
        }
        self.atomic_ram.write_address.next = self.ctx_qp.val();
        self.atomic_ram.write_data.next.psn = self.wr_atomic_psn.val();
        self.atomic_ram.write_data.next.value = self.wr_atomic_value.val();
        self.atomic_ram.write_enable.next =
            self.s_write_back.val().atomic & self.ctx_in_range.val();
        self.expect_ram.write_address.next = self.s_expect_qp.val();
        self.expect_ram.write_data.next.psn = self.s_expect_psn.val();
        self.expect_ram.write_data.next.atomic = self.s_expect_atomic.val();
        self.expect_ram.write_data.next.addr = self.s_expect_addr.val();
        self.expect_ram.write_data.next.length = self.s_expect_length.val();
        self.expect_ram.write_enable.next = self.expect_take.val();

        // ---- Per-QP flags ----
        self.flags.clock.next = self.clock.val();
        self.flags.reset.next = self.reset.val();
        self.flags.csr_qp.next = self.s_csr_qp.val();
        self.flags.ctrl_write.next = self.ctrl_write.val();
        self.flags.ctrl_enable.next = self
            .s_csr_wdata
            .val()
            .get_bit(self.ctrl_enable.val().index());
        self.flags.qp_reset.next = self.csr_reset.val();
        self.flags.qp_resume.next = self.csr_resume.val();
        self.flags.ctx_qp.next = self.ctx_qp.val();
        self.flags.synced_set.next = self.s_write_back.val().synced_set;
        self.flags.nak_set.next = self.s_write_back.val().nak_set;
        self.flags.nak_clear.next = self.s_write_back.val().nak_clear;
        self.flags.refused_set.next = self.s_write_back.val().refused;
        self.flags.rs_set.next = self.s_write_back.val().rs_set;
        self.flags.rs_clear.next = self.s_write_back.val().rs_clear;
        self.flags.atomic_set.next = self.s_write_back.val().atomic;
        self.write_back_busy.next = self.s_write_back.val().state
            | self.s_write_back.val().atomic
            | self.s_write_back.val().refused
            | self.s_write_back.val().rs_set
            | self.s_write_back.val().rs_clear
            | self.s_write_back.val().synced_set
            | self.s_write_back.val().nak_set
            | self.s_write_back.val().nak_clear;
        self.flags.expect_clear.next = self.expect_clear.val();
        self.flags.expect_qp.next = self.s_expect_qp.val();
        self.flags.expect_set.next = self.expect_take.val();
        self.flags.status_qp.next = self.csr_rd_qp.q.val();

        // ---- Synchronous reset ----
        if self.reset.val() {
            self.swept.d.next = false;
            self.sweep.d.next = 0.into();
            self.csr_rd_pending.d.next = false;
        }
    }
}

impl ClockedBlock for QpState {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
