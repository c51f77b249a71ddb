//! Choosing signals by name: `count`, `counter.q`, `csr_*`, `*.state`.

use super::header::{Header, Var};
use crate::WaveError;
use std::collections::HashSet;

/// The variables named by `patterns` (each a comma-separated list), one per value
/// stream, in the order of the patterns and then of declaration.
///
/// A pattern without `*` or `?` matches a variable whose dotted path ends with the
/// pattern's dot-separated components (`counter.q` matches `TOP.top.counter.q`). With
/// wildcards it is a glob (`*` any run of characters, dots included; `?` one
/// character) that must match a dotted suffix of the path (`csr_*` matches
/// `TOP.csr_addr`). A bit range is not part of the name. Where several variables read
/// the same values (Verilator declares each port twice), the shortest path stands for
/// them. A pattern that matches nothing is an error naming it, with similar names.
pub fn select(header: &Header, patterns: &[String]) -> Result<Vec<Var>, WaveError> {
    let mut out: Vec<Var> = Vec::new();
    let mut seen: HashSet<usize> = HashSet::new();
    let items: Vec<&str> = patterns
        .iter()
        .flat_map(|p| p.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if items.is_empty() {
        return Err(WaveError::BadArgument {
            message: "no signal pattern given (e.g. --signals clock,count or --signals 'csr_*')"
                .into(),
        });
    }
    for pattern in items {
        let mut matched: Vec<&Var> = header.vars.iter().filter(|v| matches(pattern, v)).collect();
        if matched.is_empty() {
            return Err(WaveError::NotFound {
                path: header.path.clone(),
                name: pattern.to_string(),
                candidates: similar(header, pattern),
            });
        }
        // Shortest path first so that it stands for its aliases.
        matched.sort_by_key(|v| v.scopes.len());
        let mut fresh: Vec<&Var> = Vec::new();
        for v in matched {
            if seen.insert(v.slot) {
                fresh.push(v);
            }
        }
        fresh.sort_by_key(|v| header.vars.iter().position(|x| std::ptr::eq(x, *v)));
        out.extend(fresh.into_iter().cloned());
    }
    Ok(out)
}

/// Whether `pattern` names `var` (see [`select`]).
pub fn matches(pattern: &str, var: &Var) -> bool {
    let path = var.path();
    if pattern.contains(['*', '?']) {
        let mut starts = vec![0];
        starts.extend(path.match_indices('.').map(|(i, _)| i + 1));
        starts
            .iter()
            .any(|&s| glob(pattern.as_bytes(), &path.as_bytes()[s..]))
    } else {
        let want: Vec<&str> = pattern.split('.').collect();
        let mut have: Vec<&str> = var.scopes.iter().map(String::as_str).collect();
        have.push(&var.name);
        have.len() >= want.len() && have[have.len() - want.len()..] == want[..]
    }
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob(&p[1..], s) || (!s.is_empty() && glob(p, &s[1..])),
        (Some(b'?'), Some(_)) => glob(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => glob(&p[1..], &s[1..]),
        _ => false,
    }
}

/// Up to 12 paths whose last component resembles the last component of `pattern`.
fn similar(header: &Header, pattern: &str) -> Vec<String> {
    let last = pattern
        .rsplit('.')
        .next()
        .unwrap_or("")
        .trim_matches(['*', '?'])
        .to_ascii_lowercase();
    let mut out: Vec<String> = Vec::new();
    for v in &header.vars {
        let name = v.name.to_ascii_lowercase();
        if !last.is_empty() && (name.contains(&last) || last.contains(&name)) {
            let p = v.path();
            if !out.contains(&p) {
                out.push(p);
            }
        }
        if out.len() == 12 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(path: &str, slot: usize) -> Var {
        Var::at(path, slot)
    }

    #[test]
    fn suffixes_globs_and_aliases() {
        let header = Header {
            path: "t.vcd".into(),
            format: super::super::header::Format::Vcd,
            vars: vec![
                var("TOP.clock", 0),
                var("TOP.count", 1),
                var("TOP.top.clock", 0),
                var("TOP.top.count", 1),
                var("TOP.top.counter.q", 2),
                var("TOP.top.counter$q", 3),
            ],
            slots: 4,
            fs_per_tick: 1000,
        };
        let names = |p: &[&str]| -> Vec<String> {
            select(
                &header,
                &p.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
            .unwrap()
            .iter()
            .map(Var::path)
            .collect()
        };
        assert_eq!(names(&["count,clock"]), ["TOP.count", "TOP.clock"]);
        assert_eq!(names(&["counter.q"]), ["TOP.top.counter.q"]);
        assert_eq!(
            names(&["c*"]),
            [
                "TOP.clock",
                "TOP.count",
                "TOP.top.counter.q",
                "TOP.top.counter$q"
            ]
        );
        assert_eq!(names(&["top.*$q"]), ["TOP.top.counter$q"]);
        let err = select(&header, &["cnt".to_string()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("no signal matches `cnt`"), "{err}");
        assert!(select(&header, &[" , ".to_string()]).is_err());
    }
}
