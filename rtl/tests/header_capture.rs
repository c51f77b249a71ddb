//! `HeaderCapture` against its plain-Rust model (`nic_model::header_capture`, written
//! from the block's documentation): seeded random headers, each held for a few clocks like
//! a reassembler outcome, opcodes and flags weighted toward the ones the cell format
//! names, captures with random gaps between them; every output compared every clock.

use nic_model::header_capture::{HeaderCaptureModel, HeaderInputs, HeaderOutputs, KeptHeader};
use nic_rtl::cell::format::opcode;
use nic_rtl::common::{CellOutcomeHeader, OutcomeClass};
use nic_rtl::responder::HeaderCapture;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// The inputs, with `s_class` decoded from the header as the `OutcomeSlice` registers it
/// (`OutcomeClass::of`); the model decodes the raw fields itself.
fn apply(u: &mut HeaderCapture, i: &HeaderInputs) {
    let mut h = CellOutcomeHeader::default();
    h.status = (i.status as u64).to_bits();
    h.opcode = (i.opcode as u64).to_bits();
    h.flags = (i.flags as u64).to_bits();
    h.cell_seq = (i.cell_seq as u64).to_bits();
    u.s_outcome.next.opcode = h.opcode;
    u.s_outcome.next.flags = h.flags;
    u.s_class.next = OutcomeClass::of(&h);
    u.s_outcome.next.dest_qp = (i.dest_qp as u64 & 0x3F).to_bits();
    u.s_outcome.next.src_node = (i.src_node as u64).to_bits();
    u.s_outcome.next.src_qp = (i.src_qp as u64).to_bits();
    u.s_outcome.next.psn = (i.psn as u64).to_bits();
    u.s_outcome.next.msg_length = (i.msg_length as u64).to_bits();
    u.s_valid.next = i.s_valid;
    u.idle.next = i.idle;
    u.busy.next = i.busy;
}

fn outputs(u: &HeaderCapture) -> HeaderOutputs {
    let h = u.m_header.val();
    HeaderOutputs {
        capture: u.capture.val(),
        first: u.first.val(),
        last_cell: u.last_cell.val(),
        ok: u.ok.val(),
        qp: u.qp.val().to_u64() as u8,
        resync: u.resync.val(),
        invalidate: u.invalidate.val(),
        is_send: u.is_send.val(),
        is_read: u.is_read.val(),
        is_atomic: u.is_atomic.val(),
        consumes: u.consumes.val(),
        is_request: u.is_request.val(),
        is_ackish: u.is_ackish.val(),
        is_nack: u.is_nack.val(),
        is_response: u.is_response.val(),
        is_atomic_response: u.is_atomic_response.val(),
        header: KeptHeader {
            opcode: h.opcode.to_u64() as u8,
            psn: h.psn.to_u64() as u32,
            src_node: h.src_node.to_u64() as u16,
            src_qp: h.src_qp.to_u64() as u16,
            msg_length: h.msg_length.to_u64() as u32,
            has_immediate: h.has_immediate,
        },
        hdr_consumes: u.hdr_consumes.val(),
        hdr_cas: u.hdr_cas.val(),
    }
}

fn random_header(rng: &mut ChaCha8Rng) -> HeaderInputs {
    HeaderInputs {
        status: if rng.gen_bool(0.8) {
            0
        } else {
            rng.gen_range(0..8)
        },
        opcode: if rng.gen_bool(0.85) {
            opcode::ALL[rng.gen_range(0..opcode::ALL.len())]
        } else {
            rng.gen()
        },
        flags: if rng.gen_bool(0.8) {
            rng.gen::<u8>() & 0x1F
        } else {
            rng.gen()
        },
        cell_seq: if rng.gen_bool(0.6) { 0 } else { rng.gen() },
        dest_qp: rng.gen(),
        src_node: rng.gen(),
        src_qp: rng.gen(),
        psn: rng.gen::<u32>() & 0xFF_FFFF,
        msg_length: rng.gen(),
        s_valid: false,
        idle: false,
        busy: false,
    }
}

/// `headers` random headers, each held 1..=4 clocks and offered (`s_valid`, `idle`, not
/// `busy`) in one of them with probability `p_capture`, the other clocks random gaps;
/// returns how many captures there were.
fn run(seed: u64, headers: usize, p_capture: f64) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = HeaderCapture::new();
    uut.connect_all();
    let mut model = HeaderCaptureModel::new();
    let mut captures = 0;
    let mut kinds = [0usize; 2];
    for n in 0..headers {
        let h = random_header(&mut rng);
        let hold = rng.gen_range(1..=4);
        let at = rng.gen_bool(p_capture).then(|| rng.gen_range(0..hold));
        for c in 0..hold {
            let mut i = h;
            if at == Some(c) {
                (i.s_valid, i.idle, i.busy) = (true, true, false);
            } else {
                (i.s_valid, i.idle, i.busy) = (rng.gen(), rng.gen(), rng.gen());
            }
            apply(&mut uut, &i);
            settle(&mut uut);
            let got = outputs(&uut);
            captures += got.capture as usize;
            assert_eq!(
                got,
                model.outputs(&i),
                "seed {seed}, header {n}, clock {c}: {i:?}"
            );
            kinds[got.hdr_consumes as usize] += 1;
            model.clock(&i);
            tick(&mut uut);
        }
    }
    assert!(kinds.iter().all(|&k| k > 0), "seed {seed}: {kinds:?}");
    captures
}

#[test]
fn matches_model_with_gaps() {
    for (seed, p) in [(1, 0.5), (2, 1.0), (3, 0.1)] {
        let captures = run(seed, 4_000, p);
        assert!(captures > 200, "seed {seed}: {captures} captures");
    }
}

/// Without a capture (`busy`) the kept header holds, whatever is presented.
#[test]
fn the_header_holds_between_captures() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut uut = HeaderCapture::new();
    uut.connect_all();
    let mut first = random_header(&mut rng);
    first.opcode = opcode::ATOMIC_COMPARE_SWAP;
    (first.status, first.flags, first.cell_seq) = (0, 1, 0);
    (first.s_valid, first.idle, first.busy) = (true, true, false);
    apply(&mut uut, &first);
    settle(&mut uut);
    tick(&mut uut);
    let kept = outputs(&uut).header;
    assert!(outputs(&uut).hdr_cas, "the first cell was captured");
    assert_eq!(kept.opcode, opcode::ATOMIC_COMPARE_SWAP);
    for _ in 0..20 {
        let mut i = random_header(&mut rng);
        i.busy = true;
        apply(&mut uut, &i);
        settle(&mut uut);
        assert_eq!(outputs(&uut).header, kept);
        assert!(outputs(&uut).hdr_cas);
        tick(&mut uut);
    }
}

#[test]
fn synthesises() {
    let mut uut = HeaderCapture::new();
    uut.connect_all();
    yosys_validate("nic_rtl_responder_header_capture", &generate_verilog(&uut))
        .expect("yosys accepts HeaderCapture");
}
