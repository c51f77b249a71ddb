//! Opening a VCD or FST file and streaming its value changes, one time step at a time.
//!
//! Only the header is held in memory; the changes are read as they are asked for, so a
//! window near the end of a large file needs memory for the window, not the file.

use super::fst_source::FstBody;
use super::header::{Format, Header};
use super::vcd_source::VcdBody;
use crate::value::Value;
use crate::WaveError;
use std::io::{BufRead, BufReader, Read, Seek};
use std::path::Path;

/// The changes of the wanted signals at one time.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Time in femtoseconds.
    pub time: u64,
    /// `(slot, new value)`, in file order; a slot appears at most once (the last value
    /// written at this time).
    pub changes: Vec<(usize, Value)>,
}

/// A waveform file opened for streaming: its header read, its body not yet.
pub struct WaveFile {
    header: Header,
    body: Body,
    end: Option<u64>,
}

impl std::fmt::Debug for WaveFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaveFile")
            .field("path", &self.header.path)
            .field("format", &self.header.format)
            .field("vars", &self.header.vars.len())
            .finish()
    }
}

enum Body {
    Vcd(VcdBody),
    Fst(FstBody),
}

impl WaveFile {
    /// Open `path`, recognise VCD or FST by its content, and read the header.
    pub fn open(path: impl AsRef<Path>) -> Result<WaveFile, WaveError> {
        let path = path.as_ref();
        let io = |source| WaveError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = BufReader::with_capacity(1 << 16, std::fs::File::open(path).map_err(io)?);
        if std::fs::metadata(path).map_err(io)?.is_dir() {
            return Err(WaveError::Invalid {
                path: path.to_path_buf(),
                message: "is a directory, not a waveform file".into(),
            });
        }
        let start = first_bytes(&mut file).map_err(io)?;
        let trimmed = start.trim_ascii_start();
        if trimmed.first() == Some(&b'$') {
            let (header, body) = VcdBody::open(file, path)?;
            let end = last_vcd_time(path)
                .ok()
                .flatten()
                .and_then(|t| t.checked_mul(header.fs_per_tick));
            return Ok(WaveFile {
                header,
                body: Body::Vcd(body),
                end,
            });
        }
        if looks_like_fst(&start) {
            check_fst_blocks(path).map_err(|message| WaveError::Invalid {
                path: path.to_path_buf(),
                message,
            })?;
            let (header, body) = FstBody::open(file, path)?;
            let end = Some(body.end_time());
            return Ok(WaveFile {
                header,
                body: Body::Fst(body),
                end,
            });
        }
        let what = if start.is_empty() {
            "the file is empty".to_string()
        } else {
            let shown: String = String::from_utf8_lossy(&start[..start.len().min(16)])
                .chars()
                .map(|c| if c.is_control() { '.' } else { c })
                .collect();
            format!("it starts with {shown:?}")
        };
        Err(WaveError::Invalid {
            path: path.to_path_buf(),
            message: format!(
                "not a waveform: neither VCD (text starting with a `$` command) nor FST; {what}"
            ),
        })
    }

    /// The declarations.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file's last time (femtoseconds) as far as can be told without reading it
    /// through: FST records it; for VCD the last `#time` in the file's final 64 KiB.
    pub fn end_time(&self) -> Option<u64> {
        self.end
    }

    /// The file's format.
    pub fn format(&self) -> Format {
        self.header.format
    }

    /// Stream the changes of the slots marked in `wanted` (indexed by slot), one
    /// [`Step`] per time with changes, up to and including `until` (femtoseconds;
    /// `None`: to the end). An FST file skips its blocks that end before `from`; a VCD
    /// file is read from the start (the format has no index), one change at a time.
    pub fn changes(
        self,
        wanted: Vec<bool>,
        from: u64,
        until: Option<u64>,
    ) -> Result<Changes, WaveError> {
        let inner = match self.body {
            Body::Vcd(b) => Inner::Vcd(Box::new(b.stream(wanted, until))),
            Body::Fst(b) => Inner::Fst(b.stream(wanted, from, until)?),
        };
        Ok(Changes { inner })
    }
}

/// The iterator of [`WaveFile::changes`]. After an error it ends.
pub struct Changes {
    inner: Inner,
}

enum Inner {
    Vcd(Box<super::vcd_source::VcdStream>),
    Fst(super::fst_source::FstStream),
}

impl Changes {
    /// The latest time read so far (femtoseconds); after the iterator has ended, the
    /// file's last time (or the first time past the window, when it stopped there).
    pub fn last_time(&self) -> u64 {
        match &self.inner {
            Inner::Vcd(s) => s.last_time(),
            Inner::Fst(s) => s.last_time(),
        }
    }
}

impl Iterator for Changes {
    type Item = Result<Step, WaveError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::Vcd(s) => s.next(),
            Inner::Fst(s) => s.next(),
        }
    }
}

/// FST files start with the header block: type 0, then its length 329 (big-endian u64).
fn looks_like_fst(start: &[u8]) -> bool {
    start.len() >= 9 && start[0] == 0 && start[1..9] == 329u64.to_be_bytes()
}

/// Walk the FST block list (a type byte, then the block's length as a big-endian u64
/// that counts itself) and check that it ends exactly at the end of the file.
/// `fst-reader` trusts these lengths (a damaged one can make it seek back and loop), so
/// a file that is cut short or damaged is refused here with the offset of the bad block.
fn check_fst_blocks(path: &Path) -> Result<(), String> {
    const GZIP_WRAPPER: u8 = 254;
    let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let size = f.metadata().map_err(|e| e.to_string())?.len();
    let mut at = 0u64;
    let mut head = [0u8; 9];
    while at < size {
        f.seek(std::io::SeekFrom::Start(at))
            .map_err(|e| e.to_string())?;
        if size - at < 9 {
            return Err(format!(
                "FST file cut short: {} stray bytes at byte {at} (truncated?)",
                size - at
            ));
        }
        f.read_exact(&mut head).map_err(|e| e.to_string())?;
        if head[0] == GZIP_WRAPPER {
            return Ok(());
        }
        let len = u64::from_be_bytes(head[1..9].try_into().unwrap_or_default());
        if len < 8 || len > size - at - 1 {
            return Err(format!(
                "FST block at byte {at} (type {}) claims {len} bytes but {} remain: the file \
                 is truncated or damaged",
                head[0],
                size - at - 1
            ));
        }
        at += 1 + len;
    }
    Ok(())
}

/// The last `#<time>` line in the final 64 KiB of a VCD file, in ticks.
fn last_vcd_time(path: &Path) -> std::io::Result<Option<u64>> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    f.seek(std::io::SeekFrom::Start(len.saturating_sub(1 << 16)))?;
    let mut tail = Vec::new();
    f.read_to_end(&mut tail)?;
    let text = String::from_utf8_lossy(&tail);
    Ok(text
        .lines()
        .rev()
        .filter_map(|l| l.trim().strip_prefix('#'))
        .find_map(|t| t.parse::<u64>().ok()))
}

/// Up to 64 bytes from the start, the reader rewound.
fn first_bytes<R: BufRead + Seek>(r: &mut R) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(64);
    r.by_ref().take(64).read_to_end(&mut buf)?;
    r.rewind()?;
    Ok(buf)
}

/// A value from VCD/FST characters (`0`, `1`, `x`, `z`; anything else counts as `x`).
pub(crate) fn value_from_ascii(width: u32, chars: &[u8]) -> Value {
    use crate::value::Logic;
    let bits: Vec<Logic> = chars
        .iter()
        .map(|c| match c {
            b'0' => Logic::Zero,
            b'1' => Logic::One,
            b'z' | b'Z' => Logic::Z,
            _ => Logic::X,
        })
        .collect();
    Value::from_logic(width, &bits)
}
