//! DELIFEQ: the rows of `docs/commands/delifeq.md`'s table of situations, as tests (see
//! `table.rs`). On Valkey 9.1 they run on the server's own DELIFEQ, elsewhere on Goblin's.

use super::super::*;
use Effect::*;
use Expect::{Error, Int};

/// The page whose table these rows are.
pub const DELIFEQ_PAGE: &str = "docs/commands/delifeq.md";

pub const DELIFEQ_ROWS: &[Row] = &[
    Row {
        situation: "key holds a string equal to `value`",
        cases: &[case(
            &[&["SET", "{}", "a1b2", "PX", "30000"]],
            &["DELIFEQ", "{}", "a1b2"],
            Int(1),
            Deleted,
        )],
    },
    Row {
        situation: "key holds another string",
        cases: &[
            case(
                &[&["SET", "{}", "a1b2"]],
                &["DELIFEQ", "{}", "c3d4"],
                Int(0),
                Nothing,
            ),
            case(
                &[&["SET", "{}", "a1b2"]],
                &["DELIFEQ", "{}", "A1B2"],
                Int(0),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key missing",
        cases: &[case(&[], &["DELIFEQ", "{}", "a1b2"], Int(0), Nothing)],
    },
    Row {
        situation: "key holds a list, hash, sorted set, ...",
        cases: &[case(
            &[&["RPUSH", "{}", "a"]],
            &["DELIFEQ", "{}", "a"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(&[], &["DELIFEQ", "{}"], Error(DELIFEQ_ARITY), Nothing),
            case(
                &[],
                &["DELIFEQ", "{}", "a", "b"],
                Error(DELIFEQ_ARITY),
                Nothing,
            ),
        ],
    },
];
