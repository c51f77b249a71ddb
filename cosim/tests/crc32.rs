//! Crc32 under both backends: lockstep on random stimulus, the Verilator model against the
//! `crc` crate on whole messages, and VCD from both backends.

use nic_cosim::{lockstep, Crc32Inputs, RustHdlCrc32, Stepper, VerilatedCrc32};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

const CRC32: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

fn verilated() -> VerilatedCrc32 {
    VerilatedCrc32::new().unwrap_or_else(|e| panic!("{e}"))
}

/// Random clear, valid, byte count (0..=15, so the 9..=15 "act as 8" and 0 cases too) and
/// data every cycle; valid about 60% of the cycles (idle gaps), clear about 5%.
fn random_stimulus(seed: u64, cycles: usize) -> Vec<Crc32Inputs> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..cycles)
        .map(|_| Crc32Inputs {
            s_clear: rng.gen_bool(0.05),
            s_valid: rng.gen_bool(0.6),
            s_data: rng.gen(),
            s_bytes: rng.gen_range(0..16),
        })
        .collect()
}

#[test]
fn both_backends_agree_for_20000_random_cycles() {
    let mut v = verilated();
    let mut h = RustHdlCrc32::new();
    let n = lockstep(&mut v, &mut h, random_stimulus(0xc05e_0001, 20_000))
        .unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(n, 20_000);
    assert_eq!((v.cycle(), h.cycle()), (20_000, 20_000));
}

#[test]
fn lockstep_reports_the_first_differing_cycle() {
    // Two Verilated models, one of them stepped once beforehand: they differ as soon as
    // the extra word shows in `crc`.
    let mut a = verilated();
    let mut b = verilated();
    a.step(&Crc32Inputs {
        s_clear: true,
        s_valid: true,
        s_data: 0x55,
        s_bytes: 1,
    });
    let idle = Crc32Inputs::default();
    let d = lockstep(&mut a, &mut b, vec![idle; 3]).unwrap_err();
    assert_eq!(d.cycle, 1);
    assert_ne!(d.a_outputs, d.b_outputs);
    assert!(d.to_string().contains("outputs differ at cycle 1"), "{d}");
}

/// Feed `msg` as words (random gaps, random garbage above the byte count, clear with the
/// first word or alone), then one idle step whose pre-edge `crc` is the message's CRC.
fn crc_of<S: Stepper<Inputs = Crc32Inputs, Outputs = nic_cosim::Crc32Outputs>>(
    uut: &mut S,
    msg: &[u8],
    rng: &mut ChaCha8Rng,
) -> u32 {
    let clear_with_first = rng.gen_bool(0.5);
    if !clear_with_first || msg.is_empty() {
        uut.step(&Crc32Inputs {
            s_clear: true,
            ..Default::default()
        });
    }
    for (i, w) in msg.chunks(8).enumerate() {
        while rng.gen_bool(0.3) {
            uut.step(&Crc32Inputs {
                s_data: rng.gen(),
                s_bytes: rng.gen_range(0..16),
                ..Default::default()
            });
        }
        let mut b = [0u8; 8];
        b[..w.len()].copy_from_slice(w);
        let garbage = if w.len() < 8 {
            rng.gen::<u64>() << (8 * w.len())
        } else {
            0
        };
        uut.step(&Crc32Inputs {
            s_clear: clear_with_first && i == 0,
            s_valid: true,
            s_data: u64::from_le_bytes(b) | garbage,
            s_bytes: w.len() as u8,
        });
    }
    // `crc` shows a word two clocks after it is absorbed (the byte-enable un-shift is
    // registered): one idle step lets it through, the next samples it.
    uut.step(&Crc32Inputs::default());
    uut.step(&Crc32Inputs::default()).crc
}

#[test]
fn verilated_crc_matches_the_crc_crate_on_whole_messages() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xc05e_0002);
    let mut v = verilated();
    for _ in 0..500 {
        let len = rng.gen_range(0..300usize);
        let msg: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        assert_eq!(
            crc_of(&mut v, &msg, &mut rng),
            CRC32.checksum(&msg),
            "len {len}"
        );
    }
    assert_eq!(crc_of(&mut v, b"123456789", &mut rng), 0xCBF4_3926);
}

#[test]
fn both_backends_write_vcd() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("nic-cosim")
        .join("crc32_vcd");
    let _ = std::fs::remove_dir_all(&dir);
    let stimulus = random_stimulus(0xc05e_0003, 200);
    let mut v = verilated();
    let mut h = RustHdlCrc32::new();
    let (vp, hp) = (
        dir.join("verilator/crc32.vcd"),
        dir.join("rusthdl/crc32.vcd"),
    );
    v.open_trace(&vp).unwrap();
    h.open_trace(&hp).unwrap();
    lockstep(&mut v, &mut h, stimulus).unwrap_or_else(|d| panic!("{d}"));
    v.close_trace();
    h.close_trace();
    for p in [&vp, &hp] {
        let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(text.contains("s_data"), "{} has no s_data", p.display());
        assert!(
            text.contains("1 ps") || text.contains("1ps"),
            "{}: timescale is not 1 ps",
            p.display()
        );
        // 200 cycles: rising edge of the last at 1_995_000 ps, final fall at 2_000_000.
        assert!(
            text.contains("\n#1995000\n") && text.contains("\n#2000000\n"),
            "{}: time points",
            p.display()
        );
    }
    // Tracing again after a close starts a new file.
    let vp2 = dir.join("verilator/crc32_again.vcd");
    v.open_trace(&vp2).unwrap();
    v.step(&Crc32Inputs::default());
    v.close_trace();
    assert!(std::fs::read_to_string(&vp2).unwrap().contains("#2000000"));
}

#[test]
fn unopenable_trace_path_is_an_error() {
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("nic-cosim")
        .join("not_a_dir");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "").unwrap();
    let mut v = verilated();
    let e = v.open_trace(&file.join("x.vcd")).unwrap_err();
    assert!(e.to_string().contains("not_a_dir"), "{e}");
    let mut h = RustHdlCrc32::new();
    assert!(h.open_trace(&file.join("x.vcd")).is_err());
}
