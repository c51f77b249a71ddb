//! Co-simulation of the exported NIC blocks: each block as a Verilator model and under
//! RustHDL direct stepping, behind one trait, [`Stepper`], and compared cycle by cycle by
//! [`lockstep`].
//!
//! # Generated per block
//! For every block of `nic_rtl::export::cosim_blocks()` the
//! build script generates, from its port list, with `<Camel>` the CamelCase of the block
//! name (`crc32` -> `Crc32`, `cell_segmenter` -> `CellSegmenter`):
//! - `<Camel>Inputs` and `<Camel>Outputs`: `#[repr(C)]` structs with one field per port
//!   (except `clock`) named as the port; `bool` for 1 bit, `u8`/`u16`/`u32`/`u64` by width,
//!   `[u64; N]` above 64 bits (word 0 = bits 63:0). [`PortStruct`] gives their port list,
//!   random values and masking. `Debug` prints multi-bit fields in hex.
//! - `blocks::<Camel>`: a marker type implementing [`CosimBlock`], [`RustHdlBlock`] and
//!   [`VerilatedBlock`], for code generic over blocks (see [`for_each_block`]).
//! - `Verilated<Camel>` = [`VerilatorModel`]`<blocks::<Camel>>`: the Verilator model
//!   `V<module>` (e.g. `Vnic_crc32`) behind the generated C++ shim.
//! - `RustHdl<Camel>` = [`RustHdlModel`]`<blocks::<Camel>>`: the RustHDL block built with
//!   its `rust_constructor`, stepped directly.
//!
//! Adding a block to `exported_blocks` is all it takes to get all of these; [`BLOCKS`] and
//! [`BLOCK_INFO`] list them.
//!
//! # One cycle
//! [`Stepper::step`] applies the inputs with the clock low, lets the logic settle, samples
//! the outputs (so a registered output shows the value from before this cycle's edge and a
//! combinational one reacts to these inputs), then runs one clock cycle: rising edge,
//! settle, falling edge, settle. (The Verilator shim folds the falling edge into the next
//! step's input evaluation, two `eval()` calls per cycle: every block is clocked on the
//! rising edge only, so the outputs are the same.)
//!
//! # Waves
//! Both backends write VCD with timescale 1 ps and a 10 ns clock ([`CYCLE_PS`]): cycle `n`
//! (counting from 0 at construction) has its inputs applied and the clock falling at
//! `n * 10_000` ps, and the clock rising at `n * 10_000 + 5_000` ps. Each step writes two
//! time points (inputs settled; after the rising edge); closing the trace writes the final
//! falling edge. The Verilator trace has scopes `uut` (the ports) and `uut.<module>` (all
//! signals); the RustHDL trace has scope `uut` with RustHDL's names.
//! [`Stepper::skip_to`] moves the cycle count forward without stepping (the trace's time
//! jumps).
//!
//! Verilator traces can also carry one-bit **marker signals** in a top-level scope
//! `markers` ([`Stepper::declare_markers`], [`Stepper::mark`]): the shim registers its own
//! trace callbacks beside the model's, and a change is dumped 1 ps after the last step's
//! rising edge. With the feature `fst` the NIC tops are also built with `--trace-fst`
//! ([`TraceFormat::Fst`], [`VerilatorModel::with_format`]); the RustHDL backend writes VCD.
//!
//! # Without Verilator
//! If `verilator` is not on PATH when the crate builds (or `NIC_COSIM_VERILATOR=none`),
//! the crate still builds, with a warning, `cfg(verilator_missing)` set, and
//! [`VerilatorModel::new`] returning [`CosimError::VerilatorUnavailable`]. The RustHDL
//! backend works either way.

use rust_hdl::core::vcd_probe::VCDProbe;
use rust_hdl::prelude::{
    write_vcd_change, write_vcd_dump, write_vcd_header, Block, Clock, In, Signal,
};
use std::ffi::CString;
use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

pub mod cell_link;
pub mod cluster;
pub mod fabric;
pub mod host;
pub mod host_memory;
pub mod icarus;
pub mod packed_bits;
pub mod selftest;
pub mod stimulus;

/// The generated code (`OUT_DIR/cosim_generated.rs`), re-exported at the crate root.
#[allow(clippy::all, unused_imports)]
mod generated {
    use super::*;
    include!(concat!(env!("OUT_DIR"), "/cosim_generated.rs"));
}
pub use generated::*;

/// What [`CosimError::VerilatorUnavailable`] says when the crate was built without Verilator.
pub const VERILATOR_MISSING: &str =
    "verilator not found: the Verilator backend is disabled; run scripts/setup.sh then cargo build";

/// The `verilator --version` line of the Verilator that built the models, or `None` if the
/// crate was built without Verilator.
pub fn verilator_version() -> Option<&'static str> {
    generated::VERILATOR_VERSION
}

/// Errors of the co-simulation backends.
#[derive(Debug, thiserror::Error)]
pub enum CosimError {
    /// The crate was built without Verilator; the message says what to do.
    #[error("{0}")]
    VerilatorUnavailable(&'static str),
    /// The shim could not construct the Verilated model.
    #[error("could not construct the Verilator model V{module}")]
    ModelCreation { module: &'static str },
    /// A trace file could not be created or written.
    #[error("trace file {}: {source}", path.display())]
    TraceIo { path: PathBuf, source: io::Error },
    /// Verilator could not open the trace file.
    #[error("the Verilator model V{module} could not open trace file {}", path.display())]
    TraceOpen { module: &'static str, path: PathBuf },
    /// No model of the configuration asked for was built.
    #[error("{0}")]
    NoModel(String),
    /// Two backends disagreed (from [`lockstep_random`]; [`lockstep`] returns a typed
    /// [`Divergence`]).
    #[error("block {block}: {detail}")]
    Diverged { block: &'static str, detail: String },
}

/// One clocked block that can be stepped cycle by cycle: both backends implement it.
pub trait Stepper {
    type Inputs;
    type Outputs;
    /// Apply inputs, settle, sample outputs (pre-edge), then one full clock cycle.
    fn step(&mut self, inputs: &Self::Inputs) -> Self::Outputs;
    /// Cycles stepped since construction.
    fn cycle(&self) -> u64;
    /// Write a VCD of every following cycle to `path` (parent directories are created),
    /// closing any trace already open.
    fn open_trace(&mut self, path: &Path) -> Result<(), CosimError>;
    /// Finish and close the trace, if one is open.
    fn close_trace(&mut self);
    /// The format [`Stepper::open_trace`] writes.
    fn trace_format(&self) -> TraceFormat {
        TraceFormat::Vcd
    }
    /// The next step is cycle `cycle`, when that is later than [`Stepper::cycle`]: the
    /// trace's time jumps there (a model that was not stepped for a while, such as a
    /// powered-off NIC, keeps its trace on the caller's clock). Nothing is stepped.
    fn skip_to(&mut self, cycle: u64) {
        let _ = cycle;
    }
    /// Declare one-bit marker signals (scope `markers`, at most [`MAX_MARKERS`]) in the
    /// traces opened from now on; `false` when this backend's traces have none.
    fn declare_markers(&mut self, names: &[&str]) -> bool {
        let _ = names;
        false
    }
    /// Set the markers (bit `i`: the `i`-th name) as of the last step: a change is dumped
    /// 1 ps after that step's rising edge.
    fn mark(&mut self, bits: u64) {
        let _ = bits;
    }
}

/// Most marker signals a trace can have.
pub const MAX_MARKERS: usize = 64;

/// Waveform file formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// Value Change Dump: text, every backend.
    #[default]
    Vcd,
    /// Fast Signal Trace (GTKWave's compressed format): Verilator models built with the
    /// `fst` feature.
    Fst,
}

impl TraceFormat {
    /// The file extension, `vcd` or `fst`.
    pub fn extension(self) -> &'static str {
        match self {
            TraceFormat::Vcd => "vcd",
            TraceFormat::Fst => "fst",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.extension())
    }
}

impl<S: Stepper + ?Sized> Stepper for Box<S> {
    type Inputs = S::Inputs;
    type Outputs = S::Outputs;
    fn step(&mut self, inputs: &Self::Inputs) -> Self::Outputs {
        (**self).step(inputs)
    }
    fn cycle(&self) -> u64 {
        (**self).cycle()
    }
    fn open_trace(&mut self, path: &Path) -> Result<(), CosimError> {
        (**self).open_trace(path)
    }
    fn close_trace(&mut self) {
        (**self).close_trace()
    }
    fn trace_format(&self) -> TraceFormat {
        (**self).trace_format()
    }
    fn skip_to(&mut self, cycle: u64) {
        (**self).skip_to(cycle)
    }
    fn declare_markers(&mut self, names: &[&str]) -> bool {
        (**self).declare_markers(names)
    }
    fn mark(&mut self, bits: u64) {
        (**self).mark(bits)
    }
}

/// Name and width of one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortInfo {
    pub name: &'static str,
    pub width: usize,
}

/// One entry of [`BLOCK_INFO`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockInfo {
    /// Short name, `crc32`.
    pub name: &'static str,
    /// Verilog module, `nic_crc32` (Verilator model `Vnic_crc32`).
    pub module: &'static str,
    /// RustHDL type, `nic_rtl::Crc32`.
    pub rust_type: &'static str,
    /// Input ports except `clock`, in Verilog order.
    pub inputs: &'static [PortInfo],
    pub outputs: &'static [PortInfo],
}

/// The generated `<Camel>Inputs` / `<Camel>Outputs` structs.
pub trait PortStruct: Copy + Default + PartialEq + fmt::Debug + Send + Sync + 'static {
    /// The fields, in order.
    const PORTS: &'static [PortInfo];
    /// Every field uniformly random within its port width.
    fn random<R: rand::Rng + ?Sized>(rng: &mut R) -> Self;
    /// Bits above each port's width cleared (both backends ignore them).
    fn masked(self) -> Self;
    /// The value of port `index` (of [`PortStruct::PORTS`]) as little-endian 64-bit words,
    /// one per 64 bits of its width; empty for an index past the last port.
    fn port_words(&self, index: usize) -> Vec<u64>;
    /// Set port `index` from little-endian 64-bit words (missing words are zero, bits above
    /// the width dropped); an index past the last port changes nothing.
    fn set_port_words(&mut self, index: usize, words: &[u64]);
}

/// A block with generated types: implemented by the marker types in [`blocks`].
pub trait CosimBlock: 'static {
    /// Short name, `crc32`.
    const NAME: &'static str;
    /// Verilog module, `nic_crc32`.
    const MODULE: &'static str;
    /// RustHDL type, `nic_rtl::Crc32`.
    const RUST_TYPE: &'static str;
    type Inputs: PortStruct;
    type Outputs: PortStruct;
}

/// Called by [`for_each_block`] once per block.
pub trait BlockVisitor {
    fn visit<B: RustHdlBlock + VerilatedBlock>(&mut self);
}

// ---------------------------------------------------------------------------------------
// RustHDL backend
// ---------------------------------------------------------------------------------------

/// How the RustHDL backend drives one block (generated).
pub trait RustHdlBlock: CosimBlock {
    type Uut: Block;
    /// The block as `rust_constructor` builds it (not yet connected).
    fn build() -> Self::Uut;
    /// The `clock` input; `None` for a combinational block (no clock port), whose step
    /// applies the inputs, settles and samples.
    fn clock(uut: &mut Self::Uut) -> Option<&mut Signal<In, Clock>>;
    /// Set every input's `.next`.
    fn apply(uut: &mut Self::Uut, inputs: &Self::Inputs);
    /// Read every output's current value.
    fn sample(uut: &Self::Uut) -> Self::Outputs;
}

struct RustHdlTrace {
    path: PathBuf,
    probe: Option<VCDProbe<BufWriter<File>>>,
    dumped: bool,
    error: Option<io::Error>,
}

impl RustHdlTrace {
    fn dump<U: Block>(&mut self, uut: &U, time: u64) {
        let Some(mut probe) = self.probe.take() else {
            return;
        };
        if let Err(e) = probe.timestamp(time) {
            self.error.get_or_insert(e);
        }
        probe = if self.dumped {
            write_vcd_change(probe, uut)
        } else {
            write_vcd_dump(probe, uut)
        };
        self.dumped = true;
        self.probe = Some(probe);
    }
}

/// Drive block `B`'s clock, if it has one.
fn set_clock<B: RustHdlBlock>(uut: &mut B::Uut, high: bool) {
    if let Some(clock) = B::clock(uut) {
        clock.next = Clock::from(high);
    }
}

/// A RustHDL block stepped directly (no `Simulation` threads, `nic_rtl::sim::settle`
/// between the half cycles): 2x (Crc32) to 30x (the datapath) slower than its Verilator
/// model, but it needs nothing outside Rust and exposes the block itself
/// ([`RustHdlModel::uut`]).
pub struct RustHdlModel<B: RustHdlBlock> {
    uut: B::Uut,
    cycle: u64,
    trace: Option<RustHdlTrace>,
}

impl<B: RustHdlBlock> RustHdlModel<B> {
    /// Build the block with its constructor, connect it, and settle with all inputs zero.
    pub fn new() -> Self {
        let mut uut = B::build();
        uut.connect_all();
        B::apply(&mut uut, &B::Inputs::default());
        set_clock::<B>(&mut uut, false);
        nic_rtl::sim::settle(&mut uut);
        RustHdlModel {
            uut,
            cycle: 0,
            trace: None,
        }
    }

    /// The RustHDL block, for white-box checks of internal state.
    pub fn uut(&self) -> &B::Uut {
        &self.uut
    }

    /// The first write error of the open trace, if any (VCD writes are buffered).
    pub fn trace_error(&self) -> Option<&io::Error> {
        self.trace.as_ref().and_then(|t| t.error.as_ref())
    }
}

impl<B: RustHdlBlock> Default for RustHdlModel<B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<B: RustHdlBlock> Stepper for RustHdlModel<B> {
    type Inputs = B::Inputs;
    type Outputs = B::Outputs;

    fn step(&mut self, inputs: &B::Inputs) -> B::Outputs {
        use nic_rtl::sim::settle;
        let time = self.cycle * CYCLE_PS;
        B::apply(&mut self.uut, inputs);
        settle(&mut self.uut);
        let outputs = B::sample(&self.uut);
        if let Some(t) = &mut self.trace {
            t.dump(&self.uut, time);
        }
        set_clock::<B>(&mut self.uut, true);
        settle(&mut self.uut);
        if let Some(t) = &mut self.trace {
            t.dump(&self.uut, time + CYCLE_PS / 2);
        }
        set_clock::<B>(&mut self.uut, false);
        settle(&mut self.uut);
        self.cycle += 1;
        outputs
    }

    fn cycle(&self) -> u64 {
        self.cycle
    }

    fn open_trace(&mut self, path: &Path) -> Result<(), CosimError> {
        self.close_trace();
        let err = |source| CosimError::TraceIo {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let file = File::create(path).map_err(err)?;
        let probe = write_vcd_header(BufWriter::new(file), &self.uut);
        self.trace = Some(RustHdlTrace {
            path: path.to_path_buf(),
            probe: Some(probe),
            dumped: false,
            error: None,
        });
        Ok(())
    }

    fn skip_to(&mut self, cycle: u64) {
        self.cycle = self.cycle.max(cycle);
    }

    fn close_trace(&mut self) {
        if let Some(mut t) = self.trace.take() {
            t.dump(&self.uut, self.cycle * CYCLE_PS);
            // Dropping the probe flushes the BufWriter.
            drop(t.probe.take());
            if let Some(e) = t.error {
                eprintln!("nic-cosim: writing {} failed: {e}", t.path.display());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Verilator backend
// ---------------------------------------------------------------------------------------

/// The C ABI of the generated shims.
pub mod verilated {
    use std::os::raw::c_char;

    /// An opaque Verilated instance (the shim's `Model`: context, model, VCD writer, cycle).
    #[repr(C)]
    pub struct RawModel {
        _private: [u8; 0],
    }

    /// The functions of one block's shim.
    pub struct Ffi<I, O> {
        pub new: unsafe extern "C" fn() -> *mut RawModel,
        pub free: unsafe extern "C" fn(*mut RawModel),
        pub step: unsafe extern "C" fn(*mut RawModel, *const I, *mut O),
        pub trace_open: unsafe extern "C" fn(*mut RawModel, *const c_char) -> i32,
        pub trace_close: unsafe extern "C" fn(*mut RawModel),
        pub set_cycle: unsafe extern "C" fn(*mut RawModel, u64),
        pub markers: unsafe extern "C" fn(*mut RawModel, *const *const c_char, usize),
        pub mark: unsafe extern "C" fn(*mut RawModel, u64),
    }

    impl<I, O> Clone for Ffi<I, O> {
        fn clone(&self) -> Self {
            *self
        }
    }
    impl<I, O> Copy for Ffi<I, O> {}
}

/// A block with a Verilator model (generated).
///
/// # Safety
/// `FFI` must be the generated shim of this block: its `step` reads a `Self::Inputs` and
/// writes a `Self::Outputs` with exactly their `#[repr(C)]` layout.
pub unsafe trait VerilatedBlock: CosimBlock {
    /// `None` when the crate was built without Verilator.
    const FFI: Option<verilated::Ffi<Self::Inputs, Self::Outputs>>;
    /// The model built with `--trace-fst`: the NIC tops, with the crate's `fst` feature.
    const FFI_FST: Option<verilated::Ffi<Self::Inputs, Self::Outputs>> = None;
}

/// A Verilator model of a block, with its own `VerilatedContext` (instances are
/// independent and may run on different threads).
pub struct VerilatorModel<B: VerilatedBlock> {
    raw: NonNull<verilated::RawModel>,
    ffi: verilated::Ffi<B::Inputs, B::Outputs>,
    format: TraceFormat,
    cycle: u64,
    _block: PhantomData<B>,
}

// SAFETY: the instance is a plain heap object with its own VerilatedContext and no
// thread-local state; it is only touched through &mut self.
unsafe impl<B: VerilatedBlock> Send for VerilatorModel<B> {}

impl<B: VerilatedBlock> VerilatorModel<B> {
    /// Construct the model (all registers at their initial values, clock low).
    ///
    /// Errors: [`CosimError::VerilatorUnavailable`] when the crate was built without
    /// Verilator; [`CosimError::ModelCreation`] if the shim fails.
    pub fn new() -> Result<Self, CosimError> {
        Self::with_format(TraceFormat::Vcd)
    }

    /// The model whose traces are in `format`: [`Self::new`] for VCD; for FST the model
    /// built with `--trace-fst` ([`CosimError::NoModel`] when the crate was built without
    /// it: feature `fst`, NIC tops only).
    pub fn with_format(format: TraceFormat) -> Result<Self, CosimError> {
        let ffi = match format {
            TraceFormat::Vcd => {
                B::FFI.ok_or(CosimError::VerilatorUnavailable(VERILATOR_MISSING))?
            }
            TraceFormat::Fst => B::FFI_FST.ok_or_else(|| {
                CosimError::NoModel(format!(
                    "no FST model of {}: FST waves need the NIC tops built with --trace-fst, \
                     which nic-cosim's feature `fst` does (cargo build --release --features fst)",
                    B::MODULE
                ))
            })?,
        };
        // SAFETY: the shim's constructor has no preconditions.
        let raw = unsafe { (ffi.new)() };
        let raw = NonNull::new(raw).ok_or(CosimError::ModelCreation { module: B::MODULE })?;
        Ok(VerilatorModel {
            raw,
            ffi,
            format,
            cycle: 0,
            _block: PhantomData,
        })
    }
}

impl<B: VerilatedBlock> Drop for VerilatorModel<B> {
    fn drop(&mut self) {
        // SAFETY: raw came from ffi.new and is freed once.
        unsafe { (self.ffi.free)(self.raw.as_ptr()) }
    }
}

impl<B: VerilatedBlock> Stepper for VerilatorModel<B> {
    type Inputs = B::Inputs;
    type Outputs = B::Outputs;

    #[inline]
    fn step(&mut self, inputs: &B::Inputs) -> B::Outputs {
        let mut outputs = B::Outputs::default();
        // SAFETY: live instance; the struct layouts are the shim's (VerilatedBlock).
        unsafe { (self.ffi.step)(self.raw.as_ptr(), inputs, &mut outputs) };
        self.cycle += 1;
        outputs
    }

    fn cycle(&self) -> u64 {
        self.cycle
    }

    fn open_trace(&mut self, path: &Path) -> Result<(), CosimError> {
        use std::os::unix::ffi::OsStrExt;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| CosimError::TraceIo {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let open_err = || CosimError::TraceOpen {
            module: B::MODULE,
            path: path.to_path_buf(),
        };
        let c_path = CString::new(path.as_os_str().as_bytes()).map_err(|_| open_err())?;
        // SAFETY: live instance, NUL-terminated path that outlives the call.
        let rc = unsafe { (self.ffi.trace_open)(self.raw.as_ptr(), c_path.as_ptr()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(open_err())
        }
    }

    fn close_trace(&mut self) {
        // SAFETY: live instance.
        unsafe { (self.ffi.trace_close)(self.raw.as_ptr()) }
    }

    fn trace_format(&self) -> TraceFormat {
        self.format
    }

    fn skip_to(&mut self, cycle: u64) {
        if cycle > self.cycle {
            self.cycle = cycle;
            // SAFETY: live instance.
            unsafe { (self.ffi.set_cycle)(self.raw.as_ptr(), cycle) }
        }
    }

    fn declare_markers(&mut self, names: &[&str]) -> bool {
        let names: Vec<CString> = names
            .iter()
            .take(MAX_MARKERS)
            .map(|n| CString::new(n.replace('\0', "")).expect("no NUL left"))
            .collect();
        let ptrs: Vec<*const std::os::raw::c_char> = names.iter().map(|n| n.as_ptr()).collect();
        // SAFETY: live instance; the shim copies the strings before returning.
        unsafe { (self.ffi.markers)(self.raw.as_ptr(), ptrs.as_ptr(), ptrs.len()) };
        true
    }

    fn mark(&mut self, bits: u64) {
        // SAFETY: live instance.
        unsafe { (self.ffi.mark)(self.raw.as_ptr(), bits) }
    }
}

// ---------------------------------------------------------------------------------------
// Lockstep
// ---------------------------------------------------------------------------------------

/// The first cycle on which two steppers' outputs differed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence<I, O> {
    /// `a.cycle()` before the diverging step.
    pub cycle: u64,
    pub inputs: I,
    pub a_outputs: O,
    pub b_outputs: O,
}

impl<I: fmt::Debug, O: fmt::Debug> fmt::Display for Divergence<I, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "outputs differ at cycle {}\n  inputs: {:?}\n  a:      {:?}\n  b:      {:?}",
            self.cycle, self.inputs, self.a_outputs, self.b_outputs
        )
    }
}

impl<I: fmt::Debug, O: fmt::Debug> std::error::Error for Divergence<I, O> {}

/// Step `a` and `b` with the same inputs until `inputs` ends or their outputs differ.
/// Returns the number of cycles stepped.
pub fn lockstep<A, B, It>(
    a: &mut A,
    b: &mut B,
    inputs: It,
) -> Result<u64, Divergence<A::Inputs, A::Outputs>>
where
    A: Stepper,
    B: Stepper<Inputs = A::Inputs, Outputs = A::Outputs>,
    A::Outputs: PartialEq + fmt::Debug,
    It: IntoIterator<Item = A::Inputs>,
{
    let mut n = 0;
    for i in inputs {
        let cycle = a.cycle();
        let oa = a.step(&i);
        let ob = b.step(&i);
        if oa != ob {
            return Err(Divergence {
                cycle,
                inputs: i,
                a_outputs: oa,
                b_outputs: ob,
            });
        }
        n += 1;
    }
    Ok(n)
}

/// Block `B`'s Verilator model and RustHDL block in lockstep on `cycles` cycles of
/// uniformly random inputs from `rng`. Returns the cycles run.
pub fn lockstep_random<B: RustHdlBlock + VerilatedBlock, R: rand::Rng + ?Sized>(
    rng: &mut R,
    cycles: u64,
) -> Result<u64, CosimError> {
    let mut v = VerilatorModel::<B>::new()?;
    let mut h = RustHdlModel::<B>::new();
    let inputs: Vec<B::Inputs> = (0..cycles).map(|_| B::Inputs::random(rng)).collect();
    lockstep(&mut v, &mut h, inputs).map_err(|d| CosimError::Diverged {
        block: B::NAME,
        detail: format!("Verilator (a) vs RustHDL (b): {d}"),
    })
}

/// Helpers of the generated code.
#[doc(hidden)]
pub mod port {
    use rust_hdl::prelude::Bits;
    use std::fmt;

    /// A port value of width <= 64 on the RustHDL side: `Bit` (`bool`) or `Bits<N>`.
    pub trait PortValue: Copy {
        /// From the low bits of `v` (the bits above the width are dropped).
        fn from_u64(v: u64) -> Self;
        fn to_u64(self) -> u64;
    }

    impl PortValue for bool {
        fn from_u64(v: u64) -> Self {
            v & 1 != 0
        }
        fn to_u64(self) -> u64 {
            self as u64
        }
    }

    impl<const N: usize> PortValue for Bits<N> {
        fn from_u64(v: u64) -> Self {
            let v = if N < 64 { v & ((1u64 << N) - 1) } else { v };
            Bits::<N>::from(v)
        }
        fn to_u64(self) -> u64 {
            Bits::to_u64(self)
        }
    }

    /// A bundle port (a RustHDL `LogicStruct`, `nic_rtl::common::bundles`) as its packed bits.
    impl PortValue for nic_rtl::common::AckEvent {
        fn from_u64(v: u64) -> Self {
            <Bits<{ <Self as rust_hdl::prelude::Synth>::BITS }> as PortValue>::from_u64(v).into()
        }
        fn to_u64(self) -> u64 {
            Bits::<{ <Self as rust_hdl::prelude::Synth>::BITS }>::from(self).to_u64()
        }
    }

    /// The `OutcomeSlice`'s decoded header, a bundle port as its packed bits.
    impl PortValue for nic_rtl::common::OutcomeClass {
        fn from_u64(v: u64) -> Self {
            <Bits<{ <Self as rust_hdl::prelude::Synth>::BITS }> as PortValue>::from_u64(v).into()
        }
        fn to_u64(self) -> u64 {
            Bits::<{ <Self as rust_hdl::prelude::Synth>::BITS }>::from(self).to_u64()
        }
    }

    /// The `ActStage`'s loads of the message's registers, a bundle port as its packed bits.
    impl PortValue for nic_rtl::responder::ActLoads {
        fn from_u64(v: u64) -> Self {
            <Bits<{ <Self as rust_hdl::prelude::Synth>::BITS }> as PortValue>::from_u64(v).into()
        }
        fn to_u64(self) -> u64 {
            Bits::<{ <Self as rust_hdl::prelude::Synth>::BITS }>::from(self).to_u64()
        }
    }

    /// The `ActStage`'s owed answer, a bundle port as its packed bits.
    impl PortValue for nic_rtl::responder::OwedAnswer {
        fn from_u64(v: u64) -> Self {
            <Bits<{ <Self as rust_hdl::prelude::Synth>::BITS }> as PortValue>::from_u64(v).into()
        }
        fn to_u64(self) -> u64 {
            Bits::<{ <Self as rust_hdl::prelude::Synth>::BITS }>::from(self).to_u64()
        }
    }

    /// The receive engine's state, a port of its `ActStage` (RustHDL encodes a
    /// `LogicState` enum as the variant's index, in declaration order).
    impl PortValue for nic_rtl::responder::receive_queue_engine::ResponderState {
        fn from_u64(v: u64) -> Self {
            use nic_rtl::responder::receive_queue_engine::ResponderState::*;
            let all = [
                Clear,
                Idle,
                Lookup,
                FailLookup,
                FailDecide,
                Decide,
                Act,
                TptRequest,
                TptWait,
                RqeFetch,
                Stream,
                Owe,
                AckEvent,
                Drain,
                AtomicRead,
                AtomicData,
                AtomicWrite,
                Commit,
                Complete,
            ];
            all[(v as usize).min(all.len() - 1)]
        }
        fn to_u64(self) -> u64 {
            self as u64
        }
    }

    /// The send engine's table-engine state, a port of `SqOpGrant`.
    impl PortValue for nic_rtl::requester::send_queue_engine::SqEngineState {
        fn from_u64(v: u64) -> Self {
            use nic_rtl::requester::send_queue_engine::SqEngineState::*;
            [Idle, Read, Derive, Exec][(v & 3) as usize]
        }
        fn to_u64(self) -> u64 {
            self as u64
        }
    }

    /// The send engine's table operation, a port of `SqOpGrant` and `SqOpDecision`.
    impl PortValue for nic_rtl::requester::send_queue_engine::SqOp {
        fn from_u64(v: u64) -> Self {
            use nic_rtl::requester::send_queue_engine::SqOp::*;
            let all = [CsrRead, CsrWrite, Claim, Commit, Eval, Advance, Timer];
            all[(v as usize).min(all.len() - 1)]
        }
        fn to_u64(self) -> u64 {
            self as u64
        }
    }

    /// The receive engine's message mode, a port of its `ActStage`.
    impl PortValue for nic_rtl::responder::receive_queue_engine::MessageMode {
        fn from_u64(v: u64) -> Self {
            use nic_rtl::responder::receive_queue_engine::MessageMode::*;
            [Discard, ExecWrite, ExecAtomic, ResponseWrite][(v & 3) as usize]
        }
        fn to_u64(self) -> u64 {
            self as u64
        }
    }

    /// `Bits<N>` (N > 64) from little-endian 64-bit words; bits above N are dropped.
    pub fn bits_from_words<const N: usize>(words: &[u64]) -> Bits<N> {
        let mut acc = Bits::<N>::default();
        for w in words.iter().rev() {
            acc = (acc << 64u64) | Bits::<N>::from(*w);
        }
        acc
    }

    /// Little-endian 64-bit words of a `Bits<N>` (N > 64).
    pub fn bits_to_words<const N: usize, const W: usize>(b: Bits<N>) -> [u64; W] {
        let mut words = [0u64; W];
        for (k, w) in words.iter_mut().enumerate() {
            *w = b.get_bits::<64>(64 * k).to_u64();
        }
        words
    }

    pub fn mask_words<const W: usize>(mut words: [u64; W], width: usize) -> [u64; W] {
        for (k, w) in words.iter_mut().enumerate() {
            let low = 64 * k;
            *w = if width >= low + 64 {
                *w
            } else if width <= low {
                0
            } else {
                *w & ((1u64 << (width - low)) - 1)
            };
        }
        words
    }

    pub fn random_words<R: rand::Rng + ?Sized, const W: usize>(
        rng: &mut R,
        width: usize,
    ) -> [u64; W] {
        let mut words = [0u64; W];
        for w in words.iter_mut() {
            *w = rng.gen();
        }
        mask_words(words, width)
    }

    /// Debug as hex.
    pub struct Hex(pub u64);
    impl fmt::Debug for Hex {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{:#x}", self.0)
        }
    }

    /// Debug of a word array as one hex number, most significant word first.
    pub struct HexWords<'a>(pub &'a [u64]);
    impl fmt::Debug for HexWords<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("0x")?;
            for (i, w) in self.0.iter().rev().enumerate() {
                if i == 0 {
                    write!(f, "{w:x}")?;
                } else {
                    write!(f, "_{w:016x}")?;
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block whose model was not built, as every block is without Verilator.
    struct Unbuilt;
    impl CosimBlock for Unbuilt {
        const NAME: &'static str = "unbuilt";
        const MODULE: &'static str = "nic_unbuilt";
        const RUST_TYPE: &'static str = "none";
        type Inputs = Crc32Inputs;
        type Outputs = Crc32Outputs;
    }
    unsafe impl VerilatedBlock for Unbuilt {
        const FFI: Option<verilated::Ffi<Crc32Inputs, Crc32Outputs>> = None;
    }

    #[test]
    fn a_model_without_verilator_says_what_to_do() {
        let e = VerilatorModel::<Unbuilt>::new()
            .err()
            .expect("no model without its shim");
        assert!(matches!(e, CosimError::VerilatorUnavailable(_)));
        assert_eq!(e.to_string(), VERILATOR_MISSING);
        assert!(e
            .to_string()
            .contains("run scripts/setup.sh then cargo build"));
    }

    #[test]
    fn verilator_version_matches_the_build() {
        assert_eq!(verilator_version().is_none(), cfg!(verilator_missing));
    }

    #[test]
    fn words_round_trip_through_bits() {
        use rust_hdl::prelude::Bits;
        let w = [0x0123_4567_89ab_cdef_u64, 0xffff_ffff_ffff_ffff];
        let b: Bits<100> = port::bits_from_words(&w);
        assert_eq!(port::bits_to_words::<100, 2>(b), port::mask_words(w, 100));
        assert_eq!(port::mask_words(w, 100)[1], (1 << 36) - 1);
        assert_eq!(port::mask_words([u64::MAX; 3], 64), [u64::MAX, 0, 0]);
        assert_eq!(
            format!("{:?}", port::HexWords(&[1, 0xa])),
            "0xa_0000000000000001"
        );
    }
}
