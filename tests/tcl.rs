//! Redis's own tests of the native commands, from the Redis 8.10.2 source that
//! `scripts/servers.sh` keeps in `.servers/redis810/src`, run in external mode against every
//! server with Goblin loaded: Goblin's stand-in answers where the server lacks the command,
//! the server's own command where it has one.

mod common;
use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The source tree with `tests/test_helper.tcl`.
fn redis_source() -> PathBuf {
    let tree = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".servers/redis810/src");
    assert!(
        tree.join("tests/test_helper.tcl").exists(),
        "no Redis 8.10.2 source tree at {} (run `make test`, which runs scripts/servers.sh)",
        tree.display()
    );
    tree
}

/// What one run of the suite said: the names of the tests that passed, and of those that failed.
struct Outcome {
    passed: Vec<String>,
    failed: Vec<String>,
    /// The whole output, to show what a failure said.
    output: String,
}

/// Waits until the server's replication cron has run once with a replica attached.
///
/// The suite reads the replication stream and expects no PING in it: it sets
/// `repl-ping-replica-period` to 3600 first. But the cron pings replicas whenever its loop
/// count is a multiple of the period, and that count starts at 0: on a server younger than a
/// few seconds (Valkey's first cron can come that late) the suite's first stream test may meet
/// that first PING. So attach as a replica once, with a period of 1, and wait for a PING:
/// after it the count is past 0.
fn replication_cron_has_run(server: &Server) {
    let mut c = server.conn();
    c.call(&["CONFIG", "SET", "repl-ping-replica-period", "1"]);
    let mut replica = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    replica
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    replica.write_all(b"SYNC\r\n").expect("SYNC");
    let mut stream = Vec::new();
    let mut buffer = [0u8; 4096];
    while !stream
        .windows(4)
        .any(|w: &[u8]| w.eq_ignore_ascii_case(b"ping"))
    {
        let read = replica
            .read(&mut buffer)
            .expect("no PING on the replication stream");
        assert!(read > 0, "the server closed the replication stream");
        stream.extend_from_slice(&buffer[..read]);
    }
    drop(replica);
    c.call(&["CONFIG", "SET", "repl-ping-replica-period", "10"]);
}

/// A port range of its own for each run of the suite in this process: the suite's harness
/// takes the first free port below `--baseport` for itself, and two runs started together from
/// the default base both find the same one free and one of them fails to bind it.
fn own_ports() -> u16 {
    static RUNS: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    21_100 + 150 * (run % 60)
}

/// Runs `unit` (e.g. `unit/type/increx`) against `server`, with the extra runtest arguments.
fn run_suite(server: &Server, unit: &str, extra: &[&str]) -> Outcome {
    replication_cron_has_run(server);
    let output = Command::new("tclsh")
        .current_dir(redis_source())
        .args(["tests/test_helper.tcl", "--host", "127.0.0.1", "--port"])
        .arg(server.port.to_string())
        .args(["--single", unit, "--clients", "1"])
        .args(["--baseport", &own_ports().to_string(), "--portcount", "100"])
        .args(extra)
        .output()
        .expect("run tclsh (scripts/servers.sh installs tcl)");
    let text = String::from_utf8_lossy(&output.stdout);
    // Without the colours: `[ok]: name (1 ms)`, `[err]: name in tests/...`.
    let plain: String = {
        let mut plain = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                plain.push(c);
            }
        }
        plain
    };
    let mut outcome = Outcome {
        passed: Vec::new(),
        failed: Vec::new(),
        output: String::new(),
    };
    for line in plain.lines() {
        if let Some(rest) = line.strip_prefix("[ok]: ") {
            let name = rest.rsplit_once(" (").map_or(rest, |(name, _)| name);
            outcome.passed.push(name.to_string());
        } else if let Some(rest) = line.strip_prefix("[err]: ") {
            let name = rest.split(" in tests/").next().unwrap_or(rest);
            outcome.failed.push(name.to_string());
        }
    }
    assert!(
        !outcome.passed.is_empty() || !outcome.failed.is_empty(),
        "the suite ran no test:\n{plain}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    outcome.output = plain;
    let suite: Vec<&str> = std::iter::once(unit).chain(extra.iter().copied()).collect();
    eprintln!(
        "{}: {}: {} passed, {} failed {:?}",
        server.flavor.label(),
        suite.join(" "),
        outcome.passed.len(),
        outcome.failed.len(),
        outcome.failed
    );
    outcome
}

/// The one INCREX test a module cannot pass: it checks `OBJECT ENCODING` is `int`, and the
/// module API stores strings only.
const INT_ENCODING_TEST: &str = "INCREX - result within [LONG_MIN, LONG_MAX] keeps int encoding";

on_every_server! {
    fn redis_own_increx_tests_pass(flavor: Flavor) {
        let server = Server::start(flavor);
        let outcome = run_suite(&server, "unit/type/increx", &[]);
        assert_eq!(outcome.passed.len() + outcome.failed.len(), 71, "the suite has 71 tests");
        let native = server.conn().call(&["COMMAND", "INFO", "increx"]).array()[0].array()[2]
            .texts()
            .iter()
            .all(|flag| flag != "module");
        if native {
            assert!(outcome.failed.is_empty(), "the server's own INCREX failed {:?}:\n{}", outcome.failed, outcome.output);
        } else {
            assert!(
                outcome.failed.iter().all(|name| name == INT_ENCODING_TEST),
                "Goblin's INCREX failed {:?}:\n{}",
                outcome.failed,
                outcome.output
            );
        }
    }
}

on_every_server! {
    /// The 40 DELEX and DIGEST tests of `tests/unit/type/string.tcl`: Goblin's stand-ins where
    /// the server lacks the commands, the server's own on Redis 8.10.
    fn redis_own_delex_and_digest_tests_pass(flavor: Flavor) {
        let server = Server::start(flavor);
        let outcome = run_suite(&server, "unit/type/string", &["--only", "/^(DELEX|DIGEST)"]);
        assert!(outcome.failed.is_empty(), "failed {:?}:\n{}", outcome.failed, outcome.output);
        assert_eq!(outcome.passed.len(), 40, "the DELEX and DIGEST tests:\n{}", outcome.output);
    }
}
