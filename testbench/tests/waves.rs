//! Waveforms from both backends: written under `waves/cell_datapath/`, read back with the
//! `vcd` crate, asserted on, and compared with each other cycle by cycle.

use nic_cosim::{RustHdlCellDatapath, Stepper, VerilatedCellDatapath};
use nic_testbench::datapath::{run_datapath, DatapathOptions};
use nic_waves::{compare, wave_path, Waveform};

fn options() -> DatapathOptions {
    DatapathOptions {
        seed: 3,
        messages: 6,
        max_length: 600,
        idle: 0.2,
        backpressure: 0.2,
        ..Default::default()
    }
}

fn traced<S>(
    mut sim: S,
    test: &str,
) -> (std::path::PathBuf, nic_testbench::datapath::DatapathReport)
where
    S: Stepper<Inputs = nic_cosim::CellDatapathInputs, Outputs = nic_cosim::CellDatapathOutputs>,
{
    let path = wave_path("cell_datapath", test);
    sim.open_trace(&path).expect("open trace");
    let report = run_datapath(&mut sim, &options());
    sim.close_trace();
    assert!(report.passed(), "{:#?}", report.violations);
    (path, report)
}

#[test]
fn both_backends_write_vcds_that_agree_and_show_every_cell() {
    let (vpath, report) = traced(
        VerilatedCellDatapath::new().unwrap_or_else(|e| panic!("{e}")),
        "waves_test-verilator",
    );
    let (rpath, _) = traced(RustHdlCellDatapath::new(), "waves_test-rusthdl");
    let v = Waveform::load(&vpath).expect("Verilator VCD loads");
    let r = Waveform::load(&rpath).expect("RustHDL VCD loads");

    // One rising clock edge per simulated cycle (the reset cycle included).
    let clock = v.find("clock").unwrap();
    assert_eq!(v.rising_edges(clock).len() as u64, report.cycles + 1);

    // A cell crosses the link when link_last is high in a clock with valid and ready.
    let link_last = v.find("link_last").unwrap();
    let link_valid = v.find("link_valid").unwrap();
    let link_ready = v.find("link_ready").unwrap();
    let mut cells = 0;
    for t in v.rising_edges(clock) {
        let at = |id| v.value_before(id, t).and_then(|x| x.as_u64()).unwrap_or(0);
        if at(link_last) == 1 && at(link_valid) == 1 && at(link_ready) == 1 {
            cells += 1;
        }
    }
    assert_eq!(cells, report.cells_on_link, "cells seen in the waveform");
    assert!(v.transitions(link_last).len() >= 2 * report.cells_on_link - 1);

    // The two simulators' waveforms agree on every port, every cycle.
    let ports = [
        "s_msg_ready",
        "s_payload_ready",
        "link_data",
        "link_valid",
        "link_last",
        "m_valid",
        "m_last",
        "m_data",
        "m_bytes",
        "m_status",
        "m_src_qp",
        "m_psn",
        "m_offset",
        "stat_cells_ok",
    ];
    compare(&v, &r, &ports, "clock").unwrap_or_else(|m| panic!("waveforms differ: {m}"));
}
