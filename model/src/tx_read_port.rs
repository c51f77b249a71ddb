//! Reference model of the requester's `TxReadPort` (`rtl/src/requester/tx_read_port.rs`),
//! written from its doc comment (and the `PayloadBuffer`'s: a FIFO of
//! `PAYLOAD_BUFFER_DEPTH` words, taking a word while fewer wait, offering it from the
//! next clock): the request choice and its holds, the kinds of the bursts in flight, the
//! routing of the returning words. Stepped by the block's inputs only.

use nic_rtl::requester::payload_buffer::PAYLOAD_BUFFER_DEPTH;
use std::collections::VecDeque;

/// A request at a client port: `(addr, words)`.
pub type Request = (u32, u16);

/// The inputs of one clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortInputs {
    pub fetch_req: Option<Request>,
    pub pay_req: Option<Request>,
    pub req_ready: bool,
    /// A word from host memory: `(data, last)`.
    pub rd: Option<(u64, bool)>,
    pub fetch_ready: bool,
    pub pay_ready: bool,
}

/// The outputs of one clock (data fields only with their valid).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortOutputs {
    pub fetch_req_ready: bool,
    pub pay_req_taken: bool,
    pub req: Option<Request>,
    pub rd_ready: bool,
    pub fetch: Option<u64>,
    pub pay: Option<(u64, bool)>,
    pub pay_burst_end: bool,
}

/// The port, empty after reset.
#[derive(Clone, Debug, Default)]
pub struct TxReadPortModel {
    pay_held: bool,
    fetch_held: bool,
    /// Kinds of the bursts in flight, oldest first (true: a payload read).
    tags: VecDeque<bool>,
    buffer: VecDeque<(u64, bool)>,
}

impl TxReadPortModel {
    pub fn new() -> Self {
        Self::default()
    }

    fn pay_shown(&self, i: &PortInputs) -> bool {
        (i.pay_req.is_some() && !self.fetch_held) || self.pay_held
    }

    /// What the ports show this clock with inputs `i`. A held payload request shows the
    /// fields at `s_pay_req_*`, which its source keeps (`pay_req` is `Some`).
    pub fn outputs(&self, i: &PortInputs) -> PortOutputs {
        let head_pay = self.tags.front() == Some(&true);
        let pay_show = self.pay_shown(i);
        let rd_ready = if head_pay {
            self.buffer.len() < PAYLOAD_BUFFER_DEPTH
        } else {
            i.fetch_ready
        };
        PortOutputs {
            fetch_req_ready: i.req_ready && !pay_show,
            pay_req_taken: pay_show && i.req_ready,
            req: if pay_show { i.pay_req } else { i.fetch_req },
            rd_ready,
            fetch: i.rd.filter(|_| !head_pay).map(|(d, _)| d),
            pay: self.buffer.front().copied(),
            pay_burst_end: head_pay && rd_ready && i.rd.is_some_and(|(_, last)| last),
        }
    }

    /// The clock edge after a clock with inputs `i`.
    pub fn step(&mut self, i: &PortInputs) {
        let out = self.outputs(i);
        let head_pay = self.tags.front() == Some(&true);
        let pay_show = self.pay_shown(i);
        if i.pay_ready && !self.buffer.is_empty() {
            self.buffer.pop_front();
        }
        if let Some((d, last)) = i.rd {
            if out.rd_ready {
                if head_pay {
                    self.buffer.push_back((d, last));
                }
                if last {
                    self.tags.pop_front();
                }
            }
        }
        if i.req_ready && (pay_show || i.fetch_req.is_some()) {
            self.tags.push_back(pay_show);
        }
        self.pay_held = pay_show && !i.req_ready;
        self.fetch_held = !pay_show && i.fetch_req.is_some() && !i.req_ready;
    }
}
