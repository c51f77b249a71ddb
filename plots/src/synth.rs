//! Charts of `nic synth`: resources per block against a device's capacity, and Fmax per
//! block against the clock target, from `report.json` ([`SynthReport`]s) or a breakdown's
//! `breakdown.json` ([`BlockShare`]s, resources only). The device is a [`Device`]
//! (name and capacity), so one place says which part a report is for.

use crate::draw::{BarChart, BarSeries, Scale, Spread};
use crate::ChartError;
use nic_synth::{BlockShare, SynthReport};
use std::path::{Path, PathBuf};

pub const RESOURCES_SVG: &str = "synth-resources.svg";
pub const FMAX_SVG: &str = "synth-fmax.svg";

/// The part a synthesis ran for, as the charts name it and scale it.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    /// As written in titles (`iCE40 HX8K`).
    pub name: String,
    pub luts: u64,
    pub flip_flops: u64,
    pub block_rams: u64,
    /// The block RAM primitive's name (`RAM4K`).
    pub block_ram_name: String,
}

impl Device {
    /// A `nic synth` target, with the capacity `nic_synth::device` gives it.
    pub fn of(device: nic_synth::Device) -> Self {
        let c = device.capacity();
        Device {
            name: device.part().into(),
            luts: c.luts,
            flip_flops: c.flip_flops,
            block_rams: c.block_rams,
            block_ram_name: device.block_ram_name().into(),
        }
    }

    /// The iCE40 HX8K: 7680 logic cells (a LUT4 and a flip-flop each), 32 RAM4K.
    pub fn hx8k() -> Self {
        Self::of(nic_synth::Device::Hx8k)
    }
}

fn percent(v: f64) -> String {
    format!("{v:.1}%")
}

fn mhz(v: f64) -> String {
    format!("{v:.1} MHz")
}

/// Bars of LUTs, flip-flops and block RAMs per block, in percent of the device's.
fn resources(
    title: String,
    device: &Device,
    rows: Vec<(String, u64, u64, u64)>,
) -> Result<BarChart, ChartError> {
    if rows.is_empty() {
        return Err(ChartError::Empty(
            "the synthesis report has no blocks".into(),
        ));
    }
    let share = |n: u64, of: u64| Some(Spread::one(100.0 * n as f64 / of.max(1) as f64));
    let series = |name: String, f: &dyn Fn(&(String, u64, u64, u64)) -> Option<Spread>| BarSeries {
        name,
        values: rows.iter().map(f).collect(),
        notes: vec![None; rows.len()],
    };
    Ok(BarChart {
        title,
        value_label: format!("share of the {}, percent", device.name),
        scale: Scale::Linear,
        rows: rows.iter().map(|r| r.0.clone()).collect(),
        series: vec![
            series(format!("LUTs (of {})", device.luts), &|r| {
                share(r.1, device.luts)
            }),
            series(format!("flip-flops (of {})", device.flip_flops), &|r| {
                share(r.2, device.flip_flops)
            }),
            series(
                format!(
                    "{} block RAMs (of {})",
                    device.block_ram_name, device.block_rams
                ),
                &|r| share(r.3, device.block_rams),
            ),
        ],
        reference: Some(("device capacity (100%)".into(), 100.0)),
        value_format: percent,
    })
}

/// Resources per block of `nic synth`'s report against the device's capacity.
pub fn resources_chart(reports: &[SynthReport], device: &Device) -> Result<BarChart, ChartError> {
    resources(
        format!(
            "Resources per block, each synthesised alone ({})",
            device.name
        ),
        device,
        reports
            .iter()
            .map(|r| (r.module.clone(), r.luts, r.flip_flops, r.block_rams))
            .collect(),
    )
}

/// Resources per block of a top's breakdown against the device's capacity.
pub fn breakdown_chart(
    top: &str,
    rows: &[BlockShare],
    device: &Device,
) -> Result<BarChart, ChartError> {
    resources(
        format!("Resources per block inside {top} ({})", device.name),
        device,
        rows.iter()
            .map(|r| (r.instance.clone(), r.luts, r.flip_flops, r.block_rams))
            .collect(),
    )
}

/// Fmax per block against the target (a block that does not fit: no bar, a note).
pub fn fmax_chart(reports: &[SynthReport], device: &Device) -> Result<BarChart, ChartError> {
    if reports.is_empty() {
        return Err(ChartError::Empty(
            "the synthesis report has no blocks".into(),
        ));
    }
    let target = reports.iter().map(|r| r.target_mhz).fold(0.0, f64::max);
    Ok(BarChart {
        title: format!(
            "Fmax per block inside its timing wrapper (nextpnr, {})",
            device.name
        ),
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

/// The device of `nic synth`'s reports (the first report's; a report.json written before
/// reports named their device reads as the HX8K's).
pub fn device_of(reports: &[SynthReport]) -> Device {
    reports
        .first()
        .map_or_else(Device::hx8k, |r| Device::of(r.device))
}

/// Writes both charts of `reports` into `dir`; returns their paths.
pub fn write_synth(reports: &[SynthReport], dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    let device = device_of(reports);
    let (r, f) = (dir.join(RESOURCES_SVG), dir.join(FMAX_SVG));
    resources_chart(reports, &device)?.write_svg(&r)?;
    fmax_chart(reports, &device)?.write_svg(&f)?;
    Ok(vec![r, f])
}
