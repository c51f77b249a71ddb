//! The one wrapper of the build script around external tools (verilator, make, ar): runs a
//! command, keeps its whole output in a log file, checks the exit status, and on failure
//! reports the command, the status, the log path, the log's last lines and what to do.

use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// Lines of a failing tool's log quoted in the error.
const LOG_TAIL_LINES: usize = 40;

/// Everything that can stop the build script.
#[derive(Debug)]
pub enum BuildError {
    /// The tool could not be started.
    Spawn {
        what: String,
        command: String,
        source: io::Error,
    },
    /// The tool ran and exited unsuccessfully.
    Failed {
        what: String,
        command: String,
        status: ExitStatus,
        log: PathBuf,
        tail: String,
        hint: String,
    },
    /// Reading or writing a file of the build.
    Io { path: PathBuf, source: io::Error },
    /// An exported block that the generator cannot turn into a model, or tool output it
    /// cannot read.
    Invalid(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Spawn {
                what,
                command,
                source,
            } => {
                write!(
                    f,
                    "nic-cosim build: could not start {what}: {source}\n  command: {command}"
                )
            }
            BuildError::Failed {
                what,
                command,
                status,
                log,
                tail,
                hint,
            } => {
                write!(
                    f,
                    "nic-cosim build: {what} failed ({status})\n  command: {command}\n  full log: {}\n  last lines of the log:\n{tail}\n  what to do: {hint}",
                    log.display()
                )
            }
            BuildError::Io { path, source } => {
                write!(f, "nic-cosim build: {}: {source}", path.display())
            }
            BuildError::Invalid(msg) => write!(f, "nic-cosim build: {msg}"),
        }
    }
}

/// Attach the path to an I/O error.
pub fn io_at<T>(path: &Path, r: io::Result<T>) -> Result<T, BuildError> {
    r.map_err(|source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The command as one could paste it into a shell.
pub fn command_line(cmd: &Command) -> String {
    let quote = |s: &str| {
        if !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_=./:+,@%".contains(c))
        {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    let mut line = String::new();
    if let Some(dir) = cmd.get_current_dir() {
        line.push_str(&format!("cd {} && ", quote(&dir.to_string_lossy())));
    }
    line.push_str(&quote(&cmd.get_program().to_string_lossy()));
    for a in cmd.get_args() {
        line.push(' ');
        line.push_str(&quote(&a.to_string_lossy()));
    }
    line
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(LOG_TAIL_LINES);
    lines[start..]
        .iter()
        .map(|l| format!("    | {l}\n"))
        .collect()
}

/// Run `cmd` with stdout and stderr both written to `log`; Ok when it exits successfully.
pub fn run_logged(what: &str, cmd: &mut Command, log: &Path, hint: &str) -> Result<(), BuildError> {
    let file = io_at(log, File::create(log))?;
    let file2 = io_at(log, file.try_clone())?;
    let command = command_line(cmd);
    let status = cmd
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(file2)
        .status()
        .map_err(|source| BuildError::Spawn {
            what: what.into(),
            command: command.clone(),
            source,
        })?;
    if status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    Err(BuildError::Failed {
        what: what.into(),
        command,
        status,
        log: log.to_path_buf(),
        tail: tail(&text),
        hint: hint.into(),
    })
}

/// Run `cmd` and return its stdout. `Ok(None)` when the program does not exist.
pub fn run_capture(
    what: &str,
    cmd: &mut Command,
    log: &Path,
    hint: &str,
) -> Result<Option<String>, BuildError> {
    let command = command_line(cmd);
    let out = match cmd.stdin(Stdio::null()).output() {
        Ok(out) => out,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(BuildError::Spawn {
                what: what.into(),
                command,
                source,
            })
        }
    };
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    io_at(log, std::fs::write(log, &text))?;
    if !out.status.success() {
        return Err(BuildError::Failed {
            what: what.into(),
            command,
            status: out.status,
            log: log.to_path_buf(),
            tail: tail(&text),
            hint: hint.into(),
        });
    }
    Ok(Some(String::from_utf8_lossy(&out.stdout).into_owned()))
}
