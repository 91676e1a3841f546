//! The pure decision behind GOBLIN.ZWINDOW: where the window starts, whether a member is
//! admitted, refreshed or rejected, and when the key expires. No server here.

use crate::error::CommandError;

/// Members scored at or below the cutoff have left the window. Inclusive, and open to
/// `-inf` below, as `ZREMRANGEBYSCORE key -inf cutoff`.
pub fn cutoff(now: f64, window: f64) -> f64 {
    now - window
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The member already holds a slot in the window: its score moves to `now`.
    Refresh,
    /// A new member and there is room: it is added at `now`.
    Admit,
    /// A new member and the window is full: nothing is added, the TTL is untouched.
    Reject,
}

impl Verdict {
    pub fn reply(self) -> i64 {
        match self {
            Self::Refresh | Self::Admit => 1,
            Self::Reject => 0,
        }
    }
}

/// Decides after eviction: `holds_slot` says whether `member` is still in the window,
/// `in_window` how many members are.
pub fn decide(holds_slot: bool, in_window: usize, limit: i64) -> Verdict {
    if holds_slot {
        // A holder renewing its lease keeps its one slot, even if `limit` has since shrunk.
        Verdict::Refresh
    } else if i64::try_from(in_window).is_ok_and(|count| count < limit) {
        Verdict::Admit
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

    #[test]
    fn a_holder_refreshes_even_in_a_full_window() {
        assert_eq!(decide(true, 1, 1), Verdict::Refresh);
        assert_eq!(decide(true, 5, 3), Verdict::Refresh);
    }

    #[test]
    fn a_newcomer_is_admitted_only_below_the_limit() {
        assert_eq!(decide(false, 2, 3), Verdict::Admit);
        assert_eq!(decide(false, 3, 3), Verdict::Reject);
        assert_eq!(decide(false, 0, 1), Verdict::Admit);
    }

    #[test]
    fn a_non_positive_limit_rejects_every_newcomer() {
        assert_eq!(decide(false, 0, 0), Verdict::Reject);
        assert_eq!(decide(false, 0, -5), Verdict::Reject);
        assert_eq!(decide(false, 0, i64::MIN), Verdict::Reject);
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
