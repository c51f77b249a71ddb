//! The verbs a process uses on a [`Driver`]: memory registration, SEND / RECEIVE, RDMA
//! WRITE / READ, atomics; completions come back from [`Driver::poll`].
//!
//! Every verb checks its arguments first (node, length, barring, the software TPT of 000
//! Fig. 6, alignment, ring space) and on any failure returns a [`VerbsError`] having written
//! nothing to the NIC. Addresses are logical addresses inside registered regions
//! ([`RegionRef`]); the driver translates them. For RDMA the work request carries the
//! destination's *physical* address from the remote TPT part when the NICs have no TPT
//! (000), or, with a hardware TPT, the region's STag and the virtual address (WQE words 4
//! and 3), which the destination NIC checks and translates. The Fig. 6 check runs first
//! either way.
//!
//! Deregistration is not immediate: [`Driver::deregister`] starts it, and the memory may be
//! reused only after [`Completion::Deregistered`] ([`crate::dereg`]). With a hardware TPT
//! a region may be one-shot ([`Driver::register_one_shot`]) and a request may carry the
//! invalidate flag ([`Driver::rdma_write_invalidate`], [`Driver::rdma_read_invalidate`]).

use nic_abi::{CompletionStatus, Wqe, WqeOpcode, MAX_MESSAGE_LENGTH};
use thiserror::Error;

use crate::control::{ControlMessage, TptRemove, TptUpdate};
use crate::dereg::{Deregistrations, PendingDeregistration};
use crate::driver::{AppRecv, SendKind, CONTROL_IMMEDIATE};
use crate::hw_tpt::HwTptError;
use crate::tpt::{
    Access, CheckedTransfer, Protection, ProtectionError, RegionRef, Side, TptEntry, TptError,
};
use crate::windows::{BindError, LocalWork};
use crate::{Driver, NicAccess, NodeId};

/// A completed application work request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completion {
    /// A send-side work request (SEND, RDMA, atomic) completed.
    Send {
        /// The application's work-request id.
        wr_id: u64,
        /// The destination node.
        node: NodeId,
        /// The operation.
        opcode: WqeOpcode,
        /// Success, a local error or the responder's NACK.
        status: CompletionStatus,
    },
    /// A posted receive completed: a SEND or an RDMA WRITE with immediate arrived.
    Receive {
        /// The application's work-request id of the receive.
        wr_id: u64,
        /// The sender.
        node: NodeId,
        /// The sender's operation.
        opcode: WqeOpcode,
        /// The message length (what was copied is at most the buffer length).
        byte_count: u32,
        /// The immediate data, if any.
        immediate: Option<u32>,
        /// Success, or `LocalLengthError` when the buffer was shorter than the message.
        status: CompletionStatus,
    },
    /// A deregistered region is freed: no request any peer posted against it can still
    /// land, so its memory may be reused now and not before ([`crate::dereg`]). Comes for
    /// every [`Driver::deregister`] that succeeded, and for every region the driver
    /// retired on its own (a used-up one-shot or invalidated STag, see
    /// [`Driver::register_one_shot`]).
    Deregistered {
        /// The region as it was registered (with its physical address).
        entry: TptEntry,
    },
    /// A local work request (BIND RKEY, UNBIND, DELAY: [`crate::windows`]) completed, in
    /// order on the queue pair to `node`; a BIND or UNBIND with success has been applied.
    Local {
        /// The application's work-request id.
        wr_id: u64,
        /// The queue pair's node.
        node: NodeId,
        /// What it did.
        work: LocalWork,
        /// Success; FLUSHED when the queue pair was flushed; BIND_REFUSED when the TPT
        /// refused the binding (nothing changed); a local error from the NIC.
        status: CompletionStatus,
    },
}

/// Why a verb was refused; nothing was sent.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum VerbsError {
    /// [`Driver::boot`] has not been called.
    #[error("the driver has not booted")]
    NotBooted,
    /// The node is not another node of the cluster.
    #[error("node {node} is not another node of the cluster")]
    InvalidNode {
        /// The node.
        node: NodeId,
    },
    /// RDMA to the node is barred (it is rejoining, or it NACKed: 000).
    #[error("RDMA to node {node} is barred until it rejoins")]
    NodeBarred {
        /// The node.
        node: NodeId,
    },
    /// The TPT check failed (000 Fig. 6).
    #[error("protection error: {0}")]
    Protection(#[from] ProtectionError),
    /// Registration refused.
    #[error(transparent)]
    Tpt(#[from] TptError),
    /// The send queue to the node is full (or control messages are waiting for it).
    #[error("send queue to node {node} is full")]
    RingFull {
        /// The node.
        node: NodeId,
    },
    /// Longer than a work request may be.
    #[error("length {length} exceeds {max}")]
    TooLong {
        /// The length asked for.
        length: u32,
        /// The limit.
        max: u32,
    },
    /// A physical address the NIC would access is not 8-aligned.
    #[error("{side:?} physical address {physical:#x} is not 8-aligned (the NIC's DMA needs it)")]
    Misaligned {
        /// Which side.
        side: Side,
        /// The physical address.
        physical: u32,
    },
    /// With a hardware TPT: the remote virtual address is not 8-aligned (the NIC's DMA
    /// needs the translation to be).
    #[error("remote virtual address {vaddr:#x} is not 8-aligned (the NIC's DMA needs it)")]
    MisalignedRemote {
        /// The virtual address.
        vaddr: u64,
    },
    /// The NIC's hardware TPT refused or did not complete a command.
    #[error(transparent)]
    HardwareTpt(#[from] HwTptError),
    /// The immediate value is reserved for driver control messages.
    #[error("immediate {CONTROL_IMMEDIATE:#x} is reserved for driver control messages")]
    ReservedImmediate,
    /// A memory-window or DELAY verb's parameters ([`crate::windows`]).
    #[error(transparent)]
    Bind(#[from] BindError),
    /// The verb needs a hardware TPT in the NICs (one-shot registration, requests with
    /// the invalidate flag): without one a request carries a physical address that no
    /// NIC checks.
    #[error("{what} needs a hardware TPT in the NICs; this NIC has none")]
    NeedsHardwareTpt {
        /// What was asked for.
        what: &'static str,
    },
}

impl<A: NicAccess> Driver<A> {
    fn check_peer(&self, node: NodeId) -> Result<(), VerbsError> {
        if !self.booted {
            return Err(VerbsError::NotBooted);
        }
        if node == self.node || node as usize >= self.config.node_count {
            return Err(VerbsError::InvalidNode { node });
        }
        Ok(())
    }

    fn check_rdma_peer(&self, node: NodeId, length: u32) -> Result<(), VerbsError> {
        self.check_peer(node)?;
        if length > MAX_MESSAGE_LENGTH {
            return Err(VerbsError::TooLong {
                length,
                max: MAX_MESSAGE_LENGTH,
            });
        }
        if self.is_barred(node) {
            return Err(VerbsError::NodeBarred { node });
        }
        Ok(())
    }

    /// The invalidate flag means something only to a hardware TPT.
    fn check_invalidate(&self, invalidate: bool) -> Result<(), VerbsError> {
        if invalidate && self.hw_tpt.is_none() {
            return Err(VerbsError::NeedsHardwareTpt {
                what: "a request with the invalidate flag",
            });
        }
        Ok(())
    }

    fn check_room(&self, node: NodeId) -> Result<(), VerbsError> {
        if self.sq_has_room(node) {
            Ok(())
        } else {
            Err(VerbsError::RingFull { node })
        }
    }

    fn aligned(&self, t: &CheckedTransfer, remote: RegionRef) -> Result<(), VerbsError> {
        if !t.local_physical.is_multiple_of(8) {
            return Err(VerbsError::Misaligned {
                side: Side::Local,
                physical: t.local_physical,
            });
        }
        if self.hw_tpt.is_some() {
            // The peer's physical address is not known here; its region's virtual and
            // physical bases are both 8-aligned or the NIC refuses the translation.
            if !remote.addr.is_multiple_of(8) {
                return Err(VerbsError::MisalignedRemote { vaddr: remote.addr });
            }
            return Ok(());
        }
        if !t.remote_physical.is_multiple_of(8) {
            return Err(VerbsError::Misaligned {
                side: Side::Remote,
                physical: t.remote_physical,
            });
        }
        Ok(())
    }

    /// The WQE's remote fields (word 3 remote address, word 4 STag): the translated
    /// physical address without a hardware TPT (000), the STag and the virtual address with
    /// one.
    fn remote_fields(&self, t: &CheckedTransfer, remote: RegionRef) -> (u64, u32) {
        match self.hw_tpt {
            Some(_) => (remote.addr, remote.handle),
            None => (t.remote_physical as u64, 0),
        }
    }

    fn post_app(&mut self, node: NodeId, opcode: WqeOpcode, wr_id: u64, wqe: Wqe) {
        let op = self.new_op(node);
        let wqe = Wqe {
            opcode: opcode as u8,
            ..wqe
        };
        self.post_wqe(node, wqe, SendKind::App { wr_id, opcode }, vec![op]);
    }

    /// Registers memory (000 Fig. 5): the region at logical `logical`, physical `physical`,
    /// `length` bytes, goes into the local TPT part and a TPT_UPDATE goes to every node that
    /// receives updates. Returns the entry (its handle names the region).
    ///
    /// With a hardware TPT the handle is an STag (see [`crate::hw_tpt`]): the NIC's entry
    /// is programmed (virtual base = `logical`, length, physical base, rights, key) and
    /// has completed before the region enters the local part and the update goes out;
    /// the update carries the STag and the virtual address, not the physical one.
    pub fn register(
        &mut self,
        logical: u64,
        physical: u32,
        length: u32,
        protection: Protection,
    ) -> Result<TptEntry, VerbsError> {
        self.register_with(logical, physical, length, protection, false)
    }

    /// Registers a **one-shot** region (source 001: a key disabled as soon as it is used),
    /// as [`Driver::register`] does otherwise. Needs a hardware TPT: the NIC's entry has
    /// the one-shot bit, so the first request that passes its check and is executed
    /// clears the entry; every later request (another peer's, a replay, a retransmitted
    /// READ executed again) misses into the exception queue and is refused, and the driver
    /// then retires the region: out of the local part, TPT_REMOVE to the peers, and
    /// [`Completion::Deregistered`] once they have confirmed ([`crate::dereg`]). Until a
    /// request misses, the driver does not know that the entry was used; the application
    /// may [`Driver::deregister`] the region at any time (the NIC's invalidate of an entry
    /// already cleared is harmless).
    pub fn register_one_shot(
        &mut self,
        logical: u64,
        physical: u32,
        length: u32,
        protection: Protection,
    ) -> Result<TptEntry, VerbsError> {
        if self.hw_tpt.is_none() {
            return Err(VerbsError::NeedsHardwareTpt {
                what: "one-shot registration",
            });
        }
        self.register_with(logical, physical, length, protection, true)
    }

    fn register_with(
        &mut self,
        logical: u64,
        physical: u32,
        length: u32,
        protection: Protection,
        one_shot: bool,
    ) -> Result<TptEntry, VerbsError> {
        let entry = match self.hw_tpt.as_mut() {
            None => self.tpt.register(logical, physical, length, protection)?,
            Some(hw) => {
                let mut entry = TptEntry {
                    handle: 0,
                    logical,
                    physical,
                    length,
                    protection,
                };
                entry.validate()?;
                entry.handle = hw.allocate()?;
                if let Err(e) = self.program_tpt_entry(&entry, one_shot) {
                    // A refused write left the entry invalid; one that did not complete
                    // may still land: that index is not reused.
                    if matches!(e, HwTptError::CommandRefused { .. }) {
                        if let Some(hw) = self.hw_tpt.as_mut() {
                            hw.release(entry.handle);
                        }
                    }
                    return Err(e.into());
                }
                self.tpt.insert_local(entry)?
            }
        };
        if let Ok(update) = TptUpdate::new(vec![self.published(&entry)]) {
            self.broadcast_update(ControlMessage::TptUpdate(update));
        }
        Ok(entry)
    }

    /// Starts deregistering region `handle`: it leaves the local part at once (no verb
    /// of this node accepts it any more) and TPT_REMOVE goes to every node that receives
    /// updates and every node the region was sent to. With a hardware TPT the NIC's entry
    /// is invalidated first (and the invalidation has completed before its index can be
    /// registered again); if that fails the region stays registered and the error is
    /// returned.
    ///
    /// The memory is **not** free when this returns: a peer may still have requests
    /// against the region in flight. It is free when [`Completion::Deregistered`] for it
    /// comes out of [`Driver::poll`], once every peer the region was sent to has
    /// confirmed (see [`crate::dereg`] for the fence and which peers it waits for).
    pub fn deregister(&mut self, handle: u32) -> Result<TptEntry, VerbsError> {
        if self.tpt.local(handle).is_none() {
            return Err(TptError::UnknownLocalHandle { handle }.into());
        }
        if self.is_window(handle) {
            return Err(BindError::IsWindow { handle }.into());
        }
        if self.hw_tpt.is_some() {
            self.invalidate_tpt_entry(handle)?;
        }
        let entry = self.tpt.deregister(handle)?;
        self.nics.holders.remove(&handle);
        if let Some(hw) = self.hw_tpt.as_mut() {
            hw.release(handle);
        }
        self.start_deregistration(entry);
        Ok(entry)
    }

    /// The fence of a region already out of the local part (and out of the NIC's table):
    /// TPT_REMOVE to every node that receives updates or was sent the region;
    /// [`Completion::Deregistered`] once they have confirmed (at the next poll when none
    /// has to).
    pub(crate) fn start_deregistration(&mut self, entry: TptEntry) {
        let handle = entry.handle;
        let resend_at = self
            .last_now
            .saturating_add(self.config.protocol.resend_interval());
        let waiting = self.dereg.start(entry, resend_at);
        let mut to = self.updates.clone();
        for &x in &waiting {
            if (x as usize) < to.len() {
                to.set(x as usize, true);
            }
        }
        for x in to.iter_ones() {
            if let Ok(remove) = TptRemove::new(vec![handle]) {
                self.send_control(x as NodeId, ControlMessage::TptRemove(remove));
            }
        }
        if waiting.is_empty() {
            self.ready.push_back(Completion::Deregistered { entry });
        }
    }

    /// The deregistration of `handle` while it waits for peers (which peers it still
    /// waits for); `None` once it is freed, or if `handle` was never deregistered.
    pub fn deregistration(&self, handle: u32) -> Option<PendingDeregistration> {
        self.dereg.pending(handle)
    }

    /// The owner's side of the deregistration fence (pending deregistrations, which
    /// peers each region was sent to).
    pub fn deregistrations(&self) -> &Deregistrations {
        &self.dereg
    }

    /// Posts a SEND (with `immediate`: SEND_IMMEDIATE) of `length` bytes at `local` (read
    /// right needed) to `node`. At most [`crate::DriverConfig::recv_buffer_bytes`] bytes.
    pub fn post_send(
        &mut self,
        node: NodeId,
        local: RegionRef,
        length: u32,
        immediate: Option<u32>,
        wr_id: u64,
    ) -> Result<(), VerbsError> {
        self.check_peer(node)?;
        let max = self.config.recv_buffer_bytes;
        if length > max {
            return Err(VerbsError::TooLong { length, max });
        }
        if immediate == Some(CONTROL_IMMEDIATE) {
            return Err(VerbsError::ReservedImmediate);
        }
        let physical = self.tpt.check_local(local, length, Access::Read)?;
        if !physical.is_multiple_of(8) {
            return Err(VerbsError::Misaligned {
                side: Side::Local,
                physical,
            });
        }
        self.check_room(node)?;
        let opcode = if immediate.is_some() {
            WqeOpcode::SendImmediate
        } else {
            WqeOpcode::Send
        };
        let wqe = Wqe {
            length,
            local_addr: physical,
            immediate: immediate.unwrap_or(0),
            ..Wqe::default()
        };
        self.post_app(node, opcode, wr_id, wqe);
        Ok(())
    }

    /// Posts a receive buffer of `length` bytes at `local` (write right needed) for messages
    /// from `node`. A message that already arrived is delivered into it at once (its
    /// completion comes with the next [`Driver::poll`]).
    pub fn post_receive(
        &mut self,
        node: NodeId,
        local: RegionRef,
        length: u32,
        wr_id: u64,
    ) -> Result<(), VerbsError> {
        self.check_peer(node)?;
        let physical = self.tpt.check_local(local, length, Access::Write)?;
        if let Some(qp) = self.qps[node as usize].as_mut() {
            qp.app_recvs.push_back(AppRecv {
                wr_id,
                physical,
                length,
            });
        }
        let mut doorbells = bitvec::bitvec![0; self.config.node_count];
        self.deliver_held(node, &mut doorbells);
        for q in doorbells.iter_ones() {
            self.ring_rq_doorbell(q);
        }
        Ok(())
    }

    /// Posts an RDMA WRITE of `length` bytes from `local` to `remote` on `node` (000 Fig. 6
    /// check); with `immediate`, RDMA_WRITE_IMMEDIATE (it consumes a receive at `node`).
    pub fn rdma_write(
        &mut self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        length: u32,
        immediate: Option<u32>,
        wr_id: u64,
    ) -> Result<(), VerbsError> {
        self.rdma_write_with(node, local, remote, length, immediate, wr_id, false)
    }

    /// As [`Driver::rdma_write`], with the WQE's invalidate flag (word 0 bit 8): the
    /// target's NIC clears the remote region's entry once this request has passed its
    /// check and is executed (003), so no later request through that STag succeeds; the
    /// target's driver retires the region when one misses (see
    /// [`Driver::register_one_shot`]). This node keeps its copy of the remote entry until
    /// the target's TPT_REMOVE (a request that fails leaves the STag valid). Needs a
    /// hardware TPT.
    #[allow(clippy::too_many_arguments)]
    pub fn rdma_write_invalidate(
        &mut self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        length: u32,
        immediate: Option<u32>,
        wr_id: u64,
    ) -> Result<(), VerbsError> {
        self.rdma_write_with(node, local, remote, length, immediate, wr_id, true)
    }

    #[allow(clippy::too_many_arguments)]
    fn rdma_write_with(
        &mut self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        length: u32,
        immediate: Option<u32>,
        wr_id: u64,
        invalidate: bool,
    ) -> Result<(), VerbsError> {
        self.check_invalidate(invalidate)?;
        self.check_rdma_peer(node, length)?;
        let t = self.tpt.check_rdma_write(node, local, remote, length)?;
        self.aligned(&t, remote)?;
        self.check_room(node)?;
        let opcode = if immediate.is_some() {
            WqeOpcode::RdmaWriteImmediate
        } else {
            WqeOpcode::RdmaWrite
        };
        let (remote_vaddr, stag) = self.remote_fields(&t, remote);
        let wqe = Wqe {
            invalidate,
            length,
            local_addr: t.local_physical,
            remote_vaddr,
            stag,
            immediate: immediate.unwrap_or(0),
            ..Wqe::default()
        };
        self.post_app(node, opcode, wr_id, wqe);
        Ok(())
    }

    /// Posts an RDMA READ of `length` bytes from `remote` on `node` into `local`.
    pub fn rdma_read(
        &mut self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        length: u32,
        wr_id: u64,
    ) -> Result<(), VerbsError> {
        self.rdma_read_with(node, local, remote, length, wr_id, false)
    }

    /// As [`Driver::rdma_read`], with the invalidate flag (see
    /// [`Driver::rdma_write_invalidate`]). Needs a hardware TPT.
    pub fn rdma_read_invalidate(
        &mut self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        length: u32,
        wr_id: u64,
    ) -> Result<(), VerbsError> {
        self.rdma_read_with(node, local, remote, length, wr_id, true)
    }

    fn rdma_read_with(
        &mut self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        length: u32,
        wr_id: u64,
        invalidate: bool,
    ) -> Result<(), VerbsError> {
        self.check_invalidate(invalidate)?;
        self.check_rdma_peer(node, length)?;
        let t = self.tpt.check_rdma_read(node, local, remote, length)?;
        self.aligned(&t, remote)?;
        self.check_room(node)?;
        let (remote_vaddr, stag) = self.remote_fields(&t, remote);
        let wqe = Wqe {
            invalidate,
            length,
            local_addr: t.local_physical,
            remote_vaddr,
            stag,
            ..Wqe::default()
        };
        self.post_app(node, WqeOpcode::RdmaRead, wr_id, wqe);
        Ok(())
    }

    /// Posts an atomic compare-and-swap of the 8 bytes at `remote` on `node`: if they equal
    /// `compare` they become `swap`; the original value lands at `local`.
    pub fn compare_swap(
        &mut self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        compare: u64,
        swap: u64,
        wr_id: u64,
    ) -> Result<(), VerbsError> {
        self.post_atomic(
            node,
            local,
            remote,
            WqeOpcode::AtomicCompareSwap,
            compare,
            swap,
            wr_id,
        )
    }

    /// Posts an atomic fetch-and-add of `add` to the 8 bytes at `remote` on `node`; the
    /// original value lands at `local`.
    pub fn fetch_add(
        &mut self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        add: u64,
        wr_id: u64,
    ) -> Result<(), VerbsError> {
        self.post_atomic(
            node,
            local,
            remote,
            WqeOpcode::AtomicFetchAdd,
            add,
            0,
            wr_id,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn post_atomic(
        &mut self,
        node: NodeId,
        local: RegionRef,
        remote: RegionRef,
        opcode: WqeOpcode,
        compare_add: u64,
        swap: u64,
        wr_id: u64,
    ) -> Result<(), VerbsError> {
        self.check_rdma_peer(node, 8)?;
        let t = self.tpt.check_atomic(node, local, remote)?;
        self.aligned(&t, remote)?;
        self.check_room(node)?;
        let (remote_vaddr, stag) = self.remote_fields(&t, remote);
        let wqe = Wqe {
            length: 8,
            local_addr: t.local_physical,
            remote_vaddr,
            stag,
            compare_add,
            swap,
            ..Wqe::default()
        };
        self.post_app(node, opcode, wr_id, wqe);
        Ok(())
    }
}
