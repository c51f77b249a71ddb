//! `nic bench pools`: the split-model driver of 002 moving the same packets by RDMA WRITE
//! into buffer pools and by SendData messages (plain SEND/RECV), on the Verilated NICs,
//! per packet size, with the spread over seeds.
//!
//! Each run is the `[split_driver]` exchange of [`crate::split_driver`] between two hosts
//! and nothing else: both ends push `packets` packets to each other at once. Goodput is
//! payload bytes per cycle per direction, from the first packet sent to the last checked
//! on arrival. SendData carries at most a receive buffer (the driver's
//! `recv_buffer_bytes`, 1024 here, less the message header), so larger packets run on
//! the pools only.

use crate::regcache_bench::Spread;
use crate::scenario::Scenario;
use crate::scenario_run::{run_scenario, RunOptions};
use serde::{Deserialize, Serialize};

/// Options of the bench.
#[derive(Clone, Debug)]
pub struct PoolsBenchOptions {
    pub packet_bytes: Vec<u32>,
    pub packets: u32,
    pub seeds: Vec<u64>,
}

impl Default for PoolsBenchOptions {
    fn default() -> Self {
        PoolsBenchOptions {
            packet_bytes: vec![256, 1000, 4096],
            packets: 200,
            seeds: vec![1, 2, 3],
        }
    }
}

/// One packet size and mode over the seeds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PoolsBenchRow {
    pub mode: String,
    pub packet_bytes: u32,
    /// Goodput per direction (bytes per cycle), both directions of every seed.
    pub goodput: Spread,
    /// Indications that went in the immediate / in a BufferRDMAIndicate message.
    pub by_idata: u64,
    pub by_message: u64,
}

/// The largest SendData packet with 1024-byte receive buffers.
pub const SEND_MAX: u32 = 1024 - nic_driver::pools::HEADER_BYTES as u32 - 4;

fn scenario(mode: &str, bytes: u32, packets: u32, seed: u64) -> Result<Scenario, String> {
    let elements = if bytes > 65535 { 4 } else { 16 };
    let text = format!(
        "name = \"pools-bench\"\nhosts = 2\ncycles = {}\nseed = {seed}\n\n[workload]\nrate = 0.0\n\n[split_driver]\nhost = 0\nio_unit = 1\npackets = {packets}\npacket_bytes = {bytes}\nelements = {elements}\nelement_bytes = {}\nmode = \"{mode}\"\nflush_every = 0\n",
        // Generous: the exchange stops at 3/4 of the run.
        400_000 + packets as u64 * bytes as u64,
        bytes.max(512).next_multiple_of(8),
    );
    Scenario::parse(&text, "pools-bench").map_err(|e| e.to_string())
}

/// Both modes at every size (SendData only where it fits).
pub fn bench_pools(o: &PoolsBenchOptions) -> Result<Vec<PoolsBenchRow>, String> {
    bench_pools_with(o, |_| {})
}

/// [`bench_pools`], telling `progress` about each run as it starts.
pub fn bench_pools_with(
    o: &PoolsBenchOptions,
    mut progress: impl FnMut(&str),
) -> Result<Vec<PoolsBenchRow>, String> {
    let mut rows = vec![];
    for &bytes in &o.packet_bytes {
        if bytes == 0 || bytes % 8 != 0 || bytes > 65536 {
            return Err(format!(
                "packet bytes: {bytes} is not a multiple of 8 in 8..=65536"
            ));
        }
        for mode in ["pools", "send"] {
            if mode == "send" && bytes > SEND_MAX {
                continue;
            }
            let mut goodput = vec![];
            let (mut by_idata, mut by_message) = (0, 0);
            for &seed in &o.seeds {
                progress(&format!("{mode} {bytes} bytes seed {seed}"));
                let r = run_scenario(
                    &scenario(mode, bytes, o.packets, seed)?,
                    RunOptions::default(),
                )
                .map_err(|e| e.to_string())?;
                if !r.passed {
                    return Err(format!("{mode} {bytes} bytes seed {seed}: {}", r.summary()));
                }
                let sd = r.split_driver.ok_or("no split-driver report")?;
                for dir in ["0->1", "1->0"] {
                    if sd.delivered.get(dir).copied() != Some(o.packets as u64) {
                        return Err(format!(
                            "{mode} {bytes} bytes seed {seed}: {dir} delivered {:?} of {}",
                            sd.delivered.get(dir),
                            o.packets
                        ));
                    }
                    goodput.push(sd.goodput_bytes_per_cycle.get(dir).copied().unwrap_or(0.0));
                }
                by_idata += sd.by_idata;
                by_message += sd.by_message;
            }
            rows.push(PoolsBenchRow {
                mode: mode.into(),
                packet_bytes: bytes,
                goodput: Spread::of(&goodput),
                by_idata,
                by_message,
            });
        }
    }
    Ok(rows)
}

/// The rows as the Markdown table of docs/measurements.md (`nic measurements`): per packet
/// size the goodput of the pools and of SendData, median (min .. max) over the seeds and
/// both directions, and how the pools' indications went (in the immediate, or in a
/// BufferRDMAIndicate message).
pub fn render_markdown(rows: &[PoolsBenchRow]) -> String {
    use std::fmt::Write as _;
    let mut sizes: Vec<u32> = rows.iter().map(|r| r.packet_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let goodput = |mode: &str, bytes: u32| {
        rows.iter()
            .find(|r| r.mode == mode && r.packet_bytes == bytes)
            .map(|r| {
                let g = &r.goodput;
                crate::markdown::spread(g.min, g.median, g.max, 2, "")
            })
    };
    let mut s = String::from(
        "| packet bytes | pools | pools' indications: in the immediate / by BufferRDMAIndicate | SendData |\n| ---: | --- | --- | --- |\n",
    );
    for bytes in sizes {
        let indications = rows
            .iter()
            .find(|r| r.mode == "pools" && r.packet_bytes == bytes)
            .map_or("-".into(), |r| format!("{} / {}", r.by_idata, r.by_message));
        let send = goodput("send", bytes).unwrap_or_else(|| {
            if bytes > SEND_MAX {
                format!("(does not fit a receive buffer: {SEND_MAX} bytes at most)")
            } else {
                "-".into()
            }
        });
        let _ = writeln!(
            s,
            "| {bytes} | {} | {indications} | {send} |",
            goodput("pools", bytes).unwrap_or_else(|| "-".into())
        );
    }
    s
}

#[cfg(test)]
mod markdown_tests {
    use super::*;

    #[test]
    fn rows_render_per_size_with_both_modes() {
        let row = |mode: &str, packet_bytes, min, median, by_message| PoolsBenchRow {
            mode: mode.into(),
            packet_bytes,
            goodput: Spread {
                min,
                median,
                max: median,
            },
            by_idata: 600 - by_message,
            by_message,
        };
        let t = render_markdown(&[
            row("pools", 64, 1.17, 1.17, 0),
            row("send", 64, 1.30, 1.32, 0),
            row("pools", 65536, 3.53, 3.53, 600),
        ]);
        assert!(
            t.contains("| 64 | 1.17 | 600 / 0 | 1.32 (1.30 .. 1.32) |"),
            "{t}"
        );
        assert!(
            t.contains(&format!(
                "| 65536 | 3.53 | 0 / 600 | (does not fit a receive buffer: {SEND_MAX} bytes at most) |"
            )),
            "{t}"
        );
    }
}
