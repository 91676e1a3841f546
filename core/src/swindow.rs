//! GOBLIN.SWINDOW's algorithm: the sliding window counter. Time is cut into windows of
//! `window_ms` aligned to the Unix epoch (window `i` is `[i * window_ms, (i + 1) * window_ms)`,
//! on the server's clock). A request at `now` counts the current window's hits, plus the previous
//! window's weighted by how much of it still overlaps the last `window_ms`:
//!
//! ```text
//! weighted = floor(previous * previous_ttl / window) + current
//! previous_ttl = the time left in the current window (how long the previous one still weighs)
//! ```
//!
//! A request of cost `n` is admitted if `n <= limit` and `weighted + n <= limit`, and then the
//! current count grows by `n`. Both counts live in one string key, `start:current:previous`
//! (the current window's start in Unix milliseconds, then the two counts), which expires when
//! both windows are over.

use crate::decimal::{parse_integer, Decimal};

/// The stored counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored {
    /// The start of the window `current` counts, in Unix milliseconds.
    pub start_ms: i64,
    pub current: i64,
    pub previous: i64,
}

/// A key's value as text, on the stack: three integers of 20 bytes at most, and two colons.
pub struct StoredText {
    buf: [u8; 64],
    len: usize,
}

impl StoredText {
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Stored {
    /// The key's value, `start:current:previous`. By hand on the stack, not `format!`: this runs
    /// on every admitted call, where the formatting machinery and its allocation cost about six
    /// times the digits.
    pub fn text(&self) -> StoredText {
        let mut text = StoredText {
            buf: [0; 64],
            len: 0,
        };
        for (index, number) in [self.start_ms, self.current, self.previous]
            .into_iter()
            .enumerate()
        {
            if index > 0 {
                text.buf[text.len] = b':';
                text.len += 1;
            }
            let digits = Decimal::integer(number);
            let digits = digits.as_bytes();
            text.buf[text.len..text.len + digits.len()].copy_from_slice(digits);
            text.len += digits.len();
        }
        text
    }

    /// Reads a key's value: three integers as INCR reads them, the counts not negative.
    pub fn parse(bytes: &[u8]) -> Option<Stored> {
        let mut parts = bytes.split(|&byte| byte == b':');
        let mut next = || parts.next().and_then(parse_integer);
        let stored = Stored {
            start_ms: next()?,
            current: next()?,
            previous: next()?,
        };
        let counts_ok = stored.current >= 0 && stored.previous >= 0;
        (parts.next().is_none() && counts_ok).then_some(stored)
    }
}

/// The two windows as a call at `now_ms` sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    /// The start of the current window, in Unix milliseconds.
    pub start_ms: i64,
    pub window_ms: i64,
    pub previous: i64,
    /// How long the previous window still weighs, in milliseconds: the time left in the current
    /// one; 0 if the previous window is empty.
    pub previous_ttl_ms: i64,
    pub current: i64,
    /// How long the current window's count lives, in milliseconds: to the end of the next one.
    pub current_ttl_ms: i64,
}

/// The window's length does not fit the clock: its end, or the key's expiry, would pass
/// `i64::MAX` milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowOverflow;

/// The windows at `now_ms` for a key holding `stored` (`None`: a missing key). A key written
/// for another window length reads as empty.
pub fn view(stored: Option<Stored>, window_ms: i64, now_ms: i64) -> Result<View, WindowOverflow> {
    let start_ms = now_ms.div_euclid(window_ms) * window_ms;
    let end_ms = start_ms.checked_add(window_ms).ok_or(WindowOverflow)?;
    let expires_at = end_ms.checked_add(window_ms).ok_or(WindowOverflow)?;
    let (current, previous) = match stored {
        Some(stored) if stored.start_ms == start_ms => (stored.current, stored.previous),
        Some(stored) if stored.start_ms.checked_add(window_ms) == Some(start_ms) => {
            (0, stored.current)
        }
        _ => (0, 0),
    };
    Ok(View {
        start_ms,
        window_ms,
        previous,
        previous_ttl_ms: if previous > 0 { end_ms - now_ms } else { 0 },
        current,
        current_ttl_ms: expires_at - now_ms,
    })
}

impl View {
    /// `floor(previous * previous_ttl / window) + current`, exactly.
    pub fn weighted(&self) -> u128 {
        let share = self.previous as u128 * self.previous_ttl_ms as u128 / self.window_ms as u128;
        share + self.current as u128
    }

    /// Whether a request of `cost` fits under `limit`.
    pub fn admits(&self, cost: i64, limit: i64) -> bool {
        let limit = u128::try_from(limit).unwrap_or(0);
        let cost = cost as u128;
        cost <= limit && self.weighted() + cost <= limit
    }

    /// The key after an admitted request of `cost`, and when it expires (Unix milliseconds):
    /// when both windows are over. `None` if the count would leave 64 bits.
    pub fn record(&self, cost: i64) -> Option<(Stored, i64)> {
        let stored = Stored {
            start_ms: self.start_ms,
            current: self.current.checked_add(cost)?,
            previous: self.previous,
        };
        Some((stored, self.start_ms + 2 * self.window_ms))
    }

    /// The view after recording `stored`.
    pub fn with(&self, stored: Stored) -> View {
        View {
            current: stored.current,
            ..*self
        }
    }
}

/// A window in seconds as whole milliseconds, rounded up: at least 1 for any positive window.
/// `None` for a window that is not a positive finite number of seconds, or too large.
pub fn window_ms(seconds: f64) -> Option<i64> {
    let ms = (seconds * 1000.0).ceil();
    (seconds > 0.0 && ms < 9_223_372_036_854_775_808.0).then_some(ms as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: i64 = 10_000;
    const T0: i64 = 1_700_000_000_000; // a multiple of W

    fn call(stored: &mut Option<Stored>, now_ms: i64, limit: i64, cost: i64) -> bool {
        let view = view(*stored, W, now_ms).unwrap();
        if !view.admits(cost, limit) {
            return false;
        }
        *stored = Some(view.record(cost).unwrap().0);
        true
    }

    #[test]
    fn windows_are_aligned_to_the_clock() {
        let v = view(None, W, T0 + 2_500).unwrap();
        assert_eq!(
            (v.start_ms, v.previous_ttl_ms, v.current_ttl_ms),
            (T0, 0, 17_500)
        );
        assert_eq!(view(None, W, T0 - 1).unwrap().start_ms, T0 - W);
    }

    #[test]
    fn the_previous_window_weighs_by_its_overlap() {
        let mut stored = None;
        for _ in 0..10 {
            assert!(call(&mut stored, T0 + 1_000, 10, 1));
        }
        assert!(!call(&mut stored, T0 + 9_999, 10, 1), "full");
        // A quarter into the next window: the previous 10 weigh 7.5, floored to 7.
        let v = view(stored, W, T0 + W + 2_500).unwrap();
        assert_eq!((v.previous, v.previous_ttl_ms, v.current), (10, 7_500, 0));
        assert_eq!(v.weighted(), 7);
        assert!(call(&mut stored, T0 + W + 2_500, 10, 3));
        assert!(!call(&mut stored, T0 + W + 2_500, 10, 1), "7 + 3 + 1 > 10");
        // Two windows on, everything has gone.
        let v = view(stored, W, T0 + 3 * W).unwrap();
        assert_eq!((v.previous, v.current), (0, 0));
    }

    #[test]
    fn a_cost_above_the_limit_is_refused() {
        let v = view(None, W, T0).unwrap();
        assert!(!v.admits(11, 10));
        assert!(v.admits(10, 10));
        assert!(!v.admits(1, 0));
        assert!(!v.admits(1, -1));
    }

    #[test]
    fn the_key_expires_when_both_windows_are_over() {
        let v = view(None, W, T0 + 3_000).unwrap();
        let (stored, at) = v.record(4).unwrap();
        assert_eq!(
            stored,
            Stored {
                start_ms: T0,
                current: 4,
                previous: 0
            }
        );
        assert_eq!(at, T0 + 2 * W);
        assert_eq!(v.with(stored).current, 4);
    }

    #[test]
    fn values_read_back_as_written() {
        let stored = Stored {
            start_ms: T0,
            current: 4,
            previous: 9,
        };
        assert_eq!(stored.text().as_bytes(), b"1700000000000:4:9");
        for (start_ms, current, previous) in
            [(i64::MIN, i64::MAX, i64::MAX), (0, 0, 0), (-1, 1, 10)]
        {
            let stored = Stored {
                start_ms,
                current,
                previous,
            };
            let text = format!("{start_ms}:{current}:{previous}");
            assert_eq!(stored.text().as_bytes(), text.as_bytes());
        }
        assert_eq!(Stored::parse(stored.text().as_bytes()), Some(stored));
        for text in [
            &b""[..],
            b"1:2",
            b"1:2:3:4",
            b"1:-2:3",
            b"1:2: 3",
            b"a:b:c",
            b"1:02:3",
        ] {
            assert_eq!(Stored::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn another_window_length_reads_as_empty() {
        let stored = Some(Stored {
            start_ms: T0,
            current: 4,
            previous: 9,
        });
        let v = view(stored, 7_000, T0 + 1).unwrap();
        assert_eq!((v.previous, v.current), (0, 0));
    }

    #[test]
    fn windows_in_seconds_round_up_to_the_millisecond() {
        assert_eq!(window_ms(1.0), Some(1_000));
        assert_eq!(window_ms(0.0001), Some(1));
        assert_eq!(window_ms(2.0005), Some(2_001));
        for bad in [0.0, -1.0, 1e300, f64::INFINITY] {
            assert_eq!(window_ms(bad), None, "{bad}");
        }
        assert!(view(None, i64::MAX / 2, T0).is_ok());
        assert_eq!(view(None, i64::MAX / 2 + 1, T0), Err(WindowOverflow));
    }

    #[test]
    fn counts_never_leave_64_bits() {
        let v = view(
            Some(Stored {
                start_ms: T0,
                current: i64::MAX,
                previous: 0,
            }),
            W,
            T0,
        )
        .unwrap();
        assert!(!v.admits(1, i64::MAX));
        assert_eq!(v.record(1), None);
    }
}
