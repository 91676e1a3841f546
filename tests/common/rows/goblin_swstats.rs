//! GOBLIN.SWSTATS: the rows of `docs/commands/goblin.swstats.md`'s table of situations, as
//! tests (see `table.rs`).

use super::super::*;
use Effect::*;
use Expect::{Any, Array, Error, Int};

/// The page whose table these rows are.
pub const GOBLIN_SWSTATS_PAGE: &str = "docs/commands/goblin.swstats.md";

pub const GOBLIN_SWSTATS_ROWS: &[Row] = &[
    Row {
        situation: "key holds a window counter",
        cases: &[case(
            &[&["GOBLIN.SWINDOW", "{}", "100000", "10", "COST", "3"]],
            &["GOBLIN.SWSTATS", "{}", "100000"],
            Array(&[Int(0), Int(0), Int(3), Any]),
            Nothing,
        )],
    },
    Row {
        situation: "key missing",
        cases: &[case(
            &[],
            &["GOBLIN.SWSTATS", "{}", "100000"],
            Array(&[Int(0), Int(0), Int(0), Any]),
            Nothing,
        )],
    },
    Row {
        situation: "`window` not a number",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.SWSTATS", "{}", "{v}"],
            each: &["abc", "nan", ""],
            reply: Error(NOT_FLOAT),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`window` <= 0",
        cases: &[case(
            &[],
            &["GOBLIN.SWSTATS", "{}", "0"],
            Error(SWINDOW_WINDOW_RANGE),
            Nothing,
        )],
    },
    Row {
        situation: "key holds a string that is not a window counter",
        cases: &[case(
            &[&["SET", "{}", "7"]],
            &["GOBLIN.SWSTATS", "{}", "10"],
            Error(SWINDOW_NOT_A_COUNTER),
            Nothing,
        )],
    },
    Row {
        situation: "key holds a list, hash, sorted set, ...",
        cases: &[case(
            &[&["HSET", "{}", "f", "1"]],
            &["GOBLIN.SWSTATS", "{}", "10"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(
                &[],
                &["GOBLIN.SWSTATS", "{}"],
                Error(GOBLIN_SWSTATS_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.SWSTATS", "{}", "10", "x"],
                Error(GOBLIN_SWSTATS_ARITY),
                Nothing,
            ),
        ],
    },
];
