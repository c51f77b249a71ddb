//! One typed wrapper for every external tool (verilator, yosys, nextpnr).
//!
//! [`Tool`] describes a command (program, arguments, working directory); [`run_tool`]
//! runs it with stdout and stderr both written, interleaved as the tool printed them, to
//! a log file the caller names, checks the exit status and returns a [`ToolRun`] or a
//! [`ToolError`] that carries everything needed to act on the failure: the tool, the
//! command line that reproduces it, the exit status (or "not found on PATH"), the log
//! path and the last [`TAIL_LINES`] lines of the log.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How many lines of the log a [`ToolError`] keeps.
pub const TAIL_LINES: usize = 20;

/// Where to get a missing tool.
pub const INSTALL_HINT: &str = "install it with scripts/setup.sh";

/// An external command: program, arguments and working directory.
///
/// ```no_run
/// # use nic_synth::{Tool, run_tool};
/// # use std::path::Path;
/// let tool = Tool::new("yosys").arg("-s").arg("block.ys").current_dir("synth/out/default/nic_x");
/// let run = run_tool(&tool, Path::new("synth/out/default/nic_x/yosys.log"))?;
/// # Ok::<(), nic_synth::ToolError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Tool {
    program: OsString,
    args: Vec<OsString>,
    dir: Option<PathBuf>,
}

impl Tool {
    /// A command running `program` (looked up on `PATH` unless it contains a `/`) in the
    /// caller's working directory.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Tool {
            program: program.as_ref().to_owned(),
            args: vec![],
            dir: None,
        }
    }

    /// Append one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Append several arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Run in `dir` instead of the caller's working directory (it must exist).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// The tool's name for messages: the program's file name (`yosys`).
    pub fn name(&self) -> String {
        Path::new(&self.program)
            .file_name()
            .unwrap_or(&self.program)
            .to_string_lossy()
            .into_owned()
    }

    /// The command line as a shell command that reproduces the run, e.g.
    /// `cd 'synth/out/nic_x' && yosys -s block.ys`.
    pub fn command_line(&self) -> String {
        let mut words = vec![shell_quote(&self.program)];
        words.extend(self.args.iter().map(|a| shell_quote(a)));
        let cmd = words.join(" ");
        match &self.dir {
            Some(dir) => format!("cd {} && {cmd}", shell_quote(dir.as_os_str())),
            None => cmd,
        }
    }

    /// Run the tool, writing its output to `log`, and require exit status 0.
    /// Same as [`run_tool`].
    pub fn run(&self, log: &Path) -> Result<ToolRun, ToolError> {
        let run = self.run_any_status(log)?;
        if run.status.success() {
            Ok(run)
        } else {
            Err(run.error(self, vec![]))
        }
    }

    /// Run the tool, writing its output to `log`, and return whatever status it exits
    /// with; only a tool that cannot be started (missing binary, missing working
    /// directory, unwritable log) is an error. The caller must check
    /// [`ToolRun::status`] (e.g. verilator and nextpnr, whose non-zero exits need the
    /// log to be classified).
    pub fn run_any_status(&self, log: &Path) -> Result<ToolRun, ToolError> {
        let io_err = |what: String, source: io::Error| ToolError {
            tool: self.name(),
            command: self.command_line(),
            failure: Failure::Io { what, source },
            log: log.to_path_buf(),
            diagnostics: vec![],
            tail: vec![],
        };
        if let Some(parent) = log.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(|e| {
                io_err(
                    format!("cannot create log directory {}", parent.display()),
                    e,
                )
            })?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(log)
            .map_err(|e| io_err(format!("cannot create log {}", log.display()), e))?;
        writeln!(file, "$ {}", self.command_line())
            .map_err(|e| io_err(format!("cannot write log {}", log.display()), e))?;

        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).stdin(Stdio::null());
        if let Some(dir) = &self.dir {
            // Checked here because a missing working directory is also reported as
            // ENOENT by spawn, which would read as "tool not found".
            if !dir.is_dir() {
                return Err(io_err(
                    format!("working directory {} does not exist", dir.display()),
                    io::Error::from(io::ErrorKind::NotFound),
                ));
            }
            cmd.current_dir(dir);
        }
        let stdout = file
            .try_clone()
            .map_err(|e| io_err(format!("cannot share log {}", log.display()), e))?;
        let stderr = file
            .try_clone()
            .map_err(|e| io_err(format!("cannot share log {}", log.display()), e))?;
        cmd.stdout(Stdio::from(stdout)).stderr(Stdio::from(stderr));

        let start = Instant::now();
        let status = match cmd.status() {
            Ok(status) => status,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let _ = writeln!(file, "{}: not found on PATH: {INSTALL_HINT}", self.name());
                return Err(ToolError {
                    tool: self.name(),
                    command: self.command_line(),
                    failure: Failure::NotFound,
                    log: log.to_path_buf(),
                    diagnostics: vec![],
                    tail: vec![],
                });
            }
            Err(e) => return Err(io_err("cannot start it".to_string(), e)),
        };
        let elapsed = start.elapsed();
        drop(file);
        let bytes =
            fs::read(log).map_err(|e| io_err(format!("cannot read log {}", log.display()), e))?;
        Ok(ToolRun {
            status,
            log: log.to_path_buf(),
            output: String::from_utf8_lossy(&bytes).into_owned(),
            elapsed,
        })
    }
}

/// Run `tool`, writing stdout and stderr to `log` (created with its parent directories,
/// overwritten, first line `$ <command line>`), and return the run if it exited with
/// status 0, else a [`ToolError`] with the status and the log's last lines.
pub fn run_tool(tool: &Tool, log: &Path) -> Result<ToolRun, ToolError> {
    tool.run(log)
}

/// A finished run of a [`Tool`].
#[derive(Clone, Debug)]
pub struct ToolRun {
    /// Exit status (always success when returned by [`run_tool`]).
    pub status: ExitStatus,
    /// The log file holding stdout and stderr.
    pub log: PathBuf,
    /// The log's content (lossily decoded as UTF-8).
    pub output: String,
    /// Wall-clock run time.
    pub elapsed: Duration,
}

impl ToolRun {
    /// The last `n` lines of the log.
    pub fn tail(&self, n: usize) -> Vec<String> {
        tail_lines(&self.output, n)
    }

    /// A [`ToolError`] for this run's exit status with `diagnostics` (error lines the
    /// caller picked out of the log) and the log's tail.
    pub fn error(&self, tool: &Tool, diagnostics: Vec<String>) -> ToolError {
        ToolError {
            tool: tool.name(),
            command: tool.command_line(),
            failure: Failure::Status(self.status),
            log: self.log.clone(),
            diagnostics,
            tail: self.tail(TAIL_LINES),
        }
    }
}

/// Why a tool run failed.
#[derive(Debug)]
pub enum Failure {
    /// The program is not on `PATH` (spawn returned ENOENT).
    NotFound,
    /// The program ran and exited with a non-zero status, or was killed by a signal,
    /// or exited 0 but reported errors in its output (see [`ToolError::diagnostics`]).
    Status(ExitStatus),
    /// The program could not be started or its log could not be written.
    Io { what: String, source: io::Error },
}

/// A failed tool run: which tool, the command line, why, the log and its tail.
#[derive(Debug)]
pub struct ToolError {
    /// The program's name (`yosys`).
    pub tool: String,
    /// Shell command line reproducing the run (see [`Tool::command_line`]).
    pub command: String,
    /// What went wrong.
    pub failure: Failure,
    /// The log file holding the tool's stdout and stderr.
    pub log: PathBuf,
    /// Error lines picked out of the log by the caller (e.g. verilator's `%Error` lines);
    /// often empty.
    pub diagnostics: Vec<String>,
    /// The last [`TAIL_LINES`] lines of the log.
    pub tail: Vec<String>,
}

impl ToolError {
    /// True if the program was not found on `PATH`.
    pub fn is_not_found(&self) -> bool {
        matches!(self.failure, Failure::NotFound)
    }

    /// The exit status, if the program ran.
    pub fn status(&self) -> Option<ExitStatus> {
        match self.failure {
            Failure::Status(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.failure {
            Failure::NotFound => write!(f, "{}: not found on PATH: {INSTALL_HINT}", self.tool)?,
            Failure::Status(s) => match s.code() {
                Some(code) => write!(f, "{} failed: exit status {code}", self.tool)?,
                None => write!(f, "{} failed: {s}", self.tool)?,
            },
            Failure::Io { what, source } => write!(f, "{} failed: {what}: {source}", self.tool)?,
        }
        write!(
            f,
            "\n  command: {}\n  log: {}",
            self.command,
            self.log.display()
        )?;
        if !self.diagnostics.is_empty() {
            write!(f, "\n  errors:")?;
            for d in &self.diagnostics {
                write!(f, "\n    {d}")?;
            }
        }
        if !self.tail.is_empty() {
            write!(f, "\n  last {} lines of the log:", self.tail.len())?;
            for line in &self.tail {
                write!(f, "\n    | {line}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ToolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.failure {
            Failure::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The last `n` lines of `text` (trailing blank lines dropped).
pub(crate) fn tail_lines(text: &str, n: usize) -> Vec<String> {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| l.to_string())
        .collect()
}

fn shell_quote(word: &OsStr) -> String {
    let s = word.to_string_lossy();
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_is_a_reproducible_shell_command() {
        let t = Tool::new("yosys")
            .args(["-p", "read_verilog a.v; stat"])
            .current_dir("/tmp/x y");
        assert_eq!(
            t.command_line(),
            "cd '/tmp/x y' && yosys -p 'read_verilog a.v; stat'"
        );
        assert_eq!(Tool::new("/usr/bin/yosys").name(), "yosys");
    }

    #[test]
    fn tail_keeps_last_lines() {
        let text = (1..=30)
            .map(|i| format!("l{i}"))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n\n";
        let t = tail_lines(&text, 20);
        assert_eq!(t.len(), 20);
        assert_eq!(t[0], "l11");
        assert_eq!(t[19], "l30");
        assert_eq!(tail_lines("a\nb", 20), vec!["a", "b"]);
    }
}
