//! The software translation-and-protection table (TPT) of source document 000, Fig. 3.
//!
//! The NIC of 000 has no TPT of its own: the drivers keep one, system wide, in software.
//! Every node's table has two parts:
//! - the **local part**: the regions this node's processes registered (Fig. 5);
//! - a **remote part for every other node**: copies of that node's local part, kept up to
//!   date by the `TPT_UPDATE` / `TPT_REMOVE` control messages (see [`crate::control`]).
//!
//! An entry (Fig. 3(b)) holds the logical address a process uses, the physical address the
//! NIC uses, the length and the protection attribute. Before a work request is handed to the
//! NIC the driver checks it against both parts (Fig. 6 for RDMA WRITE) and translates the
//! addresses; a failed check is a [`ProtectionError`] and nothing is sent.
//!
//! Ranges are checked in 128-bit arithmetic: no address or length can overflow a check.

use std::collections::{BTreeMap, BTreeSet};

use thiserror::Error;

use crate::NodeId;

/// Size in bytes of host physical memory the NIC can address (32-bit physical addresses).
pub const HOST_PHYSICAL_SPAN: u64 = 1 << nic_abi::HOST_ADDRESS_BITS;

/// Protection attribute of a registered region (000 Fig. 3(b): "read only, write only, ...").
///
/// It says what the NIC may do with the region on behalf of a process: *read* it (source of
/// a SEND or RDMA WRITE, or the remote side of an RDMA READ) or *write* it (a receive
/// buffer, the local side of an RDMA READ, the remote side of an RDMA WRITE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protection {
    /// The region may be read, never written.
    ReadOnly,
    /// The region may be written, never read.
    WriteOnly,
    /// The region may be read and written (needed by atomics on the remote side).
    ReadWrite,
}

impl Protection {
    /// All protection attributes.
    pub const ALL: [Protection; 3] = [
        Protection::ReadOnly,
        Protection::WriteOnly,
        Protection::ReadWrite,
    ];

    /// Whether this attribute permits `access`.
    pub fn allows(self, access: Access) -> bool {
        match access {
            Access::Read => matches!(self, Protection::ReadOnly | Protection::ReadWrite),
            Access::Write => matches!(self, Protection::WriteOnly | Protection::ReadWrite),
            Access::ReadWrite => self == Protection::ReadWrite,
        }
    }

    /// Wire code (bit 0 read, bit 1 write): ReadOnly 1, WriteOnly 2, ReadWrite 3.
    pub fn code(self) -> u8 {
        match self {
            Protection::ReadOnly => 1,
            Protection::WriteOnly => 2,
            Protection::ReadWrite => 3,
        }
    }

    /// The attribute with wire code `code`, if any.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Protection::ReadOnly),
            2 => Some(Protection::WriteOnly),
            3 => Some(Protection::ReadWrite),
            _ => None,
        }
    }
}

/// The access a check needs on a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read access.
    Read,
    /// Write access.
    Write,
    /// Read and write access (atomics).
    ReadWrite,
}

/// Which of the two regions of a transfer a check is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The region in this node's local part.
    Local,
    /// The region in the remote part of the destination node.
    Remote,
}

/// One TPT entry (000 Fig. 3(b)) plus the handle that names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TptEntry {
    /// Name of the region, unique within its owner's local part.
    pub handle: u32,
    /// Logical (virtual) address of the region's first byte, as processes use it.
    pub logical: u64,
    /// Host physical address of the region's first byte, as the NIC uses it.
    pub physical: u32,
    /// Length in bytes (at least 1).
    pub length: u32,
    /// What may be done with the region.
    pub protection: Protection,
}

impl TptEntry {
    /// Checks that the entry describes a real region: non-empty, its logical range does not
    /// wrap past 2^64 and its physical range lies within 32-bit host memory.
    pub fn validate(&self) -> Result<(), TptError> {
        if self.length == 0 {
            return Err(TptError::ZeroLength {
                handle: self.handle,
            });
        }
        if self.logical as u128 + self.length as u128 > 1u128 << 64 {
            return Err(TptError::LogicalOverflow {
                handle: self.handle,
                logical: self.logical,
                length: self.length,
            });
        }
        if self.physical as u64 + self.length as u64 > HOST_PHYSICAL_SPAN {
            return Err(TptError::PhysicalOverflow {
                handle: self.handle,
                physical: self.physical,
                length: self.length,
            });
        }
        Ok(())
    }

    /// Whether `[addr, addr + length)` lies within the region's logical range.
    /// A zero-length range must start inside the region or at its end.
    pub fn contains(&self, addr: u64, length: u32) -> bool {
        let start = self.logical as u128;
        let end = start + self.length as u128;
        let a = addr as u128;
        a >= start && a + length as u128 <= end
    }

    /// The physical address of logical `addr` if `[addr, addr + length)` lies within the
    /// region, else `None`.
    pub fn translate(&self, addr: u64, length: u32) -> Option<u32> {
        if !self.contains(addr, length) {
            return None;
        }
        // addr - logical < self.length <= u32::MAX, and physical + that fits (validated).
        let offset = (addr as u128 - self.logical as u128) as u64;
        u32::try_from(self.physical as u64 + offset).ok()
    }
}

/// An address inside a registered region: the region's handle and a logical address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegionRef {
    /// Handle of the region.
    pub handle: u32,
    /// Logical address within the region.
    pub addr: u64,
}

impl RegionRef {
    /// The address `addr` in region `handle`.
    pub fn new(handle: u32, addr: u64) -> Self {
        RegionRef { handle, addr }
    }
}

/// A transfer that passed its TPT checks, with both addresses translated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckedTransfer {
    /// Physical address in local host memory.
    pub local_physical: u32,
    /// Physical address in the destination's host memory (000: the cell carries it).
    pub remote_physical: u32,
    /// Bytes to transfer.
    pub length: u32,
}

/// Errors of TPT maintenance (registration, remote updates).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum TptError {
    /// A region must have at least one byte.
    #[error("region {handle:#x}: length is zero")]
    ZeroLength {
        /// The region's handle.
        handle: u32,
    },
    /// The logical range wraps past 2^64.
    #[error("region {handle:#x}: logical range {logical:#x} + {length} wraps past 2^64")]
    LogicalOverflow {
        /// The region's handle.
        handle: u32,
        /// Its logical address.
        logical: u64,
        /// Its length.
        length: u32,
    },
    /// The physical range leaves 32-bit host memory.
    #[error(
        "region {handle:#x}: physical range {physical:#x} + {length} is beyond 32-bit host memory"
    )]
    PhysicalOverflow {
        /// The region's handle.
        handle: u32,
        /// Its physical address.
        physical: u32,
        /// Its length.
        length: u32,
    },
    /// No region with this handle in the local part.
    #[error("no local region with handle {handle:#x}")]
    UnknownLocalHandle {
        /// The handle asked for.
        handle: u32,
    },
    /// The node number is not below the configured maximum node count.
    #[error("node {node} is out of range (maximum node count {max_nodes})")]
    NodeOutOfRange {
        /// The node asked for.
        node: NodeId,
        /// The configured maximum node count.
        max_nodes: usize,
    },
    /// A remote part was asked for this node itself.
    #[error("node {node} is this node: it has a local part, not a remote one")]
    SelfNode {
        /// This node.
        node: NodeId,
    },
    /// A handle chosen by the caller names a region already.
    #[error("handle {handle:#x} is already registered")]
    HandleInUse {
        /// The handle.
        handle: u32,
    },
    /// Every 32-bit handle is in use.
    #[error("no free handle: every 32-bit handle is registered")]
    HandlesExhausted,
}

/// Why a transfer failed its TPT check (000 Fig. 6: "protection error"); nothing was sent.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ProtectionError {
    /// The local handle names no region of this node.
    #[error("no local region with handle {handle:#x}")]
    UnknownLocalHandle {
        /// The handle.
        handle: u32,
    },
    /// The remote handle names no region in the destination's remote part.
    #[error("node {node} has no region with handle {handle:#x} (or its TPT part is cleared)")]
    UnknownRemoteHandle {
        /// The destination node.
        node: NodeId,
        /// The handle.
        handle: u32,
    },
    /// The destination is not a valid remote node.
    #[error("node {node} is not a remote node of this TPT")]
    InvalidNode {
        /// The destination node.
        node: NodeId,
    },
    /// A region lacks the right the transfer needs (Fig. 6 steps S11, S12).
    #[error("{side:?} region {handle:#x} is {protection:?}: {needed:?} access refused")]
    MissingRight {
        /// Which region.
        side: Side,
        /// Its handle.
        handle: u32,
        /// The access the transfer needs.
        needed: Access,
        /// The region's protection.
        protection: Protection,
    },
    /// The range leaves its region (Fig. 6 step S13).
    #[error("{side:?} region {handle:#x} [{region_start:#x}, +{region_length}) does not contain [{addr:#x}, +{length})")]
    OutOfBounds {
        /// Which region.
        side: Side,
        /// Its handle.
        handle: u32,
        /// Start of the range asked for.
        addr: u64,
        /// Length of the range asked for.
        length: u32,
        /// The region's logical start.
        region_start: u64,
        /// The region's length.
        region_length: u32,
    },
    /// An atomic needs 8-aligned physical addresses on both sides.
    #[error("{side:?} region {handle:#x}: physical address {physical:#x} is not 8-aligned")]
    Misaligned {
        /// Which region.
        side: Side,
        /// Its handle.
        handle: u32,
        /// The translated physical address.
        physical: u32,
    },
}

/// One node's software TPT: its local part and a remote part per other node.
#[derive(Clone, Debug)]
pub struct Tpt {
    node: NodeId,
    max_nodes: usize,
    next_handle: u32,
    local: BTreeMap<u32, TptEntry>,
    /// Handles reserved for memory windows ([`Tpt::reserve_handle`]): never given to a
    /// registration.
    reserved: BTreeSet<u32>,
    remote: Vec<BTreeMap<u32, TptEntry>>,
}

impl Tpt {
    /// An empty table for node `node` of at most `max_nodes` nodes. Handles are allocated
    /// upwards from `first_handle`; choose it anew at every boot (for example at random) so
    /// that a handle of an earlier boot is unlikely to name a region of this one.
    pub fn new(node: NodeId, max_nodes: usize, first_handle: u32) -> Result<Self, TptError> {
        if node as usize >= max_nodes {
            return Err(TptError::NodeOutOfRange { node, max_nodes });
        }
        Ok(Tpt {
            node,
            max_nodes,
            next_handle: first_handle,
            local: BTreeMap::new(),
            reserved: BTreeSet::new(),
            remote: vec![BTreeMap::new(); max_nodes],
        })
    }

    /// This node's number.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// The configured maximum node count.
    pub fn max_nodes(&self) -> usize {
        self.max_nodes
    }

    fn remote_index(&self, node: NodeId) -> Result<usize, TptError> {
        if node as usize >= self.max_nodes {
            return Err(TptError::NodeOutOfRange {
                node,
                max_nodes: self.max_nodes,
            });
        }
        if node == self.node {
            return Err(TptError::SelfNode { node });
        }
        Ok(node as usize)
    }

    /// Registers a region (000 Fig. 5, steps S1-S2): allocates a handle, stores the entry in
    /// the local part and returns it. The caller sends it (step S3) to every node that
    /// currently receives TPT updates.
    pub fn register(
        &mut self,
        logical: u64,
        physical: u32,
        length: u32,
        protection: Protection,
    ) -> Result<TptEntry, TptError> {
        let mut entry = TptEntry {
            handle: self.next_handle,
            logical,
            physical,
            length,
            protection,
        };
        entry.validate()?;
        if self.local.len() as u64 >= 1u64 << 32 {
            return Err(TptError::HandlesExhausted);
        }
        while self.local.contains_key(&entry.handle) || self.reserved.contains(&entry.handle) {
            entry.handle = entry.handle.wrapping_add(1);
        }
        self.next_handle = entry.handle.wrapping_add(1);
        self.local.insert(entry.handle, entry);
        Ok(entry)
    }

    /// Reserves a handle for a memory window (001 AllocateRKey): no registration gets it
    /// until [`Tpt::release_handle`]; a binding enters the local part under it.
    pub fn reserve_handle(&mut self) -> Result<u32, TptError> {
        if (self.local.len() + self.reserved.len()) as u64 >= 1u64 << 32 {
            return Err(TptError::HandlesExhausted);
        }
        let mut handle = self.next_handle;
        while self.local.contains_key(&handle) || self.reserved.contains(&handle) {
            handle = handle.wrapping_add(1);
        }
        self.next_handle = handle.wrapping_add(1);
        self.reserved.insert(handle);
        Ok(handle)
    }

    /// Gives a reserved handle back (001 DeallocateRKey).
    pub fn release_handle(&mut self, handle: u32) {
        self.reserved.remove(&handle);
    }

    /// Stores `entry` in the local part under the handle the caller chose (with a hardware
    /// TPT the handle is the STag the driver allocated) and returns it. Refuses an invalid
    /// entry and a handle already in use.
    pub fn insert_local(&mut self, entry: TptEntry) -> Result<TptEntry, TptError> {
        entry.validate()?;
        if self.local.contains_key(&entry.handle) {
            return Err(TptError::HandleInUse {
                handle: entry.handle,
            });
        }
        self.local.insert(entry.handle, entry);
        Ok(entry)
    }

    /// Removes a region from the local part and returns it; the caller sends `TPT_REMOVE`.
    pub fn deregister(&mut self, handle: u32) -> Result<TptEntry, TptError> {
        self.local
            .remove(&handle)
            .ok_or(TptError::UnknownLocalHandle { handle })
    }

    /// The local region `handle`.
    pub fn local(&self, handle: u32) -> Option<&TptEntry> {
        self.local.get(&handle)
    }

    /// The local part, in handle order.
    pub fn local_entries(&self) -> impl Iterator<Item = &TptEntry> + '_ {
        self.local.values()
    }

    /// Number of regions in the local part.
    pub fn local_len(&self) -> usize {
        self.local.len()
    }

    /// Applies a `TPT_UPDATE` from `from`: each entry is inserted into `from`'s remote part,
    /// replacing an entry with the same handle. All entries are validated first: on an
    /// error nothing is changed.
    pub fn apply_remote_update(
        &mut self,
        from: NodeId,
        entries: &[TptEntry],
    ) -> Result<(), TptError> {
        let i = self.remote_index(from)?;
        for e in entries {
            e.validate()?;
        }
        for e in entries {
            self.remote[i].insert(e.handle, *e);
        }
        Ok(())
    }

    /// Applies a `TPT_REMOVE` from `from`; handles it does not hold are ignored (removal is
    /// idempotent). Returns how many entries were removed.
    pub fn apply_remote_remove(
        &mut self,
        from: NodeId,
        handles: &[u32],
    ) -> Result<usize, TptError> {
        let i = self.remote_index(from)?;
        Ok(handles
            .iter()
            .filter(|h| self.remote[i].remove(h).is_some())
            .count())
    }

    /// Clears `node`'s remote part (000 Fig. 8 step S26, and when a node is found down).
    /// Returns how many entries were dropped.
    pub fn clear_remote(&mut self, node: NodeId) -> Result<usize, TptError> {
        let i = self.remote_index(node)?;
        let n = self.remote[i].len();
        self.remote[i].clear();
        Ok(n)
    }

    /// The region `handle` of node `node`, from its remote part.
    pub fn remote(&self, node: NodeId, handle: u32) -> Result<&TptEntry, ProtectionError> {
        let i = self
            .remote_index(node)
            .map_err(|_| ProtectionError::InvalidNode { node })?;
        self.remote[i]
            .get(&handle)
            .ok_or(ProtectionError::UnknownRemoteHandle { node, handle })
    }

    /// `node`'s remote part, in handle order.
    pub fn remote_entries(
        &self,
        node: NodeId,
    ) -> Result<impl Iterator<Item = &TptEntry> + '_, TptError> {
        let i = self.remote_index(node)?;
        Ok(self.remote[i].values())
    }

    /// Checks that the local range `[at.addr, +length)` of region `at.handle` permits
    /// `access` and translates it: what a SEND (read) or a posted receive (write) needs.
    pub fn check_local(
        &self,
        at: RegionRef,
        length: u32,
        access: Access,
    ) -> Result<u32, ProtectionError> {
        let e = self
            .local
            .get(&at.handle)
            .ok_or(ProtectionError::UnknownLocalHandle { handle: at.handle })?;
        need(e, Side::Local, access)?;
        within(e, Side::Local, at.addr, length)
    }

    /// The RDMA WRITE check of 000 Fig. 6: read right on the local region (S11), write right
    /// on the remote region (S12), the range within both regions (S13); then both addresses
    /// translated.
    pub fn check_rdma_write(
        &self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        length: u32,
    ) -> Result<CheckedTransfer, ProtectionError> {
        self.check_transfer(node, local, remote, length, Access::Read, Access::Write)
    }

    /// The RDMA READ check, Fig. 6 mirrored: write right on the local region (the data lands
    /// there), read right on the remote region, the range within both.
    pub fn check_rdma_read(
        &self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        length: u32,
    ) -> Result<CheckedTransfer, ProtectionError> {
        self.check_transfer(node, local, remote, length, Access::Write, Access::Read)
    }

    /// The atomic (compare-and-swap, fetch-and-add) check: 8 bytes; write right on the local
    /// region (the original value lands there), read and write right on the remote region;
    /// both ranges within their regions and both physical addresses 8-aligned.
    pub fn check_atomic(
        &self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
    ) -> Result<CheckedTransfer, ProtectionError> {
        let t = self.check_transfer(node, local, remote, 8, Access::Write, Access::ReadWrite)?;
        if !t.local_physical.is_multiple_of(8) {
            return Err(ProtectionError::Misaligned {
                side: Side::Local,
                handle: local.handle,
                physical: t.local_physical,
            });
        }
        if !t.remote_physical.is_multiple_of(8) {
            return Err(ProtectionError::Misaligned {
                side: Side::Remote,
                handle: remote.handle,
                physical: t.remote_physical,
            });
        }
        Ok(t)
    }

    fn check_transfer(
        &self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        length: u32,
        local_access: Access,
        remote_access: Access,
    ) -> Result<CheckedTransfer, ProtectionError> {
        let l = self
            .local
            .get(&local.handle)
            .ok_or(ProtectionError::UnknownLocalHandle {
                handle: local.handle,
            })?;
        let r = self.remote(node, remote.handle)?;
        need(l, Side::Local, local_access)?;
        need(r, Side::Remote, remote_access)?;
        let local_physical = within(l, Side::Local, local.addr, length)?;
        let remote_physical = within(r, Side::Remote, remote.addr, length)?;
        Ok(CheckedTransfer {
            local_physical,
            remote_physical,
            length,
        })
    }
}

fn need(e: &TptEntry, side: Side, access: Access) -> Result<(), ProtectionError> {
    if e.protection.allows(access) {
        Ok(())
    } else {
        Err(ProtectionError::MissingRight {
            side,
            handle: e.handle,
            needed: access,
            protection: e.protection,
        })
    }
}

fn within(e: &TptEntry, side: Side, addr: u64, length: u32) -> Result<u32, ProtectionError> {
    e.translate(addr, length)
        .ok_or(ProtectionError::OutOfBounds {
            side,
            handle: e.handle,
            addr,
            length,
            region_start: e.logical,
            region_length: e.length,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn table() -> Tpt {
        let mut t = Tpt::new(0, 4, 0x100).unwrap();
        // Node 0: a readable source and a writable sink.
        t.register(0x1000, 0x8000, 0x100, Protection::ReadOnly)
            .unwrap();
        t.register(0x2000, 0x9000, 0x100, Protection::WriteOnly)
            .unwrap();
        // Node 1's regions as node 0 knows them.
        t.apply_remote_update(
            1,
            &[
                TptEntry {
                    handle: 7,
                    logical: 0x7000_0000,
                    physical: 0x4000,
                    length: 0x80,
                    protection: Protection::WriteOnly,
                },
                TptEntry {
                    handle: 8,
                    logical: 0x7100_0000,
                    physical: 0x5000,
                    length: 0x80,
                    protection: Protection::ReadOnly,
                },
                TptEntry {
                    handle: 9,
                    logical: 0x7200_0000,
                    physical: 0x6004,
                    length: 0x80,
                    protection: Protection::ReadWrite,
                },
            ],
        )
        .unwrap();
        t
    }

    #[test]
    fn registration_allocates_distinct_handles_and_translates() {
        let mut t = Tpt::new(2, 4, u32::MAX).unwrap();
        let a = t.register(0x10, 0x100, 16, Protection::ReadWrite).unwrap();
        let b = t.register(0x10, 0x100, 16, Protection::ReadWrite).unwrap();
        assert_eq!(a.handle, u32::MAX);
        assert_eq!(b.handle, 0, "handles wrap");
        assert_eq!(a.translate(0x18, 8), Some(0x108));
        assert_eq!(a.translate(0x18, 9), None);
        assert_eq!(t.deregister(a.handle), Ok(a));
        assert_eq!(
            t.deregister(a.handle),
            Err(TptError::UnknownLocalHandle { handle: a.handle })
        );
        assert_eq!(t.local_len(), 1);
    }

    #[test]
    fn bad_regions_are_refused() {
        let mut t = Tpt::new(0, 2, 1).unwrap();
        assert_eq!(
            t.register(0, 0, 0, Protection::ReadOnly),
            Err(TptError::ZeroLength { handle: 1 })
        );
        assert!(matches!(
            t.register(u64::MAX, 0, 2, Protection::ReadOnly),
            Err(TptError::LogicalOverflow { .. })
        ));
        // Ending exactly at 2^64 / 2^32 is fine.
        t.register(u64::MAX, 0, 1, Protection::ReadOnly).unwrap();
        t.register(0, u32::MAX, 1, Protection::ReadOnly).unwrap();
        assert!(matches!(
            t.register(0, u32::MAX, 2, Protection::ReadOnly),
            Err(TptError::PhysicalOverflow { .. })
        ));
        assert_eq!(
            Tpt::new(3, 3, 0).err(),
            Some(TptError::NodeOutOfRange {
                node: 3,
                max_nodes: 3
            })
        );
        assert_eq!(t.clear_remote(0), Err(TptError::SelfNode { node: 0 }));
        assert!(matches!(
            t.apply_remote_update(5, &[]),
            Err(TptError::NodeOutOfRange { .. })
        ));
    }

    #[test]
    fn remote_updates_are_all_or_nothing_and_removal_is_idempotent() {
        let mut t = table();
        let good = TptEntry {
            handle: 1,
            logical: 0,
            physical: 0,
            length: 8,
            protection: Protection::ReadOnly,
        };
        let bad = TptEntry { length: 0, ..good };
        assert!(t.apply_remote_update(1, &[good, bad]).is_err());
        assert!(t.remote(1, 1).is_err());
        assert_eq!(t.apply_remote_remove(1, &[7, 7, 1234]), Ok(1));
        assert_eq!(t.remote_entries(1).unwrap().count(), 2);
        assert_eq!(t.clear_remote(1), Ok(2));
        assert_eq!(
            t.remote(1, 8),
            Err(ProtectionError::UnknownRemoteHandle { node: 1, handle: 8 })
        );
    }

    #[test]
    fn rdma_write_check_follows_fig6_order() {
        let t = table();
        let src = RegionRef::new(0x100, 0x1000);
        let sink = RegionRef::new(0x101, 0x2000);
        // Passes: read local, write remote, within both.
        assert_eq!(
            t.check_rdma_write(1, src, RegionRef::new(7, 0x7000_0010), 0x40),
            Ok(CheckedTransfer {
                local_physical: 0x8000,
                remote_physical: 0x4010,
                length: 0x40
            })
        );
        // S11: no read right on the local region.
        assert_eq!(
            t.check_rdma_write(1, sink, RegionRef::new(7, 0x7000_0000), 8),
            Err(ProtectionError::MissingRight {
                side: Side::Local,
                handle: 0x101,
                needed: Access::Read,
                protection: Protection::WriteOnly
            })
        );
        // S12: no write right on the remote region (checked before any bounds).
        assert_eq!(
            t.check_rdma_write(1, src, RegionRef::new(8, 0), 1 << 20),
            Err(ProtectionError::MissingRight {
                side: Side::Remote,
                handle: 8,
                needed: Access::Write,
                protection: Protection::ReadOnly
            })
        );
        // S13: out of the remote region.
        assert!(matches!(
            t.check_rdma_write(1, src, RegionRef::new(7, 0x7000_0041), 0x40),
            Err(ProtectionError::OutOfBounds {
                side: Side::Remote,
                handle: 7,
                ..
            })
        ));
        // S13: out of the local region.
        assert!(matches!(
            t.check_rdma_write(1, src, RegionRef::new(7, 0x7000_0000), 0x101),
            Err(ProtectionError::OutOfBounds {
                side: Side::Local,
                ..
            })
        ));
        // Unknown handles and nodes.
        assert_eq!(
            t.check_rdma_write(2, src, RegionRef::new(7, 0), 1),
            Err(ProtectionError::UnknownRemoteHandle { node: 2, handle: 7 })
        );
        assert_eq!(
            t.check_rdma_write(0, src, RegionRef::new(7, 0), 1),
            Err(ProtectionError::InvalidNode { node: 0 })
        );
        assert_eq!(
            t.check_rdma_write(1, RegionRef::new(5, 0), RegionRef::new(7, 0), 1),
            Err(ProtectionError::UnknownLocalHandle { handle: 5 })
        );
    }

    #[test]
    fn rdma_read_and_atomic_checks() {
        let t = table();
        let src = RegionRef::new(0x100, 0x1000);
        let sink = RegionRef::new(0x101, 0x2000);
        assert!(t
            .check_rdma_read(1, sink, RegionRef::new(8, 0x7100_0000), 0x80)
            .is_ok());
        assert!(matches!(
            t.check_rdma_read(1, src, RegionRef::new(8, 0x7100_0000), 8),
            Err(ProtectionError::MissingRight {
                side: Side::Local,
                needed: Access::Write,
                ..
            })
        ));
        assert!(matches!(
            t.check_rdma_read(1, sink, RegionRef::new(7, 0x7000_0000), 8),
            Err(ProtectionError::MissingRight {
                side: Side::Remote,
                needed: Access::Read,
                ..
            })
        ));
        // Region 9 starts at physical 0x6004: logical +4 is 8-aligned physically.
        assert_eq!(
            t.check_atomic(1, sink, RegionRef::new(9, 0x7200_0004)),
            Ok(CheckedTransfer {
                local_physical: 0x9000,
                remote_physical: 0x6008,
                length: 8
            })
        );
        assert_eq!(
            t.check_atomic(1, sink, RegionRef::new(9, 0x7200_0000)),
            Err(ProtectionError::Misaligned {
                side: Side::Remote,
                handle: 9,
                physical: 0x6004
            })
        );
        assert!(matches!(
            t.check_atomic(
                1,
                RegionRef::new(0x101, 0x2001),
                RegionRef::new(9, 0x7200_0004)
            ),
            Err(ProtectionError::Misaligned {
                side: Side::Local,
                ..
            })
        ));
        // Atomics need read-write remotely.
        assert!(matches!(
            t.check_atomic(1, sink, RegionRef::new(7, 0x7000_0000)),
            Err(ProtectionError::MissingRight {
                side: Side::Remote,
                needed: Access::ReadWrite,
                ..
            })
        ));
    }

    fn protection() -> impl Strategy<Value = Protection> {
        prop::sample::select(Protection::ALL.to_vec())
    }

    proptest! {
        /// `contains` / `translate` agree with a 128-bit reference for any inputs,
        /// including ranges that would overflow 64 bits.
        #[test]
        fn range_checks_never_overflow(
            logical in any::<u64>(), physical in any::<u32>(), length in 1u32..,
            addr in any::<u64>(), len in any::<u32>(),
        ) {
            let e = TptEntry { handle: 0, logical, physical, length, protection: Protection::ReadWrite };
            let inside = addr as u128 >= logical as u128
                && addr as u128 + len as u128 <= logical as u128 + length as u128;
            prop_assert_eq!(e.contains(addr, len), inside);
            match e.translate(addr, len) {
                Some(p) => {
                    prop_assert!(inside && e.validate().is_ok());
                    prop_assert_eq!(p as u64, physical as u64 + (addr - logical));
                }
                None => prop_assert!(!inside || e.validate().is_err()),
            }
        }

        /// The write check passes exactly when both rights and both ranges are right, and a
        /// passing transfer's physical ranges lie inside both regions' physical ranges.
        #[test]
        fn write_check_matches_reference(
            lp in protection(), rp in protection(),
            llen in 1u32..4096, rlen in 1u32..4096,
            loff in 0u64..5000, roff in 0u64..5000, len in 0u32..5000,
        ) {
            let mut t = Tpt::new(0, 2, 0).unwrap();
            let l = t.register(0x1_0000, 0x10_0000, llen, lp).unwrap();
            let r = TptEntry { handle: 3, logical: 0xFFFF_FFFF_FFFF_0000, physical: 0x20_0000, length: rlen, protection: rp };
            t.apply_remote_update(1, &[r]).unwrap();
            let res = t.check_rdma_write(
                1,
                RegionRef::new(l.handle, l.logical + loff),
                RegionRef::new(3, r.logical + roff),
                len,
            );
            let ok = lp.allows(Access::Read) && rp.allows(Access::Write)
                && loff + len as u64 <= llen as u64 && roff + len as u64 <= rlen as u64;
            prop_assert_eq!(res.is_ok(), ok);
            if let Ok(c) = res {
                prop_assert!(c.local_physical >= l.physical && c.local_physical as u64 + len as u64 <= l.physical as u64 + llen as u64);
                prop_assert!(c.remote_physical >= r.physical && c.remote_physical as u64 + len as u64 <= r.physical as u64 + rlen as u64);
            }
        }

        /// Registering and deregistering in any order keeps handles unique and the local
        /// part equal to a reference map.
        #[test]
        fn local_part_matches_reference(ops in prop::collection::vec((any::<bool>(), 0usize..8, 1u32..64), 1..60)) {
            let mut t = Tpt::new(1, 3, u32::MAX - 3).unwrap();
            let mut reference: BTreeMap<u32, TptEntry> = BTreeMap::new();
            for (reg, pick, len) in ops {
                if reg || reference.is_empty() {
                    let e = t.register(0x1000, 0x2000, len, Protection::ReadWrite).unwrap();
                    prop_assert!(reference.insert(e.handle, e).is_none(), "handle reused while live");
                } else {
                    let h = *reference.keys().nth(pick % reference.len()).unwrap();
                    prop_assert_eq!(t.deregister(h), Ok(reference.remove(&h).unwrap()));
                }
                prop_assert!(t.local_entries().copied().eq(reference.values().copied()));
            }
        }
    }
}
