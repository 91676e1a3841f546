//! GOBLIN.ZWSTATS: the rows of `docs/commands/goblin.zwstats.md`'s table of situations, as
//! tests (see `table.rs`).

use super::super::*;
use Effect::*;
use Expect::{Array, Bulk, Error, Int, Null};

/// The page whose table these rows are.
pub const GOBLIN_ZWSTATS_PAGE: &str = "docs/commands/goblin.zwstats.md";

pub const GOBLIN_ZWSTATS_ROWS: &[Row] = &[
    Row {
        situation: "a window written with `COST`",
        cases: &[
            case(
                &[
                    &["GOBLIN.ZWINDOW", "{}", "1000", "10", "10", "a", "COST", "4"],
                    &["GOBLIN.ZWINDOW", "{}", "1005", "10", "10", "b", "COST", "6"],
                ],
                &["GOBLIN.ZWSTATS", "{}", "1009", "10"],
                Array(&[Int(10), Bulk("1000")]),
                Nothing,
            ),
            case(
                &[
                    &["GOBLIN.ZWINDOW", "{}", "1000", "10", "10", "a", "COST", "4"],
                    &["GOBLIN.ZWINDOW", "{}", "1005", "10", "10", "b", "COST", "6"],
                ],
                &["GOBLIN.ZWSTATS", "{}", "1011", "10"],
                Array(&[Int(6), Bulk("1005")]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "a plain window",
        cases: &[case(
            &[
                &["GOBLIN.ZWINDOW", "{}", "1000", "10", "5", "a"],
                &["GOBLIN.ZWINDOW", "{}", "1001", "10", "5", "b"],
                &["GOBLIN.ZWINDOW", "{}", "1002", "10", "5", "c"],
            ],
            &["GOBLIN.ZWSTATS", "{}", "1010.5", "10"],
            Array(&[Int(2), Bulk("1001")]),
            Nothing,
        )],
    },
    Row {
        situation: "nothing inside the window",
        cases: &[
            case(
                &[&["GOBLIN.ZWINDOW", "{}", "1000", "10", "5", "a", "COST", "2"]],
                &["GOBLIN.ZWSTATS", "{}", "1010", "10"],
                Array(&[Int(0), Null]),
                Nothing,
            ),
            case(
                &[&["ZADD", "{}", "1", "old"]],
                &["GOBLIN.ZWSTATS", "{}", "*", "10"],
                Array(&[Int(0), Null]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key missing",
        cases: &[case(
            &[],
            &["GOBLIN.ZWSTATS", "{}", "*", "10"],
            Array(&[Int(0), Null]),
            Nothing,
        )],
    },
    Row {
        situation: "`now` or `window` not a finite number",
        cases: &[
            Case {
                setup: &[],
                call: &["GOBLIN.ZWSTATS", "{}", "{v}", "10"],
                each: &["abc", "nan", "inf", "1e400", ""],
                reply: Error(NOT_FLOAT),
                effect: Nothing,
            },
            Case {
                setup: &[&["ZADD", "{}", "1", "a"]],
                call: &["GOBLIN.ZWSTATS", "{}", "*", "{v}"],
                each: &["abc", "nan", "-inf"],
                reply: Error(NOT_FLOAT),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "key holds a string, hash, list, ...",
        cases: &[
            case(
                &[&["SET", "{}", "1"]],
                &["GOBLIN.ZWSTATS", "{}", "*", "10"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["RPUSH", "{}", "1"]],
                &["GOBLIN.ZWSTATS", "{}", "*", "10"],
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
                &["GOBLIN.ZWSTATS", "{}", "*"],
                Error(GOBLIN_ZWSTATS_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWSTATS", "{}", "*", "10", "x"],
                Error(GOBLIN_ZWSTATS_ARITY),
                Nothing,
            ),
        ],
    },
];
