//! An argument storm: tens of thousands of generated argument vectors for every command, on
//! every server. The server never dies, every reply is one SPEC allows (and the exact error where
//! the input decides it), and afterwards no key breaks SPEC: no counter or window without a TTL,
//! no empty sorted set.

mod common;
use common::*;

const ARITY: [&str; 3] = [INCREX_ARITY, ZWINDOW_ARITY, CAD_ARITY];

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

/// Returns the command, and what its reply must be checked against.
fn generate(rng: &mut Rng, big_left: &mut usize) -> (usize, Vec<Vec<u8>>) {
    let which = rng.below(3) as usize;
    let key = format!("k{}", rng.below(12)).into_bytes();
    let mut args: Vec<Vec<u8>> = match which {
        0 => vec![b"GOBLIN.INCREX".to_vec(), key, number(rng)],
        1 => vec![
            b"GOBLIN.ZWINDOW".to_vec(),
            key,
            number(rng),
            number(rng),
            number(rng),
            member(rng, big_left),
        ],
        _ => vec![b"GOBLIN.CAD".to_vec(), key, member(rng, big_left)],
    };
    // One in ten with a wrong argument count.
    if rng.below(10) == 0 {
        if rng.below(2) == 0 {
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

fn check(which: usize, args: &[Vec<u8>], reply: &Reply) {
    let expected_len = [3, 6, 3][which];
    let shown = || {
        args.iter()
            .map(|a| format!("{:?}", String::from_utf8_lossy(&a[..a.len().min(40)])))
            .collect::<Vec<_>>()
            .join(" ")
    };
    if args.len() != expected_len {
        assert_eq!(reply, &Reply::Error(ARITY[which].into()), "{}", shown());
        return;
    }
    match (which, reply) {
        (0, Reply::Int(_)) => assert!(canonical_integer(&args[2]), "{} accepted", shown()),
        (0, Reply::Error(e)) => {
            if !canonical_integer(&args[2]) {
                assert_eq!(e, NOT_INTEGER, "{}", shown());
            } else {
                assert!(
                    [NOT_INTEGER, OVERFLOW, WRONGTYPE, INCREX_INVALID_EXPIRE].contains(&e.as_str()),
                    "{}: {e}",
                    shown()
                );
            }
        }
        (1, Reply::Int(n)) => {
            assert!(*n == 0 || *n == 1, "{}: {n}", shown());
            assert!(
                canonical_integer(&args[4]),
                "{} accepted a bad limit",
                shown()
            );
        }
        (1, Reply::Error(e)) => {
            assert!(
                [NOT_FLOAT, NOT_INTEGER, WRONGTYPE, ZWINDOW_INVALID_EXPIRE].contains(&e.as_str()),
                "{}: {e}",
                shown()
            );
            if e == NOT_INTEGER {
                assert!(!canonical_integer(&args[4]), "{}: {e}", shown());
            }
        }
        (2, Reply::Int(n)) => assert!(*n == 0 || *n == 1, "{}: {n}", shown()),
        (2, Reply::Error(e)) => assert_eq!(e, WRONGTYPE, "{}", shown()),
        (_, other) => panic!("{}: unexpected {other:?}", shown()),
    }
}

on_every_server! {
    fn an_argument_storm_leaves_the_server_and_the_keyspace_sound(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let mut rng = Rng::new(0x5707_2026 ^ flavor as u64);
        let mut big_left = 6;
        let (mut ints, mut errors) = (0, 0);
        for _batch in 0..120 {
            let commands: Vec<(usize, Vec<Vec<u8>>)> = (0..500).map(|_| generate(&mut rng, &mut big_left)).collect();
            let wire: Vec<Vec<Vec<u8>>> = commands.iter().map(|(_, args)| args.clone()).collect();
            let replies = c.pipeline(&wire);
            for ((which, args), reply) in commands.iter().zip(&replies) {
                check(*which, args, reply);
                if reply.is_error() { errors += 1 } else { ints += 1 }
            }
        }
        assert!(ints > 10_000 && errors > 10_000, "{ints} integer replies, {errors} errors: the storm is lopsided");
        assert_eq!(c.call(&["PING"]), Reply::Status("PONG".into()));

        // Every key the storm left obeys SPEC.
        for key in c.call(&["KEYS", "*"]).texts() {
            let kind = c.call(&["TYPE", &key]).status();
            let pttl = c.call(&["PTTL", &key]).int();
            match kind.as_str() {
                "string" => assert!(pttl > 0 || pttl == -2, "counter {key} without a TTL ({pttl})"),
                "zset" => {
                    assert!(pttl > 0 || pttl == -2, "window {key} without a TTL ({pttl})");
                    let card = c.call(&["ZCARD", &key]).int();
                    assert!(card > 0 || pttl == -2, "window {key} is an empty set");
                }
                "none" => {}
                other => panic!("{key} is a {other}"),
            }
        }
    }
}
