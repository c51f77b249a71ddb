//! `CellReassembler`: checks received cells and delivers their payload, cell by cell.
//!
//! The inverse of [`crate::CellSegmenter`] (layout: [`crate::cell::format`], after source
//! document 002). Every cell is stored in a block-RAM buffer and released only after its
//! cell CRC (and, on the last cell, the packet CRC) and header checks pass, so a bad
//! cell's bytes never reach the output. The behaviour is exactly that of
//! [`crate::cell::format::ReassemblyModel`]; the check order is:
//! structure (truncated / too long) → cell CRC → reserved bits → cell length bound →
//! sequence (FIRST flag, cell number) → header consistency with the first cell → cell
//! length and LAST flag against the message length → packet CRC.
//! A failed cell ends its message: the rest of that message's cells are dropped silently
//! (counted in `stat_cells_dropped`) until the next FIRST cell.
//!
//! Structure: the parent wires four children of `rtl/src/cell/` and keeps the message
//! context, the done slot and the counters: [`CellPosition`] (where the input stands in
//! the cell), [`CellChecks`] (every check but the packet CRC, and the verdict),
//! [`CellBuffer`] (the payload store) and [`OutcomeSender`] (the output side).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high).
//! - `s_cell_data` (64) / `s_cell_valid` / `s_cell_ready` / `s_cell_last`: cells in.
//! - `m_data` (64) / `m_bytes` (4) / `m_valid` / `m_ready` / `m_last`: one outcome per
//!   reported cell: for a good cell its payload words (`m_bytes` = 8, the last beat
//!   `((length - 1) mod 8) + 1`), for a good empty cell or a failed cell a single beat with
//!   `m_bytes` = 0. `m_last` marks the outcome's final beat.
//! - `m_outcome`, held for all beats of an outcome (a [`CellOutcomeHeader`]): the status
//!   (0 ok, 1 CRC, 2 length, 3 sequence, 4 malformed), the header as received, and for
//!   good cells the message's RETH, the cell's byte offset in the message and, on the last
//!   cell, the immediate data (zero for failed cells).
//! - `stat_cells_ok`, `stat_cells_failed`, `stat_cells_dropped` (32, wrapping): a cell
//!   shows in them three clocks after its CRC word is accepted (a dropped cell, two).
//!
//! Latency: store and forward per cell: a cell's first beat is valid two clocks after its
//! CRC word is accepted (when the output is idle; three for a message's last cell, whose
//! packet CRC is decided a clock later). Throughput: one word per clock in, less one
//! clock after each message's last cell; the output takes one idle clock between cells (a
//! cell in has at least four words that are not payload). The input waits at the start of
//! a cell while the previous cell's outcome has not yet begun (so a short cell behind a
//! long one waits for the long one to drain).
//! Timing: the input's ready and every wide load wait on registers set a clock ahead
//! (`start_blocked`, the header-word and position flags) and `s_cell_valid`; header words
//! 0 and 1 are compared with the message context register to register, a clock after they
//! arrive; a cell's verdict (buffer commit, message context, counters) is applied the
//! clock after its last word. About 2210 iCE40 LUTs, 1430 flip-flops and
//! four block RAMs; 108 MHz on HX8K (nextpnr-ice40 seed 1, in the timing wrapper of
//! `nic synth`), limited by the `offset + length` carry chain. The packet CRC is a
//! [`Crc32Prepad`] (no byte enables), started by word 2 of a first cell.
//! Limits: one message context (a message's cells arrive contiguously, as the fabric
//! guarantees); `cell_payload` a multiple of 8 in 8..=1024 (two cells fit the 256-word
//! buffer, four iCE40 block RAMs).

use crate::cell::cell_buffer::CellBuffer;
use crate::cell::cell_checks::CellChecks;
use crate::cell::cell_position::CellPosition;
use crate::cell::format::{check_cell_payload, MAX_CELL_PAYLOAD};
use crate::cell::outcome_sender::OutcomeSender;
use crate::common::{CellOutcomeHeader, EventCounter, FinishedCell};
use crate::crc32::prepad::Crc32Prepad;
use crate::crc32::Crc32;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Where the current message stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum MessageContext {
    /// Expecting a FIRST cell.
    Idle,
    /// Inside a message: expecting its next cell.
    InMessage,
    /// After a failure: continuation cells are dropped until a FIRST cell.
    Discarding,
}

#[derive(LogicBlock)]
pub struct CellReassembler {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_cell_data: Signal<In, Bits<64>>,
    pub s_cell_valid: Signal<In, Bit>,
    pub s_cell_ready: Signal<Out, Bit>,
    pub s_cell_last: Signal<In, Bit>,
    pub m_data: Signal<Out, Bits<64>>,
    pub m_bytes: Signal<Out, Bits<4>>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    pub m_last: Signal<Out, Bit>,
    pub m_outcome: Signal<Out, CellOutcomeHeader>,
    pub stat_cells_ok: Signal<Out, Bits<32>>,
    pub stat_cells_failed: Signal<Out, Bits<32>>,
    pub stat_cells_dropped: Signal<Out, Bits<32>>,
    // Input side: position within the cell and what the header says about it.
    /// A new cell may not start in this clock (decided a clock ahead, so that
    /// `s_cell_ready` and the start-of-cell enables wait on registers only).
    start_blocked: DFF<Bit>,
    flushing: DFF<Bit>,
    silent: DFF<Bit>,
    // Cell geometry from word 0 (`has_reth`, `trailer_adjust` as it arrives, the rest a
    // clock later: valid from word 2 on): word indices, less one, of the trailer (the
    // payload end) and of the last payload word, so that each position flag is an
    // equality against `word_index`.
    // Position flags of the current word, kept a clock ahead (off the status path).
    cur_hdr0: DFF<Bits<64>>,
    cur_hdr1: DFF<Bits<64>>,
    cur_hdr2: DFF<Bits<64>>,
    immediate_reg: DFF<Bits<32>>,
    wptr: DFF<Bits<8>>,
    committed_wptr: DFF<Bits<8>>,
    // Check results, accumulated while the cell arrives.
    trailer_crc: DFF<Bits<32>>,
    /// The packet CRC of a last cell is decided the clock after its CRC word (the
    /// compare gets a clock of its own); the next cell waits that one clock.
    packet_check_pending: DFF<Bit>,
    packet_crc_match: DFF<Bit>,
    /// A cell other than a message's last ended in the previous clock: its verdict
    /// (`verdict_ok`) is committed now (buffer pointer, message context, counters).
    verdict_pending: DFF<Bit>,
    /// Every check but the packet CRC passed, for the cell ended in the previous clock.
    verdict_ok: DFF<Bit>,
    // The length check, pipelined over the header words (ready from word 4; a cell that
    // ends at word 3 with a sound structure is a length error whatever its header says).
    // Message context.
    msg_context: DFF<MessageContext>,
    ctx_hdr0: DFF<Bits<64>>,
    ctx_hdr1: DFF<Bits<64>>,
    ctx_hdr2: DFF<Bits<64>>,
    ctx_vaddr: DFF<Bits<64>>,
    ctx_stag_dma: DFF<Bits<64>>,
    ctx_next_seq: DFF<Bits<16>>,
    ctx_offset: DFF<Bits<32>>,
    // Finished cell waiting for the output side.
    done: DFF<Bit>,
    done_cell: DFF<FinishedCell>,
    /// The output side: delivers each finished cell's outcome from the buffer.
    sender: OutcomeSender,
    /// Where the input stands inside the arriving cell, and the cell's geometry.
    position: CellPosition,
    /// Every check but the packet CRC, and the verdict of a cell ending now.
    checks: CellChecks,
    // The counters: each pulse is registered before it is counted (off the check path).
    cells_ok: EventCounter,
    cells_failed: EventCounter,
    cells_dropped: EventCounter,
    count_ok: Signal<Local, Bit>,
    count_failed: Signal<Local, Bit>,
    count_dropped: Signal<Local, Bit>,
    buffer: CellBuffer,
    cell_crc: Crc32,
    /// The message payload's CRC, started at word 2 of a first cell with the message
    /// length's pad (every cell but the last carries whole words, else it fails).
    packet_crc: Crc32Prepad,
    // Combinational intermediates.
    accept: Signal<Local, Bit>,
    accept_start: Signal<Local, Bit>,
    accept_mid: Signal<Local, Bit>,
    cell_end: Signal<Local, Bit>,
    report_end: Signal<Local, Bit>,
    ends_with_packet_check: Signal<Local, Bit>,
    first: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
    verdict_good: Signal<Local, Bit>,
    done_next: Signal<Local, Bit>,
    hdr_length: Signal<Local, Bits<16>>,
    silent_now: Signal<Local, Bit>,
}

impl CellReassembler {
    /// A reassembler for cells of at most `cell_payload` bytes.
    ///
    /// Panics when `cell_payload` is not a multiple of 8 in 8..=1024.
    pub fn new(cell_payload: usize) -> Self {
        assert!(
            check_cell_payload(cell_payload).is_ok(),
            "CellReassembler: cell_payload must be a multiple of 8 between 8 and {MAX_CELL_PAYLOAD}, got {cell_payload}"
        );
        CellReassembler {
            clock: Default::default(),
            reset: Default::default(),
            s_cell_data: Default::default(),
            s_cell_valid: Default::default(),
            s_cell_ready: Default::default(),
            s_cell_last: Default::default(),
            m_data: Default::default(),
            m_bytes: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_last: Default::default(),
            m_outcome: Default::default(),
            stat_cells_ok: Default::default(),
            stat_cells_failed: Default::default(),
            stat_cells_dropped: Default::default(),
            start_blocked: Default::default(),
            flushing: Default::default(),
            silent: Default::default(),
            cur_hdr0: Default::default(),
            cur_hdr1: Default::default(),
            cur_hdr2: Default::default(),
            immediate_reg: Default::default(),
            wptr: Default::default(),
            committed_wptr: Default::default(),
            trailer_crc: Default::default(),
            packet_check_pending: Default::default(),
            packet_crc_match: Default::default(),
            verdict_pending: Default::default(),
            verdict_ok: Default::default(),
            msg_context: Default::default(),
            ctx_hdr0: Default::default(),
            ctx_hdr1: Default::default(),
            ctx_hdr2: Default::default(),
            ctx_vaddr: Default::default(),
            ctx_stag_dma: Default::default(),
            ctx_next_seq: Default::default(),
            ctx_offset: Default::default(),
            done: Default::default(),
            done_cell: Default::default(),
            cells_ok: Default::default(),
            cells_failed: Default::default(),
            cells_dropped: Default::default(),
            count_ok: Default::default(),
            count_failed: Default::default(),
            count_dropped: Default::default(),
            buffer: Default::default(),
            sender: OutcomeSender::new(),
            position: CellPosition::new(),
            checks: CellChecks::new(cell_payload),
            cell_crc: Crc32::full_words(),
            packet_crc: Crc32Prepad::default(),
            accept: Default::default(),
            accept_start: Default::default(),
            accept_mid: Default::default(),
            cell_end: Default::default(),
            report_end: Default::default(),
            ends_with_packet_check: Default::default(),
            first: Default::default(),
            last: Default::default(),
            verdict_good: Default::default(),
            done_next: Default::default(),
            hdr_length: Default::default(),
            silent_now: Default::default(),
        }
    }
}

impl Default for CellReassembler {
    fn default() -> Self {
        Self::new(crate::DEFAULT_CELL_PAYLOAD)
    }
}

impl Logic for CellReassembler {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            start_blocked,
            flushing,
            silent,
            cur_hdr0,
            cur_hdr1,
            cur_hdr2,
            immediate_reg,
            wptr,
            committed_wptr,
            trailer_crc,
            packet_check_pending,
            packet_crc_match,
            verdict_pending,
            verdict_ok,
            msg_context,
            ctx_hdr0,
            ctx_hdr1,
            ctx_hdr2,
            ctx_vaddr,
            ctx_stag_dma,
            ctx_next_seq,
            ctx_offset,
            done,
            done_cell
        );
        clock!(
            self,
            clock,
            cell_crc,
            packet_crc,
            buffer,
            sender,
            position,
            checks,
            cells_ok,
            cells_failed,
            cells_dropped
        );

        // ---------------- Output side ----------------
        // A finished cell moves to the output only once the output is idle: one output
        // clock per cell, against at least four header/CRC clocks per cell on the input,
        // and it keeps `m_ready` out of the input's ready path.
        self.sender.reset.next = self.reset.val();
        self.sender.s_done_valid.next = self.done.q.val();
        self.sender.s_done.next = self.done_cell.q.val();
        self.sender.s_done_hdr0.next = self.cur_hdr0.q.val();
        self.sender.s_done_hdr1.next = self.cur_hdr1.q.val();
        self.sender.s_done_hdr2.next = self.cur_hdr2.q.val();
        self.sender.s_done_vaddr.next = self.ctx_vaddr.q.val();
        self.sender.s_done_stag_dma.next = self.ctx_stag_dma.q.val();
        self.buffer.read_address.next = self.sender.m_read_address.val();
        self.sender.s_read_data.next = self.buffer.read_data.val();
        self.sender.m_ready.next = self.m_ready.val();
        if self.done.q.val() & self.sender.s_done_ready.val() {
            self.done.d.next = false;
        }
        self.m_valid.next = self.sender.m_valid.val();
        self.m_last.next = self.sender.m_last.val();
        self.m_data.next = self.sender.m_data.val();
        self.m_bytes.next = self.sender.m_bytes.val();
        self.m_outcome.next = self.sender.m_outcome.val();

        // ---------------- Input side ----------------
        // A new cell may start unless `start_blocked` (decided a clock ahead, below) says
        // that the previous cell's outcome still holds the done slot or awaits its packet
        // CRC. A word inside a cell is never held back, so everything that only happens
        // inside a cell (most of the enables) waits on `s_cell_valid` and a register alone.
        self.s_cell_ready.next =
            !self.reset.val() & (self.position.m_mid_cell.val() | !self.start_blocked.q.val());
        self.accept_mid.next =
            self.s_cell_valid.val() & self.position.m_mid_cell.val() & !self.reset.val();
        self.accept_start.next = self.s_cell_valid.val()
            & !self.position.m_mid_cell.val()
            & !self.start_blocked.q.val()
            & !self.reset.val();
        self.accept.next = self.accept_start.val() | self.accept_mid.val();
        self.first.next = self.cur_hdr0.q.val().get_bit(8);
        self.last.next = self.cur_hdr0.q.val().get_bit(9);

        self.hdr_length.next = self.cur_hdr0.q.val().get_bits::<16>(16);
        self.position.reset.next = self.reset.val();
        self.position.s_start_first.next = self.s_cell_data.val().get_bit(8);
        self.position.s_start_class.next = self.s_cell_data.val().get_bits::<4>(4);
        self.position.s_start_length_low.next = self.s_cell_data.val().get_bits::<3>(16);
        self.position.s_accept.next = self.accept.val();
        self.position.s_accept_start.next = self.accept_start.val();
        self.position.s_flushing.next = self.flushing.q.val();
        self.position.s_hdr_length.next = self.hdr_length.val();
        self.position.s_last.next = self.last.val();
        self.position.s_store_enable.next = !self.silent.q.val() & !self.checks.m_too_big.val();

        self.cell_crc.s_clear.next = self.accept_start.val();
        self.cell_crc.s_valid.next = self.accept.val();
        self.cell_crc.s_data.next = self.s_cell_data.val();
        self.cell_crc.s_bytes.next = 8.into();
        // Started by word 2 (the message length) of a first cell; no payload before it.
        self.packet_crc.s_start.next =
            self.s_cell_valid.val() & self.position.m_at_word2.val() & self.first.val();
        self.packet_crc.s_pad.next = !self.s_cell_data.val().get_bits::<3>(32) + 1;
        self.packet_crc.s_valid.next =
            self.s_cell_valid.val() & self.position.m_store_payload.val();
        self.packet_crc.s_data.next = self.s_cell_data.val();
        self.buffer.write_address.next = self.wptr.q.val();
        self.buffer.write_data.next = self.s_cell_data.val();
        self.buffer.write_enable.next =
            self.s_cell_valid.val() & self.position.m_store_payload.val();
        if self.buffer.write_enable.val() {
            self.wptr.d.next = self.wptr.q.val() + 1;
        }

        self.checks.s_data.next = self.s_cell_data.val();
        self.checks.s_valid.next = self.s_cell_valid.val();
        self.checks.s_accept_start.next = self.accept_start.val();
        self.checks.s_at_word1.next = self.position.m_at_word1.val();
        self.checks.s_at_word2.next = self.position.m_at_word2.val();
        self.checks.s_at_word3.next = self.position.m_at_word3.val();
        self.checks.s_at_crc_position.next = self.position.m_at_crc_position.val();
        self.checks.s_flushing.next = self.flushing.q.val();
        self.checks.s_hdr0.next = self.cur_hdr0.q.val();
        self.checks.s_hdr1.next = self.cur_hdr1.q.val();
        self.checks.s_hdr2_msg_length.next = self.cur_hdr2.q.val().get_bits::<32>(32);
        self.checks.s_in_message.next = self.msg_context.q.val() == MessageContext::InMessage;
        self.checks.s_ctx_hdr0.next = self.ctx_hdr0.q.val();
        self.checks.s_ctx_hdr1.next = self.ctx_hdr1.q.val();
        self.checks.s_ctx_hdr2.next = self.ctx_hdr2.q.val();
        self.checks.s_ctx_next_seq.next = self.ctx_next_seq.q.val();
        self.checks.s_ctx_offset.next = self.ctx_offset.q.val();
        self.checks.s_cell_crc.next = self.cell_crc.crc.val();
        self.packet_crc_match.d.next = self.trailer_crc.q.val() == self.packet_crc.crc.val();
        self.cell_end.next = self.accept.val() & self.s_cell_last.val();
        self.position.s_cell_end.next = self.cell_end.val();
        // Continuation cells of a failed message are dropped without an outcome. The
        // message context lags a cell's verdict by a clock, so a verdict due now is
        // forwarded.
        self.silent_now.next = self.silent.q.val();
        if !self.position.m_mid_cell.val() {
            self.silent_now.next = !self.s_cell_data.val().get_bit(8)
                & ((!self.verdict_pending.q.val()
                    & (self.msg_context.q.val() == MessageContext::Discarding))
                    | (self.verdict_pending.q.val() & !self.verdict_ok.q.val()));
        }
        self.report_end.next = self.cell_end.val() & !self.silent_now.val();
        // A message's last cell (after its word 0, which a one-word cell lacks) waits a
        // clock for its packet CRC, whatever its other checks say.
        self.ends_with_packet_check.next = self.last.val() & self.position.m_mid_cell.val();

        if self.accept_start.val() {
            self.cur_hdr0.d.next = self.s_cell_data.val();
            self.cur_hdr1.d.next = 0.into();
            self.cur_hdr2.d.next = 0.into();
            self.silent.d.next = self.silent_now.val();
        }
        // Header words 1..=4 and the trailer: loads wait on `s_cell_valid` and a flag set a
        // clock ahead (inside a cell no word is held back).
        if self.s_cell_valid.val() {
            if self.position.m_at_word1.val() {
                self.cur_hdr1.d.next = self.s_cell_data.val();
            }
            if self.position.m_at_word2.val() {
                self.cur_hdr2.d.next = self.s_cell_data.val();
            }
            // The RETH of a message is loaded by its first cell (zero without one). A
            // first cell that ends before word 4 has failed; so has one still sending
            // words while flushing.
            if self.first.val() & self.position.m_at_word3.val() {
                self.ctx_vaddr.d.next = 0.into();
                if self.position.m_has_reth.val() {
                    self.ctx_vaddr.d.next = self.s_cell_data.val();
                }
            }
            if self.first.val() & self.position.m_at_word4.val() {
                self.ctx_stag_dma.d.next = 0.into();
                if self.position.m_has_reth.val() {
                    self.ctx_stag_dma.d.next = self.s_cell_data.val();
                }
            }
            if self.position.m_at_trailer.val() {
                // Trailer: packet CRC and immediate.
                self.trailer_crc.d.next = self.s_cell_data.val().get_bits::<32>(0);
                self.immediate_reg.d.next = 0.into();
                if self.cur_hdr0.q.val().get_bit(10) {
                    self.immediate_reg.d.next = self.s_cell_data.val().get_bits::<32>(32);
                }
            }
        }
        if self.accept_mid.val() {
            if !self.s_cell_last.val()
                & !self.flushing.q.val()
                & self.position.m_at_crc_position.val()
            {
                // The header's length ends here but the cell goes on: too long.
                self.flushing.d.next = true;
            }
        }
        self.count_ok.next = false;
        self.count_failed.next = false;
        self.count_dropped.next = false;
        self.verdict_pending.d.next = false;
        self.packet_check_pending.d.next = false;
        if self.cell_end.val() {
            self.flushing.d.next = false;
            // Loaded at every cell end, whatever the outcome, so that only a few registers
            // wait on the checks: the done slot is empty while a cell arrives (a dropped
            // cell leaves it so), and the output zeroes the done fields of a failed cell.
            self.done_cell.d.next.status = self.checks.m_status.val();
            self.done_cell.d.next.offset = self.checks.m_offset.val();
            self.done_cell.d.next.immediate = 0.into();
            if self.last.val() {
                self.done_cell.d.next.immediate = self.immediate_reg.q.val();
            }
            self.done_cell.d.next.words = bit_cast::<8, 14>(self.position.m_payload_words.val());
            self.done_cell.d.next.last_bytes = self.position.m_last_word_bytes.val();
            if self.silent_now.val() {
                self.count_dropped.next = true;
                self.wptr.d.next = self.committed_wptr.q.val();
            } else {
                // The verdict is committed in the next clock.
                self.verdict_ok.d.next = self.checks.m_cell_ok.val();
                if self.ends_with_packet_check.val() {
                    // The outcome waits for the packet CRC (next clock).
                    self.packet_check_pending.d.next = true;
                } else {
                    self.done.d.next = true;
                    self.verdict_pending.d.next = true;
                }
            }
        }

        // The verdict of the cell that ended in the previous clock. No payload word
        // arrives in this clock (at most the next cell's word 0), so the buffer pointers
        // are free to move.
        self.verdict_good.next = self.verdict_ok.q.val()
            & (!self.packet_check_pending.q.val() | self.packet_crc_match.q.val());
        if self.verdict_pending.q.val() | self.packet_check_pending.q.val() {
            // The header registers still hold the cell's header in this clock. After a
            // failure the context is Discarding: these fields are unused until the next
            // first cell's verdict reloads them.
            self.ctx_next_seq.d.next = self.cur_hdr1.q.val().get_bits::<16>(32) + 1;
            self.ctx_offset.d.next = self.checks.m_offset_plus_length.val();
            if self.first.val() {
                self.ctx_hdr0.d.next = self.cur_hdr0.q.val();
                self.ctx_hdr1.d.next = self.cur_hdr1.q.val();
                self.ctx_hdr2.d.next = self.cur_hdr2.q.val();
            }
            if self.verdict_good.val() {
                self.count_ok.next = true;
                self.committed_wptr.d.next = self.wptr.q.val();
                self.msg_context.d.next = MessageContext::InMessage;
                if self.packet_check_pending.q.val() {
                    self.msg_context.d.next = MessageContext::Idle;
                }
            } else {
                self.count_failed.next = true;
                self.wptr.d.next = self.committed_wptr.q.val();
                self.msg_context.d.next = MessageContext::Discarding;
            }
        }
        if self.packet_check_pending.q.val() {
            // No cell starts in this clock (the input waits), so nothing else fills `done`.
            self.done.d.next = true;
            if self.verdict_ok.q.val() & !self.packet_crc_match.q.val() {
                self.done_cell.d.next.status = 1.into();
            }
        }

        // Whether a cell may start in the next clock: as the done slot, the output and the
        // packet check will then stand (mirrors their updates above, on their inputs).
        self.done_next.next = self.packet_check_pending.q.val()
            | (self.report_end.val() & !self.ends_with_packet_check.val())
            | (self.done.q.val() & self.sender.m_valid.val());
        self.start_blocked.d.next = (self.report_end.val() & self.ends_with_packet_check.val())
            | (self.done_next.val() & self.sender.m_valid_next.val());

        if self.reset.val() {
            self.packet_check_pending.d.next = false;
            self.verdict_pending.d.next = false;
            self.start_blocked.d.next = false;
            self.flushing.d.next = false;
            self.wptr.d.next = 0.into();
            self.committed_wptr.d.next = 0.into();
            self.msg_context.d.next = MessageContext::Idle;
            self.done.d.next = false;
        }
        self.cells_ok.reset.next = self.reset.val();
        self.cells_ok.s_event.next = self.count_ok.val();
        self.stat_cells_ok.next = self.cells_ok.m_count.val();
        self.cells_failed.reset.next = self.reset.val();
        self.cells_failed.s_event.next = self.count_failed.val();
        self.stat_cells_failed.next = self.cells_failed.m_count.val();
        self.cells_dropped.reset.next = self.reset.val();
        self.cells_dropped.s_event.next = self.count_dropped.val();
        self.stat_cells_dropped.next = self.cells_dropped.m_count.val();
    }
}

impl ClockedBlock for CellReassembler {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
