//! Deregistration with a fence: when the memory of a deregistered region may be reused.
//!
//! # Why a fence
//!
//! Without a hardware TPT a peer's RDMA request carries the *physical* address it took from
//! its copy of this node's TPT part (000), and this node's NIC writes there without any
//! check. Removing the region from the local part and sending TPT_REMOVE does not stop a
//! request the peer posted before the TPT_REMOVE arrived: it is still in the peer's send
//! queue, on the wire or being retransmitted, and lands whenever it gets through. Nor does
//! barring: [`crate::rejoin::Action::Bar`] only stops this node's own RDMA *to* a peer; the
//! NIC has no per-source RDMA gate (only `ENABLE.rdma`, for every source at once), so a
//! barred peer's requests are still executed here.
//!
//! With a hardware TPT the NIC's invalidate command stops every request that is checked
//! after it, and an exception for the STag is refused (the region has left the local part).
//! It is not a fence by itself either: the responder checks a message on its first cell
//! (`rtl/src/responder/receive_queue_engine.rs`) and then writes the message's remaining cells to the
//! address the check returned, while the TPT's invalidate waits only for the lookup in
//! flight (`rtl/src/tpt/mod.rs`, "Consistency"). So a WRITE whose first cell passed before the
//! invalidate completed keeps writing into the region after it; the NIC has no status that
//! tells when that message has drained. Both TPT kinds therefore use the same fence.
//!
//! # The protocol
//!
//! - **Owner.** [`crate::Driver::deregister`] removes the region from the local part at
//!   once (no new request of this node's verbs can name it; with a hardware TPT the entry
//!   is invalidated first) and sends TPT_REMOVE to every peer that was sent the region in
//!   a TPT_UPDATE (or a push) during this boot, and to every peer that receives updates.
//!   The region is *pending* until each of the peers it was sent to has answered
//!   TPT_REMOVE_DONE for it; then it is *freed*: [`crate::Completion::Deregistered`] comes
//!   out of [`crate::Driver::poll`], and only from then may the memory be reused. A region
//!   that was never sent to a peer is freed at once (the completion comes with the next
//!   poll). TPT_REMOVE goes again to the peers still missing every
//!   [`crate::membership::Protocol::resend_interval`] (a flush, a reboot or a failed send
//!   may have lost it); TPT_REMOVE_DONE answers are idempotent.
//! - **Peer.** On TPT_REMOVE from X a driver removes the handles from X's remote part
//!   *whatever its membership state* (removing an entry is always safe; the protocol's
//!   acceptance rules only guard against stale entries being *added*), notes its next
//!   operation number to X, and sends TPT_REMOVE_DONE with the handles once every
//!   operation it issued to X before that number has completed (success, error or
//!   FLUSHED after a flush's NOP): the same per-destination sequence numbers as
//!   [`crate::rejoin::Action::StartFence`], in a separate queue of fences so that it never
//!   delays or replaces a membership fence. Its verbs cannot post against the handles any
//!   more (the copy is gone), and everything it posted before is either completed or, if
//!   flushed, on the wire ahead of the TPT_REMOVE_DONE (the fabric keeps each
//!   source-destination pair in order). So when TPT_REMOVE_DONE arrives, nothing that
//!   peer posted against the region can still land.
//!
//! # Which peers the owner waits for, and what happens meanwhile
//!
//! Exactly the peers the region was sent to in this boot (whatever their state now),
//! until each answers. Nothing else releases a peer:
//! - A peer that is **barred** (it NACKed, or is rejoining) is still waited for: barring
//!   does not stop its requests at this NIC (see above), and a peer cut off by a link
//!   failure keeps its copy and retransmits when the link returns (the case
//!   [`crate::rejoin`] calls outside 000's model).
//! - A peer that **reboots** loses its copy, but a TPT_UPDATE this node sent before the
//!   reboot and the NIC retransmitted may reach its new incarnation (for instance behind a
//!   BOOTING of this node when both boot at once), so its BOOTING alone proves nothing.
//!   Its new incarnation answers the next TPT_REMOVE (resent every interval) like any
//!   peer: it removes what it holds and confirms.
//! - A peer that **never comes back** keeps the region pending for ever: the memory is
//!   never reported free (a leak, never a corruption). [`crate::Driver::deregistration`]
//!   shows which peers a pending region still waits for.
//! - A TPT_REMOVE_DONE from an earlier incarnation of the peer is sound: that incarnation
//!   received every message this node sent before the TPT_REMOVE, so none of them can
//!   reach a later one.

use std::collections::BTreeMap;

use bitvec::prelude::*;

use crate::rejoin::Tick;
use crate::tpt::TptEntry;
use crate::NodeId;

/// A deregistration waiting for its peers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingDeregistration {
    /// The region (no longer in the local part).
    pub entry: TptEntry,
    /// Peers that have not confirmed yet (TPT_REMOVE_DONE).
    pub waiting: Vec<NodeId>,
}

#[derive(Clone, Debug)]
struct Pending {
    entry: TptEntry,
    waiting: BitVec,
    resend_at: Tick,
}

/// The owner's side of the deregistration fence: which peers each local region was sent
/// to, and the deregistrations waiting for confirmations.
#[derive(Clone, Debug)]
pub struct Deregistrations {
    max_nodes: usize,
    /// Peers each local region was sent to during this boot.
    sent_to: BTreeMap<u32, BitVec>,
    pending: BTreeMap<u32, Pending>,
}

impl Deregistrations {
    /// Nothing sent, nothing pending, for nodes `0..max_nodes`.
    pub fn new(max_nodes: usize) -> Self {
        Deregistrations {
            max_nodes,
            sent_to: BTreeMap::new(),
            pending: BTreeMap::new(),
        }
    }

    /// Regions `handles` went to `node` (a TPT_UPDATE or a push).
    pub(crate) fn note_sent(&mut self, node: NodeId, handles: impl IntoIterator<Item = u32>) {
        if node as usize >= self.max_nodes {
            return;
        }
        for h in handles {
            let n = self.max_nodes;
            self.sent_to
                .entry(h)
                .or_insert_with(|| bitvec![0; n])
                .set(node as usize, true);
        }
    }

    /// Starts the deregistration of `entry` (already out of the local part); its TPT_REMOVE
    /// is resent at `resend_at` to whoever has not confirmed. Returns the peers that must
    /// confirm; none: the region is free now (nothing is kept).
    pub(crate) fn start(&mut self, entry: TptEntry, resend_at: Tick) -> Vec<NodeId> {
        let Some(waiting) = self.sent_to.remove(&entry.handle).filter(|w| w.any()) else {
            return vec![];
        };
        let peers = waiting.iter_ones().map(|x| x as NodeId).collect();
        self.pending.insert(
            entry.handle,
            Pending {
                entry,
                waiting,
                resend_at,
            },
        );
        peers
    }

    /// TPT_REMOVE_DONE for `handles` from `from`: returns the regions this frees (every
    /// peer has confirmed). Handles that are not pending, or not waiting for `from`, are
    /// ignored (a duplicate answer to a resent TPT_REMOVE).
    pub(crate) fn confirm(&mut self, from: NodeId, handles: &[u32]) -> Vec<TptEntry> {
        let mut freed = vec![];
        for h in handles {
            let Some(p) = self.pending.get_mut(h) else {
                continue;
            };
            if let Some(mut bit) = p.waiting.get_mut(from as usize) {
                *bit = false;
            }
            if p.waiting.not_any() {
                if let Some(p) = self.pending.remove(h) {
                    freed.push(p.entry);
                }
            }
        }
        freed
    }

    /// The TPT_REMOVEs due again at `now`, per peer (its handles in order); their next
    /// resend is at `next`.
    pub(crate) fn due(&mut self, now: Tick, next: Tick) -> Vec<(NodeId, Vec<u32>)> {
        let mut per_node: BTreeMap<NodeId, Vec<u32>> = BTreeMap::new();
        for (&h, p) in self.pending.iter_mut() {
            if p.resend_at > now {
                continue;
            }
            p.resend_at = next;
            for x in p.waiting.iter_ones() {
                per_node.entry(x as NodeId).or_default().push(h);
            }
        }
        per_node.into_iter().collect()
    }

    /// The deregistration of `handle`, while it waits for peers.
    pub fn pending(&self, handle: u32) -> Option<PendingDeregistration> {
        self.pending.get(&handle).map(|p| PendingDeregistration {
            entry: p.entry,
            waiting: p.waiting.iter_ones().map(|x| x as NodeId).collect(),
        })
    }

    /// Handles of the deregistrations waiting for peers, in order.
    pub fn pending_handles(&self) -> impl Iterator<Item = u32> + '_ {
        self.pending.keys().copied()
    }

    /// Peers local region `handle` was sent to during this boot.
    pub fn sent_to(&self, handle: u32) -> Vec<NodeId> {
        self.sent_to
            .get(&handle)
            .map(|w| w.iter_ones().map(|x| x as NodeId).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpt::Protection;

    fn entry(handle: u32) -> TptEntry {
        TptEntry {
            handle,
            logical: 0,
            physical: 0,
            length: 8,
            protection: Protection::ReadWrite,
        }
    }

    #[test]
    fn a_region_is_freed_when_every_peer_it_was_sent_to_confirms() {
        let mut d = Deregistrations::new(4);
        d.note_sent(1, [7, 8]);
        d.note_sent(3, [7]);
        assert_eq!(
            d.start(entry(9), 100),
            Vec::<NodeId>::new(),
            "never sent: free"
        );
        assert_eq!(d.start(entry(7), 100), vec![1, 3]);
        assert_eq!(d.confirm(2, &[7]), vec![], "node 2 was not waited for");
        assert_eq!(d.confirm(1, &[7, 8]), vec![], "8 is not pending");
        assert_eq!(d.pending(7).unwrap().waiting, vec![3]);
        assert_eq!(d.due(99, 200), vec![], "not due yet");
        assert_eq!(d.due(100, 200), vec![(3, vec![7])]);
        assert_eq!(d.due(150, 250), vec![], "next resend at 200");
        assert_eq!(d.confirm(3, &[7]), vec![entry(7)]);
        assert_eq!(d.confirm(3, &[7]), vec![], "a duplicate answer");
        assert!(d.pending(7).is_none());
        assert_eq!(d.sent_to(8), vec![1]);
    }
}
