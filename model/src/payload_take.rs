//! The reference model of `PayloadTake` (`rtl/src/responder/payload_take.rs`), written
//! from its documentation: whether the receive engine takes the presented beat, what the
//! beat does, and whether it ends the outcome or the message.

use nic_rtl::responder::receive_queue_engine::MessageMode;

/// Everything the block is given in one clock.
#[derive(Clone, Copy, Debug)]
pub struct TakeInputs {
    pub mode: MessageMode,
    pub act_go: bool,
    pub act_mode: MessageMode,
    pub abort: bool,
    pub stream: bool,
    pub beat_ready: bool,
    pub valid: bool,
    pub last: bool,
    pub ok_last: bool,
}

/// What it shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TakeOutputs {
    pub eff_mode: MessageMode,
    pub write: bool,
    pub collect: bool,
    pub ready: bool,
    pub take: bool,
    pub outcome_end: bool,
    pub message_end: bool,
    pub end_runs: bool,
}

/// The block's outputs for `i` (it has no state).
pub fn payload_take(i: &TakeInputs) -> TakeOutputs {
    let eff_mode = if i.abort {
        MessageMode::Discard
    } else if i.act_go {
        i.act_mode
    } else {
        i.mode
    };
    let write = matches!(
        eff_mode,
        MessageMode::ExecWrite | MessageMode::ResponseWrite
    );
    let ready = (i.stream || i.act_go) && (i.beat_ready || !write);
    let take = i.valid && ready;
    let outcome_end = take && i.last;
    let message_end = outcome_end && i.ok_last;
    TakeOutputs {
        eff_mode,
        write,
        collect: eff_mode == MessageMode::ExecAtomic,
        ready,
        take,
        outcome_end,
        message_end,
        end_runs: message_end && eff_mode != MessageMode::Discard,
    }
}
