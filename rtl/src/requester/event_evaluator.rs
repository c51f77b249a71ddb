//! `EventEvaluator`: the send engine's judgement of one acknowledgement event (or local
//! completion) against a queue pair's entry: which WQEs complete and with what status,
//! where transmission resumes, the retry count, and whether it is a retransmission.
//!
//! Follows `docs/nic-architecture.md` ("Reliability: queue pairs, PSNs, go-back-N",
//! "Refused PSNs", "Responder restarts") and "SendQueueEngine: design notes" in
//! `docs/nic-blocks.md`; the rules are listed in the `SendQueueEngine` doc comment
//! (final NACK, foreign NACK, implied NAK, refused PSNs, responder restarts). Its parent
//! holds the inputs for two clocks (the evaluation's Derive and Exec clocks) and applies
//! the outputs in the second.
//!
//! Ports (no handshake: the inputs are sampled at every rising edge, the outputs in the
//! clock after it are the decision for them):
//! - `clock`; `cfg_retry_limit` (4).
//! - The entry: `s_qp_valid` (the QP is below `queue_pairs`), `s_una`, `s_next`, `s_pi`
//!   (24 each: `sq_una`, `sq_next`, `sq_pi`), `s_retry` (4, the stored retry count),
//!   `s_una_rsp` (`sq_una` is a READ or atomic already sent).
//! - The event: `s_evt_psn` (24), `s_evt_syndrome` (8, 0 = ACK), `s_evt_response`,
//!   `s_evt_resync`; or a local completion: `s_evt_local` with `s_evt_local_status` (8).
//! - The completion job: `m_job_valid`, `m_job_succ` (4, completions of the leading run),
//!   `m_job_run_status` (8, their status: 0 or RESPONDER_RESTARTED), `m_job_final` (one more
//!   completion), `m_job_status` (8), `m_job_resync` (it sets the QP's resync flag).
//! - The write-back: `m_restart` (progress or go-back: clear `waiting`, restart the timer),
//!   `m_set_next` with `m_next` (24, the new `sq_next`), `m_set_retry` with `m_retry` (4),
//!   `m_set_drain` (the QP drains: RETRY_EXCEEDED); `m_retx` (a go-back-N event, counted
//!   as a retransmission).
//!
//! Rules, for an event (not local) with `d = (psn - sq_una) mod 2^24`:
//! - hit: `d < min(sq_pi - sq_una, send_window)` and the QP valid; not an implied NAK
//!   (`s_una_rsp`, no response, no RESYNC for a later PSN, and an ACK or `d != 0`).
//!   Completes `d` WQEs (status RESPONDER_RESTARTED if RESYNC and `d != 0`, else success),
//!   restarts, clears the retry count. Success (a response or syndrome 0): PSN `d` completes
//!   too (in the leading run, or as the final success after a restarted run); resume after
//!   it when it is at or past `sq_next`. Retryable NACK (SEQUENCE_ERROR, CRC): go back to
//!   the PSN, retry count 1 (`retry + 1` when `d = 0`), a retransmission; beyond the limit
//!   the PSN completes with RETRY_EXCEEDED, `sq_next = psn + 1`, the QP drains, count 0.
//!   Any other NACK: the PSN completes with the syndrome (resync flag only for PORT_DOWN),
//!   `sq_next = psn + 1`, a retransmission when `sq_next` was not already there.
//! - foreign (NACK, messages outstanding, `d > send_window`, and retryable or `d` below
//!   `2^24 - send_window`), or a hit that is an implied NAK with messages outstanding: go
//!   back to `sq_una`, restart, a retransmission; a retryable NACK or an implied NAK counts
//!   a retry (`retry + 1`, never cleared first); beyond the limit `sq_una` completes with
//!   RETRY_EXCEEDED, `sq_next = sq_una + 1`, the QP drains, count 0.
//! - anything else: nothing.
//! A local completion completes `sq_una` with its status (resync flag set) when it is for
//! `sq_una`, the QP is valid and messages are outstanding; it writes nothing back.
//!
//! Latency: one clock (every input is registered, with the PSN distances and the
//! classification; the outputs are decided from those registers). Throughput: one
//! evaluation per clock. Limits: `send_window` in 1..=15 (a job's leading run and final
//! completion fit the 4-bit count).

use crate::sim::ClockedBlock;
use nic_abi::{CompletionStatus, Syndrome};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct EventEvaluator {
    pub clock: Signal<In, Clock>,
    pub cfg_retry_limit: Signal<In, Bits<4>>,
    pub s_qp_valid: Signal<In, Bit>,
    pub s_una: Signal<In, Bits<24>>,
    pub s_next: Signal<In, Bits<24>>,
    pub s_pi: Signal<In, Bits<24>>,
    pub s_retry: Signal<In, Bits<4>>,
    pub s_una_rsp: Signal<In, Bit>,
    pub s_evt_psn: Signal<In, Bits<24>>,
    pub s_evt_syndrome: Signal<In, Bits<8>>,
    pub s_evt_response: Signal<In, Bit>,
    pub s_evt_resync: Signal<In, Bit>,
    pub s_evt_local: Signal<In, Bit>,
    pub s_evt_local_status: Signal<In, Bits<8>>,
    pub m_job_valid: Signal<Out, Bit>,
    pub m_job_succ: Signal<Out, Bits<4>>,
    pub m_job_run_status: Signal<Out, Bits<8>>,
    pub m_job_final: Signal<Out, Bit>,
    pub m_job_status: Signal<Out, Bits<8>>,
    pub m_job_resync: Signal<Out, Bit>,
    pub m_restart: Signal<Out, Bit>,
    pub m_set_next: Signal<Out, Bit>,
    pub m_next: Signal<Out, Bits<24>>,
    pub m_set_retry: Signal<Out, Bit>,
    pub m_retry: Signal<Out, Bits<4>>,
    pub m_set_drain: Signal<Out, Bit>,
    pub m_retx: Signal<Out, Bit>,
    // Combinational: derived from the inputs.
    d_out: Signal<Local, Bits<24>>,
    d_posted: Signal<Local, Bits<24>>,
    d_evt: Signal<Local, Bits<24>>,
    outstanding: Signal<Local, Bit>,
    success: Signal<Local, Bit>,
    retryable: Signal<Local, Bit>,
    hit: Signal<Local, Bit>,
    restarted: Signal<Local, Bit>,
    retry_inc: Signal<Local, Bits<5>>,
    psn_p1: Signal<Local, Bits<24>>,
    // Registered: the classification and the values the decision needs.
    r_local: DFF<Bit>,
    r_local_status: DFF<Bits<8>>,
    r_local_hit: DFF<Bit>,
    r_hit: DFF<Bit>,
    r_ahead: DFF<Bit>,
    r_foreign: DFF<Bit>,
    r_restarted: DFF<Bit>,
    r_implied: DFF<Bit>,
    r_outstanding: DFF<Bit>,
    r_success: DFF<Bit>,
    r_retryable: DFF<Bit>,
    r_run: DFF<Bits<4>>,
    r_retry_new: DFF<Bits<4>>,
    r_retry_exceeded: DFF<Bit>,
    r_retry_kept: DFF<Bits<4>>,
    r_retry_kept_exceeded: DFF<Bit>,
    r_psn: DFF<Bits<24>>,
    r_psn_p1: DFF<Bits<24>>,
    r_una: DFF<Bits<24>>,
    r_una_p1: DFF<Bits<24>>,
    /// `sq_next != psn + 1`.
    r_next_moves: DFF<Bit>,
    r_syndrome: DFF<Bits<8>>,
    send_window: Constant<Bits<24>>,
    /// `2^24 - send_window`: a distance at or above it lies at most `send_window` before
    /// `sq_una`.
    window_before: Constant<Bits<24>>,
    syn_sequence: Constant<Bits<8>>,
    syn_port_down: Constant<Bits<8>>,
    syn_crc: Constant<Bits<8>>,
    st_retry: Constant<Bits<8>>,
    st_restarted: Constant<Bits<8>>,
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.to_bits())
}

impl EventEvaluator {
    /// An evaluator for a send window of `send_window` unacknowledged messages.
    ///
    /// Panics when `send_window` is not in 1..=15.
    pub fn new(send_window: usize) -> Self {
        assert!(
            (1..=15).contains(&send_window),
            "EventEvaluator: send_window must be between 1 and 15, got {send_window}"
        );
        EventEvaluator {
            clock: Default::default(),
            cfg_retry_limit: Default::default(),
            s_qp_valid: Default::default(),
            s_una: Default::default(),
            s_next: Default::default(),
            s_pi: Default::default(),
            s_retry: Default::default(),
            s_una_rsp: Default::default(),
            s_evt_psn: Default::default(),
            s_evt_syndrome: Default::default(),
            s_evt_response: Default::default(),
            s_evt_resync: Default::default(),
            s_evt_local: Default::default(),
            s_evt_local_status: Default::default(),
            m_job_valid: Default::default(),
            m_job_succ: Default::default(),
            m_job_run_status: Default::default(),
            m_job_final: Default::default(),
            m_job_status: Default::default(),
            m_job_resync: Default::default(),
            m_restart: Default::default(),
            m_set_next: Default::default(),
            m_next: Default::default(),
            m_set_retry: Default::default(),
            m_retry: Default::default(),
            m_set_drain: Default::default(),
            m_retx: Default::default(),
            d_out: Default::default(),
            d_posted: Default::default(),
            d_evt: Default::default(),
            outstanding: Default::default(),
            success: Default::default(),
            retryable: Default::default(),
            hit: Default::default(),
            restarted: Default::default(),
            retry_inc: Default::default(),
            psn_p1: Default::default(),
            r_local: Default::default(),
            r_local_status: Default::default(),
            r_local_hit: Default::default(),
            r_hit: Default::default(),
            r_ahead: Default::default(),
            r_foreign: Default::default(),
            r_restarted: Default::default(),
            r_implied: Default::default(),
            r_outstanding: Default::default(),
            r_success: Default::default(),
            r_retryable: Default::default(),
            r_run: Default::default(),
            r_retry_new: Default::default(),
            r_retry_exceeded: Default::default(),
            r_retry_kept: Default::default(),
            r_retry_kept_exceeded: Default::default(),
            r_psn: Default::default(),
            r_psn_p1: Default::default(),
            r_una: Default::default(),
            r_una_p1: Default::default(),
            r_next_moves: Default::default(),
            r_syndrome: Default::default(),
            send_window: k(send_window as u64),
            window_before: k((1 << 24) - send_window as u64),
            syn_sequence: k(Syndrome::SequenceError as u64),
            syn_port_down: k(Syndrome::PortDown as u64),
            syn_crc: k(Syndrome::CrcOrMalformed as u64),
            st_retry: k(CompletionStatus::RETRY_EXCEEDED as u64),
            st_restarted: k(CompletionStatus::RESPONDER_RESTARTED as u64),
        }
    }
}

impl Logic for EventEvaluator {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            r_local,
            r_local_status,
            r_local_hit,
            r_hit,
            r_ahead,
            r_foreign,
            r_restarted,
            r_implied,
            r_outstanding,
            r_success,
            r_retryable,
            r_run,
            r_retry_new,
            r_retry_exceeded,
            r_retry_kept,
            r_retry_kept_exceeded,
            r_psn,
            r_psn_p1,
            r_una,
            r_una_p1,
            r_next_moves,
            r_syndrome
        );
        // ---- Classification (registered) ----
        self.d_out.next = self.s_next.val() - self.s_una.val();
        self.d_posted.next = self.s_pi.val() - self.s_una.val();
        self.d_evt.next = self.s_evt_psn.val() - self.s_una.val();
        self.outstanding.next = self.s_una.val() != self.s_next.val();
        self.psn_p1.next = self.s_evt_psn.val() + 1;
        self.success.next = self.s_evt_response.val() | (self.s_evt_syndrome.val() == 0);
        self.retryable.next = !self.success.val()
            & ((self.s_evt_syndrome.val() == self.syn_sequence.val())
                | (self.s_evt_syndrome.val() == self.syn_crc.val()));
        // An answer is for a message this QP sent: any PSN from sq_una up to the last one
        // it can have sent (`d_evt < min(d_posted, send_window)` as two compares side by
        // side), including PSNs at or after sq_next (sent before a go-back).
        self.hit.next = self.s_qp_valid.val()
            & (self.d_evt.val() < self.d_posted.val())
            & (self.d_evt.val() < self.send_window.val());
        self.restarted.next = self.s_evt_resync.val() & (self.d_evt.val() != 0);
        self.retry_inc.next = bit_cast::<5, 4>(self.s_retry.val()) + 1;
        self.r_local.d.next = self.s_evt_local.val();
        self.r_local_status.d.next = self.s_evt_local_status.val();
        self.r_local_hit.d.next = self.s_qp_valid.val()
            & (self.s_una.val() == self.s_evt_psn.val())
            & self.outstanding.val();
        self.r_hit.d.next = self.hit.val();
        self.r_ahead.d.next = self.d_evt.val() >= self.d_out.val();
        // Foreign: a NACK more than send_window after sq_una, or before it (a final NACK
        // up to send_window before sq_una is stale).
        self.r_foreign.d.next = self.s_qp_valid.val()
            & self.outstanding.val()
            & !self.success.val()
            & (self.d_evt.val() > self.send_window.val())
            & (self.retryable.val() | (self.d_evt.val() < self.window_before.val()));
        self.r_restarted.d.next = self.restarted.val();
        self.r_implied.d.next = self.s_una_rsp.val()
            & !self.s_evt_response.val()
            & !self.restarted.val()
            & ((self.s_evt_syndrome.val() == 0) | (self.d_evt.val() != 0));
        self.r_outstanding.d.next = self.outstanding.val();
        self.r_success.d.next = self.success.val();
        self.r_retryable.d.next = self.retryable.val();
        self.r_run.d.next = self.d_evt.val().get_bits::<4>(0);
        // The count after a retry event; an event that completes WQEs clears it first.
        self.r_retry_new.d.next = self.retry_inc.val().get_bits::<4>(0);
        self.r_retry_exceeded.d.next =
            self.retry_inc.val() > bit_cast::<5, 4>(self.cfg_retry_limit.val());
        if self.hit.val() & (self.d_evt.val() != 0) {
            self.r_retry_new.d.next = 1.into();
            self.r_retry_exceeded.d.next = self.cfg_retry_limit.val() == 0;
        }
        self.r_retry_kept.d.next = self.retry_inc.val().get_bits::<4>(0);
        self.r_retry_kept_exceeded.d.next =
            self.retry_inc.val() > bit_cast::<5, 4>(self.cfg_retry_limit.val());
        self.r_psn.d.next = self.s_evt_psn.val();
        self.r_psn_p1.d.next = self.psn_p1.val();
        self.r_una.d.next = self.s_una.val();
        self.r_una_p1.d.next = self.s_una.val() + 1;
        self.r_next_moves.d.next = self.s_next.val() != self.psn_p1.val();
        self.r_syndrome.d.next = self.s_evt_syndrome.val();

        // ---- Decision (from the registers) ----
        self.m_job_valid.next = false;
        self.m_job_succ.next = 0.into();
        self.m_job_run_status.next = 0.into();
        self.m_job_final.next = false;
        self.m_job_status.next = 0.into();
        self.m_job_resync.next = false;
        self.m_restart.next = false;
        self.m_set_next.next = false;
        self.m_next.next = self.r_psn_p1.q.val();
        self.m_set_retry.next = false;
        self.m_retry.next = 0.into();
        self.m_set_drain.next = false;
        self.m_retx.next = false;
        if self.r_local.q.val() {
            self.m_job_valid.next = self.r_local_hit.q.val();
            self.m_job_final.next = true;
            self.m_job_status.next = self.r_local_status.q.val();
            self.m_job_resync.next = true;
        } else if self.r_hit.q.val() & !self.r_implied.q.val() {
            self.m_job_valid.next = true;
            self.m_restart.next = true;
            self.m_set_retry.next = true;
            self.m_job_succ.next = self.r_run.q.val();
            if self.r_restarted.q.val() {
                // The responder restarted at this PSN: the WQEs before it were not applied.
                self.m_job_run_status.next = self.st_restarted.val();
            }
            if self.r_success.q.val() & self.r_ahead.q.val() {
                // Answered a message sent before a go-back: resume after it.
                self.m_set_next.next = true;
            }
            if self.r_success.q.val() {
                self.m_job_succ.next = self.r_run.q.val() + 1;
                if self.r_restarted.q.val() {
                    // The restarted run, then this PSN with success.
                    self.m_job_succ.next = self.r_run.q.val();
                    self.m_job_final.next = true;
                }
            } else if self.r_retryable.q.val() {
                // Go back N from the NACK's PSN.
                self.m_retx.next = true;
                self.m_set_next.next = true;
                self.m_next.next = self.r_psn.q.val();
                self.m_retry.next = self.r_retry_new.q.val();
                if self.r_retry_exceeded.q.val() {
                    self.m_job_final.next = true;
                    self.m_job_status.next = self.st_retry.val();
                    self.m_job_resync.next = true;
                    self.m_next.next = self.r_psn_p1.q.val();
                    self.m_set_drain.next = true;
                    self.m_retry.next = 0.into();
                }
            } else {
                self.m_job_final.next = true;
                self.m_job_status.next = self.r_syndrome.q.val();
                // PORT_DOWN is the fabric's: the responder never saw p, which may have
                // been the QP's RESYNC message, so the resync stays pending.
                self.m_job_resync.next = self.r_syndrome.q.val() == self.syn_port_down.val();
                // The responder consumed p but may have dropped what followed while its
                // answer slot held this NACK: resend from p+1 (not a retry).
                self.m_set_next.next = true;
                self.m_retx.next = self.r_next_moves.q.val();
            }
        } else if self.r_foreign.q.val()
            | (self.r_hit.q.val() & self.r_implied.q.val() & self.r_outstanding.q.val())
        {
            // A NACK for a PSN this QP has not sent lately, or an implied NAK: go back to
            // sq_una as on a timeout; a retryable NACK and an implied NAK count a retry
            // (nothing completes: the count is not cleared).
            self.m_retx.next = true;
            self.m_restart.next = true;
            self.m_set_next.next = true;
            self.m_next.next = self.r_una.q.val();
            if self.r_retryable.q.val() | (self.r_hit.q.val() & self.r_implied.q.val()) {
                self.m_set_retry.next = true;
                self.m_retry.next = self.r_retry_kept.q.val();
                if self.r_retry_kept_exceeded.q.val() {
                    self.m_job_valid.next = true;
                    self.m_job_final.next = true;
                    self.m_job_status.next = self.st_retry.val();
                    self.m_job_resync.next = true;
                    self.m_next.next = self.r_una_p1.q.val();
                    self.m_set_drain.next = true;
                    self.m_retry.next = 0.into();
                }
            }
        }
    }
}

impl ClockedBlock for EventEvaluator {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
