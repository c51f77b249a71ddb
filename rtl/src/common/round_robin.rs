//! `RoundRobin`: the one round-robin arbiter of the NIC. Of the `N` requesters whose bit is
//! set, it grants the first at or after a pointer, wrapping around; serving index `i` moves
//! the pointer to `i + 1`, so the requester served last goes last among those that ask.
//!
//! Used by the requester's scheduler (`requester::Scheduler`, 64 queue pairs), the
//! `ResponseGenerator` (64 answer slots), and the two-way arbiters `TxArbiter`,
//! `CompletionQueue`, `DmaReadArbiter` and `DmaWriteArbiter` (`N = 2`). Follows
//! `docs/nic-architecture.md` ("Deadlock freedom": every source is served within `N`
//! grants while it asks) and the "RoundRobin" entry of `docs/nic-blocks.md`; the one-hot
//! encoding is the lowest-set-bit trick of verilog-axis's `arbiter.v` (mask the requests
//! below the pointer; if none remain, take the lowest of all).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: the pointer goes back to 0).
//! - `s_request` (`N`): bit `i` set when requester `i` asks.
//! - `m_grant_valid`: some bit of `s_request` is set.
//! - `m_grant_onehot` (`N`): the granted requester as a one-hot vector (0 when none asks).
//! - `m_grant_index` (`B`): its index (0 when none asks).
//! - `s_served` / `s_served_index` (`B`): on a rising edge with `s_served` high, the pointer
//!   becomes `s_served_index + 1` (mod `N`). The index need not be this clock's grant: a
//!   parent that registers the grant (the scheduler) serves the registered one.
//!
//! Latency: the grant is combinational from `s_request` and the pointer register (no path
//! from `s_served*` to `m_grant_*`). Throughput: one grant per clock.
//! Limits: `N = 2^B` with `B` in 1..=6 (2 to 64 requesters), checked by [`RoundRobin::new`].

use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Bit i set where bit `b` of i is set: the one-hot to index encoding of bit `b`, for an
/// `n`-bit one-hot vector.
fn index_mask(n: usize, b: usize) -> u64 {
    (0..n)
        .filter(|i| (i >> b) & 1 == 1)
        .fold(0, |m, i| m | 1 << i)
}

/// A round-robin arbiter over `N = 2^B` requesters (see the module documentation).
#[derive(LogicBlock)]
pub struct RoundRobin<const N: usize, const B: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_request: Signal<In, Bits<N>>,
    pub m_grant_valid: Signal<Out, Bit>,
    pub m_grant_onehot: Signal<Out, Bits<N>>,
    pub m_grant_index: Signal<Out, Bits<B>>,
    pub s_served: Signal<In, Bit>,
    pub s_served_index: Signal<In, Bits<B>>,
    /// The first index the search considers.
    pointer: DFF<Bits<B>>,
    /// The requests at or after the pointer.
    masked: Signal<Local, Bits<N>>,
    /// `masked` if it has a bit set, else all requests.
    source: Signal<Local, Bits<N>>,
    onehot: Signal<Local, Bits<N>>,
    b0: Signal<Local, Bit>,
    b1: Signal<Local, Bit>,
    b2: Signal<Local, Bit>,
    b3: Signal<Local, Bit>,
    b4: Signal<Local, Bit>,
    b5: Signal<Local, Bit>,
    /// The index as six bits (the bits at and above `B` are always 0).
    index6: Signal<Local, Bits<6>>,
    ones: Constant<Bits<N>>,
    index_mask0: Constant<Bits<N>>,
    index_mask1: Constant<Bits<N>>,
    index_mask2: Constant<Bits<N>>,
    index_mask3: Constant<Bits<N>>,
    index_mask4: Constant<Bits<N>>,
    index_mask5: Constant<Bits<N>>,
}

impl<const N: usize, const B: usize> RoundRobin<N, B> {
    /// A round robin over `N` requesters with `B`-bit indices.
    ///
    /// Panics unless `B` is in 1..=6 and `N == 2^B`.
    pub fn new() -> Self {
        assert!(
            (1..=6).contains(&B),
            "RoundRobin: index width B must be between 1 and 6, got {B}"
        );
        assert!(
            N == 1 << B,
            "RoundRobin: N must be 2^B (B = {B}: N = {}), got N = {N}",
            1usize << B
        );
        let mask = |b: usize| Constant::new(index_mask(N, b).to_bits());
        RoundRobin {
            clock: Default::default(),
            reset: Default::default(),
            s_request: Default::default(),
            m_grant_valid: Default::default(),
            m_grant_onehot: Default::default(),
            m_grant_index: Default::default(),
            s_served: Default::default(),
            s_served_index: Default::default(),
            pointer: Default::default(),
            masked: Default::default(),
            source: Default::default(),
            onehot: Default::default(),
            b0: Default::default(),
            b1: Default::default(),
            b2: Default::default(),
            b3: Default::default(),
            b4: Default::default(),
            b5: Default::default(),
            index6: Default::default(),
            ones: Constant::new((if N == 64 { u64::MAX } else { (1u64 << N) - 1 }).to_bits()),
            index_mask0: mask(0),
            index_mask1: mask(1),
            index_mask2: mask(2),
            index_mask3: mask(3),
            index_mask4: mask(4),
            index_mask5: mask(5),
        }
    }
}

impl<const N: usize, const B: usize> Default for RoundRobin<N, B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize, const B: usize> Logic for RoundRobin<N, B> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, pointer);
        self.masked.next = self.s_request.val() & (self.ones.val() << self.pointer.q.val());
        self.source.next = self.s_request.val();
        if self.masked.val().any() {
            self.source.next = self.masked.val();
        }
        // The lowest set bit of `source`.
        self.onehot.next = self.source.val() & (!self.source.val() + 1);
        self.b0.next = (self.onehot.val() & self.index_mask0.val()).any();
        self.b1.next = (self.onehot.val() & self.index_mask1.val()).any();
        self.b2.next = (self.onehot.val() & self.index_mask2.val()).any();
        self.b3.next = (self.onehot.val() & self.index_mask3.val()).any();
        self.b4.next = (self.onehot.val() & self.index_mask4.val()).any();
        self.b5.next = (self.onehot.val() & self.index_mask5.val()).any();
        self.index6.next = bit_cast::<6, 1>(self.b0.val().into())
            | (bit_cast::<6, 1>(self.b1.val().into()) << 1)
            | (bit_cast::<6, 1>(self.b2.val().into()) << 2)
            | (bit_cast::<6, 1>(self.b3.val().into()) << 3)
            | (bit_cast::<6, 1>(self.b4.val().into()) << 4)
            | (bit_cast::<6, 1>(self.b5.val().into()) << 5);
        self.m_grant_valid.next = self.s_request.val().any();
        self.m_grant_onehot.next = self.onehot.val();
        self.m_grant_index.next = bit_cast::<B, 6>(self.index6.val());
        if self.s_served.val() {
            self.pointer.d.next = self.s_served_index.val() + 1;
        }
        if self.reset.val() {
            self.pointer.d.next = 0.into();
        }
    }
}

impl<const N: usize, const B: usize> ClockedBlock for RoundRobin<N, B> {
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

    /// The arbiter as `docs/nic-blocks.md` describes it: the first requester at or after
    /// the pointer, wrapping; serving `i` moves the pointer to `i + 1`.
    struct Model {
        n: usize,
        pointer: usize,
    }

    impl Model {
        fn grant(&self, request: u64) -> Option<usize> {
            (0..self.n)
                .map(|k| (self.pointer + k) % self.n)
                .find(|&i| request >> i & 1 == 1)
        }
    }

    /// Random requests (dense, sparse, idle gaps) and a server that takes the grant only
    /// sometimes (back-pressure), sometimes serving an index other than this clock's grant
    /// (as a parent that registers the grant does); resets now and then.
    fn run<const N: usize, const B: usize>(seed: u64, cycles: usize) -> usize {
        let mut uut = RoundRobin::<N, B>::new();
        uut.connect_all();
        let mut model = Model { n: N, pointer: 0 };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let all = if N == 64 { u64::MAX } else { (1u64 << N) - 1 };
        let mut grants = 0;
        for cycle in 0..cycles {
            let phase = (cycle / 200) % 4;
            let request = match phase {
                0 => rng.gen::<u64>() & all,
                1 => (1u64 << rng.gen_range(0..N)) * rng.gen_range(0..2u64),
                2 if rng.gen_bool(0.7) => 0,
                _ => rng.gen::<u64>() & rng.gen::<u64>() & rng.gen::<u64>() & all,
            };
            let p_take = [1.0, 0.5, 0.1, 0.8][(cycle / 100) % 4];
            let reset = rng.gen_bool(0.005);
            uut.reset.next = reset;
            uut.s_request.next = request.to_bits();
            settle(&mut uut);
            let expected = model.grant(request);
            assert_eq!(
                uut.m_grant_valid.val(),
                expected.is_some(),
                "valid, cycle {cycle}"
            );
            let index = uut.m_grant_index.val().index();
            let onehot = uut.m_grant_onehot.val().to_u64();
            match expected {
                Some(i) => {
                    assert_eq!(index, i, "index, cycle {cycle}, request {request:#x}");
                    assert_eq!(onehot, 1 << i, "one-hot, cycle {cycle}");
                }
                None => assert_eq!((index, onehot), (0, 0), "no grant, cycle {cycle}"),
            }
            let served = match expected {
                Some(i) if rng.gen_bool(p_take) => Some(i),
                _ if rng.gen_bool(0.05) => Some(rng.gen_range(0..N)),
                _ => None,
            };
            uut.s_served.next = served.is_some();
            uut.s_served_index.next = served.unwrap_or(0).to_bits();
            tick(&mut uut);
            if let Some(i) = served {
                model.pointer = (i + 1) % N;
                grants += 1;
            }
            if reset {
                model.pointer = 0;
            }
        }
        grants
    }

    #[test]
    fn synthesises() {
        for (name, v) in [
            ("nic_rtl_round_robin_64", {
                let mut uut = RoundRobin::<64, 6>::new();
                uut.connect_all();
                generate_verilog(&uut)
            }),
            ("nic_rtl_round_robin_2", {
                let mut uut = RoundRobin::<2, 1>::new();
                uut.connect_all();
                generate_verilog(&uut)
            }),
        ] {
            yosys_validate(name, &v).expect("yosys accepts RoundRobin");
        }
    }

    #[test]
    fn matches_model_with_gaps_and_backpressure() {
        assert!(run::<64, 6>(1, 4_000) > 1_000);
        assert!(run::<2, 1>(2, 4_000) > 1_000);
        assert!(run::<8, 3>(3, 4_000) > 1_000);
        assert!(run::<16, 4>(4, 4_000) > 1_000);
    }

    /// Every requester that keeps asking is granted within `N` grants.
    #[test]
    fn no_requester_waits_more_than_n_grants() {
        let mut uut = RoundRobin::<8, 3>::new();
        uut.connect_all();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut waited = [0usize; 8];
        for _ in 0..2_000 {
            // Requester 3 always asks; the others at random.
            let request = rng.gen::<u8>() as u64 | 1 << 3;
            uut.s_request.next = request.to_bits();
            settle(&mut uut);
            let g = uut.m_grant_index.val().index();
            for (i, w) in waited.iter_mut().enumerate() {
                if i == g || request >> i & 1 == 0 {
                    *w = 0;
                } else {
                    *w += 1;
                    assert!(*w < 8, "requester {i} waited {w} grants");
                }
            }
            uut.s_served.next = true;
            uut.s_served_index.next = g.to_bits();
            tick(&mut uut);
        }
    }

    #[test]
    #[should_panic(expected = "N must be 2^B")]
    fn rejects_a_width_that_is_not_two_to_the_index_bits() {
        RoundRobin::<6, 3>::new();
    }

    #[test]
    #[should_panic(expected = "index width B must be between 1 and 6")]
    fn rejects_more_than_64_requesters() {
        RoundRobin::<128, 7>::new();
    }
}
