use rust_hdl::prelude::*;
fn main() {
    let mut c = nic_rtl::Crc32::default();
    c.connect_all();
    println!("{}", generate_verilog(&c));
}
