//! GOBLIN.GCRA's algorithm: the Generic Cell Rate Algorithm, with the arithmetic and the reply
//! of the `GCRA` command Redis wrote for 8.8 and held back before 8.8 shipped (in no release
//! since; Redis 8.10's source still carries it, compiled out). All times are
//! Unix microseconds; the state is one number per key, the theoretical arrival time (TAT) of
//! the next request. The decision is `decide`, from the stored TAT (read with `read_tat`) and
//! the clock; the module stores what it decides through its effects. `throttle` is `decide`
//! and the store together over a `TatStore`, which only `MemoryTat` implements: the unit
//! tests' and the fuzzer's.

use crate::decimal::{parse_integer, Decimal};

/// The limits of one call, as parsed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// `max_burst + 1` (the capacity; `i64::MAX` stays `i64::MAX`).
    pub capacity: i64,
    /// Tokens regained per `period`, at least 1.
    pub tokens_per_period: i64,
    /// Seconds, in (0, 1e12).
    pub period: f64,
    /// TOKENS: what this request costs, at least 1.
    pub cost: i64,
}

impl Limits {
    /// The capacity from the `max_burst` argument (at least 0).
    pub fn capacity_of(max_burst: i64) -> i64 {
        max_burst.saturating_add(1)
    }
}

/// A TAT as a key holds it: a plain string, the decimal text of the microseconds (an integer
/// as INCR reads one), and an expiry at the TAT floored to the millisecond, when the bucket is
/// full again. One place for both, so the key, its expiry and what replicas get agree.
pub struct StoredTat {
    pub text: Decimal,
    /// Unix milliseconds.
    pub expires_at_ms: i64,
}

/// How `tat` is stored.
pub fn stored_tat(tat: i64) -> StoredTat {
    StoredTat {
        text: Decimal::integer(tat),
        expires_at_ms: tat / 1000,
    }
}

impl StoredTat {
    /// `expires_at_ms` as decimal text, for `SET key tat PXAT ms`: the TAT's own text without
    /// its last three digits (the division truncates, as the text does), with nothing more to
    /// format; "0" under a millisecond either way.
    pub fn expires_at_text(&self) -> &[u8] {
        let text = self.text.as_bytes();
        let sign = usize::from(text.first() == Some(&b'-'));
        if text.len() - sign > 3 {
            &text[..text.len() - 3]
        } else {
            b"0"
        }
    }
}

/// Why a string key holds no TAT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TatError {
    /// Not an integer as INCR reads one.
    NotATat,
    /// A negative integer.
    Negative,
}

/// The TAT a string key holds.
pub fn read_tat(stored: &[u8]) -> Result<i64, TatError> {
    match parse_integer(stored) {
        None => Err(TatError::NotATat),
        Some(tat) if tat < 0 => Err(TatError::Negative),
        Some(tat) => Ok(tat),
    }
}

/// Where the TAT lives.
pub trait TatStore {
    /// The stored TAT, if the key has one.
    fn tat(&self) -> Option<i64>;
    /// Stores `tat` as `stored_tat` says.
    fn store(&mut self, tat: i64);
}

/// The reply: `[limited, limit, remaining, retry_after, reset_after]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttle {
    pub limited: bool,
    /// The capacity.
    pub limit: i64,
    /// Tokens left right after this call.
    pub remaining: i64,
    /// Whole seconds (rounded up) until this request would be allowed; -1 when allowed, and
    /// when it never will be (it costs more than the capacity).
    pub retry_after: i64,
    /// Whole seconds (rounded up) until the bucket is full again.
    pub reset_after: i64,
}

impl Throttle {
    pub fn reply(&self) -> [i64; 5] {
        [
            i64::from(self.limited),
            self.limit,
            self.remaining,
            self.retry_after,
            self.reset_after,
        ]
    }
}

/// Why a call cannot be answered in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcraOverflow {
    /// The emission interval times TOKENS, or the new TAT, does not fit 64 bits.
    Tokens,
    /// The emission interval times the capacity does not fit.
    Burst,
}

/// Microseconds between two tokens: `period / tokens_per_period` rounded half up, at least 1.
pub fn emission_interval(limits: &Limits) -> i64 {
    let period_us = limits.period * 1_000_000.0;
    let interval = (period_us / limits.tokens_per_period as f64 + 0.5) as i64;
    interval.max(1)
}

/// Seconds, rounded up, of a time in microseconds: Redis's GCRA's `ceil(us / 1000000.)`, the
/// quotient rounded to a double first. The ceiling is taken from the truncation (exact for
/// every quotient of an `i64`, whose magnitude is below 2^63) without a call into libm.
fn ceil_seconds(us: i64) -> i64 {
    let seconds = us as f64 / 1_000_000.0;
    let truncated = seconds as i64;
    if (truncated as f64) < seconds {
        truncated + 1
    } else {
        truncated
    }
}

/// One request at `now` (microseconds, a whole millisecond: the server's command-time
/// snapshot): allowed, and the new TAT stored; or limited, and nothing stored.
pub fn throttle<S: TatStore>(
    store: &mut S,
    limits: &Limits,
    now: i64,
) -> Result<Throttle, GcraOverflow> {
    let decision = decide(store.tat(), limits, now)?;
    if let Some(tat) = decision.new_tat {
        store.store(tat);
    }
    Ok(decision.throttle)
}

/// What GCRA decides for one request, before anything is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// GOBLIN.GCRA's reply.
    pub throttle: Throttle,
    /// The TAT to store, when the request is allowed.
    pub new_tat: Option<i64>,
    /// How far ahead of now the TAT stands (from `base`), the tolerance and the emission
    /// interval: what `standing` is computed from, only when asked.
    standing_ttl: i64,
    tolerance: i64,
    emission: i64,
}

impl Decision {
    /// GOBLIN.GCRA's reply had the request been refused: `remaining` and `reset_after` from the
    /// TAT as it stands (what it says when it refuses), `retry_after` -1 if it would have been
    /// allowed. Only GOBLIN.MGCRA's refusal of a policy that alone would allow asks for it.
    pub fn standing(&self) -> Throttle {
        if self.throttle.limited {
            return self.throttle;
        }
        Throttle {
            remaining: remaining(self.tolerance, self.emission, self.standing_ttl),
            reset_after: ceil_seconds(self.standing_ttl),
            ..self.throttle
        }
    }
}

/// Tokens of cost 1 left, with the TAT `ttl` ahead of now; never negative.
fn remaining(tolerance: i64, emission: i64, ttl: i64) -> i64 {
    let headroom = tolerance - ttl;
    if headroom > -emission {
        headroom / emission
    } else {
        0
    }
}

/// GCRA's decision for a request of `limits.cost` (0: a look that takes nothing) against `tat`
/// at `now`. The arithmetic and the overflow checks of Redis's GCRA, in its order.
pub fn decide(tat: Option<i64>, limits: &Limits, now: i64) -> Result<Decision, GcraOverflow> {
    let emission = emission_interval(limits);
    if limits.cost > 0 && emission > i64::MAX / limits.cost {
        return Err(GcraOverflow::Tokens);
    }
    if emission > i64::MAX / limits.capacity {
        return Err(GcraOverflow::Burst);
    }
    // How far ahead of now the TAT may run: the whole capacity.
    let tolerance = emission * limits.capacity;
    let increment = emission * limits.cost;
    let base = now.max(tat.unwrap_or(now));
    if i64::MAX - base < increment {
        return Err(GcraOverflow::Tokens);
    }
    let new_tat = base + increment;
    let early_by = new_tat - tolerance - now;
    let limited = early_by > 0;
    // From `base`, not the TAT: a TAT behind the clock is a full bucket, as a missing key is.
    // Under Redis's GCRA the key expires at its TAT, so the two never differ there; Goblin's
    // TAT is a plain string that SET or PERSIST can leave behind the clock.
    let standing_ttl = base - now;
    // A refusal answers from the TAT as it stands; an allowed request from the new one.
    let ttl = if limited { standing_ttl } else { new_tat - now };
    Ok(Decision {
        throttle: Throttle {
            limited,
            limit: limits.capacity,
            remaining: remaining(tolerance, emission, ttl),
            // A request dearer than the whole capacity never gets through.
            retry_after: if !limited || increment > tolerance {
                -1
            } else {
                ceil_seconds(early_by)
            },
            reset_after: ceil_seconds(ttl),
        },
        new_tat: (!limited).then_some(new_tat),
        standing_ttl,
        tolerance,
        emission,
    })
}

/// What one request would get, with nothing stored: GOBLIN.GCRA's `PEEK`, and GOBLIN.MGCRA's
/// for one policy. The reply `decide` gives, allowed or limited; a `cost` of 0 reads the
/// state alone.
pub fn peek(tat: Option<i64>, limits: &Limits, now: i64) -> Result<Throttle, GcraOverflow> {
    Ok(decide(tat, limits, now)?.throttle)
}

/// A TAT in memory, with the expiry a server would give it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MemoryTat {
    pub tat: Option<i64>,
    /// Milliseconds.
    pub expires_at: Option<i64>,
}

impl MemoryTat {
    /// The key as a server sees it at `now_ms`: gone once its expiry has passed.
    pub fn at(&mut self, now_ms: i64) -> &mut Self {
        if self.expires_at.is_some_and(|at| now_ms > at) {
            *self = MemoryTat::default();
        }
        self
    }
}

impl TatStore for MemoryTat {
    fn tat(&self) -> Option<i64> {
        self.tat
    }

    fn store(&mut self, tat: i64) {
        self.tat = Some(tat);
        self.expires_at = Some(stored_tat(tat).expires_at_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000_000;

    fn limits(max_burst: i64, tokens_per_period: i64, period: f64, cost: i64) -> Limits {
        Limits {
            capacity: Limits::capacity_of(max_burst),
            tokens_per_period,
            period,
            cost,
        }
    }

    fn call(key: &mut MemoryTat, l: Limits, now: i64) -> [i64; 5] {
        throttle(key.at(now / 1000), &l, now)
            .expect("no overflow")
            .reply()
    }

    #[test]
    fn a_fresh_key_gets_the_burst() {
        let mut key = MemoryTat::default();
        assert_eq!(
            call(&mut key, limits(5, 1, 60.0, 1), NOW),
            [0, 6, 5, -1, 60]
        );
        assert_eq!(key.tat, Some(NOW + 60_000_000));
        assert_eq!(key.expires_at, Some((NOW + 60_000_000) / 1000));
    }

    #[test]
    fn the_burst_runs_out_then_retry_after_says_when() {
        let mut key = MemoryTat::default();
        let l = limits(5, 1, 60.0, 1);
        for remaining in (0..6).rev() {
            assert_eq!(call(&mut key, l, NOW)[..3], [0, 6, remaining]);
        }
        assert_eq!(call(&mut key, l, NOW), [1, 6, 0, 60, 360]);
        // Limited calls store nothing.
        assert_eq!(key.tat, Some(NOW + 360_000_000));
    }

    #[test]
    fn tokens_cost_several() {
        let mut key = MemoryTat::default();
        assert_eq!(
            call(&mut key, limits(5, 1, 60.0, 3), NOW),
            [0, 6, 3, -1, 180]
        );
        let mut key = MemoryTat::default();
        assert_eq!(
            call(&mut key, limits(2, 1, 60.0, 3), NOW),
            [0, 3, 0, -1, 180]
        );
        assert_eq!(
            call(&mut key, limits(2, 1, 60.0, 1), NOW),
            [1, 3, 0, 60, 180]
        );
    }

    #[test]
    fn a_request_dearer_than_the_capacity_never_gets_through() {
        let mut key = MemoryTat::default();
        assert_eq!(call(&mut key, limits(2, 1, 60.0, 4), NOW), [1, 3, 3, -1, 0]);
        assert_eq!(key, MemoryTat::default(), "nothing stored");
    }

    #[test]
    fn tokens_come_back_with_time() {
        let mut key = MemoryTat::default();
        let l = limits(1, 1, 1.0, 1);
        assert_eq!(call(&mut key, l, NOW)[0], 0);
        assert_eq!(call(&mut key, l, NOW)[0], 0);
        assert_eq!(call(&mut key, l, NOW)[0], 1);
        assert_eq!(call(&mut key, l, NOW + 1_100_000)[0], 0);
    }

    #[test]
    fn max_burst_zero_allows_the_sustained_rate_only() {
        let mut key = MemoryTat::default();
        let l = limits(0, 1, 1.0, 1);
        assert_eq!(call(&mut key, l, NOW), [0, 1, 0, -1, 1]);
        assert_eq!(call(&mut key, l, NOW), [1, 1, 0, 1, 1]);
    }

    #[test]
    fn the_emission_interval_rounds_half_up_and_is_at_least_a_microsecond() {
        assert_eq!(emission_interval(&limits(0, 3, 1.0, 1)), 333_333);
        assert_eq!(emission_interval(&limits(0, 2, 0.000_001, 1)), 1);
        assert_eq!(emission_interval(&limits(1, 1, 1e-7, 1)), 1);
        let mut key = MemoryTat::default();
        assert_eq!(call(&mut key, limits(0, 3, 1.0, 1), NOW), [0, 1, 0, -1, 1]);
        assert_eq!(key.expires_at, Some(NOW / 1000 + 333));
    }

    #[test]
    fn the_largest_burst() {
        let mut key = MemoryTat::default();
        let l = limits(i64::MAX, 1_000_000, 1.0, 1);
        assert_eq!(call(&mut key, l, NOW), [0, i64::MAX, i64::MAX - 1, -1, 1]);
        assert_eq!(Limits::capacity_of(i64::MAX - 1), i64::MAX);
        let l = Limits {
            cost: i64::MAX,
            ..l
        };
        assert_eq!(throttle(&mut key, &l, NOW), Err(GcraOverflow::Tokens));
    }

    #[test]
    fn overflows_are_errors_and_store_nothing() {
        let mut key = MemoryTat::default();
        let day = 86_400.0;
        assert_eq!(
            throttle(&mut key, &limits(1, 1, day, 200_000_000), NOW),
            Err(GcraOverflow::Tokens)
        );
        assert_eq!(
            throttle(&mut key, &limits(200_000_000, 1, day, 1), NOW),
            Err(GcraOverflow::Burst)
        );
        assert_eq!(
            throttle(&mut key, &limits(1, 1, 2_147_483_647.0, 2_147_483_647), NOW),
            Err(GcraOverflow::Tokens)
        );
        assert_eq!(key, MemoryTat::default());
    }

    #[test]
    fn a_tat_left_in_the_past_is_a_full_bucket() {
        // A key whose TTL was removed: the TAT lags behind the clock. It answers as a missing
        // key does, never with more remaining than the quota or a negative reset.
        for l in [
            limits(0, 1, 1.0, 2),
            limits(4, 1, 2.0, 1),
            limits(4, 1, 2.0, 50),
        ] {
            let mut lagging = MemoryTat {
                tat: Some(NOW - 1_200_000),
                expires_at: None,
            };
            let mut missing = MemoryTat::default();
            let reply = throttle(&mut lagging, &l, NOW).unwrap().reply();
            assert_eq!(reply, throttle(&mut missing, &l, NOW).unwrap().reply());
            assert!(reply[2] <= reply[1] && reply[4] >= 0, "{reply:?}");
            if reply[0] == 0 {
                assert_eq!(lagging.tat, missing.tat, "the same TAT stored");
            } else {
                assert_eq!(
                    lagging.tat,
                    Some(NOW - 1_200_000),
                    "a limited call writes nothing"
                );
            }
        }
    }

    #[test]
    fn tokens_up_to_what_fits_in_microseconds_are_answered() {
        // 2 µs a token: TOKENS may go up to i64::MAX / 2, one more overflows.
        let l = limits(0, 500_000, 1.0, i64::MAX / 3 + 1);
        assert_eq!(emission_interval(&l), 2);
        assert_eq!(i64::MAX / l.cost, 2);
        let mut key = MemoryTat::default();
        assert_eq!(call(&mut key, l, NOW), [1, 1, 1, -1, 0]);
        assert_eq!(key, MemoryTat::default(), "nothing stored");
        let l = Limits {
            cost: i64::MAX / 2 + 1,
            ..l
        };
        assert_eq!(throttle(&mut key, &l, NOW), Err(GcraOverflow::Tokens));
    }

    #[test]
    fn a_new_tat_of_exactly_i64_max_is_answered() {
        let l = limits(0, 1, 1.0, 1);
        let mut key = MemoryTat {
            tat: Some(i64::MAX - 1_000_000),
            expires_at: None,
        };
        let early_s = 9_221_672_036_854; // (i64::MAX - 1_000_000 - NOW) µs, rounded up
        assert_eq!(
            throttle(&mut key, &l, NOW).unwrap().reply(),
            [1, 1, 0, early_s, early_s]
        );
        let mut key = MemoryTat {
            tat: Some(i64::MAX - 999_999),
            expires_at: None,
        };
        assert_eq!(throttle(&mut key, &l, NOW), Err(GcraOverflow::Tokens));
    }

    #[test]
    fn remaining_is_never_negative() {
        // Two tokens taken with a burst of 1; asked again with a burst of 0, the TAT runs a
        // whole interval past the new tolerance.
        let mut key = MemoryTat::default();
        assert_eq!(call(&mut key, limits(1, 1, 1.0, 1), NOW)[0], 0);
        assert_eq!(call(&mut key, limits(1, 1, 1.0, 1), NOW)[0], 0);
        assert_eq!(key.tat, Some(NOW + 2_000_000));
        assert_eq!(call(&mut key, limits(0, 1, 1.0, 1), NOW), [1, 1, 0, 2, 2]);
    }

    #[test]
    fn a_peek_replies_as_the_request_would_and_stores_nothing() {
        let l = limits(4, 1, 2.0, 1);
        let mut key = MemoryTat::default();
        let peeked = peek(key.tat, &l, NOW).unwrap();
        assert_eq!(peeked.reply(), [0, 5, 4, -1, 2]);
        assert_eq!(call(&mut key, l, NOW), peeked.reply());
        for _ in 0..4 {
            call(&mut key, l, NOW);
        }
        let refused = peek(key.tat, &l, NOW).unwrap();
        assert_eq!(refused.reply(), [1, 5, 0, 2, 10]);
        assert_eq!(call(&mut key, l, NOW), refused.reply());
        // Cost 0: the state alone, never refused.
        let state = peek(key.tat, &Limits { cost: 0, ..l }, NOW).unwrap();
        assert_eq!(state.reply(), [0, 5, 0, -1, 10]);
    }

    #[test]
    fn a_key_lives_through_its_expiry_millisecond() {
        // As the server: a key is expired once now > its expiry, not at it.
        let stored = MemoryTat {
            tat: Some(5_000_123),
            expires_at: Some(5_000),
        };
        let mut key = stored.clone();
        assert_eq!(key.at(4_999), &stored);
        assert_eq!(key.at(5_000), &stored);
        assert_eq!(key.at(5_001), &MemoryTat::default());
    }

    #[test]
    fn a_tat_is_stored_as_its_text_and_expires_at_its_millisecond() {
        let stored = stored_tat(1_700_000_000_123_999);
        assert_eq!(stored.text.as_bytes(), b"1700000000123999");
        assert_eq!(stored.expires_at_ms, 1_700_000_000_123);
        assert_eq!(read_tat(stored.text.as_bytes()), Ok(1_700_000_000_123_999));
    }

    #[test]
    fn only_a_non_negative_integer_is_a_tat() {
        assert_eq!(read_tat(b"0"), Ok(0));
        assert_eq!(read_tat(b"-1"), Err(TatError::Negative));
        for text in [&b"01"[..], b"+5", b"-0", b"1.5", b" 5", b"abc", b""] {
            assert_eq!(read_tat(text), Err(TatError::NotATat), "{text:?}");
        }
    }

    #[test]
    fn seconds_round_up_as_the_float_ceiling_does() {
        let mut bits = 0x2545_f491_4f6c_dd1du64;
        let mut samples = vec![
            0,
            1,
            -1,
            999_999,
            1_000_000,
            1_000_001,
            -999_999,
            -1_000_000,
            -1_000_001,
            i64::MAX,
            i64::MIN,
            i64::MAX - 1,
            i64::MIN + 1,
            4_503_599_627_370_497_001,
        ];
        for _ in 0..200_000 {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            samples.push(bits as i64);
            samples.push((bits >> (bits % 63)) as i64);
        }
        for us in samples {
            let expected = (us as f64 / 1_000_000.0).ceil() as i64;
            assert_eq!(ceil_seconds(us), expected, "{us}");
        }
    }

    #[test]
    fn the_expiry_text_is_the_milliseconds_of_the_tat() {
        for tat in [
            0,
            1,
            999,
            1000,
            1001,
            999_999,
            1_000_000,
            NOW,
            NOW + 999,
            NOW + 1000,
            i64::MAX,
            -1,
            -999,
            -1000,
            -1234,
            i64::MIN,
        ] {
            let stored = stored_tat(tat);
            assert_eq!(
                stored.expires_at_text(),
                stored.expires_at_ms.to_string().as_bytes(),
                "{tat}"
            );
        }
    }
}
