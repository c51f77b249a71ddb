//! `Tpt`: the optional translation and protection table: memory regions the driver
//! registers, checked and translated for incoming RDMA requests, with CSR management and
//! an exception queue for STags this NIC does not know.
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
//!   `s_tpt_req_stag` (32: index = bits 31:8, key = bits 7:0), `s_tpt_req_vaddr` (64),
//!   `s_tpt_req_length` (32), `s_tpt_req_access` (3: bit 0 remote read, 1 remote write, 2
//!   atomic), `s_tpt_req_invalidate`, `s_tpt_req_qp` (6), `s_tpt_req_commit` (1: the
//!   request is executed if it passes; 0: check only, the responder refuses it anyway for
//!   a later rule, so it must not use up the entry); response `m_tpt_resp_valid` (one
//!   clock per accepted request, in request order; the contract has no ready for it),
//!   `m_tpt_resp_ok`, `m_tpt_resp_paddr` (32, 0 when not ok). `ok` and `paddr` hold their
//!   value between responses.
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

use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Entries per RAM bank: the depth of an iCE40 RAM4K in its 16-bit shape.
pub const TPT_BANK_ENTRIES: usize = 256;
/// Smallest and largest table.
pub const TPT_MIN_ENTRIES: usize = 16;
pub const TPT_MAX_ENTRIES: usize = 4096;
/// `EXC_TIMEOUT` after reset.
pub const TPT_EXC_TIMEOUT_RESET: u64 = nic_abi::csr::EXC_TIMEOUT_RESET;

/// What the table's RAM sequencer is doing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum TptState {
    /// Writing zero to every entry (after reset).
    Clear,
    /// Ready for a command or a lookup.
    Idle,
    /// A lookup's entry is being read; first checks.
    LookupRead,
    /// Remaining checks, response or exception, valid-bit write-back.
    LookupCheck,
    /// A read or invalidate command's entry has been read: staging load or write-back.
    CmdApply,
}

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
    pub s_tpt_req_stag: Signal<In, Bits<32>>,
    pub s_tpt_req_vaddr: Signal<In, Bits<64>>,
    pub s_tpt_req_length: Signal<In, Bits<32>>,
    pub s_tpt_req_access: Signal<In, Bits<3>>,
    pub s_tpt_req_invalidate: Signal<In, Bit>,
    pub s_tpt_req_qp: Signal<In, Bits<6>>,
    pub s_tpt_req_commit: Signal<In, Bit>,
    pub m_tpt_resp_valid: Signal<Out, Bit>,
    pub m_tpt_resp_ok: Signal<Out, Bit>,
    pub m_tpt_resp_paddr: Signal<Out, Bits<32>>,
    // Table: one element per bank of 256 entries. Meta: 0 valid, 3:1 rights, 4 one-shot,
    // 12:5 key.
    meta_ram: Vec<RAM<Bits<13>, 8>>,
    vaddr_ram: Vec<RAM<Bits<64>, 8>>,
    length_ram: Vec<RAM<Bits<32>, 8>>,
    paddr_ram: Vec<RAM<Bits<32>, 8>>,
    state: DFF<TptState>,
    sweep: DFF<Bits<8>>,
    // Staging registers (word 0 kept in the meta layout).
    index_reg: DFF<Bits<24>>,
    stage_meta: DFF<Bits<13>>,
    stage_vaddr: DFF<Bits<64>>,
    stage_length: DFF<Bits<32>>,
    stage_paddr: DFF<Bits<32>>,
    cmd_pending: DFF<Bit>,
    cmd_kind: DFF<Bits<3>>,
    refused: DFF<Bits<8>>,
    exc_timeout: DFF<Bits<32>>,
    // The lookup in flight (also the exception head while `exc_valid`).
    req_stag: DFF<Bits<32>>,
    req_vaddr: DFF<Bits<64>>,
    req_length: DFF<Bits<32>>,
    req_access: DFF<Bits<3>>,
    req_invalidate: DFF<Bit>,
    req_commit: DFF<Bit>,
    req_qp: DFF<Bits<6>>,
    req_in_table: DFF<Bit>,
    /// Bank of the entry being read (selects the read data the clock after the address).
    rd_bank: DFF<Bits<4>>,
    // First-stage results of a lookup.
    ent_meta: DFF<Bits<13>>,
    ent_length: DFF<Bits<32>>,
    ent_paddr: DFF<Bits<32>>,
    hit: DFF<Bit>,
    key_ok: DFF<Bit>,
    rights_ok: DFF<Bit>,
    /// `vaddr >= base` and `vaddr - base < 2^32`.
    offset_small: DFF<Bit>,
    offset_low: DFF<Bits<32>>,
    exc_valid: DFF<Bit>,
    exc_timer: DFF<Bits<32>>,
    /// The head's tag: advances when a head is answered or times out.
    exc_tag: DFF<Bits<8>>,
    /// Answers ignored (no head, or not the head's tag), wrapping.
    stale: DFF<Bits<8>>,
    resp_valid: DFF<Bit>,
    resp_ok: DFF<Bit>,
    resp_paddr: DFF<Bits<32>>,
    rdata_valid: DFF<Bit>,
    rdata: DFF<Bits<64>>,
    // Combinational intermediates.
    busy: Signal<Local, Bit>,
    csr_ready: Signal<Local, Bit>,
    csr_accept: Signal<Local, Bit>,
    csr_wr: Signal<Local, Bit>,
    cmd_known: Signal<Local, Bit>,
    cmd_in_range: Signal<Local, Bit>,
    answer_write: Signal<Local, Bit>,
    answer: Signal<Local, Bit>,
    req_ready: Signal<Local, Bit>,
    req_accept: Signal<Local, Bit>,
    req_index: Signal<Local, Bits<24>>,
    req_index_bank: Signal<Local, Bits<4>>,
    index_bank: Signal<Local, Bits<4>>,
    req_stag_bank: Signal<Local, Bits<4>>,
    rd_index: Signal<Local, Bits<8>>,
    rd_meta: Signal<Local, Bits<13>>,
    rd_vaddr: Signal<Local, Bits<64>>,
    rd_length: Signal<Local, Bits<32>>,
    rd_paddr: Signal<Local, Bits<32>>,
    rd_key: Signal<Local, Bits<8>>,
    rd_rights: Signal<Local, Bits<3>>,
    req_vaddr_low: Signal<Local, Bits<32>>,
    req_vaddr_high: Signal<Local, Bits<32>>,
    rd_vaddr_low: Signal<Local, Bits<32>>,
    rd_vaddr_high: Signal<Local, Bits<32>>,
    offset_low33: Signal<Local, Bits<33>>,
    offset_high33: Signal<Local, Bits<33>>,
    borrow: Signal<Local, Bit>,
    room: Signal<Local, Bits<32>>,
    check_ok: Signal<Local, Bit>,
    translated: Signal<Local, Bits<32>>,
    resp_set: Signal<Local, Bit>,
    load_entry: Signal<Local, Bit>,
    resp_ok_next: Signal<Local, Bit>,
    resp_from_table: Signal<Local, Bit>,
    wr_index: Signal<Local, Bits<8>>,
    wr_bank: Signal<Local, Bits<4>>,
    wr_all_banks: Signal<Local, Bit>,
    wr_meta_en: Signal<Local, Bit>,
    wr_rest_en: Signal<Local, Bit>,
    wr_meta: Signal<Local, Bits<13>>,
    wr_vaddr: Signal<Local, Bits<64>>,
    wr_length: Signal<Local, Bits<32>>,
    wr_paddr: Signal<Local, Bits<32>>,
    wdata_meta: Signal<Local, Bits<13>>,
    word0: Signal<Local, Bits<64>>,
    head0: Signal<Local, Bits<64>>,
    head_invalidate: Signal<Local, Bit>,
    head_check_only: Signal<Local, Bit>,
    head_hidden: Signal<Local, Bit>,
    entries_c: Constant<Bits<24>>,
    sweep_last: Constant<Bits<8>>,
    /// Bank bits of an index that select a bank (so one bank needs no multiplexer).
    bank_mask: Constant<Bits<4>>,
    exc_timeout_reset: Constant<Bits<32>>,
}

impl Tpt {
    /// A table of `entries` entries (STag indices `0..entries`).
    ///
    /// Panics when `entries` is not a power of two in 16..=4096.
    pub fn new(entries: usize) -> Self {
        assert!(
            entries.is_power_of_two() && (TPT_MIN_ENTRIES..=TPT_MAX_ENTRIES).contains(&entries),
            "Tpt: entries must be a power of two between {TPT_MIN_ENTRIES} and {TPT_MAX_ENTRIES}, got {entries}"
        );
        let banks = entries.div_ceil(TPT_BANK_ENTRIES);
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
            s_tpt_req_stag: Default::default(),
            s_tpt_req_vaddr: Default::default(),
            s_tpt_req_length: Default::default(),
            s_tpt_req_access: Default::default(),
            s_tpt_req_invalidate: Default::default(),
            s_tpt_req_qp: Default::default(),
            s_tpt_req_commit: Default::default(),
            m_tpt_resp_valid: Default::default(),
            m_tpt_resp_ok: Default::default(),
            m_tpt_resp_paddr: Default::default(),
            meta_ram: (0..banks).map(|_| Default::default()).collect(),
            vaddr_ram: (0..banks).map(|_| Default::default()).collect(),
            length_ram: (0..banks).map(|_| Default::default()).collect(),
            paddr_ram: (0..banks).map(|_| Default::default()).collect(),
            state: Default::default(),
            sweep: Default::default(),
            index_reg: Default::default(),
            stage_meta: Default::default(),
            stage_vaddr: Default::default(),
            stage_length: Default::default(),
            stage_paddr: Default::default(),
            cmd_pending: Default::default(),
            cmd_kind: Default::default(),
            refused: Default::default(),
            exc_timeout: DFF::default(),
            req_stag: Default::default(),
            req_vaddr: Default::default(),
            req_length: Default::default(),
            req_access: Default::default(),
            req_invalidate: Default::default(),
            req_commit: Default::default(),
            req_qp: Default::default(),
            req_in_table: Default::default(),
            rd_bank: Default::default(),
            ent_meta: Default::default(),
            ent_length: Default::default(),
            ent_paddr: Default::default(),
            hit: Default::default(),
            key_ok: Default::default(),
            rights_ok: Default::default(),
            offset_small: Default::default(),
            offset_low: Default::default(),
            exc_valid: Default::default(),
            exc_timer: Default::default(),
            exc_tag: Default::default(),
            stale: Default::default(),
            resp_valid: Default::default(),
            resp_ok: Default::default(),
            resp_paddr: Default::default(),
            rdata_valid: Default::default(),
            rdata: Default::default(),
            busy: Default::default(),
            csr_ready: Default::default(),
            csr_accept: Default::default(),
            csr_wr: Default::default(),
            cmd_known: Default::default(),
            cmd_in_range: Default::default(),
            answer_write: Default::default(),
            answer: Default::default(),
            req_ready: Default::default(),
            req_accept: Default::default(),
            req_index: Default::default(),
            req_index_bank: Default::default(),
            index_bank: Default::default(),
            req_stag_bank: Default::default(),
            rd_index: Default::default(),
            rd_meta: Default::default(),
            rd_vaddr: Default::default(),
            rd_length: Default::default(),
            rd_paddr: Default::default(),
            rd_key: Default::default(),
            rd_rights: Default::default(),
            req_vaddr_low: Default::default(),
            req_vaddr_high: Default::default(),
            rd_vaddr_low: Default::default(),
            rd_vaddr_high: Default::default(),
            offset_low33: Default::default(),
            offset_high33: Default::default(),
            borrow: Default::default(),
            room: Default::default(),
            check_ok: Default::default(),
            translated: Default::default(),
            resp_set: Default::default(),
            load_entry: Default::default(),
            resp_ok_next: Default::default(),
            resp_from_table: Default::default(),
            wr_index: Default::default(),
            wr_bank: Default::default(),
            wr_all_banks: Default::default(),
            wr_meta_en: Default::default(),
            wr_rest_en: Default::default(),
            wr_meta: Default::default(),
            wr_vaddr: Default::default(),
            wr_length: Default::default(),
            wr_paddr: Default::default(),
            wdata_meta: Default::default(),
            word0: Default::default(),
            head0: Default::default(),
            head_invalidate: Default::default(),
            head_check_only: Default::default(),
            head_hidden: Default::default(),
            entries_c: Constant::new((entries as u64).to_bits()),
            sweep_last: Constant::new(((entries.min(TPT_BANK_ENTRIES) - 1) as u64).to_bits()),
            exc_timeout_reset: Constant::new(TPT_EXC_TIMEOUT_RESET.to_bits()),
            bank_mask: Constant::new(((banks - 1) as u64).to_bits()),
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
        dff_setup!(
            self,
            clock,
            state,
            sweep,
            index_reg,
            stage_meta,
            stage_vaddr,
            stage_length,
            stage_paddr,
            cmd_pending,
            cmd_kind,
            refused,
            exc_timeout,
            req_stag,
            req_vaddr,
            req_length,
            req_access,
            req_invalidate,
            req_commit,
            req_qp,
            req_in_table,
            rd_bank,
            ent_meta,
            ent_length,
            ent_paddr,
            hit,
            key_ok,
            rights_ok,
            offset_small,
            offset_low,
            exc_valid,
            exc_timer,
            exc_tag,
            stale,
            resp_valid,
            resp_ok,
            resp_paddr,
            rdata_valid,
            rdata
        );
        // Read data of the bank addressed last clock.
        self.rd_meta.next = 0.into();
        self.rd_vaddr.next = 0.into();
        self.rd_length.next = 0.into();
        self.rd_paddr.next = 0.into();
        for i in 0..self.meta_ram.len() {
            if self.rd_bank.q.val().index() == i {
                self.rd_meta.next = self.meta_ram[i].read_data.val();
                self.rd_vaddr.next = self.vaddr_ram[i].read_data.val();
                self.rd_length.next = self.length_ram[i].read_data.val();
                self.rd_paddr.next = self.paddr_ram[i].read_data.val();
            }
        }
        self.rd_key.next = self.rd_meta.val().get_bits::<8>(5);
        self.rd_rights.next = self.rd_meta.val().get_bits::<3>(1);
        // First-stage arithmetic (used in LookupRead).
        // vaddr - base as a low and a high 33-bit difference: the low one's bit 32 is the
        // borrow; the offset is below 2^32 (and not negative) exactly when the high
        // difference is 0 without a borrow or 1 with one.
        self.req_vaddr_low.next = self.req_vaddr.q.val().get_bits::<32>(0);
        self.req_vaddr_high.next = self.req_vaddr.q.val().get_bits::<32>(32);
        self.rd_vaddr_low.next = self.rd_vaddr.val().get_bits::<32>(0);
        self.rd_vaddr_high.next = self.rd_vaddr.val().get_bits::<32>(32);
        self.offset_low33.next = bit_cast::<33, 32>(self.req_vaddr_low.val())
            - bit_cast::<33, 32>(self.rd_vaddr_low.val());
        self.offset_high33.next = bit_cast::<33, 32>(self.req_vaddr_high.val())
            - bit_cast::<33, 32>(self.rd_vaddr_high.val());
        self.borrow.next = self.offset_low33.val().get_bit(32);
        // Second-stage arithmetic (used in LookupCheck).
        self.room.next = self.ent_length.q.val() - self.offset_low.q.val();
        self.translated.next = self.ent_paddr.q.val() + self.offset_low.q.val();
        self.check_ok.next = self.key_ok.q.val()
            & self.rights_ok.q.val()
            & self.offset_small.q.val()
            & (self.offset_low.q.val() <= self.ent_length.q.val())
            & (self.req_length.q.val() <= self.room.val());
        // CSR port.
        self.busy.next = self.cmd_pending.q.val() | (self.state.q.val() == TptState::Clear);
        self.csr_ready.next = !self.reset.val() & !(self.busy.val() & (self.s_csr_reg.val() < 6));
        self.csr_accept.next = self.s_csr_valid.val() & self.csr_ready.val();
        self.csr_wr.next = self.csr_accept.val() & self.s_csr_write.val();
        self.cmd_known.next = (self.s_csr_wdata.val().get_bits::<61>(3) == 0)
            & (self.s_csr_wdata.val().get_bits::<3>(0) != 0)
            & (self.s_csr_wdata.val().get_bits::<3>(0) <= 4);
        self.cmd_in_range.next = self.index_reg.q.val() < self.entries_c.val();
        self.answer_write.next = self.csr_wr.val() & (self.s_csr_reg.val() == 35);
        self.answer.next = self.answer_write.val()
            & self.exc_valid.q.val()
            & (self.s_csr_wdata.val().get_bits::<8>(16) == self.exc_tag.q.val());
        if self.answer_write.val() & !self.answer.val() {
            self.stale.d.next = self.stale.q.val() + 1;
        }
        self.wdata_meta.next = bit_cast::<13, 5>(self.s_csr_wdata.val().get_bits::<5>(0))
            | (bit_cast::<13, 8>(self.s_csr_wdata.val().get_bits::<8>(8)) << 5);
        self.index_bank.next = self.index_reg.q.val().get_bits::<4>(8) & self.bank_mask.val();
        // Lookup port.
        self.req_ready.next = !self.reset.val()
            & (self.state.q.val() == TptState::Idle)
            & !self.cmd_pending.q.val()
            & !self.exc_valid.q.val();
        self.req_accept.next = self.s_tpt_req_valid.val() & self.req_ready.val();
        self.req_index.next = self.s_tpt_req_stag.val().get_bits::<24>(8);
        self.req_index_bank.next = self.req_index.val().get_bits::<4>(8) & self.bank_mask.val();
        self.req_stag_bank.next = self.req_stag.q.val().get_bits::<4>(16) & self.bank_mask.val();
        // Defaults: no RAM write, read the lookup's entry, no response.
        self.rd_index.next = self.req_index.val().get_bits::<8>(0);
        self.wr_index.next = self.index_reg.q.val().get_bits::<8>(0);
        self.wr_bank.next = self.index_bank.val();
        self.wr_all_banks.next = false;
        self.wr_meta_en.next = false;
        self.wr_rest_en.next = false;
        self.wr_meta.next = self.stage_meta.q.val();
        self.wr_vaddr.next = self.stage_vaddr.q.val();
        self.wr_length.next = self.stage_length.q.val();
        self.wr_paddr.next = self.stage_paddr.q.val();
        self.resp_valid.d.next = false;
        self.resp_set.next = false;
        self.load_entry.next = false;
        self.resp_ok_next.next = false;
        self.resp_from_table.next = false;
        self.rdata_valid.d.next = self.csr_accept.val() & !self.s_csr_write.val();
        // Staging, command and exception-timeout writes.
        if self.csr_wr.val() {
            match self.s_csr_reg.val().index() {
                0 => {
                    self.index_reg.d.next = self.s_csr_wdata.val().get_bits::<24>(0);
                }
                36 => {
                    self.exc_timeout.d.next = self.s_csr_wdata.val().get_bits::<32>(0);
                }
                _ => {}
            }
        }
        if self.csr_wr.val() & (self.s_csr_reg.val() == 5) & self.cmd_known.val() {
            if self.cmd_in_range.val() {
                self.cmd_pending.d.next = true;
                self.cmd_kind.d.next = self.s_csr_wdata.val().get_bits::<3>(0);
            } else {
                self.refused.d.next = self.refused.q.val() + 1;
            }
        }
        // Exception head: answered, timed out, or still waiting.
        if self.exc_valid.q.val() {
            if self.answer.val() {
                self.exc_valid.d.next = false;
                self.exc_tag.d.next = self.exc_tag.q.val() + 1;
                self.resp_set.next = true;
                self.resp_ok_next.next = self.s_csr_wdata.val().get_bit(0);
            } else if self.exc_timer.q.val() == 0 {
                self.exc_valid.d.next = false;
                self.exc_tag.d.next = self.exc_tag.q.val() + 1;
                self.resp_set.next = true;
            } else {
                self.exc_timer.d.next = self.exc_timer.q.val() - 1;
            }
        }
        // The table's RAM sequencer.
        match self.state.q.val() {
            TptState::Clear => {
                self.wr_index.next = self.sweep.q.val();
                // The staging registers are zero here (cleared by reset, not writable
                // while busy): the sweep writes them, saving a zero multiplexer.
                self.wr_all_banks.next = true;
                self.wr_meta_en.next = true;
                self.wr_rest_en.next = true;
                self.sweep.d.next = self.sweep.q.val() + 1;
                if self.sweep.q.val() == self.sweep_last.val() {
                    self.state.d.next = TptState::Idle;
                }
            }
            TptState::Idle => {
                if self.cmd_pending.q.val() {
                    self.rd_index.next = self.index_reg.q.val().get_bits::<8>(0);
                    self.rd_bank.d.next = self.index_bank.val();
                    if self.cmd_kind.q.val() == 1 {
                        self.wr_meta_en.next = true;
                        self.wr_rest_en.next = true;
                        self.cmd_pending.d.next = false;
                    } else {
                        self.state.d.next = TptState::CmdApply;
                    }
                } else if self.req_accept.val() {
                    self.rd_bank.d.next = self.req_index_bank.val();
                    self.req_stag.d.next = self.s_tpt_req_stag.val();
                    self.req_vaddr.d.next = self.s_tpt_req_vaddr.val();
                    self.req_length.d.next = self.s_tpt_req_length.val();
                    self.req_access.d.next = self.s_tpt_req_access.val();
                    self.req_invalidate.d.next = self.s_tpt_req_invalidate.val();
                    self.req_commit.d.next = self.s_tpt_req_commit.val();
                    self.req_qp.d.next = self.s_tpt_req_qp.val();
                    self.req_in_table.d.next = self.req_index.val() < self.entries_c.val();
                    self.state.d.next = TptState::LookupRead;
                }
            }
            TptState::CmdApply => {
                // Read (3) and take (4) load the staging registers with the entry as it
                // was; invalidate (2) and take (4) clear its valid bit, in this one clock.
                if (self.cmd_kind.q.val() == 3) | (self.cmd_kind.q.val() == 4) {
                    self.load_entry.next = true;
                }
                if (self.cmd_kind.q.val() == 2) | (self.cmd_kind.q.val() == 4) {
                    self.wr_meta_en.next = true;
                    self.wr_meta.next = self.rd_meta.val().replace_bit(0, false);
                }
                self.cmd_pending.d.next = false;
                self.state.d.next = TptState::Idle;
            }
            TptState::LookupRead => {
                self.ent_meta.d.next = self.rd_meta.val();
                self.ent_length.d.next = self.rd_length.val();
                self.ent_paddr.d.next = self.rd_paddr.val();
                self.hit.d.next = self.req_in_table.q.val() & self.rd_meta.val().get_bit(0);
                self.key_ok.d.next = self.rd_key.val() == self.req_stag.q.val().get_bits::<8>(0);
                self.rights_ok.d.next = (self.req_access.q.val() & !self.rd_rights.val()) == 0;
                self.offset_small.d.next = ((self.offset_high33.val() == 0) & !self.borrow.val())
                    | ((self.offset_high33.val() == 1) & self.borrow.val());
                self.offset_low.d.next = self.offset_low33.val().get_bits::<32>(0);
                self.state.d.next = TptState::LookupCheck;
            }
            TptState::LookupCheck => {
                if self.hit.q.val() {
                    self.resp_set.next = true;
                    self.resp_ok_next.next = self.check_ok.val();
                    self.resp_from_table.next = true;
                    if self.check_ok.val()
                        & self.req_commit.q.val()
                        & (self.ent_meta.q.val().get_bit(4) | self.req_invalidate.q.val())
                    {
                        self.wr_index.next = self.req_stag.q.val().get_bits::<8>(8);
                        self.wr_bank.next = self.req_stag_bank.val();
                        self.wr_meta_en.next = true;
                        self.wr_meta.next = self.ent_meta.q.val().replace_bit(0, false);
                    }
                } else {
                    self.exc_valid.d.next = true;
                    self.exc_timer.d.next = self.exc_timeout.q.val();
                }
                self.state.d.next = TptState::Idle;
            }
            _ => {
                self.state.d.next = TptState::Idle;
            }
        }
        // Staging registers: loaded by a read command or written through the CSR port
        // (never both: staging writes wait while a command is pending).
        if self.load_entry.val() {
            self.stage_meta.d.next = self.rd_meta.val();
            self.stage_vaddr.d.next = self.rd_vaddr.val();
            self.stage_length.d.next = self.rd_length.val();
            self.stage_paddr.d.next = self.rd_paddr.val();
        }
        if self.csr_wr.val() & (self.s_csr_reg.val() == 1) {
            self.stage_meta.d.next = self.wdata_meta.val();
        }
        if self.csr_wr.val() & (self.s_csr_reg.val() == 2) {
            self.stage_vaddr.d.next = self.s_csr_wdata.val();
        }
        if self.csr_wr.val() & (self.s_csr_reg.val() == 3) {
            self.stage_length.d.next = self.s_csr_wdata.val().get_bits::<32>(0);
        }
        if self.csr_wr.val() & (self.s_csr_reg.val() == 4) {
            self.stage_paddr.d.next = self.s_csr_wdata.val().get_bits::<32>(0);
        }
        // The response: the translation or the driver's answer; paddr 0 when refused.
        if self.resp_set.val() {
            self.resp_valid.d.next = true;
            self.resp_ok.d.next = self.resp_ok_next.val();
            self.resp_paddr.d.next = self.s_csr_wdata.val().get_bits::<32>(32);
            if self.resp_from_table.val() {
                self.resp_paddr.d.next = self.translated.val();
            }
            if !self.resp_ok_next.val() {
                self.resp_paddr.d.next = 0.into();
            }
        }
        if self.reset.val() {
            self.state.d.next = TptState::Clear;
            self.sweep.d.next = 0.into();
            self.index_reg.d.next = 0.into();
            self.stage_meta.d.next = 0.into();
            self.stage_vaddr.d.next = 0.into();
            self.stage_length.d.next = 0.into();
            self.stage_paddr.d.next = 0.into();
            self.cmd_pending.d.next = false;
            self.refused.d.next = 0.into();
            self.exc_timeout.d.next = self.exc_timeout_reset.val();
            self.exc_valid.d.next = false;
            self.exc_tag.d.next = 0.into();
            self.stale.d.next = 0.into();
            self.resp_valid.d.next = false;
            self.rdata_valid.d.next = false;
        }
        // RAM ports: every bank reads the same address; writes go to one bank, or to all
        // of them while clearing.
        for i in 0..self.meta_ram.len() {
            self.meta_ram[i].read_clock.next = self.clock.val();
            self.meta_ram[i].write_clock.next = self.clock.val();
            self.meta_ram[i].read_address.next = self.rd_index.val();
            self.meta_ram[i].write_address.next = self.wr_index.val();
            self.meta_ram[i].write_data.next = self.wr_meta.val();
            self.meta_ram[i].write_enable.next = self.wr_meta_en.val()
                & !self.reset.val()
                & (self.wr_all_banks.val() | (self.wr_bank.val().index() == i));
            self.vaddr_ram[i].read_clock.next = self.clock.val();
            self.vaddr_ram[i].write_clock.next = self.clock.val();
            self.vaddr_ram[i].read_address.next = self.rd_index.val();
            self.vaddr_ram[i].write_address.next = self.wr_index.val();
            self.vaddr_ram[i].write_data.next = self.wr_vaddr.val();
            self.vaddr_ram[i].write_enable.next = self.wr_rest_en.val()
                & !self.reset.val()
                & (self.wr_all_banks.val() | (self.wr_bank.val().index() == i));
            self.length_ram[i].read_clock.next = self.clock.val();
            self.length_ram[i].write_clock.next = self.clock.val();
            self.length_ram[i].read_address.next = self.rd_index.val();
            self.length_ram[i].write_address.next = self.wr_index.val();
            self.length_ram[i].write_data.next = self.wr_length.val();
            self.length_ram[i].write_enable.next = self.wr_rest_en.val()
                & !self.reset.val()
                & (self.wr_all_banks.val() | (self.wr_bank.val().index() == i));
            self.paddr_ram[i].read_clock.next = self.clock.val();
            self.paddr_ram[i].write_clock.next = self.clock.val();
            self.paddr_ram[i].read_address.next = self.rd_index.val();
            self.paddr_ram[i].write_address.next = self.wr_index.val();
            self.paddr_ram[i].write_data.next = self.wr_paddr.val();
            self.paddr_ram[i].write_enable.next = self.wr_rest_en.val()
                & !self.reset.val()
                & (self.wr_all_banks.val() | (self.wr_bank.val().index() == i));
        }
        // CSR read data.
        self.word0.next = bit_cast::<64, 5>(self.stage_meta.q.val().get_bits::<5>(0))
            | (bit_cast::<64, 8>(self.stage_meta.q.val().get_bits::<8>(5)) << 8);
        // The head registers read as zero while no head is valid (applied as an override
        // of the read data register, which maps onto its synchronous reset).
        // (1-bit flags through their own signals: an inverted bit widened in the Verilog
        // expression would set every upper bit.)
        self.head_invalidate.next = self.req_invalidate.q.val() & self.req_commit.q.val();
        self.head_check_only.next = !self.req_commit.q.val();
        self.head0.next = bits::<64>(1)
            | (bit_cast::<64, 6>(self.req_qp.q.val()) << 2)
            | (bit_cast::<64, 3>(self.req_access.q.val()) << 8)
            | (bit_cast::<64, 1>(self.head_invalidate.val().into()) << 12)
            | (bit_cast::<64, 1>(self.head_check_only.val().into()) << 13)
            | (bit_cast::<64, 8>(self.exc_tag.q.val()) << 16)
            | (bit_cast::<64, 32>(self.req_stag.q.val()) << 32);
        self.head_hidden.next = !self.exc_valid.q.val()
            & ((self.s_csr_reg.val() == 32)
                | (self.s_csr_reg.val() == 33)
                | (self.s_csr_reg.val() == 34));
        match self.s_csr_reg.val().index() {
            0 => {
                self.rdata.d.next = bit_cast::<64, 24>(self.index_reg.q.val());
            }
            1 => {
                self.rdata.d.next = self.word0.val();
            }
            2 => {
                self.rdata.d.next = self.stage_vaddr.q.val();
            }
            3 => {
                self.rdata.d.next = bit_cast::<64, 32>(self.stage_length.q.val());
            }
            4 => {
                self.rdata.d.next = bit_cast::<64, 32>(self.stage_paddr.q.val());
            }
            6 => {
                self.rdata.d.next = bit_cast::<64, 1>(self.busy.val().into())
                    | (bit_cast::<64, 8>(self.refused.q.val()) << 8)
                    | (bit_cast::<64, 8>(self.stale.q.val()) << 16);
            }
            32 => {
                self.rdata.d.next = self.head0.val();
            }
            33 => {
                self.rdata.d.next = self.req_vaddr.q.val();
            }
            34 => {
                self.rdata.d.next = bit_cast::<64, 32>(self.req_length.q.val());
            }
            36 => {
                self.rdata.d.next = bit_cast::<64, 32>(self.exc_timeout.q.val());
            }
            _ => {
                self.rdata.d.next = 0.into();
            }
        }
        if self.head_hidden.val() {
            self.rdata.d.next = 0.into();
        }
        // Outputs.
        self.s_csr_ready.next = self.csr_ready.val();
        self.m_csr_rdata_valid.next = self.rdata_valid.q.val();
        self.m_csr_rdata.next = self.rdata.q.val();
        self.s_tpt_req_ready.next = self.req_ready.val();
        self.m_tpt_resp_valid.next = self.resp_valid.q.val();
        self.m_tpt_resp_ok.next = self.resp_ok.q.val();
        self.m_tpt_resp_paddr.next = self.resp_paddr.q.val();
    }
}

impl ClockedBlock for Tpt {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{settle, tick};
    use nic_abi::csr;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::VecDeque;

    /// `s_csr_reg` of a CSR byte offset.
    fn reg(offset: u16) -> u8 {
        ((offset - csr::TPT_INDEX) / 8) as u8
    }

    const WORD0_FIELDS: u64 = 0xFF1F;

    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Entry {
        word0: u64,
        vaddr: u64,
        length: u32,
        paddr: u32,
    }

    #[derive(Clone, Copy, Debug, Default)]
    struct Request {
        stag: u32,
        vaddr: u64,
        length: u32,
        access: u8,
        invalidate: bool,
        qp: u8,
        /// 0: check only (refused afterwards by the responder).
        commit: bool,
    }

    impl Request {
        /// `EXC_HEAD0` without the tag.
        fn head0(&self) -> u64 {
            1 | (self.qp as u64) << 2
                | (self.access as u64) << 8
                | ((self.invalidate && self.commit) as u64) << 12
                | (!self.commit as u64) << 13
                | (self.stag as u64) << 32
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Lookup {
        Answer { ok: bool, paddr: u32 },
        Miss,
    }

    const FAIL: Lookup = Lookup::Answer {
        ok: false,
        paddr: 0,
    };

    /// Plain-Rust model of the table: staging registers, commands and the lookup checks,
    /// applied one operation at a time in the order the block serialises them.
    struct TptModel {
        table: Vec<Entry>,
        index: u32,
        staging: Entry,
        refused: u8,
        exc_timeout: u32,
        /// The exception head's tag, and the answers ignored.
        exc_tag: u8,
        stale: u8,
    }

    impl TptModel {
        fn new(entries: usize) -> Self {
            TptModel {
                table: vec![Entry::default(); entries],
                index: 0,
                staging: Entry::default(),
                refused: 0,
                exc_timeout: TPT_EXC_TIMEOUT_RESET as u32,
                exc_tag: 0,
                stale: 0,
            }
        }

        /// A CSR write (the exception answer is handled by the caller).
        fn write(&mut self, r: u8, wdata: u64) {
            match r {
                0 => self.index = wdata as u32 & 0xFF_FFFF,
                1 => self.staging.word0 = wdata & WORD0_FIELDS,
                2 => self.staging.vaddr = wdata,
                3 => self.staging.length = wdata as u32,
                4 => self.staging.paddr = wdata as u32,
                5 if (1..=4).contains(&wdata) => {
                    let i = self.index as usize;
                    if i >= self.table.len() {
                        self.refused = self.refused.wrapping_add(1);
                    } else {
                        match wdata {
                            1 => self.table[i] = self.staging,
                            2 => self.table[i].word0 &= !csr::TPT_VALID,
                            3 => self.staging = self.table[i],
                            _ => {
                                self.staging = self.table[i];
                                self.table[i].word0 &= !csr::TPT_VALID;
                            }
                        }
                    }
                }
                36 => self.exc_timeout = wdata as u32,
                _ => {}
            }
        }

        /// A CSR read of a table register (`TPT_STATUS` with busy = 0; the exception head
        /// registers are the caller's).
        fn read(&self, r: u8) -> u64 {
            match r {
                0 => self.index as u64,
                1 => self.staging.word0,
                2 => self.staging.vaddr,
                3 => self.staging.length as u64,
                4 => self.staging.paddr as u64,
                6 => (self.refused as u64) << 8 | (self.stale as u64) << 16,
                36 => self.exc_timeout as u64,
                _ => 0,
            }
        }

        /// siw's order: valid (else the exception queue), key, rights, bounds.
        fn lookup(&mut self, q: &Request) -> Lookup {
            let i = (q.stag >> 8) as usize;
            if i >= self.table.len() || self.table[i].word0 & csr::TPT_VALID == 0 {
                return Lookup::Miss;
            }
            let e = &mut self.table[i];
            if (e.word0 >> csr::TPT_KEY_SHIFT) as u8 != q.stag as u8 {
                return FAIL;
            }
            if q.access as u64 & !(e.word0 >> 1) & 7 != 0 {
                return FAIL;
            }
            let (va, base) = (q.vaddr as u128, e.vaddr as u128);
            if va < base || va + q.length as u128 > base + e.length as u128 {
                return FAIL;
            }
            if q.commit && (e.word0 & csr::TPT_ONE_SHOT != 0 || q.invalidate) {
                e.word0 &= !csr::TPT_VALID;
            }
            Lookup::Answer {
                ok: true,
                paddr: e.paddr.wrapping_add((q.vaddr - e.vaddr) as u32),
            }
        }
    }

    fn drive_csr(uut: &mut Tpt, op: Option<(u8, bool, u64)>) {
        uut.s_csr_valid.next = op.is_some();
        if let Some((r, write, wdata)) = op {
            uut.s_csr_reg.next = (r as u64).to_bits();
            uut.s_csr_write.next = write;
            uut.s_csr_wdata.next = wdata.to_bits();
        }
    }

    fn drive_req(uut: &mut Tpt, req: Option<&Request>) {
        uut.s_tpt_req_valid.next = req.is_some();
        if let Some(q) = req {
            uut.s_tpt_req_stag.next = (q.stag as u64).to_bits();
            uut.s_tpt_req_vaddr.next = q.vaddr.to_bits();
            uut.s_tpt_req_length.next = (q.length as u64).to_bits();
            uut.s_tpt_req_access.next = (q.access as u64).to_bits();
            uut.s_tpt_req_invalidate.next = q.invalidate;
            uut.s_tpt_req_qp.next = (q.qp as u64).to_bits();
            uut.s_tpt_req_commit.next = q.commit;
        }
    }

    /// A block held in reset, then stepped until the table has been cleared.
    fn fresh(entries: usize) -> Tpt {
        let mut uut = Tpt::new(entries);
        uut.connect_all();
        drive_csr(&mut uut, None);
        drive_req(&mut uut, None);
        uut.reset.next = true;
        tick(&mut uut);
        tick(&mut uut);
        uut.reset.next = false;
        settle(&mut uut);
        uut
    }

    /// Blocking driver for the directed tests: one operation at a time, with a cycle count.
    struct Bench {
        uut: Tpt,
        cycle: u64,
    }

    impl Bench {
        fn new(entries: usize) -> Self {
            let mut b = Bench {
                uut: fresh(entries),
                cycle: 0,
            };
            for _ in 0..entries.min(TPT_BANK_ENTRIES) + 1 {
                b.step();
            }
            assert_eq!(b.read(6) & 1, 0, "still busy clearing the table");
            b
        }

        /// One clock; returns the response seen during it.
        fn step(&mut self) -> Option<(bool, u32)> {
            settle(&mut self.uut);
            let resp = self.uut.m_tpt_resp_valid.val().then(|| {
                (
                    self.uut.m_tpt_resp_ok.val(),
                    self.uut.m_tpt_resp_paddr.val().to_u32(),
                )
            });
            tick(&mut self.uut);
            self.cycle += 1;
            resp
        }

        fn csr(&mut self, r: u8, write: bool, wdata: u64) -> Option<u64> {
            drive_csr(&mut self.uut, Some((r, write, wdata)));
            let mut waited = 0;
            loop {
                settle(&mut self.uut);
                if self.uut.s_csr_ready.val() {
                    break;
                }
                assert!(self.step().is_none(), "unexpected response");
                waited += 1;
                assert!(waited < 100, "CSR access to register {r} never accepted");
            }
            assert!(self.step().is_none(), "unexpected response");
            drive_csr(&mut self.uut, None);
            settle(&mut self.uut);
            if write {
                assert!(!self.uut.m_csr_rdata_valid.val());
                None
            } else {
                assert!(self.uut.m_csr_rdata_valid.val(), "read answers next clock");
                Some(self.uut.m_csr_rdata.val().to_u64())
            }
        }

        fn write(&mut self, r: u8, wdata: u64) {
            self.csr(r, true, wdata);
        }

        fn read(&mut self, r: u8) -> u64 {
            self.csr(r, false, 0).unwrap()
        }

        /// Answers the head as a driver does: reads `EXC_HEAD0`, echoes its tag.
        fn answer(&mut self, paddr: Option<u32>) {
            let head = self.read(reg(csr::EXC_HEAD0));
            assert_eq!(head & 1, 1, "no head to answer");
            self.write(reg(csr::EXC_ANSWER), csr::exc_answer(head, paddr));
        }

        fn write_entry(&mut self, index: u32, e: Entry) {
            self.write(reg(csr::TPT_INDEX), index as u64);
            self.write(reg(csr::TPT_WORD0), e.word0);
            self.write(reg(csr::TPT_VADDR), e.vaddr);
            self.write(reg(csr::TPT_LENGTH), e.length as u64);
            self.write(reg(csr::TPT_PADDR), e.paddr as u64);
            self.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_WRITE);
        }

        fn read_entry(&mut self, index: u32) -> Entry {
            self.write(reg(csr::TPT_INDEX), index as u64);
            self.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_READ);
            Entry {
                word0: self.read(reg(csr::TPT_WORD0)),
                vaddr: self.read(reg(csr::TPT_VADDR)),
                length: self.read(reg(csr::TPT_LENGTH)) as u32,
                paddr: self.read(reg(csr::TPT_PADDR)) as u32,
            }
        }

        /// Offer `q` until accepted; returns the cycle it was accepted in.
        fn offer(&mut self, q: &Request) -> u64 {
            drive_req(&mut self.uut, Some(q));
            for _ in 0..100 {
                settle(&mut self.uut);
                let accepted = self.uut.s_tpt_req_ready.val();
                let at = self.cycle;
                assert!(self.step().is_none(), "unexpected response");
                if accepted {
                    drive_req(&mut self.uut, None);
                    return at;
                }
            }
            panic!("lookup never accepted");
        }

        /// Clocks until the next response: (ok, paddr, cycle it was seen in).
        fn response(&mut self, limit: u64) -> (bool, u32, u64) {
            for _ in 0..limit {
                let at = self.cycle;
                if let Some((ok, paddr)) = self.step() {
                    return (ok, paddr, at);
                }
            }
            panic!("no response within {limit} clocks");
        }

        /// A lookup that hits the table: answered three clocks after acceptance.
        fn lookup(&mut self, q: &Request) -> Lookup {
            let at = self.offer(q);
            let (ok, paddr, seen) = self.response(10);
            assert_eq!(seen, at + 3, "lookup latency");
            Lookup::Answer { ok, paddr }
        }

        /// A lookup expected to miss: the head is shown three clocks after acceptance.
        fn lookup_miss(&mut self, q: &Request) -> u64 {
            let at = self.offer(q);
            while self.cycle < at + 3 {
                assert!(self.step().is_none());
            }
            let head = self.read(reg(csr::EXC_HEAD0));
            assert_eq!(head & !csr::EXC_TAG_MASK, q.head0(), "head for {q:?}");
            assert_eq!(self.read(reg(csr::EXC_HEAD1)), q.vaddr);
            assert_eq!(self.read(reg(csr::EXC_HEAD2)), q.length as u64);
            at
        }
    }

    const RW: u64 = csr::TPT_VALID | csr::TPT_REMOTE_READ | csr::TPT_REMOTE_WRITE;
    const READ: u8 = 1;
    const WRITE: u8 = 2;
    const ATOMIC: u8 = 4;

    fn entry(word0: u64, key: u8, vaddr: u64, length: u32, paddr: u32) -> Entry {
        Entry {
            word0: word0 | (key as u64) << csr::TPT_KEY_SHIFT,
            vaddr,
            length,
            paddr,
        }
    }

    fn req(index: u32, key: u8, vaddr: u64, length: u32, access: u8) -> Request {
        Request {
            stag: index << 8 | key as u32,
            vaddr,
            length,
            access,
            invalidate: false,
            qp: 5,
            commit: true,
        }
    }

    fn ok(paddr: u32) -> Lookup {
        Lookup::Answer { ok: true, paddr }
    }

    #[test]
    fn synthesises() {
        let mut uut = Tpt::new(256);
        uut.connect_all();
        yosys_validate("nic_rtl_tpt", &generate_verilog(&uut)).expect("yosys accepts Tpt");
    }

    /// Writes the Verilog for the lint and synthesis runs by hand
    /// (`cargo test --release -p nic-rtl tpt::tests::write_verilog -- --ignored`).
    #[test]
    #[ignore]
    fn write_verilog() {
        for entries in [256, 1024] {
            let mut uut = Tpt::new(entries);
            uut.connect_all();
            std::fs::write(format!("/tmp/nic_tpt_{entries}.v"), generate_verilog(&uut)).unwrap();
        }
    }

    #[test]
    fn hit_translates_with_three_clock_latency() {
        let mut b = Bench::new(16);
        b.write_entry(3, entry(RW, 0x5A, 0x7000_0000_1000, 0x2000, 0x8000_0000));
        assert_eq!(
            b.lookup(&req(3, 0x5A, 0x7000_0000_1010, 0x100, READ | WRITE)),
            ok(0x8000_0010)
        );
        // Back to back: the next lookup is accepted in the clock its predecessor answers.
        let q = req(3, 0x5A, 0x7000_0000_1000, 0x2000, WRITE);
        drive_req(&mut b.uut, Some(&q));
        let (mut accepted, mut answered) = (vec![], vec![]);
        for _ in 0..30 {
            settle(&mut b.uut);
            if b.uut.s_tpt_req_ready.val() {
                accepted.push(b.cycle);
            }
            let at = b.cycle;
            if let Some(r) = b.step() {
                assert_eq!(r, (true, 0x8000_0000));
                answered.push(at);
            }
        }
        drive_req(&mut b.uut, None);
        assert_eq!(
            accepted.len(),
            10,
            "one lookup every three clocks: {accepted:?}"
        );
        for (i, at) in accepted.iter().enumerate() {
            assert_eq!(*at, accepted[0] + 3 * i as u64);
        }
        assert_eq!(answered[..], accepted[1..10]);
    }

    /// valid comes first: an invalid entry goes to the exception queue even with a wrong
    /// key, rights and bounds; a valid one with a wrong key fails even with good bounds, ...
    #[test]
    fn checks_in_order_valid_key_rights_bounds() {
        let mut b = Bench::new(16);
        let e = entry(csr::TPT_REMOTE_READ, 7, 0x1000, 0x1000, 0x40_0000);
        b.write_entry(2, e);
        b.lookup_miss(&req(2, 7, 0x1000, 8, READ));
        b.answer(None);
        assert!(!b.response(5).0);
        b.lookup_miss(&req(2, 9, 0, 0xFFFF, ATOMIC));
        b.answer(None);
        assert!(!b.response(5).0);

        let e = Entry {
            word0: e.word0 | csr::TPT_VALID,
            ..e
        };
        b.write_entry(2, e);
        assert_eq!(b.lookup(&req(2, 7, 0x1000, 8, READ)), ok(0x40_0000));
        // key
        assert_eq!(b.lookup(&req(2, 8, 0x1000, 8, READ)), FAIL);
        assert_eq!(b.lookup(&req(2, 0x87, 0x1000, 8, READ)), FAIL);
        // rights: each right alone
        assert_eq!(b.lookup(&req(2, 7, 0x1000, 8, WRITE)), FAIL);
        assert_eq!(b.lookup(&req(2, 7, 0x1000, 8, ATOMIC)), FAIL);
        assert_eq!(b.lookup(&req(2, 7, 0x1000, 8, READ | WRITE)), FAIL);
        for (word0, access) in [
            (csr::TPT_REMOTE_WRITE, WRITE),
            (csr::TPT_ATOMIC, ATOMIC),
            (csr::TPT_REMOTE_READ | csr::TPT_ATOMIC, READ | ATOMIC),
        ] {
            b.write(reg(csr::TPT_WORD0), csr::TPT_VALID | word0 | 7 << 8);
            b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_WRITE);
            assert_eq!(b.lookup(&req(2, 7, 0x1008, 8, access)), ok(0x40_0008));
            assert_eq!(b.lookup(&req(2, 7, 0x1008, 8, access ^ 7)), FAIL);
        }
        b.write_entry(2, e);
        // bounds
        assert_eq!(b.lookup(&req(2, 7, 0xFF8, 8, READ)), FAIL, "below the base");
        assert_eq!(b.lookup(&req(2, 7, 0x1FF8, 9, READ)), FAIL, "past the end");
        assert_eq!(b.lookup(&req(2, 7, 0x2000, 1, READ)), FAIL, "at the end");
        assert_eq!(b.lookup(&req(2, 7, 0x1000, 0x1001, READ)), FAIL, "too long");
        assert_eq!(
            b.lookup(&req(2, 7, 0x1000, 0x1000, READ)),
            ok(0x40_0000),
            "all"
        );
        assert_eq!(b.lookup(&req(2, 7, 0x1FF8, 8, READ)), ok(0x40_0FF8), "last");
        assert_eq!(
            b.lookup(&req(2, 7, 0x2000, 0, READ)),
            ok(0x40_1000),
            "empty"
        );
        assert_eq!(
            b.lookup(&req(2, 7, 0x1800, 0, 0)),
            ok(0x40_0800),
            "no access"
        );
    }

    /// Sums that wrap in 64 or 32 bits must not let a request pass.
    #[test]
    fn bounds_do_not_overflow() {
        let mut b = Bench::new(16);
        b.write_entry(1, entry(RW, 1, 0x1000, 0x1000, 0x10_0000));
        // vaddr + length wraps 2^64 to 8: inside [base, base + length) if computed in u64.
        assert_eq!(b.lookup(&req(1, 1, u64::MAX - 7, 16, READ)), FAIL);
        // (vaddr - base) + length wraps 2^32.
        assert_eq!(b.lookup(&req(1, 1, 0x1800, u32::MAX, READ)), FAIL);
        // vaddr - base = 2^32 + 0x800: the low 32 bits alone would pass.
        assert_eq!(b.lookup(&req(1, 1, 0x1_0000_1800, 8, READ)), FAIL);
        // vaddr below the base by exactly 2^32 in the high word (borrow cases).
        b.write_entry(1, entry(RW, 1, 0x5_FFFF_F000, 0x2000, 0x10_0000));
        assert_eq!(
            b.lookup(&req(1, 1, 0x6_0000_0800, 0x800, READ)),
            ok(0x10_1800)
        );
        assert_eq!(b.lookup(&req(1, 1, 0x5_0000_0800, 8, READ)), FAIL);
        assert_eq!(b.lookup(&req(1, 1, 0x4_FFFF_F800, 8, READ)), FAIL);
        assert_eq!(b.lookup(&req(1, 1, 0x7_0000_0800, 8, READ)), FAIL);
        // high word 0 against a base with high word 0xFFFF_FFFF (33-bit difference).
        b.write_entry(1, entry(RW, 1, 0xFFFF_FFFF_FFFF_F000, 0x2000, 0x10_0000));
        assert_eq!(b.lookup(&req(1, 1, 0x800, 8, READ)), FAIL);
        // An entry whose range crosses 2^64 is taken at its word (exact arithmetic).
        assert_eq!(
            b.lookup(&req(1, 1, 0xFFFF_FFFF_FFFF_FFF8, 0x10, READ)),
            ok(0x10_0FF8)
        );
        // A maximal entry.
        b.write_entry(1, entry(RW, 1, 0, u32::MAX, 0));
        assert_eq!(b.lookup(&req(1, 1, 1, u32::MAX - 1, WRITE)), ok(1));
        assert_eq!(b.lookup(&req(1, 1, 1, u32::MAX, WRITE)), FAIL);
        assert_eq!(b.lookup(&req(1, 1, 0xFFFF_FFFF, 0, WRITE)), ok(0xFFFF_FFFF));
    }

    #[test]
    fn one_shot_and_invalidate_clear_the_entry_after_use() {
        let mut b = Bench::new(16);
        let e = entry(RW | csr::TPT_ONE_SHOT, 3, 0x2000, 0x100, 0x9000);
        b.write_entry(4, e);
        // A failed use (rights, key, bounds) leaves it valid.
        assert_eq!(b.lookup(&req(4, 3, 0x2000, 8, ATOMIC)), FAIL);
        assert_eq!(b.lookup(&req(4, 2, 0x2000, 8, READ)), FAIL);
        assert_eq!(b.lookup(&req(4, 3, 0x2100, 8, READ)), FAIL);
        // A check-only lookup (the responder refuses the request after the TPT check,
        // RECEIVER_NOT_READY) passes and leaves it valid, however often.
        let check_only = Request {
            commit: false,
            invalidate: true,
            ..req(4, 3, 0x2010, 8, READ)
        };
        for _ in 0..2 {
            assert_eq!(b.lookup(&check_only), ok(0x9010));
            assert_eq!(b.read_entry(4), e, "a check-only lookup used up the entry");
        }
        assert_eq!(b.lookup(&req(4, 3, 0x2010, 8, READ)), ok(0x9010));
        let mut cleared = e;
        cleared.word0 &= !csr::TPT_VALID;
        assert_eq!(b.read_entry(4), cleared, "only the valid bit is cleared");
        b.lookup_miss(&req(4, 3, 0x2010, 8, READ));
        b.answer(None);
        assert!(!b.response(5).0);

        // The request's invalidate flag on a reusable entry; a failed check with the flag
        // does not invalidate.
        let e = entry(RW, 3, 0x2000, 0x100, 0x9000);
        b.write_entry(5, e);
        let mut q = req(5, 3, 0x2000, 8, WRITE);
        assert_eq!(b.lookup(&q), ok(0x9000));
        assert_eq!(b.lookup(&q), ok(0x9000));
        q.invalidate = true;
        q.stag ^= 1;
        assert_eq!(b.lookup(&q), FAIL);
        q.stag ^= 1;
        assert_eq!(b.lookup(&q), ok(0x9000));
        let mut cleared = e;
        cleared.word0 &= !csr::TPT_VALID;
        assert_eq!(b.read_entry(5), cleared);
        q.invalidate = false;
        b.lookup_miss(&q);
    }

    #[test]
    fn commands_write_read_back_and_invalidate() {
        let mut b = Bench::new(32);
        assert_eq!(b.read_entry(31), Entry::default(), "cleared by reset");
        let e = entry(
            csr::TPT_VALID | csr::TPT_ATOMIC | csr::TPT_ONE_SHOT,
            0xC3,
            0xDEAD_BEEF_0000_0008,
            0x1234_5678,
            0x8765_4320,
        );
        b.write_entry(31, e);
        // The staging registers keep only their fields.
        b.write(reg(csr::TPT_INDEX), 0xABCD_EF12_3400_0000 | 7);
        assert_eq!(b.read(reg(csr::TPT_INDEX)), 7);
        b.write(reg(csr::TPT_WORD0), u64::MAX);
        assert_eq!(b.read(reg(csr::TPT_WORD0)), WORD0_FIELDS);
        b.write(reg(csr::TPT_LENGTH), u64::MAX);
        assert_eq!(b.read(reg(csr::TPT_LENGTH)), 0xFFFF_FFFF);
        b.write(reg(csr::TPT_PADDR), 0x1_2345_6789);
        assert_eq!(b.read(reg(csr::TPT_PADDR)), 0x2345_6789);
        b.write(reg(csr::TPT_VADDR), u64::MAX - 1);
        assert_eq!(b.read(reg(csr::TPT_VADDR)), u64::MAX - 1);
        assert_eq!(b.read_entry(31), e);
        assert_eq!(b.read_entry(7), Entry::default());
        // Invalidate clears the valid bit only; the other entries stay.
        b.write_entry(30, entry(RW, 1, 2, 3, 4));
        b.write(reg(csr::TPT_INDEX), 31);
        b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_INVALIDATE);
        let mut cleared = e;
        cleared.word0 &= !csr::TPT_VALID;
        assert_eq!(b.read_entry(31), cleared);
        assert_eq!(b.read_entry(30), entry(RW, 1, 2, 3, 4));
        // Unknown command values do nothing and are not counted.
        b.write(reg(csr::TPT_INDEX), 30);
        for bad in [0, 5, 7, 0x101, 1 << 40] {
            b.write(reg(csr::TPT_COMMAND), bad);
        }
        assert_eq!(b.read(reg(csr::TPT_STATUS)), 0);
        assert_eq!(b.read_entry(30), entry(RW, 1, 2, 3, 4));
        // Read-only and unmapped registers.
        for r in [5, 7, 31, 35, 37, 63] {
            assert_eq!(b.read(r), 0, "register {r}");
        }
        for r in [6, 32, 33, 34, 7, 63] {
            b.write(r, u64::MAX);
        }
        assert_eq!(b.read(reg(csr::TPT_STATUS)), 0);
        assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
        assert_eq!(b.read_entry(30), entry(RW, 1, 2, 3, 4));
    }

    #[test]
    fn commands_beyond_the_table_are_refused_and_counted() {
        let mut b = Bench::new(16);
        b.write_entry(15, entry(RW, 1, 0x100, 0x100, 0x100));
        b.write(reg(csr::TPT_INDEX), 15);
        b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_READ);
        let staged = b.read(reg(csr::TPT_WORD0));
        for (i, index) in [16u64, 0xFF_FFFF, 4096, 0x10F].into_iter().enumerate() {
            b.write(reg(csr::TPT_INDEX), index);
            for command in 1..=4 {
                b.write(reg(csr::TPT_COMMAND), command);
            }
            assert_eq!(b.read(reg(csr::TPT_STATUS)), (4 * (i as u64 + 1)) << 8);
        }
        assert_eq!(
            b.read(reg(csr::TPT_WORD0)),
            staged,
            "a refused read loads nothing"
        );
        for _ in 0..250 {
            b.write(reg(csr::TPT_COMMAND), 1);
        }
        assert_eq!(b.read(reg(csr::TPT_STATUS)), (16 + 250 - 256) << 8, "wraps");
        assert_eq!(b.read_entry(15), entry(RW, 1, 0x100, 0x100, 0x100));
        // Lookups beyond the table go to the exception queue.
        b.lookup_miss(&req(16, 1, 0x100, 8, READ));
        b.answer(None);
        assert!(!b.response(5).0);
        b.lookup_miss(&req(0xFF_FFFF, 0xFF, 0x100, 8, READ));
        b.answer(None);
        assert!(!b.response(5).0);
    }

    #[test]
    fn busy_while_a_command_runs_and_staging_waits() {
        let mut b = Bench::new(16);
        b.write_entry(9, entry(RW, 9, 0x900, 0x90, 0x9000));
        b.write(reg(csr::TPT_INDEX), 9);
        b.write(reg(csr::TPT_WORD0), 0);
        b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_READ);
        assert_eq!(b.read(reg(csr::TPT_STATUS)) & 1, 1, "busy the clock after");
        assert_eq!(
            b.read(reg(csr::TPT_WORD0)),
            RW | 9 << 8,
            "waits, then sees the entry"
        );
        // A command behind a lookup in flight waits for it.
        let q = req(9, 9, 0x900, 8, READ);
        let at = b.offer(&q);
        b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_INVALIDATE);
        let mut seen = None;
        for _ in 0..4 {
            let cycle = b.cycle;
            if let Some(r) = b.step() {
                seen = Some((r, cycle));
            }
        }
        assert_eq!(seen, Some(((true, 0x9000), at + 3)));
        b.lookup_miss(&q);
    }

    /// Take (read and invalidate in one command, for a migration to another NIC): the
    /// staging registers show the entry as it was, and no lookup comes between the read
    /// and the invalidation: a lookup after it misses, and a one-shot lookup accepted in
    /// the same clock goes first and uses the entry up, so the take reads it invalid.
    #[test]
    fn take_reads_and_invalidates_in_one_command() {
        let one_shot = RW | csr::TPT_ONE_SHOT;
        let mut b = Bench::new(16);
        b.write_entry(4, entry(one_shot, 4, 0x400, 0x40, 0x4000));
        b.write(reg(csr::TPT_INDEX), 4);
        b.write(reg(csr::TPT_WORD0), 0);
        b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_TAKE);
        assert_eq!(b.read(reg(csr::TPT_WORD0)), one_shot | 4 << 8, "as it was");
        assert_eq!(b.read(reg(csr::TPT_PADDR)), 0x4000);
        assert_eq!(b.read_entry(4).word0 & csr::TPT_VALID, 0, "invalidated");
        b.lookup_miss(&req(4, 4, 0x400, 8, READ));
        b.answer(None);
        assert!(!b.response(5).0);
        // A one-shot lookup in the same clock as the take: the lookup uses it up first.
        b.write_entry(5, entry(one_shot, 5, 0x500, 0x50, 0x5000));
        b.write(reg(csr::TPT_INDEX), 5);
        let q = req(5, 5, 0x500, 8, READ);
        drive_req(&mut b.uut, Some(&q));
        drive_csr(
            &mut b.uut,
            Some((reg(csr::TPT_COMMAND), true, csr::TPT_COMMAND_TAKE)),
        );
        settle(&mut b.uut);
        assert!(b.uut.s_tpt_req_ready.val() && b.uut.s_csr_ready.val());
        b.step();
        drive_req(&mut b.uut, None);
        drive_csr(&mut b.uut, None);
        let (ok, paddr, _) = b.response(6);
        assert_eq!((ok, paddr), (true, 0x5000), "the lookup went first");
        assert_eq!(
            b.read(reg(csr::TPT_WORD0)) & csr::TPT_VALID,
            0,
            "the take saw the entry used up"
        );
        assert_eq!(b.read_entry(5).word0 & csr::TPT_VALID, 0);
    }

    /// A command and a lookup of the same entry in the same clock: the lookup goes first and
    /// sees the old entry; a command a clock earlier is seen by the lookup.
    #[test]
    fn command_racing_a_lookup_gives_old_or_new_entry() {
        for lookup_first in [true, false] {
            let mut b = Bench::new(16);
            b.write_entry(6, entry(RW, 6, 0x600, 0x60, 0x6000));
            b.write(reg(csr::TPT_VADDR), 0x1600);
            b.write(reg(csr::TPT_PADDR), 0x16000);
            let q = req(6, 6, 0x1610, 8, READ);
            let old = FAIL;
            let new = ok(0x16010);
            if lookup_first {
                drive_req(&mut b.uut, Some(&q));
                drive_csr(
                    &mut b.uut,
                    Some((reg(csr::TPT_COMMAND), true, csr::TPT_COMMAND_WRITE)),
                );
                settle(&mut b.uut);
                assert!(b.uut.s_tpt_req_ready.val() && b.uut.s_csr_ready.val());
                let at = b.cycle;
                b.step();
                drive_req(&mut b.uut, None);
                drive_csr(&mut b.uut, None);
                let (ok, paddr, seen) = b.response(6);
                assert_eq!((Lookup::Answer { ok, paddr }, seen), (old, at + 3));
            } else {
                b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_WRITE);
                assert_eq!(b.lookup(&q), new);
            }
            // One-shot write-back racing a write command: the command lands after it.
            b.write(reg(csr::TPT_WORD0), RW | csr::TPT_ONE_SHOT | 6 << 8);
            b.write(reg(csr::TPT_COMMAND), csr::TPT_COMMAND_WRITE);
            b.write(reg(csr::TPT_PADDR), 0x26000);
            drive_req(&mut b.uut, Some(&q));
            settle(&mut b.uut);
            assert!(b.uut.s_tpt_req_ready.val());
            b.step();
            drive_req(&mut b.uut, None);
            drive_csr(
                &mut b.uut,
                Some((reg(csr::TPT_COMMAND), true, csr::TPT_COMMAND_WRITE)),
            );
            b.step();
            drive_csr(&mut b.uut, None);
            assert!(b.response(6).0);
            let e = b.read_entry(6);
            assert_eq!(
                (e.word0 & 1, e.paddr),
                (1, 0x26000),
                "the newer entry survives"
            );
        }
    }

    #[test]
    fn exception_translate_reject_and_timeout() {
        let mut b = Bench::new(64);
        assert_eq!(b.read(reg(csr::EXC_TIMEOUT)), 65536);
        assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
        // Translate.
        let q = Request {
            stag: 0x0000_2A11,
            vaddr: 0x1234_5678_9ABC_DEF0,
            length: 0x4321,
            access: WRITE | ATOMIC,
            invalidate: true,
            qp: 63,
            commit: true,
        };
        b.lookup_miss(&q);
        // Lookups wait while the head is pending; CSR commands do not.
        drive_req(&mut b.uut, Some(&req(1, 1, 0, 0, 0)));
        for _ in 0..20 {
            settle(&mut b.uut);
            assert!(!b.uut.s_tpt_req_ready.val());
            assert!(b.step().is_none());
        }
        drive_req(&mut b.uut, None);
        b.write_entry(1, entry(RW, 1, 0, 0x10, 0x500));
        assert_eq!(b.read_entry(1), entry(RW, 1, 0, 0x10, 0x500));
        let head = b.read(reg(csr::EXC_HEAD0));
        let answer_at = b.cycle;
        b.write(
            reg(csr::EXC_ANSWER),
            csr::exc_answer(head, Some(0xCAFE_F00D)),
        );
        assert_eq!(b.response(3), (true, 0xCAFE_F00D, answer_at + 1));
        assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
        assert_eq!(b.read(reg(csr::EXC_HEAD1)), 0);
        assert_eq!(b.read(reg(csr::EXC_HEAD2)), 0);
        // The entry written meanwhile now translates; answers without a head do nothing.
        b.write(reg(csr::EXC_ANSWER), 1);
        assert_eq!(b.lookup(&req(1, 1, 8, 8, READ)), ok(0x508));
        // Reject (paddr bits ignored).
        b.lookup_miss(&q);
        let head = b.read(reg(csr::EXC_HEAD0));
        b.write(
            reg(csr::EXC_ANSWER),
            csr::exc_answer(head, None) | 0xFFFF_FFFF_0000_0000,
        );
        let (ok, paddr, _) = b.response(3);
        assert_eq!((ok, paddr), (false, 0));
        // Timeout: refused EXC_TIMEOUT clocks after the head became visible.
        for timeout in [0u64, 1, 10, 300] {
            b.write(reg(csr::EXC_TIMEOUT), timeout | 0xFFFF_FFFF << 32);
            assert_eq!(b.read(reg(csr::EXC_TIMEOUT)), timeout);
            let at = b.offer(&q);
            let (ok, paddr, seen) = b.response(1000);
            assert_eq!((ok, paddr), (false, 0));
            assert_eq!(seen, at + 4 + timeout, "timeout {timeout}");
            assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
        }
        // An answer in the last clock before the timeout still wins.
        b.write(reg(csr::EXC_TIMEOUT), 20);
        let at = b.offer(&q);
        while b.cycle < at + 3 {
            assert!(b.step().is_none());
        }
        let head = b.read(reg(csr::EXC_HEAD0));
        while b.cycle < at + 3 + 20 {
            assert!(b.step().is_none());
        }
        b.write(reg(csr::EXC_ANSWER), csr::exc_answer(head, Some(0x77)));
        assert_eq!(b.response(3), (true, 0x77, at + 24));
    }

    /// An answer carries the tag of the head it answers: a driver's answer written after
    /// its head timed out does not apply to the next head (or to none); it is counted.
    #[test]
    fn a_late_answer_with_an_old_tag_is_ignored() {
        let mut b = Bench::new(16);
        b.write(reg(csr::EXC_TIMEOUT), 10);
        let q = req(5, 1, 0x100, 8, WRITE);
        b.lookup_miss(&q);
        let first = b.read(reg(csr::EXC_HEAD0));
        assert_eq!(b.response(100).0, false, "timed out");
        b.write(reg(csr::EXC_TIMEOUT), 1000);
        b.lookup_miss(&q);
        let second = b.read(reg(csr::EXC_HEAD0));
        assert_eq!(
            second & csr::EXC_TAG_MASK,
            (first & csr::EXC_TAG_MASK) + (1 << csr::EXC_TAG_SHIFT)
        );
        // The late answer to the first head: ignored, counted; the second head waits.
        b.write(reg(csr::EXC_ANSWER), csr::exc_answer(first, Some(0x4000)));
        for _ in 0..20 {
            assert!(b.step().is_none(), "the late answer answered the next head");
        }
        assert_eq!(b.read(reg(csr::EXC_HEAD0)), second);
        let stale =
            |b: &mut Bench| b.read(reg(csr::TPT_STATUS)) >> csr::TPT_STATUS_STALE_ANSWERS_SHIFT;
        assert_eq!(stale(&mut b), 1);
        // Its own answer applies.
        b.write(reg(csr::EXC_ANSWER), csr::exc_answer(second, Some(0x5000)));
        let (ok, paddr, _) = b.response(3);
        assert_eq!((ok, paddr), (true, 0x5000));
        // An answer with no head: ignored and counted.
        b.write(reg(csr::EXC_ANSWER), csr::exc_answer(second, Some(0x5000)));
        assert_eq!(stale(&mut b), 2);
        assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
    }

    #[test]
    fn reset_clears_the_table_and_the_exception_head() {
        let mut b = Bench::new(512);
        b.write_entry(300, entry(RW, 1, 0, 0x100, 0x100));
        b.write_entry(44, entry(RW, 1, 0, 0x100, 0x100));
        b.write(reg(csr::EXC_TIMEOUT), 1000);
        assert_eq!(b.lookup(&req(300, 1, 0, 8, READ)), ok(0x100));
        b.lookup_miss(&req(301, 1, 0, 8, READ));
        b.uut.reset.next = true;
        b.step();
        b.uut.reset.next = false;
        assert_eq!(b.read(reg(csr::TPT_STATUS)), 1, "busy clearing");
        assert_eq!(b.read(reg(csr::EXC_HEAD0)), 0);
        assert_eq!(b.read(reg(csr::EXC_TIMEOUT)), 65536);
        let mut waited = 0;
        while b.read(reg(csr::TPT_STATUS)) & 1 == 1 {
            waited += 1;
        }
        assert!(
            (120..=256).contains(&waited),
            "{waited} reads while clearing"
        );
        assert_eq!(b.read_entry(300), Entry::default());
        assert_eq!(b.read_entry(44), Entry::default());
        b.lookup_miss(&req(300, 1, 0, 8, READ));
    }

    /// A lookup accepted and not yet answered.
    struct Pending {
        req: Request,
        accepted: u64,
        /// `Miss` until the exception is resolved.
        outcome: Lookup,
        due: Option<u64>,
    }

    /// The exception head as the block shows it.
    struct Head {
        visible_from: u64,
        countdown: u32,
    }

    #[derive(Default, Debug)]
    struct Coverage {
        hits: u32,
        failures: u32,
        answered: u32,
        timed_out: u32,
        stale: u32,
        commands: u32,
        refused: u32,
        csr_stalls: u32,
        reads: u32,
    }

    fn pick<T: Copy>(rng: &mut ChaCha8Rng, pool: &[T]) -> T {
        pool[rng.gen_range(0..pool.len())]
    }

    fn random_vaddr(rng: &mut ChaCha8Rng) -> u64 {
        match rng.gen_range(0..6) {
            0 => rng.gen(),
            1 => 0xFFFF_FFFF_FFFF_F000,
            2 => 0xFFFF_FFFF_F800,
            3 => 0x1_0000_0000 - 0x800,
            _ => rng.gen_range(0..4u64) << 12,
        }
    }

    fn random_length(rng: &mut ChaCha8Rng) -> u32 {
        match rng.gen_range(0..6) {
            0 => u32::MAX,
            1 => rng.gen(),
            _ => rng.gen_range(0..0x3000),
        }
    }

    fn random_csr(rng: &mut ChaCha8Rng, indices: &[u32]) -> (u8, bool, u64) {
        let junk = |rng: &mut ChaCha8Rng, bits: u32| {
            if rng.gen_bool(0.15) {
                rng.gen::<u64>() << bits
            } else {
                0
            }
        };
        match rng.gen_range(0..100) {
            0..=14 => (0, true, pick(rng, indices) as u64 | junk(rng, 24)),
            15..=24 => {
                let mut w = rng.gen_range(0..8u64) << 1 | (rng.gen_range(0..4u64) << 8);
                if rng.gen_bool(0.9) {
                    w |= csr::TPT_VALID;
                }
                if rng.gen_bool(0.1) {
                    w |= csr::TPT_ONE_SHOT;
                }
                (1, true, w | junk(rng, 16) | junk(rng, 5) & 0xE0)
            }
            25..=32 => (2, true, random_vaddr(rng)),
            33..=40 => (3, true, random_length(rng) as u64 | junk(rng, 32)),
            41..=46 => (4, true, rng.gen()),
            47..=61 => {
                let command = match rng.gen_range(0..20) {
                    0..=9 => csr::TPT_COMMAND_WRITE,
                    10..=11 => csr::TPT_COMMAND_INVALIDATE,
                    12..=16 => csr::TPT_COMMAND_READ,
                    17..=18 => csr::TPT_COMMAND_TAKE,
                    _ => pick(rng, &[0, 5, 7, 0x104]),
                };
                (5, true, command)
            }
            62..=76 => (rng.gen_range(0..=6), false, 0),
            77..=86 => (pick(rng, &[32, 32, 32, 33, 34, 36]), false, 0),
            87..=88 => (36, true, rng.gen_range(0..40) | junk(rng, 32)),
            89 => (35, true, rng.gen()),
            90..=94 => (rng.gen_range(0..64), false, 0),
            _ => (pick(rng, &[6, 32, 33, 34, 7, 40, 63]), true, rng.gen()),
        }
    }

    fn random_request(rng: &mut ChaCha8Rng, model: &TptModel, indices: &[u32]) -> Request {
        // Mostly the entries the CSR side writes; sometimes beyond the table.
        let index = if rng.gen_bool(0.9) {
            pick(rng, &indices[..indices.len() - 2])
        } else {
            pick(rng, indices)
        };
        let e = model.table.get(index as usize).copied().unwrap_or_default();
        let key = if rng.gen_bool(0.7) {
            (e.word0 >> 8) as u8
        } else {
            rng.gen_range(0..4)
        };
        let (vaddr, length) = if rng.gen_bool(0.6) {
            let offset = rng.gen_range(0..=e.length as u64);
            let length = rng.gen_range(0..=e.length as u64 - offset) as u32;
            (e.vaddr.wrapping_add(offset), length)
        } else {
            (
                e.vaddr
                    .wrapping_add(rng.gen_range(0..0x4000u64))
                    .wrapping_sub(0x800),
                random_length(rng),
            )
        };
        let access = if rng.gen_bool(0.7) {
            (e.word0 >> 1) as u8 & rng.gen_range(0..8)
        } else {
            rng.gen_range(0..8)
        };
        Request {
            stag: index << 8 | key as u32,
            vaddr,
            length,
            access,
            invalidate: rng.gen_bool(0.08),
            qp: rng.gen_range(0..64),
            commit: rng.gen_bool(0.85),
        }
    }

    /// Random CSR traffic (staging writes, commands, reads, exception answers, timeout
    /// changes) and random lookups, each offered with idle gaps (`csr_rate`, `req_rate`:
    /// chance per clock of a new operation) against the block's own back-pressure, checked
    /// against [`TptModel`] clock by clock: every CSR read value, every response's value
    /// and clock (three clocks after a hit; the clock after the answer or the timeout of a
    /// miss), the exception head, and at the end every entry read back.
    fn random_run(
        entries: usize,
        indices: &[u32],
        seed: u64,
        cycles: u64,
        csr_rate: f64,
        req_rate: f64,
    ) -> Coverage {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut b = Bench::new(entries);
        let mut model = TptModel::new(entries);
        let timeout = rng.gen_range(5..40);
        b.write(reg(csr::EXC_TIMEOUT), timeout);
        model.write(reg(csr::EXC_TIMEOUT), timeout);
        let mut cov = Coverage::default();
        let mut csr_op: Option<(u8, bool, u64)> = None;
        let mut answers: VecDeque<(u8, bool, u64)> = VecDeque::new();
        let mut answer_planned = false;
        let mut request: Option<Request> = None;
        let mut pending: VecDeque<Pending> = VecDeque::new();
        let mut head: Option<Head> = None;
        let mut reads: VecDeque<(u64, u64, u64, u8)> = VecDeque::new();
        let end = b.cycle + cycles;
        let mut idle_since = b.cycle;
        loop {
            let c = b.cycle;
            let generating = c < end;
            if !generating
                && csr_op.is_none()
                && answers.is_empty()
                && request.is_none()
                && pending.is_empty()
                && reads.is_empty()
            {
                break;
            }
            assert!(c < end + 10_000, "seed {seed}: no drain");
            if csr_op.is_none() && rng.gen_bool(csr_rate) {
                csr_op = answers.pop_front();
                if csr_op.is_none() && generating {
                    csr_op = Some(random_csr(&mut rng, indices));
                }
            }
            if request.is_none() && generating && rng.gen_bool(req_rate) {
                request = Some(random_request(&mut rng, &model, indices));
            }
            drive_csr(&mut b.uut, csr_op);
            drive_req(&mut b.uut, request.as_ref());
            settle(&mut b.uut);
            // Outputs: registered, from earlier clocks.
            if let Some(&(due, want, mask, r)) = reads.front() {
                assert_eq!(
                    b.uut.m_csr_rdata_valid.val(),
                    due == c,
                    "seed {seed} clock {c}"
                );
                if due == c {
                    reads.pop_front();
                    let got = b.uut.m_csr_rdata.val().to_u64();
                    assert_eq!(
                        got & mask,
                        want & mask,
                        "seed {seed} clock {c}: read of register {r}"
                    );
                    if r == 32 && got & 1 == 1 && !answer_planned && rng.gen_bool(0.75) {
                        // The driver answers the head it has seen, sometimes too late.
                        answer_planned = true;
                        let paddr = rng.gen_bool(0.7).then(|| rng.gen::<u32>());
                        let mut answer = csr::exc_answer(got, paddr);
                        if rng.gen_bool(0.1) {
                            // A wrong tag: ignored like a late answer.
                            answer ^= 1 << (16 + rng.gen_range(0..8));
                        }
                        answers.push_back((35, true, answer | rng.gen::<u64>() & 0xFF00_FFFE));
                    }
                }
            } else {
                assert!(!b.uut.m_csr_rdata_valid.val(), "seed {seed} clock {c}");
            }
            let due_now = pending.front().is_some_and(|p| p.due == Some(c));
            assert_eq!(
                b.uut.m_tpt_resp_valid.val(),
                due_now,
                "seed {seed} clock {c}"
            );
            if due_now {
                let p = pending.pop_front().unwrap();
                let got = Lookup::Answer {
                    ok: b.uut.m_tpt_resp_ok.val(),
                    paddr: b.uut.m_tpt_resp_paddr.val().to_u32(),
                };
                assert_eq!(
                    got, p.outcome,
                    "seed {seed} clock {c}: response to {:?} accepted at {}",
                    p.req, p.accepted
                );
            }
            let csr_ready = b.uut.s_csr_ready.val();
            let req_ready = b.uut.s_tpt_req_ready.val();
            if let Some((r, _, _)) = csr_op {
                assert!(csr_ready || r < 6, "seed {seed}: register {r} stalled");
                if !csr_ready {
                    cov.csr_stalls += 1;
                }
            }
            if !pending.is_empty() {
                assert!(
                    !req_ready,
                    "seed {seed} clock {c}: lookup ready while one is open"
                );
            }
            if pending.is_empty() && csr_op.is_none() && request.is_none() {
                if c - idle_since > 300 {
                    assert!(req_ready, "seed {seed} clock {c}: lookup port stuck");
                }
            } else {
                idle_since = c;
            }
            let csr_accept = csr_op.filter(|_| csr_ready);
            let req_accept = request.filter(|_| req_ready);
            // The model, in the block's order: CSR reads see the registers before this
            // edge; the exception head moves; a lookup goes before a command.
            if let Some((r, false, _)) = csr_accept {
                cov.reads += 1;
                let visible = head.as_ref().is_some_and(|h| c >= h.visible_from);
                let front = pending.front().map(|p| p.req).unwrap_or_default();
                let want = match r {
                    32 if visible => front.head0() | (model.exc_tag as u64) << 16,
                    33 if visible => front.vaddr,
                    34 if visible => front.length as u64,
                    _ => model.read(r),
                };
                let mask = if r == 6 { !1 } else { !0 };
                reads.push_back((c + 1, want, mask, r));
            }
            let mut took_answer = false;
            if let Some(p) = pending.front_mut() {
                if p.outcome == Lookup::Miss && p.accepted + 2 == c {
                    head = Some(Head {
                        visible_from: c + 1,
                        countdown: model.exc_timeout,
                    });
                }
                if let Some(h) = head.as_mut().filter(|h| c >= h.visible_from) {
                    let tag = model.exc_tag;
                    let resolved = match csr_accept {
                        Some((35, true, wdata)) if (wdata >> 16) as u8 == tag => {
                            cov.answered += 1;
                            took_answer = true;
                            Some(Lookup::Answer {
                                ok: wdata & 1 == 1,
                                paddr: if wdata & 1 == 1 {
                                    (wdata >> 32) as u32
                                } else {
                                    0
                                },
                            })
                        }
                        _ if h.countdown == 0 => {
                            cov.timed_out += 1;
                            Some(FAIL)
                        }
                        _ => {
                            h.countdown -= 1;
                            None
                        }
                    };
                    if let Some(outcome) = resolved {
                        p.outcome = outcome;
                        p.due = Some(c + 1);
                        head = None;
                        answer_planned = false;
                        model.exc_tag = model.exc_tag.wrapping_add(1);
                    }
                }
            }
            if matches!(csr_accept, Some((35, true, _))) && !took_answer {
                cov.stale += 1;
                model.stale = model.stale.wrapping_add(1);
            }
            if let Some(q) = req_accept {
                assert!(
                    pending.is_empty(),
                    "seed {seed} clock {c}: lookup accepted early"
                );
                let outcome = model.lookup(&q);
                match outcome {
                    Lookup::Answer { ok: true, .. } => cov.hits += 1,
                    Lookup::Answer { ok: false, .. } => cov.failures += 1,
                    Lookup::Miss => {}
                }
                pending.push_back(Pending {
                    req: q,
                    accepted: c,
                    outcome,
                    due: (outcome != Lookup::Miss).then_some(c + 3),
                });
                request = None;
            }
            if let Some((r, write, wdata)) = csr_accept {
                if write {
                    if r == 5 && (1..=3).contains(&wdata) {
                        if (model.index as usize) < entries {
                            cov.commands += 1;
                        } else {
                            cov.refused += 1;
                        }
                    }
                    model.write(r, wdata);
                }
                csr_op = None;
            }
            tick(&mut b.uut);
            b.cycle += 1;
        }
        // Every entry reads back as the model has it.
        for i in 0..entries as u32 {
            assert_eq!(
                b.read_entry(i),
                model.table[i as usize],
                "seed {seed}: entry {i}"
            );
        }
        cov
    }

    fn check_coverage(cov: &Coverage) {
        eprintln!("{cov:?}");
        assert!(cov.hits > 200, "{cov:?}");
        assert!(cov.failures > 200, "{cov:?}");
        assert!(cov.answered > 20, "{cov:?}");
        assert!(cov.timed_out > 20, "{cov:?}");
        assert!(cov.commands > 300, "{cov:?}");
        assert!(cov.refused > 10, "{cov:?}");
        assert!(cov.csr_stalls > 100, "{cov:?}");
        assert!(cov.stale > 10, "{cov:?}");
    }

    #[test]
    fn matches_model_with_gaps_and_backpressure() {
        let indices: Vec<u32> = (0..20).chain([0xFF_FFFF]).collect();
        for (seed, csr_rate, req_rate) in [
            (0x7_0001, 0.5, 0.5),
            (0x7_0002, 0.3, 0.8),
            (0x7_0003, 0.9, 0.2),
            (0x7_0004, 1.0, 1.0),
        ] {
            let cov = random_run(16, &indices, seed, 40_000, csr_rate, req_rate);
            check_coverage(&cov);
        }
    }

    /// Two banks of 256 entries: the read-data multiplexer and per-bank writes.
    #[test]
    fn matches_model_across_banks() {
        let indices: Vec<u32> = (0..4)
            .chain(254..258)
            .chain(509..514)
            .chain([4096, 0xFF_FFFF])
            .collect();
        let cov = random_run(512, &indices, 0x7_0005, 40_000, 0.6, 0.6);
        check_coverage(&cov);
    }

    #[test]
    #[should_panic(expected = "entries must be a power of two between 16 and 4096, got 8")]
    fn rejects_too_few_entries() {
        Tpt::new(8);
    }

    #[test]
    #[should_panic(expected = "entries must be a power of two between 16 and 4096, got 8192")]
    fn rejects_too_many_entries() {
        Tpt::new(8192);
    }

    #[test]
    #[should_panic(expected = "entries must be a power of two between 16 and 4096, got 100")]
    fn rejects_entries_not_a_power_of_two() {
        Tpt::new(100);
    }
}
