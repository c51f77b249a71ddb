//! `nic sim --scenario FILE.toml`: a multi-host co-simulation of a scenario file, with a
//! progress bar, a summary, a JSON report and optionally the waves of each NIC (VCD or
//! FST, a window of cycles, some hosts, with the protocol's events as marker signals).

use indicatif::{ProgressBar, ProgressStyle};
use nic_testbench::scenario::{ProtocolKind, Scenario};
use nic_cosim::TraceFormat;
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
            std::fs::remove_file(e.path()).map_err(|err| format!("{}: {err}", e.path().display()))?;
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
        return Err(format!("{s:?}: the window is empty (FROM must be below TO)"));
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

/// Options of `nic bench rejoin` (see nic_testbench::rejoin_bench).
#[derive(clap::Args, Debug, Clone)]
pub struct RejoinBenchArgs {
    /// Cluster sizes, comma separated (2..=64).
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16,32,64")]
    pub hosts: Vec<usize>,
    /// Seeds per size and mode in the report (min / median / max).
    #[arg(long, default_value_t = 3)]
    pub seeds: usize,
    /// Seeds every hold-down candidate of the baseline's search must pass.
    #[arg(long, default_value_t = 5)]
    pub search_seeds: usize,
    /// The first seed (the others follow).
    #[arg(long, default_value_t = 11)]
    pub seed: u64,
    /// Share of a link the baseline's heartbeats may take; sets the period per size.
    #[arg(long, default_value_t = 0.01)]
    pub budget: f64,
    /// The baseline's timeout in heartbeat periods.
    #[arg(long, default_value_t = 3)]
    pub timeout_periods: u64,
    /// A fixed heartbeat period instead of the budget's, cycles.
    #[arg(long)]
    pub period: Option<u64>,
    /// The hold-down search stops within this fraction of the smallest passing candidate.
    #[arg(long, default_value_t = 0.05)]
    pub precision: f64,
    /// Also run the reference hold-down (timeout + 2 periods + the retransmission span).
    #[arg(long)]
    pub reference: bool,
    /// Cycles the rebooting host stays off.
    #[arg(long, default_value_t = 500)]
    pub down_cycles: u64,
    /// Requests to the rebooting host sent this many cycles before its reboot are held in
    /// the fabric up to twice as long, so they reach its new boot (0: none).
    #[arg(long, default_value_t = 1000)]
    pub held_requests: u64,
    /// Offered load on the rebooting host: a fraction of its capacity (the words per cycle
    /// it takes of this mix), split evenly among the other hosts.
    #[arg(long, default_value_t = 0.9)]
    pub load: f64,
    /// The rebooting host's capacity in words per cycle (default: measured first, 15
    /// senders saturating it; 1.0 sizes the load to its link, which overloads the NIC).
    #[arg(long)]
    pub capacity: Option<f64>,
    /// Instead of --load: chance per cycle that each other host starts an operation.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Threads stepping the NICs.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Print the results as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Where the JSON results are written as well.
    #[arg(long, default_value = "target/bench/rejoin.json")]
    pub out: PathBuf,
}

/// `nic bench rejoin`: the protocol against the tuned heartbeat baselines per size.
pub fn bench_rejoin(args: &RejoinBenchArgs) -> Result<(), String> {
    use nic_testbench::rejoin_bench::{
        bench_rejoin, measure_capacity, render_text, RejoinBenchOptions,
    };
    let mut o = RejoinBenchOptions {
        hosts: args.hosts.clone(),
        seeds: args.seeds,
        search_seeds: args.search_seeds,
        first_seed: args.seed,
        down_cycles: args.down_cycles,
        held_requests: args.held_requests,
        budget: args.budget,
        timeout_periods: args.timeout_periods,
        period: args.period,
        precision: args.precision,
        reference: args.reference,
        load: args.load,
        capacity: args.capacity,
        rate: args.rate,
        threads: args.threads,
    };
    o.check().map_err(|e| format!("nic bench rejoin: {e}"))?;
    if o.rate.is_none() && o.capacity.is_none() {
        eprintln!(
            "  measuring host 1's capacity ({} hosts saturating it) ...",
            nic_testbench::rejoin_bench::CAPACITY_HOSTS
        );
        o.capacity = Some(measure_capacity(&o)?);
    }
    let results = bench_rejoin(&o, |what| eprintln!("  running {what} ..."))?;
    let json = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
    if args.json {
        println!("{json}");
    } else {
        let traffic = match (o.rate, o.capacity) {
            (Some(r), _) => {
                format!("each other host starts an operation with chance {r} per cycle")
            }
            (None, c) => format!(
                "offered load {:.2} of its capacity {:.3} words/cycle, split among the other hosts",
                o.load,
                c.unwrap_or(1.0)
            ),
        };
        println!(
            "nic bench rejoin: host 1 reboots ({} cycles off) under RDMA traffic from every other host ({traffic})",
            o.down_cycles
        );
        print!("{}", render_text(&results));
    }
    if let Some(dir) = args.out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&args.out, json).map_err(|e| format!("{}: {e}", args.out.display()))?;
    if !args.json {
        println!("results: {}", args.out.display());
    }
    Ok(())
}
