//! The reference model of `QpFlags` (`rtl/src/responder/qp_flags.rs`), written from its
//! documentation: seven flags per queue pair, changed at the clock edge by the CSR's QP_CTRL
//! write, the engine's updates of its message's queue pair and the expect event; per flag,
//! clears before sets.

/// What the flags are given in one clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct QpFlagsInputs {
    pub reset: bool,
    pub csr_qp: u8,
    pub ctrl_write: bool,
    pub ctrl_enable: bool,
    pub qp_reset: bool,
    pub qp_resume: bool,
    pub ctx_qp: u8,
    pub synced_set: bool,
    pub nak_set: bool,
    pub nak_clear: bool,
    pub refused_set: bool,
    pub rs_set: bool,
    pub rs_clear: bool,
    pub atomic_set: bool,
    pub expect_clear: bool,
    pub expect_qp: u8,
    pub expect_set: bool,
    pub status_qp: u8,
}

/// One queue pair's flags; also what the block shows for `ctx_qp`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    pub enabled: bool,
    pub synced: bool,
    pub nak_sent: bool,
    pub refused: bool,
    pub rs_valid: bool,
    pub atomic_valid: bool,
    pub expect_valid: bool,
}

/// What the flags show in one clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpFlagsOutputs {
    pub ctx: Flags,
    pub status_synced: bool,
}

/// The flags of `queue_pairs` queue pairs.
#[derive(Clone, Debug)]
pub struct QpFlagsModel {
    queue_pairs: usize,
    flags: Vec<Flags>,
}

impl QpFlagsModel {
    pub fn new(queue_pairs: usize) -> Self {
        QpFlagsModel {
            queue_pairs,
            flags: vec![Flags::default(); 64],
        }
    }

    /// The outputs in a clock with inputs `i` (before its edge).
    pub fn outputs(&self, i: &QpFlagsInputs) -> QpFlagsOutputs {
        QpFlagsOutputs {
            ctx: self.flags[i.ctx_qp as usize],
            status_synced: self.flags[i.status_qp as usize].synced,
        }
    }

    /// The clock edge at the end of a clock with inputs `i`.
    pub fn edge(&mut self, i: &QpFlagsInputs) {
        if i.reset {
            self.flags = vec![Flags::default(); 64];
            return;
        }
        let before = self.flags.clone();
        let (csr, ctx, exp) = (i.csr_qp as usize, i.ctx_qp as usize, i.expect_qp as usize);
        for (q, f) in self.flags.iter_mut().enumerate() {
            let old = before[q];
            let on_csr = q == csr;
            let on_ctx = q == ctx;
            let reset = on_csr && i.qp_reset;
            let resume = on_csr && i.qp_resume;
            // Clears first, then sets.
            let mut n = old;
            if on_csr && i.ctrl_write {
                n.enabled = i.ctrl_enable;
            }
            if reset {
                n.synced = false;
                n.nak_sent = false;
                n.refused = false;
                n.rs_valid = false;
                n.atomic_valid = false;
                n.expect_valid = false;
            }
            if resume {
                n.nak_sent = false;
                n.refused = false;
            }
            if on_ctx && i.nak_clear {
                n.nak_sent = false;
            }
            if on_ctx && i.rs_clear {
                n.rs_valid = false;
            }
            if on_ctx && i.expect_clear {
                n.expect_valid = false;
            }
            if resume {
                n.synced = true;
                n.rs_valid = true;
            }
            if on_ctx {
                n.synced |= i.synced_set;
                n.nak_sent |= i.nak_set;
                n.refused |= i.refused_set;
                n.rs_valid |= i.rs_set;
                n.atomic_valid |= i.atomic_set;
            }
            if q == exp && i.expect_set {
                n.expect_valid = true;
            }
            *f = if q < self.queue_pairs {
                n
            } else {
                Flags::default()
            };
        }
    }
}
