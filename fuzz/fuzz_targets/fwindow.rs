//! GOBLIN.FWINDOW's and GOBLIN.MFWINDOW's decisions on any counter, window, increment and limit:
//! never a panic; the count is the value plus the increment (from 0 where the window has ended,
//! its key expiring now or before), or an overflow error; a TTL set is in the future and is what
//! the reply says; a running window is kept unless a call over the limit changes it as its
//! option says, and one that has ended never is; and several windows write all or nothing.
#![no_main]

use goblin_core::fwindow::{ended, hit, live, several, Group, Hit, Over, BACKOFF_CAP_MS};
use goblin_core::increx::{CounterError, CounterTtl};
use libfuzzer_sys::fuzz_target;

const NOW: i64 = 1_700_000_000_000;

fuzz_target!(|data: &[u8]| {
    if data.len() < 41 {
        return;
    }
    let word = |i: usize| i64::from_le_bytes(data[i..i + 8].try_into().unwrap());
    let (value, left, window, by, limit) = (word(0), word(8), word(16), word(24), word(32));
    let window = window.rem_euclid(1 << 40);
    // Milliseconds left, some of them 0 or less: a window that has ended.
    let left = (left % 3 != 0).then_some(left % (1 << 40));
    let standing = (!data[40].is_multiple_of(4)).then_some((value, left));
    let over = match data[40] / 4 % 5 {
        0 => None,
        1 => Some(Over::Count),
        2 => Some(Over::Restart),
        3 => Some(Over::Block(1 + limit.rem_euclid(1 << 40))),
        _ => Some(Over::Backoff),
    };
    let call = Hit {
        window_ms: window,
        by,
        limit: over.map(|over| (limit, over)),
    };
    let before = live(standing).map_or(0, |(value, _)| value);
    match hit(standing, &call, NOW) {
        Err(CounterError::IncrementOverflow) => assert!(before.checked_add(by).is_none()),
        Err(CounterError::ExpireOverflow) => {}
        Ok(outcome) => {
            assert_eq!(outcome.write.value, before + by);
            let over_limit = call
                .limit
                .is_some_and(|(limit, _)| outcome.write.value > limit);
            match outcome.write.ttl {
                CounterTtl::ArmAt(at) => {
                    assert!(outcome.ttl_ms > 0 && at == NOW + outcome.ttl_ms);
                    assert!(
                        outcome.ttl_ms
                            <= BACKOFF_CAP_MS
                                .max(window)
                                .max(limit.rem_euclid(1 << 40) + 1)
                    );
                    let kept = live(standing).and_then(|(_, left)| left).is_some();
                    assert!(
                        !kept || over_limit,
                        "a running window moved below the limit"
                    );
                }
                CounterTtl::Keep => {
                    assert!(!ended(standing) || window == 0, "an ended window kept");
                    let left = live(standing).and_then(|(_, left)| left);
                    assert_eq!(outcome.ttl_ms, left.unwrap_or(-1));
                    assert!(
                        left.is_some() || window == 0,
                        "a counter left without a window"
                    );
                }
                CounterTtl::DeleteNow => panic!("a fixed window is never deleted by a call"),
            }
        }
    }
    // Several windows on two keys (one maybe named twice), all or nothing.
    let standing = [
        standing,
        data[40]
            .is_multiple_of(3)
            .then_some((limit.rem_euclid(100), left)),
    ];
    let groups = [
        Group {
            key: 0,
            window_ms: window,
            limit,
        },
        Group {
            key: usize::from(data[40] % 2),
            window_ms: window / 2,
            limit: limit / 2,
        },
    ];
    if let Ok(decided) = several(&standing, &groups, by, NOW) {
        assert_eq!(decided.groups.len(), 2);
        if decided.refused {
            assert!(decided.writes.is_empty());
        } else {
            assert_eq!(decided.retry_after_ms, -1);
            for (group, [count, _]) in groups.iter().zip(&decided.groups) {
                assert!(*count <= group.limit);
            }
        }
    }
});
