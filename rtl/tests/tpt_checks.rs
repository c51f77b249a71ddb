//! `TptChecks` against a plain-Rust model written from its doc comment (siw's checks with
//! exact bounds, the translation, one-shot / invalidate, misses, the exception answers)
//! on seeded random lookups with idle gaps between them and answers in between.

use nic_model::Throttle;
use nic_rtl::sim::{settle, tick};
use nic_rtl::tpt::TptChecks;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

#[derive(Clone, Copy, Default, Debug)]
struct Req {
    stag: u32,
    vaddr: u64,
    length: u32,
    access: u8,
    invalidate: bool,
    qp: u8,
    commit: bool,
}

#[derive(Clone, Copy, Default, Debug)]
struct Entry {
    meta: u16,
    vaddr: u64,
    length: u32,
    paddr: u32,
}

/// The documented decision: (hit, ok, clear, paddr).
fn decide(entries: u32, q: &Req, e: &Entry) -> (bool, bool, bool, u32) {
    let hit = (q.stag >> 8) < entries && e.meta & 1 == 1;
    let key_ok = (e.meta >> 5) as u8 == q.stag as u8;
    let rights_ok = q.access as u16 & !((e.meta >> 1) & 7) == 0;
    let bounds_ok = q.vaddr >= e.vaddr
        && q.vaddr as u128 + q.length as u128 <= e.vaddr as u128 + e.length as u128;
    let ok = key_ok && rights_ok && bounds_ok;
    let clear = hit && ok && q.commit && (e.meta & 0x10 != 0 || q.invalidate);
    let paddr = if ok {
        e.paddr.wrapping_add(q.vaddr.wrapping_sub(e.vaddr) as u32)
    } else {
        0
    };
    (hit, ok, clear, paddr)
}

fn near(rng: &mut ChaCha8Rng, x: u64) -> u64 {
    match rng.gen_range(0..4) {
        0 => x,
        1 => x.wrapping_add(rng.gen_range(0..64)),
        2 => x.wrapping_sub(rng.gen_range(0..64)),
        _ => rng.gen(),
    }
}

fn random_pair(rng: &mut ChaCha8Rng, entries: u32) -> (Req, Entry) {
    let base: u64 =
        [0, u64::MAX - 100, rng.gen(), rng.gen::<u64>() & 0xFFFF_FFFF][rng.gen_range(0..4)];
    let elen: u32 = [0, 64, u32::MAX, rng.gen()][rng.gen_range(0..4)];
    let key: u8 = rng.gen();
    let e = Entry {
        meta: (rng.gen_ratio(7, 8) as u16)
            | (rng.gen_range(0..8u16) << 1)
            | ((rng.gen::<bool>() as u16) << 4)
            | (key as u16) << 5,
        vaddr: base,
        length: elen,
        paddr: rng.gen(),
    };
    let end = base.wrapping_add(elen as u64);
    let vaddr = if rng.gen() {
        near(rng, base)
    } else {
        near(rng, end)
    };
    let index = if rng.gen_ratio(7, 8) {
        rng.gen_range(0..entries)
    } else {
        rng.gen_range(entries..1 << 24)
    };
    let q = Req {
        stag: index << 8 | if rng.gen_ratio(7, 8) { key } else { rng.gen() } as u32,
        vaddr,
        length: [0, 1, 64, u32::MAX, rng.gen()][rng.gen_range(0..5)],
        access: rng.gen_range(0..8),
        invalidate: rng.gen(),
        qp: rng.gen_range(0..64),
        commit: rng.gen_ratio(3, 4),
    };
    (q, e)
}

fn run(seed: u64, entries: u32, cycles: usize, req_rate: f64, answer_rate: f64) -> [usize; 4] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = TptChecks::new(entries as usize);
    uut.connect_all();
    let (gaps, answers) = (Throttle::new(req_rate), Throttle::new(answer_rate));
    // Position of the lookup in flight: 0 none, 1 entry clock, 2 check clock.
    let mut phase = 0;
    let (mut req, mut entry) = (Req::default(), Entry::default());
    let mut held = Req::default();
    // The response registers as documented: valid this clock, ok and paddr held.
    let (mut resp_valid, mut resp_ok, mut resp_paddr) = (false, false, 0u32);
    // ok, refused, misses, clears
    let mut seen = [0usize; 4];
    for cycle in 0..cycles {
        let reset = cycle < 2;
        let accept = !reset && phase == 0 && gaps.go(&mut rng);
        if accept {
            (req, entry) = random_pair(&mut rng, entries);
        }
        let answer = (!reset && phase != 2 && answers.go(&mut rng))
            .then(|| (rng.gen::<bool>(), rng.gen::<u32>()));
        let q = if accept {
            req
        } else {
            Req {
                stag: rng.gen(),
                vaddr: rng.gen(),
                ..Req::default()
            }
        };
        uut.reset.next = reset;
        uut.s_req_accept.next = accept;
        uut.s_req.next.stag = (q.stag as u64).to_bits();
        uut.s_req.next.vaddr = q.vaddr.to_bits();
        uut.s_req.next.length = (q.length as u64).to_bits();
        uut.s_req.next.access = (q.access as u64).to_bits();
        uut.s_req.next.invalidate = q.invalidate;
        uut.s_req.next.qp = (q.qp as u64).to_bits();
        uut.s_req.next.commit = q.commit;
        let e = if phase == 1 {
            entry
        } else {
            Entry {
                meta: rng.gen(),
                vaddr: rng.gen(),
                length: rng.gen(),
                paddr: rng.gen(),
            }
        };
        uut.s_entry_valid.next = phase == 1;
        uut.s_entry_meta.next = ((e.meta & 0x1FFF) as u64).to_bits();
        uut.s_entry_vaddr.next = e.vaddr.to_bits();
        uut.s_entry_length.next = (e.length as u64).to_bits();
        uut.s_entry_paddr.next = (e.paddr as u64).to_bits();
        uut.s_answer_valid.next = answer.is_some();
        let (a_ok, a_paddr) = answer.unwrap_or((rng.gen(), rng.gen()));
        uut.s_answer_ok.next = a_ok;
        uut.s_answer_paddr.next = (a_paddr as u64).to_bits();
        settle(&mut uut);
        // This clock's outputs.
        assert_eq!(
            uut.m_resp_valid.val(),
            resp_valid,
            "cycle {cycle}: resp valid"
        );
        assert_eq!(uut.m_resp_ok.val(), resp_ok, "cycle {cycle}: resp ok");
        assert_eq!(
            uut.m_resp_paddr.val().to_u32(),
            resp_paddr,
            "cycle {cycle}: resp paddr"
        );
        assert_eq!(
            uut.m_req.val().stag.to_u32(),
            held.stag,
            "cycle {cycle}: head stag"
        );
        assert_eq!(
            uut.m_req.val().vaddr.to_u64(),
            held.vaddr,
            "cycle {cycle}: head vaddr"
        );
        assert_eq!(
            uut.m_req.val().length.to_u32(),
            held.length,
            "cycle {cycle}"
        );
        assert_eq!(
            uut.m_req.val().access.to_u64() as u8,
            held.access,
            "cycle {cycle}"
        );
        assert_eq!(uut.m_req.val().invalidate, held.invalidate, "cycle {cycle}");
        assert_eq!(uut.m_req.val().qp.to_u64() as u8, held.qp, "cycle {cycle}");
        assert_eq!(uut.m_req.val().commit, held.commit, "cycle {cycle}");
        let check = phase == 2;
        let (hit, ok, clear, paddr) = decide(entries, &req, &entry);
        assert_eq!(
            uut.m_miss.val(),
            check && !hit,
            "cycle {cycle}: miss {req:x?} {entry:x?}"
        );
        assert_eq!(
            uut.m_clear.val(),
            check && clear,
            "cycle {cycle}: clear {req:x?} {entry:x?}"
        );
        // The next clock's.
        resp_valid = false;
        if check && hit {
            (resp_valid, resp_ok, resp_paddr) = (!reset, ok, paddr);
            seen[if ok { 0 } else { 1 }] += 1;
            seen[3] += clear as usize;
        } else if check {
            seen[2] += 1;
        }
        if let Some((ok, p)) = answer {
            (resp_valid, resp_ok, resp_paddr) = (!reset, ok, if ok { p } else { 0 });
        }
        if accept {
            held = req;
        }
        phase = match phase {
            0 if accept => 1,
            1 if !reset => 2,
            _ => 0,
        };
        tick(&mut uut);
    }
    seen
}

#[test]
fn matches_model_with_gaps_and_answers() {
    for (seed, entries, req_rate, answer_rate) in [
        (0xC_0001, 16, 0.5, 0.2),
        (0xC_0002, 256, 1.0, 0.0),
        (0xC_0003, 4096, 0.2, 0.5),
        (0xC_0004, 16, 1.0, 0.3),
    ] {
        let seen = run(seed, entries, 30_000, req_rate, answer_rate);
        assert!(seen.iter().all(|&n| n > 20), "seed {seed:#x}: {seen:?}");
    }
}

#[test]
fn synthesises() {
    let mut uut = TptChecks::new(256);
    uut.connect_all();
    yosys_validate("nic_rtl_tpt_checks", &generate_verilog(&uut)).expect("yosys accepts TptChecks");
}

#[test]
#[should_panic(expected = "TptChecks: entries must be a power of two between 16 and 4096, got 100")]
fn rejects_entries_not_a_power_of_two() {
    TptChecks::new(100);
}
