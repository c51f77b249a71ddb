//! Verilog export: every block as its own module `nic_<block>`.
//!
//! RustHDL's `generate_verilog` names the top module `top`; [`rename_top`] renames it so
//! that several blocks can sit in one synthesis or Verilator build.

use crate::NicConfig;
use rust_hdl::prelude::*;

/// Direction and width of one port of an exported module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub input: bool,
    pub width: usize,
}

/// One exported block: its short name (`cell_segmenter`), its Verilog module name
/// (`nic_cell_segmenter`), the Verilog text (the module plus its submodules, renamed
/// `nic_<name>__<sub>` so that files can be combined), its ports, and the Rust expression
/// that builds the same block (used by the co-simulation build to generate the RustHDL
/// side of each model).
#[derive(Clone, Debug)]
pub struct ExportedBlock {
    pub name: String,
    pub module: String,
    pub verilog: String,
    pub ports: Vec<Port>,
    pub rust_type: &'static str,
    pub rust_constructor: String,
}

/// Connect `block`, generate its Verilog and rename the modules after `name`.
pub fn export_block<U: Block>(
    name: impl Into<String>,
    mut block: U,
    rust_type: &'static str,
    rust_constructor: String,
) -> ExportedBlock {
    let name = name.into();
    block.connect_all();
    let module = if name.starts_with("nic_") {
        name.clone()
    } else {
        format!("nic_{name}")
    };
    let verilog = rename_top(&generate_verilog(&block), &module);
    let ports = top_ports(&verilog, &module);
    ExportedBlock {
        name,
        module,
        verilog,
        ports,
        rust_type,
        rust_constructor,
    }
}

/// Rename RustHDL's `top` module to `module` and its submodules `top$a$b` to
/// `module__a__b`, in module headers and instantiations.
pub fn rename_top(verilog: &str, module: &str) -> String {
    let rename = |name: &str| -> String {
        match name.strip_prefix("top") {
            Some("") => module.to_string(),
            Some(rest) if rest.starts_with('$') => format!("{module}{}", rest.replace('$', "__")),
            _ => name.to_string(),
        }
    };
    let mut out = String::with_capacity(verilog.len() + 64);
    for line in verilog.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let (keyword, rest) = match trimmed.strip_prefix("module ") {
            Some(rest) => ("module ", rest),
            None => ("", trimmed),
        };
        let name_len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        let is_module_or_instance = name == "top" || name.starts_with("top$");
        let follows = &rest[name_len..];
        if is_module_or_instance && (follows.starts_with('(') || follows.starts_with(' ')) {
            out.push_str(&format!("{indent}{keyword}{}{follows}", rename(name)));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// Ports of `module` as declared in RustHDL's Verilog (`input wire  [63:0] s_data;`).
pub fn top_ports(verilog: &str, module: &str) -> Vec<Port> {
    let mut ports = vec![];
    let mut inside = false;
    for line in verilog.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("module ") {
            inside = rest.starts_with(&format!("{module}("));
            continue;
        }
        if !inside {
            continue;
        }
        if t.starts_with("endmodule") {
            break;
        }
        let input = t.starts_with("input ");
        if !input && !t.starts_with("output ") {
            continue;
        }
        let decl = t.trim_end_matches(';');
        let width = match (decl.find('['), decl.find(':')) {
            (Some(a), Some(b)) if b > a => decl[a + 1..b]
                .trim()
                .parse::<usize>()
                .map(|msb| msb + 1)
                .unwrap_or(1),
            _ => 1,
        };
        let name = decl
            .split_whitespace()
            .last()
            .unwrap_or_default()
            .to_string();
        ports.push(Port { name, input, width });
    }
    ports
}

/// Every exported block for `config`, in dependency order (leaf blocks first, the tops
/// last): what `nic verilog`, `nic lint` and `nic synth` work on.
pub fn exported_blocks(config: &NicConfig) -> Vec<ExportedBlock> {
    let mut blocks = datapath_blocks(config.cell_payload);
    // The packet CRC of the segmenter and reassembler (not co-simulated on its own).
    blocks.insert(
        1,
        export_block(
            "crc32_prepad",
            crate::Crc32Prepad::default(),
            "nic_rtl::Crc32Prepad",
            "nic_rtl::Crc32Prepad::default()".into(),
        ),
    );
    // The reassembler's children.
    let reassembler = 1 + blocks
        .iter()
        .position(|b| b.name == "cell_segmenter")
        .expect("the segmenter is exported");
    blocks.splice(
        reassembler..reassembler,
        [
            export_block(
                "cell_position",
                crate::cell::CellPosition::new(),
                "nic_rtl::cell::CellPosition",
                "nic_rtl::cell::CellPosition::new()".into(),
            ),
            export_block(
                "cell_checks",
                crate::cell::CellChecks::new(config.cell_payload),
                "nic_rtl::cell::CellChecks",
                format!("nic_rtl::cell::CellChecks::new({})", config.cell_payload),
            ),
            export_block(
                "cell_buffer",
                crate::cell::CellBuffer::default(),
                "nic_rtl::cell::CellBuffer",
                "nic_rtl::cell::CellBuffer::default()".into(),
            ),
            export_block(
                "cell_outcome_sender",
                crate::cell::OutcomeSender::new(),
                "nic_rtl::cell::OutcomeSender",
                "nic_rtl::cell::OutcomeSender::new()".into(),
            ),
            export_block(
                "cell_outcome_slice",
                crate::cell::OutcomeSlice::new(),
                "nic_rtl::cell::OutcomeSlice",
                "nic_rtl::cell::OutcomeSlice::new()".into(),
            ),
        ],
    );
    blocks.extend(nic_blocks(config));
    blocks.push(nic_top_block(config));
    blocks
}

/// The blocks the co-simulation crate builds Verilator models of: every block
/// [`exported_blocks`] gives for the default configuration (its top, `nic_top`, last),
/// the TPT of the 256-entry configuration, and the other NIC tops the test suite runs (one
/// with a 256-entry TPT, and one with 64 queue pairs for multi-host clusters).
pub fn cosim_blocks() -> Vec<ExportedBlock> {
    let with_tpt = NicConfig::with_tpt(256);
    let mut blocks = exported_blocks(&NicConfig::default());
    let tpt_only: Vec<ExportedBlock> = nic_blocks(&with_tpt)
        .into_iter()
        .filter(|b| !blocks.iter().any(|o| o.name == b.name))
        .collect();
    blocks.extend(tpt_only);
    blocks.push(nic_top_block(&with_tpt));
    // The multi-host co-simulation: one queue pair per peer, up to MAX_QUEUE_PAIRS hosts.
    blocks.push(nic_top_block(&NicConfig {
        queue_pairs: nic_abi::MAX_QUEUE_PAIRS,
        ..NicConfig::default()
    }));
    blocks
}

/// The NIC top for `config`, named after it (`nic_top`, `nic_top_tpt256`, ...).
pub fn nic_top_block(config: &NicConfig) -> ExportedBlock {
    let tpt = config
        .tpt_entries
        .map_or_else(|| "None".to_string(), |n| format!("Some({n})"));
    export_block(
        config.block_name(),
        crate::NicTop::new(*config),
        "nic_rtl::NicTop",
        format!(
            "nic_rtl::NicTop::new(nic_rtl::NicConfig {{ queue_pairs: {}, cell_payload: {}, tpt_entries: {tpt} }})",
            config.queue_pairs, config.cell_payload
        ),
    )
}

/// The NIC's own blocks, each on its own, as `config` instantiates them.
pub fn nic_blocks(config: &NicConfig) -> Vec<ExportedBlock> {
    let qps = config.queue_pairs;
    let cp = config.cell_payload;
    let tpt = config
        .tpt_entries
        .map_or_else(|| "None".to_string(), |n| format!("Some({n})"));
    let mut blocks = vec![
        export_block(
            "csr",
            crate::NicCsr::new(qps, cp, config.tpt_entries),
            "nic_rtl::NicCsr",
            format!("nic_rtl::NicCsr::new({qps}, {cp}, {tpt})"),
        ),
        export_block(
            "round_robin",
            crate::common::RoundRobin::<64, 6>::new(),
            "nic_rtl::common::RoundRobin<64, 6>",
            "nic_rtl::common::RoundRobin::<64, 6>::new()".into(),
        ),
        export_block(
            "qp_ram",
            crate::common::QpRam::<Bits<32>>::new(qps),
            "nic_rtl::common::QpRam<rust_hdl::prelude::Bits<32>>",
            format!("nic_rtl::common::QpRam::<rust_hdl::prelude::Bits<32>>::new({qps})"),
        ),
        export_block(
            "event_counter",
            crate::common::EventCounter::new(),
            "nic_rtl::common::EventCounter",
            "nic_rtl::common::EventCounter::new()".into(),
        ),
        export_block(
            "nack_counters",
            crate::common::NackCounters::new(),
            "nic_rtl::common::NackCounters",
            "nic_rtl::common::NackCounters::new()".into(),
        ),
        export_block(
            "requester_scheduler",
            crate::requester::Scheduler::new(qps),
            "nic_rtl::requester::Scheduler",
            format!("nic_rtl::requester::Scheduler::new({qps})"),
        ),
        export_block(
            "requester_qp_table",
            crate::requester::QpTable::new(qps),
            "nic_rtl::requester::QpTable",
            format!("nic_rtl::requester::QpTable::new({qps})"),
        ),
        export_block(
            "requester_wqe_fetch",
            crate::requester::WqeFetch::new(),
            "nic_rtl::requester::WqeFetch",
            "nic_rtl::requester::WqeFetch::new()".into(),
        ),
        export_block(
            "requester_transmit_machine",
            crate::requester::TransmitMachine::new(),
            "nic_rtl::requester::TransmitMachine",
            "nic_rtl::requester::TransmitMachine::new()".into(),
        ),
        export_block(
            "requester_claim_stage",
            crate::requester::ClaimStage::new(),
            "nic_rtl::requester::ClaimStage",
            "nic_rtl::requester::ClaimStage::new()".into(),
        ),
        export_block(
            "requester_bind_writer",
            crate::requester::BindWriter::new(),
            "nic_rtl::requester::BindWriter",
            "nic_rtl::requester::BindWriter::new()".into(),
        ),
        export_block(
            "requester_wqe_latch",
            crate::requester::WqeLatch::new(crate::requester::payload_buffer::PAYLOAD_BUFFER_DEPTH),
            "nic_rtl::requester::WqeLatch",
            format!(
                "nic_rtl::requester::WqeLatch::new({})",
                crate::requester::payload_buffer::PAYLOAD_BUFFER_DEPTH
            ),
        ),
        export_block(
            "requester_tx_read_port",
            crate::requester::TxReadPort::new(),
            "nic_rtl::requester::TxReadPort",
            "nic_rtl::requester::TxReadPort::new()".into(),
        ),
        export_block(
            "requester_payload_ledger",
            crate::requester::PayloadLedger::new(
                crate::requester::payload_buffer::PAYLOAD_BUFFER_DEPTH,
            ),
            "nic_rtl::requester::PayloadLedger",
            format!(
                "nic_rtl::requester::PayloadLedger::new({})",
                crate::requester::payload_buffer::PAYLOAD_BUFFER_DEPTH
            ),
        ),
        export_block(
            "requester_payload_buffer",
            crate::requester::PayloadBuffer::new(),
            "nic_rtl::requester::PayloadBuffer",
            "nic_rtl::requester::PayloadBuffer::new()".into(),
        ),
        export_block(
            "requester_send_slot",
            crate::requester::SendSlot::new(),
            "nic_rtl::requester::SendSlot",
            "nic_rtl::requester::SendSlot::new()".into(),
        ),
        export_block(
            "requester_ack_machine",
            crate::requester::AckMachine::new(qps),
            "nic_rtl::requester::AckMachine",
            format!("nic_rtl::requester::AckMachine::new({qps})"),
        ),
        export_block(
            "requester_ack_retire",
            crate::requester::AckRetire::new(),
            "nic_rtl::requester::AckRetire",
            "nic_rtl::requester::AckRetire::new()".into(),
        ),
        export_block(
            "requester_event_evaluator",
            crate::requester::EventEvaluator::new(nic_abi::SEND_WINDOW as usize),
            "nic_rtl::requester::EventEvaluator",
            "nic_rtl::requester::EventEvaluator::new(nic_abi::SEND_WINDOW as usize)".into(),
        ),
        export_block(
            "requester_sq_csr_access",
            crate::requester::SqCsrAccess::new(qps),
            "nic_rtl::requester::SqCsrAccess",
            format!("nic_rtl::requester::SqCsrAccess::new({qps})"),
        ),
        export_block(
            "requester_sq_op_grant",
            crate::requester::SqOpGrant::new(qps),
            "nic_rtl::requester::SqOpGrant",
            format!("nic_rtl::requester::SqOpGrant::new({qps})"),
        ),
        export_block(
            "requester_sq_op_decision",
            crate::requester::SqOpDecision::new(),
            "nic_rtl::requester::SqOpDecision",
            "nic_rtl::requester::SqOpDecision::new()".into(),
        ),
        export_block(
            "send_queue_engine",
            crate::SendQueueEngine::new(qps),
            "nic_rtl::SendQueueEngine",
            format!("nic_rtl::SendQueueEngine::new({qps})"),
        ),
        export_block(
            "nack_generator",
            crate::NackGenerator::new(),
            "nic_rtl::NackGenerator",
            "nic_rtl::NackGenerator::new()".into(),
        ),
        export_block(
            "responder_qp_state",
            crate::responder::QpState::new(qps),
            "nic_rtl::responder::QpState",
            format!("nic_rtl::responder::QpState::new({qps})"),
        ),
        export_block(
            "responder_qp_flags",
            crate::responder::QpFlags::new(qps),
            "nic_rtl::responder::QpFlags",
            format!("nic_rtl::responder::QpFlags::new({qps})"),
        ),
        export_block(
            "responder_writer",
            crate::responder::Writer::new(),
            "nic_rtl::responder::Writer",
            "nic_rtl::responder::Writer::new()".into(),
        ),
        export_block(
            "responder_answer_router",
            crate::responder::AnswerRouter::new(),
            "nic_rtl::responder::AnswerRouter",
            "nic_rtl::responder::AnswerRouter::new()".into(),
        ),
        export_block(
            "responder_psn_window",
            crate::responder::PsnWindow::new(),
            "nic_rtl::responder::PsnWindow",
            "nic_rtl::responder::PsnWindow::new()".into(),
        ),
        export_block(
            "responder_rqe_fetch",
            crate::responder::RqeFetch::new(),
            "nic_rtl::responder::RqeFetch",
            "nic_rtl::responder::RqeFetch::new()".into(),
        ),
        export_block(
            "responder_lookup_capture",
            crate::responder::LookupCapture::new(qps),
            "nic_rtl::responder::LookupCapture",
            format!("nic_rtl::responder::LookupCapture::new({qps})"),
        ),
        export_block(
            "responder_act_stage",
            crate::responder::ActStage::new(config.tpt_entries.is_some()),
            "nic_rtl::responder::ActStage",
            format!(
                "nic_rtl::responder::ActStage::new({})",
                config.tpt_entries.is_some()
            ),
        ),
        export_block(
            "responder_header_capture",
            crate::responder::HeaderCapture::new(),
            "nic_rtl::responder::HeaderCapture",
            "nic_rtl::responder::HeaderCapture::new()".into(),
        ),
        export_block(
            "responder_message_context",
            crate::responder::MessageContext::new(),
            "nic_rtl::responder::MessageContext",
            "nic_rtl::responder::MessageContext::new()".into(),
        ),
        export_block(
            "responder_message_sequencer",
            crate::responder::MessageSequencer::new(),
            "nic_rtl::responder::MessageSequencer",
            "nic_rtl::responder::MessageSequencer::new()".into(),
        ),
        export_block(
            "responder_receive_counters",
            crate::responder::ReceiveCounters::new(),
            "nic_rtl::responder::ReceiveCounters",
            "nic_rtl::responder::ReceiveCounters::new()".into(),
        ),
        export_block(
            "responder_payload_take",
            crate::responder::PayloadTake::new(),
            "nic_rtl::responder::PayloadTake",
            "nic_rtl::responder::PayloadTake::new()".into(),
        ),
        export_block(
            "responder_tpt_client",
            crate::responder::TptClient::new(config.tpt_entries.is_some()),
            "nic_rtl::responder::TptClient",
            format!(
                "nic_rtl::responder::TptClient::new({})",
                config.tpt_entries.is_some()
            ),
        ),
        export_block(
            "receive_queue_engine",
            crate::ReceiveQueueEngine::new(qps, config.tpt_entries.is_some()),
            "nic_rtl::ReceiveQueueEngine",
            format!(
                "nic_rtl::ReceiveQueueEngine::new({qps}, {})",
                config.tpt_entries.is_some()
            ),
        ),
        export_block(
            "responder_slot_rams",
            crate::responder::SlotRams::new(qps),
            "nic_rtl::responder::SlotRams",
            format!("nic_rtl::responder::SlotRams::new({qps})"),
        ),
        export_block(
            "responder_burst_size",
            crate::responder::BurstSize::new(),
            "nic_rtl::responder::BurstSize",
            "nic_rtl::responder::BurstSize::new()".into(),
        ),
        export_block(
            "response_generator",
            crate::ResponseGenerator::new(qps),
            "nic_rtl::ResponseGenerator",
            format!("nic_rtl::ResponseGenerator::new({qps})"),
        ),
        export_block(
            "ack_event_queue",
            crate::AckEventQueue::new(),
            "nic_rtl::AckEventQueue",
            "nic_rtl::AckEventQueue::new()".into(),
        ),
        export_block(
            "tx_arbiter",
            crate::TxArbiter::new(),
            "nic_rtl::TxArbiter",
            "nic_rtl::TxArbiter::new()".into(),
        ),
        export_block(
            "completion_queue",
            crate::CompletionQueue::default(),
            "nic_rtl::CompletionQueue",
            "nic_rtl::CompletionQueue::default()".into(),
        ),
        export_block(
            "dma_read_arbiter",
            crate::DmaReadArbiter::new(),
            "nic_rtl::DmaReadArbiter",
            "nic_rtl::DmaReadArbiter::new()".into(),
        ),
        export_block(
            "dma_write_arbiter",
            crate::DmaWriteArbiter::new(),
            "nic_rtl::DmaWriteArbiter",
            "nic_rtl::DmaWriteArbiter::new()".into(),
        ),
    ];
    if let Some(n) = config.tpt_entries {
        blocks.push(export_block(
            "tpt_table",
            crate::tpt::TptTable::new(n),
            "nic_rtl::tpt::TptTable",
            format!("nic_rtl::tpt::TptTable::new({n})"),
        ));
        blocks.push(export_block(
            "tpt_checks",
            crate::tpt::TptChecks::new(n),
            "nic_rtl::tpt::TptChecks",
            format!("nic_rtl::tpt::TptChecks::new({n})"),
        ));
        blocks.push(export_block(
            "tpt_exception_queue",
            crate::tpt::TptExceptionQueue::default(),
            "nic_rtl::tpt::TptExceptionQueue",
            "nic_rtl::tpt::TptExceptionQueue::default()".into(),
        ));
        blocks.push(export_block(
            "tpt",
            crate::Tpt::new(n),
            "nic_rtl::Tpt",
            format!("nic_rtl::Tpt::new({n})"),
        ));
    }
    blocks
}

/// The cell datapath's blocks: CRC, segmenter, reassembler, and the datapath top.
pub fn datapath_blocks(cp: usize) -> Vec<ExportedBlock> {
    vec![
        export_block(
            "crc32",
            crate::Crc32::default(),
            "nic_rtl::Crc32",
            "nic_rtl::Crc32::default()".into(),
        ),
        export_block(
            "cell_segmenter",
            crate::CellSegmenter::new(cp),
            "nic_rtl::CellSegmenter",
            format!("nic_rtl::CellSegmenter::new({cp})"),
        ),
        export_block(
            "cell_reassembler",
            crate::CellReassembler::new(cp),
            "nic_rtl::CellReassembler",
            format!("nic_rtl::CellReassembler::new({cp})"),
        ),
        export_block(
            "cell_datapath",
            crate::CellDatapath::new(cp),
            "nic_rtl::CellDatapath",
            format!("nic_rtl::CellDatapath::new({cp})"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_renamed_and_ports_listed() {
        let blocks = exported_blocks(&NicConfig::default());
        let crc = blocks.iter().find(|b| b.name == "crc32").unwrap();
        assert!(crc.verilog.contains("module nic_crc32(clock,"));
        assert!(crc.verilog.contains("module nic_crc32__state_reg("));
        assert!(crc.verilog.contains("nic_crc32__step step("));
        assert!(!crc.verilog.contains("module top"));
        let data = crc.ports.iter().find(|p| p.name == "s_data").unwrap();
        assert_eq!((data.input, data.width), (true, 64));
        let out = crc.ports.iter().find(|p| p.name == "crc").unwrap();
        assert_eq!((out.input, out.width), (false, 32));
        assert_eq!(crc.ports.len(), 7);
    }
}

#[cfg(test)]
mod nic_export_tests {
    use super::*;

    #[test]
    fn nic_tops_export_with_renamed_modules() {
        let mut tops = vec![];
        for config in [NicConfig::default(), NicConfig::with_tpt(256)] {
            let top = nic_top_block(&config);
            tops.push(top.clone());
            assert_eq!(top.module, config.block_name());
            assert!(top
                .verilog
                .contains(&format!("module {}(clock,", top.module)));
            assert!(!top.verilog.contains("module top"));
            for port in [
                "csr_addr",
                "dma_tx_rd_req_addr",
                "dma_rx_rd_data",
                "dma_wr_strobe",
                "m_cell_data",
                "s_cell_ready",
            ] {
                assert!(top.ports.iter().any(|p| p.name == port), "{port} missing");
            }
        }
        // The same ports with and without a TPT (the co-simulation structs match); the
        // TPT block exists only when configured.
        assert_eq!(tops[0].ports, tops[1].ports);
        let tpt_modules = |v: &str, prefix: &str| {
            v.lines()
                .filter(|l| l.starts_with(&format!("module {prefix}__tpt")))
                .count()
        };
        assert_eq!(
            tpt_modules(&tops[0].verilog, "nic_top"),
            0,
            "a TPT in the no-TPT top"
        );
        assert!(tpt_modules(&tops[1].verilog, "nic_top_tpt256") > 0);
    }
}
