//! Values of signals read from a VCD file.

use std::fmt;

/// One bit of four-valued logic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Logic {
    /// Logic low.
    Zero,
    /// Logic high.
    One,
    /// Unknown (`x`).
    X,
    /// High impedance (`z`).
    Z,
}

impl Logic {
    /// The VCD character: `0`, `1`, `x` or `z`.
    pub fn as_char(self) -> char {
        match self {
            Logic::Zero => '0',
            Logic::One => '1',
            Logic::X => 'x',
            Logic::Z => 'z',
        }
    }

    pub(crate) fn from_vcd(v: vcd::Value) -> Logic {
        match v {
            vcd::Value::V0 => Logic::Zero,
            vcd::Value::V1 => Logic::One,
            vcd::Value::X => Logic::X,
            vcd::Value::Z => Logic::Z,
        }
    }
}

/// The value of a signal over one interval of time.
///
/// Vectors of up to 128 bits with no `x`/`z` are held inline as a `u128`; wider
/// two-state vectors as 64-bit words; anything with an `x` or `z` bit bit by bit.
/// `real` and `string` changes (RustHDL writes enum states as strings) are kept too.
///
/// Equality (`==`) includes the width; [`Value::same_as`] compares numbers only, which
/// is what a comparison between two simulators wants.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    width: u32,
    repr: Repr,
}

#[derive(Clone, Debug, PartialEq)]
enum Repr {
    /// Width ≤ 128, every bit 0 or 1.
    Narrow(u128),
    /// Width > 128, every bit 0 or 1; little-endian 64-bit words.
    Wide(Box<[u64]>),
    /// At least one `x` or `z`; most significant bit first, `width` entries.
    FourState(Box<[Logic]>),
    Real(f64),
    Text(Box<str>),
}

impl Value {
    /// A two-state value of `width` bits (≤ 128). Bits above `width` must be zero.
    ///
    /// # Panics
    /// When `width` is 0 or above 128, or `bits` does not fit in `width` bits.
    pub fn from_u128(width: u32, bits: u128) -> Value {
        assert!(
            (1..=128).contains(&width),
            "Value::from_u128: width must be 1..=128, got {width}"
        );
        assert!(
            width == 128 || bits >> width == 0,
            "Value::from_u128: {bits:#x} does not fit in {width} bits"
        );
        Value {
            width,
            repr: Repr::Narrow(bits),
        }
    }

    /// A real (`r1.5 !`) value.
    pub fn real(v: f64) -> Value {
        Value {
            width: 64,
            repr: Repr::Real(v),
        }
    }

    /// A string (`sIDLE !`) value; RustHDL writes enum-typed signals this way.
    pub fn text(s: &str) -> Value {
        Value {
            width: 0,
            repr: Repr::Text(s.into()),
        }
    }

    /// A vector given most significant bit first, extended on the left to `width` as
    /// VCD says: with `x` or `z` if the leftmost given bit is `x` or `z`, else with 0.
    /// A `width` of 0 takes the length of `bits`.
    pub fn from_logic(width: u32, bits: &[Logic]) -> Value {
        let width = if width == 0 { bits.len() as u32 } else { width };
        let fill = match bits.first() {
            Some(Logic::X) => Logic::X,
            Some(Logic::Z) => Logic::Z,
            _ => Logic::Zero,
        };
        let pad = (width as usize).saturating_sub(bits.len());
        // Longer than the width: keep the least significant `width` bits.
        let bits = &bits[bits.len().saturating_sub(width as usize)..];
        let four_state = bits.iter().any(|b| matches!(b, Logic::X | Logic::Z))
            || (pad > 0 && fill != Logic::Zero);
        if four_state {
            let mut all = Vec::with_capacity(width as usize);
            all.extend(std::iter::repeat_n(fill, pad));
            all.extend_from_slice(bits);
            return Value {
                width,
                repr: Repr::FourState(all.into()),
            };
        }
        if width <= 128 {
            let mut v = 0u128;
            for b in bits {
                v = (v << 1) | (*b == Logic::One) as u128;
            }
            Value {
                width,
                repr: Repr::Narrow(v),
            }
        } else {
            let mut words = vec![0u64; (width as usize).div_ceil(64)];
            for (i, b) in bits.iter().rev().enumerate() {
                if *b == Logic::One {
                    words[i / 64] |= 1 << (i % 64);
                }
            }
            Value {
                width,
                repr: Repr::Wide(words.into()),
            }
        }
    }

    /// Width in bits as declared (64 for reals, 0 for strings).
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The value as a number, or `None` when any bit is `x`/`z`, the value does not fit
    /// in 128 bits, or it is a real or a string.
    pub fn as_u128(&self) -> Option<u128> {
        match &self.repr {
            Repr::Narrow(v) => Some(*v),
            Repr::Wide(words) => {
                if words[2..].iter().any(|w| *w != 0) {
                    None
                } else {
                    Some(words[0] as u128 | (words[1] as u128) << 64)
                }
            }
            _ => None,
        }
    }

    /// The value as a `u64`, or `None` as for [`Value::as_u128`] or when it does not fit.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_u128().and_then(|v| u64::try_from(v).ok())
    }

    /// `Some(false)` for 0, `Some(true)` for any other known number, `None` otherwise.
    pub fn as_bool(&self) -> Option<bool> {
        self.words().map(|w| w.iter().any(|x| *x != 0))
    }

    /// Two-state value as little-endian 64-bit words (any width), or `None` when any bit
    /// is `x`/`z` or it is a real or string.
    pub fn words(&self) -> Option<Vec<u64>> {
        match &self.repr {
            Repr::Narrow(v) => Some(vec![*v as u64, (*v >> 64) as u64]),
            Repr::Wide(w) => Some(w.to_vec()),
            _ => None,
        }
    }

    /// True for a string value (RustHDL's enum states).
    pub fn is_text(&self) -> bool {
        matches!(self.repr, Repr::Text(_))
    }

    /// True when no bit is `x` or `z` (reals and strings count as known).
    pub fn is_known(&self) -> bool {
        !matches!(self.repr, Repr::FourState(_))
    }

    /// The bits most significant first as `0`/`1`/`x`/`z`, `width` characters; a real
    /// or a string is formatted as itself.
    pub fn bits(&self) -> String {
        match &self.repr {
            Repr::Narrow(v) => (0..self.width)
                .rev()
                .map(|i| if (v >> i) & 1 == 1 { '1' } else { '0' })
                .collect(),
            Repr::Wide(words) => (0..self.width as usize)
                .rev()
                .map(|i| {
                    if (words[i / 64] >> (i % 64)) & 1 == 1 {
                        '1'
                    } else {
                        '0'
                    }
                })
                .collect(),
            Repr::FourState(bits) => bits.iter().map(|b| b.as_char()).collect(),
            Repr::Real(r) => r.to_string(),
            Repr::Text(t) => t.to_string(),
        }
    }

    /// Whether two values are the same number regardless of declared width (`4'h3` is
    /// the same as `64'h3`); four-state values are compared bit by bit after the
    /// shorter is extended; reals and strings compare equal only to their own kind.
    pub fn same_as(&self, other: &Value) -> bool {
        if let (Some(a), Some(b)) = (self.words(), other.words()) {
            let n = a.len().max(b.len());
            return (0..n).all(|i| a.get(i).unwrap_or(&0) == b.get(i).unwrap_or(&0));
        }
        match (&self.repr, &other.repr) {
            (Repr::Real(a), Repr::Real(b)) => a == b,
            (Repr::Text(a), Repr::Text(b)) => a == b,
            (Repr::Real(_) | Repr::Text(_), _) | (_, Repr::Real(_) | Repr::Text(_)) => false,
            _ => {
                let (a, b) = (self.bits(), other.bits());
                let n = a.len().max(b.len());
                let pad = |s: &str| format!("{}{s}", "0".repeat(n - s.len()));
                pad(&a) == pad(&b)
            }
        }
    }
}

/// Verilog literal style: `4'h5`, `1'b1`, `8'b0000xx01`, `1.5`, `"IDLE"`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Narrow(v) if self.width == 1 => write!(f, "1'b{v}"),
            Repr::Narrow(v) => write!(f, "{}'h{v:x}", self.width),
            Repr::Wide(words) => {
                write!(f, "{}'h", self.width)?;
                let top = words.iter().rposition(|w| *w != 0).unwrap_or(0);
                write!(f, "{:x}", words[top])?;
                for w in words[..top].iter().rev() {
                    write!(f, "{w:016x}")?;
                }
                Ok(())
            }
            Repr::FourState(_) => write!(f, "{}'b{}", self.width, self.bits()),
            Repr::Real(r) => write!(f, "{r}"),
            Repr::Text(t) => write!(f, "{t:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Logic::*;

    #[test]
    fn narrow_and_extension() {
        let v = Value::from_logic(8, &[One, Zero, One]);
        assert_eq!(v.as_u128(), Some(5));
        assert_eq!(v.bits(), "00000101");
        assert_eq!(v.to_string(), "8'h5");
        let x = Value::from_logic(4, &[X, One]);
        assert_eq!(x.bits(), "xxx1");
        assert_eq!(x.as_u128(), None);
        assert!(!x.is_known());
        assert_eq!(x.to_string(), "4'bxxx1");
        assert_eq!(Value::from_logic(1, &[One]).to_string(), "1'b1");
    }

    #[test]
    fn wide_values() {
        let mut bits = vec![Zero; 200];
        bits[0] = One; // bit 199
        bits[199] = One; // bit 0
        let v = Value::from_logic(200, &bits);
        assert_eq!(v.as_u128(), None);
        assert_eq!(v.words().unwrap(), vec![1, 0, 0, 1 << (199 - 192)]);
        assert_eq!(v.bits().len(), 200);
        let small = Value::from_logic(200, &[One, One]);
        assert_eq!(small.as_u128(), Some(3));
        assert!(small.same_as(&Value::from_u128(2, 3)));
        assert_eq!(small.to_string(), "200'h3");
    }

    #[test]
    fn same_as_ignores_width() {
        assert!(Value::from_u128(4, 3).same_as(&Value::from_u128(64, 3)));
        assert!(!Value::from_u128(4, 3).same_as(&Value::from_u128(4, 2)));
        assert_ne!(Value::from_u128(4, 3), Value::from_u128(64, 3));
        assert!(!Value::text("IDLE").same_as(&Value::from_u128(1, 0)));
    }

    #[test]
    #[should_panic(expected = "does not fit in 4 bits")]
    fn from_u128_checks_fit() {
        Value::from_u128(4, 16);
    }
}
