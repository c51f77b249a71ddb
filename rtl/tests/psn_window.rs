//! `PsnWindow` against a plain-Rust model written from its documentation
//! (`docs/nic-architecture.md`, "Refused PSNs" and "Rejoin support"; the refusal codes of
//! `nic_abi::Syndrome::refusal_code`), on seeded random inputs weighted toward the
//! interesting cases: PSNs near each other and near the 24-bit wrap, duplicates 0..=9
//! behind, resync points just inside and outside the window.

use nic_abi::{Syndrome, PSN_MASK, SEND_WINDOW};
use nic_rtl::responder::PsnWindow;
use nic_rtl::sim::settle;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

#[derive(Clone, Copy, Debug)]
struct Inputs {
    expected: u32,
    psn: u32,
    rs_psn: u32,
    window: u32,
    behind: u32,
    resynced: bool,
    syndrome: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Outputs {
    effective: u32,
    effective_next: u32,
    expected_next: u32,
    far_next: bool,
    far_commit: bool,
    window_eff: u32,
    report_dup: u32,
    report_after1: u32,
    code: u8,
}

/// The model.
fn model(i: &Inputs) -> Outputs {
    let next = |p: u32| (p + 1) & PSN_MASK;
    // More than SEND_WINDOW past the resync point (24-bit distance).
    let far = |p: u32| (p.wrapping_sub(i.rs_psn) & PSN_MASK) > SEND_WINDOW;
    let effective = if i.resynced { i.psn } else { i.expected };
    // Entry k (1-based) of the window is the refusal of PSN `expected - k`; a report
    // naming PSN `expected - d` holds entries d+1 ..= d+7 (those beyond 8 are unknown: 0).
    let entry = |k: u32| {
        if (1..=SEND_WINDOW).contains(&k) {
            (i.window >> (3 * (k - 1))) & 7
        } else {
            0
        }
    };
    let report = |d: u32| (1..=7).fold(0, |r, j| r | entry(d + j) << (3 * (j - 1)));
    let code = match i.syndrome {
        0 => 0,
        0x20 => 1,
        s => ((s & 7) + 1) & 7,
    };
    Outputs {
        effective,
        effective_next: next(effective),
        expected_next: next(i.expected),
        far_next: far(next(effective)),
        far_commit: far(next(i.expected)),
        window_eff: if i.resynced { 0 } else { i.window },
        report_dup: if (1..=SEND_WINDOW).contains(&i.behind) {
            report(i.behind)
        } else {
            0
        },
        report_after1: report(1),
        code: code as u8,
    }
}

fn random_inputs(rng: &mut ChaCha8Rng) -> Inputs {
    let near = |rng: &mut ChaCha8Rng, p: u32| {
        p.wrapping_add(rng.gen_range(0..24)).wrapping_sub(12) & PSN_MASK
    };
    let expected = if rng.gen_bool(0.2) {
        rng.gen_range(0..16u32).wrapping_sub(8) & PSN_MASK
    } else {
        rng.gen_range(0..1 << 24)
    };
    let behind = if rng.gen_bool(0.8) {
        rng.gen_range(0..10)
    } else {
        rng.gen_range(0..1 << 24)
    };
    let syndrome = *[
        0u8,
        0x20,
        0x60,
        0x61,
        0x62,
        0x63,
        0x64,
        0x65,
        0x66,
        rng.gen(),
    ]
    .get(rng.gen_range(0..10))
    .unwrap();
    Inputs {
        expected,
        psn: if rng.gen_bool(0.7) {
            near(rng, expected)
        } else {
            rng.gen_range(0..1 << 24)
        },
        rs_psn: if rng.gen_bool(0.7) {
            near(rng, expected)
        } else {
            rng.gen_range(0..1 << 24)
        },
        window: rng.gen_range(0..1 << 24),
        behind,
        resynced: rng.gen(),
        syndrome,
    }
}

fn evaluate(uut: &mut PsnWindow, i: &Inputs) -> Outputs {
    uut.expected.next = (i.expected as u64).to_bits();
    uut.psn.next = (i.psn as u64).to_bits();
    uut.rs_psn.next = (i.rs_psn as u64).to_bits();
    uut.window.next = (i.window as u64).to_bits();
    uut.behind.next = (i.behind as u64).to_bits();
    uut.resynced.next = i.resynced;
    uut.syndrome.next = (i.syndrome as u64).to_bits();
    settle(uut);
    Outputs {
        effective: uut.m_window.val().effective.to_u32(),
        effective_next: uut.m_window.val().effective_next.to_u32(),
        expected_next: uut.m_window.val().expected_next.to_u32(),
        far_next: uut.m_window.val().far_next,
        far_commit: uut.m_window.val().far_commit,
        window_eff: uut.m_window.val().window_eff.to_u32(),
        report_dup: uut.m_window.val().report_dup.to_u32(),
        report_after1: uut.m_window.val().report_after1.to_u32(),
        code: uut.m_window.val().code.to_u64() as u8,
    }
}

#[test]
fn synthesises() {
    let mut uut = PsnWindow::new();
    uut.connect_all();
    yosys_validate("nic_rtl_responder_psn_window", &generate_verilog(&uut))
        .expect("yosys accepts PsnWindow");
}

/// Seeded random inputs, one set per evaluation (the block is combinational: no
/// handshake to throttle), held for a random number of evaluations as a caller holds a
/// decided request for several clocks.
#[test]
fn matches_model_on_random_inputs() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x95_0001);
    let mut uut = PsnWindow::new();
    uut.connect_all();
    let mut checked = 0;
    for n in 0..40_000 {
        let i = random_inputs(&mut rng);
        for _ in 0..rng.gen_range(1..3) {
            assert_eq!(evaluate(&mut uut, &i), model(&i), "set {n}: {i:?}");
            checked += 1;
        }
    }
    assert!(checked > 40_000);
}

/// The refusal code of every final NACK is the ABI's (`Syndrome::refusal_code`).
#[test]
fn codes_are_the_abis() {
    let mut uut = PsnWindow::new();
    uut.connect_all();
    for s in Syndrome::NACKS {
        let Some(code) = s.refusal_code() else {
            continue;
        };
        let i = Inputs {
            expected: 0,
            psn: 0,
            rs_psn: 0,
            window: 0,
            behind: 0,
            resynced: false,
            syndrome: s as u8,
        };
        assert_eq!(evaluate(&mut uut, &i).code, code, "{s}");
    }
}
