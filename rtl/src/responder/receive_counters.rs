//! `ReceiveCounters`: the statistics counters of the [`crate::ReceiveQueueEngine`], a child
//! of it.
//!
//! Follows the engine's documentation (`receive_queue_engine.rs`, "Counters") and the
//! `stat_*` naming of `docs/nic-blocks.md`: messages received, messages dropped, and the
//! NACKs delivered to the requester by syndrome (a [`NackCounters`], in the order of
//! `Syndrome::counter_index`).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: every counter to 0, a pending drop
//!   forgotten).
//! - `message_end`: a message's last cell passed the reassembler's checks and ends now:
//!   `stat_messages_received` counts it on this edge.
//! - `drop`: the decision drops a message now (the engine's Act clock): registered on this
//!   edge, `stat_dropped` counts it on the next (a clock after the decision, off the
//!   decision's path).
//! - `nack`, `nack_syndrome` (8): an acknowledgement with that syndrome is decided now:
//!   `stat_nack_received_<counter_index>` counts it on this edge (a syndrome that is not a
//!   NACK's counts nowhere).
//! - Out, 32 bits each, registered, wrapping: `stat_messages_received`, `stat_dropped`,
//!   `stat_nack_received_0` .. `_7`.
//!
//! Latency: a count shows from the edge it is counted on (`drop`: the edge after).
//! Throughput: every counter can count every clock. Limits: none (no parameters).

use crate::common::NackCounters;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct ReceiveCounters {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub message_end: Signal<In, Bit>,
    pub drop: Signal<In, Bit>,
    pub nack: Signal<In, Bit>,
    pub nack_syndrome: Signal<In, Bits<8>>,
    pub stat_messages_received: Signal<Out, Bits<32>>,
    pub stat_dropped: Signal<Out, Bits<32>>,
    pub stat_nack_received_0: Signal<Out, Bits<32>>,
    pub stat_nack_received_1: Signal<Out, Bits<32>>,
    pub stat_nack_received_2: Signal<Out, Bits<32>>,
    pub stat_nack_received_3: Signal<Out, Bits<32>>,
    pub stat_nack_received_4: Signal<Out, Bits<32>>,
    pub stat_nack_received_5: Signal<Out, Bits<32>>,
    pub stat_nack_received_6: Signal<Out, Bits<32>>,
    pub stat_nack_received_7: Signal<Out, Bits<32>>,
    messages_received: DFF<Bits<32>>,
    dropped: DFF<Bits<32>>,
    /// A drop decided last clock.
    drop_pending: DFF<Bit>,
    nack_received: NackCounters,
}

impl Default for ReceiveCounters {
    fn default() -> Self {
        Self::new()
    }
}

impl ReceiveCounters {
    pub fn new() -> Self {
        ReceiveCounters {
            clock: Default::default(),
            reset: Default::default(),
            message_end: Default::default(),
            drop: Default::default(),
            nack: Default::default(),
            nack_syndrome: Default::default(),
            stat_messages_received: Default::default(),
            stat_dropped: Default::default(),
            stat_nack_received_0: Default::default(),
            stat_nack_received_1: Default::default(),
            stat_nack_received_2: Default::default(),
            stat_nack_received_3: Default::default(),
            stat_nack_received_4: Default::default(),
            stat_nack_received_5: Default::default(),
            stat_nack_received_6: Default::default(),
            stat_nack_received_7: Default::default(),
            messages_received: Default::default(),
            dropped: Default::default(),
            drop_pending: Default::default(),
            nack_received: NackCounters::new(),
        }
    }
}

impl Logic for ReceiveCounters {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, messages_received, dropped, drop_pending);
        self.nack_received.clock.next = self.clock.val();
        self.nack_received.reset.next = self.reset.val();
        self.nack_received.s_count.next = self.nack.val();
        self.nack_received.s_syndrome.next = self.nack_syndrome.val();
        if self.message_end.val() {
            self.messages_received.d.next = self.messages_received.q.val() + 1;
        }
        self.drop_pending.d.next = self.drop.val();
        if self.drop_pending.q.val() {
            self.dropped.d.next = self.dropped.q.val() + 1;
        }
        if self.reset.val() {
            self.messages_received.d.next = 0.into();
            self.dropped.d.next = 0.into();
            self.drop_pending.d.next = false;
        }
        self.stat_messages_received.next = self.messages_received.q.val();
        self.stat_dropped.next = self.dropped.q.val();
        self.stat_nack_received_0.next = self.nack_received.m_count_0.val();
        self.stat_nack_received_1.next = self.nack_received.m_count_1.val();
        self.stat_nack_received_2.next = self.nack_received.m_count_2.val();
        self.stat_nack_received_3.next = self.nack_received.m_count_3.val();
        self.stat_nack_received_4.next = self.nack_received.m_count_4.val();
        self.stat_nack_received_5.next = self.nack_received.m_count_5.val();
        self.stat_nack_received_6.next = self.nack_received.m_count_6.val();
        self.stat_nack_received_7.next = self.nack_received.m_count_7.val();
    }
}

impl ClockedBlock for ReceiveCounters {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
