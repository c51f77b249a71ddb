//! Counterexamples of the rejoin model check (`nic-check`, docs/rejoin-model-check.md),
//! replayed step by step on two [`RejoinMachine`]s: the test plays the network, in the
//! order the checker found.

use nic_driver::control::ControlMessage;
use nic_driver::rejoin::{Action, Event, RejoinConfig, RejoinMachine};
use nic_driver::NodeId;

/// The messages a node's actions send, in order.
fn sent(actions: &[Action]) -> Vec<(NodeId, ControlMessage)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { to, message } => Some((*to, message.clone())),
            _ => None,
        })
        .collect()
}

fn machine(node: NodeId, incarnation: u32) -> (RejoinMachine, Vec<Action>) {
    let mut m = RejoinMachine::new(RejoinConfig::new(node, 2, 100)).unwrap();
    let a = m
        .handle(
            0,
            Event::Boot {
                node_count: 2,
                incarnation,
            },
        )
        .unwrap();
    (m, a)
}

fn rx(m: &mut RejoinMachine, from: NodeId, message: ControlMessage) -> Vec<Action> {
    m.handle(1, Event::ControlReceived { from, message })
        .unwrap()
}

/// A BOOTING that node 1 sent while node 0 was off, and that reaches node 0's *next* boot
/// (its NIC retransmits it, and node 0's restarted responder takes it), is not node 1's
/// answer to that boot. Node 1 has since joined and admitted node 0's earlier boot; it still
/// holds that boot's TPT and its RDMA requests with it queue behind the old BOOTING. If the
/// BOOTING counted as an answer (a "crossing" BOOTING), node 0 would enable RDMA before
/// node 1 had even seen its new BOOTING, and those requests would land (the model checker
/// found this with 2 nodes, 1 reboot and 1 loss).
#[test]
fn an_old_booting_is_no_answer_to_a_new_boot() {
    let booting_1 = ControlMessage::Booting { incarnation: 1 };
    // Node 1 boots while node 0 is off; one BOOTING is refused (PORT_DOWN), a resend is
    // still in flight.
    let (mut n1, a) = machine(1, 1);
    assert_eq!(sent(&a), vec![(0, booting_1.clone())]);
    let a = n1.handle(100, Event::Timeout).unwrap();
    assert_eq!(
        sent(&a),
        vec![(0, booting_1.clone())],
        "the resend in flight"
    );
    // Node 0 boots (incarnation 10) and the two handle each other's BOOTING.
    let (mut n0, a) = machine(0, 10);
    let booting_10 = sent(&a)[0].1.clone();
    rx(&mut n1, 0, booting_10);
    rx(&mut n0, 1, booting_1.clone());
    let mut to_0 = sent(&n1.handle(2, Event::FenceDrained { node: 0 }).unwrap());
    let mut to_1 = sent(&n0.handle(2, Event::FenceDrained { node: 1 }).unwrap());
    // Deliver everything both ways until both are joined and admit each other.
    for _ in 0..4 {
        for (_, m) in std::mem::take(&mut to_0) {
            to_1.extend(sent(&rx(&mut n0, 1, m)));
        }
        for (_, m) in std::mem::take(&mut to_1) {
            to_0.extend(sent(&rx(&mut n1, 0, m)));
        }
    }
    assert!(n0.is_joined() && n1.is_joined());
    assert!(!n1.is_barred(0), "node 1 admits node 0's first boot");
    // Node 0 reboots (incarnation 20). Node 1 does not know yet: it has node 0 unbarred and
    // holds the TPT of incarnation 10. The old resend of BOOTING reaches the new boot.
    let (mut n0, a) = machine(0, 20);
    let booting_20 = sent(&a)[0].1.clone();
    rx(&mut n0, 1, booting_1);
    assert!(
        !n0.is_joined(),
        "node 0 enabled RDMA while node 1 still admits its previous boot"
    );
    // Node 1 gets the new BOOTING, bars node 0 and fences; its ACK lets node 0 join.
    rx(&mut n1, 0, booting_20);
    assert!(n1.is_barred(0));
    let ack = sent(&n1.handle(3, Event::FenceDrained { node: 0 }).unwrap());
    assert_eq!(
        ack,
        vec![(
            0,
            ControlMessage::Ack {
                incarnation: 20,
                joined: true
            }
        )]
    );
    // Node 0 answered node 1's old BOOTING with an ACK of incarnation 1, after its own fence.
    n0.handle(3, Event::FenceDrained { node: 1 }).unwrap();
    let a = rx(&mut n0, 1, ack[0].1.clone());
    assert!(n0.is_joined());
    assert!(a.contains(&Action::SetEnables {
        send_recv: true,
        rdma: true
    }));
}

/// Node 1 probes node 0 (it counted node 0 as NACKed while it rejoined itself) just before
/// node 0's BOOTING, sent again on a timeout, reaches it; that BOOTING ends node 1's probing.
/// Node 0 handles the PROBE and waits for node 1's RDMA_READY, which a prober sends on the
/// ACK to its probe. Both ACKs (datagrams) are lost: node 1's to the BOOTING, which would
/// stand for that RDMA_READY, and node 0's to the PROBE. Node 1, no longer probing, never
/// sent RDMA_READY, and node 0 kept node 1 barred for ever (the model checker found this with
/// 2 nodes, 2 reboots and 2 losses). A node whose probe is unanswered sends RDMA_READY
/// (on the reliable stream) with its ACK to the BOOTING.
#[test]
fn a_probe_overtaken_by_a_booting_still_gets_its_rdma_ready() {
    let (mut n0, a) = machine(0, 20);
    let booting_20 = sent(&a)[0].1.clone();
    let (mut n1, _) = machine(1, 10);
    // Node 1 handles node 0's BOOTING while joining itself, then finds node 0's RDMA off
    // (an RDMA write of its earlier boot was refused): node 0 counts as NACKed, node 1
    // joins and owes it RDMA_READY.
    rx(&mut n1, 0, booting_20.clone());
    let ack_20 = sent(&n1.handle(2, Event::FenceDrained { node: 0 }).unwrap());
    let a = n1
        .handle(
            3,
            Event::HardwareNack {
                from: 0,
                syndrome: nic_abi::Syndrome::RdmaDisabled,
            },
        )
        .unwrap();
    assert!(n1.is_joined());
    let ready_10 = sent(&a);
    // Node 0 joins on node 1's ACK and admits node 1 on its RDMA_READY.
    let a = rx(&mut n0, 1, ack_20[0].1.clone());
    assert!(n0.is_joined());
    let ready_20 = sent(&a);
    rx(&mut n0, 1, ready_10[0].1.clone());
    assert!(!n0.is_barred(1));
    // Node 1 probes node 0 (it NACKed); node 0's BOOTING, sent again, arrives, then its
    // RDMA_READY.
    let probe = sent(&n1.handle(200, Event::Timeout).unwrap());
    assert!(
        matches!(probe[0].1, ControlMessage::Probe { .. }),
        "{probe:?}"
    );
    rx(&mut n1, 0, booting_20);
    rx(&mut n1, 0, ready_20[0].1.clone());
    // Node 1's fence drains: ACK (lost) and whatever else it sends node 0.
    let to_0 = sent(&n1.handle(201, Event::FenceDrained { node: 0 }).unwrap());
    assert!(!n1.is_barred(0));
    // Node 0 gets the PROBE, fences, ACKs (lost) and waits for node 1's RDMA_READY.
    rx(&mut n0, 1, probe[0].1.clone());
    n0.handle(202, Event::FenceDrained { node: 1 }).unwrap();
    assert!(n0.is_barred(1));
    // What node 1 sent, but the ACK (a datagram: lost).
    for (_, m) in to_0 {
        if !matches!(m, ControlMessage::Ack { .. }) {
            rx(&mut n0, 1, m);
        }
    }
    // Node 1 does not probe any more; no timeout of node 0's is pending.
    assert!(sent(&n1.handle(400, Event::Timeout).unwrap()).is_empty());
    assert_eq!(n0.deadline(), None);
    assert!(
        !n0.is_barred(1),
        "node 0 waits for an RDMA_READY that never comes: {:?}",
        n0.role(1)
    );
}
