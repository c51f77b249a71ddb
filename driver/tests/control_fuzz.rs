//! Fuzzing the control-message parsers (issue 16, "Bad input"): random bytes and valid
//! encodings (single messages and bundles) truncated, bit-flipped, overwritten, spliced and
//! extended. [`ControlMessage::decode`] and [`ControlMessage::decode_bundle`] never panic;
//! what they accept is exactly what the encoder writes for the messages they return (so
//! nothing is accepted that a peer could not have sent), and every refusal has a message.

use nic_driver::control::{
    ControlError, ControlMessage, TptRemove, TptUpdate, MAX_CONTROL_BYTES, MAX_REMOVE_HANDLES,
    MAX_UPDATE_ENTRIES,
};
use nic_driver::tpt::{Protection, TptEntry};
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
        any::<u32>().prop_map(|incarnation| ControlMessage::Probe { incarnation }),
    ]
}

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
    prop_oneof![
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        (any::<prop::sample::Index>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, v)| Mutation::Overwrite(i, v)),
        (
            any::<prop::sample::Index>(),
            prop::collection::vec(any::<u8>(), 1..30)
        )
            .prop_map(|(i, v)| Mutation::Insert(i, v)),
        (any::<prop::sample::Index>(), 1usize..30).prop_map(|(i, n)| Mutation::Remove(i, n)),
        prop::collection::vec(any::<u8>(), 1..30).prop_map(Mutation::Append),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let at = |i: &prop::sample::Index, len: usize| if len == 0 { 0 } else { i.index(len) };
    match m {
        Mutation::Truncate(i) => {
            let n = at(i, bytes.len());
            bytes.truncate(n);
        }
        Mutation::FlipBit(i, b) => {
            if !bytes.is_empty() {
                let n = at(i, bytes.len());
                bytes[n] ^= 1 << b;
            }
        }
        Mutation::Overwrite(i, v) => {
            if !bytes.is_empty() {
                let n = at(i, bytes.len());
                bytes[n] = *v;
            }
        }
        Mutation::Insert(i, v) => {
            let n = at(i, bytes.len() + 1);
            bytes.splice(n..n, v.iter().copied());
        }
        Mutation::Remove(i, k) => {
            let n = at(i, bytes.len());
            let end = (n + k).min(bytes.len());
            bytes.drain(n..end);
        }
        Mutation::Append(v) => bytes.extend_from_slice(v),
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
    match ControlMessage::decode_bundle(bytes) {
        Ok(ms) => {
            prop_assert!(!ms.is_empty());
            let again: Vec<u8> = ms.iter().flat_map(|m| m.encode()).collect();
            prop_assert_eq!(
                again,
                bytes,
                "decode_bundle accepted what encode does not write"
            );
            // A single message decodes the same alone or as a bundle.
            if ms.len() == 1 {
                prop_assert_eq!(ControlMessage::decode(bytes), Ok(ms[0].clone()));
            }
        }
        Err(e) => {
            prop_assert!(!e.to_string().is_empty());
            // A bundle refuses exactly when one of its messages is bad.
            if let Ok(m) = ControlMessage::decode(bytes) {
                prop_assert!(false, "decode accepts {m:?} but decode_bundle refuses: {e}");
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2 * MAX_CONTROL_BYTES)) {
        check(&bytes)?;
    }

    /// Random bytes behind a valid two-byte start (magic and a known kind), so that the
    /// bodies are parsed rather than refused at the first byte.
    #[test]
    fn random_bodies_never_panic(kind in 0u8..10, body in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut bytes = vec![nic_driver::control::MAGIC_VERSION, kind];
        bytes.extend(body);
        check(&bytes)?;
    }

    #[test]
    fn mutated_messages_never_panic(
        m in message(),
        ms in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut bytes = m.encode();
        for mu in &ms {
            apply(&mut bytes, mu);
        }
        check(&bytes)?;
    }

    #[test]
    fn mutated_bundles_never_panic(
        messages in prop::collection::vec(message(), 1..6),
        ms in prop::collection::vec(mutation(), 0..4),
    ) {
        for (mut bytes, n) in ControlMessage::bundle(&messages) {
            prop_assert_eq!(ControlMessage::decode_bundle(&bytes).map(|v| v.len()), Ok(n));
            for mu in &ms {
                apply(&mut bytes, mu);
            }
            check(&bytes)?;
        }
    }
}

/// A count field that promises more entries than the bytes hold is refused as truncated
/// before anything is allocated for them.
#[test]
fn a_count_beyond_the_bytes_is_truncated() {
    let mut bytes = vec![nic_driver::control::MAGIC_VERSION, 4];
    bytes.extend_from_slice(&(MAX_UPDATE_ENTRIES as u16).to_le_bytes());
    assert!(matches!(
        ControlMessage::decode(&bytes),
        Err(ControlError::Truncated { .. })
    ));
    assert!(matches!(
        ControlMessage::decode_bundle(&bytes),
        Err(ControlError::Truncated { .. })
    ));
}
