//! A block's ports packed into one bit vector, as a Verilog concatenation of them
//! (`{p0, p1, …, pn}`: the first port in the most significant bits), and that vector as
//! hexadecimal text (what `$readmemh` reads into a `reg [W-1:0]`).

use crate::{PortInfo, PortStruct};

/// Total width of `ports`, in bits.
pub fn total_width(ports: &[PortInfo]) -> usize {
    ports.iter().map(|p| p.width).sum()
}

/// Hex digits of a value `width` bits wide (at least one).
pub fn hex_digits(width: usize) -> usize {
    width.div_ceil(4).max(1)
}

/// Copy the low `width` bits of `words` into `bits` at bit `offset`.
fn put(bits: &mut [u64], offset: usize, words: &[u64], width: usize) {
    for i in 0..width {
        let bit = words.get(i / 64).map_or(0, |w| (w >> (i % 64)) & 1);
        let at = offset + i;
        bits[at / 64] |= bit << (at % 64);
    }
}

/// `width` bits of `bits` from bit `offset`, as little-endian words.
fn take(bits: &[u64], offset: usize, width: usize) -> Vec<u64> {
    let mut words = vec![0u64; width.div_ceil(64).max(1)];
    for i in 0..width {
        let at = offset + i;
        let bit = (bits[at / 64] >> (at % 64)) & 1;
        words[i / 64] |= bit << (i % 64);
    }
    words
}

/// `value`'s ports concatenated, first port most significant, as hex digits.
pub fn to_hex<P: PortStruct>(value: &P) -> String {
    let width = total_width(P::PORTS);
    let mut bits = vec![0u64; width.div_ceil(64).max(1)];
    let mut offset = 0;
    for (index, port) in P::PORTS.iter().enumerate().rev() {
        put(&mut bits, offset, &value.port_words(index), port.width);
        offset += port.width;
    }
    (0..hex_digits(width))
        .rev()
        .map(|d| {
            let nibble = (bits[d * 4 / 64] >> (d * 4 % 64)) & 0xf;
            char::from_digit(nibble as u32, 16).unwrap_or('0')
        })
        .collect()
}

/// The inverse of [`to_hex`]: the text must have exactly the digits `to_hex` writes.
pub fn from_hex<P: PortStruct>(text: &str) -> Result<P, String> {
    let width = total_width(P::PORTS);
    let digits = hex_digits(width);
    if text.len() != digits {
        return Err(format!(
            "expected {digits} hex digits ({width} bits of inputs), found {}",
            text.len()
        ));
    }
    let mut bits = vec![0u64; (digits * 4).div_ceil(64)];
    for (d, c) in text.chars().rev().enumerate() {
        let nibble = c
            .to_digit(16)
            .ok_or_else(|| format!("`{c}` is not a hex digit"))?;
        bits[d * 4 / 64] |= (nibble as u64) << (d * 4 % 64);
    }
    let mut value = P::default();
    let mut offset = 0;
    for (index, port) in P::PORTS.iter().enumerate().rev() {
        value.set_port_words(index, &take(&bits, offset, port.width));
        offset += port.width;
    }
    Ok(value)
}

/// Port `index` of `value` as a Verilog-style hex literal of its width (`0x1f`).
pub fn port_hex<P: PortStruct>(value: &P, index: usize) -> String {
    let width = P::PORTS.get(index).map_or(1, |p| p.width);
    let words = value.port_words(index);
    let digits = hex_digits(width);
    let text: String = (0..digits)
        .rev()
        .map(|d| {
            let nibble = words
                .get(d * 4 / 64)
                .map_or(0, |w| (w >> (d * 4 % 64)) & 0xf);
            char::from_digit(nibble as u32, 16).unwrap_or('0')
        })
        .collect();
    format!("0x{text}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CosimSelftestInputs;
    use rand::SeedableRng;

    #[test]
    fn hex_round_trips_every_port_width() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..200 {
            let v = CosimSelftestInputs::random(&mut rng);
            let text = to_hex(&v);
            assert_eq!(text.len(), hex_digits(1 + 1 + 7 + 33 + 100 + 128));
            assert_eq!(from_hex::<CosimSelftestInputs>(&text), Ok(v));
        }
    }

    #[test]
    fn the_first_port_is_most_significant() {
        let v = CosimSelftestInputs {
            s_flag: true,
            ..Default::default()
        };
        // 270 bits: the top digit holds bits 269..268; s_flag is bit 269.
        assert!(to_hex(&v).starts_with('2'), "{}", to_hex(&v));
        let w = CosimSelftestInputs {
            s_full: [1, 0],
            ..Default::default()
        };
        assert!(to_hex(&w).ends_with("0001"));
        assert_eq!(port_hex(&w, 5), format!("0x{}1", "0".repeat(31)));
    }

    #[test]
    fn bad_text_is_an_error() {
        assert!(from_hex::<CosimSelftestInputs>("12").is_err());
        let digits = hex_digits(270);
        let bad = format!("x{}", "0".repeat(digits - 1));
        assert!(from_hex::<CosimSelftestInputs>(&bad)
            .unwrap_err()
            .contains("not a hex digit"));
    }
}
