//! Charts of `nic synth`: resources per block against the iCE40 HX8K's capacity, and Fmax
//! per block against the clock target, from `report.json` ([`SynthReport`]s) or a
//! breakdown's `breakdown.json` ([`BlockShare`]s, resources only).

use crate::draw::{BarChart, BarSeries, Scale, Spread};
use crate::ChartError;
use nic_synth::breakdown::{HX8K_BLOCK_RAMS, HX8K_LOGIC_CELLS};
use nic_synth::{BlockShare, SynthReport};
use std::path::{Path, PathBuf};

pub const RESOURCES_SVG: &str = "synth-resources.svg";
pub const FMAX_SVG: &str = "synth-fmax.svg";

fn percent(v: f64) -> String {
    format!("{v:.1}%")
}

fn mhz(v: f64) -> String {
    format!("{v:.1} MHz")
}

/// Bars of LUTs, flip-flops and block RAMs per block, in percent of the HX8K's.
fn resources(title: String, rows: Vec<(String, u64, u64, u64)>) -> Result<BarChart, ChartError> {
    if rows.is_empty() {
        return Err(ChartError::Empty(
            "the synthesis report has no blocks".into(),
        ));
    }
    let share = |n: u64, of: u64| Some(Spread::one(100.0 * n as f64 / of as f64));
    let series = |name: &str, f: &dyn Fn(&(String, u64, u64, u64)) -> Option<Spread>| BarSeries {
        name: name.into(),
        values: rows.iter().map(f).collect(),
        notes: vec![None; rows.len()],
    };
    Ok(BarChart {
        title,
        value_label: "share of the iCE40 HX8K, percent".into(),
        scale: Scale::Linear,
        rows: rows.iter().map(|r| r.0.clone()).collect(),
        series: vec![
            series(&format!("LUTs (of {HX8K_LOGIC_CELLS})"), &|r| {
                share(r.1, HX8K_LOGIC_CELLS)
            }),
            series(&format!("flip-flops (of {HX8K_LOGIC_CELLS})"), &|r| {
                share(r.2, HX8K_LOGIC_CELLS)
            }),
            series(&format!("RAM4K block RAMs (of {HX8K_BLOCK_RAMS})"), &|r| {
                share(r.3, HX8K_BLOCK_RAMS)
            }),
        ],
        reference: Some(("device capacity (100%)".into(), 100.0)),
        value_format: percent,
    })
}

/// Resources per block of `nic synth`'s report against the HX8K's capacity.
pub fn resources_chart(reports: &[SynthReport]) -> Result<BarChart, ChartError> {
    resources(
        "Resources per block, each synthesised alone (iCE40 HX8K)".into(),
        reports
            .iter()
            .map(|r| (r.module.clone(), r.luts, r.flip_flops, r.block_rams))
            .collect(),
    )
}

/// Resources per block of a top's breakdown against the HX8K's capacity.
pub fn breakdown_chart(top: &str, rows: &[BlockShare]) -> Result<BarChart, ChartError> {
    resources(
        format!("Resources per block inside {top} (iCE40 HX8K)"),
        rows.iter()
            .map(|r| (r.instance.clone(), r.luts, r.flip_flops, r.block_rams))
            .collect(),
    )
}

/// Fmax per block against the target (a block that does not fit: no bar, a note).
pub fn fmax_chart(reports: &[SynthReport]) -> Result<BarChart, ChartError> {
    if reports.is_empty() {
        return Err(ChartError::Empty(
            "the synthesis report has no blocks".into(),
        ));
    }
    let target = reports.iter().map(|r| r.target_mhz).fold(0.0, f64::max);
    Ok(BarChart {
        title: "Fmax per block inside its timing wrapper (nextpnr, iCE40 HX8K)".into(),
        value_label: "Fmax, MHz".into(),
        scale: Scale::Linear,
        rows: reports.iter().map(|r| r.module.clone()).collect(),
        series: vec![BarSeries {
            name: "Fmax".into(),
            values: reports
                .iter()
                .map(|r| r.does_not_fit.is_none().then_some(Spread::one(r.fmax_mhz)))
                .collect(),
            notes: reports
                .iter()
                .map(|r| r.does_not_fit.is_some().then(|| r.fmax_text()))
                .collect(),
        }],
        reference: Some((format!("target {}", mhz(target)), target)),
        value_format: mhz,
    })
}

/// Writes both charts of `reports` into `dir`; returns their paths.
pub fn write_synth(reports: &[SynthReport], dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    let (r, f) = (dir.join(RESOURCES_SVG), dir.join(FMAX_SVG));
    resources_chart(reports)?.write_svg(&r)?;
    fmax_chart(reports)?.write_svg(&f)?;
    Ok(vec![r, f])
}
