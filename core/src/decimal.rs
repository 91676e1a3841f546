//! Numbers as the decimal text that goes to replicas and the AOF, formatted on the stack: this
//! runs on every write, where a heap string per number shows in the latency.

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
        // 20 bytes at most: cannot overflow the buffer.
        let _ = write!(text, "{value}");
        text
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text(d: Decimal) -> String {
        String::from_utf8(d.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn integers_print_as_incr_prints_them() {
        for value in [0, 1, -1, 42, i64::MAX, i64::MIN] {
            assert_eq!(text(Decimal::integer(value)), value.to_string());
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
}
