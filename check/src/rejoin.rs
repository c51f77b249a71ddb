//! The rejoin protocol as a [`stateright`] model: every node owns a real
//! [`RejoinMachine`], and the model plays the driver and the network around it.
//!
//! # What a state holds
//!
//! - Per node: off, or on with its machine, its boot number (the *epoch*, used as the
//!   machine's incarnation), whether its NIC accepts RDMA, its copy of every peer's TPT part
//!   (as the set of the peer's epochs whose entries it holds: a TPT_UPDATE carries one entry
//!   whose handle is the sender's epoch, as the simulation draws handles from a per-boot
//!   range), its running fences, and the newest epoch of each peer it has had a control
//!   message from.
//! - Per ordered pair of nodes, a FIFO link of messages: bundles of control messages (the
//!   driver sends what it queued for one node in one SEND: BOOTING and the TPT push behind
//!   it, an ACK and RDMA_READY), RDMA requests tagged with the epoch of the target's TPT
//!   entry they use, and hardware NACKs (RDMA_DISABLED from a node whose RDMA is off,
//!   PORT_DOWN from the fabric for a node that is off).
//! - What is left of the fault budget (reboots, losses), and whether a stale RDMA request
//!   has landed.
//!
//! # Actions
//!
//! Power a node on (a new machine, [`Event::Boot`] with the next epoch), power it off
//! (counts against the reboot budget; its outgoing links drop what they carry, as a port
//! that goes down does, while what is on the way *to* it stays and reaches its next boot or
//! is answered PORT_DOWN), deliver the head of a link, lose the head of a link (counts
//! against the loss budget), fire a node's timer ([`Event::Timeout`], whenever the machine
//! has a deadline), report a fence drained ([`Event::FenceDrained`], once no request the
//! node issued to that peer before the fence is still in the link), and issue an RDMA
//! request to a peer the node considers usable (not barred, a TPT copy held; one request
//! per pair in flight).
//!
//! Time is abstract: every event is fed at [`NOW`], the largest tick, so every deadline the
//! machine sets saturates to it and a pending timer may fire at any point, before or after
//! any delivery (the model does not relate the resend timeout to message delays).
//!
//! # Properties
//!
//! - [`STALE_REQUEST_REACHABLE`] (always): no node has RDMA enabled while an RDMA request
//!   tagged with an earlier epoch of it is in a link toward it.
//! - [`STALE_ACCESS_LANDED`] (always): no RDMA request of an earlier epoch of its target was
//!   delivered while the target's RDMA was enabled (the effect the first property guards).
//! - [`STALE_TPT_COPY`] (always): a node that has a peer unbarred holds, of that peer's TPT,
//!   only entries of the newest epoch of the peer it has heard from.
//! - [`MACHINE_ACCEPTS`] (always): the machine returns no error for any event the model
//!   feeds it.
//! - [`CONVERGES`] (always, a liveness check): from this state, if no fault happens any more
//!   (no loss, no power change) every node that is on becomes usable by every other node
//!   that is on: it has joined, is unbarred and receives TPT updates everywhere, and every
//!   peer holds its TPT part of its current epoch. The check runs one fault-free
//!   continuation, a function of the state alone: fences are reported as soon as they
//!   drain, then links are delivered (lowest link first) until all are empty, and only then
//!   do timers fire, every pending one in a round (resend timeout longer than any round
//!   trip). It fails if that run gets
//!   stuck or does not reach the goal within [`CONVERGE_STEPS`] steps. Runs are memoised:
//!   every state a successful run passes through is known to converge.
//!
//! Checking the continuation from *every* reachable state, not only from those whose fault
//! budget is spent, states "once faults stop" for every point at which they can stop.
//!
//! # Symmetry
//!
//! [`Cluster::renumbered`] renames the nodes of a state (their machines with
//! `RejoinMachine::renumbered`); the protocol and the model treat node numbers alike, so a
//! renamed state behaves as the original, renamed, and has the same verdicts
//! (`check/tests/symmetry.rs` checks this step by step). [`Cluster::canonical`] picks one
//! representative per class of renamed states; the checker stores only representatives'
//! fingerprints, and the liveness continuation starts from the representative.

use std::collections::{HashSet, VecDeque};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Mutex;

use nic_abi::Syndrome;
use nic_driver::control::{ControlMessage, TptUpdate};
use nic_driver::rejoin::{Action, Event, RejoinConfig, RejoinMachine, Tick};
use nic_driver::tpt::{Protection, TptEntry};
use nic_driver::NodeId;
use stateright::{Model, Property, Representative};

/// The time every event is fed at (see the module docs).
pub const NOW: Tick = Tick::MAX;

/// The resend timeout given to the machines (any positive value: deadlines saturate).
const RESEND: Tick = 1;

/// Longest fault-free continuation [`CONVERGES`] runs before it gives up.
pub const CONVERGE_STEPS: usize = 2000;

/// Property names.
pub const STALE_REQUEST_REACHABLE: &str =
    "no RDMA-enabled node can be reached by a request of its earlier epoch";
/// See the module docs.
pub const STALE_ACCESS_LANDED: &str = "no stale RDMA access lands";
/// See the module docs.
pub const STALE_TPT_COPY: &str = "an unbarred peer's TPT copy is of its newest epoch heard";
/// See the module docs.
pub const MACHINE_ACCEPTS: &str = "the machine accepts every event";
/// See the module docs.
pub const CONVERGES: &str = "once faults stop, every live node becomes usable by all";

/// A deliberate defect of the driver glue, to show that a property can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bug {
    /// The NIC's RDMA is enabled at boot, whatever the machine says.
    RdmaAtBoot,
    /// A fence drains at once, whatever is still in flight.
    SkipFence,
    /// A TPT copy is never cleared (ClearRemoteTpt ignored): entries of a peer's earlier
    /// epoch stay beside those of its new one.
    KeepStaleTpt,
    /// BOOTING is not sent again on a timeout.
    NoResendOnTimeout,
    /// RDMA_READY is never sent.
    NoRdmaReady,
}

impl Bug {
    /// Every bug, with its command-line name.
    pub const ALL: [(&'static str, Bug); 5] = [
        ("rdma-at-boot", Bug::RdmaAtBoot),
        ("skip-fence", Bug::SkipFence),
        ("keep-stale-tpt", Bug::KeepStaleTpt),
        ("no-resend", Bug::NoResendOnTimeout),
        ("no-rdma-ready", Bug::NoRdmaReady),
    ];

    /// The bug named `name` (see [`Bug::ALL`]).
    pub fn from_name(name: &str) -> Result<Bug, String> {
        Bug::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| *b)
            .ok_or_else(|| {
                let names: Vec<&str> = Bug::ALL.iter().map(|(n, _)| *n).collect();
                format!("unknown bug {name:?}: one of {}", names.join(", "))
            })
    }
}

/// The bounds of one check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Nodes (2 to 8).
    pub nodes: usize,
    /// Power-offs allowed (each node may power on again after one).
    pub reboots: u8,
    /// Messages the network may lose.
    pub losses: u8,
    /// Messages a link may hold; states with a fuller link are not explored.
    pub link_capacity: usize,
    /// Nodes issue RDMA requests to the peers they consider usable.
    pub rdma_requests: bool,
    /// RDMA requests (and their NACKs) travel on a FIFO of their own per pair, not ordered
    /// with the control messages (several queue pairs, a multi-path fabric).
    pub rdma_own_path: bool,
    /// Where the check starts.
    pub start: Start,
    /// Explore paths of at most this many steps (`None`: all).
    pub max_depth: Option<usize>,
    /// Symmetry reduction: states that differ only in the nodes' numbers are explored
    /// once (see [`Cluster::canonical`]). Applies to checks without `max_depth` only
    /// (they search depth-first; a depth bound needs breadth-first search, which stateright
    /// runs without symmetry).
    pub symmetry: bool,
}

/// The state a check starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Every node off: the cluster's first boot, in any order (crossing BOOTINGs).
    Cold,
    /// Every node on, joined and usable by all, nothing in flight: rejoins after reboots.
    Joined,
}

impl Bounds {
    /// The bound of the default test suite: 3 nodes, one reboot, one loss.
    pub fn small() -> Self {
        Bounds {
            nodes: 3,
            reboots: 1,
            losses: 1,
            link_capacity: 3,
            rdma_requests: true,
            rdma_own_path: false,
            start: Start::Joined,
            max_depth: None,
            symmetry: true,
        }
    }

    /// Checks the bounds, naming what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if !(2..=8).contains(&self.nodes) {
            return Err(format!("nodes must be 2 to 8, got {}", self.nodes));
        }
        if self.reboots > 6 {
            return Err(format!("reboots must be at most 6, got {}", self.reboots));
        }
        if self.link_capacity == 0 {
            return Err("link_capacity must be at least 1".into());
        }
        Ok(())
    }
}

/// A control message as it travels (the four the machine sends, and the push).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ctl {
    /// BOOTING of an incarnation.
    Booting(u32),
    /// PROBE of an incarnation.
    Probe(u32),
    /// ACK to the BOOTING or PROBE of `incarnation`.
    Ack {
        /// The incarnation answered.
        incarnation: u32,
        /// The sender has joined.
        joined: bool,
    },
    /// RDMA_READY of an incarnation.
    RdmaReady(u32),
    /// TPT_CLEAR (start of a push).
    TptClear,
    /// TPT_UPDATE with the sender's entries of epoch `.0`.
    TptUpdate(u32),
}

impl Ctl {
    /// Whether the driver sends it on its reliable stream (RDMA_READY and the TPT
    /// messages: never lost, see `nic_driver::control`); the others are datagrams.
    pub fn is_sequenced(&self) -> bool {
        matches!(self, Ctl::RdmaReady(_) | Ctl::TptClear | Ctl::TptUpdate(_))
    }

    fn from_message(m: &ControlMessage) -> Option<Ctl> {
        Some(match *m {
            ControlMessage::Booting { incarnation } => Ctl::Booting(incarnation),
            ControlMessage::Probe { incarnation } => Ctl::Probe(incarnation),
            ControlMessage::Ack {
                incarnation,
                joined,
            } => Ctl::Ack {
                incarnation,
                joined,
            },
            ControlMessage::RdmaReady { incarnation } => Ctl::RdmaReady(incarnation),
            _ => return None,
        })
    }

    fn to_message(&self) -> ControlMessage {
        match *self {
            Ctl::Booting(incarnation) => ControlMessage::Booting { incarnation },
            Ctl::Probe(incarnation) => ControlMessage::Probe { incarnation },
            Ctl::Ack {
                incarnation,
                joined,
            } => ControlMessage::Ack {
                incarnation,
                joined,
            },
            Ctl::RdmaReady(incarnation) => ControlMessage::RdmaReady { incarnation },
            Ctl::TptClear => ControlMessage::TptClear,
            Ctl::TptUpdate(epoch) => ControlMessage::TptUpdate(
                TptUpdate::new(vec![TptEntry {
                    handle: epoch,
                    logical: 0x1000,
                    physical: 0x1000,
                    length: 64,
                    protection: Protection::ReadWrite,
                }])
                .expect("one valid entry"),
            ),
        }
    }
}

/// What a message carries.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Body {
    /// Control messages sent in one SEND.
    Control(Vec<Ctl>),
    /// An RDMA request using the target's TPT entry of `target_epoch`.
    Rdma {
        /// The target's epoch the entry came from.
        target_epoch: u32,
    },
    /// A hardware NACK for a request of the receiver's boot `requester_epoch`.
    Nack {
        /// The syndrome.
        syndrome: Syndrome,
        /// The requester's epoch when it sent the request.
        requester_epoch: u32,
    },
}

/// A message in a link.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Msg {
    /// What it carries.
    pub body: Body,
    /// The sender's epoch (0 for the fabric's PORT_DOWN).
    pub src_epoch: u32,
    /// A request issued before a running fence of its sender on its receiver.
    pub fenced: bool,
}

impl Msg {
    fn is_request(&self) -> bool {
        !matches!(self.body, Body::Nack { .. })
    }
}

/// A node that is on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Live {
    /// This boot's number (1 for the first), also the machine's incarnation.
    pub epoch: u32,
    /// The driver's protocol machine.
    pub machine: RejoinMachine,
    /// The NIC accepts RDMA requests.
    pub rdma: bool,
    /// Per peer: bit `e` set when the copy holds the peer's entries of epoch `e`.
    pub copy: Vec<u8>,
    /// Per peer: a fence is running.
    pub fence: Vec<bool>,
    /// Per peer: the newest epoch it had a control message from.
    pub heard: Vec<u32>,
}

/// One node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// Powered off after `epoch` boots.
    Off {
        /// Boots so far.
        epoch: u32,
    },
    /// Powered on.
    On(Box<Live>),
}

impl Node {
    /// The node's state when on.
    pub fn live(&self) -> Option<&Live> {
        match self {
            Node::On(l) => Some(l),
            Node::Off { .. } => None,
        }
    }

    fn live_mut(&mut self) -> Option<&mut Live> {
        match self {
            Node::On(l) => Some(l),
            Node::Off { .. } => None,
        }
    }
}

/// The whole cluster.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cluster {
    /// The nodes.
    pub nodes: Vec<Node>,
    /// Link `from * nodes + to`.
    pub links: Vec<VecDeque<Msg>>,
    /// Power-offs still allowed.
    pub reboots_left: u8,
    /// Losses still allowed.
    pub losses_left: u8,
    /// A stale RDMA request was delivered to an RDMA-enabled node.
    pub stale_landed: bool,
    /// The machine returned an error (with the event, for the report).
    pub machine_error: Option<String>,
}

impl Cluster {
    fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The same cluster with node `x` renamed `map[x]` (a permutation of the nodes): node
    /// `x`'s state (its machine renumbered, its per-peer vectors reordered) becomes node
    /// `map[x]`'s, link `a -> b` becomes link `map[a] -> map[b]`. Messages name no node
    /// (they carry epochs), so they move unchanged.
    pub fn renumbered(&self, map: &[usize]) -> Cluster {
        let n = self.node_count();
        fn moved<T: Clone>(v: &[T], map: &[usize]) -> Vec<T> {
            let mut r = v.to_vec();
            for (x, item) in v.iter().enumerate() {
                r[map[x]] = item.clone();
            }
            r
        }
        let ids: Vec<NodeId> = map.iter().map(|&y| y as NodeId).collect();
        let mut nodes = self.nodes.clone();
        for (x, node) in self.nodes.iter().enumerate() {
            nodes[map[x]] = match node {
                Node::Off { epoch } => Node::Off { epoch: *epoch },
                Node::On(l) => Node::On(Box::new(Live {
                    epoch: l.epoch,
                    machine: l
                        .machine
                        .renumbered(&ids)
                        .expect("a permutation of the model's nodes"),
                    rdma: l.rdma,
                    copy: moved(&l.copy, map),
                    fence: moved(&l.fence, map),
                    heard: moved(&l.heard, map),
                })),
            };
        }
        let mut links = self.links.clone();
        for (k, link) in self.links.iter().enumerate() {
            let (path, from, to) = (k / (n * n), k / n % n, k % n);
            links[path * n * n + map[from] * n + map[to]] = link.clone();
        }
        Cluster {
            nodes,
            links,
            machine_error: self.machine_error.clone(),
            ..*self
        }
    }

    /// The representative of the states that differ from this one only in the nodes'
    /// numbers, and the renumbering that gives it (`map`: node `x` of `self` is node
    /// `map[x]` of the representative). Every renumbering of a state has the same
    /// representative.
    ///
    /// Each node gets a key that does not depend on the numbering (its own state and the
    /// multiset of its per-peer state, links included, see [`Cluster::node_key`]); the
    /// renumberings that sort the nodes by key are tried (one, when the keys differ) and the
    /// one with the smallest fingerprint is taken.
    pub fn canonical(&self) -> (Cluster, Vec<usize>) {
        let n = self.node_count();
        let keys: Vec<u64> = (0..n).map(|x| self.node_key(x)).collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&x| keys[x]);
        // Runs of equal keys in `order`: any order within a run sorts the nodes.
        let mut candidates: Vec<Vec<usize>> = vec![Vec::new()];
        let mut start = 0;
        while start < n {
            let mut end = start + 1;
            while end < n && keys[order[end]] == keys[order[start]] {
                end += 1;
            }
            let run = &order[start..end];
            let mut next = Vec::new();
            for prefix in &candidates {
                for p in permutations(run.len()) {
                    let mut c = prefix.clone();
                    c.extend(p.iter().map(|&i| run[i]));
                    next.push(c);
                }
            }
            candidates = next;
            start = end;
        }
        let mut best: Option<(u64, Cluster, Vec<usize>)> = None;
        for sorted in candidates {
            // `sorted[k]` becomes node k.
            let mut map = vec![0; n];
            for (k, &x) in sorted.iter().enumerate() {
                map[x] = k;
            }
            let c = if map.iter().enumerate().all(|(x, &y)| x == y) {
                self.clone()
            } else {
                self.renumbered(&map)
            };
            let f = fingerprint(&c);
            if best.as_ref().is_none_or(|(bf, _, _)| f < *bf) {
                best = Some((f, c, map));
            }
        }
        let (_, c, map) = best.expect("at least one renumbering");
        (c, map)
    }

    /// A key of node `x` that every renumbering of the cluster gives its image too: the
    /// node's own state as seen through the machine's accessors, and the sorted list of
    /// its view of each peer (role, barring, updates, answer, TPT copy, fence, epoch heard,
    /// the peer's power and epoch, the links both ways).
    fn node_key(&self, x: usize) -> u64 {
        let n = self.node_count();
        let paths = self.links.len() / (n * n);
        let own = match &self.nodes[x] {
            Node::Off { epoch } => (false, *epoch, false, false, false),
            Node::On(l) => (
                true,
                l.epoch,
                l.rdma,
                l.machine.is_joined(),
                l.machine.deadline().is_some(),
            ),
        };
        let mut peers: Vec<u64> = (0..n)
            .filter(|&y| y != x)
            .map(|y| {
                let mut h = hasher();
                if let Node::On(l) = &self.nodes[x] {
                    let m = &l.machine;
                    let yn = y as NodeId;
                    (
                        m.role(yn),
                        m.is_barred(yn),
                        m.updates_enabled(yn),
                        m.answer(yn),
                    )
                        .hash(&mut h);
                    (l.copy[y], l.fence[y], l.heard[y]).hash(&mut h);
                }
                match &self.nodes[y] {
                    Node::Off { epoch } => (false, *epoch).hash(&mut h),
                    Node::On(l) => (true, l.epoch).hash(&mut h),
                }
                for p in 0..paths {
                    self.links[p * n * n + x * n + y].hash(&mut h);
                    self.links[p * n * n + y * n + x].hash(&mut h);
                }
                h.finish()
            })
            .collect();
        peers.sort_unstable();
        fingerprint(&(own, peers))
    }
}

impl Representative for Cluster {
    fn representative(&self) -> Self {
        self.canonical().0
    }
}

/// Every permutation of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut p: Vec<usize> = (0..n).collect();
    fn go(p: &mut Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
        if k == p.len() {
            out.push(p.clone());
            return;
        }
        for i in k..p.len() {
            p.swap(k, i);
            go(p, k + 1, out);
            p.swap(k, i);
        }
    }
    go(&mut p, 0, &mut out);
    out
}

/// A step of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// The node boots.
    PowerOn(usize),
    /// The node powers off (a fault).
    PowerOff(usize),
    /// The head of link `from -> to` arrives.
    Deliver(usize, usize),
    /// The head of the RDMA path `from -> to` arrives (with [`Bounds::rdma_own_path`]).
    DeliverRdma(usize, usize),
    /// The head of link `from -> to` is lost (a fault).
    Lose(usize, usize),
    /// The node's timer fires.
    Timeout(usize),
    /// The node issues an RDMA request to the peer.
    Rdma(usize, usize),
}

impl Step {
    /// The same step with node `x` renamed `map[x]`.
    pub fn renumbered(self, map: &[usize]) -> Step {
        match self {
            Step::PowerOn(i) => Step::PowerOn(map[i]),
            Step::PowerOff(i) => Step::PowerOff(map[i]),
            Step::Deliver(f, t) => Step::Deliver(map[f], map[t]),
            Step::DeliverRdma(f, t) => Step::DeliverRdma(map[f], map[t]),
            Step::Lose(f, t) => Step::Lose(map[f], map[t]),
            Step::Timeout(i) => Step::Timeout(map[i]),
            Step::Rdma(i, x) => Step::Rdma(map[i], map[x]),
        }
    }

    /// Whether the step is a fault (it stops once faults stop).
    pub fn is_fault(&self) -> bool {
        matches!(self, Step::PowerOff(_) | Step::Lose(..))
    }
}

/// The model: bounds, a planted bug if any, and the memo of converging states.
pub struct RejoinModel {
    /// The bounds.
    pub bounds: Bounds,
    /// A planted defect of the driver glue.
    pub bug: Option<Bug>,
    converged: Mutex<HashSet<u64>>,
}

impl RejoinModel {
    /// A model of `bounds` (checked), with `bug` planted if given.
    pub fn new(bounds: Bounds, bug: Option<Bug>) -> Result<Self, String> {
        bounds.check()?;
        Ok(RejoinModel {
            bounds,
            bug,
            converged: Mutex::new(HashSet::new()),
        })
    }

    fn n(&self) -> usize {
        self.bounds.nodes
    }

    fn link(&self, from: usize, to: usize) -> usize {
        from * self.n() + to
    }

    /// The link RDMA requests from `from` to `to` take (and the NACKs back).
    fn rdma_link(&self, from: usize, to: usize) -> usize {
        let own = if self.bounds.rdma_own_path {
            self.n() * self.n()
        } else {
            0
        };
        own + self.link(from, to)
    }

    /// The links from `from` to `to`: the control link, and the RDMA path if it is apart.
    fn links_to(&self, from: usize, to: usize) -> impl Iterator<Item = usize> {
        let (a, b) = (self.link(from, to), self.rdma_link(from, to));
        std::iter::once(a).chain((b != a).then_some(b))
    }

    /// The state the check starts from (see [`Start`]), with the full fault budget.
    pub fn initial(&self) -> Cluster {
        let mut s = self.all_off();
        if self.bounds.start == Start::Joined {
            for i in 0..self.n() {
                self.apply(&mut s, Step::PowerOn(i));
            }
            for _ in 0..CONVERGE_STEPS {
                if self.all_usable(&s) && s.links.iter().all(|l| l.is_empty()) {
                    break;
                }
                if !self.continue_once(&mut s, &mut Vec::new()) {
                    break;
                }
            }
        }
        s
    }

    fn all_off(&self) -> Cluster {
        let n = self.n();
        Cluster {
            nodes: vec![Node::Off { epoch: 0 }; n],
            links: vec![VecDeque::new(); n * n * if self.bounds.rdma_own_path { 2 } else { 1 }],
            reboots_left: self.bounds.reboots,
            losses_left: self.bounds.losses,
            stale_landed: false,
            machine_error: None,
        }
    }

    /// The steps enabled in `s`, in a fixed order; faults only with `faults`, RDMA requests
    /// only with `workload`.
    pub fn enabled(&self, s: &Cluster, faults: bool, workload: bool, out: &mut Vec<Step>) {
        let n = self.n();
        // One RDMA request in flight at a time: a stale access needs only one.
        let rdma_in_flight = s
            .links
            .iter()
            .any(|l| l.iter().any(|m| matches!(m.body, Body::Rdma { .. })));
        for i in 0..n {
            match &s.nodes[i] {
                Node::Off { .. } => out.push(Step::PowerOn(i)),
                Node::On(l) => {
                    if faults && s.reboots_left > 0 {
                        out.push(Step::PowerOff(i));
                    }
                    if l.machine.deadline().is_some() && self.quiet(s, i) {
                        out.push(Step::Timeout(i));
                    }
                    for x in 0..n {
                        if x == i {
                            continue;
                        }
                        if workload
                            && !l.machine.is_barred(x as NodeId)
                            && l.copy[x] != 0
                            && !rdma_in_flight
                        {
                            out.push(Step::Rdma(i, x));
                        }
                    }
                }
            }
        }
        for from in 0..n {
            for to in 0..n {
                let link = &s.links[self.link(from, to)];
                if let Some(head) = link.front() {
                    out.push(Step::Deliver(from, to));
                    let lossy = match &head.body {
                        Body::Control(b) => b.iter().any(|c| !c.is_sequenced()),
                        _ => false,
                    };
                    if faults && s.losses_left > 0 && lossy {
                        out.push(Step::Lose(from, to));
                    }
                }
            }
        }
        if self.bounds.rdma_own_path {
            for from in 0..n {
                for to in 0..n {
                    if !s.links[self.rdma_link(from, to)].is_empty() {
                        out.push(Step::DeliverRdma(from, to));
                    }
                }
            }
        }
    }

    fn fence_drained(&self, s: &Cluster, node: usize, peer: usize) -> bool {
        self.bug == Some(Bug::SkipFence)
            || !self
                .links_to(node, peer)
                .any(|l| s.links[l].iter().any(|m| m.fenced))
    }

    /// Whether nothing node `i` sent (control messages) is still in its outgoing links.
    fn quiet(&self, s: &Cluster, i: usize) -> bool {
        (0..self.n()).all(|x| {
            !s.links[self.link(i, x)]
                .iter()
                .any(|m| matches!(m.body, Body::Control(_)))
        })
    }

    /// Carries out `step` on `s`, then reports every fence that has drained.
    pub fn apply(&self, s: &mut Cluster, step: Step) {
        self.apply_step(s, step);
        while let Some((i, x)) = self.drained_fence(s) {
            if let Some(l) = s.nodes[i].live_mut() {
                l.fence[x] = false;
            }
            for l in self.links_to(i, x) {
                for m in s.links[l].iter_mut() {
                    m.fenced = false;
                }
            }
            self.feed(s, i, &[Event::FenceDrained { node: x as NodeId }]);
        }
    }

    /// The first running fence that has drained.
    fn drained_fence(&self, s: &Cluster) -> Option<(usize, usize)> {
        let n = self.n();
        (0..n).find_map(|i| {
            let l = s.nodes[i].live()?;
            (0..n)
                .find(|&x| l.fence[x] && self.fence_drained(s, i, x))
                .map(|x| (i, x))
        })
    }

    fn apply_step(&self, s: &mut Cluster, step: Step) {
        let n = self.n();
        match step {
            Step::PowerOn(i) => {
                let epoch = match s.nodes[i] {
                    Node::Off { epoch } => epoch + 1,
                    Node::On(_) => return,
                };
                let config = RejoinConfig::new(i as NodeId, n, RESEND);
                let machine = match RejoinMachine::new(config) {
                    Ok(m) => m,
                    Err(e) => {
                        s.machine_error = Some(format!("node {i}: {e}"));
                        return;
                    }
                };
                s.nodes[i] = Node::On(Box::new(Live {
                    epoch,
                    machine,
                    rdma: false,
                    copy: vec![0; n],
                    fence: vec![false; n],
                    heard: vec![0; n],
                }));
                self.feed(
                    s,
                    i,
                    &[Event::Boot {
                        node_count: n,
                        incarnation: epoch,
                    }],
                );
            }
            Step::PowerOff(i) => {
                let Some(l) = s.nodes[i].live() else { return };
                s.nodes[i] = Node::Off { epoch: l.epoch };
                s.reboots_left -= 1;
                for x in 0..n {
                    // The port goes down: what it had sent is gone; the fabric's NACKs
                    // (sender epoch 0) are not its own.
                    for link in self.links_to(i, x) {
                        s.links[link].retain(|m| m.src_epoch == 0);
                    }
                }
            }
            Step::Lose(from, to) => {
                let link = self.link(from, to);
                let Some(Msg {
                    body: Body::Control(bundle),
                    src_epoch,
                    fenced,
                }) = s.links[link].pop_front()
                else {
                    return;
                };
                s.losses_left -= 1;
                // The datagrams are gone; the stream sends its part again later, in order:
                // ahead of the next sequenced message in the link, or last.
                let kept: Vec<Ctl> = bundle.into_iter().filter(Ctl::is_sequenced).collect();
                if kept.is_empty() {
                    return;
                }
                let next = s.links[link].iter_mut().find_map(|m| match &mut m.body {
                    Body::Control(b) => b.iter().position(Ctl::is_sequenced).map(|i| (b, i)),
                    _ => None,
                });
                match next {
                    Some((b, i)) => {
                        b.splice(i..i, kept);
                    }
                    None => s.links[link].push_back(Msg {
                        body: Body::Control(kept),
                        src_epoch,
                        fenced,
                    }),
                }
            }
            Step::Timeout(i) => self.feed(s, i, &[Event::Timeout]),
            Step::Rdma(i, x) => {
                let Some(l) = s.nodes[i].live() else { return };
                // The oldest epoch the copy holds (a copy should hold one).
                let target_epoch = l.copy[x].trailing_zeros();
                let msg = Msg {
                    body: Body::Rdma { target_epoch },
                    src_epoch: l.epoch,
                    fenced: false,
                };
                let link = self.rdma_link(i, x);
                s.links[link].push_back(msg);
            }
            Step::Deliver(from, to) => {
                let link = self.link(from, to);
                let Some(msg) = s.links[link].pop_front() else {
                    return;
                };
                self.deliver(s, from, to, msg, self.link(to, from));
            }
            Step::DeliverRdma(from, to) => {
                let link = self.rdma_link(from, to);
                let Some(msg) = s.links[link].pop_front() else {
                    return;
                };
                self.deliver(s, from, to, msg, self.rdma_link(to, from));
            }
        }
    }

    /// Delivers `msg` from `from` to `to`; a NACK goes back on link `back`.
    fn deliver(&self, s: &mut Cluster, from: usize, to: usize, msg: Msg, back: usize) {
        let (to_epoch, to_rdma) = match s.nodes[to].live() {
            Some(l) => (l.epoch, l.rdma),
            None => {
                // The fabric answers a request to a port that is down.
                if msg.is_request() {
                    s.links[back].push_back(Msg {
                        body: Body::Nack {
                            syndrome: Syndrome::PortDown,
                            requester_epoch: msg.src_epoch,
                        },
                        src_epoch: 0,
                        fenced: false,
                    });
                }
                return;
            }
        };
        match msg.body {
            Body::Nack {
                syndrome,
                requester_epoch,
            } => {
                if requester_epoch == to_epoch {
                    self.feed(
                        s,
                        to,
                        &[Event::HardwareNack {
                            from: from as NodeId,
                            syndrome,
                        }],
                    );
                }
            }
            Body::Rdma { target_epoch } => {
                if to_rdma {
                    if target_epoch != to_epoch {
                        s.stale_landed = true;
                    }
                } else {
                    s.links[back].push_back(Msg {
                        body: Body::Nack {
                            syndrome: Syndrome::RdmaDisabled,
                            requester_epoch: msg.src_epoch,
                        },
                        src_epoch: to_epoch,
                        fenced: false,
                    });
                }
            }
            Body::Control(bundle) => {
                if let Some(l) = s.nodes[to].live_mut() {
                    l.heard[from] = l.heard[from].max(msg.src_epoch);
                }
                let events: Vec<Event> = bundle
                    .iter()
                    .map(|c| Event::ControlReceived {
                        from: from as NodeId,
                        message: c.to_message(),
                    })
                    .collect();
                self.feed(s, to, &events);
            }
        }
    }

    /// Feeds `events` to node `me`'s machine and carries out its actions; control messages
    /// go out at the end, one bundle per peer (as the driver posts them).
    fn feed(&self, s: &mut Cluster, me: usize, events: &[Event]) {
        let n = self.n();
        let mut outbox: Vec<Vec<Ctl>> = vec![Vec::new(); n];
        for event in events {
            let timeout = matches!(event, Event::Timeout);
            let Some(l) = s.nodes[me].live_mut() else {
                return;
            };
            let actions = match l.machine.handle(NOW, event.clone()) {
                Ok(a) => a,
                Err(e) => {
                    s.machine_error = Some(format!("node {me} refused {event:?}: {e}"));
                    return;
                }
            };
            for a in actions {
                self.execute(s, me, a, timeout, &mut outbox);
            }
        }
        let Some(epoch) = s.nodes[me].live().map(|l| l.epoch) else {
            return;
        };
        for (to, bundle) in outbox.into_iter().enumerate() {
            if !bundle.is_empty() {
                let link = self.link(me, to);
                s.links[link].push_back(Msg {
                    body: Body::Control(bundle),
                    src_epoch: epoch,
                    fenced: false,
                });
            }
        }
    }

    fn execute(
        &self,
        s: &mut Cluster,
        me: usize,
        action: Action,
        timeout: bool,
        outbox: &mut [Vec<Ctl>],
    ) {
        let Some(l) = s.nodes[me].live_mut() else {
            return;
        };
        match action {
            Action::SetEnables { rdma, .. } => {
                l.rdma = rdma || self.bug == Some(Bug::RdmaAtBoot);
            }
            Action::Send { to, message } => {
                let dropped = match (&message, self.bug) {
                    (ControlMessage::RdmaReady { .. }, Some(Bug::NoRdmaReady)) => true,
                    (ControlMessage::Booting { .. }, Some(Bug::NoResendOnTimeout)) => timeout,
                    _ => false,
                };
                if dropped {
                    return;
                }
                match Ctl::from_message(&message) {
                    Some(c) => outbox[to as usize].push(c),
                    None => {
                        s.machine_error =
                            Some(format!("node {me} sends an unexpected {message:?}"));
                    }
                }
            }
            Action::PushLocalTpt { node } => {
                outbox[node as usize].push(Ctl::TptClear);
                outbox[node as usize].push(Ctl::TptUpdate(l.epoch));
            }
            Action::ClearRemoteTpt { node } => {
                if self.bug != Some(Bug::KeepStaleTpt) {
                    l.copy[node as usize] = 0;
                }
            }
            Action::ApplyTptUpdate { from, update } => {
                for e in update.entries() {
                    l.copy[from as usize] |= 1u8 << e.handle.min(7);
                }
            }
            Action::StartFence { node } => {
                l.fence[node as usize] = true;
                for link in self.links_to(me, node as usize) {
                    for m in s.links[link].iter_mut() {
                        if m.is_request() && m.src_epoch != 0 {
                            m.fenced = true;
                        }
                    }
                }
            }
            // Tracked by the machine itself (barring, updates, timer, joined), or not
            // produced without deregistrations.
            Action::StopTptUpdates { .. }
            | Action::ResumeTptUpdates { .. }
            | Action::Bar { .. }
            | Action::Unbar { .. }
            | Action::SetTimer { .. }
            | Action::ApplyTptRemove { .. }
            | Action::RejoinComplete => {}
        }
    }

    /// Whether every node that is on is usable by every other node that is on.
    pub fn all_usable(&self, s: &Cluster) -> bool {
        let n = self.n();
        for a in 0..n {
            let Some(la) = s.nodes[a].live() else {
                continue;
            };
            if !la.machine.is_joined() {
                return false;
            }
            for x in 0..n {
                if x == a {
                    continue;
                }
                let Some(lx) = s.nodes[x].live() else {
                    continue;
                };
                if la.machine.is_barred(x as NodeId)
                    || !la.machine.updates_enabled(x as NodeId)
                    || la.copy[x] != 1u8 << lx.epoch.min(7)
                {
                    return false;
                }
            }
        }
        true
    }

    /// The steps the fault-free continuation takes next in `s` (see [`CONVERGES`]).
    ///
    /// The head of the lowest non-empty link; when every link is empty, the timers of
    /// every node that has one, in one round (so a node that probes a dead peer for ever
    /// does not starve the others' resends).
    pub fn continuation_steps(&self, s: &Cluster) -> Vec<Step> {
        let mut steps = Vec::new();
        self.enabled(s, false, false, &mut steps);
        match steps
            .iter()
            .find(|x| matches!(x, Step::Deliver(..) | Step::DeliverRdma(..)))
        {
            Some(&deliver) => vec![deliver],
            None => steps
                .into_iter()
                .filter(|x| matches!(x, Step::Timeout(..)))
                .collect(),
        }
    }

    fn continue_once(&self, t: &mut Cluster, taken: &mut Vec<Step>) -> bool {
        let steps = self.continuation_steps(t);
        for &step in &steps {
            self.apply(t, step);
        }
        taken.extend(&steps);
        !steps.is_empty()
    }

    /// The fault-free continuation from `s`: the steps taken and whether it reached the
    /// goal (every live node usable by all).
    ///
    /// The run starts from the representative of `s` ([`Cluster::canonical`]), so that
    /// every renumbering of a state gets the same run, renumbered; the steps are given in
    /// the numbering of `s`.
    pub fn continuation(&self, s: &Cluster) -> (Vec<Step>, bool) {
        let (mut t, map) = s.canonical();
        let mut back = vec![0; map.len()];
        for (x, &y) in map.iter().enumerate() {
            back[y] = x;
        }
        let mut steps = Vec::new();
        let mut reached = None;
        for _ in 0..CONVERGE_STEPS {
            if self.all_usable(&t) {
                reached = Some(true);
                break;
            }
            if !self.continue_once(&mut t, &mut steps) {
                reached = Some(false);
                break;
            }
        }
        let reached = reached.unwrap_or_else(|| self.all_usable(&t));
        let steps = steps.into_iter().map(|x| x.renumbered(&back)).collect();
        (steps, reached)
    }

    /// Whether the fault-free continuation from `s` reaches the goal (memoised).
    pub fn converges(&self, s: &Cluster) -> bool {
        let mut t = s.canonical().0;
        t.reboots_left = 0;
        t.losses_left = 0;
        let mut seen = Vec::new();
        let mut ok = false;
        for _ in 0..CONVERGE_STEPS {
            let key = fingerprint(&t);
            if self.converged.lock().expect("memo").contains(&key) {
                ok = true;
                break;
            }
            seen.push(key);
            if self.all_usable(&t) {
                ok = true;
                break;
            }
            if !self.continue_once(&mut t, &mut Vec::new()) {
                break;
            }
        }
        if ok {
            self.converged.lock().expect("memo").extend(seen);
        }
        ok
    }
}

/// The hash of representatives, node keys and the liveness memo: fixed seeds, so it is the
/// same in every run.
fn hasher() -> ahash::AHasher {
    ahash::RandomState::with_seeds(0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344)
        .build_hasher()
}

fn fingerprint<T: Hash>(value: &T) -> u64 {
    let mut h = hasher();
    value.hash(&mut h);
    h.finish()
}

fn stale_request_reachable(m: &RejoinModel, s: &Cluster) -> bool {
    let n = m.n();
    for x in 0..n {
        let Some(lx) = s.nodes[x].live() else {
            continue;
        };
        if !lx.rdma {
            continue;
        }
        for a in 0..n {
            if s.links[m.rdma_link(a, x)].iter().any(
                |msg| matches!(msg.body, Body::Rdma { target_epoch } if target_epoch != lx.epoch),
            ) {
                return true;
            }
        }
    }
    false
}

fn stale_tpt_copy(m: &RejoinModel, s: &Cluster) -> bool {
    let n = m.n();
    for a in 0..n {
        let Some(la) = s.nodes[a].live() else {
            continue;
        };
        for x in 0..n {
            if x != a
                && !la.machine.is_barred(x as NodeId)
                && la.copy[x] != 0
                && la.copy[x] != 1u8 << la.heard[x].min(7)
            {
                return true;
            }
        }
    }
    false
}

impl Model for RejoinModel {
    type State = Cluster;
    type Action = Step;

    fn init_states(&self) -> Vec<Cluster> {
        vec![self.initial()]
    }

    fn actions(&self, s: &Cluster, actions: &mut Vec<Step>) {
        self.enabled(s, true, self.bounds.rdma_requests, actions);
    }

    fn next_state(&self, s: &Cluster, step: Step) -> Option<Cluster> {
        let mut t = s.clone();
        self.apply(&mut t, step);
        Some(t)
    }

    fn within_boundary(&self, s: &Cluster) -> bool {
        s.links.iter().all(|l| l.len() <= self.bounds.link_capacity)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(STALE_REQUEST_REACHABLE, |m, s| {
                !stale_request_reachable(m, s)
            }),
            Property::always(STALE_ACCESS_LANDED, |_, s: &Cluster| !s.stale_landed),
            Property::always(STALE_TPT_COPY, |m, s| !stale_tpt_copy(m, s)),
            Property::always(MACHINE_ACCEPTS, |_, s: &Cluster| s.machine_error.is_none()),
            Property::always(CONVERGES, |m, s| m.converges(s)),
        ]
    }
}

impl RejoinModel {
    /// A few lines describing `s`: each node (epoch, joined, RDMA, per peer its role,
    /// barring, updates, TPT copy and fence) and each non-empty link.
    pub fn describe(&self, s: &Cluster) -> String {
        use std::fmt::Write;
        let n = self.n();
        let mut out = String::new();
        for i in 0..n {
            match &s.nodes[i] {
                Node::Off { epoch } => {
                    let _ = writeln!(out, "  node {i}: off after epoch {epoch}");
                }
                Node::On(l) => {
                    let m = &l.machine;
                    let _ = write!(
                        out,
                        "  node {i}: epoch {} {} rdma={} timer={}",
                        l.epoch,
                        if m.is_joined() { "joined" } else { "joining" },
                        l.rdma,
                        m.deadline().is_some()
                    );
                    for x in 0..n {
                        if x == i {
                            continue;
                        }
                        let xn = x as NodeId;
                        let _ = write!(
                            out,
                            " | {x}: {:?}{}{} answer={:?} copy={:#b}{}",
                            m.role(xn).expect("in range"),
                            if m.is_barred(xn) { " barred" } else { "" },
                            if m.updates_enabled(xn) {
                                " updates"
                            } else {
                                ""
                            },
                            m.answer(xn),
                            l.copy[x],
                            if l.fence[x] { " fencing" } else { "" },
                        );
                    }
                    let _ = writeln!(out);
                }
            }
        }
        let links = (0..n).flat_map(|f| (0..n).map(move |t| (f, t)));
        let rdma = self.bounds.rdma_own_path;
        let paths = links.clone().map(|(f, t)| (f, t, self.link(f, t), ""));
        let rdma_paths = links
            .filter(move |_| rdma)
            .map(|(f, t)| (f, t, self.rdma_link(f, t), " (RDMA path)"));
        for (from, to, index, what) in paths.chain(rdma_paths) {
            {
                let link = &s.links[index];
                if link.is_empty() {
                    continue;
                }
                let msgs: Vec<String> = link
                    .iter()
                    .map(|m| {
                        let body = match &m.body {
                            Body::Control(b) => format!("{b:?}"),
                            Body::Rdma { target_epoch } => {
                                format!("RDMA(for epoch {target_epoch})")
                            }
                            Body::Nack {
                                syndrome,
                                requester_epoch,
                            } => format!("NACK {syndrome:?} (to epoch {requester_epoch})"),
                        };
                        format!(
                            "{body}@{}{}",
                            m.src_epoch,
                            if m.fenced { " fenced" } else { "" }
                        )
                    })
                    .collect();
                let _ = writeln!(out, "  link {from}->{to}{what}: {}", msgs.join(", "));
            }
        }
        let _ = writeln!(
            out,
            "  budget: {} reboots, {} losses{}",
            s.reboots_left,
            s.losses_left,
            if s.stale_landed {
                "; a stale access landed"
            } else {
                ""
            }
        );
        out
    }

    /// The states along `steps` from the initial state, described after each step.
    pub fn replay(&self, steps: &[Step]) -> String {
        let mut s = self.initial();
        let mut out = String::new();
        for (k, step) in steps.iter().enumerate() {
            self.apply(&mut s, *step);
            out.push_str(&format!("{k}: {step:?}\n{}", self.describe(&s)));
        }
        out
    }
}
