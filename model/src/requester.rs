//! The requester (`SendQueueEngine`) as its ports see it: the transactions on its ports,
//! the rules a send WQE becomes a message by, and [`RequesterScoreboard`], which judges
//! everything the engine does at its ports against the requester's rules.
//!
//! Written from `docs/nic-architecture.md` ("Host memory structures"; "Reliability: queue
//! pairs, PSNs, go-back-N") and the engine's documented contract (its doc comment and
//! "SendQueueEngine: design notes" in `docs/nic-blocks.md`), not from the RTL: the
//! scoreboard sees only what crosses the engine's ports (CSR accesses and answers,
//! acknowledgement events taken, DMA requests, expect events, messages and their payload,
//! completions, counters) and the host memory the test owns. It never reads the engine's
//! state or the order in which the engine runs its internal operations.
//!
//! What the engine may choose (when it picks a queue pair, when an event or a timer is
//! evaluated between two commits) the scoreboard does not predict; it checks that each
//! choice is one the rules allow, with the cause visible at the ports:
//! - a message is the WQE at its PSN, field for field and word for word; it is posted,
//!   inside the send window counted from the oldest WQE not yet completed, and no
//!   earlier WQE that must finish first (a local operation, a READ or atomic without an
//!   answer yet) is still pending;
//! - a queue pair's PSNs go up by one; a go-back or a jump forward needs its cause: a
//!   retryable NACK for that PSN, a final NACK for the one before, a NACK or an implied
//!   NAK or an expired timer for the oldest one, an acknowledgement of the one before;
//! - a READ or atomic follows its expect event and is sent only with nothing outstanding;
//! - RESYNC is set on the first message after a reset, and only on a message that is the
//!   oldest outstanding one while a resync is owed;
//! - a DELAY holds its queue pair's next message for its cycle count;
//! - completions come in WQE order, each once, with the WQE's fields; a success needs an
//!   acknowledgement (a READ or atomic: its response) covering the PSN, a final status
//!   the NACK that carried it, RESPONDER_RESTARTED an answer with RESYNC for a later PSN,
//!   RETRY_EXCEEDED more retry causes than the limit; a local WQE completes with the
//!   status its fields give;
//! - CSR reads answer what was written, `SQ_CI` and `QP_STATUS` within what the
//!   completions seen allow; `stat_requests_sent` counts the messages taken and
//!   `stat_retransmissions` is at least the go-backs seen on the wire;
//! - completion re-reads and tx reads address the rings and payloads the WQEs name.
//!
//! Every violation panics with the queue pair, the PSN or index and the rule broken.

use nic_abi::{
    csr, psn_distance, CompletionStatus, Syndrome, Wqe, WqeOpcode, BIND_OPCODE, DELAY_CYCLES_MASK,
    DELAY_OPCODE, INLINE_MAX_BYTES, INLINE_WORDS, MAX_MESSAGE_LENGTH, NOP_OPCODE, PSN_MASK,
    SEND_WINDOW,
};
use std::collections::{HashMap, VecDeque};

// Register numbers on the engine's per-QP CSR side port: `(offset - 0x1000) % 0x80 / 8`.
pub const SQ_BASE: u8 = (csr::QP_SQ_BASE / 8) as u8;
pub const SQ_SIZE_LOG2: u8 = (csr::QP_SQ_SIZE_LOG2 / 8) as u8;
pub const SQ_PI: u8 = (csr::QP_SQ_PI / 8) as u8;
pub const SQ_CI: u8 = (csr::QP_SQ_CI / 8) as u8;
pub const RQ_BASE: u8 = (csr::QP_RQ_BASE / 8) as u8;
pub const RQ_CI: u8 = (csr::QP_RQ_CI / 8) as u8;
pub const QP_REMOTE: u8 = (csr::QP_REMOTE / 8) as u8;
pub const QP_CTRL: u8 = (csr::QP_CTRL / 8) as u8;
pub const QP_STATUS: u8 = (csr::QP_STATUS / 8) as u8;

const SUCCESS: u8 = CompletionStatus::SUCCESS;
const RETRY_EXCEEDED: u8 = CompletionStatus::RETRY_EXCEEDED;
const RESPONDER_RESTARTED: u8 = CompletionStatus::RESPONDER_RESTARTED;

/// A message on the engine's message port, with the payload words that followed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Msg {
    pub opcode: u8,
    pub dest_node: u16,
    pub src_node: u16,
    pub dest_qp: u16,
    pub src_qp: u16,
    pub psn: u32,
    pub length: u32,
    pub vaddr: u64,
    pub stag: u32,
    pub dma_length: u32,
    pub immediate: u32,
    pub has_immediate: bool,
    pub invalidate: bool,
    pub resync: bool,
    pub payload: Vec<u64>,
}

impl Msg {
    /// The message a `MessageDescriptor` port shows, without its payload (which follows
    /// on the payload port).
    pub fn of_descriptor(d: &nic_rtl::common::MessageDescriptor) -> Msg {
        Msg {
            opcode: d.opcode.to_u64() as u8,
            dest_node: d.dest_node.to_u64() as u16,
            src_node: d.src_node.to_u64() as u16,
            dest_qp: d.dest_qp.to_u64() as u16,
            src_qp: d.src_qp.to_u64() as u16,
            psn: d.psn.to_u64() as u32,
            length: d.length.to_u64() as u32,
            vaddr: d.vaddr.to_u64(),
            stag: d.stag.to_u64() as u32,
            dma_length: d.dma_length.to_u64() as u32,
            immediate: d.immediate.to_u64() as u32,
            has_immediate: d.has_immediate,
            invalidate: d.invalidate,
            resync: d.resync,
            payload: vec![],
        }
    }
}

/// An expect event (announces a READ or atomic's response).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expect {
    pub qp: usize,
    pub psn: u32,
    pub addr: u32,
    pub length: u32,
    pub atomic: bool,
}

/// A completion request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cpl {
    pub opcode: u8,
    pub status: u8,
    pub qp: usize,
    pub byte_count: u32,
    pub wqe_index: u32,
    pub src_node: u16,
    pub src_qp: u16,
    pub wr_id: u64,
}

/// An acknowledgement event (the receive side's report of an answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckEvent {
    pub qp: usize,
    pub psn: u32,
    pub syndrome: u8,
    pub response: bool,
    /// The answer carried RESYNC (the responder restarted at `psn`).
    pub resync: bool,
}

impl AckEvent {
    pub fn ack(qp: usize, psn: u32) -> Self {
        AckEvent {
            qp,
            psn,
            syndrome: 0,
            response: false,
            resync: false,
        }
    }
    pub fn nack(qp: usize, psn: u32, syndrome: Syndrome) -> Self {
        AckEvent {
            syndrome: syndrome as u8,
            ..Self::ack(qp, psn)
        }
    }
    pub fn response(qp: usize, psn: u32) -> Self {
        AckEvent {
            response: true,
            ..Self::ack(qp, psn)
        }
    }
    /// The same answer, marked: the responder restarted its PSN sequence at `psn`.
    pub fn resynced(self) -> Self {
        AckEvent {
            resync: true,
            ..self
        }
    }
    pub fn success(&self) -> bool {
        self.response || self.syndrome == 0
    }
    pub fn retryable(&self) -> bool {
        !self.success() && Syndrome::from_code(self.syndrome).is_some_and(|s| s.is_retryable())
    }
}

/// `a + b` in PSN space.
pub fn psn_add(a: u32, b: u32) -> u32 {
    a.wrapping_add(b) & PSN_MASK
}

/// The opcodes that never send a message: NOP, BIND RKEY, DELAY.
pub fn is_local_op(opcode: u8) -> bool {
    matches!(opcode, NOP_OPCODE | BIND_OPCODE | DELAY_OPCODE)
}

/// An RDMA READ or atomic: it completes with its response only.
pub fn needs_response(w: &Wqe) -> bool {
    matches!(
        WqeOpcode::from_code(w.opcode),
        Some(WqeOpcode::RdmaRead | WqeOpcode::AtomicCompareSwap | WqeOpcode::AtomicFetchAdd)
    )
}

/// The status a WQE completes with locally (SUCCESS: it is sent, or it is a good local
/// operation).
pub fn wqe_status(w: &Wqe) -> u8 {
    if is_local_op(w.opcode) && !w.inline {
        let aligned = w.local_addr.is_multiple_of(8);
        // A BIND's length is the bound range's; a DELAY's count has 24 bits.
        let length_ok = (w.length <= MAX_MESSAGE_LENGTH || w.opcode == BIND_OPCODE)
            && (w.opcode != DELAY_OPCODE || w.remote_vaddr <= DELAY_CYCLES_MASK);
        return match (length_ok, aligned) {
            (false, _) => CompletionStatus::LOCAL_LENGTH_ERROR,
            (true, false) => CompletionStatus::LOCAL_ADDRESS_ERROR,
            (true, true) => SUCCESS,
        };
    }
    let Some(op) = WqeOpcode::from_code(w.opcode) else {
        return CompletionStatus::BAD_OPCODE;
    };
    let send = matches!(op, WqeOpcode::Send | WqeOpcode::SendImmediate);
    if w.inline && !send {
        return CompletionStatus::BAD_OPCODE;
    }
    if w.length > MAX_MESSAGE_LENGTH
        || (op.is_atomic() && w.length != 8)
        || (w.inline && w.length as usize > INLINE_MAX_BYTES)
    {
        return CompletionStatus::LOCAL_LENGTH_ERROR;
    }
    if (!w.inline && !w.local_addr.is_multiple_of(8))
        || (op.is_rdma() && !w.remote_vaddr.is_multiple_of(8))
    {
        return CompletionStatus::LOCAL_ADDRESS_ERROR;
    }
    SUCCESS
}

/// How far the completion re-reads run ahead: a re-read is for one of a QP's this many
/// oldest uncompleted WQEs (the `AckMachine`'s completion in progress and its two-slot
/// read queue).
pub const COMPLETION_READS_AHEAD: u32 = 3;

/// The WQE completes without a message (a bad WQE or a local operation).
pub fn completes_locally(w: &Wqe) -> bool {
    wqe_status(w) != SUCCESS || is_local_op(w.opcode)
}

/// The eight words at `addr` as a WQE.
pub fn read_wqe(mem: &dyn Fn(u32) -> u64, addr: u32) -> Wqe {
    let mut w = [0u64; 8];
    for (i, word) in w.iter_mut().enumerate() {
        *word = mem(addr.wrapping_add(8 * i as u32));
    }
    Wqe::from_words(&w)
}

/// The message a good WQE becomes on QP `qp` (without `resync`, which depends on the QP).
pub fn message_for(
    qp: usize,
    remote: u32,
    node_id: u16,
    psn: u32,
    w: &Wqe,
    mem: &dyn Fn(u32) -> u64,
) -> Msg {
    let op = WqeOpcode::from_code(w.opcode).expect("valid WQE");
    let (length, payload) = if op.is_atomic() {
        (16, vec![w.compare_add, w.swap])
    } else if op == WqeOpcode::RdmaRead {
        (0, vec![])
    } else if w.inline {
        let words = w.to_words();
        let n = w.length.div_ceil(8) as usize;
        (
            w.length,
            INLINE_WORDS[..n].iter().map(|&i| words[i]).collect(),
        )
    } else {
        let words = w.length.div_ceil(8);
        (
            w.length,
            (0..words).map(|i| mem(w.local_addr + 8 * i)).collect(),
        )
    };
    Msg {
        opcode: w.opcode,
        dest_node: remote as u16,
        src_node: node_id,
        dest_qp: (remote >> 16) as u16,
        src_qp: qp as u16,
        psn,
        length,
        vaddr: w.remote_vaddr,
        stag: w.stag,
        dma_length: w.length,
        immediate: if op.has_immediate() { w.immediate } else { 0 },
        has_immediate: op.has_immediate(),
        invalidate: w.invalidate,
        resync: false,
        payload,
    }
}

/// What the scoreboard knows of one queue pair, from the ports only.
#[derive(Clone, Debug, Default)]
struct QpView {
    base: u32,
    size: u32,
    remote: u32,
    enable: bool,
    /// The doorbell (`SQ_PI`) as last written.
    pi: u32,
    /// When the last reset was taken.
    reset_at: u64,
    /// The oldest WQE not yet completed (completions seen).
    una: u32,
    last_cpl_at: u64,
    /// When the retry count was last cleared (a completion of a sent WQE, or a reset).
    retry_clear_at: u64,
    /// A resync is owed: set by a reset and by a completion that leaves the responder
    /// possibly out of step (RETRY_EXCEEDED, PORT_DOWN, a local completion).
    resync_owed: bool,
    /// The PSN of the last message, none since the reset.
    last_psn: Option<u32>,
    /// When each PSN was last offered.
    sent_at: HashMap<u32, u64>,
    /// The WQE each PSN's last message was made from, as the ring held it then.
    sent_wqe: HashMap<u32, Wqe>,
    /// When each index was posted (its doorbell taken).
    posted_at: HashMap<u32, u64>,
    /// Acknowledgement events taken since the reset, with the clock they were taken.
    events: Vec<(u64, AckEvent)>,
    /// The earliest clock the QP's next message may be offered (a DELAY's hold).
    hold_until: u64,
    /// Most PSNs ever outstanding at once.
    max_outstanding: u32,
    /// The last completion was RETRY_EXCEEDED for this index: the next one is sent again
    /// at once.
    exceeded: Option<u32>,
    /// The QP as it was before its last reset: the completion in progress when the reset
    /// came may still be reported (one, within `RESET_GRACE` clocks).
    prior: Option<Box<QpView>>,
}

/// Clocks after a QP reset is taken within which the completion in progress before it may
/// still be reported.
const RESET_GRACE: u64 = 64;

/// Clocks an acknowledgement event may wait in the engine between being taken and being
/// evaluated: an event taken up to this long before a message may have been evaluated
/// after that message's commit.
const EVAL_SLACK: u64 = 16;

impl QpView {
    fn slot(&self, index: u32) -> u32 {
        let mask = if self.size >= 24 {
            PSN_MASK
        } else {
            (1 << self.size) - 1
        };
        self.base.wrapping_add((index & mask) << 6)
    }
    fn posted(&self, index: u32) -> bool {
        psn_distance(index, self.una) < psn_distance(self.pi, self.una)
    }
    fn events_after(&self, t: u64) -> impl Iterator<Item = &AckEvent> {
        self.events
            .iter()
            .filter(move |(at, _)| *at > t)
            .map(|(_, e)| e)
    }
    /// Events that may have been evaluated after the message sent at `t`.
    fn events_evaluated_after(&self, t: u64) -> impl Iterator<Item = &AckEvent> {
        self.events_after(t.saturating_sub(EVAL_SLACK))
    }
}

/// Judges a `SendQueueEngine`'s ports against the requester's rules (see the module
/// comment). The test calls one method per handshake, in clock order, with the clock.
pub struct RequesterScoreboard {
    queue_pairs: usize,
    node_id: u16,
    timeout: u32,
    limit: u32,
    qps: Vec<QpView>,
    /// CSR reads taken and not yet answered: QP, register, `una` when taken.
    reads: VecDeque<(usize, u8, u32)>,
    expects: VecDeque<Expect>,
    /// Messages taken on the message port.
    pub messages: u32,
    /// Go-backs seen on the wire (a PSN not after the previous one).
    pub go_backs: u32,
    /// Go-backs whose only possible cause was the retry timer.
    pub timeouts: u32,
    retransmissions: u32,
}

impl RequesterScoreboard {
    pub fn new(queue_pairs: usize) -> Self {
        RequesterScoreboard {
            queue_pairs,
            node_id: 0,
            timeout: 0,
            limit: 0,
            qps: vec![QpView::default(); 64],
            reads: VecDeque::new(),
            expects: VecDeque::new(),
            messages: 0,
            go_backs: 0,
            timeouts: 0,
            retransmissions: 0,
        }
    }

    /// The configuration inputs (`cfg_node_id`, `cfg_retry_timeout`, `cfg_retry_limit`).
    pub fn configure(&mut self, node_id: u16, timeout: u32, limit: u32) {
        (self.node_id, self.timeout, self.limit) = (node_id, timeout, limit);
    }

    /// The ring slot address of WQE `index` of QP `qp`, as configured.
    pub fn slot(&self, qp: usize, index: u32) -> u32 {
        self.qps[qp].slot(index)
    }

    /// The oldest WQE of `qp` not yet completed.
    pub fn una(&self, qp: usize) -> u32 {
        self.qps[qp].una
    }

    /// Most messages outstanding on one QP so far.
    pub fn max_outstanding(&self) -> u32 {
        self.qps
            .iter()
            .map(|v| v.max_outstanding)
            .max()
            .unwrap_or(0)
    }

    /// A CSR access taken on the side port at clock `now`.
    pub fn csr_taken(&mut self, now: u64, qp: usize, write: bool, reg: u8, wdata: u64) {
        if !write {
            let una = self.qps[qp.min(63)].una;
            self.reads.push_back((qp, reg, una));
            return;
        }
        if qp >= self.queue_pairs {
            return;
        }
        let w = wdata as u32;
        let v = &mut self.qps[qp];
        match reg {
            SQ_BASE => v.base = w,
            SQ_SIZE_LOG2 => v.size = w & 31,
            SQ_PI => {
                let mut i = v.pi;
                while i != w & PSN_MASK {
                    v.posted_at.insert(i, now);
                    i = psn_add(i, 1);
                }
                v.pi = w & PSN_MASK;
            }
            QP_REMOTE => v.remote = w,
            QP_CTRL => {
                v.enable = w & 1 != 0;
                // Bit 1 resets the QP, bit 2 its send side: the same for the requester.
                if w & 6 != 0 {
                    let start = (w >> 8) & PSN_MASK;
                    let mut prior = v.clone();
                    prior.prior = None;
                    *v = QpView {
                        prior: Some(Box::new(prior)),
                        base: v.base,
                        size: v.size,
                        remote: v.remote,
                        enable: v.enable,
                        pi: start,
                        reset_at: now,
                        una: start,
                        last_cpl_at: now,
                        retry_clear_at: now,
                        resync_owed: true,
                        max_outstanding: v.max_outstanding,
                        ..QpView::default()
                    };
                }
            }
            _ => {}
        }
    }

    /// A CSR read's answer (`m_csr_rdata`).
    pub fn csr_answered(&mut self, value: u64) {
        let (qp, reg, una_then) = self.reads.pop_front().expect("CSR answer without a read");
        let what = format!("CSR read of QP {qp} register {reg}: {value:#x}");
        if qp >= self.queue_pairs {
            assert_eq!(value, 0, "{what}: a QP past queue_pairs reads 0");
            return;
        }
        let v = &self.qps[qp];
        // SQ_CI is sq_una: one completion may be between its request and its advance.
        let una_possible = |x: u32| {
            psn_distance(x, psn_add(una_then, PSN_MASK)) <= psn_distance(v.una, una_then) + 1
        };
        match reg {
            SQ_BASE => assert_eq!(value, v.base as u64, "{what}"),
            SQ_SIZE_LOG2 => assert_eq!(value, v.size as u64, "{what}"),
            SQ_PI => assert_eq!(value, v.pi as u64, "{what}"),
            QP_REMOTE => assert_eq!(value, v.remote as u64, "{what}"),
            QP_CTRL => assert_eq!(value, v.enable as u64, "{what}"),
            SQ_CI => assert!(
                value <= PSN_MASK as u64 && una_possible(value as u32),
                "{what}: sq_una outside what the completions allow (una {:#x})",
                v.una
            ),
            QP_STATUS => {
                let next = value as u32 & PSN_MASK;
                let retry = (value >> 52 & 0xF) as u32;
                assert_eq!(
                    value & !(PSN_MASK as u64 | 1 << 49 | 0xF << 52),
                    0,
                    "{what}: reserved bits"
                );
                assert!(
                    psn_distance(next, psn_add(una_then, PSN_MASK))
                        <= psn_distance(v.pi, una_then) + 1,
                    "{what}: sq_next outside [sq_una, sq_pi]"
                );
                assert!(retry <= self.limit, "{what}: retry count over the limit");
            }
            _ => assert_eq!(value, 0, "{what}: an unanswered register reads 0"),
        }
    }

    /// An acknowledgement event taken on `s_ack`.
    pub fn ack_taken(&mut self, now: u64, ev: AckEvent) {
        if ev.qp < self.queue_pairs {
            self.qps[ev.qp].events.push((now, ev));
        }
    }

    /// An expect event taken on `m_expect`.
    pub fn expect_taken(&mut self, e: Expect) {
        self.expects.push_back(e);
    }

    /// The counters as they read this clock, before this clock's handshakes.
    pub fn counters(&mut self, requests_sent: u32, retransmissions: u32) {
        assert_eq!(
            requests_sent, self.messages,
            "stat_requests_sent counts the messages taken"
        );
        assert!(
            retransmissions >= self.retransmissions,
            "stat_retransmissions went down"
        );
        self.retransmissions = retransmissions;
        assert!(
            retransmissions >= self.go_backs,
            "stat_retransmissions {retransmissions} below the {} go-backs on the wire",
            self.go_backs
        );
    }

    /// A read request on the tx read client: a WQE fetch (inside a posted WQE's ring slot)
    /// or a payload read (a posted WQE's local buffer).
    pub fn tx_read(&self, addr: u32, words: u32, mem: &dyn Fn(u32) -> u64) {
        let ok = (0..self.queue_pairs).any(|q| {
            let v = &self.qps[q];
            let outstanding = psn_distance(v.pi, v.una).min(1 << 12);
            (0..outstanding).any(|k| {
                let index = psn_add(v.una, k);
                let slot = v.slot(index);
                let in_slot = addr.wrapping_sub(slot) < 64
                    && words >= 1
                    && addr.wrapping_sub(slot) / 8 + words <= 8;
                let w = read_wqe(mem, slot);
                let payload = !w.inline
                    && !completes_locally(&w)
                    && addr == w.local_addr
                    && words == w.length.div_ceil(8);
                in_slot || payload
            })
        });
        assert!(
            ok,
            "tx read of {words} words at {addr:#x}: no posted WQE or payload there"
        );
    }

    /// A read request on the completion re-read client: words 0-1 of one of some QP's
    /// [`COMPLETION_READS_AHEAD`] oldest uncompleted WQEs (the `AckMachine` re-reads the
    /// WQEs of the completion it issues and of the two in its read queue).
    pub fn completion_read(&self, addr: u32, words: u32) {
        let ok = (0..self.queue_pairs).any(|q| {
            let v = &self.qps[q];
            (0..COMPLETION_READS_AHEAD).any(|k| {
                let index = psn_add(v.una, k);
                v.posted(index) && addr == v.slot(index)
            })
        });
        assert!(
            ok && words == 2,
            "completion re-read of {words} words at {addr:#x}: not words 0-1 of an oldest WQE"
        );
    }

    /// A message first shown on `m_msg` at clock `now` (payload not yet seen). Checks its
    /// fields and that the rules allow it now.
    pub fn message_offered(&mut self, now: u64, m: &Msg, mem: &dyn Fn(u32) -> u64) {
        let q = m.src_qp as usize;
        let g = m.psn;
        assert!(q < self.queue_pairs, "message from QP {q}");
        let (timeout, node_id) = (self.timeout, self.node_id);
        let v = &self.qps[q];
        let at = format!("QP {q} PSN {g:#x} at clock {now}");
        assert!(v.enable, "{at}: message of a disabled QP");
        assert!(v.posted(g), "{at}: not posted (sq_pi {:#x})", v.pi);
        assert!(
            psn_distance(g, v.una) < SEND_WINDOW,
            "{at}: outside the send window from {:#x}",
            v.una
        );
        let w = read_wqe(mem, v.slot(g));
        assert!(
            !completes_locally(&w),
            "{at}: a WQE that completes locally was sent"
        );
        let mut want = message_for(q, v.remote, node_id, g, &w, mem);
        want.payload.clear();
        want.resync = m.resync;
        assert_eq!(m, &want, "{at}: message fields");
        assert!(now >= v.hold_until, "{at}: sent during a DELAY's hold");
        // What must finish before g.
        if needs_response(&w) {
            assert_eq!(
                v.una, g,
                "{at}: a READ or atomic with earlier WQEs outstanding"
            );
            let e = self
                .expects
                .pop_front()
                .unwrap_or_else(|| panic!("{at}: READ or atomic without its expect event"));
            let want = Expect {
                qp: q,
                psn: g,
                addr: w.local_addr,
                length: w.length,
                atomic: WqeOpcode::from_code(w.opcode).unwrap().is_atomic(),
            };
            assert_eq!(e, want, "{at}: expect event");
        }
        let mut i = v.una;
        while i != g {
            let earlier = read_wqe(mem, v.slot(i));
            assert!(
                !completes_locally(&earlier),
                "{at}: sent before the local completion of {i:#x}"
            );
            if needs_response(&earlier) {
                let sent = v.sent_at.get(&i).copied().unwrap_or(u64::MAX);
                assert!(
                    v.events_evaluated_after(sent).next().is_some(),
                    "{at}: sent while the READ or atomic {i:#x} awaits its answer"
                );
            }
            i = psn_add(i, 1);
        }
        // RESYNC.
        match v.last_psn {
            None => {
                assert_eq!(
                    g, v.una,
                    "{at}: the first message after a reset (after the local completions)"
                );
                assert!(m.resync, "{at}: the first message after a reset has RESYNC");
            }
            Some(_) => assert!(
                !m.resync || (v.resync_owed && v.una == g),
                "{at}: RESYNC on a message that is not the oldest of a QP owing one"
            ),
        }
        // The PSN order and the cause of any go-back or jump.
        if let Some(last) = v.last_psn {
            if g != psn_add(last, 1) {
                let since = |p: u32| v.sent_at.get(&p).copied().unwrap_or(v.reset_at);
                let retry_nack = v
                    .events_evaluated_after(since(g))
                    .any(|e| e.psn == g && e.retryable());
                let before = psn_add(g, PSN_MASK);
                let final_before = v
                    .events_evaluated_after(since(before))
                    .any(|e| e.psn == before && !e.success());
                let acked_before = v
                    .events_after(v.reset_at)
                    .any(|e| e.psn == before && e.success());
                let oldest = g == v.una || psn_add(g, 1) == v.una;
                let una_sent = since(v.una);
                let una_rsp = needs_response(&read_wqe(mem, v.slot(v.una)));
                let nack_or_implied = v
                    .events_evaluated_after(una_sent)
                    .any(|e| !e.success() || (una_rsp && !e.response));
                // The timer restarts at every completion's advance (after the completion
                // is taken) and at a reset; while sq_una streams it restarts at each scan,
                // which can be before the last word: only the completion is a bound.
                let timer_lb = v.last_cpl_at;
                let timer = timeout != 0 && now >= timer_lb + timeout as u64;
                let backwards = psn_distance(last, g) < 1 << 23;
                let after_exceeded = v.exceeded == Some(before);
                assert!(
                    retry_nack
                        || final_before
                        || after_exceeded
                        || (!backwards && acked_before)
                        || (oldest && (nack_or_implied || timer)),
                    "{at}: PSN after {last:#x} with no cause at the ports (oldest \
                     uncompleted {:#x})",
                    v.una
                );
                if backwards {
                    self.go_backs += 1;
                    if !(retry_nack || final_before || after_exceeded || nack_or_implied) {
                        self.timeouts += 1;
                    }
                }
            }
        }
        let v = &mut self.qps[q];
        v.last_psn = Some(g);
        v.sent_at.insert(g, now);
        v.sent_wqe.insert(g, w);
        v.max_outstanding = v.max_outstanding.max(psn_distance(g, v.una) + 1);
    }

    /// A message taken, with its payload, once its last payload word was taken: judged
    /// against the WQE it was made from when it was offered.
    pub fn message_finished(&self, m: &Msg, mem: &dyn Fn(u32) -> u64) {
        let q = m.src_qp as usize;
        let v = &self.qps[q];
        let w = v.sent_wqe[&m.psn].clone();
        let want = message_for(q, v.remote, self.node_id, m.psn, &w, mem);
        assert_eq!(
            m.payload, want.payload,
            "QP {q} PSN {:#x}: payload words ({w:?})",
            m.psn
        );
    }

    /// A message taken on `m_msg` (counted by `stat_requests_sent`).
    pub fn message_taken(&mut self) {
        self.messages += 1;
    }

    /// A completion taken on `m_cpl` at clock `now`.
    pub fn completion_taken(&mut self, now: u64, c: &Cpl, mem: &dyn Fn(u32) -> u64) {
        let q = c.qp;
        assert!(q < self.queue_pairs, "completion for QP {q}");
        let limit = self.limit;
        let timeout = self.timeout;
        let v = &mut self.qps[q];
        if let Some(prior) = v.prior.take() {
            if c.wqe_index != v.una && c.wqe_index == prior.una && now < v.reset_at + RESET_GRACE {
                // The completion in progress when the reset came: judged by the QP as it
                // was; the run ends with it.
                let current = std::mem::replace(v, *prior);
                self.completion_taken(now, c, mem);
                self.qps[q] = current;
                return;
            }
        }
        let v = &mut self.qps[q];
        let i = v.una;
        let at = format!("QP {q} completion of {i:#x} at clock {now}");
        assert!(v.posted(i), "{at}: nothing posted to complete");
        assert_eq!(c.wqe_index, i, "{at}: completions in WQE order");
        let w = read_wqe(mem, v.slot(i));
        assert_eq!(
            (c.opcode, c.byte_count, c.wr_id, c.src_node, c.src_qp),
            (
                w.opcode,
                w.length,
                w.wr_id,
                v.remote as u16,
                (v.remote >> 16) as u16
            ),
            "{at}: the WQE's fields"
        );
        let local = completes_locally(&w);
        let sent_at = v.sent_at.get(&i).copied();
        if local {
            assert_eq!(c.status, wqe_status(&w), "{at}: local status");
            assert_eq!(sent_at, None, "{at}: a local WQE was sent");
            if w.opcode == DELAY_OPCODE && c.status == SUCCESS {
                // The hold starts at the DELAY's commit, which follows its doorbell and
                // the completion before it.
                let start = v.posted_at.get(&i).copied().unwrap_or(0).max(v.last_cpl_at);
                v.hold_until = start + w.remote_vaddr;
            }
        } else {
            assert!(sent_at.is_some(), "{at}: completed but never sent");
            let evs: Vec<AckEvent> = v.events_after(v.reset_at).copied().collect();
            let covers = |e: &AckEvent| psn_distance(e.psn, i) < SEND_WINDOW;
            let justified = match c.status {
                SUCCESS if needs_response(&w) => evs.iter().any(|e| e.response && covers(e)),
                // An answer for a later PSN, NACK or not, says the ones before it were
                // applied.
                SUCCESS => evs.iter().any(|e| covers(e) && (e.success() || e.psn != i)),
                RESPONDER_RESTARTED => evs.iter().any(|e| e.resync && e.psn != i && covers(e)),
                RETRY_EXCEEDED => {
                    let causes = v
                        .events_after(v.retry_clear_at)
                        .filter(|e| !e.response) // NACKs, and ACKs as implied NAKs
                        .count() as u64;
                    let timer = if timeout == 0 {
                        0
                    } else {
                        (now - v.retry_clear_at) / timeout as u64
                    };
                    causes + timer > limit as u64
                }
                s => evs
                    .iter()
                    .any(|e| e.psn == i && e.syndrome == s && !e.response),
            };
            assert!(
                justified,
                "{at}: status {:#x} without an answer at the ports that gives it",
                c.status
            );
            v.retry_clear_at = now;
        }
        v.resync_owed =
            local || c.status == RETRY_EXCEEDED || (c.status == Syndrome::PortDown as u8 && !local);
        v.exceeded = (c.status == RETRY_EXCEEDED).then_some(i);
        if local {
            // A local WQE takes its PSN without a message.
            v.last_psn = v.last_psn.map(|_| i);
        }
        v.una = psn_add(i, 1);
        v.last_cpl_at = now;
    }
}

#[cfg(test)]
mod tests {
    //! Each rule fails on a transaction that breaks it (the planted bugs of the scoreboard).
    use super::*;
    use std::cell::RefCell;

    const RING: u32 = 0x1000;
    const START: u32 = 0x10;
    const REMOTE: u32 = 0x0005_0077;

    /// A scoreboard with QP 0 reset to `START`, and the host memory behind it.
    struct World {
        sb: RequesterScoreboard,
        mem: RefCell<HashMap<u32, u64>>,
        now: u64,
    }

    fn word_of(mem: &RefCell<HashMap<u32, u64>>) -> impl Fn(u32) -> u64 + '_ {
        |a| mem.borrow().get(&a).copied().unwrap_or(a as u64 * 3)
    }

    impl World {
        fn new() -> Self {
            let mut sb = RequesterScoreboard::new(2);
            sb.configure(0x42, 1000, 3);
            sb.csr_taken(0, 0, true, SQ_BASE, RING as u64);
            sb.csr_taken(0, 0, true, SQ_SIZE_LOG2, 4);
            sb.csr_taken(0, 0, true, QP_REMOTE, REMOTE as u64);
            sb.csr_taken(0, 0, true, QP_CTRL, 3 | (START as u64) << 8);
            World {
                sb,
                mem: RefCell::new(HashMap::new()),
                now: 10,
            }
        }
        fn word(&self) -> impl Fn(u32) -> u64 + '_ {
            word_of(&self.mem)
        }
        fn post(&mut self, wqes: &[Wqe]) {
            for (k, w) in wqes.iter().enumerate() {
                let slot = RING + ((START + k as u32) & 15) * 64;
                for (i, x) in w.to_words().iter().enumerate() {
                    self.mem.borrow_mut().insert(slot + 8 * i as u32, *x);
                }
            }
            let pi = START + wqes.len() as u32;
            self.sb.csr_taken(self.now, 0, true, SQ_PI, pi as u64);
        }
        fn message(&self, k: u32) -> Msg {
            let w = read_wqe(&self.word(), RING + ((START + k) & 15) * 64);
            message_for(0, REMOTE, 0x42, START + k, &w, &self.word())
        }
        /// Offers and finishes the message of WQE `k` (RESYNC as given), 10 clocks on.
        fn send(&mut self, k: u32, resync: bool) {
            self.now += 10;
            let mut m = self.message(k);
            m.resync = resync;
            let head = Msg {
                payload: vec![],
                ..m.clone()
            };
            let word = word_of(&self.mem);
            self.sb.message_offered(self.now, &head, &word);
            self.sb.message_taken();
            self.sb.message_finished(&m, &word);
        }
        fn ack(&mut self, ev: AckEvent) {
            self.now += 10;
            self.sb.ack_taken(self.now, ev);
        }
        fn complete(&mut self, k: u32, status: u8) {
            self.now += 10;
            let w = read_wqe(&self.word(), RING + ((START + k) & 15) * 64);
            let c = Cpl {
                opcode: w.opcode,
                status,
                qp: 0,
                byte_count: w.length,
                wqe_index: START + k,
                src_node: REMOTE as u16,
                src_qp: (REMOTE >> 16) as u16,
                wr_id: w.wr_id,
            };
            let word = word_of(&self.mem);
            self.sb.completion_taken(self.now, &c, &word);
        }
    }

    fn write(len: u32, wr_id: u64) -> Wqe {
        Wqe {
            opcode: WqeOpcode::RdmaWrite as u8,
            length: len,
            wr_id,
            local_addr: 0x8000,
            remote_vaddr: 0x10_0000,
            ..Wqe::default()
        }
    }

    #[test]
    fn a_correct_exchange_passes() {
        let mut w = World::new();
        w.post(&[write(16, 1), write(8, 2), write(0, 3)]);
        w.send(0, true);
        w.send(1, false);
        w.ack(AckEvent::nack(0, START + 1, Syndrome::SequenceError));
        w.send(1, false); // go-back on the retryable NACK
        w.send(2, false);
        w.ack(AckEvent::ack(0, START + 2));
        w.complete(0, SUCCESS);
        w.complete(1, SUCCESS);
        w.complete(2, SUCCESS);
        w.sb.counters(4, 1);
    }

    #[test]
    #[should_panic(expected = "with no cause at the ports")]
    fn a_go_back_without_a_cause_fails() {
        let mut w = World::new();
        w.post(&[write(16, 1), write(8, 2)]);
        w.send(0, true);
        w.send(1, false);
        w.send(1, false);
    }

    #[test]
    #[should_panic(expected = "with no cause at the ports")]
    fn a_skipped_psn_fails() {
        let mut w = World::new();
        w.post(&[write(16, 1), write(8, 2), write(8, 3)]);
        w.send(0, true);
        w.send(2, false);
    }

    #[test]
    #[should_panic(expected = "without an answer at the ports that gives it")]
    fn a_success_without_an_acknowledgement_fails() {
        let mut w = World::new();
        w.post(&[write(16, 1)]);
        w.send(0, true);
        w.complete(0, SUCCESS);
    }

    #[test]
    #[should_panic(expected = "without an answer at the ports that gives it")]
    fn a_final_status_without_its_nack_fails() {
        let mut w = World::new();
        w.post(&[write(16, 1)]);
        w.send(0, true);
        w.ack(AckEvent::nack(0, START, Syndrome::RemoteAccessError));
        w.complete(0, Syndrome::InvalidRequest as u8);
    }

    #[test]
    #[should_panic(expected = "a READ or atomic with earlier WQEs outstanding")]
    fn a_read_behind_an_outstanding_write_fails() {
        let mut w = World::new();
        let read = Wqe {
            opcode: WqeOpcode::RdmaRead as u8,
            ..write(64, 2)
        };
        w.post(&[write(16, 1), read]);
        w.send(0, true);
        w.sb.expect_taken(Expect {
            qp: 0,
            psn: START + 1,
            addr: 0x8000,
            length: 64,
            atomic: false,
        });
        w.send(1, false);
    }

    #[test]
    #[should_panic(expected = "the first message after a reset has RESYNC")]
    fn a_first_message_without_resync_fails() {
        let mut w = World::new();
        w.post(&[write(16, 1)]);
        w.send(0, false);
    }

    #[test]
    #[should_panic(expected = "sent during a DELAY's hold")]
    fn a_message_inside_a_delay_fails() {
        let mut w = World::new();
        let delay = Wqe {
            wr_id: 7,
            ..Wqe::delay(500).unwrap()
        };
        w.post(&[delay, write(8, 2)]);
        w.complete(0, SUCCESS);
        w.send(1, true); // 10 clocks after the DELAY's completion, not 500
    }

    #[test]
    #[should_panic(expected = "payload words")]
    fn a_corrupted_payload_word_fails() {
        let mut w = World::new();
        w.post(&[write(16, 1)]);
        let mut m = w.message(0);
        m.resync = true;
        let head = Msg {
            payload: vec![],
            ..m.clone()
        };
        let word = word_of(&w.mem);
        w.sb.message_offered(20, &head, &word);
        m.payload[1] ^= 1 << 17;
        w.sb.message_finished(&m, &word);
    }

    #[test]
    #[should_panic(expected = "stat_requests_sent counts the messages taken")]
    fn a_miscounted_request_fails() {
        let mut w = World::new();
        w.post(&[write(16, 1)]);
        w.send(0, true);
        w.sb.counters(2, 0);
    }

    #[test]
    #[should_panic(expected = "completions in WQE order")]
    fn a_completion_out_of_order_fails() {
        let mut w = World::new();
        w.post(&[write(16, 1), write(8, 2)]);
        w.send(0, true);
        w.send(1, false);
        w.ack(AckEvent::ack(0, START + 1));
        w.complete(1, SUCCESS);
    }
}
