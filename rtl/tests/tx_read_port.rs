//! `TxReadPort` against `nic_model::tx_read_port::TxReadPortModel` (written from its doc
//! comment) on seeded random stimulus: a fetch client and a payload client offering reads
//! with idle gaps (never more than four bursts in flight, the block's limit), host memory
//! with request back-pressure, latency and gaps between words, and the fetch and the
//! payload consumer with back-pressure. Every word must also reach the client that asked
//! for it, in order.

use nic_model::tx_read_port::{PortInputs, PortOutputs, TxReadPortModel};
use nic_model::Throttle;
use nic_rtl::requester::TxReadPort;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;
use std::collections::VecDeque;

/// A burst taken by host memory: its words, the clock its first word may come.
struct Burst {
    words: VecDeque<u64>,
    ready_at: u64,
}

fn seen(uut: &TxReadPort) -> PortOutputs {
    PortOutputs {
        fetch_req_ready: uut.s_fetch_req_ready.val(),
        pay_req_taken: uut.m_pay_req_taken.val(),
        req: uut.m_req_valid.val().then(|| {
            (
                uut.m_req_addr.val().to_u32(),
                uut.m_req_words.val().to_u64() as u16,
            )
        }),
        rd_ready: uut.s_rd_ready.val(),
        fetch: uut
            .m_fetch_valid
            .val()
            .then(|| uut.m_fetch_data.val().to_u64()),
        pay: uut
            .m_pay_valid
            .val()
            .then(|| (uut.m_pay_data.val().to_u64(), uut.m_pay_last.val())),
        pay_burst_end: uut.m_pay_burst_end.val(),
    }
}

/// Probabilities: a client offers, host memory takes a request / sends a word, a consumer
/// takes a word. Returns the words delivered.
fn run(seed: u64, p_offer: f64, p_host: f64, p_take: f64, clocks: u64) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = TxReadPort::new();
    uut.connect_all();
    uut.reset.next = true;
    tick(&mut uut);
    uut.reset.next = false;
    let mut model = TxReadPortModel::new();
    let (offer, host, take) = (
        Throttle::new(p_offer),
        Throttle::new(p_host),
        Throttle::new(p_take),
    );
    let mut fetch_req: Option<(u32, u16)> = None;
    let mut pay_req: Option<(u32, u16)> = None;
    let mut bursts: VecDeque<Burst> = VecDeque::new();
    // What each client expects, in order.
    let (mut want_fetch, mut want_pay) = (VecDeque::new(), VecDeque::new());
    let mut delivered = 0;
    for clock in 0..clocks {
        let in_flight = bursts.len() + fetch_req.is_some() as usize + pay_req.is_some() as usize;
        if fetch_req.is_none() && in_flight < 4 && offer.go(&mut rng) {
            fetch_req = Some((rng.gen::<u32>() & !7, rng.gen_range(1..=8)));
        }
        let in_flight = bursts.len() + fetch_req.is_some() as usize + pay_req.is_some() as usize;
        if pay_req.is_none() && in_flight < 4 && offer.go(&mut rng) {
            pay_req = Some((rng.gen::<u32>() & !7, rng.gen_range(1..=24)));
        }
        let rd = match bursts.front() {
            Some(b) if b.ready_at <= clock && host.go(&mut rng) => {
                Some((b.words[0], b.words.len() == 1))
            }
            _ => None,
        };
        let i = PortInputs {
            fetch_req,
            pay_req,
            req_ready: host.go(&mut rng),
            rd,
            fetch_ready: take.go(&mut rng),
            pay_ready: take.go(&mut rng),
        };
        let junk: u64 = rng.gen();
        let (fa, fw) = fetch_req.unwrap_or((junk as u32, (junk >> 32) as u16 & 7));
        uut.s_fetch_req_valid.next = fetch_req.is_some();
        uut.s_fetch_req_addr.next = (fa as u64).to_bits();
        uut.s_fetch_req_words.next = (fw as u64).to_bits();
        let (pa, pw) = pay_req.unwrap_or(((junk >> 16) as u32, (junk >> 48) as u16 & 31));
        uut.s_pay_req_valid.next = pay_req.is_some();
        uut.s_pay_req_addr.next = (pa as u64).to_bits();
        uut.s_pay_req_words.next = (pw as u64).to_bits();
        uut.m_req_ready.next = i.req_ready;
        uut.s_rd_valid.next = rd.is_some();
        uut.s_rd_data.next = rd.map_or(junk, |(d, _)| d).to_bits();
        uut.s_rd_last.next = rd.is_some_and(|(_, l)| l);
        uut.m_fetch_ready.next = i.fetch_ready;
        uut.m_pay_ready.next = i.pay_ready;
        settle(&mut uut);
        let out = model.outputs(&i);
        assert_eq!(seen(&uut), out, "clock {clock} (seed {seed:#x}): {i:?}");
        // The environment: host memory takes the request shown, a word moves, a client's
        // request is taken, the consumers take words.
        if let Some((_, words)) = out.req.filter(|_| i.req_ready) {
            let pay = out.pay_req_taken;
            let data: VecDeque<u64> = (0..words).map(|_| rng.gen()).collect();
            if pay {
                pay_req = None;
                let n = data.len();
                want_pay.extend(data.iter().enumerate().map(|(k, &d)| (d, k + 1 == n)));
            } else {
                fetch_req = None;
                want_fetch.extend(data.iter().copied());
            }
            bursts.push_back(Burst {
                words: data,
                ready_at: clock + rng.gen_range(1..6),
            });
        }
        if rd.is_some() && out.rd_ready {
            let b = bursts.front_mut().expect("a burst in flight");
            b.words.pop_front();
            if b.words.is_empty() {
                bursts.pop_front();
            }
        }
        if let Some(d) = out.fetch.filter(|_| i.fetch_ready) {
            assert_eq!(Some(d), want_fetch.pop_front(), "fetch word at {clock}");
            delivered += 1;
        }
        if let Some(w) = out.pay.filter(|_| i.pay_ready) {
            assert_eq!(Some(w), want_pay.pop_front(), "payload word at {clock}");
            delivered += 1;
        }
        model.step(&i);
        tick(&mut uut);
    }
    delivered
}

#[test]
fn synthesises() {
    let mut uut = TxReadPort::new();
    uut.connect_all();
    yosys_validate("nic_rtl_tx_read_port", &generate_verilog(&uut))
        .expect("yosys accepts TxReadPort");
}

/// Seeded random stimulus from no gaps to slow host memory and slow consumers.
#[test]
fn matches_model_with_gaps_and_backpressure() {
    let mut words = 0;
    for (n, (p_offer, p_host, p_take)) in [
        (1.0, 1.0, 1.0),
        (0.3, 0.6, 0.9),
        (1.0, 0.4, 0.2),
        (0.8, 1.0, 0.5),
    ]
    .into_iter()
    .enumerate()
    {
        words += run(0x7e_ad00 + n as u64, p_offer, p_host, p_take, 5000);
    }
    assert!(words > 10_000, "only {words} words delivered");
}

/// The port has no parameters; a request longer than its 16-bit word count is refused by
/// the port's width, with RustHDL's message.
#[test]
#[should_panic(expected = "does not fit")]
fn rejects_a_word_count_wider_than_its_port() {
    let mut uut = TxReadPort::new();
    uut.connect_all();
    uut.s_pay_req_words.next = 0x1_0000u64.to_bits();
}
