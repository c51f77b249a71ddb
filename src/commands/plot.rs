//! `nic plot`: the benches' and synthesis' charts (SVG) drawn from the JSON they wrote,
//! without running anything again (the full `nic bench rejoin` takes about 25 minutes).

use clap::Subcommand;
use nic_plots::{bench, load_json, synth};
use nic_synth::{BlockShare, SynthReport};
use nic_testbench::bench::DatapathBench;
use nic_testbench::nic_bench::NicBench;
use nic_testbench::pools_bench::PoolsBenchRow;
use nic_testbench::regcache_bench::RegcacheBenchReport;
use nic_testbench::rejoin_bench::BenchResult;
use std::path::{Path, PathBuf};

const REJOIN: &str = "the JSON of `nic bench rejoin`";
const DATAPATH: &str = "the JSON of `nic bench datapath`";
const NIC: &str = "the JSON of `nic bench nic`";
const POOLS: &str = "the JSON of `nic bench pools`";
const REGCACHE: &str = "the JSON of `nic bench regcache`";

/// `nic plot`: which charts, where.
#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    #[command(subcommand)]
    pub what: PlotCommand,
    /// Folder for the charts.
    #[arg(long, global = true, default_value = "target/plots")]
    pub out: PathBuf,
    /// Also write each chart as PNG beside its SVG (resvg; needs a system font).
    #[arg(long, global = true)]
    pub png: bool,
}

#[derive(Subcommand, Debug, Clone)]
pub enum PlotCommand {
    /// `nic bench rejoin`: latency against host count per mode (min / median / max over
    /// seeds), stale writes per mode.
    Rejoin {
        #[arg(default_value = "target/bench/rejoin.json")]
        file: PathBuf,
    },
    /// `nic bench datapath` / `nic bench nic`: simulation speed per backend (and goodput
    /// and message rate against size when the NIC bench ran with --sizes).
    Speed {
        #[arg(long, value_name = "FILE")]
        datapath: Option<PathBuf>,
        #[arg(long, value_name = "FILE")]
        nic: Option<PathBuf>,
    },
    /// `nic bench pools` and/or `nic bench nic --sizes`: goodput and message rate against
    /// message size.
    Sizes {
        #[arg(long, value_name = "FILE")]
        pools: Option<PathBuf>,
        #[arg(long, value_name = "FILE")]
        nic: Option<PathBuf>,
    },
    /// `nic bench regcache`: cycles and registrations with and without the cache.
    Regcache {
        #[arg(default_value = "target/bench/regcache.json")]
        file: PathBuf,
    },
    /// `nic synth`'s report.json (resources per block against the HX8K, Fmax against the
    /// target) or `nic synth --breakdown`'s breakdown.json (resources per block).
    Synth { file: PathBuf },
    /// Every chart whose bench JSON is in DIR (datapath, nic, rejoin, pools, regcache).
    All {
        #[arg(long, default_value = "target/bench")]
        dir: PathBuf,
    },
}

fn loaded<T: serde::de::DeserializeOwned>(
    path: Option<&PathBuf>,
    what: &str,
) -> Result<Option<T>, String> {
    path.map(|p| load_json(p, what).map_err(|e| e.to_string()))
        .transpose()
}

/// Draws the charts of one command into `out`; returns their paths.
fn draw(cmd: &PlotCommand, out: &Path) -> Result<Vec<PathBuf>, String> {
    let e = |e: nic_plots::ChartError| e.to_string();
    match cmd {
        PlotCommand::Rejoin { file } => {
            let b: BenchResult = load_json(file, REJOIN).map_err(e)?;
            bench::write_rejoin(&b, out).map_err(e)
        }
        PlotCommand::Speed { datapath, nic } => {
            if datapath.is_none() && nic.is_none() {
                return Err("nic plot speed: give --datapath FILE and/or --nic FILE".into());
            }
            let d: Option<DatapathBench> = loaded(datapath.as_ref(), DATAPATH)?;
            let n: Option<NicBench> = loaded(nic.as_ref(), NIC)?;
            bench::write_speed(d.as_ref(), n.as_ref(), out).map_err(e)
        }
        PlotCommand::Sizes { pools, nic } => {
            if pools.is_none() && nic.is_none() {
                return Err("nic plot sizes: give --pools FILE and/or --nic FILE".into());
            }
            let p: Option<Vec<PoolsBenchRow>> = loaded(pools.as_ref(), POOLS)?;
            let n: Option<NicBench> = loaded(nic.as_ref(), NIC)?;
            bench::write_sizes(p.as_deref(), n.as_ref(), out).map_err(e)
        }
        PlotCommand::Regcache { file } => {
            let r: RegcacheBenchReport = load_json(file, REGCACHE).map_err(e)?;
            bench::write_regcache(&r, out).map_err(e)
        }
        PlotCommand::Synth { file } => synth_charts(file, out),
        PlotCommand::All { dir } => {
            let found = |name: &str| Some(dir.join(format!("{name}.json"))).filter(|p| p.exists());
            let (datapath, nic, pools) = (found("datapath"), found("nic"), found("pools"));
            let mut cmds = vec![];
            if datapath.is_some() || nic.is_some() {
                cmds.push(PlotCommand::Speed {
                    datapath,
                    nic: nic.clone(),
                });
            }
            if pools.is_some() {
                cmds.push(PlotCommand::Sizes { pools, nic });
            }
            if let Some(file) = found("rejoin") {
                cmds.push(PlotCommand::Rejoin { file });
            }
            if let Some(file) = found("regcache") {
                cmds.push(PlotCommand::Regcache { file });
            }
            if cmds.is_empty() {
                return Err(format!(
                    "nic plot all: no bench JSON (datapath, nic, pools, rejoin, regcache .json) in {}",
                    dir.display()
                ));
            }
            let mut paths = vec![];
            for c in &cmds {
                for p in draw(c, out)? {
                    if !paths.contains(&p) {
                        paths.push(p);
                    }
                }
            }
            Ok(paths)
        }
    }
}

/// A synthesis report or a breakdown, whichever the file holds.
fn synth_charts(file: &Path, out: &Path) -> Result<Vec<PathBuf>, String> {
    let what = "`nic synth`'s report.json or `nic synth --breakdown`'s breakdown.json";
    match load_json::<Vec<SynthReport>>(file, what) {
        Ok(reports) => synth::write_synth(&reports, out).map_err(|e| e.to_string()),
        Err(report_error) => {
            let Ok(rows) = load_json::<Vec<BlockShare>>(file, what) else {
                return Err(report_error.to_string());
            };
            // breakdown.json sits in `<top>_breakdown/`.
            let top = file
                .parent()
                .and_then(|d| d.file_name())
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix("_breakdown"))
                .unwrap_or("the top");
            let path = out.join(synth::RESOURCES_SVG);
            synth::breakdown_chart(top, &rows, &synth::Device::hx8k())
                .and_then(|c| c.write_svg(&path))
                .map_err(|e| e.to_string())?;
            Ok(vec![path])
        }
    }
}

/// `nic plot ...`: draws and prints each chart's path.
pub fn run(args: &PlotArgs) -> Result<(), String> {
    for path in draw(&args.what, &args.out)? {
        println!("chart: {}", path.display());
        if args.png {
            let png = path.with_extension("png");
            let svg =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let bytes = nic_waves::inspect::svg_to_png(&svg, &png).map_err(|e| e.to_string())?;
            std::fs::write(&png, bytes).map_err(|e| format!("{}: {e}", png.display()))?;
            println!("chart: {}", png.display());
        }
    }
    Ok(())
}
