//! `nic`: design and verification of RDMA NIC logic written in RustHDL.
//!
//! A thin command line over the workspace crates: `nic-rtl` (blocks, Verilog export),
//! `nic-synth` (lint, yosys/nextpnr), `nic-cosim` (Verilator and RustHDL backends),
//! `nic-testbench` (runs and scoreboards), `nic-waves` (VCD), `nic-plots` (SVG charts).

use clap::{Parser, Subcommand};
use nic_rtl::NicConfig;
use std::path::PathBuf;
use std::process::ExitCode;

mod commands;

#[derive(Parser, Debug)]
#[command(
    name = "nic",
    version,
    about = "Design and verify RDMA NIC logic: Verilog export, lint, synthesis, co-simulation"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Write one Verilog file per block (modules named nic_<block>).
    Verilog {
        /// Output directory.
        #[arg(long, default_value = "target/verilog/default")]
        out: PathBuf,
        /// NIC configuration: key=value pairs, e.g. "queue_pairs=8,cell_payload=512,tpt_entries=256"
        /// (defaults: queue_pairs=4, cell_payload=256, tpt_entries=none).
        #[arg(long, default_value = "", value_parser = parse_config)]
        config: NicConfig,
    },
    /// Lint every block with Verilator -Wall through the waiver file; non-zero exit on any warning.
    Lint {
        /// Where the Verilog and lint logs are written.
        #[arg(long, default_value = "target/verilog/lint")]
        dir: PathBuf,
        /// NIC configuration: key=value pairs, e.g. "queue_pairs=8,cell_payload=512,tpt_entries=256"
        /// (defaults: queue_pairs=4, cell_payload=256, tpt_entries=none).
        #[arg(long, default_value = "", value_parser = parse_config)]
        config: NicConfig,
    },
    /// Synthesise every block for an FPGA (yosys + nextpnr): LUTs, FFs, BRAMs, Fmax.
    Synth {
        /// The FPGA: ecp5-85 (LFE5U-85F), ecp5-25 (LFE5U-25F), hx8k (iCE40 HX8K).
        #[arg(long, default_value = "ecp5-85")]
        target: nic_synth::Device,
        /// Parent of the per-run folder (logs, netlists, report.json).
        #[arg(long, default_value = "synth/out/default")]
        out: PathBuf,
        /// Only these blocks (e.g. cell_segmenter); all when omitted.
        #[arg(long = "block")]
        blocks: Vec<String>,
        /// Clock target for nextpnr, MHz.
        #[arg(long, default_value_t = 100.0)]
        target_mhz: f64,
        /// NIC configuration: key=value pairs, e.g. "queue_pairs=8,cell_payload=512,tpt_entries=256"
        /// (defaults: queue_pairs=4, cell_payload=256, tpt_entries=none).
        #[arg(long, default_value = "", value_parser = parse_config)]
        config: NicConfig,
        /// Instead of place and route: the configuration's NIC top with its blocks kept
        /// apart, LUTs / FFs / block RAMs per block (yosys only).
        #[arg(long, conflicts_with = "blocks")]
        breakdown: bool,
        #[command(flatten)]
        output: commands::synth::SynthOutput,
    },
    /// Run a co-simulation with scoreboards: `nic sim --scenario FILE.toml` (hosts, fabric,
    /// drivers, reboots), or `nic sim datapath`.
    #[command(args_conflicts_with_subcommands = true)]
    Sim {
        #[command(flatten)]
        scenario: commands::scenario::ScenarioArgs,
        #[command(subcommand)]
        command: Option<SimCommand>,
    },
    /// Three simulators agree: each block's recorded stimulus replayed in RustHDL
    /// stepping, Verilator and Icarus Verilog, every output compared every cycle; a
    /// mismatch names the first cycle and output and writes both waveforms under
    /// waves/threesim/.
    Agree(commands::agree::AgreeArgs),
    /// Random schedules (reboots, link faults, workloads) on the Verilated NICs with every
    /// scoreboard on; a failure is shrunk and written under scenarios/regressions/.
    Soak(commands::soak::SoakArgs),
    /// Benchmarks: both backends on the same stimulus, measured in one run. Each writes
    /// target/bench/<bench>.json; --json, --quiet, --plot DIR on every one.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// SVG charts from the JSON the benches and `nic synth` wrote, without running them again.
    Plot(commands::plot::PlotArgs),
    /// Write the tables of docs/measurements.md from the benches' JSON (between the page's
    /// markers, with the machine, date and tool version).
    #[command(subcommand)]
    Measurements(commands::measurements::MeasurementsCommand),
    /// The main job: Verilog for every block, lint, and a datapath co-simulation with a waveform.
    Flow {
        /// Where the Verilog goes.
        #[arg(long, default_value = "target/verilog/default")]
        out: PathBuf,
        /// Do not write the waveform.
        #[arg(long)]
        no_waves: bool,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Encode or decode cells of the network port.
    #[command(subcommand)]
    Cell(commands::cell::CellCommand),
    /// Model checking (stateright) of the driver's protocol machines.
    #[command(subcommand)]
    Check(CheckCommand),
    /// Look at VCD/FST waveforms without a GUI: list, show, diff, render, GTKWave/Surfer views.
    #[command(subcommand)]
    Waves(commands::waves::WavesCommand),
}

#[derive(Subcommand, Debug)]
enum CheckCommand {
    /// The rejoin protocol: every interleaving of a few nodes with FIFO links, lost
    /// control messages and reboots (docs/rejoin-model-check.md).
    Rejoin(commands::check::RejoinCheckArgs),
}

#[derive(Subcommand, Debug)]
enum SimCommand {
    /// The cell datapath (segmenter → link → reassembler) against the reference model.
    Datapath(commands::sim::DatapathArgs),
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// Verilator vs RustHDL cycles/s on one recorded stimulus, and segmenter goodput.
    Datapath(commands::bench::DatapathBenchArgs),
    /// The NIC top: Verilator vs RustHDL cycles/s under saturating RDMA WRITE traffic both
    /// ways (one recorded stimulus), and the goodput of a long RDMA WRITE stream (per
    /// message size with --sizes).
    Nic(commands::bench::NicBenchArgs),
    /// The rejoin protocol against the heartbeat baseline of 000 [0006]: rejoin latency,
    /// stale writes landed, and co-simulation speed against the bare Verilator model.
    Rejoin(commands::rejoin_bench::RejoinBenchArgs),
    /// The registration cache of 004 against registering for every request: a
    /// message-passing library's rendezvous on the Verilated NICs, cycles and registrations.
    Regcache(commands::regcache::RegcacheBenchArgs),
    /// The split-model driver of 002: buffer pools (RDMA WRITE + immediate) against SendData
    /// (SEND/RECV) on the same packets, goodput per packet size with the spread over seeds.
    Pools(commands::pools::PoolsBenchArgs),
}

fn parse_config(text: &str) -> Result<NicConfig, String> {
    text.parse()
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Verilog { out, config } => {
            println!("# {config}");
            for (block, path) in commands::verilog::write_all(&out, &config)? {
                println!("{:<24} {}", block.module, path.display());
            }
            Ok(())
        }
        Command::Soak(args) => commands::soak::run(&args).map(|_| ()),
        Command::Check(CheckCommand::Rejoin(args)) => commands::check::rejoin(&args),
        Command::Lint { dir, config } => {
            let warnings = commands::lint::lint_all(&dir, &config)?;
            if warnings > 0 {
                return Err(format!("{warnings} unwaived lint warning(s)"));
            }
            Ok(())
        }
        Command::Synth {
            out,
            target,
            config,
            breakdown: true,
            output,
            ..
        } => {
            if output.json || output.report.is_some() {
                return Err("nic synth: --json and --report go with place and route, not --breakdown (it writes breakdown.json)".into());
            }
            commands::synth::breakdown(&out, &config, target).map(|_| ())
        }
        Command::Synth {
            out,
            target,
            blocks,
            target_mhz,
            config,
            breakdown: false,
            output,
        } => commands::synth::synth_all(&out, &config, &blocks, target_mhz, target, &output)
            .map(|_| ()),
        Command::Cell(cmd) => commands::cell::run(cmd),
        Command::Waves(cmd) => commands::waves::run(cmd),
        Command::Plot(cmd) => commands::plot::run(&cmd),
        Command::Measurements(cmd) => commands::measurements::run(cmd),
        Command::Sim {
            command: Some(SimCommand::Datapath(args)),
            ..
        } => commands::sim::run(&args).map(|_| ()),
        Command::Sim {
            command: None,
            scenario,
        } => match &scenario.scenario {
            Some(path) => commands::scenario::run(path, &scenario).map(|_| ()),
            None => {
                Err("nic sim: give --scenario FILE.toml or a subcommand (nic sim --help)".into())
            }
        },
        Command::Agree(args) => commands::agree::run(&args),
        Command::Bench(BenchCommand::Datapath(args)) => commands::bench::datapath(&args),
        Command::Bench(BenchCommand::Nic(args)) => commands::bench::nic(&args),
        Command::Bench(BenchCommand::Rejoin(args)) => commands::rejoin_bench::run(&args),
        Command::Bench(BenchCommand::Regcache(args)) => commands::regcache::run(&args),
        Command::Bench(BenchCommand::Pools(args)) => commands::pools::run(&args),
        Command::Flow {
            out,
            no_waves,
            seed,
        } => flow(&out, !no_waves, seed),
    }
}

/// The main job: export, lint, co-simulate with a waveform; prints where everything is.
fn flow(out: &std::path::Path, waves: bool, seed: u64) -> Result<(), String> {
    let cfg = NicConfig::default();
    println!("== 1. Verilog (one module per block) -> {}", out.display());
    for (block, path) in commands::verilog::write_all(out, &cfg)? {
        println!("   {:<24} {}", block.module, path.display());
    }
    println!(
        "== 2. Lint (verilator --lint-only -Wall, waivers in {})",
        commands::lint::waiver_file().display()
    );
    let warnings = commands::lint::lint_all(&out.join("lint"), &cfg)?;
    if warnings > 0 {
        return Err(format!("{warnings} unwaived lint warning(s)"));
    }
    println!("== 3. Co-simulation: cell datapath on Verilator ({}), scoreboarded against the reference model",
        nic_cosim::verilator_version().unwrap_or("Verilator unavailable"));
    let clean = commands::sim::DatapathArgs {
        backend: commands::sim::Backend::Verilator,
        seed,
        messages: 200,
        max_length: 1500,
        idle: 0.1,
        backpressure: 0.1,
        link_error_rate: 0.0,
        waves,
        vcd: None,
        json: Some(out.join("datapath-report.json")),
        cell_payload: cfg.cell_payload,
    };
    commands::sim::run(&clean)?;
    println!("== 4. The same with bit errors injected on the link (every bad cell must be caught)");
    let faulty = commands::sim::DatapathArgs {
        seed: seed + 1,
        link_error_rate: 0.002,
        waves: false,
        json: None,
        ..clean
    };
    commands::sim::run(&faulty)?;
    if waves {
        println!(
            "Open the waveform with: gtkwave {}",
            nic_waves::wave_path("cell_datapath", &format!("verilator-seed{seed}")).display()
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nic: error: {e}");
            ExitCode::FAILURE
        }
    }
}
