//! The reference model of `LookupCapture` (`rtl/src/responder/lookup_capture.rs`), written
//! from its documentation: the per-QP table's answer and its comparisons with the cell,
//! registered at `capture`.

use nic_abi::PSN_MASK;

/// The opcode of an atomic's response (`ATOMIC_RESPONSE`).
const ATOMIC_RESPONSE: u8 = 0x21;

/// What the capture is given in one clock: the cell and the table's answer.
#[derive(Clone, Copy, Debug, Default)]
pub struct LookupCaptureInputs {
    pub capture: bool,
    pub dest_node: u16,
    pub dest_qp: u16,
    pub src_node: u16,
    pub src_qp: u16,
    pub psn: u32,
    pub opcode: u8,
    pub node_id: u16,
    pub rd_expected: u32,
    pub rd_rq_ci: u32,
    pub rd_rs_psn: u32,
    pub rd_atomic_psn: u32,
    pub rd_expect_psn: u32,
    pub rd_rq_empty: bool,
    pub rd_rqe_addr: u32,
    pub rd_remote: u32,
    pub rd_expect_atomic: bool,
    pub rd_expect_addr_low: u8,
    pub ctx_enabled: bool,
    pub ctx_synced: bool,
    pub ctx_nak_sent: bool,
    pub ctx_atomic_valid: bool,
    pub ctx_expect_valid: bool,
}

/// What the capture shows in one clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LookupCaptureOutputs {
    pub node_ok: bool,
    pub qp_exists: bool,
    pub qp_enabled: bool,
    pub synced: bool,
    pub nak_sent: bool,
    pub rq_empty: bool,
    pub rq_ci: u32,
    pub rqe_addr: u32,
    pub behind: u32,
    /// `behind > rs_back`, `rs_back` = `rd_expected - rd_rs_psn` mod 2^24.
    pub behind_rs: bool,
    pub source_match: bool,
    pub qp_ok: bool,
    pub atomic_match: bool,
    pub expect_match: bool,
}

/// What was captured (all zero at power-on).
#[derive(Clone, Copy, Debug, Default)]
struct Captured {
    node_ok: bool,
    qp_exists: bool,
    qp_enabled: bool,
    synced: bool,
    nak_sent: bool,
    rq_empty: bool,
    rq_ci: u32,
    rqe_addr: u32,
    behind: u32,
    behind_rs: bool,
    source_match: bool,
    atomic_match: bool,
    expect_match: bool,
}

/// `LookupCapture` of a table of `queue_pairs` queue pairs, clock by clock.
#[derive(Clone, Debug)]
pub struct LookupCaptureModel {
    queue_pairs: u16,
    c: Captured,
}

impl LookupCaptureModel {
    pub fn new(queue_pairs: usize) -> Self {
        Self {
            queue_pairs: queue_pairs as u16,
            c: Captured::default(),
        }
    }

    /// This clock's outputs for `i` (before the clock edge).
    pub fn outputs(&self, _i: &LookupCaptureInputs) -> LookupCaptureOutputs {
        let c = &self.c;
        LookupCaptureOutputs {
            node_ok: c.node_ok,
            qp_exists: c.qp_exists,
            qp_enabled: c.qp_enabled,
            synced: c.synced,
            nak_sent: c.nak_sent,
            rq_empty: c.rq_empty,
            rq_ci: c.rq_ci,
            rqe_addr: c.rqe_addr,
            behind: c.behind,
            behind_rs: c.behind_rs,
            source_match: c.source_match,
            qp_ok: c.qp_exists && c.qp_enabled && c.source_match,
            atomic_match: c.atomic_match,
            expect_match: c.expect_match,
        }
    }

    /// The clock edge.
    pub fn clock(&mut self, i: &LookupCaptureInputs) {
        if !i.capture {
            return;
        }
        self.c = Captured {
            node_ok: i.dest_node == i.node_id,
            qp_exists: i.dest_qp < self.queue_pairs,
            qp_enabled: i.ctx_enabled,
            synced: i.ctx_synced,
            nak_sent: i.ctx_nak_sent,
            rq_empty: i.rd_rq_empty,
            rq_ci: i.rd_rq_ci,
            rqe_addr: i.rd_rqe_addr,
            behind: i.rd_expected.wrapping_sub(i.psn) & PSN_MASK,
            behind_rs: i.rd_expected.wrapping_sub(i.psn) & PSN_MASK
                > i.rd_expected.wrapping_sub(i.rd_rs_psn) & PSN_MASK,
            source_match: i.rd_remote == (i.src_node as u32 | (i.src_qp as u32) << 16),
            atomic_match: i.ctx_atomic_valid && i.rd_atomic_psn == i.psn,
            expect_match: i.ctx_expect_valid
                && i.rd_expect_psn == i.psn
                && i.rd_expect_atomic == (i.opcode == ATOMIC_RESPONSE)
                && i.rd_expect_addr_low & 7 == 0,
        };
    }
}
