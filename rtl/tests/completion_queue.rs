//! `CompletionQueue` in its environment: two `nic_model::Source` producers with idle gaps,
//! host memory a `nic_model::DmaWriteSink` with back-pressure, and a driver that polls the
//! ring; the ring model is checked on every beat.

use nic_abi::{Cqe, CQE_BYTES};
use nic_model::{DmaWriteSink, Source, Throttle};
use nic_rtl::common::CompletionRequest;
use nic_rtl::sim::{settle, tick};
use nic_rtl::CompletionQueue;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

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
    let request = CompletionRequest {
        opcode: (c.opcode as u64).to_bits(),
        status: (c.status as u64).to_bits(),
        qp: (c.qp as u64).to_bits(),
        is_receive: c.is_receive,
        has_immediate: c.has_immediate,
        byte_count: (c.byte_count as u64).to_bits(),
        wqe_index: (c.wqe_index as u64).to_bits(),
        src_node: (c.src_node as u64).to_bits(),
        src_qp: (c.src_qp as u64).to_bits(),
        wr_id: c.wr_id.to_bits(),
        immediate: (c.immediate as u64).to_bits(),
    };
    if port == SEND {
        uut.s_send_cpl_valid.next = valid;
        uut.s_send_cpl.next = request;
    } else {
        uut.s_recv_cpl_valid.next = valid;
        uut.s_recv_cpl.next = request;
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
    /// Probability that the driver polls this clock.
    consume: f64,
    restart: bool,
    /// Host memory's write port (back-pressure; the ring's words).
    mem: DmaWriteSink,
    /// The producers: their requests not yet taken, offered with idle gaps.
    pending: [Source<Cqe>; 2],
    /// Requests taken since the last restart, in order, with their sequence numbers.
    taken: Vec<(usize, Cqe)>,
    /// CQEs completely written since the last restart, and beats of the next one.
    written: usize,
    beat: usize,
    /// CQEs the driver read from the ring, in order.
    consumed: Vec<Cqe>,
    last_port: Option<usize>,
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
            consume: 1.0,
            restart: false,
            mem: DmaWriteSink::new(1.0),
            pending: [
                Source::new([], Throttle::ALWAYS),
                Source::new([], Throttle::ALWAYS),
            ],
            taken: vec![],
            written: 0,
            beat: 0,
            consumed: vec![],
            last_port: None,
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
            let offering = self.pending[port].offer(&mut self.rng);
            let c = self.pending[port].front().copied().unwrap_or_default();
            drive(&mut self.uut, port, offering, &c);
        }
        let mem_ready = self.mem.ready(&mut self.rng);
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
        let offering = |b: &Bench, port: usize| b.pending[port].offering();
        for port in [SEND, RECV] {
            if offering(self, port) && ready[port] {
                assert!(room, "request taken for entry {n} with CQ_CI {}", self.ci);
                assert!(!self.restart, "request taken in the restart clock");
                if offering(self, SEND) && offering(self, RECV) {
                    assert_ne!(self.last_port, Some(port), "round robin: same port twice");
                }
                let mut c = self.pending[port].take();
                c.sequence = n + 1;
                self.taken.push((port, c));
                self.last_port = Some(port);
            }
        }
        if offering(self, SEND) && offering(self, RECV) {
            assert!(!(ready[SEND] && ready[RECV]));
        }
        if !room && (offering(self, SEND) || offering(self, RECV)) {
            self.full_stalls += 1;
        }

        // Write side: every beat against the model of the ring; host memory checks that a
        // beat is held until taken.
        let got = (
            self.uut.m_wr_addr.val().to_u32(),
            self.uut.m_wr_data.val().to_u64(),
        );
        let strobe = self.uut.m_wr_strobe.val().to_u32() as u8;
        let taken = self
            .mem
            .beat(self.uut.m_wr_valid.val(), got.0, got.1, strobe);
        if self.uut.m_wr_valid.val() {
            assert_eq!(strobe, 0xFF);
            let n = self.written as u32;
            let (_, cqe) = self.taken[self.written];
            let want = (
                self.entry_addr(n).wrapping_add(8 * self.beat as u32),
                cqe.to_words()[self.beat],
            );
            assert_eq!(got, want, "CQE {n} word {}", self.beat);
            if taken.is_some() {
                assert!(
                    n.wrapping_sub(self.ci) < self.ring_entries(),
                    "entry {n} written over an unconsumed one (CQ_CI {})",
                    self.ci
                );
                self.beat += 1;
                if self.beat == 4 {
                    self.beat = 0;
                    self.written += 1;
                }
            }
        }

        // The driver polls the entry at CQ_CI for the sequence it expects.
        if self.driver_polls && self.rng.gen_bool(self.consume) {
            let addr = self.entry_addr(self.ci);
            let seq_word = self
                .mem
                .mem
                .get(&addr.wrapping_add(24))
                .copied()
                .unwrap_or(0);
            if (seq_word >> 32) as u32 == self.ci.wrapping_add(1) {
                let words: [u64; 4] =
                    std::array::from_fn(|i| self.mem.mem[&addr.wrapping_add(8 * i as u32)]);
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
        let want = self.taken.len() + self.pending[0].items.len() + self.pending[1].items.len();
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
        b.mem = DmaWriteSink::new(mem_ready);
        b.consume = consume;
        for port in [SEND, RECV] {
            let n = if port == SEND { 120 } else { 90 };
            b.pending[port] = Source::new(
                (0..n).map(|_| random_cqe(&mut rng)).collect::<Vec<_>>(),
                Throttle::new(offer),
            );
        }
        let sent = [b.pending[SEND].items.clone(), b.pending[RECV].items.clone()];
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
        b.pending[port].items = (0..50).map(|_| random_cqe(&mut rng)).collect();
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
    b.pending[SEND].items = (0..6).map(|_| random_cqe(&mut rng)).collect();
    b.pending[RECV].items = (0..6).map(|_| random_cqe(&mut rng)).collect();
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
    assert_eq!(b.mem.mem[&(0x8000 + 24)] >> 32, 5);
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
    b.pending[SEND].items = (0..40).map(|_| random_cqe(&mut rng)).collect();
    b.pending[RECV].items = (0..40).map(|_| random_cqe(&mut rng)).collect();
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
    b.pending[SEND].items = (0..5).map(|_| random_cqe(&mut rng)).collect();
    b.drain();
    assert_eq!(b.uut.cq_pi.val().to_u32(), 5);
    // The driver writes CQ_BASE: new base, CQ_CI 0, restart pulse.
    b.base = 0x9000;
    b.ci = 0;
    b.restart = true;
    b.taken.clear();
    b.consumed.clear();
    b.written = 0;
    b.pending[RECV].items = (0..12).map(|_| random_cqe(&mut rng)).collect();
    b.step();
    assert_eq!(b.uut.cq_pi.val().to_u32(), 0);
    b.drain();
    assert_eq!(b.consumed.len(), 12);
    assert_eq!(
        b.mem.mem[&(0x9000 + 24)] >> 32,
        9,
        "entry 0 of the new ring, second lap"
    );
    assert_eq!(b.consumed[0].sequence, 1);
}

/// A completion queue after reset, with a ring of `2^size_log2` entries at `base`,
/// nothing consumed.
fn ring_after_reset(base: u32, size_log2: u64) -> CompletionQueue {
    let mut uut = CompletionQueue::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    uut.cfg_cq_base.next = base.to_bits();
    uut.cfg_cq_size_log2.next = size_log2.to_bits();
    uut.cfg_cq_ci.next = 0u32.to_bits();
    uut
}

/// A restart while a CQE is being written: the CQE finishes where it started (old
/// ring, old sequence), is not counted, and the next CQE is entry 0 of the new ring.
#[test]
fn restart_during_a_write() {
    let mut rng = ChaCha8Rng::seed_from_u64(29);
    let mut uut = ring_after_reset(0x1000, 4);
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

/// A restart of a full ring: the room check of the clock after the restart pulse starts
/// from the new ring's index 0, so a waiting completion is taken in that clock, not one
/// later (the check a clock ahead sees the restart, not the old producer index).
#[test]
fn a_restart_of_a_full_ring_takes_the_waiting_completion_at_once() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let mut uut = ring_after_reset(0x1000, 2);
    uut.m_wr_ready.next = true;
    let cqe = random_cqe(&mut rng);
    // Four CQEs fill the four-entry ring (none consumed); a fifth waits.
    drive(&mut uut, SEND, true, &cqe);
    for _ in 0..40 {
        tick(&mut uut);
    }
    settle(&mut uut);
    assert_eq!(uut.cq_pi.val().to_u32(), 4);
    assert!(!uut.s_send_cpl_ready.val(), "a full ring takes nothing");
    // The driver moves the CQ: new base, CQ_CI 0, the restart pulse.
    uut.cfg_cq_base.next = 0x5000u32.to_bits();
    uut.cfg_cq_restart.next = true;
    tick(&mut uut);
    uut.cfg_cq_restart.next = false;
    settle(&mut uut);
    assert_eq!(uut.cq_pi.val().to_u32(), 0);
    assert!(
        uut.s_send_cpl_ready.val(),
        "the clock after the restart has room in the new ring"
    );
}
