//! CRC-32/ISO-HDLC (zlib, Ethernet) at 8 bytes per clock.
//!
//! - [`Crc32`] (`checker.rs`): with a byte-enable on the last word.
//! - [`Crc32Prepad`]: for messages whose length is known when they start.
//! - [`Crc32Step`]: the XOR network of one 8-byte word.
//! - [`Crc32Unshift`]: removes trailing zero bytes from a raw CRC register.

pub mod checker;
pub mod prepad;
pub mod step;
pub mod unshift;

pub use checker::{Crc32, CRC32_INIT};
pub use prepad::Crc32Prepad;
pub use step::Crc32Step;
pub use unshift::Crc32Unshift;
