//! A one-way cell link between two NICs' network ports: a FIFO with a fixed latency, a
//! capacity (back-pressure when full), and fault hooks (drop a cell, flip bits of a word,
//! planned by cell number)
//! for reliability tests.
//!
//! Like [`crate::host_memory::HostMemory`], each cycle the testbench takes the link's
//! outputs from [`CellLink::drive`] (the sender's `m_cell_ready`, the receiver's
//! `s_cell_*`), steps both NICs, then reports their outputs to [`CellLink::observe`].
//! Cells are never reordered (SPEC: order between a source and a destination is kept).

use nic_rtl::cell::format::{encode_message, opcode, CellHeader, Message};
use std::collections::VecDeque;

/// The PORT_DOWN syndrome (nic-abi `Syndrome::PortDown`; AETH style, see
/// docs/nic-architecture.md).
pub const PORT_DOWN_SYNDROME: u8 = 0x66;

/// The NACK cell the fabric answers with when `request` (the header of a request's first
/// cell) is addressed to an unplugged or powered-off NIC: opcode NACK, source and
/// destination swapped, the request's PSN, AETH syndrome PORT_DOWN in the immediate, and
/// the RESYNC flag: the answer is the fabric's, not the responder's, so it vouches for
/// nothing sent before this PSN (the requester completes those with RESPONDER_RESTARTED,
/// never with success; docs/nic-architecture.md). `None` when the header's fields do not
/// fit a NACK (a header corrupted on the way: the fabric answers only cells whose CRC
/// checks, see [`crate::fabric`], so this is a second line).
pub fn port_down_nack(request: &CellHeader) -> Option<Vec<u64>> {
    let nack = Message {
        opcode: opcode::NACK,
        dest_node: request.src_node,
        src_node: request.dest_node,
        dest_qp: request.src_qp,
        src_qp: request.dest_qp,
        psn: request.psn,
        immediate: Some(PORT_DOWN_SYNDROME as u32),
        resync: true,
        ..Default::default()
    };
    encode_message(&nack, 8).ok()?.pop()
}

/// Whether a cell opcode is a request (answered by the responder) rather than a response.
pub fn is_request(op: u8) -> bool {
    op < opcode::RDMA_READ_RESPONSE
}

/// What the link drives in one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkOutputs {
    /// To the sender's `m_cell_ready`.
    pub sender_ready: bool,
    /// To the receiver's `s_cell_valid` / `s_cell_data` / `s_cell_last`.
    pub valid: bool,
    pub data: u64,
    pub last: bool,
}

/// A fault applied to the next cell that enters the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkFault {
    /// The whole cell disappears.
    Drop,
    /// Word `word` of the cell is XORed with `mask` (a corrupted cell: the reassembler
    /// catches it with the cell CRC).
    Corrupt { word: usize, mask: u64 },
}

pub struct CellLink {
    latency: u64,
    capacity: usize,
    cycle: u64,
    queue: VecDeque<(u64, u64, bool)>,
    driven: LinkOutputs,
    /// Faults planned by the number of the cell they hit (counting cells entering the
    /// link from 0).
    pub faults: std::collections::BTreeMap<u64, LinkFault>,
    current_fault: Option<LinkFault>,
    word_in_cell: usize,
    /// Cells that entered the link.
    pub cells_in: u64,
    pub cells_dropped: u64,
    pub cells_corrupted: u64,
    /// Cycles in which a word moved out of the link.
    pub busy_cycles: u64,
    /// Cycles in which the link offered a word and the receiver did not take it (the
    /// receiving NIC's back-pressure).
    pub held_cycles: u64,
    /// When `Some`, every cell the sender hands over is kept here whole, with the cycle
    /// its first word entered the link (before any fault): what left the sender, when.
    pub log: Option<Vec<(u64, Vec<u64>)>>,
    logging: (u64, Vec<u64>),
}

impl CellLink {
    /// `latency` >= 1 cycles, room for `capacity` >= 1 words in flight.
    pub fn new(latency: u64, capacity: usize) -> Self {
        assert!(latency >= 1, "CellLink: latency must be at least 1 cycle");
        assert!(capacity >= 1, "CellLink: capacity must be at least 1 word");
        CellLink {
            latency,
            capacity,
            cycle: 0,
            queue: VecDeque::new(),
            driven: LinkOutputs::default(),
            faults: Default::default(),
            current_fault: None,
            word_in_cell: 0,
            cells_in: 0,
            cells_dropped: 0,
            cells_corrupted: 0,
            busy_cycles: 0,
            held_cycles: 0,
            log: None,
            logging: (0, Vec::new()),
        }
    }

    /// Words in flight.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Put a whole cell into the link (the fabric's own cells, e.g. [`port_down_nack`]);
    /// call only between the sender's cells.
    pub fn inject_cell(&mut self, words: &[u64]) {
        for (i, w) in words.iter().enumerate() {
            self.queue
                .push_back((self.cycle + self.latency, *w, i + 1 == words.len()));
        }
    }

    /// Whether the sender is between cells (no cell partly through the link's input).
    pub fn at_cell_boundary(&self) -> bool {
        self.word_in_cell == 0
    }

    /// Drop everything in flight (a NIC at one end was reset or unplugged).
    pub fn flush(&mut self) {
        self.queue.clear();
        self.word_in_cell = 0;
        self.current_fault = None;
    }

    pub fn drive(&mut self) -> LinkOutputs {
        let mut out = LinkOutputs {
            sender_ready: self.queue.len() < self.capacity,
            ..Default::default()
        };
        if let Some(&(at, data, last)) = self.queue.front() {
            if at <= self.cycle {
                out.valid = true;
                out.data = data;
                out.last = last;
            }
        }
        self.driven = out;
        out
    }

    /// Apply the handshakes: the sender's `m_cell_*` outputs and the receiver's
    /// `s_cell_ready`, then advance one cycle.
    pub fn observe(
        &mut self,
        sender_valid: bool,
        sender_data: u64,
        sender_last: bool,
        receiver_ready: bool,
    ) {
        if self.driven.valid && receiver_ready {
            self.queue.pop_front();
            self.busy_cycles += 1;
        } else if self.driven.valid {
            self.held_cycles += 1;
        }
        if self.driven.sender_ready && sender_valid {
            if let Some(log) = self.log.as_mut() {
                if self.word_in_cell == 0 {
                    self.logging = (self.cycle, Vec::new());
                }
                self.logging.1.push(sender_data);
                if sender_last {
                    log.push(std::mem::take(&mut self.logging));
                }
            }
            if self.word_in_cell == 0 {
                self.current_fault = self.faults.remove(&self.cells_in);
                self.cells_in += 1;
                match self.current_fault {
                    Some(LinkFault::Drop) => self.cells_dropped += 1,
                    Some(LinkFault::Corrupt { .. }) => self.cells_corrupted += 1,
                    None => {}
                }
            }
            let mut data = sender_data;
            if let Some(LinkFault::Corrupt { word, mask }) = self.current_fault {
                if word == self.word_in_cell {
                    data ^= mask;
                }
            }
            if self.current_fault != Some(LinkFault::Drop) {
                self.queue
                    .push_back((self.cycle + self.latency, data, sender_last));
            }
            self.word_in_cell = if sender_last {
                0
            } else {
                self.word_in_cell + 1
            };
        }
        self.cycle += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Push cells of `lens` words through with the receiver ready `ready_every` cycles.
    fn run(link: &mut CellLink, lens: &[usize], ready_every: u64) -> Vec<Vec<u64>> {
        let words: Vec<(u64, bool)> = lens
            .iter()
            .enumerate()
            .flat_map(|(c, &n)| (0..n).map(move |i| (((c as u64) << 32) | i as u64, i + 1 == n)))
            .collect();
        let (mut sent, mut cells, mut cur) = (0, vec![], vec![]);
        for cycle in 0..10_000u64 {
            let out = link.drive();
            let ready = cycle % ready_every == 0;
            if out.valid && ready {
                cur.push(out.data);
                if out.last {
                    cells.push(std::mem::take(&mut cur));
                }
            }
            let (valid, data, last) = words
                .get(sent)
                .map_or((false, 0, false), |&(d, l)| (true, d, l));
            if valid && out.sender_ready {
                sent += 1;
            }
            link.observe(valid, data, last, ready);
        }
        cells
    }

    #[test]
    fn keeps_order_latency_and_backpressure() {
        let mut link = CellLink::new(5, 3);
        let cells = run(&mut link, &[4, 1, 7], 3);
        assert_eq!(cells.len(), 3);
        // The receiver takes a word every third cycle: the first word, due at cycle 5,
        // waits one cycle, every later one two.
        assert_eq!((link.busy_cycles, link.held_cycles), (12, 1 + 11 * 2));
        assert_eq!(
            cells[2],
            (0..7).map(|i| (2u64 << 32) | i).collect::<Vec<_>>()
        );
    }

    #[test]
    fn port_down_nack_decodes_and_answers_the_request() {
        use nic_rtl::cell::format::decode_cell;
        let request = CellHeader {
            opcode: opcode::RDMA_WRITE,
            dest_node: 3,
            src_node: 1,
            dest_qp: 2,
            src_qp: 5,
            psn: 0x12_3456,
            ..Default::default()
        };
        let cell = port_down_nack(&request).expect("a NACK for a valid header");
        let decoded = decode_cell(&cell, 256).expect("a well-formed cell");
        assert_eq!(decoded.header.opcode, opcode::NACK);
        assert_eq!((decoded.header.dest_node, decoded.header.dest_qp), (1, 5));
        assert_eq!((decoded.header.src_node, decoded.header.src_qp), (3, 2));
        // A header corrupted past the PSN's 24 bits gets no answer, and no panic.
        let bad = CellHeader {
            psn: 1 << 28,
            ..request
        };
        assert_eq!(port_down_nack(&bad), None);
        assert_eq!(decoded.header.psn, 0x12_3456);
        assert_eq!(decoded.immediate, Some(PORT_DOWN_SYNDROME as u32));
        assert!(decoded.header.flags & nic_rtl::cell::format::flag::RESYNC != 0);
        assert!(is_request(opcode::SEND) && is_request(opcode::ATOMIC_FETCH_ADD));
        assert!(!is_request(opcode::ACK) && !is_request(opcode::RDMA_READ_RESPONSE));
    }

    #[test]
    fn drops_and_corrupts_whole_cells() {
        let mut link = CellLink::new(1, 16);
        link.faults.insert(0, LinkFault::Drop);
        link.faults.insert(
            1,
            LinkFault::Corrupt {
                word: 1,
                mask: 0x100,
            },
        );
        let cells = run(&mut link, &[3, 3, 3], 1);
        assert_eq!(cells.len(), 2, "the first cell is dropped");
        assert_eq!(cells[0][1], ((1u64 << 32) | 1) ^ 0x100);
        assert_eq!(cells[1][1], (2u64 << 32) | 1);
        assert_eq!(
            (link.cells_dropped, link.cells_corrupted, link.cells_in),
            (1, 1, 3)
        );
    }
}
