//! `BurstSize` against a plain-Rust model written from its doc comment: the word count
//! `ceil(length / 8)`, `words_left - 1`, and the next burst `min(words, MAX_BURST_WORDS)`
//! of the first burst or of a later one, on seeded random inputs weighted toward the
//! edges (multiples of 8 and their neighbours, the burst limit, 0 and the largest values).

use nic_rtl::responder::response_generator::MAX_BURST_WORDS;
use nic_rtl::responder::BurstSize;
use nic_rtl::sim::settle;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// The documented outputs: (words, words after, next burst).
fn model(first: bool, length: u32, words_left: u32) -> (u32, u32, u16) {
    let words = (length as u64).div_ceil(8) as u32;
    let after = words_left.wrapping_sub(1);
    let source = if first { words } else { after };
    (words, after, (source as u64).min(MAX_BURST_WORDS) as u16)
}

fn near(rng: &mut ChaCha8Rng, x: u64) -> u32 {
    (x as i64 + rng.gen_range(-2i64..=2)).clamp(0, u32::MAX as i64) as u32
}

fn random_length(rng: &mut ChaCha8Rng) -> u32 {
    match rng.gen_range(0..5) {
        0 => near(rng, 8 * MAX_BURST_WORDS),
        1 => near(rng, 8 * (MAX_BURST_WORDS - 1)),
        2 => {
            let w = rng.gen_range(0..4);
            near(rng, 8 * w)
        }
        3 => [0, 1, u32::MAX, u32::MAX - 7][rng.gen_range(0..4)],
        _ => rng.gen(),
    }
}

/// At least 1 (the contract asks for 2 when a later burst is sized; 1 leaves 0 after).
fn random_words_left(rng: &mut ChaCha8Rng) -> u32 {
    match rng.gen_range(0..4) {
        0 => near(rng, MAX_BURST_WORDS),
        1 => near(rng, MAX_BURST_WORDS + 1),
        2 => [1, 2, 3, u32::MAX][rng.gen_range(0..4)],
        _ => rng.gen::<u32>().max(1),
    }
}

#[test]
fn matches_model_on_random_inputs() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xB0B5_0001);
    let mut uut = BurstSize::new();
    uut.connect_all();
    let (mut short, mut long) = (0, 0);
    for i in 0..100_000 {
        let (first, length, left) = (
            rng.gen::<bool>(),
            random_length(&mut rng),
            random_words_left(&mut rng),
        );
        uut.s_first.next = first;
        uut.s_length.next = (length as u64).to_bits();
        uut.s_words_left.next = (left as u64).to_bits();
        settle(&mut uut);
        let want = model(first, length, left);
        let got = (
            uut.m_words.val().to_u32(),
            uut.m_words_after.val().to_u32(),
            uut.m_next_burst.val().to_u64() as u16,
        );
        assert_eq!(
            got, want,
            "case {i}: first {first} length {length} words left {left}"
        );
        if want.2 as u64 == MAX_BURST_WORDS {
            long += 1;
        } else {
            short += 1;
        }
    }
    assert!(
        short > 1000 && long > 1000,
        "{short} short, {long} full bursts"
    );
}

#[test]
fn synthesises() {
    let mut uut = BurstSize::new();
    uut.connect_all();
    yosys_validate("nic_rtl_burst_size", &generate_verilog(&uut)).expect("yosys accepts BurstSize");
}
