//! `LookupCapture`: the registered answer of the per-QP state table for a message's first
//! (or a failed) cell, a child of [`crate::ReceiveQueueEngine`], and the comparisons of
//! that answer with the cell that the decision needs.
//!
//! Follows `docs/nic-architecture.md` ("Reliability", rules 1-2: the QP exists, is enabled
//! and the source is its QP_REMOTE; the PSN against the expected one; "Rejoin support": the
//! resync point) and the [`crate::responder::QpState`] lookup it registers. The per-QP
//! RAMs' clock-to-out (a DP16KD's 4.3 ns on ECP5) leaves room for little more than a
//! register in the clock they answer; so only the PSN distance and three magnitude
//! comparisons (a carry chain each, side by side) and the three equality comparisons with
//! the cell (a LUT tree each, beside the carry chains) are computed before the register,
//! and the decision in the clock after starts from registers.
//!
//! Ports:
//! - `clock`; `capture`: the lookup answers this clock (`QpState`'s `m_lookup` is
//!   valid): register it. Between captures every registered output holds.
//! - The cell (held from the lookup to the decision): `s_outcome` (a
//!   [`CellOutcomeHeader`]), of which `dest_node`, `dest_qp`, `src_node`, `src_qp` (16
//!   each), `psn` (24) and `opcode` (8) are read; `node_id` (16, this NIC's node).
//! - The lookup (`QpState`'s): `s_lookup` (a [`QpLookup`]), of which `expected`,
//!   `rq_ci`, `rs_psn`, `atomic_psn`, `expect_psn` (24), `rq_empty`, `rqe_addr` (32),
//!   `remote` (32), `expect_atomic`, the low 3 bits of `expect_addr`, and the flags
//!   `enabled`, `synced`, `nak_sent`, `atomic_valid`, `expect_valid` are read (below,
//!   `rd_expected` is its `expected`, `rd_rs_psn` its `rs_psn`).
//! - Registered at `capture`: `node_ok` (`dest_node == node_id`), `qp_exists` (`dest_qp <
//!   queue_pairs`), `qp_enabled`, `synced`, `nak_sent`, `rq_empty`, `rq_ci` (24),
//!   `rqe_addr` (32), `behind` (24, `rd_expected - psn` mod 2^24), `behind_rs` (`behind >
//!   rs_back` with `rs_back = rd_expected - rd_rs_psn` mod 2^24: the cell's PSN is further
//!   behind the expected one than the resync point is). `behind_rs` comes from three
//!   unsigned comparisons side by side rather than a comparison of the two differences in
//!   series: with `wa = rd_expected < psn` and `wb = rd_expected < rd_rs_psn`, `behind >
//!   rs_back` = `(wa & !wb) | ((wa == wb) & (rd_rs_psn > psn))` (a difference wraps
//!   exactly when its `w` is set; with both or neither wrapped the two differ by `rd_rs_psn
//!   - psn`; checked exhaustively at 8 bits in `rtl/tests/lookup_capture.rs`).
//! - Registered at `capture` as well, the cell compared with the lookup: `source_match`
//!   (`src_node` and `src_qp` equal `rd_remote`, QP_REMOTE: node bits 15:0, QP 31:16),
//!   `qp_ok` (`qp_exists & qp_enabled & source_match`), `atomic_match` (the saved atomic
//!   is valid and its PSN is `psn`), `expect_match` (the expected response is valid, its
//!   PSN is `psn`, it is an atomic's exactly when `opcode` is ATOMIC_RESPONSE 0x21, and its
//!   local address is 8-aligned).
//!
//! Latency: every output is registered, the clock after `capture` (the engine holds the
//! cell from the lookup to the decision, so the comparisons hold as well). Throughput: a capture every clock. Limits: `queue_pairs` in 1..=64.

use crate::cell::format::opcode;
use crate::common::CellOutcomeHeader;
use crate::responder::qp_state::QpLookup;
use crate::sim::ClockedBlock;
use nic_abi::MAX_QUEUE_PAIRS;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct LookupCapture {
    pub clock: Signal<In, Clock>,
    pub capture: Signal<In, Bit>,
    pub s_outcome: Signal<In, CellOutcomeHeader>,
    pub node_id: Signal<In, Bits<16>>,
    pub s_lookup: Signal<In, QpLookup>,
    pub node_ok: Signal<Out, Bit>,
    pub qp_exists: Signal<Out, Bit>,
    pub qp_enabled: Signal<Out, Bit>,
    pub synced: Signal<Out, Bit>,
    pub nak_sent: Signal<Out, Bit>,
    pub rq_empty: Signal<Out, Bit>,
    pub rq_ci: Signal<Out, Bits<24>>,
    pub rqe_addr: Signal<Out, Bits<32>>,
    pub behind: Signal<Out, Bits<24>>,
    pub behind_rs: Signal<Out, Bit>,
    pub source_match: Signal<Out, Bit>,
    pub qp_ok: Signal<Out, Bit>,
    pub atomic_match: Signal<Out, Bit>,
    pub expect_match: Signal<Out, Bit>,
    node_ok_reg: DFF<Bit>,
    exists_reg: DFF<Bit>,
    enabled_reg: DFF<Bit>,
    synced_reg: DFF<Bit>,
    nak_reg: DFF<Bit>,
    rq_empty_reg: DFF<Bit>,
    rq_ci_reg: DFF<Bits<24>>,
    rqe_addr_reg: DFF<Bits<32>>,
    behind_reg: DFF<Bits<24>>,
    behind_rs_reg: DFF<Bit>,
    source_reg: DFF<Bit>,
    atomic_reg: DFF<Bit>,
    expect_reg: DFF<Bit>,
    source: Signal<Local, Bits<32>>,
    /// `rd_expected - psn` wraps (`rd_expected < psn`).
    psn_wraps: Signal<Local, Bit>,
    /// `rd_expected - rd_rs_psn` wraps (`rd_expected < rd_rs_psn`).
    rs_wraps: Signal<Local, Bit>,
    queue_pairs: Constant<Bits<16>>,
    op_atomic_response: Constant<Bits<8>>,
}

impl LookupCapture {
    /// The capture of a table of `queue_pairs` queue pairs.
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "LookupCapture: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        LookupCapture {
            clock: Default::default(),
            capture: Default::default(),
            s_outcome: Default::default(),
            node_id: Default::default(),
            s_lookup: Default::default(),
            node_ok: Default::default(),
            qp_exists: Default::default(),
            qp_enabled: Default::default(),
            synced: Default::default(),
            nak_sent: Default::default(),
            rq_empty: Default::default(),
            rq_ci: Default::default(),
            rqe_addr: Default::default(),
            behind: Default::default(),
            behind_rs: Default::default(),
            source_match: Default::default(),
            qp_ok: Default::default(),
            atomic_match: Default::default(),
            expect_match: Default::default(),
            node_ok_reg: Default::default(),
            exists_reg: Default::default(),
            enabled_reg: Default::default(),
            synced_reg: Default::default(),
            nak_reg: Default::default(),
            rq_empty_reg: Default::default(),
            rq_ci_reg: Default::default(),
            rqe_addr_reg: Default::default(),
            behind_reg: Default::default(),
            behind_rs_reg: Default::default(),
            source_reg: Default::default(),
            atomic_reg: Default::default(),
            expect_reg: Default::default(),
            source: Default::default(),
            psn_wraps: Default::default(),
            rs_wraps: Default::default(),
            queue_pairs: Constant::new((queue_pairs as u64).to_bits()),
            op_atomic_response: Constant::new((opcode::ATOMIC_RESPONSE as u64).to_bits()),
        }
    }
}

impl Logic for LookupCapture {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            node_ok_reg,
            exists_reg,
            enabled_reg,
            synced_reg,
            nak_reg,
            rq_empty_reg,
            rq_ci_reg,
            rqe_addr_reg,
            behind_reg,
            behind_rs_reg,
            source_reg,
            atomic_reg,
            expect_reg
        );
        self.source.next = bit_cast::<32, 16>(self.s_outcome.val().src_node)
            | (bit_cast::<32, 16>(self.s_outcome.val().src_qp) << 16);
        self.psn_wraps.next = self.s_lookup.val().expected < self.s_outcome.val().psn;
        self.rs_wraps.next = self.s_lookup.val().expected < self.s_lookup.val().rs_psn;
        if self.capture.val() {
            self.node_ok_reg.d.next = self.s_outcome.val().dest_node == self.node_id.val();
            self.exists_reg.d.next = self.s_outcome.val().dest_qp < self.queue_pairs.val();
            self.enabled_reg.d.next = self.s_lookup.val().enabled;
            self.synced_reg.d.next = self.s_lookup.val().synced;
            self.nak_reg.d.next = self.s_lookup.val().nak_sent;
            self.rq_empty_reg.d.next = self.s_lookup.val().rq_empty;
            self.rq_ci_reg.d.next = self.s_lookup.val().rq_ci;
            self.rqe_addr_reg.d.next = self.s_lookup.val().rqe_addr;
            self.behind_reg.d.next = self.s_lookup.val().expected - self.s_outcome.val().psn;
            self.behind_rs_reg.d.next = (self.psn_wraps.val() & !self.rs_wraps.val())
                | ((self.psn_wraps.val() == self.rs_wraps.val())
                    & (self.s_lookup.val().rs_psn > self.s_outcome.val().psn));
            self.source_reg.d.next = self.s_lookup.val().remote == self.source.val();
            self.atomic_reg.d.next = self.s_lookup.val().atomic_valid
                & (self.s_lookup.val().atomic_psn == self.s_outcome.val().psn);
            self.expect_reg.d.next = self.s_lookup.val().expect_valid
                & (self.s_lookup.val().expect_psn == self.s_outcome.val().psn)
                & (self.s_lookup.val().expect_atomic
                    == (self.s_outcome.val().opcode == self.op_atomic_response.val()))
                & (bit_cast::<3, 32>(self.s_lookup.val().expect_addr) == 0);
        }
        self.node_ok.next = self.node_ok_reg.q.val();
        self.qp_exists.next = self.exists_reg.q.val();
        self.qp_enabled.next = self.enabled_reg.q.val();
        self.synced.next = self.synced_reg.q.val();
        self.nak_sent.next = self.nak_reg.q.val();
        self.rq_empty.next = self.rq_empty_reg.q.val();
        self.rq_ci.next = self.rq_ci_reg.q.val();
        self.rqe_addr.next = self.rqe_addr_reg.q.val();
        self.behind.next = self.behind_reg.q.val();
        self.behind_rs.next = self.behind_rs_reg.q.val();
        self.source_match.next = self.source_reg.q.val();
        self.qp_ok.next =
            self.exists_reg.q.val() & self.enabled_reg.q.val() & self.source_reg.q.val();
        self.atomic_match.next = self.atomic_reg.q.val();
        self.expect_match.next = self.expect_reg.q.val();
    }
}

impl ClockedBlock for LookupCapture {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
