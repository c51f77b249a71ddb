//! The reference model of `MessageContext` (`rtl/src/responder/message_context.rs`),
//! written from its documentation: the registers of the receive engine's message in
//! progress and what each state of the message loads into them.

use nic_rtl::responder::receive_queue_engine::{MessageMode, ResponderState};

/// An answer owed (the `OwedAnswer` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Owe {
    pub kind: u8,
    pub psn: u32,
    pub syndrome: u8,
    pub resync: bool,
    pub refusal: u32,
}

/// A write-back to the per-QP RAMs (the `QpWriteBack` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteBack {
    pub state: bool,
    pub rq_ci: u32,
    pub expected: u32,
    pub atomic: bool,
    pub refused: bool,
    pub window: u32,
    pub rs_set: bool,
    pub rs_psn: u32,
    pub rs_clear: bool,
    pub synced_set: bool,
    pub nak_set: bool,
    pub nak_clear: bool,
}

/// The message's header (the `MessageHeader` fields the answers carry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub opcode: u8,
    pub psn: u32,
    pub src_node: u16,
    pub src_qp: u16,
    pub msg_length: u32,
    pub has_immediate: bool,
}

/// The answers the block assembles (`m_owe`, `m_answer`, `m_cpl`), field by field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Answers {
    /// `m_owe`: `qp`, `kind`, `psn`, `syndrome`, `refusal`, `addr`, `length`, `value`,
    /// `dest_node`, `dest_qp`, `resync`.
    pub owe: (u8, u8, u32, u8, u32, u32, u32, u64, u16, u16, bool),
    /// `m_answer`: `qp`, `psn`, `syndrome`, `response`, `resync`.
    pub answer: (u8, u32, u8, bool, bool),
    /// `m_cpl`: `opcode`, `status`, `qp`, `is_receive`, `has_immediate`, `byte_count`,
    /// `wqe_index`, `src_node`, `src_qp`, `wr_id`, `immediate`.
    pub cpl: (u8, u8, u8, bool, bool, u32, u32, u16, u16, u64, u32),
}

/// Everything the block is given in one clock.
#[derive(Clone, Copy, Debug)]
pub struct CtxInputs {
    pub reset: bool,
    pub state: ResponderState,
    pub first_taken: bool,
    pub fail_owe: bool,
    pub response_answer: bool,
    pub commit: bool,
    pub end_mode: MessageMode,
    pub qp: u8,
    pub is_send: bool,
    pub is_response: bool,
    pub is_atomic_response: bool,
    pub consumes: bool,
    pub vaddr: u32,
    pub dma_length: u32,
    pub msg_length: u32,
    pub psn: u32,
    pub rd_expected: u32,
    pub rd_refused: u32,
    pub rd_rs_psn: u32,
    pub rd_rs_valid: bool,
    pub rd_expect_addr: u32,
    pub rd_expect_length: u32,
    pub rd_atomic_value: u64,
    pub rq_ci: u32,
    pub act_write_back: WriteBack,
    pub act_owe_load: bool,
    pub act_owe: Owe,
    pub act_ack_load: bool,
    pub act_ack_syndrome: u8,
    pub act_ack_refusals: u32,
    pub act_resync_load: bool,
    pub act_ack_resync: bool,
    pub act_position_load: bool,
    pub act_rs_forget: bool,
    pub act_mode: MessageMode,
    pub resynced_q: bool,
    pub win_effective: u32,
    pub win_window_eff: u32,
    pub win_expected_next: u32,
    pub win_code: u8,
    pub win_far_commit: bool,
    pub tpt_answered: bool,
    pub tpt_paddr: u32,
    pub rqe_fetched: bool,
    pub rqe_buffer_addr: u32,
    pub rqe_buffer_length: u32,
    pub rqrd_valid: bool,
    pub rqrd_data: u64,
    pub header: Header,
    pub wr_id: u64,
    pub message_end: bool,
    /// The presented outcome's immediate.
    pub immediate: u32,
}

/// The block's registers (every output but `far_next` is one of them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageContextModel {
    pub ctx_qp: u8,
    pub base: u32,
    pub limit: u32,
    pub value: u64,
    pub cpl_status: u8,
    pub length_error: bool,
    pub rqe_done: bool,
    pub atomic_done: bool,
    pub expected: u32,
    pub refused: u32,
    pub rs_psn: u32,
    pub rs_valid: bool,
    pub owe: Owe,
    pub ack_syndrome: u8,
    pub ack_response: bool,
    pub ack_refusals: u32,
    pub ack_resync: bool,
    pub write_back: WriteBack,
    pub far_commit: bool,
    pub far_psn: bool,
    pub immediate: u32,
}

/// `Syndrome::CrcOrMalformed`.
const CRC_OR_MALFORMED: u8 = nic_abi::Syndrome::CrcOrMalformed as u8;
const PSN_MASK: u32 = 0xff_ffff;

impl MessageContextModel {
    /// As after power-up (every register 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// The answers, from the registers and this clock's header, `wr_id` and `rq_ci`.
    pub fn answers(&self, i: &CtxInputs) -> Answers {
        let h = i.header;
        let o = self.owe;
        Answers {
            owe: (
                self.ctx_qp,
                o.kind,
                o.psn,
                o.syndrome,
                if o.kind < 2 { o.refusal } else { 0 },
                self.base,
                self.limit,
                self.value,
                h.src_node,
                h.src_qp,
                o.resync,
            ),
            answer: (
                self.ctx_qp,
                h.psn,
                self.ack_syndrome,
                self.ack_response,
                self.ack_resync,
            ),
            cpl: (
                h.opcode,
                self.cpl_status,
                self.ctx_qp,
                true,
                h.has_immediate,
                h.msg_length,
                i.rq_ci,
                h.src_node,
                h.src_qp,
                i.wr_id,
                self.immediate,
            ),
        }
    }

    /// The Act clock's `far_next`.
    pub fn far_next(&self, i: &CtxInputs) -> bool {
        if i.resynced_q {
            self.far_psn
        } else {
            self.far_commit
        }
    }

    /// One clock edge with inputs `i`.
    pub fn step(&mut self, i: &CtxInputs) {
        use ResponderState as S;
        let q = *self;
        let mut n = q;
        n.far_commit = i.win_far_commit;
        n.far_psn = (i.psn.wrapping_add(1).wrapping_sub(q.rs_psn) & PSN_MASK) > 8;
        n.write_back = WriteBack::default();
        if matches!(i.state, S::Lookup | S::FailLookup) {
            n.expected = i.rd_expected;
            n.refused = i.rd_refused;
            n.rs_psn = i.rd_rs_psn;
            n.rs_valid = i.rd_rs_valid;
        }
        match i.state {
            S::Idle if i.first_taken => n.ctx_qp = i.qp,
            S::Lookup => {
                n.value = i.rd_atomic_value;
                (n.base, n.limit) = if i.is_response {
                    (i.rd_expect_addr, i.rd_expect_length)
                } else {
                    (i.vaddr, i.dma_length)
                };
                n.rqe_done = false;
                n.length_error = false;
            }
            S::FailDecide if i.fail_owe => {
                n.owe = Owe {
                    kind: 1,
                    psn: q.expected,
                    syndrome: CRC_OR_MALFORMED,
                    resync: q.rs_valid,
                    refusal: q.refused & 0x1f_ffff,
                };
                n.write_back.nak_set = true;
            }
            S::Decide => {
                n.cpl_status = 0;
                if i.is_send {
                    if q.base & 7 != 0 {
                        n.cpl_status = 3;
                        n.limit = 0;
                    } else if i.msg_length > q.limit {
                        n.cpl_status = 1;
                    }
                }
                if i.is_response && i.is_atomic_response && q.limit > 8 {
                    n.limit = 8;
                }
            }
            S::Act => {
                n.write_back = i.act_write_back;
                if i.act_owe_load {
                    n.owe = i.act_owe;
                }
                if i.act_ack_load {
                    n.ack_syndrome = i.act_ack_syndrome;
                    n.ack_response = false;
                    n.ack_refusals = i.act_ack_refusals;
                }
                if i.act_resync_load {
                    n.ack_resync = i.act_ack_resync;
                }
                if i.act_position_load {
                    n.expected = i.win_effective;
                    n.refused = i.win_window_eff;
                }
                if i.act_write_back.rs_set {
                    n.rs_psn = i.psn;
                    n.rs_valid = true;
                }
                if i.act_rs_forget {
                    n.rs_valid = false;
                }
                if i.act_mode == MessageMode::ExecAtomic {
                    n.atomic_done = false;
                }
            }
            S::TptWait if i.tpt_answered => n.base = i.tpt_paddr,
            S::RqeFetch if i.rqe_fetched => {
                if i.is_send {
                    n.base = i.rqe_buffer_addr;
                    n.limit = i.rqe_buffer_length;
                    n.length_error =
                        i.msg_length > i.rqe_buffer_length || i.rqe_buffer_addr & 7 != 0;
                }
                n.rqe_done = true;
            }
            S::Drain if i.response_answer => {
                n.ack_syndrome = 0;
                n.ack_response = true;
                n.ack_refusals = 0;
            }
            S::AtomicData if i.rqrd_valid => n.value = i.rqrd_data,
            S::AtomicWrite => n.atomic_done = true,
            S::Commit if i.commit => {
                let shifted = (q.refused << 3) & PSN_MASK;
                n.write_back = WriteBack {
                    state: true,
                    rq_ci: (i.rq_ci + i.consumes as u32) & PSN_MASK,
                    expected: i.win_expected_next,
                    atomic: i.end_mode == MessageMode::ExecAtomic,
                    refused: true,
                    window: if q.owe.kind == 1 {
                        shifted | i.win_code as u32
                    } else {
                        shifted
                    },
                    rs_clear: q.far_commit,
                    ..WriteBack::default()
                };
            }
            _ => {}
        }
        if i.message_end {
            n.immediate = i.immediate;
        }
        if i.reset {
            n.write_back = WriteBack::default();
        }
        *self = n;
    }
}
