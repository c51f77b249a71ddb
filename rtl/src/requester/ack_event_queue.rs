//! `AckEventQueue`: a four-entry queue of acknowledgement events between the
//! `ReceiveQueueEngine` (which decodes ACKs, NACKs and responses of this NIC's own
//! requests) and the `SendQueueEngine` (whose acknowledgement machine completes the WQEs
//! they answer).
//!
//! Why it exists: the send engine takes one event at a time and spends about 8 + L clocks
//! per completed WQE on it (L = host-memory read latency: it re-reads the WQE's words
//! 0-1). Without a queue the receive engine holds the event, and so the whole ingress
//! (every cell behind it, whatever queue pair it is for) for that long; with it the
//! receive engine hands the event over and goes on with the next cell while the send
//! engine works through the queue. Follows the acknowledgement-event bundle of
//! `docs/nic-blocks.md`; order is kept (events leave in the order they came), which the
//! send engine's rules rely on (a response before the ACK that covers it).
//!
//! Ports (valid/ready; a beat moves on a rising edge where both are high):
//! - `clock`, `reset` (synchronous, active high: empties the queue).
//! - `s_ack_valid` / `s_ack_ready`, `s_ack` (40, an [`AckEvent`]: `qp` (6), `psn` (24),
//!   `syndrome` (8), `response`, `resync`): from the receive engine.
//! - `m_ack_valid` / `m_ack_ready`, `m_ack` (40, an [`AckEvent`]): to the send engine.
//!
//! The event is RustHDL `LogicStruct` ([`AckEvent`], `common/bundles.rs`): one port per
//! bundle in Verilog (`s_ack [39:0]`), one wire per field in RustHDL's VCD (`s_ack$qp`).
//!
//! Latency: one clock (an event taken at a rising edge is offered from that edge on).
//! Throughput: one event per clock in and out at the same time. `s_ack_ready` is high while
//! fewer than [`ACK_EVENT_QUEUE_DEPTH`] events wait; it depends on registers only (no path
//! from `m_ack_ready`), and nothing on `m_*` depends combinationally on `s_*`.
//! Limits: fixed depth (a ring of four 40-bit registers: no block RAM, which the iCE40
//! build has none of to spare): 102 iCE40 LUTs, 167 flip-flops, 131 MHz alone (a shift
//! register took 260 LUTs: every entry had a multiplexer in front of it).

use crate::common::AckEvent;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Events the queue holds.
pub const ACK_EVENT_QUEUE_DEPTH: usize = 4;

#[derive(LogicBlock, Default)]
pub struct AckEventQueue {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_ack_valid: Signal<In, Bit>,
    pub s_ack_ready: Signal<Out, Bit>,
    pub s_ack: Signal<In, AckEvent>,
    pub m_ack_valid: Signal<Out, Bit>,
    pub m_ack_ready: Signal<In, Bit>,
    pub m_ack: Signal<Out, AckEvent>,
    /// A ring: `count` events from entry `head` on (mod 4). Nothing moves between entries
    /// (an entry is loaded only when an event is pushed into it), so each bit costs a
    /// flip-flop with enable and the head a 4-way multiplexer.
    entry0: DFF<AckEvent>,
    entry1: DFF<AckEvent>,
    entry2: DFF<AckEvent>,
    entry3: DFF<AckEvent>,
    head: DFF<Bits<2>>,
    tail: DFF<Bits<2>>,
    count: DFF<Bits<3>>,
    head_entry: Signal<Local, AckEvent>,
    push: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
}

impl AckEventQueue {
    pub fn new() -> Self {
        Self::default()
    }
}

impl ClockedBlock for AckEventQueue {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

impl Logic for AckEventQueue {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, entry0, entry1, entry2, entry3, head, tail, count);
        self.s_ack_ready.next = self.count.q.val() != 4;
        self.m_ack_valid.next = self.count.q.val() != 0;
        self.head_entry.next = self.entry0.q.val();
        if self.head.q.val() == 1 {
            self.head_entry.next = self.entry1.q.val();
        }
        if self.head.q.val() == 2 {
            self.head_entry.next = self.entry2.q.val();
        }
        if self.head.q.val() == 3 {
            self.head_entry.next = self.entry3.q.val();
        }
        self.m_ack.next = self.head_entry.val();
        self.push.next = self.s_ack_valid.val() & (self.count.q.val() != 4);
        self.pop.next = self.m_ack_ready.val() & (self.count.q.val() != 0);
        if self.pop.val() {
            self.head.d.next = self.head.q.val() + 1;
        }
        if self.push.val() {
            self.tail.d.next = self.tail.q.val() + 1;
            if self.tail.q.val() == 0 {
                self.entry0.d.next = self.s_ack.val();
            }
            if self.tail.q.val() == 1 {
                self.entry1.d.next = self.s_ack.val();
            }
            if self.tail.q.val() == 2 {
                self.entry2.d.next = self.s_ack.val();
            }
            if self.tail.q.val() == 3 {
                self.entry3.d.next = self.s_ack.val();
            }
        }
        if self.push.val() & !self.pop.val() {
            self.count.d.next = self.count.q.val() + 1;
        }
        if self.pop.val() & !self.push.val() {
            self.count.d.next = self.count.q.val() - 1;
        }
        if self.reset.val() {
            self.count.d.next = 0.into();
            self.head.d.next = 0.into();
            self.tail.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::tick;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::VecDeque;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Event {
        qp: u64,
        psn: u64,
        syndrome: u64,
        response: bool,
        resync: bool,
    }

    fn random_event(rng: &mut ChaCha8Rng) -> Event {
        Event {
            qp: rng.gen_range(0..64),
            psn: rng.gen_range(0..1 << 24),
            syndrome: rng.gen_range(0..256),
            response: rng.gen(),
            resync: rng.gen(),
        }
    }

    fn drive(uut: &mut AckEventQueue, e: Option<Event>) {
        let e = e.unwrap_or(Event {
            qp: 0,
            psn: 0,
            syndrome: 0,
            response: false,
            resync: false,
        });
        uut.s_ack.next = AckEvent {
            qp: e.qp.to_bits(),
            psn: e.psn.to_bits(),
            syndrome: e.syndrome.to_bits(),
            response: e.response,
            resync: e.resync,
        };
    }

    fn head(uut: &AckEventQueue) -> Event {
        let h = uut.m_ack.val();
        Event {
            qp: h.qp.index() as u64,
            psn: h.psn.index() as u64,
            syndrome: h.syndrome.index() as u64,
            response: h.response,
            resync: h.resync,
        }
    }

    /// Random producer and consumer, each with idle gaps, checked every clock against a
    /// plain-Rust queue of the same depth: the ready and valid flags, the head's fields,
    /// and that every event comes out once, in order. Returns the clocks it ran.
    fn run_against_model(seed: u64, p_offer: f64, p_take: f64, events: usize) -> u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut uut = AckEventQueue::new();
        uut.connect_all();
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        let mut model: VecDeque<Event> = VecDeque::new();
        let sent: Vec<Event> = (0..events).map(|_| random_event(&mut rng)).collect();
        let mut next_in = 0;
        let mut received = vec![];
        let mut cycles = 0u64;
        let mut offer: Option<Event> = None;
        while received.len() < events {
            cycles += 1;
            assert!(cycles < 100 * events as u64 + 1000, "queue stopped moving");
            // A source holds its offer until it is taken.
            if offer.is_none() && next_in < events && rng.gen_bool(p_offer) {
                offer = Some(sent[next_in]);
            }
            let take = rng.gen_bool(p_take);
            uut.s_ack_valid.next = offer.is_some();
            drive(&mut uut, offer);
            uut.m_ack_ready.next = take;
            crate::sim::settle(&mut uut);
            assert_eq!(uut.s_ack_ready.val(), model.len() < ACK_EVENT_QUEUE_DEPTH);
            assert_eq!(uut.m_ack_valid.val(), !model.is_empty());
            if let Some(&h) = model.front() {
                assert_eq!(head(&uut), h, "head at clock {cycles}");
            }
            let popped = take && !model.is_empty();
            let pushed = offer.is_some() && model.len() < ACK_EVENT_QUEUE_DEPTH;
            if popped {
                received.push(model.pop_front().expect("not empty"));
            }
            if pushed {
                model.push_back(offer.take().expect("offered"));
                next_in += 1;
            }
            tick(&mut uut);
        }
        assert_eq!(received, sent);
        cycles
    }

    /// What the `AckEvent` bundle costs (docs/nic-blocks.md, "Bundles as LogicStruct"): one
    /// 40-bit Verilog port per bundle; one wire per field in RustHDL's VCD.
    #[test]
    fn the_bundle_is_one_verilog_port_and_one_vcd_wire_per_field() {
        let mut uut = AckEventQueue::new();
        uut.connect_all();
        let v = generate_verilog(&uut);
        assert!(v.contains("input wire  [39:0] s_ack;"), "{v}");
        assert!(v.contains("output reg  [39:0] m_ack;"), "{v}");
        assert!(!v.contains("s_ack_qp"));
        let mut header = vec![];
        drop(write_vcd_header(&mut header, &uut));
        let header = String::from_utf8(header).unwrap();
        for field in ["qp", "psn", "syndrome", "response", "resync"] {
            for port in ["s_ack", "m_ack"] {
                assert!(
                    header.contains(&format!(" {port}${field} ")),
                    "{port}${field}"
                );
            }
        }
        assert!(header.contains(" 24 "), "the psn wire is 24 bits wide");
    }

    #[test]
    fn synthesises() {
        let mut uut = AckEventQueue::new();
        uut.connect_all();
        yosys_validate("nic_rtl_ack_event_queue", &generate_verilog(&uut))
            .expect("yosys accepts AckEventQueue");
    }

    /// Seeded random stimulus with idle gaps and back-pressure on both sides, from an
    /// always-full queue (slow consumer) to an always-empty one (slow producer).
    #[test]
    fn matches_model_with_gaps_and_backpressure() {
        let mut total = 0;
        for (i, (p_offer, p_take)) in [(1.0, 1.0), (1.0, 0.2), (0.2, 1.0), (0.6, 0.5), (0.9, 0.7)]
            .into_iter()
            .enumerate()
        {
            total += run_against_model(0xac_0001 + i as u64, p_offer, p_take, 600);
        }
        assert!(total > 5_000, "only {total} clocks");
    }

    /// Full throughput: with both sides always ready an event passes every clock, and a
    /// full queue still takes one on a clock its head leaves.
    #[test]
    fn one_event_per_clock() {
        let cycles = run_against_model(0xac_0002, 1.0, 1.0, 500);
        assert!(cycles <= 502, "{cycles} clocks for 500 events");
    }

    /// Reset empties it: nothing is offered afterwards, and it takes four events again.
    #[test]
    fn reset_empties_the_queue() {
        let mut rng = ChaCha8Rng::seed_from_u64(0xac_0003);
        let mut uut = AckEventQueue::new();
        uut.connect_all();
        uut.m_ack_ready.next = false;
        uut.s_ack_valid.next = true;
        for _ in 0..ACK_EVENT_QUEUE_DEPTH {
            drive(&mut uut, Some(random_event(&mut rng)));
            tick(&mut uut);
        }
        crate::sim::settle(&mut uut);
        assert!(!uut.s_ack_ready.val(), "full after {ACK_EVENT_QUEUE_DEPTH}");
        uut.s_ack_valid.next = false;
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        crate::sim::settle(&mut uut);
        assert!(!uut.m_ack_valid.val());
        assert!(uut.s_ack_ready.val());
    }
}
