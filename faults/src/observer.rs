//! The observer, on the admin path no partition cuts: every 100 ms the role of every server
//! (the spans in which each was a primary are the timelines the checkers compare holds on),
//! every process's liveness (a process that exits on its own has crashed), the waiters the
//! servers still block past their deadline, and who holds each lock key.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::history::{wall_us, Actor, NodeId, Op, Outcome, Violation, What};
use crate::locks;
use crate::shared::{lock, RoleSpan, Shared};
use crate::wire::{cmd, time_us, Client, Reply, ReplyExt};

/// How long past its deadline a waiter the server still blocks is a finding (seen so twice).
const OVERDUE_MS: i64 = 1500;

pub fn run(shared: &Shared) {
    let mut clients: BTreeMap<NodeId, Client> = BTreeMap::new();
    let mut current: BTreeMap<NodeId, RoleSpan> = BTreeMap::new();
    let mut crashed: Vec<bool> = vec![false; shared.nodes.len()];
    let mut crashed_sentinels: Vec<bool> = vec![false; shared.sentinels.len()];
    let mut last_probe = Instant::now();
    let mut last_watch = Instant::now();
    while !shared.stopping() {
        for node in 0..shared.nodes.len() {
            let incarnation = shared.incarnation(node);
            let role = role_of(shared, &mut clients, node);
            let Some((primary, lo, hi)) = role else {
                if let Some(span) = current.remove(&node) {
                    lock(&shared.roles).push(span);
                }
                continue;
            };
            match current.get_mut(&node) {
                Some(span) if span.primary == primary && span.incarnation == incarnation => {
                    span.to_us = hi
                }
                _ => {
                    if let Some(span) = current.remove(&node) {
                        lock(&shared.roles).push(span);
                    }
                    current.insert(
                        node,
                        RoleSpan {
                            node,
                            incarnation,
                            primary,
                            from_us: lo,
                            to_us: hi,
                        },
                    );
                }
            }
        }
        crashes(shared, &mut crashed, &mut crashed_sentinels);
        if last_watch.elapsed() > Duration::from_millis(300) {
            last_watch = Instant::now();
            watch_waiters(shared, &mut clients);
        }
        if last_probe.elapsed() > Duration::from_millis(250) {
            last_probe = Instant::now();
            probe_locks(shared, &mut clients, &current);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    lock(&shared.roles).extend(current.into_values());
}

fn client<'c>(
    shared: &Shared,
    clients: &'c mut BTreeMap<NodeId, Client>,
    node: NodeId,
) -> Option<&'c mut Client> {
    if let std::collections::btree_map::Entry::Vacant(entry) = clients.entry(node) {
        entry.insert(Client::connect(shared.addr(node), Duration::from_millis(300)).ok()?);
    }
    clients.get_mut(&node)
}

/// Whether `node` is a primary, between which two readings of its clock.
fn role_of(
    shared: &Shared,
    clients: &mut BTreeMap<NodeId, Client>,
    node: NodeId,
) -> Option<(bool, i64, i64)> {
    let client = client(shared, clients, node)?;
    let replies = client.pipeline(
        &[cmd(&["TIME"]), cmd(&["ROLE"]), cmd(&["TIME"])],
        Duration::from_millis(500),
    );
    match replies {
        Ok(replies) => {
            let lo = time_us(&replies[0])?;
            let hi = time_us(&replies[2])?;
            let role = replies[1].items()?.first()?.as_text()?;
            Some((role == "master", lo, hi))
        }
        Err(_) => {
            clients.remove(&node);
            None
        }
    }
}

fn crashes(shared: &Shared, crashed: &mut [bool], crashed_sentinels: &mut [bool]) {
    let mut procs = lock(&shared.procs);
    let mut found = Vec::new();
    for (n, proc) in procs.nodes.iter_mut().enumerate() {
        if crashed[n] {
            continue;
        }
        let exited = proc.crashed();
        let logged = proc.log_shows_crash();
        if exited.is_some() || logged.is_some() {
            crashed[n] = true;
            found.push(format!(
                "{} ({:?}): {}; its log from there:\n{}",
                proc.spec.name,
                exited,
                logged.unwrap_or_else(|| "exited".into()),
                proc.crash_report(60)
            ));
        }
    }
    for (n, proc) in procs.sentinels.iter_mut().enumerate() {
        if !crashed_sentinels[n] && proc.crashed().is_some() {
            crashed_sentinels[n] = true;
            found.push(format!(
                "{} exited; its log ends:\n{}",
                proc.spec.name,
                proc.log_tail(15)
            ));
        }
    }
    drop(procs);
    for message in found {
        shared.found(Violation {
            checker: "crash",
            message,
            ops: Vec::new(),
            at_ms: shared.elapsed_ms(),
        });
    }
}

/// A waiter the server still blocks well past its deadline, seen so in two readings one after
/// the other (so the server went through its loop, where it times waiters out, in between).
fn watch_waiters(shared: &Shared, clients: &mut BTreeMap<NodeId, Client>) {
    let now = wall_us();
    let overdue: Vec<(usize, NodeId, i64, i64, u64)> = lock(&shared.registry)
        .flights
        .values()
        .filter(|f| f.left.is_none())
        .filter_map(|f| {
            let deadline = f.deadline_us?;
            (now > deadline + OVERDUE_MS * 1000)
                .then_some((f.worker, f.node, f.client?, deadline, f.op))
        })
        .collect();
    for (worker, node, id, deadline, op) in overdue {
        let Some(client) = client(shared, clients, node) else {
            continue;
        };
        let ask = [
            cmd(&["TIME"]),
            cmd(&["CLIENT", "LIST", "ID", &id.to_string()]),
        ];
        let Ok(replies) = client.pipeline(&ask, Duration::from_millis(500)) else {
            clients.remove(&node);
            continue;
        };
        let server_now = time_us(&replies[0]).unwrap_or(now);
        let listed = replies[1].as_text().unwrap_or_default();
        let blocked = listed
            .split_whitespace()
            .any(|field| field.starts_with("flags=") && field.contains('b'));
        if !blocked || server_now <= deadline + OVERDUE_MS * 1000 {
            continue;
        }
        let mut registry = lock(&shared.registry);
        let Some(flight) = registry.flights.get_mut(&worker).filter(|f| f.op == op) else {
            continue;
        };
        if !flight.overdue {
            flight.overdue = true;
            continue;
        }
        flight.overdue = false;
        drop(registry);
        shared.found(Violation {
            checker: "timeout",
            message: format!(
                "worker {worker}'s wait (client {id}) is still blocked {} ms past its deadline on the server's clock: {}",
                (server_now - deadline) / 1000,
                listed.trim()
            ),
            ops: vec![op],
            at_ms: shared.elapsed_ms(),
        });
    }
}

/// Who holds each lock key, on every node that is a primary now.
fn probe_locks(
    shared: &Shared,
    clients: &mut BTreeMap<NodeId, Client>,
    current: &BTreeMap<NodeId, crate::shared::RoleSpan>,
) {
    let primaries: Vec<NodeId> = current
        .values()
        .filter(|s| s.primary)
        .map(|s| s.node)
        .collect();
    for node in primaries {
        for def in &shared.locks {
            let Some(client) = client(shared, clients, node) else {
                break;
            };
            let commands = locks::probe(&def.name);
            let Ok(replies) = client.pipeline(&commands, Duration::from_millis(500)) else {
                clients.remove(&node);
                break;
            };
            // A key another node serves (MOVED) tells nothing.
            if replies[1..4].iter().any(|r| {
                r.error()
                    .is_some_and(|e| e.starts_with("MOVED") || e.starts_with("ASK"))
            }) {
                continue;
            }
            let mut op = Op::new(
                Actor::Observer,
                What::Probe {
                    key: def.name.clone(),
                },
                commands[2].clone(),
            );
            op.id = shared.next_id();
            op.node = Some(node);
            op.incarnation = shared.incarnation(node);
            op.lo = time_us(&replies[0]);
            op.hi = replies.last().and_then(time_us);
            op.pre = replies[1..4].to_vec();
            op.at_ms = shared.elapsed_ms();
            op.done_ms = op.at_ms;
            op.outcome = Outcome::Answered(Reply::Status("OK".into()));
            shared.record(op);
        }
    }
}
