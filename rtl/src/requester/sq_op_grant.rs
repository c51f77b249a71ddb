//! `SqOpGrant`: the send queue engine's table-engine sequencer: which operation on the
//! per-QP table goes next (CSR access, acknowledgement machine, transmit machine, timer
//! scan) and the clocks of the one granted (Read, Derive for an event's evaluation, Exec).
//!
//! Follows "SendQueueEngine: design notes" in `docs/nic-blocks.md` (the table engine's
//! priorities and overlap) and the structure paragraph of `SendQueueEngine`'s doc comment.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: Idle).
//!   Reset steers no handshake (`docs/nic-blocks.md`, "Reset"): what is taken in a reset
//!   clock is dropped at that edge.
//! - `s_table_ready`: the per-QP table has been cleared after reset (nothing is granted
//!   from Idle before).
//! - Requests (each held until granted): CSR access `s_csr_valid`, `s_csr_write`,
//!   `s_csr_qp` (6), answered by `s_csr_ready` (combinational: the access is taken this
//!   clock); acknowledgement machine `s_ak_valid`, `s_ak_qp` (6), `s_ak_advance` (an
//!   advance, else an evaluation); transmit machine `s_tx_valid`, `s_tx_qp` (6),
//!   `s_tx_commit` (a commit, else a claim); timer scan `s_scan_valid`, `s_scan_qp` (6).
//! - `s_ak_offered`: an acknowledgement event or a local completion is offered to the
//!   acknowledgement machine (a scan only reading gives way to it).
//! - Grants (combinational, this clock; the granted QP's entry is read at the edge):
//!   `m_grant_csr`, `m_grant_ak` (the acknowledgement machine's request or its scan),
//!   `m_grant_tx`; `m_read_qp` (6): the QP to read: the one the priority order picks
//!   (below), whether or not a grant is made (the entry read matters only after a grant,
//!   and the table's read address then does not wait for the grant's conditions).
//! - The operation (registered at the grant): `m_state` ([`SqEngineState`]), `m_op`
//!   ([`SqOp`]), `m_op_qp` (6), `m_op_qp_valid` (`m_op_qp < queue_pairs`), `m_exec`
//!   (`m_state == Exec`); `m_scan_preempted` (combinational): a scan only reading was
//!   replaced by a grant this clock or dropped for an offered event.
//!
//! Rules: a grant may be made when the state is Idle and the table is ready; in Exec when
//! the QP the priority order picks (below; the scan's QP when nothing is requested)
//! differs from `m_op_qp`; in Read of a timer scan (it has no effect before Exec).
//! Priority: CSR access, acknowledgement machine, transmit machine, timer scan; but a CSR
//! access waits (and `s_csr_ready` stays low) while the acknowledgement or transmit
//! machine requests if the last clock a grant could be made in granted a CSR access; a
//! scan is never granted in place of a scan. `s_csr_ready` is high in every clock a grant
//! may be made, unless the CSR access waits as said. The next state after Idle (no
//! grant) is Idle, after Read Exec (Derive for an evaluation), after Derive Exec, after
//! Exec Idle; a grant makes it Read, with `m_op` (CsrRead or CsrWrite, Eval or Advance,
//! Claim or Commit, Timer), `m_op_qp` and `m_op_qp_valid`. A scan in Read that gets no
//! CSR or transmit grant in its place while `s_ak_offered` goes back to Idle instead
//! (also when the acknowledgement machine's request is granted: that machine makes none
//! while its scan runs).
//!
//! Latency: a grant is combinational; Read, (Derive), Exec follow in the next clocks.
//! Throughput: operations of different QPs every two clocks, of the same QP every three
//! (four for an evaluation). Limits: `queue_pairs` in 1..=64.

use crate::sim::ClockedBlock;
use nic_abi::MAX_QUEUE_PAIRS;
use rust_hdl::prelude::*;

/// The table engine's state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqEngineState {
    /// Granting the next operation (its QP's entry is read at the clock edge), once the
    /// per-QP table has been cleared after reset.
    Idle,
    /// The entry is valid at the table's output and is registered (nothing else follows
    /// the block RAM's output in this clock).
    Read,
    /// Evaluations of an acknowledgement event only: the values derived from the
    /// registered entry (PSN distances, the event's classification, retry count) are
    /// registered.
    Derive,
    /// Executing the granted operation from those registers; entry written back.
    Exec,
}

/// Operations of the table engine.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqOp {
    CsrRead,
    CsrWrite,
    /// Transmit: read the QP to fetch the WQE at `sq_next`.
    Claim,
    /// Transmit: re-check and take PSN `sq_next` (or mark the QP draining).
    Commit,
    /// Acknowledgement event (or local completion) against `[sq_una, sq_next)`.
    Eval,
    /// One WQE completed: `sq_una++`.
    Advance,
    /// Retry timer check of one QP.
    Timer,
}

#[derive(LogicBlock)]
pub struct SqOpGrant {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_table_ready: Signal<In, Bit>,
    pub s_csr_valid: Signal<In, Bit>,
    pub s_csr_ready: Signal<Out, Bit>,
    pub s_csr_write: Signal<In, Bit>,
    pub s_csr_qp: Signal<In, Bits<6>>,
    pub s_ak_valid: Signal<In, Bit>,
    pub s_ak_qp: Signal<In, Bits<6>>,
    pub s_ak_advance: Signal<In, Bit>,
    pub s_tx_valid: Signal<In, Bit>,
    pub s_tx_qp: Signal<In, Bits<6>>,
    pub s_tx_commit: Signal<In, Bit>,
    pub s_scan_valid: Signal<In, Bit>,
    pub s_scan_qp: Signal<In, Bits<6>>,
    pub s_ak_offered: Signal<In, Bit>,
    pub m_grant_csr: Signal<Out, Bit>,
    pub m_grant_ak: Signal<Out, Bit>,
    pub m_grant_tx: Signal<Out, Bit>,
    pub m_read_qp: Signal<Out, Bits<6>>,
    pub m_state: Signal<Out, SqEngineState>,
    pub m_op: Signal<Out, SqOp>,
    pub m_op_qp: Signal<Out, Bits<6>>,
    pub m_op_qp_valid: Signal<Out, Bit>,
    pub m_exec: Signal<Out, Bit>,
    pub m_scan_preempted: Signal<Out, Bit>,
    eng_state: DFF<SqEngineState>,
    op: DFF<SqOp>,
    op_qp: DFF<Bits<6>>,
    op_qp_valid: DFF<Bit>,
    /// The last operation granted was a CSR access.
    csr_granted_last: DFF<Bit>,
    /// A waiting machine goes before this CSR access.
    csr_yield: Signal<Local, Bit>,
    /// A timer scan is reading: a CSR access or a transmit operation may take its place.
    timer_preemptible: Signal<Local, Bit>,
    /// A scan that is only reading is dropped for an event or local completion offered.
    timer_abandoned: Signal<Local, Bit>,
    /// The QP of the operation the priority order picks this clock.
    next_qp: Signal<Local, Bits<6>>,
    /// An operation executes and the next one is for another QP: grant it now.
    overlap_ok: Signal<Local, Bit>,
    tx_op: Signal<Local, SqOp>,
    grant_csr: Signal<Local, Bit>,
    grant_tx: Signal<Local, Bit>,
    grant_ak: Signal<Local, Bit>,
    read_qp: Signal<Local, Bits<6>>,
    num_qps: Constant<Bits<7>>,
}

impl SqOpGrant {
    /// The sequencer for `queue_pairs` queue pairs.
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "SqOpGrant: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        SqOpGrant {
            clock: Default::default(),
            reset: Default::default(),
            s_table_ready: Default::default(),
            s_csr_valid: Default::default(),
            s_csr_ready: Default::default(),
            s_csr_write: Default::default(),
            s_csr_qp: Default::default(),
            s_ak_valid: Default::default(),
            s_ak_qp: Default::default(),
            s_ak_advance: Default::default(),
            s_tx_valid: Default::default(),
            s_tx_qp: Default::default(),
            s_tx_commit: Default::default(),
            s_scan_valid: Default::default(),
            s_scan_qp: Default::default(),
            s_ak_offered: Default::default(),
            m_grant_csr: Default::default(),
            m_grant_ak: Default::default(),
            m_grant_tx: Default::default(),
            m_read_qp: Default::default(),
            m_state: Default::default(),
            m_op: Default::default(),
            m_op_qp: Default::default(),
            m_op_qp_valid: Default::default(),
            m_exec: Default::default(),
            m_scan_preempted: Default::default(),
            eng_state: Default::default(),
            op: Default::default(),
            op_qp: Default::default(),
            op_qp_valid: Default::default(),
            csr_granted_last: Default::default(),
            csr_yield: Default::default(),
            timer_preemptible: Default::default(),
            timer_abandoned: Default::default(),
            next_qp: Default::default(),
            overlap_ok: Default::default(),
            tx_op: Default::default(),
            grant_csr: Default::default(),
            grant_tx: Default::default(),
            grant_ak: Default::default(),
            read_qp: Default::default(),
            num_qps: Constant::new((queue_pairs as u64).to_bits()),
        }
    }
}

impl Logic for SqOpGrant {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            eng_state,
            op,
            op_qp,
            op_qp_valid,
            csr_granted_last
        );
        self.tx_op.next = SqOp::Claim;
        if self.s_tx_commit.val() {
            self.tx_op.next = SqOp::Commit;
        }
        self.csr_yield.next =
            self.csr_granted_last.q.val() & (self.s_ak_valid.val() | self.s_tx_valid.val());
        self.grant_csr.next = false;
        self.grant_tx.next = false;
        self.grant_ak.next = false;
        self.s_csr_ready.next = false;
        match self.eng_state.q.val() {
            SqEngineState::Idle => {}
            SqEngineState::Read => {
                self.eng_state.d.next = SqEngineState::Exec;
                if self.op.q.val() == SqOp::Eval {
                    self.eng_state.d.next = SqEngineState::Derive;
                }
            }
            SqEngineState::Derive => {
                self.eng_state.d.next = SqEngineState::Exec;
            }
            SqEngineState::Exec => {
                self.eng_state.d.next = SqEngineState::Idle;
            }
        }
        // Grant the next operation: when idle; while one executes, if the next one is for
        // another QP (its entry is read at the edge this one's is written: a different
        // address); or in place of a timer scan that is only reading.
        self.timer_preemptible.next =
            (self.eng_state.q.val() == SqEngineState::Read) & (self.op.q.val() == SqOp::Timer);
        // The QP the priority order would grant (lowest priority first, then overridden).
        self.next_qp.next = self.s_scan_qp.val();
        if self.s_tx_valid.val() {
            self.next_qp.next = self.s_tx_qp.val();
        }
        if self.s_ak_valid.val() {
            self.next_qp.next = self.s_ak_qp.val();
        }
        if self.s_csr_valid.val() & !self.csr_yield.val() {
            self.next_qp.next = self.s_csr_qp.val();
        }
        self.read_qp.next = self.next_qp.val();
        self.overlap_ok.next = (self.eng_state.q.val() == SqEngineState::Exec)
            & (self.next_qp.val() != self.op_qp.q.val());
        if ((self.eng_state.q.val() == SqEngineState::Idle) & self.s_table_ready.val())
            | self.overlap_ok.val()
            | self.timer_preemptible.val()
        {
            self.s_csr_ready.next = !self.csr_yield.val();
            self.csr_granted_last.d.next = false;
            if self.s_csr_valid.val() & !self.csr_yield.val() {
                self.csr_granted_last.d.next = true;
                self.grant_csr.next = true;
                self.op.d.next = SqOp::CsrRead;
                if self.s_csr_write.val() {
                    self.op.d.next = SqOp::CsrWrite;
                }
            } else if self.s_ak_valid.val() {
                self.grant_ak.next = true;
                self.op.d.next = SqOp::Eval;
                if self.s_ak_advance.val() {
                    self.op.d.next = SqOp::Advance;
                }
            } else if self.s_tx_valid.val() {
                self.grant_tx.next = true;
                self.op.d.next = self.tx_op.val();
            } else if self.s_scan_valid.val() & !self.timer_preemptible.val() {
                self.grant_ak.next = true;
                self.op.d.next = SqOp::Timer;
            }
            if self.grant_csr.val() | self.grant_ak.val() | self.grant_tx.val() {
                self.op_qp.d.next = self.read_qp.val();
                self.op_qp_valid.d.next = bit_cast::<7, 6>(self.read_qp.val()) < self.num_qps.val();
                self.eng_state.d.next = SqEngineState::Read;
            }
        }
        // A scan that is only reading also gives way to an acknowledgement event or a local
        // completion offered meanwhile (the acknowledgement machine takes it the next clock,
        // not after the scan's Exec clock).
        self.timer_abandoned.next = self.timer_preemptible.val()
            & !self.grant_csr.val()
            & !self.grant_tx.val()
            & self.s_ak_offered.val();
        if self.timer_abandoned.val() {
            self.eng_state.d.next = SqEngineState::Idle;
        }
        self.m_scan_preempted.next = self.timer_preemptible.val()
            & (self.grant_csr.val() | self.grant_tx.val() | self.timer_abandoned.val());
        self.m_grant_csr.next = self.grant_csr.val();
        self.m_grant_ak.next = self.grant_ak.val();
        self.m_grant_tx.next = self.grant_tx.val();
        self.m_read_qp.next = self.read_qp.val();
        self.m_state.next = self.eng_state.q.val();
        self.m_op.next = self.op.q.val();
        self.m_op_qp.next = self.op_qp.q.val();
        self.m_op_qp_valid.next = self.op_qp_valid.q.val();
        self.m_exec.next = self.eng_state.q.val() == SqEngineState::Exec;
        if self.reset.val() {
            self.eng_state.d.next = SqEngineState::Idle;
        }
    }
}

impl ClockedBlock for SqOpGrant {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
