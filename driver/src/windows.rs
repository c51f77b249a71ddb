//! The local work requests of source document 001: BIND RKEY (memory windows) and DELAY.
//!
//! Both are WQEs on a queue pair's send queue that send nothing (`nic_abi::BIND_OPCODE`,
//! `nic_abi::DELAY_OPCODE`): the NIC executes them in send-queue order, like a NOP, once
//! every earlier WQE of the queue pair has completed, and posts their completion in order;
//! no later WQE of the queue pair is transmitted before that completion is posted.
//!
//! **Memory windows** (001: AllocateRKey, BindRKey, UnbindRKey, DeallocateRKey). A process
//! allocates an RKey ([`Driver::allocate_rkey`]: a handle reserved in the software TPT, or
//! an STag of the hardware TPT whose entry stays invalid), then binds it to a byte range
//! inside one of its own registered regions ([`Driver::bind_rkey`]) with at most that
//! region's rights: 001's "authorised". The driver checks that before it posts anything
//! ([`BindError`]); the BIND WQE goes on the queue pair to `node`. With a hardware TPT the
//! **NIC applies the binding when it executes the BIND**, in send-queue order: it writes
//! its TPT entry (an unbind: writes it invalid) before the BIND completes and before any
//! later WQE of the queue pair is transmitted. At the BIND's in-order completion the
//! driver does the rest: the entry enters the local TPT part and a TPT_UPDATE goes to
//! every peer that receives updates; it programs no TPT CSR then (it invalidates the
//! NIC's entry only for a BIND it refuses or that was flushed, and, for an unbind, an
//! entry that a request migrated to another NIC of the host, [`crate::multi_nic`]).
//! Without a hardware TPT the binding is applied when the driver sees the completion: the
//! entry enters the software TPT and the TPT_UPDATE goes out. An unbind
//! ([`Driver::unbind_rkey`], 001: a bind with a null address and zero length) takes the
//! entry out at its completion and starts the deregistration fence ([`crate::dereg`]):
//! TPT_REMOVE to the peers, and [`crate::Completion::Deregistered`] for the old binding
//! once no peer's request can land in it any more (the NIC's invalid write, like the
//! invalidate command, stops every request checked after it, not the rest of a WRITE that
//! passed its check before).
//!
//! Ordering guarantee: the binding takes effect after every WQE posted before the BIND on
//! the same queue pair has completed. With a hardware TPT it is in this NIC's table before
//! any later WQE of that queue pair is transmitted: a SEND posted right behind the BIND
//! may carry the key, and a peer's RDMA with it is admitted by this NIC (a peer whose
//! driver checks requests against its own copy still needs the TPT_UPDATE, sent at the
//! BIND's completion). Without one, the binding is applied before the driver returns the
//! BIND's completion ([`LocalWork::Bind`]) from [`Driver::poll`]; a request checked
//! before that (by a peer's driver against its copy) is checked against the old binding:
//! a process that sends the key to a peer must post that SEND after it has seen the
//! BIND's completion; a peer that uses the key before the TPT_UPDATE reached it is
//! refused, never let into other memory. After an unbind this NIC refuses the key
//! (hardware TPT: from its execution); peers refuse it once they have applied the
//! TPT_REMOVE, and the memory is free for reuse at [`crate::Completion::Deregistered`].
//!
//! **DELAY** ([`Driver::post_delay`]): holds the queue pair to `node` for a number of NIC
//! clock cycles (at most [`nic_abi::DELAY_CYCLES_MASK`]): the next WQE of that queue pair
//! is transmitted no sooner than that many cycles after the DELAY started; other queue
//! pairs keep sending (source 001: "permits a process to meter the flow of operations into
//! the SAN fabric").

use std::collections::BTreeMap;

use nic_abi::{csr, CompletionStatus, Wqe, DELAY_CYCLES_MASK};
use thiserror::Error;

use crate::control::{ControlMessage, TptUpdate};
use crate::driver::SendKind;
use crate::hw_tpt;
use crate::tpt::{Protection, RegionRef, Side, TptEntry};
use crate::verbs::{Completion, VerbsError};
use crate::{Driver, NicAccess, NodeId};

/// What a local work request did (it sent no message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalWork {
    /// BIND RKEY: `rkey` bound to `entry`, or unbound (`None`).
    Bind {
        /// The RKey (the software TPT handle, or the hardware TPT's STag).
        rkey: u32,
        /// The new binding; `None` for an unbind.
        entry: Option<TptEntry>,
    },
    /// DELAY of `cycles` NIC clock cycles.
    Delay {
        /// The cycle count.
        cycles: u32,
    },
}

/// Why a BIND, UNBIND, DELAY or RKey verb was refused; nothing was posted.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum BindError {
    /// The RKey was not allocated by this driver ([`Driver::allocate_rkey`]): the process
    /// does not own it.
    #[error("RKey {rkey:#x} was not allocated here")]
    UnknownRKey {
        /// The RKey.
        rkey: u32,
    },
    /// The range is not inside a region this node registered, or asks for rights that
    /// region does not have (001: "an invalid parameter result is returned").
    #[error(
        "not authorised to bind {length} bytes at {addr:#x} of region {handle:#x} ({protection:?})"
    )]
    NotAuthorised {
        /// The region named.
        handle: u32,
        /// The range's logical address.
        addr: u64,
        /// Its length.
        length: u32,
        /// The rights asked for.
        protection: Protection,
    },
    /// A bind needs at least one byte (a null range is an unbind: [`Driver::unbind_rkey`]).
    #[error("a bind of RKey {rkey:#x} needs a length of at least 1")]
    ZeroLength {
        /// The RKey.
        rkey: u32,
    },
    /// The RKey is bound (after the binds already posted): unbind it first.
    #[error("RKey {rkey:#x} is bound")]
    Bound {
        /// The RKey.
        rkey: u32,
    },
    /// The RKey is not bound (after the binds already posted).
    #[error("RKey {rkey:#x} is not bound")]
    NotBound {
        /// The RKey.
        rkey: u32,
    },
    /// A bind of the RKey has not completed yet, or its last binding's deregistration
    /// fence is still open.
    #[error("RKey {rkey:#x} has a bind or an unbind in progress")]
    Busy {
        /// The RKey.
        rkey: u32,
    },
    /// The handle names a memory window: unbind it and deallocate the RKey instead.
    #[error("handle {handle:#x} is a memory window, not a registered region")]
    IsWindow {
        /// The handle.
        handle: u32,
    },
    /// A DELAY's cycle count does not fit the WQE's field.
    #[error("a DELAY of {cycles} cycles exceeds {max}")]
    DelayTooLong {
        /// The cycles asked for.
        cycles: u64,
        /// The limit ([`nic_abi::DELAY_CYCLES_MASK`]).
        max: u64,
    },
}

/// The driver's view of one allocated RKey.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Window {
    /// Bound once every BIND / UNBIND posted so far has completed with success.
    posted_bound: bool,
    /// BINDs and UNBINDs posted and not yet completed.
    in_flight: u32,
}

/// The memory windows of a driver, by RKey.
pub(crate) type Windows = BTreeMap<u32, Window>;

impl<A: NicAccess> Driver<A> {
    /// AllocateRKey (001): an RKey this process may bind. Without a hardware TPT a handle
    /// reserved in the software TPT, with one an STag whose entry stays invalid until a
    /// bind completes.
    pub fn allocate_rkey(&mut self) -> Result<u32, VerbsError> {
        if !self.booted {
            return Err(VerbsError::NotBooted);
        }
        let rkey = match self.hw_tpt.as_mut() {
            Some(hw) => hw.allocate()?,
            None => self.tpt.reserve_handle()?,
        };
        self.windows.insert(rkey, Window::default());
        Ok(rkey)
    }

    /// DeallocateRKey (001): retires an RKey that is unbound, with no bind in flight and
    /// its last binding's deregistration fence closed.
    pub fn deallocate_rkey(&mut self, rkey: u32) -> Result<(), VerbsError> {
        let w = self.window(rkey)?;
        if w.posted_bound {
            return Err(BindError::Bound { rkey }.into());
        }
        self.check_idle(rkey)?;
        self.windows.remove(&rkey);
        match self.hw_tpt.as_mut() {
            Some(hw) => hw.release(rkey),
            None => self.tpt.release_handle(rkey),
        }
        Ok(())
    }

    /// Whether `handle` is an RKey of [`Driver::allocate_rkey`].
    pub fn is_window(&self, handle: u32) -> bool {
        self.windows.contains_key(&handle)
    }

    fn window(&self, rkey: u32) -> Result<Window, VerbsError> {
        self.windows
            .get(&rkey)
            .copied()
            .ok_or(BindError::UnknownRKey { rkey }.into())
    }

    fn check_idle(&self, rkey: u32) -> Result<(), VerbsError> {
        let w = self.window(rkey)?;
        if w.in_flight != 0 || self.dereg.pending(rkey).is_some() {
            return Err(BindError::Busy { rkey }.into());
        }
        Ok(())
    }

    /// BindRKey (001): binds `rkey` to `length` bytes at `range` (a logical address inside
    /// a region this node registered) with `protection`, which that region must allow.
    /// The BIND WQE goes on the queue pair to `node`, behind what was posted there before;
    /// the binding is applied at its completion (see the module documentation), and
    /// [`Completion::Local`] with [`LocalWork::Bind`] reports it. Returns the entry that
    /// will be bound (its physical base translated through the region).
    pub fn bind_rkey(
        &mut self,
        node: NodeId,
        rkey: u32,
        range: RegionRef,
        length: u32,
        protection: Protection,
        wr_id: u64,
    ) -> Result<TptEntry, VerbsError> {
        self.check_local_peer(node)?;
        let w = self.window(rkey)?;
        if length == 0 {
            return Err(BindError::ZeroLength { rkey }.into());
        }
        let refused = BindError::NotAuthorised {
            handle: range.handle,
            addr: range.addr,
            length,
            protection,
        };
        if self.windows.contains_key(&range.handle) {
            return Err(refused.into());
        }
        let region = *self.tpt.local(range.handle).ok_or(refused.clone())?;
        let allowed = match protection {
            Protection::ReadOnly => region.protection.allows(crate::tpt::Access::Read),
            Protection::WriteOnly => region.protection.allows(crate::tpt::Access::Write),
            Protection::ReadWrite => region.protection == Protection::ReadWrite,
        };
        let physical = region
            .translate(range.addr, length)
            .ok_or(refused.clone())?;
        if !allowed {
            return Err(refused.into());
        }
        if w.posted_bound {
            return Err(BindError::Bound { rkey }.into());
        }
        self.check_idle(rkey)?;
        if !physical.is_multiple_of(8) {
            return Err(VerbsError::Misaligned {
                side: Side::Local,
                physical,
            });
        }
        if self.hw_tpt.is_some() && !range.addr.is_multiple_of(8) {
            return Err(VerbsError::MisalignedRemote { vaddr: range.addr });
        }
        self.check_local_room(node)?;
        let entry = TptEntry {
            handle: rkey,
            logical: range.addr,
            physical,
            length,
            protection,
        };
        let wqe = Wqe::bind(
            rkey,
            entry.logical,
            entry.physical,
            entry.length,
            (hw_tpt::rights(protection) / csr::TPT_REMOTE_READ) as u8,
        );
        self.post_local(
            node,
            wr_id,
            wqe,
            LocalWork::Bind {
                rkey,
                entry: Some(entry),
            },
        );
        if let Some(w) = self.windows.get_mut(&rkey) {
            w.posted_bound = true;
            w.in_flight += 1;
        }
        Ok(entry)
    }

    /// UnbindRKey (001: a bind with a null address and zero length) of `rkey`, on the
    /// queue pair to `node`; applied at its completion (see the module documentation).
    pub fn unbind_rkey(&mut self, node: NodeId, rkey: u32, wr_id: u64) -> Result<(), VerbsError> {
        self.check_local_peer(node)?;
        let w = self.window(rkey)?;
        if !w.posted_bound {
            return Err(BindError::NotBound { rkey }.into());
        }
        self.check_idle(rkey)?;
        self.check_local_room(node)?;
        let wqe = Wqe::bind(rkey, 0, 0, 0, 0);
        self.post_local(node, wr_id, wqe, LocalWork::Bind { rkey, entry: None });
        if let Some(w) = self.windows.get_mut(&rkey) {
            w.posted_bound = false;
            w.in_flight += 1;
        }
        Ok(())
    }

    /// DELAY (001) of `cycles` NIC clock cycles on the queue pair to `node` (see the
    /// module documentation); [`Completion::Local`] with [`LocalWork::Delay`] reports it.
    pub fn post_delay(&mut self, node: NodeId, cycles: u32, wr_id: u64) -> Result<(), VerbsError> {
        self.check_local_peer(node)?;
        if cycles as u64 > DELAY_CYCLES_MASK {
            return Err(BindError::DelayTooLong {
                cycles: cycles as u64,
                max: DELAY_CYCLES_MASK,
            }
            .into());
        }
        self.check_local_room(node)?;
        let wqe = Wqe::delay(cycles).expect("checked above");
        self.post_local(node, wr_id, wqe, LocalWork::Delay { cycles });
        Ok(())
    }

    fn check_local_peer(&self, node: NodeId) -> Result<(), VerbsError> {
        if !self.booted {
            return Err(VerbsError::NotBooted);
        }
        if node == self.node || node as usize >= self.config.node_count {
            return Err(VerbsError::InvalidNode { node });
        }
        Ok(())
    }

    fn check_local_room(&self, node: NodeId) -> Result<(), VerbsError> {
        if self.sq_has_room(node) {
            Ok(())
        } else {
            Err(VerbsError::RingFull { node })
        }
    }

    fn post_local(&mut self, node: NodeId, wr_id: u64, wqe: Wqe, work: LocalWork) {
        let op = self.new_op(node);
        self.post_wqe(node, wqe, SendKind::Local { wr_id, work }, vec![op]);
    }

    /// A local work request's completion (from the NIC, or FLUSHED): a successful BIND
    /// or UNBIND is applied now; the completion goes to the application.
    pub(crate) fn complete_local(
        &mut self,
        node: NodeId,
        wr_id: u64,
        work: LocalWork,
        mut status: CompletionStatus,
    ) {
        if let LocalWork::Bind { rkey, entry } = work {
            if status == CompletionStatus::Success && !self.apply_bind(rkey, entry) {
                status = CompletionStatus::BindRefused;
            } else if status != CompletionStatus::Success && entry.is_some() {
                // The NIC may have written the entry before the queue pair was flushed:
                // the key was unbound before this BIND, and stays so.
                self.undo_hw_bind(rkey);
            }
            let bound = self.tpt.local(rkey).is_some();
            if let Some(w) = self.windows.get_mut(&rkey) {
                w.in_flight = w.in_flight.saturating_sub(1);
                if w.in_flight == 0 {
                    w.posted_bound = bound;
                }
            }
        }
        self.ready.push_back(Completion::Local {
            wr_id,
            node,
            work,
            status,
        });
    }

    /// Invalidates the hardware TPT entry of `rkey` (if this driver has a hardware TPT),
    /// for a BIND the NIC executed but the driver does not apply.
    fn undo_hw_bind(&mut self, rkey: u32) {
        if self.hw_tpt.is_some() {
            // A NIC that does not answer is handled by the next command that waits on it.
            let _ = self.invalidate_tpt_entry(rkey);
        }
    }

    /// Applies a completed BIND (`Some`) or UNBIND (`None`) of `rkey`; false if the TPT
    /// refused it (nothing changed).
    fn apply_bind(&mut self, rkey: u32, entry: Option<TptEntry>) -> bool {
        match entry {
            Some(e) => {
                // With a hardware TPT the NIC wrote the entry when it executed the BIND
                // (before this completion); a refusal here takes it out again.
                if e.validate().is_err() || self.tpt.local(rkey).is_some() {
                    self.undo_hw_bind(rkey);
                    return false;
                }
                if self.tpt.insert_local(e).is_err() {
                    self.undo_hw_bind(rkey);
                    return false;
                }
                if self.hw_tpt.is_some() {
                    self.nics.holders.insert(rkey, self.nics.active);
                }
                if let Ok(update) = TptUpdate::new(vec![self.published(&e)]) {
                    self.broadcast_update(ControlMessage::TptUpdate(update));
                }
                true
            }
            None => {
                if self.tpt.local(rkey).is_none() {
                    return false;
                }
                // The NIC that executed the UNBIND wrote its entry invalid through its
                // TPT's sequencer, which stops every lookup after it as the invalidate
                // command does. An entry a request migrated to another NIC of this host
                // (`crate::multi_nic`) is invalidated there over the CSRs.
                if self.hw_tpt.is_some()
                    && self.nics.holder(rkey) != self.nics.active
                    && self.invalidate_tpt_entry(rkey).is_err()
                {
                    return false;
                }
                let Ok(old) = self.tpt.deregister(rkey) else {
                    return false;
                };
                self.nics.holders.remove(&rkey);
                self.start_deregistration(old);
                true
            }
        }
    }
}
