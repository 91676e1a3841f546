//! Real servers for Goblin's integration tests and benchmarks: each caller starts its own
//! server process on its own port, with the freshly built module loaded, and talks RESP to it
//! over loopback.
//!
//! The servers are listed once, in `servers.rs`; `scripts/servers.sh` installs them. A missing
//! server fails with the command that installs it: it is never a skip.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub mod resp;
pub use resp::{Conn, Reply};

/// The repository's root (this crate lives in `testkit/`).
pub(crate) fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
}

mod servers;
pub use servers::{redis810_with_gcra, Family, Flavor};

pub fn module_path() -> PathBuf {
    let path = std::env::var_os("GOBLIN_MODULE")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/release/libgoblin.so"));
    assert!(
        path.exists(),
        "no module at {} (run `cargo build --release` or `make test`)",
        path.display()
    );
    path
}

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// A scratch directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "goblin-test-{}-{}-{tag}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A free loopback port: bound once by us, then released for the server.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// A free port below 55536 whose cluster bus port (port + 10000) is free as well.
pub fn free_cluster_port() -> u16 {
    let salt = NEXT_DIR.fetch_add(1, Ordering::Relaxed) as u64;
    let mut rng = Rng::new(u64::from(std::process::id()) ^ (salt * 7919));
    loop {
        let port = 20000 + rng.below(20000) as u16;
        let both_free = TcpListener::bind(("127.0.0.1", port)).is_ok()
            && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok();
        if both_free {
            return port;
        }
    }
}

/// A running server process, killed when dropped.
pub struct Server {
    pub flavor: Flavor,
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
    _scratch: Option<TempDir>,
}

pub struct ServerBuilder {
    flavor: Flavor,
    /// Another binary of the same family and version than the flavor's own.
    binary: Option<PathBuf>,
    config_file: Option<PathBuf>,
    args: Vec<String>,
    with_module: bool,
    dir: Option<PathBuf>,
    cluster: bool,
}

impl ServerBuilder {
    /// Runs this binary instead of the flavor's own: Redis 8.10 with GCRA compiled in, say.
    pub fn binary(mut self, path: PathBuf) -> Self {
        self.binary = Some(path);
        self
    }

    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn without_module(mut self) -> Self {
        self.with_module = false;
        self
    }

    /// Starts the server on this config file (it comes first on the command line, as the
    /// server requires; the test's own settings follow and take precedence).
    pub fn config_file(mut self, path: &Path) -> Self {
        self.config_file = Some(path.to_path_buf());
        self
    }

    /// A cluster node: cluster mode on, and a port whose bus port (+10000) is free too.
    pub fn cluster(mut self) -> Self {
        self.cluster = true;
        self.args.extend(
            [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "2000",
            ]
            .map(String::from),
        );
        self
    }

    /// Use (and keep) this data directory, e.g. to restart on the same AOF.
    pub fn dir(mut self, dir: &Path) -> Self {
        self.dir = Some(dir.to_path_buf());
        self
    }

    pub fn start(self) -> Server {
        let (scratch, dir) = match self.dir {
            Some(dir) => (None, dir),
            None => {
                let scratch = TempDir::new(&format!("{:?}", self.flavor));
                let dir = scratch.0.clone();
                (Some(scratch), dir)
            }
        };
        // A port picked free can be taken again before the server binds it: retry.
        for _ in 0..5 {
            let port = if self.cluster {
                free_cluster_port()
            } else {
                free_port()
            };
            let binary = self.binary.clone().unwrap_or_else(|| self.flavor.binary());
            let mut cmd = Command::new(binary);
            if let Some(config) = &self.config_file {
                cmd.arg(config);
            }
            cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--dir", dir.to_str().expect("utf-8 dir")])
                .args(["--daemonize", "no"])
                .args(["--logfile", "server.log"]);
            // Without a config file, a test server persists nothing unless the test says so.
            if self.config_file.is_none() {
                cmd.args(["--save", "", "--appendonly", "no"]);
            }
            if self.with_module {
                cmd.args(["--loadmodule", module_path().to_str().expect("utf-8 path")]);
            }
            cmd.args(&self.args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let child = cmd.spawn().expect("spawn server");
            let mut server = Server {
                flavor: self.flavor,
                port,
                dir: dir.clone(),
                child: Some(child),
                _scratch: None,
            };
            if server.wait_ready(Duration::from_secs(10)) {
                server._scratch = scratch;
                return server;
            }
            server.kill();
        }
        let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
        panic!("{:?} did not start; log:\n{log}", self.flavor);
    }
}

impl Server {
    pub fn builder(flavor: Flavor) -> ServerBuilder {
        ServerBuilder {
            flavor,
            binary: None,
            args: Vec::new(),
            config_file: None,
            with_module: true,
            dir: None,
            cluster: false,
        }
    }

    pub fn start(flavor: Flavor) -> Server {
        Self::builder(flavor).start()
    }

    fn wait_ready(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(_)) = child.try_wait() {
                    return false;
                }
            }
            // Another test's server may have taken the port we picked: only our own process
            // counts as ready, and only once it has loaded its data (Valkey answers INFO, but
            // not commands, while it loads).
            let pid = self.child.as_ref().map(|child| child.id().to_string());
            if let (Ok(mut conn), Some(pid)) = (Conn::connect(self.port), pid) {
                // Not `call`: a connection refused or reset here only means "not yet".
                let reply = conn.send(&["INFO"]).and_then(|()| conn.read());
                if let Ok(Reply::Bulk(info)) = reply {
                    let info = String::from_utf8_lossy(&info);
                    let has = |wanted: &str| info.lines().any(|line| line.trim() == wanted);
                    if has(&format!("process_id:{pid}")) && has("loading:0") {
                        return true;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Makes this server a replica of `primary` and waits until the link is up.
    pub fn follow(&self, primary: &Server) {
        let mut c = self.conn();
        c.call(&["REPLICAOF", "127.0.0.1", &primary.port.to_string()]);
        assert!(
            wait_until(Duration::from_secs(10), || {
                info_field(&mut c, "replication", "master_link_status") == "up"
            }),
            "{:?} on port {} never synced with its primary",
            self.flavor,
            self.port
        );
    }

    pub fn conn(&self) -> Conn {
        Conn::connect(self.port).expect("connect to server")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// SIGKILL: no shutdown, no final fsync.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// A clean SHUTDOWN NOSAVE, waiting for the process to exit.
    pub fn shutdown(&mut self) {
        if let Ok(mut conn) = Conn::connect(self.port) {
            let _ = conn.send(&["SHUTDOWN", "NOSAVE"]);
        }
        if let Some(mut child) = self.child.take() {
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let crashed = match self.child.as_mut() {
            Some(child) => matches!(child.try_wait(), Ok(Some(_))),
            None => false,
        };
        self.kill();
        if crashed {
            let report = format!(
                "{:?} died during the test; log:\n{}",
                self.flavor,
                self.log()
            );
            // Already failing: say why the server went away, without a double panic.
            if std::thread::panicking() {
                eprintln!("{report}");
            } else {
                panic!("{report}");
            }
        }
    }
}

pub fn info_field(conn: &mut Conn, section: &str, field: &str) -> String {
    let info = conn.call(&["INFO", section]).text();
    info.lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("INFO {section} has no {field}"))
        .trim()
        .to_string()
}

/// A small deterministic generator (xorshift64*), so generated workloads are reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Every write in the AOF, fsynced before the reply, and no RDB preamble, so the file holds
/// the replicated commands themselves.
pub const AOF_ALWAYS: [&str; 6] = [
    "--appendonly",
    "yes",
    "--appendfsync",
    "always",
    "--aof-use-rdb-preamble",
    "no",
];

/// The seed's INCREX idiom, verbatim.
pub const INCREX_LUA: &str = r#"local current = redis.call("incr", KEYS[1])
if tonumber(current) == 1 then
  redis.call("expire", KEYS[1], ARGV[1])
end
return current"#;

/// The seed's ZWINDOW idiom, verbatim.
pub const ZWINDOW_LUA: &str = r#"local now = tonumber(ARGV[1])
redis.call('zremrangebyscore', KEYS[1], 0, now - tonumber(ARGV[2]))
if redis.call('zcard', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('zadd', KEYS[1], now, ARGV[4])
  redis.call('expire', KEYS[1], ARGV[2])
  return 1
end
return 0"#;

pub fn wait_until(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}
