//! Every exported block: generated types match the exported ports, and both backends agree
//! on random inputs. The self-test block checks ports of 1, 7, 33, 65, 100 and 128 bits.

use nic_cosim::{
    for_each_block, lockstep, lockstep_random, verilator_version, BlockVisitor, CosimBlock,
    CosimSelftestInputs, PortInfo, PortStruct, RustHdlBlock, RustHdlCosimSelftest, Stepper,
    VerilatedBlock, VerilatedCosimSelftest, BLOCKS, BLOCK_INFO,
};
use nic_rtl::export::cosim_blocks;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[test]
fn registry_matches_exported_blocks() {
    let exported = cosim_blocks();
    let names: Vec<&str> = exported.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(BLOCKS, names.as_slice());
    for (info, b) in BLOCK_INFO.iter().zip(&exported) {
        assert_eq!(
            (info.name, info.module.to_string(), info.rust_type),
            (b.name.as_str(), b.module.clone(), b.rust_type)
        );
        let ports = |input: bool| -> Vec<PortInfo> {
            b.ports
                .iter()
                .filter(|p| p.input == input && p.name != "clock")
                .map(|p| PortInfo {
                    name: Box::leak(p.name.clone().into_boxed_str()),
                    width: p.width,
                })
                .collect()
        };
        assert_eq!(info.inputs, ports(true).as_slice(), "{}", b.name);
        assert_eq!(info.outputs, ports(false).as_slice(), "{}", b.name);
    }
    let v = verilator_version().expect("built with Verilator (run scripts/setup.sh)");
    assert!(v.starts_with("Verilator "), "{v}");
}

struct RandomLockstep {
    cycles: u64,
    done: Vec<&'static str>,
}

impl BlockVisitor for RandomLockstep {
    fn visit<B: RustHdlBlock + VerilatedBlock>(&mut self) {
        let mut rng = ChaCha8Rng::seed_from_u64(0xb10c_0001);
        let n = lockstep_random::<B, _>(&mut rng, self.cycles).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(n, self.cycles);
        self.done.push(B::NAME);
    }
}

/// Fully random inputs, protocol or not: the two backends must still agree every cycle.
#[test]
fn every_block_agrees_on_random_inputs() {
    // The RustHDL NIC tops are large values: a stack of their own.
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(|| {
            let mut v = RandomLockstep {
                cycles: 3_000,
                done: vec![],
            };
            for_each_block(&mut v);
            assert_eq!(v.done, BLOCKS);
        })
        .unwrap()
        .join()
        .unwrap();
}

fn u128_of(w: [u64; 2]) -> u128 {
    w[0] as u128 | (w[1] as u128) << 64
}

#[test]
fn wide_and_odd_ports_cross_both_backends() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xb10c_0002);
    let inputs: Vec<CosimSelftestInputs> = (0..2_000)
        .map(|_| CosimSelftestInputs::random(&mut rng))
        .collect();
    // Through each backend, against a reference in u128.
    let mut v = VerilatedCosimSelftest::new().unwrap_or_else(|e| panic!("{e}"));
    let mut h = RustHdlCosimSelftest::new();
    let mut prev = CosimSelftestInputs::default();
    for i in &inputs {
        let (ov, oh) = (v.step(i), h.step(i));
        assert_eq!(ov, oh, "inputs {i:?}");
        assert_eq!(ov.m_flag, !i.s_flag);
        assert_eq!(ov.m_one, !i.s_one);
        assert_eq!(ov.m_odd, (i.s_odd + 1) & 0x7f);
        assert_eq!(ov.m_mid, prev.s_mid);
        assert_eq!(ov.m_wide, i.s_wide);
        assert_eq!(ov.m_wide_reg, prev.s_wide);
        // The registers start at zero.
        let full = if v.cycle() == 1 {
            0
        } else {
            !u128_of(prev.s_full)
        };
        assert_eq!(u128_of(ov.m_full), full);
        let slice = u128_of(i.s_full) >> 30 & ((1u128 << 65) - 1);
        assert_eq!(u128_of(ov.m_slice), slice);
        prev = *i;
    }
    // Bits above a port's width are ignored by both backends.
    let dirty = CosimSelftestInputs {
        s_odd: 0xff,
        s_mid: u64::MAX,
        s_wide: [u64::MAX; 2],
        ..Default::default()
    };
    let (ov, oh) = (v.step(&dirty), h.step(&dirty));
    assert_eq!(ov, oh);
    assert_eq!(ov.m_odd, 0, "0x7f + 1 wraps in 7 bits");
    assert_eq!(ov.m_wide, [u64::MAX, (1 << 36) - 1]);
    assert_eq!(dirty.masked().s_wide, [u64::MAX, (1 << 36) - 1]);
    let (ov, oh) = (v.step(&dirty), h.step(&dirty));
    assert_eq!(ov, oh);
    assert_eq!(
        (ov.m_mid, ov.m_wide_reg),
        ((1 << 33) - 1, [u64::MAX, (1 << 36) - 1])
    );
}

#[test]
fn port_lists_and_debug_output() {
    assert_eq!(
        <nic_cosim::blocks::CosimSelftest as CosimBlock>::Inputs::PORTS
            .iter()
            .map(|p| p.width)
            .collect::<Vec<_>>(),
        [1, 1, 7, 33, 100, 128]
    );
    let i = CosimSelftestInputs {
        s_odd: 0x2a,
        s_wide: [1, 0xf],
        ..Default::default()
    };
    let text = format!("{i:?}");
    assert!(
        text.contains("s_odd: 0x2a") && text.contains("s_wide: 0xf_0000000000000001"),
        "{text}"
    );
    let mut a = VerilatedCosimSelftest::new().unwrap();
    let mut b = RustHdlCosimSelftest::new();
    assert_eq!(lockstep(&mut a, &mut b, [i, i]), Ok(2));
}
