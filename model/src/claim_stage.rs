//! Reference model of the requester's `ClaimStage` (`rtl/src/requester/claim_stage.rs`),
//! written from its doc comment: the pick, the claim, the fetch request, the WQEs in the
//! fetch (up to two, in fetch order) with their claims' values and the send stage's claim,
//! stepped by the block's inputs only.

/// The inputs of one clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClaimInputs {
    pub reset: bool,
    /// The scheduler's pick, if shown.
    pub pick: Option<u8>,
    pub pick_hold: bool,
    /// The send stage's WQE is not yet committed.
    pub tx_uncommitted: bool,
    pub commit_first: bool,
    pub op_grant: bool,
    /// The claim's answer: `(ok, psn, addr, remote)`.
    pub claim_done: Option<(bool, u32, u32, u32)>,
    pub fetch_ready: bool,
    /// A CSR write reset this QP or moved its ring.
    pub moved: Option<u8>,
    /// The last word of the oldest WQE in the fetch whose words are awaited.
    pub wqe_done: bool,
    pub tx_free: bool,
}

/// The outputs of one clock (fields that matter only with their strobe are `None`
/// without it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClaimOutputs {
    pub pick_taken: bool,
    /// The claim request's QP, when shown.
    pub claim: Option<u8>,
    /// The fetch request's address, when shown.
    pub fetch: Option<u32>,
    pub handoff: bool,
    /// The send stage's claim: `(qp, psn, remote, stale)`.
    pub tx: (u8, u32, u32, bool),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Idle,
    ClaimReq {
        qp: u8,
        stale: bool,
    },
    ClaimWait {
        qp: u8,
        stale: bool,
    },
    FetchReq {
        qp: u8,
        stale: bool,
        psn: u32,
        addr: u32,
        remote: u32,
    },
}

/// A WQE in the fetch: its claim's values, and whether its words are all in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct InFetch {
    qp: u8,
    psn: u32,
    remote: u32,
    stale: bool,
    done: bool,
}

/// The claim stage, idle after reset.
#[derive(Clone, Debug)]
pub struct ClaimStageModel {
    stage: Stage,
    /// The WQEs in the fetch, oldest first (at most two).
    fetch: Vec<InFetch>,
    /// The send stage's claim (zero before the first hand-off).
    tx: (u8, u32, u32, bool),
}

impl Default for ClaimStageModel {
    fn default() -> Self {
        Self::new()
    }
}

impl ClaimStageModel {
    pub fn new() -> Self {
        ClaimStageModel {
            stage: Stage::Idle,
            fetch: Vec::new(),
            tx: (0, 0, 0, false),
        }
    }

    fn moved(i: &ClaimInputs, qp: u8) -> bool {
        i.moved == Some(qp)
    }

    /// What the ports show this clock with inputs `i`.
    pub fn outputs(&self, i: &ClaimInputs) -> ClaimOutputs {
        let blocked =
            |qp: u8| self.fetch.iter().any(|f| f.qp == qp) || (i.tx_uncommitted && self.tx.0 == qp);
        let pick_taken =
            self.stage == Stage::Idle && !i.pick_hold && i.pick.is_some_and(|qp| !blocked(qp));
        let claim = match self.stage {
            Stage::ClaimReq { qp, .. } => Some(qp),
            _ => None,
        };
        let fetch = match self.stage {
            Stage::FetchReq { addr, .. } if self.fetch.len() < 2 => Some(addr),
            _ => None,
        };
        let handoff = self
            .fetch
            .first()
            .is_some_and(|f| i.tx_free && (f.done || i.wqe_done));
        ClaimOutputs {
            pick_taken,
            claim,
            fetch,
            handoff,
            tx: self.tx,
        }
    }

    /// The clock edge after a clock with inputs `i`.
    pub fn step(&mut self, i: &ClaimInputs) {
        let out = self.outputs(i);
        for f in self.fetch.iter_mut() {
            f.stale |= Self::moved(i, f.qp);
        }
        if i.wqe_done {
            if let Some(f) = self.fetch.iter_mut().find(|f| !f.done) {
                f.done = true;
            }
        }
        self.tx.3 |= Self::moved(i, self.tx.0);
        if out.handoff {
            let f = self.fetch.remove(0);
            self.tx = (f.qp, f.psn, f.remote, f.stale);
        }
        self.stage = match self.stage {
            Stage::Idle => match i.pick {
                Some(qp) if out.pick_taken => Stage::ClaimReq { qp, stale: false },
                _ => Stage::Idle,
            },
            Stage::ClaimReq { qp, stale } => {
                let stale = stale || Self::moved(i, qp);
                if i.op_grant && !i.commit_first {
                    Stage::ClaimWait { qp, stale }
                } else {
                    Stage::ClaimReq { qp, stale }
                }
            }
            Stage::ClaimWait { qp, stale } => {
                let stale = stale || Self::moved(i, qp);
                match i.claim_done {
                    Some((true, psn, addr, remote)) => Stage::FetchReq {
                        qp,
                        stale,
                        psn,
                        addr,
                        remote,
                    },
                    Some((false, ..)) => Stage::Idle,
                    None => Stage::ClaimWait { qp, stale },
                }
            }
            Stage::FetchReq {
                qp,
                stale,
                psn,
                addr,
                remote,
            } => {
                let stale = stale || Self::moved(i, qp);
                if out.fetch.is_some() && i.fetch_ready {
                    self.fetch.push(InFetch {
                        qp,
                        psn,
                        remote,
                        stale,
                        done: false,
                    });
                    Stage::Idle
                } else {
                    Stage::FetchReq {
                        qp,
                        stale,
                        psn,
                        addr,
                        remote,
                    }
                }
            }
        };
        if i.reset {
            self.stage = Stage::Idle;
            self.fetch.clear();
        }
    }
}
