//! A stream of random and damaged cells into a Verilated NIC (with the hardware TPT) never
//! makes it write host memory outside what its host gave it (the completion ring, posted
//! receive buffers, TPT regions with remote write or atomic rights), and the NIC serves
//! valid traffic byte-exact afterwards (issue 16, "Bad input").
//!
//! Two NIC tops back to back ([`NicPair`], no driver: the test sets up rings, TPT entries
//! and receive buffers through the CSRs and host memory). NIC 1 is the target: a few
//! thousand cells go into its network port (random words; and valid requests from its
//! peer's node and queue pairs, damaged: wrong cell or packet CRC, wrong length, unknown
//! opcode, bad queue pair, bad PSN, reserved bits, STags and addresses out of the
//! registered regions, cells cut short, cells of a message missing). Every DMA write of
//! both NICs is checked against the host's allowed regions, cycle by cycle. Then NIC 0
//! sends RDMA WRITEs, a SEND, an RDMA READ and a fetch-and-add, which must complete with
//! success and land byte-exact. A second test plants a bug in the checker (it believes a
//! region is smaller than the one registered in the NIC) to show the check catches writes.

use nic_abi::{csr, CompletionStatus, Cqe, Rqe, Wqe, WqeOpcode, CQE_BYTES};
use nic_cosim::host_memory::HostMemoryTiming;
use nic_cosim::{NicTopInputs, NicTopOutputs, Stepper, VerilatedNicTopTpt256};
// Recompute a cell's CRC word (a sender that builds a bad cell on purpose).
use nic_model::cell_faults::reseal;
use nic_rtl::cell::format::{encode_message, opcode, Message, DEFAULT_CELL_PAYLOAD};
use nic_testbench::nic_pair::{NicPair, CQ_RING, CQ_SIZE_LOG2, DATA_AREA, RQ_RINGS, SQ_RINGS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::ops::Range;

const QPS: usize = 4;
const ENABLE_ALL: u64 = csr::ENABLE_SEND_RECV | csr::ENABLE_RDMA;
/// Start PSNs of NIC 0's queue pairs (q adds q). Random requests keep well away from them,
/// so that NIC 0's first (RESYNC) message is never taken for a duplicate of one.
const NIC0_START_PSN: u32 = 100;
const NIC1_START_PSN: u32 = 5000;

/// The TPT entries registered in NIC 1: index, rights, virtual address, length, physical.
const KEY: u64 = 0x5A;
const RW_INDEX: u32 = 1;
const RW_VADDR: u64 = 0x7000_0000_0000;
const RW_LEN: u64 = 0x1000;
const RW_PADDR: u32 = DATA_AREA + 0x4_0000;
const WO_INDEX: u32 = 2;
const WO_VADDR: u64 = 0x7100_0000_0000;
const WO_LEN: u64 = 0x800;
const WO_PADDR: u32 = DATA_AREA + 0x4_2000;
const RO_INDEX: u32 = 3;
const RO_VADDR: u64 = 0x7200_0000_0000;
const RO_LEN: u64 = 0x1000;
const RO_PADDR: u32 = DATA_AREA + 0x4_4000;
/// NIC 1's receive buffers (one slot per posting), and NIC 0's local buffers.
const RECV_AREA: u32 = DATA_AREA + 0x6_0000;
const RECV_BYTES: u32 = 0x400;
const LOCAL_AREA: u32 = DATA_AREA;

fn stag(index: u32, key: u64) -> u32 {
    index << 8 | key as u32
}

/// Where a host lets its NIC write (byte ranges with a name for the report).
#[derive(Clone, Debug, Default)]
struct Allowed(Vec<(Range<u32>, String)>);

impl Allowed {
    fn add(&mut self, start: u32, len: u32, what: impl Into<String>) {
        self.0.push((start..start + len, what.into()));
    }
    fn contains(&self, addr: u32) -> bool {
        self.0.iter().any(|(r, _)| r.contains(&addr))
    }
}

/// The checker: every DMA write of both NICs, against what each host allows; and every
/// DMA read of NIC 1 (the target), against its rings and readable regions.
struct Checker {
    allowed: [Allowed; 2],
    readable: Allowed,
    writes: [u64; 2],
    reads: u64,
}

impl Checker {
    fn check<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>>(
        &mut self,
        pair: &mut NicPair<S>,
    ) -> Result<(), String> {
        for n in 0..2 {
            for w in pair.hosts[n].mem.take_writes() {
                self.writes[n] += 1;
                for b in 0..8 {
                    let addr = w.addr.wrapping_add(b);
                    if w.strobe & (1 << b) != 0 && !self.allowed[n].contains(addr) {
                        return Err(format!(
                            "NIC {n} wrote byte {addr:#x} (word {:#x}, strobe {:#04x}, data {:#018x}) at cycle {}, outside every region its host allows: {:?}",
                            w.addr, w.strobe, w.data, w.cycle, self.allowed[n].0
                        ));
                    }
                }
            }
            if n == 1 {
                for r in pair.hosts[1].mem.take_reads() {
                    self.reads += 1;
                    let end = r.addr as u64 + 8 * r.words as u64;
                    let inside = self
                        .readable
                        .0
                        .iter()
                        .any(|(a, _)| a.start as u64 <= r.addr as u64 && end <= a.end as u64);
                    if !inside && r.words > 0 {
                        return Err(format!(
                            "NIC 1 read {} words at {:#x} at cycle {}, outside its rings and readable regions: {:?}",
                            r.words, r.addr, r.cycle, self.readable.0
                        ));
                    }
                }
            }
            if !pair.hosts[n].mem.faults.is_empty() {
                return Err(format!(
                    "NIC {n} made DMA accesses outside host memory: {:?}",
                    pair.hosts[n].mem.faults
                ));
            }
        }
        Ok(())
    }
}

fn tpt_write<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>>(
    pair: &mut NicPair<S>,
    index: u32,
    rights: u64,
    vaddr: u64,
    length: u64,
    paddr: u32,
) {
    let h = &mut pair.hosts[1];
    h.queue_csr_write(csr::TPT_INDEX, index as u64);
    h.queue_csr_write(
        csr::TPT_WORD0,
        csr::TPT_VALID | rights | KEY << csr::TPT_KEY_SHIFT,
    );
    h.queue_csr_write(csr::TPT_VADDR, vaddr);
    h.queue_csr_write(csr::TPT_LENGTH, length);
    h.queue_csr_write(csr::TPT_PADDR, paddr as u64);
    h.queue_csr_write(csr::TPT_COMMAND, csr::TPT_COMMAND_WRITE);
    pair.flush_csr(1000).unwrap();
}

/// NIC 1's three regions (again: a valid request with INVALIDATE clears its entry).
fn register<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>>(pair: &mut NicPair<S>) {
    tpt_write(
        pair,
        RW_INDEX,
        csr::TPT_REMOTE_READ | csr::TPT_REMOTE_WRITE | csr::TPT_ATOMIC,
        RW_VADDR,
        RW_LEN,
        RW_PADDR,
    );
    tpt_write(
        pair,
        WO_INDEX,
        csr::TPT_REMOTE_WRITE,
        WO_VADDR,
        WO_LEN,
        WO_PADDR,
    );
    tpt_write(
        pair,
        RO_INDEX,
        csr::TPT_REMOTE_READ,
        RO_VADDR,
        RO_LEN,
        RO_PADDR,
    );
}

/// The set-up: both NICs configured, NIC 1's TPT and receive buffers; what each host
/// allows. `planted`: the checker believes the read-write region is half its size.
fn setup(seed: u64, planted: bool) -> (NicPair<VerilatedNicTopTpt256>, Checker, [u32; 2]) {
    let nics = [
        VerilatedNicTopTpt256::new().expect("Verilator model (run scripts/setup.sh)"),
        VerilatedNicTopTpt256::new().expect("Verilator model (run scripts/setup.sh)"),
    ];
    let timing = HostMemoryTiming {
        latency: 6,
        stall: 0.1,
        seed,
    };
    let mut pair = NicPair::new(nics, QPS, timing, 4);
    pair.hosts[0].configure(1, ENABLE_ALL, NIC0_START_PSN);
    pair.hosts[1].configure(0, ENABLE_ALL, NIC1_START_PSN);
    // An unknown STag waits for a driver that never answers: refuse it soon.
    pair.hosts[1].queue_csr_write(csr::EXC_TIMEOUT, 300);
    pair.flush_csr(10_000).unwrap();
    register(&mut pair);
    let cq = (1u32 << CQ_SIZE_LOG2) * CQE_BYTES;
    let mut allowed = [Allowed::default(), Allowed::default()];
    for a in &mut allowed {
        a.add(CQ_RING, cq, "completion ring");
    }
    let rw_len = if planted { RW_LEN / 2 } else { RW_LEN };
    allowed[1].add(RW_PADDR, rw_len as u32, "TPT region 1 (read-write, atomic)");
    allowed[1].add(WO_PADDR, WO_LEN as u32, "TPT region 2 (write-only)");
    let mut readable = Allowed::default();
    readable.add(SQ_RINGS, QPS as u32 * 0x4000, "send rings");
    readable.add(RQ_RINGS, QPS as u32 * 0x2000, "receive rings");
    readable.add(RW_PADDR, RW_LEN as u32, "TPT region 1 (read-write, atomic)");
    readable.add(RO_PADDR, RO_LEN as u32, "TPT region 3 (read-only)");
    pair.hosts[1].mem.record_reads(true);
    let mut checker = Checker {
        allowed,
        readable,
        writes: [0; 2],
        reads: 0,
    };
    let mut recv_slot = [0u32; 2];
    post_receives(&mut pair, &mut checker, &mut recv_slot, 4);
    (pair, checker, recv_slot)
}

/// Post `per_qp` receive buffers on each of NIC 1's queue pairs (allowed to its NIC).
fn post_receives(
    pair: &mut NicPair<VerilatedNicTopTpt256>,
    checker: &mut Checker,
    slot: &mut [u32; 2],
    per_qp: usize,
) {
    for q in 0..QPS {
        for _ in 0..per_qp {
            let addr = RECV_AREA + slot[1] * RECV_BYTES;
            assert!(
                addr + RECV_BYTES <= DATA_AREA + 0xA_0000,
                "receive area full"
            );
            slot[1] += 1;
            pair.hosts[1].post_receive(
                q,
                &Rqe {
                    buffer_addr: addr,
                    buffer_length: RECV_BYTES,
                    wr_id: 0x7700 + slot[1] as u64,
                },
            );
            checker.allowed[1].add(addr, RECV_BYTES, format!("receive buffer of QP {q}"));
        }
    }
}

/// A STag and an address for a random RDMA request: mostly near the registered regions.
fn rdma_target(rng: &mut ChaCha8Rng) -> (u32, u64) {
    let (index, base, len) = match rng.gen_range(0..5) {
        0 => (RW_INDEX, RW_VADDR, RW_LEN),
        1 => (WO_INDEX, WO_VADDR, WO_LEN),
        2 => (RO_INDEX, RO_VADDR, RO_LEN),
        3 => (rng.gen_range(4..256), rng.gen::<u64>() & !7, 0x1000),
        _ => (RW_INDEX, WO_VADDR, WO_LEN),
    };
    let key = if rng.gen_bool(0.85) {
        KEY
    } else {
        rng.gen::<u8>() as u64
    };
    let offset: i64 = match rng.gen_range(0..6) {
        0 => rng.gen_range(0..len as i64) & !7,
        1 => len as i64 - rng.gen_range(0..64) * 8,
        2 => -(rng.gen_range(1..64) * 8),
        3 => rng.gen_range(0..len as i64),
        4 => rng.gen::<i32>() as i64 & !7,
        _ => len as i64 + rng.gen_range(0..64) * 8,
    };
    let vaddr = if rng.gen_bool(0.05) {
        rng.gen()
    } else {
        base.wrapping_add_signed(offset)
    };
    (stag(index, key), vaddr)
}

/// A PSN well away from NIC 0's start PSNs.
fn far_psn(rng: &mut ChaCha8Rng) -> u32 {
    rng.gen_range(1_000..(1 << 24) - 1_000)
}

/// A request message from NIC 0's node and queue pair `q` to NIC 1's (before damage).
fn random_request(rng: &mut ChaCha8Rng, q: u16, psn: u32, resync: bool) -> Message {
    let op = [
        opcode::SEND,
        opcode::SEND_IMMEDIATE,
        opcode::RDMA_WRITE,
        opcode::RDMA_WRITE_IMMEDIATE,
        opcode::RDMA_READ_REQUEST,
        opcode::ATOMIC_COMPARE_SWAP,
        opcode::ATOMIC_FETCH_ADD,
    ][rng.gen_range(0..7)];
    let len = match op {
        opcode::RDMA_READ_REQUEST => 0,
        opcode::ATOMIC_COMPARE_SWAP | opcode::ATOMIC_FETCH_ADD => {
            if rng.gen_bool(0.8) {
                16
            } else {
                rng.gen_range(0..40)
            }
        }
        _ => {
            if rng.gen_bool(0.2) {
                rng.gen_range(0..1200)
            } else {
                rng.gen_range(0..300)
            }
        }
    };
    let (stag, vaddr) = rdma_target(rng);
    // Mostly the right DMA length; else one that disagrees with the payload (a small one
    // in bounds with a payload that runs past the region's end, zero, random).
    let dma_length = match (op, rng.gen_range(0..8)) {
        (opcode::RDMA_READ_REQUEST, 0..=4) => rng.gen_range(0..600),
        (opcode::ATOMIC_COMPARE_SWAP | opcode::ATOMIC_FETCH_ADD, 0..=4) => 8,
        (_, 0..=4) => len as u32,
        (_, 5) => 8,
        (_, 6) => 0,
        _ => rng.gen(),
    };
    Message {
        opcode: op,
        dest_node: 1,
        src_node: 0,
        dest_qp: q,
        src_qp: q,
        psn,
        vaddr,
        stag,
        dma_length,
        immediate: matches!(op, opcode::SEND_IMMEDIATE | opcode::RDMA_WRITE_IMMEDIATE)
            .then(|| rng.gen()),
        invalidate: rng.gen_bool(0.05),
        resync,
        payload: (0..len).map(|_| rng.gen()).collect(),
    }
}

/// Rewrite header byte `byte` of a cell.
fn set_byte(cell: &mut [u64], byte: usize, value: u8) {
    let shift = 8 * (byte % 8);
    cell[byte / 8] = cell[byte / 8] & !(0xFF << shift) | (value as u64) << shift;
}

/// The cells of one random item of the stream. Also tells whether it is a well-formed
/// request NIC 1 applies (for the PSN the next one should carry).
fn random_cells(rng: &mut ChaCha8Rng, expected: &mut [Option<u32>; QPS]) -> Vec<Vec<u64>> {
    match rng.gen_range(0..100) {
        // Random words.
        0..=14 => {
            let n = rng.gen_range(1..50);
            vec![(0..n).map(|_| rng.gen()).collect()]
        }
        // A response (ACK, NACK, READ or atomic response) to NIC 1's idle requester.
        15..=24 => {
            let q = rng.gen_range(0..QPS as u16);
            let op = [
                opcode::ACK,
                opcode::NACK,
                opcode::RDMA_READ_RESPONSE,
                opcode::ATOMIC_RESPONSE,
            ][rng.gen_range(0..4)];
            let len = match op {
                opcode::RDMA_READ_RESPONSE => rng.gen_range(0..600),
                opcode::ATOMIC_RESPONSE => 8,
                _ => 0,
            };
            let psn = if rng.gen_bool(0.5) {
                (NIC1_START_PSN + q as u32 + rng.gen_range(0..10)) & 0xFF_FFFF
            } else {
                far_psn(rng)
            };
            let m = Message {
                opcode: op,
                dest_node: 1,
                src_node: 0,
                dest_qp: q,
                src_qp: q,
                psn,
                immediate: matches!(op, opcode::ACK | opcode::NACK).then(|| {
                    [
                        0x00,
                        0x20,
                        0x60,
                        0x61,
                        0x62,
                        0x63,
                        0x64,
                        0x65,
                        0x66,
                        rng.gen::<u8>() as u32,
                    ][rng.gen_range(0..10)]
                }),
                resync: rng.gen_bool(0.3),
                payload: (0..len).map(|_| rng.gen()).collect(),
                ..Default::default()
            };
            encode_message(&m, DEFAULT_CELL_PAYLOAD).unwrap()
        }
        // A request from the peer's queue pair, valid or damaged.
        _ => {
            let q = rng.gen_range(0..QPS);
            let (psn, resync) = match (expected[q], rng.gen_range(0..3)) {
                (Some(e), 0 | 1) => (e, false),
                _ => (far_psn(rng), true),
            };
            let m = random_request(rng, q as u16, psn, resync);
            let mut cells = encode_message(&m, DEFAULT_CELL_PAYLOAD).unwrap();
            let damage = rng.gen_range(0..16);
            let i = rng.gen_range(0..cells.len());
            match damage {
                // Valid.
                0..=3 => {}
                // Cell CRC: a flipped bit.
                4 => {
                    let w = rng.gen_range(0..cells[i].len());
                    cells[i][w] ^= 1 << rng.gen_range(0..64);
                }
                // Cell length.
                5 => {
                    let l = rng.gen::<u16>() % 1100;
                    set_byte(&mut cells[i], 2, l as u8);
                    set_byte(&mut cells[i], 3, (l >> 8) as u8);
                    reseal(&mut cells[i]);
                }
                // Unknown opcode.
                6 => {
                    let op = [0x02, 0x0F, 0x15, 0x1F, 0x22, 0x32, 0x40, 0xFF][rng.gen_range(0..8)];
                    for c in cells.iter_mut() {
                        set_byte(c, 0, op);
                        reseal(c);
                    }
                }
                // Bad queue pair or source.
                7 => {
                    let (byte, value) = match rng.gen_range(0..4) {
                        0 => (8, rng.gen_range(QPS as u8..=255)),
                        1 => (10, (q as u8 + 1) % QPS as u8),
                        2 => (6, rng.gen_range(1..=255)),
                        _ => (4, rng.gen_range(2..=255)),
                    };
                    for c in cells.iter_mut() {
                        set_byte(c, byte, value);
                        reseal(c);
                    }
                }
                // Bad PSN (ahead, behind, anywhere), same in every cell.
                8 => {
                    let p = match rng.gen_range(0..3) {
                        0 => psn.wrapping_add(rng.gen_range(1..20)),
                        1 => psn.wrapping_sub(rng.gen_range(1..20)),
                        _ => far_psn(rng),
                    } & 0xFF_FFFF;
                    for c in cells.iter_mut() {
                        c[2] = c[2] & !0xFF_FFFF | p as u64;
                        reseal(c);
                    }
                }
                // Reserved bits: flags, byte 14, PSN bits 31:24, the CRC word's upper half.
                9 => {
                    match rng.gen_range(0..4) {
                        0 => cells[i][0] |= (rng.gen_range(1..8u64)) << 13,
                        1 => cells[i][1] |= (rng.gen_range(1..=0xFFFFu64)) << 48,
                        2 => cells[i][2] |= (rng.gen_range(1..=0xFFu64)) << 24,
                        _ => {}
                    }
                    reseal(&mut cells[i]);
                    if rng.gen_bool(0.25) {
                        let last = cells[i].len() - 1;
                        cells[i][last] |= 1 << 40;
                    }
                }
                // Cut short (a truncated cell).
                10 => {
                    let n = rng.gen_range(1..cells[i].len());
                    cells[i].truncate(n);
                }
                // Message cut off: its later cells never come.
                11 => {
                    cells.truncate(i.max(1));
                }
                // A middle cell missing, or a cell twice.
                12 => {
                    if rng.gen_bool(0.5) {
                        cells.remove(i);
                    } else {
                        let c = cells[i].clone();
                        cells.insert(i, c);
                    }
                }
                // Packet CRC or immediate in the last cell's trailer.
                13 => {
                    let c = cells.last_mut().unwrap();
                    let t = c.len() - 2;
                    c[t] ^= 1 << rng.gen_range(0..32);
                    reseal(c);
                }
                // A random header field, resealed.
                14 => {
                    set_byte(&mut cells[i], rng.gen_range(0..24), rng.gen());
                    reseal(&mut cells[i]);
                }
                // A random word anywhere, resealed.
                _ => {
                    let w = rng.gen_range(0..cells[i].len() - 1);
                    cells[i][w] = rng.gen();
                    reseal(&mut cells[i]);
                }
            }
            // A valid request moves the expected PSN on (a refusal consumes the PSN too;
            // a sequence error leaves it, and the next request is retried at it).
            if damage <= 3 {
                expected[q] = Some((psn + 1) & 0xFF_FFFF);
            }
            cells
        }
    }
}

/// Consume both completion rings (NIC 1's fills with the random requests it served); NIC 0
/// sent nothing, so it completes nothing.
fn poll(pair: &mut NicPair<VerilatedNicTopTpt256>) -> Result<(), String> {
    pair.hosts[1].poll_completions();
    if pair.hosts[0].poll_completions() != 0 {
        return Err(format!(
            "NIC 0 completed work it never posted: {:?}",
            pair.hosts[0].completions
        ));
    }
    Ok(())
}

/// Step the pair, checking every write, for `cycles` cycles.
fn run(
    pair: &mut NicPair<VerilatedNicTopTpt256>,
    checker: &mut Checker,
    cycles: u64,
) -> Result<(), String> {
    for _ in 0..cycles {
        pair.step();
        checker.check(pair)?;
        poll(pair)?;
    }
    Ok(())
}

/// Feed `count` random cells into NIC 1, then let it settle.
fn random_phase(
    pair: &mut NicPair<VerilatedNicTopTpt256>,
    checker: &mut Checker,
    seed: u64,
    count: usize,
) -> Result<usize, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut expected = [None; QPS];
    let mut sent = 0;
    while sent < count {
        if pair.links[0].len() < 32 {
            for c in random_cells(&mut rng, &mut expected) {
                pair.links[0].inject_cell(&c);
                sent += 1;
            }
        }
        pair.step();
        checker.check(pair)?;
        poll(pair)?;
    }
    // Exceptions time out, answers drain.
    run(pair, checker, 20_000)?;
    Ok(sent)
}

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..len).map(|_| rng.gen()).collect()
}

/// Valid traffic from NIC 0: RDMA WRITEs into both writable regions, a SEND, an RDMA READ
/// of the read-only region and a fetch-and-add, on every queue pair; each completes with
/// success and lands byte-exact.
fn valid_phase(
    pair: &mut NicPair<VerilatedNicTopTpt256>,
    checker: &mut Checker,
    recv_slot: &mut [u32; 2],
    seed: u64,
) -> Result<(), String> {
    // The regions registered again (the stream may have invalidated them), fresh receive
    // buffers, and what NIC 0 writes locally (read data, atomic results).
    register(pair);
    post_receives(pair, checker, recv_slot, 1);
    checker.allowed[0].add(LOCAL_AREA, 0x2_0000, "NIC 0's local buffers");
    let ro = pattern(seed ^ 0xA0, RO_LEN as usize);
    pair.hosts[1].mem.write_bytes(RO_PADDR, &ro);
    let counter_before = pair.hosts[1].mem.read_u64(RW_PADDR + 0xFF8);
    pair.flush_csr(10_000)?;
    let mut cq_before = [
        pair.hosts[0].completions.len(),
        pair.hosts[1].completions.len(),
    ];
    for q in 0..QPS {
        let mut wr_id = 0x100 * (q as u64 + 1);
        let mut posted = vec![];
        let mut post = |pair: &mut NicPair<VerilatedNicTopTpt256>, w: Wqe| {
            posted.push(w);
            pair.hosts[0].post_send(q, &w);
        };
        // RDMA WRITE into the top half of the read-write region (what the planted bug
        // leaves out of the checker's view).
        let w1 = pattern(seed ^ (q as u64) << 8 ^ 1, 296);
        let off1 = 0x800 + q as u64 * 0x180;
        let local1 = LOCAL_AREA + q as u32 * 0x4000;
        pair.hosts[0].mem.write_bytes(local1, &w1);
        wr_id += 1;
        post(
            pair,
            Wqe {
                opcode: WqeOpcode::RdmaWrite as u8,
                length: w1.len() as u32,
                wr_id,
                local_addr: local1,
                remote_vaddr: RW_VADDR + off1,
                stag: stag(RW_INDEX, KEY),
                ..Default::default()
            },
        );
        // RDMA WRITE into the write-only region.
        let w2 = pattern(seed ^ (q as u64) << 8 ^ 2, 400);
        let off2 = q as u64 * 0x1F0;
        let local2 = local1 + 0x800;
        pair.hosts[0].mem.write_bytes(local2, &w2[..]);
        wr_id += 1;
        post(
            pair,
            Wqe {
                opcode: WqeOpcode::RdmaWrite as u8,
                length: w2.len() as u32,
                wr_id,
                local_addr: local2,
                remote_vaddr: WO_VADDR + off2,
                stag: stag(WO_INDEX, KEY),
                ..Default::default()
            },
        );
        // SEND into the next receive buffer.
        let s = pattern(seed ^ (q as u64) << 8 ^ 3, 300 + q * 7);
        let local3 = local1 + 0x1000;
        pair.hosts[0].mem.write_bytes(local3, &s);
        wr_id += 1;
        post(
            pair,
            Wqe {
                opcode: WqeOpcode::Send as u8,
                length: s.len() as u32,
                wr_id,
                local_addr: local3,
                ..Default::default()
            },
        );
        // RDMA READ of the read-only region.
        let local4 = local1 + 0x2000;
        let roff = q as u64 * 0x100;
        wr_id += 1;
        post(
            pair,
            Wqe {
                opcode: WqeOpcode::RdmaRead as u8,
                length: 200,
                wr_id,
                local_addr: local4,
                remote_vaddr: RO_VADDR + roff,
                stag: stag(RO_INDEX, KEY),
                ..Default::default()
            },
        );
        // Fetch-and-add on the last word of the read-write region.
        let local5 = local1 + 0x3000;
        wr_id += 1;
        post(
            pair,
            Wqe {
                opcode: WqeOpcode::AtomicFetchAdd as u8,
                length: 8,
                wr_id,
                local_addr: local5,
                remote_vaddr: RW_VADDR + 0xFF8,
                stag: stag(RW_INDEX, KEY),
                compare_add: 1 << (8 * q),
                ..Default::default()
            },
        );
        let want = posted.len();
        let start = pair.cycle;
        while pair.hosts[0].completions.len() < cq_before[0] + want {
            if pair.cycle - start > 400_000 {
                return Err(format!(
                    "QP {q}: {} of {want} completions after 400000 cycles: {:#?}",
                    pair.hosts[0].completions.len() - cq_before[0],
                    &pair.hosts[0].completions[cq_before[0]..]
                ));
            }
            pair.step();
            checker.check(pair)?;
            pair.hosts[0].poll_completions();
            pair.hosts[1].poll_completions();
        }
        let done: Vec<Cqe> = pair.hosts[0].completions[cq_before[0]..].to_vec();
        cq_before[0] += want;
        for (c, w) in done.iter().zip(&posted) {
            if CompletionStatus::from_code(c.status) != CompletionStatus::Success
                || c.wr_id != w.wr_id
            {
                return Err(format!("QP {q}: {w:?} completed {c:?}"));
            }
        }
        let mem = &pair.hosts[1].mem;
        if mem.read_bytes(RW_PADDR + off1 as u32, w1.len()) != &w1[..] {
            return Err(format!(
                "QP {q}: the RDMA WRITE into region 1 is not byte-exact"
            ));
        }
        if mem.read_bytes(WO_PADDR + off2 as u32, w2.len()) != &w2[..] {
            return Err(format!(
                "QP {q}: the RDMA WRITE into region 2 is not byte-exact"
            ));
        }
        let read = pair.hosts[0].mem.read_bytes(local4, 200);
        if read != &ro[roff as usize..roff as usize + 200] {
            return Err(format!("QP {q}: the RDMA READ is not byte-exact"));
        }
        // The SEND: its receive completion names the buffer's work request.
        let start = pair.cycle;
        let recv = loop {
            let found = pair.hosts[1].completions[cq_before[1]..]
                .iter()
                .find(|c| c.is_receive && c.qp as usize == q && c.byte_count == s.len() as u32)
                .copied();
            if let Some(c) = found {
                break c;
            }
            if pair.cycle - start > 100_000 {
                return Err(format!(
                    "QP {q}: no receive completion for the SEND: {:#?}",
                    &pair.hosts[1].completions[cq_before[1]..]
                ));
            }
            pair.step();
            checker.check(pair)?;
            pair.hosts[1].poll_completions();
        };
        if CompletionStatus::from_code(recv.status) != CompletionStatus::Success {
            return Err(format!("QP {q}: SEND received with {recv:?}"));
        }
        let slot = (recv.wr_id - 0x7700 - 1) as u32;
        let buf = RECV_AREA + slot * RECV_BYTES;
        if pair.hosts[1].mem.read_bytes(buf, s.len()) != &s[..] {
            return Err(format!(
                "QP {q}: the SEND is not byte-exact in buffer {buf:#x}"
            ));
        }
        cq_before[1] = pair.hosts[1].completions.len();
    }
    // Four fetch-and-adds of 1 << 8q on the counter, whatever random atomics left in it.
    let counter = pair.hosts[1].mem.read_u64(RW_PADDR + 0xFF8);
    if counter != counter_before.wrapping_add(0x0101_0101) {
        return Err(format!(
            "the counter is {counter:#x}, expected {counter_before:#x} + 0x01010101"
        ));
    }
    Ok(())
}

/// A few thousand random and damaged cells; no write outside the allowed regions; valid
/// traffic afterwards. `RANDOM_CELLS_SEEDS=n` runs seeds 16..16+n (four by default, about
/// 3 s in release).
#[test]
fn random_cells_write_only_registered_memory_and_the_nic_serves_valid_traffic_after() {
    let seeds: u64 = std::env::var("RANDOM_CELLS_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    for seed in 16..16 + seeds {
        random_cells_then_valid_traffic(seed);
    }
}

fn random_cells_then_valid_traffic(seed: u64) {
    let (mut pair, mut checker, mut slot) = setup(seed, false);
    let start = std::time::Instant::now();
    let sent = random_phase(&mut pair, &mut checker, seed, 3000)
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let dropped = pair.csr_read(1, csr::STAT_DROPPED).unwrap();
    let failed = pair.csr_read(1, csr::STAT_CELLS_FAILED).unwrap();
    let received = pair.csr_read(1, csr::STAT_MESSAGES_RECEIVED).unwrap();
    let nacks: Vec<u64> = (0..8)
        .map(|i| pair.csr_read(1, csr::NACK_SENT + 8 * i).unwrap())
        .collect();
    eprintln!(
        "seed {seed}: {sent} cells in {} cycles ({:.1} s): NIC 1 wrote {} words and read {} times, received {received} messages, dropped {dropped}, {failed} cells failed, NACKs sent {nacks:?}",
        pair.cycle,
        start.elapsed().as_secs_f64(),
        checker.writes[1],
        checker.reads,
    );
    // The stream reached every check: cells failed, messages dropped, refused and applied.
    assert!(failed > 100, "cells failed: {failed}");
    assert!(received > 50, "messages received: {received}");
    assert!(nacks[3] > 10, "REMOTE_ACCESS_ERROR NACKs: {nacks:?}");
    assert!(
        checker.writes[1] > 100,
        "NIC 1 wrote {} words",
        checker.writes[1]
    );
    valid_phase(&mut pair, &mut checker, &mut slot, seed)
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    eprintln!(
        "total {:.1} s, {} cycles",
        start.elapsed().as_secs_f64(),
        pair.cycle
    );
}

/// The planted bug: the checker believes region 1 is half the size registered in the NIC,
/// so the valid RDMA WRITE into its top half is flagged.
#[test]
fn the_write_check_catches_a_write_outside_the_regions_it_knows() {
    let seed = 17;
    let (mut pair, mut checker, mut slot) = setup(seed, true);
    random_phase(&mut pair, &mut checker, seed, 200).unwrap_or_else(|e| panic!("{e}"));
    let e = valid_phase(&mut pair, &mut checker, &mut slot, seed)
        .expect_err("the checker flags the write into the region's top half");
    eprintln!("{e}");
    let top = RW_PADDR + RW_LEN as u32 / 2..RW_PADDR + RW_LEN as u32;
    let flagged = e
        .split("byte ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|a| u32::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .unwrap_or_else(|| panic!("no address in: {e}"));
    assert!(
        top.contains(&flagged),
        "{flagged:#x} is in the top half: {e}"
    );
    assert!(e.contains("NIC 1 wrote"), "{e}");
}
