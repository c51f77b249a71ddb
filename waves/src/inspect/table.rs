//! `nic waves show`: a window as a text table, one row per time at which a selected
//! signal changes, written as the file is read.

use super::format::{max_chars, short};
use super::header::{Header, Var};
use super::names::design_root;
use super::source::WaveFile;
use super::time::TimeUnit;
use super::window::{scan_window, Row};
use crate::WaveError;
use std::io::Write;

/// Write the table of `vars` over `[from, to]` (femtoseconds) to `out`: a header line,
/// then the values at `from`, then a row per change. Cells that changed at a row's time
/// are marked with `*`. Returns the number of rows written.
pub fn write_table(
    file: WaveFile,
    vars: &[Var],
    from: u64,
    to: u64,
    out: &mut impl Write,
) -> Result<usize, WaveError> {
    let unit = TimeUnit::for_resolution(file.header().fs_per_tick);
    let names = labels(file.header(), vars);
    let widths: Vec<usize> = vars
        .iter()
        .zip(&names)
        .map(|(v, n)| n.len().max(max_chars(v.width) + 1))
        .collect();
    let time_header = format!("time ({})", unit.name());
    let last = file.end_time().map_or(to, |e| e.min(to));
    let time_width = time_header.len().max(unit.format(last).len());
    let io = |source| WaveError::Io {
        path: "<stdout>".into(),
        source,
    };
    let mut line = format!("{time_header:>time_width$}");
    for (n, w) in names.iter().zip(&widths) {
        line.push_str(&format!("  {n:<w$}"));
    }
    writeln!(out, "{}", line.trim_end()).map_err(io)?;
    let mut rows = 0usize;
    scan_window(file, vars, from, to, |row: Row<'_>| {
        let mut line = format!("{:>time_width$}", unit.format(row.time));
        for ((v, w), changed) in row.values.iter().zip(&widths).zip(row.changed) {
            let mut cell = v.as_ref().map(short).unwrap_or_else(|| "-".into());
            if *changed {
                cell.push('*');
            }
            line.push_str(&format!("  {cell:<w$}"));
        }
        rows += 1;
        writeln!(out, "{}", line.trim_end()).map_err(io)
    })?;
    Ok(rows)
}

/// Labels for columns and rows: each path without the design's root scopes
/// ([`super::design_root`]: `TOP.top`, `uut`), or, when that is longer than 40
/// characters, the shortest dotted suffix that tells it apart from the others.
pub fn labels(header: &Header, vars: &[Var]) -> Vec<String> {
    let root = design_root(header);
    let relative: Vec<Var> = vars
        .iter()
        .map(|v| {
            let mut r = v.clone();
            if r.scopes.starts_with(&root) {
                r.scopes.drain(..root.len());
            } else if !r.scopes.is_empty() {
                r.scopes.remove(0);
            }
            r
        })
        .collect();
    let short = short_names(&relative);
    relative
        .iter()
        .zip(short)
        .map(|(v, s)| if v.path().len() <= 40 { v.path() } else { s })
        .collect()
}

/// The shortest dotted suffix of each path that tells it apart from the others.
pub fn short_names(vars: &[Var]) -> Vec<String> {
    let parts: Vec<Vec<String>> = vars
        .iter()
        .map(|v| {
            let mut p = v.scopes.clone();
            p.push(v.name.clone());
            p
        })
        .collect();
    let suffix = |p: &[String], n: usize| p[p.len() - n.min(p.len())..].join(".");
    parts
        .iter()
        .map(|p| {
            (1..=p.len())
                .map(|n| suffix(p, n))
                .find(|s| {
                    parts
                        .iter()
                        .filter(|q| *q != p && suffix(q, s.matches('.').count() + 1) == *s)
                        .count()
                        == 0
                })
                .unwrap_or_else(|| p.join("."))
        })
        .collect()
}
