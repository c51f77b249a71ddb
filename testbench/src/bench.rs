//! Benchmarks: the same recorded stimulus replayed on both backends, timed side by side.

use crate::datapath::{run_datapath, DatapathOptions, DatapathReport};
use nic_cosim::{
    CellDatapathInputs, CellDatapathOutputs, CosimError, RustHdlCellDatapath, Stepper,
    VerilatedCellDatapath,
};
use std::path::Path;
use std::time::Instant;

/// A stepper that records every input it passes on.
pub struct Recording<S: Stepper> {
    pub inner: S,
    pub inputs: Vec<S::Inputs>,
}

impl<S: Stepper> Stepper for Recording<S>
where
    S::Inputs: Clone,
{
    type Inputs = S::Inputs;
    type Outputs = S::Outputs;
    fn step(&mut self, inputs: &Self::Inputs) -> Self::Outputs {
        self.inputs.push(inputs.clone());
        self.inner.step(inputs)
    }
    fn cycle(&self) -> u64 {
        self.inner.cycle()
    }
    fn open_trace(&mut self, path: &Path) -> Result<(), CosimError> {
        self.inner.open_trace(path)
    }
    fn close_trace(&mut self) {
        self.inner.close_trace()
    }
}

/// Measured numbers of `nic bench datapath`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DatapathBench {
    pub cycles: u64,
    pub verilator_cycles_per_s: f64,
    pub rusthdl_cycles_per_s: f64,
    /// Verilator cycles/s divided by RustHDL cycles/s.
    pub speedup: f64,
    /// Payload bytes carried by the link per busy clock, divided by the format's limit
    /// for the same messages (payload / all cell words): 1.0 means no idle link clocks.
    pub goodput_ratio: f64,
    pub format_limit: f64,
    pub scoreboard: DatapathReport,
}

fn replay<S: Stepper<Inputs = CellDatapathInputs, Outputs = CellDatapathOutputs>>(
    sim: &mut S,
    inputs: &[CellDatapathInputs],
) -> u64 {
    let mut checksum = 0u64;
    for i in inputs {
        let o = sim.step(i);
        checksum = checksum.wrapping_add(o.m_data ^ o.link_data);
    }
    checksum
}

/// Run the datapath benchmark: long saturating traffic (no idle, no back-pressure),
/// scoreboarded on Verilator while recording; then the recording replayed on Verilator
/// (repeated until at least `min_seconds`) and on RustHDL (once), timed.
pub fn bench_datapath(
    options: &DatapathOptions,
    min_seconds: f64,
) -> Result<DatapathBench, CosimError> {
    let mut rec = Recording {
        inner: VerilatedCellDatapath::new()?,
        inputs: vec![],
    };
    let scoreboard = run_datapath(&mut rec, options);
    let inputs = rec.inputs;
    let cycles = inputs.len() as u64;

    let start = Instant::now();
    let mut runs = 0u64;
    let mut sums = vec![];
    while runs == 0 || start.elapsed().as_secs_f64() < min_seconds {
        let mut v = VerilatedCellDatapath::new()?;
        sums.push(replay(&mut v, &inputs));
        runs += 1;
    }
    let verilator_cycles_per_s = (runs * cycles) as f64 / start.elapsed().as_secs_f64();

    let mut r = RustHdlCellDatapath::new();
    let start = Instant::now();
    let rust_sum = replay(&mut r, &inputs);
    let rusthdl_cycles_per_s = cycles as f64 / start.elapsed().as_secs_f64();
    assert!(
        sums.iter().all(|s| *s == rust_sum),
        "replayed outputs differ between backends"
    );

    let format_limit = if scoreboard.link_words == 0 {
        0.0
    } else {
        scoreboard.payload_bytes_on_link as f64 / (scoreboard.link_words * 8) as f64
    };
    Ok(DatapathBench {
        cycles,
        verilator_cycles_per_s,
        rusthdl_cycles_per_s,
        speedup: verilator_cycles_per_s / rusthdl_cycles_per_s,
        goodput_ratio: scoreboard.link_utilisation(),
        format_limit,
        scoreboard,
    })
}
