//! GOBLIN.GCRA: its page's rows (run in tests/tables.rs), on every server, and on
//! Redis's GCRA too where Goblin does not differ on purpose; against the GCRA command Redis
//! wrote (Redis 8.10.2 built with it compiled back in), call for call; the cases of Redis's own
//! (disabled) `tests/unit/gcra.tcl`, in our words; its deliberate differences (a string value,
//! SET ... PXAT for the replicas); and what replicas and the AOF keep.

mod common;
use common::*;
use std::time::Duration;

fn gcra(c: &mut Conn, args: &[&str]) -> Reply {
    let mut call = vec!["GOBLIN.GCRA"];
    call.extend_from_slice(args);
    c.call(&call)
}

fn fields(reply: &Reply) -> Vec<i64> {
    reply.array().iter().map(Reply::int).collect()
}

/// The reference: Redis 8.10 with GCRA, without Goblin.
fn reference() -> Server {
    Server::builder(Flavor::Redis810)
        .binary(redis810_with_gcra())
        .without_module()
        .start()
}

on_every_server! {
    /// The "allowed" row's replication, which the table's own run leaves to replica mode's
    /// check (a replica without the module ends identical): every TAT stored reaches the AOF,
    /// the stream replicas get, as `SET key tat PXAT ms`, and nothing there names GCRA.
    fn the_tables_tats_are_propagated_as_set_pxat(flavor: Flavor) {
        let dir = TempDir::new("gcra-table-aof");
        let server = Server::builder(flavor).dir(&dir.0).args(AOF_ALWAYS).start();
        let mut c = server.conn();
        run_table(&mut c, "t", GOBLIN_GCRA_ROWS);
        let aof = aof_text(&dir.0);
        assert!(!aof.to_ascii_lowercase().contains("gcra"), "the AOF names GCRA");
        let commands = aof_commands(&aof);
        let mut keys = c.call(&["KEYS", "t:row0:*"]).texts();
        keys.sort();
        assert_eq!(keys.len(), 12, "the allowed row's keys: {keys:?}");
        for key in keys {
            let last = commands
                .iter()
                .rfind(|command| command.get(1) == Some(&key))
                .unwrap_or_else(|| panic!("nothing in the AOF for {key}"));
            let tat = c.call(&["GET", &key]).text();
            let at = c.call(&["PEXPIRETIME", &key]).int().to_string();
            assert_eq!(last, &["SET", &key, &tat, "PXAT", &at], "{key}");
        }
    }
}

/// Where the table's cases cannot run on Redis's GCRA: a setup that writes a string (Redis's
/// GCRA keeps a type of its own, and answers WRONGTYPE for any string), and a `PEEK` that
/// answers (Redis's GCRA has none: a syntax error there, as here for a misplaced one).
fn differs_from_redis(case: &Case) -> bool {
    let peeks = case
        .call
        .iter()
        .chain(case.each)
        .any(|word| word.eq_ignore_ascii_case("PEEK"))
        && !matches!(case.reply, Expect::Error(_));
    peeks
        || case
            .setup
            .iter()
            .any(|words| words[0].eq_ignore_ascii_case("SET"))
}

/// The table's replies and effects are Redis's GCRA's, not only Goblin's: every case that
/// does not set a string up, on the reference, under the name GCRA.
#[test]
fn every_row_of_the_page_table_is_redis_gcras() {
    let server = reference();
    let mut c = server.conn();
    let native = Native {
        ours: "GOBLIN.GCRA",
        theirs: "GCRA",
        differs: differs_from_redis,
    };
    let calls = run_table_natively(&mut c, "gcra", GOBLIN_GCRA_ROWS, &native);
    assert!(calls >= 120, "only {calls} calls on Redis's GCRA");
}

/// Limits whose emission interval (period / tokens per period) is at least 5 s: every call on
/// one key is made well within one interval, so no token comes back between the two servers'
/// calls and the counts must agree exactly.
const LIMITS: &[(&str, &str)] = &[
    ("1", "10"),
    ("2", "60"),
    ("10", "60"),
    ("1", "5"),
    ("4", "21.5"),
    ("100", "3600"),
    ("3", "1e6"),
];

/// A generated argument vector after the key: well formed mostly, otherwise anything.
fn arguments(rng: &mut Rng, limits: (&str, &str), max_burst: &str) -> Vec<String> {
    let (tokens_per_period, period) = limits;
    let mut args = vec![
        max_burst.to_string(),
        tokens_per_period.to_string(),
        period.to_string(),
    ];
    match rng.below(10) {
        0..=3 => {}
        4..=7 => {
            let tokens = *rng.pick(&["1", "2", "3", "5", "12", "tokens"]);
            args.extend([if tokens == "tokens" {
                "2".into()
            } else {
                tokens.into()
            }]);
            args.insert(3, (*rng.pick(&["TOKENS", "tokens", "ToKeNs"])).into());
        }
        _ => {
            // Something malformed, in one place.
            let at = rng.below(5) as usize;
            let bad = *rng.pick(&[
                "abc",
                "-1",
                "0",
                "1.5",
                "+1",
                "01",
                "",
                "nan",
                "inf",
                "1e12",
                "0x10",
                "1e400",
                "9223372036854775808",
                "TOKENS",
                "foo",
            ]);
            // A period both servers accept can shorten the emission interval below the 5 s the
            // counts rely on (1.5 s for 100 tokens is 15 ms): those go to the burst instead.
            let shortens = ["1.5", "+1", "01", "0x10"].contains(&bad);
            let at = if shortens && at == 2 { 0 } else { at };
            match at {
                0..=2 => args[at] = bad.to_string(),
                3 => args.extend(["TOKENS".into(), bad.into()]),
                _ => args.extend([bad.into(), "1".into()]),
            }
            if rng.below(4) == 0 {
                args.push("extra".into());
            }
        }
    }
    args
}

on_every_server! {
    fn gcra_matches_redis_gcra_call_for_call(flavor: Flavor) {
        let native_server = reference();
        let subject = Server::start(flavor);
        let (mut native, mut goblin) = (native_server.conn(), subject.conn());
        let mut rng = Rng::new(0x6c4a_2026);
        let (mut allowed, mut limited, mut errors) = (0, 0, 0);
        for key in 0..600 {
            let name = format!("gcra:{key}");
            // Another type now and then: WRONGTYPE on both.
            let other_type = rng.below(15) == 0;
            if other_type {
                native.call(&["RPUSH", &name, "x"]);
                goblin.call(&["RPUSH", &name, "x"]);
            }
            let limits = *rng.pick(LIMITS);
            let max_burst = rng.pick(&["0", "1", "2", "5", "9"]).to_string();
            for call in 0..8 {
                let args = arguments(&mut rng, limits, &max_burst);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let mut native_call = vec!["GCRA", name.as_str()];
                native_call.extend_from_slice(&args);
                let n = native.call(&native_call);
                let g = gcra(&mut goblin, &[&[name.as_str()][..], &args].concat());
                let context = format!("key {name} call {call}: {args:?}");
                match (&n, &g) {
                    (Reply::Error(n), Reply::Error(g)) => {
                        assert_eq!(g, &n.replace("'gcra'", "'goblin.gcra'"), "{context}");
                        errors += 1;
                    }
                    (Reply::Array(_), Reply::Array(_)) => {
                        let (n, g) = (fields(&n), fields(&g));
                        assert_eq!(g[..3], n[..3], "{context}: limited, limit, remaining (native {n:?})");
                        for field in [3, 4] {
                            assert!((g[field] - n[field]).abs() <= 1, "{context}: seconds fields, native {n:?}, Goblin {g:?}");
                        }
                        if n[0] == 1 { limited += 1 } else { allowed += 1 }
                    }
                    _ => panic!("{context}: native {n:?}, Goblin {g:?}"),
                }
                let (n_ttl, g_ttl) = (native.call(&["TTL", &name]).int(), goblin.call(&["TTL", &name]).int());
                assert!((n_ttl - g_ttl).abs() <= 1 && (n_ttl < 0) == (g_ttl < 0), "{context}: TTL {n_ttl} native, {g_ttl} Goblin");
            }
        }
        eprintln!("{}: GCRA {allowed} allowed, {limited} limited, {errors} errors", flavor.label());
        assert!(allowed > 1000 && limited > 500 && errors > 300, "allowed {allowed}, limited {limited}, errors {errors}");
    }
}

on_every_server! {
    /// The argument checks of Redis's gcra.tcl, and their order.
    fn arguments_are_checked_as_redis_checks_them(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
                for args in [&[][..], &["k"], &["k", "10"], &["k", "10", "5"], &["k", "1", "1", "1", "TOKENS", "1", "x"]] {
            assert_eq!(gcra(&mut c, args), Reply::Error(GOBLIN_GCRA_ARITY.into()), "{args:?}");
        }
        let cases: &[(&[&str], &str)] = &[
            (&["k", "-1", "5", "60"], GCRA_MUST_BE_POSITIVE),
            (&["k", "notanumber", "5", "60"], GCRA_MUST_BE_POSITIVE),
            (&["k", "10", "0", "60"], GCRA_AT_LEAST_ONE),
            (&["k", "10", "-1", "60"], GCRA_AT_LEAST_ONE),
            (&["k", "10", "notanumber", "60"], NOT_INTEGER),
            (&["k", "10", "5", "0"], GCRA_PERIOD_RANGE),
            (&["k", "10", "5", "-1"], GCRA_PERIOD_RANGE),
            (&["k", "10", "5", "notanumber"], NOT_FLOAT),
            (&["k", "10", "5", "60", "TOKENS"], GCRA_MISSING_TOKENS),
            (&["k", "10", "5", "60", "TOKENS", "0"], GCRA_AT_LEAST_ONE),
            (&["k", "10", "5", "60", "TOKENS", "-1"], GCRA_AT_LEAST_ONE),
            (&["k", "10", "5", "60", "TOKENS", "notanumber"], NOT_INTEGER),
            (&["k", "10", "5", "60", "COST", "2"], SYNTAX),
            // Positional: the first bad argument wins.
            (&["k", "abc", "0", "abc", "foo"], GCRA_MUST_BE_POSITIVE),
            (&["k", "1", "0", "abc", "foo"], GCRA_AT_LEAST_ONE),
        ];
        for (args, error) in cases {
            assert_error_writes_nothing(&mut c, &[&["GOBLIN.GCRA"][..], args].concat(), "k", error);
        }
        for args in [&["k", "10", "5", "60"][..], &["j", "10", "5", "60", "TOKENS", "2"], &["h", "10", "5", "0.5"]] {
            let reply = fields(&gcra(&mut c, args));
            assert_eq!((reply.len(), reply[0], reply[1]), (5, 0, 11), "{args:?}");
        }
    }
}

on_every_server! {
    /// The behaviour cases of Redis's gcra.tcl, with the exact values the formulas give.
    fn bursts_costs_and_recovery(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        // A burst of max_burst + 1, then limited, with the wait in retry_after.
        for remaining in (0..6).rev() {
            assert_eq!(fields(&gcra(&mut c, &["burst", "5", "1", "60"]))[..3], [0, 6, remaining]);
        }
        assert_eq!(fields(&gcra(&mut c, &["burst", "5", "1", "60"])), [1, 6, 0, 60, 360]);
        // reset_after: when the bucket is full again.
        for _ in 0..2 {
            gcra(&mut c, &["full", "5", "1", "60"]);
        }
        assert_eq!(fields(&gcra(&mut c, &["full", "5", "1", "60"]))[4], 180);
        assert_eq!(fields(&gcra(&mut c, &["full", "5", "1", "60", "TOKENS", "2"]))[4], 300);
        // TOKENS: a request costing several.
        assert_eq!(fields(&gcra(&mut c, &["cost", "5", "1", "60", "TOKENS", "3"])), [0, 6, 3, -1, 180]);
        // Dearer than the whole capacity: limited at once, never retried, nothing created.
        assert_eq!(fields(&gcra(&mut c, &["dear", "2", "1", "60", "TOKENS", "4"])), [1, 3, 3, -1, 0]);
        assert_eq!(c.call(&["EXISTS", "dear"]), Reply::Int(0));
        // max_burst 0: the sustained rate only.
        assert_eq!(fields(&gcra(&mut c, &["steady", "0", "1", "1"])), [0, 1, 0, -1, 1]);
        assert_eq!(fields(&gcra(&mut c, &["steady", "0", "1", "1"])), [1, 1, 0, 1, 1]);
        // Keys are independent.
        for _ in 0..3 {
            gcra(&mut c, &["one", "2", "1", "60"]);
        }
        assert_eq!(fields(&gcra(&mut c, &["one", "2", "1", "60"]))[0], 1);
        assert_eq!(fields(&gcra(&mut c, &["two", "2", "1", "60"]))[0], 0);
        // Tokens come back: limited now, allowed once an emission interval has passed.
        gcra(&mut c, &["recover", "1", "1", "1"]);
        gcra(&mut c, &["recover", "1", "1", "1"]);
        let limited = fields(&gcra(&mut c, &["recover", "1", "1", "1"]));
        assert_eq!(limited[0], 1);
        std::thread::sleep(Duration::from_millis(1100));
        assert_eq!(fields(&gcra(&mut c, &["recover", "1", "1", "1"]))[0], 0);
        // Overflows of the microsecond arithmetic are errors, and create nothing.
        for args in [&["o", "1", "1", "86400", "TOKENS", "200000000"][..], &["o", "200000000", "1", "86400"], &["o", "1", "1", "2147483647", "TOKENS", "2147483647"]] {
            let reply = gcra(&mut c, args);
            assert!(matches!(&reply, Reply::Error(e) if e.ends_with("would cause an overflow")), "{args:?}: {reply:?}");
        }
        assert_eq!(c.call(&["EXISTS", "o"]), Reply::Int(0));
    }
}

on_every_server! {
    /// The deliberate differences: the TAT is a plain string, with the key expiring at it; a
    /// key of another type is WRONGTYPE; a string that is not a TAT is an error, left as it is.
    fn the_tat_is_a_string_that_expires_with_it(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let before = server_ms(&mut c);
        assert_eq!(fields(&gcra(&mut c, &["k", "5", "1", "60"])), [0, 6, 5, -1, 60]);
        let after = server_ms(&mut c);
        assert_eq!(c.call(&["TYPE", "k"]), Reply::Status("string".into()));
        let tat: i64 = c.call(&["GET", "k"]).text().parse().expect("the TAT");
        assert!((before * 1000 + 60_000_000..=after * 1000 + 60_000_000).contains(&tat), "TAT {tat}");
        assert_eq!(tat % 1000, 0, "the server's clock is whole milliseconds");
        assert_eq!(c.call(&["PEXPIRETIME", "k"]).int(), tat / 1000);
        // A TAT written by anyone is read back.
        c.call(&["SET", "mine", &(after * 1000 + 120_000_000).to_string()]);
        assert_eq!(fields(&gcra(&mut c, &["mine", "5", "1", "60"]))[..3], [0, 6, 3]);
        c.call(&["RPUSH", "list", "x"]);
        assert_error_writes_nothing(&mut c, &["GOBLIN.GCRA", "list", "5", "1", "60"], "list", WRONGTYPE);
        // An argument error comes before the key's type.
        assert_error_writes_nothing(&mut c, &["GOBLIN.GCRA", "list", "abc", "1", "60"], "list", GCRA_MUST_BE_POSITIVE);
        c.call(&["SET", "text", "hello"]);
        assert_error_writes_nothing(&mut c, &["GOBLIN.GCRA", "text", "5", "1", "60"], "text", GCRA_NOT_A_TAT);
        c.call(&["SET", "negative", "-5"]);
        assert_error_writes_nothing(&mut c, &["GOBLIN.GCRA", "negative", "5", "1", "60"], "negative", GCRA_NEGATIVE_TAT);
    }
}

on_every_server! {
    /// A limited call writes nothing: no value, no TTL, no replication, no event.
    fn a_limited_call_writes_nothing(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        gcra(&mut c, &["k", "0", "1", "60"]);
        assert_limited_writes_nothing(&mut c, &["GOBLIN.GCRA", "k", "0", "1", "60"], "k");
        c.call(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
        let events = keyspace_events(&server, &mut c, |c| {
            gcra(c, &["k", "0", "1", "60"]);
            gcra(c, &["fresh", "0", "1", "60"]);
        });
        assert_eq!(events, ["gcra fresh", "expire fresh"]);
    }
}

/// Runs `args`, which must be limited, and asserts it changed nothing.
fn assert_limited_writes_nothing(c: &mut Conn, args: &[&str], key: &str) {
    let before = snapshot(c, key);
    let dirty_before = dirty(c);
    let reply = c.call(args);
    assert!(!reply.is_error(), "{args:?}: {reply:?}");
    assert_eq!(fields(&reply)[0], 1, "{args:?} was to be limited");
    assert_eq!(snapshot(c, key), before, "{args:?} changed {key}");
    assert_eq!(
        dirty(c),
        dirty_before,
        "{args:?} wrote or propagated something"
    );
}

on_every_server! {
    /// Replicas and the AOF get `SET key tat PXAT ms`: a replica without the module holds the
    /// same TATs and expiries, and a restart from the AOF keeps them.
    fn replicas_and_the_aof_keep_every_tat_and_expiry(flavor: Flavor) {
        let servers = PersistedPair::start(flavor, "gcra-aof");
        let mut p = servers.primary.conn();
        let mut rng = Rng::new(0x9c2a);
        let (mut allowed, mut limited) = (0, 0);
        for i in 0..400 {
            let key = format!("k{}", rng.below(40));
            let cost = (1 + rng.below(3)).to_string();
            // A burst of 21 per key: most calls pass, the busiest keys get limited.
            let reply = fields(&gcra(&mut p, &[&key, "20", "2", "60", "TOKENS", &cost]));
            if reply[0] == 0 { allowed += 1 } else { limited += 1 }
            if i % 50 == 0 {
                gcra(&mut p, &[&key, "0", "1", "1e-3"]);
            }
        }
        assert!(allowed > 200 && limited > 10, "allowed {allowed}, limited {limited}");
        drop(p);
        let (on_primary, aof) = servers.check("k*");
        assert!(on_primary.len() >= 5, "{on_primary:?}");
        assert!(!aof.to_ascii_lowercase().contains("gcra"), "the AOF names GCRA");
        let sets = aof_commands(&aof).into_iter().filter(|c| c[0] == "SET").count();
        assert!(sets >= allowed, "{sets} SETs in the AOF for {allowed} allowed calls");
    }
}
