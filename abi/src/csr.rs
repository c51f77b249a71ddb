//! CSR offsets (byte addresses of 64-bit registers); `docs/csr-map.md` describes each.

pub const NIC_ID: u16 = 0x0000;
pub const NIC_ID_VALUE: u64 = 0x4E49_4331_0001_0000;
pub const NIC_CONFIG: u16 = 0x0008;
pub const NODE_ID: u16 = 0x0010;
pub const ENABLE: u16 = 0x0018;
pub const CQ_BASE: u16 = 0x0020;
pub const CQ_SIZE_LOG2: u16 = 0x0028;
pub const CQ_PI: u16 = 0x0030;
pub const CQ_CI: u16 = 0x0038;
pub const RETRY_TIMEOUT: u16 = 0x0040;
pub const RETRY_LIMIT: u16 = 0x0048;
pub const NACK_SENT: u16 = 0x0100;
pub const NACK_RECEIVED: u16 = 0x0140;
pub const STAT_MESSAGES_SENT: u16 = 0x0180;
pub const STAT_MESSAGES_RECEIVED: u16 = 0x0188;
pub const STAT_RETRANSMISSIONS: u16 = 0x0190;
pub const STAT_DROPPED: u16 = 0x0198;
pub const STAT_CELLS_FAILED: u16 = 0x01A0;

/// `ENABLE` bits.
pub const ENABLE_SEND_RECV: u64 = 1 << 0;
pub const ENABLE_RDMA: u64 = 1 << 1;

/// Reset values.
pub const RETRY_TIMEOUT_RESET: u64 = 4096;
pub const RETRY_LIMIT_RESET: u64 = 7;
pub const EXC_TIMEOUT_RESET: u64 = 65536;

/// Per queue pair registers: `qp_base(q) + QP_*`.
pub const QP_BASE: u16 = 0x1000;
pub const QP_STRIDE: u16 = 0x80;
pub const QP_SQ_BASE: u16 = 0x00;
pub const QP_SQ_SIZE_LOG2: u16 = 0x08;
pub const QP_SQ_PI: u16 = 0x10;
pub const QP_SQ_CI: u16 = 0x18;
pub const QP_RQ_BASE: u16 = 0x20;
pub const QP_RQ_SIZE_LOG2: u16 = 0x28;
pub const QP_RQ_PI: u16 = 0x30;
pub const QP_RQ_CI: u16 = 0x38;
pub const QP_REMOTE: u16 = 0x40;
pub const QP_CTRL: u16 = 0x48;
pub const QP_STATUS: u16 = 0x50;

/// `QP_CTRL` bits.
pub const QP_CTRL_ENABLE: u64 = 1 << 0;
pub const QP_CTRL_RESET: u64 = 1 << 1;
/// Send-side reset: as `QP_CTRL_RESET` for the send queue only (`SQ_PI = SQ_CI` = the start
/// PSN in bits 31:8, what was outstanding forgotten, RESYNC on the next message); the
/// responder state and the receive queue are kept. The driver flushes a queue pair with it
/// when the peer announces a restart (see `docs/nic-architecture.md`, "Rejoin support").
pub const QP_CTRL_SEND_RESET: u64 = 1 << 2;
/// Responder resume: the responder takes up a PSN sequence another NIC was receiving
/// (a failover, `docs/multi-nic.md`): its expected PSN becomes bits 31:8, it is synced, and
/// that PSN becomes its resync point (answers carry RESYNC, a duplicate before it is
/// answered NACK SEQUENCE_ERROR, never executed again); the refusal window and the
/// SEQUENCE_ERROR-sent flag are cleared. A message of the queue pair in progress is
/// abandoned, as by a reset. With `QP_CTRL_RESET` in the same write, the reset comes first.
pub const QP_CTRL_RESUME: u64 = 1 << 3;
/// `QP_CTRL` bits 31:8: start PSN written with a reset, expected PSN with a resume.
pub const QP_CTRL_START_PSN_SHIFT: u32 = 8;

/// `QP_STATUS` decoded: bits 23:0 `sq_next`; 47:24 the responder's expected PSN (kept
/// readable through a `QP_CTRL_RESET`, which clears only `synced`); 48 synced; 49 waiting
/// for a response; 55:52 retry count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpStatus {
    pub sq_next: u32,
    pub expected_psn: u32,
    pub synced: bool,
    pub waiting: bool,
    pub retry_count: u8,
}

impl QpStatus {
    pub const EXPECTED_PSN_SHIFT: u32 = 24;
    pub const SYNCED_BIT: u32 = 48;
    pub const WAITING_BIT: u32 = 49;
    pub const RETRY_COUNT_SHIFT: u32 = 52;

    pub fn from_bits(v: u64) -> Self {
        QpStatus {
            sq_next: (v & 0xFF_FFFF) as u32,
            expected_psn: (v >> Self::EXPECTED_PSN_SHIFT & 0xFF_FFFF) as u32,
            synced: v >> Self::SYNCED_BIT & 1 != 0,
            waiting: v >> Self::WAITING_BIT & 1 != 0,
            retry_count: (v >> Self::RETRY_COUNT_SHIFT & 0xF) as u8,
        }
    }
}

/// Byte offset of register `reg` of queue pair `qp`.
pub const fn qp(qp: usize, reg: u16) -> u16 {
    QP_BASE + QP_STRIDE * qp as u16 + reg
}

/// TPT management and the exception queue.
pub const TPT_INDEX: u16 = 0x4000;
pub const TPT_WORD0: u16 = 0x4008;
pub const TPT_VADDR: u16 = 0x4010;
pub const TPT_LENGTH: u16 = 0x4018;
pub const TPT_PADDR: u16 = 0x4020;
pub const TPT_COMMAND: u16 = 0x4028;
pub const TPT_STATUS: u16 = 0x4030;
pub const EXC_HEAD0: u16 = 0x4100;
pub const EXC_HEAD1: u16 = 0x4108;
pub const EXC_HEAD2: u16 = 0x4110;
pub const EXC_ANSWER: u16 = 0x4118;
pub const EXC_TIMEOUT: u16 = 0x4120;

/// `EXC_HEAD0` fields.
pub const EXC_HEAD_VALID: u64 = 1 << 0;
pub const EXC_HEAD_QP_SHIFT: u32 = 2;
pub const EXC_HEAD_ACCESS_SHIFT: u32 = 8;
pub const EXC_HEAD_INVALIDATE: u64 = 1 << 12;
pub const EXC_HEAD_STAG_SHIFT: u32 = 32;
/// The head's tag (`EXC_HEAD0` and `EXC_ANSWER` bits 23:16): a sequence number of the
/// exceptions (it advances when a head is answered or times out, wraps at 256). An answer
/// is applied only when it echoes the tag of the head it answers.
pub const EXC_TAG_SHIFT: u32 = 16;
pub const EXC_TAG_MASK: u64 = 0xFF << EXC_TAG_SHIFT;

/// `EXC_ANSWER` fields: bit 0 translate (else refuse), the head's tag, 63:32 the physical
/// address.
pub const EXC_ANSWER_TRANSLATE: u64 = 1 << 0;
pub const EXC_ANSWER_PADDR_SHIFT: u32 = 32;

/// `TPT_STATUS` fields: bit 0 busy, 15:8 commands refused, 23:16 exception answers
/// ignored (no head, or a tag that is not the head's).
pub const TPT_STATUS_BUSY: u64 = 1 << 0;
pub const TPT_STATUS_REFUSED_SHIFT: u32 = 8;
pub const TPT_STATUS_STALE_ANSWERS_SHIFT: u32 = 16;

/// The `EXC_ANSWER` value that answers the head read as `head0`: translate to `paddr`,
/// or refuse (`None`).
pub const fn exc_answer(head0: u64, paddr: Option<u32>) -> u64 {
    let tag = head0 & EXC_TAG_MASK;
    match paddr {
        Some(p) => tag | EXC_ANSWER_TRANSLATE | (p as u64) << EXC_ANSWER_PADDR_SHIFT,
        None => tag,
    }
}

/// `TPT_COMMAND` values.
pub const TPT_COMMAND_WRITE: u64 = 1;
pub const TPT_COMMAND_INVALIDATE: u64 = 2;
pub const TPT_COMMAND_READ: u64 = 3;
/// Read the entry into the staging registers and invalidate it, as one operation: no
/// lookup runs between the read and the invalidation.
pub const TPT_COMMAND_TAKE: u64 = 4;

/// `TPT_WORD0` bits.
pub const TPT_VALID: u64 = 1 << 0;
pub const TPT_REMOTE_READ: u64 = 1 << 1;
pub const TPT_REMOTE_WRITE: u64 = 1 << 2;
pub const TPT_ATOMIC: u64 = 1 << 3;
pub const TPT_ONE_SHOT: u64 = 1 << 4;
pub const TPT_KEY_SHIFT: u32 = 8;
