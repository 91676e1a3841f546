//! GOBLIN.GCRA: the rows of `docs/commands/goblin.gcra.md`'s table of situations, as tests (see
//! `table.rs`).

use super::super::*;
use Effect::*;
use Expect::{Error, Ints};

/// The page whose table these rows are.
pub const GOBLIN_GCRA_PAGE: &str = "docs/commands/goblin.gcra.md";

/// A bucket already in use, for the cases that must leave it as it is: `5 1 60`, one token
/// taken (60 s of TAT ahead of the clock).
const IN_USE: &[&[&str]] = &[&["GOBLIN.GCRA", "{}", "5", "1", "60"]];

/// Every GCRA reply below is exact: the cases' limits have emission intervals of at least 2 s
/// and the setup and the call come within a second, so no token comes back between them and
/// the seconds fields, rounded up, are the whole intervals. (The rounding: `retry_after` and
/// `reset_after` round up the time left, which is the interval less the few milliseconds
/// since the setup.)
pub const GOBLIN_GCRA_ROWS: &[Row] = &[
    Row {
        situation: "allowed",
        cases: &[
            // A fresh key: the whole burst but this one left, full again in one interval.
            case(
                &[],
                &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                Ints(&[0, 6, 5, -1, 60]),
                Tat {
                    ahead_us: 60_000_000,
                },
            ),
            // TOKENS, in any case: a request costing three.
            Case {
                setup: &[],
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60", "{v}", "3"],
                each: &["TOKENS", "tokens", "ToKeNs"],
                reply: Ints(&[0, 6, 3, -1, 180]),
                effect: Tat {
                    ahead_us: 180_000_000,
                },
            },
            // A bucket in use: the TAT moves on from where it stood, not from the clock.
            case(
                &[
                    &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                    &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                ],
                &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                Ints(&[0, 6, 3, -1, 180]),
                Tat {
                    ahead_us: 180_000_000,
                },
            ),
            // The page's session: the fifth of a burst of five takes the last token.
            case(
                &[
                    &["GOBLIN.GCRA", "{}", "4", "1", "2"],
                    &["GOBLIN.GCRA", "{}", "4", "1", "2"],
                    &["GOBLIN.GCRA", "{}", "4", "1", "2"],
                    &["GOBLIN.GCRA", "{}", "4", "1", "2"],
                ],
                &["GOBLIN.GCRA", "{}", "4", "1", "2"],
                Ints(&[0, 5, 0, -1, 10]),
                Tat {
                    ahead_us: 10_000_000,
                },
            ),
            // An interval of 20/3 s: 6,666,666.67 us rounds half up to 6,666,667; the key
            // expires at the TAT floored to the millisecond; reset_after rounds 6.67 s up.
            case(
                &[],
                &["GOBLIN.GCRA", "{}", "0", "3", "20"],
                Ints(&[0, 1, 0, -1, 7]),
                Tat {
                    ahead_us: 6_666_667,
                },
            ),
            // `period` read as strtod reads it: a hex float.
            case(
                &[],
                &["GOBLIN.GCRA", "{}", "5", "1", "0x10"],
                Ints(&[0, 6, 5, -1, 16]),
                Tat {
                    ahead_us: 16_000_000,
                },
            ),
            // A TAT written by anyone, long past (with a TTL or without): the bucket is full, and
            // the key gets the TAT's expiry.
            Case {
                setup: &[&["SET", "{}", "{v}"]],
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                each: &["0", "1", "1700000000000000"],
                reply: Ints(&[0, 6, 5, -1, 60]),
                effect: Tat {
                    ahead_us: 60_000_000,
                },
            },
            case(
                &[&["SET", "{}", "1", "EX", "1000"]],
                &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                Ints(&[0, 6, 5, -1, 60]),
                Tat {
                    ahead_us: 60_000_000,
                },
            ),
        ],
    },
    Row {
        situation: "limited",
        cases: &[
            // The burst of six spent: the next token in 60 s, the whole quota in 360 s.
            case(
                &[
                    &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                    &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                    &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                    &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                    &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                    &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                ],
                &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                Ints(&[1, 6, 0, 60, 360]),
                Nothing,
            ),
            // max_burst 0: one request per interval.
            case(
                &[&["GOBLIN.GCRA", "{}", "0", "1", "60"]],
                &["GOBLIN.GCRA", "{}", "0", "1", "60"],
                Ints(&[1, 1, 0, 60, 60]),
                Nothing,
            ),
            // Tokens left, but fewer than this request costs: two left, three asked.
            case(
                &[&["GOBLIN.GCRA", "{}", "5", "1", "60", "TOKENS", "4"]],
                &["GOBLIN.GCRA", "{}", "5", "1", "60", "TOKENS", "3"],
                Ints(&[1, 6, 2, 60, 240]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "costs more than the whole quota",
        cases: &[
            // On a fresh key: nothing created.
            Case {
                setup: &[],
                call: &["GOBLIN.GCRA", "{}", "2", "1", "60", "TOKENS", "{v}"],
                each: &["4", "5", "1000"],
                reply: Ints(&[1, 3, 3, -1, 0]),
                effect: Nothing,
            },
            case(
                &[],
                &["GOBLIN.GCRA", "{}", "0", "1", "60", "TOKENS", "2"],
                Ints(&[1, 1, 1, -1, 0]),
                Nothing,
            ),
            // On a bucket in use: left as it is.
            case(
                &[&["GOBLIN.GCRA", "{}", "2", "1", "60"]],
                &["GOBLIN.GCRA", "{}", "2", "1", "60", "TOKENS", "4"],
                Ints(&[1, 3, 2, -1, 60]),
                Nothing,
            ),
            // On a TAT left behind the clock (SET without a TTL): a full bucket, as a fresh
            // key, never more remaining than the quota nor a negative reset.
            case(
                &[&["SET", "{}", "1000"]],
                &["GOBLIN.GCRA", "{}", "2", "1", "60", "TOKENS", "4"],
                Ints(&[1, 3, 3, -1, 0]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`PEEK`",
        cases: &[
            // On a fresh key: what the request would get; nothing created.
            Case {
                setup: &[],
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60", "{v}"],
                each: &["PEEK", "peek"],
                reply: Ints(&[0, 6, 5, -1, 60]),
                effect: Nothing,
            },
            // On a bucket in use, TOKENS before or after it.
            case(
                IN_USE,
                &["GOBLIN.GCRA", "{}", "5", "1", "60", "TOKENS", "3", "PEEK"],
                Ints(&[0, 6, 2, -1, 240]),
                Nothing,
            ),
            case(
                IN_USE,
                &["GOBLIN.GCRA", "{}", "5", "1", "60", "PEEK", "TOKENS", "6"],
                Ints(&[1, 6, 5, 60, 60]),
                Nothing,
            ),
            // TOKENS 0: the state alone.
            case(
                IN_USE,
                &["GOBLIN.GCRA", "{}", "5", "1", "60", "TOKENS", "0", "PEEK"],
                Ints(&[0, 6, 5, -1, 60]),
                Nothing,
            ),
            // Refused, as the request would be.
            case(
                &[&["GOBLIN.GCRA", "{}", "0", "1", "60"]],
                &["GOBLIN.GCRA", "{}", "0", "1", "60", "PEEK"],
                Ints(&[1, 1, 0, 60, 60]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a string that is not a TAT",
        cases: &[
            // A TAT is what INCR would take as a counter.
            Case {
                setup: &[&["SET", "{}", "{v}", "EX", "100"]],
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                each: &[
                    "hello",
                    "",
                    "1.5",
                    " 5",
                    "5 ",
                    "01",
                    "-0",
                    "+5",
                    "0x10",
                    "1e3",
                    "9223372036854775808",
                    "99999999999999999999",
                ],
                reply: Error(GCRA_NOT_A_TAT),
                effect: Nothing,
            },
            Case {
                setup: &[&["SET", "{}", "{v}", "EX", "100"]],
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                each: &["-1", "-5", "-9223372036854775808"],
                reply: Error(GCRA_NEGATIVE_TAT),
                effect: Nothing,
            },
            // The key before the overflows.
            case(
                &[&["SET", "{}", "hello"]],
                &["GOBLIN.GCRA", "{}", "200000000", "1", "86400"],
                Error(GCRA_NOT_A_TAT),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a list, hash, set, sorted set, ...",
        cases: &[
            case(
                &[&["RPUSH", "{}", "x"]],
                &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["HSET", "{}", "f", "1"]],
                &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["SADD", "{}", "x"]],
                &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["ZADD", "{}", "1", "x"]],
                &["GOBLIN.GCRA", "{}", "5", "1", "60"],
                Error(WRONGTYPE),
                Nothing,
            ),
            // The key before the overflows.
            case(
                &[&["RPUSH", "{}", "x"]],
                &["GOBLIN.GCRA", "{}", "200000000", "1", "86400"],
                Error(WRONGTYPE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`max_burst` not an integer >= 0",
        cases: &[
            Case {
                setup: IN_USE,
                call: &["GOBLIN.GCRA", "{}", "{v}", "1", "60"],
                each: GCRA_NOT_BURSTS,
                reply: Error(GCRA_MUST_BE_POSITIVE),
                effect: Nothing,
            },
            Case {
                setup: &[],
                call: &["GOBLIN.GCRA", "{}", "{v}", "1", "60"],
                each: GCRA_NOT_BURSTS,
                reply: Error(GCRA_MUST_BE_POSITIVE),
                effect: Nothing,
            },
            // The arguments before the key.
            case(
                &[&["RPUSH", "{}", "x"]],
                &["GOBLIN.GCRA", "{}", "-1", "1", "60"],
                Error(GCRA_MUST_BE_POSITIVE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`tokens_per_period` or `n` not an integer",
        cases: &[
            Case {
                setup: IN_USE,
                call: &["GOBLIN.GCRA", "{}", "5", "{v}", "60"],
                each: GCRA_NOT_INTEGERS,
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
            Case {
                setup: IN_USE,
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60", "TOKENS", "{v}"],
                each: GCRA_NOT_INTEGERS,
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
            Case {
                setup: &[],
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60", "TOKENS", "{v}"],
                each: GCRA_NOT_INTEGERS,
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`tokens_per_period` or `n` below 1",
        cases: &[
            Case {
                setup: IN_USE,
                call: &["GOBLIN.GCRA", "{}", "5", "{v}", "60"],
                each: GCRA_BELOW_ONE,
                reply: Error(GCRA_AT_LEAST_ONE),
                effect: Nothing,
            },
            Case {
                setup: IN_USE,
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60", "TOKENS", "{v}"],
                each: GCRA_BELOW_ONE,
                reply: Error(GCRA_AT_LEAST_ONE),
                effect: Nothing,
            },
            Case {
                setup: &[],
                call: &["GOBLIN.GCRA", "{}", "5", "{v}", "60"],
                each: GCRA_BELOW_ONE,
                reply: Error(GCRA_AT_LEAST_ONE),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`period` not a number",
        cases: &[
            Case {
                setup: IN_USE,
                call: &["GOBLIN.GCRA", "{}", "5", "1", "{v}"],
                each: GCRA_NOT_NUMBERS,
                reply: Error(NOT_FLOAT),
                effect: Nothing,
            },
            Case {
                setup: &[],
                call: &["GOBLIN.GCRA", "{}", "5", "1", "{v}"],
                each: GCRA_NOT_NUMBERS,
                reply: Error(NOT_FLOAT),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`period` <= 0 or >= 1e12",
        cases: &[
            Case {
                setup: IN_USE,
                call: &["GOBLIN.GCRA", "{}", "5", "1", "{v}"],
                each: GCRA_OUT_OF_PERIOD,
                reply: Error(GCRA_PERIOD_RANGE),
                effect: Nothing,
            },
            Case {
                setup: &[],
                call: &["GOBLIN.GCRA", "{}", "5", "1", "{v}"],
                each: GCRA_OUT_OF_PERIOD,
                reply: Error(GCRA_PERIOD_RANGE),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "a fifth argument other than `TOKENS` or `PEEK`",
        cases: &[
            Case {
                setup: IN_USE,
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60", "{v}"],
                each: &["foo", "1", "TOKEN", "COST", "PEEKS"],
                reply: Error(SYNTAX),
                effect: Nothing,
            },
            // Each once.
            Case {
                setup: IN_USE,
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60", "PEEK", "{v}"],
                each: &["PEEK", "REFUND"],
                reply: Error(SYNTAX),
                effect: Nothing,
            },
            Case {
                setup: IN_USE,
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60", "{v}", "2"],
                each: &["COST", "TOKEN", "TOKENSS", "1"],
                reply: Error(SYNTAX),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`TOKENS` without a value",
        cases: &[
            Case {
                setup: IN_USE,
                call: &["GOBLIN.GCRA", "{}", "5", "1", "60", "{v}"],
                each: &["TOKENS", "tokens"],
                reply: Error(GCRA_MISSING_TOKENS),
                effect: Nothing,
            },
            case(
                &[],
                &["GOBLIN.GCRA", "{}", "5", "1", "60", "TOKENS"],
                Error(GCRA_MISSING_TOKENS),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "the arithmetic leaves 64-bit microseconds",
        cases: &[
            // The interval times TOKENS.
            case(
                &[],
                &[
                    "GOBLIN.GCRA",
                    "{}",
                    "1",
                    "1",
                    "86400",
                    "TOKENS",
                    "200000000",
                ],
                Error(GCRA_TOKENS_OVERFLOW),
                Nothing,
            ),
            case(
                &[],
                &[
                    "GOBLIN.GCRA",
                    "{}",
                    "1",
                    "1",
                    "2147483647",
                    "TOKENS",
                    "2147483647",
                ],
                Error(GCRA_TOKENS_OVERFLOW),
                Nothing,
            ),
            case(
                IN_USE,
                &[
                    "GOBLIN.GCRA",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "TOKENS",
                    "9223372036854775807",
                ],
                Error(GCRA_TOKENS_OVERFLOW),
                Nothing,
            ),
            // The interval times max_burst + 1.
            case(
                &[],
                &["GOBLIN.GCRA", "{}", "200000000", "1", "86400"],
                Error(GCRA_BURST_OVERFLOW),
                Nothing,
            ),
            case(
                IN_USE,
                &["GOBLIN.GCRA", "{}", "9223372036854775806", "1", "1"],
                Error(GCRA_BURST_OVERFLOW),
                Nothing,
            ),
            // The new TAT: the clock (about 1.8e15 us) plus 10 intervals of 9.223e17 us.
            case(
                &[],
                &[
                    "GOBLIN.GCRA",
                    "{}",
                    "9",
                    "1",
                    "922300000000",
                    "TOKENS",
                    "10",
                ],
                Error(GCRA_TOKENS_OVERFLOW),
                Nothing,
            ),
            // The new TAT: a request that a fresh key allows, where the TAT already stands
            // 4.6e18 us ahead.
            case(
                &[&["GOBLIN.GCRA", "{}", "9", "1", "922300000000", "TOKENS", "5"]],
                &["GOBLIN.GCRA", "{}", "9", "1", "922300000000", "TOKENS", "5"],
                Error(GCRA_TOKENS_OVERFLOW),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(&[], &["GOBLIN.GCRA"], Error(GOBLIN_GCRA_ARITY), Nothing),
            case(
                &[],
                &["GOBLIN.GCRA", "{}"],
                Error(GOBLIN_GCRA_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.GCRA", "{}", "5"],
                Error(GOBLIN_GCRA_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.GCRA", "{}", "5", "1"],
                Error(GOBLIN_GCRA_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["goblin.gcra", "{}", "5", "1"],
                Error(GOBLIN_GCRA_ARITY),
                Nothing,
            ),
            // Too many: counted before any argument is read.
            case(
                IN_USE,
                &["GOBLIN.GCRA", "{}", "5", "1", "60", "TOKENS", "1", "x"],
                Error(GOBLIN_GCRA_ARITY),
                Nothing,
            ),
            case(
                IN_USE,
                &[
                    "GOBLIN.GCRA",
                    "{}",
                    "abc",
                    "0",
                    "abc",
                    "TOKENS",
                    "0",
                    "x",
                    "y",
                ],
                Error(GOBLIN_GCRA_ARITY),
                Nothing,
            ),
            // Redis's GCRA takes TOKENS once, and counts: 4 or 6 arguments.
            case(
                &[],
                &[
                    "GOBLIN.GCRA",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "TOKENS",
                    "1",
                    "TOKENS",
                    "2",
                ],
                Error(GOBLIN_GCRA_ARITY),
                Nothing,
            ),
        ],
    },
];

/// What `max_burst` refuses: negatives, and what is not a canonical 64-bit integer.
const GCRA_NOT_BURSTS: &[&str] = &[
    "-1",
    "-9223372036854775808",
    "abc",
    "",
    "1.5",
    "+1",
    "01",
    "0x10",
    "1e3",
    " 1",
    "1 ",
    "9223372036854775808",
];

/// What `tokens_per_period` and `n` refuse as integers (`-0` is not canonical).
const GCRA_NOT_INTEGERS: &[&str] = &[
    "abc",
    "",
    "1.5",
    "+1",
    "01",
    "-0",
    "0x10",
    "1e3",
    " 1",
    "1 ",
    "9223372036854775808",
];

const GCRA_BELOW_ONE: &[&str] = &["0", "-1", "-9223372036854775808"];

/// What strtod, as the server reads a double, does not take: NaN, a value past the doubles
/// (or below them), spaces.
const GCRA_NOT_NUMBERS: &[&str] = &[
    "abc", "", "nan", "-nan", "1e400", "-1e400", "1e-400", " 60", "60 ", "60s",
];

/// Numbers, but out of range (infinities included).
const GCRA_OUT_OF_PERIOD: &[&str] = &[
    "0",
    "-0",
    "-1",
    "-1e-300",
    "1e12",
    "1000000000000",
    "1e300",
    "inf",
    "-inf",
    "infinity",
];
