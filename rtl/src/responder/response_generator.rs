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
//! - `s_owe_valid` / `s_owe_ready`, `s_owe` (an [`OwedResponse`], `common/bundles.rs`:
//!   `qp` (6), `kind` (2: 0 ACK, 1 NACK, 2 READ_RESPONSE, 3 ATOMIC_RESPONSE), `psn` (24),
//!   `syndrome` (8), `addr` (32), `length` (32), `value` (64), `dest_node` (16), `dest_qp`
//!   (16), `refusal` (21, ACK and NACK: the AETH's bits 28:8, the refusals the answer
//!   reports, `nic_abi::AethRefusals`), `resync` (the answer's PSN
//!   became the responder's expected one through a resync: the message is sent with the
//!   RESYNC flag). `s_owe_ready`
//!   is always high: an owe is never held up by transmission. An owe taken in a clock
//!   with `reset` high is dropped (the slot vectors are cleared at that edge; the slot RAMs
//!   hold data only, read once a later owe has set the slot's pending bit). Slot rules,
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
//! - `m_msg_valid` / `m_msg_ready` with `m_msg` (a `MessageDescriptor`, the message
//!   source bundle of `common/bundles.rs`), then `m_payload_*` (to `TxArbiter`). ACK / NACK:
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
//! Limits: `queue_pairs` in 1..=64; slot state in three 64-entry RAMs (59, 64 and 54
//! bits: header, data, follow-up; the child [`SlotRams`], which also registers the slot
//! served straight from the RAMs' read data, the opcode and length decoded after its
//! registers, and whether handing the item over frees its slot) and seven 64-bit
//! registers (pending, busy, resync mark; follow-up present, is a NACK, its resync
//! mark, slot item is a promoted follow-up). The child [`BurstSize`] sizes the READ
//! response's bursts.
//!
//! Timing: the round robin's grant is used in the clock it is computed only for the slot
//! RAMs' read address and the registers of the slot served; a picked ACK's pending and
//! resync bits are cleared in the Load clock from a registered copy of the grant (an owe
//! written into that slot on the picking edge is kept, with its own resync mark only), so
//! the slot vectors do not wait for the grant. The round robin's pointer moves in Load,
//! from the registered index of the slot served, so it does not wait for the grant either.
//! Nothing outside sees the difference: the vectors and the pointer are read only in Idle.
//! Whether a message accepted in Message frees its slot (a NACK, a READ response of length
//! 0) is a register of `SlotRams` (`m_frees`, its length test made when the owe was
//! written), so the slot bookkeeping after the accept starts from a register, not from the
//! kind's decode, the length multiplexer and a 32-bit zero test.

use super::burst_size::BurstSize;
use super::slot_rams::SlotRams;
use crate::common::{MessageDescriptor, NackCounters, OwedResponse, RoundRobin};
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Words per DMA read request of a READ response's payload (64 KiB, the longest message).
pub const MAX_BURST_WORDS: u64 = 8192;

/// Owe kinds (`s_owe.kind`).
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
    pub s_owe: Signal<In, OwedResponse>,
    pub slot_busy: Signal<Out, Bits<64>>,
    pub m_msg_valid: Signal<Out, Bit>,
    pub m_msg_ready: Signal<In, Bit>,
    pub m_msg: Signal<Out, MessageDescriptor>,
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
    /// The slots' header, data and follow-up RAMs, and the read stage of the slot served.
    slots: SlotRams,
    /// A READ response's word count and next DMA burst.
    bursts: BurstSize,
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
    /// The ACK picked at the last edge (one-hot, or 0): it leaves its slot in Load, off the
    /// round robin's path. An owe written into its slot on the picking edge stays
    /// (`picked_kept`), with its own resync mark only (`picked_resync`).
    picked_ack: DFF<Bits<64>>,
    picked_kept: DFF<Bit>,
    picked_resync: DFF<Bit>,
    /// Round robin over the pending slots: the QPs after the one served last first.
    rr: RoundRobin<64, 6>,
    /// `stat_nack_sent_*`: the NACKs handed over, per syndrome.
    nack_sent: NackCounters,
    // The slot being served.
    cur_qp: DFF<Bits<6>>,
    cur_onehot: DFF<Bits<64>>,
    src_node_reg: DFF<Bits<16>>,
    resync_reg: DFF<Bit>,
    // READ response payload.
    addr_reg: DFF<Bits<32>>,
    words_left: DFF<Bits<32>>,
    /// The next payload word is the message's last (`words_left == 1`).
    final_word: DFF<Bit>,
    burst_reg: DFF<Bits<16>>,
    // Counters.
    responses_reg: DFF<Bits<32>>,
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
    /// The owe written into its slot (one-hot, or 0).
    slot_set: Signal<Local, Bits<64>>,
    set_busy: Signal<Local, Bits<64>>,
    clear_pending: Signal<Local, Bits<64>>,
    /// The picked ACK's slot, set again in Load for an owe written on the picking edge.
    keep_pending: Signal<Local, Bits<64>>,
    keep_resync: Signal<Local, Bits<64>>,
    clear_busy: Signal<Local, Bits<64>>,
    resync_set: Signal<Local, Bits<64>>,
    sel_onehot: Signal<Local, Bits<64>>,
    sel_qp: Signal<Local, Bits<6>>,
    syndrome: Signal<Local, Bits<8>>,
    free: Signal<Local, Bit>,
    /// Bit q set for every QP q < queue_pairs.
    qp_mask: Constant<Bits<64>>,
    one: Constant<Bits<64>>,
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
            s_owe: Default::default(),
            slot_busy: Default::default(),
            m_msg_valid: Default::default(),
            m_msg_ready: Default::default(),
            m_msg: Default::default(),
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
            slots: SlotRams::new(queue_pairs),
            bursts: BurstSize::new(),
            state: Default::default(),
            pending: Default::default(),
            busy: Default::default(),
            resync_bits: Default::default(),
            follow: Default::default(),
            follow_nack: Default::default(),
            follow_resync: Default::default(),
            from_follow: Default::default(),
            cur_from_follow: Default::default(),
            picked_ack: Default::default(),
            picked_kept: Default::default(),
            picked_resync: Default::default(),
            rr: RoundRobin::new(),
            nack_sent: NackCounters::new(),
            cur_qp: Default::default(),
            cur_onehot: Default::default(),
            src_node_reg: Default::default(),
            resync_reg: Default::default(),
            addr_reg: Default::default(),
            words_left: Default::default(),
            final_word: Default::default(),
            burst_reg: Default::default(),
            responses_reg: Default::default(),
            owe_onehot: Default::default(),
            owe_write: Default::default(),
            follow_write: Default::default(),
            follow_set: Default::default(),
            follow_nack_next: Default::default(),
            follow_resync_next: Default::default(),
            promote: Default::default(),
            slot_set: Default::default(),
            set_busy: Default::default(),
            clear_pending: Default::default(),
            keep_pending: Default::default(),
            keep_resync: Default::default(),
            clear_busy: Default::default(),
            resync_set: Default::default(),
            sel_onehot: Default::default(),
            sel_qp: Default::default(),
            syndrome: Default::default(),
            free: Default::default(),
            qp_mask: Constant::new(qp_mask.to_bits()),
            one: Constant::new(1u64.to_bits()),
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
            picked_ack,
            picked_kept,
            picked_resync,
            cur_qp,
            cur_onehot,
            src_node_reg,
            resync_reg,
            addr_reg,
            words_left,
            final_word,
            burst_reg,
            responses_reg
        );
        self.slots.clock.next = self.clock.val();
        // Owe side: always ready; write the slot unless it is busy (or the QP is unknown).
        // Reset is kept out of the owe handshake (timing): an owe taken in a reset clock
        // only writes the slot RAMs, which hold data only; the reset at the end of update
        // clears the slot vectors that would make it pending, busy or a follow-up.
        self.s_owe_ready.next = true;
        self.owe_onehot.next = self.one.val() << self.s_owe.val().qp;
        self.owe_write.next = self.s_owe_valid.val()
            & (self.owe_onehot.val() & self.qp_mask.val()).any()
            & !(self.owe_onehot.val() & self.busy.q.val()).any();
        // Behind a busy item: one follow-up, an ACK or a NACK. A newer one replaces a
        // waiting ACK; nothing is kept behind a follow-up NACK, waiting or promoted
        // (responses are never owed for a busy slot: the NackGenerator turns them into a
        // SEQUENCE_ERROR NACK).
        self.follow_write.next = self.s_owe_valid.val()
            & (self.owe_onehot.val() & self.qp_mask.val()).any()
            & (self.owe_onehot.val() & self.busy.q.val()).any()
            & (self.s_owe.val().kind < 2)
            & !(self.owe_onehot.val()
                & ((self.follow.q.val() & self.follow_nack.q.val()) | self.from_follow.q.val()))
            .any();
        self.follow_set.next = 0.into();
        if self.follow_write.val() {
            self.follow_set.next = self.owe_onehot.val();
        }
        self.follow_nack_next.next = self.follow_nack.q.val() & !self.follow_set.val();
        if self.follow_write.val() & (self.s_owe.val().kind == 1) {
            self.follow_nack_next.next = self.follow_nack.q.val() | self.follow_set.val();
        }
        self.follow_resync_next.next = self.follow_resync.q.val();
        if self.follow_write.val() & self.s_owe.val().resync {
            self.follow_resync_next.next = self.follow_resync.q.val() | self.follow_set.val();
        }
        self.slot_set.next = 0.into();
        if self.owe_write.val() {
            self.slot_set.next = self.owe_onehot.val();
        }
        self.set_busy.next = 0.into();
        if self.owe_write.val() & (self.s_owe.val().kind != 0) {
            self.set_busy.next = self.owe_onehot.val();
        }
        self.resync_set.next = 0.into();
        if self.owe_write.val() & self.s_owe.val().resync {
            self.resync_set.next = self.owe_onehot.val();
        }
        // The slot RAMs: the owe into the slot or as its follow-up.
        self.slots.s_wr_slot.next = self.owe_write.val();
        self.slots.s_wr_follow.next = self.follow_write.val();
        self.slots.s_wr_qp.next = self.s_owe.val().qp;
        self.slots.s_wr_kind.next = self.s_owe.val().kind;
        self.slots.s_wr_psn.next = self.s_owe.val().psn;
        self.slots.s_wr_syndrome.next = self.s_owe.val().syndrome;
        self.slots.s_wr_refusal.next = self.s_owe.val().refusal;
        self.slots.s_wr_addr.next = self.s_owe.val().addr;
        self.slots.s_wr_length.next = self.s_owe.val().length;
        self.slots.s_wr_value.next = self.s_owe.val().value;
        self.slots.s_wr_dest_node.next = self.s_owe.val().dest_node;
        self.slots.s_wr_dest_qp.next = self.s_owe.val().dest_qp;
        // Round robin: the lowest pending QP after the one served last, else the lowest.
        self.rr.clock.next = self.clock.val();
        self.rr.reset.next = self.reset.val();
        self.rr.s_request.next = self.pending.q.val();
        self.sel_onehot.next = self.rr.m_grant_onehot.val();
        self.sel_qp.next = self.rr.m_grant_index.val();
        // The grant is served a clock after it was taken, from its register (the next pick
        // is two clocks later at the earliest), so the pointer does not wait for the grant.
        self.rr.s_served.next = self.state.q.val() == ResponseState::Load;
        self.rr.s_served_index.next = self.cur_qp.q.val();
        // The slot picked is read at the picking edge and registered in Load.
        self.slots.s_rd_qp.next = self.sel_qp.val();
        self.slots.s_rd_follow.next = self.cur_from_follow.q.val();
        self.slots.s_load.next = self.state.q.val() == ResponseState::Load;
        // The payload's words and next burst: in Message from the registered length (not
        // from the RAMs' read data), in ReadData from the words left.
        self.bursts.s_first.next = self.state.q.val() == ResponseState::Message;
        self.bursts.s_length.next = self.slots.m_length.val();
        self.bursts.s_words_left.next = self.words_left.q.val();
        self.syndrome.next = self.slots.m_data.val().get_bits::<8>(0);
        // Defaults.
        self.clear_pending.next = 0.into();
        self.keep_pending.next = 0.into();
        self.keep_resync.next = 0.into();
        self.picked_ack.d.next = 0.into();
        self.free.next = false;
        self.m_msg_valid.next = false;
        self.m_payload_valid.next = false;
        self.m_payload_data.next = self.slots.m_data.val();
        self.m_payload_last.next = true;
        self.m_rdrd_req_valid.next = false;
        self.s_rdrd_ready.next = false;
        match self.state.q.val() {
            ResponseState::Idle => {
                if self.pending.q.val().any() {
                    self.cur_qp.d.next = self.sel_qp.val();
                    self.cur_onehot.d.next = self.sel_onehot.val();
                    self.resync_reg.d.next =
                        (self.resync_bits.q.val() & self.sel_onehot.val()).any();
                    self.cur_from_follow.d.next =
                        (self.from_follow.q.val() & self.sel_onehot.val()).any();
                    // An ACK (a slot not busy) leaves its slot: a new owe for the QP fills it.
                    self.picked_ack.d.next = self.sel_onehot.val() & !self.busy.q.val();
                    self.picked_kept.d.next = (self.sel_onehot.val() & self.slot_set.val()).any();
                    self.picked_resync.d.next =
                        (self.sel_onehot.val() & self.resync_set.val()).any();
                    self.state.d.next = ResponseState::Load;
                }
            }
            ResponseState::Load => {
                self.clear_pending.next = self.picked_ack.q.val();
                if self.picked_kept.q.val() {
                    self.keep_pending.next = self.picked_ack.q.val();
                }
                if self.picked_resync.q.val() {
                    self.keep_resync.next = self.picked_ack.q.val();
                }
                self.src_node_reg.d.next = self.cfg_node_id.val();
                self.state.d.next = ResponseState::Message;
            }
            ResponseState::Message => {
                // The payload's address, word count and first burst, ready for
                // ReadRequest.
                self.addr_reg.d.next =
                    self.slots.m_data.val().get_bits::<32>(0) & self.addr_align.val();
                self.words_left.d.next = self.bursts.m_words.val();
                self.final_word.d.next = self.slots.m_one_word.val();
                self.burst_reg.d.next = self.bursts.m_next_burst.val();
                self.m_msg_valid.next = true;
                if self.m_msg_ready.val() {
                    self.responses_reg.d.next = self.responses_reg.q.val() + 1;
                    // ACK: its slot was freed when it was picked.
                    // A NACK or a READ response of length 0 frees its slot now (the
                    // slot RAMs' registered `m_frees`, decided when the owe was written).
                    self.free.next = self.slots.m_frees.val();
                    self.state.d.next = ResponseState::Idle;
                    if (self.slots.m_kind.val() == 2) & !self.slots.m_frees.val() {
                        self.state.d.next = ResponseState::ReadRequest;
                    }
                    if self.slots.m_kind.val() == 3 {
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
                    self.words_left.d.next = self.bursts.m_words_after.val();
                    self.final_word.d.next = self.words_left.q.val() == 2;
                    if self.final_word.q.val() {
                        self.free.next = true;
                        self.state.d.next = ResponseState::Idle;
                    } else if self.s_rdrd_last.val() {
                        self.addr_reg.d.next = self.addr_reg.q.val()
                            + (bit_cast::<32, 16>(self.burst_reg.q.val()) << 3);
                        self.burst_reg.d.next = self.bursts.m_next_burst.val();
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
        self.pending.d.next = ((self.pending.q.val() & !self.clear_pending.val())
            | self.slot_set.val()
            | self.keep_pending.val())
            & self.qp_mask.val();
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
            & !self.slot_set.val()
            & self.qp_mask.val();
        // The resync mark lives as long as its slot's item: it leaves with it (an ACK when
        // picked, a NACK or response when handed over), and an item written into a slot
        // that still holds a waiting ACK keeps that ACK's mark.
        self.resync_bits.d.next =
            ((self.resync_bits.q.val() & !self.clear_pending.val() & !self.promote.val())
                | self.resync_set.val()
                | self.keep_resync.val()
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
        }
        // A NACK handed over counts under its syndrome.
        self.nack_sent.clock.next = self.clock.val();
        self.nack_sent.reset.next = self.reset.val();
        self.nack_sent.s_count.next = (self.state.q.val() == ResponseState::Message)
            & self.m_msg_ready.val()
            & (self.slots.m_kind.val() == 1);
        self.nack_sent.s_syndrome.next = self.syndrome.val();
        // Outputs.
        self.slot_busy.next = self.busy.q.val();
        self.m_msg.next.opcode = self.slots.m_opcode.val();
        self.m_msg.next.dest_node = self.slots.m_dest_node.val();
        self.m_msg.next.src_node = self.src_node_reg.q.val();
        self.m_msg.next.dest_qp = self.slots.m_dest_qp.val();
        self.m_msg.next.src_qp = bit_cast::<16, 6>(self.cur_qp.q.val());
        self.m_msg.next.psn = self.slots.m_psn.val();
        self.m_msg.next.length = self.slots.m_length.val();
        self.m_msg.next.vaddr = 0.into();
        self.m_msg.next.stag = 0.into();
        self.m_msg.next.dma_length = 0.into();
        self.m_msg.next.has_immediate = !self.slots.m_kind.val().get_bit(1);
        self.m_msg.next.immediate = 0.into();
        if !self.slots.m_kind.val().get_bit(1) {
            self.m_msg.next.immediate =
                self.slots.m_data.val().get_bits::<32>(0) & self.aeth_mask.val();
        }
        self.m_msg.next.invalidate = false;
        self.m_msg.next.resync = self.resync_reg.q.val();
        self.m_rdrd_req_addr.next = self.addr_reg.q.val();
        self.m_rdrd_req_words.next = self.burst_reg.q.val();
        self.stat_responses_sent.next = self.responses_reg.q.val();
        self.stat_nack_sent_0.next = self.nack_sent.m_count_0.val();
        self.stat_nack_sent_1.next = self.nack_sent.m_count_1.val();
        self.stat_nack_sent_2.next = self.nack_sent.m_count_2.val();
        self.stat_nack_sent_3.next = self.nack_sent.m_count_3.val();
        self.stat_nack_sent_4.next = self.nack_sent.m_count_4.val();
        self.stat_nack_sent_5.next = self.nack_sent.m_count_5.val();
        self.stat_nack_sent_6.next = self.nack_sent.m_count_6.val();
        self.stat_nack_sent_7.next = self.nack_sent.m_count_7.val();
    }
}

impl ClockedBlock for ResponseGenerator {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
