//! Blocks the tests step directly: a 4-bit counter (also run through Verilator for
//! fixtures/counter_verilator.vcd.expect) and a block with enum, struct and wide signals.

use nic_waves::{settle, RustHdlVcd};
use rust_hdl::prelude::*;
use std::io::Write;

/// Half a clock period in ps (100 MHz clock).
pub const HALF_PERIOD_PS: u64 = 5_000;

/// 4-bit counter: `count` is the register, which adds 1 at each rising edge of
/// `clock` while `enable` is high, wrapping at 16.
#[derive(LogicBlock, Default)]
pub struct Counter {
    pub clock: Signal<In, Clock>,
    pub enable: Signal<In, Bit>,
    pub count: Signal<Out, Bits<4>>,
    counter: DFF<Bits<4>>,
}

impl Logic for Counter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, counter);
        if self.enable.val() {
            self.counter.d.next = self.counter.q.val() + 1;
        }
        self.count.next = self.counter.q.val();
    }
}

/// Step the counter directly for `enables.len()` cycles, sampling into `vcd` (if any)
/// at time 0, after each rising edge and after each falling edge. Cycle `k` rises at
/// `(2k+1)·HALF_PERIOD_PS` and falls at `(2k+2)·HALF_PERIOD_PS`; its `enable` is set
/// and settled just before the rising edge (so the VCD shows it changing at the edge).
pub fn run_counter<W: Write>(
    uut: &mut Counter,
    enables: &[bool],
    mut vcd: Option<&mut RustHdlVcd<W>>,
) {
    settle(uut);
    if let Some(v) = vcd.as_deref_mut() {
        v.sample(0, uut).unwrap();
    }
    for (k, &en) in enables.iter().enumerate() {
        let k = k as u64;
        uut.enable.next = en;
        settle(uut);
        uut.clock.next = Clock::from(true);
        settle(uut);
        if let Some(v) = vcd.as_deref_mut() {
            v.sample((2 * k + 1) * HALF_PERIOD_PS, uut).unwrap();
        }
        uut.clock.next = Clock::from(false);
        settle(uut);
        if let Some(v) = vcd.as_deref_mut() {
            v.sample((2 * k + 2) * HALF_PERIOD_PS, uut).unwrap();
        }
    }
}

/// A new counter, connected and checked as `Simulation` would.
pub fn new_counter() -> Counter {
    let mut uut = Counter::default();
    uut.connect_all();
    check_all(&uut).expect("counter passes RustHDL's checks");
    uut
}

/// The enable pattern used by the tests: on, except cycles 3, 4 and 9.
pub fn enable_pattern(cycles: usize) -> Vec<bool> {
    (0..cycles).map(|k| !matches!(k, 3 | 4 | 9)).collect()
}

/// States of [`Mixed`]; RustHDL writes enum-typed signals as VCD strings.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum Phase {
    Idle,
    Busy,
    Done,
}

/// A struct-valued signal; RustHDL writes one VCD variable per field (`status$phase`).
#[derive(Copy, Clone, Default, Debug, PartialEq, LogicStruct)]
pub struct Status {
    pub phase: Phase,
    pub flag: Bit,
    pub len: Bits<6>,
}

/// A block with the signal kinds the counter lacks: an enum state, a struct-valued
/// output, a 200-bit output. Simulation only (plain Rust `update`, no Verilog).
#[derive(LogicBlock, Default)]
pub struct Mixed {
    pub clock: Signal<In, Clock>,
    pub go: Signal<In, Bit>,
    pub status: Signal<Out, Status>,
    pub wide: Signal<Out, Bits<200>>,
    phase: DFF<Phase>,
    len: DFF<Bits<6>>,
}

impl Logic for Mixed {
    fn update(&mut self) {
        self.phase.clock.next = self.clock.val();
        self.len.clock.next = self.clock.val();
        self.phase.d.next = self.phase.q.val();
        self.len.d.next = self.len.q.val();
        match self.phase.q.val() {
            Phase::Idle => {
                if self.go.val() {
                    self.phase.d.next = Phase::Busy;
                }
            }
            Phase::Busy => {
                self.len.d.next = self.len.q.val() + 1;
                if self.len.q.val() == 2 {
                    self.phase.d.next = Phase::Done;
                }
            }
            Phase::Done => {
                self.phase.d.next = Phase::Idle;
                self.len.d.next = 0.into();
            }
        }
        self.status.next = Status {
            phase: self.phase.q.val(),
            flag: self.go.val(),
            len: self.len.q.val(),
        };
        self.wide.next = Bits::<200>::default()
            .replace_bit(199, self.phase.q.val() == Phase::Busy)
            .replace_bit(0, self.go.val());
    }
}

/// Step [`Mixed`] with `go` per cycle, sampling like [`run_counter`].
pub fn run_mixed<W: Write>(uut: &mut Mixed, gos: &[bool], vcd: &mut RustHdlVcd<W>) {
    settle(uut);
    vcd.sample(0, uut).unwrap();
    for (k, &go) in gos.iter().enumerate() {
        let k = k as u64;
        uut.go.next = go;
        settle(uut);
        uut.clock.next = Clock::from(true);
        settle(uut);
        vcd.sample((2 * k + 1) * HALF_PERIOD_PS, uut).unwrap();
        uut.clock.next = Clock::from(false);
        settle(uut);
        vcd.sample((2 * k + 2) * HALF_PERIOD_PS, uut).unwrap();
    }
}
