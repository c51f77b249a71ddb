//! The optional hardware translation and protection table (source document 001).
//!
//! - [`Tpt`] (`table.rs`): registered memory regions, checked and translated for incoming
//!   RDMA requests, with CSR management and the exception queue.

pub mod table;

pub use table::Tpt;
