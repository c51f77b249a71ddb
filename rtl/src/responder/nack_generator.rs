//! `NackGenerator`: the responder's decision for a request message ("NACK generator").
//!
//! Combinational (no clock). Follows the responder rules 1-7 of `docs/nic-architecture.md`
//! ("Reliability"); syndromes after InfiniBand's AETH (RNR NAK, NAK codes 0-3) plus this
//! design's 0x64-0x66 ([`nic_abi::Syndrome`]). [`crate::ReceiveQueueEngine`] evaluates it on
//! a request's first cell, once the inputs it needs are known.
//!
//! Inputs:
//! - `s_class` (an [`OutcomeClass`], `common/bundles.rs`): the cell's header decoded, as the
//!   engine receives it registered (`OutcomeClass::of`). Its opcode classes: `is_send`
//!   (SEND 0x00, SEND_IMMEDIATE 0x01), `is_write` (RDMA_WRITE 0x10, RDMA_WRITE_IMMEDIATE
//!   0x11), `is_read` (RDMA_READ_REQUEST 0x12), `is_atomic` (0x13, 0x14), `consumes`
//!   (SEND, SEND_IMMEDIATE, RDMA_WRITE_IMMEDIATE); an opcode in none of the first four is
//!   not a request (dropped). `request_ok`: rule 5's static part (below).
//! - `qp_exists` (`dest_qp < queue_pairs`), `qp_enabled` (QP_CTRL bit 0), `source_match`
//!   (source node and QP equal `QP_REMOTE`).
//! - `psn`, `expected_psn` (24), `synced`, `nak_sent`; the cell's RESYNC flag is `s_class.resync`.
//! - The PSN distances, computed by the engine a clock ahead (from its per-QP RAMs, in
//!   the clock they answer) so that no subtraction lies in series with the rules:
//!   `behind` = `(expected_psn - psn) mod 2^24`, and `behind_rs`: `behind > rs_back`, with
//!   `rs_back` = `(expected_psn - rs_psn) mod 2^24` (the cell's PSN is further behind the
//!   expected one than the resync point; the engine's `LookupCapture` registers it).
//! - `atomic_match`: the QP's saved atomic is valid and its PSN equals `psn`.
//! - `enable_send_recv`, `enable_rdma` (the `ENABLE` register).
//! - `access_ok`: the TPT check passed (with a TPT) or the range `vaddr .. vaddr + length`
//!   lies below 2^32 (without one). Only looked at when `check_access` is high.
//! - `rq_empty`: no receive buffer posted (`RQ_PI == RQ_CI`).
//! - `length_error`: the receive buffer cannot hold the SEND (shorter than the message, or
//!   not 8-aligned). Known only after the receive queue entry was read; 0 before.
//! - `slot_busy`: the QP's owed-response slot holds a NACK or a response.
//! - `refused_window` (24): the QP's refusals among the `SEND_WINDOW` PSNs before the
//!   expected one: bits `3(k-1)+2 .. 3(k-1)` hold the refusal code
//!   (`nic_abi::Syndrome::refusal_code`, 0 = not refused) of PSN `expected_psn - k`, k =
//!   1..=8 (a refusal is a NACK that consumed its PSN: every syndrome but SEQUENCE_ERROR
//!   and CRC_OR_MALFORMED; see "Refused PSNs" below).
//! - `rs_valid`: the QP keeps a resync point, the PSN it last resynced at (adopted as the
//!   expected one), while it lies within `SEND_WINDOW` PSNs behind the expected one (see
//!   "Resync point" below); its distance is `rs_back`.
//!
//! Outputs:
//! - `action` (2): [`ACTION_EXECUTE`] (0), [`ACTION_DUPLICATE`] (1: answer again, do not
//!   apply), [`ACTION_DROP`] (2: no effect at all), [`ACTION_NACK`] (3).
//! - `syndrome` (8): the NACK's syndrome; with [`ACTION_EXECUTE`] either 0 or
//!   INVALID_REQUEST (0x61, a SEND longer than its buffer: written as far as it fits,
//!   completed with status 0x01 and NACKed after its last cell). 0 otherwise.
//! - `resynced`: the PSN is taken as the expected one (rule 2: not synced, or RESYNC and
//!   not one of the `SEND_WINDOW` PSNs just before the expected one).
//! - `in_sequence`: `psn` equals the expected PSN (after the resync).
//! - `check_access`: the decision reached the access check of rule 5 (an RDMA or atomic
//!   request whose earlier checks passed): `access_ok` matters, so the engine looks it up.
//! - `ack_psn` (24): the PSN the ACK of a duplicate SEND / WRITE names: `expected - 1`,
//!   or the duplicate's own PSN when `expected - 1` was refused (an ACK of a refused PSN
//!   would complete it with success). The engine's AETH reports the refusals before the
//!   PSN the answer names. A duplicate more than `SEND_WINDOW` behind was never received
//!   in this PSN sequence (the requester restarted its sequence without RESYNC; a real
//!   retransmission lies within the window): naming its own PSN would acknowledge a
//!   message never applied, so it is dropped (counted) while `expected - 1` is refused.
//! - `count_dropped`: the drop is counted in `STAT_DROPPED` (every drop except the silent
//!   discard of requests ahead of the expected PSN after the SEQUENCE_ERROR NACK was sent).
//! - `slot_refused`: the owed-slot rule turned the request away with SEQUENCE_ERROR
//!   (`action` NACK, `in_sequence` 0: nothing is consumed; the engine skips the TPT
//!   lookup for it).
//!
//! Rule order (the first rule that applies decides):
//! 1. QP missing, disabled or source mismatch → drop (counted). Opcode that is not a
//!    request → drop (counted).
//! 2. PSN, after the resync: ahead (`(expected - psn) mod 2^24 >= 2^23`), or a duplicate
//!    before the resync point → NACK SEQUENCE_ERROR (0x60), or a silent drop while
//!    `nak_sent`. Duplicate
//!    (`1..2^23` behind) → answer again: the duplicate of a refused PSN its NACK again
//!    (its syndrome from `refused_window`, whatever the opcode); SEND / WRITE an ACK
//!    (`ack_psn`), an
//!    atomic whose PSN is the saved one its saved value (otherwise drop, counted), a READ
//!    goes on through rules 3-5 and is executed again (`ACTION_DUPLICATE` when it passes).
//! 3. SEND/RECV disabled → NACK REMOTE_OPERATIONAL_ERROR (0x63).
//! 4. RDMA opcode while RDMA is disabled → NACK RDMA_DISABLED (0x65).
//! 5. RDMA opcode: address not 8-aligned, an atomic whose `dma_length` is not 8 or whose
//!    payload is not 16 bytes, a WRITE whose `msg_length` differs from `dma_length` (the
//!    class's `request_ok` is 0) → NACK INVALID_REQUEST (0x61); then `!access_ok` → NACK
//!    REMOTE_ACCESS_ERROR (0x62).
//! 6. SEND or RDMA_WRITE_IMMEDIATE with `rq_empty` → NACK RECEIVER_NOT_READY (0x20).
//! 7. Execute (`syndrome` INVALID_REQUEST with `length_error` on a SEND).
//!
//! Finally the owed-slot rule: a result that owes anything but an ACK (a NACK, a read or
//! atomic response, the NACK of a too-long SEND) while `slot_busy` is not applied. A
//! request at or ahead of the expected PSN (not a duplicate, not a resync) is answered
//! NACK SEQUENCE_ERROR with the expected PSN instead (`slot_refused`): the
//! `ResponseGenerator` keeps that NACK behind the busy item, so the requester learns at
//! once that it must go back to the expected PSN (its request is never lost without an
//! answer). A duplicate or a resync becomes a counted drop: a duplicate's answer repeats
//! one that left the slot before the busy item, and a resync has no expected PSN to name.
//!
//! Refused PSNs: a refusal that consumes its PSN is final. Without a memory of it, a
//! requester that timed out while the NACK was on its way (go-back-N to an older PSN,
//! which makes it ignore the NACK) would retransmit the refused request, get a duplicate's
//! ACK and complete the refused WQE with success. So the answer to a PSN never changes:
//! the duplicate of a refused PSN gets the same NACK, and no ACK names a refused PSN. The
//! window holds every refusal the requester may not have completed yet (it sends nothing
//! more than `SEND_WINDOW - 1` past a PSN it has not completed), so two or more refusals
//! within one window are all remembered.
//!
//! Resync point: a QP that resynced at PSN r never applied the PSNs before r in its
//! current incarnation (its host rebooted, or the requester skipped them). A duplicate
//! before r would otherwise be ACKed with `ack_psn` (>= r - 1), telling the requester
//! they were applied. It is answered like a request ahead of the expected PSN: SEQUENCE_ERROR
//! with the expected PSN, which the engine sends with RESYNC (every answer is marked while
//! the resync point is kept), so the requester completes the WQEs before it with
//! RESPONDER_RESTARTED and goes on from the expected PSN.
//!
//! Latency: combinational. Limits: none (no parameters).

use crate::common::OutcomeClass;
use nic_abi::{Syndrome, SEND_WINDOW};
use rust_hdl::prelude::*;

/// `action`: apply the request.
pub const ACTION_EXECUTE: u64 = 0;
/// `action`: a duplicate, answered again but not applied.
pub const ACTION_DUPLICATE: u64 = 1;
/// `action`: no effect, no answer.
pub const ACTION_DROP: u64 = 2;
/// `action`: answer with a NACK (`syndrome`).
pub const ACTION_NACK: u64 = 3;

#[derive(LogicBlock)]
pub struct NackGenerator {
    pub s_class: Signal<In, OutcomeClass>,
    pub qp_exists: Signal<In, Bit>,
    pub qp_enabled: Signal<In, Bit>,
    pub source_match: Signal<In, Bit>,
    pub psn: Signal<In, Bits<24>>,
    pub expected_psn: Signal<In, Bits<24>>,
    pub synced: Signal<In, Bit>,
    pub nak_sent: Signal<In, Bit>,
    pub atomic_match: Signal<In, Bit>,
    pub enable_send_recv: Signal<In, Bit>,
    pub enable_rdma: Signal<In, Bit>,
    pub access_ok: Signal<In, Bit>,
    pub rq_empty: Signal<In, Bit>,
    pub length_error: Signal<In, Bit>,
    pub slot_busy: Signal<In, Bit>,
    pub refused_window: Signal<In, Bits<24>>,
    pub rs_valid: Signal<In, Bit>,
    pub behind: Signal<In, Bits<24>>,
    pub behind_rs: Signal<In, Bit>,
    pub action: Signal<Out, Bits<2>>,
    pub syndrome: Signal<Out, Bits<8>>,
    pub resynced: Signal<Out, Bit>,
    pub in_sequence: Signal<Out, Bit>,
    pub check_access: Signal<Out, Bit>,
    pub count_dropped: Signal<Out, Bit>,
    pub ack_psn: Signal<Out, Bits<24>>,
    pub slot_refused: Signal<Out, Bit>,
    // Opcode classes.
    is_send: Signal<Local, Bit>,
    is_write: Signal<Local, Bit>,
    is_read: Signal<Local, Bit>,
    is_atomic: Signal<Local, Bit>,
    is_rdma: Signal<Local, Bit>,
    consumes: Signal<Local, Bit>,
    // PSN classification.
    in_window: Signal<Local, Bit>,
    resync_now: Signal<Local, Bit>,
    sequential: Signal<Local, Bit>,
    ahead: Signal<Local, Bit>,
    // This PSN's refusal code in the window (0: not refused, or not in the window), and
    // its syndrome.
    refused_code: Signal<Local, Bits<3>>,
    refused_hit: Signal<Local, Bit>,
    refused_syndrome: Signal<Local, Bits<8>>,
    // The resync point: this PSN is a duplicate before it.
    rs_before: Signal<Local, Bit>,
    // Rule 5's static part.
    request_ok: Signal<Local, Bit>,
    // The rule groups and the decision before the owed-slot rule (one-hot `v_*`).
    req_ok: Signal<Local, Bit>,
    bad_psn: Signal<Local, Bit>,
    g_seq: Signal<Local, Bit>,
    g_ref: Signal<Local, Bit>,
    g_dup: Signal<Local, Bit>,
    g_rest: Signal<Local, Bit>,
    refused_rest: Signal<Local, Bit>,
    v_nack: Signal<Local, Bit>,
    v_duplicate: Signal<Local, Bit>,
    v_execute: Signal<Local, Bit>,
    v_drop: Signal<Local, Bit>,
    slot_hit: Signal<Local, Bit>,
    code: Signal<Local, Bits<8>>,
    reached_access: Signal<Local, Bit>,
    owes: Signal<Local, Bit>,
    /// Not a duplicate (before the resync point or not) and not a resync: at or ahead of
    /// the expected PSN.
    fresh: Signal<Local, Bit>,
    // Numbers named elsewhere: the
    // syndromes (`nic_abi::Syndrome`), the duplicate window (`nic_abi::SEND_WINDOW`).
    syn_receiver_not_ready: Constant<Bits<8>>,
    syn_sequence_error: Constant<Bits<8>>,
    syn_invalid_request: Constant<Bits<8>>,
    syn_remote_access_error: Constant<Bits<8>>,
    syn_remote_operational_error: Constant<Bits<8>>,
    syn_rdma_disabled: Constant<Bits<8>>,
    send_window: Constant<Bits<24>>,
}

impl Default for NackGenerator {
    fn default() -> Self {
        NackGenerator {
            s_class: Default::default(),
            qp_exists: Default::default(),
            qp_enabled: Default::default(),
            source_match: Default::default(),
            psn: Default::default(),
            expected_psn: Default::default(),
            synced: Default::default(),
            nak_sent: Default::default(),
            atomic_match: Default::default(),
            enable_send_recv: Default::default(),
            enable_rdma: Default::default(),
            access_ok: Default::default(),
            rq_empty: Default::default(),
            length_error: Default::default(),
            slot_busy: Default::default(),
            refused_window: Default::default(),
            rs_valid: Default::default(),
            behind: Default::default(),
            behind_rs: Default::default(),
            action: Default::default(),
            syndrome: Default::default(),
            resynced: Default::default(),
            in_sequence: Default::default(),
            check_access: Default::default(),
            count_dropped: Default::default(),
            ack_psn: Default::default(),
            slot_refused: Default::default(),
            is_send: Default::default(),
            is_write: Default::default(),
            is_read: Default::default(),
            is_atomic: Default::default(),
            is_rdma: Default::default(),
            consumes: Default::default(),
            in_window: Default::default(),
            resync_now: Default::default(),
            sequential: Default::default(),
            ahead: Default::default(),
            refused_code: Default::default(),
            refused_hit: Default::default(),
            refused_syndrome: Default::default(),
            rs_before: Default::default(),
            request_ok: Default::default(),
            req_ok: Default::default(),
            bad_psn: Default::default(),
            g_seq: Default::default(),
            g_ref: Default::default(),
            g_dup: Default::default(),
            g_rest: Default::default(),
            refused_rest: Default::default(),
            v_nack: Default::default(),
            v_duplicate: Default::default(),
            v_execute: Default::default(),
            v_drop: Default::default(),
            slot_hit: Default::default(),
            code: Default::default(),
            reached_access: Default::default(),
            owes: Default::default(),
            fresh: Default::default(),
            syn_receiver_not_ready: Constant::new((Syndrome::ReceiverNotReady as u64).to_bits()),
            syn_sequence_error: Constant::new((Syndrome::SequenceError as u64).to_bits()),
            syn_invalid_request: Constant::new((Syndrome::InvalidRequest as u64).to_bits()),
            syn_remote_access_error: Constant::new((Syndrome::RemoteAccessError as u64).to_bits()),
            syn_remote_operational_error: Constant::new(
                (Syndrome::RemoteOperationalError as u64).to_bits(),
            ),
            syn_rdma_disabled: Constant::new((Syndrome::RdmaDisabled as u64).to_bits()),
            send_window: Constant::new((SEND_WINDOW as u64).to_bits()),
        }
    }
}

impl NackGenerator {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for NackGenerator {
    #[hdl_gen]
    fn update(&mut self) {
        self.is_send.next = self.s_class.val().is_send;
        self.is_write.next = self.s_class.val().is_write;
        self.is_read.next = self.s_class.val().is_read;
        self.is_atomic.next = self.s_class.val().is_atomic;
        self.is_rdma.next = self.is_write.val() | self.is_read.val() | self.is_atomic.val();
        self.consumes.next = self.s_class.val().consumes;
        // Rule 2: resync, then classify against the (possibly new) expected PSN.
        self.in_window.next =
            (self.behind.val() != 0) & (self.behind.val() <= self.send_window.val());
        self.resync_now.next =
            !self.synced.val() | (self.s_class.val().resync & !self.in_window.val());
        // Against the effective expected PSN (this PSN after a resync, else the expected
        // one): the distance is 0 after a resync and `behind` otherwise, so the
        // classification needs no second subtraction in series with the first.
        self.sequential.next = self.resync_now.val() | (self.behind.val() == 0);
        self.ahead.next = !self.resync_now.val() & self.behind.val().get_bit(23);
        // The window entry of a duplicate `behind` PSNs back (1..=8), unrolled.
        self.refused_code.next = 0.into();
        if self.behind.val() == 1 {
            self.refused_code.next = self.refused_window.val().get_bits::<3>(0);
        }
        if self.behind.val() == 2 {
            self.refused_code.next = self.refused_window.val().get_bits::<3>(3);
        }
        if self.behind.val() == 3 {
            self.refused_code.next = self.refused_window.val().get_bits::<3>(6);
        }
        if self.behind.val() == 4 {
            self.refused_code.next = self.refused_window.val().get_bits::<3>(9);
        }
        if self.behind.val() == 5 {
            self.refused_code.next = self.refused_window.val().get_bits::<3>(12);
        }
        if self.behind.val() == 6 {
            self.refused_code.next = self.refused_window.val().get_bits::<3>(15);
        }
        if self.behind.val() == 7 {
            self.refused_code.next = self.refused_window.val().get_bits::<3>(18);
        }
        if self.behind.val() == 8 {
            self.refused_code.next = self.refused_window.val().get_bits::<3>(21);
        }
        self.refused_hit.next = self.refused_code.val().any();
        // Refusal code 1 is RECEIVER_NOT_READY, code c >= 2 the syndrome 0x60 + c - 1
        // (`Syndrome::refusal_code`: the SEQUENCE_ERROR code's high nibble, low nibble c - 1).
        self.refused_syndrome.next = self.syn_receiver_not_ready.val();
        if self.refused_code.val() != 1 {
            self.refused_syndrome.next =
                bit_cast::<8, 3>(self.refused_code.val() - 1) | self.syn_sequence_error.val();
        }
        self.rs_before.next = self.rs_valid.val() & !self.sequential.val() & self.behind_rs.val();
        self.ack_psn.next = self.expected_psn.val() - 1;
        if self.refused_window.val().get_bits::<3>(0).any() {
            self.ack_psn.next = self.psn.val();
        }
        self.request_ok.next = self.s_class.val().request_ok;
        // The rules as parallel terms (one group applies; see "Rule order"), so that no
        // output waits for a priority chain: rule 1 passed, then the PSN's class.
        self.req_ok.next = self.qp_exists.val()
            & self.qp_enabled.val()
            & self.source_match.val()
            & (self.is_send.val() | self.is_rdma.val());
        self.bad_psn.next = self.ahead.val() | self.rs_before.val();
        // Ahead of the expected PSN or before the resync point.
        self.g_seq.next = self.req_ok.val() & self.bad_psn.val();
        // The duplicate of a refused PSN.
        self.g_ref.next = self.req_ok.val()
            & !self.bad_psn.val()
            & !self.sequential.val()
            & self.refused_hit.val();
        // Any other duplicate but a READ.
        self.g_dup.next = self.req_ok.val()
            & !self.bad_psn.val()
            & !self.sequential.val()
            & !self.refused_hit.val()
            & !self.is_read.val();
        // In sequence, or a duplicate READ: rules 3-7.
        self.g_rest.next = self.req_ok.val()
            & !self.bad_psn.val()
            & (self.sequential.val() | (self.is_read.val() & !self.refused_hit.val()));
        self.refused_rest.next = !self.enable_send_recv.val()
            | (self.is_rdma.val()
                & (!self.enable_rdma.val() | !self.request_ok.val() | !self.access_ok.val()))
            | (self.consumes.val() & self.rq_empty.val());
        self.v_nack.next = (self.g_seq.val() & !self.nak_sent.val())
            | self.g_ref.val()
            | (self.g_rest.val() & self.refused_rest.val());
        // (A "duplicate" beyond the window was never received in this sequence: a
        // requester that restarted without RESYNC. Its ACK names `expected - 1`, which it
        // ignores as foreign; unless that PSN was refused: dropped.)
        self.v_duplicate.next = (self.g_dup.val()
            & ((self.is_atomic.val() & self.atomic_match.val())
                | (!self.is_atomic.val()
                    & (self.in_window.val() | !self.refused_window.val().get_bits::<3>(0).any()))))
            | (self.g_rest.val() & !self.refused_rest.val() & !self.sequential.val());
        self.v_execute.next = self.g_rest.val() & !self.refused_rest.val() & self.sequential.val();
        self.v_drop.next = !(self.v_nack.val() | self.v_duplicate.val() | self.v_execute.val());
        // The syndrome: the NACK's, or INVALID_REQUEST for a SEND longer than its buffer.
        self.code.next = 0.into();
        if self.g_seq.val() & !self.nak_sent.val() {
            self.code.next = self.syn_sequence_error.val();
        }
        if self.g_ref.val() {
            self.code.next = self.refused_syndrome.val();
        }
        if self.g_rest.val() {
            if !self.enable_send_recv.val() {
                self.code.next = self.syn_remote_operational_error.val();
            } else if self.is_rdma.val() & !self.enable_rdma.val() {
                self.code.next = self.syn_rdma_disabled.val();
            } else if self.is_rdma.val() & !self.request_ok.val() {
                self.code.next = self.syn_invalid_request.val();
            } else if self.is_rdma.val() & !self.access_ok.val() {
                self.code.next = self.syn_remote_access_error.val();
            } else if self.consumes.val() & self.rq_empty.val() {
                self.code.next = self.syn_receiver_not_ready.val();
            } else if self.is_send.val() & self.length_error.val() {
                self.code.next = self.syn_invalid_request.val();
            }
        }
        self.reached_access.next = self.g_rest.val()
            & self.is_rdma.val()
            & self.enable_send_recv.val()
            & self.enable_rdma.val()
            & self.request_ok.val();
        // The owed-slot rule: anything but an ACK needs a free slot (a NACK, the NACK of
        // a too-long SEND, a READ or atomic response).
        self.owes.next = self.v_nack.val()
            | (self.v_execute.val() & self.is_send.val() & self.length_error.val())
            | ((self.v_duplicate.val() | self.v_execute.val())
                & (self.is_read.val() | self.is_atomic.val()));
        // (A duplicate before the resync point is a duplicate here: dropped.)
        self.fresh.next =
            !self.resync_now.val() & (self.sequential.val() | self.behind.val().get_bit(23));
        self.slot_hit.next = self.owes.val() & self.slot_busy.val();
        self.action.next = 2.into();
        if self.v_nack.val() {
            self.action.next = 3.into();
        }
        if self.v_duplicate.val() {
            self.action.next = 1.into();
        }
        if self.v_execute.val() {
            self.action.next = 0.into();
        }
        self.syndrome.next = self.code.val();
        // Every drop is counted but the silent one after the SEQUENCE_ERROR NACK.
        self.count_dropped.next = self.v_drop.val() & !(self.g_seq.val() & self.nak_sent.val());
        self.in_sequence.next = self.sequential.val();
        self.slot_refused.next = false;
        if self.slot_hit.val() {
            if self.fresh.val() {
                self.action.next = 3.into();
                self.syndrome.next = self.syn_sequence_error.val();
                self.in_sequence.next = false;
                self.slot_refused.next = true;
            } else {
                self.action.next = 2.into();
                self.syndrome.next = 0.into();
                self.count_dropped.next = true;
            }
        }
        self.resynced.next = self.resync_now.val();
        self.check_access.next = self.reached_access.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::settle;
    use nic_abi::{psn_distance, Syndrome, PSN_MASK, SEND_WINDOW};
    use proptest::prelude::*;

    /// Every input of the generator, as plain Rust values.
    #[derive(Clone, Copy, Debug, Default)]
    pub(crate) struct Inputs {
        pub opcode: u8,
        pub qp_exists: bool,
        pub qp_enabled: bool,
        pub source_match: bool,
        pub psn: u32,
        pub expected_psn: u32,
        pub synced: bool,
        pub resync: bool,
        pub nak_sent: bool,
        pub atomic_match: bool,
        pub enable_send_recv: bool,
        pub enable_rdma: bool,
        pub vaddr_low: u8,
        pub msg_length: u32,
        pub dma_length: u32,
        pub access_ok: bool,
        pub rq_empty: bool,
        pub length_error: bool,
        pub slot_busy: bool,
        /// The refusal window: entry k-1 is PSN `expected_psn - k`.
        pub refused: [Option<Syndrome>; 8],
        pub rs_valid: bool,
        pub rs_psn: u32,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Decision {
        Execute { length_error: bool },
        Duplicate,
        Drop { counted: bool },
        Nack(Syndrome),
    }

    /// The responder rules written out as a plain sequence of early returns (independent
    /// of the RTL's if-chain), returning the decision after the slot rule, whether the
    /// access check matters and whether the slot rule turned the request away with a
    /// SEQUENCE_ERROR NACK.
    pub(crate) fn reference(i: &Inputs) -> (Decision, bool /* check_access */, bool) {
        use Decision::*;
        let op = i.opcode;
        let send = op == 0x00 || op == 0x01;
        let write = op == 0x10 || op == 0x11;
        let read = op == 0x12;
        let atomic = op == 0x13 || op == 0x14;
        let rdma = write || read || atomic;
        let needs_rqe = send || op == 0x11;
        let decide = || -> (Decision, bool) {
            if !(i.qp_exists && i.qp_enabled && i.source_match) || !(send || rdma) {
                return (Drop { counted: true }, false);
            }
            let back = psn_distance(i.expected_psn, i.psn);
            let replayed_resync = i.resync && (1..=SEND_WINDOW).contains(&back);
            let expected = if !i.synced || (i.resync && !replayed_resync) {
                i.psn
            } else {
                i.expected_psn
            };
            let d = psn_distance(expected, i.psn);
            // A duplicate before the resync point is treated as ahead.
            let before_resync = d != 0 && i.rs_valid && d > psn_distance(i.expected_psn, i.rs_psn);
            if d >= 1 << 23 || before_resync {
                return if i.nak_sent {
                    (Drop { counted: false }, false)
                } else {
                    (Nack(Syndrome::SequenceError), false)
                };
            }
            let duplicate = d != 0;
            if let Some(s) = i
                .refused
                .get((d as usize).wrapping_sub(1))
                .copied()
                .flatten()
            {
                return (Nack(s), false);
            }
            if duplicate && !read {
                if atomic && !i.atomic_match {
                    return (Drop { counted: true }, false);
                }
                // Beyond the window: never received; not ACKed at its own PSN.
                if !atomic && d > SEND_WINDOW && i.refused[0].is_some() {
                    return (Drop { counted: true }, false);
                }
                return (Duplicate, false);
            }
            if !i.enable_send_recv {
                return (Nack(Syndrome::RemoteOperationalError), false);
            }
            if rdma && !i.enable_rdma {
                return (Nack(Syndrome::RdmaDisabled), false);
            }
            if rdma {
                let aligned = i.vaddr_low == 0;
                let lengths = if atomic {
                    i.dma_length == 8 && i.msg_length == 16
                } else if write {
                    i.msg_length == i.dma_length
                } else {
                    true
                };
                if !aligned || !lengths {
                    return (Nack(Syndrome::InvalidRequest), false);
                }
                if !i.access_ok {
                    return (Nack(Syndrome::RemoteAccessError), true);
                }
            }
            if needs_rqe && i.rq_empty {
                return (Nack(Syndrome::ReceiverNotReady), rdma);
            }
            if duplicate {
                (Duplicate, rdma)
            } else {
                (
                    Execute {
                        length_error: send && i.length_error,
                    },
                    rdma,
                )
            }
        };
        let (d, check) = decide();
        let owes_more_than_ack = match d {
            Nack(_) => true,
            Execute { length_error } => length_error || read || atomic,
            Duplicate => read || atomic,
            Drop { .. } => false,
        };
        // The owed-slot rule: a request at or ahead of the expected PSN (not a resync)
        // is answered SEQUENCE_ERROR, not applied; a duplicate or a resync is dropped.
        let back = psn_distance(i.expected_psn, i.psn);
        let replayed_resync = i.resync && (1..=SEND_WINDOW).contains(&back);
        let resyncs = !i.synced || (i.resync && !replayed_resync);
        let fresh = !resyncs && (back == 0 || back >= 1 << 23);
        if owes_more_than_ack && i.slot_busy {
            if fresh {
                (Nack(Syndrome::SequenceError), check, true)
            } else {
                (Drop { counted: true }, check, false)
            }
        } else {
            (d, check, false)
        }
    }

    fn apply(uut: &mut NackGenerator, i: &Inputs) {
        // The class the engine receives: the header's, decoded (`OutcomeClass::of`).
        let header = crate::common::CellOutcomeHeader {
            opcode: (i.opcode as u64).to_bits(),
            vaddr: (i.vaddr_low as u64).to_bits(),
            msg_length: (i.msg_length as u64).to_bits(),
            dma_length: (i.dma_length as u64).to_bits(),
            ..Default::default()
        };
        uut.s_class.next = OutcomeClass::of(&header);
        uut.qp_exists.next = i.qp_exists;
        uut.qp_enabled.next = i.qp_enabled;
        uut.source_match.next = i.source_match;
        uut.psn.next = (i.psn as u64).to_bits();
        uut.expected_psn.next = (i.expected_psn as u64).to_bits();
        uut.synced.next = i.synced;
        uut.s_class.next.resync = i.resync;
        uut.nak_sent.next = i.nak_sent;
        uut.atomic_match.next = i.atomic_match;
        uut.enable_send_recv.next = i.enable_send_recv;
        uut.enable_rdma.next = i.enable_rdma;
        uut.access_ok.next = i.access_ok;
        uut.rq_empty.next = i.rq_empty;
        uut.length_error.next = i.length_error;
        uut.slot_busy.next = i.slot_busy;
        let window = i.refused.iter().enumerate().fold(0u64, |w, (k, s)| {
            w | (s.and_then(Syndrome::refusal_code).unwrap_or(0) as u64) << (3 * k)
        });
        uut.refused_window.next = window.to_bits();
        uut.rs_valid.next = i.rs_valid;
        let distance = |a: u32, b: u32| (a.wrapping_sub(b) & PSN_MASK) as u64;
        uut.behind.next = distance(i.expected_psn, i.psn).to_bits();
        uut.behind_rs.next = distance(i.expected_psn, i.psn) > distance(i.expected_psn, i.rs_psn);
        settle(uut);
    }

    fn check(uut: &mut NackGenerator, i: &Inputs) {
        apply(uut, i);
        let (want, want_check, want_slot_refused) = reference(i);
        let action = uut.action.val().to_u64();
        let syndrome = uut.syndrome.val().to_u64() as u8;
        let got = match action {
            ACTION_EXECUTE => {
                assert!(
                    syndrome == 0 || syndrome == Syndrome::InvalidRequest as u8,
                    "{i:?}: execute with syndrome {syndrome:#x}"
                );
                Decision::Execute {
                    length_error: syndrome != 0,
                }
            }
            ACTION_DUPLICATE => Decision::Duplicate,
            ACTION_DROP => Decision::Drop {
                counted: uut.count_dropped.val(),
            },
            _ => Decision::Nack(Syndrome::from_code(syndrome).expect("known syndrome")),
        };
        assert_eq!(got, want, "decision for {i:?}");
        assert_eq!(
            uut.slot_refused.val(),
            want_slot_refused,
            "slot_refused for {i:?}"
        );
        if action != ACTION_DROP {
            assert_eq!(uut.check_access.val(), want_check, "check_access for {i:?}");
        }
        if action != ACTION_EXECUTE && action != ACTION_NACK {
            assert!(
                syndrome == 0,
                "{i:?}: syndrome {syndrome:#x} with action {action}"
            );
        }
        if got == Decision::Duplicate && !matches!(i.opcode, 0x12..=0x14) {
            // No ACK names a refused PSN: the one before the expected PSN, unless that
            // was refused, then the duplicate's own (not refused, or it was NACKed).
            let acked = if i.refused[0].is_some() {
                i.psn
            } else {
                i.expected_psn.wrapping_sub(1) & PSN_MASK
            };
            assert_eq!(
                uut.ack_psn.val().to_u64() as u32,
                acked,
                "ack_psn for {i:?}"
            );
        }
        if !matches!(got, Decision::Drop { .. }) {
            // The PSN outputs the engine uses for its state update.
            let back = psn_distance(i.expected_psn, i.psn);
            let resync = !i.synced || (i.resync && !(1..=SEND_WINDOW).contains(&back));
            assert_eq!(uut.resynced.val(), resync, "resynced for {i:?}");
            let expected = if resync { i.psn } else { i.expected_psn };
            // A request the slot rule turns away consumes nothing.
            assert_eq!(
                uut.in_sequence.val(),
                expected == i.psn && !want_slot_refused,
                "in_sequence {i:?}"
            );
        }
    }

    const OPCODES: [u8; 11] = [
        0x00, 0x01, 0x10, 0x11, 0x12, 0x13, 0x14, 0x20, 0x30, 0x31, 0x05,
    ];

    /// PSN relations that matter: expected, just behind, the end of the RESYNC window,
    /// just past it, the last duplicate, the first ahead, just ahead; with wrap-around.
    fn psn_cases() -> Vec<(u32, u32)> {
        let mut v = vec![];
        for expected in [0u32, 5, 0x80_0000, PSN_MASK] {
            for back in [0u32, 1, 8, 9, (1 << 23) - 1, 1 << 23, PSN_MASK] {
                v.push((expected.wrapping_sub(back) & PSN_MASK, expected));
            }
        }
        v
    }

    /// The final NACK syndromes a refusal window holds.
    const FINAL: [Syndrome; 5] = [
        Syndrome::RemoteAccessError,
        Syndrome::ReceiverNotReady,
        Syndrome::InvalidRequest,
        Syndrome::RemoteOperationalError,
        Syndrome::RdmaDisabled,
    ];

    /// The refusal windows of the exhaustive test, for a PSN `back` before the expected
    /// one: 1, this PSN refused; 2, every other PSN of the window refused (each with its
    /// own syndrome); otherwise none.
    fn window(case: u32, back: u32) -> [Option<Syndrome>; 8] {
        let mut w = [None; 8];
        for (k, entry) in w.iter_mut().enumerate() {
            let this = k as u32 + 1 == back;
            if (case == 1 && this) || (case == 2 && !this) {
                *entry = Some(FINAL[k % FINAL.len()]);
            }
        }
        w
    }

    /// Every combination of the 13 boolean inputs, for every opcode class and PSN
    /// relation, with request shapes that pass and fail rule 5.
    #[test]
    fn matches_reference_exhaustively() {
        let mut uut = NackGenerator::new();
        uut.connect_all();
        let mut n = 0u64;
        for &opcode in &OPCODES {
            // (vaddr_low, msg_length, dma_length): a good request, then the bad shapes.
            let shapes: &[(u8, u32, u32)] = match opcode {
                0x13 | 0x14 => &[(0, 16, 8), (4, 16, 8), (0, 16, 16), (0, 8, 8)],
                0x10 | 0x11 => &[(0, 40, 40), (1, 40, 40), (0, 40, 48)],
                0x12 => &[(0, 0, 64), (2, 0, 64)],
                _ => &[(0, 100, 0)],
            };
            for &(psn, expected_psn) in &psn_cases() {
                // No refusal; this PSN refused; every other PSN of the window refused;
                // no refusal but a resync point at this PSN, or after it.
                for refused in 0..5u32 {
                    for &(vaddr_low, msg_length, dma_length) in shapes {
                        for bits in 0u32..1 << 13 {
                            let b = |k: u32| bits >> k & 1 != 0;
                            let i = Inputs {
                                opcode,
                                qp_exists: b(0) || b(1) || b(2), // rule 1 fails in 1/8 only
                                qp_enabled: !(b(0) && b(1) && !b(2)),
                                source_match: !(b(0) && !b(1) && b(2)),
                                psn,
                                expected_psn,
                                synced: b(3),
                                resync: b(4),
                                nak_sent: b(5),
                                atomic_match: b(6),
                                enable_send_recv: b(7),
                                enable_rdma: b(8),
                                vaddr_low,
                                msg_length,
                                dma_length,
                                access_ok: b(9),
                                rq_empty: b(10),
                                length_error: b(11),
                                slot_busy: b(12),
                                refused: window(refused, psn_distance(expected_psn, psn)),
                                rs_valid: refused >= 3,
                                rs_psn: (psn + refused.max(3) - 3) & PSN_MASK,
                            };
                            check(&mut uut, &i);
                            n += 1;
                        }
                    }
                }
            }
        }
        assert!(n > 1_000_000, "{n} cases");
    }

    /// Rule 1's three checks one at a time (the exhaustive test folds them).
    #[test]
    fn each_queue_pair_check_drops() {
        let mut uut = NackGenerator::new();
        uut.connect_all();
        for k in 0..3 {
            let i = Inputs {
                opcode: 0x10,
                qp_exists: k != 0,
                qp_enabled: k != 1,
                source_match: k != 2,
                synced: true,
                enable_send_recv: true,
                enable_rdma: true,
                msg_length: 8,
                dma_length: 8,
                access_ok: true,
                ..Default::default()
            };
            check(&mut uut, &i);
            assert_eq!(uut.action.val().to_u64(), ACTION_DROP);
            assert!(uut.count_dropped.val());
        }
    }

    /// Each syndrome the generator produces, from an otherwise executable request.
    #[test]
    fn each_syndrome_has_a_case() {
        let mut uut = NackGenerator::new();
        uut.connect_all();
        let good = Inputs {
            opcode: 0x11,
            qp_exists: true,
            qp_enabled: true,
            source_match: true,
            psn: 10,
            expected_psn: 10,
            synced: true,
            enable_send_recv: true,
            enable_rdma: true,
            msg_length: 64,
            dma_length: 64,
            access_ok: true,
            ..Default::default()
        };
        check(&mut uut, &good);
        assert_eq!(uut.action.val().to_u64(), ACTION_EXECUTE);
        let cases: [(Inputs, Syndrome); 6] = [
            (Inputs { psn: 12, ..good }, Syndrome::SequenceError),
            (
                Inputs {
                    enable_send_recv: false,
                    ..good
                },
                Syndrome::RemoteOperationalError,
            ),
            (
                Inputs {
                    enable_rdma: false,
                    ..good
                },
                Syndrome::RdmaDisabled,
            ),
            (
                Inputs {
                    vaddr_low: 4,
                    ..good
                },
                Syndrome::InvalidRequest,
            ),
            (
                Inputs {
                    access_ok: false,
                    ..good
                },
                Syndrome::RemoteAccessError,
            ),
            (
                Inputs {
                    rq_empty: true,
                    ..good
                },
                Syndrome::ReceiverNotReady,
            ),
        ];
        for (i, s) in cases {
            check(&mut uut, &i);
            assert_eq!(uut.action.val().to_u64(), ACTION_NACK, "{s}");
            assert_eq!(uut.syndrome.val().to_u64() as u8, s as u8, "{s}");
        }
        let send = Inputs {
            opcode: 0x00,
            length_error: true,
            ..good
        };
        check(&mut uut, &send);
        assert_eq!(uut.action.val().to_u64(), ACTION_EXECUTE);
        assert_eq!(
            uut.syndrome.val().to_u64() as u8,
            Syndrome::InvalidRequest as u8
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// Random PSNs, lengths and flags: any 24-bit distance, any length pair.
        #[test]
        fn matches_reference_on_random_inputs(
            opcode in prop::sample::select(OPCODES.to_vec()),
            bits in any::<u32>(),
            psn in 0u32..=PSN_MASK,
            expected_psn in 0u32..=PSN_MASK,
            near in any::<bool>(),
            back in 0u32..20,
            vaddr_low in 0u8..8,
            msg_length in prop_oneof![Just(16u32), Just(8), any::<u32>()],
            dma_length in prop_oneof![Just(8u32), Just(16), any::<u32>()],
            refused in prop::array::uniform8(prop::option::of(prop::sample::select(FINAL.to_vec()))),
            rs_back in 0u32..10,
        ) {
            let b = |k: u32| bits >> k & 1 != 0;
            let psn = if near { expected_psn.wrapping_sub(back) & PSN_MASK } else { psn };
            let i = Inputs {
                opcode,
                qp_exists: b(0) || b(13),
                qp_enabled: b(1) || b(14),
                source_match: b(2) || b(15),
                psn,
                expected_psn,
                synced: b(3),
                resync: b(4),
                nak_sent: b(5),
                atomic_match: b(6),
                enable_send_recv: b(7) || b(16),
                enable_rdma: b(8) || b(17),
                vaddr_low: if b(18) { 0 } else { vaddr_low },
                msg_length: if b(19) { dma_length } else { msg_length },
                dma_length,
                access_ok: b(9),
                rq_empty: b(10),
                length_error: b(11),
                slot_busy: b(12),
                refused,
                rs_valid: b(22),
                rs_psn: if b(23) { psn } else { expected_psn.wrapping_sub(rs_back) & PSN_MASK },
            };
            let mut uut = NackGenerator::new();
            uut.connect_all();
            check(&mut uut, &i);
        }
    }

    #[test]
    fn synthesises() {
        let mut uut = NackGenerator::new();
        uut.connect_all();
        let v = generate_verilog(&uut);
        yosys_validate("nic_rtl_nack_generator", &v).expect("yosys accepts NackGenerator");
    }
}
