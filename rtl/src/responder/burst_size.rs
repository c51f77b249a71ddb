//! `BurstSize`: a READ response's payload word count and the size of its next DMA read
//! burst. A combinational child of [`ResponseGenerator`](super::ResponseGenerator), which
//! requests the payload in bursts of at most [`MAX_BURST_WORDS`] words, one at a time
//! (`docs/nic-blocks.md`, "DMA read client").
//!
//! Ports (no clock):
//! - `s_first`: the first burst, sized from `s_length` (32, the message's length in
//!   bytes); otherwise a later one, sized from `s_words_left` (32, the words not yet
//!   handed over, at least 2 when a later burst is asked for: the current word is the
//!   previous burst's last).
//! - `m_words` (32): `ceil(s_length / 8)`.
//! - `m_words_after` (32): `s_words_left - 1` (wrapping).
//! - `m_next_burst` (16): `min(m_words, MAX_BURST_WORDS)` when `s_first`, else
//!   `min(m_words_after, MAX_BURST_WORDS)`.
//!
//! Latency: combinational. Whether the words are fewer than `MAX_BURST_WORDS` is decided
//! on the inputs the count comes from, beside its adder rather than behind it: the first
//! burst's words are fewer when `s_length <= 8 * (MAX_BURST_WORDS - 1)`, a later burst's
//! when `s_words_left <= MAX_BURST_WORDS`.
//!
//! Limits: none (no parameters; `MAX_BURST_WORDS` is 8192, so one burst carries any
//! message up to 64 KiB).

use super::response_generator::MAX_BURST_WORDS;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct BurstSize {
    pub s_first: Signal<In, Bit>,
    pub s_length: Signal<In, Bits<32>>,
    pub s_words_left: Signal<In, Bits<32>>,
    pub m_words: Signal<Out, Bits<32>>,
    pub m_words_after: Signal<Out, Bits<32>>,
    pub m_next_burst: Signal<Out, Bits<16>>,
    words: Signal<Local, Bits<32>>,
    words_after: Signal<Local, Bits<32>>,
    /// The words the next burst is sized from, and whether they are fewer than
    /// `MAX_BURST_WORDS`.
    source: Signal<Local, Bits<32>>,
    short: Signal<Local, Bit>,
    max_burst: Constant<Bits<32>>,
    /// `MAX_BURST_WORDS + 1`.
    max_burst_plus_one: Constant<Bits<32>>,
    /// `8 * (MAX_BURST_WORDS - 1) + 1`: a length below it has fewer than
    /// `MAX_BURST_WORDS` words.
    short_length_limit: Constant<Bits<32>>,
}

impl BurstSize {
    pub fn new() -> Self {
        BurstSize {
            s_first: Default::default(),
            s_length: Default::default(),
            s_words_left: Default::default(),
            m_words: Default::default(),
            m_words_after: Default::default(),
            m_next_burst: Default::default(),
            words: Default::default(),
            words_after: Default::default(),
            source: Default::default(),
            short: Default::default(),
            max_burst: Constant::new(MAX_BURST_WORDS.to_bits()),
            max_burst_plus_one: Constant::new((MAX_BURST_WORDS + 1).to_bits()),
            short_length_limit: Constant::new((8 * (MAX_BURST_WORDS - 1) + 1).to_bits()),
        }
    }
}

impl Default for BurstSize {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for BurstSize {
    #[hdl_gen]
    fn update(&mut self) {
        self.words.next = self.s_length.val() >> 3;
        if self.s_length.val().get_bits::<3>(0).any() {
            self.words.next = (self.s_length.val() >> 3) + 1;
        }
        self.words_after.next = self.s_words_left.val() - 1;
        self.source.next = self.words_after.val();
        self.short.next = self.s_words_left.val() < self.max_burst_plus_one.val();
        if self.s_first.val() {
            self.source.next = self.words.val();
            self.short.next = self.s_length.val() < self.short_length_limit.val();
        }
        self.m_next_burst.next = bit_cast::<16, 32>(self.max_burst.val());
        if self.short.val() {
            self.m_next_burst.next = bit_cast::<16, 32>(self.source.val());
        }
        self.m_words.next = self.words.val();
        self.m_words_after.next = self.words_after.val();
    }
}
