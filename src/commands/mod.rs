//! One module per subcommand; each turns arguments into calls on the library crates.
pub mod agree;
pub mod bench;
pub mod cell;
pub mod check;
pub mod lint;
pub mod measurements;
pub mod plot;
pub mod pools;
pub mod regcache;
pub mod rejoin_bench;
pub mod scenario;
pub mod sim;
pub mod soak;
pub mod synth;
pub mod verilog;
pub mod waves;
