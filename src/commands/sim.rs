//! `nic sim datapath`: a thin wrapper over nic-testbench.

use clap::{Args, ValueEnum};
use nic_cosim::{RustHdlCellDatapath, Stepper, VerilatedCellDatapath};
use nic_testbench::datapath::{run_datapath, DatapathOptions, DatapathReport};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Backend {
    /// The Verilated model (fast).
    Verilator,
    /// RustHDL direct stepping (the reference).
    Rusthdl,
}

#[derive(Args, Debug, Clone)]
pub struct DatapathArgs {
    #[arg(long, value_enum, default_value = "verilator")]
    pub backend: Backend,
    /// Random seed of the traffic.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Messages to send.
    #[arg(long, default_value_t = 200)]
    pub messages: usize,
    /// Largest payload, bytes.
    #[arg(long, default_value_t = 1500)]
    pub max_length: usize,
    /// Probability of an idle source clock.
    #[arg(long, default_value_t = 0.1)]
    pub idle: f64,
    /// Probability of a sink back-pressure clock.
    #[arg(long, default_value_t = 0.1)]
    pub backpressure: f64,
    /// Probability of a bit flip on a link word.
    #[arg(long, default_value_t = 0.0)]
    pub link_error_rate: f64,
    /// Write a VCD (also on with NIC_WAVES=1).
    #[arg(long)]
    pub waves: bool,
    /// VCD path (default waves/cell_datapath/<backend>-seed<seed>.vcd).
    #[arg(long)]
    pub vcd: Option<PathBuf>,
    /// Write the run's report as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    #[arg(long, default_value_t = nic_rtl::DEFAULT_CELL_PAYLOAD)]
    pub cell_payload: usize,
}

impl DatapathArgs {
    pub fn options(&self) -> Result<DatapathOptions, String> {
        if self.cell_payload != nic_rtl::DEFAULT_CELL_PAYLOAD {
            return Err(format!(
                "the co-simulation models are built for cell_payload {}; got --cell-payload {} (export other sizes with `nic verilog`)",
                nic_rtl::DEFAULT_CELL_PAYLOAD,
                self.cell_payload
            ));
        }
        for (name, p) in [
            ("--idle", self.idle),
            ("--backpressure", self.backpressure),
            ("--link-error-rate", self.link_error_rate),
        ] {
            if !(0.0..1.0).contains(&p) {
                return Err(format!("{name} must be a probability in [0, 1), got {p}"));
            }
        }
        Ok(DatapathOptions {
            cell_payload: self.cell_payload,
            seed: self.seed,
            messages: self.messages,
            max_length: self.max_length,
            idle: self.idle,
            backpressure: self.backpressure,
            link_error_rate: self.link_error_rate,
            ..Default::default()
        })
    }
}

fn run_on<S>(
    sim: &mut S,
    options: &DatapathOptions,
    vcd: Option<&Path>,
) -> Result<DatapathReport, String>
where
    S: Stepper<Inputs = nic_cosim::CellDatapathInputs, Outputs = nic_cosim::CellDatapathOutputs>,
{
    if let Some(path) = vcd {
        sim.open_trace(path).map_err(|e| e.to_string())?;
    }
    let report = run_datapath(sim, options);
    sim.close_trace();
    Ok(report)
}

/// Run the datapath co-simulation; prints a summary. Returns the report and the VCD path.
pub fn run(args: &DatapathArgs) -> Result<(DatapathReport, Option<PathBuf>), String> {
    let options = args.options()?;
    let backend = match args.backend {
        Backend::Verilator => "verilator",
        Backend::Rusthdl => "rusthdl",
    };
    let waves = args.waves || nic_waves::waves_enabled();
    let vcd = waves.then(|| {
        args.vcd.clone().unwrap_or_else(|| {
            nic_waves::wave_path("cell_datapath", &format!("{backend}-seed{}", args.seed))
        })
    });
    let start = std::time::Instant::now();
    let report = match args.backend {
        Backend::Verilator => run_on(
            &mut VerilatedCellDatapath::new().map_err(|e| e.to_string())?,
            &options,
            vcd.as_deref(),
        )?,
        Backend::Rusthdl => run_on(&mut RustHdlCellDatapath::new(), &options, vcd.as_deref())?,
    };
    let secs = start.elapsed().as_secs_f64();
    println!(
        "datapath on {backend}: {} cycles in {secs:.2} s ({:.0} cycles/s with scoreboards), {} messages, {} cells on the link",
        report.cycles,
        report.cycles as f64 / secs,
        report.messages_sent,
        report.cells_on_link
    );
    println!(
        "  outcomes: {:?}; messages delivered intact: {}",
        report.outcomes, report.messages_delivered
    );
    if let Some(v) = &vcd {
        println!("  waveform: {}", v.display());
    }
    if let Some(j) = &args.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(j, text).map_err(|e| format!("writing {}: {e}", j.display()))?;
        println!("  report: {}", j.display());
    }
    if report.passed() {
        println!("  scoreboards: PASS");
        Ok((report, vcd))
    } else {
        for v in &report.violations {
            println!("  violation: {v}");
        }
        Err(format!(
            "{} scoreboard violation(s)",
            report.violations.len()
        ))
    }
}
