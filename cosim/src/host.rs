//! A simulated host: one NIC model, its host memory, and the driver of `nic-driver`
//! running on it, with power cycles (SPEC.md, "Hosts").
//!
//! # Boot, epochs and reboots
//! [`Host::power_on`] starts a boot, which is a new **epoch** (numbered from 1): host memory
//! is zeroed, the NIC is held in reset for [`RESET_CYCLES`] cycles, then the host reads
//! `NIC_ID` and `NIC_CONFIG` over the CSR port (the reads a driver makes first, done here in
//! simulated time), constructs a fresh [`Driver`] with an incarnation and first TPT handle
//! drawn from the host's seed and the epoch, and calls [`Driver::boot`]. From then on the
//! driver is polled every [`HostConfig::poll_interval`] cycles. [`Host::power_off`] drops
//! the driver (its state and the application's are lost) and stops stepping the NIC; the
//! caller takes the host's fabric port down. A reboot is a power-off followed by a
//! power-on.
//!
//! # The driver's view of the NIC ([`SimNic`])
//! The driver reaches the NIC through a [`SharedNic`] handle implementing
//! [`nic_driver::NicAccess`]: CSR writes are queued and performed over the CSR port one per
//! cycle as the host steps (posted writes, in order); host memory is read and written
//! directly (the host CPU). CSR reads are answered from the values read at boot; any other
//! read steps this NIC alone, with its network ports idle, until the answer comes (the
//! driver learns about progress from the completion ring; only with a hardware TPT does it
//! read after boot: `TPT_STATUS` after a TPT command, `EXC_HEAD0` now and then).

use crate::fabric::{PortDrive, PortOutputs};
use crate::host_memory::{
    DmaRead, DmaRequests, DmaResponses, DmaWrite, HostMemory, HostMemoryTiming, ReadRequestSide,
    RX_READ, TX_READ,
};
use crate::{CosimError, NicTopInputs, NicTopOutputs, Stepper};
use nic_abi::csr;
use nic_driver::{Completion, Driver, DriverConfig, NicAccess};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

/// A NIC top model of any backend.
pub type NicModel = Box<dyn Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs> + Send>;

/// Cycles the NIC's reset is held at power-on.
pub const RESET_CYCLES: u64 = 2;
/// Cycles a CSR read may take before the host gives up on the NIC.
pub const CSR_READ_TIMEOUT: u64 = 10_000;

#[derive(Clone, Copy, Debug)]
enum CsrOp {
    Write { addr: u16, data: u64 },
    Read { addr: u16 },
}

/// Drive a NIC top's DMA inputs from what the host memory drives this cycle.
pub fn apply_dma_responses(i: &mut NicTopInputs, d: &DmaResponses) {
    i.dma_tx_rd_req_ready = d.read[TX_READ].req_ready;
    i.dma_tx_rd_data_valid = d.read[TX_READ].data_valid;
    i.dma_tx_rd_data = d.read[TX_READ].data;
    i.dma_tx_rd_data_last = d.read[TX_READ].data_last;
    i.dma_rx_rd_req_ready = d.read[RX_READ].req_ready;
    i.dma_rx_rd_data_valid = d.read[RX_READ].data_valid;
    i.dma_rx_rd_data = d.read[RX_READ].data;
    i.dma_rx_rd_data_last = d.read[RX_READ].data_last;
    i.dma_wr_ready = d.wr_ready;
}

/// A NIC top's DMA outputs as the host memory observes them.
pub fn dma_requests(out: &NicTopOutputs) -> DmaRequests {
    DmaRequests {
        read: [
            ReadRequestSide {
                req_valid: out.dma_tx_rd_req_valid,
                req_addr: out.dma_tx_rd_req_addr,
                req_words: out.dma_tx_rd_req_words,
                data_ready: out.dma_tx_rd_data_ready,
            },
            ReadRequestSide {
                req_valid: out.dma_rx_rd_req_valid,
                req_addr: out.dma_rx_rd_req_addr,
                req_words: out.dma_rx_rd_req_words,
                data_ready: out.dma_rx_rd_data_ready,
            },
        ],
        wr_valid: out.dma_wr_valid,
        wr_addr: out.dma_wr_addr,
        wr_data: out.dma_wr_data,
        wr_strobe: out.dma_wr_strobe,
    }
}

/// One NIC of a host: its model, its inputs and its CSR port's queue.
pub struct NicUnit {
    model: NicModel,
    inputs: NicTopInputs,
    csr_queue: VecDeque<CsrOp>,
    csr_reads_in_flight: VecDeque<u16>,
    csr_results: VecDeque<(u16, u64)>,
    csr_cache: BTreeMap<u16, u64>,
    /// Outputs of the last step.
    pub last_outputs: NicTopOutputs,
    /// CSR writes performed since construction.
    pub csr_writes: u64,
}

impl NicUnit {
    fn new(model: NicModel) -> Self {
        NicUnit {
            model,
            inputs: NicTopInputs::default(),
            csr_queue: VecDeque::new(),
            csr_reads_in_flight: VecDeque::new(),
            csr_results: VecDeque::new(),
            csr_cache: BTreeMap::new(),
            last_outputs: NicTopOutputs::default(),
            csr_writes: 0,
        }
    }

    /// One clock of this NIC against DMA port set `n` of `mem` (the caller advances the
    /// memory once all NICs have stepped).
    fn step(
        &mut self,
        mem: &mut HostMemory,
        n: usize,
        port: &PortDrive,
        reset: bool,
        record: Option<&mut Vec<NicTopInputs>>,
    ) -> NicTopOutputs {
        let d = mem.drive_port(n);
        let i = &mut self.inputs;
        i.reset = reset;
        apply_dma_responses(i, &d);
        i.m_cell_ready = port.m_cell_ready;
        i.s_cell_valid = port.s_cell_valid;
        i.s_cell_data = port.s_cell_data;
        i.s_cell_last = port.s_cell_last;
        let offered = if reset { None } else { self.csr_queue.front() };
        match offered {
            Some(CsrOp::Write { addr, data }) => {
                i.csr_valid = true;
                i.csr_write = true;
                i.csr_addr = *addr;
                i.csr_wdata = *data;
            }
            Some(CsrOp::Read { addr }) => {
                i.csr_valid = true;
                i.csr_write = false;
                i.csr_addr = *addr;
                i.csr_wdata = 0;
            }
            None => i.csr_valid = false,
        }
        let out = self.model.step(&self.inputs);
        if let Some(r) = record {
            r.push(self.inputs);
        }
        mem.observe_port(n, &dma_requests(&out));
        if self.inputs.csr_valid && out.csr_ready {
            match self.csr_queue.pop_front() {
                Some(CsrOp::Read { addr }) => self.csr_reads_in_flight.push_back(addr),
                Some(CsrOp::Write { .. }) => self.csr_writes += 1,
                None => {}
            }
        }
        if out.csr_rdata_valid {
            if let Some(addr) = self.csr_reads_in_flight.pop_front() {
                self.csr_results.push_back((addr, out.csr_rdata));
            }
        }
        self.last_outputs = out;
        out
    }

    /// Forget queued CSR accesses and answers (the NIC was reset or powered off).
    fn reset_csr_port(&mut self) {
        self.csr_queue.clear();
        self.csr_reads_in_flight.clear();
        self.csr_results.clear();
        self.csr_cache.clear();
    }
}

/// The NICs as the host sees them: their models, the host memory behind all their DMA
/// ports, and each one's CSR port queue. Most hosts have one NIC; [`SimNic::add_nic`]
/// adds more (source 003). The [`NicAccess`] of `SimNic` itself is NIC 0's.
pub struct SimNic {
    units: Vec<NicUnit>,
    /// The host memory behind the NICs' DMA ports.
    pub mem: HostMemory,
    /// NIC 0's inputs of every step, when recording (benchmarks replay them on a bare
    /// model).
    pub recorded_inputs: Option<Vec<NicTopInputs>>,
}

impl SimNic {
    /// The model with a zeroed host memory of `memory_bytes`.
    pub fn new(model: NicModel, memory_bytes: usize, timing: HostMemoryTiming) -> Self {
        SimNic {
            units: vec![NicUnit::new(model)],
            mem: HostMemory::new(memory_bytes, timing),
            recorded_inputs: None,
        }
    }

    /// Adds another NIC on the same host memory; returns its number.
    pub fn add_nic(&mut self, model: NicModel) -> usize {
        self.units.push(NicUnit::new(model));
        self.mem.add_dma_port()
    }

    /// NICs of the host.
    pub fn nics(&self) -> usize {
        self.units.len()
    }

    /// NIC `n`.
    pub fn unit(&mut self, n: usize) -> &mut NicUnit {
        &mut self.units[n]
    }

    /// NIC 0's model (for traces).
    pub fn model(&mut self) -> &mut NicModel {
        &mut self.units[0].model
    }

    /// NIC `n`'s model.
    pub fn model_of(&mut self, n: usize) -> &mut NicModel {
        &mut self.units[n].model
    }

    /// CSR accesses waiting for NIC 0's port.
    pub fn csr_pending(&self) -> usize {
        self.units[0].csr_queue.len() + self.units[0].csr_reads_in_flight.len()
    }

    /// One clock of a one-NIC host: NIC 0's inputs from the memory model, `port` (the
    /// fabric) and the CSR queue; then the handshakes. `reset` holds the NIC in reset.
    pub fn step(&mut self, port: &PortDrive, reset: bool) -> NicTopOutputs {
        let out = self.step_nic(0, port, reset);
        self.mem.advance();
        out
    }

    /// One clock of every NIC, NIC `n` driven by `ports[n]`; outputs into `outs`.
    pub fn step_all(&mut self, ports: &[PortDrive], reset: bool, outs: &mut Vec<NicTopOutputs>) {
        outs.clear();
        for (n, port) in ports.iter().enumerate().take(self.units.len()) {
            let out = self.step_nic(n, port, reset);
            outs.push(out);
        }
        self.mem.advance();
    }

    /// NIC `n` alone, the memory not advanced.
    fn step_nic(&mut self, n: usize, port: &PortDrive, reset: bool) -> NicTopOutputs {
        let record = if n == 0 {
            self.recorded_inputs.as_mut()
        } else {
            None
        };
        self.units[n].step(&mut self.mem, n, port, reset, record)
    }

    /// Queue a CSR read of NIC 0 whose answer [`SimNic::take_csr_result`] returns.
    pub fn queue_csr_read(&mut self, addr: u16) {
        self.units[0].csr_queue.push_back(CsrOp::Read { addr });
    }

    /// The oldest CSR read answer of NIC 0 not taken yet.
    pub fn take_csr_result(&mut self) -> Option<(u16, u64)> {
        self.units[0].csr_results.pop_front()
    }

    /// Forget queued CSR accesses and answers of every NIC (reset or power-off).
    fn reset_csr_ports(&mut self) {
        self.units.iter_mut().for_each(NicUnit::reset_csr_port);
    }

    /// NIC `n`'s CSR read (see [`NicAccess::csr_read`]).
    fn csr_read_of(&mut self, n: usize, offset: u32) -> u64 {
        let addr = offset as u16;
        if let Some(v) = self.units[n].csr_cache.get(&addr) {
            return *v;
        }
        // Not read at boot: step this NIC alone, network ports idle, until the answer.
        self.units[n].csr_queue.push_back(CsrOp::Read { addr });
        let idle = PortDrive::default();
        for _ in 0..CSR_READ_TIMEOUT {
            self.step_nic(n, &idle, false);
            self.mem.advance();
            while let Some((a, v)) = self.units[n].csr_results.pop_front() {
                if a == addr && self.units[n].csr_queue.is_empty() {
                    return v;
                }
            }
        }
        u64::MAX
    }

    fn csr_write_of(&mut self, n: usize, offset: u32, value: u64) {
        self.units[n].csr_queue.push_back(CsrOp::Write {
            addr: offset as u16,
            data: value,
        });
    }
}

impl NicAccess for SimNic {
    fn csr_read(&mut self, offset: u32) -> u64 {
        self.csr_read_of(0, offset)
    }

    fn csr_write(&mut self, offset: u32, value: u64) {
        self.csr_write_of(0, offset, value)
    }

    fn mem_read(&mut self, addr: u64, buf: &mut [u8]) {
        let end = (addr as usize).saturating_add(buf.len());
        if end <= self.mem.size() {
            buf.copy_from_slice(self.mem.read_bytes(addr as u32, buf.len()));
        } else {
            buf.fill(0);
        }
    }

    fn mem_write(&mut self, addr: u64, data: &[u8]) {
        let end = (addr as usize).saturating_add(data.len());
        if end <= self.mem.size() {
            self.mem.write_bytes(addr as u32, data);
        }
    }
}

/// One NIC of a [`SimNic`] shared between the host (which steps it) and the driver (which
/// programs it): the driver's [`NicAccess`] to NIC `nic`.
#[derive(Clone)]
pub struct SharedNic {
    inner: Arc<Mutex<SimNic>>,
    nic: usize,
}

impl SharedNic {
    fn lock(&self) -> MutexGuard<'_, SimNic> {
        // A panic while holding the lock leaves a NIC that is still a valid object.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The NIC of the host this handle reaches.
    pub fn nic(&self) -> usize {
        self.nic
    }
}

impl NicAccess for SharedNic {
    fn csr_read(&mut self, offset: u32) -> u64 {
        let n = self.nic;
        self.lock().csr_read_of(n, offset)
    }
    fn csr_write(&mut self, offset: u32, value: u64) {
        let n = self.nic;
        self.lock().csr_write_of(n, offset, value)
    }
    fn mem_read(&mut self, addr: u64, buf: &mut [u8]) {
        self.lock().mem_read(addr, buf)
    }
    fn mem_write(&mut self, addr: u64, data: &[u8]) {
        self.lock().mem_write(addr, data)
    }
}

/// Configuration of one host.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// The driver's configuration; `incarnation` and `first_handle` are drawn anew at every
    /// boot from `seed` and the epoch.
    pub driver: DriverConfig,
    /// Bytes of host memory (the driver's arena must fit, after the application's regions).
    pub memory_bytes: usize,
    pub timing: HostMemoryTiming,
    /// Cycles between two driver polls (>= 1).
    pub poll_interval: u64,
    /// Seeds the incarnations and handles of every boot (mixed with the node and the epoch,
    /// so every host of a cluster may be given the same seed).
    pub seed: u64,
}

/// Where a host is in its power cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum HostPhase {
    /// Powered off (NIC not stepped).
    Off,
    /// NIC held in reset.
    Reset { until: u64 },
    /// Reading NIC_ID and NIC_CONFIG.
    Probe,
    /// The driver runs.
    Running,
    /// The driver failed (see [`Host::failure`]); the NIC keeps running, undriven.
    Failed,
}

/// Something that happened to a host, for the scoreboards and the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// The driver of `epoch` booted at `cycle`.
    Booted { epoch: u32, cycle: u64 },
    /// The driver failed at `cycle`.
    Failed {
        epoch: u32,
        cycle: u64,
        error: String,
    },
}

/// One host (see the module docs).
pub struct Host {
    node: u16,
    config: HostConfig,
    nic: SharedNic,
    driver: Option<Driver<SharedNic>>,
    phase: HostPhase,
    epoch: u32,
    boot_cycle: u64,
    next_poll: u64,
    completions: Vec<Completion>,
    events: Vec<HostEvent>,
    failure: Option<String>,
    /// Per NIC: its cable is plugged in.
    link_up: Vec<bool>,
}

impl Host {
    /// A powered-off host for node `config.driver.node()` with `model` as its NIC.
    pub fn new(config: HostConfig, model: NicModel) -> Result<Self, String> {
        if config.poll_interval == 0 {
            return Err("host poll_interval must be at least 1 cycle".into());
        }
        let end = config.driver.arena_base as u64 + config.driver.arena_needed();
        if end > config.memory_bytes as u64 {
            return Err(format!(
                "host {}: the driver's arena ends at {end:#x}, beyond the {:#x} bytes of host memory",
                config.driver.node(),
                config.memory_bytes
            ));
        }
        let nic = SimNic::new(model, config.memory_bytes, config.timing);
        Ok(Host {
            node: config.driver.node(),
            nic: SharedNic {
                inner: Arc::new(Mutex::new(nic)),
                nic: 0,
            },
            link_up: vec![true],
            config,
            driver: None,
            phase: HostPhase::Off,
            epoch: 0,
            boot_cycle: 0,
            next_poll: 0,
            completions: Vec::new(),
            events: Vec::new(),
            failure: None,
        })
    }

    pub fn node(&self) -> u16 {
        self.node
    }

    /// Adds another NIC (source 003) on the same host memory, before the first power-on;
    /// `config.driver.nics` must count it (the driver's arena holds a completion ring per
    /// NIC). Returns its number.
    pub fn add_nic(&mut self, model: NicModel) -> Result<usize, String> {
        let have = self.nics();
        if self.epoch != 0 || self.phase != HostPhase::Off {
            return Err(format!(
                "host {}: NICs are added before the first power-on",
                self.node
            ));
        }
        if have >= self.config.driver.nics {
            return Err(format!(
                "host {}: driver.nics is {}, room for no NIC {have}",
                self.node, self.config.driver.nics
            ));
        }
        self.link_up.push(true);
        Ok(self.nic.lock().add_nic(model))
    }

    /// NICs of the host.
    pub fn nics(&self) -> usize {
        self.link_up.len()
    }

    /// The NIC carrying the host's traffic (the driver's active NIC; 0 without a driver).
    pub fn active_nic(&self) -> usize {
        self.driver.as_ref().map_or(0, |d| d.multi_nic().active())
    }

    /// Whether NIC `n`'s cable is plugged in.
    pub fn is_link_up(&self, n: usize) -> bool {
        self.link_up.get(n).copied().unwrap_or(false)
    }

    pub fn config(&self) -> &HostConfig {
        &self.config
    }

    /// The configuration, to change what later boots use (a boot reads it when the driver
    /// starts).
    pub fn config_mut(&mut self) -> &mut HostConfig {
        &mut self.config
    }

    pub fn phase(&self) -> HostPhase {
        self.phase
    }

    /// The current boot (0 before the first).
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// The cycle the current epoch's power-on happened.
    pub fn boot_cycle(&self) -> u64 {
        self.boot_cycle
    }

    /// Whether the NIC is powered (stepped).
    pub fn is_powered(&self) -> bool {
        self.phase != HostPhase::Off
    }

    /// The driver, once booted.
    pub fn driver(&self) -> Option<&Driver<SharedNic>> {
        self.driver.as_ref()
    }

    pub fn driver_mut(&mut self) -> Option<&mut Driver<SharedNic>> {
        self.driver.as_mut()
    }

    /// Why the driver failed, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Lock the NIC (its memory, its model) for inspection.
    pub fn nic(&self) -> MutexGuard<'_, SimNic> {
        self.nic.lock()
    }

    /// Application completions returned by the driver since the last call.
    pub fn take_completions(&mut self) -> Vec<Completion> {
        std::mem::take(&mut self.completions)
    }

    /// Host events since the last call.
    pub fn take_events(&mut self) -> Vec<HostEvent> {
        std::mem::take(&mut self.events)
    }

    /// Accepted DMA writes and reads since the last call.
    pub fn take_dma(&mut self) -> (Vec<DmaWrite>, Vec<DmaRead>) {
        let mut nic = self.nic.lock();
        (nic.mem.take_writes(), nic.mem.take_reads())
    }

    /// Record DMA reads too (writes are always recorded).
    pub fn record_dma_reads(&mut self, on: bool) {
        self.nic.lock().mem.record_reads(on);
    }

    /// Write the NIC's waves from now on (one file per NIC, across reboots; the model's
    /// [`Stepper::trace_format`]). Trace time is the fabric's cycle, except that a CSR
    /// read stepping the NIC alone (hardware TPT) moves it ahead by the cycles it took.
    pub fn open_trace(&mut self, path: &Path) -> Result<(), CosimError> {
        self.open_trace_of(0, path)
    }

    /// Write the waves of NIC `n` from now on.
    pub fn open_trace_of(&mut self, n: usize, path: &Path) -> Result<(), CosimError> {
        self.nic.lock().model_of(n).open_trace(path)
    }

    pub fn close_trace(&mut self) {
        let mut nic = self.nic.lock();
        for n in 0..nic.nics() {
            nic.model_of(n).close_trace();
        }
    }

    /// Start a new epoch at `now` (see the module docs). A powered host is power-cycled.
    pub fn power_on(&mut self, now: u64) {
        self.power_off();
        self.epoch += 1;
        self.boot_cycle = now;
        self.failure = None;
        let mut nic = self.nic.lock();
        nic.mem.clear();
        nic.reset_csr_ports();
        drop(nic);
        self.phase = HostPhase::Reset {
            until: now + RESET_CYCLES,
        };
    }

    /// Power off: the driver and everything it knew are gone; the NIC stops.
    pub fn power_off(&mut self) {
        self.driver = None;
        self.completions.clear();
        self.phase = HostPhase::Off;
    }

    /// One cycle at time `now` (the fabric's cycle) of a one-NIC host: `None` when
    /// powered off.
    pub fn step(&mut self, now: u64, port: &PortDrive) -> Option<PortOutputs> {
        let mut out = [None];
        self.step_ports(now, std::slice::from_ref(port), &mut out);
        out[0]
    }

    /// One cycle at time `now` of every NIC, NIC `n` driven by `ports[n]`; its outputs
    /// into `outs[n]` (`None` when powered off).
    pub fn step_ports(&mut self, now: u64, ports: &[PortDrive], outs: &mut [Option<PortOutputs>]) {
        let reset = match self.phase {
            HostPhase::Off => {
                outs.iter_mut().for_each(|o| *o = None);
                return;
            }
            HostPhase::Reset { until } => {
                if now + 1 >= until {
                    self.phase = HostPhase::Probe;
                    let mut nic = self.nic.lock();
                    for n in 0..nic.nics() {
                        let u = nic.unit(n);
                        u.csr_queue.push_back(CsrOp::Read { addr: csr::NIC_ID });
                        u.csr_queue.push_back(CsrOp::Read {
                            addr: csr::NIC_CONFIG,
                        });
                    }
                }
                true
            }
            _ => false,
        };
        let mut raw = Vec::with_capacity(outs.len());
        let mut nic = self.nic.lock();
        // The traces stay on the fabric's clock across the cycles the host was off.
        for n in 0..nic.nics() {
            nic.model_of(n).skip_to(now);
        }
        nic.step_all(ports, reset, &mut raw);
        drop(nic);
        if reset {
            // A NIC in reset neither sends nor takes cells: whatever its outputs show
            // before the reset takes effect is not a cell.
            outs.iter_mut()
                .for_each(|o| *o = Some(PortOutputs::default()));
            return;
        }
        match self.phase {
            HostPhase::Probe => self.probe(now),
            HostPhase::Running if now >= self.next_poll => {
                self.next_poll = now + self.config.poll_interval;
                self.poll(now);
            }
            _ => {}
        }
        for (o, out) in outs.iter_mut().zip(raw) {
            *o = Some(PortOutputs {
                m_cell_valid: out.m_cell_valid,
                m_cell_data: out.m_cell_data,
                m_cell_last: out.m_cell_last,
                s_cell_ready: out.s_cell_ready,
            });
        }
    }

    /// The NIC's link went down or came back (the cable): the driver hears of it as from a
    /// link-state interrupt ([`nic_driver::Driver::link_changed`]).
    pub fn link_changed(&mut self, now: u64, up: bool) {
        self.link_up.iter_mut().for_each(|l| *l = up);
        let Some(driver) = self.driver.as_mut() else {
            return;
        };
        if let Err(e) = driver.link_changed(now, up) {
            self.fail(now, e);
        }
    }

    /// NIC `n`'s cable was pulled (`up` false) or plugged back. When the active NIC's
    /// link goes down and another NIC's is up, the driver fails over to the first such
    /// NIC ([`nic_driver::Driver::fail_over`]), which is returned (the network should now
    /// deliver the host's traffic there). When every NIC is down, or the first comes back,
    /// the driver hears of it as [`Host::link_changed`] says.
    pub fn nic_link_changed(&mut self, now: u64, n: usize, up: bool) -> Option<usize> {
        if n >= self.link_up.len() {
            return None;
        }
        let was_any = self.link_up.iter().any(|&l| l);
        self.link_up[n] = up;
        let any = self.link_up.iter().any(|&l| l);
        let active = self.active_nic();
        let driver = self.driver.as_mut()?;
        let result = if !up && n == active && any {
            let to = self.link_up.iter().position(|&l| l)?;
            driver.fail_over(now, to).map(|_| Some(to))
        } else if up && !was_any && n != active {
            driver.fail_over(now, n).map(|_| Some(n))
        } else if was_any != any {
            driver.link_changed(now, up).map(|_| None)
        } else {
            Ok(None)
        };
        match result {
            Ok(to) => to,
            Err(e) => {
                self.fail(now, e);
                None
            }
        }
    }

    /// The network delivers the host's traffic to NIC `n` from now on (a route change):
    /// the driver fails over to it ([`nic_driver::Driver::fail_over`]).
    pub fn route_changed(&mut self, now: u64, n: usize) {
        let Some(driver) = self.driver.as_mut() else {
            return;
        };
        if let Err(e) = driver.fail_over(now, n) {
            self.fail(now, e);
        }
    }

    /// Run the driver's poll now (also done every `poll_interval` by [`Host::step`]).
    pub fn poll(&mut self, now: u64) {
        let Some(driver) = self.driver.as_mut() else {
            return;
        };
        match driver.poll(now) {
            Ok(c) => self.completions.extend(c),
            Err(e) => self.fail(now, e),
        }
    }

    fn probe(&mut self, now: u64) {
        let mut nic = self.nic.lock();
        let mut done = true;
        for n in 0..nic.nics() {
            let u = nic.unit(n);
            while let Some((addr, value)) = u.csr_results.pop_front() {
                u.csr_cache.insert(addr, value);
            }
            done &= [csr::NIC_ID, csr::NIC_CONFIG]
                .iter()
                .all(|a| u.csr_cache.contains_key(a));
        }
        drop(nic);
        if !done {
            if now > self.boot_cycle + CSR_READ_TIMEOUT {
                self.fail(
                    now,
                    format!("NIC_ID and NIC_CONFIG not answered in {CSR_READ_TIMEOUT} cycles"),
                );
            }
            return;
        }
        let mut config = self.config.driver.clone();
        // One draw per (seed, node, epoch): all three in the generator's seed.
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&self.config.seed.to_le_bytes());
        seed[8..12].copy_from_slice(&self.epoch.to_le_bytes());
        seed[12..14].copy_from_slice(&self.node.to_le_bytes());
        let draw: u64 = ChaCha8Rng::from_seed(seed).gen();
        config.incarnation = draw as u32;
        config.first_handle = (draw >> 32) as u32;
        config.nics = self.nics();
        let extra: Vec<SharedNic> = (1..self.nics())
            .map(|n| SharedNic {
                inner: self.nic.inner.clone(),
                nic: n,
            })
            .collect();
        let booted = Driver::new(self.nic.clone(), config).and_then(|mut d| {
            for nic in extra {
                d.add_nic(nic)?;
            }
            d.boot(now)?;
            Ok(d)
        });
        match booted {
            Ok(d) => {
                self.driver = Some(d);
                self.phase = HostPhase::Running;
                self.next_poll = now + 1;
                self.events.push(HostEvent::Booted {
                    epoch: self.epoch,
                    cycle: now,
                });
            }
            Err(e) => self.fail(now, e),
        }
    }

    fn fail(&mut self, now: u64, error: impl std::fmt::Display) {
        let error = format!("host {} epoch {}: {error}", self.node, self.epoch);
        self.events.push(HostEvent::Failed {
            epoch: self.epoch,
            cycle: now,
            error: error.clone(),
        });
        self.failure = Some(error);
        self.driver = None;
        self.phase = HostPhase::Failed;
    }
}
