//! A host with two NICs (`driver/src/multi_nic.rs`, source 003) on fake NICs: node 1's
//! driver drives fake NIC 1 (its first) and fake NIC 2 (its second, added with
//! `Driver::add_nic`); node 0 is a peer. A request reaching NIC 2 is made with the fake's
//! `tpt_check`, as the NIC's responder would look the STag up; what the driver answers in
//! the exception queue, and what both tables hold after, are the effects checked.

mod fake_nic;

use fake_nic::{Cluster, Fabric, TptOutcome};
use nic_abi::csr;
use nic_driver::hw_tpt::stag_index;
use nic_driver::multi_nic::{SlowPathOutcome, EXC_HEAD_CHECK_ONLY};
use nic_driver::tpt::{Protection, TptEntry};
use nic_driver::{Completion, DriverConfig, DriverError, NodeId};

const ARENA: u32 = 0x1_0000;
const ARENA_LEN: u32 = 0x8_0000;
const APP: u32 = 0x9_0000;
const VA: u64 = 0x7F00_0000_0000;
/// Fake NIC 2 is node 1's second NIC.
const SECOND: usize = 2;

fn config(node: NodeId, _fakes: usize, incarnation: u32) -> DriverConfig {
    let mut c = fake_nic::small_config(node, 2, ARENA, ARENA_LEN, incarnation);
    c.first_handle = incarnation.wrapping_mul(0x9E37_79B9);
    c.exception_poll_interval = 10;
    c.nics = 2;
    c
}

/// Nodes 0 and 1 joined; node 1 has fake NIC 2 as its second NIC.
fn two_nic_host() -> Cluster {
    let mut c = Cluster::new(Fabric::with_tpt(3, 8, 8), config);
    c.boot(0, 10);
    c.boot(1, 11);
    let second = c.fabric.nic(SECOND);
    assert_eq!(c.d(1).add_nic(second).unwrap(), 1);
    c.settle();
    assert!(c.d(0).is_joined() && c.d(1).is_joined());
    c
}

fn sink(c: &mut Cluster, one_shot: bool) -> TptEntry {
    let d = c.d(1);
    let e = if one_shot {
        d.register_one_shot(VA, APP + 0x4000, 0x100, Protection::ReadWrite)
    } else {
        d.register(VA, APP + 0x4000, 0x100, Protection::ReadWrite)
    };
    let e = e.unwrap();
    c.settle();
    e
}

/// A WRITE of 64 bytes at `VA + 0x40` reaching fake NIC `nic`, request id `id`.
fn write_at(c: &mut Cluster, nic: usize, stag: u32, id: u32) -> TptOutcome {
    c.fabric.with(nic, |s| {
        s.tpt_check((0, 1, id), 1, stag, VA + 0x40, 64, 2, false, true)
    })
}

/// The request waits in NIC `nic`'s exception queue; the driver answers it.
fn answer(c: &mut Cluster, nic: usize, stag: u32, id: u32) -> TptOutcome {
    assert_eq!(write_at(c, nic, stag, id), TptOutcome::Wait, "a miss");
    c.run(3);
    let out = write_at(c, nic, stag, id);
    assert_ne!(out, TptOutcome::Wait, "answered");
    out
}

fn valid_in(c: &Cluster, nic: usize, stag: u32) -> bool {
    c.fabric.with(nic, |s| {
        s.tpt
            .get(&stag_index(stag))
            .is_some_and(|e| e.valid() && e.key() == stag as u8)
    })
}

#[test]
fn a_request_at_the_other_nic_migrates_the_stag_there() {
    let mut c = two_nic_host();
    let s = sink(&mut c, false);
    assert!(valid_in(&c, 1, s.handle) && !valid_in(&c, SECOND, s.handle));
    let paddr = APP + 0x4040;
    assert_eq!(
        answer(&mut c, SECOND, s.handle, 1),
        TptOutcome::Translate(paddr)
    );
    assert!(!valid_in(&c, 1, s.handle), "moved out of the first NIC");
    assert!(valid_in(&c, SECOND, s.handle), "installed in the second");
    assert_eq!(c.d(1).multi_nic().holder(s.handle), 1);
    // The next request at the second NIC takes the fast path.
    assert_eq!(
        write_at(&mut c, SECOND, s.handle, 2),
        TptOutcome::Translate(paddr)
    );
    // The route comes back: the STag migrates back.
    assert_eq!(answer(&mut c, 1, s.handle, 3), TptOutcome::Translate(paddr));
    assert!(valid_in(&c, 1, s.handle) && !valid_in(&c, SECOND, s.handle));
    let st = c.d(1).multi_nic().stats();
    assert_eq!(st.migrated, 2);
    let log = c.d(1).multi_nic_mut().take_slow_path();
    assert_eq!(
        log.iter().map(|p| (p.nic, p.outcome)).collect::<Vec<_>>(),
        vec![
            (1, SlowPathOutcome::Migrated),
            (0, SlowPathOutcome::Migrated)
        ]
    );
    assert!(c.d(1).tpt().local(s.handle).is_some(), "still registered");
    // Deregistration invalidates in the NIC that holds it.
    answer(&mut c, SECOND, s.handle, 4);
    c.d(1).deregister(s.handle).unwrap();
    assert!(!valid_in(&c, SECOND, s.handle) && !valid_in(&c, 1, s.handle));
}

#[test]
fn an_stag_no_nic_of_the_host_holds_is_refused() {
    let mut c = two_nic_host();
    let s = sink(&mut c, false);
    let forged = s.handle ^ 0x1; // same index, another key
    assert_eq!(answer(&mut c, SECOND, forged, 1), TptOutcome::Refuse);
    assert_eq!(answer(&mut c, SECOND, 0x00AB_CD00, 2), TptOutcome::Refuse);
    assert!(valid_in(&c, 1, s.handle), "the real region is untouched");
    assert!(!valid_in(&c, SECOND, s.handle));
    assert_eq!(c.d(1).multi_nic().stats().refused_unknown, 2);
    assert_eq!(c.d(1).stats().exceptions_refused, 2);
}

/// A one-shot key used through the first NIC is not installed in the second: the replay
/// there is refused and the region retired.
#[test]
fn a_used_one_shot_key_is_not_replayed_through_the_other_nic() {
    let mut c = two_nic_host();
    let s = sink(&mut c, true);
    assert_eq!(
        write_at(&mut c, 1, s.handle, 1),
        TptOutcome::Translate(APP + 0x4040)
    );
    assert!(!valid_in(&c, 1, s.handle), "used up by the first NIC");
    assert_eq!(answer(&mut c, SECOND, s.handle, 2), TptOutcome::Refuse);
    assert!(!valid_in(&c, SECOND, s.handle), "not installed");
    assert!(c.d(1).tpt().local(s.handle).is_none(), "retired");
    assert_eq!(c.d(1).multi_nic().stats().refused_used_up, 1);
    c.settle();
    assert!(
        c.d(0).tpt().remote(1, s.handle).is_err(),
        "the peer dropped it"
    );
    assert!(c
        .take(1)
        .iter()
        .any(|x| matches!(x, Completion::Deregistered { entry } if entry.handle == s.handle)));
}

/// An unused one-shot key reaching the second NIC is answered once from the first NIC's
/// entry, which is invalidated; it is installed nowhere, so a second use fails on both.
#[test]
fn an_unused_one_shot_key_serves_one_request_through_the_other_nic() {
    let mut c = two_nic_host();
    let s = sink(&mut c, true);
    assert_eq!(
        answer(&mut c, SECOND, s.handle, 1),
        TptOutcome::Translate(APP + 0x4040)
    );
    assert!(!valid_in(&c, 1, s.handle) && !valid_in(&c, SECOND, s.handle));
    assert_eq!(c.d(1).multi_nic().stats().migrated_used_up, 1);
    assert!(c.d(1).tpt().local(s.handle).is_none(), "used up: retired");
    assert_eq!(answer(&mut c, SECOND, s.handle, 2), TptOutcome::Refuse);
    assert_eq!(answer(&mut c, 1, s.handle, 3), TptOutcome::Refuse);
}

/// The holder's entry is taken (read and invalidated in one TPT command): a request
/// already inside the holder's receive path when the route changed, looked up right after
/// the driver read the entry, cannot use a one-shot key that the driver then also answers
/// through the other NIC. With a read and a separate invalidate, that request used the key
/// at the holder and the driver replayed it through the second NIC (two uses of a
/// one-shot key).
#[test]
fn a_one_shot_key_is_not_used_at_the_holder_while_it_migrates() {
    let mut c = two_nic_host();
    let s = sink(&mut c, true);
    c.fabric.with(1, |n| {
        n.race_after_read = Some(((0, 1, 77), s.handle, VA + 0x40, 64, 2));
    });
    let second = answer(&mut c, SECOND, s.handle, 1);
    let raced = c.fabric.with(1, |n| n.raced.clone());
    assert_eq!(raced.len(), 1, "the racing lookup ran");
    let uses = raced
        .iter()
        .chain([&second])
        .filter(|o| matches!(o, TptOutcome::Translate(_)))
        .count();
    assert_eq!(
        uses, 1,
        "one-shot key used {uses} times: {raced:?}, {second:?}"
    );
    assert_eq!(second, TptOutcome::Translate(APP + 0x4040));
    let log = c.fabric.with(1, |n| n.tpt_log.clone());
    assert!(log.iter().any(|(cmd, _, _)| *cmd == csr::TPT_COMMAND_TAKE));
    assert!(!log.iter().any(|(cmd, _, _)| *cmd == csr::TPT_COMMAND_READ));
}

/// A request with the invalidate flag at the second NIC is served and the key is gone
/// from both NICs.
#[test]
fn an_invalidating_request_at_the_other_nic_uses_the_key_up() {
    let mut c = two_nic_host();
    let s = sink(&mut c, false);
    let out = |c: &mut Cluster, id| {
        c.fabric.with(SECOND, |n| {
            n.tpt_check((0, 1, id), 1, s.handle, VA + 0x40, 64, 2, true, true)
        })
    };
    assert_eq!(out(&mut c, 1), TptOutcome::Wait);
    let head0 = c.fabric.with(SECOND, |n| n.exc_head0());
    assert_eq!(head0 & csr::EXC_HEAD_INVALIDATE, csr::EXC_HEAD_INVALIDATE);
    assert_eq!(head0 & EXC_HEAD_CHECK_ONLY, 0);
    c.run(3);
    assert_eq!(out(&mut c, 1), TptOutcome::Translate(APP + 0x4040));
    assert!(!valid_in(&c, 1, s.handle) && !valid_in(&c, SECOND, s.handle));
    assert!(c.d(1).tpt().local(s.handle).is_none());
}

#[test]
fn add_nic_checks_the_configuration_and_the_table_size() {
    let mut c = Cluster::new(Fabric::with_tpt(4, 8, 8), config);
    c.boot(0, 10);
    c.fabric.with(3, |s| s.tpt_log2 = 6);
    let e = {
        let n = c.fabric.nic(3);
        c.d(0).add_nic(n)
    }
    .unwrap_err();
    assert!(
        matches!(&e, DriverError::BadConfig(m) if m.contains("table size")),
        "{e}"
    );
    {
        let n = c.fabric.nic(2);
        c.d(0).add_nic(n)
    }
    .unwrap();
    let e = {
        let n = c.fabric.nic(1);
        c.d(0).add_nic(n)
    }
    .unwrap_err();
    assert!(
        matches!(&e, DriverError::BadConfig(m) if m.contains("room for 2 NICs")),
        "{e}"
    );
    let mut bad = config(0, 2, 1);
    bad.nics = 0;
    let e = nic_driver::Driver::new(c.fabric.nic(3), bad).err().unwrap();
    assert!(e.to_string().contains("nics must be in 1..=8"), "{e}");
}

/// Failover: the first NIC's queue pairs are reset and left disabled and its enables
/// cleared; the second gets the node id, its own completion ring and enabled queue
/// pairs; the protocol restarts under a new incarnation.
#[test]
fn fail_over_moves_the_queues_to_the_other_nic_and_restarts_the_protocol() {
    let mut c = two_nic_host();
    let before = c.fabric.with(1, |s| s.csr_writes.len());
    let now = c.now;
    c.d(1).fail_over(now, 1).unwrap();
    let old: Vec<(u32, u64)> = c.fabric.with(1, |s| s.csr_writes[before..].to_vec());
    let qp0 = csr::qp(0, csr::QP_CTRL) as u32;
    assert!(old.contains(&(qp0, csr::QP_CTRL_RESET)), "{old:x?}");
    assert_eq!(old.last(), Some(&(csr::ENABLE as u32, 0)));
    let new = c.fabric.with(SECOND, |s| s.csr_writes.clone());
    let cq = config(1, 2, 0).cq_base(1) as u64;
    assert!(new.contains(&(csr::CQ_BASE as u32, cq)), "{new:x?}");
    assert!(new.contains(&(csr::NODE_ID as u32, 1)));
    assert!(new
        .iter()
        .any(|&(o, v)| o == qp0 && v & csr::QP_CTRL_ENABLE != 0));
    assert!(!c.d(1).is_joined(), "rejoining");
    assert_eq!(c.d(1).stats().link_restarts, 1);
    assert_eq!(c.d(1).multi_nic().active(), 1);
    assert_eq!(c.d(1).multi_nic().stats().failovers, 1);
    assert!(c.d(1).fail_over(now, 2).is_err(), "no NIC 2");
}

/// Failover carries each responder's position over: the old NIC's queue pair is disabled,
/// read (synced?), reset, read again (its expected PSN, which the reset keeps readable);
/// the new NIC's queue pair resumes there after its reset and before it is enabled, so a
/// request the old NIC executed is not executed again through the new one. A queue pair
/// the old NIC had not synced (nothing received in the peer's current sequence) starts
/// unsynced, whatever stale PSN it reads.
#[test]
fn fail_over_resumes_each_synced_responder_where_the_old_nic_left_off() {
    let mut c = two_nic_host();
    let status = |q: usize| csr::qp(q, csr::QP_STATUS) as u32;
    let ctrl = |q: usize| csr::qp(q, csr::QP_CTRL) as u32;
    let synced = 1u64 << csr::QpStatus::SYNCED_BIT;
    c.fabric.with(1, |s| {
        s.regs.insert(
            status(0),
            synced | 0x12_3456 << csr::QpStatus::EXPECTED_PSN_SHIFT,
        );
        s.regs
            .insert(status(2), 0x77 << csr::QpStatus::EXPECTED_PSN_SHIFT);
    });
    let before = c.fabric.with(1, |s| s.csr_writes.len());
    let now = c.now;
    c.d(1).fail_over(now, 1).unwrap();
    let old: Vec<(u32, u64)> = c.fabric.with(1, |s| s.csr_writes[before..].to_vec());
    let new: Vec<(u32, u64)> = c.fabric.with(SECOND, |s| s.csr_writes.clone());
    let writes = |w: &[(u32, u64)], q: usize| -> Vec<u64> {
        w.iter()
            .filter(|&&(o, _)| o == ctrl(q))
            .map(|&(_, v)| v)
            .collect()
    };
    assert_eq!(
        writes(&old, 0),
        [0, csr::QP_CTRL_RESET],
        "disabled, then reset"
    );
    let resumed = writes(&new, 0);
    assert_eq!(resumed.len(), 3, "{resumed:x?}");
    assert_ne!(resumed[0] & csr::QP_CTRL_RESET, 0);
    assert_eq!(
        resumed[1],
        csr::QP_CTRL_RESUME | 0x12_3456 << csr::QP_CTRL_START_PSN_SHIFT
    );
    assert_eq!(resumed[2], csr::QP_CTRL_ENABLE);
    let fresh = writes(&new, 2);
    assert!(
        fresh.iter().all(|v| v & csr::QP_CTRL_RESUME == 0),
        "an unsynced queue pair resumed: {fresh:x?}"
    );
}
