//! `TxArbiter` against its plain-Rust model, with idle gaps and back-pressure on every
//! handshake, and feeding a `CellSegmenter` (cells = `encode_message` in grant order).

use nic_model::cell_faults::random_message;
use nic_model::words::{payload_words, words_to_payload};
use nic_model::Throttle;
use nic_rtl::cell::format::{encode_message, Message};
use nic_rtl::cell::segmenter::CellSegmenter;
use nic_rtl::common::MessageDescriptor;
use nic_rtl::sim::{settle, tick, ClockedBlock};
use nic_rtl::TxArbiter;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

const REQ: usize = 0;
const RESP: usize = 1;

/// One message source (the requester or the responder): offers its messages in order,
/// holds an offer until it is taken, streams the payload only after the grant.
struct Source {
    msgs: Vec<Message>,
    next: usize,
    offering: bool,
    words: Vec<(u64, bool)>,
    word: usize,
    /// Idle gaps before a message offer and between payload words.
    msg_gaps: Throttle,
    word_gaps: Throttle,
}

impl Source {
    fn new(msgs: Vec<Message>, p_msg: f64, p_word: f64) -> Self {
        Source {
            msgs,
            next: 0,
            offering: false,
            words: vec![],
            word: 0,
            msg_gaps: Throttle::new(p_msg),
            word_gaps: Throttle::new(p_word),
        }
    }
    fn in_payload(&self) -> bool {
        self.word < self.words.len()
    }
    fn done(&self) -> bool {
        self.next == self.msgs.len() && !self.in_payload()
    }
    /// This clock's message offer and payload word.
    fn drive(&mut self, rng: &mut ChaCha8Rng) -> (Option<Message>, Option<(u64, bool)>) {
        if !self.offering && !self.in_payload() && self.next < self.msgs.len() {
            self.offering = self.msg_gaps.go(rng);
        }
        let word = (self.in_payload() && self.word_gaps.go(rng)).then(|| self.words[self.word]);
        (self.offering.then(|| self.msgs[self.next].clone()), word)
    }
    fn granted(&mut self, rng: &mut ChaCha8Rng) {
        assert!(self.offering, "grant to a source that offers nothing");
        self.offering = false;
        self.words = payload_words(&self.msgs[self.next].payload, rng);
        self.word = 0;
        self.next += 1;
    }
}

/// Drive one source bundle of the arbiter from a message offer and a payload word.
fn drive_source(uut: &mut TxArbiter, src: usize, m: &Option<Message>, w: Option<(u64, bool)>) {
    let msg = m.as_ref().map(MessageDescriptor::of).unwrap_or_default();
    let (pdata, plast) = w.unwrap_or((0, false));
    if src == REQ {
        uut.s_req_msg_valid.next = m.is_some();
        uut.s_req_msg.next = msg;
        uut.s_req_payload_valid.next = w.is_some();
        uut.s_req_payload_data.next = pdata.to_bits();
        uut.s_req_payload_last.next = plast;
    } else {
        uut.s_resp_msg_valid.next = m.is_some();
        uut.s_resp_msg.next = msg;
        uut.s_resp_payload_valid.next = w.is_some();
        uut.s_resp_payload_data.next = pdata.to_bits();
        uut.s_resp_payload_last.next = plast;
    }
}

/// The message on `m_msg` (payload left empty) and its length.
fn out_message(uut: &TxArbiter) -> (Message, usize) {
    uut.m_msg.val().message()
}

/// Plain-Rust model of the arbiter: which source it offers, when it is locked.
#[derive(Default)]
struct ArbiterModel {
    locked: Option<usize>,
    last: usize,
    held: Option<usize>,
    /// The requester offered on the clock before and was not granted.
    req_waited: bool,
}

impl ArbiterModel {
    /// The source offered this clock given which sources offer a message (None while
    /// a payload is in flight or nobody offers).
    fn offer(&self, valid: [bool; 2]) -> Option<usize> {
        let pick = self.pick(valid);
        (self.locked.is_none() && valid[pick]).then_some(pick)
    }

    /// The source the arbiter routes `m_msg_ready` to: the held offer, else the one
    /// that did not win last when both offer, else the one that offers; the requester
    /// counts as offering for that choice only if it already waited on the clock before
    /// (a requester offer that appears while the responder offers after winning last
    /// goes second).
    fn pick(&self, valid: [bool; 2]) -> usize {
        match self.held {
            Some(s) => s,
            None if valid[RESP] && (self.last == REQ || !self.req_waited) => RESP,
            None => REQ,
        }
    }
}

/// What one run saw: per source, the messages granted (fields and payload as seen on
/// the output), and the order of grants.
struct Observed {
    grants: Vec<usize>,
    out: Vec<Message>,
    cycles: u64,
    /// Clocks with the payload path locked but no beat (source or sink not ready).
    payload_stalls: u64,
    /// Longest run of grants to one source while the other kept offering.
    max_bypass: usize,
}

/// Run both sources through the arbiter into a sink with back-pressure
/// (`p_msg_ready`, `p_payload_ready`), checking every clock against [`ArbiterModel`].
fn run(
    seed: u64,
    req: Vec<Message>,
    resp: Vec<Message>,
    p_offer: f64,
    p_word: f64,
    p_msg_ready: f64,
    p_payload_ready: f64,
) -> Observed {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = TxArbiter::new();
    uut.connect_all();
    let mut sources = [
        Source::new(req, p_offer, p_word),
        Source::new(resp, p_offer, p_word),
    ];
    let (msg_ready, payload_ready) = (Throttle::new(p_msg_ready), Throttle::new(p_payload_ready));
    let mut model = ArbiterModel::default();
    let mut obs = Observed {
        grants: vec![],
        out: vec![],
        cycles: 0,
        payload_stalls: 0,
        max_bypass: 0,
    };
    // Payload being collected: (message, length, words so far).
    let mut current: Option<(Message, usize, Vec<u64>)> = None;
    let mut bypass = 0usize;
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    while !(sources[REQ].done() && sources[RESP].done()) {
        obs.cycles += 1;
        assert!(obs.cycles < 2_000_000, "arbiter stalled");
        let offers: Vec<_> = sources.iter_mut().map(|s| s.drive(&mut rng)).collect();
        for (src, (m, w)) in offers.iter().enumerate() {
            drive_source(&mut uut, src, m, *w);
        }
        uut.m_msg_ready.next = msg_ready.go(&mut rng);
        uut.m_payload_ready.next = payload_ready.go(&mut rng);
        settle(&mut uut);
        let valid = [offers[REQ].0.is_some(), offers[RESP].0.is_some()];
        let offer = model.offer(valid);
        let req_waits = valid[REQ] && !(offer == Some(REQ) && uut.m_msg_ready.val());
        assert_eq!(
            uut.m_msg_valid.val(),
            offer.is_some(),
            "m_msg_valid, cycle {}",
            obs.cycles
        );
        let ready = uut.m_msg_ready.val();
        let locked_now = model.locked;
        let open = locked_now.is_none();
        let pick = model.pick(valid);
        assert_eq!(uut.s_req_msg_ready.val(), open && pick == REQ && ready);
        assert_eq!(uut.s_resp_msg_ready.val(), open && pick == RESP && ready);
        // Message handshake.
        if let Some(src) = offer {
            let (m, len) = out_message(&uut);
            let want = offers[src].0.as_ref().unwrap();
            assert_eq!(
                (m.clone(), len),
                (
                    Message {
                        payload: vec![],
                        ..want.clone()
                    },
                    want.payload.len()
                )
            );
            if ready {
                assert!(
                    src == REQ && uut.s_req_msg_ready.val()
                        || src == RESP && uut.s_resp_msg_ready.val()
                );
                obs.grants.push(src);
                if valid[1 - src]
                    && obs.grants.len() >= 2
                    && obs.grants[obs.grants.len() - 2] == src
                {
                    bypass += 1;
                } else {
                    bypass = 1;
                }
                obs.max_bypass = obs.max_bypass.max(bypass);
                sources[src].granted(&mut rng);
                model.last = src;
                model.held = None;
                if len > 0 {
                    model.locked = Some(src);
                    current = Some((m, len, vec![]));
                } else {
                    obs.out.push(m);
                }
            } else {
                model.held = Some(src);
            }
        } else {
            model.held = None;
        }
        model.req_waited = req_waits;
        // Payload handshake.
        let pready = uut.m_payload_ready.val();
        match locked_now {
            Some(src) => {
                let w = offers[src].1;
                assert_eq!(uut.m_payload_valid.val(), w.is_some());
                assert_eq!(uut.s_req_payload_ready.val(), src == REQ && pready);
                assert_eq!(uut.s_resp_payload_ready.val(), src == RESP && pready);
                if let Some((data, last)) = w {
                    assert_eq!(uut.m_payload_data.val().to_u64(), data);
                    assert_eq!(uut.m_payload_last.val(), last);
                    if pready {
                        sources[src].word += 1;
                        let (m, len, words) = current.as_mut().unwrap();
                        words.push(data);
                        if last {
                            m.payload = words_to_payload(words, *len);
                            obs.out.push(std::mem::take(m));
                            current = None;
                            model.locked = None;
                        }
                    } else {
                        obs.payload_stalls += 1;
                    }
                } else {
                    obs.payload_stalls += 1;
                }
            }
            None => {
                assert!(!uut.m_payload_valid.val(), "payload valid while not locked");
                assert!(!uut.s_req_payload_ready.val() && !uut.s_resp_payload_ready.val());
            }
        }
        tick(&mut uut);
    }
    obs
}

fn random_messages(rng: &mut ChaCha8Rng, n: usize, max_len: usize) -> Vec<Message> {
    (0..n).map(|_| random_message(rng, max_len)).collect()
}

/// Each source's messages came out complete, in order, with their payloads, and the
/// grant order interleaves them.
fn check_integrity(obs: &Observed, req: &[Message], resp: &[Message]) {
    assert_eq!(obs.out.len(), req.len() + resp.len());
    let mut next = [0usize; 2];
    for (i, (src, m)) in obs.grants.iter().zip(&obs.out).enumerate() {
        let want = if *src == REQ {
            &req[next[*src]]
        } else {
            &resp[next[*src]]
        };
        assert_eq!(m, want, "message {i} (source {src}) differs");
        next[*src] += 1;
    }
}

#[test]
fn synthesises() {
    let mut uut = TxArbiter::new();
    uut.connect_all();
    yosys_validate("nic_rtl_tx_arbiter", &generate_verilog(&uut)).expect("yosys accepts TxArbiter");
}

/// Random traffic on both sources with idle gaps and back-pressure on every handshake,
/// checked clock by clock against the model; every message and payload arrives intact.
#[test]
fn matches_model_with_gaps_and_backpressure() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7a_0001);
    let mut total_cycles = 0;
    for (p_offer, p_word, p_msg_ready, p_payload_ready) in [
        (1.0, 1.0, 1.0, 1.0),
        (0.3, 1.0, 1.0, 1.0),
        (1.0, 0.6, 1.0, 0.7),
        (0.5, 0.7, 0.4, 0.6),
        (0.1, 0.9, 0.8, 0.3),
    ] {
        let req = random_messages(&mut rng, 120, 90);
        let resp = random_messages(&mut rng, 120, 90);
        let obs = run(
            rng.gen(),
            req.clone(),
            resp.clone(),
            p_offer,
            p_word,
            p_msg_ready,
            p_payload_ready,
        );
        check_integrity(&obs, &req, &resp);
        assert!(
            obs.max_bypass <= 2,
            "a source waited {} grants",
            obs.max_bypass
        );
        total_cycles += obs.cycles;
    }
    assert!(total_cycles > 10_000, "only {total_cycles} cycles");
}

/// Both sources always offering: grants alternate strictly, so neither starves, even
/// when one sends long payloads and the other only length-0 messages.
#[test]
fn round_robin_does_not_starve() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7a_0002);
    let mut req = random_messages(&mut rng, 60, 400);
    for m in &mut req {
        m.payload = (0..rng.gen_range(200..400)).map(|_| rng.gen()).collect();
    }
    let mut resp = random_messages(&mut rng, 60, 0);
    for m in &mut resp {
        m.payload.clear();
    }
    let obs = run(rng.gen(), req.clone(), resp.clone(), 1.0, 1.0, 0.5, 0.8);
    check_integrity(&obs, &req, &resp);
    for pair in obs.grants.windows(2).take(119) {
        assert_ne!(pair[0], pair[1], "grants {:?}", obs.grants);
    }
}

/// With sources and sink always ready, a payload streams at one word per clock and the
/// only clocks without a payload beat are the message handshakes.
#[test]
fn streams_one_word_per_clock() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7a_0003);
    let mut req = random_messages(&mut rng, 20, 0);
    let mut resp = random_messages(&mut rng, 20, 0);
    for m in req.iter_mut().chain(resp.iter_mut()) {
        m.payload = (0..rng.gen_range(1..2000)).map(|_| rng.gen()).collect();
    }
    let obs = run(rng.gen(), req.clone(), resp.clone(), 1.0, 1.0, 1.0, 1.0);
    check_integrity(&obs, &req, &resp);
    assert_eq!(obs.payload_stalls, 0);
    let words: usize = req
        .iter()
        .chain(&resp)
        .map(|m| m.payload.len().div_ceil(8))
        .sum();
    assert_eq!(obs.cycles as usize, words + req.len() + resp.len());
}

/// `TxArbiter` feeding a `CellSegmenter` (simulation-only wrapper).
#[derive(LogicBlock)]
struct ArbiterSegmenter {
    clock: Signal<In, Clock>,
    reset: Signal<In, Bit>,
    arb: TxArbiter,
    seg: CellSegmenter,
}

impl Logic for ArbiterSegmenter {
    fn update(&mut self) {
        self.arb.clock.next = self.clock.val();
        self.seg.clock.next = self.clock.val();
        self.arb.reset.next = self.reset.val();
        self.seg.reset.next = self.reset.val();
        self.seg.s_msg_valid.next = self.arb.m_msg_valid.val();
        self.arb.m_msg_ready.next = self.seg.s_msg_ready.val();
        self.seg.s_msg.next = self.arb.m_msg.val();
        self.seg.s_payload_data.next = self.arb.m_payload_data.val();
        self.seg.s_payload_valid.next = self.arb.m_payload_valid.val();
        self.arb.m_payload_ready.next = self.seg.s_payload_ready.val();
        self.seg.s_payload_last.next = self.arb.m_payload_last.val();
    }
}

impl ClockedBlock for ArbiterSegmenter {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

/// Arbiter + segmenter: the cells out are `encode_message` of the messages in the
/// order they were granted.
#[test]
fn with_segmenter_cells_match_encoder() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7a_0004);
    for (cell_payload, p_offer, p_word, p_cell_ready) in [
        (256, 1.0, 1.0, 1.0),
        (64, 0.4, 0.7, 0.6),
        (8, 0.7, 0.9, 0.8),
    ] {
        let mut uut = ArbiterSegmenter {
            clock: Default::default(),
            reset: Default::default(),
            arb: TxArbiter::new(),
            seg: CellSegmenter::new(cell_payload),
        };
        uut.connect_all();
        let mut sources = [
            Source::new(
                random_messages(&mut rng, 40, 2 * cell_payload + 9),
                p_offer,
                p_word,
            ),
            Source::new(
                random_messages(&mut rng, 40, 2 * cell_payload + 9),
                p_offer,
                p_word,
            ),
        ];
        let expected_cells: usize = sources
            .iter()
            .flat_map(|s| &s.msgs)
            .map(|m| m.payload.len().div_ceil(cell_payload).max(1))
            .sum();
        let mut granted = vec![];
        let (mut cells, mut cell) = (vec![], vec![]);
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        let mut cycles = 0;
        while cells.len() < expected_cells {
            cycles += 1;
            assert!(cycles < 1_000_000, "stalled");
            let offers: Vec<_> = sources.iter_mut().map(|s| s.drive(&mut rng)).collect();
            for (src, (m, w)) in offers.iter().enumerate() {
                drive_source(&mut uut.arb, src, m, *w);
            }
            uut.seg.m_cell_ready.next = Throttle::new(p_cell_ready).go(&mut rng);
            settle(&mut uut);
            let msg_ready = [
                uut.arb.s_req_msg_ready.val(),
                uut.arb.s_resp_msg_ready.val(),
            ];
            let payload_ready = [
                uut.arb.s_req_payload_ready.val(),
                uut.arb.s_resp_payload_ready.val(),
            ];
            for src in [REQ, RESP] {
                if let Some(m) = &offers[src].0 {
                    if msg_ready[src] {
                        granted.push(m.clone());
                        sources[src].granted(&mut rng);
                    }
                }
                if offers[src].1.is_some() && payload_ready[src] {
                    sources[src].word += 1;
                }
            }
            if uut.seg.m_cell_valid.val() && uut.seg.m_cell_ready.val() {
                cell.push(uut.seg.m_cell_data.val().to_u64());
                if uut.seg.m_cell_last.val() {
                    cells.push(std::mem::take(&mut cell));
                }
            }
            tick(&mut uut);
        }
        assert_eq!(granted.len(), 80);
        assert_eq!(uut.seg.stat_payload_last_errors.val().to_u32(), 0);
        let want: Vec<Vec<u64>> = granted
            .iter()
            .flat_map(|m| encode_message(m, cell_payload).unwrap())
            .collect();
        assert_eq!(cells.len(), want.len(), "cell_payload {cell_payload}");
        for (i, (got, want)) in cells.iter().zip(&want).enumerate() {
            assert_eq!(got, want, "cell {i} differs (cell_payload {cell_payload})");
        }
    }
}
