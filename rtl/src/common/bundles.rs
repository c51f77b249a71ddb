//! Payload bundles of the NIC's handshakes, declared once: a handshake is `*_valid` /
//! `*_ready` plus one of these, carried as one RustHDL `LogicStruct` signal, so wiring a
//! block is one line per bundle and a field added here appears everywhere.
//!
//! Costs of a `LogicStruct` port (measured on `AckEventQueue`, recorded in
//! `docs/nic-blocks.md`, "Bundles as LogicStruct"): the Verilog port is one vector
//! (`s_ack [39:0]`, fields at fixed offsets, first field lowest), so a Verilator trace
//! shows one bus; RustHDL's own VCD writes each field as its own wire (`s_ack$qp`).
//!
//! Follows `docs/nic-blocks.md` ("Shared port bundles", "Events between the engines").

use rust_hdl::prelude::*;

/// One acknowledgement event (`docs/nic-blocks.md`, "Events between the engines"): the
/// `ReceiveQueueEngine` decoded an ACK, NACK or response of this NIC's own request; the
/// `SendQueueEngine`'s acknowledgement machine completes the WQEs it answers.
///
/// Bits (first field lowest): `qp` 5:0, `psn` 29:6, `syndrome` 37:30 (0 = ACK), `response`
/// 38 (an RDMA READ or atomic response), `resync` 39 (the answer carried RESYNC: the
/// responder restarted its PSN sequence at `psn`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct AckEvent {
    pub qp: Bits<6>,
    pub psn: Bits<24>,
    pub syndrome: Bits<8>,
    pub response: Bit,
    pub resync: Bit,
}

/// The fields of a packed [`AckEvent`] (the inverse of the `LogicStruct` packing, at the
/// offsets it generates): for test benches and co-simulation ports.
impl From<Bits<{ <AckEvent as Synth>::BITS }>> for AckEvent {
    fn from(b: Bits<{ <AckEvent as Synth>::BITS }>) -> Self {
        let at = AckEvent::default();
        AckEvent {
            qp: b.get_bits::<6>(at.get_my_offset_qp()),
            psn: b.get_bits::<24>(at.get_my_offset_psn()),
            syndrome: b.get_bits::<8>(at.get_my_offset_syndrome()),
            response: b.get_bit(at.get_my_offset_response()),
            resync: b.get_bit(at.get_my_offset_resync()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packing the documentation gives: the fields' offsets and the total width.
    #[test]
    fn ack_event_packs_its_fields_at_the_documented_offsets() {
        assert_eq!(AckEvent::BITS, 40);
        let e = AckEvent {
            qp: 0x2A.into(),
            psn: 0xABCDEF.into(),
            syndrome: 0x61.into(),
            response: false,
            resync: true,
        };
        let bits: Bits<40> = e.into();
        assert_eq!(bits.get_bits::<6>(0), 0x2A);
        assert_eq!(bits.get_bits::<24>(6), 0xABCDEF);
        assert_eq!(bits.get_bits::<8>(30), 0x61);
        assert!(!bits.get_bit(38));
        assert!(bits.get_bit(39));
        assert_eq!(AckEvent::from(bits), e, "unpacking inverts packing");
    }
}
