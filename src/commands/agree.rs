//! `nic agree`: three simulators agree. Each block's stimulus is recorded on its
//! Verilator model and replayed in RustHDL stepping, Verilator and Icarus Verilog; every
//! output is compared every cycle (nic_testbench::three_simulators).

use nic_testbench::three_simulators::{agree_blocks, exported_block, ThreeSimError, Windows};

/// Options of `nic agree`.
#[derive(clap::Args, Debug, Clone)]
pub struct AgreeArgs {
    /// Only these blocks (e.g. --block crc32 --block nic_top); default: every exported
    /// block and both NIC tops (with --long also the 64-queue-pair top).
    #[arg(long = "block")]
    pub blocks: Vec<String>,
    /// The long windows (100,000 cycles of each block and 60,000 of each top in RustHDL
    /// and Verilator; 20,000 and 10,000 in Icarus; a few minutes) instead of the default
    /// suite's (5,000 and 3,000; 1,000 in Icarus).
    #[arg(long)]
    pub long: bool,
    /// RustHDL and Verilator cycles of every block chosen (overrides the windows).
    #[arg(long)]
    pub cycles: Option<usize>,
    /// Icarus cycles of every block chosen (overrides the windows; still capped where
    /// Icarus cannot go further today, which the table notes).
    #[arg(long)]
    pub icarus_cycles: Option<usize>,
    /// Seed of the recorded stimuli.
    #[arg(long, default_value_t = 17)]
    pub seed: u64,
}

/// `nic agree`: prints one line per block; an error names every block that disagreed.
pub fn run(args: &AgreeArgs) -> Result<(), String> {
    for name in &args.blocks {
        exported_block(name).map_err(|e| format!("nic agree: {e}"))?;
    }
    let mut windows = if args.long {
        Windows::LONG
    } else {
        Windows::SHORT
    };
    if let Some(c) = args.cycles {
        windows.block_cycles = c;
        windows.top_cycles = c;
    }
    if let Some(c) = args.icarus_cycles {
        windows.block_icarus_cycles = c;
        windows.top_icarus_cycles = c;
    }
    let select = |name: &str| {
        if args.blocks.is_empty() {
            args.long || name != "nic_top_qp64"
        } else {
            args.blocks.iter().any(|b| b == name)
        }
    };
    println!(
        "{:<22} {:>9} {:>8} {:>12} {:>12} {:>10}   (cycles: RustHDL and Verilator, Icarus; then cycles/s)",
        "block", "cycles", "icarus", "RustHDL/s", "Verilator/s", "Icarus/s"
    );
    let results = agree_blocks(&select, windows, args.seed, &mut |name, r| match r {
        Ok(a) => println!(
            "{:<22} {:>9} {:>8} {:>12.0} {:>12.0} {:>10.0}   identical",
            name,
            a.cycles,
            a.icarus_cycles,
            a.cycles_per_s[0],
            a.cycles_per_s[1],
            a.cycles_per_s[2],
        ),
        Err(ThreeSimError::Disagree(d)) => println!("{name:<22} DIFFERS\n{d}"),
        Err(e) => println!("{name:<22} FAILED: {e}"),
    });
    let failed: Vec<&str> = results
        .iter()
        .filter(|(_, r)| r.is_err())
        .map(|(n, _)| n.as_str())
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "nic agree: {} of {} blocks did not agree: {}",
            failed.len(),
            results.len(),
            failed.join(", ")
        ))
    }
}
