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

    /// The 3-bit code of a final NACK syndrome in an AETH's refusal report
    /// ([`AethRefusals`]): 1 for RECEIVER_NOT_READY, `x + 1` for `0x6x` (x = 1..6);
    /// None for ACK and the retryable NACKs, which never consume a PSN.
    pub fn refusal_code(self) -> Option<u8> {
        match self {
            Syndrome::Ack | Syndrome::SequenceError | Syndrome::CrcOrMalformed => None,
            Syndrome::ReceiverNotReady => Some(1),
            s => Some((s as u8 & 0x0f) + 1),
        }
    }

    /// The final NACK syndrome of a refusal code (None for 0 and for a code no final
    /// syndrome has).
    pub fn from_refusal_code(code: u8) -> Option<Self> {
        Self::NACKS
            .iter()
            .copied()
            .find(|s| s.refusal_code() == Some(code))
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

/// How many PSNs before an answer's own its AETH reports refusals for (`SEND_WINDOW - 1`:
/// a requester sends nothing more than that past a PSN it has not completed).
pub const AETH_REFUSALS_REPORTED: usize = 7;
/// Bit position of the first refusal code in the AETH (the PSN just before the answer's).
pub const AETH_REFUSALS_SHIFT: u32 = 8;
/// Bits per refusal code in the AETH ([`Syndrome::refusal_code`]).
pub const AETH_REFUSAL_CODE_BITS: u32 = 3;

/// The refusals an ACK / NACK cell's AETH reports besides its own syndrome (bits 28:8 of
/// its immediate data): for each of the [`AETH_REFUSALS_REPORTED`] PSNs before the
/// answer's own, the final NACK syndrome the responder gave it, if it refused it. The
/// answer acknowledges those PSNs, so a requester whose NACK for one of them was lost
/// learns of the refusal from any later answer (`docs/nic-architecture.md`, "Refused
/// PSNs"). Entry `k - 1` is the PSN `k` before the answer's; its code sits at bits
/// `8 + 3 (k - 1)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AethRefusals(pub [Option<Syndrome>; AETH_REFUSALS_REPORTED]);

impl AethRefusals {
    /// The refusals an AETH reports (a code no final syndrome has counts as none).
    pub fn from_aeth(aeth: u32) -> Self {
        let mut r = [None; AETH_REFUSALS_REPORTED];
        for (k, entry) in r.iter_mut().enumerate() {
            let code = (aeth >> (AETH_REFUSALS_SHIFT + AETH_REFUSAL_CODE_BITS * k as u32)) & 7;
            *entry = Syndrome::from_refusal_code(code as u8);
        }
        AethRefusals(r)
    }

    /// One refusal, `distance` (1..=7) PSNs before the answer's.
    pub fn one(distance: usize, syndrome: Syndrome) -> Self {
        let mut r = AethRefusals::default();
        r.0[distance - 1] = Some(syndrome);
        r
    }

    /// These refusals' AETH bits (to OR with the answer's syndrome). A syndrome that is
    /// not a final NACK has no code and is left out.
    pub fn to_aeth(self) -> u32 {
        self.0.iter().enumerate().fold(0, |aeth, (k, s)| {
            let code = s.and_then(Syndrome::refusal_code).unwrap_or(0) as u32;
            aeth | code << (AETH_REFUSALS_SHIFT + AETH_REFUSAL_CODE_BITS * k as u32)
        })
    }

    /// No refusal reported.
    pub fn is_empty(self) -> bool {
        self.0.iter().all(Option::is_none)
    }

    /// The refused PSNs and their syndromes, oldest first, for an answer to PSN `psn`.
    pub fn oldest_first(self, psn: u32) -> impl Iterator<Item = (u32, Syndrome)> {
        (1..=AETH_REFUSALS_REPORTED).rev().filter_map(move |k| {
            self.0[k - 1].map(|s| (psn.wrapping_sub(k as u32) & crate::PSN_MASK, s))
        })
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
    /// Driver-generated, never written by the NIC: a BIND RKEY completed in the NIC but
    /// the driver's TPT refused to apply the binding (nothing changed).
    BindRefused,
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
    /// Reserved for [`CompletionStatus::BindRefused`] (the NIC never writes it).
    pub const BIND_REFUSED: u8 = 0x07;

    pub fn from_code(code: u8) -> Self {
        match code {
            Self::SUCCESS => Self::Success,
            Self::LOCAL_LENGTH_ERROR => Self::LocalLengthError,
            Self::RETRY_EXCEEDED => Self::RetryExceeded,
            Self::LOCAL_ADDRESS_ERROR => Self::LocalAddressError,
            Self::BAD_OPCODE => Self::BadOpcode,
            Self::RESPONDER_RESTARTED => Self::ResponderRestarted,
            Self::FLUSHED => Self::Flushed,
            Self::BIND_REFUSED => Self::BindRefused,
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
            Self::BindRefused => Self::BIND_REFUSED,
            Self::Remote(s) => s as u8,
            Self::Unknown(c) => c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PSN_MASK;

    #[test]
    fn refusal_codes_fit_three_bits_and_round_trip() {
        let finals: Vec<Syndrome> = Syndrome::NACKS
            .iter()
            .copied()
            .filter(|s| !s.is_retryable())
            .collect();
        let mut seen = std::collections::HashSet::new();
        for s in &finals {
            let c = s.refusal_code().unwrap();
            assert!((1..=7).contains(&c), "{s}: {c}");
            assert!(seen.insert(c), "{s}: code {c} taken twice");
            assert_eq!(Syndrome::from_refusal_code(c), Some(*s));
        }
        assert_eq!(Syndrome::SequenceError.refusal_code(), None);
        assert_eq!(Syndrome::CrcOrMalformed.refusal_code(), None);
        assert_eq!(Syndrome::from_refusal_code(0), None);
    }

    #[test]
    fn aeth_refusals_round_trip_oldest_first() {
        let mut r = AethRefusals::default();
        r.0[0] = Some(Syndrome::RemoteAccessError);
        r.0[6] = Some(Syndrome::ReceiverNotReady);
        r.0[3] = Some(Syndrome::RdmaDisabled);
        let aeth = r.to_aeth();
        assert_eq!(aeth & 0xff, 0, "the answer's own syndrome is not touched");
        assert_eq!(aeth >> 29, 0, "bits 31:29 stay zero");
        assert_eq!(AethRefusals::from_aeth(aeth | 0x62), r);
        let order: Vec<_> = r.oldest_first(5).collect();
        assert_eq!(
            order,
            vec![
                (PSN_MASK - 1, Syndrome::ReceiverNotReady),
                (1, Syndrome::RdmaDisabled),
                (4, Syndrome::RemoteAccessError)
            ]
        );
        assert!(AethRefusals::from_aeth(0x65).is_empty());
    }

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
        for c in 0..=7u8 {
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
