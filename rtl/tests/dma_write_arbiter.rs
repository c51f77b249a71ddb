//! `DmaWriteArbiter` against its cycle model: two `nic_model::Source` clients with idle
//! gaps, host memory a `nic_model::DmaWriteSink` with back-pressure.

use nic_model::{DmaWriteSink, Source, Throttle};
use nic_rtl::sim::{settle, tick};
use nic_rtl::DmaWriteArbiter;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// One write beat: address, data, strobe.
type Beat = (u32, u64, u8);

/// Cycle model of the arbiter: which client is shown this clock, given who offers.
#[derive(Default)]
struct Model {
    prefer_b: bool,
    hold: Option<bool>,
}

impl Model {
    /// The client shown (true = B), or None when neither offers.
    fn grant(&self, a_valid: bool, b_valid: bool) -> Option<bool> {
        match self.hold {
            Some(b) => Some(b),
            None if a_valid && b_valid => Some(self.prefer_b),
            None if a_valid => Some(false),
            None if b_valid => Some(true),
            None => None,
        }
    }

    fn clock(&mut self, grant: Option<bool>, ready: bool) {
        self.hold = None;
        if let Some(b) = grant {
            if ready {
                self.prefer_b = !b;
            } else {
                self.hold = Some(b);
            }
        }
    }
}

fn random_beats(rng: &mut ChaCha8Rng, n: usize) -> Vec<Beat> {
    (0..n)
        .map(|_| (rng.gen::<u32>() & !7, rng.gen(), rng.gen()))
        .collect()
}

struct Run {
    /// Beats out of the arbiter, tagged with the client (true = B).
    out: Vec<(bool, Beat)>,
    cycles: u64,
    /// Longest run of clocks a client waited with its beat offered.
    max_wait: [u64; 2],
}

/// Two clients offering `beats` with probability `offer`, host memory ready with
/// probability `ready`; checks every clock against [`Model`].
fn run(seed: u64, beats: [&[Beat]; 2], offer: f64, ready: f64) -> Run {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = DmaWriteArbiter::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    let mut model = Model::default();
    // A client keeps offering until its beat is taken (valid/ready rule).
    let mut clients = beats.map(|b| Source::new(b.iter().copied(), Throttle::new(offer)));
    let mut mem = DmaWriteSink::new(ready);
    let mut waited = [0u64; 2];
    let mut max_wait = [0u64; 2];
    let mut out = vec![];
    let mut cycles = 0;
    while out.len() < beats[0].len() + beats[1].len() {
        cycles += 1;
        assert!(cycles < 1_000_000, "arbiter stalled");
        let offering = [clients[0].offer(&mut rng), clients[1].offer(&mut rng)];
        let beat = |c: usize| clients[c].front().copied().unwrap_or((0, 0, 0));
        let (a, b) = (beat(0), beat(1));
        uut.s_a_wr_valid.next = offering[0];
        uut.s_a_wr_addr.next = a.0.to_bits();
        uut.s_a_wr_data.next = a.1.to_bits();
        uut.s_a_wr_strobe.next = (a.2 as u64).to_bits();
        uut.s_b_wr_valid.next = offering[1];
        uut.s_b_wr_addr.next = b.0.to_bits();
        uut.s_b_wr_data.next = b.1.to_bits();
        uut.s_b_wr_strobe.next = (b.2 as u64).to_bits();
        let m_ready = mem.ready(&mut rng);
        uut.m_wr_ready.next = m_ready;
        settle(&mut uut);
        let grant = model.grant(offering[0], offering[1]);
        assert_eq!(
            uut.m_wr_valid.val(),
            grant.is_some(),
            "valid, clock {cycles}"
        );
        // Host memory takes the beat (and checks it was held while not taken).
        let got = (
            uut.m_wr_addr.val().to_u32(),
            uut.m_wr_data.val().to_u64(),
            uut.m_wr_strobe.val().to_u32() as u8,
        );
        let taken = mem.beat(uut.m_wr_valid.val(), got.0, got.1, got.2);
        if let Some(g) = grant {
            let want = if g { b } else { a };
            assert_eq!(got, want, "fields, clock {cycles}");
            assert_eq!(uut.s_a_wr_ready.val(), !g && m_ready);
            assert_eq!(uut.s_b_wr_ready.val(), g && m_ready);
            if taken.is_some() {
                out.push((g, clients[g as usize].take()));
            }
        }
        for c in 0..2 {
            if clients[c].offering() {
                waited[c] += 1;
                max_wait[c] = max_wait[c].max(waited[c]);
            } else {
                waited[c] = 0;
            }
        }
        model.clock(grant, m_ready);
        tick(&mut uut);
    }
    Run {
        out,
        cycles,
        max_wait,
    }
}

fn check_order(out: &[(bool, Beat)], beats: [&[Beat]; 2]) {
    for (c, want) in beats.iter().enumerate() {
        let got: Vec<Beat> = out
            .iter()
            .filter(|(b, _)| *b as usize == c)
            .map(|(_, beat)| *beat)
            .collect();
        assert_eq!(
            &got[..],
            *want,
            "client {c}: beats lost, changed or reordered"
        );
    }
}

#[test]
fn synthesises() {
    let mut uut = DmaWriteArbiter::new();
    uut.connect_all();
    yosys_validate("nic_rtl_dma_write_arbiter", &generate_verilog(&uut))
        .expect("yosys accepts DmaWriteArbiter");
}

#[test]
fn matches_model_with_gaps_and_backpressure() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xd3a_0001);
    for (offer, ready) in [(1.0, 1.0), (0.5, 1.0), (1.0, 0.4), (0.3, 0.6), (0.8, 0.8)] {
        let a = random_beats(&mut rng, 1500);
        let b = random_beats(&mut rng, 1000);
        let r = run(rng.gen(), [&a, &b], offer, ready);
        check_order(&r.out, [&a, &b]);
        if ready == 1.0 {
            // With host memory always ready nobody waits more than one clock.
            assert!(r.max_wait.iter().all(|w| *w <= 1), "{:?}", r.max_wait);
        }
    }
}

/// Both clients always offering, host memory always ready: one beat per clock,
/// strictly alternating.
#[test]
fn one_beat_per_clock_alternating() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let a = random_beats(&mut rng, 300);
    let b = random_beats(&mut rng, 300);
    let r = run(3, [&a, &b], 1.0, 1.0);
    assert_eq!(r.cycles, 600);
    for (i, (client, _)) in r.out.iter().enumerate() {
        assert_eq!(*client, i % 2 == 1, "beat {i} not alternating");
    }
    check_order(&r.out, [&a, &b]);
}

/// A lone client streams at one beat per clock.
#[test]
fn lone_client_streams() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let b = random_beats(&mut rng, 500);
    let r = run(5, [&[], &b], 1.0, 1.0);
    assert_eq!(r.cycles, 500);
    check_order(&r.out, [&[], &b]);
}

/// Under back-pressure a waiting client gets the port after at most one beat of the
/// other client (plus the clocks host memory is not ready).
#[test]
fn no_starvation_under_backpressure() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let a = random_beats(&mut rng, 400);
    let b = random_beats(&mut rng, 400);
    let r = run(7, [&a, &b], 1.0, 0.5);
    check_order(&r.out, [&a, &b]);
    let mut run_len = 0;
    let mut last = None;
    for (client, _) in &r.out {
        run_len = if Some(*client) == last {
            run_len + 1
        } else {
            1
        };
        last = Some(*client);
        assert!(
            run_len <= 1,
            "one client moved two beats while the other waited"
        );
    }
}

/// Reset gates the host side only: in a reset clock with both clients offering and host
/// memory ready, no beat is shown to host memory (`m_wr_valid` low), while the client
/// side is not steered by reset (the granted client sees host memory's ready; what it
/// hands over then is dropped, as the client is reset at the same edge in `NicTop`).
#[test]
fn no_beat_reaches_host_memory_in_a_reset_clock() {
    let mut uut = DmaWriteArbiter::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.s_a_wr_valid.next = true;
    uut.s_b_wr_valid.next = true;
    uut.m_wr_ready.next = true;
    for clock in 0..4 {
        uut.reset.next = true;
        settle(&mut uut);
        assert!(!uut.m_wr_valid.val(), "m_wr_valid in reset clock {clock}");
        assert!(
            uut.s_a_wr_ready.val() | uut.s_b_wr_ready.val(),
            "a client's ready follows host memory's in reset clock {clock}"
        );
        tick(&mut uut);
    }
    uut.reset.next = false;
    settle(&mut uut);
    assert!(uut.m_wr_valid.val(), "a beat shown once out of reset");
}
