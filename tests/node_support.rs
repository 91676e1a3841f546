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
    eprintln!(
        "{label}: {:.1} s: {}",
        started.elapsed().as_secs_f64(),
        output
            .lines()
            .filter(|line| line.starts_with("# pass") || line.starts_with("# fail"))
            .collect::<Vec<_>>()
            .join(" | ")
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
    let expected: BTreeMap<String, u32> = [
        ("tests", tests),
        ("pass", tests),
        ("fail", 0),
        ("cancelled", 0),
        ("skipped", 0),
        ("todo", 0),
    ]
    .into_iter()
    .map(|(name, n)| (name.to_string(), n))
    .collect();
    assert_eq!(counts, expected, "{label}:\n{output}");
}

/// Runs the package's own test `file` (node/test/) with `env`: exactly `tests` pass.
pub fn run_tests(label: &str, file: &str, env: &[(&str, String)], tests: u32) -> String {
    let output = run_node(label, &["--test", file], env);
    assert_all_passed(label, &output, tests);
    output
}

/// `INFO commandstats`: calls by command name (lowercase, as the server lists them).
pub fn command_calls(conn: &mut Conn) -> BTreeMap<String, u64> {
    let info = conn.call(&["INFO", "commandstats"]).text();
    info.lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = stats
                .split(',')
                .find_map(|field| field.strip_prefix("calls="))?
                .parse()
                .ok()?;
            Some((name.to_string(), calls))
        })
        .collect()
}

/// `INFO errorstats`: error replies by prefix (`MOVED`, `ERR`, ...).
pub fn error_counts(conn: &mut Conn) -> BTreeMap<String, u64> {
    let info = conn.call(&["INFO", "errorstats"]).text();
    info.lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("errorstat_")?.split_once(':')?;
            Some((
                name.to_string(),
                stats.strip_prefix("count=")?.trim().parse().ok()?,
            ))
        })
        .collect()
}

/// The commandstats and errorstats of `servers`, summed.
pub fn stats(servers: &[&Server]) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let (mut calls, mut errors) = (BTreeMap::new(), BTreeMap::new());
    for server in servers {
        let mut conn = server.conn();
        for (name, n) in command_calls(&mut conn) {
            *calls.entry(name).or_default() += n;
        }
        for (name, n) in error_counts(&mut conn) {
            *errors.entry(name).or_default() += n;
        }
    }
    (calls, errors)
}

/// No script ran nor was loaded (nor a transaction, where `transactions` is false), and each of
/// `goblin` did some of the work.
pub fn assert_no_scripts(
    label: &str,
    calls: &BTreeMap<String, u64>,
    goblin: &[&str],
    transactions: bool,
) {
    let mut forbidden = vec![
        "eval",
        "evalsha",
        "eval_ro",
        "evalsha_ro",
        "fcall",
        "fcall_ro",
        "script|load",
    ];
    if !transactions {
        forbidden.extend(["multi", "exec"]);
    }
    for command in forbidden {
        assert_eq!(
            calls.get(command).copied().unwrap_or(0),
            0,
            "{label}: {command} was called: {calls:?}"
        );
    }
    for command in goblin {
        assert!(
            calls.get(*command).copied().unwrap_or(0) > 0,
            "{label}: {command} was never called: {calls:?}"
        );
    }
}

/// Three primaries, each loading the module, the slots split in three, as tests/cluster.rs
/// builds its cluster (cluster nodes cannot follow a plain replica: none).
pub fn start_cluster(flavor: Flavor) -> Vec<Server> {
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

/// A path inside the repository, as text.
pub fn text(path: &Path) -> String {
    path.to_str().expect("a UTF-8 path").to_string()
}
