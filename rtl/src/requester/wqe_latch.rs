//! `WqeLatch`: the `TransmitMachine`'s send-stage copy of a fetched send WQE and its
//! class: the [`WqeFetch`](crate::requester::WqeFetch)'s fields, copied on `s_load` so the
//! fetch may read the next WQE, with what the send stage decides by (a read, an atomic,
//! an immediate, local only, the completion status of a bad WQE, the message length, the
//! payload's words and whether it is read early or is longer than the payload buffer).
//!
//! Follows the WQE checks of `docs/nic-architecture.md` ("Host memory structures": a bad
//! WQE completes locally with BAD_OPCODE, LOCAL_LENGTH_ERROR or LOCAL_ADDRESS_ERROR,
//! checked in that order; NOP, BIND RKEY and DELAY complete locally) and "Message rate of
//! short messages" in `docs/nic-blocks.md` (a payload that fits the buffer is read early).
//!
//! Ports:
//! - `clock` (no reset: the copy is only read after a load).
//! - `s_load`: copy the fields this clock.
//! - `s_wqe`: the WQE's fields as `WqeFetch` presents them (a [`SendWqe`]).
//! - `m_wqe`: the copy (registered).
//! - Its class (registered, decoded from the fields as they are loaded): `m_op_read`
//!   (RDMA READ), `m_op_atomic` (compare-swap, fetch-add), `m_op_imm` (SEND or WRITE with
//!   immediate), `m_status` (8: 0, or the completion status of a bad WQE), `m_local_only`
//!   (completes without a message: bad, NOP, BIND RKEY, DELAY), `m_need_empty` (committed
//!   only with nothing outstanding: local only, READ, atomic), `m_delay_ok` (a good DELAY),
//!   `m_msg_length` (32: the message's payload bytes: 0 for a READ, 16 for an atomic, else
//!   the WQE's length), `m_len_round` (16: `ceil(length / 8)`, the payload's words),
//!   `m_pl_early` (a payload read from host memory that fits `buffer_depth` words: read
//!   before the grant), `m_pl_long` (one that does not fit: read after it).
//! - `s_inline_beat` (3), `m_inline_word` (64, combinational from the copy): word
//!   `s_inline_beat` of an inline payload, i.e. the WQE's word 3, 5, 6 or 7
//!   (`INLINE_WORDS`; word 7 for beats 3 and above).
//!
//! Latency: the copy and its class the clock after `s_load`; held until the next load.
//! Throughput: a load every clock.
//! Limits: `buffer_depth` in 1..=4096 words. The length checks are the requester's
//! (`MAX_MESSAGE_LENGTH`, `INLINE_MAX_BYTES`, 8 for an atomic, a DELAY's count within
//! `DELAY_CYCLES_MASK`); a BIND's length is the bound range's and is not checked.

use crate::common::SendWqe;
use crate::sim::ClockedBlock;
use nic_abi::{
    CompletionStatus, WqeOpcode, BIND_OPCODE, DELAY_CYCLES_MASK, DELAY_OPCODE, INLINE_MAX_BYTES,
    MAX_MESSAGE_LENGTH, NOP_OPCODE,
};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct WqeLatch {
    pub clock: Signal<In, Clock>,
    pub s_load: Signal<In, Bit>,
    pub s_wqe: Signal<In, SendWqe>,
    pub m_wqe: Signal<Out, SendWqe>,
    pub m_op_read: Signal<Out, Bit>,
    pub m_op_atomic: Signal<Out, Bit>,
    pub m_op_imm: Signal<Out, Bit>,
    pub m_status: Signal<Out, Bits<8>>,
    pub m_local_only: Signal<Out, Bit>,
    pub m_need_empty: Signal<Out, Bit>,
    pub m_delay_ok: Signal<Out, Bit>,
    pub m_msg_length: Signal<Out, Bits<32>>,
    pub m_len_round: Signal<Out, Bits<16>>,
    pub m_pl_early: Signal<Out, Bit>,
    pub m_pl_long: Signal<Out, Bit>,
    pub s_inline_beat: Signal<In, Bits<3>>,
    pub m_inline_word: Signal<Out, Bits<64>>,
    /// The copy.
    wqe: DFF<SendWqe>,
    op_read_reg: DFF<Bit>,
    op_atomic_reg: DFF<Bit>,
    op_imm_reg: DFF<Bit>,
    status: DFF<Bits<8>>,
    local_only: DFF<Bit>,
    need_empty_reg: DFF<Bit>,
    delay_ok: DFF<Bit>,
    msg_length_reg: DFF<Bits<32>>,
    len_round_reg: DFF<Bits<16>>,
    pl_early_reg: DFF<Bit>,
    pl_long_reg: DFF<Bit>,
    // The input fields the class is decoded from (a bundle's field cannot be sliced in the
    // Verilog).
    in_opcode: Signal<Local, Bits<8>>,
    in_inline: Signal<Local, Bit>,
    in_length: Signal<Local, Bits<32>>,
    /// The low bits of the local address (its alignment).
    in_local_low: Signal<Local, Bits<3>>,
    in_vaddr: Signal<Local, Bits<64>>,
    // Combinational: the class of the fields at the inputs.
    op_known: Signal<Local, Bit>,
    op_read: Signal<Local, Bit>,
    op_atomic: Signal<Local, Bit>,
    op_rdma: Signal<Local, Bit>,
    op_imm: Signal<Local, Bit>,
    op_send: Signal<Local, Bit>,
    op_nop: Signal<Local, Bit>,
    /// Local operations besides the NOP: BIND RKEY and DELAY.
    op_bind: Signal<Local, Bit>,
    op_delay: Signal<Local, Bit>,
    /// A DELAY's cycle count fits `DELAY_CYCLES_BITS` (word 3's other bits are zero).
    delay_fits: Signal<Local, Bit>,
    len_ok: Signal<Local, Bit>,
    addr_ok: Signal<Local, Bit>,
    wqe_status: Signal<Local, Bits<8>>,
    wqe_bad: Signal<Local, Bit>,
    wqe_local_only: Signal<Local, Bit>,
    /// A message whose payload is read from host memory.
    pl_read: Signal<Local, Bit>,
    len_round: Signal<Local, Bits<16>>,
    buffer_depth: Constant<Bits<16>>,
    max_length: Constant<Bits<32>>,
    inline_max: Constant<Bits<32>>,
    opc_send: Constant<Bits<8>>,
    opc_send_imm: Constant<Bits<8>>,
    opc_write: Constant<Bits<8>>,
    opc_write_imm: Constant<Bits<8>>,
    opc_read: Constant<Bits<8>>,
    opc_cas: Constant<Bits<8>>,
    opc_faa: Constant<Bits<8>>,
    opc_nop: Constant<Bits<8>>,
    opc_bind: Constant<Bits<8>>,
    opc_delay: Constant<Bits<8>>,
    /// Word 3 bits a DELAY must leave zero (above `DELAY_CYCLES_BITS`).
    delay_high: Constant<Bits<64>>,
    st_length: Constant<Bits<8>>,
    st_address: Constant<Bits<8>>,
    st_opcode: Constant<Bits<8>>,
}

/// `Bits<N>` constant from a `u64`.
fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.to_bits())
}

impl WqeLatch {
    /// The latch of a send stage whose payload buffer holds `buffer_depth` words
    /// (1..=4096).
    pub fn new(buffer_depth: usize) -> Self {
        assert!(
            (1..=4096).contains(&buffer_depth),
            "WqeLatch: buffer_depth must be 1..=4096 words, got {buffer_depth}"
        );
        WqeLatch {
            clock: Default::default(),
            s_load: Default::default(),
            s_wqe: Default::default(),
            m_wqe: Default::default(),
            m_op_read: Default::default(),
            m_op_atomic: Default::default(),
            m_op_imm: Default::default(),
            m_status: Default::default(),
            m_local_only: Default::default(),
            m_need_empty: Default::default(),
            m_delay_ok: Default::default(),
            m_msg_length: Default::default(),
            m_len_round: Default::default(),
            m_pl_early: Default::default(),
            m_pl_long: Default::default(),
            s_inline_beat: Default::default(),
            m_inline_word: Default::default(),
            wqe: Default::default(),
            in_opcode: Default::default(),
            in_inline: Default::default(),
            in_length: Default::default(),
            in_local_low: Default::default(),
            in_vaddr: Default::default(),
            op_read_reg: Default::default(),
            op_atomic_reg: Default::default(),
            op_imm_reg: Default::default(),
            status: Default::default(),
            local_only: Default::default(),
            need_empty_reg: Default::default(),
            delay_ok: Default::default(),
            msg_length_reg: Default::default(),
            len_round_reg: Default::default(),
            pl_early_reg: Default::default(),
            pl_long_reg: Default::default(),
            op_known: Default::default(),
            op_read: Default::default(),
            op_atomic: Default::default(),
            op_rdma: Default::default(),
            op_imm: Default::default(),
            op_send: Default::default(),
            op_nop: Default::default(),
            op_bind: Default::default(),
            op_delay: Default::default(),
            delay_fits: Default::default(),
            len_ok: Default::default(),
            addr_ok: Default::default(),
            wqe_status: Default::default(),
            wqe_bad: Default::default(),
            wqe_local_only: Default::default(),
            pl_read: Default::default(),
            len_round: Default::default(),
            buffer_depth: k(buffer_depth as u64),
            max_length: k(MAX_MESSAGE_LENGTH as u64),
            inline_max: k(INLINE_MAX_BYTES as u64),
            opc_send: k(WqeOpcode::Send as u64),
            opc_send_imm: k(WqeOpcode::SendImmediate as u64),
            opc_write: k(WqeOpcode::RdmaWrite as u64),
            opc_write_imm: k(WqeOpcode::RdmaWriteImmediate as u64),
            opc_read: k(WqeOpcode::RdmaRead as u64),
            opc_cas: k(WqeOpcode::AtomicCompareSwap as u64),
            opc_faa: k(WqeOpcode::AtomicFetchAdd as u64),
            opc_nop: k(NOP_OPCODE as u64),
            opc_bind: k(BIND_OPCODE as u64),
            opc_delay: k(DELAY_OPCODE as u64),
            delay_high: k(!DELAY_CYCLES_MASK),
            st_length: k(CompletionStatus::LOCAL_LENGTH_ERROR as u64),
            st_address: k(CompletionStatus::LOCAL_ADDRESS_ERROR as u64),
            st_opcode: k(CompletionStatus::BAD_OPCODE as u64),
        }
    }
}

impl ClockedBlock for WqeLatch {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

impl Logic for WqeLatch {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            wqe,
            op_read_reg,
            op_atomic_reg,
            op_imm_reg,
            status,
            local_only,
            need_empty_reg,
            delay_ok,
            msg_length_reg,
            len_round_reg,
            pl_early_reg,
            pl_long_reg
        );
        self.in_opcode.next = self.s_wqe.val().opcode;
        self.in_inline.next = self.s_wqe.val().inline_payload;
        self.in_length.next = self.s_wqe.val().length;
        self.in_local_low.next = bit_cast::<3, 32>(self.s_wqe.val().local_addr);
        self.in_vaddr.next = self.s_wqe.val().vaddr;
        self.op_read.next = self.in_opcode.val() == self.opc_read.val();
        self.op_atomic.next = (self.in_opcode.val() == self.opc_cas.val())
            | (self.in_opcode.val() == self.opc_faa.val());
        self.op_imm.next = (self.in_opcode.val() == self.opc_send_imm.val())
            | (self.in_opcode.val() == self.opc_write_imm.val());
        self.op_send.next = (self.in_opcode.val() == self.opc_send.val())
            | (self.in_opcode.val() == self.opc_send_imm.val());
        self.op_nop.next = self.in_opcode.val() == self.opc_nop.val();
        self.op_bind.next = self.in_opcode.val() == self.opc_bind.val();
        self.op_delay.next = self.in_opcode.val() == self.opc_delay.val();
        self.delay_fits.next = (self.in_vaddr.val() & self.delay_high.val()) == 0;
        // Inline payloads come with SENDs only (the other opcodes use the words).
        self.op_known.next = ((self.in_opcode.val() == self.opc_send.val())
            | (self.in_opcode.val() == self.opc_write.val())
            | self.op_read.val()
            | self.op_atomic.val()
            | self.op_imm.val()
            | self.op_nop.val()
            | self.op_bind.val()
            | self.op_delay.val())
            & (!self.in_inline.val() | self.op_send.val());
        self.op_rdma.next = self.in_opcode.val().get_bits::<4>(4) == 1;
        // A BIND's length is the bound range's (any 32-bit value), not a message's.
        self.len_ok.next = ((self.in_length.val() <= self.max_length.val()) | self.op_bind.val())
            & (!self.op_delay.val() | self.delay_fits.val())
            & (!self.op_atomic.val() | (self.in_length.val() == 8))
            & (!self.in_inline.val() | (self.in_length.val() <= self.inline_max.val()));
        self.addr_ok.next = ((self.in_local_low.val() == 0) | self.in_inline.val())
            & (!self.op_rdma.val() | (self.in_vaddr.val().get_bits::<3>(0) == 0));
        // Checked in this order: opcode, length, alignment (the first failure is reported).
        self.wqe_status.next = 0.into();
        if !self.addr_ok.val() {
            self.wqe_status.next = self.st_address.val();
        }
        if !self.len_ok.val() {
            self.wqe_status.next = self.st_length.val();
        }
        if !self.op_known.val() {
            self.wqe_status.next = self.st_opcode.val();
        }
        self.wqe_bad.next = !self.op_known.val() | !self.len_ok.val() | !self.addr_ok.val();
        self.wqe_local_only.next =
            self.wqe_bad.val() | self.op_nop.val() | self.op_bind.val() | self.op_delay.val();
        self.len_round.next = bit_cast::<16, 32>((self.in_length.val() + 7) >> 3);
        // A payload read that fits the buffer completes without the segmenter, so it may
        // start before the message's grant ("Deadlock freedom").
        self.pl_read.next = !self.wqe_local_only.val()
            & !self.op_read.val()
            & !self.op_atomic.val()
            & !self.in_inline.val();
        if self.s_load.val() {
            self.wqe.d.next = self.s_wqe.val();
            self.op_read_reg.d.next = self.op_read.val();
            self.op_atomic_reg.d.next = self.op_atomic.val();
            self.op_imm_reg.d.next = self.op_imm.val();
            self.status.d.next = self.wqe_status.val();
            self.local_only.d.next = self.wqe_local_only.val();
            self.need_empty_reg.d.next =
                self.wqe_local_only.val() | self.op_read.val() | self.op_atomic.val();
            self.delay_ok.d.next = self.op_delay.val() & !self.wqe_bad.val();
            self.msg_length_reg.d.next = self.in_length.val();
            if self.op_read.val() {
                self.msg_length_reg.d.next = 0.into();
            }
            if self.op_atomic.val() {
                self.msg_length_reg.d.next = 16.into();
            }
            self.len_round_reg.d.next = self.len_round.val();
            self.pl_early_reg.d.next = self.pl_read.val()
                & (self.in_length.val() != 0)
                & (self.len_round.val() <= self.buffer_depth.val());
            self.pl_long_reg.d.next =
                self.pl_read.val() & (self.len_round.val() > self.buffer_depth.val());
        }
        self.m_wqe.next = self.wqe.q.val();
        self.m_op_read.next = self.op_read_reg.q.val();
        self.m_op_atomic.next = self.op_atomic_reg.q.val();
        self.m_op_imm.next = self.op_imm_reg.q.val();
        self.m_status.next = self.status.q.val();
        self.m_local_only.next = self.local_only.q.val();
        self.m_need_empty.next = self.need_empty_reg.q.val();
        self.m_delay_ok.next = self.delay_ok.q.val();
        self.m_msg_length.next = self.msg_length_reg.q.val();
        self.m_len_round.next = self.len_round_reg.q.val();
        self.m_pl_early.next = self.pl_early_reg.q.val();
        self.m_pl_long.next = self.pl_long_reg.q.val();
        self.m_inline_word.next = self.wqe.q.val().word7;
        if self.s_inline_beat.val() == 0 {
            self.m_inline_word.next = self.wqe.q.val().vaddr;
        }
        if self.s_inline_beat.val() == 1 {
            self.m_inline_word.next = self.wqe.q.val().compare;
        }
        if self.s_inline_beat.val() == 2 {
            self.m_inline_word.next = self.wqe.q.val().swap;
        }
    }
}
