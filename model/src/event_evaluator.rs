//! Reference model of the requester's `EventEvaluator`: the judgement of one
//! acknowledgement event (or local completion) against a queue pair's entry, written
//! from the rules in its doc comment (`rtl/src/requester/event_evaluator.rs`) and
//! `docs/nic-architecture.md` ("Reliability: queue pairs, PSNs, go-back-N").

use nic_abi::{CompletionStatus, Syndrome};

const PSN_MASK: u32 = 0xFF_FFFF;

/// The inputs: the queue pair's entry and the event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Evaluation {
    pub retry_limit: u8,
    pub qp_valid: bool,
    pub una: u32,
    pub next: u32,
    pub pi: u32,
    pub retry: u8,
    pub una_needs_response: bool,
    pub psn: u32,
    pub syndrome: u8,
    pub response: bool,
    pub resync: bool,
    pub local: bool,
    pub local_status: u8,
}

/// The decision: the completion job and the fields written back (`None`: kept).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub job: Option<Job>,
    /// Clear `waiting` and restart the retry timer.
    pub restart: bool,
    pub next: Option<u32>,
    pub retry: Option<u8>,
    pub drain: bool,
    pub retransmission: bool,
}

/// WQEs to complete from `sq_una` on: `succ` with `run_status`, then one with `status`
/// when `final_`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Job {
    pub succ: u8,
    pub run_status: u8,
    pub final_: bool,
    pub status: u8,
    pub resync: bool,
}

/// The decision for `e` with a send window of `window` messages.
pub fn evaluate(e: &Evaluation, window: u32) -> Decision {
    let dist = |a: u32, b: u32| a.wrapping_sub(b) & PSN_MASK;
    let mut d = Decision::default();
    let outstanding = e.una != e.next;
    if e.local {
        if e.qp_valid && e.una == e.psn && outstanding {
            d.job = Some(Job {
                final_: true,
                status: e.local_status,
                resync: true,
                ..Job::default()
            });
        }
        return d;
    }
    let d_evt = dist(e.psn, e.una);
    let posted = dist(e.pi, e.una);
    let sent = dist(e.next, e.una);
    let success = e.response || e.syndrome == Syndrome::Ack as u8;
    let retryable = !success
        && (e.syndrome == Syndrome::SequenceError as u8
            || e.syndrome == Syndrome::CrcOrMalformed as u8);
    let hit = e.qp_valid && d_evt < posted.min(window);
    let restarted = e.resync && d_evt != 0;
    let implied = e.una_needs_response
        && !e.response
        && !restarted
        && (e.syndrome == Syndrome::Ack as u8 || d_evt != 0);
    let foreign = e.qp_valid
        && outstanding
        && !success
        && d_evt > window
        && (retryable || d_evt < (1 << 24) - window);
    let psn_p1 = (e.psn + 1) & PSN_MASK;
    let una_p1 = (e.una + 1) & PSN_MASK;
    let limit = e.retry_limit as u32;
    let run_status = if restarted {
        CompletionStatus::RESPONDER_RESTARTED
    } else {
        0
    };
    if hit && !implied {
        d.restart = true;
        d.retry = Some(0);
        let mut job = Job {
            succ: d_evt as u8,
            run_status,
            ..Job::default()
        };
        if success {
            if d_evt >= sent {
                d.next = Some(psn_p1);
            }
            if restarted {
                job.final_ = true;
            } else {
                job.succ += 1;
            }
        } else if retryable {
            d.retransmission = true;
            d.next = Some(e.psn);
            // Progress (d != 0) clears the count first.
            let count = if d_evt != 0 { 1 } else { e.retry as u32 + 1 };
            d.retry = Some((count & 0xF) as u8);
            if count > limit {
                job.final_ = true;
                job.status = CompletionStatus::RETRY_EXCEEDED;
                job.resync = true;
                d.next = Some(psn_p1);
                d.drain = true;
                d.retry = Some(0);
            }
        } else {
            job.final_ = true;
            job.status = e.syndrome;
            job.resync = e.syndrome == Syndrome::PortDown as u8;
            d.next = Some(psn_p1);
            d.retransmission = e.next != psn_p1;
        }
        d.job = Some(job);
    } else if foreign || (hit && implied && outstanding) {
        d.retransmission = true;
        d.restart = true;
        d.next = Some(e.una);
        if retryable || (hit && implied) {
            let count = e.retry as u32 + 1;
            d.retry = Some((count & 0xF) as u8);
            if count > limit {
                d.job = Some(Job {
                    final_: true,
                    status: CompletionStatus::RETRY_EXCEEDED,
                    resync: true,
                    ..Job::default()
                });
                d.next = Some(una_p1);
                d.drain = true;
                d.retry = Some(0);
            }
        }
    }
    d
}
