//! goblin-redis's PHP package (php/) on every server, by PHPUnit (Debian's 9.6), with php/
//! installed into an application by Composer from the clone (scripts/php.sh):
//!
//! - Symfony Lock 5.4.53's own store tests, unmodified, from Debian's source package: their
//!   Redis, Predis, RedisArray, RedisCluster (on a three-node cluster) and Combined store tests
//!   with GoblinStore in RedisStore's place, and our class on their abstract Redis store test
//!   case with their expiring and blocking traits (php/tests/symfony-lock.xml);
//! - Laravel 8.83.26's own Redis limiter tests, unmodified, with Goblin's limiters in
//!   Laravel's places (php/tests/laravel.xml);
//! - the package's own tests (php/tests/ours.xml): Laravel's way in, the ground of Laravel's
//!   integration tests (which need Orchestra Testbench), Symfony's rate limiters on the
//!   server's clock, the client on a cluster and against a server without the module, and the
//!   example applications (examples/php/: a Symfony controller, a Laravel route and job), each
//!   served by PHP's built-in server and driven over HTTP.
//!
//! Each run must pass exactly its count, none skipped, and afterwards the servers'
//! commandstats must show no script but the suites' own (Symfony's backward-compatibility test
//! writes a Symfony 5.1 lock with EVAL, once per Redis store test class), and the Goblin
//! commands doing the work.

use goblin_testkit::*;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "node_support.rs"]
mod support;

/// 11 tests of the abstract Redis store case (5 of the store case, 5 expiring, 1 backward
/// compatibility) in each of GoblinStoreTest (+5 shared, +1 blocking), RedisStoreTest (+5
/// shared, +1 invalid TTL), PredisStoreTest, RedisArrayStoreTest and RedisClusterStoreTest;
/// and CombinedStoreTest's 5 of the store case, 5 expiring, 5 shared and 12 of its own.
const SYMFONY_TESTS: u32 = (11 + 5 + 1) + (11 + 5 + 1) + 11 + 11 + 11 + (5 + 5 + 5 + 12);

/// The EVALs of Symfony's own backward-compatibility test: one per Redis store test class on
/// the server (ours, Redis, Predis, RedisArray), one on the cluster (RedisCluster).
const SYMFONY_EVALS: u64 = 4;
const SYMFONY_CLUSTER_EVALS: u64 = 1;

/// DurationLimiterTest's 3 and ConcurrentLimiterTest's 6.
const LARAVEL_TESTS: u32 = 3 + 6;

/// php/tests/ours.xml: Laravel's locks (7 on each client, 1 on phpredis's serializers) and
/// limiters (7 on each client); Symfony's rate limiters (6 on each client) and shared locks (3);
/// the client (4 on each client, 1 of an ACL); the example applications over HTTP (2 Symfony,
/// 2 Laravel).
const OUR_TESTS: u32 = (7 * 2 + 1) + 7 * 2 + 6 * 2 + 3 + (4 * 2 + 1) + 4;

/// The longest one PHPUnit run may take before it is killed as hung (each takes about 10 s).
const SUITE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Runs PHPUnit on `config` (php/tests/) with `env`: exactly `tests` pass, none skipped.
fn phpunit(label: &str, config: &str, env: &[(&str, String)], tests: u32) {
    let dir = repo_root().join("php/tests");
    assert!(
        repo_root().join(".servers/php/app/vendor/autoload.php").exists(),
        "no .servers/php/app (run `make test`, which runs scripts/servers.sh and so scripts/php.sh)"
    );
    let started = Instant::now();
    let mut command = Command::new("phpunit");
    command
        .args(["--configuration", config, "--do-not-cache-result"])
        .current_dir(&dir);
    for (name, value) in env {
        command.env(name, value);
    }
    let (status, output) = run_logged(label, &mut command, SUITE_TIMEOUT);
    let summary = output
        .lines()
        .rev()
        .find(|line| line.starts_with("OK") || line.starts_with("Tests:"))
        .unwrap_or("no summary");
    eprintln!(
        "{label}: {:.1} s: {summary}",
        started.elapsed().as_secs_f64()
    );
    assert!(
        status.success(),
        "{label}: phpunit failed ({status}):\n{output}"
    );
    let want = format!("OK ({tests} tests, ");
    assert!(
        output.lines().any(|line| line.starts_with(&want)),
        "{label}: not exactly {tests} tests, all passed and none skipped:\n{output}"
    );
}

fn address(server: &Server) -> String {
    format!("127.0.0.1:{}", server.port)
}

/// No script ran but `evals` EVALs (the suites' own), none was loaded, no transaction; and
/// each of `goblin` did some of the work.
fn assert_scripts(label: &str, calls: &BTreeMap<String, u64>, evals: u64, goblin: &[&str]) {
    assert_eq!(
        calls.get("eval").copied().unwrap_or(0),
        evals,
        "{label}: EVAL calls: {calls:?}"
    );
    let mut without_eval = calls.clone();
    without_eval.remove("eval");
    support::assert_no_scripts(label, &without_eval, goblin);
}

on_every_server! {
    /// Symfony Lock's own store tests with GoblinStore in RedisStore's place.
    fn symfony_lock_suite(flavor: Flavor) {
        let server = Server::start(flavor);
        let cluster = support::start_cluster(flavor, 3);
        let label = format!("{} (Symfony Lock)", flavor.label());
        let nodes: Vec<String> = cluster.iter().map(address).collect();
        phpunit(
            &label,
            "symfony-lock.xml",
            &[("REDIS_HOST", address(&server)), ("REDIS_CLUSTER_HOSTS", nodes.join(" "))],
            SYMFONY_TESTS,
        );
        let (calls, _) = summed_stats(&[&server]);
        let store = ["goblin.wlock", "goblin.rlock", "goblin.bwlock", "goblin.rwextend", "goblin.rwunlock", "goblin.rwheld"];
        assert_scripts(&label, &calls, SYMFONY_EVALS, &store);
        let (calls, errors) = summed_stats(&cluster.iter().collect::<Vec<_>>());
        assert_scripts(&label, &calls, SYMFONY_CLUSTER_EVALS, &["goblin.wlock", "goblin.rwextend", "goblin.rwunlock", "goblin.rwheld"]);
        assert_eq!(errors.get("MOVED"), None, "{label}: the cluster redirected: {errors:?}");
    }
}

on_every_server! {
    /// Laravel's own limiter tests with Goblin's DurationLimiter and ConcurrencyLimiter in place.
    fn laravel_suite(flavor: Flavor) {
        let server = Server::start(flavor);
        let label = format!("{} (Laravel)", flavor.label());
        phpunit(
            &label,
            "laravel.xml",
            &[("REDIS_HOST", "127.0.0.1".into()), ("REDIS_PORT", server.port.to_string())],
            LARAVEL_TESTS,
        );
        let (calls, _) = summed_stats(&[&server]);
        assert_scripts(&label, &calls, 0, &["goblin.fwindow", "goblin.zwindow", "goblin.bzwindow", "goblin.cad"]);
    }
}

on_every_server! {
    /// The package's own tests, a server without the module and a cluster beside.
    fn php_package_tests(flavor: Flavor) {
        let server = Server::start(flavor);
        // Without the module: nothing to replicate, so no replica either.
        let bare = Server::builder(flavor).without_module().without_replica().start();
        let cluster = support::start_cluster(flavor, 3);
        let label = format!("{} (goblin-redis)", flavor.label());
        let nodes: Vec<String> = cluster.iter().map(address).collect();
        phpunit(
            &label,
            "ours.xml",
            &[
                ("GOBLIN_TEST_SERVER", address(&server)),
                ("GOBLIN_TEST_BARE", address(&bare)),
                ("GOBLIN_TEST_CLUSTER", nodes.join(" ")),
            ],
            OUR_TESTS,
        );
        let (calls, errors) = summed_stats(&cluster.iter().collect::<Vec<_>>());
        assert_scripts(&label, &calls, 0, &["goblin.wlock", "goblin.rwextend", "goblin.rwunlock", "goblin.gcra"]);
        assert_eq!(errors.get("MOVED"), None, "{label}: the cluster redirected: {errors:?}");
        let (calls, _) = summed_stats(&[&server]);
        assert_scripts(
            &label,
            &calls,
            0,
            &[
                "goblin.lock",
                "goblin.block",
                "goblin.cad",
                "goblin.fwindow",
                "goblin.fwstats",
                "goblin.zwindow",
                "goblin.bzwindow",
                "goblin.gcra",
                "goblin.swindow",
                "increx",
                "goblin.brlock",
                "goblin.bwlock",
            ],
        );
    }
}

/// The package's version is the module's, in composer.json and in the code, and the module it
/// asks `MODULE LIST` for is this one (major * 10000 + minor * 100 + patch).
#[test]
fn the_php_package_is_the_modules_version() {
    let cargo = env!("CARGO_PKG_VERSION");
    let composer =
        std::fs::read_to_string(repo_root().join("php/composer.json")).expect("php/composer.json");
    assert!(
        composer.contains(&format!("\"version\": \"{cargo}\"")),
        "php/composer.json's version is not {cargo}"
    );
    let code = std::fs::read_to_string(repo_root().join("php/src/Goblin.php"))
        .expect("php/src/Goblin.php");
    assert!(
        code.contains(&format!("public const VERSION = '{cargo}';")),
        "Goblin::VERSION is not {cargo}"
    );
    let number: Vec<u32> = cargo
        .split('.')
        .map(|part| part.parse().expect("a number"))
        .collect();
    let module = number[0] * 10000 + number[1] * 100 + number[2];
    assert!(
        code.contains(&format!("public const MODULE_VERSION = {module};")),
        "Goblin::MODULE_VERSION is not {module}"
    );
}
