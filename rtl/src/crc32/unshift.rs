//! `Crc32Unshift`: removes trailing zero bytes from a raw CRC-32 register.
//!
//! A word with fewer than 8 valid bytes is absorbed zero-padded; processing a zero byte
//! multiplies the raw register by an invertible GF(2) matrix `Z`, so multiplying by
//! `Z^-pad` gives the CRC of the unpadded bytes. Built as a selection among the seven
//! matrices `Z^-1 .. Z^-7` (each output bit the parity of at most 32 register bits): about
//! 770 iCE40 LUTs and five logic levels. (Three chained stages `Z^-1`, `Z^-2`, `Z^-4` cost
//! only 360 LUTs but seven levels, 82 MHz on HX8K.) Emitted as `Verilog::Custom` from the
//! same masks the simulation is checked against ([`Crc32Unshift::stage_masks`]).
//!
//! Ports: `crc_in` (in, 32, raw register), `pad` (in, 3, zero bytes to remove),
//! `crc_out` (out, 32, raw register). Latency: combinational.

use crate::crc32::step::byte_table;
use rust_hdl::prelude::*;

/// Undo one zero byte: the inverse of `c -> (c >> 8) ^ T[c & 0xFF]`.
pub fn crc32_unshift_byte(c: u32) -> u32 {
    // The top byte of T[i] is a permutation of i, so it identifies the low byte of c.
    const INV_TOP: [u8; 256] = {
        let t = byte_table();
        let mut inv = [0u8; 256];
        let mut i = 0;
        while i < 256 {
            inv[(t[i] >> 24) as usize] = i as u8;
            i += 1;
        }
        inv
    };
    let low = INV_TOP[(c >> 24) as usize] as u32;
    ((c ^ byte_table()[low as usize]) << 8) | low
}

/// Undo `pad` zero bytes.
pub fn crc32_unshift(c: u32, pad: usize) -> u32 {
    (0..pad).fold(c, |c, _| crc32_unshift_byte(c))
}

#[derive(LogicBlock, Default)]
pub struct Crc32Unshift {
    pub crc_in: Signal<In, Bits<32>>,
    pub pad: Signal<In, Bits<3>>,
    pub crc_out: Signal<Out, Bits<32>>,
}

impl Crc32Unshift {
    /// Row masks of `Z^-k`: bit `i` of the result is the parity of `crc & masks[i]`.
    pub fn stage_masks(k: usize) -> [u32; 32] {
        let mut rows = [0u32; 32];
        for j in 0..32 {
            let col = crc32_unshift(1 << j, k);
            for (i, row) in rows.iter_mut().enumerate() {
                if col >> i & 1 != 0 {
                    *row |= 1 << j;
                }
            }
        }
        rows
    }
}

impl Logic for Crc32Unshift {
    fn update(&mut self) {
        let out = crc32_unshift(self.crc_in.val().to_u32(), self.pad.val().index());
        self.crc_out.next = out.to_bits();
    }

    fn connect(&mut self) {
        self.crc_out.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut v =
            String::from("always @(*) begin\n    case (pad)\n        3'd0: crc_out = crc_in;\n");
        for k in 1..=7usize {
            let m = Self::stage_masks(k);
            v.push_str(&format!("        3'd{k}: begin\n"));
            for (i, mask) in m.iter().enumerate() {
                v.push_str(&format!(
                    "            crc_out[{i}] = ^(crc_in & 32'h{mask:08x});\n"
                ));
            }
            v.push_str("        end\n");
        }
        v.push_str("    endcase\nend\n");
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crc32::step::crc32_update;

    #[test]
    fn unshift_inverts_zero_bytes() {
        let mut x = 0x9e37_79b9u32;
        for pad in 0..8 {
            x = x.wrapping_mul(0x0101_0101).wrapping_add(0x7f4a_7c15);
            assert_eq!(crc32_unshift(crc32_update(x, 0, pad), pad), x);
        }
    }

    #[test]
    fn stage_masks_match_the_function() {
        for k in 1..8 {
            let m = Crc32Unshift::stage_masks(k);
            let x = 0xdead_beefu32;
            let mut out = 0;
            for (i, mask) in m.iter().enumerate() {
                out |= ((x & mask).count_ones() & 1) << i;
            }
            assert_eq!(out, crc32_unshift(x, k));
        }
    }
}
