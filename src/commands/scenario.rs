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

/// Options of `nic bench rejoin`.
#[derive(clap::Args, Debug, Clone)]
pub struct RejoinBenchArgs {
    /// Cluster sizes, comma separated (2..=64).
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16,32,64")]
    pub hosts: Vec<usize>,
    /// Heartbeat period of the baseline, cycles.
    #[arg(long, default_value_t = 2000)]
    pub period: u64,
    /// Heartbeat timeout of the baseline, cycles.
    #[arg(long, default_value_t = 6000)]
    pub timeout: u64,
    /// Cycles the rebooting host stays off (below the timeout).
    #[arg(long, default_value_t = 500)]
    pub down_cycles: u64,
    /// Offered load on the rebooting host: a fraction of its capacity (the words per cycle
    /// it takes of this mix), split evenly among the other hosts.
    #[arg(long, default_value_t = 0.9)]
    pub load: f64,
    /// The rebooting host's capacity in words per cycle (default: measured first, 15
    /// senders saturating it; 1.0 sizes the load to its link, which overloads the NIC).
    #[arg(long)]
    pub capacity: Option<f64>,
    /// Instead of --load: chance per cycle that each other host starts an operation (a
    /// fixed rate per host overloads the link more as hosts are added).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Threads stepping the NICs.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Where the JSON results go.
    #[arg(long, default_value = "target/bench/rejoin.json")]
    pub json: PathBuf,
}

/// `nic bench rejoin`: the table of the three modes per size.
pub fn bench_rejoin(args: &RejoinBenchArgs) -> Result<(), String> {
    use nic_testbench::rejoin_bench::{bench_rejoin, RejoinBenchOptions};
    if let Some(n) = args.hosts.iter().find(|&&n| !(2..=64).contains(&n)) {
        return Err(format!("--hosts: {n} is not in 2..=64"));
    }
    if args.down_cycles >= args.timeout || args.period == 0 || args.timeout <= args.period {
        return Err("need 0 < --period < --timeout and --down-cycles < --timeout".into());
    }
    if !(args.load > 0.0 && args.load <= 4.0) {
        return Err(format!("--load: {} is not in (0, 4]", args.load));
    }
    if let Some(r) = args.rate.filter(|r| !(*r > 0.0 && *r <= 1.0)) {
        return Err(format!("--rate: {r} is not in (0, 1]"));
    }
    if let Some(c) = args.capacity.filter(|c| !(*c > 0.0 && *c <= 1.0)) {
        return Err(format!("--capacity: {c} is not in (0, 1] words per cycle"));
    }
    let mut o = RejoinBenchOptions {
        hosts: args.hosts.clone(),
        heartbeat_period: args.period,
        heartbeat_timeout: args.timeout,
        down_cycles: args.down_cycles,
        load: args.load,
        capacity: args.capacity,
        rate: args.rate,
        threads: args.threads,
        ..Default::default()
    };
    let hold = o.heartbeat_timeout
        + 2 * o.heartbeat_period
        + nic_testbench::scenario_run::retransmit_span();
    if o.rate.is_none() && o.capacity.is_none() {
        eprintln!(
            "  measuring host 1's capacity ({} hosts saturating it) ...",
            nic_testbench::rejoin_bench::CAPACITY_HOSTS
        );
        o.capacity = Some(nic_testbench::rejoin_bench::measure_capacity(&o)?);
    }
    let traffic = match (o.rate, o.capacity) {
        (Some(r), _) => format!("each other host starts an operation with chance {r} per cycle"),
        (None, c) => format!(
            "offered load {:.2} of its capacity {:.3} words/cycle = {:.3} words/cycle, split among the other hosts",
            o.load,
            c.unwrap_or(1.0),
            o.load * c.unwrap_or(1.0)
        ),
    };
    println!(
        "nic bench rejoin: host 1 reboots ({} cycles off) under RDMA traffic from every other host ({traffic}); baseline period {} timeout {}, safe hold-down {hold}",
        o.down_cycles, o.heartbeat_period, o.heartbeat_timeout
    );
    let results = bench_rejoin(&o, |what| eprintln!("  running {what} ..."))?;
    println!(
        "{:>5}  {:<16} {:>10} {:>8} {:>9} {:>9}  {:>12}",
        "hosts", "mode", "latency", "x rejoin", "stale wr", "stale r/a", "NIC-cycles/s"
    );
    for r in &results {
        let base = r.modes[0].latency;
        for m in &r.modes {
            let lat = m.latency.map_or("never".to_string(), |l| l.to_string());
            let ratio = match (m.latency, base) {
                (Some(l), Some(b)) if b > 0 => format!("{:.1}", l as f64 / b as f64),
                _ => "-".into(),
            };
            println!(
                "{:>5}  {:<16} {:>10} {:>8} {:>9} {:>9}  {:>12.0}",
                r.hosts,
                m.mode,
                lat,
                ratio,
                m.stale_writes_landed,
                m.stale_reads_and_atomics_landed,
                m.nic_cycles_per_second
            );
        }
        println!(
            "{:>5}  rate {:.5}/host/cycle, offered {:.3}, delivered into host 1 {:.3} words/cycle; bare Verilator model {:.0} cycles/s on host 1's inputs, the system keeps {:.0}% (target >= 50%)",
            r.hosts,
            r.rate_per_host,
            r.offered_load,
            r.modes[0].measured_load,
            r.bare_model_cycles_per_second,
            100.0 * r.system_share()
        );
    }
    if let Some(dir) = args.json.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let json = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
    std::fs::write(&args.json, json).map_err(|e| format!("{}: {e}", args.json.display()))?;
    println!("results: {}", args.json.display());
    Ok(())
}
