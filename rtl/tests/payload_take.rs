//! `PayloadTake` against its plain-Rust model (`nic_model::payload_take`, written from
//! the block's documentation): seeded random inputs in stretches like a message's (a
//! decision, then streaming beats with writer back-pressure, idle clocks between),
//! every output compared every clock.

use nic_model::payload_take::{payload_take, TakeInputs, TakeOutputs};
use nic_rtl::responder::receive_queue_engine::MessageMode;
use nic_rtl::responder::PayloadTake;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

const MODES: [MessageMode; 4] = [
    MessageMode::Discard,
    MessageMode::ExecWrite,
    MessageMode::ExecAtomic,
    MessageMode::ResponseWrite,
];

fn evaluate(u: &mut PayloadTake, i: &TakeInputs) -> TakeOutputs {
    u.mode.next = i.mode;
    u.act_go.next = i.act_go;
    u.act_mode.next = i.act_mode;
    u.aborted.next = i.abort;
    u.stream.next = i.stream;
    u.beat_ready.next = i.beat_ready;
    u.s_valid.next = i.valid;
    u.s_last.next = i.last;
    u.s_ok_last.next = i.ok_last;
    nic_rtl::sim::settle(u);
    TakeOutputs {
        eff_mode: u.eff_mode.val(),
        write: u.write.val(),
        collect: u.collect.val(),
        ready: u.ready.val(),
        take: u.take.val(),
        outcome_end: u.outcome_end.val(),
        message_end: u.message_end.val(),
        end_runs: u.end_runs.val(),
    }
}

/// `messages` stretches: an Act clock (sometimes going on), beats with back-pressure
/// `p_busy` and gaps `p_gap`, idle clocks; returns (beats taken, messages ended).
fn run(seed: u64, messages: usize, p_busy: f64, p_gap: f64) -> (usize, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = PayloadTake::new();
    uut.connect_all();
    let (mut taken, mut ended) = (0, 0);
    for n in 0..messages {
        let mode = MODES[rng.gen_range(0..4)];
        let abort = rng.gen_bool(0.1);
        let beats = rng.gen_range(1..6);
        let mut shown = 0;
        let mut clock = 0;
        while shown < beats {
            let act = clock == 0;
            let i = TakeInputs {
                mode: if act {
                    MODES[rng.gen_range(0..4)]
                } else {
                    mode
                },
                act_go: act && rng.gen_bool(0.7),
                act_mode: mode,
                abort: abort && rng.gen(),
                stream: !act && rng.gen_bool(0.9),
                beat_ready: !rng.gen_bool(p_busy),
                valid: !rng.gen_bool(p_gap),
                last: shown + 1 == beats || rng.gen_bool(0.1),
                ok_last: rng.gen_bool(0.7),
            };
            let got = evaluate(&mut uut, &i);
            assert_eq!(
                got,
                payload_take(&i),
                "seed {seed}, message {n}, clock {clock}: {i:?}"
            );
            taken += got.take as usize;
            ended += got.message_end as usize;
            shown += got.take as usize;
            clock += 1;
            if clock > 200 {
                break;
            }
        }
    }
    (taken, ended)
}

#[test]
fn matches_model_with_backpressure_and_gaps() {
    for (seed, p_busy, p_gap) in [(1, 0.0, 0.0), (2, 0.5, 0.3), (3, 0.9, 0.1), (4, 0.2, 0.7)] {
        let (taken, ended) = run(seed, 2_000, p_busy, p_gap);
        assert!(
            taken > 1_000 && ended > 200,
            "seed {seed}: {taken} beats, {ended} ends"
        );
    }
}

#[test]
fn synthesises() {
    let mut uut = PayloadTake::new();
    uut.connect_all();
    yosys_validate("nic_rtl_responder_payload_take", &generate_verilog(&uut))
        .expect("yosys accepts PayloadTake");
}
