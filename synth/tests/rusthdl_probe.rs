//! What RustHDL 0.46's generated Verilog looks like to verilator -Wall and to the iCE40
//! flow, on a probe block built from the parts our blocks use: a DFF counter, a
//! combinational submodule, and RustHDL's SynchronousFIFO (with outputs left unread).
//!
//! Checks that `rtl/lint/verilator_waiver.vlt` silences exactly what the generator
//! emits (probe lints clean) while a warning of our own logic (an unused `clock` input
//! of a combinational submodule) is still reported, and synthesises the probe.

use std::path::{Path, PathBuf};
use std::time::Instant;

use nic_synth::{lint, render_table, synth_block, Device, Port, SynthInput};
use rust_hdl::prelude::*;

/// Combinational comparator, no clock.
#[derive(LogicBlock, Default)]
struct Compare {
    pub a: Signal<In, Bits<8>>,
    pub b: Signal<In, Bits<8>>,
    pub eq: Signal<Out, Bit>,
}

impl Logic for Compare {
    #[hdl_gen]
    fn update(&mut self) {
        self.eq.next = self.a.val() == self.b.val();
    }
}

/// Combinational pass-through with a clock input it never uses: our mistake, not RustHDL's.
#[derive(LogicBlock, Default)]
struct ClockedPass {
    pub clock: Signal<In, Clock>,
    pub a: Signal<In, Bit>,
    pub y: Signal<Out, Bit>,
}

impl Logic for ClockedPass {
    #[hdl_gen]
    fn update(&mut self) {
        self.y.next = self.a.val();
    }
}

#[derive(LogicBlock, Default)]
struct Probe {
    pub clock: Signal<In, Clock>,
    pub enable: Signal<In, Bit>,
    pub limit: Signal<In, Bits<8>>,
    pub hit: Signal<Out, Bit>,
    pub write: Signal<In, Bit>,
    pub data_in: Signal<In, Bits<8>>,
    pub read: Signal<In, Bit>,
    pub data_out: Signal<Out, Bits<8>>,
    pub empty: Signal<Out, Bit>,
    pub full: Signal<Out, Bit>,
    count: DFF<Bits<8>>,
    cmp: Compare,
    fifo: SynchronousFIFO<Bits<8>, 4, 5, 1>,
}

impl Logic for Probe {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, count);
        clock!(self, clock, fifo);
        if self.enable.val() {
            self.count.d.next = self.count.q.val() + 1;
        }
        self.cmp.a.next = self.count.q.val();
        self.cmp.b.next = self.limit.val();
        self.hit.next = self.cmp.eq.val();
        self.fifo.write.next = self.write.val();
        self.fifo.data_in.next = self.data_in.val();
        self.fifo.read.next = self.read.val();
        self.data_out.next = self.fifo.data_out.val();
        self.empty.next = self.fifo.empty.val();
        self.full.next = self.fifo.full.val();
    }
}

/// The probe with its comparator result passed through a [`ClockedPass`].
#[derive(LogicBlock, Default)]
struct ProbeWithOwnWarning {
    pub clock: Signal<In, Clock>,
    pub a: Signal<In, Bit>,
    pub y: Signal<Out, Bit>,
    pass: ClockedPass,
}

impl Logic for ProbeWithOwnWarning {
    #[hdl_gen]
    fn update(&mut self) {
        self.pass.clock.next = self.clock.val();
        self.pass.a.next = self.a.val();
        self.y.next = self.pass.y.val();
    }
}

fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("nic-synth/rusthdl_probe")
}

fn waiver() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl/lint/verilator_waiver.vlt")
}

/// Generate `block`'s Verilog with RustHDL's `top` renamed to `module`, into `<module>.v`.
fn export<U: Block>(block: &mut U, module: &str) -> PathBuf {
    block.connect_all();
    let verilog = generate_verilog(block).replace("module top(", &format!("module {module}("));
    let dir = out_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{module}.v"));
    std::fs::write(&path, verilog).unwrap();
    path
}

#[test]
fn waiver_silences_rusthdl_generator_warnings_only() {
    let v = export(&mut Probe::default(), "nic_probe");
    let report = lint(
        &[v],
        "nic_probe",
        &waiver(),
        &out_dir().join("nic_probe.lint.log"),
    )
    .unwrap();
    assert!(report.is_clean(), "{report}");

    let v = export(&mut ProbeWithOwnWarning::default(), "nic_probe_own");
    let report = lint(
        &[v],
        "nic_probe_own",
        &waiver(),
        &out_dir().join("nic_probe_own.lint.log"),
    )
    .unwrap();
    assert_eq!(report.warnings.len(), 1, "{report}");
    let w = &report.warnings[0];
    assert_eq!(w.rule, "UNUSEDSIGNAL");
    assert_eq!(w.message, "Signal is not used: 'clock'");
    assert!(w.file.ends_with("nic_probe_own.v") && w.line > 0, "{w}");
}

#[test]
fn without_waiver_the_generator_warnings_appear() {
    let v = export(&mut Probe::default(), "nic_probe_nowaiver");
    let empty = out_dir().join("empty.vlt");
    std::fs::write(&empty, "`verilator_config\n").unwrap();
    let report = lint(
        &[v],
        "nic_probe_nowaiver",
        &empty,
        &out_dir().join("nic_probe_nowaiver.lint.log"),
    )
    .unwrap();
    let mut rules: Vec<&str> = report.warnings.iter().map(|w| w.rule.as_str()).collect();
    rules.sort();
    rules.dedup();
    assert_eq!(rules, ["DECLFILENAME", "UNUSEDSIGNAL", "WIDTH"], "{report}");
    // Every unused signal is a RustHDL stub `<instance>$<port>`.
    for w in report.warnings.iter().filter(|w| w.rule == "UNUSEDSIGNAL") {
        assert!(w.message.contains('$'), "{w}");
    }
}

#[test]
fn probe_synthesises_on_ice40() {
    let verilog = export(&mut Probe::default(), "nic_probe_synth");
    let ports = vec![
        Port::input("clock", 1),
        Port::input("enable", 1),
        Port::input("limit", 8),
        Port::output("hit", 1),
        Port::input("write", 1),
        Port::input("data_in", 8),
        Port::input("read", 1),
        Port::output("data_out", 8),
        Port::output("empty", 1),
        Port::output("full", 1),
    ];
    let input = SynthInput::new("nic_probe_synth", verilog, ports).on(Device::Hx8k);
    let start = Instant::now();
    let report = synth_block(&input, &out_dir()).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{}synth_ice40 took {:.1} s",
        render_table(std::slice::from_ref(&report)),
        start.elapsed().as_secs_f64()
    );
    assert!(report.luts > 0 && report.flip_flops > 0 && report.carries > 0);
    assert_eq!(
        report.block_rams, 1,
        "the 16-deep FIFO maps to one SB_RAM40_4K"
    );
    assert!(report.fmax_mhz > 0.0);
}
