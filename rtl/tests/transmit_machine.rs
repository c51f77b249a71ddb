//! `TransmitMachine`'s block tests: it synthesises; on seeded random stimulus (a stand-in
//! table engine and scheduler, a DMA server with latency, idle gaps and back-pressure,
//! sinks with back-pressure, QP moves) its ports match a reference model written from the
//! docs; the commit point holds (a WQE picked before its QP moved is committed stale);
//! every WQE claimed is committed exactly once, in claim order, for the PSN its claim read
//! (a WQE lost, duplicated or reordered between the claim and the send stage fails).
//!
//! The reference model is transaction-level: every commit the stand-in table engine
//! accepts is, in commit order, one local completion (a bad or local-only WQE, with
//! `nic_model::requester::wqe_status`) or an expect event (READ, atomic) and the message
//! `nic_model::requester::message_for` builds from the WQE in host memory, with its
//! payload. Handshakes are judged as the send engine's ports are: a shown request or event
//! is held until taken; a message is taken only after the previous one's last payload word.

use nic_abi::DELAY_OPCODE;
use nic_abi::{Wqe, WqeOpcode};
use nic_model::random_wqe::{random_wqe, WqeLengths};
use nic_model::requester::{completes_locally, message_for, needs_response, wqe_status, Msg};
use nic_rtl::requester::TransmitMachine;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use std::collections::{HashMap, VecDeque};

const QPS: usize = 4;
const RING_LOG2: u32 = 3;
const NODE: u16 = 0x2A;
/// Messages up to 128 bytes, one in ten of those 129..400 (longer than the payload buffer).
const LENGTHS: WqeLengths = WqeLengths {
    max: 128,
    long: 400,
};

fn filler(addr: u32) -> u64 {
    (addr as u64 ^ 0x5A5A_0000_0000_A5A5).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// One event on the machine's output ports, as the model expects them in order.
#[derive(Clone, Debug, PartialEq)]
enum Event {
    Local {
        qp: u8,
        psn: u32,
        status: u8,
    },
    Expect {
        qp: u8,
        psn: u32,
        addr: u32,
        length: u32,
        atomic: bool,
    },
    Message(Msg),
}

#[derive(Clone, Copy)]
struct Qp {
    base: u32,
    next: u32,
    pi: u32,
    remote: u32,
    /// The clock of its last move (a reset or moved ring, as a CSR write).
    moved_at: Option<u64>,
}

struct Op {
    commit: bool,
    qp: usize,
    exec_at: u64,
}

struct Burst {
    addr: u32,
    left: u32,
    ready_at: u64,
}

/// `smooth`: no gaps, no back-pressure, DMA latency `latency`, no moves, only 64-byte RDMA
/// WRITEs, and a message taken at most every `cell` clocks (the `CellSegmenter`'s pace; 0:
/// any clock).
fn run(seed: u64, cycles: u64, smooth: bool, latency: u64, cell: u64) -> (usize, usize, usize) {
    // The clock from which the message sink takes the next message (smooth only).
    let mut next_msg_at = 0u64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = TransmitMachine::new();
    uut.connect_all();
    let mut mem: HashMap<u32, u64> = HashMap::new();
    let mut qps: Vec<Qp> = (0..QPS)
        .map(|q| Qp {
            base: 0x0001_0000 + 0x1000 * q as u32,
            next: rng.gen::<u32>() & 0xFF_FFFF,
            pi: 0,
            remote: 0x0003_0000 * (q as u32 + 1) + 0x11,
            moved_at: None,
        })
        .collect();
    for q in qps.iter_mut() {
        q.pi = q.next;
    }
    let slot = |q: &Qp, psn: u32| q.base + ((psn & ((1 << RING_LOG2) - 1)) << 6);
    // The stand-in table engine: one operation at a time, executed two clocks after its
    // grant (and some more now and then).
    let mut op: Option<Op> = None;
    // The clock each QP's pick was taken (a move after it makes the WQE stale).
    let mut picked_at: [u64; QPS] = [0; QPS];
    let mut bursts: VecDeque<Burst> = VecDeque::new();
    let mut expected: VecDeque<Event> = VecDeque::new();
    let mut payload: VecDeque<u64> = VecDeque::new();
    // (qp, psn) committed and not yet fully transmitted.
    let mut in_tx: Vec<(u8, u32)> = vec![];
    let mut held_msg: Option<Msg> = None;
    let mut held_req: Option<(u32, u32)> = None;
    let mut held_expect: Option<Event> = None;
    let mut held_local: Option<Event> = None;
    let (mut messages, mut locals, mut stale_commits) = (0, 0, 0);
    let mut cur_msg: Option<Msg> = None;
    // The WQEs claimed (qp, psn) and not yet committed, in claim order.
    let mut claimed: VecDeque<(usize, u32)> = VecDeque::new();
    uut.reset.next = true;
    settle(&mut uut);
    tick(&mut uut);
    uut.reset.next = false;
    for cycle in 0..cycles {
        let phase = (cycle / 1500) % 4;
        let mut p_ready = [1.0, 0.5, 0.8, 0.3][phase as usize];
        let mut p_gap = [0.0, 0.3, 0.1, 0.6][phase as usize];
        if smooth {
            (p_ready, p_gap) = (1.0, 0.0);
        }
        // The driver posts WQEs (the ring never holds more than its size uncommitted).
        if rng.gen_bool(if smooth { 0.5 } else { 0.05 }) {
            let q = rng.gen_range(0..QPS);
            let room = (1u32 << RING_LOG2) - (qps[q].pi.wrapping_sub(qps[q].next) & 0xFF_FFFF);
            for _ in 0..rng.gen_range(0..=room) {
                let mut w = random_wqe(&mut rng, LENGTHS);
                if smooth {
                    w = Wqe {
                        opcode: WqeOpcode::RdmaWrite as u8,
                        length: 64,
                        local_addr: 0x0010_0000,
                        remote_vaddr: 0x8000,
                        ..Wqe::default()
                    };
                }
                let a = slot(&qps[q], qps[q].pi);
                for (i, word) in w.to_words().iter().enumerate() {
                    mem.insert(a + 8 * i as u32, *word);
                }
                qps[q].pi = (qps[q].pi + 1) & 0xFF_FFFF;
            }
        }
        let read = |mem: &HashMap<u32, u64>, a: u32| *mem.get(&a).unwrap_or(&filler(a));
        // Inputs.
        let eligible: Vec<usize> = (0..QPS).filter(|&q| qps[q].next != qps[q].pi).collect();
        let pick = if !eligible.is_empty() && (smooth || rng.gen_bool(0.8)) {
            Some(eligible[rng.gen_range(0..eligible.len())])
        } else if !smooth && rng.gen_bool(0.05) {
            Some(rng.gen_range(0..QPS)) // a stale pick: its claim fails
        } else {
            None
        };
        uut.s_pick_valid.next = pick.is_some();
        uut.s_pick_qp.next = (pick.unwrap_or(0) as u64).to_bits();
        let grant = op.is_none() && (smooth || rng.gen_bool(0.7));
        uut.s_op_grant.next = grant;
        let exec = op.as_ref().is_some_and(|o| o.exec_at == cycle);
        let (mut claim_done, mut commit_done, mut ok) = (false, false, false);
        let mut resync = false;
        let mut advance = None;
        // Transmitted from the clock after its commit.
        let mut new_tx = None;
        if exec {
            let o = op.as_ref().unwrap();
            let q = &qps[o.qp];
            if o.commit {
                commit_done = true;
                let psn = uut.m_commit_psn.val().to_u32();
                let stale = uut.m_commit_stale.val();
                assert_eq!(
                    claimed.pop_front(),
                    Some((o.qp, psn)),
                    "commit at {cycle}: not the oldest WQE claimed"
                );
                assert_eq!(psn, q.next, "commit at {cycle}: a PSN claimed twice");
                let must_be_stale = q.moved_at.is_some_and(|t| t > picked_at[o.qp]);
                assert_eq!(stale, must_be_stale, "stale flag of the commit at {cycle}");
                ok = psn == q.next && !stale && q.next != q.pi;
                stale_commits += stale as usize;
                if ok {
                    advance = Some(o.qp);
                    let w = Wqe::from_words(
                        &(0..8)
                            .map(|i| read(&mem, slot(q, psn) + 8 * i))
                            .collect::<Vec<_>>()
                            .try_into()
                            .unwrap(),
                    );
                    // The WQE's class, as the commit needs it.
                    let local = completes_locally(&w);
                    // (READ or atomic by its opcode; the engine looks at it for a WQE
                    // that is not local only.)
                    let rsp = needs_response(&w);
                    assert_eq!(
                        uut.m_commit_local_only.val(),
                        local,
                        "local only at {cycle}"
                    );
                    assert_eq!(
                        uut.m_commit_needs_response.val(),
                        rsp,
                        "response at {cycle}"
                    );
                    assert_eq!(
                        uut.m_commit_need_empty.val(),
                        local || rsp,
                        "need empty at {cycle}"
                    );
                    let delay = w.opcode == DELAY_OPCODE && !w.inline && wqe_status(&w) == 0;
                    assert_eq!(uut.m_commit_delay.val(), delay, "delay at {cycle}");
                    if delay {
                        assert_eq!(uut.m_delay_cycles.val().to_u64(), w.remote_vaddr);
                    }
                    resync = rng.gen_bool(0.1);
                    if local {
                        expected.push_back(Event::Local {
                            qp: o.qp as u8,
                            psn,
                            status: wqe_status(&w),
                        });
                    } else {
                        if rsp && !local {
                            expected.push_back(Event::Expect {
                                qp: o.qp as u8,
                                psn,
                                addr: w.local_addr,
                                length: w.length,
                                atomic: WqeOpcode::from_code(w.opcode).unwrap().is_atomic(),
                            });
                        }
                        let mut m = message_for(o.qp, q.remote, NODE, psn, &w, &|a| read(&mem, a));
                        m.resync = resync;
                        expected.push_back(Event::Message(m));
                        new_tx = Some((o.qp as u8, psn));
                    }
                }
            } else {
                claim_done = true;
                ok = q.next != q.pi;
                if ok {
                    claimed.push_back((o.qp, q.next));
                }
                uut.s_claim_psn.next = (q.next as u64).to_bits();
                uut.s_claim_addr.next = (slot(q, q.next) as u64).to_bits();
                uut.s_claim_remote.next = (q.remote as u64).to_bits();
            }
        }
        uut.s_claim_done.next = claim_done;
        uut.s_commit_done.next = commit_done;
        uut.s_op_ok.next = ok;
        uut.s_commit_resync.next = resync;
        let moved = !smooth && rng.gen_bool(0.002);
        let moved_qp = rng.gen_range(0..QPS);
        uut.s_moved_valid.next = moved;
        uut.s_moved_qp.next = (moved_qp as u64).to_bits();
        uut.m_local_ready.next = rng.gen_bool(p_ready);
        // What is being transmitted, asked about one PSN.
        let ask = if !in_tx.is_empty() && rng.gen_bool(0.7) {
            in_tx[rng.gen_range(0..in_tx.len())]
        } else {
            (rng.gen_range(0..QPS) as u8, rng.gen::<u32>() & 0xFF_FFFF)
        };
        uut.s_una_qp.next = (ask.0 as u64).to_bits();
        uut.s_una_psn.next = (ask.1 as u64).to_bits();
        uut.cfg_node_id.next = (NODE as u64).to_bits();
        // The DMA server: up to four bursts, in order, after a latency.
        let beat = match bursts.front() {
            Some(b) if b.ready_at <= cycle && !rng.gen_bool(p_gap) => {
                Some((read(&mem, b.addr), b.left == 1))
            }
            _ => None,
        };
        uut.s_txrd_valid.next = beat.is_some();
        uut.s_txrd_data.next = beat.map_or(0, |b| b.0).to_bits();
        uut.s_txrd_last.next = beat.is_some_and(|b| b.1);
        let req_ready = bursts.len() < 4 && rng.gen_bool(p_ready);
        uut.m_txrd_req_ready.next = req_ready;
        let msg_ready = rng.gen_bool(p_ready);
        uut.m_msg_ready.next = msg_ready && (!smooth || cycle >= next_msg_at);
        uut.m_payload_ready.next = rng.gen_bool(p_ready);
        uut.m_expect_ready.next = rng.gen_bool(p_ready);
        settle(&mut uut);
        // ---- Outputs ----
        let on_una = in_tx.contains(&ask);
        assert_eq!(uut.m_on_una.val(), on_una, "on_una {ask:x?} at {cycle}");
        in_tx.extend(new_tx);
        if uut.m_op_valid.val() && grant {
            let q = uut.m_op_qp.val().to_u64() as usize;
            op = Some(Op {
                commit: uut.m_op_commit.val(),
                qp: q,
                exec_at: cycle + 2 + (!smooth as u64) * rng.gen_range(0..2) * rng.gen_range(0..3),
            });
        }
        if exec {
            op = None;
        }
        if uut.m_pick_taken.val() {
            assert!(pick.is_some(), "pick taken without one at {cycle}");
            picked_at[pick.unwrap()] = cycle;
        }
        if moved {
            qps[moved_qp].moved_at = Some(cycle);
        }
        if let Some(q) = advance {
            qps[q].next = (qps[q].next + 1) & 0xFF_FFFF;
        }
        // Tx DMA requests.
        if uut.m_txrd_req_valid.val() {
            let r = (
                uut.m_txrd_req_addr.val().to_u32(),
                uut.m_txrd_req_words.val().to_u32(),
            );
            if let Some(h) = held_req {
                assert_eq!(h, r, "tx read request changed while waiting at {cycle}");
            }
            held_req = Some(r);
            if req_ready {
                assert!(r.1 >= 1 && r.0 % 8 == 0);
                bursts.push_back(Burst {
                    addr: r.0,
                    left: r.1,
                    ready_at: cycle + if smooth { latency } else { rng.gen_range(1..8) },
                });
                held_req = None;
            }
        } else {
            assert!(held_req.is_none(), "tx read request withdrawn at {cycle}");
        }
        if beat.is_some() && uut.s_txrd_ready.val() {
            let b = bursts.front_mut().unwrap();
            b.addr += 8;
            b.left -= 1;
            if b.left == 0 {
                bursts.pop_front();
            }
        }
        // Local completions.
        if uut.m_local_valid.val() {
            let e = Event::Local {
                qp: uut.m_local_qp.val().to_u64() as u8,
                psn: uut.m_local_psn.val().to_u32(),
                status: uut.m_local_status.val().to_u64() as u8,
            };
            if let Some(h) = &held_local {
                assert_eq!(h, &e, "local completion changed at {cycle}");
            }
            held_local = Some(e.clone());
            if uut.m_local_ready.val() {
                assert_eq!(expected.pop_front(), Some(e), "local completion at {cycle}");
                held_local = None;
                locals += 1;
            }
        } else {
            assert!(
                held_local.is_none(),
                "local completion withdrawn at {cycle}"
            );
        }
        // Expect events.
        if uut.m_expect_valid.val() {
            let e = Event::Expect {
                qp: uut.m_expect_qp.val().to_u64() as u8,
                psn: uut.m_expect_psn.val().to_u32(),
                addr: uut.m_expect_addr.val().to_u32(),
                length: uut.m_expect_length.val().to_u32(),
                atomic: uut.m_expect_atomic.val(),
            };
            if let Some(h) = &held_expect {
                assert_eq!(h, &e, "expect event changed at {cycle}");
            }
            held_expect = Some(e.clone());
            if uut.m_expect_ready.val() {
                assert_eq!(expected.pop_front(), Some(e), "expect event at {cycle}");
                held_expect = None;
            }
        } else {
            assert!(held_expect.is_none(), "expect event withdrawn at {cycle}");
        }
        // Payload words of the message taken last.
        if uut.m_payload_valid.val() && uut.m_payload_ready.val() {
            let w = payload
                .pop_front()
                .expect("a payload word without its message");
            assert_eq!(
                uut.m_payload_data.val().to_u64(),
                w,
                "payload word at {cycle}"
            );
            assert_eq!(
                uut.m_payload_last.val(),
                payload.is_empty(),
                "last at {cycle}"
            );
            if payload.is_empty() {
                let m = cur_msg.take().unwrap();
                in_tx.retain(|&x| x != (m.src_qp as u8, m.psn));
            }
        }
        // Messages.
        if uut.m_msg_valid.val() {
            let m = Msg::of_descriptor(&uut.m_msg.val());
            if let Some(h) = &held_msg {
                assert_eq!(h, &m, "message changed at {cycle}");
            }
            held_msg = Some(m.clone());
            if uut.m_msg_ready.val() {
                held_msg = None;
                next_msg_at = cycle + cell;
                assert!(
                    payload.is_empty(),
                    "message before the last payload word at {cycle}"
                );
                let Some(Event::Message(want)) = expected.pop_front() else {
                    panic!("unexpected message {m:x?} at {cycle}");
                };
                assert_eq!(
                    Msg {
                        payload: vec![],
                        ..want.clone()
                    },
                    m,
                    "message at {cycle}"
                );
                payload = want.payload.iter().copied().collect();
                if payload.is_empty() {
                    in_tx.retain(|&x| x != (m.src_qp as u8, m.psn));
                } else {
                    cur_msg = Some(want);
                }
                messages += 1;
            }
        } else {
            assert!(held_msg.is_none(), "message withdrawn at {cycle}");
        }
        tick(&mut uut);
    }
    // Claimed and not committed: at most the two between fetch and send stage and the
    // send stage's.
    assert!(
        claimed.len() <= 3,
        "{} WQEs claimed, never committed",
        claimed.len()
    );
    (messages, locals, stale_commits)
}

#[test]
fn matches_model_with_gaps_and_backpressure() {
    for seed in 1..=3 {
        let (messages, locals, stale) = run(seed, 12_000, false, 3, 0);
        eprintln!("seed {seed}: {messages} messages, {locals} local, {stale} stale commits");
        assert!(
            messages > 300 && locals > 10,
            "seed {seed}: too little traffic"
        );
    }
}

#[test]
fn synthesises() {
    let mut uut = TransmitMachine::new();
    uut.connect_all();
    yosys_validate(
        "nic_rtl_requester_transmit_machine",
        &generate_verilog(&uut),
    )
    .expect("yosys accepts TransmitMachine");
}

/// On four QPs, one-cell messages follow each other at the tx read port's pace (13 words
/// per message: WQE words 0-4 and 8 payload words), not at `L + 16` clocks: the next WQE
/// is claimed and fetched while the current message streams.
#[test]
fn the_next_wqe_is_fetched_while_a_message_streams() {
    let (messages, _, _) = run(7, 4_000, true, 3, 0);
    let clocks = 4_000.0 / messages as f64;
    eprintln!("{messages} messages, {clocks:.2} clocks each");
    assert!(clocks < 14.0, "{clocks:.2} clocks per one-cell message");
}

/// On four QPs with the message sink taking one message every 16 clocks (the
/// `CellSegmenter`'s pace for a one-cell message): at DMA latency 12 one-cell messages
/// follow each other at about that pace; from there on the WQE fetch's round trip is the
/// loop (one WQE fetch in flight, requested the clock after the send stage copies the
/// previous one: about `L + 5` clocks per message), not the send stage, whose send slot
/// keeps a message whose payload was read early while the stage commits the next WQE and
/// requests its payload.
#[test]
fn one_cell_messages_at_latency_12_and_the_fetch_loop_beyond() {
    for latency in [12u64, 16, 20, 24] {
        let (messages, _, _) = run(7, 4_000, true, latency, 16);
        let clocks = 4_000.0 / messages as f64;
        eprintln!("L = {latency}: {messages} messages, {clocks:.2} clocks each");
        let bound = (latency + 5).max(16) as f64 + 0.5;
        assert!(
            clocks < bound,
            "L = {latency}: {clocks:.2} clocks per one-cell message (bound {bound})"
        );
    }
}
