//! `CellBuffer`: the reassembler's payload store, 256 words of 64 bits, one write port and
//! one registered read port on one clock.
//!
//! Follows the store-and-forward rule of `docs/cell-format.md` (a cell's bytes are held
//! until its checks pass) as the `CellReassembler` uses it.
//!
//! Ports: `clock`; write `write_address` (8), `write_data` (64), `write_enable` (the word
//! is stored on the rising edge); read `read_address` (8), `read_data` (64, the word at
//! the address as of the rising edge, from that edge on).
//! Latency: one clock on the read port. Throughput: one write and one read per clock.
//! Limits: no parameters. A word read in the clock it is written reads the old word in
//! RustHDL and is undefined in the Verilog (`no_rw_check`): the user must not do it.
//! Every word and the read port start at zero (an `initial` block in the Verilog).

use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Address bits of the cell buffer (256 words of 64 bits).
pub const BUFFER_ADDRESS_BITS: usize = 8;

/// The reassembler's cell buffer: 256 words of 64 bits with one write port and one registered read
/// port on one clock (four iCE40 block RAMs). The same as rust-hdl's `RAM`, except that
/// the memory is marked `no_rw_check`: yosys then leaves out its read-during-write
/// emulation (a 64-bit bypass register, its output mux and a read/write address compare
/// behind `m_ready`, about 200 cells). The reassembler never uses a word read in the
/// clock it is written: it reads only the words of the outcome being delivered, and the
/// cell being written starts after them (two cells of at most 128 words fit).
#[derive(LogicBlock, Default)]
pub struct CellBuffer {
    pub clock: Signal<In, Clock>,
    pub read_address: Signal<In, Bits<BUFFER_ADDRESS_BITS>>,
    pub read_data: Signal<Out, Bits<64>>,
    pub write_address: Signal<In, Bits<BUFFER_ADDRESS_BITS>>,
    pub write_data: Signal<In, Bits<64>>,
    pub write_enable: Signal<In, Bit>,
    _sim: Box<std::collections::BTreeMap<Bits<BUFFER_ADDRESS_BITS>, Bits<64>>>,
}

impl Logic for CellBuffer {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.read_data.next = *self
                ._sim
                .get(&self.read_address.val())
                .unwrap_or(&Bits::default());
            if self.write_enable.val() {
                self._sim
                    .insert(self.write_address.val(), self.write_data.val());
            }
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
(* no_rw_check *)
reg [63:0] mem [{top}:0];

// Every word and the read register start at zero, as in the RustHDL simulation, so that
// the other simulators read the same words before the first write.
integer i;
initial begin
    for (i = 0; i <= {top}; i = i + 1) begin
        mem[i] = 64'h0;
    end
    read_data = 64'h0;
end

always @(posedge clock) begin
    read_data <= mem[read_address];
end

always @(posedge clock) begin
    if (write_enable) begin
        mem[write_address] <= write_data;
    end
end
",
            top = (1 << BUFFER_ADDRESS_BITS) - 1
        ))
    }
}

impl ClockedBlock for CellBuffer {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::tick;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::HashMap;

    /// Random writes and reads, never to the word being written: each read returns the
    /// last word written there (zero if none), a clock later.
    #[test]
    fn reads_what_was_written() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut uut = CellBuffer::default();
        uut.connect_all();
        let mut mem: HashMap<u64, u64> = HashMap::new();
        for _ in 0..5000 {
            let (wa, ra) = loop {
                let (w, r) = (rng.gen_range(0..256u64), rng.gen_range(0..256u64));
                if w != r {
                    break (w, r);
                }
            };
            let we = rng.gen_bool(0.6);
            let wd: u64 = rng.gen();
            uut.write_address.next = wa.to_bits();
            uut.write_data.next = wd.to_bits();
            uut.write_enable.next = we;
            uut.read_address.next = ra.to_bits();
            tick(&mut uut);
            assert_eq!(
                uut.read_data.val().to_u64(),
                mem.get(&ra).copied().unwrap_or(0),
                "word {ra}"
            );
            if we {
                mem.insert(wa, wd);
            }
        }
    }

    #[test]
    fn synthesises() {
        let mut uut = CellBuffer::default();
        uut.connect_all();
        yosys_validate("nic_rtl_cell_buffer", &generate_verilog(&uut))
            .expect("yosys accepts CellBuffer");
    }
}
