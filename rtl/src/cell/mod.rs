//! The cell path: the byte layout of a cell on the network port, and the blocks that cut
//! messages into cells and check and reassemble them (source document 002;
//! `docs/cell-format.md`).
//!
//! - [`format`]: the layout (constants, software encoder and decoder, reassembly model).
//! - [`CellSegmenter`]: message → cells, with cell and packet CRCs.
//! - [`CellReassembler`]: cells → checked payload, cell by cell; its children
//!   [`CellPosition`] (where the input stands in a cell), [`CellChecks`] (the verdict),
//!   [`CellBuffer`] (the payload store) and [`OutcomeSender`] (the output side).
//! - [`OutcomeSlice`]: the register slice between the reassembler's outcome and the receive
//!   engine in the NIC top, with the outcome's header decoded ([`crate::common::OutcomeClass`]).
//! - [`CellDatapath`]: segmenter → link → reassembler, the loopback of the demos and benches.
//!
//! Random messages and cell-stream faults for tests are `nic_model::cell_faults`.

pub mod cell_buffer;
pub mod cell_checks;
pub mod cell_position;
pub mod datapath;
pub mod format;
pub mod outcome_sender;
pub mod outcome_slice;
pub mod reassembler;
pub mod segmenter;

pub use cell_buffer::CellBuffer;
pub use cell_checks::CellChecks;
pub use cell_position::CellPosition;
pub use datapath::CellDatapath;
pub use outcome_sender::OutcomeSender;
pub use outcome_slice::OutcomeSlice;
pub use reassembler::CellReassembler;
pub use segmenter::CellSegmenter;
