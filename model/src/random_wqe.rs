//! Random send WQEs for the requester's block tests (the `TransmitMachine`'s and the
//! `SendQueueEngine`'s): every opcode of `WqeOpcode::ALL` with random fields, inline SENDs,
//! the local operations (NOP, BIND RKEY, DELAY) and, now and then, a WQE the requester
//! must complete locally with an error (`crate::requester::wqe_status`).
//!
//! Draws only from the caller's RNG, in a fixed order, so a test's seed fixes its WQEs.

use nic_abi::{
    Wqe, WqeOpcode, BIND_OPCODE, DELAY_OPCODE, INLINE_MAX_BYTES, MAX_MESSAGE_LENGTH, NOP_OPCODE,
};
use rand::Rng;

/// Lengths of [`random_wqe`]'s message WQEs (atomics are always 8 bytes long).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WqeLengths {
    /// Usual lengths: 1..=`max` bytes (one WQE in ten has length 0).
    pub max: u32,
    /// When above `max`: one WQE in ten (of those not of length 0) has `max + 1..long`
    /// bytes, e.g. a payload longer than a block's buffer. `long <= max` draws none.
    pub long: u32,
}

/// One random WQE (the fields a driver writes; `wr_id` and the reserved word random).
///
/// Its mix: a random opcode of `WqeOpcode::ALL` with random addresses, key and operands;
/// three in ten SENDs inline (0..=`INLINE_MAX_BYTES` bytes, any local address); then, one
/// WQE in a hundred each: an unknown opcode (two in a hundred), a NOP, a BIND RKEY or a
/// DELAY (mostly short, now and then with bits above its 24-bit count), a length past
/// `MAX_MESSAGE_LENGTH`, an atomic of 16 bytes, a misaligned local address, a misaligned
/// RDMA remote address, an inline WQE too long, an inline flag on any opcode.
pub fn random_wqe<R: Rng>(rng: &mut R, lengths: WqeLengths) -> Wqe {
    let ops = WqeOpcode::ALL;
    let op = ops[rng.gen_range(0..ops.len())];
    let mut w = Wqe {
        opcode: op as u8,
        invalidate: rng.gen_bool(0.2),
        length: match op {
            WqeOpcode::AtomicCompareSwap | WqeOpcode::AtomicFetchAdd => 8,
            _ if rng.gen_bool(0.1) => 0,
            _ if lengths.long > lengths.max + 1 && rng.gen_bool(0.1) => {
                rng.gen_range(lengths.max + 1..lengths.long)
            }
            _ => rng.gen_range(1..=lengths.max),
        },
        wr_id: rng.gen(),
        local_addr: 0x0010_0000 + 8 * rng.gen_range(0..0x4000),
        remote_vaddr: rng.gen::<u64>() & !7,
        stag: rng.gen(),
        immediate: rng.gen(),
        compare_add: rng.gen(),
        swap: rng.gen(),
        reserved: rng.gen(),
        ..Wqe::default()
    };
    // Inline SENDs (the payload in the WQE, any local address), and now and then a bad
    // inline WQE: another opcode, or too long.
    if matches!(op, WqeOpcode::Send | WqeOpcode::SendImmediate) && rng.gen_bool(0.3) {
        w.inline = true;
        w.length = rng.gen_range(0..=INLINE_MAX_BYTES as u32);
        w.local_addr = rng.gen();
    }
    match rng.gen_range(0..100) {
        0..=1 => w.opcode = [0x02, 0x15, 0x20, 0xFF][rng.gen_range(0..4)],
        8..=9 => {
            w.opcode = NOP_OPCODE;
            w.inline = false;
        }
        10 => {
            // A BIND RKEY (any range length), or a DELAY: mostly short, now and then
            // with bits above its 24-bit count (LOCAL_LENGTH_ERROR, no hold).
            w.inline = false;
            if rng.gen_bool(0.5) {
                w.opcode = BIND_OPCODE;
                w.length = rng.gen();
            } else {
                w.opcode = DELAY_OPCODE;
                w.remote_vaddr = match rng.gen_range(0..8) {
                    0 => 1 << rng.gen_range(24..64),
                    1 => rng.gen_range(100..300),
                    _ => rng.gen_range(0..40),
                };
            }
        }
        2 => w.length = MAX_MESSAGE_LENGTH + 1 + rng.gen_range(0..1000),
        3 if op.is_atomic() => w.length = 16,
        4 => w.local_addr += rng.gen_range(1..8),
        5 if op.is_rdma() => w.remote_vaddr |= rng.gen_range(1..8),
        6 if w.inline => w.length = INLINE_MAX_BYTES as u32 + rng.gen_range(1..64),
        7 => w.inline = true,
        _ => {}
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requester::{completes_locally, wqe_status};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Every class appears in a few thousand WQEs, and the lengths stay in their ranges.
    #[test]
    fn the_mix_has_every_class_and_lengths_in_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let lengths = WqeLengths {
            max: 128,
            long: 400,
        };
        let wqes: Vec<Wqe> = (0..4000).map(|_| random_wqe(&mut rng, lengths)).collect();
        let good: Vec<&Wqe> = wqes.iter().filter(|w| wqe_status(w) == 0).collect();
        for op in WqeOpcode::ALL {
            assert!(good.iter().any(|w| w.opcode == op as u8), "{op:?}");
        }
        for op in [NOP_OPCODE, BIND_OPCODE, DELAY_OPCODE] {
            assert!(good.iter().any(|w| w.opcode == op), "{op:#x}");
        }
        assert!(good.iter().any(|w| w.inline && w.length > 0));
        assert!(good
            .iter()
            .any(|w| !w.inline && w.length > 128 && w.length < 400));
        assert!(good.iter().any(|w| w.length == 0));
        let bad = wqes.iter().filter(|w| wqe_status(w) != 0).count();
        assert!((100..800).contains(&bad), "{bad} bad WQEs");
        for w in &good {
            let message = !completes_locally(w) && !w.inline && w.opcode != BIND_OPCODE;
            assert!(!message || w.length < 400, "{w:?}");
        }
    }

    /// Without a long range, lengths stay within `max`, and the draws do not depend on
    /// `long` when it is not above `max`.
    #[test]
    fn without_a_long_range_lengths_stay_within_max() {
        let draw = |long| {
            let mut rng = ChaCha8Rng::seed_from_u64(9);
            (0..2000)
                .map(|_| random_wqe(&mut rng, WqeLengths { max: 64, long }))
                .collect::<Vec<Wqe>>()
        };
        let a = draw(0);
        assert_eq!(a, draw(64));
        for w in a.iter().filter(|w| wqe_status(w) == 0) {
            let message = !completes_locally(w) && w.opcode != BIND_OPCODE;
            assert!(!message || w.length <= 64, "{w:?}");
        }
    }
}
