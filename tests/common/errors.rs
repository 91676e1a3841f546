//! Every error text the tests expect, in one place: the servers' own words, which Goblin's
//! commands reply with, and the words of the natives its stand-ins follow.

/// Shared by every command, as the servers' own commands spell them.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
pub const SYNTAX: &str = "ERR syntax error";
pub const INCREX_INVALID_EXPIRE: &str = "ERR invalid expire time in 'goblin.increx' command";
pub const ZWINDOW_INVALID_EXPIRE: &str = "ERR invalid expire time in 'goblin.zwindow' command";
pub const INCREX_ARITY: &str = "ERR wrong number of arguments for 'goblin.increx' command";
pub const ZWINDOW_ARITY: &str = "ERR wrong number of arguments for 'goblin.zwindow' command";
pub const CAD_ARITY: &str = "ERR wrong number of arguments for 'goblin.cad' command";

/// GOBLIN.GCRA's error texts: Redis's GCRA's, word for word (the arity error names Goblin's
/// command), and two of Goblin's own for a string that is not a TAT.
pub const GCRA_ARITY: &str = "ERR wrong number of arguments for 'goblin.gcra' command";
pub const GCRA_MUST_BE_POSITIVE: &str = "ERR value is out of range, must be positive";
pub const GCRA_AT_LEAST_ONE: &str =
    "ERR value is out of range, value must between 1 and 9223372036854775807";
pub const GCRA_PERIOD_RANGE: &str = "ERR period must be > 0 and < 1e12";
pub const GCRA_MISSING_TOKENS: &str = "ERR Missing TOKENS value";
pub const GCRA_NOT_A_TAT: &str = "ERR Invalid TaT value";
pub const GCRA_NEGATIVE_TAT: &str = "ERR Invalid negative TaT value";
pub const GCRA_TOKENS_OVERFLOW: &str = "ERR GCRA limiting uses microsecond accuracy. Combination of period, tokens_per_period and TOKENS would cause an overflow";
pub const GCRA_BURST_OVERFLOW: &str = "ERR GCRA limiting uses microsecond accuracy. Combination of period, tokens_per_period and max_burst would cause an overflow";

/// What the servers answer `MODULE UNLOAD goblin` with when the module refuses.
pub const UNLOAD_REFUSED: &str = "ERR Error unloading module: operation not possible.";
