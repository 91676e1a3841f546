//! GOBLIN.ZWINDOW: the rows of `docs/commands/goblin.zwindow.md`'s table of situations, as
//! tests (see `table.rs`).

use super::super::*;
use Effect::*;
use Expect::{Error, Int, Token};
use Value::Zset;

/// The page whose table these rows are.
pub const GOBLIN_ZWINDOW_PAGE: &str = "docs/commands/goblin.zwindow.md";

pub const GOBLIN_ZWINDOW_ROWS: &[Row] = &[
    Row {
        situation: "`member` holds a slot in the window",
        cases: &[
            // In a full window; the TTL set by hand is re-armed to the window.
            case(
                &[
                    &["ZADD", "{}", "95", "a", "96", "b"],
                    &["EXPIRE", "{}", "5"],
                ],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "2", "a"],
                Int(1),
                Armed {
                    value: Zset(&["b", "96", "a", "100"]),
                    ttl_ms: 10_000,
                },
            ),
            // Even with a limit since lowered to 0.
            case(
                &[&["ZADD", "{}", "95", "a", "96", "b"]],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "0", "b"],
                Int(1),
                Armed {
                    value: Zset(&["a", "95", "b", "100"]),
                    ttl_ms: 10_000,
                },
            ),
        ],
    },
    Row {
        situation: "window has room",
        cases: &[
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "2", "a"],
                Int(1),
                Armed {
                    value: Zset(&["a", "100"]),
                    ttl_ms: 10_000,
                },
            ),
            case(
                &[&["ZADD", "{}", "95", "x"], &["PEXPIRE", "{}", "77777"]],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "2", "a"],
                Int(1),
                Armed {
                    value: Zset(&["x", "95", "a", "100"]),
                    ttl_ms: 10_000,
                },
            ),
            // Room made by eviction.
            case(
                &[&["ZADD", "{}", "80", "x", "90", "y"]],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "1", "a"],
                Int(1),
                Armed {
                    value: Zset(&["a", "100"]),
                    ttl_ms: 10_000,
                },
            ),
        ],
    },
    Row {
        situation: "window full, or `limit <= 0`",
        cases: &[
            case(
                &[&["ZADD", "{}", "95", "x"], &["PEXPIRE", "{}", "77777"]],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "1", "a"],
                Int(0),
                Nothing,
            ),
            // The eviction stands (as in the Lua idiom); the rest, TTL included, is untouched.
            case(
                &[
                    &["ZADD", "{}", "1", "old", "95", "a", "96", "b"],
                    &["PEXPIRE", "{}", "77777"],
                ],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "2", "c"],
                Int(0),
                TtlKept {
                    value: Zset(&["a", "95", "b", "96"]),
                },
            ),
            Case {
                setup: &[],
                call: &["GOBLIN.ZWINDOW", "{}", "1", "10", "{v}", "a"],
                each: &["0", "-1", "-9223372036854775808"],
                reply: Int(0),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`window <= 0` and admitted",
        cases: &[
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "0", "1", "a"],
                Int(1),
                Deleted,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "-3", "1", "a"],
                Int(1),
                Deleted,
            ),
            case(
                &[&["ZADD", "{}", "150", "x"]],
                &["GOBLIN.ZWINDOW", "{}", "100", "-10", "2", "a"],
                Int(1),
                Deleted,
            ),
        ],
    },
    Row {
        situation: "the set is emptied by eviction",
        cases: &[case(
            &[&["ZADD", "{}", "1", "a", "2", "b"]],
            &["GOBLIN.ZWINDOW", "{}", "100", "10", "0", "c"],
            Int(0),
            Deleted,
        )],
    },
    Row {
        situation: "`now` or `window` not a finite number (`abc`, `nan`, `inf`, `1e400`)",
        cases: &[
            Case {
                setup: &[&["ZADD", "{}", "1", "old"], &["EXPIRE", "{}", "100"]],
                call: &["GOBLIN.ZWINDOW", "{}", "{v}", "10", "1", "m"],
                each: &["abc", "nan", "inf", "-inf", "1e400"],
                reply: Error(NOT_FLOAT),
                effect: Nothing,
            },
            Case {
                setup: &[&["ZADD", "{}", "1", "old"], &["EXPIRE", "{}", "100"]],
                call: &["GOBLIN.ZWINDOW", "{}", "100", "{v}", "1", "m"],
                each: &["abc", "nan", "inf", "-inf", "1e400"],
                reply: Error(NOT_FLOAT),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`limit` not an integer",
        cases: &[Case {
            setup: &[&["ZADD", "{}", "1", "old"], &["EXPIRE", "{}", "100"]],
            call: &["GOBLIN.ZWINDOW", "{}", "100", "10", "{v}", "m"],
            each: &["abc", "1.5", "9223372036854775808"],
            reply: Error(NOT_INTEGER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "server time + `window` overflows",
        cases: &[Case {
            // Refused before eviction: `old` stays.
            setup: &[&["ZADD", "{}", "1", "old"]],
            call: &["GOBLIN.ZWINDOW", "{}", "1e308", "{v}", "5", "m"],
            each: &["1e300", "9223372036854775.807", "1.7976931348623157e308"],
            reply: Error(GOBLIN_ZWINDOW_INVALID_EXPIRE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`XX` and `member` holds a slot",
        cases: &[case(
            &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "1", "m"]],
            &["GOBLIN.ZWINDOW", "{}", "1005", "10", "1", "m", "xx"],
            Int(1),
            Armed {
                value: Zset(&["m", "1005"]),
                ttl_ms: 10_000,
            },
        )],
    },
    Row {
        situation: "`XX` and it does not",
        cases: &[
            case(&[], &["GOBLIN.ZWINDOW", "{}", "1000", "10", "5", "m", "XX"], Int(0), Nothing),
            // Its lease ran out: it is not renewed, though the window has room.
            case(
                &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "5", "m"]],
                &["GOBLIN.ZWINDOW", "{}", "1011", "10", "5", "m", "XX"],
                Int(0),
                Deleted,
            ),
        ],
    },
    Row {
        situation: "`PERMITS n`, and the window has room for `n`",
        cases: &[case(
            &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "5", "a"]],
            &["GOBLIN.ZWINDOW", "{}", "1001", "10", "5", "m", "PERMITS", "3"],
            Int(1),
            Armed {
                value: Zset(&["a", "1000", "m", "1001", "m\u{0}1", "1001", "m\u{0}2", "1001"]),
                ttl_ms: 10_000,
            },
        )],
    },
    Row {
        situation: "`PERMITS n`, and `member` holds its slots",
        cases: &[case(
            &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "2", "m", "PERMITS", "2"]],
            &["GOBLIN.ZWINDOW", "{}", "1001", "10", "2", "m", "PERMITS", "2", "XX"],
            Int(1),
            Armed {
                value: Zset(&["m", "1001", "m\u{0}1", "1001"]),
                ttl_ms: 10_000,
            },
        )],
    },
    Row {
        situation: "`PERMITS n`, and the window has no room for `n`",
        cases: &[case(
            &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "3", "a", "PERMITS", "2"]],
            &["GOBLIN.ZWINDOW", "{}", "1001", "10", "3", "m", "PERMITS", "2"],
            Int(0),
            Nothing,
        )],
    },
    Row {
        situation: "`SEPARATOR sep`, and the window has room for `n` (1 without `PERMITS`)",
        cases: &[
            case(
                &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "5", "a"]],
                &["GOBLIN.ZWINDOW", "{}", "1001", "10", "5", "m", "PERMITS", "2", "SEPARATOR", "_"],
                Int(1),
                Armed {
                    value: Zset(&["a", "1000", "m_0", "1001", "m_1", "1001"]),
                    ttl_ms: 10_000,
                },
            ),
            case(
                &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "1", "m", "SEPARATOR", ":"]],
                &["GOBLIN.ZWINDOW", "{}", "1001", "10", "1", "m", "SEPARATOR", ":", "XX"],
                Int(1),
                Armed {
                    value: Zset(&["m:0", "1001"]),
                    ttl_ms: 10_000,
                },
            ),
        ],
    },
    Row {
        situation: "`FENCE`, and a grant (a slot taken or renewed, with `XX` or `PERMITS` too)",
        cases: &[
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "2", "a", "FENCE"],
                Token,
                Armed {
                    value: Zset(&["a", "100"]),
                    ttl_ms: 10_000,
                },
            ),
            case(
                &[&["GOBLIN.ZWINDOW", "{}", "100", "10", "1", "a", "FENCE"]],
                &["GOBLIN.ZWINDOW", "{}", "101", "10", "1", "a", "XX", "FENCE"],
                Token,
                Armed {
                    value: Zset(&["a", "101"]),
                    ttl_ms: 10_000,
                },
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "3", "a", "PERMITS", "2", "FENCE"],
                Token,
                Armed {
                    value: Zset(&["a", "100", "a\u{0}1", "100"]),
                    ttl_ms: 10_000,
                },
            ),
        ],
    },
    Row {
        situation: "`FENCE`, and no grant",
        cases: &[case(
            &[&["ZADD", "{}", "95", "a"]],
            &["GOBLIN.ZWINDOW", "{}", "100", "10", "1", "b", "FENCE"],
            Int(0),
            Nothing,
        )],
    },
    Row {
        situation: "`FENCE`, a token kept for the key ahead of the server's clock by more than `fence-margin-ms`",
        cases: &[case(
            &[&["SET", "{{}}\0goblin:fence\0{}", "9000000000000000000"]],
            &["GOBLIN.ZWINDOW", "{}", "100", "10", "2", "a", "FENCE"],
            Error(FENCE_CLOCK_BEHIND),
            Nothing,
        )],
    },
    Row {
        situation: "`FENCE` on a key holding a `}` and no hash tag",
        cases: &[case(
            &[],
            &["GOBLIN.ZWINDOW", "{}}", "100", "10", "2", "a", "FENCE"],
            Error(FENCE_NO_SLOT_TAG),
            Nothing,
        )],
    },
    Row {
        situation: "`COST n`, and the units inside plus `n` fit under `limit`",
        cases: &[
            case(
                &[],
                &[
                    "GOBLIN.ZWINDOW",
                    "{}",
                    "1000",
                    "10",
                    "10",
                    "req",
                    "COST",
                    "6",
                ],
                Int(1),
                Armed {
                    value: Zset(&["00000000000000000006:6:req", "1000"]),
                    ttl_ms: 10_000,
                },
            ),
            case(
                &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "10", "a", "COST", "4"]],
                &["GOBLIN.ZWINDOW", "{}", "1005", "10", "10", "b", "cost", "6"],
                Int(1),
                Armed {
                    value: Zset(&[
                        "00000000000000000004:4:a",
                        "1000",
                        "00000000000000000010:6:b",
                        "1005",
                    ]),
                    ttl_ms: 10_000,
                },
            ),
            // The first entry left the window (1000 <= 1010 - 10): a fresh running total.
            case(
                &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "10", "a", "COST", "9"]],
                &["GOBLIN.ZWINDOW", "{}", "1010", "10", "10", "b", "COST", "3"],
                Int(1),
                Armed {
                    value: Zset(&["00000000000000000003:3:b", "1010"]),
                    ttl_ms: 10_000,
                },
            ),
        ],
    },
    Row {
        situation: "`COST n`, and they do not",
        cases: &[case(
            &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "10", "a", "COST", "6"]],
            &["GOBLIN.ZWINDOW", "{}", "1001", "10", "10", "b", "COST", "5"],
            Int(0),
            Nothing,
        )],
    },
    Row {
        situation: "`COST n` above `limit`",
        cases: &[
            // Nothing at all: `old`, outside the window, is not even evicted.
            case(
                &[&["ZADD", "{}", "1", "old"]],
                &["GOBLIN.ZWINDOW", "{}", "1000", "10", "5", "m", "COST", "6"],
                Int(0),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1000", "10", "0", "m", "COST", "1"],
                Int(0),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`COST` on a window whose members inside were written without it",
        cases: &[case(
            &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "5", "plain"]],
            &["GOBLIN.ZWINDOW", "{}", "1001", "10", "5", "m", "COST", "1"],
            Error(ZWINDOW_NOT_COST_ENTRIES),
            Nothing,
        )],
    },
    Row {
        situation: "`n` not an integer",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.ZWINDOW", "{}", "1", "10", "5", "m", "COST", "{v}"],
            each: &["abc", "1.5", "", "9223372036854775808"],
            reply: Error(NOT_INTEGER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`n` below 1",
        cases: &[
            Case {
                setup: &[],
                call: &["GOBLIN.ZWINDOW", "{}", "1", "10", "5", "m", "COST", "{v}"],
                each: &["0", "-1"],
                reply: Error(AT_LEAST_ONE),
                effect: Nothing,
            },
            Case {
                setup: &[],
                call: &["GOBLIN.ZWINDOW", "{}", "1", "10", "5", "m", "PERMITS", "{v}"],
                each: &["0", "-1"],
                reply: Error(AT_LEAST_ONE),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`PERMITS n` above 10000",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.ZWINDOW", "{}", "1", "10", "20000", "m", "PERMITS", "{v}"],
            each: &["10001", "9223372036854775807"],
            reply: Error(TOO_MANY_PERMITS),
            effect: Nothing,
        }],
    },
    Row {
        situation: "an option other than `COST`, `XX`, `PERMITS`, `SEPARATOR` or `FENCE`, one given twice, `COST` with `XX`, `PERMITS`, `SEPARATOR` or `FENCE`, or `COST` or `SEPARATOR` without a value",
        cases: &[
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "5", "m", "SEPARATOR", "_", "COST", "1"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "5", "m", "SEPARATOR", "_", "SEPARATOR", "_"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "5", "m", "PERMITS", "2", "SEPARATOR"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "5", "m", "PERMITS", "2", "COST", "1"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "5", "m", "COST", "1", "PERMITS", "2"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "5", "m", "PERMITS", "2", "PERMITS", "2"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m", "XX", "COST", "1"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m", "COST", "1", "XX"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m", "XX", "XX"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m", "FENCE", "COST", "1"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m", "COST", "1", "FENCE"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m", "FENCE", "FENCE"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m", "COST"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m", "extra"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &[
                    "GOBLIN.ZWINDOW",
                    "{}",
                    "1",
                    "10",
                    "1",
                    "m",
                    "COST",
                    "1",
                    "COST",
                    "2",
                ],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a string, hash, list, ...",
        cases: &[
            case(
                &[&["SET", "{}", "1"]],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["HSET", "{}", "f", "1"]],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["RPUSH", "{}", "1"]],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m"],
                Error(WRONGTYPE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(
                &[],
                &["GOBLIN.ZWINDOW"],
                Error(GOBLIN_ZWINDOW_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}"],
                Error(GOBLIN_ZWINDOW_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1"],
                Error(GOBLIN_ZWINDOW_ARITY),
                Nothing,
            ),
        ],
    },
];
