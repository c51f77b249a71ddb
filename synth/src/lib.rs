//! Synthesis and lint flow of the NIC's Verilog blocks.
//!
//! - [`tool`]: [`Tool`] / [`run_tool`], the one wrapper through which every external
//!   tool runs (log file, exit status, [`ToolError`] with the command line and log tail).
//! - [`lint`](mod@lint): [`lint()`], Verilator `--lint-only -Wall` with the waiver file
//!   `rtl/lint/verilator_waiver.vlt`, parsed into a [`LintReport`].
//! - [`ice40`]: [`synth_ice40`], yosys + nextpnr-ice40 on the HX8K: resource counts of
//!   the block alone and Fmax inside a three-pin timing wrapper.
//! - [`breakdown`]: [`synth_ice40_breakdown`], a top's LUTs / FFs / RAM4K per block.
//! - [`report`]: [`SynthReport`], [`render_table`], [`write_json`].
//!
//! Needs `verilator`, `yosys` and `nextpnr-ice40` on `PATH` (scripts/setup.sh installs
//! them); a missing one is reported as "not found on PATH". Every output path comes from
//! the caller; nothing is written to the shared temp dir.

// A ToolError carries the command line, log path and log tail (about 150 bytes); it is
// built once per failed tool run, so boxing it would buy nothing.
#![allow(clippy::result_large_err)]

pub mod breakdown;
pub mod ice40;
pub mod lint;
pub mod report;
pub mod tool;

pub use breakdown::{render_breakdown, synth_ice40_breakdown, BlockShare, Breakdown};
pub use ice40::{
    synth_ice40, synth_ice40_report, synth_ice40_resources, timing_wrapper, Port, SynthError,
    SynthInput, CLOCK_PORT, DEFAULT_TARGET_MHZ,
};
pub use lint::{lint, LintReport, LintWarning};
pub use report::{render_table, write_json, CriticalPath, SynthReport};
pub use tool::{run_tool, Failure, Tool, ToolError, ToolRun};
