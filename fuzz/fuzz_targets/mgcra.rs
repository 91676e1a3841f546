//! GOBLIN.MGCRA's decision over any policies, keys shared or not, and any sequence of hits,
//! peeks and refunds: it never panics, and it is its definition. A hit is GOBLIN.GCRA on each
//! policy's key in turn at one instant, the writes kept only if none refused (and a refusing
//! policy replies as GOBLIN.GCRA refuses); a peek replies as the hit and writes nothing; a
//! refund moves each TAT back by whole emission intervals, never before now, and deletes a
//! bucket it fills.
#![no_main]

use goblin_core::gcra::{throttle, GcraOverflow, Limits, MemoryTat};
use goblin_core::mgcra::{mgcra, Mode, Policy, Write};
use libfuzzer_sys::fuzz_target;

const KEYS: usize = 3;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let count = 1 + usize::from(data[0] % 4);
    let mut rest = &data[1..];
    let mut policies = Vec::with_capacity(count);
    for _ in 0..count {
        let Some((head, tail)) = rest.split_first_chunk::<4>() else {
            return;
        };
        rest = tail;
        policies.push(Policy {
            key: usize::from(head[0]) % KEYS,
            limits: Limits {
                capacity: Limits::capacity_of(i64::from(head[1] % 50)),
                tokens_per_period: 1 + i64::from(head[2] % 20),
                // 1 ms to about 25 s.
                period: f64::from(1 + u32::from(head[3]) * 100) / 1000.0,
                cost: 1,
            },
        });
    }
    let mut now = 1_700_000_000_000_000i64;
    let mut keys = [
        MemoryTat::default(),
        MemoryTat::default(),
        MemoryTat::default(),
    ];
    for step in rest.chunks_exact(3) {
        now += i64::from(step[0]) * 1000;
        let cost = i64::from(step[1] % 6);
        let mode = match step[2] % 4 {
            0 => Mode::Peek,
            1 => Mode::Refund,
            _ => Mode::Hit,
        };
        if cost == 0 && mode != Mode::Peek {
            continue;
        }
        let policies: Vec<Policy> = policies
            .iter()
            .map(|p| Policy {
                limits: Limits { cost, ..p.limits },
                ..*p
            })
            .collect();
        for key in &mut keys {
            key.at(now / 1000);
        }
        let tats: Vec<Option<i64>> = keys.iter().map(|k| k.tat).collect();
        let Ok(decided) = mgcra(&tats, &policies, mode, now) else {
            continue;
        };
        match mode {
            Mode::Hit | Mode::Peek => {
                // The definition: GOBLIN.GCRA on each key in turn (cost 0 has no GCRA).
                if cost > 0 {
                    let mut twins = keys.clone();
                    let replies: Vec<_> = policies
                        .iter()
                        .map(|p| throttle(&mut twins[p.key], &p.limits, now))
                        .collect::<Result<_, GcraOverflow>>()
                        .expect("GOBLIN.MGCRA decided where GOBLIN.GCRA overflows");
                    let limited = replies.iter().any(|r| r.limited);
                    assert_eq!(decided.limited, limited);
                    for (mine, gcra) in decided.policies.iter().zip(&replies) {
                        if !limited || gcra.limited {
                            assert_eq!(mine, gcra);
                        } else {
                            assert!(!mine.limited && mine.retry_after == -1);
                            assert_eq!(mine.remaining, gcra.remaining + cost);
                        }
                    }
                    if mode == Mode::Hit && !limited {
                        for (i, (key, twin)) in keys.iter().zip(&twins).enumerate() {
                            let written = decided.writes.iter().find(|(k, _)| *k == i);
                            match written {
                                Some((_, Write::Store(tat))) => assert_eq!(twin.tat, Some(*tat)),
                                Some((_, Write::Delete)) => panic!("a hit deleted a key"),
                                None => assert_eq!(twin.tat, key.tat),
                            }
                        }
                    }
                }
                if mode == Mode::Peek || decided.limited {
                    assert!(decided.writes.is_empty(), "wrote {:?}", decided.writes);
                }
            }
            Mode::Refund => {
                for (i, write) in &decided.writes {
                    let before = keys[*i].tat.expect("a refund wrote a missing key");
                    // Back, never forward, and never to or before now (then the key goes).
                    match write {
                        Write::Store(tat) => assert!(*tat > now && *tat <= before),
                        Write::Delete => {}
                    }
                }
                for (i, key) in keys.iter().enumerate() {
                    if key.tat.is_none() {
                        assert!(decided.writes.iter().all(|(k, _)| *k != i));
                    }
                }
            }
        }
        for (i, write) in &decided.writes {
            match write {
                Write::Store(tat) => {
                    keys[*i].tat = Some(*tat);
                    keys[*i].expires_at = Some(tat / 1000);
                }
                Write::Delete => keys[*i] = MemoryTat::default(),
            }
        }
    }
});
