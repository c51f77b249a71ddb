//! `nic measurements`: writes the tables of docs/measurements.md from the JSON the benches,
//! the soak, the model check and synthesis wrote, between the page's markers, with the
//! machine, the date and the tool version (`nic_plots::measurements`). The prose around
//! the tables stays as written.

use nic_plots::measurements::{
    load_synth, merge_rejoin, regenerate, stamp, write_block, Tool, BLOCKS, INDEX,
};
use nic_synth::render_markdown;
use nic_testbench::rejoin_bench::render_markdown as rejoin_markdown;
use std::path::PathBuf;

/// `nic measurements`: which tables.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum MeasurementsCommand {
    /// Every generated table of the page from the JSON files in the source folders, and
    /// the page's list of them; a table whose files are not there stays as it is. Files:
    /// datapath.json and nic.json (`nic bench datapath`, `nic bench nic --sizes ...`:
    /// speed, goodput), pools.json, regcache.json, rejoin.json (or rejoin.NAME.json, merged),
    /// check.NAME.json (`nic check rejoin --out`), soak.NAME.json (`nic soak --out`),
    /// multi-nic.NAME.json (`nic sim --scenario scenarios/multi-nic-NAME.toml --report`),
    /// synth-SECTION.json or synth-SECTION.NAME.json (`nic synth --report FILE`). A
    /// malformed or unknown file, or a table the page has no markers for, is an error that
    /// writes nothing.
    All {
        /// Folders holding the JSON files.
        #[arg(long = "from", default_value = "docs/measurements")]
        from: Vec<PathBuf>,
        /// The page to write.
        #[arg(long, default_value = "docs/measurements.md")]
        doc: PathBuf,
    },
    /// The rejoin bench's tables ("Rejoin against the heartbeat baseline"), from one or
    /// more `nic bench rejoin` JSON files (sizes run as separate processes are merged).
    Rejoin {
        #[arg(default_value = "target/bench/rejoin.json")]
        files: Vec<PathBuf>,
        /// The page to write.
        #[arg(long, default_value = "docs/measurements.md")]
        doc: PathBuf,
    },
    /// A synthesis table from `nic synth` report.json files (their blocks in file order),
    /// between the markers `<!-- synth-SECTION:begin -->` and `<!-- synth-SECTION:end -->`.
    Synth {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Which table of the page (its markers' name).
        #[arg(long)]
        section: String,
        /// The page to write.
        #[arg(long, default_value = "docs/measurements.md")]
        doc: PathBuf,
    },
}

fn names(files: &[PathBuf]) -> Vec<String> {
    files.iter().map(|f| f.display().to_string()).collect()
}

pub fn run(cmd: MeasurementsCommand) -> Result<(), String> {
    match cmd {
        MeasurementsCommand::All { from, doc } => {
            let outcomes = regenerate(&doc, &from, "nic measurements all")?;
            for o in outcomes.iter().filter(|o| o.name != INDEX) {
                if o.files.is_empty() {
                    let run = BLOCKS
                        .iter()
                        .find(|b| b.name == o.name)
                        .map_or("`nic synth ... --report DIR/<block>.json`", |b| b.run);
                    println!(
                        "{:<20} left as it is, no JSON for it; written by {}",
                        o.name,
                        run.replace(
                            "DIR",
                            &from
                                .first()
                                .map_or("DIR".into(), |d| d.display().to_string())
                        )
                    );
                } else {
                    println!("{:<20} written from {}", o.name, names(&o.files).join(", "));
                }
            }
            println!("{}: written", doc.display());
            Ok(())
        }
        MeasurementsCommand::Rejoin { files, doc } => {
            let merged = merge_rejoin(&files)?;
            let block = format!(
                "{}\n{}",
                stamp("nic measurements rejoin", &names(&files), Tool::Verilator),
                rejoin_markdown(&merged)
            );
            write_block(&doc, "rejoin-tables", &block)?;
            println!(
                "{}: rejoin tables written from {}",
                doc.display(),
                names(&files).join(", ")
            );
            Ok(())
        }
        MeasurementsCommand::Synth {
            files,
            section,
            doc,
        } => {
            let reports = load_synth(&files)?;
            let block = format!(
                "{}\n{}",
                stamp("nic measurements synth", &names(&files), Tool::Yosys),
                render_markdown(&reports)
            );
            write_block(&doc, &format!("synth-{section}"), &block)?;
            println!(
                "{}: synthesis table `{section}` written from {}",
                doc.display(),
                names(&files).join(", ")
            );
            Ok(())
        }
    }
}
