//! `AckMachine` against a plain-Rust model written from its doc comment: one event or local
//! completion at a time (a local completion first), its evaluation request, per completed
//! WQE the two-word re-read at `base + (index mod 2^size) * 64`, the completion request and
//! the advance; the timer scan when idle. The table engine is a fake that grants with gaps,
//! takes two clocks to execute (a scan may give way in the first), and answers with random
//! jobs; the DMA read server and the completion consumer apply back-pressure; QP resets
//! come at random.

use nic_model::{Source, Throttle};
use nic_rtl::requester::AckMachine;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    ScanWait,
    EvalReq,
    EvalWait,
    Issue,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Back {
    Free,
    Cpl,
    AdvReq,
    AdvWait,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
struct Event {
    qp: u64,
    psn: u64,
    syndrome: u64,
    response: bool,
    resync: bool,
}

#[derive(Copy, Clone, Debug, Default)]
struct Job {
    first: u64,
    succ: u64,
    run_status: u64,
    fin: bool,
    status: u64,
    resync: bool,
    base: u64,
    size: u64,
    remote: u64,
}

/// A completion whose re-read is requested (in the read queue) or whose words arrived
/// (in the back).
#[derive(Copy, Clone, Debug, Default)]
struct Entry {
    qp: u64,
    idx: u64,
    status: u64,
    set_resync: bool,
    remote: u64,
    stale: bool,
    void: bool,
}

/// The machine as its doc comment describes it.
struct Model {
    queue_pairs: u64,
    phase: Phase,
    qp: u64,
    evt: Event,
    local: bool,
    local_status: u64,
    stale: bool,
    scan: u64,
    job: Job,
    /// Index of the next completion to request and how many of the leading run are left.
    idx: u64,
    succ: u64,
    fin: bool,
    /// The read queue, oldest first (at most two).
    queue: VecDeque<Entry>,
    back: Back,
    b: Entry,
    beat: bool,
    opcode: u64,
    len: u64,
    wr_id: u64,
}

/// The outputs the model expects this clock.
#[derive(Debug, PartialEq, Eq)]
struct Outputs {
    ack_ready: bool,
    local_ready: bool,
    req_valid: bool,
    req_advance: bool,
    req_qp: u64,
    scan_valid: bool,
    scan_qp: u64,
    evt: (u64, u64, bool, bool, bool, u64),
    adv: (u64, bool, bool),
    cplrd_req: (bool, u64, u64),
    cplrd_ready: bool,
    cpl_valid: bool,
    cpl: (u64, u64, u64, u64, u64, u64, u64, u64),
}

impl Model {
    fn new(queue_pairs: u64) -> Self {
        Model {
            queue_pairs,
            phase: Phase::Idle,
            qp: 0,
            evt: Event::default(),
            local: false,
            local_status: 0,
            stale: false,
            scan: 0,
            job: Job::default(),
            idx: 0,
            succ: 0,
            fin: false,
            queue: VecDeque::new(),
            back: Back::Free,
            b: Entry::default(),
            beat: false,
            opcode: 0,
            len: 0,
            wr_id: 0,
        }
    }

    /// The job's next completion: the leading run's status while some are left, else the
    /// final one's; only the final one sets the resync flag.
    fn current(&self) -> (u64, bool) {
        if self.succ != 0 {
            (self.job.run_status, false)
        } else {
            (self.job.status, self.job.resync)
        }
    }

    fn all_idle(&self) -> bool {
        self.back == Back::Free && self.queue.is_empty()
    }

    /// The front's QP has a completion in the queue or the back.
    fn hazard(&self) -> bool {
        self.queue.iter().any(|e| e.qp == self.qp)
            || (self.back != Back::Free && self.b.qp == self.qp)
    }

    fn adv_go(&self) -> bool {
        self.back == Back::AdvReq && !matches!(self.phase, Phase::EvalWait | Phase::ScanWait)
    }

    fn eval_go(&self) -> bool {
        self.phase == Phase::EvalReq
            && !self.hazard()
            && !matches!(self.back, Back::AdvReq | Back::AdvWait)
    }

    fn outputs(&self, local_offered: bool, ack_offered: bool) -> Outputs {
        let idle = self.phase == Phase::Idle;
        let slot = self.idx & ((1u64 << self.job.size.min(24)) - 1) & 0xFF_FFFF;
        Outputs {
            ack_ready: idle && !local_offered,
            local_ready: idle,
            req_valid: self.adv_go() || self.eval_go(),
            req_advance: self.adv_go(),
            req_qp: if self.adv_go() { self.b.qp } else { self.qp },
            scan_valid: idle && !local_offered && !ack_offered && self.all_idle(),
            scan_qp: self.scan,
            evt: (
                self.evt.psn,
                self.evt.syndrome,
                self.evt.response,
                self.evt.resync,
                self.local,
                self.local_status,
            ),
            adv: (self.b.idx, self.b.set_resync, self.b.stale),
            cplrd_req: (
                self.phase == Phase::Issue && self.queue.len() < 2 && !self.stale,
                (self.job.base + (slot << 6)) & 0xFFFF_FFFF,
                2,
            ),
            cplrd_ready: self.back == Back::Free && !self.queue.is_empty(),
            cpl_valid: self.back == Back::Cpl,
            cpl: (
                self.opcode,
                self.b.status,
                self.b.qp,
                self.len,
                self.b.idx,
                self.b.remote & 0xFFFF,
                self.b.remote >> 16,
                self.wr_id,
            ),
        }
    }
}

/// What the environment drives in one clock.
#[derive(Default)]
struct Inputs {
    local: Option<(u64, u64, u64)>,
    ack: Option<Event>,
    grant: bool,
    preempted: bool,
    exec: bool,
    exec_ok: bool,
    job: Option<Job>,
    qp_reset: Option<u64>,
    cplrd_req_ready: bool,
    cplrd: Option<(u64, bool)>,
    cpl_ready: bool,
}

impl Model {
    /// The clock edge.
    fn step(&mut self, i: &Inputs) {
        let phase = self.phase;
        let stale = self.stale;
        let all_idle = self.all_idle();
        let eval_go = self.eval_go();
        let adv_go = self.adv_go();
        let reset_hit = |qp: u64| i.qp_reset == Some(qp);
        let push =
            phase == Phase::Issue && self.queue.len() < 2 && !self.stale && i.cplrd_req_ready;
        let fail = self.back == Back::AdvWait && i.exec && !i.exec_ok;
        let taking = self.back == Back::Free && !self.queue.is_empty();
        let pop = taking && matches!(i.cplrd, Some((_, true)));
        // ---- The queue (flags of the entries already in it) ----
        for e in self.queue.iter_mut() {
            e.stale |= reset_hit(e.qp);
            e.void |= fail && self.b.qp == e.qp;
        }
        if push {
            let (status, set_resync) = self.current();
            self.queue.push_back(Entry {
                qp: self.qp,
                idx: self.idx,
                status,
                set_resync,
                remote: self.job.remote,
                stale: self.stale || reset_hit(self.qp),
                void: fail && self.b.qp == self.qp,
            });
        }
        // ---- The front ----
        if reset_hit(self.qp) && phase != Phase::Idle {
            self.stale = true;
        }
        match phase {
            Phase::Idle => {
                self.stale = false;
                if let Some((qp, psn, status)) = i.local {
                    self.qp = qp;
                    self.evt.psn = psn;
                    self.evt.resync = false;
                    self.local = true;
                    self.local_status = status;
                    self.phase = Phase::EvalReq;
                } else if let Some(e) = i.ack {
                    self.qp = e.qp;
                    self.evt = e;
                    self.local = false;
                    self.phase = Phase::EvalReq;
                } else if i.grant && all_idle {
                    self.qp = self.scan;
                    self.phase = Phase::ScanWait;
                }
            }
            Phase::ScanWait => {
                if i.preempted {
                    self.phase = Phase::Idle;
                }
                if i.exec {
                    self.scan = (self.scan + 1) % self.queue_pairs;
                    self.phase = if i.job.is_some() {
                        Phase::Issue
                    } else {
                        Phase::Idle
                    };
                }
            }
            Phase::EvalReq if i.grant && eval_go => self.phase = Phase::EvalWait,
            Phase::EvalWait if i.exec => {
                self.phase = if i.job.is_some() {
                    Phase::Issue
                } else {
                    Phase::Idle
                };
            }
            Phase::Issue => {
                if push {
                    let more = self.succ != 0 && (self.succ != 1 || self.fin);
                    if self.succ != 0 {
                        self.succ -= 1;
                    } else {
                        self.fin = false;
                    }
                    self.idx = (self.idx + 1) & 0xFF_FFFF;
                    if !more {
                        self.phase = Phase::Idle;
                    }
                }
                if stale || (fail && self.b.qp == self.qp) {
                    self.phase = Phase::Idle;
                }
            }
            _ => {}
        }
        // The job's fields are taken at every execute clock of the machine's evaluation
        // or scan (the fake engine drives zeros without a job).
        if i.exec && matches!(phase, Phase::EvalWait | Phase::ScanWait) {
            let j = i.job.unwrap_or_default();
            self.stale = false;
            self.job = j;
            self.idx = j.first;
            self.succ = j.succ;
            self.fin = j.fin;
        }
        // ---- The back ----
        if reset_hit(self.b.qp) && self.back != Back::Free {
            self.b.stale = true;
        }
        match self.back {
            Back::Free => {
                if let (true, Some((word, last))) = (taking, i.cplrd) {
                    if self.beat {
                        self.wr_id = word;
                    } else {
                        self.opcode = word & 0xFF;
                        self.len = word >> 32;
                    }
                    self.beat = !last;
                }
                if pop {
                    self.b = self.queue.pop_front().unwrap();
                    if !self.b.void {
                        self.back = Back::Cpl;
                    }
                }
            }
            Back::Cpl if i.cpl_ready => self.back = Back::AdvReq,
            Back::AdvReq if i.grant && adv_go => self.back = Back::AdvWait,
            Back::AdvWait if i.exec => self.back = Back::Free,
            _ => {}
        }
    }
}

fn outputs_of(u: &AckMachine) -> Outputs {
    Outputs {
        ack_ready: u.s_ack_ready.val(),
        local_ready: u.s_local_ready.val(),
        req_valid: u.m_req_valid.val(),
        req_advance: u.m_req_advance.val(),
        req_qp: u.m_req_qp.val().to_u64(),
        scan_valid: u.m_scan_valid.val(),
        scan_qp: u.m_scan_qp.val().to_u64(),
        evt: (
            u.m_evt_psn.val().to_u64(),
            u.m_evt_syndrome.val().to_u64(),
            u.m_evt_response.val(),
            u.m_evt_resync.val(),
            u.m_evt_local.val(),
            u.m_evt_local_status.val().to_u64(),
        ),
        adv: (
            u.m_adv_idx.val().to_u64(),
            u.m_adv_set_resync.val(),
            u.m_adv_stale.val(),
        ),
        cplrd_req: (
            u.m_cplrd_req_valid.val(),
            u.m_cplrd_req_addr.val().to_u64(),
            u.m_cplrd_req_words.val().to_u64(),
        ),
        cplrd_ready: u.s_cplrd_ready.val(),
        cpl_valid: u.m_cpl_valid.val(),
        cpl: (
            u.m_cpl.val().opcode.to_u64(),
            u.m_cpl.val().status.to_u64(),
            u.m_cpl.val().qp.to_u64(),
            u.m_cpl.val().byte_count.to_u64(),
            u.m_cpl.val().wqe_index.to_u64(),
            u.m_cpl.val().src_node.to_u64(),
            u.m_cpl.val().src_qp.to_u64(),
            u.m_cpl.val().wr_id.to_u64(),
        ),
    }
}

/// The fake table engine's operation in flight: clocks until it executes, whether it is
/// the machine's and a scan.
struct Op {
    left: u32,
    own: bool,
    scan: bool,
    eval: bool,
    qp: u64,
}

/// What one run exercised.
struct Counts {
    completions: u64,
    stale: u64,
    preempted: u64,
    scans: u64,
    /// Evaluations granted while an earlier completion was queued or being retired.
    overlapped: u64,
    /// Clocks with two re-reads in flight.
    two_reads: u64,
}

/// Random stimulus for `clocks` clocks. Besides the clock-by-clock comparison with the
/// model, a scoreboard independent of timing checks that the completions are those of the
/// jobs, in job order (QP, WQE index, status), a job ending at its first failed advance.
fn run(queue_pairs: u64, seed: u64, clocks: u64, p_gap: f64) -> Counts {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = AckMachine::new(queue_pairs as usize);
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    let mut model = Model::new(queue_pairs);
    let qps = queue_pairs.min(4);
    let events: Vec<Event> = (0..clocks)
        .map(|_| Event {
            qp: rng.gen_range(0..qps),
            psn: rng.gen_range(0..1 << 24),
            syndrome: if rng.gen_bool(0.5) {
                0
            } else {
                rng.gen::<u8>() as u64
            },
            response: rng.gen(),
            resync: rng.gen(),
        })
        .collect();
    let mut acks = Source::new(events, Throttle::new(0.15 * (1.0 - p_gap)));
    let mut local: Option<(u64, u64, u64)> = None;
    let mut op: Option<Op> = None;
    let mut reads: VecDeque<u32> = VecDeque::new();
    let mut beat = 0;
    let free = Throttle::new(1.0 - p_gap);
    let (mut completions, mut stale, mut preempted, mut scans) = (0, 0, 0, 0);
    let (mut overlapped, mut two_reads) = (0, 0);
    // (QP, WQE index, status) and whether its QP was reset since the job started (then
    // the job may end before it: the machine issues no more of its re-reads).
    let mut expected: VecDeque<((u64, u64, u64), bool)> = VecDeque::new();
    for clock in 0..clocks {
        if local.is_none() && rng.gen_bool(0.05) {
            local = Some((
                rng.gen_range(0..qps),
                rng.gen_range(0..1 << 24),
                rng.gen::<u8>() as u64,
            ));
        }
        let ack = acks.offer(&mut rng).then(|| *acks.front().unwrap());
        let mut i = Inputs {
            local,
            ack,
            ..Default::default()
        };
        // The fake table engine: the machine's operation executes two clocks after its
        // grant; a scan may give way in the first; others' operations execute too.
        let mut exec_own = None;
        if let Some(o) = op.as_mut() {
            o.left -= 1;
            if o.left == 0 {
                i.exec = true;
                exec_own = o.own.then_some((o.scan, o.eval, o.qp));
                op = None;
            } else if o.scan && rng.gen_bool(0.2) {
                i.preempted = true;
                preempted += 1;
                op = None;
            }
        }
        if let Some((scan, eval, qp)) = exec_own {
            i.exec_ok = rng.gen_bool(0.8);
            if !scan && !eval && !i.exec_ok {
                // A failed advance ends its job: the rest of it never completes.
                expected.retain(|e| e.0 .0 != qp);
            }
            if scan || eval {
                scans += scan as u64;
                if rng.gen_bool(if scan { 0.2 } else { 0.6 }) {
                    let j = Job {
                        first: rng.gen_range(0..1 << 24),
                        succ: rng.gen_range(0..4),
                        run_status: rng.gen::<u8>() as u64,
                        fin: rng.gen(),
                        status: rng.gen::<u8>() as u64,
                        resync: rng.gen(),
                        base: rng.gen::<u32>() as u64,
                        size: rng.gen_range(0..25),
                        remote: rng.gen::<u32>() as u64,
                    };
                    if j.succ != 0 || j.fin {
                        i.job = Some(j);
                        for k in 0..j.succ {
                            expected
                                .push_back(((qp, (j.first + k) & 0xFF_FFFF, j.run_status), false));
                        }
                        if j.fin {
                            expected
                                .push_back(((qp, (j.first + j.succ) & 0xFF_FFFF, j.status), false));
                        }
                    }
                }
            }
        }
        // Outputs depend on the offered inputs: drive them, settle, then decide grants.
        drive(&mut uut, &i);
        settle(&mut uut);
        let exp = model.outputs(local.is_some(), ack.is_some());
        assert_eq!(
            outputs_of(&uut),
            exp,
            "outputs at clock {clock} ({:?}, {:?})",
            model.phase,
            model.back
        );
        let taken_local = local.is_some() && exp.local_ready;
        let taken_ack = ack.is_some() && exp.ack_ready;
        if taken_local {
            local = None;
        } else {
            i.local = None;
        }
        if taken_ack {
            acks.take();
        } else {
            i.ack = None;
        }
        if op.is_none() && free.go(&mut rng) {
            if exp.req_valid {
                i.grant = true;
                op = Some(Op {
                    left: 2,
                    own: true,
                    scan: false,
                    eval: !exp.req_advance,
                    qp: exp.req_qp,
                });
                if !exp.req_advance && !model.all_idle() {
                    overlapped += 1;
                }
            } else if exp.scan_valid && !taken_local && !taken_ack && rng.gen_bool(0.5) {
                i.grant = true;
                op = Some(Op {
                    left: 2,
                    own: true,
                    scan: true,
                    eval: false,
                    qp: exp.scan_qp,
                });
            } else if rng.gen_bool(0.1) {
                op = Some(Op {
                    left: 2,
                    own: false,
                    scan: false,
                    eval: false,
                    qp: 0,
                });
            }
        }
        if rng.gen_bool(0.03) {
            let q = rng.gen_range(0..qps);
            i.qp_reset = Some(q);
            for e in expected.iter_mut().filter(|e| e.0 .0 == q) {
                e.1 = true;
            }
        }
        i.cplrd_req_ready = exp.cplrd_req.0 && rng.gen_bool(1.0 - p_gap);
        if i.cplrd_req_ready {
            reads.push_back(rng.gen_range(1..5));
        }
        if exp.cplrd_ready && !reads.is_empty() && reads[0] == 0 && rng.gen_bool(1.0 - p_gap) {
            beat += 1;
            i.cplrd = Some((rng.gen(), beat == 2));
            if beat == 2 {
                beat = 0;
                reads.pop_front();
            }
        }
        for r in reads.iter_mut() {
            *r = r.saturating_sub(1);
        }
        i.cpl_ready = rng.gen_bool(1.0 - p_gap);
        if exp.cpl_valid && i.cpl_ready {
            completions += 1;
            let got = (exp.cpl.2, exp.cpl.4, exp.cpl.1);
            while expected.front().is_some_and(|e| e.1 && e.0 != got) {
                expected.pop_front();
            }
            assert_eq!(
                expected.pop_front().map(|e| e.0),
                Some(got),
                "completion at clock {clock}"
            );
        }
        if reads.len() >= 2 {
            two_reads += 1;
        }
        if exp.req_advance && i.grant && model.b.stale {
            stale += 1;
        }
        drive(&mut uut, &i);
        settle(&mut uut);
        model.step(&i);
        tick(&mut uut);
    }
    Counts {
        completions,
        stale,
        preempted,
        scans,
        overlapped,
        two_reads,
    }
}

fn drive(u: &mut AckMachine, i: &Inputs) {
    let (lq, lp, ls) = i.local.unwrap_or_default();
    u.s_local_valid.next = i.local.is_some();
    u.s_local_qp.next = lq.to_bits();
    u.s_local_psn.next = lp.to_bits();
    u.s_local_status.next = ls.to_bits();
    let e = i.ack.unwrap_or_default();
    u.s_ack_valid.next = i.ack.is_some();
    u.s_ack_qp.next = e.qp.to_bits();
    u.s_ack_psn.next = e.psn.to_bits();
    u.s_ack_syndrome.next = e.syndrome.to_bits();
    u.s_ack_response.next = e.response;
    u.s_ack_resync.next = e.resync;
    u.s_grant.next = i.grant;
    u.s_scan_preempted.next = i.preempted;
    u.s_exec.next = i.exec;
    u.s_exec_ok.next = i.exec_ok;
    let j = i.job.unwrap_or_default();
    u.s_job_valid.next = i.job.is_some();
    u.s_job_first.next = j.first.to_bits();
    u.s_job_succ.next = j.succ.to_bits();
    u.s_job_run_status.next = j.run_status.to_bits();
    u.s_job_final.next = j.fin;
    u.s_job_status.next = j.status.to_bits();
    u.s_job_resync.next = j.resync;
    u.s_job_base.next = j.base.to_bits();
    u.s_job_size.next = j.size.to_bits();
    u.s_job_remote.next = j.remote.to_bits();
    u.s_qp_reset_valid.next = i.qp_reset.is_some();
    u.s_qp_reset_qp.next = i.qp_reset.unwrap_or(0).to_bits();
    u.m_cplrd_req_ready.next = i.cplrd_req_ready;
    let (d, l) = i.cplrd.unwrap_or_default();
    u.s_cplrd_valid.next = i.cplrd.is_some();
    u.s_cplrd_data.next = d.to_bits();
    u.s_cplrd_last.next = l;
    u.m_cpl_ready.next = i.cpl_ready;
}

#[test]
fn synthesises() {
    let mut uut = AckMachine::new(4);
    uut.connect_all();
    yosys_validate("nic_rtl_requester_ack_machine", &generate_verilog(&uut))
        .expect("yosys accepts AckMachine");
}

/// Seeded random stimulus: events and local completions with gaps, a table engine that
/// grants with gaps and preempts scans, a DMA read server and completion consumer with
/// back-pressure, QP resets; every output compared every clock.
#[test]
fn matches_model_with_gaps_and_backpressure() {
    for (queue_pairs, seed, p_gap) in [(4, 1, 0.0), (4, 2, 0.5), (64, 3, 0.3), (1, 4, 0.2)] {
        let c = run(queue_pairs, seed, 20_000, p_gap);
        eprintln!(
            "seed {seed}: {} completions, {} stale advances, {} preempted and {} executed scans, {} overlapped evaluations, {} clocks with two re-reads",
            c.completions, c.stale, c.preempted, c.scans, c.overlapped, c.two_reads
        );
        assert!(
            c.completions > 300,
            "{} completions (seed {seed})",
            c.completions
        );
        assert!(c.stale > 0, "no stale advance (seed {seed})");
        assert!(
            c.preempted > 10,
            "{} preempted scans (seed {seed})",
            c.preempted
        );
        assert!(c.scans > 100, "{} scans (seed {seed})", c.scans);
        // One QP: every evaluation waits for its QP's completions.
        assert!(
            c.overlapped > 50 || queue_pairs == 1,
            "{} overlapped evaluations (seed {seed})",
            c.overlapped
        );
        assert!(
            c.two_reads > 100,
            "{} clocks with two re-reads (seed {seed})",
            c.two_reads
        );
    }
}

#[test]
#[should_panic(expected = "AckMachine: queue_pairs must be between 1 and 64, got 0")]
fn rejects_zero_queue_pairs() {
    AckMachine::new(0);
}

#[test]
#[should_panic(expected = "AckMachine: queue_pairs must be between 1 and 64, got 65")]
fn rejects_too_many_queue_pairs() {
    AckMachine::new(65);
}
