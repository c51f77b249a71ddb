//! `ClaimStage`: the first stage of the `TransmitMachine` and the claims of the WQEs in its
//! later stages: it takes the scheduler's pick, has the QP claimed by the table engine
//! (which reads `sq_next`, the WQE's address and QP_REMOTE), requests the WQE's fetch,
//! keeps the claim's values while the fetch reads the WQE (two WQEs may be in the fetch:
//! the second is requested while the first is read or waits for the send stage), and
//! hands them to the send stage with the WQE's last word, oldest first; it keeps the send stage's claim too (QP, PSN, remote,
//! stale), which the commit, the message and the events carry.
//!
//! Follows the commit point of `docs/nic-architecture.md` (the fetch is speculative; a QP
//! reset or moved ring since the claim makes the WQE stale, so its commit fails) and
//! "SendQueueEngine: design notes" in `docs/nic-blocks.md` (a QP is claimed only while no
//! WQE of it waits for its commit in a later stage: the claim would read the same
//! `sq_next`).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: idle, no WQE in the fetch).
//!   Reset steers no handshake (`docs/nic-blocks.md`, "Reset"): what is taken in a reset
//!   clock is dropped at that edge.
//! - Pick: `s_pick_valid`, `s_pick_qp` (6), `m_pick_taken` (combinational: taken this
//!   clock). A pick is taken when the stage is idle, `s_pick_hold` is low (the send stage
//!   holds the read port for a long payload, or copies a WQE) and the pick's QP has no WQE
//!   waiting for its commit: not one in the fetch, not the send stage's while
//!   `s_tx_uncommitted`.
//! - Claim request: `m_claim_valid` (registered state), `m_claim_qp` (6). `s_op_grant`
//!   with `s_commit_first` low takes it (a commit shown in the same clock goes first);
//!   the answer comes with `s_claim_done`, `s_op_ok`, `s_claim_psn` (24), `s_claim_addr`
//!   (32), `s_claim_remote` (32). A refused claim (`s_op_ok` low) ends the pick.
//! - Fetch request: `m_fetch_valid`, `m_fetch_addr` (32, the claimed WQE's address), shown
//!   while the fetch holds at most one WQE for the send stage; `s_fetch_ready` takes it
//!   (the `WqeFetch` takes it when it has room for it).
//! - `s_moved_valid`, `s_moved_qp` (6): a CSR write reset that QP or moved its ring; a
//!   claim of it in any stage goes stale.
//! - Hand-off: `s_wqe_done` (the last word of the oldest WQE in the fetch whose words are
//!   awaited, this clock), `s_tx_free` (the send stage is free); `m_handoff`
//!   (combinational): the send stage takes the oldest WQE this clock (done now or waiting
//!   since).
//! - The send stage's claim (registered, from the last hand-off): `m_tx_qp` (6),
//!   `m_tx_psn` (24), `m_tx_remote` (32), `m_tx_stale` (its QP moved since the claim,
//!   up to the last clock edge).
//!
//! Latency: a pick is taken in the clock it is shown (when allowed); the claim request
//! follows the next clock; the fetch request the clock after the claim's answer (once the
//! fetch holds at most one WQE); the hand-off in the clock of the WQE's last word when the send stage is
//! free.
//! Throughput: one claim in flight, two WQEs in the fetch: the next pick is taken the clock
//! after the fetch request is taken.
//! Limits: queue pairs 0..=63 (6-bit QP numbers); no parameters.

use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// The claim stage: pick a QP, claim it (read `sq_next`), request its WQE's fetch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum SqClaimState {
    Idle,
    ClaimReq,
    ClaimWait,
    /// Waiting for the WQE fetch to be free (its previous WQE handed to the send stage).
    FetchReq,
}

#[derive(LogicBlock, Default)]
pub struct ClaimStage {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_pick_valid: Signal<In, Bit>,
    pub s_pick_qp: Signal<In, Bits<6>>,
    pub m_pick_taken: Signal<Out, Bit>,
    pub s_pick_hold: Signal<In, Bit>,
    pub s_tx_uncommitted: Signal<In, Bit>,
    pub m_claim_valid: Signal<Out, Bit>,
    pub m_claim_qp: Signal<Out, Bits<6>>,
    pub s_commit_first: Signal<In, Bit>,
    pub s_op_grant: Signal<In, Bit>,
    pub s_claim_done: Signal<In, Bit>,
    pub s_op_ok: Signal<In, Bit>,
    pub s_claim_psn: Signal<In, Bits<24>>,
    pub s_claim_addr: Signal<In, Bits<32>>,
    pub s_claim_remote: Signal<In, Bits<32>>,
    pub m_fetch_valid: Signal<Out, Bit>,
    pub m_fetch_addr: Signal<Out, Bits<32>>,
    pub s_fetch_ready: Signal<In, Bit>,
    pub s_moved_valid: Signal<In, Bit>,
    pub s_moved_qp: Signal<In, Bits<6>>,
    pub s_wqe_done: Signal<In, Bit>,
    pub s_tx_free: Signal<In, Bit>,
    pub m_handoff: Signal<Out, Bit>,
    pub m_tx_qp: Signal<Out, Bits<6>>,
    pub m_tx_psn: Signal<Out, Bits<24>>,
    pub m_tx_remote: Signal<Out, Bits<32>>,
    pub m_tx_stale: Signal<Out, Bit>,
    fa_state: DFF<SqClaimState>,
    fa_qp: DFF<Bits<6>>,
    fa_psn: DFF<Bits<24>>,
    fa_wqe_addr: DFF<Bits<32>>,
    fa_remote: DFF<Bits<32>>,
    /// The claimed QP was reset or its ring moved (CSR write) since the claim.
    fa_stale: DFF<Bit>,
    // The WQE in the fetch (`fw_busy`: its words are awaited; `fw_ready`: handed off by
    // the fetch, waiting for the send stage), with its claim's values.
    fw_busy: DFF<Bit>,
    fw_ready: DFF<Bit>,
    fw_qp: DFF<Bits<6>>,
    fw_psn: DFF<Bits<24>>,
    fw_remote: DFF<Bits<32>>,
    fw_stale: DFF<Bit>,
    // The second WQE in the fetch, requested while the first is fetched or waits for the
    // send stage (`fn_busy`: its words are awaited; `fn_ready`: complete), with its claim's
    // values; it moves into `fw_*` when the first is handed off.
    fn_busy: DFF<Bit>,
    fn_ready: DFF<Bit>,
    fn_qp: DFF<Bits<6>>,
    fn_psn: DFF<Bits<24>>,
    fn_remote: DFF<Bits<32>>,
    fn_stale: DFF<Bit>,
    /// The fetch request is taken this clock.
    fetch_go: Signal<Local, Bit>,
    /// The fetch's first (second) WQE is complete after this clock's word.
    fw_rdy: Signal<Local, Bit>,
    fn_rdy: Signal<Local, Bit>,
    /// The new fetch's claim goes into `fw_*` (else `fn_*`).
    go_first: Signal<Local, Bit>,
    // The send stage's claim.
    tx_qp: DFF<Bits<6>>,
    tx_psn: DFF<Bits<24>>,
    tx_remote: DFF<Bits<32>>,
    tx_stale: DFF<Bit>,
    /// The pick is a QP whose WQE in the fetch or send stage is not yet committed.
    pick_blocked: Signal<Local, Bit>,
}

impl ClaimStage {
    /// The claim stage (no parameters).
    pub fn new() -> Self {
        Self::default()
    }
}

impl ClockedBlock for ClaimStage {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

impl Logic for ClaimStage {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            fa_state,
            fa_qp,
            fa_psn,
            fa_wqe_addr,
            fa_remote,
            fa_stale,
            fw_busy,
            fw_ready,
            fw_qp,
            fw_psn,
            fw_remote,
            fw_stale,
            fn_busy,
            fn_ready,
            fn_qp,
            fn_psn,
            fn_remote,
            fn_stale,
            tx_qp,
            tx_psn,
            tx_remote,
            tx_stale
        );
        self.m_claim_valid.next = self.fa_state.q.val() == SqClaimState::ClaimReq;
        self.m_claim_qp.next = self.fa_qp.q.val();
        self.m_fetch_addr.next = self.fa_wqe_addr.q.val();
        self.m_fetch_valid.next = false;
        self.m_pick_taken.next = false;
        self.fetch_go.next = false;
        self.pick_blocked.next = ((self.fw_busy.q.val() | self.fw_ready.q.val())
            & (self.fw_qp.q.val() == self.s_pick_qp.val()))
            | ((self.fn_busy.q.val() | self.fn_ready.q.val())
                & (self.fn_qp.q.val() == self.s_pick_qp.val()))
            | (self.s_tx_uncommitted.val() & (self.tx_qp.q.val() == self.s_pick_qp.val()));
        // A reset or moved ring (CSR write) invalidates a claim of that QP.
        if self.s_moved_valid.val() & (self.s_moved_qp.val() == self.fa_qp.q.val()) {
            self.fa_stale.d.next = true;
        }
        if self.s_moved_valid.val() & (self.s_moved_qp.val() == self.fw_qp.q.val()) {
            self.fw_stale.d.next = true;
        }
        if self.s_moved_valid.val() & (self.s_moved_qp.val() == self.fn_qp.q.val()) {
            self.fn_stale.d.next = true;
        }
        if self.s_moved_valid.val() & (self.s_moved_qp.val() == self.tx_qp.q.val()) {
            self.tx_stale.d.next = true;
        }
        match self.fa_state.q.val() {
            SqClaimState::Idle => {
                if self.s_pick_valid.val() & !self.s_pick_hold.val() & !self.pick_blocked.val() {
                    self.m_pick_taken.next = true;
                    self.fa_qp.d.next = self.s_pick_qp.val();
                    self.fa_stale.d.next = false;
                    self.fa_state.d.next = SqClaimState::ClaimReq;
                }
            }
            SqClaimState::ClaimReq => {
                if self.s_op_grant.val() & !self.s_commit_first.val() {
                    self.fa_state.d.next = SqClaimState::ClaimWait;
                }
            }
            SqClaimState::ClaimWait => {
                if self.s_claim_done.val() {
                    self.fa_psn.d.next = self.s_claim_psn.val();
                    self.fa_wqe_addr.d.next = self.s_claim_addr.val();
                    self.fa_remote.d.next = self.s_claim_remote.val();
                    self.fa_state.d.next = SqClaimState::Idle;
                    if self.s_op_ok.val() {
                        self.fa_state.d.next = SqClaimState::FetchReq;
                    }
                }
            }
            SqClaimState::FetchReq => {
                // While the fetch holds at most one WQE (it takes the request when it has
                // room: its WQE is short and its words are all asked for).
                if !self.fn_busy.q.val() & !self.fn_ready.q.val() {
                    self.m_fetch_valid.next = true;
                    if self.s_fetch_ready.val() {
                        self.fetch_go.next = true;
                        self.fa_state.d.next = SqClaimState::Idle;
                    }
                }
            }
            _ => {
                self.fa_state.d.next = SqClaimState::Idle;
            }
        }
        // The fetch hands the WQE off with its last word (word 4, or word 7 of a WQE
        // that uses them); the send stage takes it when free. The words of the first WQE
        // in the fetch come first.
        self.fw_rdy.next = self.fw_ready.q.val() | (self.fw_busy.q.val() & self.s_wqe_done.val());
        self.fn_rdy.next = self.fn_ready.q.val()
            | (!self.fw_busy.q.val() & self.fn_busy.q.val() & self.s_wqe_done.val());
        self.m_handoff.next = self.s_tx_free.val() & self.fw_rdy.val();
        self.fw_busy.d.next = self.fw_busy.q.val() & !self.s_wqe_done.val();
        self.fw_ready.d.next = self.fw_rdy.val();
        self.fn_busy.d.next = self.fn_busy.q.val() & !self.fn_rdy.val();
        self.fn_ready.d.next = self.fn_rdy.val();
        // The new fetch's claim: into the first free entry once this clock's hand-off
        // has moved the second WQE up.
        self.go_first.next = !self.fw_busy.q.val() & !self.fw_ready.q.val();
        if self.m_handoff.val() {
            // The second WQE moves up.
            self.fw_busy.d.next = self.fn_busy.q.val() & !self.fn_rdy.val();
            self.fw_ready.d.next = self.fn_rdy.val();
            self.fw_qp.d.next = self.fn_qp.q.val();
            self.fw_psn.d.next = self.fn_psn.q.val();
            self.fw_remote.d.next = self.fn_remote.q.val();
            self.fw_stale.d.next = self.fn_stale.q.val()
                | (self.s_moved_valid.val() & (self.s_moved_qp.val() == self.fn_qp.q.val()));
            self.fn_busy.d.next = false;
            self.fn_ready.d.next = false;
            self.go_first.next = !self.fn_busy.q.val() & !self.fn_ready.q.val();
        }
        if self.fetch_go.val() {
            if self.go_first.val() {
                self.fw_busy.d.next = true;
                self.fw_ready.d.next = false;
                self.fw_qp.d.next = self.fa_qp.q.val();
                self.fw_psn.d.next = self.fa_psn.q.val();
                self.fw_remote.d.next = self.fa_remote.q.val();
                self.fw_stale.d.next = self.fa_stale.q.val()
                    | (self.s_moved_valid.val() & (self.s_moved_qp.val() == self.fa_qp.q.val()));
            } else {
                self.fn_busy.d.next = true;
                self.fn_ready.d.next = false;
                self.fn_qp.d.next = self.fa_qp.q.val();
                self.fn_psn.d.next = self.fa_psn.q.val();
                self.fn_remote.d.next = self.fa_remote.q.val();
                self.fn_stale.d.next = self.fa_stale.q.val()
                    | (self.s_moved_valid.val() & (self.s_moved_qp.val() == self.fa_qp.q.val()));
            }
        }
        if self.m_handoff.val() {
            self.tx_qp.d.next = self.fw_qp.q.val();
            self.tx_psn.d.next = self.fw_psn.q.val();
            self.tx_remote.d.next = self.fw_remote.q.val();
            self.tx_stale.d.next = self.fw_stale.q.val()
                | (self.s_moved_valid.val() & (self.s_moved_qp.val() == self.fw_qp.q.val()));
        }
        self.m_tx_qp.next = self.tx_qp.q.val();
        self.m_tx_psn.next = self.tx_psn.q.val();
        self.m_tx_remote.next = self.tx_remote.q.val();
        self.m_tx_stale.next = self.tx_stale.q.val();
        if self.reset.val() {
            self.fa_state.d.next = SqClaimState::Idle;
            self.fw_busy.d.next = false;
            self.fw_ready.d.next = false;
            self.fn_busy.d.next = false;
            self.fn_ready.d.next = false;
        }
    }
}
