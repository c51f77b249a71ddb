//! The optional hardware translation and protection table (source document 001).
//!
//! `Tpt`: memory regions the driver registers, checked and translated for incoming RDMA
//! requests, with CSR management and an exception queue for STags this NIC does not know.
//! The parent only wires three child blocks, each exported and tested on its own:
//! - [`TptTable`] (`table.rs`): the entry RAM banks, the staging registers and commands,
//!   `TPT_STATUS`, the reset sweep, and the sequencer that owns the RAM ports (a lookup's
//!   read and valid-bit write-back, or a command, one at a time);
//! - [`TptChecks`] (`checks.rs`): the request in flight, the key, rights and bounds checks,
//!   the translation, the one-shot / invalidate decision and the response;
//! - [`TptExceptionQueue`] (`exception_queue.rs`): the head for an unknown STag,
//!   `EXC_HEAD0..2`, `EXC_ANSWER` with its tag, `EXC_TIMEOUT`.
//!
//! Tests: `tests.rs` (the `Tpt`'s documented behaviour and a plain-Rust model of the
//! whole table); each child's in `rtl/tests/tpt_*.rs`.
//!
//! Follows source 001 (remote keys bound to byte ranges, one-shot keys that are disabled
//! as soon as they are used) and source 003 (32-bit STags; an STag not in this NIC's table
//! is punted to the driver, which answers with the memory location or refuses it; the
//! invalidate bit clears the STag after use). The check order is Linux siw's
//! (`siw_check_mem`: valid, key, rights, bounds). Contract: `docs/nic-blocks.md` (TPT lookup
//! and TPT CSR side port), registers `docs/csr-map.md` (TPT), behaviour
//! `docs/nic-architecture.md` (responder rule 5).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: clears the registers, the exception head
//!   and then every table entry, see "Reset").
//! - CSR side port from `NicCsr`: `s_csr_valid` / `s_csr_ready`, `s_csr_write`, `s_csr_reg`
//!   (6: `(offset - 0x4000) / 8`: 0 `TPT_INDEX`, 1 `TPT_WORD0`, 2 `TPT_VADDR`, 3
//!   `TPT_LENGTH`, 4 `TPT_PADDR`, 5 `TPT_COMMAND`, 6 `TPT_STATUS`, 32 `EXC_HEAD0`, 33
//!   `EXC_HEAD1`, 34 `EXC_HEAD2`, 35 `EXC_ANSWER`, 36 `EXC_TIMEOUT`; any other value reads 0
//!   and ignores writes), `s_csr_wdata` (64); read data `m_csr_rdata_valid`, `m_csr_rdata`
//!   (64), one beat per accepted read, the clock after it was accepted.
//! - Lookup port from `ReceiveQueueEngine`: `s_tpt_req_valid` / `s_tpt_req_ready`,
//!   `s_tpt_req` (a [`TptRequest`], the bundle of `common/bundles.rs`: `stag` index =
//!   bits 31:8, key = bits 7:0; `access` bit 0 remote read, 1 remote write, 2 atomic;
//!   `commit` 1: the request is executed if it passes, 0: check only, the responder
//!   refuses it anyway for a later rule, so it must not use up the entry); response `m_tpt_resp_valid` (one
//!   clock per accepted request, in request order; the contract has no ready for it),
//!   `m_tpt_resp_ok`, `m_tpt_resp_paddr` (32, 0 when not ok). `ok` and `paddr` hold their
//!   value between responses.
//! - Bind write port from the `SendQueueEngine` (a BIND RKEY executed in send-queue order,
//!   source 001): `s_bind_valid` / `s_bind_ready`, `s_bind` (a
//!   [`TptBindWrite`](crate::common::TptBindWrite): index = STag bits 31:8, key, rights,
//!   valid (0: unbind), vaddr, length, paddr). Kept in registers of its own (never the
//!   staging registers, so a command being staged is not disturbed); ready while no
//!   earlier write waits. The table's sequencer applies it like a write command, in one
//!   clock, after a command pending and before any lookup not yet accepted (lookups wait),
//!   so within three clocks of acceptance, and writes the entry a CSR write of the same
//!   fields writes (one-shot 0); an index at or beyond `entries` is accepted and dropped.
//!
//! Lookup: an index at or beyond `entries`, or an entry whose valid bit is clear, goes to
//! the exception queue. Otherwise the checks run in siw's order: key (STag bits 7:0 equal
//! the entry's key), rights (every access bit requested is granted), bounds (`vaddr >=
//! base` and `vaddr + length <= base + entry length`, computed exactly: no 64- or 32-bit
//! wrap can make an out-of-range request pass). Any failure answers `ok = 0`. Success
//! answers `ok = 1`, `paddr = physical base + (vaddr - base)` (32 bits, wrapping) and, when
//! the entry is one-shot or the request has `invalidate` set, clears the entry's valid bit
//! (only on success and only with `commit`: a request that fails a check, or that the
//! responder refuses after it (RECEIVER_NOT_READY, rule 6 after the TPT's rule 5), changes
//! nothing).
//!
//! Exception queue (003): one entry deep, which is all that in-order responses can use: the
//! missed request is shown in `EXC_HEAD0..2` (`EXC_HEAD0`: bit 0 valid, 7:2 qp, 11:8
//! access, 12 the request's invalidate flag (an addition: the contract leaves bit 12
//! free; with `commit` 0 it reads 0), 13 check only (`commit` 0: the driver must not use
//! up a one-shot registration for it), 23:16 the head's tag, 63:32 STag; `EXC_HEAD1` vaddr; `EXC_HEAD2` length; all
//! zero while no head is valid) and further lookups wait (`s_tpt_req_ready` low) until it
//! is resolved. A write to `EXC_ANSWER` whose bits 23:16 equal the valid head's tag
//! answers it (bit 0 = 1: `ok = 1`, `paddr` = bits 63:32; bit 0 = 0: `ok = 0`) and pops
//! it. Any other write to `EXC_ANSWER` (no head valid, or another tag: an answer written
//! after its head timed out) is ignored and counted in `TPT_STATUS` bits 23:16
//! (wrapping), so a late answer never applies to the next head. The tag starts at 0 after
//! reset and advances by one (mod 256) whenever a head is answered or times out; an answer
//! 256 exceptions late would match again, which `EXC_TIMEOUT` (65536 clocks) makes moot.
//! Otherwise the request is refused (`ok = 0`) after waiting `EXC_TIMEOUT` clocks: the
//! head becomes visible with a countdown loaded from `EXC_TIMEOUT` and is refused in the
//! clock the countdown is at 0 (0 refuses in the first clock it is visible; a later write
//! of `EXC_TIMEOUT` applies to later exceptions). An answer accepted in that same clock
//! wins over the timeout. `EXC_TIMEOUT` keeps bits 31:0 (reset 65536).
//!
//! Commands (`TPT_COMMAND` = 1 write, 2 invalidate, 3 read, 4 take: read and invalidate in
//! one operation, so no lookup comes between the two; through the staging registers
//! `TPT_INDEX`, `TPT_WORD0`, `TPT_VADDR`, `TPT_LENGTH`, `TPT_PADDR`; other values are
//! ignored): a command whose `TPT_INDEX` is at or beyond `entries` is ignored and counted in
//! `TPT_STATUS` bits 15:8 (wrapping). Invalidate clears only the valid bit (key, rights and
//! range read back unchanged). `TPT_STATUS` bit 0 (busy) is set from the clock after a
//! command is accepted until it has completed, and during the reset sweep; while busy,
//! accesses to registers 0..=5 (staging and command) wait (`s_csr_ready` low), so a
//! staging read never sees a half-done command; `TPT_STATUS` and the exception registers
//! are always accepted. Staging registers keep only their fields (`TPT_INDEX` 23:0,
//! `TPT_WORD0` bits 4:0 and 15:8, `TPT_LENGTH` and `TPT_PADDR` 31:0); other bits read 0.
//!
//! Consistency: the table's RAM ports are owned by one sequencer that runs one operation
//! at a time (a lookup's read, checks and valid-bit write-back; a command's write, or read
//! and write-back), so a command racing a lookup of the same entry is applied wholly before
//! or wholly after it, never in between: the lookup sees the old or the new entry, never
//! a mix, and a one-shot write-back never lands on a newer entry. A command accepted while
//! a lookup is in flight waits for it; a lookup accepted in the same clock as a command
//! goes first. Read data from a clock in which the same RAM was written is never used.
//!
//! Latency and throughput: a lookup accepted at edge t answers in the clock after edge t+2
//! (three clocks); the next lookup can be accepted in that clock, so at most one lookup
//! every three clocks. A missed lookup's head is visible three clocks after acceptance; its
//! answer comes the clock after the `EXC_ANSWER` write is accepted or after the timeout.
//! CSR reads answer the clock after acceptance. A command runs in the clock after its
//! acceptance, or up to two clocks later behind a lookup in flight, and takes one clock
//! (write) or two (invalidate, read).
//!
//! Storage (iCE40 RAM4K = SB_RAM40_4K, 256 x 16 bits; HX8K has 32): an entry is 141 bits:
//! meta 13 (valid, rights 3, one-shot, key 8), virtual base 64, length 32, physical base 32.
//! The table is built of banks of 256 entries, each bank four RustHDL `RAM`s (synchronous
//! read) that map one-to-one onto RAM4K blocks in their native 256 x 16 shape: meta 1,
//! virtual base 4, length 2, physical base 2, so 9 RAM4K per bank (141 of 144 bits used).
//! Entries 16..=256 take one bank (9 RAM4K: 16..128 entries cost the same, a RAM4K is never
//! shallower than 256 words at 16 bits); 1024 entries take 4 banks = 36 RAM4K, 4 more than
//! an HX8K has (and the `CellReassembler` needs 4 of its own), so 1024 entries do not fit
//! HX8K. A 48-bit virtual base (125 bits, 8 RAM4K per bank) would make 1024 entries take
//! exactly 32 RAM4K: all of the HX8K's block RAM, still none left for the reassembler; with
//! the reassembler, 28 RAM4K are left for the TPT, 112 bits per entry at 1024 entries.
//! 512 entries (18 RAM4K) fit. Banks beyond the first cost a read-data multiplexer (141
//! bits wide, one input per bank) in logic. The RAM depth is fixed at 256 because RustHDL's
//! `RAM<_, N>` has a compile-time depth and yosys does not shrink a deeper memory whose
//! upper address bits are constant (measured: a 4096-deep, 16-bit RAM addressed by 8 bits
//! took 8 RAM4K instead of 1).
//!
//! Measured (yosys 0.23 `synth_ice40`): 256 entries 9 SB_RAM40_4K, 1169 SB_LUT4, 896 FFs;
//! 1024 entries 36 SB_RAM40_4K, 1752 SB_LUT4, 910 FFs. Of these, 294 FFs and about 80 LUTs
//! (400 at 1024 entries) are yosys's read-first emulation: RustHDL's `RAM` Verilog returns
//! the old word when the address being read is written in the same clock, which the iCE40
//! RAM does not guarantee, so yosys adds bypass registers and multiplexers. This block never
//! uses read data from such a clock; the same Verilog with yosys's `(* no_rw_check *)` on
//! the memories synthesises to 1092 LUTs / 602 FFs (256) and 1341 LUTs / 604 FFs (1024).
//!
//! Reset: every register returns to its reset value, the exception head is dropped without
//! a response (the whole receive path restarts with the reset), and the table is cleared
//! (all fields zero, so no entry is valid) in `min(entries, 256)` clocks during which
//! lookups wait and the block is busy. Also runs at power-up in simulation.
//!
//! Limits: `entries` a power of two in 16..=4096.

pub mod checks;
pub mod exception_queue;
pub mod table;
#[cfg(test)]
mod tests;

pub use checks::TptChecks;
pub use exception_queue::{TptExceptionQueue, TPT_EXC_TIMEOUT_RESET};
pub use table::{TptState, TptTable, TPT_BANK_ENTRIES, TPT_MAX_ENTRIES, TPT_MIN_ENTRIES};

use crate::common::{TptBindWrite, TptRequest};
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct Tpt {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // CSR side port.
    pub s_csr_valid: Signal<In, Bit>,
    pub s_csr_ready: Signal<Out, Bit>,
    pub s_csr_write: Signal<In, Bit>,
    pub s_csr_reg: Signal<In, Bits<6>>,
    pub s_csr_wdata: Signal<In, Bits<64>>,
    pub m_csr_rdata_valid: Signal<Out, Bit>,
    pub m_csr_rdata: Signal<Out, Bits<64>>,
    // Lookup port.
    pub s_tpt_req_valid: Signal<In, Bit>,
    pub s_tpt_req_ready: Signal<Out, Bit>,
    pub s_tpt_req: Signal<In, TptRequest>,
    pub m_tpt_resp_valid: Signal<Out, Bit>,
    pub m_tpt_resp_ok: Signal<Out, Bit>,
    pub m_tpt_resp_paddr: Signal<Out, Bits<32>>,
    // Bind write port.
    pub s_bind_valid: Signal<In, Bit>,
    pub s_bind_ready: Signal<Out, Bit>,
    pub s_bind: Signal<In, TptBindWrite>,
    /// (Not `table`: a Verilog keyword.)
    entry_table: TptTable,
    checks: TptChecks,
    exceptions: TptExceptionQueue,
}

impl Tpt {
    /// A table of `entries` entries (STag indices `0..entries`).
    ///
    /// Panics when `entries` is not a power of two in 16..=4096.
    pub fn new(entries: usize) -> Self {
        table::check_entries("Tpt", entries);
        Tpt {
            clock: Default::default(),
            reset: Default::default(),
            s_csr_valid: Default::default(),
            s_csr_ready: Default::default(),
            s_csr_write: Default::default(),
            s_csr_reg: Default::default(),
            s_csr_wdata: Default::default(),
            m_csr_rdata_valid: Default::default(),
            m_csr_rdata: Default::default(),
            s_tpt_req_valid: Default::default(),
            s_tpt_req_ready: Default::default(),
            s_tpt_req: Default::default(),
            m_tpt_resp_valid: Default::default(),
            m_tpt_resp_ok: Default::default(),
            m_tpt_resp_paddr: Default::default(),
            s_bind_valid: Default::default(),
            s_bind_ready: Default::default(),
            s_bind: Default::default(),
            entry_table: TptTable::new(entries),
            checks: TptChecks::new(entries),
            exceptions: TptExceptionQueue::new(TPT_EXC_TIMEOUT_RESET),
        }
    }
}

impl Default for Tpt {
    fn default() -> Self {
        Self::new(TPT_BANK_ENTRIES)
    }
}

impl Logic for Tpt {
    #[hdl_gen]
    fn update(&mut self) {
        self.entry_table.clock.next = self.clock.val();
        self.checks.clock.next = self.clock.val();
        self.exceptions.clock.next = self.clock.val();
        self.entry_table.reset.next = self.reset.val();
        self.checks.reset.next = self.reset.val();
        self.exceptions.reset.next = self.reset.val();
        // CSR side port: the table decides ready and registers the read data.
        self.entry_table.s_csr_valid.next = self.s_csr_valid.val();
        self.entry_table.s_csr_write.next = self.s_csr_write.val();
        self.entry_table.s_csr_reg.next = self.s_csr_reg.val();
        self.entry_table.s_csr_wdata.next = self.s_csr_wdata.val();
        self.s_csr_ready.next = self.entry_table.s_csr_ready.val();
        self.m_csr_rdata_valid.next = self.entry_table.m_csr_rdata_valid.val();
        self.m_csr_rdata.next = self.entry_table.m_csr_rdata.val();
        self.exceptions.s_csr_valid.next = self.s_csr_valid.val();
        self.exceptions.s_csr_ready.next = self.entry_table.s_csr_ready.val();
        self.exceptions.s_csr_write.next = self.s_csr_write.val();
        self.exceptions.s_csr_reg.next = self.s_csr_reg.val();
        self.exceptions.s_csr_wdata.next = self.s_csr_wdata.val();
        self.entry_table.s_exc_rdata.next = self.exceptions.m_csr_rdata.val();
        self.entry_table.s_stat_stale.next = self.exceptions.stat_stale.val();
        // Lookup port: the table accepts, the checks keep the request.
        self.entry_table.s_lookup_valid.next = self.s_tpt_req_valid.val();
        // A field of a bundle cannot be sliced in the Verilog: shifted and narrowed instead.
        self.entry_table.s_lookup_index.next = bit_cast::<12, 32>(self.s_tpt_req.val().stag >> 8);
        self.entry_table.s_hold.next = self.exceptions.m_exc_valid.val();
        self.s_tpt_req_ready.next = self.entry_table.s_lookup_ready.val();
        self.checks.s_req_accept.next = self.entry_table.m_lookup_accept.val();
        self.checks.s_req.next = self.s_tpt_req.val();
        // The entry read, the checks' decision.
        self.checks.s_entry_valid.next = self.entry_table.m_entry_valid.val();
        self.checks.s_entry_meta.next = self.entry_table.m_entry_meta.val();
        self.checks.s_entry_vaddr.next = self.entry_table.m_entry_vaddr.val();
        self.checks.s_entry_length.next = self.entry_table.m_entry_length.val();
        self.checks.s_entry_paddr.next = self.entry_table.m_entry_paddr.val();
        self.entry_table.s_clear.next = self.checks.m_clear.val();
        // A miss: the request in flight becomes the exception head; its answer.
        self.exceptions.s_miss.next = self.checks.m_miss.val();
        self.exceptions.s_head.next = self.checks.m_req.val();
        self.checks.s_answer_valid.next = self.exceptions.m_answer_valid.val();
        self.checks.s_answer_ok.next = self.exceptions.m_answer_ok.val();
        self.checks.s_answer_paddr.next = self.exceptions.m_answer_paddr.val();
        // Bind write port: the table's sequencer serves it like a command.
        self.entry_table.s_bind_valid.next = self.s_bind_valid.val();
        self.entry_table.s_bind.next = self.s_bind.val();
        self.s_bind_ready.next = self.entry_table.s_bind_ready.val();
        // Response.
        self.m_tpt_resp_valid.next = self.checks.m_resp_valid.val();
        self.m_tpt_resp_ok.next = self.checks.m_resp_ok.val();
        self.m_tpt_resp_paddr.next = self.checks.m_resp_paddr.val();
    }
}

impl ClockedBlock for Tpt {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
