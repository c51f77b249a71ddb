//! `DmaReadArbiter` against its cycle model: two `nic_model::Source` clients with idle
//! gaps and back-pressure on their data, host memory a `nic_model::DmaReadServer` with
//! request back-pressure, latency and gaps.

use nic_model::{DmaReadServer, Source, Throttle};
use nic_rtl::sim::{settle, tick};
use nic_rtl::DmaReadArbiter;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

/// One read request: byte address, words.
type Req = (u32, u16);

/// The word host memory returns at `addr` (distinct per address, so integrity and
/// routing are both checked).
fn word_at(addr: u32) -> u64 {
    (addr as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5A5A_0000_0000_0000
}

/// Bursts one client may have in flight (docs/nic-blocks.md, "DmaReadArbiter").
const MAX_BURSTS: usize = 4;

/// Cycle model of the arbiter, after its documentation: the bursts in flight all belong
/// to one client, in request order; a client's request is shown while nothing is in
/// flight, or while its own bursts are and fewer than `MAX_BURSTS`; round robin per
/// burst; a shown request stays until taken.
#[derive(Default)]
struct Model {
    /// The bursts in flight, oldest first, by client (true = B).
    inflight: std::collections::VecDeque<bool>,
    prefer_b: bool,
    hold: Option<bool>,
}

impl Model {
    /// The client whose turn it is (shown if it may issue).
    fn turn(&self, a: bool, b: bool) -> Option<bool> {
        match self.hold {
            Some(g) => Some(g),
            None if a && b => Some(self.prefer_b),
            None if a => Some(false),
            None if b => Some(true),
            None => None,
        }
    }

    /// Client whose request is shown this clock.
    fn grant(&self, a: bool, b: bool) -> Option<bool> {
        let g = self.turn(a, b)?;
        let may = match self.inflight.back() {
            None => true,
            Some(&o) => o == g && self.inflight.len() < MAX_BURSTS,
        };
        may.then_some(g)
    }

    /// The client the data beats belong to: the oldest burst's.
    fn owner(&self) -> Option<bool> {
        self.inflight.front().copied()
    }

    fn clock(&mut self, grant: Option<bool>, req_ready: bool, last_beat_taken: bool) {
        self.hold = None;
        if last_beat_taken {
            self.inflight.pop_front();
        }
        if let Some(g) = grant {
            if req_ready {
                self.inflight.push_back(g);
                self.prefer_b = !g;
            } else {
                self.hold = Some(g);
            }
        }
    }
}

struct Run {
    /// Per client: the data words received, with `last`.
    data: [Vec<(u64, bool)>; 2],
    /// Requests issued to host memory, tagged with the client.
    issued: Vec<(bool, Req)>,
    cycles: u64,
}

fn random_requests(rng: &mut ChaCha8Rng, n: usize, max_words: u16) -> Vec<Req> {
    (0..n)
        .map(|_| (rng.gen::<u32>() & !7, rng.gen_range(1..=max_words)))
        .collect()
}

/// Clients offer their requests with probability `offer` and take data with
/// probability `take`; host memory takes requests with probability `mem_ready`,
/// answers after 0..`latency` clocks and sends words with probability `mem_valid`.
#[allow(clippy::too_many_arguments)]
fn run(
    seed: u64,
    reqs: [&[Req]; 2],
    offer: f64,
    take: f64,
    mem_ready: f64,
    mem_valid: f64,
    latency: u64,
) -> Run {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = DmaReadArbiter::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    let mut model = Model::default();
    // Host memory: queues the requests it takes, returns each burst after 0..=latency
    // clocks with gaps between words.
    let mut mem = DmaReadServer::with_memory(word_at, mem_ready, mem_valid, latency as u32);
    let mut clients = reqs.map(|r| Source::new(r.iter().copied(), Throttle::new(offer)));
    let take = Throttle::new(take);
    let mut data: [Vec<(u64, bool)>; 2] = [vec![], vec![]];
    let mut issued = vec![];
    let total_words: usize = reqs
        .iter()
        .flat_map(|r| r.iter())
        .map(|r| r.1 as usize)
        .sum();
    let mut cycles = 0u64;
    while data[0].len() + data[1].len() < total_words {
        cycles += 1;
        assert!(cycles < 2_000_000, "arbiter stalled");
        let offering = [clients[0].offer(&mut rng), clients[1].offer(&mut rng)];
        let req = |c: usize| clients[c].front().copied().unwrap_or((0, 0));
        let (ra, rb) = (req(0), req(1));
        uut.s_a_req_valid.next = offering[0];
        uut.s_a_req_addr.next = ra.0.to_bits();
        uut.s_a_req_words.next = (ra.1 as u64).to_bits();
        uut.s_b_req_valid.next = offering[1];
        uut.s_b_req_addr.next = rb.0.to_bits();
        uut.s_b_req_words.next = (rb.1 as u64).to_bits();
        let take_ab = [take.go(&mut rng), take.go(&mut rng)];
        uut.m_a_ready.next = take_ab[0];
        uut.m_b_ready.next = take_ab[1];
        let req_ready = mem.req_ready(&mut rng);
        uut.m_req_ready.next = req_ready;
        // Host memory's data output (garbage on the lines while not valid).
        let beat = mem.data(&mut rng);
        uut.s_data_valid.next = beat.is_some();
        let (bd, bl) = beat.unwrap_or((rng.gen(), rng.gen()));
        uut.s_data.next = bd.to_bits();
        uut.s_data_last.next = bl;
        settle(&mut uut);

        // Requests against the model; host memory checks they are held until taken.
        let grant = model.grant(offering[0], offering[1]);
        assert_eq!(
            uut.m_req_valid.val(),
            grant.is_some(),
            "m_req_valid, clock {cycles}"
        );
        let taken = mem.request(
            uut.m_req_valid.val(),
            uut.m_req_addr.val().to_u32(),
            uut.m_req_words.val().to_u32(),
        );
        let req_taken = taken.is_some();
        if let Some(g) = grant {
            let want = if g { rb } else { ra };
            let got = (
                uut.m_req_addr.val().to_u32(),
                uut.m_req_words.val().to_u32() as u16,
            );
            assert_eq!(got, want, "m_req fields, clock {cycles}");
            if req_taken {
                issued.push((g, clients[g as usize].take()));
            }
        }
        // A client's `ready` matters only while it offers (a transfer needs both).
        if uut.s_a_req_valid.val() {
            assert_eq!(uut.s_a_req_ready.val(), grant == Some(false) && req_ready);
        }
        if uut.s_b_req_valid.val() {
            assert_eq!(uut.s_b_req_ready.val(), grant == Some(true) && req_ready);
        }
        // Data against the model: only the owner sees valid.
        let owner = model.owner();
        let ready = match owner {
            Some(o) => take_ab[o as usize],
            None => false,
        };
        assert_eq!(
            uut.s_data_ready.val(),
            ready,
            "s_data_ready, clock {cycles}"
        );
        assert_eq!(uut.m_a_valid.val(), owner == Some(false) && beat.is_some());
        assert_eq!(uut.m_b_valid.val(), owner == Some(true) && beat.is_some());
        let mut last_taken = false;
        if let (Some(o), Some((d, l))) = (owner, beat) {
            let (gd, gl) = if o {
                (uut.m_b_data.val().to_u64(), uut.m_b_last.val())
            } else {
                (uut.m_a_data.val().to_u64(), uut.m_a_last.val())
            };
            assert_eq!((gd, gl), (d, l), "data routed to the owner unchanged");
            if ready {
                data[o as usize].push((d, l));
                last_taken = l;
                mem.beat_taken();
            }
        }
        if let (true, Some(o)) = (req_taken, owner) {
            assert_eq!(
                grant,
                Some(o),
                "a request was issued while the other client's burst was in flight"
            );
            assert!(
                model.inflight.len() < MAX_BURSTS,
                "more than {MAX_BURSTS} bursts in flight"
            );
        }
        model.clock(grant, req_ready, last_taken);
        tick(&mut uut);
    }
    Run {
        data,
        issued,
        cycles,
    }
}

/// Every client got exactly the words of its requests, in order, `last` on each
/// burst's final word; requests were issued in each client's order.
fn check(r: &Run, reqs: [&[Req]; 2]) {
    for (c, client_reqs) in reqs.iter().enumerate() {
        let want: Vec<(u64, bool)> = client_reqs
            .iter()
            .flat_map(|&(addr, words)| {
                (0..words as u32).map(move |i| (word_at(addr + 8 * i), i + 1 == words as u32))
            })
            .collect();
        assert_eq!(
            r.data[c], want,
            "client {c}: data lost, changed or reordered"
        );
        let issued: Vec<Req> = r
            .issued
            .iter()
            .filter(|(g, _)| *g as usize == c)
            .map(|(_, q)| *q)
            .collect();
        assert_eq!(&issued[..], *client_reqs, "client {c}: requests");
    }
}

#[test]
fn synthesises() {
    let mut uut = DmaReadArbiter::new();
    uut.connect_all();
    yosys_validate("nic_rtl_dma_read_arbiter", &generate_verilog(&uut))
        .expect("yosys accepts DmaReadArbiter");
}

#[test]
fn matches_model_with_gaps_and_backpressure() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xd3a_0002);
    for (offer, take, mem_ready, mem_valid, latency) in [
        (1.0, 1.0, 1.0, 1.0, 0),
        (0.3, 1.0, 1.0, 1.0, 3),
        (1.0, 0.5, 1.0, 1.0, 0),
        (1.0, 1.0, 0.4, 0.6, 5),
        (0.5, 0.7, 0.6, 0.7, 8),
    ] {
        let a = random_requests(&mut rng, 200, 12);
        let b = random_requests(&mut rng, 150, 12);
        let r = run(
            rng.gen(),
            [&a, &b],
            offer,
            take,
            mem_ready,
            mem_valid,
            latency,
        );
        check(&r, [&a, &b]);
    }
}

/// With everyone ready and no host latency a burst streams one word per clock: each
/// burst costs its words plus one clock (the request).
#[test]
fn bursts_stream_one_word_per_clock() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let a = random_requests(&mut rng, 40, 64);
    let b = random_requests(&mut rng, 40, 64);
    let r = run(12, [&a, &b], 1.0, 1.0, 1.0, 1.0, 0);
    check(&r, [&a, &b]);
    let words: usize = a.iter().chain(&b).map(|q| q.1 as usize).sum();
    assert_eq!(r.cycles as usize, words + a.len() + b.len());
}

/// One client alone: its next request goes out while its burst streams, so with no host
/// latency its bursts follow each other with no gap: only the first request costs a
/// clock.
#[test]
fn one_client_streams_back_to_back() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let a = random_requests(&mut rng, 40, 16);
    let r = run(16, [&a, &[]], 1.0, 1.0, 1.0, 1.0, 0);
    check(&r, [&a, &[]]);
    let words: usize = a.iter().map(|q| q.1 as usize).sum();
    assert_eq!(r.cycles as usize, words + 1);
    let b = random_requests(&mut rng, 40, 16);
    let r = run(17, [&[], &b], 1.0, 1.0, 1.0, 1.0, 0);
    check(&r, [&[], &b]);
    let words: usize = b.iter().map(|q| q.1 as usize).sum();
    assert_eq!(r.cycles as usize, words + 1);
}

/// Both clients always asking: bursts alternate A, B, A, ... (round robin per burst,
/// no starvation), and the burst lock holds (checked every clock by `run`).
#[test]
fn round_robin_per_burst() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let a = random_requests(&mut rng, 60, 20);
    let b = random_requests(&mut rng, 60, 20);
    let r = run(14, [&a, &b], 1.0, 0.6, 0.5, 0.6, 4);
    check(&r, [&a, &b]);
    for (i, (g, _)) in r.issued.iter().enumerate() {
        assert_eq!(*g, i % 2 == 1, "burst {i} out of turn");
    }
}

/// A single-word burst and a client whose data is held off: the other client's
/// request waits for the held burst's last word.
#[test]
fn burst_lock_holds_other_client_off() {
    let mut uut = DmaReadArbiter::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    // A asks for 2 words; host memory takes it.
    uut.s_a_req_valid.next = true;
    uut.s_a_req_addr.next = 0x100u32.to_bits();
    uut.s_a_req_words.next = 2u64.to_bits();
    uut.m_req_ready.next = true;
    settle(&mut uut);
    assert!(uut.s_a_req_ready.val() && uut.m_req_valid.val());
    tick(&mut uut);
    uut.s_a_req_valid.next = false;
    // B asks; A holds off its data for 10 clocks while host memory offers a word.
    uut.s_b_req_valid.next = true;
    uut.s_b_req_addr.next = 0x200u32.to_bits();
    uut.s_b_req_words.next = 1u64.to_bits();
    uut.s_data_valid.next = true;
    uut.s_data.next = 0xAAu64.to_bits();
    uut.s_data_last.next = false;
    uut.m_a_ready.next = false;
    uut.m_b_ready.next = true;
    for _ in 0..10 {
        settle(&mut uut);
        assert!(!uut.m_req_valid.val() && !uut.s_b_req_ready.val());
        assert!(uut.m_a_valid.val() && !uut.m_b_valid.val() && !uut.s_data_ready.val());
        tick(&mut uut);
    }
    uut.m_a_ready.next = true;
    settle(&mut uut);
    assert!(uut.s_data_ready.val());
    tick(&mut uut);
    uut.s_data_last.next = true;
    settle(&mut uut);
    assert!(uut.m_a_valid.val() && uut.m_a_last.val() && !uut.m_req_valid.val());
    tick(&mut uut);
    // Burst over: B's request goes out.
    uut.s_data_valid.next = false;
    settle(&mut uut);
    assert!(uut.m_req_valid.val() && uut.s_b_req_ready.val());
    assert_eq!(uut.m_req_addr.val().to_u32(), 0x200);
}

/// Reset gates the host side only: in a reset clock no request is shown to host memory
/// (`m_req_valid` low) and no read word is taken from it (`s_data_ready` low), with both
/// clients asking and a word offered; out of reset the request is shown.
#[test]
fn no_request_or_word_crosses_to_host_memory_in_a_reset_clock() {
    let mut uut = DmaReadArbiter::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.s_a_req_valid.next = true;
    uut.s_b_req_valid.next = true;
    uut.s_a_req_words.next = 1.into();
    uut.s_b_req_words.next = 1.into();
    uut.m_req_ready.next = true;
    uut.m_a_ready.next = true;
    uut.m_b_ready.next = true;
    uut.s_data_valid.next = true;
    uut.s_data_last.next = true;
    // Out of reset for one clock: a request is issued, a burst is in flight.
    uut.reset.next = false;
    settle(&mut uut);
    assert!(uut.m_req_valid.val(), "a request shown out of reset");
    tick(&mut uut);
    for clock in 0..4 {
        uut.reset.next = true;
        settle(&mut uut);
        assert!(!uut.m_req_valid.val(), "m_req_valid in reset clock {clock}");
        assert!(
            !uut.s_data_ready.val(),
            "s_data_ready in reset clock {clock}"
        );
        tick(&mut uut);
    }
}
