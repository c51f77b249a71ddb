//! `WidePorts`: the co-simulation's own self-test block, built into a model beside the
//! exported blocks (as block `cosim_selftest`, types `CosimSelftest*`) but not listed in
//! `BLOCKS`. It has the port shapes the generator must get right and the NIC blocks may
//! not have yet: 1-bit `Bit` and `Bits<1>`, odd widths, 33..=64 bits, and ports wider
//! than 64 bits (100 and 128 bits, passed as `[u64; 2]`).
//!
//! Ports (all combinational unless registered, one clock of latency):
//! - `s_flag` (1, `Bit`) -> `m_flag = !s_flag`.
//! - `s_one` (1, `Bits<1>`) -> `m_one = !s_one`.
//! - `s_odd` (7) -> `m_odd = s_odd + 1` (wrapping).
//! - `s_mid` (33) -> `m_mid`: `s_mid` registered.
//! - `s_wide` (100) -> `m_wide = s_wide`, `m_wide_reg`: `s_wide` registered.
//! - `s_full` (128) -> `m_full`: `!s_full` registered; `m_slice` (65) = bits 94:30 of
//!   `s_full` (crosses the 64-bit word boundary).
//!
//! Used by this file's build-script twin (`build.rs` includes it with `#[path]`) to export
//! the Verilog, and by the crate for the RustHDL side.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct WidePorts {
    pub clock: Signal<In, Clock>,
    pub s_flag: Signal<In, Bit>,
    pub s_one: Signal<In, Bits<1>>,
    pub s_odd: Signal<In, Bits<7>>,
    pub s_mid: Signal<In, Bits<33>>,
    pub s_wide: Signal<In, Bits<100>>,
    pub s_full: Signal<In, Bits<128>>,
    pub m_flag: Signal<Out, Bit>,
    pub m_one: Signal<Out, Bits<1>>,
    pub m_odd: Signal<Out, Bits<7>>,
    pub m_mid: Signal<Out, Bits<33>>,
    pub m_wide: Signal<Out, Bits<100>>,
    pub m_wide_reg: Signal<Out, Bits<100>>,
    pub m_slice: Signal<Out, Bits<65>>,
    pub m_full: Signal<Out, Bits<128>>,
    mid_reg: DFF<Bits<33>>,
    wide_reg: DFF<Bits<100>>,
    full_reg: DFF<Bits<128>>,
}

impl Logic for WidePorts {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, mid_reg, wide_reg, full_reg);
        self.m_flag.next = !self.s_flag.val();
        self.m_one.next = !self.s_one.val();
        self.m_odd.next = self.s_odd.val() + 1;
        self.mid_reg.d.next = self.s_mid.val();
        self.m_mid.next = self.mid_reg.q.val();
        self.m_wide.next = self.s_wide.val();
        self.wide_reg.d.next = self.s_wide.val();
        self.m_wide_reg.next = self.wide_reg.q.val();
        self.full_reg.d.next = !self.s_full.val();
        self.m_full.next = self.full_reg.q.val();
        self.m_slice.next = self.s_full.val().get_bits::<65>(30);
    }
}

/// The self-test block exported like the NIC blocks are.
pub fn export() -> nic_rtl::export::ExportedBlock {
    nic_rtl::export::export_block(
        "cosim_selftest",
        WidePorts::default(),
        "crate::selftest::WidePorts",
        "crate::selftest::WidePorts::default()".into(),
    )
}
