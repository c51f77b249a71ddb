//! `WqeFetch`: the requester's WQE fetch: a DMA read of a send WQE's words 0-4 and, only
//! for a WQE that uses more, a second read of words 5-7; the words captured into typed
//! fields and handed off to the transmit machine after the last one the WQE uses. It
//! holds up to two WQEs: the next fetch is taken while a short WQE's words still arrive
//! or while it waits for its hand-off, and a complete WQE not yet handed off moves from the
//! fields into a hold register (words 0-4) so the next one's words may follow it.
//!
//! Follows the send WQE layout of `docs/nic-architecture.md` ("Host memory structures";
//! `nic_abi::Wqe`: word 0 opcode 7:0, invalidate 8, inline 9, length 63:32; word 1 `wr_id`,
//! not kept: the completion re-reads it; word 2 local address 31:0; word 3 remote address;
//! word 4 STag 31:0, immediate 63:32; words 5 and 6 compare/add and swap; word 7 reserved
//! or the last inline word) and the DMA read client of `docs/nic-blocks.md`.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: no fetch in progress; the fields keep
//!   their values).
//! - Fetch request: `s_fetch_valid` / `s_fetch_ready`, `s_fetch_addr` (32, 8-aligned: the
//!   WQE's host address). Ready is the DMA port's `m_rd_req_ready` while the block has
//!   room: it holds no WQE, or one only that is short (word 0 in) with its words 0-4 asked
//!   for (arriving, complete or held). A request is taken when the DMA read of words 0-4
//!   is; a second one's words follow the first's on the port.
//! - DMA read client: `m_rd_req_valid` / `m_rd_req_ready`, `m_rd_req_addr` (32),
//!   `m_rd_req_words` (16): first `s_fetch_addr` and `Wqe::SHORT_WORDS` (5); then, for a
//!   *long* WQE (an atomic, or an inline payload over 8 bytes, as word 0 says), from the
//!   clock after word 0 until taken, `s_fetch_addr + 40` and 3 (words 5-7). The second
//!   request may be taken while words 1-4 stream: host memory returns it after them.
//!   `s_rd_data` (64), `s_rd_valid`, `s_rd_ready` (the port's `last` is not needed: the
//!   fetch counts its words): `s_rd_ready` is high
//!   while the WQE's words are awaited; other beats on the port (a payload read by the
//!   same client) are left alone.
//! - Hand-off: `m_wqe_done`, high in the clock the last word of the WQE being read is
//!   taken: word 4 of a short WQE, word 7 of a long one. `s_handoff`: the user takes the
//!   oldest WQE in the block this clock (the held one, else the complete one in the
//!   fields, else the one done this clock); its fields are on `m_wqe` in the next clock.
//! - `m_draining`: a fetch is in progress (its words are still to come; high from the
//!   clock after the request is taken up to the last word). The user requests nothing
//!   else on the same DMA port meanwhile: such a request could be taken before words
//!   5-7's.
//! - `m_wqe` (registered): the fields of the WQE handed off last clock as one [`SendWqe`]
//!   (word 0's opcode, flags and length; words 2, 3 and 4; words 5-7). A short WQE does
//!   not update `compare`, `swap` or `word7`.
//!
//! Latency: `m_rd_req_valid` follows `s_fetch_valid` in the same clock (combinational);
//! `m_wqe_done` comes in the clock word 4 (short WQE) or word 7 arrives, the fields a clock
//! later. A long WQE's words 5-7 come host memory's latency after the clock after word 0
//! (right behind word 4 when the latency is at most 3 clocks).
//! Throughput: one word per clock; two WQEs in the block, the second's read requested
//! the clock after the first's word 0 arrives (so back to back about one DMA latency
//! apart); a short WQE occupies the port for 5 words.
//! Limits: 8-word WQEs (`nic_abi::Wqe::WORDS`); a second WQE only behind a short one, so
//! at most one WQE in the block uses words 5-7 (they stay in the fields). (Internal names
//! avoid SystemVerilog keywords such as `local`: Icarus reads the Verilog as 1800-2012.)

use crate::common::SendWqe;
use crate::sim::ClockedBlock;
use nic_abi::{Wqe, WqeOpcode};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct WqeFetch {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_fetch_valid: Signal<In, Bit>,
    pub s_fetch_ready: Signal<Out, Bit>,
    pub s_fetch_addr: Signal<In, Bits<32>>,
    pub m_rd_req_valid: Signal<Out, Bit>,
    pub m_rd_req_ready: Signal<In, Bit>,
    pub m_rd_req_addr: Signal<Out, Bits<32>>,
    pub m_rd_req_words: Signal<Out, Bits<16>>,
    pub s_rd_data: Signal<In, Bits<64>>,
    pub s_rd_valid: Signal<In, Bit>,
    pub s_rd_ready: Signal<Out, Bit>,
    pub m_wqe_done: Signal<Out, Bit>,
    pub m_draining: Signal<Out, Bit>,
    pub m_wqe: Signal<Out, SendWqe>,
    pub s_handoff: Signal<In, Bit>,
    /// The WQE's words are awaited.
    receiving: DFF<Bit>,
    /// A second fetch is taken: its words follow the current WQE's.
    next_pending: DFF<Bit>,
    /// The address of the second fetch's word 5.
    next_addr: DFF<Bits<32>>,
    /// The fields hold a complete WQE not yet handed off (it moves into `held` the next
    /// clock the hold register is free).
    wfull: DFF<Bit>,
    /// The hold register: the older of two fetched WQEs (words 0-4; its words 5-7, if it
    /// uses them, stay in the fields: a second fetch is taken only while every WQE in the
    /// block is short).
    held: DFF<SendWqe>,
    held_valid: DFF<Bit>,
    held_long: DFF<Bit>,
    /// `m_wqe` shows the hold register (the WQE handed off last clock is there).
    out_held: DFF<Bit>,
    /// The fields move into the hold register this clock.
    move_held: Signal<Local, Bit>,
    /// A fetch request may be taken: no WQE in the block, or one that is short.
    room: Signal<Local, Bit>,
    /// The next word's index.
    beat: DFF<Bits<3>>,
    /// The read of words 5-7 is shown (word 0 said the WQE is long; not yet taken).
    second: Signal<Local, Bit>,
    /// The read of words 5-7 has been issued (or the WQE is short).
    second_sent: DFF<Bit>,
    /// The address of word 5 (`s_fetch_addr + 40`).
    second_addr: DFF<Bits<32>>,
    /// The WQE as assembled so far.
    wqe: DFF<SendWqe>,
    /// The WQE (word 0 taken) uses words 5-7 too: decided from word 0 as it arrives
    /// (registered, so the length compare is not in front of the request port).
    long_wqe: DFF<Bit>,
    /// A beat of this WQE is taken this clock.
    take: Signal<Local, Bit>,
    /// The fetch request is taken this clock.
    start: Signal<Local, Bit>,
    /// This beat is the WQE's last (word 4 of a short WQE, word 7).
    final_word: Signal<Local, Bit>,
    short_words: Constant<Bits<16>>,
    long_words: Constant<Bits<16>>,
    /// Byte offset of word 5.
    word5_offset: Constant<Bits<32>>,
    opc_cas: Constant<Bits<8>>,
    opc_faa: Constant<Bits<8>>,
    /// Inline payload bytes that fit in word 3.
    inline_short: Constant<Bits<32>>,
}

impl WqeFetch {
    /// The WQE fetch (no parameters: the WQE layout is `nic_abi::Wqe`'s).
    pub fn new() -> Self {
        WqeFetch {
            clock: Default::default(),
            reset: Default::default(),
            s_fetch_valid: Default::default(),
            s_fetch_ready: Default::default(),
            s_fetch_addr: Default::default(),
            m_rd_req_valid: Default::default(),
            m_rd_req_ready: Default::default(),
            m_rd_req_addr: Default::default(),
            m_rd_req_words: Default::default(),
            s_rd_data: Default::default(),
            s_rd_valid: Default::default(),
            s_rd_ready: Default::default(),
            m_wqe_done: Default::default(),
            m_draining: Default::default(),
            m_wqe: Default::default(),
            s_handoff: Default::default(),
            receiving: Default::default(),
            next_pending: Default::default(),
            next_addr: Default::default(),
            wfull: Default::default(),
            held: Default::default(),
            held_valid: Default::default(),
            held_long: Default::default(),
            out_held: Default::default(),
            move_held: Default::default(),
            room: Default::default(),
            beat: Default::default(),
            second: Default::default(),
            second_sent: Default::default(),
            second_addr: Default::default(),
            wqe: Default::default(),
            long_wqe: Default::default(),
            take: Default::default(),
            start: Default::default(),
            final_word: Default::default(),
            short_words: Constant::new((Wqe::SHORT_WORDS as u64).to_bits()),
            long_words: Constant::new(((Wqe::WORDS - Wqe::SHORT_WORDS) as u64).to_bits()),
            word5_offset: Constant::new((8 * Wqe::SHORT_WORDS as u64).to_bits()),
            opc_cas: Constant::new((WqeOpcode::AtomicCompareSwap as u64).to_bits()),
            opc_faa: Constant::new((WqeOpcode::AtomicFetchAdd as u64).to_bits()),
            inline_short: Constant::new(8u64.to_bits()),
        }
    }
}

impl Default for WqeFetch {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for WqeFetch {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            receiving,
            beat,
            second_sent,
            second_addr,
            long_wqe,
            wqe,
            next_pending,
            next_addr,
            wfull,
            held,
            held_valid,
            held_long,
            out_held
        );
        // Room for a fetch: the block holds no WQE, or one only (complete or with all its
        // reads issued) and that one is short. So at most two WQEs are in the block, words
        // 5-7 belong to one of them only, and the second fetch's words follow the first's.
        self.room.next = false;
        if !self.held_valid.q.val() & !self.wfull.q.val() & !self.receiving.q.val() {
            self.room.next = true;
        }
        if self.held_valid.q.val()
            & !self.held_long.q.val()
            & !self.wfull.q.val()
            & !self.receiving.q.val()
        {
            self.room.next = true;
        }
        if self.wfull.q.val()
            & !self.long_wqe.q.val()
            & !self.held_valid.q.val()
            & !self.receiving.q.val()
        {
            self.room.next = true;
        }
        if self.receiving.q.val()
            & !self.next_pending.q.val()
            & (self.beat.q.val() != 0)
            & !self.long_wqe.q.val()
            & !self.held_valid.q.val()
            & !self.wfull.q.val()
        {
            self.room.next = true;
        }
        // Requests: words 0-4 while there is room; words 5-7 of a long WQE once word 0 is
        // in (no room then).
        self.m_rd_req_valid.next = self.s_fetch_valid.val() & self.room.val();
        self.m_rd_req_addr.next = self.s_fetch_addr.val();
        self.m_rd_req_words.next = self.short_words.val();
        self.s_fetch_ready.next = self.m_rd_req_ready.val() & self.room.val();
        self.second.next = self.receiving.q.val()
            & !self.second_sent.q.val()
            & (self.beat.q.val() != 0)
            & self.long_wqe.q.val();
        if self.second.val() {
            self.m_rd_req_valid.next = true;
            self.m_rd_req_addr.next = self.second_addr.q.val();
            self.m_rd_req_words.next = self.long_words.val();
            if self.m_rd_req_ready.val() {
                self.second_sent.d.next = true;
            }
        }
        self.start.next = self.s_fetch_valid.val() & self.s_fetch_ready.val();
        self.s_rd_ready.next = self.receiving.q.val();
        self.take.next = self.receiving.q.val() & self.s_rd_valid.val();
        // Word 4 is the last a short WQE uses (word 0 decided it), word 7 a long one's.
        self.final_word.next =
            (self.beat.q.val() == 7) | ((self.beat.q.val() == 4) & !self.long_wqe.q.val());
        self.m_wqe_done.next = false;
        if self.take.val() {
            self.beat.d.next = self.beat.q.val() + 1;
            if self.beat.q.val() == 0 {
                self.wqe.d.next.opcode = self.s_rd_data.val().get_bits::<8>(0);
                self.wqe.d.next.invalidate = self.s_rd_data.val().get_bit(8);
                self.wqe.d.next.inline_payload = self.s_rd_data.val().get_bit(9);
                self.wqe.d.next.length = self.s_rd_data.val().get_bits::<32>(32);
                // An atomic, or an inline payload over 8 bytes.
                self.long_wqe.d.next = (self.s_rd_data.val().get_bits::<8>(0)
                    == self.opc_cas.val())
                    | (self.s_rd_data.val().get_bits::<8>(0) == self.opc_faa.val())
                    | (self.s_rd_data.val().get_bit(9)
                        & (self.s_rd_data.val().get_bits::<32>(32) > self.inline_short.val()));
            }
            if self.beat.q.val() == 2 {
                self.wqe.d.next.local_addr = self.s_rd_data.val().get_bits::<32>(0);
            }
            if self.beat.q.val() == 3 {
                self.wqe.d.next.vaddr = self.s_rd_data.val();
            }
            if self.beat.q.val() == 4 {
                self.wqe.d.next.stag = self.s_rd_data.val().get_bits::<32>(0);
                self.wqe.d.next.immediate = self.s_rd_data.val().get_bits::<32>(32);
            }
            if self.beat.q.val() == 5 {
                self.wqe.d.next.compare = self.s_rd_data.val();
            }
            if self.beat.q.val() == 6 {
                self.wqe.d.next.swap = self.s_rd_data.val();
            }
            if self.beat.q.val() == 7 {
                self.wqe.d.next.word7 = self.s_rd_data.val();
            }
            if self.final_word.val() {
                self.receiving.d.next = false;
                self.m_wqe_done.next = true;
            }
        }
        // The second fetch's words follow: its reception starts.
        if self.m_wqe_done.val() & self.next_pending.q.val() {
            self.beat.d.next = 0.into();
            self.receiving.d.next = true;
            self.second_sent.d.next = false;
            self.second_addr.d.next = self.next_addr.q.val();
            self.next_pending.d.next = false;
        }
        if self.start.val() {
            if self.receiving.q.val() & !self.m_wqe_done.val() {
                self.next_pending.d.next = true;
                self.next_addr.d.next = self.s_fetch_addr.val() + self.word5_offset.val();
            } else {
                self.beat.d.next = 0.into();
                self.receiving.d.next = true;
                self.second_sent.d.next = false;
                self.second_addr.d.next = self.s_fetch_addr.val() + self.word5_offset.val();
            }
        }
        // The hand-off takes the oldest WQE: the hold register's, else the complete one in
        // the fields, else the one done this clock. Its fields are read the next clock:
        // from the hold register, or from the fields when handed off with its last word.
        // A complete WQE in the fields moves into the free hold register at once (the next
        // fetch's words may follow it).
        self.move_held.next = self.wfull.q.val() & !self.held_valid.q.val();
        self.out_held.d.next = self.held_valid.q.val() | self.move_held.val();
        if self.m_wqe_done.val() {
            self.wfull.d.next = self.held_valid.q.val() | !self.s_handoff.val();
        }
        if self.move_held.val() {
            self.wfull.d.next = false;
            self.held_valid.d.next = !self.s_handoff.val();
            self.held_long.d.next = self.long_wqe.q.val();
            self.held.d.next.opcode = self.wqe.q.val().opcode;
            self.held.d.next.invalidate = self.wqe.q.val().invalidate;
            self.held.d.next.inline_payload = self.wqe.q.val().inline_payload;
            self.held.d.next.length = self.wqe.q.val().length;
            self.held.d.next.local_addr = self.wqe.q.val().local_addr;
            self.held.d.next.vaddr = self.wqe.q.val().vaddr;
            self.held.d.next.stag = self.wqe.q.val().stag;
            self.held.d.next.immediate = self.wqe.q.val().immediate;
        }
        if self.held_valid.q.val() & self.s_handoff.val() {
            self.held_valid.d.next = false;
        }
        self.m_draining.next = self.receiving.q.val();
        self.m_wqe.next = self.wqe.q.val();
        if self.out_held.q.val() {
            self.m_wqe.next.opcode = self.held.q.val().opcode;
            self.m_wqe.next.invalidate = self.held.q.val().invalidate;
            self.m_wqe.next.inline_payload = self.held.q.val().inline_payload;
            self.m_wqe.next.length = self.held.q.val().length;
            self.m_wqe.next.local_addr = self.held.q.val().local_addr;
            self.m_wqe.next.vaddr = self.held.q.val().vaddr;
            self.m_wqe.next.stag = self.held.q.val().stag;
            self.m_wqe.next.immediate = self.held.q.val().immediate;
        }
        if self.reset.val() {
            self.receiving.d.next = false;
            self.next_pending.d.next = false;
            self.wfull.d.next = false;
            self.held_valid.d.next = false;
            self.out_held.d.next = false;
        }
    }
}

impl ClockedBlock for WqeFetch {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{settle, tick};
    use nic_abi::INLINE_MAX_BYTES;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::VecDeque;

    /// The fields the block keeps, as the documentation lists them.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Fields {
        opcode: u8,
        invalidate: bool,
        inline: bool,
        length: u32,
        local: u32,
        vaddr: u64,
        stag: u32,
        immediate: u32,
        compare: u64,
        swap: u64,
        word7: u64,
    }

    impl Fields {
        fn of(uut: &WqeFetch) -> Self {
            Fields {
                opcode: uut.m_wqe.val().opcode.to_u8(),
                invalidate: uut.m_wqe.val().invalidate,
                inline: uut.m_wqe.val().inline_payload,
                length: uut.m_wqe.val().length.to_u32(),
                local: uut.m_wqe.val().local_addr.to_u32(),
                vaddr: uut.m_wqe.val().vaddr.to_u64(),
                stag: uut.m_wqe.val().stag.to_u32(),
                immediate: uut.m_wqe.val().immediate.to_u32(),
                compare: uut.m_wqe.val().compare.to_u64(),
                swap: uut.m_wqe.val().swap.to_u64(),
                word7: uut.m_wqe.val().word7.to_u64(),
            }
        }

        /// Word `i` of a WQE taken into the fields.
        fn take(&mut self, i: usize, w: u64) {
            let wqe = Wqe::from_words(&{
                let mut words = [0u64; 8];
                words[i] = w;
                words
            });
            match i {
                0 => {
                    self.opcode = wqe.opcode;
                    self.invalidate = wqe.invalidate;
                    self.inline = wqe.inline;
                    self.length = wqe.length;
                }
                2 => self.local = wqe.local_addr,
                3 => self.vaddr = wqe.remote_vaddr,
                4 => {
                    self.stag = wqe.stag;
                    self.immediate = wqe.immediate;
                }
                5 => self.compare = wqe.compare_add,
                6 => self.swap = wqe.swap,
                7 => self.word7 = wqe.reserved,
                _ => {}
            }
        }

        /// The WQE uses words 0-4 only: not an atomic, no inline payload past word 3.
        fn short(&self) -> bool {
            let atomic = self.opcode == WqeOpcode::AtomicCompareSwap as u8
                || self.opcode == WqeOpcode::AtomicFetchAdd as u8;
            !(atomic || (self.inline && self.length > 8))
        }
    }

    /// The block as its documentation describes it, stepped by its inputs only.
    #[derive(Default)]
    struct Model {
        /// `Some(i)`: word i of the WQE being read is awaited.
        awaiting: Option<usize>,
        /// The read of words 5-7 has been taken.
        second_sent: bool,
        /// The address of the WQE being read.
        addr: u32,
        /// A second fetch taken while the first's words arrive: its address (its words
        /// follow the first's).
        next: Option<u32>,
        /// Complete WQEs not handed off, oldest first: whether each is short.
        complete: VecDeque<bool>,
        fields: Fields,
    }

    /// The block's handshake outputs for one clock.
    #[derive(Debug, PartialEq, Eq)]
    struct Outputs {
        rd_req_valid: bool,
        /// The request shown (address, words), when valid.
        rd_req: Option<(u32, u32)>,
        fetch_ready: bool,
        rd_ready: bool,
        done: bool,
        draining: bool,
    }

    impl Model {
        /// Words 5-7 are to be requested: word 0 is in and says the WQE is long.
        fn second_shown(&self) -> bool {
            matches!(self.awaiting, Some(i) if i >= 1) && !self.second_sent && !self.fields.short()
        }

        /// Room for a fetch: the block holds no WQE, or one only that is short (word 0
        /// in) with its words 0-4 asked for (arriving, complete or held).
        fn room(&self) -> bool {
            let held = self.awaiting.is_some() as usize
                + self.next.is_some() as usize
                + self.complete.len();
            match held {
                0 => true,
                1 => match self.awaiting {
                    Some(i) => i >= 1 && self.fields.short(),
                    None => self.complete[0],
                },
                _ => false,
            }
        }

        fn outputs(
            &self,
            fetch_valid: bool,
            fetch_addr: u32,
            req_ready: bool,
            beat: Option<(u64, bool)>,
        ) -> Outputs {
            let room = self.room();
            let done = match (self.awaiting, beat) {
                (Some(i), Some(_)) => i == 7 || (i == 4 && self.fields.short()),
                _ => false,
            };
            let rd_req = if self.second_shown() {
                Some((self.addr.wrapping_add(40), 3))
            } else if fetch_valid && room {
                Some((fetch_addr, 5))
            } else {
                None
            };
            Outputs {
                rd_req_valid: rd_req.is_some(),
                rd_req,
                fetch_ready: req_ready && room,
                rd_ready: self.awaiting.is_some(),
                done,
                draining: self.awaiting.is_some(),
            }
        }

        /// One rising edge with these inputs (`beat`: a beat offered on the port;
        /// `handoff`: the user takes the oldest WQE, if one is complete).
        #[allow(clippy::too_many_arguments)]
        fn clock(
            &mut self,
            fetch_valid: bool,
            fetch_addr: u32,
            req_ready: bool,
            beat: Option<(u64, bool)>,
            handoff: bool,
            reset: bool,
        ) {
            let o = self.outputs(fetch_valid, fetch_addr, req_ready, beat);
            let reading = self.awaiting.is_some() && !o.done;
            if self.second_shown() && req_ready {
                self.second_sent = true;
            }
            if let (Some(i), Some((w, _))) = (self.awaiting, beat) {
                self.fields.take(i, w);
                self.awaiting = (!o.done).then_some(i + 1);
            }
            // The hand-off takes the oldest complete WQE, else the one done now.
            let mut done_kept = o.done;
            if handoff {
                if self.complete.pop_front().is_none() {
                    done_kept = false;
                }
            }
            if done_kept {
                self.complete.push_back(self.fields.short());
            }
            if o.done {
                if let Some(a) = self.next.take() {
                    self.awaiting = Some(0);
                    self.second_sent = false;
                    self.addr = a;
                }
            }
            if fetch_valid && o.fetch_ready {
                if reading {
                    self.next = Some(fetch_addr);
                } else {
                    self.awaiting = Some(0);
                    self.second_sent = false;
                    self.addr = fetch_addr;
                }
            }
            if reset {
                self.awaiting = None;
                self.next = None;
                self.complete.clear();
            }
        }
    }

    /// A random WQE: every opcode (and unknown ones), inline or not, lengths around the
    /// short / long boundary.
    fn random_wqe_words(rng: &mut ChaCha8Rng) -> [u64; 8] {
        let opcodes = [
            WqeOpcode::Send as u8,
            WqeOpcode::SendImmediate as u8,
            WqeOpcode::RdmaWrite as u8,
            WqeOpcode::RdmaRead as u8,
            WqeOpcode::AtomicCompareSwap as u8,
            WqeOpcode::AtomicFetchAdd as u8,
            nic_abi::NOP_OPCODE,
            rng.gen(),
        ];
        let mut w: [u64; 8] = rng.gen();
        let opcode = opcodes[rng.gen_range(0..opcodes.len())];
        let length = rng.gen_range(0..=INLINE_MAX_BYTES as u64 + 4);
        w[0] = opcode as u64
            | (rng.gen::<bool>() as u64) << 8
            | (rng.gen::<bool>() as u64) << 9
            | (rng.gen_range(0..8u64) << 10)
            | length << 32;
        w
    }

    /// Seeded random fetches, each followed at random by a payload read on the same DMA
    /// port (whose beats the block must leave alone), with DMA back-pressure on the requests,
    /// idle gaps between beats, a user that waits before its next request, and resets.
    /// Host memory returns the words of each read it takes, in request order.
    /// Compares the outputs every clock with the model, and the fields after each hand-off
    /// with the WQE in memory. Returns (WQEs handed off, short ones).
    fn run(seed: u64, cycles: usize) -> (usize, usize) {
        let mut uut = WqeFetch::new();
        uut.connect_all();
        let mut model = Model::default();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // The DMA server: beats of accepted requests, in order.
        let mut beats: VecDeque<(u64, bool)> = VecDeque::new();
        let mut latency = 0u32;
        // The user: the WQE it fetches, whether it waits for the hand-off, and the payload
        // beats it still takes.
        let mut wqe: Option<(u32, [u64; 8])> = None;
        let mut waiting = false;
        let mut payload_left = 0u32;
        let mut payload_wanted = false;
        let (mut handed_off, mut short) = (0, 0);
        for cycle in 0..cycles {
            let p_gap = [0.0, 0.5, 0.1, 0.8][(cycle / 400) % 4];
            let p_ready = [1.0, 0.3, 0.8, 0.1][(cycle / 500) % 4];
            // The user's requests.
            if wqe.is_none() && payload_left == 0 && !payload_wanted && rng.gen_bool(0.3) {
                wqe = Some((rng.gen::<u32>() & !7, random_wqe_words(&mut rng)));
            }
            let fetch_valid = wqe.is_some() && !waiting;
            let payload_valid = payload_wanted && !uut.m_draining.val();
            let req_ready = rng.gen_bool(p_ready);
            let beat = if latency == 0 && !rng.gen_bool(p_gap) {
                beats.front().copied()
            } else {
                None
            };
            latency = latency.saturating_sub(1);
            let reset = rng.gen_bool(0.0005);
            uut.reset.next = reset;
            // The user takes each WQE with its last word (one WQE in the block at a time).
            uut.s_handoff.next = true;
            uut.s_fetch_valid.next = fetch_valid;
            uut.s_fetch_addr.next = (wqe.map_or(0, |(a, _)| a) as u64).to_bits();
            uut.m_rd_req_ready.next = req_ready;
            uut.s_rd_valid.next = beat.is_some();
            let (d, _) = beat.unwrap_or((rng.gen(), rng.gen()));
            uut.s_rd_data.next = d.to_bits();
            settle(&mut uut);
            let fetch_addr = wqe.map_or(0, |(a, _)| a);
            let want = model.outputs(fetch_valid, fetch_addr, req_ready, beat);
            let got = Outputs {
                rd_req_valid: uut.m_rd_req_valid.val(),
                rd_req: uut.m_rd_req_valid.val().then(|| {
                    (
                        uut.m_rd_req_addr.val().to_u32(),
                        uut.m_rd_req_words.val().to_u32(),
                    )
                }),
                fetch_ready: uut.s_fetch_ready.val(),
                rd_ready: uut.s_rd_ready.val(),
                done: uut.m_wqe_done.val(),
                draining: uut.m_draining.val(),
            };
            assert_eq!(got, want, "handshakes at clock {cycle}");
            assert_eq!(Fields::of(&uut), model.fields, "fields at clock {cycle}");
            // The port: the block's beats, or the user's payload beats.
            let payload_ready = payload_left > 0 && rng.gen_bool(0.7);
            let port_ready = uut.s_rd_ready.val() || payload_ready;
            if uut.s_rd_ready.val() {
                assert_eq!(
                    payload_left, 0,
                    "the block takes a payload beat at clock {cycle}"
                );
            }
            // Requests taken by the port: the words of the WQE in memory they ask for.
            if uut.m_rd_req_valid.val() && req_ready {
                let (addr, n) = want.rd_req.unwrap();
                let (base, words) = wqe.unwrap();
                let first = (addr.wrapping_sub(base) / 8) as usize;
                for i in first..first + n as usize {
                    beats.push_back((words[i], i + 1 == first + n as usize));
                }
                if first == 0 {
                    latency = rng.gen_range(0..4);
                }
                waiting = true;
            } else if payload_valid && req_ready && !fetch_valid {
                let n = rng.gen_range(1..5u32);
                for i in 0..n {
                    beats.push_back((rng.gen(), i == n - 1));
                }
                payload_left = n;
                payload_wanted = false;
            }
            if beat.is_some() && port_ready {
                beats.pop_front();
                if payload_ready && !uut.s_rd_ready.val() {
                    payload_left -= 1;
                }
            }
            let done = uut.m_wqe_done.val();
            tick(&mut uut);
            model.clock(fetch_valid, fetch_addr, req_ready, beat, true, reset);
            if done {
                // The fields hold the WQE's words 0-4 (and 5-7 unless it is short).
                let (_, words) = wqe.take().unwrap();
                let mut f = model.fields;
                let is_short = f.short();
                for (i, w) in words.iter().enumerate().take(if is_short { 5 } else { 8 }) {
                    f.take(i, *w);
                }
                assert_eq!(
                    Fields::of(&uut),
                    f,
                    "WQE after its hand-off at clock {cycle}"
                );
                handed_off += 1;
                short += is_short as usize;
                waiting = false;
                payload_wanted = rng.gen_bool(0.5);
            }
            if reset {
                uut.reset.next = false;
                beats.clear();
                wqe = None;
                waiting = false;
                payload_left = 0;
                payload_wanted = false;
            }
        }
        (handed_off, short)
    }

    #[test]
    fn synthesises() {
        let mut uut = WqeFetch::new();
        uut.connect_all();
        yosys_validate("nic_rtl_requester_wqe_fetch", &generate_verilog(&uut))
            .expect("yosys accepts WqeFetch");
    }

    #[test]
    fn matches_model_with_gaps_and_backpressure() {
        for seed in 1..=3 {
            let (handed_off, short) = run(seed, 8_000);
            assert!(handed_off > 150, "seed {seed}: {handed_off} WQEs");
            assert!(
                short > 50 && handed_off - short > 50,
                "seed {seed}: {short} short"
            );
        }
    }

    /// A short WQE is read as words 0-4 and handed off with word 4; an atomic's words 5-7
    /// are asked for in a second read, from the clock after word 0 (taken while words 1-4
    /// stream), and it is handed off with word 7. A second fetch may be taken from the clock
    /// after a short WQE's word 0 (the block has room), none while a long one's words
    /// arrive.
    #[test]
    fn a_short_wqe_reads_words_0_to_4_a_long_one_5_to_7_in_a_second_read() {
        let mut uut = WqeFetch::new();
        uut.connect_all();
        uut.s_handoff.next = true;
        let send = Wqe {
            opcode: WqeOpcode::Send as u8,
            length: 100,
            local_addr: 0x1000,
            ..Wqe::default()
        }
        .to_words();
        let atomic = Wqe {
            opcode: WqeOpcode::AtomicFetchAdd as u8,
            length: 8,
            compare_add: 5,
            swap: 6,
            reserved: 7,
            ..Wqe::default()
        }
        .to_words();
        let mut done_at = vec![];
        for (words, addr) in [(send, 0x2000u32), (atomic, 0x3040)] {
            let short = words == send;
            uut.s_fetch_valid.next = true;
            uut.s_fetch_addr.next = (addr as u64).to_bits();
            uut.m_rd_req_ready.next = true;
            settle(&mut uut);
            assert!(uut.s_fetch_ready.val() && uut.m_rd_req_valid.val());
            assert_eq!(
                (
                    uut.m_rd_req_addr.val().to_u32(),
                    uut.m_rd_req_words.val().to_u32()
                ),
                (addr, 5)
            );
            tick(&mut uut);
            let n = if short { 5 } else { 8 };
            for (i, w) in words.iter().enumerate().take(n) {
                uut.s_rd_valid.next = true;
                uut.s_rd_data.next = w.to_bits();
                // A second fetch is offered while the long WQE's words arrive: not taken.
                // While the short one's arrive, the block has room from word 1 on.
                uut.s_fetch_valid.next = !short && i > 2;
                settle(&mut uut);
                assert!(uut.s_rd_ready.val(), "word {i}");
                assert_eq!(uut.s_fetch_ready.val(), short && i >= 1, "word {i}");
                // The read of words 5-7: shown in the clock of word 1 only (taken at once).
                assert_eq!(uut.m_rd_req_valid.val(), !short && i == 1, "word {i}");
                if uut.m_rd_req_valid.val() {
                    assert_eq!(
                        (
                            uut.m_rd_req_addr.val().to_u32(),
                            uut.m_rd_req_words.val().to_u32()
                        ),
                        (addr + 40, 3)
                    );
                }
                if uut.m_wqe_done.val() {
                    done_at.push(i);
                }
                assert!(uut.m_draining.val(), "word {i}");
                assert_eq!(uut.m_wqe_done.val(), i + 1 == n);
                tick(&mut uut);
            }
            uut.s_rd_valid.next = false;
            uut.s_fetch_valid.next = false;
            settle(&mut uut);
            assert!(!uut.m_draining.val() && uut.s_fetch_ready.val());
            assert!(!uut.s_rd_ready.val());
            if short {
                assert_eq!(uut.m_wqe.val().local_addr.to_u32(), 0x1000);
                assert_eq!(uut.m_wqe.val().length.to_u32(), 100);
            }
        }
        assert_eq!(done_at, [4, 7]);
        assert_eq!(
            uut.m_wqe.val().opcode.to_u8(),
            WqeOpcode::AtomicFetchAdd as u8
        );
        assert_eq!(
            (
                uut.m_wqe.val().compare.to_u64(),
                uut.m_wqe.val().swap.to_u64(),
                uut.m_wqe.val().word7.to_u64()
            ),
            (5, 6, 7)
        );
    }

    /// A WQE's expected fields after its hand-off: words 0-4, and 5-7 if it uses them (a
    /// short WQE's `compare`, `swap` and `word7` are whatever the block held).
    fn expected(words: &[u64; 8], seen: Fields) -> Fields {
        let mut f = seen;
        for (i, w) in words.iter().enumerate().take(5) {
            f.take(i, *w);
        }
        if !f.short() {
            for (i, w) in words.iter().enumerate().skip(5) {
                f.take(i, *w);
            }
        }
        f
    }

    /// Two WQEs in the block: a user that requests fetches whenever the block takes them
    /// and hands WQEs off late and at random; host memory with a random latency returns the
    /// reads in request order, with gaps. Every WQE is handed off in fetch order with its
    /// own words (a second read behind a long WQE's words 5-7 request, a hold register
    /// overwritten or read wrong, or a third WQE taken, fails). Returns (WQEs, clocks with
    /// two WQEs in the block).
    fn run_two(seed: u64, cycles: u64) -> (usize, usize, Vec<u64>) {
        let mut uut = WqeFetch::new();
        uut.connect_all();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // Host memory: words in request order with the clock they may come from.
        let mut data: VecDeque<(u64, u64)> = VecDeque::new();
        // The WQEs requested and not handed off, oldest first: (address, words, words to
        // come (5, or 8 for a long WQE), complete, words 5-7 asked for).
        let mut inside: VecDeque<(u32, [u64; 8], usize, bool, bool)> = VecDeque::new();
        let mut offer: Option<(u32, [u64; 8])> = None;
        let mut check: Option<[u64; 8]> = None;
        let (mut handed_off, mut two) = (0, 0);
        // Clocks in which a long WQE's word 4 arrives before its words 5-7 are asked for
        // (the read is taken this clock or later).
        let mut late = vec![];
        for cycle in 0..cycles {
            let p_take = [0.9, 0.2, 0.5][(cycle / 700) as usize % 3];
            let latency_max = [2, 6, 14][(cycle / 1100) as usize % 3];
            if offer.is_none() && rng.gen_bool(0.7) {
                offer = Some((rng.gen::<u32>() & !7, random_wqe_words(&mut rng)));
            }
            let req_ready = rng.gen_bool(0.8);
            let beat = data
                .front()
                .filter(|(_, at)| *at <= cycle && rng.gen_bool(0.85))
                .map(|(w, _)| *w);
            uut.s_fetch_valid.next = offer.is_some();
            uut.s_fetch_addr.next = (offer.map_or(0, |(a, _)| a) as u64).to_bits();
            uut.m_rd_req_ready.next = req_ready;
            uut.s_rd_valid.next = beat.is_some();
            uut.s_rd_data.next = beat.unwrap_or(0).to_bits();
            uut.s_handoff.next = false;
            settle(&mut uut);
            // The copy of the WQE handed off last clock.
            if let Some(words) = check.take() {
                let got = Fields::of(&uut);
                assert_eq!(got, expected(&words, got), "hand-off at clock {cycle}");
            }
            let done = uut.m_wqe_done.val();
            let oldest_complete = inside.front().is_some_and(|w| w.3)
                || (done && inside.front().is_some_and(|w| w.2 == 1));
            let handoff = oldest_complete && rng.gen_bool(p_take);
            uut.s_handoff.next = handoff;
            settle(&mut uut);
            // A beat taken: the next word of the first WQE whose words are awaited.
            if beat.is_some() && uut.s_rd_ready.val() {
                data.pop_front();
                let w = inside
                    .iter_mut()
                    .find(|w| w.2 > 0)
                    .expect("a beat for a WQE");
                let mut f = Fields::default();
                f.take(0, w.1[0]);
                if !f.short() && w.2 == 4 && !w.4 {
                    late.push(cycle);
                }
                w.2 -= 1;
                assert_eq!(done, w.2 == 0, "done at clock {cycle}");
                w.3 = w.2 == 0;
            } else {
                assert!(!done, "done without a beat at clock {cycle}");
            }
            if uut.m_rd_req_valid.val() && req_ready {
                let addr = uut.m_rd_req_addr.val().to_u32();
                let n = uut.m_rd_req_words.val().to_u32() as usize;
                let at = cycle + rng.gen_range(1..=latency_max);
                let at = data.back().map_or(at, |(_, b)| at.max(*b));
                if n == 5 {
                    let (a, words) = offer.take().expect("a fetch offered");
                    assert_eq!(addr, a, "fetch address at clock {cycle}");
                    assert!(uut.s_fetch_ready.val());
                    for w in words.iter().take(5) {
                        data.push_back((*w, at));
                    }
                    let mut f = Fields::default();
                    f.take(0, words[0]);
                    inside.push_back((a, words, if f.short() { 5 } else { 8 }, false, false));
                    assert!(inside.len() <= 2, "a third WQE taken at clock {cycle}");
                } else {
                    assert_eq!(n, 3);
                    // Words 5-7 of the WQE whose words are arriving: none of a later one
                    // is asked for yet.
                    let w = inside.iter_mut().find(|w| w.2 > 0).unwrap();
                    assert_eq!(addr, w.0 + 40, "second read at clock {cycle}");
                    assert!(
                        w.2 > 0 && !w.4,
                        "words 5-7 asked for twice at clock {cycle}"
                    );
                    w.4 = true;
                    for i in 5..8 {
                        data.push_back((w.1[i], at));
                    }
                }
            }
            if handoff {
                let (_, words, _, _, _) = inside.pop_front().unwrap();
                check = Some(words);
                handed_off += 1;
            }
            two += (inside.len() == 2) as usize;
            tick(&mut uut);
        }
        (handed_off, two, late)
    }

    #[test]
    fn two_wqes_in_the_block_are_handed_off_in_order_with_their_own_words() {
        let mut late_reads = 0;
        for seed in 1..=3 {
            let (handed_off, two, late) = run_two(seed, 6_000);
            eprintln!(
                "seed {seed}: {handed_off} WQEs, {two} clocks with two, {} long WQEs' word 4 before their words 5-7 were asked for (first at clock {:?})",
                late.len(),
                late.first()
            );
            assert!(
                handed_off > 300 && two > 1000,
                "seed {seed}: {handed_off}, {two}"
            );
            late_reads += late.len();
        }
        // The case where words 5-7 are asked for only after word 4 arrived (a long DMA
        // back-pressure) is covered.
        assert!(late_reads > 0);
    }
}
