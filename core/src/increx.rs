//! The pure decision behind GOBLIN.INCREX: what the counter becomes and what happens to its TTL.
//! A hit costs 1, or `COST n`; the TTL is armed when the result is the cost, that is on the
//! window's first hit (the key was missing, or held 0), as the `INCRBY` + `EXPIRE` idiom arms
//! it.
//! No server here: the module's `commands/fixed/increx.rs` reads the key, asks this module, and
//! carries out the answer.

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
    /// The counter plus the cost leaves `i64`.
    IncrementOverflow,
    /// The first hit's expiry does not fit a signed 64-bit Unix time in milliseconds.
    ExpireOverflow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterPlan {
    pub value: i64,
    /// What the hit added: its cost.
    pub by: i64,
    pub ttl: CounterTtl,
}

/// Decides one GOBLIN.INCREX call. `current` is the parsed counter (`None` for a missing key),
/// `cost` what the hit adds (at least 1), `now_ms` reads the server's clock, only for a first
/// hit. Fails without side effects, so the caller writes nothing.
pub fn plan(
    current: Option<i64>,
    seconds: i64,
    cost: i64,
    now_ms: impl FnOnce() -> i64,
) -> Result<CounterPlan, CounterError> {
    let value = current
        .unwrap_or(0)
        .checked_add(cost)
        .ok_or(CounterError::IncrementOverflow)?;
    if value != cost {
        return Ok(CounterPlan {
            value,
            by: cost,
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
    Ok(CounterPlan {
        value,
        by: cost,
        ttl,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;
    const CLOCK: fn() -> i64 = || NOW;

    #[test]
    fn first_hit_on_a_missing_key_arms_the_window() {
        let plan = plan(None, 60, 1, CLOCK).unwrap();
        assert_eq!(plan.value, 1);
        assert_eq!(plan.ttl, CounterTtl::ArmAt(NOW + 60_000));
    }

    #[test]
    fn later_hits_do_not_read_the_clock() {
        let plan = plan(Some(4), 60, 1, || panic!("the clock was read")).unwrap();
        assert_eq!(plan.value, 5);
    }

    #[test]
    fn later_hits_leave_the_ttl_alone() {
        assert_eq!(
            plan(Some(4), 60, 1, CLOCK).unwrap(),
            CounterPlan {
                value: 5,
                by: 1,
                ttl: CounterTtl::Keep
            }
        );
    }

    #[test]
    fn a_counter_at_zero_rearms_like_the_lua_idiom() {
        assert_eq!(
            plan(Some(0), 5, 1, CLOCK).unwrap().ttl,
            CounterTtl::ArmAt(NOW + 5000)
        );
    }

    #[test]
    fn non_positive_seconds_delete_at_once() {
        assert_eq!(plan(None, 0, 1, CLOCK).unwrap().ttl, CounterTtl::DeleteNow);
        assert_eq!(plan(None, -3, 1, CLOCK).unwrap().ttl, CounterTtl::DeleteNow);
    }

    #[test]
    fn a_non_positive_window_only_matters_on_the_first_hit() {
        assert_eq!(plan(Some(1), -3, 1, CLOCK).unwrap().ttl, CounterTtl::Keep);
    }

    #[test]
    fn overflowing_expiry_is_an_error_not_an_immortal_counter() {
        for seconds in [i64::MAX, i64::MAX / 1000, i64::MIN, i64::MIN / 999] {
            assert_eq!(
                plan(None, seconds, 1, CLOCK),
                Err(CounterError::ExpireOverflow),
                "seconds={seconds}"
            );
        }
        // Only the first hit arms a TTL, so only the first hit can overflow it.
        assert!(plan(Some(7), i64::MAX, 1, CLOCK).is_ok());
    }

    #[test]
    fn increment_overflow_is_refused() {
        assert_eq!(
            plan(Some(i64::MAX), 60, 1, CLOCK),
            Err(CounterError::IncrementOverflow)
        );
        assert_eq!(
            plan(Some(i64::MIN), 60, 1, CLOCK).unwrap().value,
            i64::MIN + 1
        );
    }

    #[test]
    fn a_hit_costs_what_it_says_and_the_first_arms_the_window() {
        assert_eq!(
            plan(None, 60, 100, CLOCK).unwrap(),
            CounterPlan {
                value: 100,
                by: 100,
                ttl: CounterTtl::ArmAt(NOW + 60_000)
            }
        );
        assert_eq!(
            plan(Some(0), 60, 7, CLOCK).unwrap().ttl,
            CounterTtl::ArmAt(NOW + 60_000)
        );
        let later = plan(Some(100), 60, 100, || panic!("the clock was read")).unwrap();
        assert_eq!((later.value, later.ttl), (200, CounterTtl::Keep));
    }

    #[test]
    fn a_result_equal_to_the_cost_only_on_a_first_hit() {
        // A counter at 0 with a cost of 5 gives 5: a first hit. One at 5 gives 10: not.
        assert_eq!(plan(Some(5), 60, 5, CLOCK).unwrap().ttl, CounterTtl::Keep);
        // Only a counter at 0 (or none) makes the result the cost: one brought to 0 is not.
        let zero = plan(Some(-3), 60, 3, CLOCK).unwrap();
        assert_eq!((zero.value, zero.ttl), (0, CounterTtl::Keep));
    }

    #[test]
    fn a_cost_past_the_counter_overflows() {
        assert_eq!(
            plan(Some(i64::MAX - 4), 60, 5, CLOCK),
            Err(CounterError::IncrementOverflow)
        );
        assert_eq!(
            plan(Some(i64::MAX - 5), 60, 5, CLOCK).unwrap().value,
            i64::MAX
        );
    }
}
