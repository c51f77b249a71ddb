//! The reference model of `TptClient` (`rtl/src/responder/tpt_client.rs`), written from
//! its documentation: the range check without a TPT, the TPT request a decision asks
//! for, and the answer's verdict.

/// Everything the client is given in one clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct TptClientInputs {
    pub vaddr: u64,
    pub stag: u32,
    pub dma_length: u32,
    pub is_read: bool,
    pub is_atomic: bool,
    pub invalidate: bool,
    pub consumes: bool,
    pub qp: u8,
    pub rq_empty: bool,
    pub capture: bool,
    pub init: bool,
    pub request: bool,
    pub waiting: bool,
    pub req_ready: bool,
    pub resp_valid: bool,
    pub resp_ok: bool,
    pub resp_paddr: u32,
}

/// The TPT request on `m_tpt_req_*` (shown while `request` and a TPT is present).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TptRequest {
    pub stag: u32,
    pub vaddr: u64,
    pub length: u32,
    /// 1 remote read, 2 remote write, 4 remote atomic.
    pub access: u8,
    pub invalidate: bool,
    pub qp: u8,
    pub commit: bool,
}

/// What the client shows in one clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TptClientOutputs {
    /// `Some` exactly when `m_tpt_req_valid`.
    pub request: Option<TptRequest>,
    pub req_taken: bool,
    /// The answer's physical address, `Some` exactly when `answered`.
    pub answered: Option<u32>,
    pub access_ok: bool,
    pub access_done: bool,
}

/// The client's state (zero at power-on).
#[derive(Clone, Debug)]
pub struct TptClientModel {
    tpt_present: bool,
    /// The range registered at `capture`: `vaddr[63:32] == 0`, and `vaddr[31:0] + length`.
    high_zero: bool,
    range_end: u64,
    access_ok: bool,
    access_done: bool,
}

fn length(i: &TptClientInputs) -> u32 {
    if i.is_atomic {
        8
    } else {
        i.dma_length
    }
}

impl TptClientModel {
    pub fn new(tpt_present: bool) -> Self {
        TptClientModel {
            tpt_present,
            high_zero: false,
            range_end: 0,
            access_ok: false,
            access_done: false,
        }
    }

    pub fn outputs(&self, i: &TptClientInputs) -> TptClientOutputs {
        let access = if i.is_atomic {
            4
        } else if i.is_read {
            1
        } else {
            2
        };
        TptClientOutputs {
            request: (i.request && self.tpt_present).then_some(TptRequest {
                stag: i.stag,
                vaddr: i.vaddr,
                length: length(i),
                access,
                invalidate: i.invalidate,
                qp: i.qp,
                commit: !(i.consumes && i.rq_empty),
            }),
            req_taken: i.request && i.req_ready,
            answered: (i.waiting && i.resp_valid).then_some(i.resp_paddr),
            access_ok: self.access_ok,
            access_done: self.access_done,
        }
    }

    pub fn clock(&mut self, i: &TptClientInputs) {
        // Judged from the range registered before this clock.
        let range_ok = self.high_zero && self.range_end <= 1 << 32;
        if i.capture {
            self.high_zero = i.vaddr >> 32 == 0;
            self.range_end = (i.vaddr & 0xFFFF_FFFF) + length(i) as u64;
        }
        if i.waiting && i.resp_valid {
            self.access_ok = i.resp_ok && i.resp_paddr % 8 == 0;
            self.access_done = true;
        } else if i.init {
            self.access_ok = range_ok || self.tpt_present;
            self.access_done = !self.tpt_present;
        }
    }
}
