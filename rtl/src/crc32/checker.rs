//! `Crc32`: CRC-32/ISO-HDLC (zlib, Ethernet) over 8 bytes per clock.
//!
//! Ports:
//! - `clock` (in).
//! - `s_clear` (in): start a new CRC. With `s_valid` the word is the first of the new
//!   CRC; alone it just resets the register to all ones.
//! - `s_valid` (in): absorb `s_data` this clock.
//! - `s_data` (in, 64): bytes in little-endian order (byte 0 = bits 7:0 comes first).
//! - `s_bytes` (in, 4): valid low bytes of `s_data`, the byte-enable of the last word of a
//!   message: 1..=8 (9..=15 act as 8; 0 leaves the CRC unchanged). Bytes above the count
//!   are ignored. Only with [`Crc32::with_byte_enable`]; [`Crc32::full_words`] always takes 8.
//! - `crc` (out, 32): CRC of every byte absorbed since the last clear, already inverted
//!   (the value zlib's `crc32` returns). Registered.
//! - `crc_next` (out, 32): [`Crc32::full_words`] only: the CRC including this clock's
//!   word (combinational through the XOR network), for a CRC word sent right after the
//!   last word it covers.
//!
//! How: the data is zero-masked to the valid bytes and run through one 8-byte
//! [`Crc32Step`] network (the register of the zero-padded stream); [`Crc32Unshift`] then
//! removes the padding from the result, in the clock after. Eight parallel byte-count
//! networks (the classic 64-bit Ethernet CRC) cost about 2000 iCE40 LUTs at 91 MHz; this
//! costs about 1300 LUTs at 105 MHz on HX8K, and about 530 without byte enables. When the
//! message length is known at its start, [`crate::Crc32Prepad`] does without byte enables
//! (890 LUTs, 133 MHz): the NIC's packet CRCs use it.
//!
//! Latency: `full_words`: a word absorbed at edge t shows in `crc` after edge t.
//! `with_byte_enable`: after edge t+1 (the un-shift is registered).
//! Throughput: 8 bytes per clock, no gaps.
//! Limit: a word with fewer than 8 bytes ends the CRC; words absorbed after it without a
//! clear extend the zero-padded stream.

use crate::crc32::step::Crc32Step;
use crate::crc32::unshift::Crc32Unshift;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// Initial (and reset) value of the raw CRC register.
pub const CRC32_INIT: u32 = 0xFFFF_FFFF;

#[derive(LogicBlock)]
pub struct Crc32 {
    pub clock: Signal<In, Clock>,
    pub s_clear: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_data: Signal<In, Bits<64>>,
    pub s_bytes: Signal<In, Bits<4>>,
    pub crc: Signal<Out, Bits<32>>,
    pub crc_next: Signal<Out, Bits<32>>,
    state_reg: DFF<Bits<32>>,
    pad_reg: DFF<Bits<3>>,
    crc_reg: DFF<Bits<32>>,
    step: Crc32Step,
    unshift: Crc32Unshift,
    masked: Signal<Local, Bits<64>>,
    state_next: Signal<Local, Bits<32>>,
    pad: Signal<Local, Bits<3>>,
    init: Constant<Bits<32>>,
    all_ones: Constant<Bits<64>>,
    byte_enable: Constant<Bit>,
}

impl Crc32 {
    fn build(byte_enable: bool) -> Self {
        Crc32 {
            clock: Default::default(),
            s_clear: Default::default(),
            s_valid: Default::default(),
            s_data: Default::default(),
            s_bytes: Default::default(),
            crc: Default::default(),
            crc_next: Default::default(),
            state_reg: Default::default(),
            pad_reg: Default::default(),
            crc_reg: Default::default(),
            step: Default::default(),
            unshift: Default::default(),
            masked: Default::default(),
            state_next: Default::default(),
            pad: Default::default(),
            init: Constant::new(CRC32_INIT.to_bits()),
            all_ones: Constant::new(u64::MAX.to_bits()),
            byte_enable: Constant::new(byte_enable),
        }
    }

    /// 8 bytes every word; `s_bytes` only distinguishes 0 (skip) from non-zero. Latency 1.
    pub fn full_words() -> Self {
        Self::build(false)
    }

    /// Honours `s_bytes` on the last word of a message. Latency 2.
    pub fn with_byte_enable() -> Self {
        Self::build(true)
    }
}

impl Default for Crc32 {
    fn default() -> Self {
        Self::with_byte_enable()
    }
}

impl Logic for Crc32 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state_reg, pad_reg, crc_reg);
        // Zero bytes to pad: (8 - s_bytes) mod 8 for 1..=7 valid bytes, else none.
        // (-x) mod 8 bit by bit, so no carry chain sits on the data path.
        self.pad.next = 0.into();
        if self.byte_enable.val() & (self.s_bytes.val() < 8) {
            self.pad.next = bit_cast::<3, 1>(self.s_bytes.val().get_bit(0).into())
                | (bit_cast::<3, 1>(
                    (self.s_bytes.val().get_bit(1) ^ self.s_bytes.val().get_bit(0)).into(),
                ) << 1)
                | (bit_cast::<3, 1>(
                    (self.s_bytes.val().get_bit(2)
                        ^ (self.s_bytes.val().get_bit(1) | self.s_bytes.val().get_bit(0)))
                    .into(),
                ) << 2);
        }
        self.masked.next =
            self.s_data.val() & (self.all_ones.val() >> (bit_cast::<7, 3>(self.pad.val()) << 3));
        self.step.data.next = self.masked.val();
        self.step.crc_in.next = self.state_reg.q.val();
        self.step.restart.next = self.s_clear.val();
        self.state_next.next = self.state_reg.q.val();
        if self.s_clear.val() {
            self.state_next.next = self.init.val();
            self.pad_reg.d.next = 0.into();
        }
        if self.s_valid.val() & (self.s_bytes.val() != 0) {
            self.state_next.next = self.step.crc_out.val();
            self.pad_reg.d.next = self.pad.val();
        }
        self.state_reg.d.next = self.state_next.val();
        self.crc_next.next = !self.state_next.val();
        self.unshift.crc_in.next = self.state_reg.q.val();
        self.unshift.pad.next = self.pad_reg.q.val();
        self.crc_reg.d.next = !self.unshift.crc_out.val();
        self.crc.next = !self.state_reg.q.val();
        if self.byte_enable.val() {
            self.crc.next = self.crc_reg.q.val();
        }
    }
}

impl ClockedBlock for Crc32 {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
