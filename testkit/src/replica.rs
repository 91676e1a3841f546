//! Replica mode: what a server's replica must hold when its test ends. See the crate docs.

use crate::resp::{Conn, Reply};
use crate::{info_field, wait_until, Server};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Everything observable about one key: type, value, absolute expiry in ms (`PEXPIRETIME`:
/// -1 for none, -2 for a missing key). Equal snapshots before and after a call mean the call
/// wrote nothing to that key.
pub fn snapshot<K: AsRef<[u8]>>(conn: &mut Conn, key: K) -> (String, Reply, i64) {
    let key = key.as_ref();
    let kind = conn.call(&[&b"TYPE"[..], key]).status();
    let value = match value_read(&kind, key) {
        Some(read) => conn.call(&read),
        None => Reply::Nil,
    };
    let ttl = match conn.call(&[&b"PEXPIRETIME"[..], key]) {
        Reply::Int(n) => n,
        // PEXPIRETIME is 7.0+; every server in scope has it.
        other => panic!("PEXPIRETIME: {other:?}"),
    };
    (kind, value, ttl)
}

/// The command that reads a whole value of this type.
fn value_read(kind: &str, key: &[u8]) -> Option<Vec<Vec<u8>>> {
    let words: &[&str] = match kind {
        "string" => &["GET", "{}"],
        "zset" => &["ZRANGE", "{}", "0", "-1", "WITHSCORES"],
        "hash" => &["HGETALL", "{}"],
        "list" => &["LRANGE", "{}", "0", "-1"],
        "set" => &["SMEMBERS", "{}"],
        "stream" => &["XRANGE", "{}", "-", "+"],
        _ => return None,
    };
    Some(
        words
            .iter()
            .map(|w| {
                if *w == "{}" {
                    key.to_vec()
                } else {
                    w.as_bytes().to_vec()
                }
            })
            .collect(),
    )
}

/// One key of a dataset: as `snapshot`, with the members of a set and the fields of a hash
/// sorted (their order is the hash table's, which two servers need not share).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyState {
    pub kind: String,
    pub value: Reply,
    /// `PEXPIRETIME`, read after the type and the value: -2 means the key was gone by then.
    pub expires_at: i64,
}

impl KeyState {
    fn present(&self) -> bool {
        self.expires_at != -2
    }
}

/// Every key of every database that has keys, by (db, key), each read with `snapshot`'s
/// commands (pipelined) and normalised as `KeyState` says.
pub fn dataset(conn: &mut Conn) -> BTreeMap<(u32, Vec<u8>), KeyState> {
    let mut all = BTreeMap::new();
    for db in databases(conn) {
        assert_eq!(
            conn.call(&["SELECT", &db.to_string()]),
            Reply::Status("OK".into())
        );
        let keys: Vec<Vec<u8>> = match conn.call(&["KEYS", "*"]) {
            Reply::Array(keys) => keys
                .into_iter()
                .map(|k| match k {
                    Reply::Bulk(k) => k,
                    other => panic!("KEYS gave {other:?}"),
                })
                .collect(),
            other => panic!("KEYS gave {other:?}"),
        };
        let types: Vec<Vec<Vec<u8>>> = keys
            .iter()
            .map(|k| vec![b"TYPE".to_vec(), k.clone()])
            .collect();
        let kinds: Vec<String> = conn.pipeline(&types).iter().map(Reply::status).collect();
        let mut reads: Vec<Vec<Vec<u8>>> = Vec::new();
        for (key, kind) in keys.iter().zip(&kinds) {
            reads.extend(value_read(kind, key));
            reads.push(vec![b"PEXPIRETIME".to_vec(), key.clone()]);
        }
        let mut replies = conn.pipeline(&reads).into_iter();
        for (key, kind) in keys.into_iter().zip(kinds) {
            let value = match value_read(&kind, &key) {
                Some(_) => normalise(&kind, replies.next().expect("a value")),
                None => Reply::Nil,
            };
            let expires_at = replies.next().expect("an expiry").int();
            let state = KeyState {
                kind,
                value,
                expires_at,
            };
            all.insert((db, key), state);
        }
        assert_eq!(conn.call(&["SELECT", "0"]), Reply::Status("OK".into()));
    }
    all
}

/// The databases INFO keyspace lists (`db3:keys=1,...`).
fn databases(conn: &mut Conn) -> BTreeSet<u32> {
    conn.call(&["INFO", "keyspace"])
        .text()
        .lines()
        .filter_map(|line| line.strip_prefix("db")?.split(':').next()?.parse().ok())
        .collect()
}

fn normalise(kind: &str, value: Reply) -> Reply {
    match (kind, value) {
        ("set", Reply::Array(mut members)) => {
            members.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
            Reply::Array(members)
        }
        ("hash", Reply::Array(flat)) => {
            let mut pairs: Vec<Vec<Reply>> = flat.chunks(2).map(<[Reply]>::to_vec).collect();
            pairs.sort_by(|a, b| format!("{:?}", a[0]).cmp(&format!("{:?}", b[0])));
            Reply::Array(pairs.into_iter().flatten().collect())
        }
        (_, value) => value,
    }
}

/// A reply as a report shows it: bulk strings as text, long ones (a 1 MB member) cut short.
fn brief(reply: &Reply) -> String {
    let list = |items: &[Reply]| items.iter().map(brief).collect::<Vec<_>>().join(", ");
    match reply {
        Reply::Bulk(bytes) => {
            let text = String::from_utf8_lossy(bytes);
            if text.chars().count() > 80 {
                let cut: String = text.chars().take(80).collect();
                format!("{cut:?}... ({} bytes)", bytes.len())
            } else {
                format!("{text:?}")
            }
        }
        Reply::Array(items) if items.len() > 20 => {
            format!("[{}, ... ({} items)]", list(&items[..20]), items.len())
        }
        Reply::Array(items) => format!("[{}]", list(items)),
        other => format!("{other:?}"),
    }
}

fn shown(state: Option<&KeyState>) -> String {
    match state {
        None => "absent".into(),
        Some(state) => format!(
            "{} {}, expires at {}",
            state.kind,
            brief(&state.value),
            state.expires_at
        ),
    }
}

/// What the log of a replica must not say: it could not apply what its primary sent. Redis 7.2+
/// and Valkey log "== CRITICAL == This replica is sending an error to its master/primary:
/// 'unknown command ...'"; Redis 7.0 logs nothing, and there the dataset comparison is the check.
pub fn replication_errors(log: &str) -> Vec<String> {
    log.lines()
        .filter(|line| {
            let lower = line.to_ascii_lowercase();
            lower.contains("unknown command") || lower.contains("sending an error to its")
        })
        .map(str::to_string)
        .collect()
}

/// Waits until the replica on `r` has applied everything the primary on `p` has written: WAIT
/// (after a `PUBLISH`, so that it waits for everything written so far), then the replica's own
/// `slave_repl_offset` meets the primary's `master_repl_offset`. WAIT alone is not enough: it
/// counts any replica that acknowledged, and a replica of another test's, whose primary's port
/// this primary took over, can be the one. `Err` says which step did not happen.
pub fn caught_up(p: &mut Conn, r: &mut Conn) -> Result<(), String> {
    // WAIT counts the replicas that acknowledged this client's last write: a PUBLISH (it goes
    // to the replication stream and touches no key) makes that everything written so far.
    p.call(&["PUBLISH", "__goblin_testkit_sync__", "wait"]);
    let acked = p.call(&["WAIT", "1", "10000"]);
    if acked != Reply::Int(1) {
        return Err(format!("WAIT 1 10000 on the primary gave {acked:?}"));
    }
    // The primary may still write on its own (expiries, pings to the replica): the offsets
    // must meet, not merely have met once.
    let mut offsets = (String::new(), String::new());
    let synced = wait_until(Duration::from_secs(10), || {
        let on_primary = info_field(p, "replication", "master_repl_offset");
        let on_replica = info_field(r, "replication", "slave_repl_offset");
        offsets = (on_primary, on_replica);
        offsets.0 == offsets.1
    });
    if !synced {
        return Err(format!(
            "the replica's slave_repl_offset {} never reached the primary's master_repl_offset {}",
            offsets.1, offsets.0
        ));
    }
    Ok(())
}

/// The whole check of a primary against its replica, once the test is over; `Err` says what
/// differs.
pub(crate) fn check(primary: &Server, replica: &Server) -> Result<(), String> {
    let mut p = Conn::connect(primary.port).map_err(|e| format!("connect to the primary: {e}"))?;
    let mut r = Conn::connect(replica.port).map_err(|e| format!("connect to the replica: {e}"))?;
    // The test is over: no eviction may delete keys while the two sides are read.
    p.call(&["CONFIG", "SET", "maxmemory", "0"]);

    caught_up(&mut p, &mut r)?;

    let before = crate::time_ms(&p.call(&["TIME"]));
    let on_primary = dataset(&mut p);
    let on_replica = dataset(&mut r);
    let after = crate::time_ms(&p.call(&["TIME"]));

    let keys: BTreeSet<&(u32, Vec<u8>)> = on_primary.keys().chain(on_replica.keys()).collect();
    let mut diff = Vec::new();
    for key in keys {
        let (a, b) = (
            on_primary.get(key).filter(|s| s.present()),
            on_replica.get(key).filter(|s| s.present()),
        );
        let differs = match (a, b) {
            (None, None) => false,
            (Some(a), Some(b)) => a != b,
            // A key only one side still has may have expired while the sides were read: that
            // is, if its expiry there is at or before the clock read after both.
            (Some(only), None) | (None, Some(only)) => !(0..=after).contains(&only.expires_at),
        };
        if differs {
            diff.push(format!(
                "  db{} {:?}:\n    primary: {}\n    replica: {}",
                key.0,
                String::from_utf8_lossy(&key.1),
                shown(a),
                shown(b)
            ));
        }
    }
    let log = replication_errors(&replica.log());
    if diff.is_empty() && log.is_empty() {
        return Ok(());
    }
    let mut report = String::new();
    if !diff.is_empty() {
        report.push_str(&format!(
            "{} keys differ (read between server times {before} and {after} ms; a key only one \
             side has is left out only if its expiry is at or before {after}):\n{}\n",
            diff.len(),
            diff.join("\n")
        ));
    }
    if !log.is_empty() {
        report.push_str(&format!(
            "the replica could not apply its primary's stream:\n{}\n",
            log.join("\n")
        ));
    }
    Err(report)
}
