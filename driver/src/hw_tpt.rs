//! The NIC's hardware TPT (the optional `Tpt` block of sources 001 and 003), as the driver
//! manages it: STag allocation, programming and invalidating entries over the TPT CSRs,
//! and answering the exception queue.
//!
//! # STags
//! An STag is 32 bits: a 24-bit **index** into the NIC's table (bits 31:8) and an 8-bit
//! **key** (bits 7:0), as in iWARP and Linux siw/mlx. Indices come from a free list (FIFO,
//! so an index freed by a deregistration is reused as late as possible); each index has a
//! key that advances every time the index is handed out, so an STag of an earlier
//! registration of the same index no longer matches the entry's key. Both the free list's
//! starting point and the first keys are drawn from the boot's
//! [`crate::DriverConfig::first_handle`], so an STag of an earlier boot (whose table the
//! NIC's reset cleared) is unlikely to name an entry of this one; the rejoin protocol makes
//! sure such an STag never arrives once RDMA is enabled.
//!
//! # Programming (docs/csr-map.md, TPT)
//! A registration writes `TPT_INDEX`, `TPT_WORD0` (valid, rights, key), `TPT_VADDR`,
//! `TPT_LENGTH`, `TPT_PADDR` and `TPT_COMMAND` = write, then reads `TPT_STATUS` until busy
//! clears ([`BUSY_POLLS`] reads at most) and checks that the command was not refused. Only
//! then is the STag published to the peers. A deregistration writes `TPT_COMMAND` =
//! invalidate for the index and waits the same way before the index goes back on the free
//! list. The invalidate stops every request checked after it, but not the rest of a WRITE
//! whose first cell passed the check before it (the responder checks once per message), so
//! the region's memory is freed only after the fence of [`crate::dereg`].
//!
//! # One-shot entries and invalidation
//! [`crate::Driver::register_one_shot`] sets the entry's one-shot bit (`TPT_WORD0` bit 4):
//! the NIC clears the entry's valid bit when a request passes the check and is executed.
//! A request posted with the invalidate flag ([`crate::Driver::rdma_write_invalidate`])
//! does the same to any entry. The driver learns of it when a later request misses.
//!
//! # Exceptions
//! An incoming RDMA request whose STag is not valid in the table waits in the NIC's
//! exception queue (`EXC_HEAD0..2`) until the driver answers it (`EXC_ANSWER`, echoing the
//! head's tag) or `EXC_TIMEOUT` passes. The driver refuses every head (the requester gets
//! REMOTE_ACCESS_ERROR): every region of this host is in the NIC's table from registration
//! to deregistration (source 003's regions the NIC does not hold do not exist here: a
//! registration that finds the table full fails), so a head naming a region of the local
//! part is one whose entry the NIC cleared (a used one-shot entry, or an invalidating
//! request's), and answering it from the driver's own copy would bring the STag back to
//! life. The driver retires such a region: out of the local part, TPT_REMOVE to the peers,
//! freed after the fence of [`crate::dereg`]. Other heads (a deregistered region, an STag
//! of an earlier boot) are refused as well.

use std::collections::VecDeque;

use nic_abi::csr;
use thiserror::Error;

use crate::tpt::{Access, Protection, TptEntry};

/// Reads of `TPT_STATUS` a command may take before the driver gives up on the NIC. The
/// table's reset sweep (256 clocks) is the longest wait a healthy NIC makes.
pub const BUSY_POLLS: u32 = 1024;

/// The STag of table index `index` with key `key`.
pub const fn stag(index: u32, key: u8) -> u32 {
    (index << 8) | key as u32
}

/// The table index of `stag` (bits 31:8).
pub const fn stag_index(stag: u32) -> u32 {
    stag >> 8
}

/// The key of `stag` (bits 7:0).
pub const fn stag_key(stag: u32) -> u8 {
    stag as u8
}

/// `TPT_WORD0` rights for a region's protection: read-only regions may be RDMA READ
/// sources, write-only ones RDMA WRITE targets, read-write ones both and atomic targets.
pub fn rights(protection: Protection) -> u64 {
    match protection {
        Protection::ReadOnly => csr::TPT_REMOTE_READ,
        Protection::WriteOnly => csr::TPT_REMOTE_WRITE,
        Protection::ReadWrite => csr::TPT_REMOTE_READ | csr::TPT_REMOTE_WRITE | csr::TPT_ATOMIC,
    }
}

/// The `TPT_WORD0` value of a valid entry for `entry` (its handle is the STag).
pub fn word0(entry: &TptEntry) -> u64 {
    csr::TPT_VALID
        | rights(entry.protection)
        | (stag_key(entry.handle) as u64) << csr::TPT_KEY_SHIFT
}

/// Errors of the hardware TPT.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum HwTptError {
    /// Every index of the table is registered.
    #[error("the NIC's TPT is full: all {entries} entries are registered")]
    TableFull {
        /// Entries of the table.
        entries: u32,
    },
    /// `TPT_STATUS` stayed busy.
    #[error("TPT_STATUS still busy after {reads} reads (last {status:#x}): the NIC's TPT does not answer")]
    Busy {
        /// Reads made.
        reads: u32,
        /// The last value read.
        status: u64,
    },
    /// The NIC refused a command (`TPT_STATUS` bits 15:8 advanced): the index is beyond
    /// its table.
    #[error("the NIC refused the TPT command for index {index:#x} (beyond its table)")]
    CommandRefused {
        /// The index.
        index: u32,
    },
}

/// What a driver knows about its NIC's hardware TPT.
#[derive(Clone, Debug)]
pub struct HwTpt {
    entries: u32,
    free: VecDeque<u32>,
    /// The key each index gets the next time it is handed out.
    next_key: Vec<u8>,
    /// `TPT_STATUS` bits 15:8 as last read (commands refused).
    pub(crate) refused_seen: u8,
}

impl HwTpt {
    /// A table of `2^log2` entries, all free; the free list starts at an index and the keys
    /// at a value drawn from `seed` (the boot's first handle).
    pub fn new(log2: u32, seed: u32) -> Self {
        let entries = 1u32 << log2.min(24);
        let start = (seed >> 8) % entries;
        let key0 = seed as u8;
        HwTpt {
            entries,
            free: (0..entries).map(|i| (start + i) % entries).collect(),
            next_key: vec![key0; entries as usize],
            refused_seen: 0,
        }
    }

    /// Entries of the table.
    pub fn entries(&self) -> u32 {
        self.entries
    }

    /// Indices not registered.
    pub fn free_count(&self) -> usize {
        self.free.len()
    }

    /// Takes a free index and returns its STag with the index's next key (which then
    /// advances, so the next registration of this index gets another STag).
    pub fn allocate(&mut self) -> Result<u32, HwTptError> {
        let index = self.free.pop_front().ok_or(HwTptError::TableFull {
            entries: self.entries,
        })?;
        let key = &mut self.next_key[index as usize];
        let s = stag(index, *key);
        *key = key.wrapping_add(1);
        Ok(s)
    }

    /// Puts the index of `stag` back on the free list. Only for an index whose entry is
    /// invalid in the NIC (never programmed, or invalidated).
    pub fn release(&mut self, stag: u32) {
        let index = stag_index(stag);
        if index < self.entries && !self.free.contains(&index) {
            self.free.push_back(index);
        }
    }
}

/// One exception-queue head as read from `EXC_HEAD0..2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExceptionHead {
    /// `EXC_HEAD0` as read (the answer echoes its tag).
    pub head0: u64,
    /// The STag the request carried.
    pub stag: u32,
    /// Access bits: 1 read, 2 write, 4 atomic.
    pub access: u8,
    /// The request's virtual address.
    pub vaddr: u64,
    /// The request's length in bytes.
    pub length: u32,
}

impl ExceptionHead {
    /// The head in `head0` (with `vaddr` and `length` from `EXC_HEAD1`, `EXC_HEAD2`), or
    /// `None` when no head is valid or the value cannot be one (reserved bits 31:24 set,
    /// as a read that failed returns).
    pub fn decode(head0: u64, vaddr: u64, length: u64) -> Option<Self> {
        if head0 & csr::EXC_HEAD_VALID == 0 || (head0 >> 24) & 0xFF != 0 {
            return None;
        }
        Some(ExceptionHead {
            head0,
            stag: (head0 >> csr::EXC_HEAD_STAG_SHIFT) as u32,
            access: ((head0 >> csr::EXC_HEAD_ACCESS_SHIFT) & 0xF) as u8,
            vaddr,
            length: length as u32,
        })
    }

    /// The head's tag (bits 23:16).
    pub fn tag(&self) -> u8 {
        ((self.head0 & csr::EXC_TAG_MASK) >> csr::EXC_TAG_SHIFT) as u8
    }

    /// The access the request needs, if its bits name one.
    pub fn needed(&self) -> Option<Access> {
        match self.access {
            1 => Some(Access::Read),
            2 => Some(Access::Write),
            4 => Some(Access::ReadWrite),
            _ => None,
        }
    }

    /// The physical address to answer with when `entry` (this host's local region named
    /// by the head's STag) permits the request: rights, range, an 8-aligned translation.
    pub fn translate(&self, entry: &TptEntry) -> Option<u32> {
        if entry.handle != self.stag || !entry.protection.allows(self.needed()?) {
            return None;
        }
        entry
            .translate(self.vaddr, self.length)
            .filter(|p| p.is_multiple_of(8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_change_when_an_index_is_reused_and_the_table_fills() {
        let mut t = HwTpt::new(4, 0x0000_0305);
        assert_eq!(t.entries(), 16);
        let a = t.allocate().unwrap();
        assert_eq!(stag_index(a), 3, "the free list starts where the seed says");
        assert_eq!(stag_key(a), 5);
        t.release(a);
        let mut seen = vec![a];
        // Every other index is handed out before index 3 comes back, with a new key.
        for _ in 0..15 {
            let s = t.allocate().unwrap();
            assert_ne!(stag_index(s), 3);
            seen.push(s);
        }
        let again = t.allocate().unwrap();
        assert_eq!(stag_index(again), 3);
        assert_ne!(again, a, "a reused index gets another key");
        assert_eq!(
            t.allocate(),
            Err(HwTptError::TableFull { entries: 16 }),
            "16 entries registered"
        );
        t.release(again);
        t.release(again);
        assert_eq!(t.free_count(), 1, "a double release frees once");
    }

    #[test]
    fn exception_heads_decode_and_translate_only_what_the_region_permits() {
        let entry = TptEntry {
            handle: stag(7, 0x42),
            logical: 0x10_0000,
            physical: 0x8000,
            length: 0x100,
            protection: Protection::ReadOnly,
        };
        let head0 = |access: u64, s: u32| {
            csr::EXC_HEAD_VALID
                | access << csr::EXC_HEAD_ACCESS_SHIFT
                | 0x2A << csr::EXC_TAG_SHIFT
                | (s as u64) << csr::EXC_HEAD_STAG_SHIFT
        };
        let read = ExceptionHead::decode(head0(1, entry.handle), 0x10_0040, 64).unwrap();
        assert_eq!(read.tag(), 0x2A);
        assert_eq!(read.translate(&entry), Some(0x8040));
        let write = ExceptionHead::decode(head0(2, entry.handle), 0x10_0040, 64).unwrap();
        assert_eq!(write.translate(&entry), None, "no write right");
        let beyond = ExceptionHead::decode(head0(1, entry.handle), 0x10_00F8, 16).unwrap();
        assert_eq!(beyond.translate(&entry), None, "out of the region");
        let other_key = ExceptionHead::decode(head0(1, stag(7, 0x43)), 0x10_0040, 8).unwrap();
        assert_eq!(other_key.translate(&entry), None, "another key");
        assert_eq!(ExceptionHead::decode(0, 0, 0), None, "no head");
        assert_eq!(
            ExceptionHead::decode(u64::MAX, 0, 0),
            None,
            "reserved bits: not a head"
        );
        assert_eq!(
            word0(&entry),
            csr::TPT_VALID | csr::TPT_REMOTE_READ | 0x42 << csr::TPT_KEY_SHIFT
        );
    }
}
