//! Cycles per second of the Crc32 under both backends, with and without VCD. Prints only
//! (run with `--nocapture`); no timing assertions. In release: 1M Verilator cycles, 100k
//! RustHDL cycles; a tenth of that in debug builds.

use nic_cosim::{BlockVisitor, Crc32Inputs, PortStruct, RustHdlCrc32, Stepper, VerilatedCrc32};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn run<S: Stepper<Inputs = Crc32Inputs, Outputs = nic_cosim::Crc32Outputs>>(
    uut: &mut S,
    stimulus: &[Crc32Inputs],
    cycles: usize,
) -> f64 {
    let t0 = Instant::now();
    let mut acc = 0u32;
    for i in stimulus.iter().cycle().take(cycles) {
        acc ^= uut.step(i).crc;
    }
    std::hint::black_box(acc);
    cycles as f64 / t0.elapsed().as_secs_f64()
}

fn measure<S: Stepper<Inputs = Crc32Inputs, Outputs = nic_cosim::Crc32Outputs>>(
    name: &str,
    uut: &mut S,
    stimulus: &[Crc32Inputs],
    cycles: usize,
    vcd: Option<&Path>,
) -> String {
    if let Some(path) = vcd {
        uut.open_trace(path).unwrap();
    }
    let rate = run(uut, stimulus, cycles);
    uut.close_trace();
    let size = vcd.map(|p| {
        let size = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let _ = std::fs::remove_file(p);
        format!("  (VCD {:.1} MB)", size as f64 / 1e6)
    });
    format!(
        "{name:<16} {cycles:>9} cycles {rate:>12.0} cycles/s{}",
        size.unwrap_or_default()
    )
}

#[test]
fn crc32_cycles_per_second() {
    let scale = if cfg!(debug_assertions) { 10 } else { 1 };
    let mut rng = ChaCha8Rng::seed_from_u64(0xbe9c_0001);
    let stimulus: Vec<Crc32Inputs> = (0..4096).map(|_| Crc32Inputs::random(&mut rng)).collect();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("nic-cosim")
        .join("throughput");
    let mut v = VerilatedCrc32::new().unwrap_or_else(|e| panic!("{e}"));
    let mut h = RustHdlCrc32::new();
    let lines = [
        measure("Verilator", &mut v, &stimulus, 1_000_000 / scale, None),
        measure("RustHDL", &mut h, &stimulus, 100_000 / scale, None),
        measure(
            "Verilator + VCD",
            &mut v,
            &stimulus,
            200_000 / scale,
            Some(&dir.join("verilator.vcd")),
        ),
        measure(
            "RustHDL + VCD",
            &mut h,
            &stimulus,
            20_000 / scale,
            Some(&dir.join("rusthdl.vcd")),
        ),
    ];
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "Crc32 throughput ({profile} build, {}):",
        nic_cosim::verilator_version().unwrap_or("no Verilator")
    );
    for l in lines {
        println!("  {l}");
    }
}

struct Throughput {
    scale: usize,
    lines: Vec<String>,
}

impl nic_cosim::BlockVisitor for Throughput {
    fn visit<B: nic_cosim::RustHdlBlock + nic_cosim::VerilatedBlock>(&mut self) {
        use nic_cosim::{RustHdlModel, VerilatorModel};
        let mut rng = ChaCha8Rng::seed_from_u64(0xbe9c_0002);
        let stimulus: Vec<B::Inputs> = (0..4096).map(|_| B::Inputs::random(&mut rng)).collect();
        let rate = |uut: &mut dyn Stepper<Inputs = B::Inputs, Outputs = B::Outputs>,
                    cycles: usize| {
            let t0 = Instant::now();
            for i in stimulus.iter().cycle().take(cycles) {
                std::hint::black_box(uut.step(i));
            }
            cycles as f64 / t0.elapsed().as_secs_f64()
        };
        let mut v = VerilatorModel::<B>::new().unwrap_or_else(|e| panic!("{e}"));
        let mut h = RustHdlModel::<B>::new();
        let (vn, hn) = (200_000 / self.scale, 20_000 / self.scale);
        self.lines.push(format!(
            "{:<16} Verilator {:>10.0} cycles/s   RustHDL {:>8.0} cycles/s",
            B::NAME,
            rate(&mut v, vn),
            rate(&mut h, hn)
        ));
    }
}

/// Every block (and the trivial self-test block, whose rate is the harness's own cost) on
/// uniformly random inputs.
#[test]
fn every_block_cycles_per_second() {
    let mut t = Throughput {
        scale: if cfg!(debug_assertions) { 10 } else { 1 },
        lines: vec![],
    };
    nic_cosim::for_each_block(&mut t);
    t.visit::<nic_cosim::blocks::CosimSelftest>();
    println!("Throughput on random inputs:");
    for l in t.lines {
        println!("  {l}");
    }
}
