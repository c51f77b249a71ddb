//! `nic soak --cases N --seed S`: random schedules on the Verilated NICs with every
//! scoreboard on (see `nic_testbench::soak`); a failing case is shrunk and written under
//! `scenarios/regressions/`.

use indicatif::{ProgressBar, ProgressStyle};
use nic_testbench::soak::{run_case, shrink, SoakCase, SoakFailure, SoakSummary};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Options of `nic soak`.
#[derive(clap::Args, Debug, Clone)]
pub struct SoakArgs {
    /// Cases to run: seeds `seed..seed + cases`.
    #[arg(long, default_value_t = 100)]
    pub cases: u64,
    /// The first case's seed (shards take disjoint ranges).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Cases run side by side.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Where shrunk failures go.
    #[arg(long, default_value = "scenarios/regressions")]
    pub regressions: PathBuf,
    /// Do not shrink failures (write them as found).
    #[arg(long)]
    pub no_shrink: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write the summary as JSON to this file (`nic measurements` reads it).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Give every case a host with two NICs and route changes or an unplugged NIC
    /// (docs/multi-nic.md); without it one case in six has one.
    #[arg(long)]
    pub multi_nic: bool,
}

/// Large RustHDL tops need a deep stack; Verilator runs do not mind.
const STACK_BYTES: usize = 64 << 20;

pub fn run(args: &SoakArgs) -> Result<SoakSummary, String> {
    if args.cases == 0 || args.jobs == 0 {
        return Err("--cases and --jobs must be at least 1".into());
    }
    let started = Instant::now();
    let bar = if args.quiet || args.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(args.cases)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "soak [{elapsed_precise}] {wide_bar} {pos}/{len} cases ({eta} left) {msg}",
        )
        .map_err(|e| e.to_string())?,
    );
    let next = AtomicU64::new(args.seed);
    let end = args.seed + args.cases;
    let summary = Mutex::new(SoakSummary {
        first_seed: args.seed,
        jobs: args.jobs,
        multi_nic: args.multi_nic,
        ..Default::default()
    });
    let error: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..args.jobs {
            std::thread::Builder::new()
                .stack_size(STACK_BYTES)
                .spawn_scoped(scope, || loop {
                    let seed = next.fetch_add(1, Ordering::Relaxed);
                    if seed >= end || error.lock().expect("error").is_some() {
                        return;
                    }
                    match soak_one(seed, args, &bar) {
                        Ok((cycles, nic_cycles, failure)) => {
                            let mut s = summary.lock().expect("summary");
                            s.cases += 1;
                            s.simulated_cycles += cycles;
                            s.nic_cycles += nic_cycles;
                            if let Some((violations, f)) = failure {
                                s.failing_cases += 1;
                                s.violations += violations;
                                bar.set_message(format!("{} failing", s.failing_cases));
                                s.failures.push(f);
                            }
                        }
                        Err(e) => *error.lock().expect("error") = Some(e),
                    }
                    bar.inc(1);
                })
                .expect("a soak thread");
        }
    });
    bar.finish_and_clear();
    if let Some(e) = error.into_inner().expect("error") {
        return Err(e);
    }
    let mut summary = summary.into_inner().expect("summary");
    summary.wall_seconds = started.elapsed().as_secs_f64();
    summary.failures.sort_by_key(|f| f.seed);
    let json = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?;
    if let Some(out) = &args.out {
        super::write_file(out, &json)?;
    }
    if args.json {
        println!("{json}");
    } else {
        println!(
            "soak seeds {}..{}: {} cases, {} simulated cycles ({} NIC-cycles), {} failing cases ({} violations), {:.1} s",
            summary.first_seed,
            end,
            summary.cases,
            summary.simulated_cycles,
            summary.nic_cycles,
            summary.failing_cases,
            summary.violations,
            summary.wall_seconds
        );
        for f in &summary.failures {
            println!(
                "  seed {}: {:?}: {}\n    shrunk to {}",
                f.seed, f.kinds, f.first, f.file
            );
        }
    }
    if summary.failing_cases > 0 {
        return Err(format!(
            "{} of {} soak cases failed; shrunk schedules are in {}",
            summary.failing_cases,
            summary.cases,
            args.regressions.display()
        ));
    }
    Ok(summary)
}

type Outcome = (u64, u64, Option<(u64, SoakFailure)>);

fn soak_one(seed: u64, args: &SoakArgs, bar: &ProgressBar) -> Result<Outcome, String> {
    let case = if args.multi_nic {
        SoakCase::generate_multi_nic(seed)
    } else {
        SoakCase::generate(seed)
    };
    // A panic in the simulation (the fabric, a model, the driver) is a finding too: the
    // case is kept as it is, unshrunk.
    let result = match std::panic::catch_unwind(|| run_case(&case)) {
        Ok(r) => r?,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            let name = format!("soak-{seed}");
            let comment =
                format!("Found by `nic soak --seed {seed} --cases 1`: the run panicked:\n{what}");
            std::fs::create_dir_all(&args.regressions)
                .map_err(|e| format!("{}: {e}", args.regressions.display()))?;
            let path = args.regressions.join(format!("{name}.toml"));
            std::fs::write(&path, case.to_toml(&name, &comment))
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let failure = SoakFailure {
                seed,
                kinds: vec!["panic".into()],
                first: what,
                file: path.display().to_string(),
            };
            return Ok((0, 0, Some((1, failure))));
        }
    };
    let (cycles, nic_cycles) = (result.report.cycles, result.report.nic_cycles);
    if result.report.passed {
        return Ok((cycles, nic_cycles, None));
    }
    let violations = result.report.violation_count;
    let first = result
        .report
        .violations
        .first()
        .map(|v| v.to_string())
        .unwrap_or_default();
    let shrunk = if args.no_shrink {
        result
    } else {
        shrink(result, |k| {
            bar.set_message(format!("shrinking seed {seed}: run {k}"))
        })?
    };
    let kinds: Vec<String> = shrunk.report.findings.keys().cloned().collect();
    let name = format!("soak-{seed}");
    let comment = format!(
        "Found by `nic soak --seed {seed} --cases 1`{}; fails with {kinds:?}:\n{}",
        if args.no_shrink { "" } else { ", shrunk" },
        shrunk
            .report
            .violations
            .first()
            .map(|v| v.to_string())
            .unwrap_or_default()
    );
    std::fs::create_dir_all(&args.regressions)
        .map_err(|e| format!("{}: {e}", args.regressions.display()))?;
    let path = args.regressions.join(format!("{name}.toml"));
    std::fs::write(&path, shrunk.case.to_toml(&name, &comment))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((
        cycles,
        nic_cycles,
        Some((
            violations,
            SoakFailure {
                seed,
                kinds,
                first,
                file: path.display().to_string(),
            },
        )),
    ))
}
