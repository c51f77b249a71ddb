//! `AckEventQueue` against a plain-Rust queue of the same depth, with a `nic_model::Source`
//! producer (idle gaps) and a consumer with back-pressure.

use nic_model::{Source, Throttle};
use nic_rtl::common::AckEvent;
use nic_rtl::requester::ack_event_queue::ACK_EVENT_QUEUE_DEPTH;
use nic_rtl::sim::tick;
use nic_rtl::AckEventQueue;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Event {
    qp: u64,
    psn: u64,
    syndrome: u64,
    response: bool,
    resync: bool,
}

fn random_event(rng: &mut ChaCha8Rng) -> Event {
    Event {
        qp: rng.gen_range(0..64),
        psn: rng.gen_range(0..1 << 24),
        syndrome: rng.gen_range(0..256),
        response: rng.gen(),
        resync: rng.gen(),
    }
}

fn drive(uut: &mut AckEventQueue, e: Option<Event>) {
    let e = e.unwrap_or(Event {
        qp: 0,
        psn: 0,
        syndrome: 0,
        response: false,
        resync: false,
    });
    uut.s_ack.next = AckEvent {
        qp: e.qp.to_bits(),
        psn: e.psn.to_bits(),
        syndrome: e.syndrome.to_bits(),
        response: e.response,
        resync: e.resync,
    };
}

fn head(uut: &AckEventQueue) -> Event {
    let h = uut.m_ack.val();
    Event {
        qp: h.qp.index() as u64,
        psn: h.psn.index() as u64,
        syndrome: h.syndrome.index() as u64,
        response: h.response,
        resync: h.resync,
    }
}

/// Random producer and consumer, each with idle gaps, checked every clock against a
/// plain-Rust queue of the same depth: the ready and valid flags, the head's fields,
/// and that every event comes out once, in order. Returns the clocks it ran.
fn run_against_model(seed: u64, p_offer: f64, p_take: f64, events: usize) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = AckEventQueue::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    let mut model: VecDeque<Event> = VecDeque::new();
    let sent: Vec<Event> = (0..events).map(|_| random_event(&mut rng)).collect();
    // A source holds its offer until it is taken.
    let mut source = Source::new(sent.iter().copied(), Throttle::new(p_offer));
    let consumer = Throttle::new(p_take);
    let mut received = vec![];
    let mut cycles = 0u64;
    while received.len() < events {
        cycles += 1;
        assert!(cycles < 100 * events as u64 + 1000, "queue stopped moving");
        let offer = source.offer(&mut rng).then(|| *source.front().unwrap());
        let take = consumer.go(&mut rng);
        uut.s_ack_valid.next = offer.is_some();
        drive(&mut uut, offer);
        uut.m_ack_ready.next = take;
        nic_rtl::sim::settle(&mut uut);
        assert_eq!(uut.s_ack_ready.val(), model.len() < ACK_EVENT_QUEUE_DEPTH);
        assert_eq!(uut.m_ack_valid.val(), !model.is_empty());
        if let Some(&h) = model.front() {
            assert_eq!(head(&uut), h, "head at clock {cycles}");
        }
        let popped = take && !model.is_empty();
        let pushed = offer.is_some() && model.len() < ACK_EVENT_QUEUE_DEPTH;
        if popped {
            received.push(model.pop_front().expect("not empty"));
        }
        if pushed {
            model.push_back(source.take());
        }
        tick(&mut uut);
    }
    assert_eq!(received, sent);
    cycles
}

/// What the `AckEvent` bundle costs (docs/nic-blocks.md, "Bundles as LogicStruct"): one
/// 40-bit Verilog port per bundle; one wire per field in RustHDL's VCD.
#[test]
fn the_bundle_is_one_verilog_port_and_one_vcd_wire_per_field() {
    let mut uut = AckEventQueue::new();
    uut.connect_all();
    let v = generate_verilog(&uut);
    assert!(v.contains("input wire  [39:0] s_ack;"), "{v}");
    assert!(v.contains("output reg  [39:0] m_ack;"), "{v}");
    assert!(!v.contains("s_ack_qp"));
    let mut header = vec![];
    drop(write_vcd_header(&mut header, &uut));
    let header = String::from_utf8(header).unwrap();
    for field in ["qp", "psn", "syndrome", "response", "resync"] {
        for port in ["s_ack", "m_ack"] {
            assert!(
                header.contains(&format!(" {port}${field} ")),
                "{port}${field}"
            );
        }
    }
    assert!(header.contains(" 24 "), "the psn wire is 24 bits wide");
}

#[test]
fn synthesises() {
    let mut uut = AckEventQueue::new();
    uut.connect_all();
    yosys_validate("nic_rtl_ack_event_queue", &generate_verilog(&uut))
        .expect("yosys accepts AckEventQueue");
}

/// Seeded random stimulus with idle gaps and back-pressure on both sides, from an
/// always-full queue (slow consumer) to an always-empty one (slow producer).
#[test]
fn matches_model_with_gaps_and_backpressure() {
    let mut total = 0;
    for (i, (p_offer, p_take)) in [(1.0, 1.0), (1.0, 0.2), (0.2, 1.0), (0.6, 0.5), (0.9, 0.7)]
        .into_iter()
        .enumerate()
    {
        total += run_against_model(0xac_0001 + i as u64, p_offer, p_take, 600);
    }
    assert!(total > 5_000, "only {total} clocks");
}

/// Full throughput: with both sides always ready an event passes every clock, and a
/// full queue still takes one on a clock its head leaves.
#[test]
fn one_event_per_clock() {
    let cycles = run_against_model(0xac_0002, 1.0, 1.0, 500);
    assert!(cycles <= 502, "{cycles} clocks for 500 events");
}

/// Reset empties it: nothing is offered afterwards, and it takes four events again.
#[test]
fn reset_empties_the_queue() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xac_0003);
    let mut uut = AckEventQueue::new();
    uut.connect_all();
    uut.m_ack_ready.next = false;
    uut.s_ack_valid.next = true;
    for _ in 0..ACK_EVENT_QUEUE_DEPTH {
        drive(&mut uut, Some(random_event(&mut rng)));
        tick(&mut uut);
    }
    nic_rtl::sim::settle(&mut uut);
    assert!(!uut.s_ack_ready.val(), "full after {ACK_EVENT_QUEUE_DEPTH}");
    uut.s_ack_valid.next = false;
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    nic_rtl::sim::settle(&mut uut);
    assert!(!uut.m_ack_valid.val());
    assert!(uut.s_ack_ready.val());
}
