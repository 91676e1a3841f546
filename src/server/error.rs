//! The error replies in the server's own words: those every command shares (`CommandError`'s
//! variants: a wrong arity, not an integer, the wrong type ...), and those of the arguments'
//! shared readers (a count, a timeout). A command's own words are `crate::error`'s, as
//! `CommandError::Message`.

use std::borrow::Cow;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandError {
    /// Wrong number of arguments.
    WrongArity,
    NotInteger,
    NotFloat,
    WrongType,
    IncrementOverflow,
    /// The absolute expiry does not fit in a signed 64-bit millisecond timestamp.
    InvalidExpire,
    /// `ERR syntax error`
    Syntax,
    /// A reply one command spells out for itself, error code included: one of the constants
    /// below.
    Message(&'static str),
    /// A Rust panic was caught at the command boundary instead of killing the server.
    Internal,
}

impl CommandError {
    /// The error reply of command `name` (lower case), with its error code as the first word.
    pub fn reply_text(&self, name: &str) -> Cow<'static, str> {
        match self {
            Self::WrongArity => {
                format!("ERR wrong number of arguments for '{name}' command").into()
            }
            Self::NotInteger => "ERR value is not an integer or out of range".into(),
            Self::NotFloat => "ERR value is not a valid float".into(),
            Self::WrongType => {
                "WRONGTYPE Operation against a key holding the wrong kind of value".into()
            }
            Self::IncrementOverflow => "ERR increment or decrement would overflow".into(),
            Self::InvalidExpire => format!("ERR invalid expire time in '{name}' command").into(),
            Self::Syntax => "ERR syntax error".into(),
            Self::Message(text) => Cow::Borrowed(text),
            Self::Internal => "ERR goblin internal error (see the server log)".into(),
        }
    }
}

/// A count that must be at least 1 (GCRA's `TOKENS`, every `COST`), in Redis's words.
pub const AT_LEAST_ONE: CommandError = CommandError::Message(
    "ERR value is out of range, value must between 1 and 9223372036854775807",
);

/// A blocking command's timeout, in the words of BLPOP's.
pub mod timeout {
    use super::CommandError::{self, Message};

    pub const NOT_A_FLOAT: CommandError = Message("ERR timeout is not a float or out of range");
    pub const OUT_OF_RANGE: CommandError = Message("ERR timeout is out of range");
    pub const NEGATIVE: CommandError = Message("ERR timeout is negative");
}
