//! [`zeroed_ram`]: a RustHDL `RAM` whose every word starts at zero.
//!
//! RustHDL's simulation reads a word never written as zero; the initial contents given
//! here also become an `initial` block in the Verilog, so Verilator and Icarus read the
//! same before the first write (`nic agree` compares them every cycle).

use rust_hdl::prelude::*;
use rust_hdl::widgets::prelude::RAM;

/// A RAM of `2^N` words of `D`, all zero.
pub fn zeroed_ram<D: Synth, const N: usize>() -> RAM<D, N> {
    RAM::new(
        (0..1u64 << N)
            .map(|a| (a.to_bits(), D::default()))
            .collect(),
    )
}
