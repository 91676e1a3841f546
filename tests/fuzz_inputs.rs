//! The fuzzers' inputs on real servers: every file of `fuzz/corpus/<target>`, and 64 seeded
//! mutations of each (bytes changed, cut and grown, as libFuzzer mutates its corpus), read as its
//! target reads it (`fuzz/fuzz_targets/`), sent as the commands the target models: GOBLIN.GCRA,
//! GOBLIN.MGCRA, GOBLIN.FWINDOW (and GOBLIN.MFWINDOW), GOBLIN.INCREX, GOBLIN.ZWINDOW, with each
//! word the target folds into range sent both folded and raw, and every number the decimal
//! target prints sent as each command's numbers. On every server: each call gets a reply or an
//! error, never an internal error, and the server stays up with nothing in its log. (The
//! `rwlock` and `lines` targets drive the pure line; its calls are the blocking acquires', which
//! `tests/storm.rs` and the fault campaign send to servers.)

mod common;
use common::*;

/// The files of one target's corpus, each whole.
fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("entry").path())
        .collect();
    files.sort();
    let inputs: Vec<Vec<u8>> = files
        .iter()
        .map(|path| std::fs::read(path).expect("a corpus file"))
        .collect();
    assert!(!inputs.is_empty(), "{target}: an empty corpus");
    inputs
}

fn word(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().expect("eight bytes"))
}

/// A double as the servers' parsers read text: Rust prints every finite one in full.
fn double(value: f64) -> String {
    format!("{value}")
}

/// `data` and `count` mutations of it, from `rng`: a byte changed (to a random or an edge
/// value), bytes cut off the end, or random bytes added.
fn mutations(rng: &mut Rng, data: &[u8], count: usize) -> Vec<Vec<u8>> {
    let mut all = vec![data.to_vec()];
    for _ in 0..count {
        let mut next = data.to_vec();
        for _ in 0..=rng.below(4) {
            match rng.below(4) {
                0 | 1 if !next.is_empty() => {
                    let at = rng.below(next.len() as u64) as usize;
                    next[at] = match rng.below(3) {
                        0 => *rng.pick(&[0u8, 1, 0x7f, 0x80, 0xff]),
                        _ => rng.below(256) as u8,
                    };
                }
                2 if !next.is_empty() => {
                    let keep = rng.below(next.len() as u64) as usize;
                    next.truncate(keep);
                }
                _ => next.extend((0..rng.below(24)).map(|_| rng.below(256) as u8)),
            }
        }
        all.push(next);
    }
    all
}

/// The calls one input of `target` stands for, each an argument vector.
fn calls(target: &str, data: &[u8]) -> Vec<Vec<String>> {
    let mut calls: Vec<Vec<String>> = Vec::new();
    let s = |parts: &[&str]| {
        parts
            .iter()
            .map(|part| part.to_string())
            .collect::<Vec<_>>()
    };
    match target {
        "gcra" if data.len() >= 24 => {
            let burst = (word(data, 0) % 1000).to_string();
            let tokens = (1 + word(data, 8) % 1000).to_string();
            let period = double(1e-6 + (word(data, 16) % 1_000_000_000_000) as f64 / 1e6);
            // The words raw, as a client could send them.
            let raw = [word(data, 0) as i64, word(data, 8) as i64].map(|n| n.to_string());
            calls.push(s(&[
                "GOBLIN.GCRA",
                "g:raw",
                &raw[0],
                &raw[1],
                &double(f64::from_bits(word(data, 16))),
            ]));
            for step in data[24..].chunks_exact(3) {
                let cost = (1 + step[2] % 8).to_string();
                calls.push(s(&[
                    "GOBLIN.GCRA",
                    "g",
                    &burst,
                    &tokens,
                    &period,
                    "TOKENS",
                    &cost,
                ]));
                calls.push(s(&["CL.THROTTLE", "c", &burst, &tokens, &period, &cost]));
            }
        }
        "mgcra" if data.len() >= 2 => {
            let count = 1 + usize::from(data[0] % 4);
            let Some(head) = data.get(1..1 + 4 * count) else {
                return calls;
            };
            let mut policies = vec![count.to_string()];
            for policy in head.chunks_exact(4) {
                policies.push(format!("{{m}}:{}", policy[0] % 3));
                policies.push((policy[1] % 50).to_string());
                policies.push((1 + policy[2] % 20).to_string());
                policies.push(double(f64::from(1 + u32::from(policy[3]) * 100) / 1000.0));
            }
            for step in data[1 + 4 * count..].chunks_exact(3) {
                let mut call = vec!["GOBLIN.MGCRA".to_string()];
                call.extend(policies.iter().cloned());
                call.extend(["TOKENS".to_string(), (step[1] % 6).to_string()]);
                match step[2] % 4 {
                    0 => call.push("PEEK".into()),
                    1 => call.push("REFUND".into()),
                    _ => {}
                }
                calls.push(call);
            }
        }
        "fwindow" if data.len() >= 41 => {
            let [value, left, window, by, limit] =
                [0, 8, 16, 24, 32].map(|at| word(data, at) as i64);
            let over = match data[40] / 4 % 5 {
                0 => vec![],
                1 => vec!["LIMIT".to_string(), limit.to_string()],
                2 => vec!["LIMIT".into(), limit.to_string(), "RESTART".into()],
                3 => vec![
                    "LIMIT".into(),
                    limit.to_string(),
                    "BLOCK".into(),
                    (1 + limit.rem_euclid(1 << 40)).to_string(),
                ],
                _ => vec!["LIMIT".into(), limit.to_string(), "BACKOFF".into()],
            };
            for (window, left) in [
                (window.rem_euclid(1 << 40), left.rem_euclid(1 << 40)),
                (window, left),
            ] {
                if data[40] % 4 != 0 {
                    let mut set = s(&["SET", "f", &value.to_string()]);
                    if left % 3 != 0 && left > 0 {
                        set.extend(["PX".to_string(), left.to_string()]);
                    }
                    calls.push(set);
                }
                let mut call = s(&[
                    "GOBLIN.FWINDOW",
                    "f",
                    &window.to_string(),
                    "BY",
                    &by.to_string(),
                ]);
                call.extend(over.iter().cloned());
                calls.push(call);
                calls.push(s(&[
                    "GOBLIN.MFWINDOW",
                    "2",
                    "{w}a",
                    &window.to_string(),
                    &limit.to_string(),
                    "{w}b",
                    "1000",
                    "5",
                    "BY",
                    &by.to_string(),
                ]));
                calls.push(s(&["DEL", "f"]));
            }
        }
        "increx" => {
            // The parser's input as a stored counter, then the plan's words.
            calls.push(vec![
                "SET".into(),
                "i".into(),
                String::from_utf8_lossy(data).into_owned(),
            ]);
            calls.push(s(&["GOBLIN.INCREX", "i", "60"]));
            calls.push(s(&["INCREX", "i", "BYINT", "1", "EX", "60"]));
            if data.len() >= 17 {
                let (current, seconds) = (word(data, 0) as i64, word(data, 8) as i64);
                let small = i64::from(data.get(18).copied().unwrap_or(0));
                let cost = match data.get(19) {
                    Some(0xff) => i64::MAX - small,
                    _ => 1 + small,
                };
                if data[16] & 1 == 1 {
                    calls.push(s(&["SET", "j", &current.to_string()]));
                }
                calls.push(s(&[
                    "GOBLIN.INCREX",
                    "j",
                    &seconds.to_string(),
                    "COST",
                    &cost.to_string(),
                ]));
                calls.push(s(&[
                    "INCREX",
                    "j",
                    "BYINT",
                    &cost.to_string(),
                    "EX",
                    &seconds.to_string(),
                ]));
            }
        }
        "zwindow" if data.len() >= 33 => {
            let (now, window) = (f64::from_bits(word(data, 0)), f64::from_bits(word(data, 8)));
            let limit = (word(data, 16) as i64).to_string();
            calls.push(s(&[
                "GOBLIN.ZWINDOW",
                "z:raw",
                &double(now),
                &double(window),
                &limit,
                "m",
            ]));
            let window = [0.0, 1.0, 2.5, 10.0, 30.0, -1.0][usize::from(data[32] % 6)];
            let mut now = 1000.0f64;
            for call in data[33..].chunks_exact(5) {
                now += f64::from(call[0] % 16) * 0.25;
                let limit = (i64::from((call[1] ^ call[2]) % 6) - 1).to_string();
                let member = format!("m{}", call[3] % 8);
                calls.push(s(&[
                    "GOBLIN.ZWINDOW",
                    "z",
                    &double(now),
                    &double(window),
                    &limit,
                    &member,
                ]));
                calls.push(s(&[
                    "GOBLIN.ZWINDOW",
                    "{z}f",
                    "*",
                    &double(window),
                    &limit,
                    &member,
                    "FENCE",
                ]));
            }
        }
        "decimal" if data.len() >= 8 => {
            let bits = word(data, 0);
            let (score, integer) = (double(f64::from_bits(bits)), (bits as i64).to_string());
            calls.push(s(&["GOBLIN.ZWINDOW", "d", &score, &score, &integer, "m"]));
            calls.push(s(&[
                "GOBLIN.GCRA",
                "d:g",
                &integer,
                &integer,
                &score,
                "TOKENS",
                &integer,
            ]));
            calls.push(s(&[
                "GOBLIN.SWINDOW",
                "d:s",
                &score,
                &integer,
                "COST",
                &integer,
            ]));
            calls.push(s(&["GOBLIN.LOCK", "d:l", "t", &integer]));
            calls.push(s(&["GOBLIN.FWINDOW", "d:f", &integer, "BY", &integer]));
        }
        _ => {}
    }
    calls
}

on_every_server! {
    fn the_fuzzers_inputs_reach_no_internal_error(flavor: Flavor) {
        let server = Server::start(flavor);
        let mut c = server.conn();
        let mut sent = 0;
        let mut rng = Rng::new(0xF022_2026);
        for target in ["gcra", "mgcra", "fwindow", "increx", "zwindow", "decimal"] {
            let inputs: Vec<Vec<u8>> = corpus(target)
                .iter()
                .flat_map(|seed| mutations(&mut rng, seed, 64))
                .collect();
            for data in inputs {
                let calls = calls(target, &data);
                for (call, reply) in calls.iter().zip(c.pipeline(&calls)) {
                    if let Reply::Error(e) = &reply {
                        assert!(!e.contains("internal error"), "{target}: {call:?}: {e}");
                    }
                    sent += 1;
                }
            }
        }
        assert!(sent > 3_000, "only {sent} calls");
        assert_eq!(c.call(&["PING"]), Reply::Status("PONG".into()));
        assert!(!server.log().contains("internal error"), "{}", server.log());
    }
}
