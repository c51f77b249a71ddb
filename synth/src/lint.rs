//! Verilator lint of generated Verilog.
//!
//! [`lint`] runs `verilator --lint-only -Wall -Wno-fatal` with the project's waiver file
//! (`rtl/lint/verilator_waiver.vlt`) and parses its `%Warning-RULE: file:line:col: message`
//! lines into a [`LintReport`]. Warnings are a successful run with a non-empty report, so
//! the caller can print them and fail; a crash, a missing file or any `%Error` is a
//! [`ToolError`].

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::tool::{Tool, ToolError};

/// One verilator diagnostic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LintWarning {
    /// Verilator's rule name (`WIDTH`, `UNUSEDSIGNAL`, ...); `ERROR` for a plain `%Error`.
    pub rule: String,
    /// The file as verilator printed it (empty if the message has no location).
    pub file: String,
    /// 1-based line (0 if the message has no location).
    pub line: u32,
    /// 1-based column (0 if verilator gave none).
    pub column: u32,
    /// The message text after the location.
    pub message: String,
}

impl fmt::Display for LintWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.file.is_empty() {
            write!(f, "{}: {}", self.rule, self.message)
        } else if self.column == 0 {
            write!(
                f,
                "{}:{}: {}: {}",
                self.file, self.line, self.rule, self.message
            )
        } else {
            write!(
                f,
                "{}:{}:{}: {}: {}",
                self.file, self.line, self.column, self.rule, self.message
            )
        }
    }
}

/// The warnings verilator reported for one top module (after waivers).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LintReport {
    /// The top module linted.
    pub module: String,
    /// Warnings in verilator's order; empty when the module is clean.
    pub warnings: Vec<LintWarning>,
}

impl LintReport {
    /// True when verilator reported nothing.
    pub fn is_clean(&self) -> bool {
        self.warnings.is_empty()
    }
}

impl fmt::Display for LintReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_clean() {
            return write!(f, "{}: lint clean", self.module);
        }
        write!(
            f,
            "{}: {} lint warning(s)",
            self.module,
            self.warnings.len()
        )?;
        for w in &self.warnings {
            write!(f, "\n  {w}")?;
        }
        Ok(())
    }
}

/// Lint `files` with top module `top`.
///
/// Runs, in the caller's working directory,
/// `verilator --lint-only -Wall -Wno-fatal --top-module <top> <waiver> <files...>`
/// (`-Wno-fatal` so that one run lists every warning and a non-zero exit means a real
/// error), writing its output to `log`. Pass the waiver first: verilator applies a
/// configuration file only to files read after it.
///
/// Returns the warnings (possibly none). Errors: verilator missing, verilator exiting
/// non-zero (syntax error, missing file or module, bad waiver file), or any `%Error`
/// line, which is listed in [`ToolError::diagnostics`].
///
/// # Panics
/// If `files` is empty.
pub fn lint(
    files: &[PathBuf],
    top: &str,
    waiver: &Path,
    log: &Path,
) -> Result<LintReport, ToolError> {
    assert!(
        !files.is_empty(),
        "lint: no Verilog files given for top module {top}"
    );
    let tool = Tool::new("verilator")
        .args(["--lint-only", "-Wall", "-Wno-fatal", "--top-module", top])
        .arg(waiver)
        .args(files);
    let run = tool.run_any_status(log)?;
    let diagnostics = parse_verilator_output(&run.output);
    let (errors, warnings): (Vec<_>, Vec<_>) = diagnostics.into_iter().partition(|d| d.is_error);
    if !run.status.success() || !errors.is_empty() {
        return Err(run.error(
            &tool,
            errors.iter().map(|e| e.warning.to_string()).collect(),
        ));
    }
    Ok(LintReport {
        module: top.to_string(),
        warnings: warnings.into_iter().map(|d| d.warning).collect(),
    })
}

/// One parsed `%Warning` or `%Error` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// `%Error...` rather than `%Warning...`.
    pub is_error: bool,
    pub warning: LintWarning,
}

/// Parse verilator's output: every line starting `%Warning-RULE:`, `%Error:` or
/// `%Error-RULE:` becomes a [`Diagnostic`]; continuation lines (source excerpts, hints)
/// and the summary `%Error: Exiting due to N warning(s)` are skipped.
pub fn parse_verilator_output(output: &str) -> Vec<Diagnostic> {
    output.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Diagnostic> {
    let (is_error, rest) = if let Some(r) = line.strip_prefix("%Warning") {
        (false, r)
    } else if let Some(r) = line.strip_prefix("%Error") {
        (true, r)
    } else {
        return None;
    };
    let (rule, body) = if let Some(r) = rest.strip_prefix('-') {
        let (rule, body) = r.split_once(": ")?;
        (rule.to_string(), body)
    } else {
        let body = rest.strip_prefix(": ")?;
        (if is_error { "ERROR" } else { "WARNING" }.to_string(), body)
    };
    if is_error && body.starts_with("Exiting due to") {
        return None;
    }
    let (file, line_no, column, message) =
        split_location(body).unwrap_or_else(|| (String::new(), 0, 0, body.to_string()));
    Some(Diagnostic {
        is_error,
        warning: LintWarning {
            rule,
            file,
            line: line_no,
            column,
            message,
        },
    })
}

/// `file:line:col: message` or `file:line: message`.
fn split_location(body: &str) -> Option<(String, u32, u32, String)> {
    let mut parts = body.splitn(4, ':');
    let file = parts.next()?;
    let line: u32 = parts.next()?.parse().ok()?;
    let third = parts.next()?;
    match third.parse::<u32>() {
        Ok(col) => {
            let msg = parts.next()?.strip_prefix(' ')?;
            Some((file.to_string(), line, col, msg.to_string()))
        }
        Err(_) => {
            // No column: `third` is the start of the message; re-join what splitn cut.
            let mut msg = third.strip_prefix(' ')?.to_string();
            if let Some(more) = parts.next() {
                msg.push(':');
                msg.push_str(more);
            }
            Some((file.to_string(), line, 0, msg))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Excerpt of `verilator --lint-only -Wall` (5.006) on a RustHDL probe block, without waivers.
    const PROBE_OUTPUT: &str = r#"%Warning-DECLFILENAME: nic_probe.v:93:8: Filename 'nic_probe' does not match MODULE name: 'top$cmp'
   93 | module top$cmp(a,b,eq);
      |        ^~~~~~~
                       ... For warning description see https://verilator.org/warn/DECLFILENAME?v=5.006
                       ... Use "/* verilator lint_off DECLFILENAME */" and lint_on around source to disable this message.
%Warning-WIDTH: nic_probe.v:59:31: Operator ADD expects 32 bits on the LHS, but LHS's VARREF 'count$q' generates 8 bits.
                                 : ... In instance nic_probe
   59 |             count$d = count$q + 32'h1;
      |                               ^
%Warning-UNUSEDSIGNAL: nic_probe.v:539:17: Signal is not used: 'clock'
                                         : ... In instance nic_probe.pass
  539 |     input wire  clock;
      |                 ^~~~~
%Error: Exiting due to 3 warning(s)
"#;

    #[test]
    fn parses_warnings_and_skips_summary() {
        let d = parse_verilator_output(PROBE_OUTPUT);
        assert_eq!(d.len(), 3);
        assert!(d.iter().all(|d| !d.is_error));
        assert_eq!(
            d[1].warning,
            LintWarning {
                rule: "WIDTH".into(),
                file: "nic_probe.v".into(),
                line: 59,
                column: 31,
                message: "Operator ADD expects 32 bits on the LHS, but LHS's VARREF 'count$q' generates 8 bits."
                    .into(),
            }
        );
        assert_eq!(d[2].warning.rule, "UNUSEDSIGNAL");
        assert_eq!(d[2].warning.line, 539);
        assert_eq!(
            d[2].warning.to_string(),
            "nic_probe.v:539:17: UNUSEDSIGNAL: Signal is not used: 'clock'"
        );
    }

    #[test]
    fn parses_errors_with_and_without_location() {
        let out = "%Error: bad.v:3:1: syntax error, unexpected endmodule\n\
                   %Error: Cannot find file containing module: 'missing.v'\n\
                   %Error-PROCASSWIRE: x.v:7: Procedural assignment to wire\n\
                   %Error: Exiting due to 3 error(s)\n";
        let d = parse_verilator_output(out);
        assert_eq!(d.len(), 3);
        assert!(d.iter().all(|d| d.is_error));
        assert_eq!(
            (
                d[0].warning.rule.as_str(),
                d[0].warning.line,
                d[0].warning.column
            ),
            ("ERROR", 3, 1)
        );
        assert_eq!(d[1].warning.file, "");
        assert_eq!(
            d[1].warning.message,
            "Cannot find file containing module: 'missing.v'"
        );
        assert_eq!(
            (
                d[2].warning.rule.as_str(),
                d[2].warning.line,
                d[2].warning.column
            ),
            ("PROCASSWIRE", 7, 0)
        );
        assert_eq!(d[2].warning.message, "Procedural assignment to wire");
    }
}
