//! `Crc32Prepad`: CRC-32/ISO-HDLC (zlib) of a message whose length is known when it starts,
//! 8 bytes per clock, without a byte-enable network.
//!
//! A message of `L` bytes ends in a partial word when `L % 8 != 0`. [`crate::Crc32`]
//! handles that word by zero-masking it and un-shifting the padding afterwards (a 770-LUT
//! selection among seven 32 x 32 matrices). This block puts the padding in front instead:
//! it starts from the raw register value that `pad = (-L) mod 8` zero bytes turn into the
//! initial value (`Z^-pad` of all ones, one of eight constants), and feeds the message
//! shifted up by `pad` bytes (each word's low bytes are the previous word's top bytes).
//! The shifted stream is `pad` zero bytes plus the message, a whole number of words, so one
//! 8-byte [`Crc32Step`] network does all of it and no byte enable or un-shift is needed:
//! the byte shifter is a three-stage rotator and a byte select (about 260 iCE40 LUTs, with
//! the constants) instead of the 770-LUT un-shift, paid with two 64-bit registers (the
//! shifted word, the previous word rotated).
//!
//! Ports:
//! - `clock` (in).
//! - `s_start` (in): a new message starts; `s_pad` (in, 3) is `(-L) mod 8` for its length
//!   `L` in bytes. May come with the message's first word (`s_valid`).
//! - `s_valid` (in), `s_data` (in, 64): one message word, bytes little-endian (byte 0 in
//!   bits 7:0 first). Every word is 8 bytes except the last, whose `8 - pad` low bytes are
//!   the message's (the bytes above them are ignored, whatever they hold).
//! - `crc` (out, 32): CRC of the message (already inverted, what zlib's `crc32` returns),
//!   once all its words are in. Combinational from the CRC register.
//!
//! Latency: a word absorbed at edge t shows in `crc` after edge t+1 (the shifted word is
//! registered, then absorbed), as [`crate::Crc32::with_byte_enable`]. A message of 0 bytes
//! reads 0 after `s_start`'s edge. Throughput: 8 bytes per clock, no gaps needed.
//! Limits: the words given must be exactly `ceil(L / 8)`; another `s_start` discards a word
//! still in the shift register (start the next message at least one clock after the last
//! word). Follows the prepended-zeros identity of linear CRCs (processing zero bytes from
//! the register value `Z^-pad(init)` yields `init`).

use crate::crc32::step::Crc32Step;
use crate::crc32::unshift::crc32_unshift;
use crate::crc32::CRC32_INIT;
use crate::sim::ClockedBlock;
use rust_hdl::prelude::*;

/// The raw register value from which `pad` zero bytes lead to the initial value.
pub fn prepad_init(pad: usize) -> u32 {
    crc32_unshift(CRC32_INIT, pad)
}

#[derive(LogicBlock)]
pub struct Crc32Prepad {
    pub clock: Signal<In, Clock>,
    pub s_start: Signal<In, Bit>,
    pub s_pad: Signal<In, Bits<3>>,
    pub s_valid: Signal<In, Bit>,
    pub s_data: Signal<In, Bits<64>>,
    pub crc: Signal<Out, Bits<32>>,
    state_reg: DFF<Bits<32>>,
    pad_reg: DFF<Bits<3>>,
    /// The previous word of the message rotated left by `pad` bytes (its top `pad` bytes,
    /// now at the bottom, go into the next shifted word).
    prev: DFF<Bits<64>>,
    /// The shifted word waiting to be absorbed.
    shifted: DFF<Bits<64>>,
    shifted_valid: DFF<Bit>,
    step: Crc32Step,
    pad: Signal<Local, Bits<3>>,
    carry: Signal<Local, Bits<64>>,
    rot_1: Signal<Local, Bits<64>>,
    rot_2: Signal<Local, Bits<64>>,
    rot: Signal<Local, Bits<64>>,
    /// Bytes `pad..8` set: where the shifted word takes the new word's bytes.
    new_bytes: Signal<Local, Bits<64>>,
    all_ones: Constant<Bits<64>>,
    init_value: Signal<Local, Bits<32>>,
    init_0: Constant<Bits<32>>,
    init_1: Constant<Bits<32>>,
    init_2: Constant<Bits<32>>,
    init_3: Constant<Bits<32>>,
    init_4: Constant<Bits<32>>,
    init_5: Constant<Bits<32>>,
    init_6: Constant<Bits<32>>,
    init_7: Constant<Bits<32>>,
}

impl Default for Crc32Prepad {
    fn default() -> Self {
        let k = |pad| Constant::new(prepad_init(pad).to_bits());
        Crc32Prepad {
            clock: Default::default(),
            s_start: Default::default(),
            s_pad: Default::default(),
            s_valid: Default::default(),
            s_data: Default::default(),
            crc: Default::default(),
            state_reg: Default::default(),
            pad_reg: Default::default(),
            prev: Default::default(),
            shifted: Default::default(),
            shifted_valid: Default::default(),
            step: Default::default(),
            pad: Default::default(),
            carry: Default::default(),
            rot_1: Default::default(),
            rot_2: Default::default(),
            rot: Default::default(),
            new_bytes: Default::default(),
            all_ones: Constant::new(u64::MAX.to_bits()),
            init_value: Default::default(),
            init_0: k(0),
            init_1: k(1),
            init_2: k(2),
            init_3: k(3),
            init_4: k(4),
            init_5: k(5),
            init_6: k(6),
            init_7: k(7),
        }
    }
}

impl Logic for Crc32Prepad {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state_reg,
            pad_reg,
            prev,
            shifted,
            shifted_valid
        );
        // The message's pad and previous word: a starting message has no previous word.
        self.pad.next = self.pad_reg.q.val();
        self.carry.next = self.prev.q.val();
        if self.s_start.val() {
            self.pad.next = self.s_pad.val();
            self.carry.next = 0.into();
            self.pad_reg.d.next = self.s_pad.val();
            self.prev.d.next = 0.into();
        }
        self.init_value.next = self.init_0.val();
        if self.s_pad.val() == 1 {
            self.init_value.next = self.init_1.val();
        }
        if self.s_pad.val() == 2 {
            self.init_value.next = self.init_2.val();
        }
        if self.s_pad.val() == 3 {
            self.init_value.next = self.init_3.val();
        }
        if self.s_pad.val() == 4 {
            self.init_value.next = self.init_4.val();
        }
        if self.s_pad.val() == 5 {
            self.init_value.next = self.init_5.val();
        }
        if self.s_pad.val() == 6 {
            self.init_value.next = self.init_6.val();
        }
        if self.s_pad.val() == 7 {
            self.init_value.next = self.init_7.val();
        }
        // The word shifted up by `pad` bytes, its low bytes from the previous word: both
        // rotated left by `pad` bytes (a three-stage rotator; the previous word is kept
        // rotated), then byte k from the new word when k >= pad, else from the previous.
        self.rot_1.next = self.s_data.val();
        if self.pad.val().get_bit(0) {
            self.rot_1.next = (self.s_data.val() << 8) | (self.s_data.val() >> 56);
        }
        self.rot_2.next = self.rot_1.val();
        if self.pad.val().get_bit(1) {
            self.rot_2.next = (self.rot_1.val() << 16) | (self.rot_1.val() >> 48);
        }
        self.rot.next = self.rot_2.val();
        if self.pad.val().get_bit(2) {
            self.rot.next = (self.rot_2.val() << 32) | (self.rot_2.val() >> 32);
        }
        self.new_bytes.next = self.all_ones.val() << (bit_cast::<7, 3>(self.pad.val()) << 3);
        self.shifted_valid.d.next = self.s_valid.val();
        if self.s_valid.val() {
            self.prev.d.next = self.rot.val();
            self.shifted.d.next = (self.rot.val() & self.new_bytes.val())
                | (self.carry.val() & !self.new_bytes.val());
        }
        // Absorb the shifted word; a start replaces the register by its initial value.
        self.step.crc_in.next = self.state_reg.q.val();
        self.step.data.next = self.shifted.q.val();
        self.step.restart.next = false;
        if self.shifted_valid.q.val() {
            self.state_reg.d.next = self.step.crc_out.val();
        }
        if self.s_start.val() {
            self.state_reg.d.next = self.init_value.val();
        }
        self.crc.next = !self.state_reg.q.val();
    }
}

impl ClockedBlock for Crc32Prepad {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}
