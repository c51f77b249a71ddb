//! An in-test fake of the NIC's host interface: plain Rust objects implementing
//! `NicAccess`, no simulator. Each fake NIC records every CSR write and owns a host memory;
//! a `Fabric` of several of them executes posted work requests (SEND, RDMA WRITE / READ,
//! atomics) between their memories when the test calls `step`, writing completion entries
//! as the NIC of `docs/nic-architecture.md` does: an ideal network (no loss, no delay
//! beyond the step), per-queue-pair order, NACKs for a powered-off NIC (PORT_DOWN), for
//! SEND/RECEIVE disabled, RDMA disabled and no receive buffer.
//!
//! With `tpt_log2` set the fake has a hardware TPT as `docs/csr-map.md` describes it: the
//! staging registers and `TPT_COMMAND` (write, invalidate, read; an index beyond the table
//! is refused and counted in `TPT_STATUS`), `TPT_STATUS` busy for `tpt_busy_reads` reads
//! after each command, and the exception queue: an incoming RDMA request whose STag has no
//! valid entry becomes the head (`EXC_HEAD0..2`) and waits until an `EXC_ANSWER` with the
//! head's tag answers it (or the test times it out); RDMA requests are checked (key,
//! rights, bounds) and translated, a failure is NACKed REMOTE_ACCESS_ERROR. A request that
//! passes and will be executed clears the entry's valid bit when the entry is one-shot or
//! the request carries the invalidate flag (`rtl/src/tpt/mod.rs`); an RDMA_WRITE_IMMEDIATE
//! refused for want of a receive buffer is checked without effect on the table. A BIND
//! RKEY writes its entry when it executes, before its completion (logged as command 0).
//!
//! `Faults` injects faults into the drivers' control SENDs: the next one from a node to a
//! node carrying a given kind, or random ones; each is lost (completing with a given
//! status, not delivered) or delivered with its acknowledgement lost (RETRY_EXCEEDED).
//! With `FAKE_TRACE` set in the environment every control SEND is printed.

#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use nic_abi::{csr, CompletionStatus, Cqe, Rqe, Syndrome, Wqe, WqeOpcode, PSN_MASK};
use nic_driver::control::{ControlKind, ControlSend};
use nic_driver::driver::CONTROL_IMMEDIATE;
use nic_driver::tpt::TptEntry;
use nic_driver::{Completion, Driver, DriverConfig, NicAccess, NodeId};

/// The small driver configuration the fake-NIC tests share: the rejoin protocol
/// (heartbeat 8, timeout 50), `n` NICs' worth of nodes, the arena `arena .. arena +
/// arena_len`, rings of 8 send, 8 receive and 64 completion entries, 1 KiB receive
/// buffers, and `incarnation`. Each test sets what it needs beyond that (handles,
/// exception polling, NICs per host).
pub fn small_config(
    node: NodeId,
    n: usize,
    arena: u32,
    arena_len: u32,
    incarnation: u32,
) -> DriverConfig {
    let mut c = DriverConfig::new(
        nic_driver::membership::Protocol::Rejoin(nic_driver::rejoin::RejoinConfig::new(
            node, 8, 50,
        )),
        n,
        arena,
        arena_len,
    );
    c.sq_log2 = 3;
    c.rq_log2 = 3;
    c.cq_log2 = 6;
    c.recv_buffer_bytes = 1024;
    c.incarnation = incarnation;
    c
}

/// The kinds of the messages a control SEND's payload carries (none if it does not decode).
pub fn control_kinds(payload: &[u8]) -> Vec<ControlKind> {
    ControlSend::decode(payload)
        .map(|s| s.messages.iter().map(|m| m.kind()).collect())
        .unwrap_or_default()
}

pub const MEM_BYTES: usize = 1 << 20;

#[derive(Clone, Debug, Default)]
pub struct Qp {
    pub sq_base: u32,
    pub sq_log2: u32,
    pub sq_pi: u32,
    pub sq_ci: u32,
    pub rq_base: u32,
    pub rq_log2: u32,
    pub rq_pi: u32,
    pub rq_ci: u32,
    pub remote: u64,
    pub enabled: bool,
}

/// One entry of the fake's hardware TPT (the staging registers have the same shape).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HwEntry {
    pub word0: u64,
    pub vaddr: u64,
    pub length: u32,
    pub paddr: u32,
}

impl HwEntry {
    pub fn valid(&self) -> bool {
        self.word0 & csr::TPT_VALID != 0
    }
    pub fn key(&self) -> u8 {
        (self.word0 >> csr::TPT_KEY_SHIFT) as u8
    }
}

/// The exception queue's head: the request waiting for the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExcHead {
    pub tag: u8,
    pub stag: u32,
    pub vaddr: u64,
    pub length: u32,
    /// 1 read, 2 write, 4 atomic.
    pub access: u8,
    /// The request's invalidate flag (`EXC_HEAD0` bit 12).
    pub invalidate: bool,
    pub dst_qp: usize,
    /// The waiting request: (source node, source queue pair, WQE index).
    pub request: (usize, usize, u32),
    /// Answered (translate to `Some(paddr)`, refuse `None`) or timed out (`Some(None)`).
    pub answer: Option<Option<u32>>,
}

/// What the hardware TPT decides for a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TptOutcome {
    Translate(u32),
    Refuse,
    /// In (or behind) the exception queue.
    Wait,
}

pub struct NicState {
    pub node: usize,
    pub powered: bool,
    pub regs: HashMap<u32, u64>,
    pub csr_writes: Vec<(u32, u64)>,
    pub csr_reads: usize,
    pub mem: Vec<u8>,
    pub queue_pairs: usize,
    pub tpt_log2: u64,
    pub qps: Vec<Qp>,
    pub cq_base: u32,
    pub cq_log2: u32,
    pub cq_pi: u32,
    pub cq_ci: u32,
    /// While set, this NIC's send queues are not executed (operations stay in flight).
    pub hold: bool,
    /// Hardware TPT (when `tpt_log2` > 0): entries by index.
    pub tpt: HashMap<u32, HwEntry>,
    pub tpt_index: u32,
    pub tpt_stage: HwEntry,
    /// Reads of `TPT_STATUS` that show busy after each command.
    pub tpt_busy_reads: u32,
    pub tpt_busy_left: u32,
    /// `TPT_STATUS` busy for ever (a NIC that does not answer).
    pub tpt_stuck: bool,
    pub tpt_refused: u8,
    /// Every command run: (command, index, the entry after it).
    pub tpt_log: Vec<(u64, u32, HwEntry)>,
    pub exc_head: Option<ExcHead>,
    pub exc_tag: u8,
    pub exc_stale_answers: u8,
    /// Every `EXC_ANSWER` write the NIC applied: (the head it answered, the value).
    pub exc_answers: Vec<(ExcHead, u64)>,
    /// A request already inside this NIC's receive path, looked up (`tpt_check`) right
    /// after the next TPT command that reads an entry (read or take): (request id, STag,
    /// vaddr, length, access). Its outcome goes to `raced`.
    pub race_after_read: Option<((usize, usize, u32), u32, u64, u32, u8)>,
    pub raced: Vec<TptOutcome>,
}

impl NicState {
    pub fn new(node: usize, queue_pairs: usize) -> Self {
        NicState {
            node,
            powered: true,
            regs: HashMap::new(),
            csr_writes: Vec::new(),
            csr_reads: 0,
            mem: vec![0; MEM_BYTES],
            queue_pairs,
            tpt_log2: 0,
            qps: vec![Qp::default(); queue_pairs],
            cq_base: 0,
            cq_log2: 0,
            cq_pi: 0,
            cq_ci: 0,
            hold: false,
            tpt: HashMap::new(),
            tpt_index: 0,
            tpt_stage: HwEntry::default(),
            tpt_busy_reads: 1,
            tpt_busy_left: 0,
            tpt_stuck: false,
            tpt_refused: 0,
            tpt_log: Vec::new(),
            exc_head: None,
            exc_tag: 0,
            exc_stale_answers: 0,
            exc_answers: Vec::new(),
            race_after_read: None,
            raced: Vec::new(),
        }
    }

    /// The reset state of this NIC: memory cleared, TPT empty (its size kept).
    fn reset(&self) -> Self {
        let mut n = NicState::new(self.node, self.queue_pairs);
        n.tpt_log2 = self.tpt_log2;
        n.tpt_busy_reads = self.tpt_busy_reads;
        n
    }

    /// The hardware TPT's check of an incoming RDMA request (siw's order: valid, key,
    /// rights, bounds), with the exception queue for an STag without a valid entry. A
    /// request that passes with `commit` (it will be executed) uses up a one-shot entry
    /// and honours `invalidate`: the entry's valid bit is cleared.
    #[allow(clippy::too_many_arguments)]
    pub fn tpt_check(
        &mut self,
        request: (usize, usize, u32),
        dst_qp: usize,
        stag: u32,
        vaddr: u64,
        length: u32,
        access: u8,
        invalidate: bool,
        commit: bool,
    ) -> TptOutcome {
        if let Some(head) = self.exc_head {
            if head.request != request {
                return TptOutcome::Wait; // lookups wait behind the head
            }
            return match head.answer {
                None => TptOutcome::Wait,
                Some(answer) => {
                    self.exc_head = None;
                    answer.map_or(TptOutcome::Refuse, TptOutcome::Translate)
                }
            };
        }
        let entry = self.tpt.get(&(stag >> 8)).copied().filter(|e| e.valid());
        let Some(e) = entry else {
            self.exc_head = Some(ExcHead {
                tag: self.exc_tag,
                stag,
                vaddr,
                length,
                access,
                invalidate: invalidate && commit,
                dst_qp,
                request,
                answer: None,
            });
            return TptOutcome::Wait;
        };
        let right = match access {
            1 => csr::TPT_REMOTE_READ,
            2 => csr::TPT_REMOTE_WRITE,
            _ => csr::TPT_ATOMIC,
        };
        let inside = vaddr >= e.vaddr
            && vaddr as u128 + length as u128 <= e.vaddr as u128 + e.length as u128;
        if e.key() != stag as u8 || e.word0 & right == 0 || !inside {
            return TptOutcome::Refuse;
        }
        if commit && (e.word0 & csr::TPT_ONE_SHOT != 0 || invalidate) {
            if let Some(entry) = self.tpt.get_mut(&(stag >> 8)) {
                entry.word0 &= !csr::TPT_VALID;
            }
        }
        TptOutcome::Translate(e.paddr.wrapping_add((vaddr - e.vaddr) as u32))
    }

    /// The NIC gives up on the head (`EXC_TIMEOUT`): the request is refused.
    pub fn time_out_exception(&mut self) {
        if let Some(h) = self.exc_head.as_mut().filter(|h| h.answer.is_none()) {
            h.answer = Some(None);
            self.exc_tag = self.exc_tag.wrapping_add(1);
        }
    }

    fn tpt_command(&mut self, command: u64) {
        let index = self.tpt_index;
        if index >= 1 << self.tpt_log2 {
            self.tpt_refused = self.tpt_refused.wrapping_add(1);
            return;
        }
        match command {
            csr::TPT_COMMAND_WRITE => {
                self.tpt.insert(index, self.tpt_stage);
            }
            csr::TPT_COMMAND_INVALIDATE => {
                self.tpt.entry(index).or_default().word0 &= !csr::TPT_VALID;
            }
            csr::TPT_COMMAND_READ => {
                self.tpt_stage = self.tpt.get(&index).copied().unwrap_or_default();
            }
            csr::TPT_COMMAND_TAKE => {
                self.tpt_stage = self.tpt.get(&index).copied().unwrap_or_default();
                self.tpt.entry(index).or_default().word0 &= !csr::TPT_VALID;
            }
            _ => return,
        }
        self.tpt_busy_left = self.tpt_busy_reads;
        let after = self.tpt.get(&index).copied().unwrap_or_default();
        self.tpt_log.push((command, index, after));
        if matches!(command, csr::TPT_COMMAND_READ | csr::TPT_COMMAND_TAKE) {
            if let Some((request, stag, vaddr, length, access)) = self.race_after_read.take() {
                let out = self.tpt_check(request, 1, stag, vaddr, length, access, false, true);
                self.raced.push(out);
            }
        }
    }

    fn exc_answer(&mut self, value: u64) {
        let tag = ((value & csr::EXC_TAG_MASK) >> csr::EXC_TAG_SHIFT) as u8;
        match self.exc_head.as_mut() {
            Some(h) if h.answer.is_none() && h.tag == tag => {
                h.answer = Some(
                    (value & csr::EXC_ANSWER_TRANSLATE != 0)
                        .then_some((value >> csr::EXC_ANSWER_PADDR_SHIFT) as u32),
                );
                let head = *h;
                self.exc_answers.push((head, value));
                self.exc_tag = self.exc_tag.wrapping_add(1);
            }
            _ => self.exc_stale_answers = self.exc_stale_answers.wrapping_add(1),
        }
    }

    /// The head as `EXC_HEAD0` shows it (0 when none waits for an answer).
    pub fn exc_head0(&self) -> u64 {
        match self.exc_head.filter(|h| h.answer.is_none()) {
            Some(h) => {
                csr::EXC_HEAD_VALID
                    | (h.dst_qp as u64) << csr::EXC_HEAD_QP_SHIFT
                    | (h.access as u64) << csr::EXC_HEAD_ACCESS_SHIFT
                    | if h.invalidate {
                        csr::EXC_HEAD_INVALIDATE
                    } else {
                        0
                    }
                    | (h.tag as u64) << csr::EXC_TAG_SHIFT
                    | (h.stag as u64) << csr::EXC_HEAD_STAG_SHIFT
            }
            None => 0,
        }
    }

    pub fn enable(&self) -> u64 {
        self.regs.get(&(csr::ENABLE as u32)).copied().unwrap_or(0)
    }

    pub fn read(&self, addr: u32, len: usize) -> Vec<u8> {
        self.mem[addr as usize..addr as usize + len].to_vec()
    }

    pub fn write(&mut self, addr: u32, data: &[u8]) {
        self.mem[addr as usize..addr as usize + data.len()].copy_from_slice(data);
    }

    pub fn words<const N: usize>(&self, addr: u32) -> [u64; N] {
        let mut w = [0u64; N];
        for (i, x) in w.iter_mut().enumerate() {
            let a = addr as usize + 8 * i;
            *x = u64::from_le_bytes(self.mem[a..a + 8].try_into().unwrap());
        }
        w
    }

    pub fn put_words(&mut self, addr: u32, words: &[u64]) {
        for (i, x) in words.iter().enumerate() {
            let a = addr as usize + 8 * i;
            self.mem[a..a + 8].copy_from_slice(&x.to_le_bytes());
        }
    }

    /// The WQE at send index `index` of queue pair `q`.
    pub fn wqe(&self, q: usize, index: u32) -> Wqe {
        let qp = &self.qps[q];
        let slot = index % (1 << qp.sq_log2);
        Wqe::from_words(&self.words::<8>(qp.sq_base + slot * 64))
    }

    /// Writes the next completion entry (what the NIC does); false if the ring is full.
    pub fn push_cqe(&mut self, mut cqe: Cqe) -> bool {
        if self.cq_pi.wrapping_sub(self.cq_ci) >= 1 << self.cq_log2 {
            return false;
        }
        cqe.sequence = self.cq_pi + 1;
        let addr = self.cq_base + (self.cq_pi % (1 << self.cq_log2)) * 32;
        self.put_words(addr, &cqe.to_words());
        self.cq_pi += 1;
        true
    }

    /// Every CSR write to `offset`, in order.
    pub fn writes_to(&self, offset: u16) -> Vec<u64> {
        self.csr_writes
            .iter()
            .filter(|(o, _)| *o == offset as u32)
            .map(|(_, v)| *v)
            .collect()
    }

    fn on_write(&mut self, offset: u32, value: u64) {
        self.csr_writes.push((offset, value));
        self.regs.insert(offset, value);
        let o = offset as u16;
        match o {
            csr::CQ_BASE => {
                self.cq_base = value as u32;
                self.cq_pi = 0;
                self.cq_ci = 0;
            }
            csr::CQ_SIZE_LOG2 => self.cq_log2 = value as u32,
            csr::CQ_CI => self.cq_ci = value as u32,
            _ if self.tpt_log2 > 0 && (csr::TPT_INDEX..=csr::EXC_TIMEOUT).contains(&o) => match o {
                csr::TPT_INDEX => self.tpt_index = value as u32 & 0xFF_FFFF,
                csr::TPT_WORD0 => self.tpt_stage.word0 = value & 0xFF1F,
                csr::TPT_VADDR => self.tpt_stage.vaddr = value,
                csr::TPT_LENGTH => self.tpt_stage.length = value as u32,
                csr::TPT_PADDR => self.tpt_stage.paddr = value as u32,
                csr::TPT_COMMAND => self.tpt_command(value),
                csr::EXC_ANSWER => self.exc_answer(value),
                _ => {}
            },
            _ if o >= csr::QP_BASE
                && o < csr::QP_BASE + csr::QP_STRIDE * self.queue_pairs as u16 =>
            {
                let q = ((o - csr::QP_BASE) / csr::QP_STRIDE) as usize;
                let qp = &mut self.qps[q];
                match (o - csr::QP_BASE) % csr::QP_STRIDE {
                    csr::QP_SQ_BASE => qp.sq_base = value as u32,
                    csr::QP_SQ_SIZE_LOG2 => qp.sq_log2 = value as u32,
                    csr::QP_SQ_PI => qp.sq_pi = value as u32 & PSN_MASK,
                    csr::QP_RQ_BASE => qp.rq_base = value as u32,
                    csr::QP_RQ_SIZE_LOG2 => qp.rq_log2 = value as u32,
                    csr::QP_RQ_PI => qp.rq_pi = value as u32 & PSN_MASK,
                    csr::QP_REMOTE => qp.remote = value,
                    csr::QP_CTRL => {
                        let start = (value >> csr::QP_CTRL_START_PSN_SHIFT) as u32 & PSN_MASK;
                        if value & csr::QP_CTRL_RESET != 0 {
                            *qp = Qp {
                                sq_pi: start,
                                sq_ci: start,
                                ..Qp::default()
                            };
                        } else if value & csr::QP_CTRL_SEND_RESET != 0 {
                            // The send side only: what was queued is forgotten.
                            (qp.sq_pi, qp.sq_ci) = (start, start);
                        }
                        qp.enabled = value & csr::QP_CTRL_ENABLE != 0;
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn on_read(&mut self, offset: u32) -> u64 {
        self.csr_reads += 1;
        match offset as u16 {
            csr::NIC_ID => csr::NIC_ID_VALUE,
            csr::NIC_CONFIG => self.queue_pairs as u64 | 256 << 8 | self.tpt_log2 << 24 | 8 << 32,
            csr::TPT_STATUS if self.tpt_log2 > 0 => {
                let busy = self.tpt_stuck || self.tpt_busy_left > 0;
                self.tpt_busy_left = self.tpt_busy_left.saturating_sub(1);
                busy as u64
                    | (self.tpt_refused as u64) << csr::TPT_STATUS_REFUSED_SHIFT
                    | (self.exc_stale_answers as u64) << csr::TPT_STATUS_STALE_ANSWERS_SHIFT
            }
            // The staging registers read back what they hold (a read command loads them).
            csr::TPT_WORD0 if self.tpt_log2 > 0 => self.tpt_stage.word0,
            csr::TPT_VADDR if self.tpt_log2 > 0 => self.tpt_stage.vaddr,
            csr::TPT_LENGTH if self.tpt_log2 > 0 => self.tpt_stage.length as u64,
            csr::TPT_PADDR if self.tpt_log2 > 0 => self.tpt_stage.paddr as u64,
            csr::EXC_HEAD0 if self.tpt_log2 > 0 => self.exc_head0(),
            csr::EXC_HEAD1 if self.tpt_log2 > 0 => self
                .exc_head
                .filter(|h| h.answer.is_none())
                .map_or(0, |h| h.vaddr),
            csr::EXC_HEAD2 if self.tpt_log2 > 0 => self
                .exc_head
                .filter(|h| h.answer.is_none())
                .map_or(0, |h| h.length as u64),
            o => self.regs.get(&(o as u32)).copied().unwrap_or(0),
        }
    }
}

/// A NIC on its own: the test writes completions into its memory by hand.
pub struct LoneNic(pub NicState);

impl NicAccess for LoneNic {
    fn csr_read(&mut self, offset: u32) -> u64 {
        self.0.on_read(offset)
    }
    fn csr_write(&mut self, offset: u32, value: u64) {
        self.0.on_write(offset, value)
    }
    fn mem_read(&mut self, addr: u64, buf: &mut [u8]) {
        buf.copy_from_slice(&self.0.mem[addr as usize..addr as usize + buf.len()]);
    }
    fn mem_write(&mut self, addr: u64, data: &[u8]) {
        self.0.write(addr as u32, data);
    }
}

pub type Shared = Rc<RefCell<Vec<NicState>>>;

/// Several fake NICs connected by an ideal network (but for the faults of [`Faults`]).
pub struct Fabric {
    pub nics: Shared,
    pub faults: Rc<RefCell<Faults>>,
}

/// What a fault does to a driver control SEND (SEND_IMMEDIATE with `CONTROL_IMMEDIATE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultEffect {
    /// Not delivered; the send completes with this status (RETRY_EXCEEDED: it vanished on
    /// the wire; a NACK's status: the responder refused it).
    Lost(CompletionStatus),
    /// Delivered, but the acknowledgement is lost: the send completes RETRY_EXCEEDED.
    AckLost,
}

/// A one-shot fault: the next control SEND from `src` to `dst` that carries a message of
/// `kind` (any control SEND with `None`).
#[derive(Clone, Copy, Debug)]
pub struct ControlFault {
    pub src: usize,
    pub dst: usize,
    pub kind: Option<ControlKind>,
    pub effect: FaultEffect,
}

/// Faults injected into driver control SENDs: one-shot ones, and random ones (each control
/// SEND to a powered NIC meets a random [`FaultEffect`] with probability `random_rate`).
pub struct Faults {
    pub once: Vec<ControlFault>,
    pub random_rate: f64,
    pub rng: rand_chacha::ChaCha8Rng,
    /// Faults applied so far: (src, dst, the SEND's message kinds, effect).
    pub applied: Vec<(usize, usize, Vec<ControlKind>, FaultEffect)>,
}

impl Default for Faults {
    fn default() -> Self {
        use rand::SeedableRng;
        Faults {
            once: Vec::new(),
            random_rate: 0.0,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(0),
            applied: Vec::new(),
        }
    }
}

/// The random faults, in proportion: vanished, receiver not ready, ack lost, port down.
pub const RANDOM_FAULTS: [FaultEffect; 4] = [
    FaultEffect::Lost(CompletionStatus::RetryExceeded),
    FaultEffect::Lost(CompletionStatus::Remote(Syndrome::ReceiverNotReady)),
    FaultEffect::AckLost,
    FaultEffect::Lost(CompletionStatus::Remote(Syndrome::PortDown)),
];

impl Faults {
    /// The fault for a control SEND from `src` to `dst` carrying `kinds`, if any.
    fn take(&mut self, src: usize, dst: usize, kinds: &[ControlKind]) -> Option<FaultEffect> {
        use rand::Rng;
        let hit = self.once.iter().position(|f| {
            f.src == src && f.dst == dst && f.kind.is_none_or(|k| kinds.contains(&k))
        });
        let effect = match hit {
            Some(i) => Some(self.once.remove(i).effect),
            None if self.random_rate > 0.0 && self.rng.gen_bool(self.random_rate) => {
                Some(RANDOM_FAULTS[self.rng.gen_range(0..RANDOM_FAULTS.len())])
            }
            None => None,
        };
        if let Some(e) = effect {
            self.applied.push((src, dst, kinds.to_vec(), e));
        }
        effect
    }
}

/// One NIC of a fabric, as its driver sees it.
pub struct FabricNic {
    pub nics: Shared,
    pub node: usize,
}

impl NicAccess for FabricNic {
    fn csr_read(&mut self, offset: u32) -> u64 {
        self.nics.borrow_mut()[self.node].on_read(offset)
    }
    fn csr_write(&mut self, offset: u32, value: u64) {
        self.nics.borrow_mut()[self.node].on_write(offset, value)
    }
    fn mem_read(&mut self, addr: u64, buf: &mut [u8]) {
        let n = self.nics.borrow();
        buf.copy_from_slice(&n[self.node].mem[addr as usize..addr as usize + buf.len()]);
    }
    fn mem_write(&mut self, addr: u64, data: &[u8]) {
        self.nics.borrow_mut()[self.node].write(addr as u32, data);
    }
}

enum Outcome {
    Done(CompletionStatus),
    /// The responder's completion ring is full: try again later.
    Stall,
}

impl Fabric {
    pub fn new(nodes: usize, queue_pairs: usize) -> Self {
        Fabric {
            nics: Rc::new(RefCell::new(
                (0..nodes).map(|i| NicState::new(i, queue_pairs)).collect(),
            )),
            faults: Rc::new(RefCell::new(Faults::default())),
        }
    }

    /// The next control SEND from `src` to `dst` carrying a message of `kind` meets `effect`.
    pub fn fault_next(&self, src: usize, dst: usize, kind: ControlKind, effect: FaultEffect) {
        self.faults.borrow_mut().once.push(ControlFault {
            src,
            dst,
            kind: Some(kind),
            effect,
        });
    }

    /// Every control SEND meets a random fault with probability `rate` (0 stops them).
    pub fn random_faults(&self, rate: f64, seed: u64) {
        use rand::SeedableRng;
        let mut f = self.faults.borrow_mut();
        f.random_rate = rate;
        f.rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    }

    /// NICs with a hardware TPT of `2^tpt_log2` entries.
    pub fn with_tpt(nodes: usize, queue_pairs: usize, tpt_log2: u64) -> Self {
        let f = Fabric::new(nodes, queue_pairs);
        for n in f.nics.borrow_mut().iter_mut() {
            n.tpt_log2 = tpt_log2;
        }
        f
    }

    pub fn nic(&self, node: usize) -> FabricNic {
        FabricNic {
            nics: self.nics.clone(),
            node,
        }
    }

    pub fn with<R>(&self, node: usize, f: impl FnOnce(&mut NicState) -> R) -> R {
        f(&mut self.nics.borrow_mut()[node])
    }

    /// Powers a NIC off (requests to it are NACKed PORT_DOWN) or on (reset state, memory
    /// cleared: the host rebooted).
    pub fn power(&self, node: usize, on: bool) {
        let mut n = self.nics.borrow_mut();
        if on {
            n[node] = n[node].reset();
        } else {
            n[node].powered = false;
        }
    }

    /// Executes every posted work request of every NIC not on hold; returns how many.
    pub fn step(&self) -> usize {
        let mut done = 0;
        let count = self.nics.borrow().len();
        loop {
            let mut progress = false;
            for src in 0..count {
                let qps = self.nics.borrow()[src].queue_pairs;
                for q in 0..qps {
                    if self.execute_one(src, q) {
                        progress = true;
                        done += 1;
                    }
                }
            }
            if !progress {
                return done;
            }
        }
    }

    fn execute_one(&self, src: usize, q: usize) -> bool {
        let mut nics = self.nics.borrow_mut();
        let s = &nics[src];
        if !s.powered || s.hold || !s.qps[q].enabled || s.qps[q].sq_ci == s.qps[q].sq_pi {
            return false;
        }
        let index = s.qps[q].sq_ci;
        let wqe = s.wqe(q, index);
        let dst = (s.qps[q].remote & 0xFFFF) as usize;
        let dst_qp = ((s.qps[q].remote >> 16) & 0xFFFF) as usize;
        // NOP, BIND RKEY, DELAY: local, in order (the fake has no clock to delay by). With a
        // hardware TPT a BIND writes its entry first, as the NIC's `BindWriter` does (an
        // unbind, null address and zero length, writes it invalid).
        if wqe.opcode == nic_abi::BIND_OPCODE && nics[src].tpt_log2 > 0 {
            let index = wqe.stag >> 8;
            if index < 1 << nics[src].tpt_log2 {
                let valid = !(wqe.remote_vaddr == 0 && wqe.length == 0);
                let entry = HwEntry {
                    word0: (valid as u64) * csr::TPT_VALID
                        | ((wqe.immediate as u64) & 7) << 1
                        | ((wqe.stag as u8) as u64) << csr::TPT_KEY_SHIFT,
                    vaddr: wqe.remote_vaddr,
                    length: wqe.length,
                    paddr: wqe.local_addr,
                };
                nics[src].tpt.insert(index, entry);
                nics[src].tpt_log.push((0, index, entry));
            }
        }
        if matches!(
            wqe.opcode,
            nic_abi::NOP_OPCODE | nic_abi::BIND_OPCODE | nic_abi::DELAY_OPCODE
        ) {
            return Self::complete(
                &mut nics[src],
                q,
                index,
                &wqe,
                dst,
                CompletionStatus::Success,
            );
        }
        let Some(opcode) = WqeOpcode::from_code(wqe.opcode) else {
            return Self::complete(
                &mut nics[src],
                q,
                index,
                &wqe,
                dst,
                CompletionStatus::BadOpcode,
            );
        };
        let up = dst < nics.len() && nics[dst].powered;
        let fault =
            if up && opcode == WqeOpcode::SendImmediate && wqe.immediate == CONTROL_IMMEDIATE {
                let payload = if wqe.inline {
                    wqe.inline_payload()[..wqe.length as usize].to_vec()
                } else {
                    nics[src].read(wqe.local_addr, wqe.length as usize)
                };
                let kinds = control_kinds(&payload);
                if std::env::var("FAKE_TRACE").is_ok() {
                    eprintln!("ctrl {src}->{dst}: {:?}", ControlSend::decode(&payload));
                }
                self.faults.borrow_mut().take(src, dst, &kinds)
            } else {
                None
            };
        let outcome = if !up {
            Outcome::Done(CompletionStatus::Remote(Syndrome::PortDown))
        } else if let Some(FaultEffect::Lost(status)) = fault {
            Outcome::Done(status)
        } else {
            match Self::respond(&mut nics, (src, q, index), dst, dst_qp, opcode, &wqe) {
                Outcome::Done(CompletionStatus::Success) if fault == Some(FaultEffect::AckLost) => {
                    Outcome::Done(CompletionStatus::RetryExceeded)
                }
                o => o,
            }
        };
        match outcome {
            Outcome::Stall => false,
            Outcome::Done(status) => Self::complete(&mut nics[src], q, index, &wqe, dst, status),
        }
    }

    fn complete(
        s: &mut NicState,
        q: usize,
        index: u32,
        wqe: &Wqe,
        dst: usize,
        status: CompletionStatus,
    ) -> bool {
        let cqe = Cqe {
            opcode: wqe.opcode,
            status: status.code(),
            qp: q as u8,
            is_receive: false,
            has_immediate: false,
            byte_count: wqe.length,
            wqe_index: index,
            src_node: dst as u16,
            src_qp: s.node as u16,
            wr_id: wqe.wr_id,
            immediate: 0,
            sequence: 0,
        };
        if !s.push_cqe(cqe) {
            return false;
        }
        s.qps[q].sq_ci = (index + 1) & PSN_MASK;
        true
    }

    fn respond(
        nics: &mut [NicState],
        request: (usize, usize, u32),
        dst: usize,
        dst_qp: usize,
        opcode: WqeOpcode,
        wqe: &Wqe,
    ) -> Outcome {
        use CompletionStatus::*;
        let enable = nics[dst].enable();
        if enable & csr::ENABLE_SEND_RECV == 0 {
            return Outcome::Done(Remote(Syndrome::RemoteOperationalError));
        }
        if opcode.is_rdma() && enable & csr::ENABLE_RDMA == 0 {
            return Outcome::Done(Remote(Syndrome::RdmaDisabled));
        }
        if dst_qp >= nics[dst].queue_pairs || !nics[dst].qps[dst_qp].enabled {
            return Outcome::Done(RetryExceeded);
        }
        let (src, q, _) = request;
        // The remote address: physical without a TPT (000), translated by the TPT.
        let mut remote = wqe.remote_vaddr as u32;
        if opcode.is_rdma() && nics[dst].tpt_log2 > 0 {
            let access = match opcode {
                WqeOpcode::RdmaRead => 1,
                WqeOpcode::AtomicCompareSwap | WqeOpcode::AtomicFetchAdd => 4,
                _ => 2,
            };
            let length = if opcode.is_atomic() { 8 } else { wqe.length };
            // An RDMA_WRITE_IMMEDIATE without a receive buffer is refused after the check
            // (RECEIVER_NOT_READY): checked only, it must not use up the entry.
            let rq = &nics[dst].qps[dst_qp];
            let commit = opcode != WqeOpcode::RdmaWriteImmediate || rq.rq_ci != rq.rq_pi;
            let d = &mut nics[dst];
            match d.tpt_check(
                request,
                dst_qp,
                wqe.stag,
                wqe.remote_vaddr,
                length,
                access,
                wqe.invalidate,
                commit,
            ) {
                TptOutcome::Translate(p) => remote = p,
                TptOutcome::Refuse => return Outcome::Done(Remote(Syndrome::RemoteAccessError)),
                TptOutcome::Wait => return Outcome::Stall,
            }
        }
        let payload = if matches!(
            opcode,
            WqeOpcode::Send
                | WqeOpcode::SendImmediate
                | WqeOpcode::RdmaWrite
                | WqeOpcode::RdmaWriteImmediate
        ) {
            if wqe.inline {
                wqe.inline_payload()
            } else {
                nics[src].read(wqe.local_addr, wqe.length as usize)
            }
        } else {
            Vec::new()
        };
        let d = &mut nics[dst];
        match opcode {
            WqeOpcode::Send | WqeOpcode::SendImmediate | WqeOpcode::RdmaWriteImmediate => {
                if d.cq_pi.wrapping_sub(d.cq_ci) >= 1 << d.cq_log2 {
                    return Outcome::Stall;
                }
                let rq = d.qps[dst_qp].clone();
                if rq.rq_ci == rq.rq_pi {
                    return Outcome::Done(Remote(Syndrome::ReceiverNotReady));
                }
                let rqe = Rqe::from_words(
                    &d.words::<4>(rq.rq_base + (rq.rq_ci % (1 << rq.rq_log2)) * 32),
                );
                d.qps[dst_qp].rq_ci = (rq.rq_ci + 1) & PSN_MASK;
                let mut status = Success;
                if opcode == WqeOpcode::RdmaWriteImmediate {
                    d.write(remote, &payload);
                } else {
                    let n = payload.len().min(rqe.buffer_length as usize);
                    d.write(rqe.buffer_addr, &payload[..n]);
                    if payload.len() > rqe.buffer_length as usize {
                        status = LocalLengthError;
                    }
                }
                d.push_cqe(Cqe {
                    opcode: opcode as u8,
                    status: status.code(),
                    qp: dst_qp as u8,
                    is_receive: true,
                    has_immediate: opcode.has_immediate(),
                    byte_count: wqe.length,
                    wqe_index: rq.rq_ci,
                    src_node: src as u16,
                    src_qp: q as u16,
                    wr_id: rqe.wr_id,
                    immediate: wqe.immediate,
                    sequence: 0,
                });
                if status != Success {
                    return Outcome::Done(Remote(Syndrome::InvalidRequest));
                }
            }
            WqeOpcode::RdmaWrite => d.write(remote, &payload),
            WqeOpcode::RdmaRead => {
                let data = d.read(remote, wqe.length as usize);
                nics[src].write(wqe.local_addr, &data);
            }
            WqeOpcode::AtomicCompareSwap | WqeOpcode::AtomicFetchAdd => {
                let a = remote;
                let old = u64::from_le_bytes(d.read(a, 8).try_into().unwrap());
                let new = if opcode == WqeOpcode::AtomicFetchAdd {
                    old.wrapping_add(wqe.compare_add)
                } else if old == wqe.compare_add {
                    wqe.swap
                } else {
                    old
                };
                d.write(a, &new.to_le_bytes());
                nics[src].write(wqe.local_addr, &old.to_le_bytes());
            }
        }
        Outcome::Done(Success)
    }
}

/// Drivers on fake NICs joined by a [`Fabric`]: boot, poll and settle them together.
pub struct Cluster {
    pub fabric: Fabric,
    pub drivers: Vec<Option<Driver<FabricNic>>>,
    pub completions: Vec<Vec<Completion>>,
    pub now: u64,
    /// The driver configuration of (node, node count, incarnation).
    config: fn(NodeId, usize, u32) -> DriverConfig,
}

impl Cluster {
    /// `fabric`'s NICs, each booted with `config(node, nodes, incarnation)`.
    pub fn new(fabric: Fabric, config: fn(NodeId, usize, u32) -> DriverConfig) -> Self {
        let n = fabric.nics.borrow().len();
        Cluster {
            fabric,
            drivers: (0..n).map(|_| None).collect(),
            completions: vec![Vec::new(); n],
            now: 0,
            config,
        }
    }

    pub fn boot(&mut self, node: usize, incarnation: u32) {
        let n = self.drivers.len();
        let mut d = Driver::new(
            self.fabric.nic(node),
            (self.config)(node as NodeId, n, incarnation),
        )
        .unwrap();
        d.boot(self.now).unwrap();
        self.drivers[node] = Some(d);
    }

    pub fn d(&mut self, node: usize) -> &mut Driver<FabricNic> {
        self.drivers[node].as_mut().unwrap()
    }

    /// Runs the fabric and polls every driver until nothing moves and no request waits in
    /// an exception queue.
    pub fn settle(&mut self) {
        for _ in 0..500 {
            let mut moved = self.fabric.step();
            for (i, d) in self.drivers.iter_mut().enumerate() {
                if let Some(d) = d {
                    let c = d.poll(self.now).unwrap();
                    moved += c.len();
                    self.completions[i].extend(c);
                }
            }
            self.now += 10;
            let waiting = self
                .fabric
                .nics
                .borrow()
                .iter()
                .any(|n| n.exc_head.is_some());
            if moved == 0 && !waiting && self.fabric.step() == 0 {
                return;
            }
        }
        panic!("the cluster did not settle");
    }

    /// Runs the fabric and polls every driver `rounds` times (time advances by 10 each),
    /// whether or not anything moves: for states that do not settle (a driver resending to
    /// a peer whose NIC is on hold).
    pub fn run(&mut self, rounds: usize) {
        for _ in 0..rounds {
            self.fabric.step();
            for (i, d) in self.drivers.iter_mut().enumerate() {
                if let Some(d) = d {
                    let c = d.poll(self.now).unwrap();
                    self.completions[i].extend(c);
                }
            }
            self.now += 10;
        }
    }

    pub fn take(&mut self, node: usize) -> Vec<Completion> {
        std::mem::take(&mut self.completions[node])
    }

    /// Runs the fabric and polls every driver for `ticks` (timers fire meanwhile: protocol
    /// resends, probes), then settles.
    pub fn run_for(&mut self, ticks: u64) {
        let end = self.now + ticks;
        while self.now < end {
            self.fabric.step();
            for (i, d) in self.drivers.iter_mut().enumerate() {
                if let Some(d) = d {
                    let c = d.poll(self.now).unwrap();
                    self.completions[i].extend(c);
                }
            }
            self.now += 10;
        }
        self.settle();
    }

    /// Whether the live drivers agree: each has joined, admits every other and holds
    /// exactly the published copy of its TPT part.
    pub fn check_converged(&mut self) -> Result<(), String> {
        let live: Vec<usize> = (0..self.drivers.len())
            .filter(|&i| self.drivers[i].is_some())
            .collect();
        for &p in &live {
            if !self.d(p).is_joined() {
                return Err(format!("node {p} has not joined"));
            }
            for &x in &live {
                if p == x {
                    continue;
                }
                if self.d(p).is_barred(x as NodeId) || !self.d(p).updates_enabled(x as NodeId) {
                    return Err(format!(
                        "node {p} has node {x} barred={} updates={}",
                        self.d(p).is_barred(x as NodeId),
                        self.d(p).updates_enabled(x as NodeId)
                    ));
                }
                let copy: Vec<TptEntry> = self
                    .d(p)
                    .tpt()
                    .remote_entries(x as NodeId)
                    .unwrap()
                    .copied()
                    .collect();
                let truth = self.d(x).published_local_entries();
                if copy != truth {
                    return Err(format!(
                        "node {p}'s copy of node {x}'s TPT part: {copy:?}, node {x} has {truth:?}"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Writes a random-reboot run issued: work-request id -> (target, the target's epoch then).
pub type Issued = HashMap<u64, (usize, u32)>;

/// What [`random_reboots`] saw.
pub struct RandomReboots {
    pub issued: Issued,
    /// Each node's boot count.
    pub epoch: Vec<u32>,
    /// Writes that completed with success.
    pub succeeded: u32,
    /// Writes the target refused (statuses the caller's `refused` accepts).
    pub refused: u32,
}

/// Four drivers on `fabric`, 60 random rounds: reboots (none in the last 15 rounds),
/// registrations of 512 bytes at `app + 0x1000 k`, deregistrations and 64-byte writes; the
/// fabric sometimes runs only partly, so posts stay in flight across reboots. Every
/// completion is checked: a successful write was issued against its target's current
/// boot. Ends settled, with every completion taken.
pub fn random_reboots(
    fabric: Fabric,
    config: fn(NodeId, usize, u32) -> DriverConfig,
    app: u32,
    seed: u64,
    refused: fn(&CompletionStatus) -> bool,
) -> (Cluster, RandomReboots) {
    random_reboots_with_faults(fabric, config, app, seed, refused, 0.0)
}

/// [`random_reboots`] with random faults on control SENDs ([`Fabric::random_faults`] at
/// `fault_rate`) until the last round; then the drivers run on (their timers fire) until
/// they have had time to recover, and settle.
pub fn random_reboots_with_faults(
    fabric: Fabric,
    config: fn(NodeId, usize, u32) -> DriverConfig,
    app: u32,
    seed: u64,
    refused: fn(&CompletionStatus) -> bool,
    fault_rate: f64,
) -> (Cluster, RandomReboots) {
    fabric.random_faults(fault_rate, seed ^ 0x5EED);
    use nic_driver::tpt::{Protection, RegionRef};
    use nic_driver::VerbsError;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let n = fabric.nics.borrow().len();
    let mut c = Cluster::new(fabric, config);
    let mut r = RandomReboots {
        issued: HashMap::new(),
        epoch: vec![1; n],
        succeeded: 0,
        refused: 0,
    };
    let tally = |r: &mut RandomReboots, done: &[Completion]| {
        for comp in done {
            if let Completion::Send { wr_id, status, .. } = comp {
                if *status == CompletionStatus::Success {
                    r.succeeded += 1;
                    let (x, e) = r.issued[wr_id];
                    assert_eq!(
                        e, r.epoch[x],
                        "seed {seed}: write {wr_id} issued against an earlier boot of node {x} succeeded"
                    );
                } else if refused(status) {
                    r.refused += 1;
                }
            }
        }
    };
    for i in 0..n {
        c.boot(i, (seed as u32) << 8 | i as u32);
    }
    let mut next_wr = 0u64;
    for round in 0..60 {
        let node = rng.gen_range(0..n);
        match rng.gen_range(0..10) {
            0 if round < 45 => {
                c.fabric.power(node, true);
                r.epoch[node] += 1;
                let inc = rng.gen();
                c.boot(node, inc);
            }
            1..=3 => {
                let k = c.d(node).tpt().local_len() as u32;
                let phys = app + 0x1000 * (k % 64);
                c.d(node)
                    .register(0x100_0000 + phys as u64, phys, 512, Protection::ReadWrite)
                    .unwrap();
            }
            4 => {
                let h = c.d(node).tpt().local_entries().nth(1).map(|e| e.handle);
                if let Some(h) = h {
                    c.d(node).deregister(h).unwrap();
                }
            }
            _ => {
                let x = (node + rng.gen_range(1..n)) % n;
                let d = c.d(node);
                let local = d.tpt().local_entries().next().copied();
                let remote = d.tpt().remote_entries(x as NodeId).unwrap().next().copied();
                if let (Some(l), Some(t)) = (local, remote) {
                    let wr = next_wr;
                    next_wr += 1;
                    let res = d.rdma_write(
                        x as NodeId,
                        RegionRef::new(l.handle, l.logical),
                        RegionRef::new(t.handle, t.logical),
                        64,
                        None,
                        wr,
                    );
                    match res {
                        Ok(()) => {
                            r.issued.insert(wr, (x, r.epoch[x]));
                        }
                        Err(VerbsError::NodeBarred { .. } | VerbsError::RingFull { .. }) => {}
                        Err(e) => panic!("seed {seed}: {e}"),
                    }
                }
            }
        }
        if rng.gen_bool(0.7) {
            c.fabric.step();
        }
        for i in 0..n {
            let now = c.now;
            let done = c.d(i).poll(now).unwrap();
            tally(&mut r, &done);
        }
        c.now += 10;
    }
    if fault_rate > 0.0 {
        c.fabric.random_faults(0.0, 0);
        // Long enough for control resends and for probes of nodes found down.
        c.run_for(2000);
    } else {
        c.settle();
    }
    for i in 0..n {
        let done = c.take(i);
        tally(&mut r, &done);
    }
    (c, r)
}
