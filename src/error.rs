//! Every error a Goblin command can reply with, spelled exactly as the server's own commands
//! spell it, so clients that match on error text cannot tell the difference.

use std::borrow::Cow;

use goblin_core::counter::CounterError;
use goblin_core::window::ExpireOverflow;

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
    /// A reply the server's command spells out for itself, error code included.
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

impl From<CounterError> for CommandError {
    fn from(error: CounterError) -> Self {
        match error {
            CounterError::IncrementOverflow => CommandError::IncrementOverflow,
            CounterError::ExpireOverflow => CommandError::InvalidExpire,
        }
    }
}

impl From<ExpireOverflow> for CommandError {
    fn from(_: ExpireOverflow) -> Self {
        CommandError::InvalidExpire
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_match_the_servers_own_wording() {
        assert_eq!(
            CommandError::WrongArity.reply_text("goblin.zwindow"),
            "ERR wrong number of arguments for 'goblin.zwindow' command"
        );
        assert_eq!(
            CommandError::InvalidExpire.reply_text("goblin.increx"),
            "ERR invalid expire time in 'goblin.increx' command"
        );
        assert!(CommandError::WrongType
            .reply_text("goblin.cad")
            .starts_with("WRONGTYPE "));
    }
}
