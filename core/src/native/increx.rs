//! INCREX, the native command of Redis 8.8: what the value becomes under its
//! bounds, and what happens to the TTL. Generic over the number: `i64` here for BYINT, and the
//! server's `long double` (in the module, through a C shim) for BYFLOAT, so both modes run
//! the same algorithm.

use std::cmp::Ordering;

/// A number INCREX can count in.
pub trait Amount: Copy {
    /// `self + other`, or `None` if the sum leaves the type (i64 overflow; a long double that
    /// becomes infinite).
    fn checked_add(self, other: Self) -> Option<Self>;
    /// `self - other`, or `None` if the difference leaves the type.
    fn checked_sub(self, other: Self) -> Option<Self>;
    /// The order of two numbers. Never NaN here: every input is finite or a bound.
    fn compare(self, other: Self) -> Ordering;
    /// Whether an increment points up (or is zero).
    fn non_negative(self) -> bool;
}

impl Amount for i64 {
    fn checked_add(self, other: i64) -> Option<i64> {
        i64::checked_add(self, other)
    }
    fn checked_sub(self, other: i64) -> Option<i64> {
        i64::checked_sub(self, other)
    }
    fn compare(self, other: i64) -> Ordering {
        self.cmp(&other)
    }
    fn non_negative(self) -> bool {
        self >= 0
    }
}

/// The inclusive bounds: the given ones, or the type's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds<A> {
    pub lower: A,
    pub upper: A,
}

/// What the value does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Increment<A> {
    /// Stored as `value`; `applied` is `value - old`, which SATURATE can make differ from the
    /// increment asked for.
    Applied { value: A, applied: A },
    /// The result leaves the bounds (or the type) and SATURATE was not given: reply
    /// `[old, 0]` and change nothing.
    Rejected,
    /// SATURATE moved the value so far that `value - old` leaves the type: an error, and
    /// nothing changes.
    AppliedOverflow,
}

/// `old + increment`, kept within `bounds` (inclusive): rejected, or clamped with `saturate`.
/// An overflow of the type counts as out of bounds, in the increment's direction.
pub fn increment<A: Amount>(
    old: A,
    increment: A,
    bounds: Bounds<A>,
    saturate: bool,
) -> Increment<A> {
    let sum = old.checked_add(increment);
    let inside = sum.is_some_and(|sum| {
        sum.compare(bounds.lower) != Ordering::Less
            && sum.compare(bounds.upper) != Ordering::Greater
    });
    let value = match sum {
        Some(sum) if inside => sum,
        _ if !saturate => return Increment::Rejected,
        None if increment.non_negative() => bounds.upper,
        None => bounds.lower,
        Some(sum) if sum.compare(bounds.upper) == Ordering::Greater => bounds.upper,
        Some(_) => bounds.lower,
    };
    match value.checked_sub(old) {
        Some(applied) => Increment::Applied { value, applied },
        None => Increment::AppliedOverflow,
    }
}

/// The expiry option of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpiryOption {
    /// None given: the TTL stays as it is.
    Keep,
    /// PERSIST: the TTL goes.
    Persist,
    /// EX, PX, EXAT or PXAT, as an absolute Unix time in milliseconds; `only_if_none` is ENX.
    At { at_ms: i64, only_if_none: bool },
}

/// What happens to the key's TTL after an applied increment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtlChange {
    /// Untouched (replicated as `SET key value KEEPTTL`).
    Keep,
    /// Removed, if there was one (replicated as `SET key value`).
    Persist,
    /// Set to this time (replicated as `SET key value PXAT at`).
    At(i64),
    /// The time is already past: the key is deleted instead of written, as EXPIRE does.
    DeleteNow,
}

/// Decides the TTL: `had_ttl` is whether the key had one before the call (a missing key has
/// none), `now_ms` the time EXPIRE would count from in this call.
pub fn ttl_change(option: ExpiryOption, had_ttl: bool, now_ms: i64) -> TtlChange {
    match option {
        ExpiryOption::Keep => TtlChange::Keep,
        ExpiryOption::Persist => TtlChange::Persist,
        ExpiryOption::At {
            only_if_none: true, ..
        } if had_ttl => TtlChange::Keep,
        ExpiryOption::At { at_ms, .. } if at_ms <= now_ms => TtlChange::DeleteNow,
        ExpiryOption::At { at_ms, .. } => TtlChange::At(at_ms),
    }
}

/// Why an expiry argument is refused: `ERR invalid expire time in 'increx' command`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidExpire;

/// The unit and base of an expiry argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpiryUnit {
    /// EX: seconds from now.
    Seconds,
    /// PX: milliseconds from now.
    Milliseconds,
    /// EXAT: a Unix time in seconds.
    UnixSeconds,
    /// PXAT: a Unix time in milliseconds.
    UnixMilliseconds,
}

/// The absolute time of an expiry argument, with SET's checks: the number must be positive, in
/// seconds it must still fit once in milliseconds, and a relative time added to now must not
/// wrap. An absolute time may be in the past.
pub fn expiry_at(value: i64, unit: ExpiryUnit, now_ms: i64) -> Result<i64, InvalidExpire> {
    let seconds = matches!(unit, ExpiryUnit::Seconds | ExpiryUnit::UnixSeconds);
    if value <= 0 || (seconds && value > i64::MAX / 1000) {
        return Err(InvalidExpire);
    }
    let ms = if seconds { value * 1000 } else { value };
    match unit {
        ExpiryUnit::Seconds | ExpiryUnit::Milliseconds => {
            // The server adds and then refuses a result that is not positive (a wrap).
            let at = ms.wrapping_add(now_ms);
            if at <= 0 {
                Err(InvalidExpire)
            } else {
                Ok(at)
            }
        }
        ExpiryUnit::UnixSeconds | ExpiryUnit::UnixMilliseconds => Ok(ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANY: Bounds<i64> = Bounds {
        lower: i64::MIN,
        upper: i64::MAX,
    };

    fn bounds(lower: i64, upper: i64) -> Bounds<i64> {
        Bounds { lower, upper }
    }

    #[test]
    fn an_increment_inside_the_bounds_is_applied() {
        assert_eq!(
            increment(5, 3, ANY, false),
            Increment::Applied {
                value: 8,
                applied: 3
            }
        );
        assert_eq!(
            increment(5, -7, ANY, false),
            Increment::Applied {
                value: -2,
                applied: -7
            }
        );
    }

    #[test]
    fn the_bounds_are_inclusive() {
        assert_eq!(
            increment(5, 5, bounds(0, 10), false),
            Increment::Applied {
                value: 10,
                applied: 5
            }
        );
        assert_eq!(
            increment(5, -5, bounds(0, 10), false),
            Increment::Applied {
                value: 0,
                applied: -5
            }
        );
    }

    #[test]
    fn out_of_bounds_is_rejected_without_saturate() {
        assert_eq!(increment(5, 6, bounds(0, 10), false), Increment::Rejected);
        assert_eq!(increment(5, -6, bounds(0, 10), false), Increment::Rejected);
        assert_eq!(increment(i64::MAX, 1, ANY, false), Increment::Rejected);
        assert_eq!(increment(i64::MIN, -1, ANY, false), Increment::Rejected);
    }

    #[test]
    fn saturate_clamps_to_the_bound_it_crossed() {
        assert_eq!(
            increment(5, 6, bounds(0, 10), true),
            Increment::Applied {
                value: 10,
                applied: 5
            }
        );
        assert_eq!(
            increment(5, -6, bounds(0, 10), true),
            Increment::Applied {
                value: 0,
                applied: -5
            }
        );
    }

    #[test]
    fn saturate_can_move_against_the_increment() {
        // Already above the upper bound: the result is clamped down.
        assert_eq!(
            increment(50, 5, bounds(i64::MIN, 30), true),
            Increment::Applied {
                value: 30,
                applied: -20
            }
        );
        assert_eq!(
            increment(10, -5, bounds(20, i64::MAX), true),
            Increment::Applied {
                value: 20,
                applied: 10
            }
        );
    }

    #[test]
    fn an_overflow_saturates_at_the_bound_in_the_increments_direction() {
        let big = 9_223_372_036_854_775_800;
        assert_eq!(
            increment(big, big, ANY, true),
            Increment::Applied {
                value: i64::MAX,
                applied: 7
            }
        );
        assert_eq!(
            increment(big, big, bounds(0, 100), true),
            Increment::Applied {
                value: 100,
                applied: 100 - big
            }
        );
        assert_eq!(
            increment(-big, -big, ANY, true),
            Increment::Applied {
                value: i64::MIN,
                applied: -8
            }
        );
    }

    #[test]
    fn an_applied_increment_that_overflows_is_an_error() {
        let big = 9_223_372_036_854_775_800;
        assert_eq!(
            increment(big, 1, bounds(i64::MIN, i64::MIN), true),
            Increment::AppliedOverflow
        );
    }

    #[test]
    fn ttl_options() {
        let now = 1_000;
        assert_eq!(ttl_change(ExpiryOption::Keep, true, now), TtlChange::Keep);
        assert_eq!(
            ttl_change(ExpiryOption::Persist, true, now),
            TtlChange::Persist
        );
        let at = |at_ms, only_if_none| ExpiryOption::At {
            at_ms,
            only_if_none,
        };
        assert_eq!(
            ttl_change(at(5_000, false), true, now),
            TtlChange::At(5_000)
        );
        assert_eq!(ttl_change(at(5_000, true), true, now), TtlChange::Keep);
        assert_eq!(
            ttl_change(at(5_000, true), false, now),
            TtlChange::At(5_000)
        );
        assert_eq!(
            ttl_change(at(1_000, false), false, now),
            TtlChange::DeleteNow
        );
        // ENX on a key with a TTL skips even a past time.
        assert_eq!(ttl_change(at(1, true), true, now), TtlChange::Keep);
    }

    #[test]
    fn expiry_arguments_as_set_checks_them() {
        let now = 1_700_000_000_000;
        assert_eq!(expiry_at(10, ExpiryUnit::Seconds, now), Ok(now + 10_000));
        assert_eq!(expiry_at(10, ExpiryUnit::Milliseconds, now), Ok(now + 10));
        assert_eq!(expiry_at(10, ExpiryUnit::UnixSeconds, now), Ok(10_000));
        assert_eq!(expiry_at(10, ExpiryUnit::UnixMilliseconds, now), Ok(10));
        for unit in [
            ExpiryUnit::Seconds,
            ExpiryUnit::Milliseconds,
            ExpiryUnit::UnixSeconds,
            ExpiryUnit::UnixMilliseconds,
        ] {
            assert_eq!(expiry_at(0, unit, now), Err(InvalidExpire));
            assert_eq!(expiry_at(-1, unit, now), Err(InvalidExpire));
        }
        assert_eq!(
            expiry_at(i64::MAX / 1000 + 1, ExpiryUnit::Seconds, now),
            Err(InvalidExpire)
        );
        assert_eq!(
            expiry_at(i64::MAX / 1000 + 1, ExpiryUnit::UnixSeconds, now),
            Err(InvalidExpire)
        );
        assert_eq!(
            expiry_at(i64::MAX, ExpiryUnit::Milliseconds, now),
            Err(InvalidExpire)
        );
        assert_eq!(
            expiry_at(i64::MAX, ExpiryUnit::UnixMilliseconds, now),
            Ok(i64::MAX)
        );
    }

    #[test]
    fn seconds_are_accepted_up_to_the_largest_that_fits_in_milliseconds() {
        let now = 1_700_000_000_000;
        assert_eq!(
            expiry_at(3600, ExpiryUnit::Seconds, now),
            Ok(now + 3_600_000)
        );
        assert_eq!(
            expiry_at(i64::MAX / 1000, ExpiryUnit::UnixSeconds, now),
            Ok(9_223_372_036_854_775_000)
        );
        assert_eq!(
            expiry_at(i64::MAX / 1000 + 1, ExpiryUnit::UnixSeconds, now),
            Err(InvalidExpire)
        );
    }
}
