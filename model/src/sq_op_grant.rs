//! Reference model of the requester's `SqOpGrant`: the send engine's table-engine grants
//! and the clocks of the operation granted, written from its doc comment
//! (`rtl/src/requester/sq_op_grant.rs`) and "SendQueueEngine: design notes" in
//! `docs/nic-blocks.md`.

/// The table engine's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum State {
    #[default]
    Idle,
    Read,
    Derive,
    Exec,
}

/// The operation granted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Op {
    #[default]
    CsrRead,
    CsrWrite,
    Claim,
    Commit,
    Eval,
    Advance,
    Timer,
}

/// The inputs of one clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inputs {
    pub reset: bool,
    pub table_ready: bool,
    pub csr_valid: bool,
    pub csr_write: bool,
    pub csr_qp: u8,
    pub ak_valid: bool,
    pub ak_qp: u8,
    pub ak_advance: bool,
    pub tx_valid: bool,
    pub tx_qp: u8,
    pub tx_commit: bool,
    pub scan_valid: bool,
    pub scan_qp: u8,
    pub ak_offered: bool,
}

/// The outputs of one clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    pub csr_ready: bool,
    pub grant_csr: bool,
    pub grant_ak: bool,
    pub grant_tx: bool,
    pub read_qp: u8,
    pub state: State,
    pub op: Op,
    pub op_qp: u8,
    pub op_qp_valid: bool,
    pub exec: bool,
    pub scan_preempted: bool,
}

/// The sequencer: the operation registered and whether the last grant was a CSR access.
#[derive(Clone, Debug, Default)]
pub struct OpGrant {
    pub queue_pairs: usize,
    state: State,
    op: Op,
    op_qp: u8,
    op_qp_valid: bool,
    csr_last: bool,
}

impl OpGrant {
    pub fn new(queue_pairs: usize) -> Self {
        OpGrant {
            queue_pairs,
            ..Default::default()
        }
    }

    /// The outputs of this clock for `i`, and the registers at its edge.
    pub fn step(&mut self, i: &Inputs) -> Outputs {
        let mut o = Outputs {
            read_qp: 0,
            state: self.state,
            op: self.op,
            op_qp: self.op_qp,
            op_qp_valid: self.op_qp_valid,
            exec: self.state == State::Exec,
            ..Default::default()
        };
        let csr_waits = self.csr_last && (i.ak_valid || i.tx_valid);
        let csr_wants = i.csr_valid && !csr_waits;
        // The QP the priority order picks (the scan's when nothing is requested).
        let picked = if csr_wants {
            i.csr_qp
        } else if i.ak_valid {
            i.ak_qp
        } else if i.tx_valid {
            i.tx_qp
        } else {
            i.scan_qp
        };
        o.read_qp = picked;
        let scan_reading = self.state == State::Read && self.op == Op::Timer;
        let mut next = match self.state {
            State::Idle => State::Idle,
            State::Read if self.op == Op::Eval => State::Derive,
            State::Read | State::Derive => State::Exec,
            State::Exec => State::Idle,
        };
        let may_grant = (self.state == State::Idle && i.table_ready)
            || (self.state == State::Exec && picked != self.op_qp)
            || scan_reading;
        if may_grant {
            o.csr_ready = !csr_waits;
            let mut csr_last = false;
            let granted = if csr_wants {
                o.grant_csr = true;
                csr_last = true;
                Some((
                    i.csr_qp,
                    if i.csr_write {
                        Op::CsrWrite
                    } else {
                        Op::CsrRead
                    },
                ))
            } else if i.ak_valid {
                o.grant_ak = true;
                Some((i.ak_qp, if i.ak_advance { Op::Advance } else { Op::Eval }))
            } else if i.tx_valid {
                o.grant_tx = true;
                Some((i.tx_qp, if i.tx_commit { Op::Commit } else { Op::Claim }))
            } else if i.scan_valid && !scan_reading {
                o.grant_ak = true;
                Some((i.scan_qp, Op::Timer))
            } else {
                None
            };
            self.csr_last = csr_last;
            if let Some((qp, op)) = granted {
                self.op = op;
                self.op_qp = qp;
                self.op_qp_valid = (qp as usize) < self.queue_pairs;
                next = State::Read;
            }
        }
        let abandoned = scan_reading && !o.grant_csr && !o.grant_tx && i.ak_offered;
        if abandoned {
            next = State::Idle;
        }
        o.scan_preempted = scan_reading && (o.grant_csr || o.grant_tx || abandoned);
        if i.reset {
            next = State::Idle;
        }
        self.state = next;
        o
    }
}
