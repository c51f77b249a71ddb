//! `CellPosition` against the cell layout of `docs/cell-format.md`: random cell headers
//! (first or not, with and without a RETH, any length, last or not), cells cut short or
//! running long, idle gaps, and flushing from a random word on.

use nic_model::Throttle;
use nic_rtl::cell::CellPosition;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// One cell as the test sends it.
struct Cell {
    word0: u64,
    length: u32,
    first: bool,
    last: bool,
    /// Words actually sent (the layout's count, or fewer or more).
    words: usize,
    /// The word from which the cell is flushed, if any.
    flush_from: Option<usize>,
    store: bool,
}

impl Cell {
    fn reth(&self) -> bool {
        self.first && (self.word0 >> 4) & 0xF == 1
    }
    fn header_words(&self) -> usize {
        if self.reth() {
            5
        } else {
            3
        }
    }
    fn payload_words(&self) -> usize {
        self.length.div_ceil(8) as usize
    }
    /// The flags the layout gives word `i`: (at word 1..4, CRC position, trailer, payload).
    fn flags(&self, i: usize) -> ([bool; 4], bool, bool, bool) {
        let i = self.flush_from.map_or(i, |f| i.min(f));
        let end = self.header_words() + self.payload_words();
        let at = [i == 1, i == 2, i == 3, i == 4];
        let crc = i >= 3 && i == end + self.last as usize;
        let trailer = i >= 3 && self.last && i == end;
        let payload = i >= self.header_words() && i < end && self.store;
        (at, crc, trailer, payload)
    }
}

fn random_cell(rng: &mut ChaCha8Rng) -> Cell {
    let first = rng.gen_bool(0.5);
    let last = rng.gen_bool(0.5);
    let class: u64 = rng.gen_range(0..4);
    let length: u32 = if rng.gen_bool(0.1) {
        0
    } else {
        rng.gen_range(1..=256)
    };
    let word0 = (rng.gen::<u64>() & !0xFFFF_03F0)
        | class << 4
        | (first as u64) << 8
        | (last as u64) << 9
        | (length as u64) << 16;
    let mut cell = Cell {
        word0,
        length,
        first,
        last,
        words: 0,
        flush_from: None,
        store: rng.gen_bool(0.8),
    };
    let layout = cell.header_words() + cell.payload_words() + cell.last as usize + 1;
    cell.words = match rng.gen_range(0..10) {
        0 => rng.gen_range(1..=layout),
        1 => layout + rng.gen_range(1..5),
        _ => layout,
    };
    if rng.gen_bool(0.15) {
        cell.flush_from = Some(rng.gen_range(1..=cell.words));
    }
    cell
}

#[test]
fn follows_the_cell_layout() {
    for seed in 0..4u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let gaps = Throttle::when(seed % 2 == 1, 0.6);
        let mut uut = CellPosition::new();
        uut.connect_all();
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        let mut checked = 0;
        for _ in 0..400 {
            let cell = random_cell(&mut rng);
            let mut i = 0;
            while i < cell.words {
                let go = gaps.go(&mut rng);
                uut.s_accept.next = go;
                uut.s_accept_start.next = go && i == 0;
                uut.s_cell_end.next = go && i + 1 == cell.words;
                uut.s_flushing.next = cell.flush_from.is_some_and(|f| i >= f);
                let word: u64 = if i == 0 { cell.word0 } else { rng.gen() };
                uut.s_start_first.next = word >> 8 & 1 == 1;
                uut.s_start_class.next = (word >> 4 & 0xF).to_bits();
                uut.s_start_length_low.next = (word >> 16 & 7).to_bits();
                // The stored word 0's fields, from word 1 on.
                if i >= 1 {
                    uut.s_hdr_length.next = (cell.length as u64).to_bits();
                    uut.s_last.next = cell.last;
                }
                uut.s_store_enable.next = cell.store;
                settle(&mut uut);
                let (at, crc, trailer, payload) = cell.flags(i);
                let got = (
                    [
                        uut.m_at_word1.val(),
                        uut.m_at_word2.val(),
                        uut.m_at_word3.val(),
                        uut.m_at_word4.val(),
                    ],
                    uut.m_at_crc_position.val(),
                    uut.m_at_trailer.val(),
                    uut.m_store_payload.val(),
                );
                let what = format!(
                    "seed {seed}: word {i} of a cell of {} words (length {}, first {}, \
                     last {}, flush from {:?})",
                    cell.words, cell.length, cell.first, cell.last, cell.flush_from
                );
                assert_eq!(got, (at, crc, trailer, payload), "{what}");
                assert_eq!(uut.m_mid_cell.val(), i > 0, "{what}: mid cell");
                if i >= 2 {
                    assert_eq!(uut.m_has_reth.val(), cell.reth(), "{what}: RETH");
                    assert_eq!(
                        uut.m_payload_words.val().index(),
                        cell.payload_words(),
                        "{what}: payload words"
                    );
                    let last_bytes = match cell.length % 8 {
                        0 => 8,
                        r => r,
                    };
                    assert_eq!(
                        uut.m_last_word_bytes.val().index(),
                        last_bytes as usize,
                        "{what}: last word bytes"
                    );
                }
                checked += go as usize;
                tick(&mut uut);
                i += go as usize;
            }
        }
        assert!(checked > 3_000, "{checked} words");
    }
}

#[test]
fn synthesises() {
    let mut uut = CellPosition::new();
    uut.connect_all();
    yosys_validate("nic_rtl_cell_position", &generate_verilog(&uut))
        .expect("yosys accepts CellPosition");
}
