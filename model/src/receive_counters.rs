//! The reference model of `ReceiveCounters` (`rtl/src/responder/receive_counters.rs`),
//! written from its documentation: the receive engine's statistics counters.

use nic_abi::Syndrome;

/// Everything the block is given in one clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountInputs {
    pub reset: bool,
    pub message_end: bool,
    pub drop: bool,
    pub nack: bool,
    pub nack_syndrome: u8,
}

/// The counters (the block's outputs) and the drop decided last clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiveCountersModel {
    pub messages_received: u32,
    pub dropped: u32,
    pub nack_received: [u32; 8],
    pub drop_pending: bool,
}

impl ReceiveCountersModel {
    /// As after power-up (every counter 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// One clock edge with inputs `i`.
    pub fn step(&mut self, i: &CountInputs) {
        if i.reset {
            *self = Self::default();
            return;
        }
        if i.message_end {
            self.messages_received = self.messages_received.wrapping_add(1);
        }
        if self.drop_pending {
            self.dropped = self.dropped.wrapping_add(1);
        }
        self.drop_pending = i.drop;
        if i.nack {
            if let Some(k) = Syndrome::from_code(i.nack_syndrome).and_then(|s| s.counter_index()) {
                self.nack_received[k] = self.nack_received[k].wrapping_add(1);
            }
        }
    }
}
