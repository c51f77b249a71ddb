//! `nic bench regcache`: the registration cache (004) against registering per request.

use super::bench::BenchOutput;
use nic_testbench::regcache_bench::{bench_regcache, RegcacheBenchOptions, RegcacheRun, Spread};

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
    #[command(flatten)]
    pub output: BenchOutput,
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
    let bar = args
        .output
        .progress("nic bench regcache", Some(2 * o.seeds.len() as u64));
    let report = bench_regcache(&o, |r: &RegcacheRun| {
        bar.inc(1);
        args.output.step(
            &bar,
            format!(
                "{} seed {} done",
                if r.cached { "cache" } else { "no cache" },
                r.seed
            ),
        );
    })?;
    bar.finish_and_clear();
    let table = || {
        let mut s = format!(
            "registration cache (004): {} hosts, {} messages of {} bytes by rendezvous, {} buffers per host, working set {}, free rate {}\n",
            o.hosts, o.messages, o.message_bytes, o.buffers, o.working_set, o.free_rate
        );
        s.push_str(&format!(
            "{:<9} {:>5} {:>9} {:>14} {:>16} {:>10} {:>8}\n",
            "mode", "seed", "cycles", "registrations", "deregistrations", "hit rate", "cells"
        ));
        for r in &report.runs {
            let mode = if r.cached { "cache" } else { "no cache" };
            let rate = if r.cached {
                format!("{:.3}", r.hits as f64 / (r.hits + r.misses).max(1) as f64)
            } else {
                "-".into()
            };
            s.push_str(&format!(
                "{mode:<9} {:>5} {:>9} {:>14} {:>16} {rate:>10} {:>8}\n",
                r.seed, r.cycles, r.registrations, r.deregistrations, r.cells
            ));
        }
        s.push_str(&format!(
            "median (min .. max) over {} seeds:\n",
            o.seeds.len()
        ));
        for (name, value, unit) in [
            ("hit rate                      ", &report.hit_rate, ""),
            (
                "registrations, without / with ",
                &report.registration_ratio,
                "x",
            ),
            ("cycles, without / with        ", &report.speedup, "x"),
            (
                "cycles saved per message      ",
                &report.cycles_saved_per_message,
                "",
            ),
        ] {
            s.push_str(&format!("  {name} {}\n", spread(value, unit)));
        }
        s
    };
    args.output.finish("regcache", &report, table, |dir| {
        nic_plots::bench::write_regcache(&report, dir)
    })
}
