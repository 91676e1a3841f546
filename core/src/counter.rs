//! The pure decision behind GOBLIN.INCREX: what the counter becomes and what happens to its TTL.
//! No server here; `increx.rs` reads the key, asks this module, and carries out the answer.

/// What happens to the counter's TTL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterTtl {
    /// A later hit in a running window: the TTL (ticking, or none) is left exactly as it was.
    Keep,
    /// The first hit of a window: expire at this absolute Unix time in milliseconds.
    ArmAt(i64),
    /// The first hit with `seconds <= 0`: like EXPIRE with a past time, the key goes at once.
    DeleteNow,
}

/// Why a hit cannot be counted; nothing is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterError {
    /// The counter is at `i64::MAX`.
    IncrementOverflow,
    /// The first hit's expiry does not fit a signed 64-bit Unix time in milliseconds.
    ExpireOverflow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterPlan {
    pub value: i64,
    pub ttl: CounterTtl,
}

/// Decides one GOBLIN.INCREX call. `current` is the parsed counter (`None` for a missing key),
/// `now_ms` reads the server's clock, only for a first hit. Fails without side effects, so the
/// caller writes nothing.
pub fn plan(
    current: Option<i64>,
    seconds: i64,
    now_ms: impl FnOnce() -> i64,
) -> Result<CounterPlan, CounterError> {
    let value = current
        .unwrap_or(0)
        .checked_add(1)
        .ok_or(CounterError::IncrementOverflow)?;
    if value != 1 {
        return Ok(CounterPlan {
            value,
            ttl: CounterTtl::Keep,
        });
    }
    // The same arithmetic and bounds as EXPIRE: seconds in milliseconds, then added to now.
    let now_ms = now_ms();
    let expire_at = seconds
        .checked_mul(1000)
        .and_then(|ms| ms.checked_add(now_ms))
        .ok_or(CounterError::ExpireOverflow)?;
    let ttl = if expire_at <= now_ms {
        CounterTtl::DeleteNow
    } else {
        CounterTtl::ArmAt(expire_at)
    };
    Ok(CounterPlan { value, ttl })
}

/// Parses a stored counter exactly as INCR does (the server's `string2ll`): an optional `-`,
/// no `+`, no leading zeros, no spaces, at most 20 bytes, and within `i64`.
pub fn parse_stored(bytes: &[u8]) -> Option<i64> {
    // LONG_STR_SIZE in the server is 21: a longer string is never a number.
    if bytes.is_empty() || bytes.len() >= 21 {
        return None;
    }
    if bytes == b"0" {
        return Some(0);
    }
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut magnitude: u64 = 0;
    for &byte in digits {
        if !byte.is_ascii_digit() {
            return None;
        }
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(u64::from(byte - b'0'))?;
    }
    if negative {
        if magnitude > i64::MAX as u64 + 1 {
            return None;
        }
        Some((magnitude as i64).wrapping_neg())
    } else {
        i64::try_from(magnitude).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;
    const CLOCK: fn() -> i64 = || NOW;

    #[test]
    fn first_hit_on_a_missing_key_arms_the_window() {
        let plan = plan(None, 60, CLOCK).unwrap();
        assert_eq!(plan.value, 1);
        assert_eq!(plan.ttl, CounterTtl::ArmAt(NOW + 60_000));
    }

    #[test]
    fn later_hits_do_not_read_the_clock() {
        let plan = plan(Some(4), 60, || panic!("the clock was read")).unwrap();
        assert_eq!(plan.value, 5);
    }

    #[test]
    fn later_hits_leave_the_ttl_alone() {
        assert_eq!(
            plan(Some(4), 60, CLOCK).unwrap(),
            CounterPlan {
                value: 5,
                ttl: CounterTtl::Keep
            }
        );
    }

    #[test]
    fn a_counter_at_zero_rearms_like_the_lua_idiom() {
        assert_eq!(
            plan(Some(0), 5, CLOCK).unwrap().ttl,
            CounterTtl::ArmAt(NOW + 5000)
        );
    }

    #[test]
    fn non_positive_seconds_delete_at_once() {
        assert_eq!(plan(None, 0, CLOCK).unwrap().ttl, CounterTtl::DeleteNow);
        assert_eq!(plan(None, -3, CLOCK).unwrap().ttl, CounterTtl::DeleteNow);
    }

    #[test]
    fn a_non_positive_window_only_matters_on_the_first_hit() {
        assert_eq!(plan(Some(1), -3, CLOCK).unwrap().ttl, CounterTtl::Keep);
    }

    #[test]
    fn overflowing_expiry_is_an_error_not_an_immortal_counter() {
        for seconds in [i64::MAX, i64::MAX / 1000, i64::MIN, i64::MIN / 999] {
            assert_eq!(
                plan(None, seconds, CLOCK),
                Err(CounterError::ExpireOverflow),
                "seconds={seconds}"
            );
        }
        // Only the first hit arms a TTL, so only the first hit can overflow it.
        assert!(plan(Some(7), i64::MAX, CLOCK).is_ok());
    }

    #[test]
    fn increment_overflow_is_refused() {
        assert_eq!(
            plan(Some(i64::MAX), 60, CLOCK),
            Err(CounterError::IncrementOverflow)
        );
        assert_eq!(plan(Some(i64::MIN), 60, CLOCK).unwrap().value, i64::MIN + 1);
    }

    #[test]
    fn stored_values_parse_like_string2ll() {
        let accepted: &[(&[u8], i64)] = &[
            (b"0", 0),
            (b"7", 7),
            (b"-7", -7),
            (b"9223372036854775807", i64::MAX),
            (b"-9223372036854775808", i64::MIN),
        ];
        for (text, value) in accepted {
            assert_eq!(parse_stored(text), Some(*value), "{text:?}");
        }
        let refused: &[&[u8]] = &[
            b"",
            b" 5",
            b"5 ",
            b"+5",
            b"05",
            b"-0",
            b"-",
            b"1.5",
            b"1e3",
            b"0x10",
            b"abc",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"00000000000000000001",
            b"99999999999999999999",
            b"5\0",
        ];
        for text in refused {
            assert_eq!(parse_stored(text), None, "{text:?}");
        }
    }
}
