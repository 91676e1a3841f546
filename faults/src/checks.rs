//! The checkers: each reads the whole history of a phase (calls, probes, faults, the
//! servers' roles) and states one property. Times are the servers' clock (one clock: they all
//! run on this machine), in microseconds; a hold is counted only where the history proves it
//! (granted by then, not yet over by then), so that a slow machine never makes a finding.

use std::collections::{BTreeMap, BTreeSet};

use crate::history::{Actor, Fault, FaultKind, Mode, NodeId, Op, Outcome, Violation, What};
use crate::limits::{self, Admitted};
use crate::locks::{self, Kind, LockKeyDef, State};
use crate::shared::{RoleSpan, WriteHold};
use crate::wire::Reply;

/// What each checker checks, in one plain sentence (the report and docs/testing.md say them).
pub const STATEMENTS: &[(&str, &str)] = &[
    ("exclusion", "on one primary's timeline, no two holders of a token lock or of a writer's lease at once, no reader beside a writer, no more lease holders than the limit"),
    ("model", "every call that does not wait answers, and leaves its keys, as goblin_core decides from what the same step read before it (a limit's counts, a lock's grant, an owner-checked extend or release)"),
    ("fifo", "waiters that stay are served in the order they arrived, and nobody who does not wait is let in before them"),
    ("timeout", "a waiter that stays is answered by its timeout (the server never blocks it well past its deadline on its own clock)"),
    ("stranded", "no lease outlives a waiter that left before its reply: once the server has let it go, nothing is held in its name"),
    ("phantom", "a token whose every acquire was refused, timed out or never ran holds nothing afterwards"),
    ("internal-error", "no reply is ever ERR goblin internal error"),
("fencing", "a grant made after an earlier holder's lease was over carries a larger fencing token, on whatever server, across restarts, failovers and partitions, but where the earlier was minted ahead of its server's clock in its first fence-margin-ms (measured: the chain of docs/fencing.md); the resource that keeps the largest token never accepts a stale holder's write after its successor's"),
    ("quota", "no limit admits more than its quota per window (fixed windows) or its burst plus what time regained (GCRA), except across a failover, a restart, a partition or a write by hand, where the excess is measured"),
    ("crash", "no server exits on its own, logs a crash or a module panic, and MODULE UNLOAD is refused"),
    ("convergence", "once the faults heal, every replica holds its primary's data (DEBUG DIGEST) and expiries"),
    ("harness", "the campaign itself ran: its servers started, its threads did not fail"),
];

/// Everything a checker reads.
pub struct Input<'a> {
    pub ops: &'a [Op],
    pub faults: &'a [Fault],
    pub roles: &'a [RoleSpan],
    pub locks: &'a [LockKeyDef],
    /// The spans in which a node may have held writes back (`crate::shared::WriteHold`).
    pub holds: &'a [WriteHold],
}

/// What the quota checker measured.
#[derive(Debug, Default, Clone)]
pub struct Excess {
    /// Admissions over the quota, per cause ("failover", "partition", ...).
    pub by_cause: BTreeMap<&'static str, i64>,
    /// The largest excess seen in one window (fixed) or interval (GCRA), per cause.
    pub worst: BTreeMap<&'static str, i64>,
    /// The largest excess as a share of its quota (the window's limit, GCRA's burst), per cause.
    pub worst_share: BTreeMap<&'static str, f64>,
    /// Admitted calls in all.
    pub admitted: i64,
}

/// `fence-margin-ms`, by default, in microseconds: how far ahead of its clock a server started
/// or promoted may mint.
const MARGIN_US: i64 = 1_000_000;

/// The resource's figures.
#[derive(Debug, Default, Clone)]
pub struct Resource {
    /// Successors granted a smaller token than a predecessor's minted ahead of its clock, in a
    /// server's first fence-margin-ms, beside another primary (the chain of fencing.md).
    pub margin_inversions: usize,
    /// The most such a successor's token fell short, in milliseconds.
    pub widest_inversion_ms: i64,
    pub accepted: usize,
    pub refused: usize,
    /// Writes made after the writer's lease was over.
    pub stale: usize,
    pub stale_refused: usize,
}

pub struct Report {
    pub violations: Vec<Violation>,
    pub excess: Excess,
    pub resource: Resource,
    pub split: Split,
}

/// Holders of one lock on two primaries at once (a split brain: each primary's timeline is
/// whole, and the two overlap), measured, not judged: asynchronous replication allows it.
#[derive(Debug, Default, Clone)]
pub struct Split {
    /// Pairs of conflicting holders, each on another node, whose proven holds overlapped.
    pub pairs: usize,
    /// The longest such overlap, in milliseconds.
    pub longest_ms: i64,
}

pub fn run(input: &Input<'_>) -> Report {
    let mut violations = Vec::new();
    let epochs = Epochs::new(input.roles);
    let (exclusion, split) = exclusion(input, &epochs);
    violations.extend(exclusion);
    violations.extend(lock_steps(input));
    violations.extend(fifo(input, &epochs));
    violations.extend(stranded(input));
    violations.extend(phantom(input));
    let (fencing, resource) = fencing(input);
    violations.extend(fencing);
    let (quota, excess) = quota(input);
    violations.extend(quota);
    Report {
        violations,
        excess,
        resource,
        split,
    }
}

/// The spans in which each node was a primary: a call is on a timeline if its times fall in
/// one such span of its node and incarnation.
struct Epochs<'a> {
    roles: &'a [RoleSpan],
}

impl<'a> Epochs<'a> {
    fn new(roles: &'a [RoleSpan]) -> Epochs<'a> {
        Epochs { roles }
    }

    /// The timeline a call at `at_us` on `node` belongs to: (node, the span's start).
    fn of(&self, node: Option<NodeId>, incarnation: u32, at_us: i64) -> Option<(NodeId, i64)> {
        let node = node?;
        self.roles
            .iter()
            .find(|span| {
                span.node == node
                    && span.incarnation == incarnation
                    && span.primary
                    && span.from_us <= at_us
                    && at_us <= span.to_us
            })
            .map(|span| (node, span.from_us))
    }
}

fn key_of(op: &Op) -> Option<&[u8]> {
    op.key()
}

fn granted(op: &Op, fence: bool) -> Option<Option<i64>> {
    locks::granted(op.reply()?, fence).ok().flatten()
}

fn answered_not_granted(op: &Op, fence: bool) -> bool {
    match op.reply() {
        Some(reply) => !matches!(locks::granted(reply, fence), Ok(Some(_))),
        None => false,
    }
}

fn ms(us: i64) -> i64 {
    us.div_euclid(1000)
}

/// Faults that rewrote `key` by hand (or every key) on `node`, or lost what the node held.
fn ends_holds(fault: &Fault, key: &[u8], node: NodeId) -> bool {
    if fault.kind.by_hand() {
        return match &fault.keys {
            None => true,
            Some(keys) => keys.iter().any(|k| k == key),
        } && (fault.node == Some(node) || fault.kind == FaultKind::Flush);
    }
    false
}

/// Whether nothing held `node`'s loop up between `from` and `to` (a pause, a sleep, a stop).
fn unpaused(faults: &[Fault], node: NodeId, from: i64, to: i64) -> bool {
    !faults.iter().any(|f| {
        matches!(
            f.kind,
            FaultKind::Freeze
                | FaultKind::DebugSleep
                | FaultKind::SleepRelease
                | FaultKind::ClientPause
                | FaultKind::SentinelFailover
                | FaultKind::OutOfMemory
                | FaultKind::KillAsGranted
        ) && f.node.is_none_or(|n| n == node)
            && f.start_us <= to
            && f.end_us >= from
    })
}

/// A hold as the history proves it: granted by `start`, not over before `end`.
#[derive(Debug, Clone)]
struct Hold {
    token: Vec<u8>,
    mode: Mode,
    start: i64,
    end: i64,
    ops: Vec<u64>,
}

fn exclusion(input: &Input<'_>, epochs: &Epochs<'_>) -> (Vec<Violation>, Split) {
    let mut found = Vec::new();
    let mut split = Split::default();
    for def in input.locks {
        // The key's calls, by timeline, in the order the server ran them.
        let mut by_epoch: BTreeMap<(NodeId, i64), Vec<&Op>> = BTreeMap::new();
        for op in input.ops {
            if key_of(op) != Some(def.name.as_slice())
                || matches!(op.what, What::Probe { .. } | What::Write { .. })
            {
                continue;
            }
            let Some(at) = op.hi.or(op.lo) else {
                continue;
            };
            if let Some(epoch) = epochs.of(op.node, op.incarnation, at) {
                by_epoch.entry(epoch).or_default().push(op);
            }
        }
        let mut everywhere: Vec<(NodeId, Hold)> = Vec::new();
        for ((node, _), mut ops) in by_epoch {
            ops.sort_by_key(|op| op.hi.or(op.lo));
            let mut open: BTreeMap<Vec<u8>, Hold> = BTreeMap::new();
            let mut closed: Vec<Hold> = Vec::new();
            for op in ops {
                let (Some(lo), hi) = (op.lo, op.hi) else {
                    continue;
                };
                match &op.what {
                    What::Acquire(a) => {
                        let fence = a.fence;
                        match (&op.outcome, granted(op, fence)) {
                            (Outcome::Answered(_), Some(_)) => {
                                let Some(hi) = hi else {
                                    continue;
                                };
                                // A waiter's grant came after its arrival (`lo`), and shortly
                                // before the clock read right after its reply (`hi`), unless the
                                // server was held up in between.
                                let granted_by = if a.timeout_ms.is_some()
                                    && unpaused(input.faults, node, hi - 1_000_000, hi)
                                {
                                    lo.max(hi - 250_000)
                                } else {
                                    lo
                                };
                                let end = (ms(granted_by) + a.ms) * 1000;
                                if let Some(mut old) = open.remove(&a.token) {
                                    // Its holder again, in its mode, while its hold still ran:
                                    // one hold, its lease started over. Past its proven end, the
                                    // key may have been free in between: a new hold.
                                    if old.mode == a.mode && old.end >= lo {
                                        old.end = end;
                                        old.ops.push(op.id);
                                        open.insert(a.token.clone(), old);
                                        continue;
                                    }
                                    old.end = old.end.min(lo);
                                    closed.push(old);
                                }
                                open.insert(
                                    a.token.clone(),
                                    Hold {
                                        token: a.token.clone(),
                                        mode: a.mode,
                                        start: hi,
                                        end,
                                        ops: vec![op.id],
                                    },
                                );
                            }
                            (Outcome::Answered(_), None) => {
                                if let Some(mut old) = open.remove(&a.token) {
                                    if a.renewal {
                                        old.end = old.end.min(lo);
                                    }
                                    open.insert(a.token.clone(), old);
                                }
                            }
                            _ => {
                                if let Some(old) = open.get_mut(&a.token) {
                                    old.end =
                                        old.end.min((ms(lo) + a.ms) * 1000).min(lo.max(old.start));
                                }
                            }
                        }
                    }
                    What::Extend(e) => {
                        let done = op.reply().and_then(|r| locks::granted(r, e.fence).ok());
                        match done {
                            Some(Some(_)) => {
                                let Some(hi) = hi else {
                                    continue;
                                };
                                let replace = e.replace || e.mode == Mode::Lease;
                                match open.get_mut(&e.token) {
                                    Some(hold) => {
                                        hold.end = if replace {
                                            (ms(lo) + e.ms) * 1000
                                        } else {
                                            hold.end + e.ms * 1000
                                        };
                                        hold.ops.push(op.id);
                                    }
                                    None => {
                                        // An owner-checked extend that succeeded: the token held
                                        // the key then, whatever the history knew of it.
                                        let mode = match (def.kind, e.mode) {
                                            (Kind::ReadWrite, mode) => mode,
                                            (Kind::Token, _) => Mode::Lock,
                                            (Kind::Lease { .. }, _) => Mode::Lease,
                                        };
                                        open.insert(
                                            e.token.clone(),
                                            Hold {
                                                token: e.token.clone(),
                                                mode,
                                                start: hi,
                                                end: (ms(lo) + e.ms) * 1000,
                                                ops: vec![op.id],
                                            },
                                        );
                                    }
                                }
                            }
                            _ => {
                                if let Some(hold) = open.get_mut(&e.token) {
                                    hold.end = hold.end.min(lo.max(hold.start));
                                }
                            }
                        }
                    }
                    What::Release(r) => {
                        if let Some(mut hold) = open.remove(&r.token) {
                            hold.end = hold.end.min(lo.max(hold.start));
                            hold.ops.push(op.id);
                            closed.push(hold);
                        }
                    }
                    _ => {}
                }
            }
            closed.extend(open.into_values());
            // Faults by hand on the key end what it held.
            for hold in &mut closed {
                for fault in input.faults {
                    if ends_holds(fault, &def.name, node)
                        && fault.start_us < hold.end
                        && fault.end_us > hold.start - 5_000_000
                    {
                        hold.end = hold.end.min(fault.start_us.max(hold.start));
                    }
                }
            }
            found.extend(overlaps(def, &closed, node));
            everywhere.extend(closed.into_iter().map(|hold| (node, hold)));
        }
        // Across nodes: the split brain's double holders.
        for (i, (node_a, a)) in everywhere.iter().enumerate() {
            for (node_b, b) in &everywhere[i + 1..] {
                let overlap = a.end.min(b.end) - a.start.max(b.start);
                let shared_lease = matches!(def.kind, Kind::Lease { limit, .. } if limit > 1);
                if node_a != node_b
                    && a.token != b.token
                    && a.mode.excludes(b.mode)
                    && overlap > 0
                    && !shared_lease
                {
                    split.pairs += 1;
                    split.longest_ms = split.longest_ms.max(overlap / 1000);
                }
            }
        }
    }
    (found, split)
}

fn overlaps(def: &LockKeyDef, holds: &[Hold], node: NodeId) -> Vec<Violation> {
    let mut found = Vec::new();
    let limit = match def.kind {
        Kind::Lease { limit, .. } => limit as usize,
        _ => 1,
    };
    let holds: Vec<&Hold> = holds.iter().filter(|h| h.end > h.start).collect();
    for (i, a) in holds.iter().enumerate() {
        // Those that run at the moment `a` starts.
        let beside: Vec<&&Hold> = holds
            .iter()
            .enumerate()
            .filter(|(j, b)| *j != i && b.token != a.token && b.start <= a.start && a.start < b.end)
            .map(|(_, b)| b)
            .collect();
        let conflict = match def.kind {
            Kind::Lease { .. } => beside.len() >= limit,
            _ => beside.iter().any(|b| a.mode.excludes(b.mode)),
        };
        if conflict {
            let others: Vec<String> = beside
                .iter()
                .map(|b| {
                    format!(
                        "{} ({:?}, held from {} to at least {})",
                        String::from_utf8_lossy(&b.token),
                        b.mode,
                        b.start,
                        b.end
                    )
                })
                .collect();
            let mut ops = a.ops.clone();
            for b in &beside {
                ops.extend(b.ops.iter().copied());
            }
            ops.sort_unstable();
            ops.dedup();
            found.push(Violation {
                checker: "exclusion",
                message: format!(
                    "{} on node {node}: {} ({:?}) held it from {} (server µs) while {} held it",
                    String::from_utf8_lossy(&def.name),
                    String::from_utf8_lossy(&a.token),
                    a.mode,
                    a.start,
                    others.join(", ")
                ),
                ops,
                at_ms: 0,
            });
        }
    }
    found
}

/// The lock calls that do not wait, each against the grant rules on what its own step read
/// before it (`locks::check_step`), but where that read shows a waiter's grant whose waiter
/// left before its reply: the call's own look at the line may take it back first, as it must.
fn lock_steps(input: &Input<'_>) -> Vec<Violation> {
    let departed: BTreeSet<&[u8]> = input
        .ops
        .iter()
        .filter_map(|op| match &op.what {
            What::Acquire(a)
                if !matches!(op.outcome, Outcome::Answered(_)) || op.left.is_some() =>
            {
                Some(a.token.as_slice())
            }
            _ => None,
        })
        .collect();
    let mut found = Vec::new();
    for op in input.ops {
        let Some(key) = op.key() else {
            continue;
        };
        let Some(def) = input.locks.iter().find(|d| d.name == key) else {
            continue;
        };
        if !matches!(
            op.what,
            What::Acquire(_) | What::Extend(_) | What::Release(_)
        ) || op.pre.len() != 3
        {
            continue;
        }
        let (Some(lo), Some(hi), Some(reply)) = (op.lo, op.hi, op.reply()) else {
            continue;
        };
        if !crate::worker::whole(input.holds, op.node, lo, hi) {
            continue;
        }
        let before = State::read(&op.pre);
        let held_by_departed = match &before {
            Some(State::Token { value, .. }) => departed.contains(value.as_slice()),
            Some(State::Set { members, .. }) => {
                members.iter().any(|(m, _)| departed.contains(m.as_slice()))
            }
            _ => false,
        };
        if held_by_departed {
            continue;
        }
        if let Err(message) = locks::check_step(&op.what, def.kind, lo, hi, &op.pre, reply) {
            found.push(Violation {
                checker: "model",
                message,
                ops: vec![op.id],
                at_ms: op.done_ms,
            });
        }
    }
    found
}

/// A blocking acquire that stayed in line to its end: answered, not made to leave, neither a
/// renewal nor a switch of mode (which wait for nobody).
fn stays(op: &Op) -> Option<&crate::history::Acquire> {
    let What::Acquire(a) = &op.what else {
        return None;
    };
    (a.timeout_ms.is_some()
        && !a.renewal
        && !a.switch
        && op.left.is_none()
        && op.lo.is_some()
        && op.hi.is_some()
        && op.reply().is_some())
    .then_some(a)
}

/// Two milliseconds: how far apart two arrivals must be for their order to count.
const APART_US: i64 = 2000;

fn fifo(input: &Input<'_>, epochs: &Epochs<'_>) -> Vec<Violation> {
    let mut found = Vec::new();
    let mut by_line: BTreeMap<(Vec<u8>, NodeId, i64), Vec<&Op>> = BTreeMap::new();
    let mut newcomers: BTreeMap<(Vec<u8>, NodeId, i64), Vec<&Op>> = BTreeMap::new();
    for op in input.ops {
        let What::Acquire(a) = &op.what else {
            continue;
        };
        let (Some(lo), Some(_)) = (op.lo, op.hi) else {
            continue;
        };
        let Some((node, epoch)) = epochs.of(op.node, op.incarnation, lo) else {
            continue;
        };
        if stays(op).is_some() {
            by_line
                .entry((a.key.clone(), node, epoch))
                .or_default()
                .push(op);
        } else if a.timeout_ms.is_none()
            && !a.renewal
            && !a.switch
            && granted(op, a.fence).is_some()
        {
            newcomers
                .entry((a.key.clone(), node, epoch))
                .or_default()
                .push(op);
        }
    }
    for (line, mut waiters) in by_line {
        waiters.sort_by_key(|op| op.lo);
        let info = |op: &Op| -> (i64, i64, Option<Option<i64>>, i64) {
            let a = stays(op).map_or(0, |a| a.timeout_ms.unwrap_or(0));
            let fence = matches!(&op.what, What::Acquire(a) if a.fence);
            (
                op.lo.unwrap_or(0),
                op.hi.unwrap_or(0),
                granted(op, fence),
                a,
            )
        };
        for (i, first) in waiters.iter().enumerate() {
            let (lo1, hi1, got1, timeout1) = info(first);
            let timed_out =
                matches!(first.reply(), Some(Reply::Nil) | Some(Reply::Null)) && timeout1 > 0;
            for later in &waiters[i + 1..] {
                let (lo2, hi2, got2, _) = info(later);
                if lo2 < lo1 + APART_US {
                    continue;
                }
                let Some(token2) = got2 else {
                    continue;
                };
                let passed = match got1 {
                    // Both served: the later one first?
                    Some(token1) => match (token1, token2) {
                        (Some(t1), Some(t2)) => t2 < t1,
                        _ => hi2 + APART_US < hi1,
                    },
                    // The first timed out: was the later one served before its deadline?
                    None => timed_out && hi2 + APART_US < lo1 + timeout1 * 1000,
                };
                if passed {
                    found.push(Violation {
                        checker: "fifo",
                        message: format!(
                            "{} on node {}: {} arrived at {lo1} and {}, yet {} arrived later (at {lo2}) and was served first (answered at {hi2})",
                            String::from_utf8_lossy(&line.0),
                            line.1,
                            crate::wire::shown(&first.command),
                            if got1.is_some() { format!("was served at {hi1}") } else { format!("waited until its timeout of {timeout1} ms") },
                            crate::wire::shown(&later.command),
                        ),
                        ops: vec![first.id, later.id],
                        at_ms: 0,
                    });
                }
            }
        }
        // Those that did not wait, let in while a waiter stood in line.
        for newcomer in newcomers.get(&line).map(Vec::as_slice).unwrap_or(&[]) {
            let (Some(nlo), Some(nhi)) = (newcomer.lo, newcomer.hi) else {
                continue;
            };
            let ntoken = match &newcomer.what {
                What::Acquire(a) => granted(newcomer, a.fence).flatten(),
                _ => None,
            };
            for waiter in &waiters {
                let (wlo, whi, got, timeout) = info(waiter);
                if wlo + APART_US > nlo {
                    continue;
                }
                let waited_past = match got {
                    Some(Some(wtoken)) => ntoken.is_some_and(|n| wtoken > n),
                    Some(None) => whi > nhi + APART_US,
                    None => {
                        let timed_out =
                            matches!(waiter.reply(), Some(Reply::Nil) | Some(Reply::Null));
                        timed_out && timeout > 0 && wlo + timeout * 1000 > nhi + APART_US
                    }
                };
                if waited_past {
                    found.push(Violation {
                        checker: "fifo",
                        message: format!(
                            "{} on node {}: {} was let in at {nhi} while {} (arrived {wlo}) still waited",
                            String::from_utf8_lossy(&line.0),
                            line.1,
                            crate::wire::shown(&newcomer.command),
                            crate::wire::shown(&waiter.command),
                        ),
                        ops: vec![waiter.id, newcomer.id],
                        at_ms: 0,
                    });
                }
            }
        }
    }
    found
}

fn holds_in_probe(probe: &Op, token: &[u8], kind: Kind) -> bool {
    let (Some(lo), Some(hi)) = (probe.lo, probe.hi) else {
        return false;
    };
    let Some(state) = State::read(&probe.pre) else {
        return false;
    };
    state.held_by(token, kind, ms(lo), ms(hi)) == Some(true)
}

fn stranded(input: &Input<'_>) -> Vec<Violation> {
    let mut found = Vec::new();
    for leaver in input.ops {
        let What::Acquire(a) = &leaver.what else {
            continue;
        };
        // A renewal or a switch of mode that left: its token may still hold what it held.
        if a.timeout_ms.is_none()
            || a.renewal
            || a.switch
            || leaver.left.is_none()
            || leaver.discarded
            || !matches!(leaver.outcome, Outcome::Unknown(_))
        {
            continue;
        }
        let Some(def) = input.locks.iter().find(|d| d.name == a.key) else {
            continue;
        };
        // Probes of the key on its node sent after the leaver's connection was over, by actor,
        // in order: two in a row that find the token holding.
        let mut by_actor: BTreeMap<String, Vec<&Op>> = BTreeMap::new();
        for probe in input.ops {
            if matches!(&probe.what, What::Probe { key } if *key == a.key)
                && probe.node == leaver.node
                && probe.at_ms >= leaver.done_ms
            {
                by_actor
                    .entry(format!("{:?}", probe.actor))
                    .or_default()
                    .push(probe);
            }
        }
        for probes in by_actor.values() {
            let hit = probes
                .windows(2)
                .find(|pair| pair.iter().all(|p| holds_in_probe(p, &a.token, def.kind)));
            if let Some(pair) = hit {
                let remaining = State::read(&pair[1].pre)
                    .map(|s| format!("{s:?}"))
                    .unwrap_or_default();
                found.push(Violation {
                    checker: "stranded",
                    message: format!(
                        "{} on node {:?}: {} left ({:?}) before its reply, and the key is still held in its name after the server let it go: {remaining}",
                        String::from_utf8_lossy(&a.key),
                        leaver.node,
                        crate::wire::shown(&leaver.command),
                        leaver.left,
                    ),
                    ops: vec![leaver.id, pair[0].id, pair[1].id],
                    at_ms: pair[1].done_ms,
                });
                break;
            }
        }
    }
    found
}

/// A key and a token.
type KeyToken = (Vec<u8>, Vec<u8>);
/// A key and its GCRA policy, as text.
type KeyRate = (Vec<u8>, String);

fn phantom(input: &Input<'_>) -> Vec<Violation> {
    let mut found = Vec::new();
    // Every acquire of each token: all refused (or never run), none unknown.
    // (key, token) -> (every acquire refused, when the last was answered, its call)
    let mut tokens: BTreeMap<KeyToken, (bool, i64, u64)> = BTreeMap::new();
    for op in input.ops {
        let What::Acquire(a) = &op.what else {
            continue;
        };
        let entry =
            tokens
                .entry((a.key.clone(), a.token.clone()))
                .or_insert((true, i64::MIN, op.id));
        let refused = op.discarded || answered_not_granted(op, a.fence);
        if !refused {
            entry.0 = false;
        }
        entry.1 = entry.1.max(op.hi.or(op.lo).unwrap_or(i64::MAX));
        entry.2 = op.id;
    }
    // Extends and releases that succeeded prove a hold too.
    for op in input.ops {
        if let What::Extend(e) = &op.what {
            if op
                .reply()
                .is_some_and(|r| matches!(locks::granted(r, e.fence), Ok(Some(_))))
            {
                if let Some(entry) = tokens.get_mut(&(e.key.clone(), e.token.clone())) {
                    entry.0 = false;
                }
            }
        }
    }
    for ((key, token), (refused, answered_at, op_id)) in tokens {
        if !refused {
            continue;
        }
        let Some(def) = input.locks.iter().find(|d| d.name == key) else {
            continue;
        };
        let seen = input.ops.iter().find(|probe| {
            matches!(&probe.what, What::Probe { key: k } if *k == key)
                && probe.lo.is_some_and(|lo| lo > answered_at)
                && holds_in_probe(probe, &token, def.kind)
        });
        if let Some(probe) = seen {
            found.push(Violation {
                checker: "phantom",
                message: format!(
                    "{}: {} was never granted (every acquire refused, timed out or never ran), yet holds it at {:?}",
                    String::from_utf8_lossy(&key),
                    String::from_utf8_lossy(&token),
                    probe.lo
                ),
                ops: vec![op_id, probe.id],
                at_ms: probe.done_ms,
            });
        }
    }
    found
}

/// A fencing token, from the grant that minted it to the end of the last lease it was kept
/// through (a holder renewing keeps its token).
struct Grant<'a> {
    /// The call that minted it (the first to answer it).
    op: &'a Op,
    token: Vec<u8>,
    fence: i64,
    /// By when every lease it was kept through was certainly over.
    over_by: i64,
}

fn fencing(input: &Input<'_>) -> (Vec<Violation>, Resource) {
    let mut found = Vec::new();
    let mut resource = Resource::default();
    for def in input.locks {
        let ops: Vec<&Op> = input
            .ops
            .iter()
            .filter(|op| key_of(op) == Some(def.name.as_slice()))
            .collect();
        let mut by_fence: BTreeMap<i64, Grant<'_>> = BTreeMap::new();
        for op in &ops {
            let (fence, token, lease) = match &op.what {
                What::Acquire(a) => match granted(op, a.fence) {
                    Some(Some(fence)) => (fence, &a.token, a.ms),
                    _ => continue,
                },
                // An extend that answered the holder's token keeps it through a new lease.
                What::Extend(e) => match op.reply().map(|r| locks::granted(r, e.fence)) {
                    Some(Ok(Some(Some(fence)))) => (fence, &e.token, e.ms),
                    _ => continue,
                },
                _ => continue,
            };
            let (Some(lo), Some(hi)) = (op.lo, op.hi) else {
                continue;
            };
            // The latest this call's lease could end: given by `hi`, for `ms` (or `ms` more
            // than a lease that could have run until then).
            let end = (ms(hi) + lease + 1) * 1000;
            let grant = by_fence.entry(fence).or_insert(Grant {
                op,
                token: token.clone(),
                fence,
                over_by: end,
            });
            if lo < grant.op.lo.unwrap_or(i64::MAX) && matches!(op.what, What::Acquire(_)) {
                grant.op = op;
            }
            let added = if matches!(op.what, What::Extend(_)) {
                grant.over_by + lease * 1000
            } else {
                0
            };
            grant.over_by = grant.over_by.max(end).max(added);
        }
        // Extends whose answer was lost may have moved a lease out: by as much as they asked.
        for op in &ops {
            if let (What::Extend(e), Outcome::Unknown(_)) = (&op.what, &op.outcome) {
                for grant in by_fence.values_mut() {
                    if grant.token == e.token {
                        grant.over_by += e.ms * 1000 + 10_000_000;
                    }
                }
            }
        }
        let grants: Vec<&Grant<'_>> = by_fence.values().collect();
        for earlier in &grants {
            for later in &grants {
                let Some(llo) = later.op.lo else {
                    continue;
                };
                if later.fence == earlier.fence || llo <= earlier.over_by {
                    continue;
                }
                // A token minted ahead of its server's clock (its first fence-margin-ms after
                // a start or a promotion) may exceed a later grant's on another server whose
                // margin had run out: the chain fencing.md states. Measured, not judged.
                let ahead_of_clock = earlier.fence > llo && earlier.fence - llo <= MARGIN_US;
                if later.fence < earlier.fence && ahead_of_clock {
                    resource.margin_inversions += 1;
                    resource.widest_inversion_ms = resource
                        .widest_inversion_ms
                        .max((earlier.fence - later.fence) / 1000);
                    continue;
                }
                if later.fence < earlier.fence {
                    found.push(Violation {
                        checker: "fencing",
                        message: format!(
                            "{}: {} was granted token {} on node {:?} after {}'s lease (token {}, node {:?}) was over by {}: a successor with a smaller token",
                            String::from_utf8_lossy(&def.name),
                            String::from_utf8_lossy(&later.token),
                            later.fence,
                            later.op.node,
                            String::from_utf8_lossy(&earlier.token),
                            earlier.fence,
                            earlier.op.node,
                            earlier.over_by
                        ),
                        ops: vec![earlier.op.id, later.op.id],
                        at_ms: later.op.done_ms,
                    });
                }
            }
        }
        // The resource: writes in the order it took them.
        let mut writes: Vec<(&Op, i64, bool)> = ops
            .iter()
            .filter_map(|op| match &op.what {
                What::Write {
                    token, accepted, ..
                } => Some((*op, *token, *accepted)),
                _ => None,
            })
            .collect();
        writes.sort_by_key(|(op, _, _)| op.lo);
        let over_of = |fence: i64| {
            grants
                .iter()
                .filter(|g| g.fence == fence)
                .map(|g| g.over_by)
                .max()
        };
        for (i, (op, token, accepted)) in writes.iter().enumerate() {
            if *accepted {
                resource.accepted += 1;
            } else {
                resource.refused += 1;
            }
            let Some(over) = over_of(*token) else {
                continue;
            };
            let at = op.lo.unwrap_or(0);
            if at <= over {
                continue;
            }
            resource.stale += 1;
            if !*accepted {
                resource.stale_refused += 1;
                continue;
            }
            // Accepted after its lease was over: a successor granted after that, which wrote
            // before it, would have had to be refused.
            let successor = writes[..i].iter().find(|(w, t, ok)| {
                *ok && w.lo.is_some_and(|wlo| wlo > over)
                    && grants
                        .iter()
                        .any(|g| g.fence == *t && g.op.lo.is_some_and(|glo| glo > over))
            });
            if let Some((w, t, _)) = successor {
                found.push(Violation {
                    checker: "fencing",
                    message: format!(
                        "{}: the resource accepted token {token}'s write at {at}, after its lease was over (by {over}) and after a successor's write with token {t}",
                        String::from_utf8_lossy(&def.name)
                    ),
                    ops: vec![op.id, w.id],
                    at_ms: op.done_ms,
                });
            }
        }
    }
    (found, resource)
}

/// What may explain more admissions than a quota allows between `from` and `to` on `key`:
/// a fault of that span that loses or rewrites state, or a primary's timeline that began or
/// ended in it (a failover, a restart, an old primary demoted after a split brain, whose
/// writes its replicas then drop).
fn cause(input: &Input<'_>, key: &[u8], from: i64, to: i64) -> Option<&'static str> {
    let margin = 2_000_000;
    let fault = input
        .faults
        .iter()
        .filter(|f| f.kind.loses_state() && f.start_us <= to + margin && f.end_us + margin >= from)
        .filter(|f| {
            !f.kind.by_hand()
                || f.keys
                    .as_ref()
                    .is_none_or(|keys| keys.iter().any(|k| k == key))
        })
        .map(|f| match f.kind {
            FaultKind::Partition => "partition",
            FaultKind::SentinelFailover | FaultKind::ClusterFailover | FaultKind::Freeze => {
                "failover"
            }
            FaultKind::KillRestartAof | FaultKind::KillRestartRdb => "restart",
            FaultKind::SlotMigration | FaultKind::AtomicSlotMigration => "migration",
            _ => "by hand",
        })
        .next();
    if fault.is_some() {
        return fault;
    }
    let primaries: Vec<&RoleSpan> = input.roles.iter().filter(|s| s.primary).collect();
    // The phase's first primary began with it, and the spans it ended with end with it.
    let phase_start = input.roles.iter().map(|s| s.from_us).min().unwrap_or(0);
    let phase_end = input.roles.iter().map(|s| s.to_us).max().unwrap_or(0);
    let changed = primaries.iter().any(|span| {
        let began = span.from_us >= from - margin
            && span.from_us <= to + margin
            && span.from_us > phase_start + 1_000_000;
        let ended = span.to_us >= from - margin
            && span.to_us <= to + margin
            && span.to_us < phase_end - 1_000_000;
        began || ended
    });
    // Two primaries at once, and at a moment of the span: a split brain (each side admits on
    // what it holds), which a partition makes, or a primary not yet told it was replaced.
    let split = primaries.iter().any(|a| {
        primaries.iter().any(|b| {
            let (both_from, both_to) = (a.from_us.max(b.from_us), a.to_us.min(b.to_us));
            a.node != b.node
                && both_from < both_to
                && both_to >= from - margin
                && both_from <= to + margin
        })
    });
    let partitioned = input
        .faults
        .iter()
        .any(|f| f.kind == FaultKind::Partition && f.start_us <= to + margin);
    match (split, changed) {
        (true, _) if partitioned => Some("partition"),
        (true, _) | (_, true) => Some("failover"),
        _ => None,
    }
}

fn quota(input: &Input<'_>) -> (Vec<Violation>, Excess) {
    let mut found = Vec::new();
    let mut excess = Excess::default();
    // Every admission, with its call.
    let mut fixed: BTreeMap<Vec<u8>, Vec<(Admitted, &Op)>> = BTreeMap::new();
    let mut rated: BTreeMap<KeyRate, Vec<(Admitted, &Op)>> = BTreeMap::new();
    for op in input.ops {
        let What::Limit(limit) = &op.what else {
            continue;
        };
        let (Some(reply), Some(_), Some(_)) = (op.reply(), op.lo, op.hi) else {
            continue;
        };
        for admitted in limits::admitted(&limit.family, reply, &op.post) {
            excess.admitted += admitted.cost.max(0);
            if admitted.fixed.is_some() {
                fixed
                    .entry(admitted.key.clone())
                    .or_default()
                    .push((admitted, op));
            } else if let Some(rate) = admitted.rate {
                rated
                    .entry((admitted.key.clone(), format!("{rate:?}")))
                    .or_default()
                    .push((admitted, op));
            }
        }
    }
    let mut note = |key: &[u8],
                    (from, to): (i64, i64),
                    (over, quota): (i64, i64),
                    ops: Vec<u64>,
                    what: String| {
        if over <= 0 {
            return;
        }
        match cause(input, key, from, to) {
            Some(cause) => {
                *excess.by_cause.entry(cause).or_default() += over;
                let worst = excess.worst.entry(cause).or_default();
                *worst = (*worst).max(over);
                let share = excess.worst_share.entry(cause).or_default();
                *share = share.max(over as f64 / quota.max(1) as f64);
            }
            None => found.push(Violation {
                checker: "quota",
                message: format!("{}: {what}, with no failover, restart, partition or write by hand in that span", String::from_utf8_lossy(key)),
                ops,
                at_ms: 0,
            }),
        }
    };
    // Fixed windows: each window is its key's life, ending at its expiry; at no moment may the
    // windows that cover it have admitted more than the limit between them.
    for (key, admissions) in &fixed {
        let mut windows: BTreeMap<i64, (i64, i64, i64, Vec<u64>)> = BTreeMap::new();
        for (admitted, op) in admissions {
            let Some((length, limit, end)) = admitted.fixed else {
                continue;
            };
            // Ends within a millisecond are one window (its expiry read twice).
            let end_key = windows
                .range(end - 1..=end + 1)
                .next()
                .map(|(k, _)| *k)
                .unwrap_or(end);
            let entry = windows
                .entry(end_key)
                .or_insert((length, limit, 0, Vec::new()));
            entry.2 += admitted.cost;
            entry.3.push(op.id);
        }
        let spans: Vec<(i64, i64, i64, i64, &Vec<u64>)> = windows
            .iter()
            .map(|(end, (length, limit, count, ops))| {
                ((end - length) * 1000, end * 1000, *limit, *count, ops)
            })
            .collect();
        for (i, (start, end, limit, count, ops)) in spans.iter().enumerate() {
            // Within a window, more than the limit: the window itself admitted too much.
            if count > limit {
                note(
                    key,
                    (*start, *end),
                    (count - limit, *limit),
                    (*ops).clone(),
                    format!("one window admitted {count} with a limit of {limit}"),
                );
                continue;
            }
            let overlapping: Vec<&(i64, i64, i64, i64, &Vec<u64>)> = spans[..i]
                .iter()
                .filter(|s| s.1 > *start && s.0 < *end)
                .collect();
            let total: i64 = count + overlapping.iter().map(|s| s.3).sum::<i64>();
            if !overlapping.is_empty() && total > *limit {
                let mut all = (*ops).clone();
                for s in &overlapping {
                    all.extend(s.4.iter().copied());
                }
                // The excess is every one of these windows' admissions: whatever explains any
                // of them (a split brain over by the time the last window began, say) is
                // looked for over all their spans.
                let first = overlapping.iter().map(|s| s.0).fold(*start, i64::min);
                note(
                    key,
                    (first, *end),
                    (total - limit, *limit),
                    all,
                    format!(
                        "{} overlapping windows admitted {total} with a limit of {limit}",
                        overlapping.len() + 1
                    ),
                );
            }
        }
    }
    // GCRA: in any span, no more than the burst plus what the span regained (and refunds).
    for ((key, _), admissions) in &mut rated {
        admissions.sort_by_key(|(_, op)| op.lo);
        let Some(rate) = admissions.first().and_then(|(a, _)| a.rate) else {
            continue;
        };
        let emission = rate.emission_us().max(1) as f64;
        let capacity = rate.capacity() as f64;
        // max over i <= j of (sum cost i..=j) - refunds - capacity - (t_j - t_i) / emission.
        let mut best: Option<(f64, usize)> = None;
        let mut prefix = 0.0;
        for (j, (admitted, op)) in admissions.iter().enumerate() {
            let t_lo = op.lo.unwrap_or(0) as f64;
            let t_hi = op.hi.unwrap_or(0) as f64;
            // The span starts at an admission's earliest moment: its weight is what came
            // before it, plus its own start.
            let start_weight = t_lo / emission - prefix;
            if best.is_none_or(|(b, _)| start_weight > b) {
                best = Some((start_weight, j));
            }
            prefix += (admitted.cost - admitted.refund) as f64;
            if let Some((b, i)) = best {
                let over = prefix - t_hi / emission + b - capacity - 1.0;
                if over >= 1.0 {
                    let from = admissions[i].1.lo.unwrap_or(0);
                    let to = op.hi.unwrap_or(0);
                    let ops: Vec<u64> = admissions[i..=j].iter().map(|(_, op)| op.id).collect();
                    note(
                        key,
                        (from, to),
                        (over.floor() as i64, rate.capacity()),
                        ops.into_iter().rev().take(12).collect(),
                        format!(
                            "{} admissions between {from} and {to}, {} more than GCRA allows",
                            j - i + 1,
                            over.floor()
                        ),
                    );
                    // Measured once per span: start afresh after it.
                    best = None;
                    prefix = 0.0;
                }
            }
        }
    }
    (found, excess)
}

/// The calls a finding rests on, and everything before the last of them on its keys and
/// nodes: the shortest prefix of the history that shows it.
pub fn prefix<'a>(
    ops: &'a [Op],
    faults: &'a [Fault],
    violation: &Violation,
) -> (u64, Vec<&'a Op>, Vec<&'a Fault>) {
    let cited: BTreeSet<u64> = violation.ops.iter().copied().collect();
    let last_ms = ops
        .iter()
        .filter(|op| cited.contains(&op.id))
        .map(|op| op.done_ms)
        .max()
        .unwrap_or(violation.at_ms)
        .max(violation.at_ms);
    let keys: BTreeSet<Vec<u8>> = ops
        .iter()
        .filter(|op| cited.contains(&op.id))
        .filter_map(|op| op.key().map(<[u8]>::to_vec))
        .collect();
    let shown: Vec<&Op> = ops
        .iter()
        .filter(|op| op.done_ms <= last_ms && op.actor != Actor::Observer)
        .filter(|op| cited.contains(&op.id) || op.key().is_some_and(|k| keys.contains(k)))
        .collect();
    let faults: Vec<&Fault> = faults.iter().filter(|f| f.at_ms <= last_ms).collect();
    (last_ms, shown, faults)
}

#[cfg(test)]
mod tests {
    //! Each checker on a history made by hand: it finds what it states, and nothing in the same
    //! history without the fault.

    use super::*;
    use crate::history::{Acquire, Actor, Release};
    use crate::wire::Reply;

    const T0: i64 = 1_700_000_000_000_000;

    fn roles() -> Vec<RoleSpan> {
        vec![RoleSpan {
            node: 0,
            incarnation: 1,
            primary: true,
            from_us: T0 - 1_000_000,
            to_us: T0 + 60_000_000,
        }]
    }

    fn locks() -> Vec<LockKeyDef> {
        crate::locks::catalog("t")
    }

    fn op(id: u64, what: What, lo: i64, hi: i64, reply: Reply) -> Op {
        let mut op = Op::new(Actor::Worker(id as usize), what, Vec::new());
        op.id = id;
        op.node = Some(0);
        op.incarnation = 1;
        op.lo = Some(lo);
        op.hi = Some(hi);
        op.at_ms = ((lo - T0) / 1000).max(0) as u64;
        op.done_ms = ((hi - T0) / 1000).max(0) as u64;
        op.outcome = Outcome::Answered(reply);
        op
    }

    fn acquire(key: &[u8], token: &str, ms: i64, timeout_ms: Option<i64>) -> What {
        What::Acquire(Acquire {
            key: key.to_vec(),
            token: token.as_bytes().to_vec(),
            mode: Mode::Lock,
            ms,
            fence: true,
            timeout_ms,
            renewal: false,
            switch: false,
        })
    }

    fn run_on(ops: &[Op]) -> Vec<&'static str> {
        let (roles, locks) = (roles(), locks());
        let input = Input {
            ops,
            faults: &[],
            roles: &roles,
            locks: &locks,
            holds: &[],
        };
        run(&input).violations.iter().map(|v| v.checker).collect()
    }

    #[test]
    fn two_holders_at_once_are_found() {
        let key = locks()[0].name.clone();
        let first = op(
            1,
            acquire(&key, "a", 3000, None),
            T0,
            T0 + 50,
            Reply::Int(T0 + 10),
        );
        let second = op(
            2,
            acquire(&key, "b", 3000, None),
            T0 + 1_000_000,
            T0 + 1_000_050,
            Reply::Int(T0 + 1_000_010),
        );
        assert!(run_on(&[first.clone(), second.clone()]).contains(&"exclusion"));
        // Released in between: one holder, then the next.
        let release = op(
            3,
            What::Release(Release {
                key: key.clone(),
                token: b"a".to_vec(),
                mode: Mode::Lock,
            }),
            T0 + 500_000,
            T0 + 500_040,
            Reply::Int(1),
        );
        assert_eq!(run_on(&[first, release, second]), Vec::<&str>::new());
    }

    #[test]
    fn a_later_waiter_served_first_is_found() {
        let key = locks()[0].name.clone();
        // w1 arrived first and waited its whole 2 s; w2 arrived 100 ms later and was served.
        let w1 = op(
            1,
            acquire(&key, "w1", 1000, Some(2000)),
            T0,
            T0 + 2_000_500,
            Reply::Nil,
        );
        let w2 = op(
            2,
            acquire(&key, "w2", 1000, Some(2000)),
            T0 + 100_000,
            T0 + 600_000,
            Reply::Int(T0 + 599_000),
        );
        assert!(run_on(&[w1.clone(), w2]).contains(&"fifo"));
        // Served after w1 gave up: in order.
        let w3 = op(
            3,
            acquire(&key, "w3", 1000, Some(4000)),
            T0 + 100_000,
            T0 + 2_600_000,
            Reply::Int(T0 + 2_599_000),
        );
        assert_eq!(run_on(&[w1, w3]), Vec::<&str>::new());
    }

    #[test]
    fn a_waiter_that_left_and_still_holds_is_found() {
        let key = locks()[0].name.clone();
        let mut leaver = op(
            1,
            acquire(&key, "w1", 60_000, Some(5000)),
            T0,
            T0,
            Reply::Nil,
        );
        leaver.hi = None;
        leaver.outcome = Outcome::Unknown("connection closed".into());
        leaver.left = Some(crate::history::Left::KilledAsGranted);
        leaver.done_ms = 10;
        let probe = |id: u64, at: i64, holder: &str| {
            let mut probe = op(
                id,
                What::Probe { key: key.clone() },
                at,
                at + 30,
                Reply::Status("OK".into()),
            );
            probe.actor = Actor::Nemesis;
            probe.pre = vec![
                Reply::Bulk(holder.as_bytes().to_vec()),
                Reply::Error("WRONGTYPE".into()),
                Reply::Int(59_000),
            ];
            probe
        };
        let held = [
            leaver.clone(),
            probe(2, T0 + 20_000, "w1"),
            probe(3, T0 + 60_000, "w1"),
        ];
        assert!(run_on(&held).contains(&"stranded"));
        let taken_back = [
            leaver,
            probe(2, T0 + 20_000, "w1"),
            probe(3, T0 + 60_000, "w2"),
        ];
        assert!(!run_on(&taken_back).contains(&"stranded"));
    }

    #[test]
    fn a_step_whose_write_a_pause_may_have_held_back_is_not_judged() {
        let key = locks()[0].name.clone();
        // Granted on a key its read before found held by another: the model's finding, unless
        // the server may have held the call back (a pause) while another client's held write
        // (a release) ran first.
        let mut stale = op(
            1,
            acquire(&key, "a", 3000, None),
            T0,
            T0 + 50,
            Reply::Int(T0 + 10),
        );
        stale.pre = vec![
            Reply::Bulk(b"b".to_vec()),
            Reply::Error("WRONGTYPE".into()),
            Reply::Int(59_000),
        ];
        let judged = |holds: &[WriteHold]| {
            let (roles, locks) = (roles(), locks());
            let input = Input {
                ops: std::slice::from_ref(&stale),
                faults: &[],
                roles: &roles,
                locks: &locks,
                holds,
            };
            run(&input)
                .violations
                .iter()
                .map(|v| v.checker)
                .collect::<Vec<_>>()
        };
        assert_eq!(judged(&[]), ["model"]);
        let hold = |node: Option<NodeId>, from_us: i64, to_us: i64| WriteHold {
            node,
            from_us,
            to_us,
        };
        // A pause on its node that ended (with its margin) just as the step began.
        assert_eq!(
            judged(&[hold(Some(0), T0 - 400_000, T0 + 10)]),
            Vec::<&str>::new()
        );
        // One still open, and one of every node.
        assert_eq!(
            judged(&[hold(Some(0), T0 - 1, i64::MAX)]),
            Vec::<&str>::new()
        );
        assert_eq!(judged(&[hold(None, T0, T0 + 1)]), Vec::<&str>::new());
        // A pause on another node, or over before the step: judged.
        assert_eq!(judged(&[hold(Some(1), T0 - 1, i64::MAX)]), ["model"]);
        assert_eq!(judged(&[hold(Some(0), T0 - 400_000, T0 - 1)]), ["model"]);
    }

    /// GOBLIN.MFWINDOW 1 key 3000 8, admitted on `node`, its window ending at `end_ms`.
    fn admitted_on(id: u64, node: NodeId, key: &[u8], at: i64, end_ms: i64) -> Op {
        let family = crate::limits::Family::Mfwindow {
            windows: vec![(key.to_vec(), 3000, 8)],
            by: 1,
        };
        let what = What::Limit(crate::history::Limit {
            family,
            keys: vec![key.to_vec()],
        });
        let reply = Reply::Array(vec![Reply::Int(0), Reply::Int(-1)]);
        let mut op = op(id, what, at, at + 40, reply);
        op.node = Some(node);
        op.post = vec![Reply::Bulk(b"1".to_vec()), Reply::Int(end_ms)];
        op
    }

    #[test]
    fn overlapping_windows_over_the_quota_are_found_unless_a_split_brain_explains_them() {
        let key = b"{t}m".to_vec();
        let ms = |us: i64| us / 1000;
        // Node 0 admits 3 in a window from 8.2 s; node 2, primary beside it until 8.3 s, admits
        // 7 in a window from 10.5 s: 10 with a limit of 8 while both windows last.
        let mut ops = Vec::new();
        for (node, count, from, end) in [
            (0, 3, 8_200_000, 11_200_000),
            (2, 7, 10_500_000, 13_500_000),
        ] {
            for i in 0..count {
                let id = ops.len() as u64 + 1;
                ops.push(admitted_on(
                    id,
                    node,
                    &key,
                    T0 + from + i * 1000,
                    ms(T0 + end),
                ));
            }
        }
        let span = |node: NodeId, from_us: i64, to_us: i64| RoleSpan {
            node,
            incarnation: 1,
            primary: true,
            from_us,
            to_us,
        };
        let checked = |roles: &[RoleSpan]| {
            let locks = locks();
            let input = Input {
                ops: &ops,
                faults: &[],
                roles,
                locks: &locks,
                holds: &[],
            };
            run(&input)
                .violations
                .iter()
                .map(|v| v.checker)
                .collect::<Vec<_>>()
        };
        // One primary all along: nothing explains the excess.
        assert_eq!(
            checked(&[span(0, T0 - 1_000_000, T0 + 60_000_000)]),
            ["quota"]
        );
        // Two primaries until 8.3 s, 2.2 s before the later window began: a split brain, which
        // the earlier window's admissions were made in.
        let split = [
            span(0, T0 - 1_000_000, T0 + 8_300_000),
            span(2, T0, T0 + 60_000_000),
        ];
        assert_eq!(checked(&split), Vec::<&str>::new());
    }

    #[test]
    fn a_successor_with_a_smaller_token_is_found() {
        let key = locks()[0].name.clone();
        let first = op(
            1,
            acquire(&key, "a", 300, None),
            T0,
            T0 + 50,
            Reply::Int(T0 + 5_000_000),
        );
        // Granted a second after a's 300 ms lease ended, with a smaller token.
        let second = op(
            2,
            acquire(&key, "b", 300, None),
            T0 + 1_500_000,
            T0 + 1_500_050,
            Reply::Int(T0 + 1_500_010),
        );
        assert!(run_on(&[first, second.clone()]).contains(&"fencing"));
        let first = op(
            1,
            acquire(&key, "a", 300, None),
            T0,
            T0 + 50,
            Reply::Int(T0 + 10),
        );
        assert_eq!(run_on(&[first, second]), Vec::<&str>::new());
    }
}
