//! goblin-redis, the Ruby gem (ruby/), on every server: its own minitest tests (ruby/test/:
//! rack-attack's throttle, fail2ban, allow2ban and track on GoblinRedis::RackAttackStore and on
//! rack-attack's own Redis store with the same expectations, the limiters, the lock, a server
//! without the module beside) and the example Rack app driven over HTTP (examples/ruby/); every
//! test must pass, none skipped, and afterwards the server's commandstats must show no script,
//! no MULTI and no EXPIRE: every count was one Goblin command. Once more under RBS's
//! runtime type checks of ruby/sig/. Then the gem as a user installs
//! it: `gem build`, and `gem install` of the built gem with no network, into a new gem home.

use goblin_testkit::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// ruby/test/test_rack_attack.rb's 16, test_lock.rb's 12, test_limiter.rb's 9, and the example
/// app's 1.
const TESTS: u32 = 16 + 12 + 9 + 1;

/// The `SETEX`es redis-activesupport's `ActiveSupport::Cache::RedisStore` sends for the two bans
/// test_rack_attack.rb has it write beneath GoblinRedis::RackAttackStore (the cache store's own
/// `write`, as rack-attack's proxy for it calls it): the store's only writes that are not its own.
const CACHE_STORE_SETEX: u64 = 2;

/// The most a run may take before it is killed as hung (it takes about 10 s).
const RUN_TIMEOUT: Duration = Duration::from_secs(3 * 60);

fn root() -> &'static Path {
    repo_root()
}

/// `ruby` with `args`, killed as hung after RUN_TIMEOUT; its status and output.
fn ruby(label: &str, command: &mut Command) -> (bool, String) {
    let started = Instant::now();
    let (status, output) = run_logged(label, command, RUN_TIMEOUT);
    eprintln!(
        "{label}: {:.1} s: {}",
        started.elapsed().as_secs_f64(),
        output
            .lines()
            .filter(|line| line.contains(" runs, "))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    (status.success(), output)
}

/// minitest's closing line: `N runs, N assertions, N failures, N errors, N skips`.
fn counts(output: &str) -> BTreeMap<String, u32> {
    let line = output
        .lines()
        .find(|line| line.contains(" runs, ") && line.contains(" assertions, "))
        .unwrap_or_else(|| panic!("no minitest counts line:\n{output}"));
    line.split(", ")
        .map(|field| {
            let (n, name) = field.trim().split_once(' ').expect("N name");
            (name.to_string(), n.parse().expect("a count"))
        })
        .collect()
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

/// The tests that pass ill-typed arguments on purpose (a String period, a Float amount), each
/// file's `test_arguments_are_checked_where_they_are_given`: under RBS's runtime checks their
/// call is a type error before the gem's own ArgumentError, so the typed run leaves them out,
/// and runs them on their own to prove the checks are on: each fails with RBS's type error.
const ILL_TYPED: u32 = 3;

/// ruby/test/ and examples/ruby/test_app.rb in one minitest run, on a server in replica mode
/// (its replica, without the module, checks what the gem wrote) and one without the module; with
/// `typed`, under RBS's runtime type checks of ruby/sig/ (every call into GoblinRedis, the example
/// app's process too, checked against its signature).
fn run_the_gems_tests(flavor: Flavor, typed: bool) {
    let server = Server::start(flavor);
    // Without the module: rack-attack's own store runs there, and the ModuleError tests.
    let bare = Server::builder(flavor)
        .without_module()
        .without_replica()
        .start();
    let label = format!(
        "{} (ruby/test{})",
        flavor.label(),
        if typed { ", RBS" } else { "" }
    );
    let files = ["test_rack_attack.rb", "test_lock.rb", "test_limiter.rb"]
        .map(|file| root().join("ruby/test").join(file))
        .into_iter()
        .chain([root().join("examples/ruby/test_app.rb")]);
    let minitest = |filter: &[&str]| {
        let mut command = Command::new("ruby");
        command
            .arg("-I")
            .arg(root().join("ruby/lib"))
            .args(["-e", "files, options = ARGV.partition { |arg| arg.end_with?('.rb') }; ARGV.replace(options); files.each { |file| require file }"])
            .args(files.clone())
            .args(filter)
            .current_dir(root())
            .env("GOBLIN_TEST_SERVER", format!("127.0.0.1:{}", server.port))
            .env("GOBLIN_TEST_BARE", format!("127.0.0.1:{}", bare.port));
        if typed {
            command
                .env("RUBYOPT", "-rrbs/test/setup")
                .env("RBS_TEST_TARGET", "GoblinRedis::*")
                .env(
                    "RBS_TEST_OPT",
                    format!("-I {} -r securerandom", root().join("ruby/sig").display()),
                )
                .env("RBS_TEST_LOGLEVEL", "error");
        }
        command
    };
    let mut runs = TESTS;
    let mut command = if typed {
        runs -= ILL_TYPED;
        // The checks are on: each ill-typed call fails as RBS's type error.
        let mut ill_typed = minitest(&["--name", "/arguments_are_checked/"]);
        let (_, output) = ruby(&format!("{label}, ill-typed"), &mut ill_typed);
        let expected: BTreeMap<String, u32> = [
            ("runs", ILL_TYPED),
            ("failures", ILL_TYPED),
            ("errors", 0),
            ("skips", 0),
        ]
        .into_iter()
        .map(|(name, n)| (name.to_string(), n))
        .collect();
        let mut got = counts(&output);
        got.remove("assertions");
        assert_eq!(got, expected, "{label}, ill-typed:\n{output}");
        let caught = output
            .matches("Class: <RBS::Test::Tester::TypeError>")
            .count();
        assert_eq!(caught, ILL_TYPED as usize, "{label}, ill-typed:\n{output}");
        minitest(&["--exclude", "/arguments_are_checked/"])
    } else {
        minitest(&[])
    };
    let (success, output) = ruby(&label, &mut command);
    assert!(success, "{label}:\n{output}");
    let expected: BTreeMap<String, u32> =
        [("runs", runs), ("failures", 0), ("errors", 0), ("skips", 0)]
            .into_iter()
            .map(|(name, n)| (name.to_string(), n))
            .collect();
    let mut got = counts(&output);
    got.remove("assertions");
    assert_eq!(got, expected, "{label}:\n{output}");

    let calls = command_calls(&mut server.conn());
    for forbidden in [
        "eval",
        "evalsha",
        "eval_ro",
        "evalsha_ro",
        "fcall",
        "fcall_ro",
        "script|load",
        "multi",
        "exec",
        "expire",
        "pexpire",
    ] {
        assert_eq!(
            calls.get(forbidden).copied().unwrap_or(0),
            0,
            "{label}: {forbidden} was called: {calls:?}"
        );
    }
    assert_eq!(
        calls.get("setex").copied().unwrap_or(0),
        CACHE_STORE_SETEX,
        "{label}: SETEX beside redis-activesupport's bans: {calls:?}"
    );
    for command in [
        "goblin.increx",
        "goblin.gcra",
        "goblin.fwindow",
        "goblin.lock",
        "goblin.block",
        "goblin.extend",
        "goblin.cad",
    ] {
        assert!(
            calls.get(command).copied().unwrap_or(0) > 0,
            "{label}: {command} was never called: {calls:?}"
        );
    }
    // rack-attack's own store ran its pipeline on the server without the module.
    let stock = command_calls(&mut bare.conn());
    assert!(
        stock.get("expire").copied().unwrap_or(0) > 0,
        "{label}: the stock store never ran: {stock:?}"
    );
}

on_every_server! {
    fn the_gems_own_tests(flavor: Flavor) {
        run_the_gems_tests(flavor, false);
    }
}

on_every_server! {
    /// The same tests under RBS's runtime type checks.
    fn the_gems_tests_under_rbs_type_checks(flavor: Flavor) {
        run_the_gems_tests(flavor, true);
    }
}

/// The first quoted text on the line of `text` that starts with `start` (after indentation).
fn quoted_after(text: &str, start: &str) -> String {
    let line = text
        .lines()
        .find_map(|line| line.trim_start().strip_prefix(start))
        .unwrap_or_else(|| panic!("no line starting {start:?}"));
    line.split('"').nth(1).expect("a quoted value").to_string()
}

#[test]
fn the_gem_version_is_the_modules() {
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let gem = std::fs::read_to_string(root().join("ruby/lib/goblin_redis/version.rb"))
        .expect("version.rb");
    assert_eq!(
        quoted_after(&gem, "VERSION ="),
        quoted_after(&cargo, "version =")
    );
}

/// Runs `command`; its stdout, once it exited with success.
fn run(label: &str, command: &mut Command) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("{label}: {e}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{label}:\n{stdout}{stderr}");
    stdout.into_owned()
}

/// `gem build` in a copy of ruby/ (the clone stays clean), `gem install --local` of the built
/// gem into a new gem home (redis-rb, its one dependency, is found where Debian installed it, as
/// an application has it), and the installed gem, not ruby/lib, loaded and used on a server.
#[test]
fn the_gem_builds_and_installs_offline() {
    let server = Server::builder(Flavor::Valkey91).without_replica().start();
    let scratch = TempDir::new("ruby-gem");
    let source = scratch.0.join("source");
    run(
        "cp",
        Command::new("cp")
            .arg("-r")
            .arg(root().join("ruby"))
            .arg(&source),
    );
    let built = run(
        "gem build",
        Command::new("gem")
            .args(["build", "goblin-redis.gemspec"])
            .current_dir(&source),
    );
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let file = format!("goblin-redis-{}.gem", quoted_after(&cargo, "version ="));
    assert!(built.contains(&file), "gem build:\n{built}");

    let home = scratch.0.join("gems");
    run(
        "gem install",
        Command::new("gem")
            .args(["install", "--local", "--no-document"])
            .arg(source.join(&file))
            .env("GEM_HOME", &home)
            .env("http_proxy", "http://127.0.0.1:9")
            .env("https_proxy", "http://127.0.0.1:9"),
    );
    let script = r#"
        require "goblin_redis"
        raise "loaded from #{$LOADED_FEATURES.grep(/goblin_redis\.rb/)}" unless
          $LOADED_FEATURES.any? { |path| path.start_with?(ENV.fetch("GEM_HOME")) && path.end_with?("goblin_redis.rb") }
        store = GoblinRedis::RackAttackStore.new(Redis.new(port: Integer(ENV.fetch("PORT"))))
        puts [GoblinRedis::VERSION, store.increment("packed", 1, expires_in: 60)].join(" ")
    "#;
    let out = run(
        "the installed gem",
        Command::new("ruby")
            .args(["-e", script])
            .current_dir(&scratch.0)
            .env("GEM_HOME", &home)
            .env("PORT", server.port.to_string()),
    );
    assert_eq!(
        out.trim(),
        format!("{} 1", quoted_after(&cargo, "version ="))
    );
}
