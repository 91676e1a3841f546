//! A worker: one client, on one host, sending a seeded random mix of every writing command
//! family, each call recorded with the server's clock around it. A worker holds locks and
//! leases as an application would: it renews them, releases them, lets them lapse, writes to
//! the fenced resource with its token, sometimes after sleeping past its lease (a stale
//! holder), and now and then calls with a token it no longer holds. Its seed fixes the draws;
//! what it draws next also depends on what the servers answered.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::history::{
    wall_us, Acquire, Actor, Extend, Left, Limit, Mode, NodeId, Op, Outcome, Release, What,
};
use crate::limits;
use crate::locks::{self, Kind, ReleaseBy};
use crate::net::{self, Host};
use crate::rng::Rng;
use crate::shared::{held_back, lock, Flight, Holding, Shared, WriteHold};
use crate::topology::{self, Shape, MASTER};
use crate::wire::{cmd, time_us, Client, Command, Reply, ReplyExt};

/// What a worker holds of one lock key.
#[derive(Debug, Clone)]
struct Hold {
    token: Vec<u8>,
    mode: Mode,
    fence: Option<i64>,
    /// When its lease ends, as far as the worker knows (wall clock, microseconds).
    end_us: i64,
    node: NodeId,
}

pub struct Worker<'a> {
    id: usize,
    shared: &'a Shared,
    rng: Rng,
    home: Option<Host>,
    conns: BTreeMap<NodeId, Client>,
    primary: Option<NodeId>,
    slots: Vec<Option<NodeId>>,
    holds: BTreeMap<usize, Hold>,
    /// Tokens it held once: (lock key, token, mode).
    stale: Vec<(usize, Vec<u8>, Mode)>,
    seq: u64,
}

/// Runs worker `id` until the phase stops.
pub fn run(shared: &Shared, id: usize, home: Option<Host>) {
    if let Some(host) = home {
        let Some(ns) = lock(&shared.net).as_ref().map(|net| net.namespace(host)) else {
            return;
        };
        if let Err(error) = net::enter(&ns) {
            eprintln!("worker {id}: cannot enter {ns}: {error}");
            return;
        }
    }
    let mut worker = Worker {
        id,
        shared,
        rng: Rng::stream(shared.seed, 1000 + id as u64),
        home,
        conns: BTreeMap::new(),
        primary: None,
        slots: vec![None; 16384],
        holds: BTreeMap::new(),
        stale: Vec::new(),
        seq: 0,
    };
    while !shared.stopping() {
        worker.act();
        let think = worker.rng.below(12);
        std::thread::sleep(Duration::from_millis(think));
    }
    lock(&shared.registry).holds.retain(|h| h.worker != id);
}

fn text(n: i64) -> Vec<u8> {
    n.to_string().into_bytes()
}

/// Whether a step ran whole: its reads, its call and its reads after, with nothing of another
/// client between them. A step the server held up for more than 20 ms says nothing, nor one
/// that met a span in which its node may hold writes back (`WriteHold`): `CLIENT PAUSE WRITE`
/// (and a manual failover, and an atomic slot migration's handover) holds back a write and not
/// the reads before it, and other clients' held writes may run first, however briefly this
/// step's own was held.
pub fn whole(holds: &[WriteHold], node: Option<NodeId>, lo: i64, hi: i64) -> bool {
    hi - lo <= 20_000 && !held_back(holds, node, lo, hi)
}

/// How a pipeline's replies split: the clock before, the reads before, the call's reply, the
/// reads after, the clock after.
struct Split {
    lo: Option<i64>,
    hi: Option<i64>,
    pre: Vec<Reply>,
    reply: Option<Reply>,
    post: Vec<Reply>,
}

fn split(replies: &[Reply], call_at: usize, total: usize) -> Split {
    let lo = replies.first().and_then(time_us);
    let hi = if replies.len() == total {
        replies.last().and_then(time_us)
    } else {
        None
    };
    let pre = replies
        .get(1..call_at.min(replies.len()))
        .map(<[Reply]>::to_vec)
        .unwrap_or_default();
    let reply = replies.get(call_at).cloned();
    let post = if replies.len() == total && call_at + 1 < total {
        replies[call_at + 1..total - 1].to_vec()
    } else {
        Vec::new()
    };
    Split {
        lo,
        hi,
        pre,
        reply,
        post,
    }
}

impl Worker<'_> {
    fn token(&mut self) -> Vec<u8> {
        self.seq += 1;
        format!("w{}-{}", self.id, self.seq).into_bytes()
    }

    /// The node to send a call on `key` to: the primary as this worker's Sentinels say (its
    /// host's first), or the slot's owner.
    fn target(&mut self, key: &[u8]) -> Option<NodeId> {
        match self.shared.shape {
            Shape::Sentinel => {
                if self.primary.is_none() {
                    self.primary = self.discover();
                }
                self.primary
            }
            Shape::Cluster => {
                let slot = topology::slot(key) as usize;
                if self.slots[slot].is_none() {
                    self.refresh_slots();
                }
                self.slots[slot]
            }
        }
    }

    fn discover(&mut self) -> Option<NodeId> {
        let mut order: Vec<usize> = (0..self.shared.sentinels.len()).collect();
        if let Some(Host::Node(n)) = self.home {
            order.retain(|&s| s != n);
            order.insert(0, n);
        }
        for s in order {
            let addr = self.shared.sentinels[s];
            let Ok(mut client) = Client::connect(addr, Duration::from_millis(400)) else {
                continue;
            };
            let reply = client.call(
                &cmd(&["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER]),
                Duration::from_millis(800),
            );
            let Some(items) = reply.ok().and_then(|r| r.items().map(<[Reply]>::to_vec)) else {
                continue;
            };
            let ip = items.first().and_then(ReplyExt::as_text);
            let port = items.get(1).and_then(ReplyExt::as_int);
            if let (Some(ip), Some(port)) = (ip, port) {
                if let Ok(addr) = format!("{ip}:{port}").parse() {
                    return self.shared.node_of(addr);
                }
            }
        }
        None
    }

    fn refresh_slots(&mut self) {
        for node in 0..self.shared.nodes.len() {
            let Ok(mut client) =
                Client::connect(self.shared.addr(node), Duration::from_millis(400))
            else {
                continue;
            };
            let Ok(reply) = client.call(&cmd(&["CLUSTER", "SLOTS"]), Duration::from_secs(2)) else {
                continue;
            };
            let owners = topology::slot_owners(&reply);
            if owners.is_empty() {
                continue;
            }
            self.slots = vec![None; 16384];
            for (first, last, addr) in owners {
                let owner = self.shared.node_of(addr);
                for slot in first..=last {
                    self.slots[slot as usize] = owner;
                }
            }
            return;
        }
    }

    /// A connection to `node`, made if needed; on a Sentinel group, only to a primary.
    fn conn(&mut self, node: NodeId) -> Option<&mut Client> {
        if !self.conns.contains_key(&node) {
            let mut client =
                Client::connect(self.shared.addr(node), Duration::from_millis(800)).ok()?;
            let id = client.identify().ok()?;
            if self.shared.shape == Shape::Sentinel {
                let role = client.call(&cmd(&["ROLE"]), Duration::from_secs(2)).ok()?;
                let master = role
                    .items()
                    .and_then(|items| items.first())
                    .and_then(ReplyExt::as_text);
                if master.as_deref() != Some("master") {
                    self.primary = None;
                    return None;
                }
            }
            lock(&self.shared.registry)
                .conns
                .insert(self.id, (node, id, client.handle().ok()));
            self.conns.insert(node, client);
        }
        self.conns.get_mut(&node)
    }

    fn forget(&mut self, node: NodeId) {
        self.conns.remove(&node);
        lock(&self.shared.registry).conns.remove(&self.id);
    }

    fn act(&mut self) {
        let wants_multi = lock(&self.shared.registry).drop_in_multi.remove(&self.id);
        if wants_multi {
            self.closed_in_multi();
            return;
        }
        match self.rng.weighted(&[58, 36, 6]) {
            0 => {
                let index = self.rng.below(self.shared.locks.len() as u64) as usize;
                self.lock_step(index);
            }
            1 => self.limit_step(),
            _ => self.stale_step(),
        }
    }

    /// Sends `commands` to `node` and records the call at `call_at`. Blocking calls are in the
    /// registry while they wait, with their socket, for the nemesis.
    fn exec(
        &mut self,
        node: NodeId,
        what: What,
        commands: Vec<Command>,
        call_at: usize,
        wait_ms: Option<i64>,
    ) -> Option<Op> {
        let shared: &Shared = self.shared;
        let id = shared.next_id();
        let at_ms = shared.elapsed_ms();
        let incarnation = shared.incarnation(node);
        let worker = self.id;
        let within = Duration::from_millis(wait_ms.map_or(10_000, |ms| ms as u64 + 30_000));
        let client = self.conn(node)?;
        let client_id = client.id;
        let (key, token, mode) = match &what {
            What::Acquire(a) => (a.key.clone(), a.token.clone(), a.mode),
            What::Extend(e) => (e.key.clone(), e.token.clone(), e.mode),
            What::Release(r) => (r.key.clone(), r.token.clone(), r.mode),
            _ => (Vec::new(), Vec::new(), Mode::Lock),
        };
        let since_us = wall_us();
        lock(&shared.registry).flights.insert(
            worker,
            Flight {
                worker,
                node,
                client: client_id,
                op: id,
                key,
                token,
                mode,
                // Known once the server has read the call (the clock it read right before).
                deadline_us: None,
                since_us,
                handle: client.handle().ok(),
                left: None,
                overdue: false,
            },
        );
        let call_command = commands.get(call_at).cloned().unwrap_or_default();
        let result = match wait_ms.filter(|ms| *ms > 0) {
            // A wait: its deadline is the server's clock when it read the call, plus the
            // timeout (a server held up before it reads the call has not started the wait).
            Some(timeout) => match client.send(&commands) {
                Err(error) => Err(crate::wire::Broken {
                    replies: Vec::new(),
                    error,
                }),
                Ok(()) => match client.read_replies(1, within) {
                    Err(broken) => Err(broken),
                    Ok(mut first) => {
                        if let Some(arrived) = first.first().and_then(time_us) {
                            if let Some(flight) = lock(&shared.registry).flights.get_mut(&worker) {
                                flight.deadline_us = Some(arrived + timeout * 1000);
                            }
                        }
                        match client.read_replies(commands.len() - 1, within) {
                            Ok(rest) => {
                                first.extend(rest);
                                Ok(first)
                            }
                            Err(mut broken) => {
                                first.append(&mut broken.replies);
                                broken.replies = first;
                                Err(broken)
                            }
                        }
                    }
                },
            },
            None => client.pipeline(&commands, within),
        };
        let left = lock(&shared.registry)
            .flights
            .remove(&worker)
            .and_then(|f| f.left);
        let total = commands.len();
        let (replies, error) = match result {
            Ok(replies) => (replies, None),
            Err(broken) => (broken.replies, Some(broken.error)),
        };
        // A connection that broke, or that the nemesis closed, is not used again.
        if error.is_some() || left.is_some() {
            if let Some(mut client) = self.conns.remove(&node) {
                // What the server still sends before it closes: a reply it had sent already.
                let (late, _) = client.drain(Duration::from_millis(200));
                let _ = late;
            }
            lock(&shared.registry).conns.remove(&self.id);
        }
        let parts = split(&replies, call_at, total);
        let mut op = Op::new(Actor::Worker(self.id), what, call_command);
        op.id = id;
        op.node = Some(node);
        op.incarnation = incarnation;
        op.lo = parts.lo;
        op.hi = parts.hi;
        op.at_ms = at_ms;
        op.done_ms = shared.elapsed_ms();
        op.pre = parts.pre;
        op.post = parts.post;
        op.client = client_id;
        op.left = left;
        op.outcome = match (parts.reply, &error) {
            (Some(reply), _) => Outcome::Answered(reply),
            (None, Some(error))
                if replies.is_empty() && error.kind() == std::io::ErrorKind::BrokenPipe =>
            {
                Outcome::NotSent(error.to_string())
            }
            (None, Some(error)) => Outcome::Unknown(error.to_string()),
            (None, None) => Outcome::Unknown("no reply".into()),
        };
        if let Some(reply) = op.reply() {
            if let Some(e) = reply.error() {
                let e = e.to_string();
                self.on_error(&e);
            }
        }
        Some(op)
    }

    /// What an error says of where to send the next call.
    fn on_error(&mut self, error: &str) {
        let redirect = error.starts_with("MOVED") || error.starts_with("ASK");
        if redirect {
            let mut words = error.split_whitespace();
            let _ = words.next();
            let slot = words.next().and_then(|s| s.parse::<usize>().ok());
            let addr = words.next().and_then(|a| a.parse().ok());
            if let (Some(slot), Some(addr)) = (slot, addr) {
                if error.starts_with("MOVED") && slot < 16384 {
                    self.slots[slot] = self.shared.node_of(addr);
                }
            }
        } else if [
            "READONLY",
            "UNBLOCKED",
            "MASTERDOWN",
            "LOADING",
            "CLUSTERDOWN",
            "TRYAGAIN",
            "NOREPLICAS",
        ]
        .iter()
        .any(|prefix| error.starts_with(prefix))
        {
            self.primary = None;
            self.conns.clear();
            if self.shared.shape == Shape::Cluster {
                self.slots = vec![None; 16384];
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn record(&self, op: Op) {
        self.shared.record(op);
    }

    // ---- limits ----

    fn limit_step(&mut self) {
        let family = self.shared.limits.call(&mut self.rng);
        let keys = family.keys();
        let Some(node) = self.target(&keys[0]) else {
            std::thread::sleep(Duration::from_millis(50));
            return;
        };
        let commands = limits::pipeline(&family);
        let call_at = 1 + family.reads().len();
        let what = What::Limit(Limit {
            family: family.clone(),
            keys,
        });
        let Some(op) = self.exec(node, what, commands, call_at, None) else {
            self.primary = None;
            std::thread::sleep(Duration::from_millis(30));
            return;
        };
        if let (Some(lo), Some(hi), Some(reply)) = (op.lo, op.hi, op.reply()) {
            if !whole(&lock(&self.shared.write_holds), op.node, lo, hi) {
                self.record(op);
                return;
            }
            if reply
                .error()
                .is_none_or(|e| !e.starts_with("MOVED") && !e.starts_with("OOM"))
            {
                if let Err(message) = limits::check(&family, lo, hi, &op.pre, reply, &op.post) {
                    self.shared.found(crate::history::Violation {
                        checker: "model",
                        message,
                        ops: vec![op.id],
                        at_ms: op.done_ms,
                    });
                }
            }
        }
        self.record(op);
    }

    // ---- locks ----

    fn lock_step(&mut self, index: usize) {
        let def = self.shared.locks[index].clone();
        let Some(node) = self.target(&def.name) else {
            std::thread::sleep(Duration::from_millis(50));
            return;
        };
        match self.holds.get(&index).cloned() {
            None => self.acquire(index, node, None),
            Some(hold) => {
                let choice = self.rng.weighted(&[20, 34, 14, 7, 5, 8, 12]);
                match choice {
                    0 => self.extend(index, node, &hold),
                    1 => self.release(index, node, &hold),
                    2 => self.fenced_write(index, &hold, false),
                    3 => self.abandon(index),
                    4 => self.fenced_write(index, &hold, true),
                    5 => self.acquire(index, node, Some((hold.token.clone(), hold.mode))),
                    _ => {
                        let switch = match (def.kind, hold.mode) {
                            (Kind::ReadWrite, Mode::Read) => Some(Mode::Write),
                            (Kind::ReadWrite, Mode::Write) => Some(Mode::Read),
                            _ => None,
                        };
                        match switch {
                            Some(mode) => {
                                self.acquire(index, node, Some((hold.token.clone(), mode)))
                            }
                            None => self.release(index, node, &hold),
                        }
                    }
                }
            }
        }
    }

    /// An acquire: a new holder (`again` None), or the holder asking again in a mode (a
    /// renewal, a promotion, a demotion).
    fn acquire(&mut self, index: usize, node: NodeId, again: Option<(Vec<u8>, Mode)>) {
        let def = self.shared.locks[index].clone();
        let held = self.holds.get(&index).cloned();
        let (token, mode) = match &again {
            Some((token, mode)) => (token.clone(), *mode),
            None => {
                let mode = match def.kind {
                    Kind::Token => Mode::Lock,
                    Kind::ReadWrite if self.rng.chance(50) => Mode::Read,
                    Kind::ReadWrite => Mode::Write,
                    Kind::Lease { .. } => Mode::Lease,
                };
                (self.token(), mode)
            }
        };
        let renewal = held
            .as_ref()
            .is_some_and(|h| h.mode == mode && h.token == token);
        let switch = held
            .as_ref()
            .is_some_and(|h| h.mode != mode && h.token == token);
        let ms = match def.kind {
            Kind::Lease { window_ms, .. } => window_ms,
            _ => *self.rng.pick(&[300, 800, 1500, 3000]).unwrap_or(&800),
        };
        // A renewal never waits; a promotion may.
        let blocking = !renewal && self.rng.chance(if switch { 40 } else { 55 });
        let timeout_ms = blocking.then(|| *self.rng.pick(&[150, 400, 1000, 2500]).unwrap_or(&400));
        let fence = self.rng.chance(75);
        let acquire = Acquire {
            key: def.name.clone(),
            token: token.clone(),
            mode,
            ms,
            fence,
            timeout_ms,
            renewal,
            switch,
        };
        let call = locks::acquire_command(&def, &acquire);
        let what = What::Acquire(acquire.clone());
        let (commands, call_at) = if blocking {
            (vec![cmd(&["TIME"]), call, cmd(&["TIME"])], 1)
        } else {
            (locks::step(&def.name, call), 4)
        };
        let Some(op) = self.exec(node, what.clone(), commands, call_at, timeout_ms) else {
            std::thread::sleep(Duration::from_millis(30));
            return;
        };
        let outcome = op.outcome.clone();
        let left = op.left;
        let (lo, hi) = (op.lo, op.hi);
        let op_id = op.id;
        self.record(op);
        match outcome {
            Outcome::Answered(reply) => match locks::granted(&reply, fence) {
                Ok(Some(fence_token)) => {
                    let granted_at = hi.or(lo).unwrap_or_else(wall_us);
                    let fence = fence_token.or(held
                        .as_ref()
                        .filter(|h| h.token == token)
                        .and_then(|h| h.fence));
                    self.hold(
                        index,
                        node,
                        Hold {
                            token,
                            mode,
                            fence,
                            end_us: granted_at + ms * 1000,
                            node,
                        },
                    );
                }
                Ok(None) => {
                    // Refused: a renewal refused means the lease was lost; a switch refused
                    // leaves the hold as it was.
                    if renewal {
                        self.lose(index);
                    }
                }
                Err(_) => {
                    if renewal || switch {
                        self.lose(index);
                    }
                }
            },
            Outcome::Unknown(_) | Outcome::NotSent(_) => {
                if held.is_some() {
                    self.lose(index);
                }
                if left.is_some() && blocking {
                    // It left as the nemesis made it: is anything still held in its name?
                    self.probe_after_leaving(node, &def.name, op_id);
                }
                let _ = (lo, hi);
                self.stale.push((index, token, mode));
            }
        }
    }

    fn hold(&mut self, index: usize, node: NodeId, hold: Hold) {
        let key = self.shared.locks[index].name.clone();
        let mut registry = lock(&self.shared.registry);
        registry
            .holds
            .retain(|h| !(h.worker == self.id && h.key == key));
        registry.holds.push(Holding {
            worker: self.id,
            node,
            key,
            token: hold.token.clone(),
            mode: hold.mode,
        });
        drop(registry);
        self.holds.insert(index, hold);
    }

    fn lose(&mut self, index: usize) {
        if let Some(hold) = self.holds.remove(&index) {
            let key = &self.shared.locks[index].name;
            lock(&self.shared.registry)
                .holds
                .retain(|h| !(h.worker == self.id && h.key == *key));
            self.stale.push((index, hold.token, hold.mode));
            if self.stale.len() > 16 {
                self.stale.remove(0);
            }
        }
    }

    fn abandon(&mut self, index: usize) {
        self.lose(index);
    }

    fn extend(&mut self, index: usize, node: NodeId, hold: &Hold) {
        let def = self.shared.locks[index].clone();
        let ms = match def.kind {
            Kind::Lease { window_ms, .. } => window_ms,
            _ => *self.rng.pick(&[300, 1000, 2000]).unwrap_or(&1000),
        };
        let extend = Extend {
            key: def.name.clone(),
            token: hold.token.clone(),
            mode: hold.mode,
            ms,
            replace: self.rng.chance(50),
            fence: self.rng.chance(60),
        };
        let call = locks::extend_command(&def, &extend);
        let commands = locks::step(&def.name, call);
        let Some(op) = self.exec(node, What::Extend(extend.clone()), commands, 4, None) else {
            return;
        };
        let reply = op.reply().cloned();
        let hi = op.hi.unwrap_or_else(wall_us);
        self.record(op);
        match reply.as_ref().map(|r| locks::granted(r, extend.fence)) {
            Some(Ok(Some(fence))) => {
                if let Some(h) = self.holds.get_mut(&index) {
                    h.end_us = if extend.replace || matches!(def.kind, Kind::Lease { .. }) {
                        hi + ms * 1000
                    } else {
                        h.end_us + ms * 1000
                    };
                    if fence.is_some() {
                        h.fence = fence;
                    }
                }
            }
            _ => self.lose(index),
        }
    }

    fn release(&mut self, index: usize, node: NodeId, hold: &Hold) {
        let def = self.shared.locks[index].clone();
        let by = match (def.kind, hold.mode) {
            (Kind::Token, _) => *self
                .rng
                .pick(&[
                    ReleaseBy::Cad,
                    ReleaseBy::Cad,
                    ReleaseBy::Delifeq,
                    ReleaseBy::DelexIfeq,
                ])
                .unwrap_or(&ReleaseBy::Cad),
            (Kind::ReadWrite, Mode::Write) if self.rng.chance(25) => ReleaseBy::Cad,
            (Kind::ReadWrite, _) => ReleaseBy::Rwunlock,
            (Kind::Lease { .. }, _) => ReleaseBy::Cad,
        };
        let release = Release {
            key: def.name.clone(),
            token: hold.token.clone(),
            mode: hold.mode,
        };
        let call = locks::release_command(&release, by);
        let commands = locks::step(&def.name, call);
        let Some(op) = self.exec(node, What::Release(release), commands, 4, None) else {
            return;
        };
        self.record(op);
        self.lose(index);
    }

    /// A write to the fenced resource with the hold's token; `late`: after sleeping past the
    /// lease, as a paused holder would.
    fn fenced_write(&mut self, index: usize, hold: &Hold, late: bool) {
        let Some(token) = hold.fence else {
            return;
        };
        if late {
            let wait_us = (hold.end_us - wall_us()).max(0) + 50_000;
            self.shared
                .nap(Duration::from_micros(wait_us.min(4_000_000) as u64));
        }
        let key = self.shared.locks[index].name.clone();
        let at = wall_us();
        let accepted = self.shared.write_resource(
            &key,
            token,
            &format!("w{} {}", self.id, String::from_utf8_lossy(&hold.token)),
        );
        let mut op = Op::new(
            Actor::Worker(self.id),
            What::Write {
                key: key.clone(),
                token,
                accepted,
            },
            vec![b"WRITE".to_vec(), key, text(token), hold.token.clone()],
        );
        op.id = self.shared.next_id();
        op.lo = Some(at);
        op.hi = Some(wall_us());
        op.at_ms = self.shared.elapsed_ms();
        op.done_ms = op.at_ms;
        op.node = Some(hold.node);
        op.outcome = Outcome::Answered(if accepted {
            Reply::Status("OK".into())
        } else {
            Reply::Error("STALE".into())
        });
        self.record(op);
        if late {
            self.lose(index);
        }
    }

    /// A call with a token it held once, which must find nothing of it (or what it still has).
    fn stale_step(&mut self) {
        let Some((index, token, mode)) = self.rng.pick(&self.stale).cloned() else {
            return;
        };
        if self.holds.get(&index).is_some_and(|h| h.token == token) {
            return;
        }
        let def = self.shared.locks[index].clone();
        let Some(node) = self.target(&def.name) else {
            return;
        };
        let (what, call) = if self.rng.chance(60) {
            let extend = Extend {
                key: def.name.clone(),
                token: token.clone(),
                mode,
                // A lease's renewal names its key's window: every call evicts by its own.
                ms: match def.kind {
                    Kind::Lease { window_ms, .. } => window_ms,
                    _ => 1000,
                },
                replace: self.rng.chance(50),
                fence: self.rng.chance(30),
            };
            let call = locks::extend_command(&def, &extend);
            (What::Extend(extend), call)
        } else {
            let release = Release {
                key: def.name.clone(),
                token,
                mode,
            };
            let by = match def.kind {
                Kind::ReadWrite => ReleaseBy::Rwunlock,
                _ => ReleaseBy::Cad,
            };
            let call = locks::release_command(&release, by);
            (What::Release(release), call)
        };
        let commands = locks::step(&def.name, call);
        if let Some(op) = self.exec(node, what, commands, 4, None) {
            self.record(op);
        }
    }

    /// Two probes of `key`, one after the other, after this worker's call `left_op` ended
    /// without a reply because the nemesis made it leave.
    fn probe_after_leaving(&mut self, node: NodeId, key: &[u8], left_op: u64) {
        let _ = left_op;
        for round in 0..2 {
            if round == 1 {
                std::thread::sleep(Duration::from_millis(30));
            }
            let commands = locks::probe(key);
            let Some(op) = self.exec(node, What::Probe { key: key.to_vec() }, commands, 4, None)
            else {
                return;
            };
            self.record(op);
        }
    }

    /// The nemesis asked: the next call inside a MULTI, and the connection closed before EXEC.
    /// Nothing of it may run.
    fn closed_in_multi(&mut self) {
        let index = self.rng.below(self.shared.locks.len() as u64) as usize;
        let def = self.shared.locks[index].clone();
        let Some(node) = self.target(&def.name) else {
            return;
        };
        let token = self.token();
        let mode = match def.kind {
            Kind::Token => Mode::Lock,
            Kind::ReadWrite => Mode::Write,
            Kind::Lease { .. } => Mode::Lease,
        };
        let acquire = Acquire {
            key: def.name.clone(),
            token: token.clone(),
            mode,
            ms: match def.kind {
                Kind::Lease { window_ms, .. } => window_ms,
                _ => 3000,
            },
            fence: true,
            timeout_ms: None,
            renewal: false,
            switch: false,
        };
        let call = locks::acquire_command(&def, &acquire);
        let id = self.shared.next_id();
        let at_ms = self.shared.elapsed_ms();
        let incarnation = self.shared.incarnation(node);
        let Some(client) = self.conn(node) else {
            return;
        };
        let client_id = client.id;
        let lo = wall_us();
        let sent = client.pipeline(&[cmd(&["MULTI"]), call.clone()], Duration::from_secs(5));
        let (_, closed) = client.half_close(Duration::from_secs(5));
        self.forget(node);
        let mut op = Op::new(Actor::Worker(self.id), What::Acquire(acquire), call);
        op.id = id;
        op.node = Some(node);
        op.incarnation = incarnation;
        op.at_ms = at_ms;
        op.done_ms = self.shared.elapsed_ms();
        op.lo = Some(lo);
        op.hi = Some(wall_us());
        op.client = client_id;
        op.discarded = sent.is_ok() && closed;
        op.left = Some(Left::Closed);
        op.outcome = Outcome::Unknown("closed inside MULTI, before EXEC".into());
        self.record(op);
        self.stale.push((index, token, mode));
        self.probe_after_leaving(node, &def.name, id);
    }
}
