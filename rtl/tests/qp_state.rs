//! `QpState` (the receive engine's per-QP state table) against a plain-Rust model written
//! from its documentation, driven by the same CSR, expect, lookup and write-back stimulus
//! (idle gaps and back-pressure on the CSR port through `hold`); compared on its outputs.

use nic_abi::csr;
use nic_rtl::responder::{QpState, QpWriteBack};
use nic_rtl::sim::{settle, tick};
use rust_hdl::prelude::*;

/// The `reg` number of a per-QP register on the CSR side port.
const fn reg(offset: u16) -> u64 {
    (offset / 8) as u64
}
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const RQ_BASE: u64 = reg(csr::QP_RQ_BASE);
const RQ_SIZE_LOG2: u64 = reg(csr::QP_RQ_SIZE_LOG2);
const RQ_PI: u64 = reg(csr::QP_RQ_PI);
const RQ_CI: u64 = reg(csr::QP_RQ_CI);
const QP_REMOTE: u64 = reg(csr::QP_REMOTE);
const QP_CTRL: u64 = reg(csr::QP_CTRL);
const QP_STATUS: u64 = reg(csr::QP_STATUS);
const M24: u64 = 0xFF_FFFF;

/// One queue pair's RAM words (all 64 addresses exist, whatever `queue_pairs`).
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Words {
    rq_base: u64,
    rq_log2: u64,
    rq_pi: u64,
    remote: u64,
    rq_ci: u64,
    expected: u64,
    refused: u64,
    rs_psn: u64,
    atomic_psn: u64,
    atomic_value: u64,
    expect_psn: u64,
    expect_atomic: bool,
    expect_addr: u64,
    expect_length: u64,
}

/// One queue pair's flags.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Flags {
    enabled: bool,
    synced: bool,
    nak: bool,
    refused: bool,
    rs: bool,
    expect: bool,
    atomic: bool,
}

#[derive(Clone, Copy, Default, Debug)]
struct CsrOp {
    write: bool,
    qp: u64,
    reg: u64,
    wdata: u64,
}

#[derive(Clone, Copy, Default, Debug)]
struct Expect {
    qp: u64,
    psn: u64,
    atomic: bool,
    addr: u64,
    length: u64,
}

/// What the engine asks of the table in one clock.
#[derive(Clone, Copy, Default, Debug)]
struct Engine {
    lookup: Option<u64>,
    hold: bool,
    ctx_qp: u64,
    state: Option<(u64, u64)>,
    atomic: Option<(u64, u64)>,
    refused: Option<u64>,
    rs_set: Option<u64>,
    rs_clear: bool,
    synced_set: bool,
    nak_set: bool,
    nak_clear: bool,
    expect_clear: bool,
}

/// The table as its documentation describes it, stepped by its inputs only.
struct Model {
    queue_pairs: u64,
    words: [Words; 64],
    flags: [Flags; 64],
    swept: bool,
    sweep: u64,
    /// The CSR read answered this clock: register, in range, the words read, its QP.
    csr_read: Option<(u64, bool, Words, u64)>,
    /// The words a lookup read at the last edge.
    looked_up: Option<Words>,
}

impl Model {
    fn new(queue_pairs: u64) -> Self {
        Model {
            queue_pairs,
            words: [Words::default(); 64],
            flags: [Flags::default(); 64],
            swept: false,
            sweep: 0,
            csr_read: None,
            looked_up: None,
        }
    }

    fn csr_open(&self, e: &Engine) -> bool {
        !e.hold && self.swept
    }

    fn csr_rdata(&self) -> u64 {
        match self.csr_read {
            Some((_, false, _, _)) | None => 0,
            Some((reg, true, w, qp)) => match reg {
                RQ_BASE => w.rq_base,
                RQ_SIZE_LOG2 => w.rq_log2,
                RQ_PI => w.rq_pi,
                RQ_CI => w.rq_ci,
                QP_STATUS => w.expected << 24 | (self.flags[qp as usize].synced as u64) << 48,
                _ => 0,
            },
        }
    }

    /// A CSR reset or resume taken this clock, of which QP.
    fn ctrl(&self, op: Option<CsrOp>, e: &Engine) -> Option<(u64, bool, bool)> {
        let op = op.filter(|o| {
            self.csr_open(e) && o.write && o.qp < self.queue_pairs && o.reg == QP_CTRL
        })?;
        Some((
            op.qp,
            op.wdata & csr::QP_CTRL_RESET != 0,
            op.wdata & csr::QP_CTRL_RESUME != 0,
        ))
    }

    /// One clock edge with these inputs.
    fn clock(&mut self, op: Option<CsrOp>, ex: Option<Expect>, e: &Engine, reset: bool) {
        let take = op.filter(|_| self.csr_open(e));
        let read_qp = e.lookup.or(op.map(|o| o.qp)).unwrap_or(0) as usize;
        // A QP at or beyond `queue_pairs` has no words: its lookup answers zero, as when
        // there is no lookup.
        self.looked_up = e
            .lookup
            .filter(|&q| q < self.queue_pairs)
            .map(|_| self.words[read_qp]);
        self.csr_read = take
            .filter(|o| !o.write)
            .map(|o| (o.reg, o.qp < self.queue_pairs, self.words[read_qp], o.qp));
        let mut words = self.words;
        let mut set = [Flags::default(); 64];
        let mut clear = [Flags::default(); 64];
        let ctx = e.ctx_qp as usize;
        // The engine's write-backs to ctx_qp: a QP at or beyond `queue_pairs` has no words
        // (and its flags stay clear, below).
        let mut no_words = Words::default();
        let w = if e.ctx_qp < self.queue_pairs {
            &mut words[ctx]
        } else {
            &mut no_words
        };
        if let Some((ci, expected)) = e.state {
            w.rq_ci = ci;
            w.expected = expected;
        }
        if let Some((psn, value)) = e.atomic {
            w.atomic_psn = psn;
            w.atomic_value = value;
            set[ctx].atomic = true;
        }
        if let Some(window) = e.refused {
            w.refused = window;
            set[ctx].refused = true;
        }
        if let Some(psn) = e.rs_set {
            w.rs_psn = psn;
            set[ctx].rs = true;
        }
        set[ctx].synced |= e.synced_set;
        set[ctx].nak |= e.nak_set;
        clear[ctx].nak |= e.nak_clear;
        clear[ctx].rs |= e.rs_clear;
        clear[ctx].expect |= e.expect_clear;
        // CSR writes.
        if let Some(o) = take.filter(|o| o.write && o.qp < self.queue_pairs) {
            let q = o.qp as usize;
            let w = &mut words[q];
            match o.reg {
                RQ_BASE => w.rq_base = o.wdata & 0xFFFF_FFFF,
                RQ_SIZE_LOG2 => w.rq_log2 = o.wdata & 0x1F,
                RQ_PI => w.rq_pi = o.wdata & M24,
                QP_REMOTE => w.remote = o.wdata & 0xFFFF_FFFF,
                QP_CTRL => {
                    clear[q].enabled = true;
                    set[q].enabled = o.wdata & csr::QP_CTRL_ENABLE != 0;
                    if o.wdata & csr::QP_CTRL_RESET != 0 {
                        w.rq_pi = 0;
                        w.rq_ci = 0;
                        clear[q] = Flags {
                            enabled: true,
                            synced: true,
                            nak: true,
                            refused: true,
                            rs: true,
                            expect: true,
                            atomic: true,
                        };
                    }
                    if o.wdata & csr::QP_CTRL_RESUME != 0 {
                        let psn = o.wdata >> 8 & M24;
                        w.expected = psn;
                        w.rs_psn = psn;
                        set[q].synced = true;
                        set[q].rs = true;
                        clear[q].nak = true;
                        clear[q].refused = true;
                    }
                }
                _ => {}
            }
        }
        // Expect events.
        if let Some(x) = ex.filter(|x| self.swept && x.qp < self.queue_pairs) {
            let w = &mut words[x.qp as usize];
            w.expect_psn = x.psn;
            w.expect_atomic = x.atomic;
            w.expect_addr = x.addr;
            w.expect_length = x.length;
            set[x.qp as usize].expect = true;
        }
        // The sweep after reset.
        if !self.swept {
            let w = &mut words[self.sweep as usize];
            (w.rq_base, w.rq_log2, w.rq_pi, w.remote, w.rq_ci, w.expected) = (0, 0, 0, 0, 0, 0);
            if self.sweep == 63 {
                self.swept = true;
            }
            self.sweep = (self.sweep + 1) % 64;
        }
        self.words = words;
        for q in 0..64 {
            let (f, s, c) = (&mut self.flags[q], set[q], clear[q]);
            let upd = |old: bool, s: bool, c: bool| (old && !c) || s;
            f.enabled = upd(f.enabled, s.enabled, c.enabled);
            f.synced = upd(f.synced, s.synced, c.synced);
            f.nak = upd(f.nak, s.nak, c.nak);
            f.refused = upd(f.refused, s.refused, c.refused);
            f.rs = upd(f.rs, s.rs, c.rs);
            f.expect = upd(f.expect, s.expect, c.expect);
            f.atomic = upd(f.atomic, s.atomic, c.atomic);
            if q as u64 >= self.queue_pairs || reset {
                *f = Flags::default();
            }
        }
        if reset {
            self.swept = false;
            self.sweep = 0;
            self.csr_read = None;
        }
    }
}

/// Seeded random CSR accesses and expect events (held until taken, with idle gaps), an
/// engine that holds the port at random (back-pressure on the CSR port), looks QPs up
/// and writes back, and resets; every output compared every clock.
fn run(queue_pairs: u64, seed: u64, cycles: usize) -> (usize, usize) {
    let mut uut = QpState::new(queue_pairs as usize);
    uut.connect_all();
    let mut model = Model::new(queue_pairs);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut op: Option<CsrOp> = None;
    let mut ex: Option<Expect> = None;
    let (mut reads, mut lookups) = (0, 0);
    let mut ctx_qp = 0u64;
    let qp_range = 64.min(queue_pairs + 2);
    let regs = [
        RQ_BASE,
        RQ_SIZE_LOG2,
        RQ_PI,
        RQ_CI,
        QP_REMOTE,
        QP_CTRL,
        QP_STATUS,
        0,
        15,
    ];
    for cycle in 0..cycles {
        let phase = (cycle / 200) % 4;
        let p_op = [0.9, 0.3, 0.05, 0.6][phase];
        let p_hold = [0.1, 0.6, 0.0, 0.9][phase];
        if op.is_none() && rng.gen_bool(p_op) {
            let reg = regs[rng.gen_range(0..regs.len())];
            let mut wdata = rng.gen::<u64>();
            if reg == QP_CTRL {
                // Mostly enable, sometimes reset or resume, near PSN 0.
                wdata = [1, 0, 1 | 2, 1 | 8, 1 | 2 | 8, 8][rng.gen_range(0..6)]
                    | (rng.gen_range(0..40u64) << 8);
            }
            op = Some(CsrOp {
                write: rng.gen_bool(0.5),
                qp: rng.gen_range(0..qp_range),
                reg,
                wdata,
            });
        }
        if ex.is_none() && rng.gen_bool(p_op / 2.0) {
            ex = Some(Expect {
                qp: rng.gen_range(0..qp_range),
                psn: rng.gen::<u64>() & M24,
                atomic: rng.gen_bool(0.5),
                addr: rng.gen::<u32>() as u64,
                length: rng.gen::<u32>() as u64,
            });
        }
        let reset = rng.gen_bool(0.002);
        let hold = rng.gen_bool(p_hold);
        if rng.gen_bool(0.1) {
            ctx_qp = rng.gen_range(0..64);
        }
        let some = |rng: &mut ChaCha8Rng, p: f64| hold && model.swept && rng.gen_bool(p);
        let e = Engine {
            lookup: (hold && rng.gen_bool(0.5)).then(|| rng.gen_range(0..qp_range)),
            hold,
            ctx_qp,
            state: some(&mut rng, 0.3).then(|| (rng.gen::<u64>() & M24, rng.gen::<u64>() & M24)),
            atomic: some(&mut rng, 0.1).then(|| (rng.gen::<u64>() & M24, rng.gen())),
            refused: some(&mut rng, 0.2).then(|| rng.gen::<u64>() & M24),
            rs_set: some(&mut rng, 0.1).then(|| rng.gen::<u64>() & M24),
            rs_clear: rng.gen_bool(0.05),
            synced_set: rng.gen_bool(0.05),
            nak_set: rng.gen_bool(0.05),
            nak_clear: rng.gen_bool(0.05),
            expect_clear: rng.gen_bool(0.05),
        };
        let o = op.unwrap_or_default();
        let x = ex.unwrap_or_default();
        uut.reset.next = reset;
        uut.s_csr_valid.next = op.is_some();
        uut.s_csr_write.next = o.write;
        uut.s_csr_qp.next = o.qp.to_bits();
        uut.s_csr_reg.next = o.reg.to_bits();
        uut.s_csr_wdata.next = o.wdata.to_bits();
        uut.s_expect_valid.next = ex.is_some();
        uut.s_expect_qp.next = x.qp.to_bits();
        uut.s_expect_psn.next = x.psn.to_bits();
        uut.s_expect_atomic.next = x.atomic;
        uut.s_expect_addr.next = x.addr.to_bits();
        uut.s_expect_length.next = x.length.to_bits();
        uut.lookup.next = e.lookup.is_some();
        uut.lookup_qp.next = e.lookup.unwrap_or(0).to_bits();
        uut.hold.next = e.hold;
        uut.ctx_qp.next = e.ctx_qp.to_bits();
        let (ci, expected) = e.state.unwrap_or_default();
        let (apsn, avalue) = e.atomic.unwrap_or_default();
        let write_back = QpWriteBack {
            state: e.state.is_some(),
            rq_ci: ci.to_bits(),
            expected: expected.to_bits(),
            atomic: e.atomic.is_some(),
            refused: e.refused.is_some(),
            window: e.refused.unwrap_or(0).to_bits(),
            rs_set: e.rs_set.is_some(),
            rs_psn: e.rs_set.unwrap_or(0).to_bits(),
            rs_clear: e.rs_clear,
            synced_set: e.synced_set,
            nak_set: e.nak_set,
            nak_clear: e.nak_clear,
        };
        uut.s_write_back.next = write_back;
        uut.wr_atomic_psn.next = apsn.to_bits();
        uut.wr_atomic_value.next = avalue.to_bits();
        uut.expect_clear.next = e.expect_clear;
        settle(&mut uut);
        let at = format!("clock {cycle} (queue_pairs {queue_pairs}, seed {seed})");
        assert_eq!(uut.s_csr_ready.val(), model.csr_open(&e), "csr ready, {at}");
        assert_eq!(
            uut.write_back_busy.val(),
            e.state.is_some()
                || e.atomic.is_some()
                || e.refused.is_some()
                || e.rs_set.is_some()
                || e.rs_clear
                || e.synced_set
                || e.nak_set
                || e.nak_clear,
            "write_back_busy, {at}"
        );
        assert_eq!(uut.s_expect_ready.val(), model.swept, "expect ready, {at}");
        assert_eq!(
            uut.sweep_done.val(),
            !model.swept && model.sweep == 63,
            "sweep_done, {at}"
        );
        assert_eq!(
            uut.m_csr_rdata_valid.val(),
            model.csr_read.is_some(),
            "rdata valid, {at}"
        );
        if model.csr_read.is_some() {
            reads += 1;
            assert_eq!(
                uut.m_csr_rdata.val().to_u64(),
                model.csr_rdata(),
                "rdata, {at}"
            );
        }
        let f = model.flags[ctx_qp as usize];
        let got = [
            uut.m_lookup.val().enabled,
            uut.m_lookup.val().synced,
            uut.m_lookup.val().nak_sent,
            uut.m_lookup.val().rs_valid,
            uut.m_lookup.val().atomic_valid,
            uut.m_lookup.val().expect_valid,
        ];
        let want = [f.enabled, f.synced, f.nak, f.rs, f.atomic, f.expect];
        assert_eq!(got, want, "ctx flags of QP {ctx_qp}, {at}");
        let abort = model
            .ctrl(op, &e)
            .is_some_and(|(q, r, s)| (r || s) && q == ctx_qp);
        assert_eq!(uut.ctx_abort.val(), abort, "ctx_abort, {at}");
        if model.looked_up.is_none() {
            let zero = [
                uut.m_lookup.val().expected.to_u64(),
                uut.m_lookup.val().rqe_addr.to_u64(),
                uut.m_lookup.val().atomic_value.to_u64(),
                uut.m_lookup.val().expect_length.to_u64(),
                uut.m_lookup.val().refused.to_u64(),
                uut.m_lookup.val().rq_empty as u64,
            ];
            assert_eq!(zero, [0; 6], "no entry without a lookup, {at}");
        }
        if let Some(w) = model.looked_up {
            lookups += 1;
            let ring = w.rq_ci & ((1u64 << w.rq_log2) - 1);
            let got = [
                uut.m_lookup.val().expected.to_u64(),
                uut.m_lookup.val().rq_ci.to_u64(),
                uut.m_lookup.val().rq_empty as u64,
                uut.m_lookup.val().rqe_addr.to_u64(),
                uut.m_lookup.val().remote.to_u64(),
                uut.m_lookup.val().refused.to_u64(),
                uut.m_lookup.val().rs_psn.to_u64(),
                uut.m_lookup.val().atomic_psn.to_u64(),
                uut.m_lookup.val().atomic_value.to_u64(),
                uut.m_lookup.val().expect_psn.to_u64(),
                uut.m_lookup.val().expect_atomic as u64,
                uut.m_lookup.val().expect_addr.to_u64(),
                uut.m_lookup.val().expect_length.to_u64(),
            ];
            let want = [
                w.expected,
                w.rq_ci,
                (w.rq_pi == w.rq_ci) as u64,
                (w.rq_base + (ring << 5)) & 0xFFFF_FFFF,
                w.remote,
                if f.refused { w.refused } else { 0 },
                w.rs_psn,
                w.atomic_psn,
                w.atomic_value,
                w.expect_psn,
                w.expect_atomic as u64,
                w.expect_addr,
                w.expect_length,
            ];
            assert_eq!(got, want, "entry looked up, {at}");
        }
        let taken = op.is_some() && model.csr_open(&e);
        let expect_taken = ex.is_some() && model.swept;
        model.clock(op, ex, &e, reset);
        tick(&mut uut);
        if taken {
            op = None;
        }
        if expect_taken {
            ex = None;
        }
    }
    (reads, lookups)
}

#[test]
fn synthesises() {
    let mut uut = QpState::new(4);
    uut.connect_all();
    yosys_validate("nic_rtl_responder_qp_state", &generate_verilog(&uut))
        .expect("yosys accepts QpState");
}

#[test]
fn matches_model_with_gaps_and_backpressure() {
    for (queue_pairs, seed) in [(4, 1), (64, 2), (1, 3), (17, 4)] {
        let (reads, lookups) = run(queue_pairs, seed, 6_000);
        assert!(
            reads > 300 && lookups > 300,
            "{queue_pairs} queue pairs: {reads} reads, {lookups} lookups"
        );
    }
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64, got 0")]
fn rejects_zero_queue_pairs() {
    QpState::new(0);
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64, got 65")]
fn rejects_too_many_queue_pairs() {
    QpState::new(65);
}

/// The cosimulation unpacks a write-back from its bits: unpacking inverts packing, every
/// field at its own offset.
#[test]
fn write_back_unpacks_what_it_packs() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..200 {
        let wb = QpWriteBack {
            state: rng.gen(),
            rq_ci: rng.gen_range(0..1u64 << 24).to_bits(),
            expected: rng.gen_range(0..1u64 << 24).to_bits(),
            atomic: rng.gen(),
            refused: rng.gen(),
            window: rng.gen_range(0..1u64 << 24).to_bits(),
            rs_set: rng.gen(),
            rs_psn: rng.gen_range(0..1u64 << 24).to_bits(),
            rs_clear: rng.gen(),
            synced_set: rng.gen(),
            nak_set: rng.gen(),
            nak_clear: rng.gen(),
        };
        let bits: Bits<{ <QpWriteBack as Synth>::BITS }> = wb.into();
        assert_eq!(QpWriteBack::from(bits), wb);
    }
}
