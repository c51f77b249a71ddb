//! The baseline the rejoin protocol is measured against: the heartbeat scheme that source
//! document 000 describes as prior art in paragraph \[0006\].
//!
//! Every node sends HEARTBEAT to every other node each `period`. A node declares a peer
//! down when it has heard nothing from it for `timeout`: it bars the peer, stops TPT updates
//! to it and clears its TPT part. When heartbeats from the peer resume it declares it up
//! again: unbars it, resumes updates and pushes its local TPT part. A booting node enables
//! SEND/RECEIVE **and RDMA** at once and considers every peer down until it hears from it.
//!
//! Its weakness, which the tests demonstrate, is 000's point: a node that reboots faster
//! than `timeout` is never declared down, so its peers keep the TPT entries of its previous
//! boot and their RDMA writes land in its new memory. Hardware NACKs are ignored (in
//! \[0006\] only the heartbeat process tracks membership); TPT messages are applied from any
//! node currently considered up; BOOTING, ACK and RDMA_READY are ignored.

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

    /// Whether the machine has booted (it is joined from boot on).
    pub fn is_joined(&self) -> bool {
        self.booted
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
            Event::Boot { node_count, .. } => {
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
                // The prior art's weakness: RDMA on at once.
                out.push(Action::SetEnables {
                    send_recv: true,
                    rdma: true,
                });
                out.push(Action::RejoinComplete);
                self.beat(now, &mut out);
            }
            _ if !self.booted => return Err(MembershipError::NotBooted),
            Event::ControlReceived { from, message } => {
                let x = self.check_node(from)?;
                match message {
                    ControlMessage::Heartbeat => {
                        self.last_seen[x] = now;
                        if !self.up[x] {
                            self.up.set(x, true);
                            out.push(Action::Unbar { node: from });
                            out.push(Action::ResumeTptUpdates { node: from });
                            out.push(Action::PushLocalTpt { node: from });
                        }
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
                    let down: Vec<usize> = self
                        .up
                        .iter_ones()
                        .filter(|&x| now.saturating_sub(self.last_seen[x]) > self.config.timeout)
                        .collect();
                    for x in down {
                        let node = x as NodeId;
                        self.up.set(x, false);
                        out.push(Action::Bar { node });
                        out.push(Action::StopTptUpdates { node });
                        out.push(Action::ClearRemoteTpt { node });
                    }
                    self.beat(now, &mut out);
                }
            }
        }
        Ok(out)
    }

    fn beat(&mut self, now: Tick, out: &mut Vec<Action>) {
        let others: Vec<NodeId> = self.others().collect();
        for to in others {
            out.push(Action::Send {
                to,
                message: ControlMessage::Heartbeat,
            });
        }
        self.next_beat = now.saturating_add(self.config.period);
        out.push(Action::SetTimer { at: self.next_beat });
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

    #[test]
    fn bad_config_is_refused() {
        assert!(HeartbeatMachine::new(HeartbeatConfig {
            node: 0,
            max_nodes: 2,
            period: 10,
            timeout: 10
        })
        .is_err());
        assert!(HeartbeatMachine::new(HeartbeatConfig {
            node: 2,
            max_nodes: 2,
            period: 1,
            timeout: 10
        })
        .is_err());
    }
}
