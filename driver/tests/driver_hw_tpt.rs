//! The driver on NICs with a hardware TPT (`fake_nic` with `tpt_log2` set): registration
//! programs the NIC's entry (and waits for it) before the STag is published, peers hold
//! STag + virtual address, RDMA is posted with them and translated by the target's NIC,
//! deregistration invalidates before an index is reused with another key, the exception
//! queue is answered with the head's tag, and a reboot leaves stale STags refused.

mod fake_nic;

use fake_nic::{Cluster, Fabric, TptOutcome};
use nic_abi::{csr, CompletionStatus, Syndrome, Wqe, WqeOpcode};
use nic_driver::hw_tpt::{stag_index, stag_key, HwTptError, BUSY_POLLS};
use nic_driver::tpt::{Protection, ProtectionError, RegionRef, TptEntry};
use nic_driver::{Completion, DriverConfig, NodeId, VerbsError};

const ARENA: u32 = 0x1_0000;
const ARENA_LEN: u32 = 0x8_0000;
const APP: u32 = 0x9_0000;
/// Virtual base of the regions (not their physical address: the TPT translates).
const VA: u64 = 0x7F00_0000_0000;

fn config(node: NodeId, n: usize, incarnation: u32) -> DriverConfig {
    let mut c = fake_nic::small_config(node, n, ARENA, ARENA_LEN, incarnation);
    c.first_handle = incarnation.wrapping_mul(0x9E37_79B9);
    c.exception_poll_interval = 10;
    c
}

fn joined(n: usize, tpt_log2: u64) -> Cluster {
    let mut c = Cluster::new(Fabric::with_tpt(n, 8, tpt_log2), config);
    for i in 0..n {
        c.boot(i, 10 + i as u32);
    }
    c.settle();
    for i in 0..n {
        assert!(c.d(i).is_joined(), "node {i} joined");
    }
    c
}

fn status_of(c: &[Completion], wr: u64) -> CompletionStatus {
    c.iter()
        .find_map(|x| match x {
            Completion::Send { wr_id, status, .. } if *wr_id == wr => Some(*status),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no completion for {wr}: {c:?}"))
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

/// Node `n`'s local region `L` (read-write) at `APP`, for sources and READ sinks.
fn local_region(c: &mut Cluster, n: usize) -> TptEntry {
    c.d(n)
        .register(0x5000_0000, APP, 0x1000, Protection::ReadWrite)
        .unwrap()
}

#[test]
fn registration_programs_the_entry_then_publishes_stag_and_virtual_address() {
    let mut c = joined(3, 8);
    let reads_before = c.fabric.with(1, |s| s.csr_reads);
    let e = c
        .d(1)
        .register(VA, APP + 0x2000, 0x800, Protection::WriteOnly)
        .unwrap();
    let (log, reads) = c.fabric.with(1, |s| (s.tpt_log.clone(), s.csr_reads));
    assert_eq!(log.len(), 1, "one command: {log:?}");
    let (command, index, entry) = log[0];
    assert_eq!(command, csr::TPT_COMMAND_WRITE);
    assert_eq!(index, stag_index(e.handle), "the STag's index");
    assert_eq!(
        entry.word0,
        csr::TPT_VALID | csr::TPT_REMOTE_WRITE | (stag_key(e.handle) as u64) << 8,
        "valid, write right only, the STag's key"
    );
    assert_eq!(
        (entry.vaddr, entry.length, entry.paddr),
        (VA, 0x800, APP + 0x2000)
    );
    assert!(
        reads - reads_before >= 2,
        "TPT_STATUS was read until busy cleared (the fake shows busy once)"
    );
    assert_eq!(c.d(1).stats().tpt_commands, 1);
    c.settle();
    for peer in [0, 2] {
        let copy = *c.d(peer).tpt().remote(1, e.handle).unwrap();
        assert_eq!(
            copy,
            TptEntry { physical: 0, ..e },
            "node {peer} holds STag + virtual address, not the physical address"
        );
    }
    assert_eq!(
        c.d(1).published_local_entries(),
        vec![TptEntry { physical: 0, ..e }]
    );
}

#[test]
fn rdma_is_posted_with_stag_and_virtual_address_and_the_target_nic_translates() {
    let mut c = joined(2, 8);
    let src = local_region(&mut c, 0);
    let sink = c
        .d(1)
        .register(VA, APP + 0x4000, 0x1000, Protection::ReadWrite)
        .unwrap();
    c.settle();
    let data: Vec<u8> = (0..64u8).collect();
    c.fabric.with(0, |s| s.write(APP, &data));
    let pi = c.d(0).next_send_index(1).unwrap();
    c.d(0)
        .rdma_write(
            1,
            RegionRef::new(src.handle, 0x5000_0000),
            RegionRef::new(sink.handle, VA + 0x100),
            64,
            None,
            7,
        )
        .unwrap();
    let wqe: Wqe = c.fabric.with(0, |s| s.wqe(1, pi));
    assert_eq!(wqe.opcode, WqeOpcode::RdmaWrite as u8);
    assert_eq!(wqe.remote_vaddr, VA + 0x100, "word 3: the virtual address");
    assert_eq!(wqe.stag, sink.handle, "word 4: the STag");
    assert_eq!(wqe.local_addr, APP, "the local side stays physical");
    c.settle();
    assert_eq!(status_of(&c.take(0), 7), CompletionStatus::Success);
    assert_eq!(c.fabric.with(1, |s| s.read(APP + 0x4100, 64)), data);
    // READ and an atomic through the same entry.
    c.d(0)
        .rdma_read(
            1,
            RegionRef::new(src.handle, 0x5000_0200),
            RegionRef::new(sink.handle, VA + 0x100),
            64,
            8,
        )
        .unwrap();
    c.fabric
        .with(1, |s| s.write(APP + 0x4008, &41u64.to_le_bytes()));
    c.d(0)
        .fetch_add(
            1,
            RegionRef::new(src.handle, 0x5000_0400),
            RegionRef::new(sink.handle, VA + 8),
            1,
            9,
        )
        .unwrap();
    c.settle();
    let done = c.take(0);
    assert_eq!(status_of(&done, 8), CompletionStatus::Success);
    assert_eq!(status_of(&done, 9), CompletionStatus::Success);
    assert_eq!(c.fabric.with(0, |s| s.read(APP + 0x200, 64)), data);
    assert_eq!(
        c.fabric.with(0, |s| s.read(APP + 0x400, 8)),
        41u64.to_le_bytes()
    );
    assert_eq!(
        c.fabric.with(1, |s| s.read(APP + 0x4008, 8)),
        42u64.to_le_bytes()
    );
    // Fig. 6 still runs first: beyond the region is refused and nothing is posted.
    let before = c.fabric.with(0, |s| s.qps[1].sq_pi);
    assert!(matches!(
        c.d(0).rdma_write(
            1,
            RegionRef::new(src.handle, 0x5000_0000),
            RegionRef::new(sink.handle, VA + 0x1000 - 8),
            16,
            None,
            10
        ),
        Err(VerbsError::Protection(ProtectionError::OutOfBounds { .. }))
    ));
    assert_eq!(
        c.d(0).rdma_write(
            1,
            RegionRef::new(src.handle, 0x5000_0000),
            RegionRef::new(sink.handle, VA + 4),
            8,
            None,
            11
        ),
        Err(VerbsError::MisalignedRemote { vaddr: VA + 4 })
    );
    assert_eq!(c.fabric.with(0, |s| s.qps[1].sq_pi), before, "nothing sent");
}

#[test]
fn deregistration_invalidates_first_and_a_reused_index_gets_another_key() {
    // 16 entries, so indices come round quickly.
    let mut c = joined(2, 4);
    let src = local_region(&mut c, 0);
    let first = c
        .d(1)
        .register(VA, APP, 0x100, Protection::ReadWrite)
        .unwrap();
    c.settle();
    let old_remote = *c.d(0).tpt().remote(1, first.handle).unwrap();
    c.d(1).deregister(first.handle).unwrap();
    let log = c.fabric.with(1, |s| s.tpt_log.clone());
    let (command, index, entry) = *log.last().unwrap();
    assert_eq!(command, csr::TPT_COMMAND_INVALIDATE);
    assert_eq!(index, stag_index(first.handle));
    assert!(!entry.valid(), "the entry is invalid in the NIC");
    // The invalidate stops later requests, not a WRITE whose first cell passed the check
    // before it: the memory is freed only when the peer has confirmed (crate::dereg).
    assert_eq!(
        c.d(1).deregistration(first.handle).map(|p| p.waiting),
        Some(vec![0])
    );
    c.settle();
    assert!(
        c.d(0).tpt().remote(1, first.handle).is_err(),
        "the peer dropped the STag"
    );
    assert_eq!(freed(&c.take(1)), vec![first.handle]);
    // Every other index is used before this one comes back, with another key.
    let mut stags = vec![];
    for k in 0..16 {
        let e = c
            .d(1)
            .register(
                VA + 0x1000 * k,
                APP + 0x100 * k as u32,
                0x100,
                Protection::ReadWrite,
            )
            .unwrap();
        stags.push(e.handle);
    }
    let again = *stags.last().unwrap();
    assert_eq!(stag_index(again), stag_index(first.handle));
    assert_ne!(again, first.handle, "the key changed");
    assert_eq!(
        c.d(1).register(VA, APP, 8, Protection::ReadWrite),
        Err(VerbsError::HardwareTpt(HwTptError::TableFull {
            entries: 16
        })),
        "the table is full"
    );
    let hw = c.fabric.with(1, |s| s.tpt[&stag_index(again)]);
    assert_eq!(hw.key(), stag_key(again));
    c.settle();
    // A request still carrying the old STag (as one in flight during the deregistration
    // would) is refused by the NIC's key check and writes nothing.
    c.fabric.with(1, |s| s.write(APP, &[0xEE; 64]));
    let index = c.d(0).next_send_index(1).unwrap();
    c.d(0)
        .rdma_write(
            1,
            RegionRef::new(src.handle, 0x5000_0000),
            RegionRef::new(again, VA + 0xF000),
            8,
            None,
            20,
        )
        .unwrap();
    let mut wqe = c.fabric.with(0, |s| s.wqe(1, index));
    wqe.stag = old_remote.handle;
    wqe.remote_vaddr = VA;
    c.fabric.with(0, |s| {
        let slot = index % (1 << s.qps[1].sq_log2);
        let base = s.qps[1].sq_base;
        s.put_words(base + slot * 64, &wqe.to_words())
    });
    c.settle();
    assert_eq!(
        status_of(&c.take(0), 20),
        CompletionStatus::Remote(Syndrome::RemoteAccessError)
    );
    assert_eq!(c.fabric.with(1, |s| s.read(APP, 64)), vec![0xEE; 64]);
}

#[test]
fn exceptions_are_answered_with_the_heads_tag() {
    let mut c = joined(2, 8);
    let src = local_region(&mut c, 0);
    let sink = c
        .d(1)
        .register(VA, APP + 0x4000, 0x1000, Protection::ReadWrite)
        .unwrap();
    let gone = c
        .d(1)
        .register(VA + 0x10_0000, APP + 0x6000, 0x100, Protection::ReadWrite)
        .unwrap();
    c.settle();
    c.d(1).deregister(gone.handle).unwrap();
    // Node 0 writes with the deregistered STag before the TPT_REMOVE arrives: the entry
    // is invalid, the request waits in node 1's exception queue, node 1's driver refuses it.
    c.d(0)
        .rdma_write(
            1,
            RegionRef::new(src.handle, 0x5000_0000),
            RegionRef::new(gone.handle, VA + 0x10_0000),
            8,
            None,
            30,
        )
        .unwrap();
    c.fabric.with(1, |s| s.write(APP + 0x6000, &[0xCD; 8]));
    c.settle();
    assert_eq!(
        status_of(&c.take(0), 30),
        CompletionStatus::Remote(Syndrome::RemoteAccessError)
    );
    assert_eq!(c.fabric.with(1, |s| s.read(APP + 0x6000, 8)), vec![0xCD; 8]);
    let answers = c.fabric.with(1, |s| s.exc_answers.clone());
    assert_eq!(answers.len(), 1);
    let (head, value) = answers[0];
    assert_eq!(head.stag, gone.handle);
    assert_eq!(value & csr::EXC_ANSWER_TRANSLATE, 0, "refused");
    assert_eq!(c.d(1).stats().exceptions_refused, 1);
    // The NIC cleared a registered entry's valid bit, as a used one-shot entry or a
    // request with the invalidate flag leaves it: the driver's own copy of the region
    // does not bring it back. The request is refused (echoing tag 1), nothing is written,
    // and the region is retired everywhere.
    c.fabric.with(1, |s| {
        s.tpt.get_mut(&stag_index(sink.handle)).unwrap().word0 &= !csr::TPT_VALID
    });
    c.fabric.with(1, |s| s.write(APP + 0x4040, &[0xCD; 64]));
    let data: Vec<u8> = (100..164).collect();
    c.fabric.with(0, |s| s.write(APP, &data));
    c.d(0)
        .rdma_write(
            1,
            RegionRef::new(src.handle, 0x5000_0000),
            RegionRef::new(sink.handle, VA + 0x40),
            64,
            None,
            31,
        )
        .unwrap();
    c.settle();
    assert_eq!(
        status_of(&c.take(0), 31),
        CompletionStatus::Remote(Syndrome::RemoteAccessError)
    );
    assert_eq!(
        c.fabric.with(1, |s| s.read(APP + 0x4040, 64)),
        vec![0xCD; 64]
    );
    let (stale, answers) = c
        .fabric
        .with(1, |s| (s.exc_stale_answers, s.exc_answers.clone()));
    let (head, value) = answers[1];
    assert_eq!(head.tag, 1, "the second exception has tag 1");
    assert_eq!(
        value,
        csr::exc_answer(1 << 16 | 1, None),
        "refuse, echoing tag 1"
    );
    assert_eq!(stale, 0, "every answer matched its head");
    assert_eq!(c.d(1).stats().exceptions_used_up, 1);
    assert!(c.d(1).tpt().local(sink.handle).is_none(), "retired");
    assert!(
        c.d(0).tpt().remote(1, sink.handle).is_err(),
        "the peer's copy too"
    );
    assert!(freed(&c.take(1)).contains(&sink.handle));
}

#[test]
fn a_head_the_nic_timed_out_is_not_answered_and_the_next_gets_its_own_tag() {
    let mut c = joined(2, 8);
    let src = local_region(&mut c, 0);
    let gone = c
        .d(1)
        .register(VA, APP + 0x6000, 0x100, Protection::ReadWrite)
        .unwrap();
    c.settle();
    c.d(1).deregister(gone.handle).unwrap();
    let write = |c: &mut Cluster, wr: u64| {
        c.d(0)
            .rdma_write(
                1,
                RegionRef::new(src.handle, 0x5000_0000),
                RegionRef::new(gone.handle, VA),
                8,
                None,
                wr,
            )
            .unwrap()
    };
    // Both are posted while node 0 still holds the STag (the TPT_REMOVE is on its way).
    // The first request's head (tag 0) times out in the NIC before the driver looks.
    write(&mut c, 50);
    write(&mut c, 51);
    c.fabric.step();
    assert_eq!(c.fabric.with(1, |s| s.exc_head0()) & 1, 1, "a head waits");
    c.fabric.with(1, |s| s.time_out_exception());
    c.fabric.step();
    let now = c.now;
    let refused = c.d(0).poll(now).unwrap();
    assert_eq!(
        status_of(&refused, 50),
        CompletionStatus::Remote(Syndrome::RemoteAccessError)
    );
    // The next one is answered by the driver, echoing tag 1: nothing is ignored.
    c.settle();
    assert_eq!(
        status_of(&c.take(0), 51),
        CompletionStatus::Remote(Syndrome::RemoteAccessError)
    );
    let (stale, answers) = c
        .fabric
        .with(1, |s| (s.exc_stale_answers, s.exc_answers.clone()));
    assert_eq!(answers.len(), 1, "only the second head was answered");
    assert_eq!(answers[0].0.tag, 1);
    assert_eq!(
        (answers[0].1 & csr::EXC_TAG_MASK) >> csr::EXC_TAG_SHIFT,
        1,
        "the answer echoes tag 1"
    );
    assert_eq!(stale, 0);
}

#[test]
fn a_reboot_empties_the_nic_table_and_old_stags_are_refused() {
    let mut c = joined(2, 8);
    let src = local_region(&mut c, 0);
    let old = c
        .d(1)
        .register(VA, APP + 0x4000, 0x1000, Protection::ReadWrite)
        .unwrap();
    c.settle();
    c.fabric.power(1, true);
    assert!(
        c.fabric.with(1, |s| s.tpt.is_empty()),
        "the reset cleared the table"
    );
    c.boot(1, 99);
    let new = c
        .d(1)
        .register(VA, APP + 0x4000, 0x1000, Protection::ReadWrite)
        .unwrap();
    assert_ne!(new.handle, old.handle, "a new boot draws other STags");
    // The old STag against the new table: refused outright or punted (and then refused).
    let outcome = c.fabric.with(1, |s| {
        let o = s.tpt_check((0, 1, 0), 0, old.handle, VA, 8, 2, false, true);
        s.exc_head = None;
        o
    });
    assert!(
        matches!(outcome, TptOutcome::Refuse | TptOutcome::Wait),
        "{outcome:?}"
    );
    c.settle();
    assert!(c.d(1).is_joined());
    // The rejoin protocol: node 0 dropped the old entry; it holds only the new STag.
    assert_eq!(
        c.d(0).tpt().remote(1, old.handle).err(),
        Some(ProtectionError::UnknownRemoteHandle {
            node: 1,
            handle: old.handle
        })
    );
    assert!(c.d(0).tpt().remote(1, new.handle).is_ok());
    assert_eq!(
        c.d(0).rdma_write(
            1,
            RegionRef::new(src.handle, 0x5000_0000),
            RegionRef::new(old.handle, VA),
            8,
            None,
            40
        ),
        Err(VerbsError::Protection(
            ProtectionError::UnknownRemoteHandle {
                node: 1,
                handle: old.handle
            }
        ))
    );
}

#[test]
fn a_tpt_that_stays_busy_is_an_error_and_nothing_is_published() {
    let mut c = joined(2, 8);
    c.fabric.with(1, |s| s.tpt_stuck = true);
    let before = c.fabric.with(1, |s| s.qps[0].sq_pi);
    let r = c.d(1).register(VA, APP, 0x100, Protection::ReadWrite);
    assert!(
        matches!(
            r,
            Err(VerbsError::HardwareTpt(HwTptError::Busy { reads, .. })) if reads == BUSY_POLLS
        ),
        "{r:?}"
    );
    assert_eq!(c.d(1).tpt().local_len(), 0, "not registered");
    assert_eq!(
        c.fabric.with(1, |s| s.qps[0].sq_pi),
        before,
        "no TPT_UPDATE sent"
    );
    c.fabric.with(1, |s| s.tpt_stuck = false);
    let free = c.d(1).hw_tpt().unwrap().free_count();
    assert_eq!(
        free, 255,
        "the index whose write may still land is not reused"
    );
}

/// The random-reboot property of `driver_verbs.rs` on NICs with a hardware TPT: drivers
/// register, deregister, write and reboot (posts stay in flight across reboots); no write
/// issued against an earlier boot of its target succeeds, and at the end every node has
/// joined, admits every other and holds exactly the published copy of its TPT part, and
/// every NIC's valid entries are exactly its driver's local part.
#[test]
fn drivers_with_hardware_tpts_converge_after_random_reboots() {
    let (mut succeeded, mut refused_by_target) = (0, 0);
    for seed in 0..12u64 {
        let fabric = Fabric::with_tpt(4, 8, 8);
        let (mut c, r) = fake_nic::random_reboots(fabric, config, APP, seed, |s| {
            matches!(
                s,
                CompletionStatus::Remote(Syndrome::RdmaDisabled | Syndrome::RemoteAccessError)
            )
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
                let truth = c.d(x).published_local_entries();
                assert_eq!(copy, truth, "seed {seed}: node {p}'s copy of node {x}");
            }
            // The NIC's valid entries are the driver's local part, entry for entry.
            let mut nic: Vec<(u32, u64, u32, u32)> = c.fabric.with(p, |s| {
                s.tpt
                    .iter()
                    .filter(|(_, e)| e.valid())
                    .map(|(&i, e)| (i << 8 | e.key() as u32, e.vaddr, e.length, e.paddr))
                    .collect()
            });
            nic.sort();
            let local: Vec<(u32, u64, u32, u32)> = c
                .d(p)
                .tpt()
                .local_entries()
                .map(|e| (e.handle, e.logical, e.length, e.physical))
                .collect();
            assert_eq!(nic, local, "seed {seed}: node {p}'s NIC table");
        }
        assert!(!r.issued.is_empty());
    }
    assert!(succeeded > 50, "only {succeeded} writes succeeded");
    assert!(
        refused_by_target > 0,
        "no write ever reached a rebooted node"
    );
}

/// Issue 16, defect 3: a one-shot STag stays used up across the exception path. Node 1
/// registers a one-shot region (the NIC's entry has the one-shot bit). Node 0 posts two
/// writes through it back to back: the first passes the NIC's check and uses the entry
/// up; the second misses into the exception queue, and node 1's driver refuses it
/// although its local part still held the region: nothing of it is written. The driver
/// retires the region (out of its local part, TPT_REMOVE to both peers, reported freed),
/// so node 2's later write is refused before it is posted.
#[test]
fn a_used_one_shot_stag_is_refused_through_the_exception_path_and_retired() {
    let mut c = joined(3, 8);
    let src = local_region(&mut c, 0);
    let src2 = local_region(&mut c, 2);
    let once = c
        .d(1)
        .register_one_shot(VA, APP + 0x4000, 0x100, Protection::ReadWrite)
        .unwrap();
    c.settle();
    let word0 = c.fabric.with(1, |s| s.tpt[&stag_index(once.handle)].word0);
    assert_eq!(
        word0 & csr::TPT_ONE_SHOT,
        csr::TPT_ONE_SHOT,
        "one-shot entry"
    );
    assert!(c.d(2).tpt().remote(1, once.handle).is_ok(), "published");
    let first: Vec<u8> = (0..64).collect();
    c.fabric.with(0, |s| {
        s.write(APP, &first);
        s.write(APP + 0x100, &[0xEE; 64]);
    });
    for (wr, at) in [(60u64, 0x5000_0000u64), (61, 0x5000_0100)] {
        c.d(0)
            .rdma_write(
                1,
                RegionRef::new(src.handle, at),
                RegionRef::new(once.handle, VA),
                64,
                None,
                wr,
            )
            .unwrap();
    }
    c.settle();
    let done = c.take(0);
    assert_eq!(status_of(&done, 60), CompletionStatus::Success);
    assert_eq!(
        status_of(&done, 61),
        CompletionStatus::Remote(Syndrome::RemoteAccessError),
        "the second use is refused"
    );
    assert_eq!(
        c.fabric.with(1, |s| s.read(APP + 0x4000, 64)),
        first,
        "only the first write landed"
    );
    assert_eq!(c.d(1).stats().exceptions_used_up, 1);
    assert!(c.d(1).tpt().local(once.handle).is_none(), "retired");
    for peer in [0, 2] {
        assert!(
            c.d(peer).tpt().remote(1, once.handle).is_err(),
            "node {peer} dropped its copy"
        );
    }
    assert_eq!(freed(&c.take(1)), vec![once.handle]);
    assert!(matches!(
        c.d(2).rdma_write(
            1,
            RegionRef::new(src2.handle, 0x5000_0000),
            RegionRef::new(once.handle, VA),
            8,
            None,
            62
        ),
        Err(VerbsError::Protection(
            ProtectionError::UnknownRemoteHandle { .. }
        ))
    ));
}

/// A request with the invalidate flag clears an ordinary entry when it is executed: the
/// next request through the STag is refused (exception path), the region retired.
#[test]
fn a_request_with_invalidate_clears_the_entry_for_every_later_request() {
    let mut c = joined(2, 8);
    let src = local_region(&mut c, 0);
    let sink = c
        .d(1)
        .register(VA, APP + 0x4000, 0x100, Protection::ReadWrite)
        .unwrap();
    c.settle();
    let (local, remote) = (
        RegionRef::new(src.handle, 0x5000_0000),
        RegionRef::new(sink.handle, VA),
    );
    let pi = c.d(0).next_send_index(1).unwrap();
    c.d(0)
        .rdma_read_invalidate(1, local, remote, 8, 70)
        .unwrap();
    assert!(
        c.fabric.with(0, |s| s.wqe(1, pi)).invalidate,
        "WQE word 0 bit 8"
    );
    c.d(0).rdma_write(1, local, remote, 8, None, 71).unwrap();
    c.settle();
    let done = c.take(0);
    assert_eq!(status_of(&done, 70), CompletionStatus::Success);
    assert_eq!(
        status_of(&done, 71),
        CompletionStatus::Remote(Syndrome::RemoteAccessError)
    );
    assert_eq!(c.d(1).stats().exceptions_used_up, 1);
    assert!(c.d(1).tpt().local(sink.handle).is_none(), "retired");
    assert_eq!(freed(&c.take(1)), vec![sink.handle]);
}

/// Without a hardware TPT one-shot and invalidate cannot be enforced: refused, nothing
/// registered or sent.
#[test]
fn one_shot_and_invalidate_need_a_hardware_tpt() {
    let mut c = Cluster::new(Fabric::new(2, 8), config);
    for i in 0..2 {
        c.boot(i, 10 + i as u32);
    }
    c.settle();
    assert_eq!(
        c.d(1)
            .register_one_shot(VA, APP, 0x100, Protection::ReadWrite),
        Err(VerbsError::NeedsHardwareTpt {
            what: "one-shot registration"
        })
    );
    assert_eq!(c.d(1).tpt().local_len(), 0);
    let src = local_region(&mut c, 0);
    let dst = c
        .d(1)
        .register(0x6000_0000, APP + 0x4000, 0x100, Protection::ReadWrite)
        .unwrap();
    c.settle();
    let before = c.d(0).next_send_index(1);
    let r = c.d(0).rdma_write_invalidate(
        1,
        RegionRef::new(src.handle, 0x5000_0000),
        RegionRef::new(dst.handle, 0x6000_0000),
        8,
        None,
        80,
    );
    assert!(
        matches!(r, Err(VerbsError::NeedsHardwareTpt { .. })),
        "{r:?}"
    );
    assert_eq!(c.d(0).next_send_index(1), before, "nothing sent");
}
