//! `QpRam`: a per-queue-pair RAM whose depth follows the queue-pair count.
//!
//! One word of `D` per queue pair, `depth` = `queue_pairs` rounded up to a power of two
//! (1, 2, 4, .. 64), every word zero at start (in RustHDL's simulation and, as an `initial`
//! block, in Verilator and Icarus, so the three read the same before the first write).
//! The ports are those of RustHDL's `RAM<D, 6>` (a queue pair's 6-bit number as the
//! address) with one `clock` for both ports; only the low `log2(depth)` address bits
//! select the word. A configuration of 4 queue pairs declares a
//! 4-word memory, which yosys maps to LUT RAM or flip-flops instead of a block RAM, so the
//! block RAMs a table needs follow the queue-pair count, not the table's width alone.
//!
//! Ports:
//! - `clock`: both ports'.
//! - `write_enable`, `write_address` (6), `write_data`: the word at
//!   `write_address mod depth` takes `write_data` at the clock edge.
//! - `read_address` (6), `read_data`: synchronous read, the word at
//!   `read_address mod depth` as of before the edge (a read of the word being written
//!   returns the old word).
//!
//! Latency: one clock on the read. Throughput: a read and a write every clock.
//! Limits: `queue_pairs` in 1..=64. The user keeps addresses below `queue_pairs` where it
//! matters: an address at or beyond `depth` aliases the word `address mod depth`.

use crate::sim::ClockedBlock;
use nic_abi::MAX_QUEUE_PAIRS;
use rust_hdl::core::timing::TimingInfo;
use rust_hdl::prelude::*;

/// Address bits of a queue pair's number.
pub const QP_RAM_ADDRESS_BITS: usize = 6;

#[derive(LogicBlock)]
pub struct QpRam<D: Synth> {
    pub clock: Signal<In, Clock>,
    pub read_address: Signal<In, Bits<QP_RAM_ADDRESS_BITS>>,
    pub read_data: Signal<Out, D>,
    pub write_address: Signal<In, Bits<QP_RAM_ADDRESS_BITS>>,
    pub write_data: Signal<In, D>,
    pub write_enable: Signal<In, Bit>,
    /// The words (RustHDL's simulation); its length is the depth.
    _words: Vec<D>,
}

impl<D: Synth> QpRam<D> {
    /// A RAM of one word per queue pair for `queue_pairs` queue pairs, all zero.
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "QpRam: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        QpRam {
            clock: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            write_enable: Default::default(),
            _words: vec![D::default(); queue_pairs.next_power_of_two()],
        }
    }

    /// Words in the memory: `queue_pairs` rounded up to a power of two.
    pub fn depth(&self) -> usize {
        self._words.len()
    }

    fn index(&self, address: Bits<QP_RAM_ADDRESS_BITS>) -> usize {
        address.index() & (self.depth() - 1)
    }
}

impl<D: Synth> Logic for QpRam<D> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.read_data.next = self._words[self.index(self.read_address.val())];
            if self.write_enable.val() {
                let i = self.index(self.write_address.val());
                self._words[i] = self.write_data.val();
            }
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        let depth = self.depth();
        let k = depth.trailing_zeros() as usize;
        let top = QP_RAM_ADDRESS_BITS - 1;
        let (read_index, write_index) = if k == 0 {
            ("0".to_string(), "0".to_string())
        } else {
            (
                format!("read_address[{}:0]", k - 1),
                format!("write_address[{}:0]", k - 1),
            )
        };
        // Address bits above the depth select nothing; a wire named `unused_*` takes them
        // (Verilator's default `--unused-regexp`), so the lint sees every port bit read.
        let unused = if k < QP_RAM_ADDRESS_BITS {
            format!(
                "wire unused_address_bits = &{{1'b0, read_address[{top}:{k}], write_address[{top}:{k}]}};\n"
            )
        } else {
            String::new()
        };
        let init = (0..depth)
            .map(|a| format!("   mem[{a}] = {}'h0;\n", D::BITS))
            .collect::<String>();
        Verilog::Custom(format!(
            "\
reg[{msb}:0] mem[0:{last}];
{unused}
initial begin
{init}end

always @(posedge clock) begin
   read_data <= mem[{read_index}];
end

always @(posedge clock) begin
   if (write_enable) begin
      mem[{write_index}] <= write_data;
   end
end
",
            msb = D::BITS - 1,
            last = depth - 1,
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![
            TimingInfo {
                name: "ram_read".into(),
                clock: "clock".into(),
                inputs: vec!["read_address".into()],
                outputs: vec!["read_data".into()],
            },
            TimingInfo {
                name: "ram_write".into(),
                clock: "clock".into(),
                inputs: vec![
                    "write_address".into(),
                    "write_data".into(),
                    "write_enable".into(),
                ],
                outputs: vec![],
            },
        ]
    }
}

impl<D: Synth> ClockedBlock for QpRam<D> {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
