//! `CellChecks`: the verdict of a received cell: every check of `docs/cell-format.md` but
//! the packet CRC, as the cell's words arrive, and the status of a cell ending with the
//! current word.
//!
//! Follows the check order of `ReassemblyModel` (`nic_rtl::cell::format`), the order the
//! `CellReassembler` documents: structure (truncated / too long) → cell CRC → reserved bits
//! → cell length bound → sequence (FIRST flag, cell number) → header consistency with the
//! message's first cell → cell length and LAST flag against the message length. (The
//! packet CRC of a last cell is the parent's, a clock later.)
//!
//! Ports:
//! - `clock`.
//! - The input word `s_data` (64) and `s_valid`; `s_accept_start` (word 0 is taken); the
//!   position (registered, from `CellPosition`): `s_at_word1` .. `s_at_word3`,
//!   `s_at_crc_position`; `s_flushing` (the cell runs past its length).
//! - The cell's stored header: `s_hdr0` (word 0, from word 1 on: FIRST, LAST, cell length),
//!   `s_hdr1` (word 1, from word 2 on), `s_hdr2_msg_length` (32, word 2's message length,
//!   from word 3 on).
//! - The message context: `s_in_message` (inside a message: a continuation is expected),
//!   `s_ctx_hdr0` .. `s_ctx_hdr2` (64, the first cell's header words), `s_ctx_next_seq`
//!   (16), `s_ctx_offset` (32, the next cell's byte offset).
//! - `s_cell_crc` (32): the CRC of the cell's words before the current one.
//! - Verdict of a cell ending with the current word: `m_status` (3: 0 ok, 1 CRC, 2 length,
//!   3 sequence, 4 malformed), `m_cell_ok`; `m_offset` (32, the cell's byte offset in its
//!   message), `m_offset_plus_length` (32, registered: where the next cell starts);
//!   `m_too_big` (registered from word 1: the cell length exceeds `cell_payload`).
//!
//! Latency: the verdict is combinational on the last word (its CRC and reserved half);
//! the rest is registered as the header words arrive (words 0 and 1 are compared with the
//! context register to register a clock after they arrive). Throughput: one word a clock.
//! Limits: `cell_payload` a multiple of 8 in 8..=1024.

use crate::cell::format::{check_cell_payload, MAX_CELL_PAYLOAD};
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct CellChecks {
    pub clock: Signal<In, Clock>,
    pub s_data: Signal<In, Bits<64>>,
    pub s_valid: Signal<In, Bit>,
    pub s_accept_start: Signal<In, Bit>,
    pub s_at_word1: Signal<In, Bit>,
    pub s_at_word2: Signal<In, Bit>,
    pub s_at_word3: Signal<In, Bit>,
    pub s_at_crc_position: Signal<In, Bit>,
    pub s_flushing: Signal<In, Bit>,
    pub s_hdr0: Signal<In, Bits<64>>,
    pub s_hdr1: Signal<In, Bits<64>>,
    pub s_hdr2_msg_length: Signal<In, Bits<32>>,
    pub s_in_message: Signal<In, Bit>,
    pub s_ctx_hdr0: Signal<In, Bits<64>>,
    pub s_ctx_hdr1: Signal<In, Bits<64>>,
    pub s_ctx_hdr2: Signal<In, Bits<64>>,
    pub s_ctx_next_seq: Signal<In, Bits<16>>,
    pub s_ctx_offset: Signal<In, Bits<32>>,
    pub s_cell_crc: Signal<In, Bits<32>>,
    pub m_status: Signal<Out, Bits<3>>,
    pub m_cell_ok: Signal<Out, Bit>,
    pub m_offset: Signal<Out, Bits<32>>,
    pub m_offset_plus_length: Signal<Out, Bits<32>>,
    pub m_too_big: Signal<Out, Bit>,
    reserved_bad: DFF<Bit>,
    too_big: DFF<Bit>,
    sequence_bad: DFF<Bit>,
    /// Header word 0, 1, 2 differs from the message's first cell (one flag per word).
    hdr0_mismatch: DFF<Bit>,
    hdr1_mismatch: DFF<Bit>,
    hdr2_mismatch: DFF<Bit>,
    /// Reserved, cell-length bound, sequence and consistency checks all passed (set by
    /// word 2, registered for word 4 on; a cell ending at word 3 fails its length check).
    header_checks_ok: DFF<Bit>,
    // The length check, pipelined over the header words (ready from word 4).
    offset_plus_length: DFF<Bits<32>>,
    ends_message: DFF<Bit>,
    /// The cell ends past its message (offset + cell length > message length).
    ends_past_message: DFF<Bit>,
    length_ne_cell_payload: DFF<Bit>,
    first: Signal<Local, Bit>,
    structure_bad: Signal<Local, Bit>,
    crc_bad: Signal<Local, Bit>,
    crc_word_reserved: Signal<Local, Bit>,
    offset: Signal<Local, Bits<32>>,
    cell_length: Signal<Local, Bits<32>>,
    length_bad: Signal<Local, Bit>,
    header_mismatch: Signal<Local, Bit>,
    status_registered: Signal<Local, Bits<3>>,
    cell_payload: Constant<Bits<32>>,
    hdr0_compare_mask: Constant<Bits<64>>,
    hdr1_compare_mask: Constant<Bits<64>>,
}

impl CellChecks {
    /// The checks for cells of at most `cell_payload` bytes.
    ///
    /// Panics when `cell_payload` is not a multiple of 8 in 8..=1024.
    pub fn new(cell_payload: usize) -> Self {
        assert!(
            check_cell_payload(cell_payload).is_ok(),
            "CellChecks: cell_payload must be a multiple of 8 between 8 and {MAX_CELL_PAYLOAD}, got {cell_payload}"
        );
        CellChecks {
            clock: Default::default(),
            s_data: Default::default(),
            s_valid: Default::default(),
            s_accept_start: Default::default(),
            s_at_word1: Default::default(),
            s_at_word2: Default::default(),
            s_at_word3: Default::default(),
            s_at_crc_position: Default::default(),
            s_flushing: Default::default(),
            s_hdr0: Default::default(),
            s_hdr1: Default::default(),
            s_hdr2_msg_length: Default::default(),
            s_in_message: Default::default(),
            s_ctx_hdr0: Default::default(),
            s_ctx_hdr1: Default::default(),
            s_ctx_hdr2: Default::default(),
            s_ctx_next_seq: Default::default(),
            s_ctx_offset: Default::default(),
            s_cell_crc: Default::default(),
            m_status: Default::default(),
            m_cell_ok: Default::default(),
            m_offset: Default::default(),
            m_offset_plus_length: Default::default(),
            m_too_big: Default::default(),
            reserved_bad: Default::default(),
            too_big: Default::default(),
            sequence_bad: Default::default(),
            hdr0_mismatch: Default::default(),
            hdr1_mismatch: Default::default(),
            hdr2_mismatch: Default::default(),
            header_checks_ok: Default::default(),
            offset_plus_length: Default::default(),
            ends_message: Default::default(),
            ends_past_message: Default::default(),
            length_ne_cell_payload: Default::default(),
            first: Default::default(),
            structure_bad: Default::default(),
            crc_bad: Default::default(),
            crc_word_reserved: Default::default(),
            offset: Default::default(),
            cell_length: Default::default(),
            length_bad: Default::default(),
            header_mismatch: Default::default(),
            status_registered: Default::default(),
            cell_payload: Constant::new((cell_payload as u64).to_bits()),
            // hdr0: compare opcode, flags other than FIRST/LAST, nodes; not the cell length.
            hdr0_compare_mask: Constant::new(0xFFFF_FFFF_0000_FCFFu64.to_bits()),
            // hdr1: compare queue pairs; not the cell sequence number.
            hdr1_compare_mask: Constant::new(0x0000_0000_FFFF_FFFFu64.to_bits()),
        }
    }
}

impl Default for CellChecks {
    fn default() -> Self {
        Self::new(crate::DEFAULT_CELL_PAYLOAD)
    }
}

impl Logic for CellChecks {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            reserved_bad,
            too_big,
            sequence_bad,
            hdr0_mismatch,
            hdr1_mismatch,
            hdr2_mismatch,
            header_checks_ok,
            offset_plus_length,
            ends_message,
            ends_past_message,
            length_ne_cell_payload
        );
        self.first.next = self.s_hdr0.val().get_bit(8);
        // Word 0 as it arrives: reserved bits, the cell length bound.
        if self.s_accept_start.val() {
            self.reserved_bad.d.next = self.s_data.val().get_bits::<3>(13) != 0;
            self.too_big.d.next =
                bit_cast::<32, 16>(self.s_data.val().get_bits::<16>(16)) > self.cell_payload.val();
            self.hdr2_mismatch.d.next = false;
            self.sequence_bad.d.next = false;
        }
        // Words 1 and 2 as they arrive (a word inside a cell is never held back).
        if self.s_valid.val() & self.s_at_word1.val() {
            if self.s_data.val().get_bits::<16>(48) != 0 {
                self.reserved_bad.d.next = true;
            }
            self.sequence_bad.d.next = self.s_in_message.val() == self.first.val();
            if self.first.val() {
                if self.s_data.val().get_bits::<16>(32) != 0 {
                    self.sequence_bad.d.next = true;
                }
            } else if self.s_data.val().get_bits::<16>(32) != self.s_ctx_next_seq.val() {
                self.sequence_bad.d.next = true;
            }
        }
        if self.s_valid.val() & self.s_at_word2.val() {
            self.ends_message.d.next =
                self.offset_plus_length.q.val() == self.s_data.val().get_bits::<32>(32);
            if self.s_data.val().get_bits::<8>(24) != 0 {
                self.reserved_bad.d.next = true;
            }
            self.hdr2_mismatch.d.next = self.s_data.val() != self.s_ctx_hdr2.val();
        }
        // Status of a cell ending with this word. Only the cell CRC and the reserved half
        // of the CRC word come from the word itself; the rest is registered.
        // The CRC position is at least word 3, so this also rejects cells of under 4 words.
        self.structure_bad.next = self.s_flushing.val() | !self.s_at_crc_position.val();
        self.crc_bad.next = self.s_data.val().get_bits::<32>(0) != self.s_cell_crc.val();
        self.crc_word_reserved.next = self.s_data.val().get_bits::<32>(32) != 0;
        self.offset.next = self.s_ctx_offset.val();
        if self.first.val() {
            self.offset.next = 0.into();
        }
        // Cell length must be min(cell_payload, message length - offset); LAST must mark
        // the end of the message. That is: the cell ends the message (a length over
        // cell_payload is too big, reported first), or it is cell_payload long and ends
        // before the message does. (This holds where the length check decides the status:
        // the header matches the first cell's, so the offset is within the message, and
        // offset + length does not wrap, as in the model.) The compares are registered
        // and known from word 4 (the message length is word 2; word 3 is a length error).
        self.cell_length.next = bit_cast::<32, 16>(self.s_hdr0.val().get_bits::<16>(16));
        self.offset_plus_length.d.next = self.offset.val() + self.cell_length.val();
        self.ends_past_message.d.next =
            self.offset_plus_length.q.val() > self.s_hdr2_msg_length.val();
        self.length_ne_cell_payload.d.next = self.cell_length.val() != self.cell_payload.val();
        self.length_bad.next = self.s_at_word3.val()
            | (self.s_hdr0.val().get_bit(9) != self.ends_message.q.val())
            | (!self.ends_message.q.val()
                & (self.length_ne_cell_payload.q.val() | self.ends_past_message.q.val()));
        // Header consistency with the message's first cell. Words 0 and 1 are compared
        // register to register in the clock after they arrive (the context is loaded by
        // then, at the previous cell's verdict); word 2 as it arrives, as a cell may end
        // at word 3.
        self.hdr0_mismatch.d.next =
            ((self.s_hdr0.val() ^ self.s_ctx_hdr0.val()) & self.hdr0_compare_mask.val()) != 0;
        self.hdr1_mismatch.d.next =
            ((self.s_hdr1.val() ^ self.s_ctx_hdr1.val()) & self.hdr1_compare_mask.val()) != 0;
        self.header_mismatch.next = !self.first.val()
            & (self.hdr0_mismatch.q.val()
                | self.hdr1_mismatch.q.val()
                | self.hdr2_mismatch.q.val());
        self.status_registered.next = 0.into();
        if self.length_bad.val() {
            self.status_registered.next = 2.into();
        }
        if self.header_mismatch.val() {
            self.status_registered.next = 4.into();
        }
        if self.sequence_bad.q.val() {
            self.status_registered.next = 3.into();
        }
        if self.too_big.q.val() {
            self.status_registered.next = 2.into();
        }
        if self.reserved_bad.q.val() {
            self.status_registered.next = 4.into();
        }
        self.m_status.next = self.status_registered.val();
        if self.crc_word_reserved.val() {
            self.m_status.next = 4.into();
        }
        if self.crc_bad.val() {
            self.m_status.next = 1.into();
        }
        if self.structure_bad.val() {
            self.m_status.next = 2.into();
        }
        // Every check but the packet CRC passed: a flat AND of the flags (the status code
        // is only stored).
        self.header_checks_ok.d.next = !self.reserved_bad.q.val()
            & !self.too_big.q.val()
            & !self.sequence_bad.q.val()
            & !self.header_mismatch.val();
        self.m_cell_ok.next = !self.structure_bad.val()
            & !self.crc_bad.val()
            & !self.crc_word_reserved.val()
            & self.header_checks_ok.q.val()
            & !self.length_bad.val();
        self.m_offset.next = self.offset.val();
        self.m_offset_plus_length.next = self.offset_plus_length.q.val();
        self.m_too_big.next = self.too_big.q.val();
    }
}

impl ClockedBlock for CellChecks {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
