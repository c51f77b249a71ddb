//! `SendSlot`: the [`TransmitMachine`](crate::requester::TransmitMachine)'s message output:
//! the send stage's message descriptor, the send slot (one message whose payload was
//! requested early, kept until it is taken so the send stage goes on to the next WQE) and
//! the offer of the slot's or the send stage's message.
//!
//! Follows "Message rate of short messages" in `docs/nic-blocks.md`.
//!
//! Ports (valid/ready handshakes; a source holds its fields while valid and not ready):
//! - `clock`, `reset` (synchronous, active high: the slot empty, the count 0).
//!   Reset steers no handshake (`docs/nic-blocks.md`, "Reset"): what is taken in a reset
//!   clock is dropped at that edge.
//! - The send stage's message: `s_wqe` (a [`SendWqe`]: opcode, vaddr, stag, length,
//!   immediate, invalidate), `s_op_imm` (it carries its immediate), `s_msg_length` (32),
//!   `s_remote` (32, QP_REMOTE: destination node bits 15:0, QP bits 31:16), `s_qp` (6),
//!   `s_psn` (24), `cfg_node_id` (16), `s_resync`; `s_stage_valid` (offered: its payload is
//!   not in the buffer), `s_stage_early` (held: its payload was requested early);
//!   `s_load`: it moves into the slot (only while `m_slot_valid` is low).
//! - `s_msgs` (2): the messages whose payload is in the buffer (`PayloadLedger::m_msgs`).
//! - `m_slot_valid`: the slot holds a message; `m_stage_free`: the send stage's message
//!   may be offered (the buffer empty, the slot free); `m_slot_taken`: the slot's message
//!   is taken this clock.
//! - `m_msg_valid` / `m_msg_ready`, `m_msg` (a [`MessageDescriptor`]): the slot's message
//!   once the buffer holds only its payload (and the send stage's early one), otherwise
//!   the send stage's offered one while `m_stage_free`.
//! - `stat_requests_sent` (32): messages taken.
//!
//! Latency: a loaded message is offered the next clock (once its payload is first in the
//! buffer); `m_msg_valid` follows `s_stage_valid` and `s_msgs` combinationally.
//! Throughput: one message per clock. Limits: one message in the slot.

use crate::common::bundles::MessageDescriptor;
use crate::common::SendWqe;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct SendSlot {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_wqe: Signal<In, SendWqe>,
    pub s_op_imm: Signal<In, Bit>,
    pub s_msg_length: Signal<In, Bits<32>>,
    pub s_remote: Signal<In, Bits<32>>,
    pub s_qp: Signal<In, Bits<6>>,
    pub s_psn: Signal<In, Bits<24>>,
    pub cfg_node_id: Signal<In, Bits<16>>,
    pub s_resync: Signal<In, Bit>,
    pub s_stage_valid: Signal<In, Bit>,
    pub s_stage_early: Signal<In, Bit>,
    pub s_load: Signal<In, Bit>,
    pub s_msgs: Signal<In, Bits<2>>,
    pub m_slot_valid: Signal<Out, Bit>,
    pub m_stage_free: Signal<Out, Bit>,
    pub m_slot_taken: Signal<Out, Bit>,
    pub m_msg_valid: Signal<Out, Bit>,
    pub m_msg_ready: Signal<In, Bit>,
    pub m_msg: Signal<Out, MessageDescriptor>,
    pub stat_requests_sent: Signal<Out, Bits<32>>,
    requests_reg: DFF<Bits<32>>,
    slot_valid: DFF<Bit>,
    slot_msg: DFF<MessageDescriptor>,
    /// The send stage's message descriptor.
    cur_msg: Signal<Local, MessageDescriptor>,
    /// The slot's message may be offered: the words in the buffer are its own and the
    /// send stage's early payload's only.
    slot_free: Signal<Local, Bit>,
}

impl SendSlot {
    /// The send slot (no parameters).
    pub fn new() -> Self {
        Self::default()
    }
}

impl ClockedBlock for SendSlot {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

impl Logic for SendSlot {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, requests_reg, slot_valid, slot_msg);
        self.stat_requests_sent.next = self.requests_reg.q.val();
        self.m_slot_valid.next = self.slot_valid.q.val();
        // The send stage's message (not read early) is offered once the buffer is empty
        // and the slot is free; the slot's once the earlier messages' words have left
        // (the buffer then holds its payload and perhaps the send stage's early one).
        self.m_stage_free.next = (self.s_msgs.val() == 0) & !self.slot_valid.q.val();
        self.slot_free.next = self.s_msgs.val() == 1;
        if self.s_stage_early.val() {
            self.slot_free.next = self.s_msgs.val() == 2;
        }
        self.m_msg_valid.next = self.s_stage_valid.val() & self.m_stage_free.val();
        self.m_slot_taken.next = false;
        if self.slot_valid.q.val() {
            self.m_msg_valid.next = self.slot_free.val();
            if self.m_msg_ready.val() & self.slot_free.val() {
                self.slot_valid.d.next = false;
                self.m_slot_taken.next = true;
            }
        }
        if self.m_msg_valid.val() & self.m_msg_ready.val() {
            self.requests_reg.d.next = self.requests_reg.q.val() + 1;
        }
        self.cur_msg.next.opcode = self.s_wqe.val().opcode;
        self.cur_msg.next.dest_node = self.s_remote.val().get_bits::<16>(0);
        self.cur_msg.next.src_node = self.cfg_node_id.val();
        self.cur_msg.next.dest_qp = self.s_remote.val().get_bits::<16>(16);
        self.cur_msg.next.src_qp = bit_cast::<16, 6>(self.s_qp.val());
        self.cur_msg.next.psn = self.s_psn.val();
        self.cur_msg.next.length = self.s_msg_length.val();
        self.cur_msg.next.vaddr = self.s_wqe.val().vaddr;
        self.cur_msg.next.stag = self.s_wqe.val().stag;
        self.cur_msg.next.dma_length = self.s_wqe.val().length;
        self.cur_msg.next.immediate = 0.into();
        if self.s_op_imm.val() {
            self.cur_msg.next.immediate = self.s_wqe.val().immediate;
        }
        self.cur_msg.next.has_immediate = self.s_op_imm.val();
        self.cur_msg.next.invalidate = self.s_wqe.val().invalidate;
        self.cur_msg.next.resync = self.s_resync.val();
        self.m_msg.next = self.cur_msg.val();
        if self.slot_valid.q.val() {
            self.m_msg.next = self.slot_msg.q.val();
        }
        // The empty slot follows the send stage's descriptor every clock, so a load (only
        // while the slot is empty) keeps the descriptor of its clock. The descriptor's
        // enable is the slot's own flag, not `s_load`: in `nic_top`, `s_load` sits in a
        // combinational loop through the transmit arbiter, and Verilator 5.006 evaluates
        // a register enabled by it from a stale `s_load` (the slot then sends an empty
        // descriptor; nic_pair's send-slot lockstep test).
        if !self.slot_valid.q.val() {
            self.slot_msg.d.next = self.cur_msg.val();
        }
        if self.s_load.val() {
            self.slot_valid.d.next = true;
        }
        if self.reset.val() {
            self.requests_reg.d.next = 0.into();
            self.slot_valid.d.next = false;
        }
    }
}
