//! `CellReassembler` against the reassembly model (`ReassemblyModel`) on clean and faulty
//! cell streams (`nic_model::cell_faults`), with idle gaps and back-pressure.

use nic_model::cell_faults::{corrupt_stream, random_message};
use nic_model::Throttle;
use nic_rtl::cell::format::{
    encode_message, CellHeader, CellOutcome, CellStatus, ReassemblyModel, Reth,
};
use nic_rtl::sim::{settle, tick};
use nic_rtl::CellReassembler;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// Feed `cells` to a reassembler and collect its outcomes; also returns the clocks taken.
fn run(
    cell_payload: usize,
    cells: &[Vec<u64>],
    seed: u64,
    gaps: bool,
    backpressure: bool,
) -> (Vec<CellOutcome>, u64, u32) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = CellReassembler::new(cell_payload);
    uut.connect_all();
    let words: Vec<(u64, bool)> = cells
        .iter()
        .flat_map(|c| {
            c.iter()
                .enumerate()
                .map(move |(i, w)| (*w, i + 1 == c.len()))
        })
        .collect();
    // Valid is drawn afresh each clock (the reassembler must not rely on it being held).
    let cell_gaps = Throttle::when(gaps, 0.7);
    let out_ready = Throttle::when(backpressure, 0.6);
    let mut next = 0;
    let mut outcomes = vec![];
    let mut payload = vec![];
    let mut cycles = 0u64;
    let mut idle_after_input = 0;
    while next < words.len() || idle_after_input < 300 {
        cycles += 1;
        assert!(cycles < 2_000_000, "reassembler stalled");
        let offer = next < words.len() && cell_gaps.go(&mut rng);
        uut.s_cell_valid.next = offer;
        if offer {
            uut.s_cell_data.next = words[next].0.to_bits();
            uut.s_cell_last.next = words[next].1;
        }
        uut.m_ready.next = out_ready.go(&mut rng);
        settle(&mut uut);
        if offer && uut.s_cell_ready.val() {
            next += 1;
        }
        if next == words.len() {
            idle_after_input += 1;
        }
        if uut.m_valid.val() && uut.m_ready.val() {
            let bytes = uut.m_bytes.val().index();
            assert!(bytes <= 8);
            payload.extend_from_slice(&uut.m_data.val().to_u64().to_le_bytes()[..bytes]);
            if uut.m_last.val() {
                let hdr = CellHeader {
                    opcode: uut.m_outcome.val().opcode.to_u32() as u8,
                    flags: uut.m_outcome.val().flags.to_u32() as u8,
                    cell_length: uut.m_outcome.val().cell_length.to_u32() as u16,
                    dest_node: uut.m_outcome.val().dest_node.to_u32() as u16,
                    src_node: uut.m_outcome.val().src_node.to_u32() as u16,
                    dest_qp: uut.m_outcome.val().dest_qp.to_u32() as u16,
                    src_qp: uut.m_outcome.val().src_qp.to_u32() as u16,
                    cell_seq: uut.m_outcome.val().cell_seq.to_u32() as u16,
                    psn: uut.m_outcome.val().psn.to_u32(),
                    message_length: uut.m_outcome.val().msg_length.to_u32(),
                };
                outcomes.push(CellOutcome {
                    status: CellStatus::from_code(uut.m_outcome.val().status.to_u32() as u8)
                        .expect("status code"),
                    header: hdr,
                    reth: Reth {
                        vaddr: uut.m_outcome.val().vaddr.to_u64(),
                        stag: uut.m_outcome.val().stag.to_u32(),
                        dma_length: uut.m_outcome.val().dma_length.to_u32(),
                    },
                    offset: uut.m_outcome.val().offset.to_u32(),
                    immediate: uut.m_outcome.val().immediate.to_u32(),
                    payload: std::mem::take(&mut payload),
                });
            }
        }
        tick(&mut uut);
    }
    (outcomes, cycles, uut.stat_cells_dropped.val().to_u32())
}

fn model(cell_payload: usize, cells: &[Vec<u64>]) -> (Vec<CellOutcome>, u32) {
    let mut m = ReassemblyModel::new(cell_payload);
    let outs = cells.iter().filter_map(|c| m.push_cell(c)).collect();
    (outs, m.dropped_cells as u32)
}

fn check(cell_payload: usize, cells: &[Vec<u64>], seed: u64, gaps: bool, backpressure: bool) {
    let (got, _, dropped) = run(cell_payload, cells, seed, gaps, backpressure);
    let (mut want, want_dropped) = model(cell_payload, cells);
    for w in &mut want {
        // `m_psn` is 24 bits wide: the reserved top byte of the field is not a port.
        w.header.psn &= nic_rtl::cell::format::PSN_MODULUS - 1;
    }
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g, w,
            "outcome {i} differs (seed {seed}, gaps {gaps}, backpressure {backpressure})"
        );
    }
    assert_eq!(got.len(), want.len(), "number of outcomes");
    assert_eq!(dropped, want_dropped, "dropped cells");
}

#[test]
fn synthesises() {
    let mut uut = CellReassembler::new(256);
    uut.connect_all();
    yosys_validate("nic_rtl_cell_reassembler", &generate_verilog(&uut))
        .expect("yosys accepts CellReassembler");
}

#[test]
fn reassembles_clean_streams_with_gaps_and_backpressure() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x2ea5_0001);
    for (cell_payload, gaps, backpressure) in [
        (256, false, false),
        (256, true, true),
        (64, true, false),
        (8, false, true),
    ] {
        let cells: Vec<Vec<u64>> = (0..20)
            .flat_map(|_| {
                encode_message(
                    &random_message(&mut rng, 3 * cell_payload + 5),
                    cell_payload,
                )
                .unwrap()
            })
            .collect();
        let (want, _) = model(cell_payload, &cells);
        assert!(want.iter().all(|o| o.status == CellStatus::Ok));
        check(cell_payload, &cells, rng.gen(), gaps, backpressure);
    }
}

#[test]
fn matches_model_on_faulty_streams() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x2ea5_0002);
    let mut statuses = std::collections::HashSet::new();
    for round in 0..12 {
        let cell_payload = [256, 64, 16][round % 3];
        let cells: Vec<Vec<u64>> = (0..25)
            .flat_map(|_| {
                encode_message(&random_message(&mut rng, 3 * cell_payload), cell_payload).unwrap()
            })
            .collect();
        let cells = corrupt_stream(&mut rng, cells, 0.25);
        let (want, _) = model(cell_payload, &cells);
        statuses.extend(want.iter().map(|o| o.status));
        check(
            cell_payload,
            &cells,
            rng.gen(),
            round % 2 == 0,
            round % 4 < 2,
        );
    }
    for s in [
        CellStatus::Ok,
        CellStatus::Crc,
        CellStatus::Length,
        CellStatus::Sequence,
        CellStatus::Malformed,
    ] {
        assert!(statuses.contains(&s), "stimulus never produced {s:?}");
    }
}

/// Full cells back to back stream at one word per clock.
#[test]
fn streams_one_word_per_clock() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut m = random_message(&mut rng, 0);
    m.opcode = nic_rtl::cell::format::opcode::SEND;
    m.payload = (0..256 * 40).map(|_| rng.gen()).collect();
    let cells = encode_message(&m, 256).unwrap();
    let words: usize = cells.iter().map(Vec::len).sum();
    let (got, cycles, _) = run(256, &cells, 1, false, false);
    assert_eq!(got.len(), 40);
    // `run` idles 300 clocks after the input is consumed.
    assert!(
        cycles as usize <= words + 300 + 2,
        "{cycles} clocks for {words} words"
    );
}

#[test]
#[should_panic(expected = "must be a multiple of 8")]
fn rejects_cell_payload_not_multiple_of_8() {
    CellReassembler::new(260);
}

#[test]
#[should_panic(expected = "between 8 and 1024, got 2048")]
fn rejects_cell_payload_too_large() {
    CellReassembler::new(2048);
}
