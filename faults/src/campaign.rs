//! A campaign on one server: its phases (a Sentinel group, then a cluster), each with its own
//! servers, workers, observer and nemesis, its history checked when it ends, and every process
//! and namespace it made gone when it returns, whatever happened.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use goblin_testkit::{Flavor, TempDir};

use crate::checks::{self, Excess, Input, Resource, Split};
use crate::history::{Fault, FaultKind, Op, Violation};
use crate::nemesis::{Arsenal, Nemesis};
use crate::net::{self, Host, Net};
use crate::procs;
use crate::shared::{lock, Procs, Shared};
use crate::topology::{self, Launch, NodeInfo, Shape, MASTER};
use crate::wire::{cmd, Client, Reply, ReplyExt};

#[derive(Debug, Clone)]
pub struct Config {
    pub flavor: Flavor,
    pub module: PathBuf,
    pub module_args: Vec<String>,
    /// The server's environment (a planted defect's switch).
    pub env: Vec<(String, String)>,
    pub seed: u64,
    /// The whole campaign on this server, in seconds.
    pub seconds: u64,
    /// Only this phase.
    pub phase: Option<Shape>,
    /// Stop a phase at this elapsed millisecond (a replay of a prefix).
    pub until_ms: Option<u64>,
    /// Only these faults.
    pub kinds: Option<Vec<FaultKind>>,
    /// End a phase at its first finding.
    pub stop_on_violation: bool,
    /// Build no namespaces even as root (no partitions then).
    pub no_namespaces: bool,
}

/// A finding, with what it takes to see it again.
#[derive(Debug, Clone)]
pub struct Finding {
    pub violation: Violation,
    pub phase: Shape,
    /// The elapsed millisecond of the phase by which it showed.
    pub by_ms: u64,
    /// The shortest prefix of the history that shows it, as lines.
    pub prefix: Vec<String>,
    pub prefix_of: usize,
}

#[derive(Debug, Clone)]
pub struct PhaseResult {
    pub shape: Shape,
    pub seconds: f64,
    /// Calls the workers and the nemesis made (answered, or unknown).
    pub operations: usize,
    pub answered: usize,
    pub unknown: usize,
    pub faults: BTreeMap<FaultKind, usize>,
    pub findings: Vec<Finding>,
    pub excess: Excess,
    pub resource: Resource,
    /// Holders of one lock on two primaries at once (split brains), measured.
    pub split: Split,
    pub notes: Vec<String>,
    /// Every fault struck, as lines.
    pub fault_lines: Vec<String>,
    /// The first finding's elapsed time, in seconds from the start of the phase.
    pub first_finding_s: Option<f64>,
}

/// The phases of a campaign of `seconds` on a server, with their durations in milliseconds.
pub fn phases(config: &Config) -> Vec<(Shape, u64)> {
    let total = config.seconds * 1000;
    let all = [
        (Shape::Sentinel, total * 65 / 100),
        (Shape::Cluster, total - total * 65 / 100),
    ];
    match config.phase {
        Some(only) => vec![(
            only,
            all.iter()
                .find(|(s, _)| *s == only)
                .map_or(total, |(_, ms)| *ms),
        )],
        // A short campaign is the Sentinel group's alone.
        None if config.seconds < 60 => vec![(Shape::Sentinel, total)],
        None => all.to_vec(),
    }
}

pub fn run(config: &Config) -> Vec<PhaseResult> {
    // What a campaign killed before it could clean up left behind goes first.
    procs::reap_stale();
    if Net::available() {
        net::reap_stale();
    }
    phases(config)
        .into_iter()
        .map(|(shape, ms)| {
            let duration = config.until_ms.map_or(ms, |until| until.min(ms));
            run_phase(config, shape, duration)
        })
        .collect()
}

fn failed_phase(shape: Shape, note: String) -> PhaseResult {
    PhaseResult {
        shape,
        seconds: 0.0,
        operations: 0,
        answered: 0,
        unknown: 0,
        faults: BTreeMap::new(),
        findings: vec![Finding {
            violation: Violation {
                checker: "harness",
                message: note.clone(),
                ops: Vec::new(),
                at_ms: 0,
            },
            phase: shape,
            by_ms: 0,
            prefix: Vec::new(),
            prefix_of: 0,
        }],
        excess: Excess::default(),
        resource: Resource::default(),
        split: Split::default(),
        notes: vec![note],
        fault_lines: Vec::new(),
        first_finding_s: Some(0.0),
    }
}

/// One phase, run on a thread of its own that lives on the admin path.
fn run_phase(config: &Config, shape: Shape, duration_ms: u64) -> PhaseResult {
    let scratch = TempDir::new(&format!("faults-{}-{}", config.flavor.name(), shape.name()));
    let use_net = shape == Shape::Sentinel && !config.no_namespaces && Net::available();
    let net = if use_net {
        match Net::create(3) {
            Ok(net) => Some(net),
            Err(error) => {
                return failed_phase(shape, format!("the namespaces could not be made: {error}"))
            }
        }
    } else {
        None
    };
    let admin_ns = net.as_ref().map(|net| net.namespace(Host::Admin));
    let delay = net.as_ref().is_some_and(Net::delay_works);
    let result = std::thread::scope(|scope| {
        let handle = scope.spawn(|| {
            if let Some(ns) = &admin_ns {
                if let Err(error) = net::enter(ns) {
                    return failed_phase(shape, format!("cannot enter {ns}: {error}"));
                }
            }
            phase_body(config, shape, duration_ms, net, delay, &scratch.0)
        });
        handle.join().unwrap_or_else(|panic| {
            failed_phase(
                shape,
                format!(
                    "the phase panicked: {}",
                    goblin_testkit::panic_text(panic.as_ref())
                ),
            )
        })
    });
    if std::env::var_os("FAULTS_KEEP").is_some() {
        eprintln!(
            "faults: the {} phase's files are kept in {}",
            shape.name(),
            scratch.0.display()
        );
        std::mem::forget(scratch);
    }
    result
}

fn phase_body(
    config: &Config,
    shape: Shape,
    duration_ms: u64,
    net: Option<Net>,
    delay: bool,
    scratch: &std::path::Path,
) -> PhaseResult {
    let launch = Launch {
        flavor: config.flavor,
        module: config.module.clone(),
        module_args: config.module_args.clone(),
        env: config.env.clone(),
    };
    let mut notes = Vec::new();
    let (procs, nodes, sentinels): (Procs, Vec<NodeInfo>, Vec<std::net::SocketAddr>) = match shape {
        Shape::Sentinel => match topology::sentinel_group(&launch, net.as_ref(), scratch) {
            Ok((nodes, sentinels, infos, addrs)) => (Procs { nodes, sentinels }, infos, addrs),
            Err(error) => {
                return failed_phase(shape, format!("the Sentinel group did not start: {error}"))
            }
        },
        Shape::Cluster => match topology::cluster(&launch, scratch) {
            Ok((nodes, infos)) => (
                Procs {
                    nodes,
                    sentinels: Vec::new(),
                },
                infos,
                Vec::new(),
            ),
            Err(error) => {
                return failed_phase(shape, format!("the cluster did not start: {error}"))
            }
        },
    };
    if shape == Shape::Sentinel {
        if net.is_none() {
            notes.push(
                "partitions: not run (no network namespaces: needs root and ip netns)".into(),
            );
        } else if !delay {
            notes.push("delay: not run (this kernel has no netem qdisc)".into());
        }
    }
    let atomic = shape == Shape::Cluster
        && nodes
            .first()
            .is_some_and(|node| has_command(node.addr, "CLUSTER|MIGRATESLOTS"));
    if shape == Shape::Cluster && !atomic {
        notes.push("atomic slot migration: the server has no CLUSTER MIGRATESLOTS".into());
    }
    let namespaces = net.is_some();
    let tag = format!(
        "{}{}",
        shape.name().chars().next().unwrap_or('p'),
        config.seed % 1000
    );
    let shared = Shared::new(
        config.seed,
        config.flavor,
        shape,
        nodes,
        sentinels,
        procs,
        net,
        &tag,
    );
    let arsenal = Arsenal {
        shape,
        partitions: namespaces,
        delay,
        atomic_migration: atomic,
        only: config.kinds.clone(),
    };
    let plan = arsenal.plan(config.seed ^ shape_salt(shape), duration_ms);
    let homes: Vec<Option<Host>> = match (shape, namespaces) {
        (Shape::Sentinel, true) => {
            let mut homes = vec![Some(Host::Clients); 4];
            homes.extend((0..3).map(|n| Some(Host::Node(n))));
            homes
        }
        _ => vec![None; 6],
    };
    let started = Instant::now();
    std::thread::scope(|scope| {
        let shared = &shared;
        scope.spawn(move || crate::observer::run(shared));
        for (id, home) in homes.iter().enumerate() {
            let home = *home;
            scope.spawn(move || crate::worker::run(shared, id, home));
        }
        let module = config.module.clone();
        let plan = &plan;
        scope.spawn(move || Nemesis::new(shared, module).run(plan));
        let mut last_check = Instant::now();
        while started.elapsed() < Duration::from_millis(duration_ms) {
            std::thread::sleep(Duration::from_millis(100));
            if config.stop_on_violation {
                if !lock(&shared.live).is_empty() {
                    break;
                }
                if last_check.elapsed() > Duration::from_secs(3) {
                    last_check = Instant::now();
                    if !check(shared).0.is_empty() {
                        break;
                    }
                }
            }
        }
        shared
            .stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
        // Workers blocked in a read: their sockets closed under them.
        let registry = lock(&shared.registry);
        for flight in registry.flights.values() {
            if let Some(handle) = &flight.handle {
                let _ = handle.shutdown(std::net::Shutdown::Both);
            }
        }
        for (_, _, handle) in registry.conns.values() {
            if let Some(handle) = handle {
                let _ = handle.shutdown(std::net::Shutdown::Both);
            }
        }
    });
    let elapsed = started.elapsed();
    heal(&shared);
    if let Some(finding) = converge(&shared) {
        shared.found(finding);
    }
    let (violations, excess, resource, split) = check(&shared);
    let ops = lock(&shared.ops).clone();
    let faults = lock(&shared.faults).clone();
    let stop_ms = elapsed.as_millis() as u64;
    let mut findings: Vec<Finding> = violations
        .into_iter()
        .map(|violation| {
            let (by_ms, shown, shown_faults) = checks::prefix(&ops, &faults, &violation);
            let mut prefix: Vec<String> = shown_faults
                .iter()
                .map(|f| (f.at_ms, describe_fault(f)))
                .chain(shown.iter().map(|op| (op.at_ms, describe(op))))
                .collect::<Vec<_>>()
                .into_iter()
                .collect::<BTreeMap<_, _>>()
                .into_values()
                .collect();
            let prefix_of = ops.iter().filter(|op| op.done_ms <= by_ms).count();
            if prefix.len() > 60 {
                let cut = prefix.len() - 60;
                prefix.drain(..cut);
                prefix.insert(
                    0,
                    format!("          ... {cut} earlier lines on these keys"),
                );
            }
            Finding {
                violation,
                phase: shape,
                by_ms: by_ms.min(stop_ms),
                prefix,
                prefix_of,
            }
        })
        .collect();
    findings.sort_by_key(|f| f.by_ms);
    // The whole history, for a reader who wants more than the prefix.
    if let Some(dir) = std::env::var_os("FAULTS_DUMP") {
        let mut lines: Vec<(u64, String)> = ops.iter().map(|op| (op.at_ms, describe(op))).collect();
        lines.extend(faults.iter().map(|f| (f.at_ms, describe_fault(f))));
        lines.sort_by_key(|(at, _)| *at);
        let text: Vec<String> = lines.into_iter().map(|(_, line)| line).collect();
        let path = std::path::Path::new(&dir).join(format!(
            "{}-{}-{}.history",
            config.flavor.name(),
            shape.name(),
            config.seed
        ));
        let _ = std::fs::write(&path, text.join("\n"));
    }
    let mut counts: BTreeMap<FaultKind, usize> = BTreeMap::new();
    for fault in &faults {
        *counts.entry(fault.kind).or_default() += 1;
    }
    let operations = ops
        .iter()
        .filter(|op| {
            matches!(
                op.actor,
                crate::history::Actor::Worker(_) | crate::history::Actor::Nemesis
            ) && op.node.is_some()
        })
        .count();
    let answered = ops
        .iter()
        .filter(|op| {
            matches!(
                op.actor,
                crate::history::Actor::Worker(_) | crate::history::Actor::Nemesis
            ) && op.reply().is_some()
                && op.node.is_some()
        })
        .count();
    let unknown = ops
        .iter()
        .filter(|op| matches!(op.outcome, crate::history::Outcome::Unknown(_)))
        .count();
    let first_finding_s = findings.first().map(|f| f.by_ms as f64 / 1000.0);
    PhaseResult {
        shape,
        seconds: elapsed.as_secs_f64(),
        operations,
        answered,
        unknown,
        faults: counts,
        findings,
        excess,
        resource,
        split,
        notes,
        fault_lines: faults
            .iter()
            .map(|f| {
                format!(
                    "{:>8.3}s  {} on node {:?}, {:.3} s long: {}",
                    f.at_ms as f64 / 1000.0,
                    f.kind.name(),
                    f.node,
                    (f.end_us - f.start_us) as f64 / 1e6,
                    f.detail
                )
            })
            .collect(),
        first_finding_s,
    }
}

fn shape_salt(shape: Shape) -> u64 {
    match shape {
        Shape::Sentinel => 0,
        Shape::Cluster => 0x005e_edc1_u64,
    }
}

/// The history's checkers over what was recorded so far, with the findings made live.
fn check(shared: &Shared) -> (Vec<Violation>, Excess, Resource, Split) {
    let ops: Vec<Op> = lock(&shared.ops).clone();
    let faults = lock(&shared.faults).clone();
    let roles = lock(&shared.roles).clone();
    let holds = lock(&shared.write_holds).clone();
    let input = Input {
        ops: &ops,
        faults: &faults,
        roles: &roles,
        locks: &shared.locks,
        holds: &holds,
    };
    let report = checks::run(&input);
    let mut violations: Vec<Violation> = lock(&shared.live).clone();
    // A finding stated once per checker and set of calls.
    for violation in report.violations {
        let done_ms = violation
            .ops
            .iter()
            .filter_map(|id| ops.iter().find(|op| op.id == *id))
            .map(|op| op.done_ms)
            .max()
            .unwrap_or(violation.at_ms);
        violations.push(Violation {
            at_ms: violation.at_ms.max(done_ms),
            ..violation
        });
    }
    (violations, report.excess, report.resource, report.split)
}

/// One line of a history: when, who, what, and how it ended.
/// A fault as a line of the history, beside its calls (`describe`).
fn describe_fault(fault: &Fault) -> String {
    format!(
        "{:>8.3}s  fault {}: {}",
        fault.at_ms as f64 / 1000.0,
        fault.kind.name(),
        fault.detail
    )
}

pub fn describe(op: &Op) -> String {
    let who = match op.actor {
        crate::history::Actor::Worker(n) => format!("worker {n}"),
        crate::history::Actor::Nemesis => "nemesis".into(),
        crate::history::Actor::Observer => "observer".into(),
    };
    let ended = match &op.outcome {
        crate::history::Outcome::Answered(reply) => crate::wire::brief(reply),
        crate::history::Outcome::Unknown(why) => format!("unknown ({why})"),
        crate::history::Outcome::NotSent(why) => format!("not sent ({why})"),
    };
    let state = if op.pre.len() == 3 {
        crate::locks::State::read(&op.pre)
            .map(|s| format!("  [before: {s:?}]"))
            .unwrap_or_default()
    } else {
        String::new()
    };
    let left = op
        .left
        .map(|l| format!(" (made to leave: {l:?})"))
        .unwrap_or_default();
    format!(
        "{:>8.3}s  #{} {who} node {:?} [{:?}..{:?}] {} -> {ended}{left}{state}",
        op.at_ms as f64 / 1000.0,
        op.id,
        op.node,
        op.lo,
        op.hi,
        crate::wire::shown(&op.command),
    )
}

/// Every fault undone: partitions healed, processes thawed, memory and pauses restored.
fn heal(shared: &Shared) {
    if let Some(net) = lock(&shared.net).as_mut() {
        let _ = net.heal();
        net.undelay();
    }
    {
        let mut guard = lock(&shared.procs);
        let procs = &mut *guard;
        for proc in procs.nodes.iter_mut().chain(procs.sentinels.iter_mut()) {
            if proc.frozen {
                let _ = proc.thaw();
            }
        }
    }
    for node in 0..shared.nodes.len() {
        if let Ok(mut client) = Client::connect(shared.addr(node), Duration::from_secs(1)) {
            let _ = client.call(
                &cmd(&["CONFIG", "SET", "maxmemory", "0"]),
                Duration::from_secs(5),
            );
            let _ = client.call(&cmd(&["CLIENT", "UNPAUSE"]), Duration::from_secs(5));
        }
    }
    // A node the nemesis left down (it never does for long) is started again.
    let mut procs = lock(&shared.procs);
    for proc in procs.nodes.iter_mut() {
        if !proc.running() {
            let _ = proc.start(&[], Duration::from_secs(30));
        }
    }
}

fn call(shared: &Shared, node: usize, words: &[&str]) -> Option<Reply> {
    let mut client = Client::connect(shared.addr(node), Duration::from_secs(1)).ok()?;
    client.call(&cmd(words), Duration::from_secs(10)).ok()
}

fn role(shared: &Shared, node: usize) -> Option<String> {
    call(shared, node, &["ROLE"])?.items()?.first()?.as_text()
}

/// The shards once the faults healed: (primary, its replicas), or what keeps them apart.
fn shards(shared: &Shared) -> Result<Vec<(usize, Vec<usize>)>, String> {
    match shared.shape {
        Shape::Sentinel => {
            let mut votes: BTreeMap<usize, usize> = BTreeMap::new();
            let mut said = Vec::new();
            for addr in &shared.sentinels {
                let named = Client::connect(*addr, Duration::from_millis(500))
                    .ok()
                    .and_then(|mut client| {
                        let reply = client
                            .call(
                                &cmd(&["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER]),
                                Duration::from_secs(1),
                            )
                            .ok()?;
                        let items = reply.items()?;
                        let addr =
                            format!("{}:{}", items.first()?.as_text()?, items.get(1)?.as_int()?)
                                .parse()
                                .ok()?;
                        shared.node_of(addr)
                    });
                said.push(named);
                if let Some(node) = named {
                    *votes.entry(node).or_default() += 1;
                }
            }
            let roles: Vec<Option<String>> =
                (0..shared.nodes.len()).map(|n| role(shared, n)).collect();
            let agreed = votes
                .iter()
                .max_by_key(|(_, n)| **n)
                .filter(|(_, n)| **n == shared.sentinels.len())
                .map(|(p, _)| *p);
            match agreed {
                Some(primary) if roles[primary].as_deref() == Some("master") => {
                    let replicas: Vec<usize> =
                        (0..shared.nodes.len()).filter(|n| *n != primary).collect();
                    Ok(vec![(primary, replicas)])
                }
                _ => Err(format!(
                    "the Sentinels name {said:?} as the primary; the nodes' roles are {roles:?}"
                )),
            }
        }
        Shape::Cluster => {
            let mut shards: BTreeMap<String, (Option<usize>, Vec<usize>)> = BTreeMap::new();
            for node in 0..shared.nodes.len() {
                let text = call(shared, node, &["CLUSTER", "NODES"])
                    .and_then(|r| r.as_text())
                    .ok_or(format!("node {node} does not answer CLUSTER NODES"))?;
                let mine = text
                    .lines()
                    .find(|line| line.contains("myself"))
                    .ok_or("no myself line")?;
                let fields: Vec<&str> = mine.split_whitespace().collect();
                let (Some(id), Some(flags), Some(master)) =
                    (fields.first(), fields.get(2), fields.get(3))
                else {
                    return Err(format!("node {node}: {mine}"));
                };
                if flags.contains("master") {
                    shards.entry(id.to_string()).or_default().0 = Some(node);
                } else {
                    shards.entry(master.to_string()).or_default().1.push(node);
                }
            }
            shards
                .into_iter()
                .map(|(id, (primary, replicas))| match primary {
                    Some(p) => Ok((p, replicas)),
                    None => Err(format!(
                        "the replicas {replicas:?} follow {id}, which no node is"
                    )),
                })
                .collect()
        }
    }
}

/// Once the faults healed, every replica must come to hold its primary's data and expiries.
fn converge(shared: &Shared) -> Option<Violation> {
    let deadline = Instant::now() + Duration::from_secs(45);
    let mut last = String::new();
    while Instant::now() < deadline {
        match try_converge(shared) {
            Ok(()) => return None,
            Err(why) => last = why,
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    Some(Violation {
        checker: "convergence",
        message: format!(
            "45 s after the faults healed, the replicas still differ from their primary: {last}"
        ),
        ops: Vec::new(),
        at_ms: shared.elapsed_ms(),
    })
}

fn try_converge(shared: &Shared) -> Result<(), String> {
    let shards = shards(shared)?;
    for (primary, replicas) in shards {
        let mut admin = Client::connect(shared.addr(primary), Duration::from_secs(1))
            .map_err(|e| e.to_string())?;
        // Writes (and expiries) held while the sides are read; the replicas catch up first.
        admin
            .call(
                &cmd(&["CLIENT", "PAUSE", "4000", "WRITE"]),
                Duration::from_secs(5),
            )
            .map_err(|e| e.to_string())?;
        let result = compare(shared, &mut admin, primary, &replicas);
        let _ = admin.call(&cmd(&["CLIENT", "UNPAUSE"]), Duration::from_secs(5));
        result?;
    }
    Ok(())
}

fn compare(
    shared: &Shared,
    admin: &mut Client,
    primary: usize,
    replicas: &[usize],
) -> Result<(), String> {
    let offset =
        procs::info_field(admin, "replication", "master_repl_offset").ok_or("no offset")?;
    for &replica in replicas {
        let mut client = Client::connect(shared.addr(replica), Duration::from_secs(1))
            .map_err(|e| e.to_string())?;
        let caught = procs::wait_for(Duration::from_secs(3), || {
            let seen = procs::info_field(&mut client, "replication", "slave_repl_offset")?;
            let up = procs::info_field(&mut client, "replication", "master_link_status")?;
            (seen == offset && up == "up").then_some(())
        });
        if caught.is_none() {
            return Err(format!(
                "node {replica} has not caught up with node {primary} (offset {offset})"
            ));
        }
    }
    let digest = |node: usize| -> Result<(String, BTreeMap<Vec<u8>, i64>), String> {
        let mut client = Client::connect(shared.addr(node), Duration::from_secs(1))
            .map_err(|e| e.to_string())?;
        // A cluster's replica answers reads of its keys only when asked to.
        if shared.shape == Shape::Cluster {
            let _ = client.call(&cmd(&["READONLY"]), Duration::from_secs(5));
        }
        let digest = client
            .call(&cmd(&["DEBUG", "DIGEST"]), Duration::from_secs(10))
            .map_err(|e| e.to_string())?
            .as_text()
            .unwrap_or_default();
        let keys = client
            .call(&cmd(&["KEYS", "*"]), Duration::from_secs(10))
            .map_err(|e| e.to_string())?;
        let keys: Vec<Vec<u8>> = keys
            .items()
            .unwrap_or(&[])
            .iter()
            .filter_map(|k| k.as_bytes().map(<[u8]>::to_vec))
            .collect();
        let reads: Vec<Vec<Vec<u8>>> = keys
            .iter()
            .map(|k| vec![b"PEXPIRETIME".to_vec(), k.clone()])
            .collect();
        let expiries = client
            .pipeline(&reads, Duration::from_secs(10))
            .map_err(|b| b.error.to_string())?;
        Ok((
            digest,
            keys.into_iter()
                .zip(expiries.iter().map(|r| r.as_int().unwrap_or(-3)))
                .collect(),
        ))
    };
    let (primary_digest, primary_keys) = digest(primary)?;
    let after = crate::history::wall_us() / 1000;
    for &replica in replicas {
        let (replica_digest, replica_keys) = digest(replica)?;
        let mut differ = Vec::new();
        for key in primary_keys.keys().chain(replica_keys.keys()) {
            let (a, b) = (primary_keys.get(key), replica_keys.get(key));
            let lapsed = |at: Option<&i64>| at.is_some_and(|at| *at >= 0 && *at <= after + 50);
            if a != b && !(a.is_none() && lapsed(b)) && !(b.is_none() && lapsed(a)) {
                differ.push(format!("{:?}: {a:?} / {b:?}", String::from_utf8_lossy(key)));
            }
        }
        if replica_digest != primary_digest || !differ.is_empty() {
            differ.truncate(10);
            return Err(format!(
                "node {replica}'s DEBUG DIGEST {replica_digest} against node {primary}'s {primary_digest}; expiries that differ: {differ:?}"
            ));
        }
    }
    Ok(())
}

/// Whether the server at `addr` has `command` (`CONTAINER|SUBCOMMAND` for a subcommand): the
/// running server says, never its version.
fn has_command(addr: std::net::SocketAddr, command: &str) -> bool {
    let Ok(mut client) = Client::connect(addr, Duration::from_secs(2)) else {
        return false;
    };
    client
        .call(&cmd(&["COMMAND", "INFO", command]), Duration::from_secs(2))
        .ok()
        .and_then(|reply| reply.items().map(|items| items.first().cloned()))
        .is_some_and(|first| first.is_some_and(|info| info != Reply::Nil))
}
