//! `nic waves`: look at VCD/FST files without a GUI (the logic is in `nic_waves::inspect`).

use clap::{Args, Subcommand};
use nic_waves::inspect::{self, parse_time, select, WaveFile};
use std::io::Write;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum WavesCommand {
    /// Scopes and signals with their widths.
    List {
        /// A VCD or FST file.
        file: PathBuf,
    },
    /// A window as a text table: one row per change, buses in hex, changed cells marked `*`.
    Show(ShowArgs),
    /// Compare two runs signal by signal (RustHDL's and Verilator's scope names are
    /// paired); prints the first difference and exits non-zero on one, 0 when equal.
    Diff(DiffArgs),
    /// A timing diagram of a window as SVG (bits as lines, buses as segments with their values).
    Render(RenderArgs),
    /// A GTKWave save file (and a Surfer command file) showing the NIC's signals grouped by
    /// block: ports (cells, CSR, DMA), state machines, per-QP state, one group per block.
    Gtkw {
        /// A VCD or FST file.
        file: PathBuf,
        /// The save file (default: FILE with extension .gtkw); the Surfer command file goes
        /// beside it with extension .sucl.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Args, Debug)]
pub struct RenderArgs {
    /// A VCD or FST file.
    file: PathBuf,
    #[command(flatten)]
    window: WindowArgs,
    /// Where the picture goes: X.svg, or X.png (rasterised with resvg).
    #[arg(long)]
    out: PathBuf,
    /// Also write a PNG here.
    #[arg(long)]
    png: Option<PathBuf>,
    /// Width of the picture in pixels.
    #[arg(long, default_value_t = 1200)]
    width: u32,
    /// Title above the diagram (default: the file and the window).
    #[arg(long)]
    title: Option<String>,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// Run A (VCD or FST).
    a: PathBuf,
    /// Run B (VCD or FST).
    b: PathBuf,
    /// Only these signals (design names: dotted suffixes or globs, comma-separated).
    #[arg(long, short)]
    signals: Vec<String>,
    /// Ignore differences before this time (reset): `0`, `100ns`.
    #[arg(long, default_value = "0")]
    from: String,
    /// Compare up to this time (inclusive); default: the end of both files.
    #[arg(long)]
    to: Option<String>,
    /// Compare only at the rising edges of this clock (n-th edge against n-th edge), for
    /// runs that record changes at different instants within a cycle.
    #[arg(long)]
    clock: Option<String>,
    /// Also list the signals found in only one of the files.
    #[arg(long)]
    unmatched: bool,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A VCD or FST file.
    file: PathBuf,
    #[command(flatten)]
    window: WindowArgs,
}

/// Signals and a window of time.
#[derive(Args, Debug)]
pub struct WindowArgs {
    /// Signals: comma-separated dotted suffixes (`count`, `counter.q`) or globs (`csr_*`).
    #[arg(long, short, required = true)]
    signals: Vec<String>,
    /// Start of the window: `1500` (ps), `1500ps`, `2.5ns`, `10us`.
    #[arg(long, default_value = "0")]
    from: String,
    /// End of the window (inclusive); default: the end of the file.
    #[arg(long)]
    to: Option<String>,
}

impl WindowArgs {
    fn times(&self) -> Result<(u64, u64), String> {
        let from = parse_time(&self.from).map_err(|e| format!("--from: {e}"))?;
        let to = match &self.to {
            Some(t) => parse_time(t).map_err(|e| format!("--to: {e}"))?,
            None => u64::MAX,
        };
        inspect::check_window(from, to).map_err(|e| e.to_string())?;
        Ok((from, to))
    }
}

pub fn run(cmd: WavesCommand) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match cmd {
        WavesCommand::List { file } => {
            let file = WaveFile::open(&file).map_err(|e| e.to_string())?;
            inspect::write_listing(file.header(), &mut out).map_err(|e| e.to_string())
        }
        WavesCommand::Show(args) => {
            let (from, to) = args.window.times()?;
            let file = WaveFile::open(&args.file).map_err(|e| e.to_string())?;
            let vars = select(file.header(), &args.window.signals).map_err(|e| e.to_string())?;
            inspect::write_table(file, &vars, from, to, &mut out).map_err(|e| e.to_string())?;
            out.flush().map_err(|e| e.to_string())
        }
        WavesCommand::Render(args) => {
            let (from, to) = args.window.times()?;
            let file = WaveFile::open(&args.file).map_err(|e| e.to_string())?;
            let to = if args.window.to.is_some() {
                to
            } else {
                file.end_time().ok_or_else(|| {
                    format!(
                        "{}: give --to (the file's end time is not known)",
                        args.file.display()
                    )
                })?
            };
            let vars = select(file.header(), &args.window.signals).map_err(|e| e.to_string())?;
            let options = inspect::RenderOptions {
                width_px: args.width,
                title: args.title.clone(),
            };
            let svg =
                inspect::render_svg(file, &vars, from, to, &options).map_err(|e| e.to_string())?;
            let png_out = args
                .out
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("png"));
            let mut targets = vec![(args.out.clone(), png_out)];
            if let Some(p) = &args.png {
                targets.push((p.clone(), true));
            }
            for (path, png) in targets {
                let bytes = if png {
                    inspect::svg_to_png(&svg, &path).map_err(|e| e.to_string())?
                } else {
                    svg.clone().into_bytes()
                };
                std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
                writeln!(out, "{}", path.display()).map_err(|e| e.to_string())?;
            }
            Ok(())
        }
        WavesCommand::Gtkw {
            file: path,
            out: save,
        } => {
            let file = WaveFile::open(&path).map_err(|e| e.to_string())?;
            let groups = inspect::nic_groups(file.header());
            let save = save.unwrap_or_else(|| path.with_extension("gtkw"));
            let surfer = save.with_extension("sucl");
            let dumpfile = std::path::absolute(&path).unwrap_or(path.clone());
            let gtkw = inspect::write_gtkw(file.header(), &groups, &dumpfile);
            std::fs::write(&save, gtkw).map_err(|e| format!("{}: {e}", save.display()))?;
            std::fs::write(&surfer, inspect::write_surfer(&groups))
                .map_err(|e| format!("{}: {e}", surfer.display()))?;
            for g in &groups {
                writeln!(out, "{:>5}  {}", g.count(), g.title).map_err(|e| e.to_string())?;
            }
            writeln!(
                out,
                "gtkwave {}\nsurfer {} --command-file {}",
                save.display(),
                path.display(),
                surfer.display()
            )
            .map_err(|e| e.to_string())
        }
        WavesCommand::Diff(args) => {
            let options = inspect::DiffOptions {
                signals: args.signals.clone(),
                from: parse_time(&args.from).map_err(|e| format!("--from: {e}"))?,
                to: match &args.to {
                    Some(t) => Some(parse_time(t).map_err(|e| format!("--to: {e}"))?),
                    None => None,
                },
                clock: args.clock.clone(),
            };
            if let Some(to) = options.to {
                inspect::check_window(options.from, to).map_err(|e| e.to_string())?;
            }
            let a = WaveFile::open(&args.a).map_err(|e| e.to_string())?;
            let b = WaveFile::open(&args.b).map_err(|e| e.to_string())?;
            let report = inspect::diff(a, b, &options).map_err(|e| e.to_string())?;
            writeln!(out, "{report}").map_err(|e| e.to_string())?;
            if args.unmatched {
                for n in &report.only_a {
                    writeln!(out, "only in a: {n}").map_err(|e| e.to_string())?;
                }
                for n in &report.only_b {
                    writeln!(out, "only in b: {n}").map_err(|e| e.to_string())?;
                }
            }
            if report.differs() {
                Err("the waveforms differ".into())
            } else {
                Ok(())
            }
        }
    }
}
