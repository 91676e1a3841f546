//! Integers as the server's decimal text, on the stack: the least a module does to store or
//! replicate a number it computed.

/// An integer's decimal text, at most 20 bytes.
pub struct Digits {
    buf: [u8; 20],
    at: usize,
}

impl Digits {
    /// `value`, which is never negative here (counters, TATs, Unix times).
    #[inline]
    pub fn of(value: i64) -> Digits {
        let mut digits = Digits {
            buf: [0; 20],
            at: 20,
        };
        let mut rest = value.unsigned_abs();
        loop {
            digits.at -= 1;
            digits.buf[digits.at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
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
        for value in [0, 1, 9, 10, 99, 1_000_000, 1_796_117_261_442_000] {
            let digits = Digits::of(value);
            assert_eq!(digits.bytes(), value.to_string().as_bytes());
            assert_eq!(parse(digits.bytes()), Some(value));
        }
        for bad in [&b""[..], b"-1", b"1a", b"12345678901234567890"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
