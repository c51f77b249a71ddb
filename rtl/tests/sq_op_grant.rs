//! `SqOpGrant` against `nic_model::sq_op_grant::OpGrant` (written from its doc comment) on
//! seeded random stimulus: four requesters (CSR access, acknowledgement machine, transmit
//! machine, timer scan) that offer with idle gaps and hold each request until granted, on
//! QPs drawn from a few (so overlapping operations of one QP occur) and some beyond
//! `queue_pairs`, a table not ready for a while after each reset, offered events, resets.

use nic_model::sq_op_grant::{Inputs, Op, OpGrant, Outputs, State};
use nic_model::Throttle;
use nic_rtl::requester::send_queue_engine::{SqEngineState, SqOp};
use nic_rtl::requester::SqOpGrant;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn q(v: u8) -> Bits<6> {
    (v as u64).to_bits()
}

fn drive(u: &mut SqOpGrant, i: &Inputs) {
    u.reset.next = i.reset;
    u.s_table_ready.next = i.table_ready;
    u.s_csr_valid.next = i.csr_valid;
    u.s_csr_write.next = i.csr_write;
    u.s_csr_qp.next = q(i.csr_qp);
    u.s_ak_valid.next = i.ak_valid;
    u.s_ak_qp.next = q(i.ak_qp);
    u.s_ak_advance.next = i.ak_advance;
    u.s_tx_valid.next = i.tx_valid;
    u.s_tx_qp.next = q(i.tx_qp);
    u.s_tx_commit.next = i.tx_commit;
    u.s_scan_valid.next = i.scan_valid;
    u.s_scan_qp.next = q(i.scan_qp);
    u.s_ak_offered.next = i.ak_offered;
}

fn seen(u: &SqOpGrant) -> Outputs {
    Outputs {
        csr_ready: u.s_csr_ready.val(),
        grant_csr: u.m_grant_csr.val(),
        grant_ak: u.m_grant_ak.val(),
        grant_tx: u.m_grant_tx.val(),
        read_qp: u.m_read_qp.val().to_u64() as u8,
        state: match u.m_state.val() {
            SqEngineState::Idle => State::Idle,
            SqEngineState::Read => State::Read,
            SqEngineState::Derive => State::Derive,
            SqEngineState::Exec => State::Exec,
        },
        op: match u.m_op.val() {
            SqOp::CsrRead => Op::CsrRead,
            SqOp::CsrWrite => Op::CsrWrite,
            SqOp::Claim => Op::Claim,
            SqOp::Commit => Op::Commit,
            SqOp::Eval => Op::Eval,
            SqOp::Advance => Op::Advance,
            SqOp::Timer => Op::Timer,
        },
        op_qp: u.m_op_qp.val().to_u64() as u8,
        op_qp_valid: u.m_op_qp_valid.val(),
        exec: u.m_exec.val(),
        scan_preempted: u.m_scan_preempted.val(),
    }
}

/// A requester: offers with probability `p` when idle, holds the request until granted.
struct Requester {
    offer: Throttle,
    req: Option<(u8, bool)>,
}

impl Requester {
    fn new(p: f64) -> Self {
        Requester {
            offer: Throttle::new(p),
            req: None,
        }
    }
    fn drive(&mut self, rng: &mut ChaCha8Rng, qps: u8) -> (bool, u8, bool) {
        if self.req.is_none() && self.offer.go(rng) {
            let qp = if rng.gen_bool(0.9) {
                rng.gen_range(0..qps.min(4))
            } else {
                rng.gen_range(0..64)
            };
            self.req = Some((qp, rng.gen()));
        }
        match self.req {
            Some((qp, kind)) => (true, qp, kind),
            None => (false, rng.gen_range(0..64), rng.gen()),
        }
    }
}

/// Runs `clocks` clocks; returns the grants of each kind (CSR, acknowledgement, transmit)
/// and the scans preempted.
fn run(seed: u64, qps: usize, p: [f64; 4], clocks: u64) -> [u64; 4] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut u = SqOpGrant::new(qps);
    u.connect_all();
    let mut model = OpGrant::new(qps);
    let mut reqs = p.map(Requester::new);
    let mut ready_at = 0;
    let mut counts = [0; 4];
    for clock in 0..clocks {
        let reset = clock == 0 || rng.gen_bool(0.002);
        if reset {
            ready_at = clock + rng.gen_range(1..70);
            reqs.iter_mut().for_each(|r| r.req = None);
        }
        let c = reqs[0].drive(&mut rng, qps as u8);
        let a = reqs[1].drive(&mut rng, qps as u8);
        let t = reqs[2].drive(&mut rng, qps as u8);
        // The acknowledgement machine scans only while it has no request of its own.
        let s = if a.0 {
            (false, rng.gen_range(0..64), false)
        } else {
            reqs[3].drive(&mut rng, qps as u8)
        };
        let i = Inputs {
            reset,
            table_ready: clock >= ready_at,
            csr_valid: c.0,
            csr_write: c.2,
            csr_qp: c.1,
            ak_valid: a.0,
            ak_qp: a.1,
            ak_advance: a.2,
            tx_valid: t.0,
            tx_qp: t.1,
            tx_commit: t.2,
            scan_valid: s.0,
            scan_qp: s.1,
            ak_offered: rng.gen_bool(0.3),
        };
        drive(&mut u, &i);
        settle(&mut u);
        let want = model.step(&i);
        assert_eq!(seen(&u), want, "clock {clock} (seed {seed:#x}): {i:?}");
        if want.grant_csr {
            reqs[0].req = None;
            counts[0] += 1;
        }
        if want.grant_ak && i.ak_valid {
            reqs[1].req = None;
            counts[1] += 1;
        } else if want.grant_ak {
            reqs[3].req = None;
        }
        if want.grant_tx {
            reqs[2].req = None;
            counts[2] += 1;
        }
        if want.scan_preempted {
            counts[3] += 1;
        }
        tick(&mut u);
    }
    counts
}

#[test]
fn synthesises() {
    let mut uut = SqOpGrant::new(4);
    uut.connect_all();
    yosys_validate("nic_rtl_requester_sq_op_grant", &generate_verilog(&uut))
        .expect("yosys accepts SqOpGrant");
}

/// Seeded random requests on 1, 4 and 64 queue pairs, from every requester always asking
/// to sparse offers.
#[test]
fn matches_model_with_gaps_and_backpressure() {
    let mut total = [0; 4];
    for (n, (qps, p)) in [
        (4, [1.0, 1.0, 1.0, 1.0]),
        (4, [0.3, 0.2, 0.5, 0.8]),
        (1, [0.1, 0.4, 0.9, 1.0]),
        (64, [0.5, 0.1, 0.3, 0.6]),
        (4, [0.05, 0.3, 0.05, 1.0]),
    ]
    .into_iter()
    .enumerate()
    {
        let c = run(0x9a47_0000 + n as u64, qps, p, 8000);
        for k in 0..4 {
            total[k] += c[k];
        }
    }
    eprintln!("grants (CSR, acknowledgement, transmit) and scans preempted: {total:?}");
    assert!(
        total[..3].iter().all(|&c| c > 1000) && total[3] > 50,
        "too few of some kind: {total:?}"
    );
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64, got 65")]
fn rejects_65_queue_pairs() {
    SqOpGrant::new(65);
}
