//! limits 5.8.0's own test suite, unmodified, against goblin_redis.limits (python/): its storage,
//! strategy and concurrency tests, sync and async (on coredis and on redis-py's asyncio), run on
//! one server and on a three-node cluster of every server. The sdist is pinned by sha256
//! (scripts/python.sh downloads it, python/tests/limits_suite.py checks and unpacks it afresh);
//! python/tests/limits_suite_plugin.py adds the Goblin storages to the suite's own storage
//! parametrization and keeps every socket on loopback.
//!
//! Every Goblin parameter must pass every test the suite gives it (a count per parameter, so
//! that nothing is silently deselected or skipped), and afterwards the servers' commandstats
//! must show that no decision ran a script or a transaction: no EVAL, EVALSHA, FCALL, MULTI or
//! EXEC, and the Goblin commands did the work.

use goblin_testkit::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn root() -> &'static Path {
    repo_root()
}

fn venv_python() -> PathBuf {
    venv_tool("venv-limits", "python")
}

/// How many of limits' tests each Goblin parameter gets: per sync storage, 9 in
/// TestConcreteStorages, 18 in the strategies' classes and 3 concurrency tests; per async one,
/// 9, 19 (the async sliding window has one test more) and 3.
const SYNC_TESTS: u32 = 30;
const ASYNC_TESTS: u32 = 31;

/// The most a run may take before it is killed as hung (it takes about 2 minutes).
const SUITE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, Default, PartialEq)]
struct Counts {
    passed: u32,
    failed: u32,
    skipped: u32,
    errors: u32,
    reruns: u32,
}

/// Runs the suite with `env` (GOBLIN_SUITE_SERVER or GOBLIN_SUITE_CLUSTER); its output, and the
/// counts the plugin printed, by parameter id.
fn run_suite(label: &str, env: &[(&str, String)]) -> (String, BTreeMap<String, Counts>) {
    let started = Instant::now();
    let mut command = Command::new(venv_python());
    command
        .arg(root().join("python/tests/limits_suite.py"))
        .arg("tests");
    for (name, value) in env {
        command.env(name, value);
    }
    let (status, output) = run_logged(
        &format!("{label}: the limits suite"),
        &mut command,
        SUITE_TIMEOUT,
    );
    let counts = parse_counts(&output);
    eprintln!(
        "{label}: limits suite in {:.0} s: {}",
        started.elapsed().as_secs_f64(),
        output
            .lines()
            .filter(|line| line.starts_with("goblin-suite: ")
                || (line.starts_with('=') && line.contains(" passed")))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    assert!(
        status.success(),
        "{label}: the limits suite failed ({status}):\n{output}"
    );
    (output, counts)
}

/// The plugin's lines: `goblin-suite: <id> passed=N failed=N skipped=N errors=N reruns=N`.
fn parse_counts(output: &str) -> BTreeMap<String, Counts> {
    let mut all = BTreeMap::new();
    for line in output.lines() {
        let Some(rest) = line.strip_prefix("goblin-suite: ") else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let id = fields.next().expect("an id").to_string();
        let mut counts = Counts::default();
        for field in fields {
            let (name, value) = field.split_once('=').expect("name=value");
            let value: u32 = value.parse().expect("a count");
            match name {
                "passed" => counts.passed = value,
                "failed" => counts.failed = value,
                "skipped" => counts.skipped = value,
                "errors" => counts.errors = value,
                "reruns" => counts.reruns = value,
                other => panic!("unknown count {other} in {line}"),
            }
        }
        all.insert(id, counts);
    }
    all
}

/// Every parameter in `expected` ran all its tests, and all passed.
fn assert_all_passed(
    label: &str,
    output: &str,
    counts: &BTreeMap<String, Counts>,
    expected: &[(&str, u32)],
) {
    for (id, tests) in expected {
        let got = counts
            .get(*id)
            .unwrap_or_else(|| panic!("{label}: no counts for {id}:\n{output}"));
        assert_eq!(
            (got.passed, got.failed, got.skipped, got.errors),
            (*tests, 0, 0, 0),
            "{label}: {id}: {got:?}, expected all {tests} passed:\n{output}"
        );
    }
    assert_eq!(counts.len(), expected.len(), "{label}: {counts:?}");
}

/// No decision ran as a script or inside a transaction, and the Goblin commands made them.
fn assert_native_decisions(label: &str, calls: &BTreeMap<String, u64>) {
    for forbidden in [
        "eval",
        "evalsha",
        "eval_ro",
        "evalsha_ro",
        "fcall",
        "fcall_ro",
        "multi",
        "exec",
    ] {
        assert_eq!(
            calls.get(forbidden).copied().unwrap_or(0),
            0,
            "{label}: the suite's run called {forbidden}: {calls:?}"
        );
    }
    for command in [
        "goblin.increx",
        "goblin.zwindow",
        "goblin.zwstats",
        "goblin.swindow",
        "goblin.swstats",
    ] {
        assert!(
            calls.get(command).copied().unwrap_or(0) > 0,
            "{label}: {command} was never called: {calls:?}"
        );
    }
}

on_every_server! {
    /// One server (with its replica: replica mode checks what Goblin replicated, too).
    fn limits_suite_on_one_server(flavor: Flavor) {
        let server = Server::start(flavor);
        let label = format!("{} (one server)", flavor.label());
        let (output, counts) = run_suite(&label, &[("GOBLIN_SUITE_SERVER", format!("127.0.0.1:{}", server.port))]);
        assert_all_passed(
            &label,
            &output,
            &counts,
            &[("goblin", SYNC_TESTS), ("goblin-coredis", ASYNC_TESTS), ("goblin-redispy", ASYNC_TESTS)],
        );
        assert_native_decisions(&label, &command_calls(&mut server.conn()));
    }
}

/// Three primaries, each loading the module, the slots split in three, built as tests/cluster.rs
/// builds its cluster (without the replicas: the suite needs none).
fn start_cluster(flavor: Flavor) -> Vec<Server> {
    // Cluster nodes: a node cannot follow a plain replica.
    let nodes: Vec<Server> = (0..3)
        .map(|_| Server::builder(flavor).cluster().without_replica().start())
        .collect();
    let ranges = [("0", "5460"), ("5461", "10922"), ("10923", "16383")];
    for (node, (first, last)) in nodes.iter().zip(ranges) {
        let reply = node.conn().call(&["CLUSTER", "ADDSLOTSRANGE", first, last]);
        assert_eq!(reply, Reply::Status("OK".into()));
    }
    let mut first = nodes[0].conn();
    for node in nodes.iter().skip(1) {
        first.call(&["CLUSTER", "MEET", "127.0.0.1", &node.port.to_string()]);
    }
    for node in &nodes {
        let mut c = node.conn();
        assert!(
            wait_until(Duration::from_secs(30), || {
                let info = c.call(&["CLUSTER", "INFO"]).text();
                info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:3")
            }),
            "{flavor:?}: the cluster never formed"
        );
    }
    nodes
}

on_every_server! {
    fn limits_suite_on_a_cluster(flavor: Flavor) {
        let nodes = start_cluster(flavor);
        let label = format!("{} (three-node cluster)", flavor.label());
        let addresses: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
        let (output, counts) = run_suite(&label, &[("GOBLIN_SUITE_CLUSTER", addresses.join(","))]);
        assert_all_passed(
            &label,
            &output,
            &counts,
            &[
                ("goblin-cluster", SYNC_TESTS),
                ("goblin-cluster-coredis", ASYNC_TESTS),
                ("goblin-cluster-redispy", ASYNC_TESTS),
            ],
        );
        let (calls, errors) = summed_stats(&nodes.iter().collect::<Vec<_>>());
        assert_native_decisions(&label, &calls);
        // Every client sent every command to the node that owns its key: coredis by the key we
        // give it, redis-py by the key positions the module declares (without COMMAND GETKEYS).
        assert_eq!(errors.get("MOVED").copied().unwrap_or(0), 0, "{label}: redirections: {errors:?}");
        assert_eq!(calls.get("command|getkeys").copied().unwrap_or(0), 0, "{label}: {calls:?}");
    }
}

on_every_server! {
    /// goblin_redis.limits' own tests (python/tests/test_storages.py): bad input, a cost above
    /// the limit, one command per decision, a server without the module, MODULE LIST refused,
    /// reset, wrapped errors.
    fn the_storages_own_tests(flavor: Flavor) {
        let server = Server::start(flavor);
        // Without the module: nothing to replicate, so no replica either.
        let bare = Server::builder(flavor).without_module().without_replica().start();
        let output = Command::new(venv_python())
            .args(["-m", "pytest", "-p", "no:cacheprovider", "-q"])
            .arg(root().join("python/tests/test_storages.py"))
            .current_dir(root().join("python"))
            .env("PYTHONPATH", root().join("python/src"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("GOBLIN_TEST_SERVER", format!("127.0.0.1:{}", server.port))
            .env("GOBLIN_TEST_BARE", format!("127.0.0.1:{}", bare.port))
            .output()
            .expect("run pytest");
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "{flavor:?}:\n{text}");
        assert!(text.contains(" passed") && !text.contains("skipped"), "{flavor:?}:\n{text}");
    }
}

/// How many tests python/tests/test_ratelimit.py holds: each must pass, none be skipped.
const RATELIMIT_TESTS: u32 = 51;

on_every_server! {
    /// goblin_redis.ratelimit (python/tests/test_ratelimit.py): the IETF fields rendered, bad
    /// input refused before sending, and GOBLIN.MGCRA beneath it: all or nothing, peeks that
    /// write nothing, refunds never beyond full, a key shared by two sets, the server's errors as
    /// redis-py's ResponseError, a server without the module as GoblinModuleError (MODULE LIST
    /// asked once per client), sync and asyncio.
    fn the_ratelimit_api(flavor: Flavor) {
        let server = Server::start(flavor);
        // Without the module: nothing to replicate, so no replica either.
        let bare = Server::builder(flavor).without_module().without_replica().start();
        let output = Command::new(venv_python())
            .args(["-m", "pytest", "-p", "no:cacheprovider", "-q"])
            .arg(root().join("python/tests/test_ratelimit.py"))
            .current_dir(root().join("python"))
            .env("PYTHONPATH", root().join("python/src"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("GOBLIN_TEST_SERVER", format!("127.0.0.1:{}", server.port))
            .env("GOBLIN_TEST_BARE", format!("127.0.0.1:{}", bare.port))
            .output()
            .expect("run pytest");
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "{flavor:?}:\n{text}");
        let summary = format!("{RATELIMIT_TESTS} passed in ");
        assert!(text.contains(&summary) && !text.contains("skipped"), "{flavor:?}: expected {summary}...:\n{text}");
        eprintln!("{}: test_ratelimit.py: {}", flavor.label(), text.lines().last().unwrap_or(""));
    }
}

/// goblin_redis.ratelimit on redis-py's cluster clients, sync and asyncio: six sets under six
/// hash tags, on more than one node, each charged all or nothing on the node that owns its
/// tag; a set across two slots (check_slots=False) refused by the client before it is sent.
const RATELIMIT_ON_A_CLUSTER: &str = r#"
import asyncio, os
import redis
import redis.asyncio.cluster
from redis.cluster import RedisCluster
from redis.exceptions import RedisClusterException
from goblin_redis.ratelimit import AsyncPolicySet, Policy, PolicySet, key, key_slot

ports = [int(p) for p in os.environ["NODES"].split(",")]
admin = {p: redis.Redis(port=p) for p in ports}
cluster = RedisCluster(host="127.0.0.1", port=ports[0])

def owner(name):
    return cluster.get_node_from_key(name).port

tags = ["user1", "user2", "user3", "user4", "user5", "user6"]
owners = set()
for tag in tags:
    limits = PolicySet(cluster, [Policy("minute", key(tag, "minute"), limit=3, period=60), Policy("hour", key(tag, "hour"), limit=100, period=3600)])
    fields = [[(s.remaining, s.reset_after) for s in limits.hit()] for _ in range(3)]
    assert fields == [[(2, 20), (99, 36)], [(1, 40), (98, 72)], [(0, 60), (97, 108)]], fields
    before = {k: admin[owner(k)].get(k) for k in (key(tag, "minute"), key(tag, "hour"))}
    refused = limits.hit()
    assert (refused.allowed, refused.retry_after) == (False, 20)
    assert [(s.remaining, s.reset_after) for s in refused] == [(0, 60), (97, 108)]
    assert {k: admin[owner(k)].get(k) for k in before} == before
    node = owner(key(tag, "minute"))
    owners.add(node)
    assert sorted(admin[node].keys(f"{{{tag}}}:*")) == [key(tag, "hour").encode(), key(tag, "minute").encode()]
    assert limits.refund(1)["minute"].remaining == 0
assert len(owners) > 1, owners  # the sets' keys fall on more than one node

apart = PolicySet(cluster, [Policy("a", "user1:a", limit=1, period=1), Policy("b", "user2:b", limit=1, period=1)], check_slots=False)
assert key_slot("user1:a") != key_slot("user2:b")
try:
    apart.hit()
    raise AssertionError("a set across slots ran")
except RedisClusterException as e:
    assert "same key slot" in str(e), e

async def run_async():
    client = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=ports[0])
    try:
        limits = AsyncPolicySet(client, [Policy("minute", key("async", "minute"), limit=3, period=60)])
        assert [s.remaining for s in await limits.hit(cost=3)] == [0]
        assert (await limits.peek()).retry_after == 20
    finally:
        await client.aclose()
asyncio.run(run_async())
print("ratelimit on a cluster: ok,", len(tags) * 5 + 2, "MGCRA calls")
"#;

/// Runs `script` with goblin_redis on the path and the ports of `nodes` in `NODES`; what it
/// printed, once it has exited with success.
fn python_on_cluster(flavor: Flavor, nodes: &[Server], script: &str) -> String {
    let ports: Vec<String> = nodes.iter().map(|n| n.port.to_string()).collect();
    let output = Command::new(venv_python())
        .arg("-c")
        .arg(script)
        .env("PYTHONPATH", root().join("python/src"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("NODES", ports.join(","))
        .output()
        .expect("run python");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{flavor:?}:\n{text}");
    text
}

/// The GOBLIN.MGCRA calls RATELIMIT_ON_A_CLUSTER makes: 5 per tag (3 hits, 1 refused, 1
/// refund) and 2 async ones.
const RATELIMIT_CLUSTER_CALLS: u64 = 32;

on_every_server! {
    fn the_ratelimit_api_on_a_cluster(flavor: Flavor) {
        let nodes = start_cluster(flavor);
        let text = python_on_cluster(flavor, &nodes, RATELIMIT_ON_A_CLUSTER);
        assert!(text.contains(&format!("ratelimit on a cluster: ok, {RATELIMIT_CLUSTER_CALLS} MGCRA calls")), "{flavor:?}:\n{text}");
        let (calls, errors) = summed_stats(&nodes.iter().collect::<Vec<_>>());
        assert_eq!(calls.get("goblin.mgcra").copied(), Some(RATELIMIT_CLUSTER_CALLS), "{flavor:?}: {calls:?}");
        // The module check: once per cluster client (the sync one and the asyncio one), on the
        // node the client routes MODULE LIST to, not once per call.
        assert_eq!(calls.get("module|list").copied(), Some(2), "{flavor:?}: {calls:?}");
        assert_eq!(errors.get("MOVED").copied().unwrap_or(0), 0, "{flavor:?}: redirections: {errors:?}");
        // GOBLIN.MGCRA's keys are movable (a count of key groups), so redis-py's cluster clients
        // ask COMMAND GETKEYS before each call, and before the one across two slots it refused.
        assert_eq!(
            calls.get("command|getkeys").copied(),
            Some(RATELIMIT_CLUSTER_CALLS + 1),
            "{flavor:?}: {calls:?}"
        );
    }
}

/// A slot moved under a client that still maps it to its old node: the old node answers MOVED,
/// and each client (redis-py, coredis with the key we give it, redis-py's asyncio) follows it
/// and decides on the new owner.
const FOLLOW_MOVED: &str = r#"
import asyncio, os, redis
import goblin_redis.limits
from limits.storage import storage_from_string

ports = [int(p) for p in os.environ["NODES"].split(",")]
admin = {p: redis.Redis(port=p) for p in ports}
uri = "goblin+cluster://" + ",".join(f"127.0.0.1:{p}" for p in ports)
key = "LIMITER/moved/5/1/minute"
stored = "GOBLIN:" + key
slot = admin[ports[0]].execute_command("CLUSTER", "KEYSLOT", stored)

def owner():
    for first, last, (host, port, *_), *_ in admin[ports[0]].execute_command("CLUSTER", "SLOTS"):
        if first <= slot <= last:
            return port

def move_slot():
    """The slot, empty, to the next node, as a migration hands it over: importing on the new
    owner and migrating on the old first, so that the new owner's SETSLOT NODE bumps its config
    epoch and no gossip from the old one can win the slot back; then told to every node, the new
    owner first, the old one next."""
    source = owner()
    admin[source].delete(stored)
    target = ports[(ports.index(source) + 1) % len(ports)]
    source_id = admin[source].execute_command("CLUSTER", "MYID")
    target_id = admin[target].execute_command("CLUSTER", "MYID")
    admin[target].execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    admin[source].execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    for port in [target, source] + [p for p in ports if p not in (target, source)]:
        admin[port].execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
    return source, target

def moved(port):
    return int(admin[port].info("errorstats").get("errorstat_MOVED", {}).get("count", 0))

def check(name, incr):
    admin[owner()].delete(stored)
    assert incr() == 1, name
    source, target = move_slot()
    before = moved(source)
    assert incr() == 1, name  # routed by the stale map: MOVED, then the new owner
    assert admin[target].get(stored) == b"1", name
    print(name, "followed", moved(source) - before, "MOVED")

sync = storage_from_string(uri)
check("redis-py", lambda: sync.incr(key, 60))
loop = asyncio.new_event_loop()
for implementation in ("coredis", "redispy"):
    storage = storage_from_string("async+" + uri, implementation=implementation)
    check(implementation, lambda: loop.run_until_complete(storage.incr(key, 60)))
"#;

on_every_server! {
    fn clients_follow_moved(flavor: Flavor) {
        let nodes = start_cluster(flavor);
        let text = python_on_cluster(flavor, &nodes, FOLLOW_MOVED);
        for client in ["redis-py", "coredis", "redispy"] {
            assert!(text.contains(&format!("{client} followed 1 MOVED")), "{flavor:?}:\n{text}");
        }
    }
}
