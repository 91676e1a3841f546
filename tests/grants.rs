//! A grant made in line is the grant its command makes (src/grant.rs, goblin_core::grant and
//! goblin_core::rwlock): for the same state and request, a waiter served in line (GOBLIN.BLOCK,
//! GOBLIN.BZWINDOW, GOBLIN.BRLOCK, GOBLIN.BWLOCK) and the command that grants at once
//! (GOBLIN.LOCK and GOBLIN.BLOCK, GOBLIN.ZWINDOW and GOBLIN.BZWINDOW, GOBLIN.RLOCK and
//! GOBLIN.BRLOCK, GOBLIN.WLOCK and GOBLIN.BWLOCK) reply alike and leave the same keys, values, expiries and fencing tokens
//! (new, or a holder's own kept), fire the same keyspace events and replicate the same effects.
//!
//! Each case puts two keys in the same state, `line:k` and `cmnd:k`. A waiter waits in line on
//! `line:k`; then one transaction frees both alike, which serves the waiter, and makes the same
//! request of `cmnd:k`. Where the server takes one snapshot of its clock for a transaction
//! (Redis 7.2+, Valkey), both grants are made at the same millisecond and every expiry and
//! score must be equal; on Redis 7.0 each command reads the clock, and the line is served on a
//! timer after the transaction, so times are compared within the span the test saw.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::time::Duration;

const LINE: &str = "line:k";
const CMND: &str = "cmnd:k";

struct Case {
    name: &'static str,
    /// Puts a key in the case's state (`{}` is the key).
    setup: &'static [&'static [&'static str]],
    /// The waiter's call on the line's key.
    waiter: &'static [&'static str],
    /// What frees a key, in the transaction.
    free: &'static [&'static [&'static str]],
    /// The request made of the command's key once it is freed, as the waiter's grant.
    command: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "a lock with a lease, and GOBLIN.LOCK",
        setup: &[&["GOBLIN.LOCK", "{}", "h", "600000"]],
        waiter: &["GOBLIN.BLOCK", "{}", "t", "30000", "0"],
        free: &[&["GOBLIN.CAD", "{}", "h"]],
        command: &["GOBLIN.LOCK", "{}", "t", "30000"],
    },
    Case {
        name: "a lock without a lease, and GOBLIN.BLOCK",
        setup: &[&["GOBLIN.LOCK", "{}", "h", "600000"]],
        waiter: &["GOBLIN.BLOCK", "{}", "t", "0", "0"],
        free: &[&["DEL", "{}"]],
        command: &["GOBLIN.BLOCK", "{}", "t", "0", "0"],
    },
    Case {
        name: "a fenced lock",
        setup: &[&["GOBLIN.LOCK", "{}", "h", "600000", "FENCE"]],
        waiter: &["GOBLIN.BLOCK", "{}", "t", "30000", "0", "FENCE"],
        free: &[&["GOBLIN.CAD", "{}", "h"]],
        command: &["GOBLIN.LOCK", "{}", "t", "30000", "FENCE"],
    },
    Case {
        name: "a fenced lock without a lease",
        setup: &[&["GOBLIN.LOCK", "{}", "h", "600000", "FENCE"]],
        waiter: &["GOBLIN.BLOCK", "{}", "t", "0", "0", "FENCE"],
        free: &[&["UNLINK", "{}"]],
        command: &["GOBLIN.BLOCK", "{}", "t", "0", "0", "FENCE"],
    },
    Case {
        name: "a lease, and GOBLIN.ZWINDOW",
        setup: &[&["GOBLIN.BZWINDOW", "{}", "60", "1", "h", "0"]],
        waiter: &["GOBLIN.BZWINDOW", "{}", "60", "1", "m", "0"],
        free: &[&["GOBLIN.CAD", "{}", "h"]],
        command: &["GOBLIN.ZWINDOW", "{}", "*", "60", "1", "m"],
    },
    Case {
        name: "permits, and GOBLIN.BZWINDOW",
        setup: &[&["GOBLIN.BZWINDOW", "{}", "60", "3", "h", "0", "PERMITS", "3"]],
        waiter: &["GOBLIN.BZWINDOW", "{}", "60", "3", "m", "0", "PERMITS", "2"],
        free: &[&["GOBLIN.CAD", "{}", "h", "PERMITS", "3"]],
        command: &["GOBLIN.BZWINDOW", "{}", "60", "3", "m", "0", "PERMITS", "2"],
    },
    Case {
        name: "fenced permits named with a separator",
        setup: &[&[
            "GOBLIN.BZWINDOW",
            "{}",
            "60",
            "2",
            "h",
            "0",
            "PERMITS",
            "2",
            "SEPARATOR",
            "_",
        ]],
        waiter: &[
            "GOBLIN.BZWINDOW",
            "{}",
            "60",
            "2",
            "m",
            "0",
            "PERMITS",
            "2",
            "SEPARATOR",
            "_",
            "FENCE",
        ],
        free: &[&["GOBLIN.CAD", "{}", "h", "PERMITS", "2", "SEPARATOR", "_"]],
        command: &[
            "GOBLIN.ZWINDOW",
            "{}",
            "*",
            "60",
            "2",
            "m",
            "PERMITS",
            "2",
            "SEPARATOR",
            "_",
            "FENCE",
        ],
    },
    Case {
        // The waiter's member is back inside the window when room comes (a ZADD of someone's,
        // scored a second ago): a renewal, which keeps the token its earlier grant had and
        // moves the score to its own now on both sides.
        name: "a fenced lease its member holds again",
        setup: &[
            &["GOBLIN.ZWINDOW", "{}", "*", "60", "3", "m", "FENCE"],
            &["ZREM", "{}", "m"],
            &["GOBLIN.BZWINDOW", "{}", "60", "3", "a", "0"],
            &["GOBLIN.BZWINDOW", "{}", "60", "3", "b", "0"],
            &["GOBLIN.BZWINDOW", "{}", "60", "3", "c", "0"],
        ],
        waiter: &["GOBLIN.BZWINDOW", "{}", "60", "3", "m", "0", "FENCE"],
        free: &[
            &["ZADD", "{}", "{a second ago}", "m"],
            &["ZREM", "{}", "b", "c"],
        ],
        command: &["GOBLIN.ZWINDOW", "{}", "*", "60", "3", "m", "FENCE"],
    },
    Case {
        name: "a reader, and GOBLIN.RLOCK",
        setup: &[&["GOBLIN.WLOCK", "{}", "h", "600000"]],
        waiter: &["GOBLIN.BRLOCK", "{}", "t", "30000", "0"],
        free: &[&["GOBLIN.RWUNLOCK", "{}", "h"]],
        command: &["GOBLIN.RLOCK", "{}", "t", "30000"],
    },
    Case {
        name: "a fenced reader beside another",
        setup: &[
            &["GOBLIN.WLOCK", "{}", "h", "600000", "FENCE"],
            &["GOBLIN.BRLOCK", "{}", "o", "600000", "0", "FENCE"],
        ],
        waiter: &["GOBLIN.BRLOCK", "{}", "t", "30000", "0", "FENCE"],
        free: &[&["GOBLIN.RWUNLOCK", "{}", "h"]],
        command: &["GOBLIN.BRLOCK", "{}", "t", "30000", "0", "FENCE"],
    },
    Case {
        name: "a writer, and GOBLIN.WLOCK",
        setup: &[&["GOBLIN.WLOCK", "{}", "h", "600000"]],
        waiter: &["GOBLIN.BWLOCK", "{}", "t", "30000", "0"],
        free: &[&["GOBLIN.RWUNLOCK", "{}", "h"]],
        command: &["GOBLIN.WLOCK", "{}", "t", "30000"],
    },
    Case {
        name: "a fenced writer after the last reader",
        setup: &[&["GOBLIN.RLOCK", "{}", "h", "600000", "FENCE"]],
        waiter: &["GOBLIN.BWLOCK", "{}", "t", "30000", "0", "FENCE"],
        free: &[&["GOBLIN.RWUNLOCK", "{}", "h"]],
        command: &["GOBLIN.BWLOCK", "{}", "t", "30000", "0", "FENCE"],
    },
    Case {
        // The waiter reads, and waits for the other reader to leave: promoted, its read token
        // gone and a new one minted, on both sides. The other's lease ends last on both sides
        // (a longer lease, where two equal ones would tie when both fall in one millisecond),
        // so that its release re-arms the key's expiry (`expire`) on both.
        name: "a fenced reader promoted",
        setup: &[
            &["GOBLIN.RLOCK", "{}", "t", "600000", "FENCE"],
            &["GOBLIN.RLOCK", "{}", "o", "700000"],
        ],
        waiter: &["GOBLIN.BWLOCK", "{}", "t", "30000", "0", "FENCE"],
        free: &[&["GOBLIN.RWUNLOCK", "{}", "o"]],
        command: &["GOBLIN.WLOCK", "{}", "t", "30000", "FENCE"],
    },
];

/// `args` on `key`, `{a second ago}` the server's time a second before the transaction, in
/// seconds (as a score). Never the grant's own time: a score of the very millisecond a grant
/// is made would make its ZADD a no-op, with no event, on one side and not the other (Redis 7.0
/// reads its clock at each command, and the line is served after the transaction).
fn on(key: &str, args: &[&str], a_second_ago: &str) -> Vec<String> {
    args.iter()
        .map(|arg| match *arg {
            "{}" => key.to_string(),
            "{a second ago}" => a_second_ago.to_string(),
            _ => arg.to_string(),
        })
        .collect()
}

/// A text as the line's side names it, its fencing tokens (microseconds since 1970, 16 digits)
/// as `TOKEN`; without one clock snapshot, its milliseconds since 1970 as `MS` and its seconds
/// with decimals as `S` too.
fn normal(text: &str, snapshot: bool) -> String {
    let text = text.replace("cmnd", "line");
    let word = |word: &str| -> String {
        match word.parse::<f64>() {
            Ok(n) if n >= 1e14 => "TOKEN".into(),
            Ok(n) if !snapshot && n >= 1e12 => "MS".into(),
            Ok(n) if !snapshot && n >= 1e9 => "S".into(),
            _ => word.to_string(),
        }
    };
    text.split('\0').map(word).collect::<Vec<_>>().join("\\0")
}

fn reply_text(reply: &Reply, snapshot: bool) -> String {
    match reply {
        Reply::Int(n) => normal(&n.to_string(), snapshot),
        Reply::Bulk(bytes) => normal(&String::from_utf8_lossy(bytes), snapshot),
        Reply::Array(items) => items
            .iter()
            .map(|item| reply_text(item, snapshot))
            .collect::<Vec<_>>()
            .join(" "),
        other => format!("{other:?}"),
    }
}

/// Every key of one side, by its name as the line's side has it: its type, value and expiry.
fn keys_of(c: &mut Conn, side: &str) -> BTreeMap<String, (String, Reply, i64)> {
    c.call(&["KEYS", "*"])
        .texts()
        .into_iter()
        .filter(|key| key.contains(side))
        .map(|key| {
            let state = snapshot(c, &key);
            (key.replace("cmnd", "line"), state)
        })
        .collect()
}

/// The commands the AOF appended (its incremental files), in order.
fn appended(dir: &std::path::Path) -> Vec<Vec<String>> {
    let mut files: Vec<_> = std::fs::read_dir(dir.join("appendonlydir"))
        .expect("appendonlydir")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.to_string_lossy().ends_with(".incr.aof"))
        .collect();
    files.sort();
    let text: String = files
        .iter()
        .map(|path| {
            String::from_utf8_lossy(&std::fs::read(path).expect("read the AOF")).into_owned()
        })
        .collect();
    aof_commands(&text)
}

on_every_server! {
    fn a_grant_in_line_is_the_grant_its_command_makes(flavor: Flavor) {
        let snapshot_clock = flavor.has_command_time_snapshot();
        for case in CASES {
            let dir = TempDir::new("grants");
            let server = Server::builder(flavor).dir(&dir.0).args(AOF_ALWAYS).start();
            let mut c = server.conn();
            c.call(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
            // Both keys set up in one transaction: the same instant where the server has one.
            let mut setup = vec![vec!["MULTI".to_string()]];
            for key in [LINE, CMND] {
                setup.extend(case.setup.iter().map(|args| on(key, args, "")));
            }
            setup.push(vec!["EXEC".to_string()]);
            let done = c.pipeline(&setup);
            let done = done.last().expect("EXEC").array();
            assert!(done.iter().all(|reply| !reply.is_error()), "{}: {done:?}", case.name);
            let mut waiter = server.conn();
            waiter.send(&on(LINE, case.waiter, "")).expect("send");
            assert!(
                wait_until(Duration::from_secs(10), || info_field(&mut c, "goblin", "goblin_waiting") == "1"),
                "{}: the waiter is not in line",
                case.name
            );
            let before_line = keys_of(&mut c, "line");
            let before_cmnd = keys_of(&mut c, "cmnd");
            let aof_before = appended(&dir.0).len();
            let a_second_ago = format!("{:.3}", (server_ms(&mut c) - 1000) as f64 / 1000.0);
            let mut commands = vec![vec!["TIME".to_string()], vec!["MULTI".to_string()]];
            for key in [LINE, CMND] {
                commands.extend(case.free.iter().map(|free| on(key, free, &a_second_ago)));
            }
            commands.push(on(CMND, case.command, &a_second_ago));
            commands.push(vec!["EXEC".to_string()]);
            let mut exec = Vec::new();
            let mut waiter_reply = Reply::Nil;
            let mut span = (0, 0);
            let events = keyspace_events(&server, &mut c, |c| {
                let replies = c.pipeline(&commands);
                exec = replies.last().expect("EXEC").array().to_vec();
                waiter_reply = waiter.reply_within(Duration::from_secs(10)).expect("the waiter's reply");
                span = (time_ms(&replies[0]), server_ms(c));
            });
            let label = case.name;
            // The replies.
            let command_reply = exec.last().expect("the command's reply");
            assert_eq!(reply_text(&waiter_reply, true), reply_text(command_reply, true), "{label}: the replies");
            // The keys: values and tokens alike, and a token kept by both or new for both.
            let (after_line, after_cmnd) = (keys_of(&mut c, "line"), keys_of(&mut c, "cmnd"));
            // A value as it was (a token kept), or new.
            let kept = |before: &BTreeMap<String, (String, Reply, i64)>, after: &BTreeMap<String, (String, Reply, i64)>| {
                after
                    .iter()
                    .map(|(key, state)| (key.clone(), before.get(key).map(|was| &was.1) == Some(&state.1)))
                    .collect::<Vec<_>>()
            };
            assert_eq!(kept(&before_line, &after_line), kept(&before_cmnd, &after_cmnd), "{label}: which keys changed");
            let shown = |keys: &BTreeMap<String, (String, Reply, i64)>| {
                keys.iter()
                    .map(|(key, (kind, value, at))| {
                        let at = if *at < 0 { at.to_string() } else { normal(&at.to_string(), snapshot_clock) };
                        format!("{} {kind} {} {at}", normal(key, true), reply_text(value, snapshot_clock))
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(shown(&after_line), shown(&after_cmnd), "{label}: the keys");
            if !snapshot_clock {
                // Each expiry the transaction set within what its span allows of the other's.
                for ((key, line), (_, cmnd)) in after_line.iter().zip(&after_cmnd) {
                    if before_line.get(key) == Some(line) {
                        continue;
                    }
                    let drift = (line.2 - cmnd.2).abs();
                    assert!(drift <= span.1 - span.0 + 1, "{label}: {key} expires {drift} ms apart");
                }
            }
            // The events, each key's in its order.
            let of = |side: &str| {
                events
                    .iter()
                    .filter(|event| event.contains(side))
                    .map(|event| normal(event, true))
                    .collect::<Vec<_>>()
            };
            assert_eq!(of("line"), of("cmnd"), "{label}: the events");
            // The effects replicated, each key's in its order.
            let effects = appended(&dir.0).split_off(aof_before);
            let of = |side: &str| {
                effects
                    .iter()
                    .filter(|command| command.iter().skip(1).any(|arg| arg.contains(side)))
                    .map(|command| command.iter().map(|arg| normal(arg, snapshot_clock)).collect::<Vec<_>>().join(" "))
                    .collect::<Vec<_>>()
            };
            assert!(!of("line").is_empty(), "{label}: no effect in the AOF");
            assert_eq!(of("line"), of("cmnd"), "{label}: the effects");
            assert_eq!(info_field(&mut c, "goblin", "goblin_waiting"), "0");
        }
    }
}

on_every_server! {
    /// A lease end that no longer fits 64-bit milliseconds when the waiter's turn comes is
    /// refused as its command refuses it: `invalid expire time`, and nothing written.
    fn a_lease_end_past_the_clock_s_range_is_refused_in_line_as_by_the_command(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.LOCK", "k", "h", "600000"]), Reply::Status("OK".into()));
        // An end that fits now, and not a second from now.
        let ms = (i64::MAX - server_ms(&mut c) - 500).to_string();
        let mut waiter = server.conn();
        waiter.send(&["GOBLIN.BLOCK", "k", "t", &ms, "0"]).expect("send");
        assert!(wait_until(Duration::from_secs(10), || info_field(&mut c, "goblin", "goblin_waiting") == "1"));
        std::thread::sleep(Duration::from_millis(1000));
        assert_eq!(c.call(&["GOBLIN.CAD", "k", "h"]), Reply::Int(1));
        assert_eq!(
            waiter.reply_within(Duration::from_secs(10)),
            Some(Reply::Error("ERR invalid expire time in 'goblin.block' command".into()))
        );
        assert_eq!(c.call(&["EXISTS", "k"]), Reply::Int(0), "nothing written for it");
        // The command, with the same lease now.
        assert_eq!(
            c.call(&["GOBLIN.LOCK", "k", "t", &ms]),
            Reply::Error("ERR invalid expire time in 'goblin.lock' command".into())
        );
        assert_eq!(info_field(&mut c, "goblin", "goblin_waiting"), "0");
    }
}
