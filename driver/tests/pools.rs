//! Push-push buffer pools (002): the wire format refuses what is malformed, and an
//! initiator and a target exchanging messages, RDMA WRITEs and completions in any
//! interleaving (per-direction order kept, as on one queue pair) never write an element
//! the target does not hold free, never write a flushed pool, and lose no element.

use nic_driver::pools::*;
use proptest::prelude::*;
use std::collections::VecDeque;

/// What travels from the initiator to the target (one queue pair: in order).
#[derive(Clone, Debug)]
enum ToTarget {
    Message(Vec<u8>),
    /// An RDMA WRITE into `e` with the immediate, if any.
    Write(Element, Option<u32>, u32),
}

/// What travels back: messages, and the completion of each write (its ACK).
#[derive(Clone, Debug)]
enum ToInitiator {
    Message(Vec<u8>),
    Completed(Element),
}

#[derive(Clone, Debug)]
enum Act {
    Write(u32),
    DeliverToTarget,
    DeliverToInitiator,
    Take(usize),
    Replenish,
    Flush(u32),
    Advertise(u32, u32),
    InitiatorFlush(u32),
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        4 => (1..70000u32).prop_map(Act::Write),
        5 => Just(Act::DeliverToTarget),
        5 => Just(Act::DeliverToInitiator),
        3 => any::<usize>().prop_map(Act::Take),
        2 => Just(Act::Replenish),
        1 => (0..4u32).prop_map(Act::Flush),
        1 => (1..300u32, 1..3u32).prop_map(|(c, k)| Act::Advertise(c, k)),
        1 => (0..4u32).prop_map(Act::InitiatorFlush),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn decoding_never_panics_and_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(m) = PoolMessage::decode(&bytes) {
            prop_assert_eq!(PoolMessage::decode(&m.encode()), Ok(m));
        }
    }

    #[test]
    fn no_write_lands_outside_a_free_element_of_a_live_pool(acts in proptest::collection::vec(act(), 1..200)) {
        let mut target = PoolTarget::new();
        let mut init = PoolInitiator::new();
        let mut to_t: VecDeque<ToTarget> = VecDeque::new();
        let mut to_i: VecDeque<ToInitiator> = VecDeque::new();
        let mut full: Vec<(u32, u32)> = vec![];
        let mut next_pool = 0u32;
        let mut removed: Vec<u32> = vec![];
        let mut advertise = |target: &mut PoolTarget, to_i: &mut VecDeque<ToInitiator>, count: u32, size: u32| {
            let d = PoolDescriptor { pool: next_pool, count, size, handle: 100 + next_pool, address: 0x1000 * next_pool as u64, context: 0 };
            next_pool += 1;
            to_i.push_back(ToInitiator::Message(target.advertise(d).unwrap().encode()));
        };
        advertise(&mut target, &mut to_i, 4, 4096);
        for a in acts {
            match a {
                Act::Write(bytes) => {
                    if let Some(e) = init.take(bytes) {
                        match init.indication(&e, bytes) {
                            Indication::Idata(imm) => to_t.push_back(ToTarget::Write(e, Some(imm), bytes)),
                            Indication::Message(m) => {
                                to_t.push_back(ToTarget::Write(e, None, bytes));
                                to_t.push_back(ToTarget::Message(m.encode()));
                            }
                        }
                    }
                }
                Act::DeliverToTarget => match to_t.pop_front() {
                    Some(ToTarget::Write(e, imm, bytes)) => {
                        // The bytes land now: the element must be the target's free one.
                        prop_assert!(target.writable(e.pool), "a write into flushed pool {}", e.pool);
                        prop_assert!(!removed.contains(&e.pool), "a write into freed pool {}", e.pool);
                        prop_assert!(bytes <= e.size);
                        if let Some(imm) = imm {
                            let ev = target.on_idata(imm);
                            prop_assert_eq!(ev, Some(TargetEvent::Data { pool: e.pool, element: e.element, bytes }));
                            full.push((e.pool, e.element));
                        }
                        to_i.push_back(ToInitiator::Completed(e));
                    }
                    Some(ToTarget::Message(b)) => {
                        let (ev, reply) = target.on_message(&b);
                        match ev {
                            Some(TargetEvent::Data { pool, element, .. }) => full.push((pool, element)),
                            Some(TargetEvent::Flushed(pools)) => {
                                for p in pools {
                                    prop_assert!(target.remove_flushed(p).is_some());
                                    removed.push(p);
                                    full.retain(|x| x.0 != p);
                                }
                            }
                            _ => {}
                        }
                        if let Some(r) = reply {
                            to_i.push_back(ToInitiator::Message(r.encode()));
                        }
                    }
                    None => {}
                },
                Act::DeliverToInitiator => match to_i.pop_front() {
                    Some(ToInitiator::Message(b)) => {
                        if let Some(r) = init.on_message(&b) {
                            to_t.push_back(ToTarget::Message(r.encode()));
                        }
                    }
                    Some(ToInitiator::Completed(e)) => {
                        if let Some(r) = init.written(&e) {
                            to_t.push_back(ToTarget::Message(r.encode()));
                        }
                    }
                    None => {}
                },
                Act::Take(i) => {
                    if !full.is_empty() {
                        let (p, e) = full.remove(i % full.len());
                        prop_assert!(target.take(p, e));
                    }
                }
                Act::Replenish => {
                    for m in target.replenish() {
                        to_i.push_back(ToInitiator::Message(m.encode()));
                    }
                }
                Act::Flush(p) => {
                    if let Some(m) = target.flush(p) {
                        to_i.push_back(ToInitiator::Message(m.encode()));
                    }
                }
                Act::Advertise(count, k) => advertise(&mut target, &mut to_i, count, 1024 * k),
                Act::InitiatorFlush(p) => {
                    if let Some(m) = init.flush(p) {
                        to_t.push_back(ToTarget::Message(m.encode()));
                    }
                }
            }
        }
        prop_assert_eq!(target.stats().out_of_protocol, 0, "{:?}", target.stats());
        prop_assert_eq!(init.stats().out_of_protocol, 0, "{:?}", init.stats());
        prop_assert_eq!(target.stats().malformed + init.stats().malformed, 0);
    }
}

fn header(function: u16, version: u16) -> Vec<u8> {
    let mut b = function.to_le_bytes().to_vec();
    b.extend_from_slice(&version.to_le_bytes());
    b.extend_from_slice(&7u64.to_le_bytes());
    b
}

#[test]
fn malformed_unknown_and_wrong_version_messages_are_refused_and_counted() {
    assert_eq!(
        PoolMessage::decode(&header(9, VERSION)),
        Err(PoolError::UnknownFunction { code: 9 })
    );
    let mut b = header(7, 2);
    b.extend_from_slice(&[0; 12]);
    assert_eq!(
        PoolMessage::decode(&b),
        Err(PoolError::WrongVersion { version: 2 })
    );
    let b = header(7, VERSION);
    assert!(matches!(
        PoolMessage::decode(&b),
        Err(PoolError::Truncated { .. })
    ));
    let mut b = header(3, VERSION);
    b.extend_from_slice(&0u16.to_le_bytes());
    assert!(matches!(
        PoolMessage::decode(&b),
        Err(PoolError::BadCount { count: 0, .. })
    ));
    let mut b = header(2, VERSION);
    b.extend_from_slice(&[1, 0, 0, 0, 8, 0, 0, 0, 0xFF]);
    assert_eq!(
        PoolMessage::decode(&b),
        Err(PoolError::Trailing { extra: 1 })
    );
    // Neither side acts on them.
    let mut t = PoolTarget::new();
    assert_eq!(t.on_message(&header(9, VERSION)), (None, None));
    assert_eq!(t.stats().malformed, 1);
    let mut i = PoolInitiator::new();
    assert_eq!(i.on_message(&[1, 2, 3]), None);
    assert_eq!(i.stats().malformed, 1);
    // An indication of an element never advertised is counted, not taken.
    let m = PoolMessage {
        context: 0,
        body: PoolBody::RdmaIndicate {
            pool: 3,
            element: 1,
            bytes: 8,
        },
    };
    assert_eq!(t.on_message(&m.encode()), (None, None));
    assert_eq!(t.stats().out_of_protocol, 1);
}

#[test]
fn the_immediate_says_pool_element_and_bytes_or_a_message_does() {
    assert_eq!(idata(7, 5, 256), Some(0x0705_0100));
    assert_eq!(from_idata(0x0705_0100), (7, 5, 256));
    assert_eq!(idata(256, 0, 8), None);
    assert_eq!(idata(0, 300, 8), None);
    assert_eq!(idata(0, 0, 65536), None);
    let mut t = PoolTarget::new();
    let d = PoolDescriptor {
        pool: 300,
        count: 2,
        size: 70000,
        handle: 1,
        address: 0,
        context: 0,
    };
    let adv = t.advertise(d).unwrap();
    let mut i = PoolInitiator::new();
    assert_eq!(i.on_message(&adv.encode()), None);
    let e = i.take(65536).unwrap();
    let Indication::Message(m) = i.indication(&e, 65536) else {
        panic!("pool 300 does not fit the immediate");
    };
    let (ev, _) = t.on_message(&m.encode());
    assert_eq!(
        ev,
        Some(TargetEvent::Data {
            pool: 300,
            element: 0,
            bytes: 65536
        })
    );
}
