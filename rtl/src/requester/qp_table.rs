//! `QpTable`: the requester's per-queue-pair table: one [`QpEntry`] per queue pair, held in
//! six [`QpRam`]s (synchronous read; `queue_pairs` rounded up to a power of two words) that
//! are read and written together, with one read port, one write port and the clear of
//! every entry after reset.
//!
//! Follows the per-QP registers of `docs/csr-map.md` (SQ_BASE, SQ_SIZE_LOG2, SQ_PI, SQ_CI,
//! QP_REMOTE, QP_CTRL bit 0) and the state `docs/nic-architecture.md` ("Reliability: queue
//! pairs, PSNs, go-back-N") gives a queue pair; the fields' meaning is the
//! `SendQueueEngine`'s, which reads and writes them (`docs/nic-blocks.md`, "SendQueueEngine:
//! design notes").
//!
//! Ports:
//! - `clock`, `reset` (synchronous, active high: the table clears every entry to zero, one
//!   address per clock, addresses 0 to 63 (each word of a smaller RAM several times, so the
//!   clear takes 64 clocks whatever `queue_pairs`); so it does at power-up).
//! - `m_ready`: the table is not clearing (low for the 64 clocks after reset; a user waits
//!   for it before it reads or writes).
//! - Read port: `s_rd_addr` (6); the entry at that address as of the rising edge shows on
//!   `m_rd_entry` ([`QpEntry`], 182 bits) after it, and stays until the next edge. A write
//!   to the same address at the same edge is not seen (the old entry is read). An address
//!   at or beyond `queue_pairs` reads an all-zero entry (the RAMs hold no word for it: the
//!   word its low bits select belongs to another queue pair). Beside it, three flags of
//!   that entry, stored with it (computed when it was written, so its user tests them
//!   without arithmetic behind the RAMs): `m_rd_outstanding` (`sq_una != sq_next`),
//!   `m_rd_has_work` (`sq_next != sq_pi`), `m_rd_window_full` (`sq_next - sq_una` mod 2^24
//!   at least `SEND_WINDOW`); all low for the zero entry.
//! - Write port: `s_wr_valid`, `s_wr_addr` (6), `s_wr_entry` ([`QpEntry`]): taken at the
//!   rising edge; a read at any later edge sees it. Ignored while the table clears, in the
//!   reset clock, and for an address at or beyond `queue_pairs`. (Inside, the write is
//!   registered and reaches the RAMs at the next edge, with its flags computed from the
//!   register; a read of that address at that edge answers the registered entry.)
//!
//! Latency: one clock from read address to entry. Throughput: one read and one write per
//! clock. Limits: `queue_pairs` in 1..=64 (the queue pair index is 6 bits); every field is
//! zero after the clear.
//!
//! Storage (six [`QpRam`]s; with 64 queue pairs each maps to one block RAM on ECP5, with
//! a few to LUT RAM or flip-flops): `base` (32),
//! `remote` (32), `sq_pi` and `size_log2` (29), `sq_next` with the flags and the retry count
//! (32), `sq_una` and `una_needs_response` (25), `timer_start` (32).

use crate::common::qp_ram::QP_RAM_ADDRESS_BITS;
use crate::common::QpRam;
use crate::sim::ClockedBlock;
use nic_abi::{MAX_QUEUE_PAIRS, SEND_WINDOW};
use rust_hdl::prelude::*;

/// Address bits of the per-QP table (a queue pair's number).
pub const QP_TABLE_ADDRESS_BITS: usize = QP_RAM_ADDRESS_BITS;

/// Addresses the clear after reset walks (one per clock).
pub const QP_TABLE_ENTRIES: usize = 1 << QP_TABLE_ADDRESS_BITS;

/// One queue pair's entry of the requester's table (a RustHDL `LogicStruct`, first field in
/// the lowest bits).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, LogicStruct)]
pub struct QpEntry {
    /// SQ_BASE: host address of the send queue ring.
    pub base: Bits<32>,
    /// QP_REMOTE: 15:0 the remote node, 31:16 the remote queue pair.
    pub remote: Bits<32>,
    /// `sq_pi`, the producer index the driver wrote (SQ_PI).
    pub sq_pi: Bits<24>,
    /// SQ_SIZE_LOG2.
    pub size_log2: Bits<5>,
    /// `sq_next`: the PSN (and WQE index) transmitted next.
    pub sq_next: Bits<24>,
    /// QP_CTRL bit 0.
    pub enable: Bit,
    /// The next message for PSN `sq_una` carries RESYNC.
    pub resync: Bit,
    /// A READ or atomic at `sq_una` waits for its response.
    pub waiting: Bit,
    /// Not scheduled until `sq_una == sq_next`.
    pub draining: Bit,
    /// Retry events since the last progress.
    pub retry: Bits<4>,
    /// `sq_una` (= SQ_CI): the oldest PSN not completed.
    pub sq_una: Bits<24>,
    /// The WQE at `sq_una` is an RDMA READ or atomic that has been sent.
    pub una_needs_response: Bit,
    /// The retry timer's start: the cycle of the queue pair's last progress.
    pub timer_start: Bits<32>,
}

/// The fields of a packed [`QpEntry`] (the inverse of the `LogicStruct` packing, at the
/// offsets it generates): for test benches and co-simulation ports.
impl From<Bits<{ <QpEntry as Synth>::BITS }>> for QpEntry {
    fn from(b: Bits<{ <QpEntry as Synth>::BITS }>) -> Self {
        let at = QpEntry::default();
        QpEntry {
            base: b.get_bits::<32>(at.get_my_offset_base()),
            remote: b.get_bits::<32>(at.get_my_offset_remote()),
            sq_pi: b.get_bits::<24>(at.get_my_offset_sq_pi()),
            size_log2: b.get_bits::<5>(at.get_my_offset_size_log2()),
            sq_next: b.get_bits::<24>(at.get_my_offset_sq_next()),
            enable: b.get_bit(at.get_my_offset_enable()),
            resync: b.get_bit(at.get_my_offset_resync()),
            waiting: b.get_bit(at.get_my_offset_waiting()),
            draining: b.get_bit(at.get_my_offset_draining()),
            retry: b.get_bits::<4>(at.get_my_offset_retry()),
            sq_una: b.get_bits::<24>(at.get_my_offset_sq_una()),
            una_needs_response: b.get_bit(at.get_my_offset_una_needs_response()),
            timer_start: b.get_bits::<32>(at.get_my_offset_timer_start()),
        }
    }
}

/// The table's state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum QpTableState {
    /// Clearing one entry per clock (after reset, and at power-up).
    Clearing,
    /// Reads and writes served.
    Ready,
}

#[derive(LogicBlock)]
pub struct QpTable {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub m_ready: Signal<Out, Bit>,
    pub s_rd_addr: Signal<In, Bits<QP_TABLE_ADDRESS_BITS>>,
    pub m_rd_entry: Signal<Out, QpEntry>,
    pub m_rd_outstanding: Signal<Out, Bit>,
    pub m_rd_has_work: Signal<Out, Bit>,
    pub m_rd_window_full: Signal<Out, Bit>,
    pub s_wr_valid: Signal<In, Bit>,
    pub s_wr_addr: Signal<In, Bits<QP_TABLE_ADDRESS_BITS>>,
    pub s_wr_entry: Signal<In, QpEntry>,
    ram_base: QpRam<Bits<32>>,
    ram_remote: QpRam<Bits<32>>,
    /// 23:0 `sq_pi`, 28:24 `size_log2`, 31:29 the flags (outstanding, has work, window
    /// full).
    ram_pi: QpRam<Bits<32>>,
    /// 23:0 `sq_next`, 24 `enable`, 25 `resync`, 26 `waiting`, 27 `draining`, 31:28 `retry`.
    ram_next: QpRam<Bits<32>>,
    /// 23:0 `sq_una`, 24 `una_needs_response`.
    ram_una: QpRam<Bits<25>>,
    ram_tstart: QpRam<Bits<32>>,
    state: DFF<QpTableState>,
    /// The entry cleared this clock.
    clear_addr: DFF<Bits<QP_TABLE_ADDRESS_BITS>>,
    /// The address read at the last edge is below `queue_pairs`.
    rd_in_range: DFF<Bit>,
    wr_in_range: Signal<Local, Bit>,
    /// The write taken at the last edge, written to the RAMs at the next.
    wr_pending: DFF<Bit>,
    wr_addr_q: DFF<Bits<QP_TABLE_ADDRESS_BITS>>,
    wr_entry_q: DFF<QpEntry>,
    /// `sq_next - sq_una` of the registered write.
    wr_d_out: Signal<Local, Bits<24>>,
    /// The registered write's flags: 0 outstanding, 1 has work, 2 window full.
    wr_flags: Signal<Local, Bits<3>>,
    /// The read at the last edge met the RAM write of that edge: answer its entry.
    byp: DFF<Bit>,
    byp_entry: DFF<QpEntry>,
    byp_flags: DFF<Bits<3>>,
    rd_flags: Signal<Local, Bits<3>>,
    zero_entry: Constant<QpEntry>,
    send_window: Constant<Bits<24>>,
    queue_pairs: Constant<Bits<7>>,
    /// Address bits at and above the RAMs' depth.
    above_depth: Constant<Bits<QP_TABLE_ADDRESS_BITS>>,
    /// `queue_pairs` is a power of two (every address below the depth is a queue pair).
    fills_depth: Constant<Bit>,
}

impl QpTable {
    /// The table of `queue_pairs` queue pairs.
    ///
    /// Panics when `queue_pairs` is not in 1..=64.
    pub fn new(queue_pairs: usize) -> Self {
        assert!(
            (1..=MAX_QUEUE_PAIRS).contains(&queue_pairs),
            "QpTable: queue_pairs must be between 1 and {MAX_QUEUE_PAIRS}, got {queue_pairs}"
        );
        QpTable {
            clock: Default::default(),
            reset: Default::default(),
            m_ready: Default::default(),
            s_rd_addr: Default::default(),
            m_rd_entry: Default::default(),
            m_rd_outstanding: Default::default(),
            m_rd_has_work: Default::default(),
            m_rd_window_full: Default::default(),
            s_wr_valid: Default::default(),
            s_wr_addr: Default::default(),
            s_wr_entry: Default::default(),
            ram_base: QpRam::new(queue_pairs),
            ram_remote: QpRam::new(queue_pairs),
            ram_pi: QpRam::new(queue_pairs),
            ram_next: QpRam::new(queue_pairs),
            ram_una: QpRam::new(queue_pairs),
            ram_tstart: QpRam::new(queue_pairs),
            state: Default::default(),
            clear_addr: Default::default(),
            rd_in_range: Default::default(),
            wr_in_range: Default::default(),
            wr_pending: Default::default(),
            wr_addr_q: Default::default(),
            wr_entry_q: Default::default(),
            wr_d_out: Default::default(),
            wr_flags: Default::default(),
            byp: Default::default(),
            byp_entry: Default::default(),
            byp_flags: Default::default(),
            rd_flags: Default::default(),
            zero_entry: Constant::new(QpEntry::default()),
            send_window: Constant::new((SEND_WINDOW as u64).to_bits()),
            queue_pairs: Constant::new((queue_pairs as u64).to_bits()),
            above_depth: Constant::new(
                (!(queue_pairs.next_power_of_two() as u64 - 1) & 0x3F).to_bits(),
            ),
            fills_depth: Constant::new(queue_pairs.is_power_of_two()),
        }
    }
}

impl Default for QpTable {
    fn default() -> Self {
        Self::new(MAX_QUEUE_PAIRS)
    }
}

impl Logic for QpTable {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            clear_addr,
            rd_in_range,
            wr_pending,
            wr_addr_q,
            wr_entry_q,
            byp,
            byp_entry,
            byp_flags
        );
        self.ram_base.clock.next = self.clock.val();
        self.ram_remote.clock.next = self.clock.val();
        self.ram_pi.clock.next = self.clock.val();
        self.ram_next.clock.next = self.clock.val();
        self.ram_una.clock.next = self.clock.val();
        self.ram_tstart.clock.next = self.clock.val();
        self.m_ready.next = self.state.q.val() == QpTableState::Ready;

        // Write port: registered, written to the RAMs the next clock with the entry's
        // flags computed from the registered entry. A write beyond `queue_pairs` would
        // land on another queue pair's word: ignored; so is one while clearing or in the
        // reset clock.
        // (`addr < queue_pairs` as "no bit above the RAM's depth, and below `queue_pairs`",
        // the second constant-true when `queue_pairs` is the depth: no carry chain.)
        self.wr_in_range.next = ((self.s_wr_addr.val() & self.above_depth.val()) == 0)
            & (self.fills_depth.val()
                | (bit_cast::<7, 6>(self.s_wr_addr.val()) < self.queue_pairs.val()));
        self.wr_pending.d.next = self.s_wr_valid.val()
            & self.wr_in_range.val()
            & (self.state.q.val() == QpTableState::Ready)
            & !self.reset.val();
        self.wr_addr_q.d.next = self.s_wr_addr.val();
        self.wr_entry_q.d.next = self.s_wr_entry.val();
        self.wr_d_out.next = self.wr_entry_q.q.val().sq_next - self.wr_entry_q.q.val().sq_una;
        self.wr_flags.next = bit_cast::<3, 1>(
            (self.wr_entry_q.q.val().sq_una != self.wr_entry_q.q.val().sq_next).into(),
        ) | (bit_cast::<3, 1>(
            (self.wr_entry_q.q.val().sq_next != self.wr_entry_q.q.val().sq_pi).into(),
        ) << 1)
            | (bit_cast::<3, 1>((self.wr_d_out.val() >= self.send_window.val()).into()) << 2);

        // Read port: the RAMs' words, or the entry written at this read's edge (the RAMs
        // return the old word then), or zero beyond `queue_pairs`.
        self.ram_base.read_address.next = self.s_rd_addr.val();
        self.ram_remote.read_address.next = self.s_rd_addr.val();
        self.ram_pi.read_address.next = self.s_rd_addr.val();
        self.ram_next.read_address.next = self.s_rd_addr.val();
        self.ram_una.read_address.next = self.s_rd_addr.val();
        self.ram_tstart.read_address.next = self.s_rd_addr.val();
        self.rd_in_range.d.next = ((self.s_rd_addr.val() & self.above_depth.val()) == 0)
            & (self.fills_depth.val()
                | (bit_cast::<7, 6>(self.s_rd_addr.val()) < self.queue_pairs.val()));
        self.byp.d.next =
            self.wr_pending.q.val() & (self.wr_addr_q.q.val() == self.s_rd_addr.val());
        self.byp_entry.d.next = self.wr_entry_q.q.val();
        self.byp_flags.d.next = self.wr_flags.val();
        self.m_rd_entry.next.base = self.ram_base.read_data.val();
        self.m_rd_entry.next.remote = self.ram_remote.read_data.val();
        self.m_rd_entry.next.sq_pi = self.ram_pi.read_data.val().get_bits::<24>(0);
        self.m_rd_entry.next.size_log2 = self.ram_pi.read_data.val().get_bits::<5>(24);
        self.m_rd_entry.next.sq_next = self.ram_next.read_data.val().get_bits::<24>(0);
        self.m_rd_entry.next.enable = self.ram_next.read_data.val().get_bit(24);
        self.m_rd_entry.next.resync = self.ram_next.read_data.val().get_bit(25);
        self.m_rd_entry.next.waiting = self.ram_next.read_data.val().get_bit(26);
        self.m_rd_entry.next.draining = self.ram_next.read_data.val().get_bit(27);
        self.m_rd_entry.next.retry = self.ram_next.read_data.val().get_bits::<4>(28);
        self.m_rd_entry.next.sq_una = self.ram_una.read_data.val().get_bits::<24>(0);
        self.m_rd_entry.next.una_needs_response = self.ram_una.read_data.val().get_bit(24);
        self.m_rd_entry.next.timer_start = self.ram_tstart.read_data.val();
        self.rd_flags.next = self.ram_pi.read_data.val().get_bits::<3>(29);
        if self.byp.q.val() {
            self.m_rd_entry.next = self.byp_entry.q.val();
            self.rd_flags.next = self.byp_flags.q.val();
        }
        if !self.rd_in_range.q.val() {
            self.m_rd_entry.next = self.zero_entry.val();
            self.rd_flags.next = 0.into();
        }
        self.m_rd_outstanding.next = self.rd_flags.val().get_bit(0);
        self.m_rd_has_work.next = self.rd_flags.val().get_bit(1);
        self.m_rd_window_full.next = self.rd_flags.val().get_bit(2);

        // The RAMs' write port (or the clear).
        self.ram_base.write_address.next = self.wr_addr_q.q.val();
        self.ram_remote.write_address.next = self.wr_addr_q.q.val();
        self.ram_pi.write_address.next = self.wr_addr_q.q.val();
        self.ram_next.write_address.next = self.wr_addr_q.q.val();
        self.ram_una.write_address.next = self.wr_addr_q.q.val();
        self.ram_tstart.write_address.next = self.wr_addr_q.q.val();
        self.ram_base.write_data.next = self.wr_entry_q.q.val().base;
        self.ram_remote.write_data.next = self.wr_entry_q.q.val().remote;
        self.ram_pi.write_data.next = bit_cast::<32, 24>(self.wr_entry_q.q.val().sq_pi)
            | (bit_cast::<32, 5>(self.wr_entry_q.q.val().size_log2) << 24)
            | (bit_cast::<32, 3>(self.wr_flags.val()) << 29);
        self.ram_next.write_data.next = bit_cast::<32, 24>(self.wr_entry_q.q.val().sq_next)
            | (bit_cast::<32, 1>(self.wr_entry_q.q.val().enable.into()) << 24)
            | (bit_cast::<32, 1>(self.wr_entry_q.q.val().resync.into()) << 25)
            | (bit_cast::<32, 1>(self.wr_entry_q.q.val().waiting.into()) << 26)
            | (bit_cast::<32, 1>(self.wr_entry_q.q.val().draining.into()) << 27)
            | (bit_cast::<32, 4>(self.wr_entry_q.q.val().retry) << 28);
        self.ram_una.write_data.next = bit_cast::<25, 24>(self.wr_entry_q.q.val().sq_una)
            | (bit_cast::<25, 1>(self.wr_entry_q.q.val().una_needs_response.into()) << 24);
        self.ram_tstart.write_data.next = self.wr_entry_q.q.val().timer_start;
        self.ram_base.write_enable.next = self.wr_pending.q.val();
        self.ram_remote.write_enable.next = self.wr_pending.q.val();
        self.ram_pi.write_enable.next = self.wr_pending.q.val();
        self.ram_next.write_enable.next = self.wr_pending.q.val();
        self.ram_una.write_enable.next = self.wr_pending.q.val();
        self.ram_tstart.write_enable.next = self.wr_pending.q.val();
        match self.state.q.val() {
            QpTableState::Clearing => {
                // One entry per clock, zero everywhere.
                self.ram_base.write_address.next = self.clear_addr.q.val();
                self.ram_remote.write_address.next = self.clear_addr.q.val();
                self.ram_pi.write_address.next = self.clear_addr.q.val();
                self.ram_next.write_address.next = self.clear_addr.q.val();
                self.ram_una.write_address.next = self.clear_addr.q.val();
                self.ram_tstart.write_address.next = self.clear_addr.q.val();
                self.ram_base.write_data.next = 0.into();
                self.ram_remote.write_data.next = 0.into();
                self.ram_pi.write_data.next = 0.into();
                self.ram_next.write_data.next = 0.into();
                self.ram_una.write_data.next = 0.into();
                self.ram_tstart.write_data.next = 0.into();
                self.ram_base.write_enable.next = true;
                self.ram_remote.write_enable.next = true;
                self.ram_pi.write_enable.next = true;
                self.ram_next.write_enable.next = true;
                self.ram_una.write_enable.next = true;
                self.ram_tstart.write_enable.next = true;
                self.clear_addr.d.next = self.clear_addr.q.val() + 1;
                if self.clear_addr.q.val() == 63 {
                    self.state.d.next = QpTableState::Ready;
                }
            }
            QpTableState::Ready => {}
        }
        if self.reset.val() {
            self.state.d.next = QpTableState::Clearing;
            self.clear_addr.d.next = 0.into();
        }
    }
}

impl ClockedBlock for QpTable {
    fn clock_signal(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{settle, tick};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A random entry; its PSNs mostly close together (around the wrap too), so that the
    /// flags take every value.
    fn random_entry(rng: &mut ChaCha8Rng) -> QpEntry {
        let m = (1u64 << 24) - 1;
        let una = rng.gen_range(0..1u64 << 24);
        let next = if rng.gen_bool(0.8) {
            una.wrapping_add(rng.gen_range(0..12)) & m
        } else {
            rng.gen_range(0..1u64 << 24)
        };
        let pi = if rng.gen_bool(0.6) {
            next.wrapping_add(rng.gen_range(0..3)) & m
        } else {
            rng.gen_range(0..1u64 << 24)
        };
        QpEntry {
            base: rng.gen::<u32>().to_bits(),
            remote: rng.gen::<u32>().to_bits(),
            sq_pi: pi.to_bits(),
            size_log2: rng.gen_range(0..32u64).to_bits(),
            sq_next: next.to_bits(),
            enable: rng.gen(),
            resync: rng.gen(),
            waiting: rng.gen(),
            draining: rng.gen(),
            retry: rng.gen_range(0..16u64).to_bits(),
            sq_una: una.to_bits(),
            una_needs_response: rng.gen(),
            timer_start: rng.gen::<u32>().to_bits(),
        }
    }

    /// The table as its documentation describes it, stepped by its inputs only.
    struct Model {
        /// One entry per queue pair below `queue_pairs`.
        entries: Vec<QpEntry>,
        /// `Some(a)`: clearing, entry `a` this clock.
        clearing: Option<usize>,
        /// What the read port shows after the last edge.
        read: QpEntry,
    }

    impl Model {
        fn new(queue_pairs: usize) -> Self {
            Model {
                entries: vec![QpEntry::default(); queue_pairs],
                clearing: Some(0),
                read: QpEntry::default(),
            }
        }

        /// One rising edge with these inputs.
        fn clock(&mut self, rd: usize, wr: Option<(usize, QpEntry)>, reset: bool) {
            // Read before write.
            self.read = self.entries.get(rd).copied().unwrap_or_default();
            match self.clearing {
                Some(a) => {
                    if let Some(e) = self.entries.get_mut(a) {
                        *e = QpEntry::default();
                    }
                    self.clearing = (a + 1 < QP_TABLE_ENTRIES).then_some(a + 1);
                }
                None if !reset => {
                    if let Some((a, e)) = wr {
                        // Queue pairs at or beyond `queue_pairs`: ignored.
                        if let Some(w) = self.entries.get_mut(a) {
                            *w = e;
                        }
                    }
                }
                None => {}
            }
            if reset {
                self.clearing = Some(0);
            }
        }
    }

    /// Seeded random reads and writes (bursts, idle gaps, writes to the address being
    /// read, addresses beyond `queue_pairs`), with resets; the read port and `m_ready`
    /// compared every clock.
    fn run(seed: u64, cycles: usize, queue_pairs: usize) -> usize {
        let mut uut = QpTable::new(queue_pairs);
        uut.connect_all();
        let mut model = Model::new(queue_pairs);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut checked = 0;
        for cycle in 0..cycles {
            let p_wr = [0.9, 0.4, 0.05, 0.6][(cycle / 200) % 4];
            // Addresses from a few QPs, so that reads find what was written.
            let span = [64, 4, 1, 16][(cycle / 300) % 4];
            let rd = rng.gen_range(0..span);
            let wr = rng.gen_bool(p_wr).then(|| {
                let a = if rng.gen_bool(0.3) {
                    rd
                } else {
                    rng.gen_range(0..span)
                };
                (a, random_entry(&mut rng))
            });
            let reset = rng.gen_bool(0.001);
            uut.reset.next = reset;
            uut.s_rd_addr.next = (rd as u64).to_bits();
            uut.s_wr_valid.next = wr.is_some();
            let (wa, we) = wr.unwrap_or((rng.gen_range(0..64), random_entry(&mut rng)));
            uut.s_wr_addr.next = (wa as u64).to_bits();
            uut.s_wr_entry.next = we;
            settle(&mut uut);
            assert_eq!(
                uut.m_ready.val(),
                model.clearing.is_none(),
                "m_ready at clock {cycle}"
            );
            if cycle > 0 {
                assert_eq!(
                    uut.m_rd_entry.val(),
                    model.read,
                    "entry read at clock {cycle}"
                );
                let r = model.read;
                let flags = (
                    r.sq_una != r.sq_next,
                    r.sq_next != r.sq_pi,
                    (r.sq_next.index() as u64).wrapping_sub(r.sq_una.index() as u64) & 0xFF_FFFF
                        >= SEND_WINDOW as u64,
                );
                assert_eq!(
                    (
                        uut.m_rd_outstanding.val(),
                        uut.m_rd_has_work.val(),
                        uut.m_rd_window_full.val()
                    ),
                    flags,
                    "flags read at clock {cycle}"
                );
                checked += (model.read != QpEntry::default()) as usize;
            }
            tick(&mut uut);
            model.clock(rd, wr, reset);
        }
        checked
    }

    #[test]
    fn synthesises() {
        let mut uut = QpTable::new(5);
        uut.connect_all();
        yosys_validate("nic_rtl_requester_qp_table", &generate_verilog(&uut))
            .expect("yosys accepts QpTable");
    }

    #[test]
    fn matches_model_with_gaps_and_resets() {
        // 64 queue pairs (one word per address), 5 (eight-word RAMs: addresses 5..63
        // alias words of real queue pairs) and 1.
        for (seed, queue_pairs) in [(1, 64), (2, 64), (3, 5), (4, 5), (5, 1)] {
            assert!(
                run(seed, 6_000, queue_pairs) > 500,
                "seed {seed}: too few entries read back"
            );
        }
    }

    #[test]
    #[should_panic(expected = "QpTable: queue_pairs must be between 1 and 64, got 65")]
    fn rejects_more_than_64_queue_pairs() {
        QpTable::new(65);
    }

    /// The entry packs its fields at the offsets the `LogicStruct` gives (first field
    /// lowest, 182 bits), and the clear takes 64 clocks after reset, during which writes
    /// are ignored.
    #[test]
    fn clears_for_64_clocks_after_reset_ignoring_writes() {
        assert_eq!(QpEntry::BITS, 182);
        let e = QpEntry::default();
        assert_eq!(e.get_my_offset_remote(), 32);
        assert_eq!(e.get_my_offset_timer_start(), 150);
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let full = random_entry(&mut rng);
        let bits: Bits<182> = full.into();
        assert_eq!(QpEntry::from(bits), full, "unpacking inverts packing");
        let mut uut = QpTable::new(64);
        uut.connect_all();
        // Past the power-up clear, entry 5 written and read back.
        for _ in 0..QP_TABLE_ENTRIES {
            tick(&mut uut);
        }
        uut.s_wr_valid.next = true;
        uut.s_wr_addr.next = 5.into();
        uut.s_wr_entry.next = full;
        tick(&mut uut);
        uut.s_wr_valid.next = false;
        uut.s_rd_addr.next = 5.into();
        tick(&mut uut);
        assert_eq!(uut.m_rd_entry.val(), full);
        uut.reset.next = true;
        tick(&mut uut);
        uut.reset.next = false;
        // Entry 5 is cleared at the sixth edge after reset; the write port counts from
        // the 65th (the read at an edge sees the entry before it).
        for clock in 0..QP_TABLE_ENTRIES + 3 {
            // Write entry 5 every clock; only the writes after the clear count.
            uut.s_wr_valid.next = true;
            uut.s_wr_addr.next = 5.into();
            uut.s_wr_entry.next = full;
            uut.s_rd_addr.next = 5.into();
            settle(&mut uut);
            assert_eq!(
                uut.m_ready.val(),
                clock >= QP_TABLE_ENTRIES,
                "clock {clock}"
            );
            let cleared = (7..=QP_TABLE_ENTRIES + 1).contains(&clock);
            let want = if cleared { QpEntry::default() } else { full };
            assert_eq!(uut.m_rd_entry.val(), want, "clock {clock}");
            tick(&mut uut);
        }
    }
}
