//! [`Driver`]: one NIC, its queues in host memory, completion polling, and the glue that
//! carries out the membership protocol's actions.
//!
//! # Queue-pair plan
//!
//! Node `i` uses queue pair `q` to talk to node `q`, connected to node `q`'s queue pair `i`
//! (`QP_REMOTE = q | i << 16`); queue pair `i` itself stays disabled. So every pair of nodes
//! has exactly one reliable connection, and the NIC needs at least `node_count` queue pairs.
//! **Control messages travel on that same queue pair**, as SEND_IMMEDIATE with the immediate
//! [`CONTROL_IMMEDIATE`]: they are ordered with the data operations to the same node, which
//! the protocol relies on (000: "RDMA and SEND between the same source and destination use
//! the same path and do not overtake each other"); a control message sent again (see below)
//! goes behind what was posted since.
//!
//! # Control messages
//!
//! Control messages queue in a per-node backlog; the backlog goes out at the end of each
//! [`Driver::poll`], bundled (one SEND carries what fits a receive buffer). The wire format
//! and its reliability rules are in [`crate::control`]; the driver's part:
//!
//! - **Sequenced messages** (RDMA_READY, TPT_UPDATE, TPT_REMOVE, TPT_CLEAR) are numbered in
//!   the node's control stream and kept until the node acknowledges them with STREAM_ACK,
//!   whatever their SEND's completion says: a SEND that completes with an error (retry
//!   exceeded, a NACK such as RECEIVER_NOT_READY or PORT_DOWN, RESPONDER_RESTARTED) is
//!   lost, one that succeeds may still be dropped by the receiver (behind a lost one, or
//!   because the receiver rebooted and follows no such stream). When no acknowledgement
//!   has come one [`DriverConfig::control_resend_interval`] after a SEND of them failed,
//!   or [`ACK_WAIT_INTERVALS`] after it succeeded or was flushed (counted from the
//!   completion, not the post: a SEND may wait in the send queue for long, and resending
//!   it then only adds load), every kept message is posted again, in order (go-back-N):
//!   the receiver takes each once and in order, so a resent TPT_UPDATE cannot overtake a
//!   later TPT_REMOVE of its handle. A STREAM_ACK with `restart` (the node rebooted since the
//!   stream began) starts a new stream with the kept messages, numbered from 0: the new
//!   boot takes them, and the protocol filters what was meant for the old one (TPT
//!   messages are refused until this node's BOOTING or ACK reached the new boot).
//! - **Nothing sequenced is dropped** by the sender, not even when the node is barred or
//!   its queue pair flushed: a flushed SEND counts as completed (its messages go again if
//!   no acknowledgement comes), and the backlog goes out behind the flush's NOP. A node
//!   that never answers gets the kept messages again every interval.
//! - **Receiving**: a SEND carrying sequenced messages is acknowledged with a STREAM_ACK
//!   naming the next number expected. It is delayed: it rides with the next control SEND
//!   to that node, or goes alone [`ACK_DELAY_INTERVALS`] resend intervals later, so most
//!   go with the protocol's own answers and a burst of SENDs takes one; if the SEND had
//!   messages to drop, at once (the sender is resending, or must). Duplicates and
//!   messages out of order are dropped and counted ([`DriverStats::control_duplicates`],
//!   [`DriverStats::control_out_of_order`]). Messages dropped behind a gap set the
//!   acknowledgement's `resend` flag: the sender resends from the number it names at once
//!   if the SEND that carried that number has completed
//!   ([`DriverStats::control_fast_resends`]), instead of waiting up to
//!   [`ACK_WAIT_INTERVALS`] resend intervals for its timer.
//! - **Datagrams** (BOOTING, ACK, PROBE, HEARTBEAT, STREAM_ACK) are sent once; the
//!   protocols repeat them ([`crate::rejoin`]: BOOTING until answered, PROBE until ACKed,
//!   ACK at every BOOTING and PROBE).
//! - **Pushes** ([`Action::PushLocalTpt`]) start with TPT_CLEAR, so whatever the node's
//!   copy held (updates it took before they stopped, or a late resend), it ends up equal to
//!   this node's part.
//!
//! # Receive buffers
//!
//! The driver owns every receive queue: it posts its own bounce buffers of
//! [`DriverConfig::recv_buffer_bytes`] each. A control message is decoded there and the
//! buffer posted again at once; an application message is copied into the next buffer the
//! application posted with [`Driver::post_receive`] (host memory access is instant), or held
//! until it posts one. So control messages never consume application buffers, and a SEND is
//! limited to `recv_buffer_bytes` (a cluster-wide setting, like the maximum node count).
//! A held message is copied out of its bounce buffer, which goes back to the NIC at once,
//! up to [`HELD_COPIED_MAX`] messages per peer: a node whose application posts no receives
//! for a while (it is not ready for that peer yet) must not leave the queue pair without
//! buffers for the control messages that would make it ready. Past that many, held
//! messages keep their bounce buffers, and once those are taken the NIC answers that
//! node's messages, control messages included, with RECEIVER_NOT_READY (not a barring
//! NACK: the sender's protocol resends).
//!
//! # Host memory
//!
//! The driver's structures live in an arena of host physical memory
//! ([`DriverConfig::arena_base`], [`DriverConfig::arena_len`]), laid out in this order, each
//! part 64-aligned: the completion ring; then per peer queue pair its send ring, its receive
//! ring, one control staging buffer of [`crate::control::MAX_CONTROL_BYTES`] per send slot
//! and its bounce buffers. [`DriverConfig::arena_needed`] computes the size.
//!
//! # Work requests in flight
//!
//! Every operation sent to a node (application or control) gets a sequence number per
//! destination and stays outstanding until its completion; a fence ([`Action::StartFence`])
//! waits for every operation issued before it. A fence on a node that announced a restart
//! flushes its queue pair first (`flush_queue_pair`): what was still outstanding completes
//! with [`CompletionStatus::Flushed`] at once, so the fence does not wait for the restarted
//! node to refuse each request one round trip at a time; control messages are not flushed
//! (they are posted again, see above). The deregistration fence ([`crate::dereg`]) uses the
//! same numbers in a queue of its own: a TPT_REMOVE from node X is answered with
//! TPT_REMOVE_DONE once every operation issued to X before it arrived has completed. When a
//! send queue is full, control messages wait in the per-node backlog (sent in order as
//! slots free up) and application posts are
//! refused with [`crate::VerbsError::RingFull`].

use std::collections::{BTreeSet, VecDeque};

use bitvec::prelude::*;
use nic_abi::{
    csr, CompletionStatus, Cqe, Rqe, Wqe, WqeOpcode, CQE_BYTES, NOP_OPCODE, PSN_MASK, RQE_BYTES,
    WQE_BYTES,
};
use thiserror::Error;

use crate::control::{
    ControlMessage, ControlSend, TptRemove, TptUpdate, MAX_CONTROL_BYTES, SEQUENCE_MASK,
};
use crate::dereg::Deregistrations;
use crate::hw_tpt::{self, ExceptionHead, HwTpt, HwTptError};
use crate::membership::{Membership, Protocol};
use crate::multi_nic::{self, HolderEntry, NicSlots, Resolution, SlowPathOutcome};
use crate::rejoin::{Action, Event, MembershipError, Tick};
use crate::tpt::{Tpt, TptEntry, TptError};
use crate::verbs::Completion;
use crate::windows::{LocalWork, Windows};
use crate::{NicAccess, NodeId};

/// The immediate data that marks a SEND_IMMEDIATE as a driver control message.
/// Applications may not use it.
pub const CONTROL_IMMEDIATE: u32 = 0x4354_524C; // "CTRL"

/// Configuration of one driver instance (one NIC, one boot).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverConfig {
    /// The membership protocol and its configuration (this node's number and the maximum
    /// node count are taken from it).
    pub protocol: Protocol,
    /// Nodes in the cluster: 0..node_count (at most the maximum node count and the NIC's
    /// queue pairs).
    pub node_count: usize,
    /// This boot's incarnation: draw it anew at every boot (it also seeds the start PSNs).
    pub incarnation: u32,
    /// First TPT handle of this boot (draw it anew at every boot too).
    pub first_handle: u32,
    /// Start of the driver's host-memory arena (8-aligned).
    pub arena_base: u32,
    /// Size of the arena in bytes.
    pub arena_len: u32,
    /// log2 of the send ring size per queue pair (1..=16).
    pub sq_log2: u32,
    /// log2 of the receive ring size per queue pair (1..=16).
    pub rq_log2: u32,
    /// log2 of the completion ring size (1..=16).
    pub cq_log2: u32,
    /// Bytes per receive bounce buffer: the largest SEND (multiple of 8, at least
    /// `MAX_CONTROL_BYTES`, at most `MAX_MESSAGE_LENGTH`).
    pub recv_buffer_bytes: u32,
    /// With a hardware TPT: ticks between two reads of the NIC's exception queue, whether
    /// RDMA is enabled or not (>= 1; right after an exception was answered the next poll looks again).
    /// A request waiting there holds up the NIC's incoming RDMA until it is answered.
    pub exception_poll_interval: u64,
    /// Ticks from the completion of a control SEND without a STREAM_ACK until the
    /// sequenced control messages the node has not acknowledged are posted again (>= 1;
    /// see "Control messages" in the module docs).
    pub control_resend_interval: Tick,
    /// NICs of the host (1..=[`multi_nic::MAX_NICS`]): each NIC beyond the first gets its
    /// own completion ring at the end of the arena ([`Driver::add_nic`], `crate::multi_nic`).
    pub nics: usize,
}

impl DriverConfig {
    /// A configuration with 16-entry send and receive rings, a 256-entry completion ring,
    /// 4 KiB receive buffers, and control resends after the protocol's own resend time
    /// (the rejoin protocol's `resend_timeout`, the heartbeat's `period`) without an
    /// acknowledgement.
    pub fn new(protocol: Protocol, node_count: usize, arena_base: u32, arena_len: u32) -> Self {
        let control_resend_interval = match &protocol {
            Protocol::Rejoin(c) => c.resend_timeout,
            Protocol::Heartbeat(c) => c.period,
        };
        DriverConfig {
            control_resend_interval,
            protocol,
            node_count,
            incarnation: 0,
            first_handle: 0,
            arena_base,
            arena_len,
            sq_log2: 4,
            rq_log2: 4,
            cq_log2: 8,
            recv_buffer_bytes: 4096,
            exception_poll_interval: 64,
            nics: 1,
        }
    }

    /// This node's number.
    pub fn node(&self) -> NodeId {
        self.protocol.node()
    }

    fn per_qp_bytes(&self) -> u64 {
        let sq = (1u64 << self.sq_log2) * WQE_BYTES as u64;
        let rq = (1u64 << self.rq_log2) * RQE_BYTES as u64;
        let staging = (1u64 << self.sq_log2) * MAX_CONTROL_BYTES as u64;
        let bounce = (1u64 << self.rq_log2) * self.recv_buffer_bytes as u64;
        align64(sq) + align64(rq) + align64(staging) + align64(bounce)
    }

    fn cq_bytes(&self) -> u64 {
        align64((1u64 << self.cq_log2) * CQE_BYTES as u64)
    }

    /// Bytes of arena this configuration needs.
    pub fn arena_needed(&self) -> u64 {
        self.cq_bytes()
            + self.per_qp_bytes() * self.node_count.saturating_sub(1) as u64
            + self.cq_bytes() * self.nics.saturating_sub(1) as u64
    }

    /// Where NIC `nic`'s completion ring starts: NIC 0's opens the arena, the others'
    /// follow the queue pairs.
    pub fn cq_base(&self, nic: usize) -> u32 {
        let first = self.arena_base as u64;
        if nic == 0 {
            return first as u32;
        }
        let after_qps = first
            + self.cq_bytes()
            + self.per_qp_bytes() * self.node_count.saturating_sub(1) as u64;
        (after_qps + self.cq_bytes() * (nic as u64 - 1)) as u32
    }

    fn check(&self) -> Result<(), DriverError> {
        let bad = |m: String| Err(DriverError::BadConfig(m));
        if self.node_count == 0 || self.node_count > self.protocol.max_nodes() {
            return bad(format!(
                "node_count {} must be in 1..={} (the maximum node count)",
                self.node_count,
                self.protocol.max_nodes()
            ));
        }
        if self.node() as usize >= self.node_count {
            return bad(format!(
                "node {} must be below node_count {}",
                self.node(),
                self.node_count
            ));
        }
        for (name, v) in [
            ("sq_log2", self.sq_log2),
            ("rq_log2", self.rq_log2),
            ("cq_log2", self.cq_log2),
        ] {
            if !(1..=nic_abi::MAX_RING_SIZE_LOG2).contains(&v) {
                return bad(format!(
                    "{name} must be in 1..={}, got {v}",
                    nic_abi::MAX_RING_SIZE_LOG2
                ));
            }
        }
        if !self.recv_buffer_bytes.is_multiple_of(8)
            || (self.recv_buffer_bytes as usize) < MAX_CONTROL_BYTES
            || self.recv_buffer_bytes > nic_abi::MAX_MESSAGE_LENGTH
        {
            return bad(format!(
                "recv_buffer_bytes must be a multiple of 8 in {MAX_CONTROL_BYTES}..={}, got {}",
                nic_abi::MAX_MESSAGE_LENGTH,
                self.recv_buffer_bytes
            ));
        }
        if self.exception_poll_interval == 0 {
            return bad("exception_poll_interval must be at least 1".into());
        }
        if self.control_resend_interval == 0 {
            return bad("control_resend_interval must be at least 1".into());
        }
        if !(1..=multi_nic::MAX_NICS).contains(&self.nics) {
            return bad(format!(
                "nics must be in 1..={}, got {}",
                multi_nic::MAX_NICS,
                self.nics
            ));
        }
        if !self.arena_base.is_multiple_of(64) {
            return bad(format!(
                "arena_base {:#x} must be 64-aligned",
                self.arena_base
            ));
        }
        let needed = self.arena_needed();
        if needed > self.arena_len as u64 {
            return Err(DriverError::ArenaTooSmall {
                needed,
                have: self.arena_len,
            });
        }
        if self.arena_base as u64 + needed > crate::tpt::HOST_PHYSICAL_SPAN {
            return bad("the arena leaves 32-bit host memory".into());
        }
        Ok(())
    }
}

fn align64(x: u64) -> u64 {
    (x + 63) & !63
}

/// Errors of driver set-up and completion processing.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DriverError {
    /// A configuration value is unusable.
    #[error("bad driver configuration: {0}")]
    BadConfig(String),
    /// The arena cannot hold the rings and buffers.
    #[error("arena too small: {needed} bytes needed, {have} given")]
    ArenaTooSmall {
        /// Bytes needed.
        needed: u64,
        /// Bytes given.
        have: u32,
    },
    /// `NIC_ID` does not read as this NIC.
    #[error("NIC_ID reads {found:#x}, expected {:#x}", csr::NIC_ID_VALUE)]
    BadNicId {
        /// The value read.
        found: u64,
    },
    /// The NIC has fewer queue pairs than the cluster has nodes.
    #[error("the NIC has {have} queue pairs; {needed} nodes need {needed}")]
    TooFewQueuePairs {
        /// Queue pairs needed.
        needed: usize,
        /// Queue pairs the NIC has.
        have: usize,
    },
    /// `NIC_CONFIG` reports a hardware TPT larger than an STag's 24-bit index can name.
    #[error("NIC_CONFIG reports 2^{log2} TPT entries; an STag names at most 2^24")]
    TptTooLarge {
        /// log2 of the entries reported.
        log2: u32,
    },
    /// The NIC's hardware TPT did not complete a command.
    #[error(transparent)]
    HardwareTpt(#[from] HwTptError),
    /// `boot` was called twice.
    #[error("the driver has already booted; a reboot starts a new driver")]
    AlreadyBooted,
    /// The membership machine refused an event.
    #[error(transparent)]
    Membership(#[from] MembershipError),
    /// The TPT refused a registration or an update.
    #[error(transparent)]
    Tpt(#[from] TptError),
    /// A completion names a queue pair the driver does not use.
    #[error("completion for queue pair {qp}, which is not in use")]
    UnknownQueuePair {
        /// The queue pair.
        qp: u8,
    },
    /// A receive completion names no bounce buffer of the driver.
    #[error("queue pair {qp}: receive completion with unknown buffer id {wr_id:#x}")]
    UnknownReceiveBuffer {
        /// The queue pair.
        qp: u8,
        /// The work-request id in the completion.
        wr_id: u64,
    },
    /// A send completion does not complete the oldest outstanding work request.
    #[error("queue pair {qp}: send completion for index {got:#x}, expected {expected:#x}")]
    CompletionOutOfOrder {
        /// The queue pair.
        qp: u8,
        /// The index expected.
        expected: u32,
        /// The index completed.
        got: u32,
    },
}

/// Counters of events the driver tolerated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriverStats {
    /// Control messages that failed to decode (dropped).
    pub control_malformed: u64,
    /// TPT updates the TPT refused (dropped).
    pub tpt_update_refused: u64,
    /// Control sends that completed with an error status.
    pub control_send_errors: u64,
    /// Sequenced control messages posted again (not acknowledged in time, or behind a
    /// flush).
    pub control_resent: u64,
    /// Sequenced control messages received again (dropped: already taken).
    pub control_duplicates: u64,
    /// Sequenced control messages dropped on arrival because an earlier one of their
    /// stream is missing, or their stream's start was not received (this node rebooted
    /// since): the STREAM_ACK makes the sender resend them, in a new stream for the latter.
    pub control_out_of_order: u64,
    /// STREAM_ACKs with `resend` that made this node resend its unacknowledged messages
    /// at once, without waiting for its resend timer.
    pub control_fast_resends: u64,
    /// Control messages that shared a SEND with an earlier one (bundles).
    pub control_bundled: u64,
    /// Completions processed.
    pub completions: u64,
    /// Queue pairs flushed (send side reset) because their peer restarted.
    pub flushes: u64,
    /// Operations those flushes completed with [`CompletionStatus::Flushed`].
    pub flushed_operations: u64,
    /// NIC completions for flushed send indices that arrived after the flush (ignored).
    pub late_flushed_completions: u64,
    /// Times the protocol started again because the NIC's link went down or came back
    /// ([`Driver::link_changed`]).
    pub link_restarts: u64,
    /// Hardware TPT commands (write, invalidate) completed.
    pub tpt_commands: u64,
    /// Exception-queue heads refused (hardware TPT): every head is (see
    /// `Driver::service_exception`).
    pub exceptions_refused: u64,
    /// Of those, heads that named a region of this host whose NIC entry a request used up
    /// (one-shot) or invalidated: the region was retired.
    pub exceptions_used_up: u64,
}

#[derive(Clone, Debug)]
pub(crate) enum SendKind {
    /// A control SEND of `stream` whose sequenced messages are numbered `first..first + count`.
    Control {
        stream: u32,
        first: u32,
        count: u32,
    },
    App {
        wr_id: u64,
        opcode: WqeOpcode,
    },
    /// A local work request: BIND RKEY, UNBIND or DELAY ([`crate::windows`]).
    Local {
        wr_id: u64,
        work: LocalWork,
    },
    /// The NOP behind a send-side reset: the application work it completes FLUSHED.
    FlushFence {
        app: Vec<(u64, WqeOpcode)>,
        local: Vec<(u64, LocalWork)>,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct SendRecord {
    pub(crate) kind: SendKind,
    /// The operations the work request completes: one, or a bundle's control messages.
    pub(crate) ops: Vec<u64>,
}

#[derive(Clone, Debug)]
pub(crate) struct AppRecv {
    pub(crate) wr_id: u64,
    pub(crate) physical: u32,
    pub(crate) length: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct HeldRecv {
    /// Where the message is: still in its bounce buffer, or copied out of it.
    at: Held,
    opcode: u8,
    byte_count: u32,
    immediate: Option<u32>,
    status: CompletionStatus,
}

/// Where a held application message waits.
#[derive(Clone, Debug)]
enum Held {
    /// In bounce buffer `slot` (past [`HELD_COPIED_MAX`] copied messages).
    Bounce(u32),
    /// Copied into the driver's memory; the bounce buffer went back to the NIC.
    Copied(Vec<u8>),
}

/// Application messages per peer the driver copies out of their bounce buffers while the
/// application has no receive posted, so the bounce buffers go back at once and control
/// messages always find one. Past this many the messages keep their bounce buffers, and
/// the NIC answers the peer RECEIVER_NOT_READY once they are all taken (flow control).
pub const HELD_COPIED_MAX: usize = 64;

/// How far a flush moves a queue pair's PSNs on (see `Driver::flush_queue_pair`): 2^24
/// divided by the golden ratio, so the start PSNs of successive flushes stay spread over
/// the PSN space (any k of them at least about 2^24 / (2.6 k) apart).
pub const FLUSH_PSN_STEP: u32 = 0x9E_3779;

/// A STREAM_ACK not urgent waits this many control resend intervals for a SEND to ride
/// with.
pub const ACK_DELAY_INTERVALS: u64 = 2;

/// After a control SEND completes with success (or is flushed), its messages go again if
/// not acknowledged within this many control resend intervals (after a failure: one).
/// More than [`ACK_DELAY_INTERVALS`]: a delayed acknowledgement comes before.
pub const ACK_WAIT_INTERVALS: u64 = 3;

/// Flushed index ranges a queue pair remembers, to recognise late NIC completions.
const FLUSHES_REMEMBERED: usize = 4;

/// The sending side of the sequenced control messages to one peer (see "Control messages"
/// in the module docs).
#[derive(Clone, Debug)]
pub(crate) struct ControlStream {
    /// The stream's name on the wire; the next stream's is one more.
    id: u32,
    /// The sequence number the next sequenced message gets.
    next_seq: u32,
    /// Sequenced messages posted and not acknowledged yet (STREAM_ACK), oldest first, with
    /// their sequence numbers and, once their SEND has completed (or was flushed), the
    /// time they go again without an acknowledgement.
    unacked: VecDeque<(u32, ControlMessage, Option<Tick>)>,
    /// Without an acknowledgement by then, the unacknowledged messages are posted again:
    /// set when a SEND of them completes (its acknowledgement is due), not when it is
    /// posted (it may wait in the send queue behind others for long).
    resend_at: Option<Tick>,
}

/// A STREAM_ACK due to a peer.
#[derive(Clone, Copy, Debug)]
struct AckDue {
    /// The peer's stream acknowledged.
    stream: u32,
    /// It goes alone at this time if nothing carries it before.
    by: Tick,
    /// Messages of the stream were dropped behind a gap: the acknowledgement asks the
    /// sender to resend from the number expected (`resend`).
    gap: bool,
}

/// Per peer queue pair state.
#[derive(Clone, Debug)]
pub(crate) struct QueuePair {
    pub(crate) sq_base: u32,
    rq_base: u32,
    staging_base: u32,
    bounce_base: u32,
    /// Next send index (PSN) to post.
    pub(crate) sq_pi: u32,
    /// Oldest send index not completed.
    pub(crate) sq_ci: u32,
    pub(crate) slots: Vec<Option<SendRecord>>,
    rq_pi: u32,
    free_bounce: Vec<u32>,
    /// Control messages queued, not posted yet: (message, sequence number if sequenced,
    /// operation).
    pub(crate) backlog: VecDeque<(ControlMessage, Option<u32>, u64)>,
    /// The stream of sequenced control messages to the peer.
    stream: ControlStream,
    /// The peer's stream this node follows: (stream, next sequence number expected).
    rx_stream: Option<(u32, u32)>,
    /// A STREAM_ACK is due to the peer.
    ack_due: Option<AckDue>,
    /// Send indices `start..end` of the last flushes: a late NIC completion for one of
    /// them is ignored.
    flushed: VecDeque<(u32, u32)>,
    pub(crate) app_recvs: VecDeque<AppRecv>,
    held: VecDeque<HeldRecv>,
    /// The NIC's queue pair has been programmed in this boot.
    programmed: bool,
}

/// The driver of one NIC (one boot of it).
pub struct Driver<A: NicAccess> {
    pub(crate) nic: A,
    pub(crate) config: DriverConfig,
    pub(crate) node: NodeId,
    pub(crate) membership: Membership,
    pub(crate) tpt: Tpt,
    /// The NIC's hardware TPT, when `NIC_CONFIG` reports one.
    pub(crate) hw_tpt: Option<HwTpt>,
    next_exception_poll: Tick,
    pub(crate) booted: bool,
    /// Control messages wait in the backlogs until [`Driver::run`] ends (bundling); from
    /// [`Driver::boot`] until the first [`Driver::poll`] as well (see there).
    defer_control: bool,
    /// Boot has queued the BOOTINGs; the first poll sends them and programs the queue
    /// pairs the protocol did not touch.
    boot_pending: bool,
    pub(crate) joined: bool,
    rdma_enabled: bool,
    pub(crate) barred: BitVec,
    pub(crate) updates: BitVec,
    pub(crate) qps: Vec<Option<QueuePair>>,
    cq_base: u32,
    cq_next: u32,
    next_op: Vec<u64>,
    outstanding: Vec<BTreeSet<u64>>,
    fence: Vec<Option<u64>>,
    /// Per node, the TPT_REMOVEs it sent that are waiting for a fence before this node
    /// answers TPT_REMOVE_DONE: (first operation number not covered, handles), oldest first.
    remove_fences: Vec<VecDeque<(u64, Vec<u32>)>>,
    /// The owner's side of deregistration ([`crate::dereg`]).
    pub(crate) dereg: Deregistrations,
    /// The memory windows' RKeys ([`crate::windows`]).
    pub(crate) windows: Windows,
    /// The time of the latest [`Driver::poll`] (deregistrations started between polls
    /// schedule their resends from it).
    pub(crate) last_now: Tick,
    deadline: Option<Tick>,
    /// The time of the current (or last) `boot` or `poll`.
    now: Tick,
    pub(crate) ready: VecDeque<Completion>,
    events: VecDeque<Event>,
    pub(crate) stats: DriverStats,
    /// The host's other NICs and which NIC holds each STag ([`crate::multi_nic`]).
    pub(crate) nics: NicSlots<A>,
}

fn mix(mut z: u64) -> u64 {
    // splitmix64 finaliser: spreads the incarnation over the start PSNs.
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl<A: NicAccess> Driver<A> {
    /// Checks the configuration and the NIC (two CSR reads: `NIC_ID`, `NIC_CONFIG`); nothing
    /// is written until [`Driver::boot`].
    pub fn new(mut nic: A, config: DriverConfig) -> Result<Self, DriverError> {
        config.check()?;
        let id = nic.csr_read(csr::NIC_ID as u32);
        if id != csr::NIC_ID_VALUE {
            return Err(DriverError::BadNicId { found: id });
        }
        let nic_config = nic.csr_read(csr::NIC_CONFIG as u32);
        let have = (nic_config & 0xFF) as usize;
        if have < config.node_count {
            return Err(DriverError::TooFewQueuePairs {
                needed: config.node_count,
                have,
            });
        }
        let tpt_log2 = ((nic_config >> 24) & 0xFF) as u32;
        if tpt_log2 > 24 {
            return Err(DriverError::TptTooLarge { log2: tpt_log2 });
        }
        let hw_tpt = (tpt_log2 != 0).then(|| HwTpt::new(tpt_log2, config.first_handle));
        let node = config.node();
        let max = config.protocol.max_nodes();
        let membership = Membership::new(config.protocol.clone())?;
        let tpt = Tpt::new(node, max, config.first_handle)?;
        // Lay out the arena.
        let mut at = config.arena_base as u64;
        let cq_base = at as u32;
        at += align64((1u64 << config.cq_log2) * CQE_BYTES as u64);
        let mut qps = vec![None; config.node_count];
        for (q, slot) in qps.iter_mut().enumerate() {
            if q == node as usize {
                continue;
            }
            let sq_base = at as u32;
            at += align64((1u64 << config.sq_log2) * WQE_BYTES as u64);
            let rq_base = at as u32;
            at += align64((1u64 << config.rq_log2) * RQE_BYTES as u64);
            let staging_base = at as u32;
            at += align64((1u64 << config.sq_log2) * MAX_CONTROL_BYTES as u64);
            let bounce_base = at as u32;
            at += align64((1u64 << config.rq_log2) * config.recv_buffer_bytes as u64);
            let start = (mix(((config.incarnation as u64) << 16) | q as u64) as u32) & PSN_MASK;
            *slot = Some(QueuePair {
                sq_base,
                rq_base,
                staging_base,
                bounce_base,
                sq_pi: start,
                sq_ci: start,
                slots: vec![None; 1 << config.sq_log2],
                rq_pi: 0,
                free_bounce: (0..1u32 << config.rq_log2).rev().collect(),
                backlog: VecDeque::new(),
                stream: ControlStream {
                    id: mix(((config.incarnation as u64) << 16) | q as u64 | 1 << 63) as u32,
                    next_seq: 0,
                    unacked: VecDeque::new(),
                    resend_at: None,
                },
                rx_stream: None,
                ack_due: None,
                flushed: VecDeque::new(),
                app_recvs: VecDeque::new(),
                held: VecDeque::new(),
                programmed: false,
            });
        }
        Ok(Driver {
            nic,
            node,
            membership,
            tpt,
            hw_tpt,
            next_exception_poll: 0,
            booted: false,
            defer_control: false,
            boot_pending: false,
            joined: false,
            rdma_enabled: false,
            barred: bitvec![1; max],
            updates: bitvec![0; max],
            qps,
            cq_base,
            cq_next: 0,
            next_op: vec![0; max],
            outstanding: vec![BTreeSet::new(); max],
            fence: vec![None; max],
            remove_fences: vec![VecDeque::new(); max],
            dereg: Deregistrations::new(max),
            windows: Windows::new(),
            last_now: 0,
            deadline: None,
            now: 0,
            ready: VecDeque::new(),
            events: VecDeque::new(),
            stats: DriverStats::default(),
            nics: NicSlots::new(cq_base),
            config,
        })
    }

    /// Programs the NIC (node id, completion ring, one queue pair per peer, reset with a
    /// start PSN drawn from the incarnation), posts the receive buffers and starts the
    /// membership protocol (000 Fig. 7: SEND/RECEIVE on, RDMA off, BOOTING to every node,
    /// each with this node's TPT part behind it in the same SEND). The BOOTINGs leave at
    /// the first [`Driver::poll`], so regions the application registers between `boot` and
    /// that poll ride in the same SEND. A queue pair is programmed right before its first
    /// doorbell, so the NIC starts sending while later queue pairs are programmed; all are
    /// programmed by the end of the first poll.
    pub fn boot(&mut self, now: Tick) -> Result<(), DriverError> {
        if self.booted {
            return Err(DriverError::AlreadyBooted);
        }
        self.booted = true;
        self.now = now;
        let c = self.config.clone();
        if self.hw_tpt.is_some() {
            // The NIC's reset clears the table (its sweep keeps the TPT busy meanwhile):
            // wait for it, and take the refused-command count as the baseline.
            let status = self.wait_tpt_idle()?;
            if let Some(hw) = self.hw_tpt.as_mut() {
                hw.refused_seen = (status >> csr::TPT_STATUS_REFUSED_SHIFT) as u8;
            }
        }
        self.csr(csr::ENABLE, 0);
        self.csr(csr::NODE_ID, self.node as u64);
        // Stale entries of an earlier boot could carry the sequence numbers expected next.
        let cq_bytes = (1usize << c.cq_log2) * CQE_BYTES as usize;
        self.nic
            .mem_write(self.cq_base as u64, &vec![0u8; cq_bytes]);
        self.csr(csr::CQ_SIZE_LOG2, c.cq_log2 as u64);
        self.csr(csr::CQ_BASE, self.cq_base as u64);
        self.events.push_back(Event::Boot {
            node_count: c.node_count,
            incarnation: c.incarnation,
        });
        // The BOOTINGs (and the TPT pushes behind them) stay queued until the first
        // `poll`: what the application registers right after boot goes to each node in
        // the same SEND as its BOOTING, instead of as one more message per node and
        // registration. Each queue pair is programmed just before its first doorbell, so
        // the NIC sends the first BOOTINGs while the driver still programs the later
        // queue pairs; what the protocol did not touch is programmed after that.
        self.defer_control = true;
        self.boot_pending = true;
        self.run_events(now)
    }

    /// The NIC's link went down (`up` false) or came back (`up` true), as the host learns
    /// from the NIC's link-state interrupt. Under the rejoin protocol the node then
    /// rejoins as after a boot, keeping its memory and its own registrations.
    ///
    /// Why: while its link is down a node can miss anything. A peer may reboot and its
    /// BOOTING never arrive (the fabric answers it PORT_DOWN, and the rebooted peer keeps
    /// this node barred until it boots), so every copy of a peer's TPT part this node
    /// holds may be from a boot that is gone, and requests made with it would land in
    /// the peer's new boot once the link returns. 000's model has no such node: a node
    /// that does not answer is taken to be off, and a node that was off boots. So at
    /// each link change the driver does what a boot does to the protocol's state: every
    /// remote TPT part is forgotten, every node barred, TPT updates stopped, every queue
    /// pair flushed (nothing posted under the old copies is sent after the link
    /// returns), and the protocol starts again with a new incarnation: RDMA disabled,
    /// BOOTING to every node (resent while the link is down), RDMA enabled once every
    /// node has answered. The peers handle the BOOTING as a reboot's: they forget this
    /// node's part, fence, answer, and take the push of its (unchanged) local part. The
    /// heartbeat baseline has no such rule and ignores link changes.
    pub fn link_changed(&mut self, now: Tick, up: bool) -> Result<(), DriverError> {
        if !self.booted || !matches!(self.config.protocol, Protocol::Rejoin(_)) {
            return Ok(());
        }
        let _ = up;
        self.last_now = now;
        for node in 0..self.config.node_count as NodeId {
            if node == self.node {
                continue;
            }
            let n = node as usize;
            let _ = self.tpt.clear_remote(node);
            self.barred.set(n, true);
            self.updates.set(n, false);
            self.fence[n] = None;
            self.flush_queue_pair(node);
        }
        self.deadline = None;
        self.events.clear();
        self.joined = false;
        self.stats.link_restarts += 1;
        self.config.incarnation = mix(self.config.incarnation as u64 ^ now << 32) as u32;
        self.membership = Membership::new(self.config.protocol.clone())?;
        self.events.push_back(Event::Boot {
            node_count: self.config.node_count,
            incarnation: self.config.incarnation,
        });
        self.run(now)
    }

    /// Programs queue pair `q` once per boot: reset with the start PSN of this
    /// incarnation, rings, remote end, receive buffers posted, enabled.
    fn program_queue_pair(&mut self, q: usize) {
        self.program_queue_pair_resuming(q, None);
    }

    /// [`Driver::program_queue_pair`]; after a failover, with `resume_at` the PSN the old
    /// NIC's responder expected next: the responder resumes there (`QP_CTRL_RESUME`) after
    /// the reset and before it is enabled.
    fn program_queue_pair_resuming(&mut self, q: usize, resume_at: Option<u32>) {
        let c = &self.config;
        let (sq_log2, rq_log2) = (c.sq_log2, c.rq_log2);
        let Some(qp) = self.qps.get_mut(q).and_then(|qp| qp.as_mut()) else {
            return;
        };
        if qp.programmed {
            return;
        }
        qp.programmed = true;
        // From the oldest index not completed: the same as `sq_pi` at boot; after a
        // failover ([`Driver::fail_over`]) the new NIC takes up what the old one left.
        let (sq_base, rq_base, start) = (qp.sq_base, qp.rq_base, qp.sq_ci);
        let ctrl = csr::qp(q, csr::QP_CTRL);
        self.csr(
            ctrl,
            csr::QP_CTRL_RESET | (start as u64) << csr::QP_CTRL_START_PSN_SHIFT,
        );
        if let Some(psn) = resume_at {
            self.csr(
                ctrl,
                csr::QP_CTRL_RESUME | (psn as u64) << csr::QP_CTRL_START_PSN_SHIFT,
            );
        }
        self.csr(csr::qp(q, csr::QP_SQ_BASE), sq_base as u64);
        self.csr(csr::qp(q, csr::QP_SQ_SIZE_LOG2), sq_log2 as u64);
        self.csr(csr::qp(q, csr::QP_RQ_BASE), rq_base as u64);
        self.csr(csr::qp(q, csr::QP_RQ_SIZE_LOG2), rq_log2 as u64);
        self.csr(
            csr::qp(q, csr::QP_REMOTE),
            q as u64 | (self.node as u64) << 16,
        );
        for _ in 0..1u32 << rq_log2 {
            self.post_bounce(q);
        }
        let rq_pi = self.qps[q].as_ref().map_or(0, |qp| qp.rq_pi);
        self.csr(csr::qp(q, csr::QP_RQ_PI), rq_pi as u64);
        self.csr(ctrl, csr::QP_CTRL_ENABLE);
    }

    /// Processes every completion the NIC has written, runs the protocol (and its timer at
    /// `now`) and returns the application's completions, oldest first. Writes `CQ_CI` once
    /// if anything was consumed; never reads a CSR.
    pub fn poll(&mut self, now: Tick) -> Result<Vec<Completion>, DriverError> {
        self.now = now;
        let size = 1u32 << self.config.cq_log2;
        let start = self.cq_next;
        let mut rq_doorbells = BitVec::<usize>::repeat(false, self.config.node_count);
        let mut result = Ok(());
        loop {
            let addr = self.cq_base as u64 + ((self.cq_next % size) * CQE_BYTES) as u64;
            let cqe = Cqe::from_words(&self.read_words::<4>(addr));
            if cqe.sequence != self.cq_next.wrapping_add(1) {
                break;
            }
            self.cq_next = self.cq_next.wrapping_add(1);
            self.stats.completions += 1;
            if let Err(e) = self.on_cqe(&cqe, &mut rq_doorbells) {
                result = Err(e);
                break;
            }
        }
        if self.cq_next != start {
            self.csr(csr::CQ_CI, self.cq_next as u64);
        }
        for q in rq_doorbells.iter_ones() {
            self.ring_rq_doorbell(q);
        }
        result?;
        self.last_now = now;
        if self.deadline.is_some_and(|d| now >= d) {
            self.deadline = None;
            self.events.push_back(Event::Timeout);
        }
        for q in 0..self.qps.len() {
            self.resend_if_due(q as NodeId);
        }
        self.run(now)?;
        // Acknowledgements due that rode with nothing this poll go alone.
        for q in 0..self.qps.len() {
            self.ack_if_due(q as NodeId);
        }
        if self.hw_tpt.is_some() && now >= self.next_exception_poll {
            // Also while RDMA is disabled: RDMA disabled answers every new RDMA request
            // before the TPT looks at it (responder rule 4 before rule 5), but a request
            // that missed just before the disable still waits at the head, and the
            // responder waits with it, receiving nothing (not even the BOOTINGs and ACKs
            // that would enable RDMA again) until the head is answered.
            let answered = self.service_exceptions(now);
            self.next_exception_poll = if answered {
                now
            } else {
                now + self.config.exception_poll_interval
            };
        }
        Ok(self.ready.drain(..).collect())
    }

    /// Whether the NIC has a hardware TPT (RDMA then carries STag + virtual address).
    pub fn has_hardware_tpt(&self) -> bool {
        self.hw_tpt.is_some()
    }

    /// The hardware TPT's state, when the NIC has one.
    pub fn hw_tpt(&self) -> Option<&HwTpt> {
        self.hw_tpt.as_ref()
    }

    /// `entry` as the peers hold it: with a hardware TPT the handle is the STag and the
    /// logical address the virtual address the NIC checks, which is all a requester needs;
    /// the physical address stays on this host (sent as 0).
    pub fn published(&self, entry: &TptEntry) -> TptEntry {
        match self.hw_tpt {
            Some(_) => TptEntry {
                physical: 0,
                ..*entry
            },
            None => *entry,
        }
    }

    /// The local TPT part as every peer should hold it (see [`Driver::published`]).
    pub fn published_local_entries(&self) -> Vec<TptEntry> {
        self.tpt
            .local_entries()
            .map(|e| self.published(e))
            .collect()
    }

    /// Reads `TPT_STATUS` until busy clears; returns the last value.
    pub(crate) fn wait_tpt_idle(&mut self) -> Result<u64, HwTptError> {
        let mut status = 0;
        for _ in 0..hw_tpt::BUSY_POLLS {
            status = self.nic.csr_read(csr::TPT_STATUS as u32);
            if status & csr::TPT_STATUS_BUSY == 0 {
                return Ok(status);
            }
        }
        Err(HwTptError::Busy {
            reads: hw_tpt::BUSY_POLLS,
            status,
        })
    }

    /// Runs the staged TPT command `command` on index `index`, waits for it and checks that
    /// the NIC did not refuse it.
    fn tpt_command(&mut self, index: u32, command: u64) -> Result<(), HwTptError> {
        self.csr(csr::TPT_COMMAND, command);
        let status = self.wait_tpt_idle()?;
        let refused = (status >> csr::TPT_STATUS_REFUSED_SHIFT) as u8;
        let Some(hw) = self.hw_tpt.as_mut() else {
            return Ok(());
        };
        if refused != hw.refused_seen {
            hw.refused_seen = refused;
            return Err(HwTptError::CommandRefused { index });
        }
        self.stats.tpt_commands += 1;
        Ok(())
    }

    /// Programs the NIC's entry for `entry` (its handle is the STag): index, word 0 (valid,
    /// rights, key, and the one-shot bit with `one_shot`), virtual base, length, physical
    /// base, then the write command.
    pub(crate) fn program_tpt_entry(
        &mut self,
        entry: &TptEntry,
        one_shot: bool,
    ) -> Result<(), HwTptError> {
        let index = hw_tpt::stag_index(entry.handle);
        let word0 = hw_tpt::word0(entry) | if one_shot { csr::TPT_ONE_SHOT } else { 0 };
        self.csr(csr::TPT_INDEX, index as u64);
        self.csr(csr::TPT_WORD0, word0);
        self.csr(csr::TPT_VADDR, entry.logical);
        self.csr(csr::TPT_LENGTH, entry.length as u64);
        self.csr(csr::TPT_PADDR, entry.physical as u64);
        self.tpt_command(index, csr::TPT_COMMAND_WRITE)?;
        self.nics.holders.insert(entry.handle, self.nics.current);
        Ok(())
    }

    /// Invalidates the entry named by `stag` in the NIC that holds it
    /// ([`crate::multi_nic`]) and waits until it is done.
    pub(crate) fn invalidate_tpt_entry(&mut self, stag: u32) -> Result<(), HwTptError> {
        let holder = self.nics.holder(stag);
        self.with_nic(holder, |d| {
            let index = hw_tpt::stag_index(stag);
            d.csr(csr::TPT_INDEX, index as u64);
            d.tpt_command(index, csr::TPT_COMMAND_INVALIDATE)
        })
    }

    /// Reads the exception queue's head of every NIC of the host and answers it, echoing
    /// the head's tag (an answer that comes after the NIC timed the head out is then
    /// ignored by the NIC instead of answering the next one). Returns whether a head was
    /// answered.
    ///
    /// With one NIC every head is refused. Every region of this host is in a NIC's table
    /// from its registration until its deregistration invalidates it (a registration that
    /// finds the table full fails), and only the driver writes entries valid. So a head
    /// naming a region of the local part, in the NIC that holds it, is a request that
    /// missed an entry the NIC itself cleared: a one-shot entry that a request used up, or
    /// an entry a request with the invalidate flag cleared (003). The driver's own copy of
    /// the region must not bring it back: the head is refused and the region retired
    /// ([`Driver::retire_used_up`]). No race with the NIC's write-back is possible: the TPT
    /// applies a lookup's write-back before any later lookup or command (`rtl/src/tpt/mod.rs`,
    /// "Consistency"), so an entry that missed stays cleared. Any other STag (a
    /// deregistered region, one of an earlier boot) is refused as well. With several NICs
    /// a head naming a region another NIC holds migrates it ([`crate::multi_nic`]).
    fn service_exceptions(&mut self, now: Tick) -> bool {
        let mut answered = false;
        for k in 0..self.nics.count() {
            answered |= self.service_exception_at(k, now);
        }
        answered
    }

    /// Answers NIC `k`'s exception head, if any (see [`Driver::service_exceptions`]).
    fn service_exception_at(&mut self, k: usize, now: Tick) -> bool {
        let head0 = self.with_nic(k, |d| d.nic.csr_read(csr::EXC_HEAD0 as u32));
        if head0 & csr::EXC_HEAD_VALID == 0 {
            return false;
        }
        let Some(mut head) = ExceptionHead::decode(head0, 0, 0) else {
            return false;
        };
        let entry = self.tpt.local(head.stag).copied();
        let holder = self.nics.holder(head.stag);
        let mut read = None;
        if entry.is_some() && holder != k {
            // The request's range (EXC_HEAD1..2), then the holder's entry: taken (read
            // and invalidated in one command) only when a migration is possible.
            let (vaddr, length) = self.with_nic(k, |d| {
                (
                    d.nic.csr_read(csr::EXC_HEAD1 as u32),
                    d.nic.csr_read(csr::EXC_HEAD2 as u32),
                )
            });
            head = ExceptionHead::decode(head0, vaddr, length).unwrap_or(head);
            if multi_nic::can_migrate(&head, k, entry.as_ref(), holder) {
                read = self
                    .take_tpt_word0(holder, head.stag)
                    .ok()
                    .map(HolderEntry::from_word0);
            }
        }
        let resolution = multi_nic::resolve(&head, k, entry.as_ref(), holder, read);
        let (answer, outcome) = match resolution {
            Resolution::Refuse { retire } => {
                let outcome = match (entry.is_some(), retire) {
                    (false, _) => SlowPathOutcome::Unknown,
                    (true, true) => SlowPathOutcome::UsedUp,
                    (true, false) => SlowPathOutcome::Refused,
                };
                (None, outcome)
            }
            Resolution::Migrate { paddr, install } => match self.migrate(k, entry, read, install) {
                Ok(()) if install => (Some(paddr), SlowPathOutcome::Migrated),
                Ok(()) => (Some(paddr), SlowPathOutcome::MigratedUsedUp),
                Err(_) => (None, SlowPathOutcome::Refused),
            },
        };
        if answer.is_none() {
            self.stats.exceptions_refused += 1;
        }
        self.with_nic(k, |d| {
            d.csr(csr::EXC_ANSWER, csr::exc_answer(head0, answer))
        });
        self.nics.record(k, head.stag, now, outcome);
        let retire = match resolution {
            Resolution::Refuse { retire } => retire,
            Resolution::Migrate { install, .. } => !install && answer.is_some(),
        };
        if retire && entry.is_some() {
            if outcome == SlowPathOutcome::UsedUp {
                self.stats.exceptions_used_up += 1;
            }
            self.retire_used_up(head.stag);
        }
        true
    }

    /// Takes `stag`'s index in NIC `nic` (`TPT_COMMAND` take: the entry is read into the
    /// staging registers and invalidated in one operation) and returns its `TPT_WORD0` as
    /// it was. An entry that was valid under another key is not this STag's: it is written
    /// back at once (an inconsistency between the driver's table and the NIC's).
    fn take_tpt_word0(&mut self, nic: usize, stag: u32) -> Result<u64, HwTptError> {
        self.with_nic(nic, |d| {
            let index = hw_tpt::stag_index(stag);
            d.csr(csr::TPT_INDEX, index as u64);
            d.tpt_command(index, csr::TPT_COMMAND_TAKE)?;
            let word0 = d.nic.csr_read(csr::TPT_WORD0 as u32);
            let read = HolderEntry::from_word0(word0);
            if read.valid && read.key != hw_tpt::stag_key(stag) {
                d.tpt_command(index, csr::TPT_COMMAND_WRITE)?;
            }
            Ok(word0)
        })
    }

    /// Moves `stag`, already taken from the NIC that held it, to NIC `to`: with `install`,
    /// programmed there (with the one-shot bit `read` showed), which becomes its holder.
    fn migrate(
        &mut self,
        to: usize,
        entry: Option<TptEntry>,
        read: Option<HolderEntry>,
        install: bool,
    ) -> Result<(), HwTptError> {
        let (Some(entry), true) = (entry, install) else {
            return Ok(());
        };
        let one_shot = read.is_some_and(|r| r.one_shot);
        self.with_nic(to, |d| d.program_tpt_entry(&entry, one_shot))
    }

    /// Runs `f` with NIC `k`'s handle in `self.nic` (and its TPT refused-command count),
    /// then puts the NIC that was there back.
    pub(crate) fn with_nic<R>(&mut self, k: usize, f: impl FnOnce(&mut Self) -> R) -> R {
        let back = self.nics.current;
        self.swap_in(k);
        let r = f(self);
        self.swap_in(back);
        r
    }

    /// Puts NIC `k`'s handle in `self.nic` (a no-op for a NIC the host does not have).
    fn swap_in(&mut self, k: usize) {
        let current = self.nics.current;
        if k == current {
            return;
        }
        let Some(mut incoming) = self.nics.slots.get_mut(k).and_then(|s| s.take()) else {
            return;
        };
        std::mem::swap(&mut self.nic, &mut incoming);
        self.nics.slots[current] = Some(incoming);
        if let Some(hw) = self.hw_tpt.as_mut() {
            self.nics.refused[current] = hw.refused_seen;
            hw.refused_seen = self.nics.refused[k];
        }
        self.nics.current = k;
    }

    /// Adds another NIC of this host (before [`Driver::boot`] or after): checks it as
    /// [`Driver::new`] checks the first (two CSR reads), and, with a hardware TPT, that its
    /// table has the same size (an STag names the same index on every NIC) and waits for
    /// its reset sweep. Nothing else is written: the NIC is a standby until a migration
    /// installs an entry in it or [`Driver::fail_over`] makes it active. Returns its
    /// number.
    pub fn add_nic(&mut self, mut nic: A) -> Result<usize, DriverError> {
        let k = self.nics.count();
        if k >= self.config.nics {
            return Err(DriverError::BadConfig(format!(
                "the configuration has room for {} NICs (DriverConfig::nics)",
                self.config.nics
            )));
        }
        let id = nic.csr_read(csr::NIC_ID as u32);
        if id != csr::NIC_ID_VALUE {
            return Err(DriverError::BadNicId { found: id });
        }
        let nic_config = nic.csr_read(csr::NIC_CONFIG as u32);
        let have = (nic_config & 0xFF) as usize;
        if have < self.config.node_count {
            return Err(DriverError::TooFewQueuePairs {
                needed: self.config.node_count,
                have,
            });
        }
        let tpt_log2 = ((nic_config >> 24) & 0xFF) as u32;
        let entries = self.hw_tpt.as_ref().map_or(0, |h| h.entries());
        if (tpt_log2 != 0) != (entries != 0) || (entries != 0 && 1u32 << tpt_log2 != entries) {
            return Err(DriverError::BadConfig(format!(
                "NIC {k} reports 2^{tpt_log2} TPT entries; every NIC of a host needs the first one's table size ({entries} entries)"
            )));
        }
        self.nics.slots.push(Some(nic));
        self.nics.refused.push(0);
        self.nics.cq_bases.push(self.config.cq_base(k));
        if self.hw_tpt.is_some() {
            let status = self.with_nic(k, |d| d.wait_tpt_idle())?;
            self.nics.refused[k] = (status >> csr::TPT_STATUS_REFUSED_SHIFT) as u8;
        }
        Ok(k)
    }

    /// The host's NICs beyond the first, STag holders and the slow path's counters
    /// ([`crate::multi_nic`]).
    pub fn multi_nic(&self) -> &NicSlots<A> {
        &self.nics
    }

    /// As [`Driver::multi_nic`], to take the slow-path records.
    pub fn multi_nic_mut(&mut self) -> &mut NicSlots<A> {
        &mut self.nics
    }

    /// Processes every completion the current NIC has written to its ring (as
    /// [`Driver::poll`] does, without running the protocol).
    fn drain_completions(&mut self) -> Result<(), DriverError> {
        let size = 1u32 << self.config.cq_log2;
        let mut rq_doorbells = BitVec::<usize>::repeat(false, self.config.node_count);
        loop {
            let addr = self.cq_base as u64 + ((self.cq_next % size) * CQE_BYTES) as u64;
            let cqe = Cqe::from_words(&self.read_words::<4>(addr));
            if cqe.sequence != self.cq_next.wrapping_add(1) {
                return Ok(());
            }
            self.cq_next = self.cq_next.wrapping_add(1);
            self.stats.completions += 1;
            self.on_cqe(&cqe, &mut rq_doorbells)?;
        }
    }

    /// Moves the host's traffic to NIC `to` (the network now delivers it there: the
    /// active NIC was unplugged, or the route changed; see [`crate::multi_nic`]): the
    /// active NIC's queue pairs are reset and left disabled, SEND/RECEIVE and RDMA off;
    /// NIC `to` gets the node id, its own completion ring and every queue pair; then the
    /// membership protocol restarts as after a link change ([`Driver::link_changed`]).
    /// Registrations and STags stay; each migrates to NIC `to` at its first request there.
    /// Needs the rejoin protocol (the heartbeat baseline has no restart).
    pub fn fail_over(&mut self, now: Tick, to: usize) -> Result<(), DriverError> {
        if to >= self.nics.count() {
            return Err(DriverError::BadConfig(format!(
                "no NIC {to}: the host has {}",
                self.nics.count()
            )));
        }
        if to == self.nics.active || !self.booted {
            return Ok(());
        }
        // Stop the old NIC: nothing it still receives is executed, nothing is sent. Each
        // responder's position is carried over: disabled first, so no message syncs it
        // any more; whether it is synced (it received in the peer's current sequence);
        // the reset abandons any message in progress; then its expected PSN is final (a
        // reset keeps it readable). The new NIC resumes there, so a request the old one
        // executed and the peer resends is answered, not executed again.
        let mut resume_at: Vec<Option<u32>> = vec![None; self.qps.len()];
        for q in 0..self.qps.len() {
            if self.qps[q].is_some() {
                let ctrl = csr::qp(q, csr::QP_CTRL);
                let status = csr::qp(q, csr::QP_STATUS) as u32;
                self.csr(ctrl, 0);
                let synced = csr::QpStatus::from_bits(self.nic.csr_read(status)).synced;
                self.csr(ctrl, csr::QP_CTRL_RESET);
                let expected = csr::QpStatus::from_bits(self.nic.csr_read(status)).expected_psn;
                resume_at[q] = synced.then_some(expected);
            }
        }
        self.csr(csr::ENABLE, 0);
        // A read returns once the posted writes before it are done: from then on the old
        // NIC completes nothing, and what it completed before is taken from its ring (a
        // SEND it received and acknowledged is delivered, not lost with the ring).
        let _ = self.nic.csr_read(csr::STAT_MESSAGES_RECEIVED as u32);
        self.drain_completions()?;
        self.swap_in(to);
        self.nics.active = to;
        self.nics.stats.failovers += 1;
        // The new NIC as boot programs one.
        let c = self.config.clone();
        self.csr(csr::ENABLE, 0);
        self.csr(csr::NODE_ID, self.node as u64);
        self.cq_base = self.nics.cq_bases[to];
        self.cq_next = 0;
        let cq_bytes = (1usize << c.cq_log2) * CQE_BYTES as usize;
        self.nic
            .mem_write(self.cq_base as u64, &vec![0u8; cq_bytes]);
        self.csr(csr::CQ_SIZE_LOG2, c.cq_log2 as u64);
        self.csr(csr::CQ_BASE, self.cq_base as u64);
        let rq_size = 1u32 << c.rq_log2;
        for qp in self.qps.iter_mut().flatten() {
            qp.programmed = false;
            // The receive ring starts again: every bounce buffer not holding a message
            // for the application is posted anew.
            qp.rq_pi = 0;
            let held: Vec<u32> = qp
                .held
                .iter()
                .filter_map(|h| match h.at {
                    Held::Bounce(slot) => Some(slot),
                    Held::Copied(_) => None,
                })
                .collect();
            qp.free_bounce = (0..rq_size).rev().filter(|b| !held.contains(b)).collect();
        }
        for (q, resume_at) in resume_at.into_iter().enumerate() {
            self.program_queue_pair_resuming(q, resume_at);
        }
        self.link_changed(now, true)
    }

    /// Retires local region `stag`, whose NIC entry a request used up (one-shot) or
    /// invalidated: out of the local part and the hardware TPT's allocation (the entry is
    /// already invalid in the NIC), TPT_REMOVE to the peers, [`Completion::Deregistered`]
    /// after the fence of [`crate::dereg`].
    fn retire_used_up(&mut self, stag: u32) {
        let Ok(entry) = self.tpt.deregister(stag) else {
            return;
        };
        self.nics.holders.remove(&stag);
        if let Some(hw) = self.hw_tpt.as_mut() {
            hw.release(stag);
        }
        self.start_deregistration(entry);
    }

    /// Whether this node has joined (its RDMA is enabled).
    pub fn is_joined(&self) -> bool {
        self.joined
    }

    /// Whether RDMA is enabled on this NIC.
    pub fn rdma_enabled(&self) -> bool {
        self.rdma_enabled
    }

    /// Whether RDMA to `node` is barred.
    pub fn is_barred(&self, node: NodeId) -> bool {
        self.barred.get(node as usize).map(|b| *b).unwrap_or(true)
    }

    /// Whether TPT updates go to `node`.
    pub fn updates_enabled(&self, node: NodeId) -> bool {
        self.updates.get(node as usize).map(|b| *b).unwrap_or(false)
    }

    /// Operations sent to `node` that have not completed yet.
    pub fn outstanding(&self, node: NodeId) -> usize {
        self.outstanding.get(node as usize).map_or(0, |s| s.len())
    }

    /// The software TPT.
    pub fn tpt(&self) -> &Tpt {
        &self.tpt
    }

    /// The membership machine.
    pub fn membership(&self) -> &Membership {
        &self.membership
    }

    /// This node's number.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// Counters of tolerated faults.
    pub fn stats(&self) -> DriverStats {
        self.stats
    }

    /// The send index (and so the PSN) the next work request to `node` will get, or `None`
    /// for a node without a queue pair. Test benches use it to follow a request on the wire.
    pub fn next_send_index(&self, node: NodeId) -> Option<u32> {
        self.qps
            .get(node as usize)
            .and_then(|q| q.as_ref())
            .map(|qp| qp.sq_pi)
    }

    /// The pending protocol timer.
    pub fn deadline(&self) -> Option<Tick> {
        self.deadline
    }

    /// The NIC access object.
    pub fn nic(&mut self) -> &mut A {
        &mut self.nic
    }

    pub(crate) fn csr(&mut self, offset: u16, value: u64) {
        self.nic.csr_write(offset as u32, value);
    }

    fn read_words<const N: usize>(&mut self, addr: u64) -> [u64; N] {
        let mut bytes = vec![0u8; N * 8];
        self.nic.mem_read(addr, &mut bytes);
        let mut w = [0u64; N];
        for (i, c) in bytes.chunks_exact(8).enumerate() {
            w[i] = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        }
        w
    }

    fn write_words(&mut self, addr: u64, words: &[u64]) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.nic.mem_write(addr, &bytes);
    }

    /// Posts a free bounce buffer on the receive ring of queue pair `q`. The RQE's work
    /// request id is the buffer's number, so a completion names its buffer.
    fn post_bounce(&mut self, q: usize) {
        let bytes = self.config.recv_buffer_bytes;
        let rq_size = 1u32 << self.config.rq_log2;
        let Some(qp) = self.qps[q].as_mut() else {
            return;
        };
        let Some(buffer) = qp.free_bounce.pop() else {
            return;
        };
        let rqe = Rqe {
            buffer_addr: qp.bounce_base + buffer * bytes,
            buffer_length: bytes,
            wr_id: buffer as u64,
        };
        let addr = qp.rq_base as u64 + ((qp.rq_pi % rq_size) * RQE_BYTES) as u64;
        qp.rq_pi = qp.rq_pi.wrapping_add(1) & PSN_MASK;
        self.write_words(addr, &rqe.to_words());
    }

    /// Tells the NIC about receive buffers posted on queue pair `q`.
    pub(crate) fn ring_rq_doorbell(&mut self, q: usize) {
        self.program_queue_pair(q);
        if let Some(pi) = self
            .qps
            .get(q)
            .and_then(|qp| qp.as_ref())
            .map(|qp| qp.rq_pi)
        {
            self.csr(csr::qp(q, csr::QP_RQ_PI), pi as u64);
        }
    }

    /// Whether the send queue to `node` can take an application work request now.
    pub(crate) fn sq_has_room(&self, node: NodeId) -> bool {
        match self.qps.get(node as usize).and_then(|q| q.as_ref()) {
            Some(qp) => {
                qp.backlog.is_empty()
                    && (qp.sq_pi.wrapping_sub(qp.sq_ci) & PSN_MASK) < 1 << self.config.sq_log2
            }
            None => false,
        }
    }

    /// Writes a WQE into the send ring of `node` and rings the doorbell. The caller has
    /// checked that there is room.
    pub(crate) fn post_wqe(&mut self, node: NodeId, mut wqe: Wqe, kind: SendKind, ops: Vec<u64>) {
        self.program_queue_pair(node as usize);
        let size = 1u32 << self.config.sq_log2;
        let Some(qp) = self.qps[node as usize].as_mut() else {
            return;
        };
        let index = qp.sq_pi;
        let slot = index % size;
        wqe.wr_id = ((node as u64) << 32) | index as u64;
        qp.slots[slot as usize] = Some(SendRecord { kind, ops });
        qp.sq_pi = index.wrapping_add(1) & PSN_MASK;
        let (addr, pi) = (qp.sq_base as u64 + (slot * WQE_BYTES) as u64, qp.sq_pi);
        self.write_words(addr, &wqe.to_words());
        self.csr(csr::qp(node as usize, csr::QP_SQ_PI), pi as u64);
    }

    /// A new operation sequence number for `node`, outstanding until completed.
    pub(crate) fn new_op(&mut self, node: NodeId) -> u64 {
        let n = node as usize;
        let op = self.next_op[n];
        self.next_op[n] += 1;
        self.outstanding[n].insert(op);
        op
    }

    /// Queues `message` for `node` (sent at once unless control messages are deferred). A
    /// sequenced message gets the next number of the node's stream.
    pub(crate) fn send_control(&mut self, node: NodeId, message: ControlMessage) {
        if self.qps.get(node as usize).is_none_or(|q| q.is_none()) {
            return; // the protocol only sends to other nodes of the cluster
        }
        if let ControlMessage::TptUpdate(update) = &message {
            // The peer may hold these regions from now on: their deregistrations wait
            // for it.
            self.dereg
                .note_sent(node, update.entries().iter().map(|e| e.handle));
        }
        let op = self.new_op(node);
        if let Some(qp) = self.qps[node as usize].as_mut() {
            let seq = message.kind().is_sequenced().then(|| {
                let s = qp.stream.next_seq;
                qp.stream.next_seq = s.wrapping_add(1) & SEQUENCE_MASK;
                s
            });
            qp.backlog.push_back((message, seq, op));
        }
        if !self.defer_control {
            self.flush_backlog(node);
        }
    }

    /// Puts the unacknowledged messages of the control stream to `node` back at the head
    /// of its backlog, in order, to be posted again (nothing is dropped). Every queued
    /// message gets a new operation (the old one completes): one to be posted again does
    /// not hold up a fence started before. With `new_stream` the stream gets its next name
    /// and the sequenced messages new numbers from 0 (the node follows no stream of this
    /// node: it rebooted).
    fn requeue_control(&mut self, node: NodeId, new_stream: bool) {
        let Some(qp) = self.qps.get_mut(node as usize).and_then(|q| q.as_mut()) else {
            return;
        };
        let st = &mut qp.stream;
        st.resend_at = None;
        let again = st.unacked.len();
        let mut queue: Vec<(ControlMessage, Option<u32>, Option<u64>)> = st
            .unacked
            .drain(..)
            .map(|(seq, m, _)| (m, Some(seq), None))
            .chain(qp.backlog.drain(..).map(|(m, seq, op)| (m, seq, Some(op))))
            .collect();
        if new_stream {
            st.id = st.id.wrapping_add(1);
            st.next_seq = 0;
            for (_, seq, _) in queue.iter_mut() {
                if seq.is_some() {
                    *seq = Some(st.next_seq);
                    st.next_seq = (st.next_seq + 1) & SEQUENCE_MASK;
                }
            }
        }
        self.stats.control_resent += again as u64;
        for (message, seq, old) in queue.drain(..) {
            let op = self.new_op(node);
            if let Some(old) = old {
                self.complete_op(node, old);
            }
            if let Some(qp) = self.qps[node as usize].as_mut() {
                qp.backlog.push_back((message, seq, op));
            }
        }
    }

    /// The SEND of the messages of `stream` that `sent` selects has completed (or was
    /// flushed): without an acknowledgement they go again after `intervals` resend
    /// intervals (one after a failure, [`ACK_WAIT_INTERVALS`] after a success or a flush:
    /// a flushed SEND may have been delivered, and its acknowledgement may be delayed).
    fn control_sent(
        &mut self,
        node: NodeId,
        stream: u32,
        intervals: u64,
        sent: impl Fn(u32) -> bool,
    ) {
        let resend_at = self.now.saturating_add(
            self.config
                .control_resend_interval
                .saturating_mul(intervals),
        );
        let Some(qp) = self.qps.get_mut(node as usize).and_then(|q| q.as_mut()) else {
            return;
        };
        let st = &mut qp.stream;
        if stream != st.id {
            return;
        }
        for e in st.unacked.iter_mut().filter(|e| sent(e.0)) {
            e.2 = Some(e.2.map_or(resend_at, |t| t.min(resend_at)));
        }
        st.resend_at = st.unacked.iter().filter_map(|e| e.2).min();
    }

    /// Gives every message in the backlog of `node` a new operation (the old one
    /// completes): a fence started before does not wait for it.
    fn reop_backlog(&mut self, node: NodeId) {
        let Some(qp) = self.qps.get_mut(node as usize).and_then(|q| q.as_mut()) else {
            return;
        };
        let queue: Vec<(ControlMessage, Option<u32>, u64)> = qp.backlog.drain(..).collect();
        for (message, seq, old) in queue {
            let op = self.new_op(node);
            self.complete_op(node, old);
            if let Some(qp) = self.qps[node as usize].as_mut() {
                qp.backlog.push_back((message, seq, op));
            }
        }
    }

    /// Without an acknowledgement for `control_resend_interval`: posts the
    /// unacknowledged messages again, in order.
    fn resend_if_due(&mut self, node: NodeId) {
        let now = self.now;
        let due = self
            .qps
            .get(node as usize)
            .and_then(|q| q.as_ref())
            .and_then(|qp| qp.stream.resend_at)
            .is_some_and(|t| now >= t);
        if due {
            self.requeue_control(node, false);
            self.flush_backlog(node);
        }
    }

    /// STREAM_ACK from `node` for `stream`: drops the messages numbered below `next`; with
    /// `restart` starts a new stream with every message not acknowledged yet. With
    /// `resend` (the node dropped later messages behind a gap at `next`) the
    /// unacknowledged messages go again in this poll, when the SEND that carried `next`
    /// has completed (not while it may still be on its way, so a burst of such
    /// acknowledgements resends once). An acknowledgement of an earlier stream changes
    /// nothing.
    fn on_stream_ack(&mut self, node: NodeId, stream: u32, next: u32, restart: bool, resend: bool) {
        let Some(qp) = self.qps.get_mut(node as usize).and_then(|q| q.as_mut()) else {
            return;
        };
        let st = &mut qp.stream;
        if stream != st.id {
            return;
        }
        if restart {
            self.requeue_control(node, true);
            return;
        }
        while let Some(&(seq, _, _)) = st.unacked.front() {
            let ahead = next.wrapping_sub(seq) & SEQUENCE_MASK;
            if ahead == 0 || ahead > SEQUENCE_MASK / 2 {
                break;
            }
            st.unacked.pop_front();
        }
        st.resend_at = st.unacked.iter().filter_map(|e| e.2).min();
        let gap_at_sent_front = st
            .unacked
            .front()
            .is_some_and(|&(seq, _, resend_at)| seq == next && resend_at.is_some());
        if resend && gap_at_sent_front {
            // `Driver::poll` resends what is due after the completions it took.
            st.resend_at = Some(self.now);
            self.stats.control_fast_resends += 1;
        }
    }

    fn flush_backlog(&mut self, node: NodeId) {
        let size = 1u32 << self.config.sq_log2;
        loop {
            let Some(qp) = self.qps.get_mut(node as usize).and_then(|q| q.as_mut()) else {
                return;
            };
            if (qp.sq_pi.wrapping_sub(qp.sq_ci) & PSN_MASK) >= size || qp.backlog.is_empty() {
                return;
            }
            // A STREAM_ACK due to the node rides with this SEND.
            if qp.ack_due.is_some() {
                if let Some(ack) = self.take_ack(node) {
                    let op = self.new_op(node);
                    if let Some(qp) = self.qps[node as usize].as_mut() {
                        qp.backlog.push_front((ack, None, op));
                    }
                }
                continue;
            }
            // Everything queued for the node that fits one receive buffer goes in one SEND.
            let first_seq = qp
                .backlog
                .iter()
                .find_map(|&(_, seq, _)| seq)
                .unwrap_or(qp.stream.next_seq);
            let Some((bytes, n)) = ControlSend::pack(
                qp.stream.id,
                first_seq,
                qp.backlog.iter().map(|(m, _, _)| m),
            )
            .into_iter()
            .next() else {
                return;
            };
            let mut ops = Vec::with_capacity(n);
            let mut count = 0;
            for (message, seq, op) in qp.backlog.drain(..n) {
                ops.push(op);
                if let Some(seq) = seq {
                    qp.stream.unacked.push_back((seq, message, None));
                    count += 1;
                }
            }
            let kind = SendKind::Control {
                stream: qp.stream.id,
                first: first_seq,
                count,
            };
            // A short SEND goes inline: the NIC reads no payload after the WQE.
            let wqe = match Wqe::send_inline(&bytes, Some(CONTROL_IMMEDIATE)) {
                Some(wqe) => wqe,
                None => {
                    let slot = qp.sq_pi % size;
                    let staging = qp.staging_base + slot * MAX_CONTROL_BYTES as u32;
                    self.nic.mem_write(staging as u64, &bytes);
                    Wqe {
                        opcode: WqeOpcode::SendImmediate as u8,
                        length: bytes.len() as u32,
                        local_addr: staging,
                        immediate: CONTROL_IMMEDIATE,
                        ..Wqe::default()
                    }
                }
            };
            self.stats.control_bundled += n as u64 - 1;
            self.post_wqe(node, wqe, kind, ops);
        }
    }

    /// Sends `message` to every node that receives TPT updates.
    pub(crate) fn broadcast_update(&mut self, message: ControlMessage) {
        let to: Vec<usize> = self.updates.iter_ones().collect();
        for x in to {
            self.send_control(x as NodeId, message.clone());
        }
    }

    /// Flushes the queue pair to `node`, which is barred (a barring hardware NACK) or
    /// announced a restart (BOOTING or PROBE): its send side is reset to a start PSN far
    /// from every PSN it used (so the restarted node adopts it, and a late answer to an old
    /// request is recognised as foreign), and a NOP WQE ([`NOP_OPCODE`]) is posted behind
    /// the reset. Every operation still outstanding to `node` in the ring completes with
    /// [`CompletionStatus::Flushed`] when the NOP completes: the NIC may have committed a
    /// message just before the reset and still be reading its payload from the
    /// application's buffer, and its transmit path takes the NOP only after that (one WQE
    /// at a time). The control messages among them are not lost: they count as sent, and
    /// go again if no acknowledgement comes; the control backlog is posted behind the NOP
    /// (with new operation numbers: the fence does not wait for it). Nothing else sent before is
    /// retransmitted after the reset; what is already on the wire reaches `node` before anything this queue pair
    /// sends next (the fabric keeps each source-destination pair in order), so it arrives
    /// while `node` still has RDMA disabled and is refused there. Without the flush the
    /// fence waits for each request to be refused in turn, one round trip each over a link
    /// the other nodes keep busy, plus a retry timeout for requests the restart cut off.
    fn flush_queue_pair(&mut self, node: NodeId) {
        let size = 1u32 << self.config.sq_log2;
        // Control messages are not flushed: those in the ring count as sent (they are sent
        // again if no acknowledgement comes), the backlog goes out behind the NOP with new
        // operation numbers (the fence does not wait for it).
        let stream = self
            .qps
            .get(node as usize)
            .and_then(|q| q.as_ref())
            .map(|q| q.stream.id);
        if let Some(stream) = stream {
            self.control_sent(node, stream, ACK_WAIT_INTERVALS, |_| true);
        }
        self.reop_backlog(node);
        let Some(qp) = self.qps.get_mut(node as usize).and_then(|q| q.as_mut()) else {
            return;
        };
        let (start, end) = (qp.sq_ci, qp.sq_pi);
        // Nothing since the last reset but its NOP (barring and fencing in one go): done.
        let mut i = start;
        let mut only_fences = true;
        while i != end && only_fences {
            only_fences = matches!(
                qp.slots[(i % size) as usize],
                Some(SendRecord {
                    kind: SendKind::FlushFence { .. },
                    ..
                })
            );
            i = i.wrapping_add(1) & PSN_MASK;
        }
        if only_fences {
            if !self.defer_control {
                self.flush_backlog(node);
            }
            return;
        }
        // A golden-ratio step through the PSN space: far from this queue pair's last PSNs,
        // and repeated flushes keep their starts far apart (with a step of half the space
        // the second flush came back next to the first one's old PSNs).
        let fresh = end.wrapping_add(FLUSH_PSN_STEP) & PSN_MASK;
        let mut flushed_app = vec![];
        let mut flushed_local = vec![];
        let mut ops = vec![];
        let mut count = 0;
        let mut i = start;
        while i != end {
            if let Some(r) = qp.slots[(i % size) as usize].take() {
                match r.kind {
                    SendKind::App { wr_id, opcode } => {
                        flushed_app.push((wr_id, opcode));
                        count += 1;
                    }
                    SendKind::Local { wr_id, work } => flushed_local.push((wr_id, work)),
                    // An earlier flush's NOP: what it waited for now waits for this one.
                    SendKind::FlushFence { app, local } => {
                        flushed_app.extend(app);
                        flushed_local.extend(local);
                    }
                    SendKind::Control { .. } => count += 1,
                }
                ops.extend(r.ops);
            }
            i = i.wrapping_add(1) & PSN_MASK;
        }
        (qp.sq_pi, qp.sq_ci) = (fresh, fresh);
        if qp.flushed.len() == FLUSHES_REMEMBERED {
            qp.flushed.pop_front();
        }
        qp.flushed.push_back((start, end));
        self.csr(
            csr::qp(node as usize, csr::QP_CTRL),
            csr::QP_CTRL_ENABLE
                | csr::QP_CTRL_SEND_RESET
                | (fresh as u64) << csr::QP_CTRL_START_PSN_SHIFT,
        );
        self.stats.flushes += 1;
        self.stats.flushed_operations += count as u64;
        let nop = Wqe {
            opcode: NOP_OPCODE,
            ..Wqe::default()
        };
        self.post_wqe(
            node,
            nop,
            SendKind::FlushFence {
                app: flushed_app,
                local: flushed_local,
            },
            ops,
        );
        if !self.defer_control {
            self.flush_backlog(node);
        }
    }

    fn complete_op(&mut self, node: NodeId, op: u64) {
        let n = node as usize;
        self.outstanding[n].remove(&op);
        self.check_fence(node);
        self.check_remove_fences(node);
    }

    /// Answers TPT_REMOVE_DONE for each TPT_REMOVE from `node` whose fence has drained
    /// (every operation issued to `node` before it arrived has completed).
    fn check_remove_fences(&mut self, node: NodeId) {
        let n = node as usize;
        while let Some((target, _)) = self.remove_fences[n].front() {
            if self.outstanding[n].first().is_some_and(|o| o < target) {
                return;
            }
            let Some((_, handles)) = self.remove_fences[n].pop_front() else {
                return;
            };
            if let Ok(done) = TptRemove::new(handles) {
                self.send_control(node, ControlMessage::TptRemoveDone(done));
            }
        }
    }

    /// The driver's part of a control message before the membership machine sees it:
    /// the deregistration fence ([`crate::dereg`]). A TPT_REMOVE from `from` removes the
    /// handles from its remote part whatever the membership state (removal is always
    /// safe; the machine may apply it again) and starts the fence its TPT_REMOVE_DONE
    /// waits for; a TPT_REMOVE_DONE confirms this node's deregistrations.
    fn on_dereg_control(&mut self, from: NodeId, message: &ControlMessage) {
        let n = from as usize;
        if n >= self.remove_fences.len() || from == self.node {
            return;
        }
        match message {
            ControlMessage::TptRemove(remove) => {
                let _ = self.tpt.apply_remote_remove(from, remove.handles());
                let target = self.next_op[n];
                self.remove_fences[n].push_back((target, remove.handles().to_vec()));
                self.check_remove_fences(from);
            }
            ControlMessage::TptRemoveDone(done) => {
                for entry in self.dereg.confirm(from, done.handles()) {
                    self.ready.push_back(Completion::Deregistered { entry });
                }
            }
            _ => {}
        }
    }

    /// Sends TPT_REMOVE again to the peers that have not confirmed a deregistration for
    /// [`Protocol::resend_interval`], unless a TPT_REMOVE to that peer is still queued or
    /// unacknowledged in its control stream: the stream delivers that one, and under load
    /// (a control SEND waits behind the data in the send queue) resending every interval
    /// would pile up copies, each answered with its own TPT_REMOVE_DONE.
    fn resend_removes(&mut self, now: Tick) {
        let next = now.saturating_add(self.config.protocol.resend_interval());
        for (node, handles) in self.dereg.due(now, next) {
            if self.remove_in_stream(node) {
                continue;
            }
            for chunk in handles.chunks(crate::control::MAX_REMOVE_HANDLES) {
                if let Ok(remove) = TptRemove::new(chunk.to_vec()) {
                    self.send_control(node, ControlMessage::TptRemove(remove));
                }
            }
        }
    }

    /// Whether a TPT_REMOVE to `node` waits in its backlog or for its acknowledgement.
    fn remove_in_stream(&self, node: NodeId) -> bool {
        let is_remove = |m: &ControlMessage| matches!(m, ControlMessage::TptRemove(_));
        self.qps
            .get(node as usize)
            .and_then(|q| q.as_ref())
            .is_some_and(|qp| {
                qp.backlog.iter().any(|(m, _, _)| is_remove(m))
                    || qp.stream.unacked.iter().any(|(_, m, _)| is_remove(m))
            })
    }

    fn check_fence(&mut self, node: NodeId) {
        let n = node as usize;
        if let Some(target) = self.fence[n] {
            if self.outstanding[n].first().is_none_or(|&o| o >= target) {
                self.fence[n] = None;
                self.events.push_back(Event::FenceDrained { node });
            }
        }
    }

    fn on_cqe(&mut self, cqe: &Cqe, rq_doorbells: &mut BitVec) -> Result<(), DriverError> {
        let q = cqe.qp as usize;
        if q >= self.qps.len() || self.qps[q].is_none() {
            return Err(DriverError::UnknownQueuePair { qp: cqe.qp });
        }
        let node = q as NodeId;
        let status = CompletionStatus::from_code(cqe.status);
        if cqe.is_receive {
            return self.on_receive(q, cqe, status, rq_doorbells);
        }
        let size = 1u32 << self.config.sq_log2;
        let Some(qp) = self.qps[q].as_mut() else {
            return Ok(());
        };
        if cqe.wqe_index != qp.sq_ci {
            if qp.flushed.iter().any(|&(start, end)| {
                (cqe.wqe_index.wrapping_sub(start) & PSN_MASK)
                    < (end.wrapping_sub(start) & PSN_MASK)
            }) {
                // The NIC was finishing this completion when the flush reset the send side.
                self.stats.late_flushed_completions += 1;
                return Ok(());
            }
            return Err(DriverError::CompletionOutOfOrder {
                qp: cqe.qp,
                expected: qp.sq_ci,
                got: cqe.wqe_index,
            });
        }
        let record = qp.slots[(qp.sq_ci % size) as usize].take();
        qp.sq_ci = qp.sq_ci.wrapping_add(1) & PSN_MASK;
        let Some(record) = record else {
            return Err(DriverError::CompletionOutOfOrder {
                qp: cqe.qp,
                expected: qp.sq_ci,
                got: cqe.wqe_index,
            });
        };
        for &op in &record.ops {
            self.complete_op(node, op);
        }
        match status {
            CompletionStatus::Remote(syndrome) => self.events.push_back(Event::HardwareNack {
                from: node,
                syndrome,
            }),
            // The peer's NIC restarted its PSN sequence (it rebooted): bar it until it
            // rejoins, as for a barring NACK.
            CompletionStatus::ResponderRestarted => self
                .events
                .push_back(Event::ResponderRestarted { from: node }),
            _ => {}
        }
        match record.kind {
            SendKind::Control {
                stream,
                first,
                count,
            } => {
                // Lost or not, its messages go again if their acknowledgement does not come.
                if status != CompletionStatus::Success {
                    self.stats.control_send_errors += 1;
                }
                let intervals = if status == CompletionStatus::Success {
                    ACK_WAIT_INTERVALS
                } else {
                    1
                };
                self.control_sent(node, stream, intervals, |seq| {
                    seq.wrapping_sub(first) & SEQUENCE_MASK < count
                });
            }
            SendKind::App { wr_id, opcode } => self.ready.push_back(Completion::Send {
                wr_id,
                node,
                opcode,
                status,
            }),
            SendKind::Local { wr_id, work } => self.complete_local(node, wr_id, work, status),
            SendKind::FlushFence { app, local } => {
                for (wr_id, opcode) in app {
                    self.ready.push_back(Completion::Send {
                        wr_id,
                        node,
                        opcode,
                        status: CompletionStatus::Flushed,
                    });
                }
                for (wr_id, work) in local {
                    self.complete_local(node, wr_id, work, CompletionStatus::Flushed);
                }
            }
        }
        self.flush_backlog(node);
        Ok(())
    }

    /// SEND of sequenced messages of `stream` from `node` received: a STREAM_ACK is due,
    /// at once if it had to drop some (`urgent`: the sender is resending them, or must),
    /// else within [`ACK_DELAY_INTERVALS`] resend intervals. It rides with the next control
    /// SEND to `node`, or goes alone when due: a delayed acknowledgement, so most go with
    /// the answers the protocol sends anyway, and a burst of SENDs takes one.
    fn ack_stream(&mut self, node: NodeId, stream: u32, urgent: bool, gap: bool) {
        let delay = if urgent {
            0
        } else {
            self.config
                .control_resend_interval
                .saturating_mul(ACK_DELAY_INTERVALS)
        };
        let due = self.now.saturating_add(delay);
        if let Some(qp) = self.qps.get_mut(node as usize).and_then(|q| q.as_mut()) {
            let (by, gap) = match qp.ack_due {
                Some(a) if a.stream == stream => (a.by.min(due), a.gap || gap),
                Some(a) => (a.by.min(due), gap),
                None => (due, gap),
            };
            qp.ack_due = Some(AckDue { stream, by, gap });
        }
    }

    /// The STREAM_ACK due to `node`, if any (it is no longer due after this).
    fn take_ack(&mut self, node: NodeId) -> Option<ControlMessage> {
        let qp = self.qps.get_mut(node as usize).and_then(|q| q.as_mut())?;
        let AckDue { stream, gap, .. } = qp.ack_due.take()?;
        Some(match qp.rx_stream {
            Some((s, next)) if s == stream => ControlMessage::StreamAck {
                stream,
                next,
                restart: false,
                resend: gap,
            },
            _ => ControlMessage::StreamAck {
                stream,
                next: 0,
                restart: true,
                resend: false,
            },
        })
    }

    /// Sends the STREAM_ACK due to `node` alone once its time has come.
    fn ack_if_due(&mut self, node: NodeId) {
        let now = self.now;
        let due = self
            .qps
            .get(node as usize)
            .and_then(|q| q.as_ref())
            .and_then(|qp| qp.ack_due)
            .is_some_and(|a| now >= a.by);
        if due {
            if let Some(ack) = self.take_ack(node) {
                self.send_control(node, ack);
            }
        }
    }

    /// Whether sequenced message `seq` of `stream` from the peer of queue pair `q` is
    /// taken (the next one of the stream it follows, or the start of another stream), and
    /// follows it; counts what is dropped.
    fn take_sequenced(&mut self, q: usize, stream: u32, seq: u32) -> bool {
        let Some(qp) = self.qps[q].as_mut() else {
            return false;
        };
        match qp.rx_stream {
            Some((s, next)) if s == stream => {
                if seq == next {
                    qp.rx_stream = Some((s, (next + 1) & SEQUENCE_MASK));
                    return true;
                }
                // Behind `next` (within half the number space): taken before.
                if next.wrapping_sub(seq) & SEQUENCE_MASK <= SEQUENCE_MASK / 2 {
                    self.stats.control_duplicates += 1;
                } else {
                    self.stats.control_out_of_order += 1;
                }
                false
            }
            _ if seq == 0 => {
                qp.rx_stream = Some((stream, 1));
                true
            }
            _ => {
                self.stats.control_out_of_order += 1;
                false
            }
        }
    }

    fn on_receive(
        &mut self,
        q: usize,
        cqe: &Cqe,
        status: CompletionStatus,
        rq_doorbells: &mut BitVec,
    ) -> Result<(), DriverError> {
        let node = q as NodeId;
        let rq_size = 1u32 << self.config.rq_log2;
        let bytes = self.config.recv_buffer_bytes;
        if cqe.wr_id >= rq_size as u64 {
            return Err(DriverError::UnknownReceiveBuffer {
                qp: cqe.qp,
                wr_id: cqe.wr_id,
            });
        }
        let slot = cqe.wr_id as u32;
        let is_control = cqe.has_immediate
            && cqe.immediate == CONTROL_IMMEDIATE
            && cqe.opcode == WqeOpcode::SendImmediate as u8;
        if is_control {
            let Some(qp) = self.qps[q].as_ref() else {
                return Ok(());
            };
            let len = (cqe.byte_count.min(bytes)) as usize;
            let mut buf = vec![0u8; len];
            let addr = qp.bounce_base as u64 + (slot * bytes) as u64;
            self.nic.mem_read(addr, &mut buf);
            match (status, ControlSend::decode(&buf)) {
                (CompletionStatus::Success, Ok(send)) => {
                    let seqs: Vec<Option<u32>> = send.sequence_numbers().collect();
                    let sequenced = seqs.iter().any(|s| s.is_some());
                    let duplicates_before = self.stats.control_duplicates;
                    let out_of_order_before = self.stats.control_out_of_order;
                    for (message, seq) in send.messages.into_iter().zip(seqs) {
                        if let ControlMessage::StreamAck {
                            stream,
                            next,
                            restart,
                            resend,
                        } = message
                        {
                            self.on_stream_ack(node, stream, next, restart, resend);
                        } else if seq.is_none_or(|seq| self.take_sequenced(q, send.stream, seq)) {
                            self.events.push_back(Event::ControlReceived {
                                from: node,
                                message,
                            })
                        }
                    }
                    if sequenced {
                        // Something dropped: the sender is resending (duplicates), or must
                        // (behind a gap: the acknowledgement asks it to).
                        let gap = self.stats.control_out_of_order != out_of_order_before;
                        let urgent = gap || self.stats.control_duplicates != duplicates_before;
                        self.ack_stream(node, send.stream, urgent, gap);
                    }
                }
                _ => self.stats.control_malformed += 1,
            }
            if let Some(qp) = self.qps[q].as_mut() {
                qp.free_bounce.push(slot);
            }
            self.post_bounce(q);
            rq_doorbells.set(q, true);
            return Ok(());
        }
        let copied = self.qps[q].as_ref().map_or(0, |qp| {
            qp.held
                .iter()
                .filter(|h| matches!(h.at, Held::Copied(_)))
                .count()
        });
        let waiting = self.qps[q]
            .as_ref()
            .is_some_and(|qp| qp.app_recvs.is_empty());
        let at = if waiting && copied < HELD_COPIED_MAX {
            // No application buffer yet: copy the message out so that its bounce buffer
            // goes back now (held messages must not starve the control messages).
            let Some(qp) = self.qps[q].as_ref() else {
                return Ok(());
            };
            let n = cqe.byte_count.min(bytes) as usize;
            let mut data = vec![0u8; n];
            let addr = qp.bounce_base as u64 + (slot * bytes) as u64;
            self.nic.mem_read(addr, &mut data);
            if let Some(qp) = self.qps[q].as_mut() {
                qp.free_bounce.push(slot);
            }
            self.post_bounce(q);
            rq_doorbells.set(q, true);
            Held::Copied(data)
        } else {
            Held::Bounce(slot)
        };
        let held = HeldRecv {
            at,
            opcode: cqe.opcode,
            byte_count: cqe.byte_count,
            immediate: cqe.has_immediate.then_some(cqe.immediate),
            status,
        };
        if let Some(qp) = self.qps[q].as_mut() {
            qp.held.push_back(held);
        }
        self.deliver_held(node, rq_doorbells);
        Ok(())
    }

    /// Copies held application messages from `node` into posted application buffers.
    pub(crate) fn deliver_held(&mut self, node: NodeId, rq_doorbells: &mut BitVec) {
        let q = node as usize;
        let bytes = self.config.recv_buffer_bytes;
        loop {
            let Some(qp) = self.qps[q].as_mut() else {
                return;
            };
            if qp.held.is_empty() || qp.app_recvs.is_empty() {
                return;
            }
            let (Some(h), Some(r)) = (qp.held.pop_front(), qp.app_recvs.pop_front()) else {
                return;
            };
            let bounce_base = qp.bounce_base as u64;
            let opcode = WqeOpcode::from_code(h.opcode).unwrap_or(WqeOpcode::Send);
            let carries_data = matches!(opcode, WqeOpcode::Send | WqeOpcode::SendImmediate);
            let mut status = h.status;
            if carries_data && status == CompletionStatus::Success {
                let n = h.byte_count.min(r.length).min(bytes) as usize;
                let buf = match &h.at {
                    Held::Copied(data) => data[..n.min(data.len())].to_vec(),
                    Held::Bounce(slot) => {
                        let mut buf = vec![0u8; n];
                        self.nic
                            .mem_read(bounce_base + (slot * bytes) as u64, &mut buf);
                        buf
                    }
                };
                self.nic.mem_write(r.physical as u64, &buf);
                if h.byte_count > r.length {
                    status = CompletionStatus::LocalLengthError;
                }
            }
            self.ready.push_back(Completion::Receive {
                wr_id: r.wr_id,
                node,
                opcode,
                byte_count: h.byte_count,
                immediate: h.immediate,
                status,
            });
            if let Held::Bounce(slot) = h.at {
                if let Some(qp) = self.qps[q].as_mut() {
                    qp.free_bounce.push(slot);
                }
                self.post_bounce(q);
                if q < rq_doorbells.len() {
                    rq_doorbells.set(q, true);
                }
            }
        }
    }

    /// Runs the protocol on the queued events. Control messages its actions send are
    /// queued and posted at the end, so what goes to one node leaves bundled (BOOTING with
    /// the TPT push behind it, a BOOTING answer with the fence it waited for).
    pub(crate) fn run(&mut self, now: Tick) -> Result<(), DriverError> {
        self.defer_control = true;
        let result = self.run_events(now);
        self.resend_removes(now);
        self.defer_control = false;
        for node in 0..self.qps.len() {
            if self.qps[node]
                .as_ref()
                .is_some_and(|qp| !qp.backlog.is_empty())
            {
                self.flush_backlog(node as NodeId);
            }
        }
        if self.boot_pending {
            self.boot_pending = false;
            for q in 0..self.config.node_count {
                self.program_queue_pair(q);
            }
        }
        result
    }

    /// Hands the queued events to the protocol and carries out its actions (control
    /// messages only queue while `defer_control` is set).
    fn run_events(&mut self, now: Tick) -> Result<(), DriverError> {
        let mut result = Ok(());
        'events: while let Some(event) = self.events.pop_front() {
            if let Event::ControlReceived { from, message } = &event {
                self.on_dereg_control(*from, message);
            }
            let actions = match self.membership.handle(now, event) {
                Ok(a) => a,
                Err(e) => {
                    result = Err(e.into());
                    break;
                }
            };
            for a in actions {
                if let Err(e) = self.act(a) {
                    result = Err(e);
                    break 'events;
                }
            }
        }
        result
    }

    fn act(&mut self, action: Action) -> Result<(), DriverError> {
        match action {
            Action::SetEnables { send_recv, rdma } => {
                self.rdma_enabled = rdma;
                let v = if send_recv { csr::ENABLE_SEND_RECV } else { 0 }
                    | if rdma { csr::ENABLE_RDMA } else { 0 };
                self.csr(csr::ENABLE, v);
            }
            Action::Send { to, message } => self.send_control(to, message),
            Action::ClearRemoteTpt { node } => {
                self.tpt.clear_remote(node)?;
            }
            Action::StopTptUpdates { node } => self.updates.set(node as usize, false),
            Action::ResumeTptUpdates { node } => self.updates.set(node as usize, true),
            Action::PushLocalTpt { node } => {
                // Clear first: whatever the node's copy held (an update it took before
                // the updates to it stopped, say), it ends up equal to the part.
                self.send_control(node, ControlMessage::TptClear);
                let entries = self.published_local_entries();
                // Local entries are valid and batches are sized: this cannot fail.
                for m in TptUpdate::batches(&entries).unwrap_or_default() {
                    self.send_control(node, m);
                }
            }
            Action::StartFence { node } => {
                // Every operation numbered below `next_op` was issued before the fence.
                self.fence[node as usize] = Some(self.next_op[node as usize]);
                self.flush_queue_pair(node);
                self.check_fence(node);
            }
            Action::Bar { node } => {
                self.barred.set(node as usize, true);
                // Nothing new goes to a barred node until it rejoins, and what is still
                // queued to it would only be refused there one request at a time (or be
                // dropped unanswered while its queue pair is still disabled), filling
                // the fabric towards it: flush it now rather than at its BOOTING.
                self.flush_queue_pair(node);
            }
            Action::Unbar { node } => self.barred.set(node as usize, false),
            Action::SetTimer { at } => self.deadline = Some(at),
            Action::ApplyTptUpdate { from, update } => {
                if self
                    .tpt
                    .apply_remote_update(from, update.entries())
                    .is_err()
                {
                    self.stats.tpt_update_refused += 1;
                }
            }
            Action::ApplyTptRemove { from, remove } => {
                // Removal is idempotent; `from` was checked by the membership machine.
                let _ = self.tpt.apply_remote_remove(from, remove.handles());
            }
            Action::RejoinComplete => self.joined = true,
        }
        Ok(())
    }
}
