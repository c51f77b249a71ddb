//! `AnswerRouter` against a plain-Rust model written from its documentation (and
//! `nic_abi::AethRefusals`): a `nic_model::Source` of answers with idle gaps, a requester
//! with back-pressure, the odd reset, checked every clock.

use nic_abi::{AethRefusals, Syndrome, PSN_MASK};

use nic_model::{Source, Throttle};
use nic_rtl::common::AckEvent;
use nic_rtl::responder::AnswerRouter;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Event {
    qp: u64,
    psn: u32,
    syndrome: u8,
    response: bool,
    resync: bool,
}

#[derive(Clone, Copy, Debug)]
struct Answer {
    own: Event,
    /// The AETH's bits 28:8.
    refusals: u32,
}

/// The syndrome of refusal code `code` (1..=7) as the router's documentation gives it:
/// 1 is RECEIVER_NOT_READY, `c >= 2` is `0x60 + c - 1`.
fn syndrome_of(code: u32) -> u8 {
    if code == 1 {
        0x20
    } else {
        0x60 + code as u8 - 1
    }
}

/// The events an answer gives, in order (the model): the final NACK of each refused PSN
/// its AETH reports, oldest (farthest back) first, then its own.
fn events_of(a: &Answer) -> Vec<Event> {
    let mut events: Vec<Event> = (1..=7u32)
        .rev()
        .filter_map(|k| {
            let code = (a.refusals >> (3 * (k - 1))) & 7;
            (code != 0).then(|| Event {
                psn: a.own.psn.wrapping_sub(k) & PSN_MASK,
                syndrome: syndrome_of(code),
                ..a.own
            })
        })
        .collect();
    events.push(a.own);
    events
}

fn random_answer(rng: &mut ChaCha8Rng) -> Answer {
    // A code per entry: mostly none, else any of 1..=7 (5 is no final NACK's code: the
    // router passes it on as 0x64 all the same).
    let mut refusals = 0u32;
    if rng.gen_bool(0.5) {
        for k in 0..7 {
            if rng.gen_bool(0.3) {
                refusals |= rng.gen_range(1..=7u32) << (3 * k);
            }
        }
    }
    Answer {
        own: Event {
            qp: rng.gen_range(0..64),
            psn: rng.gen_range(0..1 << 24),
            syndrome: rng.gen(),
            response: rng.gen(),
            resync: rng.gen(),
        },
        refusals,
    }
}

fn drive(uut: &mut AnswerRouter, a: &Answer) {
    uut.s_answer.next = AckEvent {
        qp: a.own.qp.to_bits(),
        psn: (a.own.psn as u64).to_bits(),
        syndrome: (a.own.syndrome as u64).to_bits(),
        response: a.own.response,
        resync: a.own.resync,
    };
    uut.s_refusals.next = (a.refusals as u64).to_bits();
}

fn shown(uut: &AnswerRouter) -> Event {
    let m = uut.m_ack.val();
    Event {
        qp: m.qp.index() as u64,
        psn: m.psn.index() as u32,
        syndrome: m.syndrome.index() as u8,
        response: m.response,
        resync: m.resync,
    }
}

/// Seeded answers through the router with gaps and back-pressure (and, with `resets`, a
/// reset now and then); returns the events handed on.
fn run(seed: u64, p_offer: f64, p_take: f64, answers: usize, resets: bool) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = AnswerRouter::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    let list: Vec<Answer> = (0..answers).map(|_| random_answer(&mut rng)).collect();
    let mut source = Source::new(list.iter().copied(), Throttle::new(p_offer));
    let requester = Throttle::new(p_take);
    // The model: how many of the offered answer's events were taken.
    let mut taken = 0usize;
    let mut handed = 0usize;
    let mut cycles = 0u64;
    while !source.items.is_empty() {
        cycles += 1;
        assert!(cycles < 200 * answers as u64, "router stopped moving");
        let offer = source.offer(&mut rng);
        let ready = requester.go(&mut rng);
        let reset = resets && rng.gen_bool(0.01);
        let a = *source.front().unwrap();
        drive(&mut uut, &a);
        uut.s_valid.next = offer;
        uut.m_ready.next = ready;
        uut.reset.next = reset;
        settle(&mut uut);
        let at = format!("clock {cycles} (seed {seed})");
        assert_eq!(uut.m_valid.val(), offer, "m_valid, {at}");
        let events = events_of(&a);
        if offer {
            assert_eq!(shown(&uut), events[taken], "event {taken} of {a:?}, {at}");
            let last = taken + 1 == events.len();
            assert_eq!(uut.s_ready.val(), last && ready, "s_ready, {at}");
            if ready {
                handed += 1;
                taken += 1;
                if last {
                    source.take();
                    taken = 0;
                }
            }
        } else {
            assert_eq!(shown(&uut), a.own, "idle shows the answer, {at}");
            assert_eq!(uut.s_ready.val(), ready, "s_ready without an offer, {at}");
        }
        if reset {
            taken = 0;
        }
        tick(&mut uut);
    }
    handed
}

#[test]
fn synthesises() {
    let mut uut = AnswerRouter::new();
    uut.connect_all();
    yosys_validate("nic_rtl_responder_answer_router", &generate_verilog(&uut))
        .expect("yosys accepts AnswerRouter");
}

/// Seeded random answers with idle gaps and back-pressure, from a requester always ready
/// to a slow one, with and without resets in the middle of an answer.
#[test]
fn matches_model_with_gaps_and_backpressure() {
    let mut events = 0;
    for (i, (p_offer, p_take, resets)) in [
        (1.0, 1.0, false),
        (1.0, 0.3, false),
        (0.3, 1.0, false),
        (0.7, 0.6, true),
        (0.9, 0.8, true),
    ]
    .into_iter()
    .enumerate()
    {
        events += run(0xa7_0001 + i as u64, p_offer, p_take, 400, resets);
    }
    assert!(events > 4_000, "only {events} events");
}

/// One event per clock: with the requester always ready an answer reporting `n`
/// refusals takes `n + 1` clocks.
#[test]
fn one_event_per_clock() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xa7_0002);
    let list: Vec<Answer> = (0..300).map(|_| random_answer(&mut rng)).collect();
    let events: usize = list.iter().map(|a| events_of(a).len()).sum();
    let mut uut = AnswerRouter::new();
    uut.connect_all();
    uut.m_ready.next = true;
    uut.s_valid.next = true;
    let mut clocks = 0;
    for a in &list {
        drive(&mut uut, a);
        loop {
            settle(&mut uut);
            clocks += 1;
            let done = uut.s_ready.val();
            tick(&mut uut);
            if done {
                break;
            }
        }
    }
    assert_eq!(clocks, events);
}

/// The model's code rule is the ABI's for every final NACK (`nic_abi::AethRefusals`).
#[test]
fn the_model_names_refusals_as_the_abi_does() {
    let finals = Syndrome::NACKS
        .iter()
        .filter(|s| s.refusal_code().is_some());
    for (i, &s) in finals.enumerate() {
        let report = AethRefusals::one(1 + i % 7, s);
        let a = Answer {
            own: Event {
                qp: 3,
                psn: 5,
                syndrome: 0,
                response: false,
                resync: true,
            },
            refusals: report.to_aeth() >> 8,
        };
        let want: Vec<(u32, u8)> = report.oldest_first(5).map(|(p, s)| (p, s as u8)).collect();
        let got: Vec<(u32, u8)> = events_of(&a)[..1]
            .iter()
            .map(|e| (e.psn, e.syndrome))
            .collect();
        assert_eq!(got, want, "{s}");
    }
}
