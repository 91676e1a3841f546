//! The campaign's own network: network namespaces joined by veth pairs to a bridge that lives
//! in a namespace of its own, so nothing outside them is touched (not even the host's own
//! namespace). Each server host (a server and its Sentinel) is a namespace; so are the
//! campaign's majority clients and its admin path (the nemesis and the observers, which no
//! partition cuts). A partition is a set of blackhole routes inside the namespaces on either
//! side: packets between them vanish, as on a cut cable, while each side keeps talking within
//! itself. Everything is deleted by name when the `Net` is dropped, pass or fail.
//!
//! Needs root and `ip` (iproute2). Delay (`tc qdisc ... netem`) is used where the kernel has
//! it: `Net::delay_works` says.

use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT: AtomicU32 = AtomicU32::new(0);

/// Where a thread or a process lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Host {
    /// Server host `n`: its server and its Sentinel, and the clients that live beside them.
    Node(usize),
    /// The majority clients.
    Clients,
    /// The nemesis and the observers: never cut.
    Admin,
}

pub struct Net {
    /// The namespaces' prefix, unique to this campaign.
    pub tag: String,
    nodes: usize,
    created: Vec<String>,
    /// The blackhole routes in force: (namespace, address).
    cuts: Vec<(String, Ipv4Addr)>,
    /// Interfaces with a netem delay: (namespace, interface).
    delayed: Vec<(String, String)>,
}

fn ip(args: &[&str]) -> io::Result<()> {
    let output = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    if output.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}

impl Net {
    /// Whether this process may build namespaces (root, and `ip netns` works).
    pub fn available() -> bool {
        let root = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix("Uid:"))
                    .and_then(|uids| uids.split_whitespace().nth(1).map(|euid| euid == "0"))
            })
            .unwrap_or(false);
        root && Command::new("ip")
            .args(["netns", "list"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    }

    /// `nodes` server hosts, the clients' and the admin's namespaces, and the switch.
    pub fn create(nodes: usize) -> io::Result<Net> {
        let tag = format!(
            "gf{}x{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut net = Net {
            tag,
            nodes,
            created: Vec::new(),
            cuts: Vec::new(),
            delayed: Vec::new(),
        };
        net.build()?;
        Ok(net)
    }

    fn build(&mut self) -> io::Result<()> {
        let switch = self.namespace_of_switch();
        ip(&["netns", "add", &switch])?;
        self.created.push(switch.clone());
        ip(&["-n", &switch, "link", "set", "lo", "up"])?;
        ip(&["-n", &switch, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", &switch, "link", "set", "br0", "up"])?;
        let hosts: Vec<Host> = (0..self.nodes)
            .map(Host::Node)
            .chain([Host::Clients, Host::Admin])
            .collect();
        for (index, host) in hosts.iter().enumerate() {
            let ns = self.namespace(*host);
            ip(&["netns", "add", &ns])?;
            self.created.push(ns.clone());
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            // The pair is made in the switch, one end then moved into the host as eth0.
            let outer = format!("p{index}");
            let inner = format!("h{index}");
            ip(&[
                "-n", &switch, "link", "add", &outer, "type", "veth", "peer", "name", &inner,
            ])?;
            ip(&["-n", &switch, "link", "set", &inner, "netns", &ns])?;
            ip(&["-n", &ns, "link", "set", &inner, "name", "eth0"])?;
            let address = format!("{}/24", self.address(*host));
            ip(&["-n", &ns, "addr", "add", &address, "dev", "eth0"])?;
            ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
            ip(&["-n", &switch, "link", "set", &outer, "master", "br0"])?;
            ip(&["-n", &switch, "link", "set", &outer, "up"])?;
        }
        Ok(())
    }

    fn namespace_of_switch(&self) -> String {
        format!("{}sw", self.tag)
    }

    pub fn namespace(&self, host: Host) -> String {
        match host {
            Host::Node(n) => format!("{}n{n}", self.tag),
            Host::Clients => format!("{}c", self.tag),
            Host::Admin => format!("{}a", self.tag),
        }
    }

    pub fn address(&self, host: Host) -> Ipv4Addr {
        match host {
            Host::Node(n) => Ipv4Addr::new(10, 77, 0, 10 + n as u8),
            Host::Clients => Ipv4Addr::new(10, 77, 0, 100),
            Host::Admin => Ipv4Addr::new(10, 77, 0, 200),
        }
    }

    /// Cuts every host of `one` from every host of `other` (both ways). The admin is never cut.
    pub fn cut(&mut self, one: &[Host], other: &[Host]) -> io::Result<()> {
        for &a in one {
            for &b in other {
                if a == b || a == Host::Admin || b == Host::Admin {
                    continue;
                }
                for (from, to) in [(a, b), (b, a)] {
                    let (ns, dest) = (self.namespace(from), self.address(to));
                    if self.cuts.contains(&(ns.clone(), dest)) {
                        continue;
                    }
                    ip(&[
                        "-n",
                        &ns,
                        "route",
                        "add",
                        "blackhole",
                        &format!("{dest}/32"),
                    ])?;
                    self.cuts.push((ns, dest));
                }
            }
        }
        Ok(())
    }

    /// Removes every cut.
    pub fn heal(&mut self) -> io::Result<()> {
        let mut first_error = None;
        for (ns, dest) in std::mem::take(&mut self.cuts) {
            if let Err(error) = ip(&[
                "-n",
                &ns,
                "route",
                "del",
                "blackhole",
                &format!("{dest}/32"),
            ]) {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    pub fn is_cut(&self) -> bool {
        !self.cuts.is_empty()
    }

    /// Whether `tc ... netem` works here: tried on a scratch interface of the switch.
    pub fn delay_works(&self) -> bool {
        let switch = self.namespace_of_switch();
        let works = Command::new("ip")
            .args([
                "netns", "exec", &switch, "tc", "qdisc", "add", "dev", "lo", "root", "netem",
                "delay", "1ms",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if works {
            let _ = Command::new("ip")
                .args([
                    "netns", "exec", &switch, "tc", "qdisc", "del", "dev", "lo", "root",
                ])
                .status();
        }
        works
    }

    /// Delays every packet `host` sends by `ms` (and up to `jitter` more).
    pub fn delay(&mut self, host: Host, ms: u64, jitter: u64) -> io::Result<()> {
        let ns = self.namespace(host);
        let status = Command::new("ip")
            .args([
                "netns", "exec", &ns, "tc", "qdisc", "replace", "dev", "eth0", "root", "netem",
                "delay",
            ])
            .arg(format!("{ms}ms"))
            .arg(format!("{jitter}ms"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        if !status.success() {
            return Err(io::Error::other("tc netem refused"));
        }
        self.delayed.push((ns, "eth0".into()));
        Ok(())
    }

    pub fn undelay(&mut self) {
        for (ns, dev) in std::mem::take(&mut self.delayed) {
            let _ = Command::new("ip")
                .args([
                    "netns", "exec", &ns, "tc", "qdisc", "del", "dev", &dev, "root",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        self.undelay();
        // Deleting a namespace deletes its interfaces, and with them their peers.
        for ns in self.created.drain(..).rev() {
            let _ = ip(&["netns", "del", &ns]);
        }
    }
}

/// Deletes the namespaces a campaign that is gone left behind (one killed before it could
/// clean up), and stops every process still in them: its namespaces are named after its pid.
pub fn reap_stale() {
    let Ok(output) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    let listed = String::from_utf8_lossy(&output.stdout).into_owned();
    for name in listed
        .lines()
        .filter_map(|line| line.split_whitespace().next())
    {
        let Some(pid) = name
            .strip_prefix("gf")
            .and_then(|rest| rest.split('x').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        if let Ok(pids) = Command::new("ip").args(["netns", "pids", name]).output() {
            for pid in String::from_utf8_lossy(&pids.stdout).split_whitespace() {
                if let Ok(pid) = pid.parse::<u32>() {
                    let _ = crate::procs::signal(pid, "KILL");
                }
            }
        }
        let _ = ip(&["netns", "del", name]);
    }
}

/// Moves the calling thread into namespace `ns` (its sockets are made there from then on).
pub fn enter(ns: &str) -> io::Result<()> {
    let file = File::open(format!("/var/run/netns/{ns}"))?;
    nix::sched::setns(file.as_raw_fd(), nix::sched::CloneFlags::CLONE_NEWNET)
        .map_err(|errno| io::Error::from_raw_os_error(errno as i32))
}

/// Runs `command` inside namespace `ns` (`ip netns exec`, which execs it: its pid is the
/// program's own).
pub fn command_in(ns: Option<&str>, program: &std::path::Path) -> Command {
    match ns {
        Some(ns) => {
            let mut command = Command::new("ip");
            command.args(["netns", "exec", ns]).arg(program);
            command
        }
        None => Command::new(program),
    }
}
