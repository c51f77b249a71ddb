//! A recorded stimulus: one block's inputs, cycle by cycle, in a text file that every
//! simulator reads.
//!
//! The file is what Verilog's `$readmemh` reads into a `reg [W-1:0] stimulus[]`:
//! `//` comment lines naming the block and its input ports, then one line per cycle with
//! all input ports concatenated (see [`crate::packed_bits`]: the first port in the most
//! significant bits) as hex digits. The RustHDL and Verilator replays read it with
//! [`read_stimulus`]; the Icarus testbench ([`crate::icarus`]) reads it with `$readmemh`.
//!
//! ```text
//! // nic stimulus: block crc32, 3 cycles
//! // inputs (most significant first): s_clear:1 s_valid:1 s_data:64 s_bytes:4
//! 10000000000000000000
//! 2123456789abcdef08
//! …
//! ```

use crate::packed_bits::{from_hex, to_hex};
use crate::PortStruct;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// What can go wrong reading or writing a stimulus file.
#[derive(Debug, thiserror::Error)]
pub enum StimulusError {
    #[error("stimulus file {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("stimulus file {} line {line}: {message}", path.display())]
    Format {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// The header line that lists the input ports, as [`write_stimulus`] writes it.
fn ports_line<P: PortStruct>() -> String {
    let ports: Vec<String> = P::PORTS
        .iter()
        .map(|p| format!("{}:{}", p.name, p.width))
        .collect();
    format!("// inputs (most significant first): {}", ports.join(" "))
}

/// The file's text: header comments, then one hex line per cycle.
pub fn stimulus_text<P: PortStruct>(block: &str, inputs: &[P]) -> String {
    let mut text = format!(
        "// nic stimulus: block {block}, {} cycles\n{}\n",
        inputs.len(),
        ports_line::<P>()
    );
    for i in inputs {
        let _ = writeln!(text, "{}", to_hex(i));
    }
    text
}

/// Write `inputs` of block `block` to `path` (parent directories are created).
pub fn write_stimulus<P: PortStruct>(
    path: &Path,
    block: &str,
    inputs: &[P],
) -> Result<(), StimulusError> {
    let io_err = |source| StimulusError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io_err)?;
    }
    std::fs::write(path, stimulus_text(block, inputs)).map_err(io_err)
}

/// Read a stimulus file written for input struct `P`: its port list must be `P`'s.
pub fn read_stimulus<P: PortStruct>(path: &Path) -> Result<Vec<P>, StimulusError> {
    let text = std::fs::read_to_string(path).map_err(|source| StimulusError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_stimulus(&text, path)
}

/// [`read_stimulus`] of text already read (`path` names it in errors).
pub fn parse_stimulus<P: PortStruct>(text: &str, path: &Path) -> Result<Vec<P>, StimulusError> {
    let bad = |line: usize, message: String| StimulusError::Format {
        path: path.to_path_buf(),
        line,
        message,
    };
    let want = ports_line::<P>();
    let mut ports_seen = false;
    let mut inputs = vec![];
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with("// inputs") {
            if line != want {
                return Err(bad(
                    n + 1,
                    format!("the file's ports are not this block's: expected `{want}`"),
                ));
            }
            ports_seen = true;
            continue;
        }
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        if !ports_seen {
            return Err(bad(
                n + 1,
                "no `// inputs …` line before the first cycle".into(),
            ));
        }
        inputs.push(from_hex::<P>(line).map_err(|m| bad(n + 1, m))?);
    }
    Ok(inputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CosimSelftestInputs;
    use rand::SeedableRng;

    #[test]
    fn a_stimulus_round_trips_through_its_text() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let inputs: Vec<CosimSelftestInputs> = (0..50)
            .map(|_| CosimSelftestInputs::random(&mut rng))
            .collect();
        let text = stimulus_text("cosim_selftest", &inputs);
        assert!(text.starts_with("// nic stimulus: block cosim_selftest, 50 cycles\n"));
        let back: Vec<CosimSelftestInputs> = parse_stimulus(&text, Path::new("t")).unwrap();
        assert_eq!(back, inputs);
    }

    #[test]
    fn another_blocks_stimulus_is_refused() {
        let text = "// inputs (most significant first): s_data:64\n00\n";
        let e = parse_stimulus::<CosimSelftestInputs>(text, Path::new("x.hex")).unwrap_err();
        assert!(e.to_string().contains("x.hex line 1"), "{e}");
        let e = parse_stimulus::<CosimSelftestInputs>("00\n", Path::new("x.hex")).unwrap_err();
        assert!(e.to_string().contains("no `// inputs"), "{e}");
    }
}
