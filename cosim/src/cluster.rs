//! A cluster: N [`Host`]s on one [`Fabric`], stepped together one clock at a time.
//!
//! Scenario-free: it knows hosts, ports and power, not workloads or timelines (those are
//! the test bench's). Each [`Cluster::step`]:
//! 1. takes every port's inputs from the fabric ([`Fabric::drive`]);
//! 2. steps every powered host (NIC, host memory, CSR port; the driver's poll when due),
//!    on [`ClusterConfig::threads`] threads: hosts are independent within a cycle;
//! 3. hands the NICs' outputs to the fabric ([`Fabric::observe`]).
//!
//! Power and cables: [`Cluster::power_on`] starts a host's new epoch and brings its port up,
//! [`Cluster::power_off`] takes both down, [`Cluster::unplug`] / [`Cluster::plug`] change
//! only the port (the host keeps running, cut off).
//!
//! Several NICs per host (source 003): a host with `k` NICs ([`Host::add_nic`]) has `k`
//! fabric ports. Port `n` is NIC 0 of host `n`; the other NICs' ports follow the hosts'
//! ([`Cluster::ports_of`]). The fabric's routing table maps a host's node id to one of
//! its ports: NIC 0's at power-on; [`Cluster::route`] moves it (a route change: the host's
//! driver fails over to that NIC), and when [`Cluster::unplug_nic`] pulls the cable of
//! the NIC carrying the host's traffic the driver fails over to another NIC and the route
//! follows (the host announces where it is now, as a gratuitous ARP would).

use crate::fabric::{Fabric, FabricConfig, PortDrive, PortOutputs};
use crate::host::{Host, NicModel};
use crate::{
    CosimError, RustHdlNicTop, RustHdlNicTopQp64, RustHdlNicTopTpt256, TraceFormat,
    VerilatedNicTop, VerilatedNicTopQp64, VerilatedNicTopTpt256,
};

/// Which simulator runs the NICs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum Backend {
    /// The Verilator models (fast; the default).
    #[default]
    Verilator,
    /// RustHDL stepped directly (needs a large stack to construct: run in a thread with
    /// 512 MiB of stack).
    RustHdl,
}

/// The queue pairs of the NIC models the co-simulation has: a cluster of `n` hosts takes
/// the smallest with at least `n`.
pub const MODEL_QUEUE_PAIRS: [usize; 2] = [4, 64];

/// A NIC top model with at least `queue_pairs` queue pairs and no hardware TPT.
pub fn nic_model(backend: Backend, queue_pairs: usize) -> Result<NicModel, CosimError> {
    nic_model_traced(backend, queue_pairs, TraceFormat::Vcd)
}

/// [`nic_model`] whose traces are in `format` (FST: Verilator models built with the
/// feature `fst`; the RustHDL backend writes VCD only).
pub fn nic_model_traced(
    backend: Backend,
    queue_pairs: usize,
    format: TraceFormat,
) -> Result<NicModel, CosimError> {
    check_format(backend, format)?;
    let small = queue_pairs <= MODEL_QUEUE_PAIRS[0];
    if queue_pairs > MODEL_QUEUE_PAIRS[1] {
        return Err(CosimError::NoModel(format!(
            "no NIC model with {queue_pairs} queue pairs (the largest has {})",
            MODEL_QUEUE_PAIRS[1]
        )));
    }
    Ok(match (backend, small) {
        (Backend::Verilator, true) => Box::new(VerilatedNicTop::with_format(format)?),
        (Backend::Verilator, false) => Box::new(VerilatedNicTopQp64::with_format(format)?),
        (Backend::RustHdl, true) => Box::new(RustHdlNicTop::new()),
        (Backend::RustHdl, false) => Box::new(RustHdlNicTopQp64::new()),
    })
}

/// Queue pairs of the NIC model with a hardware TPT (`nic_top_tpt256`): a cluster of at most
/// this many hosts can use it.
pub const TPT_MODEL_QUEUE_PAIRS: usize = 4;
/// Entries of that model's TPT.
pub const TPT_MODEL_ENTRIES: usize = 256;

/// The NIC top model with a hardware TPT of [`TPT_MODEL_ENTRIES`] entries
/// (`nic_top_tpt256`, [`TPT_MODEL_QUEUE_PAIRS`] queue pairs), for `queue_pairs` at most
/// that.
pub fn nic_model_tpt(backend: Backend, queue_pairs: usize) -> Result<NicModel, CosimError> {
    nic_model_tpt_traced(backend, queue_pairs, TraceFormat::Vcd)
}

/// [`nic_model_tpt`] whose traces are in `format` (see [`nic_model_traced`]).
pub fn nic_model_tpt_traced(
    backend: Backend,
    queue_pairs: usize,
    format: TraceFormat,
) -> Result<NicModel, CosimError> {
    check_format(backend, format)?;
    if queue_pairs > TPT_MODEL_QUEUE_PAIRS {
        return Err(CosimError::NoModel(format!(
            "no NIC model with a hardware TPT and {queue_pairs} queue pairs (nic_top_tpt256 has {TPT_MODEL_QUEUE_PAIRS})"
        )));
    }
    Ok(match backend {
        Backend::Verilator => Box::new(VerilatedNicTopTpt256::with_format(format)?),
        Backend::RustHdl => Box::new(RustHdlNicTopTpt256::new()),
    })
}

/// RustHDL writes its waves itself, as VCD.
fn check_format(backend: Backend, format: TraceFormat) -> Result<(), CosimError> {
    if backend == Backend::RustHdl && format != TraceFormat::Vcd {
        return Err(CosimError::NoModel(format!(
            "the RustHDL backend writes VCD only, not {format}: use VCD waves or the Verilator backend"
        )));
    }
    Ok(())
}

/// Configuration of a [`Cluster`].
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    pub fabric: FabricConfig,
    /// Threads stepping the hosts (1: the caller's thread only).
    pub threads: usize,
}

/// Hosts on a fabric (see the module docs).
pub struct Cluster {
    hosts: Vec<Host>,
    fabric: Fabric,
    threads: usize,
    cycle: u64,
    /// Per host: its NICs' ports.
    ports: Vec<Vec<usize>>,
    /// Per port: its host.
    host_of_port: Vec<usize>,
    /// Per host: its NICs' outputs this cycle.
    host_outputs: Vec<Vec<Option<PortOutputs>>>,
    outputs: Vec<Option<PortOutputs>>,
    /// NIC-cycles stepped (powered hosts x cycles).
    nic_cycles: u64,
}

impl Cluster {
    /// `hosts[n]` must be node `n`; all start powered off with their ports down. The
    /// fabric has a port per NIC of every host.
    pub fn new(config: ClusterConfig, hosts: Vec<Host>) -> Result<Self, String> {
        config.fabric.validate()?;
        let nics: usize = hosts.iter().map(Host::nics).sum();
        if nics != config.fabric.ports {
            return Err(format!(
                "{} hosts with {nics} NICs for a fabric of {} ports",
                hosts.len(),
                config.fabric.ports
            ));
        }
        if let Some((n, h)) = hosts
            .iter()
            .enumerate()
            .find(|(n, h)| h.node() as usize != *n)
        {
            return Err(format!("host {n} is configured as node {}", h.node()));
        }
        let mut fabric = Fabric::new(config.fabric);
        for p in 0..nics {
            fabric.set_port_up(p, false);
        }
        fabric.set_nodes(hosts.len());
        let mut ports: Vec<Vec<usize>> = (0..hosts.len()).map(|n| vec![n]).collect();
        let mut host_of_port: Vec<usize> = (0..hosts.len()).collect();
        for (n, h) in hosts.iter().enumerate() {
            for _ in 1..h.nics() {
                ports[n].push(host_of_port.len());
                host_of_port.push(n);
            }
        }
        Ok(Cluster {
            outputs: vec![None; nics],
            host_outputs: ports.iter().map(|p| vec![None; p.len()]).collect(),
            ports,
            host_of_port,
            hosts,
            fabric,
            threads: config.threads.max(1),
            cycle: 0,
            nic_cycles: 0,
        })
    }

    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// NIC-cycles stepped so far.
    pub fn nic_cycles(&self) -> u64 {
        self.nic_cycles
    }

    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    pub fn host(&self, n: usize) -> &Host {
        &self.hosts[n]
    }

    pub fn host_mut(&mut self, n: usize) -> &mut Host {
        &mut self.hosts[n]
    }

    pub fn hosts_mut(&mut self) -> &mut [Host] {
        &mut self.hosts
    }

    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    pub fn fabric_mut(&mut self) -> &mut Fabric {
        &mut self.fabric
    }

    /// Host `n`'s NICs' ports (NIC 0's is `n`).
    pub fn ports_of(&self, n: usize) -> &[usize] {
        &self.ports[n]
    }

    /// The host behind `port`.
    pub fn host_of_port(&self, port: usize) -> usize {
        self.host_of_port[port]
    }

    /// Whether any port of host `n` is up.
    pub fn is_connected(&self, n: usize) -> bool {
        self.ports[n].iter().any(|&p| self.fabric.is_port_up(p))
    }

    /// Power host `n` on now (a new epoch; a powered host is power-cycled) and plug it in;
    /// its node is routed to NIC 0.
    pub fn power_on(&mut self, n: usize) {
        for &p in &self.ports[n] {
            self.fabric.set_port_up(p, false);
        }
        self.hosts[n].power_on(self.cycle);
        for &p in &self.ports[n] {
            self.fabric.nic_reset(p);
            self.fabric.set_port_up(p, true);
        }
        self.fabric.set_route(n, n);
    }

    /// Power host `n` off: its ports go down.
    pub fn power_off(&mut self, n: usize) {
        self.hosts[n].power_off();
        for &p in &self.ports[n] {
            self.fabric.set_port_up(p, false);
        }
    }

    /// Pull all of host `n`'s cables (the host keeps running; its driver sees the link go
    /// down).
    pub fn unplug(&mut self, n: usize) {
        for &p in &self.ports[n] {
            self.fabric.set_port_up(p, false);
        }
        self.hosts[n].link_changed(self.cycle, false);
    }

    /// Plug all of host `n`'s cables back in (its driver sees the link come back).
    pub fn plug(&mut self, n: usize) {
        for &p in &self.ports[n] {
            self.fabric.set_port_up(p, true);
        }
        self.hosts[n].link_changed(self.cycle, true);
    }

    /// Pull the cable of host `n`'s NIC `nic` (see the module docs: the host may fail over
    /// and the route follow). Ignored for a NIC the host does not have.
    pub fn unplug_nic(&mut self, n: usize, nic: usize) {
        self.set_nic_link(n, nic, false);
    }

    /// Plug the cable of host `n`'s NIC `nic` back in.
    pub fn plug_nic(&mut self, n: usize, nic: usize) {
        self.set_nic_link(n, nic, true);
    }

    fn set_nic_link(&mut self, n: usize, nic: usize, up: bool) {
        let Some(&port) = self.ports[n].get(nic) else {
            return;
        };
        self.fabric.set_port_up(port, up);
        if let Some(to) = self.hosts[n].nic_link_changed(self.cycle, nic, up) {
            self.fabric.set_route(n, self.ports[n][to]);
        }
    }

    /// A route change: cells for host `n` go to its NIC `nic` from now on (those queued
    /// for the old port still arrive there), and the host's driver fails over to it.
    /// Ignored for a NIC the host does not have.
    pub fn route(&mut self, n: usize, nic: usize) {
        let Some(&port) = self.ports[n].get(nic) else {
            return;
        };
        self.fabric.set_route(n, port);
        self.hosts[n].route_changed(self.cycle, nic);
    }

    /// One clock of the whole cluster.
    pub fn step(&mut self) {
        let now = self.cycle;
        let drive: Vec<PortDrive> = self.fabric.drive().to_vec();
        let threads = self.threads.min(self.hosts.len()).max(1);
        let ports = &self.ports;
        let step = |h: &mut Host, o: &mut Vec<Option<PortOutputs>>| {
            let p = &ports[h.node() as usize];
            if p.len() == 1 {
                o[0] = h.step(now, &drive[p[0]]);
            } else {
                let d: Vec<PortDrive> = p.iter().map(|&q| drive[q]).collect();
                h.step_ports(now, &d, o);
            }
        };
        if threads == 1 {
            for (h, o) in self.hosts.iter_mut().zip(self.host_outputs.iter_mut()) {
                step(h, o);
            }
        } else {
            let chunk = self.hosts.len().div_ceil(threads);
            std::thread::scope(|s| {
                for (hosts, outs) in self
                    .hosts
                    .chunks_mut(chunk)
                    .zip(self.host_outputs.chunks_mut(chunk))
                {
                    let step = &step;
                    s.spawn(move || {
                        for (h, o) in hosts.iter_mut().zip(outs.iter_mut()) {
                            step(h, o);
                        }
                    });
                }
            });
        }
        for (p, o) in self.ports.iter().zip(&self.host_outputs) {
            for (&q, out) in p.iter().zip(o) {
                self.outputs[q] = *out;
            }
        }
        self.nic_cycles += self.outputs.iter().filter(|o| o.is_some()).count() as u64;
        self.fabric.observe(&self.outputs);
        self.cycle += 1;
    }
}
