//! `nic synth`: yosys and nextpnr on every exported block for one FPGA (`--target`:
//! `ecp5-85`, `ecp5-25`, `hx8k`; see `nic_synth::device`).

use super::bench::{progress_bar, show_step};
use super::verilog::write_all;
use nic_rtl::export::ExportedBlock;
use nic_rtl::NicConfig;
use nic_synth::{
    render_breakdown, render_table, synth_block_report, synth_breakdown, write_json, Device, Port,
    SynthInput, SynthReport,
};
use std::path::{Path, PathBuf};

/// Output options of `nic synth` (place and route of every block takes minutes).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SynthOutput {
    /// Print the reports as JSON on stdout instead of the table (no progress bar).
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Also write report.json to this file (`nic measurements all` reads
    /// `docs/measurements/synth-SECTION.json`).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}

/// Synthesise the blocks named in `only` (all when empty) for `device` into a fresh
/// per-run folder under `out`; prints the table (a block nextpnr cannot place on the device
/// is a row saying "does not fit" and which resource overflows; the last row is the
/// device's capacity), writes `report.json` and its charts
/// (`synth-resources.svg`: resources per block against the device; `synth-fmax.svg`: Fmax
/// against the target). Returns the reports and the run folder; a
/// missing nextpnr is an error before anything runs (it says to run scripts/setup.sh); a
/// failing tool is reported (exit status, log tail) and makes the result an error after
/// the other blocks ran.
pub fn synth_all(
    out: &Path,
    config: &NicConfig,
    only: &[String],
    target_mhz: f64,
    device: Device,
    output: &SynthOutput,
) -> Result<(Vec<SynthReport>, PathBuf), String> {
    device.nextpnr_program()?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let run_dir = out.join(format!("run-{stamp}-{device}"));
    let verilog_dir = run_dir.join("verilog");
    let blocks = write_all(&verilog_dir, config)?;
    for name in only {
        if !blocks
            .iter()
            .any(|(b, _)| &b.name == name || &b.module == name)
        {
            let known: Vec<&str> = blocks.iter().map(|(b, _)| b.name.as_str()).collect();
            return Err(format!(
                "no block named '{name}'; blocks: {}",
                known.join(", ")
            ));
        }
    }
    let chosen =
        |b: &ExportedBlock| only.is_empty() || only.iter().any(|n| n == &b.name || n == &b.module);
    let silent = output.quiet || output.json;
    let bar = progress_bar(
        silent,
        "nic synth",
        Some(blocks.iter().filter(|(b, _)| chosen(b)).count() as u64),
    );
    let mut reports = vec![];
    let mut failures = vec![];
    for (block, path) in &blocks {
        if !chosen(block) {
            continue;
        }
        show_step(
            &bar,
            format!("synth {} on {}", block.module, device.part()),
            silent,
        );
        let mut input = SynthInput::new(
            block.module.clone(),
            path.clone(),
            block
                .ports
                .iter()
                .map(|p| Port {
                    name: p.name.clone(),
                    input: p.input,
                    width: p.width,
                })
                .collect(),
        );
        input.target_mhz = target_mhz;
        input.device = device;
        match synth_block_report(&input, &run_dir) {
            Ok(r) => reports.push(r),
            Err(e) => {
                bar.suspend(|| eprintln!("synth {} failed: {e}", block.module));
                failures.push(block.module.clone());
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let json = run_dir.join("report.json");
    write_json(&reports, &json).map_err(|e| e.to_string())?;
    if let Some(copy) = &output.report {
        write_json(&reports, copy).map_err(|e| e.to_string())?;
    } // With --json the JSON goes to stdout and what was written to stderr.
    let say = |line: String| {
        if output.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    if output.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&reports).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", render_table(&reports));
    }
    say(format!(
        "report: {}\nlogs:   {}",
        json.display(),
        run_dir.display()
    ));
    if let Some(copy) = &output.report {
        say(format!("report: {}", copy.display()));
    }
    if !reports.is_empty() {
        for chart in nic_plots::synth::write_synth(&reports, &run_dir).map_err(|e| e.to_string())? {
            say(format!("chart:  {}", chart.display()));
        }
    }
    if failures.is_empty() {
        Ok((reports, run_dir))
    } else {
        Err(format!("synthesis failed for {}", failures.join(", ")))
    }
}

/// `nic synth --breakdown`: the NIC top of `config` synthesised for `device` with each of
/// its blocks kept apart, one row per block (LUTs, FFs, block RAMs); prints the table,
/// writes `breakdown.json` and its chart
/// (`synth-resources.svg`, against the device) in a fresh per-run folder under `out`.
pub fn breakdown(out: &Path, config: &NicConfig, device: Device) -> Result<PathBuf, String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let run_dir = out.join(format!("breakdown-{stamp}-{device}"));
    let top = nic_rtl::export::nic_top_block(config);
    std::fs::create_dir_all(&run_dir).map_err(|e| format!("{}: {e}", run_dir.display()))?;
    let verilog = run_dir.join(format!("{}.v", top.module));
    std::fs::write(&verilog, &top.verilog).map_err(|e| format!("{}: {e}", verilog.display()))?;
    eprintln!("synth {} (per-block breakdown) ...", top.module);
    let rows =
        synth_breakdown(&verilog, &top.module, device, &run_dir).map_err(|e| e.to_string())?;
    print!("{}", render_breakdown(&top.module, device, &rows));
    let dir = run_dir.join(format!("{}_breakdown", top.module));
    println!("report: {}", dir.join("breakdown.json").display());
    let chart = dir.join(nic_plots::synth::RESOURCES_SVG);
    nic_plots::synth::breakdown_chart(&top.module, &rows, &nic_plots::synth::Device::of(device))
        .and_then(|c| c.write_svg(&chart))
        .map_err(|e| e.to_string())?;
    println!("chart:  {}", chart.display());
    Ok(run_dir)
}
