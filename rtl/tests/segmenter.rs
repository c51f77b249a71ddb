//! `CellSegmenter` against the reference encoder (`encode_message`), with idle gaps and
//! back-pressure from `nic_model`.

use nic_model::cell_faults::random_message;
use nic_model::words::payload_words;
use nic_model::Throttle;
use nic_rtl::cell::format::{encode_message, Message};
use nic_rtl::common::MessageDescriptor;
use nic_rtl::sim::{settle, tick};
use nic_rtl::CellSegmenter;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// Drive `messages` through a segmenter; returns the cells and the clocks taken.
fn run(
    cell_payload: usize,
    messages: &[Message],
    seed: u64,
    gaps: bool,
    backpressure: bool,
) -> (Vec<Vec<u64>>, u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = CellSegmenter::new(cell_payload);
    uut.connect_all();
    // Payload words of all messages in order, with `last` and garbage past the length.
    let words: Vec<(u64, bool)> = messages
        .iter()
        .flat_map(|m| payload_words(&m.payload, &mut rng))
        .collect();
    // Valid is drawn afresh each clock (the segmenter must not rely on it being held).
    let msg_gaps = Throttle::when(gaps, 0.5);
    let word_gaps = Throttle::when(gaps, 0.7);
    let cell_ready = Throttle::when(backpressure, 0.6);
    let (mut next_msg, mut next_word) = (0, 0);
    let mut cells = vec![];
    let mut cell = vec![];
    let expected_cells: usize = messages
        .iter()
        .map(|m| m.payload.len().div_ceil(cell_payload).max(1))
        .sum();
    let mut cycles = 0u64;
    while cells.len() < expected_cells {
        cycles += 1;
        assert!(
            cycles < 1_000_000,
            "segmenter stalled after {} cells",
            cells.len()
        );
        let offer_msg = next_msg < messages.len() && msg_gaps.go(&mut rng);
        uut.s_msg_valid.next = offer_msg;
        if offer_msg {
            let m = &messages[next_msg];
            uut.s_msg.next = MessageDescriptor::of(m);
        }
        let offer_word = next_word < words.len() && word_gaps.go(&mut rng);
        uut.s_payload_valid.next = offer_word;
        if offer_word {
            uut.s_payload_data.next = words[next_word].0.to_bits();
            uut.s_payload_last.next = words[next_word].1;
        }
        uut.m_cell_ready.next = cell_ready.go(&mut rng);
        settle(&mut uut);
        if offer_msg && uut.s_msg_ready.val() {
            next_msg += 1;
        }
        if offer_word && uut.s_payload_ready.val() {
            next_word += 1;
        }
        if uut.m_cell_valid.val() && uut.m_cell_ready.val() {
            cell.push(uut.m_cell_data.val().to_u64());
            if uut.m_cell_last.val() {
                cells.push(std::mem::take(&mut cell));
            }
        }
        tick(&mut uut);
    }
    assert_eq!(uut.stat_payload_last_errors.val().to_u32(), 0);
    assert_eq!(uut.stat_cells.val().to_u32() as usize, expected_cells);
    (cells, cycles)
}

fn expected(cell_payload: usize, messages: &[Message]) -> Vec<Vec<u64>> {
    messages
        .iter()
        .flat_map(|m| encode_message(m, cell_payload).unwrap())
        .collect()
}

#[test]
fn synthesises() {
    let mut uut = CellSegmenter::new(256);
    uut.connect_all();
    yosys_validate("nic_rtl_cell_segmenter", &generate_verilog(&uut))
        .expect("yosys accepts CellSegmenter");
}

#[test]
fn matches_reference_encoder_with_gaps_and_backpressure() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5e9_0001);
    for (cell_payload, gaps, backpressure) in [
        (256, false, false),
        (256, true, false),
        (256, false, true),
        (256, true, true),
        (64, true, true),
        (8, true, true),
    ] {
        let messages: Vec<Message> = (0..25)
            .map(|_| random_message(&mut rng, 3 * cell_payload + 9))
            .collect();
        let (cells, _) = run(cell_payload, &messages, rng.gen(), gaps, backpressure);
        let want = expected(cell_payload, &messages);
        assert_eq!(cells.len(), want.len());
        for (i, (got, want)) in cells.iter().zip(&want).enumerate() {
            assert_eq!(got, want, "cell {i} differs (cell_payload {cell_payload}, gaps {gaps}, backpressure {backpressure})");
        }
    }
}

/// Back-to-back full cells stream at one word per clock: the only clocks without a
/// word out are one per message (packet CRC un-shift, before the trailer) and the first
/// descriptor's; the next descriptor is taken with the previous message's last word.
#[test]
fn streams_one_word_per_clock() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let messages: Vec<Message> = (0..6)
        .map(|_| {
            let mut m = random_message(&mut rng, 0);
            m.payload = (0..1024 + 40).map(|_| rng.gen()).collect();
            m
        })
        .collect();
    let (cells, cycles) = run(256, &messages, 1, false, false);
    let words: usize = cells.iter().map(Vec::len).sum();
    // The first descriptor's clock, one per message, and the output register's.
    assert_eq!(
        cycles as usize,
        1 + words + messages.len() + 1,
        "{cycles} clocks for {words} words of {} messages",
        messages.len()
    );
}

#[test]
#[should_panic(expected = "must be a multiple of 8")]
fn rejects_cell_payload_not_multiple_of_8() {
    CellSegmenter::new(100);
}

#[test]
#[should_panic(expected = "between 8 and 1024, got 2048")]
fn rejects_cell_payload_too_large() {
    CellSegmenter::new(2048);
}
