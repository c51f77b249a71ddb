//! NACK syndromes (InfiniBand AETH style) and completion status codes.

use std::fmt;

/// Syndrome byte of an ACK / NACK cell's AETH (bits 7:0 of its immediate data).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Syndrome {
    Ack = 0x00,
    ReceiverNotReady = 0x20,
    SequenceError = 0x60,
    InvalidRequest = 0x61,
    RemoteAccessError = 0x62,
    RemoteOperationalError = 0x63,
    CrcOrMalformed = 0x64,
    RdmaDisabled = 0x65,
    PortDown = 0x66,
}

impl Syndrome {
    /// Every NACK syndrome, in counter-index order.
    pub const NACKS: [Syndrome; 8] = [
        Syndrome::ReceiverNotReady,
        Syndrome::SequenceError,
        Syndrome::InvalidRequest,
        Syndrome::RemoteAccessError,
        Syndrome::RemoteOperationalError,
        Syndrome::CrcOrMalformed,
        Syndrome::RdmaDisabled,
        Syndrome::PortDown,
    ];

    pub fn from_code(code: u8) -> Option<Self> {
        if code == 0 {
            return Some(Syndrome::Ack);
        }
        Self::NACKS.iter().copied().find(|s| *s as u8 == code)
    }

    /// Index of this NACK's `NACK_SENT` / `NACK_RECEIVED` counter (None for ACK).
    pub fn counter_index(self) -> Option<usize> {
        Self::NACKS.iter().position(|s| *s == self)
    }

    /// Retryable NACKs make the requester go back N; the others consume the PSN.
    pub fn is_retryable(self) -> bool {
        matches!(self, Syndrome::SequenceError | Syndrome::CrcOrMalformed)
    }

    pub fn name(self) -> &'static str {
        match self {
            Syndrome::Ack => "ACK",
            Syndrome::ReceiverNotReady => "RECEIVER_NOT_READY",
            Syndrome::SequenceError => "SEQUENCE_ERROR",
            Syndrome::InvalidRequest => "INVALID_REQUEST",
            Syndrome::RemoteAccessError => "REMOTE_ACCESS_ERROR",
            Syndrome::RemoteOperationalError => "REMOTE_OPERATIONAL_ERROR",
            Syndrome::CrcOrMalformed => "CRC_OR_MALFORMED",
            Syndrome::RdmaDisabled => "RDMA_DISABLED",
            Syndrome::PortDown => "PORT_DOWN",
        }
    }
}

impl fmt::Display for Syndrome {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} ({:#04x})", self.name(), *self as u8)
    }
}

/// The refusal an ACK / NACK cell's AETH carries besides its own syndrome (bits 18:8 of
/// its immediate data): the responder's last refused PSN `psn - distance` and its final
/// syndrome, when that refusal lies 1..=7 PSNs before the answer's own PSN (the answer
/// acknowledges it otherwise). A requester whose NACK for that PSN was lost learns of
/// the refusal from any later answer (`docs/nic-architecture.md`, "Refused PSNs").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AethRefusal {
    /// The refused PSN's syndrome (a final NACK syndrome, never 0).
    pub syndrome: u8,
    /// How far before the answer's PSN the refused PSN lies (1..=7).
    pub distance: u8,
}

/// Bit position of [`AethRefusal::syndrome`] in the AETH (8 bits).
pub const AETH_REFUSED_SYNDROME_SHIFT: u32 = 8;
/// Bit position of [`AethRefusal::distance`] in the AETH (3 bits).
pub const AETH_REFUSED_DISTANCE_SHIFT: u32 = 16;

impl AethRefusal {
    /// The refusal an AETH carries, if any (a zero syndrome field: none).
    pub fn from_aeth(aeth: u32) -> Option<Self> {
        let syndrome = (aeth >> AETH_REFUSED_SYNDROME_SHIFT) as u8;
        let distance = (aeth >> AETH_REFUSED_DISTANCE_SHIFT) as u8 & 7;
        (syndrome != 0 && distance != 0).then_some(AethRefusal { syndrome, distance })
    }

    /// This refusal's AETH bits (to OR with the answer's syndrome).
    pub fn to_aeth(self) -> u32 {
        (self.syndrome as u32) << AETH_REFUSED_SYNDROME_SHIFT
            | ((self.distance & 7) as u32) << AETH_REFUSED_DISTANCE_SHIFT
    }

    /// The refused PSN, for an answer to PSN `psn`.
    pub fn psn(self, psn: u32) -> u32 {
        psn.wrapping_sub(self.distance as u32) & crate::PSN_MASK
    }
}

/// Status byte of a completion queue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompletionStatus {
    Success,
    LocalLengthError,
    RetryExceeded,
    LocalAddressError,
    BadOpcode,
    /// Local status: the responder restarted its PSN sequence (its QP was reset, e.g. its
    /// host rebooted) at a later PSN, so this WQE was not (or no longer) applied there. Set
    /// for the WQEs before the PSN of an answer that carries the RESYNC flag.
    ResponderRestarted,
    /// Driver-generated, never written by the NIC: the work request was flushed from a
    /// queue pair whose peer restarted (its send side was reset). Like InfiniBand's flush
    /// error it says nothing about whether the request reached the peer.
    Flushed,
    /// The responder's NACK.
    Remote(Syndrome),
    /// A code this crate does not know.
    Unknown(u8),
}

impl CompletionStatus {
    pub const SUCCESS: u8 = 0x00;
    pub const LOCAL_LENGTH_ERROR: u8 = 0x01;
    pub const RETRY_EXCEEDED: u8 = 0x02;
    pub const LOCAL_ADDRESS_ERROR: u8 = 0x03;
    pub const BAD_OPCODE: u8 = 0x04;
    pub const RESPONDER_RESTARTED: u8 = 0x05;
    /// Reserved for [`CompletionStatus::Flushed`] (the NIC never writes it).
    pub const FLUSHED: u8 = 0x06;

    pub fn from_code(code: u8) -> Self {
        match code {
            Self::SUCCESS => Self::Success,
            Self::LOCAL_LENGTH_ERROR => Self::LocalLengthError,
            Self::RETRY_EXCEEDED => Self::RetryExceeded,
            Self::LOCAL_ADDRESS_ERROR => Self::LocalAddressError,
            Self::BAD_OPCODE => Self::BadOpcode,
            Self::RESPONDER_RESTARTED => Self::ResponderRestarted,
            Self::FLUSHED => Self::Flushed,
            c => match Syndrome::from_code(c) {
                Some(s) if s != Syndrome::Ack => Self::Remote(s),
                _ => Self::Unknown(c),
            },
        }
    }

    pub fn code(self) -> u8 {
        match self {
            Self::Success => Self::SUCCESS,
            Self::LocalLengthError => Self::LOCAL_LENGTH_ERROR,
            Self::RetryExceeded => Self::RETRY_EXCEEDED,
            Self::LocalAddressError => Self::LOCAL_ADDRESS_ERROR,
            Self::BadOpcode => Self::BAD_OPCODE,
            Self::ResponderRestarted => Self::RESPONDER_RESTARTED,
            Self::Flushed => Self::FLUSHED,
            Self::Remote(s) => s as u8,
            Self::Unknown(c) => c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_counter_indices_are_dense() {
        for (i, s) in Syndrome::NACKS.iter().enumerate() {
            assert_eq!(Syndrome::from_code(*s as u8), Some(*s));
            assert_eq!(s.counter_index(), Some(i));
            assert_eq!(
                CompletionStatus::from_code(*s as u8),
                CompletionStatus::Remote(*s)
            );
        }
        assert_eq!(Syndrome::Ack.counter_index(), None);
        assert_eq!(Syndrome::from_code(0x67), None);
        for c in 0..=6u8 {
            assert_eq!(CompletionStatus::from_code(c).code(), c);
            assert!(!matches!(
                CompletionStatus::from_code(c),
                CompletionStatus::Unknown(_)
            ));
        }
        assert_eq!(
            CompletionStatus::from_code(5),
            CompletionStatus::ResponderRestarted
        );
        assert_eq!(
            CompletionStatus::from_code(0x99),
            CompletionStatus::Unknown(0x99)
        );
    }
}
