//! The `Tpt`'s tests: its documented behaviour through its ports, directed and against a
//! plain-Rust model of the whole table on seeded random stimulus.

use super::*;
use crate::sim::{settle, tick};
use nic_abi::csr;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// `s_csr_reg` of a CSR byte offset.
fn reg(offset: u16) -> u8 {
    ((offset - csr::TPT_INDEX) / 8) as u8
}

const WORD0_FIELDS: u64 = 0xFF1F;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Entry {
    word0: u64,
    vaddr: u64,
    length: u32,
    paddr: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct Request {
    stag: u32,
    vaddr: u64,
    length: u32,
    access: u8,
    invalidate: bool,
    qp: u8,
    /// 0: check only (refused afterwards by the responder).
    commit: bool,
}

impl Request {
    /// `EXC_HEAD0` without the tag.
    fn head0(&self) -> u64 {
        1 | (self.qp as u64) << 2
            | (self.access as u64) << 8
            | ((self.invalidate && self.commit) as u64) << 12
            | (!self.commit as u64) << 13
            | (self.stag as u64) << 32
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lookup {
    Answer { ok: bool, paddr: u32 },
    Miss,
}

const FAIL: Lookup = Lookup::Answer {
    ok: false,
    paddr: 0,
};

/// Plain-Rust model of the table: staging registers, commands and the lookup checks,
/// applied one operation at a time in the order the block serialises them.
struct TptModel {
    table: Vec<Entry>,
    index: u32,
    staging: Entry,
    refused: u8,
    exc_timeout: u32,
    /// The exception head's tag, and the answers ignored.
    exc_tag: u8,
    stale: u8,
}

impl TptModel {
    fn new(entries: usize) -> Self {
        TptModel {
            table: vec![Entry::default(); entries],
            index: 0,
            staging: Entry::default(),
            refused: 0,
            exc_timeout: TPT_EXC_TIMEOUT_RESET as u32,
            exc_tag: 0,
            stale: 0,
        }
    }

    /// A CSR write (the exception answer is handled by the caller).
    fn write(&mut self, r: u8, wdata: u64) {
        match r {
            0 => self.index = wdata as u32 & 0xFF_FFFF,
            1 => self.staging.word0 = wdata & WORD0_FIELDS,
            2 => self.staging.vaddr = wdata,
            3 => self.staging.length = wdata as u32,
            4 => self.staging.paddr = wdata as u32,
            5 if (1..=4).contains(&wdata) => {
                let i = self.index as usize;
                if i >= self.table.len() {
                    self.refused = self.refused.wrapping_add(1);
                } else {
                    match wdata {
                        1 => self.table[i] = self.staging,
                        2 => self.table[i].word0 &= !csr::TPT_VALID,
                        3 => self.staging = self.table[i],
                        _ => {
                            self.staging = self.table[i];
                            self.table[i].word0 &= !csr::TPT_VALID;
                        }
                    }
                }
            }
            36 => self.exc_timeout = wdata as u32,
            _ => {}
        }
    }

    /// A CSR read of a table register (`TPT_STATUS` with busy = 0; the exception head
    /// registers are the caller's).
    fn read(&self, r: u8) -> u64 {
        match r {
            0 => self.index as u64,
            1 => self.staging.word0,
            2 => self.staging.vaddr,
            3 => self.staging.length as u64,
            4 => self.staging.paddr as u64,
            6 => (self.refused as u64) << 8 | (self.stale as u64) << 16,
            36 => self.exc_timeout as u64,
            _ => 0,
        }
    }

    /// siw's order: valid (else the exception queue), key, rights, bounds.
    fn lookup(&mut self, q: &Request) -> Lookup {
        let i = (q.stag >> 8) as usize;
        if i >= self.table.len() || self.table[i].word0 & csr::TPT_VALID == 0 {
            return Lookup::Miss;
        }
        let e = &mut self.table[i];
        if (e.word0 >> csr::TPT_KEY_SHIFT) as u8 != q.stag as u8 {
            return FAIL;
        }
        if q.access as u64 & !(e.word0 >> 1) & 7 != 0 {
            return FAIL;
        }
        let (va, base) = (q.vaddr as u128, e.vaddr as u128);
        if va < base || va + q.length as u128 > base + e.length as u128 {
            return FAIL;
        }
        if q.commit && (e.word0 & csr::TPT_ONE_SHOT != 0 || q.invalidate) {
            e.word0 &= !csr::TPT_VALID;
        }
        Lookup::Answer {
            ok: true,
            paddr: e.paddr.wrapping_add((q.vaddr - e.vaddr) as u32),
        }
    }
}

fn drive_csr(uut: &mut Tpt, op: Option<(u8, bool, u64)>) {
    uut.s_csr_valid.next = op.is_some();
    if let Some((r, write, wdata)) = op {
        uut.s_csr_reg.next = (r as u64).to_bits();
        uut.s_csr_write.next = write;
        uut.s_csr_wdata.next = wdata.to_bits();
    }
}

fn drive_req(uut: &mut Tpt, req: Option<&Request>) {
    uut.s_tpt_req_valid.next = req.is_some();
    if let Some(q) = req {
        uut.s_tpt_req.next.stag = (q.stag as u64).to_bits();
        uut.s_tpt_req.next.vaddr = q.vaddr.to_bits();
        uut.s_tpt_req.next.length = (q.length as u64).to_bits();
        uut.s_tpt_req.next.access = (q.access as u64).to_bits();
        uut.s_tpt_req.next.invalidate = q.invalidate;
        uut.s_tpt_req.next.qp = (q.qp as u64).to_bits();
        uut.s_tpt_req.next.commit = q.commit;
    }
}

/// A block held in reset, then stepped until the table has been cleared.
fn fresh(entries: usize) -> Tpt {
    let mut uut = Tpt::new(entries);
    uut.connect_all();
    drive_csr(&mut uut, None);
    drive_req(&mut uut, None);
    uut.reset.next = true;
    tick(&mut uut);
    tick(&mut uut);
    uut.reset.next = false;
    settle(&mut uut);
    uut
}

/// Blocking driver for the directed tests: one operation at a time, with a cycle count.
struct Bench {
    uut: Tpt,
    cycle: u64,
}

impl Bench {
    fn new(entries: usize) -> Self {
        let mut b = Bench {
            uut: fresh(entries),
            cycle: 0,
        };
        for _ in 0..entries.min(TPT_BANK_ENTRIES) + 1 {
            b.step();
        }
        assert_eq!(b.read(6) & 1, 0, "still busy clearing the table");
        b
    }

    /// One clock; returns the response seen during it.
    fn step(&mut self) -> Option<(bool, u32)> {
        settle(&mut self.uut);
        let resp = self.uut.m_tpt_resp_valid.val().then(|| {
            (
                self.uut.m_tpt_resp_ok.val(),
                self.uut.m_tpt_resp_paddr.val().to_u32(),
            )
        });
        tick(&mut self.uut);
        self.cycle += 1;
        resp
    }

    fn csr(&mut self, r: u8, write: bool, wdata: u64) -> Option<u64> {
        drive_csr(&mut self.uut, Some((r, write, wdata)));
        let mut waited = 0;
        loop {
            settle(&mut self.uut);
            if self.uut.s_csr_ready.val() {
                break;
            }
            assert!(self.step().is_none(), "unexpected response");
            waited += 1;
            assert!(waited < 100, "CSR access to register {r} never accepted");
        }
        assert!(self.step().is_none(), "unexpected response");
        drive_csr(&mut self.uut, None);
        settle(&mut self.uut);
        if write {
            assert!(!self.uut.m_csr_rdata_valid.val());
            None
        } else {
            assert!(self.uut.m_csr_rdata_valid.val(), "read answers next clock");
            Some(self.uut.m_csr_rdata.val().to_u64())
        }
    }

    fn write(&mut self, r: u8, wdata: u64) {
        self.csr(r, true, wdata);
    }

    fn read(&mut self, r: u8) -> u64 {
        self.csr(r, false, 0).unwrap()
    }

    /// Answers the head as a driver does: reads `EXC_HEAD0`, echoes its tag.
    fn answer(&mut self, paddr: Option<u32>) {
        let head = self.read(reg(csr::EXC_HEAD0));
        assert_eq!(head & 1, 1, "no head to answer");
        self.write(reg(csr::EXC_ANSWER), csr::exc_answer(head, paddr));
    }

    fn write_entry(&mut self, index: u32, e: Entry) {
        self.write(reg(csr::TPT_INDEX), index as u64);
        self.write(reg(csr::TPT_WORD0), e.word0);
        self.write(reg(csr::TPT_VADDR), e.vaddr);
        self.write(reg(csr::TPT_LENGTH), e.length as u64);
        self.write(reg(csr::TPT_PADDR), e.paddr as u64);
        self.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_WRITE);
    }

    fn read_entry(&mut self, index: u32) -> Entry {
        self.write(reg(csr::TPT_INDEX), index as u64);
        self.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_READ);
        Entry {
            word0: self.read(reg(csr::TPT_WORD0)),
            vaddr: self.read(reg(csr::TPT_VADDR)),
            length: self.read(reg(csr::TPT_LENGTH)) as u32,
            paddr: self.read(reg(csr::TPT_PADDR)) as u32,
        }
    }

    /// Offer `q` until accepted; returns the cycle it was accepted in.
    fn offer(&mut self, q: &Request) -> u64 {
        drive_req(&mut self.uut, Some(q));
        for _ in 0..100 {
            settle(&mut self.uut);
            let accepted = self.uut.s_tpt_req_ready.val();
            let at = self.cycle;
            assert!(self.step().is_none(), "unexpected response");
            if accepted {
                drive_req(&mut self.uut, None);
                return at;
            }
        }
        panic!("lookup never accepted");
    }

    /// Clocks until the next response: (ok, paddr, cycle it was seen in).
    fn response(&mut self, limit: u64) -> (bool, u32, u64) {
        for _ in 0..limit {
            let at = self.cycle;
            if let Some((ok, paddr)) = self.step() {
                return (ok, paddr, at);
            }
        }
        panic!("no response within {limit} clocks");
    }

    /// A lookup that hits the table: answered three clocks after acceptance.
    fn lookup(&mut self, q: &Request) -> Lookup {
        let at = self.offer(q);
        let (ok, paddr, seen) = self.response(10);
        assert_eq!(seen, at + 3, "lookup latency");
        Lookup::Answer { ok, paddr }
    }

    /// A lookup expected to miss: the head is shown three clocks after acceptance.
    fn lookup_miss(&mut self, q: &Request) -> u64 {
        let at = self.offer(q);
        while self.cycle < at + 3 {
            assert!(self.step().is_none());
        }
        let head = self.read(reg(csr::EXC_HEAD0));
        assert_eq!(head & !csr::EXC_TAG_MASK, q.head0(), "head for {q:?}");
        assert_eq!(self.read(reg(csr::EXC_HEAD1)), q.vaddr);
        assert_eq!(self.read(reg(csr::EXC_HEAD2)), q.length as u64);
        at
    }
}

const RW: u64 = csr::TPT_VALID | csr::TPT_REMOTE_READ | csr::TPT_REMOTE_WRITE;
const READ: u8 = 1;
const WRITE: u8 = 2;
const ATOMIC: u8 = 4;

fn entry(word0: u64, key: u8, vaddr: u64, length: u32, paddr: u32) -> Entry {
    Entry {
        word0: word0 | (key as u64) << csr::TPT_KEY_SHIFT,
        vaddr,
        length,
        paddr,
    }
}

fn req(index: u32, key: u8, vaddr: u64, length: u32, access: u8) -> Request {
    Request {
        stag: index << 8 | key as u32,
        vaddr,
        length,
        access,
        invalidate: false,
        qp: 5,
        commit: true,
    }
}

fn ok(paddr: u32) -> Lookup {
    Lookup::Answer { ok: true, paddr }
}

#[test]
fn synthesises() {
    let mut uut = Tpt::new(256);
    uut.connect_all();
    yosys_validate("nic_rtl_tpt", &generate_verilog(&uut)).expect("yosys accepts Tpt");
}

/// Writes the Verilog for the lint and synthesis runs by hand
/// (`cargo test --release -p nic-rtl tpt::tests::write_verilog -- --ignored`).
#[test]
#[ignore]
fn write_verilog() {
    for entries in [256, 1024] {
        let mut uut = Tpt::new(entries);
        uut.connect_all();
        std::fs::write(format!("/tmp/nic_tpt_{entries}.v"), generate_verilog(&uut)).unwrap();
    }
}

#[test]
fn hit_translates_with_three_clock_latency() {
    let mut b = Bench::new(16);
    b.write_entry(3, entry(RW, 0x5A, 0x7000_0000_1000, 0x2000, 0x8000_0000));
    assert_eq!(
        b.lookup(&req(3, 0x5A, 0x7000_0000_1010, 0x100, READ | WRITE)),
        ok(0x8000_0010)
    );
    // Back to back: the next lookup is accepted in the clock its predecessor answers.
    let q = req(3, 0x5A, 0x7000_0000_1000, 0x2000, WRITE);
    drive_req(&mut b.uut, Some(&q));
    let (mut accepted, mut answered) = (vec![], vec![]);
    for _ in 0..30 {
        settle(&mut b.uut);
        if b.uut.s_tpt_req_ready.val() {
            accepted.push(b.cycle);
        }
        let at = b.cycle;
        if let Some(r) = b.step() {
            assert_eq!(r, (true, 0x8000_0000));
            answered.push(at);
        }
    }
    drive_req(&mut b.uut, None);
    assert_eq!(
        accepted.len(),
        10,
        "one lookup every three clocks: {accepted:?}"
    );
    for (i, at) in accepted.iter().enumerate() {
        assert_eq!(*at, accepted[0] + 3 * i as u64);
    }
    assert_eq!(answered[..], accepted[1..10]);
}

/// valid comes first: an invalid entry goes to the exception queue even with a wrong
/// key, rights and bounds; a valid one with a wrong key fails even with good bounds, ...
#[test]
fn checks_in_order_valid_key_rights_bounds() {
    let mut b = Bench::new(16);
    let e = entry(csr::TPT_REMOTE_READ, 7, 0x1000, 0x1000, 0x40_0000);
    b.write_entry(2, e);
    b.lookup_miss(&req(2, 7, 0x1000, 8, READ));
    b.answer(None);
    assert!(!b.response(5).0);
    b.lookup_miss(&req(2, 9, 0, 0xFFFF, ATOMIC));
    b.answer(None);
    assert!(!b.response(5).0);

    let e = Entry {
        word0: e.word0 | csr::TPT_VALID,
        ..e
    };
    b.write_entry(2, e);
    assert_eq!(b.lookup(&req(2, 7, 0x1000, 8, READ)), ok(0x40_0000));
    // key
    assert_eq!(b.lookup(&req(2, 8, 0x1000, 8, READ)), FAIL);
    assert_eq!(b.lookup(&req(2, 0x87, 0x1000, 8, READ)), FAIL);
    // rights: each right alone
    assert_eq!(b.lookup(&req(2, 7, 0x1000, 8, WRITE)), FAIL);
    assert_eq!(b.lookup(&req(2, 7, 0x1000, 8, ATOMIC)), FAIL);
    assert_eq!(b.lookup(&req(2, 7, 0x1000, 8, READ | WRITE)), FAIL);
    for (word0, access) in [
        (csr::TPT_REMOTE_WRITE, WRITE),
        (csr::TPT_ATOMIC, ATOMIC),
        (csr::TPT_REMOTE_READ | csr::TPT_ATOMIC, READ | ATOMIC),
    ] {
        b.write(reg(csr::TPT_WORD0), csr::TPT_VALID | word0 | 7 << 8);
        b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_WRITE);
        assert_eq!(b.lookup(&req(2, 7, 0x1008, 8, access)), ok(0x40_0008));
        assert_eq!(b.lookup(&req(2, 7, 0x1008, 8, access ^ 7)), FAIL);
    }
    b.write_entry(2, e);
    // bounds
    assert_eq!(b.lookup(&req(2, 7, 0xFF8, 8, READ)), FAIL, "below the base");
    assert_eq!(b.lookup(&req(2, 7, 0x1FF8, 9, READ)), FAIL, "past the end");
    assert_eq!(b.lookup(&req(2, 7, 0x2000, 1, READ)), FAIL, "at the end");
    assert_eq!(b.lookup(&req(2, 7, 0x1000, 0x1001, READ)), FAIL, "too long");
    assert_eq!(
        b.lookup(&req(2, 7, 0x1000, 0x1000, READ)),
        ok(0x40_0000),
        "all"
    );
    assert_eq!(b.lookup(&req(2, 7, 0x1FF8, 8, READ)), ok(0x40_0FF8), "last");
    assert_eq!(
        b.lookup(&req(2, 7, 0x2000, 0, READ)),
        ok(0x40_1000),
        "empty"
    );
    assert_eq!(
        b.lookup(&req(2, 7, 0x1800, 0, 0)),
        ok(0x40_0800),
        "no access"
    );
}

/// Sums that wrap in 64 or 32 bits must not let a request pass.
#[test]
fn bounds_do_not_overflow() {
    let mut b = Bench::new(16);
    b.write_entry(1, entry(RW, 1, 0x1000, 0x1000, 0x10_0000));
    // vaddr + length wraps 2^64 to 8: inside [base, base + length) if computed in u64.
    assert_eq!(b.lookup(&req(1, 1, u64::MAX - 7, 16, READ)), FAIL);
    // (vaddr - base) + length wraps 2^32.
    assert_eq!(b.lookup(&req(1, 1, 0x1800, u32::MAX, READ)), FAIL);
    // vaddr - base = 2^32 + 0x800: the low 32 bits alone would pass.
    assert_eq!(b.lookup(&req(1, 1, 0x1_0000_1800, 8, READ)), FAIL);
    // vaddr below the base by exactly 2^32 in the high word (borrow cases).
    b.write_entry(1, entry(RW, 1, 0x5_FFFF_F000, 0x2000, 0x10_0000));
    assert_eq!(
        b.lookup(&req(1, 1, 0x6_0000_0800, 0x800, READ)),
        ok(0x10_1800)
    );
    assert_eq!(b.lookup(&req(1, 1, 0x5_0000_0800, 8, READ)), FAIL);
    assert_eq!(b.lookup(&req(1, 1, 0x4_FFFF_F800, 8, READ)), FAIL);
    assert_eq!(b.lookup(&req(1, 1, 0x7_0000_0800, 8, READ)), FAIL);
    // high word 0 against a base with high word 0xFFFF_FFFF (33-bit difference).
    b.write_entry(1, entry(RW, 1, 0xFFFF_FFFF_FFFF_F000, 0x2000, 0x10_0000));
    assert_eq!(b.lookup(&req(1, 1, 0x800, 8, READ)), FAIL);
    // An entry whose range crosses 2^64 is taken at its word (exact arithmetic).
    assert_eq!(
        b.lookup(&req(1, 1, 0xFFFF_FFFF_FFFF_FFF8, 0x10, READ)),
        ok(0x10_0FF8)
    );
    // A maximal entry.
    b.write_entry(1, entry(RW, 1, 0, u32::MAX, 0));
    assert_eq!(b.lookup(&req(1, 1, 1, u32::MAX - 1, WRITE)), ok(1));
    assert_eq!(b.lookup(&req(1, 1, 1, u32::MAX, WRITE)), FAIL);
    assert_eq!(b.lookup(&req(1, 1, 0xFFFF_FFFF, 0, WRITE)), ok(0xFFFF_FFFF));
}

#[test]
fn one_shot_and_invalidate_clear_the_entry_after_use() {
    let mut b = Bench::new(16);
    let e = entry(RW | csr::TPT_ONE_SHOT, 3, 0x2000, 0x100, 0x9000);
    b.write_entry(4, e);
    // A failed use (rights, key, bounds) leaves it valid.
    assert_eq!(b.lookup(&req(4, 3, 0x2000, 8, ATOMIC)), FAIL);
    assert_eq!(b.lookup(&req(4, 2, 0x2000, 8, READ)), FAIL);
    assert_eq!(b.lookup(&req(4, 3, 0x2100, 8, READ)), FAIL);
    // A check-only lookup (the responder refuses the request after the TPT check,
    // RECEIVER_NOT_READY) passes and leaves it valid, however often.
    let check_only = Request {
        commit: false,
        invalidate: true,
        ..req(4, 3, 0x2010, 8, READ)
    };
    for _ in 0..2 {
        assert_eq!(b.lookup(&check_only), ok(0x9010));
        assert_eq!(b.read_entry(4), e, "a check-only lookup used up the entry");
    }
    assert_eq!(b.lookup(&req(4, 3, 0x2010, 8, READ)), ok(0x9010));
    let mut cleared = e;
    cleared.word0 &= !csr::TPT_VALID;
    assert_eq!(b.read_entry(4), cleared, "only the valid bit is cleared");
    b.lookup_miss(&req(4, 3, 0x2010, 8, READ));
    b.answer(None);
    assert!(!b.response(5).0);

    // The request's invalidate flag on a reusable entry; a failed check with the flag
    // does not invalidate.
    let e = entry(RW, 3, 0x2000, 0x100, 0x9000);
    b.write_entry(5, e);
    let mut q = req(5, 3, 0x2000, 8, WRITE);
    assert_eq!(b.lookup(&q), ok(0x9000));
    assert_eq!(b.lookup(&q), ok(0x9000));
    q.invalidate = true;
    q.stag ^= 1;
    assert_eq!(b.lookup(&q), FAIL);
    q.stag ^= 1;
    assert_eq!(b.lookup(&q), ok(0x9000));
    let mut cleared = e;
    cleared.word0 &= !csr::TPT_VALID;
    assert_eq!(b.read_entry(5), cleared);
    q.invalidate = false;
    b.lookup_miss(&q);
}

#[test]
fn commands_write_read_back_and_invalidate() {
    let mut b = Bench::new(32);
    assert_eq!(b.read_entry(31), Entry::default(), "cleared by reset");
    let e = entry(
        csr::TPT_VALID | csr::TPT_ATOMIC | csr::TPT_ONE_SHOT,
        0xC3,
        0xDEAD_BEEF_0000_0008,
        0x1234_5678,
        0x8765_4320,
    );
    b.write_entry(31, e);
    // The staging registers keep only their fields.
    b.write(reg(csr::TPT_INDEX), 0xABCD_EF12_3400_0000 | 7);
    assert_eq!(b.read(reg(csr::TPT_INDEX)), 7);
    b.write(reg(csr::TPT_WORD0), u64::MAX);
    assert_eq!(b.read(reg(csr::TPT_WORD0)), WORD0_FIELDS);
    b.write(reg(csr::TPT_LENGTH), u64::MAX);
    assert_eq!(b.read(reg(csr::TPT_LENGTH)), 0xFFFF_FFFF);
    b.write(reg(csr::TPT_PADDR), 0x1_2345_6789);
    assert_eq!(b.read(reg(csr::TPT_PADDR)), 0x2345_6789);
    b.write(reg(csr::TPT_VADDR), u64::MAX - 1);
    assert_eq!(b.read(reg(csr::TPT_VADDR)), u64::MAX - 1);
    assert_eq!(b.read_entry(31), e);
    assert_eq!(b.read_entry(7), Entry::default());
    // Invalidate clears the valid bit only; the other entries stay.
    b.write_entry(30, entry(RW, 1, 2, 3, 4));
    b.write(reg(csr::TPT_INDEX), 31);
    b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_INVALIDATE);
    let mut cleared = e;
    cleared.word0 &= !csr::TPT_VALID;
    assert_eq!(b.read_entry(31), cleared);
    assert_eq!(b.read_entry(30), entry(RW, 1, 2, 3, 4));
    // Unknown command values do nothing and are not counted.
    b.write(reg(csr::TPT_INDEX), 30);
    for bad in [0, 5, 7, 0x101, 1 << 40] {
        b.write(reg(csr::TPT_COMMAND), bad);
    }
    assert_eq!(b.read(reg(csr::TPT_STATUS)), 0);
    assert_eq!(b.read_entry(30), entry(RW, 1, 2, 3, 4));
    // Read-only and unmapped registers.
    for r in [5, 7, 31, 35, 37, 63] {
        assert_eq!(b.read(r), 0, "register {r}");
    }
    for r in [6, 32, 33, 34, 7, 63] {
        b.write(r, u64::MAX);
    }
    assert_eq!(b.read(reg(csr::TPT_STATUS)), 0);
    assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
    assert_eq!(b.read_entry(30), entry(RW, 1, 2, 3, 4));
}

#[test]
fn commands_beyond_the_table_are_refused_and_counted() {
    let mut b = Bench::new(16);
    b.write_entry(15, entry(RW, 1, 0x100, 0x100, 0x100));
    b.write(reg(csr::TPT_INDEX), 15);
    b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_READ);
    let staged = b.read(reg(csr::TPT_WORD0));
    for (i, index) in [16u64, 0xFF_FFFF, 4096, 0x10F].into_iter().enumerate() {
        b.write(reg(csr::TPT_INDEX), index);
        for command in 1..=4 {
            b.write(reg(csr::TPT_COMMAND), command);
        }
        assert_eq!(b.read(reg(csr::TPT_STATUS)), (4 * (i as u64 + 1)) << 8);
    }
    assert_eq!(
        b.read(reg(csr::TPT_WORD0)),
        staged,
        "a refused read loads nothing"
    );
    for _ in 0..250 {
        b.write(reg(csr::TPT_COMMAND), 1);
    }
    assert_eq!(b.read(reg(csr::TPT_STATUS)), (16 + 250 - 256) << 8, "wraps");
    assert_eq!(b.read_entry(15), entry(RW, 1, 0x100, 0x100, 0x100));
    // Lookups beyond the table go to the exception queue.
    b.lookup_miss(&req(16, 1, 0x100, 8, READ));
    b.answer(None);
    assert!(!b.response(5).0);
    b.lookup_miss(&req(0xFF_FFFF, 0xFF, 0x100, 8, READ));
    b.answer(None);
    assert!(!b.response(5).0);
}

#[test]
fn busy_while_a_command_runs_and_staging_waits() {
    let mut b = Bench::new(16);
    b.write_entry(9, entry(RW, 9, 0x900, 0x90, 0x9000));
    b.write(reg(csr::TPT_INDEX), 9);
    b.write(reg(csr::TPT_WORD0), 0);
    b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_READ);
    assert_eq!(b.read(reg(csr::TPT_STATUS)) & 1, 1, "busy the clock after");
    assert_eq!(
        b.read(reg(csr::TPT_WORD0)),
        RW | 9 << 8,
        "waits, then sees the entry"
    );
    // A command behind a lookup in flight waits for it.
    let q = req(9, 9, 0x900, 8, READ);
    let at = b.offer(&q);
    b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_INVALIDATE);
    let mut seen = None;
    for _ in 0..4 {
        let cycle = b.cycle;
        if let Some(r) = b.step() {
            seen = Some((r, cycle));
        }
    }
    assert_eq!(seen, Some(((true, 0x9000), at + 3)));
    b.lookup_miss(&q);
}

/// Take (read and invalidate in one command, for a migration to another NIC): the
/// staging registers show the entry as it was, and no lookup comes between the read
/// and the invalidation: a lookup after it misses, and a one-shot lookup accepted in
/// the same clock goes first and uses the entry up, so the take reads it invalid.
#[test]
fn take_reads_and_invalidates_in_one_command() {
    let one_shot = RW | csr::TPT_ONE_SHOT;
    let mut b = Bench::new(16);
    b.write_entry(4, entry(one_shot, 4, 0x400, 0x40, 0x4000));
    b.write(reg(csr::TPT_INDEX), 4);
    b.write(reg(csr::TPT_WORD0), 0);
    b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_TAKE);
    assert_eq!(b.read(reg(csr::TPT_WORD0)), one_shot | 4 << 8, "as it was");
    assert_eq!(b.read(reg(csr::TPT_PADDR)), 0x4000);
    assert_eq!(b.read_entry(4).word0 & csr::TPT_VALID, 0, "invalidated");
    b.lookup_miss(&req(4, 4, 0x400, 8, READ));
    b.answer(None);
    assert!(!b.response(5).0);
    // A one-shot lookup in the same clock as the take: the lookup uses it up first.
    b.write_entry(5, entry(one_shot, 5, 0x500, 0x50, 0x5000));
    b.write(reg(csr::TPT_INDEX), 5);
    let q = req(5, 5, 0x500, 8, READ);
    drive_req(&mut b.uut, Some(&q));
    drive_csr(
        &mut b.uut,
        Some((reg(csr::TPT_COMMAND), true, csr::TPT_COMMAND_TAKE)),
    );
    settle(&mut b.uut);
    assert!(b.uut.s_tpt_req_ready.val() && b.uut.s_csr_ready.val());
    b.step();
    drive_req(&mut b.uut, None);
    drive_csr(&mut b.uut, None);
    let (ok, paddr, _) = b.response(6);
    assert_eq!((ok, paddr), (true, 0x5000), "the lookup went first");
    assert_eq!(
        b.read(reg(csr::TPT_WORD0)) & csr::TPT_VALID,
        0,
        "the take saw the entry used up"
    );
    assert_eq!(b.read_entry(5).word0 & csr::TPT_VALID, 0);
}

/// A command and a lookup of the same entry in the same clock: the lookup goes first and
/// sees the old entry; a command a clock earlier is seen by the lookup.
#[test]
fn command_racing_a_lookup_gives_old_or_new_entry() {
    for lookup_first in [true, false] {
        let mut b = Bench::new(16);
        b.write_entry(6, entry(RW, 6, 0x600, 0x60, 0x6000));
        b.write(reg(csr::TPT_VADDR), 0x1600);
        b.write(reg(csr::TPT_PADDR), 0x16000);
        let q = req(6, 6, 0x1610, 8, READ);
        let old = FAIL;
        let new = ok(0x16010);
        if lookup_first {
            drive_req(&mut b.uut, Some(&q));
            drive_csr(
                &mut b.uut,
                Some((reg(csr::TPT_COMMAND), true, csr::TPT_COMMAND_WRITE)),
            );
            settle(&mut b.uut);
            assert!(b.uut.s_tpt_req_ready.val() && b.uut.s_csr_ready.val());
            let at = b.cycle;
            b.step();
            drive_req(&mut b.uut, None);
            drive_csr(&mut b.uut, None);
            let (ok, paddr, seen) = b.response(6);
            assert_eq!((Lookup::Answer { ok, paddr }, seen), (old, at + 3));
        } else {
            b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_WRITE);
            assert_eq!(b.lookup(&q), new);
        }
        // One-shot write-back racing a write command: the command lands after it.
        b.write(reg(csr::TPT_WORD0), RW | csr::TPT_ONE_SHOT | 6 << 8);
        b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_WRITE);
        b.write(reg(csr::TPT_PADDR), 0x26000);
        drive_req(&mut b.uut, Some(&q));
        settle(&mut b.uut);
        assert!(b.uut.s_tpt_req_ready.val());
        b.step();
        drive_req(&mut b.uut, None);
        drive_csr(
            &mut b.uut,
            Some((reg(csr::TPT_COMMAND), true, csr::TPT_COMMAND_WRITE)),
        );
        b.step();
        drive_csr(&mut b.uut, None);
        assert!(b.response(6).0);
        let e = b.read_entry(6);
        assert_eq!(
            (e.word0 & 1, e.paddr),
            (1, 0x26000),
            "the newer entry survives"
        );
    }
}

/// The bind write of `e` (as `TPT_WORD0` fields) at `index`.
fn bind_of(index: u32, e: Entry) -> crate::common::TptBindWrite {
    crate::common::TptBindWrite {
        index: (index as u64).to_bits(),
        key: ((e.word0 >> csr::TPT_KEY_SHIFT) & 0xFF).to_bits(),
        rights: ((e.word0 >> 1) & 7).to_bits(),
        valid: e.word0 & csr::TPT_VALID != 0,
        vaddr: e.vaddr.to_bits(),
        length: (e.length as u64).to_bits(),
        paddr: (e.paddr as u64).to_bits(),
    }
}

fn drive_bind(uut: &mut Tpt, w: Option<crate::common::TptBindWrite>) {
    uut.s_bind_valid.next = w.is_some();
    if let Some(w) = w {
        uut.s_bind.next = w;
    }
}

impl Bench {
    /// Offers the bind write until accepted; returns the cycle it was accepted in.
    fn bind(&mut self, index: u32, e: Entry) -> u64 {
        drive_bind(&mut self.uut, Some(bind_of(index, e)));
        for _ in 0..100 {
            settle(&mut self.uut);
            let accepted = self.uut.s_bind_ready.val();
            let at = self.cycle;
            assert!(self.step().is_none(), "unexpected response");
            if accepted {
                drive_bind(&mut self.uut, None);
                return at;
            }
        }
        panic!("bind write never accepted");
    }
}

/// A bind write and a CSR write command of the same binding leave identical entries (read
/// back through the read command), in every bank; an unbind (valid 0) leaves the entry
/// invalid, and lookups miss it; a bind write between the staging writes of a CSR command
/// disturbs neither the staging registers nor the command; one beyond the table is
/// dropped.
#[test]
fn a_bind_write_leaves_the_entry_a_csr_write_leaves() {
    let mut b = Bench::new(1024);
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    for i in 0..24u32 {
        let rights = [csr::TPT_REMOTE_READ, csr::TPT_REMOTE_WRITE, RW & !1, 0xE][i as usize % 4];
        let e = entry(
            csr::TPT_VALID | rights,
            rng.gen(),
            rng.gen::<u64>() & !7,
            rng.gen(),
            rng.gen::<u32>() & !7,
        );
        let (csr_at, bind_at) = (i * 41 % 1024, (i * 41 + 512) % 1024);
        b.write_entry(csr_at, e);
        b.bind(bind_at, e);
        let (by_csr, by_bind) = (b.read_entry(csr_at), b.read_entry(bind_at));
        assert_eq!(by_bind, by_csr, "binding {i}: {e:?}");
        assert_eq!(by_bind.word0, e.word0 & WORD0_FIELDS);
        let key = (e.word0 >> csr::TPT_KEY_SHIFT) as u8;
        let q = req(bind_at, key, e.vaddr, 8, READ);
        if rights & csr::TPT_REMOTE_READ != 0 && e.length >= 8 {
            assert_eq!(b.lookup(&q), ok(e.paddr), "binding {i}");
        }
        // Unbind: null address, zero length, invalid.
        b.bind(bind_at, entry(0, key, 0, 0, 0));
        assert_eq!(b.read_entry(bind_at).word0 & 1, 0, "unbound {i}");
        b.lookup_miss(&q);
        b.answer(None);
        assert_eq!(b.response(10).0, false);
    }
    // Half-staged CSR command, a bind write meanwhile: both land whole.
    let staged = entry(RW, 0x11, 0x1000, 0x100, 0x8000);
    b.write(reg(csr::TPT_INDEX), 3);
    b.write(reg(csr::TPT_WORD0), staged.word0);
    b.write(reg(csr::TPT_VADDR), staged.vaddr);
    let bound = entry(RW, 0x22, 0x2000, 0x200, 0x9000);
    b.bind(700, bound);
    b.write(reg(csr::TPT_LENGTH), staged.length as u64);
    assert_eq!(
        b.read(reg(csr::TPT_VADDR)),
        staged.vaddr,
        "staging disturbed"
    );
    b.write(reg(csr::TPT_PADDR), staged.paddr as u64);
    b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_WRITE);
    assert_eq!(b.read_entry(3), staged);
    assert_eq!(b.read_entry(700), bound);
    // Beyond the table: accepted, dropped, nothing written (index 1024 + 700 would alias).
    b.bind(1024 + 700, entry(RW, 0x33, 0, 8, 0));
    assert_eq!(b.read_entry(700), bound);
    assert_eq!((b.read(6) >> 8) & 0xFF, 0, "not a refused command");
}

/// A bind write and a lookup of the same entry: the lookup accepted in the same clock goes
/// first and sees the old entry; one offered a clock after the bind's acceptance sees the
/// new one; a one-shot lookup's write-back in flight lands before the bind write, so the
/// new entry survives; a bind offered while a CSR command is pending waits for it.
#[test]
fn a_bind_write_racing_a_lookup_gives_old_or_new_entry() {
    let mut b = Bench::new(16);
    let old_e = entry(RW, 6, 0x600, 0x60, 0x6000);
    let new_e = entry(RW, 6, 0x600, 0x60, 0x16000);
    let q = req(6, 6, 0x610, 8, READ);
    b.write_entry(6, old_e);
    b.step();
    // Same clock: the lookup goes first.
    drive_req(&mut b.uut, Some(&q));
    drive_bind(&mut b.uut, Some(bind_of(6, new_e)));
    settle(&mut b.uut);
    assert!(b.uut.s_tpt_req_ready.val() && b.uut.s_bind_ready.val());
    let at = b.cycle;
    b.step();
    drive_req(&mut b.uut, None);
    drive_bind(&mut b.uut, None);
    let (okay, paddr, seen) = b.response(6);
    assert_eq!(
        (Lookup::Answer { ok: okay, paddr }, seen),
        (ok(0x6010), at + 3)
    );
    assert_eq!(b.read_entry(6), new_e, "applied after the lookup");
    // A clock after the bind: the lookup waits for it and sees the new entry.
    b.write_entry(6, old_e);
    b.step();
    drive_bind(&mut b.uut, Some(bind_of(6, new_e)));
    settle(&mut b.uut);
    assert!(b.uut.s_bind_ready.val());
    b.step();
    drive_bind(&mut b.uut, None);
    drive_req(&mut b.uut, Some(&q));
    settle(&mut b.uut);
    assert!(
        !b.uut.s_tpt_req_ready.val(),
        "a lookup waits for the bind write"
    );
    let (okay, paddr, _) = {
        b.offer(&q);
        b.response(6)
    };
    assert_eq!(Lookup::Answer { ok: okay, paddr }, ok(0x16010));
    // One-shot write-back in flight, then a bind write: the bind lands after it.
    b.write_entry(6, entry(RW | csr::TPT_ONE_SHOT, 6, 0x600, 0x60, 0x6000));
    b.offer(&q);
    b.bind(6, new_e);
    assert!(b.response(6).0);
    assert_eq!(b.read_entry(6), new_e, "the newer entry survives");
    // A bind write and a pending command: the command first, the bind after it.
    b.write(reg(csr::TPT_INDEX), 6);
    b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_INVALIDATE);
    b.bind(6, old_e);
    assert_eq!(b.read_entry(6), old_e);
}

#[test]
fn exception_translate_reject_and_timeout() {
    let mut b = Bench::new(64);
    assert_eq!(b.read(reg(csr::EXC_TIMEOUT)), 65536);
    assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
    // Translate.
    let q = Request {
        stag: 0x0000_2A11,
        vaddr: 0x1234_5678_9ABC_DEF0,
        length: 0x4321,
        access: WRITE | ATOMIC,
        invalidate: true,
        qp: 63,
        commit: true,
    };
    b.lookup_miss(&q);
    // Lookups wait while the head is pending; CSR commands do not.
    drive_req(&mut b.uut, Some(&req(1, 1, 0, 0, 0)));
    for _ in 0..20 {
        settle(&mut b.uut);
        assert!(!b.uut.s_tpt_req_ready.val());
        assert!(b.step().is_none());
    }
    drive_req(&mut b.uut, None);
    b.write_entry(1, entry(RW, 1, 0, 0x10, 0x500));
    assert_eq!(b.read_entry(1), entry(RW, 1, 0, 0x10, 0x500));
    let head = b.read(reg(csr::EXC_HEAD0));
    let answer_at = b.cycle;
    b.write(
        reg(csr::EXC_ANSWER),
        csr::exc_answer(head, Some(0xCAFE_F00D)),
    );
    assert_eq!(b.response(3), (true, 0xCAFE_F00D, answer_at + 1));
    assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
    assert_eq!(b.read(reg(csr::EXC_HEAD1)), 0);
    assert_eq!(b.read(reg(csr::EXC_HEAD2)), 0);
    // The entry written meanwhile now translates; answers without a head do nothing.
    b.write(reg(csr::EXC_ANSWER), 1);
    assert_eq!(b.lookup(&req(1, 1, 8, 8, READ)), ok(0x508));
    // Reject (paddr bits ignored).
    b.lookup_miss(&q);
    let head = b.read(reg(csr::EXC_HEAD0));
    b.write(
        reg(csr::EXC_ANSWER),
        csr::exc_answer(head, None) | 0xFFFF_FFFF_0000_0000,
    );
    let (ok, paddr, _) = b.response(3);
    assert_eq!((ok, paddr), (false, 0));
    // Timeout: refused EXC_TIMEOUT clocks after the head became visible.
    for timeout in [0u64, 1, 10, 300] {
        b.write(reg(csr::EXC_TIMEOUT), timeout | 0xFFFF_FFFF << 32);
        assert_eq!(b.read(reg(csr::EXC_TIMEOUT)), timeout);
        let at = b.offer(&q);
        let (ok, paddr, seen) = b.response(1000);
        assert_eq!((ok, paddr), (false, 0));
        assert_eq!(seen, at + 4 + timeout, "timeout {timeout}");
        assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
    }
    // An answer in the last clock before the timeout still wins.
    b.write(reg(csr::EXC_TIMEOUT), 20);
    let at = b.offer(&q);
    while b.cycle < at + 3 {
        assert!(b.step().is_none());
    }
    let head = b.read(reg(csr::EXC_HEAD0));
    while b.cycle < at + 3 + 20 {
        assert!(b.step().is_none());
    }
    b.write(reg(csr::EXC_ANSWER), csr::exc_answer(head, Some(0x77)));
    assert_eq!(b.response(3), (true, 0x77, at + 24));
}

/// An answer carries the tag of the head it answers: a driver's answer written after
/// its head timed out does not apply to the next head (or to none); it is counted.
#[test]
fn a_late_answer_with_an_old_tag_is_ignored() {
    let mut b = Bench::new(16);
    b.write(reg(csr::EXC_TIMEOUT), 10);
    let q = req(5, 1, 0x100, 8, WRITE);
    b.lookup_miss(&q);
    let first = b.read(reg(csr::EXC_HEAD0));
    assert_eq!(b.response(100).0, false, "timed out");
    b.write(reg(csr::EXC_TIMEOUT), 1000);
    b.lookup_miss(&q);
    let second = b.read(reg(csr::EXC_HEAD0));
    assert_eq!(
        second & csr::EXC_TAG_MASK,
        (first & csr::EXC_TAG_MASK) + (1 << csr::EXC_TAG_SHIFT)
    );
    // The late answer to the first head: ignored, counted; the second head waits.
    b.write(reg(csr::EXC_ANSWER), csr::exc_answer(first, Some(0x4000)));
    for _ in 0..20 {
        assert!(b.step().is_none(), "the late answer answered the next head");
    }
    assert_eq!(b.read(reg(csr::EXC_HEAD0)), second);
    let stale = |b: &mut Bench| b.read(reg(csr::TPT_STATUS)) >> csr::TPT_STATUS_STALE_ANSWERS_SHIFT;
    assert_eq!(stale(&mut b), 1);
    // Its own answer applies.
    b.write(reg(csr::EXC_ANSWER), csr::exc_answer(second, Some(0x5000)));
    let (ok, paddr, _) = b.response(3);
    assert_eq!((ok, paddr), (true, 0x5000));
    // An answer with no head: ignored and counted.
    b.write(reg(csr::EXC_ANSWER), csr::exc_answer(second, Some(0x5000)));
    assert_eq!(stale(&mut b), 2);
    assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
}

#[test]
fn reset_clears_the_table_and_the_exception_head() {
    let mut b = Bench::new(512);
    b.write_entry(300, entry(RW, 1, 0, 0x100, 0x100));
    b.write_entry(44, entry(RW, 1, 0, 0x100, 0x100));
    b.write(reg(csr::EXC_TIMEOUT), 1000);
    assert_eq!(b.lookup(&req(300, 1, 0, 8, READ)), ok(0x100));
    b.lookup_miss(&req(301, 1, 0, 8, READ));
    b.uut.reset.next = true;
    b.step();
    b.uut.reset.next = false;
    assert_eq!(b.read(reg(csr::TPT_STATUS)), 1, "busy clearing");
    assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
    assert_eq!(b.read(reg(csr::EXC_TIMEOUT)), 65536);
    let mut waited = 0;
    while b.read(reg(csr::TPT_STATUS)) & 1 == 1 {
        waited += 1;
    }
    assert!(
        (120..=256).contains(&waited),
        "{waited} reads while clearing"
    );
    assert_eq!(b.read_entry(300), Entry::default());
    assert_eq!(b.read_entry(44), Entry::default());
    b.lookup_miss(&req(300, 1, 0, 8, READ));
}

/// A lookup accepted and not yet answered.
struct Pending {
    req: Request,
    accepted: u64,
    /// `Miss` until the exception is resolved.
    outcome: Lookup,
    due: Option<u64>,
}

/// The exception head as the block shows it.
struct Head {
    visible_from: u64,
    countdown: u32,
}

#[derive(Default, Debug)]
struct Coverage {
    hits: u32,
    failures: u32,
    answered: u32,
    timed_out: u32,
    stale: u32,
    commands: u32,
    refused: u32,
    csr_stalls: u32,
    reads: u32,
}

fn pick<T: Copy>(rng: &mut ChaCha8Rng, pool: &[T]) -> T {
    pool[rng.gen_range(0..pool.len())]
}

fn random_vaddr(rng: &mut ChaCha8Rng) -> u64 {
    match rng.gen_range(0..6) {
        0 => rng.gen(),
        1 => 0xFFFF_FFFF_FFFF_F000,
        2 => 0xFFFF_FFFF_F800,
        3 => 0x1_0000_0000 - 0x800,
        _ => rng.gen_range(0..4u64) << 12,
    }
}

fn random_length(rng: &mut ChaCha8Rng) -> u32 {
    match rng.gen_range(0..6) {
        0 => u32::MAX,
        1 => rng.gen(),
        _ => rng.gen_range(0..0x3000),
    }
}

fn random_csr(rng: &mut ChaCha8Rng, indices: &[u32]) -> (u8, bool, u64) {
    let junk = |rng: &mut ChaCha8Rng, bits: u32| {
        if rng.gen_bool(0.15) {
            rng.gen::<u64>() << bits
        } else {
            0
        }
    };
    match rng.gen_range(0..100) {
        0..=14 => (0, true, pick(rng, indices) as u64 | junk(rng, 24)),
        15..=24 => {
            let mut w = rng.gen_range(0..8u64) << 1 | (rng.gen_range(0..4u64) << 8);
            if rng.gen_bool(0.9) {
                w |= csr::TPT_VALID;
            }
            if rng.gen_bool(0.1) {
                w |= csr::TPT_ONE_SHOT;
            }
            (1, true, w | junk(rng, 16) | junk(rng, 5) & 0xE0)
        }
        25..=32 => (2, true, random_vaddr(rng)),
        33..=40 => (3, true, random_length(rng) as u64 | junk(rng, 32)),
        41..=46 => (4, true, rng.gen()),
        47..=61 => {
            let command = match rng.gen_range(0..20) {
                0..=9 => csr::TPT_COMMAND_WRITE,
                10..=11 => csr::TPT_COMMAND_INVALIDATE,
                12..=16 => csr::TPT_COMMAND_READ,
                17..=18 => csr::TPT_COMMAND_TAKE,
                _ => pick(rng, &[0, 5, 7, 0x104]),
            };
            (5, true, command)
        }
        62..=76 => (rng.gen_range(0..=6), false, 0),
        77..=86 => (pick(rng, &[32, 32, 32, 33, 34, 36]), false, 0),
        87..=88 => (36, true, rng.gen_range(0..40) | junk(rng, 32)),
        89 => (35, true, rng.gen()),
        90..=94 => (rng.gen_range(0..64), false, 0),
        _ => (pick(rng, &[6, 32, 33, 34, 7, 40, 63]), true, rng.gen()),
    }
}

fn random_request(rng: &mut ChaCha8Rng, model: &TptModel, indices: &[u32]) -> Request {
    // Mostly the entries the CSR side writes; sometimes beyond the table.
    let index = if rng.gen_bool(0.9) {
        pick(rng, &indices[..indices.len() - 2])
    } else {
        pick(rng, indices)
    };
    let e = model.table.get(index as usize).copied().unwrap_or_default();
    let key = if rng.gen_bool(0.7) {
        (e.word0 >> 8) as u8
    } else {
        rng.gen_range(0..4)
    };
    let (vaddr, length) = if rng.gen_bool(0.6) {
        let offset = rng.gen_range(0..=e.length as u64);
        let length = rng.gen_range(0..=e.length as u64 - offset) as u32;
        (e.vaddr.wrapping_add(offset), length)
    } else {
        (
            e.vaddr
                .wrapping_add(rng.gen_range(0..0x4000u64))
                .wrapping_sub(0x800),
            random_length(rng),
        )
    };
    let access = if rng.gen_bool(0.7) {
        (e.word0 >> 1) as u8 & rng.gen_range(0..8)
    } else {
        rng.gen_range(0..8)
    };
    Request {
        stag: index << 8 | key as u32,
        vaddr,
        length,
        access,
        invalidate: rng.gen_bool(0.08),
        qp: rng.gen_range(0..64),
        commit: rng.gen_bool(0.85),
    }
}

/// Random CSR traffic (staging writes, commands, reads, exception answers, timeout
/// changes) and random lookups, each offered with idle gaps (`csr_rate`, `req_rate`:
/// chance per clock of a new operation) against the block's own back-pressure, checked
/// against [`TptModel`] clock by clock: every CSR read value, every response's value
/// and clock (three clocks after a hit; the clock after the answer or the timeout of a
/// miss), the exception head, and at the end every entry read back.
fn random_run(
    entries: usize,
    indices: &[u32],
    seed: u64,
    cycles: u64,
    csr_rate: f64,
    req_rate: f64,
) -> Coverage {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = Bench::new(entries);
    let mut model = TptModel::new(entries);
    let timeout = rng.gen_range(5..40);
    b.write(reg(csr::EXC_TIMEOUT), timeout);
    model.write(reg(csr::EXC_TIMEOUT), timeout);
    let mut cov = Coverage::default();
    let mut csr_op: Option<(u8, bool, u64)> = None;
    let mut answers: VecDeque<(u8, bool, u64)> = VecDeque::new();
    let mut answer_planned = false;
    let mut request: Option<Request> = None;
    let mut pending: VecDeque<Pending> = VecDeque::new();
    let mut head: Option<Head> = None;
    let mut reads: VecDeque<(u64, u64, u64, u8)> = VecDeque::new();
    let end = b.cycle + cycles;
    let mut idle_since = b.cycle;
    loop {
        let c = b.cycle;
        let generating = c < end;
        if !generating
            && csr_op.is_none()
            && answers.is_empty()
            && request.is_none()
            && pending.is_empty()
            && reads.is_empty()
        {
            break;
        }
        assert!(c < end + 10_000, "seed {seed}: no drain");
        if csr_op.is_none() && rng.gen_bool(csr_rate) {
            csr_op = answers.pop_front();
            if csr_op.is_none() && generating {
                csr_op = Some(random_csr(&mut rng, indices));
            }
        }
        if request.is_none() && generating && rng.gen_bool(req_rate) {
            request = Some(random_request(&mut rng, &model, indices));
        }
        drive_csr(&mut b.uut, csr_op);
        drive_req(&mut b.uut, request.as_ref());
        settle(&mut b.uut);
        // Outputs: registered, from earlier clocks.
        if let Some(&(due, want, mask, r)) = reads.front() {
            assert_eq!(
                b.uut.m_csr_rdata_valid.val(),
                due == c,
                "seed {seed} clock {c}"
            );
            if due == c {
                reads.pop_front();
                let got = b.uut.m_csr_rdata.val().to_u64();
                assert_eq!(
                    got & mask,
                    want & mask,
                    "seed {seed} clock {c}: read of register {r}"
                );
                if r == 32 && got & 1 == 1 && !answer_planned && rng.gen_bool(0.75) {
                    // The driver answers the head it has seen, sometimes too late.
                    answer_planned = true;
                    let paddr = rng.gen_bool(0.7).then(|| rng.gen::<u32>());
                    let mut answer = csr::exc_answer(got, paddr);
                    if rng.gen_bool(0.1) {
                        // A wrong tag: ignored like a late answer.
                        answer ^= 1 << (16 + rng.gen_range(0..8));
                    }
                    answers.push_back((35, true, answer | rng.gen::<u64>() & 0xFF00_FFFE));
                }
            }
        } else {
            assert!(!b.uut.m_csr_rdata_valid.val(), "seed {seed} clock {c}");
        }
        let due_now = pending.front().is_some_and(|p| p.due == Some(c));
        assert_eq!(
            b.uut.m_tpt_resp_valid.val(),
            due_now,
            "seed {seed} clock {c}"
        );
        if due_now {
            let p = pending.pop_front().unwrap();
            let got = Lookup::Answer {
                ok: b.uut.m_tpt_resp_ok.val(),
                paddr: b.uut.m_tpt_resp_paddr.val().to_u32(),
            };
            assert_eq!(
                got, p.outcome,
                "seed {seed} clock {c}: response to {:?} accepted at {}",
                p.req, p.accepted
            );
        }
        let csr_ready = b.uut.s_csr_ready.val();
        let req_ready = b.uut.s_tpt_req_ready.val();
        if let Some((r, _, _)) = csr_op {
            assert!(csr_ready || r < 6, "seed {seed}: register {r} stalled");
            if !csr_ready {
                cov.csr_stalls += 1;
            }
        }
        if !pending.is_empty() {
            assert!(
                !req_ready,
                "seed {seed} clock {c}: lookup ready while one is open"
            );
        }
        if pending.is_empty() && csr_op.is_none() && request.is_none() {
            if c - idle_since > 300 {
                assert!(req_ready, "seed {seed} clock {c}: lookup port stuck");
            }
        } else {
            idle_since = c;
        }
        let csr_accept = csr_op.filter(|_| csr_ready);
        let req_accept = request.filter(|_| req_ready);
        // The model, in the block's order: CSR reads see the registers before this
        // edge; the exception head moves; a lookup goes before a command.
        if let Some((r, false, _)) = csr_accept {
            cov.reads += 1;
            let visible = head.as_ref().is_some_and(|h| c >= h.visible_from);
            let front = pending.front().map(|p| p.req).unwrap_or_default();
            let want = match r {
                32 if visible => front.head0() | (model.exc_tag as u64) << 16,
                33 if visible => front.vaddr,
                34 if visible => front.length as u64,
                _ => model.read(r),
            };
            let mask = if r == 6 { !1 } else { !0 };
            reads.push_back((c + 1, want, mask, r));
        }
        let mut took_answer = false;
        if let Some(p) = pending.front_mut() {
            if p.outcome == Lookup::Miss && p.accepted + 2 == c {
                head = Some(Head {
                    visible_from: c + 1,
                    countdown: model.exc_timeout,
                });
            }
            if let Some(h) = head.as_mut().filter(|h| c >= h.visible_from) {
                let tag = model.exc_tag;
                let resolved = match csr_accept {
                    Some((35, true, wdata)) if (wdata >> 16) as u8 == tag => {
                        cov.answered += 1;
                        took_answer = true;
                        Some(Lookup::Answer {
                            ok: wdata & 1 == 1,
                            paddr: if wdata & 1 == 1 {
                                (wdata >> 32) as u32
                            } else {
                                0
                            },
                        })
                    }
                    _ if h.countdown == 0 => {
                        cov.timed_out += 1;
                        Some(FAIL)
                    }
                    _ => {
                        h.countdown -= 1;
                        None
                    }
                };
                if let Some(outcome) = resolved {
                    p.outcome = outcome;
                    p.due = Some(c + 1);
                    head = None;
                    answer_planned = false;
                    model.exc_tag = model.exc_tag.wrapping_add(1);
                }
            }
        }
        if matches!(csr_accept, Some((35, true, _))) && !took_answer {
            cov.stale += 1;
            model.stale = model.stale.wrapping_add(1);
        }
        if let Some(q) = req_accept {
            assert!(
                pending.is_empty(),
                "seed {seed} clock {c}: lookup accepted early"
            );
            let outcome = model.lookup(&q);
            match outcome {
                Lookup::Answer { ok: true, .. } => cov.hits += 1,
                Lookup::Answer { ok: false, .. } => cov.failures += 1,
                Lookup::Miss => {}
            }
            pending.push_back(Pending {
                req: q,
                accepted: c,
                outcome,
                due: (outcome != Lookup::Miss).then_some(c + 3),
            });
            request = None;
        }
        if let Some((r, write, wdata)) = csr_accept {
            if write {
                if r == 5 && (1..=3).contains(&wdata) {
                    if (model.index as usize) < entries {
                        cov.commands += 1;
                    } else {
                        cov.refused += 1;
                    }
                }
                model.write(r, wdata);
            }
            csr_op = None;
        }
        tick(&mut b.uut);
        b.cycle += 1;
    }
    // Every entry reads back as the model has it.
    for i in 0..entries as u32 {
        assert_eq!(
            b.read_entry(i),
            model.table[i as usize],
            "seed {seed}: entry {i}"
        );
    }
    cov
}

fn check_coverage(cov: &Coverage) {
    eprintln!("{cov:?}");
    assert!(cov.hits > 200, "{cov:?}");
    assert!(cov.failures > 200, "{cov:?}");
    assert!(cov.answered > 20, "{cov:?}");
    assert!(cov.timed_out > 20, "{cov:?}");
    assert!(cov.commands > 300, "{cov:?}");
    assert!(cov.refused > 10, "{cov:?}");
    assert!(cov.csr_stalls > 100, "{cov:?}");
    assert!(cov.stale > 10, "{cov:?}");
}

#[test]
fn matches_model_with_gaps_and_backpressure() {
    let indices: Vec<u32> = (0..20).chain([0xFF_FFFF]).collect();
    for (seed, csr_rate, req_rate) in [
        (0x7_0001, 0.5, 0.5),
        (0x7_0002, 0.3, 0.8),
        (0x7_0003, 0.9, 0.2),
        (0x7_0004, 1.0, 1.0),
    ] {
        let cov = random_run(16, &indices, seed, 40_000, csr_rate, req_rate);
        check_coverage(&cov);
    }
}

/// Two banks of 256 entries: the read-data multiplexer and per-bank writes.
#[test]
fn matches_model_across_banks() {
    let indices: Vec<u32> = (0..4)
        .chain(254..258)
        .chain(509..514)
        .chain([4096, 0xFF_FFFF])
        .collect();
    let cov = random_run(512, &indices, 0x7_0005, 40_000, 0.6, 0.6);
    check_coverage(&cov);
}

#[test]
#[should_panic(expected = "entries must be a power of two between 16 and 4096, got 8")]
fn rejects_too_few_entries() {
    Tpt::new(8);
}

#[test]
#[should_panic(expected = "entries must be a power of two between 16 and 4096, got 8192")]
fn rejects_too_many_entries() {
    Tpt::new(8192);
}

#[test]
#[should_panic(expected = "entries must be a power of two between 16 and 4096, got 100")]
fn rejects_entries_not_a_power_of_two() {
    Tpt::new(100);
}
