//! Push-push buffer pools of source document 002 ("a split model driver using a push-push
//! messaging protocol", section IV): a target advertises pools of fixed-size receive
//! elements, the initiator RDMA-writes data into free elements and says which it consumed.
//!
//! # Roles
//!
//! - The **target** owns the memory. It registers a pool (an array of `count` elements of
//!   `size` bytes), advertises it with BufferRecvPool, takes the data of each element the
//!   initiator indicates, and gives elements back with BufferRecvPoolUpdate. It flushes a
//!   pool with BufferPoolFlushRequest and frees it only after BufferPoolFlushReply (and,
//!   here, the deregistration's own fence: `crate::dereg`).
//! - The **initiator** uses the memory. It asks for pools with BufferRecvPoolGet, writes
//!   into an element it holds as free, and indicates the element: in the RDMA WRITE's
//!   32-bit immediate (pool 8 bits, element 8 bits, bytes 16 bits: [`idata`]) when the
//!   three fit, else in a BufferRDMAIndicate message. On a flush request it stops using the
//!   pool and replies once none of its writes into the pool is still in flight.
//! - Small data can go without a pool, in a SendData message.
//!
//! Both sides are pure state machines ([`PoolTarget`], [`PoolInitiator`]): no I/O; the
//! caller moves the messages (as SENDs on the pair's queue pair) and the RDMA WRITEs.
//!
//! # Wire format (version [`VERSION`])
//!
//! Little-endian, one message per SEND. Every message starts with 002's common header:
//!
//! | bytes | field |
//! | --- | --- |
//! | 0..2 | u16 function ([`Function`]) |
//! | 2..4 | u16 version number ([`VERSION`]) |
//! | 4..12 | u64 transaction context (echoed by a reply) |
//!
//! | function | code | body |
//! | --- | --- | --- |
//! | BufferRecvPool | 1 | u16 count (1..=[`MAX_POOLS_PER_MESSAGE`]), then per pool 36 bytes: u32 pool reference, u32 element count, u32 element size, u32 memory handle, u64 address of element 0, u64 pool context |
//! | BufferRecvPoolGet | 2 | u32 element count, u32 element size |
//! | BufferRecvPoolUpdate | 3 | u16 count (1..=[`MAX_UPDATE_ELEMENTS`]), then per element: u32 pool reference, u32 element index |
//! | BufferPoolFlushRequest | 4 | u16 count (1..=[`MAX_POOLS_PER_MESSAGE`]), then u32 pool references |
//! | BufferPoolFlushReply | 5 | u16 count, then u32 pool references (those flushed) |
//! | SendData | 6 | u32 length, then the data |
//! | BufferRDMAIndicate | 7 | u32 pool reference, u32 element index, u32 bytes written |
//!
//! A message that is truncated, has trailing bytes, an unknown function, another version
//! or a count out of range is refused with a [`PoolError`] naming what is wrong; the state
//! machines count a refused or out-of-protocol message and never act on it.

use std::collections::BTreeMap;

use thiserror::Error;

/// The protocol version this crate speaks.
pub const VERSION: u16 = 1;
/// Bytes of the common header.
pub const HEADER_BYTES: usize = 12;
/// Pools one BufferRecvPool or flush message names at most.
pub const MAX_POOLS_PER_MESSAGE: usize = 16;
/// Elements one BufferRecvPoolUpdate returns at most.
pub const MAX_UPDATE_ELEMENTS: usize = 128;
/// Largest SendData payload.
pub const MAX_SEND_DATA: usize = 4096;

/// The function codes of 002.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum Function {
    /// The target advertises pools.
    BufferRecvPool = 1,
    /// The initiator asks for a pool.
    BufferRecvPoolGet = 2,
    /// The target gives consumed elements back.
    BufferRecvPoolUpdate = 3,
    /// Either side asks to stop using pools.
    BufferPoolFlushRequest = 4,
    /// The answer: the pools are no longer used.
    BufferPoolFlushReply = 5,
    /// Data in the message itself.
    SendData = 6,
    /// Which element an RDMA WRITE consumed, when the immediate cannot say it.
    BufferRdmaIndicate = 7,
}

impl Function {
    fn from_code(code: u16) -> Option<Function> {
        Some(match code {
            1 => Function::BufferRecvPool,
            2 => Function::BufferRecvPoolGet,
            3 => Function::BufferRecvPoolUpdate,
            4 => Function::BufferPoolFlushRequest,
            5 => Function::BufferPoolFlushReply,
            6 => Function::SendData,
            7 => Function::BufferRdmaIndicate,
            _ => return None,
        })
    }
}

/// One advertised pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolDescriptor {
    /// The pool's reference (unique per target).
    pub pool: u32,
    /// Elements in the pool.
    pub count: u32,
    /// Bytes per element.
    pub size: u32,
    /// The registration covering the pool (the STag or software-TPT handle).
    pub handle: u32,
    /// Address of element 0 as the initiator names it in an RDMA WRITE.
    pub address: u64,
    /// 002's implementation-specific pool context.
    pub context: u64,
}

impl PoolDescriptor {
    /// Address of element `e`.
    pub fn element_address(&self, e: u32) -> u64 {
        self.address + e as u64 * self.size as u64
    }
}

/// A message of the protocol, with its transaction context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolMessage {
    /// Transaction context (a reply echoes the request's).
    pub context: u64,
    /// What it says.
    pub body: PoolBody,
}

/// The bodies of the seven functions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PoolBody {
    /// BufferRecvPool.
    RecvPool(Vec<PoolDescriptor>),
    /// BufferRecvPoolGet.
    RecvPoolGet {
        /// Elements asked for.
        count: u32,
        /// Bytes per element.
        size: u32,
    },
    /// BufferRecvPoolUpdate: `(pool, element)` given back.
    RecvPoolUpdate(Vec<(u32, u32)>),
    /// BufferPoolFlushRequest.
    FlushRequest(Vec<u32>),
    /// BufferPoolFlushReply.
    FlushReply(Vec<u32>),
    /// SendData.
    SendData(Vec<u8>),
    /// BufferRDMAIndicate.
    RdmaIndicate {
        /// Pool reference.
        pool: u32,
        /// Element index.
        element: u32,
        /// Bytes written into it.
        bytes: u32,
    },
}

/// Why a message was refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PoolError {
    /// Shorter than its fields.
    #[error("pool message truncated: {needed} bytes needed, {got} present")]
    Truncated {
        /// Bytes needed.
        needed: usize,
        /// Bytes present.
        got: usize,
    },
    /// Bytes after the last field.
    #[error("pool message has {extra} bytes after its last field")]
    Trailing {
        /// Bytes left over.
        extra: usize,
    },
    /// A function code 002 does not define.
    #[error("unknown pool function {code}")]
    UnknownFunction {
        /// The code.
        code: u16,
    },
    /// Another protocol version.
    #[error("pool protocol version {version} (this driver speaks {VERSION})")]
    WrongVersion {
        /// The version in the message.
        version: u16,
    },
    /// A list count of zero or above the function's maximum.
    #[error("{function:?}: count {count} is not in 1..={max}")]
    BadCount {
        /// The function.
        function: Function,
        /// The count.
        count: usize,
        /// The maximum.
        max: usize,
    },
    /// A pool with no element or elements of no byte.
    #[error("pool {pool}: {count} elements of {size} bytes")]
    EmptyPool {
        /// The pool.
        pool: u32,
        /// Elements.
        count: u32,
        /// Bytes per element.
        size: u32,
    },
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], PoolError> {
        if self.b.len() < self.at + n {
            return Err(PoolError::Truncated {
                needed: self.at + n,
                got: self.b.len(),
            });
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u16(&mut self) -> Result<u16, PoolError> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self) -> Result<u32, PoolError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, PoolError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn count(&mut self, function: Function, max: usize) -> Result<usize, PoolError> {
        let count = self.u16()? as usize;
        if count == 0 || count > max {
            return Err(PoolError::BadCount {
                function,
                count,
                max,
            });
        }
        Ok(count)
    }
}

impl PoolMessage {
    /// The message's function.
    pub fn function(&self) -> Function {
        match self.body {
            PoolBody::RecvPool(_) => Function::BufferRecvPool,
            PoolBody::RecvPoolGet { .. } => Function::BufferRecvPoolGet,
            PoolBody::RecvPoolUpdate(_) => Function::BufferRecvPoolUpdate,
            PoolBody::FlushRequest(_) => Function::BufferPoolFlushRequest,
            PoolBody::FlushReply(_) => Function::BufferPoolFlushReply,
            PoolBody::SendData(_) => Function::SendData,
            PoolBody::RdmaIndicate { .. } => Function::BufferRdmaIndicate,
        }
    }

    /// The wire bytes (see the module docs). Lists longer than their maximum are the
    /// caller's error: they are cut to the maximum.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(64);
        b.extend_from_slice(&(self.function() as u16).to_le_bytes());
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&self.context.to_le_bytes());
        let u32s = |b: &mut Vec<u8>, v: &[u32], max: usize| {
            let v = &v[..v.len().min(max)];
            b.extend_from_slice(&(v.len() as u16).to_le_bytes());
            for x in v {
                b.extend_from_slice(&x.to_le_bytes());
            }
        };
        match &self.body {
            PoolBody::RecvPool(pools) => {
                let pools = &pools[..pools.len().min(MAX_POOLS_PER_MESSAGE)];
                b.extend_from_slice(&(pools.len() as u16).to_le_bytes());
                for p in pools {
                    for x in [p.pool, p.count, p.size, p.handle] {
                        b.extend_from_slice(&x.to_le_bytes());
                    }
                    b.extend_from_slice(&p.address.to_le_bytes());
                    b.extend_from_slice(&p.context.to_le_bytes());
                }
            }
            PoolBody::RecvPoolGet { count, size } => {
                b.extend_from_slice(&count.to_le_bytes());
                b.extend_from_slice(&size.to_le_bytes());
            }
            PoolBody::RecvPoolUpdate(elements) => {
                let elements = &elements[..elements.len().min(MAX_UPDATE_ELEMENTS)];
                b.extend_from_slice(&(elements.len() as u16).to_le_bytes());
                for (p, e) in elements {
                    b.extend_from_slice(&p.to_le_bytes());
                    b.extend_from_slice(&e.to_le_bytes());
                }
            }
            PoolBody::FlushRequest(pools) | PoolBody::FlushReply(pools) => {
                u32s(&mut b, pools, MAX_POOLS_PER_MESSAGE)
            }
            PoolBody::SendData(data) => {
                let data = &data[..data.len().min(MAX_SEND_DATA)];
                b.extend_from_slice(&(data.len() as u32).to_le_bytes());
                b.extend_from_slice(data);
            }
            PoolBody::RdmaIndicate {
                pool,
                element,
                bytes,
            } => {
                for x in [pool, element, bytes] {
                    b.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
        b
    }

    /// Reads one message; refuses anything malformed (see [`PoolError`]).
    pub fn decode(bytes: &[u8]) -> Result<PoolMessage, PoolError> {
        let mut r = Reader { b: bytes, at: 0 };
        let code = r.u16()?;
        let version = r.u16()?;
        let context = r.u64()?;
        let function = Function::from_code(code).ok_or(PoolError::UnknownFunction { code })?;
        if version != VERSION {
            return Err(PoolError::WrongVersion { version });
        }
        let body = match function {
            Function::BufferRecvPool => {
                let n = r.count(function, MAX_POOLS_PER_MESSAGE)?;
                let mut pools = Vec::with_capacity(n);
                for _ in 0..n {
                    let p = PoolDescriptor {
                        pool: r.u32()?,
                        count: r.u32()?,
                        size: r.u32()?,
                        handle: r.u32()?,
                        address: r.u64()?,
                        context: r.u64()?,
                    };
                    if p.count == 0 || p.size == 0 {
                        return Err(PoolError::EmptyPool {
                            pool: p.pool,
                            count: p.count,
                            size: p.size,
                        });
                    }
                    pools.push(p);
                }
                PoolBody::RecvPool(pools)
            }
            Function::BufferRecvPoolGet => PoolBody::RecvPoolGet {
                count: r.u32()?,
                size: r.u32()?,
            },
            Function::BufferRecvPoolUpdate => {
                let n = r.count(function, MAX_UPDATE_ELEMENTS)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push((r.u32()?, r.u32()?));
                }
                PoolBody::RecvPoolUpdate(v)
            }
            Function::BufferPoolFlushRequest | Function::BufferPoolFlushReply => {
                let n = r.count(function, MAX_POOLS_PER_MESSAGE)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(r.u32()?);
                }
                if function == Function::BufferPoolFlushRequest {
                    PoolBody::FlushRequest(v)
                } else {
                    PoolBody::FlushReply(v)
                }
            }
            Function::SendData => {
                let len = r.u32()? as usize;
                if len > MAX_SEND_DATA {
                    return Err(PoolError::BadCount {
                        function,
                        count: len,
                        max: MAX_SEND_DATA,
                    });
                }
                PoolBody::SendData(r.take(len)?.to_vec())
            }
            Function::BufferRdmaIndicate => PoolBody::RdmaIndicate {
                pool: r.u32()?,
                element: r.u32()?,
                bytes: r.u32()?,
            },
        };
        if r.at != bytes.len() {
            return Err(PoolError::Trailing {
                extra: bytes.len() - r.at,
            });
        }
        Ok(PoolMessage { context, body })
    }
}

/// The 32-bit immediate that says which element an RDMA WRITE consumed: pool (bits
/// 31:24), element (23:16), bytes written (15:0); `None` when a value does not fit (then a
/// BufferRDMAIndicate message says it).
pub fn idata(pool: u32, element: u32, bytes: u32) -> Option<u32> {
    (pool < 256 && element < 256 && bytes < 65536).then_some(pool << 24 | element << 16 | bytes)
}

/// The `(pool, element, bytes)` an immediate names.
pub fn from_idata(imm: u32) -> (u32, u32, u32) {
    (imm >> 24, imm >> 16 & 0xFF, imm & 0xFFFF)
}

/// Counters of one side.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Messages refused as malformed (see [`PoolError`]).
    pub malformed: u64,
    /// Well-formed messages that broke the protocol (an element not advertised, an
    /// unknown pool...), counted and not acted on.
    pub out_of_protocol: u64,
    /// Elements written (initiator) or indicated (target).
    pub elements: u64,
    /// Indications that went in an immediate / in a BufferRDMAIndicate.
    pub by_idata: u64,
    /// Indications in a message.
    pub by_message: u64,
    /// SendData messages.
    pub send_data: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TargetElement {
    /// Advertised: the initiator may write it.
    Free,
    /// Indicated: holds `bytes` of data for the application.
    Full(u32),
    /// The application took the data; not yet given back.
    Taken,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum TargetPoolState {
    Active,
    /// Flush requested (context); the initiator may still write until it replies.
    Flushing(u64),
    /// The initiator replied: nothing more is written; the caller deregisters and frees.
    Flushed,
}

#[derive(Clone, Debug)]
struct TargetPool {
    desc: PoolDescriptor,
    state: TargetPoolState,
    elements: Vec<TargetElement>,
}

/// What the target's application learns from a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetEvent {
    /// Element `element` of `pool` holds `bytes` of data.
    Data {
        /// Pool.
        pool: u32,
        /// Element.
        element: u32,
        /// Bytes.
        bytes: u32,
    },
    /// Data that came in a SendData message.
    SendData(Vec<u8>),
    /// The pools are flushed: deregister and free them.
    Flushed(Vec<u32>),
    /// The initiator asks for a pool of `count` elements of `size` bytes.
    PoolWanted {
        /// Elements.
        count: u32,
        /// Bytes each.
        size: u32,
    },
}

/// The target's side (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct PoolTarget {
    pools: BTreeMap<u32, TargetPool>,
    /// Pools flushed and forgotten (a late reply to a crossed flush names them).
    retired: std::collections::BTreeSet<u32>,
    next_context: u64,
    stats: PoolStats,
}

impl PoolTarget {
    /// No pools.
    pub fn new() -> Self {
        Self::default()
    }

    /// The counters.
    pub fn stats(&self) -> &PoolStats {
        &self.stats
    }

    fn context(&mut self) -> u64 {
        self.next_context += 1;
        self.next_context
    }

    /// A new pool over registered memory: the BufferRecvPool to send. Refuses a pool
    /// reference in use or an empty pool.
    pub fn advertise(&mut self, desc: PoolDescriptor) -> Result<PoolMessage, PoolError> {
        if desc.count == 0
            || desc.size == 0
            || self.pools.contains_key(&desc.pool)
            || self.retired.contains(&desc.pool)
        {
            return Err(PoolError::EmptyPool {
                pool: desc.pool,
                count: desc.count,
                size: desc.size,
            });
        }
        self.pools.insert(
            desc.pool,
            TargetPool {
                desc,
                state: TargetPoolState::Active,
                elements: vec![TargetElement::Free; desc.count as usize],
            },
        );
        let context = self.context();
        Ok(PoolMessage {
            context,
            body: PoolBody::RecvPool(vec![desc]),
        })
    }

    /// The RDMA WRITE with immediate `imm` has landed.
    pub fn on_idata(&mut self, imm: u32) -> Option<TargetEvent> {
        let (pool, element, bytes) = from_idata(imm);
        let e = self.indicate(pool, element, bytes);
        if e.is_some() {
            self.stats.by_idata += 1;
        }
        e
    }

    fn indicate(&mut self, pool: u32, element: u32, bytes: u32) -> Option<TargetEvent> {
        let ok = self.pools.get_mut(&pool).and_then(|p| {
            let writable = matches!(
                p.state,
                TargetPoolState::Active | TargetPoolState::Flushing(_)
            );
            let size = p.desc.size;
            let slot = p.elements.get_mut(element as usize)?;
            (writable && *slot == TargetElement::Free && bytes <= size).then(|| {
                *slot = TargetElement::Full(bytes);
            })
        });
        if ok.is_none() {
            self.stats.out_of_protocol += 1;
            return None;
        }
        self.stats.elements += 1;
        Some(TargetEvent::Data {
            pool,
            element,
            bytes,
        })
    }

    /// A message from the initiator (its SEND's bytes). Returns what the application
    /// must do and the reply to send, if any.
    pub fn on_message(&mut self, bytes: &[u8]) -> (Option<TargetEvent>, Option<PoolMessage>) {
        let m = match PoolMessage::decode(bytes) {
            Ok(m) => m,
            Err(_) => {
                self.stats.malformed += 1;
                return (None, None);
            }
        };
        match m.body {
            PoolBody::RdmaIndicate {
                pool,
                element,
                bytes,
            } => {
                let e = self.indicate(pool, element, bytes);
                if e.is_some() {
                    self.stats.by_message += 1;
                }
                (e, None)
            }
            PoolBody::SendData(data) => {
                self.stats.send_data += 1;
                (Some(TargetEvent::SendData(data)), None)
            }
            PoolBody::RecvPoolGet { count, size } if count > 0 && size > 0 => {
                (Some(TargetEvent::PoolWanted { count, size }), None)
            }
            PoolBody::FlushRequest(pools) => {
                // The initiator stops using them and will write nothing more: flushed.
                let mut done = vec![];
                for p in pools {
                    if let Some(tp) = self.pools.get_mut(&p) {
                        tp.state = TargetPoolState::Flushed;
                        done.push(p);
                    }
                }
                if done.is_empty() {
                    self.stats.out_of_protocol += 1;
                    return (None, None);
                }
                let reply = PoolMessage {
                    context: m.context,
                    body: PoolBody::FlushReply(done.clone()),
                };
                (Some(TargetEvent::Flushed(done)), Some(reply))
            }
            PoolBody::FlushReply(pools) => {
                let mut done = vec![];
                let mut stray = false;
                for p in pools {
                    match self.pools.get_mut(&p).map(|tp| &mut tp.state) {
                        Some(state) if *state == TargetPoolState::Flushing(m.context) => {
                            *state = TargetPoolState::Flushed;
                            done.push(p);
                        }
                        // The initiator's own request crossed this side's: already flushed.
                        Some(TargetPoolState::Flushed) => {}
                        // Or already flushed, deregistered and forgotten.
                        None if self.retired.contains(&p) => {}
                        _ => stray = true,
                    }
                }
                if stray {
                    self.stats.out_of_protocol += 1;
                }
                if done.is_empty() {
                    return (None, None);
                }
                (Some(TargetEvent::Flushed(done)), None)
            }
            _ => {
                self.stats.out_of_protocol += 1;
                (None, None)
            }
        }
    }

    /// The application took the data of `element` of `pool`.
    pub fn take(&mut self, pool: u32, element: u32) -> bool {
        let Some(slot) = self
            .pools
            .get_mut(&pool)
            .and_then(|p| p.elements.get_mut(element as usize))
        else {
            return false;
        };
        if !matches!(slot, TargetElement::Full(_)) {
            return false;
        }
        *slot = TargetElement::Taken;
        true
    }

    /// Gives every taken element of the active pools back: the BufferRecvPoolUpdate(s) to
    /// send (none when there is nothing to give).
    pub fn replenish(&mut self) -> Vec<PoolMessage> {
        let mut back = vec![];
        for (&p, tp) in self.pools.iter_mut() {
            if tp.state != TargetPoolState::Active {
                continue;
            }
            for (e, slot) in tp.elements.iter_mut().enumerate() {
                if *slot == TargetElement::Taken {
                    *slot = TargetElement::Free;
                    back.push((p, e as u32));
                }
            }
        }
        back.chunks(MAX_UPDATE_ELEMENTS)
            .map(|c| PoolMessage {
                context: 0,
                body: PoolBody::RecvPoolUpdate(c.to_vec()),
            })
            .collect()
    }

    /// Starts flushing `pool`: the BufferPoolFlushRequest to send.
    pub fn flush(&mut self, pool: u32) -> Option<PoolMessage> {
        let context = self.context();
        let tp = self.pools.get_mut(&pool)?;
        if tp.state != TargetPoolState::Active {
            return None;
        }
        tp.state = TargetPoolState::Flushing(context);
        Some(PoolMessage {
            context,
            body: PoolBody::FlushRequest(vec![pool]),
        })
    }

    /// Forgets a flushed pool (the caller has deregistered it); returns its descriptor.
    pub fn remove_flushed(&mut self, pool: u32) -> Option<PoolDescriptor> {
        if self.pools.get(&pool)?.state != TargetPoolState::Flushed {
            return None;
        }
        self.retired.insert(pool);
        self.pools.remove(&pool).map(|p| p.desc)
    }

    /// Whether the initiator may still write into `pool` (it is advertised and not flushed).
    pub fn writable(&self, pool: u32) -> bool {
        self.pools
            .get(&pool)
            .is_some_and(|p| p.state != TargetPoolState::Flushed)
    }

    /// Elements of `pool` free for the initiator.
    pub fn free_elements(&self, pool: u32) -> usize {
        self.pools.get(&pool).map_or(0, |p| {
            p.elements
                .iter()
                .filter(|e| **e == TargetElement::Free)
                .count()
        })
    }

    /// The pools, by reference.
    pub fn pools(&self) -> impl Iterator<Item = &PoolDescriptor> {
        self.pools.values().map(|p| &p.desc)
    }
}

#[derive(Clone, Debug)]
struct InitiatorPool {
    desc: PoolDescriptor,
    free: Vec<bool>,
    /// Writes posted into the pool and not completed.
    in_flight: u32,
    /// A flush request to answer once nothing is in flight (its context).
    flush: Option<u64>,
}

/// How the initiator tells the target which element a write consumed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Indication {
    /// In the RDMA WRITE's immediate.
    Idata(u32),
    /// In a BufferRDMAIndicate message sent after the write.
    Message(PoolMessage),
}

/// An element the initiator may write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Element {
    /// Pool.
    pub pool: u32,
    /// Element index.
    pub element: u32,
    /// Registration and address to write to.
    pub handle: u32,
    /// Address of the element.
    pub address: u64,
    /// Bytes it holds.
    pub size: u32,
}

/// The initiator's side (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct PoolInitiator {
    pools: BTreeMap<u32, InitiatorPool>,
    /// Pools this side flushed, waiting for the target's reply.
    flushing: Vec<u32>,
    stats: PoolStats,
}

impl PoolInitiator {
    /// No pools known.
    pub fn new() -> Self {
        Self::default()
    }

    /// The counters.
    pub fn stats(&self) -> &PoolStats {
        &self.stats
    }

    /// Asks the target for a pool.
    pub fn request_pool(&self, count: u32, size: u32) -> PoolMessage {
        PoolMessage {
            context: 0,
            body: PoolBody::RecvPoolGet { count, size },
        }
    }

    /// A message from the target. Returns the reply to send now, if any.
    pub fn on_message(&mut self, bytes: &[u8]) -> Option<PoolMessage> {
        let m = match PoolMessage::decode(bytes) {
            Ok(m) => m,
            Err(_) => {
                self.stats.malformed += 1;
                return None;
            }
        };
        match m.body {
            PoolBody::RecvPool(pools) => {
                for d in pools {
                    if self.pools.contains_key(&d.pool) {
                        self.stats.out_of_protocol += 1;
                        continue;
                    }
                    self.pools.insert(
                        d.pool,
                        InitiatorPool {
                            desc: d,
                            free: vec![true; d.count as usize],
                            in_flight: 0,
                            flush: None,
                        },
                    );
                }
                None
            }
            PoolBody::RecvPoolUpdate(elements) => {
                for (p, e) in elements {
                    match self
                        .pools
                        .get_mut(&p)
                        .filter(|ip| ip.flush.is_none())
                        .and_then(|ip| ip.free.get_mut(e as usize))
                    {
                        Some(f) if !*f => *f = true,
                        // Given back while this side flushes the pool: nothing to do.
                        None if self.flushing.contains(&p) => {}
                        _ => self.stats.out_of_protocol += 1,
                    }
                }
                None
            }
            PoolBody::FlushRequest(pools) => {
                let mut now = vec![];
                for p in pools {
                    match self.pools.get_mut(&p) {
                        Some(ip) => {
                            ip.flush = Some(m.context);
                            ip.free.fill(false);
                            if ip.in_flight == 0 {
                                now.push(p);
                            }
                        }
                        // Both sides flushed it at once: this side's request answers.
                        None if self.flushing.contains(&p) => {}
                        None => self.stats.out_of_protocol += 1,
                    }
                }
                for p in &now {
                    self.pools.remove(p);
                }
                (!now.is_empty()).then(|| PoolMessage {
                    context: m.context,
                    body: PoolBody::FlushReply(now),
                })
            }
            PoolBody::FlushReply(pools) => {
                for p in pools {
                    match self.flushing.iter().position(|&x| x == p) {
                        Some(i) => {
                            self.flushing.swap_remove(i);
                        }
                        None => self.stats.out_of_protocol += 1,
                    }
                }
                None
            }
            _ => {
                self.stats.out_of_protocol += 1;
                None
            }
        }
    }

    /// A free element of at least `bytes`, taken (the caller writes it, then calls
    /// [`PoolInitiator::written`]). `None`: no pool has one free.
    pub fn take(&mut self, bytes: u32) -> Option<Element> {
        for (&p, ip) in self.pools.iter_mut() {
            if ip.flush.is_some() || ip.desc.size < bytes {
                continue;
            }
            if let Some(e) = ip.free.iter().position(|f| *f) {
                ip.free[e] = false;
                ip.in_flight += 1;
                return Some(Element {
                    pool: p,
                    element: e as u32,
                    handle: ip.desc.handle,
                    address: ip.desc.element_address(e as u32),
                    size: ip.desc.size,
                });
            }
        }
        None
    }

    /// How to indicate a write of `bytes` into `e` (decide before posting the write: an
    /// immediate goes with it).
    pub fn indication(&mut self, e: &Element, bytes: u32) -> Indication {
        match idata(e.pool, e.element, bytes) {
            Some(imm) => {
                self.stats.by_idata += 1;
                Indication::Idata(imm)
            }
            None => {
                self.stats.by_message += 1;
                Indication::Message(PoolMessage {
                    context: 0,
                    body: PoolBody::RdmaIndicate {
                        pool: e.pool,
                        element: e.element,
                        bytes,
                    },
                })
            }
        }
    }

    /// The write into `e` completed (whatever its status). Returns the flush reply that
    /// was waiting for it, if any.
    pub fn written(&mut self, e: &Element) -> Option<PoolMessage> {
        self.stats.elements += 1;
        let ip = self.pools.get_mut(&e.pool)?;
        ip.in_flight = ip.in_flight.saturating_sub(1);
        let context = ip.flush?;
        if ip.in_flight > 0 {
            return None;
        }
        self.pools.remove(&e.pool);
        Some(PoolMessage {
            context,
            body: PoolBody::FlushReply(vec![e.pool]),
        })
    }

    /// The initiator flushes `pool` itself (it is done with it): the request to send; it
    /// writes nothing more into the pool.
    pub fn flush(&mut self, pool: u32) -> Option<PoolMessage> {
        let ip = self.pools.get_mut(&pool)?;
        if ip.in_flight > 0 {
            return None;
        }
        self.pools.remove(&pool);
        self.flushing.push(pool);
        Some(PoolMessage {
            context: 0,
            body: PoolBody::FlushRequest(vec![pool]),
        })
    }

    /// Free elements over every usable pool.
    pub fn free_elements(&self) -> usize {
        self.pools
            .values()
            .filter(|p| p.flush.is_none())
            .map(|p| p.free.iter().filter(|f| **f).count())
            .sum()
    }

    /// Forgets every pool (the target rebooted: its pools and their registrations are
    /// gone).
    pub fn reset(&mut self) {
        self.pools.clear();
        self.flushing.clear();
    }
}
