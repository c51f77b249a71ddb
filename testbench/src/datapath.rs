//! The cell datapath run: messages through `nic_datapath` (segmenter → link → reassembler)
//! with three scoreboards checked on every run:
//! 1. every cell on the link equals the golden encoder's cell (`encode_message`), unless the
//!    run injects link errors;
//! 2. every reassembler outcome equals the reference model's ([`ReassemblyModel`]) for the
//!    cells that actually crossed the link (errors included);
//! 3. every message delivered (all its cells OK) is byte-identical to what was sent and
//!    delivered once; with no link errors, every message is delivered.

use nic_cosim::{CellDatapathInputs, CellDatapathOutputs, Stepper};
use nic_model::cell_faults::random_message;
use nic_rtl::cell::format::{
    bytes_to_words, encode_message, CellHeader, CellOutcome, CellStatus, Message, ReassemblyModel,
    Reth,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// What to run.
#[derive(Clone, Debug)]
pub struct DatapathOptions {
    pub cell_payload: usize,
    pub seed: u64,
    /// Number of random messages.
    pub messages: usize,
    /// Largest random payload, bytes.
    pub max_length: usize,
    /// Every message exactly this long instead (benchmarks of long streams).
    pub fixed_length: Option<usize>,
    /// Probability that the source offers nothing in a clock (idle gaps).
    pub idle: f64,
    /// Probability that the sink is not ready in a clock (back-pressure).
    pub backpressure: f64,
    /// Probability that a word crossing the link gets a random bit flipped.
    pub link_error_rate: f64,
    /// Give up after this many clocks.
    pub max_cycles: u64,
}

impl Default for DatapathOptions {
    fn default() -> Self {
        DatapathOptions {
            cell_payload: nic_rtl::DEFAULT_CELL_PAYLOAD,
            seed: 1,
            messages: 100,
            max_length: 1000,
            fixed_length: None,
            idle: 0.1,
            backpressure: 0.1,
            link_error_rate: 0.0,
            max_cycles: 10_000_000,
        }
    }
}

/// Result of a run: counts and the first scoreboard violations.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct DatapathReport {
    pub cycles: u64,
    pub messages_sent: usize,
    pub cells_on_link: usize,
    pub link_words: u64,
    /// Clocks from the first to the last link word (inclusive).
    pub link_busy_cycles: u64,
    pub payload_bytes_on_link: u64,
    pub outcomes: BTreeMap<String, usize>,
    pub messages_delivered: usize,
    pub violations: Vec<String>,
}

impl DatapathReport {
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
    /// Link words per busy clock: measured goodput divided by the format's limit
    /// (1.0 = the segmenter never idles the link while it has payload to send).
    pub fn link_utilisation(&self) -> f64 {
        if self.link_busy_cycles == 0 {
            0.0
        } else {
            self.link_words as f64 / self.link_busy_cycles as f64
        }
    }
}

/// The random messages of a run (deterministic in `options.seed`).
pub fn messages(options: &DatapathOptions) -> Vec<Message> {
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    (0..options.messages)
        .map(|_| {
            let mut m = random_message(&mut rng, options.max_length);
            if let Some(n) = options.fixed_length {
                m.payload = (0..n).map(|_| rng.gen()).collect();
                m.dma_length = n as u32;
            }
            m
        })
        .collect()
}

fn outcome_from(o: &CellDatapathOutputs, payload: Vec<u8>) -> CellOutcome {
    CellOutcome {
        status: CellStatus::from_code(o.m_status).unwrap_or(CellStatus::Malformed),
        header: CellHeader {
            opcode: o.m_opcode,
            flags: o.m_flags,
            cell_length: o.m_cell_length,
            dest_node: o.m_dest_node,
            src_node: o.m_src_node,
            dest_qp: o.m_dest_qp,
            src_qp: o.m_src_qp,
            cell_seq: o.m_cell_seq,
            psn: o.m_psn,
            message_length: o.m_msg_length,
        },
        reth: Reth {
            vaddr: o.m_vaddr,
            stag: o.m_stag,
            dma_length: o.m_dma_length,
        },
        offset: o.m_offset,
        immediate: o.m_immediate,
        payload,
    }
}

const MAX_VIOLATIONS: usize = 20;

impl DatapathReport {
    fn violation(&mut self, text: String) {
        if self.violations.len() < MAX_VIOLATIONS {
            self.violations.push(text);
        }
    }
}

/// Run `options` on `sim` (any backend) and check the scoreboards.
pub fn run_datapath<S>(sim: &mut S, options: &DatapathOptions) -> DatapathReport
where
    S: Stepper<Inputs = CellDatapathInputs, Outputs = CellDatapathOutputs>,
{
    let msgs = messages(options);
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed ^ 0x5eed_da7a);
    let golden: Vec<Vec<u64>> = msgs
        .iter()
        .flat_map(|m| encode_message(m, options.cell_payload).expect("random messages encode"))
        .collect();
    // Payload words of all messages in order, with `last`.
    let words: Vec<(u64, bool)> = msgs
        .iter()
        .flat_map(|m| {
            let w = bytes_to_words(&m.payload);
            let n = w.len();
            w.into_iter().enumerate().map(move |(i, x)| (x, i + 1 == n))
        })
        .collect();
    let mut report = DatapathReport::default();
    let mut model = ReassemblyModel::new(options.cell_payload);
    let mut expected_outcomes = std::collections::VecDeque::new();
    let (mut next_msg, mut next_word) = (0usize, 0usize);
    let mut link_cell = vec![];
    let mut beat_payload = vec![];
    // Messages by (source node, source QP, PSN, destination node, destination QP).
    let key = |h: &CellHeader| {
        (
            h.src_node,
            h.src_qp,
            h.psn & 0xFF_FFFF,
            h.dest_node,
            h.dest_qp,
        )
    };
    let by_key: std::collections::HashMap<_, usize> = msgs
        .iter()
        .enumerate()
        .map(|(i, m)| ((m.src_node, m.src_qp, m.psn, m.dest_node, m.dest_qp), i))
        .collect();
    let mut delivered = vec![false; msgs.len()];
    let mut message_bytes: Vec<u8> = vec![];
    let mut delivered_index = 0usize;
    let mut first_link = None;
    let mut last_link = 0u64;
    let mut quiet = 0u64;
    let mut inputs = CellDatapathInputs::default();
    // One clock of reset first.
    inputs.reset = true;
    sim.step(&inputs);
    inputs.reset = false;
    let mut cycle = 0u64;
    loop {
        cycle += 1;
        if cycle > options.max_cycles {
            report.violation(format!(
                "gave up after {} clocks: {} of {} cells crossed the link",
                options.max_cycles,
                report.cells_on_link,
                golden.len()
            ));
            break;
        }
        let offer_msg = next_msg < msgs.len() && !rng.gen_bool(options.idle);
        inputs.s_msg_valid = offer_msg;
        if offer_msg {
            let m = &msgs[next_msg];
            inputs.s_msg_opcode = m.opcode;
            inputs.s_msg_dest_node = m.dest_node;
            inputs.s_msg_src_node = m.src_node;
            inputs.s_msg_dest_qp = m.dest_qp;
            inputs.s_msg_src_qp = m.src_qp;
            inputs.s_msg_psn = m.psn;
            inputs.s_msg_length = m.payload.len() as u32;
            inputs.s_msg_vaddr = m.vaddr;
            inputs.s_msg_stag = m.stag;
            inputs.s_msg_dma_length = m.dma_length;
            inputs.s_msg_immediate = m.immediate.unwrap_or(0);
            inputs.s_msg_has_immediate = m.immediate.is_some();
            inputs.s_msg_invalidate = m.invalidate;
            inputs.s_msg_resync = m.resync;
        }
        let offer_word = next_word < words.len() && !rng.gen_bool(options.idle);
        inputs.s_payload_valid = offer_word;
        if offer_word {
            inputs.s_payload_data = words[next_word].0;
            inputs.s_payload_last = words[next_word].1;
        }
        inputs.m_ready = !rng.gen_bool(options.backpressure);
        inputs.link_error_mask =
            if options.link_error_rate > 0.0 && rng.gen_bool(options.link_error_rate) {
                1u64 << rng.gen_range(0..64)
            } else {
                0
            };
        let out = sim.step(&inputs);
        if offer_msg && out.s_msg_ready {
            next_msg += 1;
        }
        if offer_word && out.s_payload_ready {
            next_word += 1;
        }
        if out.link_valid && out.link_ready {
            first_link.get_or_insert(cycle);
            last_link = cycle;
            report.link_words += 1;
            link_cell.push(out.link_data);
            if out.link_last {
                let cell = std::mem::take(&mut link_cell);
                let i = report.cells_on_link;
                if options.link_error_rate == 0.0 {
                    match golden.get(i) {
                        Some(g) if *g == cell => {}
                        Some(g) => report.violation(format!("cycle {cycle}: link cell {i} differs from the golden encoder: got {cell:016x?}, want {g:016x?}")),
                        None => report.violation(format!("cycle {cycle}: extra cell {i} on the link")),
                    }
                }
                if cell.len() >= 3 {
                    report.payload_bytes_on_link +=
                        CellHeader::from_words([cell[0], cell[1], cell[2]]).cell_length as u64;
                }
                report.cells_on_link += 1;
                if let Some(o) = model.push_cell(&cell) {
                    expected_outcomes.push_back(o);
                }
            }
        }
        if out.m_valid && inputs.m_ready {
            beat_payload
                .extend_from_slice(&out.m_data.to_le_bytes()[..(out.m_bytes as usize).min(8)]);
            if out.m_last {
                let got = outcome_from(&out, std::mem::take(&mut beat_payload));
                *report
                    .outcomes
                    .entry(format!("{:?}", got.status))
                    .or_default() += 1;
                match expected_outcomes.pop_front() {
                    Some(mut want) => {
                        want.header.psn &= nic_rtl::cell::format::PSN_MODULUS - 1;
                        if got != want {
                            report.violation(format!("cycle {cycle}: outcome differs from the reference model:\n  got  {got:?}\n  want {want:?}"));
                        }
                    }
                    None => report.violation(format!(
                        "cycle {cycle}: outcome with no cell to explain it: {got:?}"
                    )),
                }
                if got.status != CellStatus::Ok || got.header.first() {
                    message_bytes.clear();
                }
                if got.status == CellStatus::Ok {
                    message_bytes.extend_from_slice(&got.payload);
                    if got.header.last() {
                        match by_key.get(&key(&got.header)) {
                            Some(&i) if delivered[i] => report
                                .violation(format!("cycle {cycle}: message {i} delivered twice")),
                            Some(&i) if msgs[i].payload != message_bytes => {
                                report.violation(format!(
                                    "cycle {cycle}: message {i} delivered with different bytes"
                                ))
                            }
                            Some(&i) => {
                                delivered[i] = true;
                                delivered_index += 1;
                            }
                            None => report.violation(format!(
                                "cycle {cycle}: a message that was never sent was delivered: {:?}",
                                got.header
                            )),
                        }
                        message_bytes.clear();
                    }
                }
            }
        }
        let all_in = next_msg == msgs.len() && next_word == words.len();
        if all_in && !out.m_valid && !out.link_valid {
            quiet += 1;
            if quiet > 200 {
                break;
            }
        } else {
            quiet = 0;
        }
    }
    report.cycles = cycle;
    report.messages_sent = next_msg;
    report.messages_delivered = delivered_index;
    report.link_busy_cycles = first_link.map(|f| last_link - f + 1).unwrap_or(0);
    if !expected_outcomes.is_empty() {
        report.violation(format!(
            "{} outcome(s) the model expects never came out",
            expected_outcomes.len()
        ));
    }
    if options.link_error_rate == 0.0 {
        if report.cells_on_link != golden.len() {
            report.violation(format!(
                "{} cells crossed the link, the golden encoder made {}",
                report.cells_on_link,
                golden.len()
            ));
        }
        if delivered_index != msgs.len() {
            report.violation(format!(
                "{delivered_index} of {} messages delivered",
                msgs.len()
            ));
        }
    }
    report
}
