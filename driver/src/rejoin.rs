//! The rejoin protocol of source document 000 (Figs. 4, 7, 8) as a pure state machine.
//!
//! No I/O and no clock: the caller feeds [`Event`]s, each with the current time, and carries
//! out the [`Action`]s returned, in order. The same machine runs in the driver
//! ([`crate::driver`]) and in the multi-node simulation of the tests.
//!
//! # The protocol
//!
//! **Booting node** (Fig. 7). At [`Event::Boot`] the machine enables SEND/RECEIVE, disables
//! RDMA, clears the response bitmap (one bit per possible node, `bitvec`) and sends BOOTING
//! to every other node. An answer from node X is: an ACK echoing this boot's incarnation, or a
//! hardware NACK that means X is not there (see [`nack_bars`]). A BOOTING from X is no
//! answer, also when the two nodes boot together and the BOOTINGs cross (000 Fig. 7 S17
//! counts it; see "Decisions" below): each node handles the other's BOOTING as a peer and
//! answers it with ACK. Each node is counted once. On [`Event::Timeout`]
//! (`resend_timeout` without a new answer: each answer restarts the timer, so a broadcast
//! to many nodes is not resent to the last ones while their answers are on the way)
//! BOOTING is sent again to the nodes still missing. When every node has answered, RDMA is
//! enabled and RDMA_READY goes to every node that answered with ACK (and to every node
//! whose BOOTING or PROBE this node ACKed while joining).
//!
//! **Peer** (Fig. 8). On BOOTING from N (also while booting itself, and again for every new
//! BOOTING from N: a node that reboots restarts its handling) the machine clears N's remote
//! TPT part, stops TPT updates to N, bars N and starts a fence; only when the caller reports
//! [`Event::FenceDrained`] (every operation issued to N before has completed, ACKed or
//! NACKed) does it send ACK to N. On RDMA_READY from N it unbars N, resumes TPT updates to
//! N and pushes its local TPT part to N.
//!
//! **Hardware NACK.** A NACK with a syndrome of [`nack_bars`] bars the node (and clears its
//! TPT part, stops updates to it) until it rejoins: BOOTING then RDMA_READY again. So does
//! a send completion with status RESPONDER_RESTARTED ([`Event::ResponderRestarted`]): the
//! node's NIC restarted its PSN sequence, i.e. it rebooted.
//!
//! # Decisions where 000 is silent
//!
//! - *Initial state.* At boot every other node is barred and receives no TPT updates; the
//!   caller starts in that state (the machine emits [`Action::Unbar`] and
//!   [`Action::ResumeTptUpdates`] as nodes are admitted, and the barring actions only on a
//!   change).
//! - *Incarnations.* BOOTING and RDMA_READY carry the sender's incarnation (a number the
//!   caller draws anew at every boot); an ACK echoes the incarnation of the BOOTING it
//!   answers. An ACK for another incarnation is ignored: without this, an ACK that a peer
//!   sent to the node's previous boot, still in flight when it rebooted, would count as an
//!   answer while the peer's stale RDMA writes queue behind it.
//! - *ACK says whether the sender has joined.* A booting node admits (unbars, pushes its TPT
//!   to) a node that answered ACK only if that node has itself finished joining; a node that
//!   is still joining is admitted on its RDMA_READY. So a node that ACKs while joining
//!   owes that node RDMA_READY at its join, also when the ACK answered a PROBE and the
//!   prober counts as NACKed (its BOOTING to the prober found the link down).
//! - *A crossing BOOTING is no answer* (unlike 000 Fig. 7 S17). It cannot tell which boot
//!   of this node it was sent to: a BOOTING that X sent while this node was off (or in an
//!   earlier boot), retransmitted by X's NIC and taken by this boot's restarted responder,
//!   arrives after X has joined and admitted this node's earlier boot. X then still holds
//!   that boot's TPT, and its RDMA requests with it queue behind the old BOOTING; had it
//!   counted as an answer, this node would enable RDMA before X even saw its new BOOTING,
//!   and they would land (the model check found it: docs/rejoin-model-check.md). Only X's
//!   ACK to this boot says X has fenced. When two nodes boot together each ACKs the other's
//!   BOOTING after its fence (quick: nothing was issued), so joining costs one more hop.
//! - *TPT updates are accepted from X only* after X's BOOTING or after X's ACK to this boot
//!   (the part is cleared at both): everything X sent before that was meant for an earlier
//!   boot, and X's updates stop between its ACK and its push, so an earlier copy could hold
//!   regions X has since deregistered. They are refused again when X is found down.
//!   These rules guard against stale entries being *added*; a TPT_REMOVE is applied
//!   whatever the state (removal is always safe), by the driver before the machine sees
//!   it, and answered with TPT_REMOVE_DONE after a fence of its own ([`crate::dereg`]).
//! - *TPT push.* A booting node pushes its local part to every node right behind each
//!   BOOTING it sends (the first and every resend: the node clears the booting node's part
//!   at each BOOTING, then accepts updates from it), and sends it updates from then on; the
//!   driver sends BOOTING and the push in one bundle (one SEND; see [`crate::control`]).
//!   Holding the entries early is safe: the node cannot use them before RDMA_READY unbars
//!   the booting node, and the fabric keeps the pair's order, so nothing of an earlier boot
//!   can overtake them. It moves the push out of the rejoin's critical path: the last
//!   answers come in while the NIC is idle on the way out, after them only RDMA_READY goes
//!   (short enough to go inline), and no node needs a second message. A node whose updates
//!   were stopped (it NACKed, or its own BOOTING crossed ours) gets the push again when it
//!   is admitted, queued *before* its RDMA_READY so both go in one bundle. A joined node
//!   pushes to a node once that node is admitted. A push starts with TPT_CLEAR: a node
//!   admitted again after its updates stopped may still hold entries this node has
//!   deregistered since (it took them before the stop, and the ACK that re-admits it can
//!   be one it sent before it was found down), and the clear drops them.
//! - *RDMA_READY while fencing* is remembered and applied right after the ACK is sent.
//!   One of another incarnation than the BOOTING (or PROBE) being handled comes from a
//!   new boot of the node whose BOOTING was lost (it counted this node's as its answer, so
//!   no other comes): the handling starts over for that boot, as for a PROBE but keeping
//!   the node's part (its push came before, behind a TPT_CLEAR), and the RDMA_READY is
//!   remembered.
//! - *An ACK saying "joined" from a node mid-rejoin with this one* (this node handled its
//!   BOOTING or PROBE and waits for its RDMA_READY) stands for that RDMA_READY: the node
//!   has RDMA enabled and has fenced for this boot. A prober sends RDMA_READY only on the
//!   ACK to its probe; if that ACK is lost and the prober answers this node's BOOTING
//!   instead, no RDMA_READY comes.
//! - *A node that never comes back* answers with the fabric's PORT_DOWN NACK: it counts as
//!   answered, is not sent RDMA_READY and stays barred until it boots. A node that answers
//!   nothing at all is asked again at every timeout; with
//!   [`RejoinConfig::give_up_after`] set it is counted as a NACK after that many rounds
//!   (default: never, as in 000: RDMA waits until every node has answered).
//! - *Probing.* After joining, the machine keeps sending PROBE at every timeout to the
//!   nodes that NACKed (its boot or later operations), until they answer with ACK or
//!   BOOTING ([`RejoinConfig::probe_down_nodes`]); a PROBE of theirs (both found the other
//!   down) is no answer, nor is an RDMA_READY, and an ACK may be lost. A BOOTING from the
//!   node ends the probing; if a PROBE is still unanswered then, the ACK to that BOOTING
//!   goes with an RDMA_READY: the node may handle the PROBE after its BOOTING and wait for
//!   RDMA_READY, and the ACK (joined) that would stand for it is a datagram that may be
//!   lost (the model check found a node that kept its peer barred for ever). Each PROBE stops
//!   the TPT updates to the node (it clears this node's part) until its ACK admits it
//!   again, with a push. A node receiving PROBE handles it as a
//!   BOOTING (clear, stop updates, bar, fence, ACK; RDMA_READY admits the sender again) but
//!   a booting node does not count it as an answer: unlike a BOOTING, its sender has not
//!   rebooted and may still have writes in flight from before the receiver's boot (the
//!   simulation found exactly this when probes were plain BOOTINGs). 000 treats a hardware
//!   NACK as "that node's NIC is off or uninitialised": such a node boots and sends BOOTING
//!   itself. The probe also re-admits a node that was only cut off (a link down and up
//!   again) and so never rebooted. Such a node is outside 000's model: while it was cut
//!   off it may have missed a reboot of this node and still hold TPT entries of the boot
//!   that is gone. The driver closes that hole on the cut-off node's side: at every change
//!   of its own link it forgets every remote TPT part, flushes, and starts this machine
//!   again with a new incarnation (`Driver::link_changed`), so it rejoins like a booting
//!   node.

use bitvec::prelude::*;
use nic_abi::Syndrome;
use thiserror::Error;

use crate::control::{ControlMessage, TptRemove, TptUpdate};
use crate::NodeId;

/// Time, in whatever unit the caller uses consistently (cycles, microseconds, ...).
pub type Tick = u64;

/// An input of a membership machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The driver has started: `node_count` nodes (0..node_count, at most the configured
    /// maximum) may exist; `incarnation` names this boot (draw it anew at every boot).
    Boot {
        /// Nodes that may exist, this one included.
        node_count: usize,
        /// This boot's incarnation number.
        incarnation: u32,
    },
    /// A control message arrived from `from`.
    ControlReceived {
        /// The sender.
        from: NodeId,
        /// The message.
        message: ControlMessage,
    },
    /// An operation this node sent to `from` completed with a NACK.
    HardwareNack {
        /// The node the operation was for.
        from: NodeId,
        /// The NACK's syndrome.
        syndrome: Syndrome,
    },
    /// An operation this node sent to `from` completed with status RESPONDER_RESTARTED
    /// (0x05): `from`'s NIC answered a later message of the queue pair after restarting its
    /// PSN sequence (its queue pair was reset: the node rebooted), so the operation was lost
    /// with its previous incarnation. Handled like a barring NACK ([`nack_bars`]): the node
    /// is barred until it rejoins.
    ResponderRestarted {
        /// The node the operation was for.
        from: NodeId,
    },
    /// The timer set by the last [`Action::SetTimer`] has expired (an early or stale timeout
    /// is ignored).
    Timeout,
    /// Every operation issued to `node` before the last [`Action::StartFence`] for it has
    /// completed.
    FenceDrained {
        /// The node fenced.
        node: NodeId,
    },
}

/// An output of a membership machine, to be carried out by the caller in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Write the NIC's `ENABLE` register.
    SetEnables {
        /// Accept SEND/RECEIVE requests.
        send_recv: bool,
        /// Accept RDMA requests.
        rdma: bool,
    },
    /// Send a control message to `to` (on its queue pair, behind earlier operations).
    Send {
        /// The destination.
        to: NodeId,
        /// The message.
        message: ControlMessage,
    },
    /// Drop every entry of `node`'s remote TPT part.
    ClearRemoteTpt {
        /// The node.
        node: NodeId,
    },
    /// Send no more TPT updates to `node`.
    StopTptUpdates {
        /// The node.
        node: NodeId,
    },
    /// Send TPT updates to `node` again (registrations and deregistrations from now on).
    ResumeTptUpdates {
        /// The node.
        node: NodeId,
    },
    /// Send the whole local TPT part to `node`: TPT_CLEAR, then TPT_UPDATE messages (none if
    /// the part is empty), so the node's copy ends up equal to the part whatever it held.
    PushLocalTpt {
        /// The node.
        node: NodeId,
    },
    /// Start a fence on `node`: report [`Event::FenceDrained`] once every operation issued to
    /// it so far has completed. A new fence replaces a running one.
    StartFence {
        /// The node.
        node: NodeId,
    },
    /// Refuse every RDMA operation to `node` until [`Action::Unbar`].
    Bar {
        /// The node.
        node: NodeId,
    },
    /// Allow RDMA operations to `node` again.
    Unbar {
        /// The node.
        node: NodeId,
    },
    /// Deliver [`Event::Timeout`] at time `at` (replaces any earlier timer).
    SetTimer {
        /// The deadline.
        at: Tick,
    },
    /// Apply a TPT_UPDATE from `from` to its remote part (it was accepted).
    ApplyTptUpdate {
        /// The sender.
        from: NodeId,
        /// The entries.
        update: TptUpdate,
    },
    /// Apply a TPT_REMOVE from `from` to its remote part (it was accepted).
    ApplyTptRemove {
        /// The sender.
        from: NodeId,
        /// The handles.
        remove: TptRemove,
    },
    /// This node has joined: RDMA is enabled and RDMA_READY sent.
    RejoinComplete,
}

/// Misuse of a membership machine (bad configuration or an impossible event).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MembershipError {
    /// A configuration value is unusable.
    #[error("bad membership configuration: {0}")]
    BadConfig(String),
    /// An event other than Boot before Boot.
    #[error("event before Boot")]
    NotBooted,
    /// A second Boot: a rebooted driver starts a new machine.
    #[error("Boot received twice: a reboot starts a new machine")]
    AlreadyBooted,
    /// The node count at Boot does not fit the configuration.
    #[error("node count {node_count} must be above this node ({node}) and at most {max_nodes}")]
    BadNodeCount {
        /// The node count given.
        node_count: usize,
        /// This node.
        node: NodeId,
        /// The configured maximum.
        max_nodes: usize,
    },
    /// An event names a node outside 0..node_count.
    #[error("node {node} is out of range (node count {node_count})")]
    NodeOutOfRange {
        /// The node.
        node: NodeId,
        /// The node count.
        node_count: usize,
    },
    /// An event claims to come from this node itself.
    #[error("event from this node itself ({node})")]
    FromSelf {
        /// This node.
        node: NodeId,
    },
}

/// Whether a NACK with `syndrome` means the node is not there (its NIC is unplugged,
/// powered off, or not (yet) initialised) and so bars it until it rejoins: PORT_DOWN,
/// REMOTE_OPERATIONAL_ERROR (SEND/RECEIVE disabled) and RDMA_DISABLED (the node has rebooted
/// and is rejoining). The other NACKs are about one request (no receive buffer, bad address,
/// protection) or are retried by the NIC, and say nothing about the node.
pub fn nack_bars(syndrome: Syndrome) -> bool {
    matches!(
        syndrome,
        Syndrome::PortDown | Syndrome::RemoteOperationalError | Syndrome::RdmaDisabled
    )
}

/// Configuration of the rejoin protocol.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RejoinConfig {
    /// This node's number.
    pub node: NodeId,
    /// The maximum node count, known to every node (the size of the response bitmap).
    pub max_nodes: usize,
    /// Time without a new answer before sending BOOTING again to the nodes that have not
    /// answered (and between probes).
    pub resend_timeout: Tick,
    /// Count a node that has not answered after this many resends as NACKed (`None`: wait
    /// for ever, as 000 does).
    pub give_up_after: Option<u32>,
    /// After joining, keep sending BOOTING to NACKed nodes at every timeout.
    pub probe_down_nodes: bool,
}

impl RejoinConfig {
    /// The defaults: no giving up, probing on.
    pub fn new(node: NodeId, max_nodes: usize, resend_timeout: Tick) -> Self {
        RejoinConfig {
            node,
            max_nodes,
            resend_timeout,
            give_up_after: None,
            probe_down_nodes: true,
        }
    }

    pub(crate) fn check(&self) -> Result<(), MembershipError> {
        if self.node as usize >= self.max_nodes {
            return Err(MembershipError::BadConfig(format!(
                "node {} must be below max_nodes {}",
                self.node, self.max_nodes
            )));
        }
        if self.resend_timeout == 0 {
            return Err(MembershipError::BadConfig(
                "resend_timeout must be positive".into(),
            ));
        }
        if self.give_up_after == Some(0) {
            return Err(MembershipError::BadConfig(
                "give_up_after must be at least 1 round".into(),
            ));
        }
        Ok(())
    }
}

/// How a node answered this node's BOOTING.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Answer {
    /// ACK for this boot's incarnation.
    Ack,
    /// A hardware NACK (or no answer after [`RejoinConfig::give_up_after`] rounds).
    Nack,
}

/// This node's view of another node as a peer (Fig. 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerRole {
    /// No BOOTING from it since this boot: an established node (if it answered ACK).
    Established,
    /// Its BOOTING of `incarnation` arrived; fencing; `ready`: its RDMA_READY arrived too.
    Fencing {
        /// Its incarnation.
        incarnation: u32,
        /// RDMA_READY already received.
        ready: bool,
    },
    /// ACK sent for its BOOTING of `incarnation`; waiting for its RDMA_READY.
    Acked {
        /// Its incarnation.
        incarnation: u32,
    },
    /// Its RDMA_READY arrived: it is admitted.
    Ready,
    /// It NACKed with a barring syndrome: barred until it rejoins.
    Down,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    NotBooted,
    /// `rounds`: timeouts since Boot, counted only up to the one that gives up (so the
    /// machine has finitely many states: a model checker explores them all).
    Joining {
        rounds: u32,
    },
    Joined,
}

/// The rejoin protocol state machine of one node (000 Figs. 7 and 8).
///
/// Comparable and hashable so that a model checker can store the states it has explored
/// (`nic-check`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RejoinMachine {
    config: RejoinConfig,
    phase: Phase,
    node_count: usize,
    incarnation: u32,
    /// The response bitmap of Fig. 7.
    answered: BitVec,
    answer: Vec<Option<Answer>>,
    role: Vec<PeerRole>,
    barred: BitVec,
    updates: BitVec,
    accept_tpt: BitVec,
    ack_joined: BitVec,
    ready_sent: BitVec,
    /// ACK sent (to a BOOTING or PROBE) while joining: the node admits this one only on
    /// its RDMA_READY, owed at join.
    ready_owed: BitVec,
    probe: BitVec,
    /// A PROBE went to the node and no ACK to it (nor RDMA_READY since) came back: the node
    /// may be waiting for RDMA_READY after handling it.
    probe_unanswered: BitVec,
    deadline: Option<Tick>,
}

impl RejoinMachine {
    /// A machine waiting for [`Event::Boot`].
    pub fn new(config: RejoinConfig) -> Result<Self, MembershipError> {
        config.check()?;
        let n = config.max_nodes;
        Ok(RejoinMachine {
            phase: Phase::NotBooted,
            node_count: 0,
            incarnation: 0,
            answered: bitvec![0; n],
            answer: vec![None; n],
            role: vec![PeerRole::Established; n],
            barred: bitvec![1; n],
            updates: bitvec![0; n],
            accept_tpt: bitvec![0; n],
            ack_joined: bitvec![0; n],
            ready_sent: bitvec![0; n],
            ready_owed: bitvec![0; n],
            probe: bitvec![0; n],
            probe_unanswered: bitvec![0; n],
            deadline: None,
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &RejoinConfig {
        &self.config
    }

    /// This boot's incarnation (0 before Boot).
    pub fn incarnation(&self) -> u32 {
        self.incarnation
    }

    /// Whether this node has joined (RDMA enabled).
    pub fn is_joined(&self) -> bool {
        self.phase == Phase::Joined
    }

    /// Whether RDMA to `node` is barred.
    pub fn is_barred(&self, node: NodeId) -> bool {
        self.barred.get(node as usize).map(|b| *b).unwrap_or(true)
    }

    /// Whether TPT updates go to `node`.
    pub fn updates_enabled(&self, node: NodeId) -> bool {
        self.updates.get(node as usize).map(|b| *b).unwrap_or(false)
    }

    /// The response bitmap (Fig. 7): bit X set once X has answered this boot.
    pub fn responses(&self) -> &BitSlice {
        &self.answered[..self.node_count]
    }

    /// How `node` answered this boot, if it has.
    pub fn answer(&self, node: NodeId) -> Option<Answer> {
        self.answer.get(node as usize).copied().flatten()
    }

    /// This node's peer-side view of `node`.
    pub fn role(&self, node: NodeId) -> Option<PeerRole> {
        self.role.get(node as usize).copied()
    }

    /// The pending timer deadline.
    pub fn deadline(&self) -> Option<Tick> {
        self.deadline
    }

    /// The same machine with its nodes renumbered: node `x` becomes `map[x]` (this node
    /// too), for every `x` below the configured maximum. The protocol treats node numbers
    /// alike (no decision depends on their order), so the renumbered machine is the one
    /// that the renumbered events would have produced; a model checker uses it to merge
    /// states that differ only in the nodes' names (symmetry reduction, `nic-check`).
    /// `map` must be a permutation of `0..max_nodes` that keeps the booted nodes
    /// (`0..node_count`) among themselves.
    pub fn renumbered(&self, map: &[NodeId]) -> Result<Self, MembershipError> {
        let n = self.config.max_nodes;
        if map.len() != n {
            return Err(MembershipError::BadConfig(format!(
                "renumbering has {} entries for {n} nodes",
                map.len()
            )));
        }
        let mut seen = bitvec![0; n];
        for (x, &y) in map.iter().enumerate() {
            let y = y as usize;
            if y >= n || seen[y] || (x < self.node_count) != (y < self.node_count) {
                return Err(MembershipError::BadConfig(format!(
                    "renumbering {map:?} is not a permutation of 0..{n} keeping 0..{}",
                    self.node_count
                )));
            }
            seen.set(y, true);
        }
        let bits = |b: &BitVec| {
            let mut r = bitvec![0; n];
            for x in b.iter_ones() {
                r.set(map[x] as usize, true);
            }
            r
        };
        fn moved<T: Copy>(v: &[T], map: &[NodeId]) -> Vec<T> {
            let mut r = v.to_vec();
            for (x, &item) in v.iter().enumerate() {
                r[map[x] as usize] = item;
            }
            r
        }
        Ok(RejoinMachine {
            config: RejoinConfig {
                node: map[self.config.node as usize],
                ..self.config.clone()
            },
            phase: self.phase,
            node_count: self.node_count,
            incarnation: self.incarnation,
            answered: bits(&self.answered),
            answer: moved(&self.answer, map),
            role: moved(&self.role, map),
            barred: bits(&self.barred),
            updates: bits(&self.updates),
            accept_tpt: bits(&self.accept_tpt),
            ack_joined: bits(&self.ack_joined),
            ready_sent: bits(&self.ready_sent),
            ready_owed: bits(&self.ready_owed),
            probe: bits(&self.probe),
            probe_unanswered: bits(&self.probe_unanswered),
            deadline: self.deadline,
        })
    }

    fn others(&self) -> impl Iterator<Item = NodeId> + '_ {
        let me = self.config.node;
        (0..self.node_count as NodeId).filter(move |&x| x != me)
    }

    fn check_node(&self, node: NodeId) -> Result<usize, MembershipError> {
        if node as usize >= self.node_count {
            return Err(MembershipError::NodeOutOfRange {
                node,
                node_count: self.node_count,
            });
        }
        if node == self.config.node {
            return Err(MembershipError::FromSelf { node });
        }
        Ok(node as usize)
    }

    /// Feeds one event at time `now`; returns the actions to carry out, in order.
    pub fn handle(&mut self, now: Tick, event: Event) -> Result<Vec<Action>, MembershipError> {
        let mut out = Vec::new();
        match event {
            Event::Boot {
                node_count,
                incarnation,
            } => {
                if self.phase != Phase::NotBooted {
                    return Err(MembershipError::AlreadyBooted);
                }
                if node_count <= self.config.node as usize || node_count > self.config.max_nodes {
                    return Err(MembershipError::BadNodeCount {
                        node_count,
                        node: self.config.node,
                        max_nodes: self.config.max_nodes,
                    });
                }
                self.node_count = node_count;
                self.incarnation = incarnation;
                self.phase = Phase::Joining { rounds: 0 };
                self.answered.fill(false);
                out.push(Action::SetEnables {
                    send_recv: true,
                    rdma: false,
                });
                let others: Vec<NodeId> = self.others().collect();
                for x in others {
                    out.push(Action::Send {
                        to: x,
                        message: ControlMessage::Booting { incarnation },
                    });
                    // The push rides with BOOTING (one bundle): see "TPT push" above.
                    self.updates.set(x as usize, true);
                    out.push(Action::ResumeTptUpdates { node: x });
                    out.push(Action::PushLocalTpt { node: x });
                }
                self.set_timer(now, &mut out);
                self.check_complete(now, &mut out);
            }
            _ if self.phase == Phase::NotBooted => return Err(MembershipError::NotBooted),
            Event::ControlReceived { from, message } => {
                let x = self.check_node(from)?;
                self.on_control(now, x, message, &mut out);
            }
            Event::HardwareNack { from, syndrome } => {
                let x = self.check_node(from)?;
                if nack_bars(syndrome) {
                    self.on_nack(now, x, &mut out);
                }
            }
            Event::ResponderRestarted { from } => {
                let x = self.check_node(from)?;
                self.on_nack(now, x, &mut out);
            }
            Event::Timeout => self.on_timeout(now, &mut out),
            Event::FenceDrained { node } => {
                let x = self.check_node(node)?;
                if let PeerRole::Fencing { incarnation, ready } = self.role[x] {
                    let joined = self.is_joined();
                    self.ready_owed.set(x, !joined);
                    out.push(Action::Send {
                        to: node,
                        message: ControlMessage::Ack {
                            incarnation,
                            joined: self.is_joined(),
                        },
                    });
                    self.role[x] = PeerRole::Acked { incarnation };
                    if ready {
                        self.role[x] = PeerRole::Ready;
                        self.admit(x, &mut out);
                    }
                    if joined && self.probe_unanswered[x] {
                        // Its BOOTING ended the probing, but it may handle the PROBE still
                        // on its way and wait for RDMA_READY: the ACK that stands for it is
                        // a datagram, RDMA_READY goes on the reliable stream.
                        self.send_ready(x, &mut out);
                    }
                }
            }
        }
        Ok(out)
    }

    fn on_control(&mut self, now: Tick, x: usize, message: ControlMessage, out: &mut Vec<Action>) {
        let node = x as NodeId;
        match message {
            ControlMessage::Booting { incarnation } | ControlMessage::Probe { incarnation } => {
                let booting = matches!(message, ControlMessage::Booting { .. });
                // Fig. 8 S26: clear, stop updates, bar; then fence before the ACK (S27).
                out.push(Action::ClearRemoteTpt { node });
                self.stop_updates(x, out);
                self.bar(x, out);
                out.push(Action::StartFence { node });
                self.role[x] = PeerRole::Fencing {
                    incarnation,
                    ready: false,
                };
                self.accept_tpt.set(x, true);
                self.ack_joined.set(x, false);
                if booting {
                    // A rebooted node answers no probe: it rejoins. A PROBE is no answer
                    // to ours: probing goes on until the ACK to it comes.
                    self.probe.set(x, false);
                }
                // Nor is a BOOTING an answer to this node's boot (see "Decisions"): its
                // sender's ACK to this boot will be.
            }
            ControlMessage::Ack {
                incarnation,
                joined,
            } => {
                if incarnation != self.incarnation {
                    return; // meant for an earlier boot of this node
                }
                // The sender has stopped updates to us and fenced: what it sent before was
                // meant for an earlier boot; its push follows.
                out.push(Action::ClearRemoteTpt { node });
                self.accept_tpt.set(x, true);
                self.ack_joined.set(x, joined);
                self.probe.set(x, false);
                self.probe_unanswered.set(x, false);
                match self.role[x] {
                    PeerRole::Down => self.role[x] = PeerRole::Established,
                    // Mid-rejoin with us (we handled its PROBE, or its BOOTING): an ACK
                    // that says it has joined stands for its RDMA_READY, which it sends
                    // only on the ACK to its probe (that ACK may be lost).
                    PeerRole::Acked { .. } if joined => self.role[x] = PeerRole::Ready,
                    PeerRole::Fencing { incarnation, .. } if joined => {
                        self.role[x] = PeerRole::Fencing {
                            incarnation,
                            ready: true,
                        }
                    }
                    _ => {}
                }
                self.answer[x] = Some(Answer::Ack);
                match self.phase {
                    Phase::Joining { .. } => {
                        self.answered.set(x, true);
                        self.check_complete(now, out);
                    }
                    Phase::Joined => {
                        // A late answer (the node had NACKed, or was probed).
                        if !self.ready_sent[x] {
                            self.send_ready(x, out);
                        }
                        if self.is_ready(x) {
                            self.admit(x, out);
                        }
                    }
                    Phase::NotBooted => {}
                }
            }
            ControlMessage::RdmaReady { incarnation } => match self.role[x] {
                PeerRole::Fencing {
                    incarnation: i,
                    ready: _,
                } if i == incarnation => {
                    self.role[x] = PeerRole::Fencing {
                        incarnation: i,
                        ready: true,
                    };
                }
                PeerRole::Acked { incarnation: i } if i == incarnation => {
                    self.role[x] = PeerRole::Ready;
                    self.admit(x, out);
                }
                PeerRole::Established | PeerRole::Ready => {
                    // Established: its BOOTING reached an earlier boot of this node.
                    self.role[x] = PeerRole::Ready;
                    self.admit(x, out);
                }
                PeerRole::Fencing { .. } | PeerRole::Acked { .. } => {
                    // Another incarnation: the node rebooted since and this node missed its
                    // BOOTING (it counted this node as NACKed, e.g. after
                    // `give_up_after`). Start over with its new boot, as for a PROBE, and
                    // take this; but keep its part: its push (TPT_CLEAR first) came before,
                    // in order.
                    self.stop_updates(x, out);
                    self.bar(x, out);
                    out.push(Action::StartFence { node });
                    self.role[x] = PeerRole::Fencing {
                        incarnation,
                        ready: true,
                    };
                    self.ack_joined.set(x, false);
                }
                // Stale (another incarnation) or from a node barred until it boots again.
                _ => {}
            },
            ControlMessage::TptUpdate(update) => {
                if self.accept_tpt[x] {
                    out.push(Action::ApplyTptUpdate { from: node, update });
                }
            }
            ControlMessage::TptRemove(remove) => {
                if self.accept_tpt[x] {
                    out.push(Action::ApplyTptRemove { from: node, remove });
                }
            }
            ControlMessage::TptClear => {
                if self.accept_tpt[x] {
                    out.push(Action::ClearRemoteTpt { node });
                }
            }
            // The deregistration fence is the driver's (`crate::dereg`).
            ControlMessage::Heartbeat
            | ControlMessage::HeartbeatIncarnation { .. }
            | ControlMessage::TptRequest
            | ControlMessage::StreamAck { .. }
            | ControlMessage::TptRemoveDone(_) => {}
        }
    }

    fn on_nack(&mut self, now: Tick, x: usize, out: &mut Vec<Action>) {
        let node = x as NodeId;
        match self.role[x] {
            PeerRole::Established | PeerRole::Ready => {
                self.role[x] = PeerRole::Down;
                out.push(Action::ClearRemoteTpt { node });
                self.stop_updates(x, out);
                self.bar(x, out);
                self.accept_tpt.set(x, false);
                // The RDMA_READY it had from us may have been dropped with the rest: send
                // it again when it answers (a late ACK, or the ACK to a probe).
                self.ready_sent.set(x, false);
                self.probe.set(x, self.config.probe_down_nodes);
            }
            // Mid-rejoin with us (e.g. our stale write reached its new boot): its RDMA_READY
            // will admit it. Or already down.
            PeerRole::Fencing { .. } | PeerRole::Acked { .. } | PeerRole::Down => {
                self.bar(x, out);
            }
        }
        match self.phase {
            Phase::Joining { .. } => {
                self.answered.set(x, true);
                self.answer[x] = Some(Answer::Nack);
                self.probe.set(x, self.config.probe_down_nodes);
                self.check_complete(now, out);
            }
            Phase::Joined => {
                if self.probe.any() && self.deadline.is_none() {
                    self.set_timer(now, out);
                }
            }
            Phase::NotBooted => {}
        }
    }

    fn on_timeout(&mut self, now: Tick, out: &mut Vec<Action>) {
        match self.deadline {
            Some(d) if now >= d => {}
            _ => return,
        }
        self.deadline = None;
        let booting = ControlMessage::Booting {
            incarnation: self.incarnation,
        };
        let probe_message = ControlMessage::Probe {
            incarnation: self.incarnation,
        };
        match self.phase {
            Phase::Joining { rounds } => {
                let rounds = match self.config.give_up_after {
                    Some(k) => rounds.saturating_add(1).min(k.saturating_add(1)),
                    None => 0,
                };
                self.phase = Phase::Joining { rounds };
                let missing: Vec<usize> = self
                    .others()
                    .map(|x| x as usize)
                    .filter(|&x| !self.answered[x])
                    .collect();
                if self.config.give_up_after.is_some_and(|k| rounds > k) {
                    for x in missing {
                        self.on_nack(now, x, out);
                    }
                    if self.deadline.is_none() && !self.is_joined() {
                        self.set_timer(now, out);
                    }
                    return;
                }
                for x in missing {
                    out.push(Action::Send {
                        to: x as NodeId,
                        message: booting.clone(),
                    });
                    // The node clears this node's part at every BOOTING: push it again.
                    if self.updates[x] {
                        out.push(Action::PushLocalTpt { node: x as NodeId });
                    }
                }
                self.set_timer(now, out);
            }
            Phase::Joined => {
                let probe: Vec<usize> = self.probe.iter_ones().collect();
                for x in probe {
                    // The node will treat us as rebooted: it clears our part (updates stop
                    // until we admit it again, with a push) and needs RDMA_READY after its
                    // ACK.
                    self.ready_sent.set(x, false);
                    self.probe_unanswered.set(x, true);
                    self.stop_updates(x, out);
                    out.push(Action::Send {
                        to: x as NodeId,
                        message: probe_message.clone(),
                    });
                }
                if self.probe.any() {
                    self.set_timer(now, out);
                }
            }
            Phase::NotBooted => {}
        }
    }

    fn check_complete(&mut self, now: Tick, out: &mut Vec<Action>) {
        if !matches!(self.phase, Phase::Joining { .. }) {
            return;
        }
        if self.others().any(|x| !self.answered[x as usize]) {
            // Answers are still coming in: resend to the missing nodes only after
            // `resend_timeout` without a new one. (A BOOTING broadcast to many nodes takes
            // the NIC a while to send; a timer from the first send would resend to the
            // nodes it reached last while their answers are on their way.)
            self.set_timer(now, out);
            return;
        }
        // Fig. 7 S20-S21.
        self.phase = Phase::Joined;
        out.push(Action::SetEnables {
            send_recv: true,
            rdma: true,
        });
        // Admitting a node that is ready unbars it; it has this boot's entries already
        // (they came with BOOTING), unless it lost them since (a NACK stopped the updates
        // to it): then the push goes first, so the driver sends it and the RDMA_READY in
        // one bundle.
        let others: Vec<usize> = self.others().map(|x| x as usize).collect();
        for &x in &others {
            if self.is_ready(x) {
                self.admit(x, out);
            }
        }
        for &x in &others {
            if self.answer[x] == Some(Answer::Ack) || self.ready_owed[x] {
                self.send_ready(x, out);
            }
        }
        out.push(Action::RejoinComplete);
        self.deadline = None;
        if self.probe.any() {
            self.set_timer(now, out);
        }
    }

    /// Whether node `x` has RDMA enabled and has accepted this boot.
    fn is_ready(&self, x: usize) -> bool {
        match self.role[x] {
            PeerRole::Ready => true,
            PeerRole::Established => self.answer[x] == Some(Answer::Ack) && self.ack_joined[x],
            _ => false,
        }
    }

    fn send_ready(&mut self, x: usize, out: &mut Vec<Action>) {
        self.ready_sent.set(x, true);
        self.ready_owed.set(x, false);
        self.probe_unanswered.set(x, false);
        out.push(Action::Send {
            to: x as NodeId,
            message: ControlMessage::RdmaReady {
                incarnation: self.incarnation,
            },
        });
    }

    /// Unbars `x`; once this node has joined also resumes updates to it and pushes the
    /// local part (Fig. 8 S29-S30).
    fn admit(&mut self, x: usize, out: &mut Vec<Action>) {
        let node = x as NodeId;
        if self.barred[x] {
            self.barred.set(x, false);
            out.push(Action::Unbar { node });
        }
        if self.is_joined() && !self.updates[x] {
            self.updates.set(x, true);
            out.push(Action::ResumeTptUpdates { node });
            out.push(Action::PushLocalTpt { node });
        }
    }

    fn bar(&mut self, x: usize, out: &mut Vec<Action>) {
        if !self.barred[x] {
            self.barred.set(x, true);
            out.push(Action::Bar { node: x as NodeId });
        }
    }

    fn stop_updates(&mut self, x: usize, out: &mut Vec<Action>) {
        if self.updates[x] {
            self.updates.set(x, false);
            out.push(Action::StopTptUpdates { node: x as NodeId });
        }
    }

    fn set_timer(&mut self, now: Tick, out: &mut Vec<Action>) {
        let at = now.saturating_add(self.config.resend_timeout);
        self.deadline = Some(at);
        out.push(Action::SetTimer { at });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boot(m: &mut RejoinMachine, n: usize, inc: u32) -> Vec<Action> {
        m.handle(
            0,
            Event::Boot {
                node_count: n,
                incarnation: inc,
            },
        )
        .unwrap()
    }

    fn rx(m: &mut RejoinMachine, from: NodeId, message: ControlMessage) -> Vec<Action> {
        m.handle(1, Event::ControlReceived { from, message })
            .unwrap()
    }

    fn sends(a: &[Action]) -> Vec<(NodeId, ControlMessage)> {
        a.iter()
            .filter_map(|a| match a {
                Action::Send { to, message } => Some((*to, message.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn boot_sends_booting_and_waits_for_every_answer() {
        let mut m = RejoinMachine::new(RejoinConfig::new(0, 8, 100)).unwrap();
        let a = boot(&mut m, 3, 77);
        assert_eq!(
            a[0],
            Action::SetEnables {
                send_recv: true,
                rdma: false
            }
        );
        assert_eq!(
            sends(&a),
            vec![
                (1, ControlMessage::Booting { incarnation: 77 }),
                (2, ControlMessage::Booting { incarnation: 77 })
            ]
        );
        assert_eq!(a.last(), Some(&Action::SetTimer { at: 100 }));
        // Each BOOTING is followed by the push (the driver bundles them into one SEND).
        for x in [1u16, 2] {
            let booting = a
                .iter()
                .position(|y| matches!(y, Action::Send { to, .. } if *to == x));
            let push = a
                .iter()
                .position(|y| *y == Action::PushLocalTpt { node: x });
            assert!(
                booting.unwrap() < push.unwrap(),
                "push to {x} right behind BOOTING: {a:?}"
            );
            assert!(m.updates_enabled(x) && m.is_barred(x));
        }
        // An ACK for another incarnation is not an answer.
        assert!(rx(
            &mut m,
            1,
            ControlMessage::Ack {
                incarnation: 76,
                joined: true
            }
        )
        .is_empty());
        let a = rx(
            &mut m,
            1,
            ControlMessage::Ack {
                incarnation: 77,
                joined: true,
            },
        );
        // Node 1 fenced. The answer restarts the timer: resends wait for `resend_timeout`
        // of silence.
        assert_eq!(
            a,
            vec![
                Action::ClearRemoteTpt { node: 1 },
                Action::SetTimer { at: 101 }
            ]
        );
        assert!(m.updates_enabled(1) && m.is_barred(1));
        // Timeout: BOOTING again to node 2 only, and the push behind it again (node 2
        // clears this node's part at every BOOTING).
        assert!(
            m.handle(100, Event::Timeout).unwrap().is_empty(),
            "early timeout ignored"
        );
        let a = m.handle(101, Event::Timeout).unwrap();
        assert_eq!(
            sends(&a),
            vec![(2, ControlMessage::Booting { incarnation: 77 })]
        );
        assert_eq!(a[1], Action::PushLocalTpt { node: 2 });
        // Node 2 is down: the fabric NACKs. Counted, barred, not sent RDMA_READY.
        let a = m
            .handle(
                150,
                Event::HardwareNack {
                    from: 2,
                    syndrome: Syndrome::PortDown,
                },
            )
            .unwrap();
        assert!(m.is_joined());
        assert!(a.contains(&Action::SetEnables {
            send_recv: true,
            rdma: true
        }));
        assert_eq!(
            sends(&a),
            vec![(1, ControlMessage::RdmaReady { incarnation: 77 })]
        );
        assert!(a.contains(&Action::Unbar { node: 1 }));
        // Node 1 has had the entries since BOOTING: RDMA_READY goes alone. Node 2 NACKed:
        // no more updates to it.
        assert!(
            !a.iter().any(|x| matches!(x, Action::PushLocalTpt { .. })),
            "no second push: {a:?}"
        );
        assert!(m.updates_enabled(1) && !m.updates_enabled(2));
        assert_eq!(
            a.iter().filter(|x| **x == Action::RejoinComplete).count(),
            1
        );
        assert!(m.is_barred(2) && !m.is_barred(1));
        // Probing node 2 continues.
        assert_eq!(a.last(), Some(&Action::SetTimer { at: 250 }));
        let a = m.handle(250, Event::Timeout).unwrap();
        assert_eq!(
            sends(&a),
            vec![(2, ControlMessage::Probe { incarnation: 77 })]
        );
    }

    #[test]
    fn peer_fences_before_ack_and_pushes_after_ready() {
        let mut m = RejoinMachine::new(RejoinConfig::new(1, 4, 100)).unwrap();
        boot(&mut m, 2, 5);
        rx(
            &mut m,
            0,
            ControlMessage::Ack {
                incarnation: 5,
                joined: true,
            },
        );
        assert!(m.is_joined() && !m.is_barred(0) && m.updates_enabled(0));
        // Node 0 reboots.
        let a = rx(&mut m, 0, ControlMessage::Booting { incarnation: 9 });
        assert_eq!(
            a,
            vec![
                Action::ClearRemoteTpt { node: 0 },
                Action::StopTptUpdates { node: 0 },
                Action::Bar { node: 0 },
                Action::StartFence { node: 0 }
            ]
        );
        // RDMA_READY before the fence drained is held back.
        assert!(rx(&mut m, 0, ControlMessage::RdmaReady { incarnation: 9 }).is_empty());
        let a = m.handle(3, Event::FenceDrained { node: 0 }).unwrap();
        assert_eq!(
            a,
            vec![
                Action::Send {
                    to: 0,
                    message: ControlMessage::Ack {
                        incarnation: 9,
                        joined: true
                    }
                },
                Action::Unbar { node: 0 },
                Action::ResumeTptUpdates { node: 0 },
                Action::PushLocalTpt { node: 0 },
            ]
        );
        // A stale FenceDrained is ignored.
        assert!(m
            .handle(4, Event::FenceDrained { node: 0 })
            .unwrap()
            .is_empty());
    }

    /// A node that found this one down probes it while it is still joining (its BOOTING
    /// to that node was NACKed: the link was down). The ACK to the probe says "not joined",
    /// so the prober admits this node only on its RDMA_READY: joining sends it there too.
    #[test]
    fn a_probe_acked_while_joining_gets_rdma_ready_at_join() {
        let mut m = RejoinMachine::new(RejoinConfig::new(1, 4, 100)).unwrap();
        boot(&mut m, 3, 5);
        m.handle(
            1,
            Event::HardwareNack {
                from: 0,
                syndrome: Syndrome::PortDown,
            },
        )
        .unwrap();
        assert_eq!(m.answer(0), Some(Answer::Nack));
        rx(&mut m, 0, ControlMessage::Probe { incarnation: 7 });
        let a = m.handle(2, Event::FenceDrained { node: 0 }).unwrap();
        assert_eq!(
            sends(&a),
            vec![(
                0,
                ControlMessage::Ack {
                    incarnation: 7,
                    joined: false
                }
            )]
        );
        rx(&mut m, 0, ControlMessage::RdmaReady { incarnation: 7 });
        let a = rx(
            &mut m,
            2,
            ControlMessage::Ack {
                incarnation: 5,
                joined: true,
            },
        );
        assert!(m.is_joined());
        let ready = sends(&a);
        assert!(
            ready.contains(&(0, ControlMessage::RdmaReady { incarnation: 5 })),
            "{ready:?}"
        );
        assert!(ready.contains(&(2, ControlMessage::RdmaReady { incarnation: 5 })));
    }

    /// A joined node probes this one while it is joining; the ACK to the probe is lost, and
    /// the prober answers this node's BOOTING instead (ACK, joined): that ACK admits the
    /// prober as its RDMA_READY would (it will not send one: it has no ACK to its probe).
    #[test]
    fn an_ack_from_a_joined_prober_admits_it() {
        let mut m = RejoinMachine::new(RejoinConfig::new(1, 4, 100)).unwrap();
        boot(&mut m, 3, 5);
        rx(&mut m, 0, ControlMessage::Probe { incarnation: 7 });
        m.handle(2, Event::FenceDrained { node: 0 }).unwrap();
        assert_eq!(m.role(0), Some(PeerRole::Acked { incarnation: 7 }));
        for x in [0, 2] {
            rx(
                &mut m,
                x,
                ControlMessage::Ack {
                    incarnation: 5,
                    joined: true,
                },
            );
        }
        assert!(m.is_joined());
        assert!(!m.is_barred(0) && m.updates_enabled(0), "{:?}", m.role(0));
        // While still fencing, the ACK is remembered like an RDMA_READY.
        let mut m = RejoinMachine::new(RejoinConfig::new(1, 4, 100)).unwrap();
        boot(&mut m, 2, 5);
        rx(&mut m, 0, ControlMessage::Probe { incarnation: 7 });
        rx(
            &mut m,
            0,
            ControlMessage::Ack {
                incarnation: 5,
                joined: true,
            },
        );
        assert!(m.is_joined() && m.is_barred(0));
        let a = m.handle(2, Event::FenceDrained { node: 0 }).unwrap();
        assert!(a.contains(&Action::Unbar { node: 0 }), "{a:?}");
    }

    /// Two joined nodes find each other down and their PROBEs cross: each handles the
    /// other's and waits for its RDMA_READY, which comes only with the ACK to its own probe.
    /// A crossing PROBE is no answer: probing goes on until the ACK comes (it may be lost).
    #[test]
    fn a_crossing_probe_does_not_end_probing() {
        let mut m = RejoinMachine::new(RejoinConfig::new(1, 4, 100)).unwrap();
        boot(&mut m, 2, 5);
        rx(
            &mut m,
            0,
            ControlMessage::Ack {
                incarnation: 5,
                joined: true,
            },
        );
        let a = m
            .handle(
                10,
                Event::HardwareNack {
                    from: 0,
                    syndrome: Syndrome::PortDown,
                },
            )
            .unwrap();
        assert_eq!(a.last(), Some(&Action::SetTimer { at: 110 }));
        rx(&mut m, 0, ControlMessage::Probe { incarnation: 7 });
        m.handle(20, Event::FenceDrained { node: 0 }).unwrap();
        let a = m.handle(110, Event::Timeout).unwrap();
        assert_eq!(
            sends(&a),
            vec![(0, ControlMessage::Probe { incarnation: 5 })]
        );
        // Its ACK to our probe (joined) admits it and ends probing.
        let a = rx(
            &mut m,
            0,
            ControlMessage::Ack {
                incarnation: 5,
                joined: true,
            },
        );
        assert!(sends(&a).contains(&(0, ControlMessage::RdmaReady { incarnation: 5 })));
        assert!(!m.is_barred(0) && m.updates_enabled(0));
        assert!(sends(&m.handle(300, Event::Timeout).unwrap()).is_empty());
        // Or its RDMA_READY (after its own probe) admits it, while the ACK to this node's
        // probe is lost: probing goes on (the node waits for this node's RDMA_READY after
        // the ACK), and each probe stops the updates (the node clears this node's part) until
        // the ACK admits it again, with a push.
        let mut m = RejoinMachine::new(RejoinConfig::new(1, 4, 100)).unwrap();
        boot(&mut m, 2, 5);
        let ack = ControlMessage::Ack {
            incarnation: 5,
            joined: true,
        };
        rx(&mut m, 0, ack.clone());
        let nack = Event::HardwareNack {
            from: 0,
            syndrome: Syndrome::PortDown,
        };
        m.handle(10, nack).unwrap();
        rx(&mut m, 0, ControlMessage::Probe { incarnation: 7 });
        m.handle(20, Event::FenceDrained { node: 0 }).unwrap();
        let a = rx(&mut m, 0, ControlMessage::RdmaReady { incarnation: 7 });
        assert!(a.contains(&Action::PushLocalTpt { node: 0 }), "{a:?}");
        let a = m.handle(110, Event::Timeout).unwrap();
        assert_eq!(
            sends(&a),
            vec![(0, ControlMessage::Probe { incarnation: 5 })]
        );
        assert!(a.contains(&Action::StopTptUpdates { node: 0 }));
        let a = rx(&mut m, 0, ack);
        assert!(sends(&a).contains(&(0, ControlMessage::RdmaReady { incarnation: 5 })));
        assert!(a.contains(&Action::PushLocalTpt { node: 0 }), "{a:?}");
        assert!(m.updates_enabled(0) && !m.is_barred(0));
        assert!(sends(&m.handle(300, Event::Timeout).unwrap()).is_empty());
    }

    /// This node's RDMA_READY to a peer fails with a barring NACK (the peer's link was
    /// down; the driver drops what it still had queued for it): when an ACK from the peer
    /// admits it again, RDMA_READY goes again (the peer waits for it).
    #[test]
    fn rdma_ready_goes_again_after_the_node_was_found_down() {
        let mut m = RejoinMachine::new(RejoinConfig::new(1, 4, 100)).unwrap();
        boot(&mut m, 2, 5);
        let ack = ControlMessage::Ack {
            incarnation: 5,
            joined: true,
        };
        let a = rx(&mut m, 0, ack.clone());
        assert_eq!(
            sends(&a),
            vec![(0, ControlMessage::RdmaReady { incarnation: 5 })]
        );
        let nack = Event::HardwareNack {
            from: 0,
            syndrome: Syndrome::PortDown,
        };
        m.handle(10, nack).unwrap();
        let a = rx(&mut m, 0, ack);
        assert_eq!(
            sends(&a),
            vec![(0, ControlMessage::RdmaReady { incarnation: 5 })]
        );
        assert!(!m.is_barred(0) && m.updates_enabled(0));
    }

    /// A peer rebooted while this node waited for its RDMA_READY, and this node missed its
    /// BOOTING (the peer counted it as NACKed, say after `give_up_after`):
    /// its RDMA_READY of the new boot starts the handling over for that boot, as a PROBE
    /// would, and admits it after the fence.
    #[test]
    fn rdma_ready_of_a_new_boot_restarts_the_handling() {
        let mut m = RejoinMachine::new(RejoinConfig::new(1, 4, 100)).unwrap();
        boot(&mut m, 3, 5);
        rx(&mut m, 0, ControlMessage::Booting { incarnation: 7 });
        m.handle(2, Event::FenceDrained { node: 0 }).unwrap();
        assert_eq!(m.role(0), Some(PeerRole::Acked { incarnation: 7 }));
        let a = rx(&mut m, 0, ControlMessage::RdmaReady { incarnation: 9 });
        assert!(a.contains(&Action::StartFence { node: 0 }), "{a:?}");
        assert!(
            !a.contains(&Action::ClearRemoteTpt { node: 0 }),
            "its push came before, after its TPT_CLEAR: {a:?}"
        );
        assert_eq!(
            m.role(0),
            Some(PeerRole::Fencing {
                incarnation: 9,
                ready: true
            })
        );
        // Node 0's reboot cut an operation: its NACK is node 0's answer to this boot.
        m.handle(
            2,
            Event::HardwareNack {
                from: 0,
                syndrome: Syndrome::PortDown,
            },
        )
        .unwrap();
        rx(
            &mut m,
            2,
            ControlMessage::Ack {
                incarnation: 5,
                joined: true,
            },
        );
        let a = m.handle(3, Event::FenceDrained { node: 0 }).unwrap();
        assert!(sends(&a).contains(&(
            0,
            ControlMessage::Ack {
                incarnation: 9,
                joined: true
            }
        )));
        assert!(!m.is_barred(0) && m.updates_enabled(0));
    }

    /// Two nodes boot together: each handles the other's BOOTING as a peer (fence, ACK)
    /// and joins on the other's ACK, not on its BOOTING.
    #[test]
    fn crossing_bootings_are_acked_not_counted() {
        let mut m = RejoinMachine::new(RejoinConfig::new(0, 2, 100)).unwrap();
        boot(&mut m, 2, 1);
        let a = rx(&mut m, 1, ControlMessage::Booting { incarnation: 2 });
        assert!(!m.is_joined(), "a BOOTING is no answer: {a:?}");
        assert_eq!(m.answer(1), None);
        assert!(a.contains(&Action::StartFence { node: 1 }));
        assert!(sends(&a).is_empty());
        let a = m.handle(2, Event::FenceDrained { node: 1 }).unwrap();
        assert_eq!(
            sends(&a),
            vec![(
                1,
                ControlMessage::Ack {
                    incarnation: 2,
                    joined: false
                }
            )]
        );
        // Node 1's ACK (not joined: it waits for this node's) is the answer: join, and
        // RDMA_READY to node 1, which is admitted on its own RDMA_READY.
        let a = rx(
            &mut m,
            1,
            ControlMessage::Ack {
                incarnation: 1,
                joined: false,
            },
        );
        assert!(m.is_joined());
        assert_eq!(
            sends(&a),
            vec![(1, ControlMessage::RdmaReady { incarnation: 1 })]
        );
        assert!(m.is_barred(1));
        let a = rx(&mut m, 1, ControlMessage::RdmaReady { incarnation: 2 });
        assert!(
            a.contains(&Action::Unbar { node: 1 }) && a.contains(&Action::PushLocalTpt { node: 1 })
        );
    }

    #[test]
    fn tpt_messages_are_accepted_only_after_booting_or_ack() {
        let mut m = RejoinMachine::new(RejoinConfig::new(0, 3, 100)).unwrap();
        boot(&mut m, 3, 1);
        let upd = ControlMessage::TptRemove(TptRemove::new(vec![1]).unwrap());
        assert!(
            rx(&mut m, 1, upd.clone()).is_empty(),
            "meant for an earlier boot"
        );
        rx(
            &mut m,
            1,
            ControlMessage::Ack {
                incarnation: 1,
                joined: true,
            },
        );
        assert_eq!(rx(&mut m, 1, upd.clone()).len(), 1);
        rx(&mut m, 2, ControlMessage::Booting { incarnation: 3 });
        assert_eq!(rx(&mut m, 2, upd.clone()).len(), 1);
        // Node 1 is found down: refused again.
        m.handle(
            5,
            Event::HardwareNack {
                from: 1,
                syndrome: Syndrome::PortDown,
            },
        )
        .unwrap();
        assert!(rx(&mut m, 1, upd).is_empty());
    }

    #[test]
    fn responder_restarted_bars_like_a_barring_nack() {
        let mut m = RejoinMachine::new(RejoinConfig::new(0, 3, 100)).unwrap();
        boot(&mut m, 3, 1);
        rx(
            &mut m,
            1,
            ControlMessage::Ack {
                incarnation: 1,
                joined: true,
            },
        );
        let upd = ControlMessage::TptRemove(TptRemove::new(vec![1]).unwrap());
        assert_eq!(rx(&mut m, 1, upd.clone()).len(), 1);
        let a = m.handle(5, Event::ResponderRestarted { from: 1 }).unwrap();
        assert!(a.contains(&Action::ClearRemoteTpt { node: 1 }), "{a:?}");
        assert!(rx(&mut m, 1, upd).is_empty(), "barred until it rejoins");
        assert!(m.handle(6, Event::ResponderRestarted { from: 7 }).is_err());
    }

    #[test]
    fn non_barring_nacks_are_ignored_and_give_up_counts_silent_nodes() {
        let mut c = RejoinConfig::new(0, 2, 10);
        c.give_up_after = Some(2);
        let mut m = RejoinMachine::new(c).unwrap();
        boot(&mut m, 2, 1);
        assert!(m
            .handle(
                1,
                Event::HardwareNack {
                    from: 1,
                    syndrome: Syndrome::ReceiverNotReady
                }
            )
            .unwrap()
            .is_empty());
        assert_eq!(sends(&m.handle(10, Event::Timeout).unwrap()).len(), 1);
        assert_eq!(sends(&m.handle(20, Event::Timeout).unwrap()).len(), 1);
        assert!(!m.is_joined());
        let a = m.handle(30, Event::Timeout).unwrap();
        assert!(m.is_joined());
        assert_eq!(m.answer(1), Some(Answer::Nack));
        assert!(a.contains(&Action::RejoinComplete));
        assert!(sends(&a).is_empty(), "no RDMA_READY to a silent node");
    }

    #[test]
    fn misuse_is_a_typed_error() {
        assert!(matches!(
            RejoinMachine::new(RejoinConfig::new(4, 4, 1)),
            Err(MembershipError::BadConfig(_))
        ));
        assert!(matches!(
            RejoinMachine::new(RejoinConfig::new(0, 4, 0)),
            Err(MembershipError::BadConfig(_))
        ));
        let mut m = RejoinMachine::new(RejoinConfig::new(1, 4, 1)).unwrap();
        assert_eq!(m.handle(0, Event::Timeout), Err(MembershipError::NotBooted));
        assert_eq!(
            m.handle(
                0,
                Event::Boot {
                    node_count: 5,
                    incarnation: 0
                }
            ),
            Err(MembershipError::BadNodeCount {
                node_count: 5,
                node: 1,
                max_nodes: 4
            })
        );
        assert_eq!(
            m.handle(
                0,
                Event::Boot {
                    node_count: 1,
                    incarnation: 0
                }
            ),
            Err(MembershipError::BadNodeCount {
                node_count: 1,
                node: 1,
                max_nodes: 4
            })
        );
        boot(&mut m, 3, 0);
        assert_eq!(
            m.handle(
                0,
                Event::Boot {
                    node_count: 3,
                    incarnation: 0
                }
            ),
            Err(MembershipError::AlreadyBooted)
        );
        assert_eq!(
            m.handle(0, Event::FenceDrained { node: 3 }),
            Err(MembershipError::NodeOutOfRange {
                node: 3,
                node_count: 3
            })
        );
        assert_eq!(
            m.handle(
                0,
                Event::ControlReceived {
                    from: 1,
                    message: ControlMessage::Heartbeat
                }
            ),
            Err(MembershipError::FromSelf { node: 1 })
        );
    }

    #[test]
    fn single_node_cluster_joins_at_boot() {
        let mut m = RejoinMachine::new(RejoinConfig::new(0, 1, 1)).unwrap();
        let a = boot(&mut m, 1, 0);
        assert!(m.is_joined());
        assert!(a.contains(&Action::RejoinComplete));
    }
}
