//! `nic bench nic --size B`: the requester's message rate for short RDMA WRITEs, against
//! what the wire can carry.
//!
//! NIC 0 streams RDMA WRITEs of `B` bytes to NIC 1 on the first `active` queue pairs,
//! every send ring kept stocked (the driver posts in batches with one doorbell each, so
//! the doorbells are not what is measured), retransmission timer off. The link from NIC
//! 0 carries only those requests' cells. Messages per cycle are counted from the link's
//! first word to its last and divided by the wire limit: one message per `words` clocks,
//! `words` being the message's cells on the link (header, RETH on the first cell, payload,
//! cell and packet CRCs: [`message_words`]). A 64-byte RDMA WRITE is one 15-word cell.
//!
//! The fan-out cases are the rejoin's pattern: one message on each of the 64 queue pairs
//! of the 64-queue-pair top, all posted at once (one doorbell each), so every message
//! needs its own queue pair's claim and WQE fetch: a WRITE of `B` bytes
//! ([`fan_out_rate`]), and a 32-byte inline SEND ([`fan_out_inline_rate`]: the payload in
//! the WQE, which is then fetched as 8 words; the rejoin's RDMA_READY is one).
//!
//! The figure depends on the host-memory read latency (the WQE fetch and the payload
//! read are both in each message's path), so the bench reports each configuration at
//! several latencies.

use crate::nic_bench::write_wqe;
use crate::nic_pair::{NicPair, DATA_AREA, SQ_SIZE_LOG2};
use nic_abi::{csr, Rqe, Wqe, WqeOpcode};
use nic_cosim::host_memory::HostMemoryTiming;
use nic_cosim::{
    CosimError, NicTopInputs, NicTopOutputs, Stepper, VerilatedNicTop, VerilatedNicTopQp64,
};

/// Queue pairs the NIC is built with in this bench (the default configuration).
pub const BENCH_QUEUE_PAIRS: usize = 4;
/// Queue pairs of the fan-out case (the 64-queue-pair top, as in the 64-host rejoin).
pub const FAN_OUT_QUEUE_PAIRS: usize = 64;
/// WQEs the driver keeps posted ahead on each active queue pair.
const STOCK: u32 = (1 << SQ_SIZE_LOG2) / 2;
/// WQEs posted per doorbell.
const BATCH: u32 = 32;

/// One message-rate run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MessageRate {
    /// "write", or "inline SEND" (fan-out case).
    #[serde(default)]
    pub opcode: String,
    pub message_bytes: u32,
    /// Queue pairs streaming at once.
    pub queue_pairs: usize,
    /// Host-memory read latency, clocks.
    pub dma_latency: u32,
    pub messages: u64,
    /// Link clocks from the stream's first word to its last.
    pub cycles: u64,
    /// Link words per message (the wire limit is one message per this many clocks).
    pub words_per_message: u64,
    /// Clocks per message achieved.
    pub cycles_per_message: f64,
    /// Messages per cycle over the wire limit (1.0 = the link never idles).
    pub ratio: f64,
    /// Clocks per message in which the link offered NIC 1 a word and NIC 1 did not take
    /// it: the receiver's share of the pace (0: the sender alone sets it).
    #[serde(default)]
    pub receiver_held_per_message: f64,
}

impl MessageRate {
    /// The message, as the table names it.
    pub fn what(&self) -> String {
        match self.opcode.as_str() {
            "" | "write" => format!("{}-byte WRITE", self.message_bytes),
            op => format!("{}-byte {op}", self.message_bytes),
        }
    }
}

/// Link words of one RDMA WRITE of `bytes` with `cell_payload`-byte cells: per cell a
/// 3-word header and a CRC word, the RETH (2 words) on the first cell, the payload words,
/// and the packet CRC word on the last cell.
pub fn message_words(bytes: u32, cell_payload: usize) -> u64 {
    let cells = (bytes.max(1) as u64).div_ceil(cell_payload as u64);
    (bytes as u64).div_ceil(8) + cells * 4 + 2 + 1
}

/// Stream `messages_per_qp` RDMA WRITEs of `bytes` (1..=65536) on each of the first
/// `active` (1..=4) queue pairs with host-memory read latency `dma_latency`.
pub fn message_rate(
    bytes: u32,
    active: usize,
    dma_latency: u32,
    messages_per_qp: u32,
) -> Result<MessageRate, String> {
    if bytes == 0 || bytes > nic_abi::MAX_MESSAGE_LENGTH {
        return Err(format!(
            "message size must be 1..={} bytes, got {bytes}",
            nic_abi::MAX_MESSAGE_LENGTH
        ));
    }
    if active == 0 || active > BENCH_QUEUE_PAIRS {
        return Err(format!(
            "active queue pairs must be 1..={BENCH_QUEUE_PAIRS}, got {active}"
        ));
    }
    if messages_per_qp == 0 {
        return Err("messages per queue pair must be at least 1".into());
    }
    let err = |e: CosimError| e.to_string();
    let nics = [
        VerilatedNicTop::new().map_err(err)?,
        VerilatedNicTop::new().map_err(err)?,
    ];
    run(
        nics,
        BENCH_QUEUE_PAIRS,
        bytes,
        active,
        dma_latency,
        messages_per_qp,
        |q, i| write_wqe(bytes, i, q),
        |_| {},
        "write",
    )
}

/// One RDMA WRITE of `bytes` (1..=65536) on each of the 64 queue pairs of the
/// 64-queue-pair top, all posted at once, with host-memory read latency `dma_latency`.
pub fn fan_out_rate(bytes: u32, dma_latency: u32) -> Result<MessageRate, String> {
    if bytes == 0 || bytes > nic_abi::MAX_MESSAGE_LENGTH {
        return Err(format!(
            "message size must be 1..={} bytes, got {bytes}",
            nic_abi::MAX_MESSAGE_LENGTH
        ));
    }
    let nics = qp64_pair()?;
    run(
        nics,
        FAN_OUT_QUEUE_PAIRS,
        bytes,
        FAN_OUT_QUEUE_PAIRS,
        dma_latency,
        1,
        |q, i| Wqe {
            // Four target buffers in the first MiB (the wide map's rings are above it).
            remote_vaddr: (DATA_AREA + 0x2_0000 * (1 + q as u32 % 4)) as u64,
            ..write_wqe(bytes, i, q)
        },
        |_| {},
        "write",
    )
}

/// The two 64-queue-pair NICs of a fan-out run.
fn qp64_pair() -> Result<[VerilatedNicTopQp64; 2], String> {
    let err = |e: CosimError| e.to_string();
    Ok([
        VerilatedNicTopQp64::new().map_err(err)?,
        VerilatedNicTopQp64::new().map_err(err)?,
    ])
}

/// Bytes of the fan-out's inline SEND (the most an inline WQE carries).
pub const FAN_OUT_INLINE_BYTES: u32 = nic_abi::INLINE_MAX_BYTES as u32;

/// One inline SEND of [`FAN_OUT_INLINE_BYTES`] on each of the 64 queue pairs of the
/// 64-queue-pair top (a receive posted for each at NIC 1 first), all posted at once, with
/// host-memory read latency `dma_latency`.
pub fn fan_out_inline_rate(dma_latency: u32) -> Result<MessageRate, String> {
    let nics = qp64_pair()?;
    run(
        nics,
        FAN_OUT_QUEUE_PAIRS,
        FAN_OUT_INLINE_BYTES,
        FAN_OUT_QUEUE_PAIRS,
        dma_latency,
        1,
        |q, i| Wqe {
            opcode: WqeOpcode::Send as u8,
            inline: true,
            length: FAN_OUT_INLINE_BYTES,
            wr_id: i,
            remote_vaddr: 0x0101_0101_0101_0101 * (q as u64 + 1),
            compare_add: 0x2222_2222_2222_2222,
            swap: 0x3333_3333_3333_3333,
            reserved: 0x4444_4444_4444_4444,
            ..Default::default()
        },
        |pair| {
            for q in 0..FAN_OUT_QUEUE_PAIRS {
                pair.hosts[1].post_receive(
                    q,
                    &Rqe {
                        buffer_addr: DATA_AREA + 0x100 * q as u32,
                        buffer_length: 0x100,
                        wr_id: q as u64,
                    },
                );
            }
        },
        "inline SEND",
    )
}

/// The run on a pair of NICs with `queue_pairs` each: `messages_per_qp` WQEs from `wqe`
/// (queue pair, index) on each of the first `active`.
fn run<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>>(
    nics: [S; 2],
    queue_pairs: usize,
    bytes: u32,
    active: usize,
    dma_latency: u32,
    messages_per_qp: u32,
    wqe: impl Fn(usize, u64) -> Wqe,
    prepare: impl FnOnce(&mut NicPair<S>),
    opcode: &str,
) -> Result<MessageRate, String> {
    let timing = HostMemoryTiming {
        latency: dma_latency,
        stall: 0.0,
        seed: 1,
    };
    let mut pair = NicPair::new(nics, queue_pairs, timing, 4);
    let enable = csr::ENABLE_SEND_RECV | csr::ENABLE_RDMA;
    pair.hosts[0].configure(1, enable, 0);
    pair.hosts[1].configure(0, enable, 0);
    for h in &mut pair.hosts {
        h.queue_csr_write(csr::RETRY_TIMEOUT, 0);
    }
    prepare(&mut pair);
    pair.flush_csr(10_000)?;

    let total = messages_per_qp as u64 * active as u64;
    let mut posted = vec![0u32; active];
    let (mut first, mut last) = (None, 0u64);
    let limit = 200 * total * message_words(bytes, pair.cell_payload) + 100_000;
    loop {
        let mut done = vec![0u32; active];
        for c in &pair.hosts[0].completions {
            if c.status != 0 {
                return Err(format!(
                    "message-rate run: a WRITE on QP {} completed with status {:#04x}",
                    c.qp, c.status
                ));
            }
            done[c.qp as usize] += 1;
        }
        if done.iter().map(|&d| d as u64).sum::<u64>() >= total {
            break;
        }
        for q in 0..active {
            let room = messages_per_qp - posted[q];
            if room > 0 && posted[q] - done[q] + BATCH <= STOCK {
                let wqes: Vec<Wqe> = (0..BATCH.min(room))
                    .map(|i| wqe(q, (posted[q] + i) as u64))
                    .collect();
                pair.hosts[0].post_sends(q, &wqes);
                posted[q] += wqes.len() as u32;
            }
        }
        let before = pair.links[0].busy_cycles;
        pair.run_until(1, |_| false).ok();
        if pair.links[0].busy_cycles > before {
            first.get_or_insert(pair.cycle);
            last = pair.cycle;
        }
        if pair.cycle > limit {
            return Err(format!(
                "message-rate run of {bytes}-byte messages on {active} QPs did not finish in {limit} cycles"
            ));
        }
    }
    let cycles = last - first.unwrap_or(last) + 1;
    // A SEND carries no RETH.
    let words = message_words(bytes, pair.cell_payload) - if opcode == "write" { 0 } else { 2 };
    let cycles_per_message = cycles as f64 / total as f64;
    let receiver_held_per_message = pair.links[0].held_cycles as f64 / total as f64;
    Ok(MessageRate {
        opcode: opcode.into(),
        message_bytes: bytes,
        queue_pairs: active,
        dma_latency,
        messages: total,
        cycles,
        words_per_message: words,
        cycles_per_message,
        ratio: words as f64 / cycles_per_message,
        receiver_held_per_message,
    })
}

/// The bench's runs: 1 and 4 queue pairs, each at host-memory latencies 3, 6 and 12, then
/// the fan-outs (one WQE on each of 64 queue pairs: a `bytes` WRITE, a 32-byte inline
/// SEND) at the same latencies.
pub fn message_rates(
    bytes: u32,
    messages_per_qp: u32,
    mut progress: impl FnMut(&str),
) -> Result<Vec<MessageRate>, String> {
    let mut runs = vec![];
    for active in [1, BENCH_QUEUE_PAIRS] {
        for latency in [3, 6, 12] {
            progress(&format!(
                "{bytes}-byte RDMA WRITEs on {active} QP(s), DMA latency {latency}"
            ));
            runs.push(message_rate(bytes, active, latency, messages_per_qp)?);
        }
    }
    for latency in [3, 6, 12] {
        progress(&format!(
            "{bytes}-byte RDMA WRITEs, one on each of {FAN_OUT_QUEUE_PAIRS} QPs, DMA latency {latency}"
        ));
        runs.push(fan_out_rate(bytes, latency)?);
    }
    for latency in [3, 6, 12] {
        progress(&format!(
            "{FAN_OUT_INLINE_BYTES}-byte inline SENDs, one on each of {FAN_OUT_QUEUE_PAIRS} QPs, DMA latency {latency}"
        ));
        runs.push(fan_out_inline_rate(latency)?);
    }
    Ok(runs)
}

/// The runs as the Markdown table of docs/measurements.md.
pub fn render_markdown(runs: &[MessageRate]) -> String {
    let mut s = String::from(
        "| message | queue pairs | DMA latency | messages | clocks per message | wire: words per message | / wire limit | receiver held the link, clocks per message |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in runs {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.2} | {} | {:.3} | {:.2} |\n",
            r.what(),
            r.queue_pairs,
            r.dma_latency,
            r.messages,
            r.cycles_per_message,
            r.words_per_message,
            r.ratio,
            r.receiver_held_per_message
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_64_byte_write_is_one_15_word_cell() {
        assert_eq!(message_words(64, 256), 15);
        // Two cells: 33 payload words, two headers and CRCs, RETH, packet CRC.
        assert_eq!(message_words(257, 256), 33 + 8 + 3);
    }

    #[test]
    fn bad_parameters_are_named() {
        assert!(message_rate(0, 1, 3, 1)
            .unwrap_err()
            .contains("message size"));
        assert!(message_rate(64, 5, 3, 1)
            .unwrap_err()
            .contains("active queue pairs must be 1..=4, got 5"));
        assert!(message_rate(64, 1, 3, 0)
            .unwrap_err()
            .contains("at least 1"));
    }
}
