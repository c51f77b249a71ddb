//! The registration cache against a plain model of the driver's TPT: random sequences of
//! requests, releases, frees, owner exits and garbage collection. Whatever the sequence:
//! - a lease names a registration the driver holds, that covers the request's range at the
//!   request's placement with exactly its rights, and whose memory was not freed since it
//!   was registered;
//! - a hit costs no registration; every miss registers once;
//! - after `free`, no registration overlapping the freed memory is left in the driver;
//! - after garbage collection, no registration of a gone owner is left;
//! - registrations no request holds stay within the bound.

use nic_driver::regcache::{CacheError, Lease, OwnerId, Reason, Registrar, RegistrationCache};
use nic_driver::tpt::{Protection, TptEntry, TptError};
use nic_driver::VerbsError;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// The driver's local TPT part as the cache sees it: handles registered and deregistered,
/// every call counted.
#[derive(Default)]
struct FakeDriver {
    next: u32,
    registered: BTreeMap<u32, TptEntry>,
    registers: u64,
    deregisters: u64,
}

impl Registrar for FakeDriver {
    fn register(
        &mut self,
        logical: u64,
        physical: u32,
        length: u32,
        protection: Protection,
    ) -> Result<TptEntry, VerbsError> {
        self.next += 1;
        self.registers += 1;
        let e = TptEntry {
            handle: self.next,
            logical,
            physical,
            length,
            protection,
        };
        self.registered.insert(e.handle, e);
        Ok(e)
    }

    fn deregister(&mut self, handle: u32) -> Result<TptEntry, VerbsError> {
        self.deregisters += 1;
        self.registered
            .remove(&handle)
            .ok_or(TptError::UnknownLocalHandle { handle }.into())
    }
}

/// Buffers an application uses: 8 buffers of 4 KiB, logical = physical + a base per owner.
const BUFFERS: u32 = 8;
const BUF: u32 = 4096;

fn logical(owner: u32, physical: u32) -> u64 {
    0x1000_0000_0000 * (owner as u64 + 1) + physical as u64
}

#[derive(Clone, Debug)]
enum Step {
    /// Owner, buffer, first and last 256-byte block within it (a sub-range), read-only?
    Acquire(u32, u32, u32, u32, bool),
    /// Release the i-th lease held (mod the count).
    Release(usize),
    /// Free buffer b (the physical memory), from block f for n blocks.
    Free(u32, u32, u32),
    /// A buffer moves: the owner uses logical range of buffer b at buffer c's memory.
    Moved(u32, u32, u32),
    OwnerGone(u32),
    Collect,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..3u32, 0..BUFFERS, 0..16u32, 0..16u32, any::<bool>())
            .prop_map(|(o, b, x, y, ro)| Step::Acquire(o, b, x.min(y), x.max(y), ro)),
        4 => any::<usize>().prop_map(Step::Release),
        1 => (0..BUFFERS, 0..16u32, 1..16u32).prop_map(|(b, f, n)| Step::Free(b, f, n)),
        1 => (0..3u32, 0..BUFFERS, 0..BUFFERS).prop_map(|(o, b, c)| Step::Moved(o, b, c)),
        1 => (0..3u32).prop_map(Step::OwnerGone),
        1 => Just(Step::Collect),
    ]
}

fn overlaps(a: u32, alen: u32, b: u32, blen: u32) -> bool {
    (a as u64) < b as u64 + blen as u64 && (b as u64) < a as u64 + alen as u64
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn the_cache_never_hands_out_a_freed_or_mismatched_registration(
        capacity in 1usize..6,
        steps in proptest::collection::vec(step(), 1..80),
    ) {
        let mut drv = FakeDriver::default();
        let mut cache = RegistrationCache::new(capacity);
        let mut held: Vec<Lease> = vec![];
        // Physical memory freed since each handle was registered: handle -> freed ranges
        // are checked at hand-out through `freed_after`.
        let mut freed: Vec<(u64, u32, u32)> = vec![]; // (time, start, len)
        let mut registered_at: BTreeMap<u32, u64> = BTreeMap::new();
        let mut gone: Vec<u32> = vec![];
        let mut t = 0u64;
        for s in steps {
            t += 1;
            match s.clone() {
                Step::Acquire(o, b, f, l, ro) => {
                    let (phys, len) = (b * BUF + f * 256, (l - f + 1) * 256);
                    let prot = if ro { Protection::ReadOnly } else { Protection::ReadWrite };
                    let before = drv.registers;
                    match cache.acquire(&mut drv, OwnerId(o), logical(o, phys), phys, len, prot) {
                        Ok(lease) => {
                            let e = lease.entry;
                            prop_assert!(!gone.contains(&o), "a gone owner got a lease");
                            prop_assert_eq!(drv.registered.get(&e.handle), Some(&e), "the driver holds it");
                            prop_assert_eq!(e.protection, prot);
                            prop_assert!(e.logical <= logical(o, phys)
                                && logical(o, phys) + len as u64 <= e.logical + e.length as u64);
                            prop_assert_eq!(e.physical as u64 + (logical(o, phys) - e.logical), phys as u64);
                            if lease.hit {
                                prop_assert_eq!(drv.registers, before, "a hit registers nothing");
                            } else {
                                prop_assert_eq!(drv.registers, before + 1);
                                registered_at.insert(e.handle, t);
                            }
                            let since = registered_at[&e.handle];
                            prop_assert!(
                                !freed.iter().any(|&(ft, fs, fl)| ft > since && overlaps(fs, fl, e.physical, e.length)),
                                "lease {:?} covers memory freed after its registration", e
                            );
                            held.push(lease);
                        }
                        Err(CacheError::OwnerGone(_)) => prop_assert!(gone.contains(&o)),
                        Err(CacheError::InUse { handle, .. }) => {
                            prop_assert!(held.iter().any(|l| l.entry.handle == handle));
                        }
                        Err(e) => prop_assert!(false, "unexpected error {e}"),
                    }
                }
                Step::Moved(o, b, c) => {
                    // The owner's logical buffer b now lives at physical buffer c.
                    let prot = Protection::ReadWrite;
                    let before = drv.registers;
                    if let Ok(lease) = cache.acquire(&mut drv, OwnerId(o), logical(o, b * BUF), c * BUF, BUF, prot) {
                        prop_assert_eq!(lease.entry.physical, c * BUF);
                        if !lease.hit {
                            prop_assert_eq!(drv.registers, before + 1);
                            registered_at.insert(lease.entry.handle, t);
                        }
                        held.push(lease);
                    }
                }
                Step::Release(i) => {
                    if !held.is_empty() {
                        let lease = held.remove(i % held.len());
                        cache.release(&mut drv, lease).unwrap();
                    }
                }
                Step::Free(b, f, n) => {
                    let (start, len) = (b * BUF + f * 256, n * 256);
                    let out = cache.free(&mut drv, start, len).unwrap();
                    freed.push((t, start, len));
                    for e in &out {
                        prop_assert!(overlaps(start, len, e.physical, e.length));
                    }
                    prop_assert!(
                        !cache.entries().any(|(_, e)| overlaps(start, len, e.physical, e.length)),
                        "a registration over freed memory stayed cached"
                    );
                    // Leases over freed memory are dead: the application must not use them.
                    held.retain(|l| !overlaps(start, len, l.entry.physical, l.entry.length));
                }
                Step::OwnerGone(o) => {
                    cache.owner_gone(OwnerId(o));
                    if !gone.contains(&o) {
                        gone.push(o);
                    }
                    held.retain(|l| l.entry.logical < logical(o, 0) || l.entry.logical >= logical(o + 1, 0));
                }
                Step::Collect => {
                    cache.collect_garbage(&mut drv).unwrap();
                    prop_assert!(!cache.entries().any(|(o, _)| gone.contains(&o.0)));
                }
            }
            // The cache's registrations are exactly the driver's.
            let cached: Vec<u32> = cache.entries().map(|(_, e)| e.handle).collect();
            let in_driver: Vec<u32> = drv.registered.keys().copied().collect();
            prop_assert_eq!(cached, in_driver);
            // The bound holds after every request and release (an owner's exit frees its
            // registrations for eviction at the next of those).
            let in_use = held.len();
            if matches!(s, Step::Acquire(..) | Step::Moved(..) | Step::Release(_))
                && !gone.iter().any(|&o| cache.entries().any(|(owner, _)| owner.0 == o))
            {
                prop_assert!(cache.len() <= capacity + in_use, "{} cached, bound {capacity}, {in_use} held", cache.len());
            }
        }
        let st = cache.stats();
        prop_assert_eq!(st.registrations, drv.registers);
        prop_assert_eq!(st.deregistered(), drv.deregisters);
    }
}

#[test]
fn a_hit_reuses_the_registration_and_a_free_deregisters_it() {
    let mut drv = FakeDriver::default();
    let mut c = RegistrationCache::new(4);
    let me = OwnerId(1);
    let a = c
        .acquire(&mut drv, me, 0x1000, 0x1000, 4096, Protection::ReadWrite)
        .unwrap();
    assert!(!a.hit);
    c.release(&mut drv, a).unwrap();
    // A sub-range of the same buffer: a hit, no registration.
    let b = c
        .acquire(&mut drv, me, 0x1400, 0x1400, 256, Protection::ReadWrite)
        .unwrap();
    assert!(b.hit);
    assert_eq!(b.entry.handle, a.entry.handle);
    assert_eq!(drv.registers, 1);
    // Another owner does not share it.
    let other = c
        .acquire(
            &mut drv,
            OwnerId(2),
            0x1000,
            0x1000,
            4096,
            Protection::ReadWrite,
        )
        .unwrap();
    assert!(!other.hit);
    // Read-only is not served by read-write.
    let ro = c
        .acquire(&mut drv, me, 0x1000, 0x1000, 4096, Protection::ReadOnly)
        .unwrap_err();
    assert!(matches!(ro, CacheError::InUse { .. }), "{ro}");
    c.release(&mut drv, b).unwrap();
    let ro = c
        .acquire(&mut drv, me, 0x1000, 0x1000, 4096, Protection::ReadOnly)
        .unwrap();
    assert!(!ro.hit);
    assert_eq!(c.stats().deregistrations.get(&Reason::Changed), Some(&1));
    // The free hook takes every owner's registration of that memory.
    let out = c.free(&mut drv, 0x1800, 8).unwrap();
    assert_eq!(out.len(), 2);
    assert!(drv.registered.is_empty());
    assert_eq!(c.stats().deregistrations.get(&Reason::Freed), Some(&2));
}

#[test]
fn the_bound_evicts_the_least_recently_used_and_the_collector_takes_gone_owners() {
    let mut drv = FakeDriver::default();
    let mut c = RegistrationCache::new(2);
    let me = OwnerId(7);
    let mut handles = vec![];
    for i in 0..3u32 {
        let l = c
            .acquire(
                &mut drv,
                me,
                i as u64 * 4096,
                i * 4096,
                4096,
                Protection::ReadWrite,
            )
            .unwrap();
        handles.push(l.entry.handle);
        c.release(&mut drv, l).unwrap();
    }
    assert_eq!(c.len(), 2);
    assert!(!drv.registered.contains_key(&handles[0]), "the oldest went");
    assert_eq!(c.stats().deregistrations.get(&Reason::Evicted), Some(&1));
    c.owner_gone(me);
    assert!(matches!(
        c.acquire(&mut drv, me, 0, 0, 8, Protection::ReadWrite),
        Err(CacheError::OwnerGone(_))
    ));
    assert_eq!(c.collect_garbage(&mut drv).unwrap().len(), 2);
    assert!(c.is_empty() && drv.registered.is_empty());
}

#[test]
#[should_panic(expected = "capacity must be at least 1")]
fn a_cache_of_no_registrations_is_refused() {
    let _ = RegistrationCache::new(0);
}
