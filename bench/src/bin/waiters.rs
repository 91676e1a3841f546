//! `make bench`: what a parked waiter holds of the server's memory, GOBLIN.BLOCK's and
//! GOBLIN.BZWINDOW's beside BLPOP's, at 10,000 and 100,000 waiters on one key. Written to
//! `bench/results/waiters.md`.
//!
//!     waiters [--smoke] [--out FILE] [--servers a,b] [--counts 10000,100000]
//!
//! Each figure is `used_memory` once every parked client is blocked and the server has trimmed
//! their buffers (`CLIENT LIST`: no query buffer, a reply buffer under 2 KB, as its cron leaves
//! an idle client's), less `used_memory` settled before they came, per waiter. Beside them:
//! what the server spends on the two clients it makes for every client a module blocks
//! (`RedisModule_BlockClient`'s reply client and thread-safe client, each a 16 KB reply buffer
//! its cron never trims), from `CLIENT INFO` of a new connection; and what is left of a Goblin
//! waiter beyond BLPOP's and those two.
//!
//! A waiter is one bare socket. 100,000 of them need as many descriptors, in this process and
//! in the server (both take the hard limit, `ulimit -Hn`: a count beyond it is reported as not
//! measured), and more local ports than one address pair has: the server listens on several
//! loopback addresses, and the waiters spread over them.

#[path = "../flags.rs"]
mod flags;

use std::io::Write;
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use goblin_testkit::memory::{
    blocked_clients_trimmed, module_blocked_clients_bytes, settled_memory, used_memory,
};
use goblin_testkit::resp::encode;
use goblin_testkit::{info_field, wait_until, Conn, Flavor, Reply, Server};

/// Loopback addresses a server listens on: each gives the waiters its own range of local
/// ports (about 28,000).
const ADDRESSES: [&str; 6] = [
    "127.0.0.1",
    "127.0.0.2",
    "127.0.0.3",
    "127.0.0.4",
    "127.0.0.5",
    "127.0.0.6",
];

/// A token as long as a UUID, as the client packages send.
const TOKEN: &str = "a-token-of-36-bytes-like-a-uuid4-....";

struct Config {
    smoke: bool,
    out: PathBuf,
    flavors: Vec<Flavor>,
    counts: Vec<usize>,
}

impl Config {
    fn from_args() -> Config {
        let flags = flags::Flags::from_env();
        let smoke = flags.has("--smoke");
        let value = |flag: &str| flags.value(flag);
        let flavors = flags.flavors();
        let counts = match value("--counts") {
            Some(list) => list
                .split(',')
                .map(|n| n.parse().unwrap_or_else(|_| panic!("not a count: {n}")))
                .collect(),
            None if smoke => vec![200],
            None => vec![10_000, 100_000],
        };
        let out = value("--out").map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results/waiters.md")
        });
        Config {
            smoke,
            out,
            flavors,
            counts,
        }
    }
}

/// Bytes per waiter, at one count on one server.
struct Row {
    flavor: Flavor,
    waiters: usize,
    measured: Option<Measured>,
}

struct Measured {
    blpop: i64,
    block: i64,
    bzwindow: i64,
    server_clients: i64,
}

/// Bytes per waiter of `n` clients parked by `args`, read once the server trimmed them.
fn parked(server: &Server, c: &mut Conn, args: &[&str], n: usize) -> i64 {
    let before = settled_memory(c);
    let mut request = Vec::new();
    encode(args, &mut request);
    let started = Instant::now();
    let waiters: Vec<TcpStream> = (0..n)
        .map(|i| {
            let address = (ADDRESSES[i % ADDRESSES.len()], server.port);
            let mut stream = TcpStream::connect(address).expect("connect a waiter");
            stream.write_all(&request).expect("send");
            stream
        })
        .collect();
    let all = n.to_string();
    let blocked = wait_until(Duration::from_secs(600), || {
        std::thread::sleep(Duration::from_millis(200));
        info_field(c, "clients", "blocked_clients") == all
    });
    assert!(blocked, "{args:?}: not all {n} blocked");
    let trimmed = wait_until(Duration::from_secs(600), || {
        std::thread::sleep(Duration::from_secs(1));
        blocked_clients_trimmed(c)
    });
    assert!(
        trimmed,
        "{args:?}: the server never trimmed its blocked clients"
    );
    let per_waiter = (used_memory(c) - before) / n as i64;
    eprintln!(
        "  {:<10} {n:>7} x {:<16} {per_waiter:>6} bytes a waiter ({:.0?})",
        server.flavor.label(),
        args[0],
        started.elapsed()
    );
    drop(waiters);
    let gone = wait_until(Duration::from_secs(600), || {
        std::thread::sleep(Duration::from_millis(200));
        info_field(c, "clients", "blocked_clients") == "0"
    });
    assert!(gone, "{args:?}: waiters left behind");
    per_waiter
}

fn measure(flavor: Flavor, n: usize) -> Measured {
    // Alone (the benchmark measures a server alone), on every address of ADDRESSES.
    let server = Server::builder(flavor)
        .without_replica()
        .args(["--maxclients", &(n + 100).to_string()])
        .arg("--bind")
        .args(ADDRESSES)
        .start();
    let mut c = server.conn();
    assert_eq!(
        c.call(&["GOBLIN.LOCK", "held", "holder", "0"]),
        Reply::Status("OK".into())
    );
    assert_eq!(
        c.call(&["GOBLIN.BZWINDOW", "permits", "86400", "1", "holder", "0"]),
        Reply::Int(1)
    );
    let blpop = parked(&server, &mut c, &["BLPOP", "list", "0"], n);
    let block = parked(
        &server,
        &mut c,
        &["GOBLIN.BLOCK", "held", TOKEN, "0", "0"],
        n,
    );
    let bzwindow = parked(
        &server,
        &mut c,
        &["GOBLIN.BZWINDOW", "permits", "86400", "1", TOKEN, "0"],
        n,
    );
    Measured {
        blpop,
        block,
        bzwindow,
        server_clients: module_blocked_clients_bytes(&server),
    }
}

/// Descriptors a server needs beside its clients (its listeners, its files, its event loop).
const SERVER_DESCRIPTORS: usize = 200;

fn bytes(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    if n < 0 {
        format!("-{grouped}")
    } else {
        grouped
    }
}

fn markdown(rows: &[Row], limit: usize, took: Duration) -> String {
    let mut out = String::from("# A parked waiter's memory\n\n");
    out.push_str(&format!(
        "`make bench` (bench/src/bin/waiters.rs), took {:.0?}. Bytes of `used_memory` per parked \
         client, its own client included, once the server has trimmed the parked clients' \
         buffers, all waiting on one key: BLPOP on a list, GOBLIN.BLOCK on a held lock \
         (token of 36 bytes), GOBLIN.BZWINDOW on a full window of 1 slot. *Server's two* is \
         what the server spends on the reply client and the thread-safe client it makes for \
         every client a module blocks, each as a new connection's `tot-mem` says a client \
         costs; *Goblin's rest* is what a Goblin waiter holds beyond BLPOP's waiter and those \
         two (GOBLIN.BLOCK, GOBLIN.BZWINDOW): the server's book of a client a module blocks, and \
         Goblin's place in line.\n\n",
        took
    ));
    out.push_str(
        "| server | waiters | BLPOP | GOBLIN.BLOCK | GOBLIN.BZWINDOW | server's two | Goblin's rest |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut unmeasured = false;
    for row in rows {
        let Some(m) = &row.measured else {
            unmeasured = true;
            out.push_str(&format!(
                "| {} | {} | not measured | | | | |\n",
                row.flavor.label(),
                bytes(row.waiters as i64)
            ));
            continue;
        };
        let rest = |cost: i64| bytes(cost - m.blpop - m.server_clients);
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {}, {} |\n",
            row.flavor.label(),
            bytes(row.waiters as i64),
            bytes(m.blpop),
            bytes(m.block),
            bytes(m.bzwindow),
            bytes(m.server_clients),
            rest(m.block),
            rest(m.bzwindow),
        ));
    }
    if unmeasured {
        out.push_str(&format!(
            "\n*Not measured*: more waiters than this machine lets a process open descriptors \
             (`ulimit -Hn`: {}, less {SERVER_DESCRIPTORS} a server keeps for itself); raising \
             the hard limit takes `CAP_SYS_RESOURCE`.\n",
            bytes(limit as i64)
        ));
    }
    out
}

fn main() {
    let config = Config::from_args();
    let started = Instant::now();
    let limit = goblin_testkit::raise_open_files_limit() as usize;
    eprintln!(
        "waiters: {} mode, {:?} waiters, servers: {}",
        if config.smoke { "smoke" } else { "full" },
        config.counts,
        config
            .flavors
            .iter()
            .map(|f| f.label())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut rows = Vec::new();
    for &flavor in &config.flavors {
        for &n in &config.counts {
            let fits = n + SERVER_DESCRIPTORS <= limit;
            if !fits {
                eprintln!(
                    "  {:<10} {n:>7}: not measured, the limit on open files is {limit}",
                    flavor.label()
                );
            }
            rows.push(Row {
                flavor,
                waiters: n,
                measured: fits.then(|| measure(flavor, n)),
            });
        }
    }
    let text = markdown(&rows, limit, started.elapsed());
    if let Some(dir) = config.out.parent() {
        std::fs::create_dir_all(dir).expect("create output folder");
    }
    std::fs::write(&config.out, &text).expect("write the table");
    println!("{text}");
    eprintln!("waiters: wrote {}", config.out.display());
}
