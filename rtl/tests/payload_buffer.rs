//! `PayloadBuffer` against a plain-Rust queue of the same depth (its doc comment: a FIFO
//! of `PAYLOAD_BUFFER_DEPTH` words with their `last` flags, one clock from in to out),
//! with a `nic_model::Source` producer (idle gaps) and a consumer with back-pressure.

use nic_model::{Source, Throttle};
use nic_rtl::requester::payload_buffer::PAYLOAD_BUFFER_DEPTH;
use nic_rtl::requester::PayloadBuffer;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

type Word = (u64, bool);

fn new_buffer() -> PayloadBuffer {
    let mut uut = PayloadBuffer::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    uut
}

/// Random producer and consumer, each with idle gaps, checked every clock against a
/// plain-Rust queue: the ready and valid flags, the head word and its `last`, and that
/// every word comes out once, in order. Returns the clocks it ran.
fn run_against_model(seed: u64, p_offer: f64, p_take: f64, words: usize) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = new_buffer();
    let sent: Vec<Word> = (0..words).map(|_| (rng.gen(), rng.gen_bool(0.2))).collect();
    let mut model: VecDeque<Word> = VecDeque::new();
    let mut source = Source::new(sent.iter().copied(), Throttle::new(p_offer));
    let consumer = Throttle::new(p_take);
    let mut received = vec![];
    let mut cycles = 0u64;
    while received.len() < words {
        cycles += 1;
        assert!(cycles < 100 * words as u64 + 1000, "buffer stopped moving");
        let offer = source.offer(&mut rng).then(|| *source.front().unwrap());
        let take = consumer.go(&mut rng);
        uut.s_valid.next = offer.is_some();
        let (d, l) = offer.unwrap_or((0, false));
        uut.s_data.next = d.to_bits();
        uut.s_last.next = l;
        uut.m_ready.next = take;
        settle(&mut uut);
        assert_eq!(
            uut.s_ready.val(),
            model.len() < PAYLOAD_BUFFER_DEPTH,
            "s_ready at clock {cycles}"
        );
        assert_eq!(
            uut.m_valid.val(),
            !model.is_empty(),
            "m_valid at clock {cycles}"
        );
        if let Some(&(d, l)) = model.front() {
            assert_eq!(
                (uut.m_data.val().to_u64(), uut.m_last.val()),
                (d, l),
                "head at clock {cycles}"
            );
        }
        let popped = take && !model.is_empty();
        let pushed = offer.is_some() && model.len() < PAYLOAD_BUFFER_DEPTH;
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

#[test]
fn synthesises() {
    let mut uut = PayloadBuffer::new();
    uut.connect_all();
    yosys_validate("nic_rtl_payload_buffer", &generate_verilog(&uut))
        .expect("yosys accepts PayloadBuffer");
}

/// Seeded random stimulus with idle gaps and back-pressure on both sides, from an
/// always-full buffer (slow consumer) to an always-empty one (slow producer).
#[test]
fn matches_model_with_gaps_and_backpressure() {
    let mut total = 0;
    for (i, (p_offer, p_take)) in [(1.0, 1.0), (1.0, 0.2), (0.2, 1.0), (0.6, 0.5), (0.9, 0.7)]
        .into_iter()
        .enumerate()
    {
        total += run_against_model(0xb0_0001 + i as u64, p_offer, p_take, 2000);
    }
    assert!(total > 10_000, "only {total} clocks");
}

/// Full throughput: with both sides always ready a word passes every clock (no bubbles),
/// and a full buffer still takes one on a clock its head leaves.
#[test]
fn one_word_per_clock() {
    let cycles = run_against_model(0xb0_0002, 1.0, 1.0, 1000);
    assert!(cycles <= 1002, "{cycles} clocks for 1000 words");
}

/// It holds `PAYLOAD_BUFFER_DEPTH` words with nothing taken; reset empties it.
#[test]
fn fills_to_its_depth_and_reset_empties_it() {
    let mut uut = new_buffer();
    uut.m_ready.next = false;
    uut.s_valid.next = true;
    for i in 0..PAYLOAD_BUFFER_DEPTH as u64 {
        uut.s_data.next = i.to_bits();
        settle(&mut uut);
        assert!(uut.s_ready.val(), "takes word {i}");
        tick(&mut uut);
    }
    settle(&mut uut);
    assert!(!uut.s_ready.val(), "full after {PAYLOAD_BUFFER_DEPTH}");
    assert_eq!(uut.m_data.val().to_u64(), 0, "the first word at the head");
    uut.s_valid.next = false;
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    settle(&mut uut);
    assert!(!uut.m_valid.val());
    assert!(uut.s_ready.val());
}
