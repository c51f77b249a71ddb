//! `Crc32Step`: the combinational XOR network of CRC-32/ISO-HDLC over one 8-byte word.
//!
//! Follows the parallel-CRC construction (the CRC register update is linear over GF(2),
//! so each next-state bit is the parity of masked state and data bits; the masks are
//! derived here from the bytewise reflected update, the same one the RustHDL
//! simulation runs). Emitted as `Verilog::Custom` because `#[hdl_gen]` cannot express a
//! table of 32 mask pairs; [`Crc32Step::masks`] is the single source of both.
//!
//! Ports:
//! - `crc_in` (in, 32): raw CRC register (not inverted; the initial value is all ones).
//! - `data` (in, 64): eight bytes, byte 0 in bits 7:0 is processed first.
//! - `restart` (in): use the initial value (all ones) instead of `crc_in`. Selected inside
//!   the network, after the 32-input state half, so it adds no level to the 96-input path.
//! - `crc_out` (out, 32): raw CRC register after those bytes.
//!
//! Latency: combinational. Cost: one 32 x 96 parity network (about 530 iCE40 LUTs).
//! Fewer bytes are handled by [`crate::Crc32`]: zero-masked data here, then
//! [`crate::Crc32Unshift`] on the result.

use rust_hdl::prelude::*;

/// Reflected CRC-32 polynomial (0x04C11DB7 bit-reversed).
pub const CRC32_REFLECTED_POLY: u32 = 0xEDB8_8320;

/// The bytewise table of the reflected CRC-32 register update.
pub const fn byte_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ CRC32_REFLECTED_POLY
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

const TABLE: [u32; 256] = byte_table();

/// Raw register update over the low `bytes` bytes of `data` (the function the hardware computes).
pub fn crc32_update(crc: u32, data: u64, bytes: usize) -> u32 {
    let mut c = crc;
    for i in 0..bytes.min(8) {
        let b = (data >> (8 * i)) as u8;
        c = (c >> 8) ^ TABLE[((c ^ b as u32) & 0xFF) as usize];
    }
    c
}

/// Parity masks of one byte count: `state[i]` and `data[i]` select the `crc_in` and
/// `data` bits whose XOR is bit `i` of `crc_out`.
#[derive(Clone, Debug)]
pub struct StepMasks {
    pub state: [u32; 32],
    pub data: [u64; 32],
}

#[derive(LogicBlock, Default)]
pub struct Crc32Step {
    pub crc_in: Signal<In, Bits<32>>,
    pub data: Signal<In, Bits<64>>,
    pub restart: Signal<In, Bit>,
    pub crc_out: Signal<Out, Bits<32>>,
}

impl Crc32Step {
    /// Masks for `bytes` bytes (1..=8), derived by probing [`crc32_update`] with unit vectors.
    pub fn masks(bytes: usize) -> StepMasks {
        let mut m = StepMasks {
            state: [0; 32],
            data: [0; 32],
        };
        for j in 0..32 {
            let col = crc32_update(1 << j, 0, bytes);
            for i in 0..32 {
                if col >> i & 1 != 0 {
                    m.state[i] |= 1 << j;
                }
            }
        }
        for j in 0..64 {
            let col = crc32_update(0, 1 << j, bytes);
            for i in 0..32 {
                if col >> i & 1 != 0 {
                    m.data[i] |= 1 << j;
                }
            }
        }
        m
    }
}

impl Logic for Crc32Step {
    fn update(&mut self) {
        let start = if self.restart.val() {
            crate::crc32::CRC32_INIT
        } else {
            self.crc_in.val().to_u32()
        };
        let next = crc32_update(start, self.data.val().to_u64(), 8);
        self.crc_out.next = next.to_bits();
    }

    fn connect(&mut self) {
        self.crc_out.connect();
    }

    fn hdl(&self) -> Verilog {
        let m = Self::masks(8);
        let mut body = String::from("always @(*) begin\n");
        for i in 0..32 {
            // The state half of the initial value, a constant per bit.
            let init_bit = (crate::crc32::CRC32_INIT & m.state[i]).count_ones() & 1;
            body.push_str(&format!(
                "    crc_out[{i}] = (restart ? 1'b{init_bit} : ^(crc_in & 32'h{:08x})) ^ ^(data & 64'h{:016x});\n",
                m.state[i], m.data[i]
            ));
        }
        body.push_str("end\n");
        Verilog::Custom(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::format::CRC32;

    #[test]
    fn masks_reproduce_the_bytewise_update() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for bytes in 1..=8 {
            let m = Crc32Step::masks(bytes);
            for _ in 0..50 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let s = (x >> 17) as u32;
                let mut out = 0u32;
                for i in 0..32 {
                    let p = (s & m.state[i]).count_ones() + (x & m.data[i]).count_ones();
                    out |= (p & 1) << i;
                }
                assert_eq!(out, crc32_update(s, x, bytes), "bytes={bytes}");
            }
        }
    }

    #[test]
    fn update_matches_zlib_crc32() {
        let data = b"123456789abcdef";
        let mut c = !0u32;
        c = crc32_update(c, u64::from_le_bytes(data[..8].try_into().unwrap()), 8);
        let mut tail = [0u8; 8];
        tail[..7].copy_from_slice(&data[8..]);
        c = crc32_update(c, u64::from_le_bytes(tail), 7);
        assert_eq!(!c, CRC32.checksum(data));
    }
}
