//! CL.THROTTLE: the rows of `docs/commands/cl.throttle.md`'s table of situations, as tests (see
//! `table.rs`).

use super::super::*;
use Effect::*;
use Expect::{Any, Array, Error, Int, Ints};

/// The page whose table these rows are.
pub const CL_THROTTLE_PAGE: &str = "docs/commands/cl.throttle.md";

/// A bucket in use, for the cases that must leave it as it is: `15 30 60`, one token taken.
const IN_USE: &[&[&str]] = &[&["CL.THROTTLE", "{}", "15", "30", "60"]];

/// What redis-cell does not read as an integer.
const NOT_INTEGERS: &[&str] = &[
    "1.5",
    "abc",
    "",
    " 5",
    "5 ",
    "0x10",
    "1e3",
    "+",
    "-",
    "9223372036854775808",
];

/// Every reply below is exact: the intervals are of a second or more (or the call is the first
/// on its key), and the setup and the call come within a second, so the time between them
/// changes no field (`reset_after` rounds up what is left of the interval).
pub const CL_THROTTLE_ROWS: &[Row] = &[
    Row {
        situation: "allowed",
        cases: &[
            // redis-cell's README: 16 at once, then 30 a minute.
            case(
                &[],
                &["CL.THROTTLE", "{}", "15", "30", "60"],
                Ints(&[0, 16, 15, -1, 2]),
                CellTat {
                    ahead_ns: 2_000_000_000,
                },
            ),
            // A quantity, spelled as redis-cell reads it.
            Case {
                setup: &[],
                call: &["CL.THROTTLE", "{}", "15", "30", "60", "{v}"],
                each: &["5", "+5", "005"],
                reply: Ints(&[0, 16, 11, -1, 10]),
                effect: CellTat {
                    ahead_ns: 10_000_000_000,
                },
            },
            // The limits spelled so too.
            case(
                &[],
                &["CL.THROTTLE", "{}", "+15", "030", "+060"],
                Ints(&[0, 16, 15, -1, 2]),
                CellTat {
                    ahead_ns: 2_000_000_000,
                },
            ),
            // A bucket in use: the TAT moves on from where it stood.
            case(
                IN_USE,
                &["CL.THROTTLE", "{}", "15", "30", "60"],
                Ints(&[0, 16, 14, -1, 4]),
                CellTat {
                    ahead_ns: 4_000_000_000,
                },
            ),
            // Half a millisecond a token: redis-cell's rounding drops a remainder under a
            // millisecond, so reset_after is 0.
            case(
                &[],
                &["CL.THROTTLE", "{}", "9", "2000", "1"],
                Ints(&[0, 10, 9, -1, 0]),
                CellTatEnding { ahead_ns: 500_000 },
            ),
            // 3 per 10 s: 3,333,333,333.3 ns a token, truncated to the nanosecond.
            case(
                &[],
                &["CL.THROTTLE", "{}", "0", "3", "10"],
                Ints(&[0, 1, 0, -1, 4]),
                CellTat {
                    ahead_ns: 3_333_333_333,
                },
            ),
        ],
    },
    Row {
        situation: "allowed, `quantity` 0",
        cases: &[
            // A fresh key: the TAT is now, and the key lives through this millisecond only.
            Case {
                setup: &[],
                call: &["CL.THROTTLE", "{}", "4", "1", "1", "{v}"],
                each: &["0", "-0", "+0", "000"],
                reply: Ints(&[0, 5, 5, -1, 0]),
                effect: CellTatEnding { ahead_ns: 0 },
            },
            // A bucket in use: its TAT stored again, unmoved.
            case(
                &[&["CL.THROTTLE", "{}", "4", "1", "10"]],
                &["CL.THROTTLE", "{}", "4", "1", "10", "0"],
                Ints(&[0, 5, 4, -1, 10]),
                CellTat {
                    ahead_ns: 10_000_000_000,
                },
            ),
        ],
    },
    Row {
        situation: "limited",
        cases: &[
            // The page's session: the burst of 16 spent.
            case(
                &[
                    &["CL.THROTTLE", "{}", "15", "30", "60", "15"],
                    &["CL.THROTTLE", "{}", "15", "30", "60"],
                ],
                &["CL.THROTTLE", "{}", "15", "30", "60"],
                Ints(&[1, 16, 0, 2, 32]),
                Nothing,
            ),
            // max_burst 0: one request per interval (redis-cell's own end-to-end test).
            case(
                &[&["CL.THROTTLE", "{}", "0", "1", "2", "1"]],
                &["CL.THROTTLE", "{}", "0", "1", "2", "1"],
                Ints(&[1, 1, 0, 2, 2]),
                Nothing,
            ),
            // Tokens left, but fewer than this request's quantity.
            case(
                &[&["CL.THROTTLE", "{}", "5", "1", "60", "4"]],
                &["CL.THROTTLE", "{}", "5", "1", "60", "3"],
                Ints(&[1, 6, 2, 60, 240]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`quantity` more than the limit",
        cases: &[
            Case {
                setup: &[],
                call: &["CL.THROTTLE", "{}", "2", "1", "60", "{v}"],
                each: &["4", "5", "1000"],
                reply: Ints(&[1, 3, 3, -1, 0]),
                effect: Nothing,
            },
            case(
                &[&["CL.THROTTLE", "{}", "2", "1", "60"]],
                &["CL.THROTTLE", "{}", "2", "1", "60", "4"],
                Ints(&[1, 3, 2, -1, 60]),
                Nothing,
            ),
            // A TAT left behind the clock (SET without a TTL): a full bucket, as a fresh key.
            case(
                &[&["SET", "{}", "1000"]],
                &["CL.THROTTLE", "{}", "2", "1", "60", "4"],
                Ints(&[1, 3, 3, -1, 0]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a TAT as redis-cell writes or reads one",
        cases: &[
            // Long past, spelled as redis-cell writes it or as it still reads it: a full
            // bucket; the new TAT in redis-cell's form.
            Case {
                setup: &[&["SET", "{}", "{v}"]],
                call: &["CL.THROTTLE", "{}", "15", "30", "60"],
                each: &[
                    "0",
                    "+0",
                    "0000",
                    "1700000000000000000",
                    "+01700000000000000000",
                ],
                reply: Ints(&[0, 16, 15, -1, 2]),
                effect: CellTat {
                    ahead_ns: 2_000_000_000,
                },
            },
            // The largest TAT redis-cell writes (in 2554): refused, and kept as it is.
            case(
                &[&["SET", "{}", "18446744073709551615"]],
                &["CL.THROTTLE", "{}", "15", "30", "60"],
                Array(&[Int(1), Int(16), Int(0), Any, Any]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a string that is not a TAT",
        cases: &[Case {
            setup: &[&["SET", "{}", "{v}", "EX", "100"]],
            call: &["CL.THROTTLE", "{}", "15", "30", "60"],
            each: &[
                "hello",
                "",
                "-1",
                "-0",
                "1.5",
                " 5",
                "5 ",
                "0x10",
                "18446744073709551616",
                "é",
            ],
            reply: Error(CL_THROTTLE_NOT_A_TAT),
            effect: Nothing,
        }],
    },
    Row {
        situation: "key holds a list, hash, set, sorted set, ...",
        cases: &[
            case(
                &[&["RPUSH", "{}", "x"]],
                &["CL.THROTTLE", "{}", "15", "30", "60"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["HSET", "{}", "f", "1"]],
                &["CL.THROTTLE", "{}", "15", "30", "60"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["SADD", "{}", "x"]],
                &["CL.THROTTLE", "{}", "15", "30", "60"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["ZADD", "{}", "1", "x"]],
                &["CL.THROTTLE", "{}", "15", "30", "60"],
                Error(WRONGTYPE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "a number is not an integer (`1.5`, `abc`, ` 5`, `0x10`, 20 digits)",
        cases: &[
            Case {
                setup: IN_USE,
                call: &["CL.THROTTLE", "{}", "{v}", "30", "60"],
                each: NOT_INTEGERS,
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
            Case {
                setup: IN_USE,
                call: &["CL.THROTTLE", "{}", "15", "{v}", "60"],
                each: NOT_INTEGERS,
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
            Case {
                setup: &[],
                call: &["CL.THROTTLE", "{}", "15", "30", "{v}"],
                each: NOT_INTEGERS,
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
            Case {
                setup: &[],
                call: &["CL.THROTTLE", "{}", "15", "30", "60", "{v}"],
                each: NOT_INTEGERS,
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
            // The arguments before the key.
            case(
                &[&["RPUSH", "{}", "x"]],
                &["CL.THROTTLE", "{}", "15", "30", "1.5"],
                Error(NOT_INTEGER),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`max_burst` below 0",
        cases: &[Case {
            setup: IN_USE,
            call: &["CL.THROTTLE", "{}", "{v}", "30", "60"],
            each: &["-1", "-9223372036854775808"],
            reply: Error(CL_THROTTLE_NEGATIVE_BURST),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`count_per_period` below 1",
        cases: &[Case {
            setup: IN_USE,
            call: &["CL.THROTTLE", "{}", "15", "{v}", "60"],
            each: &["0", "-0", "-1", "-9223372036854775808"],
            reply: Error(CL_THROTTLE_COUNT_BELOW_ONE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`period` below 1",
        cases: &[Case {
            setup: IN_USE,
            call: &["CL.THROTTLE", "{}", "15", "30", "{v}"],
            each: &["0", "-1", "-60"],
            reply: Error(CL_THROTTLE_PERIOD_BELOW_ONE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`quantity` below 0",
        cases: &[
            Case {
                setup: IN_USE,
                call: &["CL.THROTTLE", "{}", "15", "30", "60", "{v}"],
                each: &["-1", "-9223372036854775808"],
                reply: Error(CL_THROTTLE_NEGATIVE_QUANTITY),
                effect: Nothing,
            },
            case(
                &[],
                &["CL.THROTTLE", "{}", "15", "30", "60", "-1"],
                Error(CL_THROTTLE_NEGATIVE_QUANTITY),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "more than a billion per second (an interval under a nanosecond)",
        cases: &[
            Case {
                setup: &[],
                call: &["CL.THROTTLE", "{}", "0", "{v}", "1"],
                each: &["1000000001", "2000000000", "9223372036854775807"],
                reply: Error(CL_THROTTLE_ZERO_RATE),
                effect: Nothing,
            },
            case(
                IN_USE,
                &["CL.THROTTLE", "{}", "0", "3000000001", "3"],
                Error(CL_THROTTLE_ZERO_RATE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "the arithmetic leaves 64-bit nanoseconds",
        cases: &[
            // 292 years and more between two tokens.
            case(
                &[],
                &["CL.THROTTLE", "{}", "0", "1", "9223372037"],
                Error(CL_THROTTLE_RATE_OVERFLOW),
                Nothing,
            ),
            // A limit past i64, or that many intervals.
            Case {
                setup: IN_USE,
                call: &["CL.THROTTLE", "{}", "{v}", "1", "1"],
                each: &["9223372036854775807", "9223372036"],
                reply: Error(CL_THROTTLE_BURST_OVERFLOW),
                effect: Nothing,
            },
            case(
                IN_USE,
                &["CL.THROTTLE", "{}", "15", "1", "1", "9223372037"],
                Error(CL_THROTTLE_QUANTITY_OVERFLOW),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(
                IN_USE,
                &["CL.THROTTLE", "{}", "15", "30"],
                Error(CL_THROTTLE_ARITY),
                Nothing,
            ),
            case(
                IN_USE,
                &["CL.THROTTLE", "{}", "15", "30", "60", "1", "1"],
                Error(CL_THROTTLE_ARITY),
                Nothing,
            ),
        ],
    },
];
