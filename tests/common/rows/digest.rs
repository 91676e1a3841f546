//! DIGEST: the rows of `docs/commands/digest.md`'s table of situations, as tests (see
//! `table.rs`). On Redis 8.10 they run on the server's own DIGEST, elsewhere on Goblin's.

use super::super::*;
use Effect::*;
use Expect::{Bulk, Error, Null};

/// The page whose table these rows are.
pub const DIGEST_PAGE: &str = "docs/commands/digest.md";

pub const DIGEST_ROWS: &[Row] = &[
    Row {
        situation: "key holds a string",
        cases: &[case(
            &[&["SET", "{}", "hello", "EX", "100"]],
            &["DIGEST", "{}"],
            Bulk("9555e8555c62dcfd"),
            Nothing,
        )],
    },
    Row {
        situation: "key missing",
        cases: &[case(&[], &["DIGEST", "{}"], Null, Nothing)],
    },
    Row {
        situation: "key holds a list, hash, sorted set, ...",
        cases: &[
            case(
                &[&["RPUSH", "{}", "a"]],
                &["DIGEST", "{}"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["HSET", "{}", "f", "v"]],
                &["DIGEST", "{}"],
                Error(WRONGTYPE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(&[], &["DIGEST"], Error(DIGEST_ARITY), Nothing),
            case(
                &[&["SET", "{}", "a"]],
                &["DIGEST", "{}", "x"],
                Error(DIGEST_ARITY),
                Nothing,
            ),
        ],
    },
];
