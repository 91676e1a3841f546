//! Goblin's DELEX and DIGEST against Redis 8.10's, and Goblin's DELIFEQ against Valkey 9.1's,
//! call for call: thousands of generated calls, valid and invalid, each on the same preset key
//! on both servers, comparing the reply, what is left of the key (type, value, expiry) and the
//! keyspace hits and misses the call counted. On the server that has the command itself, the
//! comparison runs between that server with Goblin loaded and without it.

mod common;
use common::*;

/// A far-future absolute expiry (2100-01-01), the same on both servers.
const PRESET_EXPIRY: &str = "4102444800000";

const STRINGS: &[&[u8]] = &[
    b"",
    b"hello",
    b"12345",
    b"-999",
    b"9223372036854775807",
    b"v",
    b"\x00\xff\x00binary",
    "caf\u{e9} \u{1f600}".as_bytes(),
    b"with space ",
    b"0",
];

fn long_value() -> Vec<u8> {
    (0..5000).map(|i| b"abcdefghij"[i % 10]).collect()
}

/// What the key holds before a call.
fn preset(rng: &mut Rng) -> Vec<Vec<Vec<u8>>> {
    let b = |s: &str| s.as_bytes().to_vec();
    let mut commands = vec![vec![b("DEL"), b("k")]];
    let value = if rng.below(8) == 0 {
        long_value()
    } else {
        rng.pick(STRINGS).to_vec()
    };
    match rng.below(14) {
        0 | 1 => {}
        2 => commands.push(vec![b("RPUSH"), b("k"), b("a")]),
        3 => commands.push(vec![b("HSET"), b("k"), b("f"), b("v")]),
        4 => commands.push(vec![b("ZADD"), b("k"), b("1"), b("m")]),
        5..=9 => commands.push(vec![b("SET"), b("k"), value]),
        _ => commands.push(vec![b("SET"), b("k"), value, b("PXAT"), b(PRESET_EXPIRY)]),
    }
    commands
}

/// A digest argument: a real one (of a value the key may hold) in either case, or a malformed
/// one.
fn digest_argument(rng: &mut Rng) -> Vec<u8> {
    match rng.below(6) {
        0..=2 => {
            let value = if rng.below(8) == 0 {
                long_value()
            } else {
                rng.pick(STRINGS).to_vec()
            };
            let digest = goblin_core::native::digest::digest(&value).to_vec();
            if rng.below(2) == 0 {
                digest.to_ascii_uppercase()
            } else {
                digest
            }
        }
        3 => rng
            .pick(&[
                &b"zzzzzzzzzzzzzzzz"[..],
                b"0000000000000000",
                b"9555e8555c62dcf\0",
            ])
            .to_vec(),
        _ => rng
            .pick(&[
                &b""[..],
                b"123",
                b"1234567890",
                b"9555e8555c62dcfd0",
                b"9555e8555c62dcf",
            ])
            .to_vec(),
    }
}

/// An operand: now and then the value the key holds, otherwise any.
fn operand(rng: &mut Rng, held: Option<&[u8]>) -> Vec<u8> {
    match held {
        Some(value) if rng.below(2) == 0 => value.to_vec(),
        _ if rng.below(8) == 0 => long_value(),
        _ => rng.pick(STRINGS).to_vec(),
    }
}

/// A generated DELEX call.
fn delex_call(rng: &mut Rng, held: Option<&[u8]>) -> Vec<Vec<u8>> {
    let mut call = vec![b"DELEX".to_vec(), b"k".to_vec()];
    let token = |rng: &mut Rng| -> Vec<u8> {
        let word = *rng.pick(&[
            "IFEQ", "IFNE", "IFDEQ", "IFDNE", "ifeq", "IfDnE", "IF", "EQ", "BOGUS", "IFEQ\0x",
        ]);
        word.as_bytes().to_vec()
    };
    match rng.below(10) {
        0 | 1 => {}
        2..=7 => {
            let name = token(rng);
            let digest = name.to_ascii_uppercase().starts_with(b"IFD");
            let operand = match held {
                Some(value) if digest && rng.below(2) == 0 => {
                    goblin_core::native::digest::digest(value).to_vec()
                }
                _ if digest => digest_argument(rng),
                _ => operand(rng, held),
            };
            call.extend([name, operand]);
        }
        8 => call.push(token(rng)),
        _ => {
            let name = token(rng);
            call.extend([name, b"a".to_vec(), b"b".to_vec()]);
        }
    }
    call
}

/// The key's whole state, read inside one MULTI after the call.
const READS: &[&[&str]] = &[
    &["TYPE", "k"],
    &["GET", "k"],
    &["LRANGE", "k", "0", "-1"],
    &["HGETALL", "k"],
    &["ZRANGE", "k", "0", "-1", "WITHSCORES"],
    &["PEXPIRETIME", "k"],
];

/// `INFO stats`'s keyspace hits and misses.
fn hits_and_misses(info: &Reply) -> (i64, i64) {
    let text = info.text();
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(&format!("{name}:")))
            .and_then(|value| value.trim().parse::<i64>().ok())
            .unwrap_or_else(|| panic!("INFO stats has no {name}"))
    };
    (field("keyspace_hits"), field("keyspace_misses"))
}

/// One call on one server: its reply, the hits and misses it counted, and the key's state.
fn run_call(
    c: &mut Conn,
    preset: &[Vec<Vec<u8>>],
    call: &[Vec<u8>],
) -> (Reply, (i64, i64), Vec<Reply>) {
    let mut commands: Vec<Vec<Vec<u8>>> = preset.to_vec();
    commands.push(vec![b"MULTI".to_vec()]);
    commands.push(vec![b"INFO".to_vec(), b"stats".to_vec()]);
    commands.push(call.to_vec());
    commands.push(vec![b"INFO".to_vec(), b"stats".to_vec()]);
    for read in READS {
        commands.push(read.iter().map(|a| a.as_bytes().to_vec()).collect());
    }
    commands.push(vec![b"EXEC".to_vec()]);
    let replies = c.pipeline(&commands);
    // A call the server refuses before it runs (a wrong argument count for a fixed arity)
    // aborts the transaction: its own reply is the refusal.
    if let Reply::Error(_) = replies.last().expect("EXEC") {
        let queued = replies[preset.len() + 2].clone();
        return (queued, (0, 0), Vec::new());
    }
    let exec = replies.last().expect("EXEC").array().to_vec();
    let (before, after) = (hits_and_misses(&exec[0]), hits_and_misses(&exec[2]));
    (
        exec[1].clone(),
        (after.0 - before.0, after.1 - before.1),
        exec[3..].to_vec(),
    )
}

/// Runs `steps` generated calls on `reference` and `subject`, comparing everything.
/// Makes a call, from the value the key holds if it is a string.
type Generator = fn(&mut Rng, Option<&[u8]>) -> Vec<Vec<u8>>;

/// `call` makes a call from the value the key holds, if it is a string.
fn differential(
    reference: &Server,
    subject: &Server,
    steps: usize,
    seed: u64,
    call: Generator,
) -> (usize, usize, usize) {
    let (mut native, mut goblin) = (reference.conn(), subject.conn());
    let mut rng = Rng::new(seed);
    let (mut deleted, mut kept, mut errors) = (0, 0, 0);
    for step in 0..steps {
        let preset = preset(&mut rng);
        let held = preset
            .last()
            .filter(|p| p[0] == b"SET")
            .map(|p| p[2].as_slice());
        let call = call(&mut rng, held);
        let n = run_call(&mut native, &preset, &call);
        let g = run_call(&mut goblin, &preset, &call);
        let shown: Vec<String> = call
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let context = format!(
            "step {step}: {shown:?} after {:?}",
            preset
                .last()
                .map(|p| String::from_utf8_lossy(&p[0]).into_owned())
        );
        assert_eq!(g.0, n.0, "{context}: reply");
        assert_eq!(g.1, n.1, "{context}: keyspace hits and misses");
        assert_eq!(g.2, n.2, "{context}: the key afterwards");
        match &n.0 {
            Reply::Error(_) => errors += 1,
            Reply::Int(1) => deleted += 1,
            _ => kept += 1,
        }
    }
    (deleted, kept, errors)
}

on_every_server! {
    fn delex_matches_redis_delex_call_for_call(flavor: Flavor) {
        let reference = Server::builder(Flavor::Redis810).without_module().start();
        let subject = Server::start(flavor);
        let (deleted, kept, errors) = differential(&reference, &subject, 3000, 0x00de_1ec5, delex_call);
        eprintln!("{}: DELEX {deleted} deleted, {kept} kept, {errors} errors", flavor.label());
        assert!(deleted > 500 && kept > 500 && errors > 300, "deleted {deleted}, kept {kept}, errors {errors}");
    }
}

on_every_server! {
    fn digest_matches_redis_digest_call_for_call(flavor: Flavor) {
        let reference = Server::builder(Flavor::Redis810).without_module().start();
        let subject = Server::start(flavor);
        let digest_call = |rng: &mut Rng, _: Option<&[u8]>| match rng.below(12) {
            0 => vec![b"DIGEST".to_vec()],
            1 => vec![b"DIGEST".to_vec(), b"k".to_vec(), b"extra".to_vec()],
            _ => vec![b"DIGEST".to_vec(), b"k".to_vec()],
        };
        let (_, replied, errors) = differential(&reference, &subject, 2000, 0x00d1_6e57, digest_call);
        assert!(replied > 1000 && errors > 200, "replied {replied}, errors {errors}");
    }
}

on_every_server! {
    fn delifeq_matches_valkey_delifeq_call_for_call(flavor: Flavor) {
        let reference = Server::builder(Flavor::Valkey91).without_module().start();
        let subject = Server::start(flavor);
        let delifeq_call = |rng: &mut Rng, held: Option<&[u8]>| {
            let mut call = vec![b"DELIFEQ".to_vec(), b"k".to_vec()];
            match rng.below(12) {
                0 => {}
                1 => call.extend([b"a".to_vec(), b"b".to_vec()]),
                _ => call.push(operand(rng, held)),
            }
            call
        };
        let (deleted, kept, errors) = differential(&reference, &subject, 3000, 0x0de1_1fe9, delifeq_call);
        eprintln!("{}: DELIFEQ {deleted} deleted, {kept} kept, {errors} errors", flavor.label());
        assert!(deleted > 300 && kept > 500 && errors > 300, "deleted {deleted}, kept {kept}, errors {errors}");
    }
}
