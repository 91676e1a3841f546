//! The servers of a phase, as the campaign starts them: three servers with the module, one
//! primary and two replicas, watched by three Sentinels (a quorum of two), each server and
//! its Sentinel on a host of their own (a network namespace, where the campaign may make them);
//! or a cluster of three primaries and three replicas, on loopback. Every process is started
//! by the campaign and stopped by its pid when the phase ends.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use goblin_testkit::Flavor;

use crate::net::{Host, Net};
use crate::procs::{self, Proc, Spec};
use crate::wire::{cmd, Client, Reply, ReplyExt};

/// The Sentinels' name for the primary they watch.
pub const MASTER: &str = "goblin";
/// How long the Sentinels wait before they call a primary down.
pub const DOWN_AFTER_MS: u64 = 1500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Sentinel,
    Cluster,
}

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Shape::Sentinel => "sentinel",
            Shape::Cluster => "cluster",
        }
    }
}

#[derive(Debug, Clone)]
pub struct NodeInfo {
    pub name: String,
    pub addr: SocketAddr,
    /// Its host, where the servers live in namespaces.
    pub host: Option<Host>,
}

/// How a phase's servers are started: the binary, the module and its arguments, and the
/// environment (a planted defect's switch).
#[derive(Debug, Clone)]
pub struct Launch {
    pub flavor: Flavor,
    pub module: PathBuf,
    pub module_args: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl Launch {
    /// A server's config file (which the Sentinels rewrite as they reconfigure it, so that a
    /// server killed and started again comes back in the role they last gave it), and the
    /// command line that starts it.
    fn server_args(&self, dir: &Path, addr: SocketAddr, extra: &[&str]) -> io::Result<Vec<String>> {
        std::fs::create_dir_all(dir)?;
        let mut config = format!(
            "port {port}\nbind {ip}\nprotected-mode no\ndaemonize no\nlogfile server.log\ndir {dir}\n\
             save \"\"\nappendonly yes\nappendfsync always\nenable-debug-command yes\nenable-module-command yes\n\
             repl-diskless-sync-delay 0\nloadmodule {module}{args}\n",
            port = addr.port(),
            ip = addr.ip(),
            dir = dir.display(),
            module = self.module.display(),
            args = self.module_args.iter().map(|a| format!(" {a}")).collect::<String>(),
        );
        for pair in extra.chunks(2) {
            config.push_str(&pair.join(" "));
            config.push('\n');
        }
        let path = dir.join("node.conf");
        std::fs::write(&path, config)?;
        Ok(vec![path.display().to_string()])
    }
}

fn spec(
    launch: &Launch,
    name: &str,
    net: Option<&Net>,
    host: Host,
    addr: SocketAddr,
    dir: PathBuf,
    args: Vec<String>,
) -> Spec {
    Spec {
        name: name.into(),
        binary: launch.flavor.binary(),
        namespace: net.map(|net| net.namespace(host)),
        addr,
        dir,
        args,
        env: launch.env.clone(),
    }
}

/// An address for `host`'s server (or Sentinel, `sentinel`): its namespace's on port 6379
/// (26379), or a free loopback port.
fn address(net: Option<&Net>, host: Host, sentinel: bool) -> SocketAddr {
    match net {
        Some(net) => SocketAddr::new(
            IpAddr::V4(net.address(host)),
            if sentinel { 26379 } else { 6379 },
        ),
        None => SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), goblin_testkit::free_port()),
    }
}

/// A Sentinel group as started: the servers, the Sentinels, where the servers are, and where
/// the Sentinels are.
pub type Group = (Vec<Proc>, Vec<Proc>, Vec<NodeInfo>, Vec<SocketAddr>);

/// Three servers (node 0 the primary) and three Sentinels.
pub fn sentinel_group(launch: &Launch, net: Option<&Net>, scratch: &Path) -> io::Result<Group> {
    let mut nodes = Vec::new();
    let mut infos = Vec::new();
    let mut primary_addr = None;
    for n in 0..3 {
        let host = Host::Node(n);
        let addr = address(net, host, false);
        let mut extra: Vec<String> = Vec::new();
        if let Some(primary) = primary_addr {
            let primary: SocketAddr = primary;
            extra = vec![
                "replicaof".into(),
                format!("{} {}", primary.ip(), primary.port()),
            ];
        }
        let extra_refs: Vec<&str> = extra.iter().map(String::as_str).collect();
        let name = format!("node{n}");
        let dir = scratch.join(&name);
        let args = launch.server_args(&dir, addr, &extra_refs)?;
        let mut proc = Proc::new(spec(launch, &name, net, host, addr, dir, args));
        proc.start(&[], Duration::from_secs(20))?;
        primary_addr.get_or_insert(addr);
        nodes.push(proc);
        infos.push(NodeInfo {
            name,
            addr,
            host: net.map(|_| host),
        });
    }
    let primary = primary_addr.ok_or_else(|| io::Error::other("no primary"))?;
    for info in &infos[1..] {
        wait_link_up(info.addr)?;
    }
    let mut sentinels = Vec::new();
    let mut sentinel_addrs = Vec::new();
    for n in 0..3 {
        let host = Host::Node(n);
        let addr = address(net, host, true);
        let name = format!("sentinel{n}");
        let dir = scratch.join(&name);
        std::fs::create_dir_all(&dir)?;
        let config = dir.join("sentinel.conf");
        std::fs::write(
            &config,
            format!(
                "port {port}\nbind {ip}\nprotected-mode no\ndaemonize no\nlogfile server.log\ndir .\n\
                 sentinel monitor {MASTER} {pip} {pport} 2\n\
                 sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n\
                 sentinel failover-timeout {MASTER} 6000\n\
                 sentinel parallel-syncs {MASTER} 2\n",
                port = addr.port(),
                ip = addr.ip(),
                pip = primary.ip(),
                pport = primary.port(),
            ),
        )?;
        let args = vec![config.display().to_string(), "--sentinel".into()];
        let mut proc = Proc::new(spec(launch, &name, net, host, addr, dir, args));
        proc.start(&[], Duration::from_secs(20))?;
        sentinels.push(proc);
        sentinel_addrs.push(addr);
    }
    // Every Sentinel knows the other two, and both replicas.
    for addr in &sentinel_addrs {
        let known = crate::procs::wait_for(Duration::from_secs(20), || {
            let mut client = Client::connect(*addr, Duration::from_secs(1)).ok()?;
            let reply = client
                .call(
                    &cmd(&["SENTINEL", "SENTINELS", MASTER]),
                    Duration::from_secs(1),
                )
                .ok()?;
            let replicas = client
                .call(
                    &cmd(&["SENTINEL", "REPLICAS", MASTER]),
                    Duration::from_secs(1),
                )
                .ok()?;
            let enough = reply.items()?.len() >= 2 && replicas.items()?.len() >= 2;
            enough.then_some(())
        });
        if known.is_none() {
            return Err(io::Error::other(format!(
                "the Sentinel at {addr} never met the others"
            )));
        }
    }
    Ok((nodes, sentinels, infos, sentinel_addrs))
}

fn wait_link_up(addr: SocketAddr) -> io::Result<()> {
    crate::procs::wait_for(Duration::from_secs(20), || {
        let mut client = Client::connect(addr, Duration::from_secs(1)).ok()?;
        (procs::info_field(&mut client, "replication", "master_link_status")? == "up").then_some(())
    })
    .ok_or_else(|| io::Error::other(format!("the replica at {addr} never synced")))
}

/// Three primaries, each with a replica, on loopback; `cluster-node-timeout` short, so that a
/// primary that dies is failed over in seconds.
pub fn cluster(launch: &Launch, scratch: &Path) -> io::Result<(Vec<Proc>, Vec<NodeInfo>)> {
    let mut nodes = Vec::new();
    let mut infos = Vec::new();
    for n in 0..6 {
        let port = goblin_testkit::free_cluster_port();
        let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
        let name = format!("node{n}");
        let dir = scratch.join(&name);
        let args = launch.server_args(
            &dir,
            addr,
            &[
                "cluster-enabled",
                "yes",
                "cluster-config-file",
                "nodes.conf",
                "cluster-node-timeout",
                "1500",
                "cluster-allow-replica-migration",
                "no",
            ],
        )?;
        let mut proc = Proc::new(spec(launch, &name, None, Host::Clients, addr, dir, args));
        proc.start(&[], Duration::from_secs(20))?;
        nodes.push(proc);
        infos.push(NodeInfo {
            name,
            addr,
            host: None,
        });
    }
    let call = |addr: SocketAddr, words: &[&str]| -> io::Result<Reply> {
        let mut client = Client::connect(addr, Duration::from_secs(2))?;
        client.call(&cmd(words), Duration::from_secs(10))
    };
    let ranges = [("0", "5460"), ("5461", "10922"), ("10923", "16383")];
    for (info, (first, last)) in infos.iter().zip(ranges) {
        call(info.addr, &["CLUSTER", "ADDSLOTSRANGE", first, last])?;
    }
    for info in &infos[1..] {
        call(
            infos[0].addr,
            &[
                "CLUSTER",
                "MEET",
                &info.addr.ip().to_string(),
                &info.addr.port().to_string(),
            ],
        )?;
    }
    for info in &infos {
        let ok = crate::procs::wait_for(Duration::from_secs(30), || {
            let text = call(info.addr, &["CLUSTER", "INFO"]).ok()?.as_text()?;
            (text.contains("cluster_state:ok") && text.contains("cluster_known_nodes:6"))
                .then_some(())
        });
        if ok.is_none() {
            return Err(io::Error::other("the cluster never formed"));
        }
    }
    for n in 0..3 {
        let id = call(infos[n].addr, &["CLUSTER", "MYID"])?
            .as_text()
            .unwrap_or_default();
        call(infos[n + 3].addr, &["CLUSTER", "REPLICATE", &id])?;
    }
    for info in &infos[3..] {
        wait_link_up(info.addr)?;
    }
    Ok((nodes, infos))
}

/// The slot of a key: CRC16 of its hash tag (or of the whole key).
pub fn slot(key: &[u8]) -> u16 {
    let tagged = key
        .iter()
        .position(|&b| b == b'{')
        .and_then(|open| {
            let rest = &key[open + 1..];
            rest.iter()
                .position(|&b| b == b'}')
                .filter(|&close| close > 0)
                .map(|close| &rest[..close])
        })
        .unwrap_or(key);
    crc16(tagged) % 16384
}

fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The owner of every slot, from `CLUSTER SLOTS` (addresses; the caller maps them to nodes).
pub fn slot_owners(reply: &Reply) -> Vec<(u16, u16, SocketAddr)> {
    let mut owners = Vec::new();
    for range in reply.items().unwrap_or(&[]) {
        let Some(items) = range.items() else {
            continue;
        };
        let (Some(first), Some(last)) = (
            items.first().and_then(ReplyExt::as_int),
            items.get(1).and_then(ReplyExt::as_int),
        ) else {
            continue;
        };
        let Some(primary) = items.get(2).and_then(ReplyExt::items) else {
            continue;
        };
        let ip = primary.first().and_then(ReplyExt::as_text);
        let port = primary.get(1).and_then(ReplyExt::as_int);
        if let (Some(ip), Some(port)) = (ip, port) {
            if let Ok(ip) = ip.parse::<IpAddr>() {
                owners.push((first as u16, last as u16, SocketAddr::new(ip, port as u16)));
            }
        }
    }
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_the_servers() {
        // CLUSTER KEYSLOT's answers.
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"{user1000}.following"), slot(b"user1000"));
        assert_eq!(slot(b"123456789"), 12739);
        assert_eq!(slot(b"{}x"), slot(b"{}x"));
    }
}
