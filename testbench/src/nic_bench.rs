//! `nic bench nic`: the NIC top on both backends, and the goodput of a long RDMA WRITE
//! stream, measured side by side in one run.
//!
//! 1. Saturating traffic: two Verilated NIC tops back to back, each streaming RDMA WRITEs
//!    of `message_bytes` to the other on every queue pair, while NIC 0's inputs are
//!    recorded. The whole recording is replayed on the Verilator model alone (repeated
//!    for at least `min_seconds`) and on RustHDL stepping, timed; RustHDL steps the NIC
//!    top about 100 times slower than Verilator, so the 60,000-cycle recording takes
//!    about 20 s there. [`NicBenchOptions::rusthdl_cycles`] shortens the RustHDL replay
//!    to a prefix for quick runs. Both replays' outputs are compared every cycle; the
//!    first differing cycle and output is an error.
//! 2. Goodput: NIC 0 streams RDMA WRITEs to NIC 1 (retransmission timer off). The link
//!    from NIC 0 carries only those requests' cells, so the share of clocks in which it
//!    moves a word, between its first and last word, is the achieved goodput divided by
//!    the cell format's limit (payload bytes over all cell bytes).
//! 3. With [`NicBenchOptions::sizes`]: the goodput run of 2. once per message size
//!    ([`goodput`]), for goodput and message rate against size.

use crate::bench::Recording;
use crate::message_rate::message_words;
use crate::nic_pair::{NicPair, DATA_AREA};
use crate::three_simulators::first_difference;
use nic_abi::{csr, Wqe, WqeOpcode};
use nic_cosim::host_memory::HostMemoryTiming;
use nic_cosim::{CosimError, NicTopInputs, NicTopOutputs, RustHdlNicTop, Stepper, VerilatedNicTop};
use std::time::Instant;

/// Parameters of the NIC benchmark.
#[derive(Clone, Debug)]
pub struct NicBenchOptions {
    pub cycles: u64,
    /// Replay only this prefix of the recording on RustHDL (`None`: all of it).
    pub rusthdl_cycles: Option<u64>,
    pub message_bytes: u32,
    pub goodput_messages: u32,
    pub min_seconds: f64,
    pub queue_pairs: usize,
    /// Message sizes of the goodput sweep (empty: none).
    pub sizes: Vec<u32>,
}

impl Default for NicBenchOptions {
    fn default() -> Self {
        NicBenchOptions {
            cycles: 60_000,
            rusthdl_cycles: None,
            message_bytes: 16384,
            goodput_messages: 24,
            min_seconds: 1.0,
            queue_pairs: 4,
            sizes: vec![],
        }
    }
}

/// Measured numbers.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct NicBench {
    pub recorded_cycles: u64,
    /// Cycles of the recording replayed on RustHDL (and compared with Verilator's).
    #[serde(default)]
    pub rusthdl_replayed_cycles: u64,
    pub verilator_cycles_per_s: f64,
    pub rusthdl_cycles_per_s: f64,
    /// Verilator cycles/s over RustHDL cycles/s.
    pub speedup: f64,
    /// Whole co-simulation (two NICs, host memories, links, agents): NIC-cycles per second.
    pub system_nic_cycles_per_s: f64,
    pub goodput_bytes: u64,
    pub goodput_cycles: u64,
    /// Payload bytes per link clock divided by the cell format's limit for these messages.
    pub goodput_ratio: f64,
    pub format_limit: f64,
    /// The goodput sweep over [`NicBenchOptions::sizes`].
    #[serde(default)]
    pub sizes: Vec<Goodput>,
}

/// One goodput run: `messages` RDMA WRITEs of `message_bytes` streamed on one queue pair.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Goodput {
    pub message_bytes: u32,
    pub messages: u32,
    /// Payload bytes carried.
    pub bytes: u64,
    /// Link clocks from the stream's first word to its last.
    pub cycles: u64,
    /// Payload bytes per link clock divided by the cell format's limit for these messages.
    pub ratio: f64,
    pub format_limit: f64,
}

/// An RDMA WRITE of `len` bytes from the data area to queue pair `qp`'s own remote area.
pub(crate) fn write_wqe(len: u32, wr_id: u64, qp: usize) -> Wqe {
    Wqe {
        opcode: WqeOpcode::RdmaWrite as u8,
        length: len,
        wr_id,
        local_addr: DATA_AREA,
        remote_vaddr: (DATA_AREA + 0x2_0000 * (1 + qp as u32)) as u64,
        ..Default::default()
    }
}

fn configured<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>>(
    nics: [S; 2],
    queue_pairs: usize,
    retry_timeout: u64,
) -> Result<NicPair<S>, String> {
    let timing = HostMemoryTiming {
        latency: 6,
        stall: 0.0,
        seed: 1,
    };
    let mut pair = NicPair::new(nics, queue_pairs, timing, 4);
    let enable = csr::ENABLE_SEND_RECV | csr::ENABLE_RDMA;
    pair.hosts[0].configure(1, enable, 0);
    pair.hosts[1].configure(0, enable, 0);
    for h in &mut pair.hosts {
        h.queue_csr_write(csr::RETRY_TIMEOUT, retry_timeout);
    }
    pair.flush_csr(10_000)?;
    Ok(pair)
}

fn replay<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>>(
    sim: &mut S,
    inputs: &[NicTopInputs],
) -> Vec<NicTopOutputs> {
    inputs.iter().map(|i| sim.step(i)).collect()
}

/// Run both measurements, and the goodput sweep over `options.sizes`.
pub fn bench_nic(options: &NicBenchOptions) -> Result<NicBench, String> {
    bench_nic_with(options, |_| {})
}

/// [`bench_nic`], telling `progress` about each step as it starts.
pub fn bench_nic_with(
    options: &NicBenchOptions,
    mut progress: impl FnMut(&str),
) -> Result<NicBench, String> {
    let err = |e: CosimError| e.to_string();
    let qps = options.queue_pairs;
    // 1. Saturating traffic both ways, recording NIC 0's inputs.
    progress("recording saturating traffic on two Verilated NICs");
    let nic0 = Recording {
        inner: VerilatedNicTop::new().map_err(err)?,
        inputs: vec![],
    };
    let nic1 = Recording {
        inner: VerilatedNicTop::new().map_err(err)?,
        inputs: vec![],
    };
    let mut pair = configured([nic0, nic1], qps, 4096)?;
    let start = Instant::now();
    let start_cycle = pair.cycle;
    let mut wr_id = 0;
    let mut posted = vec![[0usize; 2]; qps];
    while pair.cycle - start_cycle < options.cycles {
        for n in 0..2 {
            let mut done = vec![0usize; qps];
            for c in &pair.hosts[n].completions {
                done[c.qp as usize % qps] += 1;
            }
            for q in 0..qps {
                if posted[q][n] < done[q] + 4 {
                    wr_id += 1;
                    posted[q][n] += 1;
                    pair.hosts[n].post_send(q, &write_wqe(options.message_bytes, wr_id, q));
                }
            }
        }
        pair.run_until(200, |_| false).ok();
    }
    let system_nic_cycles_per_s =
        2.0 * (pair.cycle - start_cycle) as f64 / start.elapsed().as_secs_f64();
    let inputs = std::mem::take(&mut pair.hosts[0].nic.inputs);
    let recorded_cycles = inputs.len() as u64;

    progress("replaying on Verilator");
    let start = Instant::now();
    let verilator_outputs = replay(&mut VerilatedNicTop::new().map_err(err)?, &inputs);
    let mut runs = 1u64;
    while start.elapsed().as_secs_f64() < options.min_seconds {
        let again = replay(&mut VerilatedNicTop::new().map_err(err)?, &inputs);
        if let Some(d) = first_difference(&verilator_outputs, &again) {
            return Err(format!(
                "two Verilator replays of the same recording differ first at cycle {} in output `{}`: {} then {}",
                d.cycle, d.signal, d.values[0], d.values[1]
            ));
        }
        runs += 1;
    }
    let verilator_cycles_per_s = (runs * recorded_cycles) as f64 / start.elapsed().as_secs_f64();
    let replayed = match options.rusthdl_cycles {
        Some(cycles) => (cycles as usize).min(inputs.len()),
        None => inputs.len(),
    };
    // The RustHDL NIC top is a large value: it gets a stack of its own.
    progress(&format!("replaying {replayed} cycles on RustHDL"));
    let owned = inputs[..replayed].to_vec();
    let (rusthdl_outputs, seconds) = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || {
            let mut r = RustHdlNicTop::new();
            let start = Instant::now();
            let outputs = replay(&mut r, &owned);
            (outputs, start.elapsed().as_secs_f64())
        })
        .map_err(|e| format!("starting the RustHDL replay: {e}"))?
        .join()
        .map_err(|_| "the RustHDL replay panicked".to_string())?;
    let rusthdl_cycles_per_s = replayed as f64 / seconds;
    if let Some(d) = first_difference(&verilator_outputs, &rusthdl_outputs) {
        return Err(format!(
            "the replayed outputs of Verilator and RustHDL differ first at cycle {} in output `{}`: Verilator {}, RustHDL {}",
            d.cycle, d.signal, d.values[0], d.values[1]
        ));
    }

    // 2. Goodput: one long RDMA WRITE stream, retransmission off.
    progress(&format!(
        "goodput of {}-byte messages",
        options.message_bytes
    ));
    let g = goodput(options, options.message_bytes)?;
    // 3. The same per size.
    let mut sizes = vec![];
    for &bytes in &options.sizes {
        progress(&format!("goodput of {bytes}-byte messages"));
        sizes.push(goodput(options, bytes)?);
    }
    Ok(NicBench {
        recorded_cycles,
        rusthdl_replayed_cycles: replayed as u64,
        verilator_cycles_per_s,
        rusthdl_cycles_per_s,
        speedup: verilator_cycles_per_s / rusthdl_cycles_per_s,
        system_nic_cycles_per_s,
        goodput_bytes: g.bytes,
        goodput_cycles: g.cycles,
        goodput_ratio: g.ratio,
        format_limit: g.format_limit,
        sizes,
    })
}

/// The goodput run: NIC 0 streams `options.goodput_messages` RDMA WRITEs of
/// `message_bytes` (1..=65536) to NIC 1 on queue pair 0, at most 6 outstanding, with the
/// retransmission timer off.
pub fn goodput(options: &NicBenchOptions, message_bytes: u32) -> Result<Goodput, String> {
    if message_bytes == 0 || message_bytes > nic_abi::MAX_MESSAGE_LENGTH {
        return Err(format!(
            "message size must be 1..={} bytes, got {message_bytes}",
            nic_abi::MAX_MESSAGE_LENGTH
        ));
    }
    let err = |e: CosimError| e.to_string();
    let mut pair = configured(
        [
            VerilatedNicTop::new().map_err(err)?,
            VerilatedNicTop::new().map_err(err)?,
        ],
        options.queue_pairs,
        0,
    )?;
    let messages = options.goodput_messages;
    let (mut posted, mut first, mut last) = (0u32, None, 0u64);
    loop {
        let done = pair.hosts[0].completions.len() as u32;
        if done >= messages {
            break;
        }
        if posted < messages && posted - done < 6 {
            pair.hosts[0].post_send(0, &write_wqe(message_bytes, posted as u64, 0));
            posted += 1;
        }
        let before = pair.links[0].busy_cycles;
        pair.run_until(1, |_| false).ok();
        if pair.links[0].busy_cycles > before {
            if first.is_none() {
                first = Some(pair.cycle);
            }
            last = pair.cycle;
        }
        if pair.cycle > 10_000_000 {
            return Err(format!(
                "goodput run of {message_bytes}-byte messages did not finish"
            ));
        }
    }
    let cycles = last - first.unwrap_or(last) + 1;
    let message_words = message_words(message_bytes, nic_rtl::DEFAULT_CELL_PAYLOAD);
    let format_limit = message_bytes as f64 / (message_words * 8) as f64;
    let bytes = messages as u64 * message_bytes as u64;
    let achieved = bytes as f64 / (cycles * 8) as f64;
    Ok(Goodput {
        message_bytes,
        messages,
        bytes,
        cycles,
        ratio: achieved / format_limit,
        format_limit,
    })
}

/// Simulation speed as the Markdown table of docs/measurements.md (`nic measurements`):
/// a row per bench given, `nic bench datapath` (the cell datapath) and `nic bench nic`
/// (the NIC top), with both backends' cycles per second, their ratio, the whole two-NIC
/// co-simulation's NIC-cycles per second and the goodput against the cell format's limit.
pub fn render_speed_markdown(
    datapath: Option<&crate::bench::DatapathBench>,
    nic: Option<&NicBench>,
) -> String {
    use crate::markdown::{si, thousands};
    use std::fmt::Write as _;
    let mut s = String::from(
        "| bench | replayed | Verilator | RustHDL stepping | ratio | two-NIC co-simulation | goodput / format limit |\n| --- | --- | ---: | ---: | ---: | ---: | --- |\n",
    );
    if let Some(d) = datapath {
        let _ = writeln!(
            s,
            "| `nic bench datapath` | {} cycles of the cell datapath, {} messages of 16 KiB | {} cycles/s | {} cycles/s | {:.0}x | - | {:.4} (segmenter) |",
            thousands(d.cycles),
            d.scoreboard.messages_sent,
            si(d.verilator_cycles_per_s),
            si(d.rusthdl_cycles_per_s),
            d.speedup,
            d.goodput_ratio
        );
    }
    if let Some(n) = nic {
        let _ = writeln!(
            s,
            "| `nic bench nic` | {} cycles of the NIC top, RDMA WRITEs both ways | {} cycles/s | {} cycles/s | {:.0}x | {} NIC-cycles/s | {:.4} (RDMA WRITE stream, {} bytes in {} cycles) |",
            thousands(n.recorded_cycles),
            si(n.verilator_cycles_per_s),
            si(n.rusthdl_cycles_per_s),
            n.speedup,
            si(n.system_nic_cycles_per_s),
            n.goodput_ratio,
            thousands(n.goodput_bytes),
            thousands(n.goodput_cycles)
        );
    }
    s
}

/// The goodput sweep of `nic bench nic --sizes` as the Markdown table of
/// docs/measurements.md: per message size, payload bytes per cycle (the link carries 8),
/// against the cell format's limit, and messages per 1000 cycles. `None` when the run had
/// no `--sizes`.
pub fn render_sizes_markdown(nic: &NicBench) -> Option<String> {
    use std::fmt::Write as _;
    if nic.sizes.is_empty() {
        return None;
    }
    let mut s = String::from(
        "| bytes | messages | RDMA WRITE stream, bytes/cycle | / format limit | messages per 1000 cycles |\n| ---: | ---: | ---: | ---: | ---: |\n",
    );
    for g in &nic.sizes {
        let cycles = g.cycles.max(1) as f64;
        let _ = writeln!(
            s,
            "| {} | {} | {:.2} | {:.2} | {:.3} |",
            g.message_bytes,
            g.messages,
            g.bytes as f64 / cycles,
            g.ratio,
            1000.0 * g.messages as f64 / cycles
        );
    }
    Some(s)
}

#[cfg(test)]
mod markdown_tests {
    use super::*;

    fn nic(sizes: Vec<Goodput>) -> NicBench {
        NicBench {
            recorded_cycles: 60_134,
            rusthdl_replayed_cycles: 6_000,
            verilator_cycles_per_s: 378_987.0,
            rusthdl_cycles_per_s: 4_074.8,
            speedup: 93.0,
            system_nic_cycles_per_s: 352_202.0,
            goodput_bytes: 393_216,
            goodput_cycles: 55_784,
            goodput_ratio: 0.99254,
            format_limit: 0.8877,
            sizes,
        }
    }

    #[test]
    fn speed_and_goodput_render_as_tables() {
        let d = crate::bench::DatapathBench {
            cycles: 27_933,
            verilator_cycles_per_s: 775_302.0,
            rusthdl_cycles_per_s: 14_777.6,
            speedup: 52.46,
            goodput_ratio: 0.99917,
            format_limit: 0.888,
            scoreboard: crate::datapath::DatapathReport {
                messages_sent: 12,
                ..Default::default()
            },
        };
        let t = render_speed_markdown(Some(&d), Some(&nic(vec![])));
        assert!(t.contains("| `nic bench datapath` | 27,933 cycles of the cell datapath, 12 messages of 16 KiB | 775 k cycles/s | 14.8 k cycles/s | 52x | - | 0.9992 (segmenter) |"), "{t}");
        assert!(t.contains("| `nic bench nic` | 60,134 cycles of the NIC top, RDMA WRITEs both ways | 379 k cycles/s | 4.07 k cycles/s | 93x | 352 k NIC-cycles/s | 0.9925 (RDMA WRITE stream, 393,216 bytes in 55,784 cycles) |"), "{t}");
        let only = render_speed_markdown(None, Some(&nic(vec![])));
        assert!(!only.contains("datapath"), "{only}");
        assert_eq!(render_sizes_markdown(&nic(vec![])), None);
        let g = Goodput {
            message_bytes: 64,
            messages: 24,
            bytes: 1536,
            cycles: 797,
            ratio: 0.4517,
            format_limit: 0.5333,
        };
        let t = render_sizes_markdown(&nic(vec![g])).unwrap();
        assert!(t.contains("| 64 | 24 | 1.93 | 0.45 | 30.113 |"), "{t}");
    }
}
