//! `nic bench pools`: buffer pools (002) against SendData on the same packets.

use super::bench::BenchOutput;
use nic_testbench::pools_bench::{bench_pools_with, PoolsBenchOptions, SEND_MAX};

/// Options of `nic bench pools`.
#[derive(clap::Args, Debug, Clone)]
pub struct PoolsBenchArgs {
    /// Packet sizes, comma separated (multiples of 8; SendData only up to a receive buffer).
    #[arg(long, value_delimiter = ',', default_value = "256,1000,4096")]
    pub packet_bytes: Vec<u32>,
    /// Packets each way per run.
    #[arg(long, default_value_t = 200)]
    pub packets: u32,
    /// Seeds, comma separated (the spread is over them and both directions).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    pub seeds: Vec<u64>,
    #[command(flatten)]
    pub output: BenchOutput,
}

/// Runs the bench and prints the table.
pub fn run(args: &PoolsBenchArgs) -> Result<(), String> {
    let o = PoolsBenchOptions {
        packet_bytes: args.packet_bytes.clone(),
        packets: args.packets,
        seeds: args.seeds.clone(),
    };
    if o.packets == 0 || o.seeds.is_empty() {
        return Err("nic bench pools: need --packets >= 1 and at least one seed".into());
    }
    let modes: u64 = o
        .packet_bytes
        .iter()
        .map(|&b| if b <= SEND_MAX { 2 } else { 1 })
        .sum();
    let bar = args
        .output
        .progress("nic bench pools", Some(modes * o.seeds.len() as u64));
    let mut started = 0;
    let rows = bench_pools_with(&o, |what| {
        if started > 0 {
            bar.inc(1);
        }
        started += 1;
        args.output.step(&bar, what.to_string());
    })
    .map_err(|e| format!("nic bench pools: {e}"))?;
    bar.finish_and_clear();
    let table = || {
        let mut s = format!(
            "split-model driver (002), 2 hosts pushing {} packets each way at once; goodput in payload bytes per cycle per direction, median (min .. max) over {} seeds x 2 directions\n",
            o.packets,
            o.seeds.len()
        );
        s.push_str(&format!(
            "{:>8} {:<6} {:>26} {:>9} {:>9}\n",
            "bytes", "mode", "goodput", "idata", "indicate"
        ));
        for r in &rows {
            s.push_str(&format!(
                "{:>8} {:<6} {:>9.2} ({:.2} .. {:.2}) {:>9} {:>9}\n",
                r.packet_bytes,
                r.mode,
                r.goodput.median,
                r.goodput.min,
                r.goodput.max,
                r.by_idata,
                r.by_message
            ));
        }
        s
    };
    args.output.finish("pools", &rows, table, |dir| {
        nic_plots::bench::write_sizes(Some(&rows), None, dir)
    })
}
