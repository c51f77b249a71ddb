//! `ResponseGenerator` against its slot model, clock by clock, with random owes,
//! back-pressure on the message and payload handshakes, and host memory a
//! `nic_model::DmaReadServer` (latency, gaps, request back-pressure).

use nic_abi::Syndrome;
use nic_model::{host_bytes, host_word, DmaReadServer};
use nic_rtl::cell::format::{opcode, Message};
use nic_rtl::common::OwedResponse;
use nic_rtl::responder::response_generator::{kind, MAX_BURST_WORDS};
use nic_rtl::sim::{settle, tick};
use nic_rtl::ResponseGenerator;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// The DMA read port: host memory of [`host_word`], answering each request after a random
/// latency with random gaps.
type Dma = DmaReadServer;

/// One owed response as the `ReceiveQueueEngine` hands it over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Owe {
    qp: usize,
    kind: u64,
    psn: u32,
    syndrome: u8,
    /// `s_owe.refusal`: the AETH's refusal bits (ACK and NACK only).
    refusal: u32,
    addr: u32,
    length: u32,
    value: u64,
    dest_node: u16,
    dest_qp: u16,
    resync: bool,
}

fn ack(qp: usize, psn: u32) -> Owe {
    Owe {
        qp,
        kind: kind::ACK,
        psn,
        dest_node: 0x100 + qp as u16,
        dest_qp: 0x200 + qp as u16,
        ..Default::default()
    }
}

fn nack(qp: usize, psn: u32, syndrome: u8) -> Owe {
    Owe {
        kind: kind::NACK,
        syndrome,
        ..ack(qp, psn)
    }
}

fn read(qp: usize, psn: u32, addr: u32, length: u32) -> Owe {
    Owe {
        kind: kind::READ_RESPONSE,
        addr,
        length,
        ..ack(qp, psn)
    }
}

fn atomic(qp: usize, psn: u32, value: u64) -> Owe {
    Owe {
        kind: kind::ATOMIC_RESPONSE,
        value,
        ..ack(qp, psn)
    }
}

/// The message the generator must build for `owe` served from QP `q`.
fn expected_message(o: &Owe, node_id: u16) -> (Message, usize) {
    let (op, len, imm) = match o.kind {
        kind::ACK => (opcode::ACK, 0, Some(o.syndrome as u32 | o.refusal << 8)),
        kind::NACK => (opcode::NACK, 0, Some(o.syndrome as u32 | o.refusal << 8)),
        kind::READ_RESPONSE => (opcode::RDMA_READ_RESPONSE, o.length as usize, None),
        _ => (opcode::ATOMIC_RESPONSE, 8, None),
    };
    let m = Message {
        opcode: op,
        dest_node: o.dest_node,
        src_node: node_id,
        dest_qp: o.dest_qp,
        src_qp: o.qp as u16,
        psn: o.psn,
        immediate: imm,
        resync: o.resync,
        ..Default::default()
    };
    (m, len)
}

/// Where the model's transmit side is (one phase per clock of the generator).
#[derive(Clone, Debug)]
enum Phase {
    /// Picks the next slot at the coming edge if any holds an item.
    Idle,
    /// Picked at the last edge; the message is valid from the next clock.
    Load(Owe),
    Message(Owe),
    ReadRequest {
        owe: Owe,
        addr: u32,
        burst: u64,
    },
    ReadData {
        owe: Owe,
        addr: u32,
        burst: u64,
    },
    Atomic(Owe),
}

/// The eight `stat_nack_sent_*` counters, syndrome 0 first.
fn nacks_sent(u: &ResponseGenerator) -> [u32; 8] {
    [
        &u.stat_nack_sent_0,
        &u.stat_nack_sent_1,
        &u.stat_nack_sent_2,
        &u.stat_nack_sent_3,
        &u.stat_nack_sent_4,
        &u.stat_nack_sent_5,
        &u.stat_nack_sent_6,
        &u.stat_nack_sent_7,
    ]
    .map(|s| s.val().to_u32())
}

/// Plain-Rust model of the slots and of the round-robin transmit side.
struct SlotModel {
    queue_pairs: usize,
    /// Items waiting in each QP's slot.
    slots: Vec<Option<Owe>>,
    /// The follow-up waiting behind each QP's busy item (an ACK or a NACK).
    follow: Vec<Option<Owe>>,
    /// Bit q: QP q's busy item is a promoted follow-up NACK (nothing is kept behind
    /// it until it has been handed over).
    promoted_nack: u64,
    phase: Phase,
    /// Payload words of the READ response still to come.
    words_left: u64,
    words_sent: u64,
    /// Round robin: the search for the next slot starts here.
    rr_next: usize,
    responses: u32,
    nacks: [u32; 8],
}

impl SlotModel {
    fn new(queue_pairs: usize) -> Self {
        SlotModel {
            queue_pairs,
            slots: vec![None; 64],
            follow: vec![None; 64],
            promoted_nack: 0,
            phase: Phase::Idle,
            words_left: 0,
            words_sent: 0,
            rr_next: 0,
            responses: 0,
            nacks: [0; 8],
        }
    }

    /// The item in flight when it keeps its slot busy (a NACK or a response).
    fn in_flight(&self) -> Option<&Owe> {
        match &self.phase {
            Phase::Idle => None,
            Phase::Load(o)
            | Phase::Message(o)
            | Phase::ReadRequest { owe: o, .. }
            | Phase::ReadData { owe: o, .. }
            | Phase::Atomic(o) => Some(o),
        }
        .filter(|o| o.kind != kind::ACK)
    }

    fn busy(&self) -> u64 {
        let mut b = 0u64;
        for (q, s) in self.slots.iter().enumerate() {
            if matches!(s, Some(o) if o.kind != kind::ACK) {
                b |= 1 << q;
            }
        }
        if let Some(o) = self.in_flight() {
            b |= 1 << o.qp;
        }
        b
    }

    /// Whether an owe offered now would be written into its slot.
    fn accepts(&self, o: &Owe) -> bool {
        o.qp < self.queue_pairs && self.busy() >> o.qp & 1 == 0
    }

    /// Whether an owe offered now would wait behind its slot's busy item: an ACK or
    /// a NACK, unless a NACK already waits there (or is the promoted busy item).
    fn follows(&self, o: &Owe) -> bool {
        o.qp < self.queue_pairs
            && self.busy() >> o.qp & 1 == 1
            && o.kind <= kind::NACK
            && self.promoted_nack >> o.qp & 1 == 0
            && !matches!(self.follow[o.qp], Some(f) if f.kind == kind::NACK)
    }

    fn burst(words: u64) -> u64 {
        words.min(MAX_BURST_WORDS)
    }

    /// One clock edge. `owe`: an owe accepted on this edge; `msg`, `req`, `beat`: the
    /// message, DMA request and payload handshakes that happened (`beat` carries the
    /// DMA `last` flag). Decisions use the state before the edge.
    fn edge(&mut self, owe: Option<Owe>, msg: bool, req: bool, beat: Option<bool>) {
        let write = owe.filter(|o| self.accepts(o));
        let behind = owe.filter(|o| self.follows(o));
        // The busy item handed over on this edge, if any.
        let freed = match &self.phase {
            Phase::Message(o) if msg => match o.kind {
                kind::NACK => Some(*o),
                kind::READ_RESPONSE if o.length == 0 => Some(*o),
                _ => None,
            },
            Phase::ReadData { owe, .. } if beat.is_some() && self.words_left == 1 => Some(*owe),
            Phase::Atomic(o) if beat.is_some() => Some(*o),
            _ => None,
        };
        self.phase = match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Idle => {
                let pick = (0..64)
                    .map(|i| (self.rr_next + i) % 64)
                    .find(|q| self.slots[*q].is_some());
                match pick {
                    Some(q) => {
                        self.rr_next = (q + 1) % 64;
                        // The item leaves the slot; a NACK or response keeps it busy
                        // (through `in_flight`) until handed over.
                        Phase::Load(self.slots[q].take().unwrap())
                    }
                    None => Phase::Idle,
                }
            }
            Phase::Load(o) => Phase::Message(o),
            Phase::Message(o) if msg => {
                self.responses += 1;
                if o.kind == kind::NACK {
                    if let Some(i) =
                        Syndrome::from_code(o.syndrome).and_then(Syndrome::counter_index)
                    {
                        self.nacks[i] += 1;
                    }
                }
                match o.kind {
                    kind::READ_RESPONSE if o.length > 0 => {
                        self.words_left = (o.length as u64).div_ceil(8);
                        self.words_sent = 0;
                        Phase::ReadRequest {
                            owe: o,
                            addr: o.addr & !7,
                            burst: Self::burst(self.words_left),
                        }
                    }
                    kind::ATOMIC_RESPONSE => Phase::Atomic(o),
                    _ => Phase::Idle,
                }
            }
            Phase::ReadRequest { owe, addr, burst } if req => Phase::ReadData { owe, addr, burst },
            Phase::ReadData { owe, addr, burst } if beat.is_some() => {
                self.words_left -= 1;
                self.words_sent += 1;
                if self.words_left == 0 {
                    Phase::Idle
                } else if beat == Some(true) {
                    Phase::ReadRequest {
                        owe,
                        addr: addr + 8 * burst as u32,
                        burst: Self::burst(self.words_left),
                    }
                } else {
                    Phase::ReadData { owe, addr, burst }
                }
            }
            Phase::Atomic(_) if beat.is_some() => Phase::Idle,
            p => p,
        };
        if let Some(mut o) = write {
            // A waiting ACK's resync mark carries over to the item replacing it.
            if let Some(old) = self.slots[o.qp] {
                o.resync |= old.resync;
            }
            self.slots[o.qp] = Some(o);
        }
        if let Some(mut o) = behind {
            // A newer follow-up replaces a waiting ACK and keeps its resync mark.
            if let Some(old) = self.follow[o.qp] {
                o.resync |= old.resync;
            }
            self.follow[o.qp] = Some(o);
        }
        if let Some(done) = freed {
            self.promoted_nack &= !(1 << done.qp);
            // The follow-up becomes the slot's item, sent to the same remote.
            if let Some(mut f) = self.follow[done.qp].take() {
                f.dest_node = done.dest_node;
                f.dest_qp = done.dest_qp;
                if f.kind == kind::NACK {
                    self.promoted_nack |= 1 << done.qp;
                }
                self.slots[done.qp] = Some(f);
            }
        }
    }
}

/// A `ResponseGenerator` with its DMA port, a message sink and the model, checked
/// clock by clock.
struct Bench {
    uut: ResponseGenerator,
    model: SlotModel,
    dma: Dma,
    rng: ChaCha8Rng,
    node_id: u16,
    /// Messages handed over, with their payloads.
    out: Vec<Message>,
    /// DMA read requests (address, words).
    requests: Vec<(u32, u64)>,
    /// Message being collected: (message, length, payload words).
    current: Option<(Message, usize, Vec<u64>)>,
    cycles: u64,
    /// Clocks in which a payload word was handed over.
    payload_beats: u64,
}

impl Bench {
    fn new(queue_pairs: usize, seed: u64, dma: Dma) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut uut = ResponseGenerator::new(queue_pairs);
        uut.connect_all();
        let node_id = rng.gen();
        uut.cfg_node_id.next = (node_id as u64).to_bits();
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        Bench {
            uut,
            model: SlotModel::new(queue_pairs),
            dma,
            rng,
            node_id,
            out: vec![],
            requests: vec![],
            current: None,
            cycles: 0,
            payload_beats: 0,
        }
    }

    /// One clock: offer `owe`, drive the sinks' readies, check every output against
    /// the model, then clock both.
    fn step(&mut self, owe: Option<Owe>, msg_ready: bool, payload_ready: bool) {
        self.cycles += 1;
        let u = &mut self.uut;
        let o = owe.unwrap_or_default();
        u.s_owe_valid.next = owe.is_some();
        u.s_owe.next = OwedResponse {
            qp: (o.qp as u64).to_bits(),
            kind: o.kind.to_bits(),
            psn: (o.psn as u64).to_bits(),
            syndrome: (o.syndrome as u64).to_bits(),
            refusal: (o.refusal as u64).to_bits(),
            addr: (o.addr as u64).to_bits(),
            length: (o.length as u64).to_bits(),
            value: o.value.to_bits(),
            dest_node: (o.dest_node as u64).to_bits(),
            dest_qp: (o.dest_qp as u64).to_bits(),
            resync: o.resync,
        };
        u.m_msg_ready.next = msg_ready;
        u.m_payload_ready.next = payload_ready;
        let data = self.dma.data(&mut self.rng);
        u.s_rdrd_valid.next = data.is_some();
        u.s_rdrd_data.next = data.unwrap_or((0, false)).0.to_bits();
        u.s_rdrd_last.next = data.unwrap_or((0, false)).1;
        u.m_rdrd_req_ready.next = self.dma.req_ready(&mut self.rng);
        settle(u);
        let c = self.cycles;
        // State outputs.
        assert!(u.s_owe_ready.val(), "owe not accepted, cycle {c}");
        assert_eq!(
            u.slot_busy.val().to_u64(),
            self.model.busy(),
            "slot_busy, cycle {c}"
        );
        assert_eq!(
            u.stat_responses_sent.val().to_u32(),
            self.model.responses,
            "cycle {c}"
        );
        let nacks = nacks_sent(u);
        assert_eq!(nacks, self.model.nacks, "stat_nack_sent, cycle {c}");
        // Message.
        let msg_shown = matches!(self.model.phase, Phase::Message(_));
        assert_eq!(
            u.m_msg_valid.val(),
            msg_shown,
            "m_msg_valid, cycle {c} ({:?})",
            self.model.phase
        );
        let msg = msg_shown && msg_ready;
        if let Phase::Message(o) = &self.model.phase {
            let got = Message {
                opcode: u.m_msg.val().opcode.to_u64() as u8,
                dest_node: u.m_msg.val().dest_node.to_u64() as u16,
                src_node: u.m_msg.val().src_node.to_u64() as u16,
                dest_qp: u.m_msg.val().dest_qp.to_u64() as u16,
                src_qp: u.m_msg.val().src_qp.to_u64() as u16,
                psn: u.m_msg.val().psn.to_u64() as u32,
                vaddr: u.m_msg.val().vaddr.to_u64(),
                stag: u.m_msg.val().stag.to_u64() as u32,
                dma_length: u.m_msg.val().dma_length.to_u64() as u32,
                immediate: u
                    .m_msg
                    .val()
                    .has_immediate
                    .then(|| u.m_msg.val().immediate.to_u64() as u32),
                invalidate: u.m_msg.val().invalidate,
                resync: u.m_msg.val().resync,
                payload: vec![],
            };
            let len = u.m_msg.val().length.to_u64() as usize;
            // The AETH: syndrome 7:0 and the refusals 28:8, nothing above.
            assert!(!u.m_msg.val().has_immediate || u.m_msg.val().immediate.to_u64() < 1 << 29);
            assert_eq!(
                (got.clone(), len),
                expected_message(o, self.node_id),
                "message, cycle {c}"
            );
            if msg {
                if len == 0 {
                    self.out.push(got);
                } else {
                    self.current = Some((got, len, vec![]));
                }
            }
        }
        // DMA request.
        let want_req = match &self.model.phase {
            Phase::ReadRequest { addr, burst, .. } => Some((*addr, *burst)),
            _ => None,
        };
        assert_eq!(
            u.m_rdrd_req_valid.val(),
            want_req.is_some(),
            "m_rdrd_req_valid, cycle {c}"
        );
        let got = (
            u.m_rdrd_req_addr.val().to_u64() as u32,
            u.m_rdrd_req_words.val().to_u64(),
        );
        let req = self
            .dma
            .request(u.m_rdrd_req_valid.val(), got.0, got.1 as u32)
            .is_some();
        if let Some((addr, burst)) = want_req {
            assert_eq!(got, (addr, burst), "DMA request, cycle {c}");
            if req {
                self.requests.push(got);
            }
        }
        // Payload.
        let mut beat = None;
        match &self.model.phase {
            Phase::ReadData { owe, .. } => {
                assert_eq!(
                    u.s_rdrd_ready.val(),
                    payload_ready,
                    "s_rdrd_ready, cycle {c}"
                );
                assert_eq!(
                    u.m_payload_valid.val(),
                    data.is_some(),
                    "m_payload_valid, cycle {c}"
                );
                if let Some((word, last)) = data {
                    assert_eq!(u.m_payload_data.val().to_u64(), word);
                    assert_eq!(
                        word,
                        host_word(owe.addr + 8 * self.model.words_sent as u32),
                        "payload word {} of the READ response at {:#x}",
                        self.model.words_sent,
                        owe.addr
                    );
                    assert_eq!(
                        u.m_payload_last.val(),
                        self.model.words_left == 1,
                        "m_payload_last, cycle {c}"
                    );
                    if payload_ready {
                        beat = Some(last);
                        self.dma.beat_taken();
                    }
                }
            }
            Phase::Atomic(owe) => {
                assert!(!u.s_rdrd_ready.val());
                assert!(u.m_payload_valid.val(), "atomic payload, cycle {c}");
                assert_eq!(u.m_payload_data.val().to_u64(), owe.value);
                assert!(u.m_payload_last.val());
                if payload_ready {
                    beat = Some(true);
                }
            }
            _ => {
                assert!(!u.m_payload_valid.val(), "m_payload_valid, cycle {c}");
                assert!(!u.s_rdrd_ready.val(), "s_rdrd_ready, cycle {c}");
            }
        }
        if beat.is_some() {
            self.payload_beats += 1;
            let word = u.m_payload_data.val().to_u64();
            let (_, len, words) = self.current.as_mut().expect("payload without message");
            words.push(word);
            if words.len() == len.div_ceil(8) {
                let (mut m, len, words) = self.current.take().unwrap();
                m.payload = words
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .take(len)
                    .collect();
                self.out.push(m);
            }
        }
        self.model.edge(owe, msg, req, beat);
        tick(&mut self.uut);
    }

    /// Clock with no owes and everything ready until the generator is idle with
    /// nothing waiting.
    fn drain(&mut self) {
        let mut n = 0;
        while !(matches!(self.model.phase, Phase::Idle)
            && self.model.slots.iter().all(Option::is_none))
        {
            self.step(None, true, true);
            n += 1;
            assert!(n < 100_000, "generator did not drain");
        }
        self.step(None, true, true);
    }
}

fn random_owe(rng: &mut ChaCha8Rng, qps: &[usize]) -> Owe {
    let qp = if rng.gen_bool(0.03) {
        rng.gen_range(0..64)
    } else {
        qps[rng.gen_range(0..qps.len())]
    };
    let base = Owe {
        psn: rng.gen_range(0..1 << 24),
        dest_node: rng.gen(),
        dest_qp: rng.gen(),
        resync: rng.gen_bool(0.1),
        refusal: if rng.gen_bool(0.2) {
            rng.gen_range(0..1 << 21)
        } else {
            0
        },
        ..ack(qp, 0)
    };
    match rng.gen_range(0..20) {
        0..=9 => base,
        10..=13 => {
            let syndrome = match rng.gen_range(0..10) {
                0 => 0x55,
                1 => 0,
                _ => Syndrome::NACKS[rng.gen_range(0..8)] as u8,
            };
            Owe {
                kind: kind::NACK,
                syndrome,
                ..base
            }
        }
        14..=16 => {
            let length = match rng.gen_range(0..10) {
                0 => 0,
                1..=6 => rng.gen_range(1..=64),
                _ => rng.gen_range(65..=300),
            };
            Owe {
                kind: kind::READ_RESPONSE,
                addr: rng.gen_range(0..1u32 << 20) * 8,
                length,
                // Garbage in the fields a READ response does not use.
                syndrome: rng.gen(),
                value: rng.gen(),
                ..base
            }
        }
        _ => Owe {
            kind: kind::ATOMIC_RESPONSE,
            value: rng.gen(),
            syndrome: rng.gen(),
            addr: rng.gen(),
            length: rng.gen(),
            ..base
        },
    }
}

#[test]
fn synthesises() {
    let mut uut = ResponseGenerator::new(64);
    uut.connect_all();
    yosys_validate("nic_rtl_response_generator", &generate_verilog(&uut))
        .expect("yosys accepts ResponseGenerator");
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64, got 0")]
fn rejects_zero_queue_pairs() {
    ResponseGenerator::new(0);
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64, got 65")]
fn rejects_too_many_queue_pairs() {
    ResponseGenerator::new(65);
}

/// Random owes (with slot conflicts, contract violations and unknown QPs), random
/// back-pressure on the message and payload handshakes, random DMA latency and gaps:
/// messages, payloads, DMA requests, `slot_busy` and the counters follow the model
/// clock by clock.
#[test]
fn matches_model_on_random_owes() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7e5_0001);
    let mut total = 0;
    let mut kinds = [0usize; 4];
    for (queue_pairs, p_owe, p_msg_ready, p_payload_ready, p_data, respect_busy) in [
        (64, 0.3, 1.0, 1.0, 1.0, true),
        (5, 0.5, 0.5, 0.7, 0.6, false),
        (1, 0.4, 0.3, 0.5, 0.8, false),
        (64, 0.8, 0.7, 0.4, 0.5, false),
        (17, 0.2, 0.6, 0.9, 0.9, true),
    ] {
        let dma = Dma::new(rng.gen_range(0.3..1.0), p_data, rng.gen_range(0..12));
        let mut b = Bench::new(queue_pairs, rng.gen(), dma);
        let qps: Vec<usize> = (0..4).map(|_| rng.gen_range(0..queue_pairs)).collect();
        for _ in 0..5000 {
            let mut owe = rng.gen_bool(p_owe).then(|| random_owe(&mut rng, &qps));
            if respect_busy {
                // As the ReceiveQueueEngine does: no response for a busy slot.
                owe = owe.filter(|o| o.kind <= kind::NACK || b.model.busy() >> o.qp & 1 == 0);
            }
            let (mr, pr) = (rng.gen_bool(p_msg_ready), rng.gen_bool(p_payload_ready));
            b.step(owe, mr, pr);
        }
        b.drain();
        total += b.cycles;
        for m in &b.out {
            kinds[match m.opcode {
                opcode::ACK => 0,
                opcode::NACK => 1,
                opcode::RDMA_READ_RESPONSE => 2,
                _ => 3,
            }] += 1;
        }
        assert_eq!(b.out.len() as u32, b.model.responses);
    }
    assert!(total > 25_000);
    assert!(
        kinds.iter().all(|k| *k > 50),
        "messages per kind: {kinds:?}"
    );
}

/// An ACK replaces a waiting ACK; an ACK arriving while an ACK of the same QP is being
/// sent fills the freed slot and is sent after it.
#[test]
fn acks_coalesce() {
    let mut b = Bench::new(8, 1, Dma::new(1.0, 1.0, 0));
    // An ACK offered on the edge its QP's ACK is picked fills the freed slot.
    b.step(Some(ack(5, 1)), false, true); // picked on the next edge
    b.step(Some(ack(5, 2)), false, true); // that edge
    for _ in 0..6 {
        b.step(None, false, true);
    }
    b.drain();
    // ACKs that wait coalesce: the newest is sent.
    b.step(Some(ack(5, 3)), false, true); // picked at once
    b.step(None, false, true);
    b.step(Some(ack(5, 4)), false, true); // fills the slot freed by 3
    b.step(Some(ack(6, 9)), false, true);
    b.step(Some(ack(5, 5)), false, true); // replaces 4
    for _ in 0..10 {
        b.step(None, false, true);
    }
    assert_eq!(
        b.uut.slot_busy.val().to_u64(),
        0,
        "ACKs never make a slot busy"
    );
    b.drain();
    let sent: Vec<(u16, u32)> = b.out.iter().map(|m| (m.src_qp, m.psn)).collect();
    assert_eq!(sent, [(5, 1), (5, 2), (5, 3), (6, 9), (5, 5)]);
    assert!(b
        .out
        .iter()
        .all(|m| m.opcode == opcode::ACK && m.immediate == Some(0)));
    assert_eq!(b.uut.stat_responses_sent.val().to_u32(), 5);
}

/// A slot holding a NACK or response is busy until handed over. An ACK or NACK owed
/// meanwhile is not lost: it waits behind the busy item (a newer one replaces a
/// waiting ACK) and is sent after it, to the same remote; nothing is kept behind a
/// follow-up NACK, and a response owed for a busy slot is dropped. A NACK replaces a
/// waiting ACK. NACKs count per syndrome; unknown syndromes and QPs count nowhere.
#[test]
fn owes_for_a_busy_slot_follow_its_item() {
    let mut b = Bench::new(4, 2, Dma::new(1.0, 1.0, 3));
    b.step(
        Some(nack(2, 7, Syndrome::InvalidRequest as u8)),
        false,
        true,
    );
    assert_eq!(b.uut.slot_busy.val().to_u64(), 1 << 2);
    b.step(Some(ack(2, 8)), false, true); // waits behind the NACK
    b.step(Some(read(2, 9, 0x100, 16)), false, true); // dropped: a response
    b.step(Some(atomic(2, 10, 99)), false, true); // dropped: a response
    b.step(
        Some(nack(2, 11, Syndrome::SequenceError as u8)),
        false,
        true,
    ); // replaces the waiting ACK
    b.step(Some(ack(2, 12)), false, true); // dropped: behind a follow-up NACK
    b.step(Some(ack(9, 1)), false, true); // QP 9 does not exist (4 queue pairs)
                                          // QP 1: a NACK replaces a waiting ACK in the slot itself.
    b.step(Some(ack(1, 20)), false, true);
    b.step(Some(nack(1, 21, 0x55)), false, true);
    // QP 3: two ACKs behind a NACK, the second replaces the first.
    b.step(
        Some(nack(3, 30, Syndrome::RemoteAccessError as u8)),
        false,
        true,
    );
    b.step(Some(ack(3, 31)), false, true);
    b.step(
        Some(Owe {
            dest_node: 0x777,
            ..ack(3, 32)
        }),
        false,
        true,
    );
    assert_eq!(b.uut.slot_busy.val().to_u64(), 1 << 3 | 1 << 2 | 1 << 1);
    for _ in 0..5 {
        b.step(None, false, true);
    }
    b.drain();
    assert_eq!(b.uut.slot_busy.val().to_u64(), 0);
    b.step(Some(atomic(2, 13, 0xdead_beef_0bad_f00d)), true, true);
    b.drain();
    let sent: Vec<(u8, u16, u32)> = b.out.iter().map(|m| (m.opcode, m.src_qp, m.psn)).collect();
    assert_eq!(
        sent,
        [
            (opcode::NACK, 2, 7),
            (opcode::NACK, 3, 30),
            (opcode::NACK, 1, 21),
            (opcode::NACK, 2, 11),
            (opcode::ACK, 3, 32),
            (opcode::ATOMIC_RESPONSE, 2, 13)
        ]
    );
    assert_eq!(b.out[0].immediate, Some(0x61));
    assert_eq!(b.out[2].immediate, Some(0x55));
    assert_eq!(b.out[3].immediate, Some(0x60));
    assert_eq!(b.out[4].immediate, Some(0));
    // A follow-up goes where the item it followed went (the QP's remote).
    assert_eq!((b.out[4].dest_node, b.out[4].dest_qp), (0x103, 0x203));
    assert_eq!(b.out[5].payload, 0xdead_beef_0bad_f00du64.to_le_bytes());
    assert_eq!(b.uut.stat_nack_sent_2.val().to_u32(), 1);
    assert_eq!(b.uut.stat_nack_sent_1.val().to_u32(), 1);
    assert_eq!(b.uut.stat_responses_sent.val().to_u32(), 6);
}

/// READ response payloads are host memory from the slot's address, for lengths around
/// word boundaries, with DMA latency and gaps; a response longer than one burst is read
/// in several.
#[test]
fn read_response_payload_equals_host_memory() {
    let mut b = Bench::new(64, 3, Dma::new(0.5, 0.6, 9));
    let mut lengths: Vec<u32> = (0..=17).chain([63, 64, 65, 1000, 4096]).collect();
    // Around the burst limit: the first burst's size is decided from the length, a later
    // one's from the words left.
    let max_bytes = MAX_BURST_WORDS as u32 * 8;
    lengths.extend([
        max_bytes - 9,
        max_bytes - 8,
        max_bytes - 7,
        max_bytes,
        max_bytes + 1,
    ]);
    lengths.extend([
        2 * max_bytes,
        2 * max_bytes + 1,
        2 * max_bytes + 8,
        2 * max_bytes + 9,
    ]);
    lengths.push(max_bytes + 20);
    let mut rng = ChaCha8Rng::seed_from_u64(33);
    let mut owes = vec![];
    for (i, len) in lengths.iter().enumerate() {
        let o = read(i % 64, i as u32, rng.gen_range(0..1u32 << 24) * 8, *len);
        owes.push(o);
        b.step(Some(o), true, true);
        b.drain();
    }
    assert_eq!(b.out.len(), owes.len());
    for (m, o) in b.out.iter().zip(&owes) {
        assert_eq!(m.opcode, opcode::RDMA_READ_RESPONSE);
        assert_eq!(
            m.payload,
            host_bytes(o.addr, o.length as usize),
            "READ of {} bytes",
            o.length
        );
    }
    let big = owes.last().unwrap();
    let big_requests: Vec<_> = b.requests.iter().rev().take(2).rev().copied().collect();
    assert_eq!(
        big_requests,
        [
            (big.addr, MAX_BURST_WORDS),
            (big.addr + MAX_BURST_WORDS as u32 * 8, 3)
        ]
    );
    let bursts: u64 = lengths
        .iter()
        .map(|&l| (l as u64).div_ceil(8).div_ceil(MAX_BURST_WORDS))
        .sum();
    assert_eq!(b.requests.len() as u64, bursts);
    let words: Vec<u64> = b.requests.iter().map(|r| r.1).collect();
    assert!(
        words.iter().all(|&w| (1..=MAX_BURST_WORDS).contains(&w)),
        "{words:?}"
    );
}

/// With the DMA port and downstream always ready, a READ response streams one word per
/// clock.
#[test]
fn read_response_streams_one_word_per_clock() {
    let mut b = Bench::new(2, 4, Dma::new(1.0, 1.0, 0));
    b.step(Some(read(1, 5, 0x4000, 2000)), true, true);
    let start = b.cycles;
    b.drain();
    // Pick, load, message, request, then 250 words back to back (+1 idle clock).
    assert_eq!(b.payload_beats, 250);
    assert!(
        b.cycles - start <= 250 + 5 + 1,
        "{} clocks",
        b.cycles - start
    );
}

/// An answer owed with the resync mark goes out with RESYNC on its cells (ACK, NACK,
/// READ and atomic responses). The mark survives a later item replacing the waiting
/// ACK (ORed in); it leaves with the item that carried it.
#[test]
fn resync_mark_is_on_the_cells_and_survives_replacement() {
    use nic_rtl::cell::format::{decode_cell, encode_message, flag};
    let rs = |o: Owe| Owe { resync: true, ..o };
    let mut b = Bench::new(8, 6, Dma::new(1.0, 1.0, 0));
    // Served at once: ACK (marked), NACK (marked), READ response (marked), atomic
    // response (not marked).
    for o in [
        rs(ack(1, 10)),
        rs(nack(2, 20, Syndrome::RdmaDisabled as u8)),
        rs(read(3, 30, 0x800, 20)),
        atomic(4, 40, 7),
    ] {
        b.step(Some(o), true, true);
        b.drain();
    }
    // Waiting ACKs replaced: a marked ACK by an unmarked ACK, then by an unmarked NACK;
    // another QP's unmarked ACK by a marked one. The mark is not left behind: the next
    // ACK of QP 5, after its slot was served, goes without it.
    b.step(Some(ack(7, 1)), false, true); // picked at once, keeps the transmit side busy
    b.step(Some(rs(ack(5, 50))), false, true);
    b.step(Some(ack(5, 51)), false, true);
    b.step(
        Some(nack(5, 52, Syndrome::RemoteOperationalError as u8)),
        false,
        true,
    );
    b.step(Some(ack(6, 60)), false, true);
    b.step(Some(rs(ack(6, 61))), false, true);
    b.drain();
    b.step(Some(ack(5, 53)), true, true);
    b.drain();
    let got: Vec<(u16, u32, u8, bool)> = b
        .out
        .iter()
        .map(|m| (m.src_qp, m.psn, m.opcode, m.resync))
        .collect();
    assert_eq!(
        got,
        [
            (1, 10, opcode::ACK, true),
            (2, 20, opcode::NACK, true),
            (3, 30, opcode::RDMA_READ_RESPONSE, true),
            (4, 40, opcode::ATOMIC_RESPONSE, false),
            (7, 1, opcode::ACK, false),
            (5, 52, opcode::NACK, true),
            (6, 61, opcode::ACK, true),
            (5, 53, opcode::ACK, false),
        ]
    );
    // On the wire (the segmenter's format): the RESYNC flag is on every cell.
    for m in &b.out {
        for cell in encode_message(m, 8).unwrap() {
            let h = decode_cell(&cell, 8).unwrap().header;
            assert_eq!(h.flags & flag::RESYNC != 0, m.resync, "{m:?}");
        }
    }
}

/// Pending slots are served round robin by QP index, one message each, starting after
/// the QP served last.
#[test]
fn round_robin_across_qps() {
    let mut b = Bench::new(64, 5, Dma::new(1.0, 1.0, 0));
    b.step(Some(nack(40, 0, 0x20)), false, true); // picked at once
    for q in [5, 63, 2, 41, 0, 39] {
        b.step(Some(atomic(q, q as u32, q as u64)), false, true);
    }
    b.step(Some(ack(40, 1)), false, true); // waits behind QP 40's NACK
    for _ in 0..4 {
        b.step(None, false, true);
    }
    b.drain();
    // Second round: a waiting ACK on every other QP, served in index order.
    for q in [10, 50, 30] {
        b.step(Some(nack(q, 100, 0x66)), false, true);
    }
    b.drain();
    let order: Vec<u16> = b.out.iter().map(|m| m.src_qp).collect();
    // QP 40's ACK became its slot's item when the NACK was handed over: served in
    // turn after 39.
    assert_eq!(order, [40, 41, 63, 0, 2, 5, 39, 40, 10, 30, 50]);
    assert_eq!(b.uut.stat_nack_sent_0.val().to_u32(), 1);
    assert_eq!(b.uut.stat_nack_sent_7.val().to_u32(), 3);
}

/// Reset does not gate the owe handshake (`s_owe_ready` is always high), yet nothing
/// taken or handed over in a reset clock survives it: owes taken while `reset` is high are
/// never sent and leave no slot busy, and a message accepted in a reset clock counts
/// nowhere.
#[test]
fn nothing_taken_in_reset_survives_it() {
    let mut u = ResponseGenerator::new(4);
    u.connect_all();
    u.cfg_node_id.next = 7u64.to_bits();
    u.reset.next = true;
    tick(&mut u);
    u.reset.next = false;
    let owe = |qp: u64, k: u64| OwedResponse {
        qp: qp.to_bits(),
        kind: k.to_bits(),
        psn: 5u64.to_bits(),
        syndrome: 0x61u64.to_bits(),
        length: 8u64.to_bits(),
        ..Default::default()
    };
    // A NACK owed and offered: hold the message until reset.
    u.s_owe_valid.next = true;
    u.s_owe.next = owe(1, kind::NACK);
    u.m_msg_ready.next = false;
    u.m_payload_ready.next = true;
    u.m_rdrd_req_ready.next = true;
    tick(&mut u);
    u.s_owe_valid.next = false;
    for _ in 0..4 {
        tick(&mut u);
    }
    settle(&mut u);
    assert!(u.m_msg_valid.val(), "the NACK is offered");
    // Reset for three clocks: the NACK is accepted in the first, owes are taken in all.
    u.reset.next = true;
    u.m_msg_ready.next = true;
    for (qp, k) in [(2, kind::NACK), (3, kind::ACK), (0, kind::READ_RESPONSE)] {
        u.s_owe_valid.next = true;
        u.s_owe.next = owe(qp, k);
        settle(&mut u);
        assert!(u.s_owe_ready.val(), "s_owe_ready in reset");
        tick(&mut u);
    }
    u.reset.next = false;
    u.s_owe_valid.next = false;
    for c in 0..20 {
        settle(&mut u);
        assert!(!u.m_msg_valid.val(), "a message after reset, clock {c}");
        assert_eq!(u.slot_busy.val().to_u64(), 0, "slot_busy, clock {c}");
        assert_eq!(u.stat_responses_sent.val().to_u32(), 0);
        let nacks = nacks_sent(&u);
        assert_eq!(nacks, [0; 8], "stat_nack_sent, clock {c}");
        tick(&mut u);
    }
}
