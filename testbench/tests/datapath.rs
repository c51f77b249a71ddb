//! The cell datapath co-simulated: scoreboards on Verilator, and Verilator in lockstep with
//! RustHDL stepping under the same reactive traffic.

use nic_cosim::{RustHdlCellDatapath, Stepper, VerilatedCellDatapath};
use nic_testbench::datapath::{run_datapath, DatapathOptions};
use nic_testbench::paired::Paired;

fn verilated() -> VerilatedCellDatapath {
    VerilatedCellDatapath::new().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn clean_traffic_is_delivered_intact_with_gaps_and_backpressure() {
    for (seed, idle, backpressure, cell_payload_messages) in [
        (1, 0.0, 0.0, 300),
        (2, 0.3, 0.0, 300),
        (3, 0.0, 0.4, 300),
        (4, 0.3, 0.4, 300),
    ] {
        let options = DatapathOptions {
            seed,
            idle,
            backpressure,
            messages: cell_payload_messages,
            max_length: 900,
            ..Default::default()
        };
        let report = run_datapath(&mut verilated(), &options);
        assert!(report.passed(), "seed {seed}: {:#?}", report.violations);
        assert_eq!(report.messages_delivered, options.messages);
        assert_eq!(
            report.outcomes.get("Ok").copied().unwrap_or(0),
            report.cells_on_link
        );
    }
}

#[test]
fn link_errors_are_caught_and_match_the_model() {
    let options = DatapathOptions {
        seed: 11,
        messages: 400,
        link_error_rate: 0.002,
        idle: 0.1,
        backpressure: 0.2,
        ..Default::default()
    };
    let report = run_datapath(&mut verilated(), &options);
    assert!(report.passed(), "{:#?}", report.violations);
    let failed: usize = report
        .outcomes
        .iter()
        .filter(|(k, _)| *k != "Ok")
        .map(|(_, v)| v)
        .sum();
    assert!(
        failed > 0,
        "no link error was detected: {:?}",
        report.outcomes
    );
}

/// At least 10,000 cycles of mixed traffic (idle gaps, back-pressure, link errors): the
/// Verilated model and RustHDL stepping give identical outputs every cycle.
#[test]
fn verilator_and_rusthdl_agree_every_cycle() {
    let options = DatapathOptions {
        seed: 21,
        messages: 150,
        max_length: 800,
        idle: 0.2,
        backpressure: 0.3,
        link_error_rate: 0.001,
        ..Default::default()
    };
    let mut paired = Paired::new(RustHdlCellDatapath::new(), verilated());
    let report = run_datapath(&mut paired, &options);
    assert!(
        paired.divergence.is_none(),
        "backends diverged: {:#?}",
        paired.divergence
    );
    assert!(
        paired.cycles_compared >= 10_000,
        "only {} cycles compared",
        paired.cycles_compared
    );
    assert!(report.passed(), "{:#?}", report.violations);
    println!(
        "lockstep: {} cycles identical, {:?}",
        paired.cycles_compared, report.outcomes
    );
}

/// The scoreboard must fail a wrong design: feed it a segmenter output with a corrupted
/// link but tell it the link was clean.
#[test]
fn scoreboard_catches_a_corrupted_link() {
    struct Corrupting(VerilatedCellDatapath);
    impl Stepper for Corrupting {
        type Inputs = nic_cosim::CellDatapathInputs;
        type Outputs = nic_cosim::CellDatapathOutputs;
        fn step(&mut self, inputs: &Self::Inputs) -> Self::Outputs {
            let mut i = *inputs;
            if (500..520).contains(&self.0.cycle()) {
                i.link_error_mask = 1 << 40;
            }
            self.0.step(&i)
        }
        fn cycle(&self) -> u64 {
            self.0.cycle()
        }
        fn open_trace(&mut self, p: &std::path::Path) -> Result<(), nic_cosim::CosimError> {
            self.0.open_trace(p)
        }
        fn close_trace(&mut self) {
            self.0.close_trace()
        }
    }
    let options = DatapathOptions {
        seed: 5,
        messages: 30,
        idle: 0.0,
        backpressure: 0.0,
        ..Default::default()
    };
    let report = run_datapath(&mut Corrupting(verilated()), &options);
    assert!(!report.passed(), "a corrupted link went unnoticed");
    assert!(
        report
            .violations
            .iter()
            .any(|v| v.contains("differs from the golden encoder")),
        "{:#?}",
        report.violations
    );
}

/// The segmenter keeps the link busy: long messages stream at the format's limit, the only
/// idle link clocks being two per message (descriptor, packet CRC un-shift). A count of
/// clocks, not a timing measurement.
#[test]
fn long_messages_stream_at_the_format_limit() {
    let options = DatapathOptions {
        seed: 9,
        messages: 6,
        fixed_length: Some(16 * 1024),
        idle: 0.0,
        backpressure: 0.0,
        ..Default::default()
    };
    let report = run_datapath(&mut verilated(), &options);
    assert!(report.passed(), "{:#?}", report.violations);
    assert!(
        report.link_utilisation() >= 0.99,
        "link busy {:.4} of its clocks",
        report.link_utilisation()
    );
    let idle = report.link_busy_cycles - report.link_words;
    assert!(
        idle <= 2 * options.messages as u64,
        "{idle} idle link clocks for {} messages",
        options.messages
    );
}
