//! The registration cache of source document 004: registrations kept across I/O requests.
//!
//! # What 004 asks, and what this does
//!
//! Without a cache every I/O request registers its buffer and deregisters it after. Here a
//! registration is a TPT entry in the local part, a TPT_UPDATE to every peer (000 Fig. 5)
//! and, with a hardware TPT, an entry programmed through CSRs; a deregistration is a
//! TPT_REMOVE to every peer and a fence until each has confirmed ([`crate::dereg`]). The
//! cache keeps a registration after its request and hands it out again:
//!
//! - **Owners.** Every registration belongs to an owner (a process, or a protection
//!   domain: [`OwnerId`]). A request is a *hit* when a registration of the same owner
//!   covers its logical range with the same physical placement and the same rights; the
//!   hit costs no CSR access, no TPT entry and no control message. Anything else is a
//!   *miss*: the cache registers through its [`Registrar`] (the driver).
//! - **Rights are equal, not wider.** A read-write registration does not serve a read-only
//!   request: the peers would be allowed writes the owner did not grant.
//! - **Lazy deregistration** (004 Fig. 6) happens only when:
//!   1. the memory is freed: the application calls [`RegistrationCache::free`] (its free
//!      hook) and every registration of any owner overlapping the freed physical range is
//!      deregistered;
//!   2. the range or the rights change: a miss whose range overlaps a registration of the
//!      same owner with other rights or another physical placement deregisters that one
//!      first (004: "the existing buffer is simply de-registered" and a new one registered);
//!   3. the cache exceeds its bound: the least recently used registration that no request
//!      holds is evicted;
//!   4. the owner is gone: [`RegistrationCache::owner_gone`] marks it, and
//!      [`RegistrationCache::collect_garbage`] (004's garbage collector) deregisters its
//!      registrations.
//! - **Never stale.** A [`Lease`] names the registration a request uses; the cache never
//!   returns one whose memory was freed or whose rights differ from the request's
//!   (property-tested against a plain model in `driver/tests/regcache.rs`). Freed memory
//!   is reusable only after the driver's [`crate::Completion::Deregistered`] for every
//!   handle `free` returned: a peer may still have requests in flight.
//!
//! # Where it differs from 004
//!
//! 004 keeps the list in the kernel interface module and checks it on every I/O request;
//! here the cache is a driver-side object the application (or its library) calls, so
//! the simulated application decides when a request starts and ends ([`Lease`]). A change
//! of a buffer's properties is detected as an overlapping miss rather than through a
//! separate "modify" call. 004's garbage collector checks "whether the application program
//! that created the buffer is still active"; here the application reports an exit with
//! `owner_gone` and the collector runs when called.

use std::collections::BTreeMap;

use crate::tpt::{Protection, TptEntry, TptError};
use crate::VerbsError;

/// An owner of registrations (a process or protection domain).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OwnerId(pub u32);

/// What the cache registers and deregisters through: the driver's verbs.
pub trait Registrar {
    /// Registers `length` bytes at logical `logical`, physical `physical`.
    fn register(
        &mut self,
        logical: u64,
        physical: u32,
        length: u32,
        protection: Protection,
    ) -> Result<TptEntry, VerbsError>;
    /// Starts deregistering `handle` (the memory is free at its `Deregistered` completion).
    fn deregister(&mut self, handle: u32) -> Result<TptEntry, VerbsError>;
}

impl<A: crate::NicAccess> Registrar for crate::Driver<A> {
    fn register(
        &mut self,
        logical: u64,
        physical: u32,
        length: u32,
        protection: Protection,
    ) -> Result<TptEntry, VerbsError> {
        crate::Driver::register(self, logical, physical, length, protection)
    }

    fn deregister(&mut self, handle: u32) -> Result<TptEntry, VerbsError> {
        crate::Driver::deregister(self, handle)
    }
}

/// A request's hold on a cached registration; give it back with
/// [`RegistrationCache::release`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The registration (its handle names it to the peers).
    pub entry: TptEntry,
    /// Whether the request was served without registering.
    pub hit: bool,
    owner: OwnerId,
}

/// Why a registration left the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// Its memory was freed (the free hook).
    Freed,
    /// A request of the same owner changed the range's placement or rights.
    Changed,
    /// The cache was over its bound (least recently used).
    Evicted,
    /// Its owner is gone (garbage collection).
    Collected,
}

/// Errors of the cache.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The owner was reported gone.
    #[error("owner {0:?} is gone")]
    OwnerGone(OwnerId),
    /// A request would change a registration that a request still holds.
    #[error("registration {handle:#x} of {owner:?} is in use by {users} request(s); its range or rights cannot change")]
    InUse {
        /// The owner.
        owner: OwnerId,
        /// The registration.
        handle: u32,
        /// Requests holding it.
        users: u32,
    },
    /// The length is zero.
    #[error("a registration request needs at least one byte")]
    Empty,
    /// The driver refused.
    #[error(transparent)]
    Verbs(#[from] VerbsError),
}

/// Counters of the cache.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Requests served by a cached registration.
    pub hits: u64,
    /// Requests that registered.
    pub misses: u64,
    /// Registrations performed (one per miss that succeeded).
    pub registrations: u64,
    /// Deregistrations started, per reason.
    pub deregistrations: BTreeMap<Reason, u64>,
}

impl CacheStats {
    /// Hits over requests (0 when there were none).
    pub fn hit_rate(&self) -> f64 {
        let all = self.hits + self.misses;
        if all == 0 {
            0.0
        } else {
            self.hits as f64 / all as f64
        }
    }

    /// Deregistrations started, all reasons.
    pub fn deregistered(&self) -> u64 {
        self.deregistrations.values().sum()
    }
}

#[derive(Clone, Debug)]
struct Cached {
    owner: OwnerId,
    entry: TptEntry,
    users: u32,
    last_use: u64,
}

impl Cached {
    fn logical_end(&self) -> u64 {
        self.entry.logical + self.entry.length as u64
    }

    fn physical_end(&self) -> u64 {
        self.entry.physical as u64 + self.entry.length as u64
    }

    /// Whether this registration serves `length` bytes at `logical` placed at `physical`
    /// with `protection`.
    fn serves(&self, logical: u64, physical: u32, length: u32, protection: Protection) -> bool {
        let end = logical + length as u64;
        self.entry.protection == protection
            && logical >= self.entry.logical
            && end <= self.logical_end()
            && self.entry.physical as u64 + (logical - self.entry.logical) == physical as u64
    }
}

/// The registration cache (see the module docs).
#[derive(Clone, Debug)]
pub struct RegistrationCache {
    capacity: usize,
    /// Cached registrations by handle.
    cached: BTreeMap<u32, Cached>,
    gone: Vec<OwnerId>,
    clock: u64,
    stats: CacheStats,
}

impl RegistrationCache {
    /// A cache holding at most `capacity` registrations that no request holds (at least 1).
    pub fn new(capacity: usize) -> Self {
        assert!(
            capacity >= 1,
            "RegistrationCache: capacity must be at least 1, got {capacity}"
        );
        RegistrationCache {
            capacity,
            cached: BTreeMap::new(),
            gone: vec![],
            clock: 0,
            stats: CacheStats::default(),
        }
    }

    /// The counters.
    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// Registrations in the cache.
    pub fn len(&self) -> usize {
        self.cached.len()
    }

    /// Whether the cache holds no registration.
    pub fn is_empty(&self) -> bool {
        self.cached.is_empty()
    }

    /// The cached registrations, by handle.
    pub fn entries(&self) -> impl Iterator<Item = (OwnerId, TptEntry)> + '_ {
        self.cached.values().map(|c| (c.owner, c.entry))
    }

    /// A registration for `length` bytes at `logical` (placed at `physical`) with
    /// `protection`, for a request of `owner`: a cached one, or a new one (see the module
    /// docs). Hold it until the request ends, then [`RegistrationCache::release`] it.
    pub fn acquire<R: Registrar + ?Sized>(
        &mut self,
        registrar: &mut R,
        owner: OwnerId,
        logical: u64,
        physical: u32,
        length: u32,
        protection: Protection,
    ) -> Result<Lease, CacheError> {
        if self.gone.contains(&owner) {
            return Err(CacheError::OwnerGone(owner));
        }
        if length == 0 {
            return Err(CacheError::Empty);
        }
        self.clock += 1;
        let now = self.clock;
        if let Some(c) = self
            .cached
            .values_mut()
            .find(|c| c.owner == owner && c.serves(logical, physical, length, protection))
        {
            c.users += 1;
            c.last_use = now;
            self.stats.hits += 1;
            return Ok(Lease {
                entry: c.entry,
                hit: true,
                owner,
            });
        }
        self.stats.misses += 1;
        // The owner's registrations this range overlaps describe it otherwise (another
        // placement or other rights): they go first, unless a request holds one.
        let end = logical + length as u64;
        let changed: Vec<u32> = self
            .cached
            .iter()
            .filter(|(_, c)| c.owner == owner && c.entry.logical < end && logical < c.logical_end())
            .map(|(&h, _)| h)
            .collect();
        if let Some(c) = changed
            .iter()
            .filter_map(|h| self.cached.get(h))
            .find(|c| c.users > 0)
        {
            return Err(CacheError::InUse {
                owner,
                handle: c.entry.handle,
                users: c.users,
            });
        }
        for h in changed {
            self.drop_registration(registrar, h, Reason::Changed)?;
        }
        let entry = registrar.register(logical, physical, length, protection)?;
        self.stats.registrations += 1;
        self.cached.insert(
            entry.handle,
            Cached {
                owner,
                entry,
                users: 1,
                last_use: now,
            },
        );
        self.evict(registrar)?;
        Ok(Lease {
            entry,
            hit: false,
            owner,
        })
    }

    /// The request holding `lease` has ended. The registration stays cached (a lease of a
    /// registration that left the cache meanwhile is ignored).
    pub fn release<R: Registrar + ?Sized>(
        &mut self,
        registrar: &mut R,
        lease: Lease,
    ) -> Result<(), CacheError> {
        if let Some(c) = self.cached.get_mut(&lease.entry.handle) {
            if c.owner == lease.owner {
                c.users = c.users.saturating_sub(1);
            }
        }
        self.evict(registrar)
    }

    /// The free hook: the application freed `length` bytes of physical memory at
    /// `physical`. Every cached registration overlapping it is deregistered, whoever holds
    /// it; returns their entries (the memory may be reused once the driver has reported
    /// each `Deregistered`).
    pub fn free<R: Registrar + ?Sized>(
        &mut self,
        registrar: &mut R,
        physical: u32,
        length: u32,
    ) -> Result<Vec<TptEntry>, CacheError> {
        let end = physical as u64 + length as u64;
        let hit: Vec<u32> = self
            .cached
            .iter()
            .filter(|(_, c)| {
                (c.entry.physical as u64) < end && (physical as u64) < c.physical_end()
            })
            .map(|(&h, _)| h)
            .collect();
        let mut out = vec![];
        for h in hit {
            out.push(self.drop_registration(registrar, h, Reason::Freed)?);
        }
        Ok(out)
    }

    /// `owner` is gone (its process exited): it gets no registration any more, and the
    /// next [`RegistrationCache::collect_garbage`] deregisters its registrations.
    pub fn owner_gone(&mut self, owner: OwnerId) {
        if !self.gone.contains(&owner) {
            self.gone.push(owner);
        }
        // Its requests ended with it.
        for c in self.cached.values_mut().filter(|c| c.owner == owner) {
            c.users = 0;
        }
    }

    /// Deregisters every registration of the owners that are gone; returns their entries.
    pub fn collect_garbage<R: Registrar + ?Sized>(
        &mut self,
        registrar: &mut R,
    ) -> Result<Vec<TptEntry>, CacheError> {
        let dead: Vec<u32> = self
            .cached
            .iter()
            .filter(|(_, c)| self.gone.contains(&c.owner))
            .map(|(&h, _)| h)
            .collect();
        let mut out = vec![];
        for h in dead {
            out.push(self.drop_registration(registrar, h, Reason::Collected)?);
        }
        Ok(out)
    }

    /// Forgets every registration without deregistering (the driver restarted, and its
    /// TPT with it).
    pub fn reset(&mut self) {
        self.cached.clear();
    }

    /// Evicts least recently used registrations no request holds while over the bound.
    fn evict<R: Registrar + ?Sized>(&mut self, registrar: &mut R) -> Result<(), CacheError> {
        while self.cached.len() > self.capacity {
            let Some(h) = self
                .cached
                .iter()
                .filter(|(_, c)| c.users == 0)
                .min_by_key(|(_, c)| c.last_use)
                .map(|(&h, _)| h)
            else {
                return Ok(()); // every one is in use: the bound waits for a release
            };
            self.drop_registration(registrar, h, Reason::Evicted)?;
        }
        Ok(())
    }

    fn drop_registration<R: Registrar + ?Sized>(
        &mut self,
        registrar: &mut R,
        handle: u32,
        reason: Reason,
    ) -> Result<TptEntry, CacheError> {
        match registrar.deregister(handle) {
            Ok(entry) => {
                self.cached.remove(&handle);
                *self.stats.deregistrations.entry(reason).or_default() += 1;
                Ok(entry)
            }
            Err(e) => {
                // The driver no longer knows the handle (a one-shot key used up and
                // retired, say): nothing to deregister, and nothing to hand out again.
                if matches!(e, VerbsError::Tpt(TptError::UnknownLocalHandle { .. })) {
                    self.cached.remove(&handle);
                }
                Err(e.into())
            }
        }
    }
}
