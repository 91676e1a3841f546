//! The module's life in a running server: MODULE LOAD, MODULE UNLOAD refused by default and
//! allowed with `allow-unload`, load and unload cycles that leave nothing behind, and the calls
//! that crash a server whose module was unloaded under them (a server bug: redis/redis#4826),
//! each of them survived because the unload is refused.

mod common;
use common::*;
use std::time::Duration;

/// A server without Goblin that accepts MODULE commands.
fn bare_server(flavor: Flavor) -> Server {
    Server::builder(flavor)
        .without_module()
        .args(["--enable-module-command", "yes"])
        .start()
}

fn load(c: &mut Conn, args: &[&str]) -> Reply {
    let path = module_path();
    let mut command = vec!["MODULE", "LOAD", path.to_str().expect("utf-8 path")];
    command.extend_from_slice(args);
    c.call(&command)
}

fn loaded_modules(c: &mut Conn) -> Vec<String> {
    c.call(&["MODULE", "LIST"])
        .array()
        .iter()
        .map(|m| m.array()[1].text())
        .collect()
}

on_every_server! {
    fn unload_is_refused_by_default_and_the_log_says_why(flavor: Flavor) {
        let server = bare_server(flavor);
        let mut c = server.conn();
        assert_eq!(load(&mut c, &[]), Reply::Status("OK".into()));
        assert_eq!(increx(&mut c, "k", "10"), Reply::Int(1));
        assert_eq!(c.call(&["MODULE", "UNLOAD", "goblin"]), Reply::Error(UNLOAD_REFUSED.into()));
        assert!(loaded_modules(&mut c).contains(&"goblin".to_string()));
        assert_eq!(increx(&mut c, "k", "10"), Reply::Int(2), "still serving");
        assert_eq!(info_field(&mut c, "goblin", "goblin_unload_allowed"), "0");
        let log = server.log();
        assert!(
            log.contains("MODULE UNLOAD refused") && log.contains("allow-unload"),
            "the log does not say why, nor how to allow it:\n{log}"
        );
    }
}

on_every_server! {
    fn allow_unload_lets_it_go_and_the_data_stay(flavor: Flavor) {
        let server = bare_server(flavor);
        let mut c = server.conn();
        assert!(increx(&mut c, "k", "10").is_error());
        assert_eq!(load(&mut c, &["allow-unload"]), Reply::Status("OK".into()));
        assert_eq!(info_field(&mut c, "goblin", "goblin_unload_allowed"), "1");
        assert_eq!(increx(&mut c, "k", "10"), Reply::Int(1));
        assert_eq!(c.call(&["MODULE", "UNLOAD", "goblin"]), Reply::Status("OK".into()));
        assert_no_callback_left(&mut c);
        assert!(increx(&mut c, "k", "10").is_error());
        assert_eq!(c.call(&["GET", "k"]), bulk("1"), "data outlive the module");
        assert_eq!(load(&mut c, &[]), Reply::Status("OK".into()));
        assert_eq!(increx(&mut c, "k", "10"), Reply::Int(2));
    }
}

on_every_server! {
    fn an_unknown_module_argument_stops_the_load(flavor: Flavor) {
        let server = bare_server(flavor);
        let mut c = server.conn();
        assert!(load(&mut c, &["allow_unload"]).is_error());
        assert!(!loaded_modules(&mut c).contains(&"goblin".to_string()));
        assert!(server.log().contains("unknown module argument \"allow_unload\""), "{}", server.log());
        assert_no_callback_left(&mut c);
    }
}

on_every_server! {
    /// `fence-clock-offset-ms` shifts the clock fencing tokens are minted from: a test knob of
    /// the module's test build only. The module users load refuses it, as any argument it does
    /// not know, and the test build takes it.
    fn the_released_module_refuses_the_clock_offset(flavor: Flavor) {
        let server = bare_server(flavor);
        let mut c = server.conn();
        assert!(load(&mut c, &["fence-clock-offset-ms", "-200"]).is_error());
        assert!(!loaded_modules(&mut c).contains(&"goblin".to_string()));
        assert!(
            server.log().contains("unknown module argument \"fence-clock-offset-ms\""),
            "{}",
            server.log()
        );
        assert_no_callback_left(&mut c);
        let test_build = test_build_path();
        let test_build = test_build.to_str().expect("utf-8 path");
        let reply = c.call(&["MODULE", "LOAD", test_build, "fence-clock-offset-ms", "-200"]);
        assert_eq!(reply, Reply::Status("OK".into()), "the test build takes it");
    }
}

on_every_server! {
    /// MODULE LOADEX with a CONFIG the module does not have fails after the module loaded; the
    /// server then unloads it itself, inside the same command (Redis 8.10 asserts that this
    /// unload succeeds). Goblin lets that one through: nothing is left half-loaded.
    fn a_failed_loadex_leaves_no_module_behind(flavor: Flavor) {
        let server = bare_server(flavor);
        let mut c = server.conn();
        let path = module_path();
        let path = path.to_str().expect("utf-8 path");
        let reply = c.call(&["MODULE", "LOADEX", path, "CONFIG", "goblin.nosuch", "1"]);
        assert!(reply.is_error(), "{reply:?}");
        assert!(!loaded_modules(&mut c).contains(&"goblin".to_string()));
        assert_no_callback_left(&mut c);
        assert_eq!(load(&mut c, &[]), Reply::Status("OK".into()));
        assert_eq!(increx(&mut c, "k", "10"), Reply::Int(1));
    }
}

on_every_server! {
    /// The crash: a GOBLIN command queued in MULTI, MODULE UNLOAD from another client, EXEC.
    /// (Reloading in between made the stale pointer run another Goblin command.)
    fn a_call_queued_in_multi_survives_an_unload_attempt(flavor: Flavor) {
        let server = bare_server(flavor);
        let mut admin = server.conn();
        assert_eq!(load(&mut admin, &[]), Reply::Status("OK".into()));
        let mut c = server.conn();
        assert_eq!(c.call(&["MULTI"]), Reply::Status("OK".into()));
        assert_eq!(increx(&mut c, "mc", "100"), Reply::Status("QUEUED".into()));
        assert_eq!(admin.call(&["MODULE", "UNLOAD", "goblin"]), Reply::Error(UNLOAD_REFUSED.into()));
        assert!(load(&mut admin, &[]).is_error(), "already loaded");
        assert_eq!(c.call(&["EXEC"]), Reply::Array(vec![Reply::Int(1)]));
        assert_eq!(c.call(&["GET", "mc"]), bulk("1"));
        assert_eq!(c.call(&["TTL", "mc"]), Reply::Int(100));
        assert_eq!(info_field(&mut c, "goblin", "goblin_increx_calls"), "1");
        assert_eq!(info_field(&mut c, "goblin", "goblin_cad_calls"), "0");
    }
}

on_every_server! {
    /// The crash on UNPAUSE: a GOBLIN command held by CLIENT PAUSE WRITE while the module was
    /// unloaded.
    fn a_call_held_by_client_pause_survives_an_unload_attempt(flavor: Flavor) {
        let server = bare_server(flavor);
        let mut admin = server.conn();
        assert_eq!(load(&mut admin, &[]), Reply::Status("OK".into()));
        let mut held = server.conn();
        assert_eq!(admin.call(&["CLIENT", "PAUSE", "30000", "WRITE"]), Reply::Status("OK".into()));
        held.send(&["GOBLIN.ZWINDOW", "lock", "5000", "30", "1", "worker-1"]).expect("send");
        assert!(
            wait_until(Duration::from_secs(10), || info_field(&mut admin, "clients", "blocked_clients") == "1"),
            "the call was never held by the pause"
        );
        assert_eq!(admin.call(&["MODULE", "UNLOAD", "goblin"]), Reply::Error(UNLOAD_REFUSED.into()));
        assert_eq!(admin.call(&["CLIENT", "UNPAUSE"]), Reply::Status("OK".into()));
        assert_eq!(held.read().expect("the held reply"), Reply::Int(1));
        assert_eq!(admin.call(&["ZSCORE", "lock", "worker-1"]), bulk("5000"));
    }
}

on_every_server! {
    /// After an unload, CLIENT LIST read the freed command of a client whose last command was
    /// Goblin's.
    fn client_list_still_names_the_last_goblin_command(flavor: Flavor) {
        let server = bare_server(flavor);
        let mut admin = server.conn();
        assert_eq!(load(&mut admin, &[]), Reply::Status("OK".into()));
        let mut c = server.conn();
        c.call(&["CLIENT", "SETNAME", "counter"]);
        assert_eq!(increx(&mut c, "k", "10"), Reply::Int(1));
        assert_eq!(admin.call(&["MODULE", "UNLOAD", "goblin"]), Reply::Error(UNLOAD_REFUSED.into()));
        let list = admin.call(&["CLIENT", "LIST"]).text();
        let line = list.lines().find(|line| line.contains("name=counter")).expect("the client");
        assert!(line.contains("cmd=goblin.increx"), "{line}");
    }
}

/// `used_memory`, once the server has settled.
fn used_memory(c: &mut Conn) -> i64 {
    info_field(c, "memory", "used_memory")
        .parse()
        .expect("used_memory")
}

on_every_server! {
    /// Loading allocates the module's commands, docs and INFO section in the server, and every
    /// call its temporaries; unloading must give all of it back. The redis_module! macro kept a
    /// thread-safe context of about 17 KB per load: 50 cycles grew by 850 KB. The bound is 2 KB
    /// a cycle: the server itself keeps a little of each load.
    fn load_and_unload_cycles_leave_nothing_behind(flavor: Flavor) {
        const CYCLES: i64 = 50;
        let server = bare_server(flavor);
        let mut c = server.conn();
        let cycle = |c: &mut Conn| {
            assert_eq!(load(c, &["allow-unload"]), Reply::Status("OK".into()));
            increx(c, "counter", "100");
            zwindow(c, "window", "1", "100", "3", "a");
            cad(c, "lock", "token");
            c.call(&["INFO", "goblin"]);
            c.call(&["COMMAND", "DOCS", "goblin.zwindow"]);
            assert_eq!(c.call(&["MODULE", "UNLOAD", "goblin"]), Reply::Status("OK".into()));
        };
        // The first cycles grow the server's own tables once.
        for _ in 0..5 {
            cycle(&mut c);
        }
        let before = used_memory(&mut c);
        for _ in 0..CYCLES {
            cycle(&mut c);
        }
        let grown = used_memory(&mut c) - before;
        assert!(
            grown <= CYCLES * 2048,
            "{CYCLES} load and unload cycles grew used_memory by {grown} bytes ({} a cycle)",
            grown / CYCLES
        );
    }
}

on_every_server! {
    /// A waiter of GOBLIN.BLOCK or GOBLIN.BZWINDOW is a client the module blocked: the server
    /// itself refuses to unload a module with blocked clients, even with `allow-unload`. Once
    /// the waiters are gone (one timed out, one granted) the unload goes through and leaves no
    /// callback behind: not the keyspace events the lines follow, nor a line's timer.
    fn waiters_hold_the_module_until_they_are_gone(flavor: Flavor) {
        let server = bare_server(flavor);
        let mut c = server.conn();
        assert_eq!(load(&mut c, &["allow-unload"]), Reply::Status("OK".into()));
        assert_eq!(c.call(&["GOBLIN.LOCK", "lock", "holder", "60000"]), Reply::Status("OK".into()));
        assert_eq!(c.call(&["GOBLIN.BZWINDOW", "permits", "60", "1", "a", "0"]), Reply::Int(1));
        let mut lock_waiter = server.conn();
        lock_waiter.send(&["GOBLIN.BLOCK", "lock", "waiter", "1000", "0.5"]).expect("send");
        let mut permit_waiter = server.conn();
        permit_waiter.send(&["GOBLIN.BZWINDOW", "permits", "60", "1", "b", "0"]).expect("send");
        assert!(
            wait_until(Duration::from_secs(10), || info_field(&mut c, "goblin", "goblin_waiting") == "2"),
            "the waiters never stood in line"
        );
        let refused = c.call(&["MODULE", "UNLOAD", "goblin"]);
        assert!(
            matches!(&refused, Reply::Error(e) if e.contains("blocked clients")),
            "{refused:?}"
        );
        assert_eq!(lock_waiter.read().expect("the timeout"), Reply::Nil);
        assert_eq!(c.call(&["GOBLIN.CAD", "permits", "a"]), Reply::Int(1));
        assert_eq!(permit_waiter.read().expect("the grant"), Reply::Int(1));
        assert!(
            wait_until(Duration::from_secs(10), || {
                c.call(&["MODULE", "UNLOAD", "goblin"]) == Reply::Status("OK".into())
            }),
            "the unload was still refused after the waiters left"
        );
        assert_no_callback_left(&mut c);
        assert_eq!(c.call(&["GET", "lock"]), bulk("holder"));
        assert_eq!(c.call(&["ZRANGE", "permits", "0", "-1"]).texts(), ["b"]);
    }
}

/// The log's warnings (a `#` after the role letter, as every server marks them) that mention
/// Goblin, at warning level or as a failed unload.
fn warnings_about_goblin(log: &str) -> Vec<String> {
    log.lines()
        .filter(|line| line.to_lowercase().contains("goblin"))
        .filter(|line| line.contains(" # ") || line.contains("unload"))
        .filter(|line| !line.contains("Module goblin unloaded"))
        .map(String::from)
        .collect()
}

on_every_server! {
    /// A clean shutdown, by SHUTDOWN (with and without the final save) or SIGTERM (what
    /// `docker stop` sends), logs no warning from or about Goblin. Valkey 9.1 unloads every
    /// module when it shuts down: past the shutdown event, the module lets that unload through.
    fn a_clean_shutdown_logs_nothing_about_goblin(flavor: Flavor) {
        for how in ["SHUTDOWN NOSAVE", "SHUTDOWN SAVE", "SIGTERM"] {
            // Stopped by the test: no replica beside it.
            let mut server = Server::builder(flavor).without_replica().args(["--save", "3600 1"]).start();
            let mut c = server.conn();
            // A lock handed over on its expiry, a lease, a timer that has fired: work done.
            assert_eq!(c.call(&["GOBLIN.LOCK", "l", "a", "50"]), Reply::Status("OK".into()));
            let mut w = server.conn();
            w.send(&["GOBLIN.BLOCK", "l", "b", "50", "5"]).expect("send");
            assert_eq!(w.reply_within(Duration::from_secs(5)), Some(Reply::Status("OK".into())));
            assert_eq!(c.call(&["GOBLIN.ZWINDOW", "s", "*", "60", "2", "m"]), Reply::Int(1));
            std::thread::sleep(Duration::from_millis(120));
            match how {
                "SIGTERM" => server.terminate(),
                "SHUTDOWN SAVE" => {
                    let _ = c.send(&["SHUTDOWN", "SAVE"]);
                    server.shutdown();
                }
                _ => server.shutdown(),
            }
            let log = server.log();
            assert!(log.contains("ready to exit"), "{how}: not a clean shutdown:\n{log}");
            assert_eq!(warnings_about_goblin(&log), Vec::<String>::new(), "{how}");
        }
    }

    /// MODULE UNLOAD at run time is still refused, with the same message, after the module
    /// follows the server's shutdown event.
    fn unload_at_run_time_is_still_refused(flavor: Flavor) {
        let server = bare_server(flavor);
        let mut c = server.conn();
        assert_eq!(load(&mut c, &[]), Reply::Status("OK".into()));
        for _ in 0..2 {
            assert_eq!(c.call(&["MODULE", "UNLOAD", "goblin"]), Reply::Error(UNLOAD_REFUSED.into()));
        }
        assert!(loaded_modules(&mut c).contains(&"goblin".to_string()));
        assert!(server.log().contains("goblin: MODULE UNLOAD refused. A client may hold a Goblin command queued in MULTI"));
    }

    /// A shutdown with a waiter still parked: the module logs nothing, and only Valkey 9.1, which
    /// unloads every module at shutdown, says in its own words that a module with a blocked
    /// client cannot be unloaded (the server cannot free a blocked client then; the waiter's
    /// connection closes with the process, as BLPOP's does).
    fn a_shutdown_with_a_waiter_parked(flavor: Flavor) {
        let mut server = Server::builder(flavor).without_replica().start();
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.LOCK", "l", "a", "60000"]), Reply::Status("OK".into()));
        let mut w = server.conn();
        w.send(&["GOBLIN.BLOCK", "l", "b", "1000", "0"]).expect("send");
        assert!(wait_until(Duration::from_secs(5), || info_field(&mut c, "goblin", "goblin_waiting") == "1"));
        server.terminate();
        let log = server.log();
        assert!(log.contains("ready to exit"), "{log}");
        let expected: Vec<&str> = match flavor.family() {
            Family::Valkey => vec!["Failed to unload module goblin: the module has blocked clients"],
            Family::Redis => vec![],
        };
        let warnings = warnings_about_goblin(&log);
        assert_eq!(warnings.len(), expected.len(), "{warnings:#?}");
        for (warning, expected) in warnings.iter().zip(expected) {
            assert!(warning.contains(expected), "{warning}");
        }
    }
}
