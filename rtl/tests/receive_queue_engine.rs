//! `ReceiveQueueEngine`'s block tests: the engine against the plain-Rust responder model
//! (`nic_model::responder`) on seeded random stimulus with back-pressure and idle gaps,
//! directed cases of the reliability rules, throughput, synthesis and parameter checks.
//! The model is driven by the same outcomes, CSR writes and host memory as the engine and
//! is compared on the engine's outputs only (writes, owed answers, acknowledgement
//! events, completions, TPT lookups, CSR reads and counters).

use nic_abi::{csr, AethRefusals, Syndrome, PSN_MASK, SEND_WINDOW};
use nic_model::cell_faults::corrupt_stream;
use nic_model::responder::*;
use nic_rtl::cell::format::{encode_message, opcode, CellOutcome, Message, ReassemblyModel};
use nic_rtl::common::{CellOutcomeHeader, OutcomeClass};
use nic_rtl::responder::receive_queue_engine::ResponderState;
use nic_rtl::sim::{settle, tick, ClockedBlock};
use nic_rtl::{NackGenerator, ReceiveQueueEngine};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use std::collections::{HashMap, VecDeque};

const NODE: u16 = 5;
const REMOTE_NODE: u16 = 9;
/// Host memory map of the tests.
const RQ_RINGS: u32 = 0x0001_0000;
const RDMA_AREA: u32 = 0x0010_0000;
const RECV_AREA: u32 = 0x0020_0000;
const RESPONSE_AREA: u32 = 0x0030_0000;

/// The TPT of the tests: key 0xEE is refused, key 0xA5 translates to a misaligned
/// address, anything else maps `vaddr` to `vaddr + (index & 0xF) * 0x1000` in the
/// low 32 bits (refused beyond 2^32).
fn test_tpt(l: &TptLookup) -> Option<u32> {
    let key = l.stag & 0xFF;
    if key == 0xEE || l.vaddr + l.length as u64 > 1 << 32 {
        return None;
    }
    let p = (l.vaddr as u32).wrapping_add((l.stag >> 8 & 0xF) * 0x1000);
    Some(if key == 0xA5 { p | 4 } else { p })
}

#[derive(Clone, Copy, Debug)]
struct CsrOp {
    write: bool,
    qp: usize,
    reg: u8,
    data: u64,
}

/// Drives a `ReceiveQueueEngine` cycle by cycle: received cells in, a host memory
/// behind the DMA ports, a TPT, CSR and expect ports, random ready on every output.
struct Bench {
    uut: ReceiveQueueEngine,
    rng: ChaCha8Rng,
    /// Random valid gaps and back-pressure on every handshake.
    pressure: bool,
    mem: HashMap<u32, u64>,
    outcomes: Vec<CellOutcome>,
    /// (outcome index, data, bytes, last)
    beats: VecDeque<(usize, u64, u8, bool)>,
    rx_presenting: bool,
    csr_ops: VecDeque<CsrOp>,
    csr_expected: VecDeque<(CsrOp, u64)>,
    csr_results: Vec<(CsrOp, u64, u64)>,
    expects: VecDeque<(usize, Expectation)>,
    reads: VecDeque<(u64, Vec<u64>)>,
    read_beats: VecDeque<(u64, bool)>,
    rd_presenting: bool,
    tpt: Option<TptFunction>,
    tpt_answers: VecDeque<(u64, bool, u32)>,
    slow_tpt: bool,
    cycle: u64,
    writes: Vec<DmaWrite>,
    write_cycles: Vec<u64>,
    owed: Vec<Owed>,
    acks: Vec<AckEvent>,
    completions: Vec<Completion>,
    lookups: Vec<TptLookup>,
    /// Clocks where a beat was presented and not taken.
    rx_stalls: u64,
}

impl Bench {
    fn new(queue_pairs: usize, tpt: Option<TptFunction>, seed: u64, pressure: bool) -> Self {
        let mut uut = ReceiveQueueEngine::new(queue_pairs, tpt.is_some());
        uut.connect_all();
        let mut b = Bench {
            uut,
            rng: ChaCha8Rng::seed_from_u64(seed),
            pressure,
            mem: HashMap::new(),
            outcomes: vec![],
            beats: VecDeque::new(),
            rx_presenting: false,
            csr_ops: VecDeque::new(),
            csr_expected: VecDeque::new(),
            csr_results: vec![],
            expects: VecDeque::new(),
            reads: VecDeque::new(),
            read_beats: VecDeque::new(),
            rd_presenting: false,
            tpt,
            tpt_answers: VecDeque::new(),
            slow_tpt: false,
            cycle: 0,
            writes: vec![],
            write_cycles: vec![],
            owed: vec![],
            acks: vec![],
            completions: vec![],
            lookups: vec![],
            rx_stalls: 0,
        };
        b.uut.cfg_node_id.next = (NODE as u64).to_bits();
        b.uut.cfg_enable_send_recv.next = true;
        b.uut.cfg_enable_rdma.next = true;
        b.uut.reset.next = true;
        b.cycle();
        b.uut.reset.next = false;
        b.quiesce(200);
        b
    }

    fn push_outcome(&mut self, o: &CellOutcome) {
        let idx = self.outcomes.len();
        self.outcomes.push(o.clone());
        if o.payload.is_empty() {
            self.beats.push_back((idx, 0, 0, true));
        } else {
            let n = o.payload.len().div_ceil(8);
            for (k, chunk) in o.payload.chunks(8).enumerate() {
                let mut b = [0u8; 8];
                b[..chunk.len()].copy_from_slice(chunk);
                self.beats
                    .push_back((idx, u64::from_le_bytes(b), chunk.len() as u8, k + 1 == n));
            }
        }
    }

    fn chance(&mut self, p: f64) -> bool {
        !self.pressure || self.rng.gen_bool(p)
    }

    fn drive_rx(&mut self) {
        if !self.rx_presenting && !self.beats.is_empty() && self.chance(0.8) {
            self.rx_presenting = true;
        }
        let u = &mut self.uut;
        u.s_rx_valid.next = self.rx_presenting;
        if let Some(&(idx, data, bytes, last)) = self.beats.front() {
            let o = &self.outcomes[idx];
            let h = &o.header;
            u.s_rx_data.next = data.to_bits();
            u.s_rx_bytes.next = (bytes as u64).to_bits();
            u.s_rx_last.next = last;
            u.s_rx_outcome.next = CellOutcomeHeader {
                status: (o.status as u64).to_bits(),
                opcode: (h.opcode as u64).to_bits(),
                flags: (h.flags as u64).to_bits(),
                cell_length: (h.cell_length as u64).to_bits(),
                dest_node: (h.dest_node as u64).to_bits(),
                src_node: (h.src_node as u64).to_bits(),
                dest_qp: (h.dest_qp as u64).to_bits(),
                src_qp: (h.src_qp as u64).to_bits(),
                cell_seq: (h.cell_seq as u64).to_bits(),
                psn: ((h.psn & PSN_MASK) as u64).to_bits(),
                msg_length: (h.message_length as u64).to_bits(),
                vaddr: o.reth.vaddr.to_bits(),
                stag: (o.reth.stag as u64).to_bits(),
                dma_length: (o.reth.dma_length as u64).to_bits(),
                offset: (o.offset as u64).to_bits(),
                immediate: (o.immediate as u64).to_bits(),
            };
            // The classes, as the `OutcomeSlice` in front registers them.
            u.s_rx_class.next = OutcomeClass::of(&u.s_rx_outcome.next);
        }
    }

    /// One clock: drive inputs, settle, record handshakes, clock edge.
    fn cycle(&mut self) {
        self.drive_rx();
        let wr_ready = self.chance(0.7);
        let owe_ready = self.chance(0.6);
        let ack_ready = self.chance(0.6);
        let cpl_ready = self.chance(0.5);
        let rq_req_ready = self.chance(0.5);
        let tpt_req_ready = self.chance(0.5);
        let csr_offer = !self.csr_ops.is_empty() && self.chance(0.7);
        let expect_offer = !self.expects.is_empty() && self.chance(0.7);
        if !self.rd_presenting && !self.read_beats.is_empty() && self.chance(0.7) {
            self.rd_presenting = true;
        }
        let read_due = self.reads.front().is_some_and(|r| r.0 <= self.cycle);
        if read_due && self.read_beats.is_empty() && !self.rd_presenting {
            let (_, words) = self.reads.pop_front().unwrap();
            let n = words.len();
            for (i, w) in words.into_iter().enumerate() {
                self.read_beats.push_back((w, i + 1 == n));
            }
        }
        let tpt_due = self.tpt_answers.front().is_some_and(|a| a.0 <= self.cycle);
        let u = &mut self.uut;
        u.m_wr_ready.next = wr_ready;
        u.m_owe_ready.next = owe_ready;
        u.m_ack_ready.next = ack_ready;
        u.m_cpl_ready.next = cpl_ready;
        u.m_rqrd_req_ready.next = rq_req_ready;
        u.m_tpt_req_ready.next = tpt_req_ready;
        u.s_csr_valid.next = csr_offer;
        if let Some(op) = self.csr_ops.front() {
            u.s_csr_write.next = op.write;
            u.s_csr_qp.next = (op.qp as u64 & 63).to_bits();
            u.s_csr_reg.next = (op.reg as u64).to_bits();
            u.s_csr_wdata.next = op.data.to_bits();
        }
        u.s_expect_valid.next = expect_offer;
        if let Some((qp, e)) = self.expects.front() {
            u.s_expect_qp.next = (*qp as u64).to_bits();
            u.s_expect_psn.next = (e.psn as u64).to_bits();
            u.s_expect_addr.next = (e.addr as u64).to_bits();
            u.s_expect_length.next = (e.length as u64).to_bits();
            u.s_expect_atomic.next = e.atomic;
        }
        u.s_rqrd_valid.next = self.rd_presenting;
        if let Some(&(w, last)) = self.read_beats.front() {
            u.s_rqrd_data.next = w.to_bits();
            u.s_rqrd_last.next = last;
        }
        u.s_tpt_resp_valid.next = tpt_due;
        if let Some(&(_, ok, paddr)) = self.tpt_answers.front() {
            u.s_tpt_resp_ok.next = ok;
            u.s_tpt_resp_paddr.next = (paddr as u64).to_bits();
        }
        settle(u);
        // Handshakes.
        if u.s_rx_valid.val() {
            if u.s_rx_ready.val() {
                self.beats.pop_front();
                self.rx_presenting = false;
            } else {
                self.rx_stalls += 1;
            }
        }
        if u.m_wr_valid.val() && u.m_wr_ready.val() {
            let w = DmaWrite::new(
                u.m_wr_addr.val().to_u32(),
                u.m_wr_data.val().to_u64(),
                u.m_wr_strobe.val().to_u64() as u8,
            );
            assert_eq!(w.addr % 8, 0, "misaligned write {w:?}");
            assert_ne!(w.strobe, 0, "write without strobes");
            let old = *self.mem.get(&w.addr).unwrap_or(&0);
            let mask = strobe_mask(w.strobe);
            self.mem.insert(w.addr, (old & !mask) | w.data);
            self.writes.push(w);
            self.write_cycles.push(self.cycle);
        }
        if u.m_owe_valid.val() && u.m_owe_ready.val() {
            self.owed.push(
                Owed {
                    qp: u.m_owe.val().qp.to_u64() as u8,
                    kind: u.m_owe.val().kind.to_u64() as u8,
                    psn: u.m_owe.val().psn.to_u32(),
                    syndrome: u.m_owe.val().syndrome.to_u64() as u8,
                    addr: u.m_owe.val().addr.to_u32(),
                    length: u.m_owe.val().length.to_u32(),
                    value: u.m_owe.val().value.to_u64(),
                    dest_node: u.m_owe.val().dest_node.to_u64() as u16,
                    dest_qp: u.m_owe.val().dest_qp.to_u64() as u16,
                    resync: u.m_owe.val().resync,
                    refusal: u.m_owe.val().refusal.to_u64() as u32,
                }
                .normalised(),
            );
        }
        if u.m_ack_valid.val() && u.m_ack_ready.val() {
            self.acks.push(AckEvent {
                qp: u.m_ack.val().qp.to_u64() as u8,
                psn: u.m_ack.val().psn.to_u32(),
                syndrome: u.m_ack.val().syndrome.to_u64() as u8,
                response: u.m_ack.val().response,
                resync: u.m_ack.val().resync,
            });
        }
        if u.m_cpl_valid.val() && u.m_cpl_ready.val() {
            assert!(u.m_cpl.val().is_receive);
            self.completions.push(Completion {
                opcode: u.m_cpl.val().opcode.to_u64() as u8,
                status: u.m_cpl.val().status.to_u64() as u8,
                qp: u.m_cpl.val().qp.to_u64() as u8,
                has_immediate: u.m_cpl.val().has_immediate,
                byte_count: u.m_cpl.val().byte_count.to_u32(),
                wqe_index: u.m_cpl.val().wqe_index.to_u32(),
                src_node: u.m_cpl.val().src_node.to_u64() as u16,
                src_qp: u.m_cpl.val().src_qp.to_u64() as u16,
                wr_id: u.m_cpl.val().wr_id.to_u64(),
                immediate: u.m_cpl.val().immediate.to_u32(),
            });
        }
        if u.m_rqrd_req_valid.val() && u.m_rqrd_req_ready.val() {
            let addr = u.m_rqrd_req_addr.val().to_u32();
            let words = u.m_rqrd_req_words.val().to_u64() as u32;
            assert_eq!(addr % 8, 0, "misaligned read");
            assert!(words >= 1);
            let data = (0..words)
                .map(|i| *self.mem.get(&addr.wrapping_add(8 * i)).unwrap_or(&0))
                .collect();
            let latency = if self.pressure {
                self.rng.gen_range(1..12)
            } else {
                1
            };
            self.reads.push_back((self.cycle + latency, data));
        }
        if u.s_rqrd_valid.val() && u.s_rqrd_ready.val() {
            self.read_beats.pop_front();
            self.rd_presenting = false;
        }
        if tpt_due {
            self.tpt_answers.pop_front();
        }
        if u.m_tpt_req_valid.val() && u.m_tpt_req_ready.val() {
            let l = TptLookup {
                stag: u.m_tpt_req.val().stag.to_u32(),
                vaddr: u.m_tpt_req.val().vaddr.to_u64(),
                length: u.m_tpt_req.val().length.to_u32(),
                access: u.m_tpt_req.val().access.to_u64() as u8,
                invalidate: u.m_tpt_req.val().invalidate,
                qp: u.m_tpt_req.val().qp.to_u64() as u8,
                commit: u.m_tpt_req.val().commit,
            };
            let tpt = self.tpt.expect("TPT lookup from an engine without a TPT");
            let answer = tpt(&l);
            let latency = if self.slow_tpt || (self.pressure && self.rng.gen_bool(0.05)) {
                self.rng.gen_range(100..400)
            } else if self.pressure {
                self.rng.gen_range(1..20)
            } else {
                1
            };
            self.tpt_answers.push_back((
                self.cycle + latency,
                answer.is_some(),
                answer.unwrap_or(0xDEAD_BEE8),
            ));
            self.lookups.push(l);
        }
        if u.s_csr_valid.val() && u.s_csr_ready.val() {
            let op = self.csr_ops.pop_front().unwrap();
            if !op.write {
                self.csr_expected.push_back((op, op.data));
            }
        }
        if u.m_csr_rdata_valid.val() {
            let (op, want) = self
                .csr_expected
                .pop_front()
                .expect("read data without a read");
            self.csr_results
                .push((op, u.m_csr_rdata.val().to_u64(), want));
        }
        if u.s_expect_valid.val() && u.s_expect_ready.val() {
            self.expects.pop_front();
        }
        tick(u);
        self.cycle += 1;
    }

    fn quiet(&self) -> bool {
        let u = &self.uut;
        self.beats.is_empty()
            && self.csr_ops.is_empty()
            && self.csr_expected.is_empty()
            && self.expects.is_empty()
            && self.reads.is_empty()
            && self.read_beats.is_empty()
            && self.tpt_answers.is_empty()
            && u.responder_state() == ResponderState::Idle
            && !u.m_wr_valid.val()
    }

    /// Run until everything queued has been taken and the engine is idle.
    fn quiesce(&mut self, limit: u64) {
        let start = self.cycle;
        while !self.quiet() {
            assert!(
                self.cycle - start < limit,
                "engine not idle after {limit} clocks (state {:?}, {} beats left)",
                self.uut.responder_state(),
                self.beats.len()
            );
            self.cycle();
        }
        for _ in 0..2 {
            self.cycle();
        }
    }

    fn csr_write(&mut self, model: &mut ResponderModel, qp: usize, reg: u8, data: u64) {
        model.csr_write(qp, reg, data);
        self.csr_ops.push_back(CsrOp {
            write: true,
            qp,
            reg,
            data,
        });
    }

    /// Queue a read whose expected value is the model's now.
    fn csr_read(&mut self, model: &ResponderModel, qp: usize, reg: u8) {
        self.csr_ops.push_back(CsrOp {
            write: false,
            qp,
            reg,
            data: model.csr_read(qp, reg),
        });
    }

    fn host_write(&mut self, model: &mut ResponderModel, addr: u32, data: u64) {
        self.mem.insert(addr, data);
        model.mem.insert(addr, data);
    }

    fn set_slot_busy(&mut self, model: &mut ResponderModel, busy: u64) {
        model.slot_busy = busy;
        self.uut.slot_busy.next = busy.to_bits();
    }

    fn set_enables(&mut self, model: &mut ResponderModel, send_recv: bool, rdma: bool) {
        model.enable_send_recv = send_recv;
        model.enable_rdma = rdma;
        self.uut.cfg_enable_send_recv.next = send_recv;
        self.uut.cfg_enable_rdma.next = rdma;
    }

    /// Compare everything the engine produced with the model.
    fn compare(&self, model: &ResponderModel, context: &str) {
        fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T], ctx: &str) {
            if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
                panic!(
                    "{ctx}: {what} #{i} differs: engine {:?}, model {:?} ({} vs {} in all)",
                    got.get(i),
                    want.get(i),
                    got.len(),
                    want.len()
                );
            }
        }
        let owed: Vec<Owed> = model.owed.iter().map(|o| o.normalised()).collect();
        same("write", &self.writes, &model.writes, context);
        same("owed response", &self.owed, &owed, context);
        same("ack event", &self.acks, &model.acks, context);
        same("completion", &self.completions, &model.completions, context);
        same("TPT lookup", &self.lookups, &model.lookups, context);
        for (op, got, want) in &self.csr_results {
            assert_eq!(got, want, "{context}: CSR read {op:?}");
        }
        let u = &self.uut;
        assert_eq!(
            u.stat_messages_received.val().to_u32(),
            model.messages_received,
            "{context}: stat_messages_received"
        );
        assert_eq!(
            u.stat_dropped.val().to_u32(),
            model.dropped,
            "{context}: stat_dropped"
        );
        let nacks = [
            u.stat_nack_received_0.val().to_u32(),
            u.stat_nack_received_1.val().to_u32(),
            u.stat_nack_received_2.val().to_u32(),
            u.stat_nack_received_3.val().to_u32(),
            u.stat_nack_received_4.val().to_u32(),
            u.stat_nack_received_5.val().to_u32(),
            u.stat_nack_received_6.val().to_u32(),
            u.stat_nack_received_7.val().to_u32(),
        ];
        assert_eq!(nacks, model.nack_received, "{context}: stat_nack_received");
    }
}

/// Configure QP `qp`: its receive ring, remote, enable (with a reset first).
fn setup_qp(b: &mut Bench, m: &mut ResponderModel, qp: usize, size_log2: u8) {
    b.csr_write(m, qp, REG_QP_CTRL, 3);
    b.csr_write(m, qp, REG_RQ_BASE, (RQ_RINGS + 0x1000 * qp as u32) as u64);
    b.csr_write(m, qp, REG_RQ_SIZE_LOG2, size_log2 as u64);
    let remote = REMOTE_NODE as u64 | (0x100 + qp as u64) << 16;
    b.csr_write(m, qp, REG_QP_REMOTE, remote);
}

/// Post a receive buffer on QP `qp` (when the ring has room); returns whether it did.
fn post_receive(b: &mut Bench, m: &mut ResponderModel, qp: usize, rqe: Rqe) -> bool {
    let q = m.qps[qp].clone();
    let size = 1u32 << q.rq_size_log2;
    if (q.rq_pi.wrapping_sub(q.rq_ci) & PSN_MASK) >= size {
        return false;
    }
    let at = q.rq_base + (q.rq_pi % size) * 32;
    for (i, w) in rqe.to_words().iter().enumerate() {
        b.host_write(m, at + 8 * i as u32, *w);
    }
    b.csr_write(m, qp, REG_RQ_PI, ((q.rq_pi + 1) & PSN_MASK) as u64);
    true
}

use nic_abi::Rqe;

/// Feed outcomes to both the engine and the model.
fn feed(b: &mut Bench, m: &mut ResponderModel, outcomes: &[CellOutcome]) {
    for o in outcomes {
        m.outcome(o);
        b.push_outcome(o);
    }
}

/// Cells of `msgs` through the reassembler model.
fn outcomes_of(
    reasm: &mut ReassemblyModel,
    msgs: &[Message],
    cell_payload: usize,
) -> Vec<CellOutcome> {
    msgs.iter()
        .flat_map(|msg| encode_message(msg, cell_payload).unwrap())
        .filter_map(|c| reasm.push_cell(&c))
        .collect()
}

/// A random message for the responder, shaped by the model's state so that most
/// requests are in sequence and well formed, and every rule gets its share.
fn random_message(rng: &mut ChaCha8Rng, m: &ResponderModel, cell_payload: usize) -> Message {
    let qps = m.queue_pairs;
    let qp = if rng.gen_bool(0.04) {
        rng.gen_range(qps..qps + 3)
    } else {
        rng.gen_range(0..qps)
    };
    let q = m.qps.get(qp).cloned().unwrap_or_default();
    let (mut src_node, mut src_qp) = (q.remote as u16, (q.remote >> 16) as u16);
    if rng.gen_bool(0.03) {
        src_node ^= 1;
    }
    if rng.gen_bool(0.03) {
        src_qp ^= 2;
    }
    let dest_node = if rng.gen_bool(0.03) { NODE ^ 4 } else { NODE };
    let ops: [(u8, u32); 12] = [
        (opcode::SEND, 18),
        (opcode::SEND_IMMEDIATE, 8),
        (opcode::RDMA_WRITE, 18),
        (opcode::RDMA_WRITE_IMMEDIATE, 8),
        (opcode::RDMA_READ_REQUEST, 9),
        (opcode::ATOMIC_COMPARE_SWAP, 6),
        (opcode::ATOMIC_FETCH_ADD, 6),
        (opcode::RDMA_READ_RESPONSE, 8),
        (opcode::ATOMIC_RESPONSE, 4),
        (opcode::ACK, 4),
        (opcode::NACK, 4),
        (0x05, 1),
    ];
    let total: u32 = ops.iter().map(|o| o.1).sum();
    let mut pick = rng.gen_range(0..total);
    let op = ops
        .iter()
        .find(|o| {
            if pick < o.1 {
                true
            } else {
                pick -= o.1;
                false
            }
        })
        .unwrap()
        .0;
    let atomic = op == opcode::ATOMIC_COMPARE_SWAP || op == opcode::ATOMIC_FETCH_ADD;
    let r: f64 = rng.gen();
    let mut psn = if !q.synced {
        rng.gen_range(0..PSN_MASK + 1)
    } else if r < 0.72 {
        q.expected_psn
    } else if r < 0.84 {
        q.expected_psn.wrapping_sub(rng.gen_range(1..=10)) & PSN_MASK
    } else if r < 0.95 {
        (q.expected_psn + rng.gen_range(1..=5)) & PSN_MASK
    } else {
        rng.gen_range(0..PSN_MASK + 1)
    };
    if atomic && rng.gen_bool(0.3) {
        if let Some((p, _)) = q.atomic {
            psn = p;
        }
    }
    let resync = if q.synced {
        rng.gen_bool(0.03)
    } else {
        rng.gen_bool(0.5)
    };
    let mut immediate = None;
    let len = match op {
        opcode::SEND
        | opcode::SEND_IMMEDIATE
        | opcode::RDMA_WRITE
        | opcode::RDMA_WRITE_IMMEDIATE => {
            let r: f64 = rng.gen();
            if r < 0.1 {
                0
            } else if r < 0.4 {
                rng.gen_range(1..=16)
            } else {
                rng.gen_range(17..=3 * cell_payload + 17)
            }
        }
        opcode::RDMA_READ_REQUEST | opcode::ACK | opcode::NACK => 0,
        opcode::RDMA_READ_RESPONSE => match q.expect {
            Some(e) if rng.gen_bool(0.8) => {
                if rng.gen_bool(0.8) {
                    e.length as usize
                } else {
                    e.length as usize + rng.gen_range(1..40)
                }
            }
            _ => rng.gen_range(0..200),
        },
        opcode::ATOMIC_RESPONSE => 8,
        _ if atomic => {
            if rng.gen_bool(0.95) {
                16
            } else {
                8
            }
        }
        _ => rng.gen_range(0..40),
    };
    if matches!(op, opcode::RDMA_READ_RESPONSE | opcode::ATOMIC_RESPONSE) {
        if let Some(e) = q.expect {
            if rng.gen_bool(0.85) {
                psn = e.psn;
            }
        }
    }
    match op {
        opcode::SEND_IMMEDIATE | opcode::RDMA_WRITE_IMMEDIATE => immediate = Some(rng.gen()),
        opcode::SEND if rng.gen_bool(0.1) => immediate = Some(rng.gen()),
        opcode::ACK => immediate = Some(0),
        opcode::NACK => {
            let codes = [
                0x20u32, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x00,
            ];
            immediate = Some(codes[rng.gen_range(0..codes.len())]);
        }
        _ => {}
    }
    let r: f64 = rng.gen();
    let vaddr: u64 = if r < 0.85 {
        (RDMA_AREA + (rng.gen_range(0..0x1000u32) * 8)) as u64
    } else if r < 0.9 {
        (RDMA_AREA + rng.gen_range(0..0x8000u32)) as u64
    } else if r < 0.96 {
        0xFFFF_F000 + rng.gen_range(0..0x200u64) * 8
    } else {
        1 << 40 | (RDMA_AREA as u64)
    };
    let dma_length = match op {
        opcode::RDMA_READ_REQUEST => rng.gen_range(0..2048),
        _ if atomic => {
            if rng.gen_bool(0.95) {
                8
            } else {
                16
            }
        }
        _ => {
            if rng.gen_bool(0.95) {
                len as u32
            } else {
                len as u32 + 8
            }
        }
    };
    let key = match rng.gen_range(0..20) {
        0 | 1 => 0xEE,
        2 => 0xA5,
        _ => rng.gen_range(0..0xA0),
    };
    let stag = rng.gen_range(0..0x10_0000u32) << 8 | key;
    let mut payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
    if atomic && len == 16 && rng.gen_bool(0.5) {
        // A compare value that matches memory now and then.
        let now = m.read_word(vaddr as u32);
        payload[..8].copy_from_slice(&now.to_le_bytes());
    }
    Message {
        opcode: op,
        dest_node,
        src_node,
        dest_qp: qp as u16,
        src_qp,
        psn,
        vaddr,
        stag,
        dma_length,
        immediate,
        invalidate: rng.gen_bool(0.1),
        resync,
        payload,
    }
}

/// Seeded random traffic against the model: every opcode, payloads of 0..several
/// cells, duplicates, gaps, failed cells, disabled enables, empty receive queues,
/// short and misaligned receive buffers, busy slots, expect events, CSR traffic and QP
/// resets between (and inside) messages. Returns the clocks run.
fn random_run(
    seed: u64,
    queue_pairs: usize,
    tpt: bool,
    cell_payload: usize,
    steps: usize,
    pressure: bool,
) -> u64 {
    let tpt = tpt.then_some(test_tpt as TptFunction);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = Bench::new(queue_pairs, tpt, seed ^ 0x5eed, pressure);
    let mut m = ResponderModel::new(queue_pairs, NODE, tpt);
    let mut reasm = ReassemblyModel::new(cell_payload);
    for qp in 0..queue_pairs {
        setup_qp(&mut b, &mut m, qp, rng.gen_range(1..4));
        b.csr_write(&mut m, qp, REG_QP_CTRL, 1);
    }
    // Some data in the RDMA area, for atomics to find.
    for i in 0..64u32 {
        let v = rng.gen();
        b.host_write(&mut m, RDMA_AREA + 8 * rng.gen_range(0..0x1000u32), v);
        let _ = i;
    }
    b.quiesce(10_000);
    let mut held_back: Vec<CellOutcome> = vec![];
    let mut buffers = 0u32;
    for step in 0..steps {
        let what = rng.gen_range(0..100);
        let qp = rng.gen_range(0..queue_pairs);
        match what {
            0..=54 => {
                let n = rng.gen_range(1..6);
                let msgs: Vec<Message> = (0..n)
                    .map(|_| random_message(&mut rng, &m, cell_payload))
                    .collect();
                let mut cells: Vec<Vec<u64>> = msgs
                    .iter()
                    .flat_map(|msg| encode_message(msg, cell_payload).unwrap())
                    .collect();
                if rng.gen_bool(0.15) {
                    cells = corrupt_stream(&mut rng, cells, 0.15);
                }
                let mut outcomes = std::mem::take(&mut held_back);
                outcomes.extend(cells.iter().filter_map(|c| reasm.push_cell(c)));
                if outcomes.len() > 1 && rng.gen_bool(0.2) {
                    // Leave the rest for later: CSR traffic lands inside a message.
                    let at = rng.gen_range(1..outcomes.len());
                    held_back = outcomes.split_off(at);
                }
                feed(&mut b, &mut m, &outcomes);
            }
            55..=67 => {
                for _ in 0..rng.gen_range(1..4) {
                    buffers += 1;
                    let misaligned = rng.gen_bool(0.03);
                    let rqe = Rqe {
                        buffer_addr: RECV_AREA + (buffers % 256) * 0x1000 + 4 * misaligned as u32,
                        buffer_length: if rng.gen_bool(0.5) {
                            rng.gen_range(0..64)
                        } else {
                            rng.gen_range(64..(4 * cell_payload as u32).clamp(65, 0x1000))
                        },
                        wr_id: rng.gen(),
                    };
                    post_receive(&mut b, &mut m, qp, rqe);
                }
            }
            68..=77 => {
                let e = Expectation {
                    psn: if m.qps[qp].synced && rng.gen_bool(0.5) {
                        m.qps[qp].expected_psn
                    } else {
                        rng.gen_range(0..PSN_MASK + 1)
                    },
                    addr: RESPONSE_AREA
                        + rng.gen_range(0..0x200) * 8
                        + 4 * rng.gen_bool(0.03) as u32,
                    length: rng.gen_range(0..3 * cell_payload as u32),
                    atomic: rng.gen_bool(0.3),
                };
                let e = if e.atomic {
                    Expectation { length: 8, ..e }
                } else {
                    e
                };
                let q = if queue_pairs < 63 && rng.gen_bool(0.05) {
                    queue_pairs + 1
                } else {
                    qp
                };
                m.expect(q, e);
                b.expects.push_back((q & 63, e));
            }
            78..=86 => {
                let busy = if rng.gen_bool(0.5) {
                    0
                } else {
                    rng.gen::<u64>() & rng.gen::<u64>()
                };
                b.set_slot_busy(&mut m, busy);
                let (sr, rdma) = (rng.gen_bool(0.9), rng.gen_bool(0.85));
                b.set_enables(&mut m, sr, rdma);
            }
            87..=93 => {
                for reg in [
                    REG_RQ_BASE,
                    REG_RQ_SIZE_LOG2,
                    REG_RQ_PI,
                    REG_RQ_CI,
                    REG_QP_STATUS,
                    REG_QP_REMOTE,
                    REG_QP_CTRL,
                    0,
                    15,
                ] {
                    b.csr_read(&m, qp, reg);
                }
                if queue_pairs < 64 {
                    b.csr_read(&m, queue_pairs, REG_QP_STATUS);
                }
            }
            94..=96 => {
                // QP reset (the requester then sends RESYNC messages).
                b.csr_write(&mut m, qp, REG_QP_CTRL, 3);
            }
            97 => {
                if rng.gen_bool(0.5) {
                    b.csr_write(&mut m, qp, REG_QP_CTRL, 0);
                } else {
                    // A failover resumes the QP where another NIC left off: at or
                    // just after its expected PSN, so that duplicates before the
                    // resume point and requests at it both come.
                    let psn = (m.qps[qp].expected_psn + rng.gen_range(0..3)) & PSN_MASK;
                    let reset = if rng.gen_bool(0.5) {
                        csr::QP_CTRL_RESET
                    } else {
                        0
                    };
                    b.csr_write(
                        &mut m,
                        qp,
                        REG_QP_CTRL,
                        csr::QP_CTRL_RESUME | csr::QP_CTRL_ENABLE | reset | (psn as u64) << 8,
                    );
                }
            }
            98 => {
                b.csr_write(&mut m, qp, REG_QP_CTRL, 1);
            }
            _ => {
                let remote = REMOTE_NODE as u64 | (0x100 + qp as u64 + rng.gen_range(0..2)) << 16;
                b.csr_write(&mut m, qp, REG_QP_REMOTE, remote);
            }
        }
        b.quiesce(100_000);
        b.compare(&m, &format!("seed {seed:#x} step {step}"));
    }
    feed(&mut b, &mut m, &held_back);
    b.quiesce(100_000);
    b.compare(&m, &format!("seed {seed:#x} end"));
    let mut kinds: HashMap<(u8, u8), usize> = HashMap::new();
    for o in &m.owed {
        *kinds.entry((o.kind, o.syndrome)).or_default() += 1;
    }
    let mut kinds: Vec<_> = kinds.into_iter().collect();
    kinds.sort();
    let statuses: Vec<u8> = m.completions.iter().map(|c| c.status).collect();
    eprintln!(
        "seed {seed:#x}: {} clocks, {} writes, {} completions (status 1: {}, 3: {}), {} acks ({} responses), {} lookups, {} dropped, {} messages; owed (kind, syndrome) {kinds:?}; rx stalls {}",
        b.cycle,
        m.writes.len(),
        m.completions.len(),
        statuses.iter().filter(|s| **s == 1).count(),
        statuses.iter().filter(|s| **s == 3).count(),
        m.acks.len(),
        m.acks.iter().filter(|a| a.response).count(),
        m.lookups.len(),
        m.dropped,
        m.messages_received,
        b.rx_stalls,
    );
    assert!(m.writes.len() > 50, "only {} writes", m.writes.len());
    b.cycle
}

#[test]
fn matches_model_without_tpt() {
    let mut cycles = 0;
    for seed in [1u64, 2, 3] {
        cycles += random_run(seed, 4, false, 64, 400, true);
    }
    cycles += random_run(4, 1, false, 32, 200, true);
    cycles += random_run(5, 3, false, 256, 200, false);
    assert!(cycles > 30_000, "{cycles} clocks");
}

#[test]
fn matches_model_with_tpt() {
    let mut cycles = 0;
    for seed in [11u64, 12] {
        cycles += random_run(seed, 4, true, 64, 400, true);
    }
    cycles += random_run(13, 64, true, 8, 200, true);
    assert!(cycles > 30_000, "{cycles} clocks");
}

/// A bench, its model and a reassembler model for directed tests (every step is
/// still checked against the model).
struct Directed {
    b: Bench,
    m: ResponderModel,
    reasm: ReassemblyModel,
    cell_payload: usize,
    steps: usize,
}

impl Directed {
    fn new(queue_pairs: usize, tpt: bool, cell_payload: usize, pressure: bool) -> Self {
        let tpt = tpt.then_some(test_tpt as TptFunction);
        let mut b = Bench::new(queue_pairs, tpt, 99, pressure);
        let mut m = ResponderModel::new(queue_pairs, NODE, tpt);
        for qp in 0..queue_pairs {
            setup_qp(&mut b, &mut m, qp, 3);
            b.csr_write(&mut m, qp, REG_QP_CTRL, 1);
        }
        let mut d = Directed {
            b,
            m,
            reasm: ReassemblyModel::new(cell_payload),
            cell_payload,
            steps: 0,
        };
        d.settle();
        d
    }

    fn settle(&mut self) {
        self.b.quiesce(100_000);
        self.steps += 1;
        self.b
            .compare(&self.m, &format!("directed step {}", self.steps));
    }

    /// A request from QP `qp`'s configured remote.
    fn msg(&self, op: u8, qp: usize, psn: u32, len: usize) -> Message {
        let remote = self.m.qps[qp].remote;
        Message {
            opcode: op,
            dest_node: NODE,
            src_node: remote as u16,
            dest_qp: qp as u16,
            src_qp: (remote >> 16) as u16,
            psn,
            vaddr: RDMA_AREA as u64,
            stag: 0x100,
            dma_length: len as u32,
            immediate: None,
            invalidate: false,
            resync: false,
            payload: (0..len).map(|i| (i * 7 + psn as usize) as u8).collect(),
        }
    }

    fn send(&mut self, msgs: &[Message]) {
        let o = outcomes_of(&mut self.reasm, msgs, self.cell_payload);
        feed(&mut self.b, &mut self.m, &o);
        self.settle();
    }

    fn send_cells(&mut self, cells: &[Vec<u64>]) {
        let o: Vec<CellOutcome> = cells
            .iter()
            .filter_map(|c| self.reasm.push_cell(c))
            .collect();
        feed(&mut self.b, &mut self.m, &o);
        self.settle();
    }

    fn post(&mut self, qp: usize, rqe: Rqe) {
        assert!(post_receive(&mut self.b, &mut self.m, qp, rqe));
        self.settle();
    }

    fn last_owed(&self) -> Owed {
        *self.b.owed.last().expect("an owed response")
    }

    fn expected_psn(&self, qp: usize) -> u32 {
        (self.m.csr_read(qp, REG_QP_STATUS) >> 24) as u32 & PSN_MASK
    }
}

/// Every NACK syndrome the responder produces, each from a request that would
/// otherwise write, and not one byte written.
#[test]
fn each_nack_syndrome_writes_nothing() {
    let mut d = Directed::new(2, false, 64, true);
    // Synchronise QP 0 at PSN 100 with a READ (which writes nothing here).
    let mut read = d.msg(opcode::RDMA_READ_REQUEST, 0, 100, 0);
    read.dma_length = 64;
    d.send(&[read]);
    assert_eq!(d.last_owed().kind, OWE_READ_RESPONSE);
    assert_eq!(d.expected_psn(0), 101);
    let nack = |d: &mut Directed, m: Message, s: Syndrome, psn: u32, next: u32| {
        d.send(&[m]);
        let o = d.last_owed();
        assert_eq!((o.kind, o.syndrome, o.psn), (OWE_NACK, s as u8, psn), "{s}");
        assert_eq!(d.expected_psn(0), next, "{s}: expected PSN after");
    };
    // RECEIVER_NOT_READY: no receive buffer posted (consumes the PSN).
    let msg = d.msg(opcode::SEND, 0, 101, 40);
    nack(&mut d, msg, Syndrome::ReceiverNotReady, 101, 102);
    let mut wi = d.msg(opcode::RDMA_WRITE_IMMEDIATE, 0, 102, 40);
    wi.immediate = Some(7);
    nack(&mut d, wi, Syndrome::ReceiverNotReady, 102, 103);
    // SEQUENCE_ERROR: ahead; once, then silence until the expected PSN arrives.
    let msg = d.msg(opcode::RDMA_WRITE, 0, 106, 40);
    nack(&mut d, msg, Syndrome::SequenceError, 103, 103);
    let owed = d.b.owed.len();
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 107, 40)]);
    assert_eq!(d.b.owed.len(), owed, "a second SEQUENCE_ERROR NACK");
    // INVALID_REQUEST: misaligned address; a WRITE whose length is not its RETH's;
    // an atomic of the wrong size.
    let mut w = d.msg(opcode::RDMA_WRITE, 0, 103, 40);
    w.vaddr += 4;
    nack(&mut d, w, Syndrome::InvalidRequest, 103, 104);
    let mut w = d.msg(opcode::RDMA_WRITE, 0, 104, 40);
    w.dma_length = 48;
    nack(&mut d, w, Syndrome::InvalidRequest, 104, 105);
    let mut a = d.msg(opcode::ATOMIC_FETCH_ADD, 0, 105, 16);
    a.dma_length = 16;
    nack(&mut d, a, Syndrome::InvalidRequest, 105, 106);
    // REMOTE_ACCESS_ERROR: beyond the 32-bit physical space (no TPT).
    let mut w = d.msg(opcode::RDMA_WRITE, 0, 106, 40);
    w.vaddr = 1 << 40;
    nack(&mut d, w, Syndrome::RemoteAccessError, 106, 107);
    let mut w = d.msg(opcode::RDMA_WRITE, 0, 107, 40);
    w.vaddr = (1 << 32) - 32;
    nack(&mut d, w, Syndrome::RemoteAccessError, 107, 108);
    // RDMA_DISABLED.
    d.b.set_enables(&mut d.m, true, false);
    let msg = d.msg(opcode::RDMA_WRITE, 0, 108, 40);
    nack(&mut d, msg, Syndrome::RdmaDisabled, 108, 109);
    // REMOTE_OPERATIONAL_ERROR: every request refused, receive buffer or not.
    d.b.set_enables(&mut d.m, false, true);
    d.post(
        0,
        Rqe {
            buffer_addr: RECV_AREA,
            buffer_length: 64,
            wr_id: 1,
        },
    );
    let msg = d.msg(opcode::SEND, 0, 109, 40);
    nack(&mut d, msg, Syndrome::RemoteOperationalError, 109, 110);
    let msg = d.msg(opcode::RDMA_WRITE, 0, 110, 40);
    nack(&mut d, msg, Syndrome::RemoteOperationalError, 110, 111);
    d.b.set_enables(&mut d.m, true, true);
    // CRC_OR_MALFORMED: a failed cell of an otherwise good two-cell WRITE, then a
    // failed cell of the retransmission (once per gap).
    let cells = encode_message(&d.msg(opcode::RDMA_WRITE, 0, 111, 40), d.cell_payload).unwrap();
    let mut bad = cells[0].clone();
    bad[6] ^= 1 << 3;
    d.send_cells(&[bad.clone()]);
    let o = d.last_owed();
    assert_eq!(
        (o.kind, o.syndrome, o.psn),
        (OWE_NACK, Syndrome::CrcOrMalformed as u8, 111)
    );
    let owed = d.b.owed.len();
    d.send_cells(&[bad]);
    assert_eq!(d.b.owed.len(), owed, "a second CRC NACK in the same gap");
    assert!(d.b.writes.is_empty(), "written: {:?}", d.b.writes);
    assert!(d.b.completions.is_empty());
    // The QP still works: the retransmission is written and ACKed.
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 111, 40)]);
    assert_eq!(d.last_owed().kind, OWE_ACK);
    assert_eq!(d.b.writes.len(), 5);
    assert_eq!(d.expected_psn(0), 112);
}

/// The owed-slot rule: while QP 0's answer slot is busy (a NACK or response not yet
/// handed over), a request at or ahead of the expected PSN that would owe a NACK or a
/// response is not applied and owes NACK SEQUENCE_ERROR with the expected PSN (the
/// `ResponseGenerator` sends it right after the busy item), so the requester goes back
/// to it at once instead of losing it until its timer fires. A request that owes only
/// an ACK is executed; a duplicate is dropped; a failed cell still owes
/// CRC_OR_MALFORMED. Once the slot is free, the same request gets its own answer.
#[test]
fn a_request_the_busy_slot_cannot_answer_owes_a_sequence_error() {
    let mut d = Directed::new(1, false, 64, true);
    let owed = |d: &Directed| {
        let o = d.last_owed();
        (o.kind, o.syndrome, o.psn)
    };
    let seq = Syndrome::SequenceError as u8;
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 300, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 300));
    let writes = d.b.writes.len();
    d.b.set_slot_busy(&mut d.m, 1);
    // A SEND with no receive buffer (RNR) and a READ: not applied, turned away.
    d.send(&[d.msg(opcode::SEND, 0, 301, 16)]);
    assert_eq!(
        owed(&d),
        (OWE_NACK, seq, 301),
        "the refusal needs the busy slot"
    );
    let mut read = d.msg(opcode::RDMA_READ_REQUEST, 0, 301, 0);
    read.dma_length = 64;
    d.send(&[read.clone()]);
    assert_eq!(
        owed(&d),
        (OWE_NACK, seq, 301),
        "the response needs the busy slot"
    );
    assert_eq!(
        d.expected_psn(0),
        301,
        "a turned-away request consumed its PSN"
    );
    // An RDMA WRITE owes only an ACK: executed.
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 301, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 301));
    assert!(d.b.writes.len() > writes);
    // A duplicate READ is dropped (its answer left the slot before).
    let n = d.b.owed.len();
    read.psn = 300;
    d.send(&[read.clone()]);
    assert_eq!(d.b.owed.len(), n);
    assert_eq!(d.b.uut.stat_dropped.val().to_u32(), 1);
    // A failed cell owes CRC_OR_MALFORMED with the expected PSN.
    let cells = encode_message(&d.msg(opcode::RDMA_WRITE, 0, 302, 40), d.cell_payload).unwrap();
    let mut bad = cells[0].clone();
    bad[6] ^= 1 << 3;
    d.send_cells(&[bad]);
    assert_eq!(owed(&d), (OWE_NACK, Syndrome::CrcOrMalformed as u8, 302));
    // The slot is free again: the READ at 302 is executed.
    d.b.set_slot_busy(&mut d.m, 0);
    read.psn = 302;
    d.send(&[read]);
    assert_eq!(owed(&d), (OWE_READ_RESPONSE, 0, 302));
    assert!(d.b.completions.is_empty());
}

/// Every ACK or NACK that acknowledges a refused PSN (1..=7 PSNs after it) reports
/// the refusal in its AETH (`m_owe.refusal`: the refusal code at its distance), so a
/// requester whose final NACK was lost still never completes that PSN with success;
/// the NACK itself and answers 8 or more PSNs on carry none. On the requester side an
/// answer whose AETH reports a refusal is handed over as two events: the refused
/// PSN's final NACK, then the answer itself.
#[test]
fn answers_after_a_refusal_report_it_in_their_aeth() {
    let mut d = Directed::new(1, false, 64, true);
    let owed = |d: &Directed| {
        let o = d.last_owed();
        (o.kind, o.syndrome, o.psn, o.refusal)
    };
    let rae = Syndrome::RemoteAccessError as u8;
    let refusal = |distance: u8| {
        AethRefusals::one(distance as usize, Syndrome::RemoteAccessError).to_aeth() >> 8
    };
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 400, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 400, 0));
    let mut bad = d.msg(opcode::RDMA_WRITE, 0, 401, 16);
    bad.vaddr = 1 << 40;
    d.send(&[bad.clone()]);
    assert_eq!(
        owed(&d),
        (OWE_NACK, rae, 401, 0),
        "the NACK names its own PSN"
    );
    for k in 1..=7u32 {
        d.send(&[d.msg(opcode::RDMA_WRITE, 0, 401 + k, 16)]);
        assert_eq!(
            owed(&d),
            (OWE_ACK, 0, 401 + k, refusal(k as u8)),
            "ACK {k} on"
        );
    }
    // A duplicate's ACK (expected - 1 = 408) still reports it, also for a duplicate
    // before it; the duplicate of the refused PSN is NACKed again without a report.
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 405, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 408, refusal(7)));
    d.send(&[bad]);
    assert_eq!(owed(&d), (OWE_NACK, rae, 401, 0));
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 400, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 408, refusal(7)));
    // A SEQUENCE_ERROR at the expected PSN 409 is 8 on: nothing to report.
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 411, 16)]);
    assert_eq!(owed(&d), (OWE_NACK, Syndrome::SequenceError as u8, 409, 0));
    // Requester side: an ACK for 20 reporting a refusal 3 before it.
    let n = d.b.acks.len();
    let mut ack = d.msg(opcode::ACK, 0, 20, 0);
    ack.immediate = Some(refusal(3) as u32 * 256);
    d.send(&[ack]);
    let events: Vec<(u32, u8, bool)> = d.b.acks[n..]
        .iter()
        .map(|e| (e.psn, e.syndrome, e.response))
        .collect();
    assert_eq!(events, [(17, rae, false), (20, 0, false)]);
}

/// Two refusals in one window (found by `nic soak`, seed 4676: both NACKs lost, a
/// later ACK reported only the second refusal and so acknowledged the first as a
/// success, a lost write reported done). Every answer reports every refusal among the
/// 7 PSNs before its own; both duplicates are NACKed again; an ACK never names a
/// refused PSN. The requester side hands a two-refusal report over oldest first.
#[test]
fn two_refusals_in_one_window_are_both_reported() {
    let mut d = Directed::new(1, false, 64, true);
    let owed = |d: &Directed| {
        let o = d.last_owed();
        (o.kind, o.syndrome, o.psn, o.refusal)
    };
    let rae = Syndrome::RemoteAccessError;
    let report = |refused: &[usize]| {
        let mut r = AethRefusals::default();
        for &k in refused {
            r.0[k - 1] = Some(rae);
        }
        r.to_aeth() >> 8
    };
    let bad = |d: &Directed, psn: u32| {
        let mut m = d.msg(opcode::RDMA_WRITE, 0, psn, 16);
        m.vaddr = 1 << 40;
        m
    };
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 500, 16)]);
    d.send(&[bad(&d, 501)]);
    assert_eq!(owed(&d), (OWE_NACK, rae as u8, 501, 0));
    d.send(&[bad(&d, 502)]);
    assert_eq!(owed(&d), (OWE_NACK, rae as u8, 502, report(&[1])));
    // The duplicate of 502, the last PSN, is refused again, and a duplicate before
    // it is ACKed at its own PSN (an ACK of 502 would complete it).
    d.send(&[bad(&d, 502)]);
    assert_eq!(owed(&d), (OWE_NACK, rae as u8, 502, report(&[1])));
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 500, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 500, 0));
    for k in 1..=5u32 {
        d.send(&[d.msg(opcode::RDMA_WRITE, 0, 502 + k, 16)]);
        assert_eq!(
            owed(&d),
            (OWE_ACK, 0, 502 + k, report(&[k as usize, k as usize + 1])),
            "ACK of {}",
            502 + k
        );
    }
    // Both duplicates NACKed again, each reporting what lies before it.
    d.send(&[bad(&d, 501)]);
    assert_eq!(owed(&d), (OWE_NACK, rae as u8, 501, 0));
    d.send(&[bad(&d, 502)]);
    assert_eq!(owed(&d), (OWE_NACK, rae as u8, 502, report(&[1])));
    // 508 reports both (6 and 7 back), 509 only 502, 510 neither.
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 508, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 508, report(&[6, 7])));
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 509, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 509, report(&[7])));
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 510, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 510, 0));
    // Requester side: an ACK of 40 reporting refusals 6 and 2 before it.
    let n = d.b.acks.len();
    let mut ack = d.msg(opcode::ACK, 0, 40, 0);
    let mut r = AethRefusals::default();
    r.0[1] = Some(Syndrome::RdmaDisabled);
    r.0[5] = Some(Syndrome::ReceiverNotReady);
    ack.immediate = Some(r.to_aeth());
    d.send(&[ack]);
    let events: Vec<(u32, u8, bool)> = d.b.acks[n..]
        .iter()
        .map(|e| (e.psn, e.syndrome, e.response))
        .collect();
    assert_eq!(
        events,
        [
            (34, Syndrome::ReceiverNotReady as u8, false),
            (38, Syndrome::RdmaDisabled as u8, false),
            (40, 0, false)
        ]
    );
}

/// A "duplicate" far behind the expected PSN was never received in this sequence (a
/// requester that restarted its PSN sequence without RESYNC, e.g. after a PORT_DOWN
/// NACK took the message that carried it: found by `nic soak`, seed 228). While the
/// PSN before the expected one is refused, such a request is dropped: an ACK naming
/// its own PSN made the requester complete SENDs that were never delivered.
#[test]
fn a_far_duplicate_is_not_acked_at_its_own_psn() {
    let mut d = Directed::new(1, false, 64, true);
    // Past the resync point's window (the first message resynced the QP at 690).
    for psn in 690..=700 {
        d.send(&[d.msg(opcode::RDMA_WRITE, 0, psn, 16)]);
    }
    d.send(&[d.msg(opcode::SEND, 0, 701, 16)]);
    assert_eq!(d.last_owed().syndrome, Syndrome::ReceiverNotReady as u8);
    let owed = d.b.owed.len();
    // 0x61_0000 behind the expected PSN: a duplicate by the 2^23 rule.
    let far = (702u32.wrapping_sub(0x61_0000)) & PSN_MASK;
    d.send(&[d.msg(opcode::SEND, 0, far, 16)]);
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, far.wrapping_add(1) & PSN_MASK, 16)]);
    assert_eq!(
        d.b.owed.len(),
        owed,
        "a far duplicate was answered: {:?}",
        d.b.owed.last()
    );
    assert!(d.b.completions.is_empty());
    assert_eq!(d.expected_psn(0), 702);
    // Within the window a duplicate is still ACKed at its own PSN.
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 700, 16)]);
    assert_eq!((d.last_owed().kind, d.last_owed().psn), (OWE_ACK, 700));
}

/// A refused PSN stays refused (the requester may time out while the NACK is on its
/// way and retransmit from an older PSN): the retransmission is NACKed again with the
/// same syndrome instead of being ACKed as a duplicate, even once a buffer is posted;
/// the ACK of a duplicate before it reports it in its AETH; a refused READ is not
/// executed again. Once the expected PSN is more than SEND_WINDOW past it, the
/// refusal is forgotten.
#[test]
fn duplicate_of_a_refused_psn_is_refused_again() {
    let mut d = Directed::new(1, false, 64, true);
    let owed = |d: &Directed| {
        let o = d.last_owed();
        (o.kind, o.syndrome, o.psn)
    };
    let rnr = Syndrome::ReceiverNotReady as u8;
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 200, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 200));
    d.send(&[d.msg(opcode::SEND, 0, 201, 16)]);
    assert_eq!(owed(&d), (OWE_NACK, rnr, 201));
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 202, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 202));
    let writes = d.b.writes.len();
    // Go-back-N from 200: 200's ACK names 202 and reports 201 refused, 201 is
    // refused again, 202 ACKed.
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 200, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 202));
    assert_eq!(
        d.last_owed().refusal << 8,
        AethRefusals::one(1, Syndrome::ReceiverNotReady).to_aeth(),
        "the ACK covers the refused PSN without reporting it"
    );
    d.post(
        0,
        Rqe {
            buffer_addr: RECV_AREA,
            buffer_length: 64,
            wr_id: 9,
        },
    );
    d.send(&[d.msg(opcode::SEND, 0, 201, 16)]);
    assert_eq!(owed(&d), (OWE_NACK, rnr, 201), "a refused SEND was ACKed");
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 202, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 202));
    assert_eq!(d.b.writes.len(), writes, "a duplicate was applied");
    assert!(d.b.completions.is_empty());
    assert_eq!(d.expected_psn(0), 203);
    // A refused READ (beyond 2^32 without a TPT) is refused again, not executed.
    let mut read = d.msg(opcode::RDMA_READ_REQUEST, 0, 203, 0);
    read.dma_length = 64;
    read.vaddr = 1 << 40;
    let rae = Syndrome::RemoteAccessError as u8;
    d.send(&[read.clone()]);
    assert_eq!(owed(&d), (OWE_NACK, rae, 203));
    read.vaddr = RDMA_AREA as u64;
    d.send(&[read.clone()]);
    assert_eq!(
        owed(&d),
        (OWE_NACK, rae, 203),
        "a refused READ was executed"
    );
    // SEND_WINDOW + 1 more PSNs: the refusal is forgotten, a duplicate READ of 203
    // is executed again like any duplicate READ.
    for psn in 204..=(203 + SEND_WINDOW + 1) {
        d.send(&[d.msg(opcode::RDMA_WRITE, 0, psn, 16)]);
        assert_eq!(owed(&d), (OWE_ACK, 0, psn));
    }
    d.send(&[read]);
    assert_eq!(d.last_owed().kind, OWE_READ_RESPONSE);
}

/// With a TPT: a refused key, a misaligned translation and a slow (exception path)
/// answer; CSR accesses are served while the lookup waits.
#[test]
fn tpt_refusals_and_a_slow_answer() {
    let mut d = Directed::new(2, true, 64, true);
    let mut w = d.msg(opcode::RDMA_WRITE, 1, 500, 24);
    w.stag = 0x300 | 0xEE;
    d.send(&[w]);
    let o = d.last_owed();
    assert_eq!(
        (o.syndrome, o.psn),
        (Syndrome::RemoteAccessError as u8, 500)
    );
    let mut w = d.msg(opcode::RDMA_WRITE, 1, 501, 24);
    w.stag = 0x300 | 0xA5;
    d.send(&[w]);
    assert_eq!(d.last_owed().syndrome, Syndrome::RemoteAccessError as u8);
    assert!(d.b.writes.is_empty());
    // A slow answer: CSR reads complete while the engine waits.
    d.b.slow_tpt = true;
    let w = d.msg(opcode::RDMA_WRITE, 1, 502, 24);
    let o = outcomes_of(&mut d.reasm, &[w], 64);
    feed(&mut d.b, &mut d.m, &o);
    for _ in 0..60 {
        d.b.cycle();
    }
    assert_eq!(d.b.uut.responder_state(), ResponderState::TptWait);
    for qp in 0..2 {
        d.b.csr_read(&d.m, qp, REG_RQ_BASE);
    }
    let start = d.b.cycle;
    while !d.b.csr_ops.is_empty() || !d.b.csr_expected.is_empty() {
        d.b.cycle();
    }
    assert!(d.b.cycle - start < 20, "CSR reads waited for the TPT");
    assert_eq!(d.b.uut.responder_state(), ResponderState::TptWait);
    d.settle();
    assert_eq!(d.last_owed().kind, OWE_ACK);
    assert_eq!(d.b.writes.len(), 3);
    assert_eq!(d.b.lookups.len(), 3);
    assert_eq!(d.b.lookups[2].access, 2);
}

/// Rule 6 (RECEIVER_NOT_READY) comes after the TPT check (rule 5): an
/// RDMA_WRITE_IMMEDIATE refused for want of a receive buffer asks the TPT to check
/// only (`m_tpt_req.commit` = 0), so a one-shot or invalidating STag is not used up by
/// a request that did nothing; the same request with a buffer posted commits.
#[test]
fn a_request_refused_after_the_tpt_check_does_not_commit_it() {
    let mut d = Directed::new(1, true, 64, true);
    let mut wi = d.msg(opcode::RDMA_WRITE_IMMEDIATE, 0, 300, 24);
    wi.immediate = Some(0x55);
    wi.invalidate = true;
    d.send(&[wi.clone()]);
    let o = d.last_owed();
    assert_eq!(
        (o.kind, o.syndrome, o.psn),
        (OWE_NACK, Syndrome::ReceiverNotReady as u8, 300)
    );
    let l = *d.b.lookups.last().expect("a TPT lookup");
    assert!(
        l.invalidate && !l.commit,
        "the refused request committed: {l:?}"
    );
    assert!(d.b.writes.is_empty());
    d.post(
        0,
        Rqe {
            buffer_addr: RECV_AREA,
            buffer_length: 64,
            wr_id: 3,
        },
    );
    wi.psn = 301;
    d.send(&[wi]);
    assert_eq!(d.last_owed().kind, OWE_ACK);
    let l = *d.b.lookups.last().unwrap();
    assert!(l.invalidate && l.commit, "{l:?}");
    assert_eq!(d.b.lookups.len(), 2);
    // A plain RDMA WRITE needs no buffer: it always commits.
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 302, 24)]);
    assert!(d.b.lookups.last().unwrap().commit);
}

/// A SEND longer than its receive buffer writes exactly the buffer, completes with
/// LOCAL_LENGTH_ERROR and is NACKed INVALID_REQUEST; a misaligned buffer is not
/// written at all.
#[test]
fn send_longer_than_its_buffer_stops_at_the_end() {
    let mut d = Directed::new(1, false, 64, true);
    let canary = 0xC0C0_C0C0_C0C0_C0C0u64;
    for i in 0..64 {
        d.b.host_write(&mut d.m, RECV_AREA + 8 * i, canary);
    }
    d.post(
        0,
        Rqe {
            buffer_addr: RECV_AREA,
            buffer_length: 100,
            wr_id: 77,
        },
    );
    let send = d.msg(opcode::SEND, 0, 7, 300);
    d.send(std::slice::from_ref(&send));
    let span: Vec<(u32, u8)> =
        d.b.writes
            .iter()
            .map(|w| (w.addr - RECV_AREA, w.strobe))
            .collect();
    let want: Vec<(u32, u8)> = (0..13)
        .map(|k| (8 * k, if k == 12 { 0x0F } else { 0xFF }))
        .collect();
    assert_eq!(span, want);
    for i in 0..100u32 {
        let w = d.b.mem[&(RECV_AREA + (i & !7))];
        assert_eq!((w >> (8 * (i % 8))) as u8, send.payload[i as usize]);
    }
    assert_eq!(
        d.b.mem[&(RECV_AREA + 96)] >> 32,
        canary >> 32,
        "byte 100 on written"
    );
    for i in 13..64 {
        assert_eq!(d.b.mem[&(RECV_AREA + 8 * i)], canary, "word {i}");
    }
    let c = d.b.completions[0];
    assert_eq!(
        (c.status, c.byte_count, c.wr_id, c.wqe_index),
        (1, 300, 77, 0)
    );
    let o = d.last_owed();
    assert_eq!(
        (o.kind, o.syndrome, o.psn),
        (OWE_NACK, Syndrome::InvalidRequest as u8, 7)
    );
    assert_eq!(d.m.csr_read(0, REG_RQ_CI), 1);
    // A misaligned buffer: nothing written, status LOCAL_ADDRESS_ERROR.
    d.post(
        0,
        Rqe {
            buffer_addr: RECV_AREA + 0x804,
            buffer_length: 400,
            wr_id: 78,
        },
    );
    d.send(&[d.msg(opcode::SEND, 0, 8, 20)]);
    assert_eq!(d.b.writes.len(), 13);
    assert_eq!(d.b.completions[1].status, 3);
    assert_eq!(d.last_owed().syndrome, Syndrome::InvalidRequest as u8);
    // A SEND that fits, with immediate data, completes with success.
    d.post(
        0,
        Rqe {
            buffer_addr: RECV_AREA + 0x1000,
            buffer_length: 64,
            wr_id: 79,
        },
    );
    let mut s = d.msg(opcode::SEND_IMMEDIATE, 0, 9, 64);
    s.immediate = Some(0xABCD);
    d.send(&[s]);
    let c = d.b.completions[2];
    assert_eq!(
        (
            c.status,
            c.opcode,
            c.has_immediate,
            c.immediate,
            c.wqe_index
        ),
        (0, 1, true, 0xABCD, 2)
    );
    assert_eq!((c.src_node, c.src_qp), (REMOTE_NODE, 0x100));
    assert_eq!(d.last_owed().kind, OWE_ACK);
}

/// A duplicate atomic is answered with the saved original value and not executed
/// again; a duplicate of an older atomic is dropped.
#[test]
fn duplicate_atomic_is_answered_not_executed_twice() {
    let mut d = Directed::new(1, false, 8, true);
    let target = RDMA_AREA + 0x40;
    d.b.host_write(&mut d.m, target, 10);
    let atomic = |d: &Directed, op, psn, a: u64, b: u64| {
        let mut m = d.msg(op, 0, psn, 16);
        m.vaddr = target as u64;
        m.dma_length = 8;
        m.payload = [a.to_le_bytes(), b.to_le_bytes()].concat();
        m
    };
    d.send(&[atomic(&d, opcode::ATOMIC_FETCH_ADD, 40, 5, 0)]);
    assert_eq!(d.b.mem[&target], 15);
    let o = d.last_owed();
    assert_eq!((o.kind, o.psn, o.value), (OWE_ATOMIC_RESPONSE, 40, 10));
    let writes = d.b.writes.len();
    for _ in 0..2 {
        d.send(&[atomic(&d, opcode::ATOMIC_FETCH_ADD, 40, 5, 0)]);
        assert_eq!(d.b.mem[&target], 15, "executed twice");
        let o = d.last_owed();
        assert_eq!((o.kind, o.psn, o.value), (OWE_ATOMIC_RESPONSE, 40, 10));
    }
    assert_eq!(d.b.writes.len(), writes);
    // Compare-and-swap that matches, then one that does not (nothing written).
    d.send(&[atomic(&d, opcode::ATOMIC_COMPARE_SWAP, 41, 15, 99)]);
    assert_eq!(d.b.mem[&target], 99);
    assert_eq!(d.last_owed().value, 15);
    d.send(&[atomic(&d, opcode::ATOMIC_COMPARE_SWAP, 42, 15, 7)]);
    assert_eq!(d.b.mem[&target], 99);
    assert_eq!(d.last_owed().value, 99);
    assert_eq!(d.b.writes.len(), writes + 1);
    // The duplicate of an older atomic has no saved value: dropped.
    let (owed, dropped) = (d.b.owed.len(), d.m.dropped);
    d.send(&[atomic(&d, opcode::ATOMIC_COMPARE_SWAP, 41, 99, 1)]);
    assert_eq!(d.b.owed.len(), owed);
    assert_eq!(d.m.dropped, dropped + 1);
    assert_eq!(d.b.mem[&target], 99);
}

/// READ and atomic responses for this NIC's requests: written within the expected
/// length, then acknowledged with `response`; unexpected ones dropped.
#[test]
fn responses_are_written_within_the_expectation() {
    let mut d = Directed::new(2, false, 64, true);
    let e = Expectation {
        psn: 300,
        addr: RESPONSE_AREA,
        length: 20,
        atomic: false,
    };
    d.m.expect(1, e);
    d.b.expects.push_back((1, e));
    d.settle();
    let mut r = d.msg(opcode::RDMA_READ_RESPONSE, 1, 300, 100);
    d.send(&[r.clone()]);
    let strobes: Vec<u8> = d.b.writes.iter().map(|w| w.strobe).collect();
    assert_eq!(strobes, [0xFF, 0xFF, 0x0F]);
    assert_eq!(
        d.b.acks,
        [AckEvent {
            qp: 1,
            psn: 300,
            syndrome: 0,
            response: true,
            resync: false
        }]
    );
    // Again: the expectation is gone.
    d.send(&[r.clone()]);
    assert_eq!(d.b.acks.len(), 1);
    let e = Expectation {
        psn: 301,
        addr: RESPONSE_AREA + 64,
        length: 8,
        atomic: true,
    };
    d.m.expect(1, e);
    d.b.expects.push_back((1, e));
    r.psn = 301;
    d.send(&[r]);
    assert_eq!(
        d.b.acks.len(),
        1,
        "a READ response matched an atomic expectation"
    );
    d.send(&[d.msg(opcode::ATOMIC_RESPONSE, 1, 301, 8)]);
    assert_eq!(d.b.acks.len(), 2);
    assert_eq!(d.b.writes.last().unwrap().addr, RESPONSE_AREA + 64);
    // ACK and NACK cells become events; NACKs are counted by syndrome.
    let mut ack = d.msg(opcode::ACK, 0, 55, 0);
    ack.immediate = Some(0);
    let mut nack = d.msg(opcode::NACK, 0, 56, 0);
    nack.immediate = Some(Syndrome::RdmaDisabled as u32);
    d.send(&[ack, nack]);
    assert_eq!(
        d.b.acks[2],
        AckEvent {
            qp: 0,
            psn: 55,
            syndrome: 0,
            response: false,
            resync: false
        }
    );
    assert_eq!(d.b.acks[3].syndrome, 0x65);
    assert_eq!(d.b.uut.stat_nack_received_6.val().to_u32(), 1);
}

/// The multi-host scoreboard's bug: a responder QP that is not synced (reset by its
/// rebooted host) adopts the PSN of the next message it sees. The requests before it
/// were never applied (here: dropped while the rebooted driver still had the QP
/// disabled), so the answer to that message, ACK, NACK or response, is marked
/// resynced (it goes out with RESYNC); the requester must not take it as an
/// acknowledgement of the PSNs before it. That answer may be lost: every answer is
/// marked while the resync point is kept (until the expected PSN is more than
/// SEND_WINDOW past it), and a duplicate before it is answered like a request ahead
/// of the expected PSN (SEQUENCE_ERROR), never ACKed. A resync a RESYNC request asks
/// for is not marked. ACKs, NACKs and responses received with RESYNC are handed to
/// the requester as such.
#[test]
fn an_unsynced_qps_first_answer_is_marked_resynced() {
    let mut d = Directed::new(2, false, 64, true);
    let owed = |d: &Directed| {
        let o = d.last_owed();
        (o.kind, o.syndrome, o.psn, o.resync)
    };
    let disabled = Syndrome::RdmaDisabled as u8;
    let seq = Syndrome::SequenceError as u8;
    // Host 1 reboots: QP 0 reset and still disabled, RDMA off.
    d.b.set_enables(&mut d.m, true, false);
    d.b.csr_write(&mut d.m, 0, REG_QP_CTRL, 2);
    d.settle();
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 0xcce833, 16)]);
    assert!(d.b.owed.is_empty(), "dropped: the QP is disabled");
    d.b.csr_write(&mut d.m, 0, REG_QP_CTRL, 1);
    d.settle();
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 0xcce834, 16)]);
    assert_eq!(owed(&d), (OWE_NACK, disabled, 0xcce834, true));
    assert_eq!(d.expected_psn(0), 0xcce835);
    d.b.set_enables(&mut d.m, true, true);
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 0xcce835, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 0xcce835, true));
    let writes = d.b.writes.len();
    // The answers were lost: the requester goes back to 0xcce833. Before the resync
    // point: SEQUENCE_ERROR with the expected PSN, not an ACK. The refused PSN is
    // refused again, the applied one ACKed again; all marked.
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 0xcce833, 16)]);
    assert_eq!(owed(&d), (OWE_NACK, seq, 0xcce836, true));
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 0xcce834, 16)]);
    assert_eq!(owed(&d), (OWE_NACK, disabled, 0xcce834, true));
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 0xcce835, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 0xcce835, true));
    assert_eq!(d.b.writes.len(), writes, "a duplicate was applied");
    // Marked until the expected PSN is more than SEND_WINDOW past the resync point.
    for psn in 0xcce836..=0xcce834 + SEND_WINDOW + 1 {
        d.send(&[d.msg(opcode::RDMA_WRITE, 0, psn, 16)]);
        let marked = psn - 0xcce834 <= SEND_WINDOW;
        assert_eq!(owed(&d), (OWE_ACK, 0, psn, marked), "PSN {psn:#x}");
    }
    // An executed WRITE on an unsynced QP: its ACK is marked.
    d.b.csr_write(&mut d.m, 0, REG_QP_CTRL, 3);
    d.settle();
    d.send(&[d.msg(opcode::RDMA_WRITE, 0, 40, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 40, true));
    // A READ response and an atomic response (QP 1 never synced, then reset).
    let mut read = d.msg(opcode::RDMA_READ_REQUEST, 1, 500, 0);
    read.dma_length = 32;
    d.send(&[read]);
    assert_eq!(owed(&d), (OWE_READ_RESPONSE, 0, 500, true));
    d.b.csr_write(&mut d.m, 1, REG_QP_CTRL, 3);
    d.settle();
    let mut faa = d.msg(opcode::ATOMIC_FETCH_ADD, 1, 77, 16);
    faa.dma_length = 8;
    d.send(&[faa]);
    assert_eq!(owed(&d), (OWE_ATOMIC_RESPONSE, 0, 77, true));
    d.send(&[d.msg(opcode::RDMA_WRITE, 1, 78, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 78, true), "the resync point is kept");
    // A RESYNC request outside the window: the requester restarted its sequence there
    // (it sends RESYNC only at its oldest unacknowledged PSN): not marked, and the
    // resync point is forgotten. On an unsynced QP too.
    let mut w = d.msg(opcode::RDMA_WRITE, 1, 900, 16);
    w.resync = true;
    d.send(&[w]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 900, false));
    d.send(&[d.msg(opcode::RDMA_WRITE, 1, 901, 16)]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 901, false));
    assert_eq!(d.expected_psn(1), 902);
    d.b.csr_write(&mut d.m, 1, REG_QP_CTRL, 3);
    d.settle();
    let mut w = d.msg(opcode::RDMA_WRITE, 1, 300, 16);
    w.resync = true;
    d.send(&[w]);
    assert_eq!(owed(&d), (OWE_ACK, 0, 300, false));
    // Answers received with RESYNC reach the requester side marked.
    let mut ack = d.msg(opcode::ACK, 0, 41, 0);
    ack.immediate = Some(0);
    ack.resync = true;
    let mut nack = d.msg(opcode::NACK, 0, 42, 0);
    nack.immediate = Some(disabled as u32);
    nack.resync = true;
    let mut plain = d.msg(opcode::ACK, 0, 43, 0);
    plain.immediate = Some(0);
    d.send(&[ack, nack, plain]);
    let got: Vec<(u32, u8, bool)> =
        d.b.acks
            .iter()
            .map(|a| (a.psn, a.syndrome, a.resync))
            .collect();
    assert_eq!(got, [(41, 0, true), (42, disabled, true), (43, 0, false)]);
}

/// A QP reset while a message streams abandons it: no further writes, no
/// completion, no answer.
#[test]
fn qp_reset_abandons_the_message_in_progress() {
    let mut d = Directed::new(2, false, 64, true);
    d.post(
        1,
        Rqe {
            buffer_addr: RECV_AREA,
            buffer_length: 1000,
            wr_id: 5,
        },
    );
    d.settle();
    let msg = d.msg(opcode::SEND, 1, 20, 250);
    let o = outcomes_of(&mut d.reasm, &[msg], 64);
    assert_eq!(o.len(), 4);
    feed(&mut d.b, &mut d.m, &o[..2]);
    d.settle();
    assert_eq!(d.b.writes.len(), 16);
    d.b.csr_write(&mut d.m, 1, REG_QP_CTRL, 3);
    d.settle();
    feed(&mut d.b, &mut d.m, &o[2..]);
    d.settle();
    assert_eq!(d.b.writes.len(), 16);
    assert!(d.b.completions.is_empty() && d.b.owed.is_empty());
    for reg in [REG_RQ_PI, REG_RQ_CI, REG_QP_STATUS] {
        d.b.csr_read(&d.m, 1, reg);
    }
    assert_eq!(d.m.csr_read(1, REG_RQ_PI), 0);
    assert_eq!(d.m.csr_read(1, REG_RQ_CI), 0);
    // Unsynced; the PSN the abandoned message resynced the QP at stays readable.
    let status = csr::QpStatus::from_bits(d.m.csr_read(1, REG_QP_STATUS));
    assert!(!status.synced);
    assert_eq!(status.expected_psn, 20);
    d.settle();
}

/// A QP reset offered in the clock of a decision meets the decision's write-back (which
/// reaches the per-QP RAMs the clock after, `QpWriteBack`): the CSR port waits for it, so
/// the reset lands after the write-back and wins. Judged at the boundary: the WRITE whose
/// beat was taken before the reset is written and never answered, the QP reads unsynced
/// at the PSN the decision resynced it at, and the next request at another PSN is adopted by a
/// resync (written, ACKed with RESYNC). Were the reset taken in the write-back clock, the
/// decision's `synced` set would survive it and that request would be NACKed
/// SEQUENCE_ERROR instead.
#[test]
fn a_qp_reset_right_after_a_decision_lands_after_its_write_back() {
    let mut d = Directed::new(2, false, 64, false);
    let msg = d.msg(opcode::RDMA_WRITE, 0, 10, 8);
    let o = outcomes_of(&mut d.reasm, &[msg], 64);
    assert_eq!(o.len(), 1);
    d.b.push_outcome(&o[0]);
    let start = d.b.cycle;
    while d.b.uut.responder_state() != ResponderState::Decide {
        assert!(d.b.cycle - start < 20, "no decision");
        d.b.cycle();
    }
    // Offered from the decision's clock on (every ready high: taken as soon as the port
    // is open). QP_CTRL: enable and reset.
    d.b.csr_ops.push_back(CsrOp {
        write: true,
        qp: 0,
        reg: REG_QP_CTRL,
        data: 3,
    });
    d.b.quiesce(1000);
    assert_eq!(
        d.b.writes,
        [DmaWrite::new(
            RDMA_AREA,
            u64::from_le_bytes(o[0].payload[..8].try_into().unwrap()),
            0xFF
        )],
        "the beat taken before the reset is written, nothing else"
    );
    assert!(
        d.b.owed.is_empty() && d.b.completions.is_empty(),
        "the abandoned WRITE is not answered: {:?}",
        d.b.owed
    );
    d.b.csr_ops.push_back(CsrOp {
        write: false,
        qp: 0,
        reg: REG_QP_STATUS,
        data: 0,
    });
    d.b.quiesce(1000);
    let status = csr::QpStatus::from_bits(d.b.csr_results.last().unwrap().1);
    assert!(!status.synced, "the reset cleared synced");
    // The decision's resync to 10 was written back (the WRITE, abandoned, never commits).
    assert_eq!(
        status.expected_psn, 10,
        "the PSN the decision resynced at is kept"
    );
    // The next request, at another PSN: adopted by a resync.
    let next = d.msg(opcode::RDMA_WRITE, 0, 50, 8);
    let o = outcomes_of(&mut d.reasm, &[next], 64);
    d.b.push_outcome(&o[0]);
    d.b.quiesce(1000);
    let got: Vec<(u8, u8, u32, bool)> =
        d.b.owed
            .iter()
            .map(|a| (a.kind, a.syndrome, a.psn, a.resync))
            .collect();
    assert_eq!(got, [(OWE_ACK, 0, 50, true)], "the reset QP resyncs at 50");
    assert_eq!(d.b.writes.len(), 2, "the resynced WRITE is written");
}

/// A failover (docs/multi-nic.md): the old NIC's queue pair is reset, which keeps its
/// expected PSN readable, and the new NIC's queue pair resumes there (QP_CTRL bit 3).
/// A SEND the old NIC delivered, resent to the new one because its ACK was lost, is not
/// delivered again: it is answered SEQUENCE_ERROR with the resumed PSN, marked RESYNC
/// (the requester completes it RESPONDER_RESTARTED, not success). The resumed PSN
/// executes, its ACK marked until the expected PSN is past the window. Without the
/// resume the duplicate is delivered a second time.
#[test]
fn a_resumed_qp_does_not_deliver_again_what_the_old_nic_delivered() {
    let rqe = |i: u32| Rqe {
        buffer_addr: RECV_AREA + 0x100 * i,
        buffer_length: 0x100,
        wr_id: i as u64,
    };
    let seq = Syndrome::SequenceError as u8;
    // The old NIC: SENDs 500..=502 delivered (the first restarts the sequence).
    let mut old = Directed::new(1, false, 64, true);
    for i in 0..3 {
        old.post(0, rqe(i));
    }
    let mut first = old.msg(opcode::SEND, 0, 500, 24);
    first.resync = true;
    old.send(&[
        first,
        old.msg(opcode::SEND, 0, 501, 24),
        old.msg(opcode::SEND, 0, 502, 24),
    ]);
    assert_eq!(old.b.completions.len(), 3);
    old.b
        .csr_write(&mut old.m, 0, REG_QP_CTRL, csr::QP_CTRL_RESET);
    old.b.csr_read(&old.m, 0, REG_QP_STATUS);
    old.settle();
    let status = csr::QpStatus::from_bits(old.m.csr_read(0, REG_QP_STATUS));
    assert_eq!((status.synced, status.expected_psn), (false, 503));
    for resume in [true, false] {
        let mut new = Directed::new(1, false, 64, true);
        new.b
            .csr_write(&mut new.m, 0, REG_QP_CTRL, csr::QP_CTRL_RESET);
        if resume {
            new.b.csr_write(
                &mut new.m,
                0,
                REG_QP_CTRL,
                csr::QP_CTRL_RESUME | (status.expected_psn as u64) << 8,
            );
        }
        new.b
            .csr_write(&mut new.m, 0, REG_QP_CTRL, csr::QP_CTRL_ENABLE);
        new.settle();
        for i in 0..2 {
            new.post(0, rqe(i));
        }
        // 502's ACK was lost: the requester resends it through the new route.
        new.send(&[new.msg(opcode::SEND, 0, 502, 24)]);
        if !resume {
            assert_eq!(new.b.completions.len(), 1, "delivered a second time");
            continue;
        }
        assert!(new.b.completions.is_empty(), "delivered a second time");
        assert!(new.b.writes.is_empty());
        let o = new.last_owed();
        assert_eq!(
            (o.kind, o.syndrome, o.psn, o.resync),
            (OWE_NACK, seq, 503, true)
        );
        // The next PSN executes; its ACK carries RESYNC while the resume point is kept.
        new.send(&[new.msg(opcode::SEND, 0, 503, 24)]);
        assert_eq!(new.b.completions.len(), 1);
        let o = new.last_owed();
        assert_eq!((o.kind, o.psn, o.resync), (OWE_ACK, 503, true));
        let status = csr::QpStatus::from_bits(new.m.csr_read(0, REG_QP_STATUS));
        assert_eq!((status.synced, status.expected_psn), (true, 504));
    }
}

/// CSR accesses and expect events are served while a long message streams, and the
/// stream keeps its pace.
#[test]
fn csr_and_expect_events_are_served_during_a_stream() {
    let mut d = Directed::new(4, false, 256, false);
    let w = d.msg(opcode::RDMA_WRITE, 0, 1, 4096);
    let o = outcomes_of(&mut d.reasm, &[w], 256);
    feed(&mut d.b, &mut d.m, &o);
    for _ in 0..20 {
        d.b.cycle();
    }
    for k in 0..40u64 {
        let qp = 1 + (k % 3) as usize;
        if k % 2 == 0 {
            d.b.csr_write(&mut d.m, qp, REG_RQ_PI, k);
        }
        d.b.csr_read(&d.m, qp, REG_RQ_PI);
        let e = Expectation {
            psn: k as u32,
            addr: RESPONSE_AREA,
            length: 8,
            atomic: k % 3 == 0,
        };
        d.m.expect(qp, e);
        d.b.expects.push_back((qp, e));
    }
    let start = d.b.cycle;
    while !d.b.csr_ops.is_empty() || !d.b.csr_expected.is_empty() || !d.b.expects.is_empty() {
        d.b.cycle();
    }
    assert!(
        d.b.cycle - start <= 62,
        "{} clocks for 60 CSR accesses",
        d.b.cycle - start
    );
    assert!(
        !d.b.beats.is_empty(),
        "the stream ended before the CSR accesses"
    );
    d.settle();
    let c = &d.b.write_cycles;
    assert_eq!(c.len(), 512);
    assert_eq!(c[511] - c[0], 511, "the stream paused");
}

/// A long RDMA WRITE stream is written at one word per clock: back-to-back messages
/// of 16 cells, each message costing only a few clocks of decision and state update.
#[test]
fn write_stream_runs_at_one_word_per_clock() {
    let mut d = Directed::new(2, false, 256, false);
    let msgs: Vec<Message> = (0..4)
        .map(|k| {
            let mut w = d.msg(opcode::RDMA_WRITE, (k % 2) as usize, 1000 + k / 2, 4096);
            w.vaddr += 0x2000 * k as u64;
            w
        })
        .collect();
    let o = outcomes_of(&mut d.reasm, &msgs, 256);
    feed(&mut d.b, &mut d.m, &o);
    d.settle();
    let c = &d.b.write_cycles;
    assert_eq!(c.len(), 4 * 512);
    for m in 0..4 {
        let s = &c[512 * m..512 * (m + 1)];
        assert_eq!(s[511] - s[0], 511, "message {m}: a gap in its stream");
    }
    let total = c[c.len() - 1] - c[0] + 1;
    eprintln!("stream: {total} clocks for 2048 words");
    assert!(total <= 4 * 512 + 3 * 8, "{total} clocks for 2048 words");
    assert_eq!(d.b.owed.iter().filter(|o| o.kind == OWE_ACK).count(), 4);
}

/// A `CellReassembler` in front: the engine takes every beat as soon as it is offered
/// except while it decides a message's first cell.
#[derive(LogicBlock)]
struct WithReassembler {
    clock: Signal<In, Clock>,
    reassembler: nic_rtl::CellReassembler,
    engine: ReceiveQueueEngine,
}

impl Logic for WithReassembler {
    fn update(&mut self) {
        let r = &mut self.reassembler;
        let e = &mut self.engine;
        r.clock.next = self.clock.val();
        e.clock.next = self.clock.val();
        e.s_rx_data.next = r.m_data.val();
        e.s_rx_bytes.next = r.m_bytes.val();
        e.s_rx_valid.next = r.m_valid.val();
        r.m_ready.next = e.s_rx_ready.val();
        e.s_rx_last.next = r.m_last.val();
        e.s_rx_outcome.next = r.m_outcome.val();
        e.s_rx_class.next = OutcomeClass::of(&r.m_outcome.val());
    }
}

impl ClockedBlock for WithReassembler {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[test]
fn keeps_up_with_the_reassembler() {
    let mut uut = WithReassembler {
        clock: Default::default(),
        reassembler: nic_rtl::CellReassembler::new(256),
        engine: ReceiveQueueEngine::new(2, false),
    };
    uut.connect_all();
    let e = &mut uut.engine;
    e.cfg_node_id.next = (NODE as u64).to_bits();
    e.cfg_enable_send_recv.next = true;
    e.cfg_enable_rdma.next = true;
    e.m_wr_ready.next = true;
    e.m_owe_ready.next = true;
    e.m_ack_ready.next = true;
    e.m_cpl_ready.next = true;
    uut.reassembler.reset.next = true;
    e.reset.next = true;
    tick(&mut uut);
    uut.reassembler.reset.next = false;
    uut.engine.reset.next = false;
    for _ in 0..70 {
        tick(&mut uut);
    }
    let csr = |uut: &mut WithReassembler, reg: u8, data: u64| {
        let e = &mut uut.engine;
        e.s_csr_valid.next = true;
        e.s_csr_write.next = true;
        e.s_csr_qp.next = 0.into();
        e.s_csr_reg.next = (reg as u64).to_bits();
        e.s_csr_wdata.next = data.to_bits();
        tick(uut);
        uut.engine.s_csr_valid.next = false;
    };
    csr(&mut uut, REG_QP_REMOTE, REMOTE_NODE as u64 | 0x100 << 16);
    csr(&mut uut, REG_QP_CTRL, 1);
    let msgs: Vec<Message> = (0..3)
        .map(|k| Message {
            opcode: opcode::RDMA_WRITE,
            dest_node: NODE,
            src_node: REMOTE_NODE,
            dest_qp: 0,
            src_qp: 0x100,
            psn: 10 + k,
            vaddr: RDMA_AREA as u64 + 0x4000 * k as u64,
            stag: 0,
            dma_length: 2048,
            immediate: None,
            invalidate: false,
            resync: k == 0,
            payload: (0..2048).map(|i| (i as u32 * 13 + k) as u8).collect(),
        })
        .collect();
    let words: Vec<(u64, bool)> = msgs
        .iter()
        .flat_map(|m| encode_message(m, 256).unwrap())
        .flat_map(|c| {
            let n = c.len();
            c.into_iter().enumerate().map(move |(i, w)| (w, i + 1 == n))
        })
        .collect();
    let (mut next, mut writes, mut stalls, mut first_cell_stalls) = (0, 0usize, 0, 0);
    let mut cycles = 0;
    while writes < 3 * 256 {
        cycles += 1;
        assert!(cycles < 10_000, "stalled after {writes} writes");
        let r = &mut uut.reassembler;
        r.s_cell_valid.next = next < words.len();
        if next < words.len() {
            r.s_cell_data.next = words[next].0.to_bits();
            r.s_cell_last.next = words[next].1;
        }
        settle(&mut uut);
        if uut.reassembler.s_cell_valid.val() && uut.reassembler.s_cell_ready.val() {
            next += 1;
        }
        let e = &uut.engine;
        if e.s_rx_valid.val() && !e.s_rx_ready.val() {
            if e.s_rx_outcome.val().flags.get_bit(0) {
                first_cell_stalls += 1;
            } else {
                stalls += 1;
            }
        }
        if e.m_wr_valid.val() {
            writes += 1;
        }
        tick(&mut uut);
    }
    eprintln!("reassembler: {cycles} clocks, {first_cell_stalls} first-cell stalls");
    assert_eq!(stalls, 0, "the engine held up continuation cells");
    assert!(
        first_cell_stalls <= 3 * 3,
        "{first_cell_stalls} clocks deciding 3 messages"
    );
    assert_eq!(uut.reassembler.stat_cells_ok.val().to_u32(), 24);
}

/// Reset clears every queue pair's registers and the counters.
#[test]
fn reset_clears_the_queue_pairs() {
    let mut d = Directed::new(3, false, 64, false);
    d.post(
        2,
        Rqe {
            buffer_addr: RECV_AREA,
            buffer_length: 64,
            wr_id: 5,
        },
    );
    d.send(&[d.msg(opcode::SEND, 2, 9, 8)]);
    assert_eq!(d.m.csr_read(2, REG_RQ_CI), 1);
    d.b.uut.reset.next = true;
    d.b.cycle();
    d.b.uut.reset.next = false;
    let mut fresh = ResponderModel::new(3, NODE, None);
    fresh.mem = d.m.mem.clone();
    for qp in 0..3 {
        for reg in [
            REG_RQ_BASE,
            REG_RQ_SIZE_LOG2,
            REG_RQ_PI,
            REG_RQ_CI,
            REG_QP_STATUS,
        ] {
            d.b.csr_read(&fresh, qp, reg);
        }
    }
    d.b.quiesce(1000);
    for (op, got, want) in &d.b.csr_results {
        assert_eq!(got, want, "{op:?} after reset");
    }
    assert_eq!(d.b.uut.stat_messages_received.val().to_u32(), 0);
    // A QP is disabled after reset: requests are dropped.
    d.b.outcomes.clear();
    let msg = d.msg(opcode::SEND, 2, 10, 8);
    let o = outcomes_of(&mut d.reasm, &[msg], 64);
    for x in &o {
        d.b.push_outcome(x);
    }
    d.b.quiesce(1000);
    assert_eq!(d.b.uut.stat_dropped.val().to_u32(), 1);
}

/// A longer soak over many seeds and configurations (`cargo test --release -p nic-rtl
/// --test receive_queue_engine soak -- --ignored`).
#[test]
#[ignore]
fn soak() {
    let seeds: u64 = std::env::var("RQ_SOAK_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(24);
    for seed in 100..100 + seeds {
        let qps = [1usize, 2, 5, 64][seed as usize % 4];
        let cell_payload = [8usize, 16, 64, 256][(seed as usize / 4) % 4];
        random_run(seed, qps, seed % 3 == 0, cell_payload, 300, seed % 5 != 0);
    }
}

#[test]
fn synthesises() {
    let mut uut = ReceiveQueueEngine::new(8, true);
    uut.connect_all();
    let v = generate_verilog(&uut);
    yosys_validate("nic_rtl_receive_queue_engine", &v).expect("yosys accepts ReceiveQueueEngine");
}

/// The Verilog of two configurations, in `target/verilog/rtl-tests/` for
/// `verilator --lint-only -Wall` with `rtl/lint/verilator_waiver.vlt`.
#[test]
fn exports_verilog() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/verilog/rtl-tests");
    std::fs::create_dir_all(&dir).unwrap();
    for (qps, tpt) in [(4usize, false), (64, true)] {
        let mut uut = ReceiveQueueEngine::new(qps, tpt);
        uut.connect_all();
        let v = generate_verilog(&uut);
        assert!(v.contains("module top"));
        let mut nack = NackGenerator::new();
        nack.connect_all();
        std::fs::write(dir.join("nic_nack_generator.v"), generate_verilog(&nack)).unwrap();
        let name = format!(
            "nic_receive_queue_engine_{qps}qp_{}.v",
            if tpt { "tpt" } else { "notpt" }
        );
        std::fs::write(dir.join(name), v).unwrap();
    }
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64, got 0")]
fn rejects_zero_queue_pairs() {
    ReceiveQueueEngine::new(0, false);
}

#[test]
#[should_panic(expected = "queue_pairs must be between 1 and 64, got 65")]
fn rejects_too_many_queue_pairs() {
    ReceiveQueueEngine::new(65, true);
}
