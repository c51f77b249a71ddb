//! Seeded random inputs for any co-simulated block that honour its valid/ready
//! handshakes, found from the port names alone:
//!
//! - `reset` is high for the first [`RESET_CYCLES`] cycles, then low;
//! - an input `<p>valid` with an output `<p>ready` is a source channel: valid rises at
//!   random, and once up it stays up, with its payload (the other inputs named `<p>…`)
//!   unchanged, until the block takes it (ready high in the same cycle);
//! - an input `<p>ready` with an output `<p>valid` is a sink: ready is high at random
//!   (three cycles in four);
//! - `cfg_…` inputs are configuration: random once, then held;
//! - every other input is random every cycle.
//!
//! [`drive_recorded`] runs a block under this driver and returns the inputs it gave, the
//! recorded stimulus of the three-simulator replays ([`crate::three_simulators`]).

use nic_cosim::{PortStruct, Stepper};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Cycles `reset` is held high at the start.
pub const RESET_CYCLES: u64 = 3;

/// What one input port does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Reset,
    Config,
    /// A source channel's valid; the index of the block's matching `ready` output.
    SourceValid {
        ready: usize,
    },
    /// Payload of the source channel whose valid is input `valid`.
    Payload {
        valid: usize,
    },
    SinkReady,
    Free,
}

/// The roles of `I`'s ports against block outputs `O`.
fn roles<I: PortStruct, O: PortStruct>() -> Vec<Role> {
    let output = |name: &str| O::PORTS.iter().position(|p| p.name == name);
    let source_valid = |name: &str| {
        name.strip_suffix("valid")
            .and_then(|prefix| output(&format!("{prefix}ready")))
    };
    I::PORTS
        .iter()
        .map(|p| {
            if p.name == "reset" {
                return Role::Reset;
            }
            if let Some(ready) = source_valid(p.name) {
                return Role::SourceValid { ready };
            }
            if let Some(prefix) = p.name.strip_suffix("ready") {
                if output(&format!("{prefix}valid")).is_some() {
                    return Role::SinkReady;
                }
            }
            // The longest channel prefix this port belongs to (`s_ack_psn`), or the channel's
            // bundle itself (`s_ack`, a LogicStruct port beside `s_ack_valid`).
            let channel = I::PORTS
                .iter()
                .enumerate()
                .filter(|(_, v)| source_valid(v.name).is_some())
                .filter_map(|(k, v)| {
                    let prefix = v.name.strip_suffix("valid")?;
                    let bundle = prefix.strip_suffix('_') == Some(p.name);
                    (p.name.starts_with(prefix) || bundle).then_some((prefix.len(), k))
                })
                .max();
            if let Some((_, valid)) = channel {
                return Role::Payload { valid };
            }
            if p.name.starts_with("cfg_") {
                return Role::Config;
            }
            Role::Free
        })
        .collect()
}

/// The driver's state: the inputs of the cycle to come.
pub struct HandshakeDriver<I: PortStruct, O: PortStruct> {
    rng: ChaCha8Rng,
    roles: Vec<Role>,
    inputs: I,
    cycle: u64,
    _outputs: std::marker::PhantomData<O>,
}

impl<I: PortStruct, O: PortStruct> HandshakeDriver<I, O> {
    pub fn new(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let roles = roles::<I, O>();
        let mut inputs = I::random(&mut rng);
        for (k, role) in roles.iter().enumerate() {
            match role {
                Role::Reset => inputs.set_port_words(k, &[1]),
                Role::SourceValid { .. } => inputs.set_port_words(k, &[0]),
                _ => {}
            }
        }
        HandshakeDriver {
            rng,
            roles,
            inputs,
            cycle: 0,
            _outputs: std::marker::PhantomData,
        }
    }

    /// The inputs of the next cycle.
    pub fn inputs(&self) -> &I {
        &self.inputs
    }

    /// The block answered the current inputs with `outputs`: choose the next cycle's.
    pub fn advance(&mut self, outputs: &O) {
        self.cycle += 1;
        let fresh = I::random(&mut self.rng);
        let high = |v: &I, k: usize| v.port_words(k).first().copied().unwrap_or(0) & 1 != 0;
        // Which source channels are still waiting to be taken (their payload holds).
        let waiting: Vec<bool> = self
            .roles
            .iter()
            .enumerate()
            .map(|(k, role)| match role {
                Role::SourceValid { ready } => {
                    high(&self.inputs, k) && !high_output(outputs, *ready)
                }
                _ => false,
            })
            .collect();
        let mut next = self.inputs;
        for (k, role) in self.roles.iter().enumerate() {
            match *role {
                Role::Reset => next.set_port_words(k, &[(self.cycle < RESET_CYCLES) as u64]),
                Role::Config => {}
                Role::SourceValid { .. } if waiting[k] => {}
                Role::SourceValid { .. } => {
                    let valid = self.cycle >= RESET_CYCLES && self.rng.gen_bool(0.5);
                    next.set_port_words(k, &[valid as u64]);
                }
                Role::Payload { valid } if waiting[valid] => {}
                Role::SinkReady => next.set_port_words(k, &[self.rng.gen_bool(0.75) as u64]),
                Role::Payload { .. } | Role::Free => {
                    next.set_port_words(k, &fresh.port_words(k));
                }
            }
        }
        self.inputs = next;
    }
}

fn high_output<O: PortStruct>(outputs: &O, index: usize) -> bool {
    outputs.port_words(index).first().copied().unwrap_or(0) & 1 != 0
}

/// Step `block` for `cycles` cycles under a [`HandshakeDriver`] seeded with `seed`;
/// returns the inputs given, cycle by cycle.
pub fn drive_recorded<S>(block: &mut S, cycles: usize, seed: u64) -> Vec<S::Inputs>
where
    S: Stepper,
    S::Inputs: PortStruct,
    S::Outputs: PortStruct,
{
    let mut driver = HandshakeDriver::<S::Inputs, S::Outputs>::new(seed);
    let mut recorded = Vec::with_capacity(cycles);
    for _ in 0..cycles {
        let inputs = *driver.inputs();
        let outputs = block.step(&inputs);
        recorded.push(inputs);
        driver.advance(&outputs);
    }
    recorded
}

#[cfg(test)]
mod tests {
    use super::*;
    use nic_cosim::{AckEventQueueInputs, AckEventQueueOutputs, Crc32Inputs, Crc32Outputs};

    #[test]
    fn roles_follow_the_port_names() {
        let r = roles::<AckEventQueueInputs, AckEventQueueOutputs>();
        let names: Vec<&str> = AckEventQueueInputs::PORTS.iter().map(|p| p.name).collect();
        let role = |n: &str| r[names.iter().position(|x| *x == n).unwrap()];
        let valid = names.iter().position(|x| *x == "s_ack_valid").unwrap();
        assert_eq!(role("reset"), Role::Reset);
        assert!(matches!(role("s_ack_valid"), Role::SourceValid { .. }));
        assert_eq!(role("s_ack"), Role::Payload { valid });
        assert_eq!(role("m_ack_ready"), Role::SinkReady);
        let crc = roles::<Crc32Inputs, Crc32Outputs>();
        assert!(crc.iter().all(|r| *r == Role::Free), "{crc:?}");
    }

    #[test]
    fn a_waiting_payload_holds_until_taken() {
        let mut d = HandshakeDriver::<AckEventQueueInputs, AckEventQueueOutputs>::new(5);
        let refused = AckEventQueueOutputs::default();
        let mut held = None;
        for _ in 0..50 {
            let before = *d.inputs();
            d.advance(&refused);
            if before.s_ack_valid {
                assert_eq!(d.inputs().s_ack, before.s_ack);
                assert!(d.inputs().s_ack_valid);
                held = Some(before.s_ack);
            }
        }
        assert!(held.is_some(), "valid rose within 50 cycles");
        let taken = AckEventQueueOutputs {
            s_ack_ready: true,
            ..Default::default()
        };
        d.advance(&taken);
        assert!(!d.inputs().reset);
    }
}
