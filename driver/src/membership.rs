//! The membership protocol a driver runs, chosen by configuration: the rejoin protocol of
//! 000 ([`crate::rejoin`]) or the heartbeat baseline of 000 \[0006\] ([`crate::heartbeat`]).
//! Both take the same [`Event`]s and return the same [`Action`]s.

use crate::heartbeat::{HeartbeatConfig, HeartbeatMachine};
use crate::rejoin::{Action, Event, MembershipError, RejoinConfig, RejoinMachine, Tick};
use crate::NodeId;

/// Which protocol to run, with its configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// The rejoin protocol of 000 Figs. 7-8.
    Rejoin(RejoinConfig),
    /// The heartbeat baseline of 000 \[0006\].
    Heartbeat(HeartbeatConfig),
}

impl Protocol {
    /// This node's number.
    pub fn node(&self) -> NodeId {
        match self {
            Protocol::Rejoin(c) => c.node,
            Protocol::Heartbeat(c) => c.node,
        }
    }

    /// How long the driver waits for an answer before sending a message of its own
    /// protocols again (a TPT_REMOVE not yet confirmed, [`crate::dereg`]): the rejoin
    /// protocol's `resend_timeout`, or the heartbeat's `timeout`.
    pub fn resend_interval(&self) -> Tick {
        match self {
            Protocol::Rejoin(c) => c.resend_timeout,
            Protocol::Heartbeat(c) => c.timeout,
        }
    }

    /// The maximum node count.
    pub fn max_nodes(&self) -> usize {
        match self {
            Protocol::Rejoin(c) => c.max_nodes,
            Protocol::Heartbeat(c) => c.max_nodes,
        }
    }
}

/// A membership state machine of either protocol.
#[derive(Clone, Debug)]
pub enum Membership {
    /// The rejoin protocol.
    Rejoin(RejoinMachine),
    /// The heartbeat baseline.
    Heartbeat(HeartbeatMachine),
}

impl Membership {
    /// A machine for `protocol`, waiting for [`Event::Boot`].
    pub fn new(protocol: Protocol) -> Result<Self, MembershipError> {
        Ok(match protocol {
            Protocol::Rejoin(c) => Membership::Rejoin(RejoinMachine::new(c)?),
            Protocol::Heartbeat(c) => Membership::Heartbeat(HeartbeatMachine::new(c)?),
        })
    }

    /// Feeds one event at time `now`; returns the actions to carry out, in order.
    pub fn handle(&mut self, now: Tick, event: Event) -> Result<Vec<Action>, MembershipError> {
        match self {
            Membership::Rejoin(m) => m.handle(now, event),
            Membership::Heartbeat(m) => m.handle(now, event),
        }
    }

    /// Whether this node has joined (its RDMA is enabled).
    pub fn is_joined(&self) -> bool {
        match self {
            Membership::Rejoin(m) => m.is_joined(),
            Membership::Heartbeat(m) => m.is_joined(),
        }
    }
}
