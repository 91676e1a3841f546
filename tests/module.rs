//! The module as the server sees it: loading, command metadata, key positions, ACL categories,
//! keyspace notifications and WATCH.

mod common;
use common::*;

on_every_server! {
    /// `ver` is Cargo.toml's version, as major * 10000 + minor * 100 + patch.
    fn module_list_shows_goblin_at_its_version(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let modules = c.call(&["MODULE", "LIST"]);
        let goblin = modules
            .array()
            .iter()
            .find(|m| m.array()[1].text() == "goblin")
            .unwrap_or_else(|| panic!("{modules:?}"))
            .clone();
        let parts: Vec<i64> = env!("CARGO_PKG_VERSION").split('.').map(|part| part.parse().unwrap()).collect();
        assert_eq!(goblin.array()[3], Reply::Int(parts[0] * 10000 + parts[1] * 100 + parts[2]), "{goblin:?}");
    }
}

on_every_server! {
    fn loadmodule_in_a_config_file(flavor: Flavor) {
        let dir = TempDir::new("conf");
        let conf = dir.0.join("goblin.conf");
        std::fs::write(&conf, format!("loadmodule {}\n", module_path().display())).unwrap();
        let server = Server::builder(flavor)
            .without_module()
            .dir(&dir.0)
            .arg("--include")
            .arg(conf.to_str().unwrap())
            .start();
        let mut c = server.conn();
        assert_eq!(zwindow(&mut c, "w", "1", "10", "1", "a"), Reply::Int(1));
    }
}

/// `COMMAND INFO name` as (arity, flags, first, last, step, acl categories).
fn command_info(c: &mut Conn, name: &str) -> (i64, Vec<String>, i64, i64, i64, Vec<String>) {
    let info = c.call(&["COMMAND", "INFO", name]);
    let entry = info.array()[0].array().to_vec();
    assert_eq!(entry[0].text(), name);
    let flags = entry[2].texts();
    let categories = entry.get(6).map(Reply::texts).unwrap_or_default();
    (
        entry[1].int(),
        flags,
        entry[3].int(),
        entry[4].int(),
        entry[5].int(),
        categories,
    )
}

on_every_server! {
    fn command_info_has_keys_flags_and_acl_categories(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let (_, flags, first, last, step, categories) = command_info(&mut c, "goblin.increx");
        assert_eq!((first, last, step), (1, 1, 1));
        for flag in ["write", "denyoom", "fast"] {
            assert!(flags.contains(&flag.to_string()), "increx flags {flags:?}");
        }
        let (_, zflags, first, last, step, zcategories) = command_info(&mut c, "goblin.zwindow");
        assert_eq!((first, last, step), (1, 1, 1));
        for flag in ["write", "denyoom"] {
            assert!(zflags.contains(&flag.to_string()), "zwindow flags {zflags:?}");
        }
        assert!(!zflags.contains(&"fast".to_string()), "ZWINDOW evicts O(evicted): not fast");
        if flavor.has_module_acl_categories() {
            assert!(categories.contains(&"@write".into()) && categories.contains(&"@string".into()), "{categories:?}");
            assert!(categories.contains(&"@fast".into()), "{categories:?}");
            assert!(zcategories.contains(&"@write".into()) && zcategories.contains(&"@sortedset".into()), "{zcategories:?}");
            assert!(zcategories.contains(&"@slow".into()), "{zcategories:?}");
        }
        let (_, cflags, first, last, step, ccategories) = command_info(&mut c, "goblin.cad");
        assert_eq!((first, last, step), (1, 1, 1));
        for flag in ["write", "fast"] {
            assert!(cflags.contains(&flag.to_string()), "cad flags {cflags:?}");
        }
        assert!(!cflags.contains(&"denyoom".to_string()), "a release must work at maxmemory");
        if flavor.has_module_acl_categories() {
            assert!(ccategories.contains(&"@write".into()), "{ccategories:?}");
        }
        assert_eq!(c.call(&["COMMAND", "GETKEYS", "GOBLIN.CAD", "lock:a", "t"]).texts(), ["lock:a"]);
        assert_eq!(c.call(&["COMMAND", "GETKEYS", "GOBLIN.INCREX", "rl:a", "5"]).texts(), ["rl:a"]);
        assert_eq!(
            c.call(&["COMMAND", "GETKEYS", "GOBLIN.ZWINDOW", "rl:b", "1", "2", "3", "m"]).texts(),
            ["rl:b"]
        );
    }
}

on_every_server! {
    fn acl_categories_and_key_patterns_apply(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        c.call(&["ACL", "SETUSER", "limited", "on", "nopass", "~rl:*", "+@all"]);
        c.call(&["ACL", "SETUSER", "reader", "on", "nopass", "~*", "+@all", "-@write"]);
        let mut limited = server.conn();
        limited.call(&["AUTH", "limited", "x"]);
        assert_eq!(increx(&mut limited, "rl:ok", "10"), Reply::Int(1));
        let denied = increx(&mut limited, "other", "10");
        assert!(matches!(&denied, Reply::Error(e) if e.starts_with("NOPERM")), "{denied:?}");
        let denied = zwindow(&mut limited, "other", "1", "10", "1", "m");
        assert!(matches!(&denied, Reply::Error(e) if e.starts_with("NOPERM")), "{denied:?}");
        assert_eq!(c.call(&["EXISTS", "other"]), Reply::Int(0));
        if flavor.has_module_acl_categories() {
            let mut reader = server.conn();
            reader.call(&["AUTH", "reader", "x"]);
            for args in [&["GOBLIN.INCREX", "k", "1"][..], &["GOBLIN.ZWINDOW", "k", "1", "10", "1", "m"]] {
                let denied = reader.call(args);
                assert!(matches!(&denied, Reply::Error(e) if e.starts_with("NOPERM")), "{denied:?}");
            }
        }
    }
}

on_every_server! {
    fn watch_sees_writes_and_only_writes(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let mut other = server.conn();
        c.call(&["ZADD", "w", "100", "a"]);
        c.call(&["SET", "s", "x"]);
        // Each case: a call from another client while `key` is watched, and whether EXEC aborts.
        let cases: Vec<(&str, Vec<&str>, bool)> = vec![
            ("w", vec!["GOBLIN.ZWINDOW", "w", "101", "10", "1", "b"], false), // rejected: no write
            ("s", vec!["GOBLIN.INCREX", "s", "10"], false),                   // error: no write
            ("w", vec!["GOBLIN.ZWINDOW", "w", "101", "10", "2", "b"], true),
            ("n", vec!["GOBLIN.INCREX", "n", "10"], true),
        ];
        for (key, args, aborts) in cases {
            c.call(&["WATCH", key]);
            other.call(&args);
            c.call(&["MULTI"]);
            c.call(&["PING"]);
            let exec = c.call(&["EXEC"]);
            assert_eq!(exec == Reply::Nil, aborts, "{args:?}: EXEC gave {exec:?}");
        }
    }
}

on_every_server! {
    fn command_docs_describe_every_command(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        for (name, since, args) in [
            ("goblin.increx", "0.1.0", vec!["key", "seconds", "cost"]),
            (
                "goblin.zwindow",
                "0.1.0",
                vec!["key", "now", "window", "limit", "member", "cost", "xx", "permits", "separator", "fence"],
            ),
            ("goblin.cad", "0.1.0", vec!["key", "value", "permits", "separator"]),
            ("goblin.gcra", "0.2.0", vec!["key", "max-burst", "tokens-per-period", "period", "count", "peek"]),
            ("goblin.mgcra", "0.3.0", vec!["numpolicies", "policy", "count", "mode"]),
            ("goblin.zwstats", "0.3.0", vec!["key", "now", "window"]),
            ("goblin.swindow", "0.3.0", vec!["key", "window", "limit", "cost"]),
            ("goblin.swstats", "0.3.0", vec!["key", "window"]),
            ("goblin.lock", "0.3.0", vec!["key", "token", "milliseconds", "fence"]),
            ("goblin.block", "0.3.0", vec!["key", "token", "milliseconds", "timeout", "fence"]),
            ("goblin.extend", "0.3.0", vec!["key", "token", "milliseconds", "replace", "fence"]),
            (
                "goblin.bzwindow",
                "0.3.0",
                vec!["key", "window", "limit", "member", "timeout", "permits", "separator", "fence"],
            ),
            ("goblin.fwindow", "0.4.0", vec!["key", "window", "increment", "limit-block"]),
            ("goblin.fwstats", "0.4.0", vec!["key"]),
            ("goblin.mfwindow", "0.4.0", vec!["numwindows", "counter", "increment"]),
            ("cl.throttle", "0.4.0", vec!["key", "max-burst", "count-per-period", "period", "quantity"]),
        ] {
            let docs = c.call(&["COMMAND", "DOCS", name]);
            let docs = docs.array();
            assert_eq!(docs[0].text(), name);
            let fields = docs[1].array();
            let field = |wanted: &str| {
                fields
                    .chunks(2)
                    .find(|pair| pair[0].text() == wanted)
                    .map(|pair| pair[1].clone())
                    .unwrap_or_else(|| panic!("{name}: COMMAND DOCS has no {wanted}: {fields:?}"))
            };
            assert!(field("summary").text().len() > 20, "{name}");
            assert_eq!(field("since").text(), since, "{name}");
            assert!(field("complexity").text().starts_with("O("), "{name}");
            let arguments = field("arguments");
            let of = |arg: &Reply, wanted: &str| {
                arg.array().chunks(2).find(|p| p[0].text() == wanted).map(|p| p[1].text())
            };
            let names: Vec<String> = arguments.array().iter().map(|arg| of(arg, "name").unwrap()).collect();
            assert_eq!(names, args, "{name}");
            // An option added after its command came says when, as the server's own do.
            for arg in arguments.array() {
                let added = of(arg, "since");
                let later = matches!(of(arg, "name").as_deref(), Some("permits" | "separator" | "fence" | "peek"));
                assert_eq!(added.as_deref(), later.then_some("0.4.0"), "{name}: {arg:?}");
            }
        }
        assert!(!server.log().contains("refused the docs"), "{}", server.log());
        // The arity is the server's to check now, with the same words.
        let reply = c.call(&["GOBLIN.CAD", "k"]);
        assert_eq!(reply, Reply::Error(GOBLIN_CAD_ARITY.into()));
    }
}

on_every_server! {
    fn info_goblin_counts_calls_outcomes_and_errors(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let z = |c: &mut Conn, now: &str, member: &str| zwindow(c, "w", now, "10", "2", member);
        z(&mut c, "1", "a"); // admitted
        z(&mut c, "2", "b"); // admitted
        z(&mut c, "3", "c"); // rejected
        z(&mut c, "4", "a"); // refreshed
        z(&mut c, "13", "d"); // b (2) and... a moved to 4: evicts b; admitted
        zwindow(&mut c, "w", "x", "10", "2", "e"); // error
        increx(&mut c, "n", "10");
        increx(&mut c, "w", "10"); // WRONGTYPE
        cad(&mut c, "w", "a"); // released
        cad(&mut c, "w", "zzz");
        let info = c.call(&["INFO", "goblin"]).text();
        let field = |name: &str| -> u64 {
            info.lines()
                .find_map(|l| l.strip_prefix(&format!("goblin_{name}:")))
                .unwrap_or_else(|| panic!("no {name} in {info}"))
                .trim()
                .parse()
                .unwrap()
        };
        assert!(info.starts_with("# goblin"), "{info}");
        assert_eq!(field("zwindow_calls"), 6);
        assert_eq!(field("zwindow_errors"), 1);
        assert_eq!(field("zwindow_admitted"), 3);
        assert_eq!(field("zwindow_refreshed"), 1);
        assert_eq!(field("zwindow_rejected"), 1);
        assert_eq!(field("zwindow_evicted"), 1);
        assert_eq!(field("increx_calls"), 2);
        assert_eq!(field("increx_errors"), 1);
        assert_eq!(field("cad_calls"), 2);
        assert_eq!(field("cad_released"), 1);
        assert_eq!(field("cad_errors"), 0);
        // Part of INFO everything, and of INFO modules' neighbourhood.
        assert!(c.call(&["INFO", "everything"]).text().contains("goblin_zwindow_rejected:1"));
    }
}

on_every_server! {
    /// Effects replicate by core command name: with one renamed away, the module would write
    /// what it cannot replicate, so it refuses to load and says why.
    fn refuses_to_load_when_an_effect_command_is_renamed(flavor: Flavor) {
        let server = Server::builder(flavor)
            .without_module()
            .args(["--enable-module-command", "yes", "--rename-command", "PEXPIREAT", ""])
            .start();
        let mut c = server.conn();
        let reply = c.call(&["MODULE", "LOAD", module_path().to_str().unwrap()]);
        assert!(reply.is_error(), "{reply:?}");
        let log = server.log();
        assert!(log.contains("goblin: not loaded: its writes replicate as") && log.contains("PEXPIREAT"), "{log}");
        assert!(zwindow(&mut c, "w", "1", "10", "1", "a").is_error());
        assert_no_callback_left(&mut c);
    }
}
