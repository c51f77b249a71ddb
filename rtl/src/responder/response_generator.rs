//! `ResponseGenerator`: the responder's owed-response slots, one per queue pair, served
//! round robin as ACK, NACK, RDMA READ response and atomic response messages.
//!
//! Follows `docs/nic-blocks.md` ("Owed response", "Message source", "DMA read client") and
//! `docs/nic-architecture.md` ("ACK / NACK cells" after InfiniBand's AETH: immediate bits
//! 7:0 = syndrome; "Responses owed by the responder": a slot per QP, a later ACK replaces a
//! waiting ACK, the receive path never waits on the transmit path).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: empties every slot, abandons the message
//!   in flight, clears the counters).
//! - `cfg_node_id` (16): source node of every message.
//! - `s_owe_valid` / `s_owe_ready`, `s_owe_qp` (6), `s_owe_kind` (2: 0 ACK, 1 NACK,
//!   2 READ_RESPONSE, 3 ATOMIC_RESPONSE), `s_owe_psn` (24), `s_owe_syndrome` (8),
//!   `s_owe_addr` (32), `s_owe_length` (32), `s_owe_value` (64), `s_owe_dest_node` (16),
//!   `s_owe_dest_qp` (16), `s_owe_refusal` (21, ACK and NACK: the AETH's bits 28:8, the
//!   refusals the answer reports, `nic_abi::AethRefusals`), `s_owe_resync` (the answer's PSN
//!   became the responder's expected one through a resync: the message is sent with the
//!   RESYNC flag). `s_owe_ready`
//!   is high whenever `reset` is low: an owe is never held up by transmission. Slot rules,
//!   applied on the accepting edge against the slot as it was before that edge: a QP whose
//!   slot is not busy (see `slot_busy`) takes the item into the slot, replacing a waiting
//!   ACK if there is one (an ACK by a newer ACK; a waiting ACK by a NACK or response too,
//!   since those acknowledge the PSNs before theirs). A busy slot takes an ACK or a NACK
//!   as its *follow-up*, sent right after the busy item (a newer follow-up replaces a
//!   waiting ACK); it drops a response, and drops everything while its follow-up is a NACK
//!   (waiting, or become the slot's busy item): the owed-slot rule of
//!   `docs/nic-architecture.md` puts only ACKs and retryable NACKs naming the expected PSN
//!   there, and such a NACK makes the requester resend everything from it. The replacing
//!   item keeps the waiting item's resync mark (ORed with its own): the requester learns of
//!   the resync from whichever answer reaches it. An owe for a QP `>= queue_pairs` is
//!   dropped.
//! - `slot_busy` (64): bit q is set while QP q's slot holds a NACK, READ response or
//!   atomic response, waiting or being sent (cleared on the edge that hands it over).
//! - `m_msg_*` / `m_payload_*`: message source bundle (to `TxArbiter`). ACK / NACK:
//!   opcode 0x30 / 0x31, length 0, `has_immediate` 1, immediate = the AETH (syndrome 7:0,
//!   refusals 28:8). READ_RESPONSE:
//!   opcode 0x20, length = the slot's length, then `ceil(length / 8)` payload words read
//!   from the slot's address. ATOMIC_RESPONSE: opcode 0x21, length 8, one payload word =
//!   the value. Every message: `dest_node` / `dest_qp` and `psn` from the slot, `src_node`
//!   = `cfg_node_id` (sampled when the slot is served), `src_qp` = the QP index, `resync`
//!   the slot's resync mark; `vaddr`, `stag`, `dma_length`, `invalidate` 0.
//! - `m_rdrd_req_valid` / `m_rdrd_req_ready`, `m_rdrd_req_addr` (32, low 3 bits forced to
//!   0), `m_rdrd_req_words` (16); `s_rdrd_data` (64), `s_rdrd_valid`, `s_rdrd_ready`,
//!   `s_rdrd_last`: DMA read client (tx port) for READ response payload, issued only after
//!   the message was accepted, in bursts of up to [`MAX_BURST_WORDS`] words (so one burst
//!   for any message up to 64 KiB), one burst outstanding at a time. The data is passed
//!   straight through to `m_payload_*`.
//! - `stat_responses_sent` (32): messages accepted downstream (ACKs included);
//!   `stat_nack_sent_0` .. `stat_nack_sent_7` (32): NACKs accepted downstream, per
//!   `Syndrome::counter_index` (a NACK with another syndrome counts in neither). Wrapping.
//!
//! Scheduling: slots with an item are served round robin by QP index (starting after the
//! QP served last), one message each. Serving an ACK frees its slot at once (a new owe
//! for that QP fills it and is sent after it); a NACK or response keeps its slot busy
//! until the message (and its payload's last word) has been handed over. On that edge its
//! follow-up, if any (one owed on that edge included), becomes the slot's item: pending,
//! busy if it is a NACK, sent to the destination of the item it followed (the QP's
//! remote).
//!
//! Latency: an owe accepted at edge t into an idle generator is picked at edge t+1 and
//! its message is valid from edge t+2 on. The READ request is valid on the clock after the
//! message was accepted; payload words leave in the clock they arrive (combinational).
//! Throughput: a message every 3 clocks when downstream is always ready (ACK / NACK);
//! payload at one word per clock, plus one request turnaround per burst.
//! Limits: `queue_pairs` in 1..=64; slot state in three 64-entry RAMs (58, 64 and 54
//! bits: header, data, follow-up) and seven 64-bit registers (pending, busy, resync mark;
//! follow-up present, is a NACK, its resync mark, slot item is a promoted follow-up).

use crate::common::RoundRobin;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;
use rust_hdl::widgets::prelude::RAM;

/// Words per DMA read request of a READ response's payload (64 KiB, the longest message).
pub const MAX_BURST_WORDS: u64 = 8192;

/// Owe kinds (`s_owe_kind`).
pub mod kind {
    pub const ACK: u64 = 0;
    pub const NACK: u64 = 1;
    pub const READ_RESPONSE: u64 = 2;
    pub const ATOMIC_RESPONSE: u64 = 3;
}

/// What the transmit side is doing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum ResponseState {
    /// Pick the next slot (round robin) and read it from the slot RAMs.
    Idle,
    /// The slot's words are out of the RAMs: build the message.
    Load,
    /// Message valid until accepted.
    Message,
    /// READ response: DMA read request valid until accepted.
    ReadRequest,
    /// READ response: DMA data passed through as payload.
    ReadData,
    /// Atomic response: the one payload word.
    AtomicData,
}

#[derive(LogicBlock)]
pub struct ResponseGenerator {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub cfg_node_id: Signal<In, Bits<16>>,
    pub s_owe_valid: Signal<In, Bit>,
    pub s_owe_ready: Signal<Out, Bit>,
    pub s_owe_qp: Signal<In, Bits<6>>,
    pub s_owe_kind: Signal<In, Bits<2>>,
    pub s_owe_psn: Signal<In, Bits<24>>,
    pub s_owe_syndrome: Signal<In, Bits<8>>,
    pub s_owe_refusal: Signal<In, Bits<21>>,
    pub s_owe_addr: Signal<In, Bits<32>>,
    pub s_owe_length: Signal<In, Bits<32>>,
    pub s_owe_value: Signal<In, Bits<64>>,
    pub s_owe_dest_node: Signal<In, Bits<16>>,
    pub s_owe_dest_qp: Signal<In, Bits<16>>,
    pub s_owe_resync: Signal<In, Bit>,
    pub slot_busy: Signal<Out, Bits<64>>,
    pub m_msg_valid: Signal<Out, Bit>,
    pub m_msg_ready: Signal<In, Bit>,
    pub m_msg_opcode: Signal<Out, Bits<8>>,
    pub m_msg_dest_node: Signal<Out, Bits<16>>,
    pub m_msg_src_node: Signal<Out, Bits<16>>,
    pub m_msg_dest_qp: Signal<Out, Bits<16>>,
    pub m_msg_src_qp: Signal<Out, Bits<16>>,
    pub m_msg_psn: Signal<Out, Bits<24>>,
    pub m_msg_length: Signal<Out, Bits<32>>,
    pub m_msg_vaddr: Signal<Out, Bits<64>>,
    pub m_msg_stag: Signal<Out, Bits<32>>,
    pub m_msg_dma_length: Signal<Out, Bits<32>>,
    pub m_msg_immediate: Signal<Out, Bits<32>>,
    pub m_msg_has_immediate: Signal<Out, Bit>,
    pub m_msg_invalidate: Signal<Out, Bit>,
    pub m_msg_resync: Signal<Out, Bit>,
    pub m_payload_data: Signal<Out, Bits<64>>,
    pub m_payload_valid: Signal<Out, Bit>,
    pub m_payload_ready: Signal<In, Bit>,
    pub m_payload_last: Signal<Out, Bit>,
    pub m_rdrd_req_valid: Signal<Out, Bit>,
    pub m_rdrd_req_ready: Signal<In, Bit>,
    pub m_rdrd_req_addr: Signal<Out, Bits<32>>,
    pub m_rdrd_req_words: Signal<Out, Bits<16>>,
    pub s_rdrd_data: Signal<In, Bits<64>>,
    pub s_rdrd_valid: Signal<In, Bit>,
    pub s_rdrd_ready: Signal<Out, Bit>,
    pub s_rdrd_last: Signal<In, Bit>,
    pub stat_responses_sent: Signal<Out, Bits<32>>,
    pub stat_nack_sent_0: Signal<Out, Bits<32>>,
    pub stat_nack_sent_1: Signal<Out, Bits<32>>,
    pub stat_nack_sent_2: Signal<Out, Bits<32>>,
    pub stat_nack_sent_3: Signal<Out, Bits<32>>,
    pub stat_nack_sent_4: Signal<Out, Bits<32>>,
    pub stat_nack_sent_5: Signal<Out, Bits<32>>,
    pub stat_nack_sent_6: Signal<Out, Bits<32>>,
    pub stat_nack_sent_7: Signal<Out, Bits<32>>,
    /// Slot header per QP: 1:0 kind, 25:2 psn, 41:26 dest node, 57:42 dest QP.
    hdr_ram: RAM<Bits<58>, 6>,
    /// Slot data per QP: AETH (ACK / NACK: syndrome 7:0, refusals 28:8), address | length << 32 (READ
    /// response), original value (atomic response).
    data_ram: RAM<Bits<64>, 6>,
    /// Follow-up per QP: psn (23:0), syndrome (31:24), kind (32: 0 ACK, 1 NACK), refusal
    /// (53:33).
    follow_ram: RAM<Bits<54>, 6>,
    state: DFF<ResponseState>,
    /// Bit q: QP q's slot holds an item not yet served.
    pending: DFF<Bits<64>>,
    /// Bit q: QP q's slot holds a NACK or response (waiting or in flight): `slot_busy`.
    busy: DFF<Bits<64>>,
    /// Bit q: QP q's waiting item carries the resync mark (only meaningful while pending).
    resync_bits: DFF<Bits<64>>,
    /// Bit q: a follow-up (ACK or NACK in `follow_ram`) waits behind QP q's busy item.
    follow: DFF<Bits<64>>,
    /// Bit q: QP q's follow-up is a NACK (nothing more is kept behind it).
    follow_nack: DFF<Bits<64>>,
    /// Bit q: QP q's follow-up carries the resync mark.
    follow_resync: DFF<Bits<64>>,
    /// Bit q: QP q's slot item is a promoted follow-up: its kind, PSN and syndrome are in
    /// `follow_ram`, its destination in `hdr_ram` (left by the item it followed).
    from_follow: DFF<Bits<64>>,
    /// The slot being served is a promoted follow-up.
    cur_from_follow: DFF<Bit>,
    /// Round robin over the pending slots: the QPs after the one served last first.
    rr: RoundRobin<64, 6>,
    // The slot being served.
    cur_qp: DFF<Bits<6>>,
    cur_onehot: DFF<Bits<64>>,
    kind_reg: DFF<Bits<2>>,
    opcode_reg: DFF<Bits<8>>,
    psn_reg: DFF<Bits<24>>,
    dest_node_reg: DFF<Bits<16>>,
    dest_qp_reg: DFF<Bits<16>>,
    src_node_reg: DFF<Bits<16>>,
    length_reg: DFF<Bits<32>>,
    data_reg: DFF<Bits<64>>,
    resync_reg: DFF<Bit>,
    // READ response payload.
    addr_reg: DFF<Bits<32>>,
    words_left: DFF<Bits<32>>,
    /// The next payload word is the message's last (`words_left == 1`).
    final_word: DFF<Bit>,
    burst_reg: DFF<Bits<16>>,
    // Counters.
    responses_reg: DFF<Bits<32>>,
    nack_reg_0: DFF<Bits<32>>,
    nack_reg_1: DFF<Bits<32>>,
    nack_reg_2: DFF<Bits<32>>,
    nack_reg_3: DFF<Bits<32>>,
    nack_reg_4: DFF<Bits<32>>,
    nack_reg_5: DFF<Bits<32>>,
    nack_reg_6: DFF<Bits<32>>,
    nack_reg_7: DFF<Bits<32>>,
    // Combinational intermediates.
    owe_onehot: Signal<Local, Bits<64>>,
    owe_write: Signal<Local, Bit>,
    /// The owe goes behind its QP's busy item.
    follow_write: Signal<Local, Bit>,
    follow_set: Signal<Local, Bits<64>>,
    follow_nack_next: Signal<Local, Bits<64>>,
    follow_resync_next: Signal<Local, Bits<64>>,
    /// The handed-over item's follow-up becomes the slot's item (one-hot, or 0).
    promote: Signal<Local, Bits<64>>,
    follow_kind: Signal<Local, Bits<2>>,
    eff_kind: Signal<Local, Bits<2>>,
    set_busy: Signal<Local, Bits<64>>,
    clear_pending: Signal<Local, Bits<64>>,
    clear_busy: Signal<Local, Bits<64>>,
    resync_set: Signal<Local, Bits<64>>,
    sel_onehot: Signal<Local, Bits<64>>,
    sel_qp: Signal<Local, Bits<6>>,
    load_kind: Signal<Local, Bits<2>>,
    load_len: Signal<Local, Bits<32>>,
    msg_words: Signal<Local, Bits<32>>,
    words_after: Signal<Local, Bits<32>>,
    burst_src: Signal<Local, Bits<32>>,
    next_burst: Signal<Local, Bits<16>>,
    syndrome: Signal<Local, Bits<8>>,
    free: Signal<Local, Bit>,
    /// Bit q set for every QP q < queue_pairs.
    qp_mask: Constant<Bits<64>>,
    one: Constant<Bits<64>>,
    max_burst: Constant<Bits<32>>,
    /// `MAX_BURST_WORDS + 1`.
    max_burst_plus_one: Constant<Bits<32>>,
    /// `8 * (MAX_BURST_WORDS - 1) + 1`: a length below it has fewer than
    /// `MAX_BURST_WORDS` words.
    short_length_limit: Constant<Bits<32>>,
    /// The words of the next burst are fewer than `MAX_BURST_WORDS`.
    burst_short: Signal<Local, Bit>,
    addr_align: Constant<Bits<32>>,
    /// The AETH's used bits (syndrome 7:0, refusals 28:8).
    aeth_mask: Constant<Bits<32>>,
}

impl ResponseGenerator {
    /// A response generator with one slot for each of `queue_pairs` queue pairs.
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=nic_abi::MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "ResponseGenerator: queue_pairs must be between 1 and {}, got {queue_pairs}",
            nic_abi::MAX_QUEUE_PAIRS
        );
        let qp_mask = if queue_pairs == 64 {
            u64::MAX
        } else {
            (1u64 << queue_pairs) - 1
        };
        ResponseGenerator {
            clock: Default::default(),
            reset: Default::default(),
            cfg_node_id: Default::default(),
            s_owe_valid: Default::default(),
            s_owe_ready: Default::default(),
            s_owe_qp: Default::default(),
            s_owe_kind: Default::default(),
            s_owe_psn: Default::default(),
            s_owe_syndrome: Default::default(),
            s_owe_refusal: Default::default(),
            s_owe_addr: Default::default(),
            s_owe_length: Default::default(),
            s_owe_value: Default::default(),
            s_owe_dest_node: Default::default(),
            s_owe_dest_qp: Default::default(),
            s_owe_resync: Default::default(),
            slot_busy: Default::default(),
            m_msg_valid: Default::default(),
            m_msg_ready: Default::default(),
            m_msg_opcode: Default::default(),
            m_msg_dest_node: Default::default(),
            m_msg_src_node: Default::default(),
            m_msg_dest_qp: Default::default(),
            m_msg_src_qp: Default::default(),
            m_msg_psn: Default::default(),
            m_msg_length: Default::default(),
            m_msg_vaddr: Default::default(),
            m_msg_stag: Default::default(),
            m_msg_dma_length: Default::default(),
            m_msg_immediate: Default::default(),
            m_msg_has_immediate: Default::default(),
            m_msg_invalidate: Default::default(),
            m_msg_resync: Default::default(),
            m_payload_data: Default::default(),
            m_payload_valid: Default::default(),
            m_payload_ready: Default::default(),
            m_payload_last: Default::default(),
            m_rdrd_req_valid: Default::default(),
            m_rdrd_req_ready: Default::default(),
            m_rdrd_req_addr: Default::default(),
            m_rdrd_req_words: Default::default(),
            s_rdrd_data: Default::default(),
            s_rdrd_valid: Default::default(),
            s_rdrd_ready: Default::default(),
            s_rdrd_last: Default::default(),
            stat_responses_sent: Default::default(),
            stat_nack_sent_0: Default::default(),
            stat_nack_sent_1: Default::default(),
            stat_nack_sent_2: Default::default(),
            stat_nack_sent_3: Default::default(),
            stat_nack_sent_4: Default::default(),
            stat_nack_sent_5: Default::default(),
            stat_nack_sent_6: Default::default(),
            stat_nack_sent_7: Default::default(),
            hdr_ram: Default::default(),
            data_ram: Default::default(),
            follow_ram: Default::default(),
            state: Default::default(),
            pending: Default::default(),
            busy: Default::default(),
            resync_bits: Default::default(),
            follow: Default::default(),
            follow_nack: Default::default(),
            follow_resync: Default::default(),
            from_follow: Default::default(),
            cur_from_follow: Default::default(),
            rr: RoundRobin::new(),
            cur_qp: Default::default(),
            cur_onehot: Default::default(),
            kind_reg: Default::default(),
            opcode_reg: Default::default(),
            psn_reg: Default::default(),
            dest_node_reg: Default::default(),
            dest_qp_reg: Default::default(),
            src_node_reg: Default::default(),
            length_reg: Default::default(),
            data_reg: Default::default(),
            resync_reg: Default::default(),
            addr_reg: Default::default(),
            words_left: Default::default(),
            final_word: Default::default(),
            burst_reg: Default::default(),
            responses_reg: Default::default(),
            nack_reg_0: Default::default(),
            nack_reg_1: Default::default(),
            nack_reg_2: Default::default(),
            nack_reg_3: Default::default(),
            nack_reg_4: Default::default(),
            nack_reg_5: Default::default(),
            nack_reg_6: Default::default(),
            nack_reg_7: Default::default(),
            owe_onehot: Default::default(),
            owe_write: Default::default(),
            follow_write: Default::default(),
            follow_set: Default::default(),
            follow_nack_next: Default::default(),
            follow_resync_next: Default::default(),
            promote: Default::default(),
            follow_kind: Default::default(),
            eff_kind: Default::default(),
            set_busy: Default::default(),
            clear_pending: Default::default(),
            clear_busy: Default::default(),
            resync_set: Default::default(),
            sel_onehot: Default::default(),
            sel_qp: Default::default(),
            load_kind: Default::default(),
            load_len: Default::default(),
            msg_words: Default::default(),
            words_after: Default::default(),
            burst_src: Default::default(),
            next_burst: Default::default(),
            syndrome: Default::default(),
            free: Default::default(),
            qp_mask: Constant::new(qp_mask.to_bits()),
            one: Constant::new(1u64.to_bits()),
            max_burst: Constant::new(MAX_BURST_WORDS.to_bits()),
            max_burst_plus_one: Constant::new((MAX_BURST_WORDS + 1).to_bits()),
            short_length_limit: Constant::new((8 * (MAX_BURST_WORDS - 1) + 1).to_bits()),
            burst_short: Default::default(),
            addr_align: Constant::new(0xFFFF_FFF8u64.to_bits()),
            aeth_mask: Constant::new(0x1FFF_FFFFu64.to_bits()),
        }
    }
}

impl Logic for ResponseGenerator {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            pending,
            busy,
            resync_bits,
            follow,
            follow_nack,
            follow_resync,
            from_follow,
            cur_from_follow,
            cur_qp,
            cur_onehot,
            kind_reg,
            opcode_reg,
            psn_reg,
            dest_node_reg,
            dest_qp_reg,
            src_node_reg,
            length_reg,
            data_reg,
            resync_reg,
            addr_reg,
            words_left,
            final_word,
            burst_reg,
            responses_reg,
            nack_reg_0,
            nack_reg_1,
            nack_reg_2,
            nack_reg_3,
            nack_reg_4,
            nack_reg_5,
            nack_reg_6,
            nack_reg_7
        );
        self.hdr_ram.read_clock.next = self.clock.val();
        self.hdr_ram.write_clock.next = self.clock.val();
        self.data_ram.read_clock.next = self.clock.val();
        self.data_ram.write_clock.next = self.clock.val();
        self.follow_ram.read_clock.next = self.clock.val();
        self.follow_ram.write_clock.next = self.clock.val();
        // Owe side: always ready; write the slot unless it is busy (or the QP is unknown).
        self.s_owe_ready.next = !self.reset.val();
        self.owe_onehot.next = self.one.val() << self.s_owe_qp.val();
        self.owe_write.next = self.s_owe_valid.val()
            & !self.reset.val()
            & (self.owe_onehot.val() & self.qp_mask.val()).any()
            & !(self.owe_onehot.val() & self.busy.q.val()).any();
        // Behind a busy item: one follow-up, an ACK or a NACK. A newer one replaces a
        // waiting ACK; nothing is kept behind a follow-up NACK, waiting or promoted
        // (responses are never owed for a busy slot: the NackGenerator turns them into a
        // SEQUENCE_ERROR NACK).
        self.follow_write.next = self.s_owe_valid.val()
            & !self.reset.val()
            & (self.owe_onehot.val() & self.qp_mask.val()).any()
            & (self.owe_onehot.val() & self.busy.q.val()).any()
            & !self.s_owe_kind.val().get_bit(1)
            & !(self.owe_onehot.val()
                & ((self.follow.q.val() & self.follow_nack.q.val()) | self.from_follow.q.val()))
            .any();
        self.follow_set.next = 0.into();
        if self.follow_write.val() {
            self.follow_set.next = self.owe_onehot.val();
        }
        self.follow_nack_next.next = self.follow_nack.q.val() & !self.follow_set.val();
        if self.follow_write.val() & (self.s_owe_kind.val() == 1) {
            self.follow_nack_next.next = self.follow_nack.q.val() | self.follow_set.val();
        }
        self.follow_resync_next.next = self.follow_resync.q.val();
        if self.follow_write.val() & self.s_owe_resync.val() {
            self.follow_resync_next.next = self.follow_resync.q.val() | self.follow_set.val();
        }
        self.follow_ram.write_enable.next = self.follow_write.val();
        self.follow_ram.write_address.next = self.s_owe_qp.val();
        self.follow_ram.write_data.next = bit_cast::<54, 24>(self.s_owe_psn.val())
            | (bit_cast::<54, 8>(self.s_owe_syndrome.val()) << 24)
            | (bit_cast::<54, 1>(self.s_owe_kind.val().get_bits::<1>(0)) << 32)
            | (bit_cast::<54, 21>(self.s_owe_refusal.val()) << 33);
        self.set_busy.next = 0.into();
        if self.owe_write.val() & (self.s_owe_kind.val() != 0) {
            self.set_busy.next = self.owe_onehot.val();
        }
        self.resync_set.next = 0.into();
        if self.owe_write.val() & self.s_owe_resync.val() {
            self.resync_set.next = self.owe_onehot.val();
        }
        self.hdr_ram.write_enable.next = self.owe_write.val();
        self.hdr_ram.write_address.next = self.s_owe_qp.val();
        self.hdr_ram.write_data.next = bit_cast::<58, 2>(self.s_owe_kind.val())
            | (bit_cast::<58, 24>(self.s_owe_psn.val()) << 2)
            | (bit_cast::<58, 16>(self.s_owe_dest_node.val()) << 26)
            | (bit_cast::<58, 16>(self.s_owe_dest_qp.val()) << 42);
        self.data_ram.write_enable.next = self.owe_write.val();
        self.data_ram.write_address.next = self.s_owe_qp.val();
        self.data_ram.write_data.next = bit_cast::<64, 8>(self.s_owe_syndrome.val())
            | (bit_cast::<64, 21>(self.s_owe_refusal.val()) << 8);
        if self.s_owe_kind.val() == 2 {
            self.data_ram.write_data.next = bit_cast::<64, 32>(self.s_owe_addr.val())
                | (bit_cast::<64, 32>(self.s_owe_length.val()) << 32);
        }
        if self.s_owe_kind.val() == 3 {
            self.data_ram.write_data.next = self.s_owe_value.val();
        }
        // Round robin: the lowest pending QP after the one served last, else the lowest.
        self.rr.clock.next = self.clock.val();
        self.rr.reset.next = self.reset.val();
        self.rr.s_request.next = self.pending.q.val();
        self.sel_onehot.next = self.rr.m_grant_onehot.val();
        self.sel_qp.next = self.rr.m_grant_index.val();
        self.rr.s_served.next = false;
        self.rr.s_served_index.next = self.sel_qp.val();
        self.hdr_ram.read_address.next = self.sel_qp.val();
        self.data_ram.read_address.next = self.sel_qp.val();
        self.follow_ram.read_address.next = self.sel_qp.val();
        // The slot as read from the RAMs (valid in Load).
        self.load_kind.next = self.hdr_ram.read_data.val().get_bits::<2>(0);
        self.follow_kind.next = bit_cast::<2, 1>(self.follow_ram.read_data.val().get_bits::<1>(32));
        self.eff_kind.next = self.load_kind.val();
        if self.cur_from_follow.q.val() {
            self.eff_kind.next = self.follow_kind.val();
        }
        self.load_len.next = self.data_ram.read_data.val().get_bits::<32>(32);
        // The message's payload words, from the registered length (not from the RAM's
        // read data: the RAM's clock-to-output and this adder are in different clocks).
        self.msg_words.next = self.length_reg.q.val() >> 3;
        if self.length_reg.q.val().get_bits::<3>(0).any() {
            self.msg_words.next = (self.length_reg.q.val() >> 3) + 1;
        }
        // Next DMA burst: min(words still to request, MAX_BURST_WORDS). Whether the
        // words are fewer than MAX_BURST_WORDS is decided on the registers the count comes
        // from (beside its adder, not behind it): in Message the words are
        // ceil(length / 8), fewer when length <= 8 * (MAX_BURST_WORDS - 1); in ReadData
        // (a later burst, words_left >= 2) they are words_left - 1, fewer when words_left
        // <= MAX_BURST_WORDS.
        self.words_after.next = self.words_left.q.val() - 1;
        self.burst_src.next = self.words_after.val();
        self.burst_short.next = self.words_left.q.val() < self.max_burst_plus_one.val();
        if self.state.q.val() == ResponseState::Message {
            self.burst_src.next = self.msg_words.val();
            self.burst_short.next = self.length_reg.q.val() < self.short_length_limit.val();
        }
        self.next_burst.next = bit_cast::<16, 32>(self.max_burst.val());
        if self.burst_short.val() {
            self.next_burst.next = bit_cast::<16, 32>(self.burst_src.val());
        }
        self.syndrome.next = self.data_reg.q.val().get_bits::<8>(0);
        // Defaults.
        self.clear_pending.next = 0.into();
        self.free.next = false;
        self.m_msg_valid.next = false;
        self.m_payload_valid.next = false;
        self.m_payload_data.next = self.data_reg.q.val();
        self.m_payload_last.next = true;
        self.m_rdrd_req_valid.next = false;
        self.s_rdrd_ready.next = false;
        match self.state.q.val() {
            ResponseState::Idle => {
                if self.pending.q.val().any() {
                    self.cur_qp.d.next = self.sel_qp.val();
                    self.cur_onehot.d.next = self.sel_onehot.val();
                    self.rr.s_served.next = true;
                    self.resync_reg.d.next =
                        (self.resync_bits.q.val() & self.sel_onehot.val()).any();
                    self.cur_from_follow.d.next =
                        (self.from_follow.q.val() & self.sel_onehot.val()).any();
                    // An ACK leaves its slot now: a new owe for the QP fills it.
                    if !(self.sel_onehot.val() & self.busy.q.val()).any() {
                        self.clear_pending.next = self.sel_onehot.val();
                    }
                    self.state.d.next = ResponseState::Load;
                }
            }
            ResponseState::Load => {
                self.kind_reg.d.next = self.eff_kind.val();
                self.psn_reg.d.next = self.hdr_ram.read_data.val().get_bits::<24>(2);
                if self.cur_from_follow.q.val() {
                    self.psn_reg.d.next = self.follow_ram.read_data.val().get_bits::<24>(0);
                }
                self.dest_node_reg.d.next = self.hdr_ram.read_data.val().get_bits::<16>(26);
                self.dest_qp_reg.d.next = self.hdr_ram.read_data.val().get_bits::<16>(42);
                self.src_node_reg.d.next = self.cfg_node_id.val();
                self.data_reg.d.next = self.data_ram.read_data.val();
                if self.cur_from_follow.q.val() {
                    self.data_reg.d.next =
                        bit_cast::<64, 8>(self.follow_ram.read_data.val().get_bits::<8>(24))
                            | (bit_cast::<64, 21>(
                                self.follow_ram.read_data.val().get_bits::<21>(33),
                            ) << 8);
                }
                self.addr_reg.d.next =
                    self.data_ram.read_data.val().get_bits::<32>(0) & self.addr_align.val();
                self.opcode_reg.d.next = 0x30.into();
                self.length_reg.d.next = 0.into();
                if self.eff_kind.val() == 1 {
                    self.opcode_reg.d.next = 0x31.into();
                }
                if self.eff_kind.val() == 2 {
                    self.opcode_reg.d.next = 0x20.into();
                    self.length_reg.d.next = self.load_len.val();
                }
                if self.eff_kind.val() == 3 {
                    self.opcode_reg.d.next = 0x21.into();
                    self.length_reg.d.next = 8.into();
                }
                self.state.d.next = ResponseState::Message;
            }
            ResponseState::Message => {
                // The payload's word count and first burst, ready for ReadRequest.
                self.words_left.d.next = self.msg_words.val();
                self.final_word.d.next = self.msg_words.val() == 1;
                self.burst_reg.d.next = self.next_burst.val();
                self.m_msg_valid.next = true;
                if self.m_msg_ready.val() {
                    self.responses_reg.d.next = self.responses_reg.q.val() + 1;
                    if self.kind_reg.q.val() == 1 {
                        if self.syndrome.val() == 0x20 {
                            self.nack_reg_0.d.next = self.nack_reg_0.q.val() + 1;
                        }
                        if self.syndrome.val() == 0x60 {
                            self.nack_reg_1.d.next = self.nack_reg_1.q.val() + 1;
                        }
                        if self.syndrome.val() == 0x61 {
                            self.nack_reg_2.d.next = self.nack_reg_2.q.val() + 1;
                        }
                        if self.syndrome.val() == 0x62 {
                            self.nack_reg_3.d.next = self.nack_reg_3.q.val() + 1;
                        }
                        if self.syndrome.val() == 0x63 {
                            self.nack_reg_4.d.next = self.nack_reg_4.q.val() + 1;
                        }
                        if self.syndrome.val() == 0x64 {
                            self.nack_reg_5.d.next = self.nack_reg_5.q.val() + 1;
                        }
                        if self.syndrome.val() == 0x65 {
                            self.nack_reg_6.d.next = self.nack_reg_6.q.val() + 1;
                        }
                        if self.syndrome.val() == 0x66 {
                            self.nack_reg_7.d.next = self.nack_reg_7.q.val() + 1;
                        }
                    }
                    // ACK: its slot was freed when it was picked.
                    self.state.d.next = ResponseState::Idle;
                    if self.kind_reg.q.val() == 1 {
                        self.free.next = true;
                    }
                    if self.kind_reg.q.val() == 2 {
                        self.state.d.next = ResponseState::ReadRequest;
                        if self.length_reg.q.val() == 0 {
                            self.free.next = true;
                            self.state.d.next = ResponseState::Idle;
                        }
                    }
                    if self.kind_reg.q.val() == 3 {
                        self.state.d.next = ResponseState::AtomicData;
                    }
                }
            }
            ResponseState::ReadRequest => {
                self.m_rdrd_req_valid.next = true;
                if self.m_rdrd_req_ready.val() {
                    self.state.d.next = ResponseState::ReadData;
                }
            }
            ResponseState::ReadData => {
                self.m_payload_valid.next = self.s_rdrd_valid.val();
                self.m_payload_data.next = self.s_rdrd_data.val();
                self.m_payload_last.next = self.final_word.q.val();
                self.s_rdrd_ready.next = self.m_payload_ready.val();
                if self.s_rdrd_valid.val() & self.m_payload_ready.val() {
                    self.words_left.d.next = self.words_after.val();
                    self.final_word.d.next = self.words_left.q.val() == 2;
                    if self.final_word.q.val() {
                        self.free.next = true;
                        self.state.d.next = ResponseState::Idle;
                    } else if self.s_rdrd_last.val() {
                        self.addr_reg.d.next = self.addr_reg.q.val()
                            + (bit_cast::<32, 16>(self.burst_reg.q.val()) << 3);
                        self.burst_reg.d.next = self.next_burst.val();
                        self.state.d.next = ResponseState::ReadRequest;
                    }
                }
            }
            ResponseState::AtomicData => {
                self.m_payload_valid.next = true;
                if self.m_payload_ready.val() {
                    self.free.next = true;
                    self.state.d.next = ResponseState::Idle;
                }
            }
            _ => {
                self.state.d.next = ResponseState::Idle;
            }
        }
        // Slot bookkeeping: a handed-over NACK or response frees its slot; a new owe's
        // set wins over the clear of an ACK being served on the same edge.
        // A handed-over item with a follow-up (waiting, or written on this edge) makes
        // the follow-up the slot's item: it stays pending, busy if it is a NACK.
        self.clear_busy.next = 0.into();
        self.promote.next = 0.into();
        if self.free.val() {
            self.clear_busy.next = self.cur_onehot.q.val();
            if (self.cur_onehot.q.val() & (self.follow.q.val() | self.follow_set.val())).any() {
                self.promote.next = self.cur_onehot.q.val();
            } else {
                self.clear_pending.next = self.cur_onehot.q.val();
            }
        }
        // Every slot vector keeps only the bits of QPs below queue_pairs (an owe for any
        // other QP is dropped), so synthesis drops the unused slots and arbiter positions.
        self.pending.d.next = self.pending.q.val() & !self.clear_pending.val() & self.qp_mask.val();
        if self.owe_write.val() {
            self.pending.d.next = ((self.pending.q.val() & !self.clear_pending.val())
                | self.owe_onehot.val())
                & self.qp_mask.val();
        }
        self.busy.d.next = ((self.busy.q.val() & !self.clear_busy.val())
            | self.set_busy.val()
            | (self.promote.val() & self.follow_nack_next.val()))
            & self.qp_mask.val();
        self.follow.d.next = (self.follow.q.val() | self.follow_set.val())
            & !self.promote.val()
            & self.qp_mask.val();
        self.follow_nack.d.next = self.follow_nack_next.val() & !self.promote.val();
        self.follow_resync.d.next = self.follow_resync_next.val() & !self.promote.val();
        // An owe written into the slot itself replaces a promoted item.
        self.from_follow.d.next = ((self.from_follow.q.val() & !self.clear_pending.val())
            | self.promote.val())
            & self.qp_mask.val();
        if self.owe_write.val() {
            self.from_follow.d.next = ((self.from_follow.q.val() & !self.clear_pending.val())
                | self.promote.val())
                & !self.owe_onehot.val()
                & self.qp_mask.val();
        }
        // The resync mark lives as long as its slot's item: it leaves with it (an ACK when
        // picked, a NACK or response when handed over), and an item written into a slot
        // that still holds a waiting ACK keeps that ACK's mark.
        self.resync_bits.d.next =
            ((self.resync_bits.q.val() & !self.clear_pending.val() & !self.promote.val())
                | self.resync_set.val()
                | (self.follow_resync_next.val() & self.promote.val()))
                & self.qp_mask.val();
        if self.reset.val() {
            self.state.d.next = ResponseState::Idle;
            self.pending.d.next = 0.into();
            self.busy.d.next = 0.into();
            self.resync_bits.d.next = 0.into();
            self.follow.d.next = 0.into();
            self.follow_nack.d.next = 0.into();
            self.follow_resync.d.next = 0.into();
            self.from_follow.d.next = 0.into();
            self.responses_reg.d.next = 0.into();
            self.nack_reg_0.d.next = 0.into();
            self.nack_reg_1.d.next = 0.into();
            self.nack_reg_2.d.next = 0.into();
            self.nack_reg_3.d.next = 0.into();
            self.nack_reg_4.d.next = 0.into();
            self.nack_reg_5.d.next = 0.into();
            self.nack_reg_6.d.next = 0.into();
            self.nack_reg_7.d.next = 0.into();
        }
        // Outputs.
        self.slot_busy.next = self.busy.q.val();
        self.m_msg_opcode.next = self.opcode_reg.q.val();
        self.m_msg_dest_node.next = self.dest_node_reg.q.val();
        self.m_msg_src_node.next = self.src_node_reg.q.val();
        self.m_msg_dest_qp.next = self.dest_qp_reg.q.val();
        self.m_msg_src_qp.next = bit_cast::<16, 6>(self.cur_qp.q.val());
        self.m_msg_psn.next = self.psn_reg.q.val();
        self.m_msg_length.next = self.length_reg.q.val();
        self.m_msg_vaddr.next = 0.into();
        self.m_msg_stag.next = 0.into();
        self.m_msg_dma_length.next = 0.into();
        self.m_msg_has_immediate.next = !self.kind_reg.q.val().get_bit(1);
        self.m_msg_immediate.next = 0.into();
        if !self.kind_reg.q.val().get_bit(1) {
            self.m_msg_immediate.next =
                self.data_reg.q.val().get_bits::<32>(0) & self.aeth_mask.val();
        }
        self.m_msg_invalidate.next = false;
        self.m_msg_resync.next = self.resync_reg.q.val();
        self.m_rdrd_req_addr.next = self.addr_reg.q.val();
        self.m_rdrd_req_words.next = self.burst_reg.q.val();
        self.stat_responses_sent.next = self.responses_reg.q.val();
        self.stat_nack_sent_0.next = self.nack_reg_0.q.val();
        self.stat_nack_sent_1.next = self.nack_reg_1.q.val();
        self.stat_nack_sent_2.next = self.nack_reg_2.q.val();
        self.stat_nack_sent_3.next = self.nack_reg_3.q.val();
        self.stat_nack_sent_4.next = self.nack_reg_4.q.val();
        self.stat_nack_sent_5.next = self.nack_reg_5.q.val();
        self.stat_nack_sent_6.next = self.nack_reg_6.q.val();
        self.stat_nack_sent_7.next = self.nack_reg_7.q.val();
    }
}

impl ClockedBlock for ResponseGenerator {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::format::{opcode, Message};
    use crate::sim::{settle, tick};
    use nic_abi::Syndrome;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::VecDeque;

    /// One owed response as the `ReceiveQueueEngine` hands it over.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Owe {
        qp: usize,
        kind: u64,
        psn: u32,
        syndrome: u8,
        /// `s_owe_refusal`: the AETH's refusal bits (ACK and NACK only).
        refusal: u32,
        addr: u32,
        length: u32,
        value: u64,
        dest_node: u16,
        dest_qp: u16,
        resync: bool,
    }

    fn ack(qp: usize, psn: u32) -> Owe {
        Owe {
            qp,
            kind: kind::ACK,
            psn,
            dest_node: 0x100 + qp as u16,
            dest_qp: 0x200 + qp as u16,
            ..Default::default()
        }
    }

    fn nack(qp: usize, psn: u32, syndrome: u8) -> Owe {
        Owe {
            kind: kind::NACK,
            syndrome,
            ..ack(qp, psn)
        }
    }

    fn read(qp: usize, psn: u32, addr: u32, length: u32) -> Owe {
        Owe {
            kind: kind::READ_RESPONSE,
            addr,
            length,
            ..ack(qp, psn)
        }
    }

    fn atomic(qp: usize, psn: u32, value: u64) -> Owe {
        Owe {
            kind: kind::ATOMIC_RESPONSE,
            value,
            ..ack(qp, psn)
        }
    }

    /// Host memory: word i (byte address 8i) holds a fixed pseudo-random value.
    fn host_word(i: u64) -> u64 {
        let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn host_bytes(addr: u32, len: usize) -> Vec<u8> {
        (0..len.div_ceil(8) as u64)
            .flat_map(|i| host_word(addr as u64 / 8 + i).to_le_bytes())
            .take(len)
            .collect()
    }

    /// The message the generator must build for `owe` served from QP `q`.
    fn expected_message(o: &Owe, node_id: u16) -> (Message, usize) {
        let (op, len, imm) = match o.kind {
            kind::ACK => (
                opcode::ACK,
                0,
                Some(o.syndrome as u32 | (o.refusal as u32) << 8),
            ),
            kind::NACK => (
                opcode::NACK,
                0,
                Some(o.syndrome as u32 | (o.refusal as u32) << 8),
            ),
            kind::READ_RESPONSE => (opcode::RDMA_READ_RESPONSE, o.length as usize, None),
            _ => (opcode::ATOMIC_RESPONSE, 8, None),
        };
        let m = Message {
            opcode: op,
            dest_node: o.dest_node,
            src_node: node_id,
            dest_qp: o.dest_qp,
            src_qp: o.qp as u16,
            psn: o.psn,
            immediate: imm,
            resync: o.resync,
            ..Default::default()
        };
        (m, len)
    }

    /// Where the model's transmit side is (one phase per clock of the generator).
    #[derive(Clone, Debug)]
    enum Phase {
        /// Picks the next slot at the coming edge if any holds an item.
        Idle,
        /// Picked at the last edge; the message is valid from the next clock.
        Load(Owe),
        Message(Owe),
        ReadRequest {
            owe: Owe,
            addr: u32,
            burst: u64,
        },
        ReadData {
            owe: Owe,
            addr: u32,
            burst: u64,
        },
        Atomic(Owe),
    }

    /// Plain-Rust model of the slots and of the round-robin transmit side.
    struct SlotModel {
        queue_pairs: usize,
        /// Items waiting in each QP's slot.
        slots: Vec<Option<Owe>>,
        /// The follow-up waiting behind each QP's busy item (an ACK or a NACK).
        follow: Vec<Option<Owe>>,
        /// Bit q: QP q's busy item is a promoted follow-up NACK (nothing is kept behind
        /// it until it has been handed over).
        promoted_nack: u64,
        phase: Phase,
        /// Payload words of the READ response still to come.
        words_left: u64,
        words_sent: u64,
        /// Round robin: the search for the next slot starts here.
        rr_next: usize,
        responses: u32,
        nacks: [u32; 8],
    }

    impl SlotModel {
        fn new(queue_pairs: usize) -> Self {
            SlotModel {
                queue_pairs,
                slots: vec![None; 64],
                follow: vec![None; 64],
                promoted_nack: 0,
                phase: Phase::Idle,
                words_left: 0,
                words_sent: 0,
                rr_next: 0,
                responses: 0,
                nacks: [0; 8],
            }
        }

        /// The item in flight when it keeps its slot busy (a NACK or a response).
        fn in_flight(&self) -> Option<&Owe> {
            match &self.phase {
                Phase::Idle => None,
                Phase::Load(o)
                | Phase::Message(o)
                | Phase::ReadRequest { owe: o, .. }
                | Phase::ReadData { owe: o, .. }
                | Phase::Atomic(o) => Some(o),
            }
            .filter(|o| o.kind != kind::ACK)
        }

        fn busy(&self) -> u64 {
            let mut b = 0u64;
            for (q, s) in self.slots.iter().enumerate() {
                if matches!(s, Some(o) if o.kind != kind::ACK) {
                    b |= 1 << q;
                }
            }
            if let Some(o) = self.in_flight() {
                b |= 1 << o.qp;
            }
            b
        }

        /// Whether an owe offered now would be written into its slot.
        fn accepts(&self, o: &Owe) -> bool {
            o.qp < self.queue_pairs && self.busy() >> o.qp & 1 == 0
        }

        /// Whether an owe offered now would wait behind its slot's busy item: an ACK or
        /// a NACK, unless a NACK already waits there (or is the promoted busy item).
        fn follows(&self, o: &Owe) -> bool {
            o.qp < self.queue_pairs
                && self.busy() >> o.qp & 1 == 1
                && o.kind <= kind::NACK
                && self.promoted_nack >> o.qp & 1 == 0
                && !matches!(self.follow[o.qp], Some(f) if f.kind == kind::NACK)
        }

        fn burst(words: u64) -> u64 {
            words.min(MAX_BURST_WORDS)
        }

        /// One clock edge. `owe`: an owe accepted on this edge; `msg`, `req`, `beat`: the
        /// message, DMA request and payload handshakes that happened (`beat` carries the
        /// DMA `last` flag). Decisions use the state before the edge.
        fn edge(&mut self, owe: Option<Owe>, msg: bool, req: bool, beat: Option<bool>) {
            let write = owe.filter(|o| self.accepts(o));
            let behind = owe.filter(|o| self.follows(o));
            // The busy item handed over on this edge, if any.
            let freed = match &self.phase {
                Phase::Message(o) if msg => match o.kind {
                    kind::NACK => Some(*o),
                    kind::READ_RESPONSE if o.length == 0 => Some(*o),
                    _ => None,
                },
                Phase::ReadData { owe, .. } if beat.is_some() && self.words_left == 1 => Some(*owe),
                Phase::Atomic(o) if beat.is_some() => Some(*o),
                _ => None,
            };
            self.phase = match std::mem::replace(&mut self.phase, Phase::Idle) {
                Phase::Idle => {
                    let pick = (0..64)
                        .map(|i| (self.rr_next + i) % 64)
                        .find(|q| self.slots[*q].is_some());
                    match pick {
                        Some(q) => {
                            self.rr_next = (q + 1) % 64;
                            // The item leaves the slot; a NACK or response keeps it busy
                            // (through `in_flight`) until handed over.
                            Phase::Load(self.slots[q].take().unwrap())
                        }
                        None => Phase::Idle,
                    }
                }
                Phase::Load(o) => Phase::Message(o),
                Phase::Message(o) if msg => {
                    self.responses += 1;
                    if o.kind == kind::NACK {
                        if let Some(i) =
                            Syndrome::from_code(o.syndrome).and_then(Syndrome::counter_index)
                        {
                            self.nacks[i] += 1;
                        }
                    }
                    match o.kind {
                        kind::READ_RESPONSE if o.length > 0 => {
                            self.words_left = (o.length as u64).div_ceil(8);
                            self.words_sent = 0;
                            Phase::ReadRequest {
                                owe: o,
                                addr: o.addr & !7,
                                burst: Self::burst(self.words_left),
                            }
                        }
                        kind::ATOMIC_RESPONSE => Phase::Atomic(o),
                        _ => Phase::Idle,
                    }
                }
                Phase::ReadRequest { owe, addr, burst } if req => {
                    Phase::ReadData { owe, addr, burst }
                }
                Phase::ReadData { owe, addr, burst } if beat.is_some() => {
                    self.words_left -= 1;
                    self.words_sent += 1;
                    if self.words_left == 0 {
                        Phase::Idle
                    } else if beat == Some(true) {
                        Phase::ReadRequest {
                            owe,
                            addr: addr + 8 * burst as u32,
                            burst: Self::burst(self.words_left),
                        }
                    } else {
                        Phase::ReadData { owe, addr, burst }
                    }
                }
                Phase::Atomic(_) if beat.is_some() => Phase::Idle,
                p => p,
            };
            if let Some(mut o) = write {
                // A waiting ACK's resync mark carries over to the item replacing it.
                if let Some(old) = self.slots[o.qp] {
                    o.resync |= old.resync;
                }
                self.slots[o.qp] = Some(o);
            }
            if let Some(mut o) = behind {
                // A newer follow-up replaces a waiting ACK and keeps its resync mark.
                if let Some(old) = self.follow[o.qp] {
                    o.resync |= old.resync;
                }
                self.follow[o.qp] = Some(o);
            }
            if let Some(done) = freed {
                self.promoted_nack &= !(1 << done.qp);
                // The follow-up becomes the slot's item, sent to the same remote.
                if let Some(mut f) = self.follow[done.qp].take() {
                    f.dest_node = done.dest_node;
                    f.dest_qp = done.dest_qp;
                    if f.kind == kind::NACK {
                        self.promoted_nack |= 1 << done.qp;
                    }
                    self.slots[done.qp] = Some(f);
                }
            }
        }
    }

    /// The DMA read port: answers each request after a random latency with random gaps,
    /// data from [`host_word`].
    struct Dma {
        requests: VecDeque<(u32, u64)>,
        /// Current burst: next word address, words left, clocks of latency left.
        cur: Option<(u64, u64, u32)>,
        offering: bool,
        p_req_ready: f64,
        p_data: f64,
        max_latency: u32,
    }

    impl Dma {
        fn new(p_req_ready: f64, p_data: f64, max_latency: u32) -> Self {
            Dma {
                requests: VecDeque::new(),
                cur: None,
                offering: false,
                p_req_ready,
                p_data,
                max_latency,
            }
        }

        /// This clock's data beat (data, last), if any.
        fn drive(&mut self, rng: &mut ChaCha8Rng) -> Option<(u64, bool)> {
            if self.cur.is_none() {
                if let Some((addr, words)) = self.requests.pop_front() {
                    self.cur = Some((addr as u64 / 8, words, rng.gen_range(0..=self.max_latency)));
                }
            }
            let (word, left, latency) = self.cur.as_mut()?;
            if *latency > 0 {
                *latency -= 1;
                return None;
            }
            if !self.offering {
                self.offering = rng.gen_bool(self.p_data);
            }
            self.offering.then(|| (host_word(*word), *left == 1))
        }

        fn beat(&mut self) {
            self.offering = false;
            let (word, left, _) = self.cur.as_mut().unwrap();
            *word += 1;
            *left -= 1;
            if *left == 0 {
                self.cur = None;
            }
        }
    }

    /// A `ResponseGenerator` with its DMA port, a message sink and the model, checked
    /// clock by clock.
    struct Bench {
        uut: ResponseGenerator,
        model: SlotModel,
        dma: Dma,
        rng: ChaCha8Rng,
        node_id: u16,
        /// Messages handed over, with their payloads.
        out: Vec<Message>,
        /// DMA read requests (address, words).
        requests: Vec<(u32, u64)>,
        /// Message being collected: (message, length, payload words).
        current: Option<(Message, usize, Vec<u64>)>,
        cycles: u64,
        /// Clocks in which a payload word was handed over.
        payload_beats: u64,
    }

    impl Bench {
        fn new(queue_pairs: usize, seed: u64, dma: Dma) -> Self {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut uut = ResponseGenerator::new(queue_pairs);
            uut.connect_all();
            let node_id = rng.gen();
            uut.cfg_node_id.next = (node_id as u64).to_bits();
            uut.reset.next = true;
            tick(&mut uut);
            uut.reset.next = false;
            Bench {
                uut,
                model: SlotModel::new(queue_pairs),
                dma,
                rng,
                node_id,
                out: vec![],
                requests: vec![],
                current: None,
                cycles: 0,
                payload_beats: 0,
            }
        }

        /// One clock: offer `owe`, drive the sinks' readies, check every output against
        /// the model, then clock both.
        fn step(&mut self, owe: Option<Owe>, msg_ready: bool, payload_ready: bool) {
            self.cycles += 1;
            let u = &mut self.uut;
            let o = owe.unwrap_or_default();
            u.s_owe_valid.next = owe.is_some();
            u.s_owe_qp.next = (o.qp as u64).to_bits();
            u.s_owe_kind.next = o.kind.to_bits();
            u.s_owe_psn.next = (o.psn as u64).to_bits();
            u.s_owe_syndrome.next = (o.syndrome as u64).to_bits();
            u.s_owe_refusal.next = (o.refusal as u64).to_bits();
            u.s_owe_addr.next = (o.addr as u64).to_bits();
            u.s_owe_length.next = (o.length as u64).to_bits();
            u.s_owe_value.next = o.value.to_bits();
            u.s_owe_dest_node.next = (o.dest_node as u64).to_bits();
            u.s_owe_dest_qp.next = (o.dest_qp as u64).to_bits();
            u.s_owe_resync.next = o.resync;
            u.m_msg_ready.next = msg_ready;
            u.m_payload_ready.next = payload_ready;
            let data = self.dma.drive(&mut self.rng);
            u.s_rdrd_valid.next = data.is_some();
            u.s_rdrd_data.next = data.unwrap_or((0, false)).0.to_bits();
            u.s_rdrd_last.next = data.unwrap_or((0, false)).1;
            u.m_rdrd_req_ready.next = self.rng.gen_bool(self.dma.p_req_ready);
            settle(u);
            let c = self.cycles;
            // State outputs.
            assert!(u.s_owe_ready.val(), "owe not accepted, cycle {c}");
            assert_eq!(
                u.slot_busy.val().to_u64(),
                self.model.busy(),
                "slot_busy, cycle {c}"
            );
            assert_eq!(
                u.stat_responses_sent.val().to_u32(),
                self.model.responses,
                "cycle {c}"
            );
            let nacks = [
                &u.stat_nack_sent_0,
                &u.stat_nack_sent_1,
                &u.stat_nack_sent_2,
                &u.stat_nack_sent_3,
                &u.stat_nack_sent_4,
                &u.stat_nack_sent_5,
                &u.stat_nack_sent_6,
                &u.stat_nack_sent_7,
            ]
            .map(|s| s.val().to_u32());
            assert_eq!(nacks, self.model.nacks, "stat_nack_sent, cycle {c}");
            // Message.
            let msg_shown = matches!(self.model.phase, Phase::Message(_));
            assert_eq!(
                u.m_msg_valid.val(),
                msg_shown,
                "m_msg_valid, cycle {c} ({:?})",
                self.model.phase
            );
            let msg = msg_shown && msg_ready;
            if let Phase::Message(o) = &self.model.phase {
                let got = Message {
                    opcode: u.m_msg_opcode.val().to_u64() as u8,
                    dest_node: u.m_msg_dest_node.val().to_u64() as u16,
                    src_node: u.m_msg_src_node.val().to_u64() as u16,
                    dest_qp: u.m_msg_dest_qp.val().to_u64() as u16,
                    src_qp: u.m_msg_src_qp.val().to_u64() as u16,
                    psn: u.m_msg_psn.val().to_u64() as u32,
                    vaddr: u.m_msg_vaddr.val().to_u64(),
                    stag: u.m_msg_stag.val().to_u64() as u32,
                    dma_length: u.m_msg_dma_length.val().to_u64() as u32,
                    immediate: u
                        .m_msg_has_immediate
                        .val()
                        .then(|| u.m_msg_immediate.val().to_u64() as u32),
                    invalidate: u.m_msg_invalidate.val(),
                    resync: u.m_msg_resync.val(),
                    payload: vec![],
                };
                let len = u.m_msg_length.val().to_u64() as usize;
                // The AETH: syndrome 7:0 and the refusals 28:8, nothing above.
                assert!(!u.m_msg_has_immediate.val() || u.m_msg_immediate.val().to_u64() < 1 << 29);
                assert_eq!(
                    (got.clone(), len),
                    expected_message(o, self.node_id),
                    "message, cycle {c}"
                );
                if msg {
                    if len == 0 {
                        self.out.push(got);
                    } else {
                        self.current = Some((got, len, vec![]));
                    }
                }
            }
            // DMA request.
            let want_req = match &self.model.phase {
                Phase::ReadRequest { addr, burst, .. } => Some((*addr, *burst)),
                _ => None,
            };
            assert_eq!(
                u.m_rdrd_req_valid.val(),
                want_req.is_some(),
                "m_rdrd_req_valid, cycle {c}"
            );
            let req = want_req.is_some() && u.m_rdrd_req_ready.val();
            if let Some((addr, burst)) = want_req {
                let got = (
                    u.m_rdrd_req_addr.val().to_u64() as u32,
                    u.m_rdrd_req_words.val().to_u64(),
                );
                assert_eq!(got, (addr, burst), "DMA request, cycle {c}");
                if req {
                    self.requests.push(got);
                    self.dma.requests.push_back(got);
                }
            }
            // Payload.
            let mut beat = None;
            match &self.model.phase {
                Phase::ReadData { owe, .. } => {
                    assert_eq!(
                        u.s_rdrd_ready.val(),
                        payload_ready,
                        "s_rdrd_ready, cycle {c}"
                    );
                    assert_eq!(
                        u.m_payload_valid.val(),
                        data.is_some(),
                        "m_payload_valid, cycle {c}"
                    );
                    if let Some((word, last)) = data {
                        assert_eq!(u.m_payload_data.val().to_u64(), word);
                        assert_eq!(
                            word,
                            host_word(owe.addr as u64 / 8 + self.model.words_sent),
                            "payload word {} of the READ response at {:#x}",
                            self.model.words_sent,
                            owe.addr
                        );
                        assert_eq!(
                            u.m_payload_last.val(),
                            self.model.words_left == 1,
                            "m_payload_last, cycle {c}"
                        );
                        if payload_ready {
                            beat = Some(last);
                            self.dma.beat();
                        }
                    }
                }
                Phase::Atomic(owe) => {
                    assert!(!u.s_rdrd_ready.val());
                    assert!(u.m_payload_valid.val(), "atomic payload, cycle {c}");
                    assert_eq!(u.m_payload_data.val().to_u64(), owe.value);
                    assert!(u.m_payload_last.val());
                    if payload_ready {
                        beat = Some(true);
                    }
                }
                _ => {
                    assert!(!u.m_payload_valid.val(), "m_payload_valid, cycle {c}");
                    assert!(!u.s_rdrd_ready.val(), "s_rdrd_ready, cycle {c}");
                }
            }
            if beat.is_some() {
                self.payload_beats += 1;
                let word = u.m_payload_data.val().to_u64();
                let (_, len, words) = self.current.as_mut().expect("payload without message");
                words.push(word);
                if words.len() == len.div_ceil(8) {
                    let (mut m, len, words) = self.current.take().unwrap();
                    m.payload = words
                        .iter()
                        .flat_map(|w| w.to_le_bytes())
                        .take(len)
                        .collect();
                    self.out.push(m);
                }
            }
            self.model.edge(owe, msg, req, beat);
            tick(&mut self.uut);
        }

        /// Clock with no owes and everything ready until the generator is idle with
        /// nothing waiting.
        fn drain(&mut self) {
            let mut n = 0;
            while !(matches!(self.model.phase, Phase::Idle)
                && self.model.slots.iter().all(Option::is_none))
            {
                self.step(None, true, true);
                n += 1;
                assert!(n < 100_000, "generator did not drain");
            }
            self.step(None, true, true);
        }
    }

    fn random_owe(rng: &mut ChaCha8Rng, qps: &[usize]) -> Owe {
        let qp = if rng.gen_bool(0.03) {
            rng.gen_range(0..64)
        } else {
            qps[rng.gen_range(0..qps.len())]
        };
        let base = Owe {
            psn: rng.gen_range(0..1 << 24),
            dest_node: rng.gen(),
            dest_qp: rng.gen(),
            resync: rng.gen_bool(0.1),
            refusal: if rng.gen_bool(0.2) {
                rng.gen_range(0..1 << 21)
            } else {
                0
            },
            ..ack(qp, 0)
        };
        match rng.gen_range(0..20) {
            0..=9 => base,
            10..=13 => {
                let syndrome = match rng.gen_range(0..10) {
                    0 => 0x55,
                    1 => 0,
                    _ => Syndrome::NACKS[rng.gen_range(0..8)] as u8,
                };
                Owe {
                    kind: kind::NACK,
                    syndrome,
                    ..base
                }
            }
            14..=16 => {
                let length = match rng.gen_range(0..10) {
                    0 => 0,
                    1..=6 => rng.gen_range(1..=64),
                    _ => rng.gen_range(65..=300),
                };
                Owe {
                    kind: kind::READ_RESPONSE,
                    addr: rng.gen_range(0..1u32 << 20) * 8,
                    length,
                    // Garbage in the fields a READ response does not use.
                    syndrome: rng.gen(),
                    value: rng.gen(),
                    ..base
                }
            }
            _ => Owe {
                kind: kind::ATOMIC_RESPONSE,
                value: rng.gen(),
                syndrome: rng.gen(),
                addr: rng.gen(),
                length: rng.gen(),
                ..base
            },
        }
    }

    #[test]
    fn synthesises() {
        let mut uut = ResponseGenerator::new(64);
        uut.connect_all();
        yosys_validate("nic_rtl_response_generator", &generate_verilog(&uut))
            .expect("yosys accepts ResponseGenerator");
    }

    #[test]
    #[should_panic(expected = "queue_pairs must be between 1 and 64, got 0")]
    fn rejects_zero_queue_pairs() {
        ResponseGenerator::new(0);
    }

    #[test]
    #[should_panic(expected = "queue_pairs must be between 1 and 64, got 65")]
    fn rejects_too_many_queue_pairs() {
        ResponseGenerator::new(65);
    }

    /// Random owes (with slot conflicts, contract violations and unknown QPs), random
    /// back-pressure on the message and payload handshakes, random DMA latency and gaps:
    /// messages, payloads, DMA requests, `slot_busy` and the counters follow the model
    /// clock by clock.
    #[test]
    fn matches_model_on_random_owes() {
        let mut rng = ChaCha8Rng::seed_from_u64(0x7e5_0001);
        let mut total = 0;
        let mut kinds = [0usize; 4];
        for (queue_pairs, p_owe, p_msg_ready, p_payload_ready, p_data, respect_busy) in [
            (64, 0.3, 1.0, 1.0, 1.0, true),
            (5, 0.5, 0.5, 0.7, 0.6, false),
            (1, 0.4, 0.3, 0.5, 0.8, false),
            (64, 0.8, 0.7, 0.4, 0.5, false),
            (17, 0.2, 0.6, 0.9, 0.9, true),
        ] {
            let dma = Dma::new(rng.gen_range(0.3..1.0), p_data, rng.gen_range(0..12));
            let mut b = Bench::new(queue_pairs, rng.gen(), dma);
            let qps: Vec<usize> = (0..4).map(|_| rng.gen_range(0..queue_pairs)).collect();
            for _ in 0..5000 {
                let mut owe = rng.gen_bool(p_owe).then(|| random_owe(&mut rng, &qps));
                if respect_busy {
                    // As the ReceiveQueueEngine does: no response for a busy slot.
                    owe = owe.filter(|o| o.kind <= kind::NACK || b.model.busy() >> o.qp & 1 == 0);
                }
                let (mr, pr) = (rng.gen_bool(p_msg_ready), rng.gen_bool(p_payload_ready));
                b.step(owe, mr, pr);
            }
            b.drain();
            total += b.cycles;
            for m in &b.out {
                kinds[match m.opcode {
                    opcode::ACK => 0,
                    opcode::NACK => 1,
                    opcode::RDMA_READ_RESPONSE => 2,
                    _ => 3,
                }] += 1;
            }
            assert_eq!(b.out.len() as u32, b.model.responses);
        }
        assert!(total > 25_000);
        assert!(
            kinds.iter().all(|k| *k > 50),
            "messages per kind: {kinds:?}"
        );
    }

    /// An ACK replaces a waiting ACK; an ACK arriving while an ACK of the same QP is being
    /// sent fills the freed slot and is sent after it.
    #[test]
    fn acks_coalesce() {
        let mut b = Bench::new(8, 1, Dma::new(1.0, 1.0, 0));
        // An ACK offered on the edge its QP's ACK is picked fills the freed slot.
        b.step(Some(ack(5, 1)), false, true); // picked on the next edge
        b.step(Some(ack(5, 2)), false, true); // that edge
        for _ in 0..6 {
            b.step(None, false, true);
        }
        b.drain();
        // ACKs that wait coalesce: the newest is sent.
        b.step(Some(ack(5, 3)), false, true); // picked at once
        b.step(None, false, true);
        b.step(Some(ack(5, 4)), false, true); // fills the slot freed by 3
        b.step(Some(ack(6, 9)), false, true);
        b.step(Some(ack(5, 5)), false, true); // replaces 4
        for _ in 0..10 {
            b.step(None, false, true);
        }
        assert_eq!(
            b.uut.slot_busy.val().to_u64(),
            0,
            "ACKs never make a slot busy"
        );
        b.drain();
        let sent: Vec<(u16, u32)> = b.out.iter().map(|m| (m.src_qp, m.psn)).collect();
        assert_eq!(sent, [(5, 1), (5, 2), (5, 3), (6, 9), (5, 5)]);
        assert!(b
            .out
            .iter()
            .all(|m| m.opcode == opcode::ACK && m.immediate == Some(0)));
        assert_eq!(b.uut.stat_responses_sent.val().to_u32(), 5);
    }

    /// A slot holding a NACK or response is busy until handed over. An ACK or NACK owed
    /// meanwhile is not lost: it waits behind the busy item (a newer one replaces a
    /// waiting ACK) and is sent after it, to the same remote; nothing is kept behind a
    /// follow-up NACK, and a response owed for a busy slot is dropped. A NACK replaces a
    /// waiting ACK. NACKs count per syndrome; unknown syndromes and QPs count nowhere.
    #[test]
    fn owes_for_a_busy_slot_follow_its_item() {
        let mut b = Bench::new(4, 2, Dma::new(1.0, 1.0, 3));
        b.step(
            Some(nack(2, 7, Syndrome::InvalidRequest as u8)),
            false,
            true,
        );
        assert_eq!(b.uut.slot_busy.val().to_u64(), 1 << 2);
        b.step(Some(ack(2, 8)), false, true); // waits behind the NACK
        b.step(Some(read(2, 9, 0x100, 16)), false, true); // dropped: a response
        b.step(Some(atomic(2, 10, 99)), false, true); // dropped: a response
        b.step(
            Some(nack(2, 11, Syndrome::SequenceError as u8)),
            false,
            true,
        ); // replaces the waiting ACK
        b.step(Some(ack(2, 12)), false, true); // dropped: behind a follow-up NACK
        b.step(Some(ack(9, 1)), false, true); // QP 9 does not exist (4 queue pairs)
                                              // QP 1: a NACK replaces a waiting ACK in the slot itself.
        b.step(Some(ack(1, 20)), false, true);
        b.step(Some(nack(1, 21, 0x55)), false, true);
        // QP 3: two ACKs behind a NACK, the second replaces the first.
        b.step(
            Some(nack(3, 30, Syndrome::RemoteAccessError as u8)),
            false,
            true,
        );
        b.step(Some(ack(3, 31)), false, true);
        b.step(
            Some(Owe {
                dest_node: 0x777,
                ..ack(3, 32)
            }),
            false,
            true,
        );
        assert_eq!(b.uut.slot_busy.val().to_u64(), 1 << 3 | 1 << 2 | 1 << 1);
        for _ in 0..5 {
            b.step(None, false, true);
        }
        b.drain();
        assert_eq!(b.uut.slot_busy.val().to_u64(), 0);
        b.step(Some(atomic(2, 13, 0xdead_beef_0bad_f00d)), true, true);
        b.drain();
        let sent: Vec<(u8, u16, u32)> = b.out.iter().map(|m| (m.opcode, m.src_qp, m.psn)).collect();
        assert_eq!(
            sent,
            [
                (opcode::NACK, 2, 7),
                (opcode::NACK, 3, 30),
                (opcode::NACK, 1, 21),
                (opcode::NACK, 2, 11),
                (opcode::ACK, 3, 32),
                (opcode::ATOMIC_RESPONSE, 2, 13)
            ]
        );
        assert_eq!(b.out[0].immediate, Some(0x61));
        assert_eq!(b.out[2].immediate, Some(0x55));
        assert_eq!(b.out[3].immediate, Some(0x60));
        assert_eq!(b.out[4].immediate, Some(0));
        // A follow-up goes where the item it followed went (the QP's remote).
        assert_eq!((b.out[4].dest_node, b.out[4].dest_qp), (0x103, 0x203));
        assert_eq!(b.out[5].payload, 0xdead_beef_0bad_f00du64.to_le_bytes());
        assert_eq!(b.uut.stat_nack_sent_2.val().to_u32(), 1);
        assert_eq!(b.uut.stat_nack_sent_1.val().to_u32(), 1);
        assert_eq!(b.uut.stat_responses_sent.val().to_u32(), 6);
    }

    /// READ response payloads are host memory from the slot's address, for lengths around
    /// word boundaries, with DMA latency and gaps; a response longer than one burst is read
    /// in several.
    #[test]
    fn read_response_payload_equals_host_memory() {
        let mut b = Bench::new(64, 3, Dma::new(0.5, 0.6, 9));
        let mut lengths: Vec<u32> = (0..=17).chain([63, 64, 65, 1000, 4096]).collect();
        // Around the burst limit: the first burst's size is decided from the length, a
        // later one's from the words left.
        let max_bytes = MAX_BURST_WORDS as u32 * 8;
        lengths.extend([
            max_bytes - 9,
            max_bytes - 8,
            max_bytes - 7,
            max_bytes,
            max_bytes + 1,
        ]);
        lengths.extend([
            2 * max_bytes,
            2 * max_bytes + 1,
            2 * max_bytes + 8,
            2 * max_bytes + 9,
        ]);
        lengths.push(max_bytes + 20);
        let mut rng = ChaCha8Rng::seed_from_u64(33);
        let mut owes = vec![];
        for (i, len) in lengths.iter().enumerate() {
            let o = read(i % 64, i as u32, rng.gen_range(0..1u32 << 24) * 8, *len);
            owes.push(o);
            b.step(Some(o), true, true);
            b.drain();
        }
        assert_eq!(b.out.len(), owes.len());
        for (m, o) in b.out.iter().zip(&owes) {
            assert_eq!(m.opcode, opcode::RDMA_READ_RESPONSE);
            assert_eq!(
                m.payload,
                host_bytes(o.addr, o.length as usize),
                "READ of {} bytes",
                o.length
            );
        }
        let big = owes.last().unwrap();
        let big_requests: Vec<_> = b.requests.iter().rev().take(2).rev().copied().collect();
        assert_eq!(
            big_requests,
            [
                (big.addr, MAX_BURST_WORDS),
                (big.addr + MAX_BURST_WORDS as u32 * 8, 3)
            ]
        );
        let bursts: u64 = lengths
            .iter()
            .map(|&l| (l as u64).div_ceil(8).div_ceil(MAX_BURST_WORDS))
            .sum();
        assert_eq!(b.requests.len() as u64, bursts);
        let words: Vec<u64> = b.requests.iter().map(|r| r.1).collect();
        assert!(
            words.iter().all(|&w| (1..=MAX_BURST_WORDS).contains(&w)),
            "{words:?}"
        );
    }

    /// With the DMA port and downstream always ready, a READ response streams one word per
    /// clock.
    #[test]
    fn read_response_streams_one_word_per_clock() {
        let mut b = Bench::new(2, 4, Dma::new(1.0, 1.0, 0));
        b.step(Some(read(1, 5, 0x4000, 2000)), true, true);
        let start = b.cycles;
        b.drain();
        // Pick, load, message, request, then 250 words back to back (+1 idle clock).
        assert_eq!(b.payload_beats, 250);
        assert!(
            b.cycles - start <= 250 + 5 + 1,
            "{} clocks",
            b.cycles - start
        );
    }

    /// An answer owed with the resync mark goes out with RESYNC on its cells (ACK, NACK,
    /// READ and atomic responses). The mark survives a later item replacing the waiting
    /// ACK (ORed in); it leaves with the item that carried it.
    #[test]
    fn resync_mark_is_on_the_cells_and_survives_replacement() {
        use crate::cell::format::{decode_cell, encode_message, flag};
        let rs = |o: Owe| Owe { resync: true, ..o };
        let mut b = Bench::new(8, 6, Dma::new(1.0, 1.0, 0));
        // Served at once: ACK (marked), NACK (marked), READ response (marked), atomic
        // response (not marked).
        for o in [
            rs(ack(1, 10)),
            rs(nack(2, 20, Syndrome::RdmaDisabled as u8)),
            rs(read(3, 30, 0x800, 20)),
            atomic(4, 40, 7),
        ] {
            b.step(Some(o), true, true);
            b.drain();
        }
        // Waiting ACKs replaced: a marked ACK by an unmarked ACK, then by an unmarked NACK;
        // another QP's unmarked ACK by a marked one. The mark is not left behind: the next
        // ACK of QP 5, after its slot was served, goes without it.
        b.step(Some(ack(7, 1)), false, true); // picked at once, keeps the transmit side busy
        b.step(Some(rs(ack(5, 50))), false, true);
        b.step(Some(ack(5, 51)), false, true);
        b.step(
            Some(nack(5, 52, Syndrome::RemoteOperationalError as u8)),
            false,
            true,
        );
        b.step(Some(ack(6, 60)), false, true);
        b.step(Some(rs(ack(6, 61))), false, true);
        b.drain();
        b.step(Some(ack(5, 53)), true, true);
        b.drain();
        let got: Vec<(u16, u32, u8, bool)> = b
            .out
            .iter()
            .map(|m| (m.src_qp, m.psn, m.opcode, m.resync))
            .collect();
        assert_eq!(
            got,
            [
                (1, 10, opcode::ACK, true),
                (2, 20, opcode::NACK, true),
                (3, 30, opcode::RDMA_READ_RESPONSE, true),
                (4, 40, opcode::ATOMIC_RESPONSE, false),
                (7, 1, opcode::ACK, false),
                (5, 52, opcode::NACK, true),
                (6, 61, opcode::ACK, true),
                (5, 53, opcode::ACK, false),
            ]
        );
        // On the wire (the segmenter's format): the RESYNC flag is on every cell.
        for m in &b.out {
            for cell in encode_message(m, 8).unwrap() {
                let h = decode_cell(&cell, 8).unwrap().header;
                assert_eq!(h.flags & flag::RESYNC != 0, m.resync, "{m:?}");
            }
        }
    }

    /// Pending slots are served round robin by QP index, one message each, starting after
    /// the QP served last.
    #[test]
    fn round_robin_across_qps() {
        let mut b = Bench::new(64, 5, Dma::new(1.0, 1.0, 0));
        b.step(Some(nack(40, 0, 0x20)), false, true); // picked at once
        for q in [5, 63, 2, 41, 0, 39] {
            b.step(Some(atomic(q, q as u32, q as u64)), false, true);
        }
        b.step(Some(ack(40, 1)), false, true); // waits behind QP 40's NACK
        for _ in 0..4 {
            b.step(None, false, true);
        }
        b.drain();
        // Second round: a waiting ACK on every other QP, served in index order.
        for q in [10, 50, 30] {
            b.step(Some(nack(q, 100, 0x66)), false, true);
        }
        b.drain();
        let order: Vec<u16> = b.out.iter().map(|m| m.src_qp).collect();
        // QP 40's ACK became its slot's item when the NACK was handed over: served in
        // turn after 39.
        assert_eq!(order, [40, 41, 63, 0, 2, 5, 39, 40, 10, 30, 50]);
        assert_eq!(b.uut.stat_nack_sent_0.val().to_u32(), 1);
        assert_eq!(b.uut.stat_nack_sent_7.val().to_u32(), 3);
    }
}
