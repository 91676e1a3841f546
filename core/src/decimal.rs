//! Numbers as the server's decimal text: formatted on the stack for replicas and the AOF (this
//! runs on every write, where a heap string per number shows in the latency), and stored
//! integers read back exactly as INCR reads them.

use std::fmt::{self, Write};

/// A formatted number, at most 32 bytes.
pub struct Decimal {
    buf: [u8; 32],
    len: usize,
}

impl Decimal {
    fn new() -> Self {
        Decimal {
            buf: [0; 32],
            len: 0,
        }
    }

    /// An integer, as INCR prints it.
    pub fn integer(value: i64) -> Self {
        let mut text = Self::new();
        if value < 0 {
            text.buf[0] = b'-';
            text.len = 1;
        }
        text.digits(value.unsigned_abs());
        text
    }

    /// An unsigned integer, as Rust prints a `u64` (CL.THROTTLE's TAT in nanoseconds, which
    /// may pass `i64::MAX`).
    pub fn unsigned(value: u64) -> Self {
        let mut text = Self::new();
        text.digits(value);
        text
    }

    /// Appends the digits of `value`.
    fn digits(&mut self, value: u64) {
        // Digits from the right, then moved to the front: 20 at most ("18446744073709551615").
        // By hand, not `write!`: this runs on every write of a TAT or an expiry, and the
        // formatting machinery costs several times the arithmetic.
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        // Two digits per division, from a table of "00" to "99".
        const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";
        let mut rest = value;
        while rest >= 100 {
            let pair = (rest % 100) as usize * 2;
            rest /= 100;
            at -= 2;
            digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if rest >= 10 {
            let pair = rest as usize * 2;
            at -= 2;
            digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else {
            at -= 1;
            digits[at] = b'0' + rest as u8;
        }
        let count = digits.len() - at;
        self.buf[self.len..self.len + count].copy_from_slice(&digits[at..]);
        self.len += count;
    }

    /// The shortest decimal that parses back to exactly `score` (17 significant digits at the
    /// most), so a replica and a replayed AOF hold the same double, bit for bit. Plain notation
    /// from 1e-5 up to 1e17, so timestamps read as themselves; exponent notation outside it.
    pub fn score(score: f64) -> Self {
        let mut text = Self::new();
        let magnitude = score.abs();
        // 24 bytes at most ("-2.2250738585072014e-308"): cannot overflow the buffer.
        let _ = if score.is_infinite() {
            text.write_str(if score > 0.0 { "inf" } else { "-inf" })
        } else if magnitude == 0.0 || (1e-5..1e17).contains(&magnitude) {
            write!(text, "{score}")
        } else {
            write!(text, "{score:e}")
        };
        text
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Write for Decimal {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let room = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        room.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Reads a stored integer exactly as INCR does (the server's `string2ll`): an optional `-`,
/// no `+`, no leading zeros, no spaces, at most 20 bytes, and within `i64`.
pub fn parse_integer(bytes: &[u8]) -> Option<i64> {
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

/// The double a plain integer text is exactly, as every double parser of the servers reads it
/// (`strtod`, `fast_float`, ZADD's): the texts `parse_integer` takes whose value a double holds
/// exactly (at most 2^53 either way). `None` for any other text, which is the server's to read:
/// `-0`, `1.5`, `1e3`, `inf`, a larger integer.
pub fn exact_integer_double(bytes: &[u8]) -> Option<f64> {
    const EXACT: u64 = 1 << f64::MANTISSA_DIGITS;
    parse_integer(bytes)
        .filter(|value| value.unsigned_abs() <= EXACT)
        .map(|value| value as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(d: Decimal) -> String {
        String::from_utf8(d.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn integers_print_as_incr_prints_them() {
        for value in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            42,
            99,
            100,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            assert_eq!(text(Decimal::integer(value)), value.to_string());
        }
        // Every power of ten and its neighbours, both signs.
        let mut power = 1i64;
        while let Some(next) = power.checked_mul(10) {
            for value in [power - 1, power, power + 1, -power - 1, -power, -power + 1] {
                assert_eq!(text(Decimal::integer(value)), value.to_string());
            }
            power = next;
        }
    }

    #[test]
    fn unsigned_integers_print_as_rust_prints_them() {
        for value in [
            0,
            1,
            9,
            10,
            99,
            100,
            i64::MAX as u64,
            i64::MAX as u64 + 1,
            u64::MAX,
        ] {
            assert_eq!(text(Decimal::unsigned(value)), value.to_string());
        }
        let mut power = 1u64;
        while let Some(next) = power.checked_mul(10) {
            for value in [power - 1, power, power + 1] {
                assert_eq!(text(Decimal::unsigned(value)), value.to_string());
            }
            power = next;
        }
    }

    #[test]
    fn timestamps_read_as_themselves() {
        assert_eq!(text(Decimal::score(1015.0)), "1015");
        assert_eq!(text(Decimal::score(1700000000.123)), "1700000000.123");
        assert_eq!(text(Decimal::score(0.1)), "0.1");
        assert_eq!(text(Decimal::score(-4.5)), "-4.5");
        assert_eq!(text(Decimal::score(0.0)), "0");
        assert_eq!(text(Decimal::score(-0.0)), "-0");
        assert_eq!(text(Decimal::score(1e300)), "1e300");
        assert_eq!(text(Decimal::score(1.5e-7)), "1.5e-7");
        assert_eq!(text(Decimal::score(f64::NEG_INFINITY)), "-inf");
    }

    #[test]
    fn infinities_print_as_the_server_reads_them() {
        assert_eq!(text(Decimal::score(f64::INFINITY)), "inf");
        assert_eq!(text(Decimal::score(f64::NEG_INFINITY)), "-inf");
    }

    #[test]
    fn every_score_round_trips_bit_for_bit() {
        let mut bits = 0x9e37_79b9_7f4a_7c15u64;
        let mut samples = vec![
            0.1,
            1.0 / 3.0,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            5e-324,
            -2.2250738585072014e-308,
            123456789012345680.0,
            0.000012345678901234567,
        ];
        for _ in 0..100_000 {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            let score = f64::from_bits(bits);
            if score.is_finite() {
                samples.push(score);
            }
        }
        for score in samples {
            let printed = text(Decimal::score(score));
            let parsed: f64 = printed.parse().unwrap();
            assert_eq!(
                parsed.to_bits(),
                score.to_bits(),
                "{score:e} printed as {printed}"
            );
            let digits = printed
                .bytes()
                .take_while(|b| *b != b'e')
                .filter(u8::is_ascii_digit);
            assert!(digits.count() <= 17 + 5, "{printed}");
        }
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
            assert_eq!(parse_integer(text), Some(*value), "{text:?}");
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
            assert_eq!(parse_integer(text), None, "{text:?}");
        }
    }

    #[test]
    fn plain_integers_are_the_doubles_every_parser_reads() {
        let exact: &[&[u8]] = &[
            b"0",
            b"1",
            b"-1",
            b"60",
            b"1000000",
            b"1700000000123",
            b"9007199254740992",
            b"-9007199254740992",
        ];
        for text in exact {
            let parsed: f64 = std::str::from_utf8(text).unwrap().parse().unwrap();
            assert_eq!(
                exact_integer_double(text).map(f64::to_bits),
                Some(parsed.to_bits()),
                "{text:?}"
            );
        }
        // The server's to read: not plain, not exact, or a negative zero.
        let left: &[&[u8]] = &[
            b"",
            b"-0",
            b"00",
            b"1.5",
            b"1e3",
            b" 1",
            b"+1",
            b"inf",
            b"nan",
            b"0x10",
            b"9007199254740993",
            b"-9007199254740993",
            b"99999999999999999999",
        ];
        for text in left {
            assert_eq!(exact_integer_double(text), None, "{text:?}");
        }
    }
}
