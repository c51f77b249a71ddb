//! `PsnWindow`: the PSN arithmetic of a decided request, a child of
//! [`crate::ReceiveQueueEngine`]: the expected PSN it leaves, how far that is past the
//! QP's resync point, and its refusal window as the answers report it.
//!
//! Follows `docs/nic-architecture.md`: "Refused PSNs" (per QP the refusal code of each of
//! the `SEND_WINDOW` = 8 PSNs before the expected one; an ACK or NACK reports, in its
//! AETH, those among the 7 PSNs before the PSN it names) and "Rejoin support" (a resync
//! adopts the request's PSN and forgets the window; the resync point is kept until the
//! expected PSN is more than `SEND_WINDOW` past it). PSNs are 24 bits and wrap.
//!
//! Ports (all combinational):
//! - In: `expected` (24, the QP's expected PSN), `psn` (24, the request's),
//!   `rs_psn` (24, the QP's resync point), `window` (24: bits `3(k-1)+2 .. 3(k-1)` the
//!   refusal code of PSN `expected - k`, k = 1..=8, 0 where not refused), `behind` (24,
//!   `expected - psn` of a duplicate), `resynced` (the decision adopts `psn`: the
//!   NackGenerator's `resynced`), `syndrome` (8, of the answer that consumes a PSN: 0 for
//!   an execution without a NACK).
//! - Out: `m_window`, one [`WindowReport`] bundle of: `effective` (24: `psn` when `resynced`, else `expected`), `effective_next` (24,
//!   `effective + 1`), `expected_next` (24, `expected + 1`), `far_next`
//!   (`effective_next` is more than 8 past `rs_psn`), `far_commit` (`expected_next` is),
//!   `window_eff` (24: `window`, 0 when `resynced`), `report_dup` (21: the window's entries
//!   from `behind + 1` on, what an answer naming the duplicate's PSN reports; 0 unless
//!   `behind` is 1..=8), `report_after1` (21: entries 2..=8, what an answer naming
//!   `expected - 1` reports), `code` (3: the refusal code `syndrome` leaves in the window:
//!   0 for 0, 1 for RECEIVER_NOT_READY 0x20, else the syndrome's bits 2:0 plus 1 (3 bits), so
//!   SEQUENCE_ERROR 0x60 .. RDMA_DISABLED 0x65 give 1 .. 6).
//!
//! `effective_next` and `far_next` are computed for both sources side by side and
//! selected by `resynced`, not behind the selection of `effective`.
//! Latency: combinational. Throughput: one request a clock. Limits: none (no
//! parameters; the window is the 8 x 3 bits of `nic_abi::SEND_WINDOW`).

use rust_hdl::prelude::*;

/// What the window arithmetic gives (`m_window`), the fields as the port list names them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct WindowReport {
    pub effective: Bits<24>,
    pub effective_next: Bits<24>,
    pub expected_next: Bits<24>,
    pub far_next: Bit,
    pub far_commit: Bit,
    pub window_eff: Bits<24>,
    pub report_dup: Bits<21>,
    pub report_after1: Bits<21>,
    pub code: Bits<3>,
}

impl From<Bits<{ <WindowReport as Synth>::BITS }>> for WindowReport {
    fn from(b: Bits<{ <WindowReport as Synth>::BITS }>) -> Self {
        let at = WindowReport::default();
        WindowReport {
            effective: b.get_bits::<24>(at.get_my_offset_effective()),
            effective_next: b.get_bits::<24>(at.get_my_offset_effective_next()),
            expected_next: b.get_bits::<24>(at.get_my_offset_expected_next()),
            far_next: b.get_bit(at.get_my_offset_far_next()),
            far_commit: b.get_bit(at.get_my_offset_far_commit()),
            window_eff: b.get_bits::<24>(at.get_my_offset_window_eff()),
            report_dup: b.get_bits::<21>(at.get_my_offset_report_dup()),
            report_after1: b.get_bits::<21>(at.get_my_offset_report_after1()),
            code: b.get_bits::<3>(at.get_my_offset_code()),
        }
    }
}

#[derive(LogicBlock, Default)]
pub struct PsnWindow {
    pub expected: Signal<In, Bits<24>>,
    pub psn: Signal<In, Bits<24>>,
    pub rs_psn: Signal<In, Bits<24>>,
    pub window: Signal<In, Bits<24>>,
    pub behind: Signal<In, Bits<24>>,
    pub resynced: Signal<In, Bit>,
    pub syndrome: Signal<In, Bits<8>>,
    pub m_window: Signal<Out, WindowReport>,
    psn_next: Signal<Local, Bits<24>>,
    expected_p1: Signal<Local, Bits<24>>,
    far_psn: Signal<Local, Bit>,
    far_expected: Signal<Local, Bit>,
}

impl PsnWindow {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for PsnWindow {
    #[hdl_gen]
    fn update(&mut self) {
        self.m_window.next.effective = self.expected.val();
        if self.resynced.val() {
            self.m_window.next.effective = self.psn.val();
        }
        self.expected_p1.next = self.expected.val() + 1;
        self.psn_next.next = self.psn.val() + 1;
        self.m_window.next.expected_next = self.expected_p1.val();
        self.m_window.next.effective_next = self.expected_p1.val();
        if self.resynced.val() {
            self.m_window.next.effective_next = self.psn_next.val();
        }
        self.far_expected.next = (self.expected_p1.val() - self.rs_psn.val()) > 8;
        self.far_psn.next = (self.psn_next.val() - self.rs_psn.val()) > 8;
        self.m_window.next.far_commit = self.far_expected.val();
        self.m_window.next.far_next = self.far_expected.val();
        if self.resynced.val() {
            self.m_window.next.far_next = self.far_psn.val();
        }
        self.m_window.next.window_eff = self.window.val();
        if self.resynced.val() {
            self.m_window.next.window_eff = 0.into();
        }
        // Unrolled: entry k of the report is entry `behind + k` of the window.
        self.m_window.next.report_after1 = bit_cast::<21, 24>(self.window.val() >> 3);
        self.m_window.next.report_dup = 0.into();
        if self.behind.val() == 1 {
            self.m_window.next.report_dup = bit_cast::<21, 24>(self.window.val() >> 3);
        }
        if self.behind.val() == 2 {
            self.m_window.next.report_dup = bit_cast::<21, 24>(self.window.val() >> 6);
        }
        if self.behind.val() == 3 {
            self.m_window.next.report_dup = bit_cast::<21, 24>(self.window.val() >> 9);
        }
        if self.behind.val() == 4 {
            self.m_window.next.report_dup = bit_cast::<21, 24>(self.window.val() >> 12);
        }
        if self.behind.val() == 5 {
            self.m_window.next.report_dup = bit_cast::<21, 24>(self.window.val() >> 15);
        }
        if self.behind.val() == 6 {
            self.m_window.next.report_dup = bit_cast::<21, 24>(self.window.val() >> 18);
        }
        if self.behind.val() == 7 {
            self.m_window.next.report_dup = bit_cast::<21, 24>(self.window.val() >> 21);
        }
        if self.behind.val() == 8 {
            self.m_window.next.report_dup = bit_cast::<21, 24>(self.window.val() >> 24);
        }
        self.m_window.next.code = self.syndrome.val().get_bits::<3>(0) + 1;
        if self.syndrome.val() == 0x20 {
            self.m_window.next.code = 1.into();
        }
        if self.syndrome.val() == 0 {
            self.m_window.next.code = 0.into();
        }
    }
}
