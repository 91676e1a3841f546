//! Hardened servers: `rename-command` for `COMMAND`, `CONFIG`, `EXISTS` and each core command
//! the module's writes replicate as. The module finds out what the server has without asking
//! `COMMAND` (a call with no arguments, which the server refuses by name or by arity before
//! running anything), so it registers exactly the stand-ins the server lacks, and it refuses
//! to load, in one log line, wherever a write could not be replicated. Where it loads, a replica
//! without the module and a restart from the AOF end identical to the primary: the same keys,
//! values and expiries, and the same `DEBUG DIGEST`.

mod common;
use common::*;
use std::time::Duration;

/// Every core command a write of the module replicates as (docs/contract.md).
const REPLICATED_AS: [&str; 9] = [
    "SET",
    "INCR",
    "INCRBY",
    "DEL",
    "UNLINK",
    "ZADD",
    "ZREM",
    "ZREMRANGEBYSCORE",
    "PEXPIREAT",
];

/// The stand-ins, as the server lists module commands.
const STAND_INS: [&str; 5] = ["increx", "delex", "digest", "delifeq", "cl.throttle"];

/// The `INFO goblin` counters of every command the module registered.
fn registered(c: &mut Conn) -> Vec<String> {
    let info = c.call(&["INFO", "goblin"]).text();
    let mut names: Vec<String> = info
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(name, _)| name.to_string())
        .filter(|name| name.ends_with("_calls"))
        .collect();
    names.sort();
    names
}

/// `DEBUG DIGEST`: one hash of the whole dataset, values and expiries included.
fn digest(c: &mut Conn) -> String {
    c.call(&["DEBUG", "DIGEST"]).text()
}

const DEBUG: [&str; 2] = ["--enable-debug-command", "yes"];

/// Calls every command the module registers here, grants to a waiter included, and writes by
/// other clients between them. Every key it leaves lives for a minute or more: the primary, its
/// replica and the server restarted from the AOF are read one after the other, and a key that
/// expired between two reads would differ between them.
fn workload(server: &Server, c: &mut Conn) {
    let calls: &[&[&str]] = &[
        &["GOBLIN.INCREX", "rate:a", "100"],
        &["GOBLIN.INCREX", "rate:a", "100", "COST", "3"],
        &["GOBLIN.ZWINDOW", "zw", "*", "100", "3", "m"],
        &["GOBLIN.ZWINDOW", "zw", "*", "100", "3", "m", "XX"],
        &[
            "GOBLIN.ZWINDOW",
            "zw:cost",
            "*",
            "100",
            "10",
            "r",
            "COST",
            "4",
        ],
        &["GOBLIN.ZWINDOW", "zw:gone", "*", "0", "3", "m"],
        &["GOBLIN.SWINDOW", "sw", "10", "10", "COST", "3"],
        &["GOBLIN.GCRA", "g", "4", "1", "600"],
        &[
            "GOBLIN.MGCRA",
            "2",
            "{u}:m",
            "9",
            "10",
            "600",
            "{u}:h",
            "99",
            "100",
            "3600",
        ],
        &["GOBLIN.LOCK", "lock", "a", "60000"],
        &["GOBLIN.EXTEND", "lock", "a", "5000"],
        &["GOBLIN.EXTEND", "lock", "a", "90000", "REPLACE"],
        &["GOBLIN.BZWINDOW", "sem", "100", "2", "w1", "1"],
        &["GOBLIN.RLOCK", "rw", "r1", "100000", "FENCE"],
        &["GOBLIN.RLOCK", "rw", "r2", "100000"],
        &["GOBLIN.RWUNLOCK", "rw", "r2"],
        &["GOBLIN.WLOCK", "rw", "r1", "100000"],
        &["GOBLIN.RWEXTEND", "rw", "r1", "5000"],
        &["GOBLIN.RLOCK", "rw", "r1", "100000"],
        &["GOBLIN.RWHELD", "rw", "r1"],
        &["SET", "other", "x", "PX", "100000"],
    ];
    for call in calls {
        let reply = c.call(call);
        assert!(!reply.is_error(), "{call:?}: {reply:?}");
    }
    // A grant written for a waiter, on the lock's release.
    let mut waiter = server.conn();
    waiter
        .send(&["GOBLIN.BLOCK", "lock", "b", "30000", "10"])
        .expect("send");
    assert!(wait_until(Duration::from_secs(10), || {
        info_field(c, "goblin", "goblin_waiting") == "1"
    }));
    assert_eq!(c.call(&["GOBLIN.CAD", "lock", "a"]), Reply::Int(1));
    assert_eq!(waiter.read().expect("grant"), Reply::Status("OK".into()));
    assert_eq!(c.call(&["GOBLIN.CAD", "sem", "w1"]), Reply::Int(1));
    // The stand-ins, where the module registered them (or the server's own commands).
    for call in [
        &["INCREX", "n", "BYINT", "5", "PX", "100000"][..],
        &["SET", "t", "tok"],
        &["DELEX", "t", "IFEQ", "tok"],
        &["SET", "t2", "tok", "EX", "1000"],
        &["DIGEST", "t2"],
        &["DELIFEQ", "t2", "tok"],
    ] {
        let reply = c.call(call);
        assert!(!reply.is_error(), "{call:?}: {reply:?}");
    }
}

on_every_server! {
    /// With `COMMAND` renamed away, or renamed, the module registers what it registers on the
    /// same server without the rename: every GOBLIN command, and exactly the stand-ins the
    /// server lacks.
    fn with_command_renamed_the_stand_ins_are_the_ones_the_server_lacks(flavor: Flavor) {
        let plain = Server::builder(flavor).without_replica().start();
        let expected = registered(&mut plain.conn());
        let listed = |c: &mut Conn, command: &str| {
            let mut names = c.call(&[command, "LIST", "FILTERBY", "MODULE", "goblin"]).texts();
            names.sort();
            names
        };
        let expected_list = listed(&mut plain.conn(), "COMMAND");
        for stand_in in STAND_INS.map(String::from) {
            // Registered exactly where the flavor lacks its own (docs/native.md).
            let native = match stand_in.as_str() {
                "delifeq" => flavor.family() == Family::Valkey,
                // redis-cell's: no server of the matrix has it built in.
                "cl.throttle" => false,
                _ => flavor == Flavor::Redis810,
            };
            assert_eq!(expected_list.contains(&stand_in), !native, "{stand_in} on {flavor:?}");
        }
        for renamed_to in ["", "COMMAND-9f3a"] {
            // Replica mode's replica does not rename COMMAND; the comparison at the end runs.
            let server = Server::builder(flavor).args(["--rename-command", "COMMAND", renamed_to]).start();
            let mut c = server.conn();
            assert_eq!(registered(&mut c), expected, "COMMAND renamed to {renamed_to:?}");
            assert!(c.call(&["COMMAND", "COUNT"]).is_error(), "COMMAND is gone");
            if !renamed_to.is_empty() {
                assert_eq!(listed(&mut c, renamed_to), expected_list);
            }
            let log = server.log();
            assert!(!log.contains("not loaded"), "{log}");
        }
    }

    /// The issue's reproduction, and every other core command: with any of them renamed away,
    /// with `COMMAND` renamed too or not, the module refuses to load, says why in one line, and
    /// nothing of it is left: no command, no key.
    fn with_a_replicated_command_renamed_the_module_refuses_to_load(flavor: Flavor) {
        for command in REPLICATED_AS {
            for hardened in [false, true] {
                let mut args = vec!["--enable-module-command", "yes", "--rename-command", command, ""];
                if hardened {
                    args.extend(["--rename-command", "COMMAND", ""]);
                }
                let server = Server::builder(flavor).without_module().args(args).start();
                let mut c = server.conn();
                let reply = c.call(&["MODULE", "LOAD", module_path().to_str().unwrap()]);
                assert!(reply.is_error(), "{command}, COMMAND renamed: {hardened}: {reply:?}");
                let log = server.log();
                let refusals: Vec<&str> = log.lines().filter(|line| line.contains("goblin: not loaded")).collect();
                assert_eq!(refusals.len(), 1, "{log}");
                assert!(
                    refusals[0].contains("its writes replicate as") && refusals[0].contains(&format!("\"{command}\"")),
                    "{command}: {}", refusals[0]
                );
                assert!(c.call(&["GOBLIN.ZWINDOW", "z1", "*", "100", "3", "m"]).is_error());
                assert_eq!(c.call(&["DBSIZE"]), Reply::Int(0));
                let modules = format!("{:?}", c.call(&["MODULE", "LIST"]));
                assert!(!modules.contains("goblin"), "{modules}");
            }
        }
    }

    /// A core command renamed to another name is as unknown by its own: the module's write
    /// would be refused by the server when replicated. At startup (`loadmodule`) the refusal
    /// stops the server, as any module that fails to load does.
    fn a_renamed_command_stops_a_server_that_loads_the_module_at_startup(flavor: Flavor) {
        let dir = TempDir::new("renamed-startup");
        let mut server = std::process::Command::new(flavor.binary())
            .args(["--port", &free_port().to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--dir", dir.0.to_str().unwrap(), "--logfile", "server.log"])
            .args(["--rename-command", "COMMAND", "", "--rename-command", "PEXPIREAT", "PEXPIREAT-2"])
            .args(["--loadmodule", module_path().to_str().unwrap()])
            .spawn()
            .expect("run the server");
        let mut exited = None;
        wait_until(Duration::from_secs(10), || {
            exited = server.try_wait().expect("wait");
            exited.is_some()
        });
        if exited.is_none() {
            server.kill().expect("kill");
            server.wait().expect("reap");
        }
        assert!(exited.is_some_and(|status| !status.success()), "the server started: {exited:?}");
        let log = std::fs::read_to_string(dir.0.join("server.log")).expect("log");
        assert!(
            log.contains("goblin: not loaded: its writes replicate as [\"PEXPIREAT\"], which this server does not know"),
            "{log}"
        );
    }

    /// With COMMAND renamed, every command writes as it does anywhere else: a replica without
    /// the module and a server restarted from the AOF without it hold the same keys, values
    /// and expiries, and the same DEBUG DIGEST.
    fn with_command_renamed_a_replica_and_the_aof_end_identical(flavor: Flavor) {
        let primary_args = ["--rename-command", "COMMAND", "", DEBUG[0], DEBUG[1]];
        let pair = PersistedPair::start_with(flavor, "renamed", &primary_args, &DEBUG);
        let mut c = pair.primary.conn();
        workload(&pair.primary, &mut c);
        assert_eq!(c.call(&["WAIT", "1", "10000"]), Reply::Int(1));
        let on_primary = digest(&mut c);
        assert_ne!(on_primary, "0000000000000000000000000000000000000000");
        assert_eq!(digest(&mut pair.replica.conn()), on_primary, "the replica");
        let restarted = pair.check("*");
        assert!(restarted.0.len() >= 10, "{:?}", restarted.0);
    }

    /// CONFIG renamed away: the module loads (only INCREX's stand-in follows a setting, and
    /// says in the log what it assumes), and writes as anywhere else.
    fn with_config_renamed_the_module_loads_and_says_what_it_assumes(flavor: Flavor) {
        let server = Server::builder(flavor)
            .args(["--rename-command", "CONFIG", "", "--rename-command", "COMMAND", ""])
            .start();
        let mut c = server.conn();
        assert_eq!(c.call(&["GOBLIN.ZWINDOW", "z", "*", "100", "3", "m"]), Reply::Int(1));
        assert!(server.log().contains("CONFIG GET lazyfree-lazy-expire is not answered"));
    }

    /// A cluster node asks EXISTS whether it still serves a waiter's key: with EXISTS renamed
    /// away it refuses to load; a server that is not a cluster node does not need it.
    fn in_a_cluster_exists_renamed_refuses_the_load(flavor: Flavor) {
        let plain = Server::builder(flavor).args(["--rename-command", "EXISTS", ""]).start();
        assert_eq!(plain.conn().call(&["GOBLIN.LOCK", "l", "t", "1000"]), Reply::Status("OK".into()));
        let node = Server::builder(flavor)
            .cluster()
            .without_replica()
            .without_module()
            .args(["--enable-module-command", "yes", "--rename-command", "EXISTS", ""])
            .start();
        let mut c = node.conn();
        assert!(c.call(&["MODULE", "LOAD", module_path().to_str().unwrap()]).is_error());
        assert!(
            node.log().contains("goblin: not loaded: in a cluster it asks \"EXISTS\" whether a key is still served here"),
            "{}", node.log()
        );
    }
}

on_every_server! {
    /// A server whose own INCREX lacks the options the stand-in offers (here its `GETEX`, which
    /// knows none of them, renamed INCREX): the module steps aside, asks that INCREX whether it
    /// takes them, with a call no INCREX can run, and says in one line that it does not; Redis
    /// 8.10's own takes them all, and the log says nothing. No key is written either way.
    fn an_increx_without_the_bounds_is_said_in_the_log(flavor: Flavor) {
        const LACKS: &str = "goblin: this server's own INCREX lacks LBOUND, UBOUND, SATURATE or ENX";
        let native = Server::builder(flavor).start();
        let mut c = native.conn();
        let has_its_own = !registered(&mut c).contains(&"goblin_stand_in_increx_calls".to_string());
        assert_eq!(has_its_own, flavor == Flavor::Redis810);
        assert_eq!(c.call(&["DBSIZE"]), Reply::Int(0));
        assert!(!native.log().contains(LACKS), "{}", native.log());
        if has_its_own {
            // INCREX is a name already taken: GETEX cannot be renamed to it.
            return;
        }
        // The replica of replica mode renames GETEX too, so that it can follow.
        let rename = ["--rename-command", "GETEX", "INCREX"];
        let lacking = Server::builder(flavor).args(rename).replica_args(rename).start();
        let mut c = lacking.conn();
        assert!(!registered(&mut c).contains(&"goblin_stand_in_increx_calls".to_string()));
        let said: Vec<String> = lacking.log().lines().filter(|line| line.contains(LACKS)).map(String::from).collect();
        assert_eq!(said.len(), 1, "{}", lacking.log());
        assert_eq!(c.call(&["DBSIZE"]), Reply::Int(0));
        assert!(c.call(&["INCREX", "k", "LBOUND", "1"]).is_error());
    }
}
