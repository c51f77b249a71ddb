//! Charts of the benches: the figures each bench's result struct (or its JSON) holds,
//! mapped onto [`LineChart`]s and [`BarChart`]s.
//!
//! | file | from | what |
//! | --- | --- | --- |
//! | [`SPEED_SVG`] | `bench datapath`, `bench nic` | cycles/s per backend (log) |
//! | [`REJOIN_LATENCY_SVG`] | `bench rejoin` | host 1's rejoin latency against host count, per mode, min..median..max over seeds |
//! | [`REJOIN_STALE_SVG`] | `bench rejoin` | stale writes landed per mode and size (memory verdict) |
//! | [`GOODPUT_SVG`] | `bench pools`, `bench nic --sizes` | payload bytes per cycle against message size |
//! | [`MESSAGE_RATE_SVG`] | `bench pools`, `bench nic --sizes` | messages per 1000 cycles against message size |
//! | [`REGCACHE_SVG`] | `bench regcache` | cycles and registrations per seed, with and without the cache |

use crate::draw::{number, BarChart, BarSeries, LineChart, LineSeries, Scale, Spread};
use crate::ChartError;
use nic_testbench::bench::DatapathBench;
use nic_testbench::nic_bench::NicBench;
use nic_testbench::pools_bench::PoolsBenchRow;
use nic_testbench::regcache_bench::RegcacheBenchReport;
use nic_testbench::rejoin_bench::{BenchResult, ModeKind};
use std::path::{Path, PathBuf};

pub const SPEED_SVG: &str = "speed.svg";
pub const REJOIN_LATENCY_SVG: &str = "rejoin-latency.svg";
pub const REJOIN_STALE_SVG: &str = "rejoin-stale-writes.svg";
pub const GOODPUT_SVG: &str = "goodput.svg";
pub const MESSAGE_RATE_SVG: &str = "message-rate.svg";
pub const REGCACHE_SVG: &str = "regcache.svg";

/// Simulation speed per backend: a row per bench given, a bar per backend.
pub fn speed_chart(datapath: Option<&DatapathBench>, nic: Option<&NicBench>) -> BarChart {
    let mut rows = vec![];
    let (mut verilator, mut rusthdl, mut system) = (vec![], vec![], vec![]);
    if let Some(d) = datapath {
        rows.push(format!("cell datapath ({} cycles)", d.cycles));
        verilator.push(Some(Spread::one(d.verilator_cycles_per_s)));
        rusthdl.push(Some(Spread::one(d.rusthdl_cycles_per_s)));
        system.push(None);
    }
    if let Some(n) = nic {
        rows.push(format!("NIC top ({} cycles)", n.recorded_cycles));
        verilator.push(Some(Spread::one(n.verilator_cycles_per_s)));
        rusthdl.push(Some(Spread::one(n.rusthdl_cycles_per_s)));
        system.push(Some(Spread::one(n.system_nic_cycles_per_s)));
    }
    let notes = vec![None; rows.len()];
    let mut series = vec![
        BarSeries {
            name: "Verilator".into(),
            values: verilator,
            notes: notes.clone(),
        },
        BarSeries {
            name: "RustHDL stepping".into(),
            values: rusthdl,
            notes: notes.clone(),
        },
    ];
    if nic.is_some() {
        series.push(BarSeries {
            name: "co-simulation: 2 Verilated NICs, memories, links (NIC-cycles/s)".into(),
            values: system,
            notes,
        });
    }
    BarChart {
        title: "Simulation speed per backend (same recorded stimulus)".into(),
        value_label: "cycles per second (log scale)".into(),
        scale: Scale::Log10,
        rows,
        series,
        reference: None,
        value_format: number,
    }
}

/// The modes of a rejoin result, in the order they first appear.
fn rejoin_modes(b: &BenchResult) -> Vec<ModeKind> {
    let mut modes = vec![];
    for z in &b.sizes {
        for m in &z.modes {
            if !modes.contains(&m.mode) {
                modes.push(m.mode);
            }
        }
    }
    modes
}

/// A mode's legend name: its table name, marked when a run of it landed stale accesses.
fn mode_label(b: &BenchResult, mode: ModeKind) -> String {
    let stale = b
        .sizes
        .iter()
        .flat_map(|z| &z.modes)
        .filter(|m| m.mode == mode)
        .flat_map(|m| &m.runs)
        .any(|r| r.stale_writes + r.stale_reads > 0);
    if stale {
        format!("{} (unsafe: stale accesses)", mode.name())
    } else {
        mode.name().to_string()
    }
}

fn no_sizes(b: &BenchResult) -> Result<(), ChartError> {
    if b.sizes.is_empty() {
        return Err(ChartError::Empty(
            "the rejoin result has no cluster sizes".into(),
        ));
    }
    Ok(())
}

/// Host 1's rejoin latency against the host count, a line per mode.
pub fn rejoin_latency_chart(b: &BenchResult) -> Result<LineChart, ChartError> {
    no_sizes(b)?;
    let series = rejoin_modes(b)
        .into_iter()
        .map(|mode| LineSeries {
            name: mode_label(b, mode),
            points: b
                .sizes
                .iter()
                .filter_map(|z| {
                    let m = z.modes.iter().find(|m| m.mode == mode)?;
                    let s = m.latency?;
                    Some((
                        z.hosts as f64,
                        Spread {
                            min: s.min,
                            median: s.median,
                            max: s.max,
                        },
                    ))
                })
                .collect(),
        })
        .collect();
    Ok(LineChart {
        title: format!(
            "Rejoin latency of a rebooted host (seeds {:?}: min / median / max)",
            b.report_seeds
        ),
        x_label: "hosts in the cluster (log scale)".into(),
        y_label: "power-on to usable by all peers, cycles (log scale)".into(),
        x_scale: Scale::Log2,
        y_scale: Scale::Log10,
        series,
    })
}

/// Stale writes landed per mode: a row per cluster size, a bar per mode.
pub fn rejoin_stale_chart(b: &BenchResult) -> Result<BarChart, ChartError> {
    no_sizes(b)?;
    let rows = b
        .sizes
        .iter()
        .map(|z| format!("{} hosts", z.hosts))
        .collect();
    let series = rejoin_modes(b)
        .into_iter()
        .map(|mode| {
            let found = |z: &nic_testbench::rejoin_bench::SizeResult| {
                z.modes.iter().find(|m| m.mode == mode).cloned()
            };
            BarSeries {
                name: mode.name().to_string(),
                values: b
                    .sizes
                    .iter()
                    .map(|z| {
                        let m = found(z)?;
                        Spread::of(m.runs.iter().map(|r| r.stale_writes as f64))
                    })
                    .collect(),
                notes: b
                    .sizes
                    .iter()
                    .map(|z| match found(z) {
                        Some(m) if m.runs.is_empty() => {
                            Some(format!("{}: not run, no safe hold-down", mode.name()))
                        }
                        _ => None,
                    })
                    .collect(),
            }
        })
        .collect();
    Ok(BarChart {
        title: format!(
            "Stale writes landed after a reboot, per mode (memory verdict; seeds {:?})",
            b.report_seeds
        ),
        value_label: "stale writes per run (median, min .. max)".into(),
        scale: Scale::Linear,
        rows,
        series,
        reference: None,
        value_format: number,
    })
}

/// Goodput and message rate of a size sweep, per series.
struct SizeSeries {
    name: String,
    /// (message bytes, goodput in bytes per cycle)
    points: Vec<(f64, Spread)>,
}

fn size_series(pools: Option<&[PoolsBenchRow]>, nic: Option<&NicBench>) -> Vec<SizeSeries> {
    let mut out = vec![];
    if let Some(rows) = pools {
        for (mode, name) in [
            (
                "pools",
                "buffer pools: RDMA WRITE + immediate (bench pools)",
            ),
            ("send", "SendData: SEND / RECV (bench pools)"),
        ] {
            let points: Vec<(f64, Spread)> = rows
                .iter()
                .filter(|r| r.mode == mode)
                .map(|r| {
                    (
                        r.packet_bytes as f64,
                        Spread {
                            min: r.goodput.min,
                            median: r.goodput.median,
                            max: r.goodput.max,
                        },
                    )
                })
                .collect();
            if !points.is_empty() {
                out.push(SizeSeries {
                    name: name.into(),
                    points,
                });
            }
        }
    }
    if let Some(n) = nic {
        let points: Vec<(f64, Spread)> = n
            .sizes
            .iter()
            .filter(|g| g.cycles > 0)
            .map(|g| {
                (
                    g.message_bytes as f64,
                    Spread::one(g.bytes as f64 / g.cycles as f64),
                )
            })
            .collect();
        if !points.is_empty() {
            out.push(SizeSeries {
                name: "RDMA WRITE stream, one QP (bench nic --sizes)".into(),
                points,
            });
        }
    }
    out
}

/// Goodput (payload bytes per cycle) and message rate (messages per 1000 cycles)
/// against message size, from `bench pools` rows and `bench nic --sizes`.
pub fn size_charts(
    pools: Option<&[PoolsBenchRow]>,
    nic: Option<&NicBench>,
) -> Result<(LineChart, LineChart), ChartError> {
    let series = size_series(pools, nic);
    if series.is_empty() {
        return Err(ChartError::Empty(
            "no message sizes: give `bench pools` rows or a `bench nic --sizes` sweep".into(),
        ));
    }
    let goodput = LineChart {
        title: "Goodput against message size (per direction; min / median / max)".into(),
        x_label: "message size, bytes (log scale)".into(),
        y_label: "payload bytes per cycle (link: 8 bytes per cycle)".into(),
        x_scale: Scale::Log2,
        y_scale: Scale::Linear,
        series: series
            .iter()
            .map(|s| LineSeries {
                name: s.name.clone(),
                points: s.points.clone(),
            })
            .collect(),
    };
    let per_k = |bytes: f64, v: f64| 1000.0 * v / bytes;
    let rate = LineChart {
        title: "Message rate against message size (per direction; min / median / max)".into(),
        x_label: "message size, bytes (log scale)".into(),
        y_label: "messages per 1000 cycles (log scale)".into(),
        x_scale: Scale::Log2,
        y_scale: Scale::Log10,
        series: series
            .iter()
            .map(|s| LineSeries {
                name: s.name.clone(),
                points: s
                    .points
                    .iter()
                    .map(|(x, y)| {
                        (
                            *x,
                            Spread {
                                min: per_k(*x, y.min),
                                median: per_k(*x, y.median),
                                max: per_k(*x, y.max),
                            },
                        )
                    })
                    .collect(),
            })
            .collect(),
    };
    Ok((goodput, rate))
}

/// Writes the rejoin bench's charts into `dir`; returns their paths.
pub fn write_rejoin(b: &BenchResult, dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    let latency = dir.join(REJOIN_LATENCY_SVG);
    rejoin_latency_chart(b)?.write_svg(&latency)?;
    let stale = dir.join(REJOIN_STALE_SVG);
    rejoin_stale_chart(b)?.write_svg(&stale)?;
    Ok(vec![latency, stale])
}

/// Writes the speed chart and, when `nic` holds a size sweep, the size charts; returns
/// their paths.
pub fn write_speed(
    datapath: Option<&DatapathBench>,
    nic: Option<&NicBench>,
    dir: &Path,
) -> Result<Vec<PathBuf>, ChartError> {
    let path = dir.join(SPEED_SVG);
    speed_chart(datapath, nic).write_svg(&path)?;
    let mut out = vec![path];
    if nic.is_some_and(|n| !n.sizes.is_empty()) {
        out.extend(write_sizes(None, nic, dir)?);
    }
    Ok(out)
}

/// Writes the goodput and message-rate charts into `dir`; returns their paths.
pub fn write_sizes(
    pools: Option<&[PoolsBenchRow]>,
    nic: Option<&NicBench>,
    dir: &Path,
) -> Result<Vec<PathBuf>, ChartError> {
    let (goodput, rate) = size_charts(pools, nic)?;
    let (g, r) = (dir.join(GOODPUT_SVG), dir.join(MESSAGE_RATE_SVG));
    goodput.write_svg(&g)?;
    rate.write_svg(&r)?;
    Ok(vec![g, r])
}

/// The registration cache against registering per request: a row per seed and figure
/// (cycles to finish, registrations), a bar per mode.
pub fn regcache_chart(r: &RegcacheBenchReport) -> Result<BarChart, ChartError> {
    let mut seeds: Vec<u64> = r.runs.iter().map(|x| x.seed).collect();
    seeds.dedup();
    if seeds.is_empty() {
        return Err(ChartError::Empty("the regcache result has no runs".into()));
    }
    let mut rows = vec![];
    let (mut without, mut with) = (vec![], vec![]);
    for (figure, f) in [
        (
            "cycles",
            (|x: &nic_testbench::regcache_bench::RegcacheRun| x.cycles) as fn(&_) -> u64,
        ),
        ("registrations", |x| x.registrations),
    ] {
        for &seed in &seeds {
            rows.push(format!("{figure}, seed {seed}"));
            let of = |cached: bool| {
                r.runs
                    .iter()
                    .find(|x| x.seed == seed && x.cached == cached)
                    .map(|x| Spread::one(f(x) as f64))
            };
            without.push(of(false));
            with.push(of(true));
        }
    }
    let notes = vec![None; rows.len()];
    Ok(BarChart {
        title: "Registration cache (004) against registering per request".into(),
        value_label: "count (log scale)".into(),
        scale: Scale::Log10,
        rows,
        series: vec![
            BarSeries {
                name: "no cache".into(),
                values: without,
                notes: notes.clone(),
            },
            BarSeries {
                name: "cache".into(),
                values: with,
                notes,
            },
        ],
        reference: None,
        value_format: number,
    })
}

/// Writes the regcache chart into `dir`; returns its path.
pub fn write_regcache(r: &RegcacheBenchReport, dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    let path = dir.join(REGCACHE_SVG);
    regcache_chart(r)?.write_svg(&path)?;
    Ok(vec![path])
}
