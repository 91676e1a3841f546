//! Goblin's INCREX against the native INCREX of Redis 8.10, call for call: thousands of
//! generated calls, valid and invalid, each on the same preset key on both servers, comparing
//! the reply, the type, the value and the expiry. On Redis 8.10 itself the module steps aside,
//! and the same comparison runs between Redis 8.10 with Goblin loaded and without it.

mod common;
use common::*;

/// A far-future absolute expiry (2100-01-01), the same on both servers.
const PRESET_EXPIRY: &str = "4102444800000";

/// What the key holds before a call.
fn preset(rng: &mut Rng) -> Vec<Vec<String>> {
    const VALUES: &[&str] = &[
        "0",
        "5",
        "-3",
        "9223372036854775807",
        "9223372036854775806",
        "-9223372036854775808",
        "-9223372036854775807",
        "1.5",
        "0.1",
        "10.0",
        "1e2",
        "1e20",
        "inf",
        "-inf",
        "abc",
        "",
        " 5",
        "007",
        "-0",
        "3.0e3",
        "0x10",
        "100000000000000000000",
        "1e4000",
        "-2.5",
        "4",
    ];
    let set = |value: &str| vec!["SET".to_string(), "k".into(), value.to_string()];
    let mut commands = vec![vec!["DEL".to_string(), "k".into()]];
    match rng.below(16) {
        0..=2 => {}
        3 => commands.push(vec!["RPUSH".into(), "k".into(), "a".into()]),
        4 => commands.push(vec!["ZADD".into(), "k".into(), "1".into(), "m".into()]),
        5..=10 => {
            let value = rng.pick(VALUES).to_string();
            commands.push(set(&value));
        }
        _ => {
            let value = rng.pick(VALUES).to_string();
            let mut with_ttl = set(&value);
            with_ttl.extend(["PXAT".to_string(), PRESET_EXPIRY.to_string()]);
            commands.push(with_ttl);
        }
    }
    commands
}

/// One generated option (with its value), in a random letter case, now and then malformed.
fn option(rng: &mut Rng, valkey_subject: bool) -> Vec<String> {
    const INTEGERS: &[&str] = &[
        "0",
        "1",
        "-1",
        "5",
        "-7",
        "1000",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "abc",
        "1.5",
        "",
        " 1",
        "+1",
        "01",
    ];
    const FLOATS: &[&str] = &[
        "0.1",
        "-0.2",
        "1.5",
        "1e20",
        "-1e20",
        "2.5e-3",
        "inf",
        "-inf",
        "nan",
        "1e5000",
        "abc",
        "10",
        "-0",
        "0x10",
        "1e-4940",
        "+3",
        ".5",
        "1.18973149535723176502e+4932",
    ];
    // Relative times long enough that no key expires while a step runs: on Redis 7.0, without a
    // command-time snapshot, the reads after the call would see a 1 ms TTL run out.
    const RELATIVE: &[&str] = &[
        "10000",
        "100000",
        "0",
        "-5",
        "abc",
        "9223372036854775807",
        "9223372036854776",
        "9223372036854775",
        "1.5",
    ];
    const ABSOLUTE: &[&str] = &[
        "1",
        "100",
        "0",
        "-5",
        "abc",
        "9223372036854775807",
        "9223372036854776",
        "9223372036854775",
        "4102444800",
        "4102444800000",
        "1.5",
    ];
    let token = |rng: &mut Rng, word: &str| -> String {
        match rng.below(4) {
            0 => word.to_lowercase(),
            1 => word
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if i % 2 == 0 {
                        c.to_ascii_lowercase()
                    } else {
                        c
                    }
                })
                .collect(),
            _ => word.to_string(),
        }
    };
    let mut words = match rng.below(17) {
        0 | 1 => vec![token(rng, "BYINT"), rng.pick(INTEGERS).to_string()],
        2 | 3 => vec![token(rng, "BYFLOAT"), rng.pick(FLOATS).to_string()],
        4 | 5 => {
            let pool = if rng.below(2) == 0 { INTEGERS } else { FLOATS };
            let bound = if rng.below(2) == 0 {
                "LBOUND"
            } else {
                "UBOUND"
            };
            vec![token(rng, bound), rng.pick(pool).to_string()]
        }
        6 | 7 => vec![token(rng, "SATURATE")],
        8 => vec![token(rng, "EX"), rng.pick(RELATIVE).to_string()],
        9 => vec![token(rng, "PX"), rng.pick(RELATIVE).to_string()],
        10 => vec![token(rng, "EXAT"), rng.pick(ABSOLUTE).to_string()],
        11 => vec![token(rng, "PXAT"), rng.pick(ABSOLUTE).to_string()],
        12 => vec![token(rng, "PERSIST")],
        13 => vec![token(rng, "ENX")],
        // Valkey's NX | XX: a syntax error on Redis; on a Valkey subject they are its dialect,
        // tested on their own below.
        14 if !valkey_subject => {
            let condition = *rng.pick(&["NX", "XX"]);
            vec![token(rng, condition)]
        }
        _ => vec![rng
            .pick(&["BOGUS", "SAT", "BYINTX", "EXPIRE", "KEEPTTL", "BYINT\0x"])
            .to_string()],
    };
    // A value-taking option at the very end with its value cut off.
    if words.len() == 2 && rng.below(15) == 0 {
        words.pop();
    }
    words
}

/// A well-formed call: a mode, bounds in its type, SATURATE, an expiry, ENX, each now and
/// then, in a random order.
fn well_formed(rng: &mut Rng) -> Vec<String> {
    const INTEGERS: &[&str] = &[
        "0",
        "1",
        "-1",
        "3",
        "-4",
        "10",
        "100",
        "-100",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775000",
    ];
    const FLOATS: &[&str] = &[
        "0.1", "-0.25", "1.5", "3", "-10", "1e20", "2.5e-3", "1e4000", "-1e4000", "inf", "-inf",
        "0",
    ];
    const EXPIRIES: &[(&str, &str)] = &[
        ("EX", "100"),
        ("PX", "100000"),
        ("EXAT", "4102444800"),
        ("PXAT", "4102444800000"),
        ("EXAT", "1"),
        ("PXAT", "1"),
        ("EX", "1000000"),
        ("PX", "10000"),
    ];
    let mut parts: Vec<Vec<String>> = Vec::new();
    let float = rng.below(3) == 0;
    let numbers = if float { FLOATS } else { INTEGERS };
    match rng.below(3) {
        0 => {}
        _ if float => parts.push(vec!["BYFLOAT".into(), rng.pick(&FLOATS[..9]).to_string()]),
        _ => parts.push(vec!["BYINT".into(), rng.pick(INTEGERS).to_string()]),
    }
    if float && parts.is_empty() {
        parts.push(vec!["BYFLOAT".into(), "0.5".into()]);
    }
    let (mut lower, mut upper) = (None, None);
    if rng.below(3) == 0 {
        lower = Some(*rng.pick(numbers));
    }
    if rng.below(3) == 0 {
        upper = Some(*rng.pick(numbers));
    }
    for (token, bound) in [("LBOUND", lower), ("UBOUND", upper)] {
        if let Some(bound) = bound {
            parts.push(vec![token.into(), bound.into()]);
        }
    }
    if rng.below(3) == 0 {
        parts.push(vec!["SATURATE".into()]);
    }
    match rng.below(6) {
        0 | 1 => {
            let (token, value) = *rng.pick(EXPIRIES);
            parts.push(vec![token.into(), value.into()]);
            if rng.below(3) == 0 {
                parts.push(vec!["ENX".into()]);
            }
        }
        2 => parts.push(vec!["PERSIST".into()]),
        _ => {}
    }
    // A random order.
    for i in (1..parts.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        parts.swap(i, j);
    }
    parts.concat()
}

/// A call's options: well formed two times in three, otherwise a few generated ones that may
/// be anything.
fn options(rng: &mut Rng, valkey_subject: bool) -> Vec<String> {
    if rng.below(3) != 0 {
        return well_formed(rng);
    }
    let mut words = Vec::new();
    for _ in 0..rng.below(5) {
        words.extend(option(rng, valkey_subject));
    }
    words
}

/// What one server did with one call.
#[derive(Debug)]
struct Outcome {
    reply: Reply,
    kind: Reply,
    value: Reply,
    expires_at: i64,
    /// The server's clock just before and just after the call (the same instant on servers
    /// with a command-time snapshot).
    before_ms: i64,
    after_ms: i64,
}

fn call(c: &mut Conn, preset: &[Vec<String>], args: &[String]) -> Outcome {
    let mut commands: Vec<Vec<String>> = preset.to_vec();
    let mut increx = vec!["INCREX".to_string(), "k".into()];
    increx.extend(args.iter().cloned());
    for command in [
        vec!["MULTI".to_string()],
        vec!["TIME".into()],
        increx,
        vec!["TIME".into()],
        vec!["TYPE".into(), "k".into()],
        vec!["GET".into(), "k".into()],
        vec!["PEXPIRETIME".into(), "k".into()],
        vec!["EXEC".into()],
    ] {
        commands.push(command);
    }
    let replies = c.pipeline(&commands);
    let exec = replies.last().expect("EXEC").array().to_vec();
    Outcome {
        before_ms: time_ms(&exec[0]),
        reply: exec[1].clone(),
        after_ms: time_ms(&exec[2]),
        kind: exec[3].clone(),
        value: exec[4].clone(),
        expires_at: exec[5].int(),
    }
}

/// The relative expiry a call asked for, in milliseconds, if it was a valid EX or PX.
fn relative_ttl_ms(args: &[String]) -> Option<i64> {
    let at = args
        .iter()
        .position(|a| a.eq_ignore_ascii_case("EX") || a.eq_ignore_ascii_case("PX"))?;
    let value: i64 = args.get(at + 1)?.parse().ok()?;
    if args[at].eq_ignore_ascii_case("EX") {
        value.checked_mul(1000)
    } else {
        Some(value)
    }
}

/// The two expiries agree: the same absolute time, or, for a relative EX / PX, each the same
/// distance from its own server's clock at the call.
fn same_expiry(native: &Outcome, goblin: &Outcome, args: &[String]) -> bool {
    if native.expires_at == goblin.expires_at {
        return true;
    }
    let Some(ttl) = relative_ttl_ms(args) else {
        return false;
    };
    let armed_then = |o: &Outcome| (o.before_ms..=o.after_ms).contains(&(o.expires_at - ttl));
    armed_then(native) && armed_then(goblin)
}

/// Generated INCREX calls, each on the reference Redis 8.10 and on `flavor` with Goblin, the
/// outcomes compared; in RESP3 if `resp3` (its replies have types RESP2 lacks: doubles, maps).
fn differential(flavor: Flavor, resp3: bool, steps: usize) {
    let reference = Server::builder(Flavor::Redis810).without_module().start();
    let subject = Server::start(flavor);
    let (mut native, mut goblin) = (reference.conn(), subject.conn());
    if resp3 {
        assert!(!native.hello3().is_error() && !goblin.hello3().is_error());
    }
    let valkey = flavor.family() == Family::Valkey;
    let mut rng = Rng::new(0x1ec2_0260 ^ flavor.version().1 as u64 ^ u64::from(resp3));
    let (mut applied, mut rejected, mut errors, mut expiries) = (0, 0, 0, 0);
    let mut doubles = 0;
    for step in 0..steps {
        let preset = preset(&mut rng);
        let args = options(&mut rng, valkey);
        let n = call(&mut native, &preset, &args);
        let g = call(&mut goblin, &preset, &args);
        let context = format!("step {step}: {preset:?} INCREX k {args:?}");
        assert_eq!(g.reply, n.reply, "{context}: reply");
        assert_eq!(g.kind, n.kind, "{context}: type");
        assert_eq!(g.value, n.value, "{context}: value");
        assert!(
            same_expiry(&n, &g, &args),
            "{context}: native expiry {n:?}, Goblin's {g:?}"
        );
        match &n.reply {
            Reply::Error(_) => errors += 1,
            Reply::Array(items)
                if items[1] == Reply::Int(0) || items[1] == Reply::Bulk(b"0".to_vec()) =>
            {
                rejected += 1
            }
            _ => applied += 1,
        }
        if let Reply::Array(items) = &n.reply {
            doubles += items
                .iter()
                .filter(|i| matches!(i, Reply::Double(_)))
                .count();
        }
        expiries += usize::from(n.expires_at > 0);
    }
    eprintln!("{} (RESP{}): {applied} applied, {rejected} rejected, {errors} errors, {expiries} with an expiry, {doubles} doubles", flavor.label(), if resp3 { 3 } else { 2 });
    // The generator must reach every kind of outcome, or the comparison proves little.
    let at_least = |n: usize| n * steps / 4000;
    assert!(
        applied > at_least(500)
            && rejected > at_least(100)
            && errors > at_least(500)
            && expiries > at_least(300),
        "applied {applied}, rejected {rejected}, errors {errors}, with an expiry {expiries}"
    );
    // RESP3 replies BYFLOAT's value as a double: the run must have compared some.
    assert!(
        !resp3 || doubles > at_least(200),
        "{doubles} double replies"
    );
}

on_every_server! {
    fn increx_matches_the_native_increx_call_for_call(flavor: Flavor) {
        differential(flavor, false, 4000);
    }
}

on_every_server! {
    fn increx_matches_the_native_increx_call_for_call_in_resp3(flavor: Flavor) {
        differential(flavor, true, 2000);
    }
}

on_every_server! {
    /// Valkey's own INCREX takes NX | XX, which the stand-in takes on Valkey: a skipped call
    /// replies `[current or 0, 0]`, in Redis's pair, and writes nothing. On a Redis server they are a syntax error, as in Redis 8.10.
    fn nx_and_xx_are_valkeys_dialect(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let pair = |a: i64, b: i64| Reply::Array(vec![Reply::Int(a), Reply::Int(b)]);
        if flavor.family() == Family::Redis {
            for args in [&["INCREX", "k", "NX"][..], &["INCREX", "k", "XX"], &["INCREX", "k", "BYINT", "2", "nx"]] {
                assert_eq!(c.call(args), Reply::Error(SYNTAX.into()), "{args:?}");
            }
            assert_eq!(c.call(&["EXISTS", "k"]), Reply::Int(0));
            return;
        }
        // XX on a missing key: skipped, and the key is not created.
        assert_eq!(c.call(&["INCREX", "k", "XX"]), pair(0, 0));
        assert_eq!(c.call(&["EXISTS", "k"]), Reply::Int(0));
        // NX on a missing key: counted as usual.
        assert_eq!(c.call(&["INCREX", "k", "NX", "EX", "100"]), pair(1, 1));
        let armed = c.call(&["PEXPIRETIME", "k"]).int();
        // NX on an existing key: skipped, value and TTL untouched, nothing propagated.
        let dirty = dirty(&mut c);
        assert_eq!(c.call(&["INCREX", "k", "nx", "BYINT", "5", "PERSIST"]), pair(1, 0));
        assert_eq!(c.call(&["GET", "k"]), Reply::Bulk(b"1".to_vec()));
        assert_eq!(c.call(&["PEXPIRETIME", "k"]).int(), armed);
        assert_eq!(common::dirty(&mut c), dirty, "a skipped call wrote nothing");
        // XX on an existing key: counted.
        assert_eq!(c.call(&["INCREX", "k", "XX", "BYINT", "5"]), pair(6, 5));
        // In float mode the skip replies in the mode's types.
        c.call(&["SET", "f", "1.5"]);
        assert_eq!(
            c.call(&["INCREX", "f", "BYFLOAT", "1", "NX"]),
            Reply::Array(vec![Reply::Bulk(b"1.5".to_vec()), Reply::Bulk(b"0".to_vec())])
        );
        // One condition at most.
        for args in [&["INCREX", "k", "NX", "XX"][..], &["INCREX", "k", "XX", "XX"], &["INCREX", "k", "NX", "nx"]] {
            assert_eq!(c.call(args), Reply::Error(SYNTAX.into()), "{args:?}");
        }
        // The value is checked first: a skipped call still refuses what is not a number.
        c.call(&["SET", "s", "abc"]);
        assert_eq!(
            c.call(&["INCREX", "s", "NX"]),
            Reply::Error(NOT_INTEGER.into())
        );
    }
}

on_every_server! {
    /// The AOF and the replicas get SET with the final value and absolute time, never INCREX;
    /// an expiry already past goes as DEL, or UNLINK under lazyfree-lazy-expire.
    fn the_aof_holds_set_del_and_unlink_never_increx(flavor: Flavor) {
        let dir = TempDir::new("increx-aof");
        let server = Server::builder(flavor).dir(&dir.0).args(AOF_ALWAYS).start();
        let mut c = server.conn();
        c.call(&["INCREX", "a", "BYINT", "5"]);
        c.call(&["INCREX", "a", "BYFLOAT", "0.5", "EX", "100"]);
        c.call(&["INCREX", "a", "BYFLOAT", "1", "PERSIST"]);
        c.call(&["CONFIG", "SET", "lazyfree-lazy-expire", "no"]);
        c.call(&["INCREX", "a", "BYFLOAT", "1", "PXAT", "1"]);
        c.call(&["INCREX", "b"]);
        c.call(&["CONFIG", "SET", "lazyfree-lazy-expire", "yes"]);
        c.call(&["INCREX", "b", "EXAT", "1"]);
        let aof = aof_text(&dir.0);
        let native = c.call(&["COMMAND", "INFO", "increx"]).array()[0].array()[2]
            .texts()
            .iter()
            .all(|flag| flag != "module");
        if !native {
            assert!(!aof.to_ascii_lowercase().contains("increx"), "the AOF names INCREX:\n{aof}");
        }
        let commands = aof_commands(&aof);
        let sets: Vec<&Vec<String>> = commands.iter().filter(|c| c[0].eq_ignore_ascii_case("set")).collect();
        assert_eq!(sets[0][1..], ["a", "5", "KEEPTTL"]);
        assert_eq!(sets[1][1..3], ["a", "5.5"]);
        assert_eq!(sets[1][3], "PXAT");
        assert_eq!(sets[2][1..], ["a", "6.5"]);
        let deletions: Vec<String> = commands
            .iter()
            .filter(|c| ["del", "unlink"].contains(&c[0].to_ascii_lowercase().as_str()))
            .map(|c| format!("{} {}", c[0].to_ascii_lowercase(), c[1]))
            .collect();
        assert_eq!(deletions, ["del a", "unlink b"]);
    }
}
