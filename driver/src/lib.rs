//! The NIC driver: verbs, software TPT and the rejoin protocol (source document 000).
//!
//! This crate has no simulator dependency: it is generic over [`NicAccess`], the NIC's
//! register (CSR) and host-memory interface, so the same code drives the Verilated
//! model, the RustHDL model, or a real device.
//!
//! Status: the foundation issue only fixes this seam; verbs, the software TPT and the
//! rejoin protocol arrive with the driver issue.

/// Register and host-memory access to one NIC, as a driver sees it.
pub trait NicAccess {
    /// Read a 64-bit control/status register at byte offset `offset`.
    fn csr_read(&mut self, offset: u32) -> u64;
    /// Write a 64-bit control/status register at byte offset `offset`.
    fn csr_write(&mut self, offset: u32, value: u64);
    /// Copy host memory at physical address `addr` into `buf`.
    fn mem_read(&mut self, addr: u64, buf: &mut [u8]);
    /// Copy `data` into host memory at physical address `addr`.
    fn mem_write(&mut self, addr: u64, data: &[u8]);
}
