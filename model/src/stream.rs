//! Valid/ready stimulus: idle-gap and back-pressure inserters and a source that keeps the
//! handshake rule (after verilog-axis's `cycle_pause` and rhdl's filler).

use rand::Rng;
use std::collections::VecDeque;

/// An idle-gap or back-pressure inserter: each clock it lets the handshake go with
/// probability `p` (a source offers, a sink is ready).
///
/// `Throttle::ALWAYS` (p = 1.0) draws nothing from the RNG, so a run without gaps or
/// back-pressure leaves the other draws of a seed where they were.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throttle {
    p: f64,
}

impl Throttle {
    /// No gaps, no back-pressure.
    pub const ALWAYS: Throttle = Throttle { p: 1.0 };

    /// Go with probability `p` each clock.
    pub fn new(p: f64) -> Self {
        assert!(
            (0.0..=1.0).contains(&p),
            "Throttle: p must be between 0 and 1, got {p}"
        );
        Throttle { p }
    }

    /// `Throttle::new(p)` when `on`, else [`Throttle::ALWAYS`].
    pub fn when(on: bool, p: f64) -> Self {
        if on {
            Throttle::new(p)
        } else {
            Throttle::ALWAYS
        }
    }

    /// The probability of going on a clock.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// This clock's decision.
    pub fn go<R: Rng + ?Sized>(&self, rng: &mut R) -> bool {
        rng.gen_bool(self.p)
    }
}

/// A valid/ready source: offers its items in order, starting an offer on a clock with the
/// probability of its [`Throttle`] (idle gaps), and keeps offering the same item until it
/// is taken (the valid/ready rule: `valid` never drops and the payload never changes
/// before the handshake).
///
/// Per clock: [`Source::offer`] before the block settles (drives `valid`, with
/// [`Source::front`] on the payload), then [`Source::take`] when `valid` and `ready` were
/// both high.
#[derive(Clone, Debug)]
pub struct Source<T> {
    /// The items not yet taken, the one on offer first.
    pub items: VecDeque<T>,
    gaps: Throttle,
    offering: bool,
}

impl<T> Source<T> {
    pub fn new(items: impl IntoIterator<Item = T>, gaps: Throttle) -> Self {
        Source {
            items: items.into_iter().collect(),
            gaps,
            offering: false,
        }
    }

    /// This clock's `valid`: still offering, or starting an offer (one draw, only when
    /// not offering and an item is left).
    pub fn offer<R: Rng + ?Sized>(&mut self, rng: &mut R) -> bool {
        if !self.offering {
            self.offering = !self.items.is_empty() && self.gaps.go(rng);
        }
        self.offering
    }

    /// Whether an item is on offer this clock.
    pub fn offering(&self) -> bool {
        self.offering
    }

    /// The item on offer, or the next one (what the payload lines carry).
    pub fn front(&self) -> Option<&T> {
        self.items.front()
    }

    /// The item on offer was taken; returns it.
    pub fn take(&mut self) -> T {
        assert!(self.offering, "Source: take without an offer");
        self.offering = false;
        self.items.pop_front().expect("an item on offer")
    }

    /// No item left to offer.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn always_draws_nothing() {
        let mut a = ChaCha8Rng::seed_from_u64(1);
        let mut b = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..100 {
            assert!(Throttle::ALWAYS.go(&mut a));
        }
        assert_eq!(a.gen::<u64>(), b.gen::<u64>());
    }

    #[test]
    fn throttle_goes_with_its_probability() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let t = Throttle::new(0.3);
        let n = (0..10_000).filter(|_| t.go(&mut rng)).count();
        assert!((2_700..3_300).contains(&n), "{n}");
    }

    #[test]
    #[should_panic(expected = "p must be between 0 and 1, got 1.5")]
    fn throttle_rejects_a_bad_probability() {
        Throttle::new(1.5);
    }

    /// An offer is held until taken, items leave in order, and gaps appear.
    #[test]
    fn source_holds_its_offer_until_taken() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut s = Source::new(0..50, Throttle::new(0.5));
        let (mut out, mut idle) = (vec![], 0);
        while !s.is_empty() {
            if !s.offer(&mut rng) {
                idle += 1;
                continue;
            }
            let shown = *s.front().unwrap();
            if rng.gen_bool(0.4) {
                out.push(s.take());
                assert_eq!(*out.last().unwrap(), shown);
            } else {
                assert!(s.offer(&mut rng), "offer dropped before taken");
                assert_eq!(*s.front().unwrap(), shown);
            }
        }
        assert_eq!(out, (0..50).collect::<Vec<_>>());
        assert!(idle > 10, "{idle}");
        assert!(!s.offer(&mut rng));
    }
}
