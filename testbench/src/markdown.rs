//! Number formats of the Markdown tables the benches and the soak render for
//! docs/measurements.md (`nic measurements`).

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A rate or count to three significant figures with a k / M / G suffix: `967 k`,
/// `13.8 k`, `2.77 G`; below 1000 as it is (`326`).
pub fn si(x: f64) -> String {
    let (v, unit) = [(1e9, " G"), (1e6, " M"), (1e3, " k")]
        .into_iter()
        .find(|(scale, _)| x.abs() >= *scale)
        .map_or((x, ""), |(scale, unit)| (x / scale, unit));
    let decimals = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.decimals$}{unit}")
}

/// `median` with `decimals` and `unit`, then ` (min .. max)` unless the three are equal:
/// `6.0x (5.6 .. 8.0)`.
pub fn spread(min: f64, median: f64, max: f64, decimals: usize, unit: &str) -> String {
    let m = format!("{median:.decimals$}");
    if format!("{min:.decimals$}") == m && format!("{max:.decimals$}") == m {
        format!("{m}{unit}")
    } else {
        format!("{m}{unit} ({min:.decimals$} .. {max:.decimals$})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(125_861_080), "125,861,080");
        assert_eq!(si(967_302.0), "967 k");
        assert_eq!(si(13_778.0), "13.8 k");
        assert_eq!(si(2.77e9), "2.77 G");
        assert_eq!(si(326.0), "326");
        assert_eq!(spread(1.0, 1.0, 1.0, 2, ""), "1.00");
        assert_eq!(spread(0.82, 0.83, 0.88, 2, ""), "0.83 (0.82 .. 0.88)");
        assert_eq!(spread(5.58, 6.0, 8.0, 1, "x"), "6.0x (5.6 .. 8.0)");
    }
}
