//! The pure decision behind GOBLIN.ZWINDOW: where the window starts, whether a member is
//! admitted, refreshed or rejected, and when the key expires. No server here.

use crate::error::CommandError;

/// Members scored at or below the cutoff have left the window. Inclusive, and open to
/// `-inf` below, as `ZREMRANGEBYSCORE key -inf cutoff`.
pub fn cutoff(now: f64, window: f64) -> f64 {
    now - window
}

/// At most about this many members leave a window in one call (more only when members share
/// the last score removed). An idle window can hold a million members that all left it at
/// once; removing them in one call would block the server for a quarter of a second. Here each
/// call removes a slice (about 0.2 to 0.4 ms of work) and later calls the rest, while the
/// admit decision still counts only the members inside the window.
pub const EVICTION_BUDGET: usize = 1024;

/// How far to count members inside the window, when old ones are still in the set: the
/// decision only asks "fewer than `limit`?", so counting stops there.
pub fn count_cap(limit: i64) -> usize {
    usize::try_from(limit).unwrap_or(0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `member` gets its slot at `now`: a newcomer is admitted, a holder refreshed.
    Grant,
    /// A newcomer and the window is full: nothing is added, the TTL is untouched.
    Reject,
}

impl Verdict {
    pub fn reply(self) -> i64 {
        match self {
            Self::Grant => 1,
            Self::Reject => 0,
        }
    }
}

/// Decides after eviction, with `in_window` members left. `holds_slot` (is `member` one of
/// them?) is asked only when the window is full: with room, newcomer and holder are granted
/// alike, and a lookup saved is a sorted-set search saved on the hot path.
pub fn decide(in_window: usize, limit: i64, holds_slot: impl FnOnce() -> bool) -> Verdict {
    let room = i64::try_from(in_window).is_ok_and(|count| count < limit);
    // A holder renewing its lease keeps its one slot, even if `limit` has since shrunk.
    if room || holds_slot() {
        Verdict::Grant
    } else {
        Verdict::Reject
    }
}

/// When the key expires after an admit or refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowExpiry {
    /// Absolute Unix time in milliseconds.
    At(i64),
    /// `window <= 0`: like EXPIRE with a past time, the key goes at once.
    Immediately,
}

/// `window` seconds after the server's clock, rounded *up* to the millisecond. Rounding down
/// (the seed's `EXPIRE floor(window)`) would drop members still inside a fractional window
/// and let the limiter admit more than `limit`; `floor(0.5)` would even delete every admit.
pub fn expiry(
    window: f64,
    now_ms: i64,
    command: &'static str,
) -> Result<WindowExpiry, CommandError> {
    if window <= 0.0 {
        return Ok(WindowExpiry::Immediately);
    }
    let ttl_ms = (window * 1000.0).ceil();
    // 2^63 is exactly representable; anything at or above it does not fit an i64.
    if ttl_ms >= 9_223_372_036_854_775_808.0 {
        return Err(CommandError::InvalidExpire(command));
    }
    now_ms
        .checked_add(ttl_ms as i64)
        .map(WindowExpiry::At)
        .ok_or(CommandError::InvalidExpire(command))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW_MS: i64 = 1_700_000_000_000;
    const CMD: &str = "goblin.zwindow";

    #[test]
    fn cutoff_is_now_minus_window() {
        assert_eq!(cutoff(1015.0, 10.0), 1005.0);
        assert_eq!(cutoff(5.5, 10.0), -4.5);
    }

    const HOLDER: fn() -> bool = || true;
    const NEWCOMER: fn() -> bool = || false;

    #[test]
    fn a_holder_refreshes_even_in_a_full_window() {
        assert_eq!(decide(1, 1, HOLDER), Verdict::Grant);
        assert_eq!(decide(5, 3, HOLDER), Verdict::Grant);
        assert_eq!(decide(2, 0, HOLDER), Verdict::Grant);
    }

    #[test]
    fn a_newcomer_is_admitted_only_below_the_limit() {
        assert_eq!(decide(2, 3, NEWCOMER), Verdict::Grant);
        assert_eq!(decide(3, 3, NEWCOMER), Verdict::Reject);
        assert_eq!(decide(0, 1, NEWCOMER), Verdict::Grant);
    }

    #[test]
    fn with_room_nobody_asks_who_holds_a_slot() {
        assert_eq!(decide(2, 3, || panic!("looked up")), Verdict::Grant);
    }

    #[test]
    fn a_non_positive_limit_rejects_every_newcomer() {
        assert_eq!(decide(0, 0, NEWCOMER), Verdict::Reject);
        assert_eq!(decide(0, -5, NEWCOMER), Verdict::Reject);
        assert_eq!(decide(0, i64::MIN, NEWCOMER), Verdict::Reject);
    }

    #[test]
    fn counting_stops_at_the_limit() {
        assert_eq!(count_cap(3), 3);
        assert_eq!(count_cap(0), 0);
        assert_eq!(count_cap(-7), 0);
        // Counting `limit` members is enough to answer "fewer than limit?".
        assert_eq!(decide(count_cap(3), 3, NEWCOMER), Verdict::Reject);
    }

    #[test]
    fn whole_windows_expire_like_expire_window() {
        assert_eq!(
            expiry(10.0, NOW_MS, CMD),
            Ok(WindowExpiry::At(NOW_MS + 10_000))
        );
    }

    #[test]
    fn fractional_windows_round_up_to_the_millisecond() {
        assert_eq!(expiry(0.5, NOW_MS, CMD), Ok(WindowExpiry::At(NOW_MS + 500)));
        assert_eq!(
            expiry(2.5, NOW_MS, CMD),
            Ok(WindowExpiry::At(NOW_MS + 2500))
        );
        assert_eq!(
            expiry(0.0001, NOW_MS, CMD),
            Ok(WindowExpiry::At(NOW_MS + 1))
        );
        assert_eq!(
            expiry(1.0005, NOW_MS, CMD),
            Ok(WindowExpiry::At(NOW_MS + 1001))
        );
    }

    #[test]
    fn non_positive_windows_expire_at_once() {
        assert_eq!(expiry(0.0, NOW_MS, CMD), Ok(WindowExpiry::Immediately));
        assert_eq!(expiry(-0.0, NOW_MS, CMD), Ok(WindowExpiry::Immediately));
        assert_eq!(expiry(-30.0, NOW_MS, CMD), Ok(WindowExpiry::Immediately));
    }

    #[test]
    fn windows_past_the_millisecond_clock_are_invalid() {
        for window in [1e300, 9.3e15, f64::MAX] {
            assert_eq!(
                expiry(window, NOW_MS, CMD),
                Err(CommandError::InvalidExpire(CMD)),
                "window={window}"
            );
        }
        // Fits in i64 by itself, but not added to the clock.
        assert_eq!(
            expiry(9.223371e15, NOW_MS, CMD),
            Err(CommandError::InvalidExpire(CMD))
        );
    }
}
