//! `NicConfig`: the elaboration parameters of [`crate::nic_top::NicTop`], their checks,
//! and the text form `nic verilog --config` takes (`queue_pairs=4,cell_payload=256,tpt_entries=256`).

use crate::cell::format::{check_cell_payload, DEFAULT_CELL_PAYLOAD, MAX_CELL_PAYLOAD};
use nic_abi::MAX_QUEUE_PAIRS;
use std::fmt;
use std::str::FromStr;

/// Smallest and largest hardware TPT.
pub const MIN_TPT_ENTRIES: usize = 16;
pub const MAX_TPT_ENTRIES: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NicConfig {
    /// Queue pairs (reliable connections), 1..=64.
    pub queue_pairs: usize,
    /// Payload bytes per cell, a multiple of 8 in 8..=1024.
    pub cell_payload: usize,
    /// Entries of the optional hardware TPT (a power of two, 16..=4096); `None`: no TPT,
    /// the responder trusts the physical address in the cell (source 000's design).
    pub tpt_entries: Option<usize>,
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            queue_pairs: 4,
            cell_payload: DEFAULT_CELL_PAYLOAD,
            tpt_entries: None,
        }
    }
}

impl NicConfig {
    /// The default configuration with a 256-entry TPT.
    pub fn with_tpt(entries: usize) -> Self {
        NicConfig {
            tpt_entries: Some(entries),
            ..Default::default()
        }
    }

    /// Check every parameter; the error names the parameter, its value and the range.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_QUEUE_PAIRS).contains(&self.queue_pairs) {
            return Err(format!(
                "queue_pairs must be 1..={MAX_QUEUE_PAIRS}, got {}",
                self.queue_pairs
            ));
        }
        if check_cell_payload(self.cell_payload).is_err() {
            return Err(format!(
                "cell_payload must be a multiple of 8 in 8..={MAX_CELL_PAYLOAD}, got {}",
                self.cell_payload
            ));
        }
        if let Some(n) = self.tpt_entries {
            if !n.is_power_of_two() || !(MIN_TPT_ENTRIES..=MAX_TPT_ENTRIES).contains(&n) {
                return Err(format!(
                    "tpt_entries must be a power of two in {MIN_TPT_ENTRIES}..={MAX_TPT_ENTRIES}, got {n}"
                ));
            }
        }
        Ok(())
    }

    /// Short name used for exported modules and files: `nic_top` for the default
    /// configuration, otherwise e.g. `nic_top_qp8_cp512_tpt256`.
    pub fn block_name(&self) -> String {
        let mut name = String::from("nic_top");
        let d = NicConfig::default();
        if self.queue_pairs != d.queue_pairs {
            name += &format!("_qp{}", self.queue_pairs);
        }
        if self.cell_payload != d.cell_payload {
            name += &format!("_cp{}", self.cell_payload);
        }
        if let Some(n) = self.tpt_entries {
            name += &format!("_tpt{n}");
        }
        name
    }
}

impl fmt::Display for NicConfig {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "queue_pairs={},cell_payload={},tpt_entries={}",
            self.queue_pairs,
            self.cell_payload,
            self.tpt_entries
                .map_or_else(|| "none".to_string(), |n| n.to_string())
        )
    }
}

impl FromStr for NicConfig {
    type Err = String;

    /// `key=value` pairs separated by commas; keys `queue_pairs`, `cell_payload`,
    /// `tpt_entries` (a number or `none`); missing keys keep their defaults.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut config = NicConfig::default();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("'{item}': expected key=value"))?;
            let (key, value) = (key.trim(), value.trim());
            let number = |v: &str| {
                v.parse::<usize>()
                    .map_err(|_| format!("{key}: '{v}' is not a number"))
            };
            match key {
                "queue_pairs" => config.queue_pairs = number(value)?,
                "cell_payload" => config.cell_payload = number(value)?,
                "tpt_entries" => {
                    config.tpt_entries = if value.eq_ignore_ascii_case("none") {
                        None
                    } else {
                        Some(number(value)?)
                    }
                }
                _ => {
                    return Err(format!(
                        "unknown key '{key}' (expected queue_pairs, cell_payload or tpt_entries)"
                    ))
                }
            }
        }
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        let c: NicConfig = "queue_pairs=8, tpt_entries=256".parse().unwrap();
        assert_eq!(c.queue_pairs, 8);
        assert_eq!(c.tpt_entries, Some(256));
        assert_eq!(c.cell_payload, DEFAULT_CELL_PAYLOAD);
        assert_eq!(c.to_string().parse::<NicConfig>().unwrap(), c);
        assert_eq!(c.block_name(), "nic_top_qp8_tpt256");
        assert_eq!(NicConfig::default().block_name(), "nic_top");
    }

    #[test]
    fn rejects_bad_values_naming_the_parameter() {
        for (text, needle) in [
            ("queue_pairs=0", "queue_pairs must be 1..=64, got 0"),
            ("queue_pairs=65", "queue_pairs"),
            ("cell_payload=12", "cell_payload must be a multiple of 8"),
            ("tpt_entries=100", "tpt_entries must be a power of two"),
            ("tpt_entries=8192", "tpt_entries"),
            ("colour=red", "unknown key 'colour'"),
            ("queue_pairs", "expected key=value"),
            ("queue_pairs=four", "queue_pairs: 'four' is not a number"),
        ] {
            let err = text.parse::<NicConfig>().unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
