//! The driver and its verbs against in-test fake NICs (`fake_nic`): CSR programming, the
//! rejoin protocol end to end over a fabric of fakes, every verb's work request, typed
//! refusals that send nothing, hardware NACKs, fences, and hand-written completions.

mod fake_nic;

use fake_nic::{Cluster, Fabric, LoneNic, NicState};
use nic_abi::{csr, CompletionStatus, Cqe, Rqe, Syndrome, WqeOpcode};
use nic_driver::control::{ControlMessage, ControlSend};
use nic_driver::driver::CONTROL_IMMEDIATE;
use nic_driver::tpt::{Access, Protection, ProtectionError, RegionRef, Side, TptEntry};
use nic_driver::{Completion, Driver, DriverConfig, DriverError, NodeId, VerbsError};

const ARENA: u32 = 0x1_0000;
const ARENA_LEN: u32 = 0x8_0000;
const APP: u32 = 0x9_0000;

fn config(node: NodeId, n: usize, incarnation: u32) -> DriverConfig {
    let mut c = fake_nic::small_config(node, n, ARENA, ARENA_LEN, incarnation);
    c.first_handle = incarnation << 16;
    c
}

fn joined_cluster(n: usize) -> Cluster {
    let mut c = Cluster::new(Fabric::new(n, 8), config);
    for i in 0..n {
        c.boot(i, 10 + i as u32);
    }
    c.settle();
    for i in 0..n {
        assert!(c.d(i).is_joined(), "node {i} joined");
    }
    c
}

#[test]
fn boot_programs_the_nic_and_joins_when_peers_are_down() {
    let mut c = Cluster::new(Fabric::new(3, 8), config);
    c.fabric.power(1, false);
    c.fabric.power(2, false);
    c.boot(0, 0xABCD);
    // Boot queues the BOOTINGs; the first poll sends them (what the application registers
    // in between rides with them) and programs the queue pairs.
    c.fabric.with(0, |s| {
        assert!(s.writes_to(csr::qp(1, csr::QP_SQ_PI)).is_empty());
    });
    assert!(c.d(0).poll(0).unwrap().is_empty());
    c.fabric.with(0, |s| {
        assert_eq!(s.writes_to(csr::NODE_ID), vec![0]);
        assert_eq!(s.writes_to(csr::ENABLE), vec![0, csr::ENABLE_SEND_RECV]);
        assert_eq!(s.writes_to(csr::CQ_BASE), vec![ARENA as u64]);
        assert_eq!(s.writes_to(csr::CQ_SIZE_LOG2), vec![6]);
        assert!(
            s.writes_to(csr::qp(0, csr::QP_REMOTE)).is_empty(),
            "no queue pair to itself"
        );
        for q in 1..3 {
            assert_eq!(s.writes_to(csr::qp(q, csr::QP_REMOTE)), vec![q as u64]);
            let ctrl = s.writes_to(csr::qp(q, csr::QP_CTRL));
            assert_eq!(ctrl[0] & csr::QP_CTRL_RESET, csr::QP_CTRL_RESET);
            let start = (ctrl[0] >> csr::QP_CTRL_START_PSN_SHIFT) as u32;
            assert_eq!(*ctrl.last().unwrap(), csr::QP_CTRL_ENABLE);
            assert_eq!(
                s.writes_to(csr::qp(q, csr::QP_RQ_PI)),
                vec![8],
                "eight bounce buffers posted"
            );
            // BOOTING went out as a control SEND_IMMEDIATE.
            assert_eq!(
                s.writes_to(csr::qp(q, csr::QP_SQ_PI)),
                vec![(start + 1) as u64]
            );
            // Short: inline, the payload in the WQE.
            let wqe = s.wqe(q, start);
            assert_eq!(wqe.opcode, WqeOpcode::SendImmediate as u8);
            assert_eq!(wqe.immediate, CONTROL_IMMEDIATE);
            assert!(wqe.inline);
            let payload = wqe.inline_payload();
            assert_eq!(
                ControlSend::decode(&payload).map(|s| s.messages),
                Ok(vec![
                    ControlMessage::Booting {
                        incarnation: 0xABCD
                    },
                    ControlMessage::TptClear
                ])
            );
        }
    });
    assert!(!c.d(0).is_joined());
    c.settle();
    // Both peers are down: their PORT_DOWN NACKs are answers; RDMA on, both barred.
    assert!(c.d(0).is_joined() && c.d(0).rdma_enabled());
    assert!(c.d(0).is_barred(1) && c.d(0).is_barred(2));
    c.fabric.with(0, |s| {
        assert_eq!(s.enable(), csr::ENABLE_SEND_RECV | csr::ENABLE_RDMA);
        assert_eq!(s.csr_reads, 2, "only NIC_ID and NIC_CONFIG are read");
        assert_eq!(*s.writes_to(csr::CQ_CI).last().unwrap(), s.cq_pi as u64);
    });
}

#[test]
fn three_nodes_rejoin_register_and_transfer() {
    let mut c = joined_cluster(3);
    // Registration reaches every node's copy (Fig. 5).
    let src = c
        .d(0)
        .register(0x10_0000, APP, 256, Protection::ReadOnly)
        .unwrap();
    let dst = c
        .d(1)
        .register(0x20_0000, APP, 256, Protection::ReadWrite)
        .unwrap();
    let sink = c
        .d(0)
        .register(0x30_0000, APP + 0x1000, 256, Protection::WriteOnly)
        .unwrap();
    let gone = c
        .d(2)
        .register(0x40_0000, APP, 64, Protection::ReadWrite)
        .unwrap();
    c.settle();
    c.d(2).deregister(gone.handle).unwrap();
    c.settle();
    for p in 0..3 {
        for x in 0..3 {
            if p == x {
                continue;
            }
            let copy: Vec<TptEntry> = c
                .d(p)
                .tpt()
                .remote_entries(x as NodeId)
                .unwrap()
                .copied()
                .collect();
            let truth: Vec<TptEntry> = c.d(x).tpt().local_entries().copied().collect();
            assert_eq!(copy, truth, "node {p}'s copy of node {x}");
        }
    }
    // RDMA WRITE: the WQE carries node 1's physical address; the bytes land there.
    c.fabric
        .with(0, |s| s.write(APP, &(0u8..64).collect::<Vec<_>>()));
    c.d(0)
        .rdma_write(
            1,
            RegionRef::new(src.handle, src.logical),
            RegionRef::new(dst.handle, dst.logical + 8),
            64,
            None,
            7,
        )
        .unwrap();
    c.settle();
    assert_eq!(
        c.fabric.with(1, |s| s.read(APP + 8, 64)),
        (0u8..64).collect::<Vec<_>>()
    );
    assert_eq!(
        c.take(0),
        vec![Completion::Send {
            wr_id: 7,
            node: 1,
            opcode: WqeOpcode::RdmaWrite,
            status: CompletionStatus::Success
        }]
    );
    // RDMA READ back into node 0's sink.
    c.d(0)
        .rdma_read(
            1,
            RegionRef::new(sink.handle, sink.logical),
            RegionRef::new(dst.handle, dst.logical + 8),
            16,
            8,
        )
        .unwrap();
    // Atomics on node 1's word at logical +128.
    c.fabric
        .with(1, |s| s.write(APP + 128, &40u64.to_le_bytes()));
    let word = RegionRef::new(dst.handle, dst.logical + 128);
    c.d(0)
        .fetch_add(
            1,
            RegionRef::new(sink.handle, sink.logical + 64),
            word,
            2,
            9,
        )
        .unwrap();
    c.d(0)
        .compare_swap(
            1,
            RegionRef::new(sink.handle, sink.logical + 72),
            word,
            42,
            1000,
            10,
        )
        .unwrap();
    c.settle();
    assert_eq!(
        c.fabric.with(0, |s| s.read(APP + 0x1000, 16)),
        (0u8..16).collect::<Vec<_>>()
    );
    assert_eq!(
        c.fabric.with(0, |s| s.read(APP + 0x1040, 8)),
        40u64.to_le_bytes()
    );
    assert_eq!(
        c.fabric.with(0, |s| s.read(APP + 0x1048, 8)),
        42u64.to_le_bytes()
    );
    assert_eq!(
        c.fabric.with(1, |s| s.read(APP + 128, 8)),
        1000u64.to_le_bytes()
    );
    let ids: Vec<u64> = c
        .take(0)
        .iter()
        .map(|x| match x {
            Completion::Send {
                wr_id,
                status: CompletionStatus::Success,
                ..
            } => *wr_id,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ids, vec![8, 9, 10]);
    // SEND / RECEIVE: a message that arrives before the buffer is held, then delivered.
    c.fabric.with(0, |s| s.write(APP, b"hello, node 1!\0\0"));
    c.d(0)
        .post_send(
            1,
            RegionRef::new(src.handle, src.logical),
            14,
            Some(0x55),
            11,
        )
        .unwrap();
    c.settle();
    assert!(c.take(1).is_empty(), "no application buffer posted yet");
    let inbox = c
        .d(1)
        .register(0x50_0000, APP + 0x2000, 64, Protection::WriteOnly)
        .unwrap();
    c.d(1)
        .post_receive(0, RegionRef::new(inbox.handle, inbox.logical), 64, 12)
        .unwrap();
    c.settle();
    assert_eq!(
        c.take(1),
        vec![Completion::Receive {
            wr_id: 12,
            node: 0,
            opcode: WqeOpcode::SendImmediate,
            byte_count: 14,
            immediate: Some(0x55),
            status: CompletionStatus::Success
        }]
    );
    assert_eq!(
        c.fabric.with(1, |s| s.read(APP + 0x2000, 14)),
        b"hello, node 1!"
    );
    // A message longer than the posted buffer: truncated, reported.
    c.d(1)
        .post_receive(0, RegionRef::new(inbox.handle, inbox.logical), 4, 13)
        .unwrap();
    c.d(0)
        .post_send(1, RegionRef::new(src.handle, src.logical), 14, None, 14)
        .unwrap();
    c.settle();
    assert!(matches!(
        c.take(1).as_slice(),
        [Completion::Receive {
            wr_id: 13,
            status: CompletionStatus::LocalLengthError,
            byte_count: 14,
            ..
        }]
    ));
}

#[test]
fn bad_arguments_are_refused_and_send_nothing() {
    let mut c = joined_cluster(3);
    let src = c
        .d(0)
        .register(0x10_0000, APP, 256, Protection::ReadOnly)
        .unwrap();
    let odd = c
        .d(0)
        .register(0x11_0000, APP + 4, 64, Protection::ReadWrite)
        .unwrap();
    let dst = c
        .d(1)
        .register(0x20_0000, APP, 256, Protection::WriteOnly)
        .unwrap();
    c.settle();
    let before = c.fabric.with(0, |s| s.csr_writes.len());
    let l = RegionRef::new(src.handle, src.logical);
    let r = RegionRef::new(dst.handle, dst.logical);
    let d = c.d(0);
    assert_eq!(
        d.rdma_write(0, l, r, 8, None, 1),
        Err(VerbsError::InvalidNode { node: 0 })
    );
    assert_eq!(
        d.rdma_write(3, l, r, 8, None, 1),
        Err(VerbsError::InvalidNode { node: 3 })
    );
    assert_eq!(
        d.rdma_write(1, l, r, 65537, None, 1),
        Err(VerbsError::TooLong {
            length: 65537,
            max: 65536
        })
    );
    assert_eq!(
        d.rdma_write(1, l, RegionRef::new(999, 0), 8, None, 1),
        Err(VerbsError::Protection(
            ProtectionError::UnknownRemoteHandle {
                node: 1,
                handle: 999
            }
        ))
    );
    assert_eq!(
        d.rdma_write(2, l, r, 8, None, 1),
        Err(VerbsError::Protection(
            ProtectionError::UnknownRemoteHandle {
                node: 2,
                handle: dst.handle
            }
        ))
    );
    assert!(matches!(
        d.rdma_write(
            1,
            l,
            RegionRef::new(dst.handle, dst.logical + 250),
            8,
            None,
            1
        ),
        Err(VerbsError::Protection(ProtectionError::OutOfBounds {
            side: Side::Remote,
            ..
        }))
    ));
    assert!(matches!(
        d.rdma_read(1, l, r, 8, 1),
        Err(VerbsError::Protection(ProtectionError::MissingRight {
            side: Side::Local,
            needed: Access::Write,
            ..
        }))
    ));
    assert!(matches!(
        d.fetch_add(1, RegionRef::new(odd.handle, odd.logical + 4), r, 1, 1),
        Err(VerbsError::Protection(ProtectionError::MissingRight {
            side: Side::Remote,
            ..
        }))
    ));
    assert_eq!(
        d.rdma_write(1, RegionRef::new(odd.handle, odd.logical), r, 8, None, 1),
        Err(VerbsError::Misaligned {
            side: Side::Local,
            physical: APP + 4
        })
    );
    assert_eq!(
        d.post_send(1, RegionRef::new(odd.handle, odd.logical), 8, None, 1),
        Err(VerbsError::Misaligned {
            side: Side::Local,
            physical: APP + 4
        })
    );
    assert_eq!(
        d.post_send(1, l, 8, Some(CONTROL_IMMEDIATE), 1),
        Err(VerbsError::ReservedImmediate)
    );
    assert_eq!(
        d.post_send(1, l, 1025, None, 1),
        Err(VerbsError::TooLong {
            length: 1025,
            max: 1024
        })
    );
    assert!(matches!(
        d.post_receive(1, l, 8, 1),
        Err(VerbsError::Protection(ProtectionError::MissingRight {
            needed: Access::Write,
            ..
        }))
    ));
    assert!(matches!(d.deregister(12345), Err(VerbsError::Tpt(_))));
    assert!(matches!(
        d.register(0, APP, 0, Protection::ReadOnly),
        Err(VerbsError::Tpt(_))
    ));
    assert_eq!(
        c.fabric.with(0, |s| s.csr_writes.len()),
        before,
        "a refused verb wrote nothing"
    );
    // Ring full: the NIC holds its queue; eight work requests fit, the ninth is refused.
    c.fabric.with(0, |s| s.hold = true);
    for i in 0..8 {
        c.d(0).rdma_write(1, l, r, 8, None, i).unwrap();
    }
    assert_eq!(
        c.d(0).rdma_write(1, l, r, 8, None, 8),
        Err(VerbsError::RingFull { node: 1 })
    );
    assert_eq!(c.d(0).outstanding(1), 8);
    c.fabric.with(0, |s| s.hold = false);
    c.settle();
    assert_eq!(c.take(0).len(), 8);
    assert_eq!(c.d(0).outstanding(1), 0);
}

#[test]
fn a_hardware_nack_bars_the_node_until_it_rejoins() {
    let mut c = joined_cluster(3);
    let src = c
        .d(0)
        .register(0x10_0000, APP, 256, Protection::ReadOnly)
        .unwrap();
    let old = c
        .d(2)
        .register(0x20_0000, APP, 256, Protection::WriteOnly)
        .unwrap();
    c.settle();
    let l = RegionRef::new(src.handle, src.logical);
    c.fabric.power(2, false);
    c.drivers[2] = None;
    c.d(0)
        .rdma_write(2, l, RegionRef::new(old.handle, old.logical), 8, None, 1)
        .unwrap();
    c.settle();
    assert!(matches!(
        c.take(0).as_slice(),
        [Completion::Send {
            wr_id: 1,
            status: CompletionStatus::Remote(Syndrome::PortDown),
            ..
        }]
    ));
    assert!(c.d(0).is_barred(2));
    assert_eq!(
        c.d(0)
            .rdma_write(2, l, RegionRef::new(old.handle, old.logical), 8, None, 2),
        Err(VerbsError::NodeBarred { node: 2 })
    );
    assert_eq!(
        c.d(0).tpt().remote_entries(2).unwrap().count(),
        0,
        "node 2's part cleared"
    );
    // Node 2 boots again with new memory: admitted again, its new regions known, the old
    // handle is not.
    c.fabric.power(2, true);
    c.boot(2, 99);
    let new = c
        .d(2)
        .register(0x20_0000, APP + 0x800, 256, Protection::WriteOnly)
        .unwrap();
    c.settle();
    assert!(c.d(2).is_joined() && !c.d(0).is_barred(2));
    // Registered while joining: updates to both peers are on from the BOOTING (the push
    // rides with it), so the region reached them as an update, before RDMA_READY.
    assert_eq!(c.d(0).tpt().remote(2, new.handle), Ok(&new));
    assert!(c.d(0).tpt().remote(2, old.handle).is_err());
    c.d(0)
        .rdma_write(2, l, RegionRef::new(new.handle, new.logical), 8, None, 3)
        .unwrap();
    c.settle();
    assert!(matches!(
        c.take(0).as_slice(),
        [Completion::Send {
            wr_id: 3,
            status: CompletionStatus::Success,
            ..
        }]
    ));
}

/// A peer that gets BOOTING must not ACK while anything it sent to the old boot could
/// still land. It flushes the queue pair instead of waiting: the send side is reset (to a
/// start PSN far from the old ones), the write still queued in the NIC completes FLUSHED
/// when the NOP posted behind the reset completes, and is never sent, and the ACK goes out
/// right after on the fresh PSNs.
#[test]
fn booting_flushes_the_queue_pair_so_the_ack_does_not_wait_for_earlier_writes() {
    let mut c = joined_cluster(3);
    let src = c
        .d(0)
        .register(0x10_0000, APP, 256, Protection::ReadOnly)
        .unwrap();
    let dst = c
        .d(1)
        .register(0x20_0000, APP, 256, Protection::WriteOnly)
        .unwrap();
    c.settle();
    c.fabric.with(0, |s| {
        s.write(APP, &[0xEE; 8]);
        s.hold = true;
    });
    c.d(0)
        .rdma_write(
            1,
            RegionRef::new(src.handle, src.logical),
            RegionRef::new(dst.handle, dst.logical),
            8,
            None,
            5,
        )
        .unwrap();
    let old = c.fabric.with(0, |s| s.qps[1].clone());
    assert_eq!(old.sq_pi.wrapping_sub(old.sq_ci), 1, "the write is queued");
    // Node 1 reboots while node 0's write is still queued in its NIC.
    c.fabric.power(1, true);
    c.boot(1, 77);
    let mut taken = vec![];
    for _ in 0..5 {
        c.fabric.step();
        let now = c.now;
        taken.extend(c.d(0).poll(now).unwrap());
        c.d(1).poll(now).unwrap();
    }
    // Node 0 got BOOTING: barred and flushed. Its NIC is held, so the NOP behind the
    // reset has not completed: the write is not reported yet (the NIC could still be
    // reading its payload) and the fence, hence the ACK, waits for it.
    assert!(c.d(0).is_barred(1));
    assert!(taken.is_empty(), "{taken:?}");
    assert_eq!(
        c.d(0).outstanding(1),
        1,
        "the flushed write, until the NOP completes"
    );
    let ctrl = c.fabric.with(0, |s| s.writes_to(csr::qp(1, csr::QP_CTRL)));
    let flush = *ctrl.last().unwrap();
    assert_eq!(
        flush & (csr::QP_CTRL_ENABLE | csr::QP_CTRL_SEND_RESET | csr::QP_CTRL_RESET),
        csr::QP_CTRL_ENABLE | csr::QP_CTRL_SEND_RESET
    );
    let fresh = (flush >> csr::QP_CTRL_START_PSN_SHIFT) as u32 & nic_abi::PSN_MASK;
    assert_eq!(
        fresh,
        old.sq_pi.wrapping_add(nic_driver::driver::FLUSH_PSN_STEP) & nic_abi::PSN_MASK
    );
    let q1 = c.fabric.with(0, |s| s.qps[1].clone());
    assert_eq!(
        (q1.sq_ci, q1.sq_pi),
        (fresh, fresh.wrapping_add(1)),
        "the NOP"
    );
    assert_eq!(
        c.fabric.with(0, |s| s.wqe(1, fresh)).opcode,
        nic_abi::NOP_OPCODE
    );
    let stats = c.d(0).stats();
    assert_eq!((stats.flushes, stats.flushed_operations), (1, 1));
    // Released: the NOP completes, the write with it (FLUSHED, once), the fence ends and
    // the ACK goes out; node 1 joins; the flushed write never reached it.
    c.fabric.with(0, |s| s.hold = false);
    c.settle();
    assert!(
        matches!(
            c.take(0).as_slice(),
            [Completion::Send {
                wr_id: 5,
                status: CompletionStatus::Flushed,
                ..
            }]
        ),
        "the write completes once, FLUSHED"
    );
    assert_eq!(c.fabric.with(1, |s| s.read(APP, 8)), [0u8; 8]);
    assert!(c.d(1).is_joined() && !c.d(0).is_barred(1) && !c.d(1).is_barred(0));
}

/// A lone fake NIC: the test writes completion entries and messages by hand.
fn lone(node_count: usize) -> Driver<LoneNic> {
    let mut d = Driver::new(LoneNic(NicState::new(0, 8)), config(0, node_count, 5)).unwrap();
    d.boot(0).unwrap();
    // The first poll sends the BOOTINGs and programs the queue pairs.
    assert!(d.poll(0).unwrap().is_empty());
    d
}

/// The receive queue entry the driver posted at index `i` of queue pair `q`.
fn rqe(d: &mut Driver<LoneNic>, q: usize, i: u32) -> Rqe {
    let s = &d.nic().0;
    let base = s.qps[q].rq_base;
    Rqe::from_words(&s.words::<4>(base + (i % 8) * 32))
}

fn deliver_control(d: &mut Driver<LoneNic>, q: usize, index: u32, bytes: &[u8]) {
    let r = rqe(d, q, index);
    let s = &mut d.nic().0;
    s.write(r.buffer_addr, bytes);
    assert!(s.push_cqe(Cqe {
        opcode: WqeOpcode::SendImmediate as u8,
        status: 0,
        qp: q as u8,
        is_receive: true,
        has_immediate: true,
        byte_count: bytes.len() as u32,
        wqe_index: index,
        src_node: q as u16,
        src_qp: 0,
        wr_id: r.wr_id,
        immediate: CONTROL_IMMEDIATE,
        sequence: 0,
    }));
}

/// Sequenced control messages from one node are taken once and in order: a duplicate of
/// a TPT_UPDATE arriving after the TPT_REMOVE of its handle changes nothing, a message
/// ahead of a missing one is dropped, and a STREAM_ACK names the next number expected.
#[test]
fn duplicated_and_early_control_messages_change_nothing() {
    let mut d = lone(2);
    let send = |first_seq: u32, messages: Vec<ControlMessage>| {
        ControlSend {
            stream: 0x5EED,
            first_seq,
            messages,
        }
        .encode()
    };
    let ack = ControlMessage::Ack {
        incarnation: 5,
        joined: true,
    };
    deliver_control(&mut d, 1, 0, &send(0, vec![ack]));
    d.poll(1).unwrap();
    assert!(d.is_joined());
    let e = TptEntry {
        handle: 0x77,
        logical: 0x1000,
        physical: 0x2000,
        length: 64,
        protection: Protection::ReadWrite,
    };
    let update = ControlMessage::TptUpdate(nic_driver::control::TptUpdate::new(vec![e]).unwrap());
    let remove =
        ControlMessage::TptRemove(nic_driver::control::TptRemove::new(vec![0x77]).unwrap());
    deliver_control(&mut d, 1, 1, &send(0, vec![update.clone()]));
    deliver_control(&mut d, 1, 2, &send(1, vec![remove]));
    deliver_control(&mut d, 1, 3, &send(0, vec![update.clone()]));
    d.poll(2).unwrap();
    assert!(
        d.tpt().remote(1, 0x77).is_err(),
        "the duplicate brought it back"
    );
    assert_eq!(d.stats().control_duplicates, 1);
    // Number 3 before number 2: dropped until 2 comes.
    deliver_control(&mut d, 1, 4, &send(3, vec![update.clone()]));
    d.poll(3).unwrap();
    assert!(d.tpt().remote(1, 0x77).is_err());
    assert_eq!(d.stats().control_out_of_order, 1);
    // Something was dropped behind a gap: the acknowledgement goes at once (not delayed),
    // the stream up to number 2 (3 is not taken), and asks for a resend from 2.
    let s = &d.nic().0;
    let last = s.wqe(1, s.qps[1].sq_pi.wrapping_sub(1));
    assert_eq!(
        ControlSend::decode(&last.inline_payload()).map(|s| s.messages),
        Ok(vec![ControlMessage::StreamAck {
            stream: 0x5EED,
            next: 2,
            restart: false,
            resend: true
        }])
    );
}

/// A STREAM_ACK with `resend` (the peer dropped later messages behind a gap at `next`)
/// makes the node post its unacknowledged messages again in the same poll, once the SEND
/// that carried `next` has completed; without the flag they wait for the resend timer
/// (`ACK_WAIT_INTERVALS` resend intervals after that completion).
#[test]
fn a_stream_ack_asking_for_a_resend_resends_at_once() {
    for resend in [true, false] {
        let mut d = lone(2);
        let ack = ControlSend {
            stream: 1,
            first_seq: 0,
            messages: vec![ControlMessage::Ack {
                incarnation: 5,
                joined: true,
            }],
        };
        deliver_control(&mut d, 1, 0, &ack.encode());
        d.poll(2).unwrap();
        assert!(d.is_joined());
        // BOOTING with the push's TPT_CLEAR, then RDMA_READY: both complete with success.
        let start = d.nic().0.qps[1].sq_ci;
        for i in [start, start + 1] {
            let w = d.nic().0.wqe(1, i);
            assert!(d.nic().0.push_cqe(Cqe {
                opcode: w.opcode,
                qp: 1,
                byte_count: w.length,
                wqe_index: i,
                src_node: 1,
                wr_id: w.wr_id,
                ..Cqe::default()
            }));
        }
        d.poll(3).unwrap();
        let ready = ControlSend::decode(&d.nic().0.wqe(1, start + 1).inline_payload()).unwrap();
        assert_eq!(
            ready.messages,
            [ControlMessage::RdmaReady { incarnation: 5 }]
        );
        let posted = d.nic().0.qps[1].sq_pi;
        // Node 1 took the TPT_CLEAR but dropped what followed the missing RDMA_READY.
        let gap = ControlSend {
            stream: 1,
            first_seq: 0,
            messages: vec![ControlMessage::StreamAck {
                stream: ready.stream,
                next: ready.first_seq,
                restart: false,
                resend,
            }],
        };
        deliver_control(&mut d, 1, 1, &gap.encode());
        d.poll(4).unwrap();
        let s = &d.nic().0;
        if resend {
            assert_eq!(s.qps[1].sq_pi, posted + 1, "resent in the same poll");
            let again = ControlSend::decode(&s.wqe(1, posted).inline_payload()).unwrap();
            assert_eq!(
                (again.first_seq, again.messages),
                (ready.first_seq, ready.messages.clone())
            );
            assert_eq!(d.stats().control_fast_resends, 1);
        } else {
            assert_eq!(s.qps[1].sq_pi, posted, "waits for the resend timer");
            assert_eq!(d.stats().control_fast_resends, 0);
        }
    }
}

#[test]
fn hand_written_completions_drive_the_protocol() {
    let mut d = lone(2);
    // A garbled control message is counted and its buffer posted again.
    deliver_control(&mut d, 1, 0, &[0xA1, 0x99]);
    assert!(d.poll(1).unwrap().is_empty());
    assert_eq!(d.stats().control_malformed, 1);
    assert_eq!(d.nic().0.writes_to(csr::qp(1, csr::QP_RQ_PI)), vec![8, 9]);
    assert_eq!(d.nic().0.writes_to(csr::CQ_CI), vec![1]);
    // Node 1's ACK for this boot: joined.
    deliver_control(
        &mut d,
        1,
        1,
        &ControlSend {
            stream: 1,
            first_seq: 0,
            messages: vec![ControlMessage::Ack {
                incarnation: 5,
                joined: true,
            }],
        }
        .encode(),
    );
    d.poll(2).unwrap();
    assert!(d.is_joined() && !d.is_barred(1));
    let s = &d.nic().0;
    assert_eq!(s.enable(), csr::ENABLE_SEND_RECV | csr::ENABLE_RDMA);
    let start = s.qps[1].sq_ci;
    let ready = s.wqe(1, start + 1);
    assert_eq!(
        ControlSend::decode(&ready.inline_payload()).map(|s| s.messages),
        Ok(vec![ControlMessage::RdmaReady { incarnation: 5 }])
    );
    // The BOOTING's send completion: mapped to the control record, no application completion.
    let booting = s.wqe(1, start);
    let cqe = Cqe {
        opcode: booting.opcode,
        qp: 1,
        byte_count: booting.length,
        wqe_index: start,
        src_node: 1,
        wr_id: booting.wr_id,
        ..Cqe::default()
    };
    assert!(d.nic().0.push_cqe(cqe));
    assert!(d.poll(3).unwrap().is_empty());
    assert_eq!(d.outstanding(1), 1, "RDMA_READY still outstanding");
    // RDMA_READY completes with RESPONDER_RESTARTED (node 1's NIC restarted its PSN
    // sequence: it rebooted): node 1 is barred until it rejoins, as for a barring NACK.
    let cqe = Cqe {
        opcode: ready.opcode,
        status: CompletionStatus::RESPONDER_RESTARTED,
        qp: 1,
        byte_count: ready.length,
        wqe_index: start + 1,
        src_node: 1,
        wr_id: ready.wr_id,
        ..Cqe::default()
    };
    assert!(d.nic().0.push_cqe(cqe));
    assert!(d.poll(4).unwrap().is_empty());
    assert!(d.is_barred(1), "a restarted responder is barred");
    assert_eq!(d.outstanding(1), 0);
    // TPT_CLEAR (behind BOOTING) and RDMA_READY, never acknowledged, are posted again, in
    // one SEND, one resend interval (50) after the failure and the flush (at 4) without an
    // acknowledgement: control messages are not dropped.
    assert!(d.poll(53).unwrap().is_empty());
    assert_eq!(d.outstanding(1), 0);
    assert!(d.poll(54).unwrap().is_empty());
    let again = d.nic().0.wqe(1, start + 2);
    assert_eq!(
        ControlSend::decode(&again.inline_payload()).map(|s| s.messages),
        Ok(vec![
            ControlMessage::TptClear,
            ControlMessage::RdmaReady { incarnation: 5 }
        ])
    );
    // Behind them the protocol's PROBE (node 1 was found down) at the same time.
    let probe = d.nic().0.wqe(1, start + 3);
    assert_eq!(
        ControlSend::decode(&probe.inline_payload()).map(|s| s.messages),
        Ok(vec![ControlMessage::Probe { incarnation: 5 }])
    );
    assert_eq!(d.outstanding(1), 3);
    // A completion out of order, and one for a queue pair not in use: typed errors.
    let mut bad = cqe;
    bad.wqe_index = start + 5;
    assert!(d.nic().0.push_cqe(bad));
    assert_eq!(
        d.poll(5),
        Err(DriverError::CompletionOutOfOrder {
            qp: 1,
            expected: (start + 2) & 0xFF_FFFF,
            got: start + 5
        })
    );
    let mut d = lone(2);
    assert!(d.nic().0.push_cqe(Cqe {
        qp: 0,
        ..Cqe::default()
    }));
    assert_eq!(d.poll(1), Err(DriverError::UnknownQueuePair { qp: 0 }));
}

#[test]
fn configuration_and_nic_are_checked() {
    let nic = || LoneNic(NicState::new(0, 8));
    let mut c = config(0, 9, 0);
    assert!(matches!(
        Driver::new(nic(), c.clone()),
        Err(DriverError::BadConfig(_))
    ));
    c.node_count = 3;
    c.arena_len = 4096;
    assert!(matches!(
        Driver::new(nic(), c.clone()),
        Err(DriverError::ArenaTooSmall { .. })
    ));
    c.arena_len = ARENA_LEN;
    c.recv_buffer_bytes = 1000;
    assert!(matches!(
        Driver::new(nic(), c.clone()),
        Err(DriverError::BadConfig(_))
    ));
    c.recv_buffer_bytes = 1024;
    assert!(matches!(
        Driver::new(LoneNic(NicState::new(0, 2)), c.clone()),
        Err(DriverError::TooFewQueuePairs { needed: 3, have: 2 })
    ));
    let mut with_tpt = NicState::new(0, 8);
    with_tpt.tpt_log2 = 25;
    assert!(matches!(
        Driver::new(LoneNic(with_tpt), c.clone()),
        Err(DriverError::TptTooLarge { log2: 25 })
    ));
    let mut with_tpt = NicState::new(0, 8);
    with_tpt.tpt_log2 = 8;
    let d = Driver::new(LoneNic(with_tpt), c.clone()).unwrap();
    assert!(d.has_hardware_tpt(), "a NIC with a hardware TPT is driven");
    assert_eq!(d.hw_tpt().map(|t| t.entries()), Some(256));
    // The access trait is object safe: a driver over a boxed trait object.
    let boxed: Box<dyn nic_driver::NicAccess> = Box::new(nic());
    let mut dynamic = Driver::new(boxed, c.clone()).unwrap();
    dynamic.boot(0).unwrap();
    let mut d = Driver::new(nic(), c).unwrap();
    let l = RegionRef::new(0, 0);
    assert_eq!(
        d.rdma_write(1, l, l, 8, None, 0),
        Err(VerbsError::NotBooted)
    );
    d.boot(0).unwrap();
    assert_eq!(d.boot(0), Err(DriverError::AlreadyBooted));
}

/// Drivers on a fabric of fakes, with random reboots (between a post and its execution
/// too), registrations, deregistrations and writes: no write issued against an earlier
/// boot of its target succeeds, and at the end every node has joined, admits every other
/// and holds exact copies of their TPT parts.
#[test]
fn drivers_converge_after_random_reboots() {
    let (mut succeeded, mut refused_by_target) = (0, 0);
    for seed in 0..12u64 {
        let (mut c, r) = fake_nic::random_reboots(Fabric::new(4, 8), config, APP, seed, |s| {
            *s == CompletionStatus::Remote(Syndrome::RdmaDisabled)
        });
        (succeeded, refused_by_target) = (succeeded + r.succeeded, refused_by_target + r.refused);
        let n = 4;
        for p in 0..n {
            assert!(c.d(p).is_joined(), "seed {seed}: node {p} joined");
            for x in 0..n {
                if p == x {
                    continue;
                }
                assert!(!c.d(p).is_barred(x as NodeId), "seed {seed}: {p} bars {x}");
                let copy: Vec<TptEntry> = c
                    .d(p)
                    .tpt()
                    .remote_entries(x as NodeId)
                    .unwrap()
                    .copied()
                    .collect();
                let truth: Vec<TptEntry> = c.d(x).tpt().local_entries().copied().collect();
                assert_eq!(copy, truth, "seed {seed}: node {p}'s copy of node {x}");
            }
        }
    }
    assert!(succeeded > 50, "only {succeeded} writes succeeded");
    assert!(
        refused_by_target > 0,
        "no write ever reached a rebooted node"
    );
}

/// The regions `Completion::Deregistered` reported freed, by handle.
fn freed(done: &[Completion]) -> Vec<u32> {
    done.iter()
        .filter_map(|c| match c {
            Completion::Deregistered { entry } => Some(entry.handle),
            _ => None,
        })
        .collect()
}

/// Issue 16, defect 2: deregistration is a fence. Node 0 posts an RDMA WRITE against node
/// 1's region and its NIC holds it (in flight: without a hardware TPT it carries node 1's
/// physical address); node 1 deregisters the region. The region is not reported freed while
/// the write is outstanding, however long node 1 waits; node 2 (which never posted) and
/// node 0's driver (which dropped its copy at once) confirm, and node 0 only once its write
/// has completed. When the region is reported freed the write has landed, so memory the
/// application reuses from then on is never overwritten by it.
#[test]
fn a_region_is_freed_only_after_every_write_posted_against_it_has_landed() {
    let mut c = joined_cluster(3);
    let src = c
        .d(0)
        .register(0x10_0000, APP, 256, Protection::ReadOnly)
        .unwrap();
    let dst = c
        .d(1)
        .register(0x20_0000, APP + 0x2000, 256, Protection::ReadWrite)
        .unwrap();
    c.settle();
    assert_eq!(c.d(1).deregistrations().sent_to(dst.handle), vec![0, 2]);
    c.fabric.with(0, |s| {
        s.write(APP, &[0xAB; 64]);
        s.hold = true;
    });
    let (local, remote) = (
        RegionRef::new(src.handle, src.logical),
        RegionRef::new(dst.handle, dst.logical),
    );
    c.d(0).rdma_write(1, local, remote, 64, None, 5).unwrap();
    c.d(1).deregister(dst.handle).unwrap();
    assert_eq!(
        c.d(1).deregistration(dst.handle).map(|p| p.waiting),
        Some(vec![0, 2])
    );
    // Long past the resend interval (50): the write is still in node 0's NIC.
    c.run(30);
    assert_eq!(
        freed(&c.take(1)),
        vec![],
        "freed while a write is in flight"
    );
    assert_eq!(
        c.d(1).deregistration(dst.handle).map(|p| p.waiting),
        Some(vec![0]),
        "node 2 confirmed, node 0 has not"
    );
    assert!(
        c.d(0).tpt().remote(1, dst.handle).is_err(),
        "node 0 dropped its copy at once"
    );
    assert!(matches!(
        c.d(0).rdma_write(1, local, remote, 64, None, 6),
        Err(VerbsError::Protection(_))
    ));
    assert_eq!(c.fabric.with(1, |s| s.read(APP + 0x2000, 64)), vec![0; 64]);
    // Node 0's NIC sends the write; the region is freed only after it landed.
    c.fabric.with(0, |s| s.hold = false);
    let mut landed_before_freed = None;
    for _ in 0..50 {
        c.run(1);
        if !freed(&c.completions[1]).is_empty() {
            landed_before_freed = Some(c.fabric.with(1, |s| s.read(APP + 0x2000, 64)));
            break;
        }
    }
    assert_eq!(
        landed_before_freed,
        Some(vec![0xAB; 64]),
        "freed, with the write landed"
    );
    assert_eq!(freed(&c.take(1)), vec![dst.handle]);
    assert!(c.d(1).deregistration(dst.handle).is_none());
    // The application reuses the memory; nothing lands there any more.
    c.fabric.with(1, |s| s.write(APP + 0x2000, &[0x11; 64]));
    c.settle();
    assert_eq!(
        c.fabric.with(1, |s| s.read(APP + 0x2000, 64)),
        vec![0x11; 64]
    );
}

/// A peer that is down while the owner deregisters keeps the region pending (a powered-off
/// peer cannot be told apart from one cut off that still holds its copy); when it reboots,
/// the resent TPT_REMOVE reaches its new incarnation, which confirms, and the region is
/// freed.
#[test]
fn a_down_peer_keeps_a_region_pending_until_it_is_back_and_confirms() {
    let mut c = joined_cluster(3);
    let dst = c
        .d(1)
        .register(0x20_0000, APP + 0x2000, 256, Protection::ReadWrite)
        .unwrap();
    c.settle();
    c.fabric.power(0, false);
    c.d(1).deregister(dst.handle).unwrap();
    c.run(40);
    assert_eq!(freed(&c.take(1)), vec![]);
    assert!(c.d(1).is_barred(0), "node 0 NACKed PORT_DOWN: barred");
    assert_eq!(
        c.d(1).deregistration(dst.handle).map(|p| p.waiting),
        Some(vec![0]),
        "a barred peer is still waited for"
    );
    c.fabric.power(0, true);
    c.boot(0, 77);
    c.run(40);
    assert!(c.d(0).is_joined());
    assert_eq!(freed(&c.take(1)), vec![dst.handle]);
    assert!(c.d(1).deregistration(dst.handle).is_none());
}
