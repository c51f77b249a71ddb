//! `SendSlot` against a timing-free reference (written from its doc comment) on seeded
//! random stimulus: the send stage's messages offered or read early, loads into the slot,
//! the buffer's message count changing, a consumer with back-pressure. Every message taken
//! is checked against the descriptor the scoreboard built from the send stage's fields when
//! it was offered or loaded, in order, and the count of messages sent.

use nic_model::Throttle;
use nic_rtl::common::bundles::MessageDescriptor;
use nic_rtl::common::SendWqe;
use nic_rtl::requester::SendSlot;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn new_slot() -> SendSlot {
    let mut uut = SendSlot::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    uut
}

/// The descriptor of the send stage's fields, as the doc comment maps them.
#[allow(clippy::too_many_arguments)]
fn descriptor(
    wqe: &SendWqe,
    imm: bool,
    len: u64,
    remote: u64,
    qp: u64,
    psn: u64,
    node: u64,
    resync: bool,
) -> MessageDescriptor {
    MessageDescriptor {
        opcode: wqe.opcode,
        dest_node: (remote & 0xFFFF).to_bits(),
        src_node: node.to_bits(),
        dest_qp: (remote >> 16).to_bits(),
        src_qp: qp.to_bits(),
        psn: psn.to_bits(),
        length: len.to_bits(),
        vaddr: wqe.vaddr,
        stag: wqe.stag,
        dma_length: wqe.length,
        immediate: if imm { wqe.immediate } else { 0.into() },
        has_immediate: imm,
        invalidate: wqe.invalidate,
        resync,
    }
}

/// Runs `clocks` clocks; returns the messages taken.
fn run(seed: u64, p_ready: f64, p_load: f64, clocks: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = new_slot();
    let ready = Throttle::new(p_ready);
    let mut slot: Option<MessageDescriptor> = None;
    let mut taken = 0u64;
    for clock in 0..clocks {
        let at = format!("clock {clock} (seed {seed:#x})");
        let wqe = SendWqe {
            opcode: rng.gen::<u8>().to_bits(),
            invalidate: rng.gen(),
            length: rng.gen::<u32>().to_bits(),
            vaddr: rng.gen::<u64>().to_bits(),
            stag: rng.gen::<u32>().to_bits(),
            immediate: rng.gen::<u32>().to_bits(),
            ..Default::default()
        };
        let (imm, len, remote, qp, psn, node, resync) = (
            rng.gen_bool(0.5),
            rng.gen::<u32>() as u64,
            rng.gen::<u32>() as u64,
            rng.gen_range(0..64u64),
            rng.gen_range(0..1u64 << 24),
            rng.gen::<u16>() as u64,
            rng.gen_bool(0.2),
        );
        let cur = descriptor(&wqe, imm, len, remote, qp, psn, node, resync);
        // The send stage: offering (0), early in Msg (1), elsewhere (2).
        let stage = rng.gen_range(0..3);
        let msgs = rng.gen_range(0..3u64);
        let load = slot.is_none() && rng.gen_bool(p_load);
        let r = ready.go(&mut rng);
        uut.s_wqe.next = wqe;
        uut.s_op_imm.next = imm;
        uut.s_msg_length.next = len.to_bits();
        uut.s_remote.next = remote.to_bits();
        uut.s_qp.next = qp.to_bits();
        uut.s_psn.next = psn.to_bits();
        uut.cfg_node_id.next = node.to_bits();
        uut.s_resync.next = resync;
        uut.s_stage_valid.next = stage == 0;
        uut.s_stage_early.next = stage == 1;
        uut.s_load.next = load;
        uut.s_msgs.next = msgs.to_bits();
        uut.m_msg_ready.next = r;
        settle(&mut uut);
        // The reference.
        let stage_free = msgs == 0 && slot.is_none();
        let slot_free = msgs == if stage == 1 { 2 } else { 1 };
        let valid = match slot {
            Some(_) => slot_free,
            None => stage == 0 && stage_free,
        };
        assert_eq!(
            uut.m_slot_valid.val(),
            slot.is_some(),
            "m_slot_valid at {at}"
        );
        assert_eq!(uut.m_stage_free.val(), stage_free, "m_stage_free at {at}");
        assert_eq!(uut.m_msg_valid.val(), valid, "m_msg_valid at {at}");
        assert_eq!(
            uut.m_slot_taken.val(),
            slot.is_some() && slot_free && r,
            "m_slot_taken at {at}"
        );
        assert_eq!(
            uut.stat_requests_sent.val().to_u64(),
            taken,
            "count at {at}"
        );
        if valid {
            assert_eq!(uut.m_msg.val(), slot.unwrap_or(cur), "m_msg at {at}");
        }
        if valid && r {
            taken += 1;
            if slot.is_some() {
                slot = None;
            }
        }
        if load {
            slot = Some(cur);
        }
        tick(&mut uut);
    }
    taken
}

#[test]
fn synthesises() {
    let mut uut = SendSlot::new();
    uut.connect_all();
    yosys_validate("nic_rtl_send_slot", &generate_verilog(&uut)).expect("yosys accepts SendSlot");
}

/// Seeded random stimulus from an eager consumer to a slow one, loads often and rarely.
#[test]
fn matches_reference_with_backpressure() {
    let mut taken = 0;
    for (n, (p_ready, p_load)) in [(1.0, 0.5), (0.2, 0.5), (0.5, 0.1), (0.9, 0.9)]
        .into_iter()
        .enumerate()
    {
        taken += run(0x5e4d5 + n as u64, p_ready, p_load, 4000);
    }
    assert!(taken > 1500, "only {taken} messages were taken");
}
