//! Build script of nic-cosim: one Verilator model per exported block, a generated C++ shim
//! per model, and the generated Rust of both backends (`OUT_DIR/cosim_generated.rs`).
//!
//! For every block of `nic_rtl::export::cosim_blocks()`
//! (plus this crate's own self-test block, `src/selftest.rs`):
//! 1. its Verilog goes to `OUT_DIR/verilator/<module>/<module>.v` and
//!    `verilator --cc --build --trace -O3 --prefix V<module>` builds the model archive in
//!    `OUT_DIR/verilator/<module>/obj/` (skipped when the Verilog, the flags and the
//!    Verilator version are those of the last build: see `stamp`);
//! 2. the Verilator runtime objects that `V<module>_classes.mk` lists (`VM_GLOBAL_FAST`,
//!    `VM_GLOBAL_SLOW`) are built once, in the first model's directory, and linked once;
//! 3. the shims (`OUT_DIR/shim/<module>.cpp`), the models' objects and the runtime objects
//!    go into one static library, `libnic_cosim_verilated.a`.
//!
//! With feature `fst`, the NIC tops (`nic_top*`) are built a second time with
//! `--trace-fst` (`OUT_DIR/verilator/<module>_fst/`, prefix `V<module>_fst`, shim functions
//! `cosim_<module>_fst_*`, FST runtime objects, linked with zlib).
//!
//! Environment: `NIC_COSIM_VERILATOR` names the Verilator executable (default
//! `verilator`; `none` disables the Verilator backend as if Verilator were missing).
//! Without Verilator the build still succeeds: it warns, sets `cfg(verilator_missing)`,
//! and `VerilatorModel::new()` returns `CosimError::VerilatorUnavailable`.
//!
//! Language: `--default-language 1364-2005`. RustHDL writes Verilog-2005, in which
//! SystemVerilog keywords are plain identifiers (a field named `context` becomes an
//! instance `context`); Verilator would otherwise parse the `.v` as SystemVerilog. yosys
//! reads the same files as Verilog too.
//!
//! Lint waivers passed to Verilator, with their reasons:
//! - `-Wno-WIDTH`: RustHDL writes 32-bit literals into narrower and wider signals; widths
//!   are checked by RustHDL itself.
//! - `-Wno-UNOPTFLAT`: RustHDL flattens structs into signals whose bits feed each other
//!   combinationally without a real loop; a real loop fails RustHDL's own settle check.
//! - `-Wno-fatal`: any other warning is kept in the log (`verilator.log`) but does not
//!   stop the build; the lint gate is nic-synth's Verilator lint, not this build.

#[path = "build/gen.rs"]
mod gen;
#[path = "build/tool.rs"]
mod tool;
// The self-test block (ports wider than 64 bits and of odd widths), shared with the crate.
#[path = "src/selftest.rs"]
mod selftest;

use gen::{BlockSpec, TraceFormat, GENERATOR_VERSION};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use tool::{io_at, run_capture, run_logged, BuildError};

const MISSING: &str =
    "verilator not found: the Verilator backend is disabled; run scripts/setup.sh then cargo build";
const HINT_VERILATOR: &str = "the Verilog comes from nic_rtl::export::exported_blocks() (RustHDL): reproduce with the command above, \
fix the block in rtl/ (or report it to the block's owner); if Verilator itself is broken, run scripts/setup.sh; \
NIC_COSIM_VERILATOR=none builds without the Verilator backend";
const HINT_MAKE: &str = "the Verilator runtime did not compile: check that g++ and make are installed (scripts/setup.sh) \
and that the Verilator package is complete (`verilator --getenv VERILATOR_ROOT`/include has verilated.cpp)";

fn main() {
    if let Err(e) = run() {
        panic!("{e}");
    }
}

struct Verilator {
    bin: String,
    version: String,
    include: PathBuf,
}

fn run() -> Result<(), BuildError> {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo::rustc-check-cfg=cfg(verilator_missing)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=src/selftest.rs");
    println!("cargo:rerun-if-env-changed=NIC_COSIM_VERILATOR");
    let fst = std::env::var_os("CARGO_FEATURE_FST").is_some();

    let to_spec = |b: &nic_rtl::export::ExportedBlock| {
        let ports: Vec<_> = b
            .ports
            .iter()
            .map(|p| (p.name.clone(), p.input, p.width))
            .collect();
        BlockSpec::new(
            &b.name,
            &b.module,
            &b.verilog,
            &ports,
            b.rust_type,
            &b.rust_constructor,
        )
    };
    let blocks = nic_rtl::export::cosim_blocks()
        .iter()
        .map(to_spec)
        .collect::<Result<Vec<_>, _>>()?;
    let extra = vec![to_spec(&selftest::export())?];
    let all: Vec<&BlockSpec> = blocks.iter().chain(&extra).collect();
    for (i, b) in all.iter().enumerate() {
        if let Some(o) = all[..i]
            .iter()
            .find(|o| o.camel == b.camel || o.module == b.module)
        {
            return Err(BuildError::Invalid(format!(
                "blocks `{}` and `{}` would share the generated name `{}`/module `{}`: rename one",
                o.name, b.name, b.camel, b.module
            )));
        }
    }

    // With feature `fst`, the NIC tops (the scenario runs' models) are also built with
    // `--trace-fst`, as `V<module>_fst`.
    let fst_blocks: Vec<&BlockSpec> = if fst {
        blocks
            .iter()
            .filter(|b| b.module.starts_with("nic_top"))
            .collect()
    } else {
        vec![]
    };
    let verilator = find_verilator(&out_dir)?;
    match &verilator {
        None => {
            println!("cargo:warning={MISSING}");
            println!("cargo:rustc-cfg=verilator_missing");
            // Build again once Verilator is installed (scripts/setup.sh after a first
            // build): cargo reruns a script whose watched file does not exist.
            println!("cargo:rerun-if-changed=/usr/bin/verilator");
            println!("cargo:rerun-if-changed=/usr/local/bin/verilator");
        }
        Some(v) => build_models(v, &all, &fst_blocks, &out_dir)?,
    }

    let fst_modules: Vec<String> = match verilator {
        Some(_) => fst_blocks.iter().map(|b| b.module.clone()).collect(),
        None => vec![],
    };
    let rust = gen::rust_file(
        &blocks,
        &extra,
        verilator.as_ref().map(|v| v.version.as_str()),
        &fst_modules,
    );
    let path = out_dir.join("cosim_generated.rs");
    write_if_changed(&path, &rust)
}

fn write_if_changed(path: &Path, text: &str) -> Result<(), BuildError> {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        io_at(path, std::fs::write(path, text))?;
    }
    Ok(())
}

fn find_verilator(out_dir: &Path) -> Result<Option<Verilator>, BuildError> {
    let bin = std::env::var("NIC_COSIM_VERILATOR").unwrap_or_else(|_| "verilator".into());
    if bin.is_empty() || bin == "none" {
        return Ok(None);
    }
    let log = out_dir.join("verilator-version.log");
    let hint = "the Verilator installation is broken: run scripts/setup.sh";
    let Some(version) = run_capture(
        "verilator --version",
        Command::new(&bin).arg("--version"),
        &log,
        hint,
    )?
    else {
        return Ok(None);
    };
    let root = run_capture(
        "verilator --getenv VERILATOR_ROOT",
        Command::new(&bin).args(["--getenv", "VERILATOR_ROOT"]),
        &log,
        hint,
    )?
    .unwrap_or_default();
    let include = PathBuf::from(root.trim()).join("include");
    if !include.join("verilated.h").exists() {
        return Err(BuildError::Invalid(format!(
            "Verilator's include directory {} has no verilated.h: {hint}",
            include.display()
        )));
    }
    Ok(Some(Verilator {
        bin,
        version: version.trim().to_string(),
        include,
    }))
}

/// `VM_GLOBAL_FAST` and `VM_GLOBAL_SLOW` of a `V<module>_classes.mk`: the runtime sources.
fn runtime_objects(classes_mk: &Path) -> Result<Vec<String>, BuildError> {
    let text = io_at(classes_mk, std::fs::read_to_string(classes_mk))?;
    let mut names = vec![];
    let mut in_list = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("VM_GLOBAL_FAST") || t.starts_with("VM_GLOBAL_SLOW") {
            // `VM_GLOBAL_FAST += \` then one name a line, each but the last ending in `\`.
            let rest = t.split_once('=').map(|(_, r)| r).unwrap_or("");
            names.extend(
                rest.trim_end_matches('\\')
                    .split_whitespace()
                    .map(|n| format!("{n}.o")),
            );
            in_list = t.ends_with('\\');
            continue;
        }
        if in_list {
            names.extend(
                t.trim_end_matches('\\')
                    .split_whitespace()
                    .map(|n| format!("{n}.o")),
            );
            in_list = t.ends_with('\\');
        }
    }
    if names.is_empty() {
        return Err(BuildError::Invalid(format!(
            "{} lists no VM_GLOBAL_FAST/SLOW runtime sources",
            classes_mk.display()
        )));
    }
    Ok(names)
}

fn build_models(
    v: &Verilator,
    blocks: &[&BlockSpec],
    fst_blocks: &[&BlockSpec],
    out_dir: &Path,
) -> Result<(), BuildError> {
    let jobs = std::env::var("NUM_JOBS")
        .ok()
        .and_then(|j| j.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    // -march=native: the models are built on the machine that runs them, and Verilator's
    // parity reductions (the CRC networks) become popcnt instructions.
    let make_opts = "OPT_FAST=-O3 OPT_SLOW=-O1 OPT_GLOBAL=-O3";
    let mut model_objects = vec![];
    let mut include_dirs = vec![];
    // Per trace format: the directory, model prefix and runtime objects of its first model.
    let mut runtime: Vec<(TraceFormat, PathBuf, String, Vec<String>)> = vec![];
    let mut report = String::new();

    let models = blocks
        .iter()
        .map(|b| (*b, TraceFormat::Vcd))
        .chain(fst_blocks.iter().map(|b| (*b, TraceFormat::Fst)));
    for (b, format) in models {
        let dir = out_dir
            .join("verilator")
            .join(format!("{}{}", b.module, format.suffix()));
        let mdir = dir.join("obj");
        io_at(&mdir, std::fs::create_dir_all(&mdir))?;
        let vfile = dir.join(format!("{}.v", b.module));
        let prefix = format!("{}{}", b.prefix(), format.suffix());
        let mut cmd = Command::new(&v.bin);
        cmd.args([
            "--cc",
            "--build",
            format.flag(),
            "-O3",
            "-j",
            &jobs.to_string(),
        ])
        .args(["--prefix", &prefix, "--top-module", &b.module])
        .args(["--default-language", "1364-2005"])
        .arg("-Mdir")
        .arg(&mdir)
        .args(["-Wno-fatal", "-Wno-WIDTH", "-Wno-UNOPTFLAT"])
        .args(["-CFLAGS", "-fPIC -march=native"])
        .args(["-MAKEFLAGS", make_opts])
        .arg(&vfile);
        // The model is rebuilt only when something that shapes it changes.
        let stamp_path = dir.join("stamp");
        let stamp = format!(
            "generator {GENERATOR_VERSION}\n{}\n{}\n",
            v.version,
            tool::command_line(&cmd)
        );
        let archive = mdir.join(format!("{prefix}__ALL.a"));
        let fresh = std::fs::read_to_string(&vfile).ok().as_deref() == Some(b.verilog.as_str())
            && std::fs::read_to_string(&stamp_path).ok().as_deref() == Some(stamp.as_str())
            && archive.exists();
        if !fresh {
            let _ = std::fs::remove_file(&stamp_path);
            io_at(&vfile, std::fs::write(&vfile, &b.verilog))?;
            let t0 = Instant::now();
            let what = format!(
                "verilator building the model of block `{}` ({})",
                b.name,
                vfile.display()
            );
            run_logged(&what, &mut cmd, &dir.join("verilator.log"), HINT_VERILATOR)?;
            io_at(&stamp_path, std::fs::write(&stamp_path, &stamp))?;
            report.push_str(&format!(
                "{}{}: verilator {:.1} s\n",
                b.module,
                format.suffix(),
                t0.elapsed().as_secs_f64()
            ));
        }

        // The model's objects: the members of the archive Verilator built.
        let members = run_capture(
            "ar t (list the model archive)",
            Command::new("ar").arg("t").arg(&archive),
            &dir.join("ar.log"),
            "install binutils (scripts/setup.sh)",
        )?
        .ok_or_else(|| {
            BuildError::Invalid("`ar` not found: install binutils (scripts/setup.sh)".into())
        })?;
        for m in members.lines().map(str::trim).filter(|m| !m.is_empty()) {
            model_objects.push(mdir.join(m));
        }
        include_dirs.push(mdir.clone());

        let rt = runtime_objects(&mdir.join(format!("{prefix}_classes.mk")))?;
        match runtime.iter().find(|r| r.0 == format) {
            None => runtime.push((format, mdir.clone(), prefix.clone(), rt)),
            Some((_, _, first, list)) if *list != rt => {
                return Err(BuildError::Invalid(format!(
                    "models {first} and {prefix} need different Verilator runtime objects ({list:?} vs {rt:?}); \
                     all models of one trace format must be built with the same flags"
                )))
            }
            Some(_) => {}
        }
    }

    // The runtime, once per trace format (make does nothing when it is up to date); an
    // object both formats need (verilated.o) is linked once.
    let mut rt_paths: Vec<PathBuf> = vec![];
    for (format, rt_dir, rt_prefix, rt_objects) in &runtime {
        let t0 = Instant::now();
        let mut make = Command::new("make");
        make.arg("-C")
            .arg(rt_dir)
            .args(["-f", &format!("{rt_prefix}.mk"), &format!("-j{jobs}")])
            .args(rt_objects)
            .args(make_opts.split_whitespace());
        let log = format!("runtime{}.log", format.suffix());
        run_logged(
            "make (Verilator runtime objects)",
            &mut make,
            &out_dir.join("verilator").join(log),
            HINT_MAKE,
        )?;
        report.push_str(&format!(
            "runtime{}: make {:.1} s\n",
            format.suffix(),
            t0.elapsed().as_secs_f64()
        ));
        for o in rt_objects {
            if !rt_paths
                .iter()
                .any(|p| p.file_name() == Some(std::ffi::OsStr::new(o)))
            {
                rt_paths.push(rt_dir.join(o));
            }
        }
    }

    // Shims + models + runtime in one archive.
    let shim_dir = out_dir.join("shim");
    io_at(&shim_dir, std::fs::create_dir_all(&shim_dir))?;
    let mut cc = cc::Build::new();
    cc.cpp(true)
        .std("c++17")
        .opt_level(2)
        .warnings(false)
        .include(&v.include)
        .include(v.include.join("vltstd"))
        .define("VM_TRACE", "1")
        .define("VM_TRACE_VCD", "1")
        .define("VM_TRACE_FST", "0")
        .define("VM_COVERAGE", "0")
        .define("VM_SC", "0");
    for d in &include_dirs {
        cc.include(d);
    }
    let shims = blocks
        .iter()
        .map(|b| (*b, TraceFormat::Vcd))
        .chain(fst_blocks.iter().map(|b| (*b, TraceFormat::Fst)));
    for (b, format) in shims {
        let path = shim_dir.join(format!("{}{}.cpp", b.module, format.suffix()));
        write_if_changed(&path, &gen::cpp_shim(b, format))?;
        cc.file(&path);
    }
    cc.objects(&model_objects).objects(&rt_paths);
    let t0 = Instant::now();
    cc.try_compile("nic_cosim_verilated").map_err(|e| {
        BuildError::Invalid(format!(
            "compiling the generated shims ({}) or archiving them with the models failed: {e}\n  \
             what to do: the shims come from cosim/build/gen.rs; check the compiler output above",
            shim_dir.display()
        ))
    })?;
    report.push_str(&format!(
        "shims + archive: {:.1} s\n",
        t0.elapsed().as_secs_f64()
    ));
    println!("cargo:rustc-link-lib=dylib=pthread");
    if !fst_blocks.is_empty() {
        // Verilator's FST writer compresses with zlib.
        println!("cargo:rustc-link-lib=dylib=z");
    }
    let report_path = out_dir.join("verilator").join("build-times.txt");
    io_at(&report_path, std::fs::write(&report_path, &report))?;
    Ok(())
}
