//! Three simulators agree: every co-simulated block and the NIC tops replay a recorded
//! stimulus in RustHDL stepping, Verilator and Icarus Verilog with identical outputs every
//! cycle; a planted divergence is reported at its cycle and output, with both waveforms.

use nic_cosim::blocks::Crc32;
use nic_cosim::stimulus::read_stimulus;
use nic_cosim::Crc32Inputs;
use nic_testbench::three_simulators::{
    agree_blocks, is_nic_top, record_and_replay, record_stimulus, replay_three, Agreement,
    PlantedFlip, Simulator, ThreeSimError, ThreeSimOptions, Windows,
};
use std::time::Instant;

const SEED: u64 = 17;

/// Replays the blocks `select` accepts with `windows`; fails listing every block that
/// disagreed or could not run.
fn all_agree(select: &dyn Fn(&str) -> bool, windows: Windows) -> Vec<Agreement> {
    let start = Instant::now();
    let results = agree_blocks(select, windows, SEED, &mut |name, r| match r {
        Ok(a) => eprintln!(
            "{name}: {} cycles in RustHDL and Verilator, {} in Icarus: identical",
            a.cycles, a.icarus_cycles
        ),
        Err(e) => eprintln!("{name}: {e}"),
    });
    eprintln!(
        "{} blocks in {:.1} s",
        results.len(),
        start.elapsed().as_secs_f64()
    );
    let failed: Vec<String> = results
        .iter()
        .filter_map(|(name, r)| r.as_ref().err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    results.into_iter().filter_map(|(_, r)| r.ok()).collect()
}

/// Every exported block (`nic verilog`'s, the TPT of the 256-entry configuration) and
/// both NIC tops, short windows: the default suite's run.
#[test]
fn every_block_and_both_tops_agree_in_three_simulators() {
    let agreed = all_agree(&|name| name != "nic_top_qp64", Windows::SHORT);
    let names: Vec<&str> = agreed.iter().map(|a| a.block.as_str()).collect();
    for expected in [
        "crc32",
        "crc32_prepad",
        "cell_segmenter",
        "cell_position",
        "cell_checks",
        "cell_buffer",
        "cell_outcome_sender",
        "cell_outcome_slice",
        "cell_reassembler",
        "cell_datapath",
        "csr",
        "qp_ram",
        "event_counter",
        "requester_qp_table",
        "requester_claim_stage",
        "requester_wqe_latch",
        "requester_bind_writer",
        "requester_payload_buffer",
        "requester_payload_ledger",
        "requester_send_slot",
        "requester_tx_read_port",
        "requester_transmit_machine",
        "requester_ack_machine",
        "requester_ack_retire",
        "requester_event_evaluator",
        "requester_sq_csr_access",
        "requester_sq_op_grant",
        "requester_sq_op_decision",
        "send_queue_engine",
        "nack_generator",
        "responder_qp_state",
        "responder_qp_flags",
        "responder_writer",
        "responder_answer_router",
        "responder_psn_window",
        "responder_rqe_fetch",
        "responder_lookup_capture",
        "responder_act_stage",
        "responder_tpt_client",
        "responder_header_capture",
        "responder_payload_take",
        "responder_message_sequencer",
        "responder_message_context",
        "responder_receive_counters",
        "receive_queue_engine",
        "responder_slot_rams",
        "responder_burst_size",
        "response_generator",
        "ack_event_queue",
        "tx_arbiter",
        "completion_queue",
        "dma_read_arbiter",
        "dma_write_arbiter",
        "nic_top",
        "tpt_table",
        "tpt_checks",
        "tpt_exception_queue",
        "tpt",
        "nic_top_tpt256",
    ] {
        assert!(names.contains(&expected), "{expected} was not replayed");
    }
    for a in &agreed {
        let (cycles, icarus) = Windows::SHORT.of(&a.block);
        assert_eq!(
            (a.cycles, a.icarus_cycles),
            (cycles as u64, icarus as u64),
            "{}",
            a.block
        );
    }
}

/// Long windows on every block and all three NIC tops.
#[test]
#[ignore = "long: 2 to 7 minutes (nic agree --long runs the same)"]
fn every_block_and_every_top_agree_over_long_windows() {
    let agreed = all_agree(&|_| true, Windows::LONG);
    assert!(agreed.iter().any(|a| a.block == "nic_top_qp64"));
}

/// The stimulus of seed 1 (also 2 and 3; not 17) stopped Icarus at cycle 257 of
/// nic_top_tpt256 while the top gave the TPT ports defaults that the TPT's outputs
/// overrode (docs/nic-blocks.md, "Three simulators").
#[test]
fn nic_top_tpt256_runs_in_icarus_past_the_tpt_reset_sweep() {
    let mut options = ThreeSimOptions::new(1_000, 1_000);
    options.work_dir = options.work_dir.join("icarus-limit");
    let result = std::thread::spawn(move || {
        record_and_replay::<nic_cosim::blocks::NicTopTpt256>(&options, 1)
    })
    .join()
    .expect("no panic");
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// The recorded stimulus of a block and of a NIC top is the same file every time.
#[test]
fn a_recorded_stimulus_depends_on_its_seed_only() {
    let options = ThreeSimOptions::new(500, 0);
    let dir = options.work_dir.join("determinism");
    for block in ["crc32", "nic_top"] {
        let record = |n: u32| {
            let path = dir.join(format!("{block}-{n}.hex"));
            let result = match block {
                "crc32" => record_stimulus::<Crc32>(&path, 500, SEED),
                _ => record_stimulus::<nic_cosim::blocks::NicTop>(&path, 500, SEED),
            };
            result.unwrap_or_else(|e| panic!("{e}"));
            std::fs::read_to_string(&path).unwrap()
        };
        let first = record(1);
        assert_eq!(first, record(2), "{block}");
        assert_eq!(first.lines().count(), 2 + 500, "{block}");
        assert!(is_nic_top(block) == (block == "nic_top"));
    }
}

/// A crc32 stimulus and a cycle in it where `s_data` feeds `crc_next` (valid, not
/// clearing, all 8 bytes).
fn crc32_stimulus_and_cycle(options: &ThreeSimOptions) -> u64 {
    let path = options.stimulus_path("crc32");
    record_stimulus::<Crc32>(&path, options.cycles, SEED).unwrap_or_else(|e| panic!("{e}"));
    let inputs: Vec<Crc32Inputs> = read_stimulus(&path).unwrap();
    inputs
        .iter()
        .enumerate()
        .skip(20)
        .find(|(_, i)| i.s_valid && !i.s_clear && i.s_bytes == 8)
        .map(|(c, _)| c as u64)
        .expect("the random stimulus has a full valid word")
}

/// Plants a flip of `s_data` bit 5 for `simulator` and checks the report.
fn planted_flip_is_reported(simulator: Simulator) {
    let mut options = ThreeSimOptions::new(400, 400);
    options.work_dir = options.work_dir.join(format!("planted-{simulator}"));
    options.waves_dir = options.waves_dir.join(format!("planted-{simulator}"));
    let cycle = crc32_stimulus_and_cycle(&options);
    options.plant = Some(PlantedFlip {
        simulator,
        cycle,
        port: "s_data".into(),
        bit: 5,
    });
    let stimulus = options.stimulus_path("crc32");
    let waves = options.waves_dir.join("crc32");
    let _ = std::fs::remove_dir_all(&waves);
    let d = match replay_three::<Crc32>(&stimulus, &options) {
        Err(ThreeSimError::Disagree(d)) => d,
        Err(e) => panic!("{e}"),
        Ok(a) => panic!("the planted flip went unseen: {a:?}"),
    };
    assert_eq!(d.cycle, cycle, "{d}");
    assert_eq!(d.signal, "crc_next", "{d}");
    assert_eq!(d.simulators, [Simulator::Verilator, simulator]);
    assert_ne!(d.values[0], d.values[1]);
    let text = d.to_string();
    assert!(
        text.contains(&format!(
            "verilator and {simulator} differ first at cycle {cycle} in output `crc_next`"
        )),
        "{text}"
    );
    for (path, name) in d.waves.iter().zip(["verilator", simulator.name()]) {
        assert_eq!(path, &waves.join(format!("{name}.vcd")));
        let vcd = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        assert!(vcd.contains("crc_next"), "{path:?}");
    }
    // `nic waves diff` of the two waveforms finds the same cycle (10 ns a cycle).
    assert!(
        d.waves_diff.contains(&format!(
            "first difference at {} ns in `crc_next`",
            cycle * 10
        )),
        "{}",
        d.waves_diff
    );
}

#[test]
fn a_flipped_input_in_icarus_is_reported_at_its_cycle_and_output() {
    planted_flip_is_reported(Simulator::Icarus);
}

#[test]
fn a_flipped_input_in_rusthdl_is_reported_at_its_cycle_and_output() {
    planted_flip_is_reported(Simulator::RustHdl);
}

#[test]
fn a_flip_of_a_port_the_block_lacks_is_an_error() {
    let mut options = ThreeSimOptions::new(50, 50);
    options.work_dir = options.work_dir.join("planted-bad-port");
    let path = options.stimulus_path("crc32");
    record_stimulus::<Crc32>(&path, 50, SEED).unwrap_or_else(|e| panic!("{e}"));
    options.plant = Some(PlantedFlip {
        simulator: Simulator::Verilator,
        cycle: 3,
        port: "no_such_port".into(),
        bit: 0,
    });
    let e = replay_three::<Crc32>(&path, &options).unwrap_err();
    assert_eq!(e.to_string(), "no input port `no_such_port`");
}
