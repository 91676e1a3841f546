//! `holders` (`make bench`, or `cargo run --release -p goblin-bench --bin holders`): the memory
//! one lock holder costs the server, for every shape of lock: a token lock (GOBLIN.LOCK), a
//! readers-writer lock's writer (GOBLIN.WLOCK) and readers (GOBLIN.RLOCK: one to a key, and many,
//! in the sorted set's compact encoding and past it), a lease of a window (GOBLIN.ZWINDOW), and
//! each with `FENCE`, which keeps a fencing token beside the key. Written to
//! `bench/results/holders.md`.
//!
//!     holders [--out FILE] [--servers redis70,redis82,valkey91,redis810] [--holders N]
//!
//! Each row starts from an empty database (`FLUSHALL SYNC`), takes `N` holders (20,000 unless
//! told) with tokens of 36 bytes (a UUID's text, as the Python and Node packages make them) and
//! leases of an hour, pipelined, every grant checked, and divides the growth of `INFO memory`'s
//! `used_memory` by `N`. The servers run alone: no replica (its backlog would count), no AOF.

use std::path::PathBuf;

use goblin_testkit::resp::encode;
use goblin_testkit::{info_field, Conn, Flavor, Reply, Server};

/// One row: what a holder is, and the call that makes holder `i`.
struct Row {
    holder: &'static str,
    workload: &'static str,
    /// Holders to a key (1: a key each).
    per_key: usize,
    call: fn(key: &str, token: &str) -> Vec<String>,
    /// The reply of a grant.
    granted: fn(&Reply) -> bool,
}

const LEASE_MS: &str = "3600000";

fn words(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| word.to_string()).collect()
}

fn ok(reply: &Reply) -> bool {
    *reply == Reply::Status("OK".into())
}

fn one(reply: &Reply) -> bool {
    *reply == Reply::Int(1)
}

fn token(reply: &Reply) -> bool {
    matches!(reply, Reply::Int(token) if *token > 0)
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            holder: "token lock",
            workload: "`GOBLIN.LOCK key token 3600000`, a key each",
            per_key: 1,
            call: |key, token| words(&["GOBLIN.LOCK", key, token, LEASE_MS]),
            granted: ok,
        },
        Row {
            holder: "readers-writer lock's writer",
            workload: "`GOBLIN.WLOCK key token 3600000`, a key each",
            per_key: 1,
            call: |key, token| words(&["GOBLIN.WLOCK", key, token, LEASE_MS]),
            granted: ok,
        },
        Row {
            holder: "reader, alone",
            workload: "`GOBLIN.RLOCK key token 3600000`, a key each",
            per_key: 1,
            call: |key, token| words(&["GOBLIN.RLOCK", key, token, LEASE_MS]),
            granted: ok,
        },
        Row {
            holder: "reader, 100 to a key",
            workload: "`GOBLIN.RLOCK`, 100 readers a key (the compact encoding)",
            per_key: 100,
            call: |key, token| words(&["GOBLIN.RLOCK", key, token, LEASE_MS]),
            granted: ok,
        },
        Row {
            holder: "reader, 1,000 to a key",
            workload: "`GOBLIN.RLOCK`, 1,000 readers a key (a skiplist)",
            per_key: 1000,
            call: |key, token| words(&["GOBLIN.RLOCK", key, token, LEASE_MS]),
            granted: ok,
        },
        Row {
            holder: "lease of a window, 100 to a key",
            workload: "`GOBLIN.ZWINDOW key * 3600 1000000 token`, 100 a key",
            per_key: 100,
            call: |key, token| words(&["GOBLIN.ZWINDOW", key, "*", "3600", "1000000", token]),
            granted: one,
        },
        Row {
            holder: "token lock, fenced",
            workload: "`GOBLIN.LOCK key token 3600000 FENCE`, a key each",
            per_key: 1,
            call: |key, token| words(&["GOBLIN.LOCK", key, token, LEASE_MS, "FENCE"]),
            granted: token,
        },
        Row {
            holder: "readers-writer lock's writer, fenced",
            workload: "`GOBLIN.WLOCK key token 3600000 FENCE`, a key each",
            per_key: 1,
            call: |key, token| words(&["GOBLIN.WLOCK", key, token, LEASE_MS, "FENCE"]),
            granted: token,
        },
        Row {
            holder: "reader, 100 to a key, fenced",
            workload: "`GOBLIN.RLOCK ... FENCE`, 100 readers a key",
            per_key: 100,
            call: |key, token| words(&["GOBLIN.RLOCK", key, token, LEASE_MS, "FENCE"]),
            granted: token,
        },
    ]
}

/// Holder `i`'s token: 36 bytes, as a UUID's text.
fn token_of(i: usize) -> String {
    format!(
        "{:08x}-0000-4000-8000-{:012x}",
        i,
        i.wrapping_mul(0x9e37_79b9) & 0xffff_ffff_ffff
    )
}

fn used_memory(conn: &mut Conn) -> i64 {
    info_field(conn, "memory", "used_memory")
        .parse()
        .expect("used_memory")
}

/// Bytes per holder of `row`, with `holders` of them, on the server `conn` reaches.
fn bytes_per_holder(conn: &mut Conn, row: &Row, holders: usize) -> f64 {
    assert_eq!(conn.call(&["FLUSHALL", "SYNC"]), Reply::Status("OK".into()));
    let before = used_memory(conn);
    let mut buf = Vec::new();
    for batch in (0..holders).collect::<Vec<_>>().chunks(1000) {
        buf.clear();
        for &i in batch {
            let key = format!("lock:{:06}", i / row.per_key);
            encode(&(row.call)(&key, &token_of(i)), &mut buf);
        }
        conn.write_raw(&buf).expect("send");
        for _ in batch {
            let reply = conn.read().expect("reply");
            assert!((row.granted)(&reply), "{}: {reply:?}", row.workload);
        }
    }
    let grown = used_memory(conn) - before;
    assert_eq!(conn.call(&["FLUSHALL", "SYNC"]), Reply::Status("OK".into()));
    grown as f64 / holders as f64
}

struct Config {
    out: PathBuf,
    flavors: Vec<Flavor>,
    holders: usize,
}

impl Config {
    fn from_args() -> Config {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let value = |flag: &str| {
            args.iter()
                .position(|a| a == flag)
                .and_then(|i| args.get(i + 1))
                .cloned()
        };
        let flavors = match value("--servers") {
            Some(list) => list
                .split(',')
                .map(|name| {
                    Flavor::from_name(name).unwrap_or_else(|| panic!("unknown server {name}"))
                })
                .collect(),
            None => Flavor::ALL.to_vec(),
        };
        Config {
            out: value("--out").map_or_else(
                || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results/holders.md"),
                PathBuf::from,
            ),
            flavors,
            holders: value("--holders").map_or(20_000, |n| n.parse().expect("--holders N")),
        }
    }
}

/// `n` with a comma between thousands.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn today() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn main() {
    let config = Config::from_args();
    let rows = rows();
    let mut columns = Vec::new();
    for &flavor in &config.flavors {
        eprintln!("holders: {}", flavor.label());
        let server = Server::builder(flavor).without_replica().start();
        let mut conn = server.conn();
        let version = info_field(&mut conn, "server", flavor.version_field());
        let column: Vec<f64> = rows
            .iter()
            .map(|row| {
                let bytes = bytes_per_holder(&mut conn, row, config.holders);
                eprintln!("  {:<40} {bytes:>8.1} bytes", row.holder);
                bytes
            })
            .collect();
        columns.push((format!("{} ({version})", flavor.label()), column));
    }
    let mut out = format!(
        "# Memory per lock holder\n\n\
         Written by `cargo run --release -p goblin-bench --bin holders` on {}.\n\
         Bytes: the growth of `INFO memory`'s `used_memory` per holder, from an empty database,\n\
         {} holders a row with tokens of 36 bytes and leases of an hour, every grant checked;\n\
         no replica, no AOF. A fenced holder's figure includes the token the server keeps beside\n\
         its key ([fencing](../../docs/fencing.md)). The method:\n\
         [the benchmark](../../docs/benchmark.md#memory-per-lock-holder).\n\n",
        today(),
        thousands(config.holders)
    );
    out.push_str("| holder | workload |");
    for (label, _) in &columns {
        out.push_str(&format!(" {label} |"));
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---:|".repeat(columns.len()));
    out.push('\n');
    for (index, row) in rows.iter().enumerate() {
        out.push_str(&format!("| {} | {} |", row.holder, row.workload));
        for (_, column) in &columns {
            out.push_str(&format!(" {:.0} |", column[index]));
        }
        out.push('\n');
    }
    std::fs::write(&config.out, out).expect("write the report");
    eprintln!("holders: wrote {}", config.out.display());
}
