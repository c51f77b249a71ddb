//! `nic bench regcache`: the registration cache (004) against registering per request.

use nic_testbench::regcache_bench::{bench_regcache, RegcacheBenchOptions, RegcacheRun, Spread};
use std::path::PathBuf;

/// Options of `nic bench regcache`.
#[derive(clap::Args, Debug, Clone)]
pub struct RegcacheBenchArgs {
    /// Hosts, each sending to and receiving from the others (2..=16).
    #[arg(long, default_value_t = 4)]
    pub hosts: usize,
    /// Messages in all (rendezvous: register, RDMA WRITE, done).
    #[arg(long, default_value_t = 240)]
    pub messages: usize,
    /// Receive buffers per host.
    #[arg(long, default_value_t = 32)]
    pub buffers: usize,
    /// Buffers nine messages in ten go to.
    #[arg(long, default_value_t = 4)]
    pub working_set: usize,
    /// Bytes per message.
    #[arg(long, default_value_t = 2048)]
    pub message_bytes: u32,
    /// Chance per message that the receiver frees and reallocates the buffer first.
    #[arg(long, default_value_t = 0.02)]
    pub free_rate: f64,
    /// Seeds, comma separated (the spread is over them).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    pub seeds: Vec<u64>,
    /// Print the JSON report instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON report here.
    #[arg(long, default_value = "target/bench/regcache.json")]
    pub out: PathBuf,
}

fn spread(s: &Spread, unit: &str) -> String {
    format!("{:.2}{unit} ({:.2} .. {:.2})", s.median, s.min, s.max)
}

/// Runs both modes on every seed and prints the comparison.
pub fn run(args: &RegcacheBenchArgs) -> Result<(), String> {
    let o = RegcacheBenchOptions {
        hosts: args.hosts,
        messages: args.messages,
        buffers: args.buffers,
        working_set: args.working_set,
        message_bytes: args.message_bytes,
        free_rate: args.free_rate,
        seeds: args.seeds.clone(),
        ..Default::default()
    };
    o.check().map_err(|e| format!("nic bench regcache: {e}"))?;
    if !args.json {
        println!(
            "registration cache (004): {} hosts, {} messages of {} bytes by rendezvous, {} buffers per host, working set {}, free rate {}",
            o.hosts, o.messages, o.message_bytes, o.buffers, o.working_set, o.free_rate
        );
        println!(
            "{:<9} {:>5} {:>9} {:>14} {:>16} {:>10} {:>8}",
            "mode", "seed", "cycles", "registrations", "deregistrations", "hit rate", "cells"
        );
    }
    let quiet = args.json;
    let report = bench_regcache(&o, |r: &RegcacheRun| {
        if !quiet {
            let mode = if r.cached { "cache" } else { "no cache" };
            let rate = if r.cached {
                format!("{:.3}", r.hits as f64 / (r.hits + r.misses).max(1) as f64)
            } else {
                "-".into()
            };
            println!(
                "{mode:<9} {:>5} {:>9} {:>14} {:>16} {rate:>10} {:>8}",
                r.seed, r.cycles, r.registrations, r.deregistrations, r.cells
            );
        }
    })?;
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    if let Some(dir) = args.out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&args.out, &json).map_err(|e| format!("{}: {e}", args.out.display()))?;
    if args.json {
        println!("{json}");
        return Ok(());
    }
    println!("median (min .. max) over {} seeds:", o.seeds.len());
    println!(
        "  hit rate                       {}",
        spread(&report.hit_rate, "")
    );
    println!(
        "  registrations, without / with  {}",
        spread(&report.registration_ratio, "x")
    );
    println!(
        "  cycles, without / with         {}",
        spread(&report.speedup, "x")
    );
    println!(
        "  cycles saved per message       {}",
        spread(&report.cycles_saved_per_message, "")
    );
    println!("report: {}", args.out.display());
    Ok(())
}
