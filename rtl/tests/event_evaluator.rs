//! `EventEvaluator` against `nic_model::event_evaluator` (written from its doc comment):
//! seeded random entries and events biased toward the window around `sq_una`, each held
//! for a random number of clocks as the parent holds them (the block has no handshake:
//! every output is the decision for the inputs of the clock before).

use nic_abi::{Syndrome, SEND_WINDOW};
use nic_model::event_evaluator::{evaluate, Decision, Evaluation, Job};
use nic_rtl::requester::EventEvaluator;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

const MASK: u32 = 0xFF_FFFF;

fn random_input(rng: &mut ChaCha8Rng, window: u32) -> Evaluation {
    let una = if rng.gen_bool(0.2) {
        MASK - rng.gen_range(0..4) // wrapping past 2^24
    } else {
        rng.gen_range(0..=MASK)
    };
    let next = (una + rng.gen_range(0..=window + 2)) & MASK;
    let pi = if rng.gen_bool(0.8) {
        (next + rng.gen_range(0..6)) & MASK
    } else {
        (una + rng.gen_range(0..=window + 4)) & MASK
    };
    let psn = match rng.gen_range(0..4) {
        0 | 1 => (una + rng.gen_range(0..=window + 3)) & MASK,
        2 => una.wrapping_sub(rng.gen_range(0..=window + 3)) & MASK,
        _ => rng.gen_range(0..=MASK),
    };
    let syndromes = [
        Syndrome::Ack as u8,
        Syndrome::SequenceError as u8,
        Syndrome::CrcOrMalformed as u8,
        Syndrome::PortDown as u8,
        Syndrome::RemoteAccessError as u8,
        rng.gen(),
    ];
    Evaluation {
        retry_limit: rng.gen_range(0..16),
        qp_valid: rng.gen_bool(0.9),
        una,
        next,
        pi,
        retry: rng.gen_range(0..16),
        una_needs_response: rng.gen_bool(0.3),
        psn,
        syndrome: syndromes[rng.gen_range(0..syndromes.len())],
        response: rng.gen_bool(0.2),
        resync: rng.gen_bool(0.2),
        local: rng.gen_bool(0.15),
        local_status: rng.gen(),
    }
}

fn drive(u: &mut EventEvaluator, e: &Evaluation) {
    u.cfg_retry_limit.next = (e.retry_limit as u64).to_bits();
    u.s_qp_valid.next = e.qp_valid;
    u.s_una.next = (e.una as u64).to_bits();
    u.s_next.next = (e.next as u64).to_bits();
    u.s_pi.next = (e.pi as u64).to_bits();
    u.s_retry.next = (e.retry as u64).to_bits();
    u.s_una_rsp.next = e.una_needs_response;
    u.s_evt_psn.next = (e.psn as u64).to_bits();
    u.s_evt_syndrome.next = (e.syndrome as u64).to_bits();
    u.s_evt_response.next = e.response;
    u.s_evt_resync.next = e.resync;
    u.s_evt_local.next = e.local;
    u.s_evt_local_status.next = (e.local_status as u64).to_bits();
}

fn observed(u: &EventEvaluator) -> Decision {
    let job = u.m_job_valid.val().then(|| Job {
        succ: u.m_job_succ.val().index() as u8,
        run_status: u.m_job_run_status.val().index() as u8,
        final_: u.m_job_final.val(),
        status: u.m_job_status.val().index() as u8,
        resync: u.m_job_resync.val(),
    });
    Decision {
        job,
        restart: u.m_restart.val(),
        next: u.m_set_next.val().then(|| u.m_next.val().index() as u32),
        retry: u.m_set_retry.val().then(|| u.m_retry.val().index() as u8),
        drain: u.m_set_drain.val(),
        retransmission: u.m_retx.val(),
    }
}

/// Runs `evaluations` random inputs, each held 1 to 3 clocks, and compares the outputs
/// after every edge with the model's decision for the inputs sampled at that edge (while
/// other inputs are already driven). Returns how many
/// decisions had a job, went back (retransmission) and exceeded the retry limit.
fn run(seed: u64, window: u32, evaluations: usize) -> (usize, usize, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut u = EventEvaluator::new(window as usize);
    u.connect_all();
    let (mut jobs, mut goback, mut exceeded) = (0, 0, 0);
    for i in 0..evaluations {
        let e = random_input(&mut rng, window);
        for _ in 0..rng.gen_range(1..=3) {
            drive(&mut u, &e);
            tick(&mut u);
            // Registered: the next inputs do not reach the outputs before the next edge.
            drive(&mut u, &random_input(&mut rng, window));
            settle(&mut u);
            let want = evaluate(&e, window);
            assert_eq!(observed(&u), want, "evaluation {i}, inputs {e:?}");
        }
        let d = evaluate(&e, window);
        jobs += d.job.is_some() as usize;
        goback += d.retransmission as usize;
        exceeded += d.drain as usize;
    }
    (jobs, goback, exceeded)
}

#[test]
fn synthesises() {
    let mut uut = EventEvaluator::new(SEND_WINDOW as usize);
    uut.connect_all();
    yosys_validate("nic_rtl_requester_event_evaluator", &generate_verilog(&uut))
        .expect("yosys accepts EventEvaluator");
}

/// Seeded random stimulus, held for random runs of clocks, on the NIC's window and on the
/// smallest and largest ones; every class of outcome is reached.
#[test]
fn matches_model_on_seeded_random_events() {
    for (seed, window) in [(1, SEND_WINDOW), (2, SEND_WINDOW), (3, 1), (4, 15)] {
        let (jobs, goback, exceeded) = run(seed, window, 20_000);
        eprintln!("window {window}: {jobs} jobs, {goback} go-backs, {exceeded} retry limits");
        assert!(jobs > 1000 && goback > 1000 && exceeded > 100);
    }
}

#[test]
#[should_panic(expected = "send_window must be between 1 and 15, got 16")]
fn rejects_a_window_that_overflows_the_job_count() {
    EventEvaluator::new(16);
}
