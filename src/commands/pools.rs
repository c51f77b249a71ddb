//! `nic bench pools`: buffer pools (002) against SendData on the same packets.

use nic_testbench::pools_bench::{bench_pools, PoolsBenchOptions};

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
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
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
    let rows = bench_pools(&o).map_err(|e| format!("nic bench pools: {e}"))?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    println!(
        "split-model driver (002), 2 hosts pushing {} packets each way at once; goodput in payload bytes per cycle per direction, median (min .. max) over {} seeds x 2 directions",
        o.packets,
        o.seeds.len()
    );
    println!(
        "{:>8} {:<6} {:>26} {:>9} {:>9}",
        "bytes", "mode", "goodput", "idata", "indicate"
    );
    for r in &rows {
        println!(
            "{:>8} {:<6} {:>9.2} ({:.2} .. {:.2}) {:>9} {:>9}",
            r.packet_bytes,
            r.mode,
            r.goodput.median,
            r.goodput.min,
            r.goodput.max,
            r.by_idata,
            r.by_message
        );
    }
    Ok(())
}
