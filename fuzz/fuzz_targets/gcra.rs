//! GOBLIN.GCRA's algorithm on the in-memory TAT, over any limits and any sequence of requests:
//! it never panics, never admits more than the burst plus what the elapsed time regained, writes
//! only what it allows, and replies consistently.
#![no_main]

use goblin_core::gcra::{emission_interval, throttle, GcraOverflow, Limits, MemoryTat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 24 {
        return;
    }
    let word = |i: usize| u64::from_le_bytes(data[i..i + 8].try_into().unwrap());
    let limits = Limits {
        capacity: Limits::capacity_of((word(0) % 1000) as i64),
        tokens_per_period: 1 + (word(8) % 1000) as i64,
        // 1 µs to about 11 days.
        period: 1e-6 + (word(16) % 1_000_000_000_000) as f64 / 1e6,
        cost: 1,
    };
    let emission = emission_interval(&limits);
    assert!(emission >= 1);
    let start = 1_700_000_000_000_000i64;
    let mut now = start;
    let mut key = MemoryTat::default();
    let mut spent = 0i64;
    for step in data[24..].chunks_exact(3) {
        // Time moves in whole milliseconds, as the server's clock does.
        now += i64::from(u16::from_le_bytes([step[0], step[1]])) * 1000;
        let cost = 1 + i64::from(step[2] % 8);
        let limits = Limits { cost, ..limits };
        let before = key.at(now / 1000).clone();
        match throttle(key.at(now / 1000), &limits, now) {
            Ok(reply) => {
                assert_eq!(reply.limit, limits.capacity);
                assert!(reply.remaining >= 0);
                if reply.limited {
                    assert_eq!(key, before, "a limited request stored something");
                    assert!(reply.retry_after >= 1 || reply.retry_after == -1);
                    assert_eq!(reply.retry_after == -1, cost > limits.capacity);
                } else {
                    spent += cost;
                    let tat = key.tat.expect("an allowed request stores its TAT");
                    assert_eq!(tat, before.tat.unwrap_or(now).max(now) + emission * cost);
                    assert_eq!(key.expires_at, Some(tat / 1000));
                    assert_eq!(reply.retry_after, -1);
                    assert!(reply.remaining <= limits.capacity - cost);
                }
                // Never more than the burst and what the elapsed time regained.
                let regained = (now - start) / emission;
                assert!(
                    spent <= limits.capacity + regained,
                    "spent {spent} of {} + {regained}",
                    limits.capacity
                );
            }
            Err(GcraOverflow::Tokens | GcraOverflow::Burst) => assert_eq!(key, before),
        }
    }
});
