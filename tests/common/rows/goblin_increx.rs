//! GOBLIN.INCREX: the rows of `docs/commands/goblin.increx.md`'s table of situations, as tests (see
//! `table.rs`).

use super::super::*;
use Effect::*;
use Expect::{Error, Int};
use Value::Str;

/// The page whose table these rows are.
pub const GOBLIN_INCREX_PAGE: &str = "docs/commands/goblin.increx.md";

/// What INCR refuses as a counter (`01` and `-0` are not canonical).
const NOT_COUNTERS: &[&str] = &[
    "abc", "1.5", " 5", "5 ", "", "0x10", "1e3", "+1", "01", "-0",
];

pub const GOBLIN_INCREX_ROWS: &[Row] = &[
    Row {
        situation: "key missing",
        cases: &[case(
            &[],
            &["GOBLIN.INCREX", "{}", "30"],
            Int(1),
            Armed {
                value: Str("1"),
                ttl_ms: 30_000,
            },
        )],
    },
    Row {
        situation: "key holds an integer, result is 1",
        cases: &[
            // Replacing a TTL, and arming one where there was none.
            case(
                &[&["SET", "{}", "0", "EX", "1000"]],
                &["GOBLIN.INCREX", "{}", "7"],
                Int(1),
                Armed {
                    value: Str("1"),
                    ttl_ms: 7_000,
                },
            ),
            case(
                &[&["SET", "{}", "0"]],
                &["GOBLIN.INCREX", "{}", "7"],
                Int(1),
                Armed {
                    value: Str("1"),
                    ttl_ms: 7_000,
                },
            ),
        ],
    },
    Row {
        situation: "key holds an integer, result is not 1",
        cases: &[
            // Later hits, whatever their `seconds`, leave the first hit's expiry.
            case(
                &[&["GOBLIN.INCREX", "{}", "100"]],
                &["GOBLIN.INCREX", "{}", "5"],
                Int(2),
                TtlKept { value: Str("2") },
            ),
            case(
                &[
                    &["GOBLIN.INCREX", "{}", "100"],
                    &["GOBLIN.INCREX", "{}", "5"],
                ],
                &["GOBLIN.INCREX", "{}", "-1"],
                Int(3),
                TtlKept { value: Str("3") },
            ),
            // A counter without a TTL stays without one.
            case(
                &[&["SET", "{}", "41"]],
                &["GOBLIN.INCREX", "{}", "10"],
                Int(42),
                TtlKept { value: Str("42") },
            ),
            // A counter that grows a digit, or loses one, keeps its TTL.
            case(
                &[&["SET", "{}", "9", "PX", "100000"]],
                &["GOBLIN.INCREX", "{}", "5"],
                Int(10),
                TtlKept { value: Str("10") },
            ),
            case(
                &[&["SET", "{}", "-10", "PX", "100000"]],
                &["GOBLIN.INCREX", "{}", "5"],
                Int(-9),
                TtlKept { value: Str("-9") },
            ),
        ],
    },
    Row {
        situation: "`seconds` <= 0 and result is 1",
        cases: &[
            case(&[], &["GOBLIN.INCREX", "{}", "0"], Int(1), Deleted),
            case(&[], &["GOBLIN.INCREX", "{}", "-5"], Int(1), Deleted),
            case(
                &[&["SET", "{}", "0", "EX", "100"]],
                &["GOBLIN.INCREX", "{}", "-1"],
                Int(1),
                Deleted,
            ),
        ],
    },
    Row {
        situation: "`COST n`, key missing",
        cases: &[
            case(
                &[],
                &["GOBLIN.INCREX", "{}", "30", "COST", "5"],
                Int(5),
                Armed {
                    value: Str("5"),
                    ttl_ms: 30_000,
                },
            ),
            case(
                &[&["SET", "{}", "0", "PX", "999999"]],
                &["GOBLIN.INCREX", "{}", "30", "cost", "100"],
                Int(100),
                Armed {
                    value: Str("100"),
                    ttl_ms: 30_000,
                },
            ),
        ],
    },
    Row {
        situation: "`COST n`, key holds an integer, result is not `n`",
        cases: &[
            case(
                &[&["SET", "{}", "5", "EX", "100"]],
                &["GOBLIN.INCREX", "{}", "30", "COST", "7"],
                Int(12),
                TtlKept { value: Str("12") },
            ),
            case(
                &[&["SET", "{}", "5"]],
                &["GOBLIN.INCREX", "{}", "30", "COST", "7"],
                Int(12),
                TtlKept { value: Str("12") },
            ),
            case(
                &[&["SET", "{}", "-7", "EX", "100"]],
                &["GOBLIN.INCREX", "{}", "30", "COST", "7"],
                Int(0),
                TtlKept { value: Str("0") },
            ),
        ],
    },
    Row {
        situation: "`seconds` or `n` not an integer",
        cases: &[
            Case {
                setup: &[&["SET", "{}", "3", "EX", "100"]],
                call: &["GOBLIN.INCREX", "{}", "30", "COST", "{v}"],
                each: &["abc", "1.5", " 5", "", "+5", "9223372036854775808"],
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
            Case {
                setup: &[&["SET", "{}", "3", "EX", "100"]],
                call: &["GOBLIN.INCREX", "{}", "{v}"],
                each: &[
                    "abc",
                    "1.5",
                    " 5",
                    "5 ",
                    "0x10",
                    "1e3",
                    "",
                    "nan",
                    "+5",
                    "9223372036854775808",
                ],
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
            Case {
                setup: &[],
                call: &["GOBLIN.INCREX", "{}", "{v}"],
                each: &[
                    "abc",
                    "1.5",
                    " 5",
                    "5 ",
                    "0x10",
                    "1e3",
                    "",
                    "nan",
                    "+5",
                    "9223372036854775808",
                ],
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`n` below 1",
        cases: &[Case {
            setup: &[&["SET", "{}", "3", "EX", "100"]],
            call: &["GOBLIN.INCREX", "{}", "30", "COST", "{v}"],
            each: &["0", "-1", "-9223372036854775808"],
            reply: Error(AT_LEAST_ONE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "an option other than `COST`, `COST` given twice, or without a value",
        cases: &[
            case(
                &[],
                &["GOBLIN.INCREX", "{}", "30", "COST"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.INCREX", "{}", "30", "BY", "5"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.INCREX", "{}", "1", "2"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.INCREX", "{}", "30", "COST", "1", "COST", "2"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "value not an integer (`abc`, `1.5`, `\" 5\"`, `01`)",
        cases: &[Case {
            setup: &[&["SET", "{}", "{v}", "EX", "100"]],
            call: &["GOBLIN.INCREX", "{}", "10"],
            each: NOT_COUNTERS,
            reply: Error(NOT_INTEGER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "value plus the cost past `9223372036854775807`",
        cases: &[
            case(
                &[&["SET", "{}", "9223372036854775807"]],
                &["GOBLIN.INCREX", "{}", "10"],
                Error(OVERFLOW),
                Nothing,
            ),
            case(
                &[&["SET", "{}", "9223372036854775800"]],
                &["GOBLIN.INCREX", "{}", "10", "COST", "8"],
                Error(OVERFLOW),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "result is 1 and server time + `seconds` overflows",
        cases: &[
            Case {
                setup: &[],
                call: &["GOBLIN.INCREX", "{}", "{v}"],
                each: &[
                    "9223372036854775807",
                    "9223372036854775",
                    "-9223372036854775808",
                ],
                reply: Error(GOBLIN_INCREX_INVALID_EXPIRE),
                effect: Nothing,
            },
            case(
                &[&["SET", "{}", "0"]],
                &["GOBLIN.INCREX", "{}", "9223372036854775807"],
                Error(GOBLIN_INCREX_INVALID_EXPIRE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a sorted set, hash, list, set, ...",
        cases: &[
            case(
                &[&["ZADD", "{}", "1", "a"]],
                &["GOBLIN.INCREX", "{}", "10"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["HSET", "{}", "f", "1"]],
                &["GOBLIN.INCREX", "{}", "10"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["RPUSH", "{}", "1"]],
                &["GOBLIN.INCREX", "{}", "10"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["SADD", "{}", "1"]],
                &["GOBLIN.INCREX", "{}", "10"],
                Error(WRONGTYPE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(&[], &["GOBLIN.INCREX"], Error(GOBLIN_INCREX_ARITY), Nothing),
            case(
                &[],
                &["GOBLIN.INCREX", "{}"],
                Error(GOBLIN_INCREX_ARITY),
                Nothing,
            ),
        ],
    },
];
