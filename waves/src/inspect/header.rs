//! What a waveform file declares: its signals, their scopes and widths, and its time unit.

use std::path::PathBuf;

/// The two formats read: VCD (text, both simulators) and FST (GTKWave's compressed
/// format, Verilator's `--trace-fst`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Value Change Dump, IEEE 1364 §18.
    Vcd,
    /// Fast Signal Trace.
    Fst,
}

/// One declared variable. Several variables may share a `slot` (Verilator declares
/// each port in `TOP` and again in the top module, with the same identifier): they
/// carry the same changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Var {
    /// Enclosing scopes, outermost first: `["TOP", "top", "counter"]`.
    pub scopes: Vec<String>,
    /// The variable's own name, without a bit range: `q`.
    pub name: String,
    /// The bit range as declared, when there is one: `[3:0]`.
    pub range: Option<String>,
    /// Width in bits (0 for strings and events).
    pub width: u32,
    /// Index of the value stream this variable reads.
    pub slot: usize,
}

impl Var {
    /// A one-bit variable at the dotted path `TOP.top.q` reading `slot` (for tests).
    #[cfg(test)]
    pub(crate) fn at(path: &str, slot: usize) -> Var {
        let mut scopes: Vec<String> = path.split('.').map(String::from).collect();
        let name = scopes.pop().unwrap_or_default();
        Var {
            scopes,
            name,
            range: None,
            width: 1,
            slot,
        }
    }

    /// Scopes and name joined by `.`: `TOP.top.counter.q`.
    pub fn path(&self) -> String {
        let mut s = self.scopes.join(".");
        if !s.is_empty() {
            s.push('.');
        }
        s.push_str(&self.name);
        s
    }

    /// The path as GTKWave names it: with the bit range of vectors, `TOP.count[3:0]`.
    pub fn gtkwave_name(&self) -> String {
        match &self.range {
            Some(r) if self.width > 1 => format!("{}{r}", self.path()),
            _ => self.path(),
        }
    }
}

/// The declarations of a waveform file.
#[derive(Clone, Debug)]
pub struct Header {
    /// The file read.
    pub path: PathBuf,
    /// Its format.
    pub format: Format,
    /// Every variable in declaration order.
    pub vars: Vec<Var>,
    /// Number of distinct value streams (`slot`s).
    pub slots: usize,
    /// Femtoseconds per tick of the file's timescale.
    pub fs_per_tick: u64,
}

impl Header {
    /// Scope paths in declaration order (each once), e.g. `TOP`, `TOP.top`.
    pub fn scopes(&self) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for v in &self.vars {
            for depth in 1..=v.scopes.len() {
                let s = v.scopes[..depth].join(".");
                if seen.insert(s.clone()) {
                    out.push(s);
                }
            }
        }
        out
    }

    /// The width of a slot (the widest variable reading it).
    pub fn slot_width(&self, slot: usize) -> u32 {
        self.vars
            .iter()
            .filter(|v| v.slot == slot)
            .map(|v| v.width)
            .max()
            .unwrap_or(0)
    }
}

/// Split `count [3:0]` or `count[3:0]` into the name and its range.
pub(crate) fn split_range(name: &str) -> (String, Option<String>) {
    let trimmed = name.trim_end();
    if trimmed.ends_with(']') {
        if let Some(open) = trimmed.rfind('[') {
            let base = trimmed[..open].trim_end();
            if !base.is_empty() {
                return (base.to_string(), Some(trimmed[open..].to_string()));
            }
        }
    }
    (trimmed.to_string(), None)
}
