//! `NackCounters`: eight 32-bit counters of NACKs, one per NACK syndrome.
//!
//! The `NACK_SENT` and `NACK_RECEIVED` registers of `docs/csr-map.md` count NACKs per
//! syndrome, in the order of [`nic_abi::Syndrome::NACKS`] (`Syndrome::counter_index`):
//! RECEIVER_NOT_READY, SEQUENCE_ERROR, INVALID_REQUEST, REMOTE_ACCESS_ERROR,
//! REMOTE_OPERATIONAL_ERROR, CRC_OR_MALFORMED, RDMA_DISABLED, PORT_DOWN. The
//! `ResponseGenerator` counts the NACKs it sends with one.
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: every counter to 0).
//! - `s_count` (in): count one NACK with syndrome `s_syndrome` (8) on this rising edge.
//!   A syndrome that is not a NACK syndrome (ACK's 0, anything unknown) counts nowhere.
//! - `m_count_0` .. `m_count_7` (out, 32): the counters, registered, wrapping at 2^32.
//!
//! Latency: a NACK counted on edge t shows from edge t on. Throughput: one NACK a clock.
//! Limits: none (no parameters); 8 x 32 flip-flops and eight 32-bit incrementers.

use crate::sim::ClockedBlock;
use nic_abi::Syndrome;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct NackCounters {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_count: Signal<In, Bit>,
    pub s_syndrome: Signal<In, Bits<8>>,
    pub m_count_0: Signal<Out, Bits<32>>,
    pub m_count_1: Signal<Out, Bits<32>>,
    pub m_count_2: Signal<Out, Bits<32>>,
    pub m_count_3: Signal<Out, Bits<32>>,
    pub m_count_4: Signal<Out, Bits<32>>,
    pub m_count_5: Signal<Out, Bits<32>>,
    pub m_count_6: Signal<Out, Bits<32>>,
    pub m_count_7: Signal<Out, Bits<32>>,
    count_0: DFF<Bits<32>>,
    count_1: DFF<Bits<32>>,
    count_2: DFF<Bits<32>>,
    count_3: DFF<Bits<32>>,
    count_4: DFF<Bits<32>>,
    count_5: DFF<Bits<32>>,
    count_6: DFF<Bits<32>>,
    count_7: DFF<Bits<32>>,
    /// `Syndrome::NACKS[i]`.
    syndrome_0: Constant<Bits<8>>,
    syndrome_1: Constant<Bits<8>>,
    syndrome_2: Constant<Bits<8>>,
    syndrome_3: Constant<Bits<8>>,
    syndrome_4: Constant<Bits<8>>,
    syndrome_5: Constant<Bits<8>>,
    syndrome_6: Constant<Bits<8>>,
    syndrome_7: Constant<Bits<8>>,
}

impl NackCounters {
    pub fn new() -> Self {
        let code = |i: usize| Constant::new((Syndrome::NACKS[i] as u64).to_bits());
        NackCounters {
            clock: Default::default(),
            reset: Default::default(),
            s_count: Default::default(),
            s_syndrome: Default::default(),
            m_count_0: Default::default(),
            m_count_1: Default::default(),
            m_count_2: Default::default(),
            m_count_3: Default::default(),
            m_count_4: Default::default(),
            m_count_5: Default::default(),
            m_count_6: Default::default(),
            m_count_7: Default::default(),
            count_0: Default::default(),
            count_1: Default::default(),
            count_2: Default::default(),
            count_3: Default::default(),
            count_4: Default::default(),
            count_5: Default::default(),
            count_6: Default::default(),
            count_7: Default::default(),
            syndrome_0: code(0),
            syndrome_1: code(1),
            syndrome_2: code(2),
            syndrome_3: code(3),
            syndrome_4: code(4),
            syndrome_5: code(5),
            syndrome_6: code(6),
            syndrome_7: code(7),
        }
    }
}

impl Default for NackCounters {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for NackCounters {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, count_0, count_1, count_2, count_3, count_4, count_5, count_6, count_7
        );
        if self.s_count.val() {
            if self.s_syndrome.val() == self.syndrome_0.val() {
                self.count_0.d.next = self.count_0.q.val() + 1;
            }
            if self.s_syndrome.val() == self.syndrome_1.val() {
                self.count_1.d.next = self.count_1.q.val() + 1;
            }
            if self.s_syndrome.val() == self.syndrome_2.val() {
                self.count_2.d.next = self.count_2.q.val() + 1;
            }
            if self.s_syndrome.val() == self.syndrome_3.val() {
                self.count_3.d.next = self.count_3.q.val() + 1;
            }
            if self.s_syndrome.val() == self.syndrome_4.val() {
                self.count_4.d.next = self.count_4.q.val() + 1;
            }
            if self.s_syndrome.val() == self.syndrome_5.val() {
                self.count_5.d.next = self.count_5.q.val() + 1;
            }
            if self.s_syndrome.val() == self.syndrome_6.val() {
                self.count_6.d.next = self.count_6.q.val() + 1;
            }
            if self.s_syndrome.val() == self.syndrome_7.val() {
                self.count_7.d.next = self.count_7.q.val() + 1;
            }
        }
        if self.reset.val() {
            self.count_0.d.next = 0.into();
            self.count_1.d.next = 0.into();
            self.count_2.d.next = 0.into();
            self.count_3.d.next = 0.into();
            self.count_4.d.next = 0.into();
            self.count_5.d.next = 0.into();
            self.count_6.d.next = 0.into();
            self.count_7.d.next = 0.into();
        }
        self.m_count_0.next = self.count_0.q.val();
        self.m_count_1.next = self.count_1.q.val();
        self.m_count_2.next = self.count_2.q.val();
        self.m_count_3.next = self.count_3.q.val();
        self.m_count_4.next = self.count_4.q.val();
        self.m_count_5.next = self.count_5.q.val();
        self.m_count_6.next = self.count_6.q.val();
        self.m_count_7.next = self.count_7.q.val();
    }
}

impl ClockedBlock for NackCounters {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::tick;

    fn counts(uut: &NackCounters) -> [u64; 8] {
        [
            uut.m_count_0.val().to_u64(),
            uut.m_count_1.val().to_u64(),
            uut.m_count_2.val().to_u64(),
            uut.m_count_3.val().to_u64(),
            uut.m_count_4.val().to_u64(),
            uut.m_count_5.val().to_u64(),
            uut.m_count_6.val().to_u64(),
            uut.m_count_7.val().to_u64(),
        ]
    }

    #[test]
    fn synthesises() {
        let mut uut = NackCounters::new();
        uut.connect_all();
        yosys_validate("nic_rtl_nack_counters", &generate_verilog(&uut))
            .expect("yosys accepts NackCounters");
    }

    /// Seeded pseudo-random syndromes (every NACK code, ACK, unknown codes) with idle
    /// clocks and resets, against counts kept by `Syndrome::counter_index`.
    #[test]
    fn counts_every_nack_syndrome_by_its_counter_index() {
        let mut uut = NackCounters::new();
        uut.connect_all();
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        let mut expected = [0u64; 8];
        // A small LCG: the test needs no rand (nic-rtl's unit tests have none).
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let codes: Vec<u8> = Syndrome::NACKS
            .iter()
            .map(|s| *s as u8)
            .chain([0x00, 0x01, 0x5F, 0x67, 0x21, 0xFF])
            .collect();
        for clock in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let count = (x >> 33) % 3 != 0;
            let code = codes[(x >> 40) as usize % codes.len()];
            let reset = clock % 7919 == 7918;
            uut.s_count.next = count;
            uut.s_syndrome.next = (code as u64).to_bits();
            uut.reset.next = reset;
            tick(&mut uut);
            if reset {
                expected = [0; 8];
            } else if count {
                if let Some(i) = Syndrome::from_code(code).and_then(Syndrome::counter_index) {
                    expected[i] += 1;
                }
            }
            assert_eq!(counts(&uut), expected, "clock {clock}, code {code:#04x}");
        }
        assert!(expected.iter().all(|&n| n > 0), "{expected:?}");
    }

    /// The counters wrap at 2^32 (a register that saturated or widened would not).
    #[test]
    fn counters_wrap() {
        let mut uut = NackCounters::new();
        uut.connect_all();
        uut.count_3.q.next = u32::MAX.to_bits();
        uut.s_count.next = true;
        uut.s_syndrome.next = (Syndrome::RemoteAccessError as u64).to_bits();
        tick(&mut uut);
        assert_eq!(counts(&uut)[3], 0);
    }
}
