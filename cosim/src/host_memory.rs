//! The host-memory model behind a NIC's DMA port (docs/nic-architecture.md, "Host memory
//! rules"): two read ports (tx, rx) and one write port, 64-bit little-endian words at
//! 8-aligned 32-bit physical addresses.
//!
//! Each cycle the testbench asks [`HostMemory::drive`] for the inputs it gives the NIC
//! (ready and read data, decided from the model's state only, never from the NIC's outputs
//! of the same cycle), steps the NIC, then hands the NIC's outputs to
//! [`HostMemory::observe`], which applies the handshakes that happened. Read data comes
//! back `latency` cycles after a request is accepted, in order per port; `stall` is the
//! chance that a ready is withheld in a cycle (back-pressure). A write is visible to every
//! read accepted after it. Accesses outside the memory or not 8-aligned are not performed;
//! they are recorded as [`DmaFault`]s (read data is then zero) for the scoreboards.
//!
//! A host with several NICs (source 003) has one memory behind all of their DMA ports:
//! [`HostMemory::add_dma_port`] adds a NIC's set of ports; each cycle the host calls
//! [`HostMemory::drive_port`] and [`HostMemory::observe_port`] for every NIC, then
//! [`HostMemory::advance`] once. A write by one NIC is seen by every read any NIC makes
//! after it. [`HostMemory::drive`] and [`HostMemory::observe`] are the one-NIC forms.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// The NIC's DMA outputs in one cycle (what the host memory receives).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmaRequests {
    pub read: [ReadRequestSide; 2],
    pub wr_valid: bool,
    pub wr_addr: u32,
    pub wr_data: u64,
    pub wr_strobe: u8,
}

/// One read port as seen from the host: the NIC's request and its data ready.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadRequestSide {
    pub req_valid: bool,
    pub req_addr: u32,
    pub req_words: u16,
    pub data_ready: bool,
}

/// A DMA read request the model accepted (recorded when
/// [`HostMemory::record_reads`] is on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaRead {
    pub cycle: u64,
    /// [`TX_READ`] or [`RX_READ`].
    pub port: usize,
    pub addr: u32,
    pub words: u16,
}

/// The host memory's DMA outputs in one cycle (what the NIC receives).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmaResponses {
    pub read: [ReadResponseSide; 2],
    pub wr_ready: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadResponseSide {
    pub req_ready: bool,
    pub data_valid: bool,
    pub data: u64,
    pub data_last: bool,
}

/// Index of the transmit and receive read ports in [`DmaRequests::read`].
pub const TX_READ: usize = 0;
pub const RX_READ: usize = 1;

/// A DMA access the model refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmaFault {
    pub cycle: u64,
    pub what: &'static str,
    pub addr: u32,
    pub words: u16,
}

/// One accepted write, for scoreboards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaWrite {
    pub cycle: u64,
    pub addr: u32,
    pub data: u64,
    pub strobe: u8,
}

/// Timing of the model.
#[derive(Clone, Copy, Debug)]
pub struct HostMemoryTiming {
    /// Cycles from an accepted read request to its first data beat (>= 1).
    pub latency: u32,
    /// Probability per cycle and port that ready / data valid is withheld.
    pub stall: f64,
    pub seed: u64,
}

impl Default for HostMemoryTiming {
    fn default() -> Self {
        HostMemoryTiming {
            latency: 4,
            stall: 0.0,
            seed: 1,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct ReadPort {
    /// Beats in flight: (cycle available, data, last).
    beats: VecDeque<(u64, u64, bool)>,
}

pub struct HostMemory {
    bytes: Vec<u8>,
    timing: HostMemoryTiming,
    rng: ChaCha8Rng,
    /// Per NIC: its two read ports.
    ports: Vec<[ReadPort; 2]>,
    cycle: u64,
    /// Per NIC: what was driven this cycle.
    driven: Vec<DmaResponses>,
    /// Accepted writes since the last [`HostMemory::take_writes`].
    writes: Vec<DmaWrite>,
    /// Accepted reads since the last [`HostMemory::take_reads`], when recording.
    reads: Option<Vec<DmaRead>>,
    /// Refused accesses since construction.
    pub faults: Vec<DmaFault>,
    /// Beats of data in flight are capped so a NIC that never takes data cannot grow the
    /// model without bound.
    max_beats_in_flight: usize,
}

impl HostMemory {
    /// `size` bytes of zeroed memory (a multiple of 8).
    pub fn new(size: usize, timing: HostMemoryTiming) -> Self {
        assert!(
            size.is_multiple_of(8) && size > 0,
            "HostMemory: size must be a positive multiple of 8, got {size}"
        );
        assert!(
            timing.latency >= 1,
            "HostMemory: latency must be at least 1 cycle"
        );
        assert!(
            (0.0..1.0).contains(&timing.stall),
            "HostMemory: stall must be in 0..1, got {}",
            timing.stall
        );
        HostMemory {
            bytes: vec![0; size],
            timing,
            rng: ChaCha8Rng::seed_from_u64(timing.seed),
            ports: vec![Default::default()],
            cycle: 0,
            driven: vec![DmaResponses::default()],
            writes: vec![],
            reads: None,
            faults: vec![],
            max_beats_in_flight: 1 << 17,
        }
    }

    pub fn size(&self) -> usize {
        self.bytes.len()
    }

    /// Zero the memory and drop reads in flight and unreported accesses (a host reboot).
    pub fn clear(&mut self) {
        self.bytes.iter_mut().for_each(|b| *b = 0);
        self.ports.iter_mut().for_each(|p| *p = Default::default());
        self.writes.clear();
        if let Some(r) = self.reads.as_mut() {
            r.clear();
        }
    }

    /// Record accepted read requests for [`HostMemory::take_reads`] (off by default).
    pub fn record_reads(&mut self, on: bool) {
        self.reads = on.then(Vec::new);
    }

    /// Read requests accepted since the last call, oldest first (empty when not recording).
    pub fn take_reads(&mut self) -> Vec<DmaRead> {
        self.reads.as_mut().map(std::mem::take).unwrap_or_default()
    }

    pub fn read_u64(&self, addr: u32) -> u64 {
        let a = addr as usize;
        u64::from_le_bytes(self.bytes[a..a + 8].try_into().unwrap())
    }

    pub fn write_u64(&mut self, addr: u32, value: u64) {
        let a = addr as usize;
        self.bytes[a..a + 8].copy_from_slice(&value.to_le_bytes());
    }

    pub fn read_bytes(&self, addr: u32, len: usize) -> &[u8] {
        &self.bytes[addr as usize..addr as usize + len]
    }

    pub fn write_bytes(&mut self, addr: u32, data: &[u8]) {
        self.bytes[addr as usize..addr as usize + data.len()].copy_from_slice(data);
    }

    /// Writes accepted since the last call, oldest first.
    pub fn take_writes(&mut self) -> Vec<DmaWrite> {
        std::mem::take(&mut self.writes)
    }

    fn in_range(&self, addr: u32, words: u32) -> bool {
        addr.is_multiple_of(8) && (addr as u64 + 8 * words as u64) <= self.bytes.len() as u64
    }

    /// Adds the DMA ports of another NIC; returns its number (the first NIC is 0).
    pub fn add_dma_port(&mut self) -> usize {
        self.ports.push(Default::default());
        self.driven.push(DmaResponses::default());
        self.ports.len() - 1
    }

    /// NICs whose DMA ports this memory serves.
    pub fn dma_ports(&self) -> usize {
        self.ports.len()
    }

    /// The inputs to give the NIC this cycle (one NIC).
    pub fn drive(&mut self) -> DmaResponses {
        self.drive_port(0)
    }

    /// Apply this cycle's handshakes, given the NIC's outputs, and advance one cycle (one
    /// NIC).
    pub fn observe(&mut self, nic: &DmaRequests) {
        self.observe_port(0, nic);
        self.advance();
    }

    /// The inputs to give NIC `n` this cycle.
    pub fn drive_port(&mut self, n: usize) -> DmaResponses {
        let mut out = DmaResponses::default();
        for (p, port) in self.ports[n].iter().enumerate() {
            let stalled = self.timing.stall > 0.0 && self.rng.gen_bool(self.timing.stall);
            out.read[p].req_ready = port.beats.len() < self.max_beats_in_flight
                && !(self.timing.stall > 0.0 && self.rng.gen_bool(self.timing.stall));
            if let Some(&(at, data, last)) = port.beats.front() {
                if at <= self.cycle && !stalled {
                    out.read[p].data_valid = true;
                    out.read[p].data = data;
                    out.read[p].data_last = last;
                }
            }
        }
        out.wr_ready = !(self.timing.stall > 0.0 && self.rng.gen_bool(self.timing.stall));
        self.driven[n] = out;
        out
    }

    /// Advance one cycle (after every NIC's [`HostMemory::observe_port`]).
    pub fn advance(&mut self) {
        self.cycle += 1;
    }

    /// Apply this cycle's handshakes of NIC `n`, given its outputs.
    pub fn observe_port(&mut self, n: usize, nic: &DmaRequests) {
        let driven = self.driven[n];
        for p in 0..2 {
            let req = nic.read[p];
            if driven.read[p].data_valid && req.data_ready {
                self.ports[n][p].beats.pop_front();
            }
            if driven.read[p].req_ready && req.req_valid {
                let words = req.req_words as u32;
                let ok = words > 0 && self.in_range(req.req_addr, words);
                if !ok {
                    self.faults.push(DmaFault {
                        cycle: self.cycle,
                        what: if p == TX_READ { "tx read" } else { "rx read" },
                        addr: req.req_addr,
                        words: req.req_words,
                    });
                }
                if let Some(r) = self.reads.as_mut() {
                    r.push(DmaRead {
                        cycle: self.cycle,
                        port: p,
                        addr: req.req_addr,
                        words: req.req_words,
                    });
                }
                // Beats are sampled now: a write accepted later is not seen by this read.
                let start = self.cycle + self.timing.latency as u64;
                for i in 0..words {
                    let addr = req.req_addr.wrapping_add(8 * i);
                    let data = if ok { self.read_u64(addr) } else { 0 };
                    self.ports[n][p]
                        .beats
                        .push_back((start + i as u64, data, i + 1 == words));
                }
            }
        }
        if driven.wr_ready && nic.wr_valid {
            if self.in_range(nic.wr_addr, 1) {
                let a = nic.wr_addr as usize;
                for b in 0..8 {
                    if nic.wr_strobe >> b & 1 != 0 {
                        self.bytes[a + b] = (nic.wr_data >> (8 * b)) as u8;
                    }
                }
                self.writes.push(DmaWrite {
                    cycle: self.cycle,
                    addr: nic.wr_addr,
                    data: nic.wr_data,
                    strobe: nic.wr_strobe,
                });
            } else {
                self.faults.push(DmaFault {
                    cycle: self.cycle,
                    what: "write",
                    addr: nic.wr_addr,
                    words: 1,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(mem: &mut HostMemory, port: usize, addr: u32, words: u16) -> Vec<u64> {
        let mut got = vec![];
        let mut requested = false;
        for _ in 0..1000 {
            let d = mem.drive();
            let mut req = DmaRequests::default();
            req.read[port].req_valid = !requested;
            req.read[port].req_addr = addr;
            req.read[port].req_words = words;
            req.read[port].data_ready = true;
            if d.read[port].req_ready && !requested {
                requested = true;
            }
            if d.read[port].data_valid {
                got.push(d.read[port].data);
                if d.read[port].data_last {
                    mem.observe(&req);
                    return got;
                }
            }
            mem.observe(&req);
        }
        panic!("read did not finish");
    }

    #[test]
    fn reads_what_was_written_with_latency_and_stalls() {
        let mut mem = HostMemory::new(
            4096,
            HostMemoryTiming {
                latency: 3,
                stall: 0.3,
                seed: 7,
            },
        );
        for i in 0..16u32 {
            mem.write_u64(64 + 8 * i, 0x1111 * i as u64);
        }
        for port in [TX_READ, RX_READ] {
            let got = read_all(&mut mem, port, 64, 16);
            assert_eq!(got, (0..16u64).map(|i| 0x1111 * i).collect::<Vec<_>>());
        }
        assert!(mem.faults.is_empty());
    }

    /// Two NICs on one memory (source 003): a write through the second NIC's port is seen
    /// by a read the first NIC makes after it, and each NIC's read data comes on its own
    /// ports only.
    #[test]
    fn several_nics_share_the_memory_through_their_own_ports() {
        let mut mem = HostMemory::new(4096, HostMemoryTiming::default());
        assert_eq!(mem.add_dma_port(), 1);
        assert_eq!(mem.dma_ports(), 2);
        // NIC 1 writes a word while NIC 0 asks to read it the cycle after.
        let mut got = vec![];
        for cycle in 0..40 {
            let d0 = mem.drive_port(0);
            let d1 = mem.drive_port(1);
            let mut r0 = DmaRequests::default();
            r0.read[RX_READ].req_valid = cycle == 1;
            r0.read[RX_READ].req_addr = 128;
            r0.read[RX_READ].req_words = 1;
            r0.read[RX_READ].data_ready = true;
            let r1 = DmaRequests {
                wr_valid: cycle == 0,
                wr_addr: 128,
                wr_data: 0xABCD,
                wr_strobe: 0xFF,
                ..Default::default()
            };
            assert!(cycle != 0 || d1.wr_ready);
            assert!(!d1.read[RX_READ].data_valid, "NIC 1 asked for nothing");
            if d0.read[RX_READ].data_valid {
                got.push(d0.read[RX_READ].data);
            }
            mem.observe_port(0, &r0);
            mem.observe_port(1, &r1);
            mem.advance();
        }
        assert_eq!(got, vec![0xABCD]);
        assert_eq!(mem.take_writes().len(), 1);
    }

    #[test]
    fn byte_strobes_and_faults() {
        let mut mem = HostMemory::new(64, HostMemoryTiming::default());
        let mut done = 0;
        while done < 2 {
            let d = mem.drive();
            let req = DmaRequests {
                wr_valid: true,
                wr_addr: if done == 0 { 8 } else { 64 },
                wr_data: 0x8877_6655_4433_2211,
                wr_strobe: 0b0000_0101,
                ..Default::default()
            };
            if d.wr_ready {
                done += 1;
            }
            mem.observe(&req);
        }
        assert_eq!(mem.read_u64(8), 0x33_0011);
        assert_eq!(mem.faults.len(), 1, "{:?}", mem.faults);
        assert_eq!(mem.faults[0].addr, 64);
        assert_eq!(mem.take_writes().len(), 1);
    }
}
