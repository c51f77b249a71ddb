//! The scoreboards of a multi-host run (SPEC.md, "Scoreboards on every run").
//!
//! [`Scoreboard`] watches three things the hosts cannot fake:
//! - **Every DMA access** of every NIC to its host memory ([`Scoreboard::check_dma`]): a
//!   write must land in the driver's arena (rings, bounce buffers) or in an application
//!   region registered in the host's *current epoch* with write permission; a read must
//!   touch the arena or a region of the current epoch. Anything else is an access to
//!   unregistered memory.
//! - **Every request cell the fabric delivers** ([`Scoreboard::on_delivery`]): an RDMA
//!   WRITE, READ or atomic whose sender used a TPT entry of an *earlier epoch* of the target
//!   (the sender's belief is recorded when it posts, [`Scoreboard::expect_request`]) is a
//!   stale request. The target's answer decides whether it landed: an ACK covering its
//!   PSN, a NACK for a later PSN, or a read/atomic response for it means the target
//!   applied it (a **stale access landed**); a non-retryable NACK for it, or a later
//!   ACK or NACK whose AETH reports its refusal, means the NIC refused it. A refusal is
//!   final (the responder never applies that PSN later): a
//!   retransmission of a refused request is not a new stale request, and a requester that
//!   completes a refused request with success was misinformed
//!   ([`Scoreboard::check_success`]).
//! - **Data and completions**, reported by the workload ([`Scoreboard::violation`]).
//!
//! Under the rejoin protocol every finding is a [`Violation`] that fails the run. Under the
//! heartbeat baseline, stale and unregistered accesses are what the comparison measures:
//! they are counted ([`StaleCounts`]) instead.

use crate::memory_verdict::OperationTag;
use nic_abi::{AethRefusals, Syndrome, PSN_MASK};
use nic_cosim::fabric::Delivery;
use nic_cosim::host_memory::{DmaRead, DmaWrite};
use nic_rtl::cell::format::{decode_cell, opcode, CellHeader};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

/// A region of host memory: physical range and whether the NIC may write it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryRange {
    pub start: u32,
    pub len: u32,
    pub writable: bool,
}

impl MemoryRange {
    fn covers(&self, addr: u32, bytes: u32) -> bool {
        addr >= self.start && addr as u64 + bytes as u64 <= self.start as u64 + self.len as u64
    }
}

/// One scoreboard finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub cycle: u64,
    /// Short class: `unregistered-write`, `stale-access`, `data`, `completion`, ...
    pub kind: String,
    /// The hosts involved (target first where there is one).
    pub hosts: Vec<usize>,
    /// The physical address involved, if any.
    pub address: Option<u64>,
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cycle {}: {} (hosts {:?}",
            self.cycle, self.kind, self.hosts
        )?;
        if let Some(a) = self.address {
            write!(f, ", address {a:#x}")?;
        }
        write!(f, "): {}", self.detail)
    }
}

/// What the baseline comparison counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StaleCounts {
    /// Stale requests that reached a target (the NIC then refused or applied them).
    pub stale_requests_delivered: u64,
    /// Stale RDMA WRITEs the target applied.
    pub stale_writes_landed: u64,
    /// Stale READs and atomics the target applied.
    pub stale_reads_and_atomics_landed: u64,
    /// DMA writes outside the arena and the current epoch's writable regions.
    pub unregistered_writes: u64,
    /// DMA reads outside the arena and the current epoch's regions.
    pub unregistered_reads: u64,
    /// RDMA_DISABLED NACKs delivered (the hardware NACK of a host not rejoined yet).
    pub rdma_disabled_nacks: u64,
}

/// Refused PSNs remembered per (requester, responder): far more than a send window.
const REFUSED_KEPT: usize = 64;

/// A request the scoreboard follows on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpectedRequest {
    /// The target's epoch the sender's TPT entry came from.
    pub believed_epoch: u32,
    pub is_write: bool,
    /// The memory verdict's tag of an RDMA WRITE or atomic (what it writes carries it).
    pub tag: Option<OperationTag>,
}

#[derive(Clone, Copy, Debug)]
struct StaleInFlight {
    psn: u32,
    is_write: bool,
    tag: Option<OperationTag>,
    cycle: u64,
}

/// Per-host memory map for the current epoch.
#[derive(Clone, Debug, Default)]
struct HostMap {
    epoch: u32,
    arena: Option<MemoryRange>,
    regions: Vec<MemoryRange>,
}

/// See the module docs.
pub struct Scoreboard {
    /// `true`: findings are violations; `false` (baseline): stale findings are counted.
    strict: bool,
    cell_payload: usize,
    maps: Vec<HostMap>,
    /// `(src, dst, psn)` -> what the sender believed.
    expected: HashMap<(usize, usize, u32), ExpectedRequest>,
    /// `(requester, responder)` -> stale requests delivered, waiting for their answer.
    stale: HashMap<(usize, usize), VecDeque<StaleInFlight>>,
    /// (requester, responder) -> the last PSNs the responder refused with a final NACK,
    /// with the responder's epoch at the time.
    refused: HashMap<(usize, usize), VecDeque<(u32, u32)>>,
    counts: StaleCounts,
    /// Tags of the stale writes and atomics the answers say landed (compared with the
    /// memory verdict at the end of a run).
    landed_tags: HashSet<OperationTag>,
    violations: Vec<Violation>,
    violation_count: u64,
    /// Kept in the report: the first this many violations.
    pub keep: usize,
    /// Findings per kind.
    pub by_kind: BTreeMap<String, u64>,
}

/// `a` at or before `b` in PSN order (within half the PSN space).
fn psn_le(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) & PSN_MASK) < 1 << (nic_abi::PSN_BITS - 1)
}

/// Whether an answer for PSN `answer` can cover the request `psn` (at or before it): a
/// requester has at most `SEND_WINDOW` messages outstanding, so an answer further on is
/// from a later sequence of the queue pair (it was reset or flushed: the request was
/// dropped unanswered and forgotten), not an acknowledgement of it.
fn answer_covers(psn: u32, answer: u32) -> bool {
    (answer.wrapping_sub(psn) & PSN_MASK) < nic_abi::SEND_WINDOW
}

impl Scoreboard {
    pub fn new(hosts: usize, strict: bool, cell_payload: usize) -> Self {
        Scoreboard {
            strict,
            cell_payload,
            maps: vec![HostMap::default(); hosts],
            expected: HashMap::new(),
            stale: HashMap::new(),
            refused: HashMap::new(),
            counts: StaleCounts::default(),
            landed_tags: HashSet::new(),
            violations: Vec::new(),
            violation_count: 0,
            keep: 100,
            by_kind: BTreeMap::new(),
        }
    }

    /// Whether no violation was found.
    pub fn passed(&self) -> bool {
        self.violation_count == 0
    }

    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    pub fn violation_count(&self) -> u64 {
        self.violation_count
    }

    pub fn counts(&self) -> StaleCounts {
        self.counts
    }

    /// Tags of the stale writes and atomics the answers say landed.
    pub fn landed_tags(&self) -> HashSet<OperationTag> {
        self.landed_tags.clone()
    }

    /// Record a finding (always a violation).
    pub fn violation(
        &mut self,
        cycle: u64,
        kind: &str,
        hosts: Vec<usize>,
        address: Option<u64>,
        detail: String,
    ) {
        *self.by_kind.entry(kind.to_string()).or_default() += 1;
        self.violation_count += 1;
        if self.violations.len() < self.keep {
            self.violations.push(Violation {
                cycle,
                kind: kind.to_string(),
                hosts,
                address,
                detail,
            });
        }
    }

    /// A stale finding: a violation under the rejoin protocol, counted under the baseline.
    pub fn stale_finding(
        &mut self,
        cycle: u64,
        kind: &str,
        hosts: Vec<usize>,
        address: Option<u64>,
        detail: String,
    ) {
        if self.strict {
            self.violation(cycle, kind, hosts, address, detail);
        } else {
            *self.by_kind.entry(kind.to_string()).or_default() += 1;
        }
    }

    /// Host `host` started epoch `epoch`: nothing is registered yet except the arena.
    pub fn new_epoch(&mut self, host: usize, epoch: u32, arena: MemoryRange) {
        self.maps[host] = HostMap {
            epoch,
            arena: Some(arena),
            regions: vec![],
        };
        // Answers from the previous epoch will never come.
        self.stale
            .retain(|&(requester, responder), _| requester != host && responder != host);
        self.expected.retain(|&(src, _, _), _| src != host);
        // A rebooted requester starts new PSNs (refusals are kept per responder epoch).
        self.refused.retain(|&(requester, _), _| requester != host);
    }

    /// Host `host` powered off: its memory is gone.
    pub fn power_off(&mut self, host: usize) {
        self.maps[host].arena = None;
        self.maps[host].regions.clear();
    }

    /// A region registered in the host's current epoch.
    pub fn register(&mut self, host: usize, range: MemoryRange) {
        self.maps[host].regions.push(range);
    }

    /// A region deregistered (one registration: the same range may be registered twice,
    /// an old registration still fencing while a new one of the same range is live).
    pub fn deregister(&mut self, host: usize, start: u32) {
        let regions = &mut self.maps[host].regions;
        if let Some(i) = regions.iter().position(|r| r.start == start) {
            regions.remove(i);
        }
    }

    /// Whether `[addr, +bytes)` of host `host` lies in its arena or a region of its current
    /// epoch (a writable one when `write`).
    fn registered(&self, host: usize, addr: u32, bytes: u32, write: bool) -> bool {
        let map = &self.maps[host];
        map.arena
            .iter()
            .chain(map.regions.iter().filter(|r| r.writable || !write))
            .any(|r| r.covers(addr, bytes))
    }

    /// Check one host's DMA accesses of this cycle.
    pub fn check_dma(&mut self, host: usize, writes: &[DmaWrite], reads: &[DmaRead]) {
        let epoch = self.maps[host].epoch;
        for w in writes {
            // The bytes the strobe enables, from the lowest to the highest.
            let bytes = 8 - (w.strobe.leading_zeros() + w.strobe.trailing_zeros()).min(8);
            let addr = w.addr + w.strobe.trailing_zeros().min(7);
            if !self.registered(host, addr, bytes.max(1), true) {
                self.counts.unregistered_writes += 1;
                self.stale_finding(
                    w.cycle,
                    "unregistered-write",
                    vec![host],
                    Some(w.addr as u64),
                    format!(
                        "host {host}'s NIC wrote {:#018x} (strobe {:#04x}) outside its driver arena and every writable region registered in epoch {epoch}",
                        w.data, w.strobe
                    ),
                );
            }
        }
        for r in reads {
            if !self.registered(host, r.addr, 8 * r.words as u32, false) {
                self.counts.unregistered_reads += 1;
                self.stale_finding(
                    r.cycle,
                    "unregistered-read",
                    vec![host],
                    Some(r.addr as u64),
                    format!(
                        "host {host}'s NIC read {} words outside its driver arena and every region registered in epoch {epoch}",
                        r.words
                    ),
                );
            }
        }
    }

    /// The sender `src` posted an RDMA or atomic request to `dst` with `psn`.
    pub fn expect_request(&mut self, src: usize, dst: usize, psn: u32, req: ExpectedRequest) {
        self.expected.insert((src, dst, psn & PSN_MASK), req);
    }

    /// The request completed at the sender: stop following it.
    /// Whether responder `dst` refused `src`'s PSN `psn` with a final NACK in its epoch
    /// `epoch`.
    fn was_refused(&self, src: usize, dst: usize, psn: u32, epoch: u32) -> bool {
        self.refused
            .get(&(src, dst))
            .is_some_and(|r| r.contains(&(psn & PSN_MASK, epoch)))
    }

    /// Requester `src` completed its request `psn` to `dst` with success at `cycle`, `dst`
    /// being in epoch `epoch`: a violation if `dst` refused that PSN in this epoch (the
    /// answer to a PSN never changes; the requester was told a refused request succeeded).
    pub fn check_success(&mut self, cycle: u64, src: usize, dst: usize, psn: u32, epoch: u32) {
        if self.was_refused(src, dst, psn, epoch) {
            self.violation(
                cycle,
                "refused-then-success",
                vec![src, dst],
                None,
                format!(
                    "host {src}'s request PSN {psn:#x} to host {dst} completed with success, but host {dst} had refused it with a final NACK (epoch {epoch}): a duplicate was acknowledged"
                ),
            );
        }
    }

    pub fn forget_request(&mut self, src: usize, dst: usize, psn: u32) {
        self.expected.remove(&(src, dst, psn & PSN_MASK));
    }

    /// A cell the fabric delivered, given each host's current epoch.
    pub fn on_delivery(&mut self, d: &Delivery, epochs: &[u32]) {
        if d.words.len() < 3 {
            return;
        }
        let h = CellHeader::from_words([d.words[0], d.words[1], d.words[2]]);
        if !h.first() {
            return;
        }
        match h.opcode {
            opcode::RDMA_WRITE
            | opcode::RDMA_WRITE_IMMEDIATE
            | opcode::RDMA_READ_REQUEST
            | opcode::ATOMIC_COMPARE_SWAP
            | opcode::ATOMIC_FETCH_ADD => {
                let Some(req) = self.expected.get(&(d.src, d.dst, h.psn)).copied() else {
                    return;
                };
                if req.believed_epoch != epochs[d.dst] {
                    if self.was_refused(d.src, d.dst, h.psn, epochs[d.dst]) {
                        return; // a retransmission of a request the target refused for good
                    }
                    let q = self.stale.entry((d.src, d.dst)).or_default();
                    if q.iter().any(|s| s.psn == h.psn) {
                        return; // a retransmission of a request already followed
                    }
                    self.counts.stale_requests_delivered += 1;
                    q.push_back(StaleInFlight {
                        psn: h.psn,
                        is_write: req.is_write,
                        tag: req.tag,
                        cycle: d.cycle,
                    });
                }
            }
            opcode::ACK | opcode::NACK | opcode::RDMA_READ_RESPONSE | opcode::ATOMIC_RESPONSE => {
                // An answer from d.src (responder) to d.dst (requester).
                let key = (d.dst, d.src);
                let aeth = matches!(h.opcode, opcode::ACK | opcode::NACK)
                    .then(|| {
                        decode_cell(&d.words, self.cell_payload)
                            .ok()
                            .and_then(|c| c.immediate)
                    })
                    .flatten();
                // The final refusals this answer tells of: its own NACK, and the earlier
                // refused PSNs its AETH reports (docs/nic-architecture.md, "Refused PSNs").
                let mut refusals = vec![];
                if h.opcode == opcode::NACK {
                    let syndrome = aeth.and_then(|i| Syndrome::from_code(i as u8));
                    if syndrome == Some(Syndrome::RdmaDisabled) {
                        self.counts.rdma_disabled_nacks += 1;
                    }
                    // PORT_DOWN is the fabric's answer for a port that is down, not the
                    // responder's: the responder may have applied an earlier copy of the
                    // request (and acknowledged it) before it went down.
                    if syndrome.is_some_and(|s| !s.is_retryable() && s != Syndrome::PortDown) {
                        refusals.push(h.psn & PSN_MASK);
                    }
                }
                let reported = aeth.map(AethRefusals::from_aeth).unwrap_or_default();
                refusals.extend(reported.oldest_first(h.psn).map(|(psn, _)| psn));
                for psn in refusals {
                    let r = self.refused.entry(key).or_default();
                    let entry = (psn, epochs[d.src]);
                    if !r.contains(&entry) {
                        r.push_back(entry);
                        if r.len() > REFUSED_KEPT {
                            r.pop_front();
                        }
                    }
                }
                let Some(q) = self.stale.get_mut(&key) else {
                    return;
                };
                // A refused PSN the AETH reports did not land (its NACK may have been lost).
                for (psn, _) in reported.oldest_first(h.psn) {
                    q.retain(|s| s.psn != psn);
                }
                let mut landed = vec![];
                if h.flags & nic_rtl::cell::format::flag::RESYNC != 0 {
                    // The responder restarted its PSN sequence at h.psn: it never saw the
                    // requests before it (docs/nic-architecture.md, rejoin support).
                    while q
                        .front()
                        .is_some_and(|s| s.psn != h.psn && psn_le(s.psn, h.psn))
                    {
                        q.pop_front();
                    }
                }
                match h.opcode {
                    opcode::ACK => {
                        while q.front().is_some_and(|s| psn_le(s.psn, h.psn)) {
                            landed.extend(q.pop_front().filter(|s| answer_covers(s.psn, h.psn)));
                        }
                    }
                    opcode::NACK => {
                        let syndrome = decode_cell(&d.words, self.cell_payload)
                            .ok()
                            .and_then(|c| c.immediate)
                            .and_then(|i| Syndrome::from_code(i as u8));
                        while q
                            .front()
                            .is_some_and(|s| s.psn != h.psn && psn_le(s.psn, h.psn))
                        {
                            landed.extend(q.pop_front().filter(|s| answer_covers(s.psn, h.psn)));
                        }
                        let retry = syndrome.is_some_and(|s| s.is_retryable());
                        if !retry && q.front().is_some_and(|s| s.psn == h.psn) {
                            q.pop_front();
                        }
                    }
                    _ => {
                        if let Some(i) = q.iter().position(|s| s.psn == h.psn) {
                            landed.extend(q.remove(i));
                        }
                    }
                }
                for s in landed {
                    self.landed_tags.extend(s.tag);
                    if s.is_write {
                        self.counts.stale_writes_landed += 1;
                    } else {
                        self.counts.stale_reads_and_atomics_landed += 1;
                    }
                    self.stale_finding(
                        d.cycle,
                        "stale-access",
                        vec![d.src, d.dst],
                        None,
                        format!(
                            "host {} acknowledged a {} from host {} (PSN {:#x}, delivered at cycle {}) made with a TPT entry of its previous epoch: the stale access landed, or the requester was told it did",
                            d.src,
                            if s.is_write { "RDMA WRITE" } else { "READ or atomic" },
                            d.dst,
                            s.psn,
                            s.cycle
                        ),
                    );
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nic_rtl::cell::format::{encode_message, Message};
    use std::sync::Arc;

    fn delivery(op: u8, src: usize, dst: usize, psn: u32, imm: Option<u32>) -> Delivery {
        let m = Message {
            opcode: op,
            src_node: src as u16,
            dest_node: dst as u16,
            psn,
            immediate: imm,
            payload: if op == opcode::RDMA_WRITE {
                vec![1; 8]
            } else {
                vec![]
            },
            ..Default::default()
        };
        let words = encode_message(&m, 256).unwrap().remove(0);
        Delivery {
            cycle: 1,
            ready: 1,
            src,
            dst,
            words: Arc::from(words),
        }
    }

    /// A refusal is final: the retransmission of a refused request and a duplicate ACK
    /// that covers it (the requester ignores it) are not a stale access; a requester that
    /// completes the refused PSN with success is.
    #[test]
    fn a_refused_request_stays_refused() {
        let mut sb = Scoreboard::new(2, true, 256);
        let req = ExpectedRequest {
            believed_epoch: 1,
            is_write: true,
            tag: None,
        };
        let epochs = [1, 2];
        for psn in [20, 21] {
            sb.expect_request(0, 1, psn, req);
            sb.on_delivery(&delivery(opcode::RDMA_WRITE, 0, 1, psn, None), &epochs);
            sb.on_delivery(
                &delivery(opcode::NACK, 1, 0, psn, Some(Syndrome::RdmaDisabled as u32)),
                &epochs,
            );
        }
        // The requester went back: 20 again, answered with a duplicate ACK.
        sb.on_delivery(&delivery(opcode::RDMA_WRITE, 0, 1, 20, None), &epochs);
        sb.on_delivery(&delivery(opcode::ACK, 1, 0, 20, Some(0)), &epochs);
        assert_eq!(sb.counts().stale_requests_delivered, 2);
        assert_eq!(sb.counts().stale_writes_landed, 0);
        assert!(sb.passed(), "{:?}", sb.violations());
        sb.check_success(9, 0, 1, 21, 3);
        assert!(sb.passed(), "another epoch's refusal says nothing");
        sb.check_success(9, 0, 1, 20, 2);
        assert!(!sb.passed());
        assert_eq!(sb.violations()[0].kind, "refused-then-success");
        assert_eq!(sb.violations()[0].hosts, vec![0, 1]);
    }

    /// A refusal whose NACK was lost, reported by the next ACK's AETH: the stale request
    /// did not land, and a success completion for it is still a violation.
    #[test]
    fn a_refusal_reported_in_an_aeth_is_a_refusal() {
        let mut sb = Scoreboard::new(2, true, 256);
        let req = ExpectedRequest {
            believed_epoch: 1,
            is_write: true,
            tag: None,
        };
        let epochs = [1, 2];
        sb.expect_request(0, 1, 30, req);
        sb.on_delivery(&delivery(opcode::RDMA_WRITE, 0, 1, 30, None), &epochs);
        let report = AethRefusals::one(2, Syndrome::RdmaDisabled);
        sb.on_delivery(
            &delivery(opcode::ACK, 1, 0, 32, Some(report.to_aeth())),
            &epochs,
        );
        assert_eq!(sb.counts().stale_writes_landed, 0);
        assert!(sb.passed(), "{:?}", sb.violations());
        sb.check_success(9, 0, 1, 30, 2);
        assert_eq!(sb.violations()[0].kind, "refused-then-success");
    }

    /// The fabric's PORT_DOWN for a retransmission says nothing of the copy the responder
    /// applied and acknowledged before it went down (found by `nic soak`, seed 54).
    #[test]
    fn a_port_down_nack_is_not_the_responders_refusal() {
        let mut sb = Scoreboard::new(2, true, 256);
        let epochs = [1, 1];
        sb.on_delivery(&delivery(opcode::ACK, 1, 0, 7, Some(0)), &epochs);
        sb.on_delivery(
            &delivery(opcode::NACK, 1, 0, 7, Some(Syndrome::PortDown as u32)),
            &epochs,
        );
        sb.check_success(9, 0, 1, 7, 1);
        assert!(sb.passed(), "{:?}", sb.violations());
        sb.on_delivery(
            &delivery(opcode::NACK, 1, 0, 8, Some(Syndrome::RdmaDisabled as u32)),
            &epochs,
        );
        sb.check_success(9, 0, 1, 8, 1);
        assert!(!sb.passed(), "a responder's final NACK still is a refusal");
    }

    #[test]
    fn a_stale_write_counts_when_acked_not_when_refused() {
        let mut sb = Scoreboard::new(2, false, 256);
        let req = ExpectedRequest {
            believed_epoch: 1,
            is_write: true,
            tag: None,
        };
        sb.expect_request(0, 1, 10, req);
        sb.expect_request(0, 1, 11, req);
        let epochs = [1, 2];
        sb.on_delivery(&delivery(opcode::RDMA_WRITE, 0, 1, 10, None), &epochs);
        sb.on_delivery(&delivery(opcode::RDMA_WRITE, 0, 1, 11, None), &epochs);
        assert_eq!(sb.counts().stale_requests_delivered, 2);
        // PSN 10 refused (RDMA disabled), then 11 acknowledged.
        sb.on_delivery(
            &delivery(opcode::NACK, 1, 0, 10, Some(Syndrome::RdmaDisabled as u32)),
            &epochs,
        );
        assert_eq!(sb.counts().stale_writes_landed, 0);
        sb.on_delivery(&delivery(opcode::ACK, 1, 0, 11, Some(0)), &epochs);
        assert_eq!(sb.counts().stale_writes_landed, 1);
        assert!(sb.passed(), "the baseline counts, it does not fail");
        let mut strict = Scoreboard::new(2, true, 256);
        strict.expect_request(0, 1, 5, req);
        strict.on_delivery(&delivery(opcode::RDMA_WRITE, 0, 1, 5, None), &epochs);
        strict.on_delivery(&delivery(opcode::ACK, 1, 0, 5, Some(0)), &epochs);
        assert!(!strict.passed());
        assert_eq!(strict.violations()[0].kind, "stale-access");
        assert_eq!(strict.violations()[0].hosts, vec![1, 0]);
    }

    /// A stale request dropped unanswered (the target's QP was still disabled) and then
    /// flushed by its requester: the queue pair's next sequence starts far away, and its
    /// answers do not acknowledge the old request.
    #[test]
    fn an_answer_from_a_later_sequence_does_not_land_an_old_request() {
        let mut sb = Scoreboard::new(2, true, 256);
        let req = ExpectedRequest {
            believed_epoch: 1,
            is_write: true,
            tag: None,
        };
        sb.expect_request(0, 1, 0x14_ca9c, req);
        let epochs = [1, 2];
        sb.on_delivery(
            &delivery(opcode::RDMA_WRITE, 0, 1, 0x14_ca9c, None),
            &epochs,
        );
        assert_eq!(sb.counts().stale_requests_delivered, 1);
        sb.on_delivery(&delivery(opcode::ACK, 1, 0, 0x51_3998, Some(0)), &epochs);
        assert_eq!(sb.counts().stale_writes_landed, 0);
        assert!(sb.passed());
        // Within the send window the same ACK would have covered it.
        sb.expect_request(0, 1, 0x20, req);
        sb.on_delivery(&delivery(opcode::RDMA_WRITE, 0, 1, 0x20, None), &epochs);
        sb.on_delivery(&delivery(opcode::ACK, 1, 0, 0x27, Some(0)), &epochs);
        assert_eq!(sb.counts().stale_writes_landed, 1);
    }

    #[test]
    fn dma_outside_registered_memory_is_a_violation() {
        let mut sb = Scoreboard::new(1, true, 256);
        sb.new_epoch(
            0,
            1,
            MemoryRange {
                start: 0x1000,
                len: 0x1000,
                writable: true,
            },
        );
        sb.register(
            0,
            MemoryRange {
                start: 0x8000,
                len: 0x100,
                writable: false,
            },
        );
        let w = |addr| DmaWrite {
            cycle: 3,
            addr,
            data: 0,
            strobe: 0xff,
        };
        sb.check_dma(0, &[w(0x1ff8)], &[]);
        assert!(sb.passed());
        sb.check_dma(0, &[w(0x8000)], &[]);
        sb.check_dma(0, &[w(0x2000)], &[]);
        let r = DmaRead {
            cycle: 4,
            port: 0,
            addr: 0x80f8,
            words: 2,
        };
        sb.check_dma(0, &[], &[r]);
        assert_eq!(sb.violation_count(), 3);
        assert_eq!(sb.violations()[0].address, Some(0x8000));
        assert!(sb.violations()[2].kind.contains("read"));
    }
}
