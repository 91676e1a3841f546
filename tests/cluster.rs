//! Goblin on a real cluster: three primaries with a replica each, all loading the module, built
//! by the test with CLUSTER commands. The cluster is the distributed engine; the module only has
//! to behave like a single-key core command inside it.

mod common;
use common::cluster::{node_id, Cluster};
use common::*;
use redis::cluster::ClusterClient;
use std::time::Duration;

fn increx(con: &mut redis::cluster::ClusterConnection, key: &str, seconds: i64) -> i64 {
    redis::cmd("GOBLIN.INCREX")
        .arg(key)
        .arg(seconds)
        .query(con)
        .expect("GOBLIN.INCREX")
}

fn zwindow(
    con: &mut redis::cluster::ClusterConnection,
    key: &str,
    now: f64,
    window: f64,
    limit: i64,
    member: &str,
) -> i64 {
    redis::cmd("GOBLIN.ZWINDOW")
        .arg(key)
        .arg(now)
        .arg(window)
        .arg(limit)
        .arg(member)
        .query(con)
        .expect("GOBLIN.ZWINDOW")
}

/// Keys spread over every primary: the test checks that they really are.
fn keys() -> Vec<String> {
    (0..300).map(|i| format!("rl:user{i}")).collect()
}

on_every_server! {
    fn commands_route_by_key_and_answer_moved_elsewhere(flavor: Flavor) {
        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        let keys = keys();
        for key in &keys {
            assert_eq!(increx(&mut con, &format!("{key}:count"), 100), 1);
            assert_eq!(increx(&mut con, &format!("{key}:count"), 100), 2);
            assert_eq!(zwindow(&mut con, &format!("{key}:window"), 1000.0, 100.0, 2, "a"), 1);
            assert_eq!(zwindow(&mut con, &format!("{key}:window"), 1001.0, 100.0, 2, "b"), 1);
            assert_eq!(zwindow(&mut con, &format!("{key}:window"), 1002.0, 100.0, 2, "c"), 0);
        }
        // Every primary holds some of them, each with its TTL.
        for primary in &cluster.primaries {
            let mut c = primary.conn();
            let held = c.call(&["DBSIZE"]).int();
            assert!(held > 100, "a primary holds only {held} keys");
            let key = c.call(&["RANDOMKEY"]).text();
            let ttl = c.call(&["TTL", &key]).int();
            assert!((99..=100).contains(&ttl), "{key}: TTL {ttl}");
        }
        // A node that does not own the slot redirects, and writes nothing.
        for key in keys.iter().take(20) {
            let slot = cluster.primaries[0].conn().call(&["CLUSTER", "KEYSLOT", key]).int();
            let owner = if slot <= 5460 { 0 } else if slot <= 10922 { 1 } else { 2 };
            let mut wrong = cluster.primaries[(owner + 1) % 3].conn();
            let readers_writer = [
                vec!["GOBLIN.RLOCK", key, "t", "1000", "FENCE"],
                vec!["GOBLIN.BWLOCK", key, "t", "1000", "1"],
                vec!["GOBLIN.RWUNLOCK", key, "t"],
                vec!["GOBLIN.RWHELD", key, "t"],
            ];
            for args in [vec!["GOBLIN.INCREX", key, "10"], vec!["GOBLIN.ZWINDOW", key, "1", "10", "1", "m"]].into_iter().chain(readers_writer) {
                match wrong.call(&args) {
                    Reply::Error(e) => assert!(e.starts_with(&format!("MOVED {slot} 127.0.0.1:")), "{e}"),
                    other => panic!("{args:?} on the wrong node: {other:?}"),
                }
            }
            let keys_in_slot = wrong.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]).int();
            assert_eq!(keys_in_slot, 0);
            assert_eq!(wrong.call(&["COMMAND", "GETKEYS", "GOBLIN.ZWINDOW", key, "1", "2", "3", "m"]).texts(), vec![key.to_string()]);
        }
        // GOBLIN.MGCRA's keys, from its key spec: one hash tag is one slot, served by its
        // owner; elsewhere MOVED; keys of two slots CROSSSLOT, as for any multi-key command.
        for user in 0..20 {
            let (sec, hour) = (format!("{{u{user}}}:sec"), format!("{{u{user}}}:hour"));
            let call = ["GOBLIN.MGCRA", "2", &sec, "9", "10", "1", &hour, "999", "1000", "3600", "TOKENS", "1"];
            let slot = cluster.primaries[0].conn().call(&["CLUSTER", "KEYSLOT", &sec]).int();
            let owner = if slot <= 5460 { 0 } else if slot <= 10922 { 1 } else { 2 };
            let mut owning = cluster.primaries[owner].conn();
            assert_eq!(owning.call(&call).array()[0], Reply::Int(0), "{call:?}");
            assert!(owning.call(&["PTTL", &hour]).int() > 0);
            let mut wrong = cluster.primaries[(owner + 1) % 3].conn();
            match wrong.call(&call) {
                Reply::Error(e) => assert!(e.starts_with(&format!("MOVED {slot} 127.0.0.1:")), "{e}"),
                other => panic!("{call:?} on the wrong node: {other:?}"),
            }
            assert_eq!(wrong.call(&["COMMAND", "GETKEYS"].iter().chain(&call).copied().collect::<Vec<_>>()).texts(), vec![sec.clone(), hour.clone()]);
            let other = format!("{{v{user}}}:day");
            let split = ["GOBLIN.MGCRA", "2", &sec, "9", "10", "1", &other, "9", "10", "1"];
            let other_slot = owning.call(&["CLUSTER", "KEYSLOT", &other]).int();
            if other_slot != slot {
                let reply = owning.call(&split);
                assert!(matches!(&reply, Reply::Error(e) if e.starts_with("CROSSSLOT")), "{reply:?}");
            }
            // GOBLIN.MFWINDOW's, the same way.
            let (fsec, fhour) = (format!("{{u{user}}}:fsec"), format!("{{u{user}}}:fhour"));
            let windows = ["GOBLIN.MFWINDOW", "2", &fsec, "1000", "10", &fhour, "3600000", "1000"];
            assert_eq!(owning.call(&windows).array()[0], Reply::Int(0), "{windows:?}");
            match wrong.call(&windows) {
                Reply::Error(e) => assert!(e.starts_with(&format!("MOVED {slot} 127.0.0.1:")), "{e}"),
                other => panic!("{windows:?} on the wrong node: {other:?}"),
            }
            let getkeys: Vec<&str> = ["COMMAND", "GETKEYS"].iter().chain(&windows).copied().collect();
            assert_eq!(wrong.call(&getkeys).texts(), vec![fsec.clone(), fhour.clone()]);
            if other_slot != slot {
                let split = ["GOBLIN.MFWINDOW", "2", &fsec, "1000", "10", &other, "1000", "10"];
                let reply = owning.call(&split);
                assert!(matches!(&reply, Reply::Error(e) if e.starts_with("CROSSSLOT")), "{reply:?}");
            }
        }
    }
}

on_every_server! {
    fn limits_continue_across_a_failover(flavor: Flavor) {
        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        let keys = keys();
        for key in &keys {
            increx(&mut con, &format!("{key}:count"), 1000);
            zwindow(&mut con, &format!("{key}:lock"), 1000.0, 600.0, 1, "holder");
        }
        for primary in &cluster.primaries {
            assert_eq!(primary.conn().call(&["WAIT", "1", "10000"]), Reply::Int(1));
        }

        // Fail over the first shard while a workload runs on every shard.
        let mut replica = cluster.replicas[0].conn();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let worker = {
            let stop = stop.clone();
            let nodes: Vec<String> = cluster.primaries.iter().map(|s| format!("redis://127.0.0.1:{}/", s.port)).collect();
            std::thread::spawn(move || {
                let mut con = ClusterClient::builder(nodes).retries(50).build().unwrap().get_connection().unwrap();
                // A client may see a transient error while the slot changes hands (the cluster
                // client retries redirections, not every race); what must hold is that calls
                // succeed again at once and that the state afterwards is right.
                let (mut calls, mut transient) = (0, Vec::new());
                let mut failing_since: Option<std::time::Instant> = None;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let reply: redis::RedisResult<i64> =
                        redis::cmd("GOBLIN.INCREX").arg(format!("busy:{}", calls % 50)).arg(1000).query(&mut con);
                    match reply {
                        Ok(n) => {
                            assert!(n >= 1);
                            calls += 1;
                            failing_since = None;
                        }
                        Err(e) => {
                            // The failover's own errors only: a lost or refused connection, a
                            // redirection or a shard down mid-move, a write to the primary
                            // just demoted; never an error reply of the command's.
                            let of_the_failover = e.is_io_error()
                                || e.is_cluster_error()
                                || e.is_connection_refusal()
                                || e.is_connection_dropped()
                                || e.is_timeout()
                                || matches!(
                                    e.kind(),
                                    redis::ErrorKind::ClusterConnectionNotFound
                                        | redis::ErrorKind::Server(
                                            redis::ServerErrorKind::ReadOnly | redis::ServerErrorKind::MasterDown
                                        )
                                );
                            assert!(of_the_failover, "not an error of the failover: {e:?}");
                            transient.push(e.to_string());
                            let since = *failing_since.get_or_insert_with(std::time::Instant::now);
                            assert!(since.elapsed() < Duration::from_secs(5), "INCREX keeps failing: {transient:?}");
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    }
                }
                (calls, transient)
            })
        };
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(replica.call(&["CLUSTER", "FAILOVER"]), Reply::Status("OK".into()));
        assert!(
            wait_until(Duration::from_secs(20), || info_field(&mut replica, "replication", "role") == "master"),
            "the replica was not promoted; its log:\n{}",
            cluster.replicas[0].log()
        );
        std::thread::sleep(Duration::from_millis(500));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (calls, transient) = worker.join().expect("workload thread");
        // Each error was the failover's (checked as it came), and none lasted 5 s.
        assert!(calls > 0, "{flavor:?}: no call succeeded: {transient:?}");

        // Every counter and lock continues from the replicated state, on whichever node now
        // owns it: the counter counts on, the lock is still held, the TTL was not re-armed.
        let mut con = cluster.client();
        for key in &keys {
            assert_eq!(increx(&mut con, &format!("{key}:count"), 1000), 2, "{key}");
            assert_eq!(zwindow(&mut con, &format!("{key}:lock"), 1001.0, 600.0, 1, "intruder"), 0, "{key}");
            let ttl: i64 = redis::cmd("TTL").arg(format!("{key}:count")).query(&mut con).unwrap();
            assert!((990..=1000).contains(&ttl), "{key}: TTL {ttl}");
        }
    }
}

on_every_server! {
    /// A waiter of GOBLIN.BLOCK on a slot that migrates: MIGRATE takes the held lock away (a
    /// deletion, which would free the lock for the waiter on a single server), yet the old node
    /// grants nothing, since it no longer serves the key; once the slot is moved, the server
    /// answers the waiter `-MOVED` to the new owner, which holds the lock the waiter follows.
    fn a_waiter_whose_slot_moves_is_redirected_and_granted_nothing(flavor: Flavor) {
        let cluster = Cluster::start(flavor);
        let key = "lock:{moving}";
        let slot = cluster.primaries[0].conn().call(&["CLUSTER", "KEYSLOT", key]).int();
        let owner_at = if slot <= 5460 { 0 } else if slot <= 10922 { 1 } else { 2 };
        let (owner, target) = (&cluster.primaries[owner_at], &cluster.primaries[(owner_at + 1) % 3]);
        let (mut from, mut to) = (owner.conn(), target.conn());
        let (from_id, to_id) = (node_id(&mut from), node_id(&mut to));
        let slot = slot.to_string();
        assert_eq!(from.call(&["GOBLIN.LOCK", key, "holder", "60000"]), Reply::Status("OK".into()));
        let mut waiter = owner.conn();
        waiter.send(&["GOBLIN.BLOCK", key, "waiter", "60000", "30"]).expect("send");
        assert!(
            wait_until(Duration::from_secs(10), || info_field(&mut from, "goblin", "goblin_waiting") == "1"),
            "the waiter never stood in line"
        );

        assert_eq!(to.call(&["CLUSTER", "SETSLOT", &slot, "IMPORTING", &from_id]), Reply::Status("OK".into()));
        assert_eq!(from.call(&["CLUSTER", "SETSLOT", &slot, "MIGRATING", &to_id]), Reply::Status("OK".into()));
        let migrate = from.call(&["MIGRATE", "127.0.0.1", &target.port.to_string(), key, "0", "5000"]);
        assert_eq!(migrate, Reply::Status("OK".into()));
        // Whatever the old node does with the deletion, it does by now.
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(from.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot]), Reply::Int(0), "a grant left on the old node");
        for primary in &cluster.primaries {
            let reply = primary.conn().call(&["CLUSTER", "SETSLOT", &slot, "NODE", &to_id]);
            assert_eq!(reply, Reply::Status("OK".into()));
        }

        let reply = waiter.reply_within(Duration::from_secs(10)).expect("the redirect");
        match &reply {
            Reply::Error(e) => assert_eq!(e, &format!("MOVED {slot} 127.0.0.1:{}", target.port)),
            other => panic!("the waiter got {other:?}"),
        }
        assert_eq!(from.call(&["CLUSTER", "COUNTKEYSINSLOT", &slot]), Reply::Int(0));
        assert!(
            wait_until(Duration::from_secs(5), || info_field(&mut from, "goblin", "goblin_waiting") == "0"),
            "the old node still counts the waiter"
        );
        assert_eq!(to.call(&["GET", key]), bulk("holder"), "the lock moved with its holder");
        assert_eq!(to.call(&["GOBLIN.LOCK", key, "waiter", "60000"]), Reply::Nil, "and is still held");
    }
}
