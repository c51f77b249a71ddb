//! The protocol's events as marker signals in a scenario run's waves (docs/waves.md,
//! "Scenario waves"): scope `markers` of every NIC's file, one bit per [`MARKERS`] name.
//!
//! Levels: `powered` (the host is on), `link_up` (its cable is in), `rdma_enabled` (its
//! driver has joined: RDMA enabled). Pulses, one cycle long, on the cycle of the event:
//! - `booting_sent`, `rdma_ready_sent`: the last word of a control SEND's first cell
//!   carrying that message left this NIC (`m_cell_*`; the fabric's ingress);
//! - `booting_received`, `ack_received`, `rdma_ready_received`: the last word of such a
//!   cell entered this NIC (`s_cell_*`); `nack_received`: a NACK cell did;
//! - `cell_dropped`, `cell_corrupted`, `cell_delayed`: a `[[fault]]` hit a cell this NIC
//!   sent, at the cycle its last word left the NIC.
//!
//! A pulse is dumped 1 ps after the rising edge of its cycle
//! ([`nic_cosim::Stepper::mark`]), so at that instant the wire signals still show the word
//! the event names. The events come from what the fabric sees (a [`FaultHook`] tap on
//! every cell sent, the deliveries), the timeline and the drivers' state: no hook in the
//! driver or the NIC.

use crate::control_trace::ControlCell;
use nic_cosim::cluster::Cluster;
use nic_cosim::fabric::{CellFate, Delivery, FaultHook};
use nic_driver::control::ControlMessage;
use nic_rtl::cell::format::{opcode, CellHeader};
pub use nic_waves::inspect::MARKERS;
use std::sync::{Arc, Mutex};

/// The bit of marker `name`.
pub fn bit(name: &str) -> u64 {
    let i = MARKERS
        .iter()
        .position(|m| *m == name)
        .unwrap_or_else(|| panic!("no marker {name:?}"));
    1 << i
}

/// A cell as the tap saw it leave its NIC.
#[derive(Clone, Debug)]
struct Tapped {
    src_port: usize,
    bits: u64,
}

/// A [`FaultHook`] that notes every cell sent and passes it on to the scenario's faults.
pub struct TapHook {
    inner: Option<Box<dyn FaultHook>>,
    seen: Arc<Mutex<Vec<Tapped>>>,
}

impl FaultHook for TapHook {
    fn on_cell(
        &mut self,
        cycle: u64,
        src: usize,
        dst: usize,
        header: &CellHeader,
        cell: &[u64],
    ) -> CellFate {
        let fate = match self.inner.as_mut() {
            Some(h) => h.on_cell(cycle, src, dst, header, cell),
            None => CellFate::Deliver,
        };
        let mut bits = match fate {
            CellFate::Deliver => 0,
            CellFate::Drop => bit("cell_dropped"),
            CellFate::Corrupt { .. } | CellFate::Replace(_) => bit("cell_corrupted"),
            CellFate::Delay { .. } => bit("cell_delayed"),
        };
        let d = Delivery {
            cycle,
            ready: cycle,
            src,
            dst,
            words: cell.into(),
        };
        if let Some(c) = ControlCell::decode(&d) {
            if c.carries(|m| matches!(m, ControlMessage::Booting { .. })) {
                bits |= bit("booting_sent");
            }
            if c.carries(|m| matches!(m, ControlMessage::RdmaReady { .. })) {
                bits |= bit("rdma_ready_sent");
            }
        }
        if bits != 0 {
            self.seen.lock().expect("tap").push(Tapped {
                src_port: src,
                bits,
            });
        }
        fate
    }
}

/// The markers of every port of a run.
pub struct WaveMarkers {
    /// Per port: the cable is in.
    link: Vec<bool>,
    /// Per port: pulses of this cycle.
    pulses: Vec<u64>,
    seen: Arc<Mutex<Vec<Tapped>>>,
}

impl WaveMarkers {
    /// Declares [`MARKERS`] in every NIC's model (before its traces open) and installs
    /// the tap in front of `faults` (the scenario's fault hook, if any).
    pub fn install(cluster: &mut Cluster, faults: Option<Box<dyn FaultHook>>) -> WaveMarkers {
        let hosts = cluster.hosts().len();
        let ports: usize = (0..hosts).map(|h| cluster.ports_of(h).len()).sum();
        for h in 0..hosts {
            let mut nic = cluster.host(h).nic();
            for k in 0..nic.nics() {
                nic.model_of(k).declare_markers(&MARKERS);
            }
        }
        let seen = Arc::new(Mutex::new(vec![]));
        cluster.fabric_mut().set_fault_hook(Box::new(TapHook {
            inner: faults,
            seen: seen.clone(),
        }));
        WaveMarkers {
            link: vec![true; ports],
            pulses: vec![0; ports],
            seen,
        }
    }

    /// A cable event: `nic` of `host` (all its NICs when `None`) unplugged or plugged.
    pub fn link(&mut self, cluster: &Cluster, host: usize, nic: Option<usize>, up: bool) {
        for (k, &p) in cluster.ports_of(host).iter().enumerate() {
            if nic.is_none_or(|n| n == k) {
                self.link[p] = up;
            }
        }
    }

    /// A cell delivered (`d.dst` still a port).
    pub fn on_delivery(&mut self, d: &Delivery) {
        let mut bits = 0;
        if d.words.len() >= nic_rtl::cell::format::HEADER_WORDS {
            let h = CellHeader::from_words([d.words[0], d.words[1], d.words[2]]);
            if h.opcode == opcode::NACK {
                bits |= bit("nack_received");
            }
        }
        if let Some(c) = ControlCell::decode(d) {
            for (kind, name) in [
                (0, "booting_received"),
                (1, "ack_received"),
                (2, "rdma_ready_received"),
            ] {
                if c.carries(|m| match kind {
                    0 => matches!(m, ControlMessage::Booting { .. }),
                    1 => matches!(m, ControlMessage::Ack { .. }),
                    _ => matches!(m, ControlMessage::RdmaReady { .. }),
                }) {
                    bits |= bit(name);
                }
            }
        }
        if let Some(p) = self.pulses.get_mut(d.dst) {
            *p |= bits;
        }
    }

    /// After the cycle's step and deliveries: every NIC's markers for this cycle.
    pub fn mark(&mut self, cluster: &mut Cluster) {
        for t in self.seen.lock().expect("tap").drain(..) {
            if let Some(p) = self.pulses.get_mut(t.src_port) {
                *p |= t.bits;
            }
        }
        for h in 0..cluster.hosts().len() {
            let host = cluster.host(h);
            let mut levels = 0;
            if host.is_powered() {
                levels |= bit("powered");
            }
            if host.driver().is_some_and(|d| d.is_joined()) {
                levels |= bit("rdma_enabled");
            }
            let ports = cluster.ports_of(h).to_vec();
            let mut nic = cluster.host(h).nic();
            for (k, p) in ports.into_iter().enumerate() {
                let link = if self.link[p] { bit("link_up") } else { 0 };
                nic.model_of(k).mark(levels | link | self.pulses[p]);
                self.pulses[p] = 0;
            }
        }
    }
}
