//! What a phase's threads share: the servers and how to reach them, the history they write,
//! the registry of calls in flight and holds (which the nemesis picks its targets from), the
//! fenced resource, and the findings made as they happen.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use goblin_testkit::fenced::Writes;
use goblin_testkit::Flavor;

use crate::history::{wall_us, Fault, Left, Mode, NodeId, Op, Outcome, Violation};
use crate::limits::Catalog;
use crate::locks::LockKeyDef;
use crate::net::{Host, Net};
use crate::procs::Proc;
use crate::topology::{NodeInfo, Shape};
use crate::wire::Reply;

/// The error text of a panic the module caught.
pub const INTERNAL_ERROR: &str = "goblin internal error";

/// A call a worker has on the wire.
pub struct Flight {
    pub worker: usize,
    pub node: NodeId,
    pub client: Option<i64>,
    pub op: u64,
    pub key: Vec<u8>,
    pub token: Vec<u8>,
    pub mode: Mode,
    /// A blocking acquire, with its deadline on the server's clock.
    pub deadline_us: Option<i64>,
    pub since_us: i64,
    /// The same socket: the nemesis closes it from here.
    pub handle: Option<TcpStream>,
    /// Set by the nemesis before it makes the caller leave.
    pub left: Option<Left>,
    /// Seen blocked past its deadline by the watchdog (once).
    pub overdue: bool,
}

/// A lock a worker believes it holds.
#[derive(Debug, Clone)]
pub struct Holding {
    pub worker: usize,
    pub node: NodeId,
    pub key: Vec<u8>,
    pub token: Vec<u8>,
    pub mode: Mode,
}

#[derive(Default)]
pub struct Registry {
    pub flights: BTreeMap<usize, Flight>,
    pub holds: Vec<Holding>,
    /// Workers asked to send their next call inside a MULTI and close before EXEC.
    pub drop_in_multi: BTreeSet<usize>,
    /// Each worker's connection: (node, client id, socket), for CLIENT KILL.
    pub conns: BTreeMap<usize, (NodeId, i64, Option<TcpStream>)>,
}

pub struct Procs {
    pub nodes: Vec<Proc>,
    pub sentinels: Vec<Proc>,
}

/// A node's role as the observer saw it, over a span of the server's clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleSpan {
    pub node: NodeId,
    pub incarnation: u32,
    pub primary: bool,
    pub from_us: i64,
    pub to_us: i64,
}

pub struct Shared {
    pub seed: u64,
    pub flavor: Flavor,
    pub shape: Shape,
    pub started: Instant,
    pub stop: AtomicBool,
    pub nodes: Vec<NodeInfo>,
    pub sentinels: Vec<SocketAddr>,
    pub namespaces: bool,
    pub procs: Mutex<Procs>,
    pub net: Mutex<Option<Net>>,
    pub ops: Mutex<Vec<Op>>,
    pub faults: Mutex<Vec<Fault>>,
    pub live: Mutex<Vec<Violation>>,
    next_id: AtomicU64,
    pub registry: Mutex<Registry>,
    pub store: Mutex<BTreeMap<Vec<u8>, Writes>>,
    pub roles: Mutex<Vec<RoleSpan>>,
    pub locks: Vec<LockKeyDef>,
    pub limits: Catalog,
    /// Every key Goblin writes in this phase (lock keys, limit keys), for the keyspace faults.
    pub goblin_keys: Vec<Vec<u8>>,
    /// Calls answered, by the servers (not the observers).
    pub answered: AtomicU64,
    /// Spans in which a node may hold writes back and not reads (`WriteHold`).
    pub write_holds: Mutex<Vec<WriteHold>>,
}

/// A span in which a node may hold writes back and not the reads before them: `CLIENT PAUSE
/// WRITE` (or ALL), a cluster's manual failover, an atomic slot migration's handover. The held
/// writes of other clients run first when it ends, so a step's reads before its call may be
/// stale, however briefly its own write was held. Registered before the fault strikes, open
/// (`to_us` = `i64::MAX`) until it is over, then closed `HOLD_MARGIN_US` after: the server
/// notices a pause's end on its next cron, up to 100 ms late. `node`: `None` for every node.
#[derive(Debug, Clone, Copy)]
pub struct WriteHold {
    pub node: Option<NodeId>,
    pub from_us: i64,
    pub to_us: i64,
}

/// How long after a hold's end it may still release held writes.
pub const HOLD_MARGIN_US: i64 = 250_000;

/// Whether a step on `node` from `lo` to `hi` (server µs) overlaps a span that may have held
/// writes back.
pub fn held_back(holds: &[WriteHold], node: Option<NodeId>, lo: i64, hi: i64) -> bool {
    holds.iter().any(|h| {
        (h.node.is_none() || node.is_none() || h.node == node) && h.from_us <= hi && h.to_us >= lo
    })
}

/// A mutex that a panicking thread does not poison for the others.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        seed: u64,
        flavor: Flavor,
        shape: Shape,
        nodes: Vec<NodeInfo>,
        sentinels: Vec<SocketAddr>,
        procs: Procs,
        net: Option<Net>,
        tag: &str,
    ) -> Shared {
        let locks = crate::locks::catalog(tag);
        let limits = Catalog::new(tag);
        let mut goblin_keys: Vec<Vec<u8>> = locks.iter().map(|def| def.name.clone()).collect();
        goblin_keys.extend(limits.keys());
        Shared {
            seed,
            flavor,
            shape,
            started: Instant::now(),
            stop: AtomicBool::new(false),
            nodes,
            sentinels,
            namespaces: net.is_some(),
            procs: Mutex::new(procs),
            net: Mutex::new(net),
            ops: Mutex::new(Vec::new()),
            faults: Mutex::new(Vec::new()),
            live: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            registry: Mutex::new(Registry::default()),
            store: Mutex::new(BTreeMap::new()),
            roles: Mutex::new(Vec::new()),
            locks,
            limits,
            goblin_keys,
            answered: AtomicU64::new(0),
            write_holds: Mutex::new(Vec::new()),
        }
    }

    /// Opens a span in which `node` (`None`: every node) may hold writes back; its index, for
    /// `writes_released`.
    pub fn writes_held(&self, node: Option<NodeId>) -> usize {
        let mut holds = lock(&self.write_holds);
        holds.push(WriteHold {
            node,
            from_us: crate::history::wall_us(),
            to_us: i64::MAX,
        });
        holds.len() - 1
    }

    /// Closes span `index`: over now, and `HOLD_MARGIN_US` after.
    pub fn writes_released(&self, index: usize) {
        if let Some(hold) = lock(&self.write_holds).get_mut(index) {
            hold.to_us = crate::history::wall_us() + HOLD_MARGIN_US;
        }
    }

    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub fn node_of(&self, addr: SocketAddr) -> Option<NodeId> {
        self.nodes.iter().position(|node| node.addr == addr)
    }

    pub fn incarnation(&self, node: NodeId) -> u32 {
        lock(&self.procs)
            .nodes
            .get(node)
            .map_or(0, |p| p.incarnation)
    }

    pub fn lock_def(&self, key: &[u8]) -> Option<&LockKeyDef> {
        self.locks.iter().find(|def| def.name == key)
    }

    /// Records a finished call, and finds what a reply alone shows (an internal error).
    pub fn record(&self, op: Op) -> u64 {
        let id = op.id;
        let replies = op
            .outcome
            .reply()
            .into_iter()
            .chain(op.pre.iter())
            .chain(op.post.iter());
        if replies.into_iter().any(shows_internal_error) {
            self.found(Violation {
                checker: "internal-error",
                message: format!(
                    "{} answered an internal error: {}",
                    crate::wire::shown(&op.command),
                    op.outcome
                        .reply()
                        .map(crate::wire::brief)
                        .unwrap_or_default()
                ),
                ops: vec![op.id],
                at_ms: op.done_ms,
            });
        }
        if op.node.is_some() && matches!(op.outcome, Outcome::Answered(_)) {
            self.answered.fetch_add(1, Ordering::Relaxed);
        }
        lock(&self.ops).push(op);
        id
    }

    pub fn found(&self, violation: Violation) {
        lock(&self.live).push(violation);
    }

    pub fn fault(&self, fault: Fault) {
        lock(&self.faults).push(fault);
    }

    /// A write to the resource that keeps the largest token of `key`.
    pub fn write_resource(&self, key: &[u8], token: i64, text: &str) -> bool {
        lock(&self.store)
            .entry(key.to_vec())
            .or_default()
            .write(token, text)
            .is_ok()
    }

    /// Where a client on `home` reaches `node`.
    pub fn addr(&self, node: NodeId) -> SocketAddr {
        self.nodes[node].addr
    }

    pub fn host_count(&self) -> usize {
        self.nodes.len()
    }

    /// A short pause that ends early when the phase stops.
    pub fn nap(&self, duration: Duration) {
        let deadline = Instant::now() + duration;
        while !self.stopping() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
    }

    pub fn now_us(&self) -> i64 {
        wall_us()
    }

    /// The namespaces' hosts the clients live on.
    pub fn client_hosts(&self) -> Vec<Host> {
        if self.namespaces {
            vec![Host::Clients]
        } else {
            Vec::new()
        }
    }
}

pub fn shows_internal_error(reply: &Reply) -> bool {
    match reply {
        Reply::Error(text) => text.contains(INTERNAL_ERROR),
        Reply::Array(items) => items.iter().any(shows_internal_error),
        _ => false,
    }
}
