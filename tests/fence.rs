//! Fencing tokens (`FENCE` on GOBLIN.LOCK, GOBLIN.BLOCK, GOBLIN.EXTEND, GOBLIN.ZWINDOW and
//! GOBLIN.BZWINDOW): each grant's token is larger than every earlier grant's of the key, across
//! waiters, renewals, a restart from the RDB or the AOF, and failovers that lost the latest
//! grants; a holder keeps its own; the clock-skew bound it rests on, at the boundary; and the
//! scenario fencing exists for, a holder paused past its lease and refused by the resource.

mod common;
use common::cluster::Cluster;
use common::*;
use goblin_testkit::fenced::FencedStore;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const NO_SLOT_TAG: &str =
    "ERR FENCE needs a key whose cluster slot another key can share: give it a hash tag";
const CLOCK_BEHIND: &str = "ERR FENCE: this server's clock is behind a fencing token it holds by more than fence-margin-ms; it cannot mint a larger one it could prove (check the clocks)";

/// `GOBLIN.LOCK key holder ms FENCE`: the grant's token, or `None` while another holds it.
fn lock(c: &mut Conn, key: &str, holder: &str, ms: &str) -> Option<i64> {
    match c.call(&["GOBLIN.LOCK", key, holder, ms, "FENCE"]) {
        Reply::Int(token) => Some(token),
        Reply::Nil => None,
        other => panic!("GOBLIN.LOCK {key} {holder} FENCE: {other:?}"),
    }
}

/// `GOBLIN.ZWINDOW key * 60 limit member FENCE`: the grant's token, or `None` when refused.
fn lease(c: &mut Conn, key: &str, limit: &str, member: &str) -> Option<i64> {
    match c.call(&["GOBLIN.ZWINDOW", key, "*", "60", limit, member, "FENCE"]) {
        Reply::Int(0) => None,
        Reply::Int(token) => Some(token),
        other => panic!("GOBLIN.ZWINDOW {key} {member} FENCE: {other:?}"),
    }
}

/// The key a token is kept in: the lock's or lease's own, or a lease holder's.
fn token_key(key: &str, member: Option<&str>) -> Vec<u8> {
    let mut name = format!("{{{key}}}\0goblin:fence\0{key}").into_bytes();
    if let Some(member) = member {
        name.push(0);
        name.extend_from_slice(member.as_bytes());
    }
    name
}

fn get(c: &mut Conn, key: &[u8]) -> Reply {
    c.call(&[&b"GET"[..], key])
}

fn pexpiretime(c: &mut Conn, key: &[u8]) -> i64 {
    c.call(&[&b"PEXPIRETIME"[..], key]).int()
}

/// The server's clock in microseconds.
fn server_us(c: &mut Conn) -> i64 {
    let time = c.call(&["TIME"]);
    let fields = time.array();
    fields[0].text().parse::<i64>().unwrap() * 1_000_000 + fields[1].text().parse::<i64>().unwrap()
}

on_every_server! {
    fn a_token_grows_with_every_grant_and_a_holder_keeps_its_own(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let before = server_us(&mut c);
        let first = lock(&mut c, "lk", "a", "10000").expect("a free lock");
        // The clock, a margin ahead at the server's start: never behind it.
        assert!(first > before, "{first} <= {before}");
        // The holder again, its extends (options in either order): its own token.
        assert_eq!(lock(&mut c, "lk", "a", "10000"), Some(first));
        assert_eq!(c.call(&["GOBLIN.EXTEND", "lk", "a", "5000", "FENCE"]), Reply::Int(first));
        assert_eq!(c.call(&["GOBLIN.EXTEND", "lk", "a", "20000", "REPLACE", "FENCE"]), Reply::Int(first));
        assert_eq!(c.call(&["GOBLIN.EXTEND", "lk", "a", "20000", "FENCE", "REPLACE"]), Reply::Int(first));
        assert_eq!(c.call(&["GOBLIN.EXTEND", "lk", "nobody", "5000", "FENCE"]), Reply::Int(0));
        assert_eq!(lock(&mut c, "lk", "b", "10000"), None);
        // Kept beside the lock as long as the lock: the token, then the holder it was for.
        let kept = token_key("lk", None);
        assert_eq!(get(&mut c, &kept), bulk(&format!("{first}\0a")));
        assert_eq!(pexpiretime(&mut c, &kept), pexpiretime(&mut c, b"lk"));

        // Released: the token stays until its lease ends, and the next grant mints above it.
        assert_eq!(cad(&mut c, "lk", "a"), Reply::Int(1));
        assert_eq!(get(&mut c, &kept), bulk(&format!("{first}\0a")));
        let second = lock(&mut c, "lk", "b", "10000").expect("released");
        assert!(second > first);
        // A holder that took the lock without FENCE gets a token of its own when it asks, not
        // the one kept for the holder before it.
        assert_eq!(cad(&mut c, "lk", "b"), Reply::Int(1));
        assert_eq!(c.call(&["GOBLIN.LOCK", "lk", "c", "10000"]), Reply::Status("OK".into()));
        let third = lock(&mut c, "lk", "c", "10000").expect("its own lock");
        assert!(third > second);
        assert_eq!(c.call(&["GOBLIN.EXTEND", "lk", "c", "10000", "FENCE"]), Reply::Int(third));

        // Leases: each holder its own token, kept by its renewals, larger than every earlier
        // grant's; tokens grow across keys too (one sequence per server).
        let one = lease(&mut c, "sem", "2", "m1").expect("a free slot");
        assert!(one > third);
        assert_eq!(lease(&mut c, "sem", "2", "m1"), Some(one));
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "sem", "*", "60", "2", "m1", "XX", "FENCE"]), Reply::Int(one));
        let two = lease(&mut c, "sem", "2", "m2").expect("the second slot");
        assert!(two > one);
        assert_eq!(lease(&mut c, "sem", "2", "m3"), None);
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "sem", "*", "60", "2", "m3", "XX", "FENCE"]), Reply::Int(0));
        assert_eq!(get(&mut c, &token_key("sem", Some("m1"))), bulk(&one.to_string()));
        assert_eq!(get(&mut c, &token_key("sem", None)), bulk(&two.to_string()));
        // A holder that gives its lease back takes its token with it.
        assert_eq!(cad(&mut c, "sem", "m1"), Reply::Int(1));
        assert_eq!(get(&mut c, &token_key("sem", Some("m1"))), Reply::Nil);
        let three = lease(&mut c, "sem", "2", "m3").expect("the slot m1 gave back");
        assert!(three > two);
        // Several permits at once: one token for the holder of all of them.
        let permits = c.call(&["GOBLIN.ZWINDOW", "multi", "*", "60", "3", "h", "PERMITS", "2", "FENCE"]).int();
        assert!(permits > three);
        assert_eq!(
            c.call(&["GOBLIN.ZWINDOW", "multi", "*", "60", "3", "h", "FENCE", "PERMITS", "2"]),
            Reply::Int(permits)
        );
        assert_eq!(
            c.call(&["GOBLIN.CAD", "multi", "h", "PERMITS", "2"]),
            Reply::Int(1)
        );
        assert_eq!(get(&mut c, &token_key("multi", Some("h"))), Reply::Nil);
        // A window of 0 keeps nothing, token included; the token still counts.
        let dbsize = c.call(&["DBSIZE"]).int();
        let gone = c.call(&["GOBLIN.ZWINDOW", "none", "*", "0", "1", "m", "FENCE"]).int();
        assert!(gone > permits);
        assert_eq!(c.call(&["DBSIZE"]).int(), dbsize);
        assert!(lock(&mut c, "other", "x", "1000").unwrap() > gone);
    }
}

on_every_server! {
    fn without_fence_the_replies_and_the_keys_are_todays(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.LOCK", "lk", "a", "10000"]), Reply::Status("OK".into()));
        assert_eq!(c.call(&["GOBLIN.EXTEND", "lk", "a", "10000"]), Reply::Int(1));
        assert_eq!(cad(&mut c, "lk", "a"), Reply::Int(1));
        assert_eq!(c.call(&["GOBLIN.BLOCK", "lk", "a", "10000", "1"]), Reply::Status("OK".into()));
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "sem", "*", "60", "2", "m"]), Reply::Int(1));
        assert_eq!(c.call(&["GOBLIN.BZWINDOW", "sem", "60", "2", "n", "1"]), Reply::Int(1));
        let mut keys = c.call(&["KEYS", "*"]).texts();
        keys.sort();
        assert_eq!(keys, ["lk", "sem"]);
    }
}

on_every_server! {
    fn waiters_in_line_get_larger_tokens_in_their_order(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let held = lock(&mut c, "lk", "a", "10000").unwrap();
        let mut b = server.conn();
        b.send(&["GOBLIN.BLOCK", "lk", "b", "10000", "10", "FENCE"]).unwrap();
        assert!(wait_until(Duration::from_secs(5), || info_field(&mut c, "goblin", "goblin_waiting") == "1"));
        let mut plain = server.conn();
        plain.send(&["GOBLIN.BLOCK", "lk", "p", "10000", "10"]).unwrap();
        assert!(wait_until(Duration::from_secs(5), || info_field(&mut c, "goblin", "goblin_waiting") == "2"));
        let mut d = server.conn();
        d.send(&["GOBLIN.BLOCK", "lk", "d", "10000", "10", "FENCE"]).unwrap();
        assert!(wait_until(Duration::from_secs(5), || info_field(&mut c, "goblin", "goblin_waiting") == "3"));

        assert_eq!(cad(&mut c, "lk", "a"), Reply::Int(1));
        let to_b = b.read().unwrap().int();
        assert!(to_b > held);
        assert_eq!(get(&mut c, &token_key("lk", None)), bulk(&format!("{to_b}\0b")));
        assert_eq!(cad(&mut c, "lk", "b"), Reply::Int(1));
        // A waiter that did not ask for a token gets today's reply; the kept token stays b's.
        assert_eq!(plain.read().unwrap(), Reply::Status("OK".into()));
        assert_eq!(cad(&mut c, "lk", "p"), Reply::Int(1));
        let to_d = d.read().unwrap().int();
        assert!(to_d > to_b);

        // Leases and permits, waited for.
        assert!(lease(&mut c, "sem", "2", "h1").is_some());
        let h2 = lease(&mut c, "sem", "2", "h2").unwrap();
        let mut w = server.conn();
        w.send(&["GOBLIN.BZWINDOW", "sem", "60", "2", "w", "10", "PERMITS", "2", "FENCE"]).unwrap();
        assert!(wait_until(Duration::from_secs(5), || info_field(&mut c, "goblin", "goblin_waiting") == "1"));
        assert_eq!(cad(&mut c, "sem", "h1"), Reply::Int(1));
        assert_eq!(w.reply_within(Duration::from_millis(200)), None, "one slot is not two");
        assert_eq!(cad(&mut c, "sem", "h2"), Reply::Int(1));
        let to_w = w.read().unwrap().int();
        assert!(to_w > h2);
        assert_eq!(get(&mut c, &token_key("sem", Some("w"))), bulk(&to_w.to_string()));
        assert_eq!(
            c.call(&["GOBLIN.BZWINDOW", "sem", "60", "2", "w", "1", "PERMITS", "2", "FENCE"]),
            Reply::Int(to_w),
            "the holder, again: its own token"
        );
    }
}

on_every_server! {
    fn a_fenced_call_that_cannot_keep_a_token_writes_nothing(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        // No key of the module's can share the slot of a key with a `}` and no hash tag.
        for args in [
            &["GOBLIN.LOCK", "a}b", "t", "1000", "FENCE"][..],
            &["GOBLIN.BLOCK", "a}b", "t", "1000", "1", "FENCE"],
            &["GOBLIN.EXTEND", "a}b", "t", "1000", "FENCE"],
            &["GOBLIN.ZWINDOW", "a}b", "*", "60", "1", "m", "FENCE"],
            &["GOBLIN.BZWINDOW", "a}b", "60", "1", "m", "1", "FENCE"],
        ] {
            assert_error_writes_nothing(&mut c, args, "a}b", NO_SLOT_TAG);
        }
        // Without FENCE such a key is as good as any; a tag of its own makes room.
        assert_eq!(c.call(&["GOBLIN.LOCK", "a}b", "t", "1000"]), Reply::Status("OK".into()));
        assert!(lock(&mut c, "{x}a}b", "t", "1000").is_some());
        assert_eq!(get(&mut c, b"{x}\0goblin:fence\0{x}a}b").text().split('\0').nth(1), Some("t"));
        // Each option once; FENCE is a lease's, not a counter's; a release takes no FENCE.
        for args in [
            &["GOBLIN.LOCK", "lk", "t", "1000", "FENCE", "FENCE"][..],
            &["GOBLIN.LOCK", "lk", "t", "1000", "FENCE", "x"],
            &["GOBLIN.BLOCK", "lk", "t", "1000", "1", "FENCE", "FENCE"],
            &["GOBLIN.EXTEND", "lk", "t", "1000", "FENCE", "FENCE"],
            &["GOBLIN.EXTEND", "lk", "t", "1000", "REPLACE", "FENCE", "REPLACE"],
            &["GOBLIN.ZWINDOW", "lk", "*", "60", "1", "m", "FENCE", "FENCE"],
            &["GOBLIN.ZWINDOW", "lk", "*", "60", "1", "m", "COST", "1", "FENCE"],
            &["GOBLIN.ZWINDOW", "lk", "*", "60", "1", "m", "FENCE", "COST", "1"],
            &["GOBLIN.BZWINDOW", "lk", "60", "1", "m", "1", "FENCE", "FENCE"],
            &["GOBLIN.CAD", "lk", "t", "FENCE"],
        ] {
            assert_error_writes_nothing(&mut c, args, "lk", SYNTAX);
        }
    }
}

/// A primary that persists to `dir` as `persistence` says, without a replica beside it (the
/// test kills it and restarts it there).
fn persisting(flavor: Flavor, dir: &std::path::Path, persistence: &[&str]) -> Server {
    Server::builder(flavor)
        .dir(dir)
        .args(persistence.iter().copied())
        .without_replica()
        .start()
}

on_every_server! {
    fn tokens_survive_a_restart_from_the_rdb_and_from_the_aof(flavor: Flavor) {
        for (name, persistence) in [
            ("rdb", &["--save", "", "--appendonly", "no"][..]),
            ("aof", &AOF_ALWAYS[..]),
        ] {
            let dir = TempDir::new(&format!("fence-{name}"));
            let mut server = persisting(flavor, &dir.0, persistence);
            let mut c = server.conn();
            let held = lock(&mut c, "lk", "a", "60000").unwrap();
            let leased = lease(&mut c, "sem", "2", "m").unwrap();
            let mut largest = leased;
            for i in 0..50 {
                largest = lock(&mut c, &format!("lk:{i}"), "h", "60000").unwrap();
            }
            if name == "rdb" {
                assert_eq!(c.call(&["SAVE"]), Reply::Status("OK".into()));
            }
            drop(c);
            server.kill();
            let server = persisting(flavor, &dir.0, persistence);
            let mut c = server.conn();
            // The holders kept their tokens; new grants mint above everything handed out.
            assert_eq!(lock(&mut c, "lk", "a", "60000"), Some(held), "{name}");
            assert_eq!(lease(&mut c, "sem", "2", "m"), Some(leased), "{name}");
            let next = lock(&mut c, "new", "h", "60000").unwrap();
            assert!(next > largest, "{name}: {next} <= {largest}");
            assert_eq!(cad(&mut c, "lk", "a"), Reply::Int(1));
            assert!(lock(&mut c, "lk", "b", "60000").unwrap() > next, "{name}");
        }
    }
}

/// A primary and a replica, both with the module (either may mint after a failover), on this
/// server's binary, with these module arguments each.
fn fenced_pair(flavor: Flavor, primary_args: &[&str], replica_args: &[&str]) -> (Server, Server) {
    // Neither has a replica of replica mode: the test kills the primary and promotes the other.
    // A replica whose clock is shifted runs the module's test build (`fence-clock-offset-ms`).
    let primary = Server::builder(flavor)
        .module_args(primary_args.iter().copied())
        .args(["--repl-diskless-sync-delay", "0"])
        .without_replica()
        .start();
    let mut replica = Server::builder(flavor)
        .module_args(replica_args.iter().copied())
        .without_replica();
    if replica_args.contains(&"fence-clock-offset-ms") {
        replica = replica.test_build();
    }
    let replica = replica.start();
    replica.follow(&primary);
    (primary, replica)
}

fn offset(c: &mut Conn) -> i64 {
    info_field(c, "replication", "master_repl_offset")
        .parse()
        .unwrap()
}

/// The replica gets nothing more from `primary`: its link is cut, and a password it does not
/// have keeps it from coming back. (The primary's own connections stay authenticated.)
fn cut_off_the_replica(p: &mut Conn) {
    assert_eq!(
        p.call(&["CONFIG", "SET", "requirepass", "the-replica-lacks-it"]),
        Reply::Status("OK".into())
    );
    assert!(p.call(&["CLIENT", "KILL", "TYPE", "replica"]).int() >= 1);
}

/// Kills the primary once the replica can no longer get what it wrote since the link was cut,
/// and checks that it did lose it: its offset stops short of the primary's.
fn kill_before_it_replicates(primary: &mut Server, p: &mut Conn, r: &mut Conn) {
    let primary_offset = offset(p);
    primary.kill();
    assert!(wait_until(Duration::from_secs(10), || info_field(
        r,
        "replication",
        "master_link_status"
    ) == "down"));
    let replica_offset: i64 = info_field(r, "replication", "slave_repl_offset")
        .parse()
        .unwrap();
    assert!(
        replica_offset < primary_offset,
        "nothing was lost: {replica_offset} >= {primary_offset}"
    );
}

on_every_server! {
    fn a_failover_that_lost_the_last_grants_still_hands_out_larger_tokens(flavor: Flavor) {
        for round in 0..20 {
            let (mut primary, replica) = fenced_pair(flavor, &[], &[]);
            let (mut p, mut r) = (primary.conn(), replica.conn());
            // Grants that reach the replica: a lock, a semaphore's holders, a renewal.
            let mut largest = lock(&mut p, "lk", "a", "60000").unwrap();
            for member in ["m1", "m2"] {
                largest = largest.max(lease(&mut p, "sem", "3", member).unwrap());
            }
            assert_eq!(p.call(&["WAIT", "1", "5000"]), Reply::Int(1));
            // A burst that never does: the lock handed on, the last slot, new locks.
            cut_off_the_replica(&mut p);
            assert_eq!(cad(&mut p, "lk", "a"), Reply::Int(1));
            let mut lost = vec![lock(&mut p, "lk", "b", "60000").unwrap()];
            lost.push(lease(&mut p, "sem", "3", "m3").unwrap());
            for i in 0..(10 + round) {
                lost.push(lock(&mut p, &format!("lost:{i}"), "h", "60000").unwrap());
            }
            assert!(lost.windows(2).all(|pair| pair[1] > pair[0]), "{lost:?}");
            largest = largest.max(*lost.last().unwrap());
            kill_before_it_replicates(&mut primary, &mut p, &mut r);

            assert_eq!(r.call(&["REPLICAOF", "NO", "ONE"]), Reply::Status("OK".into()));
            // On the promoted replica: the lock as it was replicated (a holds it), and every
            // new grant larger than any handed out before, lost ones included.
            assert_eq!(r.call(&["GET", "lk"]), bulk("a"));
            assert_eq!(cad(&mut r, "lk", "a"), Reply::Int(1));
            let after = [
                lock(&mut r, "lk", "c", "60000").unwrap(),
                lease(&mut r, "sem", "3", "m4").unwrap(),
                lock(&mut r, "lost:0", "h2", "60000").unwrap(),
            ];
            for token in after {
                assert!(token > largest, "round {round}: {token} <= {largest} (after {after:?})");
            }
        }
    }
}

on_every_server! {
    fn the_margin_bounds_the_clock_skew_a_failover_survives(flavor: Flavor) {
        const MARGIN: &str = "300";
        // Within the margin: the replica's clock 200 ms behind the primary's.
        let (mut primary, replica) = fenced_pair(
            flavor,
            &["fence-margin-ms", MARGIN],
            &["fence-margin-ms", MARGIN, "fence-clock-offset-ms", "-200"],
        );
        let (mut p, mut r) = (primary.conn(), replica.conn());
        std::thread::sleep(Duration::from_millis(400)); // the primary mints from its clock
        cut_off_the_replica(&mut p);
        let lost = lock(&mut p, "lk", "a", "60000").unwrap();
        kill_before_it_replicates(&mut primary, &mut p, &mut r);
        assert_eq!(r.call(&["REPLICAOF", "NO", "ONE"]), Reply::Status("OK".into()));
        let after = lock(&mut r, "lk", "b", "60000").unwrap();
        assert!(after > lost, "{after} <= {lost}");

        // Beyond it: 1.5 s behind, with a 300 ms margin.
        let (mut primary, replica) = fenced_pair(
            flavor,
            &["fence-margin-ms", MARGIN],
            &["fence-margin-ms", MARGIN, "fence-clock-offset-ms", "-1500"],
        );
        let (mut p, mut r) = (primary.conn(), replica.conn());
        std::thread::sleep(Duration::from_millis(400));
        let replicated = lock(&mut p, "seen", "a", "60000").unwrap();
        // The token was minted by the primary's clock before this instant: the replica, 1.5 s
        // behind, passes it less the margin 1.2 s after the mint, and not before.
        let seen_at = Instant::now();
        assert_eq!(p.call(&["WAIT", "1", "5000"]), Reply::Int(1));
        cut_off_the_replica(&mut p);
        let lost = lock(&mut p, "lk", "a", "60000").unwrap();
        kill_before_it_replicates(&mut primary, &mut p, &mut r);
        assert_eq!(r.call(&["REPLICAOF", "NO", "ONE"]), Reply::Status("OK".into()));
        // A key whose grants were all lost shows the server nothing: its next token can be
        // smaller than the lost one. This is the assumption the guarantee rests on.
        let unproven = lock(&mut r, "lk", "b", "60000").unwrap();
        assert!(unproven < lost, "a skew beyond the margin went unseen here: {unproven} >= {lost}");
        // A token the server does see, replicated, shows its clock behind: it says so, writes
        // nothing, and refuses every fenced grant until its clock has caught up.
        assert_eq!(cad(&mut r, "seen", "a"), Reply::Int(1));
        assert_error_writes_nothing(&mut r, &["GOBLIN.LOCK", "seen", "b", "60000", "FENCE"], "seen", CLOCK_BEHIND);
        assert_error_writes_nothing(&mut r, &["GOBLIN.LOCK", "other", "b", "60000", "FENCE"], "other", CLOCK_BEHIND);
        assert_error_writes_nothing(
            &mut r,
            &["GOBLIN.ZWINDOW", "sem", "*", "60", "1", "m", "FENCE"],
            "sem",
            CLOCK_BEHIND,
        );
        assert_eq!(info_field(&mut r, "goblin", "goblin_fence_clock_behind"), "3");
        // Unfenced grants go on, and so do fenced ones once the clock passes what was seen.
        assert_eq!(r.call(&["GOBLIN.LOCK", "plain", "b", "60000"]), Reply::Status("OK".into()));
        assert!(wait_until(Duration::from_secs(5), || matches!(
            r.call(&["GOBLIN.LOCK", "seen", "b", "60000", "FENCE"]),
            Reply::Int(token) if token > replicated
        )));
        // Refused until 1.5 s - 300 ms after the mint (less the reply's way back to this test,
        // which a 100 ms allowance covers), however long the failover itself took.
        assert!(
            seen_at.elapsed() > Duration::from_millis(1100),
            "refused for {:?} after the mint only",
            seen_at.elapsed()
        );
    }
}

on_every_server! {
    fn a_holder_paused_past_its_lease_is_refused_by_the_resource(flavor: Flavor) {
        let server = Server::start(flavor);
        let store = FencedStore::start();
        let holder_script = repo_root().join("python/tests/fence_holder.py");
        // The first holder: goblin_redis's Lock in a process of its own, leased for 300 ms,
        // working 200 ms before it writes.
        let mut first = Command::new(venv_tool("venv-locks", "python"))
            .arg(&holder_script)
            .args([&server.port.to_string(), &store.port.to_string(), "lock:report", "0.3", "0.2"])
            .env("PYTHONPATH", repo_root().join("python/src"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("the first holder");
        let mut said = BufReader::new(first.stdout.take().unwrap()).lines();
        let line = said.next().expect("its token").unwrap();
        let stale: i64 = line.strip_prefix("token ").expect(&line).parse().unwrap();
        // Paused (a GC pause, a stalled VM) before it writes, past its lease.
        let signal = |name: &str| {
            let status = Command::new("kill").args([name, &first.id().to_string()]).status().unwrap();
            assert!(status.success());
        };
        signal("-STOP");
        let mut c = server.conn();
        assert!(wait_until(Duration::from_secs(5), || c.call(&["EXISTS", "lock:report"]) == Reply::Int(0)));
        // The next holder takes the lock and writes.
        let fresh = lock(&mut c, "lock:report", "second", "30000").expect("the lease ran out");
        assert!(fresh > stale);
        assert_eq!(store.write(fresh, "written by the second holder"), Ok(()));
        // The first wakes up and writes: refused, and told why.
        signal("-CONT");
        assert_eq!(said.next().unwrap().unwrap(), format!("STALE {fresh}"));
        assert!(first.wait().unwrap().success());
        let writes = store.writes();
        assert_eq!(writes.accepted, [(fresh, "written by the second holder".to_string())]);
        assert_eq!(writes.refused, [(stale, "written by the first holder".to_string())]);
        assert_eq!(c.call(&["GET", "lock:report"]), bulk("second"));
    }
}

on_every_server! {
    fn a_cluster_failover_manual_or_automatic_hands_out_larger_tokens(flavor: Flavor) {
        let mut cluster = Cluster::start(flavor);
        let mut first = cluster.primaries[0].conn();
        // Keys of the first shard, in one slot.
        let tag = (0..)
            .map(|i| format!("{{f{i}}}"))
            .find(|tag| first.call(&["CLUSTER", "KEYSLOT", tag]).int() <= 5460)
            .unwrap();
        let key = |name: &str| format!("{tag}:{name}");
        let held = lock(&mut first, &key("lk"), "a", "60000").unwrap();
        assert_eq!(first.call(&["WAIT", "1", "5000"]), Reply::Int(1));
        let role = |c: &mut Conn| info_field(c, "replication", "role");

        // CLUSTER FAILOVER: the replica catches up with its primary, then takes over.
        let mut second = cluster.replicas[0].conn();
        assert_eq!(second.call(&["CLUSTER", "FAILOVER"]), Reply::Status("OK".into()));
        assert!(wait_until(Duration::from_secs(20), || role(&mut second) == "master"));
        assert_eq!(cad(&mut second, &key("lk"), "a"), Reply::Int(1));
        let mut largest = lock(&mut second, &key("lk"), "b", "60000").unwrap();
        assert!(largest > held);
        assert!(wait_until(Duration::from_secs(20), || {
            first.call(&["INFO", "replication"]).text().contains("master_link_status:up")
        }));

        // The new primary dies before its last grants reach the old one, which the cluster
        // promotes on its own once the node times out.
        cut_off_the_replica(&mut second);
        for i in 0..20 {
            largest = lock(&mut second, &key(&format!("lost:{i}")), "h", "60000").unwrap();
        }
        kill_before_it_replicates(&mut cluster.replicas[0], &mut second, &mut first);
        assert!(
            wait_until(Duration::from_secs(30), || role(&mut first) == "master"),
            "no automatic failover; the log:\n{}",
            cluster.primaries[0].log()
        );
        assert_eq!(first.call(&["EXISTS", &key("lost:0")]), Reply::Int(0), "the grant was lost");
        let after = lock(&mut first, &key("lost:0"), "h2", "60000").unwrap();
        assert!(after > largest, "{after} <= {largest}");
    }
}
