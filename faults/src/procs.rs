//! The processes the campaign starts: servers and Sentinels, each in its host's namespace (or
//! on loopback), each known by its pid. A process is stopped by its pid when dropped, whatever
//! happened (and woken first if the nemesis had stopped it), and its exit is told apart from a
//! kill of the nemesis's own: a process that exits on its own has crashed.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::net;
use crate::wire::{cmd, Client, Reply, ReplyExt};

/// How a process was started: enough to start it again the same way.
#[derive(Debug, Clone)]
pub struct Spec {
    pub name: String,
    pub binary: PathBuf,
    pub namespace: Option<String>,
    pub addr: SocketAddr,
    pub dir: PathBuf,
    /// Arguments after the binary (a config file first, for a Sentinel).
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

pub struct Proc {
    pub spec: Spec,
    child: Option<Child>,
    /// Times it was started: a restart is a new incarnation.
    pub incarnation: u32,
    /// Stopped with SIGSTOP by the nemesis.
    pub frozen: bool,
    /// Killed by the nemesis (or stopped by the campaign): its exit is no crash.
    pub expected_exit: bool,
}

/// Sends `signal` (`STOP`, `CONT`, `KILL`) to `pid`.
pub fn signal(pid: u32, signal: &str) -> io::Result<()> {
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!("kill -{signal} {pid} failed")))
    }
}

impl Proc {
    pub fn new(spec: Spec) -> Proc {
        Proc {
            spec,
            child: None,
            incarnation: 0,
            frozen: false,
            expected_exit: false,
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn log_path(&self) -> PathBuf {
        self.spec.dir.join("server.log")
    }

    /// Starts the process (again), with `extra` arguments this time only, and waits until it
    /// answers PING (loaded) within `within`. The caller must be able to reach its address.
    pub fn start(&mut self, extra: &[String], within: Duration) -> io::Result<()> {
        std::fs::create_dir_all(&self.spec.dir)?;
        let mut command = net::command_in(self.spec.namespace.as_deref(), &self.spec.binary);
        // What it says before its log is open (a config it refuses) goes to a file beside it.
        let early = std::fs::File::create(self.spec.dir.join("stderr.log"))?;
        command
            .args(&self.spec.args)
            .args(extra)
            .envs(self.spec.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.spec.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(early);
        let child = command.spawn()?;
        // For a later campaign to stop it, should this one be killed before it can.
        let _ = std::fs::write(self.spec.dir.join("pid"), child.id().to_string());
        self.child = Some(child);
        self.incarnation += 1;
        self.frozen = false;
        self.expected_exit = false;
        self.wait_ready(within)
    }

    fn wait_ready(&mut self, within: Duration) -> io::Result<()> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.exited() {
                return Err(io::Error::other(format!(
                    "{} exited at start ({status}); its log:\n{}",
                    self.spec.name,
                    self.log_tail(30)
                )));
            }
            if let Ok(mut client) = Client::connect(self.spec.addr, Duration::from_millis(500)) {
                if let Ok(Reply::Status(pong)) =
                    client.call(&cmd(&["PING"]), Duration::from_millis(500))
                {
                    if pong == "PONG" {
                        return Ok(());
                    }
                }
            }
            if Instant::now() > deadline {
                return Err(io::Error::other(format!(
                    "{} did not answer within {within:?}; its log:\n{}",
                    self.spec.name,
                    self.log_tail(30)
                )));
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    /// The exit status, if the process has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child
            .as_mut()
            .and_then(|child| child.try_wait().ok().flatten())
    }

    /// Whether it died without being told to: a crash.
    pub fn crashed(&mut self) -> Option<std::process::ExitStatus> {
        if self.expected_exit {
            return None;
        }
        self.exited()
    }

    /// SIGKILL, reaped.
    pub fn kill(&mut self) {
        self.expected_exit = true;
        if let Some(mut child) = self.child.take() {
            if self.frozen {
                let _ = signal(child.id(), "CONT");
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        self.frozen = false;
    }

    pub fn freeze(&mut self) -> io::Result<()> {
        let pid = self.pid().ok_or_else(|| io::Error::other("not running"))?;
        signal(pid, "STOP")?;
        self.frozen = true;
        Ok(())
    }

    pub fn thaw(&mut self) -> io::Result<()> {
        let pid = self.pid().ok_or_else(|| io::Error::other("not running"))?;
        signal(pid, "CONT")?;
        self.frozen = false;
        Ok(())
    }

    pub fn running(&self) -> bool {
        self.child.is_some()
    }

    /// The last `lines` lines of its log (and what it said before its log was open).
    pub fn log_tail(&self, lines: usize) -> String {
        let early = std::fs::read_to_string(self.spec.dir.join("stderr.log")).unwrap_or_default();
        let log = early + &std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let all: Vec<&str> = log.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Its log from the first line that tells of a crash on, `lines` of it at most: the
    /// assertion, the command and the stack the server prints first, where the tail is the
    /// memory test it runs last. The tail when no line tells of one. What the process wrote to
    /// its stderr comes first: a panic of the module is written there, not to the log.
    pub fn crash_report(&self, lines: usize) -> String {
        let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let all: Vec<&str> = log.lines().collect();
        let from_log = match all.iter().position(|line| tells_of_crash(line)) {
            Some(first) => all[first..(first + lines).min(all.len())].join("\n"),
            None => self.log_tail(lines),
        };
        match self.stderr_crash() {
            Some(said) => format!("its stderr: {said}\n{from_log}"),
            None => from_log,
        }
    }

    /// What its log (or its stderr) says of a crash or a panic of the module, if anything.
    pub fn log_shows_crash(&self) -> Option<String> {
        let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        self.stderr_crash().or_else(|| {
            log.lines()
                .find(|line| tells_of_crash(line))
                .map(str::to_string)
        })
    }

    /// The line of its stderr that tells of a crash (a Rust panic's message), with the next.
    fn stderr_crash(&self) -> Option<String> {
        let said = std::fs::read_to_string(self.spec.dir.join("stderr.log")).unwrap_or_default();
        let lines: Vec<&str> = said.lines().collect();
        let first = lines.iter().position(|line| tells_of_crash(line))?;
        Some(lines[first..(first + 2).min(lines.len())].join(" / "))
    }
}

/// Whether a line of a server's log or stderr begins a crash or a module's panic.
fn tells_of_crash(line: &str) -> bool {
    CRASH_MARKS.iter().any(|mark| line.contains(mark))
}

/// The lines a server's log begins a crash or a module's panic with.
const CRASH_MARKS: [&str; 6] = [
    "crashed by signal",
    "BUG REPORT",
    "ASSERTION FAILED",
    "Guru Meditation",
    "panicked at",
    "panic in a function that cannot unwind",
];

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A client on `addr`, or the reason there is none.
pub fn admin(addr: SocketAddr) -> io::Result<Client> {
    Client::connect(addr, Duration::from_secs(2))
}

/// `INFO section`'s `field`.
pub fn info_field(client: &mut Client, section: &str, field: &str) -> Option<String> {
    let reply = client
        .call(&cmd(&["INFO", section]), Duration::from_secs(5))
        .ok()?;
    let text = reply.as_text()?;
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .map(|value| value.trim().to_string())
}

/// Asks `check` every 50 ms until it gives something, for `within` at most.
pub fn wait_for<T>(within: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = check() {
            return Some(found);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops the processes a campaign that is gone left behind, and removes its files: each phase's
/// directory is named after the campaign's pid, and each process's directory holds its pid.
pub fn reap_stale() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.contains("-faults-") {
            continue;
        }
        let Some(pid) = name
            .strip_prefix("goblin-test-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let Ok(children) = std::fs::read_dir(entry.path()) else {
            continue;
        };
        for child in children.flatten() {
            let dir = child.path();
            let Some(pid) = std::fs::read_to_string(dir.join("pid"))
                .ok()
                .and_then(|pid| pid.trim().parse::<u32>().ok())
            else {
                continue;
            };
            // Only if that pid is still the process that ran there.
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
            if cwd.is_some_and(|cwd| cwd == dir) {
                let _ = signal(pid, "KILL");
            }
        }
        let _ = std::fs::remove_dir_all(entry.path());
    }
}
