//! `nic`: design and verification of RDMA NIC logic written in RustHDL.
//!
//! A thin command line over the workspace crates: `nic-rtl` (blocks, Verilog export),
//! `nic-synth` (lint, yosys/nextpnr), `nic-cosim` (Verilator and RustHDL backends),
//! `nic-testbench` (runs and scoreboards), `nic-waves` (VCD).

use clap::{Parser, Subcommand};
use nic_rtl::export::DatapathConfig;
use std::path::PathBuf;
use std::process::ExitCode;

mod commands;

#[derive(Parser, Debug)]
#[command(name = "nic", version, about = "Design and verify RDMA NIC logic: Verilog export, lint, synthesis, co-simulation")]
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
        /// Payload bytes per cell (a multiple of 8, 8..=1024).
        #[arg(long, default_value_t = nic_rtl::DEFAULT_CELL_PAYLOAD)]
        cell_payload: usize,
    },
    /// Lint every block with Verilator -Wall through the waiver file; non-zero exit on any warning.
    Lint {
        /// Where the Verilog and lint logs are written.
        #[arg(long, default_value = "target/verilog/lint")]
        dir: PathBuf,
        #[arg(long, default_value_t = nic_rtl::DEFAULT_CELL_PAYLOAD)]
        cell_payload: usize,
    },
    /// Synthesise every block for iCE40 HX8K (yosys + nextpnr): LUTs, FFs, BRAMs, Fmax.
    Synth {
        /// Parent of the per-run folder (logs, netlists, report.json).
        #[arg(long, default_value = "synth/out/default")]
        out: PathBuf,
        /// Only these blocks (e.g. cell_segmenter); all when omitted.
        #[arg(long = "block")]
        blocks: Vec<String>,
        /// Clock target for nextpnr, MHz.
        #[arg(long, default_value_t = 100.0)]
        target_mhz: f64,
        #[arg(long, default_value_t = nic_rtl::DEFAULT_CELL_PAYLOAD)]
        cell_payload: usize,
    },
    /// Encode or decode cells of the network port.
    #[command(subcommand)]
    Cell(commands::cell::CellCommand),
}

fn config(cell_payload: usize) -> Result<DatapathConfig, String> {
    nic_rtl::cell_format::check_cell_payload(cell_payload).map_err(|e| format!("--cell-payload: {e}"))?;
    Ok(DatapathConfig { cell_payload })
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Verilog { out, cell_payload } => {
            for (block, path) in commands::verilog::write_all(&out, &config(cell_payload)?)? {
                println!("{:<24} {}", block.module, path.display());
            }
            Ok(())
        }
        Command::Lint { dir, cell_payload } => {
            let warnings = commands::lint::lint_all(&dir, &config(cell_payload)?)?;
            if warnings > 0 {
                return Err(format!("{warnings} unwaived lint warning(s)"));
            }
            Ok(())
        }
        Command::Synth { out, blocks, target_mhz, cell_payload } => {
            commands::synth::synth_all(&out, &config(cell_payload)?, &blocks, target_mhz).map(|_| ())
        }
        Command::Cell(cmd) => commands::cell::run(cmd),
    }
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
