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
//! - Configuration (from `NicCsr`): `cfg_cq_base` (32, 8-aligned), `cfg_cq_size_log2`
//!   (5, 0..=16), `cfg_cq_ci` (32, the driver's consumer index), `cfg_cq_restart` (one-clock
//!   pulse when `CQ_BASE` is written: the producer count restarts at 0).
//! - `cq_pi` (32): CQEs completely written (sequence word accepted) since the last
//!   restart; `NicCsr` shows it as `CQ_PI`.
//! - `s_send_cpl_*` and `s_recv_cpl_*`: the completion request bundle, `valid`, `ready`,
//!   `opcode` (8), `status` (8), `qp` (6), `is_receive`, `has_immediate`, `byte_count`
//!   (32), `wqe_index` (24), `src_node` (16), `src_qp` (16), `wr_id` (64), `immediate` (32).
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

use crate::common::RoundRobin;
use crate::sim::ClockedBlock;
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
    pub s_send_cpl_opcode: Signal<In, Bits<8>>,
    pub s_send_cpl_status: Signal<In, Bits<8>>,
    pub s_send_cpl_qp: Signal<In, Bits<6>>,
    pub s_send_cpl_is_receive: Signal<In, Bit>,
    pub s_send_cpl_has_immediate: Signal<In, Bit>,
    pub s_send_cpl_byte_count: Signal<In, Bits<32>>,
    pub s_send_cpl_wqe_index: Signal<In, Bits<24>>,
    pub s_send_cpl_src_node: Signal<In, Bits<16>>,
    pub s_send_cpl_src_qp: Signal<In, Bits<16>>,
    pub s_send_cpl_wr_id: Signal<In, Bits<64>>,
    pub s_send_cpl_immediate: Signal<In, Bits<32>>,
    pub s_recv_cpl_valid: Signal<In, Bit>,
    pub s_recv_cpl_ready: Signal<Out, Bit>,
    pub s_recv_cpl_opcode: Signal<In, Bits<8>>,
    pub s_recv_cpl_status: Signal<In, Bits<8>>,
    pub s_recv_cpl_qp: Signal<In, Bits<6>>,
    pub s_recv_cpl_is_receive: Signal<In, Bit>,
    pub s_recv_cpl_has_immediate: Signal<In, Bit>,
    pub s_recv_cpl_byte_count: Signal<In, Bits<32>>,
    pub s_recv_cpl_wqe_index: Signal<In, Bits<24>>,
    pub s_recv_cpl_src_node: Signal<In, Bits<16>>,
    pub s_recv_cpl_src_qp: Signal<In, Bits<16>>,
    pub s_recv_cpl_wr_id: Signal<In, Bits<64>>,
    pub s_recv_cpl_immediate: Signal<In, Bits<32>>,
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
    /// Idle, room in the ring, no restart or reset: a request may be taken.
    can_take: Signal<Local, Bit>,
    /// The granted port's CQE words (word 3 without the sequence).
    sel_word0: Signal<Local, Bits<64>>,
    sel_word1: Signal<Local, Bits<64>>,
    sel_word2: Signal<Local, Bits<64>>,
    sel_immediate: Signal<Local, Bits<32>>,
    /// `!0 << size`: the bits of an index at or above the ring size.
    high_mask: Signal<Local, Bits<32>>,
    /// Ring slot of the next CQE, `pi mod 2^size`.
    slot: Signal<Local, Bits<32>>,
    /// The producer index the room check starts from: `pi`, or 0 on a restart.
    pi_base: Signal<Local, Bits<32>>,
    /// The CQE in flight will count: the index after it is `pi_base + 1`.
    pi_counts: Signal<Local, Bit>,
    /// Sequence of the next CQE, `pi + 1` (wrapping at 32 bits).
    cqe_sequence: Signal<Local, Bits<32>>,
    /// `pi_base - cfg_cq_ci`: entries the driver has not consumed, before the one in flight.
    used: Signal<Local, Bits<32>>,
    all_ones: Constant<Bits<32>>,
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
            s_send_cpl_opcode: Default::default(),
            s_send_cpl_status: Default::default(),
            s_send_cpl_qp: Default::default(),
            s_send_cpl_is_receive: Default::default(),
            s_send_cpl_has_immediate: Default::default(),
            s_send_cpl_byte_count: Default::default(),
            s_send_cpl_wqe_index: Default::default(),
            s_send_cpl_src_node: Default::default(),
            s_send_cpl_src_qp: Default::default(),
            s_send_cpl_wr_id: Default::default(),
            s_send_cpl_immediate: Default::default(),
            s_recv_cpl_valid: Default::default(),
            s_recv_cpl_ready: Default::default(),
            s_recv_cpl_opcode: Default::default(),
            s_recv_cpl_status: Default::default(),
            s_recv_cpl_qp: Default::default(),
            s_recv_cpl_is_receive: Default::default(),
            s_recv_cpl_has_immediate: Default::default(),
            s_recv_cpl_byte_count: Default::default(),
            s_recv_cpl_wqe_index: Default::default(),
            s_recv_cpl_src_node: Default::default(),
            s_recv_cpl_src_qp: Default::default(),
            s_recv_cpl_wr_id: Default::default(),
            s_recv_cpl_immediate: Default::default(),
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
            sel_word0: Default::default(),
            sel_word1: Default::default(),
            sel_word2: Default::default(),
            sel_immediate: Default::default(),
            high_mask: Default::default(),
            slot: Default::default(),
            cqe_sequence: Default::default(),
            pi_base: Default::default(),
            pi_counts: Default::default(),
            used: Default::default(),
            all_ones: Constant::new(u32::MAX.to_bits()),
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
        self.can_take.next = (self.state.q.val() == CqState::Idle)
            & !self.full.q.val()
            & !self.cfg_cq_restart.val()
            & !self.reset.val();
        self.s_send_cpl_ready.next = self.can_take.val() & !self.grant_recv.val();
        self.s_recv_cpl_ready.next = self.can_take.val() & self.grant_recv.val();
        self.sel_word0.next = bit_cast::<64, 8>(self.s_send_cpl_opcode.val())
            | (bit_cast::<64, 8>(self.s_send_cpl_status.val()) << 8)
            | (bit_cast::<64, 6>(self.s_send_cpl_qp.val()) << 16)
            | (bit_cast::<64, 1>(self.s_send_cpl_is_receive.val().into()) << 24)
            | (bit_cast::<64, 1>(self.s_send_cpl_has_immediate.val().into()) << 25)
            | (bit_cast::<64, 32>(self.s_send_cpl_byte_count.val()) << 32);
        self.sel_word1.next = bit_cast::<64, 24>(self.s_send_cpl_wqe_index.val())
            | (bit_cast::<64, 16>(self.s_send_cpl_src_node.val()) << 32)
            | (bit_cast::<64, 16>(self.s_send_cpl_src_qp.val()) << 48);
        self.sel_word2.next = self.s_send_cpl_wr_id.val();
        self.sel_immediate.next = self.s_send_cpl_immediate.val();
        if self.grant_recv.val() {
            self.sel_word0.next = bit_cast::<64, 8>(self.s_recv_cpl_opcode.val())
                | (bit_cast::<64, 8>(self.s_recv_cpl_status.val()) << 8)
                | (bit_cast::<64, 6>(self.s_recv_cpl_qp.val()) << 16)
                | (bit_cast::<64, 1>(self.s_recv_cpl_is_receive.val().into()) << 24)
                | (bit_cast::<64, 1>(self.s_recv_cpl_has_immediate.val().into()) << 25)
                | (bit_cast::<64, 32>(self.s_recv_cpl_byte_count.val()) << 32);
            self.sel_word1.next = bit_cast::<64, 24>(self.s_recv_cpl_wqe_index.val())
                | (bit_cast::<64, 16>(self.s_recv_cpl_src_node.val()) << 32)
                | (bit_cast::<64, 16>(self.s_recv_cpl_src_qp.val()) << 48);
            self.sel_word2.next = self.s_recv_cpl_wr_id.val();
            self.sel_immediate.next = self.s_recv_cpl_immediate.val();
        }
        if self.can_take.val() & (self.s_send_cpl_valid.val() | self.s_recv_cpl_valid.val()) {
            self.word0.d.next = self.sel_word0.val();
            self.word1.d.next = self.sel_word1.val();
            self.word2.d.next = self.sel_word2.val();
            self.word3.d.next = bit_cast::<64, 32>(self.sel_immediate.val())
                | (bit_cast::<64, 32>(self.cqe_sequence.val()) << 32);
            self.addr.d.next = self.cfg_cq_base.val() + (self.slot.val() << 5);
            self.beat.d.next = 0.into();
            self.uncounted.d.next = false;
            self.rr.s_served.next = true;
            self.state.d.next = CqState::Write;
        }
        // Write side: words 0..3, the sequence word last.
        self.m_wr_valid.next = (self.state.q.val() == CqState::Write) & !self.reset.val();
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
        // `used = base - cfg_cq_ci` with base = pi (0 on a restart), and when the CQE in
        // flight counts, `used + 1` tested without a second adder in series: it reaches a
        // bit of `high_mask` when `used` already does or its low bits are all ones (and
        // it does not wrap to 0).
        self.pi_base.next = self.pi.q.val();
        self.pi_counts.next = (self.state.q.val() == CqState::Write) & !self.uncounted.q.val();
        if self.cfg_cq_restart.val() {
            self.pi_base.next = 0.into();
            self.pi_counts.next = false;
        }
        self.used.next = self.pi_base.val() - self.cfg_cq_ci.val();
        self.full.d.next = (self.used.val() & self.high_mask.val()).any();
        if self.pi_counts.val() {
            self.full.d.next = ((self.used.val() & self.high_mask.val()).any()
                | ((self.used.val() | self.high_mask.val()) == self.all_ones.val()))
                & (self.used.val() != self.all_ones.val());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{settle, tick};
    use nic_abi::{Cqe, CQE_BYTES};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::{HashMap, VecDeque};

    const SEND: usize = 0;
    const RECV: usize = 1;

    fn random_cqe(rng: &mut ChaCha8Rng) -> Cqe {
        Cqe {
            opcode: rng.gen(),
            status: rng.gen(),
            qp: rng.gen_range(0..64),
            is_receive: rng.gen(),
            has_immediate: rng.gen(),
            byte_count: rng.gen(),
            wqe_index: rng.gen_range(0..1 << 24),
            src_node: rng.gen(),
            src_qp: rng.gen(),
            wr_id: rng.gen(),
            immediate: rng.gen(),
            sequence: 0,
        }
    }

    /// Drive one port's request bundle: `valid` and the fields of `c`.
    fn drive(uut: &mut CompletionQueue, port: usize, valid: bool, c: &Cqe) {
        if port == SEND {
            uut.s_send_cpl_valid.next = valid;
            uut.s_send_cpl_opcode.next = (c.opcode as u64).to_bits();
            uut.s_send_cpl_status.next = (c.status as u64).to_bits();
            uut.s_send_cpl_qp.next = (c.qp as u64).to_bits();
            uut.s_send_cpl_is_receive.next = c.is_receive;
            uut.s_send_cpl_has_immediate.next = c.has_immediate;
            uut.s_send_cpl_byte_count.next = (c.byte_count as u64).to_bits();
            uut.s_send_cpl_wqe_index.next = (c.wqe_index as u64).to_bits();
            uut.s_send_cpl_src_node.next = (c.src_node as u64).to_bits();
            uut.s_send_cpl_src_qp.next = (c.src_qp as u64).to_bits();
            uut.s_send_cpl_wr_id.next = c.wr_id.to_bits();
            uut.s_send_cpl_immediate.next = (c.immediate as u64).to_bits();
        } else {
            uut.s_recv_cpl_valid.next = valid;
            uut.s_recv_cpl_opcode.next = (c.opcode as u64).to_bits();
            uut.s_recv_cpl_status.next = (c.status as u64).to_bits();
            uut.s_recv_cpl_qp.next = (c.qp as u64).to_bits();
            uut.s_recv_cpl_is_receive.next = c.is_receive;
            uut.s_recv_cpl_has_immediate.next = c.has_immediate;
            uut.s_recv_cpl_byte_count.next = (c.byte_count as u64).to_bits();
            uut.s_recv_cpl_wqe_index.next = (c.wqe_index as u64).to_bits();
            uut.s_recv_cpl_src_node.next = (c.src_node as u64).to_bits();
            uut.s_recv_cpl_src_qp.next = (c.src_qp as u64).to_bits();
            uut.s_recv_cpl_wr_id.next = c.wr_id.to_bits();
            uut.s_recv_cpl_immediate.next = (c.immediate as u64).to_bits();
        }
    }

    /// The completion queue in its environment: two producers that offer requests with
    /// idle gaps, host memory with back-pressure, and a driver that polls the ring for
    /// the sequence it expects and advances `CQ_CI`. The model of the ring (which CQE
    /// goes where, with which words) is checked on every beat.
    struct Bench {
        uut: CompletionQueue,
        rng: ChaCha8Rng,
        base: u32,
        size_log2: u32,
        /// The driver's consumer index, fed to `cfg_cq_ci`.
        ci: u32,
        /// Whether the driver consumes entries at all (false: the ring fills up).
        driver_polls: bool,
        /// Probabilities: a producer offers its next request, host memory is ready, the
        /// driver polls this clock.
        offer: f64,
        mem_ready: f64,
        consume: f64,
        restart: bool,
        mem: HashMap<u32, u64>,
        pending: [VecDeque<Cqe>; 2],
        offering: [bool; 2],
        /// Requests taken since the last restart, in order, with their sequence numbers.
        taken: Vec<(usize, Cqe)>,
        /// CQEs completely written since the last restart, and beats of the next one.
        written: usize,
        beat: usize,
        /// CQEs the driver read from the ring, in order.
        consumed: Vec<Cqe>,
        last_port: Option<usize>,
        /// The beat shown last clock and not taken.
        shown: Option<(u32, u64)>,
        cycles: u64,
        /// Clocks with a request offered and refused while the ring was full.
        full_stalls: u64,
    }

    impl Bench {
        fn new(seed: u64, base: u32, size_log2: u32) -> Self {
            let mut uut = CompletionQueue::new();
            uut.connect_all();
            uut.reset.next = true;
            tick(&mut uut);
            uut.reset.next = false;
            Bench {
                uut,
                rng: ChaCha8Rng::seed_from_u64(seed),
                base,
                size_log2,
                ci: 0,
                driver_polls: true,
                offer: 1.0,
                mem_ready: 1.0,
                consume: 1.0,
                restart: false,
                mem: HashMap::new(),
                pending: [VecDeque::new(), VecDeque::new()],
                offering: [false; 2],
                taken: vec![],
                written: 0,
                beat: 0,
                consumed: vec![],
                last_port: None,
                shown: None,
                cycles: 0,
                full_stalls: 0,
            }
        }

        fn ring_entries(&self) -> u32 {
            1 << self.size_log2
        }

        fn entry_addr(&self, n: u32) -> u32 {
            let slot = n & (self.ring_entries() - 1);
            self.base.wrapping_add(slot * CQE_BYTES)
        }

        /// One clock.
        fn step(&mut self) {
            self.cycles += 1;
            for port in [SEND, RECV] {
                if !self.offering[port] {
                    self.offering[port] =
                        !self.pending[port].is_empty() && self.rng.gen_bool(self.offer);
                }
                let c = self.pending[port].front().copied().unwrap_or_default();
                drive(&mut self.uut, port, self.offering[port], &c);
            }
            let mem_ready = self.rng.gen_bool(self.mem_ready);
            self.uut.m_wr_ready.next = mem_ready;
            self.uut.cfg_cq_base.next = self.base.to_bits();
            self.uut.cfg_cq_size_log2.next = (self.size_log2 as u64).to_bits();
            self.uut.cfg_cq_ci.next = self.ci.to_bits();
            self.uut.cfg_cq_restart.next = self.restart;
            settle(&mut self.uut);

            // Request side.
            let ready = [
                self.uut.s_send_cpl_ready.val(),
                self.uut.s_recv_cpl_ready.val(),
            ];
            let n = self.taken.len() as u32;
            let room = n.wrapping_sub(self.ci) < self.ring_entries();
            for port in [SEND, RECV] {
                if self.offering[port] && ready[port] {
                    assert!(room, "request taken for entry {n} with CQ_CI {}", self.ci);
                    assert!(!self.restart, "request taken in the restart clock");
                    if self.offering[SEND] && self.offering[RECV] {
                        assert_ne!(self.last_port, Some(port), "round robin: same port twice");
                    }
                    let mut c = self.pending[port].pop_front().unwrap();
                    c.sequence = n + 1;
                    self.taken.push((port, c));
                    self.offering[port] = false;
                    self.last_port = Some(port);
                }
            }
            if self.offering[SEND] && self.offering[RECV] {
                assert!(!(ready[SEND] && ready[RECV]));
            }
            if !room && (self.offering[SEND] || self.offering[RECV]) {
                self.full_stalls += 1;
            }

            // Write side: every beat against the model of the ring.
            if self.uut.m_wr_valid.val() {
                let got = (
                    self.uut.m_wr_addr.val().to_u32(),
                    self.uut.m_wr_data.val().to_u64(),
                );
                assert_eq!(self.uut.m_wr_strobe.val().to_u32(), 0xFF);
                if let Some(prev) = self.shown {
                    assert_eq!(prev, got, "m_wr changed before it was taken");
                }
                let n = self.written as u32;
                let (_, cqe) = self.taken[self.written];
                let want = (
                    self.entry_addr(n).wrapping_add(8 * self.beat as u32),
                    cqe.to_words()[self.beat],
                );
                assert_eq!(got, want, "CQE {n} word {}", self.beat);
                self.shown = (!mem_ready).then_some(got);
                if mem_ready {
                    assert!(
                        n.wrapping_sub(self.ci) < self.ring_entries(),
                        "entry {n} written over an unconsumed one (CQ_CI {})",
                        self.ci
                    );
                    self.mem.insert(got.0, got.1);
                    self.beat += 1;
                    if self.beat == 4 {
                        self.beat = 0;
                        self.written += 1;
                    }
                }
            } else {
                assert!(
                    self.shown.is_none(),
                    "m_wr_valid dropped before the beat was taken"
                );
            }

            // The driver polls the entry at CQ_CI for the sequence it expects.
            if self.driver_polls && self.rng.gen_bool(self.consume) {
                let addr = self.entry_addr(self.ci);
                let seq_word = self.mem.get(&addr.wrapping_add(24)).copied().unwrap_or(0);
                if (seq_word >> 32) as u32 == self.ci.wrapping_add(1) {
                    let words: [u64; 4] =
                        std::array::from_fn(|i| self.mem[&addr.wrapping_add(8 * i as u32)]);
                    self.consumed.push(Cqe::from_words(&words));
                    self.ci = self.ci.wrapping_add(1);
                }
            }
            self.restart = false;
            tick(&mut self.uut);
            assert_eq!(
                self.uut.cq_pi.val().to_u32() as usize,
                self.written,
                "cq_pi after clock {}",
                self.cycles
            );
        }

        /// Step until every pending request is written and consumed.
        fn drain(&mut self) {
            let want = self.taken.len() + self.pending[0].len() + self.pending[1].len();
            while self.consumed.len() < want {
                assert!(self.cycles < 5_000_000, "completion queue stalled");
                self.step();
            }
        }
    }

    #[test]
    fn synthesises() {
        let mut uut = CompletionQueue::new();
        uut.connect_all();
        yosys_validate("nic_rtl_completion_queue", &generate_verilog(&uut))
            .expect("yosys accepts CompletionQueue");
    }

    /// Random completions on both ports with idle gaps, host-memory back-pressure and a
    /// driver that polls at random: every CQE is `Cqe::to_words` of its request with
    /// sequence n + 1, at `base + (n mod 2^size) * 32`, words in order (sequence last),
    /// never over an unconsumed entry; each port's completions keep their order.
    #[test]
    fn matches_model_with_gaps_and_backpressure() {
        let mut rng = ChaCha8Rng::seed_from_u64(0xc0_0001);
        let mut total_cycles = 0;
        for (size_log2, offer, mem_ready, consume) in [
            (4, 1.0, 1.0, 1.0),
            (0, 1.0, 1.0, 1.0),
            (1, 0.3, 0.5, 0.2),
            (3, 1.0, 0.6, 0.1),
            (2, 0.5, 1.0, 0.05),
            (16, 0.7, 0.7, 0.5),
        ] {
            let base = rng.gen::<u32>() & !7;
            let mut b = Bench::new(rng.gen(), base, size_log2);
            b.offer = offer;
            b.mem_ready = mem_ready;
            b.consume = consume;
            for port in [SEND, RECV] {
                let n = if port == SEND { 120 } else { 90 };
                b.pending[port] = (0..n).map(|_| random_cqe(&mut rng)).collect();
            }
            let sent = b.pending.clone();
            b.drain();
            total_cycles += b.cycles;
            let taken: Vec<Cqe> = b.taken.iter().map(|(_, c)| *c).collect();
            assert_eq!(b.consumed, taken, "driver saw other CQEs than were taken");
            for port in [SEND, RECV] {
                let got: Vec<Cqe> = b
                    .taken
                    .iter()
                    .filter(|(p, _)| *p == port)
                    .map(|(_, c)| Cqe { sequence: 0, ..*c })
                    .collect();
                assert_eq!(got, Vec::from(sent[port].clone()), "port {port} order");
            }
            if consume < 0.5 && size_log2 < 4 {
                assert!(
                    b.full_stalls > 0,
                    "the ring never filled (size_log2 {size_log2})"
                );
            }
        }
        assert!(total_cycles > 10_000, "{total_cycles} clocks");
    }

    /// Both ports always asking, host memory always ready, a fast driver: one CQE per
    /// 5 clocks, ports alternating (plus one clock after reset for the room check).
    #[test]
    fn one_cqe_per_five_clocks_alternating() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let mut b = Bench::new(22, 0x1000, 6);
        for port in [SEND, RECV] {
            b.pending[port] = (0..50).map(|_| random_cqe(&mut rng)).collect();
        }
        while b.written < 100 {
            b.step();
        }
        assert_eq!(b.cycles, 1 + 500);
        for (i, (port, _)) in b.taken.iter().enumerate() {
            assert_eq!(*port, i % 2, "CQE {i} out of turn");
        }
    }

    /// A ring of 4 entries and a driver that does not consume: 4 CQEs are written, then
    /// both ports stall; each `CQ_CI` advance lets exactly that many more through.
    #[test]
    fn full_ring_stalls_and_resumes() {
        let mut rng = ChaCha8Rng::seed_from_u64(23);
        let mut b = Bench::new(24, 0x8000, 2);
        b.driver_polls = false;
        b.pending[SEND] = (0..6).map(|_| random_cqe(&mut rng)).collect();
        b.pending[RECV] = (0..6).map(|_| random_cqe(&mut rng)).collect();
        for _ in 0..300 {
            b.step();
        }
        assert_eq!(b.written, 4);
        assert_eq!(b.taken.len(), 4);
        settle(&mut b.uut);
        assert!(!b.uut.s_send_cpl_ready.val() && !b.uut.s_recv_cpl_ready.val());
        // Free one entry: one more CQE (entry 4, slot 0, sequence 5).
        b.ci = 1;
        for _ in 0..300 {
            b.step();
        }
        assert_eq!(b.written, 5);
        assert_eq!(b.mem[&(0x8000 + 24)] >> 32, 5);
        // Free three: three more.
        b.ci = 4;
        for _ in 0..300 {
            b.step();
        }
        assert_eq!(b.written, 8);
        // The driver catches up (from entry 4): everything drains.
        b.driver_polls = true;
        while b.consumed.len() < 8 {
            assert!(b.cycles < 10_000, "completion queue stalled");
            b.step();
        }
        assert_eq!(b.written, 12);
        assert_eq!(b.ci, 12);
        assert!(b.full_stalls > 500);
    }

    /// A one-entry ring: every CQE waits for the previous one to be consumed.
    #[test]
    fn one_entry_ring() {
        let mut rng = ChaCha8Rng::seed_from_u64(25);
        let mut b = Bench::new(26, 0x40, 0);
        b.consume = 0.1;
        b.pending[SEND] = (0..40).map(|_| random_cqe(&mut rng)).collect();
        b.pending[RECV] = (0..40).map(|_| random_cqe(&mut rng)).collect();
        b.drain();
        assert_eq!(b.consumed.len(), 80);
        assert!(b
            .consumed
            .iter()
            .enumerate()
            .all(|(i, c)| c.sequence == i as u32 + 1));
    }

    /// `cfg_cq_restart` while quiet: `cq_pi` restarts at 0 and the next CQE is entry 0
    /// (sequence 1) of the new ring.
    #[test]
    fn restart_starts_a_new_ring() {
        let mut rng = ChaCha8Rng::seed_from_u64(27);
        let mut b = Bench::new(28, 0x2000, 3);
        b.pending[SEND] = (0..5).map(|_| random_cqe(&mut rng)).collect();
        b.drain();
        assert_eq!(b.uut.cq_pi.val().to_u32(), 5);
        // The driver writes CQ_BASE: new base, CQ_CI 0, restart pulse.
        b.base = 0x9000;
        b.ci = 0;
        b.restart = true;
        b.taken.clear();
        b.consumed.clear();
        b.written = 0;
        b.pending[RECV] = (0..12).map(|_| random_cqe(&mut rng)).collect();
        b.step();
        assert_eq!(b.uut.cq_pi.val().to_u32(), 0);
        b.drain();
        assert_eq!(b.consumed.len(), 12);
        assert_eq!(
            b.mem[&(0x9000 + 24)] >> 32,
            9,
            "entry 0 of the new ring, second lap"
        );
        assert_eq!(b.consumed[0].sequence, 1);
    }

    /// A restart while a CQE is being written: the CQE finishes where it started (old
    /// ring, old sequence), is not counted, and the next CQE is entry 0 of the new ring.
    #[test]
    fn restart_during_a_write() {
        let mut rng = ChaCha8Rng::seed_from_u64(29);
        let mut uut = CompletionQueue::new();
        uut.connect_all();
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        uut.cfg_cq_base.next = 0x1000u32.to_bits();
        uut.cfg_cq_size_log2.next = 4u64.to_bits();
        uut.cfg_cq_ci.next = 0u32.to_bits();
        let first = random_cqe(&mut rng);
        let second = random_cqe(&mut rng);
        // Two CQEs into the old ring (a clock for the room check after reset, then 5 each).
        drive(&mut uut, SEND, true, &first);
        uut.m_wr_ready.next = true;
        for _ in 0..11 {
            tick(&mut uut);
        }
        assert_eq!(uut.cq_pi.val().to_u32(), 2);
        // Third CQE: taken, then its beats held off.
        drive(&mut uut, SEND, true, &second);
        uut.m_wr_ready.next = false;
        tick(&mut uut);
        drive(&mut uut, SEND, false, &second);
        tick(&mut uut);
        settle(&mut uut);
        assert!(uut.m_wr_valid.val());
        assert_eq!(uut.m_wr_addr.val().to_u32(), 0x1000 + 2 * 32);
        // Restart into a new ring while the beat waits.
        uut.cfg_cq_base.next = 0x5000u32.to_bits();
        uut.cfg_cq_restart.next = true;
        tick(&mut uut);
        uut.cfg_cq_restart.next = false;
        let mut beats = vec![];
        uut.m_wr_ready.next = true;
        for _ in 0..6 {
            settle(&mut uut);
            if uut.m_wr_valid.val() {
                beats.push((uut.m_wr_addr.val().to_u32(), uut.m_wr_data.val().to_u64()));
            }
            tick(&mut uut);
        }
        let want: Vec<(u32, u64)> = Cqe {
            sequence: 3,
            ..second
        }
        .to_words()
        .iter()
        .enumerate()
        .map(|(i, w)| (0x1000 + 2 * 32 + 8 * i as u32, *w))
        .collect();
        assert_eq!(beats, want);
        assert_eq!(uut.cq_pi.val().to_u32(), 0);
        // The next CQE is entry 0 of the new ring with sequence 1.
        drive(&mut uut, RECV, true, &first);
        tick(&mut uut);
        drive(&mut uut, RECV, false, &first);
        let mut beats = vec![];
        for _ in 0..6 {
            settle(&mut uut);
            if uut.m_wr_valid.val() {
                beats.push((uut.m_wr_addr.val().to_u32(), uut.m_wr_data.val().to_u64()));
            }
            tick(&mut uut);
        }
        let want: Vec<(u32, u64)> = Cqe {
            sequence: 1,
            ..first
        }
        .to_words()
        .iter()
        .enumerate()
        .map(|(i, w)| (0x5000 + 8 * i as u32, *w))
        .collect();
        assert_eq!(beats, want);
        assert_eq!(uut.cq_pi.val().to_u32(), 1);
    }
}
