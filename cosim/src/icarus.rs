//! The third simulator: Icarus Verilog runs a block's exported Verilog (RustHDL's, as
//! `nic verilog` writes it) under a generated testbench that replays a stimulus file.
//!
//! The testbench (module `nic_replay_tb`, [`testbench_text`]) reads the stimulus with
//! `$readmemh` ([`crate::stimulus`]) and keeps the cycle of the other backends
//! ([`crate::Stepper::step`], [`crate::CYCLE_PS`]): at `n * 10_000` ps the clock falls and
//! cycle `n`'s inputs are applied; 1 ps later every output is written (`$fwrite`, one hex
//! field per output port, one line per cycle); at `n * 10_000 + 5_000` ps the clock rises.
//! With a waveform path it also dumps the block (`$dumpvars(0, uut)`) with those times,
//! so its VCD lines up with the Verilator and RustHDL traces.
//!
//! [`replay_icarus`] writes the Verilog and the testbench into a work directory, runs
//! `iverilog -g2012` and `vvp`, keeps their output in `iverilog.log` and `vvp.log`
//! there, and reads the outputs back. Icarus is about 700 times slower than Verilator:
//! replay short windows.

use crate::{CosimBlock, PortInfo, PortStruct};
use nic_rtl::export::ExportedBlock;
use std::fmt::Write as _;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a missing Icarus says.
pub const ICARUS_MISSING: &str =
    "not found: Icarus Verilog (iverilog and vvp) replays the exported Verilog; run scripts/setup.sh, which installs it";

/// The testbench module's name.
pub const TESTBENCH_MODULE: &str = "nic_replay_tb";

/// Errors of an Icarus replay.
#[derive(Debug, thiserror::Error)]
pub enum IcarusError {
    /// `iverilog` or `vvp` is not on PATH.
    #[error("{tool} {ICARUS_MISSING}")]
    Missing { tool: &'static str },
    /// The exported block's ports are not those of the generated structs.
    #[error("block {block}: the exported Verilog's {what} ports are {verilog:?}, the co-simulation structs' {structs:?}; rebuild nic-cosim")]
    PortsDiffer {
        block: String,
        what: &'static str,
        verilog: Vec<String>,
        structs: Vec<String>,
    },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// A tool ran and failed.
    #[error("{command} failed ({status}); its output is in {}:\n{tail}", log.display())]
    Tool {
        command: String,
        status: std::process::ExitStatus,
        log: PathBuf,
        tail: String,
    },
    /// `vvp` ran past its time limit: Icarus stopped advancing time (a zero-delay loop:
    /// processes that wake each other forever within one time step) or is far slower
    /// than expected.
    #[error("Icarus made no progress: vvp was stopped after {seconds:.0} s with {cycles_written} of {cycles} cycles written (the cycle after the last written one never finished; a zero-delay loop between always blocks?); work directory {}", dir.display())]
    Stalled {
        cycles_written: usize,
        cycles: usize,
        seconds: f64,
        dir: PathBuf,
    },
    /// The testbench's output file is not what it writes.
    #[error("{} line {line}: {message}", path.display())]
    Output {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// An output that Icarus left unknown (`x` or `z` in some bit): the other backends have
/// two-state values only, so this is a disagreement, from cycle 1 on. Cycle 0 is sampled
/// before the first rising edge, where a register RustHDL writes without an initial
/// value (the read register of its `RAM`) is still `x` in a four-state simulator and 0
/// in the two-state ones: an entirely unknown output there reads as 0 (partly unknown
/// bits, or `z`, are still a disagreement).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownOutput {
    pub cycle: u64,
    pub port: &'static str,
    /// The value as Icarus printed it (`%h`).
    pub text: String,
}

/// The outputs of an Icarus replay.
#[derive(Clone, Debug)]
pub struct IcarusReplay<O> {
    /// Each cycle's outputs, up to the first cycle with an unknown output.
    pub outputs: Vec<O>,
    /// The first output with `x` or `z` bits, if any.
    pub unknown: Option<UnknownOutput>,
    /// Seconds `vvp` ran (without the `iverilog` compile).
    pub seconds: f64,
}

/// `(name, width)` of the block's input (`input == true`) or output ports, without `clock`.
fn block_ports(block: &ExportedBlock, input: bool) -> Vec<(&str, usize)> {
    block
        .ports
        .iter()
        .filter(|p| p.input == input && p.name != "clock")
        .map(|p| (p.name.as_str(), p.width))
        .collect()
}

fn check_ports(
    block: &ExportedBlock,
    input: bool,
    structs: &[PortInfo],
) -> Result<(), IcarusError> {
    let verilog = block_ports(block, input);
    let same = verilog.len() == structs.len()
        && verilog
            .iter()
            .zip(structs)
            .all(|((n, w), p)| *n == p.name && *w == p.width);
    if same {
        return Ok(());
    }
    let show = |v: &mut dyn Iterator<Item = (&str, usize)>| -> Vec<String> {
        v.map(|(n, w)| format!("{n}:{w}")).collect()
    };
    Err(IcarusError::PortsDiffer {
        block: block.name.clone(),
        what: if input { "input" } else { "output" },
        verilog: show(&mut verilog.iter().copied()),
        structs: show(&mut structs.iter().map(|p| (p.name, p.width))),
    })
}

/// A path as a Verilog string literal.
fn verilog_string(path: &Path) -> String {
    let s = path.to_string_lossy();
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn declaration(kind: &str, width: usize, name: &str) -> String {
    if width == 1 {
        format!("    {kind} {name};\n")
    } else {
        format!("    {kind} [{}:0] {name};\n", width - 1)
    }
}

/// The testbench that replays the first `cycles` lines of `stimulus` into `block`,
/// writing its outputs to `outputs` and, with `vcd`, its waveform.
pub fn testbench_text(
    block: &ExportedBlock,
    stimulus: &Path,
    cycles: usize,
    outputs: &Path,
    vcd: Option<&Path>,
) -> String {
    let inputs = block_ports(block, true);
    let outs = block_ports(block, false);
    let has_clock = block.ports.iter().any(|p| p.name == "clock");
    let width: usize = inputs.iter().map(|p| p.1).sum::<usize>().max(1);
    let half = crate::CYCLE_PS / 2;
    let mut t = format!(
        "// @generated by nic-cosim (src/icarus.rs): replays a stimulus file into {m}\n\
         // and writes its outputs every cycle; do not edit.\n\
         `timescale 1ps/1ps\n\
         module {TESTBENCH_MODULE};\n",
        m = block.module
    );
    if has_clock {
        t.push_str("    reg clock;\n");
    }
    for (n, w) in &inputs {
        t.push_str(&declaration("reg", *w, n));
    }
    for (n, w) in &outs {
        t.push_str(&declaration("wire", *w, n));
    }
    let _ = writeln!(
        t,
        "    reg [{}:0] stimulus [0:{}];",
        width - 1,
        cycles.max(1) - 1
    );
    t.push_str("    integer cycle;\n    integer out_file;\n");
    let mut connections: Vec<String> = vec![];
    if has_clock {
        connections.push(".clock(clock)".into());
    }
    connections.extend(
        inputs
            .iter()
            .chain(&outs)
            .map(|(n, _)| format!(".{n}({n})")),
    );
    let _ = writeln!(
        t,
        "    {} uut(\n        {}\n    );",
        block.module,
        connections.join(",\n        ")
    );
    let _ = writeln!(
        t,
        "    initial begin\n        $readmemh({}, stimulus, 0, {});",
        verilog_string(stimulus),
        cycles.max(1) - 1
    );
    let _ = writeln!(
        t,
        "        out_file = $fopen({}, \"w\");",
        verilog_string(outputs)
    );
    if let Some(vcd) = vcd {
        let _ = writeln!(
            t,
            "        $dumpfile({});\n        $dumpvars(0, uut);",
            verilog_string(vcd)
        );
    }
    let concat: Vec<&str> = inputs.iter().map(|p| p.0).collect();
    let formats = vec!["%h"; outs.len()].join(" ");
    let values: Vec<&str> = outs.iter().map(|p| p.0).collect();
    let clock_low = if has_clock { "clock = 0; " } else { "" };
    let clock_high = if has_clock { "clock = 1;" } else { "" };
    let assign = if concat.is_empty() {
        String::new()
    } else {
        format!("{{{}}} = stimulus[cycle]; ", concat.join(", "))
    };
    let _ = writeln!(
        t,
        "        for (cycle = 0; cycle < {cycles}; cycle = cycle + 1) begin\n            \
         {clock_low}{assign}\n            #1;\n            \
         $fwrite(out_file, \"{formats}\\n\"{sep}{values});\n            \
         $fflush(out_file);\n            \
         #{rest};\n            {clock_high}\n            #{half};\n        end\n        \
         {clock_low}#1;\n        $fclose(out_file);\n        $finish;\n    end\nendmodule",
        sep = if values.is_empty() { "" } else { ", " },
        values = values.join(", "),
        rest = half - 1,
    );
    t
}

/// The last lines of a log, for an error message.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..]
        .iter()
        .map(|l| format!("    | {l}\n"))
        .collect()
}

/// Run `program args…` in `dir` with its output in `log`. `Ok(false)` when it ran
/// longer than `limit` and was killed.
fn run(
    tool: &'static str,
    args: &[&str],
    dir: &Path,
    log: &Path,
    limit: Duration,
) -> Result<bool, IcarusError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| IcarusError::Io { path, source }
    };
    let command = format!("{tool} {}", args.join(" "));
    let file = File::create(log).map_err(io_err(log))?;
    let file2 = file.try_clone().map_err(io_err(log))?;
    let mut child = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(file2)
        .spawn()
        .map_err(|source| match source.kind() {
            io::ErrorKind::NotFound => IcarusError::Missing { tool },
            _ => IcarusError::Io {
                path: PathBuf::from(tool),
                source,
            },
        })?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(io_err(Path::new(tool)))? {
            break status;
        }
        if start.elapsed() > limit {
            // The child is ours; a failed kill means it has just exited.
            let _ = child.kill();
            let _ = child.wait();
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.success() {
        return Ok(true);
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    Err(IcarusError::Tool {
        command: format!("(cd {} && {command})", dir.display()),
        status,
        log: log.to_path_buf(),
        tail: tail(&text),
    })
}

/// How long `vvp` may take for `cycles` cycles before it counts as stalled: 30 s, plus
/// 20 ms a cycle (ten times what the NIC top takes on a CI machine).
pub fn vvp_time_limit(cycles: usize) -> Duration {
    Duration::from_secs(30) + Duration::from_millis(20) * cycles as u32
}

/// One port's value as `%h` printed it: little-endian words, or `None` with `x`/`z` bits.
fn parse_hex_field(text: &str, width: usize) -> Result<Option<Vec<u64>>, String> {
    let mut words = vec![0u64; width.div_ceil(64).max(1)];
    for (d, c) in text.chars().rev().enumerate() {
        match c.to_digit(16) {
            Some(nibble) if d * 4 < width => words[d * 4 / 64] |= (nibble as u64) << (d * 4 % 64),
            Some(0) => {}
            Some(_) => return Err(format!("`{text}` is wider than {width} bits")),
            None if "xXzZ".contains(c) => return Ok(None),
            None => return Err(format!("`{text}` is not a hex value")),
        }
    }
    Ok(Some(words))
}

/// The testbench's output file: one line per cycle, one `%h` field per output port.
pub fn parse_outputs<O: PortStruct>(
    text: &str,
    path: &Path,
) -> Result<(Vec<O>, Option<UnknownOutput>), IcarusError> {
    let mut rows = vec![];
    for (n, line) in text.lines().enumerate() {
        let bad = |message: String| IcarusError::Output {
            path: path.to_path_buf(),
            line: n + 1,
            message,
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != O::PORTS.len() {
            return Err(bad(format!(
                "{} fields for {} output ports",
                fields.len(),
                O::PORTS.len()
            )));
        }
        let mut row = O::default();
        for (index, (field, port)) in fields.iter().zip(O::PORTS).enumerate() {
            let power_up = n == 0 && field.chars().all(|c| c == 'x' || c == 'X');
            match parse_hex_field(field, port.width).map_err(&bad)? {
                Some(words) => row.set_port_words(index, &words),
                None if power_up => {
                    row.set_port_words(index, &vec![0; port.width.div_ceil(64)]);
                }
                None => {
                    let unknown = UnknownOutput {
                        cycle: n as u64,
                        port: port.name,
                        text: field.to_string(),
                    };
                    return Ok((rows, Some(unknown)));
                }
            }
        }
        rows.push(row);
    }
    Ok((rows, None))
}

fn write_file(path: &Path, text: &str) -> Result<(), IcarusError> {
    std::fs::write(path, text).map_err(|source| IcarusError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Replay the first `cycles` cycles of the stimulus file `stimulus` (written for block
/// `B`'s inputs) into `block`'s Verilog under Icarus, in work directory `dir` (created;
/// it holds `dut.v`, `tb.v`, `sim.vvp`, `outputs.hex` and the logs). With `vcd`, the
/// waveform is written there. The stimulus must have at least `cycles` lines.
pub fn replay_icarus<B: CosimBlock>(
    block: &ExportedBlock,
    stimulus: &Path,
    cycles: usize,
    dir: &Path,
    vcd: Option<&Path>,
) -> Result<IcarusReplay<B::Outputs>, IcarusError> {
    check_ports(block, true, <B::Inputs as PortStruct>::PORTS)?;
    check_ports(block, false, <B::Outputs as PortStruct>::PORTS)?;
    std::fs::create_dir_all(dir).map_err(|source| IcarusError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let outputs = absolute(&dir.join("outputs.hex"));
    if let Some(parent) = vcd.and_then(Path::parent) {
        std::fs::create_dir_all(parent).map_err(|source| IcarusError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let vcd = vcd.map(absolute);
    write_file(&dir.join("dut.v"), &block.verilog)?;
    let tb = testbench_text(block, &absolute(stimulus), cycles, &outputs, vcd.as_deref());
    write_file(&dir.join("tb.v"), &tb)?;
    let _ = std::fs::remove_file(&outputs);
    let args = [
        "-g2012",
        "-o",
        "sim.vvp",
        "-s",
        TESTBENCH_MODULE,
        "dut.v",
        "tb.v",
    ];
    let compile_limit = Duration::from_secs(600);
    if !run(
        "iverilog",
        &args,
        dir,
        &dir.join("iverilog.log"),
        compile_limit,
    )? {
        return Err(IcarusError::Io {
            path: dir.join("iverilog.log"),
            source: io::Error::new(io::ErrorKind::TimedOut, "iverilog ran for 10 minutes"),
        });
    }
    let start = Instant::now();
    let finished = run(
        "vvp",
        &["-n", "sim.vvp"],
        dir,
        &dir.join("vvp.log"),
        vvp_time_limit(cycles),
    )?;
    let seconds = start.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&outputs).map_err(|source| IcarusError::Io {
        path: outputs.clone(),
        source,
    })?;
    if !finished {
        return Err(IcarusError::Stalled {
            cycles_written: text.lines().count(),
            cycles,
            seconds,
            dir: dir.to_path_buf(),
        });
    }
    let (outputs, unknown) = parse_outputs::<B::Outputs>(&text, &outputs)?;
    Ok(IcarusReplay {
        outputs,
        unknown,
        seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CosimSelftestOutputs;

    #[test]
    fn output_fields_parse_and_unknowns_are_found() {
        let ok = "1 1 05 000000001 0000000000000000000000001 0000000000000000000000002 00000000000000001 00000000000000000000000000000003\n";
        let (rows, unknown) = parse_outputs::<CosimSelftestOutputs>(ok, Path::new("o")).unwrap();
        assert_eq!(unknown, None);
        assert_eq!(rows.len(), 1);
        assert!(rows[0].m_flag);
        assert_eq!(rows[0].m_odd, 5);
        assert_eq!(rows[0].m_full, [3, 0]);
        let x = ok.replace("05", "0x") + ok;
        let (rows, unknown) = parse_outputs::<CosimSelftestOutputs>(&x, Path::new("o")).unwrap();
        assert!(rows.is_empty());
        let unknown = unknown.unwrap();
        assert_eq!((unknown.cycle, unknown.port), (0, "m_odd"));
        // Before the first rising edge an entirely unknown output is a register's power-up
        // state (0 in the two-state simulators); from the next cycle on it is a disagreement.
        let power_up = ok.replace("05", "xx") + ok;
        let (rows, unknown) =
            parse_outputs::<CosimSelftestOutputs>(&power_up, Path::new("o")).unwrap();
        assert_eq!(unknown, None);
        assert_eq!((rows.len(), rows[0].m_odd, rows[1].m_odd), (2, 0, 5));
        let later = ok.to_string() + &ok.replace("05", "xx");
        let (rows, unknown) =
            parse_outputs::<CosimSelftestOutputs>(&later, Path::new("o")).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(unknown.unwrap().cycle, 1);
        let short = "1 1\n";
        let e = parse_outputs::<CosimSelftestOutputs>(short, Path::new("o")).unwrap_err();
        assert!(e.to_string().contains("o line 1: 2 fields for 8"), "{e}");
    }

    #[test]
    fn a_missing_tool_names_it_and_the_setup_script() {
        let dir = test_dir("missing-tool");
        let log = dir.join("run.log");
        let e = run(
            "nic-no-such-iverilog",
            &[],
            Path::new("."),
            &log,
            Duration::from_secs(1),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("nic-no-such-iverilog not found"), "{text}");
        assert!(text.contains("scripts/setup.sh"), "{text}");
    }

    /// A work directory of this crate's tests under the workspace's target/.
    fn test_dir(name: &str) -> PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../target/cosim-tests/icarus")
            .join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_zero_delay_loop_is_stopped_at_the_time_limit() {
        let dir = test_dir("zero-delay-loop");
        let looping = "module spin; reg a, b; always @(a) b = a; always @(b) a = ~b; initial #1 a = 0; endmodule\n";
        std::fs::write(dir.join("spin.v"), looping).unwrap();
        let limit = Duration::from_secs(10);
        let args = ["-g2012", "-o", "spin.vvp", "spin.v"];
        assert!(run("iverilog", &args, &dir, &dir.join("iverilog.log"), limit).unwrap());
        let start = Instant::now();
        let finished = run(
            "vvp",
            &["-n", "spin.vvp"],
            &dir,
            &dir.join("vvp.log"),
            Duration::from_millis(500),
        )
        .unwrap();
        assert!(!finished, "the loop never ends");
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
