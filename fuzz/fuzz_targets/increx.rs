//! GOBLIN.INCREX's pure core: the stored-value parser and the counter plan, on any input.
#![no_main]

use goblin_core::decimal::parse_integer;
use goblin_core::increx::{plan, CounterError, CounterTtl};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The parser accepts exactly the canonical decimal form of an i64, as the server's
    // string2ll does: no sign but '-', no leading zeros, no "-0", no spaces.
    let canonical = std::str::from_utf8(data)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|v| v.to_string().as_bytes() == data);
    assert_eq!(parse_integer(data), canonical, "{data:?}");

    if data.len() < 17 {
        return;
    }
    let word = |i: usize| i64::from_le_bytes(data[i..i + 8].try_into().unwrap());
    let (current, seconds, now) = (
        (data[16] & 1 == 1).then(|| word(0)),
        word(8),
        i64::from_le_bytes([
            data[16],
            data.get(17).copied().unwrap_or(0),
            0,
            0,
            0,
            0,
            0,
            0,
        ]) << 20,
    );
    // A cost of 1 to 256, or one near i64::MAX.
    let small = i64::from(data.get(18).copied().unwrap_or(0));
    let cost = match data.get(19) {
        Some(0xff) => i64::MAX - small,
        _ => 1 + small,
    };
    match plan(current, seconds, cost, || now) {
        Ok(p) => {
            assert_eq!(Some(p.value), current.unwrap_or(0).checked_add(cost));
            assert_eq!(p.by, cost);
            match p.ttl {
                CounterTtl::Keep => assert_ne!(p.value, cost),
                CounterTtl::ArmAt(at) => {
                    assert_eq!(p.value, cost);
                    assert!(at > now);
                    assert_eq!(
                        Some(at),
                        seconds.checked_mul(1000).and_then(|ms| ms.checked_add(now))
                    );
                }
                CounterTtl::DeleteNow => {
                    assert_eq!(p.value, cost);
                    assert!(seconds <= 0);
                }
            }
        }
        Err(CounterError::IncrementOverflow) => {
            assert!(current.unwrap_or(0).checked_add(cost).is_none())
        }
        Err(CounterError::ExpireOverflow) => {
            assert_eq!(current.unwrap_or(0), 0);
            assert!(seconds
                .checked_mul(1000)
                .and_then(|ms| ms.checked_add(now))
                .is_none());
        }
    }
});
