//! Memory windows (BIND RKEY / UNBIND) and DELAY through the driver against the fake NICs
//! (`fake_nic`), with and without a hardware TPT: parameter refusals that post nothing,
//! the binding applied at the BIND's in-order completion (not before), peers' RDMA with
//! the key refused before, landing inside the window after, refused outside it and after
//! the unbind, and the old binding freed through the deregistration fence.

mod fake_nic;

use fake_nic::{Cluster, Fabric};
use nic_abi::{CompletionStatus, DELAY_CYCLES_MASK};
use nic_driver::tpt::{Protection, ProtectionError, RegionRef, TptEntry};
use nic_driver::{BindError, Completion, DriverConfig, LocalWork, NodeId, VerbsError};

const ARENA: u32 = 0x1_0000;
const ARENA_LEN: u32 = 0x8_0000;
const APP: u32 = 0x9_0000;
const VA: u64 = 0x7F00_0000_0000;

fn config(node: NodeId, n: usize, incarnation: u32) -> DriverConfig {
    let mut c = fake_nic::small_config(node, n, ARENA, ARENA_LEN, incarnation);
    c.first_handle = incarnation << 16;
    c.exception_poll_interval = 10;
    c
}

fn joined(n: usize, tpt_log2: u64) -> Cluster {
    let fabric = if tpt_log2 == 0 {
        Fabric::new(n, 8)
    } else {
        Fabric::with_tpt(n, 8, tpt_log2)
    };
    let mut c = Cluster::new(fabric, config);
    for i in 0..n {
        c.boot(i, 10 + i as u32);
    }
    c.settle();
    c
}

fn local_status(c: &[Completion], wr: u64) -> Option<(LocalWork, CompletionStatus)> {
    c.iter().find_map(|x| match x {
        Completion::Local {
            wr_id,
            work,
            status,
            ..
        } if *wr_id == wr => Some((*work, *status)),
        _ => None,
    })
}

/// Node 0's hardware TPT entry for `stag`, if valid: (virtual base, length, physical base).
fn nic_entry(c: &Cluster, stag: u32) -> Option<(u64, u32, u32)> {
    c.fabric.with(0, |s| {
        s.tpt
            .get(&(stag >> 8))
            .filter(|e| e.valid())
            .map(|e| (e.vaddr, e.length, e.paddr))
    })
}

fn send_status(c: &[Completion], wr: u64) -> Option<CompletionStatus> {
    c.iter().find_map(|x| match x {
        Completion::Send { wr_id, status, .. } if *wr_id == wr => Some(*status),
        _ => None,
    })
}

#[test]
fn bad_bind_and_delay_arguments_are_refused_and_post_nothing() {
    let mut c = joined(3, 0);
    let region = c
        .d(0)
        .register(0x10_0000, APP, 256, Protection::WriteOnly)
        .unwrap();
    let peer = c
        .d(1)
        .register(0x20_0000, APP, 256, Protection::ReadWrite)
        .unwrap();
    c.settle();
    let rkey = c.d(0).allocate_rkey().unwrap();
    let other = c.d(0).allocate_rkey().unwrap();
    assert_ne!(rkey, other);
    assert!(c.d(0).is_window(rkey) && !c.d(0).is_window(region.handle));
    let before = c.fabric.with(0, |s| s.csr_writes.len());
    let inside = RegionRef::new(region.handle, region.logical + 64);
    let d = c.d(0);
    assert_eq!(
        d.bind_rkey(0, rkey, inside, 8, Protection::WriteOnly, 1),
        Err(VerbsError::InvalidNode { node: 0 })
    );
    assert_eq!(
        d.bind_rkey(1, 0xDEAD, inside, 8, Protection::WriteOnly, 1),
        Err(BindError::UnknownRKey { rkey: 0xDEAD }.into()),
        "a key this driver did not allocate"
    );
    assert_eq!(
        d.bind_rkey(1, rkey, inside, 0, Protection::WriteOnly, 1),
        Err(BindError::ZeroLength { rkey }.into())
    );
    let refused = |handle, addr, length, protection| {
        Err(VerbsError::Bind(BindError::NotAuthorised {
            handle,
            addr,
            length,
            protection,
        }))
    };
    // Past the region's end, a region of another node, rights the region lacks, a window.
    assert_eq!(
        d.bind_rkey(1, rkey, inside, 193, Protection::WriteOnly, 1),
        refused(region.handle, inside.addr, 193, Protection::WriteOnly)
    );
    let theirs = RegionRef::new(peer.handle, peer.logical);
    assert_eq!(
        d.bind_rkey(1, rkey, theirs, 8, Protection::WriteOnly, 1),
        refused(peer.handle, peer.logical, 8, Protection::WriteOnly)
    );
    assert_eq!(
        d.bind_rkey(1, rkey, inside, 8, Protection::ReadOnly, 1),
        refused(region.handle, inside.addr, 8, Protection::ReadOnly)
    );
    assert_eq!(
        d.bind_rkey(
            1,
            rkey,
            RegionRef::new(other, 0),
            8,
            Protection::ReadOnly,
            1
        ),
        refused(other, 0, 8, Protection::ReadOnly)
    );
    assert_eq!(
        d.bind_rkey(
            1,
            rkey,
            RegionRef::new(region.handle, region.logical + 4),
            8,
            Protection::WriteOnly,
            1
        ),
        Err(VerbsError::Misaligned {
            side: nic_driver::tpt::Side::Local,
            physical: APP + 4
        })
    );
    assert_eq!(
        d.unbind_rkey(1, rkey, 1),
        Err(BindError::NotBound { rkey }.into())
    );
    assert_eq!(
        d.post_delay(1, DELAY_CYCLES_MASK as u32 + 1, 1),
        Err(BindError::DelayTooLong {
            cycles: DELAY_CYCLES_MASK + 1,
            max: DELAY_CYCLES_MASK
        }
        .into())
    );
    assert_eq!(
        d.post_delay(3, 10, 1),
        Err(VerbsError::InvalidNode { node: 3 })
    );
    assert_eq!(
        d.deregister(rkey),
        Err(nic_driver::tpt::TptError::UnknownLocalHandle { handle: rkey }.into())
    );
    assert_eq!(
        c.fabric.with(0, |s| s.csr_writes.len()),
        before,
        "a refused verb wrote nothing"
    );
    // A second bind of a key already bound (by a posted, not yet completed, BIND) and a
    // deallocation of a bound key are refused.
    c.fabric.with(0, |s| s.hold = true);
    c.d(0)
        .bind_rkey(1, rkey, inside, 8, Protection::WriteOnly, 2)
        .unwrap();
    assert_eq!(
        c.d(0)
            .bind_rkey(1, rkey, inside, 8, Protection::WriteOnly, 3),
        Err(BindError::Bound { rkey }.into())
    );
    assert_eq!(
        c.d(0).deallocate_rkey(rkey),
        Err(BindError::Bound { rkey }.into())
    );
    c.fabric.with(0, |s| s.hold = false);
    c.settle();
    assert_eq!(
        c.d(0).deregister(rkey),
        Err(BindError::IsWindow { handle: rkey }.into())
    );
    c.d(0).deallocate_rkey(other).unwrap();
    assert_eq!(
        c.d(0).deallocate_rkey(other),
        Err(BindError::UnknownRKey { rkey: other }.into())
    );
}

/// Node 0 binds a window of 64 bytes inside its 256-byte region and node 1 writes with the
/// key: refused before the BIND completed (its queue held), landing inside the window
/// after, refused outside it, refused again after the UNBIND; the old binding is freed.
fn bind_write_unbind(tpt_log2: u64) {
    let mut c = joined(2, tpt_log2);
    let base = if tpt_log2 == 0 { 0x10_0000 } else { VA };
    let region = c
        .d(0)
        .register(base, APP, 256, Protection::ReadWrite)
        .unwrap();
    let src = c
        .d(1)
        .register(base + 0x1000, APP, 64, Protection::ReadOnly)
        .unwrap();
    c.settle();
    c.fabric.with(1, |s| s.write(APP, &[0xA5; 64]));
    let rkey = c.d(0).allocate_rkey().unwrap();
    let from = RegionRef::new(src.handle, src.logical);
    let write = |c: &mut Cluster, offset: u64, length: u32, wr: u64| {
        c.d(1).rdma_write(
            0,
            from,
            RegionRef::new(rkey, base + offset),
            length,
            None,
            wr,
        )
    };
    let tpt_commands = |c: &Cluster| {
        c.fabric.with(0, |s| {
            s.csr_writes
                .iter()
                .filter(|(o, _)| *o == nic_abi::csr::TPT_COMMAND as u32)
                .count()
        })
    };
    let commands_before = tpt_commands(&c);
    // The BIND waits in node 0's held queue: nothing is bound anywhere yet.
    c.fabric.with(0, |s| s.hold = true);
    let entry = c
        .d(0)
        .bind_rkey(
            1,
            rkey,
            RegionRef::new(region.handle, base + 64),
            64,
            Protection::WriteOnly,
            10,
        )
        .unwrap();
    assert_eq!(
        entry,
        TptEntry {
            handle: rkey,
            logical: base + 64,
            physical: APP + 64,
            length: 64,
            protection: Protection::WriteOnly
        }
    );
    for _ in 0..5 {
        c.fabric.step();
        let now = c.now;
        let done = c.d(0).poll(now).unwrap();
        assert_eq!(
            local_status(&done, 10),
            None,
            "the BIND completed while held"
        );
        c.now += 10;
    }
    assert!(
        c.d(0).tpt().local(rkey).is_none(),
        "applied before its completion"
    );
    assert_eq!(nic_entry(&c, rkey), None, "the NIC's entry written early");
    assert_eq!(
        write(&mut c, 64, 8, 1),
        Err(ProtectionError::UnknownRemoteHandle {
            node: 0,
            handle: rkey
        }
        .into()),
        "the peer holds no binding yet"
    );
    c.fabric.with(0, |s| s.hold = false);
    c.settle();
    let done = std::mem::take(&mut c.completions[0]);
    assert_eq!(
        local_status(&done, 10),
        Some((
            LocalWork::Bind {
                rkey,
                entry: Some(entry)
            },
            CompletionStatus::Success
        ))
    );
    if tpt_log2 != 0 {
        assert_eq!(
            nic_entry(&c, rkey),
            Some((base + 64, 64, APP + 64)),
            "the NIC's entry is the window"
        );
    }
    assert_eq!(c.fabric.with(0, |s| s.read(APP + 64, 8)), vec![0; 8]);
    // Bound: inside the window lands; outside it (still inside the region) does not.
    write(&mut c, 72, 16, 2).unwrap();
    c.settle();
    assert_eq!(
        send_status(&std::mem::take(&mut c.completions[1]), 2),
        Some(CompletionStatus::Success)
    );
    assert_eq!(c.fabric.with(0, |s| s.read(APP + 72, 16)), vec![0xA5; 16]);
    assert!(write(&mut c, 0, 8, 3).is_err(), "outside the window");
    assert_eq!(c.fabric.with(0, |s| s.read(APP, 8)), vec![0; 8]);
    // Unbound: refused again, the old binding freed once the peer confirmed.
    c.d(0).unbind_rkey(1, rkey, 11).unwrap();
    c.settle();
    let done = std::mem::take(&mut c.completions[0]);
    assert_eq!(
        local_status(&done, 11),
        Some((
            LocalWork::Bind { rkey, entry: None },
            CompletionStatus::Success
        ))
    );
    assert!(
        done.iter()
            .any(|x| matches!(x, Completion::Deregistered { entry: e } if *e == entry)),
        "the old binding is freed: {done:?}"
    );
    c.fabric.with(0, |s| s.write(APP + 64, &[0; 64]));
    assert_eq!(
        nic_entry(&c, rkey),
        None,
        "the NIC's entry survived the unbind"
    );
    assert!(
        write(&mut c, 64, 8, 4).is_err(),
        "the peer dropped the binding"
    );
    assert_eq!(c.fabric.with(0, |s| s.read(APP + 64, 64)), vec![0; 64]);
    assert_eq!(
        tpt_commands(&c),
        commands_before,
        "the NIC writes the BIND's and the UNBIND's entries itself: no TPT command"
    );
    c.d(0).deallocate_rkey(rkey).unwrap();
}

#[test]
fn a_binding_applies_at_the_bind_completion_and_an_unbind_revokes_it() {
    bind_write_unbind(0);
}

#[test]
fn with_a_hardware_tpt_the_nic_entry_follows_the_binding() {
    bind_write_unbind(6);
}

#[test]
fn a_delay_completes_in_order_between_its_neighbours() {
    let mut c = joined(2, 0);
    let src = c
        .d(0)
        .register(0x10_0000, APP, 64, Protection::ReadOnly)
        .unwrap();
    let dst = c
        .d(1)
        .register(0x20_0000, APP, 64, Protection::WriteOnly)
        .unwrap();
    c.settle();
    let l = RegionRef::new(src.handle, src.logical);
    let r = RegionRef::new(dst.handle, dst.logical);
    c.d(0).rdma_write(1, l, r, 8, None, 1).unwrap();
    c.d(0).post_delay(1, 500, 2).unwrap();
    c.d(0).rdma_write(1, l, r, 8, None, 3).unwrap();
    c.settle();
    let done: Vec<u64> = c.completions[0]
        .iter()
        .filter_map(|x| match x {
            Completion::Send { wr_id, .. } | Completion::Local { wr_id, .. } => Some(*wr_id),
            _ => None,
        })
        .collect();
    assert_eq!(done, vec![1, 2, 3]);
    assert_eq!(
        local_status(&c.completions[0], 2),
        Some((LocalWork::Delay { cycles: 500 }, CompletionStatus::Success))
    );
}
