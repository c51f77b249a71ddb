//! Runs, golden models and scoreboards of the co-simulation.
//!
//! The runners are generic over [`nic_cosim::Stepper`], so the same stimulus and the same
//! scoreboards run on the Verilator model and on RustHDL direct stepping.

pub mod bench;
pub mod control_trace;
pub mod datapath;
pub mod faults;
pub mod handshake_driver;
pub mod local_work;
pub mod markdown;
pub mod memory_verdict;
pub mod message_rate;
pub mod nic_bench;
pub mod nic_pair;
pub mod nic_traffic_stimulus;
pub mod paired;
pub mod pools_bench;
pub mod regcache_bench;
pub mod rejoin_bench;
pub mod scenario;
pub mod scenario_run;
pub mod scoreboard;
pub mod soak;
pub mod split_driver;
pub mod three_simulators;
pub mod wave_markers;
pub mod workload;
