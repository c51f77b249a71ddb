//! `CellChecks` (with the `CellPosition` it takes its position from) against the
//! reassembly model: random messages, clean and corrupted (`nic_model::cell_faults`), the
//! message context kept by the test as `docs/cell-format.md` says a reassembler keeps it.
//! The packet CRC is not `CellChecks`' check: a last cell the model fails on its packet CRC
//! alone may pass here.

use nic_model::cell_faults::{corrupt_stream, random_message};
use nic_model::Throttle;
use nic_rtl::cell::format::{encode_message, CellHeader, CellStatus, ReassemblyModel, CRC32};
use nic_rtl::cell::{CellChecks, CellPosition};
use nic_rtl::sim::{settle, tick};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// Position and checks, wired as the reassembler wires them.
#[derive(LogicBlock, Default)]
struct Pair {
    clock: Signal<In, Clock>,
    position: CellPosition,
    checks: CellChecks,
}

impl Logic for Pair {
    fn update(&mut self) {
        self.position.clock.next = self.clock.val();
        self.checks.clock.next = self.clock.val();
        self.checks.s_at_word1.next = self.position.m_at_word1.val();
        self.checks.s_at_word2.next = self.position.m_at_word2.val();
        self.checks.s_at_word3.next = self.position.m_at_word3.val();
        self.checks.s_at_crc_position.next = self.position.m_at_crc_position.val();
    }
}

impl nic_rtl::sim::ClockedBlock for Pair {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

/// The message context as the reassembler keeps it (from each cell's verdict).
#[derive(Default)]
struct Context {
    in_message: bool,
    hdr: [u64; 3],
    next_seq: u16,
    offset: u32,
}

#[test]
fn verdicts_match_the_reassembly_model() {
    let cp = 64;
    for seed in 0..3u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut cells = vec![];
        for _ in 0..300 {
            let m = random_message(&mut rng, 300);
            cells.extend(encode_message(&m, cp).unwrap());
        }
        let cells = corrupt_stream(&mut rng, cells, 0.15);
        let gaps = Throttle::when(seed > 0, 0.7);
        let mut model = ReassemblyModel::new(cp);
        let mut ctx = Context::default();
        let mut uut = Pair::default();
        uut.checks = CellChecks::new(cp);
        uut.connect_all();
        let mut judged = 0;
        for cell in &cells {
            let Some(outcome) = model.push_cell(cell) else {
                continue; // dropped while discarding: the reassembler ignores its verdict
            };
            let mut flushing = false;
            let mut i = 0;
            let mut verdict = None;
            while i < cell.len() {
                let go = gaps.go(&mut rng);
                let word = cell[i];
                let last_word = i + 1 == cell.len();
                let p = &mut uut.position;
                p.s_accept.next = go;
                p.s_accept_start.next = go && i == 0;
                p.s_cell_end.next = go && last_word;
                p.s_flushing.next = flushing;
                p.s_start_first.next = word >> 8 & 1 == 1;
                p.s_start_class.next = (word >> 4 & 0xF).to_bits();
                p.s_start_length_low.next = (word >> 16 & 7).to_bits();
                p.s_hdr_length.next = (cell[0] >> 16 & 0xFFFF).to_bits();
                p.s_last.next = cell[0] >> 9 & 1 == 1;
                p.s_store_enable.next = true;
                let c = &mut uut.checks;
                c.s_data.next = word.to_bits();
                c.s_valid.next = go;
                c.s_accept_start.next = go && i == 0;
                c.s_flushing.next = flushing;
                c.s_hdr0.next = (if i >= 1 { cell[0] } else { 0 }).to_bits();
                c.s_hdr1.next = (if i >= 2 { cell[1] } else { 0 }).to_bits();
                c.s_hdr2_msg_length.next = (if i >= 3 { cell[2] >> 32 } else { 0 }).to_bits();
                c.s_in_message.next = ctx.in_message;
                c.s_ctx_hdr0.next = ctx.hdr[0].to_bits();
                c.s_ctx_hdr1.next = ctx.hdr[1].to_bits();
                c.s_ctx_hdr2.next = ctx.hdr[2].to_bits();
                c.s_ctx_next_seq.next = (ctx.next_seq as u64).to_bits();
                c.s_ctx_offset.next = (ctx.offset as u64).to_bits();
                let bytes: Vec<u8> = cell[..i].iter().flat_map(|w| w.to_le_bytes()).collect();
                c.s_cell_crc.next = (CRC32.checksum(&bytes) as u64).to_bits();
                settle(&mut uut);
                if go {
                    if last_word {
                        verdict = Some((
                            uut.checks.m_status.val().to_u8(),
                            uut.checks.m_cell_ok.val(),
                            uut.checks.m_offset.val().to_u32(),
                        ));
                    } else if uut.position.m_at_crc_position.val() && !flushing {
                        flushing = true; // the cell runs past its length
                    }
                }
                tick(&mut uut);
                i += go as usize;
            }
            let (status, ok, offset) = verdict.unwrap();
            let header = CellHeader::from_words([
                cell[0],
                *cell.get(1).unwrap_or(&0),
                *cell.get(2).unwrap_or(&0),
            ]);
            let want = outcome.status as u8;
            let packet_crc_only = want == CellStatus::Crc as u8 && status == 0 && header.last();
            assert!(
                status == want || packet_crc_only,
                "seed {seed}, cell {judged}: status {status}, model {want} ({header:?})"
            );
            assert_eq!(ok, status == 0, "cell_ok agrees with the status");
            if want == 0 {
                assert_eq!(offset, outcome.offset, "offset");
                if header.first() {
                    ctx.hdr = [cell[0], cell[1], cell[2]];
                }
                ctx.next_seq = header.cell_seq.wrapping_add(1);
                ctx.offset = outcome.offset + header.cell_length as u32;
                ctx.in_message = !header.last();
            } else {
                ctx.in_message = false;
            }
            judged += 1;
        }
        assert!(judged > 500, "{judged} cells judged");
    }
}

#[test]
fn synthesises() {
    let mut uut = CellChecks::new(256);
    uut.connect_all();
    yosys_validate("nic_rtl_cell_checks", &generate_verilog(&uut))
        .expect("yosys accepts CellChecks");
}

#[test]
#[should_panic(expected = "cell_payload must be a multiple of 8 between 8 and 1024, got 12")]
fn rejects_a_cell_payload_not_a_multiple_of_8() {
    CellChecks::new(12);
}
