//! DELEX's conditions and DIGEST (Redis 8.4): what a condition says about a string value. The
//! digest is XXH3-64 with seed 0, written as 16 lower-case hex digits, leading zeros kept.

use xxhash_rust::xxh3::xxh3_64;

/// The digest of a string value, as DIGEST replies it.
pub fn digest(value: &[u8]) -> [u8; 16] {
    let mut hex = [0u8; 16];
    let hash = xxh3_64(value);
    for (i, digit) in hex.iter_mut().enumerate() {
        let nibble = (hash >> (60 - 4 * i)) & 0xf;
        *digit = b"0123456789abcdef"[nibble as usize];
    }
    hex
}

/// A DELEX condition on the key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition<'a> {
    /// IFEQ: the value is these bytes.
    Equal(&'a [u8]),
    /// IFNE: it is not.
    NotEqual(&'a [u8]),
    /// IFDEQ: its digest is this one (hex digits in either case).
    DigestEqual(&'a [u8]),
    /// IFDNE: it is not.
    DigestNotEqual(&'a [u8]),
}

/// Why a condition is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionError {
    /// Not one of IFEQ, IFNE, IFDEQ, IFDNE.
    Unknown,
    /// A digest that is not 16 bytes long. (Only the length is checked: a digest with other
    /// characters is accepted and simply never matches.)
    DigestLength,
}

impl<'a> Condition<'a> {
    /// The condition `token operand`; `token` in any letter case, compared as the server
    /// compares option names (as a C string: up to the first NUL byte).
    pub fn parse(token: &[u8], operand: &'a [u8]) -> Result<Condition<'a>, ConditionError> {
        let token = token.split(|&byte| byte == 0).next().unwrap_or(token);
        let is = |name: &str| token.eq_ignore_ascii_case(name.as_bytes());
        let digest = |operand: &'a [u8]| {
            if operand.len() == 16 {
                Ok(operand)
            } else {
                Err(ConditionError::DigestLength)
            }
        };
        if is("IFEQ") {
            Ok(Condition::Equal(operand))
        } else if is("IFNE") {
            Ok(Condition::NotEqual(operand))
        } else if is("IFDEQ") {
            digest(operand).map(Condition::DigestEqual)
        } else if is("IFDNE") {
            digest(operand).map(Condition::DigestNotEqual)
        } else {
            Err(ConditionError::Unknown)
        }
    }

    /// Whether the key, holding `value`, is to be deleted.
    pub fn holds_for(self, value: &[u8]) -> bool {
        let digest_is = |expected: &[u8]| digest(value).eq_ignore_ascii_case(expected);
        match self {
            Condition::Equal(expected) => value == expected,
            Condition::NotEqual(expected) => value != expected,
            Condition::DigestEqual(expected) => digest_is(expected),
            Condition::DigestNotEqual(expected) => !digest_is(expected),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_the_servers() {
        // Values Redis 8.10's DIGEST replied.
        assert_eq!(&digest(b""), b"2d06800538d394c2");
        assert_eq!(&digest(b"hello"), b"9555e8555c62dcfd");
        assert_eq!(&digest(b"12345"), b"f34099ede96b5581");
        let long = b"v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjytls2kwlj7626sd";
        assert_eq!(&digest(long), b"00006c38adf31777", "leading zeros kept");
    }

    #[test]
    fn conditions_parse_in_any_case() {
        assert_eq!(Condition::parse(b"ifeq", b"v"), Ok(Condition::Equal(b"v")));
        assert_eq!(
            Condition::parse(b"IfNe", b"v"),
            Ok(Condition::NotEqual(b"v"))
        );
        assert_eq!(
            Condition::parse(b"IFEQ\0junk", b"v"),
            Ok(Condition::Equal(b"v"))
        );
        assert_eq!(Condition::parse(b"IF", b"v"), Err(ConditionError::Unknown));
        assert_eq!(
            Condition::parse(b"IFDEQ", b"123"),
            Err(ConditionError::DigestLength)
        );
        assert_eq!(
            Condition::parse(b"ifdne", b""),
            Err(ConditionError::DigestLength)
        );
        assert!(Condition::parse(b"IFDEQ", b"zzzzzzzzzzzzzzzz").is_ok());
    }

    #[test]
    fn what_each_condition_deletes() {
        let holds = |token: &[u8], operand: &[u8], value: &[u8]| {
            Condition::parse(token, operand).unwrap().holds_for(value)
        };
        assert!(holds(b"IFEQ", b"a", b"a"));
        assert!(!holds(b"IFEQ", b"a", b"b"));
        assert!(holds(b"IFNE", b"a", b"b"));
        assert!(!holds(b"IFNE", b"a", b"a"));
        assert!(
            holds(b"IFDEQ", b"9555E8555C62DCFD", b"hello"),
            "upper-case digits match"
        );
        assert!(!holds(b"IFDEQ", b"zzzzzzzzzzzzzzzz", b"hello"));
        assert!(holds(b"IFDNE", b"zzzzzzzzzzzzzzzz", b"hello"));
        assert!(!holds(b"IFDNE", b"9555e8555c62dcfd", b"hello"));
        assert!(
            !holds(b"IFDEQ", b"9555e8555c62dcf\0", b"hello"),
            "a NUL never matches"
        );
    }
}
