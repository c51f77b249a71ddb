//! The baseline the rejoin protocol is measured against: the heartbeat scheme that source
//! document 000 describes as prior art in paragraph \[0006\].
//!
//! Every node sends HEARTBEAT to every other node each `period`. A node declares a peer
//! down when it has heard nothing from it for `timeout`: it bars the peer, stops TPT updates
//! to it and clears its TPT part. When heartbeats from the peer resume it declares it up
//! again: unbars it, resumes updates and pushes its local TPT part. A booting node enables
//! SEND/RECEIVE **and RDMA** at once and considers every peer down until it hears from it.
//! On hearing a peer that it considered down it answers with a heartbeat of its own before
//! pushing its TPT part, so the peer applies the push (it takes TPT messages only from
//! nodes it considers up). If the peer's own push (its TPT_CLEAR) has not come a timeout
//! after it was admitted, the node asks for it with TPT_REQUEST, every timeout until it
//! comes; a node that considers the sender up answers with a push. Without the request a
//! copy could stay empty for good: under load a timeout can be one-sided (one node's heartbeats are late),
//! and the other node, which saw nothing, would not push; and a push that arrives while the
//! receiver considers its sender down (it declared it down again in between) is dropped,
//! although the reliable control stream has delivered it.
//!
//! **Hold-down** ([`HeartbeatConfig::hold_down`]): what the prior art must add to be safe.
//! A booting node stays silent, RDMA off, for `hold_down` before its first heartbeat; with
//! `hold_down` longer than `timeout` plus a heartbeat period, every peer has declared it
//! down (and dropped its old TPT part) before it can be reached again. It is also what
//! makes the baseline slow to rejoin. `hold_down = 0` is the naive prior art.
//!
//! Its weakness, which the tests demonstrate, is 000's point: a node that reboots faster
//! than `timeout` is never declared down, so its peers keep the TPT entries of its previous
//! boot and their RDMA writes land in its new memory. Hardware NACKs are ignored (in
//! \[0006\] only the heartbeat process tracks membership); TPT messages are applied from any
//! node currently considered up; BOOTING, ACK and RDMA_READY are ignored, and the
//! TPT_CLEAR the driver puts at the head of every push clears nothing: in the prior art a push only adds
//! entries (a peer that never declared a quickly rebooted node down keeps the entries of
//! its previous boot: the weakness measured against the rejoin protocol).
//!
//! **Incarnation variant** ([`HeartbeatConfig::incarnation_beats`]): the baseline as its
//! best advocate would build it. Heartbeats carry the sender's incarnation
//! (HEARTBEAT_INCARNATION, [`crate::control`]), so a peer sees a reboot at the first beat
//! instead of after `timeout` of silence. A booting node beats at once, with RDMA off for
//! the hold-down, and takes what it hears meanwhile (heartbeats and pushes); RDMA goes on
//! when the hold-down ends. A peer that hears a new incarnation of a node it considers up
//! declares it down and up again at once: bars it (the driver flushes the queue pair to
//! it), clears its TPT copy, answers with a heartbeat and pushes its own part; the node
//! stays barred until its push arrives (the TPT_CLEAR at the push's head, which this
//! variant applies). The hold-down then only has to cover the time until every peer has
//! heard the first beat and flushed, and what those peers had already put on the wire
//! has arrived.

use bitvec::prelude::*;

use crate::control::ControlMessage;
use crate::rejoin::{Action, Event, MembershipError, Tick};
use crate::NodeId;

/// Configuration of the heartbeat baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeartbeatConfig {
    /// This node's number.
    pub node: NodeId,
    /// The maximum node count.
    pub max_nodes: usize,
    /// Time between two heartbeats.
    pub period: Tick,
    /// Silence after which a peer is declared down (longer than `period`).
    pub timeout: Tick,
    /// Silence, RDMA off, after boot before the first heartbeat (0: none; see the module
    /// docs). With `incarnation_beats`: RDMA off for this long after boot, beating from
    /// the start.
    pub hold_down: Tick,
    /// Heartbeats carry the incarnation: the variant of the module docs.
    pub incarnation_beats: bool,
}

impl HeartbeatConfig {
    /// The hold-down that makes the baseline safe: a peer that heard the node's last
    /// heartbeat just before it went down declares it down at most `timeout + period` later
    /// (it checks once per period; one more period of margin), and a request its NIC had
    /// already sent may still be retransmitted for `retransmit_span` after that (the NIC's
    /// retry limit times its retry timeout): 000 \[0007\], user-level processes cannot see
    /// what the NIC still has in flight.
    pub fn safe_hold_down(period: Tick, timeout: Tick, retransmit_span: Tick) -> Tick {
        timeout + 2 * period + retransmit_span
    }
}

impl HeartbeatConfig {
    pub(crate) fn check(&self) -> Result<(), MembershipError> {
        if self.node as usize >= self.max_nodes {
            return Err(MembershipError::BadConfig(format!(
                "node {} must be below max_nodes {}",
                self.node, self.max_nodes
            )));
        }
        if self.period == 0 || self.timeout <= self.period {
            return Err(MembershipError::BadConfig(format!(
                "heartbeat period must be positive and below the timeout (period {}, timeout {})",
                self.period, self.timeout
            )));
        }
        Ok(())
    }
}

/// The heartbeat baseline's state machine for one node.
#[derive(Clone, Debug)]
pub struct HeartbeatMachine {
    config: HeartbeatConfig,
    booted: bool,
    node_count: usize,
    last_seen: Vec<Tick>,
    up: BitVec,
    next_beat: Tick,
    /// End of the hold-down (`None` once it is over).
    holding_until: Option<Tick>,
    /// This boot's incarnation.
    incarnation: u32,
    /// Incarnation variant: the incarnation each peer last beat with.
    peer_incarnation: Vec<Option<u32>>,
    /// Incarnation variant: peers seen with a new incarnation, barred until their push.
    awaiting_push: BitVec,
    /// Peers admitted whose push has not come yet, and when this node admitted them or
    /// last asked for it (TPT_REQUEST).
    push_pending: BitVec,
    asked_at: Vec<Tick>,
}

impl HeartbeatMachine {
    /// A machine waiting for [`Event::Boot`].
    pub fn new(config: HeartbeatConfig) -> Result<Self, MembershipError> {
        config.check()?;
        let n = config.max_nodes;
        Ok(HeartbeatMachine {
            config,
            booted: false,
            node_count: 0,
            last_seen: vec![0; n],
            up: bitvec![0; n],
            next_beat: 0,
            holding_until: None,
            incarnation: 0,
            peer_incarnation: vec![None; n],
            awaiting_push: bitvec![0; n],
            push_pending: bitvec![0; n],
            asked_at: vec![0; n],
        })
    }

    /// The configuration.
    pub fn config(&self) -> &HeartbeatConfig {
        &self.config
    }

    /// Whether `node` is currently considered up.
    pub fn is_up(&self, node: NodeId) -> bool {
        self.up.get(node as usize).map(|b| *b).unwrap_or(false)
    }

    /// Whether the machine has booted and its hold-down is over.
    pub fn is_joined(&self) -> bool {
        self.booted && self.holding_until.is_none()
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
                if self.booted {
                    return Err(MembershipError::AlreadyBooted);
                }
                if node_count <= self.config.node as usize || node_count > self.config.max_nodes {
                    return Err(MembershipError::BadNodeCount {
                        node_count,
                        node: self.config.node,
                        max_nodes: self.config.max_nodes,
                    });
                }
                self.booted = true;
                self.node_count = node_count;
                self.incarnation = incarnation;
                if self.config.hold_down > 0 {
                    let until = now.saturating_add(self.config.hold_down);
                    self.holding_until = Some(until);
                    out.push(Action::SetEnables {
                        send_recv: true,
                        rdma: false,
                    });
                    if self.config.incarnation_beats {
                        self.beat(now, &mut out);
                    } else {
                        out.push(Action::SetTimer { at: until });
                    }
                } else {
                    self.start(now, &mut out);
                }
            }
            _ if !self.booted => return Err(MembershipError::NotBooted),
            Event::Timeout if self.config.incarnation_beats => {
                if self.holding_until.is_some_and(|t| now >= t) {
                    self.holding_until = None;
                    out.push(Action::SetEnables {
                        send_recv: true,
                        rdma: true,
                    });
                    out.push(Action::RejoinComplete);
                }
                if now >= self.next_beat {
                    self.declare_silent_down(now, &mut out);
                    self.ask_for_pushes(now, &mut out);
                    self.beat(now, &mut out);
                } else {
                    out.push(Action::SetTimer {
                        at: self.next_timer(),
                    });
                }
            }
            Event::Timeout if self.holding_until.is_some() => {
                if self.holding_until.is_some_and(|t| now >= t) {
                    self.holding_until = None;
                    self.start(now, &mut out);
                } else if let Some(at) = self.holding_until {
                    out.push(Action::SetTimer { at });
                }
            }
            // Silent during the hold-down: nothing heard counts yet.
            Event::ControlReceived { from, .. }
                if self.holding_until.is_some() && !self.config.incarnation_beats =>
            {
                self.check_node(from)?;
            }
            Event::ControlReceived { from, message } => {
                let x = self.check_node(from)?;
                match message {
                    ControlMessage::Heartbeat => {
                        self.last_seen[x] = now;
                        if !self.up[x] {
                            self.admit(now, x, &mut out);
                        }
                    }
                    ControlMessage::HeartbeatIncarnation { incarnation } => {
                        self.last_seen[x] = now;
                        let known = self.peer_incarnation[x];
                        self.peer_incarnation[x] = Some(incarnation);
                        if !self.up[x] {
                            self.admit(now, x, &mut out);
                        } else if known.is_some_and(|k| k != incarnation) {
                            // A reboot, seen at its first beat: down and up again at
                            // once, barred until the node's push arrives.
                            self.declare_down(x, &mut out);
                            self.up.set(x, true);
                            self.awaiting_push.set(x, true);
                            out.push(Action::ResumeTptUpdates { node: from });
                            out.push(Action::Send {
                                to: from,
                                message: self.heartbeat_message(),
                            });
                            out.push(Action::PushLocalTpt { node: from });
                            self.expect_push(now, x);
                        }
                    }
                    // A push has come. The variant applies the clear at its head (the
                    // prior art only adds entries), and the push ends the bar of a
                    // rebooted node.
                    ControlMessage::TptClear if self.up[x] => {
                        self.push_pending.set(x, false);
                        if self.config.incarnation_beats {
                            out.push(Action::ClearRemoteTpt { node: from });
                            if self.awaiting_push[x] {
                                self.awaiting_push.set(x, false);
                                out.push(Action::Unbar { node: from });
                            }
                        }
                    }
                    ControlMessage::TptRequest if self.up[x] => {
                        out.push(Action::PushLocalTpt { node: from })
                    }
                    ControlMessage::TptUpdate(update) if self.up[x] => {
                        out.push(Action::ApplyTptUpdate { from, update })
                    }
                    ControlMessage::TptRemove(remove) if self.up[x] => {
                        out.push(Action::ApplyTptRemove { from, remove })
                    }
                    _ => {}
                }
            }
            Event::HardwareNack { from, .. }
            | Event::ResponderRestarted { from }
            | Event::FenceDrained { node: from } => {
                self.check_node(from)?;
            }
            Event::Timeout => {
                if now >= self.next_beat {
                    self.declare_silent_down(now, &mut out);
                    self.ask_for_pushes(now, &mut out);
                    self.beat(now, &mut out);
                }
            }
        }
        Ok(out)
    }

    /// Declares down every peer silent for longer than the timeout.
    fn declare_silent_down(&mut self, now: Tick, out: &mut Vec<Action>) {
        let down: Vec<usize> = self
            .up
            .iter_ones()
            .filter(|&x| now.saturating_sub(self.last_seen[x]) > self.config.timeout)
            .collect();
        for x in down {
            self.declare_down(x, out);
        }
    }

    fn declare_down(&mut self, x: usize, out: &mut Vec<Action>) {
        let node = x as NodeId;
        self.up.set(x, false);
        self.awaiting_push.set(x, false);
        self.push_pending.set(x, false);
        out.push(Action::Bar { node });
        out.push(Action::StopTptUpdates { node });
        out.push(Action::ClearRemoteTpt { node });
    }

    /// Heard from `x`, which was down: up again, and the TPT part pushed to it.
    fn admit(&mut self, now: Tick, x: usize, out: &mut Vec<Action>) {
        let node = x as NodeId;
        self.up.set(x, true);
        out.push(Action::Unbar { node });
        out.push(Action::ResumeTptUpdates { node });
        // A heartbeat first, so the peer considers this node up (and applies the push)
        // even if its own next beat is late.
        out.push(Action::Send {
            to: node,
            message: self.heartbeat_message(),
        });
        out.push(Action::PushLocalTpt { node });
        self.expect_push(now, x);
    }

    /// `x` was admitted: its push should come; asked for after a timeout without it.
    fn expect_push(&mut self, now: Tick, x: usize) {
        self.push_pending.set(x, true);
        self.asked_at[x] = now;
    }

    /// Asks the peers admitted a timeout ago or more whose push has not come for it (again).
    fn ask_for_pushes(&mut self, now: Tick, out: &mut Vec<Action>) {
        let due: Vec<usize> = self
            .push_pending
            .iter_ones()
            .filter(|&x| self.up[x] && now.saturating_sub(self.asked_at[x]) >= self.config.timeout)
            .collect();
        for x in due {
            self.asked_at[x] = now;
            out.push(Action::Send {
                to: x as NodeId,
                message: ControlMessage::TptRequest,
            });
        }
    }

    fn heartbeat_message(&self) -> ControlMessage {
        if self.config.incarnation_beats {
            ControlMessage::HeartbeatIncarnation {
                incarnation: self.incarnation,
            }
        } else {
            ControlMessage::Heartbeat
        }
    }

    /// The next time the machine needs a [`Event::Timeout`]: the next beat, or the end of
    /// the hold-down if sooner.
    fn next_timer(&self) -> Tick {
        self.holding_until
            .map_or(self.next_beat, |t| t.min(self.next_beat))
    }

    /// The prior art's weakness: RDMA on at once (after any hold-down).
    fn start(&mut self, now: Tick, out: &mut Vec<Action>) {
        out.push(Action::SetEnables {
            send_recv: true,
            rdma: true,
        });
        out.push(Action::RejoinComplete);
        self.beat(now, out);
    }

    fn beat(&mut self, now: Tick, out: &mut Vec<Action>) {
        let others: Vec<NodeId> = self.others().collect();
        let message = self.heartbeat_message();
        for to in others {
            out.push(Action::Send {
                to,
                message: message.clone(),
            });
        }
        self.next_beat = now.saturating_add(self.config.period);
        out.push(Action::SetTimer {
            at: self.next_timer(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_go_down_after_silence_and_up_on_heartbeat() {
        let mut m = HeartbeatMachine::new(HeartbeatConfig {
            node: 0,
            max_nodes: 4,
            period: 10,
            timeout: 25,
            hold_down: 0,
            incarnation_beats: false,
        })
        .unwrap();
        let a = m
            .handle(
                0,
                Event::Boot {
                    node_count: 2,
                    incarnation: 0,
                },
            )
            .unwrap();
        assert_eq!(
            a[0],
            Action::SetEnables {
                send_recv: true,
                rdma: true
            }
        );
        let a = m
            .handle(
                3,
                Event::ControlReceived {
                    from: 1,
                    message: ControlMessage::Heartbeat,
                },
            )
            .unwrap();
        assert_eq!(
            a,
            vec![
                Action::Unbar { node: 1 },
                Action::ResumeTptUpdates { node: 1 },
                Action::Send {
                    to: 1,
                    message: ControlMessage::Heartbeat
                },
                Action::PushLocalTpt { node: 1 }
            ]
        );
        assert!(m
            .handle(10, Event::Timeout)
            .unwrap()
            .iter()
            .all(|a| !matches!(a, Action::Bar { .. })));
        assert!(m
            .handle(20, Event::Timeout)
            .unwrap()
            .iter()
            .all(|a| !matches!(a, Action::Bar { .. })));
        let a = m.handle(30, Event::Timeout).unwrap();
        assert!(
            a.contains(&Action::Bar { node: 1 }) && a.contains(&Action::ClearRemoteTpt { node: 1 })
        );
        assert!(!m.is_up(1));
    }

    /// The prior art's push only adds entries: the TPT_CLEAR at its head changes nothing.
    #[test]
    fn tpt_clear_is_ignored() {
        let mut m = HeartbeatMachine::new(HeartbeatConfig {
            node: 0,
            max_nodes: 2,
            period: 10,
            timeout: 25,
            hold_down: 0,
            incarnation_beats: false,
        })
        .unwrap();
        m.handle(
            0,
            Event::Boot {
                node_count: 2,
                incarnation: 0,
            },
        )
        .unwrap();
        let heard = |message| Event::ControlReceived { from: 1, message };
        m.handle(1, heard(ControlMessage::Heartbeat)).unwrap();
        assert!(m.is_up(1));
        assert!(m
            .handle(2, heard(ControlMessage::TptClear))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn bad_config_is_refused() {
        assert!(HeartbeatMachine::new(HeartbeatConfig {
            node: 0,
            max_nodes: 2,
            period: 10,
            timeout: 10,
            hold_down: 0,
            incarnation_beats: false,
        })
        .is_err());
        assert!(HeartbeatMachine::new(HeartbeatConfig {
            node: 2,
            max_nodes: 2,
            period: 1,
            timeout: 10,
            hold_down: 0,
            incarnation_beats: false,
        })
        .is_err());
    }

    #[test]
    fn hold_down_keeps_rdma_off_and_silent_until_it_ends() {
        let mut m = HeartbeatMachine::new(HeartbeatConfig {
            node: 0,
            max_nodes: 2,
            period: 10,
            timeout: 25,
            hold_down: HeartbeatConfig::safe_hold_down(10, 25, 0),
            incarnation_beats: false,
        })
        .unwrap();
        let a = m
            .handle(
                100,
                Event::Boot {
                    node_count: 2,
                    incarnation: 0,
                },
            )
            .unwrap();
        assert_eq!(
            a,
            vec![
                Action::SetEnables {
                    send_recv: true,
                    rdma: false
                },
                Action::SetTimer { at: 145 }
            ]
        );
        assert!(!m.is_joined());
        let heard = Event::ControlReceived {
            from: 1,
            message: ControlMessage::Heartbeat,
        };
        assert!(m.handle(120, heard.clone()).unwrap().is_empty());
        assert_eq!(
            m.handle(130, Event::Timeout).unwrap(),
            vec![Action::SetTimer { at: 145 }]
        );
        let a = m.handle(145, Event::Timeout).unwrap();
        assert_eq!(
            a[0],
            Action::SetEnables {
                send_recv: true,
                rdma: true
            }
        );
        assert!(a.contains(&Action::Send {
            to: 1,
            message: ControlMessage::Heartbeat
        }));
        assert!(m.is_joined());
        assert!(
            !m.is_up(1),
            "heartbeats heard during the hold-down do not count"
        );
    }

    fn variant(hold_down: Tick) -> HeartbeatMachine {
        HeartbeatMachine::new(HeartbeatConfig {
            node: 0,
            max_nodes: 4,
            period: 10,
            timeout: 25,
            hold_down,
            incarnation_beats: true,
        })
        .unwrap()
    }

    fn beat(incarnation: u32) -> Event {
        Event::ControlReceived {
            from: 1,
            message: ControlMessage::HeartbeatIncarnation { incarnation },
        }
    }

    /// The variant beats with its incarnation from boot, RDMA off until the hold-down ends,
    /// and takes what it hears meanwhile.
    #[test]
    fn incarnation_variant_beats_during_the_hold_down() {
        let mut m = variant(15);
        let a = m
            .handle(
                100,
                Event::Boot {
                    node_count: 2,
                    incarnation: 7,
                },
            )
            .unwrap();
        assert_eq!(
            a,
            vec![
                Action::SetEnables {
                    send_recv: true,
                    rdma: false
                },
                Action::Send {
                    to: 1,
                    message: ControlMessage::HeartbeatIncarnation { incarnation: 7 }
                },
                Action::SetTimer { at: 110 }
            ]
        );
        let a = m.handle(103, beat(9)).unwrap();
        assert!(
            a.contains(&Action::Unbar { node: 1 }) && a.contains(&Action::PushLocalTpt { node: 1 })
        );
        assert!(m.is_up(1) && !m.is_joined());
        let a = m.handle(110, Event::Timeout).unwrap();
        assert!(!a
            .iter()
            .any(|a| matches!(a, Action::SetEnables { rdma: true, .. })));
        assert!(a.contains(&Action::SetTimer { at: 115 }));
        let a = m.handle(115, Event::Timeout).unwrap();
        assert_eq!(
            a,
            vec![
                Action::SetEnables {
                    send_recv: true,
                    rdma: true
                },
                Action::RejoinComplete,
                Action::SetTimer { at: 120 }
            ]
        );
        assert!(m.is_joined());
    }

    /// A new incarnation of a node that is up: down and up at once (bar, clear, answer,
    /// push), barred until the node's push (its TPT_CLEAR) arrives.
    #[test]
    fn a_new_incarnation_is_a_reboot_at_the_first_beat() {
        let mut m = variant(0);
        m.handle(
            0,
            Event::Boot {
                node_count: 2,
                incarnation: 7,
            },
        )
        .unwrap();
        m.handle(1, beat(9)).unwrap();
        assert!(m.handle(5, beat(9)).unwrap().is_empty(), "same incarnation");
        let a = m.handle(6, beat(4)).unwrap();
        assert_eq!(
            a,
            vec![
                Action::Bar { node: 1 },
                Action::StopTptUpdates { node: 1 },
                Action::ClearRemoteTpt { node: 1 },
                Action::ResumeTptUpdates { node: 1 },
                Action::Send {
                    to: 1,
                    message: ControlMessage::HeartbeatIncarnation { incarnation: 7 }
                },
                Action::PushLocalTpt { node: 1 },
            ]
        );
        let heard = |message| Event::ControlReceived { from: 1, message };
        assert_eq!(
            m.handle(7, heard(ControlMessage::TptClear)).unwrap(),
            vec![
                Action::ClearRemoteTpt { node: 1 },
                Action::Unbar { node: 1 }
            ]
        );
        assert_eq!(
            m.handle(8, heard(ControlMessage::TptClear)).unwrap(),
            vec![Action::ClearRemoteTpt { node: 1 }],
            "unbarred once; a push right after this node's own is not answered"
        );
    }

    /// Carries `actions` of node `from` to the machine `to` as the driver would: sends as
    /// they are, a push as its TPT_CLEAR head; returns what `to` does.
    fn deliver(
        from: NodeId,
        actions: &[Action],
        to: &mut HeartbeatMachine,
        now: Tick,
    ) -> Vec<Action> {
        let mut out = vec![];
        for a in actions {
            let message = match a {
                Action::Send { message, .. } => message.clone(),
                Action::PushLocalTpt { .. } => ControlMessage::TptClear,
                _ => continue,
            };
            out.extend(
                to.handle(now, Event::ControlReceived { from, message })
                    .unwrap(),
            );
        }
        out
    }

    /// A push can be lost: B's push reaches A after A declared B down again (B's beats are
    /// late under load), and the membership drops it although the control stream delivered
    /// it; B, which never saw A down, has no reason to push again. When A admits B again,
    /// B must push its part to A. (Without this A's copy of B stayed empty and B was never
    /// usable by all peers: the baseline runs that never finished, found at 16 and 64 hosts
    /// with heartbeats late under load.)
    #[test]
    fn a_node_admitted_again_pushes_its_part_back() {
        let config = |node| HeartbeatConfig {
            node,
            max_nodes: 2,
            period: 10,
            timeout: 25,
            hold_down: 0,
            incarnation_beats: false,
        };
        let mut a = HeartbeatMachine::new(config(0)).unwrap();
        let mut b = HeartbeatMachine::new(config(1)).unwrap();
        let boot = Event::Boot {
            node_count: 2,
            incarnation: 0,
        };
        let a_beat = a.handle(0, boot.clone()).unwrap();
        let b_beat = b.handle(0, boot).unwrap();
        // A admits B (and pushes); B admits A on A's beat, pushes too.
        let a_admits = deliver(1, &b_beat, &mut a, 1);
        let b_admits = deliver(0, &a_beat, &mut b, 1);
        deliver(0, &a_admits, &mut b, 2);
        // B's beats are late: A declares B down before B's push arrives, and drops it.
        let down = a.handle(30, Event::Timeout).unwrap();
        assert!(down.contains(&Action::ClearRemoteTpt { node: 1 }));
        let push: Vec<Action> = b_admits
            .iter()
            .filter(|x| matches!(x, Action::PushLocalTpt { .. }))
            .cloned()
            .collect();
        assert!(deliver(1, &push, &mut a, 31)
            .iter()
            .all(|x| !matches!(x, Action::ApplyTptUpdate { .. })));
        // B's next beat: A admits B again; B, still seeing A up, gets what A sends.
        let again = deliver(
            1,
            &[Action::Send {
                to: 0,
                message: ControlMessage::Heartbeat,
            }],
            &mut a,
            35,
        );
        assert!(again.contains(&Action::Unbar { node: 1 }));
        assert!(
            deliver(0, &again, &mut b, 36)
                .iter()
                .all(|x| !matches!(x, Action::PushLocalTpt { .. })),
            "B saw A up all along: it does not push on A's push"
        );
        // A timeout later B's push has not come: A asks for it.
        assert!(a
            .handle(45, Event::Timeout)
            .unwrap()
            .iter()
            .all(|x| !matches!(
                x,
                Action::Send {
                    message: ControlMessage::TptRequest,
                    ..
                }
            )));
        for t in [50, 60] {
            a.handle(
                t,
                Event::ControlReceived {
                    from: 1,
                    message: ControlMessage::Heartbeat,
                },
            )
            .unwrap();
        }
        let ask = a.handle(65, Event::Timeout).unwrap();
        assert!(ask.contains(&Action::Send {
            to: 1,
            message: ControlMessage::TptRequest
        }));
        let back = deliver(0, &ask, &mut b, 66);
        assert!(
            back.contains(&Action::PushLocalTpt { node: 0 }),
            "B pushes its part to A again: {back:?}"
        );
        // The push arrives: A asks no more, and nothing answers it.
        let end = deliver(1, &back, &mut a, 67);
        assert!(a
            .handle(95, Event::Timeout)
            .unwrap()
            .iter()
            .all(|x| !matches!(
                x,
                Action::Send {
                    message: ControlMessage::TptRequest,
                    ..
                }
            )));
        assert!(
            end.iter()
                .all(|x| !matches!(x, Action::PushLocalTpt { .. } | Action::Send { .. })),
            "{end:?}"
        );
    }
}
