//! What the Node drivers (tests/node_*.rs) share, each including it as `mod node;`: the package
//! in node/ built once per test binary, `node --test` run with the servers' addresses in the
//! environment and its TAP counts read, the servers' commandstats and errorstats, and a
//! three-node cluster. Compiled alone too, as a test binary with no tests.
#![allow(dead_code)]

use goblin_testkit::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The package's folder.
pub fn package_dir() -> PathBuf {
    repo_root().join("node")
}

/// `host:port` of a server, as the Node tests read it.
pub fn address(server: &Server) -> String {
    format!("127.0.0.1:{}", server.port)
}

/// `host:port,...` of several servers.
pub fn addresses(servers: &[Server]) -> String {
    servers.iter().map(address).collect::<Vec<_>>().join(",")
}

/// Builds node/dist once per test binary, from the sources as they are (scripts/node.sh installed
/// the pinned packages: make test runs it first).
pub fn built() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        assert!(
            package_dir().join("node_modules/typescript").exists(),
            "no node/node_modules (run `make test`, which runs scripts/servers.sh and so scripts/node.sh)"
        );
        let output = Command::new("node")
            .arg(package_dir().join("scripts/build.cjs"))
            .output()
            .expect("run node");
        assert!(
            output.status.success(),
            "building node/ failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    });
}

/// The most a Node test run may take before it is killed as hung.
pub const NODE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Runs `node <args>` in node/ with `env`, to its end; its output, once it exited with success.
pub fn run_node(label: &str, args: &[&str], env: &[(&str, String)]) -> String {
    built();
    let started = Instant::now();
    let mut command = Command::new("node");
    command.args(args).current_dir(package_dir());
    for (name, value) in env {
        command.env(name, value);
    }
    let (status, output) = run_logged(label, &mut command, NODE_TIMEOUT);
    let summary: Vec<&str> = output
        .lines()
        .filter(|line| line.starts_with("# pass") || line.starts_with("# fail"))
        .collect();
    eprintln!(
        "{label}: {:.1} s: {}",
        started.elapsed().as_secs_f64(),
        summary.join(" | ")
    );
    assert!(
        status.success(),
        "{label}: node {args:?} failed ({status}):\n{output}"
    );
    output
}

/// The closing counts of `node --test` (TAP): tests, suites, pass, fail, cancelled, skipped, todo.
pub fn tap_counts(output: &str) -> BTreeMap<String, u32> {
    output
        .lines()
        .filter_map(|line| {
            let (name, value) = line.strip_prefix("# ")?.split_once(' ')?;
            Some((name.to_string(), value.trim().parse().ok()?))
        })
        .filter(|(name, _)| {
            ["tests", "pass", "fail", "cancelled", "skipped", "todo"].contains(&name.as_str())
        })
        .collect()
}

/// Exactly `tests` ran, and all passed: none failed, was cancelled, skipped or left to do.
pub fn assert_all_passed(label: &str, output: &str, tests: u32) {
    let counts = tap_counts(output);
    let count = |name: &str| counts.get(name).copied();
    assert_eq!(
        ["tests", "pass", "fail", "cancelled", "skipped", "todo"].map(count),
        [tests, tests, 0, 0, 0, 0].map(Some),
        "{label}: tests, pass, fail, cancelled, skipped and todo:\n{output}"
    );
}

/// Runs the package's own test `file` (node/test/) with `env`: exactly `tests` pass.
pub fn run_tests(label: &str, file: &str, env: &[(&str, String)], tests: u32) -> String {
    let output = run_node(label, &["--test", file], env);
    assert_all_passed(label, &output, tests);
    output
}

/// No script ran nor was loaded, and no transaction (`MULTI`/`EXEC`) either; and each of
/// `goblin` did some of the work.
pub fn assert_no_scripts(label: &str, calls: &BTreeMap<String, u64>, goblin: &[&str]) {
    let scripted = "eval evalsha eval_ro evalsha_ro fcall fcall_ro script|load multi exec";
    let ran: Vec<_> = calls
        .iter()
        .filter(|(name, n)| **n > 0 && scripted.split(' ').any(|command| command == name.as_str()))
        .collect();
    assert!(
        ran.is_empty(),
        "{label}: a script or a transaction ran: {ran:?}"
    );
    let idle: Vec<_> = goblin
        .iter()
        .filter(|name| calls.get(**name).copied().unwrap_or(0) == 0)
        .collect();
    assert!(idle.is_empty(), "{label}: {idle:?} never called: {calls:?}");
}

/// A cluster of `n` primaries, each loading the module, the 16,384 slots split evenly between
/// them in order; once every node sees all of them and says `cluster_state:ok`. Cluster nodes
/// cannot follow a plain replica: none.
pub fn start_cluster(flavor: Flavor, n: usize) -> Vec<Server> {
    let nodes: Vec<Server> = (0..n)
        .map(|_| Server::builder(flavor).cluster().without_replica().start())
        .collect();
    for (i, node) in nodes.iter().enumerate() {
        let (first, last) = (16384 * i / n, 16384 * (i + 1) / n - 1);
        let mut conn = node.conn();
        let added = conn.call(&[
            "CLUSTER",
            "ADDSLOTSRANGE",
            &first.to_string(),
            &last.to_string(),
        ]);
        assert_eq!(
            added,
            Reply::Status("OK".into()),
            "{flavor:?}: slots {first}-{last}"
        );
        if i > 0 {
            nodes[0]
                .conn()
                .call(&["CLUSTER", "MEET", "127.0.0.1", &node.port.to_string()]);
        }
    }
    let formed = |node: &Server| {
        let mut conn = node.conn();
        wait_until(Duration::from_secs(30), || {
            let info = conn.call(&["CLUSTER", "INFO"]).text();
            info.contains("cluster_state:ok") && info.contains(&format!("cluster_known_nodes:{n}"))
        })
    };
    assert!(
        nodes.iter().all(formed),
        "{flavor:?}: the cluster never formed"
    );
    nodes
}

/// A path inside the repository, as text.
pub fn text(path: &Path) -> String {
    path.to_str().expect("a UTF-8 path").to_string()
}
