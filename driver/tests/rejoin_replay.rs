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
