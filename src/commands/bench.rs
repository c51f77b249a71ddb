//! What every `nic bench` shares ([`BenchOutput`]: `--json`, `--quiet`, `--plot DIR`,
//! `--out FILE`, a progress bar), and `nic bench datapath` / `nic bench nic`.

use indicatif::{ProgressBar, ProgressStyle};
use nic_plots::ChartError;
use nic_testbench::datapath::DatapathOptions;
use nic_testbench::nic_bench::NicBenchOptions;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Output options of every bench.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BenchOutput {
    /// Print the results as JSON on stdout instead of the table (no progress bar).
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Also draw the bench's charts as SVG into this folder (`nic plot` draws them later
    /// from the JSON).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Where the JSON results are written (default: target/bench/<bench>.json).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// A progress bar on stderr: `len` steps, or a spinner when the count is not known; a
/// hidden bar when `hidden` (`--quiet`, `--json`).
pub fn progress_bar(hidden: bool, what: &str, len: Option<u64>) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = match len {
        Some(n) => ProgressBar::new(n).with_style(
            ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} ({eta} left) {msg}",
            )
            .expect("a valid template"),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{prefix} [{elapsed_precise}] {spinner} {msg}")
                .expect("a valid template"),
        ),
    };
    bar.set_prefix(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// Shows what a long run does now: on the bar, or as a line on stderr when the bar is
/// hidden and the run is not `silent` (stderr is not a terminal: a log of a long run).
pub fn show_step(bar: &ProgressBar, what: String, silent: bool) {
    if bar.is_hidden() {
        if !silent {
            eprintln!("  {what} ...");
        }
    } else {
        bar.set_message(what);
    }
}

impl BenchOutput {
    /// A progress bar on stderr: `len` steps, or a spinner when the count is not known;
    /// hidden with `--quiet` or `--json`.
    pub fn progress(&self, what: &str, len: Option<u64>) -> ProgressBar {
        progress_bar(self.quiet || self.json, what, len)
    }

    /// Shows what the bench does now: on the bar, or as a line on stderr when stderr is
    /// not a terminal (a log of a long run), unless `--quiet` or `--json`.
    pub fn step(&self, bar: &ProgressBar, what: String) {
        show_step(bar, what, self.quiet || self.json)
    }

    /// The JSON file of bench `name`.
    pub fn out_path(&self, name: &str) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from("target/bench").join(format!("{name}.json")))
    }

    /// Writes `result` as JSON to [`Self::out_path`]; prints it (`--json`) or `table()`
    /// and where the file went; draws the charts with `draw` into `--plot DIR`.
    pub fn finish<T: Serialize>(
        &self,
        name: &str,
        result: &T,
        table: impl FnOnce() -> String,
        draw: impl FnOnce(&Path) -> Result<Vec<PathBuf>, ChartError>,
    ) -> Result<(), String> {
        let json = serde_json::to_string_pretty(result).map_err(|e| e.to_string())?;
        let out = self.out_path(name);
        super::write_file(&out, &json)?;
        if self.json {
            println!("{json}");
        } else {
            print!("{}", table());
            println!("results: {}", out.display());
        }
        if let Some(dir) = &self.plot {
            for path in draw(dir).map_err(|e| format!("nic bench {name} --plot: {e}"))? {
                if self.json {
                    eprintln!("chart: {}", path.display());
                } else {
                    println!("chart: {}", path.display());
                }
            }
        }
        Ok(())
    }
}

/// Options of `nic bench datapath`.
#[derive(clap::Args, Debug, Clone)]
pub struct DatapathBenchArgs {
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Messages of the stimulus (16 KiB each).
    #[arg(long, default_value_t = 12)]
    pub messages: usize,
    /// Repeat the Verilator replay for at least this long.
    #[arg(long, default_value_t = 1.0)]
    pub min_seconds: f64,
    #[command(flatten)]
    pub output: BenchOutput,
}

/// `nic bench datapath`.
pub fn datapath(args: &DatapathBenchArgs) -> Result<(), String> {
    let options = DatapathOptions {
        seed: args.seed,
        messages: args.messages,
        fixed_length: Some(16 * 1024),
        idle: 0.0,
        backpressure: 0.0,
        ..Default::default()
    };
    let bar = args.output.progress("nic bench datapath", None);
    args.output
        .step(&bar, "recording and replaying on both backends".into());
    let b = nic_testbench::bench::bench_datapath(&options, args.min_seconds)
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    if !b.scoreboard.passed() {
        return Err(format!(
            "scoreboard failed during the benchmark: {:?}",
            b.scoreboard.violations
        ));
    }
    let table = || {
        format!(
            "nic bench datapath: {} cycles of saturating traffic ({} messages of 16 KiB, all opcodes), replayed on both backends
  Verilator        {:>12.0} cycles/s
  RustHDL stepping {:>12.0} cycles/s
  ratio            {:>12.1} x   (target >= 50)
  segmenter goodput / format limit {:.4}   (target >= 0.99; limit = payload/cell bytes = {:.4})
",
            b.cycles,
            args.messages,
            b.verilator_cycles_per_s,
            b.rusthdl_cycles_per_s,
            b.speedup,
            b.goodput_ratio,
            b.format_limit
        )
    };
    args.output.finish("datapath", &b, table, |dir| {
        nic_plots::bench::write_speed(Some(&b), None, dir)
    })
}

/// Options of `nic bench nic`.
#[derive(clap::Args, Debug, Clone)]
pub struct NicBenchArgs {
    /// Cycles of saturating traffic to record.
    #[arg(long, default_value_t = 60_000)]
    pub cycles: u64,
    /// Replay only this many cycles of the recording on RustHDL (the slow backend: about
    /// 3 k cycles/s); by default the whole recording, about 20 s for 60,000 cycles.
    #[arg(long)]
    pub rusthdl_cycles: Option<u64>,
    /// RDMA WRITE length, bytes (<= 65536).
    #[arg(long, default_value_t = 16384)]
    pub message_bytes: u32,
    /// Messages of each goodput stream.
    #[arg(long, default_value_t = 24)]
    pub goodput_messages: u32,
    /// Repeat the Verilator replay for at least this long.
    #[arg(long, default_value_t = 1.0)]
    pub min_seconds: f64,
    /// Also measure the goodput stream at these message sizes, comma separated (bytes,
    /// 1..=65536), for goodput and message rate against size; e.g.
    /// `--sizes 64,256,1024,4096,16384,65536 --cycles 5000 --rusthdl-cycles 500`.
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<u32>,
    /// Instead of the above: the message rate of RDMA WRITEs of this many bytes on 1 and
    /// on 4 queue pairs, and one on each of 64 queue pairs (the 64-queue-pair top: the
    /// rejoin's fan-out; also a 32-byte inline SEND each), against the wire limit for that size, at DMA latencies 3, 6 and
    /// 12 (`nic bench nic --size 64`; results in target/bench/nic-rate.json).
    #[arg(long, value_name = "BYTES")]
    pub size: Option<u32>,
    /// Messages per queue pair of each --size run.
    #[arg(long, default_value_t = 200)]
    pub rate_messages: u32,
    #[command(flatten)]
    pub output: BenchOutput,
}

/// `nic bench nic --size B`: the message-rate runs.
fn nic_rate(args: &NicBenchArgs, bytes: u32) -> Result<(), String> {
    use nic_testbench::message_rate::{message_rates, render_markdown};
    let bar = args.output.progress("nic bench nic --size", Some(12));
    let runs = message_rates(bytes, args.rate_messages, |what| {
        bar.inc(1);
        args.output.step(&bar, what.to_string());
    })
    .map_err(|e| format!("nic bench nic --size {bytes}: {e}"))?;
    bar.finish_and_clear();
    let table = || {
        format!(
            "nic bench nic --size {bytes}: RDMA WRITE message rate against the wire limit (target >= 0.9 on 4 QPs)\n{}",
            render_markdown(&runs)
        )
    };
    args.output.finish("nic-rate", &runs, table, |_| Ok(vec![]))
}

/// `nic bench nic`: prints the NIC top's numbers, measured side by side in one run.
pub fn nic(args: &NicBenchArgs) -> Result<(), String> {
    if let Some(bytes) = args.size {
        return nic_rate(args, bytes);
    }
    let options = NicBenchOptions {
        cycles: args.cycles,
        rusthdl_cycles: args.rusthdl_cycles,
        message_bytes: args.message_bytes,
        goodput_messages: args.goodput_messages,
        min_seconds: args.min_seconds,
        sizes: args.sizes.clone(),
        ..Default::default()
    };
    for &bytes in std::iter::once(&options.message_bytes).chain(&options.sizes) {
        if bytes == 0 || bytes > nic_abi::MAX_MESSAGE_LENGTH {
            return Err(format!(
                "nic bench nic: message sizes must be 1..={} bytes, got {bytes}",
                nic_abi::MAX_MESSAGE_LENGTH
            ));
        }
    }
    if options.goodput_messages == 0 || options.cycles == 0 {
        return Err("nic bench nic: --cycles and --goodput-messages must be at least 1".into());
    }
    let bar = args
        .output
        .progress("nic bench nic", Some(4 + options.sizes.len() as u64));
    let b = nic_testbench::nic_bench::bench_nic_with(&options, |what| {
        bar.inc(1);
        args.output.step(&bar, what.to_string());
    })?;
    bar.finish_and_clear();
    let table = || {
        let mut s = format!(
            "nic bench nic: {} cycles of saturating RDMA WRITE traffic ({} bytes, {} QPs, both directions), NIC 0's inputs replayed on both backends
  Verilator        {:>12.0} cycles/s
  RustHDL stepping {:>12.0} cycles/s   ({} of the {} cycles replayed; outputs identical every cycle)
  ratio            {:>12.1} x   (target >= 80)
  whole co-simulation (2 NICs, host memories, links): {:.0} NIC-cycles/s
  RDMA WRITE goodput / format limit {:.4}   (target >= 0.95; {} bytes in {} cycles, limit = payload/cell bytes = {:.4}, retransmission off)
",
            b.recorded_cycles,
            options.message_bytes,
            options.queue_pairs,
            b.verilator_cycles_per_s,
            b.rusthdl_cycles_per_s,
            b.rusthdl_replayed_cycles,
            b.recorded_cycles,
            b.speedup,
            b.system_nic_cycles_per_s,
            b.goodput_ratio,
            b.goodput_bytes,
            b.goodput_cycles,
            b.format_limit
        );
        if !b.sizes.is_empty() {
            s.push_str(&format!(
                "  goodput per message size ({} messages each, one QP):\n  {:>8} {:>14} {:>18} {:>14}\n",
                options.goodput_messages, "bytes", "bytes/cycle", "msgs/1000 cycles", "/ format limit"
            ));
            for g in &b.sizes {
                s.push_str(&format!(
                    "  {:>8} {:>14.3} {:>18.2} {:>14.4}\n",
                    g.message_bytes,
                    g.bytes as f64 / g.cycles as f64,
                    1000.0 * g.messages as f64 / g.cycles as f64,
                    g.ratio
                ));
            }
        }
        s
    };
    args.output.finish("nic", &b, table, |dir| {
        nic_plots::bench::write_speed(None, Some(&b), dir)
    })
}
