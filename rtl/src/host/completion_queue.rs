//! `CompletionQueue`: writes completion queue entries (CQEs) into the completion ring in
//! host memory for the send and the receive side.
//!
//! Follows `docs/nic-architecture.md` ("Completion queue entry": 32-byte CQE at
//! `CQ_BASE + (n mod 2^CQ_SIZE_LOG2) * 32`, sequence word last, a full ring stalls and is
//! never overwritten) and the completion request bundle of `docs/nic-blocks.md`; the word
//! layout is `nic_abi::Cqe::to_words`.
//!
//! Ports (all valid/ready: a beat moves on a rising edge where both are high):
//! - `clock`, `reset` (synchronous, active high: `cq_pi` back to 0, the CQE in flight is
//!   dropped).
//!   Reset steers no handshake (`docs/nic-blocks.md`, "Reset"): what is taken in a reset
//!   clock is dropped at that edge.
//! - Configuration (from `NicCsr`): `cfg_cq_base` (32, 8-aligned), `cfg_cq_size_log2`
//!   (5, 0..=16), `cfg_cq_ci` (32, the driver's consumer index), `cfg_cq_restart` (one-clock
//!   pulse when `CQ_BASE` is written: the producer count restarts at 0).
//! - `cq_pi` (32): CQEs completely written (sequence word accepted) since the last
//!   restart; `NicCsr` shows it as `CQ_PI`.
//! - `s_send_cpl_valid` / `s_send_cpl_ready` with `s_send_cpl`, and the same for
//!   `s_recv_cpl`: the completion request, a [`CompletionRequest`] bundle (`opcode`,
//!   `status`, `qp`, `is_receive`, `has_immediate`, `byte_count`, `wqe_index`, `src_node`,
//!   `src_qp`, `wr_id`, `immediate`).
//! - `m_wr_valid` / `m_wr_ready`, `m_wr_addr` (32), `m_wr_data` (64), `m_wr_strobe` (8,
//!   always 0xFF): the DMA write client.
//!
//! Behaviour: the two ports are served round robin (when both ask, the one not served last
//! goes first). A request is taken only while the ring has room, `cq_pi - cfg_cq_ci <
//! 2^cfg_cq_size_log2` (32-bit wrapping difference), so the n-th CQE is never written while
//! entry `n - 2^size` is unconsumed; a full ring stalls both ports until `cfg_cq_ci`
//! advances. The taken request's fields are registered and written as four beats, words
//! 0, 1, 2, 3 at consecutive addresses, word 3 (immediate and sequence `n + 1`) last; when
//! word 3 is accepted `cq_pi` increments. The fields are written as given (`is_receive`
//! comes from the request, not from the port it arrived on). One CQE is in flight at a
//! time.
//!
//! Latency: request taken at edge t, word 0 shown from edge t+1. Throughput: one CQE per
//! 5 clocks with host memory ready (one clock to take the request, four beats). The room
//! check is registered: a `cfg_cq_ci` advance takes effect one clock later.
//! Limits: `cfg_cq_restart` is meant for a quiet NIC (the driver writes `CQ_BASE` before
//! it posts work). A request is never taken in the restart clock; a CQE already in flight
//! when the pulse comes is finished where it started (old ring, old sequence number) and
//! is not counted in the new ring. `cfg_cq_size_log2` above 16 is not rejected: the ring
//! is then `2^size` entries, wrapping at 2^32 bytes.

use crate::common::{CompletionRequest, RoundRobin};
use crate::sim::ClockedBlock;
use nic_abi::{cqe_field, CQE_BYTES};
use rust_hdl::prelude::*;

/// Where the completion queue is with the CQE it serves.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum CqState {
    /// Waiting for a request and for room in the ring.
    Idle,
    /// Writing the four words of the registered CQE.
    Write,
}

#[derive(LogicBlock)]
pub struct CompletionQueue {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub cfg_cq_base: Signal<In, Bits<32>>,
    pub cfg_cq_size_log2: Signal<In, Bits<5>>,
    pub cfg_cq_ci: Signal<In, Bits<32>>,
    pub cfg_cq_restart: Signal<In, Bit>,
    pub cq_pi: Signal<Out, Bits<32>>,
    pub s_send_cpl_valid: Signal<In, Bit>,
    pub s_send_cpl_ready: Signal<Out, Bit>,
    pub s_send_cpl: Signal<In, CompletionRequest>,
    pub s_recv_cpl_valid: Signal<In, Bit>,
    pub s_recv_cpl_ready: Signal<Out, Bit>,
    pub s_recv_cpl: Signal<In, CompletionRequest>,
    pub m_wr_valid: Signal<Out, Bit>,
    pub m_wr_ready: Signal<In, Bit>,
    pub m_wr_addr: Signal<Out, Bits<32>>,
    pub m_wr_data: Signal<Out, Bits<64>>,
    pub m_wr_strobe: Signal<Out, Bits<8>>,
    state: DFF<CqState>,
    /// Word of the CQE on `m_wr_*` (0..=3).
    beat: DFF<Bits<2>>,
    /// The round robin between the send port (index 0) and the receive port (index 1).
    rr: RoundRobin<2, 1>,
    /// The ring has no room: `cq_pi - cfg_cq_ci >= 2^size`, computed a clock ahead with
    /// the `cq_pi` the CQE in flight will leave behind.
    full: DFF<Bit>,
    /// A restart came while this CQE was in flight: it does not count in the new ring.
    uncounted: DFF<Bit>,
    /// Producer index: CQEs written since the last restart.
    pi: DFF<Bits<32>>,
    /// Address of the beat on `m_wr_*`.
    addr: DFF<Bits<32>>,
    word0: DFF<Bits<64>>,
    word1: DFF<Bits<64>>,
    word2: DFF<Bits<64>>,
    word3: DFF<Bits<64>>,
    /// The receive port's request is the one taken this clock (if any).
    grant_recv: Signal<Local, Bit>,
    /// Idle, room in the ring, no restart: a request may be taken.
    can_take: Signal<Local, Bit>,
    /// The granted port's CQE fields.
    /// The request of the port granted.
    sel: Signal<Local, CompletionRequest>,
    /// The granted port's CQE words (word 3 without the sequence).
    sel_word0: Signal<Local, Bits<64>>,
    sel_word1: Signal<Local, Bits<64>>,
    sel_word2: Signal<Local, Bits<64>>,
    sel_immediate: Signal<Local, Bits<32>>,
    /// `!0 << size`: the bits of an index at or above the ring size.
    high_mask: Signal<Local, Bits<32>>,
    /// Ring slot of the next CQE, `pi mod 2^size`.
    slot: Signal<Local, Bits<32>>,
    /// The CQE in flight will count: the index after it is `pi + 1`.
    pi_counts: Signal<Local, Bit>,
    /// Sequence of the next CQE, `pi + 1` (wrapping at 32 bits).
    cqe_sequence: Signal<Local, Bits<32>>,
    /// `pi - cfg_cq_ci`: entries the driver has not consumed, before the one in flight.
    used: Signal<Local, Bits<32>>,
    /// `0 - cfg_cq_ci`: the same after a restart (computed beside `used`, chosen behind).
    used_restart: Signal<Local, Bits<32>>,
    all_ones: Constant<Bits<32>>,
    /// Field positions from `nic_abi::cqe_field`.
    at_status: Constant<Bits<6>>,
    at_qp: Constant<Bits<6>>,
    at_is_receive: Constant<Bits<6>>,
    at_has_immediate: Constant<Bits<6>>,
    at_byte_count: Constant<Bits<6>>,
    at_src_node: Constant<Bits<6>>,
    at_src_qp: Constant<Bits<6>>,
    at_sequence: Constant<Bits<6>>,
    /// log2 of `nic_abi::CQE_BYTES`: a ring slot's byte offset is `slot << 5`.
    cqe_bytes_log2: Constant<Bits<3>>,
}

impl CompletionQueue {
    /// The completion queue has no parameters (ring base, size and consumer index are
    /// run-time configuration).
    pub fn new() -> Self {
        CompletionQueue {
            clock: Default::default(),
            reset: Default::default(),
            cfg_cq_base: Default::default(),
            cfg_cq_size_log2: Default::default(),
            cfg_cq_ci: Default::default(),
            cfg_cq_restart: Default::default(),
            cq_pi: Default::default(),
            s_send_cpl_valid: Default::default(),
            s_send_cpl_ready: Default::default(),
            s_send_cpl: Default::default(),
            s_recv_cpl_valid: Default::default(),
            s_recv_cpl_ready: Default::default(),
            s_recv_cpl: Default::default(),
            m_wr_valid: Default::default(),
            m_wr_ready: Default::default(),
            m_wr_addr: Default::default(),
            m_wr_data: Default::default(),
            m_wr_strobe: Default::default(),
            state: Default::default(),
            beat: Default::default(),
            rr: RoundRobin::new(),
            full: Default::default(),
            uncounted: Default::default(),
            pi: Default::default(),
            addr: Default::default(),
            word0: Default::default(),
            word1: Default::default(),
            word2: Default::default(),
            word3: Default::default(),
            grant_recv: Default::default(),
            can_take: Default::default(),
            sel: Default::default(),
            sel_word0: Default::default(),
            sel_word1: Default::default(),
            sel_word2: Default::default(),
            sel_immediate: Default::default(),
            high_mask: Default::default(),
            slot: Default::default(),
            cqe_sequence: Default::default(),
            pi_counts: Default::default(),
            used: Default::default(),
            used_restart: Default::default(),
            all_ones: Constant::new(u32::MAX.to_bits()),
            at_status: Constant::new((cqe_field::STATUS_SHIFT as u64).to_bits()),
            at_qp: Constant::new((cqe_field::QP_SHIFT as u64).to_bits()),
            at_is_receive: Constant::new((cqe_field::IS_RECEIVE_BIT as u64).to_bits()),
            at_has_immediate: Constant::new((cqe_field::HAS_IMMEDIATE_BIT as u64).to_bits()),
            at_byte_count: Constant::new((cqe_field::BYTE_COUNT_SHIFT as u64).to_bits()),
            at_src_node: Constant::new((cqe_field::SRC_NODE_SHIFT as u64).to_bits()),
            at_src_qp: Constant::new((cqe_field::SRC_QP_SHIFT as u64).to_bits()),
            at_sequence: Constant::new((cqe_field::SEQUENCE_SHIFT as u64).to_bits()),
            cqe_bytes_log2: Constant::new((CQE_BYTES.trailing_zeros() as u64).to_bits()),
        }
    }
}

impl Default for CompletionQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for CompletionQueue {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, beat, full, uncounted, pi, addr, word0, word1, word2, word3);
        self.rr.clock.next = self.clock.val();
        self.rr.reset.next = self.reset.val();
        self.high_mask.next = self.all_ones.val() << self.cfg_cq_size_log2.val();
        self.slot.next = self.pi.q.val() & !self.high_mask.val();
        self.cqe_sequence.next = self.pi.q.val() + 1;
        // Request side: round robin, only while idle with room in the ring.
        self.rr.s_request.next = bit_cast::<2, 1>(self.s_send_cpl_valid.val().into())
            | (bit_cast::<2, 1>(self.s_recv_cpl_valid.val().into()) << 1);
        self.grant_recv.next = self.rr.m_grant_index.val().any();
        self.rr.s_served_index.next = bit_cast::<1, 1>(self.grant_recv.val().into());
        self.rr.s_served.next = false;
        self.can_take.next =
            (self.state.q.val() == CqState::Idle) & !self.full.q.val() & !self.cfg_cq_restart.val();
        self.s_send_cpl_ready.next = self.can_take.val() & !self.grant_recv.val();
        self.s_recv_cpl_ready.next = self.can_take.val() & self.grant_recv.val();
        self.sel.next = self.s_send_cpl.val();
        if self.grant_recv.val() {
            self.sel.next = self.s_recv_cpl.val();
        }
        self.sel_word2.next = self.sel.val().wr_id;
        self.sel_immediate.next = self.sel.val().immediate;
        // The layout is `nic_abi::cqe_field`'s.
        self.sel_word0.next = bit_cast::<64, 8>(self.sel.val().opcode)
            | (bit_cast::<64, 8>(self.sel.val().status) << self.at_status.val())
            | (bit_cast::<64, 6>(self.sel.val().qp) << self.at_qp.val())
            | (bit_cast::<64, 1>(self.sel.val().is_receive.into()) << self.at_is_receive.val())
            | (bit_cast::<64, 1>(self.sel.val().has_immediate.into())
                << self.at_has_immediate.val())
            | (bit_cast::<64, 32>(self.sel.val().byte_count) << self.at_byte_count.val());
        self.sel_word1.next = bit_cast::<64, 24>(self.sel.val().wqe_index)
            | (bit_cast::<64, 16>(self.sel.val().src_node) << self.at_src_node.val())
            | (bit_cast::<64, 16>(self.sel.val().src_qp) << self.at_src_qp.val());
        if self.can_take.val() & (self.s_send_cpl_valid.val() | self.s_recv_cpl_valid.val()) {
            self.word0.d.next = self.sel_word0.val();
            self.word1.d.next = self.sel_word1.val();
            self.word2.d.next = self.sel_word2.val();
            self.word3.d.next = bit_cast::<64, 32>(self.sel_immediate.val())
                | (bit_cast::<64, 32>(self.cqe_sequence.val()) << self.at_sequence.val());
            self.addr.d.next =
                self.cfg_cq_base.val() + (self.slot.val() << self.cqe_bytes_log2.val());
            self.beat.d.next = 0.into();
            self.uncounted.d.next = false;
            self.rr.s_served.next = true;
            self.state.d.next = CqState::Write;
        }
        // Write side: words 0..3, the sequence word last.
        self.m_wr_valid.next = self.state.q.val() == CqState::Write;
        self.m_wr_addr.next = self.addr.q.val();
        self.m_wr_strobe.next = 0xFF.into();
        self.m_wr_data.next = self.word0.q.val();
        match self.beat.q.val().index() {
            1 => {
                self.m_wr_data.next = self.word1.q.val();
            }
            2 => {
                self.m_wr_data.next = self.word2.q.val();
            }
            3 => {
                self.m_wr_data.next = self.word3.q.val();
            }
            _ => {}
        }
        if (self.state.q.val() == CqState::Write) & self.m_wr_ready.val() {
            self.beat.d.next = self.beat.q.val() + 1;
            self.addr.d.next = self.addr.q.val() + 8;
            if self.beat.q.val() == 3 {
                self.state.d.next = CqState::Idle;
                if !self.uncounted.q.val() {
                    self.pi.d.next = self.pi.q.val() + 1;
                }
            }
        }
        if self.cfg_cq_restart.val() {
            self.pi.d.next = 0.into();
            self.uncounted.d.next = true;
        }
        // Room check a clock ahead, with the index the CQE in flight leaves behind:
        // `used = pi - cfg_cq_ci`, and when the CQE in flight counts, `used + 1` tested
        // without a second adder in series: it reaches a bit of `high_mask` when `used`
        // already does or its low bits are all ones (and it does not wrap to 0). A restart
        // starts from index 0 with nothing in flight: `0 - cfg_cq_ci`, computed beside
        // `used` and chosen behind the test, so the restart is not in front of the adder.
        self.pi_counts.next = (self.state.q.val() == CqState::Write) & !self.uncounted.q.val();
        self.used.next = self.pi.q.val() - self.cfg_cq_ci.val();
        self.used_restart.next = bits::<32>(0) - self.cfg_cq_ci.val();
        self.full.d.next = (self.used.val() & self.high_mask.val()).any();
        if self.pi_counts.val() {
            self.full.d.next = ((self.used.val() & self.high_mask.val()).any()
                | ((self.used.val() | self.high_mask.val()) == self.all_ones.val()))
                & (self.used.val() != self.all_ones.val());
        }
        if self.cfg_cq_restart.val() {
            self.full.d.next = (self.used_restart.val() & self.high_mask.val()).any();
        }
        if self.reset.val() {
            self.state.d.next = CqState::Idle;
            self.pi.d.next = 0.into();
            self.uncounted.d.next = false;
            self.full.d.next = true;
        }
        self.cq_pi.next = self.pi.q.val();
    }
}

impl ClockedBlock for CompletionQueue {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
