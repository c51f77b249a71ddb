#![warn(missing_docs)]
//! Waveforms for the NIC's simulations: VCD files written while a RustHDL block is
//! stepped directly, read back from either simulator (RustHDL or Verilator), checked
//! against expectations, and compared cycle by cycle.
//!
//! - [`paths`]: whether to write (`NIC_WAVES=1`) and where
//!   (`<workspace>/waves/<block>/<test>.vcd`).
//! - [`RustHdlVcd`]: VCD output for direct stepping, plus [`settle`].
//! - [`Waveform`]: a VCD file in memory, signals found by name suffix, changes in ps.
//! - [`assert_transitions`], [`assert_values_at`], [`compare`]: checks.
//! - [`inspect`]: `nic waves` (docs/waves.md): VCD and FST files streamed one time step
//!   at a time; list, show a window, diff two runs across the simulators' naming,
//!   render a timing diagram (SVG, PNG), GTKWave and Surfer views grouped by block.
//!
//! # Stepping a block directly
//!
//! `connect_all()` once; then per cycle: set the inputs' `.next`, [`settle`], set
//! `clock.next` true, settle (DFFs take `d` here), sample, set it false, settle,
//! sample. [`settle`] is `update_all()` until `has_changed()` is false, at most
//! [`MAX_SETTLE_ITERATIONS`] times.
//!
//! ```no_run
//! # use rust_hdl::prelude::*;
//! # use nic_waves::{settle, RustHdlVcd};
//! # #[derive(LogicBlock, Default)] struct Dut { clock: Signal<In, Clock>, x: Signal<In, Bit>, q: Signal<Out, Bit> }
//! # impl Logic for Dut { #[hdl_gen] fn update(&mut self) { self.q.next = self.x.val(); } }
//! let mut uut = Dut::default();
//! uut.connect_all();
//! check_all(&uut).unwrap(); // optional: what `Simulation` checks
//! // None unless NIC_WAVES=1; then waves/dut/one_cycle.vcd under the workspace.
//! let mut vcd = RustHdlVcd::for_test("dut", "one_cycle", &uut).unwrap();
//! settle(&mut uut);
//! if let Some(v) = &mut vcd { v.sample(0, &uut).unwrap(); }
//! for cycle in 0..10u64 {
//!     uut.x.next = cycle % 2 == 0;           // inputs for this cycle
//!     settle(&mut uut);
//!     uut.clock.next = Clock::from(true);
//!     settle(&mut uut);                      // rising edge
//!     if let Some(v) = &mut vcd { v.sample(cycle * 10_000 + 5_000, &uut).unwrap(); }
//!     uut.clock.next = Clock::from(false);
//!     settle(&mut uut);
//!     if let Some(v) = &mut vcd { v.sample(cycle * 10_000 + 10_000, &uut).unwrap(); }
//! }
//! if let Some(v) = vcd { v.finish().unwrap(); }
//! ```
//!
//! # Signal names
//!
//! [`Waveform`] joins scopes and the variable with `.`; a `[msb:lsb]` index is not
//! part of the name.
//!
//! - RustHDL ([`RustHdlVcd`], and `Simulation`'s VCDs): the top is `uut`, then one
//!   level per sub-block field: `uut.count`, `uut.counter.q`, `uut.counter.clock`.
//!   Struct-valued signals are split into `name$field`, arrays of blocks into
//!   `name$0`…; enum-typed signals are `wire 0` carrying strings (`sIdle`).
//! - Verilator (VerilatedVcdC, 5.006): ports under `TOP` (`TOP.count`) and again under
//!   the instance of the top module (`TOP.top.count`, same id code); internals below it
//!   with RustHDL's Verilog names, which flatten sub-block ports with `$`
//!   (`TOP.top.counter$q`) and also list them in the sub-module
//!   (`TOP.top.counter.q`). `$timescale 1ps`.
//!
//! So `find("count")` and `find("counter.q")` work in both; [`compare`] also falls back
//! to the last component and prefers the match nearest the top.

mod check;
pub mod counter_fst;
mod error;
pub mod inspect;
pub mod paths;
mod value;
mod waveform;
mod writer;

pub use check::{
    assert_transitions, assert_values_at, compare, compare_with, CompareOptions, Mismatch, Side,
};
pub use error::WaveError;
pub use paths::{wave_path, waves_enabled, workspace_root};
pub use value::{Logic, Value};
pub use waveform::{SignalId, Waveform};
pub use writer::{settle, try_settle, RustHdlVcd, MAX_SETTLE_ITERATIONS};
