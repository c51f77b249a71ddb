//! Control messages the drivers exchange as SEND payloads (source document 000, Figs. 4, 7, 8).
//!
//! # Wire format (version 2)
//!
//! Little-endian. A *control SEND* is a header followed by one or more messages back to
//! back (the driver bundles what it has queued for a node, e.g. BOOTING and the TPT push
//! behind it); each message is self-delimiting, the SEND's byte count ends the last one.
//!
//! | bytes | header field |
//! | --- | --- |
//! | 0 | [`MAGIC_VERSION`]: bits 7:4 the magic `0xA`, bits 3:0 the format version (2) |
//! | 1..4 | u24 sequence number of the SEND's first *sequenced* message (see below; when it carries none, the number its sender's next one gets) |
//! | 4..8 | u32 stream: names the sender's current stream of sequenced messages to this receiver |
//!
//! Each message is a kind byte and the kind's body:
//!
//! | kind | code | body | total | sequenced |
//! | --- | --- | --- | --- | --- |
//! | BOOTING | 1 | u32 incarnation of the sender | 5 | no |
//! | ACK | 2 | u8 flags (bit 0 `joined`, others zero), u32 incarnation being acknowledged | 6 | no |
//! | RDMA_READY | 3 | u32 incarnation of the sender | 5 | yes |
//! | TPT_UPDATE | 4 | u16 count (1..=[`MAX_UPDATE_ENTRIES`]), then per entry 21 bytes: u32 handle, u64 logical address, u32 physical address, u32 length, u8 protection (1 read-only, 2 write-only, 3 read-write) | 3 + 21 n | yes |
//! | TPT_REMOVE | 5 | u16 count (1..=[`MAX_REMOVE_HANDLES`]), then u32 handles | 3 + 4 n | yes |
//! | HEARTBEAT | 6 | nothing (the baseline of 000 \[0006\]) | 1 | no |
//! | PROBE | 7 | u32 incarnation of the sender | 5 | no |
//! | TPT_CLEAR | 8 | nothing: forget the copy of the sender's part (a push of the whole part follows) | 1 | yes |
//! | STREAM_ACK | 9 | u32 stream, u24 next sequence number expected, u8 flags (bit 0 `restart`: the receiver follows no such stream; bit 1 `resend`: it dropped later messages behind a gap at `next`; others zero) | 9 | no |
//! | TPT_REMOVE_DONE | 10 | as TPT_REMOVE: u16 count, then u32 handles (of the receiver's regions) | 3 + 4 n | no |
//! | TPT_REQUEST | 12 | nothing: push your whole part to me (the heartbeat baseline, when it admits a node) | 1 | yes |
//! | HEARTBEAT_INCARNATION | 11 | u32 incarnation of the sender (the baseline's variant that sees a reboot at the first beat, [`crate::heartbeat`]) | 5 | no |
//!
//! No control SEND is longer than [`MAX_CONTROL_BYTES`], the size of a control receive
//! buffer, so a one-entry TPT_UPDATE with its header fits a WQE's 32 inline bytes. A
//! malformed message refuses its whole SEND.
//!
//! # Reliability
//!
//! The *sequenced* kinds, RDMA_READY, TPT_UPDATE, TPT_REMOVE and TPT_CLEAR, are delivered
//! reliably, in order and once ([`crate::driver`] describes the sender's side). The sender
//! numbers them per receiver in a *stream* (a 32-bit name drawn from its incarnation; 24-bit
//! numbers from 0, wrapping) and keeps each until the receiver acknowledges it; it sends
//! every one it keeps again, in order, when acknowledgements stop coming. The receiver
//! follows one stream per sender and takes a sequenced message only if it is the next one
//! of that stream, or the first (number 0) of a stream it does not follow yet: a copy it
//! took before is a duplicate and changes nothing; one behind a lost message is dropped
//! and comes again with it; so a resent TPT_UPDATE never overtakes a later TPT_REMOVE of the
//! same handle. It acknowledges the SENDs that carry sequenced messages with STREAM_ACK (the
//! number it expects next; delayed, so one answers several; at once and with `resend` when it
//! dropped messages behind a gap: the sender then resends from that number without waiting
//! for its timer), or with `restart` if it
//! follows no stream of that name (it has rebooted since the stream began): the sender then
//! starts a new stream with what it still keeps, numbered from 0. So nothing is lost when the receiver reboots, and nothing
//! of an old stream is taken by a new boot of the receiver.
//!
//! The other kinds are *datagrams*: sent once, lost with their SEND. The protocols repeat
//! them on their own: BOOTING and PROBE until answered, ACK at every BOOTING and PROBE,
//! HEARTBEAT every period; a lost STREAM_ACK makes the sender resend, and the duplicates
//! are acknowledged again.
//!
//! The *incarnation* is a number a driver draws anew at every boot (like the start PSN):
//! an ACK echoes the incarnation of the BOOTING it answers, so an ACK meant for an earlier
//! boot of the same node is recognised and ignored (see [`crate::rejoin`]).

use thiserror::Error;

use crate::tpt::{Protection, TptEntry, TptError};

/// First byte of every control SEND: magic `0xA` (bits 7:4) and version 2 (bits 3:0).
pub const MAGIC_VERSION: u8 = 0xA2;
/// The magic nibble.
pub const MAGIC: u8 = 0xA;
/// The format version this crate writes and reads.
pub const VERSION: u8 = 2;
/// Bytes of a control SEND's header.
pub const HEADER_BYTES: usize = 8;
/// Sequence numbers are 24 bits and wrap.
pub const SEQUENCE_MASK: u32 = 0xFF_FFFF;
/// Largest control SEND in bytes, header included (the control receive buffer size).
pub const MAX_CONTROL_BYTES: usize = 1024;
/// Bytes of one TPT entry on the wire.
pub const ENTRY_BYTES: usize = 21;
/// Most entries one TPT_UPDATE carries (alone in a SEND).
pub const MAX_UPDATE_ENTRIES: usize = (MAX_CONTROL_BYTES - HEADER_BYTES - 3) / ENTRY_BYTES;
/// Most handles one TPT_REMOVE carries (alone in a SEND).
pub const MAX_REMOVE_HANDLES: usize = (MAX_CONTROL_BYTES - HEADER_BYTES - 3) / 4;

/// The kinds of control message, with their wire codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ControlKind {
    /// "I have booted": sent by a booting driver to every node (Fig. 7 S16).
    Booting = 1,
    /// The driver-level answer to BOOTING, sent after fencing (Fig. 8 S27).
    Ack = 2,
    /// "My RDMA is enabled" (Fig. 7 S21).
    RdmaReady = 3,
    /// Entries of the sender's local TPT part (Fig. 5 S3, Fig. 8 S30).
    TptUpdate = 4,
    /// Handles deregistered from the sender's local TPT part.
    TptRemove = 5,
    /// The baseline's periodic liveness message (000 \[0006\]).
    Heartbeat = 6,
    /// "Fence and acknowledge me as for a BOOTING, but I have not rebooted": sent by a
    /// joined node to a node it found down (see [`crate::rejoin`]).
    Probe = 7,
    /// "Forget your copy of my TPT part": the start of a push of the whole part.
    TptClear = 8,
    /// The cumulative acknowledgement of a stream of sequenced messages.
    StreamAck = 9,
    /// "I hold none of these regions of yours, and every operation I sent you before your
    /// TPT_REMOVE of them has completed": the answer to TPT_REMOVE (see [`crate::dereg`]).
    /// A datagram: a lost one is answered again when the owner resends the TPT_REMOVE.
    TptRemoveDone = 10,
    /// A heartbeat that names the sender's incarnation (the baseline's variant that sees a
    /// reboot at the first beat, see [`crate::heartbeat`]).
    HeartbeatIncarnation = 11,
    /// "Push your whole TPT part to me" (the heartbeat baseline, when it admits a node).
    TptRequest = 12,
}

impl ControlKind {
    /// The kind with wire code `code`.
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            1 => ControlKind::Booting,
            2 => ControlKind::Ack,
            3 => ControlKind::RdmaReady,
            4 => ControlKind::TptUpdate,
            5 => ControlKind::TptRemove,
            6 => ControlKind::Heartbeat,
            7 => ControlKind::Probe,
            8 => ControlKind::TptClear,
            9 => ControlKind::StreamAck,
            10 => ControlKind::TptRemoveDone,
            11 => ControlKind::HeartbeatIncarnation,
            12 => ControlKind::TptRequest,
            _ => return None,
        })
    }

    /// Whether messages of this kind are sequenced (delivered reliably, in order, once:
    /// see the module docs) rather than datagrams.
    pub fn is_sequenced(self) -> bool {
        matches!(
            self,
            ControlKind::RdmaReady
                | ControlKind::TptUpdate
                | ControlKind::TptRemove
                | ControlKind::TptClear
                | ControlKind::TptRequest
        )
    }
}

/// What is wrong with a control message (decoding) or a batch (construction).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ControlError {
    /// The message ends before its kind's fields do.
    #[error("truncated control message: {needed} bytes needed, {got} present")]
    Truncated {
        /// Bytes the message needs.
        needed: usize,
        /// Bytes present.
        got: usize,
    },
    /// The first byte's magic nibble is not `0xA`.
    #[error("bad magic byte {byte:#04x} (expected {MAGIC_VERSION:#04x})")]
    BadMagic {
        /// The first byte.
        byte: u8,
    },
    /// A control SEND with a header and no message.
    #[error("control SEND without a message")]
    NoMessages,
    /// A version this crate does not read.
    #[error("unsupported control format version {version} (this driver reads {VERSION})")]
    UnsupportedVersion {
        /// The version nibble.
        version: u8,
    },
    /// An unknown kind code.
    #[error("unknown control message kind {kind:#04x}")]
    UnknownKind {
        /// The kind byte.
        kind: u8,
    },
    /// A list count of zero or above the kind's maximum.
    #[error("bad count {count} in {kind:?} (1..={max})")]
    BadCount {
        /// The kind.
        kind: ControlKind,
        /// The count.
        count: usize,
        /// The largest count allowed.
        max: usize,
    },
    /// Bytes after the message's last field.
    #[error("{extra} trailing bytes after a {kind:?} message")]
    TrailingBytes {
        /// The kind.
        kind: ControlKind,
        /// How many bytes follow the message.
        extra: usize,
    },
    /// Reserved ACK or STREAM_ACK flag bits set.
    #[error("reserved flag bits set: {flags:#04x}")]
    ReservedFlags {
        /// The flags byte.
        flags: u8,
    },
    /// A protection code other than 1, 2, 3.
    #[error("entry {entry}: unknown protection code {code}")]
    BadProtection {
        /// Index of the entry in the message.
        entry: usize,
        /// The code.
        code: u8,
    },
    /// An entry that describes no valid region.
    #[error("entry {entry}: {source}")]
    BadEntry {
        /// Index of the entry in the message.
        entry: usize,
        /// Why it is invalid.
        source: TptError,
    },
}

/// A TPT_UPDATE body: 1 to [`MAX_UPDATE_ENTRIES`] valid entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TptUpdate(Vec<TptEntry>);

impl TptUpdate {
    /// A batch of `entries`; refuses an empty or oversized batch and invalid entries.
    pub fn new(entries: Vec<TptEntry>) -> Result<Self, ControlError> {
        if entries.is_empty() || entries.len() > MAX_UPDATE_ENTRIES {
            return Err(ControlError::BadCount {
                kind: ControlKind::TptUpdate,
                count: entries.len(),
                max: MAX_UPDATE_ENTRIES,
            });
        }
        for (i, e) in entries.iter().enumerate() {
            e.validate()
                .map_err(|source| ControlError::BadEntry { entry: i, source })?;
        }
        Ok(TptUpdate(entries))
    }

    /// As many messages as it takes to carry `entries` (none for no entries).
    pub fn batches(entries: &[TptEntry]) -> Result<Vec<ControlMessage>, ControlError> {
        entries
            .chunks(MAX_UPDATE_ENTRIES)
            .map(|c| TptUpdate::new(c.to_vec()).map(ControlMessage::TptUpdate))
            .collect()
    }

    /// The entries.
    pub fn entries(&self) -> &[TptEntry] {
        &self.0
    }
}

/// A TPT_REMOVE body: 1 to [`MAX_REMOVE_HANDLES`] handles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TptRemove(Vec<u32>);

impl TptRemove {
    /// A batch of `handles`; refuses an empty or oversized batch.
    pub fn new(handles: Vec<u32>) -> Result<Self, ControlError> {
        if handles.is_empty() || handles.len() > MAX_REMOVE_HANDLES {
            return Err(ControlError::BadCount {
                kind: ControlKind::TptRemove,
                count: handles.len(),
                max: MAX_REMOVE_HANDLES,
            });
        }
        Ok(TptRemove(handles))
    }

    /// The handles.
    pub fn handles(&self) -> &[u32] {
        &self.0
    }
}

/// A control message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlMessage {
    /// The sender has booted (incarnation `incarnation`); RDMA to it is disabled.
    Booting {
        /// The sender's incarnation.
        incarnation: u32,
    },
    /// The sender has fenced every operation it issued to the receiver and cleared the
    /// receiver's TPT part: the answer to the receiver's BOOTING of `incarnation`.
    Ack {
        /// The incarnation of the BOOTING being answered.
        incarnation: u32,
        /// Whether the sender has finished its own rejoin (its RDMA is enabled).
        joined: bool,
    },
    /// The sender's RDMA is enabled: peers may push their TPT parts and access it.
    RdmaReady {
        /// The sender's incarnation.
        incarnation: u32,
    },
    /// Entries added to (or replaced in) the sender's local TPT part.
    TptUpdate(TptUpdate),
    /// Handles removed from the sender's local TPT part.
    TptRemove(TptRemove),
    /// The answer to a TPT_REMOVE of the receiver: the sender holds none of these handles
    /// of the receiver's, and every operation it sent to the receiver before it removed
    /// them has completed (see [`crate::dereg`]).
    TptRemoveDone(TptRemove),
    /// The sender is alive (heartbeat baseline only).
    Heartbeat,
    /// The sender is alive and in its boot `incarnation` (the heartbeat baseline's
    /// incarnation variant only).
    HeartbeatIncarnation {
        /// The sender's incarnation.
        incarnation: u32,
    },
    /// The sender (which has not rebooted: incarnation `incarnation`) found the receiver
    /// down; the receiver handles it as a BOOTING (clear, fence, ACK) but, if it is itself
    /// booting, does not count it as the sender's answer.
    Probe {
        /// The sender's incarnation.
        incarnation: u32,
    },
    /// Push your whole TPT part to the sender (the heartbeat baseline, when it admits the
    /// receiver: its copy of the receiver's part is empty then).
    TptRequest,
    /// Drop every entry of the sender's part: a push of the whole part (TPT_UPDATEs)
    /// follows, so the copy ends up equal to the part, whatever it held before.
    TptClear,
    /// The receiver of `stream` (the sender of this message) has taken every sequenced
    /// message of it numbered below `next`; with `resend` it dropped later ones behind a gap
    /// at `next` (resend from `next` now); with `restart` it follows no stream of that
    /// name (it rebooted, say) and takes a new one only from its start.
    StreamAck {
        /// The stream acknowledged.
        stream: u32,
        /// The sequence number expected next (24 bits).
        next: u32,
        /// The receiver does not follow `stream`: start a new one.
        restart: bool,
        /// The receiver dropped messages after `next` (one before them is missing): resend
        /// from `next` at once.
        resend: bool,
    },
}

impl ControlMessage {
    /// The message's kind.
    pub fn kind(&self) -> ControlKind {
        match self {
            ControlMessage::Booting { .. } => ControlKind::Booting,
            ControlMessage::Ack { .. } => ControlKind::Ack,
            ControlMessage::RdmaReady { .. } => ControlKind::RdmaReady,
            ControlMessage::TptUpdate(_) => ControlKind::TptUpdate,
            ControlMessage::TptRemove(_) => ControlKind::TptRemove,
            ControlMessage::TptRemoveDone(_) => ControlKind::TptRemoveDone,
            ControlMessage::Heartbeat => ControlKind::Heartbeat,
            ControlMessage::HeartbeatIncarnation { .. } => ControlKind::HeartbeatIncarnation,
            ControlMessage::Probe { .. } => ControlKind::Probe,
            ControlMessage::TptClear => ControlKind::TptClear,
            ControlMessage::TptRequest => ControlKind::TptRequest,
            ControlMessage::StreamAck { .. } => ControlKind::StreamAck,
        }
    }

    /// The message's wire form (kind and body; at most [`MAX_CONTROL_BYTES`] minus
    /// [`HEADER_BYTES`] bytes). A SEND carries it behind a header: see [`ControlSend`].
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![self.kind() as u8];
        match self {
            ControlMessage::Booting { incarnation }
            | ControlMessage::RdmaReady { incarnation }
            | ControlMessage::Probe { incarnation }
            | ControlMessage::HeartbeatIncarnation { incarnation } => {
                b.extend_from_slice(&incarnation.to_le_bytes())
            }
            ControlMessage::Ack {
                incarnation,
                joined,
            } => {
                b.push(*joined as u8);
                b.extend_from_slice(&incarnation.to_le_bytes());
            }
            ControlMessage::TptUpdate(u) => {
                b.extend_from_slice(&(u.0.len() as u16).to_le_bytes());
                for e in &u.0 {
                    b.extend_from_slice(&e.handle.to_le_bytes());
                    b.extend_from_slice(&e.logical.to_le_bytes());
                    b.extend_from_slice(&e.physical.to_le_bytes());
                    b.extend_from_slice(&e.length.to_le_bytes());
                    b.push(e.protection.code());
                }
            }
            ControlMessage::TptRemove(r) | ControlMessage::TptRemoveDone(r) => {
                b.extend_from_slice(&(r.0.len() as u16).to_le_bytes());
                for h in &r.0 {
                    b.extend_from_slice(&h.to_le_bytes());
                }
            }
            ControlMessage::Heartbeat | ControlMessage::TptClear | ControlMessage::TptRequest => {}
            ControlMessage::StreamAck {
                stream,
                next,
                restart,
                resend,
            } => {
                b.extend_from_slice(&stream.to_le_bytes());
                b.extend_from_slice(&(next & SEQUENCE_MASK).to_le_bytes()[..3]);
                b.push(*restart as u8 | (*resend as u8) << 1);
            }
        }
        b
    }

    /// Parses one message's wire form (no header); every malformation is a
    /// [`ControlError`] naming what is wrong.
    pub fn decode(bytes: &[u8]) -> Result<Self, ControlError> {
        let (msg, used) = Self::decode_prefix(bytes)?;
        let extra = bytes.len() - used;
        if extra != 0 {
            return Err(ControlError::TrailingBytes {
                kind: msg.kind(),
                extra,
            });
        }
        Ok(msg)
    }

    /// Parses the first wire form of `bytes`; returns it and the bytes it took.
    pub fn decode_prefix(bytes: &[u8]) -> Result<(Self, usize), ControlError> {
        let mut r = Reader { bytes, pos: 0 };
        let code = r.u8()?;
        let kind = ControlKind::from_code(code).ok_or(ControlError::UnknownKind { kind: code })?;
        let msg = match kind {
            ControlKind::Booting => ControlMessage::Booting {
                incarnation: r.u32()?,
            },
            ControlKind::RdmaReady => ControlMessage::RdmaReady {
                incarnation: r.u32()?,
            },
            ControlKind::Probe => ControlMessage::Probe {
                incarnation: r.u32()?,
            },
            ControlKind::HeartbeatIncarnation => ControlMessage::HeartbeatIncarnation {
                incarnation: r.u32()?,
            },
            ControlKind::Ack => {
                let flags = r.u8()?;
                if flags & !1 != 0 {
                    return Err(ControlError::ReservedFlags { flags });
                }
                ControlMessage::Ack {
                    joined: flags & 1 != 0,
                    incarnation: r.u32()?,
                }
            }
            ControlKind::TptUpdate => {
                let count = r.count(kind, MAX_UPDATE_ENTRIES)?;
                r.need(count * ENTRY_BYTES)?;
                let mut entries = Vec::with_capacity(count);
                for entry in 0..count {
                    let handle = r.u32()?;
                    let logical = r.u64()?;
                    let physical = r.u32()?;
                    let length = r.u32()?;
                    let code = r.u8()?;
                    let protection = Protection::from_code(code)
                        .ok_or(ControlError::BadProtection { entry, code })?;
                    let e = TptEntry {
                        handle,
                        logical,
                        physical,
                        length,
                        protection,
                    };
                    e.validate()
                        .map_err(|source| ControlError::BadEntry { entry, source })?;
                    entries.push(e);
                }
                ControlMessage::TptUpdate(TptUpdate(entries))
            }
            ControlKind::TptRemove | ControlKind::TptRemoveDone => {
                let count = r.count(kind, MAX_REMOVE_HANDLES)?;
                r.need(count * 4)?;
                let handles = (0..count).map(|_| r.u32()).collect::<Result<_, _>>()?;
                match kind {
                    ControlKind::TptRemove => ControlMessage::TptRemove(TptRemove(handles)),
                    _ => ControlMessage::TptRemoveDone(TptRemove(handles)),
                }
            }
            ControlKind::Heartbeat => ControlMessage::Heartbeat,
            ControlKind::TptClear => ControlMessage::TptClear,
            ControlKind::TptRequest => ControlMessage::TptRequest,
            ControlKind::StreamAck => {
                let stream = r.u32()?;
                let n: [u8; 3] = r.take()?;
                let flags = r.u8()?;
                if flags & !0b11 != 0 {
                    return Err(ControlError::ReservedFlags { flags });
                }
                ControlMessage::StreamAck {
                    stream,
                    next: u32::from_le_bytes([n[0], n[1], n[2], 0]),
                    restart: flags & 1 != 0,
                    resend: flags & 2 != 0,
                }
            }
        };
        Ok((msg, r.pos))
    }
}

/// One control SEND: the header's stream and first sequence number, and the messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlSend {
    /// The sender's stream of sequenced messages to the receiver.
    pub stream: u32,
    /// The sequence number of the first sequenced message (24 bits); the others follow
    /// it one by one, datagrams take none.
    pub first_seq: u32,
    /// The messages, in order (at least one).
    pub messages: Vec<ControlMessage>,
}

impl ControlSend {
    /// The wire form: header, then the messages.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEADER_BYTES);
        b.push(MAGIC_VERSION);
        b.extend_from_slice(&(self.first_seq & SEQUENCE_MASK).to_le_bytes()[..3]);
        b.extend_from_slice(&self.stream.to_le_bytes());
        for m in &self.messages {
            b.extend_from_slice(&m.encode());
        }
        b
    }

    /// Parses a SEND's header: `(stream, first_seq)`; its messages start at
    /// [`HEADER_BYTES`].
    pub fn decode_header(bytes: &[u8]) -> Result<(u32, u32), ControlError> {
        let mut r = Reader { bytes, pos: 0 };
        let mv = r.u8()?;
        if mv >> 4 != MAGIC {
            return Err(ControlError::BadMagic { byte: mv });
        }
        if mv & 0xF != VERSION {
            return Err(ControlError::UnsupportedVersion { version: mv & 0xF });
        }
        let seq: [u8; 3] = r.take()?;
        let first_seq = u32::from_le_bytes([seq[0], seq[1], seq[2], 0]);
        let stream = r.u32()?;
        Ok((stream, first_seq))
    }

    /// Parses a control SEND. All or nothing: one malformation refuses the whole SEND.
    pub fn decode(bytes: &[u8]) -> Result<Self, ControlError> {
        let (stream, first_seq) = Self::decode_header(bytes)?;
        if bytes.len() == HEADER_BYTES {
            return Err(ControlError::NoMessages);
        }
        let mut messages = vec![];
        let mut pos = HEADER_BYTES;
        while pos < bytes.len() {
            let (msg, used) =
                ControlMessage::decode_prefix(&bytes[pos..]).map_err(|e| match e {
                    ControlError::Truncated { needed, got } => ControlError::Truncated {
                        needed: pos + needed,
                        got: pos + got,
                    },
                    e => e,
                })?;
            messages.push(msg);
            pos += used;
        }
        Ok(ControlSend {
            stream,
            first_seq,
            messages,
        })
    }

    /// The sequence number of each message (`None` for a datagram), in order.
    pub fn sequence_numbers(&self) -> impl Iterator<Item = Option<u32>> + '_ {
        let mut next = self.first_seq & SEQUENCE_MASK;
        self.messages.iter().map(move |m| {
            m.kind().is_sequenced().then(|| {
                let s = next;
                next = next.wrapping_add(1) & SEQUENCE_MASK;
                s
            })
        })
    }

    /// Packs `messages` of stream `stream`, the first sequenced one numbered `first_seq`,
    /// into SENDs of at most [`MAX_CONTROL_BYTES`] bytes, in order; returns each SEND's
    /// wire form with how many messages it carries.
    pub fn pack<'a>(
        stream: u32,
        first_seq: u32,
        messages: impl IntoIterator<Item = &'a ControlMessage>,
    ) -> Vec<(Vec<u8>, usize)> {
        let mut out: Vec<(Vec<u8>, usize)> = vec![];
        let mut seq = first_seq & SEQUENCE_MASK;
        for m in messages {
            let b = m.encode();
            match out.last_mut() {
                Some((bytes, n)) if bytes.len() + b.len() <= MAX_CONTROL_BYTES => {
                    bytes.extend_from_slice(&b);
                    *n += 1;
                }
                _ => {
                    let header = ControlSend {
                        stream,
                        first_seq: seq,
                        messages: vec![],
                    };
                    let mut bytes = header.encode();
                    bytes.extend_from_slice(&b);
                    out.push((bytes, 1));
                }
            }
            if m.kind().is_sequenced() {
                seq = seq.wrapping_add(1) & SEQUENCE_MASK;
            }
        }
        out
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn need(&self, n: usize) -> Result<(), ControlError> {
        if self.bytes.len() - self.pos < n {
            Err(ControlError::Truncated {
                needed: self.pos + n,
                got: self.bytes.len(),
            })
        } else {
            Ok(())
        }
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], ControlError> {
        self.need(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(&self.bytes[self.pos..self.pos + N]);
        self.pos += N;
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, ControlError> {
        Ok(self.take::<1>()?[0])
    }

    fn u32(&mut self) -> Result<u32, ControlError> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    fn u64(&mut self) -> Result<u64, ControlError> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    fn count(&mut self, kind: ControlKind, max: usize) -> Result<usize, ControlError> {
        let count = u16::from_le_bytes(self.take()?) as usize;
        if count == 0 || count > max {
            return Err(ControlError::BadCount { kind, count, max });
        }
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry() -> impl Strategy<Value = TptEntry> {
        (
            any::<u32>(),
            any::<u64>(),
            any::<u32>(),
            1u32..,
            prop::sample::select(Protection::ALL.to_vec()),
        )
            .prop_map(|(handle, logical, physical, length, protection)| TptEntry {
                handle,
                logical,
                physical,
                length,
                protection,
            })
            .prop_filter("valid region", |e| e.validate().is_ok())
    }

    fn message() -> impl Strategy<Value = ControlMessage> {
        prop_oneof![
            any::<u32>().prop_map(|incarnation| ControlMessage::Booting { incarnation }),
            (any::<u32>(), any::<bool>()).prop_map(|(incarnation, joined)| ControlMessage::Ack {
                incarnation,
                joined
            }),
            any::<u32>().prop_map(|incarnation| ControlMessage::RdmaReady { incarnation }),
            prop::collection::vec(entry(), 1..=MAX_UPDATE_ENTRIES)
                .prop_map(|v| ControlMessage::TptUpdate(TptUpdate::new(v).unwrap())),
            prop::collection::vec(any::<u32>(), 1..=MAX_REMOVE_HANDLES)
                .prop_map(|v| ControlMessage::TptRemove(TptRemove::new(v).unwrap())),
            Just(ControlMessage::Heartbeat),
            Just(ControlMessage::TptRequest),
            any::<u32>()
                .prop_map(|incarnation| ControlMessage::HeartbeatIncarnation { incarnation }),
            Just(ControlMessage::TptClear),
            (
                any::<u32>(),
                0..=SEQUENCE_MASK,
                any::<bool>(),
                any::<bool>()
            )
                .prop_map(|(stream, next, restart, resend)| {
                    ControlMessage::StreamAck {
                        stream,
                        next,
                        restart,
                        resend,
                    }
                }),
            any::<u32>().prop_map(|incarnation| ControlMessage::Probe { incarnation }),
            prop::collection::vec(any::<u32>(), 1..=MAX_REMOVE_HANDLES)
                .prop_map(|v| ControlMessage::TptRemoveDone(TptRemove::new(v).unwrap())),
        ]
    }

    proptest! {
        /// Packing keeps every message, in order, each SEND within a receive buffer; the
        /// sequenced messages are numbered on from `first` across the SENDs, datagrams
        /// take no number; a SEND whose last message is cut short is refused whole.
        #[test]
        fn sends_round_trip_in_order(
            ms in prop::collection::vec(message(), 1..12),
            stream in any::<u32>(),
            first in 0..=SEQUENCE_MASK,
        ) {
            let sends = ControlSend::pack(stream, first, &ms);
            let mut back = vec![];
            let mut seqs = vec![];
            for (bytes, n) in &sends {
                prop_assert!(bytes.len() <= MAX_CONTROL_BYTES);
                let decoded = ControlSend::decode(bytes).unwrap();
                prop_assert_eq!(decoded.stream, stream);
                prop_assert_eq!(decoded.messages.len(), *n);
                seqs.extend(decoded.sequence_numbers());
                back.extend(decoded.messages.iter().cloned());
                // Cut short: refused whole, unless the last message was a one-byte
                // HEARTBEAT or TPT_CLEAR, which is then simply not there.
                match ControlSend::decode(&bytes[..bytes.len() - 1]) {
                    Err(ControlError::Truncated { .. } | ControlError::NoMessages) => {}
                    Ok(cut) => {
                        prop_assert_eq!(cut.messages.len(), n - 1);
                        prop_assert_eq!(decoded.messages[n - 1].encode().len(), 1);
                    }
                    Err(e) => prop_assert!(false, "a SEND cut short: {}", e),
                }
            }
            prop_assert_eq!(&back, &ms);
            let mut next = first;
            for (m, s) in ms.iter().zip(seqs) {
                if m.kind().is_sequenced() {
                    prop_assert_eq!(s, Some(next));
                    next = (next + 1) & SEQUENCE_MASK;
                } else {
                    prop_assert_eq!(s, None);
                }
            }
        }

        #[test]
        fn round_trip(m in message()) {
            let bytes = m.encode();
            prop_assert!(bytes.len() <= MAX_CONTROL_BYTES - HEADER_BYTES);
            prop_assert_eq!(ControlMessage::decode(&bytes), Ok(m));
        }

        /// Every strict prefix of a valid message is refused as truncated (or, for the
        /// empty prefix and a prefix that ends inside the count, also truncated).
        #[test]
        fn every_prefix_is_truncated(m in message(), cut in any::<prop::sample::Index>()) {
            let bytes = m.encode();
            let n = cut.index(bytes.len());
            prop_assert!(
                matches!(ControlMessage::decode(&bytes[..n]), Err(ControlError::Truncated { .. })),
                "prefix of {} bytes", n
            );
        }

        /// Arbitrary bytes never panic the decoder, and what it accepts re-encodes identically.
        #[test]
        fn decoder_is_total(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(m) = ControlMessage::decode(&bytes) {
                prop_assert_eq!(m.encode(), bytes);
            }
        }

        #[test]
        fn trailing_bytes_are_refused(m in message(), extra in 1usize..8) {
            let mut bytes = m.encode();
            bytes.extend(std::iter::repeat_n(0, extra));
            prop_assert_eq!(
                ControlMessage::decode(&bytes),
                Err(ControlError::TrailingBytes { kind: m.kind(), extra })
            );
        }
    }

    #[test]
    fn known_encodings() {
        assert_eq!(
            ControlMessage::Booting {
                incarnation: 0x0403_0201
            }
            .encode(),
            [1, 1, 2, 3, 4]
        );
        assert_eq!(
            ControlMessage::Ack {
                incarnation: 5,
                joined: true
            }
            .encode(),
            [2, 1, 5, 0, 0, 0]
        );
        let e = TptEntry {
            handle: 0x11,
            logical: 0x2233,
            physical: 0x44,
            length: 0x55,
            protection: Protection::WriteOnly,
        };
        let u = ControlMessage::TptUpdate(TptUpdate::new(vec![e]).unwrap()).encode();
        assert_eq!(u.len(), 3 + ENTRY_BYTES);
        assert_eq!(
            u,
            [
                4, 1, 0, 0x11, 0, 0, 0, 0x33, 0x22, 0, 0, 0, 0, 0, 0, 0x44, 0, 0, 0, 0x55, 0, 0, 0,
                2
            ]
        );
        assert_eq!(ControlMessage::Heartbeat.encode(), [6]);
        assert_eq!(
            ControlMessage::HeartbeatIncarnation {
                incarnation: 0x0403_0201
            }
            .encode(),
            [11, 1, 2, 3, 4]
        );
        assert_eq!(
            ControlMessage::TptRemoveDone(TptRemove::new(vec![0x0403_0201]).unwrap()).encode(),
            [10, 1, 0, 1, 2, 3, 4]
        );
        // A SEND: header (version 2, first sequence number, stream), then the messages.
        let send = ControlSend {
            stream: 0x0807_0605,
            first_seq: 0x03_0201,
            messages: vec![
                ControlMessage::Heartbeat,
                ControlMessage::RdmaReady { incarnation: 9 },
            ],
        };
        assert_eq!(send.encode(), [0xA2, 1, 2, 3, 5, 6, 7, 8, 6, 3, 9, 0, 0, 0]);
        assert_eq!(
            send.sequence_numbers().collect::<Vec<_>>(),
            [None, Some(0x03_0201)]
        );
        // A one-entry TPT_UPDATE with its header still goes inline in a WQE.
        assert_eq!(HEADER_BYTES + u.len(), nic_abi::INLINE_MAX_BYTES);
    }

    #[test]
    fn malformed_messages_name_the_fault() {
        use ControlError::*;
        let d = ControlMessage::decode;
        let ds = ControlSend::decode;
        assert_eq!(d(&[]), Err(Truncated { needed: 1, got: 0 }));
        assert_eq!(ds(&[]), Err(Truncated { needed: 1, got: 0 }));
        assert_eq!(
            ds(&[0x51, 0, 0, 0, 0, 0, 0, 0, 6]),
            Err(BadMagic { byte: 0x51 })
        );
        assert_eq!(
            ds(&[0xA1, 0, 0, 0, 0, 0, 0, 0, 6]),
            Err(UnsupportedVersion { version: 1 })
        );
        assert_eq!(
            ds(&[0xA2, 0, 0, 0, 0, 0]),
            Err(Truncated { needed: 8, got: 6 })
        );
        assert_eq!(ds(&[0xA2, 0, 0, 0, 0, 0, 0, 0]), Err(NoMessages));
        // A message cut short inside a SEND: counted from the SEND's start.
        assert_eq!(
            ds(&[0xA2, 0, 0, 0, 0, 0, 0, 0, 6, 1, 0]),
            Err(Truncated {
                needed: 14,
                got: 11
            })
        );
        assert_eq!(d(&[0]), Err(UnknownKind { kind: 0 }));
        assert_eq!(d(&[13]), Err(UnknownKind { kind: 13 }));
        assert_eq!(
            d(&[9, 0, 0, 0, 0, 0, 0, 0, 4]),
            Err(ReservedFlags { flags: 4 })
        );
        assert_eq!(d(&[1, 0, 0]), Err(Truncated { needed: 5, got: 3 }));
        assert_eq!(d(&[2, 2, 0, 0, 0, 0]), Err(ReservedFlags { flags: 2 }));
        assert_eq!(
            d(&[4, 0, 0]),
            Err(BadCount {
                kind: ControlKind::TptUpdate,
                count: 0,
                max: MAX_UPDATE_ENTRIES
            })
        );
        assert_eq!(
            d(&[5, 0xFF, 0xFF]),
            Err(BadCount {
                kind: ControlKind::TptRemove,
                count: 0xFFFF,
                max: MAX_REMOVE_HANDLES
            })
        );
        // A count larger than the bytes present.
        assert_eq!(
            d(&[5, 2, 0, 1, 0, 0, 0]),
            Err(Truncated { needed: 11, got: 7 })
        );
        let mut u = ControlMessage::TptUpdate(
            TptUpdate::new(vec![TptEntry {
                handle: 1,
                logical: 0,
                physical: 0,
                length: 8,
                protection: Protection::ReadOnly,
            }])
            .unwrap(),
        )
        .encode();
        u[23] = 9;
        assert_eq!(d(&u), Err(BadProtection { entry: 0, code: 9 }));
        u[23] = 1;
        u[19..23].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(
            d(&u),
            Err(BadEntry {
                entry: 0,
                source: TptError::ZeroLength { handle: 1 }
            })
        );
    }

    #[test]
    fn batches_split_and_refuse_bad_input() {
        let e = TptEntry {
            handle: 1,
            logical: 0,
            physical: 0,
            length: 8,
            protection: Protection::ReadOnly,
        };
        let many = vec![e; MAX_UPDATE_ENTRIES * 2 + 1];
        let b = TptUpdate::batches(&many).unwrap();
        assert_eq!(b.len(), 3);
        assert!(b
            .iter()
            .all(|m| m.encode().len() + HEADER_BYTES <= MAX_CONTROL_BYTES));
        assert!(TptUpdate::batches(&[]).unwrap().is_empty());
        assert!(matches!(
            TptUpdate::new(vec![]),
            Err(ControlError::BadCount { .. })
        ));
        assert!(matches!(
            TptUpdate::new(vec![TptEntry { length: 0, ..e }]),
            Err(ControlError::BadEntry { entry: 0, .. })
        ));
        assert!(matches!(
            TptRemove::new(vec![0; MAX_REMOVE_HANDLES + 1]),
            Err(ControlError::BadCount { .. })
        ));
    }

    /// Fuzzing: damaged wire forms are refused with an error that names the fault, never
    /// a panic, and what is accepted is exactly what `encode` writes.
    mod fuzz {
        use super::*;

        /// One way to damage a byte string.
        #[derive(Clone, Debug)]
        enum Mutation {
            Truncate(prop::sample::Index),
            FlipBit(prop::sample::Index, u8),
            Overwrite(prop::sample::Index, u8),
            Insert(prop::sample::Index, Vec<u8>),
            Remove(prop::sample::Index, usize),
            Append(Vec<u8>),
        }

        fn mutation() -> impl Strategy<Value = Mutation> {
            let index = any::<prop::sample::Index>;
            let bytes = || prop::collection::vec(any::<u8>(), 1..30);
            prop_oneof![
                index().prop_map(Mutation::Truncate),
                (index(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
                (index(), any::<u8>()).prop_map(|(i, v)| Mutation::Overwrite(i, v)),
                (index(), bytes()).prop_map(|(i, v)| Mutation::Insert(i, v)),
                (index(), 1usize..30).prop_map(|(i, n)| Mutation::Remove(i, n)),
                bytes().prop_map(Mutation::Append),
            ]
        }

        fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
            let at = |i: &prop::sample::Index, len: usize| if len == 0 { 0 } else { i.index(len) };
            let len = bytes.len();
            match m {
                Mutation::Truncate(i) => bytes.truncate(at(i, len)),
                Mutation::FlipBit(i, b) if len > 0 => bytes[at(i, len)] ^= 1 << b,
                Mutation::Overwrite(i, v) if len > 0 => bytes[at(i, len)] = *v,
                Mutation::Insert(i, v) => {
                    let n = at(i, len + 1);
                    bytes.splice(n..n, v.iter().copied());
                }
                Mutation::Remove(i, k) => {
                    let n = at(i, len);
                    bytes.drain(n..(n + k).min(len));
                }
                Mutation::Append(v) => bytes.extend_from_slice(v),
                _ => {}
            }
        }

        /// The parsers' contract on any input.
        fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
            match ControlMessage::decode(bytes) {
                Ok(m) => prop_assert_eq!(
                    m.encode(),
                    bytes,
                    "decode accepted what encode does not write"
                ),
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
            match ControlSend::decode(bytes) {
                Ok(send) => {
                    prop_assert!(!send.messages.is_empty());
                    prop_assert_eq!(
                        send.encode(),
                        bytes,
                        "ControlSend::decode accepted what encode does not write"
                    );
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            #[test]
            fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2 * MAX_CONTROL_BYTES)) {
                check(&bytes)?;
            }

            /// Random bodies behind a valid header and a kind byte, so that the bodies
            /// are parsed rather than refused at the first byte.
            #[test]
            fn random_bodies_never_panic(kind in 0u8..12, body in prop::collection::vec(any::<u8>(), 0..300)) {
                let mut bytes = ControlSend { stream: 1, first_seq: 0, messages: vec![] }.encode();
                bytes.push(kind);
                bytes.extend(body);
                check(&bytes)?;
                check(&bytes[HEADER_BYTES..])?;
            }

            #[test]
            fn mutated_sends_never_panic(
                messages in prop::collection::vec(message(), 1..6),
                stream in any::<u32>(),
                ms in prop::collection::vec(mutation(), 1..4),
            ) {
                let mut bytes = ControlSend { stream, first_seq: 0, messages }.encode();
                for mu in &ms {
                    apply(&mut bytes, mu);
                }
                check(&bytes)?;
            }
        }

        /// A count field that promises more entries than the bytes hold is refused as
        /// truncated before anything is allocated for them.
        #[test]
        fn a_count_beyond_the_bytes_is_truncated() {
            let mut bytes = vec![ControlKind::TptUpdate as u8];
            bytes.extend_from_slice(&(MAX_UPDATE_ENTRIES as u16).to_le_bytes());
            assert!(matches!(
                ControlMessage::decode(&bytes),
                Err(ControlError::Truncated { .. })
            ));
        }
    }
}
