//! The one error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong when writing, reading or checking a waveform.
///
/// Every variant names the file it concerns (when there is one), so a failing test
/// says which VCD to open.
#[derive(Debug, thiserror::Error)]
pub enum WaveError {
    /// The file could not be opened, created, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The VCD file (or `<writer>` for a caller-supplied writer).
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },

    /// The file is not a VCD file this crate can read: bad syntax, truncated, a value
    /// change for an undeclared identifier, a time that is not a whole picosecond.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The VCD file.
        path: PathBuf,
        /// 1-based line where the problem was seen.
        line: u64,
        /// What was wrong.
        message: String,
    },

    /// The file is not a waveform this crate reads (neither VCD nor FST), or its
    /// header or FST blocks are malformed.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },

    /// A command-line style argument is wrong: a time, a window, a pattern.
    #[error("{message}")]
    BadArgument {
        /// What was wrong, naming the argument.
        message: String,
    },

    /// No signal of the waveform matches the name; `candidates` lists similar names.
    #[error("{path}: no signal matches `{name}`{}", list_candidates(candidates))]
    NotFound {
        /// The VCD file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// Signals whose last component resembles the name (at most 20).
        candidates: Vec<String>,
    },

    /// Several different signals match the name; give more of the hierarchy.
    #[error("{path}: `{name}` is ambiguous{}", list_candidates(candidates))]
    Ambiguous {
        /// The VCD file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// Every matching signal.
        candidates: Vec<String>,
    },

    /// [`crate::RustHdlVcd::sample`] was called with a time earlier than the last one.
    #[error("VCD sample time went backwards: {time_ps} ps after {last_ps} ps")]
    TimeWentBackwards {
        /// The time passed.
        time_ps: u64,
        /// The time of the previous sample.
        last_ps: u64,
    },

    /// [`crate::RustHdlVcd::sample`] was given a block other than the one whose header
    /// was written.
    #[error("{path}: sampled a block other than the one the VCD header was written for")]
    DifferentBlock {
        /// The VCD file (or `<writer>`).
        path: PathBuf,
    },

    /// A block did not settle within [`crate::MAX_SETTLE_ITERATIONS`] delta steps.
    #[error("block did not settle within {iterations} delta iterations: combinational loop?")]
    NotSettled {
        /// The bound that was reached.
        iterations: usize,
    },

    /// [`crate::assert_transitions`] or [`crate::assert_values_at`] found a difference.
    #[error("{path}: signal `{signal}` does not match the expectation\n{diff}")]
    Unexpected {
        /// The VCD file.
        path: PathBuf,
        /// The full name of the signal checked.
        signal: String,
        /// A table of expected against actual values, the first difference marked.
        diff: String,
    },

    /// `NIC_WAVES` holds a value that is neither on nor off.
    #[error("NIC_WAVES={value:?} is not understood: use 1/true/on or 0/false/off")]
    BadSetting {
        /// The value found.
        value: String,
    },
}

fn list_candidates(candidates: &[String]) -> String {
    if candidates.is_empty() {
        String::new()
    } else {
        format!("; candidates: {}", candidates.join(", "))
    }
}
