//! `SendQueueEngine`'s block tests: directed cases of the requester's rules, a random
//! closed loop (a driver posting random WQEs, good and bad, on every QP; a remote
//! responder losing, refusing and corrupting requests and losing answers; idle gaps and
//! back-pressure on every handshake), throughput and latency figures, synthesis and
//! parameter checks.
//!
//! Every clock the bench hands each handshake on the engine's ports to
//! `nic_model::requester::RequesterScoreboard`, which judges it by the requester's rules
//! from the documentation; it never looks inside the engine. The closed loop also judges
//! every completion by what the remote responder did with its PSN.

use nic_abi::{CompletionStatus, Syndrome, Wqe, WqeOpcode, PSN_MASK, SEND_WINDOW};
use nic_abi::{MAX_MESSAGE_LENGTH, NOP_OPCODE};
use nic_model::random_wqe::{random_wqe, WqeLengths};
use nic_model::remote_responder::{Fate, Responder};
use nic_model::requester::*;
use nic_rtl::sim::{settle, tick};
use nic_rtl::SendQueueEngine;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use std::collections::{HashMap, VecDeque};

const SUCCESS: u8 = CompletionStatus::SUCCESS;
const RETRY_EXCEEDED: u8 = CompletionStatus::RETRY_EXCEEDED;
const RESPONDER_RESTARTED: u8 = CompletionStatus::RESPONDER_RESTARTED;

// ----------------------------------------------------------------------------------------
// Host memory: WQE rings written by the test; every other word reads as a hash of its
// address (payload sources).
// ----------------------------------------------------------------------------------------

fn filler(addr: u32) -> u64 {
    (addr as u64 ^ 0xA5A5_0000_0000_5A5A).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[derive(Default)]
struct Memory {
    words: HashMap<u32, u64>,
}

impl Memory {
    fn read(&self, addr: u32) -> u64 {
        self.words
            .get(&addr)
            .copied()
            .unwrap_or_else(|| filler(addr))
    }
    fn write_wqe(&mut self, addr: u32, w: &Wqe) {
        for (i, word) in w.to_words().iter().enumerate() {
            self.words.insert(addr.wrapping_add(8 * i as u32), *word);
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct CsrAccess {
    write: bool,
    qp: usize,
    reg: u8,
    wdata: u64,
}

#[derive(Clone, Copy, Debug)]
struct Knobs {
    /// Idle clocks on every source the bench drives (CSR, events, DMA data).
    gaps: bool,
    /// Random `ready` on every sink the bench drives (messages, payload, expect,
    /// completions, DMA requests).
    backpressure: bool,
    /// DMA read latency range (clocks from request to first beat).
    latency: (u64, u64),
}

const SMOOTH: Knobs = Knobs {
    gaps: false,
    backpressure: false,
    latency: (2, 3),
};
const ROUGH: Knobs = Knobs {
    gaps: true,
    backpressure: true,
    latency: (1, 12),
};

struct Burst {
    addr: u32,
    left: u32,
    ready_at: u64,
}

#[derive(Default)]
struct DmaServer {
    bursts: VecDeque<Burst>,
    offer: Option<(u64, bool)>,
}

impl DmaServer {
    fn drive(&mut self, rng: &mut ChaCha8Rng, knobs: Knobs, cycle: u64, mem: &Memory) -> bool {
        if self.offer.is_none() {
            if let Some(b) = self.bursts.front() {
                if b.ready_at <= cycle && (!knobs.gaps || rng.gen_bool(0.75)) {
                    self.offer = Some((mem.read(b.addr), b.left == 1));
                }
            }
        }
        self.bursts.len() < 4 && (!knobs.backpressure || rng.gen_bool(0.7))
    }
    fn beat_taken(&mut self) {
        let b = self.bursts.front_mut().unwrap();
        b.addr += 8;
        b.left -= 1;
        if b.left == 0 {
            self.bursts.pop_front();
        }
        self.offer = None;
    }
    fn request(&mut self, addr: u32, words: u32, ready_at: u64) {
        assert!(
            words >= 1 && addr.is_multiple_of(8),
            "bad DMA request {addr:#x} x {words}"
        );
        self.bursts.push_back(Burst {
            addr,
            left: words,
            ready_at,
        });
    }
}

/// What the responder did with a request PSN.

/// A driver posting random WQEs on every QP and consuming the completions.
struct DriverQp {
    start: u32,
    size: u32,
    base: u32,
    wqes: Vec<Wqe>,
    posted: usize,
    completed: usize,
}

struct Bench {
    uut: SendQueueEngine,
    rng: ChaCha8Rng,
    knobs: Knobs,
    cycle: u64,
    mem: Memory,
    /// Judges every handshake by the requester's rules.
    score: RequesterScoreboard,
    txrd: DmaServer,
    cplrd: DmaServer,
    /// Tx read requests taken (WQE fetches and payload reads).
    txrd_taken: usize,
    csr_queue: VecDeque<CsrAccess>,
    csr_offer: Option<CsrAccess>,
    /// CSR reads taken and not yet answered.
    csr_pending: usize,
    csr_reads: Vec<u64>,
    acks: VecDeque<(u64, AckEvent)>,
    ack_offer: Option<AckEvent>,
    /// Messages (with payload) in the order the engine sent them.
    sent: Vec<Msg>,
    sent_cycle: Vec<u64>,
    cur: Option<(Msg, usize)>,
    new_msgs: VecDeque<Msg>,
    expects: Vec<Expect>,
    cpls: Vec<Cpl>,
    new_cpls: VecDeque<Cpl>,
    payload_cycles: Vec<u64>,
    /// Posted PSNs per QP (next doorbell value).
    pi: Vec<u32>,
    /// Ring of each QP as the bench configured it: (base, size).
    rings: Vec<(u32, u32)>,
    // Held-output checks: what was offered and not taken last clock.
    held_msg: Option<Msg>,
    held_expect: Option<Expect>,
    held_cpl: Option<Cpl>,
    held_payload: Option<(u64, bool)>,
    held_txrd: Option<(u32, u32)>,
    held_cplrd: Option<(u32, u32)>,
    /// Clocks since any port of the engine last moved or showed something.
    idle_clocks: u64,
}

impl Bench {
    fn new(queue_pairs: usize, seed: u64, knobs: Knobs) -> Self {
        let mut uut = SendQueueEngine::new(queue_pairs);
        uut.connect_all();
        let mut b = Bench {
            uut,
            rng: ChaCha8Rng::seed_from_u64(seed),
            knobs,
            cycle: 0,
            mem: Memory::default(),
            score: RequesterScoreboard::new(queue_pairs),
            txrd: DmaServer::default(),
            cplrd: DmaServer::default(),
            txrd_taken: 0,
            csr_queue: VecDeque::new(),
            csr_offer: None,
            csr_pending: 0,
            csr_reads: vec![],
            acks: VecDeque::new(),
            ack_offer: None,
            sent: vec![],
            sent_cycle: vec![],
            cur: None,
            new_msgs: VecDeque::new(),
            expects: vec![],
            cpls: vec![],
            new_cpls: VecDeque::new(),
            payload_cycles: vec![],
            pi: vec![0; queue_pairs],
            rings: vec![(0, 0); 64],
            held_msg: None,
            held_expect: None,
            held_cpl: None,
            held_payload: None,
            held_txrd: None,
            held_cplrd: None,
            idle_clocks: 0,
        };
        b.set_cfg(0x0042, 0, 7);
        b.uut.reset.next = true;
        tick(&mut b.uut);
        b.uut.reset.next = false;
        b.run(70); // the table is cleared after reset
        b
    }

    fn set_cfg(&mut self, node_id: u16, timeout: u32, limit: u32) {
        self.uut.cfg_node_id.next = (node_id as u64).to_bits();
        self.uut.cfg_retry_timeout.next = (timeout as u64).to_bits();
        self.uut.cfg_retry_limit.next = (limit as u64).to_bits();
        self.score.configure(node_id, timeout, limit);
    }

    fn csr(&mut self, write: bool, qp: usize, reg: u8, wdata: u64) {
        self.csr_queue.push_back(CsrAccess {
            write,
            qp,
            reg,
            wdata,
        });
    }

    /// Configure and reset a QP: ring at `base` with `2^size` WQEs, remote node/QP,
    /// start PSN, enabled.
    fn setup_qp(&mut self, qp: usize, base: u32, size: u32, remote: u32, start: u32) {
        self.csr(true, qp, SQ_BASE, base as u64);
        self.csr(true, qp, SQ_SIZE_LOG2, size as u64);
        self.csr(true, qp, QP_REMOTE, remote as u64);
        self.csr(true, qp, QP_CTRL, 1 | 2 | (start as u64) << 8);
        self.rings[qp] = (base, size);
        if qp < self.pi.len() {
            self.pi[qp] = start;
        }
    }

    /// The ring slot of WQE `index` of QP `qp`, as the bench configured it.
    fn slot(&self, qp: usize, index: u32) -> u32 {
        let (base, size) = self.rings[qp];
        let mask = if size >= 24 {
            PSN_MASK
        } else {
            (1 << size) - 1
        };
        base.wrapping_add((index & mask) << 6)
    }

    /// Write WQEs into QP `qp`'s ring and ring the doorbell.
    fn post(&mut self, qp: usize, wqes: &[Wqe]) {
        self.flush_csr();
        for w in wqes {
            let addr = self.slot(qp, self.pi[qp]);
            self.mem.write_wqe(addr, w);
            self.pi[qp] = psn_add(self.pi[qp], 1);
        }
        self.csr(true, qp, SQ_PI, self.pi[qp] as u64);
    }

    fn flush_csr(&mut self) {
        let mut n = 0;
        while !self.csr_queue.is_empty() || self.csr_offer.is_some() || self.csr_pending > 0 {
            self.step();
            n += 1;
            assert!(n < 10_000, "CSR port stalled");
        }
        // A write taken is in the table a few clocks later.
        self.run(4);
    }

    fn read_csr(&mut self, qp: usize, reg: u8) -> u64 {
        self.flush_csr();
        let before = self.csr_reads.len();
        self.csr(false, qp, reg, 0);
        self.run_until(|b| b.csr_reads.len() > before, 1000);
        self.csr_reads[before]
    }

    fn push_ack(&mut self, ev: AckEvent) {
        self.acks.push_back((self.cycle, ev));
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    fn run_until(&mut self, mut done: impl FnMut(&Bench) -> bool, max: u64) {
        let start = self.cycle;
        while !done(self) {
            assert!(
                self.cycle - start < max,
                "condition not reached in {max} clocks"
            );
            self.step();
        }
    }

    fn step(&mut self) {
        let knobs = self.knobs;
        // Inputs.
        if self.csr_offer.is_none() && (!knobs.gaps || self.rng.gen_bool(0.6)) {
            self.csr_offer = self.csr_queue.pop_front();
        }
        let u = &mut self.uut;
        u.s_csr_valid.next = self.csr_offer.is_some();
        if let Some(a) = self.csr_offer {
            u.s_csr_write.next = a.write;
            u.s_csr_qp.next = (a.qp as u64).to_bits();
            u.s_csr_reg.next = (a.reg as u64).to_bits();
            u.s_csr_wdata.next = a.wdata.to_bits();
        }
        if self.ack_offer.is_none() {
            if let Some(&(t, ev)) = self.acks.front() {
                if t <= self.cycle && (!knobs.gaps || self.rng.gen_bool(0.6)) {
                    self.ack_offer = Some(ev);
                    self.acks.pop_front();
                }
            }
        }
        u.s_ack_valid.next = self.ack_offer.is_some();
        if let Some(ev) = self.ack_offer {
            u.s_ack_qp.next = (ev.qp as u64).to_bits();
            u.s_ack_psn.next = (ev.psn as u64).to_bits();
            u.s_ack_syndrome.next = (ev.syndrome as u64).to_bits();
            u.s_ack_response.next = ev.response;
            u.s_ack_resync.next = ev.resync;
        }
        let tx_req_ready = self.txrd.drive(&mut self.rng, knobs, self.cycle, &self.mem);
        u.m_txrd_req_ready.next = tx_req_ready;
        u.s_txrd_valid.next = self.txrd.offer.is_some();
        let (d, l) = self.txrd.offer.unwrap_or((0, false));
        u.s_txrd_data.next = d.to_bits();
        u.s_txrd_last.next = l;
        let cpl_req_ready = self
            .cplrd
            .drive(&mut self.rng, knobs, self.cycle, &self.mem);
        u.m_cplrd_req_ready.next = cpl_req_ready;
        u.s_cplrd_valid.next = self.cplrd.offer.is_some();
        let (d, l) = self.cplrd.offer.unwrap_or((0, false));
        u.s_cplrd_data.next = d.to_bits();
        u.s_cplrd_last.next = l;
        let bp = knobs.backpressure;
        u.m_msg_ready.next = !bp || self.rng.gen_bool(0.5);
        u.m_payload_ready.next = !bp || self.rng.gen_bool(0.7);
        u.m_expect_ready.next = !bp || self.rng.gen_bool(0.5);
        u.m_cpl_ready.next = !bp || self.rng.gen_bool(0.5);
        // A TPT's bind write port (no draw from the RNG: the stimulus stays as it was).
        u.m_bind_ready.next = !bp || self.cycle % 3 != 0;
        u.reset.next = false;
        settle(u);
        self.score.counters(
            self.uut.stat_requests_sent.val().to_u32(),
            self.uut.stat_retransmissions.val().to_u32(),
        );
        self.observe();
        tick(&mut self.uut);
        self.cycle += 1;
    }

    fn msg_fields(&self) -> Msg {
        Msg::of_descriptor(&self.uut.m_msg.val())
    }

    /// Handshakes of this clock (after settling, before the edge), each handed to the
    /// scoreboard.
    fn observe(&mut self) {
        let cycle = self.cycle;
        let mem = &self.mem;
        let word = |a: u32| mem.read(a);
        let u = &self.uut;
        let active = u.s_csr_valid.val()
            || u.m_csr_rdata_valid.val()
            || u.s_ack_valid.val()
            || u.m_txrd_req_valid.val()
            || u.s_txrd_valid.val()
            || u.m_cplrd_req_valid.val()
            || u.s_cplrd_valid.val()
            || u.m_expect_valid.val()
            || u.m_msg_valid.val()
            || u.m_payload_valid.val()
            || u.m_cpl_valid.val()
            || !self.txrd.bursts.is_empty()
            || !self.cplrd.bursts.is_empty()
            || !self.acks.is_empty();
        self.idle_clocks = if active { 0 } else { self.idle_clocks + 1 };
        // CSR.
        if u.s_csr_valid.val() && u.s_csr_ready.val() {
            let a = self.csr_offer.take().unwrap();
            self.score.csr_taken(cycle, a.qp, a.write, a.reg, a.wdata);
            self.csr_pending += !a.write as usize;
        }
        if u.m_csr_rdata_valid.val() {
            let got = u.m_csr_rdata.val().to_u64();
            assert!(self.csr_pending > 0, "CSR read data without a read");
            self.csr_pending -= 1;
            self.score.csr_answered(got);
            self.csr_reads.push(got);
        }
        // Acknowledgement events.
        if u.s_ack_valid.val() && u.s_ack_ready.val() {
            self.score.ack_taken(cycle, self.ack_offer.take().unwrap());
        }
        // Tx read client.
        if u.m_txrd_req_valid.val() {
            let req = (
                u.m_txrd_req_addr.val().to_u32(),
                u.m_txrd_req_words.val().to_u32(),
            );
            if let Some(h) = self.held_txrd {
                assert_eq!(h, req, "tx read request changed while waiting");
            }
            self.held_txrd = Some(req);
            if u.m_txrd_req_ready.val() {
                self.score.tx_read(req.0, req.1, &word);
                let lat = self
                    .rng
                    .gen_range(self.knobs.latency.0..=self.knobs.latency.1);
                self.txrd.request(req.0, req.1, cycle + lat);
                self.txrd_taken += 1;
                self.held_txrd = None;
            }
        } else {
            assert!(self.held_txrd.is_none(), "tx read request withdrawn");
        }
        if u.s_txrd_valid.val() && u.s_txrd_ready.val() {
            self.txrd.beat_taken();
        }
        // Rx-port read client.
        if u.m_cplrd_req_valid.val() {
            let req = (
                u.m_cplrd_req_addr.val().to_u32(),
                u.m_cplrd_req_words.val().to_u32(),
            );
            if let Some(h) = self.held_cplrd {
                assert_eq!(h, req, "completion read request changed while waiting");
            }
            self.held_cplrd = Some(req);
            if u.m_cplrd_req_ready.val() {
                self.score.completion_read(req.0, req.1);
                let lat = self
                    .rng
                    .gen_range(self.knobs.latency.0..=self.knobs.latency.1);
                self.cplrd.request(req.0, req.1, cycle + lat);
                self.held_cplrd = None;
            }
        } else {
            assert!(
                self.held_cplrd.is_none(),
                "completion read request withdrawn"
            );
        }
        if u.s_cplrd_valid.val() && u.s_cplrd_ready.val() {
            self.cplrd.beat_taken();
        }
        // Expect events.
        if u.m_expect_valid.val() {
            let e = Expect {
                qp: u.m_expect_qp.val().index(),
                psn: u.m_expect_psn.val().to_u32(),
                addr: u.m_expect_addr.val().to_u32(),
                length: u.m_expect_length.val().to_u32(),
                atomic: u.m_expect_atomic.val(),
            };
            if let Some(h) = &self.held_expect {
                assert_eq!(h, &e, "expect event changed while waiting");
            }
            self.held_expect = Some(e.clone());
            if u.m_expect_ready.val() {
                self.score.expect_taken(e.clone());
                self.expects.push(e);
                self.held_expect = None;
            }
        } else {
            assert!(self.held_expect.is_none(), "expect event withdrawn");
        }
        // Messages.
        if u.m_msg_valid.val() {
            let m = self.msg_fields();
            match &self.held_msg {
                Some(h) => assert_eq!(h, &m, "message changed while waiting"),
                None => self.score.message_offered(cycle, &m, &word),
            }
            self.held_msg = Some(m.clone());
            if u.m_msg_ready.val() {
                self.held_msg = None;
                assert!(
                    self.cur.is_none(),
                    "message before the previous payload ended"
                );
                self.score.message_taken();
                self.sent_cycle.push(cycle);
                let words = m.length.div_ceil(8) as usize;
                if words == 0 {
                    self.score.message_finished(&m, &word);
                    self.sent.push(m.clone());
                    self.new_msgs.push_back(m);
                } else {
                    self.cur = Some((m, words));
                }
            }
        } else {
            assert!(self.held_msg.is_none(), "message withdrawn");
        }
        // Payload.
        if u.m_payload_valid.val() {
            let beat = (u.m_payload_data.val().to_u64(), u.m_payload_last.val());
            if let Some(h) = self.held_payload {
                assert_eq!(h, beat, "payload beat changed while waiting");
            }
            self.held_payload = Some(beat);
            if u.m_payload_ready.val() {
                self.held_payload = None;
                let (m, words) = self.cur.as_mut().expect("payload outside a message");
                m.payload.push(beat.0);
                assert_eq!(
                    beat.1,
                    m.payload.len() == *words,
                    "payload last flag of PSN {:#x}",
                    m.psn
                );
                self.payload_cycles.push(cycle);
                if beat.1 {
                    let (m, _) = self.cur.take().unwrap();
                    self.score.message_finished(&m, &word);
                    self.sent.push(m.clone());
                    self.new_msgs.push_back(m);
                }
            }
        } else {
            assert!(self.held_payload.is_none(), "payload beat withdrawn");
        }
        // Completions.
        if u.m_cpl_valid.val() {
            assert!(!u.m_cpl.val().is_receive && !u.m_cpl.val().has_immediate);
            assert_eq!(u.m_cpl.val().immediate.to_u32(), 0);
            let c = Cpl {
                opcode: u.m_cpl.val().opcode.to_u8(),
                status: u.m_cpl.val().status.to_u8(),
                qp: u.m_cpl.val().qp.index(),
                byte_count: u.m_cpl.val().byte_count.to_u32(),
                wqe_index: u.m_cpl.val().wqe_index.to_u32(),
                src_node: u.m_cpl.val().src_node.to_u16(),
                src_qp: u.m_cpl.val().src_qp.to_u16(),
                wr_id: u.m_cpl.val().wr_id.to_u64(),
            };
            if let Some(h) = &self.held_cpl {
                assert_eq!(h, &c, "completion changed while waiting");
            }
            self.held_cpl = Some(c.clone());
            if u.m_cpl_ready.val() {
                self.held_cpl = None;
                self.score.completion_taken(cycle, &c, &word);
                self.cpls.push(c.clone());
                self.new_cpls.push_back(c);
            }
        } else {
            assert!(self.held_cpl.is_none(), "completion withdrawn");
        }
    }

    /// PSNs of the messages sent on `qp`.
    fn psns(&self, qp: usize) -> Vec<u32> {
        self.sent
            .iter()
            .filter(|m| m.src_qp as usize == qp)
            .map(|m| m.psn)
            .collect()
    }

    fn cpl_list(&self, qp: usize) -> Vec<(u32, u8)> {
        self.cpls
            .iter()
            .filter(|c| c.qp == qp)
            .map(|c| (c.wqe_index, c.status))
            .collect()
    }

    /// Run until nothing has moved on any port for 100 clocks (the engine's internal
    /// timer scans are not seen: a test with a retry timeout waits for what it expects).
    fn settle_down(&mut self) {
        self.run(4);
        self.run_until(|b| b.idle_clocks >= 100, 20_000);
    }
}

fn send(len: u32, wr_id: u64) -> Wqe {
    Wqe {
        opcode: WqeOpcode::Send as u8,
        length: len,
        wr_id,
        local_addr: 0x0020_0000 + 0x1_0000 * (wr_id as u32 % 16),
        ..Default::default()
    }
}

/// Ring base of QP q in the directed tests.
fn ring(qp: usize) -> u32 {
    0x0001_0000 + 0x1000 * qp as u32
}

// ------------------------------------------------------------------------------------
// Directed tests.
// ------------------------------------------------------------------------------------

/// Every opcode: message fields, payload, expect events and completions (each also
/// judged by the bench's scoreboard).
#[test]
fn every_opcode_message_fields_and_payload() {
    for knobs in [SMOOTH, ROUGH] {
        let mut b = Bench::new(4, 1, knobs);
        b.setup_qp(2, ring(2), 4, 0x0005_0077, 0x100);
        let base = Wqe {
            wr_id: 0x1111,
            local_addr: 0x0030_0000,
            remote_vaddr: 0x7777_0000_1234_5678,
            stag: 0xABCD_EF01,
            immediate: 0x5555_AAAA,
            compare_add: 0xC0C0,
            swap: 0x5A5A,
            ..Default::default()
        };
        let mk = |op: WqeOpcode, length: u32, invalidate: bool| Wqe {
            opcode: op as u8,
            length,
            invalidate,
            wr_id: base.wr_id + length as u64,
            ..base
        };
        let wqes = [
            mk(WqeOpcode::Send, 0, false),
            mk(WqeOpcode::Send, 13, false),
            mk(WqeOpcode::SendImmediate, 64, false),
            mk(WqeOpcode::RdmaWrite, 100, true),
            mk(WqeOpcode::RdmaWriteImmediate, 7, false),
            mk(WqeOpcode::RdmaRead, 40, true),
            mk(WqeOpcode::AtomicCompareSwap, 8, false),
            mk(WqeOpcode::AtomicFetchAdd, 8, false),
        ];
        b.post(2, &wqes);
        // Acknowledge each message as it arrives: responses for READ and atomics.
        for (i, w) in wqes.iter().enumerate() {
            b.run_until(|b| b.sent.len() > i, 5000);
            let psn = 0x100 + i as u32;
            let ev = if needs_response(w) {
                AckEvent::response(2, psn)
            } else {
                AckEvent::ack(2, psn)
            };
            b.push_ack(ev);
        }
        b.settle_down();
        assert_eq!(b.sent.len(), 8);
        for (i, (m, w)) in b.sent.iter().zip(&wqes).enumerate() {
            assert_eq!(m.psn, 0x100 + i as u32);
            assert_eq!((m.opcode, m.src_qp, m.src_node), (w.opcode, 2, 0x0042));
            assert_eq!((m.dest_node, m.dest_qp), (0x0077, 0x0005));
            assert_eq!(
                (m.vaddr, m.stag, m.dma_length),
                (w.remote_vaddr, w.stag, w.length)
            );
            assert_eq!(m.invalidate, w.invalidate);
            assert_eq!(
                m.resync,
                i == 0,
                "RESYNC only on the first message after reset"
            );
            let imm = matches!(i, 2 | 4);
            assert_eq!(
                (m.has_immediate, m.immediate),
                (imm, if imm { w.immediate } else { 0 })
            );
        }
        let lens: Vec<u32> = b.sent.iter().map(|m| m.length).collect();
        assert_eq!(lens, [0, 13, 64, 100, 7, 0, 16, 16]);
        let words: Vec<usize> = b.sent.iter().map(|m| m.payload.len()).collect();
        assert_eq!(words, [0, 2, 8, 13, 1, 0, 2, 2]);
        assert_eq!(b.sent[6].payload, [0xC0C0, 0x5A5A]);
        assert_eq!(b.sent[1].payload[0], filler(0x0030_0000));
        let expects: Vec<(u32, u32, bool)> = b
            .expects
            .iter()
            .map(|e| (e.psn, e.length, e.atomic))
            .collect();
        assert_eq!(
            expects,
            [(0x105, 40, false), (0x106, 8, true), (0x107, 8, true)]
        );
        assert!(b.expects.iter().all(|e| e.qp == 2 && e.addr == 0x0030_0000));
        assert_eq!(
            b.cpl_list(2),
            (0..8).map(|i| (0x100 + i, SUCCESS)).collect::<Vec<_>>()
        );
        for (c, w) in b.cpls.iter().zip(&wqes) {
            assert_eq!(
                (c.opcode, c.byte_count, c.wr_id),
                (w.opcode, w.length, w.wr_id)
            );
            assert_eq!((c.src_node, c.src_qp), (0x0077, 0x0005));
        }
        assert_eq!(b.uut.stat_requests_sent.val().to_u32(), 8);
        assert_eq!(b.read_csr(2, SQ_CI), 0x108);
    }
}

/// A long RDMA WRITE on QP 0 does not hold back the other QPs by more than one message.
#[test]
fn round_robin_long_message_does_not_starve_other_qps() {
    for (seed, knobs) in [(2, SMOOTH), (3, ROUGH)] {
        let mut b = Bench::new(3, seed, knobs);
        for q in 0..3 {
            b.setup_qp(q, ring(q), 4, 0x10 + q as u32, 0);
        }
        let long = |i: u64| Wqe {
            opcode: WqeOpcode::RdmaWrite as u8,
            length: 4096,
            wr_id: i,
            local_addr: 0x0050_0000,
            remote_vaddr: 0x8000,
            ..Default::default()
        };
        b.post(0, &[long(0), long(1), long(2), long(3)]);
        b.run_until(|b| b.cur.is_some(), 2000); // QP 0's first payload is streaming
        b.post(1, &[send(8, 1), send(8, 2), send(8, 3)]);
        b.post(2, &[send(16, 1), send(16, 2)]);
        b.run_until(|b| b.sent.len() == 9, 60_000);
        let order: Vec<u16> = b.sent.iter().map(|m| m.src_qp).collect();
        assert_eq!(order, [0, 1, 2, 0, 1, 2, 0, 1, 0]);
    }
}

/// At most SEND_WINDOW messages are outstanding; acknowledgements open the window,
/// events outside `[sq_una, sq_next)` are ignored.
#[test]
fn window_limit_and_stale_events() {
    let start = 0xFF_FFFC; // the PSNs wrap through 0
    let mut b = Bench::new(1, 4, ROUGH);
    b.setup_qp(0, ring(0), 4, 0x99, start);
    let wqes: Vec<Wqe> = (0..12).map(|i| send(24, i)).collect();
    b.post(0, &wqes);
    b.run(3000);
    let first8: Vec<u32> = (0..8).map(|i| psn_add(start, i)).collect();
    assert_eq!(b.psns(0), first8);
    // Stale: before sq_una, and sq_next itself (a retryable NACK: up to sq_una +
    // SEND_WINDOW; further away it goes back, see `a_foreign_sequence_error_goes_back`).
    b.push_ack(AckEvent::ack(0, psn_add(start, PSN_MASK)));
    b.push_ack(AckEvent::ack(0, psn_add(start, 9)));
    b.push_ack(AckEvent::nack(
        0,
        psn_add(start, 8),
        Syndrome::SequenceError,
    ));
    b.settle_down();
    assert!(b.cpls.is_empty());
    assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 0);
    b.push_ack(AckEvent::ack(0, psn_add(start, 2)));
    b.run(3000);
    assert_eq!(
        b.cpl_list(0),
        (0..3)
            .map(|i| (psn_add(start, i), SUCCESS))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        b.psns(0),
        (0..11).map(|i| psn_add(start, i)).collect::<Vec<_>>()
    );
    b.push_ack(AckEvent::ack(0, psn_add(start, 10)));
    b.run_until(|b| b.sent.len() == 12, 5000);
    b.push_ack(AckEvent::ack(0, psn_add(start, 11)));
    b.settle_down();
    assert_eq!(
        b.cpl_list(0),
        (0..12)
            .map(|i| (psn_add(start, i), SUCCESS))
            .collect::<Vec<_>>()
    );
    assert_eq!(b.sent.len(), 12);
    assert_eq!(b.read_csr(0, SQ_CI), psn_add(start, 12) as u64);
}

/// An RDMA READ or atomic is sent only when nothing is outstanding, after its expect
/// event, and nothing follows it until its response.
#[test]
fn read_and_atomic_wait_for_an_empty_queue_and_their_response() {
    let mut b = Bench::new(2, 5, ROUGH);
    b.setup_qp(1, ring(1), 3, 0x1, 0x50);
    let read = Wqe {
        opcode: WqeOpcode::RdmaRead as u8,
        length: 64,
        wr_id: 7,
        local_addr: 0x0060_0000,
        remote_vaddr: 0x4000,
        ..Default::default()
    };
    let cas = Wqe {
        opcode: WqeOpcode::AtomicCompareSwap as u8,
        length: 8,
        wr_id: 8,
        local_addr: 0x0060_0100,
        remote_vaddr: 0x4008,
        compare_add: 1,
        swap: 2,
        ..Default::default()
    };
    b.post(1, &[send(8, 1), read, send(8, 2), cas, send(8, 3)]);
    b.run(2000);
    assert_eq!(b.psns(1), [0x50]);
    assert!(b.expects.is_empty());
    b.push_ack(AckEvent::ack(1, 0x50));
    b.run(2000);
    assert_eq!(b.psns(1), [0x50, 0x51]);
    assert_eq!(b.expects.len(), 1);
    let status = b.read_csr(1, QP_STATUS);
    assert_eq!(
        (status & 0xFF_FFFF, status >> 49 & 1),
        (0x52, 1),
        "waiting for the READ response"
    );
    b.push_ack(AckEvent::response(1, 0x51));
    b.run(2000);
    assert_eq!(b.psns(1), [0x50, 0x51, 0x52]);
    assert_eq!(b.read_csr(1, QP_STATUS) >> 49 & 1, 0);
    assert_eq!(b.expects.len(), 1, "the atomic waits for 0x52");
    b.push_ack(AckEvent::ack(1, 0x52));
    b.run(2000);
    assert_eq!(b.psns(1), [0x50, 0x51, 0x52, 0x53]);
    assert_eq!(b.expects.len(), 2);
    assert_eq!(b.sent[3].payload, [1, 2]);
    b.push_ack(AckEvent::response(1, 0x53));
    b.run(2000);
    assert_eq!(b.psns(1), [0x50, 0x51, 0x52, 0x53, 0x54]);
    b.push_ack(AckEvent::ack(1, 0x54));
    b.settle_down();
    assert_eq!(
        b.cpl_list(1),
        (0x50..0x55).map(|p| (p, SUCCESS)).collect::<Vec<_>>()
    );
    let expects: Vec<(u32, u32, u32, bool)> = b
        .expects
        .iter()
        .map(|e| (e.psn, e.addr, e.length, e.atomic))
        .collect();
    assert_eq!(
        expects,
        [(0x51, 0x0060_0000, 64, false), (0x53, 0x0060_0100, 8, true)]
    );
}

/// Implied NAK: an ACK, or a NACK for a later PSN, while an RDMA READ or atomic at
/// `sq_una` awaits its response says the response was lost. It completes nothing: the
/// QP goes back to the READ or atomic and resends it (a retry: counted, limited), and
/// only its response completes it (the soak failure: NACK CRC_OR_MALFORMED with the
/// expected PSN after a corrupted resend completed a READ whose response never came).
/// Once the QP has gone back (nothing outstanding), such an answer is ignored.
#[test]
fn an_answer_past_a_read_or_atomic_without_its_response_resends_it() {
    for (seed, knobs) in [(31, SMOOTH), (32, ROUGH)] {
        let mut b = Bench::new(2, seed, knobs);
        b.set_cfg(0x42, 0, 2);
        b.setup_qp(1, ring(1), 3, 0x1, 0x50);
        let read = Wqe {
            opcode: WqeOpcode::RdmaRead as u8,
            length: 64,
            wr_id: 7,
            local_addr: 0x0060_0000,
            remote_vaddr: 0x4000,
            ..Default::default()
        };
        let faa = Wqe {
            opcode: WqeOpcode::AtomicFetchAdd as u8,
            length: 8,
            wr_id: 9,
            local_addr: 0x0060_0100,
            remote_vaddr: 0x4008,
            compare_add: 5,
            ..Default::default()
        };
        b.post(1, &[read, send(8, 1), faa, send(8, 2), read, send(8, 3)]);
        b.run(2000);
        assert_eq!(b.psns(1), [0x50]);
        // The READ's response is lost; the responder NACKs a corrupted resend with its
        // expected PSN, one past the READ.
        b.push_ack(AckEvent::nack(1, 0x51, Syndrome::CrcOrMalformed));
        b.run(2000);
        assert!(b.cpls.is_empty(), "the READ completed without its response");
        assert_eq!(b.psns(1), [0x50, 0x50], "the READ is resent");
        assert_eq!(b.read_csr(1, QP_STATUS) >> 52 & 0xF, 1, "a retry");
        b.push_ack(AckEvent::response(1, 0x50));
        b.run(2000);
        assert_eq!(b.cpl_list(1), [(0x50, SUCCESS)]);
        b.push_ack(AckEvent::ack(1, 0x51));
        b.run(2000);
        assert_eq!(b.psns(1), [0x50, 0x50, 0x51, 0x52]);
        // An ACK for the atomic's own PSN (its response lost): resent, twice.
        b.push_ack(AckEvent::ack(1, 0x52));
        b.run(2000);
        b.push_ack(AckEvent::ack(1, 0x52));
        b.run(2000);
        assert_eq!(
            b.cpl_list(1).len(),
            2,
            "the atomic completed without its response"
        );
        assert_eq!(b.psns(1), [0x50, 0x50, 0x51, 0x52, 0x52, 0x52]);
        assert_eq!(b.sent[5].payload, [5, 0], "the same atomic again");
        assert_eq!(b.read_csr(1, QP_STATUS) >> 52 & 0xF, 2);
        b.push_ack(AckEvent::response(1, 0x52));
        b.run(2000);
        b.push_ack(AckEvent::ack(1, 0x53));
        b.run(2000);
        assert_eq!(b.psns(1), [0x50, 0x50, 0x51, 0x52, 0x52, 0x52, 0x53, 0x54]);
        // A third implied NAK for the second READ exceeds the limit of 2; the first
        // two are ACKs for the READ's own PSN and a NACK past it.
        b.push_ack(AckEvent::ack(1, 0x54));
        b.run(2000);
        b.push_ack(AckEvent::nack(1, 0x55, Syndrome::SequenceError));
        b.run(2000);
        b.push_ack(AckEvent::ack(1, 0x54));
        b.run(2000);
        b.push_ack(AckEvent::ack(1, 0x55));
        b.settle_down();
        assert_eq!(
            b.cpl_list(1),
            [
                (0x50, SUCCESS),
                (0x51, SUCCESS),
                (0x52, SUCCESS),
                (0x53, SUCCESS),
                (0x54, RETRY_EXCEEDED),
                (0x55, SUCCESS)
            ]
        );
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 6);
    }
}

/// A SEQUENCE_ERROR NACK completes the WQEs before its PSN and re-sends the same PSNs
/// with the same fields and payload.
#[test]
fn go_back_n_after_sequence_error() {
    for (seed, knobs) in [(6, SMOOTH), (7, ROUGH)] {
        let mut b = Bench::new(1, seed, knobs);
        b.setup_qp(0, ring(0), 4, 0x2, 10);
        let wqes: Vec<Wqe> = [30, 200, 64, 9, 1000]
            .iter()
            .enumerate()
            .map(|(i, &len)| Wqe {
                opcode: WqeOpcode::RdmaWrite as u8,
                length: len,
                wr_id: i as u64,
                local_addr: 0x0070_0000 + 0x1000 * i as u32,
                remote_vaddr: 0x9000,
                ..Default::default()
            })
            .collect();
        b.post(0, &wqes);
        b.run_until(|b| b.sent.len() == 5, 20_000);
        let first = b.sent.clone();
        b.push_ack(AckEvent::nack(0, 12, Syndrome::SequenceError));
        b.run_until(|b| b.sent.len() == 8, 20_000);
        b.settle_down();
        assert_eq!(b.cpl_list(0), [(10, SUCCESS), (11, SUCCESS)]);
        assert_eq!(&b.sent[5..], &first[2..], "the same messages again");
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 1);
        let status = b.read_csr(0, QP_STATUS);
        assert_eq!(
            (status & 0xFF_FFFF, status >> 52 & 15),
            (15, 1),
            "sq_next, retry count"
        );
        // CRC_OR_MALFORMED is retried the same way.
        b.push_ack(AckEvent::nack(0, 14, Syndrome::CrcOrMalformed));
        b.run_until(|b| b.sent.len() == 9, 20_000);
        assert_eq!(b.sent[8], first[4]);
        b.push_ack(AckEvent::ack(0, 14));
        b.settle_down();
        assert_eq!(
            b.cpl_list(0),
            (10..15).map(|p| (p, SUCCESS)).collect::<Vec<_>>()
        );
        assert_eq!(
            b.read_csr(0, QP_STATUS) >> 52 & 15,
            0,
            "acknowledgement clears the count"
        );
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 2);
    }
}

/// Without answers the timer goes back N; after RETRY_LIMIT retransmissions the oldest
/// WQE completes with RETRY_EXCEEDED and the next one goes on (with RESYNC).
#[test]
fn timeout_retransmission_and_retry_exceeded() {
    let mut b = Bench::new(2, 8, SMOOTH);
    b.set_cfg(0x42, 300, 2);
    b.setup_qp(1, ring(1), 4, 0x3, 0x200);
    b.post(1, &[send(16, 1), send(16, 2)]);
    b.run_until(|b| b.cpls.len() == 2, 20_000);
    b.settle_down();
    assert_eq!(
        b.cpl_list(1),
        [(0x200, RETRY_EXCEEDED), (0x201, RETRY_EXCEEDED)]
    );
    assert_eq!(
        b.psns(1),
        [0x200, 0x201, 0x200, 0x201, 0x200, 0x201, 0x201, 0x201, 0x201]
    );
    let resync: Vec<bool> = b.sent.iter().map(|m| m.resync).collect();
    assert_eq!(
        resync,
        [true, false, true, false, true, false, true, true, true]
    );
    assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 6);
    // Each retransmission round waits the timeout after the previous one.
    // (The timer runs from sq_una's own transmission, not from the later messages'.)
    for (i, j) in [(2, 0), (4, 2), (7, 6), (8, 7)] {
        let gap = b.sent_cycle[i] - b.sent_cycle[j];
        assert!((300..400).contains(&gap), "round {i} after {gap} clocks");
    }
    // A timeout of 0 never fires.
    b.set_cfg(0x42, 0, 2);
    b.post(1, &[send(16, 3)]);
    b.run(3000);
    assert_eq!(b.psns(1).len(), 10);
    assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 6);
}

/// QP_CTRL bit 2, the send-side reset the driver uses to flush a QP whose peer
/// restarted: like a reset, every pointer moves to the start PSN and the next message
/// carries RESYNC; what was outstanding is forgotten (no completion). A final NACK for
/// a PSN from before (the old incarnation's answer, far from `sq_una`) goes back to
/// `sq_una` at once, without counting a retry: while that NACK sat in the responder's
/// answer slot, the responder may have dropped what was sent since.
#[test]
fn send_side_reset_forgets_the_old_psns_and_their_late_nacks_resend_at_once() {
    for (seed, knobs) in [(41, SMOOTH), (42, ROUGH)] {
        let mut b = Bench::new(2, seed, knobs);
        b.set_cfg(0x42, 50_000, 3);
        b.setup_qp(1, ring(1), 4, 0x3, 0x700);
        b.post(1, &(1..=4).map(|i| send(8, i)).collect::<Vec<_>>());
        b.run_until(|b| b.sent.len() == 4, 20_000);
        b.csr(true, 1, QP_CTRL, 1 | 4 | 0x40_0000 << 8);
        assert_eq!(b.read_csr(1, SQ_CI), 0x40_0000);
        assert_eq!(b.read_csr(1, SQ_PI), 0x40_0000);
        assert_eq!(b.read_csr(1, QP_CTRL), 1, "still enabled");
        b.post(1, &[send(8, 5)]);
        b.run_until(|b| b.sent.len() == 5, 20_000);
        assert_eq!((b.sent[4].psn, b.sent[4].resync), (0x40_0000, true));
        // The old incarnation's NACK for 0x701: the new message is resent at once.
        b.push_ack(AckEvent::nack(1, 0x701, Syndrome::RdmaDisabled));
        b.run_until(|b| b.sent.len() == 6, 2000);
        assert_eq!((b.sent[5].psn, b.sent[5].resync), (0x40_0000, true));
        assert_eq!(b.read_csr(1, QP_STATUS) >> 52 & 15, 0, "not a retry");
        b.push_ack(AckEvent::ack(1, 0x40_0000));
        b.settle_down();
        // Only the WQE posted after the reset completes; the old four never do.
        assert_eq!(b.cpl_list(1), [(0x40_0000, SUCCESS)]);
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 1);
    }
}

/// A refused PSN's NACK that crosses a timeout: the QP went back to `sq_una` before it
/// arrived, but it answers a message the QP sent, so it still completes that WQE with
/// the syndrome (never later with success from the duplicate's answer), and `sq_next`
/// moves past it. An ACK from before the go-back likewise completes what it covers.
#[test]
fn an_answer_to_a_message_sent_before_a_go_back_still_counts() {
    for (seed, knobs) in [(51, SMOOTH), (52, ROUGH)] {
        let mut b = Bench::new(1, seed, knobs);
        b.set_cfg(0x42, 300, 7);
        b.setup_qp(0, ring(0), 4, 0x4, 0x900);
        b.post(0, &(1..=4).map(|i| send(8, i)).collect::<Vec<_>>());
        b.run_until(|b| b.sent.len() == 4, 20_000);
        // The timer goes back to 0x900 and resends from there.
        b.run_until(|b| b.sent.len() == 5, 2000);
        assert_eq!(b.sent[4].psn, 0x900);
        b.push_ack(AckEvent::ack(0, 0x901));
        b.push_ack(AckEvent::nack(0, 0x902, Syndrome::RdmaDisabled));
        b.run_until(|b| b.cpls.len() == 3, 2000);
        assert_eq!(
            b.cpl_list(0),
            [
                (0x900, SUCCESS),
                (0x901, SUCCESS),
                (0x902, Syndrome::RdmaDisabled as u8)
            ]
        );
        b.push_ack(AckEvent::ack(0, 0x903));
        b.settle_down();
        assert_eq!(b.cpls.len(), 4);
        // Nothing was resent past what the answers covered.
        assert!(
            b.psns(0)[4..].iter().all(|&p| p <= 0x903),
            "{:x?}",
            b.psns(0)
        );
    }
}

/// A NACK that is not retried completes its WQE with the syndrome (the WQEs before it
/// with success) and the queue goes on.
#[test]
fn final_nack_completes_with_the_syndrome_and_the_next_wqe_proceeds() {
    let mut b = Bench::new(1, 9, ROUGH);
    b.setup_qp(0, ring(0), 4, 0x4, 0);
    b.post(0, &[send(8, 1), send(8, 2), send(8, 3), send(8, 4)]);
    b.run_until(|b| b.sent.len() == 4, 20_000);
    b.push_ack(AckEvent::nack(0, 1, Syndrome::RemoteAccessError));
    b.settle_down();
    assert_eq!(b.cpl_list(0), [(0, SUCCESS), (1, 0x62)]);
    // The responder may have dropped 2 and 3 (its answer slot held the NACK): resent.
    assert_eq!(b.psns(0), [0, 1, 2, 3, 2, 3]);
    b.push_ack(AckEvent::nack(0, 2, Syndrome::ReceiverNotReady));
    b.settle_down();
    assert_eq!(b.psns(0), [0, 1, 2, 3, 2, 3, 3]);
    b.push_ack(AckEvent::ack(0, 3));
    b.settle_down();
    assert_eq!(
        b.cpl_list(0),
        [(0, SUCCESS), (1, 0x62), (2, 0x20), (3, SUCCESS)]
    );
    assert_eq!(b.read_csr(0, QP_STATUS) >> 52 & 15, 0, "no retry counted");
    b.post(0, &[send(8, 5)]);
    b.run_until(|b| b.sent.len() == 8, 20_000);
    assert_eq!((b.sent[7].psn, b.sent[7].resync), (4, false));
    // Going back after a final NACK counts in stat_retransmissions (one per go-back).
    assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 2);
}

/// Multi-host scenarios: after a final NACK for p (RDMA_DISABLED while the peer
/// rejoins) the responder's answer slot held the NACK, so p+1.. were dropped there
/// without effect. The requester completes p with the syndrome and resends from p+1 at
/// once, not after a RETRY_TIMEOUT; that is not counted against the retry limit.
#[test]
fn a_final_nack_resends_what_followed_at_once() {
    for (seed, knobs) in [(31, SMOOTH), (32, ROUGH)] {
        let mut b = Bench::new(1, seed, knobs);
        b.set_cfg(0x42, 4096, 3);
        b.setup_qp(0, ring(0), 4, 0x4, 0x10);
        let wqes: Vec<Wqe> = (0..4)
            .map(|i| Wqe {
                opcode: WqeOpcode::RdmaWrite as u8,
                length: 16,
                wr_id: i,
                local_addr: 0x0070_0000 + 0x1000 * i as u32,
                remote_vaddr: 0x9000,
                ..Default::default()
            })
            .collect();
        b.post(0, &wqes);
        b.run_until(|b| b.sent.len() == 4, 20_000);
        let first = b.sent.clone();
        b.push_ack(AckEvent::nack(0, 0x10, Syndrome::RdmaDisabled));
        b.run_until(|b| b.sent.len() == 7, 1000);
        assert_eq!(&b.sent[4..], &first[1..], "0x11..0x13 again, at once");
        assert!(b.sent_cycle[6] - b.sent_cycle[3] < 600);
        b.push_ack(AckEvent::ack(0, 0x13));
        b.settle_down();
        assert_eq!(
            b.cpl_list(0),
            [
                (0x10, Syndrome::RdmaDisabled as u8),
                (0x11, SUCCESS),
                (0x12, SUCCESS),
                (0x13, SUCCESS),
            ]
        );
        assert_eq!(b.read_csr(0, QP_STATUS) >> 52 & 15, 0, "no retry counted");
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 1);
        // A final NACK for the last PSN sent goes back nowhere.
        b.post(0, &[send(8, 9)]);
        b.run_until(|b| b.sent.len() == 8, 20_000);
        b.push_ack(AckEvent::nack(0, 0x14, Syndrome::RemoteAccessError));
        b.settle_down();
        assert_eq!(b.sent.len(), 8);
        assert_eq!(b.cpl_list(0)[4], (0x14, Syndrome::RemoteAccessError as u8));
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 1);
    }
}

/// A final NACK up to SEND_WINDOW before `sq_una` answers a PSN already completed (a
/// refusal that a later answer's AETH reports again, docs/nic-architecture.md,
/// "Refused PSNs"): stale, nothing is resent or completed. Further back it is foreign
/// (an answer to a request from before a send-side reset) and goes back to `sq_una`.
#[test]
fn a_final_nack_just_before_sq_una_is_stale() {
    let mut b = Bench::new(1, 34, SMOOTH);
    b.set_cfg(0x42, 4096, 3);
    b.setup_qp(0, ring(0), 4, 0x4, 0x10);
    b.post(0, &[send(8, 0), send(8, 1), send(8, 2)]);
    b.run_until(|b| b.sent.len() == 3, 20_000);
    b.push_ack(AckEvent::nack(0, 0x10, Syndrome::RdmaDisabled));
    b.push_ack(AckEvent::ack(0, 0x11));
    b.settle_down();
    let sent = b.sent.len();
    assert_eq!(b.cpl_list(0).len(), 2);
    // sq_una = 0x12: the refusal of 0x10 reported again, and one 8 before sq_una.
    b.push_ack(AckEvent::nack(0, 0x10, Syndrome::RdmaDisabled));
    b.push_ack(AckEvent::nack(0, 0x0a, Syndrome::RemoteAccessError));
    b.settle_down();
    assert_eq!(b.sent.len(), sent, "a stale final NACK made the QP go back");
    assert_eq!(b.cpl_list(0).len(), 2);
    assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 1);
    // Nine before sq_una: foreign, sq_una (0x12) is resent at once.
    b.push_ack(AckEvent::nack(0, 0x09, Syndrome::RemoteAccessError));
    b.run_until(|b| b.sent.len() == sent + 1, 1000);
    assert_eq!(b.sent[sent].psn, 0x12);
    assert_eq!(b.cpl_list(0).len(), 2);
}

/// Multi-host scenarios: a driver posting more often than RETRY_TIMEOUT kept the timer
/// from firing while the oldest message was lost. The timer measures the wait of
/// `sq_una` (since its last transmission or the last acknowledgement progress), not
/// the time since the QP last transmitted anything.
#[test]
fn later_messages_do_not_hold_the_timer_of_a_lost_oldest_one() {
    let mut b = Bench::new(1, 33, SMOOTH);
    b.set_cfg(0x42, 600, 3);
    b.setup_qp(0, ring(0), 4, 0x4, 0x700);
    // One new message every 200 clocks; no answers at all.
    for i in 0..6 {
        b.post(0, &[send(8, i)]);
        b.run_until(|b| b.sent.len() > i as usize, 20_000);
        b.run(200);
    }
    let resend = b.sent.iter().skip(1).position(|m| m.psn == 0x700).unwrap() + 1;
    let wait = b.sent_cycle[resend] - b.sent_cycle[0];
    assert!(
        (600..700).contains(&wait),
        "sq_una resent {wait} clocks after its transmission"
    );
    assert!(b.sent[resend].resync, "still the QP's RESYNC message");
}

/// A retryable NACK whose PSN lies more than SEND_WINDOW from `sq_una` (here: the
/// responder still expects its old sequence because the RESYNC message was lost) goes
/// back to `sq_una` at once, with RESYNC, as a retry event (RETRY_EXCEEDED beyond the
/// limit). Up to `sq_una + SEND_WINDOW` it is stale (`window_limit_and_stale_events`).
#[test]
fn a_foreign_sequence_error_goes_back_to_sq_una() {
    for (seed, knobs) in [(34, SMOOTH), (35, ROUGH)] {
        let mut b = Bench::new(1, seed, knobs);
        b.set_cfg(0x42, 0, 1);
        b.setup_qp(0, ring(0), 4, 0x4, 0x500);
        b.post(0, &[send(8, 1), send(8, 2), send(8, 3)]);
        b.run_until(|b| b.sent.len() == 3, 20_000);
        b.push_ack(AckEvent::nack(0, 0x123456, Syndrome::SequenceError));
        b.run_until(|b| b.sent.len() == 6, 2000);
        let resent: Vec<(u32, bool)> = b.sent[3..].iter().map(|m| (m.psn, m.resync)).collect();
        assert_eq!(resent, [(0x500, true), (0x501, false), (0x502, false)]);
        assert_eq!(b.read_csr(0, QP_STATUS) >> 52 & 15, 1, "a retry event");
        // Before sq_una (the old expected PSN just below): the same; over the limit.
        b.push_ack(AckEvent::nack(0, 0x4ff, Syndrome::CrcOrMalformed));
        b.run_until(|b| b.sent.len() == 8, 2000);
        b.settle_down();
        assert_eq!(b.cpl_list(0), [(0x500, RETRY_EXCEEDED)]);
        let resent: Vec<(u32, bool)> = b.sent[6..].iter().map(|m| (m.psn, m.resync)).collect();
        assert_eq!(resent, [(0x501, true), (0x502, false)]);
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 2);
    }
}

/// The multi-host scoreboard's bug, requester side: an answer for PSN p that carries
/// RESYNC (the responder restarted its PSN sequence at p) completes the WQEs before p
/// with RESPONDER_RESTARTED, never with success, then p as usual: a NACK with its
/// syndrome, an ACK with success, a retryable NACK goes back to p. RESYNC on an answer
/// for `sq_una` itself changes nothing. The QP's next message carries no RESYNC.
#[test]
fn a_resynced_answer_completes_the_earlier_wqes_with_responder_restarted() {
    for (seed, knobs) in [(21, SMOOTH), (22, ROUGH)] {
        let mut b = Bench::new(1, seed, knobs);
        b.setup_qp(0, ring(0), 4, 0x4, 0xcce830);
        b.post(0, &(1..=8).map(|i| send(8, i)).collect::<Vec<_>>());
        b.run_until(|b| b.sent.len() == 8, 20_000);
        b.push_ack(AckEvent::ack(0, 0xcce832));
        // Host 1 rebooted: 0xcce833 was dropped there, 0xcce834 adopted and refused.
        b.push_ack(AckEvent::nack(0, 0xcce834, Syndrome::RdmaDisabled).resynced());
        b.run_until(|b| b.sent.len() == 11, 20_000);
        b.settle_down();
        let disabled = Syndrome::RdmaDisabled as u8;
        assert_eq!(
            b.cpl_list(0),
            [
                (0xcce830, SUCCESS),
                (0xcce831, SUCCESS),
                (0xcce832, SUCCESS),
                (0xcce833, RESPONDER_RESTARTED),
                (0xcce834, disabled),
            ]
        );
        // What followed the refused PSN is resent (without RESYNC).
        let resent: Vec<(u32, bool)> = b.sent[8..].iter().map(|m| (m.psn, m.resync)).collect();
        assert_eq!(
            resent,
            [(0xcce835, false), (0xcce836, false), (0xcce837, false)]
        );
        let n0 = b.sent.len();
        b.push_ack(AckEvent::ack(0, 0xcce836).resynced());
        b.push_ack(AckEvent::ack(0, 0xcce837).resynced());
        b.settle_down();
        assert_eq!(
            &b.cpl_list(0)[5..],
            [
                (0xcce835, RESPONDER_RESTARTED),
                (0xcce836, SUCCESS),
                (0xcce837, SUCCESS),
            ]
        );
        // A retryable NACK with RESYNC: the run before it, then go-back-N from its PSN.
        b.post(0, &(9..=12).map(|i| send(8, i)).collect::<Vec<_>>());
        b.run_until(|b| b.sent.len() == n0 + 4, 20_000);
        assert!(
            b.sent[8..].iter().all(|m| !m.resync),
            "no RESYNC after a restarted run"
        );
        b.push_ack(AckEvent::nack(0, 0xcce83a, Syndrome::SequenceError).resynced());
        b.run_until(|b| b.sent.len() == n0 + 6, 20_000);
        assert_eq!(
            (b.sent[n0 + 4].psn, b.sent[n0 + 5].psn),
            (0xcce83a, 0xcce83b)
        );
        b.push_ack(AckEvent::ack(0, 0xcce83b));
        b.settle_down();
        assert_eq!(
            &b.cpl_list(0)[8..],
            [
                (0xcce838, RESPONDER_RESTARTED),
                (0xcce839, RESPONDER_RESTARTED),
                (0xcce83a, SUCCESS),
                (0xcce83b, SUCCESS),
            ]
        );
        assert_eq!(b.uut.stat_retransmissions.val().to_u32(), 2);
    }
}

/// QP_CTRL reset: all pointers at the start PSN, RESYNC on the first message (and its
/// retransmissions), old events stale.
#[test]
fn qp_reset_with_start_psn_and_resync() {
    let mut b = Bench::new(2, 10, ROUGH);
    b.setup_qp(0, ring(0), 4, 0x5, 0xFF_FFFE);
    for reg in [SQ_PI, SQ_CI, QP_STATUS] {
        assert_eq!(b.read_csr(0, reg), 0xFF_FFFE);
    }
    assert_eq!(b.read_csr(0, QP_CTRL), 1);
    b.post(0, &[send(8, 1), send(8, 2), send(8, 3), send(8, 4)]);
    b.run_until(|b| b.sent.len() == 4, 20_000);
    assert_eq!(b.psns(0), [0xFF_FFFE, 0xFF_FFFF, 0, 1]);
    let resync: Vec<bool> = b.sent.iter().map(|m| m.resync).collect();
    assert_eq!(resync, [true, false, false, false]);
    b.push_ack(AckEvent::ack(0, 0xFF_FFFF));
    b.settle_down();
    assert_eq!(b.cpl_list(0), [(0xFF_FFFE, SUCCESS), (0xFF_FFFF, SUCCESS)]);
    // Reset while 0 and 1 are outstanding.
    b.setup_qp(0, ring(0), 4, 0x5, 0x12_3456);
    b.flush_csr();
    b.push_ack(AckEvent::ack(0, 1));
    b.settle_down();
    assert_eq!(b.cpls.len(), 2, "an event from before the reset is stale");
    for reg in [SQ_PI, SQ_CI, QP_STATUS] {
        assert_eq!(b.read_csr(0, reg), 0x12_3456);
    }
    b.post(0, &[send(8, 5), send(8, 6)]);
    b.run_until(|b| b.sent.len() == 6, 20_000);
    b.push_ack(AckEvent::nack(0, 0x12_3456, Syndrome::SequenceError));
    b.run_until(|b| b.sent.len() == 8, 20_000);
    let tail: Vec<(u32, bool)> = b.sent[4..].iter().map(|m| (m.psn, m.resync)).collect();
    assert_eq!(
        tail,
        [
            (0x12_3456, true),
            (0x12_3457, false),
            (0x12_3456, true),
            (0x12_3457, false)
        ]
    );
    b.push_ack(AckEvent::ack(0, 0x12_3456));
    b.settle_down();
    b.post(0, &[send(8, 7)]);
    b.push_ack(AckEvent::ack(0, 0x12_3457));
    b.run_until(|b| b.sent.len() == 9, 20_000);
    assert!(
        !b.sent[8].resync,
        "RESYNC clears once the first message is acknowledged"
    );
    b.push_ack(AckEvent::ack(0, 0x12_3458));
    b.settle_down();
    assert_eq!(b.cpls.len(), 5);
}

/// A final PORT_DOWN NACK comes from the fabric: the responder never saw the message,
/// which may be the QP's RESYNC message, so the message resent after it carries RESYNC
/// again. A final NACK from the responder itself (it saw the message and resynced on
/// it) clears the resync as an ACK does. Without the rule, a PORT_DOWN that took the
/// RESYNC message left the peer's responder in its old PSN sequence, dropping every
/// later request as a far duplicate (`nic soak`, seed 11889).
#[test]
fn a_port_down_nack_keeps_the_resync_pending() {
    for (syndrome, resync_after) in [
        (Syndrome::PortDown, true),
        (Syndrome::RemoteAccessError, false),
    ] {
        let mut b = Bench::new(2, 10, SMOOTH);
        b.setup_qp(0, ring(0), 4, 0x5, 0x40);
        b.post(0, &[send(8, 1), send(8, 2)]);
        b.run_until(|b| b.sent.len() == 2, 20_000);
        let first: Vec<(u32, bool)> = b.sent.iter().map(|m| (m.psn, m.resync)).collect();
        assert_eq!(first, [(0x40, true), (0x41, false)]);
        b.push_ack(AckEvent::nack(0, 0x40, syndrome));
        b.run_until(|b| b.sent.len() == 3, 20_000);
        assert_eq!(
            (b.sent[2].psn, b.sent[2].resync),
            (0x41, resync_after),
            "the message resent after a final {syndrome:?} NACK for the RESYNC message"
        );
        b.push_ack(AckEvent::ack(0, 0x41));
        b.settle_down();
        assert_eq!(b.cpl_list(0), [(0x40, syndrome as u8), (0x41, SUCCESS)]);
    }
}

/// A QP reset while a WQE is being fetched drops what was fetched (the ring slot now
/// holds another WQE); a reset during a run of completions ends the run after the
/// completion in progress.
#[test]
fn reset_during_fetch_and_during_completions() {
    let knobs = Knobs {
        latency: (40, 40),
        ..SMOOTH
    };
    let mut b = Bench::new(2, 15, knobs);
    b.setup_qp(0, ring(0), 4, 0x9, 0x10);
    b.post(0, &[send(8, 1)]);
    // The WQE fetch is taken by the read server (40 clocks before its words come).
    b.run_until(|b| b.txrd_taken == 1, 1000);
    b.setup_qp(0, ring(0), 4, 0x9, 0x30); // same ring slot as 0x10
    b.post(0, &[send(16, 2)]);
    b.run_until(|b| b.sent.len() == 1, 2000);
    let m = &b.sent[0];
    assert_eq!((m.psn, m.resync, m.length), (0x30, true, 16));
    b.post(0, &[send(8, 3), send(8, 4), send(8, 5), send(8, 6)]);
    b.run_until(|b| b.sent.len() == 5, 5000);
    b.push_ack(AckEvent::ack(0, 0x34));
    b.run_until(|b| b.cpls.len() == 2, 2000);
    b.setup_qp(0, ring(0), 4, 0x9, 0x50);
    b.settle_down();
    // The ring registers before the reset alternate with the run's table updates
    // (a CSR access yields to a waiting machine after another one): the reset lands
    // during 0x32's completion and the run ends with 0x32.
    assert_eq!(
        b.cpl_list(0),
        [(0x30, SUCCESS), (0x31, SUCCESS), (0x32, SUCCESS)]
    );
    assert_eq!(b.read_csr(0, SQ_CI), 0x50);
    assert_eq!(b.sent.len(), 5);
}

/// A DELAY of N cycles holds its QP: the QP's next message leaves at least N clocks
/// after the DELAY could start (the acknowledgement that completes the WQE before it),
/// while another QP's messages keep going; the DELAY and a BIND RKEY complete with
/// success, in order, and send nothing. A DELAY with bits above its 24-bit count
/// completes with LOCAL_LENGTH_ERROR and holds nothing.
#[test]
fn delay_holds_its_queue_pair_only() {
    for (n, seed) in [(300u32, 21u64), (40, 22)] {
        let mut b = Bench::new(2, seed, SMOOTH);
        b.setup_qp(0, ring(0), 3, 0x6, 0x40);
        b.setup_qp(1, ring(1), 3, 0x7, 0x10);
        let delay = Wqe {
            wr_id: 2,
            ..Wqe::delay(n).unwrap()
        };
        let bind = Wqe {
            wr_id: 3,
            ..Wqe::bind(0x0000_0105, 0x1000, 0x2000, 1 << 20, 0b010)
        };
        b.post(0, &[send(8, 1), delay, bind, send(8, 4)]);
        b.run_until(|b| !b.sent.is_empty(), 2000);
        assert_eq!((b.sent[0].src_qp, b.sent[0].psn), (0, 0x40));
        b.post(1, &(0..6).map(|i| send(16, 10 + i)).collect::<Vec<_>>());
        let start = b.cycle;
        b.push_ack(AckEvent::ack(0, 0x40));
        b.run_until(
            |b| b.sent.iter().any(|m| m.src_qp == 0 && m.psn == 0x43),
            4000,
        );
        let at = b
            .sent
            .iter()
            .position(|m| m.src_qp == 0 && m.psn == 0x43)
            .unwrap();
        let waited = b.sent_cycle[at] - start;
        assert!(waited >= n as u64, "QP 0 waited {waited} clocks, DELAY {n}");
        assert!(
            waited <= n as u64 + 120,
            "QP 0 waited {waited} clocks, DELAY {n}"
        );
        let others = b.sent[..at].iter().filter(|m| m.src_qp == 1).count();
        if n >= 300 {
            assert_eq!(others, 6, "QP 1 sent while QP 0 was held");
        } else {
            assert!(others >= 1, "QP 1 sent while QP 0 was held");
        }
        assert_eq!(
            b.cpl_list(0),
            [(0x40, SUCCESS), (0x41, SUCCESS), (0x42, SUCCESS)]
        );
        assert_eq!(
            b.sent[at].resync, true,
            "the responder never saw 0x41, 0x42"
        );
    }
    let mut b = Bench::new(1, 23, SMOOTH);
    b.setup_qp(0, ring(0), 3, 0x6, 0x40);
    let too_long = Wqe {
        remote_vaddr: 1 << 24,
        ..Wqe::delay(0).unwrap()
    };
    b.post(0, &[too_long, send(8, 2)]);
    b.run_until(|b| !b.sent.is_empty(), 2000);
    assert_eq!(
        b.cpl_list(0),
        [(0x40, CompletionStatus::LOCAL_LENGTH_ERROR)]
    );
}

/// An inline SEND streams its payload from the WQE (no payload read); a NOP sends
/// nothing and completes with success in order once the queue has drained, and the
/// message after it carries RESYNC (the responder never saw its PSN).
#[test]
fn inline_send_and_nop() {
    let mut b = Bench::new(1, 12, SMOOTH);
    b.setup_qp(0, ring(0), 3, 0x6, 0x40);
    let message: Vec<u8> = (1..=27).collect();
    let inline = Wqe {
        wr_id: 1,
        local_addr: 0x0012_3403, // ignored: nothing is read there
        ..Wqe::send_inline(&message, Some(0x4354_524C)).unwrap()
    };
    let nop = Wqe {
        opcode: NOP_OPCODE,
        wr_id: 2,
        ..Wqe::default()
    };
    b.post(0, &[inline, nop, send(8, 3)]);
    b.run_until(|b| !b.sent.is_empty(), 2000);
    let m = &b.sent[0];
    assert_eq!((m.psn, m.opcode, m.length), (0x40, 0x01, 27));
    let bytes: Vec<u8> = m.payload.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(&bytes[..27], &message[..]);
    b.run(500);
    assert_eq!(b.sent.len(), 1, "the NOP waits for 0x40");
    b.push_ack(AckEvent::ack(0, 0x40));
    b.run_until(|b| b.sent.len() == 2, 2000);
    assert_eq!(b.cpl_list(0), [(0x40, SUCCESS), (0x41, SUCCESS)]);
    assert_eq!((b.sent[1].psn, b.sent[1].resync), (0x42, true));
}

/// Bad WQEs complete locally, in order, once the queue has drained, without a message;
/// the message after one carries RESYNC (the responder never saw its PSN).
#[test]
fn bad_wqes_complete_locally_in_order() {
    let mut b = Bench::new(1, 11, ROUGH);
    b.setup_qp(0, ring(0), 3, 0x6, 0x40);
    let bad_opcode = Wqe {
        opcode: 0x15,
        ..send(8, 2)
    };
    let misaligned = Wqe {
        local_addr: 0x0012_3403,
        ..send(8, 3)
    };
    let too_long = send(MAX_MESSAGE_LENGTH + 1, 4);
    let atomic_len = Wqe {
        opcode: WqeOpcode::AtomicFetchAdd as u8,
        length: 4,
        ..send(8, 5)
    };
    let vaddr = Wqe {
        opcode: WqeOpcode::RdmaWrite as u8,
        remote_vaddr: 0x1001,
        ..send(8, 6)
    };
    let max = send(MAX_MESSAGE_LENGTH, 8);
    b.post(
        0,
        &[
            send(8, 1),
            bad_opcode,
            send(8, 7),
            misaligned,
            too_long,
            atomic_len,
            vaddr,
            max,
        ],
    );
    b.run(2000);
    assert_eq!(
        b.psns(0),
        [0x40],
        "the bad WQE waits until 0x40 is acknowledged"
    );
    assert!(b.cpls.is_empty());
    b.push_ack(AckEvent::ack(0, 0x40));
    b.run_until(|b| b.sent.len() == 2, 20_000);
    assert_eq!(
        b.cpl_list(0),
        [(0x40, SUCCESS), (0x41, CompletionStatus::BAD_OPCODE)]
    );
    assert_eq!((b.sent[1].psn, b.sent[1].resync), (0x42, true));
    b.push_ack(AckEvent::ack(0, 0x42));
    b.run_until(|b| b.sent.len() == 3, 40_000);
    assert_eq!(
        (b.sent[2].psn, b.sent[2].resync, b.sent[2].length),
        (0x47, true, 65536)
    );
    b.push_ack(AckEvent::ack(0, 0x47));
    b.settle_down();
    assert_eq!(
        b.cpl_list(0),
        [
            (0x40, SUCCESS),
            (0x41, CompletionStatus::BAD_OPCODE),
            (0x42, SUCCESS),
            (0x43, CompletionStatus::LOCAL_ADDRESS_ERROR),
            (0x44, CompletionStatus::LOCAL_LENGTH_ERROR),
            (0x45, CompletionStatus::LOCAL_LENGTH_ERROR),
            (0x46, CompletionStatus::LOCAL_ADDRESS_ERROR),
            (0x47, SUCCESS),
        ]
    );
    assert_eq!(b.cpls[1].wr_id, 2);
}

/// The per-QP RAMs hold `queue_pairs` rounded up to a power of two words (4 for 3 queue
/// pairs): QP 5 would select QP 1's word. Its accesses touch nothing: reads answer 0 and
/// writes are ignored, before and after QP 1 is programmed.
#[test]
fn qps_beyond_queue_pairs_do_not_alias_real_ones() {
    let mut b = Bench::new(3, 13, ROUGH);
    b.csr(true, 1, SQ_BASE, 0x4000);
    b.csr(true, 1, SQ_PI, 7);
    for qp in [5, 9, 13, 63] {
        b.csr(true, qp, SQ_BASE, 0x1000);
        b.csr(true, qp, QP_REMOTE, 0x5555_5555);
        b.csr(true, qp, QP_CTRL, 0x0000_0301);
        assert_eq!(b.read_csr(qp, SQ_BASE), 0, "QP {qp}");
        assert_eq!(b.read_csr(qp, SQ_PI), 0, "QP {qp}");
    }
    assert_eq!(b.read_csr(1, SQ_BASE), 0x4000);
    assert_eq!(b.read_csr(1, SQ_PI), 7);
    assert_eq!(b.read_csr(1, QP_REMOTE), 0);
    assert_eq!(b.read_csr(1, QP_CTRL), 0);
}

/// CSR side port: read back, field widths, read-only and unmapped registers, QPs
/// beyond `queue_pairs`.
#[test]
fn csr_registers() {
    let mut b = Bench::new(3, 12, ROUGH);
    b.csr(true, 1, SQ_BASE, 0xFFFF_FFFF_DEAD_BEC0);
    b.csr(true, 1, SQ_SIZE_LOG2, 0x3F);
    b.csr(true, 1, SQ_PI, 0x1234_5678);
    b.csr(true, 1, QP_REMOTE, 0xAAAA_BBBB);
    b.csr(true, 1, SQ_CI, 0x77);
    b.csr(true, 1, QP_STATUS, 0x77);
    b.csr(true, 3, SQ_BASE, 0x1000);
    assert_eq!(b.read_csr(1, SQ_BASE), 0xDEAD_BEC0);
    assert_eq!(b.read_csr(1, SQ_SIZE_LOG2), 0x1F);
    assert_eq!(b.read_csr(1, SQ_PI), 0x34_5678);
    assert_eq!(b.read_csr(1, QP_REMOTE), 0xAAAA_BBBB);
    assert_eq!(b.read_csr(1, SQ_CI), 0);
    assert_eq!(b.read_csr(1, QP_STATUS), 0);
    assert_eq!(b.read_csr(1, QP_CTRL), 0);
    assert_eq!(b.read_csr(3, SQ_BASE), 0, "QP beyond queue_pairs");
    for reg in RQ_BASE..=RQ_CI {
        assert_eq!(b.read_csr(1, reg), 0);
    }
    for reg in 11..16 {
        assert_eq!(b.read_csr(1, reg), 0);
    }
    b.csr(true, 2, QP_CTRL, 1);
    assert_eq!(b.read_csr(2, QP_CTRL), 1);
    b.csr(true, 2, QP_CTRL, 0x1234_5602);
    assert_eq!(
        b.read_csr(2, QP_CTRL),
        0,
        "reset reads as 0, enable from the same write"
    );
    assert_eq!(b.read_csr(2, SQ_CI), 0x12_3456);
    assert_eq!(b.read_csr(2, SQ_PI), 0x12_3456);
    // Back-to-back accesses are answered in order.
    for reg in [SQ_BASE, SQ_SIZE_LOG2, SQ_PI, QP_REMOTE] {
        b.csr(false, 1, reg, 0);
    }
    let before = b.csr_reads.len();
    b.run_until(|b| b.csr_reads.len() == before + 4, 1000);
    assert_eq!(
        &b.csr_reads[before..],
        [0xDEAD_BEC0, 0x1F, 0x34_5678, 0xAAAA_BBBB]
    );
}

/// The payload of a long RDMA WRITE streams at one word per clock; messages follow each
/// other with a short gap (claim, WQE fetch, commit).
#[test]
fn payload_streams_one_word_per_clock() {
    let mut b = Bench::new(1, 13, SMOOTH);
    b.setup_qp(0, ring(0), 2, 0x7, 0);
    let big = |len: u32, i: u64| Wqe {
        opcode: WqeOpcode::RdmaWrite as u8,
        length: len,
        wr_id: i,
        local_addr: 0x0040_0000,
        remote_vaddr: 0x1000,
        ..Default::default()
    };
    b.post(0, &[big(65536, 1), big(65533, 2), big(8, 3)]);
    b.run_until(|b| b.sent.len() == 3, 40_000);
    let beats = &b.payload_cycles;
    assert_eq!(beats.len(), 8192 + 8192 + 1);
    assert_eq!(
        beats[8191] - beats[0],
        8191,
        "first message without bubbles"
    );
    assert_eq!(
        beats[16383] - beats[8192],
        8191,
        "second message without bubbles"
    );
    let gap = beats[8192] - beats[8191];
    let gap2 = beats[16384] - beats[16383];
    assert!(
        gap <= 30 && gap2 <= 30,
        "clocks between messages' payloads: {gap}, {gap2}"
    );
}

/// The figures in the doc comment: doorbell to message, clocks per short message,
/// acknowledgement to completion (DMA latency 3 clocks, no gaps, no back-pressure).
#[test]
fn latency_figures() {
    let knobs = Knobs {
        latency: (3, 3),
        ..SMOOTH
    };
    let mut b = Bench::new(1, 14, knobs);
    b.setup_qp(0, ring(0), 4, 0x8, 0);
    b.post(0, &[send(8, 1)]);
    b.flush_csr();
    let doorbell = b.cycle - 1; // the doorbell's table write
    b.run_until(|b| b.sent.len() == 1, 1000);
    let to_message = b.sent_cycle[0] - doorbell;
    let acked = b.cycle;
    b.push_ack(AckEvent::ack(0, 0));
    b.run_until(|b| b.cpls.len() == 1, 1000);
    let to_completion = b.cycle - acked;
    // Eight back-to-back one-word SENDs.
    b.post(0, &(2..10).map(|i| send(8, i)).collect::<Vec<_>>());
    b.run_until(|b| b.sent.len() == 9, 5000);
    let per_message = (b.sent_cycle[8] - b.sent_cycle[1]) / 7;
    eprintln!("doorbell to message {to_message}, per message {per_message}, ack to completion {to_completion}");
    assert!(to_message <= 20 && per_message <= 22 && to_completion <= 12);
}

#[test]
fn synthesises() {
    let mut uut = SendQueueEngine::new(4);
    uut.connect_all();
    yosys_validate("nic_rtl_send_queue_engine", &generate_verilog(&uut))
        .expect("yosys accepts SendQueueEngine");
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64, got 0")]
fn rejects_zero_queue_pairs() {
    SendQueueEngine::new(0);
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64, got 65")]
fn rejects_too_many_queue_pairs() {
    SendQueueEngine::new(65);
}

// ------------------------------------------------------------------------------------
// Random closed loop: a driver posting random WQEs (including bad ones) on every QP, a
// responder losing, refusing and corrupting requests and losing acknowledgements, the
// scoreboard judging every handshake, every handshake with idle gaps and back-pressure.
// ------------------------------------------------------------------------------------

/// One closed-loop run.
#[derive(Clone, Copy)]
struct LoopCfg {
    seed: u64,
    queue_pairs: usize,
    knobs: Knobs,
    per_qp: usize,
    max_len: u32,
    /// Clocks between a request's arrival and its answer.
    delay: (u64, u64),
    timeout: u32,
    /// Only SEND and RDMA WRITE (no READ or atomic draining the queue), rings of at
    /// least 8 WQEs: the send window can fill up.
    streaming_only: bool,
    /// Many corrupted requests and lost answers: READ and atomic responses are lost
    /// and the resends NACKed past them (implied NAKs).
    lossy: bool,
}

struct LoopStats {
    max_outstanding: u32,
    cycles: u64,
    messages: usize,
    completions: usize,
    /// Go-backs on the wire, and those only the retry timer can explain.
    go_backs: u32,
    timeouts: u32,
    statuses: HashMap<u8, usize>,
}

fn closed_loop(cfg: LoopCfg) -> LoopStats {
    let LoopCfg {
        seed,
        queue_pairs,
        knobs,
        per_qp,
        max_len,
        ..
    } = cfg;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5E9D);
    let mut b = Bench::new(queue_pairs, seed, knobs);
    b.set_cfg(0x1234, cfg.timeout, 7);
    let mut resp = Responder::new(queue_pairs);
    resp.delay = cfg.delay;
    if cfg.lossy {
        resp.p_corrupt = 0.2;
        resp.p_ack_loss = 0.3;
    }
    let mut drv: Vec<DriverQp> = (0..queue_pairs)
        .map(|q| DriverQp {
            start: rng.gen::<u32>() & PSN_MASK,
            size: rng.gen_range(if cfg.streaming_only { 3 } else { 1 }..=5),
            base: 0x0001_0000 + 0x1000 * q as u32,
            wqes: (0..per_qp)
                .map(|_| loop {
                    let w = random_wqe(
                        &mut rng,
                        WqeLengths {
                            max: max_len,
                            long: 0,
                        },
                    );
                    if !(cfg.streaming_only && needs_response(&w)) {
                        break w;
                    }
                })
                .collect(),
            posted: 0,
            completed: 0,
        })
        .collect();
    for (q, d) in drv.iter().enumerate() {
        b.setup_qp(q, d.base, d.size, 0x0001_0000 * q as u32 + 0x77, d.start);
    }
    let mut statuses = HashMap::new();
    let mut last_ack = 0;
    let budget = 400_000;
    while drv.iter().any(|d| d.completed < d.wqes.len()) {
        assert!(b.cycle < budget, "closed loop did not finish (seed {seed})");
        // Driver: post a few WQEs where the ring has room, ring the doorbell.
        if rng.gen_bool(0.05) {
            let q = rng.gen_range(0..queue_pairs);
            let d = &mut drv[q];
            let room = (1usize << d.size) - (d.posted - d.completed);
            let k = rng.gen_range(1..=9).min(room).min(d.wqes.len() - d.posted);
            if k > 0 {
                for _ in 0..k {
                    let index = psn_add(d.start, d.posted as u32);
                    let addr = d.base + ((index & ((1 << d.size) - 1)) << 6);
                    b.mem.write_wqe(addr, &d.wqes[d.posted]);
                    d.posted += 1;
                }
                let pi = psn_add(d.start, d.posted as u32);
                b.csr(true, q, SQ_PI, pi as u64);
            }
        }
        // Occasional register reads (judged by the scoreboard).
        if rng.gen_bool(0.003) {
            let reg = [
                SQ_BASE, SQ_PI, SQ_CI, QP_REMOTE, QP_CTRL, QP_STATUS, RQ_BASE,
            ][rng.gen_range(0..7)];
            b.csr(false, rng.gen_range(0..64), reg, 0);
        }
        // Responder.
        while let Some(m) = b.new_msgs.pop_front() {
            assert!((m.src_qp as usize) < queue_pairs);
            for ev in resp.receive(&m, &mut rng) {
                let t = (b.cycle + rng.gen_range(resp.delay.0..=resp.delay.1)).max(last_ack);
                last_ack = t;
                b.acks.push_back((t, ev));
            }
        }
        // Completions: in order, each once, status consistent with the responder.
        while let Some(c) = b.new_cpls.pop_front() {
            let d = &mut drv[c.qp];
            let index = psn_add(d.start, d.completed as u32);
            assert_eq!(c.wqe_index, index, "QP {} completion order", c.qp);
            let w = &d.wqes[d.completed];
            assert_eq!(
                (c.opcode, c.byte_count, c.wr_id),
                (w.opcode, w.length, w.wr_id)
            );
            let local = wqe_status(w);
            let fate = resp.qps[c.qp].fates.get(&index);
            if local != SUCCESS || is_local_op(w.opcode) {
                assert_eq!(c.status, local, "local status");
                assert_eq!(fate, None, "a local completion's PSN is never sent");
            } else if c.status == RESPONDER_RESTARTED {
                // The responder adopted a later PSN: it never saw this one.
                assert_eq!(fate, None, "QP {} PSN {index:#x} restarted", c.qp);
            } else if c.status == SUCCESS {
                assert_eq!(
                    fate,
                    Some(&Fate::Applied),
                    "QP {} PSN {index:#x} completed but not applied",
                    c.qp
                );
                // A READ or atomic completes with its response only.
                assert!(
                    !needs_response(w) || resp.qps[c.qp].responded.contains(&index),
                    "QP {} PSN {index:#x}: READ or atomic completed without its response",
                    c.qp
                );
            } else if c.status != RETRY_EXCEEDED {
                assert_eq!(
                    fate,
                    Some(&Fate::Refused(c.status)),
                    "QP {} PSN {index:#x}",
                    c.qp
                );
            }
            *statuses.entry(c.status).or_insert(0) += 1;
            d.completed += 1;
        }
        b.step();
    }
    b.settle_down();
    assert!(b.txrd.bursts.is_empty() && b.cplrd.bursts.is_empty());
    for (q, d) in drv.iter().enumerate() {
        let una = psn_add(d.start, d.wqes.len() as u32);
        assert_eq!(b.read_csr(q, SQ_CI), una as u64);
        assert_eq!(b.read_csr(q, QP_STATUS) & 0xFF_FFFF, una as u64);
    }
    LoopStats {
        max_outstanding: b.score.max_outstanding(),
        cycles: b.cycle,
        messages: b.sent.len(),
        completions: b.cpls.len(),
        go_backs: b.score.go_backs,
        timeouts: b.score.timeouts,
        statuses,
    }
}

#[test]
fn matches_model_in_closed_loop_with_gaps_and_backpressure() {
    let base = LoopCfg {
        seed: 0,
        queue_pairs: 4,
        knobs: ROUGH,
        per_qp: 40,
        max_len: 300,
        delay: (3, 80),
        timeout: 1500,
        streaming_only: false,
        lossy: false,
    };
    let slow = Knobs {
        gaps: true,
        backpressure: false,
        latency: (1, 30),
    };
    let pressed = Knobs {
        gaps: false,
        backpressure: true,
        latency: (1, 4),
    };
    let (mut total, mut go_backs, mut timeouts) = (0, 0, 0);
    for cfg in [
        LoopCfg { seed: 0x51, ..base },
        LoopCfg {
            seed: 0x52,
            knobs: SMOOTH,
            ..base
        },
        LoopCfg {
            seed: 0x53,
            queue_pairs: 3,
            knobs: slow,
            per_qp: 30,
            max_len: 2000,
            ..base
        },
        LoopCfg {
            seed: 0x54,
            queue_pairs: 2,
            knobs: pressed,
            max_len: 64,
            ..base
        },
        LoopCfg {
            seed: 0x55,
            queue_pairs: 64,
            per_qp: 3,
            max_len: 200,
            ..base
        },
        LoopCfg {
            seed: 0x56,
            queue_pairs: 1,
            per_qp: 60,
            max_len: 500,
            ..base
        },
        // Slow answers and short messages: the send window fills up.
        LoopCfg {
            seed: 0x57,
            knobs: SMOOTH,
            max_len: 16,
            delay: (300, 900),
            timeout: 4000,
            streaming_only: true,
            ..base
        },
        LoopCfg {
            seed: 0x58,
            queue_pairs: 2,
            per_qp: 60,
            max_len: 100,
            lossy: true,
            ..base
        },
    ] {
        let st = closed_loop(cfg);
        eprintln!(
            "seed {:#x}: {} QPs, {} clocks, {} messages, {} completions, {} go-backs \
             ({} by the timer only), at most {} outstanding, statuses {:?}",
            cfg.seed,
            cfg.queue_pairs,
            st.cycles,
            st.messages,
            st.completions,
            st.go_backs,
            st.timeouts,
            st.max_outstanding,
            st.statuses
        );
        assert_eq!(st.completions, cfg.queue_pairs * cfg.per_qp);
        assert!(st.messages >= st.completions * 3 / 4);
        assert!(st.max_outstanding <= SEND_WINDOW);
        if cfg.seed == 0x57 {
            assert_eq!(st.max_outstanding, SEND_WINDOW, "the window was reached");
        }
        total += st.cycles;
        go_backs += st.go_backs;
        timeouts += st.timeouts;
    }
    assert!(total > 50_000);
    // The faults made the engine go back, on NACKs and on its timer.
    assert!(
        go_backs > 20 && timeouts > 0,
        "{go_backs} go-backs, {timeouts} by the timer"
    );
}
