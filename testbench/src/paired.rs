//! [`Paired`]: two backends stepped with identical inputs, outputs compared every cycle.
//!
//! Unlike [`nic_cosim::lockstep`], which replays a fixed input sequence, `Paired` is itself
//! a [`Stepper`], so a reactive testbench (one that follows ready/valid handshakes) drives
//! both backends at once and any divergence is caught at the cycle it happens.

use nic_cosim::{CosimError, Stepper};
use std::fmt::Debug;
use std::path::Path;

/// First cycle at which the two backends disagreed.
#[derive(Clone, Debug)]
pub struct PairedDivergence<I, O> {
    pub cycle: u64,
    pub inputs: I,
    pub reference: O,
    pub candidate: O,
}

pub struct Paired<A: Stepper, B: Stepper<Inputs = A::Inputs, Outputs = A::Outputs>> {
    /// The reference (RustHDL stepping).
    pub reference: A,
    /// The model under comparison (Verilator).
    pub candidate: B,
    pub divergence: Option<PairedDivergence<A::Inputs, A::Outputs>>,
    pub cycles_compared: u64,
}

impl<A, B> Paired<A, B>
where
    A: Stepper,
    B: Stepper<Inputs = A::Inputs, Outputs = A::Outputs>,
{
    pub fn new(reference: A, candidate: B) -> Self {
        Paired {
            reference,
            candidate,
            divergence: None,
            cycles_compared: 0,
        }
    }
}

impl<A, B> Stepper for Paired<A, B>
where
    A: Stepper,
    B: Stepper<Inputs = A::Inputs, Outputs = A::Outputs>,
    A::Inputs: Clone + Debug,
    A::Outputs: PartialEq + Clone + Debug,
{
    type Inputs = A::Inputs;
    type Outputs = A::Outputs;

    /// Steps both; returns the reference's outputs and records the first divergence.
    fn step(&mut self, inputs: &Self::Inputs) -> Self::Outputs {
        let cycle = self.reference.cycle();
        let a = self.reference.step(inputs);
        let b = self.candidate.step(inputs);
        if a != b && self.divergence.is_none() {
            self.divergence = Some(PairedDivergence {
                cycle,
                inputs: inputs.clone(),
                reference: a.clone(),
                candidate: b,
            });
        }
        self.cycles_compared += 1;
        a
    }

    fn cycle(&self) -> u64 {
        self.reference.cycle()
    }

    fn open_trace(&mut self, path: &Path) -> Result<(), CosimError> {
        self.candidate.open_trace(path)
    }

    fn close_trace(&mut self) {
        self.candidate.close_trace();
    }
}
