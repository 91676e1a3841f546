//! Effects replication: replicas and the AOF receive core commands with absolute expiry times,
//! so a replica ends identical to its primary, an AOF replay does not restart windows, and the
//! data loads on a server without the module.

mod common;
use common::*;
use std::path::Path;
use std::time::Duration;

/// A generated workload of both commands, including errors, refreshes, rejections, deletions
/// by non-positive windows, and outside writes.
fn workload(c: &mut Conn, seed: u64, steps: usize) {
    let mut rng = Rng::new(seed);
    let mut clock = 1_000_000u64;
    for _ in 0..steps {
        let k = rng.below(8);
        match rng.below(10) {
            0..=3 => {
                let seconds = rng.pick(&["100", "200", "0", "-1", "abc", "300"]);
                increx(c, &format!("counter:{k}"), seconds);
            }
            4..=8 => {
                clock += rng.below(4000);
                let now = format!("{}.{:03}", clock / 1000, clock % 1000);
                let window = rng.pick(&["10", "12.5", "30", "60.25", "0", "nan"]);
                let limit = rng.pick(&["1", "2", "3", "5", "0"]);
                let member = format!("m{}", rng.below(12));
                c.call(&[
                    "GOBLIN.ZWINDOW",
                    &format!("window:{k}"),
                    &now,
                    window,
                    limit,
                    &member,
                ]);
            }
            _ => {
                c.call(&["SET", &format!("counter:{k}"), &rng.below(5).to_string()]);
            }
        }
    }
}

on_every_server! {
    fn a_replica_without_the_module_ends_identical(flavor: Flavor) {
        let primary = Server::start(flavor);
        // The replica of replica mode does not load Goblin: it can only apply what it receives
        // if the stream holds core commands alone.
        let replica = primary.replica().expect("replica mode");
        let mut p = primary.conn();
        let mut r = replica.conn();

        workload(&mut p, 7, 3000);
        assert_eq!(p.call(&["WAIT", "1", "10000"]), Reply::Int(1));
        assert_eq!(
            info_field(&mut p, "replication", "master_repl_offset"),
            info_field(&mut r, "replication", "slave_repl_offset")
        );

        let on_primary = dataset(&mut p);
        let on_replica = dataset(&mut r);
        assert!(on_primary.len() >= 8, "the workload left too few keys: {on_primary:?}");
        // Same keys, values, scores (ZRANGE prints 17 significant digits) and absolute expiry:
        // PEXPIREAT carries the primary's own timestamp, so the replica's TTLs are not merely
        // within 100 ms, they are the same millisecond.
        assert_eq!(on_replica, on_primary);
        // "unknown command" (in any case), or any other error sent back to the primary.
        assert_eq!(replication_errors(&replica.log()), Vec::<String>::new(), "{}", replica.log());
    }
}

fn aof_server(flavor: Flavor, dir: &Path) -> ServerBuilder {
    Server::builder(flavor).dir(dir).args(AOF_ALWAYS)
}

on_every_server! {
    fn the_aof_holds_effects_and_no_goblin_command(flavor: Flavor) {
        let dir = TempDir::new("aof");
        let server = aof_server(flavor, &dir.0).start();
        let mut c = server.conn();
        workload(&mut c, 11, 1500);
        let aof = aof_text(&dir.0);
        assert!(!aof.to_ascii_lowercase().contains("goblin"), "the AOF names a GOBLIN command");
        for effect in ["SET", "PXAT", "INCR", "PEXPIREAT", "ZADD", "ZREMRANGEBYSCORE", "DEL"] {
            let command = format!("\r\n${}\r\n{effect}\r\n", effect.len());
            assert!(aof.contains(&command), "the AOF has no {effect}");
        }
    }
}

on_every_server! {
    fn a_restart_from_the_aof_does_not_restart_the_window(flavor: Flavor) {
        let dir = TempDir::new("aof-restart");
        // Killed by the test: no replica to compare with at the end.
        let mut server = aof_server(flavor, &dir.0).without_replica().start();
        let mut c = server.conn();
        assert_eq!(increx(&mut c, "counter", "4"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "window", "100", "4", "2", "a"), Reply::Int(1));
        std::thread::sleep(Duration::from_millis(2000));
        server.kill(); // SIGKILL: appendfsync always already has every write on disk
        drop(c);

        // Back with the module: half the window is left, not a fresh one.
        // Shut down by the test, likewise.
        let restarted = aof_server(flavor, &dir.0).without_replica().start();
        let mut c = restarted.conn();
        for key in ["counter", "window"] {
            let pttl = c.call(&["PTTL", key]).int();
            assert!((1000..=2000).contains(&pttl), "{key}: PTTL {pttl} after the restart");
        }
        assert_eq!(c.call(&["GET", "counter"]), bulk("1"));
        assert_eq!(increx(&mut c, "counter", "4"), Reply::Int(2));
        assert_eq!(zwindow(&mut c, "window", "101", "4", "2", "b"), Reply::Int(1));
        assert_eq!(zwindow(&mut c, "window", "102", "4", "2", "c"), Reply::Int(0));
        let mut restarted = restarted;
        restarted.shutdown();

        // And without the module, the same AOF loads and the keys still expire on time.
        let plain = aof_server(flavor, &dir.0).without_module().start();
        let mut c = plain.conn();
        assert_eq!(c.call(&["GET", "counter"]), bulk("2"));
        assert_eq!(c.call(&["ZCARD", "window"]), Reply::Int(2));
        assert!(wait_until(Duration::from_secs(4), || {
            c.call(&["EXISTS", "counter", "window"]) == Reply::Int(0)
        }), "the keys did not expire on a server without the module");
    }
}

on_every_server! {
    fn an_rdb_saved_with_the_module_loads_and_expires_without_it(flavor: Flavor) {
        let dir = TempDir::new("rdb");
        // Shut down by the test: no replica to compare with at the end.
        let mut server = Server::builder(flavor).dir(&dir.0).without_replica().start();
        let mut c = server.conn();
        increx(&mut c, "counter", "2");
        increx(&mut c, "counter", "2");
        zwindow(&mut c, "window", "1.5", "2", "3", "a");
        zwindow(&mut c, "window", "1.75", "2", "3", "b");
        increx(&mut c, "forever", "-1");
        c.call(&["SET", "persistent", "7"]);
        increx(&mut c, "persistent", "2");
        assert_eq!(c.call(&["SAVE"]), Reply::Status("OK".into()));
        server.shutdown();

        let plain = Server::builder(flavor).dir(&dir.0).without_module().start();
        let mut c = plain.conn();
        assert_eq!(c.call(&["GET", "counter"]), bulk("2"));
        assert_eq!(c.call(&["ZRANGE", "window", "0", "-1", "WITHSCORES"]).texts(), ["a", "1.5", "b", "1.75"]);
        assert_eq!(c.call(&["GET", "persistent"]), bulk("8"));
        assert_eq!(c.call(&["TTL", "persistent"]), Reply::Int(-1));
        assert_eq!(c.call(&["EXISTS", "forever"]), Reply::Int(0));
        assert!(wait_until(Duration::from_secs(4), || {
            c.call(&["EXISTS", "counter", "window"]) == Reply::Int(0)
        }), "the keys did not expire on a server without the module");
    }
}
