//! Simulation times in femtoseconds, as given on the command line and as printed.

use crate::WaveError;

/// Femtoseconds per unit, finest first.
const UNITS: [(&str, u64); 6] = [
    ("fs", 1),
    ("ps", 1_000),
    ("ns", 1_000_000),
    ("us", 1_000_000_000),
    ("ms", 1_000_000_000_000),
    ("s", 1_000_000_000_000_000),
];

/// Femtoseconds per tick of a file whose timescale is `10^exponent` seconds times
/// `multiplier`; `None` when a tick is finer than 1 fs or does not fit.
pub fn fs_per_tick(multiplier: u64, exponent: i32) -> Option<u64> {
    // 1 s = 10^15 fs.
    let shift = exponent + 15;
    if shift < 0 {
        return None;
    }
    10u64
        .checked_pow(shift as u32)
        .and_then(|p| p.checked_mul(multiplier))
}

/// Parse a time such as `1500`, `1500ps`, `2.5ns`, `10 us` into femtoseconds.
/// A number without a unit is in picoseconds (the unit both simulators write).
pub fn parse_time(text: &str) -> Result<u64, WaveError> {
    let bad = |why: &str| WaveError::BadArgument {
        message: format!("time `{text}`: {why} (examples: 1500, 1500ps, 2.5ns, 10us)"),
    };
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (number, unit) = (t[..split].replace('_', ""), t[split..].trim());
    if number.is_empty() {
        return Err(bad("no number"));
    }
    let scale = if unit.is_empty() {
        1_000
    } else {
        UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, fs)| *fs)
            .ok_or_else(|| bad(&format!("unknown unit `{unit}`")))?
    };
    let (whole, frac) = number.split_once('.').unwrap_or((&number, ""));
    if frac.contains('.') {
        return Err(bad("more than one decimal point"));
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad("not a number"))?
    };
    let mut fs = whole.checked_mul(scale).ok_or_else(|| bad("too large"))?;
    let mut place = scale;
    for digit in frac.chars() {
        place /= 10;
        let d = digit.to_digit(10).ok_or_else(|| bad("not a number"))? as u64;
        if d != 0 && place == 0 {
            return Err(bad("finer than a femtosecond"));
        }
        fs = fs.checked_add(d * place).ok_or_else(|| bad("too large"))?;
    }
    Ok(fs)
}

/// The unit a listing prints its times in: picoseconds, or femtoseconds when the file's
/// resolution is finer than a picosecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeUnit {
    name: &'static str,
    fs: u64,
}

impl TimeUnit {
    /// Picoseconds.
    pub const PS: TimeUnit = TimeUnit {
        name: "ps",
        fs: 1_000,
    };
    /// Femtoseconds.
    pub const FS: TimeUnit = TimeUnit { name: "fs", fs: 1 };

    /// `ps` for a resolution of whole picoseconds, else `fs`.
    pub fn for_resolution(fs_per_tick: u64) -> TimeUnit {
        if fs_per_tick.is_multiple_of(1_000) {
            TimeUnit::PS
        } else {
            TimeUnit::FS
        }
    }

    /// The unit's symbol.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// A time in femtoseconds as a number of this unit (exact when the resolution
    /// chose the unit; otherwise with up to three decimals).
    pub fn format(self, fs: u64) -> String {
        if fs.is_multiple_of(self.fs) {
            (fs / self.fs).to_string()
        } else {
            let frac = fs % self.fs;
            format!("{}.{frac:03}", fs / self.fs)
                .trim_end_matches('0')
                .to_string()
        }
    }
}

/// A time in femtoseconds in the largest unit that shows it exactly: `1500 ps`, `2 ns`.
pub fn format_time(fs: u64) -> String {
    if fs == 0 {
        return "0".to_string();
    }
    let (name, per) = UNITS
        .iter()
        .rev()
        .find(|(_, per)| fs.is_multiple_of(*per))
        .copied()
        .unwrap_or(("fs", 1));
    format!("{} {name}", fs / per)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_with_and_without_units() {
        assert_eq!(parse_time("1500").unwrap(), 1_500_000);
        assert_eq!(parse_time("1500ps").unwrap(), 1_500_000);
        assert_eq!(parse_time("2.5ns").unwrap(), 2_500_000);
        assert_eq!(parse_time("10 us").unwrap(), 10_000_000_000);
        assert_eq!(parse_time("3fs").unwrap(), 3);
        assert_eq!(parse_time("1_000").unwrap(), 1_000_000);
        for bad in [
            "",
            "ns",
            "5 parsecs",
            "1.2.3ns",
            "0.5fs",
            "99999999999999999999s",
        ] {
            let err = parse_time(bad).unwrap_err().to_string();
            assert!(err.contains(&format!("time `{bad}`")), "{err}");
        }
    }

    #[test]
    fn formatting() {
        assert_eq!(format_time(2_000_000), "2 ns");
        assert_eq!(format_time(1_500_000), "1500 ps");
        assert_eq!(TimeUnit::PS.format(1_500_000), "1500");
        assert_eq!(TimeUnit::PS.format(1_500_500), "1500.5");
        assert_eq!(fs_per_tick(1, -12), Some(1_000));
        assert_eq!(fs_per_tick(100, -15), Some(100));
        assert_eq!(fs_per_tick(1, -18), None);
    }
}
