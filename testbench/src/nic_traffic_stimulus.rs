//! The recorded stimulus of a NIC top: two NICs back to back ([`NicPair`]) carrying
//! seeded random work requests of every opcode on every queue pair, with host memory
//! that stalls at random; NIC 0's inputs, cycle by cycle, are the stimulus.
//!
//! The hosts configure their NICs through the CSRs first (a few hundred cycles), so
//! traffic starts early enough for a short replay window to carry some.

use crate::bench::Recording;
use crate::nic_pair::{NicPair, DATA_AREA};
use nic_abi::{csr, Rqe, Wqe, WqeOpcode};
use nic_cosim::host_memory::HostMemoryTiming;
use nic_cosim::{NicTopInputs, NicTopOutputs, Stepper};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Queue pairs the traffic uses (every NIC top has at least this many).
pub const TRAFFIC_QUEUE_PAIRS: usize = 4;

/// Work requests outstanding per NIC at most.
const OUTSTANDING: usize = 6;

/// Responder buffers start here in the remote host's memory.
const REMOTE_AREA: u32 = DATA_AREA + 0x4_0000;

/// Run `nics` (NIC 0 and NIC 1, back to back) for `cycles` cycles of random traffic both
/// ways (seeded with `seed`) and return NIC 0's inputs of every cycle.
pub fn record_nic_traffic<S>(nics: [S; 2], cycles: usize, seed: u64) -> Vec<NicTopInputs>
where
    S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>,
{
    let recorded = nics.map(|inner| Recording {
        inner,
        inputs: Vec::with_capacity(cycles),
    });
    let timing = HostMemoryTiming {
        latency: 6,
        stall: 0.2,
        seed,
    };
    let mut pair = NicPair::new(recorded, TRAFFIC_QUEUE_PAIRS, timing, 4);
    let enable = csr::ENABLE_SEND_RECV | csr::ENABLE_RDMA;
    pair.hosts[0].configure(1, enable, 100);
    pair.hosts[1].configure(0, enable, 5000);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut posted = [0usize; 2];
    while pair.hosts[0].nic.inputs.len() < cycles {
        for (n, count) in posted.iter_mut().enumerate() {
            if *count < pair.hosts[n].completions.len() + OUTSTANDING {
                post_random(&mut pair, n, *count as u64, &mut rng);
                *count += 1;
            }
        }
        pair.run_until(16, |_| false).ok();
    }
    let mut inputs = std::mem::take(&mut pair.hosts[0].nic.inputs);
    inputs.truncate(cycles);
    inputs
}

/// Post one random work request from NIC `n` to the other NIC, with a receive there
/// when it needs one: any opcode, 0 to 699 bytes (atomics 8), on one of the first
/// [`TRAFFIC_QUEUE_PAIRS`] queue pairs, buffers chosen by `wr_id`.
pub fn post_random<S>(pair: &mut NicPair<S>, n: usize, wr_id: u64, rng: &mut ChaCha8Rng)
where
    S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>,
{
    let op = WqeOpcode::ALL[rng.gen_range(0..WqeOpcode::ALL.len())];
    let length = if op.is_atomic() {
        8
    } else {
        rng.gen_range(0..700)
    };
    let qp = rng.gen_range(0..TRAFFIC_QUEUE_PAIRS);
    let remote = REMOTE_AREA + (wr_id as u32 % 64) * 0x800;
    if op.consumes_receive() {
        pair.hosts[1 - n].post_receive(
            qp,
            &Rqe {
                buffer_addr: remote,
                buffer_length: 0x800,
                wr_id: 0x1000 + wr_id,
            },
        );
    }
    pair.hosts[n].post_send(
        qp,
        &Wqe {
            opcode: op as u8,
            length,
            wr_id,
            local_addr: DATA_AREA + (wr_id as u32 % 64) * 0x800,
            remote_vaddr: remote as u64,
            ..Default::default()
        },
    );
}
