//! Every error text the tests expect, in one place: the servers' own words, which Goblin's
//! commands reply with, and the words of the natives its stand-ins follow.

/// Shared by every command, as the servers' own commands spell them.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
pub const SYNTAX: &str = "ERR syntax error";
pub const GOBLIN_INCREX_INVALID_EXPIRE: &str = "ERR invalid expire time in 'goblin.increx' command";
pub const GOBLIN_ZWINDOW_INVALID_EXPIRE: &str =
    "ERR invalid expire time in 'goblin.zwindow' command";
pub const GOBLIN_INCREX_ARITY: &str = "ERR wrong number of arguments for 'goblin.increx' command";
pub const GOBLIN_ZWINDOW_ARITY: &str = "ERR wrong number of arguments for 'goblin.zwindow' command";
pub const GOBLIN_CAD_ARITY: &str = "ERR wrong number of arguments for 'goblin.cad' command";
pub const GOBLIN_ZWSTATS_ARITY: &str = "ERR wrong number of arguments for 'goblin.zwstats' command";
pub const GOBLIN_SWINDOW_ARITY: &str = "ERR wrong number of arguments for 'goblin.swindow' command";
pub const GOBLIN_SWSTATS_ARITY: &str = "ERR wrong number of arguments for 'goblin.swstats' command";

/// A count that must be at least 1 (GOBLIN.GCRA's TOKENS, every COST), in Redis's words.
pub const AT_LEAST_ONE: &str =
    "ERR value is out of range, value must between 1 and 9223372036854775807";
/// GOBLIN.ZWINDOW's COST on a window written without it.
pub const ZWINDOW_NOT_COST_ENTRIES: &str = "ERR the window holds members written without COST";
/// GOBLIN.SWINDOW's and GOBLIN.SWSTATS's own.
pub const SWINDOW_WINDOW_RANGE: &str = "ERR window must be > 0";
pub const SWINDOW_NOT_A_COUNTER: &str =
    "ERR the key holds a string that is not a sliding window counter";
pub const GOBLIN_SWINDOW_INVALID_EXPIRE: &str =
    "ERR invalid expire time in 'goblin.swindow' command";

/// The lock commands' own, and a blocking command's timeout in BLPOP's words.
pub const GOBLIN_LOCK_ARITY: &str = "ERR wrong number of arguments for 'goblin.lock' command";
pub const GOBLIN_BLOCK_ARITY: &str = "ERR wrong number of arguments for 'goblin.block' command";
pub const GOBLIN_EXTEND_ARITY: &str = "ERR wrong number of arguments for 'goblin.extend' command";
pub const GOBLIN_BZWINDOW_ARITY: &str =
    "ERR wrong number of arguments for 'goblin.bzwindow' command";
pub const GOBLIN_LOCK_INVALID_EXPIRE: &str = "ERR invalid expire time in 'goblin.lock' command";
pub const GOBLIN_BLOCK_INVALID_EXPIRE: &str = "ERR invalid expire time in 'goblin.block' command";
pub const GOBLIN_EXTEND_INVALID_EXPIRE: &str = "ERR invalid expire time in 'goblin.extend' command";
pub const TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";

/// The readers-writer lock's own.
pub const GOBLIN_RLOCK_ARITY: &str = "ERR wrong number of arguments for 'goblin.rlock' command";
pub const GOBLIN_WLOCK_ARITY: &str = "ERR wrong number of arguments for 'goblin.wlock' command";
pub const GOBLIN_BRLOCK_ARITY: &str = "ERR wrong number of arguments for 'goblin.brlock' command";
pub const GOBLIN_BWLOCK_ARITY: &str = "ERR wrong number of arguments for 'goblin.bwlock' command";
pub const GOBLIN_RWEXTEND_ARITY: &str =
    "ERR wrong number of arguments for 'goblin.rwextend' command";
pub const GOBLIN_RWUNLOCK_ARITY: &str =
    "ERR wrong number of arguments for 'goblin.rwunlock' command";
pub const GOBLIN_RWHELD_ARITY: &str = "ERR wrong number of arguments for 'goblin.rwheld' command";
pub const GOBLIN_RLOCK_INVALID_EXPIRE: &str = "ERR invalid expire time in 'goblin.rlock' command";
pub const GOBLIN_WLOCK_INVALID_EXPIRE: &str = "ERR invalid expire time in 'goblin.wlock' command";
pub const GOBLIN_BRLOCK_INVALID_EXPIRE: &str = "ERR invalid expire time in 'goblin.brlock' command";
pub const GOBLIN_BWLOCK_INVALID_EXPIRE: &str = "ERR invalid expire time in 'goblin.bwlock' command";
pub const GOBLIN_RWEXTEND_INVALID_EXPIRE: &str =
    "ERR invalid expire time in 'goblin.rwextend' command";
/// GOBLIN.BWLOCK by a reader while another reader waits to be promoted.
pub const RW_DEADLOCK: &str = "DEADLOCK another reader of the key already waits to write, and each would wait for the other to leave";
pub const TIMEOUT_NOT_A_FLOAT: &str = "ERR timeout is not a float or out of range";
pub const TIMEOUT_OUT_OF_RANGE: &str = "ERR timeout is out of range";

/// GOBLIN.GCRA's error texts: Redis's GCRA's, word for word (the arity error names Goblin's
/// command), and two of Goblin's own for a string that is not a TAT.
pub const GOBLIN_GCRA_ARITY: &str = "ERR wrong number of arguments for 'goblin.gcra' command";
pub const GCRA_MUST_BE_POSITIVE: &str = "ERR value is out of range, must be positive";
pub const GCRA_AT_LEAST_ONE: &str = AT_LEAST_ONE;
pub const GCRA_PERIOD_RANGE: &str = "ERR period must be > 0 and < 1e12";
pub const GCRA_MISSING_TOKENS: &str = "ERR Missing TOKENS value";
pub const GCRA_NOT_A_TAT: &str = "ERR Invalid TaT value";
pub const GCRA_NEGATIVE_TAT: &str = "ERR Invalid negative TaT value";
pub const GCRA_TOKENS_OVERFLOW: &str = "ERR GCRA limiting uses microsecond accuracy. Combination of period, tokens_per_period and TOKENS would cause an overflow";
pub const GCRA_BURST_OVERFLOW: &str = "ERR GCRA limiting uses microsecond accuracy. Combination of period, tokens_per_period and max_burst would cause an overflow";

/// GOBLIN.MGCRA's own (its policies' are GOBLIN.GCRA's).
pub const GOBLIN_MGCRA_ARITY: &str = "ERR wrong number of arguments for 'goblin.mgcra' command";
pub const MGCRA_NUMPOLICIES: &str = "ERR numpolicies should be greater than 0";

/// GOBLIN.FWINDOW's, GOBLIN.FWSTATS's and GOBLIN.MFWINDOW's own.
pub const GOBLIN_FWINDOW_ARITY: &str = "ERR wrong number of arguments for 'goblin.fwindow' command";
pub const GOBLIN_FWINDOW_INVALID_EXPIRE: &str =
    "ERR invalid expire time in 'goblin.fwindow' command";
pub const GOBLIN_FWSTATS_ARITY: &str = "ERR wrong number of arguments for 'goblin.fwstats' command";
pub const GOBLIN_MFWINDOW_ARITY: &str =
    "ERR wrong number of arguments for 'goblin.mfwindow' command";
pub const GOBLIN_MFWINDOW_INVALID_EXPIRE: &str =
    "ERR invalid expire time in 'goblin.mfwindow' command";
pub const MFWINDOW_NUMWINDOWS: &str = "ERR numwindows should be greater than 0";

/// What the servers answer `MODULE UNLOAD goblin` with when the module refuses.
pub const UNLOAD_REFUSED: &str = "ERR Error unloading module: operation not possible.";

/// The INCREX stand-in's error texts: Redis 8.10's INCREX's, word for word.
pub const INCREX_ARITY: &str = "ERR wrong number of arguments for 'increx' command";
pub const INCREX_NOT_INTEGER_INCREMENT: &str = "ERR Increment is not an integer or out of range";
pub const INCREX_NOT_FLOAT_INCREMENT: &str = "ERR Increment is not a valid float";
pub const INCREX_INFINITE_INCREMENT: &str = "ERR BYFLOAT increment cannot be Infinity";
pub const INCREX_LBOUND_NOT_INTEGER: &str = "ERR LBOUND is not an integer or out of range";
pub const INCREX_UBOUND_NOT_INTEGER: &str = "ERR UBOUND is not an integer or out of range";
pub const INCREX_LBOUND_NOT_FLOAT: &str = "ERR LBOUND is not a valid float";
pub const INCREX_UBOUND_NOT_FLOAT: &str = "ERR UBOUND is not a valid float";
pub const INCREX_BOUNDS_CROSSED: &str = "ERR LBOUND can't be greater than UBOUND";
pub const INCREX_ENX_ALONE: &str = "ERR ENX flag requires an expiration";
pub const INCREX_APPLIED_OVERFLOW: &str = "ERR applied increment would overflow";
pub const INCREX_INFINITE_VALUE: &str = "ERR value cannot be Infinity";
pub const INCREX_APPLIED_INFINITE: &str = "ERR applied increment would be Infinity";

/// The DELEX, DIGEST and DELIFEQ stand-ins' error texts: the natives', word for word.
pub const DELEX_ARITY: &str = "ERR wrong number of arguments for 'delex' command";
pub const DELEX_NOT_A_STRING: &str = "ERR Key should be of string type if conditions are specified";
pub const DELEX_UNKNOWN_CONDITION: &str = "ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE";
pub const DELEX_DIGEST_LENGTH: &str = "ERR must be exactly 16 hexadecimal characters";
pub const DIGEST_ARITY: &str = "ERR wrong number of arguments for 'digest' command";
pub const DELIFEQ_ARITY: &str = "ERR wrong number of arguments for 'delifeq' command";

/// `FENCE`'s own.
pub const FENCE_NO_SLOT_TAG: &str =
    "ERR FENCE needs a key whose cluster slot another key can share: give it a hash tag";
pub const FENCE_CLOCK_BEHIND: &str = "ERR FENCE: this server's clock is behind a fencing token it holds by more than fence-margin-ms; it cannot mint a larger one it could prove (check the clocks)";
/// A key of another type where a fencing token is kept: the key's latest, a holder's own.
pub const FENCE_LATEST_WRONG_TYPE: &str = "WRONGTYPE FENCE: the key that keeps this key's latest fencing token holds a value of another type; nothing was written";
pub const FENCE_OWN_WRONG_TYPE: &str = "WRONGTYPE FENCE: the key that keeps this holder's fencing token holds a value of another type; nothing was written";
/// `PERMITS n` above 10,000, in the words of the server's range errors.
pub const TOO_MANY_PERMITS: &str = "ERR value is out of range, value must between 1 and 10000";

/// Every error text above that a command may reply with, whatever its arguments: what the
/// argument storm accepts (besides each command's own arity and expiry errors, which name it).
pub const ALL_ERRORS: &[&str] = &[
    WRONGTYPE,
    NOT_INTEGER,
    NOT_FLOAT,
    OVERFLOW,
    SYNTAX,
    GCRA_MUST_BE_POSITIVE,
    GCRA_AT_LEAST_ONE,
    GCRA_PERIOD_RANGE,
    GCRA_MISSING_TOKENS,
    GCRA_NOT_A_TAT,
    GCRA_NEGATIVE_TAT,
    GCRA_TOKENS_OVERFLOW,
    GCRA_BURST_OVERFLOW,
    MGCRA_NUMPOLICIES,
    MFWINDOW_NUMWINDOWS,
    INCREX_NOT_INTEGER_INCREMENT,
    INCREX_NOT_FLOAT_INCREMENT,
    INCREX_INFINITE_INCREMENT,
    INCREX_LBOUND_NOT_INTEGER,
    INCREX_UBOUND_NOT_INTEGER,
    INCREX_LBOUND_NOT_FLOAT,
    INCREX_UBOUND_NOT_FLOAT,
    INCREX_BOUNDS_CROSSED,
    INCREX_ENX_ALONE,
    INCREX_INFINITE_VALUE,
    INCREX_APPLIED_OVERFLOW,
    INCREX_APPLIED_INFINITE,
    DELEX_NOT_A_STRING,
    DELEX_UNKNOWN_CONDITION,
    DELEX_DIGEST_LENGTH,
    ZWINDOW_NOT_COST_ENTRIES,
    SWINDOW_WINDOW_RANGE,
    SWINDOW_NOT_A_COUNTER,
    TIMEOUT_NEGATIVE,
    TIMEOUT_NOT_A_FLOAT,
    TIMEOUT_OUT_OF_RANGE,
    FENCE_NO_SLOT_TAG,
    FENCE_CLOCK_BEHIND,
    FENCE_LATEST_WRONG_TYPE,
    FENCE_OWN_WRONG_TYPE,
    TOO_MANY_PERMITS,
    RW_DEADLOCK,
    CL_THROTTLE_NOT_UTF8,
    CL_THROTTLE_NEGATIVE_BURST,
    CL_THROTTLE_COUNT_BELOW_ONE,
    CL_THROTTLE_PERIOD_BELOW_ONE,
    CL_THROTTLE_NEGATIVE_QUANTITY,
    CL_THROTTLE_ZERO_RATE,
    CL_THROTTLE_RATE_OVERFLOW,
    CL_THROTTLE_BURST_OVERFLOW,
    CL_THROTTLE_QUANTITY_OVERFLOW,
    CL_THROTTLE_TAT_OVERFLOW,
    CL_THROTTLE_NOT_A_TAT,
];

/// CL.THROTTLE's own, where redis-cell answers otherwise or aborts the server.
pub const CL_THROTTLE_ARITY: &str = "ERR wrong number of arguments for 'cl.throttle' command";
pub const CL_THROTTLE_NOT_UTF8: &str = "ERR CL.THROTTLE takes UTF-8 arguments only";
pub const CL_THROTTLE_NEGATIVE_BURST: &str = "ERR max_burst must be >= 0";
pub const CL_THROTTLE_COUNT_BELOW_ONE: &str = "ERR count_per_period must be > 0";
pub const CL_THROTTLE_PERIOD_BELOW_ONE: &str = "ERR period must be > 0";
pub const CL_THROTTLE_NEGATIVE_QUANTITY: &str = "ERR quantity must be >= 0";
pub const CL_THROTTLE_ZERO_RATE: &str =
    "ERR zero rates are not supported: count_per_period exceeds the period in nanoseconds";
pub const CL_THROTTLE_RATE_OVERFLOW: &str =
    "ERR CL.THROTTLE counts in 64-bit nanoseconds: period over count_per_period would overflow";
pub const CL_THROTTLE_BURST_OVERFLOW: &str = "ERR CL.THROTTLE counts in 64-bit nanoseconds: period, count_per_period and max_burst would overflow";
pub const CL_THROTTLE_QUANTITY_OVERFLOW: &str = "ERR CL.THROTTLE counts in 64-bit nanoseconds: period, count_per_period and quantity would overflow";
pub const CL_THROTTLE_TAT_OVERFLOW: &str =
    "ERR CL.THROTTLE counts in 64-bit nanoseconds: the TAT would overflow";
pub const CL_THROTTLE_NOT_A_TAT: &str = "ERR the key holds a string that is not a CL.THROTTLE TAT";
