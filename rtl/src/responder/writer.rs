//! `Writer`: the responder's host-memory write path, a child of
//! [`crate::ReceiveQueueEngine`]. It places a message's payload beats in its window of host
//! memory (a receive buffer, an RDMA WRITE target, the buffer of a READ or atomic
//! response), collects an atomic's two operands and writes the atomic's result.
//!
//! Follows `docs/nic-architecture.md` ("Reliability": only bytes inside the window are
//! written) and the DMA write port of `docs/nic-blocks.md` (`m_wr_*`, one 64-bit word with
//! byte strobes per beat); the atomics after InfiniBand's CompareSwap / FetchAdd.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: drops a write not yet taken; the next beat
//!   starts an outcome).
//! - The window: `base` (32, the host address of message offset 0), `limit` (32: no byte at
//!   or beyond this message offset is written).
//! - Beats (the reassembler's outcome, taken when `s_take` is high): `s_data` (64),
//!   `s_bytes` (4: valid bytes of the beat, 1..=8), `s_offset` (32: message offset of the
//!   outcome's first beat; later beats follow 8 bytes apart), `s_last` (the outcome's last
//!   beat), `s_empty` (the outcome writes nothing: an empty cell or a failed one),
//!   `s_write` (the beat is written), `s_collect` (the beat carries an atomic's operands:
//!   offset 0 the compare or add value, offset 8 the swap value). `beat_ready`: a written
//!   beat can be taken this clock (the output register is empty or being emptied).
//! - Atomic result: `atomic_cas` (the atomic is a CompareSwap, else a FetchAdd),
//!   `atomic_old` (64, the word read at `base`), `atomic_write` (write the result now): a
//!   FetchAdd writes `old + add`, a CompareSwap writes the swap value when `old` equals the
//!   compare value and nothing otherwise; a whole word at `base`.
//! - DMA write client `m_wr_valid`, `m_wr_ready`, `m_wr_addr` (32), `m_wr_data` (64),
//!   `m_wr_strobe` (8), all registered; `busy` = `m_wr_valid`.
//!
//! A beat at message offset `o` writes address `base + o` with the strobes of its valid
//! bytes that lie below `limit` (none for an empty outcome); a beat with no such byte is
//! not sent. Addresses wrap at 2^32.
//! Latency: a beat taken at clock t is on `m_wr_*` at t+1; the atomic's word likewise.
//! Throughput: one beat per clock while `m_wr_ready` is high.
//! Limits: the caller asks `atomic_write` only while nothing waits on `m_wr` (`busy` low)
//! and never in the clock of a written beat.

use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct Writer {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub base: Signal<In, Bits<32>>,
    pub limit: Signal<In, Bits<32>>,
    pub s_take: Signal<In, Bit>,
    pub s_data: Signal<In, Bits<64>>,
    pub s_bytes: Signal<In, Bits<4>>,
    pub s_offset: Signal<In, Bits<32>>,
    pub s_last: Signal<In, Bit>,
    pub s_empty: Signal<In, Bit>,
    pub s_write: Signal<In, Bit>,
    pub s_collect: Signal<In, Bit>,
    pub beat_ready: Signal<Out, Bit>,
    pub atomic_cas: Signal<In, Bit>,
    pub atomic_old: Signal<In, Bits<64>>,
    pub atomic_write: Signal<In, Bit>,
    pub m_wr_valid: Signal<Out, Bit>,
    pub m_wr_ready: Signal<In, Bit>,
    pub m_wr_addr: Signal<Out, Bits<32>>,
    pub m_wr_data: Signal<Out, Bits<64>>,
    pub m_wr_strobe: Signal<Out, Bits<8>>,
    pub busy: Signal<Out, Bit>,
    /// The next beat continues an outcome (0: it is an outcome's first, at `s_offset`).
    mid_outcome: DFF<Bit>,
    /// Message offset of the next beat of the current outcome.
    off_next: DFF<Bits<32>>,
    /// The atomic's operands: compare or add value, swap value.
    operand_a: DFF<Bits<64>>,
    operand_b: DFF<Bits<64>>,
    // ---- DMA write output register ----
    wr_valid: DFF<Bit>,
    wr_addr: DFF<Bits<32>>,
    wr_data: DFF<Bits<64>>,
    wr_strobe: DFF<Bits<8>>,
    // ---- Combinational intermediates ----
    beat_off: Signal<Local, Bits<32>>,
    limit_less_8: Signal<Local, Bits<33>>,
    room_any: Signal<Local, Bit>,
    room_full: Signal<Local, Bit>,
    room_low: Signal<Local, Bits<3>>,
    room_mask: Signal<Local, Bits<8>>,
    byte_mask: Signal<Local, Bits<8>>,
    strobe: Signal<Local, Bits<8>>,
    atomic_sum: Signal<Local, Bits<64>>,
    atomic_new: Signal<Local, Bits<64>>,
    atomic_writes: Signal<Local, Bit>,
}

impl Writer {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for Writer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            mid_outcome,
            off_next,
            operand_a,
            operand_b,
            wr_valid,
            wr_addr,
            wr_data,
            wr_strobe
        );
        self.beat_ready.next = !self.wr_valid.q.val() | self.m_wr_ready.val();
        self.beat_off.next = self.s_offset.val();
        if self.mid_outcome.q.val() {
            self.beat_off.next = self.off_next.q.val();
        }
        // The bytes of this beat that lie below the limit, as a mask: none at or past the
        // limit, all 8 at least 8 bytes before it, else the low `limit - offset` bytes.
        // Two comparisons side by side and a 3-bit difference (no 32-bit subtraction ahead
        // of the mask: it lay on the payload path): `room_any` is `limit > offset`,
        // `room_full` is `limit - offset >= 8`, and below 8 the room is its low 3 bits.
        self.limit_less_8.next = bit_cast::<33, 32>(self.limit.val()) - 8;
        self.room_any.next = self.limit.val() > self.beat_off.val();
        self.room_full.next = !self.limit_less_8.val().get_bit(32)
            & (self.limit_less_8.val().get_bits::<32>(0) >= self.beat_off.val());
        self.room_low.next =
            self.limit.val().get_bits::<3>(0) - self.beat_off.val().get_bits::<3>(0);
        self.room_mask.next = 0.into();
        if self.room_any.val() {
            self.room_mask.next = bits::<8>(0xFF);
            if !self.room_full.val() {
                self.room_mask.next = !(bits::<8>(0xFF) << self.room_low.val());
            }
        }
        // The beat's valid bytes (1..8).
        self.byte_mask.next = bits::<8>(0xFF);
        if !self.s_bytes.val().get_bit(3) {
            self.byte_mask.next = !(bits::<8>(0xFF) << self.s_bytes.val().get_bits::<3>(0));
        }
        self.strobe.next = self.room_mask.val() & self.byte_mask.val();
        if self.s_empty.val() {
            self.strobe.next = 0.into();
        }
        // Atomic: CAS writes the swap value when the word equals the compare value; FAA
        // writes the sum.
        self.atomic_sum.next = self.atomic_old.val() + self.operand_a.q.val();
        self.atomic_new.next = self.atomic_sum.val();
        if self.atomic_cas.val() {
            self.atomic_new.next = self.operand_b.q.val();
        }
        self.atomic_writes.next =
            !self.atomic_cas.val() | (self.atomic_old.val() == self.operand_a.q.val());

        self.wr_valid.d.next = self.wr_valid.q.val() & !self.m_wr_ready.val();
        if self.atomic_write.val() & self.atomic_writes.val() {
            self.wr_valid.d.next = true;
            self.wr_addr.d.next = self.base.val();
            self.wr_data.d.next = self.atomic_new.val();
            self.wr_strobe.d.next = 0xFF.into();
        }
        if self.s_take.val() {
            self.mid_outcome.d.next = !self.s_last.val();
            self.off_next.d.next = self.beat_off.val() + 8;
            if self.s_write.val() {
                // Some strobe is set: the beat has a byte (`s_bytes` >= 1) and the limit
                // is past its offset (the mask's lowest bit), decided beside the mask.
                self.wr_valid.d.next =
                    !self.s_empty.val() & self.room_any.val() & (self.s_bytes.val() != 0);
                self.wr_addr.d.next = self.base.val() + self.beat_off.val();
                self.wr_data.d.next = self.s_data.val();
                self.wr_strobe.d.next = self.strobe.val();
            }
            if self.s_collect.val() {
                if self.beat_off.val() == 0 {
                    self.operand_a.d.next = self.s_data.val();
                }
                if self.beat_off.val() == 8 {
                    self.operand_b.d.next = self.s_data.val();
                }
            }
        }
        if self.reset.val() {
            self.wr_valid.d.next = false;
            self.mid_outcome.d.next = false;
        }
        self.m_wr_valid.next = self.wr_valid.q.val();
        self.m_wr_addr.next = self.wr_addr.q.val();
        self.m_wr_data.next = self.wr_data.q.val();
        self.m_wr_strobe.next = self.wr_strobe.q.val();
        self.busy.next = self.wr_valid.q.val();
    }
}

impl ClockedBlock for Writer {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
