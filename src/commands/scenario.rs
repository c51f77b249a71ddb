//! `nic sim --scenario FILE.toml`: a multi-host co-simulation of a scenario file, with a
//! progress bar, a summary, a JSON report and optionally one VCD per NIC.

use indicatif::{ProgressBar, ProgressStyle};
use nic_testbench::scenario::{ProtocolKind, Scenario};
use nic_testbench::scenario_run::{run_scenario, Report, RunOptions};
use std::path::{Path, PathBuf};

/// Options of `nic sim --scenario`.
#[derive(clap::Args, Debug, Clone)]
pub struct ScenarioArgs {
    /// The scenario file (see docs/scenarios.md; shipped ones are in scenarios/).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Write one VCD per NIC under waves/<scenario>/ (large: every signal, every cycle).
    #[arg(long, requires = "scenario")]
    pub waves: bool,
    /// Where the JSON report goes (default: target/sim/<scenario>/report.json).
    #[arg(long, requires = "scenario")]
    pub report: Option<PathBuf>,
    /// Run this protocol instead of the file's (`rejoin` or `heartbeat`).
    #[arg(long, value_parser = parse_protocol, requires = "scenario")]
    pub protocol: Option<ProtocolKind>,
    /// Threads stepping the NICs (default: the file's, else 1).
    #[arg(long, requires = "scenario")]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(long, requires = "scenario")]
    pub quiet: bool,
}

fn parse_protocol(s: &str) -> Result<ProtocolKind, String> {
    match s {
        "rejoin" => Ok(ProtocolKind::Rejoin),
        "heartbeat" => Ok(ProtocolKind::Heartbeat),
        _ => Err(format!("unknown protocol {s:?}: use rejoin or heartbeat")),
    }
}

/// Large RustHDL tops need a deep stack; Verilator runs do not mind.
const SIM_STACK_BYTES: usize = 512 << 20;

/// Run the scenario at `path`; an error if it cannot run or its scoreboard fails.
pub fn run(path: &Path, args: &ScenarioArgs) -> Result<Report, String> {
    let scenario = Scenario::load(path).map_err(|e| e.to_string())?;
    let waves_dir = args.waves.then(|| {
        nic_waves::workspace_root()
            .join("waves")
            .join(&scenario.name)
    });
    let report_path = args.report.clone().unwrap_or_else(|| {
        PathBuf::from("target/sim")
            .join(&scenario.name)
            .join("report.json")
    });
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(scenario.cycles)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} cycles ({eta} left)",
        )
        .map_err(|e| e.to_string())?,
    );
    bar.set_message(format!("{} ({} hosts)", scenario.name, scenario.hosts));
    let progress_bar = bar.clone();
    let opts = RunOptions {
        waves_dir: waves_dir.clone(),
        protocol: args.protocol,
        threads: args.threads,
        progress: Some(Box::new(move |c, _| progress_bar.set_position(c))),
        ..Default::default()
    };
    let report = std::thread::Builder::new()
        .stack_size(SIM_STACK_BYTES)
        .spawn(move || run_scenario(&scenario, opts))
        .map_err(|e| e.to_string())?
        .join()
        .map_err(|_| "the simulation thread panicked".to_string())?
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    print!("{}", report.summary());
    if let Some(dir) = report_path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    std::fs::write(&report_path, json).map_err(|e| format!("{}: {e}", report_path.display()))?;
    println!("report: {}", report_path.display());
    if let Some(dir) = waves_dir {
        println!("waves: {}/nic<N>.vcd (gtkwave)", dir.display());
    }
    if report.passed {
        Ok(report)
    } else {
        Err(format!(
            "scenario {}: the scoreboard found {} violation(s)",
            report.scenario, report.violation_count
        ))
    }
}
