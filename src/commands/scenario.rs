//! `nic sim --scenario FILE.toml`: a multi-host co-simulation of a scenario file, with a
//! progress bar, a summary, a JSON report and optionally the waves of each NIC (VCD or
//! FST, a window of cycles, some hosts, with the protocol's events as marker signals).

use indicatif::{ProgressBar, ProgressStyle};
use nic_cosim::TraceFormat;
use nic_testbench::scenario::{ProtocolKind, Scenario};
use nic_testbench::scenario_run::{run_scenario, Report, RunOptions};
use std::path::{Path, PathBuf};

/// Options of `nic sim --scenario`.
#[derive(clap::Args, Debug, Clone)]
pub struct ScenarioArgs {
    /// The scenario file (see docs/scenarios.md; shipped ones are in scenarios/).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Write each NIC's waves under waves/<scenario>/: `vcd` (the default when the value
    /// is left out) or `fst` (needs a build with `--features fst`). Every signal, every
    /// cycle, plus the protocol's events as marker signals (docs/waves.md).
    #[arg(long, requires = "scenario", value_name = "FORMAT", num_args = 0..=1,
          default_missing_value = "vcd", value_parser = parse_format)]
    pub waves: Option<TraceFormat>,
    /// Dump only cycles FROM..TO (TO excluded), e.g. `20000..24000`.
    #[arg(long, requires = "waves", value_name = "FROM..TO", value_parser = parse_window)]
    pub waves_window: Option<(u64, u64)>,
    /// Dump only these hosts' NICs: a comma-separated list of hosts and ranges, `1,3` or `0-3`.
    #[arg(long, requires = "waves", value_name = "LIST", value_parser = parse_hosts)]
    pub waves_hosts: Option<HostList>,
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

/// The NICs' wave files of an earlier run in `dir` (`nic*.vcd`, `nic*.fst`), so that the
/// directory holds this run's only.
fn remove_old_waves(dir: &Path) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("nic") && (name.ends_with(".vcd") || name.ends_with(".fst")) {
            std::fs::remove_file(e.path())
                .map_err(|err| format!("{}: {err}", e.path().display()))?;
        }
    }
    Ok(())
}

fn parse_format(s: &str) -> Result<TraceFormat, String> {
    match s {
        "vcd" => Ok(TraceFormat::Vcd),
        "fst" => Ok(TraceFormat::Fst),
        _ => Err(format!("unknown waves format {s:?}: use vcd or fst")),
    }
}

/// `FROM..TO`, cycles, FROM below TO.
pub fn parse_window(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?} is not a window of cycles FROM..TO (e.g. 1000..2000)"))?;
    let num = |t: &str, what: &str| {
        t.trim()
            .parse::<u64>()
            .map_err(|_| format!("{s:?}: {what} {t:?} is not a cycle number"))
    };
    let (from, to) = (num(a, "FROM")?, num(b, "TO")?);
    if from >= to {
        return Err(format!(
            "{s:?}: the window is empty (FROM must be below TO)"
        ));
    }
    Ok((from, to))
}

/// Hosts named on the command line, sorted, each once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostList(pub Vec<usize>);

/// `1,3`, `0-3`, `0-1,5`: hosts, sorted, each once.
pub fn parse_hosts(s: &str) -> Result<HostList, String> {
    let mut out = vec![];
    for part in s.split(',') {
        let num = |t: &str| {
            t.trim()
                .parse::<usize>()
                .map_err(|_| format!("{s:?}: {t:?} is not a host number (a list like 1,3 or 0-3)"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("{s:?}: the range {part:?} runs backwards"));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(HostList(out))
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
    let waves_dir = args.waves.map(|_| {
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
    let format = args.waves.unwrap_or_default();
    let opts = RunOptions {
        waves_dir: waves_dir.clone(),
        waves_format: format,
        waves_window: args.waves_window,
        waves_hosts: args.waves_hosts.clone().map(|l| l.0),
        protocol: args.protocol,
        threads: args.threads,
        progress: Some(Box::new(move |c, _| progress_bar.set_position(c))),
        ..Default::default()
    };
    // Bad waves options stop here, before the models are built.
    nic_testbench::scenario_run::check_waves(&scenario, &opts)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if let Some(dir) = &waves_dir {
        remove_old_waves(dir)?;
    }
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
        println!(
            "waves: {}/nic<N>.{format} (nic waves gtkw FILE; gtkwave)",
            dir.display()
        );
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
