//! `CellDatapath`: the cell datapath end to end, segmenter → link → reassembler.
//!
//! The loopback that the co-simulation, benchmark and waveform demo run: messages go in
//! as descriptors and payload words, come out of the reassembler as checked per-cell
//! outcomes. The link between them is visible (`link_*`) and can be corrupted on purpose
//! with `link_error_mask` (XORed into every cell word crossing the link) to exercise the
//! reassembler's checks in hardware.
//!
//! Ports: `clock`, `reset`; the [`CellSegmenter`]'s `s_msg_*` and `s_payload_*` inputs;
//! the [`CellReassembler`]'s `m_*` outputs; `link_data` (64), `link_valid`, `link_ready`,
//! `link_last` (observation of the cell stream); `link_error_mask` (64, in);
//! `stat_cells_sent`, `stat_cells_ok`, `stat_cells_failed`, `stat_cells_dropped` (32).
//!
//! Latency: a cell's first payload beat leaves two clocks after the cell's last word
//! crossed the link. Throughput: one word per clock. Parameters: `cell_payload` as for
//! the two blocks (a multiple of 8 in 8..=1024).

use crate::cell::reassembler::CellReassembler;
use crate::cell::segmenter::CellSegmenter;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct CellDatapath {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_msg_valid: Signal<In, Bit>,
    pub s_msg_ready: Signal<Out, Bit>,
    pub s_msg_opcode: Signal<In, Bits<8>>,
    pub s_msg_dest_node: Signal<In, Bits<16>>,
    pub s_msg_src_node: Signal<In, Bits<16>>,
    pub s_msg_dest_qp: Signal<In, Bits<16>>,
    pub s_msg_src_qp: Signal<In, Bits<16>>,
    pub s_msg_psn: Signal<In, Bits<24>>,
    pub s_msg_length: Signal<In, Bits<32>>,
    pub s_msg_vaddr: Signal<In, Bits<64>>,
    pub s_msg_stag: Signal<In, Bits<32>>,
    pub s_msg_dma_length: Signal<In, Bits<32>>,
    pub s_msg_immediate: Signal<In, Bits<32>>,
    pub s_msg_has_immediate: Signal<In, Bit>,
    pub s_msg_invalidate: Signal<In, Bit>,
    pub s_msg_resync: Signal<In, Bit>,
    pub s_payload_data: Signal<In, Bits<64>>,
    pub s_payload_valid: Signal<In, Bit>,
    pub s_payload_ready: Signal<Out, Bit>,
    pub s_payload_last: Signal<In, Bit>,
    pub link_data: Signal<Out, Bits<64>>,
    pub link_valid: Signal<Out, Bit>,
    pub link_ready: Signal<Out, Bit>,
    pub link_last: Signal<Out, Bit>,
    pub link_error_mask: Signal<In, Bits<64>>,
    pub m_data: Signal<Out, Bits<64>>,
    pub m_bytes: Signal<Out, Bits<4>>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    pub m_last: Signal<Out, Bit>,
    pub m_status: Signal<Out, Bits<3>>,
    pub m_opcode: Signal<Out, Bits<8>>,
    pub m_flags: Signal<Out, Bits<8>>,
    pub m_cell_length: Signal<Out, Bits<16>>,
    pub m_dest_node: Signal<Out, Bits<16>>,
    pub m_src_node: Signal<Out, Bits<16>>,
    pub m_dest_qp: Signal<Out, Bits<16>>,
    pub m_src_qp: Signal<Out, Bits<16>>,
    pub m_cell_seq: Signal<Out, Bits<16>>,
    pub m_psn: Signal<Out, Bits<24>>,
    pub m_msg_length: Signal<Out, Bits<32>>,
    pub m_vaddr: Signal<Out, Bits<64>>,
    pub m_stag: Signal<Out, Bits<32>>,
    pub m_dma_length: Signal<Out, Bits<32>>,
    pub m_offset: Signal<Out, Bits<32>>,
    pub m_immediate: Signal<Out, Bits<32>>,
    pub stat_cells_sent: Signal<Out, Bits<32>>,
    pub stat_cells_ok: Signal<Out, Bits<32>>,
    pub stat_cells_failed: Signal<Out, Bits<32>>,
    pub stat_cells_dropped: Signal<Out, Bits<32>>,
    segmenter: CellSegmenter,
    reassembler: CellReassembler,
}

impl CellDatapath {
    /// Panics when `cell_payload` is not a multiple of 8 in 8..=1024.
    pub fn new(cell_payload: usize) -> Self {
        CellDatapath {
            clock: Default::default(),
            reset: Default::default(),
            s_msg_valid: Default::default(),
            s_msg_ready: Default::default(),
            s_msg_opcode: Default::default(),
            s_msg_dest_node: Default::default(),
            s_msg_src_node: Default::default(),
            s_msg_dest_qp: Default::default(),
            s_msg_src_qp: Default::default(),
            s_msg_psn: Default::default(),
            s_msg_length: Default::default(),
            s_msg_vaddr: Default::default(),
            s_msg_stag: Default::default(),
            s_msg_dma_length: Default::default(),
            s_msg_immediate: Default::default(),
            s_msg_has_immediate: Default::default(),
            s_msg_invalidate: Default::default(),
            s_msg_resync: Default::default(),
            s_payload_data: Default::default(),
            s_payload_valid: Default::default(),
            s_payload_ready: Default::default(),
            s_payload_last: Default::default(),
            link_data: Default::default(),
            link_valid: Default::default(),
            link_ready: Default::default(),
            link_last: Default::default(),
            link_error_mask: Default::default(),
            m_data: Default::default(),
            m_bytes: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_last: Default::default(),
            m_status: Default::default(),
            m_opcode: Default::default(),
            m_flags: Default::default(),
            m_cell_length: Default::default(),
            m_dest_node: Default::default(),
            m_src_node: Default::default(),
            m_dest_qp: Default::default(),
            m_src_qp: Default::default(),
            m_cell_seq: Default::default(),
            m_psn: Default::default(),
            m_msg_length: Default::default(),
            m_vaddr: Default::default(),
            m_stag: Default::default(),
            m_dma_length: Default::default(),
            m_offset: Default::default(),
            m_immediate: Default::default(),
            stat_cells_sent: Default::default(),
            stat_cells_ok: Default::default(),
            stat_cells_failed: Default::default(),
            stat_cells_dropped: Default::default(),
            segmenter: CellSegmenter::new(cell_payload),
            reassembler: CellReassembler::new(cell_payload),
        }
    }
}

impl Default for CellDatapath {
    fn default() -> Self {
        Self::new(crate::DEFAULT_CELL_PAYLOAD)
    }
}

impl Logic for CellDatapath {
    #[hdl_gen]
    fn update(&mut self) {
        self.segmenter.clock.next = self.clock.val();
        self.reassembler.clock.next = self.clock.val();
        self.segmenter.reset.next = self.reset.val();
        self.reassembler.reset.next = self.reset.val();
        self.segmenter.s_msg_valid.next = self.s_msg_valid.val();
        self.s_msg_ready.next = self.segmenter.s_msg_ready.val();
        self.segmenter.s_msg.next.opcode = self.s_msg_opcode.val();
        self.segmenter.s_msg.next.dest_node = self.s_msg_dest_node.val();
        self.segmenter.s_msg.next.src_node = self.s_msg_src_node.val();
        self.segmenter.s_msg.next.dest_qp = self.s_msg_dest_qp.val();
        self.segmenter.s_msg.next.src_qp = self.s_msg_src_qp.val();
        self.segmenter.s_msg.next.psn = self.s_msg_psn.val();
        self.segmenter.s_msg.next.length = self.s_msg_length.val();
        self.segmenter.s_msg.next.vaddr = self.s_msg_vaddr.val();
        self.segmenter.s_msg.next.stag = self.s_msg_stag.val();
        self.segmenter.s_msg.next.dma_length = self.s_msg_dma_length.val();
        self.segmenter.s_msg.next.immediate = self.s_msg_immediate.val();
        self.segmenter.s_msg.next.has_immediate = self.s_msg_has_immediate.val();
        self.segmenter.s_msg.next.invalidate = self.s_msg_invalidate.val();
        self.segmenter.s_msg.next.resync = self.s_msg_resync.val();
        self.segmenter.s_payload_data.next = self.s_payload_data.val();
        self.segmenter.s_payload_valid.next = self.s_payload_valid.val();
        self.s_payload_ready.next = self.segmenter.s_payload_ready.val();
        self.segmenter.s_payload_last.next = self.s_payload_last.val();
        // The link.
        self.reassembler.s_cell_data.next =
            self.segmenter.m_cell_data.val() ^ self.link_error_mask.val();
        self.reassembler.s_cell_valid.next = self.segmenter.m_cell_valid.val();
        self.reassembler.s_cell_last.next = self.segmenter.m_cell_last.val();
        self.segmenter.m_cell_ready.next = self.reassembler.s_cell_ready.val();
        self.link_data.next = self.segmenter.m_cell_data.val() ^ self.link_error_mask.val();
        self.link_valid.next = self.segmenter.m_cell_valid.val();
        self.link_ready.next = self.reassembler.s_cell_ready.val();
        self.link_last.next = self.segmenter.m_cell_last.val();
        // Reassembler outputs.
        self.reassembler.m_ready.next = self.m_ready.val();
        self.m_data.next = self.reassembler.m_data.val();
        self.m_bytes.next = self.reassembler.m_bytes.val();
        self.m_valid.next = self.reassembler.m_valid.val();
        self.m_last.next = self.reassembler.m_last.val();
        self.m_status.next = self.reassembler.m_outcome.val().status;
        self.m_opcode.next = self.reassembler.m_outcome.val().opcode;
        self.m_flags.next = self.reassembler.m_outcome.val().flags;
        self.m_cell_length.next = self.reassembler.m_outcome.val().cell_length;
        self.m_dest_node.next = self.reassembler.m_outcome.val().dest_node;
        self.m_src_node.next = self.reassembler.m_outcome.val().src_node;
        self.m_dest_qp.next = self.reassembler.m_outcome.val().dest_qp;
        self.m_src_qp.next = self.reassembler.m_outcome.val().src_qp;
        self.m_cell_seq.next = self.reassembler.m_outcome.val().cell_seq;
        self.m_psn.next = self.reassembler.m_outcome.val().psn;
        self.m_msg_length.next = self.reassembler.m_outcome.val().msg_length;
        self.m_vaddr.next = self.reassembler.m_outcome.val().vaddr;
        self.m_stag.next = self.reassembler.m_outcome.val().stag;
        self.m_dma_length.next = self.reassembler.m_outcome.val().dma_length;
        self.m_offset.next = self.reassembler.m_outcome.val().offset;
        self.m_immediate.next = self.reassembler.m_outcome.val().immediate;
        self.stat_cells_sent.next = self.segmenter.stat_cells.val();
        self.stat_cells_ok.next = self.reassembler.stat_cells_ok.val();
        self.stat_cells_failed.next = self.reassembler.stat_cells_failed.val();
        self.stat_cells_dropped.next = self.reassembler.stat_cells_dropped.val();
    }
}

impl ClockedBlock for CellDatapath {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthesises() {
        let mut uut = CellDatapath::new(256);
        uut.connect_all();
        yosys_validate("nic_rtl_cell_datapath", &generate_verilog(&uut))
            .expect("yosys accepts CellDatapath");
    }

    #[test]
    #[should_panic(expected = "CellSegmenter: cell_payload must be a multiple of 8")]
    fn rejects_bad_cell_payload() {
        CellDatapath::new(12);
    }
}
