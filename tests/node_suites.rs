//! The third-party suites that CI cannot fetch (they are GitHub repositories, not registry
//! packages), run by hand on every server against goblin-redis (node/), their test files
//! unmodified:
//!
//! - redis-semaphore 5.7.0 (its checkout, with its devDependencies installed, in GOBLIN_RSEM_DIR):
//!   its Mutex, Semaphore and MultiSemaphore tests and their Redlock twins, the six files in one
//!   process as the suite is normally run, five times in a row, through
//!   node/test/suites/redis-semaphore.cjs (its `../../src/` classes and errors are goblin-redis's),
//!   on three servers, less the tests that need its docker-compose failover scripts
//!   (`[Node shutdown]`) and those that run on ioredis-mock, which has no module. The
//!   `[Node shutdown]` tests run apart, five times in a row on each server, its `test/shell.ts`
//!   replaced by node/test/suites/redis-semaphore-shell.cjs, which stops (SIGTERM) and starts
//!   servers of its own in place of its docker compose ones. Its
//!   MultiSemaphore tests read its permits' member names (`<id>_0`, `<id>_1`), which
//!   goblin-redis asks of the module (`PERMITS n SEPARATOR _`);
//! - rate-limiter-flexible at its newest tag in its repository (GOBLIN_RLF_DIR; v11.1.0: npm's
//!   newer 11.4.0 ships no tests, so its `lib/` may be put in the checkout's place, the tests
//!   then running on RateLimiterGoblin over 11.4.0): `test/RateLimiterRedis.ioredis.test.js` and
//!   `test/RateLimiterRedis.redis.test.js`, through node/test/suites/rate-limiter-flexible.cjs
//!   (RateLimiterRedis is RateLimiterGoblin; the tests' 127.0.0.1:6379 is the test server), less
//!   the 4 that pass a `customIncrTtlLuaScript`, which RateLimiterGoblin refuses.
//!
//! ```text
//! GOBLIN_RSEM_DIR=... GOBLIN_RLF_DIR=... cargo test --release --test node_suites -- --ignored --nocapture
//! ```
//!
//! Each run must pass exactly its count, fail none, and leave no script in commandstats.

use goblin_testkit::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

#[path = "node_support.rs"]
mod node;

fn checkout(variable: &str) -> PathBuf {
    let dir = std::env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("set {variable} to the suite's checkout"));
    assert!(
        dir.join("node_modules/.bin/mocha").exists(),
        "{}: no node_modules/.bin/mocha (npm install there)",
        dir.display()
    );
    dir
}

/// Runs mocha in `dir` with `args`, its JSON report to a file; the passes, failures and pending.
fn mocha(
    label: &str,
    dir: &PathBuf,
    args: &[&str],
    env: &[(&str, String)],
) -> BTreeMap<String, u64> {
    node::built();
    let scratch = TempDir::new("mocha");
    let report = scratch.0.join("report.json");
    let mut command = Command::new(dir.join("node_modules/.bin/mocha"));
    command
        .args(args)
        .args([
            "--reporter",
            "json",
            "--reporter-option",
            &format!("output={}", report.display()),
        ])
        .current_dir(dir);
    for (name, value) in env {
        command.env(name, value);
    }
    let (_, output) = run_logged(label, &mut command, node::NODE_TIMEOUT);
    let json = std::fs::read_to_string(&report)
        .unwrap_or_else(|_| panic!("{label}: no report:\n{output}"));
    let stats = json
        .split("\"stats\":")
        .nth(1)
        .expect("stats")
        .split('}')
        .next()
        .expect("stats")
        .to_string();
    // The report's "failures" array, between it and "passes": each failed test's title.
    let failed = json
        .split("\"failures\": [")
        .nth(1)
        .and_then(|rest| rest.split("\"passes\": [").next())
        .unwrap_or("");
    let failures: Vec<&str> = failed
        .split("\"fullTitle\": \"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap_or(""))
        .collect();
    let counts: BTreeMap<String, u64> = ["tests", "passes", "pending", "failures"]
        .iter()
        .map(|name| {
            let value = stats
                .split(&format!("\"{name}\":"))
                .nth(1)
                .expect(name)
                .split(',')
                .next()
                .expect(name)
                .trim()
                .parse()
                .expect("a count");
            (name.to_string(), value)
        })
        .collect();
    eprintln!("{label}: {counts:?}");
    if counts["failures"] > 0 {
        eprintln!("{label}: failed: {failures:?}\n{output}");
    }
    counts
}

/// redis-semaphore's class tests, each file's `[Node shutdown]` and `ioredis-mock support` tests
/// left out: what passes of each file.
const RSEM_FILES: [(&str, u64); 6] = [
    ("RedisMutex", 20),
    ("RedisSemaphore", 13),
    ("RedisMultiSemaphore", 14),
    ("RedlockMutex", 11),
    ("RedlockSemaphore", 13),
    ("RedlockMultiSemaphore", 14),
];

/// How many times in a row the six files run in one process on each server: a lock left held by
/// one test (an acquire that did not honour its abort, say) fails the tests after it, in any file.
const RSEM_RUNS: usize = 5;

/// The six files in one mocha run, as the suite is normally run, `RSEM_RUNS` times in a row on
/// three servers of each flavor; every count is printed before any is asserted.
#[test]
#[ignore = "needs a checkout of redis-semaphore 5.7.0 in GOBLIN_RSEM_DIR"]
fn redis_semaphore_suite() {
    let dir = checkout("GOBLIN_RSEM_DIR");
    let register = node::text(&node::package_dir().join("test/suites/redis-semaphore.cjs"));
    let passes: u64 = RSEM_FILES.iter().map(|(_, n)| n).sum();
    let files: Vec<String> = RSEM_FILES
        .iter()
        .map(|(file, _)| format!("test/src/{file}.test.ts"))
        .collect();
    let mut outcomes = Vec::new();
    for &flavor in Flavor::ALL {
        let first = Server::start(flavor);
        // The Redlock classes' other two servers; the first one's replica checks what they write.
        let others: Vec<Server> = (0..2)
            .map(|_| Server::builder(flavor).without_replica().start())
            .collect();
        let servers = [&first, &others[0], &others[1]];
        let mut env: Vec<(&str, String)> = vec![("GOBLIN_RSEM_DIR", node::text(&dir))];
        for (name, server) in ["REDIS_URI1", "REDIS_URI2", "REDIS_URI3"]
            .into_iter()
            .zip(servers)
        {
            env.push((name, format!("redis://127.0.0.1:{}", server.port)));
        }
        for run in 1..=RSEM_RUNS {
            let label = format!(
                "{} (redis-semaphore 5.7.0, six files, run {run} of {RSEM_RUNS})",
                flavor.label()
            );
            let mut args = vec!["--require", &register, "test/init.test.ts"];
            args.extend(files.iter().map(String::as_str));
            args.extend([
                "--grep",
                r"\[Node shutdown\]|ioredis-mock support",
                "--invert",
            ]);
            let counts = mocha(&label, &dir, &args, &env);
            outcomes.push((
                label,
                (counts["passes"], counts["failures"], counts["pending"]),
                (passes, 0, 0),
            ));
        }
        let (calls, _) = summed_stats(&servers);
        node::assert_no_scripts(
            flavor.label(),
            &calls,
            &[
                "goblin.block",
                "goblin.bzwindow",
                "goblin.extend",
                "goblin.cad",
            ],
        );
    }
    assert_outcomes(&outcomes);
}

/// redis-semaphore's `[Node shutdown]` tests: 3 of single-server locks (their server stopped and
/// started again under a held lock) and 2 of each Redlock class (one server of three stopped in
/// turn while a quorum holds, and two stopped).
const RSEM_SHUTDOWN_PASSES: u64 = 3 + 3 * 2;

/// How many times in a row the `[Node shutdown]` tests run on each server.
const RSEM_SHUTDOWN_RUNS: usize = 5;

/// The servers node/test/suites/redis-semaphore-shell.cjs runs, by the pids it lists as running:
/// each stopped when the run ends, pass or fail (the shell stops its own at exit; this is for a
/// run killed before it could), and only while that pid is still a process of `binary`.
struct StartedBy {
    pids: PathBuf,
    binary: PathBuf,
}

impl Drop for StartedBy {
    fn drop(&mut self) {
        let binary = self.binary.to_string_lossy().into_owned();
        let pids = std::fs::read_to_string(&self.pids).unwrap_or_default();
        for pid in pids.lines().map(str::trim).filter(|pid| !pid.is_empty()) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).starts_with(&binary) {
                let _ = Command::new("kill")
                    .args(["-KILL", pid])
                    .stderr(std::process::Stdio::null())
                    .status();
            }
        }
    }
}

/// redis-semaphore's `[Node shutdown]` tests, which stop and start its servers with docker
/// compose: node/test/suites/redis-semaphore-shell.cjs stands in for its `test/shell.ts`, with
/// three servers of the flavor, the module loaded, that it starts itself on free ports (SIGTERM
/// to stop one, as `docker compose stop`; started again empty), `RSEM_SHUTDOWN_RUNS` times in a
/// row on each server; every count is printed before any is asserted.
#[test]
#[ignore = "needs a checkout of redis-semaphore 5.7.0 in GOBLIN_RSEM_DIR"]
fn redis_semaphore_shutdown_suite() {
    let dir = checkout("GOBLIN_RSEM_DIR");
    let register = node::text(&node::package_dir().join("test/suites/redis-semaphore.cjs"));
    let shell = node::text(&node::package_dir().join("test/suites/redis-semaphore-shell.cjs"));
    let mut outcomes = Vec::new();
    for &flavor in Flavor::ALL {
        for run in 1..=RSEM_SHUTDOWN_RUNS {
            let label = format!(
                "{} (redis-semaphore 5.7.0, [Node shutdown], run {run} of {RSEM_SHUTDOWN_RUNS})",
                flavor.label()
            );
            let scratch = TempDir::new("rsem-shell");
            let started = StartedBy {
                pids: scratch.0.join("pids"),
                binary: flavor.binary(),
            };
            let env: Vec<(&str, String)> = vec![
                ("GOBLIN_RSEM_DIR", node::text(&dir)),
                ("GOBLIN_RSEM_SERVER", node::text(&started.binary)),
                ("GOBLIN_MODULE", node::text(&module_path())),
                ("GOBLIN_RSEM_SCRATCH", node::text(&scratch.0)),
                ("GOBLIN_RSEM_PIDS", node::text(&started.pids)),
            ];
            let mut args = vec![
                "--require",
                &register,
                "--require",
                &shell,
                "test/init.test.ts",
            ];
            let files: Vec<String> = RSEM_FILES
                .iter()
                .map(|(file, _)| format!("test/src/{file}.test.ts"))
                .collect();
            args.extend(files.iter().map(String::as_str));
            args.extend(["--grep", r"\[Node shutdown\]"]);
            let counts = mocha(&label, &dir, &args, &env);
            drop(started);
            outcomes.push((
                label,
                (counts["passes"], counts["failures"], counts["pending"]),
                (RSEM_SHUTDOWN_PASSES, 0, 0),
            ));
        }
    }
    assert_outcomes(&outcomes);
}

/// rate-limiter-flexible's RateLimiterRedis tests: 47 in each file, less the 2 in each that pass
/// a customIncrTtlLuaScript.
const RLF_PASSES: u64 = 2 * (47 - 2);

#[test]
#[ignore = "needs a checkout of rate-limiter-flexible's suite in GOBLIN_RLF_DIR"]
fn rate_limiter_flexible_suite() {
    let dir = checkout("GOBLIN_RLF_DIR");
    let register = node::text(&node::package_dir().join("test/suites/rate-limiter-flexible.cjs"));
    for &flavor in Flavor::ALL {
        let server = Server::start(flavor);
        let label = format!(
            "{} (rate-limiter-flexible's suite in {})",
            flavor.label(),
            dir.display()
        );
        let counts = mocha(
            &label,
            &dir,
            &[
                "--require",
                &register,
                "test/RateLimiterRedis.ioredis.test.js",
                "test/RateLimiterRedis.redis.test.js",
                "--grep",
                "customIncrTtlLuaScript",
                "--invert",
            ],
            &[
                ("GOBLIN_RLF_DIR", node::text(&dir)),
                ("GOBLIN_TEST_PORT", server.port.to_string()),
            ],
        );
        assert_eq!(
            (counts["passes"], counts["failures"], counts["pending"]),
            (RLF_PASSES, 0, 0),
            "{label}"
        );
        let (calls, _) = summed_stats(&[&server]);
        node::assert_no_scripts(&label, &calls, &["goblin.fwindow", "goblin.fwstats"]);
    }
}

/// A mocha run's counts: passed, failed, pending.
type Counts = (u64, u64, u64);

/// Each run's mocha counts (passed, failed, pending) printed, then every run held to its expected
/// counts: the runs that missed them, named.
fn assert_outcomes(outcomes: &[(String, Counts, Counts)]) {
    for (label, got, want) in outcomes {
        eprintln!(
            "{label}: passed {}, failed {}, pending {} (expected {} passed)",
            got.0, got.1, got.2, want.0
        );
    }
    let wrong: Vec<_> = outcomes
        .iter()
        .filter(|(_, got, want)| got != want)
        .collect();
    assert!(wrong.is_empty(), "{wrong:?}");
}
