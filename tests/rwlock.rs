//! The readers-writer lock (GOBLIN.RLOCK, GOBLIN.WLOCK, GOBLIN.BRLOCK, GOBLIN.BWLOCK,
//! GOBLIN.RWEXTEND, GOBLIN.RWUNLOCK, GOBLIN.RWHELD) on every server: readers share and a writer
//! holds alone; one line of readers and writers, first come first served, where no reader passes
//! a waiting writer; promotions and demotions; every way a lease ends; timeouts, CLIENT UNBLOCK
//! and KILL letting those behind in; MULTI and scripts; out of memory; replicas and a failover;
//! grants in the AOF and on a replica without the module; a restart; fencing tokens; events;
//! what the server is told of the commands.

mod common;
use common::*;
use std::time::Duration;

/// A client that sent `args` and waits for the reply.
fn waiter(server: &Server, args: &[&str]) -> Conn {
    let mut c = server.conn();
    c.send(args).expect("send");
    c
}

fn blocked(c: &mut Conn) -> i64 {
    info_field(c, "clients", "blocked_clients").parse().unwrap()
}

/// Waits until the server has `n` blocked clients.
fn until_blocked(c: &mut Conn, n: i64) {
    assert!(
        wait_until(Duration::from_secs(10), || blocked(c) == n),
        "{} blocked clients, not {n}",
        blocked(c)
    );
}

fn waiting(c: &mut Conn) -> i64 {
    info_field(c, "goblin", "goblin_waiting").parse().unwrap()
}

fn ok() -> Reply {
    Reply::Status("OK".into())
}

/// The readers of `key`, by name.
fn readers(c: &mut Conn, key: &str) -> Vec<String> {
    let mut members = c.call(&["ZRANGE", key, "0", "-1"]).texts();
    members.sort();
    members
}

fn held(c: &mut Conn, key: &str, token: &str) -> Reply {
    c.call(&["GOBLIN.RWHELD", key, token])
}

const QUICK: Duration = Duration::from_millis(200);
const LONG: Duration = Duration::from_secs(5);

on_every_server! {
    /// Readers share; a writer waits for every one of them, and the readers who come after it
    /// wait behind it, whether they wait or not.
    fn a_writer_waits_for_the_readers_and_later_readers_wait_behind_it(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.RLOCK", "doc", "r1", "60000"]), ok());
        assert_eq!(c.call(&["GOBLIN.RLOCK", "doc", "r2", "60000"]), ok());
        assert_eq!(c.call(&["GOBLIN.WLOCK", "doc", "w", "60000"]), Reply::Nil);
        let mut w = waiter(&server, &["GOBLIN.BWLOCK", "doc", "w", "60000", "10"]);
        until_blocked(&mut c, 1);
        assert_eq!(c.call(&["GOBLIN.RLOCK", "doc", "r3", "60000"]), Reply::Nil, "a writer waits");
        let mut r4 = waiter(&server, &["GOBLIN.BRLOCK", "doc", "r4", "60000", "10"]);
        until_blocked(&mut c, 2);
        // A reader renews while the writer waits: it holds the key already.
        assert_eq!(c.call(&["GOBLIN.RLOCK", "doc", "r1", "60000"]), ok());
        assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "doc", "r1"]), Reply::Int(1));
        assert_eq!(w.reply_within(QUICK), None, "r2 still reads");
        assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "doc", "r2"]), Reply::Int(1));
        assert_eq!(w.reply_within(LONG), Some(ok()));
        assert_eq!(c.call(&["GET", "doc"]), bulk("w"));
        assert_eq!(r4.reply_within(QUICK), None, "w writes");
        assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "doc", "w"]), Reply::Int(1));
        assert_eq!(r4.reply_within(LONG), Some(ok()));
        assert_eq!(readers(&mut c, "doc"), ["r4"]);
        assert_eq!(waiting(&mut c), 0);
        assert_eq!(info_field(&mut c, "goblin", "goblin_waiting_keys"), "0");
    }

    /// Waiters go in the order they came, the readers at the head together, and nobody passes
    /// the first who does not fit: R1 R2 W3 R4 R5 W6 is served as {R1, R2}, W3, {R4, R5}, W6.
    fn the_line_is_one_order_of_readers_and_writers(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.WLOCK", "doc", "w0", "60000"]), ok());
        let line = [("r1", "R"), ("r2", "R"), ("w3", "W"), ("r4", "R"), ("r5", "R"), ("w6", "W")];
        let mut waiters: Vec<Conn> = Vec::new();
        for (n, (token, mode)) in line.iter().enumerate() {
            let command = if *mode == "R" { "GOBLIN.BRLOCK" } else { "GOBLIN.BWLOCK" };
            waiters.push(waiter(&server, &[command, "doc", token, "60000", "30"]));
            until_blocked(&mut c, n as i64 + 1);
        }
        let mut served = |c: &mut Conn, release: &[&str], batch: &[usize]| {
            for token in release {
                assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "doc", token]), Reply::Int(1), "{token}");
            }
            for &n in batch {
                assert_eq!(waiters[n].reply_within(LONG), Some(ok()), "{}", line[n].0);
            }
            for (n, w) in waiters.iter_mut().enumerate().skip(batch.last().unwrap() + 1) {
                assert_eq!(w.reply_within(Duration::from_millis(50)), None, "{} came later", line[n].0);
            }
        };
        served(&mut c, &["w0"], &[0, 1]);
        assert_eq!(readers(&mut c, "doc"), ["r1", "r2"]);
        served(&mut c, &["r1", "r2"], &[2]);
        assert_eq!(c.call(&["GET", "doc"]), bulk("w3"));
        served(&mut c, &["w3"], &[3, 4]);
        served(&mut c, &["r4", "r5"], &[5]);
        assert_eq!(c.call(&["GET", "doc"]), bulk("w6"));
        assert_eq!(waiting(&mut c), 0);
    }

    /// A reader asking to write waits for the other readers, ahead of a writer that came
    /// before it (who waits for that reader anyway); a second such reader would wait for the
    /// first for ever, and is refused at once, keeping its read lease.
    fn a_reader_is_promoted_ahead_of_the_line_and_a_second_promotion_is_refused(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for token in ["a", "b"] {
            assert_eq!(c.call(&["GOBLIN.RLOCK", "doc", token, "60000"]), ok());
        }
        let mut w = waiter(&server, &["GOBLIN.BWLOCK", "doc", "w", "60000", "30"]);
        until_blocked(&mut c, 1);
        let mut a = waiter(&server, &["GOBLIN.BWLOCK", "doc", "a", "60000", "30"]);
        until_blocked(&mut c, 2);
        assert_eq!(c.call(&["GOBLIN.BWLOCK", "doc", "b", "60000", "30"]), Reply::Error(RW_DEADLOCK.into()));
        assert_eq!(held(&mut c, "doc", "b"), Reply::Status("read".into()), "b keeps its lease");
        assert_eq!(c.call(&["GOBLIN.WLOCK", "doc", "b", "60000"]), Reply::Nil, "a reads beside it");
        assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "doc", "b"]), Reply::Int(1));
        assert_eq!(a.reply_within(LONG), Some(ok()));
        assert_eq!(c.call(&["GET", "doc"]), bulk("a"));
        assert_eq!(w.reply_within(QUICK), None, "a writes");
        assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "doc", "a"]), Reply::Int(1));
        assert_eq!(w.reply_within(LONG), Some(ok()));
        // A sole reader is promoted at once, whoever waits.
        assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "doc", "w"]), Reply::Int(1));
        assert_eq!(c.call(&["GOBLIN.RLOCK", "doc", "x", "60000"]), ok());
        let mut y = waiter(&server, &["GOBLIN.BWLOCK", "doc", "y", "60000", "30"]);
        until_blocked(&mut c, 1);
        assert_eq!(c.call(&["GOBLIN.WLOCK", "doc", "x", "60000"]), ok());
        assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "doc", "x"]), Reply::Int(1));
        assert_eq!(y.reply_within(LONG), Some(ok()));
        assert_eq!(waiting(&mut c), 0);
    }

    /// The writer demoted reads at once, and the readers waiting at the head of the line read
    /// beside it in the same step; a writer behind them waits for all of them.
    fn a_demotion_lets_the_waiting_readers_in_at_once(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.WLOCK", "doc", "w", "60000"]), ok());
        let mut waiters: Vec<Conn> = Vec::new();
        for (n, args) in [
            ["GOBLIN.BRLOCK", "doc", "r1", "60000", "30"],
            ["GOBLIN.BRLOCK", "doc", "r2", "60000", "30"],
            ["GOBLIN.BWLOCK", "doc", "w2", "60000", "30"],
        ]
        .iter()
        .enumerate()
        {
            waiters.push(waiter(&server, args));
            until_blocked(&mut c, n as i64 + 1);
        }
        assert_eq!(c.call(&["GOBLIN.RLOCK", "doc", "w", "60000"]), ok());
        assert_eq!(waiters[0].reply_within(LONG), Some(ok()));
        assert_eq!(waiters[1].reply_within(LONG), Some(ok()));
        assert_eq!(waiters[2].reply_within(QUICK), None);
        assert_eq!(readers(&mut c, "doc"), ["r1", "r2", "w"]);
        for token in ["r1", "r2", "w"] {
            assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "doc", token]), Reply::Int(1));
        }
        assert_eq!(waiters[2].reply_within(LONG), Some(ok()));
    }

    /// Every way a lease ends lets the next in: Goblin's releases and demotion at once, the
    /// server's own deletes and a key's expiry through keyspace events, and a lease's end (a
    /// reader's has no event: its score passes) on a timer at that millisecond, never a poll.
    fn every_way_a_lease_ends_lets_the_next_in(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        // (what holds the key, how it ends)
        let ends: &[(&[&str], &[&str])] = &[
            (&["GOBLIN.WLOCK", "k", "h", "60000"], &["GOBLIN.RWUNLOCK", "k", "h"]),
            (&["GOBLIN.WLOCK", "k", "h", "60000"], &["GOBLIN.CAD", "k", "h"]),
            (&["GOBLIN.WLOCK", "k", "h", "60000"], &["DEL", "k"]),
            (&["GOBLIN.WLOCK", "k", "h", "60000"], &["FLUSHALL"]),
            (&["GOBLIN.WLOCK", "k", "h", "60000"], &["PEXPIRE", "k", "1"]),
            (&["GOBLIN.WLOCK", "k", "h", "300"], &[]),
            (&["GOBLIN.RLOCK", "k", "h", "60000"], &["GOBLIN.RWUNLOCK", "k", "h"]),
            (&["GOBLIN.RLOCK", "k", "h", "60000"], &["ZREM", "k", "h"]),
            (&["GOBLIN.RLOCK", "k", "h", "60000"], &["UNLINK", "k"]),
            (&["GOBLIN.RLOCK", "k", "h", "60000"], &["GOBLIN.RWEXTEND", "k", "h", "1", "REPLACE"]),
            (&["GOBLIN.RLOCK", "k", "h", "300"], &[]),
        ];
        for (hold, end) in ends {
            assert_eq!(c.call(hold), ok(), "{hold:?}");
            let held_until = c.call(&["PEXPIRETIME", "k"]).int();
            let mut w = waiter(&server, &["GOBLIN.BWLOCK", "k", "w", "30000", "10"]);
            until_blocked(&mut c, 1);
            // (A lease's own end is checked on the server's clock below.)
            if !end.is_empty() {
                assert_eq!(w.reply_within(QUICK), None, "{hold:?} {end:?}: served before the end");
                assert!(!c.call(end).is_error(), "{end:?}");
            }
            assert_eq!(w.reply_within(LONG), Some(ok()), "{hold:?} {end:?}");
            assert_eq!(held(&mut c, "k", "w"), Reply::Status("write".into()));
            if end.is_empty() {
                // Granted on the server's clock after the lease's last millisecond.
                let granted_at = c.call(&["PEXPIRETIME", "k"]).int() - 30_000;
                assert!(granted_at > held_until, "{hold:?}: granted at {granted_at}, held until {held_until}");
            }
            assert_eq!(waiting(&mut c), 0);
            c.call(&["DEL", "k"]);
        }
        // A reader's lease that lapses while another's runs fires no event (the key stays): a
        // timer at its last millisecond promotes the reader waiting for it.
        assert_eq!(c.call(&["GOBLIN.RLOCK", "k", "p", "60000"]), ok());
        assert_eq!(c.call(&["GOBLIN.RLOCK", "k", "h", "300"]), ok());
        let held_until: i64 = c.call(&["ZSCORE", "k", "h"]).text().parse().unwrap();
        let mut p = waiter(&server, &["GOBLIN.BWLOCK", "k", "p", "30000", "10"]);
        until_blocked(&mut c, 1);
        assert_eq!(p.reply_within(LONG), Some(ok()));
        let granted_at = c.call(&["PEXPIRETIME", "k"]).int() - 30_000;
        assert!(granted_at > held_until, "promoted at {granted_at}, h read until {held_until}");
        assert_eq!(c.call(&["GET", "k"]), bulk("p"));
    }

    /// A token lock's waiter (GOBLIN.BLOCK) in a readers-writer line waits as a writer, and is
    /// granted only once the readers' set is gone. A set written by hand with more lapsed leases
    /// than one eviction takes, and a TTL of its own, goes over the next looks, a millisecond
    /// apart, before the lock's string is written.
    fn a_lock_waiting_among_readers_and_writers_waits_for_every_lapsed_lease_to_go(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.WLOCK", "doc", "w", "60000"]), ok());
        let mut lock = waiter(&server, &["GOBLIN.BLOCK", "doc", "l", "60000", "10"]);
        until_blocked(&mut c, 1);
        let mut reader = waiter(&server, &["GOBLIN.BRLOCK", "doc", "r", "60000", "10"]);
        until_blocked(&mut c, 2);
        let mut lapsed = vec!["ZADD".to_string(), "doc".to_string()];
        for i in 0..3000 {
            lapsed.extend([(1000 + i).to_string(), format!("old{i}")]);
        }
        c.call(&["MULTI"]);
        c.call(&["DEL", "doc"]);
        c.call(&lapsed);
        c.call(&["PEXPIRE", "doc", "60000"]);
        let exec = c.call(&["EXEC"]);
        assert_eq!(exec.array()[1], Reply::Int(3000), "{exec:?}");
        assert_eq!(lock.reply_within(LONG), Some(ok()));
        assert_eq!(c.call(&["GET", "doc"]), bulk("l"));
        assert_eq!(reader.reply_within(QUICK), None, "behind the lock");
        assert_eq!(c.call(&["GOBLIN.CAD", "doc", "l"]), Reply::Int(1));
        assert_eq!(reader.reply_within(LONG), Some(ok()));
        assert_eq!(readers(&mut c, "doc"), ["r"]);
        assert!(!server.log().contains("internal error"), "{}", server.log());
    }

    /// A waiter that times out, is unblocked or killed gives up its place, nothing is granted
    /// for it, and the readers it held back are let in at once.
    fn a_waiter_that_leaves_lets_those_behind_it_in(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for how in ["timeout", "TIMEOUT", "ERROR", "KILL"] {
            assert_eq!(c.call(&["GOBLIN.RLOCK", "doc", "r", "60000"]), ok());
            let mut w = server.conn();
            let id = w.call(&["CLIENT", "ID"]).int().to_string();
            let mut r2 = server.conn();
            let before_ms = server_ms(&mut c);
            if how == "timeout" {
                // The writer's 300 ms run from its own call: the server is stopped while both
                // calls are sent, so it reads them in one turn, the reader behind the writer
                // before any of the writer's time can pass. The reader's grant then comes no
                // sooner than the writer's timeout, by the server's clock.
                server.pause();
                w.send(&["GOBLIN.BWLOCK", "doc", "w", "60000", "0.3"]).unwrap();
                server.until_unread(&w);
                r2.send(&["GOBLIN.BRLOCK", "doc", "r2", "60000", "10"]).unwrap();
                server.until_unread(&r2);
                server.resume();
            } else {
                w.send(&["GOBLIN.BWLOCK", "doc", "w", "60000", "0"]).unwrap();
                until_blocked(&mut c, 1);
                r2.send(&["GOBLIN.BRLOCK", "doc", "r2", "60000", "10"]).unwrap();
                until_blocked(&mut c, 2);
                assert_eq!(r2.reply_within(QUICK), None, "{how}: behind the writer");
            }
            match how {
                "timeout" => {}
                "KILL" => assert_eq!(c.call(&["CLIENT", "KILL", "ID", &id]), Reply::Int(1)),
                _ => assert_eq!(c.call(&["CLIENT", "UNBLOCK", &id, how]), Reply::Int(1)),
            }
            match how {
                "timeout" | "TIMEOUT" => assert_eq!(w.reply_within(LONG), Some(Reply::Nil), "{how}"),
                "ERROR" => assert!(matches!(w.reply_within(LONG), Some(Reply::Error(e)) if e.starts_with("UNBLOCKED")), "{how}"),
                _ => {}
            }
            assert_eq!(r2.reply_within(LONG), Some(ok()), "{how}");
            if how == "timeout" {
                let end: f64 = c.call(&["ZSCORE", "doc", "r2"]).text().parse().expect("a score");
                let granted_ms = end as i64 - 60_000;
                assert!(granted_ms >= before_ms + 300, "{how}: r2 granted at {granted_ms}, before the writer's 300 ms from {before_ms}");
            }
            assert_eq!(readers(&mut c, "doc"), ["r", "r2"], "{how}");
            assert_eq!(held(&mut c, "doc", "w"), Reply::Nil, "{how}");
            assert_eq!(waiting(&mut c), 0, "{how}");
            c.call(&["DEL", "doc"]);
        }
        // The timeout is BLPOP's.
        for (timeout, error) in [("-1", TIMEOUT_NEGATIVE), ("x", TIMEOUT_NOT_A_FLOAT), ("1e300", TIMEOUT_OUT_OF_RANGE)] {
            assert_eq!(c.call(&["GOBLIN.BRLOCK", "doc", "r", "1000", timeout]), Reply::Error(error.into()));
        }
    }

    /// As BLPOP: no blocking inside MULTI, a script or a function; and a release inside a
    /// transaction hands the key over before the next command of the transaction runs.
    fn inside_multi_it_answers_at_once_and_a_release_hands_over_in_the_same_step(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.WLOCK", "doc", "w", "60000"]), ok());
        c.call(&["MULTI"]);
        c.call(&["GOBLIN.BRLOCK", "doc", "r", "1000", "0"]);
        c.call(&["GOBLIN.BWLOCK", "doc", "x", "1000", "0"]);
        c.call(&["GOBLIN.BRLOCK", "free", "r", "1000", "0"]);
        assert_eq!(c.call(&["EXEC"]), Reply::Array(vec![Reply::Nil, Reply::Nil, ok()]));
        assert_eq!(blocked(&mut c), 0);
        let mut r = waiter(&server, &["GOBLIN.BRLOCK", "doc", "r", "60000", "10"]);
        until_blocked(&mut c, 1);
        c.call(&["MULTI"]);
        c.call(&["GOBLIN.RWUNLOCK", "doc", "w"]);
        c.call(&["GOBLIN.WLOCK", "doc", "barger", "60000"]);
        assert_eq!(c.call(&["EXEC"]), Reply::Array(vec![Reply::Int(1), Reply::Nil]));
        assert_eq!(r.reply_within(LONG), Some(ok()));
        assert_eq!(readers(&mut c, "doc"), ["r"]);
    }

    /// A waiter whose turn comes while the server is out of memory gets the server's own error,
    /// nothing is written for it, and it leaves the line; a release runs at maxmemory.
    fn a_turn_that_comes_out_of_memory_gets_the_servers_error(flavor: Flavor) {
        let server = Server::builder(flavor).args(["--maxmemory-policy", "noeviction"]).start();
        let mut c = server.conn();
        let memory = |c: &mut Conn, limit: &str| assert_eq!(c.call(&["CONFIG", "SET", "maxmemory", limit]), ok());
        memory(&mut c, "1");
        let oom = c.call(&["SET", "probe", "x"]);
        assert!(matches!(&oom, Reply::Error(e) if e.starts_with("OOM ")), "{oom:?}");
        assert_eq!(c.call(&["GOBLIN.RLOCK", "doc", "r", "60000"]), oom, "deny-oom");
        memory(&mut c, "0");
        assert_eq!(c.call(&["GOBLIN.RLOCK", "doc", "r", "60000"]), ok());
        let mut w = waiter(&server, &["GOBLIN.BWLOCK", "doc", "w", "30000", "10"]);
        until_blocked(&mut c, 1);
        let mut r2 = waiter(&server, &["GOBLIN.BRLOCK", "doc", "r2", "30000", "10"]);
        until_blocked(&mut c, 2);
        memory(&mut c, "1");
        assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "doc", "r"]), Reply::Int(1));
        assert_eq!(w.reply_within(LONG), Some(oom.clone()));
        assert_eq!(r2.reply_within(LONG), Some(oom.clone()));
        assert_eq!(waiting(&mut c), 0);
        memory(&mut c, "0");
        assert_eq!(c.call(&["EXISTS", "doc"]), Reply::Int(0), "nothing written");
    }
}

on_every_server! {
    /// A writable replica answers at once; a failover unblocks the old primary's waiters with
    /// the error native blocking commands get, and none of them holds the lock.
    fn replicas_answer_at_once_and_a_failover_unblocks_with_an_error(flavor: Flavor) {
        // Both load the module, as a promoted replica must.
        let primary = Server::builder(flavor).without_replica().start();
        let replica = Server::builder(flavor).without_replica().start();
        replica.follow(&primary);
        let (mut p, mut r) = (primary.conn(), replica.conn());
        assert_eq!(p.call(&["GOBLIN.RLOCK", "doc", "holder", "60000"]), ok());
        assert!(wait_until(LONG, || readers(&mut r, "doc") == ["holder"]));
        r.call(&["CONFIG", "SET", "replica-read-only", "no"]);
        assert_eq!(r.call(&["GOBLIN.BWLOCK", "doc", "w", "1000", "0"]), Reply::Nil);
        assert_eq!(held(&mut r, "doc", "holder"), Reply::Status("read".into()), "read only, on a replica too");
        r.call(&["CONFIG", "SET", "replica-read-only", "yes"]);
        let mut waiters = vec![waiter(&primary, &["GOBLIN.BWLOCK", "doc", "w", "60000", "0"])];
        until_blocked(&mut p, 1);
        waiters.push(waiter(&primary, &["GOBLIN.BRLOCK", "doc", "r", "60000", "0"]));
        until_blocked(&mut p, 2);
        r.call(&["REPLICAOF", "NO", "ONE"]);
        p.call(&["REPLICAOF", "127.0.0.1", &replica.port.to_string()]);
        for (i, w) in waiters.iter_mut().enumerate() {
            match w.reply_within(LONG) {
                Some(Reply::Error(e)) => assert!(e.starts_with("UNBLOCKED"), "waiter {i}: {e}"),
                other => panic!("waiter {i}: {other:?}"),
            }
        }
        assert_eq!(readers(&mut r, "doc"), ["holder"], "nobody else holds it");
        assert!(wait_until(LONG, || waiting(&mut p) == 0));
    }

    /// Grants, promotions, demotions, extends, releases and waiters' grants reach a replica
    /// without the module and the AOF as core commands, and a server without the module
    /// restarted from that AOF holds the same keys, TTLs to the millisecond.
    fn every_write_reaches_the_replica_and_the_aof_as_core_commands(flavor: Flavor) {
        let pair = PersistedPair::start(flavor, "rwlock-aof");
        let mut p = pair.primary.conn();
        let calls: &[&[&str]] = &[
            &["GOBLIN.RLOCK", "rw:a", "r1", "60000", "FENCE"],
            &["GOBLIN.RLOCK", "rw:a", "r2", "50000"],
            &["GOBLIN.RWEXTEND", "rw:a", "r2", "20000"],
            &["GOBLIN.RWUNLOCK", "rw:a", "r1"],
            &["GOBLIN.WLOCK", "rw:a", "r2", "40000", "FENCE"],
            &["GOBLIN.RWEXTEND", "rw:a", "r2", "45000", "REPLACE"],
            &["GOBLIN.RLOCK", "rw:a", "r2", "30000"],
            &["GOBLIN.WLOCK", "rw:b", "w", "60000"],
        ];
        for call in calls {
            assert!(!p.call(call).is_error(), "{call:?}");
        }
        let mut w = waiter(&pair.primary, &["GOBLIN.BRLOCK", "rw:b", "r", "30000", "0", "FENCE"]);
        until_blocked(&mut p, 1);
        assert_eq!(p.call(&["GOBLIN.RWUNLOCK", "rw:b", "w"]), Reply::Int(1));
        assert!(matches!(w.reply_within(LONG), Some(Reply::Int(token)) if token > 0));
        // Lapsed leases go as ZREMRANGEBYSCORE.
        p.call(&["ZADD", "rw:c", "1000", "old"]);
        p.call(&["PEXPIRE", "rw:c", "60000"]);
        assert_eq!(p.call(&["GOBLIN.RLOCK", "rw:c", "new", "30000"]), ok());
        drop(w);
        let (keys, aof) = pair.check("*rw:*");
        assert!(keys.len() >= 3, "{keys:?}");
        let commands = aof_commands(&aof);
        assert!(commands.iter().all(|c| !c[0].to_ascii_uppercase().starts_with("GOBLIN")), "{commands:?}");
        let named = |name: &str| commands.iter().any(|c| c[0].eq_ignore_ascii_case(name));
        for name in ["ZADD", "PEXPIREAT", "SET", "ZREM", "DEL", "ZREMRANGEBYSCORE"] {
            assert!(named(name), "no {name} in {commands:?}");
        }
    }

    /// A restart from the RDB and from the AOF keeps who holds what until when: the holders
    /// renew and release, and the rules hold on the data loaded.
    fn a_restart_keeps_the_holders(flavor: Flavor) {
        for (name, persistence) in [("rdb", &["--save", "", "--appendonly", "no"][..]), ("aof", &AOF_ALWAYS[..])] {
            let dir = TempDir::new(&format!("rwlock-{name}"));
            let start = || Server::builder(flavor).dir(&dir.0).args(persistence.iter().copied()).without_replica().start();
            let mut server = start();
            let mut c = server.conn();
            assert_eq!(c.call(&["GOBLIN.RLOCK", "r", "a", "60000"]), ok());
            assert_eq!(c.call(&["GOBLIN.RLOCK", "r", "b", "50000"]), ok());
            assert_eq!(c.call(&["GOBLIN.WLOCK", "w", "x", "60000"]), ok());
            let before = (snapshot(&mut c, "r"), snapshot(&mut c, "w"));
            if name == "rdb" {
                assert_eq!(c.call(&["SAVE"]), ok());
            }
            drop(c);
            server.kill();
            let server = start();
            let mut c = server.conn();
            assert_eq!((snapshot(&mut c, "r"), snapshot(&mut c, "w")), before, "{name}");
            assert_eq!(held(&mut c, "r", "a"), Reply::Status("read".into()));
            assert_eq!(held(&mut c, "w", "x"), Reply::Status("write".into()));
            assert_eq!(c.call(&["GOBLIN.WLOCK", "r", "a", "60000"]), Reply::Nil, "{name}: b reads");
            assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "r", "b"]), Reply::Int(1));
            assert_eq!(c.call(&["GOBLIN.WLOCK", "r", "a", "60000"]), ok(), "{name}: promoted");
            assert_eq!(c.call(&["GOBLIN.RLOCK", "w", "y", "60000"]), Reply::Nil, "{name}");
        }
    }

    /// Fencing tokens: each reader its own, kept by renewals and extends; a promotion and a
    /// demotion mint new ones, larger than every one before, readers' included, and a waiter's
    /// grant too.
    fn fencing_tokens_grow_with_every_grant_and_a_change_of_mode(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let token = |c: &mut Conn, args: &[&str]| match c.call(args) {
            Reply::Int(token) => token,
            other => panic!("{args:?}: {other:?}"),
        };
        let r1 = token(&mut c, &["GOBLIN.RLOCK", "{d}", "r1", "60000", "FENCE"]);
        let r2 = token(&mut c, &["GOBLIN.RLOCK", "{d}", "r2", "60000", "FENCE"]);
        assert!(r2 > r1);
        assert_eq!(token(&mut c, &["GOBLIN.RLOCK", "{d}", "r1", "60000", "FENCE"]), r1, "renewed");
        assert_eq!(token(&mut c, &["GOBLIN.RWEXTEND", "{d}", "r1", "1000", "FENCE"]), r1, "extended");
        assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "{d}", "r2"]), Reply::Int(1));
        assert_eq!(c.call(&["EXISTS", "{d}\0goblin:fence\0{d}\0r2"]), Reply::Int(0), "r2's token goes with it");
        let promoted = token(&mut c, &["GOBLIN.WLOCK", "{d}", "r1", "60000", "FENCE"]);
        assert!(promoted > r2, "{promoted} <= {r2}");
        assert_eq!(c.call(&["EXISTS", "{d}\0goblin:fence\0{d}\0r1"]), Reply::Int(0), "its read token goes");
        assert_eq!(token(&mut c, &["GOBLIN.RWEXTEND", "{d}", "r1", "1000", "REPLACE", "FENCE"]), promoted);
        assert_eq!(token(&mut c, &["GOBLIN.WLOCK", "{d}", "r1", "60000", "FENCE"]), promoted);
        let demoted = token(&mut c, &["GOBLIN.RLOCK", "{d}", "r1", "60000", "FENCE"]);
        assert!(demoted > promoted);
        let mut w = waiter(&server, &["GOBLIN.BWLOCK", "{d}", "w", "60000", "10", "FENCE"]);
        until_blocked(&mut c, 1);
        assert_eq!(c.call(&["GOBLIN.RWUNLOCK", "{d}", "r1"]), Reply::Int(1));
        match w.reply_within(LONG) {
            Some(Reply::Int(waited)) => assert!(waited > demoted, "{waited} <= {demoted}"),
            other => panic!("{other:?}"),
        }
    }

    /// The keyspace events are those of the core commands each write replicates as.
    fn keyspace_events_are_the_effects(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
        let events = keyspace_events(&server, &mut c, |c| {
            c.call(&["GOBLIN.RLOCK", "k", "a", "60000"]);
            c.call(&["GOBLIN.RLOCK", "k", "b", "30000"]);
            c.call(&["GOBLIN.WLOCK", "k", "a", "60000"]); // refused: nothing
            c.call(&["GOBLIN.RWUNLOCK", "k", "b"]); // not the last lease to end: no expire
            c.call(&["GOBLIN.WLOCK", "k", "a", "60000"]); // promoted
            c.call(&["GOBLIN.RWEXTEND", "k", "a", "1000"]);
            c.call(&["GOBLIN.RLOCK", "k", "a", "60000"]); // demoted
            c.call(&["GOBLIN.RWHELD", "k", "a"]);
            c.call(&["GOBLIN.RWUNLOCK", "k", "a"]);
        });
        let expected = [
            "zadd k", "expire k", "zadd k", "expire k", "zrem k", "set k", "expire k", "expire k",
            "del k", "zadd k", "expire k", "zrem k", "del k",
        ];
        assert_eq!(events, expected);
    }

    /// COMMAND INFO, GETKEYS, ACL categories and COMMAND DOCS, as the pages say; and INFO
    /// goblin's counters.
    fn the_server_knows_the_commands_as_their_pages_say(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        // (name, flags, ACL categories, arguments, how many of them a call needs)
        for (name, flags, categories, args, required) in [
            ("goblin.rlock", &["write", "denyoom", "fast"][..], &["@write", "@sortedset", "@string", "@fast"][..], &["key", "token", "milliseconds", "fence"][..], 3),
            ("goblin.wlock", &["write", "denyoom", "fast"], &["@write", "@sortedset", "@string", "@fast"], &["key", "token", "milliseconds", "fence"], 3),
            ("goblin.brlock", &["write", "denyoom", "blocking"], &["@write", "@slow", "@blocking"], &["key", "token", "milliseconds", "timeout", "fence"], 4),
            ("goblin.bwlock", &["write", "denyoom", "blocking"], &["@write", "@slow", "@blocking"], &["key", "token", "milliseconds", "timeout", "fence"], 4),
            ("goblin.rwextend", &["write", "denyoom", "fast"], &["@write", "@fast"], &["key", "token", "milliseconds", "replace", "fence"], 3),
            ("goblin.rwunlock", &["write", "fast"], &["@write", "@fast"], &["key", "token"], 2),
            ("goblin.rwheld", &["readonly", "fast"], &["@read", "@fast"], &["key", "token"], 2),
        ] {
            let info = c.call(&["COMMAND", "INFO", name]);
            let entry = info.array()[0].array().to_vec();
            let got = entry[2].texts();
            for flag in flags {
                assert!(got.contains(&flag.to_string()), "{name}: {got:?}");
            }
            assert_eq!(got.contains(&"denyoom".to_string()), flags.contains(&"denyoom"), "{name}: {got:?}");
            assert_eq!((entry[3].int(), entry[4].int(), entry[5].int()), (1, 1, 1), "{name}");
            if flavor.has_module_acl_categories() {
                let got = entry[6].texts();
                for category in categories {
                    assert!(got.contains(&category.to_string()), "{name}: {got:?}");
                }
            }
            let upper = name.to_ascii_uppercase();
            let call = ["COMMAND", "GETKEYS", &upper, "doc:1", "t", "1", "1"];
            assert_eq!(c.call(&call[..3 + required]).texts(), ["doc:1"], "{name}");
            let docs = c.call(&["COMMAND", "DOCS", name]);
            let fields = docs.array()[1].array().to_vec();
            let field = |wanted: &str| fields.chunks(2).find(|p| p[0].text() == wanted).map(|p| p[1].clone()).unwrap();
            assert_eq!(field("since").text(), "0.4.0", "{name}");
            let names: Vec<String> = field("arguments").array().iter().map(|arg| arg.array().chunks(2).find(|p| p[0].text() == "name").unwrap()[1].text()).collect();
            assert_eq!(names, args, "{name}");
        }
        if flavor.has_module_acl_categories() {
            c.call(&["ACL", "SETUSER", "reader", "on", "nopass", "~*", "+@all", "-@write"]);
            let mut reader = server.conn();
            reader.call(&["AUTH", "reader", "x"]);
            let denied = reader.call(&["GOBLIN.RLOCK", "doc", "t", "1000"]);
            assert!(matches!(&denied, Reply::Error(e) if e.starts_with("NOPERM")), "{denied:?}");
            assert_eq!(reader.call(&["GOBLIN.RWHELD", "doc", "t"]), Reply::Nil);
        }
        c.call(&["GOBLIN.RLOCK", "n", "a", "60000"]);
        c.call(&["GOBLIN.WLOCK", "n", "b", "60000"]);
        c.call(&["GOBLIN.RLOCK", "n", "a", "x"]);
        let info = c.call(&["INFO", "goblin"]).text();
        for field in ["goblin_rlock_calls:2", "goblin_rlock_errors:1", "goblin_rlock_acquired:1", "goblin_wlock_refused:1"] {
            assert!(info.contains(field), "{field} in {info}");
        }
    }
}
