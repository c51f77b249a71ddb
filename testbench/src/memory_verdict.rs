//! The memory verdict: what landed in host memory, judged at every NIC's host-memory port
//! and never from the NIC's answers.
//!
//! # Tags
//! Every RDMA WRITE and atomic the workload posts carries an [`OperationTag`]: the source
//! host, the source's epoch, the target epoch its TPT copy came from, and an operation id
//! (the source epoch's sequence number). An RDMA WRITE's payload word `i` is
//! [`OperationTag::word`]`(i)`; an atomic's addend (fetch-and-add) or `swap - compare`
//! (compare-and-swap) is [`OperationTag::atomic`]. Epochs are kept modulo
//! [`EPOCH_MODULUS`] in a tag; six check bits make a random word decode as a tag with
//! chance 1/64, and a decoded tag must then also name a posted operation and its address.
//!
//! # What is flagged
//! For every DMA write into the application's write region `W` of a host (slot `s` of
//! source host `s`: its counter word, then its RDMA WRITE targets, see
//! [`crate::workload::MemoryLayout`]):
//! - `stale-write`: the tag's target epoch is not the host's current epoch (a request made
//!   with a TPT copy of an earlier boot landed);
//! - `use-after-free`: the address lies in a range whose deregistration completed and that
//!   is not registered again;
//! - `unmatched-write`: the word is not a tag, or its tag names no posted operation, or an
//!   operation of another source or to another address, or a word index past its length;
//! - `refused-write-landed`: a word of an RDMA WRITE lands after its requester completed
//!   it with the responder's refusal (REMOTE_ACCESS_ERROR, INVALID_REQUEST,
//!   RDMA_DISABLED): a refused request is never executed, not even a copy of it;
//! - `duplicate-apply`: a word (or an atomic) of an operation already applied in the
//!   target's present boot is applied again (the responder must not execute a duplicate).
//!   One applied in an earlier boot and landing again is a `stale-write` instead: the
//!   memory it was applied to is gone, and its tag names the earlier epoch. An RDMA WRITE
//!   counts as applied
//!   once its last word landed: before that, its words may land again, because a message
//!   cut short by a lost or corrupted cell is written again by its retransmission (the
//!   same bytes to the same place, which is how go-back-N completes a partial write).
//!
//! The counter word is followed by value: the verdict keeps a shadow of it (host memory is
//! zeroed at power-on and only the NIC writes `W`), and a write's difference to the shadow
//! is the tag of the atomic that made it (0: a compare-and-swap that did not swap).
//!
//! For every DMA read of the read-only region `R` (only an RDMA READ's response reads it):
//! `R` is cut into [`READ_STRIPES`] stripes and the workload reads stripe
//! `target epoch % READ_STRIPES`, the epoch its TPT copy came from; a read of another
//! stripe is `stale-read` (a request from an earlier boot was served). A request that
//! outlives [`READ_STRIPES`] boots of its target would alias; no scenario keeps one alive
//! that long.
//!
//! Findings go to the [`Scoreboard`] as stale findings (violations under the rejoin
//! protocol, counted under the baseline) except `unmatched-write` and `duplicate-apply`,
//! which are always violations. The answer-based accounting of the scoreboard stays as a
//! second opinion; [`MemoryVerdict::compare`] turns each disagreement into a finding.

use crate::scoreboard::Scoreboard;
use crate::workload::MemoryLayout;
use nic_cosim::host_memory::{DmaRead, DmaWrite};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// Epochs are kept modulo this in a tag.
pub const EPOCH_MODULUS: u32 = 1 << 10;
/// Stripes of the read-only region (one per epoch, modulo).
pub const READ_STRIPES: u32 = 8;
/// The word index that marks an atomic's tag.
const ATOMIC_INDEX: u64 = 0xFF;

/// Who made an operation, and with which TPT copy (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct OperationTag {
    /// Source host (0..64).
    pub source: usize,
    /// Source epoch, modulo [`EPOCH_MODULUS`].
    pub source_epoch: u32,
    /// The target epoch the TPT copy came from, modulo [`EPOCH_MODULUS`].
    pub target_epoch: u32,
    /// Operation id within the source epoch (24 bits).
    pub op: u32,
}

/// Six check bits over the other 58.
fn check_bits(body: u64) -> u64 {
    let mut z = body.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z ^= z >> 29;
    z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (z >> 58) & 0x3F
}

impl OperationTag {
    pub fn new(source: usize, source_epoch: u32, target_epoch: u32, op: u32) -> Self {
        OperationTag {
            source: source & 0x3F,
            source_epoch: source_epoch % EPOCH_MODULUS,
            target_epoch: target_epoch % EPOCH_MODULUS,
            op: op & 0xFF_FFFF,
        }
    }

    /// Layout, from bit 63: check 6, source 6, source epoch 10, target epoch 10, op 24,
    /// index 8.
    fn encode(&self, index: u64) -> u64 {
        let body = (self.source as u64) << 52
            | (self.source_epoch as u64) << 42
            | (self.target_epoch as u64) << 32
            | (self.op as u64) << 8
            | (index & 0xFF);
        check_bits(body) << 58 | body
    }

    /// Word `index` of an RDMA WRITE's payload.
    pub fn word(&self, index: u32) -> u64 {
        assert!(
            (index as u64) < ATOMIC_INDEX,
            "OperationTag::word: index {index} out of range (payloads are at most 254 words)"
        );
        self.encode(index as u64)
    }

    /// An atomic's addend (or `swap - compare`).
    pub fn atomic(&self) -> u64 {
        self.encode(ATOMIC_INDEX)
    }

    /// `(tag, index)` of a word, if it is one (`index` [`None`] for an atomic's).
    pub fn decode(word: u64) -> Option<(Self, Option<u32>)> {
        let body = word & ((1 << 58) - 1);
        if word >> 58 != check_bits(body) {
            return None;
        }
        let tag = OperationTag {
            source: (body >> 52) as usize & 0x3F,
            source_epoch: (body >> 42) as u32 & 0x3FF,
            target_epoch: (body >> 32) as u32 & 0x3FF,
            op: (body >> 8) as u32 & 0xFF_FFFF,
        };
        let index = body & 0xFF;
        Some((tag, (index != ATOMIC_INDEX).then_some(index as u32)))
    }
}

/// What the workload posted, as the verdict remembers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Posted {
    /// An RDMA WRITE of `words` words to physical `addr` of `target`.
    Write {
        target: usize,
        addr: u32,
        words: u32,
    },
    /// An atomic on the counter at `addr` of `target`.
    Atomic { target: usize, addr: u32 },
}

/// Counts of the memory verdict (the report prints them beside the answer-based counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemoryCounts {
    /// Tagged words (and atomics) that landed and were checked.
    pub words_checked: u64,
    /// Operations whose writes landed in a target epoch later than their TPT copy's.
    pub stale_writes: u64,
    /// Reads of the read-only region that served a request of an earlier epoch.
    pub stale_reads: u64,
    pub use_after_free: u64,
    pub unmatched_writes: u64,
    pub duplicate_applies: u64,
    /// Words of RDMA WRITEs that landed after their requester completed them as refused.
    pub refused_landed: u64,
    /// Operations the two verdicts judge differently (see [`MemoryVerdict::compare`]).
    pub disagreements: u64,
}

#[derive(Clone, Debug, Default)]
struct HostState {
    epoch: u32,
    /// Shadow of each source slot's counter word.
    counters: HashMap<u32, u64>,
    /// Ranges whose deregistration completed: `(start, len)`.
    freed: Vec<(u32, u32)>,
}

/// See the module docs.
pub struct MemoryVerdict {
    layout: MemoryLayout,
    stripe_len: u32,
    hosts: Vec<HostState>,
    posted: HashMap<OperationTag, Posted>,
    /// RDMA WRITEs the responder refused (their requester completed them with its NACK).
    refused: HashSet<OperationTag>,
    /// Operations applied, with the target's epoch they were applied in: an RDMA WRITE
    /// whose last word landed, an atomic that wrote.
    applied: HashSet<(OperationTag, u32)>,
    /// Stale operations that landed (each once): `(source, target, tag)`.
    stale_ops: HashSet<OperationTag>,
    counts: MemoryCounts,
}

impl MemoryVerdict {
    pub fn new(layout: MemoryLayout) -> Self {
        MemoryVerdict {
            layout,
            stripe_len: layout.r_stripe,
            hosts: vec![HostState::default(); layout.hosts],
            posted: HashMap::new(),
            refused: HashSet::new(),
            applied: HashSet::new(),
            stale_ops: HashSet::new(),
            counts: MemoryCounts::default(),
        }
    }

    pub fn counts(&self) -> MemoryCounts {
        self.counts
    }

    /// The operations whose writes landed stale.
    pub fn stale_operations(&self) -> impl Iterator<Item = &OperationTag> {
        self.stale_ops.iter()
    }

    /// Host `host` powered on into `epoch`: its memory is zeroed, nothing is freed.
    pub fn new_epoch(&mut self, host: usize, epoch: u32) {
        self.hosts[host] = HostState {
            epoch: epoch % EPOCH_MODULUS,
            ..Default::default()
        };
    }

    /// The workload posted an RDMA WRITE of `words` words to physical `addr` of `target`.
    pub fn posted_write(&mut self, tag: OperationTag, target: usize, addr: u32, words: u32) {
        self.posted.insert(
            tag,
            Posted::Write {
                target,
                addr,
                words,
            },
        );
    }

    /// The workload posted an atomic on the counter at physical `addr` of `target`.
    pub fn posted_atomic(&mut self, tag: OperationTag, target: usize, addr: u32) {
        self.posted.insert(tag, Posted::Atomic { target, addr });
    }

    /// The responder refused the RDMA WRITE `tag` (its requester completed it with a
    /// refusal): no word of it may land, now or later.
    pub fn refused(&mut self, tag: OperationTag) {
        self.refused.insert(tag);
    }

    /// The deregistration of `[start, +len)` of `host` completed: the memory is free.
    pub fn freed(&mut self, host: usize, start: u32, len: u32) {
        self.hosts[host].freed.push((start, len));
    }

    /// `[start, +len)` of `host` is registered again: what it overlaps is no longer free.
    pub fn registered(&mut self, host: usize, start: u32, len: u32) {
        let end = start as u64 + len as u64;
        self.hosts[host]
            .freed
            .retain(|&(s, l)| s as u64 + l as u64 <= start as u64 || s as u64 >= end);
    }

    /// The stripe of `R` a READ made with a TPT copy of `epoch` reads.
    pub fn read_stripe(layout: &MemoryLayout, epoch: u32) -> u32 {
        layout.r_base + (epoch % READ_STRIPES) * layout.r_stripe
    }

    /// Check one host's DMA accesses of this cycle.
    pub fn check(
        &mut self,
        sb: &mut Scoreboard,
        host: usize,
        writes: &[DmaWrite],
        reads: &[DmaRead],
    ) {
        for w in writes {
            self.check_write(sb, host, w);
        }
        let l = self.layout;
        for r in reads {
            let end = r.addr as u64 + 8 * r.words as u64;
            if r.addr < l.r_base || end > (l.r_base + l.r_len) as u64 {
                continue;
            }
            let epoch = self.hosts[host].epoch;
            let stripe = (r.addr - l.r_base) / self.stripe_len;
            let last = ((end - 1) as u32 - l.r_base) / self.stripe_len;
            if stripe != last || stripe != epoch % READ_STRIPES {
                self.counts.stale_reads += 1;
                sb.stale_finding(
                    r.cycle,
                    "stale-read",
                    vec![host],
                    Some(r.addr as u64),
                    format!(
                        "host {host}'s NIC read {} words of its read-only region in stripe {stripe}..={last}: a READ made with a TPT copy of an earlier epoch was served (epoch {epoch} reads stripe {})",
                        r.words,
                        epoch % READ_STRIPES
                    ),
                );
            }
        }
    }

    fn check_write(&mut self, sb: &mut Scoreboard, host: usize, w: &DmaWrite) {
        let l = self.layout;
        let w_end = l.w_base + l.hosts as u32 * l.slot;
        let state = &self.hosts[host];
        // Freed memory anywhere (the write region, the split driver's pools).
        if state
            .freed
            .iter()
            .any(|&(s, len)| w.addr >= s && (w.addr as u64) < s as u64 + len as u64)
        {
            self.counts.use_after_free += 1;
            sb.stale_finding(
                w.cycle,
                "use-after-free",
                vec![host],
                Some(w.addr as u64),
                format!(
                    "host {host}'s NIC wrote {:#018x} into memory whose deregistration had completed",
                    w.data
                ),
            );
        }
        // Only the write region carries tags.
        if w.addr < l.w_base || w.addr >= w_end {
            return;
        }
        let off = w.addr - l.w_base;
        let slot = off / l.slot;
        let in_slot = off % l.slot;
        let unmatched = |sb: &mut Scoreboard, counts: &mut MemoryCounts, why: String| {
            counts.unmatched_writes += 1;
            sb.violation(
                w.cycle,
                "unmatched-write",
                vec![host, slot as usize],
                Some(w.addr as u64),
                format!(
                    "host {host}'s NIC wrote {:#018x} (strobe {:#04x}) into source {slot}'s slot: {why}",
                    w.data, w.strobe
                ),
            );
        };
        if w.strobe != 0xFF {
            unmatched(
                sb,
                &mut self.counts,
                "a partial word (every RDMA WRITE and atomic writes whole words)".into(),
            );
            return;
        }
        let (word, index) = if in_slot < 64 {
            if in_slot != 0 {
                unmatched(
                    sb,
                    &mut self.counts,
                    "the unused words after the counter".into(),
                );
                return;
            }
            let shadow = self.hosts[host].counters.entry(slot).or_default();
            let delta = w.data.wrapping_sub(*shadow);
            *shadow = w.data;
            if delta == 0 {
                return; // a compare-and-swap that did not swap writes the value back
            }
            (delta, None)
        } else {
            let i = (in_slot - 64) % l.max_bytes / 8;
            (w.data, Some(i))
        };
        let Some((tag, tag_index)) = OperationTag::decode(word) else {
            unmatched(sb, &mut self.counts, "not an operation's tag".into());
            return;
        };
        let posted = self.posted.get(&tag).copied();
        let matches = match (posted, tag_index) {
            (
                Some(Posted::Write {
                    target,
                    addr,
                    words,
                }),
                Some(i),
            ) => target == host && i < words && w.addr == addr + 8 * i && Some(i) == index,
            (Some(Posted::Atomic { target, addr }), None) => target == host && w.addr == addr,
            _ => false,
        };
        if tag.source != slot as usize || !matches {
            unmatched(
                sb,
                &mut self.counts,
                format!("the tag names {tag:?}, which posted no such access ({posted:?})"),
            );
            return;
        }
        self.counts.words_checked += 1;
        if self.refused.contains(&tag) {
            self.counts.refused_landed += 1;
            sb.violation(
                w.cycle,
                "refused-write-landed",
                vec![host, tag.source],
                Some(w.addr as u64),
                format!("{tag:?} landed (word {tag_index:?}) after its requester completed it as refused"),
            );
        }
        // An RDMA WRITE is applied with its last word; an atomic with its one write.
        let complete = match (posted, tag_index) {
            (Some(Posted::Write { words, .. }), Some(i)) => i + 1 == words,
            _ => true,
        };
        let epoch = self.hosts[host].epoch;
        if self.applied.contains(&(tag, epoch)) {
            self.counts.duplicate_applies += 1;
            sb.violation(
                w.cycle,
                "duplicate-apply",
                vec![host, tag.source],
                Some(w.addr as u64),
                format!("{tag:?} was applied a second time (word {:?})", tag_index),
            );
        } else if complete {
            self.applied.insert((tag, epoch));
        }
        if tag.target_epoch != epoch && self.stale_ops.insert(tag) {
            self.counts.stale_writes += 1;
            sb.stale_finding(
                w.cycle,
                "stale-write",
                vec![host, tag.source],
                Some(w.addr as u64),
                format!(
                    "host {host} (epoch {epoch}) took a write of host {} (epoch {}, operation {}) made with a TPT copy of its epoch {}",
                    tag.source, tag.source_epoch, tag.op, tag.target_epoch
                ),
            );
        }
    }

    /// Second opinion: every operation that landed stale in memory must be one the
    /// answer-based scoreboard saw land (`answers_landed` holds its `(source, target,
    /// tag)`), and the other way round. Each disagreement is a finding.
    pub fn compare(
        &mut self,
        sb: &mut Scoreboard,
        cycle: u64,
        answers_landed: &HashSet<OperationTag>,
    ) {
        let memory: HashSet<OperationTag> = self.stale_ops.iter().copied().collect();
        for tag in memory.symmetric_difference(answers_landed) {
            self.counts.disagreements += 1;
            let (says, other) = if memory.contains(tag) {
                ("memory saw it land", "the answers did not")
            } else {
                ("the answers say it landed", "memory never saw it")
            };
            sb.stale_finding(
                cycle,
                "verdicts-disagree",
                vec![tag.source],
                None,
                format!("stale {tag:?}: {says}, {other}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_random_words_rarely_decode() {
        let t = OperationTag::new(63, 1025, 7, 0xAB_CDEF);
        assert_eq!(t.source_epoch, 1);
        assert_eq!(OperationTag::decode(t.word(5)), Some((t, Some(5))));
        assert_eq!(OperationTag::decode(t.atomic()), Some((t, None)));
        assert_eq!(OperationTag::decode(t.word(5) ^ 1 << 40), None);
        let decoded = (0..10_000u64)
            .filter(|i| OperationTag::decode(i.wrapping_mul(0x2545_F491_4F6C_DD1D)).is_some())
            .count();
        assert!(decoded < 300, "{decoded} of 10000 random words decode");
    }

    fn setup() -> (MemoryLayout, MemoryVerdict, Scoreboard) {
        let l = MemoryLayout::new(4, 64, 0x4000);
        let mut v = MemoryVerdict::new(l);
        v.new_epoch(1, 2);
        (l, v, Scoreboard::new(4, true, 256))
    }

    fn write(cycle: u64, addr: u32, data: u64) -> DmaWrite {
        DmaWrite {
            cycle,
            addr,
            data,
            strobe: 0xFF,
        }
    }

    /// Source 3's RDMA WRITE of 2 words into host 1's slot for it, op slot 0.
    fn target(l: &MemoryLayout) -> u32 {
        l.w_base + 3 * l.slot + 64
    }

    #[test]
    fn a_write_of_the_current_epoch_passes_and_an_older_one_is_stale() {
        let (l, mut v, mut sb) = setup();
        let ok = OperationTag::new(3, 1, 2, 10);
        v.posted_write(ok, 1, target(&l), 2);
        v.check(
            &mut sb,
            1,
            &[
                write(5, target(&l), ok.word(0)),
                write(6, target(&l) + 8, ok.word(1)),
            ],
            &[],
        );
        assert!(sb.passed(), "{:?}", sb.violations());
        assert_eq!(v.counts().words_checked, 2);
        let stale = OperationTag::new(3, 1, 1, 11);
        v.posted_write(stale, 1, target(&l), 2);
        v.check(&mut sb, 1, &[write(7, target(&l), stale.word(0))], &[]);
        assert_eq!(v.counts().stale_writes, 1);
        assert_eq!(sb.violations()[0].kind, "stale-write");
    }

    #[test]
    fn a_refused_write_that_lands_is_a_violation() {
        let (l, mut v, mut sb) = setup();
        let t = OperationTag::new(3, 1, 2, 10);
        v.posted_write(t, 1, target(&l), 2);
        v.refused(t);
        v.check(&mut sb, 1, &[write(1, target(&l), t.word(0))], &[]);
        assert_eq!(v.counts().refused_landed, 1);
        assert_eq!(sb.violations()[0].kind, "refused-write-landed");
    }

    #[test]
    fn untagged_unposted_and_misplaced_writes_are_unmatched() {
        let (l, mut v, mut sb) = setup();
        let t = OperationTag::new(3, 1, 2, 10);
        v.posted_write(t, 1, target(&l), 2);
        v.check(&mut sb, 1, &[write(1, target(&l), 0x1234)], &[]);
        let unposted = OperationTag::new(3, 1, 2, 99);
        v.check(&mut sb, 1, &[write(2, target(&l), unposted.word(0))], &[]);
        // Word 0 of the operation written where its word 1 belongs.
        v.check(&mut sb, 1, &[write(3, target(&l) + 8, t.word(0))], &[]);
        // Into another source's slot.
        v.check(&mut sb, 1, &[write(4, target(&l) - l.slot, t.word(0))], &[]);
        assert_eq!(v.counts().unmatched_writes, 4);
        assert!(sb.violations().iter().all(|x| x.kind == "unmatched-write"));
    }

    #[test]
    fn a_partial_write_may_land_again_a_complete_one_may_not() {
        let (l, mut v, mut sb) = setup();
        let t = OperationTag::new(3, 1, 2, 10);
        v.posted_write(t, 1, target(&l), 2);
        // First attempt cut short after word 0; the retransmission writes both words.
        let w0 = write(1, target(&l), t.word(0));
        let w1 = write(2, target(&l) + 8, t.word(1));
        v.check(&mut sb, 1, &[w0, w0, w1], &[]);
        assert!(sb.passed(), "{:?}", sb.violations());
        // Applied: a duplicate executed again is flagged.
        v.check(&mut sb, 1, &[w0], &[]);
        assert_eq!(v.counts().duplicate_applies, 1);
        assert_eq!(sb.violations()[0].kind, "duplicate-apply");
    }

    #[test]
    fn a_write_applied_before_its_target_rebooted_lands_again_as_stale_not_duplicate() {
        let (l, mut v, mut sb) = setup();
        let t = OperationTag::new(3, 1, 2, 10);
        v.posted_write(t, 1, target(&l), 1);
        let w0 = write(1, target(&l), t.word(0));
        v.check(&mut sb, 1, &[w0], &[]);
        assert!(sb.passed(), "{:?}", sb.violations());
        // Host 1 reboots; the retransmission of the applied write lands in the new boot.
        v.new_epoch(1, 3);
        v.check(&mut sb, 1, &[write(2, target(&l), t.word(0))], &[]);
        assert_eq!(v.counts().duplicate_applies, 0, "{:?}", sb.violations());
        assert_eq!(v.counts().stale_writes, 1);
        // Applied in this boot now: once more is a duplicate.
        v.check(&mut sb, 1, &[write(3, target(&l), t.word(0))], &[]);
        assert_eq!(v.counts().duplicate_applies, 1);
    }

    #[test]
    fn atomics_are_judged_by_the_counter_difference() {
        let (l, mut v, mut sb) = setup();
        let counter = l.w_base + 3 * l.slot;
        let a = OperationTag::new(3, 1, 2, 20);
        let b = OperationTag::new(3, 1, 2, 21);
        v.posted_atomic(a, 1, counter);
        v.posted_atomic(b, 1, counter);
        let after_a = a.atomic();
        let after_b = after_a.wrapping_add(b.atomic());
        v.check(&mut sb, 1, &[write(1, counter, after_a)], &[]);
        // A compare-and-swap that did not swap writes the value back.
        v.check(&mut sb, 1, &[write(2, counter, after_a)], &[]);
        v.check(&mut sb, 1, &[write(3, counter, after_b)], &[]);
        assert!(sb.passed(), "{:?}", sb.violations());
        // `a` applied a second time.
        v.check(
            &mut sb,
            1,
            &[write(4, counter, after_b.wrapping_add(a.atomic()))],
            &[],
        );
        assert_eq!(v.counts().duplicate_applies, 1);
    }

    #[test]
    fn writes_into_freed_memory_and_reads_of_another_epochs_stripe_are_flagged() {
        let (l, mut v, mut sb) = setup();
        let t = OperationTag::new(3, 1, 2, 10);
        v.posted_write(t, 1, target(&l), 1);
        v.freed(1, l.w_base, l.hosts as u32 * l.slot);
        v.check(&mut sb, 1, &[write(1, target(&l), t.word(0))], &[]);
        assert_eq!(v.counts().use_after_free, 1);
        v.registered(1, l.w_base + l.slot, l.slot);
        let u = OperationTag::new(3, 1, 2, 11);
        v.posted_write(u, 1, target(&l), 1);
        v.check(&mut sb, 1, &[write(2, target(&l), u.word(0))], &[]);
        assert_eq!(
            v.counts().use_after_free,
            1,
            "registered again: no longer free"
        );
        let read = |addr| DmaRead {
            cycle: 3,
            port: 0,
            addr,
            words: 2,
        };
        let own = MemoryVerdict::read_stripe(&l, 2);
        v.check(&mut sb, 1, &[], &[read(own)]);
        assert_eq!(v.counts().stale_reads, 0);
        v.check(&mut sb, 1, &[], &[read(MemoryVerdict::read_stripe(&l, 1))]);
        assert_eq!(v.counts().stale_reads, 1);
    }
}
