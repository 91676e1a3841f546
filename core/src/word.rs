//! Option names as the server compares them: ignoring ASCII case, and as C strings, so only up
//! to the first NUL byte (`strcasecmp` on the argument's text). Every option of every command,
//! Goblin's and the stand-ins', is matched here.

/// An argument's text up to its first NUL byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word<'a>(&'a [u8]);

impl<'a> Word<'a> {
    pub fn of(bytes: &'a [u8]) -> Word<'a> {
        Word(bytes.split(|&byte| byte == 0).next().unwrap_or(bytes))
    }

    /// Whether this names the option `token`, ignoring ASCII case.
    pub fn is(self, token: &str) -> bool {
        self.0.eq_ignore_ascii_case(token.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_match_in_any_case_up_to_the_first_nul() {
        assert!(Word::of(b"ifeq").is("IFEQ"));
        assert!(Word::of(b"IfEq\0junk").is("IFEQ"));
        assert!(!Word::of(b"IFEQX").is("IFEQ"));
        assert!(!Word::of(b"IF").is("IFEQ"));
        assert!(Word::of(b"").is(""));
        assert!(Word::of(b"\0IFEQ").is(""));
    }
}
