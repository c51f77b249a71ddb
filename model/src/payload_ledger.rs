//! Reference model of the requester's `PayloadLedger` (`rtl/src/requester/payload_ledger.rs`),
//! written from its doc comment: the messages whose payload is held in the payload buffer
//! (at most two, oldest first, with their QP and PSN), how many are granted, the words
//! reserved, whether a long payload is arriving, and the registered room for the next
//! early payload. Stepped by the strobes at the block's ports only.

use std::collections::VecDeque;

/// The strobes of one clock at the ledger's inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LedgerInputs {
    /// A payload read taken: `(qp, psn, words)`.
    pub push: Option<(u8, u32, u16)>,
    pub grant: bool,
    pub pop: bool,
    pub pop_last: bool,
    pub burst_end: bool,
    /// The words of the payload that may be read early next.
    pub words: u16,
}

/// What the ledger's registered outputs show in a clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LedgerOutputs {
    pub room: bool,
    pub msgs: u8,
    pub granted: u8,
    pub out_ok: bool,
    pub long: bool,
}

/// The ledger of a buffer of `depth` words.
#[derive(Clone, Debug)]
pub struct PayloadLedgerModel {
    depth: u32,
    /// The messages held, oldest first: `(qp, psn)`.
    held: VecDeque<(u8, u32)>,
    granted: u8,
    reserved: u32,
    long: bool,
    room: bool,
}

impl PayloadLedgerModel {
    /// Empty, as after reset.
    pub fn new(depth: u32) -> Self {
        PayloadLedgerModel {
            depth,
            held: VecDeque::new(),
            granted: 0,
            reserved: 0,
            long: false,
            room: false,
        }
    }

    /// The registered outputs this clock.
    pub fn outputs(&self) -> LedgerOutputs {
        LedgerOutputs {
            room: self.room,
            msgs: self.held.len() as u8,
            granted: self.granted,
            out_ok: self.granted != 0,
            long: self.long,
        }
    }

    /// `m_on_una`: a message held, or the current one `cur` (`s_cur_valid` with
    /// `s_push_qp` / `s_push_psn`), is QP `qp`'s PSN `psn`.
    pub fn on_una(&self, qp: u8, psn: u32, cur: Option<(u8, u32)>) -> bool {
        self.held.contains(&(qp, psn)) || cur == Some((qp, psn))
    }

    /// Words reserved in the buffer.
    pub fn reserved(&self) -> u32 {
        self.reserved
    }

    /// One clock edge with the strobes `i` of the clock before it.
    pub fn step(&mut self, i: LedgerInputs) {
        if i.pop {
            self.reserved -= 1;
        }
        if i.pop_last {
            self.held.pop_front().expect("a message held");
            self.granted -= 1;
        }
        if let Some((qp, psn, words)) = i.push {
            assert!(self.held.len() < 2, "a push with two messages held");
            self.held.push_back((qp, psn));
            self.reserved += words as u32;
            if words as u32 > self.depth {
                self.long = true;
            } else if i.burst_end {
                self.long = false;
            }
        } else if i.burst_end {
            self.long = false;
        }
        if i.grant {
            self.granted += 1;
        }
        self.room =
            i.push.is_none() && self.held.len() < 2 && self.reserved + i.words as u32 <= self.depth;
    }
}
