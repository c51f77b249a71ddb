//! `BindWriter`: executes a BIND RKEY in the NIC's hardware TPT in send-queue order
//! (source 001: the bind is a WQE, so it is ordered with the RDMA operations that use the
//! key). It sits on the local-completion handshake between the [`TransmitMachine`] and
//! the [`AckMachine`]: a good BIND's completion is handed on only once the `Tpt` has
//! accepted its bind write, so the BIND does not complete, and no later WQE of its queue
//! pair is transmitted (the queue pair sends nothing until its local completion has been
//! handed over), before the entry is in the table. Every other local completion (NOP,
//! DELAY, a bad WQE, a BIND that completes with an error status) passes through unchanged.
//!
//! [`TransmitMachine`]: crate::requester::TransmitMachine
//! [`AckMachine`]: crate::requester::AckMachine
//!
//! Follows `docs/nic-architecture.md` ("Bind RKey and Delay (source 001)") and the TPT
//! bind write port of `docs/nic-blocks.md`; the BIND's fields are named in
//! `abi/src/queue_entries.rs` (`BIND_*_WORD`, `BIND_RIGHTS_SHIFT`).
//!
//! Ports (valid/ready; a source holds its fields while valid and not ready):
//! - `clock`, `reset` (synchronous, active high: forgets a write already accepted).
//! - Local completion in (from the transmit machine): `s_local_valid` / `s_local_ready`,
//!   `s_local_qp` (6), `s_local_psn` (24), `s_local_status` (8), and `s_local_wqe` (a
//!   [`SendWqe`]: the send stage's copy of the WQE, held with the completion).
//! - Local completion out (to the acknowledgement machine): `m_local_valid` /
//!   `m_local_ready`, `m_local_qp`, `m_local_psn`, `m_local_status` (the input's).
//! - TPT bind write: `m_bind_valid` / `m_bind_ready`, `m_bind` (a [`TptBindWrite`]:
//!   `index` = STag bits 31:8 and `key` = bits 7:0 from WQE word 4 bits 31:0, `rights` =
//!   word 4 bits 34:32, `vaddr` = word 3, `length` = word 0 bits 63:32, `paddr` = word 2
//!   bits 31:0, `valid` 0 for an unbind: virtual base 0 and length 0). Offered for a
//!   BIND whose status is 0 (success), once per completion. Without a TPT the NIC ties
//!   `m_bind_ready` high: every completion then passes in the clock it is offered, as if
//!   this block were not there.
//!
//! Latency: a completion that is not a good BIND, or a good BIND whose write is accepted
//! in the clock it is offered, passes combinationally (0 clocks); a BIND whose write waits
//! is handed on from the clock after the write's acceptance. The TPT accepts a bind write
//! in the clock it is offered unless an earlier one is still waiting for its sequencer
//! (which applies it within three clocks), so a BIND with a TPT adds no clock in practice.
//! Throughput: one completion per clock. Nothing on `m_bind_*` or `m_local_*` is
//! registered except the one flag that a write was accepted for the completion waiting.
//! Limits: one completion at a time (the transmit machine's send stage offers one).

use crate::common::{SendWqe, TptBindWrite};
use crate::sim::ClockedBlock;
use nic_abi::BIND_OPCODE;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct BindWriter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Local completion in.
    pub s_local_valid: Signal<In, Bit>,
    pub s_local_ready: Signal<Out, Bit>,
    pub s_local_qp: Signal<In, Bits<6>>,
    pub s_local_psn: Signal<In, Bits<24>>,
    pub s_local_status: Signal<In, Bits<8>>,
    pub s_local_wqe: Signal<In, SendWqe>,
    // Local completion out.
    pub m_local_valid: Signal<Out, Bit>,
    pub m_local_ready: Signal<In, Bit>,
    pub m_local_qp: Signal<Out, Bits<6>>,
    pub m_local_psn: Signal<Out, Bits<24>>,
    pub m_local_status: Signal<Out, Bits<8>>,
    // TPT bind write.
    pub m_bind_valid: Signal<Out, Bit>,
    pub m_bind_ready: Signal<In, Bit>,
    pub m_bind: Signal<Out, TptBindWrite>,
    /// The bind write of the completion waiting has been accepted.
    written: DFF<Bit>,
    is_bind: Signal<Local, Bit>,
    pass: Signal<Local, Bit>,
    bind_opcode: Constant<Bits<8>>,
}

impl BindWriter {
    pub fn new() -> Self {
        BindWriter {
            clock: Default::default(),
            reset: Default::default(),
            s_local_valid: Default::default(),
            s_local_ready: Default::default(),
            s_local_qp: Default::default(),
            s_local_psn: Default::default(),
            s_local_status: Default::default(),
            s_local_wqe: Default::default(),
            m_local_valid: Default::default(),
            m_local_ready: Default::default(),
            m_local_qp: Default::default(),
            m_local_psn: Default::default(),
            m_local_status: Default::default(),
            m_bind_valid: Default::default(),
            m_bind_ready: Default::default(),
            m_bind: Default::default(),
            written: Default::default(),
            is_bind: Default::default(),
            pass: Default::default(),
            bind_opcode: Constant::new((BIND_OPCODE as u64).to_bits()),
        }
    }
}

impl Default for BindWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for BindWriter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, written);
        // A good BIND: its write goes first.
        self.is_bind.next = (self.s_local_wqe.val().opcode == self.bind_opcode.val())
            & (self.s_local_status.val() == 0);
        self.pass.next = !self.is_bind.val() | self.written.q.val() | self.m_bind_ready.val();
        self.m_bind_valid.next =
            self.s_local_valid.val() & self.is_bind.val() & !self.written.q.val();
        self.m_local_valid.next = self.s_local_valid.val() & self.pass.val();
        self.s_local_ready.next = self.m_local_ready.val() & self.pass.val();
        self.m_local_qp.next = self.s_local_qp.val();
        self.m_local_psn.next = self.s_local_psn.val();
        self.m_local_status.next = self.s_local_status.val();
        // The write's payload, from the BIND's fields (abi/src/queue_entries.rs).
        self.m_bind.next.index = bit_cast::<24, 32>(self.s_local_wqe.val().stag >> 8);
        self.m_bind.next.key = bit_cast::<8, 32>(self.s_local_wqe.val().stag);
        self.m_bind.next.rights = bit_cast::<3, 32>(self.s_local_wqe.val().immediate);
        self.m_bind.next.valid =
            (self.s_local_wqe.val().vaddr != 0) | (self.s_local_wqe.val().length != 0);
        self.m_bind.next.vaddr = self.s_local_wqe.val().vaddr;
        self.m_bind.next.length = self.s_local_wqe.val().length;
        self.m_bind.next.paddr = self.s_local_wqe.val().local_addr;
        // Accepted now and the completion still waits: remember it; handed on: forget it.
        if self.s_local_valid.val() & self.m_local_ready.val() & self.pass.val() {
            self.written.d.next = false;
        } else if self.m_bind_valid.val() & self.m_bind_ready.val() {
            self.written.d.next = true;
        }
        if self.reset.val() {
            self.written.d.next = false;
        }
    }
}

impl ClockedBlock for BindWriter {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
