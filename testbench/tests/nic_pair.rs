//! Two NIC tops back to back in a Verilator co-simulation, each with its host memory:
//! every opcode with payloads from 0 bytes to several cells, every NACK syndrome, go-back-N
//! recovery from lost and corrupted cells, and the lockstep of RustHDL against Verilator.

use nic_abi::{csr, CompletionStatus, Cqe, Rqe, Syndrome, Wqe, WqeOpcode};
use nic_cosim::cell_link::LinkFault;
use nic_cosim::host_memory::HostMemoryTiming;
use nic_cosim::{
    NicTopInputs, NicTopOutputs, RustHdlNicTop, Stepper, VerilatedNicTop, VerilatedNicTopTpt256,
};
use nic_testbench::nic_pair::{NicPair, DATA_AREA};
use nic_testbench::nic_traffic_stimulus::post_random;
use nic_testbench::paired::Paired;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const QPS: usize = 4;
const ENABLE_ALL: u64 = csr::ENABLE_SEND_RECV | csr::ENABLE_RDMA;
/// Requester buffers at DATA_AREA, responder regions at DATA_AREA + 0x4_0000.
const REMOTE_AREA: u32 = DATA_AREA + 0x4_0000;

fn verilated() -> VerilatedNicTop {
    VerilatedNicTop::new().expect("Verilator model (run scripts/setup.sh)")
}

fn pair_with<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>>(
    nics: [S; 2],
    seed: u64,
    stall: f64,
) -> NicPair<S> {
    let timing = HostMemoryTiming {
        latency: 6,
        stall,
        seed,
    };
    let mut pair = NicPair::new(nics, QPS, timing, 4);
    pair.hosts[0].configure(1, ENABLE_ALL, 100);
    pair.hosts[1].configure(0, ENABLE_ALL, 5000);
    pair.flush_csr(10_000).unwrap();
    pair
}

fn pair(seed: u64) -> NicPair<VerilatedNicTop> {
    pair_with([verilated(), verilated()], seed, 0.1)
}

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..len).map(|_| rng.gen()).collect()
}

/// Run until host `n` has `count` completions; return them.
fn wait_completions<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>>(
    pair: &mut NicPair<S>,
    n: usize,
    count: usize,
    max_cycles: u64,
) -> Vec<Cqe> {
    if let Err(e) = pair.run_until(max_cycles, |p| p.hosts[n].completions.len() >= count) {
        panic!(
            "host {n}: {e}: {} of {count} completions: {:#?}",
            pair.hosts[n].completions.len(),
            pair.hosts[n].completions
        );
    }
    assert!(pair.faults().is_empty(), "DMA faults: {:?}", pair.faults());
    pair.hosts[n].completions.clone()
}

fn status(c: &Cqe) -> CompletionStatus {
    CompletionStatus::from_code(c.status)
}

#[test]
fn every_opcode_with_payloads_from_0_bytes_to_several_cells() {
    let mut pair = pair(1);
    let sizes = [0usize, 1, 8, 13, 255, 256, 257, 700, 1500];
    let mut expected_sends = 0;
    let mut expected_recvs = 0;
    let mut wr_id = 0u64;
    for (i, &len) in sizes.iter().enumerate() {
        for op in WqeOpcode::ALL {
            let len = if op.is_atomic() { 8 } else { len };
            let qp = (i + op as usize) % QPS;
            wr_id += 1;
            let local = DATA_AREA + (wr_id as u32) * 0x800;
            let remote = REMOTE_AREA + (wr_id as u32) * 0x800;
            let data = pattern(wr_id, len);
            let remote_data = pattern(wr_id + 1000, len.max(8));
            pair.hosts[0].mem.write_bytes(local, &data);
            pair.hosts[1].mem.write_bytes(remote, &remote_data);
            if op.consumes_receive() {
                pair.hosts[1].post_receive(
                    qp,
                    &Rqe {
                        buffer_addr: remote,
                        buffer_length: 0x800,
                        wr_id: 0x1000 + wr_id,
                    },
                );
                expected_recvs += 1;
            }
            let wqe = Wqe {
                opcode: op as u8,
                length: len as u32,
                wr_id,
                local_addr: local,
                remote_vaddr: remote as u64,
                immediate: 0xABC0_0000 | wr_id as u32,
                compare_add: if op == WqeOpcode::AtomicCompareSwap {
                    u64::from_le_bytes(remote_data[..8].try_into().unwrap())
                } else {
                    5
                },
                swap: 0x5555_0000 + wr_id,
                ..Default::default()
            };
            pair.hosts[0].post_send(qp, &wqe);
            expected_sends += 1;
            let sends = wait_completions(&mut pair, 0, expected_sends, 200_000);
            let c = sends.last().unwrap();
            assert_eq!(
                status(c),
                CompletionStatus::Success,
                "{op:?} len {len}: {c:?}"
            );
            assert_eq!(
                (c.wr_id, c.opcode, c.qp as usize),
                (wr_id, op as u8, qp),
                "{c:?}"
            );
            assert_eq!(c.byte_count as usize, len);
            assert!(!c.is_receive);
            let old = u64::from_le_bytes(remote_data[..8].try_into().unwrap());
            match op {
                WqeOpcode::Send
                | WqeOpcode::SendImmediate
                | WqeOpcode::RdmaWrite
                | WqeOpcode::RdmaWriteImmediate => {
                    assert_eq!(
                        pair.hosts[1].mem.read_bytes(remote, len),
                        &data[..],
                        "{op:?} len {len}"
                    );
                    let untouched = &remote_data[len.min(remote_data.len())..];
                    assert_eq!(
                        pair.hosts[1]
                            .mem
                            .read_bytes(remote + len as u32, untouched.len()),
                        untouched,
                        "{op:?} len {len}: bytes after the message were written"
                    );
                }
                WqeOpcode::RdmaRead => {
                    assert_eq!(
                        pair.hosts[0].mem.read_bytes(local, len),
                        &remote_data[..len],
                        "READ len {len}"
                    );
                }
                WqeOpcode::AtomicCompareSwap => {
                    assert_eq!(
                        pair.hosts[1].mem.read_u64(remote),
                        0x5555_0000 + wr_id,
                        "CAS swapped"
                    );
                    assert_eq!(
                        pair.hosts[0].mem.read_u64(local),
                        old,
                        "CAS returns the original"
                    );
                }
                WqeOpcode::AtomicFetchAdd => {
                    assert_eq!(
                        pair.hosts[1].mem.read_u64(remote),
                        old.wrapping_add(5),
                        "FAA added"
                    );
                    assert_eq!(
                        pair.hosts[0].mem.read_u64(local),
                        old,
                        "FAA returns the original"
                    );
                }
            }
            if op.consumes_receive() {
                let recvs = wait_completions(&mut pair, 1, expected_recvs, 10_000);
                let r = recvs.last().unwrap();
                assert_eq!(status(r), CompletionStatus::Success, "{r:?}");
                assert!(r.is_receive);
                assert_eq!(
                    (r.wr_id, r.opcode, r.byte_count as usize),
                    (0x1000 + wr_id, op as u8, len)
                );
                assert_eq!((r.src_node, r.src_qp as usize, r.qp as usize), (0, qp, qp));
                assert_eq!(r.has_immediate, op.has_immediate());
                if op.has_immediate() {
                    assert_eq!(r.immediate, 0xABC0_0000 | wr_id as u32);
                }
            }
        }
    }
    assert_eq!(
        pair.hosts[1].completions.len(),
        expected_recvs,
        "no extra receive completions"
    );
}

/// Provoke `syndrome` with one work request from NIC 0 and check the completion and both
/// counters; `setup` prepares the pair and returns the WQE.
fn provoke<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>>(
    pair: &mut NicPair<S>,
    syndrome: Syndrome,
    qp: usize,
    wqe: Wqe,
) -> Cqe {
    let index = syndrome.counter_index().unwrap() as u16;
    let sent_before = pair.csr_read(1, csr::NACK_SENT + 8 * index).unwrap();
    let received_before = pair.csr_read(0, csr::NACK_RECEIVED + 8 * index).unwrap();
    let before = pair.hosts[0].completions.len();
    pair.hosts[0].post_send(qp, &wqe);
    let c = wait_completions(pair, 0, before + 1, 100_000)[before];
    assert_eq!(
        status(&c),
        CompletionStatus::Remote(syndrome),
        "{syndrome}: {c:?}"
    );
    assert_eq!(c.wr_id, wqe.wr_id);
    // At least one NACK each way. A requester whose timer fires while the NACK is in
    // flight retransmits, and the responder answers the retransmission of a refused PSN
    // with the same NACK (docs/nic-architecture.md, "Refused PSNs"), so a slow refusal
    // may count more than once: a request punted to the TPT's exception queue holds the
    // responder's receive path until the exception times out (about 65,000 clocks), and
    // the requester's retransmissions of it (two at RETRY_TIMEOUT 4096: one before the
    // link backed up, one waiting in the requester's transmit path) are each answered.
    let sent = pair.csr_read(1, csr::NACK_SENT + 8 * index).unwrap() - sent_before;
    let received = pair.csr_read(0, csr::NACK_RECEIVED + 8 * index).unwrap() - received_before;
    assert!(
        (1..=3).contains(&sent),
        "{syndrome}: NACK_SENT +{sent} (work request {})",
        c.wr_id
    );
    assert!(
        (1..=sent).contains(&received),
        "{syndrome}: NACK_RECEIVED +{received}, sent +{sent}"
    );
    c
}

#[test]
fn final_nack_syndromes_write_nothing_and_reach_the_sender() {
    let mut pair = pair(2);
    let remote = REMOTE_AREA + 0x100;
    let canary = pattern(77, 64);
    pair.hosts[1].mem.write_bytes(remote, &canary);
    pair.hosts[0].mem.write_bytes(DATA_AREA, &pattern(78, 64));
    let write = |wr_id, vaddr: u64| Wqe {
        opcode: WqeOpcode::RdmaWrite as u8,
        length: 64,
        wr_id,
        local_addr: DATA_AREA,
        remote_vaddr: vaddr,
        ..Default::default()
    };
    let send = |wr_id, length| Wqe {
        opcode: WqeOpcode::Send as u8,
        length,
        wr_id,
        local_addr: DATA_AREA,
        ..Default::default()
    };
    // No receive buffer posted.
    provoke(&mut pair, Syndrome::ReceiverNotReady, 0, send(1, 16));
    // A message longer than the receive buffer: nothing past the buffer's end.
    pair.hosts[1].post_receive(
        1,
        &Rqe {
            buffer_addr: remote,
            buffer_length: 16,
            wr_id: 9,
        },
    );
    provoke(&mut pair, Syndrome::InvalidRequest, 1, send(2, 64));
    assert_eq!(
        pair.hosts[1].mem.read_bytes(remote + 16, 48),
        &canary[16..],
        "wrote past the buffer"
    );
    let r = *pair.hosts[1]
        .completions
        .last()
        .expect("a receive completion");
    assert_eq!(
        CompletionStatus::from_code(r.status),
        CompletionStatus::LocalLengthError
    );
    pair.hosts[1].mem.write_bytes(remote, &canary);
    // Beyond the 32-bit physical space (no TPT).
    provoke(&mut pair, Syndrome::RemoteAccessError, 2, write(3, 1 << 40));
    // RDMA disabled on the responder.
    pair.hosts[1].queue_csr_write(csr::ENABLE, csr::ENABLE_SEND_RECV);
    pair.flush_csr(1000).unwrap();
    provoke(
        &mut pair,
        Syndrome::RdmaDisabled,
        3,
        write(4, remote as u64),
    );
    // SEND/RECEIVE disabled: every request is refused.
    pair.hosts[1].queue_csr_write(csr::ENABLE, 0);
    pair.flush_csr(1000).unwrap();
    pair.hosts[1].post_receive(
        0,
        &Rqe {
            buffer_addr: remote,
            buffer_length: 64,
            wr_id: 10,
        },
    );
    provoke(&mut pair, Syndrome::RemoteOperationalError, 0, send(5, 8));
    provoke(
        &mut pair,
        Syndrome::RemoteOperationalError,
        1,
        write(6, remote as u64),
    );
    assert_eq!(
        pair.hosts[1].mem.read_bytes(remote, 64),
        &canary[..],
        "a refused request wrote"
    );
    // The QPs still work afterwards.
    pair.hosts[1].queue_csr_write(csr::ENABLE, ENABLE_ALL);
    pair.flush_csr(1000).unwrap();
    let before = pair.hosts[0].completions.len();
    pair.hosts[0].post_send(3, &write(7, remote as u64));
    let c = wait_completions(&mut pair, 0, before + 1, 100_000)[before];
    assert_eq!(status(&c), CompletionStatus::Success, "{c:?}");
    assert_eq!(
        pair.hosts[1].mem.read_bytes(remote, 64),
        &pattern(78, 64)[..]
    );
}

#[test]
fn lost_and_corrupted_cells_are_retransmitted_go_back_n() {
    let mut pair = pair(3);
    let seq = Syndrome::SequenceError.counter_index().unwrap() as u16;
    let crc = Syndrome::CrcOrMalformed.counter_index().unwrap() as u16;
    let messages = 12u32;
    for k in 0..messages {
        let len = 300 + 40 * k as usize;
        let data = pattern(k as u64 + 500, len);
        pair.hosts[0].mem.write_bytes(DATA_AREA + k * 0x800, &data);
        pair.hosts[0].post_send(
            0,
            &Wqe {
                opcode: WqeOpcode::RdmaWrite as u8,
                length: len as u32,
                wr_id: k as u64,
                local_addr: DATA_AREA + k * 0x800,
                remote_vaddr: (REMOTE_AREA + k * 0x800) as u64,
                ..Default::default()
            },
        );
    }
    // Link 0 carries NIC 0's requests (2 or 3 cells each): lose cell 2, corrupt cell 8.
    pair.links[0].faults.insert(2, LinkFault::Drop);
    pair.links[0].faults.insert(
        8,
        LinkFault::Corrupt {
            word: 1,
            mask: 1 << 20,
        },
    );
    let done = wait_completions(&mut pair, 0, messages as usize, 400_000);
    for (k, c) in done.iter().enumerate() {
        assert_eq!(status(c), CompletionStatus::Success, "{c:?}");
        assert_eq!(c.wr_id, k as u64, "in order, exactly once");
        let len = 300 + 40 * k;
        assert_eq!(
            pair.hosts[1]
                .mem
                .read_bytes(REMOTE_AREA + k as u32 * 0x800, len),
            &pattern(k as u64 + 500, len)[..],
            "message {k}"
        );
    }
    assert!(
        pair.csr_read(1, csr::NACK_SENT + 8 * seq).unwrap() >= 1,
        "a sequence error was NACKed"
    );
    assert!(
        pair.csr_read(1, csr::NACK_SENT + 8 * crc).unwrap() >= 1,
        "a corrupted cell was NACKed"
    );
    assert!(pair.csr_read(0, csr::STAT_RETRANSMISSIONS).unwrap() >= 2);
}

/// An RDMA WRITE from NIC 0's QP 0 of 64 bytes to `vaddr` (refused when it lies beyond
/// 2^32: no TPT).
fn write_to(wr_id: u64, vaddr: u64) -> Wqe {
    Wqe {
        opcode: WqeOpcode::RdmaWrite as u8,
        length: 64,
        wr_id,
        local_addr: DATA_AREA,
        remote_vaddr: vaddr,
        ..Default::default()
    }
}

/// A final NACK still in flight when the requester times out (link latency 150 each way,
/// `RETRY_TIMEOUT` 200): the requester goes back and retransmits the refused requests,
/// but the refused WQEs complete with their syndrome, never with success, and the request
/// between them is applied once (docs/nic-architecture.md, "Refused PSNs").
#[test]
fn a_final_nack_in_flight_across_a_timeout_still_refuses() {
    let timing = HostMemoryTiming {
        latency: 6,
        stall: 0.1,
        seed: 5,
    };
    let mut pair = NicPair::new([verilated(), verilated()], QPS, timing, 150);
    pair.hosts[0].configure(1, ENABLE_ALL, 100);
    pair.hosts[1].configure(0, ENABLE_ALL, 5000);
    pair.hosts[0].queue_csr_write(csr::RETRY_TIMEOUT, 200);
    pair.flush_csr(10_000).unwrap();
    let data = pattern(90, 64);
    pair.hosts[0].mem.write_bytes(DATA_AREA, &data);
    pair.hosts[0].post_send(0, &write_to(1, 1 << 40));
    pair.hosts[0].post_send(0, &write_to(2, (REMOTE_AREA + 0x200) as u64));
    pair.hosts[0].post_send(0, &write_to(3, 1 << 41));
    let done = wait_completions(&mut pair, 0, 3, 100_000);
    let got: Vec<(u64, CompletionStatus)> = done.iter().map(|c| (c.wr_id, status(c))).collect();
    let rae = CompletionStatus::Remote(Syndrome::RemoteAccessError);
    assert_eq!(
        got,
        [(1, rae), (2, CompletionStatus::Success), (3, rae)],
        "{done:#?}"
    );
    assert_eq!(
        pair.hosts[1].mem.read_bytes(REMOTE_AREA + 0x200, 64),
        &data[..]
    );
    assert!(
        pair.csr_read(0, csr::STAT_RETRANSMISSIONS).unwrap() >= 1,
        "the timer fired while the NACK was in flight"
    );
}

/// A final NACK lost on the wire: the ACK of a later request acknowledges the refused PSN
/// too, and used to complete the refused WQE with success. The ACK reports the refusal
/// in its AETH (docs/nic-architecture.md, "Refused PSNs"), so the refused WQE completes
/// with its syndrome and the later one with success, without waiting for a timeout.
#[test]
fn a_lost_final_nack_is_reported_by_the_next_answer() {
    let mut pair = pair(6);
    let data = pattern(91, 64);
    pair.hosts[0].mem.write_bytes(DATA_AREA, &data);
    // Link 1 carries NIC 1's answers: its first cell is the NACK for the refused WRITE.
    pair.links[1].faults.insert(0, LinkFault::Drop);
    pair.hosts[0].post_send(0, &write_to(1, 1 << 40));
    // The next WRITE after the NACK has left NIC 1 (so its ACK is not held behind it).
    pair.run_until(300, |_| false).unwrap_err();
    pair.hosts[0].post_send(0, &write_to(2, (REMOTE_AREA + 0x300) as u64));
    let done = wait_completions(&mut pair, 0, 2, 3_000);
    let got: Vec<(u64, CompletionStatus)> = done.iter().map(|c| (c.wr_id, status(c))).collect();
    assert_eq!(
        got,
        [
            (1, CompletionStatus::Remote(Syndrome::RemoteAccessError)),
            (2, CompletionStatus::Success)
        ],
        "the refused WRITE completed with success: {done:#?}"
    );
    assert_eq!(
        pair.hosts[1].mem.read_bytes(REMOTE_AREA + 0x300, 64),
        &data[..]
    );
    let rae = Syndrome::RemoteAccessError.counter_index().unwrap() as u16;
    assert_eq!(pair.csr_read(1, csr::NACK_SENT + 8 * rae).unwrap(), 1);
    assert_eq!(
        pair.csr_read(0, csr::NACK_RECEIVED + 8 * rae).unwrap(),
        0,
        "the NACK was lost"
    );
}

/// A READ or atomic whose response was lost, then an answer past it: the READ's (or
/// atomic's) response is corrupted on link 1 (the requester's reassembler drops it), the
/// resend after the timeout is corrupted on link 0, so the responder, which executed it,
/// answers NACK CRC_OR_MALFORMED with its expected PSN, the one after it (soak-72). That
/// NACK is an implied NAK: the requester resends the READ or atomic (the responder
/// executes a duplicate READ again, answers a duplicate atomic with its saved original
/// value), and it completes only with its response: the data byte-exact, the atomic
/// applied once. A WRITE behind it puts the NACK's PSN among those the QP has posted.
fn implied_nak_after_a_lost_response(op: WqeOpcode) {
    let mut pair = pair(6);
    let len = if op.is_atomic() { 8 } else { 200 };
    let local = DATA_AREA;
    let remote = REMOTE_AREA;
    let remote_data = pattern(61, len);
    let original = u64::from_le_bytes(remote_data[..8].try_into().unwrap());
    pair.hosts[1].mem.write_bytes(remote, &remote_data);
    pair.hosts[0].mem.write_bytes(local, &[0xEE; 200]);
    let write_data = pattern(62, 100);
    pair.hosts[0]
        .mem
        .write_bytes(DATA_AREA + 0x800, &write_data);
    pair.hosts[0].post_send(
        0,
        &Wqe {
            opcode: op as u8,
            length: len as u32,
            wr_id: 1,
            local_addr: local,
            remote_vaddr: remote as u64,
            compare_add: 0x1_0000_0001,
            ..Default::default()
        },
    );
    pair.hosts[0].post_send(
        0,
        &Wqe {
            opcode: WqeOpcode::RdmaWrite as u8,
            length: 100,
            wr_id: 2,
            local_addr: DATA_AREA + 0x800,
            remote_vaddr: (REMOTE_AREA + 0x800) as u64,
            ..Default::default()
        },
    );
    // Link 1, cell 0: the response (one cell). Link 0, cell 1: the resend (cell 0 is the
    // first transmission); word 3 is in the RETH, so the header still names the QP.
    let corrupt = LinkFault::Corrupt {
        word: 3,
        mask: 1 << 7,
    };
    pair.links[1].faults.insert(0, corrupt);
    pair.links[0].faults.insert(1, corrupt);
    let done = wait_completions(&mut pair, 0, 2, 200_000);
    assert_eq!(
        (pair.links[0].cells_corrupted, pair.links[1].cells_corrupted),
        (1, 1),
        "both faults hit"
    );
    let crc = Syndrome::CrcOrMalformed.counter_index().unwrap() as u16;
    assert_eq!(
        pair.csr_read(1, csr::NACK_SENT + 8 * crc).unwrap(),
        1,
        "the corrupted resend was NACKed"
    );
    for (k, c) in done.iter().enumerate() {
        assert_eq!(status(c), CompletionStatus::Success, "{c:?}");
        assert_eq!(c.wr_id, k as u64 + 1, "in order, once: {c:?}");
    }
    if op.is_atomic() {
        assert_eq!(
            pair.hosts[0].mem.read_u64(local),
            original,
            "{op:?} returns the original value"
        );
        assert_eq!(
            pair.hosts[1].mem.read_u64(remote),
            original.wrapping_add(0x1_0000_0001),
            "{op:?} applied once"
        );
    } else {
        assert_eq!(
            pair.hosts[0].mem.read_bytes(local, len),
            &remote_data[..],
            "READ returned other data"
        );
    }
    assert_eq!(
        pair.hosts[1].mem.read_bytes(REMOTE_AREA + 0x800, 100),
        &write_data[..]
    );
}

#[test]
fn a_nack_past_a_read_whose_response_was_lost_resends_the_read() {
    implied_nak_after_a_lost_response(WqeOpcode::RdmaRead);
}

#[test]
fn a_nack_past_an_atomic_whose_response_was_lost_resends_the_atomic() {
    implied_nak_after_a_lost_response(WqeOpcode::AtomicFetchAdd);
}

#[test]
fn a_request_to_an_unplugged_nic_completes_with_port_down() {
    let mut pair = pair(4);
    pair.unplug(1);
    let index = Syndrome::PortDown.counter_index().unwrap() as u16;
    pair.hosts[0].post_send(
        2,
        &Wqe {
            opcode: WqeOpcode::RdmaWrite as u8,
            length: 600,
            wr_id: 99,
            local_addr: DATA_AREA,
            remote_vaddr: REMOTE_AREA as u64,
            ..Default::default()
        },
    );
    let c = wait_completions(&mut pair, 0, 1, 100_000)[0];
    assert_eq!(
        status(&c),
        CompletionStatus::Remote(Syndrome::PortDown),
        "{c:?}"
    );
    assert_eq!(pair.csr_read(0, csr::NACK_RECEIVED + 8 * index).unwrap(), 1);
}

/// The NIC top under RustHDL stepping and under Verilator, with identical inputs every
/// cycle, for at least 10,000 cycles of mixed traffic: the outputs must agree every cycle.
#[test]
fn nic_top_lockstep_rusthdl_against_verilator() {
    // The RustHDL NIC top is a large value: give it a stack of its own.
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(lockstep)
        .unwrap()
        .join()
        .unwrap();
}

fn lockstep() {
    let reference = Paired::new(RustHdlNicTop::new(), verilated());
    let mut pair = pair_with(
        [reference, Paired::new(RustHdlNicTop::new(), verilated())],
        11,
        0.2,
    );
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let mut posted = 0;
    while pair.cycle < 12_000 {
        if posted < 40 && pair.hosts[0].completions.len() + 4 > posted {
            let op = WqeOpcode::ALL[rng.gen_range(0..WqeOpcode::ALL.len())];
            let len = if op.is_atomic() {
                8
            } else {
                rng.gen_range(0..700)
            };
            let qp = rng.gen_range(0..QPS);
            if op.consumes_receive() {
                pair.hosts[1].post_receive(
                    qp,
                    &Rqe {
                        buffer_addr: REMOTE_AREA,
                        buffer_length: 0x800,
                        wr_id: posted as u64,
                    },
                );
            }
            pair.hosts[0].post_send(
                qp,
                &Wqe {
                    opcode: op as u8,
                    length: len,
                    wr_id: posted as u64,
                    local_addr: DATA_AREA,
                    remote_vaddr: REMOTE_AREA as u64,
                    ..Default::default()
                },
            );
            posted += 1;
        }
        pair.run_until(50, |_| false).ok();
        for h in &pair.hosts {
            if let Some(d) = &h.nic.divergence {
                panic!("cycle {}: RustHDL and Verilator disagree:\n{d:#?}", d.cycle);
            }
        }
    }
    assert!(pair.hosts[0].nic.cycles_compared >= 10_000);
    assert!(
        pair.hosts[0].completions.len() >= 20,
        "traffic flowed: {}",
        pair.hosts[0].completions.len()
    );
}

/// A message read early leaves through the send slot with its own descriptor: the first
/// request after configuration, a 64-byte WRITE (read early, loaded into `SendSlot` as
/// its payload request is taken), under RustHDL and Verilator in lockstep, link latency
/// 150, with the refused WRITEs of `a_final_nack_in_flight_across_a_timeout_still_refuses`.
/// The NICs' outputs agree every cycle and the three WRITEs complete (two refused).
#[test]
fn a_message_read_early_leaves_the_send_slot_alike_in_rusthdl_and_verilator() {
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(send_slot_lockstep)
        .unwrap()
        .join()
        .unwrap();
}

fn send_slot_lockstep() {
    let timing = HostMemoryTiming {
        latency: 6,
        stall: 0.1,
        seed: 5,
    };
    let paired = || Paired::new(RustHdlNicTop::new(), verilated());
    let mut pair = NicPair::new([paired(), paired()], QPS, timing, 150);
    pair.hosts[0].configure(1, ENABLE_ALL, 100);
    pair.hosts[1].configure(0, ENABLE_ALL, 5000);
    pair.hosts[0].queue_csr_write(csr::RETRY_TIMEOUT, 200);
    pair.flush_csr(10_000).unwrap();
    pair.hosts[0].mem.write_bytes(DATA_AREA, &pattern(92, 64));
    pair.hosts[0].post_send(0, &write_to(1, 1 << 40));
    pair.hosts[0].post_send(0, &write_to(2, (REMOTE_AREA + 0x200) as u64));
    pair.hosts[0].post_send(0, &write_to(3, 1 << 41));
    let done = pair.run_until(20_000, |p| p.hosts[0].completions.len() >= 3);
    for (n, h) in pair.hosts.iter().enumerate() {
        if let Some(d) = &h.nic.divergence {
            panic!(
                "NIC {n}, cycle {}: RustHDL and Verilator disagree:\n{d:#?}",
                d.cycle
            );
        }
    }
    done.unwrap();
    let got: Vec<(u64, CompletionStatus)> = pair.hosts[0]
        .completions
        .iter()
        .map(|c| (c.wr_id, status(c)))
        .collect();
    let rae = CompletionStatus::Remote(Syndrome::RemoteAccessError);
    assert_eq!(got, [(1, rae), (2, CompletionStatus::Success), (3, rae)]);
}

/// Write TPT entry `index` of NIC `n` through the CSRs.
fn tpt_write<S: Stepper<Inputs = NicTopInputs, Outputs = NicTopOutputs>>(
    pair: &mut NicPair<S>,
    n: usize,
    index: u32,
    word0: u64,
    vaddr: u64,
    length: u64,
    paddr: u32,
) {
    let h = &mut pair.hosts[n];
    h.queue_csr_write(csr::TPT_INDEX, index as u64);
    h.queue_csr_write(csr::TPT_WORD0, word0);
    h.queue_csr_write(csr::TPT_VADDR, vaddr);
    h.queue_csr_write(csr::TPT_LENGTH, length);
    h.queue_csr_write(csr::TPT_PADDR, paddr as u64);
    h.queue_csr_write(csr::TPT_COMMAND, csr::TPT_COMMAND_WRITE);
    pair.flush_csr(1000).unwrap();
}

/// The hardware TPT on the responder: checks in the order valid, key, rights, bounds;
/// one-shot entries; an unknown STag goes to the exception queue and waits for the driver.
#[test]
fn hardware_tpt_checks_translates_and_punts_unknown_stags() {
    let mut pair = pair_with(
        [
            VerilatedNicTopTpt256::new().unwrap(),
            VerilatedNicTopTpt256::new().unwrap(),
        ],
        5,
        0.1,
    );
    let config = pair.csr_read(1, csr::NIC_CONFIG).unwrap();
    assert_eq!(
        (config >> 24) & 0xFF,
        8,
        "NIC_CONFIG reports log2(256) TPT entries: {config:#x}"
    );
    let base: u64 = 0x7000_0000_0000;
    let key = 0x3C;
    let rw = csr::TPT_VALID
        | csr::TPT_REMOTE_WRITE
        | csr::TPT_REMOTE_READ
        | csr::TPT_ATOMIC
        | (key << csr::TPT_KEY_SHIFT);
    tpt_write(&mut pair, 1, 5, rw, base, 4096, REMOTE_AREA);
    tpt_write(
        &mut pair,
        1,
        6,
        csr::TPT_VALID | csr::TPT_REMOTE_WRITE | csr::TPT_ONE_SHOT | (key << csr::TPT_KEY_SHIFT),
        base,
        4096,
        REMOTE_AREA + 0x2000,
    );
    let data = pattern(90, 100);
    pair.hosts[0].mem.write_bytes(DATA_AREA, &data);
    let canary = pattern(91, 0x3000);
    pair.hosts[1].mem.write_bytes(REMOTE_AREA, &canary);
    let stag = |index: u32, key: u64| (index << 8) | key as u32;
    let wqe = |op: WqeOpcode, wr_id, stag, vaddr| Wqe {
        opcode: op as u8,
        length: if op.is_atomic() { 8 } else { 100 },
        wr_id,
        local_addr: DATA_AREA,
        remote_vaddr: vaddr,
        stag,
        ..Default::default()
    };
    let ok = |pair: &mut NicPair<VerilatedNicTopTpt256>, w: Wqe| {
        let before = pair.hosts[0].completions.len();
        pair.hosts[0].post_send(0, &w);
        wait_completions(pair, 0, before + 1, 100_000)[before]
    };
    // Translated: vaddr base + 64 lands at REMOTE_AREA + 64.
    let c = ok(
        &mut pair,
        wqe(WqeOpcode::RdmaWrite, 1, stag(5, key), base + 64),
    );
    assert_eq!(status(&c), CompletionStatus::Success, "{c:?}");
    assert_eq!(
        pair.hosts[1].mem.read_bytes(REMOTE_AREA + 64, 100),
        &data[..]
    );
    // Key, bounds, rights: refused, nothing written.
    provoke(
        &mut pair,
        Syndrome::RemoteAccessError,
        0,
        wqe(WqeOpcode::RdmaWrite, 2, stag(5, key + 1), base + 1024),
    );
    provoke(
        &mut pair,
        Syndrome::RemoteAccessError,
        0,
        wqe(WqeOpcode::RdmaWrite, 3, stag(5, key), base + 4096 - 64),
    );
    provoke(
        &mut pair,
        Syndrome::RemoteAccessError,
        0,
        wqe(WqeOpcode::RdmaRead, 4, stag(6, key), base),
    );
    assert_eq!(
        pair.hosts[1].mem.read_bytes(REMOTE_AREA + 1024, 0x1000),
        &canary[1024..0x1400]
    );
    // One-shot: the first use succeeds, the second is refused.
    let c = ok(
        &mut pair,
        wqe(WqeOpcode::RdmaWrite, 5, stag(6, key), base + 8),
    );
    assert_eq!(status(&c), CompletionStatus::Success, "{c:?}");
    provoke(
        &mut pair,
        Syndrome::RemoteAccessError,
        0,
        wqe(WqeOpcode::RdmaWrite, 6, stag(6, key), base + 8),
    );
    // An STag not valid here: punted to the exception queue; the driver translates it.
    pair.hosts[0].post_send(0, &wqe(WqeOpcode::RdmaWrite, 7, stag(9, 1), 0x1234_0000));
    let before = pair.hosts[0].completions.len();
    let mut head = 0;
    for _ in 0..200 {
        head = pair.csr_read(1, csr::EXC_HEAD0).unwrap();
        if head & 1 != 0 {
            break;
        }
    }
    assert_eq!(head & 1, 1, "the unknown STag reached the exception queue");
    assert_eq!(
        head >> 32,
        stag(9, 1) as u64,
        "EXC_HEAD0 names the STag: {head:#x}"
    );
    assert_eq!(pair.csr_read(1, csr::EXC_HEAD1).unwrap(), 0x1234_0000);
    // The answer echoes the head's tag (a late answer to an older head would be ignored).
    pair.hosts[1].queue_csr_write(
        csr::EXC_ANSWER,
        csr::exc_answer(head, Some(REMOTE_AREA + 0x800)),
    );
    let c = wait_completions(&mut pair, 0, before + 1, 100_000)[before];
    assert_eq!(status(&c), CompletionStatus::Success, "{c:?}");
    assert_eq!(
        pair.hosts[1].mem.read_bytes(REMOTE_AREA + 0x800, 100),
        &data[..]
    );
}

/// A send-side reset of a queue pair drops a DELAY's hold: the DELAY belonged to the ring
/// the reset restarts. QP 0 takes a DELAY of 50,000 cycles; once its completion is in (the
/// hold has begun), the driver resets QP 0's send side and posts an RDMA WRITE, which
/// leaves on the wire within a few hundred cycles and lands (judged on the wire and in
/// NIC 1's memory, not by the completion alone).
#[test]
fn a_send_side_reset_drops_a_delay_hold() {
    const N: u32 = 50_000;
    let mut pair = pair(23);
    pair.links[0].log = Some(vec![]);
    let data = pattern(23, 64);
    pair.hosts[0].mem.write_bytes(DATA_AREA, &data);
    let delay = Wqe {
        wr_id: 1,
        ..Wqe::delay(N).unwrap()
    };
    pair.hosts[0].post_sends(0, &[delay]);
    let c = wait_completions(&mut pair, 0, 1, 20_000)[0];
    assert_eq!(status(&c), CompletionStatus::Success, "{c:?}");
    // The send-side reset (start PSN 500), then a WRITE on the restarted ring.
    let start_psn = 500u32;
    pair.hosts[0].queue_csr_write(
        csr::qp(0, csr::QP_CTRL),
        csr::QP_CTRL_ENABLE
            | csr::QP_CTRL_SEND_RESET
            | (start_psn as u64) << csr::QP_CTRL_START_PSN_SHIFT,
    );
    pair.hosts[0].sq_posted[0] = start_psn;
    let reset_at = pair.cycle;
    pair.hosts[0].post_sends(
        0,
        &[Wqe {
            opcode: WqeOpcode::RdmaWrite as u8,
            length: 64,
            wr_id: 2,
            local_addr: DATA_AREA,
            remote_vaddr: REMOTE_AREA as u64,
            ..Default::default()
        }],
    );
    let c = wait_completions(&mut pair, 0, 2, 5_000)[1];
    assert_eq!(status(&c), CompletionStatus::Success, "{c:?}");
    let sent = pair.links[0]
        .log
        .as_ref()
        .unwrap()
        .iter()
        .filter_map(|(t, w)| {
            let h = nic_rtl::cell::format::decode_cell(w, pair.cell_payload)
                .unwrap()
                .header;
            (h.src_qp == 0 && h.psn == start_psn && h.first()).then_some(*t)
        })
        .next()
        .expect("QP 0's WRITE after the reset on the wire");
    assert!(
        sent < reset_at + 1_000,
        "the WRITE left {} cycles after the reset (the DELAY was {N})",
        sent - reset_at
    );
    assert_eq!(pair.hosts[1].mem.read_bytes(REMOTE_AREA, 64), &data[..]);
    assert!(pair.faults().is_empty(), "DMA faults: {:?}", pair.faults());
}

/// A DELAY of N cycles on QP 0, between two RDMA WRITEs, measured on the wire (the cells
/// NIC 0 hands to its link): QP 0's second WRITE leaves at least N cycles after the first
/// one's acknowledgement reached NIC 0 (the DELAY starts no sooner: like a NOP it waits
/// for the WQEs before it to complete), and no more than a few hundred cycles later than
/// that; QP 1's WRITEs keep leaving meanwhile. The WRITEs land, the completions come in
/// order with the DELAY's own (opcode 0x0E, success) between them.
#[test]
fn a_delay_holds_its_queue_pair_on_the_wire_while_another_sends() {
    const N: u64 = 3000;
    let mut pair = pair(21);
    pair.links[0].log = Some(vec![]);
    pair.links[1].log = Some(vec![]);
    let write = |wr_id: u64, offset: u32| Wqe {
        opcode: WqeOpcode::RdmaWrite as u8,
        length: 64,
        wr_id,
        local_addr: DATA_AREA + offset,
        remote_vaddr: (REMOTE_AREA + offset) as u64,
        ..Default::default()
    };
    let data = pattern(21, 64 * 64);
    pair.hosts[0].mem.write_bytes(DATA_AREA, &data);
    let delay = Wqe {
        wr_id: 2,
        ..Wqe::delay(N as u32).unwrap()
    };
    pair.hosts[0].post_sends(0, &[write(1, 0), delay, write(3, 64)]);
    // QP 1: one WRITE every 200 cycles, so it has work all through the hold.
    let mut qp1_posted = 0;
    let mut cycles = 0u64;
    while pair.hosts[0].completions.len() < 3 + qp1_posted || qp1_posted < 20 {
        if cycles.is_multiple_of(200) && qp1_posted < 20 {
            qp1_posted += 1;
            let offset = 128 + 64 * qp1_posted as u32;
            pair.hosts[0].post_send(1, &write(100 + qp1_posted as u64, offset));
        }
        pair.step();
        pair.hosts[0].poll_completions();
        cycles += 1;
        assert!(cycles < 100_000, "{:?}", pair.hosts[0].completions);
    }
    assert!(pair.faults().is_empty(), "DMA faults: {:?}", pair.faults());
    let cells = |link: usize| -> Vec<(u64, nic_rtl::cell::format::CellHeader)> {
        pair.links[link]
            .log
            .as_ref()
            .unwrap()
            .iter()
            .map(|(t, w)| {
                let c = nic_rtl::cell::format::decode_cell(w, pair.cell_payload).unwrap();
                (*t, c.header)
            })
            .collect()
    };
    let out = cells(0);
    let back = cells(1);
    let qp0: Vec<(u64, u32)> = out
        .iter()
        .filter(|(_, h)| h.src_qp == 0 && h.first())
        .map(|(t, h)| (*t, h.psn))
        .collect();
    assert_eq!(
        qp0.iter().map(|x| x.1).collect::<Vec<_>>(),
        vec![100, 102],
        "QP 0 sent its two WRITEs, PSNs 100 and 102 (the DELAY took 101 and sent nothing)"
    );
    let acked = back
        .iter()
        .find(|(_, h)| h.dest_qp == 0 && h.psn == 100)
        .map(|x| x.0)
        .expect("the first WRITE's acknowledgement");
    let second = qp0[1].0;
    assert!(
        second >= acked + N,
        "QP 0's next WRITE left {} cycles after the DELAY could start; DELAY {N}",
        second - acked
    );
    assert!(
        second <= acked + N + 400,
        "QP 0's next WRITE left {} cycles after the DELAY could start; DELAY {N}",
        second - acked
    );
    let others = out
        .iter()
        .filter(|(t, h)| h.src_qp == 1 && h.first() && *t > acked && *t < second)
        .count();
    assert!(
        others >= 10,
        "QP 1 kept sending during the hold: {others} WRITEs"
    );
    let qp0_cpls: Vec<(u64, u8, CompletionStatus)> = pair.hosts[0]
        .completions
        .iter()
        .filter(|c| c.qp == 0)
        .map(|c| (c.wr_id, c.opcode, status(c)))
        .collect();
    assert_eq!(
        qp0_cpls,
        vec![
            (1, WqeOpcode::RdmaWrite as u8, CompletionStatus::Success),
            (2, nic_abi::DELAY_OPCODE, CompletionStatus::Success),
            (3, WqeOpcode::RdmaWrite as u8, CompletionStatus::Success),
        ]
    );
    assert_eq!(
        pair.hosts[1].mem.read_bytes(REMOTE_AREA, 128),
        &data[..128],
        "both WRITEs landed"
    );
}

/// With a hardware TPT the NIC executes a BIND RKEY itself, in send-queue order (source
/// 001): NIC 1's process binds a window and posts a SEND carrying its key right behind the
/// BIND, without waiting for the BIND's completion; NIC 0's process reads the key from
/// its receive buffer the moment the SEND lands and writes with it at once. The WRITE
/// lands in the window (judged in NIC 1's memory); no driver programs the entry and none
/// answers the exception queue, so only the NIC's own bind write lets it in. Then an
/// UNBIND on the same queue pair, and a WRITE with the key after it is refused.
#[test]
fn a_send_right_behind_a_bind_carries_a_key_the_peer_can_use_at_once() {
    let mut pair = pair_with(
        [
            VerilatedNicTopTpt256::new().unwrap(),
            VerilatedNicTopTpt256::new().unwrap(),
        ],
        31,
        0.1,
    );
    let stag = (12u32 << 8) | 0x5A;
    let base: u64 = 0x7100_0000_0000;
    let window = REMOTE_AREA + 0x1000;
    let canary = pattern(31, 0x200);
    pair.hosts[1].mem.write_bytes(window, &canary);
    // NIC 1: the key in a SEND buffer; NIC 0: a receive buffer for it.
    let key_buf = DATA_AREA + 0x3000;
    pair.hosts[1].mem.write_bytes(key_buf, &stag.to_le_bytes());
    let recv_buf = DATA_AREA + 0x3800;
    pair.hosts[0].post_receive(
        0,
        &Rqe {
            buffer_addr: recv_buf,
            buffer_length: 64,
            wr_id: 0x70,
        },
    );
    let bind = Wqe {
        wr_id: 0x71,
        ..Wqe::bind(stag, base, window, 0x100, 0b010)
    };
    let send = Wqe {
        opcode: WqeOpcode::Send as u8,
        length: 4,
        wr_id: 0x72,
        local_addr: key_buf,
        ..Default::default()
    };
    pair.hosts[1].post_sends(0, &[bind, send]);
    // NIC 0: the key arrives; the WRITE with it goes out in the same clock.
    if let Err(e) = pair.run_until(20_000, |p| !p.hosts[0].completions.is_empty()) {
        panic!("the SEND with the key never arrived: {e}");
    }
    let got = u32::from_le_bytes(
        pair.hosts[0].mem.read_bytes(recv_buf, 4)[..]
            .try_into()
            .unwrap(),
    );
    assert_eq!(got, stag, "the key in NIC 0's receive buffer");
    let data = pattern(32, 64);
    pair.hosts[0].mem.write_bytes(DATA_AREA, &data);
    let write = |wr_id: u64, vaddr: u64| Wqe {
        opcode: WqeOpcode::RdmaWrite as u8,
        length: 64,
        wr_id,
        local_addr: DATA_AREA,
        remote_vaddr: vaddr,
        stag: got,
        ..Default::default()
    };
    pair.hosts[0].post_send(0, &write(0x73, base + 0x40));
    let c = wait_completions(&mut pair, 0, 2, 100_000)[1];
    assert_eq!(
        pair.hosts[1].mem.read_bytes(window + 0x40, 64),
        &data[..],
        "the WRITE with the key landed in the window ({c:?})"
    );
    assert_eq!(status(&c), CompletionStatus::Success, "{c:?}");
    assert_eq!(pair.hosts[1].mem.read_bytes(window, 0x40), &canary[..0x40]);
    let done = wait_completions(&mut pair, 1, 2, 20_000);
    assert_eq!(
        done.iter()
            .map(|c| (c.wr_id, status(c)))
            .collect::<Vec<_>>(),
        vec![
            (0x71, CompletionStatus::Success),
            (0x72, CompletionStatus::Success)
        ],
        "the BIND, then the SEND, in order"
    );
    // UNBIND: the key is refused after it (the exception queue's timeout refuses it).
    pair.hosts[1].post_send(
        0,
        &Wqe {
            wr_id: 0x74,
            ..Wqe::bind(stag, 0, 0, 0, 0)
        },
    );
    wait_completions(&mut pair, 1, 3, 20_000);
    pair.hosts[0].mem.write_bytes(DATA_AREA, &pattern(33, 64));
    pair.hosts[0].post_send(0, &write(0x75, base + 0x80));
    let c = wait_completions(&mut pair, 0, 3, 200_000)[2];
    assert_ne!(status(&c), CompletionStatus::Success, "{c:?}");
    assert_eq!(
        pair.hosts[1].mem.read_bytes(window + 0x80, 64),
        &canary[0x80..0xC0]
    );
}

/// Reset steers no handshake inside `NicTop` (both sides of each share it), so the top
/// gates the handshakes that leave it: in every clock its reset is high, no DMA request,
/// DMA write beat or DMA read word is taken and neither a CSR access nor a cell is
/// accepted, whatever the NIC was doing. Random traffic in both directions (every
/// opcode, memory stalls), then NIC 0 (or 1) held in reset for 1 to 3
/// clocks at a random clock, with a CSR write offered meanwhile; 24 seeds.
#[test]
fn no_host_side_handshake_passes_while_the_top_is_in_reset() {
    let mut seen_busy = 0;
    for seed in 0..24u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut pair = pair(100 + seed);
        for n in 0..2 {
            for wr_id in 0..24 {
                post_random(&mut pair, n, wr_id, &mut rng);
            }
        }
        for _ in 0..rng.gen_range(20..1_500) {
            pair.step();
        }
        let n = rng.gen_range(0..2);
        let busy = pair.hosts[n].last_outputs;
        seen_busy +=
            (busy.dma_wr_valid | busy.dma_tx_rd_req_valid | busy.dma_tx_rd_data_ready) as usize;
        pair.hosts[n].queue_csr_write(csr::qp(0, csr::QP_CTRL), csr::QP_CTRL_ENABLE);
        pair.hosts[n].hold_reset(true);
        for clock in 0..rng.gen_range(1..=3) {
            pair.step();
            let o = pair.hosts[n].last_outputs;
            let passed = [
                ("dma_wr_valid", o.dma_wr_valid),
                ("dma_tx_rd_req_valid", o.dma_tx_rd_req_valid),
                ("dma_rx_rd_req_valid", o.dma_rx_rd_req_valid),
                ("dma_tx_rd_data_ready", o.dma_tx_rd_data_ready),
                ("dma_rx_rd_data_ready", o.dma_rx_rd_data_ready),
                ("csr_ready", o.csr_ready),
                ("s_cell_ready", o.s_cell_ready),
            ];
            for (name, high) in passed {
                assert!(
                    !high,
                    "seed {seed}: NIC {n}'s {name} high in reset clock {clock}"
                );
            }
        }
    }
    assert!(
        seen_busy >= 6,
        "the resets should hit a busy host side: {seen_busy} of 24"
    );
}
