//! `nic check rejoin`: the rejoin protocol model-checked (nic-check), with what it explored.
use clap::Args;
use nic_check::record::{peak_memory_bytes, CheckRecord};
use nic_check::rejoin::{Bounds, Bug, RejoinModel, Start};

/// Bounds of `nic check rejoin`.
#[derive(Args, Debug)]
pub struct RejoinCheckArgs {
    /// Nodes (2 to 8).
    #[arg(long, default_value_t = 3)]
    nodes: usize,
    /// Power-offs (each node may boot again after one).
    #[arg(long, default_value_t = 1)]
    reboots: u8,
    /// Control messages (BOOTING, PROBE, ACK) the network may lose.
    #[arg(long, default_value_t = 0)]
    losses: u8,
    /// Messages a link may hold.
    #[arg(long, default_value_t = 3)]
    link_capacity: usize,
    /// Start with every node off (first boot, crossing BOOTINGs) instead of joined.
    #[arg(long)]
    cold: bool,
    /// Explore paths of at most this many steps.
    #[arg(long)]
    max_depth: Option<usize>,
    /// No RDMA requests (the stale-access properties then check nothing).
    #[arg(long)]
    no_rdma: bool,
    /// RDMA requests travel on a path of their own, not ordered with control messages.
    #[arg(long)]
    rdma_own_path: bool,
    /// Plant a defect: rdma-at-boot, skip-fence, keep-stale-tpt, no-resend, no-rdma-ready.
    #[arg(long, value_parser = Bug::from_name)]
    bug: Option<Bug>,
    /// Explore states that differ only in the nodes' numbers separately (no symmetry
    /// reduction; slower, for comparison). A depth bound turns the reduction off too.
    #[arg(long)]
    no_symmetry: bool,
    /// Print the states explored so far to stderr every this many seconds.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    progress: Option<u64>,
    /// Checker threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Print what the check explored as JSON instead of the text (the failing properties
    /// without their traces).
    #[arg(long)]
    json: bool,
    /// Also write that JSON to this file (`nic measurements` reads it).
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
}

/// Runs the check and prints states explored, depth, time and each failure with its trace.
/// Fails (non-zero exit) if a property fails.
pub fn rejoin(args: &RejoinCheckArgs) -> Result<(), String> {
    let bounds = Bounds {
        nodes: args.nodes,
        reboots: args.reboots,
        losses: args.losses,
        link_capacity: args.link_capacity,
        rdma_requests: !args.no_rdma,
        rdma_own_path: args.rdma_own_path,
        start: if args.cold {
            Start::Cold
        } else {
            Start::Joined
        },
        max_depth: args.max_depth,
        symmetry: !args.no_symmetry,
    };
    let report = nic_check::check_reporting(
        bounds.clone(),
        args.bug,
        args.threads,
        args.bug.is_some(),
        args.progress.map(std::time::Duration::from_secs),
        &mut |p| {
            eprintln!(
                "{:.0} s: {} unique states, {} generated, depth {}",
                p.seconds, p.unique_states, p.states, p.max_depth
            )
        },
    )?;
    let record = CheckRecord::new(&report, args.threads, peak_memory_bytes());
    let json = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())?;
    if let Some(out) = &args.out {
        super::write_file(out, &json)?;
    }
    if args.json {
        println!("{json}");
        return match record.failed.len() {
            0 => Ok(()),
            n => Err(format!("{n} properties failed")),
        };
    }
    println!(
        "nodes {} reboots {} losses {} link capacity {} start {:?}{}{}{}",
        bounds.nodes,
        bounds.reboots,
        bounds.losses,
        bounds.link_capacity,
        bounds.start,
        if bounds.rdma_own_path {
            " rdma on its own path"
        } else {
            ""
        },
        bounds
            .max_depth
            .map(|d| format!(" max depth {d}"))
            .unwrap_or_default(),
        args.bug.map(|b| format!(" bug {b:?}")).unwrap_or_default()
    );
    println!(
        "unique states {}  generated {}  depth {}  wall time {:.2} s  ({}{})",
        report.unique_states,
        report.states,
        report.max_depth,
        report.seconds,
        record.search(),
        if report.symmetry {
            ": states are counted up to node renumbering"
        } else {
            ""
        }
    );
    if report.failures.is_empty() {
        println!("result: every property holds within these bounds");
        return Ok(());
    }
    let model = RejoinModel::new(bounds, args.bug)?;
    for f in &report.failures {
        println!("\nFAILED: {} ({} steps)", f.property, f.steps.len());
        print!("{}", model.replay(&f.steps));
        if let Some(c) = &f.continuation {
            let tail = c.len().saturating_sub(20);
            println!(
                "fault-free continuation ({} steps, last {}): {:?}",
                c.len(),
                c.len() - tail,
                &c[tail..]
            );
        }
    }
    Err(format!("{} properties failed", report.failures.len()))
}
