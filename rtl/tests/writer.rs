//! `Writer` (the receive engine's host-memory write path) against a plain-Rust model
//! written from its documentation, stepped by its inputs only, on seeded random beats with
//! idle gaps and back-pressure on `m_wr`.

use nic_rtl::responder::Writer;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// One DMA write: address, data, strobes.
type Write = (u32, u64, u8);

/// The writer as its documentation describes it, stepped by its inputs only.
#[derive(Default)]
struct Model {
    /// The write on `m_wr` (registered).
    out: Option<Write>,
    /// Message offset of the next beat, when an outcome is under way.
    next_offset: Option<u32>,
    compare_or_add: u64,
    swap: u64,
}

#[derive(Clone, Copy, Default)]
struct Beat {
    data: u64,
    bytes: u8,
    offset: u32,
    last: bool,
    empty: bool,
    write: bool,
    collect: bool,
}

impl Model {
    fn beat_ready(&self, m_wr_ready: bool) -> bool {
        self.out.is_none() || m_wr_ready
    }

    /// The strobes of a beat at message offset `off`: its valid bytes below `limit`.
    fn strobe(b: &Beat, off: u32, limit: u32) -> u8 {
        if b.empty {
            return 0;
        }
        (0..8u8)
            .filter(|&i| i < b.bytes && (off as u64 + i as u64) < limit as u64)
            .fold(0, |s, i| s | 1 << i)
    }

    #[allow(clippy::too_many_arguments)]
    fn clock(
        &mut self,
        base: u32,
        limit: u32,
        take: Option<Beat>,
        atomic: Option<(bool, u64)>,
        m_wr_ready: bool,
        reset: bool,
    ) {
        if m_wr_ready {
            self.out = None;
        }
        if let Some((cas, old)) = atomic {
            let new = if cas {
                self.swap
            } else {
                old.wrapping_add(self.compare_or_add)
            };
            if !cas || old == self.compare_or_add {
                self.out = Some((base, new, 0xFF));
            }
        }
        if let Some(b) = take {
            let off = self.next_offset.unwrap_or(b.offset);
            if b.write {
                let s = Self::strobe(&b, off, limit);
                self.out = (s != 0).then_some((base.wrapping_add(off), b.data, s));
            }
            if b.collect && off == 0 {
                self.compare_or_add = b.data;
            }
            if b.collect && off == 8 {
                self.swap = b.data;
            }
            self.next_offset = (!b.last).then_some(off.wrapping_add(8));
        }
        if reset {
            self.out = None;
            self.next_offset = None;
        }
    }
}

/// Seeded random outcomes (payload beats written, collected or discarded, at random
/// offsets against random windows), atomic results, a DMA port that back-pressures at
/// random, idle gaps and resets; the outputs compared every clock.
fn run(seed: u64, cycles: usize) -> usize {
    let mut uut = Writer::new();
    uut.connect_all();
    let mut model = Model::default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut base, mut limit) = (0u32, 0u32);
    let mut beat: Option<Beat> = None;
    let mut mode = (true, false);
    let mut writes = 0;
    for cycle in 0..cycles {
        let phase = (cycle / 250) % 4;
        let p_ready = [1.0, 0.5, 0.1, 0.8][phase];
        let p_beat = [0.95, 0.6, 0.9, 0.2][phase];
        if model.next_offset.is_none() && beat.is_none() && rng.gen_bool(0.3) {
            // A new message's window and mode between outcomes.
            base = rng.gen::<u32>() & !7;
            if rng.gen_bool(0.1) {
                base = u32::MAX - rng.gen_range(0..64);
            }
            limit = rng.gen_range(0..160);
            if rng.gen_bool(0.05) {
                limit = u32::MAX - rng.gen_range(0..16);
            }
            mode = [(true, false), (false, true), (false, false)][rng.gen_range(0..3)];
        }
        if beat.is_none() && rng.gen_bool(p_beat) {
            // Outcome offsets are multiples of 8 (the reassembler's cells carry whole
            // words but the last).
            let offset = if rng.gen_bool(0.05) {
                (u32::MAX & !7) - 8 * rng.gen_range(0..3)
            } else {
                rng.gen_range(0..12) * 8
            };
            beat = Some(Beat {
                data: rng.gen(),
                bytes: if rng.gen_bool(0.7) {
                    8
                } else {
                    rng.gen_range(1..=8)
                },
                offset,
                last: rng.gen_bool(0.3),
                empty: rng.gen_bool(0.05),
                write: mode.0,
                collect: mode.1,
            });
        }
        let m_wr_ready = rng.gen_bool(p_ready);
        let reset = rng.gen_bool(0.003);
        let b = beat.unwrap_or_default();
        // The engine takes a written beat only while the output register frees; any
        // other beat at once. An atomic result only with nothing waiting, no beat.
        let take = beat.is_some() && (!b.write || model.beat_ready(m_wr_ready));
        let atomic = (!take && model.out.is_none() && rng.gen_bool(0.05)).then(|| {
            (
                rng.gen_bool(0.5),
                if rng.gen_bool(0.3) {
                    model.compare_or_add
                } else {
                    rng.gen()
                },
            )
        });
        let (cas, old) = atomic.unwrap_or_default();
        uut.reset.next = reset;
        uut.base.next = base.to_bits();
        uut.limit.next = limit.to_bits();
        uut.s_take.next = take;
        uut.s_data.next = b.data.to_bits();
        uut.s_bytes.next = (b.bytes as u64).to_bits();
        uut.s_offset.next = b.offset.to_bits();
        uut.s_last.next = b.last;
        uut.s_empty.next = b.empty;
        uut.s_write.next = b.write;
        uut.s_collect.next = b.collect;
        uut.atomic_write.next = atomic.is_some();
        uut.atomic_cas.next = cas;
        uut.atomic_old.next = old.to_bits();
        uut.m_wr_ready.next = m_wr_ready;
        settle(&mut uut);
        let at = format!("clock {cycle} (seed {seed})");
        assert_eq!(
            uut.beat_ready.val(),
            model.beat_ready(m_wr_ready),
            "beat_ready, {at}"
        );
        assert_eq!(
            uut.m_wr_valid.val(),
            model.out.is_some(),
            "m_wr_valid, {at}"
        );
        assert_eq!(uut.busy.val(), model.out.is_some(), "busy, {at}");
        if let Some(w) = model.out {
            let got = (
                uut.m_wr_addr.val().to_u64() as u32,
                uut.m_wr_data.val().to_u64(),
                uut.m_wr_strobe.val().to_u64() as u8,
            );
            assert_eq!(got, w, "m_wr, {at}");
            writes += m_wr_ready as usize;
        }
        model.clock(base, limit, take.then_some(b), atomic, m_wr_ready, reset);
        tick(&mut uut);
        if take {
            beat = None;
        }
    }
    writes
}

#[test]
fn synthesises() {
    let mut uut = Writer::new();
    uut.connect_all();
    yosys_validate("nic_rtl_responder_writer", &generate_verilog(&uut))
        .expect("yosys accepts Writer");
}

#[test]
fn matches_model_with_gaps_and_backpressure() {
    for seed in 1..=4 {
        let writes = run(seed, 6_000);
        assert!(writes > 400, "seed {seed}: {writes} writes");
    }
}
