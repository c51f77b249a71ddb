//! The rejoin model check (`nic_check::rejoin`) at small bounds, and planted defects that
//! each property must catch. `cargo test --release -p nic-check -- --ignored` runs the
//! larger bounds (minutes).

use nic_check::rejoin::{
    Bounds, Bug, Start, CONVERGES, STALE_ACCESS_LANDED, STALE_REQUEST_REACHABLE, STALE_TPT_COPY,
};
use nic_check::{check, Report};

fn bounds(nodes: usize, reboots: u8, losses: u8, start: Start) -> Bounds {
    Bounds {
        nodes,
        reboots,
        losses,
        start,
        ..Bounds::small()
    }
}

fn print(report: &Report) {
    println!(
        "{:?} bug {:?} symmetry {}: {} unique states ({} generated), depth {}, {:.2} s, failed: {:?}",
        report.bounds,
        report.bug,
        report.symmetry,
        report.unique_states,
        report.states,
        report.max_depth,
        report.seconds,
        report
            .failures
            .iter()
            .map(|f| f.property)
            .collect::<Vec<_>>()
    );
}

fn holds(b: Bounds) {
    let report = check(b, None, 1, false).unwrap();
    print(&report);
    if let Some(f) = report.failures.first() {
        panic!("{} fails after {:?}", f.property, f.steps);
    }
    assert!(report.unique_states > 1000, "explored almost nothing");
}

/// The checker finds `bug` through `property`, with the symmetry reduction and without.
fn caught(b: Bounds, bug: Bug, property: &str) {
    for symmetry in [true, false] {
        let b = Bounds {
            symmetry,
            ..b.clone()
        };
        let report = check(b, Some(bug), 1, true).unwrap();
        print(&report);
        assert_eq!(report.symmetry, symmetry);
        assert!(
            report.failures.iter().any(|f| f.property == property),
            "{bug:?} not caught by {property:?} (symmetry {symmetry}): {:?}",
            report
                .failures
                .iter()
                .map(|f| f.property)
                .collect::<Vec<_>>()
        );
    }
}

/// Two nodes from power-on in any order (crossing BOOTINGs), one reboot, one lost message:
/// every interleaving.
#[test]
fn two_nodes_cold_start_with_a_reboot_and_a_loss() {
    holds(bounds(2, 1, 1, Start::Cold));
}

/// Three joined nodes, one of which reboots: every interleaving.
#[test]
fn three_nodes_rejoin_after_a_reboot() {
    holds(bounds(3, 1, 0, Start::Joined));
}

#[test]
fn rdma_enabled_at_boot_lets_a_stale_request_land() {
    let b = bounds(2, 1, 1, Start::Cold);
    caught(b.clone(), Bug::RdmaAtBoot, STALE_REQUEST_REACHABLE);
    for symmetry in [true, false] {
        let b = Bounds {
            symmetry,
            ..b.clone()
        };
        let report = check(b, Some(Bug::RdmaAtBoot), 1, false).unwrap();
        assert!(
            report
                .failures
                .iter()
                .any(|f| f.property == STALE_ACCESS_LANDED),
            "the stale request also lands"
        );
    }
}

#[test]
fn a_tpt_copy_never_cleared_keeps_an_earlier_epoch() {
    caught(
        bounds(2, 1, 0, Start::Joined),
        Bug::KeepStaleTpt,
        STALE_TPT_COPY,
    );
}

#[test]
fn no_resend_on_timeout_is_a_liveness_failure() {
    caught(
        bounds(2, 1, 1, Start::Cold),
        Bug::NoResendOnTimeout,
        CONVERGES,
    );
}

#[test]
fn no_rdma_ready_is_a_liveness_failure() {
    caught(bounds(2, 0, 0, Start::Cold), Bug::NoRdmaReady, CONVERGES);
}

/// With one FIFO per pair a skipped fence is not observable: a peer's requests from before
/// a node's reboot are in the same link as, and ahead of, the ACK that lets the node
/// enable RDMA, so they reach it while its RDMA is still off. With RDMA requests on a path
/// of their own (several queue pairs, a multi-path fabric) the fence is what keeps them out.
#[test]
fn a_skipped_fence_lets_a_stale_request_land_when_rdma_has_its_own_path() {
    let b = bounds(2, 1, 1, Start::Joined);
    for symmetry in [true, false] {
        let b = Bounds {
            symmetry,
            ..b.clone()
        };
        let report = check(b, Some(Bug::SkipFence), 1, false).unwrap();
        print(&report);
        assert!(report.failures.is_empty(), "masked by FIFO links");
    }
    let own = Bounds {
        rdma_own_path: true,
        ..b
    };
    caught(own, Bug::SkipFence, STALE_REQUEST_REACHABLE);
}

/// The protocol with RDMA requests on a path of their own: every interleaving of 2 nodes
/// from a cold start, one reboot, one loss.
#[test]
fn two_nodes_with_rdma_on_its_own_path() {
    holds(Bounds {
        rdma_own_path: true,
        ..bounds(2, 1, 1, Start::Cold)
    });
}

#[test]
fn bad_bounds_are_refused_with_the_reason() {
    let mut b = Bounds::small();
    b.nodes = 1;
    assert!(check(b, None, 1, false)
        .unwrap_err()
        .contains("nodes must be 2 to 8"));
    assert!(check(Bounds::small(), None, 0, false)
        .unwrap_err()
        .contains("threads"));
    assert!(Bug::from_name("nope").unwrap_err().contains("no-resend"));
}

#[test]
fn three_nodes_rejoin_after_a_reboot_and_a_loss() {
    holds(bounds(3, 1, 1, Start::Joined));
}

#[test]
fn two_nodes_two_reboots_two_losses() {
    holds(bounds(2, 2, 2, Start::Cold));
}

#[test]
#[ignore = "minutes: run with --ignored"]
fn three_nodes_cold_start_first_14_steps() {
    let mut b = bounds(3, 1, 1, Start::Cold);
    b.max_depth = Some(14);
    holds(b);
}

/// Three joined nodes, two reboots (two nodes reboot together and their BOOTINGs cross, or
/// one node twice): every interleaving, up to renumbering the nodes.
#[test]
#[ignore = "18 minutes, 1.1 GB: run with --ignored"]
fn three_nodes_two_reboots() {
    holds(bounds(3, 2, 0, Start::Joined));
}
