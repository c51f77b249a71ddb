//! The reference model of `ActStage` (`rtl/src/responder/act_stage.rs`), written from its
//! documentation: the decision and two lookup comparisons registered every clock, and the
//! Act clock's rules applied to them and the cell.

/// Where the message goes after the Act clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActNext {
    Stream,
    AckEvent,
    TptRequest,
    RqeFetch,
    Owe,
}

/// What the message's payload beats do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActMode {
    Discard,
    ExecWrite,
    ExecAtomic,
    ResponseWrite,
}

/// The decision inputs, registered every clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActDecision {
    pub action: u8,
    pub syndrome: u8,
    pub resynced: bool,
    pub in_sequence: bool,
    pub ack_psn: u32,
    pub slot_refused: bool,
    pub check_access: bool,
    pub count_dropped: bool,
    pub qp_ok: bool,
    pub expect_match: bool,
}

/// Everything the stage is given in one clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct ActInputs {
    pub decision: ActDecision,
    pub is_ackish: bool,
    pub is_nack: bool,
    pub is_response: bool,
    pub is_read: bool,
    pub is_atomic: bool,
    pub consumes: bool,
    pub resync_flag: bool,
    pub psn: u32,
    pub immediate: u32,
    pub abort: bool,
    pub node_ok: bool,
    pub access_done: bool,
    pub rqe_done: bool,
    pub rs_valid: bool,
    pub refused_window: u32,
    pub rq_ci: u32,
    pub effective: u32,
    pub effective_next: u32,
    pub window_eff: u32,
    pub code: u8,
    pub report_dup: u32,
    pub report_after1: u32,
    pub far_next: bool,
}

/// The answer owed (`owe_load`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owed {
    pub kind: u8,
    pub psn: u32,
    pub syndrome: u8,
    pub resync: bool,
    pub refusal: u32,
}

/// The write-back of the QP's PSN state (`m_write_back.state` and the flags written with it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PsnWriteBack {
    /// `rq_ci | expected << 24`.
    pub wdata: u64,
    pub window: u32,
    pub rs_set: bool,
    pub rs_clear: bool,
    pub rs_forget: bool,
}

/// What the Act clock does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActOutputs {
    pub next: ActNext,
    pub go: bool,
    pub mode: ActMode,
    pub drop: bool,
    pub nack_count: bool,
    pub rqe_start: bool,
    pub owe: Option<Owed>,
    /// `ack_load`: the AETH's syndrome and refusals.
    pub ack: Option<(u8, u32)>,
    /// `resync_load`: `ack_resync`.
    pub ack_resync: Option<bool>,
    /// `nak_set`.
    pub nak_set: bool,
    /// `m_write_back.state` (with `synced_set`, `nak_clear`, `refused`, `position_load`).
    pub write_back: Option<PsnWriteBack>,
    /// The registered `syndrome` and `resynced`.
    pub syndrome_q: u8,
    pub resynced_q: bool,
}

const SEQUENCE_ERROR: u8 = 0x60;
const EXECUTE: u8 = 0;
const DUPLICATE: u8 = 1;
const DROP: u8 = 2;
const NACK: u8 = 3;

/// The stage: the registered decision (zero at power-on).
#[derive(Clone, Debug)]
pub struct ActStageModel {
    tpt_present: bool,
    registered: ActDecision,
}

impl ActStageModel {
    pub fn new(tpt_present: bool) -> Self {
        ActStageModel {
            tpt_present,
            registered: ActDecision::default(),
        }
    }

    /// The outputs this clock (the registered decision and the inputs shown now).
    pub fn outputs(&self, i: &ActInputs) -> ActOutputs {
        let d = self.registered;
        let mut o = ActOutputs {
            next: ActNext::Stream,
            go: true,
            mode: ActMode::Discard,
            drop: false,
            nack_count: false,
            rqe_start: false,
            owe: None,
            ack: None,
            ack_resync: None,
            nak_set: false,
            write_back: None,
            syndrome_q: d.syndrome,
            resynced_q: d.resynced,
        };
        // Rules 1 and 2: an abandoned message, another node.
        if i.abort {
            return o;
        }
        if !i.node_ok {
            o.drop = true;
            return o;
        }
        // Rule 3: an acknowledgement of this NIC's own request.
        if i.is_ackish {
            if d.qp_ok {
                o.next = ActNext::AckEvent;
                o.go = false;
                o.ack = Some(((i.immediate & 0xFF) as u8, (i.immediate >> 8) & 0x1F_FFFF));
                o.ack_resync = Some(i.resync_flag);
                o.nack_count = i.is_nack;
            } else {
                o.drop = true;
            }
            return o;
        }
        // Rule 4: a response.
        if i.is_response {
            if d.qp_ok && d.expect_match {
                o.mode = ActMode::ResponseWrite;
                o.ack_resync = Some(i.resync_flag);
            } else {
                o.drop = true;
            }
            return o;
        }
        // Rules 5 and 6: the TPT, the receive queue entry.
        if self.tpt_present
            && d.action != DROP
            && !d.slot_refused
            && d.check_access
            && !i.access_done
        {
            o.next = ActNext::TptRequest;
            o.go = false;
            return o;
        }
        if d.action == EXECUTE && i.consumes && !i.rqe_done {
            o.next = ActNext::RqeFetch;
            o.go = false;
            o.rqe_start = true;
            return o;
        }
        // Rule 7: a drop.
        if d.action == DROP {
            o.drop = d.count_dropped;
            return o;
        }
        // Rule 8: answered.
        let consumed_now = d.action == NACK || i.is_read;
        let window_report = i.window_eff & 0x1F_FFFF;
        let resync = if d.resynced {
            !i.resync_flag
        } else {
            i.rs_valid
        };
        let (kind, psn, refusal) = match d.action {
            NACK if d.syndrome == SEQUENCE_ERROR => {
                o.nak_set = true;
                (1, i.effective, window_report)
            }
            NACK if !d.in_sequence => (1, i.psn, i.report_dup),
            NACK => (1, i.psn, window_report),
            DUPLICATE if i.is_read => (2, i.psn, window_report),
            DUPLICATE if i.is_atomic => (3, i.psn, window_report),
            DUPLICATE => {
                let report = if i.refused_window & 7 != 0 {
                    i.report_dup
                } else {
                    i.report_after1
                };
                (0, d.ack_psn, report)
            }
            _ if i.is_read => (2, i.psn, window_report),
            _ if i.is_atomic => (3, i.psn, window_report),
            _ => (u8::from(d.syndrome != 0), i.psn, window_report),
        };
        o.owe = Some(Owed {
            kind,
            psn,
            syndrome: d.syndrome,
            resync,
            refusal,
        });
        if d.in_sequence && (d.action == NACK || d.action == EXECUTE) {
            let (expected, window) = if consumed_now {
                (
                    i.effective_next,
                    ((i.window_eff << 3) | i.code as u32) & 0xFF_FFFF,
                )
            } else {
                (i.effective, i.window_eff)
            };
            let (rs_set, rs_clear, rs_forget) = match (d.resynced, i.resync_flag) {
                (true, false) => (true, false, false),
                (true, true) => (false, true, true),
                _ => (false, consumed_now && i.far_next, false),
            };
            o.write_back = Some(PsnWriteBack {
                wdata: i.rq_ci as u64 | (expected as u64) << 24,
                window,
                rs_set,
                rs_clear,
                rs_forget,
            });
        }
        if d.action == NACK || d.action == DUPLICATE || i.is_read {
            o.next = ActNext::Owe;
            o.go = false;
        } else {
            o.mode = if i.is_atomic {
                ActMode::ExecAtomic
            } else {
                ActMode::ExecWrite
            };
        }
        o
    }

    /// The clock edge: the decision shown now is registered.
    pub fn clock(&mut self, i: &ActInputs) {
        self.registered = i.decision;
    }
}
