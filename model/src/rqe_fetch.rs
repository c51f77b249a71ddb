//! The reference model of `RqeFetch` (`rtl/src/responder/rqe_fetch.rs`), written from its
//! documentation: one receive queue entry (`nic_abi::Rqe`, three words) read per fetch.

/// What the fetcher shows in one clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RqeFetchOutputs {
    pub busy: bool,
    pub req_valid: bool,
    pub req_addr: u32,
    pub req_words: u32,
    pub data_ready: bool,
    pub done: bool,
    pub buffer_addr: u32,
    pub buffer_length: u32,
    pub wr_id: u64,
}

/// What the fetcher is given in one clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct RqeFetchInputs {
    pub reset: bool,
    pub start: bool,
    pub addr: u32,
    pub req_ready: bool,
    pub data: u64,
    pub data_valid: bool,
    pub data_last: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Idle,
    Request,
    Data,
}

/// `RqeFetch`, clock by clock.
#[derive(Clone, Debug, Default)]
pub struct RqeFetchModel {
    phase: Phase,
    addr: u32,
    /// Words of the entry taken so far in this fetch.
    taken: u32,
    buffer_addr: u32,
    buffer_length: u32,
    wr_id: u64,
}

impl RqeFetchModel {
    pub fn new() -> Self {
        Self::default()
    }

    /// This clock's outputs for `i` (before the clock edge).
    pub fn outputs(&self, i: &RqeFetchInputs) -> RqeFetchOutputs {
        let data_ready = self.phase == Phase::Data;
        RqeFetchOutputs {
            busy: self.phase != Phase::Idle,
            req_valid: self.phase == Phase::Request,
            req_addr: self.addr,
            req_words: 3,
            data_ready,
            done: data_ready && i.data_valid && i.data_last,
            buffer_addr: self.buffer_addr,
            buffer_length: self.buffer_length,
            wr_id: self.wr_id,
        }
    }

    /// The clock edge.
    pub fn clock(&mut self, i: &RqeFetchInputs) {
        let o = self.outputs(i);
        match self.phase {
            Phase::Idle if i.start => {
                self.addr = i.addr;
                self.taken = 0;
                self.phase = Phase::Request;
            }
            Phase::Request if i.req_ready => self.phase = Phase::Data,
            _ => {}
        }
        if o.data_ready && i.data_valid {
            match self.taken {
                0 => self.buffer_addr = i.data as u32,
                1 => self.buffer_length = i.data as u32,
                2 => self.wr_id = i.data,
                _ => {}
            }
            self.taken += 1;
            if i.data_last {
                self.phase = Phase::Idle;
            }
        }
        if i.reset {
            self.phase = Phase::Idle;
        }
    }
}
