//! Values as a person reads them in a table or a diagram: bits as `0`/`1`, buses in hex.

use crate::value::Value;

/// `0`, `1`, `x` or `z` for one bit; hex digits for a bus (`3f`), where a digit whose
/// four bits are all `x` (all `z`) is `x` (`z`) and a digit with some unknown bits is
/// `X` (`Z` if they are all `z`); reals and strings as they are.
pub fn short(v: &Value) -> String {
    let bits = v.bits();
    if v.width() <= 1 || !bits.chars().all(|c| matches!(c, '0' | '1' | 'x' | 'z')) {
        return bits;
    }
    if let Some(words) = v.words() {
        let mut s = String::new();
        let top = words.iter().rposition(|w| *w != 0).unwrap_or(0);
        s.push_str(&format!("{:x}", words[top]));
        for w in words[..top].iter().rev() {
            s.push_str(&format!("{w:016x}"));
        }
        return s;
    }
    let chars: Vec<char> = bits.chars().collect();
    let pad = (4 - chars.len() % 4) % 4;
    let padded: Vec<char> = std::iter::repeat_n('0', pad).chain(chars).collect();
    padded
        .chunks(4)
        .map(|nibble| {
            if nibble.iter().all(|c| *c == 'x') {
                'x'
            } else if nibble.iter().all(|c| *c == 'z') {
                'z'
            } else if nibble.iter().all(|c| *c == 'x' || *c == 'z') && nibble.contains(&'z') {
                'Z'
            } else if nibble.iter().any(|c| *c == 'x' || *c == 'z') {
                'X'
            } else {
                let n = nibble.iter().fold(0u32, |a, c| a * 2 + (*c == '1') as u32);
                char::from_digit(n, 16).unwrap_or('?')
            }
        })
        .collect()
}

/// Characters [`short`] needs at most for a signal of `width` bits (strings and reals:
/// 12, longer ones widen the column's text, not the table).
pub fn max_chars(width: u32) -> usize {
    match width {
        0 => 12,
        1 => 1,
        w => (w as usize).div_ceil(4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Logic::{One, Zero, X, Z};

    #[test]
    fn hex_and_unknowns() {
        assert_eq!(short(&Value::from_u128(8, 0x3f)), "3f");
        assert_eq!(short(&Value::from_u128(1, 1)), "1");
        assert_eq!(short(&Value::from_logic(8, &[X; 8])), "xx");
        assert_eq!(
            short(&Value::from_logic(8, &[Z, Z, Z, Z, X, One, Zero, One])),
            "zX"
        );
        assert_eq!(
            short(&Value::from_logic(6, &[Zero, One, One, One, One, One])),
            "1f"
        );
        assert_eq!(short(&Value::text("Idle")), "Idle");
    }
}
