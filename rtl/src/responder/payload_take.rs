//! `PayloadTake`: whether the receive engine takes the presented beat and what the beat
//! does, a combinational child of [`crate::ReceiveQueueEngine`].
//!
//! Follows the engine's documentation (`receive_queue_engine.rs`: a message's payload
//! beats follow its decision, continuation cells are taken without one) and the
//! received-cell port of `docs/nic-blocks.md` ("Received cells": one outcome per cell,
//! its last beat marked).
//!
//! Ports (no clock):
//! - `mode` (a [`MessageMode`]): the message's mode as decided; `act_go` with `act_mode`:
//!   the Act clock decides it now and its first beat may be taken now (`act_mode` is then
//!   the mode); `aborted`: the message was abandoned (its beats are discarded).
//! - `stream`: the engine takes beats this clock (besides `act_go`); `beat_ready`: the
//!   writer can take a written beat. No reset: a beat taken in a reset clock is dropped by
//!   the engine's and the slice's resets at that edge (reset steers no handshake).
//! - The presented outcome: `s_valid`, `s_last` (its last beat), `s_ok_last` (it passed
//!   the reassembler's checks and carries the LAST flag: the message's last cell).
//! - `eff_mode`: `act_mode` when `act_go`, else `mode`; `Discard` when `aborted`.
//!   `write`: `eff_mode` is `ExecWrite` or `ResponseWrite`; `collect`: it is `ExecAtomic`.
//! - `ready` = `(stream | act_go) & (beat_ready | !write)`; `take` =
//!   `s_valid & ready`.
//! - `outcome_end` = `take & s_last`; `message_end` = `outcome_end & s_ok_last`;
//!   `end_runs` = `message_end` and `eff_mode` is not `Discard` (the message has an
//!   end-of-message sequence).
//!
//! Latency: combinational. Throughput: one beat per clock. Limits: none (no parameters).

use super::receive_queue_engine::MessageMode;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct PayloadTake {
    pub mode: Signal<In, MessageMode>,
    pub act_go: Signal<In, Bit>,
    pub act_mode: Signal<In, MessageMode>,
    pub aborted: Signal<In, Bit>,
    pub stream: Signal<In, Bit>,
    pub beat_ready: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_last: Signal<In, Bit>,
    pub s_ok_last: Signal<In, Bit>,
    pub eff_mode: Signal<Out, MessageMode>,
    pub write: Signal<Out, Bit>,
    pub collect: Signal<Out, Bit>,
    pub ready: Signal<Out, Bit>,
    pub take: Signal<Out, Bit>,
    pub outcome_end: Signal<Out, Bit>,
    pub message_end: Signal<Out, Bit>,
    pub end_runs: Signal<Out, Bit>,
}

impl PayloadTake {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for PayloadTake {
    #[hdl_gen]
    fn update(&mut self) {
        self.eff_mode.next = self.mode.val();
        if self.act_go.val() {
            self.eff_mode.next = self.act_mode.val();
        }
        if self.aborted.val() {
            self.eff_mode.next = MessageMode::Discard;
        }
        self.write.next = (self.eff_mode.val() == MessageMode::ExecWrite)
            | (self.eff_mode.val() == MessageMode::ResponseWrite);
        self.collect.next = self.eff_mode.val() == MessageMode::ExecAtomic;
        self.ready.next = false;
        if self.stream.val() | self.act_go.val() {
            self.ready.next = true;
            if self.write.val() {
                self.ready.next = self.beat_ready.val();
            }
        }
        self.take.next = self.s_valid.val() & self.ready.val();
        self.outcome_end.next = self.take.val() & self.s_last.val();
        self.message_end.next = self.outcome_end.val() & self.s_ok_last.val();
        self.end_runs.next = self.message_end.val() & (self.eff_mode.val() != MessageMode::Discard);
    }
}
