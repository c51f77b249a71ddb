//! A rejoin scenario's waves: the protocol's marker signals sit where the wire shows the
//! cells they name.

use nic_cosim::fabric::Delivery;
use nic_driver::control::ControlMessage;
use nic_testbench::control_trace::ControlCell;
use nic_testbench::scenario::Scenario;
use nic_testbench::scenario_run::{run_scenario, RunOptions};
use nic_waves::Waveform;

const CYCLE: u64 = nic_cosim::CYCLE_PS;

/// The cell whose last word crossed the `prefix` port (`m_cell` out of the NIC, `s_cell`
/// into it) at the rising edge just before `t`, read back from the wire signals: each
/// word as sampled just before its edge, while valid and ready were both high.
fn cell_ending_before(w: &Waveform, prefix: &str, t: u64) -> Option<Vec<u64>> {
    let sig = |n: &str| w.find(&format!("uut.{prefix}_{n}")).unwrap();
    let (valid, ready, data, last) = (sig("valid"), sig("ready"), sig("data"), sig("last"));
    let at = |id, time: u64| w.value_at(id, time).and_then(|v| v.as_u64());
    // Rising edges are at n * CYCLE + CYCLE / 2; sample 1 ps before each.
    let mut edge = (t - CYCLE / 2) / CYCLE * CYCLE + CYCLE / 2;
    let taken = |e: u64| at(valid, e - 1) == Some(1) && at(ready, e - 1) == Some(1);
    if edge >= t || !taken(edge) || at(last, edge - 1) != Some(1) {
        return None;
    }
    let mut words = vec![at(data, edge - 1)?];
    while edge > CYCLE {
        edge -= CYCLE;
        if taken(edge) {
            if at(last, edge - 1) == Some(1) {
                break;
            }
            words.push(at(data, edge - 1)?);
        }
    }
    words.reverse();
    Some(words)
}

/// Whether the cell ending at the edge before `t` on `prefix` is a control SEND carrying
/// a BOOTING.
fn booting_on_wire(w: &Waveform, prefix: &str, t: u64) -> bool {
    let Some(words) = cell_ending_before(w, prefix, t) else {
        return false;
    };
    let d = Delivery {
        cycle: t / CYCLE,
        ready: t / CYCLE,
        src: 0,
        dst: 0,
        words: words.into(),
    };
    ControlCell::decode(&d)
        .is_some_and(|c| c.carries(|m| matches!(m, ControlMessage::Booting { .. })))
}

#[test]
fn booting_markers_sit_where_the_wire_shows_the_booting_cell() {
    let text = r#"
name = "waves-markers"
hosts = 3
cycles = 5000
[workload]
rate = 0.0
[[event]]
at = 2000
action = "reboot"
host = 1
down_cycles = 300
"#;
    let s = Scenario::parse(text, "waves-markers").unwrap();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("scenario-waves");
    let _ = std::fs::remove_dir_all(&dir);
    let r = run_scenario(
        &s,
        RunOptions {
            waves_dir: Some(dir.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(r.passed, "{}", r.summary());
    let rebooted = Waveform::load(dir.join("nic1.vcd")).unwrap();
    let sent = rebooted.rising_edges(rebooted.find("markers.booting_sent").unwrap());
    // One BOOTING to each peer at the cold start and again after the reboot at 2300.
    assert!(sent.len() >= 4, "{sent:?}");
    assert!(sent.iter().any(|&t| t > 2300 * CYCLE), "{sent:?}");
    for &t in &sent {
        assert!(
            booting_on_wire(&rebooted, "m_cell", t),
            "booting_sent at {t} ps"
        );
        // A marker one cycle off names no BOOTING cell: the check can fail.
        assert!(
            !booting_on_wire(&rebooted, "m_cell", t + CYCLE),
            "at {t} + 1 cycle"
        );
        assert!(
            !booting_on_wire(&rebooted, "m_cell", t - CYCLE),
            "at {t} - 1 cycle"
        );
    }
    let peer = Waveform::load(dir.join("nic0.vcd")).unwrap();
    let received = peer.rising_edges(peer.find("markers.booting_received").unwrap());
    assert!(received.len() >= 2, "{received:?}");
    for &t in &received {
        assert!(
            booting_on_wire(&peer, "s_cell", t),
            "booting_received at {t} ps"
        );
    }
    // Power: off from the reboot until it powers on again (the trace follows the
    // fabric's clock across the gap).
    let powered = rebooted.find("markers.powered").unwrap();
    let level = |t: u64| rebooted.value_at(powered, t).and_then(|v| v.as_u64());
    assert_eq!(level(1999 * CYCLE), Some(1));
    assert_eq!(level(2100 * CYCLE), Some(0));
    assert_eq!(level(2301 * CYCLE), Some(1));
    // RDMA enabled again after the rejoin.
    let enabled = rebooted.rising_edges(rebooted.find("markers.rdma_enabled").unwrap());
    assert!(enabled.iter().any(|&t| t > 2300 * CYCLE), "{enabled:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
