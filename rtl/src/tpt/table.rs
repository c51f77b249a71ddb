//! `TptTable`: the TPT's entry table (the RAM banks), its CSR-side management (staging
//! registers, commands, `TPT_STATUS`, the reset sweep) and the sequencer that owns the RAM
//! ports: one operation at a time, a lookup's read and valid-bit write-back or a command.
//! A child of [`Tpt`](super::Tpt); the contract is the `Tpt`'s (`docs/nic-blocks.md`, TPT
//! CSR side port; registers `docs/csr-map.md`, TPT).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: clears the registers, then every entry in
//!   `min(entries, 256)` clocks, busy meanwhile).
//! - CSR side port: `s_csr_valid` / `s_csr_ready`, `s_csr_write`, `s_csr_reg` (6),
//!   `s_csr_wdata` (64); `m_csr_rdata_valid`, `m_csr_rdata` (64): one beat per accepted
//!   read, the clock after it. This block decodes registers 0..=6 (`TPT_INDEX`,
//!   `TPT_WORD0`, `TPT_VADDR`, `TPT_LENGTH`, `TPT_PADDR`, `TPT_COMMAND`, `TPT_STATUS`) and
//!   decides `s_csr_ready` for every register (low for registers 0..=5 while busy; reset
//!   steers no handshake: what a port takes in a reset clock is dropped at that edge, the
//!   sweep after it rewrites every entry); the read data is its own registers' word ORed
//!   with `s_exc_rdata` (the exception queue's word for the addressed register, 0 for any
//!   other).
//!   `s_stat_stale` (8) reads in `TPT_STATUS` bits 23:16.
//! - Lookup read port: `s_lookup_valid` / `s_lookup_ready`, `s_lookup_index` (12: STag
//!   bits 19:8, all that a table of at most 4096 entries decodes); `s_hold` (the
//!   exception head is waiting: no lookup is accepted);
//!   `m_lookup_accept` (a lookup is accepted this clock). The entry (at the index modulo
//!   the table, for an index beyond it) is on `m_entry_meta` (13: bit 0 valid, 3:1
//!   rights, 4 one-shot, 12:5 key), `m_entry_vaddr` (64), `m_entry_length` (32),
//!   `m_entry_paddr` (32) while `m_entry_valid`, the clock after acceptance (RAM read
//!   data, unregistered). `s_clear` in the clock after that (the check clock) clears the
//!   entry's valid bit (the rest of its meta written back as read).
//! - Bind write port: `s_bind_valid` / `s_bind_ready`, `s_bind` (a `TptBindWrite`): one
//!   write is kept in registers of its own (not the staging registers) until the
//!   sequencer applies it; ready while none waits. An index at or beyond the table is
//!   accepted and dropped.
//!
//! Latency and throughput: a lookup occupies the RAM ports for three clocks (accept, read,
//! check); the next can be accepted in the clock after the check. A command accepted
//! through `TPT_COMMAND` runs in the clock after its acceptance, or up to two clocks later
//! behind a lookup in flight (a lookup accepted in the same clock as a command goes
//! first), and takes one clock (write) or two (invalidate, read, take). A bind write is
//! applied, in one clock, at the first free clock of the sequencer after its acceptance
//! (after a pending command; lookups wait meanwhile), so within three clocks. A command or
//! a bind write racing a lookup of the same entry is applied wholly before or after it.
//!
//! Storage: banks of 256 entries, each four RustHDL `RAM`s (meta 13, virtual base 64,
//! length 32, physical base 32 bits; synchronous read), so an iCE40 bank is 9 RAM4K in
//! their native 256 x 16 shape and an ECP5 bank 5 DP16KD; banks beyond the first cost a
//! read-data multiplexer. Details and measurements: the [`Tpt`](super::Tpt) doc comment.
//!
//! Limits: `entries` a power of two in 16..=4096.

use crate::common::{zeroed_ram, TptBindWrite};
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Entries per RAM bank: the depth of an iCE40 RAM4K in its 16-bit shape.
pub const TPT_BANK_ENTRIES: usize = 256;
/// Smallest and largest table.
pub const TPT_MIN_ENTRIES: usize = 16;
pub const TPT_MAX_ENTRIES: usize = 4096;

/// Panics unless `entries` is a power of two in 16..=4096 (`block` names the block).
pub(crate) fn check_entries(block: &str, entries: usize) {
    assert!(
        entries.is_power_of_two() && (TPT_MIN_ENTRIES..=TPT_MAX_ENTRIES).contains(&entries),
        "{block}: entries must be a power of two between {TPT_MIN_ENTRIES} and {TPT_MAX_ENTRIES}, got {entries}"
    );
}

/// What the table's RAM sequencer is doing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum TptState {
    /// Writing zero to every entry (after reset).
    Clear,
    /// Ready for a command or a lookup.
    Idle,
    /// A lookup's entry is on the read port.
    LookupRead,
    /// The lookup's check clock: valid-bit write-back.
    LookupCheck,
    /// A read or invalidate command's entry has been read: staging load or write-back.
    CmdApply,
}

#[derive(LogicBlock)]
pub struct TptTable {
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
    pub s_exc_rdata: Signal<In, Bits<64>>,
    pub s_stat_stale: Signal<In, Bits<8>>,
    // Lookup read port.
    pub s_lookup_valid: Signal<In, Bit>,
    pub s_lookup_ready: Signal<Out, Bit>,
    pub s_lookup_index: Signal<In, Bits<12>>,
    pub s_hold: Signal<In, Bit>,
    pub m_lookup_accept: Signal<Out, Bit>,
    pub m_entry_valid: Signal<Out, Bit>,
    pub m_entry_meta: Signal<Out, Bits<13>>,
    pub m_entry_vaddr: Signal<Out, Bits<64>>,
    pub m_entry_length: Signal<Out, Bits<32>>,
    pub m_entry_paddr: Signal<Out, Bits<32>>,
    pub s_clear: Signal<In, Bit>,
    // Bind write port.
    pub s_bind_valid: Signal<In, Bit>,
    pub s_bind_ready: Signal<Out, Bit>,
    pub s_bind: Signal<In, TptBindWrite>,
    // Table: one element per bank of 256 entries.
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
    /// Bank of the entry being read (selects the read data the clock after the address;
    /// a lookup's bank stays here for its write-back).
    rd_bank: DFF<Bits<4>>,
    /// The lookup's entry index within its bank, and its meta as read (write-back).
    lk_index: DFF<Bits<8>>,
    lk_meta: DFF<Bits<13>>,
    rdata_valid: DFF<Bit>,
    rdata: DFF<Bits<64>>,
    /// The bind write accepted and not yet applied: its own payload (never the staging
    /// registers), the index within the table's 4096 and the entry's meta.
    bind_pending: DFF<Bit>,
    bind_index: DFF<Bits<12>>,
    bind_meta: DFF<Bits<13>>,
    bind_vaddr: DFF<Bits<64>>,
    bind_length: DFF<Bits<32>>,
    bind_paddr: DFF<Bits<32>>,
    // Combinational intermediates.
    busy: Signal<Local, Bit>,
    csr_ready: Signal<Local, Bit>,
    csr_accept: Signal<Local, Bit>,
    csr_wr: Signal<Local, Bit>,
    cmd_known: Signal<Local, Bit>,
    cmd_in_range: Signal<Local, Bit>,
    lookup_ready: Signal<Local, Bit>,
    lookup_accept: Signal<Local, Bit>,
    lookup_bank: Signal<Local, Bits<4>>,
    index_bank: Signal<Local, Bits<4>>,
    rd_index: Signal<Local, Bits<8>>,
    rd_meta: Signal<Local, Bits<13>>,
    rd_vaddr: Signal<Local, Bits<64>>,
    rd_length: Signal<Local, Bits<32>>,
    rd_paddr: Signal<Local, Bits<32>>,
    load_entry: Signal<Local, Bit>,
    wr_index: Signal<Local, Bits<8>>,
    wr_bank: Signal<Local, Bits<4>>,
    wr_all_banks: Signal<Local, Bit>,
    wr_meta_en: Signal<Local, Bit>,
    wr_rest_en: Signal<Local, Bit>,
    wr_meta: Signal<Local, Bits<13>>,
    wdata_meta: Signal<Local, Bits<13>>,
    word0: Signal<Local, Bits<64>>,
    own_rdata: Signal<Local, Bits<64>>,
    bind_ready: Signal<Local, Bit>,
    bind_accept: Signal<Local, Bit>,
    bind_in_range: Signal<Local, Bit>,
    bind_in_index: Signal<Local, Bits<12>>,
    bind_in_meta: Signal<Local, Bits<13>>,
    wr_vaddr: Signal<Local, Bits<64>>,
    wr_length: Signal<Local, Bits<32>>,
    wr_paddr: Signal<Local, Bits<32>>,
    entries_c: Constant<Bits<24>>,
    sweep_last: Constant<Bits<8>>,
    /// Bank bits of an index that select a bank (so one bank needs no multiplexer).
    bank_mask: Constant<Bits<4>>,
}

impl TptTable {
    /// A table of `entries` entries.
    ///
    /// Panics when `entries` is not a power of two in 16..=4096.
    pub fn new(entries: usize) -> Self {
        check_entries("TptTable", entries);
        let banks = entries.div_ceil(TPT_BANK_ENTRIES);
        TptTable {
            clock: Default::default(),
            reset: Default::default(),
            s_csr_valid: Default::default(),
            s_csr_ready: Default::default(),
            s_csr_write: Default::default(),
            s_csr_reg: Default::default(),
            s_csr_wdata: Default::default(),
            m_csr_rdata_valid: Default::default(),
            m_csr_rdata: Default::default(),
            s_exc_rdata: Default::default(),
            s_stat_stale: Default::default(),
            s_lookup_valid: Default::default(),
            s_lookup_ready: Default::default(),
            s_lookup_index: Default::default(),
            s_hold: Default::default(),
            m_lookup_accept: Default::default(),
            m_entry_valid: Default::default(),
            m_entry_meta: Default::default(),
            m_entry_vaddr: Default::default(),
            m_entry_length: Default::default(),
            m_entry_paddr: Default::default(),
            s_clear: Default::default(),
            s_bind_valid: Default::default(),
            s_bind_ready: Default::default(),
            s_bind: Default::default(),
            meta_ram: (0..banks).map(|_| zeroed_ram()).collect(),
            vaddr_ram: (0..banks).map(|_| zeroed_ram()).collect(),
            length_ram: (0..banks).map(|_| zeroed_ram()).collect(),
            paddr_ram: (0..banks).map(|_| zeroed_ram()).collect(),
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
            rd_bank: Default::default(),
            lk_index: Default::default(),
            lk_meta: Default::default(),
            rdata_valid: Default::default(),
            rdata: Default::default(),
            bind_pending: Default::default(),
            bind_index: Default::default(),
            bind_meta: Default::default(),
            bind_vaddr: Default::default(),
            bind_length: Default::default(),
            bind_paddr: Default::default(),
            busy: Default::default(),
            csr_ready: Default::default(),
            csr_accept: Default::default(),
            csr_wr: Default::default(),
            cmd_known: Default::default(),
            cmd_in_range: Default::default(),
            lookup_ready: Default::default(),
            lookup_accept: Default::default(),
            lookup_bank: Default::default(),
            index_bank: Default::default(),
            rd_index: Default::default(),
            rd_meta: Default::default(),
            rd_vaddr: Default::default(),
            rd_length: Default::default(),
            rd_paddr: Default::default(),
            load_entry: Default::default(),
            wr_index: Default::default(),
            wr_bank: Default::default(),
            wr_all_banks: Default::default(),
            wr_meta_en: Default::default(),
            wr_rest_en: Default::default(),
            wr_meta: Default::default(),
            wdata_meta: Default::default(),
            word0: Default::default(),
            own_rdata: Default::default(),
            bind_ready: Default::default(),
            bind_accept: Default::default(),
            bind_in_range: Default::default(),
            bind_in_index: Default::default(),
            bind_in_meta: Default::default(),
            wr_vaddr: Default::default(),
            wr_length: Default::default(),
            wr_paddr: Default::default(),
            entries_c: Constant::new((entries as u64).to_bits()),
            sweep_last: Constant::new(((entries.min(TPT_BANK_ENTRIES) - 1) as u64).to_bits()),
            bank_mask: Constant::new(((banks - 1) as u64).to_bits()),
        }
    }
}

impl Default for TptTable {
    fn default() -> Self {
        Self::new(TPT_BANK_ENTRIES)
    }
}

impl Logic for TptTable {
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
            rd_bank,
            lk_index,
            lk_meta,
            rdata_valid,
            rdata,
            bind_pending,
            bind_index,
            bind_meta,
            bind_vaddr,
            bind_length,
            bind_paddr
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
        // CSR port.
        self.busy.next = self.cmd_pending.q.val() | (self.state.q.val() == TptState::Clear);
        self.csr_ready.next = !(self.busy.val() & (self.s_csr_reg.val() < 6));
        self.csr_accept.next = self.s_csr_valid.val() & self.csr_ready.val();
        self.csr_wr.next = self.csr_accept.val() & self.s_csr_write.val();
        self.cmd_known.next = (self.s_csr_wdata.val().get_bits::<61>(3) == 0)
            & (self.s_csr_wdata.val().get_bits::<3>(0) != 0)
            & (self.s_csr_wdata.val().get_bits::<3>(0) <= 4);
        self.cmd_in_range.next = self.index_reg.q.val() < self.entries_c.val();
        self.wdata_meta.next = bit_cast::<13, 5>(self.s_csr_wdata.val().get_bits::<5>(0))
            | (bit_cast::<13, 8>(self.s_csr_wdata.val().get_bits::<8>(8)) << 5);
        self.index_bank.next = self.index_reg.q.val().get_bits::<4>(8) & self.bank_mask.val();
        // Bind write port: one write waits here (its own payload) until the sequencer is
        // free; one at or beyond the table is accepted and dropped.
        self.bind_ready.next = !self.bind_pending.q.val();
        self.bind_accept.next = self.s_bind_valid.val() & self.bind_ready.val();
        self.bind_in_range.next = self.s_bind.val().index < self.entries_c.val();
        self.bind_in_index.next = bit_cast::<12, 24>(self.s_bind.val().index);
        // The entry's meta as `TPT_WORD0` writes it: bit 0 valid, 3:1 rights, 4 one-shot
        // (0), 12:5 key.
        if self.s_bind.val().valid {
            self.bind_in_meta.next = (bit_cast::<13, 3>(self.s_bind.val().rights) << 1)
                | (bit_cast::<13, 8>(self.s_bind.val().key) << 5)
                | 1;
        } else {
            self.bind_in_meta.next = (bit_cast::<13, 3>(self.s_bind.val().rights) << 1)
                | (bit_cast::<13, 8>(self.s_bind.val().key) << 5);
        }
        if self.bind_accept.val() & self.bind_in_range.val() {
            self.bind_pending.d.next = true;
            self.bind_index.d.next = self.bind_in_index.val();
            self.bind_meta.d.next = self.bind_in_meta.val();
            self.bind_vaddr.d.next = self.s_bind.val().vaddr;
            self.bind_length.d.next = self.s_bind.val().length;
            self.bind_paddr.d.next = self.s_bind.val().paddr;
        }
        // Lookup port.
        self.lookup_ready.next = (self.state.q.val() == TptState::Idle)
            & !self.cmd_pending.q.val()
            & !self.bind_pending.q.val()
            & !self.s_hold.val();
        self.lookup_accept.next = self.s_lookup_valid.val() & self.lookup_ready.val();
        self.lookup_bank.next = self.s_lookup_index.val().get_bits::<4>(8) & self.bank_mask.val();
        // Defaults: no RAM write, read the lookup's entry.
        self.rd_index.next = self.s_lookup_index.val().get_bits::<8>(0);
        self.wr_index.next = self.index_reg.q.val().get_bits::<8>(0);
        self.wr_bank.next = self.index_bank.val();
        self.wr_all_banks.next = false;
        self.wr_meta_en.next = false;
        self.wr_rest_en.next = false;
        self.wr_meta.next = self.stage_meta.q.val();
        self.wr_vaddr.next = self.stage_vaddr.q.val();
        self.wr_length.next = self.stage_length.q.val();
        self.wr_paddr.next = self.stage_paddr.q.val();
        self.load_entry.next = false;
        self.rdata_valid.d.next = self.csr_accept.val() & !self.s_csr_write.val();
        // Staging and command writes.
        if self.csr_wr.val() & (self.s_csr_reg.val() == 0) {
            self.index_reg.d.next = self.s_csr_wdata.val().get_bits::<24>(0);
        }
        if self.csr_wr.val() & (self.s_csr_reg.val() == 5) & self.cmd_known.val() {
            if self.cmd_in_range.val() {
                self.cmd_pending.d.next = true;
                self.cmd_kind.d.next = self.s_csr_wdata.val().get_bits::<3>(0);
            } else {
                self.refused.d.next = self.refused.q.val() + 1;
            }
        }
        // The RAM sequencer.
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
                } else if self.bind_pending.q.val() {
                    // A bind write: the whole entry from its own payload, in one clock.
                    self.wr_index.next = self.bind_index.q.val().get_bits::<8>(0);
                    self.wr_bank.next =
                        self.bind_index.q.val().get_bits::<4>(8) & self.bank_mask.val();
                    self.wr_meta.next = self.bind_meta.q.val();
                    self.wr_vaddr.next = self.bind_vaddr.q.val();
                    self.wr_length.next = self.bind_length.q.val();
                    self.wr_paddr.next = self.bind_paddr.q.val();
                    self.wr_meta_en.next = true;
                    self.wr_rest_en.next = true;
                    self.bind_pending.d.next = false;
                } else if self.lookup_accept.val() {
                    self.rd_bank.d.next = self.lookup_bank.val();
                    self.lk_index.d.next = self.s_lookup_index.val().get_bits::<8>(0);
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
                self.lk_meta.d.next = self.rd_meta.val();
                self.state.d.next = TptState::LookupCheck;
            }
            TptState::LookupCheck => {
                // Address and data do not wait for the checks' late decision.
                self.wr_index.next = self.lk_index.q.val();
                self.wr_bank.next = self.rd_bank.q.val();
                self.wr_meta.next = self.lk_meta.q.val().replace_bit(0, false);
                self.wr_meta_en.next = self.s_clear.val();
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
            self.rdata_valid.d.next = false;
            self.bind_pending.d.next = false;
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
        // CSR read data: this block's registers, ORed with the exception queue's.
        self.word0.next = bit_cast::<64, 5>(self.stage_meta.q.val().get_bits::<5>(0))
            | (bit_cast::<64, 8>(self.stage_meta.q.val().get_bits::<8>(5)) << 8);
        match self.s_csr_reg.val().index() {
            0 => {
                self.own_rdata.next = bit_cast::<64, 24>(self.index_reg.q.val());
            }
            1 => {
                self.own_rdata.next = self.word0.val();
            }
            2 => {
                self.own_rdata.next = self.stage_vaddr.q.val();
            }
            3 => {
                self.own_rdata.next = bit_cast::<64, 32>(self.stage_length.q.val());
            }
            4 => {
                self.own_rdata.next = bit_cast::<64, 32>(self.stage_paddr.q.val());
            }
            6 => {
                self.own_rdata.next = bit_cast::<64, 1>(self.busy.val().into())
                    | (bit_cast::<64, 8>(self.refused.q.val()) << 8)
                    | (bit_cast::<64, 8>(self.s_stat_stale.val()) << 16);
            }
            _ => {
                self.own_rdata.next = 0.into();
            }
        }
        self.rdata.d.next = self.own_rdata.val() | self.s_exc_rdata.val();
        // Outputs.
        self.s_csr_ready.next = self.csr_ready.val();
        self.m_csr_rdata_valid.next = self.rdata_valid.q.val();
        self.m_csr_rdata.next = self.rdata.q.val();
        self.s_lookup_ready.next = self.lookup_ready.val();
        self.s_bind_ready.next = self.bind_ready.val();
        self.m_lookup_accept.next = self.lookup_accept.val();
        self.m_entry_valid.next = self.state.q.val() == TptState::LookupRead;
        self.m_entry_meta.next = self.rd_meta.val();
        self.m_entry_vaddr.next = self.rd_vaddr.val();
        self.m_entry_length.next = self.rd_length.val();
        self.m_entry_paddr.next = self.rd_paddr.val();
    }
}

impl ClockedBlock for TptTable {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
