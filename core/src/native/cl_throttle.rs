//! CL.THROTTLE, redis-cell's command (0.5.0), for the servers without it: its GCRA with its own
//! arithmetic, so that every call it answers correctly gets the same five integers, and its
//! state, so that a key written by one is read by the other.
//!
//! redis-cell counts in nanoseconds. The emission interval is `period` seconds over
//! `count_per_period`, computed in a double and truncated; the tolerance is `max_burst + 1`
//! intervals; a request of `quantity` moves the TAT (theoretical arrival time) that many
//! intervals on. The key holds the TAT as the decimal text of its Unix nanoseconds (a `u64`),
//! and expires when the bucket is full again: at the TAT, floored to the millisecond.
//!
//! Where redis-cell is wrong this refuses, or answers what it meant (`LimitsError`,
//! `TatOverflow`, and the notes on `decide`): it crashes the server on a key it cannot read,
//! wraps its 64-bit arithmetic into garbage, and can say more remain than the limit.

use crate::decimal::Decimal;
use crate::gcra::Throttle;

const NANOS_PER_SECOND: i128 = 1_000_000_000;
const NANOS_PER_MILLI: i128 = 1_000_000;
const NANOS_PER_MICRO: i128 = 1_000;

/// An integer argument as redis-cell reads one (Rust's `i64` syntax): an optional `+` or `-`,
/// then ASCII digits, leading zeros allowed (`+5`, `007`, `-0`); no spaces, no decimal point.
pub fn parse_argument(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// A stored TAT as redis-cell reads one (Rust's `u64` syntax): an optional `+`, then ASCII
/// digits, at most `u64::MAX`. A sign `-`, spaces, or an empty string are not a TAT.
pub fn parse_tat(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// One call's limits, checked: what redis-cell derives from its four numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `max_burst + 1`: the requests allowed at once.
    pub limit: i64,
    /// Nanoseconds between two tokens.
    pub emission: i64,
    /// How far ahead of now the TAT may run: `limit` intervals.
    pub tolerance: i64,
    /// What this request moves the TAT: `quantity` intervals.
    pub increment: i64,
}

/// Why a call's numbers are refused before its key is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitsError {
    /// `max_burst` below 0 (redis-cell answers a limit of 0 or less).
    NegativeBurst,
    /// `count_per_period` below 1 (0 is redis-cell's zero rate; below, it answers garbage).
    CountBelowOne,
    /// `period` below 1 (as `count_per_period`).
    PeriodBelowOne,
    /// `quantity` below 0 (redis-cell moves the TAT back, or leaves a key without expiry).
    NegativeQuantity,
    /// An emission interval under a nanosecond: more than `period` in nanoseconds per period.
    /// redis-cell refuses it too ("Zero rates are not supported").
    ZeroRate,
    /// An emission interval past `i64::MAX` nanoseconds (redis-cell saturates it).
    RateOverflow,
    /// `max_burst + 1`, or that many intervals, past `i64::MAX` (redis-cell wraps them).
    BurstOverflow,
    /// `quantity` intervals past `i64::MAX` nanoseconds (redis-cell wraps them).
    QuantityOverflow,
}

impl Limits {
    /// The limits of `CL.THROTTLE key max_burst count_per_period period quantity`, the four
    /// numbers checked in that order.
    pub fn new(
        max_burst: i64,
        count_per_period: i64,
        period: i64,
        quantity: i64,
    ) -> Result<Limits, LimitsError> {
        if max_burst < 0 {
            return Err(LimitsError::NegativeBurst);
        }
        if count_per_period < 1 {
            return Err(LimitsError::CountBelowOne);
        }
        if period < 1 {
            return Err(LimitsError::PeriodBelowOne);
        }
        if quantity < 0 {
            return Err(LimitsError::NegativeQuantity);
        }
        let emission = emission_interval(count_per_period, period)?;
        let limit = max_burst.checked_add(1).ok_or(LimitsError::BurstOverflow)?;
        let tolerance = emission
            .checked_mul(limit)
            .ok_or(LimitsError::BurstOverflow)?;
        let increment = emission
            .checked_mul(quantity)
            .ok_or(LimitsError::QuantityOverflow)?;
        Ok(Limits {
            limit,
            emission,
            tolerance,
            increment,
        })
    }
}

/// Nanoseconds between two tokens, as redis-cell computes them: the period's nanoseconds over
/// the count, divided as doubles and truncated (so `3 s / 7` is 428,571,428 ns).
fn emission_interval(count_per_period: i64, period: i64) -> Result<i64, LimitsError> {
    let nanos = i128::from(period) * NANOS_PER_SECOND;
    let interval = nanos as f64 / count_per_period as f64;
    // 2^63 is the first double `as i64` would saturate.
    if interval >= 9_223_372_036_854_775_808.0 {
        return Err(LimitsError::RateOverflow);
    }
    match interval as i64 {
        0 => Err(LimitsError::ZeroRate),
        interval => Ok(interval),
    }
}

/// The new TAT would pass `u64::MAX` nanoseconds, the most a key holds (redis-cell wraps it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TatOverflow;

/// A TAT as the key holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredTat {
    /// Unix nanoseconds.
    pub tat: u64,
    /// Unix milliseconds: the TAT floored, when the bucket is full again.
    pub expires_at_ms: i64,
}

impl StoredTat {
    /// The value: the nanoseconds in decimal, as redis-cell writes them.
    pub fn text(&self) -> Decimal {
        Decimal::unsigned(self.tat)
    }
}

/// What CL.THROTTLE decides for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// `[limited, limit, remaining, retry_after, reset_after]`.
    pub reply: Throttle,
    /// The TAT to store, when the request is allowed (a quantity of 0 too: redis-cell writes
    /// the TAT it read, or now, with a fresh expiry).
    pub store: Option<StoredTat>,
}

/// One request against `tat` (the key's, if it has one) at `now_ms` (the server's clock).
///
/// redis-cell's reply, field for field, with two differences where it is wrong:
/// - a TAT behind the clock (a key whose expiry was removed, or whose last millisecond is
///   still running) is a full bucket when refusing too, as it already is when allowing:
///   redis-cell counts `reset_after` and `remaining` from the TAT, negative and past the limit;
/// - `remaining` is never more than the limit. redis-cell divides in whole microseconds, which
///   overstates it when the interval has a fraction of one, and divides by zero below one
///   microsecond (replying `i64::MAX` or 0): there, this divides in nanoseconds.
pub fn decide(limits: &Limits, tat: Option<u64>, now_ms: i64) -> Result<Decision, TatOverflow> {
    let now = i128::from(now_ms) * NANOS_PER_MILLI;
    let (emission, tolerance, increment) = (
        i128::from(limits.emission),
        i128::from(limits.tolerance),
        i128::from(limits.increment),
    );
    // The TAT counts from now if it is behind.
    let base = tat.map_or(now, |tat| i128::from(tat).max(now));
    let new_tat = base + increment;
    // How long after now the request would fit in the tolerance.
    let early_by = new_tat - tolerance - now;
    let limited = early_by > 0;
    let (ttl, store) = if limited {
        (base - now, None)
    } else {
        let tat = u64::try_from(new_tat).map_err(|_| TatOverflow)?;
        let ttl = new_tat - now;
        let expires_at_ms = now_ms + (ttl / NANOS_PER_MILLI) as i64;
        (ttl, Some(StoredTat { tat, expires_at_ms }))
    };
    // A request dearer than the whole tolerance never gets through: no time to wait for.
    let retry_after = if limited && increment <= tolerance {
        early_by
    } else {
        -NANOS_PER_SECOND
    };
    let headroom = tolerance - ttl;
    let remaining = if headroom > -emission {
        tokens_in(headroom, emission).min(limits.limit)
    } else {
        0
    };
    Ok(Decision {
        reply: Throttle {
            limited,
            limit: limits.limit,
            remaining,
            retry_after: whole_seconds(retry_after),
            reset_after: whole_seconds(ttl),
        },
        store,
    })
}

/// How many intervals of `emission` nanoseconds fit in `headroom`, as redis-cell counts them:
/// both in whole microseconds, divided as doubles, truncated. Under a microsecond it would
/// divide by zero: there, in nanoseconds.
fn tokens_in(headroom: i128, emission: i128) -> i64 {
    if emission < NANOS_PER_MICRO {
        return (headroom / emission) as i64;
    }
    let (headroom, emission) = (headroom / NANOS_PER_MICRO, emission / NANOS_PER_MICRO);
    (headroom as f64 / emission as f64) as i64
}

/// A time in nanoseconds as redis-cell replies it in seconds: its seconds and nanoseconds
/// added as a double and truncated, then one more if a whole millisecond is left over. So a
/// remainder under a millisecond is dropped (0.5 ms is 0 s), and from 2^24 s (194 days) on the
/// double can round the fraction up to a second before the millisecond adds its own.
fn whole_seconds(nanos: i128) -> i64 {
    let (seconds, fraction) = (nanos / NANOS_PER_SECOND, nanos % NANOS_PER_SECOND);
    let whole = (seconds as f64 + fraction as f64 / NANOS_PER_SECOND as f64) as i64;
    if fraction / NANOS_PER_MILLI > 0 {
        whole + 1
    } else {
        whole
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole second of the server's clock, in milliseconds.
    const NOW: i64 = 1_700_000_000_000;
    const S: i64 = 1_000;

    fn limits(max_burst: i64, count: i64, period: i64, quantity: i64) -> Limits {
        Limits::new(max_burst, count, period, quantity).expect("valid limits")
    }

    /// A key in memory, as the server keeps it: gone once its expiry has passed.
    #[derive(Debug, Default, Clone, PartialEq, Eq)]
    struct Key(Option<StoredTat>);

    impl Key {
        /// The key as the server sees it at `now_ms`.
        fn at(&mut self, now_ms: i64) -> &mut Self {
            if self.0.is_some_and(|stored| now_ms > stored.expires_at_ms) {
                self.0 = None;
            }
            self
        }

        fn call(&mut self, l: Limits, now_ms: i64) -> [i64; 5] {
            self.at(now_ms);
            let decision = decide(&l, self.0.map(|stored| stored.tat), now_ms).expect("fits");
            if let Some(stored) = decision.store {
                self.0 = Some(stored);
            }
            decision.reply.reply()
        }
    }

    #[test]
    fn the_readme_session() {
        // max_burst 15, 30 per 60 s: 16 at once, then one every 2 s.
        let mut key = Key::default();
        let l = limits(15, 30, 60, 1);
        assert_eq!(key.call(l, NOW), [0, 16, 15, -1, 2]);
        for remaining in (0..15).rev() {
            assert_eq!(key.call(l, NOW)[..3], [0, 16, remaining]);
        }
        assert_eq!(key.call(l, NOW), [1, 16, 0, 2, 32]);
        let stored = key.0.expect("stored");
        assert_eq!(stored.tat, (NOW as u64 + 32_000) * 1_000_000);
        assert_eq!(stored.expires_at_ms, NOW + 32_000);
        assert_eq!(stored.text().as_bytes(), b"1700000032000000000");
    }

    #[test]
    fn one_token_every_two_seconds() {
        let mut key = Key::default();
        let l = limits(0, 1, 2, 1);
        assert_eq!(key.call(l, NOW), [0, 1, 0, -1, 2]);
        assert_eq!(key.call(l, NOW), [1, 1, 0, 2, 2]);
        assert_eq!(key.call(l, NOW + 1_999), [1, 1, 0, 1, 1]);
        // The key lives through its last millisecond, and then the bucket is full.
        assert_eq!(key.call(l, NOW + 2 * S), [0, 1, 0, -1, 2]);
    }

    #[test]
    fn tokens_come_back_with_time() {
        // Five at once, one a second: the cases redis-cell's own tests walk through.
        let mut key = Key::default();
        let l = |quantity| limits(4, 1, 1, quantity);
        // Never more than the limit at once: refused, and nothing stored.
        assert_eq!(key.call(l(6), NOW), [1, 5, 5, -1, 0]);
        assert_eq!(key, Key::default());
        for (n, remaining) in (0..5).rev().enumerate() {
            assert_eq!(key.call(l(1), NOW), [0, 5, remaining, -1, n as i64 + 1]);
        }
        assert_eq!(key.call(l(1), NOW), [1, 5, 0, 1, 5]);
        assert_eq!(key.call(l(1), NOW + 3_000), [0, 5, 2, -1, 3]);
        assert_eq!(key.call(l(1), NOW + 3_100), [0, 5, 1, -1, 4]);
        assert_eq!(key.call(l(1), NOW + 4_000), [0, 5, 1, -1, 4]);
        assert_eq!(key.call(l(1), NOW + 8_000), [0, 5, 4, -1, 1]);
        assert_eq!(key.call(l(1), NOW + 9_500), [0, 5, 4, -1, 1]);
        // A quantity of 0 looks, and still writes the TAT it read with a fresh expiry.
        let before = key.0.expect("stored");
        assert_eq!(key.call(l(0), NOW + 9_500), [0, 5, 4, -1, 1]);
        assert_eq!(key.0, Some(before));
        assert_eq!(key.call(l(2), NOW + 9_500), [0, 5, 2, -1, 3]);
        assert_eq!(key.call(l(5), NOW + 9_500), [1, 5, 2, 3, 3]);
    }

    #[test]
    fn a_quantity_of_zero_writes_now_on_a_fresh_key() {
        let l = limits(4, 1, 1, 0);
        let decision = decide(&l, None, NOW).unwrap();
        assert_eq!(decision.reply.reply(), [0, 5, 5, -1, 0]);
        let stored = decision.store.expect("written");
        assert_eq!(stored.tat, NOW as u64 * 1_000_000);
        assert_eq!(stored.expires_at_ms, NOW);
    }

    #[test]
    fn a_remainder_under_a_millisecond_is_not_a_second() {
        // 2,000 per second: 0.5 ms a token. redis-cell rounds up only from a whole millisecond.
        let mut key = Key::default();
        let l = limits(9, 2_000, 1, 1);
        assert_eq!(key.call(l, NOW), [0, 10, 9, -1, 0]);
        assert_eq!(key.call(l, NOW), [0, 10, 8, -1, 1]);
        assert_eq!(key.0.unwrap().tat, NOW as u64 * 1_000_000 + 1_000_000);
        assert_eq!(key.0.unwrap().expires_at_ms, NOW + 1);
        // 3 s over 7: 428,571,428 ns a token, truncated.
        assert_eq!(limits(0, 7, 3, 1).emission, 428_571_428);
        assert_eq!(whole_seconds(1_000_999_999), 1);
        assert_eq!(whole_seconds(1_001_000_000), 2);
        assert_eq!(whole_seconds(999_999), 0);
        assert_eq!(whole_seconds(-NANOS_PER_SECOND), -1);
    }

    #[test]
    fn long_times_round_as_a_double_does() {
        // From 2^24 s a double cannot hold 0.999999999 s beside the seconds: it rounds to the
        // next second, and the millisecond adds another, as redis-cell replies.
        let seconds = 100_000_000i128;
        assert_eq!(
            whole_seconds(seconds * NANOS_PER_SECOND + 999_999_999),
            100_000_002
        );
        assert_eq!(
            whole_seconds(seconds * NANOS_PER_SECOND + 1_000_000),
            100_000_001
        );
        assert_eq!(whole_seconds(1_000 * NANOS_PER_SECOND + 999_999_999), 1_001);
    }

    #[test]
    fn arguments_read_as_redis_cell_reads_them() {
        for (text, value) in [
            (&b"5"[..], 5),
            (b"+5", 5),
            (b"007", 7),
            (b"-0", 0),
            (b"-12", -12),
            (b"9223372036854775807", i64::MAX),
            (b"-9223372036854775808", i64::MIN),
            (b"00000000000000000000000001", 1),
        ] {
            assert_eq!(parse_argument(text), Some(value), "{text:?}");
        }
        for text in [
            &b""[..],
            b"+",
            b"-",
            b"+-1",
            b" 5",
            b"5 ",
            b"1.5",
            b"1e3",
            b"0x10",
            b"9223372036854775808",
            b"\xff",
        ] {
            assert_eq!(parse_argument(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_tat_is_a_u64_as_redis_cell_reads_it() {
        assert_eq!(
            parse_tat(b"1700000000000000000"),
            Some(1_700_000_000_000_000_000)
        );
        assert_eq!(parse_tat(b"+7"), Some(7));
        assert_eq!(parse_tat(b"0007"), Some(7));
        assert_eq!(parse_tat(b"18446744073709551615"), Some(u64::MAX));
        for text in [
            &b""[..],
            b"-0",
            b"-1",
            b"+",
            b" 1",
            b"1.0",
            b"18446744073709551616",
            b"hello",
            b"\xc3\x28",
        ] {
            assert_eq!(parse_tat(text), None, "{text:?}");
        }
    }

    #[test]
    fn limits_out_of_redis_cells_range_are_refused_in_order() {
        use LimitsError::*;
        assert_eq!(Limits::new(-1, 0, 0, -1), Err(NegativeBurst));
        assert_eq!(Limits::new(0, 0, 0, -1), Err(CountBelowOne));
        assert_eq!(Limits::new(0, -5, 1, 1), Err(CountBelowOne));
        assert_eq!(Limits::new(0, 1, 0, -1), Err(PeriodBelowOne));
        assert_eq!(Limits::new(0, 1, -1, 1), Err(PeriodBelowOne));
        assert_eq!(Limits::new(0, 1, 1, -1), Err(NegativeQuantity));
        // A billion and one a second is under a nanosecond a token.
        assert_eq!(Limits::new(0, 1_000_000_001, 1, 1), Err(ZeroRate));
        assert_eq!(Limits::new(0, 1_000_000_000, 1, 1).unwrap().emission, 1);
        assert_eq!(
            Limits::new(0, 1, 9_223_372_036, 1).unwrap().emission,
            9_223_372_036_000_000_000
        );
        assert_eq!(Limits::new(0, 1, 9_223_372_037, 1), Err(RateOverflow));
        assert_eq!(Limits::new(0, 1, i64::MAX, 1), Err(RateOverflow));
        assert_eq!(
            Limits::new(i64::MAX, 1_000_000_000, 1, 1),
            Err(BurstOverflow)
        );
        assert_eq!(
            Limits::new(i64::MAX - 1, 1_000_000_000, 1, 1)
                .unwrap()
                .limit,
            i64::MAX
        );
        assert_eq!(Limits::new(9_223_372_036, 1, 1, 1), Err(BurstOverflow));
        assert_eq!(
            Limits::new(9_223_372_035, 1, 1, 1).unwrap().tolerance,
            9_223_372_036_000_000_000
        );
        assert_eq!(Limits::new(0, 1, 1, 9_223_372_037), Err(QuantityOverflow));
        assert_eq!(
            Limits::new(0, 1, 1, 9_223_372_036).unwrap().increment,
            9_223_372_036_000_000_000
        );
    }

    #[test]
    fn a_tat_past_u64_is_refused_and_nothing_stored() {
        // Only a clock past 2262 (i64::MAX ns) can reach it: the TAT may run at most the
        // tolerance, an i64, ahead of now.
        let l = limits(9_000_000_000, 1, 1, 9_000_000_000);
        let in_2255 = 9_000_000_000_000;
        let stored = decide(&l, None, in_2255).unwrap().store.expect("stored");
        assert_eq!(stored.tat, 18_000_000_000_000_000_000);
        let in_2286 = 10_000_000_000_000;
        assert_eq!(decide(&l, None, in_2286), Err(TatOverflow));
        // Refused: nothing to store, no overflow to speak of.
        let one = limits(0, 1, 1, 1);
        assert_eq!(decide(&one, Some(u64::MAX), NOW).map(|d| d.store), Ok(None));
    }

    #[test]
    fn a_tat_behind_the_clock_is_a_full_bucket() {
        let l = limits(2, 1, 60, 4);
        let behind = decide(&l, Some((NOW as u64 - 1_500) * 1_000_000), NOW).unwrap();
        let fresh = decide(&l, None, NOW).unwrap();
        assert_eq!(behind, fresh);
        assert_eq!(fresh.reply.reply(), [1, 3, 3, -1, 0]);
        let allowed = limits(2, 1, 60, 1);
        assert_eq!(
            decide(&allowed, Some(0), NOW).unwrap(),
            decide(&allowed, None, NOW).unwrap()
        );
    }

    #[test]
    fn remaining_is_never_more_than_the_limit() {
        // 1.5 µs a token counts as 1 µs in redis-cell's division: 15 µs of tolerance would be 15
        // tokens of a limit of 10.
        let l = limits(9, 2_000_000, 3, 0);
        assert_eq!(l.emission, 1_500);
        assert_eq!(
            decide(&l, None, NOW).unwrap().reply.reply(),
            [0, 10, 10, -1, 0]
        );
        // Under a microsecond redis-cell divides by zero: here, in nanoseconds.
        assert_eq!(tokens_in(4 * 999, 999), 4);
        let fine = limits(99, 500_000_000, 1, 1);
        assert_eq!(fine.emission, 2);
        let mut key = Key::default();
        assert_eq!(key.call(fine, NOW)[..3], [0, 100, 99]);
        assert_eq!(key.call(fine, NOW)[..3], [0, 100, 98]);
    }

    /// A tiny generator, so the properties below run without a dependency.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// Limits as people set them and at their edges: intervals of a nanosecond to a day.
    fn any_limits(rng: &mut Rng) -> (i64, i64, i64) {
        let max_burst = [0, 1, 4, 15, 99, 1_000][rng.below(6) as usize] + rng.below(3) as i64;
        let count = [
            1,
            2,
            3,
            7,
            30,
            1_000,
            2_000,
            999_999,
            2_000_000,
            1_000_000_000,
        ][rng.below(10) as usize];
        let period = [1, 2, 3, 60, 3_600, 86_400][rng.below(6) as usize];
        (max_burst, count, period)
    }

    #[test]
    fn never_more_than_the_burst_and_what_time_gave_back() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..400 {
            let (max_burst, count, period) = any_limits(&mut rng);
            let mut key = Key::default();
            let (start, mut now, mut spent) = (NOW, NOW, 0i128);
            for _ in 0..60 {
                now += [0, 0, 1, 7, 500, 2_000][rng.below(6) as usize];
                let quantity = rng.below(4) as i64;
                let Ok(l) = Limits::new(max_burst, count, period, quantity) else {
                    continue;
                };
                let before = key.at(now).clone();
                let reply = key.call(l, now);
                let [limited, limit, remaining, retry_after, reset_after] = reply;
                assert_eq!(limit, max_burst + 1);
                assert!((0..=limit).contains(&remaining), "{reply:?}");
                assert!(reset_after >= 0, "{reply:?}");
                if limited == 1 {
                    assert_eq!(
                        key.0.map(|s| s.tat),
                        before.0.map(|s| s.tat),
                        "refused, yet stored"
                    );
                    assert_eq!(retry_after == -1, quantity > limit, "{reply:?}");
                    assert!(retry_after == -1 || retry_after >= 0, "{reply:?}");
                } else {
                    spent += i128::from(quantity);
                    let stored = key.0.expect("an allowed request stores its TAT");
                    let now_ns = i128::from(now) * NANOS_PER_MILLI;
                    let read = before.0.map_or(now_ns, |s| i128::from(s.tat).max(now_ns));
                    assert_eq!(i128::from(stored.tat), read + i128::from(l.increment));
                    assert_eq!(
                        i128::from(stored.expires_at_ms),
                        i128::from(stored.tat) / NANOS_PER_MILLI
                    );
                    assert!(stored.expires_at_ms >= now, "expires before now");
                    assert_eq!(retry_after, -1);
                }
                // Never more than the limit and what the elapsed time regained.
                let regained = i128::from(now - start) * NANOS_PER_MILLI / i128::from(l.emission);
                assert!(
                    spent <= i128::from(limit) + regained,
                    "spent {spent} of {limit} + {regained}"
                );
            }
        }
    }

    #[test]
    fn the_seconds_fields_round_up_from_a_whole_millisecond() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..10_000 {
            let nanos = i128::from(rng.below(86_400 * 1_000_000_000));
            let seconds = whole_seconds(nanos);
            // Up from the millisecond the time is in, and never past it by a second.
            let millis = nanos / NANOS_PER_MILLI;
            assert_eq!(i128::from(seconds), (millis + 999) / 1_000, "{nanos} ns");
        }
    }

    #[test]
    fn a_stored_tat_reads_back() {
        let mut rng = Rng(0x853c_49e6_748f_ea9b);
        for _ in 0..10_000 {
            let tat = rng.below(u64::MAX);
            let stored = StoredTat {
                tat,
                expires_at_ms: 0,
            };
            assert_eq!(parse_tat(stored.text().as_bytes()), Some(tat));
        }
    }
}
