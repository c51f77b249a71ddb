//! docs/measurements.md's generated blocks (`nic measurements`): each lies between
//! `<!-- NAME:begin -->` and `<!-- NAME:end -->`, opens with a stamp (the command, date,
//! source files, machine and tool version) and holds what the renderers beside the results
//! write from the JSON the commands wrote. The prose around the blocks is the page's own.
//!
//! [`regenerate`] rewrites every block whose JSON is in the source folders (files named
//! `<source>.json` or `<source>.<anything>.json`, [`BLOCKS`]), leaves the others as they
//! are, and writes the list of blocks ([`INDEX`]): which are generated, when and from
//! what, and which await a run. A malformed file, a file no block reads, or a block the
//! page has no markers for is an error, and then nothing is written.

use crate::load_json;
use nic_check::record::CheckRecord;
use nic_synth::SynthReport;
use nic_testbench::bench::DatapathBench;
use nic_testbench::message_rate::MessageRate;
use nic_testbench::nic_bench::NicBench;
use nic_testbench::pools_bench::PoolsBenchRow;
use nic_testbench::regcache_bench::RegcacheBenchReport;
use nic_testbench::rejoin_bench::BenchResult;
use nic_testbench::scenario_run::SlowPathRun;
use nic_testbench::soak::SoakSummary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A kind of generated block: its markers' name, the JSON it reads and the run that
/// writes that JSON.
pub struct Block {
    /// The markers' name (`pools`: `<!-- pools:begin -->`).
    pub name: &'static str,
    /// What the page shows in it.
    pub title: &'static str,
    /// The file names it reads (`pools`: `pools.json`, `pools.<anything>.json`).
    pub sources: &'static [&'static str],
    /// The commands that write them (`DIR` stands for the source folder).
    pub run: &'static str,
}

/// The block kinds besides the synthesis tables (`synth-SECTION`, from
/// `synth-SECTION.json` or `synth-SECTION.<anything>.json`: `nic synth`'s report.json).
pub const BLOCKS: [Block; 11] = [
    Block {
        name: "speed",
        title: "Simulation speed",
        sources: &["datapath", "nic"],
        run: "`nic bench datapath --out DIR/datapath.json`, `nic bench nic --sizes 64,256,1024,4096,16384,65536 --out DIR/nic.json`",
    },
    Block {
        name: "goodput",
        title: "Goodput against message size",
        sources: &["nic"],
        run: "`nic bench nic --sizes 64,256,1024,4096,16384,65536 --out DIR/nic.json`",
    },
    Block {
        name: "message-rate",
        title: "Message rate of short RDMA WRITEs",
        sources: &["nic-rate"],
        run: "`nic bench nic --size 64 --out DIR/nic-rate.json`",
    },
    Block {
        name: "rejoin-tables",
        title: "Rejoin against the heartbeat baseline",
        sources: &["rejoin"],
        run: "`nic bench rejoin --out DIR/rejoin.<name>.json`, one file per process",
    },
    Block {
        name: "check-depth-first",
        title: "Rejoin model check, depth-first",
        sources: &["check"],
        run: "`nic check rejoin ... --out DIR/check.<name>.json` without `--max-depth`",
    },
    Block {
        name: "check-breadth-first",
        title: "Rejoin model check, breadth-first",
        sources: &["check"],
        run: "`nic check rejoin ... --max-depth N --out DIR/check.<name>.json`",
    },
    Block {
        name: "soak",
        title: "Soak",
        sources: &["soak"],
        run: "`nic soak --seed S --cases N --jobs J --out DIR/soak.<name>.json`",
    },
    Block {
        name: "soak-multi-nic",
        title: "Multi-NIC soak",
        sources: &["soak"],
        run: "`nic soak --multi-nic --seed S --cases N --out DIR/soak.<name>.json`",
    },
    Block {
        name: "multi-nic-slow-path",
        title: "Several NICs per host, the slow path",
        sources: &["multi-nic"],
        run: "`nic sim --scenario scenarios/multi-nic-<name>.toml --report DIR/multi-nic.<name>.json`",
    },
    Block {
        name: "regcache",
        title: "Registration cache",
        sources: &["regcache"],
        run: "`nic bench regcache --out DIR/regcache.json`",
    },
    Block {
        name: "pools",
        title: "Buffer pools",
        sources: &["pools"],
        run: "`nic bench pools --packet-bytes 64,256,1000,4096,65536 --packets 100 --out DIR/pools.json`",
    },
];

/// The block that lists the others.
pub const INDEX: &str = "generated-blocks";

/// The markers of block `name`.
pub fn markers(name: &str) -> (String, String) {
    (
        format!("<!-- {name}:begin -->"),
        format!("<!-- {name}:end -->"),
    )
}

/// `text` with what lies between block `name`'s markers replaced by `block`; the page must
/// have both markers once each, in order.
pub fn splice(text: &str, name: &str, block: &str) -> Result<String, String> {
    let (begin, end) = markers(name);
    let (Some(a), Some(b)) = (text.find(&begin), text.find(&end)) else {
        return Err(format!("no `{begin}` ... `{end}` markers to write between"));
    };
    if b < a {
        return Err(format!("`{end}` comes before `{begin}`"));
    }
    if text.matches(&begin).count() > 1 || text.matches(&end).count() > 1 {
        return Err(format!("`{begin}` or `{end}` is on the page twice"));
    }
    Ok(format!("{}{begin}\n{block}{}", &text[..a], &text[b..]))
}

/// Replaces block `name` of the page `doc` with `block`; nothing is written on an error.
pub fn write_block(doc: &Path, name: &str, block: &str) -> Result<(), String> {
    let text = read(doc)?;
    let out = splice(&text, name, block).map_err(|e| format!("{}: {e}", doc.display()))?;
    std::fs::write(doc, out).map_err(|e| format!("{}: {e}", doc.display()))
}

fn read(doc: &Path) -> Result<String, String> {
    std::fs::read_to_string(doc).map_err(|e| format!("{}: {e}", doc.display()))
}

/// The tool whose version a block's stamp names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Verilator,
    Yosys,
    /// The model checker runs no external tool.
    None,
}

/// The stamp that opens a block: "Generated by `command` on DATE from FILES; machine: N
/// cores, ARCH; TOOL VERSION. Edit the command, not this block."
pub fn stamp(command: &str, files: &[String], tool: Tool) -> String {
    let out = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|| format!("{program}: unknown version"))
    };
    let tool = match tool {
        Tool::Verilator => format!("; {}", out("verilator", &["--version"])),
        Tool::Yosys => format!("; {}", out("yosys", &["-V"])),
        Tool::None => String::new(),
    };
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "<!-- Generated by `{command}` on {} from {}; machine: {cores} cores, {}{tool}. Edit the command, not this block. -->\n",
        out("date", &["-u", "+%Y-%m-%d"]),
        files.join(", "),
        out("uname", &["-m"]),
    )
}

/// The sizes of every `nic bench rejoin` file in one result (the first file's settings);
/// a size in two files is an error.
pub fn merge_rejoin(files: &[PathBuf]) -> Result<BenchResult, String> {
    let mut merged: Option<BenchResult> = None;
    for f in files {
        let b: BenchResult =
            load_json(f, "the JSON of `nic bench rejoin`").map_err(|e| e.to_string())?;
        match merged.as_mut() {
            None => merged = Some(b),
            Some(m) => {
                for z in b.sizes {
                    if m.sizes.iter().any(|y| y.hosts == z.hosts) {
                        return Err(format!(
                            "{}: {} hosts are in an earlier file too",
                            f.display(),
                            z.hosts
                        ));
                    }
                    m.sizes.push(z);
                }
                m.wall_seconds += b.wall_seconds;
            }
        }
    }
    let mut m = merged.ok_or("no JSON file given")?;
    m.sizes.sort_by_key(|z| z.hosts);
    Ok(m)
}

/// The synthesis reports of `files`, in file order.
pub fn load_synth(files: &[PathBuf]) -> Result<Vec<SynthReport>, String> {
    let mut reports = vec![];
    for f in files {
        let r: Vec<SynthReport> =
            load_json(f, "`nic synth`'s report.json").map_err(|e| e.to_string())?;
        reports.extend(r);
    }
    Ok(reports)
}

/// What [`regenerate`] did with one block of the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The markers' name.
    pub name: String,
    /// The files it was written from; empty: left as it was.
    pub files: Vec<PathBuf>,
}

/// The JSON files of the source folders by source name (the file name up to its first
/// dot), sorted by path.
fn sources(from: &[PathBuf]) -> Result<BTreeMap<String, Vec<PathBuf>>, String> {
    let mut found: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for dir in from {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for e in entries {
            let path = e.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if !name.ends_with(".json") {
                continue;
            }
            let source = name.split('.').next().unwrap_or_default().to_string();
            found.entry(source).or_default().push(path);
        }
    }
    for files in found.values_mut() {
        files.sort();
    }
    Ok(found)
}

/// The file of `source` when there is one; several are an error (its block reads one).
fn single<'a>(files: &'a [PathBuf], source: &str) -> Result<Option<&'a PathBuf>, String> {
    match files {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => Err(format!(
            "{}: one `{source}` file is read, not {}",
            many.iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            many.len()
        )),
    }
}

/// Every JSON file of the sources, parsed (a malformed one is an error naming it).
struct Loaded {
    datapath: Option<(PathBuf, DatapathBench)>,
    nic: Option<(PathBuf, NicBench)>,
    nic_rate: Option<(PathBuf, Vec<MessageRate>)>,
    pools: Option<(PathBuf, Vec<PoolsBenchRow>)>,
    regcache: Option<(PathBuf, RegcacheBenchReport)>,
    rejoin: Option<(Vec<PathBuf>, BenchResult)>,
    checks: Vec<(PathBuf, CheckRecord)>,
    soaks: Vec<(PathBuf, SoakSummary)>,
    slow_path: Vec<(PathBuf, SlowPathRun)>,
    synth: BTreeMap<String, (Vec<PathBuf>, Vec<SynthReport>)>,
}

/// Every file of `source`, parsed as `what`.
fn every<T: serde::de::DeserializeOwned>(
    found: &BTreeMap<String, Vec<PathBuf>>,
    source: &str,
    what: &str,
) -> Result<Vec<(PathBuf, T)>, String> {
    let files = found.get(source).map_or(&[][..], |v| v.as_slice());
    files
        .iter()
        .map(|f| Ok((f.clone(), load_json(f, what).map_err(|e| e.to_string())?)))
        .collect()
}

/// The one file of `source`, parsed as `what`; two are an error.
fn one<T: serde::de::DeserializeOwned>(
    found: &BTreeMap<String, Vec<PathBuf>>,
    source: &str,
    what: &str,
) -> Result<Option<(PathBuf, T)>, String> {
    let files = found.get(source).map_or(&[][..], |v| v.as_slice());
    match single(files, source)? {
        None => Ok(None),
        Some(_) => Ok(every(found, source, what)?.pop()),
    }
}

fn load(found: &BTreeMap<String, Vec<PathBuf>>) -> Result<Loaded, String> {
    let rejoin = found.get("rejoin").filter(|v| !v.is_empty());
    let mut loaded = Loaded {
        datapath: one(found, "datapath", "the JSON of `nic bench datapath`")?,
        nic: one(found, "nic", "the JSON of `nic bench nic`")?,
        nic_rate: one(found, "nic-rate", "the JSON of `nic bench nic --size`")?,
        pools: one(found, "pools", "the JSON of `nic bench pools`")?,
        regcache: one(found, "regcache", "the JSON of `nic bench regcache`")?,
        rejoin: match rejoin {
            Some(files) => Some((files.clone(), merge_rejoin(files)?)),
            None => None,
        },
        checks: every(found, "check", "the JSON of `nic check rejoin --out`")?,
        soaks: every(found, "soak", "the JSON of `nic soak --out`")?,
        slow_path: every(
            found,
            "multi-nic",
            "the JSON report of `nic sim --scenario` (with `multi_nic`)",
        )?,
        synth: BTreeMap::new(),
    };
    let mut known: Vec<&str> = BLOCKS
        .iter()
        .flat_map(|b| b.sources.iter().copied())
        .collect();
    known.sort_unstable();
    known.dedup();
    for (source, files) in found {
        if source.starts_with("synth-") {
            loaded
                .synth
                .insert(source.clone(), (files.clone(), load_synth(files)?));
        } else if !known.contains(&source.as_str()) {
            return Err(format!(
                "{}: no block of the page reads `{source}` files (they read {} and synth-SECTION)",
                files[0].display(),
                known.join(", ")
            ));
        }
    }
    Ok(loaded)
}

/// A block's new content: its files, the tool its stamp names, and the Markdown.
struct Rendered {
    files: Vec<PathBuf>,
    tool: Tool,
    markdown: String,
}

/// What `loaded` gives block `name`, or `None` when its files are not there (or hold
/// nothing for it).
fn render(name: &str, l: &Loaded) -> Option<Rendered> {
    use nic_testbench::{message_rate, nic_bench, pools_bench, regcache_bench, rejoin_bench, soak};
    let verilator = |files: Vec<PathBuf>, markdown: String| {
        Some(Rendered {
            files,
            tool: Tool::Verilator,
            markdown,
        })
    };
    match name {
        "speed" => {
            let files: Vec<PathBuf> = l
                .datapath
                .iter()
                .map(|(f, _)| f.clone())
                .chain(l.nic.iter().map(|(f, _)| f.clone()))
                .collect();
            if files.is_empty() {
                return None;
            }
            verilator(
                files,
                nic_bench::render_speed_markdown(
                    l.datapath.as_ref().map(|(_, d)| d),
                    l.nic.as_ref().map(|(_, n)| n),
                ),
            )
        }
        "goodput" => {
            let (f, n) = l.nic.as_ref()?;
            verilator(vec![f.clone()], nic_bench::render_sizes_markdown(n)?)
        }
        "message-rate" => {
            let (f, runs) = l.nic_rate.as_ref()?;
            verilator(vec![f.clone()], message_rate::render_markdown(runs))
        }
        "pools" => {
            let (f, rows) = l.pools.as_ref()?;
            verilator(vec![f.clone()], pools_bench::render_markdown(rows))
        }
        "regcache" => {
            let (f, r) = l.regcache.as_ref()?;
            verilator(vec![f.clone()], regcache_bench::render_markdown(r))
        }
        "rejoin-tables" => {
            let (files, b) = l.rejoin.as_ref()?;
            verilator(files.clone(), rejoin_bench::render_markdown(b))
        }
        "check-depth-first" | "check-breadth-first" => {
            let breadth = name == "check-breadth-first";
            let mut mine: Vec<&(PathBuf, CheckRecord)> = l
                .checks
                .iter()
                .filter(|(_, r)| r.max_depth.is_some() == breadth)
                .collect();
            if mine.is_empty() {
                return None;
            }
            mine.sort_by_key(|(_, r)| r.states);
            let records: Vec<CheckRecord> = mine.iter().map(|(_, r)| r.clone()).collect();
            Some(Rendered {
                files: mine.iter().map(|(f, _)| f.clone()).collect(),
                tool: Tool::None,
                markdown: check_markdown(&records),
            })
        }
        "soak" | "soak-multi-nic" => {
            let multi = name == "soak-multi-nic";
            let mut mine: Vec<&(PathBuf, SoakSummary)> = l
                .soaks
                .iter()
                .filter(|(_, s)| s.multi_nic == multi)
                .collect();
            if mine.is_empty() {
                return None;
            }
            mine.sort_by_key(|(_, s)| s.first_seed);
            let files = mine.iter().map(|(f, _)| f.clone()).collect();
            let summaries: Vec<SoakSummary> = mine.iter().map(|(_, s)| s.clone()).collect();
            verilator(files, soak::render_markdown(&summaries))
        }
        "multi-nic-slow-path" => {
            if l.slow_path.is_empty() {
                return None;
            }
            let runs: Vec<SlowPathRun> = l.slow_path.iter().map(|(_, r)| r.clone()).collect();
            verilator(
                l.slow_path.iter().map(|(f, _)| f.clone()).collect(),
                nic_testbench::scenario_run::render_slow_path_markdown(&runs),
            )
        }
        synth if synth.starts_with("synth-") => {
            let (files, reports) = l.synth.get(synth)?;
            Some(Rendered {
                files: files.clone(),
                tool: Tool::Yosys,
                markdown: nic_synth::render_markdown(reports),
            })
        }
        _ => None,
    }
}

/// Model checks as a Markdown table of docs/measurements.md, one row per check in the
/// order given: its arguments, start, search, distinct states (classes with the symmetry
/// reduction), states generated, depth, wall time, peak memory and verdict.
pub fn check_markdown(records: &[CheckRecord]) -> String {
    use nic_testbench::markdown::thousands;
    use std::fmt::Write as _;
    let mut s = String::from(
        "| `nic check rejoin` | start | search | distinct states (classes) | generated | depth | wall time | peak memory | result |\n| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    for r in records {
        let memory = r.peak_memory_bytes.map_or("-".into(), |b| {
            if b >= 1_000_000_000 {
                format!("{:.2} GB", b as f64 / 1e9)
            } else {
                format!("{:.0} MB", b as f64 / 1e6)
            }
        });
        let seconds = if r.seconds >= 100.0 {
            format!("{} s", thousands(r.seconds.round() as u64))
        } else {
            format!("{:.1} s", r.seconds)
        };
        let result = if r.failed.is_empty() {
            "every property holds".to_string()
        } else {
            format!("**fails**: {}", r.failed.join(", "))
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} | {seconds} | {memory} | {result} |",
            r.arguments(),
            if r.cold { "cold" } else { "joined" },
            r.search(),
            thousands(r.unique_states as u64),
            thousands(r.states as u64),
            r.depth
        );
    }
    s
}

/// Whether `name` is a block [`regenerate`] knows.
fn known(name: &str) -> bool {
    name == INDEX || name.starts_with("synth-") || BLOCKS.iter().any(|b| b.name == name)
}

/// The names of the page's blocks, in page order; a begin marker without its end, or a
/// block the command does not know, is an error.
pub fn blocks_of(text: &str) -> Result<Vec<String>, String> {
    let mut names = vec![];
    let mut rest = text;
    while let Some(i) = rest.find("<!-- ") {
        rest = &rest[i + 5..];
        let Some(j) = rest.find(" -->") else { break };
        if let Some(name) = rest[..j].strip_suffix(":begin") {
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                if !known(name) {
                    return Err(format!(
                        "`<!-- {name}:begin -->`: no block is called `{name}` (the blocks: {}, synth-SECTION, {INDEX})",
                        BLOCKS.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
                    ));
                }
                if !text.contains(&markers(name).1) {
                    return Err(format!(
                        "`<!-- {name}:begin -->` has no `<!-- {name}:end -->`"
                    ));
                }
                names.push(name.to_string());
            }
        }
    }
    Ok(names)
}

/// The content of block `name` in `text` (between its markers).
fn content<'a>(text: &'a str, name: &str) -> &'a str {
    let (begin, end) = markers(name);
    match (text.find(&begin), text.find(&end)) {
        (Some(a), Some(b)) if a + begin.len() <= b => &text[a + begin.len()..b],
        _ => "",
    }
}

/// The index: every block of the page with what its stamp says, or the run it awaits;
/// a generated block whose files are gone says which run writes them again.
fn index(text: &str, names: &[String], from: &[PathBuf]) -> String {
    let dir = from
        .first()
        .map_or("DIR".to_string(), |d| d.display().to_string());
    let mut s = String::new();
    for name in names.iter().filter(|n| *n != INDEX) {
        let block = BLOCKS.iter().find(|b| b.name == *name);
        let title = block.map_or("Synthesis", |b| b.title);
        let run = block
            .map_or_else(
                || format!("`nic synth ... --report DIR/{name}.<run>.json`, one file per run"),
                |b| b.run.to_string(),
            )
            .replace("DIR", &dir);
        let stamped = content(text, name)
            .trim_start()
            .strip_prefix("<!-- Generated by `")
            .and_then(|r| r.split_once("` on "))
            .and_then(|(command, r)| {
                let (date, r) = r.split_once(" from ")?;
                let (files, _) = r.split_once("; machine:")?;
                Some((command, date, files))
            });
        let line = match stamped {
            Some((command, date, files)) => {
                let gone = files.split(", ").any(|f| !Path::new(f).exists());
                format!(
                    "generated by `{command}` on {date} from {files}{}",
                    if gone {
                        format!(" (files not in the repository; the next run regenerates it: {run}, then `nic measurements all`)")
                    } else {
                        String::new()
                    }
                )
            }
            None => format!(
                "written by hand; the next run generates it: {run}, then `nic measurements all`"
            ),
        };
        s.push_str(&format!("- {title} (`{name}`): {line}.\n"));
    }
    s
}

/// Rewrites every block of the page `doc` whose JSON is in the folders `from`, then the
/// index; the other blocks stay as they are. Checks everything before writing: a
/// malformed or unknown file, a block without markers, or markers of an unknown block is
/// an error, and the page is left untouched. Returns each block's outcome in page order.
pub fn regenerate(doc: &Path, from: &[PathBuf], command: &str) -> Result<Vec<Outcome>, String> {
    let mut text = read(doc)?;
    let at = |e: String| format!("{}: {e}", doc.display());
    let names = blocks_of(&text).map_err(at)?;
    let found = sources(from)?;
    let loaded = load(&found)?;
    // Every block the files give content must be on the page.
    let mut wanted: Vec<String> = BLOCKS.iter().map(|b| b.name.to_string()).collect();
    wanted.extend(loaded.synth.keys().cloned());
    for name in &wanted {
        if let Some(r) = render(name, &loaded) {
            if !names.contains(name) {
                let (begin, end) = markers(name);
                return Err(at(format!(
                    "no `{begin}` ... `{end}` markers for {}",
                    r.files
                        .iter()
                        .map(|f| f.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
    }
    let mut outcomes = vec![];
    for name in &names {
        let files = match render(name, &loaded) {
            Some(r) => {
                let listed: Vec<String> = r.files.iter().map(|f| f.display().to_string()).collect();
                let block = format!("{}\n{}", stamp(command, &listed, r.tool), r.markdown);
                text = splice(&text, name, &block).map_err(at)?;
                r.files
            }
            None => vec![],
        };
        outcomes.push(Outcome {
            name: name.clone(),
            files,
        });
    }
    if names.iter().any(|n| n == INDEX) {
        let list = index(&text, &names, from);
        text = splice(&text, INDEX, &list).map_err(at)?;
    }
    std::fs::write(doc, text).map_err(|e| format!("{}: {e}", doc.display()))?;
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_replaces_between_the_markers_and_names_what_is_wrong() {
        let page = "a\n<!-- pools:begin -->\nold\n<!-- pools:end -->\nb\n";
        assert_eq!(
            splice(page, "pools", "new\n").unwrap(),
            "a\n<!-- pools:begin -->\nnew\n<!-- pools:end -->\nb\n"
        );
        let e = splice(page, "soak", "x").unwrap_err();
        assert!(e.contains("no `<!-- soak:begin -->`"), "{e}");
        let reversed = "<!-- pools:end -->\n<!-- pools:begin -->\n";
        assert!(splice(reversed, "pools", "x")
            .unwrap_err()
            .contains("comes before"));
        let twice = format!("{page}{page}");
        assert!(splice(&twice, "pools", "x").unwrap_err().contains("twice"));
    }

    #[test]
    fn model_checks_render_as_rows_with_their_verdict() {
        let r = CheckRecord {
            nodes: 3,
            reboots: 2,
            losses: 0,
            link_capacity: 3,
            cold: false,
            rdma_requests: true,
            rdma_own_path: false,
            max_depth: None,
            symmetry_requested: true,
            bug: None,
            threads: 1,
            symmetry: true,
            unique_states: 26_951_369,
            states: 125_861_080,
            depth: 70,
            seconds: 1093.4,
            peak_memory_bytes: Some(1_090_000_000),
            failed: vec![],
        };
        let failing = CheckRecord {
            nodes: 2,
            reboots: 0,
            cold: true,
            max_depth: Some(20),
            symmetry: false,
            bug: Some("no-rdma-ready".into()),
            unique_states: 40,
            states: 90,
            depth: 12,
            seconds: 0.04,
            peak_memory_bytes: None,
            failed: vec!["converges".into()],
            ..r.clone()
        };
        let t = check_markdown(&[r, failing]);
        assert!(t.contains("| `--nodes 3 --reboots 2 --losses 0` | joined | depth-first, symmetry reduction | 26,951,369 | 125,861,080 | 70 | 1,093 s | 1.09 GB | every property holds |"), "{t}");
        assert!(t.contains("| `--nodes 2 --cold --reboots 0 --losses 0 --max-depth 20 --bug no-rdma-ready` | cold | breadth-first | 40 | 90 | 12 | 0.0 s | - | **fails**: converges |"), "{t}");
    }

    #[test]
    fn the_page_blocks_are_listed_and_unknown_or_unclosed_ones_are_errors() {
        let page = "<!-- generated-blocks:begin -->\n<!-- generated-blocks:end -->\n<!-- Generated by `x` on d from f; machine: m. -->\n<!-- synth-hx8k:begin -->\n<!-- synth-hx8k:end -->\n";
        assert_eq!(blocks_of(page).unwrap(), vec![INDEX, "synth-hx8k"]);
        let e = blocks_of("<!-- bogus:begin -->\n<!-- bogus:end -->").unwrap_err();
        assert!(e.contains("no block is called `bogus`"), "{e}");
        let e = blocks_of("<!-- pools:begin -->\n").unwrap_err();
        assert!(e.contains("has no `<!-- pools:end -->`"), "{e}");
    }
}
