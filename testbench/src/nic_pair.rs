//! Two NIC tops back to back, each with its own host memory, joined by two cell links:
//! the test bench of the NIC RTL (issue: queue engines, completion queue, NACK generator,
//! retransmission). A small host agent per NIC does what a driver does, directly on the
//! host-memory model and the CSR port: ring set-up, posting work requests and receive
//! buffers, doorbells, polling completions. The full driver lives in `driver/`.
//!
//! Works with any backend ([`Stepper`] over the generated `NicTopInputs` /
//! `NicTopOutputs`): Verilator for the regressions, RustHDL stepping or a lockstep pair.

use nic_abi::{csr, Cqe, Rqe, Wqe, CQE_BYTES, RQE_BYTES, WQE_BYTES};
use nic_cosim::cell_link::CellLink;
use nic_cosim::host::{apply_dma_responses, dma_requests};
use nic_cosim::host_memory::{HostMemory, HostMemoryTiming};
use nic_cosim::{NicTopInputs, NicTopOutputs, Stepper};
use std::collections::VecDeque;

/// Host memory map the agent uses (bytes).
pub const HOST_MEMORY_BYTES: usize = 1 << 20;
pub const CQ_RING: u32 = 0x0_1000;
pub const CQ_SIZE_LOG2: u32 = 8;
/// Send ring of QP q at `SQ_RINGS + q * 0x4000` (256 WQEs of 64 bytes).
pub const SQ_RINGS: u32 = 0x1_0000;
pub const SQ_SIZE_LOG2: u32 = 8;
/// Receive ring of QP q at `RQ_RINGS + q * 0x2000` (256 RQEs of 32 bytes).
pub const RQ_RINGS: u32 = 0x2_0000;
pub const RQ_SIZE_LOG2: u32 = 8;
/// Buffers and registered memory from here on.
pub const DATA_AREA: u32 = 0x4_0000;
/// A host with more than [`NARROW_QUEUE_PAIRS`] queue pairs has
/// [`WIDE_HOST_MEMORY_BYTES`] of memory and its rings above the 1 MiB of the map above: send
/// ring of QP q at `WIDE_SQ_RINGS + q * 0x4000`, receive ring at `WIDE_RQ_RINGS + q *
/// 0x2000` (up to 64 queue pairs).
pub const NARROW_QUEUE_PAIRS: usize = 4;
pub const WIDE_HOST_MEMORY_BYTES: usize = 1 << 22;
pub const WIDE_SQ_RINGS: u32 = 0x10_0000;
pub const WIDE_RQ_RINGS: u32 = 0x20_0000;

/// One CSR access waiting or in progress.
#[derive(Clone, Copy, Debug)]
struct CsrOp {
    write: bool,
    addr: u16,
    data: u64,
}

/// One NIC with its host: the model, its memory, and the agent's bookkeeping.
pub struct NicHost<S> {
    pub nic: S,
    pub mem: HostMemory,
    pub node: u16,
    inputs: NicTopInputs,
    pub last_outputs: NicTopOutputs,
    csr_queue: VecDeque<CsrOp>,
    csr_in_flight: VecDeque<CsrOp>,
    csr_results: VecDeque<u64>,
    /// Producer indexes the agent has posted, per QP (send, receive).
    pub sq_posted: Vec<u32>,
    pub rq_posted: Vec<u32>,
    /// Completions consumed so far.
    pub cq_consumed: u32,
    /// Completions read from the ring, oldest first.
    pub completions: Vec<Cqe>,
}

impl<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>> NicHost<S> {
    pub fn new(nic: S, node: u16, queue_pairs: usize, timing: HostMemoryTiming) -> Self {
        NicHost {
            nic,
            mem: HostMemory::new(
                if queue_pairs > NARROW_QUEUE_PAIRS {
                    WIDE_HOST_MEMORY_BYTES
                } else {
                    HOST_MEMORY_BYTES
                },
                timing,
            ),
            node,
            inputs: NicTopInputs::default(),
            last_outputs: NicTopOutputs::default(),
            csr_queue: VecDeque::new(),
            csr_in_flight: VecDeque::new(),
            csr_results: VecDeque::new(),
            sq_posted: vec![0; queue_pairs],
            rq_posted: vec![0; queue_pairs],
            cq_consumed: 0,
            completions: vec![],
        }
    }

    /// Hold the NIC in reset (`on`) from the next clock on, or let it go.
    pub fn hold_reset(&mut self, on: bool) {
        self.inputs.reset = on;
    }

    /// The send ring of QP `qp` (see [`NARROW_QUEUE_PAIRS`]).
    pub fn sq_ring(&self, qp: usize) -> u32 {
        let base = if self.sq_posted.len() > NARROW_QUEUE_PAIRS {
            WIDE_SQ_RINGS
        } else {
            SQ_RINGS
        };
        base + qp as u32 * 0x4000
    }

    /// The receive ring of QP `qp`.
    pub fn rq_ring(&self, qp: usize) -> u32 {
        let base = if self.sq_posted.len() > NARROW_QUEUE_PAIRS {
            WIDE_RQ_RINGS
        } else {
            RQ_RINGS
        };
        base + qp as u32 * 0x2000
    }

    fn csr_idle(&self) -> bool {
        self.csr_queue.is_empty() && self.csr_in_flight.iter().all(|op| op.write)
    }

    /// Read the completion ring: append every new CQE to `completions` and free it.
    /// Returns how many were new. (Host memory is read directly: the host CPU.)
    pub fn poll_completions(&mut self) -> usize {
        let mut n = 0;
        loop {
            let slot = self.cq_consumed % (1 << CQ_SIZE_LOG2);
            let addr = CQ_RING + slot * CQE_BYTES;
            let words: [u64; 4] = std::array::from_fn(|i| self.mem.read_u64(addr + 8 * i as u32));
            let cqe = Cqe::from_words(&words);
            if cqe.sequence != self.cq_consumed.wrapping_add(1) {
                break;
            }
            self.completions.push(cqe);
            self.cq_consumed += 1;
            n += 1;
        }
        if n > 0 {
            self.queue_csr_write(csr::CQ_CI, self.cq_consumed as u64);
        }
        n
    }

    pub fn queue_csr_write(&mut self, addr: u16, data: u64) {
        self.csr_queue.push_back(CsrOp {
            write: true,
            addr,
            data,
        });
    }

    fn queue_csr_read(&mut self, addr: u16) {
        self.csr_queue.push_back(CsrOp {
            write: false,
            addr,
            data: 0,
        });
    }

    /// Write a WQE into QP `qp`'s send ring and ring the doorbell.
    pub fn post_send(&mut self, qp: usize, wqe: &Wqe) -> u32 {
        let index = self.sq_posted[qp];
        self.post_sends(qp, std::slice::from_ref(wqe));
        index
    }

    /// Write `wqes` into QP `qp`'s send ring and ring the doorbell once, for all of them.
    pub fn post_sends(&mut self, qp: usize, wqes: &[Wqe]) {
        for wqe in wqes {
            let slot = self.sq_posted[qp] % (1 << SQ_SIZE_LOG2);
            let base = self.sq_ring(qp) + slot * WQE_BYTES;
            for (i, w) in wqe.to_words().iter().enumerate() {
                self.mem.write_u64(base + 8 * i as u32, *w);
            }
            self.sq_posted[qp] = (self.sq_posted[qp] + 1) & nic_abi::PSN_MASK;
        }
        self.queue_csr_write(csr::qp(qp, csr::QP_SQ_PI), self.sq_posted[qp] as u64);
    }

    /// Post a receive buffer on QP `qp`.
    pub fn post_receive(&mut self, qp: usize, rqe: &Rqe) -> u32 {
        let index = self.rq_posted[qp];
        let slot = index % (1 << RQ_SIZE_LOG2);
        let base = self.rq_ring(qp) + slot * RQE_BYTES;
        for (i, w) in rqe.to_words().iter().enumerate() {
            self.mem.write_u64(base + 8 * i as u32, *w);
        }
        self.rq_posted[qp] = (index + 1) & nic_abi::PSN_MASK;
        self.queue_csr_write(csr::qp(qp, csr::QP_RQ_PI), self.rq_posted[qp] as u64);
        index
    }

    /// Configure the NIC: node id, completion ring, every QP connected to `remote_node`
    /// (same QP number), enabled, reset with start PSN `start_psn + q`.
    pub fn configure(&mut self, remote_node: u16, enable: u64, start_psn: u32) {
        let qps = self.sq_posted.len();
        self.queue_csr_write(csr::NODE_ID, self.node as u64);
        self.queue_csr_write(csr::CQ_BASE, CQ_RING as u64);
        self.queue_csr_write(csr::CQ_SIZE_LOG2, CQ_SIZE_LOG2 as u64);
        for q in 0..qps {
            let psn = (start_psn + q as u32) & nic_abi::PSN_MASK;
            self.queue_csr_write(csr::qp(q, csr::QP_SQ_BASE), self.sq_ring(q) as u64);
            self.queue_csr_write(csr::qp(q, csr::QP_SQ_SIZE_LOG2), SQ_SIZE_LOG2 as u64);
            self.queue_csr_write(csr::qp(q, csr::QP_RQ_BASE), self.rq_ring(q) as u64);
            self.queue_csr_write(csr::qp(q, csr::QP_RQ_SIZE_LOG2), RQ_SIZE_LOG2 as u64);
            self.queue_csr_write(
                csr::qp(q, csr::QP_REMOTE),
                remote_node as u64 | (q as u64) << 16,
            );
            self.queue_csr_write(
                csr::qp(q, csr::QP_CTRL),
                csr::QP_CTRL_ENABLE
                    | csr::QP_CTRL_RESET
                    | (psn as u64) << csr::QP_CTRL_START_PSN_SHIFT,
            );
            self.sq_posted[q] = psn;
            self.rq_posted[q] = 0;
        }
        self.queue_csr_write(csr::ENABLE, enable);
        self.cq_consumed = 0;
    }

    /// Inputs for this cycle from the agent's state, the memory and the link outputs.
    fn drive(&mut self, link_in: &nic_cosim::cell_link::LinkOutputs, link_out_ready: bool) {
        let d = self.mem.drive();
        let i = &mut self.inputs;
        apply_dma_responses(i, &d);
        i.m_cell_ready = link_out_ready;
        i.s_cell_valid = link_in.valid;
        i.s_cell_data = link_in.data;
        i.s_cell_last = link_in.last;
        match self.csr_queue.front() {
            Some(op) => {
                i.csr_valid = true;
                i.csr_write = op.write;
                i.csr_addr = op.addr;
                i.csr_wdata = op.data;
            }
            None => i.csr_valid = false,
        }
    }

    fn step(&mut self) -> NicTopOutputs {
        let out = self.nic.step(&self.inputs);
        self.mem.observe(&dma_requests(&out));
        if self.inputs.csr_valid && out.csr_ready {
            let op = self.csr_queue.pop_front().expect("a CSR op was offered");
            if !op.write {
                self.csr_in_flight.push_back(op);
            }
        }
        if out.csr_rdata_valid {
            if self.csr_in_flight.pop_front().is_some() {
                self.csr_results.push_back(out.csr_rdata);
            }
        }
        self.last_outputs = out;
        out
    }
}

/// Two NICs, nodes 0 and 1, back to back.
pub struct NicPair<S> {
    pub hosts: [NicHost<S>; 2],
    /// `links[0]`: NIC 0 -> NIC 1; `links[1]`: NIC 1 -> NIC 0.
    pub links: [CellLink; 2],
    pub cycle: u64,
    /// An unplugged NIC is not stepped; the fabric answers every request sent to it with
    /// a PORT_DOWN NACK ([`nic_cosim::cell_link::port_down_nack`]).
    pub unplugged: [bool; 2],
    /// Words of the cell arriving at each unplugged NIC so far.
    absorbed: [Vec<u64>; 2],
    pub cell_payload: usize,
}

impl<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>> NicPair<S> {
    pub fn new(
        nics: [S; 2],
        queue_pairs: usize,
        timing: HostMemoryTiming,
        link_latency: u64,
    ) -> Self {
        let [a, b] = nics;
        let mut pair = NicPair {
            hosts: [
                NicHost::new(a, 0, queue_pairs, timing),
                NicHost::new(
                    b,
                    1,
                    queue_pairs,
                    HostMemoryTiming {
                        seed: timing.seed ^ 0x5555,
                        ..timing
                    },
                ),
            ],
            links: [
                CellLink::new(link_latency, 64),
                CellLink::new(link_latency, 64),
            ],
            cycle: 0,
            unplugged: [false; 2],
            absorbed: [vec![], vec![]],
            cell_payload: nic_rtl::DEFAULT_CELL_PAYLOAD,
        };
        for h in &mut pair.hosts {
            h.inputs.reset = true;
        }
        pair.step();
        for h in &mut pair.hosts {
            h.inputs.reset = false;
        }
        pair
    }

    /// One clock of the whole system.
    pub fn step(&mut self) {
        let l0 = self.links[0].drive();
        let l1 = self.links[1].drive();
        let drives = [(l1, l0.sender_ready), (l0, l1.sender_ready)];
        let mut outs = [NicTopOutputs::default(), NicTopOutputs::default()];
        for n in 0..2 {
            if self.unplugged[n] {
                // Powered off: takes every cell, sends nothing.
                outs[n].s_cell_ready = true;
            } else {
                self.hosts[n].drive(&drives[n].0, drives[n].1);
                outs[n] = self.hosts[n].step();
            }
        }
        for n in 0..2 {
            // Cells arriving at an unplugged NIC n travel on link 1 - n.
            let incoming = if n == 0 { l1 } else { l0 };
            if self.unplugged[n] && incoming.valid {
                self.absorbed[n].push(incoming.data);
                if incoming.last {
                    let cell = std::mem::take(&mut self.absorbed[n]);
                    if let Ok(c) = nic_rtl::cell::format::decode_cell(&cell, self.cell_payload) {
                        if c.header.first() && nic_cosim::cell_link::is_request(c.header.opcode) {
                            if let Some(nack) = nic_cosim::cell_link::port_down_nack(&c.header) {
                                self.links[n].inject_cell(&nack);
                            }
                        }
                    }
                }
            }
        }
        self.links[0].observe(
            outs[0].m_cell_valid,
            outs[0].m_cell_data,
            outs[0].m_cell_last,
            outs[1].s_cell_ready,
        );
        self.links[1].observe(
            outs[1].m_cell_valid,
            outs[1].m_cell_data,
            outs[1].m_cell_last,
            outs[0].s_cell_ready,
        );
        self.cycle += 1;
    }

    /// Unplug NIC `n` (it stops; what is in flight to it is answered by the fabric).
    pub fn unplug(&mut self, n: usize) {
        self.unplugged[n] = true;
        self.links[n].flush();
    }

    /// Step until every queued CSR access of both hosts has been performed.
    pub fn flush_csr(&mut self, max_cycles: u64) -> Result<(), String> {
        let start = self.cycle;
        while !(self.hosts[0].csr_idle() && self.hosts[1].csr_idle()) {
            if self.cycle - start > max_cycles {
                return Err(format!(
                    "CSR accesses did not complete in {max_cycles} cycles"
                ));
            }
            self.step();
        }
        Ok(())
    }

    /// Read a CSR of NIC `n` (steps the system until the answer arrives).
    pub fn csr_read(&mut self, n: usize, addr: u16) -> Result<u64, String> {
        self.hosts[n].csr_results.clear();
        self.hosts[n].queue_csr_read(addr);
        let start = self.cycle;
        while self.hosts[n].csr_results.is_empty() {
            if self.cycle - start > 10_000 {
                return Err(format!("CSR read {addr:#06x} of NIC {n} got no answer"));
            }
            self.step();
        }
        Ok(self.hosts[n].csr_results.pop_front().unwrap())
    }

    /// Step, polling completions, until `done` holds or `max_cycles` pass.
    pub fn run_until(
        &mut self,
        max_cycles: u64,
        mut done: impl FnMut(&Self) -> bool,
    ) -> Result<u64, String> {
        let start = self.cycle;
        loop {
            for h in &mut self.hosts {
                if h.csr_queue.is_empty() {
                    h.poll_completions();
                }
            }
            if done(self) {
                return Ok(self.cycle - start);
            }
            if self.cycle - start >= max_cycles {
                return Err(format!("not done after {max_cycles} cycles"));
            }
            self.step();
        }
    }

    /// Every DMA fault of both memories.
    pub fn faults(&self) -> Vec<String> {
        self.hosts
            .iter()
            .enumerate()
            .flat_map(|(n, h)| h.mem.faults.iter().map(move |f| format!("host {n}: {f:?}")))
            .collect()
    }
}
