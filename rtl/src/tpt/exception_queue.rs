//! `TptExceptionQueue`: the TPT's queue of lookups for STags this NIC does not know, each
//! shown to the driver in `EXC_HEAD0..2` and answered through `EXC_ANSWER` or refused
//! after `EXC_TIMEOUT` clocks. A child of [`Tpt`](super::Tpt).
//!
//! Follows source 003 (an STag not in this NIC's table is punted to the driver, which
//! answers with the memory location or refuses it). Contract: `docs/nic-blocks.md` (TPT
//! lookup, "`Tpt`: choices where the contract is silent"); registers `docs/csr-map.md`
//! (`EXC_HEAD0..2`, `EXC_ANSWER`, `EXC_TIMEOUT`).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: drops the head without an answer, the
//!   tag and the stale count return to 0, `EXC_TIMEOUT` to `timeout_reset`).
//! - CSR side port (watched; the [`TptTable`](super::TptTable) decides `s_csr_ready`, an
//!   input here): `s_csr_valid`, `s_csr_ready`, `s_csr_write`, `s_csr_reg` (6: 32
//!   `EXC_HEAD0`, 33 `EXC_HEAD1`, 34 `EXC_HEAD2`, 35 `EXC_ANSWER`, 36 `EXC_TIMEOUT`),
//!   `s_csr_wdata` (64). `m_csr_rdata` (64, combinational): the addressed register's word,
//!   0 for any other register and for `EXC_HEAD*` while no head is valid (the table
//!   registers it). `stat_stale` (8): answers ignored, wrapping.
//! - `s_miss`: queue the request in flight as the head (the checks' miss, one clock);
//!   `s_head` (a [`TptRequest`]): that request, held by the
//!   [`TptChecks`](super::TptChecks) while `m_exc_valid` keeps further lookups out (so the
//!   head needs no copy of its own).
//! - `m_exc_valid`: a head is waiting.
//! - `m_answer_valid`, `m_answer_ok`, `m_answer_paddr` (32) (combinational): the head is
//!   answered (`EXC_ANSWER` written with the head's tag: `ok` = bit 0, `paddr` = bits
//!   63:32) or refused by the timeout (`ok` 0) in this clock.
//!
//! Behaviour: one entry deep. `EXC_HEAD0` is bit 0 valid, 7:2 qp, 10:8 access, 12 the
//! request's invalidate flag (0 for a check-only request), 13 check only (`commit` 0),
//! 23:16 the head's tag, 63:32 STag; `EXC_HEAD1` vaddr; `EXC_HEAD2` length. A write to
//! `EXC_ANSWER` whose bits 23:16 equal the valid head's tag answers and pops it; any other
//! write to it is ignored and counted in `stat_stale`. The tag starts at 0 and advances
//! (mod 256) whenever a head is answered or times out. The head is visible from the clock
//! after `s_miss`, with a countdown loaded from `EXC_TIMEOUT` (bits 31:0), and is refused
//! in the clock the countdown is at 0; an answer accepted in that clock wins.
//!
//! Latency: the answer leaves in the clock the `EXC_ANSWER` write is accepted (the checks
//! register it); a head can be queued in the clock after it is popped.
//!
//! Limits: `timeout_reset` must fit `EXC_TIMEOUT`'s 32 bits.

use crate::common::TptRequest;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// `EXC_TIMEOUT` after reset.
pub const TPT_EXC_TIMEOUT_RESET: u64 = nic_abi::csr::EXC_TIMEOUT_RESET;

#[derive(LogicBlock)]
pub struct TptExceptionQueue {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // CSR side port (watched).
    pub s_csr_valid: Signal<In, Bit>,
    pub s_csr_ready: Signal<In, Bit>,
    pub s_csr_write: Signal<In, Bit>,
    pub s_csr_reg: Signal<In, Bits<6>>,
    pub s_csr_wdata: Signal<In, Bits<64>>,
    pub m_csr_rdata: Signal<Out, Bits<64>>,
    pub stat_stale: Signal<Out, Bits<8>>,
    // The missed request.
    pub s_miss: Signal<In, Bit>,
    pub s_head: Signal<In, TptRequest>,
    pub m_exc_valid: Signal<Out, Bit>,
    pub m_answer_valid: Signal<Out, Bit>,
    pub m_answer_ok: Signal<Out, Bit>,
    pub m_answer_paddr: Signal<Out, Bits<32>>,
    exc_timeout: DFF<Bits<32>>,
    exc_valid: DFF<Bit>,
    exc_timer: DFF<Bits<32>>,
    /// The head's tag: advances when a head is answered or times out.
    exc_tag: DFF<Bits<8>>,
    /// Answers ignored (no head, or not the head's tag), wrapping.
    stale: DFF<Bits<8>>,
    // Combinational intermediates.
    csr_wr: Signal<Local, Bit>,
    answer_write: Signal<Local, Bit>,
    answer: Signal<Local, Bit>,
    head0: Signal<Local, Bits<64>>,
    head_invalidate: Signal<Local, Bit>,
    head_check_only: Signal<Local, Bit>,
    head_hidden: Signal<Local, Bit>,
    exc_timeout_reset: Constant<Bits<32>>,
}

impl TptExceptionQueue {
    /// An exception queue whose `EXC_TIMEOUT` is `timeout_reset` after reset.
    ///
    /// Panics when `timeout_reset` does not fit 32 bits.
    pub fn new(timeout_reset: u64) -> Self {
        assert!(
            timeout_reset <= u32::MAX as u64,
            "TptExceptionQueue: timeout_reset must fit EXC_TIMEOUT's 32 bits, got {timeout_reset}"
        );
        TptExceptionQueue {
            clock: Default::default(),
            reset: Default::default(),
            s_csr_valid: Default::default(),
            s_csr_ready: Default::default(),
            s_csr_write: Default::default(),
            s_csr_reg: Default::default(),
            s_csr_wdata: Default::default(),
            m_csr_rdata: Default::default(),
            stat_stale: Default::default(),
            s_miss: Default::default(),
            s_head: Default::default(),
            m_exc_valid: Default::default(),
            m_answer_valid: Default::default(),
            m_answer_ok: Default::default(),
            m_answer_paddr: Default::default(),
            exc_timeout: Default::default(),
            exc_valid: Default::default(),
            exc_timer: Default::default(),
            exc_tag: Default::default(),
            stale: Default::default(),
            csr_wr: Default::default(),
            answer_write: Default::default(),
            answer: Default::default(),
            head0: Default::default(),
            head_invalidate: Default::default(),
            head_check_only: Default::default(),
            head_hidden: Default::default(),
            exc_timeout_reset: Constant::new(timeout_reset.to_bits()),
        }
    }
}

impl Default for TptExceptionQueue {
    fn default() -> Self {
        Self::new(TPT_EXC_TIMEOUT_RESET)
    }
}

impl Logic for TptExceptionQueue {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            exc_timeout,
            exc_valid,
            exc_timer,
            exc_tag,
            stale
        );
        self.csr_wr.next = self.s_csr_valid.val() & self.s_csr_ready.val() & self.s_csr_write.val();
        if self.csr_wr.val() & (self.s_csr_reg.val() == 36) {
            self.exc_timeout.d.next = self.s_csr_wdata.val().get_bits::<32>(0);
        }
        self.answer_write.next = self.csr_wr.val() & (self.s_csr_reg.val() == 35);
        self.answer.next = self.answer_write.val()
            & self.exc_valid.q.val()
            & (self.s_csr_wdata.val().get_bits::<8>(16) == self.exc_tag.q.val());
        if self.answer_write.val() & !self.answer.val() {
            self.stale.d.next = self.stale.q.val() + 1;
        }
        // The head: answered, timed out, or still waiting.
        self.m_answer_valid.next = false;
        self.m_answer_ok.next = false;
        if self.exc_valid.q.val() {
            if self.answer.val() {
                self.exc_valid.d.next = false;
                self.exc_tag.d.next = self.exc_tag.q.val() + 1;
                self.m_answer_valid.next = true;
                self.m_answer_ok.next = self.s_csr_wdata.val().get_bit(0);
            } else if self.exc_timer.q.val() == 0 {
                self.exc_valid.d.next = false;
                self.exc_tag.d.next = self.exc_tag.q.val() + 1;
                self.m_answer_valid.next = true;
            } else {
                self.exc_timer.d.next = self.exc_timer.q.val() - 1;
            }
        }
        self.m_answer_paddr.next = self.s_csr_wdata.val().get_bits::<32>(32);
        if self.s_miss.val() {
            self.exc_valid.d.next = true;
            self.exc_timer.d.next = self.exc_timeout.q.val();
        }
        if self.reset.val() {
            self.exc_timeout.d.next = self.exc_timeout_reset.val();
            self.exc_valid.d.next = false;
            self.exc_tag.d.next = 0.into();
            self.stale.d.next = 0.into();
        }
        // Read data. The head registers read as zero while no head is valid.
        // (1-bit flags through their own signals: an inverted bit widened in the Verilog
        // expression would set every upper bit.)
        self.head_invalidate.next = self.s_head.val().invalidate & self.s_head.val().commit;
        self.head_check_only.next = !self.s_head.val().commit;
        self.head0.next = bits::<64>(1)
            | (bit_cast::<64, 6>(self.s_head.val().qp) << 2)
            | (bit_cast::<64, 3>(self.s_head.val().access) << 8)
            | (bit_cast::<64, 1>(self.head_invalidate.val().into()) << 12)
            | (bit_cast::<64, 1>(self.head_check_only.val().into()) << 13)
            | (bit_cast::<64, 8>(self.exc_tag.q.val()) << 16)
            | (bit_cast::<64, 32>(self.s_head.val().stag) << 32);
        self.head_hidden.next = !self.exc_valid.q.val()
            & ((self.s_csr_reg.val() == 32)
                | (self.s_csr_reg.val() == 33)
                | (self.s_csr_reg.val() == 34));
        match self.s_csr_reg.val().index() {
            32 => {
                self.m_csr_rdata.next = self.head0.val();
            }
            33 => {
                self.m_csr_rdata.next = self.s_head.val().vaddr;
            }
            34 => {
                self.m_csr_rdata.next = bit_cast::<64, 32>(self.s_head.val().length);
            }
            36 => {
                self.m_csr_rdata.next = bit_cast::<64, 32>(self.exc_timeout.q.val());
            }
            _ => {
                self.m_csr_rdata.next = 0.into();
            }
        }
        if self.head_hidden.val() {
            self.m_csr_rdata.next = 0.into();
        }
        self.stat_stale.next = self.stale.q.val();
        self.m_exc_valid.next = self.exc_valid.q.val();
    }
}

impl ClockedBlock for TptExceptionQueue {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
