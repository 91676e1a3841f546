//! The one number the floor reads back (an integer it stored). It writes numbers with Goblin's
//! core (`goblin_core::decimal`), the same decimal text on the stack as Goblin's writes.

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
            let digits = goblin_core::decimal::Decimal::integer(value);
            assert_eq!(parse(digits.as_bytes()), Some(value));
        }
        for bad in [&b""[..], b"-1", b"1a", b"12345678901234567890"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
