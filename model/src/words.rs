//! Payload bytes as the 64-bit words a message source drives: little-endian, `last` on
//! the final word, and random garbage in the bytes past the length (a block must ignore
//! them; `docs/nic-blocks.md`, "Message source").

use rand::Rng;

/// Up to 8 bytes as a little-endian word; the bytes above `bytes.len()` are random (one
/// draw, only for a partial word).
pub fn word_with_garbage<R: Rng + ?Sized>(bytes: &[u8], rng: &mut R) -> u64 {
    assert!(bytes.len() <= 8, "word_with_garbage: {} bytes", bytes.len());
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    let garbage = if bytes.len() < 8 {
        rng.gen::<u64>() << (8 * bytes.len())
    } else {
        0
    };
    u64::from_le_bytes(b) | garbage
}

/// A payload as (word, last) beats: [`word_with_garbage`] of each 8-byte chunk.
pub fn payload_words<R: Rng + ?Sized>(payload: &[u8], rng: &mut R) -> Vec<(u64, bool)> {
    let n = payload.len().div_ceil(8);
    payload
        .chunks(8)
        .enumerate()
        .map(|(i, chunk)| (word_with_garbage(chunk, rng), i + 1 == n))
        .collect()
}

/// Payload bytes back from words: the first `len` bytes, little-endian.
pub fn words_to_payload(words: &[u64], len: usize) -> Vec<u8> {
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes.truncate(len);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn payload_round_trips_and_garbage_is_above_the_length() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for len in 0..40usize {
            let payload: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            let words = payload_words(&payload, &mut rng);
            assert_eq!(words.len(), len.div_ceil(8));
            assert!(words
                .iter()
                .enumerate()
                .all(|(i, w)| w.1 == (i + 1 == words.len())));
            let ws: Vec<u64> = words.iter().map(|w| w.0).collect();
            assert_eq!(words_to_payload(&ws, len), payload);
            if len % 8 != 0 {
                let top = ws.last().unwrap() >> (8 * (len % 8));
                assert_ne!(top, 0, "garbage past the length (len {len})");
            }
        }
    }
}
