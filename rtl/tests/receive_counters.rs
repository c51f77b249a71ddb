//! `ReceiveCounters` against its plain-Rust model (`nic_model::receive_counters`, written
//! from the block's documentation): seeded random events in bursts with idle gaps
//! between them, NACK and non-NACK syndromes, drops back to back, rare resets; every
//! output compared every clock. Then synthesis.

use nic_abi::Syndrome;
use nic_model::receive_counters::{CountInputs, ReceiveCountersModel};
use nic_rtl::responder::ReceiveCounters;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn apply(u: &mut ReceiveCounters, i: &CountInputs) {
    u.reset.next = i.reset;
    u.message_end.next = i.message_end;
    u.drop.next = i.drop;
    u.nack.next = i.nack;
    u.nack_syndrome.next = (i.nack_syndrome as u64).to_bits();
}

fn outputs(u: &ReceiveCounters) -> (u32, u32, [u32; 8]) {
    (
        u.stat_messages_received.val().to_u32(),
        u.stat_dropped.val().to_u32(),
        [
            u.stat_nack_received_0.val().to_u32(),
            u.stat_nack_received_1.val().to_u32(),
            u.stat_nack_received_2.val().to_u32(),
            u.stat_nack_received_3.val().to_u32(),
            u.stat_nack_received_4.val().to_u32(),
            u.stat_nack_received_5.val().to_u32(),
            u.stat_nack_received_6.val().to_u32(),
            u.stat_nack_received_7.val().to_u32(),
        ],
    )
}

/// `clocks` clocks: bursts of events with chance `p_event`, idle gaps with chance `p_gap`.
fn run(seed: u64, clocks: u64, p_event: f64, p_gap: f64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = ReceiveCounters::new();
    uut.connect_all();
    let mut model = ReceiveCountersModel::new();
    let mut gap = false;
    for clock in 0..clocks {
        if rng.gen_bool(0.05) {
            gap = rng.gen_bool(p_gap);
        }
        let event = |rng: &mut ChaCha8Rng| !gap && rng.gen_bool(p_event);
        let i = CountInputs {
            reset: clock < 2 || rng.gen_bool(0.0005),
            message_end: event(&mut rng),
            drop: event(&mut rng),
            nack: event(&mut rng),
            nack_syndrome: if rng.gen_bool(0.8) {
                Syndrome::NACKS[rng.gen_range(0..8)] as u8
            } else {
                rng.gen()
            },
        };
        apply(&mut uut, &i);
        settle(&mut uut);
        assert_eq!(
            outputs(&uut),
            (model.messages_received, model.dropped, model.nack_received),
            "seed {seed}, clock {clock}: {i:?}"
        );
        model.step(&i);
        tick(&mut uut);
    }
    assert!(model.dropped > 0 && model.nack_received.iter().all(|&n| n > 0));
}

#[test]
fn matches_model_with_bursts_and_gaps() {
    for (seed, p_event, p_gap) in [(1, 1.0, 0.0), (2, 0.5, 0.3), (3, 0.1, 0.6)] {
        run(seed, 20_000, p_event, p_gap);
    }
}

#[test]
fn synthesises() {
    let mut uut = ReceiveCounters::new();
    uut.connect_all();
    yosys_validate(
        "nic_rtl_responder_receive_counters",
        &generate_verilog(&uut),
    )
    .expect("yosys accepts ReceiveCounters");
}
