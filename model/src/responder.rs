//! Plain-Rust reference model of [`nic_rtl::ReceiveQueueEngine`], message by message.
//!
//! Written from `docs/nic-architecture.md` ("Reliability") and the engine's documented
//! choices, independently of the RTL: given host memory, the queue pairs' configuration
//! and a stream of received-cell outcomes ([`nic_rtl::cell::format::CellOutcome`], as the
//! reassembler reports them), it produces the host-memory writes, the completion
//! requests, the owed responses, the acknowledgement events, the TPT lookups and the
//! counters the engine must produce, in order per output.

use nic_abi::{
    csr, psn_distance, AethRefusals, Syndrome, AETH_REFUSALS_REPORTED, AETH_REFUSALS_SHIFT,
    PSN_MASK, SEND_WINDOW,
};
use nic_rtl::cell::format::{flag, opcode, CellOutcome, CellStatus};
use std::collections::HashMap;

/// Owed response kinds (`m_owe.kind`).
pub const OWE_ACK: u8 = 0;
pub const OWE_NACK: u8 = 1;
pub const OWE_READ_RESPONSE: u8 = 2;
pub const OWE_ATOMIC_RESPONSE: u8 = 3;

/// Per-QP register numbers on the CSR side port.
pub const REG_RQ_BASE: u8 = 4;
pub const REG_RQ_SIZE_LOG2: u8 = 5;
pub const REG_RQ_PI: u8 = 6;
pub const REG_RQ_CI: u8 = 7;
pub const REG_QP_REMOTE: u8 = 8;
pub const REG_QP_CTRL: u8 = 9;
pub const REG_QP_STATUS: u8 = 10;

/// One DMA write: 8-aligned address, the word with bytes outside `strobe` zeroed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaWrite {
    pub addr: u32,
    pub data: u64,
    pub strobe: u8,
}

impl DmaWrite {
    pub fn new(addr: u32, data: u64, strobe: u8) -> Self {
        DmaWrite {
            addr,
            data: data & strobe_mask(strobe),
            strobe,
        }
    }
}

/// The 64-bit mask of the bytes `strobe` enables.
pub fn strobe_mask(strobe: u8) -> u64 {
    (0..8)
        .filter(|i| strobe >> i & 1 != 0)
        .fold(0u64, |m, i| m | 0xFF << (8 * i))
}

/// An owed response, with the fields that matter for its kind (others zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Owed {
    pub qp: u8,
    pub kind: u8,
    pub psn: u32,
    pub syndrome: u8,
    pub addr: u32,
    pub length: u32,
    pub value: u64,
    pub dest_node: u16,
    pub dest_qp: u16,
    /// The request's PSN was adopted by a resync (`m_owe.resync`): the answer carries RESYNC.
    pub resync: bool,
    /// ACK and NACK: the AETH's refusal bits 28:8 (`m_owe.refusal`, see
    /// [`nic_abi::AethRefusals`]): the QP's refused PSNs among the 7 before `psn`.
    pub refusal: u32,
}

impl Owed {
    /// Zero the fields `kind` does not use.
    pub fn normalised(mut self) -> Self {
        if self.kind != OWE_READ_RESPONSE {
            self.addr = 0;
            self.length = 0;
        }
        if self.kind != OWE_ATOMIC_RESPONSE {
            self.value = 0;
        }
        if self.kind != OWE_NACK && !(self.kind == OWE_ACK && self.syndrome != 0) {
            self.syndrome = 0;
        }
        if self.kind != OWE_ACK && self.kind != OWE_NACK {
            self.refusal = 0;
        }
        self
    }
}

/// The AETH refusal bits (28:8, as `m_owe.refusal`) of an answer to `psn`, given the QP's
/// refused PSNs in the answer's PSN sequence: an answer acknowledges the PSNs before its
/// own, so it reports the refusals among them (the requester may have lost those NACKs).
fn refusal_bits(refused: &[(u32, Syndrome)], psn: u32) -> u32 {
    let mut report = AethRefusals::default();
    for &(r, s) in refused {
        let distance = psn_distance(psn, r) as usize;
        if (1..=AETH_REFUSALS_REPORTED).contains(&distance) {
            report.0[distance - 1] = Some(s);
        }
    }
    report.to_aeth() >> AETH_REFUSALS_SHIFT
}

/// An acknowledgement event for the requester.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckEvent {
    pub qp: u8,
    pub psn: u32,
    pub syndrome: u8,
    pub response: bool,
    /// The answer carried the RESYNC flag (`m_ack.resync`).
    pub resync: bool,
}

/// A receive completion request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub opcode: u8,
    pub status: u8,
    pub qp: u8,
    pub has_immediate: bool,
    pub byte_count: u32,
    pub wqe_index: u32,
    pub src_node: u16,
    pub src_qp: u16,
    pub wr_id: u64,
    pub immediate: u32,
}

/// A TPT lookup request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TptLookup {
    pub stag: u32,
    pub vaddr: u64,
    pub length: u32,
    pub access: u8,
    pub invalidate: bool,
    pub qp: u8,
    /// False when the request is refused anyway if it passes (RECEIVER_NOT_READY): the
    /// TPT must not use up the entry.
    pub commit: bool,
}

/// The TPT's answer: `Some(physical address)` when the check passes.
pub type TptFunction = fn(&TptLookup) -> Option<u32>;

/// An expected response (set by the requester before it sends a READ or atomic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expectation {
    pub psn: u32,
    pub addr: u32,
    pub length: u32,
    pub atomic: bool,
}

/// Responder state of one queue pair.
#[derive(Clone, Debug, Default)]
pub struct QpState {
    pub rq_base: u32,
    pub rq_size_log2: u8,
    pub rq_pi: u32,
    pub rq_ci: u32,
    /// QP_REMOTE: node 15:0, queue pair 31:16.
    pub remote: u32,
    pub enabled: bool,
    pub expected_psn: u32,
    pub synced: bool,
    pub nak_sent: bool,
    /// Refused PSNs (a NACK that consumed them) and their syndromes, each forgotten on a
    /// resync and once the expected PSN is more than `SEND_WINDOW` past it.
    pub refused: Vec<(u32, Syndrome)>,
    /// Resync point: the PSN the QP last resynced at, forgotten once the expected PSN is
    /// more than `SEND_WINDOW` past it. While it is kept every answer carries RESYNC, and
    /// a duplicate before it is answered like a request ahead of the expected PSN.
    pub resync_psn: Option<u32>,
    /// Last executed atomic: PSN and original value.
    pub atomic: Option<(u32, u64)>,
    pub expect: Option<Expectation>,
}

impl QpState {
    /// Forget the refused PSNs the requester can no longer retransmit.
    fn prune_refused(&mut self) {
        let expected = self.expected_psn;
        self.refused
            .retain(|&(psn, _)| psn_distance(expected, psn) <= SEND_WINDOW);
    }

    /// Forget the resync point once the requester can have nothing before it outstanding.
    fn prune_resync(&mut self) {
        if let Some(psn) = self.resync_psn {
            if psn_distance(self.expected_psn, psn) > SEND_WINDOW {
                self.resync_psn = None;
            }
        }
    }

    fn rqe_addr(&self) -> u32 {
        let mask = if self.rq_size_log2 >= 32 {
            u32::MAX
        } else {
            (1u32 << self.rq_size_log2).wrapping_sub(1)
        };
        self.rq_base.wrapping_add((self.rq_ci & mask) << 5)
    }
}

/// What the current message's payload does.
#[derive(Clone, Debug)]
enum Mode {
    Discard,
    /// Written at `base + offset`, bytes below `limit` only; then `end`.
    Write {
        base: u32,
        limit: u32,
        end: End,
    },
    /// Atomic: operands collected, executed at the end.
    Atomic {
        qp: usize,
        paddr: u32,
        psn: u32,
        opcode: u8,
        operands: [u64; 2],
        dest: (u16, u16),
        resync: bool,
    },
}

#[derive(Clone, Debug)]
enum End {
    /// A SEND / WRITE: commit, owe `owe`, complete when `completion`.
    Execute {
        qp: usize,
        owe: Owed,
        completion: Option<Completion>,
    },
    /// A read or atomic response for this NIC's own request.
    Response { qp: usize, psn: u32, resync: bool },
}

/// The responder model.
pub struct ResponderModel {
    pub queue_pairs: usize,
    pub node_id: u16,
    pub enable_send_recv: bool,
    pub enable_rdma: bool,
    /// `slot_busy` input, one bit per QP.
    pub slot_busy: u64,
    pub tpt: Option<TptFunction>,
    pub qps: Vec<QpState>,
    /// Host memory by 8-aligned word address (absent words read as 0).
    pub mem: HashMap<u32, u64>,
    mode: Mode,
    /// QP of the message in progress (for the abandon-on-reset rule).
    current_qp: Option<usize>,
    pub writes: Vec<DmaWrite>,
    pub owed: Vec<Owed>,
    pub acks: Vec<AckEvent>,
    pub completions: Vec<Completion>,
    pub lookups: Vec<TptLookup>,
    pub messages_received: u32,
    pub dropped: u32,
    pub nack_received: [u32; 8],
}

fn is_request(op: u8) -> bool {
    matches!(op, 0x00 | 0x01 | 0x10..=0x14)
}

impl ResponderModel {
    pub fn new(queue_pairs: usize, node_id: u16, tpt: Option<TptFunction>) -> Self {
        ResponderModel {
            queue_pairs,
            node_id,
            enable_send_recv: true,
            enable_rdma: true,
            slot_busy: 0,
            tpt,
            qps: vec![QpState::default(); queue_pairs],
            mem: HashMap::new(),
            mode: Mode::Discard,
            current_qp: None,
            writes: vec![],
            owed: vec![],
            acks: vec![],
            completions: vec![],
            lookups: vec![],
            messages_received: 0,
            dropped: 0,
            nack_received: [0; 8],
        }
    }

    pub fn read_word(&self, addr: u32) -> u64 {
        *self.mem.get(&(addr & !7)).unwrap_or(&0)
    }

    fn write(&mut self, addr: u32, data: u64, strobe: u8) {
        let w = DmaWrite::new(addr, data, strobe);
        let mask = strobe_mask(strobe);
        let old = self.read_word(addr);
        self.mem.insert(addr & !7, (old & !mask) | w.data);
        self.writes.push(w);
    }

    fn busy(&self, qp: usize) -> bool {
        self.slot_busy >> qp & 1 != 0
    }

    /// A write on the per-QP CSR side port.
    pub fn csr_write(&mut self, qp: usize, reg: u8, value: u64) {
        if qp >= self.queue_pairs {
            return;
        }
        let q = &mut self.qps[qp];
        match reg {
            REG_RQ_BASE => q.rq_base = value as u32,
            REG_RQ_SIZE_LOG2 => q.rq_size_log2 = (value & 0x1F) as u8,
            REG_RQ_PI => q.rq_pi = value as u32 & PSN_MASK,
            REG_QP_REMOTE => q.remote = value as u32,
            REG_QP_CTRL => {
                q.enabled = value & csr::QP_CTRL_ENABLE != 0;
                let psn = (value >> csr::QP_CTRL_START_PSN_SHIFT) as u32 & PSN_MASK;
                if value & csr::QP_CTRL_RESET != 0 {
                    // The expected PSN stays readable in QP_STATUS; unsynced, it is not used.
                    q.rq_pi = 0;
                    q.rq_ci = 0;
                    q.synced = false;
                    q.nak_sent = false;
                    q.refused.clear();
                    q.resync_psn = None;
                    q.atomic = None;
                    q.expect = None;
                }
                if value & csr::QP_CTRL_RESUME != 0 {
                    // Take up a sequence another NIC was receiving: `psn` is expected and
                    // is the resync point (nothing before it is executed again).
                    q.expected_psn = psn;
                    q.synced = true;
                    q.nak_sent = false;
                    q.refused.clear();
                    q.resync_psn = Some(psn);
                }
                if value & (csr::QP_CTRL_RESET | csr::QP_CTRL_RESUME) != 0
                    && self.current_qp == Some(qp)
                {
                    // The message in progress is abandoned.
                    self.mode = Mode::Discard;
                    self.current_qp = None;
                }
            }
            _ => {}
        }
    }

    /// A read on the per-QP CSR side port.
    pub fn csr_read(&self, qp: usize, reg: u8) -> u64 {
        if qp >= self.queue_pairs {
            return 0;
        }
        let q = &self.qps[qp];
        match reg {
            REG_RQ_BASE => q.rq_base as u64,
            REG_RQ_SIZE_LOG2 => q.rq_size_log2 as u64,
            REG_RQ_PI => q.rq_pi as u64,
            REG_RQ_CI => q.rq_ci as u64,
            REG_QP_STATUS => (q.expected_psn as u64) << 24 | (q.synced as u64) << 48,
            _ => 0,
        }
    }

    /// An expect event from the requester.
    pub fn expect(&mut self, qp: usize, e: Expectation) {
        if qp < self.queue_pairs {
            self.qps[qp].expect = Some(e);
        }
    }

    /// One outcome of the reassembler.
    pub fn outcome(&mut self, o: &CellOutcome) {
        let h = &o.header;
        if o.status != CellStatus::Ok || h.flags & flag::RESERVED_MASK != 0 {
            self.mode = Mode::Discard;
            self.current_qp = None;
            self.failed_cell(o);
            return;
        }
        if h.first() && h.cell_seq == 0 {
            self.mode = Mode::Discard;
            self.current_qp = None;
            self.first_cell(o);
        }
        // Payload words.
        let mut words = o.payload.chunks(8).enumerate();
        match &mut self.mode {
            Mode::Discard => {}
            Mode::Write { base, limit, .. } => {
                let (base, limit) = (*base, *limit);
                for (k, chunk) in words.by_ref() {
                    let offset = o.offset.wrapping_add(8 * k as u32);
                    let room = limit.saturating_sub(offset).min(8) as usize;
                    let n = chunk.len().min(room);
                    let strobe = ((1u16 << n) - 1) as u8;
                    if strobe != 0 {
                        let mut b = [0u8; 8];
                        b[..chunk.len()].copy_from_slice(chunk);
                        self.write(base.wrapping_add(offset), u64::from_le_bytes(b), strobe);
                    }
                }
            }
            Mode::Atomic { operands, .. } => {
                for (k, chunk) in words.by_ref() {
                    let offset = o.offset as usize + 8 * k;
                    let mut b = [0u8; 8];
                    b[..chunk.len()].copy_from_slice(chunk);
                    if offset == 0 || offset == 8 {
                        operands[offset / 8] = u64::from_le_bytes(b);
                    }
                }
            }
        }
        if h.last() {
            self.messages_received += 1;
            let mode = std::mem::replace(&mut self.mode, Mode::Discard);
            self.current_qp = None;
            self.end_message(mode, o.immediate);
        }
    }

    fn failed_cell(&mut self, o: &CellOutcome) {
        let h = &o.header;
        let qp = h.dest_qp as usize;
        if h.dest_node != self.node_id || qp >= self.queue_pairs || !is_request(h.opcode) {
            return;
        }
        let q = &mut self.qps[qp];
        let source = h.src_node as u32 | (h.src_qp as u32) << 16;
        // Owed even while the slot is busy: it waits behind the slot's item.
        if q.enabled && q.remote == source && q.synced && !q.nak_sent {
            q.nak_sent = true;
            let psn = q.expected_psn;
            let marked = q.resync_psn.is_some();
            let refusal = refusal_bits(&q.refused, psn);
            self.owe(
                qp,
                h.src_node,
                h.src_qp,
                OWE_NACK,
                psn,
                Syndrome::CrcOrMalformed,
            );
            let ow = self.owed.last_mut().unwrap();
            ow.resync = marked;
            ow.refusal = refusal;
        }
    }

    fn owe(&mut self, qp: usize, node: u16, src_qp: u16, kind: u8, psn: u32, s: Syndrome) {
        self.owed.push(Owed {
            qp: qp as u8,
            kind,
            psn,
            syndrome: s as u8,
            dest_node: node,
            dest_qp: src_qp,
            ..Default::default()
        });
    }

    fn first_cell(&mut self, o: &CellOutcome) {
        let h = o.header;
        let qp = h.dest_qp as usize;
        let qp_ok = h.dest_node == self.node_id
            && qp < self.queue_pairs
            && self.qps[qp].enabled
            && self.qps[qp].remote == (h.src_node as u32 | (h.src_qp as u32) << 16);
        if h.dest_node != self.node_id {
            self.dropped += 1;
            return;
        }
        match h.opcode {
            opcode::ACK | opcode::NACK => {
                if !qp_ok {
                    self.dropped += 1;
                    return;
                }
                let syndrome = o.immediate as u8;
                // The refusals the AETH reports come first, oldest first, each as its
                // own final NACK.
                for (psn, s) in AethRefusals::from_aeth(o.immediate).oldest_first(h.psn) {
                    self.acks.push(AckEvent {
                        qp: qp as u8,
                        psn,
                        syndrome: s as u8,
                        response: false,
                        resync: h.flags & flag::RESYNC != 0,
                    });
                }
                self.acks.push(AckEvent {
                    qp: qp as u8,
                    psn: h.psn,
                    syndrome,
                    response: false,
                    resync: h.flags & flag::RESYNC != 0,
                });
                if h.opcode == opcode::NACK {
                    if let Some(i) = Syndrome::from_code(syndrome).and_then(|s| s.counter_index()) {
                        self.nack_received[i] += 1;
                    }
                }
            }
            opcode::RDMA_READ_RESPONSE | opcode::ATOMIC_RESPONSE => {
                let atomic = h.opcode == opcode::ATOMIC_RESPONSE;
                match (qp_ok, qp_ok.then(|| self.qps[qp].expect).flatten()) {
                    (true, Some(e))
                        if e.psn == h.psn && e.atomic == atomic && e.addr.is_multiple_of(8) =>
                    {
                        self.current_qp = Some(qp);
                        self.mode = Mode::Write {
                            base: e.addr,
                            limit: if atomic { e.length.min(8) } else { e.length },
                            end: End::Response {
                                qp,
                                psn: h.psn,
                                resync: h.flags & flag::RESYNC != 0,
                            },
                        };
                    }
                    _ => self.dropped += 1,
                }
            }
            _ => self.request(o, qp_ok),
        }
    }

    /// Rules 1-7 for a request's first cell.
    fn request(&mut self, o: &CellOutcome, qp_ok: bool) {
        let h = o.header;
        let op = h.opcode;
        if !qp_ok || !is_request(op) {
            self.dropped += 1;
            return;
        }
        let qp = h.dest_qp as usize;
        let q = self.qps[qp].clone();
        // Rule 2.
        let behind = psn_distance(q.expected_psn, h.psn);
        let resync =
            !q.synced || (h.flags & flag::RESYNC != 0 && !(1..=SEND_WINDOW).contains(&behind));
        let expected = if resync { h.psn } else { q.expected_psn };
        let distance = psn_distance(expected, h.psn);
        // The answer to a resync the request did not ask for carries RESYNC, and so does
        // every answer while that resync point is kept. A RESYNC request is sent at the
        // requester's oldest unacknowledged PSN: nothing before it to warn about.
        let flagged = h.flags & flag::RESYNC != 0;
        let marked = if resync {
            !flagged
        } else {
            q.resync_psn.is_some()
        };
        // The refusals the answers report are those before this request, in its PSN
        // sequence (a resync forgets them).
        let refused = if resync { vec![] } else { q.refused.clone() };
        let n_owed = self.owed.len();
        self.request_answer(o, qp, q, resync, marked, expected, distance);
        for ow in &mut self.owed[n_owed..] {
            ow.resync = marked;
            if ow.kind == OWE_ACK || ow.kind == OWE_NACK {
                ow.refusal = refusal_bits(&refused, ow.psn);
            }
        }
    }

    /// Rule 2's classification and rules 3-7, once the PSN is known (`distance` behind the
    /// expected PSN after the resync).
    fn request_answer(
        &mut self,
        o: &CellOutcome,
        qp: usize,
        q: QpState,
        resync: bool,
        marked: bool,
        expected: u32,
        distance: u32,
    ) {
        // A resync the request did not ask for sets the resync point; one it asked for
        // forgets it.
        let resync_point = (resync && marked).then_some(o.header.psn);
        let h = o.header;
        let op = h.opcode;
        let busy = self.busy(qp);
        let (node, src_qp) = (h.src_node, h.src_qp);
        let send = op == opcode::SEND || op == opcode::SEND_IMMEDIATE;
        let read = op == opcode::RDMA_READ_REQUEST;
        let atomic = op == opcode::ATOMIC_COMPARE_SWAP || op == opcode::ATOMIC_FETCH_ADD;
        let write = op == opcode::RDMA_WRITE || op == opcode::RDMA_WRITE_IMMEDIATE;
        let consumes = send || op == opcode::RDMA_WRITE_IMMEDIATE;
        // A duplicate before the resync point was never seen by this incarnation: it is
        // answered like a request ahead of the expected PSN.
        let before_resync = distance != 0
            && q.resync_psn
                .is_some_and(|r| distance > psn_distance(q.expected_psn, r));
        if distance >= 1 << 23 || before_resync {
            if q.nak_sent {
                return; // silent
            }
            // Owed even while the slot is busy (it waits behind the slot's item), unless
            // the request is a duplicate (before the resync point): dropped.
            if busy && distance < 1 << 23 {
                self.dropped += 1;
                return;
            }
            self.qps[qp].nak_sent = true;
            self.owe(
                qp,
                node,
                src_qp,
                OWE_NACK,
                expected,
                Syndrome::SequenceError,
            );
            return;
        }
        let duplicate = distance != 0;
        // The owed-slot rule: a request that would owe a NACK or a response while the
        // slot is busy is not applied. At or ahead of the expected PSN (not a resync) it
        // is answered SEQUENCE_ERROR with the expected PSN (the answer waits behind the
        // slot's item), so the requester goes back to it at once; a duplicate or a
        // resync is dropped.
        let slot_refuse = |m: &mut Self| {
            if duplicate || resync {
                m.dropped += 1;
            } else {
                m.qps[qp].nak_sent = true;
                m.owe(
                    qp,
                    node,
                    src_qp,
                    OWE_NACK,
                    expected,
                    Syndrome::SequenceError,
                );
            }
        };
        // The duplicate of a refused PSN is refused again, whatever its opcode.
        if let Some(&(psn, s)) = q.refused.iter().find(|r| duplicate && r.0 == h.psn) {
            if busy {
                self.dropped += 1;
            } else {
                self.owe(qp, node, src_qp, OWE_NACK, psn, s);
            }
            return;
        }
        if duplicate && !read {
            if atomic {
                match q.atomic {
                    Some((psn, value)) if psn == h.psn && !busy => {
                        self.owed.push(Owed {
                            qp: qp as u8,
                            kind: OWE_ATOMIC_RESPONSE,
                            psn: h.psn,
                            value,
                            dest_node: node,
                            dest_qp: src_qp,
                            ..Default::default()
                        });
                    }
                    _ => self.dropped += 1,
                }
            } else {
                // No ACK names a refused PSN: the one before the expected PSN, or the
                // duplicate's own when that one was refused.
                let last = q.expected_psn.wrapping_sub(1) & PSN_MASK;
                let last_refused = q.refused.iter().any(|r| r.0 == last);
                if last_refused && distance > SEND_WINDOW {
                    // Never received in this sequence (a restart without RESYNC).
                    self.dropped += 1;
                    return;
                }
                let psn = if last_refused { h.psn } else { last };
                self.owe(qp, node, src_qp, OWE_ACK, psn, Syndrome::Ack);
            }
            return;
        }
        // A NACK (rules 3-6), answered unless the slot is busy.
        let nack = |m: &mut Self, s: Syndrome| {
            if busy {
                return slot_refuse(m);
            }
            if !duplicate {
                let st = &mut m.qps[qp];
                st.expected_psn = (expected + 1) & PSN_MASK;
                st.synced = true;
                st.nak_sent = false;
                if resync {
                    st.refused.clear();
                }
                st.refused.push((h.psn, s));
                st.prune_refused();
                if resync {
                    st.resync_psn = resync_point;
                } else {
                    st.prune_resync();
                }
            }
            m.owe(qp, node, src_qp, OWE_NACK, h.psn, s);
        };
        if !self.enable_send_recv {
            return nack(self, Syndrome::RemoteOperationalError);
        }
        let rdma = write || read || atomic;
        if rdma && !self.enable_rdma {
            return nack(self, Syndrome::RdmaDisabled);
        }
        let mut paddr = o.reth.vaddr as u32;
        if rdma {
            let shape = if atomic {
                o.reth.dma_length == 8 && h.message_length == 16
            } else if write {
                h.message_length == o.reth.dma_length
            } else {
                true
            };
            if !o.reth.vaddr.is_multiple_of(8) || !shape {
                return nack(self, Syndrome::InvalidRequest);
            }
            let length = if atomic { 8 } else { o.reth.dma_length };
            let access_ok = match self.tpt {
                None => o.reth.vaddr + length as u64 <= 1 << 32,
                Some(tpt) => {
                    // No lookup for a request the slot rule drops anyway.
                    let rnr = consumes && q.rq_pi == q.rq_ci;
                    if busy && (rnr || read || atomic) {
                        return slot_refuse(self);
                    }
                    let lookup = TptLookup {
                        stag: o.reth.stag,
                        vaddr: o.reth.vaddr,
                        length,
                        access: if read {
                            1
                        } else if atomic {
                            4
                        } else {
                            2
                        },
                        invalidate: h.flags & flag::INVALIDATE != 0,
                        qp: qp as u8,
                        commit: !rnr,
                    };
                    self.lookups.push(lookup);
                    match tpt(&lookup) {
                        Some(p) if p.is_multiple_of(8) => {
                            paddr = p;
                            true
                        }
                        _ => false,
                    }
                }
            };
            if !access_ok {
                return nack(self, Syndrome::RemoteAccessError);
            }
        }
        if consumes && q.rq_pi == q.rq_ci {
            return nack(self, Syndrome::ReceiverNotReady);
        }
        // Execute (or a duplicate READ, executed again).
        if read {
            if busy {
                return slot_refuse(self);
            }
            if !duplicate {
                let st = &mut self.qps[qp];
                st.expected_psn = (expected + 1) & PSN_MASK;
                st.synced = true;
                st.nak_sent = false;
                if resync {
                    st.refused.clear();
                    st.resync_psn = resync_point;
                }
                st.prune_refused();
                st.prune_resync();
            }
            self.owed.push(Owed {
                qp: qp as u8,
                kind: OWE_READ_RESPONSE,
                psn: h.psn,
                addr: paddr,
                length: o.reth.dma_length,
                dest_node: node,
                dest_qp: src_qp,
                ..Default::default()
            });
            return;
        }
        if atomic && busy {
            return slot_refuse(self);
        }
        // The receive queue entry.
        let (mut buffer, mut buffer_length, mut wr_id) = (0u32, 0u32, 0u64);
        let mut status = 0u8;
        if consumes {
            let at = q.rqe_addr();
            buffer = self.read_word(at) as u32;
            buffer_length = self.read_word(at.wrapping_add(8)) as u32;
            wr_id = self.read_word(at.wrapping_add(16));
            if send {
                if !buffer.is_multiple_of(8) {
                    status = 0x03;
                    buffer_length = 0;
                } else if h.message_length > buffer_length {
                    status = 0x01;
                }
                if status != 0 && busy {
                    return slot_refuse(self);
                }
            }
        }
        {
            let st = &mut self.qps[qp];
            st.expected_psn = expected;
            st.synced = true;
            st.nak_sent = false;
            if resync {
                st.refused.clear();
                st.resync_psn = resync_point;
            }
        }
        self.current_qp = Some(qp);
        if atomic {
            self.mode = Mode::Atomic {
                qp,
                paddr,
                psn: h.psn,
                opcode: op,
                operands: [0; 2],
                dest: (node, src_qp),
                resync: marked,
            };
            return;
        }
        let owe = Owed {
            qp: qp as u8,
            kind: if status != 0 { OWE_NACK } else { OWE_ACK },
            psn: h.psn,
            syndrome: if status != 0 {
                Syndrome::InvalidRequest as u8
            } else {
                0
            },
            dest_node: node,
            dest_qp: src_qp,
            resync: marked,
            refusal: refusal_bits(if resync { &[] } else { &q.refused }, h.psn),
            ..Default::default()
        };
        let completion = consumes.then_some(Completion {
            opcode: op,
            status,
            qp: qp as u8,
            has_immediate: h.flags & flag::IMMEDIATE != 0,
            byte_count: h.message_length,
            wqe_index: q.rq_ci,
            src_node: node,
            src_qp,
            wr_id,
            immediate: 0,
        });
        let (base, limit) = if send {
            (buffer, buffer_length)
        } else {
            (paddr, o.reth.dma_length)
        };
        self.mode = Mode::Write {
            base,
            limit,
            end: End::Execute {
                qp,
                owe,
                completion,
            },
        };
    }

    fn end_message(&mut self, mode: Mode, immediate: u32) {
        match mode {
            Mode::Discard => {}
            Mode::Write {
                end: End::Response { qp, psn, resync },
                ..
            } => {
                self.qps[qp].expect = None;
                self.acks.push(AckEvent {
                    qp: qp as u8,
                    psn,
                    syndrome: 0,
                    response: true,
                    resync,
                });
            }
            Mode::Write {
                end:
                    End::Execute {
                        qp,
                        owe,
                        completion,
                    },
                ..
            } => {
                let q = &mut self.qps[qp];
                q.expected_psn = (q.expected_psn + 1) & PSN_MASK;
                if completion.is_some() {
                    q.rq_ci = (q.rq_ci + 1) & PSN_MASK;
                }
                if owe.kind == OWE_NACK {
                    q.refused
                        .extend(Syndrome::from_code(owe.syndrome).map(|s| (owe.psn, s)));
                }
                q.prune_refused();
                q.prune_resync();
                self.owed.push(owe);
                if let Some(mut c) = completion {
                    c.immediate = immediate;
                    self.completions.push(c);
                }
            }
            Mode::Atomic {
                qp,
                paddr,
                psn,
                opcode: op,
                operands,
                dest,
                resync,
            } => {
                let original = self.read_word(paddr);
                if op == opcode::ATOMIC_FETCH_ADD {
                    self.write(paddr, original.wrapping_add(operands[0]), 0xFF);
                } else if original == operands[0] {
                    self.write(paddr, operands[1], 0xFF);
                }
                let q = &mut self.qps[qp];
                q.expected_psn = (q.expected_psn + 1) & PSN_MASK;
                q.prune_refused();
                q.prune_resync();
                q.atomic = Some((psn, original));
                self.owed.push(Owed {
                    qp: qp as u8,
                    kind: OWE_ATOMIC_RESPONSE,
                    psn,
                    value: original,
                    dest_node: dest.0,
                    dest_qp: dest.1,
                    resync,
                    ..Default::default()
                });
            }
        }
    }
}
