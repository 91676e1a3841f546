//! GOBLIN.FWINDOW, GOBLIN.FWSTATS and GOBLIN.MFWINDOW: the rows of their pages' tables of
//! situations, as tests (see `table.rs`).

use super::super::*;
use Effect::*;
use Expect::{Any, Array, Error, Int};
use Value::Str;

pub const GOBLIN_FWINDOW_PAGE: &str = "docs/commands/goblin.fwindow.md";
pub const GOBLIN_FWSTATS_PAGE: &str = "docs/commands/goblin.fwstats.md";
pub const GOBLIN_MFWINDOW_PAGE: &str = "docs/commands/goblin.mfwindow.md";

/// A counter at 4 in a running 100 s window.
const AT_FOUR: &[&[&str]] = &[&["GOBLIN.FWINDOW", "{}", "100000", "BY", "4"]];
/// A counter at 4 without a TTL.
const AT_FOUR_FOR_EVER: &[&[&str]] = &[&["SET", "{}", "4"]];
/// A counter at 4 whose window ends in the call's millisecond (its key expires then).
const AT_FOUR_ENDING: &[&[&str]] = &[&["SET", "{}", "4", "PX", "2"], ENDS_NOW];

pub const GOBLIN_FWINDOW_ROWS: &[Row] = &[
    Row {
        situation: "key missing",
        cases: &[
            case(
                &[],
                &["GOBLIN.FWINDOW", "{}", "1500"],
                Array(&[Int(1), Int(1500)]),
                Armed {
                    value: Str("1"),
                    ttl_ms: 1500,
                },
            ),
            case(
                &[],
                &["GOBLIN.FWINDOW", "{}", "1500", "BY", "-3"],
                Array(&[Int(-3), Int(1500)]),
                Armed {
                    value: Str("-3"),
                    ttl_ms: 1500,
                },
            ),
        ],
    },
    Row {
        situation: "key holds an integer, with a TTL",
        cases: &[
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1500", "BY", "2"],
                Array(&[Int(6), Any]),
                TtlKept { value: Str("6") },
            ),
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1500", "BY", "-4"],
                Array(&[Int(0), Any]),
                TtlKept { value: Str("0") },
            ),
        ],
    },
    Row {
        situation: "key holds an integer, without a TTL",
        cases: &[case(
            AT_FOUR_FOR_EVER,
            &["GOBLIN.FWINDOW", "{}", "1500"],
            Array(&[Int(5), Int(1500)]),
            Armed {
                value: Str("5"),
                ttl_ms: 1500,
            },
        )],
    },
    Row {
        situation: "key holds an integer whose window ends in this millisecond (its key expires now)",
        cases: &[
            case(
                AT_FOUR_ENDING,
                &["GOBLIN.FWINDOW", "{}", "1500", "BY", "2"],
                Array(&[Int(2), Int(1500)]),
                Armed {
                    value: Str("2"),
                    ttl_ms: 1500,
                },
            ),
            case(
                AT_FOUR_ENDING,
                &["GOBLIN.FWINDOW", "{}", "1500", "LIMIT", "3", "BLOCK", "300000"],
                Array(&[Int(1), Int(1500)]),
                Armed {
                    value: Str("1"),
                    ttl_ms: 1500,
                },
            ),
            case(
                AT_FOUR_ENDING,
                &["GOBLIN.FWINDOW", "{}", "0", "BY", "3"],
                Array(&[Int(3), Int(-1)]),
                Persisted { value: Str("3") },
            ),
        ],
    },
    Row {
        situation: "`window` 0, key missing",
        cases: &[case(
            &[],
            &["GOBLIN.FWINDOW", "{}", "0", "BY", "7"],
            Array(&[Int(7), Int(-1)]),
            Persisted { value: Str("7") },
        )],
    },
    Row {
        situation: "`LIMIT max`, the count above it, no option",
        cases: &[case(
            AT_FOUR,
            &["GOBLIN.FWINDOW", "{}", "1500", "LIMIT", "3"],
            Array(&[Int(5), Any]),
            TtlKept { value: Str("5") },
        )],
    },
    Row {
        situation: "`LIMIT max RESTART`, the count above it",
        cases: &[case(
            AT_FOUR,
            &["GOBLIN.FWINDOW", "{}", "1500", "LIMIT", "3", "RESTART"],
            Array(&[Int(5), Int(1500)]),
            Armed {
                value: Str("5"),
                ttl_ms: 1500,
            },
        )],
    },
    Row {
        situation: "`LIMIT max BLOCK ms`, the call crosses the limit",
        cases: &[
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1500", "LIMIT", "4", "BLOCK", "300000"],
                Array(&[Int(5), Int(300_000)]),
                Armed {
                    value: Str("5"),
                    ttl_ms: 300_000,
                },
            ),
            case(
                &[],
                &["GOBLIN.FWINDOW", "{}", "1500", "BLOCK", "300000", "BY", "9", "LIMIT", "4"],
                Array(&[Int(9), Int(300_000)]),
                Armed {
                    value: Str("9"),
                    ttl_ms: 300_000,
                },
            ),
        ],
    },
    Row {
        situation: "`LIMIT max BLOCK ms`, the count was above it already",
        cases: &[case(
            AT_FOUR,
            &["GOBLIN.FWINDOW", "{}", "1500", "LIMIT", "3", "BLOCK", "300000"],
            Array(&[Int(5), Any]),
            TtlKept { value: Str("5") },
        )],
    },
    Row {
        situation: "`LIMIT max BACKOFF`, the count above it",
        cases: &[
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1500", "LIMIT", "2", "BACKOFF"],
                Array(&[Int(5), Int(6000)]),
                Armed {
                    value: Str("5"),
                    ttl_ms: 6000,
                },
            ),
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1500", "LIMIT", "-100", "BACKOFF"],
                Array(&[Int(5), Int(9_007_199_254_740_991)]),
                Armed {
                    value: Str("5"),
                    ttl_ms: 9_007_199_254_740_991,
                },
            ),
        ],
    },
    Row {
        situation: "`window`, `n`, `max` or `ms` not an integer",
        cases: &[
            Case {
                setup: &[],
                call: &["GOBLIN.FWINDOW", "{}", "{v}"],
                each: &["1.5", "x", "1e3", " 5"],
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
            Case {
                setup: &[],
                call: &["GOBLIN.FWINDOW", "{}", "1000", "{v}", "1.5"],
                each: &["BY", "LIMIT", "BLOCK"],
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`window` < 0, `ms` < 1, or the expiry past 64-bit milliseconds",
        cases: &[
            case(
                &[],
                &["GOBLIN.FWINDOW", "{}", "-1"],
                Error(GOBLIN_FWINDOW_INVALID_EXPIRE),
                Nothing,
            ),
            Case {
                setup: &[],
                call: &["GOBLIN.FWINDOW", "{}", "1000", "LIMIT", "1", "BLOCK", "{v}"],
                each: &["0", "-5"],
                reply: Error(GOBLIN_FWINDOW_INVALID_EXPIRE),
                effect: Nothing,
            },
            case(
                &[],
                &["GOBLIN.FWINDOW", "{}", "9223372036854775807"],
                Error(GOBLIN_FWINDOW_INVALID_EXPIRE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "an option given twice, two of `RESTART`, `BLOCK`, `BACKOFF`, one without `LIMIT`, or another word",
        cases: &[
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1000", "BY", "1", "BY", "2"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1000", "LIMIT", "1", "LIMIT", "2"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1000", "LIMIT", "1", "RESTART", "RESTART"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1000", "LIMIT", "1", "RESTART", "BACKOFF"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1000", "LIMIT", "1", "BLOCK", "5", "RESTART"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1000", "RESTART"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1000", "BLOCK", "5"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1000", "BACKOFF"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1000", "COST", "2"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                AT_FOUR,
                &["GOBLIN.FWINDOW", "{}", "1000", "BY"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "value not an integer (`abc`, `1.5`, `\" 5\"`)",
        cases: &[Case {
            setup: &[&["SET", "{}", "{v}"]],
            call: &["GOBLIN.FWINDOW", "{}", "1000"],
            each: &["abc", "1.5", " 5", ""],
            reply: Error(NOT_INTEGER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "value plus `n` past 64 bits",
        cases: &[case(
            &[&["SET", "{}", "9223372036854775807"]],
            &["GOBLIN.FWINDOW", "{}", "1000"],
            Error(OVERFLOW),
            Nothing,
        )],
    },
    Row {
        situation: "key holds a sorted set, hash, list, ...",
        cases: &[case(
            &[&["ZADD", "{}", "1", "m"]],
            &["GOBLIN.FWINDOW", "{}", "1000"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(&[], &["GOBLIN.FWINDOW", "{}"], Error(GOBLIN_FWINDOW_ARITY), Nothing),
            case(&[], &["GOBLIN.FWINDOW"], Error(GOBLIN_FWINDOW_ARITY), Nothing),
        ],
    },
];

pub const GOBLIN_FWSTATS_ROWS: &[Row] = &[
    Row {
        situation: "key holds an integer, with a TTL",
        cases: &[case(
            AT_FOUR,
            &["GOBLIN.FWSTATS", "{}"],
            Array(&[Int(4), Any]),
            Nothing,
        )],
    },
    Row {
        situation: "key holds an integer, without a TTL",
        cases: &[case(
            AT_FOUR_FOR_EVER,
            &["GOBLIN.FWSTATS", "{}"],
            Array(&[Int(4), Int(-1)]),
            Nothing,
        )],
    },
    Row {
        situation: "key holds an integer whose window ends in this millisecond",
        cases: &[case(
            AT_FOUR_ENDING,
            &["GOBLIN.FWSTATS", "{}"],
            Array(&[Int(0), Int(-2)]),
            Nothing,
        )],
    },
    Row {
        situation: "key missing",
        cases: &[case(
            &[],
            &["GOBLIN.FWSTATS", "{}"],
            Array(&[Int(0), Int(-2)]),
            Nothing,
        )],
    },
    Row {
        situation: "value not an integer (`abc`, `1.5`, `\" 5\"`)",
        cases: &[Case {
            setup: &[&["SET", "{}", "{v}"]],
            call: &["GOBLIN.FWSTATS", "{}"],
            each: &["abc", "1.5", " 5"],
            reply: Error(NOT_INTEGER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "key holds a sorted set, hash, list, ...",
        cases: &[case(
            &[&["RPUSH", "{}", "x"]],
            &["GOBLIN.FWSTATS", "{}"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(
                &[],
                &["GOBLIN.FWSTATS"],
                Error(GOBLIN_FWSTATS_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.FWSTATS", "{}", "x"],
                Error(GOBLIN_FWSTATS_ARITY),
                Nothing,
            ),
        ],
    },
];

pub const GOBLIN_MFWINDOW_ROWS: &[Row] = &[
    Row {
        situation: "every window has room",
        cases: &[case(
            AT_FOUR,
            &["GOBLIN.MFWINDOW", "1", "{}", "1000", "10"],
            Array(&[Int(0), Int(-1), Array(&[Int(5), Any])]),
            TtlKept { value: Str("5") },
        )],
    },
    Row {
        situation: "one window's count would go above its limit",
        cases: &[case(
            AT_FOUR,
            &["GOBLIN.MFWINDOW", "1", "{}", "1000", "4"],
            Array(&[Int(1), Any, Array(&[Int(4), Any])]),
            Nothing,
        )],
    },
    Row {
        situation: "a refusing window without a TTL, or `n` above its limit",
        cases: &[
            case(
                AT_FOUR_FOR_EVER,
                &["GOBLIN.MFWINDOW", "1", "{}", "1000", "4"],
                Array(&[Int(1), Int(-1), Array(&[Int(4), Int(-1)])]),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.MFWINDOW", "1", "{}", "1000", "4", "BY", "5"],
                Array(&[Int(1), Int(-1), Array(&[Int(0), Int(-2)])]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "a window that ends in this millisecond, every window having room",
        cases: &[case(
            &[&["SET", "{}", "9", "PX", "2"], ENDS_NOW],
            &["GOBLIN.MFWINDOW", "1", "{}", "1000", "9"],
            Array(&[Int(0), Int(-1), Array(&[Int(1), Int(1000)])]),
            Armed {
                value: Str("1"),
                ttl_ms: 1000,
            },
        )],
    },
    Row {
        situation: "a window that ends in this millisecond, another refusing",
        cases: &[case(
            &[
                &["SET", "{}", "9", "PX", "2"],
                &["SET", "{}:b", "3", "PX", "100000"],
                ENDS_NOW,
            ],
            &[
                "GOBLIN.MFWINDOW",
                "2",
                "{}",
                "1000",
                "9",
                "{}:b",
                "60000",
                "3",
            ],
            Array(&[
                Int(1),
                Any,
                Array(&[Int(0), Int(-2)]),
                Array(&[Int(3), Any]),
            ]),
            Nothing,
        )],
    },
    Row {
        situation: "a key named twice",
        cases: &[case(
            &[],
            &[
                "GOBLIN.MFWINDOW",
                "2",
                "{}",
                "1000",
                "10",
                "{}",
                "60000",
                "10",
                "BY",
                "3",
            ],
            Array(&[
                Int(0),
                Int(-1),
                Array(&[Int(3), Int(1000)]),
                Array(&[Int(6), Int(1000)]),
            ]),
            Armed {
                value: Str("6"),
                ttl_ms: 1000,
            },
        )],
    },
    Row {
        situation: "`numwindows` not an integer",
        cases: &[case(
            &[],
            &["GOBLIN.MFWINDOW", "x", "{}", "1000", "10"],
            Error(NOT_INTEGER),
            Nothing,
        )],
    },
    Row {
        situation: "`numwindows` < 1",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.MFWINDOW", "{v}", "{}", "1000", "10"],
            each: &["0", "-1"],
            reply: Error(MFWINDOW_NUMWINDOWS),
            effect: Nothing,
        }],
    },
    Row {
        situation: "fewer than 3 arguments for each window",
        cases: &[case(
            &[],
            &["GOBLIN.MFWINDOW", "2", "{}", "1000", "10", "{}", "1000"],
            Error(SYNTAX),
            Nothing,
        )],
    },
    Row {
        situation: "a `window`, `limit` or `n` not an integer",
        cases: &[
            case(
                &[],
                &["GOBLIN.MFWINDOW", "1", "{}", "1.5", "10"],
                Error(NOT_INTEGER),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.MFWINDOW", "1", "{}", "1000", "x"],
                Error(NOT_INTEGER),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.MFWINDOW", "1", "{}", "1000", "10", "BY", "2.5"],
                Error(NOT_INTEGER),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "a `window` < 0",
        cases: &[case(
            &[],
            &["GOBLIN.MFWINDOW", "1", "{}", "-1", "10"],
            Error(GOBLIN_MFWINDOW_INVALID_EXPIRE),
            Nothing,
        )],
    },
    Row {
        situation: "`BY` twice, or another word",
        cases: &[
            case(
                AT_FOUR,
                &[
                    "GOBLIN.MFWINDOW",
                    "1",
                    "{}",
                    "1000",
                    "10",
                    "BY",
                    "1",
                    "BY",
                    "2",
                ],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                AT_FOUR,
                &["GOBLIN.MFWINDOW", "1", "{}", "1000", "10", "LIMIT", "3"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                AT_FOUR,
                &["GOBLIN.MFWINDOW", "1", "{}", "1000", "10", "BY"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "a key holds a string that is not an integer",
        cases: &[case(
            &[&["SET", "{}", "abc"]],
            &["GOBLIN.MFWINDOW", "1", "{}", "1000", "10"],
            Error(NOT_INTEGER),
            Nothing,
        )],
    },
    Row {
        situation: "a key holds a sorted set, hash, list, ...",
        cases: &[case(
            &[&["SADD", "{}", "x"]],
            &["GOBLIN.MFWINDOW", "1", "{}", "1000", "10"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(
            &[],
            &["GOBLIN.MFWINDOW", "1", "{}"],
            Error(GOBLIN_MFWINDOW_ARITY),
            Nothing,
        )],
    },
];
