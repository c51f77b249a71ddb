//! `TptTable`: synthesis and parameter checks. Its behaviour through the parent's ports
//! (commands, read-back, the reset sweep, lookups racing commands) is checked against the
//! plain-Rust model of the whole table in `rtl/src/tpt/tests.rs`.

use nic_rtl::tpt::TptTable;
use rust_hdl::prelude::*;

#[test]
fn synthesises() {
    for entries in [256, 1024] {
        let mut uut = TptTable::new(entries);
        uut.connect_all();
        yosys_validate(
            &format!("nic_rtl_tpt_table_{entries}"),
            &generate_verilog(&uut),
        )
        .expect("yosys accepts TptTable");
    }
}

#[test]
#[should_panic(expected = "TptTable: entries must be a power of two between 16 and 4096, got 8")]
fn rejects_too_few_entries() {
    TptTable::new(8);
}

#[test]
#[should_panic(expected = "TptTable: entries must be a power of two between 16 and 4096, got 8192")]
fn rejects_too_many_entries() {
    TptTable::new(8192);
}
