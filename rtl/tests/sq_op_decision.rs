//! `SqOpDecision` against `nic_model::sq_op_decision::OpDecision` (written from its doc
//! comment) on seeded random stimulus: entries read now and then (registered for the
//! operations that follow), operations executed in random clocks with idle gaps between
//! them, every operation kind, commits and advances that match the entry or not, timer
//! starts near the deadline (and across the counter's wrap), changing timeouts and retry
//! limits, resets.

use nic_model::sq_csr_access::SqEntry;
use nic_model::sq_op_decision::{EvDecision, Inputs, Op, OpDecision, Outputs};
use nic_rtl::requester::send_queue_engine::SqOp;
use nic_rtl::requester::{QpEntry, SqOpDecision};
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn psn(rng: &mut ChaCha8Rng) -> u32 {
    if rng.gen_bool(0.2) {
        0xFF_FFFF - rng.gen_range(0..3)
    } else {
        rng.gen_range(0..1 << 24)
    }
}

fn random_entry(rng: &mut ChaCha8Rng, now: u32, timeout: u32) -> SqEntry {
    let una = psn(rng);
    SqEntry {
        base: rng.gen(),
        remote: rng.gen(),
        sq_pi: psn(rng),
        size_log2: if rng.gen_bool(0.9) {
            rng.gen_range(0..12)
        } else {
            rng.gen_range(0..32)
        },
        sq_next: if rng.gen() {
            (una + rng.gen_range(0..9)) & 0xFF_FFFF
        } else {
            psn(rng)
        },
        enable: rng.gen_bool(0.9),
        resync: rng.gen(),
        waiting: rng.gen_bool(0.2),
        draining: rng.gen_bool(0.2),
        retry: rng.gen_range(0..16),
        sq_una: una,
        una_needs_response: rng.gen(),
        // Near the deadline of the clocks to come, or anywhere.
        timer_start: if rng.gen_bool(0.8) {
            now.wrapping_sub(timeout)
                .wrapping_add(rng.gen_range(0..8))
                .wrapping_sub(rng.gen_range(0..4))
        } else {
            rng.gen()
        },
    }
}

fn to_sq_op(op: Op) -> SqOp {
    match op {
        Op::CsrRead => SqOp::CsrRead,
        Op::CsrWrite => SqOp::CsrWrite,
        Op::Claim => SqOp::Claim,
        Op::Commit => SqOp::Commit,
        Op::Eval => SqOp::Eval,
        Op::Advance => SqOp::Advance,
        Op::Timer => SqOp::Timer,
    }
}

fn drive(u: &mut SqOpDecision, i: &Inputs) {
    u.reset.next = i.reset;
    u.cfg_retry_timeout.next = (i.retry_timeout as u64).to_bits();
    u.cfg_retry_limit.next = (i.retry_limit as u64).to_bits();
    u.s_read.next = i.read;
    u.s_rd_entry.next = QpEntry::from(&i.rd_entry);
    u.s_rd_outstanding.next = i.rd_outstanding;
    u.s_rd_has_work.next = i.rd_has_work;
    u.s_rd_window_full.next = i.rd_window_full;
    u.s_exec.next = i.exec;
    u.s_op.next = to_sq_op(i.op);
    u.s_qp_valid.next = i.qp_valid;
    u.s_csr_entry.next = QpEntry::from(&i.csr_entry);
    u.s_csr_qp_reset.next = i.csr_qp_reset;
    u.s_csr_moved.next = i.csr_moved;
    u.s_commit_psn.next = (i.commit_psn as u64).to_bits();
    u.s_commit_stale.next = i.commit_stale;
    u.s_commit_need_empty.next = i.commit_need_empty;
    u.s_commit_local_only.next = i.commit_local_only;
    u.s_commit_needs_response.next = i.commit_needs_response;
    u.s_adv_idx.next = (i.adv_idx as u64).to_bits();
    u.s_adv_stale.next = i.adv_stale;
    u.s_adv_set_resync.next = i.adv_set_resync;
    u.s_rd_on_una.next = i.rd_on_una;
    let ev = &i.ev;
    u.s_ev_job_valid.next = ev.job_valid;
    u.s_ev_job_succ.next = (ev.job_succ as u64).to_bits();
    u.s_ev_job_run_status.next = (ev.job_run_status as u64).to_bits();
    u.s_ev_job_final.next = ev.job_final;
    u.s_ev_job_status.next = (ev.job_status as u64).to_bits();
    u.s_ev_job_resync.next = ev.job_resync;
    u.s_ev_retx.next = ev.retx;
    u.s_ev_restart.next = ev.restart;
    u.s_ev_set_next.next = ev.set_next;
    u.s_ev_next.next = (ev.next as u64).to_bits();
    u.s_ev_set_retry.next = ev.set_retry;
    u.s_ev_retry.next = (ev.retry as u64).to_bits();
    u.s_ev_set_drain.next = ev.set_drain;
}

fn seen(u: &SqOpDecision) -> Outputs {
    Outputs {
        now: u.m_now.val().to_u32(),
        entry: SqEntry::from(&u.m_entry.val()),
        outstanding: u.m_outstanding.val(),
        kept: SqEntry::from(&u.m_kept.val()),
        wqe_addr: u.m_wqe_addr.val().to_u32(),
        wr: SqEntry::from(&u.m_wr.val()),
        ok: u.m_ok.val(),
        retx: u.m_retx.val(),
        job_valid: u.m_job_valid.val(),
        job_succ: u.m_job_succ.val().to_u64() as u8,
        job_run_status: u.m_job_run_status.val().to_u64() as u8,
        job_final: u.m_job_final.val(),
        job_status: u.m_job_status.val().to_u64() as u8,
        job_resync: u.m_job_resync.val(),
        has_job: u.m_has_job.val(),
        csr_qp_reset: u.m_csr_qp_reset.val(),
        csr_moved: u.m_csr_moved.val(),
    }
}

const OPS: [Op; 7] = [
    Op::CsrRead,
    Op::CsrWrite,
    Op::Claim,
    Op::Commit,
    Op::Eval,
    Op::Advance,
    Op::Timer,
];

/// Runs `clocks` clocks with probability `p_exec` of an operation per clock; returns the
/// clocks with `m_ok`, with a go-back-N event and with a job.
fn run(seed: u64, p_exec: f64, clocks: u64) -> (u64, u64, u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut u = SqOpDecision::new();
    u.connect_all();
    let mut model = OpDecision::new();
    // The environment's view: clocks since reset, the timeout, the entry last read.
    let mut now: u32 = 0;
    let mut timeout: u32 = 20;
    let mut limit: u8 = 3;
    let mut entry = SqEntry::default();
    let (mut oks, mut retx, mut jobs) = (0, 0, 0);
    for clock in 0..clocks {
        let reset = clock == 0 || rng.gen_bool(0.001);
        if rng.gen_bool(0.01) {
            timeout = match rng.gen_range(0..4) {
                0 => 0,
                1 => rng.gen(),
                _ => rng.gen_range(1..64),
            };
        }
        if rng.gen_bool(0.01) {
            limit = rng.gen_range(0..16);
        }
        // (No read in the first clock: the timer's bounds are defined from the reset on.)
        let read = clock > 0 && rng.gen_bool(0.3);
        let rd_entry = random_entry(&mut rng, now, timeout);
        let ev = EvDecision {
            job_valid: rng.gen(),
            job_succ: rng.gen_range(0..16),
            job_run_status: rng.gen(),
            job_final: rng.gen(),
            job_status: rng.gen(),
            job_resync: rng.gen(),
            retx: rng.gen(),
            restart: rng.gen(),
            set_next: rng.gen(),
            next: psn(&mut rng),
            set_retry: rng.gen(),
            retry: rng.gen_range(0..16),
            set_drain: rng.gen(),
        };
        let i = Inputs {
            reset,
            retry_timeout: timeout,
            retry_limit: limit,
            read,
            rd_entry,
            rd_outstanding: rng.gen_bool(0.7),
            rd_has_work: rng.gen_bool(0.8),
            rd_window_full: rng.gen_bool(0.15),
            exec: !reset && clock > 1 && rng.gen_bool(p_exec),
            op: OPS[rng.gen_range(0..OPS.len())],
            qp_valid: rng.gen_bool(0.9),
            csr_entry: random_entry(&mut rng, now, timeout),
            csr_qp_reset: rng.gen(),
            csr_moved: rng.gen(),
            commit_psn: if rng.gen_bool(0.7) {
                entry.sq_next
            } else {
                psn(&mut rng)
            },
            commit_stale: rng.gen_bool(0.1),
            commit_need_empty: rng.gen_bool(0.3),
            commit_local_only: rng.gen_bool(0.2),
            commit_needs_response: rng.gen_bool(0.3),
            adv_idx: if rng.gen_bool(0.7) {
                entry.sq_una
            } else {
                psn(&mut rng)
            },
            adv_stale: rng.gen_bool(0.1),
            adv_set_resync: rng.gen(),
            rd_on_una: rng.gen_bool(0.2),
            ev,
        };
        drive(&mut u, &i);
        settle(&mut u);
        let want = model.step(&i);
        // The first clock's registers are not yet defined by a reset.
        if clock > 0 {
            assert_eq!(seen(&u), want, "clock {clock} (seed {seed:#x}): {i:?}");
        }
        oks += want.ok as u64;
        retx += (want.retx && i.op == Op::Timer) as u64;
        jobs += (want.has_job && i.op == Op::Timer) as u64;
        if read {
            entry = rd_entry;
        }
        now = if reset { 0 } else { now.wrapping_add(1) };
        tick(&mut u);
    }
    (oks, retx, jobs)
}

#[test]
fn synthesises() {
    let mut uut = SqOpDecision::new();
    uut.connect_all();
    yosys_validate("nic_rtl_requester_sq_op_decision", &generate_verilog(&uut))
        .expect("yosys accepts SqOpDecision");
}

/// Seeded random operations, from one every clock to sparse ones.
#[test]
fn matches_model_with_gaps() {
    let (mut oks, mut retx, mut jobs) = (0, 0, 0);
    for (n, p) in [1.0, 0.5, 0.1].into_iter().enumerate() {
        let (o, r, j) = run(0xdec1_0000 + n as u64, p, 20_000);
        oks += o;
        retx += r;
        jobs += j;
    }
    eprintln!("{oks} operations ok, {retx} timer go-backs, {jobs} of them final");
    assert!(oks > 3000 && retx > 200 && jobs > 50);
}

/// The block has no parameters; its PSN inputs are 24 bits wide, which the ports enforce:
/// a wider one is refused by RustHDL with a message.
#[test]
#[should_panic(expected = "does not fit")]
fn rejects_a_psn_wider_than_its_port() {
    let mut uut = SqOpDecision::new();
    uut.connect_all();
    uut.s_commit_psn.next = (1u64 << 24).to_bits();
}
