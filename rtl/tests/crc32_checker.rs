//! `Crc32` (byte-enable and full-word variants) against the `crc` crate, with idle clocks
//! and garbage past the last byte.

use nic_model::words::word_with_garbage;
use nic_model::Throttle;
use nic_rtl::cell::format::CRC32;
use nic_rtl::crc32::Crc32;
use nic_rtl::sim::tick;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn new_crc() -> Crc32 {
    let mut uut = Crc32::with_byte_enable();
    uut.connect_all();
    uut
}

#[test]
fn synthesises() {
    let v = generate_verilog(&new_crc());
    yosys_validate("nic_rtl_crc32", &v).expect("yosys accepts Crc32");
}

/// Random messages, random byte counts on the last word, random idle clocks between
/// words, clear with and without the first word: `crc` equals the `crc` crate.
#[test]
fn matches_reference_crc_on_random_data_with_gaps() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x0c2c_3201);
    let mut uut = new_crc();
    let idle_gap = Throttle::new(0.3);
    for _ in 0..300 {
        let len = rng.gen_range(1..200usize);
        let msg: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let words: Vec<&[u8]> = msg.chunks(8).collect();
        let clear_with_first = rng.gen_bool(0.5);
        if !clear_with_first {
            uut.s_clear.next = true;
            uut.s_valid.next = false;
            tick(&mut uut);
        }
        for (i, w) in words.iter().enumerate() {
            while idle_gap.go(&mut rng) {
                uut.s_clear.next = false;
                uut.s_valid.next = false;
                uut.s_data.next = rng.gen::<u64>().to_bits();
                tick(&mut uut);
            }
            // Bytes beyond the count are garbage: the block must ignore them.
            let word = word_with_garbage(w, &mut rng);
            uut.s_clear.next = clear_with_first && i == 0;
            uut.s_valid.next = true;
            uut.s_data.next = word.to_bits();
            uut.s_bytes.next = (w.len() as u64).to_bits();
            tick(&mut uut);
        }
        uut.s_clear.next = false;
        uut.s_valid.next = false;
        tick(&mut uut); // latency 2 with byte enables
        assert_eq!(uut.crc.val().to_u32(), CRC32.checksum(&msg), "len {len}");
    }
}

#[test]
fn full_words_variant_has_latency_one() {
    let mut uut = Crc32::full_words();
    uut.connect_all();
    let data = b"0123456789abcdefFEDCBA9876543210";
    for (i, w) in data.chunks(8).enumerate() {
        uut.s_clear.next = i == 0;
        uut.s_valid.next = true;
        uut.s_data.next = u64::from_le_bytes(w.try_into().unwrap()).to_bits();
        uut.s_bytes.next = 8u64.to_bits();
        tick(&mut uut);
    }
    assert_eq!(uut.crc.val().to_u32(), CRC32.checksum(data));
}

#[test]
fn zero_bytes_leave_the_crc_unchanged() {
    let mut uut = new_crc();
    uut.s_clear.next = true;
    uut.s_valid.next = true;
    uut.s_data.next = 0x3837_3635_3433_3231u64.to_bits();
    uut.s_bytes.next = 8u64.to_bits();
    tick(&mut uut);
    uut.s_clear.next = false;
    uut.s_bytes.next = 0u64.to_bits();
    tick(&mut uut);
    tick(&mut uut);
    assert_eq!(uut.crc.val().to_u32(), CRC32.checksum(b"12345678"));
}
