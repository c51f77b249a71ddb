//! The multi-host co-simulation: the shipped scenarios pass their scoreboards under the
//! rejoin protocol, the heartbeat baseline lands stale writes that the scoreboard counts
//! (and fails on when asked to), 64 hosts boot in one co-simulation, and VCDs come out one
//! per NIC.

use nic_testbench::scenario::{ProtocolKind, Scenario, TptKind};
use nic_testbench::scenario_run::{run_scenario, PlantedBug, Report, RunOptions};
use std::path::{Path, PathBuf};

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

fn load(name: &str) -> Scenario {
    Scenario::load(&scenarios_dir().join(format!("{name}.toml"))).expect("a valid scenario")
}

fn run(s: &Scenario, opts: RunOptions) -> Report {
    run_scenario(s, opts).expect("the scenario runs (Verilator: scripts/setup.sh)")
}

fn assert_passed(r: &Report) {
    assert!(
        r.passed,
        "{}: {} violations:\n{}",
        r.scenario,
        r.violation_count,
        r.summary()
    );
}

/// Every live host's last boot finished rejoining.
fn assert_all_rejoined(r: &Report) {
    let mut last = std::collections::BTreeMap::new();
    for x in &r.rejoins {
        last.insert(x.host, x);
    }
    for (h, x) in last {
        assert!(
            x.latency.is_some() || x.interrupted,
            "{}: host {h} epoch {} never became usable by all peers",
            r.scenario,
            x.epoch
        );
    }
}

/// The `.toml` files of a directory (none if it does not exist), by name.
fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Every schedule `nic soak` shrank and kept (docs/scenarios.md, "Soak") passes.
#[test]
fn every_soak_regression_passes() {
    for path in scenario_files(&scenarios_dir().join("regressions")) {
        let s = Scenario::load(&path).expect("a valid scenario");
        let r = run(&s, RunOptions::default());
        assert_passed(&r);
        assert_all_rejoined(&r);
    }
}

#[test]
fn every_shipped_scenario_passes_under_the_rejoin_protocol() {
    let names: Vec<String> = scenario_files(&scenarios_dir())
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for required in [
        "cold-boot",
        "reboot-during-traffic",
        "crossing-boots",
        "reboot-during-rejoin",
        "unplugged-for-good",
        "reboot-storm",
        "hardware-tpt-reboot-during-traffic",
        "stale-requests-reach-rebooted-host",
        "deregister-under-traffic",
        "lost-tpt-remove",
        "corruption-during-rejoin",
        "lost-control-messages",
        "flapping-port",
        "registration-cache",
        "split-driver",
        "multi-nic-route-change",
        "multi-nic-unplugged",
        "multi-nic-invalid-stag",
        "window-and-delay",
        "window-and-delay-hardware-tpt",
    ] {
        assert!(
            names.iter().any(|n| n == required),
            "scenarios/{required}.toml is shipped"
        );
    }
    for name in &names {
        let s = load(name);
        assert_eq!(s.protocol, ProtocolKind::Rejoin, "{name} runs the protocol");
        assert!(!s.faults.is_empty(), "{name} has link faults");
        let r = run(&s, RunOptions::default());
        assert_passed(&r);
        assert_all_rejoined(&r);
        let hit: u64 = r.faults.hits.iter().sum();
        assert!(hit > 0, "{name}: no fault hit a cell");
        assert_eq!(r.stale.stale_writes_landed, 0, "{name}");
        assert_eq!(r.memory.stale_writes + r.memory.stale_reads, 0, "{name}");
        assert!(
            r.memory.words_checked > 0,
            "{name}: the memory verdict checked nothing"
        );
        let posted: u64 = r.workload.posted.values().sum();
        assert!(posted > 100, "{name}: only {posted} operations");
        assert!(r.workload.writes_verified > 0, "{name}: no write verified");
    }
}

#[test]
fn the_rebooted_host_is_protected_by_hardware_nacks_and_flushes() {
    let r = run(&load("reboot-during-traffic"), RunOptions::default());
    assert_passed(&r);
    // Work queued to host 1 when it went down was refused by hardware (PORT_DOWN while it
    // was off, RDMA_DISABLED after) or flushed by the peers that barred it or got its
    // BOOTING; a stale request that did reach its new boot was refused (assert_passed:
    // none landed). Which of the two happens depends on where the reboot falls: in this
    // scenario the peers' reads in flight are cut off by the reboot and their queues wait
    // for them, so nothing reaches host 1 before the BOOTING flushes them.
    let refused: u64 = r
        .workload
        .completions
        .values()
        .flat_map(|by| by.iter())
        .filter(|(status, _)| *status == "RDMA_DISABLED" || *status == "PORT_DOWN")
        .map(|(_, n)| n)
        .sum();
    assert!(
        refused + completions_with(&r, "Flushed") > 0,
        "{}",
        r.summary()
    );
    let rejoin = r
        .rejoins
        .iter()
        .find(|x| x.host == 1 && x.epoch == 2)
        .unwrap();
    assert!(rejoin.latency.is_some_and(|l| l < 10_000), "{rejoin:?}");
}

/// Requests made with host 1's old TPT entries are held in the fabric across its reboot
/// and reach its new boot: its NIC answers them RDMA_DISABLED, and the memory verdict
/// (judging host memory, not the answers) sees nothing stale land.
#[test]
fn stale_requests_that_reach_a_rebooted_host_are_answered_rdma_disabled() {
    let r = run(
        &load("stale-requests-reach-rebooted-host"),
        RunOptions::default(),
    );
    assert_passed(&r);
    assert!(r.stale.stale_requests_delivered > 0, "{}", r.summary());
    assert!(r.stale.rdma_disabled_nacks > 0, "{}", r.summary());
    assert_eq!(r.memory.stale_writes, 0);
    assert_eq!(r.memory.stale_reads, 0);
    assert!(r.memory.words_checked > 1000, "{}", r.summary());
}

/// The memory verdict can fail: with RDMA forced on in every booting NIC (the protocol's
/// gate removed), the stale requests of the same run land, and the verdict at the memory
/// port flags them whatever the NIC answered.
#[test]
fn the_memory_verdict_catches_rdma_forced_on_during_a_rejoin() {
    let r = run(
        &load("stale-requests-reach-rebooted-host"),
        RunOptions {
            plant: Some(PlantedBug::RdmaEnabledAtBoot),
            ..Default::default()
        },
    );
    assert!(!r.passed, "{}", r.summary());
    assert!(
        r.memory.stale_writes + r.memory.stale_reads > 0,
        "{}",
        r.summary()
    );
    assert!(
        r.findings.contains_key("stale-write") || r.findings.contains_key("stale-read"),
        "{:?}",
        r.findings
    );
}

/// Write regions are deregistered and registered again under traffic: nothing lands in
/// freed memory (the driver's fence), and the memory verdict checks the writes that do.
#[test]
fn deregistration_under_traffic_never_writes_freed_memory() {
    let r = run(&load("deregister-under-traffic"), RunOptions::default());
    assert_passed(&r);
    assert!(r.workload.deregistrations > 10, "{}", r.summary());
    assert!(r.workload.reregistrations > 10, "{}", r.summary());
    assert_eq!(r.memory.use_after_free, 0);
    assert!(r.workload.writes_verified > 300, "{}", r.summary());
}

/// The registration cache (004) under traffic and reboots: requests are hits, and every
/// way it lets go of a registration (free hook, range change, owner exit and garbage
/// collection) happens, with nothing landing in freed memory.
#[test]
fn the_registration_cache_lets_go_only_on_free_change_or_owner_exit() {
    let r = run(&load("registration-cache"), RunOptions::default());
    assert_passed(&r);
    let c = &r.workload.cache;
    assert!(c.hits > 10 * c.misses, "{c:?}");
    assert_eq!(c.misses, c.registrations, "{c:?}");
    for reason in ["freed", "changed", "collected"] {
        assert!(
            c.deregistrations.get(reason).is_some_and(|&n| n > 0),
            "{reason}: {c:?}"
        );
    }
    assert_eq!(r.memory.use_after_free, 0);
    assert!(r.memory.words_checked > 1000, "{}", r.summary());
    // And it is the fence that keeps the memory clean: taken as free at once, it is not.
    let planted = run(
        &load("registration-cache"),
        RunOptions {
            plant: Some(PlantedBug::FreedAtDeregistration),
            ..Default::default()
        },
    );
    assert!(planted.memory.use_after_free > 0, "{}", planted.summary());
}

/// The use-after-free check can fail: a workload that takes memory as free when its
/// deregistration starts (no fence) sees requests in flight land in it.
#[test]
fn the_memory_verdict_catches_memory_freed_without_the_fence() {
    let r = run(
        &load("deregister-under-traffic"),
        RunOptions {
            plant: Some(PlantedBug::FreedAtDeregistration),
            ..Default::default()
        },
    );
    assert!(r.memory.use_after_free > 0, "{}", r.summary());
    assert!(
        r.findings.contains_key("use-after-free"),
        "{:?}",
        r.findings
    );
}

/// Completions of every kind with `status`.
fn completions_with(r: &Report, status: &str) -> u64 {
    r.workload
        .completions
        .values()
        .flat_map(|by| by.iter())
        .filter(|(s, _)| *s == status)
        .map(|(_, n)| n)
        .sum()
}

/// NICs with a hardware TPT: the drivers program it at every boot (3 regions per boot),
/// RDMA carries STag + virtual address and is translated by the target NIC (writes, reads
/// and atomics verified byte for byte), the rebooted hosts' NICs refuse the old STags'
/// requests until they rejoin, and every scoreboard passes.
#[test]
fn hardware_tpt_reboots_during_traffic_pass_every_scoreboard() {
    let s = load("hardware-tpt-reboot-during-traffic");
    assert_eq!(s.tpt, TptKind::Hardware);
    let r = run(&s, RunOptions::default());
    assert_passed(&r);
    assert_all_rejoined(&r);
    assert_eq!(r.tpt, TptKind::Hardware);
    assert_eq!(r.nic_queue_pairs, 4, "nic_top_tpt256");
    let boots = r.rejoins.len() as u64;
    assert_eq!(boots, 6, "4 cold boots and 2 reboots");
    assert_eq!(
        r.hw_tpt.commands,
        3 * boots,
        "every boot programmed its 3 regions"
    );
    assert!(r.workload.writes_verified > 100, "{}", r.summary());
    assert!(r.workload.reads_verified > 50, "{}", r.summary());
    assert!(r.workload.atomics_verified > 50, "{}", r.summary());
    assert_eq!(r.stale.stale_writes_landed, 0);
    assert_eq!(r.stale.stale_reads_and_atomics_landed, 0);
    // Work queued to a rebooting host is refused by its NIC (RDMA disabled) or flushed
    // by its peers when its BOOTING arrives.
    assert!(
        completions_with(&r, "RDMA_DISABLED") + completions_with(&r, "Flushed") > 0,
        "{}",
        r.summary()
    );
}

/// Under the naive heartbeat baseline (no hold-down) stale requests reach the rebooted
/// hosts with RDMA enabled. Without a TPT in the NIC they land (the physical address is
/// in the cell); with the hardware TPT the old STags have no valid entry (or the wrong
/// key) in the new boot's table: the exception queue punts them to the driver, which
/// refuses them, and none lands.
#[test]
fn the_hardware_tpt_refuses_stale_stags_even_under_the_naive_baseline() {
    let naive = || RunOptions {
        protocol: Some(ProtocolKind::Heartbeat),
        hold_down: Some(0),
        ..Default::default()
    };
    let mut s = load("hardware-tpt-reboot-during-traffic");
    let r = run(&s, naive());
    // No finding at all: in particular no `refused-then-success` (a refused request whose
    // NACK crossed a go-back, completed with success from its duplicate's ACK; the
    // requester now evaluates answers to messages sent before a go-back).
    assert_eq!(r.violation_count, 0, "{}", r.summary());
    assert!(r.stale.stale_requests_delivered > 50, "{}", r.summary());
    assert_eq!(r.stale.stale_writes_landed, 0, "{}", r.summary());
    assert_eq!(r.stale.stale_reads_and_atomics_landed, 0, "{}", r.summary());
    assert_eq!(r.stale.unregistered_writes, 0);
    assert!(r.hw_tpt.exceptions_refused > 50, "{}", r.summary());
    assert_eq!(
        r.hw_tpt.exceptions_used_up, 0,
        "no old STag is taken for a used-up region of the new boot"
    );
    assert!(
        completions_with(&r, "REMOTE_ACCESS_ERROR") > 50,
        "{}",
        r.summary()
    );
    s.tpt = TptKind::Software;
    let r = run(&s, naive());
    assert!(
        r.stale.stale_writes_landed > 0,
        "the same run without the NIC's TPT lands stale writes: {}",
        r.summary()
    );
}

#[test]
fn the_naive_baseline_lands_stale_writes_that_the_scoreboard_counts() {
    let s = load("reboot-during-traffic");
    let naive = RunOptions {
        protocol: Some(ProtocolKind::Heartbeat),
        hold_down: Some(0),
        ..Default::default()
    };
    let r = run(&s, naive);
    assert!(r.stale.stale_writes_landed > 0, "{}", r.summary());
    assert!(
        r.memory.stale_writes > 0,
        "the memory verdict sees them land too: {}",
        r.summary()
    );
    assert!(
        r.passed,
        "the baseline counts stale writes instead of failing: {}",
        r.summary()
    );
    // Asked to be strict, the same run fails, naming the cycle and the hosts.
    let strict = RunOptions {
        protocol: Some(ProtocolKind::Heartbeat),
        hold_down: Some(0),
        strict: Some(true),
        ..Default::default()
    };
    let r = run(&s, strict);
    assert!(!r.passed);
    let v = r
        .violations
        .iter()
        .find(|v| v.kind == "stale-access")
        .expect("a stale access");
    assert!(v.hosts.contains(&1) && v.cycle > 15_000, "{v}");
}

#[test]
fn sixty_four_hosts_cold_boot_in_one_cosimulation() {
    let text = r#"
name = "cold-boot-64"
hosts = 64
cycles = 30000
[workload]
rate = 0.002
max_bytes = 64
"#;
    let s = Scenario::parse(text, "cold-boot-64").unwrap();
    let r = run(&s, RunOptions::default());
    assert_passed(&r);
    assert_eq!(r.rejoins.len(), 64);
    assert_all_rejoined(&r);
    assert_eq!(r.nic_queue_pairs, 64);
}

#[test]
fn one_vcd_per_nic_under_the_waves_directory() {
    let text = r#"
name = "waves-small"
hosts = 2
cycles = 800
[workload]
rate = 0.0
"#;
    let s = Scenario::parse(text, "waves-small").unwrap();
    let dir = std::env::temp_dir().join(format!("nic-scenario-waves-{}", std::process::id()));
    let r = run(
        &s,
        RunOptions {
            waves_dir: Some(dir.clone()),
            ..Default::default()
        },
    );
    assert_passed(&r);
    for n in 0..2 {
        let path = dir.join(format!("nic{n}.vcd"));
        let w = nic_waves::Waveform::load(&path).expect("a readable VCD");
        assert!(w.signals().len() > 50, "{}", path.display());
        assert!(w.end_time() >= 500 * 10_000, "{}", path.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The split-model driver of 002: every packet crosses both ways through the buffer pools,
/// byte for byte and in order, the targets flush and free pools under traffic, and no
/// write lands in a freed pool. Taking a pool as free at the flush request (before the
/// initiator's reply) lands the writes already on their way in freed memory.
#[test]
fn the_split_driver_moves_every_packet_and_never_writes_a_freed_pool() {
    let r = run(&load("split-driver"), RunOptions::default());
    assert_passed(&r);
    let sd = r.split_driver.as_ref().expect("a split-driver report");
    for dir in ["0->1", "1->0"] {
        assert_eq!(sd.sent.get(dir), Some(&120), "{sd:?}");
        assert_eq!(sd.delivered.get(dir), Some(&120), "{sd:?}");
    }
    assert_eq!(sd.by_idata, 240, "{sd:?}");
    assert!(sd.pools_flushed > 2 && sd.pools_freed > 2, "{sd:?}");
    assert_eq!(sd.malformed + sd.out_of_protocol, 0);
    assert_eq!(r.memory.use_after_free, 0);
    let planted = run(
        &load("split-driver"),
        RunOptions {
            plant: Some(PlantedBug::PoolFreedAtFlush),
            ..Default::default()
        },
    );
    assert!(planted.memory.use_after_free > 0, "{}", planted.summary());
}

/// The same exchange with packets in SendData messages (plain SEND/RECV), and with the
/// I/O unit rebooting in the middle: the exchange starts over and nothing stale lands.
#[test]
fn the_split_driver_runs_over_send_and_survives_a_reboot() {
    let mut s = load("split-driver");
    s.split_driver.as_mut().unwrap().mode = nic_testbench::scenario::SplitMode::Send;
    let r = run(&s, RunOptions::default());
    assert_passed(&r);
    let sd = r.split_driver.as_ref().unwrap();
    assert_eq!(sd.send_data, 240, "{sd:?}");
    assert_eq!(sd.delivered.values().sum::<u64>(), 240, "{sd:?}");
    let text = std::fs::read_to_string(scenarios_dir().join("split-driver.toml")).unwrap()
        + "\n[[event]]\nat = 9000\naction = \"reboot\"\nhost = 1\ndown_cycles = 300\n";
    let s = Scenario::parse(&text, "split-driver+reboot").unwrap();
    let r = run(&s, RunOptions::default());
    assert_passed(&r);
    let sd = r.split_driver.as_ref().unwrap();
    assert!(sd.restarts > 0, "{sd:?}");
    assert!(sd.delivered.values().sum::<u64>() > 120, "{sd:?}");
}

/// Several NICs per host (source 003, docs/multi-nic.md), on the Verilated NICs with every
/// scoreboard and the memory verdict on. A route change mid-transfer and an unplugged
/// first NIC move the host's traffic to its other NIC: the host fails over and rejoins
/// once (one rejoin record per boot, whatever its NIC count), and the STags the peers use
/// migrate through the exception queue; writes are verified byte for byte after it. A
/// forged STag is refused through both NICs and nothing of it lands.
#[test]
fn several_nics_per_host_migrate_stags_and_refuse_forged_ones() {
    for name in ["multi-nic-route-change", "multi-nic-unplugged"] {
        let s = load(name);
        let r = run(&s, RunOptions::default());
        assert_passed(&r);
        assert_all_rejoined(&r);
        let boots = s.hosts
            + s.timeline()
                .iter()
                .filter(|e| e.action == nic_testbench::scenario::EventAction::Reboot)
                .count();
        assert_eq!(
            r.rejoins.len(),
            boots,
            "{name}: a host rejoins once per boot"
        );
        let m = &r.multi_nic;
        assert!(m.failovers >= 1, "{name}: {m:?}");
        assert!(
            m.migrated >= 2,
            "{name}: the W and R regions migrate: {m:?}"
        );
        assert_eq!(
            m.refused_unknown + m.refused_used_up + m.refused_checks,
            0,
            "{name}"
        );
        assert!(m.latency_max >= m.latency_median && m.latency_median >= m.latency_min);
        assert!(m.latency_min > 0, "{name}: {m:?}");
        assert_eq!(
            r.memory.stale_writes + r.memory.unmatched_writes,
            0,
            "{name}"
        );
        assert!(r.workload.writes_verified > 300, "{name}");
    }
    let r = run(&load("multi-nic-route-change"), RunOptions::default());
    assert_eq!(r.multi_nic.failovers, 2, "there and back");
    let r = run(&load("multi-nic-invalid-stag"), RunOptions::default());
    assert_passed(&r);
    let m = &r.multi_nic;
    assert!(m.refused_unknown > 10, "{m:?}");
    assert_eq!(
        completions_with(&r, "REMOTE_ACCESS_ERROR"),
        m.refused_unknown,
        "each forged request is refused with REMOTE_ACCESS_ERROR"
    );
    assert!(m.migrated >= 1, "{m:?}");
    assert_eq!(
        r.memory.stale_writes + r.memory.unmatched_writes + r.memory.disagreements,
        0,
        "nothing of a forged request lands"
    );
}

/// `window-and-delay` (the driver programs the window's TPT entry at the peer's copy, the
/// software TPT) and `window-and-delay-hardware-tpt` (host 0's NIC writes the entry into
/// its own TPT, the `BindWriter`): the memory window and the DELAYs of source 001 under
/// traffic. The peer's WRITEs with the key are refused before the binding reached it and
/// after the unbind, land inside the window in between and are refused beside it; the NIC
/// writes nothing into `V` outside the window or outside the binding's life; every DELAY
/// holds the owner's next request to the peer. A window bound too wide and DELAYs shorter
/// than the check expects are caught, on both.
#[test]
fn window_and_delay_work_requests_under_traffic() {
    for name in ["window-and-delay", "window-and-delay-hardware-tpt"] {
        let r = run(&load(name), RunOptions::default());
        assert_passed(&r);
        let lw = r.local_work.as_ref().unwrap();
        let (bound, unbound) = (
            lw.bind_completed_at.unwrap(),
            lw.unbind_completed_at.unwrap(),
        );
        assert!(
            bound > 20_000 && unbound > 45_000 && lw.freed_at.unwrap() >= unbound,
            "{name}: {lw:?}"
        );
        // 40 tries before the bind's update arrives, 50 while bound, 50 after the unbind.
        assert!(lw.refused_unbound >= 60, "{name}: {lw:?}");
        assert!(
            lw.landed >= 20 && lw.refused_outside >= 20,
            "{name}: {lw:?}"
        );
        assert_eq!(lw.failed, 0, "{name}: {lw:?}");
        if name == "window-and-delay" {
            assert_eq!(lw.refused_by_target, 0, "{name}: {lw:?}");
        }
        assert_eq!(
            (lw.delays_posted, lw.delays_completed),
            (3, 3),
            "{name}: {lw:?}"
        );
        assert!(
            lw.shortest_gap_after_delay.unwrap() >= 3000 - 200,
            "{name}: {lw:?}"
        );
        for (plant, kind) in [
            (PlantedBug::WindowTooWide, "window"),
            (PlantedBug::DelayShortened, "delay"),
        ] {
            let planted = run(
                &load(name),
                RunOptions {
                    plant: Some(plant),
                    ..Default::default()
                },
            );
            assert!(
                planted.findings.get(kind).copied().unwrap_or(0) > 0,
                "{name}, {plant:?}: {}",
                planted.summary()
            );
        }
    }
}

/// A malformed `[local_work]` is refused with the file, the line and the field.
#[test]
fn malformed_local_work_is_refused_with_its_line() {
    let base = "name = \"x\"\nhosts = 3\ncycles = 10000\n[local_work]\nowner = 0\n";
    for (extra, message) in [
        (
            "peer = 0\n",
            "x.toml: line 6: field `local_work.peer`: must differ from owner (0)",
        ),
        (
            "peer = 3\n",
            "x.toml: line 6: field `local_work.peer`: must be a host of 0..3, got 3",
        ),
        (
            "bind_at = 5000\nunbind_at = 4000\n",
            "x.toml: line 7: field `local_work.unbind_at`: must be after bind_at (5000) and before the end (10000), got 4000",
        ),
        (
            "bind_at = 100\nunbind_at = 200\nwindow_bytes = 12\n",
            "x.toml: line 8: field `local_work.window_bytes`: the window (offset 1024, 12 bytes) must be non-empty, 8-aligned and inside V (4096 bytes)",
        ),
        (
            "bind_at = 100\nunbind_at = 200\ndelay_cycles = 16777216\n",
            "x.toml: line 8: field `local_work.delay_cycles`: must be at most 16777215, got 16777216",
        ),
        (
            "bind_at = 100\nunbind_at = 200\ndelay_at = [10000]\n",
            "x.toml: line 8: field `local_work.delay_at`: 10000 is not before the end (10000)",
        ),
    ] {
        let err = Scenario::parse(&format!("{base}{extra}"), "x.toml").unwrap_err();
        assert_eq!(err.to_string(), message);
    }
    let err = Scenario::parse(&format!("{base}bind = 1\n"), "x.toml").unwrap_err();
    assert!(err.to_string().contains("unknown field `bind`"), "{err}");
}
