//! Reference model of the requester's `SqCsrAccess`: the per-QP CSR registers of the send
//! engine, written from `docs/csr-map.md` and the offsets and bits of `nic_abi::csr`.

use nic_abi::csr;
use nic_rtl::requester::QpEntry;
use rust_hdl::prelude::*;

/// A queue pair's entry of the send engine's table (the fields of `QpEntry`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SqEntry {
    pub base: u32,
    pub remote: u32,
    pub sq_pi: u32,
    pub size_log2: u8,
    pub sq_next: u32,
    pub enable: bool,
    pub resync: bool,
    pub waiting: bool,
    pub draining: bool,
    pub retry: u8,
    pub sq_una: u32,
    pub una_needs_response: bool,
    pub timer_start: u32,
}

impl From<&SqEntry> for QpEntry {
    /// The RTL's entry (each field at its `QpEntry` width).
    fn from(e: &SqEntry) -> Self {
        QpEntry {
            base: (e.base as u64).to_bits(),
            remote: (e.remote as u64).to_bits(),
            sq_pi: (e.sq_pi as u64).to_bits(),
            size_log2: (e.size_log2 as u64).to_bits(),
            sq_next: (e.sq_next as u64).to_bits(),
            enable: e.enable,
            resync: e.resync,
            waiting: e.waiting,
            draining: e.draining,
            retry: (e.retry as u64).to_bits(),
            sq_una: (e.sq_una as u64).to_bits(),
            una_needs_response: e.una_needs_response,
            timer_start: (e.timer_start as u64).to_bits(),
        }
    }
}

impl From<&QpEntry> for SqEntry {
    /// The model's entry of an RTL one.
    fn from(e: &QpEntry) -> Self {
        SqEntry {
            base: e.base.to_u32(),
            remote: e.remote.to_u32(),
            sq_pi: e.sq_pi.to_u32(),
            size_log2: e.size_log2.to_u64() as u8,
            sq_next: e.sq_next.to_u32(),
            enable: e.enable,
            resync: e.resync,
            waiting: e.waiting,
            draining: e.draining,
            retry: e.retry.to_u64() as u8,
            sq_una: e.sq_una.to_u32(),
            una_needs_response: e.una_needs_response,
            timer_start: e.timer_start.to_u32(),
        }
    }
}

/// The register at `offset` (a `csr::QP_*` offset) read from `e`; 0 for the queue pairs at
/// or above `queue_pairs` and the registers the send engine does not hold.
pub fn read(e: &SqEntry, qp: usize, queue_pairs: usize, offset: u16) -> u64 {
    if qp >= queue_pairs {
        return 0;
    }
    match offset {
        csr::QP_SQ_BASE => e.base as u64,
        csr::QP_SQ_SIZE_LOG2 => e.size_log2 as u64,
        csr::QP_SQ_PI => e.sq_pi as u64,
        csr::QP_SQ_CI => e.sq_una as u64,
        csr::QP_REMOTE => e.remote as u64,
        csr::QP_CTRL => e.enable as u64,
        csr::QP_STATUS => {
            e.sq_next as u64
                | (e.waiting as u64) << csr::QpStatus::WAITING_BIT
                | (e.retry as u64) << csr::QpStatus::RETRY_COUNT_SHIFT
        }
        _ => 0,
    }
}

/// What a write of `data` to the register at `offset` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub entry: SqEntry,
    /// The queue pair was reset (QP_CTRL reset or send-side reset).
    pub qp_reset: bool,
    /// Reset, or its ring moved (SQ_BASE, SQ_SIZE_LOG2).
    pub moved: bool,
}

/// `e` after a write of `data` at clock `now`; unchanged for a queue pair at or above
/// `queue_pairs`.
pub fn write(
    e: &SqEntry,
    qp: usize,
    queue_pairs: usize,
    offset: u16,
    data: u32,
    now: u32,
) -> Written {
    let mut w = Written {
        entry: *e,
        qp_reset: false,
        moved: false,
    };
    if qp >= queue_pairs {
        return w;
    }
    let n = &mut w.entry;
    match offset {
        csr::QP_SQ_BASE => n.base = data,
        csr::QP_SQ_SIZE_LOG2 => n.size_log2 = (data & 0x1F) as u8,
        csr::QP_SQ_PI => n.sq_pi = data & 0xFF_FFFF,
        csr::QP_REMOTE => n.remote = data,
        csr::QP_CTRL => {
            n.enable = data as u64 & csr::QP_CTRL_ENABLE != 0;
            if data as u64 & (csr::QP_CTRL_RESET | csr::QP_CTRL_SEND_RESET) != 0 {
                let start = (data >> csr::QP_CTRL_START_PSN_SHIFT) & 0xFF_FFFF;
                n.sq_pi = start;
                n.sq_next = start;
                n.sq_una = start;
                n.resync = true;
                n.retry = 0;
                n.waiting = false;
                n.una_needs_response = false;
                n.draining = false;
                n.timer_start = now;
                w.qp_reset = true;
            }
        }
        _ => {}
    }
    w.moved = w.qp_reset || offset == csr::QP_SQ_BASE || offset == csr::QP_SQ_SIZE_LOG2;
    w
}
