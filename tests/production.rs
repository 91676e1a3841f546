//! Production behaviour on a single server: memory limits, transactions and scripts,
//! concurrency, and crashes (kill -9 with the AOF; a primary lost and its replica promoted).

mod common;
use common::*;
use std::sync::{Arc, Barrier};
use std::time::Duration;

on_every_server! {
    fn at_maxmemory_with_noeviction_both_commands_refuse_and_write_nothing(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["SET", "counter", "5"]);
        c.call(&["ZADD", "window", "1", "old"]);
        // Filler the server may evict, then a limit below what is in use.
        for i in 0..2000 {
            c.call(&["SET", &format!("filler:{i}"), &"x".repeat(1000)]);
        }
        // What maxmemory is checked against: used_memory without what the server leaves out
        // of it, the replication buffers a replica has not consumed yet (they shrink as it
        // catches up; with no replica this is 0).
        let field = |c: &mut Conn, name: &str| -> i64 { info_field(c, "memory", name).parse().unwrap() };
        let used = field(&mut c, "used_memory") - field(&mut c, "mem_not_counted_for_evict");
        c.call(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
        c.call(&["CONFIG", "SET", "maxmemory", &(used - 500_000).to_string()]);
        for (args, key) in [
            (vec!["GOBLIN.INCREX", "counter", "10"], "counter"),
            (vec!["GOBLIN.INCREX", "fresh", "10"], "fresh"),
            (vec!["GOBLIN.ZWINDOW", "window", "100", "10", "5", "m"], "window"),
        ] {
            let before = snapshot(&mut c, key);
            let reply = c.call(&args);
            assert!(matches!(&reply, Reply::Error(e) if e.starts_with("OOM ")), "{args:?}: {reply:?}");
            assert_eq!(snapshot(&mut c, key), before, "{args:?} wrote under OOM");
        }
        // A release frees memory, so like DEL it is allowed even now.
        assert_eq!(cad(&mut c, "counter", "5"), Reply::Int(1));
        // With an eviction policy they keep working: the server evicts filler to make room.
        c.call(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]);
        assert_eq!(increx(&mut c, "fresh", "10"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "new-window", "100", "10", "5", "m"), Reply::Int(1));
        let evicted: i64 = info_field(&mut c, "stats", "evicted_keys").parse().unwrap();
        assert!(evicted > 0, "nothing was evicted, so the limit was never reached");
    }
}

on_every_server! {
    fn both_commands_work_in_multi_exec(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let replies = c.pipeline(&[
            vec!["MULTI"],
            vec!["GOBLIN.INCREX", "counter", "60"],
            vec!["GOBLIN.INCREX", "counter", "60"],
            vec!["GOBLIN.ZWINDOW", "lock", "1", "30", "1", "me"],
            vec!["GOBLIN.ZWINDOW", "lock", "2", "30", "1", "you"],
            vec!["GOBLIN.INCREX", "lock", "60"],
            vec!["EXEC"],
        ]);
        assert_eq!(
            replies[6],
            Reply::Array(vec![
                Reply::Int(1),
                Reply::Int(2),
                Reply::Int(1),
                Reply::Int(0),
                Reply::Error(WRONGTYPE.into()),
            ])
        );
        assert_eq!(c.call(&["TTL", "counter"]), Reply::Int(60));
    }
}

on_every_server! {
    fn both_commands_work_from_lua_and_from_functions(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let script = "return {redis.call('GOBLIN.INCREX', KEYS[1], ARGV[1]), \
                      redis.call('GOBLIN.ZWINDOW', KEYS[2], ARGV[2], ARGV[3], ARGV[4], ARGV[5])}";
        let reply = c.call(&["EVAL", script, "2", "c", "w", "60", "100", "10", "1", "a"]);
        assert_eq!(reply, Reply::Array(vec![Reply::Int(1), Reply::Int(1)]));
        let reply = c.call(&["EVAL", script, "2", "c", "w", "60", "101", "10", "1", "b"]);
        assert_eq!(reply, Reply::Array(vec![Reply::Int(2), Reply::Int(0)]));
        // An error inside a script surfaces as the script's error, with our text in it.
        let reply = c.call(&["EVAL", "return redis.call('GOBLIN.ZWINDOW', KEYS[1], 'x', 1, 1, 'm')", "1", "w"]);
        assert!(matches!(&reply, Reply::Error(e) if e.contains(NOT_FLOAT)), "{reply:?}");

        let library = "#!lua name=goblintest\n\
            redis.register_function('limit', function(keys, args) \
              return redis.call('GOBLIN.INCREX', keys[1], args[1]) end)\n\
            redis.register_function('lease', function(keys, args) \
              return redis.call('GOBLIN.ZWINDOW', keys[1], args[1], args[2], args[3], args[4]) end)";
        assert_eq!(c.call(&["FUNCTION", "LOAD", library]), bulk("goblintest"));
        assert_eq!(c.call(&["FCALL", "limit", "1", "fc", "30"]), Reply::Int(1));
        assert_eq!(c.call(&["FCALL", "limit", "1", "fc", "30"]), Reply::Int(2));
        assert_eq!(c.call(&["TTL", "fc"]), Reply::Int(30));
        assert_eq!(c.call(&["FCALL", "lease", "1", "fl", "5", "10", "1", "x"]), Reply::Int(1));
        assert_eq!(c.call(&["FCALL", "lease", "1", "fl", "6", "10", "1", "y"]), Reply::Int(0));
    }
}

on_every_server! {
    fn thirty_two_clients_never_lose_an_increment(flavor: Flavor) {
        let server = Server::start(flavor);
        let port = server.port;
        let calls_per_client = 500;
        let barrier = Arc::new(Barrier::new(32));
        let workers: Vec<_> = (0..32)
            .map(|_| {
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    let mut c = Conn::connect(port).unwrap();
                    barrier.wait();
                    (0..calls_per_client)
                        .map(|_| increx(&mut c, "hot", "600").int())
                        .collect::<Vec<i64>>()
                })
            })
            .collect();
        let mut replies: Vec<i64> = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
        replies.sort_unstable();
        let total = 32 * calls_per_client as i64;
        // Every call got its own value: 1..=total, each exactly once.
        assert_eq!(replies, (1..=total).collect::<Vec<_>>());
        let mut c = server.conn();
        assert_eq!(c.call(&["GET", "hot"]), Reply::Bulk(total.to_string().into_bytes()));
        let ttl = c.call(&["TTL", "hot"]).int();
        assert!((590..=600).contains(&ttl), "TTL {ttl}: armed once, never re-armed");
    }
}

/// A script that calls ZWINDOW with the server's own clock as `now`, and returns the verdict
/// with the time it used: so the admitted timestamps are in the order the server decided them.
const ZWINDOW_AT_SERVER_TIME: &str = "local t = redis.call('TIME') \
    local now = tonumber(t[1]) + tonumber(t[2]) / 1000000 \
    return {redis.call('GOBLIN.ZWINDOW', KEYS[1], tostring(now), ARGV[1], ARGV[2], ARGV[3]), tostring(now)}";

on_every_server! {
    fn thirty_two_clients_never_exceed_the_limit_in_any_window(flavor: Flavor) {
        let server = Server::start(flavor);
        let port = server.port;
        let (window, limit) = (0.01, 7usize);
        let sha = server.conn().call(&["SCRIPT", "LOAD", ZWINDOW_AT_SERVER_TIME]).text();
        let barrier = Arc::new(Barrier::new(33));
        let workers: Vec<_> = (0..32)
            .map(|client| {
                let (barrier, sha) = (barrier.clone(), sha.clone());
                std::thread::spawn(move || {
                    let mut c = Conn::connect(port).unwrap();
                    barrier.wait();
                    let mut admitted = Vec::new();
                    for call in 0..300 {
                        let member = format!("c{client}-{call}");
                        let reply = c.call(&["EVALSHA", &sha, "1", "hot", &window.to_string(), &limit.to_string(), &member]);
                        let reply = reply.array();
                        if reply[0] == Reply::Int(1) {
                            admitted.push(reply[1].text().parse::<f64>().unwrap());
                        }
                    }
                    admitted
                })
            })
            .collect();
        // Meanwhile the set itself never holds more than `limit` members.
        let mut observer = server.conn();
        barrier.wait();
        let mut max_seen = 0;
        while workers.iter().any(|w| !w.is_finished()) {
            max_seen = max_seen.max(observer.call(&["ZCARD", "hot"]).int());
        }
        assert!(max_seen <= limit as i64, "ZCARD reached {max_seen}");
        let mut admitted: Vec<f64> = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
        admitted.sort_by(f64::total_cmp);
        assert!(admitted.len() > 50, "only {} admitted: the test proves little", admitted.len());
        // No window-long span (t - window, t] holds more than `limit` admitted requests.
        for (i, &t) in admitted.iter().enumerate() {
            let in_window = admitted[..=i].iter().filter(|&&s| s > t - window).count();
            assert!(in_window <= limit, "{in_window} admitted in the window ending at {t}");
        }
    }
}

/// What a client was told: admitted lease members with their `now`, and counter values with
/// the expiry observed after the first hit.
struct Acknowledged {
    admits: Vec<(String, f64)>,
    counter: i64,
    counter_expires_at: i64,
    window_expires_at: i64,
}

/// Runs on `port` until the connection breaks (the server was killed) or `steps` ran.
fn acknowledged_workload(port: u16, steps: usize, replicated_only: bool) -> Acknowledged {
    let mut c = Conn::connect(port).unwrap();
    let mut ack = Acknowledged {
        admits: Vec::new(),
        counter: 0,
        counter_expires_at: 0,
        window_expires_at: 0,
    };
    let mut pending = Vec::new();
    for step in 0..steps {
        let member = format!("m{step}");
        let now = 1000.0 + step as f64 * 0.01;
        let zw = [
            "GOBLIN.ZWINDOW",
            "leases",
            &now.to_string(),
            "600",
            "1000000",
            &member,
        ];
        let inc = ["GOBLIN.INCREX", "counter", "600"];
        let (Ok(()), Ok(())) = (c.send(&zw), c.send(&inc)) else {
            break;
        };
        let (Ok(admit), Ok(count)) = (c.read(), c.read()) else {
            break;
        };
        assert_eq!(admit, Reply::Int(1));
        pending.push((member, now));
        let pending_counter = count.int();
        if step == 0 {
            ack.counter_expires_at = c.call(&["PEXPIRETIME", "counter"]).int();
        }
        ack.window_expires_at = match c.send(&["PEXPIRETIME", "leases"]).and_then(|_| c.read()) {
            Ok(Reply::Int(at)) => at,
            _ => break,
        };
        // With a replica, a write counts as acknowledged once WAIT says a replica has it.
        let settled = if replicated_only {
            match c.send(&["WAIT", "1", "2000"]).and_then(|_| c.read()) {
                Ok(Reply::Int(1)) => true,
                _ => break,
            }
        } else {
            true
        };
        if settled {
            ack.admits.append(&mut pending);
            ack.counter = pending_counter;
        }
    }
    ack
}

fn assert_nothing_acknowledged_was_lost(c: &mut Conn, ack: &Acknowledged) {
    assert!(
        ack.admits.len() > 20,
        "the workload acknowledged only {} admits",
        ack.admits.len()
    );
    for (member, now) in &ack.admits {
        let score = c.call(&["ZSCORE", "leases", member]);
        assert_eq!(score.text().parse::<f64>().unwrap(), *now, "{member}");
    }
    // At most the one call in flight at the crash went through without its reply.
    let counter: i64 = c.call(&["GET", "counter"]).text().parse().unwrap();
    assert!(
        counter == ack.counter || counter == ack.counter + 1,
        "counter {counter}, acknowledged {}",
        ack.counter
    );
    // No window restarted: the counter's expiry is the one armed by its first hit, and the
    // lease window's is the last one a client saw (or the in-flight call's, a moment later).
    assert_eq!(
        c.call(&["PEXPIRETIME", "counter"]).int(),
        ack.counter_expires_at
    );
    let window_at = c.call(&["PEXPIRETIME", "leases"]).int();
    assert!((ack.window_expires_at..=ack.window_expires_at + 1000).contains(&window_at));
}

on_every_server! {
    fn kill_9_loses_no_acknowledged_write(flavor: Flavor) {
        let dir = TempDir::new("crash");
        // Killed by the test: no replica to compare with at the end.
        let mut server = Server::builder(flavor).dir(&dir.0).args(AOF_ALWAYS).without_replica().start();
        let port = server.port;
        let workload = std::thread::spawn(move || acknowledged_workload(port, 1_000_000, false));
        std::thread::sleep(Duration::from_millis(700));
        server.kill();
        let ack = workload.join().unwrap();
        let restarted = Server::builder(flavor).dir(&dir.0).args(AOF_ALWAYS).start();
        assert_nothing_acknowledged_was_lost(&mut restarted.conn(), &ack);
    }
}

on_every_server! {
    fn a_promoted_replica_keeps_every_replicated_write(flavor: Flavor) {
        // The primary is killed and the replica made one by the test: neither has its own.
        let mut primary = Server::builder(flavor).without_replica().start();
        let replica = Server::builder(flavor).without_replica().start();
        let mut r = replica.conn();
        replica.follow(&primary);
        let port = primary.port;
        let workload = std::thread::spawn(move || acknowledged_workload(port, 1_000_000, true));
        std::thread::sleep(Duration::from_millis(700));
        primary.kill();
        let ack = workload.join().unwrap();
        assert_eq!(r.call(&["REPLICAOF", "NO", "ONE"]), Reply::Status("OK".into()));
        assert_nothing_acknowledged_was_lost(&mut r, &ack);
        // And the promoted replica carries on with the module.
        assert_eq!(zwindow(&mut r, "leases", "5000", "600", "1000000", "after"), Reply::Int(1));
    }
}
