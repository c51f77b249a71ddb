//! `RqeFetch` against its plain-Rust model (`nic_model::rqe_fetch`, written from the
//! block's documentation): fetches started with idle gaps, a DMA read server with request
//! back-pressure, latency and gaps between words, the odd reset; every output compared
//! every clock, and every entry checked against host memory.

use nic_model::rqe_fetch::{RqeFetchInputs, RqeFetchModel, RqeFetchOutputs};
use nic_model::{host_word, DmaReadServer, Throttle};
use nic_rtl::responder::RqeFetch;
use nic_rtl::sim::{settle, tick};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

fn outputs(u: &RqeFetch) -> RqeFetchOutputs {
    RqeFetchOutputs {
        busy: u.busy.val(),
        req_valid: u.m_req_valid.val(),
        req_addr: u.m_req_addr.val().to_u32(),
        req_words: u.m_req_words.val().to_u64() as u32,
        data_ready: u.s_ready.val(),
        done: u.done.val(),
        buffer_addr: u.buffer_addr.val().to_u32(),
        buffer_length: u.buffer_length.val().to_u32(),
        wr_id: u.wr_id.val().to_u64(),
    }
}

/// Runs `clocks` clocks of seed `seed`; returns the number of entries fetched.
fn run(seed: u64, clocks: u64, p_start: f64, p_req: f64, p_data: f64, resets: bool) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = RqeFetch::new();
    uut.connect_all();
    let mut model = RqeFetchModel::new();
    let mut server = DmaReadServer::new(p_req, p_data, 6);
    let starts = Throttle::new(p_start);
    let mut fetched = 0;
    // The entry the current fetch reads, and whether `wr_id` is due next clock.
    let mut entry_at: Option<u32> = None;
    let mut wr_id_due: Option<u64> = None;
    for clock in 0..clocks {
        let reset = clock == 0 || (resets && rng.gen_bool(0.003));
        let data = server.data(&mut rng);
        let req_ready = server.req_ready(&mut rng);
        let i = RqeFetchInputs {
            reset,
            start: !model.outputs(&RqeFetchInputs::default()).busy && starts.go(&mut rng),
            addr: rng.gen::<u32>() & !7,
            req_ready,
            data: data.map_or(rng.gen(), |d| d.0),
            data_valid: data.is_some(),
            data_last: data.is_some_and(|d| d.1) || (data.is_none() && rng.gen()),
        };
        uut.reset.next = i.reset;
        uut.start.next = i.start;
        uut.addr.next = i.addr.to_bits();
        uut.m_req_ready.next = i.req_ready;
        uut.s_data.next = i.data.to_bits();
        uut.s_valid.next = i.data_valid;
        uut.s_last.next = i.data_last;
        settle(&mut uut);
        let got = outputs(&uut);
        let want = model.outputs(&i);
        assert_eq!(got, want, "seed {seed}, clock {clock}: {i:?}");
        if let Some(w) = wr_id_due.take() {
            assert_eq!(got.wr_id, w, "seed {seed}, clock {clock}: wr_id");
        }
        if got.req_valid && req_ready {
            entry_at = Some(got.req_addr);
        }
        server.request(got.req_valid, got.req_addr, got.req_words);
        if data.is_some() && got.data_ready {
            server.beat_taken();
        }
        if got.done {
            let at = entry_at.take().expect("done without a request");
            assert_eq!(got.buffer_addr, host_word(at) as u32, "seed {seed}: word 0");
            assert_eq!(
                got.buffer_length,
                host_word(at + 8) as u32,
                "seed {seed}: word 1"
            );
            wr_id_due = Some(host_word(at + 16));
            fetched += 1;
        }
        model.clock(&i);
        tick(&mut uut);
        if reset {
            // The DMA path is reset with it: a burst in flight is forgotten.
            server = DmaReadServer::new(p_req, p_data, 6);
            entry_at = None;
        }
    }
    fetched
}

#[test]
fn matches_model_with_gaps_and_backpressure() {
    for (seed, p_start, p_req, p_data, resets) in [
        (1, 1.0, 1.0, 1.0, false),
        (2, 0.3, 0.5, 0.6, false),
        (3, 0.8, 0.2, 0.3, true),
        (4, 0.1, 0.9, 0.9, true),
    ] {
        let fetched = run(seed, 5_000, p_start, p_req, p_data, resets);
        assert!(fetched > 100, "seed {seed}: only {fetched} entries");
    }
}

#[test]
fn synthesises() {
    let mut uut = RqeFetch::new();
    uut.connect_all();
    yosys_validate("nic_rtl_responder_rqe_fetch", &generate_verilog(&uut))
        .expect("yosys accepts RqeFetch");
}

/// `RqeFetch` has no parameters: nothing to reject. What it refuses is a start while it
/// is busy (the model's `busy` gates every start above); shown here: a second start
/// during a fetch does not change the request.
#[test]
fn a_start_while_busy_is_not_taken() {
    let mut uut = RqeFetch::new();
    uut.connect_all();
    uut.reset.next = true;
    settle(&mut uut);
    tick(&mut uut);
    uut.reset.next = false;
    uut.start.next = true;
    uut.addr.next = 0x1000u32.to_bits();
    settle(&mut uut);
    tick(&mut uut);
    uut.addr.next = 0x2000u32.to_bits();
    settle(&mut uut);
    assert!(uut.busy.val() && uut.m_req_valid.val());
    tick(&mut uut);
    settle(&mut uut);
    assert_eq!(uut.m_req_addr.val().to_u32(), 0x1000);
}
