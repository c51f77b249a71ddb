//! `TptExceptionQueue` against a plain-Rust model written from its doc comment: misses
//! with idle gaps, CSR accesses under back-pressure (`s_csr_ready` low), answers with the
//! right and with stale tags, and timeouts.

use nic_model::Throttle;
use nic_rtl::sim::{settle, tick};
use nic_rtl::tpt::TptExceptionQueue;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::*;

#[derive(Clone, Copy, Default)]
struct Head {
    stag: u32,
    vaddr: u64,
    length: u32,
    access: u8,
    invalidate: bool,
    commit: bool,
    qp: u8,
}

/// The queue's documented state.
struct Model {
    timeout: u32,
    valid: bool,
    timer: u32,
    tag: u8,
    stale: u8,
}

struct Outputs {
    rdata: u64,
    stale: u8,
    exc_valid: bool,
    answer: Option<(bool, u32)>,
}

impl Model {
    /// This clock's outputs, then the state after the edge.
    fn step(
        &mut self,
        reset: bool,
        reg: u8,
        csr: Option<(bool, u8, u64)>,
        miss: bool,
        h: &Head,
        timeout_reset: u32,
    ) -> Outputs {
        let head0 = 1
            | (h.qp as u64) << 2
            | (h.access as u64) << 8
            | ((h.invalidate && h.commit) as u64) << 12
            | (!h.commit as u64) << 13
            | (self.tag as u64) << 16
            | (h.stag as u64) << 32;
        let mut rdata = match reg {
            32 => head0,
            33 => h.vaddr,
            34 => h.length as u64,
            36 => self.timeout as u64,
            _ => 0,
        };
        if !self.valid && (32..=34).contains(&reg) {
            rdata = 0;
        }
        let out_stale = self.stale;
        let exc_valid = self.valid;
        let mut answer = None;
        let mut next = (self.timeout, self.valid, self.timer, self.tag, self.stale);
        if let Some((true, r, wdata)) = csr {
            if r == 36 {
                next.0 = wdata as u32;
            }
            if r == 35 {
                if self.valid && (wdata >> 16) as u8 == self.tag {
                    answer = Some((wdata & 1 == 1, (wdata >> 32) as u32));
                } else {
                    next.4 = self.stale.wrapping_add(1);
                }
            }
        }
        if self.valid {
            if answer.is_some() {
                next.1 = false;
                next.3 = self.tag.wrapping_add(1);
            } else if self.timer == 0 {
                next.1 = false;
                next.3 = self.tag.wrapping_add(1);
                answer = Some((false, 0));
            } else {
                next.2 = self.timer - 1;
            }
        }
        if miss {
            next.1 = true;
            next.2 = self.timeout;
        }
        if reset {
            next = (timeout_reset, false, next.2, 0, 0);
        }
        (self.timeout, self.valid, self.timer, self.tag, self.stale) = next;
        Outputs {
            rdata,
            stale: out_stale,
            exc_valid,
            answer,
        }
    }
}

fn run(seed: u64, cycles: usize, csr_rate: f64, ready_rate: f64, miss_rate: f64) -> [usize; 4] {
    let timeout_reset = 40;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uut = TptExceptionQueue::new(timeout_reset);
    uut.connect_all();
    let mut model = Model {
        timeout: 0,
        valid: false,
        timer: 0,
        tag: 0,
        stale: 0,
    };
    let (csr_gaps, ready, misses) = (
        Throttle::new(csr_rate),
        Throttle::new(ready_rate),
        Throttle::new(miss_rate),
    );
    let mut head = Head::default();
    // answered, timed out, stale answers, heads read
    let mut seen = [0usize; 4];
    for cycle in 0..cycles {
        let reset = cycle < 2 || rng.gen_ratio(1, 5000);
        let csr = csr_gaps.go(&mut rng).then(|| {
            let reg = [32u8, 33, 34, 35, 35, 35, 36, 0, 6][rng.gen_range(0..9)];
            let write = reg == 35 || (reg == 36 && rng.gen_ratio(1, 4)) || rng.gen_ratio(1, 8);
            let mut wdata: u64 = rng.gen();
            if reg == 35 && rng.gen_ratio(3, 4) {
                wdata = (wdata & !(0xFF << 16)) | (model.tag as u64) << 16;
            }
            if reg == 36 {
                wdata &= 0x3F;
            }
            (write, reg, wdata)
        });
        let csr_ready = !reset && ready.go(&mut rng);
        // The parent queues a miss only while no head waits, from a held request.
        let miss = !model.valid && misses.go(&mut rng);
        if miss {
            head = Head {
                stag: rng.gen(),
                vaddr: rng.gen(),
                length: rng.gen(),
                access: rng.gen_range(0..8),
                invalidate: rng.gen(),
                commit: rng.gen(),
                qp: rng.gen_range(0..64),
            };
        }
        // The head's fields change with the miss's clock (the checks' registers).
        uut.reset.next = reset;
        uut.s_csr_valid.next = csr.is_some();
        uut.s_csr_ready.next = csr_ready;
        let (w, r, d) = csr.unwrap_or((false, 0, 0));
        uut.s_csr_write.next = w;
        uut.s_csr_reg.next = (r as u64).to_bits();
        uut.s_csr_wdata.next = d.to_bits();
        uut.s_miss.next = miss;
        uut.s_head.next.stag = (head.stag as u64).to_bits();
        uut.s_head.next.vaddr = head.vaddr.to_bits();
        uut.s_head.next.length = (head.length as u64).to_bits();
        uut.s_head.next.access = (head.access as u64).to_bits();
        uut.s_head.next.invalidate = head.invalidate;
        uut.s_head.next.commit = head.commit;
        uut.s_head.next.qp = (head.qp as u64).to_bits();
        settle(&mut uut);
        let accepted = csr.filter(|_| csr_ready);
        // Read data follows the addressed register whether or not it is accepted.
        let want = model.step(reset, r, accepted, miss, &head, timeout_reset as u32);
        let got_answer = uut
            .m_answer_valid
            .val()
            .then(|| (uut.m_answer_ok.val(), uut.m_answer_paddr.val().to_u32()));
        let want_answer = want
            .answer
            .map(|(ok, p)| (ok, if ok { p } else { (d >> 32) as u32 }));
        assert_eq!(
            got_answer.map(|a| a.0),
            want_answer.map(|a| a.0),
            "cycle {cycle}: answer"
        );
        if let (Some((true, p)), Some((true, q))) = (got_answer, want_answer) {
            assert_eq!(p, q, "cycle {cycle}: answer paddr");
        }
        assert_eq!(
            uut.m_exc_valid.val(),
            want.exc_valid,
            "cycle {cycle}: valid"
        );
        assert_eq!(
            uut.stat_stale.val().to_u64() as u8,
            want.stale,
            "cycle {cycle}: stale"
        );
        assert_eq!(
            uut.m_csr_rdata.val().to_u64(),
            want.rdata,
            "cycle {cycle}: rdata reg {r}"
        );
        match want.answer {
            Some((_, _)) if accepted.is_some_and(|c| c.0 && c.1 == 35) && want.exc_valid => {
                seen[0] += 1
            }
            Some(_) => seen[1] += 1,
            None => {}
        }
        if accepted.is_some_and(|c| c.0 && c.1 == 35) && want.answer.is_none() {
            seen[2] += 1;
        }
        if want.exc_valid && accepted.is_some_and(|c| !c.0 && c.1 == 32) {
            seen[3] += 1;
        }
        tick(&mut uut);
    }
    seen
}

#[test]
fn matches_model_with_gaps_and_backpressure() {
    for (seed, csr_rate, ready_rate, miss_rate) in [
        (0x7E_0001, 0.5, 0.5, 0.3),
        (0x7E_0002, 0.1, 0.9, 0.9),
        (0x7E_0003, 1.0, 1.0, 1.0),
        (0x7E_0004, 0.05, 0.3, 0.1),
    ] {
        let seen = run(seed, 20_000, csr_rate, ready_rate, miss_rate);
        assert!(seen.iter().all(|&n| n > 10), "seed {seed:#x}: {seen:?}");
    }
}

#[test]
fn synthesises() {
    let mut uut = TptExceptionQueue::default();
    uut.connect_all();
    yosys_validate("nic_rtl_tpt_exception_queue", &generate_verilog(&uut))
        .expect("yosys accepts TptExceptionQueue");
}

#[test]
#[should_panic(expected = "timeout_reset must fit EXC_TIMEOUT's 32 bits, got 4294967296")]
fn rejects_a_timeout_wider_than_its_register() {
    TptExceptionQueue::new(1 << 32);
}
