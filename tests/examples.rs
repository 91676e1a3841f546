//! Every program in examples/ runs against a real server, so none of them rots. Each example
//! asserts its own story (a limiter that lets the wrong number through exits non-zero).

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The example binary `cargo test` built beside this test (same profile).
fn example(name: &str) -> PathBuf {
    let test_binary = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/examples-<hash> -> target/<profile>/examples/<name>
    let profile_dir = test_binary
        .parent()
        .and_then(Path::parent)
        .expect("profile dir");
    let path = profile_dir.join("examples").join(name);
    assert!(
        path.exists(),
        "{} was not built (cargo test builds examples)",
        path.display()
    );
    path
}

fn run_example(name: &str, expect: &str) {
    let server = Server::start(Flavor::Valkey91);
    let output = Command::new(example(name))
        .env("GOBLIN_URL", format!("redis://127.0.0.1:{}/", server.port))
        .output()
        .expect("run example");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{name} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(expect), "{name} printed:\n{stdout}");
}

#[test]
fn fixed_window_limiter() {
    run_example("fixed_window", "5 of 8 requests allowed");
}

#[test]
fn sliding_window_limiter() {
    run_example("sliding_window", "retry-after was exact");
}

#[test]
fn mutex_with_lease() {
    run_example("mutex", "released by its holder only");
}

#[test]
fn semaphore_survives_a_crashed_holder() {
    run_example("semaphore", "healed itself");
}

/// The redis-py snippet of docs/python.md, run as written (only the port is the test server's),
/// with the pinned redis-py that scripts/servers.sh installs into .servers/venv.
#[test]
fn the_python_doc_snippet_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".servers/venv/bin/python");
    assert!(
        python.exists(),
        "no {} (run `make test`, which runs scripts/servers.sh)",
        python.display()
    );
    let snippet = doc_snippet("docs/python.md", "## Raw commands with redis-py", "python");
    let server = Server::start(Flavor::Valkey91);
    assert!(
        snippet.contains("redis.Redis()"),
        "the snippet connects with redis.Redis()"
    );
    let script = snippet.replace(
        "redis.Redis()",
        &format!("redis.Redis(port={})", server.port),
    ) + "\nprint('admitted', admitted)\n";
    let output = Command::new(&python)
        .arg("-c")
        .arg(&script)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("admitted 1"), "{stdout}");
    let mut c = server.conn();
    assert_eq!(c.call(&["GET", "rate:user42"]), bulk("1"));
    assert_eq!(c.call(&["TTL", "rate:user42"]), Reply::Int(60));
    assert_eq!(c.call(&["ZCARD", "rl:user42"]), Reply::Int(1));
    assert_eq!(
        c.call(&["EXISTS", "lock:job7"]),
        Reply::Int(0),
        "the lock was released"
    );
}

#[test]
fn http_headers_from_one_gcra_call() {
    run_example("http_headers", "allowed again after it");
}
