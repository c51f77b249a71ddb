//! Synthesis and lint flow of the NIC's Verilog blocks.
//!
//! - [`tool`]: [`Tool`] / [`run_tool`], the one wrapper through which every external
//!   tool runs (log file, exit status, [`ToolError`] with the command line and log tail).
//! - [`lint`](mod@lint): [`lint()`], Verilator `--lint-only -Wall` with the waiver file
//!   `rtl/lint/verilator_waiver.vlt`, parsed into a [`LintReport`].
//! - [`device`]: [`Device`], the FPGAs synthesised for (ECP5 LFE5U-85F and -25F, iCE40
//!   HX8K): yosys command, nextpnr program and arguments, primitives counted, capacity.
//! - [`flow`]: [`synth_block`], yosys + nextpnr on a device: resource counts of the block
//!   alone and Fmax inside a three-pin timing wrapper.
//! - [`breakdown`]: [`synth_breakdown`], a top's LUTs / FFs / block RAMs per block.
//! - [`report`]: [`SynthReport`], [`render_table`], [`write_json`].
//!
//! Needs `verilator`, `yosys` and `nextpnr-ice40` on `PATH` and nextpnr-ecp5 in
//! `.tools/ecp5/` (scripts/setup.sh installs them all); a missing one is reported with
//! a message that says to run scripts/setup.sh. Every output path comes from the caller;
//! nothing is written to the shared temp dir.

// A ToolError carries the command line, log path and log tail (about 150 bytes); it is
// built once per failed tool run, so boxing it would buy nothing.
#![allow(clippy::result_large_err)]

pub mod breakdown;
pub mod device;
pub mod flow;
pub mod lint;
pub mod report;
pub mod tool;

pub use breakdown::{render_breakdown, synth_breakdown, BlockShare, Breakdown};
pub use device::{Capacity, Device};
pub use flow::{
    synth_block, synth_block_report, synth_block_resources, timing_wrapper, CellCounts, Port,
    SynthError, SynthInput, CLOCK_PORT, DEFAULT_TARGET_MHZ,
};
pub use lint::{lint, LintReport, LintWarning};
pub use report::{render_markdown, render_table, write_json, CriticalPath, SynthReport};
pub use tool::{run_tool, Failure, Tool, ToolError, ToolRun};
