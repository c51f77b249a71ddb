//! `nic cell encode` / `nic cell decode`: the cell format from the command line.

use clap::{Args, Subcommand};
use nic_rtl::cell::format::{
    decode_cell, encode_message, opcode, words_to_bytes, CellStatus, Message, ReassemblyModel,
    CRC32, DEFAULT_CELL_PAYLOAD,
};
use std::io::Read;

#[derive(Subcommand, Debug)]
pub enum CellCommand {
    /// Segment a message into cells and print them, one cell per line.
    Encode(EncodeArgs),
    /// Read cells (one per line) and print their fields, or name the field that is wrong;
    /// a message whose LAST cell is missing at the end of the input is an error too.
    Decode(DecodeArgs),
}

#[derive(Args, Debug)]
pub struct EncodeArgs {
    /// Opcode: a name (SEND, SEND_IMMEDIATE, RDMA_WRITE, RDMA_WRITE_IMMEDIATE, RDMA_READ_REQUEST,
    /// ATOMIC_COMPARE_SWAP, ATOMIC_FETCH_ADD, RDMA_READ_RESPONSE, ATOMIC_RESPONSE, ACK, NACK) or a number.
    #[arg(long, default_value = "SEND")]
    opcode: String,
    #[arg(long, default_value_t = 0)]
    dest_node: u16,
    #[arg(long, default_value_t = 0)]
    src_node: u16,
    #[arg(long, default_value_t = 0)]
    dest_qp: u16,
    #[arg(long, default_value_t = 0)]
    src_qp: u16,
    /// Packet sequence number (24 bits).
    #[arg(long, default_value_t = 0)]
    psn: u32,
    /// RETH virtual address (RDMA opcodes), decimal or 0x-hex.
    #[arg(long, default_value = "0", value_parser = parse_u64)]
    vaddr: u64,
    /// RETH STag (RDMA opcodes), decimal or 0x-hex.
    #[arg(long, default_value = "0", value_parser = parse_u64)]
    stag: u64,
    /// RETH DMA length; defaults to the payload length.
    #[arg(long)]
    dma_length: Option<u32>,
    /// 32-bit immediate data, decimal or 0x-hex (sets the IMMEDIATE flag).
    #[arg(long, value_parser = parse_u64)]
    immediate: Option<u64>,
    /// Set the INVALIDATE flag.
    #[arg(long)]
    invalidate: bool,
    /// Set the RESYNC flag (first message of a queue pair after its reset).
    #[arg(long)]
    resync: bool,
    /// Payload as hex bytes in wire order (e.g. 48656c6c6f).
    #[arg(long, conflicts_with = "payload_len")]
    payload_hex: Option<String>,
    /// Payload of this many bytes counting 0, 1, 2, ... (mod 256).
    #[arg(long)]
    payload_len: Option<usize>,
    /// Payload bytes per cell (a multiple of 8, 8..=1024).
    #[arg(long, default_value_t = DEFAULT_CELL_PAYLOAD)]
    cell_payload: usize,
    /// Print wire bytes (hex, in order) instead of 64-bit words.
    #[arg(long)]
    bytes: bool,
}

#[derive(Args, Debug)]
pub struct DecodeArgs {
    /// File of cells, one per line: 64-bit words as 16 hex digits separated by spaces
    /// (as `encode` prints), or wire bytes with --bytes. `-` or nothing reads stdin.
    /// Lines starting with '#' are comments.
    input: Option<String>,
    /// Input lines are wire bytes in hex (as zlib sees them) instead of words.
    #[arg(long)]
    bytes: bool,
    /// Payload bytes per cell the receiver accepts.
    #[arg(long, default_value_t = DEFAULT_CELL_PAYLOAD)]
    cell_payload: usize,
}

fn parse_u64(text: &str) -> Result<u64, String> {
    let t = text.trim().replace('_', "");
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|e| format!("'{text}' is not a number: {e}"))
}

/// Hex digits in pairs, whitespace ignored; a pair that is not two hex digits is named by
/// its characters and position (counted in characters, whitespace left out).
fn parse_hex_bytes(text: &str) -> Result<Vec<u8>, String> {
    let clean: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    if !clean.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits ({})", clean.len()));
    }
    clean
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| {
            let digits = |c: char| c.to_digit(16);
            match (digits(pair[0]), digits(pair[1])) {
                (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
                _ => Err(format!(
                    "'{}{}' at character {} is not a hex byte",
                    pair[0],
                    pair[1],
                    2 * i
                )),
            }
        })
        .collect()
}

pub fn run(cmd: CellCommand) -> Result<(), String> {
    match cmd {
        CellCommand::Encode(a) => encode(a),
        CellCommand::Decode(a) => decode(a),
    }
}

fn encode(a: EncodeArgs) -> Result<(), String> {
    let op = opcode::parse(&a.opcode).ok_or_else(|| format!("unknown opcode '{}'", a.opcode))?;
    let payload = match (&a.payload_hex, a.payload_len) {
        (Some(h), _) => parse_hex_bytes(h).map_err(|e| format!("--payload-hex: {e}"))?,
        (None, Some(n)) => (0..n).map(|i| i as u8).collect(),
        (None, None) => vec![],
    };
    let stag = u32::try_from(a.stag)
        .map_err(|_| format!("--stag {:#x} does not fit in 32 bits", a.stag))?;
    let immediate = a
        .immediate
        .map(|v| {
            u32::try_from(v).map_err(|_| format!("--immediate {v:#x} does not fit in 32 bits"))
        })
        .transpose()?;
    let msg = Message {
        opcode: op,
        dest_node: a.dest_node,
        src_node: a.src_node,
        dest_qp: a.dest_qp,
        src_qp: a.src_qp,
        psn: a.psn,
        vaddr: a.vaddr,
        stag,
        dma_length: a.dma_length.unwrap_or(payload.len() as u32),
        immediate,
        invalidate: a.invalidate,
        resync: a.resync,
        payload,
    };
    let cells = encode_message(&msg, a.cell_payload).map_err(|e| e.to_string())?;
    println!(
        "# {} ({op:#04x}), {} payload bytes, packet CRC {:#010x}, {} cell(s) of at most {} bytes",
        opcode::name(op),
        msg.payload.len(),
        CRC32.checksum(&msg.payload),
        cells.len(),
        a.cell_payload
    );
    for cell in &cells {
        let line: Vec<String> = if a.bytes {
            vec![words_to_bytes(cell)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()]
        } else {
            cell.iter().map(|w| format!("{w:016x}")).collect()
        };
        println!("{}", line.join(" "));
    }
    Ok(())
}

/// Parse one input line into words.
fn parse_cell_line(line: &str, bytes: bool) -> Result<Vec<u64>, String> {
    if bytes {
        let b = parse_hex_bytes(line)?;
        if b.len() % 8 != 0 {
            return Err(format!(
                "{} bytes is not a whole number of 64-bit words: truncated cell (byte offset {} is inside an incomplete word)",
                b.len(),
                b.len() - b.len() % 8
            ));
        }
        Ok(b.chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect())
    } else {
        line.split_whitespace()
            .enumerate()
            .map(|(i, tok)| {
                if tok.len() > 16 {
                    return Err(format!(
                        "word {i} ('{tok}', byte offset {}) has more than 16 hex digits",
                        8 * i
                    ));
                }
                u64::from_str_radix(tok, 16)
                    .map_err(|_| format!("word {i} ('{tok}', byte offset {}) is not hex", 8 * i))
            })
            .collect()
    }
}

fn decode(a: DecodeArgs) -> Result<(), String> {
    nic_rtl::cell::format::check_cell_payload(a.cell_payload).map_err(|e| e.to_string())?;
    let text = match a.input.as_deref() {
        None | Some("-") => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| format!("reading stdin: {e}"))?;
            s
        }
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?,
    };
    let mut model = ReassemblyModel::new(a.cell_payload);
    let mut failures = 0;
    let mut index = 0;
    for (line_no, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words = match parse_cell_line(line, a.bytes) {
            Ok(w) => w,
            Err(e) => {
                println!("cell {index} (line {}): malformed input: {e}", line_no + 1);
                failures += 1;
                index += 1;
                continue;
            }
        };
        match decode_cell(&words, a.cell_payload) {
            Ok(c) => {
                let h = &c.header;
                println!(
                    "cell {index} (line {}): {} ({:#04x}) flags {}{}{}{}{} length {} dest {}:{} src {}:{} psn {:#08x} cell {} message {} bytes, cell CRC {:#010x} ok",
                    line_no + 1,
                    opcode::name(h.opcode),
                    h.opcode,
                    if h.first() { "FIRST " } else { "" },
                    if h.last() { "LAST " } else { "" },
                    if h.flags & 4 != 0 { "IMMEDIATE " } else { "" },
                    if h.flags & 8 != 0 { "INVALIDATE " } else { "" },
                    if h.flags & 16 != 0 { "RESYNC " } else { "" },
                    h.cell_length,
                    h.dest_node,
                    h.dest_qp,
                    h.src_node,
                    h.src_qp,
                    h.psn,
                    h.cell_seq,
                    h.message_length,
                    c.cell_crc
                );
                if let Some(r) = c.reth {
                    println!(
                        "  RETH: vaddr {:#018x} stag {:#010x} dma length {}",
                        r.vaddr, r.stag, r.dma_length
                    );
                }
                let shown: String = c
                    .payload
                    .iter()
                    .take(64)
                    .map(|b| format!("{b:02x}"))
                    .collect();
                println!(
                    "  payload: {shown}{}",
                    if c.payload.len() > 64 { "..." } else { "" }
                );
                if let Some(p) = c.packet_crc {
                    println!(
                        "  packet CRC {p:#010x}{}",
                        c.immediate
                            .map(|i| format!(", immediate {i:#010x}"))
                            .unwrap_or_default()
                    );
                }
            }
            Err(e) => {
                println!("cell {index} (line {}): {e}", line_no + 1);
                failures += 1;
            }
        }
        if let Some(o) = model.push_cell(&words) {
            if o.status != CellStatus::Ok {
                if decode_cell(&words, a.cell_payload).is_ok() {
                    println!("  message check: {:?} (sequence, header consistency, length or packet CRC)", o.status);
                    failures += 1;
                }
            } else if o.header.last() {
                println!(
                    "  message complete: {} bytes, packet CRC ok",
                    o.header.message_length
                );
            }
        } else {
            println!("  dropped: continuation of a failed message");
        }
        index += 1;
    }
    if index == 0 {
        return Err("no cells in the input".into());
    }
    let cut = model.unfinished().map(|u| u.to_string());
    if let Some(c) = &cut {
        println!("end of input: {c}");
    }
    match (failures, cut) {
        (0, None) => Ok(()),
        (0, Some(c)) => Err(c),
        (n, None) => Err(format!("{n} of {index} cell(s) failed")),
        (n, Some(c)) => Err(format!("{n} of {index} cell(s) failed; {c}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_lines_name_the_bad_word() {
        assert!(parse_cell_line("0011 zz", false)
            .unwrap_err()
            .contains("word 1 ('zz', byte offset 8)"));
        assert!(parse_cell_line("00112233445566778", false)
            .unwrap_err()
            .contains("more than 16"));
        assert!(parse_cell_line("0011223344", true)
            .unwrap_err()
            .contains("truncated cell"));
        assert_eq!(parse_cell_line("0100000000000000", true).unwrap(), vec![1]);
    }

    /// Characters of several bytes are refused by name, not split (a panic).
    #[test]
    fn hex_with_wide_characters_is_an_error() {
        assert!(parse_hex_bytes("a\u{e9}0").is_err());
        let e = parse_hex_bytes("a\u{e9}\u{e9}0").unwrap_err();
        assert!(
            e.contains("'a\u{e9}' at character 0 is not a hex byte"),
            "{e}"
        );
        let e = parse_hex_bytes("00 1\u{e9}").unwrap_err();
        assert!(
            e.contains("'1\u{e9}' at character 2 is not a hex byte"),
            "{e}"
        );
        assert!(parse_hex_bytes("\u{e9}\u{e9}").is_err());
        assert!(parse_cell_line("00\u{1F600}00000000000000", true).is_err());
        assert_eq!(parse_hex_bytes("0a 0B").unwrap(), vec![10, 11]);
    }

    proptest::proptest! {
        /// Any line: words or an error, never a panic.
        #[test]
        fn any_line_parses_or_is_refused(line in ".{0,80}", bytes in proptest::bool::ANY) {
            let _ = parse_cell_line(&line, bytes);
            let _ = parse_hex_bytes(&line);
        }
    }
}
