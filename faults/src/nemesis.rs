//! The nemesis: faults at seeded moments, one after another, each picked from what the
//! campaign is doing then (a waiter in line, a holder, the primary of the moment). Its plan
//! (when, and which kind) is fixed by its seed; its targets are drawn from its own stream when
//! it strikes. Every fault it strikes is recorded with its start and end; a fault that finds no
//! target (no waiter in line, say) is skipped and not counted.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use goblin_core::fence;

use crate::history::{
    wall_us, Actor, Fault, FaultKind, Left, Mode, NodeId, Op, Outcome, Release, What,
};
use crate::locks::{self, Kind};
use crate::net::Host;
use crate::procs;
use crate::rng::Rng;
use crate::shared::{lock, Holding, Shared};
use crate::topology::{self, Shape, DOWN_AFTER_MS, MASTER};
use crate::wire::{cmd, time_us, Client, Command, Reply, ReplyExt};

/// What a fault struck: the node, the keys it wrote by hand (`None`: every key), what it did.
type Struck = (Option<NodeId>, Option<Vec<Vec<u8>>>, String);

/// A fault of the plan: its nominal moment and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    pub at_ms: u64,
    pub kind: FaultKind,
}

/// What the nemesis may strike in a phase.
pub struct Arsenal {
    pub shape: Shape,
    pub partitions: bool,
    pub delay: bool,
    pub atomic_migration: bool,
    /// Only these kinds, if given.
    pub only: Option<Vec<FaultKind>>,
}

impl Arsenal {
    fn weights(&self) -> Vec<(FaultKind, u64)> {
        use FaultKind::*;
        let mut kinds = vec![
            (KillAsGranted, 12),
            (CloseWaiter, 6),
            (CloseMidCall, 2),
            (CloseInMulti, 4),
            (ClientKill, 5),
            (ClientUnblock, 4),
            (ClientPause, 3),
            (SleepRelease, 7),
            (Freeze, 3),
            (KillRestartAof, 3),
            (KillRestartRdb, 2),
            (DebugSleep, 3),
            (ModuleUnload, 2),
            (OutOfMemory, 3),
            (ForeignType, 12),
            (Delete, 3),
            (Expire, 3),
            (Rename, 2),
            (Flush, 1),
        ];
        match self.shape {
            Shape::Sentinel => {
                kinds.push((SentinelFailover, 3));
                if self.partitions {
                    kinds.push((Partition, 4));
                }
                if self.delay {
                    kinds.push((Delay, 2));
                }
            }
            Shape::Cluster => {
                kinds.push((ClusterFailover, 4));
                kinds.push((SlotMigration, 4));
                if self.atomic_migration {
                    kinds.push((AtomicSlotMigration, 4));
                }
            }
        }
        if let Some(only) = &self.only {
            kinds.retain(|(kind, _)| only.contains(kind));
        }
        kinds
    }

    /// The plan for `duration_ms`: a fault every 0.3 to 2 s.
    pub fn plan(&self, seed: u64, duration_ms: u64) -> Vec<Planned> {
        let mut rng = Rng::stream(seed, 7);
        let weights = self.weights();
        if weights.is_empty() {
            return Vec::new();
        }
        let counts: Vec<u64> = weights.iter().map(|(_, w)| *w).collect();
        let mut at_ms = 1500 + rng.below(1000);
        let mut plan = Vec::new();
        while at_ms < duration_ms {
            let kind = weights[rng.weighted(&counts)].0;
            plan.push(Planned { at_ms, kind });
            at_ms += 300 + rng.below(1700);
        }
        plan
    }
}

pub struct Nemesis<'a> {
    shared: &'a Shared,
    rng: Rng,
    pub module: PathBuf,
    /// Node ids on a cluster (CLUSTER MYID), by node.
    ids: BTreeMap<NodeId, String>,
}

fn within() -> Duration {
    Duration::from_secs(5)
}

fn text(n: i64) -> Vec<u8> {
    n.to_string().into_bytes()
}

impl<'a> Nemesis<'a> {
    pub fn new(shared: &'a Shared, module: PathBuf) -> Nemesis<'a> {
        Nemesis {
            shared,
            rng: Rng::stream(shared.seed, 8),
            module,
            ids: BTreeMap::new(),
        }
    }

    /// Strikes the plan, each fault at its moment or when the one before it is over.
    pub fn run(&mut self, plan: &[Planned]) {
        for planned in plan {
            while self.shared.elapsed_ms() < planned.at_ms {
                if self.shared.stopping() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            if self.shared.stopping() {
                return;
            }
            let start_us = wall_us();
            let started_ms = self.shared.elapsed_ms();
            let outcome = self.strike(planned.kind);
            if let Some((node, keys, detail)) = outcome {
                self.shared.fault(Fault {
                    kind: planned.kind,
                    at_ms: started_ms,
                    start_us,
                    end_us: wall_us(),
                    node,
                    keys,
                    detail,
                });
            }
        }
    }

    fn admin(&self, node: NodeId) -> Option<Client> {
        Client::connect(self.shared.addr(node), Duration::from_millis(800)).ok()
    }

    /// Whether `node` holds no client for a pause. CLIENT UNBLOCK reaching a client that a
    /// pause holds crashes Redis 7.0 by itself, Goblin loaded or not ("Unknown btype in
    /// replyToBlockedClientTimedOut()"; faults/tests/server_bugs.rs), so the nemesis unblocks
    /// a waiter only once the server has let every held client go. The pause's end is the
    /// server's to notice (on its next cron, up to 100 ms late): only its answer tells.
    fn unpaused(&self, node: NodeId) -> bool {
        no_pause_in_force(self.shared.addr(node), Duration::from_secs(2))
    }

    /// The primary as the Sentinels say (the admin reaches them all), or the owner of a key's
    /// slot on a cluster.
    fn primary_for(&mut self, key: &[u8]) -> Option<NodeId> {
        match self.shared.shape {
            Shape::Sentinel => self.sentinel_primary(),
            Shape::Cluster => self.slot_owner(topology::slot(key)),
        }
    }

    pub fn sentinel_primary(&self) -> Option<NodeId> {
        let mut votes: BTreeMap<NodeId, usize> = BTreeMap::new();
        for addr in &self.shared.sentinels {
            let Ok(mut client) = Client::connect(*addr, Duration::from_millis(400)) else {
                continue;
            };
            let Ok(reply) = client.call(
                &cmd(&["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER]),
                Duration::from_secs(1),
            ) else {
                continue;
            };
            let items = reply.items().unwrap_or(&[]);
            let ip = items.first().and_then(ReplyExt::as_text);
            let port = items.get(1).and_then(ReplyExt::as_int);
            if let (Some(ip), Some(port)) = (ip, port) {
                if let Some(node) = format!("{ip}:{port}")
                    .parse()
                    .ok()
                    .and_then(|a| self.shared.node_of(a))
                {
                    *votes.entry(node).or_default() += 1;
                }
            }
        }
        votes
            .into_iter()
            .max_by_key(|(_, n)| *n)
            .map(|(node, _)| node)
    }

    fn slot_owner(&self, slot: u16) -> Option<NodeId> {
        for node in 0..self.shared.nodes.len() {
            let Some(mut client) = self.admin(node) else {
                continue;
            };
            let Ok(reply) = client.call(&cmd(&["CLUSTER", "SLOTS"]), within()) else {
                continue;
            };
            for (first, last, addr) in topology::slot_owners(&reply) {
                if (first..=last).contains(&slot) {
                    return self.shared.node_of(addr);
                }
            }
        }
        None
    }

    fn cluster_id(&mut self, node: NodeId) -> Option<String> {
        if let Some(id) = self.ids.get(&node) {
            return Some(id.clone());
        }
        let id = self
            .admin(node)?
            .call(&cmd(&["CLUSTER", "MYID"]), within())
            .ok()?
            .as_text()?;
        self.ids.insert(node, id.clone());
        Some(id)
    }

    fn record(
        &self,
        node: Option<NodeId>,
        what: What,
        command: Command,
        lo: Option<i64>,
        hi: Option<i64>,
        outcome: Outcome,
    ) -> u64 {
        let mut op = Op::new(Actor::Nemesis, what, command);
        op.id = self.shared.next_id();
        op.node = node;
        op.incarnation = node.map_or(0, |n| self.shared.incarnation(n));
        op.lo = lo;
        op.hi = hi;
        op.at_ms = self.shared.elapsed_ms();
        op.done_ms = op.at_ms;
        op.outcome = outcome;
        self.shared.record(op)
    }

    /// Two probes of `key` on `node`, one after the other.
    fn probe_twice(&self, node: NodeId, key: &[u8]) {
        let Some(mut client) = self.admin(node) else {
            return;
        };
        for round in 0..2 {
            std::thread::sleep(Duration::from_millis(if round == 0 { 20 } else { 30 }));
            let commands = locks::probe(key);
            let Ok(replies) = client.pipeline(&commands, within()) else {
                return;
            };
            let mut op = Op::new(
                Actor::Nemesis,
                What::Probe { key: key.to_vec() },
                commands[2].clone(),
            );
            op.id = self.shared.next_id();
            op.node = Some(node);
            op.incarnation = self.shared.incarnation(node);
            op.lo = replies.first().and_then(time_us);
            op.hi = replies.last().and_then(time_us);
            op.pre = replies[1..4].to_vec();
            op.at_ms = self.shared.elapsed_ms();
            op.done_ms = op.at_ms;
            op.outcome = Outcome::Answered(Reply::Status("OK".into()));
            self.shared.record(op);
        }
    }

    /// A waiter in line (a blocking acquire on the wire) and a holder of the same key on the
    /// same node, other than it.
    fn waiter_and_holder(&mut self) -> Option<(usize, i64, Holding)> {
        let registry = lock(&self.shared.registry);
        let mut pairs = Vec::new();
        for flight in registry.flights.values() {
            if flight.deadline_us.is_none() || flight.left.is_some() {
                continue;
            }
            let Some(client) = flight.client else {
                continue;
            };
            for hold in &registry.holds {
                if hold.key == flight.key
                    && hold.node == flight.node
                    && hold.worker != flight.worker
                {
                    pairs.push((flight.worker, client, hold.clone()));
                }
            }
        }
        drop(registry);
        let pick = self.rng.below(pairs.len() as u64) as usize;
        pairs.into_iter().nth(pick)
    }

    /// A holder's release the nemesis sent while a waiter left: the hold is over in the
    /// registry, the call goes into the history (over `span`, the clock read around it), and the
    /// key is probed twice for a lease left in the departed waiter's name.
    fn released(
        &self,
        hold: &Holding,
        release: Release,
        command: Command,
        span: (Option<i64>, Option<i64>),
        outcome: Outcome,
    ) {
        lock(&self.shared.registry)
            .holds
            .retain(|h| !(h.key == hold.key && h.token == hold.token));
        let (lo, hi) = span;
        self.record(
            Some(hold.node),
            What::Release(release),
            command,
            lo,
            hi,
            outcome,
        );
        self.probe_twice(hold.node, &hold.key);
    }

    fn release_of(hold: &Holding) -> (Release, Command) {
        let release = Release {
            key: hold.key.clone(),
            token: hold.token.clone(),
            mode: hold.mode,
        };
        let by = match hold.mode {
            Mode::Read | Mode::Write => locks::ReleaseBy::Rwunlock,
            _ => locks::ReleaseBy::Cad,
        };
        let command = locks::release_command(&release, by);
        (release, command)
    }

    fn mark_left(&self, worker: usize, how: Left) -> Option<std::net::TcpStream> {
        let mut registry = lock(&self.shared.registry);
        let flight = registry.flights.get_mut(&worker)?;
        flight.left = Some(how);
        flight.handle.as_ref().and_then(|h| h.try_clone().ok())
    }

    /// Strikes one fault: the node it struck, the keys it wrote by hand, what it did.
    fn strike(&mut self, kind: FaultKind) -> Option<Struck> {
        use FaultKind::*;
        match kind {
            KillAsGranted => self.kill_as_granted(),
            SleepRelease => self.sleep_release_close(),
            CloseWaiter | CloseMidCall => {
                let registry = lock(&self.shared.registry);
                let candidates: Vec<usize> = registry
                    .flights
                    .values()
                    .filter(|f| {
                        f.left.is_none() && (f.deadline_us.is_some() == (kind == CloseWaiter))
                    })
                    .map(|f| f.worker)
                    .collect();
                drop(registry);
                let worker = *self.rng.pick(&candidates)?;
                let handle = self.mark_left(worker, Left::Closed)?;
                let _ = handle.shutdown(std::net::Shutdown::Write);
                Some((
                    None,
                    Some(Vec::new()),
                    format!("worker {worker}'s connection closed"),
                ))
            }
            CloseInMulti => {
                let workers: Vec<usize> =
                    lock(&self.shared.registry).conns.keys().copied().collect();
                let worker = *self.rng.pick(&workers)?;
                lock(&self.shared.registry).drop_in_multi.insert(worker);
                Some((
                    None,
                    Some(Vec::new()),
                    format!("worker {worker}: a MULTI closed before EXEC"),
                ))
            }
            ClientKill => {
                let conns: Vec<(usize, NodeId, i64)> = lock(&self.shared.registry)
                    .conns
                    .iter()
                    .map(|(w, (n, id, _))| (*w, *n, *id))
                    .collect();
                let (worker, node, id) = *self.rng.pick(&conns)?;
                self.mark_left(worker, Left::Killed);
                let reply = self
                    .admin(node)?
                    .call(&cmd(&["CLIENT", "KILL", "ID", &id.to_string()]), within())
                    .ok();
                Some((
                    Some(node),
                    Some(Vec::new()),
                    format!("CLIENT KILL ID {id} (worker {worker}): {reply:?}"),
                ))
            }
            ClientUnblock => {
                let flights: Vec<(usize, NodeId, i64)> = lock(&self.shared.registry)
                    .flights
                    .values()
                    .filter(|f| f.deadline_us.is_some() && f.left.is_none())
                    .filter_map(|f| Some((f.worker, f.node, f.client?)))
                    .collect();
                let (worker, node, id) = *self.rng.pick(&flights)?;
                if !self.unpaused(node) {
                    return None;
                }
                let how = if self.rng.chance(50) {
                    "TIMEOUT"
                } else {
                    "ERROR"
                };
                self.mark_left(worker, Left::Unblocked);
                let reply = self
                    .admin(node)?
                    .call(&cmd(&["CLIENT", "UNBLOCK", &id.to_string(), how]), within())
                    .ok();
                Some((
                    Some(node),
                    Some(Vec::new()),
                    format!("CLIENT UNBLOCK {id} {how}: {reply:?}"),
                ))
            }
            ClientPause => {
                let node = self.any_primary()?;
                let ms = self.rng.range(100, 800);
                let how = if self.rng.chance(50) { "WRITE" } else { "ALL" };
                let hold = self.shared.writes_held(Some(node));
                let paused = self
                    .admin(node)
                    .and_then(|mut admin| {
                        admin
                            .call(&cmd(&["CLIENT", "PAUSE", &ms.to_string(), how]), within())
                            .ok()
                    })
                    .is_some();
                if paused {
                    std::thread::sleep(Duration::from_millis(ms as u64 + 20));
                }
                self.shared.writes_released(hold);
                if !paused {
                    return None;
                }
                Some((
                    Some(node),
                    Some(Vec::new()),
                    format!("CLIENT PAUSE {ms} {how}"),
                ))
            }
            Freeze => {
                let node = self.victim()?;
                let ms = self.rng.range(200, 3500) as u64;
                lock(&self.shared.procs)
                    .nodes
                    .get_mut(node)?
                    .freeze()
                    .ok()?;
                self.shared.nap(Duration::from_millis(ms));
                let _ = lock(&self.shared.procs).nodes.get_mut(node)?.thaw();
                Some((Some(node), None, format!("SIGSTOP for {ms} ms")))
            }
            KillRestartAof | KillRestartRdb => self.kill_restart(kind == KillRestartRdb),
            DebugSleep => {
                let node = self.victim()?;
                let seconds = format!("{:.2}", self.rng.range(10, 80) as f64 / 100.0);
                let reply = self
                    .admin(node)?
                    .call(&cmd(&["DEBUG", "SLEEP", &seconds]), Duration::from_secs(10))
                    .ok();
                Some((
                    Some(node),
                    Some(Vec::new()),
                    format!("DEBUG SLEEP {seconds}: {reply:?}"),
                ))
            }
            ModuleUnload => self.module_unload(),
            OutOfMemory => self.out_of_memory(),
            SentinelFailover => self.sentinel_failover(),
            Partition => self.partition(),
            Delay => self.delay(),
            ClusterFailover => self.cluster_failover(),
            AtomicSlotMigration => {
                // The handover holds the source's writes back for a moment.
                let hold = self.shared.writes_held(None);
                let struck = self.migrate(true);
                self.shared.writes_released(hold);
                struck
            }
            SlotMigration => self.migrate(false),
            ForeignType | Delete | Expire | Rename | Flush => self.by_hand(kind),
        }
    }

    fn any_primary(&mut self) -> Option<NodeId> {
        let key = self.shared.locks.first()?.name.clone();
        let keys = self.shared.goblin_keys.clone();
        let key = self.rng.pick(&keys).cloned().unwrap_or(key);
        self.primary_for(&key)
    }

    /// A node to pause or kill: the primary more often than not.
    fn victim(&mut self) -> Option<NodeId> {
        if self.rng.chance(65) {
            self.any_primary()
        } else {
            Some(self.rng.below(self.shared.nodes.len() as u64) as usize)
        }
    }

    fn kill_as_granted(&mut self) -> Option<Struck> {
        let (waiter, client, hold) = self.waiter_and_holder()?;
        let node = hold.node;
        let (release, release_command) = Self::release_of(&hold);
        let mut admin = self.admin(node)?;
        self.mark_left(waiter, Left::KilledAsGranted)?;
        let commands = vec![
            cmd(&["TIME"]),
            cmd(&["MULTI"]),
            release_command.clone(),
            cmd(&["CLIENT", "KILL", "ID", &client.to_string()]),
            cmd(&["EXEC"]),
            cmd(&["TIME"]),
        ];
        let replies = admin.pipeline(&commands, within());
        let replies = match replies {
            Ok(replies) => replies,
            Err(broken) => broken.replies,
        };
        let exec = replies.get(4).cloned();
        let released = exec
            .as_ref()
            .and_then(|e| e.items())
            .and_then(|items| items.first())
            .cloned();
        let outcome = match released {
            Some(reply) => Outcome::Answered(reply),
            None => Outcome::Unknown(format!("EXEC gave {exec:?}")),
        };
        let span = (
            replies.first().and_then(time_us),
            replies.get(5).and_then(time_us),
        );
        self.released(&hold, release, release_command, span, outcome);
        Some((
            Some(node),
            Some(Vec::new()),
            format!(
                "MULTI / release {} / CLIENT KILL ID {client} (worker {waiter}, waiting on {}) / EXEC: {exec:?}",
                String::from_utf8_lossy(&hold.token),
                String::from_utf8_lossy(&hold.key)
            ),
        ))
    }

    /// The server held by DEBUG SLEEP while a holder's release arrives and a waiter's socket
    /// closes: after the sleep, both in one turn of its loop.
    fn sleep_release_close(&mut self) -> Option<Struck> {
        let (waiter, _, hold) = self.waiter_and_holder()?;
        let node = hold.node;
        let (release, release_command) = Self::release_of(&hold);
        let mut sleeper = self.admin(node)?;
        let mut releaser = self.admin(node)?;
        let seconds = format!("{:.2}", self.rng.range(15, 40) as f64 / 100.0);
        sleeper.send(&[cmd(&["DEBUG", "SLEEP", &seconds])]).ok()?;
        std::thread::sleep(Duration::from_millis(60));
        let lo = wall_us();
        let _ = releaser.send(&[release_command.clone(), cmd(&["TIME"])]);
        if let Some(handle) = self.mark_left(waiter, Left::Closed) {
            let _ = handle.shutdown(std::net::Shutdown::Write);
        }
        let slept = sleeper.read_replies(1, Duration::from_secs(10));
        let replies = releaser.read_replies(2, Duration::from_secs(10));
        let replies = match replies {
            Ok(r) => r,
            Err(b) => b.replies,
        };
        let outcome = match replies.first() {
            Some(reply) => Outcome::Answered(reply.clone()),
            None => Outcome::Unknown("no reply".into()),
        };
        let span = (Some(lo), replies.get(1).and_then(time_us));
        self.released(&hold, release, release_command, span, outcome);
        Some((
            Some(node),
            Some(Vec::new()),
            format!(
                "DEBUG SLEEP {seconds} ({:?}); meanwhile {} released and worker {waiter}'s socket closed",
                slept.ok(),
                String::from_utf8_lossy(&hold.token)
            ),
        ))
    }

    fn kill_restart(&mut self, from_rdb: bool) -> Option<Struck> {
        let node = self.victim()?;
        if from_rdb {
            self.admin(node)?
                .call(&cmd(&["SAVE"]), Duration::from_secs(20))
                .ok()?;
            self.shared
                .nap(Duration::from_millis(self.rng.range(100, 1200) as u64));
        }
        let dir = {
            let mut procs = lock(&self.shared.procs);
            let proc = procs.nodes.get_mut(node)?;
            proc.kill();
            proc.spec.dir.clone()
        };
        let down_ms = self.rng.range(0, 2500) as u64;
        std::thread::sleep(Duration::from_millis(down_ms));
        // It comes back in the role its config file says: the Sentinels rewrite it as they
        // reconfigure it, as they would a server's own.
        let mut extra: Vec<String> = Vec::new();
        if from_rdb {
            let _ = std::fs::remove_dir_all(dir.join("appendonlydir"));
            extra.extend(["--appendonly".into(), "no".into()]);
        }
        let started = {
            let mut procs = lock(&self.shared.procs);
            let proc = procs.nodes.get_mut(node)?;
            proc.start(&extra, Duration::from_secs(30))
        };
        if let Err(error) = started {
            self.shared.found(crate::history::Violation {
                checker: "crash",
                message: format!(
                    "{} did not start again: {error}",
                    self.shared.nodes[node].name
                ),
                ops: Vec::new(),
                at_ms: self.shared.elapsed_ms(),
            });
            return Some((
                Some(node),
                None,
                format!("kill -9; the restart failed: {error}"),
            ));
        }
        if from_rdb {
            if let Some(mut admin) = self.admin(node) {
                let _ = admin.call(&cmd(&["CONFIG", "SET", "appendonly", "yes"]), within());
            }
        }
        Some((
            Some(node),
            None,
            format!(
                "kill -9, down {down_ms} ms, restarted from its {}",
                if from_rdb { "RDB" } else { "AOF" }
            ),
        ))
    }

    fn module_unload(&mut self) -> Option<Struck> {
        let node = self.any_primary()?;
        let mut queued = self.admin(node)?;
        let mut unloader = self.admin(node)?;
        let key = format!("{{{}unload}}n", self.shared.limits.tag);
        let _ = queued.pipeline(
            &[cmd(&["MULTI"]), cmd(&["GOBLIN.INCREX", &key, "10"])],
            within(),
        );
        let reply = unloader
            .call(&cmd(&["MODULE", "UNLOAD", "goblin"]), within())
            .ok();
        let exec = queued.call(&cmd(&["EXEC"]), within()).ok();
        let listed = unloader
            .call(&cmd(&["MODULE", "LIST"]), within())
            .ok()
            .map(|r| mentions(&r, "goblin"));
        let refused = matches!(&reply, Some(Reply::Error(_)));
        if !refused || listed == Some(false) {
            self.shared.found(crate::history::Violation {
                checker: "crash",
                message: format!("MODULE UNLOAD goblin with a call queued in MULTI answered {reply:?}; the module is listed: {listed:?}"),
                ops: Vec::new(),
                at_ms: self.shared.elapsed_ms(),
            });
            if listed == Some(false) {
                let path = self.module.display().to_string();
                let _ = unloader.call(&cmd(&["MODULE", "LOAD", &path]), within());
            }
        }
        Some((
            Some(node),
            Some(Vec::new()),
            format!("MODULE UNLOAD: {reply:?}; EXEC: {exec:?}"),
        ))
    }

    fn out_of_memory(&mut self) -> Option<Struck> {
        let node = self.any_primary()?;
        let mut admin = self.admin(node)?;
        let used: i64 = procs::info_field(&mut admin, "memory", "used_memory")?
            .parse()
            .ok()?;
        let limit = (used / 2).max(1);
        admin
            .call(
                &cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()]),
                within(),
            )
            .ok()?;
        let ms = self.rng.range(300, 1500) as u64;
        std::thread::sleep(Duration::from_millis(ms));
        let restored = admin.call(&cmd(&["CONFIG", "SET", "maxmemory", "0"]), within());
        if restored.is_err() {
            // Retried by a fresh connection: the memory must come back.
            let _ = self
                .admin(node)?
                .call(&cmd(&["CONFIG", "SET", "maxmemory", "0"]), within());
        }
        Some((
            Some(node),
            Some(Vec::new()),
            format!("maxmemory {limit} (used {used}) for {ms} ms"),
        ))
    }

    /// Waits until the Sentinels name a primary other than `old` (or `within` passes).
    fn wait_new_primary(&self, old: NodeId, within: Duration) -> Option<NodeId> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline && !self.shared.stopping() {
            if let Some(primary) = self.sentinel_primary().filter(|p| *p != old) {
                return Some(primary);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    fn sentinel_failover(&mut self) -> Option<Struck> {
        let old = self.sentinel_primary()?;
        if self.rng.chance(50) {
            // The quorum's own: the primary stops answering past down-after-milliseconds.
            lock(&self.shared.procs).nodes.get_mut(old)?.freeze().ok()?;
            let new = self.wait_new_primary(old, Duration::from_millis(DOWN_AFTER_MS + 12_000));
            let _ = lock(&self.shared.procs).nodes.get_mut(old)?.thaw();
            Some((
                Some(old),
                None,
                format!("primary {old} stopped until the quorum chose {new:?}"),
            ))
        } else {
            let sentinel = self.rng.below(self.shared.sentinels.len() as u64) as usize;
            let mut client =
                Client::connect(self.shared.sentinels[sentinel], Duration::from_secs(1)).ok()?;
            let reply = client
                .call(&cmd(&["SENTINEL", "FAILOVER", MASTER]), within())
                .ok();
            let new = self.wait_new_primary(old, Duration::from_secs(12));
            Some((
                Some(old),
                None,
                format!("SENTINEL FAILOVER: {reply:?}; new primary {new:?}"),
            ))
        }
    }

    fn partition(&mut self) -> Option<Struck> {
        let primary = self.sentinel_primary()?;
        let nodes = self.shared.nodes.len();
        let others: Vec<Host> = (0..nodes)
            .filter(|n| *n != primary)
            .map(Host::Node)
            .collect();
        let ms = self.rng.range(2500, 7000) as u64;
        let variant = self.rng.below(3);
        let detail = {
            let mut net = lock(&self.shared.net);
            let net = net.as_mut()?;
            match variant {
                0 => {
                    // The primary, its Sentinel and its own clients, alone.
                    let mut majority = others.clone();
                    majority.push(Host::Clients);
                    net.cut(&[Host::Node(primary)], &majority).ok()?;
                    format!("node {primary} (the primary) and its clients cut from the rest for {ms} ms")
                }
                1 => {
                    // The primary cut from its replicas and their Sentinels, not from the
                    // majority's clients.
                    net.cut(&[Host::Node(primary)], &others).ok()?;
                    format!("node {primary} (the primary) cut from its replicas for {ms} ms")
                }
                _ => {
                    let replica = *self.rng.pick(&others)?;
                    let rest: Vec<Host> = (0..nodes)
                        .map(Host::Node)
                        .filter(|h| *h != replica)
                        .chain([Host::Clients])
                        .collect();
                    net.cut(&[replica], &rest).ok()?;
                    format!("{replica:?} (a replica) cut from the rest for {ms} ms")
                }
            }
        };
        self.shared.nap(Duration::from_millis(ms));
        if let Some(net) = lock(&self.shared.net).as_mut() {
            let _ = net.heal();
        }
        Some((Some(primary), None, detail))
    }

    fn delay(&mut self) -> Option<Struck> {
        let primary = self.sentinel_primary()?;
        let ms = self.rng.range(5, 60) as u64;
        let hold = self.rng.range(1000, 4000) as u64;
        {
            let mut net = lock(&self.shared.net);
            net.as_mut()?.delay(Host::Node(primary), ms, ms / 2).ok()?;
        }
        self.shared.nap(Duration::from_millis(hold));
        if let Some(net) = lock(&self.shared.net).as_mut() {
            net.undelay();
        }
        Some((
            Some(primary),
            Some(Vec::new()),
            format!("{ms} ms of delay on the primary for {hold} ms"),
        ))
    }

    fn cluster_failover(&mut self) -> Option<Struck> {
        let keys = self.shared.goblin_keys.clone();
        let key = self.rng.pick(&keys)?.clone();
        let primary = self.primary_for(&key)?;
        let id = self.cluster_id(primary)?;
        // Its replica: the node that says it replicates it.
        let mut replica = None;
        for node in 0..self.shared.nodes.len() {
            if node == primary {
                continue;
            }
            let Some(mut admin) = self.admin(node) else {
                continue;
            };
            let Some(text) = admin
                .call(&cmd(&["CLUSTER", "NODES"]), within())
                .ok()
                .and_then(|r| r.as_text())
            else {
                continue;
            };
            let mine = text.lines().find(|line| line.contains("myself"));
            if mine.is_some_and(|line| line.split_whitespace().nth(3) == Some(id.as_str())) {
                replica = Some(node);
            }
        }
        let replica = replica?;
        if self.rng.chance(50) {
            // A manual failover holds the primary's writes back until its replica has them.
            let mut admin = self.admin(replica)?;
            let hold = self.shared.writes_held(Some(primary));
            let reply = admin.call(&cmd(&["CLUSTER", "FAILOVER"]), within()).ok();
            self.shared.nap(Duration::from_secs(3));
            self.shared.writes_released(hold);
            Some((
                Some(primary),
                None,
                format!("CLUSTER FAILOVER on node {replica}: {reply:?}"),
            ))
        } else {
            {
                let mut procs = lock(&self.shared.procs);
                procs.nodes.get_mut(primary)?.kill();
            }
            // The cluster's own failover, after cluster-node-timeout.
            let promoted = procs::wait_for(Duration::from_secs(20), || {
                let role = self.admin(replica)?.call(&cmd(&["ROLE"]), within()).ok()?;
                let role = role.items()?.first()?.as_text()?;
                (role == "master").then_some(())
            });
            let started = {
                let mut procs = lock(&self.shared.procs);
                procs
                    .nodes
                    .get_mut(primary)?
                    .start(&[], Duration::from_secs(30))
            };
            if let Err(error) = started {
                self.shared.found(crate::history::Violation {
                    checker: "crash",
                    message: format!("node {primary} did not start again: {error}"),
                    ops: Vec::new(),
                    at_ms: self.shared.elapsed_ms(),
                });
            }
            Some((
                Some(primary),
                None,
                format!(
                    "kill -9 of primary {primary}; node {replica} promoted: {}",
                    promoted.is_some()
                ),
            ))
        }
    }

    fn migrate(&mut self, atomic: bool) -> Option<Struck> {
        let keys = self.shared.goblin_keys.clone();
        let key = self.rng.pick(&keys)?.clone();
        let slot = topology::slot(&key);
        let source = self.slot_owner(slot)?;
        // Another primary: a node that owns some slot.
        let mut primaries = Vec::new();
        for node in 0..self.shared.nodes.len() {
            if node == source {
                continue;
            }
            let role = self
                .admin(node)
                .and_then(|mut c| c.call(&cmd(&["ROLE"]), within()).ok());
            let master = role
                .as_ref()
                .and_then(|r| r.items())
                .and_then(|i| i.first())
                .and_then(ReplyExt::as_text);
            if master.as_deref() == Some("master") {
                primaries.push(node);
            }
        }
        let target = *self.rng.pick(&primaries)?;
        let source_id = self.cluster_id(source)?;
        let target_id = self.cluster_id(target)?;
        let slot_text = slot.to_string();
        let detail = if atomic {
            let reply = self
                .admin(source)?
                .call(
                    &cmd(&[
                        "CLUSTER",
                        "MIGRATESLOTS",
                        "SLOTSRANGE",
                        &slot_text,
                        &slot_text,
                        "NODE",
                        &target_id,
                    ]),
                    within(),
                )
                .ok();
            let state = procs::wait_for(Duration::from_secs(30), || {
                let jobs = self
                    .admin(source)?
                    .call(&cmd(&["CLUSTER", "GETSLOTMIGRATIONS"]), within())
                    .ok()?;
                let job = jobs.items()?.first()?.items()?.to_vec();
                let state = job
                    .chunks(2)
                    .find(|pair| {
                        pair.first().and_then(ReplyExt::as_text).as_deref() == Some("state")
                    })?
                    .get(1)?
                    .as_text()?;
                ["success", "failed", "cancelled"]
                    .contains(&state.as_str())
                    .then_some(state)
            });
            format!(
                "slot {slot} from node {source} to node {target}, atomically: {reply:?}, {state:?}"
            )
        } else {
            let mut src = self.admin(source)?;
            let mut tgt = self.admin(target)?;
            let set = |client: &mut Client, words: &[&str]| client.call(&cmd(words), within()).ok();
            set(
                &mut tgt,
                &["CLUSTER", "SETSLOT", &slot_text, "IMPORTING", &source_id],
            );
            set(
                &mut src,
                &["CLUSTER", "SETSLOT", &slot_text, "MIGRATING", &target_id],
            );
            let addr: SocketAddr = self.shared.addr(target);
            let mut moved = 0;
            for _ in 0..100 {
                let keys = src
                    .call(
                        &cmd(&["CLUSTER", "GETKEYSINSLOT", &slot_text, "100"]),
                        within(),
                    )
                    .ok()
                    .and_then(|r| r.items().map(<[Reply]>::to_vec))
                    .unwrap_or_default();
                if keys.is_empty() {
                    break;
                }
                let mut words: Vec<Vec<u8>> = [
                    "MIGRATE",
                    &addr.ip().to_string(),
                    &addr.port().to_string(),
                    "",
                    "0",
                    "5000",
                    "KEYS",
                ]
                .iter()
                .map(|w| w.as_bytes().to_vec())
                .collect();
                words.extend(keys.iter().filter_map(|k| k.as_bytes().map(<[u8]>::to_vec)));
                moved += keys.len();
                if src.call(&words, Duration::from_secs(10)).is_err() {
                    break;
                }
                // Under load: the workers write while the keys move.
                std::thread::sleep(Duration::from_millis(self.rng.range(0, 60) as u64));
            }
            for node in 0..self.shared.nodes.len() {
                if let Some(mut client) = self.admin(node) {
                    let _ = client.call(
                        &cmd(&["CLUSTER", "SETSLOT", &slot_text, "NODE", &target_id]),
                        within(),
                    );
                }
            }
            format!("slot {slot} ({moved} keys) from node {source} to node {target} by SETSLOT and MIGRATE")
        };
        Some((Some(source), None, detail))
    }

    /// Writes by hand: another type at a name Goblin writes, DEL, PEXPIRE, RENAME, FLUSHALL.
    fn by_hand(&mut self, kind: FaultKind) -> Option<Struck> {
        let defs = self.shared.locks.clone();
        let keys = self.shared.goblin_keys.clone();
        let lock_key = self.rng.pick(&defs)?.clone();
        let (key, name) = match (kind, self.rng.below(10)) {
            (FaultKind::ForeignType, 0..=6) => {
                let name = fence::token_key(&lock_key.name, None)?;
                (lock_key.name.clone(), name)
            }
            (FaultKind::ForeignType, 7..=8) => {
                // A holder's own token key: a reader's, a lease holder's.
                let holds = lock(&self.shared.registry).holds.clone();
                let members: Vec<Holding> = holds
                    .into_iter()
                    .filter(|h| matches!(h.mode, Mode::Read | Mode::Lease))
                    .collect();
                match self.rng.pick(&members) {
                    Some(hold) => (
                        hold.key.clone(),
                        fence::token_key(&hold.key, Some(&hold.token))?,
                    ),
                    None => (
                        lock_key.name.clone(),
                        fence::token_key(&lock_key.name, None)?,
                    ),
                }
            }
            (FaultKind::Delete | FaultKind::Expire, 0..=2) => {
                let name = fence::token_key(&lock_key.name, None)?;
                (lock_key.name.clone(), name)
            }
            _ => {
                let key = self.rng.pick(&keys)?.clone();
                (key.clone(), key)
            }
        };
        let node = self.primary_for(&key)?;
        let mut admin = self.admin(node)?;
        let words: Vec<Vec<Vec<u8>>> = match kind {
            FaultKind::ForeignType => {
                let is_set = self
                    .shared
                    .lock_def(&name)
                    .is_some_and(|d| !matches!(d.kind, Kind::Token));
                let write: Vec<Vec<u8>> = match self.rng.below(4) {
                    0 if is_set => vec![b"SET".to_vec(), name.clone(), b"by-hand".to_vec()],
                    0 | 1 => vec![b"RPUSH".to_vec(), name.clone(), b"x".to_vec()],
                    2 => vec![b"HSET".to_vec(), name.clone(), b"f".to_vec(), b"v".to_vec()],
                    _ => vec![b"SADD".to_vec(), name.clone(), b"m".to_vec()],
                };
                let ttl = text(self.rng.range(2000, 6000));
                vec![
                    vec![b"DEL".to_vec(), name.clone()],
                    write,
                    vec![b"PEXPIRE".to_vec(), name.clone(), ttl],
                ]
            }
            FaultKind::Delete => vec![vec![b"DEL".to_vec(), name.clone()]],
            FaultKind::Expire => vec![vec![
                b"PEXPIRE".to_vec(),
                name.clone(),
                text(self.rng.range(1, 400)),
            ]],
            FaultKind::Rename => {
                let mut to = name.clone();
                to.extend_from_slice(b":renamed");
                vec![vec![b"RENAME".to_vec(), name.clone(), to]]
            }
            _ => vec![vec![b"FLUSHALL".to_vec()]],
        };
        let replies = admin.pipeline(&words, within()).ok();
        let touched = if kind == FaultKind::Flush {
            None
        } else {
            Some(vec![name.clone(), key])
        };
        if kind == FaultKind::Flush && self.shared.shape == Shape::Cluster {
            for other in 0..self.shared.nodes.len() {
                if let Some(mut client) = self.admin(other) {
                    let _ = client.call(&cmd(&["FLUSHALL"]), within());
                }
            }
        }
        Some((
            Some(node),
            touched,
            format!(
                "{} {:?}: {:?}",
                words
                    .iter()
                    .map(crate::wire::shown)
                    .collect::<Vec<_>>()
                    .join(" / "),
                String::from_utf8_lossy(&name),
                replies.map(|r| r.iter().map(crate::wire::brief).collect::<Vec<_>>())
            ),
        ))
    }
}

/// Whether any text in `reply` (at any depth) is `word`.
fn mentions(reply: &Reply, word: &str) -> bool {
    match reply {
        Reply::Array(items) | Reply::Set(items) => items.iter().any(|item| mentions(item, word)),
        other => other.as_text().is_some_and(|text| text == word),
    }
}

/// Whether the server at `addr` holds no client for a pause (CLIENT PAUSE, a cluster's manual
/// failover): a PUBLISH, which every pause holds back (WRITE and ALL alike), is answered
/// within `within`.
pub fn no_pause_in_force(addr: SocketAddr, within: Duration) -> bool {
    let Ok(mut admin) = Client::connect(addr, Duration::from_millis(800)) else {
        return false;
    };
    let probe = cmd(&["PUBLISH", "goblin-faults:unpaused", "1"]);
    matches!(admin.call(&probe, within), Ok(Reply::Int(_)))
}
