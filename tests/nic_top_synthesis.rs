//! The NIC top, without and with a 256-entry TPT: Verilator lint through the waiver file
//! and yosys `synth_ice40` (resource counts; `nic synth` adds place and route).

use nic_rtl::export::nic_top_block;
use nic_rtl::NicConfig;
use nic_synth::{lint, synth_block_resources, Device, Port, SynthInput};
use std::path::Path;

#[test]
fn nic_tops_lint_clean_and_synthesise() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nic-top-synthesis");
    let waiver = Path::new(env!("CARGO_MANIFEST_DIR")).join("rtl/lint/verilator_waiver.vlt");
    let mut counts = vec![];
    for config in [NicConfig::default(), NicConfig::with_tpt(256)] {
        let block = nic_top_block(&config);
        let dir = root.join(&block.module);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}.v", block.module));
        std::fs::write(&path, &block.verilog).unwrap();
        let report = lint(
            &[path.clone()],
            &block.module,
            &waiver,
            &dir.join("lint.log"),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", block.module));
        assert!(
            report.warnings.is_empty(),
            "{}: {:#?}",
            block.module,
            report.warnings
        );
        let ports = block
            .ports
            .iter()
            .map(|p| Port {
                name: p.name.clone(),
                input: p.input,
                width: p.width,
            })
            .collect();
        let input = SynthInput::new(&block.module, &path, ports).on(Device::Hx8k);
        let c = synth_block_resources(&input, &dir)
            .unwrap_or_else(|e| panic!("{}: {e}", block.module));
        println!(
            "{}: {} LUTs, {} flip-flops, {} block RAMs, {} carries",
            block.module, c.luts, c.flip_flops, c.block_rams, c.carries
        );
        assert!(c.luts > 0 && c.flip_flops > 0);
        counts.push(c);
    }
    // The TPT's checks and exception queue exist only when it is configured. (Its table's
    // 9 RAM4K are still synthesised in the no-TPT top, whose idle Tpt yosys cannot prove
    // unwritten: a known gap, see README "Measured".)
    assert!(
        counts[1].luts > counts[0].luts && counts[1].flip_flops > counts[0].flip_flops,
        "the TPT configuration adds the TPT's logic: {counts:?}"
    );
}
