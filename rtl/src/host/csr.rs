//! `NicCsr`: the NIC's CSR port: global registers and counters, and the forwarding of
//! per-queue-pair and TPT accesses to the blocks that own them.
//!
//! Follows `docs/csr-map.md` (offsets, access, reset values, side effects; the offsets are
//! `nic_abi::csr`) and the "Per-QP CSR side port", "TPT CSR side port" and "NicCsr
//! outputs" bundles of `docs/nic-blocks.md`.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: every register to its reset value, the
//!   access in progress is dropped). Reset gates the host's handshake (`csr_ready` low
//!   while it is high) but none with the engines, which share the reset in `NicTop`: an
//!   access an engine takes in a reset clock is dropped at that edge.
//! - CSR port: `csr_valid` / `csr_ready`, `csr_write`, `csr_addr` (16, byte address),
//!   `csr_wdata` (64); `csr_rdata_valid`, `csr_rdata` (64): one response per accepted
//!   read, in order. `csr_rdata` carries the response only in the clock `csr_rdata_valid`
//!   is high; it may change in other clocks.
//! - Configuration out (registered): `cfg_node_id` (16), `cfg_enable_send_recv`,
//!   `cfg_enable_rdma`, `cfg_cq_base` (32), `cfg_cq_size_log2` (5), `cfg_cq_ci` (32),
//!   `cfg_cq_restart` (one-clock pulse after a `CQ_BASE` write), `cfg_retry_timeout` (32),
//!   `cfg_retry_limit` (4).
//! - Status in (read through `CQ_PI` and the counters): `cq_pi` (32),
//!   `stat_nack_sent_0`..`_7`, `stat_nack_received_0`..`_7`, `stat_requests_sent`,
//!   `stat_responses_sent` (their wrapping sum is `STAT_MESSAGES_SENT`),
//!   `stat_messages_received`, `stat_retransmissions`, `stat_dropped`,
//!   `stat_cells_failed` (32 each).
//! - Per-QP side ports `m_sq_csr_*` (to `SendQueueEngine`) and `m_rq_csr_*` (to
//!   `ReceiveQueueEngine`): `valid` / `ready`, `write`, `qp` (6), `reg` (4), `wdata` (64)
//!   out; `rdata_valid`, `rdata` (64) in.
//! - TPT side port `m_tpt_csr_*`: `valid` / `ready`, `write`, `reg` (6), `wdata` (64) out;
//!   `rdata_valid`, `rdata` (64) in. Used only when the NIC has a TPT.
//!
//! Decoding (bits 2:0 of `csr_addr` must be zero; a misaligned address is unmapped):
//! - `0x0000..0x0200`: the global registers and counters of `docs/csr-map.md`, handled
//!   here. Writes to read-only registers and to unmapped offsets are ignored; unmapped
//!   offsets read 0. RW registers keep only their documented fields (other bits read 0);
//!   `CQ_BASE` keeps bits 31:3 (the ring is 8-aligned). Writing `CQ_BASE` also sets `CQ_CI`
//!   to 0 and pulses `cfg_cq_restart` (the `CompletionQueue` restarts `CQ_PI`).
//! - `0x1000 <= addr < 0x1000 + 0x80 * queue_pairs`: forwarded with
//!   `qp = (addr - 0x1000) / 0x80` and `reg = addr % 0x80 / 8` to the engines that own the
//!   register: `reg` 0..=3 (the SQ registers) to the send engine only, 4..=7 (the RQ
//!   registers) to the receive engine only, 8 and up (`QP_REMOTE`, `QP_CTRL`,
//!   `QP_STATUS`, unmapped) to both. So a doorbell or ring set-up of one queue takes no
//!   operation of the other engine's table. `NicCsr` shows the access on those side ports
//!   until each has taken it and, for a read, waits for their answers and returns their
//!   OR (an engine answers 0 for a register it does not own).
//! - `0x4000..0x4200` with a TPT: forwarded to `m_tpt_csr_*` with `reg = (addr - 0x4000)
//!   / 8`. Without a TPT this range is unmapped.
//! - Everything else is unmapped.
//!
//! Latency: a global access is taken the clock it is offered (`csr_ready` is high while
//! nothing is in progress) and a read's response comes on the next clock, so one access
//! per clock. A forwarded access is shown on the side ports from the next clock (from
//! registers); `csr_ready` is low from then up to and including the clock in which the
//! last side port takes it (write) or answers (read); a read's response comes on the
//! clock after that, together with `csr_ready`.
//! Limits: an engine (or the TPT) that never takes or never answers a forwarded access
//! hangs the CSR port; answers nobody waits for are ignored. `CQ_SIZE_LOG2` keeps all 5
//! bits without a range check (the driver writes 0..=16).

use crate::cell::format::{check_cell_payload, MAX_CELL_PAYLOAD};
use crate::sim::ClockedBlock;
use nic_abi::{csr, MAX_QUEUE_PAIRS, SEND_WINDOW};
use rust_hdl::prelude::*;

/// Fewest and most TPT entries a NIC can be configured with.
pub const MIN_TPT_ENTRIES: usize = 16;
pub const MAX_TPT_ENTRIES: usize = 4096;

/// Whether the CSR port is free or waiting for a side port.

// The address decode takes the queue-pair index from address bits 12:7 and the page from
// bits 15:9: the map of `nic_abi::csr` must keep that shape.
const _: () = assert!(
    csr::QP_STRIDE == 1 << 7,
    "QP_STRIDE must be 0x80 (address bits 12:7 index the QP)"
);
const _: () = assert!(
    csr::QP_BASE % csr::QP_STRIDE == 0 && (csr::QP_BASE / csr::QP_STRIDE) % 64 == 32,
    "QP_BASE / QP_STRIDE must be 32 mod 64 (the index is bits 12:7 with bit 12 flipped)"
);
// The side port a per-QP access goes to is decided by register bits 3:2: the send queue's
// registers must be words 0..=3, the receive queue's 4..=7, the shared ones 8 and up.
const _: () = assert!(
    csr::QP_SQ_BASE / 8 < 4
        && csr::QP_SQ_SIZE_LOG2 / 8 < 4
        && csr::QP_SQ_PI / 8 < 4
        && csr::QP_SQ_CI / 8 < 4
        && csr::QP_RQ_BASE / 8 >= 4
        && csr::QP_RQ_BASE / 8 < 8
        && csr::QP_RQ_SIZE_LOG2 / 8 >= 4
        && csr::QP_RQ_SIZE_LOG2 / 8 < 8
        && csr::QP_RQ_PI / 8 >= 4
        && csr::QP_RQ_PI / 8 < 8
        && csr::QP_RQ_CI / 8 >= 4
        && csr::QP_RQ_CI / 8 < 8
        && csr::QP_REMOTE / 8 >= 8
        && csr::QP_CTRL / 8 >= 8
        && csr::QP_STATUS / 8 >= 8,
    "per-QP registers moved: SQ registers must be words 0..=3, RQ 4..=7, shared 8 and up"
);
const _: () = assert!(
    csr::TPT_INDEX % 512 == 0,
    "the TPT registers must start a 512-byte page"
);

// RustHDL's `match` takes literal arms only (a path arm becomes an undeclared Verilog
// name), so the global registers' decode matches word indices (`address / 8`) written as
// numbers. This table ties each number to the `nic_abi::csr` name it stands for; moving a
// register in `abi/` without the decode fails the build here.
const GLOBAL_WORDS: [(u16, u16); 14] = [
    (csr::NIC_ID, 0),
    (csr::NIC_CONFIG, 1),
    (csr::NODE_ID, 2),
    (csr::ENABLE, 3),
    (csr::CQ_BASE, 4),
    (csr::CQ_SIZE_LOG2, 5),
    (csr::CQ_PI, 6),
    (csr::CQ_CI, 7),
    (csr::RETRY_TIMEOUT, 8),
    (csr::RETRY_LIMIT, 9),
    (csr::NACK_SENT, 32),
    (csr::NACK_RECEIVED, 40),
    (csr::STAT_MESSAGES_SENT, 48),
    (csr::STAT_CELLS_FAILED, 52),
];
const _: () = {
    let mut i = 0;
    while i < GLOBAL_WORDS.len() {
        assert!(
            GLOBAL_WORDS[i].0 == 8 * GLOBAL_WORDS[i].1,
            "a global register of nic_abi::csr moved: the CSR decode's word indices must follow"
        );
        i += 1;
    }
};
const _: () = assert!(
    csr::STAT_MESSAGES_RECEIVED == csr::STAT_MESSAGES_SENT + 8
        && csr::STAT_RETRANSMISSIONS == csr::STAT_MESSAGES_SENT + 16
        && csr::STAT_DROPPED == csr::STAT_MESSAGES_SENT + 24
        && csr::STAT_CELLS_FAILED == csr::STAT_MESSAGES_SENT + 32,
    "the statistics counters must be consecutive words from STAT_MESSAGES_SENT"
);
// `cfg_enable_send_recv` and `cfg_enable_rdma` are bits 0 and 1 of `ENABLE`.
const _: () = assert!(
    csr::ENABLE_SEND_RECV == 1 << 0 && csr::ENABLE_RDMA == 1 << 1,
    "ENABLE's bits moved: the CSR block's enable outputs must follow"
);

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum CsrState {
    Idle,
    /// A per-QP or TPT access is out on the side ports.
    Forward,
}

/// `NIC_CONFIG` for a configuration (`docs/csr-map.md`): 7:0 queue pairs, 23:8 cell
/// payload bytes, 31:24 log2(TPT entries) (0 = no TPT), 39:32 send window.
pub fn nic_config_value(
    queue_pairs: usize,
    cell_payload: usize,
    tpt_entries: Option<usize>,
) -> u64 {
    let tpt_log2 = tpt_entries.map_or(0, |n| n.trailing_zeros() as u64);
    queue_pairs as u64 | (cell_payload as u64) << 8 | tpt_log2 << 24 | (SEND_WINDOW as u64) << 32
}

#[derive(LogicBlock)]
pub struct NicCsr {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub csr_valid: Signal<In, Bit>,
    pub csr_ready: Signal<Out, Bit>,
    pub csr_write: Signal<In, Bit>,
    pub csr_addr: Signal<In, Bits<16>>,
    pub csr_wdata: Signal<In, Bits<64>>,
    pub csr_rdata_valid: Signal<Out, Bit>,
    pub csr_rdata: Signal<Out, Bits<64>>,
    pub cfg_node_id: Signal<Out, Bits<16>>,
    pub cfg_enable_send_recv: Signal<Out, Bit>,
    pub cfg_enable_rdma: Signal<Out, Bit>,
    pub cfg_cq_base: Signal<Out, Bits<32>>,
    pub cfg_cq_size_log2: Signal<Out, Bits<5>>,
    pub cfg_cq_ci: Signal<Out, Bits<32>>,
    pub cfg_cq_restart: Signal<Out, Bit>,
    pub cfg_retry_timeout: Signal<Out, Bits<32>>,
    pub cfg_retry_limit: Signal<Out, Bits<4>>,
    pub cq_pi: Signal<In, Bits<32>>,
    pub stat_nack_sent_0: Signal<In, Bits<32>>,
    pub stat_nack_sent_1: Signal<In, Bits<32>>,
    pub stat_nack_sent_2: Signal<In, Bits<32>>,
    pub stat_nack_sent_3: Signal<In, Bits<32>>,
    pub stat_nack_sent_4: Signal<In, Bits<32>>,
    pub stat_nack_sent_5: Signal<In, Bits<32>>,
    pub stat_nack_sent_6: Signal<In, Bits<32>>,
    pub stat_nack_sent_7: Signal<In, Bits<32>>,
    pub stat_nack_received_0: Signal<In, Bits<32>>,
    pub stat_nack_received_1: Signal<In, Bits<32>>,
    pub stat_nack_received_2: Signal<In, Bits<32>>,
    pub stat_nack_received_3: Signal<In, Bits<32>>,
    pub stat_nack_received_4: Signal<In, Bits<32>>,
    pub stat_nack_received_5: Signal<In, Bits<32>>,
    pub stat_nack_received_6: Signal<In, Bits<32>>,
    pub stat_nack_received_7: Signal<In, Bits<32>>,
    pub stat_requests_sent: Signal<In, Bits<32>>,
    pub stat_responses_sent: Signal<In, Bits<32>>,
    pub stat_messages_received: Signal<In, Bits<32>>,
    pub stat_retransmissions: Signal<In, Bits<32>>,
    pub stat_dropped: Signal<In, Bits<32>>,
    pub stat_cells_failed: Signal<In, Bits<32>>,
    pub m_sq_csr_valid: Signal<Out, Bit>,
    pub m_sq_csr_ready: Signal<In, Bit>,
    pub m_sq_csr_write: Signal<Out, Bit>,
    pub m_sq_csr_qp: Signal<Out, Bits<6>>,
    pub m_sq_csr_reg: Signal<Out, Bits<4>>,
    pub m_sq_csr_wdata: Signal<Out, Bits<64>>,
    pub m_sq_csr_rdata_valid: Signal<In, Bit>,
    pub m_sq_csr_rdata: Signal<In, Bits<64>>,
    pub m_rq_csr_valid: Signal<Out, Bit>,
    pub m_rq_csr_ready: Signal<In, Bit>,
    pub m_rq_csr_write: Signal<Out, Bit>,
    pub m_rq_csr_qp: Signal<Out, Bits<6>>,
    pub m_rq_csr_reg: Signal<Out, Bits<4>>,
    pub m_rq_csr_wdata: Signal<Out, Bits<64>>,
    pub m_rq_csr_rdata_valid: Signal<In, Bit>,
    pub m_rq_csr_rdata: Signal<In, Bits<64>>,
    pub m_tpt_csr_valid: Signal<Out, Bit>,
    pub m_tpt_csr_ready: Signal<In, Bit>,
    pub m_tpt_csr_write: Signal<Out, Bit>,
    pub m_tpt_csr_reg: Signal<Out, Bits<6>>,
    pub m_tpt_csr_wdata: Signal<Out, Bits<64>>,
    pub m_tpt_csr_rdata_valid: Signal<In, Bit>,
    pub m_tpt_csr_rdata: Signal<In, Bits<64>>,
    // Global registers.
    node_id: DFF<Bits<16>>,
    enable: DFF<Bits<2>>,
    cq_base: DFF<Bits<32>>,
    cq_size_log2: DFF<Bits<5>>,
    cq_ci: DFF<Bits<32>>,
    cq_restart: DFF<Bit>,
    retry_timeout: DFF<Bits<32>>,
    retry_limit: DFF<Bits<4>>,
    // Read response.
    rdata_valid: DFF<Bit>,
    rdata: DFF<Bits<64>>,
    // The forwarded access.
    state: DFF<CsrState>,
    req_write: DFF<Bit>,
    req_qp: DFF<Bits<6>>,
    /// `addr[8:3]`: the TPT register; its low 4 bits are the per-QP register.
    req_reg: DFF<Bits<6>>,
    req_wdata: DFF<Bits<64>>,
    /// Side ports that have not yet taken the access.
    sq_req: DFF<Bit>,
    rq_req: DFF<Bit>,
    tpt_req: DFF<Bit>,
    /// Side ports whose read answer is still awaited.
    sq_wait: DFF<Bit>,
    rq_wait: DFF<Bit>,
    tpt_wait: DFF<Bit>,
    /// OR of the answers so far.
    acc: DFF<Bits<64>>,
    // Decoding of the offered access.
    /// `addr[8:3]`: register index within the global page or the TPT page.
    word_index: Signal<Local, Bits<6>>,
    is_global: Signal<Local, Bit>,
    is_qp: Signal<Local, Bit>,
    /// A per-QP register the send engine owns (SQ registers and the shared ones), or the
    /// receive engine (RQ registers and the shared ones).
    sq_owns: Signal<Local, Bit>,
    rq_owns: Signal<Local, Bit>,
    is_tpt: Signal<Local, Bit>,
    read_value: Signal<Local, Bits<64>>,
    messages_sent: Signal<Local, Bits<32>>,
    accept: Signal<Local, Bit>,
    // Forwarding progress this clock.
    sq_part: Signal<Local, Bits<64>>,
    rq_part: Signal<Local, Bits<64>>,
    tpt_part: Signal<Local, Bits<64>>,
    acc_next: Signal<Local, Bits<64>>,
    still_pending: Signal<Local, Bit>,
    nic_id: Constant<Bits<64>>,
    nic_config: Constant<Bits<64>>,
    qp_end: Constant<Bits<16>>,
    /// `csr::QP_BASE`, and the queue-pair index it stands for (`QP_BASE / QP_STRIDE` mod 64).
    qp_base: Constant<Bits<16>>,
    qp_base_index: Constant<Bits<6>>,
    /// `csr::TPT_INDEX / 512`: the 512-byte page of the TPT registers.
    tpt_page: Constant<Bits<7>>,
    tpt_present: Constant<Bit>,
    /// `CQ_BASE` keeps bits 31:3.
    cq_base_mask: Constant<Bits<32>>,
}

impl NicCsr {
    /// The CSR block of a NIC with `queue_pairs` queue pairs, cells of `cell_payload`
    /// bytes and, when `tpt_entries` is given, a TPT of that many entries (these only
    /// decide the per-QP window, `NIC_CONFIG` and whether TPT accesses are forwarded).
    ///
    /// Panics when `queue_pairs` is not in 1..=64, `cell_payload` is not a multiple of 8
    /// in 8..=1024, or `tpt_entries` is not a power of two in 16..=4096.
    pub fn new(queue_pairs: usize, cell_payload: usize, tpt_entries: Option<usize>) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "NicCsr: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        assert!(
            check_cell_payload(cell_payload).is_ok(),
            "NicCsr: cell_payload must be a multiple of 8 between 8 and {MAX_CELL_PAYLOAD}, got {cell_payload}"
        );
        if let Some(n) = tpt_entries {
            assert!(
                n.is_power_of_two() && (MIN_TPT_ENTRIES..=MAX_TPT_ENTRIES).contains(&n),
                "NicCsr: tpt_entries must be a power of two between {MIN_TPT_ENTRIES} and {MAX_TPT_ENTRIES}, got {n}"
            );
        }
        let qp_end = csr::QP_BASE as u64 + csr::QP_STRIDE as u64 * queue_pairs as u64;
        NicCsr {
            clock: Default::default(),
            reset: Default::default(),
            csr_valid: Default::default(),
            csr_ready: Default::default(),
            csr_write: Default::default(),
            csr_addr: Default::default(),
            csr_wdata: Default::default(),
            csr_rdata_valid: Default::default(),
            csr_rdata: Default::default(),
            cfg_node_id: Default::default(),
            cfg_enable_send_recv: Default::default(),
            cfg_enable_rdma: Default::default(),
            cfg_cq_base: Default::default(),
            cfg_cq_size_log2: Default::default(),
            cfg_cq_ci: Default::default(),
            cfg_cq_restart: Default::default(),
            cfg_retry_timeout: Default::default(),
            cfg_retry_limit: Default::default(),
            cq_pi: Default::default(),
            stat_nack_sent_0: Default::default(),
            stat_nack_sent_1: Default::default(),
            stat_nack_sent_2: Default::default(),
            stat_nack_sent_3: Default::default(),
            stat_nack_sent_4: Default::default(),
            stat_nack_sent_5: Default::default(),
            stat_nack_sent_6: Default::default(),
            stat_nack_sent_7: Default::default(),
            stat_nack_received_0: Default::default(),
            stat_nack_received_1: Default::default(),
            stat_nack_received_2: Default::default(),
            stat_nack_received_3: Default::default(),
            stat_nack_received_4: Default::default(),
            stat_nack_received_5: Default::default(),
            stat_nack_received_6: Default::default(),
            stat_nack_received_7: Default::default(),
            stat_requests_sent: Default::default(),
            stat_responses_sent: Default::default(),
            stat_messages_received: Default::default(),
            stat_retransmissions: Default::default(),
            stat_dropped: Default::default(),
            stat_cells_failed: Default::default(),
            m_sq_csr_valid: Default::default(),
            m_sq_csr_ready: Default::default(),
            m_sq_csr_write: Default::default(),
            m_sq_csr_qp: Default::default(),
            m_sq_csr_reg: Default::default(),
            m_sq_csr_wdata: Default::default(),
            m_sq_csr_rdata_valid: Default::default(),
            m_sq_csr_rdata: Default::default(),
            m_rq_csr_valid: Default::default(),
            m_rq_csr_ready: Default::default(),
            m_rq_csr_write: Default::default(),
            m_rq_csr_qp: Default::default(),
            m_rq_csr_reg: Default::default(),
            m_rq_csr_wdata: Default::default(),
            m_rq_csr_rdata_valid: Default::default(),
            m_rq_csr_rdata: Default::default(),
            m_tpt_csr_valid: Default::default(),
            m_tpt_csr_ready: Default::default(),
            m_tpt_csr_write: Default::default(),
            m_tpt_csr_reg: Default::default(),
            m_tpt_csr_wdata: Default::default(),
            m_tpt_csr_rdata_valid: Default::default(),
            m_tpt_csr_rdata: Default::default(),
            node_id: Default::default(),
            enable: Default::default(),
            cq_base: Default::default(),
            cq_size_log2: Default::default(),
            cq_ci: Default::default(),
            cq_restart: Default::default(),
            retry_timeout: Default::default(),
            retry_limit: Default::default(),
            rdata_valid: Default::default(),
            rdata: Default::default(),
            state: Default::default(),
            req_write: Default::default(),
            req_qp: Default::default(),
            req_reg: Default::default(),
            req_wdata: Default::default(),
            sq_req: Default::default(),
            rq_req: Default::default(),
            tpt_req: Default::default(),
            sq_wait: Default::default(),
            rq_wait: Default::default(),
            tpt_wait: Default::default(),
            acc: Default::default(),
            word_index: Default::default(),
            is_global: Default::default(),
            is_qp: Default::default(),
            sq_owns: Default::default(),
            rq_owns: Default::default(),
            is_tpt: Default::default(),
            read_value: Default::default(),
            messages_sent: Default::default(),
            accept: Default::default(),
            sq_part: Default::default(),
            rq_part: Default::default(),
            tpt_part: Default::default(),
            acc_next: Default::default(),
            still_pending: Default::default(),
            nic_id: Constant::new(csr::NIC_ID_VALUE.to_bits()),
            nic_config: Constant::new(
                nic_config_value(queue_pairs, cell_payload, tpt_entries).to_bits(),
            ),
            qp_end: Constant::new(qp_end.to_bits()),
            qp_base: Constant::new((csr::QP_BASE as u64).to_bits()),
            qp_base_index: Constant::new(((csr::QP_BASE / csr::QP_STRIDE) as u64 % 64).to_bits()),
            tpt_page: Constant::new((csr::TPT_INDEX as u64 >> 9).to_bits()),
            tpt_present: Constant::new(tpt_entries.is_some()),
            cq_base_mask: Constant::new(0xFFFF_FFF8u32.to_bits()),
        }
    }
}

impl Logic for NicCsr {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            node_id,
            enable,
            cq_base,
            cq_size_log2,
            cq_ci,
            cq_restart,
            retry_timeout,
            retry_limit,
            rdata_valid,
            rdata,
            state,
            req_write,
            req_qp,
            req_reg,
            req_wdata,
            sq_req,
            rq_req,
            tpt_req,
            sq_wait,
            rq_wait,
            tpt_wait,
            acc
        );
        // Decode the offered access (8-aligned addresses only).
        self.word_index.next = self.csr_addr.val().get_bits::<6>(3);
        self.is_global.next = (self.csr_addr.val().get_bits::<3>(0) == 0)
            & (self.csr_addr.val().get_bits::<7>(9) == 0);
        self.is_qp.next = (self.csr_addr.val().get_bits::<3>(0) == 0)
            & (self.csr_addr.val() >= self.qp_base.val())
            & (self.csr_addr.val() < self.qp_end.val());
        // Per-QP registers 0..=3 are the send queue's, 4..=7 the receive queue's, 8 and up
        // (QP_REMOTE, QP_CTRL, QP_STATUS, unmapped) both engines'.
        self.sq_owns.next = self.is_qp.val()
            & (self.word_index.val().get_bit(3) | !self.word_index.val().get_bit(2));
        self.rq_owns.next = self.is_qp.val()
            & (self.word_index.val().get_bit(3) | self.word_index.val().get_bit(2));
        self.is_tpt.next = (self.csr_addr.val().get_bits::<3>(0) == 0)
            & (self.csr_addr.val().get_bits::<7>(9) == self.tpt_page.val())
            & self.tpt_present.val();
        self.messages_sent.next = self.stat_requests_sent.val() + self.stat_responses_sent.val();
        // Read value of a global register (0 when unmapped).
        self.read_value.next = 0.into();
        if self.is_global.val() {
            match self.word_index.val().index() {
                0 => {
                    self.read_value.next = self.nic_id.val();
                }
                1 => {
                    self.read_value.next = self.nic_config.val();
                }
                2 => {
                    self.read_value.next = bit_cast::<64, 16>(self.node_id.q.val());
                }
                3 => {
                    self.read_value.next = bit_cast::<64, 2>(self.enable.q.val());
                }
                4 => {
                    self.read_value.next = bit_cast::<64, 32>(self.cq_base.q.val());
                }
                5 => {
                    self.read_value.next = bit_cast::<64, 5>(self.cq_size_log2.q.val());
                }
                6 => {
                    self.read_value.next = bit_cast::<64, 32>(self.cq_pi.val());
                }
                7 => {
                    self.read_value.next = bit_cast::<64, 32>(self.cq_ci.q.val());
                }
                8 => {
                    self.read_value.next = bit_cast::<64, 32>(self.retry_timeout.q.val());
                }
                9 => {
                    self.read_value.next = bit_cast::<64, 4>(self.retry_limit.q.val());
                }
                32 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_sent_0.val());
                }
                33 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_sent_1.val());
                }
                34 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_sent_2.val());
                }
                35 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_sent_3.val());
                }
                36 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_sent_4.val());
                }
                37 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_sent_5.val());
                }
                38 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_sent_6.val());
                }
                39 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_sent_7.val());
                }
                40 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_received_0.val());
                }
                41 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_received_1.val());
                }
                42 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_received_2.val());
                }
                43 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_received_3.val());
                }
                44 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_received_4.val());
                }
                45 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_received_5.val());
                }
                46 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_received_6.val());
                }
                47 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_nack_received_7.val());
                }
                48 => {
                    self.read_value.next = bit_cast::<64, 32>(self.messages_sent.val());
                }
                49 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_messages_received.val());
                }
                50 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_retransmissions.val());
                }
                51 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_dropped.val());
                }
                52 => {
                    self.read_value.next = bit_cast::<64, 32>(self.stat_cells_failed.val());
                }
                _ => {}
            }
        }
        // Forwarding progress: answers arriving this clock, and what is still owed.
        self.sq_part.next = 0.into();
        if self.sq_wait.q.val() & self.m_sq_csr_rdata_valid.val() {
            self.sq_part.next = self.m_sq_csr_rdata.val();
        }
        self.rq_part.next = 0.into();
        if self.rq_wait.q.val() & self.m_rq_csr_rdata_valid.val() {
            self.rq_part.next = self.m_rq_csr_rdata.val();
        }
        self.tpt_part.next = 0.into();
        if self.tpt_wait.q.val() & self.m_tpt_csr_rdata_valid.val() {
            self.tpt_part.next = self.m_tpt_csr_rdata.val();
        }
        self.acc_next.next =
            self.acc.q.val() | self.sq_part.val() | self.rq_part.val() | self.tpt_part.val();
        self.still_pending.next = (self.sq_req.q.val() & !self.m_sq_csr_ready.val())
            | (self.rq_req.q.val() & !self.m_rq_csr_ready.val())
            | (self.tpt_req.q.val() & !self.m_tpt_csr_ready.val())
            | (self.sq_wait.q.val() & !self.m_sq_csr_rdata_valid.val())
            | (self.rq_wait.q.val() & !self.m_rq_csr_rdata_valid.val())
            | (self.tpt_wait.q.val() & !self.m_tpt_csr_rdata_valid.val());
        self.csr_ready.next = (self.state.q.val() == CsrState::Idle) & !self.reset.val();
        self.accept.next =
            self.csr_valid.val() & (self.state.q.val() == CsrState::Idle) & !self.reset.val();
        self.rdata_valid.d.next = false;
        self.cq_restart.d.next = false;
        // The read data register loads without waiting for the accept or the side ports'
        // handshakes (neither the reset nor a side engine's ready reaches its enable):
        // `csr_rdata` is read only with `csr_rdata_valid`, which does wait for them.
        if self.state.q.val() == CsrState::Forward {
            self.rdata.d.next = self.acc_next.val();
        } else if self.csr_valid.val() & !self.csr_write.val() {
            self.rdata.d.next = self.read_value.val();
        }
        match self.state.q.val() {
            CsrState::Idle => {
                if self.accept.val() {
                    if self.is_qp.val() | self.is_tpt.val() {
                        self.req_write.d.next = self.csr_write.val();
                        // (addr - QP_BASE) / QP_STRIDE mod 64: QP_BASE / QP_STRIDE is 32
                        // mod 64 (checked in `new`), so the subtraction flips bit 5.
                        self.req_qp.d.next =
                            self.csr_addr.val().get_bits::<6>(7) ^ self.qp_base_index.val();
                        self.req_reg.d.next = self.word_index.val();
                        self.req_wdata.d.next = self.csr_wdata.val();
                        self.sq_req.d.next = self.sq_owns.val();
                        self.rq_req.d.next = self.rq_owns.val();
                        self.tpt_req.d.next = self.is_tpt.val();
                        self.sq_wait.d.next = self.sq_owns.val() & !self.csr_write.val();
                        self.rq_wait.d.next = self.rq_owns.val() & !self.csr_write.val();
                        self.tpt_wait.d.next = self.is_tpt.val() & !self.csr_write.val();
                        self.acc.d.next = 0.into();
                        self.state.d.next = CsrState::Forward;
                    } else if !self.csr_write.val() {
                        self.rdata_valid.d.next = true;
                    } else if self.is_global.val() {
                        match self.word_index.val().index() {
                            2 => {
                                self.node_id.d.next = self.csr_wdata.val().get_bits::<16>(0);
                            }
                            3 => {
                                self.enable.d.next = self.csr_wdata.val().get_bits::<2>(0);
                            }
                            4 => {
                                self.cq_base.d.next = self.csr_wdata.val().get_bits::<32>(0)
                                    & self.cq_base_mask.val();
                                self.cq_ci.d.next = 0.into();
                                self.cq_restart.d.next = true;
                            }
                            5 => {
                                self.cq_size_log2.d.next = self.csr_wdata.val().get_bits::<5>(0);
                            }
                            7 => {
                                self.cq_ci.d.next = self.csr_wdata.val().get_bits::<32>(0);
                            }
                            8 => {
                                self.retry_timeout.d.next = self.csr_wdata.val().get_bits::<32>(0);
                            }
                            9 => {
                                self.retry_limit.d.next = self.csr_wdata.val().get_bits::<4>(0);
                            }
                            _ => {}
                        }
                    }
                }
            }
            CsrState::Forward => {
                self.sq_req.d.next = self.sq_req.q.val() & !self.m_sq_csr_ready.val();
                self.rq_req.d.next = self.rq_req.q.val() & !self.m_rq_csr_ready.val();
                self.tpt_req.d.next = self.tpt_req.q.val() & !self.m_tpt_csr_ready.val();
                self.sq_wait.d.next = self.sq_wait.q.val() & !self.m_sq_csr_rdata_valid.val();
                self.rq_wait.d.next = self.rq_wait.q.val() & !self.m_rq_csr_rdata_valid.val();
                self.tpt_wait.d.next = self.tpt_wait.q.val() & !self.m_tpt_csr_rdata_valid.val();
                self.acc.d.next = self.acc_next.val();
                if !self.still_pending.val() {
                    self.state.d.next = CsrState::Idle;
                    if !self.req_write.q.val() {
                        self.rdata_valid.d.next = true;
                    }
                }
            }
            _ => {
                self.state.d.next = CsrState::Idle;
            }
        }
        // Side ports, from registers.
        self.m_sq_csr_valid.next = self.sq_req.q.val();
        self.m_sq_csr_write.next = self.req_write.q.val();
        self.m_sq_csr_qp.next = self.req_qp.q.val();
        self.m_sq_csr_reg.next = self.req_reg.q.val().get_bits::<4>(0);
        self.m_sq_csr_wdata.next = self.req_wdata.q.val();
        self.m_rq_csr_valid.next = self.rq_req.q.val();
        self.m_rq_csr_write.next = self.req_write.q.val();
        self.m_rq_csr_qp.next = self.req_qp.q.val();
        self.m_rq_csr_reg.next = self.req_reg.q.val().get_bits::<4>(0);
        self.m_rq_csr_wdata.next = self.req_wdata.q.val();
        self.m_tpt_csr_valid.next = self.tpt_req.q.val();
        self.m_tpt_csr_write.next = self.req_write.q.val();
        self.m_tpt_csr_reg.next = self.req_reg.q.val();
        self.m_tpt_csr_wdata.next = self.req_wdata.q.val();
        if self.reset.val() {
            self.node_id.d.next = 0.into();
            self.enable.d.next = 0.into();
            self.cq_base.d.next = 0.into();
            self.cq_size_log2.d.next = 0.into();
            self.cq_ci.d.next = 0.into();
            self.cq_restart.d.next = false;
            self.retry_timeout.d.next = 4096.into();
            self.retry_limit.d.next = 7.into();
            self.rdata_valid.d.next = false;
            self.state.d.next = CsrState::Idle;
            self.sq_req.d.next = false;
            self.rq_req.d.next = false;
            self.tpt_req.d.next = false;
            self.sq_wait.d.next = false;
            self.rq_wait.d.next = false;
            self.tpt_wait.d.next = false;
        }
        self.csr_rdata_valid.next = self.rdata_valid.q.val();
        self.csr_rdata.next = self.rdata.q.val();
        self.cfg_node_id.next = self.node_id.q.val();
        self.cfg_enable_send_recv.next = self.enable.q.val().get_bit(0);
        self.cfg_enable_rdma.next = self.enable.q.val().get_bit(1);
        self.cfg_cq_base.next = self.cq_base.q.val();
        self.cfg_cq_size_log2.next = self.cq_size_log2.q.val();
        self.cfg_cq_ci.next = self.cq_ci.q.val();
        self.cfg_cq_restart.next = self.cq_restart.q.val();
        self.cfg_retry_timeout.next = self.retry_timeout.q.val();
        self.cfg_retry_limit.next = self.retry_limit.q.val();
    }
}

impl ClockedBlock for NicCsr {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{settle, tick};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::{HashMap, VecDeque};

    /// Counter inputs in map order: NACK_SENT[0..8], NACK_RECEIVED[0..8], requests sent,
    /// responses sent, messages received, retransmissions, dropped, cells failed.
    const STATS: usize = 22;

    fn set_stats(uut: &mut NicCsr, s: &[u32; STATS]) {
        let b = |i: usize| (s[i] as u64).to_bits::<32>();
        uut.stat_nack_sent_0.next = b(0);
        uut.stat_nack_sent_1.next = b(1);
        uut.stat_nack_sent_2.next = b(2);
        uut.stat_nack_sent_3.next = b(3);
        uut.stat_nack_sent_4.next = b(4);
        uut.stat_nack_sent_5.next = b(5);
        uut.stat_nack_sent_6.next = b(6);
        uut.stat_nack_sent_7.next = b(7);
        uut.stat_nack_received_0.next = b(8);
        uut.stat_nack_received_1.next = b(9);
        uut.stat_nack_received_2.next = b(10);
        uut.stat_nack_received_3.next = b(11);
        uut.stat_nack_received_4.next = b(12);
        uut.stat_nack_received_5.next = b(13);
        uut.stat_nack_received_6.next = b(14);
        uut.stat_nack_received_7.next = b(15);
        uut.stat_requests_sent.next = b(16);
        uut.stat_responses_sent.next = b(17);
        uut.stat_messages_received.next = b(18);
        uut.stat_retransmissions.next = b(19);
        uut.stat_dropped.next = b(20);
        uut.stat_cells_failed.next = b(21);
    }

    /// Where an access goes.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Target {
        /// A global register, a counter or an unmapped offset: answered by `NicCsr`.
        Local,
        Qp {
            qp: u8,
            reg: u8,
        },
        Tpt {
            reg: u8,
        },
    }

    /// Plain-Rust model of the global register map (`docs/csr-map.md`).
    #[derive(Clone, Debug)]
    struct MapModel {
        queue_pairs: usize,
        cell_payload: usize,
        tpt: Option<usize>,
        node_id: u64,
        enable: u64,
        cq_base: u64,
        cq_size_log2: u64,
        cq_ci: u64,
        retry_timeout: u64,
        retry_limit: u64,
    }

    impl MapModel {
        fn new(queue_pairs: usize, cell_payload: usize, tpt: Option<usize>) -> Self {
            MapModel {
                queue_pairs,
                cell_payload,
                tpt,
                node_id: 0,
                enable: 0,
                cq_base: 0,
                cq_size_log2: 0,
                cq_ci: 0,
                retry_timeout: csr::RETRY_TIMEOUT_RESET,
                retry_limit: csr::RETRY_LIMIT_RESET,
            }
        }

        fn decode(&self, addr: u16) -> Target {
            if !addr.is_multiple_of(8) {
                return Target::Local;
            }
            let qp_end = csr::QP_BASE as usize + csr::QP_STRIDE as usize * self.queue_pairs;
            if (csr::QP_BASE as usize..qp_end).contains(&(addr as usize)) {
                let off = addr - csr::QP_BASE;
                return Target::Qp {
                    qp: (off / csr::QP_STRIDE) as u8,
                    reg: (off % csr::QP_STRIDE / 8) as u8,
                };
            }
            if self.tpt.is_some() && (0x4000..0x4200).contains(&addr) {
                return Target::Tpt {
                    reg: ((addr - 0x4000) / 8) as u8,
                };
            }
            Target::Local
        }

        /// A local read, with the status inputs of that clock.
        fn read(&self, addr: u16, stats: &[u32; STATS], cq_pi: u32) -> u64 {
            if !addr.is_multiple_of(8) {
                return 0;
            }
            match addr {
                csr::NIC_ID => csr::NIC_ID_VALUE,
                csr::NIC_CONFIG => {
                    let log2 = self.tpt.map_or(0, |n| n.trailing_zeros() as u64);
                    self.queue_pairs as u64 | (self.cell_payload as u64) << 8 | log2 << 24 | 8 << 32
                }
                csr::NODE_ID => self.node_id,
                csr::ENABLE => self.enable,
                csr::CQ_BASE => self.cq_base,
                csr::CQ_SIZE_LOG2 => self.cq_size_log2,
                csr::CQ_PI => cq_pi as u64,
                csr::CQ_CI => self.cq_ci,
                csr::RETRY_TIMEOUT => self.retry_timeout,
                csr::RETRY_LIMIT => self.retry_limit,
                a if (csr::NACK_SENT..csr::NACK_SENT + 64).contains(&a) => {
                    stats[((a - csr::NACK_SENT) / 8) as usize] as u64
                }
                a if (csr::NACK_RECEIVED..csr::NACK_RECEIVED + 64).contains(&a) => {
                    stats[8 + ((a - csr::NACK_RECEIVED) / 8) as usize] as u64
                }
                csr::STAT_MESSAGES_SENT => stats[16].wrapping_add(stats[17]) as u64,
                csr::STAT_MESSAGES_RECEIVED => stats[18] as u64,
                csr::STAT_RETRANSMISSIONS => stats[19] as u64,
                csr::STAT_DROPPED => stats[20] as u64,
                csr::STAT_CELLS_FAILED => stats[21] as u64,
                _ => 0,
            }
        }

        /// A local write; returns whether it restarts the completion queue.
        fn write(&mut self, addr: u16, data: u64) -> bool {
            if !addr.is_multiple_of(8) {
                return false;
            }
            match addr {
                csr::NODE_ID => self.node_id = data & 0xFFFF,
                csr::ENABLE => self.enable = data & 3,
                csr::CQ_BASE => {
                    self.cq_base = data & 0xFFFF_FFF8;
                    self.cq_ci = 0;
                    return true;
                }
                csr::CQ_SIZE_LOG2 => self.cq_size_log2 = data & 0x1F,
                csr::CQ_CI => self.cq_ci = data & 0xFFFF_FFFF,
                csr::RETRY_TIMEOUT => self.retry_timeout = data & 0xFFFF_FFFF,
                csr::RETRY_LIMIT => self.retry_limit = data & 0xF,
                _ => {}
            }
            false
        }

        fn check_outputs(&self, uut: &NicCsr, restart: bool, clock: u64) {
            let got = (
                uut.cfg_node_id.val().to_u64(),
                uut.cfg_enable_send_recv.val() as u64 | (uut.cfg_enable_rdma.val() as u64) << 1,
                uut.cfg_cq_base.val().to_u64(),
                uut.cfg_cq_size_log2.val().to_u64(),
                uut.cfg_cq_ci.val().to_u64(),
                uut.cfg_retry_timeout.val().to_u64(),
                uut.cfg_retry_limit.val().to_u64(),
                uut.cfg_cq_restart.val(),
            );
            let want = (
                self.node_id,
                self.enable,
                self.cq_base,
                self.cq_size_log2,
                self.cq_ci,
                self.retry_timeout,
                self.retry_limit,
                restart,
            );
            assert_eq!(got, want, "cfg outputs after clock {clock}");
        }
    }

    /// Which engines own per-QP register `reg` (offset / 8), from the register map of
    /// `docs/csr-map.md`: (send engine, receive engine).
    fn qp_register_owners(reg: u8) -> (bool, bool) {
        let offset = reg as u16 * 8;
        let sq_only = [
            csr::QP_SQ_BASE,
            csr::QP_SQ_SIZE_LOG2,
            csr::QP_SQ_PI,
            csr::QP_SQ_CI,
        ];
        let rq_only = [
            csr::QP_RQ_BASE,
            csr::QP_RQ_SIZE_LOG2,
            csr::QP_RQ_PI,
            csr::QP_RQ_CI,
        ];
        (!rq_only.contains(&offset), !sq_only.contains(&offset))
    }

    /// One side port's far end (an engine or the TPT): takes requests with random
    /// back-pressure, keeps the written values, answers reads after a random latency
    /// with the bits it owns (`masks[reg]`).
    struct SidePort {
        name: &'static str,
        masks: Vec<u64>,
        store: HashMap<(u8, u8), u64>,
        ready: f64,
        max_latency: u64,
        answers: VecDeque<(u64, u64)>,
        /// The request shown last clock and not taken.
        shown: Option<(bool, u8, u8, u64)>,
        /// Whether this clock's answer is being driven.
        answering: bool,
        ready_now: bool,
    }

    impl SidePort {
        fn new(name: &'static str, rng: &mut ChaCha8Rng, regs: usize) -> Self {
            SidePort {
                name,
                masks: (0..regs)
                    .map(|_| rng.gen::<u64>() & rng.gen::<u64>())
                    .collect(),
                store: HashMap::new(),
                ready: 0.5,
                max_latency: 6,
                answers: VecDeque::new(),
                shown: None,
                answering: false,
                ready_now: false,
            }
        }

        /// Inputs for this clock: `(ready, rdata_valid, rdata)`.
        fn drive(&mut self, rng: &mut ChaCha8Rng, clock: u64) -> (bool, bool, u64) {
            self.ready_now = rng.gen_bool(self.ready);
            self.answering = matches!(self.answers.front(), Some((due, _)) if *due <= clock);
            let data = match self.answers.front() {
                Some((_, v)) if self.answering => *v,
                _ => rng.gen(),
            };
            (self.ready_now, self.answering, data)
        }

        /// After settling: the request shown (`valid`, fields). Returns the request when
        /// it was taken this clock.
        fn observe(
            &mut self,
            rng: &mut ChaCha8Rng,
            clock: u64,
            valid: bool,
            req: (bool, u8, u8, u64),
        ) -> Option<(bool, u8, u8, u64)> {
            if self.answering {
                self.answers.pop_front();
            }
            if !valid {
                assert!(
                    self.shown.is_none(),
                    "{}: valid dropped before taken",
                    self.name
                );
                return None;
            }
            if let Some(prev) = self.shown {
                assert_eq!(prev, req, "{}: request changed before taken", self.name);
            }
            if !self.ready_now {
                self.shown = Some(req);
                return None;
            }
            self.shown = None;
            let (write, qp, reg, wdata) = req;
            if write {
                self.store.insert((qp, reg), wdata);
            } else {
                let v = self.store.get(&(qp, reg)).copied().unwrap_or(0) & self.masks[reg as usize];
                let due = clock + 1 + rng.gen_range(0..=self.max_latency);
                self.answers.push_back((due, v));
            }
            Some(req)
        }
    }

    /// A forwarded access in progress: side-port events still owed.
    struct Forward {
        req: (bool, u8, u8, u64),
        sq: bool,
        rq: bool,
        tpt: bool,
        answers_owed: usize,
    }

    fn random_addr(rng: &mut ChaCha8Rng, queue_pairs: usize) -> u16 {
        let aligned = |rng: &mut ChaCha8Rng| -> u16 {
            match rng.gen_range(0..9) {
                0 | 1 => 8 * rng.gen_range(0..10),
                2 => csr::NACK_SENT + 8 * rng.gen_range(0..21),
                3 => 8 * rng.gen_range(10..64),
                4 | 5 => csr::qp(rng.gen_range(0..queue_pairs), 0) + 8 * rng.gen_range(0..16u16),
                6 => csr::qp(rng.gen_range(queue_pairs..72), 0) + 8 * rng.gen_range(0..16u16),
                7 => 0x4000 + 8 * rng.gen_range(0..70),
                _ => rng.gen::<u16>() & !7,
            }
        };
        let a = aligned(rng);
        if rng.gen_bool(0.05) {
            a | rng.gen_range(1..8)
        } else {
            a
        }
    }

    /// Random accesses with idle gaps against the model, the side ports taking and
    /// answering with random latency. Returns the clocks taken.
    fn run(
        seed: u64,
        queue_pairs: usize,
        cell_payload: usize,
        tpt: Option<usize>,
        accesses: usize,
        offer: f64,
    ) -> u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut uut = NicCsr::new(queue_pairs, cell_payload, tpt);
        uut.connect_all();
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        let mut model = MapModel::new(queue_pairs, cell_payload, tpt);
        let mut sq = SidePort::new("sq", &mut rng, 16);
        let mut rq = SidePort::new("rq", &mut rng, 16);
        let mut tp = SidePort::new("tpt", &mut rng, 64);
        tp.masks = vec![u64::MAX; 64];
        let mut qp_store: HashMap<(u8, u8), u64> = HashMap::new();
        let mut stats = [0u32; STATS];
        let mut cq_pi = 0u32;
        // Expected read responses: value and, for local reads, the clock it is due.
        let mut expected: VecDeque<(u64, Option<u64>)> = VecDeque::new();
        let mut fwd: Option<Forward> = None;
        let mut offering: Option<(bool, u16, u64)> = None;
        let mut issued = 0;
        let mut clock = 0u64;
        let mut counts = [0usize; 3];
        while issued < accesses || !expected.is_empty() || fwd.is_some() {
            clock += 1;
            assert!(clock < 1_000_000, "CSR port stalled");
            if offering.is_none() && issued < accesses && rng.gen_bool(offer) {
                let addr = random_addr(&mut rng, queue_pairs);
                let data = if rng.gen_bool(0.5) {
                    rng.gen()
                } else {
                    rng.gen_range(0..64)
                };
                offering = Some((rng.gen_bool(0.4), addr, data));
            }
            let (write, addr, wdata) = offering.unwrap_or((rng.gen(), rng.gen(), rng.gen()));
            uut.csr_valid.next = offering.is_some();
            uut.csr_write.next = write;
            uut.csr_addr.next = (addr as u64).to_bits();
            uut.csr_wdata.next = wdata.to_bits();
            if rng.gen_bool(0.3) {
                stats[rng.gen_range(0..STATS)] = rng.gen();
            }
            if rng.gen_bool(0.1) {
                cq_pi = rng.gen();
            }
            set_stats(&mut uut, &stats);
            uut.cq_pi.next = cq_pi.to_bits();
            let (r, v, d) = sq.drive(&mut rng, clock);
            uut.m_sq_csr_ready.next = r;
            uut.m_sq_csr_rdata_valid.next = v;
            uut.m_sq_csr_rdata.next = d.to_bits();
            let (r, v, d) = rq.drive(&mut rng, clock);
            uut.m_rq_csr_ready.next = r;
            uut.m_rq_csr_rdata_valid.next = v;
            uut.m_rq_csr_rdata.next = d.to_bits();
            let (r, v, d) = tp.drive(&mut rng, clock);
            uut.m_tpt_csr_ready.next = r;
            uut.m_tpt_csr_rdata_valid.next = v;
            uut.m_tpt_csr_rdata.next = d.to_bits();
            settle(&mut uut);

            // The response of an earlier read.
            if uut.csr_rdata_valid.val() {
                let (want, due) = expected.pop_front().expect("a response nobody asked for");
                assert_eq!(
                    uut.csr_rdata.val().to_u64(),
                    want,
                    "read data, clock {clock}"
                );
                if let Some(due) = due {
                    assert_eq!(clock, due, "local read answered late");
                }
            } else if let Some((_, Some(due))) = expected.front() {
                assert!(clock < *due, "local read not answered on the next clock");
            }
            if fwd.is_none() {
                // Side requests come from registers: none in the clock an access is taken.
                assert!(
                    !uut.m_sq_csr_valid.val()
                        && !uut.m_rq_csr_valid.val()
                        && !uut.m_tpt_csr_valid.val(),
                    "side request with no access in progress, clock {clock}"
                );
            }
            // csr_ready: low exactly while a forwarded access is in progress.
            assert_eq!(
                uut.csr_ready.val(),
                fwd.is_none(),
                "csr_ready, clock {clock}"
            );
            let mut restart = false;
            if let Some((write, addr, wdata)) = offering.filter(|_| uut.csr_ready.val()) {
                offering = None;
                issued += 1;
                match model.decode(addr) {
                    Target::Local => {
                        counts[0] += 1;
                        if write {
                            restart = model.write(addr, wdata);
                        } else {
                            expected.push_back((model.read(addr, &stats, cq_pi), Some(clock + 1)));
                        }
                    }
                    Target::Qp { qp, reg } => {
                        counts[1] += 1;
                        if write {
                            qp_store.insert((qp, reg), wdata);
                        }
                        let (to_sq, to_rq) = qp_register_owners(reg);
                        if !write {
                            let v = qp_store.get(&(qp, reg)).copied().unwrap_or(0);
                            let mask = if to_sq { sq.masks[reg as usize] } else { 0 }
                                | if to_rq { rq.masks[reg as usize] } else { 0 };
                            expected.push_back((v & mask, None));
                        }
                        fwd = Some(Forward {
                            req: (write, qp, reg, wdata),
                            sq: to_sq,
                            rq: to_rq,
                            tpt: false,
                            answers_owed: if write {
                                0
                            } else {
                                to_sq as usize + to_rq as usize
                            },
                        });
                    }
                    Target::Tpt { reg } => {
                        counts[2] += 1;
                        if write {
                            qp_store.insert((0xFF, reg), wdata);
                        } else {
                            let v = qp_store.get(&(0xFF, reg)).copied().unwrap_or(0);
                            expected.push_back((v, None));
                        }
                        fwd = Some(Forward {
                            req: (write, 0, reg, wdata),
                            sq: false,
                            rq: false,
                            tpt: true,
                            answers_owed: if write { 0 } else { 1 },
                        });
                    }
                }
            } else if let Some(f) = fwd.as_mut() {
                // Side ports against the access in progress (not in the clock it is taken:
                // the side requests come from registers).
                let answered = [sq.answering, rq.answering, tp.answering]
                    .iter()
                    .filter(|a| **a)
                    .count();
                f.answers_owed -= answered;
                let sq_req = (
                    uut.m_sq_csr_write.val(),
                    uut.m_sq_csr_qp.val().to_u32() as u8,
                    uut.m_sq_csr_reg.val().to_u32() as u8,
                    uut.m_sq_csr_wdata.val().to_u64(),
                );
                let rq_req = (
                    uut.m_rq_csr_write.val(),
                    uut.m_rq_csr_qp.val().to_u32() as u8,
                    uut.m_rq_csr_reg.val().to_u32() as u8,
                    uut.m_rq_csr_wdata.val().to_u64(),
                );
                let tpt_req = (
                    uut.m_tpt_csr_write.val(),
                    0,
                    uut.m_tpt_csr_reg.val().to_u32() as u8,
                    uut.m_tpt_csr_wdata.val().to_u64(),
                );
                assert_eq!(
                    uut.m_sq_csr_valid.val(),
                    f.sq,
                    "m_sq_csr_valid, clock {clock}"
                );
                assert_eq!(
                    uut.m_rq_csr_valid.val(),
                    f.rq,
                    "m_rq_csr_valid, clock {clock}"
                );
                assert_eq!(
                    uut.m_tpt_csr_valid.val(),
                    f.tpt,
                    "m_tpt_csr_valid, clock {clock}"
                );
                let req = f.req;
                if f.sq {
                    assert_eq!(sq_req, req, "sq side request");
                }
                if f.rq {
                    assert_eq!(rq_req, req, "rq side request");
                }
                if f.tpt {
                    assert_eq!(tpt_req, req, "tpt side request");
                }
                if sq.observe(&mut rng, clock, f.sq, req).is_some() {
                    f.sq = false;
                }
                if rq.observe(&mut rng, clock, f.rq, req).is_some() {
                    f.rq = false;
                }
                if tp.observe(&mut rng, clock, f.tpt, req).is_some() {
                    f.tpt = false;
                }
                if !f.sq && !f.rq && !f.tpt && f.answers_owed == 0 {
                    fwd = None;
                }
            }
            tick(&mut uut);
            model.check_outputs(&uut, restart, clock);
        }
        assert!(counts.iter().all(|c| *c > 0) || tpt.is_none(), "{counts:?}");
        clock
    }

    #[test]
    fn synthesises() {
        let mut uut = NicCsr::new(64, 256, Some(1024));
        uut.connect_all();
        yosys_validate("nic_rtl_nic_csr", &generate_verilog(&uut)).expect("yosys accepts NicCsr");
    }

    #[test]
    fn matches_model_on_random_accesses() {
        let mut rng = ChaCha8Rng::seed_from_u64(0xc5_0001);
        let mut clocks = 0;
        for (queue_pairs, cell_payload, tpt, offer) in [
            (4, 256, Some(1024), 1.0),
            (64, 1024, None, 0.5),
            (1, 8, Some(16), 0.8),
            (37, 512, Some(4096), 0.3),
            (64, 256, Some(256), 1.0),
        ] {
            clocks += run(rng.gen(), queue_pairs, cell_payload, tpt, 1500, offer);
        }
        assert!(clocks > 10_000, "{clocks} clocks");
    }

    /// Reset values of every global register, read back through the port, and of the
    /// cfg outputs.
    #[test]
    fn reset_values() {
        let mut uut = NicCsr::new(12, 512, None);
        uut.connect_all();
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        let model = MapModel::new(12, 512, None);
        model.check_outputs(&uut, false, 0);
        let mut reads = vec![];
        for addr in (0..0x200u16).step_by(8) {
            uut.csr_valid.next = true;
            uut.csr_write.next = false;
            uut.csr_addr.next = (addr as u64).to_bits();
            settle(&mut uut);
            assert!(uut.csr_ready.val());
            tick(&mut uut);
            uut.csr_valid.next = false;
            settle(&mut uut);
            assert!(uut.csr_rdata_valid.val());
            reads.push((addr, uut.csr_rdata.val().to_u64()));
        }
        let get = |a: u16| reads.iter().find(|(addr, _)| *addr == a).unwrap().1;
        assert_eq!(get(csr::NIC_ID), 0x4E49_4331_0001_0000);
        assert_eq!(get(csr::NIC_CONFIG), 12 | 512 << 8 | 8 << 32);
        assert_eq!(get(csr::RETRY_TIMEOUT), 4096);
        assert_eq!(get(csr::RETRY_LIMIT), 7);
        for (addr, v) in reads {
            if ![
                csr::NIC_ID,
                csr::NIC_CONFIG,
                csr::RETRY_TIMEOUT,
                csr::RETRY_LIMIT,
            ]
            .contains(&addr)
            {
                assert_eq!(v, 0, "register {addr:#x} after reset");
            }
        }
        assert_eq!(
            nic_config_value(64, 256, Some(4096)),
            64 | 256 << 8 | 12 << 24 | 8 << 32
        );
    }

    /// Writing `CQ_BASE` pulses `cfg_cq_restart` for one clock and clears `CQ_CI`.
    #[test]
    fn cq_base_write_restarts_the_ring() {
        let mut uut = NicCsr::new(2, 256, None);
        uut.connect_all();
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        let write = |uut: &mut NicCsr, addr: u16, data: u64| {
            uut.csr_valid.next = true;
            uut.csr_write.next = true;
            uut.csr_addr.next = (addr as u64).to_bits();
            uut.csr_wdata.next = data.to_bits();
            tick(uut);
            uut.csr_valid.next = false;
        };
        write(&mut uut, csr::CQ_CI, 5);
        settle(&mut uut);
        assert_eq!(uut.cfg_cq_ci.val().to_u32(), 5);
        assert!(!uut.cfg_cq_restart.val());
        write(&mut uut, csr::CQ_BASE, 0x1234_5677);
        settle(&mut uut);
        assert!(uut.cfg_cq_restart.val());
        assert_eq!(uut.cfg_cq_ci.val().to_u32(), 0);
        assert_eq!(uut.cfg_cq_base.val().to_u32(), 0x1234_5670);
        tick(&mut uut);
        assert!(!uut.cfg_cq_restart.val(), "restart is a one-clock pulse");
        // Read-only registers ignore writes.
        write(&mut uut, csr::NIC_ID, 0);
        write(&mut uut, csr::CQ_PI, 77);
        uut.csr_valid.next = true;
        uut.csr_write.next = false;
        uut.csr_addr.next = (csr::NIC_ID as u64).to_bits();
        tick(&mut uut);
        uut.csr_valid.next = false;
        settle(&mut uut);
        assert_eq!(uut.csr_rdata.val().to_u64(), csr::NIC_ID_VALUE);
    }

    /// A per-QP read waits for both engines, whichever answers last, and returns the OR;
    /// `csr_ready` stays low until then.
    #[test]
    fn per_qp_read_waits_for_both_answers() {
        for (sq_delay, rq_delay) in [(3, 9), (9, 3), (4, 4)] {
            let mut uut = NicCsr::new(8, 256, None);
            uut.connect_all();
            uut.reset.next = true;
            tick(&mut uut);
            uut.reset.next = false;
            uut.csr_valid.next = true;
            uut.csr_write.next = false;
            uut.csr_addr.next = (csr::qp(5, csr::QP_STATUS) as u64).to_bits();
            uut.m_sq_csr_ready.next = true;
            uut.m_rq_csr_ready.next = true;
            tick(&mut uut);
            uut.csr_valid.next = false;
            let mut responses = vec![];
            for t in 1..20 {
                uut.m_sq_csr_rdata_valid.next = t == sq_delay;
                uut.m_sq_csr_rdata.next = 0x00FF_0000_0000_1234u64.to_bits();
                uut.m_rq_csr_rdata_valid.next = t == rq_delay;
                uut.m_rq_csr_rdata.next = 0x0100_ABCD_0000_0000u64.to_bits();
                settle(&mut uut);
                if t == 1 {
                    assert!(uut.m_sq_csr_valid.val() && uut.m_rq_csr_valid.val());
                    assert_eq!(uut.m_sq_csr_qp.val().to_u32(), 5);
                    assert_eq!(uut.m_rq_csr_reg.val().to_u32(), 10);
                } else {
                    assert!(!uut.m_sq_csr_valid.val() && !uut.m_rq_csr_valid.val());
                }
                let last = sq_delay.max(rq_delay);
                assert_eq!(uut.csr_ready.val(), t > last, "csr_ready at {t}");
                if uut.csr_rdata_valid.val() {
                    assert_eq!(t, last + 1);
                    responses.push(uut.csr_rdata.val().to_u64());
                }
                tick(&mut uut);
            }
            assert_eq!(responses, vec![0x01FF_ABCD_0000_1234]);
        }
    }

    /// Without a TPT, TPT offsets are unmapped: reads return 0 at once, nothing is
    /// forwarded.
    #[test]
    fn tpt_range_unmapped_without_tpt() {
        let mut uut = NicCsr::new(8, 256, None);
        uut.connect_all();
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        uut.m_tpt_csr_ready.next = true;
        uut.m_tpt_csr_rdata_valid.next = true;
        uut.m_tpt_csr_rdata.next = u64::MAX.to_bits();
        for addr in [csr::TPT_INDEX, csr::TPT_STATUS, csr::EXC_TIMEOUT] {
            uut.csr_valid.next = true;
            uut.csr_write.next = false;
            uut.csr_addr.next = (addr as u64).to_bits();
            settle(&mut uut);
            assert!(uut.csr_ready.val());
            tick(&mut uut);
            uut.csr_valid.next = false;
            settle(&mut uut);
            assert!(!uut.m_tpt_csr_valid.val());
            assert!(uut.csr_rdata_valid.val());
            assert_eq!(uut.csr_rdata.val().to_u64(), 0);
        }
    }

    #[test]
    #[should_panic(expected = "queue_pairs must be between 1 and 64, got 0")]
    fn rejects_zero_queue_pairs() {
        NicCsr::new(0, 256, None);
    }

    #[test]
    #[should_panic(expected = "queue_pairs must be between 1 and 64, got 65")]
    fn rejects_too_many_queue_pairs() {
        NicCsr::new(65, 256, None);
    }

    #[test]
    #[should_panic(expected = "cell_payload must be a multiple of 8 between 8 and 1024, got 100")]
    fn rejects_bad_cell_payload() {
        NicCsr::new(4, 100, None);
    }

    #[test]
    #[should_panic(expected = "tpt_entries must be a power of two between 16 and 4096, got 8")]
    fn rejects_small_tpt() {
        NicCsr::new(4, 256, Some(8));
    }

    #[test]
    #[should_panic(expected = "tpt_entries must be a power of two between 16 and 4096, got 8192")]
    fn rejects_large_tpt() {
        NicCsr::new(4, 256, Some(8192));
    }

    #[test]
    #[should_panic(expected = "tpt_entries must be a power of two between 16 and 4096, got 100")]
    fn rejects_tpt_not_power_of_two() {
        NicCsr::new(4, 256, Some(100));
    }
}
