//! Waiting in line inside the server: GOBLIN.BLOCK (token locks) and GOBLIN.BZWINDOW (leases
//! and permits), first come first served, woken by every way a lock or a slot frees; timeouts,
//! CLIENT UNBLOCK and CLIENT KILL as for native blocking commands; MULTI, scripts and replicas
//! answered at once; GOBLIN.LOCK, GOBLIN.ZWINDOW and GOBLIN.EXTEND around them.

mod common;
use common::*;
use std::time::{Duration, Instant};

/// A client that sent `args` and waits for the reply.
fn waiter(server: &Server, args: &[&str]) -> Conn {
    let mut c = server.conn();
    c.send(args).expect("send");
    c
}

/// Waits until the server has `n` blocked clients.
fn until_blocked(c: &mut Conn, n: i64) {
    let blocked = |c: &mut Conn| {
        info_field(c, "clients", "blocked_clients")
            .parse::<i64>()
            .unwrap()
    };
    assert!(
        wait_until(Duration::from_secs(10), || blocked(c) == n),
        "{} blocked clients, not {n}",
        blocked(c)
    );
}

fn waiting(c: &mut Conn) -> i64 {
    info_field(c, "goblin", "goblin_waiting").parse().unwrap()
}

/// When the lock `key` was granted, on the server's clock: its expiry less its lease.
fn granted_at_ms(c: &mut Conn, key: &str, lease_ms: i64) -> i64 {
    c.call(&["PEXPIRETIME", key]).int() - lease_ms
}

/// A sorted-set member's score (a lease's grant, on the server's clock) in milliseconds.
fn score_ms(c: &mut Conn, key: &str, member: &str) -> i64 {
    let score: f64 = c
        .call(&["ZSCORE", key, member])
        .text()
        .parse()
        .expect("a score");
    (score * 1000.0).round() as i64
}

fn ok() -> Reply {
    Reply::Status("OK".into())
}

const QUICK: Duration = Duration::from_millis(200);
const LONG: Duration = Duration::from_secs(5);

on_every_server! {
    /// Each way a lock is freed hands it to the waiter: Goblin's releases at once, the
    /// server's own deletes and the expiry through keyspace events and timers.
    fn a_waiter_gets_the_lock_however_it_is_freed(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let releases: &[&[&str]] = &[
            &["GOBLIN.CAD", "l", "a"],
            &["DELEX", "l", "IFEQ", "a"],
            &["DELIFEQ", "l", "a"],
            &["DEL", "l"],
            &["UNLINK", "l"],
            &["GETDEL", "l"],
            &["FLUSHALL"],
            &["PEXPIRE", "l", "1"],
            &["SET", "l", "a", "PX", "50"],
        ];
        for release in releases {
            assert_eq!(c.call(&["GOBLIN.LOCK", "l", "a", "60000"]), ok(), "{release:?}");
            let mut w = waiter(&server, &["GOBLIN.BLOCK", "l", "b", "30000", "10"]);
            until_blocked(&mut c, 1);
            assert_eq!(w.reply_within(QUICK), None, "{release:?}: served before the release");
            let released_ms = server_ms(&mut c);
            assert!(!c.call(release).is_error(), "{release:?}");
            assert_eq!(w.reply_within(LONG), Some(ok()), "{release:?}");
            assert_eq!(c.call(&["GET", "l"]), bulk("b"), "{release:?}");
            // When the server granted it, by its own clock: the new holder's lease of 30 s
            // started then.
            let waited_ms = granted_at_ms(&mut c, "l", 30_000) - released_ms;
            assert!((0..1000).contains(&waited_ms), "{release:?}: granted {waited_ms} ms after the release");
            assert_eq!(waiting(&mut c), 0);
            c.call(&["DEL", "l"]);
        }
    }

    fn waiters_are_served_in_arrival_order(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.LOCK", "l", "first", "60000"]), ok());
        let mut waiters = Vec::new();
        for i in 0..20 {
            let token = format!("t{i}");
            waiters.push(waiter(&server, &["GOBLIN.BLOCK", "l", &token, "60000", "30"]));
            until_blocked(&mut c, i + 1);
        }
        // A caller that does not wait never jumps the line.
        assert_eq!(c.call(&["GOBLIN.LOCK", "l", "barger", "60000"]), Reply::Nil);
        let mut holder = "first".to_string();
        for (i, w) in waiters.iter_mut().enumerate() {
            assert_eq!(c.call(&["GOBLIN.CAD", "l", &holder]), Reply::Int(1));
            assert_eq!(w.reply_within(LONG), Some(ok()), "waiter {i}");
            holder = format!("t{i}");
            assert_eq!(c.call(&["GET", "l"]), bulk(&holder));
        }
        assert_eq!(waiting(&mut c), 0);
        assert_eq!(info_field(&mut c, "goblin", "goblin_waiting_keys"), "0");
    }

    /// A lock without a lease (0 ms, redis-py's `timeout=None`): the waiter holds it with no
    /// TTL, and no timer hands it on; its release does, and the next one's lease is its own.
    fn a_lock_without_a_lease_waits_for_its_release(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.LOCK", "l", "a", "50"]), ok());
        let mut w = waiter(&server, &["GOBLIN.BLOCK", "l", "b", "0", "10"]);
        until_blocked(&mut c, 1);
        // a's lease runs out: b holds it, for ever.
        assert_eq!(w.reply_within(LONG), Some(ok()));
        assert_eq!(c.call(&["GET", "l"]), bulk("b"));
        assert_eq!(c.call(&["PTTL", "l"]), Reply::Int(-1));
        let mut next = waiter(&server, &["GOBLIN.BLOCK", "l", "c", "30000", "10"]);
        until_blocked(&mut c, 1);
        assert_eq!(next.reply_within(Duration::from_millis(500)), None, "handed on with no release");
        assert_eq!(c.call(&["GOBLIN.CAD", "l", "b"]), Reply::Int(1));
        assert_eq!(next.reply_within(LONG), Some(ok()));
        let pttl = c.call(&["PTTL", "l"]).int();
        assert!((29_000..=30_000).contains(&pttl), "{pttl}");
        assert_eq!(waiting(&mut c), 0);
    }

    fn a_timeout_replies_nil_and_leaves_the_line(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["GOBLIN.LOCK", "l", "a", "60000"]);
        let started = Instant::now();
        let mut w = waiter(&server, &["GOBLIN.BLOCK", "l", "b", "1000", "0.3"]);
        assert_eq!(w.reply_within(LONG), Some(Reply::Nil));
        assert!(started.elapsed() >= Duration::from_millis(300), "{:?}", started.elapsed());
        assert_eq!(waiting(&mut c), 0);
        // Released after the timeout: nobody takes it.
        assert_eq!(c.call(&["GOBLIN.CAD", "l", "a"]), Reply::Int(1));
        assert_eq!(c.call(&["EXISTS", "l"]), Reply::Int(0));
        // The timeout is BLPOP's: seconds, and its errors.
        for (timeout, error) in [
            ("-1", "ERR timeout is negative"),
            ("x", "ERR timeout is not a float or out of range"),
            ("nan", "ERR timeout is not a float or out of range"),
            ("1e300", "ERR timeout is out of range"),
        ] {
            assert_eq!(c.call(&["GOBLIN.BLOCK", "l", "b", "1000", timeout]), Reply::Error(error.into()), "{timeout}");
        }
    }

    fn client_unblock_and_client_kill_act_as_on_blpop(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["GOBLIN.LOCK", "l", "a", "60000"]);
        let mut ids = Vec::new();
        let mut waiters: Vec<Conn> = (0..3)
            .map(|i| {
                let mut w = server.conn();
                ids.push(w.call(&["CLIENT", "ID"]).int().to_string());
                w.send(&["GOBLIN.BLOCK", "l", &format!("t{i}"), "60000", "0"]).unwrap();
                until_blocked(&mut c, i + 1);
                w
            })
            .collect();
        assert_eq!(c.call(&["CLIENT", "UNBLOCK", &ids[0], "TIMEOUT"]), Reply::Int(1));
        assert_eq!(waiters[0].reply_within(LONG), Some(Reply::Nil));
        assert_eq!(c.call(&["CLIENT", "UNBLOCK", &ids[1], "ERROR"]), Reply::Int(1));
        match waiters[1].reply_within(LONG) {
            Some(Reply::Error(e)) => assert!(e.starts_with("UNBLOCKED"), "{e}"),
            other => panic!("CLIENT UNBLOCK ERROR gave {other:?}"),
        }
        // The third is killed: its place goes, and nobody gets the lock for it.
        assert_eq!(c.call(&["CLIENT", "KILL", "ID", &ids[2]]), Reply::Int(1));
        assert!(wait_until(LONG, || waiting(&mut c) == 0));
        assert_eq!(c.call(&["GOBLIN.CAD", "l", "a"]), Reply::Int(1));
        assert_eq!(c.call(&["EXISTS", "l"]), Reply::Int(0), "a grant to a dead client");
        // The ones unblocked can call again.
        assert_eq!(waiters[0].call(&["GOBLIN.LOCK", "l", "t0", "1000"]), ok());
    }

    /// As BLPOP: no blocking inside MULTI, a script or a function, where the command answers
    /// at once.
    fn inside_multi_and_scripts_it_answers_at_once(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["GOBLIN.LOCK", "l", "a", "60000"]);
        c.call(&["ZADD", "z", "+inf", "holder"]);
        c.call(&["PEXPIRE", "z", "60000"]);
        let started = Instant::now();
        c.call(&["MULTI"]);
        c.call(&["GOBLIN.BLOCK", "l", "b", "1000", "0"]);
        c.call(&["GOBLIN.BZWINDOW", "z", "10", "1", "m", "0"]);
        c.call(&["GOBLIN.BLOCK", "free", "b", "1000", "0"]);
        assert_eq!(c.call(&["EXEC"]), Reply::Array(vec![Reply::Nil, Reply::Nil, ok()]));
        let script = "return {redis.call('GOBLIN.BLOCK', KEYS[1], 'b', 1000, 0) == false, redis.call('GOBLIN.BZWINDOW', KEYS[2], 10, 1, 'm', 0) == false}";
        assert_eq!(c.call(&["EVAL", script, "2", "l", "z"]), Reply::Array(vec![Reply::Int(1), Reply::Int(1)]));
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(waiting(&mut c), 0);
        assert_eq!(info_field(&mut c, "clients", "blocked_clients"), "0");
    }

    /// A retried acquire (its first reply lost) succeeds: the holder gets its lock again, its
    /// lease starting over; anyone else's token does not.
    fn a_holder_asking_again_gets_the_lock_again(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.LOCK", "l", "a", "1000"]), ok());
        assert_eq!(c.call(&["GOBLIN.BLOCK", "l", "a", "60000", "1"]), ok());
        assert!(c.call(&["PTTL", "l"]).int() > 59_000);
        assert_eq!(c.call(&["GOBLIN.LOCK", "l", "b", "1000"]), Reply::Nil);
        assert_eq!(c.call(&["GET", "l"]), bulk("a"));
    }

    /// A release inside a transaction hands the lock to the waiter at once, so a caller later
    /// in the same transaction does not get it.
    fn a_release_hands_the_lock_over_before_anyone_else_runs(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["GOBLIN.LOCK", "l", "a", "60000"]);
        let mut w = waiter(&server, &["GOBLIN.BLOCK", "l", "b", "60000", "10"]);
        until_blocked(&mut c, 1);
        c.call(&["MULTI"]);
        c.call(&["GOBLIN.CAD", "l", "a"]);
        c.call(&["GOBLIN.LOCK", "l", "barger", "60000"]);
        c.call(&["SET", "l", "barger", "NX", "PX", "60000"]);
        assert_eq!(c.call(&["EXEC"]), Reply::Array(vec![Reply::Int(1), Reply::Nil, Reply::Nil]));
        assert_eq!(w.reply_within(LONG), Some(ok()));
        assert_eq!(c.call(&["GET", "l"]), bulk("b"));
    }

    fn a_permit_waiter_gets_the_slot_however_it_frees(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let frees: &[&[&str]] = &[
            &["GOBLIN.CAD", "s", "holder"],
            &["ZREM", "s", "holder"],
            &["DEL", "s"],
            &["PEXPIRE", "s", "1"],
        ];
        for free in frees {
            assert_eq!(c.call(&["GOBLIN.BZWINDOW", "s", "60", "1", "holder", "1"]), Reply::Int(1));
            let mut w = waiter(&server, &["GOBLIN.BZWINDOW", "s", "60", "1", "next", "10"]);
            until_blocked(&mut c, 1);
            assert!(!c.call(free).is_error(), "{free:?}");
            assert_eq!(w.reply_within(LONG), Some(Reply::Int(1)), "{free:?}");
            let members = c.call(&["ZRANGE", "s", "0", "-1"]).texts();
            assert_eq!(members, ["next"], "{free:?}");
            assert_eq!(waiting(&mut c), 0);
            c.call(&["DEL", "s"]);
        }
        // The holder's lease ages out of the window: its grant is moved back (a ZADD, once the
        // waiter is in line) so that it leaves the 60 s window 300 ms from now, and the waiter
        // is let in by a timer at that deadline, on the server's clock, not by polling.
        assert_eq!(c.call(&["GOBLIN.BZWINDOW", "s", "60", "1", "holder", "1"]), Reply::Int(1));
        let mut w = waiter(&server, &["GOBLIN.BZWINDOW", "s", "60", "1", "next", "10"]);
        until_blocked(&mut c, 1);
        let granted = (server_ms(&mut c) - 59_700) as f64 / 1000.0;
        assert_eq!(c.call(&["ZADD", "s", "XX", &granted.to_string(), "holder"]), Reply::Int(0));
        let deadline_ms = score_ms(&mut c, "s", "holder") + 60_000;
        assert_eq!(w.reply_within(LONG), Some(Reply::Int(1)));
        let late_ms = score_ms(&mut c, "s", "next") - deadline_ms;
        assert!((0..1000).contains(&late_ms), "let in {late_ms} ms after the holder's deadline");
        assert_eq!(c.call(&["ZRANGE", "s", "0", "-1"]).texts(), ["next"]);
        assert_eq!(waiting(&mut c), 0);
    }

    /// A semaphore of 3: six waiters get the permits in arrival order as holders give theirs
    /// back, and a newcomer calling GOBLIN.ZWINDOW with their limit does not pass them.
    fn permits_go_in_arrival_order(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for h in ["h0", "h1", "h2"] {
            assert_eq!(c.call(&["GOBLIN.ZWINDOW", "sem", "*", "60", "3", h]), Reply::Int(1));
        }
        let mut waiters = Vec::new();
        for i in 0..6 {
            let member = format!("w{i}");
            waiters.push(waiter(&server, &["GOBLIN.BZWINDOW", "sem", "60", "3", &member, "30"]));
            until_blocked(&mut c, i + 1);
        }
        assert_eq!(c.call(&["GOBLIN.CAD", "sem", "h1"]), Reply::Int(1));
        assert_eq!(waiters[0].reply_within(LONG), Some(Reply::Int(1)));
        assert_eq!(waiters[1].reply_within(QUICK), None, "one permit freed, one served");
        // A newcomer that does not wait, and a renewal of a holder, while the line waits.
        assert_eq!(c.call(&["GOBLIN.CAD", "sem", "h2"]), Reply::Int(1));
        assert_eq!(waiters[1].reply_within(LONG), Some(Reply::Int(1)));
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "sem", "*", "60", "3", "h0"]), Reply::Int(1), "a holder renews");
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "sem", "*", "60", "3", "newcomer"]), Reply::Int(0), "the line goes first");
        // One who asks for more room than the waiters do is measured against its own limit:
        // the waiters' requests, which the window cannot satisfy, hold nobody back.
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "sem", "*", "60", "9", "bigger"]), Reply::Int(1));
        assert_eq!(c.call(&["GOBLIN.CAD", "sem", "bigger"]), Reply::Int(1));
        assert_eq!(waiters[2].reply_within(QUICK), None, "the window is full for them again");
        for (i, w) in waiters.iter_mut().enumerate().skip(2) {
            let holder = c.call(&["ZRANGE", "sem", "0", "0"]).texts().remove(0);
            assert_eq!(c.call(&["GOBLIN.CAD", "sem", &holder]), Reply::Int(1));
            assert_eq!(w.reply_within(LONG), Some(Reply::Int(1)), "waiter {i}");
        }
        assert_eq!(waiting(&mut c), 0);
        let mut members = c.call(&["ZRANGE", "sem", "0", "-1"]).texts();
        members.sort();
        assert_eq!(members, ["w3", "w4", "w5"]);
    }

    /// GOBLIN.EXTEND adds to, or replaces, its own lock's lease; and the next waiter's turn
    /// moves with it.
    fn an_extended_lease_moves_the_next_turn(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["GOBLIN.LOCK", "l", "a", "60000"]);
        let mut w = waiter(&server, &["GOBLIN.BLOCK", "l", "b", "1000", "10"]);
        until_blocked(&mut c, 1);
        // Once the waiter is in line, in one transaction: the lease is cut to end in 300 ms,
        // then extended by 700 (the line's timer set at the first, moved by the second).
        c.call(&["MULTI"]);
        c.call(&["PEXPIRE", "l", "300"]);
        c.call(&["GOBLIN.EXTEND", "l", "a", "700"]);
        c.call(&["PEXPIRETIME", "l"]);
        let replies = c.call(&["EXEC"]).array().to_vec();
        assert_eq!(replies[..2], [Reply::Int(1), Reply::Int(1)]);
        let extended_ms = replies[2].int();
        assert_eq!(w.reply_within(LONG), Some(ok()));
        assert_eq!(c.call(&["GET", "l"]), bulk("b"));
        // Not at the old expiry: at the new one, on the server's clock.
        let late_ms = granted_at_ms(&mut c, "l", 1000) - extended_ms;
        assert!((0..1000).contains(&late_ms), "granted {late_ms} ms after the extended expiry");
        // And shortened, with REPLACE: the turn comes sooner.
        c.call(&["GOBLIN.LOCK", "m", "a", "60000"]);
        let mut w = waiter(&server, &["GOBLIN.BLOCK", "m", "b", "1000", "10"]);
        until_blocked(&mut c, 1);
        assert_eq!(c.call(&["GOBLIN.EXTEND", "m", "a", "300", "REPLACE"]), Reply::Int(1));
        let replaced_ms = c.call(&["PEXPIRETIME", "m"]).int();
        assert_eq!(w.reply_within(LONG), Some(ok()));
        let late_ms = granted_at_ms(&mut c, "m", 1000) - replaced_ms;
        assert!((0..1000).contains(&late_ms), "granted {late_ms} ms after the replaced expiry");
    }
}

on_every_server! {
    /// A writable replica (replica-read-only no) answers at once: a grant there could never
    /// reach the primary. And a failover with waiters parked on the old primary: each gets the
    /// error native blocking commands get after a role change, and none holds the lock.
    fn replicas_answer_at_once_and_a_failover_unblocks_with_an_error(flavor: Flavor) {
        // Both load the module, as a promoted replica must; replica mode (a replica without
        // the module) would not let the test change their roles.
        let primary = Server::builder(flavor).without_replica().start();
        let replica = Server::builder(flavor).without_replica().start();
        replica.follow(&primary);
        let mut p = primary.conn();
        let mut r = replica.conn();
        p.call(&["GOBLIN.LOCK", "l", "holder", "60000"]);
        assert!(wait_until(LONG, || r.call(&["GET", "l"]) == bulk("holder")));
        r.call(&["CONFIG", "SET", "replica-read-only", "no"]);
        let started = Instant::now();
        assert_eq!(r.call(&["GOBLIN.BLOCK", "l", "b", "1000", "0"]), Reply::Nil);
        assert_eq!(r.call(&["GOBLIN.BZWINDOW", "s", "60", "0", "m", "0"]), Reply::Nil);
        assert!(started.elapsed() < Duration::from_secs(2));
        r.call(&["CONFIG", "SET", "replica-read-only", "yes"]);

        let mut waiters: Vec<Conn> = (0..3)
            .map(|i| {
                let w = waiter(&primary, &["GOBLIN.BLOCK", "l", &format!("w{i}"), "60000", "0"]);
                until_blocked(&mut p, i + 1);
                w
            })
            .collect();
        // The failover: the replica becomes the primary, the old primary its replica.
        r.call(&["REPLICAOF", "NO", "ONE"]);
        p.call(&["REPLICAOF", "127.0.0.1", &replica.port.to_string()]);
        for (i, w) in waiters.iter_mut().enumerate() {
            match w.reply_within(LONG) {
                Some(Reply::Error(e)) => assert!(e.starts_with("UNBLOCKED"), "waiter {i}: {e}"),
                other => panic!("waiter {i}: {other:?}"),
            }
        }
        assert_eq!(r.call(&["GET", "l"]), bulk("holder"), "nobody else holds it");
        assert!(wait_until(LONG, || waiting(&mut p) == 0));
    }
}

on_every_server! {
    /// A grant is a write like any other: the replica (without the module) and the AOF get the
    /// core commands it stands for (SET PXAT for a lock, ZADD and PEXPIREAT for a slot), never
    /// a GOBLIN command, and the replica ends identical, TTLs to the millisecond.
    fn grants_reach_the_replica_and_the_aof_as_core_commands(flavor: Flavor) {
        let dir = TempDir::new("waiting-aof");
        let primary = Server::builder(flavor).dir(&dir.0).args(AOF_ALWAYS).start();
        let replica = primary.replica().expect("replica mode");
        let mut p = primary.conn();
        assert_eq!(p.call(&["GOBLIN.LOCK", "l", "a", "60000"]), ok());
        assert_eq!(p.call(&["GOBLIN.BZWINDOW", "s", "60", "1", "a", "0"]), Reply::Int(1));
        let mut lock_waiter = waiter(&primary, &["GOBLIN.BLOCK", "l", "b", "30000", "0"]);
        let mut slot_waiter = waiter(&primary, &["GOBLIN.BZWINDOW", "s", "60", "1", "b", "0"]);
        until_blocked(&mut p, 2);
        assert_eq!(p.call(&["GOBLIN.CAD", "l", "a"]), Reply::Int(1));
        assert_eq!(p.call(&["GOBLIN.CAD", "s", "a"]), Reply::Int(1));
        assert_eq!(lock_waiter.reply_within(LONG), Some(ok()));
        assert_eq!(slot_waiter.reply_within(LONG), Some(Reply::Int(1)));
        assert_eq!(p.call(&["WAIT", "1", "10000"]), Reply::Int(1));
        let mut r = replica.conn();
        assert_eq!(dataset(&mut r), dataset(&mut p));
        assert_eq!(r.call(&["GET", "l"]), bulk("b"));
        assert_eq!(r.call(&["ZRANGE", "s", "0", "-1"]).texts(), ["b"]);
        assert_eq!(replication_errors(&replica.log()), Vec::<String>::new(), "{}", replica.log());

        let aof = aof_text(&dir.0);
        assert!(!aof.to_ascii_lowercase().contains("goblin"), "the AOF names a GOBLIN command");
        let commands = aof_commands(&aof);
        let upper = |command: &Vec<String>| command.iter().map(|w| w.to_ascii_uppercase()).collect::<Vec<_>>();
        assert!(
            commands.iter().map(upper).any(|c| c.len() == 5 && c[0] == "SET" && c[1] == "L" && c[2] == "B" && c[3] == "PXAT"),
            "no SET l b PXAT in the AOF: {commands:?}"
        );
        assert!(
            commands.iter().map(upper).any(|c| c[0] == "ZADD" && c[1] == "S" && c.last().map(String::as_str) == Some("B")),
            "no ZADD s ... b in the AOF: {commands:?}"
        );
    }
}

on_every_server! {
    /// A request that could never be granted never stands in a line (the reproduction
    /// first): a limit of 0 or less, or a window that keeps nothing, is answered at once, and
    /// the callers after it are served as if it had never come.
    fn a_request_that_can_never_be_granted_is_answered_at_once(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for (limit, window) in [("0", "60"), ("-1", "60"), ("-9223372036854775808", "60")] {
            let mut bad = waiter(&server, &["GOBLIN.BZWINDOW", "hol", window, limit, "bad", "0"]);
            assert_eq!(bad.reply_within(LONG), Some(Reply::Nil), "limit {limit}");
            assert_eq!(waiting(&mut c), 0, "limit {limit}");
        }
        let mut good = waiter(&server, &["GOBLIN.BZWINDOW", "hol", "60", "5", "good", "1"]);
        assert_eq!(good.reply_within(LONG), Some(Reply::Int(1)), "the key is empty");
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "hol", "*", "60", "5", "new"]), Reply::Int(1));
        // A window of 0 or less keeps nothing: with the window full (of a member far in the
        // future, on the caller's clock), it is answered at once too.
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "future", "1e12", "60", "1", "f"]), Reply::Int(1));
        for window in ["0", "-5"] {
            let mut short = waiter(&server, &["GOBLIN.BZWINDOW", "future", window, "1", "m", "0"]);
            assert_eq!(short.reply_within(LONG), Some(Reply::Nil), "window {window}");
        }
        // A holder still renews with any limit, as GOBLIN.ZWINDOW's holders do.
        assert_eq!(c.call(&["GOBLIN.BZWINDOW", "hol", "60", "0", "good", "1"]), Reply::Int(1));
        assert_eq!(waiting(&mut c), 0);
        assert_eq!(info_field(&mut c, "goblin", "goblin_waiting_keys"), "0");
    }

    /// A waiter whose limit the window cannot satisfy holds back neither the waiters after it
    /// nor the callers that do not wait: each is measured against its own limit (the issue's
    /// second reproduction: limits 1 and 5).
    fn a_smaller_limit_at_the_head_holds_back_nobody(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for h in ["h0", "h1", "h2"] {
            assert_eq!(c.call(&["GOBLIN.ZWINDOW", "hol", "*", "60", "5", h]), Reply::Int(1));
        }
        let mut small = waiter(&server, &["GOBLIN.BZWINDOW", "hol", "60", "1", "small", "0"]);
        until_blocked(&mut c, 1);
        let mut big = waiter(&server, &["GOBLIN.BZWINDOW", "hol", "60", "5", "big", "1"]);
        assert_eq!(big.reply_within(LONG), Some(Reply::Int(1)), "3 of 5 taken: room");
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "hol", "*", "60", "5", "plain"]), Reply::Int(1));
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "hol", "*", "60", "1", "another"]), Reply::Int(0), "after small");
        assert_eq!(small.reply_within(QUICK), None);
        // Its turn comes when its own limit has room: the window empty.
        for member in ["h0", "h1", "h2", "big"] {
            assert_eq!(c.call(&["GOBLIN.CAD", "hol", member]), Reply::Int(1));
        }
        assert_eq!(small.reply_within(QUICK), None, "plain still holds its slot");
        assert_eq!(c.call(&["GOBLIN.CAD", "hol", "plain"]), Reply::Int(1));
        assert_eq!(small.reply_within(LONG), Some(Reply::Int(1)));
        assert_eq!(c.call(&["ZRANGE", "hol", "0", "-1"]).texts(), ["small"]);
        assert_eq!(waiting(&mut c), 0);
    }

    /// Waiters with different limits: in arrival order, each under its own limit; one that
    /// does not fit is passed over, and those who ask as it does wait behind it.
    fn waiters_with_different_limits_go_in_order_each_under_its_own(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for h in ["h0", "h1", "h2"] {
            assert_eq!(c.call(&["GOBLIN.ZWINDOW", "s", "*", "60", "3", h]), Reply::Int(1));
        }
        let mut w1 = waiter(&server, &["GOBLIN.BZWINDOW", "s", "60", "3", "w1", "30"]);
        until_blocked(&mut c, 1);
        let mut w2 = waiter(&server, &["GOBLIN.BZWINDOW", "s", "60", "4", "w2", "30"]);
        assert_eq!(w2.reply_within(LONG), Some(Reply::Int(1)), "3 < 4: at once");
        let mut w3 = waiter(&server, &["GOBLIN.BZWINDOW", "s", "60", "4", "w3", "30"]);
        until_blocked(&mut c, 2);
        let mut w4 = waiter(&server, &["GOBLIN.BZWINDOW", "s", "60", "3", "w4", "30"]);
        until_blocked(&mut c, 3);
        // 4 in the window. One goes: 3 fit under w3's 4, not under w1's 3. w3 passes w1.
        assert_eq!(c.call(&["GOBLIN.CAD", "s", "h0"]), Reply::Int(1));
        assert_eq!(w3.reply_within(LONG), Some(Reply::Int(1)));
        assert_eq!(w1.reply_within(QUICK), None);
        // Two go: 2 fit under 3. w1 first, then the window is full for w4, who came after.
        assert_eq!(c.call(&["GOBLIN.CAD", "s", "h1"]), Reply::Int(1));
        assert_eq!(c.call(&["GOBLIN.CAD", "s", "h2"]), Reply::Int(1));
        assert_eq!(w1.reply_within(LONG), Some(Reply::Int(1)));
        assert_eq!(w4.reply_within(QUICK), None);
        assert_eq!(c.call(&["GOBLIN.CAD", "s", "w2"]), Reply::Int(1));
        assert_eq!(w4.reply_within(LONG), Some(Reply::Int(1)));
        let mut members = c.call(&["ZRANGE", "s", "0", "-1"]).texts();
        members.sort();
        assert_eq!(members, ["w1", "w3", "w4"]);
        assert_eq!(waiting(&mut c), 0);
    }

    /// A waiter whose turn comes while the server is out of memory gets the server's own
    /// out-of-memory error, as a blocked command of the server's is answered when it is served
    /// then (Redis 7.2+ and Valkey run it again, and refuse it): nothing is written for it,
    /// and it leaves the line. A lock freed by its release or by its expiry, and a lease.
    fn a_turn_that_comes_out_of_memory_gets_the_servers_error(flavor: Flavor) {
        let server = Server::builder(flavor).args(["--maxmemory-policy", "noeviction"]).start();
        let mut c = server.conn();
        let fill = |c: &mut Conn, on: bool| {
            let limit = if on { "1" } else { "0" };
            assert_eq!(c.call(&["CONFIG", "SET", "maxmemory", limit]), ok());
        };
        // The server's own words for a write it refuses.
        fill(&mut c, true);
        let oom = c.call(&["SET", "probe", "x"]);
        assert!(matches!(&oom, Reply::Error(text) if text.starts_with("OOM ")), "{oom:?}");
        fill(&mut c, false);
        let frees: &[(&str, &[&str])] = &[
            ("l", &["GOBLIN.CAD", "l", "a"]),
            ("l", &["PEXPIRE", "l", "50"]),
            ("s", &["GOBLIN.CAD", "s", "a"]),
        ];
        for (key, free) in frees {
            let mut waiters = Vec::new();
            if *key == "l" {
                assert_eq!(c.call(&["GOBLIN.LOCK", "l", "a", "60000"]), ok());
                for token in ["b", "c"] {
                    waiters.push(waiter(&server, &["GOBLIN.BLOCK", "l", token, "30000", "10"]));
                }
            } else {
                assert_eq!(c.call(&["GOBLIN.ZWINDOW", "s", "*", "60", "1", "a"]), Reply::Int(1));
                for member in ["b", "c"] {
                    waiters.push(waiter(&server, &["GOBLIN.BZWINDOW", "s", "60", "1", member, "10"]));
                }
            }
            until_blocked(&mut c, 2);
            fill(&mut c, true);
            // A release runs at maxmemory, as DEL does; the expiry's PEXPIRE is refused, so
            // that one is armed first and the server fills after.
            let reply = c.call(free);
            assert!(!reply.is_error(), "{free:?}: {reply:?}");
            for w in &mut waiters {
                assert_eq!(w.reply_within(LONG), Some(oom.clone()), "{free:?}");
            }
            assert_eq!(waiting(&mut c), 0, "{free:?}");
            fill(&mut c, false);
            assert!(wait_until(LONG, || c.call(&["EXISTS", key]) == Reply::Int(0)), "{free:?}: nothing written");
            c.call(&["DEL", key]);
        }
        // With memory again, the next turn is a grant.
        assert_eq!(c.call(&["GOBLIN.LOCK", "l", "a", "60000"]), ok());
        let mut w = waiter(&server, &["GOBLIN.BLOCK", "l", "b", "30000", "10"]);
        until_blocked(&mut c, 1);
        assert_eq!(c.call(&["GOBLIN.CAD", "l", "a"]), Reply::Int(1));
        assert_eq!(w.reply_within(LONG), Some(ok()));
    }
}

on_every_server! {
    /// Several permits at once (`PERMITS n`), all or nothing, waited for in line: each waiter
    /// under its own request, a larger one passed over while it does not fit, and granted the
    /// moment the window has room for all of it; given back in one GOBLIN.CAD.
    fn several_permits_are_waited_for_all_or_nothing(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for h in ["h0", "h1"] {
            assert_eq!(c.call(&["GOBLIN.ZWINDOW", "sem", "*", "60", "4", h]), Reply::Int(1));
        }
        let mut three = waiter(&server, &["GOBLIN.BZWINDOW", "sem", "60", "4", "three", "30", "PERMITS", "3"]);
        until_blocked(&mut c, 1);
        let mut one = waiter(&server, &["GOBLIN.BZWINDOW", "sem", "60", "4", "one", "30"]);
        assert_eq!(one.reply_within(LONG), Some(Reply::Int(1)), "2 + 1 of 4: at once");
        assert_eq!(c.call(&["GOBLIN.CAD", "sem", "h0"]), Reply::Int(1));
        assert_eq!(three.reply_within(QUICK), None, "2 + 3 > 4");
        assert_eq!(c.call(&["GOBLIN.CAD", "sem", "h1"]), Reply::Int(1));
        assert_eq!(three.reply_within(LONG), Some(Reply::Int(1)));
        assert_eq!(c.call(&["ZCARD", "sem"]).int(), 4);
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "sem", "*", "60", "4", "three", "PERMITS", "3", "XX"]), Reply::Int(1), "renewed, all three");
        let mut two = waiter(&server, &["GOBLIN.BZWINDOW", "sem", "60", "4", "two", "30", "PERMITS", "2"]);
        until_blocked(&mut c, 1);
        assert_eq!(c.call(&["GOBLIN.CAD", "sem", "three", "PERMITS", "3"]), Reply::Int(1));
        assert_eq!(two.reply_within(LONG), Some(Reply::Int(1)));
        let mut members = c.call(&["ZRANGE", "sem", "0", "-1"]).texts();
        members.sort();
        assert_eq!(members, ["one", "two", "two\u{0}1"]);
        // More permits than the limit: answered at once, never in line.
        let mut too_many = waiter(&server, &["GOBLIN.BZWINDOW", "sem", "60", "4", "five", "0", "PERMITS", "5"]);
        assert_eq!(too_many.reply_within(LONG), Some(Reply::Nil));
        assert_eq!(waiting(&mut c), 0);
    }
}

on_every_server! {
    /// `SEPARATOR sep`: a waiter's slots are named `member` `sep` 0, 1, ... (redis-semaphore's
    /// names) when granted in line, renewed by that name and given back by GOBLIN.CAD with it.
    fn a_waiters_permits_take_the_separators_names(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for h in ["h0", "h1"] {
            assert_eq!(c.call(&["GOBLIN.ZWINDOW", "sep", "*", "60", "2", h]), Reply::Int(1));
        }
        let mut w = waiter(&server, &["GOBLIN.BZWINDOW", "sep", "60", "2", "w", "30", "PERMITS", "2", "SEPARATOR", "_"]);
        until_blocked(&mut c, 1);
        assert_eq!(c.call(&["GOBLIN.CAD", "sep", "h0"]), Reply::Int(1));
        assert_eq!(w.reply_within(QUICK), None, "1 + 2 > 2");
        assert_eq!(c.call(&["GOBLIN.CAD", "sep", "h1"]), Reply::Int(1));
        assert_eq!(w.reply_within(LONG), Some(Reply::Int(1)));
        let mut members = c.call(&["ZRANGE", "sep", "0", "-1"]).texts();
        members.sort();
        assert_eq!(members, ["w_0", "w_1"]);
        let renew = ["GOBLIN.ZWINDOW", "sep", "*", "60", "2", "w", "PERMITS", "2", "SEPARATOR", "_", "XX"];
        assert_eq!(c.call(&renew), Reply::Int(1), "the holder is known by its named slots");
        assert_eq!(c.call(&["GOBLIN.CAD", "sep", "w", "PERMITS", "2"]), Reply::Int(0), "no slot named w");
        assert_eq!(c.call(&["GOBLIN.CAD", "sep", "w", "PERMITS", "2", "SEPARATOR", "_"]), Reply::Int(1));
        assert_eq!(c.call(&["EXISTS", "sep"]).int(), 0);
    }
}
