//! Random messages and cell-stream faults, for block tests and the testbench.
//!
//! It names the layout as `nic_rtl::cell::format` and uses nothing but it and `rand`.
//!
//! [`random_message`] draws a message of any opcode; [`corrupt_stream`] applies one fault
//! per chosen cell: a bit flip, truncation, extra words, a dropped, duplicated or swapped
//! cell, or a header field changed with the cell CRC recomputed (so only the
//! reassembler's header checks can catch it). Deterministic for a given RNG.

use nic_rtl::cell::format::{opcode, words_to_bytes, Message, CRC32, PSN_MODULUS};
use rand::Rng;

/// A random message with a payload of up to `max_len` bytes (10% empty).
pub fn random_message<R: Rng>(rng: &mut R, max_len: usize) -> Message {
    let ops = [
        opcode::SEND,
        opcode::SEND_IMMEDIATE,
        opcode::RDMA_WRITE,
        opcode::RDMA_WRITE_IMMEDIATE,
        opcode::RDMA_READ_REQUEST,
        opcode::ATOMIC_COMPARE_SWAP,
        opcode::ATOMIC_FETCH_ADD,
        opcode::RDMA_READ_RESPONSE,
        opcode::ACK,
    ];
    let op = ops[rng.gen_range(0..ops.len())];
    let len = if rng.gen_bool(0.1) {
        0
    } else {
        rng.gen_range(0..=max_len)
    };
    Message {
        opcode: op,
        dest_node: rng.gen(),
        src_node: rng.gen(),
        dest_qp: rng.gen(),
        src_qp: rng.gen(),
        psn: rng.gen_range(0..PSN_MODULUS),
        vaddr: rng.gen(),
        stag: rng.gen(),
        dma_length: len as u32,
        immediate: rng.gen_bool(0.3).then(|| rng.gen()),
        invalidate: rng.gen_bool(0.2),
        resync: rng.gen_bool(0.1),
        payload: (0..len).map(|_| rng.gen()).collect(),
    }
}

/// Recompute a cell's CRC word after its other words changed.
pub fn reseal(cell: &mut [u64]) {
    let n = cell.len();
    if n == 0 {
        return;
    }
    cell[n - 1] = CRC32.checksum(&words_to_bytes(&cell[..n - 1])) as u64;
}

/// Apply a random fault to each cell with probability `rate`.
pub fn corrupt_stream<R: Rng>(rng: &mut R, cells: Vec<Vec<u64>>, rate: f64) -> Vec<Vec<u64>> {
    let mut out: Vec<Vec<u64>> = Vec::with_capacity(cells.len() + 4);
    for cell in cells {
        if !rng.gen_bool(rate) {
            out.push(cell);
            continue;
        }
        let mut cell = cell;
        match rng.gen_range(0..10) {
            0 => {
                let w = rng.gen_range(0..cell.len());
                cell[w] ^= 1 << rng.gen_range(0..64);
                out.push(cell);
            }
            1 => {
                let keep = rng.gen_range(1..cell.len().max(2));
                cell.truncate(keep);
                out.push(cell);
            }
            2 => {
                for _ in 0..rng.gen_range(1..4) {
                    cell.push(rng.gen());
                }
                out.push(cell);
            }
            3 => {} // dropped cell
            4 => {
                out.push(cell.clone());
                out.push(cell);
            }
            5 => {
                // swap with the previous cell
                match out.pop() {
                    Some(prev) => {
                        out.push(cell);
                        out.push(prev);
                    }
                    None => out.push(cell),
                }
            }
            6 => {
                // header field changed, CRC recomputed: opcode, nodes, queue pairs, PSN, length
                let (w, shift, width) = [
                    (0, 0, 8),
                    (0, 32, 16),
                    (0, 48, 16),
                    (1, 0, 16),
                    (1, 16, 16),
                    (2, 0, 24),
                    (2, 32, 32),
                ][rng.gen_range(0..7)];
                cell[w] ^= (rng.gen_range(1..=u64::MAX >> (64 - width))) << shift;
                reseal(&mut cell);
                out.push(cell);
            }
            7 => {
                // flags changed (FIRST/LAST/IMMEDIATE/INVALIDATE or a reserved bit), CRC recomputed
                cell[0] ^= 1 << (8 + rng.gen_range(0..8));
                reseal(&mut cell);
                out.push(cell);
            }
            8 => {
                // cell sequence number or cell length changed, CRC recomputed
                if rng.gen_bool(0.5) {
                    cell[1] ^= (rng.gen_range(1..4u64)) << 32;
                } else {
                    cell[0] ^= (rng.gen_range(1..64u64)) << 16;
                }
                reseal(&mut cell);
                out.push(cell);
            }
            _ => {
                // a reserved field set, CRC recomputed
                match rng.gen_range(0..3) {
                    0 => cell[1] |= 1 << 50,
                    1 => cell[2] |= 1 << 28,
                    _ => {
                        let n = cell.len();
                        cell[n - 1] |= 1 << 40;
                        out.push(cell);
                        continue;
                    }
                }
                reseal(&mut cell);
                out.push(cell);
            }
        }
    }
    out
}
