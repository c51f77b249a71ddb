//! Fuzzing the cell decoder and the reassembly model (issue 16, "Bad input"): random words,
//! and valid cells and messages truncated, bit-flipped, with fields rewritten (with and
//! without a recomputed cell CRC), reordered, dropped and duplicated. Neither
//! [`decode_cell`] nor [`ReassemblyModel`] may panic; each answer is either a decoded cell
//! consistent with the words it came from, or an error that names a field and an offset
//! inside the cell; the model delivers a message only when it is byte-exact.

// Recompute a cell's CRC word (a sender that builds a bad cell on purpose).
use nic_model::cell_faults::reseal;
use nic_rtl::cell::format::{
    decode_cell, encode_message, opcode, words_to_bytes, CellHeader, CellStatus, Message,
    ReassemblyModel, CRC32, HEADER_WORDS,
};
use proptest::prelude::*;

fn cell_payload() -> impl Strategy<Value = usize> {
    prop::sample::select(vec![8usize, 16, 64, 256, 1024])
}

fn message() -> impl Strategy<Value = Message> {
    (
        prop::sample::select(opcode::ALL.to_vec()),
        any::<(u16, u16, u16, u16)>(),
        0u32..(1 << 24),
        any::<(u64, u32, u32)>(),
        any::<Option<u32>>(),
        any::<(bool, bool)>(),
        prop::collection::vec(any::<u8>(), 0..700),
    )
        .prop_map(
            |(
                op,
                (dn, sn, dq, sq),
                psn,
                (vaddr, stag, dma_length),
                immediate,
                (inv, resync),
                payload,
            )| {
                Message {
                    opcode: op,
                    dest_node: dn,
                    src_node: sn,
                    dest_qp: dq,
                    src_qp: sq,
                    psn,
                    vaddr,
                    stag,
                    dma_length,
                    immediate,
                    invalidate: inv,
                    resync,
                    payload,
                }
            },
        )
}

/// One way to damage a cell.
#[derive(Clone, Debug)]
enum Mutation {
    /// Drop the last `n` words.
    Truncate(usize),
    /// Append `n` words.
    Extend(Vec<u64>),
    /// XOR bit `bit` of word `word` (modulo the cell's length).
    FlipBit { word: usize, bit: u32 },
    /// Rewrite header byte `byte` (0..24) with `value`.
    HeaderByte { byte: usize, value: u8 },
    /// Replace word `word` (modulo the length) with `value`.
    Word { word: usize, value: u64 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (1usize..40).prop_map(Mutation::Truncate),
        prop::collection::vec(any::<u64>(), 1..8).prop_map(Mutation::Extend),
        (any::<usize>(), 0u32..64).prop_map(|(word, bit)| Mutation::FlipBit { word, bit }),
        (0usize..24, any::<u8>()).prop_map(|(byte, value)| Mutation::HeaderByte { byte, value }),
        (any::<usize>(), any::<u64>()).prop_map(|(word, value)| Mutation::Word { word, value }),
    ]
}

fn apply(cell: &mut Vec<u64>, m: &Mutation) {
    match m {
        Mutation::Truncate(n) => cell.truncate(cell.len().saturating_sub(*n)),
        Mutation::Extend(w) => cell.extend_from_slice(w),
        Mutation::FlipBit { word, bit } => {
            if !cell.is_empty() {
                let i = word % cell.len();
                cell[i] ^= 1 << bit;
            }
        }
        Mutation::HeaderByte { byte, value } => {
            if cell.len() > byte / 8 {
                let shift = 8 * (byte % 8);
                cell[byte / 8] = cell[byte / 8] & !(0xFF << shift) | (*value as u64) << shift;
            }
        }
        Mutation::Word { word, value } => {
            if !cell.is_empty() {
                let i = word % cell.len();
                cell[i] = *value;
            }
        }
    }
}

/// What a successful decode must agree with: the words it came from.
fn check_decoded(words: &[u64], cell_payload: usize) -> Result<(), TestCaseError> {
    match decode_cell(words, cell_payload) {
        Ok(c) => {
            let h = c.header;
            prop_assert_eq!(h, CellHeader::from_words([words[0], words[1], words[2]]));
            prop_assert_eq!(h.cell_words(), words.len());
            prop_assert!(h.cell_length as usize <= cell_payload);
            prop_assert_eq!(c.payload.len(), h.cell_length as usize);
            prop_assert_eq!(c.reth.is_some(), h.has_reth());
            prop_assert_eq!(c.packet_crc.is_some(), h.last());
            let body = &words[..words.len() - 1];
            prop_assert_eq!(c.cell_crc, CRC32.checksum(&words_to_bytes(body)));
            prop_assert_eq!(words[words.len() - 1] >> 32, 0);
            // The payload bytes as they stand in the cell (the padding is not checked).
            let at = 8 * (HEADER_WORDS + if h.has_reth() { 2 } else { 0 });
            let bytes = words_to_bytes(words);
            prop_assert_eq!(&bytes[at..at + c.payload.len()], &c.payload[..]);
        }
        Err(e) => {
            prop_assert!(e.status != CellStatus::Ok, "an error with status Ok: {e}");
            prop_assert!(
                e.offset <= words.len() * 8,
                "offset {} outside a {}-byte cell: {e}",
                e.offset,
                words.len() * 8
            );
            prop_assert!(!e.field.is_empty() && !e.problem.is_empty());
        }
    }
    Ok(())
}

/// Feed cells to a model; check every delivered message is byte-exact against `sent`
/// (the messages the cells were cut from), returning the number of complete messages.
fn reassemble(
    cells: &[Vec<u64>],
    cell_payload: usize,
    sent: &[Message],
) -> Result<usize, TestCaseError> {
    let mut model = ReassemblyModel::new(cell_payload);
    let mut building: Option<Vec<u8>> = None;
    let mut complete = 0;
    for cell in cells {
        let Some(o) = model.push_cell(cell) else {
            continue;
        };
        if o.status != CellStatus::Ok {
            prop_assert!(o.payload.is_empty(), "a failed cell delivers nothing");
            building = None;
            continue;
        }
        let so_far = building.get_or_insert_with(Vec::new);
        if o.header.first() {
            so_far.clear();
        }
        prop_assert_eq!(o.offset as usize, so_far.len());
        so_far.extend_from_slice(&o.payload);
        if o.header.last() {
            let got = building.take().unwrap();
            prop_assert_eq!(got.len(), o.header.message_length as usize);
            prop_assert_eq!(CRC32.checksum(&got), {
                let d = decode_cell(cell, cell_payload).unwrap();
                d.packet_crc.unwrap()
            });
            if !sent.is_empty() {
                prop_assert!(
                    sent.iter().any(|m| m.payload == got),
                    "a delivered message of {} bytes is not one that was sent",
                    got.len()
                );
            }
            complete += 1;
        }
    }
    Ok(complete)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Random words: an error, or a decode that agrees with the words.
    #[test]
    fn random_words_never_panic(
        words in prop::collection::vec(any::<u64>(), 0..300),
        cp in cell_payload(),
    ) {
        check_decoded(&words, cp)?;
        let mut model = ReassemblyModel::new(cp);
        model.push_cell(&words);
        let _ = model.unfinished().map(|u| u.to_string());
    }

    /// Random words under a header that agrees with their count: most of these reach the
    /// CRC check and beyond (resealed: the field checks after the CRC).
    #[test]
    fn random_cells_with_a_consistent_length_never_panic(
        header in any::<[u64; 3]>(),
        body in prop::collection::vec(any::<u64>(), 0..140),
        cp in cell_payload(),
        seal in any::<bool>(),
    ) {
        let h = CellHeader::from_words(header);
        let n = h.cell_words().min(HEADER_WORDS + 140);
        let mut words = header.to_vec();
        words.extend(body.iter().copied().cycle().take(n.saturating_sub(HEADER_WORDS)));
        if words.len() == HEADER_WORDS {
            words.push(0);
        }
        if seal {
            reseal(&mut words);
        }
        check_decoded(&words, cp)?;
        let mut model = ReassemblyModel::new(cp);
        model.push_cell(&words);
    }

    /// A valid message, each cell damaged (or not) in one or two ways, resealed or not:
    /// no panic, decodes agree with their words, and the model delivers only the message
    /// that was sent.
    #[test]
    fn damaged_messages_never_panic_nor_deliver_wrong_data(
        m in message(),
        cp in cell_payload(),
        damage in prop::collection::vec(
            (any::<prop::sample::Index>(), mutation(), prop::option::of(mutation()), any::<bool>()),
            0..4,
        ),
    ) {
        let mut cells = encode_message(&m, cp).unwrap();
        for c in &cells {
            check_decoded(c, cp)?;
        }
        prop_assert_eq!(reassemble(&cells, cp, std::slice::from_ref(&m))?, 1);
        for (at, first, second, seal) in &damage {
            let i = at.index(cells.len());
            apply(&mut cells[i], first);
            if let Some(s) = second {
                apply(&mut cells[i], s);
            }
            if *seal {
                reseal(&mut cells[i]);
            }
        }
        for c in &cells {
            check_decoded(c, cp)?;
        }
        reassemble(&cells, cp, std::slice::from_ref(&m))?;
    }

    /// Cells of several messages dropped, duplicated and shuffled: the model delivers
    /// only messages that were sent, each byte-exact, and names a message left unfinished.
    #[test]
    fn reordered_cells_never_deliver_wrong_data(
        ms in prop::collection::vec(message(), 1..4),
        cp in cell_payload(),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
    ) {
        let all: Vec<Vec<u64>> = ms
            .iter()
            .flat_map(|m| encode_message(m, cp).unwrap())
            .collect();
        let stream: Vec<Vec<u64>> = picks.iter().map(|i| all[i.index(all.len())].clone()).collect();
        reassemble(&stream, cp, &ms)?;
        let mut model = ReassemblyModel::new(cp);
        for c in &stream {
            model.push_cell(c);
        }
        if let Some(u) = model.unfinished() {
            let text = u.to_string();
            prop_assert!(text.contains("without a LAST cell"), "{}", text);
            prop_assert!(u.bytes < u.first.message_length, "{}", text);
        }
    }

    /// Every strict prefix of a multi-cell message leaves the model naming the message as
    /// unfinished, with the cells and bytes it got.
    #[test]
    fn every_cut_message_is_named(m in message(), cp in cell_payload(), cut in any::<prop::sample::Index>()) {
        let cells = encode_message(&m, cp).unwrap();
        let n = cut.index(cells.len());
        let mut model = ReassemblyModel::new(cp);
        for c in &cells[..n] {
            prop_assert_eq!(model.push_cell(c).unwrap().status, CellStatus::Ok);
        }
        match model.unfinished() {
            None => prop_assert_eq!(n, 0),
            Some(u) => {
                prop_assert_eq!(u.cells as usize, n);
                prop_assert_eq!(u.bytes as usize, (n * cp).min(m.payload.len()));
                prop_assert_eq!(u.first.psn, m.psn);
                let expected = format!("message ends after cell {} of PSN {:#x} without a LAST cell", n - 1, m.psn);
                prop_assert!(u.to_string().starts_with(&expected), "{}", u);
            }
        }
    }
}
