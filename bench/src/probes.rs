//! Server-side measurements: time per call from `INFO commandstats` (what the command itself
//! costs, without the network) and bytes per key or member from `INFO memory`.

use goblin_testkit::resp::encode;
use goblin_testkit::{info_field, Conn, Reply};

/// Sends `commands` in pipelines of `batch`, checking that no reply is an error.
pub fn pipelined(conn: &mut Conn, commands: impl Iterator<Item = Vec<String>>, batch: usize) {
    let mut buf = Vec::new();
    let mut pending = 0;
    let flush = |conn: &mut Conn, buf: &mut Vec<u8>, pending: &mut usize| {
        conn.write_raw(buf).expect("send");
        for _ in 0..*pending {
            let reply = conn.read().expect("reply");
            assert!(!reply.is_error(), "{reply:?}");
        }
        buf.clear();
        *pending = 0;
    };
    for command in commands {
        encode(&command, &mut buf);
        pending += 1;
        if pending == batch {
            flush(conn, &mut buf, &mut pending);
        }
    }
    flush(conn, &mut buf, &mut pending);
}

/// `usec_per_call` of one command since the last `CONFIG RESETSTAT`.
pub fn usec_per_call(conn: &mut Conn, command: &str) -> f64 {
    let stats = conn.call(&["INFO", "commandstats"]).text();
    let prefix = format!("cmdstat_{command}:");
    let line = stats
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no commandstats for {command}"));
    line.split(',')
        .find_map(|field| field.strip_prefix("usec_per_call="))
        .and_then(|v| v.parse().ok())
        .expect("usec_per_call")
}

fn used_memory(conn: &mut Conn) -> i64 {
    info_field(conn, "memory", "used_memory")
        .parse()
        .expect("used_memory")
}

/// Bytes added per unit by `load`, measured from an empty database.
fn bytes_per(conn: &mut Conn, units: usize, load: impl FnOnce(&mut Conn)) -> f64 {
    assert_eq!(conn.call(&["FLUSHALL", "SYNC"]), Reply::Status("OK".into()));
    let before = used_memory(conn);
    load(conn);
    (used_memory(conn) - before) as f64 / units as f64
}

#[derive(Debug, Clone)]
pub struct Memory {
    pub counters: usize,
    pub increx_per_counter: f64,
    pub incr_expire_per_counter: f64,
    pub members: usize,
    pub zwindow_per_member: f64,
    pub zadd_per_member: f64,
    /// Windows of 1,000 members: past the compact encoding's 128, in the skiplist.
    pub zwindow_per_member_large: f64,
}

/// One counter per key: GOBLIN.INCREX against INCR + EXPIRE; and sorted sets of 100 members
/// per key: GOBLIN.ZWINDOW against ZADD.
pub fn memory(conn: &mut Conn, counters: usize) -> Memory {
    let key = |i: usize| format!("counter:{i:08}");
    let increx = bytes_per(conn, counters, |c| {
        pipelined(
            c,
            (0..counters).map(|i| vec!["GOBLIN.INCREX".into(), key(i), "3600".into()]),
            1000,
        )
    });
    let incr_expire = bytes_per(conn, counters, |c| {
        let commands = (0..counters).flat_map(|i| {
            [
                vec!["INCR".into(), key(i)],
                vec!["EXPIRE".into(), key(i), "3600".into()],
            ]
        });
        pipelined(c, commands, 1000)
    });
    let keys = (counters / 1000).max(10);
    let members = keys * 100;
    // `members` sorted-set members, `per_key` to a key, added by `command`.
    let zset_bytes = |conn: &mut Conn, per_key: usize, command: &str| {
        bytes_per(conn, members, |c| {
            let commands = (0..members).map(|i| {
                let key = format!("window:{:06}", i / per_key);
                let now = (1000 + i % per_key).to_string();
                let member = format!("member-{i:08}");
                match command {
                    // A limit no window reaches: every call admits.
                    "GOBLIN.ZWINDOW" => vec![
                        command.into(),
                        key,
                        now,
                        "3600".into(),
                        "1000000000".into(),
                        member,
                    ],
                    _ => vec![command.into(), key, now, member],
                }
            });
            pipelined(c, commands, 1000)
        })
    };
    let zwindow = zset_bytes(conn, 100, "GOBLIN.ZWINDOW");
    let zadd = zset_bytes(conn, 100, "ZADD");
    let zwindow_large = zset_bytes(conn, 1000, "GOBLIN.ZWINDOW");
    conn.call(&["FLUSHALL", "SYNC"]);
    Memory {
        zwindow_per_member_large: zwindow_large,
        counters,
        increx_per_counter: increx,
        incr_expire_per_counter: incr_expire,
        members,
        zwindow_per_member: zwindow,
        zadd_per_member: zadd,
    }
}

/// Time per ZWINDOW call against the number of members in the window: each call evicts
/// exactly one member and admits one, so the set stays at `size`.
pub fn per_call_by_size(conn: &mut Conn, sizes: &[usize], calls: usize) -> Vec<(usize, f64)> {
    sizes
        .iter()
        .map(|&size| {
            conn.call(&["FLUSHALL", "SYNC"]);
            let fill =
                (1..=size).map(|i| vec!["ZADD".into(), "s".into(), i.to_string(), format!("m{i}")]);
            pipelined(conn, fill, 1000);
            conn.call(&["CONFIG", "RESETSTAT"]);
            let calls = (1..=calls).map(|i| {
                let now = (size + i).to_string();
                let member = format!("new{i}");
                vec![
                    "GOBLIN.ZWINDOW".into(),
                    "s".into(),
                    now,
                    size.to_string(),
                    (size + 1).to_string(),
                    member,
                ]
            });
            pipelined(conn, calls, 100);
            assert_eq!(conn.call(&["ZCARD", "s"]), Reply::Int(size as i64));
            (size, usec_per_call(conn, "goblin.zwindow"))
        })
        .collect()
}

#[derive(Debug, Clone, Copy)]
pub struct Eviction {
    pub evicted: usize,
    pub zwindow_us: f64,
    pub zremrangebyscore_us: f64,
}

/// Time per call against members evicted per call, in a set that keeps `base` members inside
/// the window: GOBLIN.ZWINDOW, and ZREMRANGEBYSCORE doing the same eviction.
pub fn per_call_by_evicted(
    conn: &mut Conn,
    base: usize,
    evictions: &[usize],
    rounds: usize,
) -> Vec<Eviction> {
    // Members inside the window score from 1e6; evicted ones below the cutoff 9e5.
    let (now, window, cutoff) = ("1900000", "1000000", "900000");
    let mut measure = |evicted: usize, command: &str| {
        conn.call(&["FLUSHALL", "SYNC"]);
        let fill = (0..base).map(|i| {
            vec![
                "ZADD".into(),
                "s".into(),
                (1_000_000 + i).to_string(),
                format!("in{i}"),
            ]
        });
        pipelined(conn, fill, 1000);
        conn.call(&["CONFIG", "RESETSTAT"]);
        for round in 0..rounds {
            let old = (0..evicted).map(|j| {
                let score = (round * evicted + j) as f64 * 0.5;
                vec![
                    "ZADD".into(),
                    "s".into(),
                    score.to_string(),
                    format!("old{round}-{j}"),
                ]
            });
            let call = match command {
                "goblin.zwindow" => vec!["GOBLIN.ZWINDOW", "s", now, window, "1000000000", "probe"],
                _ => vec!["ZREMRANGEBYSCORE", "s", "-inf", cutoff],
            };
            let call: Vec<String> = call.into_iter().map(String::from).collect();
            pipelined(conn, old.chain(std::iter::once(call)), 1000);
        }
        let in_window = conn.call(&["ZCOUNT", "s", "(900000", "+inf"]).int();
        assert!(
            in_window >= base as i64,
            "the eviction reached into the window"
        );
        usec_per_call(conn, command)
    };
    evictions
        .iter()
        .map(|&evicted| Eviction {
            evicted,
            zwindow_us: measure(evicted, "goblin.zwindow"),
            zremrangebyscore_us: measure(evicted, "zremrangebyscore"),
        })
        .collect()
}

#[derive(Debug, Clone, Copy)]
pub struct Backlog {
    pub members: usize,
    pub evicted: usize,
    /// ZREMRANGEBYSCORE removing the whole backlog in one call.
    pub zrem_blocked_us: f64,
    /// GOBLIN.ZWINDOW calls until the backlog is gone, the longest of them, and the total.
    pub zwindow_calls: usize,
    pub zwindow_max_us: f64,
    pub zwindow_total_us: f64,
}

/// A window that idled with `members` in it, 90% of which have left it: the server time to
/// remove them with ZREMRANGEBYSCORE (one call) and with GOBLIN.ZWINDOW (a slice per call).
pub fn backlog(conn: &mut Conn, members: usize) -> Backlog {
    let evicted = members / 10 * 9;
    let fill = |conn: &mut Conn| {
        conn.call(&["FLUSHALL", "SYNC"]);
        let commands = (0..members).map(|i| {
            vec![
                "ZADD".into(),
                "big".into(),
                i.to_string(),
                format!("member-{i:08}"),
            ]
        });
        pipelined(conn, commands, 1000);
    };
    let (now, window) = ((evicted + 1_000_000).to_string(), "1000001".to_string());
    fill(conn);
    conn.call(&["CONFIG", "RESETSTAT"]);
    conn.call(&[
        "ZREMRANGEBYSCORE",
        "big",
        "-inf",
        &(evicted - 1).to_string(),
    ]);
    let zrem_blocked_us = usec_per_call(conn, "zremrangebyscore");

    fill(conn);
    let (mut calls, mut max_us, mut total_us) = (0, 0.0f64, 0.0);
    while conn
        .call(&["ZCOUNT", "big", "-inf", &(evicted - 1).to_string()])
        .int()
        > 0
    {
        conn.call(&["CONFIG", "RESETSTAT"]);
        let reply = conn.call(&["GOBLIN.ZWINDOW", "big", &now, &window, "100", "probe"]);
        assert!(!reply.is_error(), "{reply:?}");
        let us = usec_per_call(conn, "goblin.zwindow");
        calls += 1;
        max_us = max_us.max(us);
        total_us += us;
    }
    conn.call(&["FLUSHALL", "SYNC"]);
    Backlog {
        members,
        evicted,
        zrem_blocked_us,
        zwindow_calls: calls,
        zwindow_max_us: max_us,
        zwindow_total_us: total_us,
    }
}
