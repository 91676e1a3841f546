//! Integers as the server's decimal text, on the stack: the least a module does to store or
//! replicate a number it computed.

/// An integer's decimal text, at most 20 bytes.
pub struct Digits {
    buf: [u8; 20],
    at: usize,
}

/// "00" to "99": two digits per division.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

impl Digits {
    /// `value`, which is never negative here (counters, TATs, Unix times).
    #[inline]
    pub fn of(value: i64) -> Digits {
        let mut digits = Digits {
            buf: [0; 20],
            at: 20,
        };
        let mut rest = value.unsigned_abs();
        while rest >= 100 {
            let pair = (rest % 100) as usize * 2;
            rest /= 100;
            digits.at -= 2;
            digits.buf[digits.at..digits.at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if rest >= 10 {
            let pair = rest as usize * 2;
            digits.at -= 2;
            digits.buf[digits.at..digits.at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else {
            digits.at -= 1;
            digits.buf[digits.at] = b'0' + rest as u8;
        }
        digits
    }

    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.at..]
    }
}

/// The non-negative integer `text` holds, as the floor wrote it; `None` for anything else
/// (the floor is not made for keys it did not write).
#[inline]
pub fn parse(text: &[u8]) -> Option<i64> {
    if text.is_empty() || text.len() > 18 {
        return None;
    }
    let mut value = 0i64;
    for &byte in text {
        if !byte.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(byte - b'0');
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_back_as_written() {
        for value in [
            0,
            1,
            9,
            10,
            11,
            99,
            100,
            101,
            12_345,
            1_000_000,
            1_796_117_261_442_000,
        ] {
            let digits = Digits::of(value);
            assert_eq!(digits.bytes(), value.to_string().as_bytes());
            assert_eq!(parse(digits.bytes()), Some(value));
        }
        // Past what `parse` reads back (18 digits), the text is still the server's.
        assert_eq!(
            Digits::of(i64::MAX).bytes(),
            i64::MAX.to_string().as_bytes()
        );
        for bad in [&b""[..], b"-1", b"1a", b"12345678901234567890"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
