//! A real client: redis-py's own `increx()` (redis-py 8.1, pinned by `scripts/servers.sh`),
//! against Goblin's stand-in where the server lacks INCREX and the server's own where it has
//! it, in RESP2 and RESP3. The application code is the same either way.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// Runs `script` with the pinned redis-py, `PORT` set to the server's port; returns its output.
fn python(server: &Server, script: &str) -> String {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".servers/venv/bin/python");
    assert!(
        python.exists(),
        "no {} (run `make test`, which runs scripts/servers.sh)",
        python.display()
    );
    let output = Command::new(&python)
        .arg("-c")
        .arg(script)
        .env("PORT", server.port.to_string())
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Redis's documented rate limiter, `INCREX k BYINT 1 UBOUND 3 EX 60 ENX`: an applied increment
/// of 0 means reject, the count never goes over, and the window is armed once.
const RATE_LIMITER: &str = r#"
import os, redis
for protocol in (2, 3):
    r = redis.Redis(port=int(os.environ["PORT"]), protocol=protocol)
    key = f"rate:{protocol}"
    replies = [r.increx(key, byint=1, ubound=3, ex=60, enx=True) for _ in range(5)]
    print(protocol, replies, r.ttl(key), r.get(key))
"#;

on_every_server! {
    fn redis_py_increx_rate_limiter(flavor: Flavor) {
        let server = Server::start(flavor);
        let out = python(&server, RATE_LIMITER);
        for protocol in [2, 3] {
            assert!(
                out.contains(&format!("{protocol} [[1, 1], [2, 1], [3, 1], [3, 0], [3, 0]] 60 b'3'")),
                "{out}"
            );
        }
    }
}

const FLOATS_AND_BOUNDS: &str = r#"
import os, redis
r2 = redis.Redis(port=int(os.environ["PORT"]))
r3 = redis.Redis(port=int(os.environ["PORT"]), protocol=3)
print("byfloat2", r2.increx("f", byfloat=0.1), r2.increx("f", byfloat=0.2))
print("byfloat3", r3.increx("f", byfloat=0.2))
print("saturate", r2.increx("s", byint=5, ubound=3, saturate=True), r2.increx("s", byint=-10, lbound=-2, saturate=True))
print("reject", r2.increx("s", byint=100, ubound=10), r2.get("s"))
print("persist", r2.increx("p", ex=100), r2.increx("p", persist=True), r2.ttl("p"))
try:
    r2.increx("s", lbound=5, ubound=1)
except redis.ResponseError as error:
    print("error", error)
"#;

on_every_server! {
    fn redis_py_increx_floats_bounds_and_expiry(flavor: Flavor) {
        let server = Server::start(flavor);
        let out = python(&server, FLOATS_AND_BOUNDS);
        // RESP2 bulk strings and RESP3 doubles alike: redis-py reads both as floats.
        assert!(out.contains("byfloat2 [0.1, 0.1] [0.3, 0.2]"), "{out}");
        assert!(out.contains("byfloat3 [0.5, 0.2]"), "{out}");
        assert!(out.contains("saturate [3, 3] [-2, -5]"), "{out}");
        assert!(out.contains("reject [-2, 0] b'-2'"), "{out}");
        assert!(out.contains("persist [1, 1] [2, 1] -1"), "{out}");
        assert!(out.contains("error LBOUND can't be greater than UBOUND"), "{out}");
    }
}

on_every_server! {
    /// The lock recipe of GOBLIN.CAD's page, as written (only the port is the test server's),
    /// then the same release attempted by someone else's token.
    fn the_documented_lock_recipe_runs(flavor: Flavor) {
        let snippet = doc_snippet("docs/commands/goblin.cad.md", "## The releases compared", "python");
        assert!(snippet.contains("redis.Redis()"), "the recipe connects with redis.Redis()");
        let server = Server::start(flavor);
        let script = snippet.replace("redis.Redis()", "redis.Redis(port=int(__import__('os').environ['PORT']))")
            + r#"
print("released", r.exists("lock:report") == 0)
r.set("lock:report", "theirs", px=30000)
print("foreign token", r.delex("lock:report", ifeq=token), r.get("lock:report"))
print("digest", r.digest("lock:report"), r.delex("lock:report", ifdeq=r.digest("lock:report")), r.exists("lock:report"))
"#;
        let out = python(&server, &script);
        assert!(out.contains("released True"), "{out}");
        assert!(out.contains("foreign token 0 b'theirs'"), "{out}");
        let digest = String::from_utf8(goblin_core::native::digest::digest(b"theirs").to_vec()).expect("hex");
        assert!(out.contains(&format!("digest b'{digest}' 1 0")), "{out}");
    }
}
