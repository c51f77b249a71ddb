//! `CellPosition`: where the reassembler's input stands inside the cell arriving: which
//! header word, whether the word is payload, the trailer or the cell CRC, and the cell's
//! geometry from its header.
//!
//! Follows the cell layout of `docs/cell-format.md` (`nic_rtl::cell::format`): word 0
//! (opcode 7:0, FIRST 8, LAST 9, cell length 31:16), word 1, word 2, on a first cell with
//! a RETH (FIRST and an RDMA opcode class, bits 7:4 = 1) words 3 and 4, then
//! `ceil(length / 8)` payload words, on a last cell the trailer (packet CRC, immediate),
//! then the cell CRC word.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: at the start of a cell).
//! - Word 0's fields as it arrives, read when `s_accept_start`: `s_start_first` (FIRST,
//!   bit 8), `s_start_class` (4, the opcode class, bits 7:4), `s_start_length_low` (3, the
//!   cell length's bits 2:0, word bits 18:16).
//! - `s_accept`: a word of the cell is taken this clock; `s_accept_start`: it is word 0;
//!   `s_cell_end`: it is the cell's last; `s_flushing`: the cell is being flushed (its
//!   words no longer advance the position).
//! - `s_hdr_length` (16): the stored word 0's cell length; `s_last`: its LAST flag (both
//!   valid from word 1 on).
//! - `s_store_enable`: the cell's payload is kept (not dropped, not too big).
//! - Position of the current word, registered (set a clock ahead): `m_mid_cell` (past word
//!   0), `m_at_word1` .. `m_at_word4`, `m_at_crc_position` (the word where the header's
//!   length puts the cell CRC), `m_at_trailer` (a last cell's trailer word),
//!   `m_store_payload` (a payload word to keep).
//! - Geometry, registered (valid from word 2 on): `m_has_reth`, `m_payload_words` (14),
//!   `m_last_word_bytes` (4, 1..=8).
//!
//! Latency: every output is a register (decided as the previous word was taken).
//! Throughput: one word per clock. Limits: no parameters; cells of up to 2^14 words.

use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct CellPosition {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_start_first: Signal<In, Bit>,
    pub s_start_class: Signal<In, Bits<4>>,
    pub s_start_length_low: Signal<In, Bits<3>>,
    pub s_accept: Signal<In, Bit>,
    pub s_accept_start: Signal<In, Bit>,
    pub s_cell_end: Signal<In, Bit>,
    pub s_flushing: Signal<In, Bit>,
    pub s_hdr_length: Signal<In, Bits<16>>,
    pub s_last: Signal<In, Bit>,
    pub s_store_enable: Signal<In, Bit>,
    pub m_mid_cell: Signal<Out, Bit>,
    pub m_at_word1: Signal<Out, Bit>,
    pub m_at_word2: Signal<Out, Bit>,
    pub m_at_word3: Signal<Out, Bit>,
    pub m_at_word4: Signal<Out, Bit>,
    pub m_at_crc_position: Signal<Out, Bit>,
    pub m_at_trailer: Signal<Out, Bit>,
    pub m_store_payload: Signal<Out, Bit>,
    pub m_has_reth: Signal<Out, Bit>,
    pub m_payload_words: Signal<Out, Bits<14>>,
    pub m_last_word_bytes: Signal<Out, Bits<4>>,
    word_index: DFF<Bits<14>>,
    /// The current word is word 1, 2, 3, 4 of its cell (one-hot).
    at_word1: DFF<Bit>,
    at_word2: DFF<Bit>,
    at_word3: DFF<Bit>,
    at_word4: DFF<Bit>,
    /// Past the first word of a cell (power-up zero = at the start of a cell).
    mid_cell: DFF<Bit>,
    has_reth: DFF<Bit>,
    /// Header words (3, or 5 with the RETH) less one, plus one for a partial last payload
    /// word: the trailer index less one is this plus the full payload words.
    trailer_adjust: DFF<Bits<3>>,
    trailer_index_m1: DFF<Bits<14>>,
    payload_words: DFF<Bits<14>>,
    last_word_bytes: DFF<Bits<4>>,
    at_crc_position: DFF<Bit>,
    at_trailer: DFF<Bit>,
    in_payload_reg: DFF<Bit>,
    store_payload: DFF<Bit>,
    past_word_1: Signal<Local, Bit>,
    next_in_payload: Signal<Local, Bit>,
    at_trailer_m1: Signal<Local, Bit>,
    at_payload_start_m1: Signal<Local, Bit>,
    hdr_full_words: Signal<Local, Bits<14>>,
    hdr_partial_word: Signal<Local, Bit>,
    start_reth: Signal<Local, Bit>,
    start_partial_word: Signal<Local, Bit>,
}

impl CellPosition {
    /// The position tracker (no parameters).
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for CellPosition {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            word_index,
            at_word1,
            at_word2,
            at_word3,
            at_word4,
            mid_cell,
            has_reth,
            trailer_adjust,
            trailer_index_m1,
            payload_words,
            last_word_bytes,
            at_crc_position,
            at_trailer,
            in_payload_reg,
            store_payload
        );
        self.past_word_1.next = self.mid_cell.q.val() & !self.at_word1.q.val();
        // Cell geometry from the stored word 0, registered (ready from word 2 on): the
        // trailer is at header words + payload words, each index one adder of the full
        // payload words and the small `trailer_adjust` (from word 0 as it arrived).
        self.start_reth.next = self.s_start_first.val() & (self.s_start_class.val() == 1);
        self.start_partial_word.next = self.s_start_length_low.val() != 0;
        self.hdr_full_words.next = bit_cast::<14, 16>(self.s_hdr_length.val() >> 3);
        self.hdr_partial_word.next = self.s_hdr_length.val().get_bits::<3>(0) != 0;
        self.payload_words.d.next = self.hdr_full_words.val() + self.hdr_partial_word.val();
        self.trailer_index_m1.d.next =
            self.hdr_full_words.val() + bit_cast::<14, 3>(self.trailer_adjust.q.val());
        self.last_word_bytes.d.next = 8.into();
        if self.hdr_partial_word.val() {
            self.last_word_bytes.d.next =
                bit_cast::<4, 3>(self.s_hdr_length.val().get_bits::<3>(0));
        }
        // Position flags of the next word: word i + 1 is at position p when i == p - 1.
        // Words 0..=2 are header words: their flags, computed at words 0 and 1 (before the
        // geometry registers hold this cell's values), stay clear.
        self.at_trailer_m1.next = self.word_index.q.val() == self.trailer_index_m1.q.val();
        self.at_payload_start_m1.next = self.at_word2.q.val();
        if self.has_reth.q.val() {
            self.at_payload_start_m1.next = self.at_word4.q.val();
        }
        // Payload: from the payload start up to (not including) the trailer position.
        self.next_in_payload.next = self.past_word_1.val()
            & !self.at_trailer_m1.val()
            & (self.in_payload_reg.q.val() | self.at_payload_start_m1.val());
        if self.s_accept.val() & !self.s_flushing.val() {
            self.word_index.d.next = self.word_index.q.val() + 1;
            self.at_word1.d.next = !self.mid_cell.q.val();
            self.at_word2.d.next = self.at_word1.q.val();
            self.at_word3.d.next = self.at_word2.q.val();
            self.at_word4.d.next = self.at_word3.q.val();
            self.mid_cell.d.next = true;
            // The CRC word follows the trailer on a last cell, else the payload.
            self.at_crc_position.d.next = self.past_word_1.val()
                & ((self.s_last.val() & self.at_trailer.q.val())
                    | (!self.s_last.val() & self.at_trailer_m1.val()));
            self.at_trailer.d.next =
                self.past_word_1.val() & self.at_trailer_m1.val() & self.s_last.val();
            self.in_payload_reg.d.next = self.next_in_payload.val();
            self.store_payload.d.next = self.next_in_payload.val() & self.s_store_enable.val();
        }
        if self.s_accept_start.val() {
            self.has_reth.d.next = self.start_reth.val();
            self.trailer_adjust.d.next = 2.into();
            if self.start_reth.val() {
                self.trailer_adjust.d.next = 4.into();
            }
            if self.start_partial_word.val() {
                self.trailer_adjust.d.next = 3.into();
                if self.start_reth.val() {
                    self.trailer_adjust.d.next = 5.into();
                }
            }
        }
        if self.s_cell_end.val() | self.reset.val() {
            self.word_index.d.next = 0.into();
            self.at_word1.d.next = false;
            self.at_word2.d.next = false;
            self.at_word3.d.next = false;
            self.at_word4.d.next = false;
            self.at_crc_position.d.next = false;
            self.at_trailer.d.next = false;
            self.mid_cell.d.next = false;
            self.in_payload_reg.d.next = false;
            self.store_payload.d.next = false;
        }
        self.m_mid_cell.next = self.mid_cell.q.val();
        self.m_at_word1.next = self.at_word1.q.val();
        self.m_at_word2.next = self.at_word2.q.val();
        self.m_at_word3.next = self.at_word3.q.val();
        self.m_at_word4.next = self.at_word4.q.val();
        self.m_at_crc_position.next = self.at_crc_position.q.val();
        self.m_at_trailer.next = self.at_trailer.q.val();
        self.m_store_payload.next = self.store_payload.q.val();
        self.m_has_reth.next = self.has_reth.q.val();
        self.m_payload_words.next = self.payload_words.q.val();
        self.m_last_word_bytes.next = self.last_word_bytes.q.val();
    }
}

impl ClockedBlock for CellPosition {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
