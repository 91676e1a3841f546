//! redis-py 8.1.0's own lock tests (`tests/test_lock.py` and `tests/test_asyncio/test_lock.py`,
//! unmodified) on goblin_redis's locks (python/), on every server, with RESP3 and with RESP2.
//! The sdist is pinned by sha256 (scripts/python.sh downloads it; python/tests/redispy_suite/
//! redispy_suite.py checks and unpacks it afresh and copies in, beside the suite's files, our
//! two subclasses of its `TestLock` that pass `lock_class`). Exactly 85 tests pass, and the 4
//! that assert redis-py's own polling clock are strict expected failures (an unexpected pass
//! fails the run). Afterwards the server's commandstats must show that no script ran and the
//! Goblin lock commands did the work. Then goblin_redis's own lock and Semaphore tests
//! (python/tests/test_locks.py, with a server without the module beside) run on the same
//! servers, and python/tests/test_without_limits.py proves, in this venv without limits, that the
//! locks and the policy sets need only redis-py.

use goblin_testkit::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn root() -> &'static Path {
    repo_root()
}

fn venv_python() -> PathBuf {
    venv_tool("venv-locks", "python")
}

/// 31 sync tests and 29 asyncio ones, each of those twice (`[single]`, `[pool]`), less the 4
/// expected failures.
const PASSED: u32 = 85;

/// The tests that assert redis-py's polling schedule on its own patched clock
/// (`fake.now == approx(blocking_timeout)`, `fake.sleeps == [sleep] * n`): a lock that waits in
/// the server never sleeps on that clock.
const EXPECTED_FAILURES: [&str; 4] = [
    "tests/test_goblin_lock.py::TestGoblinLock::test_blocking_timeout",
    "tests/test_goblin_lock.py::TestGoblinLock::test_context_manager_blocking_timeout",
    "tests/test_asyncio/test_goblin_lock.py::TestGoblinLock::test_blocking_timeout[single]",
    "tests/test_asyncio/test_goblin_lock.py::TestGoblinLock::test_blocking_timeout[pool]",
];

/// The most a run may take before it is killed as hung (it takes about 10 s).
const SUITE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Runs `command` to its end (killed after SUITE_TIMEOUT); its status and output.
fn run_python(label: &str, mut command: Command) -> (bool, String) {
    let started = Instant::now();
    command.env("PYTHONDONTWRITEBYTECODE", "1");
    let (status, output) = run_logged(label, &mut command, SUITE_TIMEOUT);
    eprintln!(
        "{label}: {:.1} s: {}",
        started.elapsed().as_secs_f64(),
        output
            .lines()
            .filter(|line| line.contains(" passed"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    (status.success(), output)
}

/// The plugin's counts line: `goblin-locks-suite: passed=N failed=N xfailed=N ...`.
fn parse_counts(output: &str) -> BTreeMap<String, u32> {
    let line = output
        .lines()
        .find_map(|line| line.strip_prefix("goblin-locks-suite: passed="))
        .unwrap_or_else(|| panic!("no counts line:\n{output}"));
    format!("passed={line}")
        .split_whitespace()
        .map(|field| {
            let (name, value) = field.split_once('=').expect("name=value");
            (name.to_string(), value.parse().expect("a count"))
        })
        .collect()
}

fn run_suite(label: &str, port: u16, extra: &[&str]) {
    let mut command = Command::new(venv_python());
    command
        .arg(root().join("python/tests/redispy_suite/redispy_suite.py"))
        .args(extra)
        .env("GOBLIN_SUITE_SERVER", format!("127.0.0.1:{port}"))
        .env_remove("RE_CLUSTER");
    let (success, output) = run_python(label, command);
    assert!(success, "{label}: the suite failed:\n{output}");
    let counts = parse_counts(&output);
    let expected: BTreeMap<String, u32> = [
        ("passed", PASSED),
        ("failed", 0),
        ("xfailed", EXPECTED_FAILURES.len() as u32),
        ("xpassed", 0),
        ("skipped", 0),
        ("errors", 0),
    ]
    .into_iter()
    .map(|(name, n)| (name.to_string(), n))
    .collect();
    assert_eq!(counts, expected, "{label}:\n{output}");
    let mut xfailed: Vec<&str> = output
        .lines()
        .filter_map(|line| line.strip_prefix("goblin-locks-suite: xfailed "))
        .collect();
    xfailed.sort_unstable();
    let mut want = EXPECTED_FAILURES.to_vec();
    want.sort_unstable();
    assert_eq!(xfailed, want, "{label}:\n{output}");
}

/// `INFO commandstats`: calls by command name (lowercase, as the server lists them).
fn command_calls(conn: &mut Conn) -> BTreeMap<String, u64> {
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

/// No lock operation ran a script (nor loaded one), and the Goblin lock commands made them.
fn assert_no_scripts(label: &str, calls: &BTreeMap<String, u64>, goblin: &[&str]) {
    for forbidden in [
        "eval",
        "evalsha",
        "eval_ro",
        "evalsha_ro",
        "fcall",
        "fcall_ro",
        "script|load",
    ] {
        assert_eq!(
            calls.get(forbidden).copied().unwrap_or(0),
            0,
            "{label}: {forbidden} was called: {calls:?}"
        );
    }
    for command in goblin {
        assert!(
            calls.get(*command).copied().unwrap_or(0) > 0,
            "{label}: {command} was never called: {calls:?}"
        );
    }
}

on_every_server! {
    /// redis-py's lock suite, RESP3 (redis-py's default) and RESP2, on one server (with its
    /// replica: replica mode checks what the locks replicated, too).
    fn redis_py_lock_suite(flavor: Flavor) {
        let server = Server::start(flavor);
        run_suite(&format!("{} (RESP3)", flavor.label()), server.port, &[]);
        run_suite(&format!("{} (RESP2)", flavor.label()), server.port, &["--protocol=2"]);
        assert_no_scripts(
            flavor.label(),
            &command_calls(&mut server.conn()),
            &["goblin.lock", "goblin.block", "goblin.cad", "goblin.extend"],
        );
    }
}

on_every_server! {
    /// goblin_redis's own lock, Semaphore and ReadWriteLock tests (python/tests/test_locks.py,
    /// test_rwlock.py), sync and asyncio, a server without the module beside for the
    /// GoblinModuleError of every entry point; and python/tests/test_without_limits.py
    /// (venv-locks has no limits).
    fn the_locks_own_tests(flavor: Flavor) {
        let server = Server::start(flavor);
        // Without the module: nothing to replicate, so no replica either.
        let bare = Server::builder(flavor).without_module().without_replica().start();
        let label = format!("{} (test_locks.py)", flavor.label());
        let mut command = Command::new(venv_python());
        command
            .args(["-m", "pytest", "-p", "no:cacheprovider", "-q"])
            .arg(root().join("python/tests/test_locks.py"))
            .arg(root().join("python/tests/test_rwlock.py"))
            .arg(root().join("python/tests/test_without_limits.py"))
            .current_dir(root().join("python"))
            .env("PYTHONPATH", root().join("python/src"))
            .env("GOBLIN_TEST_SERVER", format!("127.0.0.1:{}", server.port))
            .env("GOBLIN_TEST_BARE", format!("127.0.0.1:{}", bare.port));
        let (success, output) = run_python(&label, command);
        assert!(success, "{label}:\n{output}");
        assert!(
            output.contains(" passed")
                && !output.contains("skipped")
                && !output.contains("failed")
                && !output.contains("error"),
            "{label}:\n{output}"
        );
        assert_no_scripts(
            &label,
            &command_calls(&mut server.conn()),
            &[
                "goblin.lock", "goblin.block", "goblin.cad", "goblin.extend", "goblin.zwindow", "goblin.bzwindow",
                "goblin.rlock", "goblin.wlock", "goblin.brlock", "goblin.bwlock", "goblin.rwextend", "goblin.rwunlock",
                "goblin.rwheld",
            ],
        );
    }
}
