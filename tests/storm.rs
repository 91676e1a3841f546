//! An argument storm: tens of thousands of generated argument vectors, on every server, for
//! every command the module registered there, each built from the server's own description of
//! the command (`COMMAND DOCS`: its arguments, tokens, choices and options, in any order; see
//! `common/commands.rs`), so a command added later is in the storm without a line here. The
//! server never dies; a call outside the command's arity gets the server's arity error; every
//! error is one the docs list (tests/common/errors.rs); where the input alone decides the reply
//! (GOBLIN.INCREX's, GOBLIN.ZWINDOW's and GOBLIN.CAD's positional integers), it is the exact one. Afterwards
//! no key breaks the contract: nothing Goblin's own commands wrote is left without its TTL, and
//! no sorted set is empty.

mod common;
use common::*;

/// Numbers and near-numbers that servers and parsers get wrong.
const TRICKY: &[&str] = &[
    "0",
    "-0",
    "+0",
    "1",
    "-1",
    "5",
    "10",
    "60",
    "0.5",
    "1.5",
    "-0.0",
    "1e3",
    "1E3",
    "1e400",
    "-1e400",
    "1e-300",
    "4.9e-324",
    "1.7976931348623157e308",
    "inf",
    "-inf",
    "+inf",
    "Infinity",
    "nan",
    "NaN",
    "-nan",
    "0x10",
    "0X1p4",
    " 5",
    "5 ",
    "\t5",
    "5\n",
    "",
    " ",
    "abc",
    "1,5",
    "1_000",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "00",
    "007",
    "1.",
    ".5",
    "-.5",
    "1e",
    "e5",
    "\0",
    "3600",
    "9223372036854775",
];

/// Timeouts of blocking commands that the parser takes: the shortest ones.
const SHORT_TIMEOUTS: &[&str] = &["0.001", "0.002", "0.0001", "1e-300"];

/// Timeouts every parser refuses.
const BAD_TIMEOUTS: &[&str] = &[
    "-1",
    "-0.001",
    "-inf",
    "inf",
    "1e400",
    "nan",
    "x",
    "",
    "9223372036854775807",
];

/// Whether the server's integer parser (string2ll) accepts `arg`: exactly the canonical
/// decimal form of an i64.
fn canonical_integer(arg: &[u8]) -> bool {
    std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .is_some_and(|v| v.to_string().as_bytes() == arg)
}

fn number(rng: &mut Rng) -> Vec<u8> {
    match rng.below(6) {
        0 | 1 => rng.pick(TRICKY).as_bytes().to_vec(),
        2 => (rng.below(200) as i64 - 20).to_string().into_bytes(),
        3 => format!("{}", (rng.next_u64() as i64)).into_bytes(),
        4 => format!("{:.3}", rng.below(100_000) as f64 / 7.0).into_bytes(),
        _ => bytes(rng, 6),
    }
}

fn bytes(rng: &mut Rng, max: u64) -> Vec<u8> {
    (0..rng.below(max + 1))
        .map(|_| rng.below(256) as u8)
        .collect()
}

fn member(rng: &mut Rng, big_left: &mut usize) -> Vec<u8> {
    if *big_left > 0 && rng.below(4000) == 0 {
        *big_left -= 1;
        return vec![b'x'; 1 << 20]; // a 1 MB member
    }
    match rng.below(4) {
        0 => rng.pick(&["a", "b", "worker-1", ""]).as_bytes().to_vec(),
        _ => bytes(rng, 24),
    }
}

/// A value for an argument of the kind `arg` names.
fn value(rng: &mut Rng, arg: &ArgShape, big_left: &mut usize, plausible: bool) -> Vec<u8> {
    match arg.kind.as_str() {
        // A blocking command's timeout: a few milliseconds at most, or refused, never 0 (for
        // ever), so that a waiter in the pipeline holds it up for no longer than that.
        _ if arg.name == "timeout" => {
            let pool = if rng.below(2) == 0 {
                SHORT_TIMEOUTS
            } else {
                BAD_TIMEOUTS
            };
            rng.pick(pool).as_bytes().to_vec()
        }
        // A third of the numbers plausible, so that calls also get past their parsers; all of
        // them in a plausible call, so that a command with many numbers (GOBLIN.MGCRA's four
        // per policy) gets past them too.
        "integer" | "unix-time" if plausible || rng.below(3) == 0 => {
            (1 + rng.below(100)).to_string().into_bytes()
        }
        "double" if plausible || rng.below(3) == 0 => format!("{}.5", rng.below(100)).into_bytes(),
        "integer" | "double" | "unix-time" => number(rng),
        _ => member(rng, big_left),
    }
}

/// A key: Goblin's own commands write the `g` keys, and every command may touch the `n` keys,
/// so that the keyspace checks below know who wrote what. A third of an own command's keys are
/// its own (`g:<command>:<n>`), so that it meets keys of its own type, not only the others'.
fn key(rng: &mut Rng, own: bool, command: &str) -> Vec<u8> {
    if own && rng.below(3) == 0 {
        return format!("g:{command}:{}", rng.below(6)).into_bytes();
    }
    let pool = if own && rng.below(4) != 0 { "g" } else { "n" };
    format!("{pool}{}", rng.below(12)).into_bytes()
}

/// One call of a command of `shapes`; one in ten with a wrong argument count.
fn generate(rng: &mut Rng, shapes: &[Shape], big_left: &mut usize) -> (usize, Vec<Vec<u8>>) {
    let which = rng.below(shapes.len() as u64) as usize;
    let shape = &shapes[which];
    let own = shape.is_goblins_own();
    let plausible = rng.below(8) == 0;
    let mut args = shape.generate(
        rng,
        &mut |rng, arg| value(rng, arg, big_left, plausible),
        &mut |rng| key(rng, own, &shape.name),
    );
    if rng.below(10) == 0 {
        if rng.below(2) == 0 && args.len() > 1 {
            let drop = 1 + rng.below(args.len() as u64 - 1) as usize;
            args.truncate(args.len() - drop);
        } else {
            for _ in 0..=rng.below(3) {
                args.push(number(rng));
            }
        }
    }
    (which, args)
}

/// The exact judge of GOBLIN.INCREX, GOBLIN.ZWINDOW and GOBLIN.CAD, whose integer arguments
/// alone decide whether the call gets past its parser. Past their positional arguments come
/// options (`COST n`), with errors of their own.
fn judge(name: &str, args: &[Vec<u8>], reply: &Reply, shown: &dyn Fn() -> String) {
    let positional = match name {
        "goblin.increx" => 3,
        "goblin.zwindow" => 6,
        "goblin.cad" => 3,
        _ => args.len(),
    };
    let options = args.len() > positional;
    let option_errors = [
        SYNTAX,
        NOT_INTEGER,
        AT_LEAST_ONE,
        ZWINDOW_NOT_COST_ENTRIES,
        FENCE_NO_SLOT_TAG,
        FENCE_CLOCK_BEHIND,
        FENCE_LATEST_WRONG_TYPE,
        FENCE_OWN_WRONG_TYPE,
        TOO_MANY_PERMITS,
    ];
    match (name, reply) {
        (_, Reply::Error(e)) if options && option_errors.contains(&e.as_str()) => {}
        ("goblin.increx", Reply::Int(_)) => {
            assert!(canonical_integer(&args[2]), "{} accepted", shown())
        }
        ("goblin.increx", Reply::Error(e)) => {
            if !canonical_integer(&args[2]) {
                assert_eq!(e, NOT_INTEGER, "{}", shown());
            } else {
                assert!(
                    [
                        NOT_INTEGER,
                        OVERFLOW,
                        WRONGTYPE,
                        GOBLIN_INCREX_INVALID_EXPIRE
                    ]
                    .contains(&e.as_str()),
                    "{}: {e}",
                    shown()
                );
            }
        }
        ("goblin.zwindow", Reply::Int(n)) => {
            // With FENCE, a grant is its fencing token.
            let fenced = args[6..]
                .iter()
                .any(|arg| arg.eq_ignore_ascii_case(b"FENCE"));
            assert!(*n == 0 || *n == 1 || (fenced && *n > 1), "{}: {n}", shown());
            assert!(
                canonical_integer(&args[4]),
                "{} accepted a bad limit",
                shown()
            );
        }
        ("goblin.zwindow", Reply::Error(e)) => {
            assert!(
                [
                    NOT_FLOAT,
                    NOT_INTEGER,
                    WRONGTYPE,
                    GOBLIN_ZWINDOW_INVALID_EXPIRE
                ]
                .contains(&e.as_str()),
                "{}: {e}",
                shown()
            );
            if e == NOT_INTEGER {
                assert!(!canonical_integer(&args[4]), "{}: {e}", shown());
            }
        }
        ("goblin.cad", Reply::Int(n)) => assert!(*n == 0 || *n == 1, "{}: {n}", shown()),
        ("goblin.cad", Reply::Error(e)) => assert_eq!(e, WRONGTYPE, "{}", shown()),
        ("goblin.increx" | "goblin.zwindow" | "goblin.cad", other) => {
            panic!("{}: unexpected {other:?}", shown())
        }
        _ => {}
    }
}

/// Keys of other types where Goblin keeps fencing tokens, for half the keys the storm names:
/// each key's latest token's name, and its holders' own for the members it names most. A client
/// that may write a key's hash tag can make them; every command must then refuse or leave them,
/// never write over them, and never fail inside. Their names.
fn plant_where_tokens_are_kept(c: &mut Conn) -> Vec<String> {
    let mut planted = Vec::new();
    for n in (0..12).step_by(2) {
        for pool in ["g", "n"] {
            let key = format!("{pool}{n}");
            let latest = format!("{{{key}}}\0goblin:fence\0{key}");
            planted.push(latest.clone());
            for member in ["a", "b", "worker-1", ""] {
                planted.push(format!("{latest}\0{member}"));
            }
        }
    }
    for (i, name) in planted.iter().enumerate() {
        let reply = match i % 4 {
            0 => c.call(&["RPUSH", name, "x"]),
            1 => c.call(&["HSET", name, "f", "v"]),
            2 => c.call(&["SADD", name, "x"]),
            _ => c.call(&["XADD", name, "*", "f", "v"]),
        };
        assert!(!reply.is_error(), "{name:?}: {reply:?}");
    }
    planted
}

fn check(shape: &Shape, args: &[Vec<u8>], reply: &Reply) {
    let shown = || {
        args.iter()
            .map(|a| format!("{:?}", String::from_utf8_lossy(&a[..a.len().min(40)])))
            .collect::<Vec<_>>()
            .join(" ")
    };
    if !shape.arity_fits(args.len()) {
        assert_eq!(reply, &Reply::Error(shape.arity_error()), "{}", shown());
        return;
    }
    if let Reply::Error(e) = reply {
        assert!(!e.contains("internal error"), "{}: {e}", shown());
        // The module's own arity check (GOBLIN.GCRA's "at most six"), its expiry error, or one
        // of the texts the docs list.
        let own = [
            shape.arity_error(),
            format!("ERR invalid expire time in '{}' command", shape.name),
        ];
        assert!(
            own.contains(e) || ALL_ERRORS.contains(&e.as_str()),
            "{}: an error no doc lists: {e}",
            shown()
        );
    }
    judge(&shape.name, args, reply, &shown);
}

on_every_server! {
    fn an_argument_storm_leaves_the_server_and_the_keyspace_sound(flavor: Flavor) {
        // The server times blocked clients out on its cron (hz): a waiter of a millisecond
        // holds the pipeline up to 1000/hz ms.
        let server = Server::builder(flavor).args(["--hz", "200"]).start();
        let mut c = server.conn();
        let shapes = module_commands(&mut c);
        let planted = plant_where_tokens_are_kept(&mut c);
        let mut rng = Rng::new(0x5707_2026 ^ flavor as u64);
        let mut big_left = 6;
        let (mut replies_seen, mut errors) = (0, 0);
        let mut called = vec![0usize; shapes.len()];
        let mut answered = vec![0usize; shapes.len()];
        let mut leaseless = std::collections::HashSet::new();
        // About 3,200 calls a command, however many the server registered: with more
        // commands, more batches, so that each still gets past its parser as often.
        let batches = (shapes.len() * 3_200).div_ceil(500);
        for _batch in 0..batches {
            let commands: Vec<(usize, Vec<Vec<u8>>)> = (0..500).map(|_| generate(&mut rng, &shapes, &mut big_left)).collect();
            let wire: Vec<Vec<Vec<u8>>> = commands.iter().map(|(_, args)| args.clone()).collect();
            let replies = c.pipeline(&wire);
            for ((which, args), reply) in commands.iter().zip(&replies) {
                check(&shapes[*which], args, reply);
                // A token lock taken without a lease (0 ms: redis-py's `timeout=None`) is the
                // one string of Goblin's own that keeps no TTL, by request (`OK`, or with
                // FENCE its token).
                let name = shapes[*which].name.as_str();
                if matches!(name, "goblin.lock" | "goblin.block") && args.get(3).is_some_and(|ms| ms == b"0") && matches!(reply, Reply::Status(ok) if ok == "OK") || matches!((name, reply), ("goblin.lock" | "goblin.block", Reply::Int(_)) if args.get(3).is_some_and(|ms| ms == b"0")) {
                    leaseless.insert(args[1].clone());
                }
                // A fixed window of 0 ms keeps its counter without a TTL, by request (the
                // pages' `window` 0 rows), in GOBLIN.FWINDOW and each window of GOBLIN.MFWINDOW.
                if !reply.is_error() {
                    match name {
                        "goblin.fwindow" if args.get(2).is_some_and(|w| w == b"0") => {
                            leaseless.insert(args[1].clone());
                        }
                        "goblin.mfwindow" => {
                            for window in args[2..].chunks(3).filter(|w| w.len() == 3 && w[1] == b"0") {
                                leaseless.insert(window[0].clone());
                            }
                        }
                        _ => {}
                    }
                }
                called[*which] += 1;
                if reply.is_error() { errors += 1 } else { replies_seen += 1; answered[*which] += 1 }
            }
        }
        assert!(replies_seen > 10_000 && errors > 10_000, "{replies_seen} replies, {errors} errors: the storm is lopsided");
        for ((shape, calls), answered) in shapes.iter().zip(&called).zip(&answered) {
            assert!(*calls > 2_000, "{}: only {calls} calls", shape.name);
            assert!(*answered > 100, "{}: only {answered} of {calls} calls got past an error", shape.name);
        }
        assert_eq!(c.call(&["PING"]), Reply::Status("PONG".into()));

        // Every key the storm left keeps the contract. What Goblin's own commands wrote (the
        // `g` keys) expires, but a lock taken without a lease and a fixed window of 0; the
        // stand-ins may leave strings without a TTL, as the natives do.
        for key in c.call(&["KEYS", "*"]).texts() {
            if planted.contains(&key) {
                continue;
            }
            // Read in one transaction: a lease of a few milliseconds would otherwise expire
            // between the reads, and a set seen with a TTL be counted once it has gone.
            let read = c.pipeline(&[
                vec!["MULTI"],
                vec!["TYPE", &key],
                vec!["PTTL", &key],
                vec!["ZCARD", &key],
                vec!["EXEC"],
            ]);
            let Some(Reply::Array(read)) = read.last() else {
                panic!("{key}: the transaction failed: {read:?}");
            };
            let (kind, pttl) = (read[0].status(), read[1].int());
            let own = key.starts_with('g');
            match kind.as_str() {
                // A PTTL of 0 is a TTL that ends in this very millisecond. The transaction saw
                // the key, so its PTTL is never -2 (gone).
                "string" => assert!(
                    !own || pttl >= 0 || leaseless.contains(key.as_bytes()),
                    "{key}: a string without a TTL ({pttl})"
                ),
                "zset" => {
                    assert!(!own || pttl >= 0, "{key}: a window without a TTL ({pttl})");
                    let card = read[2].int();
                    assert!(card > 0, "{key} is an empty set (PTTL {pttl})");
                }
                "none" => {}
                other => panic!("{key} is a {other}"),
            }
        }
        for key in &planted {
            assert_ne!(c.call(&["TYPE", key]), Reply::Status("string".into()), "{key:?} was written over");
        }
        assert!(!server.log().contains("internal error"), "{}", server.log());
    }
}
