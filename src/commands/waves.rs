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
    }
}
