//! `Crc32Prepad` against the `crc` crate, with idle clocks and garbage past the last byte.

use nic_model::words::word_with_garbage;
use nic_model::Throttle;
use nic_rtl::cell::format::CRC32;
use nic_rtl::crc32::prepad::prepad_init;
use nic_rtl::crc32::{Crc32Prepad, CRC32_INIT};
use nic_rtl::sim::tick;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn new_crc() -> Crc32Prepad {
    let mut uut = Crc32Prepad::default();
    uut.connect_all();
    uut
}

#[test]
fn synthesises() {
    let v = generate_verilog(&new_crc());
    yosys_validate("nic_rtl_crc32_prepad", &v).expect("yosys accepts Crc32Prepad");
}

#[test]
fn init_constants_become_all_ones_after_their_zero_bytes() {
    for pad in 0..8 {
        let mut c = prepad_init(pad);
        for _ in 0..pad {
            c = nic_rtl::crc32::step::crc32_update(c, 0, 1);
        }
        assert_eq!(c, CRC32_INIT, "pad {pad}");
    }
}

/// Random messages (0 to 199 bytes), garbage above the last word's bytes, random idle
/// clocks, start alone or with the first word, the next start right after the CRC is
/// read: `crc` equals the `crc` crate two clocks after the last word.
#[test]
fn matches_reference_crc_on_random_data_with_gaps() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x0c2c_3202);
    let mut uut = new_crc();
    let idle_gap = Throttle::new(0.3);
    for _ in 0..400 {
        let len = rng.gen_range(0..200usize);
        let msg: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let pad = (8 - len % 8) % 8;
        let words: Vec<&[u8]> = msg.chunks(8).collect();
        let start_with_first = !words.is_empty() && rng.gen_bool(0.5);
        let idle = |uut: &mut Crc32Prepad, rng: &mut ChaCha8Rng| {
            uut.s_start.next = false;
            uut.s_valid.next = false;
            uut.s_pad.next = (rng.gen::<u64>() & 7).to_bits();
            uut.s_data.next = rng.gen::<u64>().to_bits();
            tick(uut);
        };
        if !start_with_first {
            uut.s_start.next = true;
            uut.s_pad.next = (pad as u64).to_bits();
            uut.s_valid.next = false;
            tick(&mut uut);
        }
        for (i, w) in words.iter().enumerate() {
            while idle_gap.go(&mut rng) {
                idle(&mut uut, &mut rng);
            }
            let word = word_with_garbage(w, &mut rng);
            uut.s_start.next = start_with_first && i == 0;
            uut.s_pad.next = if uut.s_start.next {
                (pad as u64).to_bits()
            } else {
                (rng.gen::<u64>() & 7).to_bits()
            };
            uut.s_valid.next = true;
            uut.s_data.next = word.to_bits();
            tick(&mut uut);
        }
        idle(&mut uut, &mut rng); // latency 2: the shifted word is absorbed
        assert_eq!(uut.crc.val().to_u32(), CRC32.checksum(&msg), "len {len}");
        while idle_gap.go(&mut rng) {
            idle(&mut uut, &mut rng);
        }
    }
}
