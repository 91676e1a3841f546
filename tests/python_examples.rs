//! The Python examples as a user meets them: goblin-redis built into a wheel (python/, with
//! flit_core) and installed from it, then the Flask-Limiter app and the slowapi app of
//! examples/python/, each run as its own process and driven past its limits over HTTP by
//! examples/python/test_apps.py, once per limits strategy, and the WSGI app on
//! goblin_redis.ratelimit (GOBLIN.MGCRA, the IETF RateLimit fields), on every server. Their
//! decisions run no script and no transaction.

use goblin_testkit::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    repo_root()
}

fn venv_bin(tool: &str) -> PathBuf {
    venv_tool("venv-apps", tool)
}

fn run_checked(command: &mut Command, what: &str) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{what} failed:\n{text}");
    text
}

/// goblin-redis's wheel, built from python/ and installed into `into`/site; that folder, to put
/// on PYTHONPATH.
fn install_wheel(into: &Path) -> PathBuf {
    let python = venv_bin("python");
    let wheels = into.join("wheels");
    run_checked(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "--no-build-isolation",
                "--no-index",
                "-w",
            ])
            .arg(&wheels)
            .arg(root().join("python")),
        "building goblin-redis's wheel",
    );
    let wheel = std::fs::read_dir(&wheels)
        .expect("the wheel folder")
        .flatten()
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .expect("a wheel");
    let site = into.join("site");
    run_checked(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--no-index",
                "--target",
            ])
            .arg(&site)
            .arg(&wheel),
        "installing goblin-redis's wheel",
    );
    site
}

on_every_server! {
    fn flask_limiter_and_slowapi_apps_answer_429_past_their_limits(flavor: Flavor) {
        let scratch = TempDir::new("goblin-redis-wheel");
        let site = install_wheel(&scratch.0);
        let server = Server::start(flavor);
        let out = run_checked(
            Command::new(venv_bin("pytest"))
                .args(["-p", "no:cacheprovider", "-q", "-rA"])
                .arg(root().join("examples/python"))
                .env("GOBLIN_URL", format!("goblin://127.0.0.1:{}", server.port))
                .env("GOBLIN_REDIS_SITE", &site)
                .env("PYTHONPATH", &site)
                .env("PYTHONDONTWRITEBYTECODE", "1"),
            "examples/python/test_apps.py",
        );
        // 2 apps x 3 strategies x 2 tests, the WSGI app's 2, and the wheel's own 2 (what runs is
        // the wheel; its metadata needs no limits but for the extras).
        assert!(out.contains("16 passed"), "{out}");
        let calls = command_calls(&mut server.conn());
        for forbidden in ["eval", "evalsha", "fcall", "multi", "exec"] {
            assert!(!calls.contains_key(forbidden), "{flavor:?}: the apps' decisions called {forbidden}: {calls:?}");
        }
        for command in ["goblin.increx", "goblin.zwindow", "goblin.swindow", "goblin.mgcra"] {
            assert!(calls.get(command).is_some_and(|n| *n > 0), "{flavor:?}: no {command}: {calls:?}");
        }
    }
}
