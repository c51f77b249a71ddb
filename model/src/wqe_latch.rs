//! Reference model of the requester's `WqeLatch` (`rtl/src/requester/wqe_latch.rs`): the
//! class of a send WQE, from the requester's rules in [`crate::requester`] (`wqe_status`,
//! `completes_locally`, `needs_response`) and the block's doc comment (message length,
//! payload words, early or long payload against the buffer's depth).

use crate::requester::{completes_locally, wqe_status};
use nic_abi::{Wqe, WqeOpcode, DELAY_OPCODE};

/// What the send stage decides a WQE by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WqeClass {
    pub op_read: bool,
    pub op_atomic: bool,
    pub op_imm: bool,
    pub status: u8,
    pub local_only: bool,
    pub need_empty: bool,
    pub delay_ok: bool,
    pub msg_length: u32,
    pub len_round: u16,
    pub pl_early: bool,
    pub pl_long: bool,
}

impl WqeClass {
    /// The class of `w` in a send stage whose payload buffer holds `buffer_depth` words.
    pub fn of(w: &Wqe, buffer_depth: u32) -> Self {
        let op = WqeOpcode::from_code(w.opcode);
        let op_read = op == Some(WqeOpcode::RdmaRead);
        let op_atomic = op.is_some_and(|o| o.is_atomic());
        let status = wqe_status(w);
        let local_only = completes_locally(w);
        let len_round = (w.length.div_ceil(8) & 0xFFFF) as u16;
        let pl_read = !local_only && !op_read && !op_atomic && !w.inline;
        WqeClass {
            op_read,
            op_atomic,
            op_imm: op.is_some_and(|o| o.has_immediate()),
            status,
            local_only,
            need_empty: local_only || op_read || op_atomic,
            delay_ok: w.opcode == DELAY_OPCODE && status == 0,
            msg_length: if op_read {
                0
            } else if op_atomic {
                16
            } else {
                w.length
            },
            len_round,
            pl_early: pl_read && w.length != 0 && len_round as u32 <= buffer_depth,
            pl_long: pl_read && len_round as u32 > buffer_depth,
        }
    }
}
