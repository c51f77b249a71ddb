//! Host memory's DMA ports as a block test sees them (`docs/nic-architecture.md`, host
//! memory rules: a read returns exactly `words` beats, in request order, `last` on the
//! final one; a write beat carries a byte strobe).

use crate::stream::Throttle;
use rand::Rng;
use std::collections::{HashMap, VecDeque};

/// The default host memory of a read server: a fixed pseudo-random word at each 8-byte
/// address (splitmix64 of `addr / 8`), distinct per address, so both data integrity and
/// routing are checked.
pub fn host_word(addr: u32) -> u64 {
    let mut z = (addr as u64 / 8).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `len` bytes of [`host_word`] memory from `addr` (8-aligned).
pub fn host_bytes(addr: u32, len: usize) -> Vec<u8> {
    (0..len.div_ceil(8) as u32)
        .flat_map(|i| host_word(addr.wrapping_add(8 * i)).to_le_bytes())
        .take(len)
        .collect()
}

/// One read burst being returned: next word address, words left, clocks of latency left.
#[derive(Clone, Copy, Debug)]
struct Burst {
    addr: u32,
    left: u32,
    latency: u32,
}

/// Host memory's DMA read port: takes requests with back-pressure, queues them, and
/// returns each burst's words in order after a latency of 0..=`max_latency` clocks
/// (drawn when the burst starts), with idle gaps between words; a word shown is held
/// until it is taken. The data is `word(addr)` ([`host_word`] by default).
///
/// Per clock, before the block settles: [`DmaReadServer::data`] (the data beat) and
/// [`DmaReadServer::req_ready`] (the request `ready`), in the order the test chooses;
/// after it settles: [`DmaReadServer::request`] with the request port and
/// [`DmaReadServer::beat_taken`] when the data beat moved. It checks that a request
/// shown and not taken is shown again unchanged.
pub struct DmaReadServer<F = fn(u32) -> u64> {
    word: F,
    /// Back-pressure on the request port.
    pub req_throttle: Throttle,
    /// Idle gaps between data words.
    pub data_throttle: Throttle,
    pub max_latency: u32,
    queue: VecDeque<(u32, u32)>,
    current: Option<Burst>,
    offering: bool,
    ready_now: bool,
    shown_req: Option<(u32, u32)>,
}

impl DmaReadServer {
    /// A server of [`host_word`] memory: requests taken with probability `p_req_ready`,
    /// words offered with probability `p_data`, latency up to `max_latency` clocks.
    pub fn new(p_req_ready: f64, p_data: f64, max_latency: u32) -> Self {
        Self::with_memory(host_word, p_req_ready, p_data, max_latency)
    }
}

impl<F: FnMut(u32) -> u64> DmaReadServer<F> {
    /// A server whose memory holds `word(addr)` at each 8-byte address.
    pub fn with_memory(word: F, p_req_ready: f64, p_data: f64, max_latency: u32) -> Self {
        DmaReadServer {
            word,
            req_throttle: Throttle::new(p_req_ready),
            data_throttle: Throttle::new(p_data),
            max_latency,
            queue: VecDeque::new(),
            current: None,
            offering: false,
            ready_now: false,
            shown_req: None,
        }
    }

    /// This clock's request `ready` (one draw of the request throttle).
    pub fn req_ready<R: Rng + ?Sized>(&mut self, rng: &mut R) -> bool {
        self.ready_now = self.req_throttle.go(rng);
        self.ready_now
    }

    /// After settling: the request port (`valid`, address, words). Returns the request
    /// when it was taken this clock (valid and this clock's `ready`), and queues it.
    pub fn request(&mut self, valid: bool, addr: u32, words: u32) -> Option<(u32, u32)> {
        if !valid {
            assert!(
                self.shown_req.is_none(),
                "DMA read request valid dropped before it was taken"
            );
            return None;
        }
        if let Some(prev) = self.shown_req {
            assert_eq!(
                prev,
                (addr, words),
                "DMA read request changed before it was taken"
            );
        }
        if !self.ready_now {
            self.shown_req = Some((addr, words));
            return None;
        }
        self.shown_req = None;
        assert!(words >= 1, "DMA read request of 0 words at {addr:#x}");
        self.queue.push_back((addr, words));
        Some((addr, words))
    }

    /// This clock's data beat (word, last), if any. Starts the next queued burst (one
    /// latency draw), counts its latency down, then offers a word (one gap draw when not
    /// already offering) and holds it until [`DmaReadServer::beat_taken`].
    pub fn data<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Option<(u64, bool)> {
        if self.current.is_none() {
            if let Some((addr, left)) = self.queue.pop_front() {
                self.current = Some(Burst {
                    addr,
                    left,
                    latency: rng.gen_range(0..=self.max_latency),
                });
            }
        }
        let b = self.current.as_mut()?;
        if b.latency > 0 {
            b.latency -= 1;
            return None;
        }
        if !self.offering {
            self.offering = self.data_throttle.go(rng);
        }
        let (addr, last) = (b.addr, b.left == 1);
        self.offering.then(|| ((self.word)(addr), last))
    }

    /// The beat offered this clock was taken.
    pub fn beat_taken(&mut self) {
        assert!(self.offering, "DMA read data taken while none was offered");
        self.offering = false;
        let b = self.current.as_mut().expect("a burst in progress");
        b.addr = b.addr.wrapping_add(8);
        b.left -= 1;
        if b.left == 0 {
            self.current = None;
        }
    }

    /// No request queued and no burst in progress.
    pub fn idle(&self) -> bool {
        self.queue.is_empty() && self.current.is_none()
    }
}

/// Host memory's DMA write port: `ready` with back-pressure, each beat taken written into
/// a sparse memory under its byte strobe; checks that a beat shown and not taken is shown
/// again unchanged (`valid` does not drop, the fields do not change).
///
/// Per clock: [`DmaWriteSink::ready`] before the block settles, [`DmaWriteSink::beat`]
/// with the write port after.
#[derive(Clone, Debug)]
pub struct DmaWriteSink {
    /// Back-pressure on the write port.
    pub throttle: Throttle,
    /// The words written, by byte address (bytes never written read as 0).
    pub mem: HashMap<u32, u64>,
    ready_now: bool,
    shown: Option<(u32, u64, u8)>,
}

impl DmaWriteSink {
    /// A sink ready with probability `p_ready` each clock.
    pub fn new(p_ready: f64) -> Self {
        DmaWriteSink {
            throttle: Throttle::new(p_ready),
            mem: HashMap::new(),
            ready_now: false,
            shown: None,
        }
    }

    /// This clock's `ready` (one draw of the throttle).
    pub fn ready<R: Rng + ?Sized>(&mut self, rng: &mut R) -> bool {
        self.ready_now = self.throttle.go(rng);
        self.ready_now
    }

    /// After settling: the write port (`valid`, address, data, strobe). Returns the beat
    /// when it was taken this clock, after writing it into [`DmaWriteSink::mem`].
    pub fn beat(
        &mut self,
        valid: bool,
        addr: u32,
        data: u64,
        strobe: u8,
    ) -> Option<(u32, u64, u8)> {
        if !valid {
            assert!(
                self.shown.is_none(),
                "DMA write valid dropped before the beat was taken"
            );
            return None;
        }
        let beat = (addr, data, strobe);
        if let Some(prev) = self.shown {
            assert_eq!(prev, beat, "DMA write beat changed before it was taken");
        }
        if !self.ready_now {
            self.shown = Some(beat);
            return None;
        }
        self.shown = None;
        let mask = (0..8)
            .filter(|i| strobe >> i & 1 == 1)
            .fold(0u64, |m, i| m | 0xFF << (8 * i));
        let old = self.mem.get(&addr).copied().unwrap_or(0);
        self.mem.insert(addr, (old & !mask) | (data & mask));
        Some(beat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Bursts come back whole, in order, from `host_word`, with gaps and latency.
    #[test]
    fn read_server_returns_bursts_in_order() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut s = DmaReadServer::new(0.5, 0.6, 7);
        let reqs: Vec<(u32, u32)> = (0..30)
            .map(|_| (rng.gen_range(0..1u32 << 20) * 8, rng.gen_range(1..20)))
            .collect();
        let want: Vec<(u64, bool)> = reqs
            .iter()
            .flat_map(|&(a, n)| (0..n).map(move |i| (host_word(a + 8 * i), i + 1 == n)))
            .collect();
        let (mut next, mut got, mut clocks) = (0, vec![], 0);
        while got.len() < want.len() {
            clocks += 1;
            assert!(clocks < 100_000);
            let beat = s.data(&mut rng);
            s.req_ready(&mut rng);
            if let Some((a, n)) = reqs.get(next) {
                if s.request(true, *a, *n).is_some() {
                    next += 1;
                }
            }
            if let Some(b) = beat {
                if rng.gen_bool(0.7) {
                    got.push(b);
                    s.beat_taken();
                }
            }
        }
        assert_eq!(got, want);
        assert!(s.idle());
        assert!(clocks > want.len() as u64 + 100, "no gaps: {clocks} clocks");
    }

    #[test]
    #[should_panic(expected = "DMA read request changed before it was taken")]
    fn read_server_catches_a_request_changed_while_held() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let mut s = DmaReadServer::new(0.0, 1.0, 0);
        s.req_ready(&mut rng);
        s.request(true, 0x100, 2);
        s.req_ready(&mut rng);
        s.request(true, 0x108, 2);
    }

    #[test]
    fn write_sink_applies_strobes() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut s = DmaWriteSink::new(1.0);
        s.ready(&mut rng);
        s.beat(true, 0x40, u64::MAX, 0xFF);
        s.ready(&mut rng);
        assert_eq!(s.beat(true, 0x40, 0, 0x0F), Some((0x40, 0, 0x0F)));
        assert_eq!(s.mem[&0x40], 0xFFFF_FFFF_0000_0000);
    }

    #[test]
    #[should_panic(expected = "DMA write valid dropped before the beat was taken")]
    fn write_sink_catches_a_dropped_valid() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut s = DmaWriteSink::new(0.0);
        s.ready(&mut rng);
        assert_eq!(s.beat(true, 0x40, 1, 0xFF), None);
        s.ready(&mut rng);
        s.beat(false, 0, 0, 0);
    }
}
