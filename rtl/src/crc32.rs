//! `Crc32`: CRC-32/ISO-HDLC (zlib, Ethernet) over 8 bytes per clock.
//!
//! Ports:
//! - `clock` (in).
//! - `s_clear` (in): start a new CRC. With `s_valid` the word is the first of the new
//!   CRC; alone it just resets the register to all ones.
//! - `s_valid` (in): absorb `s_data` this clock.
//! - `s_data` (in, 64): bytes in little-endian order (byte 0 = bits 7:0 comes first).
//! - `s_bytes` (in, 4): valid low bytes of `s_data`, 1..=8 (the byte-enable of the last
//!   word of a message; 9..=15 act as 8, 0 leaves the CRC unchanged).
//! - `crc` (out, 32): CRC of every byte absorbed since the last clear, already inverted
//!   (the value zlib's `crc32` returns). Registered.
//!
//! Latency: one clock (a word absorbed at edge t shows in `crc` after edge t).
//! Throughput: 8 bytes per clock, no gaps. Resources: one 32-bit register and a
//! [`Crc32Step`] network. Parameters: none.

use crate::crc32_step::Crc32Step;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Initial (and reset) value of the raw CRC register.
pub const CRC32_INIT: u32 = 0xFFFF_FFFF;

#[derive(LogicBlock)]
pub struct Crc32 {
    pub clock: Signal<In, Clock>,
    pub s_clear: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_data: Signal<In, Bits<64>>,
    pub s_bytes: Signal<In, Bits<4>>,
    pub crc: Signal<Out, Bits<32>>,
    state_reg: DFF<Bits<32>>,
    step: Crc32Step,
    init: Constant<Bits<32>>,
}

impl Default for Crc32 {
    fn default() -> Self {
        Crc32 {
            clock: Default::default(),
            s_clear: Default::default(),
            s_valid: Default::default(),
            s_data: Default::default(),
            s_bytes: Default::default(),
            crc: Default::default(),
            state_reg: Default::default(),
            step: Default::default(),
            init: Constant::new(CRC32_INIT.to_bits()),
        }
    }
}

impl Logic for Crc32 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state_reg);
        self.step.data.next = self.s_data.val();
        self.step.bytes.next = self.s_bytes.val();
        self.step.crc_in.next = self.state_reg.q.val();
        if self.s_clear.val() {
            self.step.crc_in.next = self.init.val();
            self.state_reg.d.next = self.init.val();
        }
        if self.s_valid.val() {
            self.state_reg.d.next = self.step.crc_out.val();
        }
        self.crc.next = !self.state_reg.q.val();
    }
}

impl ClockedBlock for Crc32 {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell_format::CRC32;
    use crate::sim::{settle, tick};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn new_crc() -> Crc32 {
        let mut uut = Crc32::default();
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
                while rng.gen_bool(0.3) {
                    uut.s_clear.next = false;
                    uut.s_valid.next = false;
                    uut.s_data.next = rng.gen::<u64>().to_bits();
                    tick(&mut uut);
                }
                let mut b = [0u8; 8];
                b[..w.len()].copy_from_slice(w);
                // Bytes beyond the count are garbage: the block must ignore them.
                let garbage = if w.len() < 8 { rng.gen::<u64>() << (8 * w.len()) } else { 0 };
                let word = u64::from_le_bytes(b) | garbage;
                uut.s_clear.next = clear_with_first && i == 0;
                uut.s_valid.next = true;
                uut.s_data.next = word.to_bits();
                uut.s_bytes.next = (w.len() as u64).to_bits();
                tick(&mut uut);
            }
            uut.s_clear.next = false;
            uut.s_valid.next = false;
            settle(&mut uut);
            assert_eq!(uut.crc.val().to_u32(), CRC32.checksum(&msg), "len {len}");
        }
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
        assert_eq!(uut.crc.val().to_u32(), CRC32.checksum(b"12345678"));
    }
}
