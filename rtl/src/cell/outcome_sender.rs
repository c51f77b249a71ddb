//! `OutcomeSender`: the reassembler's output side: takes one finished cell at a time from
//! the done slot and delivers its outcome on `m_*`, its payload words read from the
//! [`CellBuffer`](crate::cell::cell_buffer::CellBuffer).
//!
//! Follows the outcome contract of `CellReassembler` (its doc comment; `docs/cell-format.md`
//! and `ReassemblyModel` for what an outcome holds): a good cell's payload words with
//! `m_bytes` = 8 and the last beat `((length - 1) mod 8) + 1`; a good empty cell or a failed
//! cell as a single beat with `m_bytes` = 0; the header fields held for every beat; the
//! RETH, offset and immediate zero for a failed cell.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: no outcome, read pointer 0). Reset steers
//!   no handshake: in a reset clock `m_valid` may still show the outcome the reset drops.
//! - Done slot: `s_done_valid` / `s_done_ready` (ready while no outcome is being
//!   delivered), `s_done` (a [`FinishedCell`]: status, 0 = good; offset; immediate;
//!   payload words; bytes of the last word), the header words
//!   `s_done_hdr0` .. `s_done_hdr2` (64) and the message's RETH `s_done_vaddr` (64) and
//!   `s_done_stag_dma` (64: STag 31:0, DMA length 63:32).
//! - Buffer read port: `m_read_address` (8), `s_read_data` (64, one clock later). The read
//!   pointer starts at 0 after reset and moves by one per payload word delivered: the
//!   user stores the payload of the cells it reports, in order, from address 0.
//! - Outcome: `m_valid` / `m_ready`, `m_last`, `m_data` (64), `m_bytes` (4), and
//!   `m_outcome` (a [`CellOutcomeHeader`], the bundle of `common/bundles.rs`).
//! - `m_valid_next`: an outcome will be shown in the next clock (as `m_valid` will stand
//!   after this clock's handshakes), for the user's input-side decisions a clock ahead.
//!
//! Latency: an outcome taken from the done slot is shown the next clock. Throughput: one
//! beat per clock while `m_ready`; one idle clock between outcomes (the slot is taken only
//! while no outcome is shown, keeping `m_ready` out of the slot's ready path).
//! Limits: no parameters; outcomes of up to 255 words.

use crate::common::{CellOutcomeHeader, FinishedCell};
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct OutcomeSender {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_done_valid: Signal<In, Bit>,
    pub s_done_ready: Signal<Out, Bit>,
    pub s_done: Signal<In, FinishedCell>,
    pub s_done_hdr0: Signal<In, Bits<64>>,
    pub s_done_hdr1: Signal<In, Bits<64>>,
    pub s_done_hdr2: Signal<In, Bits<64>>,
    pub s_done_vaddr: Signal<In, Bits<64>>,
    pub s_done_stag_dma: Signal<In, Bits<64>>,
    pub m_read_address: Signal<Out, Bits<8>>,
    pub s_read_data: Signal<In, Bits<64>>,
    pub m_data: Signal<Out, Bits<64>>,
    pub m_bytes: Signal<Out, Bits<4>>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    pub m_last: Signal<Out, Bit>,
    pub m_outcome: Signal<Out, CellOutcomeHeader>,
    pub m_valid_next: Signal<Out, Bit>,
    // The outcome being delivered.
    act_valid: DFF<Bit>,
    act_hdr0: DFF<Bits<64>>,
    act_hdr1: DFF<Bits<64>>,
    act_hdr2: DFF<Bits<64>>,
    act_vaddr: DFF<Bits<64>>,
    act_stag_dma: DFF<Bits<64>>,
    act_status: DFF<Bits<3>>,
    act_offset: DFF<Bits<32>>,
    act_immediate: DFF<Bits<32>>,
    act_beats_left: DFF<Bits<8>>,
    act_last_beat: DFF<Bit>,
    act_has_words: DFF<Bit>,
    act_last_bytes: DFF<Bits<4>>,
    rptr: DFF<Bits<8>>,
    handshake: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    /// The done slot's cell is good.
    done_good: Signal<Local, Bit>,
}

impl OutcomeSender {
    /// The output side (no parameters).
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for OutcomeSender {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            act_valid,
            act_hdr0,
            act_hdr1,
            act_hdr2,
            act_vaddr,
            act_stag_dma,
            act_status,
            act_offset,
            act_immediate,
            act_beats_left,
            act_last_beat,
            act_has_words,
            act_last_bytes,
            rptr
        );
        self.handshake.next = self.act_valid.q.val() & self.m_ready.val();
        self.m_last.next = self.act_last_beat.q.val();
        self.s_done_ready.next = !self.act_valid.q.val();
        self.pop.next = self.handshake.val() & self.act_has_words.q.val();
        self.m_read_address.next = self.rptr.q.val();
        if self.pop.val() {
            self.rptr.d.next = self.rptr.q.val() + 1;
            self.m_read_address.next = self.rptr.q.val() + 1;
        }
        if self.handshake.val() {
            self.act_beats_left.d.next = self.act_beats_left.q.val() - 1;
            self.act_last_beat.d.next = self.act_beats_left.q.val() == 2;
            if self.act_last_beat.q.val() {
                self.act_valid.d.next = false;
            }
        }
        self.done_good.next = self.s_done.val().status == 0;
        if self.s_done_valid.val() & !self.act_valid.q.val() {
            self.act_valid.d.next = true;
            self.act_hdr0.d.next = self.s_done_hdr0.val();
            self.act_hdr1.d.next = self.s_done_hdr1.val();
            self.act_hdr2.d.next = self.s_done_hdr2.val();
            self.act_vaddr.d.next = 0.into();
            self.act_stag_dma.d.next = 0.into();
            self.act_status.d.next = self.s_done.val().status;
            self.act_offset.d.next = 0.into();
            self.act_immediate.d.next = 0.into();
            self.act_has_words.d.next = false;
            self.act_beats_left.d.next = 1.into();
            self.act_last_beat.d.next = true;
            self.act_last_bytes.d.next = 0.into();
            if self.done_good.val() {
                self.act_vaddr.d.next = self.s_done_vaddr.val();
                self.act_stag_dma.d.next = self.s_done_stag_dma.val();
                self.act_offset.d.next = self.s_done.val().offset;
                self.act_immediate.d.next = self.s_done.val().immediate;
                self.act_has_words.d.next = self.s_done.val().words != 0;
                self.act_last_bytes.d.next = self.s_done.val().last_bytes;
                if self.s_done.val().words != 0 {
                    self.act_beats_left.d.next = self.s_done.val().words;
                    self.act_last_beat.d.next = self.s_done.val().words == 1;
                }
            }
        }
        self.m_valid_next.next = (self.s_done_valid.val() & !self.act_valid.q.val())
            | (self.act_valid.q.val() & !(self.m_ready.val() & self.act_last_beat.q.val()));
        self.m_valid.next = self.act_valid.q.val();
        self.m_data.next = 0.into();
        self.m_bytes.next = 0.into();
        if self.act_has_words.q.val() {
            self.m_data.next = self.s_read_data.val();
            self.m_bytes.next = 8.into();
            if self.act_last_beat.q.val() {
                self.m_bytes.next = self.act_last_bytes.q.val();
            }
        }
        self.m_outcome.next.status = self.act_status.q.val();
        self.m_outcome.next.opcode = self.act_hdr0.q.val().get_bits::<8>(0);
        self.m_outcome.next.flags = self.act_hdr0.q.val().get_bits::<8>(8);
        self.m_outcome.next.cell_length = self.act_hdr0.q.val().get_bits::<16>(16);
        self.m_outcome.next.dest_node = self.act_hdr0.q.val().get_bits::<16>(32);
        self.m_outcome.next.src_node = self.act_hdr0.q.val().get_bits::<16>(48);
        self.m_outcome.next.dest_qp = self.act_hdr1.q.val().get_bits::<16>(0);
        self.m_outcome.next.src_qp = self.act_hdr1.q.val().get_bits::<16>(16);
        self.m_outcome.next.cell_seq = self.act_hdr1.q.val().get_bits::<16>(32);
        self.m_outcome.next.psn = self.act_hdr2.q.val().get_bits::<24>(0);
        self.m_outcome.next.msg_length = self.act_hdr2.q.val().get_bits::<32>(32);
        self.m_outcome.next.vaddr = self.act_vaddr.q.val();
        self.m_outcome.next.stag = self.act_stag_dma.q.val().get_bits::<32>(0);
        self.m_outcome.next.dma_length = self.act_stag_dma.q.val().get_bits::<32>(32);
        self.m_outcome.next.offset = self.act_offset.q.val();
        self.m_outcome.next.immediate = self.act_immediate.q.val();
        if self.reset.val() {
            self.rptr.d.next = 0.into();
            self.act_valid.d.next = false;
        }
    }
}

impl ClockedBlock for OutcomeSender {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
