//! `SlotRams` against a plain-Rust model written from its doc comment: three slot
//! memories per QP (header, data, follow-up) written on an edge, a slot read at every edge
//! as it was before that edge's write, and a read stage registered when `s_load` is high,
//! from the slot or (with `s_rd_follow`) from its follow-up; the opcode and length decoded
//! from the registered item, and whether handing it over frees the slot. Seeded random
//! writes, reads and loads, with idle gaps (no write, no load) and reads of the slot being
//! written.

use nic_model::responder::Owed as Owe;
use nic_model::Throttle;
use nic_rtl::responder::SlotRams;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// A slot: its item (header and data as documented) and its follow-up.
#[derive(Clone, Copy, Default, Debug)]
struct Slot {
    item: Owe,
    follow: Owe,
}

/// The registered item: kind, psn, dest node, dest QP, data.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Item {
    kind: u8,
    psn: u32,
    dest_node: u16,
    dest_qp: u16,
    data: u64,
}

fn aeth(o: &Owe) -> u64 {
    o.syndrome as u64 | (o.refusal as u64) << 8
}

/// The documented read stage: the slot's item, or its follow-up (kind bit 0, PSN and AETH
/// from the follow-up, destination from the slot).
fn load(s: &Slot, follow: bool) -> Item {
    if follow {
        return Item {
            kind: s.follow.kind & 1,
            psn: s.follow.psn,
            dest_node: s.item.dest_node,
            dest_qp: s.item.dest_qp,
            data: aeth(&s.follow),
        };
    }
    let o = &s.item;
    Item {
        kind: o.kind,
        psn: o.psn,
        dest_node: o.dest_node,
        dest_qp: o.dest_qp,
        data: match o.kind {
            2 => o.addr as u64 | (o.length as u64) << 32,
            3 => o.value,
            _ => aeth(o),
        },
    }
}

/// The documented opcode and length of an item.
fn opcode_length(i: &Item) -> (u8, u32) {
    match i.kind {
        0 => (0x30, 0),
        1 => (0x31, 0),
        2 => (0x20, (i.data >> 32) as u32),
        _ => (0x21, 8),
    }
}

fn random_owe(rng: &mut ChaCha8Rng) -> Owe {
    Owe {
        qp: 0,
        kind: rng.gen_range(0..4),
        psn: rng.gen::<u32>() & 0xFF_FFFF,
        syndrome: rng.gen(),
        refusal: rng.gen::<u32>() & 0x1F_FFFF,
        addr: rng.gen(),
        length: [0, 1, 8, 9, u32::MAX, rng.gen()][rng.gen_range(0..6)],
        value: rng.gen(),
        dest_node: rng.gen(),
        dest_qp: rng.gen(),
        resync: false,
    }
}

fn drive(uut: &mut SlotRams, o: &Owe) {
    uut.s_wr_kind.next = (o.kind as u64).to_bits();
    uut.s_wr_psn.next = (o.psn as u64).to_bits();
    uut.s_wr_syndrome.next = (o.syndrome as u64).to_bits();
    uut.s_wr_refusal.next = (o.refusal as u64).to_bits();
    uut.s_wr_addr.next = (o.addr as u64).to_bits();
    uut.s_wr_length.next = (o.length as u64).to_bits();
    uut.s_wr_value.next = o.value.to_bits();
    uut.s_wr_dest_node.next = (o.dest_node as u64).to_bits();
    uut.s_wr_dest_qp.next = (o.dest_qp as u64).to_bits();
}

/// `cycles` clocks on `qps` slots (so reads often meet the slot being written); writes
/// and loads each happen with probability `rate`. Returns (loads, follow-up loads, reads
/// of a slot written on the same edge).
fn run(seed: u64, qps: usize, cycles: usize, rate: f64) -> [usize; 3] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = SlotRams::new(qps);
    uut.connect_all();
    let gaps = Throttle::new(rate);
    let mut slots = vec![Slot::default(); 64];
    // The slot read at the last edge, as it was before that edge's write.
    let mut read = Slot::default();
    let mut item = Item::default();
    let mut seen = [0usize; 3];
    for cycle in 0..cycles {
        let o = random_owe(&mut rng);
        let wr_qp = rng.gen_range(0..qps);
        let wr = if gaps.go(&mut rng) {
            rng.gen_range(0..3)
        } else {
            0
        };
        let rd_qp = rng.gen_range(0..qps);
        let rd_follow = rng.gen::<bool>();
        let do_load = gaps.go(&mut rng);
        drive(&mut uut, &o);
        uut.s_wr_slot.next = wr == 1;
        uut.s_wr_follow.next = wr == 2;
        uut.s_wr_qp.next = (wr_qp as u64).to_bits();
        uut.s_rd_qp.next = (rd_qp as u64).to_bits();
        uut.s_rd_follow.next = rd_follow;
        uut.s_load.next = do_load;
        settle(&mut uut);
        let (opcode, length) = opcode_length(&item);
        let got = Item {
            kind: uut.m_kind.val().to_u64() as u8,
            psn: uut.m_psn.val().to_u32(),
            dest_node: uut.m_dest_node.val().to_u64() as u16,
            dest_qp: uut.m_dest_qp.val().to_u64() as u16,
            data: uut.m_data.val().to_u64(),
        };
        assert_eq!(got, item, "seed {seed:#x} cycle {cycle}: item");
        assert_eq!(
            uut.m_opcode.val().to_u64() as u8,
            opcode,
            "seed {seed:#x} cycle {cycle}: opcode"
        );
        assert_eq!(
            uut.m_length.val().to_u32(),
            length,
            "seed {seed:#x} cycle {cycle}: length"
        );
        assert_eq!(
            uut.m_one_word.val(),
            length.div_ceil(8) == 1,
            "seed {seed:#x} cycle {cycle}: one word"
        );
        assert_eq!(
            uut.m_frees.val(),
            item.kind == 1 || (item.kind == 2 && length == 0),
            "seed {seed:#x} cycle {cycle}: frees"
        );
        // The edge: load from the slot read at the last edge; read before write.
        // A load in the first clock after power-up is ignored.
        if do_load && cycle > 0 {
            item = load(&read, rd_follow);
            seen[0] += 1;
            seen[1] += rd_follow as usize;
        }
        read = slots[rd_qp];
        if wr != 0 && wr_qp == rd_qp {
            seen[2] += 1;
        }
        match wr {
            1 => slots[wr_qp].item = o,
            2 => slots[wr_qp].follow = o,
            _ => {}
        }
        tick(&mut uut);
    }
    seen
}

#[test]
fn matches_model_with_gaps() {
    for (seed, qps, rate) in [
        (0x5107_0001, 2, 1.0),
        (0x5107_0002, 4, 0.5),
        (0x5107_0003, 64, 0.3),
        (0x5107_0004, 1, 0.8),
    ] {
        let seen = run(seed, qps, 20_000, rate);
        assert!(seen.iter().all(|&n| n > 50), "seed {seed:#x}: {seen:?}");
    }
}

#[test]
fn synthesises() {
    let mut uut = SlotRams::new(4);
    uut.connect_all();
    yosys_validate("nic_rtl_slot_rams", &generate_verilog(&uut)).expect("yosys accepts SlotRams");
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64")]
fn rejects_zero_queue_pairs() {
    SlotRams::new(0);
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64")]
fn rejects_too_many_queue_pairs() {
    SlotRams::new(65);
}
