//! Charts of the benches and synthesis, as SVG (plotters), drawn from their result
//! structs or from the JSON files they write, and the tables of docs/measurements.md from
//! the same files; nothing here runs a simulation or synthesis.
//!
//! - [`draw`]: the two chart kinds, [`LineChart`] (median with a min..max whisker against
//!   a numeric axis, log axes on powers of two or ten) and [`BarChart`] (horizontal bars
//!   per row, a bar per series, an optional reference line).
//! - [`bench`]: `nic bench datapath` / `nic` (simulation speed per backend, goodput and
//!   message rate against message size), `nic bench rejoin` (latency against host count
//!   per mode, stale writes per mode), `nic bench pools` (goodput and message rate).
//! - [`measurements`]: docs/measurements.md's generated tables, written from the same JSON
//!   files between the page's markers (`nic measurements`).
//! - [`synth`]: `nic synth`'s `report.json` (resources per block against the iCE40 HX8K,
//!   Fmax per block against the target) and `nic synth --breakdown`'s `breakdown.json`.
//!
//! A crate of its own: it reads `nic-testbench`'s, `nic-synth`'s and `nic-check`'s results
//! (none of them sees the others), and keeps plotters out of the simulation and synthesis
//! libraries. [`load_json`] turns a missing, empty or malformed file into a
//! [`ChartError`] naming the file and what was expected.

pub mod bench;
pub mod draw;
pub mod measurements;
pub mod synth;

pub use draw::{BarChart, BarSeries, LineChart, LineSeries, Scale, Spread};

use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// Why a chart was not drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: is empty; expected {what}")]
    EmptyFile { path: PathBuf, what: String },
    #[error("{path}: not {what}: {message}")]
    Json {
        path: PathBuf,
        what: String,
        message: String,
    },
    /// The results hold nothing to draw (no sizes, no blocks).
    #[error("nothing to draw: {0}")]
    Empty(String),
    #[error("drawing {path}: {message}")]
    Draw { path: PathBuf, message: String },
}

/// Reads `path` as the JSON of `what` (e.g. "the JSON of `nic bench rejoin`").
pub fn load_json<T: DeserializeOwned>(path: &Path, what: &str) -> Result<T, ChartError> {
    let text = std::fs::read_to_string(path).map_err(|source| ChartError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if text.trim().is_empty() {
        return Err(ChartError::EmptyFile {
            path: path.to_path_buf(),
            what: what.to_string(),
        });
    }
    serde_json::from_str(&text).map_err(|e| ChartError::Json {
        path: path.to_path_buf(),
        what: what.to_string(),
        message: e.to_string(),
    })
}
