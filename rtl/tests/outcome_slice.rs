//! `OutcomeSlice` against a model of its contract: beats offered with random gaps and
//! taken under random back-pressure leave in order and unchanged, each with its header's
//! classes (`OutcomeClass::of`); `s_ready` is a register (no path from `m_ready`);
//! `m_valid_next` foretells `m_valid`; one beat per clock without back-pressure.

use nic_rtl::cell::format::opcode;
use nic_rtl::cell::OutcomeSlice;
use nic_rtl::common::{CellOutcomeHeader, OutcomeClass};
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

/// One beat of the handshake: data, bytes, last, header.
type Beat = (u64, u8, bool, CellOutcomeHeader);

fn random_header(rng: &mut ChaCha8Rng) -> CellOutcomeHeader {
    let op = if rng.gen_bool(0.8) {
        opcode::ALL[rng.gen_range(0..opcode::ALL.len())]
    } else {
        rng.gen()
    };
    let dma: u32 = if rng.gen_bool(0.3) { 8 } else { rng.gen() };
    let msg: u32 = match rng.gen_range(0..3) {
        0 => 16,
        1 => dma,
        _ => rng.gen(),
    };
    let vaddr: u64 = if rng.gen_bool(0.5) {
        rng.gen::<u64>() & !7
    } else {
        rng.gen()
    };
    CellOutcomeHeader {
        status: (rng.gen_range(0..5u64) * rng.gen_range(0..2u64)).to_bits(),
        opcode: (op as u64).to_bits(),
        flags: (rng.gen::<u8>() as u64 & if rng.gen_bool(0.7) { 0x1F } else { 0xFF }).to_bits(),
        cell_length: (rng.gen::<u16>() as u64).to_bits(),
        dest_node: (rng.gen::<u16>() as u64).to_bits(),
        src_node: (rng.gen::<u16>() as u64).to_bits(),
        dest_qp: (rng.gen::<u16>() as u64).to_bits(),
        src_qp: (rng.gen::<u16>() as u64).to_bits(),
        cell_seq: (if rng.gen_bool(0.5) {
            0
        } else {
            rng.gen::<u16>() as u64
        })
        .to_bits(),
        psn: (rng.gen::<u32>() as u64 & 0xFF_FFFF).to_bits(),
        msg_length: (msg as u64).to_bits(),
        vaddr: vaddr.to_bits(),
        stag: (rng.gen::<u32>() as u64).to_bits(),
        dma_length: (dma as u64).to_bits(),
        offset: (rng.gen::<u32>() as u64).to_bits(),
        immediate: (rng.gen::<u32>() as u64).to_bits(),
    }
}

/// Outcomes of 1..=6 beats each, the header held for all of an outcome's beats.
fn random_beats(rng: &mut ChaCha8Rng, outcomes: usize) -> Vec<Beat> {
    let mut beats = vec![];
    for _ in 0..outcomes {
        let h = random_header(rng);
        let n = rng.gen_range(1..=6);
        for k in 0..n {
            beats.push((rng.gen(), rng.gen_range(0..=8), k + 1 == n, h));
        }
    }
    beats
}

/// Runs `beats` through the slice: the source offers with probability `offer` (and holds
/// an offered beat until taken), the sink is ready with probability `ready`. Returns the
/// beats taken and the clocks it took.
fn run(beats: &[Beat], seed: u64, offer: f64, ready: f64) -> (Vec<Beat>, u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = OutcomeSlice::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    let mut queue: VecDeque<Beat> = beats.iter().copied().collect();
    let mut offered = false;
    let mut got = vec![];
    let mut clocks = 0u64;
    while got.len() < beats.len() {
        assert!(clocks < 100_000, "stuck after {} beats", got.len());
        if !offered {
            offered = !queue.is_empty() && rng.gen_bool(offer);
        }
        uut.s_valid.next = offered;
        if let Some(&(data, bytes, last, h)) = queue.front() {
            uut.s_data.next = data.to_bits();
            uut.s_bytes.next = (bytes as u64).to_bits();
            uut.s_last.next = last;
            uut.s_outcome.next = h;
        }
        let m_ready = rng.gen_bool(ready);
        // `s_ready` does not depend on `m_ready` in the same clock.
        uut.m_ready.next = !m_ready;
        settle(&mut uut);
        let s_ready_other = uut.s_ready.val();
        uut.m_ready.next = m_ready;
        settle(&mut uut);
        assert_eq!(uut.s_ready.val(), s_ready_other, "s_ready follows m_ready");
        let valid_next = uut.m_valid_next.val();
        if uut.m_valid.val() && m_ready {
            let h = uut.m_outcome.val();
            assert_eq!(
                uut.m_class.val(),
                OutcomeClass::of(&h),
                "beat {}: the classes of its header",
                got.len()
            );
            got.push((
                uut.m_data.val().to_u64(),
                uut.m_bytes.val().to_u8(),
                uut.m_last.val(),
                h,
            ));
        }
        if offered && uut.s_ready.val() {
            queue.pop_front();
            offered = false;
        }
        tick(&mut uut);
        clocks += 1;
        settle(&mut uut);
        assert_eq!(
            uut.m_valid.val(),
            valid_next,
            "m_valid_next foretold m_valid"
        );
    }
    (got, clocks)
}

#[test]
fn delivers_every_beat_in_order_under_back_pressure() {
    for (seed, offer, ready) in [(1, 0.7, 0.5), (2, 1.0, 0.3), (3, 0.4, 0.9), (4, 1.0, 0.8)] {
        let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
        let beats = random_beats(&mut rng, 400);
        let (got, _) = run(&beats, seed, offer, ready);
        assert_eq!(got.len(), beats.len());
        for (i, (g, w)) in got.iter().zip(&beats).enumerate() {
            assert_eq!(g, w, "beat {i} (seed {seed})");
        }
    }
}

#[test]
fn one_beat_per_clock_without_back_pressure() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let beats = random_beats(&mut rng, 200);
    let (got, clocks) = run(&beats, 7, 1.0, 1.0);
    assert_eq!(got, beats);
    // One clock of latency, then a beat every clock.
    assert_eq!(clocks, beats.len() as u64 + 1);
}

#[test]
fn synthesises() {
    let mut uut = OutcomeSlice::new();
    uut.connect_all();
    yosys_validate("nic_rtl_outcome_slice", &generate_verilog(&uut))
        .expect("yosys accepts OutcomeSlice");
}
