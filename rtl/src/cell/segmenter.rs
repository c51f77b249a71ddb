//! `CellSegmenter`: cuts a message into cells of at most `cell_payload` bytes.
//!
//! Follows source document 002 (cell header fields, per-cell CRC, packet CRC, RDMA virtual
//! address and memory handle on the first cell, 32-bit immediate in the last cell); the
//! byte layout is [`crate::cell::format`] (documented in `docs/cell-format.md`).
//!
//! Ports (`s_msg*` descriptor in, `s_payload_*` words in, `m_cell_*` cell words out):
//! - `clock`, `reset` (synchronous, active high: drops the message in flight). Reset
//!   does not gate `s_msg_ready` / `s_payload_ready`: they follow the registered state
//!   (for timing: the NIC's reset is one register fanned across the die, kept out of the
//!   handshakes), and whatever is taken in a clock with `reset` high is dropped at that
//!   edge. From the second clock of a reset on the segmenter is idle: `s_msg_ready` high,
//!   `s_payload_ready` low.
//! - `s_msg_valid` / `s_msg_ready` / `s_msg`: the message descriptor handshake, a
//!   [`MessageDescriptor`] (`length` in payload bytes; `vaddr`, `stag`, `dma_length` are
//!   the RETH, sent on the first cell when `opcode[7:4] == 1`).
//! - `s_payload_data` (64) / `s_payload_valid` / `s_payload_ready` / `s_payload_last`: the
//!   payload, little-endian, `ceil(length / 8)` words; bytes beyond `length` in the last word
//!   are ignored (sent as zero). `s_msg.length` is authoritative: a `last` that disagrees
//!   with it is counted in `stat_payload_last_errors`.
//! - `m_cell_data` (64) / `m_cell_valid` / `m_cell_ready` / `m_cell_last` (last word of a cell).
//! - `stat_cells`, `stat_messages` (32, wrapping), `stat_payload_last_errors` (16).
//!
//! Latency: descriptor accepted at edge t, first header word valid after edge t+1.
//! `s_msg_ready` is high while idle and, combinationally from `m_cell_ready`, in the clock
//! the previous message's last word (its last cell's CRC) is loaded for output.
//! Throughput: one word per clock in and out while payload is available and the output
//! is ready; the only clocks without a payload word are the cell's own header, RETH,
//! trailer and CRC words, plus one clock per message with payload, before the trailer,
//! while the packet CRC absorbs the last word ([`Crc32Prepad`]: the message is CRC'd
//! shifted behind `(-length) mod 8` zero bytes, so no byte-enable network is needed).
//! A descriptor offered by then is taken with the previous message's last word, so
//! back-to-back messages leave no gap: a one-cell message of `w` words (header, RETH,
//! payload, trailer, CRC) takes `w + 1` clocks (16 for a 64-byte RDMA WRITE).
//! Limits: one message at a time; `cell_payload` a multiple of 8 in 8..=1024; messages
//! up to 65536 cells.

use crate::cell::format::{check_cell_payload, MAX_CELL_PAYLOAD};
use crate::common::MessageDescriptor;
use crate::crc32::prepad::Crc32Prepad;
use crate::crc32::Crc32;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Where the segmenter is within a message.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SegmenterState {
    Idle,
    Header0,
    Header1,
    Header2,
    Reth0,
    Reth1,
    Payload,
    PacketCrcWait,
    Trailer,
    CellCrc,
}

#[derive(LogicBlock)]
pub struct CellSegmenter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_msg_valid: Signal<In, Bit>,
    pub s_msg_ready: Signal<Out, Bit>,
    pub s_msg: Signal<In, MessageDescriptor>,
    pub s_payload_data: Signal<In, Bits<64>>,
    pub s_payload_valid: Signal<In, Bit>,
    pub s_payload_ready: Signal<Out, Bit>,
    pub s_payload_last: Signal<In, Bit>,
    pub m_cell_data: Signal<Out, Bits<64>>,
    pub m_cell_valid: Signal<Out, Bit>,
    pub m_cell_ready: Signal<In, Bit>,
    pub m_cell_last: Signal<Out, Bit>,
    pub stat_cells: Signal<Out, Bits<32>>,
    pub stat_messages: Signal<Out, Bits<32>>,
    pub stat_payload_last_errors: Signal<Out, Bits<16>>,
    // Message registers, loaded from the descriptor.
    state: DFF<SegmenterState>,
    opcode_reg: DFF<Bits<8>>,
    dest_node_reg: DFF<Bits<16>>,
    src_node_reg: DFF<Bits<16>>,
    dest_qp_reg: DFF<Bits<16>>,
    src_qp_reg: DFF<Bits<16>>,
    psn_reg: DFF<Bits<24>>,
    length_reg: DFF<Bits<32>>,
    vaddr_reg: DFF<Bits<64>>,
    stag_reg: DFF<Bits<32>>,
    dma_length_reg: DFF<Bits<32>>,
    immediate_reg: DFF<Bits<32>>,
    has_immediate_reg: DFF<Bit>,
    invalidate_reg: DFF<Bit>,
    resync_reg: DFF<Bit>,
    /// Zero-fill shift of the message's last payload word (8 x pad bytes).
    pad_shift_reg: DFF<Bits<7>>,
    // Cell registers.
    first_reg: DFF<Bit>,
    reth_reg: DFF<Bit>,
    last_cell_reg: DFF<Bit>,
    remaining_reg: DFF<Bits<32>>,
    cell_length_reg: DFF<Bits<16>>,
    cell_seq_reg: DFF<Bits<16>>,
    words_left_reg: DFF<Bits<13>>,
    /// The next payload word is the message's last (kept ahead of time, off the CRC path).
    final_word_reg: DFF<Bit>,
    // Next cell's length, precomputed during the current cell (off the critical path):
    // the remaining length after this cell, whether it fits one cell, then the length and
    // LAST flag, three register stages (a cell lasts at least five clocks).
    rem_after_reg: DFF<Bits<32>>,
    rem_after_fits_reg: DFF<Bit>,
    next_length_reg: DFF<Bits<16>>,
    next_last_reg: DFF<Bit>,
    // Output register.
    out_data_reg: DFF<Bits<64>>,
    out_valid_reg: DFF<Bit>,
    out_last_reg: DFF<Bit>,
    /// The word loaded into the output register last clock, to be absorbed by the cell
    /// CRC now (from the register, so the output mux is not in front of the XOR network).
    absorb_pending: DFF<Bit>,
    clear_pending: DFF<Bit>,
    cells_reg: DFF<Bits<32>>,
    messages_reg: DFF<Bits<32>>,
    last_errors_reg: DFF<Bits<16>>,
    cell_crc: Crc32,
    packet_crc: Crc32Prepad,
    // Combinational intermediates.
    load: Signal<Local, Bit>,
    /// The descriptor handshake may happen this clock (`s_msg_ready`).
    take_msg: Signal<Local, Bit>,
    emit: Signal<Local, Bit>,
    word: Signal<Local, Bits<64>>,
    flags: Signal<Local, Bits<8>>,
    payload_masked: Signal<Local, Bits<64>>,
    pad_bytes: Signal<Local, Bits<3>>,
    /// `s_msg.length` and `s_msg.opcode` as signals of their own (yosys rejects a bit
    /// range of a struct field's range).
    msg_length: Signal<Local, Bits<32>>,
    msg_opcode: Signal<Local, Bits<8>>,
    after_header: Signal<Local, SegmenterState>,
    cell_payload: Constant<Bits<32>>,
    all_ones: Constant<Bits<64>>,
}

impl CellSegmenter {
    /// A segmenter for cells of at most `cell_payload` bytes.
    ///
    /// Panics when `cell_payload` is not a multiple of 8 in 8..=4096.
    pub fn new(cell_payload: usize) -> Self {
        assert!(
            check_cell_payload(cell_payload).is_ok(),
            "CellSegmenter: cell_payload must be a multiple of 8 between 8 and {MAX_CELL_PAYLOAD}, got {cell_payload}"
        );
        CellSegmenter {
            clock: Default::default(),
            reset: Default::default(),
            s_msg_valid: Default::default(),
            s_msg_ready: Default::default(),
            s_msg: Default::default(),
            s_payload_data: Default::default(),
            s_payload_valid: Default::default(),
            s_payload_ready: Default::default(),
            s_payload_last: Default::default(),
            m_cell_data: Default::default(),
            m_cell_valid: Default::default(),
            m_cell_ready: Default::default(),
            m_cell_last: Default::default(),
            stat_cells: Default::default(),
            stat_messages: Default::default(),
            stat_payload_last_errors: Default::default(),
            state: Default::default(),
            opcode_reg: Default::default(),
            dest_node_reg: Default::default(),
            src_node_reg: Default::default(),
            dest_qp_reg: Default::default(),
            src_qp_reg: Default::default(),
            psn_reg: Default::default(),
            length_reg: Default::default(),
            vaddr_reg: Default::default(),
            stag_reg: Default::default(),
            dma_length_reg: Default::default(),
            immediate_reg: Default::default(),
            has_immediate_reg: Default::default(),
            invalidate_reg: Default::default(),
            resync_reg: Default::default(),
            pad_shift_reg: Default::default(),
            first_reg: Default::default(),
            reth_reg: Default::default(),
            last_cell_reg: Default::default(),
            remaining_reg: Default::default(),
            cell_length_reg: Default::default(),
            cell_seq_reg: Default::default(),
            words_left_reg: Default::default(),
            final_word_reg: Default::default(),
            rem_after_reg: Default::default(),
            rem_after_fits_reg: Default::default(),
            next_length_reg: Default::default(),
            next_last_reg: Default::default(),
            out_data_reg: Default::default(),
            out_valid_reg: Default::default(),
            out_last_reg: Default::default(),
            absorb_pending: Default::default(),
            clear_pending: Default::default(),
            cells_reg: Default::default(),
            messages_reg: Default::default(),
            last_errors_reg: Default::default(),
            cell_crc: Crc32::full_words(),
            packet_crc: Crc32Prepad::default(),
            load: Default::default(),
            take_msg: Default::default(),
            emit: Default::default(),
            word: Default::default(),
            flags: Default::default(),
            payload_masked: Default::default(),
            pad_bytes: Default::default(),
            msg_length: Default::default(),
            msg_opcode: Default::default(),
            after_header: Default::default(),
            cell_payload: Constant::new((cell_payload as u64).to_bits()),
            all_ones: Constant::new(u64::MAX.to_bits()),
        }
    }
}

impl Default for CellSegmenter {
    fn default() -> Self {
        Self::new(crate::DEFAULT_CELL_PAYLOAD)
    }
}

impl Logic for CellSegmenter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            opcode_reg,
            dest_node_reg,
            src_node_reg,
            dest_qp_reg,
            src_qp_reg,
            psn_reg,
            length_reg,
            vaddr_reg,
            stag_reg,
            dma_length_reg,
            immediate_reg,
            has_immediate_reg,
            invalidate_reg,
            resync_reg,
            pad_shift_reg,
            first_reg,
            reth_reg,
            last_cell_reg,
            remaining_reg,
            cell_length_reg,
            cell_seq_reg,
            words_left_reg,
            final_word_reg,
            rem_after_reg,
            rem_after_fits_reg,
            next_length_reg,
            next_last_reg,
            out_data_reg,
            out_valid_reg,
            out_last_reg,
            absorb_pending,
            clear_pending,
            cells_reg,
            messages_reg,
            last_errors_reg
        );
        clock!(self, clock, cell_crc, packet_crc);
        // Next cell's length, from registers that are stable during a cell.
        self.rem_after_reg.d.next =
            self.remaining_reg.q.val() - bit_cast::<32, 16>(self.cell_length_reg.q.val());
        // The compare's carry chain and the length multiplexer get a clock each.
        self.rem_after_fits_reg.d.next = self.rem_after_reg.q.val() <= self.cell_payload.val();
        self.next_last_reg.d.next = self.rem_after_fits_reg.q.val();
        self.next_length_reg.d.next = bit_cast::<16, 32>(self.cell_payload.val());
        if self.rem_after_fits_reg.q.val() {
            self.next_length_reg.d.next = bit_cast::<16, 32>(self.rem_after_reg.q.val());
        }
        // The output register takes a new word when it is empty or being read.
        self.load.next = !self.out_valid_reg.q.val() | self.m_cell_ready.val();
        self.payload_masked.next = self.s_payload_data.val();
        if self.final_word_reg.q.val() {
            self.payload_masked.next =
                self.s_payload_data.val() & (self.all_ones.val() >> self.pad_shift_reg.q.val());
        }
        // Bytes of zero fill in the message's last payload word: (8 - length) mod 8.
        self.msg_length.next = self.s_msg.val().length;
        self.msg_opcode.next = self.s_msg.val().opcode;
        self.pad_bytes.next = !self.msg_length.val().get_bits::<3>(0) + 1;
        self.flags.next = bit_cast::<8, 1>(self.first_reg.q.val().into())
            | (bit_cast::<8, 1>(self.last_cell_reg.q.val().into()) << 1)
            | (bit_cast::<8, 1>(self.has_immediate_reg.q.val().into()) << 2)
            | (bit_cast::<8, 1>(self.invalidate_reg.q.val().into()) << 3)
            | (bit_cast::<8, 1>(self.resync_reg.q.val().into()) << 4);
        self.after_header.next = SegmenterState::CellCrc;
        if self.last_cell_reg.q.val() {
            self.after_header.next = SegmenterState::Trailer;
        }
        if self.cell_length_reg.q.val() != 0 {
            self.after_header.next = SegmenterState::Payload;
        }
        self.emit.next = false;
        self.word.next = 0.into();
        self.s_msg_ready.next = false;
        self.s_payload_ready.next = false;
        self.cell_crc.s_clear.next = self.clear_pending.q.val();
        self.cell_crc.s_valid.next = self.absorb_pending.q.val();
        self.cell_crc.s_data.next = self.out_data_reg.q.val();
        self.cell_crc.s_bytes.next = 8.into();
        self.clear_pending.d.next = false;
        self.packet_crc.s_start.next = false;
        self.packet_crc.s_pad.next = self.pad_bytes.val();
        self.packet_crc.s_valid.next = false;
        self.packet_crc.s_data.next = self.payload_masked.val();
        self.out_last_reg.d.next = self.out_last_reg.q.val() & !self.load.val();
        match self.state.q.val() {
            SegmenterState::Idle => {
                // The descriptor is taken below (`take_msg`).
            }
            SegmenterState::Header0 => {
                self.word.next = bit_cast::<64, 8>(self.opcode_reg.q.val())
                    | (bit_cast::<64, 8>(self.flags.val()) << 8)
                    | (bit_cast::<64, 16>(self.cell_length_reg.q.val()) << 16)
                    | (bit_cast::<64, 16>(self.dest_node_reg.q.val()) << 32)
                    | (bit_cast::<64, 16>(self.src_node_reg.q.val()) << 48);
                self.emit.next = self.load.val();
                self.clear_pending.d.next = self.load.val();
                if self.load.val() {
                    self.words_left_reg.d.next =
                        bit_cast::<13, 16>((self.cell_length_reg.q.val() + 7) >> 3);
                    self.final_word_reg.d.next = self.last_cell_reg.q.val()
                        & (self.cell_length_reg.q.val() != 0)
                        & (self.cell_length_reg.q.val() <= 8);
                    self.state.d.next = SegmenterState::Header1;
                }
            }
            SegmenterState::Header1 => {
                self.word.next = bit_cast::<64, 16>(self.dest_qp_reg.q.val())
                    | (bit_cast::<64, 16>(self.src_qp_reg.q.val()) << 16)
                    | (bit_cast::<64, 16>(self.cell_seq_reg.q.val()) << 32);
                self.emit.next = self.load.val();
                if self.load.val() {
                    self.state.d.next = SegmenterState::Header2;
                }
            }
            SegmenterState::Header2 => {
                self.word.next = bit_cast::<64, 24>(self.psn_reg.q.val())
                    | (bit_cast::<64, 32>(self.length_reg.q.val()) << 32);
                self.emit.next = self.load.val();
                if self.load.val() {
                    self.state.d.next = self.after_header.val();
                    if self.reth_reg.q.val() {
                        self.state.d.next = SegmenterState::Reth0;
                    }
                }
            }
            SegmenterState::Reth0 => {
                self.word.next = self.vaddr_reg.q.val();
                self.emit.next = self.load.val();
                if self.load.val() {
                    self.state.d.next = SegmenterState::Reth1;
                }
            }
            SegmenterState::Reth1 => {
                self.word.next = bit_cast::<64, 32>(self.stag_reg.q.val())
                    | (bit_cast::<64, 32>(self.dma_length_reg.q.val()) << 32);
                self.emit.next = self.load.val();
                if self.load.val() {
                    self.state.d.next = self.after_header.val();
                }
            }
            SegmenterState::Payload => {
                self.word.next = self.payload_masked.val();
                self.s_payload_ready.next = self.load.val();
                self.emit.next = self.load.val() & self.s_payload_valid.val();
                self.packet_crc.s_valid.next = self.load.val() & self.s_payload_valid.val();
                if self.load.val() & self.s_payload_valid.val() {
                    self.words_left_reg.d.next = self.words_left_reg.q.val() - 1;
                    self.final_word_reg.d.next =
                        self.last_cell_reg.q.val() & (self.words_left_reg.q.val() == 2);
                    if self.s_payload_last.val() != self.final_word_reg.q.val() {
                        self.last_errors_reg.d.next = self.last_errors_reg.q.val() + 1;
                    }
                    if self.words_left_reg.q.val() == 1 {
                        self.state.d.next = SegmenterState::CellCrc;
                        if self.last_cell_reg.q.val() {
                            self.state.d.next = SegmenterState::PacketCrcWait;
                        }
                    }
                }
            }
            SegmenterState::PacketCrcWait => {
                // The packet CRC (latency 2: shifted, then absorbed) is ready next clock.
                self.state.d.next = SegmenterState::Trailer;
            }
            SegmenterState::Trailer => {
                self.word.next = bit_cast::<64, 32>(self.packet_crc.crc.val());
                if self.has_immediate_reg.q.val() {
                    self.word.next = bit_cast::<64, 32>(self.packet_crc.crc.val())
                        | (bit_cast::<64, 32>(self.immediate_reg.q.val()) << 32);
                }
                self.emit.next = self.load.val();
                if self.load.val() {
                    self.state.d.next = SegmenterState::CellCrc;
                }
            }
            SegmenterState::CellCrc => {
                self.word.next = bit_cast::<64, 32>(self.cell_crc.crc_next.val());
                self.emit.next = self.load.val();
                if self.load.val() {
                    self.out_last_reg.d.next = true;
                    self.cells_reg.d.next = self.cells_reg.q.val() + 1;
                    self.cell_seq_reg.d.next = self.cell_seq_reg.q.val() + 1;
                    self.first_reg.d.next = false;
                    self.reth_reg.d.next = false;
                    self.remaining_reg.d.next = self.rem_after_reg.q.val();
                    self.cell_length_reg.d.next = self.next_length_reg.q.val();
                    self.last_cell_reg.d.next = self.next_last_reg.q.val();
                    self.state.d.next = SegmenterState::Header0;
                    if self.last_cell_reg.q.val() {
                        self.messages_reg.d.next = self.messages_reg.q.val() + 1;
                        self.state.d.next = SegmenterState::Idle;
                    }
                }
            }
            _ => {
                self.state.d.next = SegmenterState::Idle;
            }
        }
        // A message's descriptor is taken while idle, or in the clock its predecessor's
        // last word (the last cell's CRC) goes out: its header follows with no gap.
        self.take_msg.next = (self.state.q.val() == SegmenterState::Idle)
            | ((self.state.q.val() == SegmenterState::CellCrc)
                & self.last_cell_reg.q.val()
                & self.load.val());
        self.s_msg_ready.next = self.take_msg.val();
        if self.take_msg.val() & self.s_msg_valid.val() {
            self.opcode_reg.d.next = self.msg_opcode.val();
            self.dest_node_reg.d.next = self.s_msg.val().dest_node;
            self.src_node_reg.d.next = self.s_msg.val().src_node;
            self.dest_qp_reg.d.next = self.s_msg.val().dest_qp;
            self.src_qp_reg.d.next = self.s_msg.val().src_qp;
            self.psn_reg.d.next = self.s_msg.val().psn;
            self.length_reg.d.next = self.msg_length.val();
            self.vaddr_reg.d.next = self.s_msg.val().vaddr;
            self.stag_reg.d.next = self.s_msg.val().stag;
            self.dma_length_reg.d.next = self.s_msg.val().dma_length;
            self.immediate_reg.d.next = self.s_msg.val().immediate;
            self.has_immediate_reg.d.next = self.s_msg.val().has_immediate;
            self.invalidate_reg.d.next = self.s_msg.val().invalidate;
            self.resync_reg.d.next = self.s_msg.val().resync;
            self.pad_shift_reg.d.next = bit_cast::<7, 3>(self.pad_bytes.val()) << 3;
            self.first_reg.d.next = true;
            self.reth_reg.d.next = self.msg_opcode.val().get_bits::<4>(4) == 1;
            self.remaining_reg.d.next = self.msg_length.val();
            self.cell_seq_reg.d.next = 0.into();
            self.last_cell_reg.d.next = self.msg_length.val() <= self.cell_payload.val();
            self.cell_length_reg.d.next = bit_cast::<16, 32>(self.cell_payload.val());
            if self.msg_length.val() <= self.cell_payload.val() {
                self.cell_length_reg.d.next = bit_cast::<16, 32>(self.msg_length.val());
            }
            self.packet_crc.s_start.next = true;
            self.state.d.next = SegmenterState::Header0;
        }
        self.absorb_pending.d.next = self.emit.val();
        if self.load.val() {
            self.out_valid_reg.d.next = self.emit.val();
        }
        if self.emit.val() {
            self.out_data_reg.d.next = self.word.val();
        }
        if self.reset.val() {
            self.state.d.next = SegmenterState::Idle;
            self.out_valid_reg.d.next = false;
            self.out_last_reg.d.next = false;
            self.cells_reg.d.next = 0.into();
            self.messages_reg.d.next = 0.into();
            self.last_errors_reg.d.next = 0.into();
        }
        self.m_cell_data.next = self.out_data_reg.q.val();
        self.m_cell_valid.next = self.out_valid_reg.q.val();
        self.m_cell_last.next = self.out_last_reg.q.val();
        self.stat_cells.next = self.cells_reg.q.val();
        self.stat_messages.next = self.messages_reg.q.val();
        self.stat_payload_last_errors.next = self.last_errors_reg.q.val();
    }
}

impl ClockedBlock for CellSegmenter {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
