//! `NicTop`: the NIC, configured by a [`NicConfig`], as docs/nic-architecture.md draws it.
//!
//! Blocks: [`NicCsr`] (CSR port, global registers), [`SendQueueEngine`] (requester),
//! [`ReceiveQueueEngine`] (responder, with [`crate::NackGenerator`]), [`ResponseGenerator`]
//! (owed ACK / NACK / responses), [`TxArbiter`] → [`CellSegmenter`] (cells out),
//! [`CellReassembler`] (cells in) → [`OutcomeSlice`] (a register slice: one clock) →
//! the receive engine, [`CompletionQueue`], two [`DmaReadArbiter`]s (tx and
//! rx read ports), [`DmaWriteArbiter`], an [`AckEventQueue`] (acknowledgement events from
//! the receive engine to the send engine, so the ingress does not wait while the send
//! engine completes WQEs), and the optional [`Tpt`] (instantiated only when
//! `tpt_entries` is set: without it the TPT side ports of [`NicCsr`] and
//! [`ReceiveQueueEngine`] are tied off, since neither uses them, and the Verilog has no
//! TPT module at all; the ports of `NicTop` are the same for every configuration). With
//! the TPT, the send engine's bind write port (a BIND RKEY executed in send-queue order)
//! writes its entries; without it that port's ready is tied high.
//!
//! Ports (64-bit data, valid/ready handshakes):
//! - `clock`, `reset` (synchronous, active high).
//! - CSR: `csr_valid`, `csr_ready`, `csr_write`, `csr_addr` (16), `csr_wdata` (64),
//!   `csr_rdata_valid`, `csr_rdata` (64). Map: docs/csr-map.md.
//! - DMA tx read: `dma_tx_rd_req_valid/ready`, `dma_tx_rd_req_addr` (32),
//!   `dma_tx_rd_req_words` (16), `dma_tx_rd_data_valid/ready`, `dma_tx_rd_data` (64),
//!   `dma_tx_rd_data_last`; DMA rx read: the same with `dma_rx_rd_`; DMA write:
//!   `dma_wr_valid/ready`, `dma_wr_addr` (32), `dma_wr_data` (64), `dma_wr_strobe` (8).
//! - Cells out `m_cell_data` (64) / `m_cell_valid` / `m_cell_ready` / `m_cell_last`; cells
//!   in `s_cell_*` likewise.
//!
//! Latency and throughput are those of the blocks (see each); a long RDMA WRITE streams
//! at one payload word per clock through the segmenter, the link and the responder's
//! write port. Limits: `NicConfig::validate`.

use crate::cell::outcome_slice::OutcomeSlice;
use crate::cell::reassembler::CellReassembler;
use crate::cell::segmenter::CellSegmenter;
use crate::config::NicConfig;
use crate::host::completion_queue::CompletionQueue;
use crate::host::csr::NicCsr;
use crate::host::dma_read_arbiter::DmaReadArbiter;
use crate::host::dma_write_arbiter::DmaWriteArbiter;
use crate::host::tx_arbiter::TxArbiter;
use crate::requester::ack_event_queue::AckEventQueue;
use crate::requester::send_queue_engine::SendQueueEngine;
use crate::responder::receive_queue_engine::ReceiveQueueEngine;
use crate::responder::response_generator::ResponseGenerator;
use crate::tpt::Tpt;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct NicTop {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub csr_valid: Signal<In, Bit>,
    pub csr_ready: Signal<Out, Bit>,
    pub csr_write: Signal<In, Bit>,
    pub csr_addr: Signal<In, Bits<16>>,
    pub csr_wdata: Signal<In, Bits<64>>,
    pub csr_rdata_valid: Signal<Out, Bit>,
    pub csr_rdata: Signal<Out, Bits<64>>,
    pub dma_tx_rd_req_valid: Signal<Out, Bit>,
    pub dma_tx_rd_req_ready: Signal<In, Bit>,
    pub dma_tx_rd_req_addr: Signal<Out, Bits<32>>,
    pub dma_tx_rd_req_words: Signal<Out, Bits<16>>,
    pub dma_tx_rd_data_valid: Signal<In, Bit>,
    pub dma_tx_rd_data_ready: Signal<Out, Bit>,
    pub dma_tx_rd_data: Signal<In, Bits<64>>,
    pub dma_tx_rd_data_last: Signal<In, Bit>,
    pub dma_rx_rd_req_valid: Signal<Out, Bit>,
    pub dma_rx_rd_req_ready: Signal<In, Bit>,
    pub dma_rx_rd_req_addr: Signal<Out, Bits<32>>,
    pub dma_rx_rd_req_words: Signal<Out, Bits<16>>,
    pub dma_rx_rd_data_valid: Signal<In, Bit>,
    pub dma_rx_rd_data_ready: Signal<Out, Bit>,
    pub dma_rx_rd_data: Signal<In, Bits<64>>,
    pub dma_rx_rd_data_last: Signal<In, Bit>,
    pub dma_wr_valid: Signal<Out, Bit>,
    pub dma_wr_ready: Signal<In, Bit>,
    pub dma_wr_addr: Signal<Out, Bits<32>>,
    pub dma_wr_data: Signal<Out, Bits<64>>,
    pub dma_wr_strobe: Signal<Out, Bits<8>>,
    pub m_cell_data: Signal<Out, Bits<64>>,
    pub m_cell_valid: Signal<Out, Bit>,
    pub m_cell_ready: Signal<In, Bit>,
    pub m_cell_last: Signal<Out, Bit>,
    pub s_cell_data: Signal<In, Bits<64>>,
    pub s_cell_valid: Signal<In, Bit>,
    pub s_cell_ready: Signal<Out, Bit>,
    pub s_cell_last: Signal<In, Bit>,
    csr: NicCsr,
    sq: SendQueueEngine,
    rq: ReceiveQueueEngine,
    ack_queue: AckEventQueue,
    resp: ResponseGenerator,
    tx_arbiter: TxArbiter,
    segmenter: CellSegmenter,
    reassembler: CellReassembler,
    /// The register slice between the reassembler's outcome and the receive engine.
    rx_slice: OutcomeSlice,
    cq: CompletionQueue,
    tx_read_arbiter: DmaReadArbiter,
    rx_read_arbiter: DmaReadArbiter,
    write_arbiter: DmaWriteArbiter,
    /// The TPT: one block with `tpt_entries`, none without.
    tpt: Vec<Tpt>,
    /// Whether there is a TPT: without one its side ports are tied off.
    has_tpt: Constant<Bit>,
}

impl NicTop {
    /// Panics with the parameter's name when `config` is out of range
    /// ([`NicConfig::validate`]).
    pub fn new(config: NicConfig) -> Self {
        if let Err(e) = config.validate() {
            panic!("NicTop: {e}");
        }
        let qps = config.queue_pairs;
        NicTop {
            clock: Default::default(),
            reset: Default::default(),
            csr_valid: Default::default(),
            csr_ready: Default::default(),
            csr_write: Default::default(),
            csr_addr: Default::default(),
            csr_wdata: Default::default(),
            csr_rdata_valid: Default::default(),
            csr_rdata: Default::default(),
            dma_tx_rd_req_valid: Default::default(),
            dma_tx_rd_req_ready: Default::default(),
            dma_tx_rd_req_addr: Default::default(),
            dma_tx_rd_req_words: Default::default(),
            dma_tx_rd_data_valid: Default::default(),
            dma_tx_rd_data_ready: Default::default(),
            dma_tx_rd_data: Default::default(),
            dma_tx_rd_data_last: Default::default(),
            dma_rx_rd_req_valid: Default::default(),
            dma_rx_rd_req_ready: Default::default(),
            dma_rx_rd_req_addr: Default::default(),
            dma_rx_rd_req_words: Default::default(),
            dma_rx_rd_data_valid: Default::default(),
            dma_rx_rd_data_ready: Default::default(),
            dma_rx_rd_data: Default::default(),
            dma_rx_rd_data_last: Default::default(),
            dma_wr_valid: Default::default(),
            dma_wr_ready: Default::default(),
            dma_wr_addr: Default::default(),
            dma_wr_data: Default::default(),
            dma_wr_strobe: Default::default(),
            m_cell_data: Default::default(),
            m_cell_valid: Default::default(),
            m_cell_ready: Default::default(),
            m_cell_last: Default::default(),
            s_cell_data: Default::default(),
            s_cell_valid: Default::default(),
            s_cell_ready: Default::default(),
            s_cell_last: Default::default(),
            csr: NicCsr::new(qps, config.cell_payload, config.tpt_entries),
            sq: SendQueueEngine::new(qps),
            rq: ReceiveQueueEngine::new(qps, config.tpt_entries.is_some()),
            ack_queue: AckEventQueue::new(),
            resp: ResponseGenerator::new(qps),
            tx_arbiter: TxArbiter::new(),
            segmenter: CellSegmenter::new(config.cell_payload),
            reassembler: CellReassembler::new(config.cell_payload),
            rx_slice: OutcomeSlice::new(),
            cq: CompletionQueue::default(),
            tx_read_arbiter: DmaReadArbiter::new(),
            rx_read_arbiter: DmaReadArbiter::new(),
            write_arbiter: DmaWriteArbiter::new(),
            tpt: config.tpt_entries.map(Tpt::new).into_iter().collect(),
            has_tpt: Constant::new(config.tpt_entries.is_some()),
        }
    }
}

impl Logic for NicTop {
    #[hdl_gen]
    fn update(&mut self) {
        // Clocks and resets.
        self.csr.clock.next = self.clock.val();
        self.sq.clock.next = self.clock.val();
        self.rq.clock.next = self.clock.val();
        self.ack_queue.clock.next = self.clock.val();
        self.resp.clock.next = self.clock.val();
        self.tx_arbiter.clock.next = self.clock.val();
        self.segmenter.clock.next = self.clock.val();
        self.reassembler.clock.next = self.clock.val();
        self.rx_slice.clock.next = self.clock.val();
        self.cq.clock.next = self.clock.val();
        self.tx_read_arbiter.clock.next = self.clock.val();
        self.rx_read_arbiter.clock.next = self.clock.val();
        self.write_arbiter.clock.next = self.clock.val();
        self.csr.reset.next = self.reset.val();
        self.sq.reset.next = self.reset.val();
        self.rq.reset.next = self.reset.val();
        self.ack_queue.reset.next = self.reset.val();
        self.resp.reset.next = self.reset.val();
        self.tx_arbiter.reset.next = self.reset.val();
        self.segmenter.reset.next = self.reset.val();
        self.reassembler.reset.next = self.reset.val();
        self.rx_slice.reset.next = self.reset.val();
        self.cq.reset.next = self.reset.val();
        self.tx_read_arbiter.reset.next = self.reset.val();
        self.rx_read_arbiter.reset.next = self.reset.val();
        self.write_arbiter.reset.next = self.reset.val();

        // CSR port.
        self.csr.csr_valid.next = self.csr_valid.val();
        self.csr_ready.next = self.csr.csr_ready.val();
        self.csr.csr_write.next = self.csr_write.val();
        self.csr.csr_addr.next = self.csr_addr.val();
        self.csr.csr_wdata.next = self.csr_wdata.val();
        self.csr_rdata_valid.next = self.csr.csr_rdata_valid.val();
        self.csr_rdata.next = self.csr.csr_rdata.val();
        // Per-QP CSR accesses go to the engines that own the register (`NicCsr`).
        self.sq.s_csr_valid.next = self.csr.m_sq_csr_valid.val();
        self.csr.m_sq_csr_ready.next = self.sq.s_csr_ready.val();
        self.sq.s_csr_write.next = self.csr.m_sq_csr_write.val();
        self.sq.s_csr_qp.next = self.csr.m_sq_csr_qp.val();
        self.sq.s_csr_reg.next = self.csr.m_sq_csr_reg.val();
        self.sq.s_csr_wdata.next = self.csr.m_sq_csr_wdata.val();
        self.csr.m_sq_csr_rdata_valid.next = self.sq.m_csr_rdata_valid.val();
        self.csr.m_sq_csr_rdata.next = self.sq.m_csr_rdata.val();
        self.rq.s_csr_valid.next = self.csr.m_rq_csr_valid.val();
        self.csr.m_rq_csr_ready.next = self.rq.s_csr_ready.val();
        self.rq.s_csr_write.next = self.csr.m_rq_csr_write.val();
        self.rq.s_csr_qp.next = self.csr.m_rq_csr_qp.val();
        self.rq.s_csr_reg.next = self.csr.m_rq_csr_reg.val();
        self.rq.s_csr_wdata.next = self.csr.m_rq_csr_wdata.val();
        self.csr.m_rq_csr_rdata_valid.next = self.rq.m_csr_rdata_valid.val();
        self.csr.m_rq_csr_rdata.next = self.rq.m_csr_rdata.val();

        // Configuration.
        self.sq.cfg_node_id.next = self.csr.cfg_node_id.val();
        self.sq.cfg_retry_timeout.next = self.csr.cfg_retry_timeout.val();
        self.sq.cfg_retry_limit.next = self.csr.cfg_retry_limit.val();
        self.rq.cfg_node_id.next = self.csr.cfg_node_id.val();
        self.rq.cfg_enable_send_recv.next = self.csr.cfg_enable_send_recv.val();
        self.rq.cfg_enable_rdma.next = self.csr.cfg_enable_rdma.val();
        self.resp.cfg_node_id.next = self.csr.cfg_node_id.val();
        self.cq.cfg_cq_base.next = self.csr.cfg_cq_base.val();
        self.cq.cfg_cq_size_log2.next = self.csr.cfg_cq_size_log2.val();
        self.cq.cfg_cq_ci.next = self.csr.cfg_cq_ci.val();
        self.cq.cfg_cq_restart.next = self.csr.cfg_cq_restart.val();
        self.csr.cq_pi.next = self.cq.cq_pi.val();

        // Counters.
        self.csr.stat_nack_sent_0.next = self.resp.stat_nack_sent_0.val();
        self.csr.stat_nack_sent_1.next = self.resp.stat_nack_sent_1.val();
        self.csr.stat_nack_sent_2.next = self.resp.stat_nack_sent_2.val();
        self.csr.stat_nack_sent_3.next = self.resp.stat_nack_sent_3.val();
        self.csr.stat_nack_sent_4.next = self.resp.stat_nack_sent_4.val();
        self.csr.stat_nack_sent_5.next = self.resp.stat_nack_sent_5.val();
        self.csr.stat_nack_sent_6.next = self.resp.stat_nack_sent_6.val();
        self.csr.stat_nack_sent_7.next = self.resp.stat_nack_sent_7.val();
        self.csr.stat_nack_received_0.next = self.rq.stat_nack_received_0.val();
        self.csr.stat_nack_received_1.next = self.rq.stat_nack_received_1.val();
        self.csr.stat_nack_received_2.next = self.rq.stat_nack_received_2.val();
        self.csr.stat_nack_received_3.next = self.rq.stat_nack_received_3.val();
        self.csr.stat_nack_received_4.next = self.rq.stat_nack_received_4.val();
        self.csr.stat_nack_received_5.next = self.rq.stat_nack_received_5.val();
        self.csr.stat_nack_received_6.next = self.rq.stat_nack_received_6.val();
        self.csr.stat_nack_received_7.next = self.rq.stat_nack_received_7.val();
        self.csr.stat_requests_sent.next = self.sq.stat_requests_sent.val();
        self.csr.stat_responses_sent.next = self.resp.stat_responses_sent.val();
        self.csr.stat_messages_received.next = self.rq.stat_messages_received.val();
        self.csr.stat_retransmissions.next = self.sq.stat_retransmissions.val();
        self.csr.stat_dropped.next = self.rq.stat_dropped.val();
        self.csr.stat_cells_failed.next = self.reassembler.stat_cells_failed.val();

        // Requester messages and responder messages onto the segmenter.
        self.tx_arbiter.s_req_msg_valid.next = self.sq.m_msg_valid.val();
        self.sq.m_msg_ready.next = self.tx_arbiter.s_req_msg_ready.val();
        self.tx_arbiter.s_req_msg.next = self.sq.m_msg.val();
        self.tx_arbiter.s_req_payload_data.next = self.sq.m_payload_data.val();
        self.tx_arbiter.s_req_payload_valid.next = self.sq.m_payload_valid.val();
        self.sq.m_payload_ready.next = self.tx_arbiter.s_req_payload_ready.val();
        self.tx_arbiter.s_req_payload_last.next = self.sq.m_payload_last.val();
        self.tx_arbiter.s_resp_msg_valid.next = self.resp.m_msg_valid.val();
        self.resp.m_msg_ready.next = self.tx_arbiter.s_resp_msg_ready.val();
        self.tx_arbiter.s_resp_msg.next = self.resp.m_msg.val();
        self.tx_arbiter.s_resp_payload_data.next = self.resp.m_payload_data.val();
        self.tx_arbiter.s_resp_payload_valid.next = self.resp.m_payload_valid.val();
        self.resp.m_payload_ready.next = self.tx_arbiter.s_resp_payload_ready.val();
        self.tx_arbiter.s_resp_payload_last.next = self.resp.m_payload_last.val();
        self.segmenter.s_msg_valid.next = self.tx_arbiter.m_msg_valid.val();
        self.tx_arbiter.m_msg_ready.next = self.segmenter.s_msg_ready.val();
        self.segmenter.s_msg.next = self.tx_arbiter.m_msg.val();
        self.segmenter.s_payload_data.next = self.tx_arbiter.m_payload_data.val();
        self.segmenter.s_payload_valid.next = self.tx_arbiter.m_payload_valid.val();
        self.tx_arbiter.m_payload_ready.next = self.segmenter.s_payload_ready.val();
        self.segmenter.s_payload_last.next = self.tx_arbiter.m_payload_last.val();
        self.m_cell_data.next = self.segmenter.m_cell_data.val();
        self.m_cell_valid.next = self.segmenter.m_cell_valid.val();
        self.segmenter.m_cell_ready.next = self.m_cell_ready.val();
        self.m_cell_last.next = self.segmenter.m_cell_last.val();

        // Cells in: reassembler, the outcome's register slice (the engine's ready and its
        // decisions stop there), then the receive engine.
        self.reassembler.s_cell_data.next = self.s_cell_data.val();
        self.reassembler.s_cell_valid.next = self.s_cell_valid.val();
        self.s_cell_ready.next = self.reassembler.s_cell_ready.val();
        self.reassembler.s_cell_last.next = self.s_cell_last.val();
        self.rx_slice.s_data.next = self.reassembler.m_data.val();
        self.rx_slice.s_bytes.next = self.reassembler.m_bytes.val();
        self.rx_slice.s_valid.next = self.reassembler.m_valid.val();
        self.reassembler.m_ready.next = self.rx_slice.s_ready.val();
        self.rx_slice.s_last.next = self.reassembler.m_last.val();
        self.rx_slice.s_outcome.next = self.reassembler.m_outcome.val();
        self.rq.s_rx_data.next = self.rx_slice.m_data.val();
        self.rq.s_rx_bytes.next = self.rx_slice.m_bytes.val();
        self.rq.s_rx_valid.next = self.rx_slice.m_valid.val();
        self.rx_slice.m_ready.next = self.rq.s_rx_ready.val();
        self.rq.s_rx_last.next = self.rx_slice.m_last.val();
        self.rq.s_rx_outcome.next = self.rx_slice.m_outcome.val();
        self.rq.s_rx_class.next = self.rx_slice.m_class.val();

        // Engines talk to each other.
        self.rq.s_expect_valid.next = self.sq.m_expect_valid.val();
        self.sq.m_expect_ready.next = self.rq.s_expect_ready.val();
        self.rq.s_expect_qp.next = self.sq.m_expect_qp.val();
        self.rq.s_expect_psn.next = self.sq.m_expect_psn.val();
        self.rq.s_expect_addr.next = self.sq.m_expect_addr.val();
        self.rq.s_expect_length.next = self.sq.m_expect_length.val();
        self.rq.s_expect_atomic.next = self.sq.m_expect_atomic.val();
        self.ack_queue.s_ack_valid.next = self.rq.m_ack_valid.val();
        self.rq.m_ack_ready.next = self.ack_queue.s_ack_ready.val();
        self.ack_queue.s_ack.next = self.rq.m_ack.val();
        self.sq.s_ack_valid.next = self.ack_queue.m_ack_valid.val();
        self.ack_queue.m_ack_ready.next = self.sq.s_ack_ready.val();
        self.sq.s_ack_qp.next = self.ack_queue.m_ack.val().qp;
        self.sq.s_ack_psn.next = self.ack_queue.m_ack.val().psn;
        self.sq.s_ack_syndrome.next = self.ack_queue.m_ack.val().syndrome;
        self.sq.s_ack_response.next = self.ack_queue.m_ack.val().response;
        self.sq.s_ack_resync.next = self.ack_queue.m_ack.val().resync;
        self.resp.s_owe_valid.next = self.rq.m_owe_valid.val();
        self.rq.m_owe_ready.next = self.resp.s_owe_ready.val();
        self.resp.s_owe.next = self.rq.m_owe.val();
        self.rq.slot_busy.next = self.resp.slot_busy.val();

        // The TPT (CSR side port and lookups). Without one, NicCsr never forwards (TPT
        // offsets are unmapped) and the engine never asks: the ports are tied off. Only
        // then: a default overridden below by the TPT's own output makes an event-driven
        // simulator (Icarus) wake the engine's block on every evaluation of this one, and
        // the engine's outputs wake this one again, without end.
        if !self.has_tpt.val() {
            self.csr.m_tpt_csr_ready.next = true;
            self.csr.m_tpt_csr_rdata_valid.next = false;
            self.csr.m_tpt_csr_rdata.next = 0.into();
            self.rq.m_tpt_req_ready.next = false;
            self.rq.s_tpt_resp_valid.next = false;
            self.rq.s_tpt_resp_ok.next = false;
            self.rq.s_tpt_resp_paddr.next = 0.into();
            // No TPT: a BIND's write is taken at once (its completion passes unchanged).
            self.sq.m_bind_ready.next = true;
        }
        for i in 0..self.tpt.len() {
            self.tpt[i].clock.next = self.clock.val();
            self.tpt[i].reset.next = self.reset.val();
            self.tpt[i].s_csr_valid.next = self.csr.m_tpt_csr_valid.val();
            self.csr.m_tpt_csr_ready.next = self.tpt[i].s_csr_ready.val();
            self.tpt[i].s_csr_write.next = self.csr.m_tpt_csr_write.val();
            self.tpt[i].s_csr_reg.next = self.csr.m_tpt_csr_reg.val();
            self.tpt[i].s_csr_wdata.next = self.csr.m_tpt_csr_wdata.val();
            self.csr.m_tpt_csr_rdata_valid.next = self.tpt[i].m_csr_rdata_valid.val();
            self.csr.m_tpt_csr_rdata.next = self.tpt[i].m_csr_rdata.val();
            self.tpt[i].s_tpt_req_valid.next = self.rq.m_tpt_req_valid.val();
            self.rq.m_tpt_req_ready.next = self.tpt[i].s_tpt_req_ready.val();
            self.tpt[i].s_tpt_req.next = self.rq.m_tpt_req.val();
            self.rq.s_tpt_resp_valid.next = self.tpt[i].m_tpt_resp_valid.val();
            self.rq.s_tpt_resp_ok.next = self.tpt[i].m_tpt_resp_ok.val();
            self.rq.s_tpt_resp_paddr.next = self.tpt[i].m_tpt_resp_paddr.val();
            // A BIND RKEY executed in send-queue order writes its entry here.
            self.tpt[i].s_bind_valid.next = self.sq.m_bind_valid.val();
            self.sq.m_bind_ready.next = self.tpt[i].s_bind_ready.val();
            self.tpt[i].s_bind.next = self.sq.m_bind.val();
        }

        // Completions.
        self.cq.s_send_cpl_valid.next = self.sq.m_cpl_valid.val();
        self.sq.m_cpl_ready.next = self.cq.s_send_cpl_ready.val();
        self.cq.s_send_cpl.next = self.sq.m_cpl.val();
        self.cq.s_recv_cpl_valid.next = self.rq.m_cpl_valid.val();
        self.rq.m_cpl_ready.next = self.cq.s_recv_cpl_ready.val();
        self.cq.s_recv_cpl.next = self.rq.m_cpl.val();

        // DMA tx read port: requester (WQE fetch, payload) and responder (read responses).
        self.tx_read_arbiter.s_a_req_valid.next = self.sq.m_txrd_req_valid.val();
        self.sq.m_txrd_req_ready.next = self.tx_read_arbiter.s_a_req_ready.val();
        self.tx_read_arbiter.s_a_req_addr.next = self.sq.m_txrd_req_addr.val();
        self.tx_read_arbiter.s_a_req_words.next = self.sq.m_txrd_req_words.val();
        self.sq.s_txrd_data.next = self.tx_read_arbiter.m_a_data.val();
        self.sq.s_txrd_valid.next = self.tx_read_arbiter.m_a_valid.val();
        self.tx_read_arbiter.m_a_ready.next = self.sq.s_txrd_ready.val();
        self.sq.s_txrd_last.next = self.tx_read_arbiter.m_a_last.val();
        self.tx_read_arbiter.s_b_req_valid.next = self.resp.m_rdrd_req_valid.val();
        self.resp.m_rdrd_req_ready.next = self.tx_read_arbiter.s_b_req_ready.val();
        self.tx_read_arbiter.s_b_req_addr.next = self.resp.m_rdrd_req_addr.val();
        self.tx_read_arbiter.s_b_req_words.next = self.resp.m_rdrd_req_words.val();
        self.resp.s_rdrd_data.next = self.tx_read_arbiter.m_b_data.val();
        self.resp.s_rdrd_valid.next = self.tx_read_arbiter.m_b_valid.val();
        self.tx_read_arbiter.m_b_ready.next = self.resp.s_rdrd_ready.val();
        self.resp.s_rdrd_last.next = self.tx_read_arbiter.m_b_last.val();
        self.dma_tx_rd_req_valid.next = self.tx_read_arbiter.m_req_valid.val();
        self.tx_read_arbiter.m_req_ready.next = self.dma_tx_rd_req_ready.val();
        self.dma_tx_rd_req_addr.next = self.tx_read_arbiter.m_req_addr.val();
        self.dma_tx_rd_req_words.next = self.tx_read_arbiter.m_req_words.val();
        self.tx_read_arbiter.s_data_valid.next = self.dma_tx_rd_data_valid.val();
        self.dma_tx_rd_data_ready.next = self.tx_read_arbiter.s_data_ready.val();
        self.tx_read_arbiter.s_data.next = self.dma_tx_rd_data.val();
        self.tx_read_arbiter.s_data_last.next = self.dma_tx_rd_data_last.val();

        // DMA rx read port: responder (RQE fetch, atomics), requester (completion re-read).
        self.rx_read_arbiter.s_a_req_valid.next = self.rq.m_rqrd_req_valid.val();
        self.rq.m_rqrd_req_ready.next = self.rx_read_arbiter.s_a_req_ready.val();
        self.rx_read_arbiter.s_a_req_addr.next = self.rq.m_rqrd_req_addr.val();
        self.rx_read_arbiter.s_a_req_words.next = self.rq.m_rqrd_req_words.val();
        self.rq.s_rqrd_data.next = self.rx_read_arbiter.m_a_data.val();
        self.rq.s_rqrd_valid.next = self.rx_read_arbiter.m_a_valid.val();
        self.rx_read_arbiter.m_a_ready.next = self.rq.s_rqrd_ready.val();
        self.rq.s_rqrd_last.next = self.rx_read_arbiter.m_a_last.val();
        self.rx_read_arbiter.s_b_req_valid.next = self.sq.m_cplrd_req_valid.val();
        self.sq.m_cplrd_req_ready.next = self.rx_read_arbiter.s_b_req_ready.val();
        self.rx_read_arbiter.s_b_req_addr.next = self.sq.m_cplrd_req_addr.val();
        self.rx_read_arbiter.s_b_req_words.next = self.sq.m_cplrd_req_words.val();
        self.sq.s_cplrd_data.next = self.rx_read_arbiter.m_b_data.val();
        self.sq.s_cplrd_valid.next = self.rx_read_arbiter.m_b_valid.val();
        self.rx_read_arbiter.m_b_ready.next = self.sq.s_cplrd_ready.val();
        self.sq.s_cplrd_last.next = self.rx_read_arbiter.m_b_last.val();
        self.dma_rx_rd_req_valid.next = self.rx_read_arbiter.m_req_valid.val();
        self.rx_read_arbiter.m_req_ready.next = self.dma_rx_rd_req_ready.val();
        self.dma_rx_rd_req_addr.next = self.rx_read_arbiter.m_req_addr.val();
        self.dma_rx_rd_req_words.next = self.rx_read_arbiter.m_req_words.val();
        self.rx_read_arbiter.s_data_valid.next = self.dma_rx_rd_data_valid.val();
        self.dma_rx_rd_data_ready.next = self.rx_read_arbiter.s_data_ready.val();
        self.rx_read_arbiter.s_data.next = self.dma_rx_rd_data.val();
        self.rx_read_arbiter.s_data_last.next = self.dma_rx_rd_data_last.val();

        // DMA write port: responder writes and completion entries.
        self.write_arbiter.s_a_wr_valid.next = self.rq.m_wr_valid.val();
        self.rq.m_wr_ready.next = self.write_arbiter.s_a_wr_ready.val();
        self.write_arbiter.s_a_wr_addr.next = self.rq.m_wr_addr.val();
        self.write_arbiter.s_a_wr_data.next = self.rq.m_wr_data.val();
        self.write_arbiter.s_a_wr_strobe.next = self.rq.m_wr_strobe.val();
        self.write_arbiter.s_b_wr_valid.next = self.cq.m_wr_valid.val();
        self.cq.m_wr_ready.next = self.write_arbiter.s_b_wr_ready.val();
        self.write_arbiter.s_b_wr_addr.next = self.cq.m_wr_addr.val();
        self.write_arbiter.s_b_wr_data.next = self.cq.m_wr_data.val();
        self.write_arbiter.s_b_wr_strobe.next = self.cq.m_wr_strobe.val();
        self.dma_wr_valid.next = self.write_arbiter.m_wr_valid.val();
        self.write_arbiter.m_wr_ready.next = self.dma_wr_ready.val();
        self.dma_wr_addr.next = self.write_arbiter.m_wr_addr.val();
        self.dma_wr_data.next = self.write_arbiter.m_wr_data.val();
        self.dma_wr_strobe.next = self.write_arbiter.m_wr_strobe.val();
    }
}
