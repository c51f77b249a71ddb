//! `EventCounter` against its documentation: an event in clock t shows in `m_count` from
//! clock t + 2, the count wraps at 2^32, reset clears the count and drops a pulse
//! registered in the clock before. Seeded random events, resets and idle runs.

use nic_rtl::common::EventCounter;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// The counter as documented, clock by clock: `step` takes this clock's inputs and returns
/// what `m_count` shows in it.
#[derive(Default)]
struct Model {
    pending: bool,
    count: u32,
}

impl Model {
    fn step(&mut self, reset: bool, event: bool) -> u32 {
        let shown = self.count;
        if reset {
            (self.pending, self.count) = (false, 0);
        } else {
            if self.pending {
                self.count = self.count.wrapping_add(1);
            }
            self.pending = event;
        }
        shown
    }
}

/// Runs `clocks` clocks of random stimulus; returns the largest count seen.
fn run(seed: u64, clocks: usize, event_chance: f64) -> u32 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = EventCounter::new();
    uut.connect_all();
    let mut model = Model::default();
    let mut largest = 0;
    for clock in 0..clocks {
        let reset = rng.gen_bool(0.002);
        let event = rng.gen_bool(event_chance);
        uut.reset.next = reset;
        uut.s_event.next = event;
        settle(&mut uut);
        let want = model.step(reset, event);
        assert_eq!(
            uut.m_count.val().to_u64() as u32,
            want,
            "seed {seed}, clock {clock}"
        );
        largest = largest.max(want);
        tick(&mut uut);
    }
    largest
}

#[test]
fn counts_as_documented_under_random_events_and_resets() {
    for (seed, chance) in [(1, 0.5), (2, 0.05), (3, 0.95)] {
        let largest = run(seed, 5_000, chance);
        let expected = (chance * 150.0) as u32;
        assert!(
            largest > expected,
            "seed {seed}: the count never grew past {expected} ({largest})"
        );
    }
}

#[test]
fn an_event_shows_two_clocks_later_and_back_to_back_events_all_count() {
    let mut uut = EventCounter::new();
    uut.connect_all();
    let mut seen = vec![];
    for clock in 0..8 {
        uut.reset.next = clock == 0;
        uut.s_event.next = (2..5).contains(&clock);
        settle(&mut uut);
        seen.push(uut.m_count.val().to_u64());
        tick(&mut uut);
    }
    assert_eq!(seen, [0, 0, 0, 0, 1, 2, 3, 3]);
}

#[test]
fn synthesises() {
    let mut uut = EventCounter::new();
    uut.connect_all();
    yosys_validate("nic_rtl_common_event_counter", &generate_verilog(&uut))
        .expect("yosys accepts EventCounter");
}
