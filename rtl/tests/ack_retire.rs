//! `AckRetire` against a timing-free scoreboard (written from its doc comment) on seeded
//! random stimulus: pushes with idle gaps, re-read words with gaps, a slow completion
//! consumer, late grants and executes, failed advances (the queued completions of the QP
//! are dropped) and QP resets (completions go stale). Every completion request and advance
//! is checked in order against the completions pushed, and the status outputs every clock.

use nic_model::Throttle;
use nic_rtl::requester::AckRetire;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
struct Entry {
    qp: u64,
    idx: u64,
    status: u64,
    set_resync: bool,
    remote: u64,
    stale: bool,
    void: bool,
    words: [u64; 2],
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Cpl,
    AdvReq,
    AdvWait,
}

fn new_retire() -> AckRetire {
    let mut uut = AckRetire::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    uut
}

/// Runs `clocks` clocks; returns (completions, failed advances) seen.
fn run(seed: u64, p_push: f64, p_word: f64, p_cpl: f64, p_exec: f64, clocks: u64) -> (u64, u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = new_retire();
    let (push, word, cpl, exec) = (
        Throttle::new(p_push),
        Throttle::new(p_word),
        Throttle::new(p_cpl),
        Throttle::new(p_exec),
    );
    // The scoreboard: completions queued (their re-read requested) and the back's one.
    let mut queued: VecDeque<Entry> = VecDeque::new();
    let mut back: Option<(Entry, Phase)> = None;
    let mut beat = 0usize;
    let mut next_idx = 0u64;
    let (mut cpls, mut fails) = (0, 0);
    for clock in 0..clocks {
        let front_qp = rng.gen_range(0..4u64);
        // Outputs of the registers, against the scoreboard.
        uut.s_front_qp.next = front_qp.to_bits();
        settle(&mut uut);
        let at = format!("clock {clock} (seed {seed:#x})");
        assert_eq!(uut.m_full.val(), queued.len() == 2, "m_full at {at}");
        assert_eq!(
            uut.m_all_idle.val(),
            queued.is_empty() && back.is_none(),
            "m_all_idle at {at}"
        );
        let hazard = queued.iter().any(|e| e.qp == front_qp)
            || back.as_ref().is_some_and(|(e, _)| e.qp == front_qp);
        assert_eq!(uut.m_hazard.val(), hazard, "m_hazard at {at}");
        let phase = back.as_ref().map(|b| b.1);
        assert_eq!(uut.m_adv_req.val(), phase == Some(Phase::AdvReq), "{at}");
        assert_eq!(
            uut.m_adv_busy.val(),
            matches!(phase, Some(Phase::AdvReq | Phase::AdvWait)),
            "m_adv_busy at {at}"
        );
        assert_eq!(uut.m_cpl_valid.val(), phase == Some(Phase::Cpl), "{at}");
        assert_eq!(
            uut.s_cplrd_ready.val(),
            back.is_none() && !queued.is_empty(),
            "s_cplrd_ready at {at}"
        );
        if let Some((e, p)) = &back {
            if *p == Phase::Cpl {
                let c = uut.m_cpl.val();
                assert_eq!(c.opcode.to_u64(), e.words[0] & 0xFF, "opcode at {at}");
                assert_eq!(
                    c.byte_count.to_u64(),
                    e.words[0] >> 32,
                    "byte_count at {at}"
                );
                assert_eq!(c.wr_id.to_u64(), e.words[1], "wr_id at {at}");
                assert_eq!(c.status.to_u64(), e.status, "status at {at}");
                assert_eq!(c.qp.to_u64(), e.qp, "qp at {at}");
                assert_eq!(c.wqe_index.to_u64(), e.idx, "wqe_index at {at}");
                assert_eq!(c.src_node.to_u64(), e.remote & 0xFFFF, "src_node at {at}");
                assert_eq!(c.src_qp.to_u64(), e.remote >> 16, "src_qp at {at}");
                assert!(!c.is_receive && !c.has_immediate, "{at}");
            } else {
                assert_eq!(uut.m_adv_qp.val().to_u64(), e.qp, "m_adv_qp at {at}");
                assert_eq!(uut.m_adv_idx.val().to_u64(), e.idx, "m_adv_idx at {at}");
                assert_eq!(uut.m_adv_set_resync.val(), e.set_resync, "{at}");
                assert_eq!(uut.m_adv_stale.val(), e.stale, "m_adv_stale at {at}");
            }
        }

        // Stimulus.
        let do_push = queued.len() < 2 && push.go(&mut rng);
        let pushed = Entry {
            qp: rng.gen_range(0..4),
            idx: next_idx,
            status: rng.gen_range(0..256),
            set_resync: rng.gen_bool(0.3),
            remote: rng.gen::<u32>() as u64,
            stale: rng.gen_bool(0.1),
            void: false,
            words: [rng.gen(), rng.gen()],
        };
        uut.s_push.next = do_push;
        uut.s_push_qp.next = pushed.qp.to_bits();
        uut.s_push_idx.next = pushed.idx.to_bits();
        uut.s_push_status.next = pushed.status.to_bits();
        uut.s_push_set_resync.next = pushed.set_resync;
        uut.s_push_remote.next = pushed.remote.to_bits();
        uut.s_push_stale.next = pushed.stale;
        // The re-read words of the oldest queued completion, in order.
        let word_valid = !queued.is_empty() && word.go(&mut rng);
        uut.s_cplrd_valid.next = word_valid;
        uut.s_cplrd_last.next = beat == 1;
        uut.s_cplrd_data.next = match queued.front() {
            Some(e) if word_valid => e.words[beat].to_bits(),
            _ => rng.gen::<u64>().to_bits(),
        };
        let cpl_ready = cpl.go(&mut rng);
        uut.m_cpl_ready.next = cpl_ready;
        let grant = phase == Some(Phase::AdvReq) && rng.gen_bool(0.5);
        uut.s_adv_grant.next = grant;
        let ex = exec.go(&mut rng);
        let ok = match &back {
            Some((e, Phase::AdvWait)) => !e.stale && rng.gen_bool(0.8),
            _ => rng.gen_bool(0.5),
        };
        uut.s_exec.next = ex;
        uut.s_exec_ok.next = ok;
        let reset = rng.gen_bool(0.03);
        let reset_qp = rng.gen_range(0..4u64);
        uut.s_qp_reset_valid.next = reset;
        uut.s_qp_reset_qp.next = reset_qp.to_bits();
        settle(&mut uut);
        let fail = phase == Some(Phase::AdvWait) && ex && !ok;
        let fail_qp = back.as_ref().map(|b| b.0.qp);
        assert_eq!(
            uut.m_fail_front.val(),
            fail && fail_qp == Some(front_qp),
            "m_fail_front at {at}"
        );

        // The scoreboard's next state.
        if reset {
            for e in queued.iter_mut() {
                if e.qp == reset_qp {
                    e.stale = true;
                }
            }
            if let Some((e, _)) = back.as_mut() {
                if e.qp == reset_qp {
                    e.stale = true;
                }
            }
        }
        if fail {
            fails += 1;
            for e in queued.iter_mut() {
                if Some(e.qp) == fail_qp {
                    e.void = true;
                }
            }
        }
        match back.as_ref().map(|b| b.1) {
            Some(Phase::Cpl) if cpl_ready => {
                cpls += 1;
                back.as_mut().unwrap().1 = Phase::AdvReq;
            }
            Some(Phase::AdvReq) if grant => back.as_mut().unwrap().1 = Phase::AdvWait,
            Some(Phase::AdvWait) if ex => back = None,
            _ => {}
        }
        if word_valid && uut.s_cplrd_ready.val() {
            beat += 1;
            if beat == 2 {
                beat = 0;
                let mut e = queued.pop_front().unwrap();
                e.stale |= reset && e.qp == reset_qp;
                if !e.void {
                    back = Some((e, Phase::Cpl));
                }
            }
        }
        if do_push {
            let mut e = pushed;
            e.void = fail && fail_qp == Some(e.qp);
            queued.push_back(e);
            next_idx = (next_idx + 1) & 0xFF_FFFF;
        }
        tick(&mut uut);
    }
    (cpls, fails)
}

#[test]
fn synthesises() {
    let mut uut = AckRetire::new();
    uut.connect_all();
    yosys_validate("nic_rtl_ack_retire", &generate_verilog(&uut)).expect("yosys accepts AckRetire");
}

/// Seeded random stimulus from a fast environment to a slow one, with and without gaps.
#[test]
fn matches_scoreboard_with_gaps_and_backpressure() {
    let (mut cpls, mut fails) = (0, 0);
    for (n, (p_push, p_word, p_cpl, p_exec)) in [
        (1.0, 1.0, 1.0, 1.0),
        (1.0, 0.3, 0.2, 0.5),
        (0.2, 1.0, 1.0, 1.0),
        (0.5, 0.5, 0.5, 0.5),
        (0.9, 0.8, 0.1, 0.2),
    ]
    .into_iter()
    .enumerate()
    {
        let (c, f) = run(0xac4e7 + n as u64, p_push, p_word, p_cpl, p_exec, 4000);
        cpls += c;
        fails += f;
    }
    assert!(cpls > 1000, "only {cpls} completions went through");
    assert!(fails > 20, "only {fails} advances failed");
}
