//! The driver's control SENDs as the fabric delivers them: what the rejoin bench reads its
//! phases from (`crate::rejoin_bench`), without any hook in the driver.
//!
//! A control SEND is a SEND_IMMEDIATE whose payload starts with the control header
//! (`nic_driver::control`); its last cell carries the immediate
//! [`nic_driver::driver::CONTROL_IMMEDIATE`]. The messages are read from the first cell's payload
//! (a SEND longer than one cell yields the messages that fit in its first cell); the words
//! of the whole SEND on the wire follow from the header's message length.

use nic_cosim::fabric::Delivery;
use nic_driver::control::{ControlMessage, ControlSend, HEADER_BYTES};
use nic_rtl::cell::format::{decode_cell, opcode, CellHeader, HEADER_WORDS};

/// One control SEND, seen at its first cell's delivery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlCell {
    /// The cycle the fabric delivered the first cell.
    pub cycle: u64,
    /// The cycle the fabric could first have delivered it: `cycle - ready` is its time at
    /// the receiver's port, its own words plus any queueing (the link busy, or the NIC
    /// not taking cells).
    pub ready: u64,
    pub src: usize,
    pub dst: usize,
    /// The SEND's packet sequence number (a retransmission repeats it).
    pub psn: u32,
    /// Words of the whole SEND on the wire (every cell: header, payload, immediate, CRC).
    pub words: u64,
    /// The header's stream: the sender's stream of sequenced messages to the receiver.
    pub stream: u32,
    /// The header's sequence number of the SEND's first sequenced message.
    pub first_seq: u32,
    /// The messages read from the first cell.
    pub messages: Vec<ControlMessage>,
}

/// Words a SEND_IMMEDIATE of `bytes` payload bytes occupies on the wire in cells of
/// `cell_payload` bytes: per cell a header and a CRC word, the payload words, and the
/// immediate word of the last cell.
pub fn send_words(bytes: u64, cell_payload: u64) -> u64 {
    let cells = bytes.div_ceil(cell_payload).max(1);
    cells * (HEADER_WORDS as u64 + 1) + bytes.div_ceil(8) + 1
}

impl ControlCell {
    /// The control SEND whose first cell `d` is, if it is one.
    pub fn decode(d: &Delivery) -> Option<ControlCell> {
        if d.words.len() < HEADER_WORDS {
            return None;
        }
        let h = CellHeader::from_words([d.words[0], d.words[1], d.words[2]]);
        if h.opcode != opcode::SEND_IMMEDIATE || !h.first() {
            return None;
        }
        let cell_payload = nic_rtl::DEFAULT_CELL_PAYLOAD;
        let cell = decode_cell(&d.words, cell_payload).ok()?;
        if h.last() && cell.immediate != Some(nic_driver::driver::CONTROL_IMMEDIATE) {
            return None;
        }
        let len = (h.message_length as usize).min(cell.payload.len());
        let bytes = &cell.payload[..len];
        let (stream, first_seq) = ControlSend::decode_header(bytes).ok()?;
        if bytes.len() == HEADER_BYTES {
            return None;
        }
        let mut messages = vec![];
        let mut pos = HEADER_BYTES;
        while pos < bytes.len() {
            match ControlMessage::decode_prefix(&bytes[pos..]) {
                Ok((m, used)) => {
                    messages.push(m);
                    pos += used;
                }
                Err(_) => break,
            }
        }
        Some(ControlCell {
            cycle: d.cycle,
            ready: d.ready,
            src: d.src,
            dst: d.dst,
            psn: h.psn,
            words: send_words(h.message_length as u64, cell_payload as u64),
            stream,
            first_seq,
            messages,
        })
    }

    /// Whether one of its messages satisfies `f`.
    pub fn carries(&self, f: impl Fn(&ControlMessage) -> bool) -> bool {
        self.messages.iter().any(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nic_rtl::cell::format::{encode_message, Message};

    #[test]
    fn send_words_follow_the_cell_format() {
        // 13 bytes: one cell of header 3, 2 payload words, immediate, CRC.
        assert_eq!(send_words(13, 256), 7);
        // 300 bytes: two cells, 38 payload words.
        assert_eq!(send_words(300, 256), 2 * 4 + 38 + 1);
    }

    #[test]
    fn a_control_send_is_read_from_its_first_cell() {
        let send = ControlSend {
            stream: 3,
            first_seq: 0,
            messages: vec![
                ControlMessage::Booting { incarnation: 9 },
                ControlMessage::TptClear,
            ],
        };
        let bytes = send.encode();
        let msg = Message {
            opcode: opcode::SEND_IMMEDIATE,
            dest_node: 1,
            src_node: 2,
            dest_qp: 2,
            src_qp: 1,
            psn: 0x40,
            vaddr: 0,
            stag: 0,
            dma_length: 0,
            immediate: Some(nic_driver::driver::CONTROL_IMMEDIATE),
            invalidate: false,
            resync: false,
            payload: bytes.clone(),
        };
        let cells = encode_message(&msg, nic_rtl::DEFAULT_CELL_PAYLOAD).unwrap();
        let d = Delivery {
            cycle: 100,
            ready: 90,
            src: 2,
            dst: 1,
            words: cells[0].clone().into(),
        };
        let c = ControlCell::decode(&d).expect("a control SEND");
        assert_eq!(c.messages, send.messages);
        assert_eq!(c.words, send_words(bytes.len() as u64, 256));
        assert_eq!(c.words, cells[0].len() as u64);
        assert!(c.carries(|m| matches!(m, ControlMessage::Booting { .. })));
    }
}
