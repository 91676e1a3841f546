//! Real servers for Goblin's integration tests and benchmarks: each caller starts its own
//! server process on its own port, with the freshly built module loaded, and talks RESP to it
//! over loopback.
//!
//! The servers are listed once, in `servers.rs`; `scripts/servers.sh` installs them. A missing
//! server fails with the command that installs it: it is never a skip.
//!
//! # Replica mode
//!
//! Every server a test starts (`Server::start`, `Server::builder(..).start()`) has, by default,
//! a replica beside it: a second process of the same flavor *without* the module, following
//! the primary (`REPLICAOF`, then `master_link_status:up`). Both run with
//! `--repl-diskless-sync-delay 0`, so the first sync starts at once, and the primary keeps a
//! 1 MB backlog on every server (Redis's default; Valkey's 10 MB would grow through a test
//! that measures memory). The replica sees only what
//! the module replicates, so every test, whatever it is about, also checks that the module's
//! writes reach a replica as core commands that rebuild the same data.
//!
//! When the primary `Server` is dropped at the end of a test that has not failed:
//!
//! 1. `WAIT 1 10000` on the primary (after a `PUBLISH`, so that it waits for everything
//!    written) must return 1, and the replica's `slave_repl_offset` must reach the primary's
//!    `master_repl_offset`;
//! 2. the two datasets are compared (`dataset`): every key of every database INFO keyspace
//!    lists, with its type, its whole value and its `PEXPIRETIME`. Keys may expire while the
//!    comparison runs: the primary's `TIME` is read before and after both sides are read, and a
//!    key that one side lacks is left out only if its expiry on the other side is at or before
//!    the time read after. Nothing else is tolerated;
//! 3. the replica's log must not show that it could not apply its primary's stream ("unknown
//!    command": a GOBLIN command in the stream would be unknown there).
//!
//! Any difference panics with a diff; a replica that died is reported with its log. If the test
//! is already failing, nothing is compared and deaths are printed instead (no double panic).
//! Eviction is switched off on the primary (`maxmemory 0`) before the comparison: the test is
//! over, and an eviction then would be a write of the harness's own.
//!
//! Opt out with `ServerBuilder::without_replica()` (with a comment saying why) for a server the
//! test kills, restarts or shuts down (`kill` and `shutdown` refuse a server in replica mode),
//! one the test makes a replica of another (`follow` refuses it), cluster nodes (`start`
//! refuses them), and the benchmark, which measures a server alone. `Server::replica()` gives a
//! test the replica itself.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub mod resp;
pub use resp::{Conn, Reply};

pub mod fenced;
pub mod memory;

mod capability;
pub use capability::{assert_lacks, Capability};
mod replica;
pub use replica::{caught_up, dataset, replication_errors, snapshot, KeyState};

/// The repository's root (this crate lives in `testkit/`).
pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
}

/// Runs `command` to its end with its output (stdout and stderr together) in a log file, and
/// kills it as hung after `timeout`, panicking with what it printed; its status and output.
/// For the third-party suites the tests run, whose output can be long.
pub fn run_logged(
    label: &str,
    command: &mut Command,
    timeout: Duration,
) -> (std::process::ExitStatus, String) {
    let started = Instant::now();
    let scratch = TempDir::new("logged");
    let log = scratch.0.join("output.log");
    let file = std::fs::File::create(&log).expect("log file");
    command
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("log file"))
        .stderr(file);
    let mut child = command.spawn().unwrap_or_else(|e| panic!("{label}: {e}"));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{label}: ran over {timeout:?}; its output:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    (status, std::fs::read_to_string(&log).unwrap_or_default())
}

/// `tool` of the Python virtualenv `.servers/<venv>` that scripts/python.sh installs; a
/// missing one says how to get it.
pub fn venv_tool(venv: &str, tool: &str) -> PathBuf {
    let path = repo_root()
        .join(".servers")
        .join(venv)
        .join("bin")
        .join(tool);
    assert!(
        path.exists(),
        "no {} (run `make test`, which runs scripts/servers.sh and so scripts/python.sh)",
        path.display()
    );
    path
}

mod servers;
pub use servers::{redis810_with_gcra, Family, Flavor};

/// The process's soft limit on open descriptors raised to its hard limit (`ulimit -Hn`), which
/// it returns, and which a server started from here inherits too: for the tests and the
/// benchmark that open thousands of connections.
pub fn raise_open_files_limit() -> u64 {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("/proc/self/limits");
    let hard: u64 = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .and_then(|line| line.split_whitespace().nth(4))
        .and_then(|hard| hard.parse().ok())
        .expect("the hard limit on open files");
    let status = Command::new("prlimit")
        .args(["--pid", &std::process::id().to_string()])
        .arg(format!("--nofile={hard}:{hard}"))
        .status()
        .expect("prlimit (util-linux)");
    assert!(status.success(), "prlimit could not raise the soft limit");
    hard
}

/// The module's test build (`--features test-clock-offset`: the module argument
/// `fence-clock-offset-ms`, which the module users load refuses; and `planted-defects`, the
/// defects the fault campaign must catch, each off unless the server's environment names it),
/// built once per test process into target/test-build (cargo finds it fresh at once when
/// nothing changed).
pub fn test_build_path() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let target = repo_root().join("target/test-build");
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let output = Command::new(cargo)
                .args(["build", "--release", "--lib", "-p", "goblin"])
                .args([
                    "--features",
                    "test-clock-offset planted-defects",
                    "--target-dir",
                ])
                .arg(&target)
                .current_dir(repo_root())
                .output()
                .expect("run cargo");
            assert!(
                output.status.success(),
                "the test build failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            target.join("release/libgoblin.so")
        })
        .clone()
}

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

/// A running server process, killed when dropped; in replica mode (the default), with its
/// replica beside it, checked against it when dropped (see the crate docs).
pub struct Server {
    pub flavor: Flavor,
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
    _scratch: Option<TempDir>,
    replica: Option<Box<Server>>,
}

pub struct ServerBuilder {
    flavor: Flavor,
    /// Another binary of the same family and version than the flavor's own.
    binary: Option<PathBuf>,
    config_file: Option<PathBuf>,
    args: Vec<String>,
    /// Environment variables of the server process (and of its replica).
    env: Vec<(String, String)>,
    with_module: bool,
    /// Arguments of the module's own (`loadmodule path ARGS`).
    module_args: Vec<String>,
    /// Load the module's test build (`test_build_path`) instead of the module users load.
    test_build: bool,
    dir: Option<PathBuf>,
    cluster: bool,
    replica: bool,
    replica_args: Vec<String>,
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

    /// An environment variable of the server process (and its replica's): a preloaded library
    /// that gives it a clock of the test's own, say.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// The module's own arguments, after its path (`fence-margin-ms 200`).
    pub fn module_args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.module_args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Loads the module's test build (`test_build_path`): for the module arguments only tests
    /// have (`fence-clock-offset-ms`).
    pub fn test_build(mut self) -> Self {
        self.test_build = true;
        self
    }

    pub fn without_module(mut self) -> Self {
        self.with_module = false;
        self
    }

    /// No replica beside this server: for a server the test kills, restarts, shuts down or
    /// makes a replica itself, a cluster node, and the benchmark.
    pub fn without_replica(mut self) -> Self {
        self.replica = false;
        self
    }

    /// Settings for the replica of replica mode only (after its own).
    pub fn replica_args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.replica_args.extend(args.into_iter().map(Into::into));
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
        assert!(
            !(self.cluster && self.replica),
            "a cluster node cannot have a plain replica: build it with .without_replica()"
        );
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
                let module = if self.test_build {
                    test_build_path()
                } else {
                    module_path()
                };
                cmd.args(["--loadmodule", module.to_str().expect("utf-8 path")])
                    .args(&self.module_args);
            }
            if self.replica {
                // The replica's first sync starts at once, not after the default delay. The
                // backlog the replica brings is Redis's default size on every server (Valkey's
                // is 10 MB): a test that measures memory sees it filled by its warm-up.
                cmd.args(["--repl-diskless-sync-delay", "0"]);
                cmd.args(["--repl-backlog-size", "1mb"]);
            }
            cmd.envs(self.env.iter().map(|(name, value)| (name, value)));
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
                replica: None,
            };
            if server.wait_ready(Duration::from_secs(10)) {
                server._scratch = scratch;
                if self.replica {
                    // The replica runs the primary's binary: a primary built with GCRA
                    // replicates GCRA itself, which only that build knows.
                    let mut replica = Server::builder(self.flavor);
                    if let Some(binary) = &self.binary {
                        replica = replica.binary(binary.clone());
                    }
                    for (name, value) in &self.env {
                        replica = replica.env(name, value);
                    }
                    let replica = replica
                        .without_module()
                        .without_replica()
                        .args(["--repl-diskless-sync-delay", "0"])
                        .args(&self.replica_args)
                        .start();
                    replica.follow(&server);
                    server.replica = Some(Box::new(replica));
                }
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
            env: Vec::new(),
            config_file: None,
            with_module: true,
            module_args: Vec::new(),
            test_build: false,
            dir: None,
            cluster: false,
            replica: true,
            replica_args: Vec::new(),
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

    /// The replica beside this server, in replica mode.
    pub fn replica(&self) -> Option<&Server> {
        self.replica.as_deref()
    }

    /// Makes this server a replica of `primary` and waits until the link is up.
    pub fn follow(&self, primary: &Server) {
        assert!(
            self.replica.is_none(),
            "{:?} on port {} has a replica beside it: a server the test makes a replica must \
             be built with .without_replica()",
            self.flavor,
            self.port
        );
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
        self.refuse_to_stop_in_replica_mode("kills");
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn refuse_to_stop_in_replica_mode(&self, what: &str) {
        assert!(
            self.replica.is_none(),
            "the test {what} {:?} on port {}, which has a replica to check when the test ends: \
             build it with .without_replica()",
            self.flavor,
            self.port
        );
    }

    /// Whether the process exited on its own.
    fn died(&mut self) -> bool {
        match self.child.as_mut() {
            Some(child) => matches!(child.try_wait(), Ok(Some(_))),
            None => false,
        }
    }

    /// A clean SHUTDOWN NOSAVE, waiting for the process to exit.
    pub fn shutdown(&mut self) {
        self.refuse_to_stop_in_replica_mode("shuts down");
        if let Ok(mut conn) = Conn::connect(self.port) {
            let _ = conn.send(&["SHUTDOWN", "NOSAVE"]);
        }
        self.wait_for_exit();
    }

    /// Stops the server's process (SIGSTOP) until `resume`: whatever reaches its sockets
    /// meanwhile waits there, and it reads it all in one turn of its event loop when it goes on,
    /// in the order it arrived. What a client sent has not always arrived when its call returns
    /// (the kernel may deliver a loopback packet later, and a child another thread forks holds
    /// a closed socket open until it execs): `until_unread` and `until_closed` wait for it.
    ///
    /// SIGSTOP, returning once the process is stopped: the signal takes effect when the kernel
    /// next handles the process, not as `kill` returns, and a loaded machine can leave the
    /// server running a moment longer, reading what the test sends next. Its state in
    /// `/proc/<pid>/stat` says when it is stopped.
    pub fn pause(&self) {
        self.signal("-STOP");
        let Some(pid) = self.child.as_ref().map(Child::id) else {
            return;
        };
        let stopped = || {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ...`: the state follows the last parenthesis.
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            matches!(state, 'T' | 't').then_some(())
        };
        assert!(
            wait_until(Duration::from_secs(10), || stopped().is_some()),
            "{:?} on port {} did not stop",
            self.flavor,
            self.port
        );
    }

    /// Returns once the server's end of `conn` holds bytes it has not read yet: what `conn`
    /// sent has arrived (while the server is stopped, it stays there until it goes on).
    pub fn until_unread(&self, conn: &Conn) {
        let port = conn.local_port();
        let arrived = || self.socket_of(port).is_some_and(|(_, unread)| unread > 0);
        assert!(
            wait_until(Duration::from_secs(10), arrived),
            "what the client on port {port} sent never reached {:?}",
            self.flavor
        );
    }

    /// Returns once the close of the client that had local port `port` has reached the
    /// server's end of its connection (`CLOSE_WAIT`): the server sees it on its next read.
    pub fn until_closed(&self, port: u16) {
        const CLOSE_WAIT: u8 = 0x08;
        let closed = || {
            self.socket_of(port)
                .is_some_and(|(state, _)| state == CLOSE_WAIT)
        };
        assert!(
            wait_until(Duration::from_secs(10), closed),
            "the close of the client on port {port} never reached {:?}",
            self.flavor
        );
    }

    /// The server's end of the connection from local port `client`, as the kernel's socket
    /// table has it (`/proc/net/tcp`): its TCP state and the bytes it has not read.
    fn socket_of(&self, client: u16) -> Option<(u8, u64)> {
        let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
        let port_of = |address: &str| {
            let (_, port) = address.rsplit_once(':')?;
            u16::from_str_radix(port, 16).ok()
        };
        table.lines().skip(1).find_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, remote, state, queues) = (
                fields.get(1)?,
                fields.get(2)?,
                fields.get(3)?,
                fields.get(4)?,
            );
            if port_of(local)? != self.port || port_of(remote)? != client {
                return None;
            }
            let unread = u64::from_str_radix(queues.split_once(':')?.1, 16).ok()?;
            Some((u8::from_str_radix(state, 16).ok()?, unread))
        })
    }

    /// Lets a server stopped by `pause` go on (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        if let Some(child) = self.child.as_ref() {
            let status = Command::new("kill")
                .args([signal, &child.id().to_string()])
                .status();
            assert!(status.is_ok_and(|status| status.success()), "kill {signal}");
        }
    }

    /// SIGTERM, as `docker stop` and a service manager stop a server, waiting for it to exit.
    pub fn terminate(&mut self) {
        self.refuse_to_stop_in_replica_mode("terminates");
        if let Some(child) = self.child.as_ref() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
        }
        self.wait_for_exit();
    }

    /// Waits up to 10 s for the process to exit, then kills it.
    fn wait_for_exit(&mut self) {
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
        // Already failing: nothing here may panic (that would abort), and the comparison with
        // the replica is skipped; deaths are still reported.
        let panicking = std::thread::panicking();
        let mut reports = Vec::new();
        if self.died() {
            reports.push(format!(
                "{:?} on port {} died during the test; log:\n{}",
                self.flavor,
                self.port,
                self.log()
            ));
        }
        if let Some(mut replica) = self.replica.take() {
            if replica.died() {
                reports.push(format!(
                    "the replica (port {}) of {:?} on port {} died during the test; its log:\n{}",
                    replica.port,
                    self.flavor,
                    self.port,
                    replica.log()
                ));
            } else if reports.is_empty() && !panicking {
                // A failure to even talk to a server is a finding too, and both processes
                // must be stopped before anything is reported.
                let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    replica::check(self, &replica)
                }));
                let failure = match checked {
                    Ok(result) => result.err(),
                    Err(panic) => Some(panic_text(panic.as_ref())),
                };
                if let Some(failure) = failure {
                    reports.push(format!(
                        "{:?} on port {} and its replica (port {}, without the module) differ \
                         at the end of the test:\n{failure}",
                        self.flavor, self.port, replica.port
                    ));
                }
            }
            replica.stop();
        }
        self.stop();
        if !reports.is_empty() {
            let report = reports.join("\n");
            if panicking {
                eprintln!("{report}");
            } else {
                panic!("{report}");
            }
        }
    }
}

/// What a panic said (its payload, as `catch_unwind` or `JoinHandle::join` return it).
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".into())
}

/// The server's clock in milliseconds, from a `TIME` reply.
pub fn time_ms(time: &Reply) -> i64 {
    let time = time.texts();
    time[0].parse::<i64>().expect("seconds") * 1000 + time[1].parse::<i64>().expect("us") / 1000
}

/// The server's clock in milliseconds, now.
pub fn server_ms(conn: &mut Conn) -> i64 {
    time_ms(&conn.call(&["TIME"]))
}

/// `INFO <section>`'s lines `<prefix><name>:...<field>=<n>,...`: `n` by name (commandstats'
/// calls by command, errorstats' counts by error prefix).
pub fn info_counts(
    conn: &mut Conn,
    section: &str,
    prefix: &str,
    field: &str,
) -> std::collections::BTreeMap<String, u64> {
    let wanted = format!("{field}=");
    let info = conn.call(&["INFO", section]).text();
    info.lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix(prefix)?.split_once(':')?;
            let n = stats
                .split(',')
                .find_map(|pair| pair.strip_prefix(&wanted)?.trim().parse().ok())?;
            Some((name.to_string(), n))
        })
        .collect()
}

/// `INFO commandstats`: calls by command name, lowercase as the server lists them (a
/// subcommand as `script|load`).
pub fn command_calls(conn: &mut Conn) -> std::collections::BTreeMap<String, u64> {
    info_counts(conn, "commandstats", "cmdstat_", "calls")
}

/// `INFO errorstats`: error replies by prefix (`MOVED`, `ERR`, ...).
pub fn error_counts(conn: &mut Conn) -> std::collections::BTreeMap<String, u64> {
    info_counts(conn, "errorstats", "errorstat_", "count")
}

/// The commandstats (calls) and errorstats (counts) of `servers`, summed.
pub fn summed_stats(
    servers: &[&Server],
) -> (
    std::collections::BTreeMap<String, u64>,
    std::collections::BTreeMap<String, u64>,
) {
    let (mut calls, mut errors) = (
        std::collections::BTreeMap::new(),
        std::collections::BTreeMap::new(),
    );
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

/// GOBLIN.INCREX's Lua idiom, verbatim (docs/commands/goblin.increx.md).
pub const INCREX_LUA: &str = r#"local current = redis.call("incr", KEYS[1])
if tonumber(current) == 1 then
  redis.call("expire", KEYS[1], ARGV[1])
end
return current"#;

/// GOBLIN.ZWINDOW's Lua idiom, verbatim (docs/commands/goblin.zwindow.md).
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
