//! `Scheduler`: which queue pair the requester's transmit machine serves next. It keeps one
//! eligibility bit per queue pair, in step with the per-QP table's write-backs, and picks
//! among the eligible ones with the NIC's one [`RoundRobin`].
//!
//! Follows `docs/nic-architecture.md` ("Reliability: queue pairs, PSNs, go-back-N": at most
//! `SEND_WINDOW` unacknowledged messages per queue pair; "Deadlock freedom": every eligible
//! queue pair is served within `queue_pairs` picks) and "SendQueueEngine: design notes" in
//! `docs/nic-blocks.md` (the eligibility bit follows the table a clock later).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: no queue pair is eligible, the round robin
//!   starts again at queue pair 0).
//! - Write-back of the per-QP table (from the table engine, in the clock the entry is
//!   written): `s_wb_valid`, `s_wb_qp` (6), `s_wb_next` (24, `sq_next`), `s_wb_una` (24,
//!   `sq_una`), `s_wb_pi` (24, `sq_pi`), `s_wb_ready` (the queue pair exists, is enabled
//!   and does not wait for a response), `s_wb_drain` (its draining flag).
//! - Pick: `m_pick_valid`, `m_pick_qp` (6), both registered; `s_pick_taken`: the transmit
//!   machine takes the pick on this clock's rising edge (the round robin then starts after
//!   `m_pick_qp`).
//!
//! A queue pair is eligible when, as written back, it is ready, not draining with messages
//! outstanding (`sq_una != sq_next`), has posted work (`sq_next != sq_pi`) and fewer than
//! `SEND_WINDOW` messages outstanding (`sq_next - sq_una` mod 2^24).
//!
//! Latency: a write-back at clock t sets or clears the queue pair's bit at t + 2 (the
//! entry is registered first, so the table's PSN arithmetic and the window test are in
//! different clocks); `m_pick_*` shows the round robin's choice among the bits as of the
//! clock before (t + 3). A pick the transmit machine takes while its queue pair has just
//! become ineligible is found out by the table engine at the claim.
//! Throughput: one pick per clock.
//! Limits: `queue_pairs` in 1..=64; bits of queue pairs `>= queue_pairs` are never set.

use crate::common::RoundRobin;
use crate::sim::ClockedBlock;
use nic_abi::{MAX_QUEUE_PAIRS, SEND_WINDOW};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct Scheduler {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_wb_valid: Signal<In, Bit>,
    pub s_wb_qp: Signal<In, Bits<6>>,
    pub s_wb_next: Signal<In, Bits<24>>,
    pub s_wb_una: Signal<In, Bits<24>>,
    pub s_wb_pi: Signal<In, Bits<24>>,
    pub s_wb_ready: Signal<In, Bit>,
    pub s_wb_drain: Signal<In, Bit>,
    pub m_pick_valid: Signal<Out, Bit>,
    pub m_pick_qp: Signal<Out, Bits<6>>,
    pub s_pick_taken: Signal<In, Bit>,
    /// The round robin over the eligibility bits.
    rr: RoundRobin<64, 6>,
    /// Bit q: queue pair q may send now.
    pub(crate) eligible: DFF<Bits<64>>,
    /// The write-back of last clock, registered.
    wb_pending: DFF<Bit>,
    wb_qp: DFF<Bits<6>>,
    wb_next: DFF<Bits<24>>,
    wb_una: DFF<Bits<24>>,
    wb_pi: DFF<Bits<24>>,
    wb_ready: DFF<Bit>,
    wb_drain: DFF<Bit>,
    /// The round robin's pick and whether any queue pair is eligible, as of last clock.
    pick_valid: DFF<Bit>,
    pick_qp: DFF<Bits<6>>,
    /// `sq_next - sq_una` of the registered write-back.
    wb_outstanding: Signal<Local, Bits<24>>,
    wb_eligible: Signal<Local, Bit>,
    wb_onehot: Signal<Local, Bits<64>>,
    /// Bit q set for every queue pair q < `queue_pairs`.
    qp_mask: Constant<Bits<64>>,
    one: Constant<Bits<64>>,
    send_window: Constant<Bits<24>>,
}

impl Scheduler {
    /// A scheduler for `queue_pairs` queue pairs.
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "Scheduler: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        Scheduler {
            clock: Default::default(),
            reset: Default::default(),
            s_wb_valid: Default::default(),
            s_wb_qp: Default::default(),
            s_wb_next: Default::default(),
            s_wb_una: Default::default(),
            s_wb_pi: Default::default(),
            s_wb_ready: Default::default(),
            s_wb_drain: Default::default(),
            m_pick_valid: Default::default(),
            m_pick_qp: Default::default(),
            s_pick_taken: Default::default(),
            rr: RoundRobin::new(),
            eligible: Default::default(),
            wb_pending: Default::default(),
            wb_qp: Default::default(),
            wb_next: Default::default(),
            wb_una: Default::default(),
            wb_pi: Default::default(),
            wb_ready: Default::default(),
            wb_drain: Default::default(),
            pick_valid: Default::default(),
            pick_qp: Default::default(),
            wb_outstanding: Default::default(),
            wb_eligible: Default::default(),
            wb_onehot: Default::default(),
            qp_mask: Constant::new(
                (if queue_pairs >= 64 {
                    u64::MAX
                } else {
                    (1u64 << queue_pairs) - 1
                })
                .to_bits(),
            ),
            one: Constant::new(1u64.to_bits()),
            send_window: Constant::new((SEND_WINDOW as u64).to_bits()),
        }
    }
}

impl Default for Scheduler {
    fn default() -> Self {
        Self::new(MAX_QUEUE_PAIRS)
    }
}

impl Logic for Scheduler {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, eligible, wb_pending, wb_qp, wb_next, wb_una, wb_pi, wb_ready, wb_drain,
            pick_valid, pick_qp
        );
        self.rr.clock.next = self.clock.val();
        self.rr.reset.next = self.reset.val();
        self.wb_pending.d.next = self.s_wb_valid.val();
        self.wb_qp.d.next = self.s_wb_qp.val();
        self.wb_next.d.next = self.s_wb_next.val();
        self.wb_una.d.next = self.s_wb_una.val();
        self.wb_pi.d.next = self.s_wb_pi.val();
        self.wb_ready.d.next = self.s_wb_ready.val();
        self.wb_drain.d.next = self.s_wb_drain.val();
        self.wb_outstanding.next = self.wb_next.q.val() - self.wb_una.q.val();
        self.wb_eligible.next = self.wb_ready.q.val()
            & !(self.wb_drain.q.val() & (self.wb_una.q.val() != self.wb_next.q.val()))
            & (self.wb_next.q.val() != self.wb_pi.q.val())
            & (self.wb_outstanding.val() < self.send_window.val());
        self.wb_onehot.next = self.one.val() << self.wb_qp.q.val();
        if self.wb_pending.q.val() {
            if self.wb_eligible.val() {
                self.eligible.d.next =
                    (self.eligible.q.val() | self.wb_onehot.val()) & self.qp_mask.val();
            } else {
                self.eligible.d.next =
                    self.eligible.q.val() & !self.wb_onehot.val() & self.qp_mask.val();
            }
        }
        // Registered: the transmit machine picks from last clock's bits and pointer (the
        // pointer changes only at a pick, and the machine comes back for the next one no
        // sooner than four clocks later).
        self.rr.s_request.next = self.eligible.q.val();
        self.pick_valid.d.next = self.rr.m_grant_valid.val();
        self.pick_qp.d.next = self.rr.m_grant_index.val();
        self.rr.s_served.next = self.s_pick_taken.val();
        self.rr.s_served_index.next = self.pick_qp.q.val();
        self.m_pick_valid.next = self.pick_valid.q.val();
        self.m_pick_qp.next = self.pick_qp.q.val();
        if self.reset.val() {
            self.eligible.d.next = 0.into();
            self.wb_pending.d.next = false;
            self.pick_valid.d.next = false;
        }
    }
}

impl ClockedBlock for Scheduler {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{settle, tick};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[derive(Clone, Copy, Default)]
    struct WriteBack {
        qp: usize,
        next: u32,
        una: u32,
        pi: u32,
        ready: bool,
        drain: bool,
    }

    /// The scheduler as its documentation describes it, stepped by its inputs only.
    struct Model {
        queue_pairs: usize,
        /// The write-back of last clock (the block's registered copy).
        registered: Option<WriteBack>,
        eligible: u64,
        /// The bits as of the clock before (what the registered pick was made from).
        picked_from: u64,
        pointer: usize,
        pick: Option<usize>,
    }

    impl Model {
        fn eligible(w: &WriteBack) -> bool {
            let outstanding = w.next.wrapping_sub(w.una) & 0xFF_FFFF;
            w.ready
                && !(w.drain && w.una != w.next)
                && w.next != w.pi
                && outstanding < SEND_WINDOW as u32
        }

        fn round_robin(&self, bits: u64) -> Option<usize> {
            (0..64)
                .map(|k| (self.pointer + k) % 64)
                .find(|&q| bits >> q & 1 == 1)
        }

        /// One clock edge with these inputs.
        fn clock(&mut self, wb: Option<WriteBack>, taken: bool, reset: bool) {
            // The pick is registered from the bits and the pointer before this edge.
            let next_pick = self.round_robin(self.eligible);
            if taken {
                self.pointer = (self.pick.unwrap_or(0) + 1) % 64;
            }
            let mut eligible = self.eligible;
            if let Some(w) = self.registered {
                let bit = 1u64 << w.qp;
                if Self::eligible(&w) && w.qp < self.queue_pairs {
                    eligible |= bit;
                } else {
                    eligible &= !bit;
                }
            }
            self.picked_from = self.eligible;
            self.pick = next_pick;
            self.eligible = eligible;
            self.registered = wb;
            if reset {
                *self = Model {
                    queue_pairs: self.queue_pairs,
                    registered: None,
                    eligible: 0,
                    picked_from: 0,
                    pointer: 0,
                    pick: None,
                };
            }
        }
    }

    /// Seeded random write-backs (bursts, idle gaps) and a transmit machine that takes the
    /// pick at random (back-pressure), with resets; the pick compared every clock.
    fn run(queue_pairs: usize, seed: u64, cycles: usize) -> usize {
        let mut uut = Scheduler::new(queue_pairs);
        uut.connect_all();
        let mut model = Model {
            queue_pairs,
            registered: None,
            eligible: 0,
            picked_from: 0,
            pointer: 0,
            pick: None,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut picks = 0;
        for cycle in 0..cycles {
            let p_wb = [0.9, 0.5, 0.05, 0.3][(cycle / 150) % 4];
            let p_take = [1.0, 0.3, 0.7, 0.05][(cycle / 250) % 4];
            let wb = rng.gen_bool(p_wb).then(|| {
                let una = rng.gen_range(0..1u32 << 24);
                let near = |rng: &mut ChaCha8Rng| (una + rng.gen_range(0..12)) & 0xFF_FFFF;
                WriteBack {
                    qp: rng.gen_range(0..64.min(queue_pairs + 2)),
                    una,
                    next: near(&mut rng),
                    pi: near(&mut rng),
                    ready: rng.gen_bool(0.8),
                    drain: rng.gen_bool(0.2),
                }
            });
            let reset = rng.gen_bool(0.002);
            let w = wb.unwrap_or_default();
            uut.reset.next = reset;
            uut.s_wb_valid.next = wb.is_some();
            uut.s_wb_qp.next = (w.qp as u64).to_bits();
            uut.s_wb_next.next = (w.next as u64).to_bits();
            uut.s_wb_una.next = (w.una as u64).to_bits();
            uut.s_wb_pi.next = (w.pi as u64).to_bits();
            uut.s_wb_ready.next = w.ready;
            uut.s_wb_drain.next = w.drain;
            settle(&mut uut);
            assert_eq!(
                uut.eligible.q.val().to_u64(),
                model.eligible,
                "eligible bits at clock {cycle}"
            );
            assert_eq!(
                uut.m_pick_valid.val(),
                model.pick.is_some(),
                "pick valid at clock {cycle} (bits {:#x})",
                model.picked_from
            );
            if let Some(q) = model.pick {
                assert_eq!(uut.m_pick_qp.val().index(), q, "pick at clock {cycle}");
            }
            let taken = model.pick.is_some() && rng.gen_bool(p_take);
            uut.s_pick_taken.next = taken;
            tick(&mut uut);
            model.clock(wb, taken, reset);
            picks += taken as usize;
        }
        picks
    }

    #[test]
    fn synthesises() {
        let mut uut = Scheduler::new(4);
        uut.connect_all();
        yosys_validate("nic_rtl_requester_scheduler", &generate_verilog(&uut))
            .expect("yosys accepts Scheduler");
    }

    #[test]
    fn matches_model_with_gaps_and_backpressure() {
        for (queue_pairs, seed) in [(4, 1), (64, 2), (1, 3), (17, 4)] {
            assert!(
                run(queue_pairs, seed, 5_000) > 300,
                "{queue_pairs} queue pairs"
            );
        }
    }

    #[test]
    #[should_panic(expected = "queue_pairs must be between 1 and 64, got 0")]
    fn rejects_zero_queue_pairs() {
        Scheduler::new(0);
    }

    #[test]
    #[should_panic(expected = "queue_pairs must be between 1 and 64, got 65")]
    fn rejects_too_many_queue_pairs() {
        Scheduler::new(65);
    }
}
