//! `WqeLatch` against `nic_model::wqe_latch::WqeClass` (the requester's WQE rules) on the
//! shared random WQEs (`nic_model::random_wqe`: every opcode, inline, local operations,
//! bad WQEs), loaded with idle gaps: the copy and the class follow a load by one clock and
//! hold until the next, whatever the inputs do meanwhile; the inline word of a random beat
//! is the WQE's word `INLINE_WORDS[beat]`.

use nic_abi::{Wqe, INLINE_WORDS};
use nic_model::random_wqe::{random_wqe, WqeLengths};
use nic_model::wqe_latch::WqeClass;
use nic_model::Throttle;
use nic_rtl::requester::WqeLatch;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

const DEPTH: usize = 16;

fn drive(uut: &mut WqeLatch, w: &Wqe) {
    uut.s_wqe.next.opcode = (w.opcode as u64).to_bits();
    uut.s_wqe.next.invalidate = w.invalidate;
    uut.s_wqe.next.inline_payload = w.inline;
    uut.s_wqe.next.length = (w.length as u64).to_bits();
    uut.s_wqe.next.local_addr = (w.local_addr as u64).to_bits();
    uut.s_wqe.next.vaddr = w.remote_vaddr.to_bits();
    uut.s_wqe.next.stag = (w.stag as u64).to_bits();
    uut.s_wqe.next.immediate = (w.immediate as u64).to_bits();
    uut.s_wqe.next.compare = w.compare_add.to_bits();
    uut.s_wqe.next.swap = w.swap.to_bits();
    uut.s_wqe.next.word7 = w.reserved.to_bits();
}

/// The latch's outputs as a WQE (the fields it copies) and a class.
fn seen(uut: &WqeLatch) -> (Wqe, WqeClass) {
    let w = Wqe {
        opcode: uut.m_wqe.val().opcode.to_u64() as u8,
        invalidate: uut.m_wqe.val().invalidate,
        inline: uut.m_wqe.val().inline_payload,
        length: uut.m_wqe.val().length.to_u32(),
        local_addr: uut.m_wqe.val().local_addr.to_u32(),
        remote_vaddr: uut.m_wqe.val().vaddr.to_u64(),
        stag: uut.m_wqe.val().stag.to_u32(),
        immediate: uut.m_wqe.val().immediate.to_u32(),
        compare_add: uut.m_wqe.val().compare.to_u64(),
        swap: uut.m_wqe.val().swap.to_u64(),
        reserved: uut.m_wqe.val().word7.to_u64(),
        ..Wqe::default()
    };
    let c = WqeClass {
        op_read: uut.m_op_read.val(),
        op_atomic: uut.m_op_atomic.val(),
        op_imm: uut.m_op_imm.val(),
        status: uut.m_status.val().to_u64() as u8,
        local_only: uut.m_local_only.val(),
        need_empty: uut.m_need_empty.val(),
        delay_ok: uut.m_delay_ok.val(),
        msg_length: uut.m_msg_length.val().to_u32(),
        len_round: uut.m_len_round.val().to_u64() as u16,
        pl_early: uut.m_pl_early.val(),
        pl_long: uut.m_pl_long.val(),
    };
    (w, c)
}

/// The fields the latch copies (`wr_id` is not among the fetch's outputs).
fn copied(w: &Wqe) -> Wqe {
    Wqe { wr_id: 0, ..*w }
}

#[test]
fn synthesises() {
    let mut uut = WqeLatch::new(DEPTH);
    uut.connect_all();
    yosys_validate("nic_rtl_wqe_latch", &generate_verilog(&uut)).expect("yosys accepts WqeLatch");
}

/// Random WQEs (lengths around the buffer's depth) at the inputs every clock, loaded now
/// and then: after a load the outputs are that WQE and its class until the next load.
#[test]
fn matches_model_with_gaps() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x1a7c4);
    let mut uut = WqeLatch::new(DEPTH);
    uut.connect_all();
    let lengths = WqeLengths {
        max: 8 * DEPTH as u32 + 16,
        long: 2000,
    };
    let mut held: Option<Wqe> = None;
    let mut loads = 0;
    let mut classes = std::collections::HashSet::new();
    for (n, p_load) in [1.0, 0.3, 0.05].into_iter().enumerate() {
        let load = Throttle::new(p_load);
        for clock in 0..3000 {
            let w = random_wqe(&mut rng, lengths);
            let go = load.go(&mut rng);
            let beat = rng.gen_range(0..8u64);
            drive(&mut uut, &w);
            uut.s_load.next = go;
            uut.s_inline_beat.next = beat.to_bits();
            settle(&mut uut);
            if let Some(h) = &held {
                let want = WqeClass::of(h, DEPTH as u32);
                assert_eq!(
                    seen(&uut),
                    (copied(h), want),
                    "run {n} clock {clock}: {h:?}"
                );
                let word = INLINE_WORDS[(beat as usize).min(INLINE_WORDS.len() - 1)];
                assert_eq!(
                    uut.m_inline_word.val().to_u64(),
                    h.to_words()[word],
                    "inline beat {beat} at run {n} clock {clock}"
                );
                classes.insert((want.status, want.local_only, want.pl_early, want.pl_long));
            }
            if go {
                held = Some(w);
                loads += 1;
            }
            tick(&mut uut);
        }
    }
    assert!(loads > 2000, "{loads} loads");
    assert!(
        classes.len() >= 6,
        "only {} classes: {classes:?}",
        classes.len()
    );
}

#[test]
#[should_panic(expected = "buffer_depth must be 1..=4096")]
fn rejects_a_buffer_too_deep() {
    let _ = WqeLatch::new(8192);
}
