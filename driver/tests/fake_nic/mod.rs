//! An in-test fake of the NIC's host interface: plain Rust objects implementing
//! `NicAccess`, no simulator. Each fake NIC records every CSR write and owns a host memory;
//! a `Fabric` of several of them executes posted work requests (SEND, RDMA WRITE / READ,
//! atomics) between their memories when the test calls `step`, writing completion entries
//! as the NIC of `docs/nic-architecture.md` does: an ideal network (no loss, no delay
//! beyond the step), per-queue-pair order, NACKs for a powered-off NIC (PORT_DOWN), for
//! SEND/RECEIVE disabled, RDMA disabled and no receive buffer.

#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use nic_abi::{csr, CompletionStatus, Cqe, Rqe, Syndrome, Wqe, WqeOpcode, PSN_MASK};
use nic_driver::NicAccess;

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
                        if value & csr::QP_CTRL_RESET != 0 {
                            let start = (value >> csr::QP_CTRL_START_PSN_SHIFT) as u32 & PSN_MASK;
                            *qp = Qp {
                                sq_pi: start,
                                sq_ci: start,
                                ..Qp::default()
                            };
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

/// Several fake NICs connected by an ideal network.
pub struct Fabric {
    pub nics: Shared,
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
        }
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
        let q = n[node].queue_pairs;
        if on {
            n[node] = NicState::new(node, q);
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
        let outcome = if dst >= nics.len() || !nics[dst].powered {
            Outcome::Done(CompletionStatus::Remote(Syndrome::PortDown))
        } else {
            Self::respond(&mut nics, src, q, dst, dst_qp, opcode, &wqe)
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
        src: usize,
        q: usize,
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
        let payload = if matches!(
            opcode,
            WqeOpcode::Send
                | WqeOpcode::SendImmediate
                | WqeOpcode::RdmaWrite
                | WqeOpcode::RdmaWriteImmediate
        ) {
            nics[src].read(wqe.local_addr, wqe.length as usize)
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
                    d.write(wqe.remote_vaddr as u32, &payload);
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
            WqeOpcode::RdmaWrite => d.write(wqe.remote_vaddr as u32, &payload),
            WqeOpcode::RdmaRead => {
                let data = d.read(wqe.remote_vaddr as u32, wqe.length as usize);
                nics[src].write(wqe.local_addr, &data);
            }
            WqeOpcode::AtomicCompareSwap | WqeOpcode::AtomicFetchAdd => {
                let a = wqe.remote_vaddr as u32;
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
