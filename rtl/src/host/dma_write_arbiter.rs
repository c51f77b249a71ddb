//! `DmaWriteArbiter`: two DMA write clients onto the NIC's one host-memory write port.
//!
//! Follows the DMA write client bundle and the "DMA ports" paragraph of
//! `docs/nic-blocks.md` (write = `ReceiveQueueEngine` payload and atomic writes,
//! `CompletionQueue`); host-memory rules in `docs/nic-architecture.md`.
//!
//! Ports (all valid/ready: a beat moves on a rising edge where both are high):
//! - `clock`, `reset` (synchronous, active high: forgets the round-robin state; no beat
//!   moves while it is high).
//! - `s_a_wr_valid` / `s_a_wr_ready`, `s_a_wr_addr` (32), `s_a_wr_data` (64),
//!   `s_a_wr_strobe` (8): client A.
//! - `s_b_wr_valid` / `s_b_wr_ready`, `s_b_wr_addr` (32), `s_b_wr_data` (64),
//!   `s_b_wr_strobe` (8): client B.
//! - `m_wr_valid` / `m_wr_ready`, `m_wr_addr` (32), `m_wr_data` (64), `m_wr_strobe` (8):
//!   towards host memory.
//!
//! Arbitration: round robin per beat. When both clients offer a beat, the one that did
//! not move the last beat goes first; a lone client takes every clock. Once a beat is
//! shown on `m_wr_*` it stays there (same client, same fields) until host memory takes
//! it, so `m_wr_*` keeps the valid/ready rule even when the other client turns up
//! meanwhile. Each client's beats leave in its own order, unchanged.
//!
//! Latency: none (combinational pass-through; `s_*_ready` depends on `m_wr_ready` and on
//! both clients' `valid`). Throughput: one beat per clock. No starvation: a waiting
//! client's beat moves after at most one beat of the other client.

use crate::common::RoundRobin;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct DmaWriteArbiter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_a_wr_valid: Signal<In, Bit>,
    pub s_a_wr_ready: Signal<Out, Bit>,
    pub s_a_wr_addr: Signal<In, Bits<32>>,
    pub s_a_wr_data: Signal<In, Bits<64>>,
    pub s_a_wr_strobe: Signal<In, Bits<8>>,
    pub s_b_wr_valid: Signal<In, Bit>,
    pub s_b_wr_ready: Signal<Out, Bit>,
    pub s_b_wr_addr: Signal<In, Bits<32>>,
    pub s_b_wr_data: Signal<In, Bits<64>>,
    pub s_b_wr_strobe: Signal<In, Bits<8>>,
    pub m_wr_valid: Signal<Out, Bit>,
    pub m_wr_ready: Signal<In, Bit>,
    pub m_wr_addr: Signal<Out, Bits<32>>,
    pub m_wr_data: Signal<Out, Bits<64>>,
    pub m_wr_strobe: Signal<Out, Bits<8>>,
    /// The round robin between A (index 0) and B (index 1), per beat.
    rr: RoundRobin<2, 1>,
    /// A beat was shown last clock and not taken: keep showing it.
    hold: DFF<Bit>,
    /// The client whose beat is held (1 = B).
    held_b: DFF<Bit>,
    /// The client shown on `m_wr_*` this clock (1 = B).
    grant_b: Signal<Local, Bit>,
    /// `m_wr_valid`: the granted client offers a beat (and not in reset).
    shown: Signal<Local, Bit>,
    /// Host memory ready and not in reset: the granted client's `ready`.
    accept: Signal<Local, Bit>,
}

impl DmaWriteArbiter {
    /// The arbiter has no parameters.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for DmaWriteArbiter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, hold, held_b);
        self.rr.clock.next = self.clock.val();
        self.rr.reset.next = self.reset.val();
        self.rr.s_request.next = bit_cast::<2, 1>(self.s_a_wr_valid.val().into())
            | (bit_cast::<2, 1>(self.s_b_wr_valid.val().into()) << 1);
        self.grant_b.next = self.rr.m_grant_index.val().any();
        if self.hold.q.val() {
            self.grant_b.next = self.held_b.q.val();
        }
        self.shown.next = self.s_a_wr_valid.val();
        if self.grant_b.val() {
            self.shown.next = self.s_b_wr_valid.val();
        }
        self.accept.next = self.m_wr_ready.val() & !self.reset.val();
        if self.reset.val() {
            self.shown.next = false;
        }
        self.m_wr_valid.next = self.shown.val();
        self.m_wr_addr.next = self.s_a_wr_addr.val();
        self.m_wr_data.next = self.s_a_wr_data.val();
        self.m_wr_strobe.next = self.s_a_wr_strobe.val();
        if self.grant_b.val() {
            self.m_wr_addr.next = self.s_b_wr_addr.val();
            self.m_wr_data.next = self.s_b_wr_data.val();
            self.m_wr_strobe.next = self.s_b_wr_strobe.val();
        }
        self.s_a_wr_ready.next = !self.grant_b.val() & self.accept.val();
        self.s_b_wr_ready.next = self.grant_b.val() & self.accept.val();
        self.hold.d.next = self.shown.val() & !self.m_wr_ready.val();
        self.held_b.d.next = self.grant_b.val();
        self.rr.s_served.next = self.shown.val() & self.m_wr_ready.val();
        self.rr.s_served_index.next = bit_cast::<1, 1>(self.grant_b.val().into());
    }
}

impl ClockedBlock for DmaWriteArbiter {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{settle, tick};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

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
        let mut next = [0usize; 2];
        let mut offering = [false; 2];
        let mut waited = [0u64; 2];
        let mut max_wait = [0u64; 2];
        let mut out = vec![];
        let mut cycles = 0;
        let mut shown: Option<(bool, Beat)> = None;
        while out.len() < beats[0].len() + beats[1].len() {
            cycles += 1;
            assert!(cycles < 1_000_000, "arbiter stalled");
            for c in 0..2 {
                // A client keeps offering until its beat is taken (valid/ready rule).
                if !offering[c] {
                    offering[c] = next[c] < beats[c].len() && rng.gen_bool(offer);
                }
            }
            let beat = |c: usize| beats[c].get(next[c]).copied().unwrap_or((0, 0, 0));
            let (a, b) = (beat(0), beat(1));
            uut.s_a_wr_valid.next = offering[0];
            uut.s_a_wr_addr.next = a.0.to_bits();
            uut.s_a_wr_data.next = a.1.to_bits();
            uut.s_a_wr_strobe.next = (a.2 as u64).to_bits();
            uut.s_b_wr_valid.next = offering[1];
            uut.s_b_wr_addr.next = b.0.to_bits();
            uut.s_b_wr_data.next = b.1.to_bits();
            uut.s_b_wr_strobe.next = (b.2 as u64).to_bits();
            let m_ready = rng.gen_bool(ready);
            uut.m_wr_ready.next = m_ready;
            settle(&mut uut);
            let grant = model.grant(offering[0], offering[1]);
            assert_eq!(
                uut.m_wr_valid.val(),
                grant.is_some(),
                "valid, clock {cycles}"
            );
            if let Some(g) = grant {
                let want = if g { b } else { a };
                let got = (
                    uut.m_wr_addr.val().to_u32(),
                    uut.m_wr_data.val().to_u64(),
                    uut.m_wr_strobe.val().to_u32() as u8,
                );
                assert_eq!(got, want, "fields, clock {cycles}");
                if let Some(prev) = shown {
                    assert_eq!(prev, (g, want), "m_wr changed before it was taken");
                }
                assert_eq!(uut.s_a_wr_ready.val(), !g && m_ready);
                assert_eq!(uut.s_b_wr_ready.val(), g && m_ready);
                shown = if m_ready { None } else { Some((g, want)) };
                if m_ready {
                    let c = g as usize;
                    out.push((g, want));
                    next[c] += 1;
                    offering[c] = false;
                }
            }
            for c in 0..2 {
                if offering[c] {
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
}
