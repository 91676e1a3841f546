//! GOBLIN.SWINDOW: the rows of `docs/commands/goblin.swindow.md`'s table of situations, as
//! tests (see `table.rs`). Their windows are 100,000 s long, so that no case's calls straddle
//! two windows: the previous window's weight is proven against its idiom in
//! tests/limits_idioms.rs.

use super::super::*;
use Effect::*;
use Expect::{Any, Array, Error, Int};

/// The page whose table these rows are.
pub const GOBLIN_SWINDOW_PAGE: &str = "docs/commands/goblin.swindow.md";

const WINDOW_MS: i64 = 100_000_000;

pub const GOBLIN_SWINDOW_ROWS: &[Row] = &[
    Row {
        situation: "the weighted count plus `n` fits under `limit`",
        cases: &[
            case(
                &[],
                &["GOBLIN.SWINDOW", "{}", "100000", "10", "COST", "3"],
                Array(&[Int(1), Int(0), Int(0), Int(3), Any]),
                Counts {
                    current: 3,
                    previous: 0,
                    window_ms: WINDOW_MS,
                },
            ),
            case(
                &[&["GOBLIN.SWINDOW", "{}", "100000", "10", "COST", "2"]],
                &["GOBLIN.SWINDOW", "{}", "100000", "10", "cost", "1"],
                Array(&[Int(1), Int(0), Int(0), Int(3), Any]),
                Counts {
                    current: 3,
                    previous: 0,
                    window_ms: WINDOW_MS,
                },
            ),
            case(
                &[&["GOBLIN.SWINDOW", "{}", "100000", "10", "COST", "2"]],
                &["GOBLIN.SWINDOW", "{}", "100000", "3"],
                Array(&[Int(1), Int(0), Int(0), Int(3), Any]),
                Counts {
                    current: 3,
                    previous: 0,
                    window_ms: WINDOW_MS,
                },
            ),
        ],
    },
    Row {
        situation: "it does not",
        cases: &[case(
            &[&["GOBLIN.SWINDOW", "{}", "100000", "10", "COST", "9"]],
            &["GOBLIN.SWINDOW", "{}", "100000", "10", "COST", "2"],
            Array(&[Int(0), Int(0), Int(0), Int(9), Any]),
            Nothing,
        )],
    },
    Row {
        situation: "`n` above `limit`",
        cases: &[
            case(
                &[],
                &["GOBLIN.SWINDOW", "{}", "100000", "10", "COST", "11"],
                Array(&[Int(0), Int(0), Int(0), Int(0), Any]),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.SWINDOW", "{}", "100000", "0"],
                Array(&[Int(0), Int(0), Int(0), Int(0), Any]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`window` not a number",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.SWINDOW", "{}", "{v}", "10"],
            each: &["abc", "nan", "inf", ""],
            reply: Error(NOT_FLOAT),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`window` <= 0",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.SWINDOW", "{}", "{v}", "10"],
            each: &["0", "-1", "-0.5"],
            reply: Error(SWINDOW_WINDOW_RANGE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`window` so long that the key's expiry leaves the clock's range",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.SWINDOW", "{}", "{v}", "10"],
            each: &["1e300", "4611686018427388"],
            reply: Error(GOBLIN_SWINDOW_INVALID_EXPIRE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`limit` or `n` not an integer",
        cases: &[
            case(
                &[],
                &["GOBLIN.SWINDOW", "{}", "10", "1.5"],
                Error(NOT_INTEGER),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.SWINDOW", "{}", "10", "10", "COST", "x"],
                Error(NOT_INTEGER),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`n` below 1",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.SWINDOW", "{}", "10", "10", "COST", "{v}"],
            each: &["0", "-1"],
            reply: Error(AT_LEAST_ONE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "an option other than `COST`, `COST` given twice, or without a value",
        cases: &[
            case(
                &[],
                &["GOBLIN.SWINDOW", "{}", "10", "10", "COST"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.SWINDOW", "{}", "10", "10", "X", "1"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.SWINDOW", "{}", "10", "10", "COST", "1", "COST", "2"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a string that is not a window counter",
        cases: &[Case {
            setup: &[&["SET", "{}", "{v}"]],
            call: &["GOBLIN.SWINDOW", "{}", "10", "10"],
            each: &["abc", "1:2", "1:2:3:4", "1:-2:3", ""],
            reply: Error(SWINDOW_NOT_A_COUNTER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "key holds a list, hash, sorted set, ...",
        cases: &[
            case(
                &[&["RPUSH", "{}", "1"]],
                &["GOBLIN.SWINDOW", "{}", "10", "10"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["ZADD", "{}", "1", "a"]],
                &["GOBLIN.SWINDOW", "{}", "10", "10"],
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
                &["GOBLIN.SWINDOW", "{}", "10"],
                Error(GOBLIN_SWINDOW_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.SWINDOW"],
                Error(GOBLIN_SWINDOW_ARITY),
                Nothing,
            ),
        ],
    },
];
