//! Several NICs per host (source document 003, "State migration in multiple NIC RDMA
//! enabled devices"): one driver, one node id, one STag space for all the host's NICs, and
//! the migration of an STag to the NIC a request arrived at.
//!
//! # Design
//! One [`crate::Driver`] drives every NIC of its host ([`crate::Driver::add_nic`]). One NIC
//! is **active**: it carries the host's queue pairs, completion ring and the membership
//! protocol's traffic, so the rejoin protocol sees the host once, by its node id, whatever
//! its NIC count. The others are standbys: they hold TPT entries only after a migration,
//! their queue pairs are not programmed, and the driver reads their exception queues.
//!
//! **STags are host-wide.** The driver allocates every STag from one [`crate::hw_tpt::HwTpt`]
//! (one index space and one key sequence), whatever NIC it is programmed in, and every NIC
//! of a host has a table of the same size: an STag names the same region on every NIC and
//! never two regions at once. The NIC number is not encoded in the STag; the driver keeps,
//! per STag, the NIC whose table holds it (its **holder**).
//!
//! **Migration** (003 Figs. 6a/6b): a request whose STag has no valid entry in the NIC it
//! arrived at waits in that NIC's exception queue. The driver reads the head and decides
//! with [`resolve`]:
//! - the STag is not a region of this host (never registered, deregistered, of an earlier
//!   boot, or a guess): refused (REMOTE_ACCESS_ERROR, nothing written);
//! - the NIC that missed is the holder: its entry was used up by the NIC itself (one-shot,
//!   or a request with the invalidate flag): refused, the region retired;
//! - the request lies outside the region's rights or bounds: refused;
//! - otherwise ([`can_migrate`]) the driver takes the holder's entry (`TPT_COMMAND` take:
//!   read and invalidated in one command, which the table's sequencer runs atomically
//!   against lookups, `rtl/src/tpt/mod.rs` "Consistency", so no request through the holder
//!   uses the key between the read and the invalidation): not valid (used up there) means
//!   refused and retired, as above; valid, the driver either installs it in the NIC that
//!   missed, which becomes the holder,
//!   and answers the head with the translation (the fast path serves the next request), or,
//!   when the request uses the entry up (a one-shot entry, or a request with the invalidate
//!   flag, executed), answers with the translation without installing it anywhere and
//!   retires the region: the key stays used up, and no other NIC can replay it.
//!
//! An STag lives in at most one NIC's table at a time (the move invalidates before it
//! installs), so invalidation and one-shot use in one NIC cannot be undone through another.
//!
//! **Failover** ([`crate::Driver::fail_over`]): when the network delivers the host's
//! traffic to another of its NICs (its active NIC was unplugged, or the route changed), the
//! driver quiesces the old NIC (every queue pair reset and left disabled, SEND/RECEIVE and
//! RDMA off), programs the new one (node id, its own completion ring, every queue pair) and
//! restarts the membership protocol as after a link change
//! ([`crate::Driver::link_changed`]): the connections' sequence state lives in the NICs
//! and cannot move, so the host rejoins under a new incarnation through the new NIC. Its
//! regions and STags do not change; they migrate lazily, one at the first request that
//! names it, instead of reprogramming the whole table at the failover.

use std::collections::BTreeMap;

use nic_abi::csr;

use crate::hw_tpt::ExceptionHead;
use crate::rejoin::Tick;
use crate::tpt::TptEntry;

/// `EXC_HEAD0` bit 13: the request is only checked, not executed (`rtl/src/tpt/mod.rs`).
pub const EXC_HEAD_CHECK_ONLY: u64 = 1 << 13;

/// The largest number of NICs a host may have.
pub const MAX_NICS: usize = 8;

/// What the holder's table says about an STag (`TPT_WORD0` as read back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HolderEntry {
    /// The entry is valid.
    pub valid: bool,
    /// The entry is one-shot.
    pub one_shot: bool,
    /// The entry's key.
    pub key: u8,
}

impl HolderEntry {
    /// Decodes `TPT_WORD0`.
    pub fn from_word0(word0: u64) -> Self {
        HolderEntry {
            valid: word0 & csr::TPT_VALID != 0,
            one_shot: word0 & csr::TPT_ONE_SHOT != 0,
            key: (word0 >> csr::TPT_KEY_SHIFT) as u8,
        }
    }
}

/// The driver's answer to an exception-queue head (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// Refuse the request (REMOTE_ACCESS_ERROR). `retire`: the STag is a region of this
    /// host whose key is used up; it leaves the local part.
    Refuse {
        /// Retire the region.
        retire: bool,
    },
    /// Invalidate the holder's entry, then answer with `paddr`. `install`: program the
    /// entry (with its one-shot bit) in the NIC that missed, which becomes the holder;
    /// otherwise the request uses the key up and the region is retired.
    Migrate {
        /// The translation to answer with.
        paddr: u32,
        /// Install the entry in the NIC that missed.
        install: bool,
    },
}

/// Why a head took the slow path, for the counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowPathOutcome {
    /// Migrated and installed in the NIC that missed.
    Migrated,
    /// Answered from the holder's entry, which the request used up (one-shot or
    /// invalidate flag): not installed anywhere, the region retired.
    MigratedUsedUp,
    /// No NIC of the host holds the STag: refused.
    Unknown,
    /// The key was used up (in the NIC that missed or in the holder): refused, retired.
    UsedUp,
    /// The holder has the STag but the request is outside its rights or bounds: refused.
    Refused,
}

/// One exception-queue head the driver answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowPath {
    /// The NIC whose exception queue held it.
    pub nic: usize,
    /// The STag.
    pub stag: u32,
    /// The driver's tick when it answered.
    pub answered_at: Tick,
    /// What it decided.
    pub outcome: SlowPathOutcome,
}

/// Counters of the multi-NIC layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MultiNicStats {
    /// Heads answered with a migration that installed the entry in the NIC that missed.
    pub migrated: u64,
    /// Heads answered from another NIC's entry that the request used up.
    pub migrated_used_up: u64,
    /// Heads refused because no NIC holds the STag.
    pub refused_unknown: u64,
    /// Heads refused because the key was used up.
    pub refused_used_up: u64,
    /// Heads refused by the rights or bounds of the holder's entry.
    pub refused_checks: u64,
    /// Failovers to another NIC.
    pub failovers: u64,
}

/// Whether [`resolve`] can migrate `head`'s STag, before the holder's entry is read: the
/// STag is this region's, another NIC holds it, and the request lies within the region's
/// rights and bounds. Only then does the driver take the holder's entry (read and
/// invalidate it in one TPT command, so no request through the holder can use the key
/// between the read and the invalidation).
pub fn can_migrate(
    head: &ExceptionHead,
    missed_at: usize,
    entry: Option<&TptEntry>,
    holder: usize,
) -> bool {
    entry.is_some_and(|e| e.handle == head.stag && head.translate(e).is_some())
        && holder != missed_at
}

/// Decides a head (see the module docs). `entry` is the host's local region named by the
/// head's STag, if any; `holder` the NIC whose table has it; `missed_at` the NIC whose
/// exception queue holds the head; `read` the holder's entry as read back (`None` when
/// the holder is `missed_at`: it is not read, the NIC just missed it).
pub fn resolve(
    head: &ExceptionHead,
    missed_at: usize,
    entry: Option<&TptEntry>,
    holder: usize,
    read: Option<HolderEntry>,
) -> Resolution {
    let Some(entry) = entry.filter(|e| e.handle == head.stag) else {
        return Resolution::Refuse { retire: false };
    };
    if holder == missed_at {
        return Resolution::Refuse { retire: true };
    }
    let Some(paddr) = head.translate(entry) else {
        return Resolution::Refuse { retire: false };
    };
    let Some(read) = read else {
        return Resolution::Refuse { retire: false };
    };
    if !read.valid || read.key != crate::hw_tpt::stag_key(head.stag) {
        return Resolution::Refuse { retire: true };
    }
    let executed = head.head0 & EXC_HEAD_CHECK_ONLY == 0;
    let invalidate = head.head0 & csr::EXC_HEAD_INVALIDATE != 0;
    Resolution::Migrate {
        paddr,
        install: !(executed && (read.one_shot || invalidate)),
    }
}

/// The NICs of a host beyond the one the driver talks to now, and which NIC holds each
/// STag. `A` is the NIC access type; the active NIC's handle lives in the driver.
#[derive(Debug)]
pub struct NicSlots<A> {
    /// `slots[k]`: NIC `k`'s handle while it is not the one in the driver.
    pub(crate) slots: Vec<Option<A>>,
    /// The NIC whose handle the driver holds now (`slots[current]` is `None`).
    pub(crate) current: usize,
    /// The NIC carrying the host's traffic.
    pub(crate) active: usize,
    /// Per NIC: `TPT_STATUS` refused-command count last seen.
    pub(crate) refused: Vec<u8>,
    /// Per NIC: base of its completion ring.
    pub(crate) cq_bases: Vec<u32>,
    /// STag -> the NIC whose table holds it.
    pub(crate) holders: BTreeMap<u32, usize>,
    pub(crate) stats: MultiNicStats,
    pub(crate) slow_path: Vec<SlowPath>,
}

impl<A> NicSlots<A> {
    /// One NIC (number 0), active, its completion ring at `cq_base`.
    pub fn new(cq_base: u32) -> Self {
        NicSlots {
            slots: vec![None],
            current: 0,
            active: 0,
            refused: vec![0],
            cq_bases: vec![cq_base],
            holders: BTreeMap::new(),
            stats: MultiNicStats::default(),
            slow_path: Vec::new(),
        }
    }

    /// NICs of the host.
    pub fn count(&self) -> usize {
        self.slots.len()
    }

    /// The NIC carrying the host's traffic.
    pub fn active(&self) -> usize {
        self.active
    }

    /// The NIC whose table holds `stag` (the active one for an STag never recorded).
    pub fn holder(&self, stag: u32) -> usize {
        self.holders.get(&stag).copied().unwrap_or(self.active)
    }

    /// Counters.
    pub fn stats(&self) -> MultiNicStats {
        self.stats
    }

    /// Heads answered since the last call, oldest first.
    pub fn take_slow_path(&mut self) -> Vec<SlowPath> {
        std::mem::take(&mut self.slow_path)
    }

    pub(crate) fn record(&mut self, nic: usize, stag: u32, now: Tick, outcome: SlowPathOutcome) {
        let s = &mut self.stats;
        match outcome {
            SlowPathOutcome::Migrated => s.migrated += 1,
            SlowPathOutcome::MigratedUsedUp => s.migrated_used_up += 1,
            SlowPathOutcome::Unknown => s.refused_unknown += 1,
            SlowPathOutcome::UsedUp => s.refused_used_up += 1,
            SlowPathOutcome::Refused => s.refused_checks += 1,
        }
        self.slow_path.push(SlowPath {
            nic,
            stag,
            answered_at: now,
            outcome,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw_tpt::stag;
    use crate::tpt::Protection;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    const VA: u64 = 0x7000_0000;

    fn region(s: u32) -> TptEntry {
        TptEntry {
            handle: s,
            logical: VA,
            physical: 0x8000,
            length: 0x100,
            protection: Protection::ReadWrite,
        }
    }

    fn head(s: u32, access: u64, invalidate: bool, check_only: bool) -> ExceptionHead {
        let head0 = csr::EXC_HEAD_VALID
            | access << csr::EXC_HEAD_ACCESS_SHIFT
            | if invalidate {
                csr::EXC_HEAD_INVALIDATE
            } else {
                0
            }
            | if check_only { EXC_HEAD_CHECK_ONLY } else { 0 }
            | (s as u64) << csr::EXC_HEAD_STAG_SHIFT;
        ExceptionHead::decode(head0, VA + 0x40, 64).unwrap()
    }

    fn valid(key: u8, one_shot: bool) -> HolderEntry {
        HolderEntry {
            valid: true,
            one_shot,
            key,
        }
    }

    #[test]
    fn an_stag_no_nic_holds_is_refused_without_retiring_anything() {
        let s = stag(5, 9);
        let h = head(s, 2, false, false);
        assert_eq!(
            resolve(&h, 1, None, 0, None),
            Resolution::Refuse { retire: false }
        );
        // Same index, another key: not this region.
        let other = region(stag(5, 8));
        assert_eq!(
            resolve(&h, 1, Some(&other), 0, Some(valid(8, false))),
            Resolution::Refuse { retire: false }
        );
    }

    #[test]
    fn a_miss_at_the_holder_or_an_invalid_holder_entry_means_used_up() {
        let s = stag(5, 9);
        let r = region(s);
        let h = head(s, 2, false, false);
        assert_eq!(
            resolve(&h, 0, Some(&r), 0, None),
            Resolution::Refuse { retire: true }
        );
        let used = HolderEntry {
            valid: false,
            one_shot: true,
            key: 9,
        };
        assert_eq!(
            resolve(&h, 1, Some(&r), 0, Some(used)),
            Resolution::Refuse { retire: true },
            "a used one-shot key on NIC 0 is not installed on NIC 1"
        );
        assert_eq!(
            resolve(&h, 1, Some(&r), 0, Some(valid(10, false))),
            Resolution::Refuse { retire: true },
            "the holder's index carries another key"
        );
    }

    #[test]
    fn a_valid_entry_migrates_and_a_consuming_request_does_not_install_it() {
        let s = stag(5, 9);
        let r = region(s);
        let write = head(s, 2, false, false);
        assert_eq!(
            resolve(&write, 1, Some(&r), 0, Some(valid(9, false))),
            Resolution::Migrate {
                paddr: 0x8040,
                install: true
            }
        );
        assert_eq!(
            resolve(&write, 1, Some(&r), 0, Some(valid(9, true))),
            Resolution::Migrate {
                paddr: 0x8040,
                install: false
            },
            "one-shot: used by this request"
        );
        assert_eq!(
            resolve(
                &head(s, 2, true, false),
                1,
                Some(&r),
                0,
                Some(valid(9, false))
            ),
            Resolution::Migrate {
                paddr: 0x8040,
                install: false
            },
            "invalidate flag: used by this request"
        );
        assert_eq!(
            resolve(
                &head(s, 2, false, true),
                1,
                Some(&r),
                0,
                Some(valid(9, true))
            ),
            Resolution::Migrate {
                paddr: 0x8040,
                install: true
            },
            "check only: the one-shot entry moves unused"
        );
    }

    #[test]
    fn rights_and_bounds_of_the_region_still_apply() {
        let s = stag(5, 9);
        let mut r = region(s);
        r.protection = Protection::ReadOnly;
        assert_eq!(
            resolve(
                &head(s, 2, false, false),
                1,
                Some(&r),
                0,
                Some(valid(9, false))
            ),
            Resolution::Refuse { retire: false }
        );
    }

    /// One host with `nics` NIC tables driven by `resolve`, as the driver does: the
    /// hardware hits and uses up entries on its own, misses go to `resolve`.
    #[derive(Debug, Default)]
    struct Host {
        /// Per NIC: STag -> (valid, one-shot).
        tables: Vec<BTreeMap<u32, (bool, bool)>>,
        local: BTreeMap<u32, TptEntry>,
        holders: BTreeMap<u32, usize>,
        /// STags executed at least once after being used up (must stay empty).
        replays: Vec<u32>,
        used_up: BTreeSet<u32>,
        executions: BTreeMap<u32, u32>,
    }

    #[derive(Clone, Debug)]
    enum Op {
        Register {
            one_shot: bool,
        },
        Request {
            which: usize,
            nic: usize,
            invalidate: bool,
            check_only: bool,
        },
        Deregister {
            which: usize,
        },
        Guess {
            index: u32,
            key: u8,
            nic: usize,
        },
    }

    fn op(nics: usize) -> impl Strategy<Value = Op> {
        prop_oneof![
            any::<bool>().prop_map(|one_shot| Op::Register { one_shot }),
            (
                0..8usize,
                0..nics,
                prop::bool::weighted(0.2),
                prop::bool::weighted(0.1)
            )
                .prop_map(|(which, nic, invalidate, check_only)| Op::Request {
                    which,
                    nic,
                    invalidate,
                    check_only
                }),
            (0..8usize).prop_map(|which| Op::Deregister { which }),
            (0..16u32, any::<u8>(), 0..nics).prop_map(|(index, key, nic)| Op::Guess {
                index,
                key,
                nic
            }),
        ]
    }

    impl Host {
        fn request(&mut self, s: u32, nic: usize, invalidate: bool, check_only: bool) {
            let executed = !check_only;
            if let Some(&(true, one_shot)) = self.tables[nic].get(&s) {
                if executed {
                    self.execute(s);
                    if one_shot || invalidate {
                        self.tables[nic].insert(s, (false, one_shot));
                    }
                }
                return;
            }
            let h = head(s, 2, invalidate, check_only);
            let holder = self.holders.get(&s).copied().unwrap_or(0);
            let read = (holder != nic).then(|| {
                let (v, o) = self.tables[holder]
                    .get(&s)
                    .copied()
                    .unwrap_or((false, false));
                HolderEntry {
                    valid: v,
                    one_shot: o,
                    key: s as u8,
                }
            });
            match resolve(&h, nic, self.local.get(&s), holder, read) {
                Resolution::Refuse { retire } => {
                    if retire {
                        self.local.remove(&s);
                        self.used_up.insert(s);
                    }
                }
                Resolution::Migrate { install, .. } => {
                    let one_shot = read.is_some_and(|r| r.one_shot);
                    self.tables[holder].insert(s, (false, one_shot));
                    if executed {
                        self.execute(s);
                    }
                    if install {
                        self.tables[nic].insert(s, (true, one_shot));
                        self.holders.insert(s, nic);
                    } else {
                        self.local.remove(&s);
                        self.used_up.insert(s);
                    }
                }
            }
        }

        fn execute(&mut self, s: u32) {
            if self.used_up.contains(&s) || !self.local.contains_key(&s) {
                self.replays.push(s);
            }
            *self.executions.entry(s).or_default() += 1;
        }
    }

    proptest! {
        /// Whatever the order of registrations, requests at any NIC (with or without the
        /// invalidate flag, executed or checked only), deregistrations and guessed STags:
        /// an STag is valid in at most one NIC; nothing executes through an STag that is
        /// not a live region of the host; a one-shot STag executes at most once; and a
        /// live STag's executed request is served whatever NIC it reaches.
        #[test]
        fn migration_keeps_keys_single_and_used_up(
            nics in 2..4usize,
            ops in prop::collection::vec(op(3), 1..80),
        ) {
            let mut host = Host { tables: vec![BTreeMap::new(); nics], ..Default::default() };
            let mut next = 0u32;
            let mut one_shots = BTreeSet::new();
            let mut registered: Vec<u32> = vec![];
            for op in ops {
                match op {
                    Op::Register { one_shot } => {
                        let s = stag(next, 7);
                        next += 1;
                        host.local.insert(s, region(s));
                        host.tables[0].insert(s, (true, one_shot));
                        host.holders.insert(s, 0);
                        if one_shot { one_shots.insert(s); }
                        registered.push(s);
                    }
                    Op::Request { which, nic, invalidate, check_only } => {
                        let Some(&s) = registered.get(which) else { continue };
                        let nic = nic % nics;
                        let holder = host.holders.get(&s).copied().unwrap_or(0);
                        let live = host.local.contains_key(&s)
                            && host.tables[holder].get(&s).is_some_and(|e| e.0);
                        let before = host.executions.get(&s).copied().unwrap_or(0);
                        host.request(s, nic, invalidate, check_only);
                        let after = host.executions.get(&s).copied().unwrap_or(0);
                        if live && !check_only {
                            prop_assert_eq!(after, before + 1, "a usable STag is served at NIC {}", nic);
                        }
                    }
                    Op::Deregister { which } => {
                        let Some(&s) = registered.get(which) else { continue };
                        if host.local.remove(&s).is_some() {
                            let holder = host.holders[&s];
                            host.tables[holder].entry(s).and_modify(|e| e.0 = false);
                        }
                    }
                    Op::Guess { index, key, nic } => {
                        let s = stag(1000 + index, key);
                        host.request(s, nic % nics, false, false);
                    }
                }
                for s in &registered {
                    let valid_in = host.tables.iter().filter(|t| t.get(s).is_some_and(|e| e.0)).count();
                    prop_assert!(valid_in <= 1, "STag {:#x} valid in {} NICs", s, valid_in);
                }
            }
            prop_assert!(host.replays.is_empty(), "replayed: {:?}", host.replays);
            for s in one_shots {
                prop_assert!(host.executions.get(&s).copied().unwrap_or(0) <= 1);
            }
        }
    }
}
