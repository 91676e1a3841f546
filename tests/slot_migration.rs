//! Valkey's atomic slot migration (`CLUSTER MIGRATESLOTS`, Valkey 9.0) with Goblin loaded
//! (docs/operations.md, "Atomic slot migration"). Where the server has it (it is asked, by
//! `COMMAND INFO`), on clusters of two primaries whose every slot moves from one to the other and
//! back while clients call every writing Goblin command through redis-py's `RedisCluster`
//! (python/tests/migration_clients.py) and ioredis's `Cluster` (node/test/workers/migration.mjs),
//! with waiters parked, leases held and fenced locks granted:
//!
//! - keys written before the moves are found on the new owner with the same value (`DEBUG
//!   DIGEST-VALUE`) and the same expiry, and on the old one no more;
//! - the clients' own checks, call by call: no increment lost or applied twice, every fencing
//!   token larger than the one before; their holders still hold, with the same expiry, and no
//!   contender is granted; their waiters follow each move, wait on the new owner and are granted
//!   when the holder releases, not before, with a larger token;
//! - the same on a cluster with a replica per primary, each replica ending as its primary;
//! - tokens minted after a move exceed every token minted before it on the source, whose clock
//!   runs ahead (within the margin);
//! - a migration cancelled midway (`CLUSTER CANCELSLOTMIGRATIONS`) leaves both nodes as they were.
//!
//! Where the server lacks it, Goblin declares none of Valkey's options there.

mod common;
use common::cluster::{cluster_ok, node_id};
use common::*;

#[path = "node_support.rs"]
mod node;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// Whether the server has atomic slot migration: its own answer.
fn has_atomic_slot_migration(c: &mut Conn) -> bool {
    match c.call(&["COMMAND", "INFO", "cluster|migrateslots"]) {
        Reply::Array(entries) => entries.first().is_some_and(|entry| *entry != Reply::Nil),
        other => panic!("COMMAND INFO gave {other:?}"),
    }
}

/// The module options the server shows for Goblin (`INFO modules`).
fn goblin_options(c: &mut Conn) -> String {
    let info = c.call(&["INFO", "modules"]).text();
    let line = info
        .lines()
        .find(|line| line.starts_with("module:name=goblin,"))
        .unwrap_or_else(|| panic!("no goblin in INFO modules:\n{info}"));
    line.split("options=").nth(1).unwrap_or("").to_string()
}

/// A node of the test's clusters: debug commands from loopback (`DEBUG DIGEST-VALUE`, `DEBUG
/// SLOTMIGRATION`), and a primary that hands every slot over stays a primary (without it, Valkey
/// makes it a replica of the node that took its last slot, and no slot could move back to it).
fn cluster_node(flavor: Flavor, module_args: &[&str]) -> Server {
    let builder = Server::builder(flavor);
    // A skewed clock is an argument of the module's test build alone.
    let builder = if module_args.contains(&"fence-clock-offset-ms") {
        builder.test_build()
    } else {
        builder
    };
    builder
        .cluster()
        // Cluster nodes: a node cannot follow a plain replica.
        .without_replica()
        .args([
            "--enable-debug-command",
            "local",
            "--cluster-allow-replica-migration",
            "no",
        ])
        .module_args(module_args.iter().copied())
        .start()
}

/// Primaries (every slot on the first) and their replicas, one each, once every node sees all
/// the others, and the replicas' links are up.
fn form(primaries: &[Server], replicas: &[Server]) {
    let mut first = primaries[0].conn();
    assert_eq!(
        first.call(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]),
        Reply::Status("OK".into())
    );
    for server in primaries.iter().chain(replicas).skip(1) {
        first.call(&["CLUSTER", "MEET", "127.0.0.1", &server.port.to_string()]);
    }
    let all = primaries.len() + replicas.len();
    for server in primaries.iter().chain(replicas) {
        let mut c = server.conn();
        assert!(
            wait_until(Duration::from_secs(30), || cluster_ok(&mut c, all)),
            "the cluster never formed"
        );
    }
    for (replica, primary) in replicas.iter().zip(primaries) {
        let id = node_id(&mut primary.conn());
        let mut c = replica.conn();
        assert_eq!(
            c.call(&["CLUSTER", "REPLICATE", &id]),
            Reply::Status("OK".into())
        );
        assert!(
            wait_until(Duration::from_secs(30), || info_field(
                &mut c,
                "replication",
                "master_link_status"
            ) == "up"),
            "a replica never synced"
        );
    }
}

/// The newest slot migration a node knows of (`CLUSTER GETSLOTMIGRATIONS` lists the newest
/// first): its fields.
fn newest_migration(c: &mut Conn) -> BTreeMap<String, String> {
    let reply = c.call(&["CLUSTER", "GETSLOTMIGRATIONS"]);
    let Some(job) = reply.array().first() else {
        return BTreeMap::new();
    };
    let text = |value: &Reply| match value {
        Reply::Int(n) => n.to_string(),
        other => other.text(),
    };
    match job {
        Reply::Array(fields) => fields
            .chunks(2)
            .map(|pair| (pair[0].text(), text(&pair[1])))
            .collect(),
        other => panic!("a slot migration: {other:?}"),
    }
}

/// Waits for the newest migration on `c` to reach `states`, and returns its state.
fn migration_reaches(c: &mut Conn, states: &[&str]) -> String {
    let mut last = BTreeMap::new();
    let reached = wait_until(Duration::from_secs(60), || {
        last = newest_migration(c);
        last.get("state")
            .is_some_and(|state| states.contains(&state.as_str()))
    });
    assert!(reached, "the migration never reached {states:?}: {last:?}");
    last["state"].clone()
}

/// Starts moving every slot of `from` to `to`.
fn start_migration(from: &Server, to: &Server) {
    let target = node_id(&mut to.conn());
    let reply = from.conn().call(&[
        "CLUSTER",
        "MIGRATESLOTS",
        "SLOTSRANGE",
        "0",
        "16383",
        "NODE",
        &target,
    ]);
    assert_eq!(reply, Reply::Status("OK".into()), "CLUSTER MIGRATESLOTS");
}

/// Moves every slot of `from` to `to`, holding the move before its pause until the clients
/// have written on the source while it streamed (the writes that must reach the target once),
/// then lets it finish; waits until every node agrees on the new owner. Returns how many
/// rounds the clients made on the source while it streamed (one GOBLIN.INCREX a round).
fn migrate_under_writes(from: &Server, to: &Server, nodes: &[&Server]) -> u64 {
    let mut source = from.conn();
    assert_eq!(
        source.call(&["DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "1"]),
        Reply::Status("OK".into())
    );
    start_migration(from, to);
    migration_reaches(&mut source, &["waiting-to-pause"]);
    let before = calls(&mut source, "goblin.increx");
    assert!(
        wait_until(Duration::from_secs(30), || calls(
            &mut source,
            "goblin.increx"
        ) >= before + 20),
        "the clients wrote nothing while the slots streamed"
    );
    let streamed = calls(&mut source, "goblin.increx") - before;
    assert_eq!(
        source.call(&["DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "0"]),
        Reply::Status("OK".into())
    );
    assert_eq!(
        migration_reaches(&mut source, &["success", "failed", "cancelled"]),
        "success"
    );
    owned_by(to, nodes);
    streamed
}

/// Waits until every node of `nodes` says `owner` serves every slot.
fn owned_by(owner: &Server, nodes: &[&Server]) {
    let id = node_id(&mut owner.conn());
    for node in nodes {
        let mut c = node.conn();
        assert!(
            wait_until(Duration::from_secs(30), || {
                let slots = c.call(&["CLUSTER", "NODES"]).text();
                slots
                    .lines()
                    .any(|line| line.starts_with(&id) && line.ends_with(" 0-16383"))
            }),
            "node {} never saw {} own every slot",
            node.port,
            owner.port
        );
    }
}

/// `INFO commandstats` calls of `command`.
fn calls(c: &mut Conn, command: &str) -> u64 {
    let info = c.call(&["INFO", "commandstats"]).text();
    info.lines()
        .find_map(|line| line.strip_prefix(&format!("cmdstat_{command}:calls=")))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |calls| calls.parse().expect("calls"))
}

/// Every key a node holds: its `DEBUG DIGEST-VALUE` and `PEXPIRETIME`.
fn digests(c: &mut Conn) -> BTreeMap<Vec<u8>, (String, i64)> {
    let keys: Vec<Vec<u8>> = c
        .call(&["KEYS", "*"])
        .array()
        .iter()
        .map(|key| match key {
            Reply::Bulk(key) => key.clone(),
            other => panic!("KEYS gave {other:?}"),
        })
        .collect();
    let reads: Vec<Vec<Vec<u8>>> = keys
        .iter()
        .flat_map(|key| {
            [
                vec![b"DEBUG".to_vec(), b"DIGEST-VALUE".to_vec(), key.clone()],
                vec![b"PEXPIRETIME".to_vec(), key.clone()],
            ]
        })
        .collect();
    let mut replies = c.pipeline(&reads).into_iter();
    keys.into_iter()
        .map(|key| {
            let digest = match replies.next() {
                Some(Reply::Array(digests)) => digests[0].text(),
                other => panic!("DEBUG DIGEST-VALUE gave {other:?}"),
            };
            let expiry = replies.next().expect("an expiry").int();
            (key, (digest, expiry))
        })
        .collect()
}

/// The keys written before the moves and left alone by the clients: a key of every kind Goblin
/// writes, in many slots, with its TTL, or none (a lock taken without a lease).
fn write_still_keys(c: &mut Conn) {
    for tag in 0..40 {
        let key = |name: &str| format!("{{still{tag}}}:{name}");
        let calls: Vec<Vec<String>> = vec![
            vec!["GOBLIN.INCREX".into(), key("incr"), "100000".into()],
            vec!["GOBLIN.INCREX".into(), key("incr"), "100000".into()],
            vec![
                "GOBLIN.ZWINDOW".into(),
                key("window"),
                "*".into(),
                "100000".into(),
                "5".into(),
                "a".into(),
            ],
            vec![
                "GOBLIN.ZWINDOW".into(),
                key("window"),
                "*".into(),
                "100000".into(),
                "5".into(),
                "b".into(),
            ],
            vec![
                "GOBLIN.ZWINDOW".into(),
                key("lease"),
                "*".into(),
                "600".into(),
                "2".into(),
                "h".into(),
                "FENCE".into(),
            ],
            vec![
                "GOBLIN.LOCK".into(),
                key("lock"),
                "holder".into(),
                "600000".into(),
                "FENCE".into(),
            ],
            vec![
                "GOBLIN.LOCK".into(),
                key("forever"),
                "holder".into(),
                "0".into(),
            ],
            vec![
                "GOBLIN.GCRA".into(),
                key("gcra"),
                "10".into(),
                "1".into(),
                "60".into(),
            ],
            vec![
                "GOBLIN.SWINDOW".into(),
                key("swindow"),
                "600".into(),
                "100".into(),
            ],
            vec!["GOBLIN.FWINDOW".into(), key("fwindow"), "600000".into()],
            vec![
                "INCREX".into(),
                key("standin"),
                "BYFLOAT".into(),
                "1.5".into(),
                "PX".into(),
                "600000".into(),
            ],
        ];
        for call in &calls {
            let reply = c.call(call);
            assert!(!reply.is_error(), "{call:?}: {reply:?}");
        }
    }
}

/// The still keys of a digest map.
fn still(all: &BTreeMap<Vec<u8>, (String, i64)>) -> BTreeMap<Vec<u8>, (String, i64)> {
    all.iter()
        .filter(|(key, _)| key.starts_with(b"{still"))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

/// A client process: its output lines as they come, killed if the test ends first.
struct Worker {
    label: &'static str,
    child: Child,
    lines: Receiver<String>,
}

impl Worker {
    fn start(label: &'static str, mut command: Command) -> Worker {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Worker {
            label,
            child,
            lines,
        }
    }

    /// The next line it prints.
    fn line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("{}: no line ({e})", self.label))
    }

    /// Its report, once it has stopped: the keys it counted and the rounds it made, every check
    /// it made passed.
    fn report(mut self) -> Report {
        let mut report = Report::default();
        let mut failures = Vec::new();
        loop {
            let line = self.line();
            match line.split_once(' ') {
                _ if line == "done" => break,
                Some(("rounds", n)) => report.rounds = n.parse().expect("rounds"),
                Some(("model", model)) => {
                    let (key, count) = model.rsplit_once(' ').expect("model KEY COUNT");
                    report
                        .model
                        .push((key.to_string(), count.parse().expect("a count")));
                }
                Some(("failure", what)) => failures.push(what.to_string()),
                _ => panic!("{}: {line}", self.label),
            }
        }
        let status = self.child.wait().expect("wait");
        assert!(failures.is_empty(), "{}: {failures:#?}", self.label);
        assert!(status.success(), "{}: {status}", self.label);
        report
    }
}

/// What a client counted.
#[derive(Default)]
struct Report {
    rounds: u64,
    /// Keys and what they hold by its count.
    model: Vec<(String, i64)>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The two client processes, on the cluster `nodes`, until `stop` exists.
fn start_workers(nodes: &[&Server], stop: &std::path::Path) -> (Worker, Worker) {
    let addresses = nodes
        .iter()
        .map(|node| format!("127.0.0.1:{}", node.port))
        .collect::<Vec<_>>()
        .join(",");
    let root = repo_root();
    let mut python = Command::new(venv_tool("venv-locks", "python"));
    python
        .arg(root.join("python/tests/migration_clients.py"))
        .env("PYTHONPATH", root.join("python/src"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("GOBLIN_TEST_CLUSTER", &addresses)
        .env("GOBLIN_TAG", "py")
        .env("GOBLIN_STOP", stop);
    node::built();
    let mut nodejs = Command::new("node");
    nodejs
        .arg("test/workers/migration.mjs")
        .current_dir(node::package_dir())
        .env("GOBLIN_TEST_CLUSTER", &addresses)
        .env("GOBLIN_TAG", "nd")
        .env("GOBLIN_STOP", stop);
    let python = Worker::start("redis-py RedisCluster", python);
    let nodejs = Worker::start("ioredis Cluster", nodejs);
    for worker in [&python, &nodejs] {
        assert_eq!(worker.line(), "ready", "{}", worker.label);
    }
    (python, nodejs)
}

/// What `node` says of its waiters: (`goblin_waiting`, `goblin_waiting_keys`).
fn waiting(node: &Server) -> (String, String) {
    let mut c = node.conn();
    (
        info_field(&mut c, "goblin", "goblin_waiting"),
        info_field(&mut c, "goblin", "goblin_waiting_keys"),
    )
}

/// Waits until the four parked waiters (two of each client) stand in line on `owner`, and
/// nobody stands in line on `other`, nor does it keep a line.
fn waiters_on(owner: &Server, other: &Server) {
    let mut seen = Default::default();
    assert!(
        wait_until(Duration::from_secs(30), || {
            seen = (waiting(owner), waiting(other));
            seen.0 .0 == "4" && seen.1 == ("0".to_string(), "0".to_string())
        }),
        "(waiting, waiting_keys) on the owner and the other node: {seen:?}"
    );
}

/// The keys a client counted, read on their owner, as it counted them, each with its TTL.
fn check_models(c: &mut Conn, report: &Report, label: &str) {
    assert!(report.rounds > 0, "{label}");
    assert_eq!(report.model.len(), 5, "{label}");
    for (key, counted) in &report.model {
        let held = if key.ends_with(":zwindow") {
            c.call(&["ZCARD", key]).int()
        } else {
            c.call(&["GET", key])
                .text()
                .parse::<i64>()
                .expect("a count")
        };
        assert_eq!(held, *counted, "{label}: {key}");
        let expiry = c.call(&["PEXPIRETIME", key]).int();
        assert!(
            expiry > server_ms(c),
            "{label}: {key} lost its TTL ({expiry})"
        );
    }
}

/// Every slot from the first primary to the second and back, under the two clients; with a
/// replica per primary if `replicas`.
fn slots_move_and_back_under_clients(flavor: Flavor, replicas: bool) {
    let first = cluster_node(flavor, &[]);
    assert!(has_atomic_slot_migration(&mut first.conn()));
    let primaries = vec![first, cluster_node(flavor, &[])];
    let replicas: Vec<Server> = (0..if replicas { 2 } else { 0 })
        .map(|_| cluster_node(flavor, &[]))
        .collect();
    form(&primaries, &replicas);
    let (a, b) = (&primaries[0], &primaries[1]);
    let nodes: Vec<&Server> = primaries.iter().chain(&replicas).collect();
    let mut ca = a.conn();
    write_still_keys(&mut ca);
    let before = still(&digests(&mut ca));
    // Nine keys a tag, and the tokens' keys of its fenced lease (the latest and the holder's) and
    // of its fenced lock.
    assert_eq!(
        before.len(),
        40 * 12,
        "the still keys and their tokens' keys"
    );

    let scratch = TempDir::new("migration");
    let stop = scratch.0.join("stop");
    let (python, nodejs) = start_workers(&primaries.iter().collect::<Vec<_>>(), &stop);
    waiters_on(a, b);

    let mut moves = Vec::new();
    for (from, to) in [(a, b), (b, a)] {
        let streamed = migrate_under_writes(from, to, &nodes);
        moves.push((streamed, to.conn().call(&["DBSIZE"]).int()));
        assert_eq!(
            still(&digests(&mut to.conn())),
            before,
            "the still keys on the new owner"
        );
        let mut old = from.conn();
        assert!(
            wait_until(Duration::from_secs(10), || old.call(&["DBSIZE"])
                == Reply::Int(0)),
            "keys left on the old owner"
        );
        waiters_on(to, from);
    }

    std::fs::write(&stop, b"").expect("the stop file");
    let reports = [("redis-py", python.report()), ("ioredis", nodejs.report())];
    for (label, report) in &reports {
        check_models(&mut ca, report, label);
    }
    // The figures, for `--nocapture`.
    eprintln!(
        "{flavor:?}{}: moves (rounds written while streaming, keys on the new owner) {moves:?}; \
         rounds of every writing command: redis-py {}, ioredis {}; 4 waiters parked",
        if replicas.is_empty() {
            ""
        } else {
            " with replicas"
        },
        reports[0].1.rounds,
        reports[1].1.rounds
    );
    assert_eq!(waiting(a), ("0".to_string(), "0".to_string()));
    assert_eq!(still(&digests(&mut ca)), before);
    for (replica, primary) in replicas.iter().zip(&primaries) {
        let mut c = primary.conn();
        c.call(&["PUBLISH", "settle", "x"]);
        assert_eq!(c.call(&["WAIT", "1", "10000"]), Reply::Int(1));
        let mut r = replica.conn();
        // A replica redirects reads to its primary unless the connection asks to read here.
        assert_eq!(r.call(&["READONLY"]), Reply::Status("OK".into()));
        assert!(
            wait_until(Duration::from_secs(10), || dataset(&mut r)
                == dataset(&mut c)),
            "replica {} differs from its primary {}",
            replica.port,
            primary.port
        );
    }
}

on_servers_with! {
    atomic_slot_migration,
    "atomic slot migration (CLUSTER MIGRATESLOTS) is Valkey 9's",
    /// Every slot to the other primary and back under redis-py's and ioredis's cluster clients.
    fn every_slot_moves_and_back_under_the_clients(flavor: Flavor) {
        slots_move_and_back_under_clients(flavor, false);
    }

    /// The same with a replica per primary, which ends as its primary.
    fn every_slot_moves_and_back_with_replicas(flavor: Flavor) {
        slots_move_and_back_under_clients(flavor, true);
    }
}

on_servers_with! {
    atomic_slot_migration,
    "atomic slot migration (CLUSTER MIGRATESLOTS) is Valkey 9's",
    /// The source's clock runs 2 s ahead of the target's, within a `fence-margin-ms` of 3 s: a
    /// token minted on the target after the move exceeds the source's, though the key's stored
    /// token is gone (its lease released and ended), as a promoted replica's do. Without the
    /// target starting a margin ahead on taking the slots over, its clock alone would mint below.
    fn tokens_after_a_move_exceed_the_sources(flavor: Flavor) {
        let first = cluster_node(flavor, &["fence-margin-ms", "3000", "fence-clock-offset-ms", "2000"]);
        assert!(has_atomic_slot_migration(&mut first.conn()));
        let nodes = vec![first, cluster_node(flavor, &["fence-margin-ms", "3000"])];
        form(&nodes, &[]);
        let (a, b) = (&nodes[0], &nodes[1]);
        let all: Vec<&Server> = nodes.iter().collect();
        let (mut ca, mut cb) = (a.conn(), b.conn());
        // Past the source's own start margin: its tokens are its clock, 2 s ahead.
        assert!(
            wait_until(Duration::from_secs(10), || {
                let token = ca.call(&["GOBLIN.LOCK", "{f}:probe", "p", "1", "FENCE"]).int();
                token - server_ms(&mut ca) * 1000 < 2_500_000
            }),
            "the source's tokens stayed its start margin ahead"
        );
        let key = "{f}:lock";
        let kept = "{f}\0goblin:fence\0{f}:lock";
        let mut tokens = vec![ca.call(&["GOBLIN.LOCK", key, "h1", "100", "FENCE"]).int()];
        assert_eq!(ca.call(&["GOBLIN.CAD", key, "h1"]), Reply::Int(1));
        assert!(
            wait_until(Duration::from_secs(10), || ca.call(&["EXISTS", kept]) == Reply::Int(0)),
            "the stored token never expired"
        );
        for (from, to, c) in [(a, b, &mut cb), (b, a, &mut ca)] {
            start_migration(from, to);
            assert_eq!(migration_reaches(&mut from.conn(), &["success", "failed", "cancelled"]), "success");
            owned_by(to, &all);
            let token = c.call(&["GOBLIN.LOCK", key, "h", "100", "FENCE"]).int();
            assert!(token > *tokens.last().expect("a token"), "{token} after {tokens:?}");
            tokens.push(token);
            assert_eq!(c.call(&["GOBLIN.CAD", key, "h"]), Reply::Int(1));
        }
    }
}

/// How a migration held in its stream is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interruption {
    /// `CLUSTER CANCELSLOTMIGRATIONS` on the source.
    Cancelled,
    /// The target's connection from the source killed: both ends fail the migration.
    Failed,
}

/// The id of the target's client that applies a slot import (`CLIENT LIST`'s flag `i`).
fn import_client(c: &mut Conn) -> String {
    let list = c.call(&["CLIENT", "LIST"]).text();
    let line = list
        .lines()
        .find(|line| line.split(' ').any(|field| field == "flags=i"))
        .unwrap_or_else(|| panic!("no slot import client:\n{list}"));
    line.split(' ')
        .find_map(|field| field.strip_prefix("id="))
        .expect("an id")
        .to_string()
}

/// A migration held while its slots stream, with writes, a waiter granted by a timer on the
/// source and one parked, then stopped as `how` says: the target, which held the imported keys
/// before it owned them and did nothing with them, drops them; the source goes on as if nothing
/// had happened; and the slots move afterwards all the same.
fn interrupted_migration_leaves_both_nodes_as_they_were(flavor: Flavor, how: Interruption) {
    let first = cluster_node(flavor, &[]);
    assert!(has_atomic_slot_migration(&mut first.conn()));
    let nodes = vec![first, cluster_node(flavor, &[])];
    form(&nodes, &[]);
    let (a, b) = (&nodes[0], &nodes[1]);
    let all: Vec<&Server> = nodes.iter().collect();
    let (mut ca, mut cb) = (a.conn(), b.conn());
    write_still_keys(&mut ca);
    let before = still(&digests(&mut ca));
    let holder = ca
        .call(&["GOBLIN.LOCK", "{c}:held", "holder", "600000", "FENCE"])
        .int();
    let mut parked = a.conn();
    parked
        .send(&["GOBLIN.BLOCK", "{c}:held", "w1", "600000", "60", "FENCE"])
        .expect("send");
    let brief = ca
        .call(&["GOBLIN.LOCK", "{c}:brief", "holder", "600000", "FENCE"])
        .int();
    let mut granted = a.conn();
    granted
        .send(&["GOBLIN.BLOCK", "{c}:brief", "w2", "600000", "60", "FENCE"])
        .expect("send");
    assert!(wait_until(Duration::from_secs(10), || waiting(a).0 == "2"));
    let target_info = info_section(&mut cb, "goblin");

    assert_eq!(
        ca.call(&["DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "1"]),
        Reply::Status("OK".into())
    );
    start_migration(a, b);
    migration_reaches(&mut ca, &["waiting-to-pause"]);
    for i in 1..=50 {
        assert_eq!(
            ca.call(&["GOBLIN.INCREX", "{c}:counter", "100000"]),
            Reply::Int(i)
        );
    }
    // The brief lock, cut short, expires while the slots stream: its waiter is granted on the
    // source, by a timer.
    assert_eq!(
        ca.call(&["GOBLIN.EXTEND", "{c}:brief", "holder", "200", "REPLACE"]),
        Reply::Int(1)
    );
    let token = match granted.reply_within(Duration::from_secs(30)) {
        Some(Reply::Int(token)) => token,
        other => panic!("the waiter on the brief lock got {other:?}"),
    };
    assert!(token > brief);
    // The target holds the keys it imports, and Goblin there neither counts them nor acts:
    // `INFO goblin` as it was, nobody waiting, no line.
    assert_eq!(
        migration_reaches(&mut ca, &["waiting-to-pause"]),
        "waiting-to-pause"
    );
    assert_eq!(info_section(&mut cb, "goblin"), target_info);
    assert_eq!(waiting(b), ("0".to_string(), "0".to_string()));

    let ended = match how {
        Interruption::Cancelled => {
            assert_eq!(
                ca.call(&["CLUSTER", "CANCELSLOTMIGRATIONS"]),
                Reply::Status("OK".into())
            );
            "cancelled"
        }
        Interruption::Failed => {
            let id = import_client(&mut cb);
            assert_eq!(cb.call(&["CLIENT", "KILL", "ID", &id]), Reply::Int(1));
            "failed"
        }
    };
    let terminal = ["success", "failed", "cancelled"];
    assert_eq!(migration_reaches(&mut ca, &terminal), ended);
    assert_eq!(migration_reaches(&mut cb, &terminal), "failed");
    assert!(
        wait_until(Duration::from_secs(30), || cb.call(&["DBSIZE"])
            == Reply::Int(0)),
        "the target kept the keys of a {ended} import"
    );
    assert_eq!(info_section(&mut cb, "goblin"), target_info);
    // The source: as before, and on.
    assert_eq!(still(&digests(&mut ca)), before);
    assert_eq!(ca.call(&["GET", "{c}:counter"]), bulk("50"));
    assert_eq!(ca.call(&["GET", "{c}:brief"]), bulk("w2"));
    assert_eq!(
        parked.reply_within(Duration::from_millis(300)),
        None,
        "the parked waiter was answered"
    );
    assert_eq!(waiting(a).0, "1");
    assert_eq!(
        ca.call(&["GOBLIN.CAD", "{c}:held", "holder"]),
        Reply::Int(1)
    );
    match parked.reply_within(Duration::from_secs(10)) {
        Some(Reply::Int(token)) => assert!(token > holder),
        other => panic!("the parked waiter got {other:?}"),
    }
    assert_eq!(ca.call(&["GOBLIN.CAD", "{c}:held", "w1"]), Reply::Int(1));

    assert_eq!(
        ca.call(&["DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "0"]),
        Reply::Status("OK".into())
    );
    start_migration(a, b);
    assert_eq!(migration_reaches(&mut ca, &terminal), "success");
    owned_by(b, &all);
    assert_eq!(still(&digests(&mut cb)), before);
    assert_eq!(cb.call(&["GET", "{c}:counter"]), bulk("50"));
}

/// A whole `INFO` section, as text.
fn info_section(c: &mut Conn, section: &str) -> String {
    c.call(&["INFO", section]).text()
}

on_servers_with! {
    atomic_slot_migration,
    "atomic slot migration (CLUSTER MIGRATESLOTS) is Valkey 9's",
    /// Cancelled midway by `CLUSTER CANCELSLOTMIGRATIONS`.
    fn a_cancelled_migration_leaves_both_nodes_as_they_were(flavor: Flavor) {
        interrupted_migration_leaves_both_nodes_as_they_were(flavor, Interruption::Cancelled);
    }

    /// Failed midway: the target loses its connection from the source.
    fn a_failed_migration_leaves_both_nodes_as_they_were(flavor: Flavor) {
        interrupted_migration_leaves_both_nodes_as_they_were(flavor, Interruption::Failed);
    }
}

on_servers_with! {
    atomic_slot_migration,
    "atomic slot migration (CLUSTER MIGRATESLOTS) is Valkey 9's",
    /// When a slot moves, the waiters parked on the source for its keys are answered at once
    /// with the redirect a BLPOP waiter on the same slot gets, `-MOVED slot host:port` of the new
    /// owner: GOBLIN.BLOCK's and GOBLIN.BZWINDOW's alike, never granted there and never left to
    /// their timeout (a minute). The source forgets them; the new owner holds the lock and the
    /// lease as they were, and grants them to the waiters that wait again there once their
    /// holders release them, with larger tokens.
    fn waiters_on_a_moved_slot_get_the_redirect_blpop_gets(flavor: Flavor) {
        let first = cluster_node(flavor, &[]);
        assert!(has_atomic_slot_migration(&mut first.conn()));
        let nodes = vec![first, cluster_node(flavor, &[])];
        form(&nodes, &[]);
        let (a, b) = (&nodes[0], &nodes[1]);
        let (mut ca, mut cb) = (a.conn(), b.conn());
        let slot = ca.call(&["CLUSTER", "KEYSLOT", "{w}"]).int().to_string();
        let lock = ca.call(&["GOBLIN.LOCK", "{w}:lock", "holder", "600000", "FENCE"]).int();
        let lease = ca.call(&["GOBLIN.ZWINDOW", "{w}:lease", "*", "600", "1", "holder", "FENCE"]).int();
        let before = digests(&mut ca);
        let calls: [&[&str]; 3] = [
            &["GOBLIN.BLOCK", "{w}:lock", "waiter", "600000", "60", "FENCE"],
            &["GOBLIN.BZWINDOW", "{w}:lease", "600", "1", "waiter", "60", "FENCE"],
            &["BLPOP", "{w}:list", "60"],
        ];
        let mut waiters: Vec<(&[&str], Conn)> = calls
            .iter()
            .map(|call| {
                let mut c = a.conn();
                c.send(call).expect("send");
                (*call, c)
            })
            .collect();
        assert!(
            wait_until(Duration::from_secs(10), || info_field(&mut ca, "clients", "blocked_clients") == "3"),
            "the three waiters never blocked"
        );
        assert_eq!(waiting(a), ("2".to_string(), "2".to_string()));

        let target = node_id(&mut cb);
        let reply = ca.call(&["CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", &slot, &slot, "NODE", &target]);
        assert_eq!(reply, Reply::Status("OK".into()));
        assert_eq!(migration_reaches(&mut ca, &["success", "failed", "cancelled"]), "success");
        let moved = Reply::Error(format!("MOVED {slot} 127.0.0.1:{}", b.port));
        for (call, c) in &mut waiters {
            assert_eq!(c.reply_within(Duration::from_secs(10)).as_ref(), Some(&moved), "{call:?}");
        }
        assert_eq!(waiting(a), ("0".to_string(), "0".to_string()));
        assert_eq!(ca.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot]), Reply::Int(0));
        assert_eq!(digests(&mut cb), before, "the lock and the lease on the new owner");

        for (call, c) in waiters.iter_mut().take(2) {
            *c = b.conn();
            c.send(call).expect("send");
        }
        assert!(
            wait_until(Duration::from_secs(10), || waiting(b).0 == "2"),
            "the waiters never stood in line on the new owner"
        );
        assert_eq!(cb.call(&["GOBLIN.LOCK", "{w}:lock", "other", "1000"]), Reply::Nil);
        for (key, held) in [("{w}:lock", lock), ("{w}:lease", lease)] {
            assert_eq!(cb.call(&["GOBLIN.CAD", key, "holder"]), Reply::Int(1));
            let c = &mut waiters[usize::from(key == "{w}:lease")].1;
            match c.reply_within(Duration::from_secs(10)) {
                Some(Reply::Int(token)) => assert!(token > held, "{key}: {token} after {held}"),
                other => panic!("{key}: the waiter got {other:?}"),
            }
        }
    }
}

on_servers_with! {
    atomic_slot_migration,
    "atomic slot migration (CLUSTER MIGRATESLOTS) is Valkey 9's",
    /// The grants Goblin writes on the source while the slots stream, for waiters whose turn
    /// comes there without a command of theirs (after another client's release, or on a timer
    /// when a lock expires), reach the target once, with their fencing tokens' keys and their
    /// expiries, as a command's own writes do: after the move the target holds exactly what the
    /// source held, and the waiters hold the locks and the lease there.
    fn grants_made_while_the_slots_stream_reach_the_target(flavor: Flavor) {
        let first = cluster_node(flavor, &[]);
        assert!(has_atomic_slot_migration(&mut first.conn()));
        let nodes = vec![first, cluster_node(flavor, &[])];
        form(&nodes, &[]);
        let (a, b) = (&nodes[0], &nodes[1]);
        let all: Vec<&Server> = nodes.iter().collect();
        let (mut ca, mut cb) = (a.conn(), b.conn());
        let held = ca.call(&["GOBLIN.LOCK", "{g}:held", "holder", "600000", "FENCE"]).int();
        let lease = ca.call(&["GOBLIN.ZWINDOW", "{g}:sem", "*", "600", "1", "holder", "FENCE"]).int();
        let park = |call: &[&str]| {
            let mut c = a.conn();
            c.send(call).expect("send");
            c
        };
        let brief = ca.call(&["GOBLIN.LOCK", "{g}:brief", "holder", "600000", "FENCE"]).int();
        let mut on_held = park(&["GOBLIN.BLOCK", "{g}:held", "w1", "600000", "60", "FENCE"]);
        let mut on_sem = park(&["GOBLIN.BZWINDOW", "{g}:sem", "600", "1", "w2", "60", "FENCE"]);
        let mut on_brief = park(&["GOBLIN.BLOCK", "{g}:brief", "w3", "600000", "60", "FENCE"]);
        assert!(wait_until(Duration::from_secs(10), || waiting(a).0 == "3"));

        assert_eq!(ca.call(&["DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "1"]), Reply::Status("OK".into()));
        start_migration(a, b);
        migration_reaches(&mut ca, &["waiting-to-pause"]);
        // While the slots stream: a lock cut short to expire under its waiter, two holders'
        // releases, and a counter.
        assert_eq!(ca.call(&["GOBLIN.EXTEND", "{g}:brief", "holder", "200", "REPLACE"]), Reply::Int(1));
        assert_eq!(ca.call(&["GOBLIN.CAD", "{g}:held", "holder"]), Reply::Int(1));
        assert_eq!(ca.call(&["GOBLIN.CAD", "{g}:sem", "holder"]), Reply::Int(1));
        for i in 1..=50 {
            assert_eq!(ca.call(&["GOBLIN.INCREX", "{g}:counter", "100000"]), Reply::Int(i));
        }
        let mut tokens = Vec::new();
        for (what, c, before) in [("held", &mut on_held, held), ("sem", &mut on_sem, lease), ("brief", &mut on_brief, brief)] {
            match c.reply_within(Duration::from_secs(30)) {
                Some(Reply::Int(token)) => {
                    assert!(token > before, "{what}: {token} after {before}");
                    tokens.push(token);
                }
                other => panic!("the waiter on {what} got {other:?}"),
            }
        }
        assert_eq!(waiting(a), ("0".to_string(), "0".to_string()));
        // Still streaming: the grants went to the target in the stream, not in the snapshot.
        assert_eq!(migration_reaches(&mut ca, &["waiting-to-pause"]), "waiting-to-pause");
        let source = digests(&mut ca);

        assert_eq!(ca.call(&["DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "0"]), Reply::Status("OK".into()));
        assert_eq!(migration_reaches(&mut ca, &["success", "failed", "cancelled"]), "success");
        owned_by(b, &all);
        assert_eq!(digests(&mut cb), source, "the target's keys against the source's");
        assert_eq!(cb.call(&["GET", "{g}:counter"]), bulk("50"));
        // The waiters hold there, and the tokens go on rising.
        for (key, holder) in [("{g}:held", "w1"), ("{g}:brief", "w3")] {
            assert_eq!(cb.call(&["GOBLIN.LOCK", key, "other", "1000"]), Reply::Nil, "{key}");
            assert_eq!(cb.call(&["GOBLIN.CAD", key, holder]), Reply::Int(1), "{key}");
        }
        assert_eq!(cb.call(&["GOBLIN.ZWINDOW", "{g}:sem", "*", "600", "1", "other"]), Reply::Int(0));
        assert_eq!(cb.call(&["GOBLIN.CAD", "{g}:sem", "w2"]), Reply::Int(1));
        let after = cb.call(&["GOBLIN.LOCK", "{g}:held", "other", "1000", "FENCE"]).int();
        assert!(tokens.iter().all(|token| after > *token), "{after} after {tokens:?}");
    }
}

on_every_server! {
    /// Valkey's module options go only to a server that offers them: on Valkey 9.1, atomic slot
    /// migration is declared (and Valkey lists it); a Redis server gets Redis's option alone.
    fn valkey_options_only_where_the_server_offers_them(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let options = goblin_options(&mut c);
        if has_atomic_slot_migration(&mut c) {
            assert_eq!(options, "[no-implicit-signal-modified|handle-atomic-slot-migration]");
        } else {
            assert_eq!(options, "[no-implicit-signal-modified]");
        }
    }
}
