//! `TptChecks`: the TPT's lookup request, its checks and the response. A child of
//! [`Tpt`](super::Tpt): it holds the request the table accepted, checks it against the
//! entry the [`TptTable`](super::TptTable) read, answers it, tells the table to clear a
//! used entry's valid bit, or hands the request to the
//! [`TptExceptionQueue`](super::TptExceptionQueue), whose answer it also sends.
//!
//! Follows source 001 (keys bound to byte ranges, one-shot keys disabled when used),
//! source 003 (32-bit STags, the invalidate bit) and Linux siw's check order
//! (`siw_check_mem`: valid, key, rights, bounds). Contract: `docs/nic-blocks.md` (TPT
//! lookup), behaviour `docs/nic-architecture.md` (responder rule 5).
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: drops a check in its read clock and the
//!   response's valid; `ok` and `paddr` keep their value, as between responses).
//! - Request: `s_req_accept` (the table accepted a lookup this clock), `s_req` (a
//!   [`TptRequest`]: `stag` index = bits 31:8, key = bits 7:0; `access` bit 0 remote read,
//!   1 remote write, 2 atomic; `commit` 1: the request is executed if it passes).
//!   Registered at acceptance and shown on `m_req` until the next one (the exception
//!   head).
//! - Entry from the table, the clock after acceptance: `s_entry_valid`, `s_entry_meta` (13:
//!   bit 0 valid, 3:1 rights, 4 one-shot, 12:5 key), `s_entry_vaddr` (64),
//!   `s_entry_length` (32), `s_entry_paddr` (32).
//! - Decision, in the check clock (the clock after the entry): `m_clear` (the entry is
//!   used up: clear its valid bit), `m_miss` (the index is at or beyond `entries`, or the
//!   entry is not valid: the request goes to the exception queue and gets no response here).
//! - Answer of the exception queue: `s_answer_valid`, `s_answer_ok`, `s_answer_paddr` (32).
//! - Response: `m_resp_valid` (one clock per answered request), `m_resp_ok`,
//!   `m_resp_paddr` (32, 0 when not ok); `ok` and `paddr` hold between responses.
//!
//! Checks (in siw's order; any failure answers `ok = 0`): key (STag bits 7:0 equal the
//! entry's key), rights (every access bit requested is granted), bounds (`vaddr >= base`
//! and `vaddr + length <= base + entry length`, exact: no 64- or 32-bit wrap passes a
//! request out of range). Success answers `paddr = physical base + (vaddr - base)` (32
//! bits, wrapping), and `m_clear` when the request commits and the entry is one-shot or
//! the request has `invalidate`.
//!
//! Latency and throughput: accepted at edge t, the entry is read in the clock after it and
//! registered at edge t+1, already folded with the request: the request's end `vaddr +
//! length` (from the request registers, in parallel with the RAM read) and the entry go
//! through one level of carry-save adders, so the read clock ends with the sum and carry
//! vectors of `base + length - end` (67 bits) and of the translation `paddr + vaddr -
//! base` (32 bits), one LUT behind the RAM's read data (a DP16KD's unregistered read takes
//! about half of an 8 ns clock). The checks run from registers in the clock after it: one
//! carry chain per result, in parallel: `vaddr >= base` (64 bits), the sign of the bounds
//! sum (one 67-bit chain), the translation (32 bits). The response is registered at edge
//! t+2 and shown in the clock after it (three clocks). One request per three clocks (the
//! table's pace). An exception answer is registered in the clock it arrives.
//!
//! Limits: `entries` a power of two in 16..=4096.

use super::table::check_entries;
use crate::common::TptRequest;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct TptChecks {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Request.
    pub s_req_accept: Signal<In, Bit>,
    pub s_req: Signal<In, TptRequest>,
    pub m_req: Signal<Out, TptRequest>,
    // Entry.
    pub s_entry_valid: Signal<In, Bit>,
    pub s_entry_meta: Signal<In, Bits<13>>,
    pub s_entry_vaddr: Signal<In, Bits<64>>,
    pub s_entry_length: Signal<In, Bits<32>>,
    pub s_entry_paddr: Signal<In, Bits<32>>,
    // Decision.
    pub m_clear: Signal<Out, Bit>,
    pub m_miss: Signal<Out, Bit>,
    // Exception answer and response.
    pub s_answer_valid: Signal<In, Bit>,
    pub s_answer_ok: Signal<In, Bit>,
    pub s_answer_paddr: Signal<In, Bits<32>>,
    pub m_resp_valid: Signal<Out, Bit>,
    pub m_resp_ok: Signal<Out, Bit>,
    pub m_resp_paddr: Signal<Out, Bits<32>>,
    // The request in flight.
    req: DFF<TptRequest>,
    req_in_table: DFF<Bit>,
    // The entry as read, folded with the request through one carry-save level.
    ent_meta: DFF<Bits<13>>,
    ent_vaddr: DFF<Bits<64>>,
    /// base + entry length - (vaddr + length) = lim_s + lim_c, in 67 bits.
    lim_s: DFF<Bits<67>>,
    lim_c: DFF<Bits<67>>,
    /// physical base + vaddr - base (low 32 bits) = tr_s + tr_c.
    tr_s: DFF<Bits<32>>,
    tr_c: DFF<Bits<32>>,
    /// The check clock.
    check: DFF<Bit>,
    resp_valid: DFF<Bit>,
    resp_ok: DFF<Bit>,
    resp_paddr: DFF<Bits<32>>,
    // Combinational intermediates.
    hit: Signal<Local, Bit>,
    key_ok: Signal<Local, Bit>,
    rights_ok: Signal<Local, Bit>,
    base_ok: Signal<Local, Bit>,
    /// The request's end `vaddr + length`, exact (read clock).
    req_end: Signal<Local, Bits<65>>,
    // base + entry length - end, as a + b + c + 1 in 67 bits through one carry-save level
    // (read clock).
    lim_a: Signal<Local, Bits<67>>,
    lim_b: Signal<Local, Bits<67>>,
    lim_n: Signal<Local, Bits<67>>,
    // physical base + vaddr - base the same way.
    tr_a: Signal<Local, Bits<32>>,
    tr_b: Signal<Local, Bits<32>>,
    tr_n: Signal<Local, Bits<32>>,
    /// The bounds sum (check clock): its sign is `end_ok`'s complement.
    lim_sum: Signal<Local, Bits<67>>,
    end_ok: Signal<Local, Bit>,
    early_ok: Signal<Local, Bit>,
    translated: Signal<Local, Bits<32>>,
    check_ok: Signal<Local, Bit>,
    resp_set: Signal<Local, Bit>,
    resp_ok_next: Signal<Local, Bit>,
    entries_c: Constant<Bits<24>>,
}

impl TptChecks {
    /// Checks for a table of `entries` entries (STag indices `0..entries`).
    ///
    /// Panics when `entries` is not a power of two in 16..=4096.
    pub fn new(entries: usize) -> Self {
        check_entries("TptChecks", entries);
        TptChecks {
            clock: Default::default(),
            reset: Default::default(),
            s_req_accept: Default::default(),
            s_req: Default::default(),
            m_req: Default::default(),
            s_entry_valid: Default::default(),
            s_entry_meta: Default::default(),
            s_entry_vaddr: Default::default(),
            s_entry_length: Default::default(),
            s_entry_paddr: Default::default(),
            m_clear: Default::default(),
            m_miss: Default::default(),
            s_answer_valid: Default::default(),
            s_answer_ok: Default::default(),
            s_answer_paddr: Default::default(),
            m_resp_valid: Default::default(),
            m_resp_ok: Default::default(),
            m_resp_paddr: Default::default(),
            req: Default::default(),
            req_in_table: Default::default(),
            ent_meta: Default::default(),
            ent_vaddr: Default::default(),
            lim_s: Default::default(),
            lim_c: Default::default(),
            tr_s: Default::default(),
            tr_c: Default::default(),
            check: Default::default(),
            resp_valid: Default::default(),
            resp_ok: Default::default(),
            resp_paddr: Default::default(),
            hit: Default::default(),
            key_ok: Default::default(),
            rights_ok: Default::default(),
            base_ok: Default::default(),
            req_end: Default::default(),
            lim_a: Default::default(),
            lim_b: Default::default(),
            lim_n: Default::default(),
            tr_a: Default::default(),
            tr_b: Default::default(),
            tr_n: Default::default(),
            lim_sum: Default::default(),
            end_ok: Default::default(),
            early_ok: Default::default(),
            translated: Default::default(),
            check_ok: Default::default(),
            resp_set: Default::default(),
            resp_ok_next: Default::default(),
            entries_c: Constant::new((entries as u64).to_bits()),
        }
    }
}

impl Default for TptChecks {
    fn default() -> Self {
        Self::new(super::TPT_BANK_ENTRIES)
    }
}

impl Logic for TptChecks {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            req,
            req_in_table,
            ent_meta,
            ent_vaddr,
            lim_s,
            lim_c,
            tr_s,
            tr_c,
            check,
            resp_valid,
            resp_ok,
            resp_paddr
        );
        // Acceptance: the request is held until the next one.
        if self.s_req_accept.val() {
            self.req.d.next = self.s_req.val();
            self.req_in_table.d.next =
                bit_cast::<24, 32>(self.s_req.val().stag >> 8) < self.entries_c.val();
        }
        // Read clock: the entry as read, folded with the request (one carry-save level).
        self.req_end.next = bit_cast::<65, 64>(self.req.q.val().vaddr)
            + bit_cast::<65, 32>(self.req.q.val().length);
        self.lim_a.next = bit_cast::<67, 64>(self.s_entry_vaddr.val());
        self.lim_b.next = bit_cast::<67, 32>(self.s_entry_length.val());
        self.lim_n.next = !bit_cast::<67, 65>(self.req_end.val());
        self.tr_a.next = self.s_entry_paddr.val();
        self.tr_b.next = bit_cast::<32, 64>(self.req.q.val().vaddr);
        self.tr_n.next = !self.s_entry_vaddr.val().get_bits::<32>(0);
        self.check.d.next = self.s_entry_valid.val() & !self.reset.val();
        if self.s_entry_valid.val() {
            self.ent_meta.d.next = self.s_entry_meta.val();
            self.ent_vaddr.d.next = self.s_entry_vaddr.val();
            self.lim_s.d.next = self.lim_a.val() ^ self.lim_b.val() ^ self.lim_n.val();
            self.lim_c.d.next = (((self.lim_a.val() & self.lim_b.val())
                | (self.lim_a.val() & self.lim_n.val())
                | (self.lim_b.val() & self.lim_n.val()))
                << 1)
                | bits::<67>(1);
            self.tr_s.d.next = self.tr_a.val() ^ self.tr_b.val() ^ self.tr_n.val();
            self.tr_c.d.next = (((self.tr_a.val() & self.tr_b.val())
                | (self.tr_a.val() & self.tr_n.val())
                | (self.tr_b.val() & self.tr_n.val()))
                << 1)
                | bits::<32>(1);
        }
        // Check clock, from registers: one carry chain per result.
        self.hit.next = self.req_in_table.q.val() & self.ent_meta.q.val().get_bit(0);
        self.key_ok.next =
            self.ent_meta.q.val().get_bits::<8>(5) == bit_cast::<8, 32>(self.req.q.val().stag);
        self.rights_ok.next =
            (self.req.q.val().access & !self.ent_meta.q.val().get_bits::<3>(1)) == 0;
        self.base_ok.next = self.req.q.val().vaddr >= self.ent_vaddr.q.val();
        self.lim_sum.next = self.lim_s.q.val() + self.lim_c.q.val();
        self.end_ok.next = !self.lim_sum.val().get_bit(66);
        self.translated.next = self.tr_s.q.val() + self.tr_c.q.val();
        self.early_ok.next = self.key_ok.val() & self.rights_ok.val();
        self.check_ok.next = self.early_ok.val() & self.base_ok.val() & self.end_ok.val();
        self.m_clear.next = self.check.q.val()
            & self.hit.val()
            & self.check_ok.val()
            & self.req.q.val().commit
            & (self.ent_meta.q.val().get_bit(4) | self.req.q.val().invalidate);
        self.m_miss.next = self.check.q.val() & !self.hit.val();
        // The response: the translation or the exception queue's answer; paddr 0 when
        // refused.
        self.resp_set.next = (self.check.q.val() & self.hit.val()) | self.s_answer_valid.val();
        self.resp_ok_next.next = self.s_answer_ok.val();
        if self.check.q.val() {
            self.resp_ok_next.next = self.check_ok.val();
        }
        self.resp_valid.d.next = false;
        if self.resp_set.val() {
            self.resp_valid.d.next = true;
            self.resp_ok.d.next = self.resp_ok_next.val();
            self.resp_paddr.d.next = self.s_answer_paddr.val();
            if self.check.q.val() {
                self.resp_paddr.d.next = self.translated.val();
            }
        }
        if self.reset.val() {
            self.resp_valid.d.next = false;
        }
        // Outputs.
        self.m_req.next = self.req.q.val();
        self.m_resp_valid.next = self.resp_valid.q.val();
        self.m_resp_ok.next = self.resp_ok.q.val();
        // paddr is 0 when refused: masked here, so the late `ok` does not clear the
        // register's 32 bits.
        self.m_resp_paddr.next = 0.into();
        if self.resp_ok.q.val() {
            self.m_resp_paddr.next = self.resp_paddr.q.val();
        }
    }
}

impl ClockedBlock for TptChecks {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
