//! Numbers as the server's decimal text: formatted on the stack for replicas and the AOF (this
//! runs on every write, where a heap string per number shows in the latency), and stored
//! integers read back exactly as INCR reads them.

use std::fmt::{self, Write};

/// A formatted number, at most 32 bytes: `buf[start..end]`.
pub struct Decimal {
    buf: [u8; 32],
    start: usize,
    end: usize,
}

/// "00" to "99", two digits at a time.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

impl Decimal {
    fn new() -> Self {
        Decimal {
            buf: [0; 32],
            start: 0,
            end: 0,
        }
    }

    /// An integer, as INCR prints it.
    pub fn integer(value: i64) -> Self {
        let mut text = Self::digits(value.unsigned_abs());
        if value < 0 {
            text.start -= 1;
            text.buf[text.start] = b'-';
        }
        text
    }

    /// An unsigned integer, as Rust prints a `u64` (CL.THROTTLE's TAT in nanoseconds, which
    /// may pass `i64::MAX`).
    pub fn unsigned(value: u64) -> Self {
        Self::digits(value)
    }

    /// The digits of `value`, written from the right end of the buffer towards its start (20
    /// at most, "18446744073709551615"; a sign fits before them). By hand, not `write!`: this
    /// runs on every write of a TAT or an expiry, and the formatting machinery costs several
    /// times the arithmetic. Four digits a division, two from the table at a time.
    fn digits(value: u64) -> Self {
        let mut text = Self::new();
        let mut at = text.buf.len();
        text.end = at;
        let mut rest = value;
        let mut pair = |at: &mut usize, two: u64| {
            let two = two as usize * 2;
            *at -= 2;
            text.buf[*at..*at + 2].copy_from_slice(&PAIRS[two..two + 2]);
        };
        while rest >= 10_000 {
            let four = rest % 10_000;
            rest /= 10_000;
            pair(&mut at, four % 100);
            pair(&mut at, four / 100);
        }
        if rest >= 100 {
            pair(&mut at, rest % 100);
            rest /= 100;
        }
        if rest >= 10 {
            pair(&mut at, rest);
        } else {
            at -= 1;
            text.buf[at] = b'0' + rest as u8;
        }
        text.start = at;
        text
    }

    /// The shortest decimal that parses back to exactly `score` (17 significant digits at the
    /// most), so a replica and a replayed AOF hold the same double, bit for bit. Plain notation
    /// from 1e-5 up to 1e17, so timestamps read as themselves; exponent notation outside it.
    pub fn score(score: f64) -> Self {
        // A whole number below 2^53 (a timestamp in milliseconds or seconds, a lease's end):
        // every integer there is a double, so its shortest text is its digits, formatted here
        // without the float machinery (about 800 instructions). Not -0, which prints its sign.
        const EXACT: f64 = (1u64 << f64::MANTISSA_DIGITS) as f64;
        if score.abs() < EXACT && (score != 0.0 || score.is_sign_positive()) {
            let whole = score as i64;
            if whole as f64 == score {
                return Self::integer(whole);
            }
        }
        // Seconds with their milliseconds (the server's clock, `*`), below 2^41 seconds: the
        // double nearest a whole number of milliseconds over 1000. Its shortest text is those
        // digits with the point three from the right, trailing zeros dropped: that text reads
        // back as this double, and any other of as many digits or fewer is at least a
        // millisecond away, more than the double's spacing there (under half a millisecond).
        if score.abs() < (1u64 << 41) as f64 && score != 0.0 {
            let scaled = score * 1000.0;
            let millis = (scaled + 0.5f64.copysign(scaled)) as i64;
            if millis as f64 / 1000.0 == score {
                return Self::milliseconds(millis);
            }
        }
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

    /// `millis / 1000` as the shortest decimal: the digits with the point three from the right,
    /// trailing zeros dropped (`millis` is no multiple of 1000: a whole number is `integer`'s).
    fn milliseconds(millis: i64) -> Self {
        let mut text = Self::digits(millis.unsigned_abs());
        // At least four digits, "0" before the point: 5 ms is "0.005".
        while text.end - text.start < 4 {
            text.start -= 1;
            text.buf[text.start] = b'0';
        }
        // The digits before the point move left by one (the digits end the buffer), for it.
        let point = text.end - 3;
        text.buf.copy_within(text.start..point, text.start - 1);
        text.start -= 1;
        text.buf[point - 1] = b'.';
        while text.buf[text.end - 1] == b'0' {
            text.end -= 1;
        }
        if millis < 0 {
            text.start -= 1;
            text.buf[text.start] = b'-';
        }
        text
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }
}

impl Write for Decimal {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.end + s.len();
        let room = self.buf.get_mut(self.end..end).ok_or(fmt::Error)?;
        room.copy_from_slice(s.as_bytes());
        self.end = end;
        Ok(())
    }
}

/// Reads a stored integer exactly as INCR does (the server's `string2ll`): an optional `-`,
/// no `+`, no leading zeros, no spaces, at most 20 bytes, and within `i64`.
#[inline]
pub fn parse_integer(bytes: &[u8]) -> Option<i64> {
    // What arguments mostly are, read where they are read: up to 8 digits, no sign.
    if let [first @ b'1'..=b'9', rest @ ..] = bytes {
        if rest.len() < 8 {
            let mut value = i64::from(first - b'0');
            for &byte in rest {
                let digit = byte.wrapping_sub(b'0');
                if digit > 9 {
                    return None;
                }
                value = value * 10 + i64::from(digit);
            }
            return Some(value);
        }
    }
    parse_any_integer(bytes)
}

/// `parse_integer` for every other text.
#[inline(never)]
fn parse_any_integer(bytes: &[u8]) -> Option<i64> {
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
    // Up to 18 digits cannot pass i64 (every argument and TAT a client sends): no check of
    // the range, and eight digits at a time.
    if digits.len() <= 18 {
        let mut magnitude: u64 = 0;
        let mut eights = digits.chunks_exact(8);
        for chunk in &mut eights {
            magnitude = magnitude * 100_000_000 + eight_digits(chunk)?;
        }
        for &byte in eights.remainder() {
            let digit = byte.wrapping_sub(b'0');
            if digit > 9 {
                return None;
            }
            magnitude = magnitude * 10 + u64::from(digit);
        }
        let magnitude = magnitude as i64;
        return Some(if negative { -magnitude } else { magnitude });
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

/// The value of eight decimal digits, `None` if any byte is not one: all eight at once, in one
/// 64-bit word (the digit pairs, then the pairs of pairs, each step a multiply and a shift).
fn eight_digits(chunk: &[u8]) -> Option<u64> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    let word = u64::from_le_bytes(chunk.try_into().ok()?);
    // Every byte 0x30..=0x39: its high half 3, and still 3 once 6 is added to its low half
    // (which then cannot carry into the next byte).
    if word & HIGH != ZEROS || word.wrapping_add(0x0606_0606_0606_0606) & HIGH != ZEROS {
        return None;
    }
    // The first digit is the lowest byte. Each byte becomes its digit times 10 plus the next:
    // the pairs, in bytes 0, 2, 4 and 6; then pairs 0 and 2 times 100 and 10^6, pairs 1 and 3
    // times 1 and 10^4, summed in the high half.
    let digits = word - ZEROS;
    let pairs = digits * 10 + (digits >> 8);
    const LANES: u64 = 0x0000_00FF_0000_00FF;
    let value = ((pairs & LANES) * (100 + (1_000_000 << 32))
        + ((pairs >> 16) & LANES) * (1 + (10_000 << 32)))
        >> 32;
    Some(value)
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

    /// Marsaglia's xorshift from `seed`: the tests' sample draws, the same on every run.
    fn xorshift(mut bits: u64) -> impl FnMut() -> u64 {
        move || {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            bits
        }
    }

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
    fn whole_scores_print_as_the_float_formatting_prints_them() {
        let exact = (1u64 << 53) as f64;
        let mut samples = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            1015.0,
            1_700_000_000_123.0,
            exact - 1.0,
            -(exact - 1.0),
            exact,
            exact + 2.0,
            1e16,
            99_999_999_999_999_990.0,
        ];
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..100_000 {
            let bits = next();
            samples.push((bits >> 11) as f64);
            samples.push(-((bits >> 20) as f64));
        }
        for score in samples {
            let expected = if score.abs() < 1e17 || score == 0.0 {
                format!("{score}")
            } else {
                format!("{score:e}")
            };
            assert_eq!(text(Decimal::score(score)), expected, "{score:e}");
        }
    }

    #[test]
    fn seconds_with_milliseconds_print_as_the_float_formatting_prints_them() {
        let mut samples = vec![
            1,
            -1,
            5,
            10,
            999,
            1001,
            1500,
            -1500,
            123_456_789_012,
            1_796_623_075_372,
        ];
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..200_000 {
            let bits = next();
            samples.push((bits >> 24) as i64);
            samples.push(-((bits >> 40) as i64));
            samples.push(1_796_000_000_000 + (bits >> 44) as i64);
        }
        for millis in samples {
            let score = millis as f64 / 1000.0;
            assert_eq!(
                text(Decimal::score(score)),
                format!("{score}"),
                "{millis} ms"
            );
        }
        // Just past where milliseconds are this far apart: the float formatting's.
        let far = (1u64 << 41) as f64 + 0.5;
        assert_eq!(text(Decimal::score(far)), format!("{far}"));
    }

    #[test]
    fn infinities_print_as_the_server_reads_them() {
        assert_eq!(text(Decimal::score(f64::INFINITY)), "inf");
        assert_eq!(text(Decimal::score(f64::NEG_INFINITY)), "-inf");
    }

    #[test]
    fn every_score_round_trips_bit_for_bit() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
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
            let score = f64::from_bits(next());
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
            (b"999999999999999999", 999_999_999_999_999_999),
            (b"-999999999999999999", -999_999_999_999_999_999),
            (b"1000000000000000000", 1_000_000_000_000_000_000),
            (b"1796117261442000", 1_796_117_261_442_000),
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
            b"12345678901234567/",
            b"12345678901234567:",
            b"-12a",
        ];
        for text in refused {
            assert_eq!(parse_integer(text), None, "{text:?}");
        }
        // Each digit in each place of a run of eight, and a byte just outside the digits there.
        for place in 0..18 {
            for digit in b'0'..=b'9' {
                let mut text = *b"123456789012345678";
                text[place] = digit;
                let expected = std::str::from_utf8(&text).unwrap().parse().ok();
                let expected = expected.filter(|_| text[0] != b'0');
                assert_eq!(parse_integer(&text), expected, "{text:?}");
            }
            for outside in [b'/', b':', b' ', b'.', 0, 0x80, 0xff, b'a', b'?', b'@'] {
                let mut text = *b"123456789012345678";
                text[place] = outside;
                assert_eq!(parse_integer(&text), None, "{text:?}");
            }
        }
        // Every length, both signs, against Rust's reading of the same plain digits.
        let mut digits = String::new();
        for length in 1..=20 {
            digits.push(char::from(b'0' + (length % 9 + 1) as u8));
            for text in [digits.clone(), format!("-{digits}")] {
                assert_eq!(parse_integer(text.as_bytes()), text.parse().ok(), "{text}");
            }
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

    /// `string2ll` as the server writes it, digit by digit with every check, for comparing.
    fn string2ll(bytes: &[u8]) -> Option<i64> {
        if bytes.is_empty() || bytes.len() >= 21 {
            return None;
        }
        if bytes == b"0" {
            return Some(0);
        }
        let (negative, digits) = match bytes {
            [b'-', rest @ ..] => (true, rest),
            _ => (false, bytes),
        };
        if !matches!(digits.first(), Some(b'1'..=b'9')) {
            return None;
        }
        let mut value: u64 = 0;
        for &byte in digits {
            if !byte.is_ascii_digit() {
                return None;
            }
            value = value.checked_mul(10)?.checked_add(u64::from(byte - b'0'))?;
        }
        if negative {
            (value <= 1 << 63).then(|| (value as i64).wrapping_neg())
        } else {
            i64::try_from(value).ok()
        }
    }

    #[test]
    fn random_texts_parse_as_string2ll_reads_them() {
        let alphabet = b"0123456789999999-+ a/:.";
        let mut next = xorshift(0x1234_5678_9abc_def1);
        for _ in 0..300_000 {
            let length = (next() % 21) as usize;
            let digits_only = !next().is_multiple_of(4);
            let text: Vec<u8> = (0..length)
                .map(|i| {
                    let pick = next() as usize;
                    if digits_only && !(i == 0 && matches!(pick % 7, 0)) {
                        b'0' + (pick % 10) as u8
                    } else {
                        alphabet[pick % alphabet.len()]
                    }
                })
                .collect();
            assert_eq!(parse_integer(&text), string2ll(&text), "{text:?}");
        }
    }
}
