//! A remote responder as the requester sees it: it answers each request message with the
//! acknowledgement events the NIC's receive side would report, following the responder
//! rules of `docs/nic-architecture.md` ("Reliability": in-order PSNs, duplicates
//! acknowledged again and not applied twice, one sequence-error NACK per gap, resync),
//! with random losses, refusals, corrupted requests and lost answers. It records what it
//! did with each PSN ([`Fate`]), so a test judges every completion by its effect at the
//! remote end.

use crate::requester::{needs_response, psn_add, AckEvent, Msg};
use nic_abi::{psn_distance, Syndrome, Wqe, PSN_MASK, SEND_WINDOW};
use rand::Rng;
use std::collections::{HashMap, HashSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Applied,
    Refused(u8),
}

#[derive(Default)]
pub struct ResponderQp {
    pub expected: u32,
    pub synced: bool,
    pub nak_sent: bool,
    pub fates: HashMap<u32, Fate>,
    /// The last refused PSN and its syndrome: its duplicate is refused again, and older
    /// duplicates are acknowledged only up to the PSN before it (a simpler responder
    /// than "Refused PSNs": it answers through `s_ack` events, so no AETH report).
    pub refused: Option<(u32, u8)>,
    /// PSNs a read or atomic response was sent for (not lost).
    pub responded: HashSet<u32>,
}

/// A remote responder following the responder rules of docs/nic-architecture.md, with
/// random losses, refusals and delays; it answers through `s_ack` events.
pub struct Responder {
    pub qps: Vec<ResponderQp>,
    pub p_drop: f64,
    pub p_refuse: f64,
    pub p_corrupt: f64,
    pub p_ack_loss: f64,
    pub delay: (u64, u64),
}

impl Responder {
    pub fn new(n: usize) -> Self {
        Responder {
            qps: (0..n).map(|_| ResponderQp::default()).collect(),
            p_drop: 0.04,
            p_refuse: 0.04,
            p_corrupt: 0.03,
            p_ack_loss: 0.1,
            delay: (3, 80),
        }
    }

    /// Answers to one received request message.
    pub fn receive(&mut self, m: &Msg, rng: &mut impl Rng) -> Vec<AckEvent> {
        let q = m.src_qp as usize;
        let r = &mut self.qps[q];
        if rng.gen_bool(self.p_drop) {
            return vec![]; // lost on the way
        }
        let just_before = |p: u32, e: u32| (1..=SEND_WINDOW).contains(&psn_distance(e, p));
        if r.synced && rng.gen_bool(self.p_corrupt) {
            // A cell of the message failed the reassembler's checks (whatever its PSN:
            // a resent READ too): NACK CRC_OR_MALFORMED with the expected PSN, once
            // per gap.
            if r.nak_sent {
                return vec![];
            }
            r.nak_sent = true;
            return vec![AckEvent::nack(q, r.expected, Syndrome::CrcOrMalformed)];
        }
        // A resync adopts the PSN; the answer to this message says so (RESYNC) unless
        // the request asked for it (then it is the requester's oldest PSN).
        let resynced = !r.synced || (m.resync && !just_before(m.psn, r.expected));
        let marked = resynced && !m.resync;
        if resynced {
            r.expected = m.psn;
            r.synced = true;
            r.nak_sent = false;
            r.refused = None;
        }
        if r.refused
            .is_some_and(|(p, _)| psn_distance(r.expected, p) > SEND_WINDOW)
        {
            r.refused = None;
        }
        let is_response = needs_response(&Wqe {
            opcode: m.opcode,
            ..Default::default()
        });
        let mut out = vec![];
        if m.psn == r.expected {
            r.expected = psn_add(r.expected, 1);
            r.nak_sent = false;
            if rng.gen_bool(self.p_refuse) {
                let syn = [
                    Syndrome::ReceiverNotReady,
                    Syndrome::InvalidRequest,
                    Syndrome::RemoteAccessError,
                    Syndrome::RemoteOperationalError,
                    Syndrome::RdmaDisabled,
                    Syndrome::PortDown,
                ][rng.gen_range(0..6)];
                assert!(r.fates.insert(m.psn, Fate::Refused(syn as u8)).is_none());
                r.refused = Some((m.psn, syn as u8));
                out.push(AckEvent::nack(q, m.psn, syn));
            } else {
                assert!(
                    r.fates.insert(m.psn, Fate::Applied).is_none(),
                    "QP {q} PSN {:#x} applied twice",
                    m.psn
                );
                if !rng.gen_bool(self.p_ack_loss) {
                    out.push(if is_response {
                        r.responded.insert(m.psn);
                        AckEvent::response(q, m.psn)
                    } else {
                        AckEvent::ack(q, m.psn)
                    });
                }
            }
        } else if (1..1 << 23).contains(&psn_distance(r.expected, m.psn)) {
            // Duplicate: not applied again, acknowledged again.
            let lost = rng.gen_bool(self.p_ack_loss);
            let before_refused = r
                .refused
                .filter(|&(p, _)| (1..1 << 23).contains(&psn_distance(p, m.psn)));
            let ev = match (r.refused, r.fates.get(&m.psn)) {
                (Some((p, s)), _) if p == m.psn => AckEvent {
                    qp: q,
                    psn: m.psn,
                    syndrome: s,
                    response: false,
                    resync: false,
                },
                (_, Some(Fate::Applied)) if is_response => {
                    if !lost {
                        r.responded.insert(m.psn);
                    }
                    AckEvent::response(q, m.psn)
                }
                _ => match before_refused {
                    Some((p, _)) => AckEvent::ack(q, psn_add(p, PSN_MASK)),
                    None => AckEvent::ack(q, psn_add(r.expected, PSN_MASK)),
                },
            };
            if !lost {
                out.push(ev);
            }
        } else if !r.nak_sent {
            r.nak_sent = true;
            out.push(AckEvent::nack(q, r.expected, Syndrome::SequenceError));
        }
        if marked {
            for ev in out.iter_mut() {
                ev.resync = true;
            }
        }
        out
    }
}
