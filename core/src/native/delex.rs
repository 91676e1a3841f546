//! DELEX's conditions (Redis 8.4): what a condition says about a string value.

use super::digest::digest;
use crate::word::Word;

/// Which comparison a condition makes: the four options, named once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionKind {
    IfEq,
    IfNe,
    IfDeq,
    IfDne,
}

impl ConditionKind {
    /// Every condition, in the order Redis lists them.
    pub const ALL: [ConditionKind; 4] = [
        ConditionKind::IfEq,
        ConditionKind::IfNe,
        ConditionKind::IfDeq,
        ConditionKind::IfDne,
    ];

    /// The option's name.
    pub const fn token(self) -> &'static str {
        match self {
            ConditionKind::IfEq => "IFEQ",
            ConditionKind::IfNe => "IFNE",
            ConditionKind::IfDeq => "IFDEQ",
            ConditionKind::IfDne => "IFDNE",
        }
    }

    /// Whether its operand is a digest rather than a value.
    pub const fn takes_digest(self) -> bool {
        matches!(self, ConditionKind::IfDeq | ConditionKind::IfDne)
    }

    /// The condition `word` names, if any.
    pub fn named(word: Word<'_>) -> Option<ConditionKind> {
        ConditionKind::ALL
            .into_iter()
            .find(|kind| word.is(kind.token()))
    }
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
    /// Not one of `ConditionKind::ALL`.
    Unknown,
    /// A digest that is not 16 bytes long. (Only the length is checked: a digest with other
    /// characters is accepted and simply never matches.)
    DigestLength,
}

impl<'a> Condition<'a> {
    /// The condition `token operand`. Only a digest's length is checked: a digest with other
    /// characters is accepted and simply never matches.
    pub fn parse(token: Word<'_>, operand: &'a [u8]) -> Result<Condition<'a>, ConditionError> {
        let kind = ConditionKind::named(token).ok_or(ConditionError::Unknown)?;
        if kind.takes_digest() && operand.len() != 16 {
            return Err(ConditionError::DigestLength);
        }
        Ok(match kind {
            ConditionKind::IfEq => Condition::Equal(operand),
            ConditionKind::IfNe => Condition::NotEqual(operand),
            ConditionKind::IfDeq => Condition::DigestEqual(operand),
            ConditionKind::IfDne => Condition::DigestNotEqual(operand),
        })
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
    fn conditions_parse_in_any_case() {
        assert_eq!(
            Condition::parse(Word::of(b"ifeq"), b"v"),
            Ok(Condition::Equal(b"v"))
        );
        assert_eq!(
            Condition::parse(Word::of(b"IfNe"), b"v"),
            Ok(Condition::NotEqual(b"v"))
        );
        assert_eq!(
            Condition::parse(Word::of(b"IFEQ\0junk"), b"v"),
            Ok(Condition::Equal(b"v"))
        );
        assert_eq!(
            Condition::parse(Word::of(b"IF"), b"v"),
            Err(ConditionError::Unknown)
        );
        assert_eq!(
            Condition::parse(Word::of(b"IFDEQ"), b"123"),
            Err(ConditionError::DigestLength)
        );
        assert_eq!(
            Condition::parse(Word::of(b"ifdne"), b""),
            Err(ConditionError::DigestLength)
        );
        assert!(Condition::parse(Word::of(b"IFDEQ"), b"zzzzzzzzzzzzzzzz").is_ok());
    }

    #[test]
    fn what_each_condition_deletes() {
        let holds = |token: &[u8], operand: &[u8], value: &[u8]| {
            Condition::parse(Word::of(token), operand)
                .unwrap()
                .holds_for(value)
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
