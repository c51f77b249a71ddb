//! Three simulators agree: one block's recorded stimulus replayed in RustHDL stepping,
//! Verilator and Icarus Verilog, every output compared every cycle.
//!
//! - [`record_stimulus`]: the block driven on its Verilator model (a NIC top by two-NIC
//!   traffic, [`crate::nic_traffic_stimulus`]; any other block by the
//!   [`crate::handshake_driver`]), its inputs written to a stimulus file
//!   ([`nic_cosim::stimulus`]).
//! - [`replay_three`]: the file read back and replayed from reset into a fresh Verilator
//!   model and a fresh RustHDL block for [`ThreeSimOptions::cycles`] cycles, and into
//!   the exported Verilog under Icarus ([`nic_cosim::icarus`]) for the first
//!   [`ThreeSimOptions::icarus_cycles`] of them. RustHDL and Icarus are each compared
//!   with Verilator.
//! - On a mismatch, [`Disagreement`] names the first differing cycle and output port and
//!   both values, replays both disagreeing simulators again with waveforms on, to a few
//!   cycles past the mismatch, into `waves/threesim/<block>/<simulator>.vcd`, and
//!   compares those with `nic waves diff` ([`nic_waves::inspect::diff`]).
//! - [`PlantedFlip`]: flips one recorded input bit for one simulator only, so that a test
//!   can show a divergence is reported at the right cycle and signal.

use crate::handshake_driver::drive_recorded;
use crate::nic_traffic_stimulus::record_nic_traffic;
use nic_cosim::icarus::{replay_icarus, IcarusError};
use nic_cosim::stimulus::{read_stimulus, write_stimulus, StimulusError};
use nic_cosim::{
    packed_bits, CosimBlock, CosimError, PortStruct, RustHdlBlock, RustHdlModel, Stepper,
    VerilatedBlock, VerilatorModel,
};
use nic_rtl::export::ExportedBlock;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

/// Cycles past the first mismatch that the waveforms of a disagreement cover.
pub const WAVES_PAST_MISMATCH: u64 = 3;

/// Stack of the thread that steps a RustHDL block (the NIC tops are large values).
const RUSTHDL_STACK: usize = 512 << 20;

/// The three simulators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Simulator {
    RustHdl,
    Verilator,
    Icarus,
}

impl Simulator {
    /// Lower-case name, also the stem of its waveform file.
    pub fn name(self) -> &'static str {
        match self {
            Simulator::RustHdl => "rusthdl",
            Simulator::Verilator => "verilator",
            Simulator::Icarus => "icarus",
        }
    }
}

impl fmt::Display for Simulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One input bit flipped for one simulator only: a planted divergence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlantedFlip {
    pub simulator: Simulator,
    pub cycle: u64,
    pub port: String,
    pub bit: usize,
}

/// How long to replay, and where the files go.
#[derive(Clone, Debug)]
pub struct ThreeSimOptions {
    /// Cycles replayed in RustHDL and Verilator (at most the stimulus's length).
    pub cycles: usize,
    /// Cycles replayed in Icarus, from the start (at most `cycles`).
    pub icarus_cycles: usize,
    /// Icarus's work directory is `<work_dir>/<block>/icarus`.
    pub work_dir: PathBuf,
    /// A disagreement's waveforms go to `<waves_dir>/<block>/<simulator>.vcd`.
    pub waves_dir: PathBuf,
    pub plant: Option<PlantedFlip>,
}

impl ThreeSimOptions {
    /// `cycles` and `icarus_cycles` with the default places: `target/threesim` and
    /// `waves/threesim` under the workspace.
    pub fn new(cycles: usize, icarus_cycles: usize) -> Self {
        let root = nic_waves::paths::workspace_root();
        ThreeSimOptions {
            cycles,
            icarus_cycles,
            work_dir: root.join("target").join("threesim"),
            waves_dir: root.join("waves").join("threesim"),
            plant: None,
        }
    }

    /// Where block `block`'s recorded stimulus goes: `<work_dir>/<block>/stimulus.hex`.
    pub fn stimulus_path(&self, block: &str) -> PathBuf {
        self.work_dir.join(block).join("stimulus.hex")
    }
}

/// What an agreeing replay did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Agreement {
    pub block: String,
    /// Cycles compared in RustHDL and Verilator.
    pub cycles: u64,
    /// Cycles compared in Icarus.
    pub icarus_cycles: u64,
    /// Cycles per second of each simulator: RustHDL, Verilator, Icarus (`vvp` alone).
    pub cycles_per_s: [f64; 3],
}

/// The first cycle and output on which two simulators differ.
#[derive(Clone, Debug)]
pub struct Disagreement {
    pub block: String,
    pub cycle: u64,
    /// The output port.
    pub signal: String,
    pub simulators: [Simulator; 2],
    /// The port's value in each (hex, or as Icarus printed an unknown value).
    pub values: [String; 2],
    /// Both simulators' waveforms, to [`WAVES_PAST_MISMATCH`] cycles past the mismatch.
    pub waves: [PathBuf; 2],
    /// `nic waves diff` of the two waveforms (or why it could not run).
    pub waves_diff: String,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b] = self.simulators;
        write!(
            f,
            "block {}: {a} and {b} differ first at cycle {} in output `{}`: {a} {}, {b} {}\n  waves: {}\n         {}\n  nic waves diff:\n    {}",
            self.block,
            self.cycle,
            self.signal,
            self.values[0],
            self.values[1],
            self.waves[0].display(),
            self.waves[1].display(),
            self.waves_diff.replace('\n', "\n    ")
        )
    }
}

/// Errors of a three-simulator replay.
#[derive(Debug, thiserror::Error)]
pub enum ThreeSimError {
    #[error("{0}")]
    Disagree(Box<Disagreement>),
    #[error(transparent)]
    Stimulus(#[from] StimulusError),
    #[error(transparent)]
    Cosim(#[from] CosimError),
    #[error(transparent)]
    Icarus(#[from] IcarusError),
    #[error("{0}")]
    Invalid(String),
}

/// The exported block named `name` (as the co-simulation models were built from).
pub fn exported_block(name: &str) -> Result<&'static ExportedBlock, ThreeSimError> {
    static BLOCKS: OnceLock<Vec<ExportedBlock>> = OnceLock::new();
    let blocks = BLOCKS.get_or_init(nic_rtl::export::cosim_blocks);
    blocks.iter().find(|b| b.name == name).ok_or_else(|| {
        let names: Vec<&str> = blocks.iter().map(|b| b.name.as_str()).collect();
        ThreeSimError::Invalid(format!(
            "no exported block `{name}`; the blocks are {}",
            names.join(", ")
        ))
    })
}

/// Drive block `B` for `cycles` cycles on its Verilator model (seeded with `seed`) and
/// write its inputs to `path`.
pub fn record_stimulus<B: VerilatedBlock>(
    path: &Path,
    cycles: usize,
    seed: u64,
) -> Result<(), ThreeSimError> {
    use nic_cosim::{VerilatedNicTop, VerilatedNicTopQp64, VerilatedNicTopTpt256};
    fn pair<T: VerilatedBlock>() -> Result<[VerilatorModel<T>; 2], CosimError> {
        Ok([VerilatorModel::new()?, VerilatorModel::new()?])
    }
    match B::NAME {
        "nic_top" => {
            let inputs = record_nic_traffic::<VerilatedNicTop>(pair()?, cycles, seed);
            write_stimulus(path, B::NAME, &inputs)?
        }
        "nic_top_tpt256" => {
            let inputs = record_nic_traffic::<VerilatedNicTopTpt256>(pair()?, cycles, seed);
            write_stimulus(path, B::NAME, &inputs)?
        }
        "nic_top_qp64" => {
            let inputs = record_nic_traffic::<VerilatedNicTopQp64>(pair()?, cycles, seed);
            write_stimulus(path, B::NAME, &inputs)?
        }
        _ => {
            let mut model = VerilatorModel::<B>::new()?;
            let inputs = drive_recorded(&mut model, cycles, seed);
            write_stimulus(path, B::NAME, &inputs)?
        }
    }
    Ok(())
}

/// `inputs` with `plant` applied when it is for `simulator`.
fn planted<I: PortStruct>(
    inputs: &[I],
    plant: Option<&PlantedFlip>,
    simulator: Simulator,
) -> Result<Vec<I>, ThreeSimError> {
    let mut out = inputs.to_vec();
    let Some(p) = plant.filter(|p| p.simulator == simulator) else {
        return Ok(out);
    };
    let index = I::PORTS
        .iter()
        .position(|q| q.name == p.port)
        .ok_or_else(|| ThreeSimError::Invalid(format!("no input port `{}`", p.port)))?;
    if p.bit >= I::PORTS[index].width {
        return Err(ThreeSimError::Invalid(format!(
            "input `{}` has {} bits, no bit {}",
            p.port,
            I::PORTS[index].width,
            p.bit
        )));
    }
    let value = out
        .get_mut(p.cycle as usize)
        .ok_or_else(|| ThreeSimError::Invalid(format!("the stimulus has no cycle {}", p.cycle)))?;
    let mut words = value.port_words(index);
    words[p.bit / 64] ^= 1 << (p.bit % 64);
    value.set_port_words(index, &words);
    Ok(out)
}

/// Step a fresh Verilator model through `inputs` (traced into `trace` if given).
fn run_verilator<B: VerilatedBlock>(
    inputs: &[B::Inputs],
    trace: Option<&Path>,
) -> Result<(Vec<B::Outputs>, f64), ThreeSimError> {
    let mut model = VerilatorModel::<B>::new()?;
    run_stepper(&mut model, inputs, trace)
}

/// Step a fresh RustHDL block through `inputs` on a thread with a large stack.
fn run_rusthdl<B: RustHdlBlock>(
    inputs: &[B::Inputs],
    trace: Option<&Path>,
) -> Result<(Vec<B::Outputs>, f64), ThreeSimError> {
    let owned = inputs.to_vec();
    let trace = trace.map(Path::to_path_buf);
    std::thread::Builder::new()
        .stack_size(RUSTHDL_STACK)
        .spawn(move || {
            let mut model = RustHdlModel::<B>::new();
            run_stepper(&mut model, &owned, trace.as_deref())
        })
        .map_err(|e| ThreeSimError::Invalid(format!("starting the RustHDL replay: {e}")))?
        .join()
        .map_err(|_| {
            ThreeSimError::Invalid(format!("the RustHDL replay of {} panicked", B::NAME))
        })?
}

fn run_stepper<S: Stepper>(
    model: &mut S,
    inputs: &[S::Inputs],
    trace: Option<&Path>,
) -> Result<(Vec<S::Outputs>, f64), ThreeSimError> {
    if let Some(path) = trace {
        model.open_trace(path)?;
    }
    let start = Instant::now();
    let outputs = inputs.iter().map(|i| model.step(i)).collect();
    let seconds = start.elapsed().as_secs_f64();
    model.close_trace();
    Ok((outputs, seconds))
}

/// The first cycle and output port on which two runs' outputs differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputDifference {
    pub cycle: u64,
    pub signal: String,
    /// The port's value in each run, in hex.
    pub values: [String; 2],
}

/// The first cycle (counting from the start of both slices) and port where `a` and `b`
/// differ; `None` when they agree as far as both go.
pub fn first_difference<O: PortStruct>(a: &[O], b: &[O]) -> Option<OutputDifference> {
    let (cycle, (x, y)) = a.iter().zip(b).enumerate().find(|(_, (x, y))| x != y)?;
    let index = (0..O::PORTS.len()).find(|&k| x.port_words(k) != y.port_words(k))?;
    Some(OutputDifference {
        cycle: cycle as u64,
        signal: O::PORTS[index].name.to_string(),
        values: [
            packed_bits::port_hex(x, index),
            packed_bits::port_hex(y, index),
        ],
    })
}

/// A mismatch found in the outputs, before its waveforms are written.
struct Mismatch {
    cycle: u64,
    signal: String,
    other: Simulator,
    values: [String; 2],
}

/// The first cycle and port where `other` differs from Verilator's `reference`.
fn first_mismatch<O: PortStruct>(
    reference: &[O],
    candidate: &[O],
    other: Simulator,
) -> Option<Mismatch> {
    first_difference(reference, candidate).map(|d| Mismatch {
        cycle: d.cycle,
        signal: d.signal,
        other,
        values: d.values,
    })
}

fn per_second(cycles: usize, seconds: f64) -> f64 {
    if seconds > 0.0 {
        cycles as f64 / seconds
    } else {
        f64::INFINITY
    }
}

/// Replay the stimulus file `stimulus` (recorded for block `B`) in the three simulators
/// and compare their outputs every cycle (see the module documentation).
pub fn replay_three<B: RustHdlBlock + VerilatedBlock>(
    stimulus: &Path,
    options: &ThreeSimOptions,
) -> Result<Agreement, ThreeSimError> {
    let block = exported_block(B::NAME)?;
    let recorded: Vec<B::Inputs> = read_stimulus(stimulus)?;
    let cycles = options.cycles.min(recorded.len());
    let icarus_cycles = options.icarus_cycles.min(cycles);
    let recorded = &recorded[..cycles];
    let plant = options.plant.as_ref();
    let inputs_of = |s| planted(recorded, plant, s);

    let (verilator, v_seconds) = run_verilator::<B>(&inputs_of(Simulator::Verilator)?, None)?;
    let (rusthdl, r_seconds) = run_rusthdl::<B>(&inputs_of(Simulator::RustHdl)?, None)?;
    let icarus_dir = options.work_dir.join(B::NAME).join("icarus");
    let icarus_stimulus =
        icarus_stimulus_file::<B>(stimulus, &inputs_of(Simulator::Icarus)?, plant, &icarus_dir)?;
    let icarus = replay_icarus::<B>(block, &icarus_stimulus, icarus_cycles, &icarus_dir, None)?;

    let mut mismatches = vec![];
    mismatches.extend(first_mismatch(&verilator, &rusthdl, Simulator::RustHdl));
    mismatches.extend(first_mismatch(
        &verilator[..icarus.outputs.len().min(icarus_cycles)],
        &icarus.outputs,
        Simulator::Icarus,
    ));
    if let Some(u) = &icarus.unknown {
        let index = <B::Outputs as PortStruct>::PORTS
            .iter()
            .position(|p| p.name == u.port)
            .unwrap_or(0);
        mismatches.push(Mismatch {
            cycle: u.cycle,
            signal: u.port.to_string(),
            other: Simulator::Icarus,
            values: [
                packed_bits::port_hex(&verilator[u.cycle as usize], index),
                u.text.clone(),
            ],
        });
    }
    if let Some(m) = mismatches.into_iter().min_by_key(|m| m.cycle) {
        let d = disagreement::<B>(block, m, &icarus_stimulus, options, &inputs_of)?;
        return Err(ThreeSimError::Disagree(Box::new(d)));
    }
    Ok(Agreement {
        block: B::NAME.to_string(),
        cycles: cycles as u64,
        icarus_cycles: icarus.outputs.len() as u64,
        cycles_per_s: [
            per_second(cycles, r_seconds),
            per_second(cycles, v_seconds),
            per_second(icarus.outputs.len(), icarus.seconds),
        ],
    })
}

/// The stimulus file Icarus reads: the recorded file itself, or a copy with the planted
/// flip in the work directory.
fn icarus_stimulus_file<B: CosimBlock>(
    recorded: &Path,
    inputs: &[B::Inputs],
    plant: Option<&PlantedFlip>,
    dir: &Path,
) -> Result<PathBuf, ThreeSimError> {
    match plant {
        Some(p) if p.simulator == Simulator::Icarus => {
            let path = dir.join("stimulus-planted.hex");
            write_stimulus(&path, B::NAME, inputs)?;
            Ok(path)
        }
        _ => Ok(recorded.to_path_buf()),
    }
}

/// Write both simulators' waveforms of a mismatch and compare them.
fn disagreement<B: RustHdlBlock + VerilatedBlock>(
    block: &ExportedBlock,
    m: Mismatch,
    icarus_stimulus: &Path,
    options: &ThreeSimOptions,
    inputs_of: &dyn Fn(Simulator) -> Result<Vec<B::Inputs>, ThreeSimError>,
) -> Result<Disagreement, ThreeSimError> {
    let simulators = [Simulator::Verilator, m.other];
    let dir = options.waves_dir.join(B::NAME);
    let waves = simulators.map(|s| dir.join(format!("{}.vcd", s.name())));
    for (s, path) in simulators.iter().zip(&waves) {
        let inputs = inputs_of(*s)?;
        let end = ((m.cycle + 1 + WAVES_PAST_MISMATCH) as usize).min(inputs.len());
        match s {
            Simulator::Verilator => {
                run_verilator::<B>(&inputs[..end], Some(path))?;
            }
            Simulator::RustHdl => {
                run_rusthdl::<B>(&inputs[..end], Some(path))?;
            }
            Simulator::Icarus => {
                let work = options.work_dir.join(B::NAME).join("icarus-waves");
                replay_icarus::<B>(block, icarus_stimulus, end, &work, Some(path))?;
            }
        }
    }
    Ok(Disagreement {
        block: B::NAME.to_string(),
        cycle: m.cycle,
        signal: m.signal,
        simulators,
        values: m.values,
        waves_diff: waves_diff::<B>(&waves),
        waves,
    })
}

/// `nic waves diff` of the two waveforms over the block's ports.
fn waves_diff<B: CosimBlock>(waves: &[PathBuf; 2]) -> String {
    use nic_waves::inspect::{diff, DiffOptions, WaveFile};
    let signals = <B::Inputs as PortStruct>::PORTS
        .iter()
        .chain(<B::Outputs as PortStruct>::PORTS)
        .map(|p| p.name.to_string())
        .collect();
    let options = DiffOptions {
        signals,
        ..Default::default()
    };
    let report = WaveFile::open(&waves[0])
        .and_then(|a| Ok((a, WaveFile::open(&waves[1])?)))
        .and_then(|(a, b)| diff(a, b, &options));
    match report {
        Ok(r) => r.to_string(),
        Err(e) => format!("could not compare the waveforms: {e}"),
    }
}

/// Whether block `name` is a NIC top (its stimulus is two-NIC traffic).
pub fn is_nic_top(name: &str) -> bool {
    name.starts_with("nic_top")
}

/// Replay lengths of a run over several blocks: NIC tops and the other blocks apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Windows {
    /// RustHDL and Verilator cycles of each block other than a NIC top.
    pub block_cycles: usize,
    /// Icarus cycles of each block other than a NIC top.
    pub block_icarus_cycles: usize,
    /// RustHDL and Verilator cycles of a NIC top.
    pub top_cycles: usize,
    /// Icarus cycles of a NIC top.
    pub top_icarus_cycles: usize,
}

impl Windows {
    /// The short windows of the default test suite.
    pub const SHORT: Windows = Windows {
        block_cycles: 5_000,
        block_icarus_cycles: 1_000,
        top_cycles: 3_000,
        top_icarus_cycles: 1_000,
    };
    /// The long windows of `nic agree --long` and the ignored tests.
    pub const LONG: Windows = Windows {
        block_cycles: 100_000,
        block_icarus_cycles: 20_000,
        top_cycles: 60_000,
        top_icarus_cycles: 10_000,
    };

    /// `(cycles, icarus_cycles)` for block `name`.
    pub fn of(&self, name: &str) -> (usize, usize) {
        if is_nic_top(name) {
            (self.top_cycles, self.top_icarus_cycles)
        } else {
            (self.block_cycles, self.block_icarus_cycles)
        }
    }
}

/// Record block `B`'s stimulus (seeded with `seed`, as long as `options.cycles`) into
/// [`ThreeSimOptions::stimulus_path`], then [`replay_three`] it.
pub fn record_and_replay<B: RustHdlBlock + VerilatedBlock>(
    options: &ThreeSimOptions,
    seed: u64,
) -> Result<Agreement, ThreeSimError> {
    let path = options.stimulus_path(B::NAME);
    record_stimulus::<B>(&path, options.cycles, seed)?;
    replay_three::<B>(&path, options)
}

/// [`record_and_replay`] of every co-simulated block that `select` accepts, with
/// `windows`, in `nic_cosim::BLOCKS` order; `each` hears of every block as it finishes.
pub fn agree_blocks(
    select: &dyn Fn(&str) -> bool,
    windows: Windows,
    seed: u64,
    each: &mut dyn FnMut(&str, &Result<Agreement, ThreeSimError>),
) -> Vec<(String, Result<Agreement, ThreeSimError>)> {
    struct Visit<'a> {
        select: &'a dyn Fn(&str) -> bool,
        windows: Windows,
        seed: u64,
        each: &'a mut dyn FnMut(&str, &Result<Agreement, ThreeSimError>),
        results: Vec<(String, Result<Agreement, ThreeSimError>)>,
    }
    impl nic_cosim::BlockVisitor for Visit<'_> {
        fn visit<B: RustHdlBlock + VerilatedBlock>(&mut self) {
            if !(self.select)(B::NAME) {
                return;
            }
            let (cycles, icarus_cycles) = self.windows.of(B::NAME);
            let options = ThreeSimOptions::new(cycles, icarus_cycles);
            let result = record_and_replay::<B>(&options, self.seed);
            (self.each)(B::NAME, &result);
            self.results.push((B::NAME.to_string(), result));
        }
    }
    let mut visit = Visit {
        select,
        windows,
        seed,
        each,
        results: vec![],
    };
    nic_cosim::for_each_block(&mut visit);
    visit.results
}

#[cfg(test)]
mod tests {
    use super::*;
    use nic_cosim::Crc32Outputs;

    #[test]
    fn the_first_difference_names_its_cycle_port_and_values() {
        let a = vec![Crc32Outputs::default(); 5];
        let mut b = a.clone();
        assert_eq!(first_difference(&a, &b), None);
        b[3].crc_next = 0x10;
        b[4].crc = 1;
        assert_eq!(
            first_difference(&a, &b),
            Some(OutputDifference {
                cycle: 3,
                signal: "crc_next".into(),
                values: ["0x00000000".into(), "0x00000010".into()],
            })
        );
        // Only as far as both go.
        assert_eq!(first_difference(&a[..3], &b), None);
    }

    #[test]
    fn windows_of_blocks_and_tops() {
        assert_eq!(Windows::SHORT.of("crc32"), (5_000, 1_000));
        assert_eq!(Windows::SHORT.of("nic_top"), (3_000, 1_000));
        assert_eq!(Windows::LONG.of("nic_top_tpt256"), (60_000, 10_000));
    }
}
