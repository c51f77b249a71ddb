//! Reference model of the requester's `BindWriter` (`rtl/src/requester/bind_writer.rs`):
//! a good BIND's local completion goes on only once its TPT bind write has been accepted
//! (the write offered once per completion), every other one passes at once; the write's
//! entry from the BIND's fields (`abi/src/queue_entries.rs`).

use nic_abi::queue_entries::BIND_RIGHTS_MASK;
use nic_abi::{Wqe, BIND_OPCODE};

/// The TPT entry a BIND writes: (index, key, rights, valid, vaddr, length, paddr).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BindEntry {
    pub index: u32,
    pub key: u8,
    pub rights: u8,
    pub valid: bool,
    pub vaddr: u64,
    pub length: u32,
    pub paddr: u32,
}

impl BindEntry {
    /// The entry of BIND `w` (an unbind, null address and zero length, is invalid).
    pub fn of(w: &Wqe) -> Self {
        BindEntry {
            index: w.stag >> 8,
            key: w.stag as u8,
            rights: (w.immediate & BIND_RIGHTS_MASK) as u8,
            valid: !(w.remote_vaddr == 0 && w.length == 0),
            vaddr: w.remote_vaddr,
            length: w.length,
            paddr: w.local_addr,
        }
    }
}

/// The block's outputs in one clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BindWriterOut {
    pub bind_valid: bool,
    pub local_valid: bool,
    pub local_ready: bool,
}

/// The model: whether the waiting completion's write has been accepted.
#[derive(Clone, Copy, Debug, Default)]
pub struct BindWriterModel {
    written: bool,
}

impl BindWriterModel {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether a completion of `w` with `status` needs a TPT write first.
    pub fn needs_write(w: &Wqe, status: u8) -> bool {
        w.opcode == BIND_OPCODE && status == 0
    }

    /// The outputs for a completion offered (`Some((wqe, status))`) or not, with the
    /// acknowledgement machine's and the TPT's ready; then the clock edge.
    pub fn step(
        &mut self,
        offer: Option<(&Wqe, u8)>,
        ack_ready: bool,
        bind_ready: bool,
    ) -> BindWriterOut {
        let Some((w, status)) = offer else {
            return BindWriterOut {
                local_ready: ack_ready,
                ..Default::default()
            };
        };
        let bind = Self::needs_write(w, status);
        let pass = !bind || self.written || bind_ready;
        let out = BindWriterOut {
            bind_valid: bind && !self.written,
            local_valid: pass,
            local_ready: ack_ready && pass,
        };
        if ack_ready && pass {
            self.written = false;
        } else if out.bind_valid && bind_ready {
            self.written = true;
        }
        out
    }
}
