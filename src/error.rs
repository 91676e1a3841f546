//! Every error a Goblin command can reply with, spelled exactly as the server's own commands
//! spell it, so clients that match on error text cannot tell the difference. The errors every
//! command shares, and those of the arguments' shared readers, are the server's words:
//! `CommandError`'s variants, in `server/error.rs` (re-exported here). The ones only one
//! command has are the constants of its module below, in that command's own words (for a
//! stand-in, the native command's; for GOBLIN.GCRA, Redis's GCRA's).

use goblin_core::gcra::{GcraOverflow, TatError};
use goblin_core::increx::CounterError;
use goblin_core::native::cl_throttle::{LimitsError, TatOverflow};
use goblin_core::native::delex::ConditionError;
use goblin_core::zwindow::ExpireOverflow;

pub use crate::server::error::{timeout, CommandError, AT_LEAST_ONE};

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

/// What a waiter whose turn comes while the server is out of memory is answered, in the
/// server's words (its `-OOM` reply to a write command it refuses then).
pub const OUT_OF_MEMORY: CommandError =
    CommandError::Message("OOM command not allowed when used memory > 'maxmemory'.");

/// Fencing tokens' own errors.
pub mod fence {
    use super::CommandError::{self, Message};

    /// A stored token is ahead of this server's clock by more than `fence-margin-ms`: a token
    /// minted now may not exceed one already handed out (`goblin_core::fence`).
    pub const CLOCK_BEHIND: CommandError = Message(
        "ERR FENCE: this server's clock is behind a fencing token it holds by more than fence-margin-ms; it cannot mint a larger one it could prove (check the clocks)",
    );
    /// The key that keeps the key's latest fencing token holds another type (written there by
    /// hand): no token can be kept for the key, and nothing is written.
    pub const LATEST_WRONG_TYPE: CommandError = Message(
        "WRONGTYPE FENCE: the key that keeps this key's latest fencing token holds a value of another type; nothing was written",
    );
    /// The key that keeps a lease holder's (a reader's) own fencing token holds another type.
    pub const OWN_WRONG_TYPE: CommandError = Message(
        "WRONGTYPE FENCE: the key that keeps this holder's fencing token holds a value of another type; nothing was written",
    );
    /// No key of the module's own can share the key's cluster slot.
    pub const NO_SLOT_TAG: CommandError = Message(
        "ERR FENCE needs a key whose cluster slot another key can share: give it a hash tag",
    );
}

/// The readers-writer lock's own errors.
pub mod rwlock {
    use super::CommandError::{self, Message};

    /// GOBLIN.BWLOCK by a reader while another reader waits to be promoted: each would wait
    /// for the other to leave (`goblin_core::rwlock::deadlocks`).
    pub const DEADLOCK: CommandError = Message(
        "DEADLOCK another reader of the key already waits to write, and each would wait for the other to leave",
    );
}

/// GOBLIN.ZWINDOW's own errors.
pub mod zwindow {
    use super::CommandError::{self, Message};

    /// `COST` on a window whose members inside were written without it: their units are
    /// unknown.
    pub const NOT_COST_ENTRIES: CommandError =
        Message("ERR the window holds members written without COST");
    /// `PERMITS n` above `goblin_core::zwindow::MOST_PERMITS`, in the words of the server's own
    /// range errors.
    pub const TOO_MANY_PERMITS: CommandError =
        Message("ERR value is out of range, value must between 1 and 10000");
}

/// GOBLIN.SWINDOW's and GOBLIN.SWSTATS's own errors.
pub mod swindow {
    use super::CommandError::{self, Message};

    pub const WINDOW_RANGE: CommandError = Message("ERR window must be > 0");
    pub const NOT_A_COUNTER: CommandError =
        Message("ERR the key holds a string that is not a sliding window counter");
}

/// GOBLIN.MGCRA's own errors (its policies' are GOBLIN.GCRA's).
pub mod mgcra {
    use super::CommandError::{self, Message};

    /// As ZUNION's `numkeys`.
    pub const NUMPOLICIES: CommandError = Message("ERR numpolicies should be greater than 0");
}

/// GOBLIN.MFWINDOW's own errors.
pub mod mfwindow {
    use super::CommandError::{self, Message};

    /// As ZUNION's `numkeys`.
    pub const NUMWINDOWS: CommandError = Message("ERR numwindows should be greater than 0");
}

/// GOBLIN.GCRA's errors, in the words of the GCRA command Redis wrote.
pub mod gcra {
    use super::CommandError::{self, Message};

    pub const MUST_BE_POSITIVE: CommandError =
        Message("ERR value is out of range, must be positive");
    pub const PERIOD_RANGE: CommandError = Message("ERR period must be > 0 and < 1e12");
    pub const MISSING_TOKENS: CommandError = Message("ERR Missing TOKENS value");
    pub const NOT_A_TAT: CommandError = Message("ERR Invalid TaT value");
    pub const NEGATIVE_TAT: CommandError = Message("ERR Invalid negative TaT value");
    pub const TOKENS_OVERFLOW: CommandError = Message(
        "ERR GCRA limiting uses microsecond accuracy. Combination of period, tokens_per_period and TOKENS would cause an overflow",
    );
    pub const BURST_OVERFLOW: CommandError = Message(
        "ERR GCRA limiting uses microsecond accuracy. Combination of period, tokens_per_period and max_burst would cause an overflow",
    );
}

impl From<GcraOverflow> for CommandError {
    fn from(overflow: GcraOverflow) -> Self {
        match overflow {
            GcraOverflow::Tokens => gcra::TOKENS_OVERFLOW,
            GcraOverflow::Burst => gcra::BURST_OVERFLOW,
        }
    }
}

impl From<TatError> for CommandError {
    fn from(error: TatError) -> Self {
        match error {
            TatError::NotATat => gcra::NOT_A_TAT,
            TatError::Negative => gcra::NEGATIVE_TAT,
        }
    }
}

/// The CL.THROTTLE stand-in's errors. Where redis-cell answers an error ("Cell error: ..."),
/// this answers one in Redis's words; where it crashes the server or wraps its arithmetic, one
/// that says why (`docs/commands/cl.throttle.md`).
pub mod cl_throttle {
    use super::CommandError::{self, Message};

    /// redis-cell's server aborts on an argument that is not UTF-8.
    pub const NOT_UTF8: CommandError = Message("ERR CL.THROTTLE takes UTF-8 arguments only");
    pub const NEGATIVE_BURST: CommandError = Message("ERR max_burst must be >= 0");
    pub const COUNT_BELOW_ONE: CommandError = Message("ERR count_per_period must be > 0");
    pub const PERIOD_BELOW_ONE: CommandError = Message("ERR period must be > 0");
    pub const NEGATIVE_QUANTITY: CommandError = Message("ERR quantity must be >= 0");
    /// redis-cell's "Zero rates are not supported".
    pub const ZERO_RATE: CommandError = Message(
        "ERR zero rates are not supported: count_per_period exceeds the period in nanoseconds",
    );
    pub const RATE_OVERFLOW: CommandError = Message(
        "ERR CL.THROTTLE counts in 64-bit nanoseconds: period over count_per_period would overflow",
    );
    pub const BURST_OVERFLOW: CommandError = Message(
        "ERR CL.THROTTLE counts in 64-bit nanoseconds: period, count_per_period and max_burst would overflow",
    );
    pub const QUANTITY_OVERFLOW: CommandError = Message(
        "ERR CL.THROTTLE counts in 64-bit nanoseconds: period, count_per_period and quantity would overflow",
    );
    pub const TAT_OVERFLOW: CommandError =
        Message("ERR CL.THROTTLE counts in 64-bit nanoseconds: the TAT would overflow");
    /// redis-cell's server aborts on such a key (and answers a UTF-8 error for some).
    pub const NOT_A_TAT: CommandError =
        Message("ERR the key holds a string that is not a CL.THROTTLE TAT");
}

impl From<LimitsError> for CommandError {
    fn from(error: LimitsError) -> Self {
        match error {
            LimitsError::NegativeBurst => cl_throttle::NEGATIVE_BURST,
            LimitsError::CountBelowOne => cl_throttle::COUNT_BELOW_ONE,
            LimitsError::PeriodBelowOne => cl_throttle::PERIOD_BELOW_ONE,
            LimitsError::NegativeQuantity => cl_throttle::NEGATIVE_QUANTITY,
            LimitsError::ZeroRate => cl_throttle::ZERO_RATE,
            LimitsError::RateOverflow => cl_throttle::RATE_OVERFLOW,
            LimitsError::BurstOverflow => cl_throttle::BURST_OVERFLOW,
            LimitsError::QuantityOverflow => cl_throttle::QUANTITY_OVERFLOW,
        }
    }
}

impl From<TatOverflow> for CommandError {
    fn from(_: TatOverflow) -> Self {
        cl_throttle::TAT_OVERFLOW
    }
}

/// The INCREX stand-in's errors, in Redis 8.10's words.
pub mod increx {
    use super::CommandError::{self, Message};

    pub const NOT_INTEGER_INCREMENT: CommandError =
        Message("ERR Increment is not an integer or out of range");
    pub const NOT_FLOAT_INCREMENT: CommandError = Message("ERR Increment is not a valid float");
    pub const INFINITE_INCREMENT: CommandError =
        Message("ERR BYFLOAT increment cannot be Infinity");
    pub const LBOUND_NOT_INTEGER: CommandError =
        Message("ERR LBOUND is not an integer or out of range");
    pub const UBOUND_NOT_INTEGER: CommandError =
        Message("ERR UBOUND is not an integer or out of range");
    pub const LBOUND_NOT_FLOAT: CommandError = Message("ERR LBOUND is not a valid float");
    pub const UBOUND_NOT_FLOAT: CommandError = Message("ERR UBOUND is not a valid float");
    pub const BOUNDS_CROSSED: CommandError = Message("ERR LBOUND can't be greater than UBOUND");
    pub const ENX_ALONE: CommandError = Message("ERR ENX flag requires an expiration");
    pub const INFINITE_VALUE: CommandError = Message("ERR value cannot be Infinity");
    pub const APPLIED_OVERFLOW: CommandError = Message("ERR applied increment would overflow");
    pub const APPLIED_INFINITE: CommandError = Message("ERR applied increment would be Infinity");
}

/// The DELEX stand-in's errors, in Redis 8.10's words.
pub mod delex {
    use super::CommandError::{self, Message};

    pub const NOT_A_STRING: CommandError =
        Message("ERR Key should be of string type if conditions are specified");
    /// Names the conditions of `goblin_core::native::delex::ConditionKind::ALL`, in order (a
    /// unit test holds the two together).
    pub const UNKNOWN_CONDITION: CommandError =
        Message("ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE");
    pub const DIGEST_LENGTH: CommandError =
        Message("ERR must be exactly 16 hexadecimal characters");
}

impl From<ConditionError> for CommandError {
    fn from(error: ConditionError) -> Self {
        match error {
            ConditionError::Unknown => delex::UNKNOWN_CONDITION,
            ConditionError::DigestLength => delex::DIGEST_LENGTH,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use goblin_core::native::delex::ConditionKind;

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

    #[test]
    fn the_unknown_condition_error_names_every_condition() {
        let tokens: Vec<&str> = ConditionKind::ALL.iter().map(|kind| kind.token()).collect();
        let (last, first) = tokens.split_last().expect("conditions");
        let listed = format!("{}, or {last}", first.join(", "));
        assert_eq!(
            delex::UNKNOWN_CONDITION.reply_text("delex"),
            format!("ERR Invalid condition. Use {listed}")
        );
    }
}
