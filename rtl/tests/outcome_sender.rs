//! `OutcomeSender` against its contract (the reassembler's outcome rules): finished cells
//! offered with idle gaps, the output under back-pressure, the payload from a model of
//! the cell buffer.

use nic_model::Throttle;
use nic_rtl::cell::OutcomeSender;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

/// A finished cell as the done slot holds it.
#[derive(Clone, Debug)]
struct Done {
    status: u8,
    offset: u32,
    immediate: u32,
    words: u8,
    last_bytes: u8,
    hdr: [u64; 3],
    vaddr: u64,
    stag_dma: u64,
}

/// One beat on the outcome port: data, bytes, last, status, header fields, RETH, offset,
/// immediate.
type Beat = (u64, u8, bool, u8, [u64; 12]);

/// The beats a finished cell becomes, from the contract; `payload` are the words it stored.
fn beats_of(d: &Done, payload: &[u64]) -> Vec<Beat> {
    let good = d.status == 0;
    let field = |w: u64, lo: u32, bits: u32| (w >> lo) & ((1u64 << bits) - 1);
    let fields = [
        field(d.hdr[0], 0, 16) | field(d.hdr[0], 16, 16) << 16,
        field(d.hdr[0], 32, 16),
        field(d.hdr[0], 48, 16),
        field(d.hdr[1], 0, 16),
        field(d.hdr[1], 16, 16),
        field(d.hdr[1], 32, 16),
        field(d.hdr[2], 0, 24),
        field(d.hdr[2], 32, 32),
        if good { d.vaddr } else { 0 },
        if good { d.stag_dma } else { 0 },
        if good { d.offset as u64 } else { 0 },
        if good { d.immediate as u64 } else { 0 },
    ];
    if !good || d.words == 0 {
        return vec![(0, 0, true, d.status, fields)];
    }
    (0..d.words as usize)
        .map(|i| {
            let last = i + 1 == d.words as usize;
            let bytes = if last { d.last_bytes } else { 8 };
            (payload[i], bytes, last, d.status, fields)
        })
        .collect()
}

fn beat_of(u: &OutcomeSender) -> Beat {
    let fields = [
        u.m_outcome.val().opcode.to_u64()
            | u.m_outcome.val().flags.to_u64() << 8
            | u.m_outcome.val().cell_length.to_u64() << 16,
        u.m_outcome.val().dest_node.to_u64(),
        u.m_outcome.val().src_node.to_u64(),
        u.m_outcome.val().dest_qp.to_u64(),
        u.m_outcome.val().src_qp.to_u64(),
        u.m_outcome.val().cell_seq.to_u64(),
        u.m_outcome.val().psn.to_u64(),
        u.m_outcome.val().msg_length.to_u64(),
        u.m_outcome.val().vaddr.to_u64(),
        u.m_outcome.val().stag.to_u64() | u.m_outcome.val().dma_length.to_u64() << 32,
        u.m_outcome.val().offset.to_u64(),
        u.m_outcome.val().immediate.to_u64(),
    ];
    (
        u.m_data.val().to_u64(),
        u.m_bytes.val().to_u8(),
        u.m_last.val(),
        u.m_outcome.val().status.to_u8(),
        fields,
    )
}

/// Runs `cells` through a sender whose buffer holds each good cell's words in order
/// from address 0 (wrapping at 256: the k-th word stored is read at `k mod 256`); returns
/// the beats taken and the beats the contract gives.
fn run(cells: &[Done], seed: u64, pressure: bool) -> (Vec<Beat>, Vec<Beat>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = OutcomeSender::new();
    uut.connect_all();
    let mut stored = vec![];
    let mut want = vec![];
    for d in cells {
        let payload: Vec<u64> = (0..d.words).map(|_| rng.gen()).collect();
        if d.status == 0 {
            stored.extend(&payload);
        }
        want.extend(beats_of(d, &payload));
    }
    let gaps = Throttle::when(pressure, 0.5);
    let ready = Throttle::when(pressure, 0.6);
    let mut queue: VecDeque<Done> = cells.iter().cloned().collect();
    let mut read_data = 0u64;
    let mut popped = 0usize;
    let mut got = vec![];
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    let mut offered = false;
    for _ in 0..200_000 {
        if got.len() == want.len() {
            break;
        }
        if !offered {
            offered = !queue.is_empty() && gaps.go(&mut rng);
        }
        uut.s_done_valid.next = offered;
        if let Some(d) = queue.front() {
            uut.s_done.next.status = (d.status as u64).to_bits();
            uut.s_done.next.offset = (d.offset as u64).to_bits();
            uut.s_done.next.immediate = (d.immediate as u64).to_bits();
            uut.s_done.next.words = (d.words as u64).to_bits();
            uut.s_done.next.last_bytes = (d.last_bytes as u64).to_bits();
            uut.s_done_hdr0.next = d.hdr[0].to_bits();
            uut.s_done_hdr1.next = d.hdr[1].to_bits();
            uut.s_done_hdr2.next = d.hdr[2].to_bits();
            uut.s_done_vaddr.next = d.vaddr.to_bits();
            uut.s_done_stag_dma.next = d.stag_dma.to_bits();
        }
        uut.s_read_data.next = read_data.to_bits();
        uut.m_ready.next = ready.go(&mut rng);
        settle(&mut uut);
        let valid_next = uut.m_valid_next.val();
        if uut.m_valid.val() && uut.m_ready.val() {
            let beat = beat_of(&uut);
            popped += (beat.1 != 0) as usize;
            got.push(beat);
        }
        if offered && uut.s_done_ready.val() {
            queue.pop_front();
            offered = false;
        }
        // The buffer: registered read of the next word to deliver.
        assert_eq!(
            uut.m_read_address.val().index(),
            popped % 256,
            "buffer read address"
        );
        read_data = stored.get(popped).copied().unwrap_or(0);
        tick(&mut uut);
        settle(&mut uut);
        assert_eq!(
            uut.m_valid.val(),
            valid_next,
            "m_valid_next foretold m_valid"
        );
    }
    (got, want)
}

fn random_cells(rng: &mut ChaCha8Rng, n: usize) -> Vec<Done> {
    (0..n)
        .map(|_| {
            let status = if rng.gen_bool(0.3) {
                rng.gen_range(1..5)
            } else {
                0
            };
            Done {
                status,
                offset: rng.gen(),
                immediate: rng.gen(),
                words: if rng.gen_bool(0.2) {
                    0
                } else {
                    rng.gen_range(1..=32)
                },
                last_bytes: rng.gen_range(1..=8),
                hdr: [rng.gen(), rng.gen(), rng.gen()],
                vaddr: rng.gen(),
                stag_dma: rng.gen(),
            }
        })
        .collect()
}

#[test]
fn delivers_each_finished_cell_as_its_outcome() {
    for (seed, pressure) in [(1, false), (2, true), (3, true)] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let cells = random_cells(&mut rng, 300);
        let (got, want) = run(&cells, seed, pressure);
        assert_eq!(got.len(), want.len(), "beats delivered");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "beat {i}");
        }
    }
}

#[test]
fn synthesises() {
    let mut uut = OutcomeSender::new();
    uut.connect_all();
    yosys_validate("nic_rtl_outcome_sender", &generate_verilog(&uut))
        .expect("yosys accepts OutcomeSender");
}
