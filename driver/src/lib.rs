//! The NIC driver: verbs, software TPT and the rejoin protocol (source document 000).
//!
//! This crate has no simulator dependency: it is generic over [`NicAccess`], the NIC's
//! register (CSR) and host-memory interface, so the same code drives the Verilated
//! model, the RustHDL model, or a real device.
//!
//! | module | concern |
//! | --- | --- |
//! | [`control`] | control messages exchanged as SEND payloads: wire format, reliable delivery |
//! | [`tpt`] | the software TPT (000 Fig. 3), registration (Fig. 5), transfer checks (Fig. 6) |
//! | [`dereg`] | deregistration's fence: a region is freed once no peer's request can land in it |
//! | [`pools`] | push-push buffer pools of 002: pool messages, target and initiator state machines |
//! | [`regcache`] | the registration cache of 004: registrations kept across requests, lazy deregistration |
//! | [`hw_tpt`] | the NIC's hardware TPT when it has one: STags, entry programming, exceptions |
//! | [`rejoin`] | the rejoin protocol (000 Figs. 7-8) as a pure state machine |
//! | [`heartbeat`] | the heartbeat baseline of 000 \[0006\], same events and actions |
//! | [`membership`] | either protocol behind one type |
//! | [`driver`] | [`Driver`]: one NIC, its queues, completions and the protocol glue |
//! | [`verbs`] | the verbs a process uses on a [`Driver`] and their errors |
//! | [`windows`] | the local work requests of 001: BIND RKEY (memory windows) and DELAY |
//! | [`multi_nic`] | several NICs per host (003): host-wide STags, migration, failover |

#![warn(missing_docs)]

pub mod control;
pub mod dereg;
pub mod driver;
pub mod heartbeat;
pub mod hw_tpt;
pub mod membership;
pub mod multi_nic;
pub mod pools;
pub mod regcache;
pub mod rejoin;
pub mod tpt;
pub mod verbs;
pub mod windows;

pub use driver::{Driver, DriverConfig, DriverError};
pub use verbs::{Completion, VerbsError};
pub use windows::{BindError, LocalWork};

/// A node number (the NIC's `NODE_ID`, 16 bits).
pub type NodeId = u16;

/// Register and host-memory access to one NIC, as a driver sees it.
///
/// Object safe. Semantics every implementation keeps:
/// - **CSR writes are posted**: `csr_write` returns at once, and writes take effect in the
///   order they were made (a doorbell written after a WQE's memory write sees the WQE).
/// - **CSR reads are slow** in co-simulation (each one runs the model until the response
///   comes back) and on real hardware (a PCIe round trip): the driver reads CSRs only at
///   initialisation, never on a hot path; it learns about progress from completion queue
///   entries in host memory. With a hardware TPT it also reads `TPT_STATUS` after a TPT
///   command (registration, deregistration) and `EXC_HEAD0` every
///   [`DriverConfig::exception_poll_interval`] while RDMA is enabled.
/// - **Host memory access is instant** and coherent with the NIC's DMA: what `mem_write`
///   stores is what the NIC reads next, and what the NIC has written is what `mem_read` sees.
/// - Physical addresses are 32 bits (`nic_abi::HOST_ADDRESS_BITS`); CSR offsets are the
///   byte offsets of `nic_abi::csr`.
pub trait NicAccess {
    /// Read a 64-bit control/status register at byte offset `offset` (slow: see above).
    fn csr_read(&mut self, offset: u32) -> u64;
    /// Write a 64-bit control/status register at byte offset `offset` (posted, in order).
    fn csr_write(&mut self, offset: u32, value: u64);
    /// Copy host memory at physical address `addr` into `buf`.
    fn mem_read(&mut self, addr: u64, buf: &mut [u8]);
    /// Copy `data` into host memory at physical address `addr`.
    fn mem_write(&mut self, addr: u64, data: &[u8]);
}

impl<T: NicAccess + ?Sized> NicAccess for &mut T {
    fn csr_read(&mut self, offset: u32) -> u64 {
        (**self).csr_read(offset)
    }
    fn csr_write(&mut self, offset: u32, value: u64) {
        (**self).csr_write(offset, value)
    }
    fn mem_read(&mut self, addr: u64, buf: &mut [u8]) {
        (**self).mem_read(addr, buf)
    }
    fn mem_write(&mut self, addr: u64, data: &[u8]) {
        (**self).mem_write(addr, data)
    }
}

impl<T: NicAccess + ?Sized> NicAccess for Box<T> {
    fn csr_read(&mut self, offset: u32) -> u64 {
        (**self).csr_read(offset)
    }
    fn csr_write(&mut self, offset: u32, value: u64) {
        (**self).csr_write(offset, value)
    }
    fn mem_read(&mut self, addr: u64, buf: &mut [u8]) {
        (**self).mem_read(addr, buf)
    }
    fn mem_write(&mut self, addr: u64, data: &[u8]) {
        (**self).mem_write(addr, data)
    }
}
