//! `SlotRams`: the owed-response slots' RAMs and their read stage. A child of
//! [`ResponseGenerator`](super::ResponseGenerator): it writes an owe into its QP's slot
//! (or as the slot's follow-up) and reads a slot into registers, from which the message's
//! fields are taken. Which slot to write or read, and when, the parent decides (the slot
//! rules of `docs/nic-architecture.md`, "Responses owed by the responder").
//!
//! Ports:
//! - `clock` (no reset: the RAMs and the read stage hold data only; the parent's valid
//!   bits say which slots hold an item).
//! - Write (the accepting edge): `s_wr_slot` (the owe becomes the slot's item: header and
//!   data), `s_wr_follow` (the owe becomes the slot's follow-up), `s_wr_qp` (6),
//!   `s_wr_kind` (2: 0 ACK, 1 NACK, 2 READ_RESPONSE, 3 ATOMIC_RESPONSE; a follow-up keeps
//!   bit 0 only), `s_wr_psn` (24), `s_wr_syndrome` (8), `s_wr_refusal` (21), `s_wr_addr`
//!   (32), `s_wr_length` (32), `s_wr_value` (64), `s_wr_dest_node` (16), `s_wr_dest_qp`
//!   (16).
//! - Read: `s_rd_qp` (6) is the slot read at every edge; in the clock after it (the read
//!   data clock) `s_rd_follow` says the item is the slot's follow-up (kind, PSN, syndrome
//!   and refusals from the follow-up, the destination from the slot) and `s_load`
//!   registers the item at the edge that ends that clock. A slot written on the edge that
//!   reads it is read as it was before. Every slot reads zero until written; `s_load` in
//!   the first clock after power-up is ignored (no slot has been read yet).
//! - The loaded item, registered, held until the next `s_load`: `m_kind` (2), `m_psn`
//!   (24), `m_dest_node` (16), `m_dest_qp` (16), `m_data` (64: the AETH for an ACK or
//!   NACK (syndrome 7:0, refusals 28:8), `addr | length << 32` for a READ response, the
//!   value for an atomic response); derived from them: `m_opcode` (8: 0x30 ACK, 0x31 NACK,
//!   0x20 READ_RESPONSE, 0x21 ATOMIC_RESPONSE, after `crate::cell::format::opcode`),
//!   `m_length` (32: a READ response's length, 8 for an atomic response, else 0),
//!   `m_one_word` (the payload is one word: `m_length` in 1..=8); and, decided when the
//!   owe was written and registered beside the kind, `m_frees` (handing the message over
//!   frees the slot: a NACK, or a READ response of length 0).
//!
//! Latency: read address at edge t, item registered at edge t+1 and shown from it. Only
//! the follow-up multiplexers lie between a RAM's read data and the read stage's
//! registers (a DP16KD's unregistered read takes about half of an 8 ns clock); the opcode
//! and length are decoded after the registers. `m_frees` is a register of its own (its
//! length test is made on the write side and stored with the header), so the parent's
//! slot bookkeeping starts from a register, not from the length's decode and zero test.
//! Throughput: a write and a read every clock.
//!
//! Storage: three [`QpRam`]s (synchronous read, 59, 64 and 54 bits: header, data,
//! follow-up), one entry per QP, `queue_pairs` rounded up to a power of two deep (so their
//! block RAMs follow the queue-pair count).
//!
//! Limits: `queue_pairs` in 1..=64; the parent writes and reads slots of QPs below
//! `queue_pairs` only (a higher QP aliases the slot `qp mod depth`).

use crate::cell::format::opcode;
use crate::common::QpRam;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct SlotRams {
    pub clock: Signal<In, Clock>,
    pub s_wr_slot: Signal<In, Bit>,
    pub s_wr_follow: Signal<In, Bit>,
    pub s_wr_qp: Signal<In, Bits<6>>,
    pub s_wr_kind: Signal<In, Bits<2>>,
    pub s_wr_psn: Signal<In, Bits<24>>,
    pub s_wr_syndrome: Signal<In, Bits<8>>,
    pub s_wr_refusal: Signal<In, Bits<21>>,
    pub s_wr_addr: Signal<In, Bits<32>>,
    pub s_wr_length: Signal<In, Bits<32>>,
    pub s_wr_value: Signal<In, Bits<64>>,
    pub s_wr_dest_node: Signal<In, Bits<16>>,
    pub s_wr_dest_qp: Signal<In, Bits<16>>,
    pub s_rd_qp: Signal<In, Bits<6>>,
    pub s_rd_follow: Signal<In, Bit>,
    pub s_load: Signal<In, Bit>,
    pub m_kind: Signal<Out, Bits<2>>,
    pub m_psn: Signal<Out, Bits<24>>,
    pub m_dest_node: Signal<Out, Bits<16>>,
    pub m_dest_qp: Signal<Out, Bits<16>>,
    pub m_data: Signal<Out, Bits<64>>,
    pub m_opcode: Signal<Out, Bits<8>>,
    pub m_length: Signal<Out, Bits<32>>,
    pub m_one_word: Signal<Out, Bit>,
    pub m_frees: Signal<Out, Bit>,
    /// The decoded length.
    length: Signal<Local, Bits<32>>,
    /// The owe written frees its slot when handed over (header bit 58).
    wr_frees: Signal<Local, Bits<1>>,
    /// Slot header per QP: 1:0 kind, 25:2 psn, 41:26 dest node, 57:42 dest QP, 58 the
    /// item frees its slot when handed over (a NACK, a READ response of length 0).
    hdr_ram: QpRam<Bits<59>>,
    /// Slot data per QP: the AETH (ACK / NACK), address | length << 32 (READ response),
    /// the value (atomic response).
    data_ram: QpRam<Bits<64>>,
    /// Follow-up per QP: psn (23:0), syndrome (31:24), kind (32: 0 ACK, 1 NACK), refusal
    /// (53:33).
    follow_ram: QpRam<Bits<54>>,
    kind_reg: DFF<Bits<2>>,
    psn_reg: DFF<Bits<24>>,
    dest_node_reg: DFF<Bits<16>>,
    dest_qp_reg: DFF<Bits<16>>,
    data_reg: DFF<Bits<64>>,
    /// `m_frees`.
    frees_reg: DFF<Bit>,
    /// A slot has been read (0 only in the first clock after power-up, when the RAMs' read
    /// registers hold no value yet).
    primed: DFF<Bit>,
    /// Message opcodes (`crate::cell::format::opcode`).
    op_ack: Constant<Bits<8>>,
    op_nack: Constant<Bits<8>>,
    op_read_response: Constant<Bits<8>>,
    op_atomic_response: Constant<Bits<8>>,
}

impl SlotRams {
    /// The slots of `queue_pairs` queue pairs.
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=nic_abi::MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "SlotRams: queue_pairs must be between 1 and {}, got {queue_pairs}",
            nic_abi::MAX_QUEUE_PAIRS
        );
        SlotRams {
            clock: Default::default(),
            s_wr_slot: Default::default(),
            s_wr_follow: Default::default(),
            s_wr_qp: Default::default(),
            s_wr_kind: Default::default(),
            s_wr_psn: Default::default(),
            s_wr_syndrome: Default::default(),
            s_wr_refusal: Default::default(),
            s_wr_addr: Default::default(),
            s_wr_length: Default::default(),
            s_wr_value: Default::default(),
            s_wr_dest_node: Default::default(),
            s_wr_dest_qp: Default::default(),
            s_rd_qp: Default::default(),
            s_rd_follow: Default::default(),
            s_load: Default::default(),
            m_kind: Default::default(),
            m_psn: Default::default(),
            m_dest_node: Default::default(),
            m_dest_qp: Default::default(),
            m_data: Default::default(),
            m_opcode: Default::default(),
            m_length: Default::default(),
            m_one_word: Default::default(),
            m_frees: Default::default(),
            length: Default::default(),
            wr_frees: Default::default(),
            hdr_ram: QpRam::new(queue_pairs),
            data_ram: QpRam::new(queue_pairs),
            follow_ram: QpRam::new(queue_pairs),
            kind_reg: Default::default(),
            psn_reg: Default::default(),
            dest_node_reg: Default::default(),
            dest_qp_reg: Default::default(),
            data_reg: Default::default(),
            frees_reg: Default::default(),
            primed: Default::default(),
            op_ack: Constant::new((opcode::ACK as u64).to_bits()),
            op_nack: Constant::new((opcode::NACK as u64).to_bits()),
            op_read_response: Constant::new((opcode::RDMA_READ_RESPONSE as u64).to_bits()),
            op_atomic_response: Constant::new((opcode::ATOMIC_RESPONSE as u64).to_bits()),
        }
    }
}

impl Logic for SlotRams {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            kind_reg,
            psn_reg,
            dest_node_reg,
            dest_qp_reg,
            data_reg,
            frees_reg,
            primed
        );
        self.hdr_ram.clock.next = self.clock.val();
        self.data_ram.clock.next = self.clock.val();
        self.follow_ram.clock.next = self.clock.val();
        // Write.
        self.hdr_ram.write_enable.next = self.s_wr_slot.val();
        self.hdr_ram.write_address.next = self.s_wr_qp.val();
        self.wr_frees.next = 0.into();
        if (self.s_wr_kind.val() == 1)
            | ((self.s_wr_kind.val() == 2) & (self.s_wr_length.val() == 0))
        {
            self.wr_frees.next = 1.into();
        }
        self.hdr_ram.write_data.next = bit_cast::<59, 2>(self.s_wr_kind.val())
            | (bit_cast::<59, 24>(self.s_wr_psn.val()) << 2)
            | (bit_cast::<59, 16>(self.s_wr_dest_node.val()) << 26)
            | (bit_cast::<59, 16>(self.s_wr_dest_qp.val()) << 42)
            | (bit_cast::<59, 1>(self.wr_frees.val()) << 58);
        self.data_ram.write_enable.next = self.s_wr_slot.val();
        self.data_ram.write_address.next = self.s_wr_qp.val();
        self.data_ram.write_data.next = bit_cast::<64, 8>(self.s_wr_syndrome.val())
            | (bit_cast::<64, 21>(self.s_wr_refusal.val()) << 8);
        if self.s_wr_kind.val() == 2 {
            self.data_ram.write_data.next = bit_cast::<64, 32>(self.s_wr_addr.val())
                | (bit_cast::<64, 32>(self.s_wr_length.val()) << 32);
        }
        if self.s_wr_kind.val() == 3 {
            self.data_ram.write_data.next = self.s_wr_value.val();
        }
        self.follow_ram.write_enable.next = self.s_wr_follow.val();
        self.follow_ram.write_address.next = self.s_wr_qp.val();
        self.follow_ram.write_data.next = bit_cast::<54, 24>(self.s_wr_psn.val())
            | (bit_cast::<54, 8>(self.s_wr_syndrome.val()) << 24)
            | (bit_cast::<54, 1>(self.s_wr_kind.val().get_bits::<1>(0)) << 32)
            | (bit_cast::<54, 21>(self.s_wr_refusal.val()) << 33);
        // Read, and the read stage: only the follow-up multiplexers behind the RAMs.
        self.hdr_ram.read_address.next = self.s_rd_qp.val();
        self.data_ram.read_address.next = self.s_rd_qp.val();
        self.follow_ram.read_address.next = self.s_rd_qp.val();
        self.primed.d.next = true;
        if self.s_load.val() & self.primed.q.val() {
            self.dest_node_reg.d.next = self.hdr_ram.read_data.val().get_bits::<16>(26);
            self.dest_qp_reg.d.next = self.hdr_ram.read_data.val().get_bits::<16>(42);
            self.kind_reg.d.next = self.hdr_ram.read_data.val().get_bits::<2>(0);
            self.psn_reg.d.next = self.hdr_ram.read_data.val().get_bits::<24>(2);
            self.data_reg.d.next = self.data_ram.read_data.val();
            self.frees_reg.d.next = self.hdr_ram.read_data.val().get_bit(58);
            if self.s_rd_follow.val() {
                self.kind_reg.d.next =
                    bit_cast::<2, 1>(self.follow_ram.read_data.val().get_bits::<1>(32));
                self.psn_reg.d.next = self.follow_ram.read_data.val().get_bits::<24>(0);
                self.frees_reg.d.next = self.follow_ram.read_data.val().get_bit(32);
                self.data_reg.d.next =
                    bit_cast::<64, 8>(self.follow_ram.read_data.val().get_bits::<8>(24))
                        | (bit_cast::<64, 21>(self.follow_ram.read_data.val().get_bits::<21>(33))
                            << 8);
            }
        }
        // The message's opcode and length, decoded from the registers.
        self.m_opcode.next = self.op_ack.val();
        self.length.next = 0.into();
        if self.kind_reg.q.val() == 1 {
            self.m_opcode.next = self.op_nack.val();
        }
        if self.kind_reg.q.val() == 2 {
            self.m_opcode.next = self.op_read_response.val();
            self.length.next = self.data_reg.q.val().get_bits::<32>(32);
        }
        if self.kind_reg.q.val() == 3 {
            self.m_opcode.next = self.op_atomic_response.val();
            self.length.next = 8.into();
        }
        self.m_length.next = self.length.val();
        // ceil(length / 8) == 1, decided beside the parent's word-count adder.
        self.m_one_word.next = ((self.length.val().get_bits::<29>(3) == 0)
            & self.length.val().get_bits::<3>(0).any())
            | (self.length.val() == 8);
        self.m_kind.next = self.kind_reg.q.val();
        self.m_psn.next = self.psn_reg.q.val();
        self.m_dest_node.next = self.dest_node_reg.q.val();
        self.m_dest_qp.next = self.dest_qp_reg.q.val();
        self.m_data.next = self.data_reg.q.val();
        self.m_frees.next = self.frees_reg.q.val();
    }
}

impl ClockedBlock for SlotRams {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
