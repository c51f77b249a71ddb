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
//! - Hold (a DELAY WQE, `nic_abi::DELAY_OPCODE`): `s_hold_valid`, `s_hold_qp` (6),
//!   `s_hold_cycles` (24): from the next clock the queue pair is held, and a held queue pair
//!   is never picked, whatever its eligibility bit; the others are picked as before.
//! - Drop (a QP reset or send-side reset, QP_CTRL bit 1 or 2): `s_drop_valid`, `s_drop_qp` (6): the queue pair's
//!   hold ends at this clock's edge, also over a hold of the same queue pair in the same
//!   clock (the reset restarts the ring the DELAY came from).
//!
//! Hold: a free-running cycle counter `now` (32 bits, 0 after reset) and one deadline per
//! queue pair in a [`QpRam`] (32 bits, synchronous read, `queue_pairs` rounded up to a power
//! of two words). A hold at clock t writes the deadline
//! `now(t) + cycles` and sets the queue pair's held bit (a hold of a queue pair `>=
//! queue_pairs` is ignored). A release scan reads one deadline per clock, queue pairs 0,
//! 1, .., `queue_pairs - 1`, 0, .. (restarting at 0 after reset): the deadline of the queue
//! pair it reads at clock u-1 is compared at clock u, and if that queue pair is held and
//! `now(u) - deadline` is non-negative (32-bit two's complement) its held bit clears at
//! u + 1, unless a hold for the same queue pair came in clock u-1 (the read may be the old
//! deadline) or comes in clock u (a new hold wins). So a queue pair held at t with `n`
//! cycles is released between t + max(n, 1) + 1 and t + max(n, 1) + `queue_pairs` + 1, and
//! `m_pick_*` does not show it from t + 2 (the pick of t + 1 was made before the hold)
//! to t + n + 2; holds of several queue pairs run at once.
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

use crate::common::{QpRam, RoundRobin};
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
    pub s_hold_valid: Signal<In, Bit>,
    pub s_hold_qp: Signal<In, Bits<6>>,
    pub s_hold_cycles: Signal<In, Bits<24>>,
    pub s_drop_valid: Signal<In, Bit>,
    pub s_drop_qp: Signal<In, Bits<6>>,
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
    /// Free-running cycle counter (the holds' time base).
    now: DFF<Bits<32>>,
    /// Bit q: queue pair q is held (a DELAY): never picked.
    pub(crate) held: DFF<Bits<64>>,
    /// Deadline (`now` at the hold + its cycles) per queue pair.
    deadline: QpRam<Bits<32>>,
    /// The queue pair whose deadline the release scan reads this clock, and the one whose
    /// deadline is on the RAM's read data.
    scan: DFF<Bits<6>>,
    scan_q: DFF<Bits<6>>,
    /// No hold for `scan_q` came in the clock its deadline was read.
    scan_fresh: DFF<Bit>,
    hold_onehot: Signal<Local, Bits<64>>,
    release_onehot: Signal<Local, Bits<64>>,
    /// The queue pair whose hold a QP reset drops this clock, one-hot (zero if none).
    drop_onehot: Signal<Local, Bits<64>>,
    /// The deadline the scan read is still ahead: `now - deadline` is negative (its sign bit).
    hold_ahead: Signal<Local, Bit>,
    hold_in_range: Signal<Local, Bit>,
    last_qp: Constant<Bits<6>>,
    /// 2^31: `now - deadline` at or above it is negative.
    half_range: Constant<Bits<32>>,
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
            s_hold_valid: Default::default(),
            s_hold_qp: Default::default(),
            s_hold_cycles: Default::default(),
            s_drop_valid: Default::default(),
            s_drop_qp: Default::default(),
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
            now: Default::default(),
            held: Default::default(),
            deadline: QpRam::new(queue_pairs),
            scan: Default::default(),
            scan_q: Default::default(),
            scan_fresh: Default::default(),
            hold_onehot: Default::default(),
            release_onehot: Default::default(),
            drop_onehot: Default::default(),
            hold_ahead: Default::default(),
            hold_in_range: Default::default(),
            last_qp: Constant::new(((queue_pairs - 1) as u64).to_bits()),
            half_range: Constant::new((1u64 << 31).to_bits()),
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
            pick_valid, pick_qp, now, held, scan, scan_q, scan_fresh
        );
        self.deadline.clock.next = self.clock.val();
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
        // Holds: set from the next clock; released by the scan (see the doc comment).
        self.now.d.next = self.now.q.val() + 1;
        self.hold_in_range.next =
            self.s_hold_valid.val() & (self.s_hold_qp.val() <= self.last_qp.val());
        self.hold_onehot.next = 0.into();
        if self.hold_in_range.val() {
            self.hold_onehot.next = self.one.val() << self.s_hold_qp.val();
        }
        self.deadline.write_address.next = self.s_hold_qp.val();
        self.deadline.write_data.next =
            self.now.q.val() + bit_cast::<32, 24>(self.s_hold_cycles.val());
        self.deadline.write_enable.next = self.hold_in_range.val();
        self.deadline.read_address.next = self.scan.q.val();
        self.scan.d.next = self.scan.q.val() + 1;
        if self.scan.q.val() == self.last_qp.val() {
            self.scan.d.next = 0.into();
        }
        self.scan_q.d.next = self.scan.q.val();
        self.scan_fresh.d.next =
            !(self.s_hold_valid.val() & (self.s_hold_qp.val() == self.scan.q.val()));
        self.hold_ahead.next =
            (self.now.q.val() - self.deadline.read_data.val()) >= self.half_range.val();
        self.drop_onehot.next = 0.into();
        if self.s_drop_valid.val() {
            self.drop_onehot.next = self.one.val() << self.s_drop_qp.val();
        }
        self.release_onehot.next = 0.into();
        if self.scan_fresh.q.val() & !self.hold_ahead.val() {
            self.release_onehot.next = self.one.val() << self.scan_q.q.val();
        }
        self.held.d.next = ((self.held.q.val() & !self.release_onehot.val())
            | self.hold_onehot.val())
            & !self.drop_onehot.val();
        // Registered: the transmit machine picks from last clock's bits and pointer (the
        // pointer changes only at a pick, and the machine comes back for the next one no
        // sooner than four clocks later).
        self.rr.s_request.next = self.eligible.q.val() & !self.held.q.val();
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
            self.now.d.next = 0.into();
            self.held.d.next = 0.into();
            self.scan.d.next = 0.into();
            self.scan_fresh.d.next = false;
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
        /// Holds (DELAY): the cycle counter, held bits, deadlines, the release scan.
        now: u32,
        held: u64,
        deadline: [u32; 64],
        scan: usize,
        scan_q: usize,
        scan_fresh: bool,
    }

    /// A hold request: queue pair, cycles.
    type Hold = (usize, u32);

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

        fn new(queue_pairs: usize) -> Self {
            Model {
                queue_pairs,
                registered: None,
                eligible: 0,
                picked_from: 0,
                pointer: 0,
                pick: None,
                now: 0,
                held: 0,
                deadline: [0; 64],
                scan: 0,
                scan_q: 0,
                scan_fresh: false,
            }
        }

        /// One clock edge with these inputs.
        fn clock(
            &mut self,
            wb: Option<WriteBack>,
            taken: bool,
            reset: bool,
            hold: Option<Hold>,
            drop: Option<usize>,
        ) {
            // The pick is registered from the bits and the pointer before this edge; a
            // held queue pair is never picked.
            let next_pick = self.round_robin(self.eligible & !self.held);
            // The release scan compares the deadline it read last clock (unless a hold
            // for that queue pair came then); a hold this clock wins.
            let mut held = self.held;
            if self.scan_fresh && self.now.wrapping_sub(self.deadline[self.scan_q]) as i32 >= 0 {
                held &= !(1u64 << self.scan_q);
            }
            if let Some((qp, cycles)) = hold {
                if qp < self.queue_pairs {
                    held |= 1u64 << qp;
                    self.deadline[qp] = self.now.wrapping_add(cycles);
                }
            }
            // A QP reset drops the hold, over a hold in the same clock.
            if let Some(qp) = drop {
                held &= !(1u64 << qp);
            }
            self.scan_fresh = hold.is_none_or(|(qp, _)| qp != self.scan);
            self.scan_q = self.scan;
            self.scan = (self.scan + 1) % self.queue_pairs;
            self.now = self.now.wrapping_add(1);
            self.held = held;
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
                    deadline: self.deadline,
                    scan_q: self.scan_q,
                    ..Model::new(self.queue_pairs)
                };
            }
        }
    }

    /// Seeded random write-backs (bursts, idle gaps) and a transmit machine that takes the
    /// pick at random (back-pressure), with resets; the pick compared every clock.
    fn run(queue_pairs: usize, seed: u64, cycles: usize) -> usize {
        let mut uut = Scheduler::new(queue_pairs);
        uut.connect_all();
        let mut model = Model::new(queue_pairs);
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
            // DELAY holds: mostly short, some long enough to outlast a scan round.
            let hold = rng.gen_bool(0.03).then(|| {
                let cycles = match rng.gen_range(0..10) {
                    0 => 0,
                    1 => rng.gen_range(100..400),
                    _ => rng.gen_range(1..40),
                };
                (rng.gen_range(0..64.min(queue_pairs + 2)), cycles)
            });
            let drop = rng
                .gen_bool(0.01)
                .then(|| rng.gen_range(0..64.min(queue_pairs + 2)));
            let (hold_qp, hold_cycles) = hold.unwrap_or_default();
            uut.s_drop_valid.next = drop.is_some();
            uut.s_drop_qp.next = (drop.unwrap_or_default() as u64).to_bits();
            uut.s_hold_valid.next = hold.is_some();
            uut.s_hold_qp.next = (hold_qp as u64).to_bits();
            uut.s_hold_cycles.next = (hold_cycles as u64).to_bits();
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
                uut.held.q.val().to_u64(),
                model.held,
                "held bits at clock {cycle}"
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
            model.clock(wb, taken, reset, hold, drop);
            picks += taken as usize;
        }
        picks
    }

    /// A hold of `n` cycles at clock t keeps queue pair 0 out of the picks of clocks t + 2
    /// to t + n + 2 while queue pair 1, eligible all along, is picked throughout; then queue pair
    /// 0 is picked again, within `n + queue_pairs + 3` clocks.
    #[test]
    fn hold_keeps_one_queue_pair_out_while_others_run() {
        for (queue_pairs, n) in [(2usize, 50u32), (4, 1), (4, 300), (64, 70)] {
            let mut uut = Scheduler::new(queue_pairs);
            uut.connect_all();
            uut.reset.next = true;
            tick(&mut uut);
            uut.reset.next = false;
            for qp in 0..2u64 {
                uut.s_wb_valid.next = true;
                uut.s_wb_qp.next = qp.to_bits();
                uut.s_wb_next.next = 0.into();
                uut.s_wb_una.next = 0.into();
                uut.s_wb_pi.next = 5.into();
                uut.s_wb_ready.next = true;
                uut.s_wb_drain.next = false;
                tick(&mut uut);
            }
            uut.s_wb_valid.next = false;
            uut.s_hold_valid.next = true;
            uut.s_hold_qp.next = 0.into();
            uut.s_hold_cycles.next = (n as u64).to_bits();
            tick(&mut uut);
            uut.s_hold_valid.next = false;
            let (mut last0, mut first0, mut picks1) = (None, None, 0);
            for clock in 1..(n as usize + queue_pairs + 40) {
                settle(&mut uut);
                let pick = uut.m_pick_valid.val().then(|| uut.m_pick_qp.val().index());
                // The pick of clock t + 1 was made before the hold (at t).
                if pick == Some(0) && first0.is_none() && clock >= 2 {
                    first0 = Some(clock);
                }
                if pick == Some(0) && (2..=n as usize + 2).contains(&clock) {
                    last0 = Some(clock);
                }
                picks1 += (pick == Some(1)) as usize;
                uut.s_pick_taken.next = pick.is_some();
                tick(&mut uut);
            }
            assert_eq!(last0, None, "{queue_pairs} QPs: picked while held for {n}");
            let first0 = first0.expect("picked after the hold");
            assert!(
                first0 <= n as usize + queue_pairs + 3,
                "{queue_pairs} QPs, {n} cycles: first picked {first0} clocks after the hold"
            );
            assert!(
                picks1 > n as usize / 2,
                "queue pair 1 kept running: {picks1}"
            );
        }
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
