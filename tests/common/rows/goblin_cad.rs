//! GOBLIN.CAD: the rows of `docs/commands/goblin.cad.md`'s table of situations, as tests (see
//! `table.rs`).

use super::super::*;
use Effect::*;
use Expect::{Error, Int};
use Value::Zset;

/// The page whose table these rows are.
pub const GOBLIN_CAD_PAGE: &str = "docs/commands/goblin.cad.md";

pub const GOBLIN_CAD_ROWS: &[Row] = &[
    Row {
        situation: "a string equal to `value`",
        cases: &[
            case(
                &[&["SET", "{}", "token-1", "PX", "30000"]],
                &["GOBLIN.CAD", "{}", "token-1"],
                Int(1),
                Deleted,
            ),
            // Integers stored compactly by the server compare by their text, too.
            case(
                &[&["SET", "{}", "12345"]],
                &["GOBLIN.CAD", "{}", "12345"],
                Int(1),
                Deleted,
            ),
        ],
    },
    Row {
        situation: "a string not equal to `value`",
        cases: &[Case {
            setup: &[&["SET", "{}", "token-1", "PX", "30000"]],
            call: &["GOBLIN.CAD", "{}", "{v}"],
            each: &["token-2", "token-", "token-10", "", "TOKEN-1"],
            reply: Int(0),
            effect: Nothing,
        }],
    },
    Row {
        situation: "a sorted set with member `value`",
        cases: &[
            // The other holders keep the set's TTL.
            case(
                &[
                    &["ZADD", "{}", "1", "a", "2", "b"],
                    &["EXPIRE", "{}", "100"],
                ],
                &["GOBLIN.CAD", "{}", "a"],
                Int(1),
                TtlKept {
                    value: Zset(&["b", "2"]),
                },
            ),
            case(
                &[&["ZADD", "{}", "1", "a"], &["EXPIRE", "{}", "100"]],
                &["GOBLIN.CAD", "{}", "a"],
                Int(1),
                Deleted,
            ),
        ],
    },
    Row {
        situation: "a sorted set without it",
        cases: &[case(
            &[&["ZADD", "{}", "1", "a"], &["EXPIRE", "{}", "100"]],
            &["GOBLIN.CAD", "{}", "b"],
            Int(0),
            Nothing,
        )],
    },
    Row {
        situation: "`PERMITS n`, a sorted set with member `value`",
        cases: &[case(
            &[&["GOBLIN.ZWINDOW", "{}", "*", "30", "5", "m", "PERMITS", "3"]],
            &["GOBLIN.CAD", "{}", "m", "PERMITS", "3"],
            Int(1),
            Deleted,
        )],
    },
    Row {
        situation: "`SEPARATOR sep`, a sorted set with member `value` `sep` `0`",
        cases: &[
            case(
                &[&["GOBLIN.ZWINDOW", "{}", "*", "30", "5", "m", "PERMITS", "3", "SEPARATOR", "_"]],
                &["GOBLIN.CAD", "{}", "m", "SEPARATOR", "_", "PERMITS", "3"],
                Int(1),
                Deleted,
            ),
            case(
                &[&["ZADD", "{}", "1", "m_0", "1", "other"]],
                &["GOBLIN.CAD", "{}", "m", "SEPARATOR", "_"],
                Int(1),
                Persisted {
                    value: Zset(&["other", "1"]),
                },
            ),
        ],
    },
    Row {
        situation: "`n` below 1, or not an integer",
        cases: &[
            Case {
                setup: &[],
                call: &["GOBLIN.CAD", "{}", "m", "PERMITS", "{v}"],
                each: &["0", "-2"],
                reply: Error(AT_LEAST_ONE),
                effect: Nothing,
            },
            case(
                &[],
                &["GOBLIN.CAD", "{}", "m", "PERMITS", "x"],
                Error(NOT_INTEGER),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`n` above 10000",
        cases: &[case(
            &[&["ZADD", "{}", "1", "m"]],
            &["GOBLIN.CAD", "{}", "m", "PERMITS", "10001"],
            Error(TOO_MANY_PERMITS),
            Nothing,
        )],
    },
    Row {
        situation: "an option other than `PERMITS` and `SEPARATOR`, one given twice, or one without its value",
        cases: &[
            case(&[], &["GOBLIN.CAD", "{}", "v", "w"], Error(SYNTAX), Nothing),
            case(
                &[],
                &["GOBLIN.CAD", "{}", "v", "PERMITS", "2", "PERMITS", "2"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.CAD", "{}", "v", "SEPARATOR"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.CAD", "{}", "v", "PERMIT", "2"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "nothing",
        cases: &[case(&[], &["GOBLIN.CAD", "{}", "x"], Int(0), Nothing)],
    },
    Row {
        situation: "a hash, list, set, ...",
        cases: &[
            case(
                &[&["HSET", "{}", "x", "1"]],
                &["GOBLIN.CAD", "{}", "x"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["RPUSH", "{}", "x"]],
                &["GOBLIN.CAD", "{}", "x"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["SADD", "{}", "x"]],
                &["GOBLIN.CAD", "{}", "x"],
                Error(WRONGTYPE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(&[], &["GOBLIN.CAD", "{}"], Error(GOBLIN_CAD_ARITY), Nothing),
            case(&[], &["GOBLIN.CAD"], Error(GOBLIN_CAD_ARITY), Nothing),
        ],
    },
];
