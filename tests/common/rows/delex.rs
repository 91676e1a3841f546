//! DELEX: the rows of `docs/commands/delex.md`'s table of situations, as tests (see
//! `table.rs`). On Redis 8.10 they run on the server's own DELEX, elsewhere on Goblin's.

use super::super::*;
use Effect::*;
use Expect::{Error, Int};

/// The page whose table these rows are.
pub const DELEX_PAGE: &str = "docs/commands/delex.md";

/// `hello`'s digest, as Redis 8.10's DIGEST replies it.
const HELLO: &str = "9555e8555c62dcfd";

pub const DELEX_ROWS: &[Row] = &[
    Row {
        situation: "no condition, the key exists (any type)",
        cases: &[
            case(&[&["SET", "{}", "v", "EX", "100"]], &["DELEX", "{}"], Int(1), Deleted),
            case(&[&["RPUSH", "{}", "a"]], &["DELEX", "{}"], Int(1), Deleted),
            case(&[&["ZADD", "{}", "1", "a"]], &["delex", "{}"], Int(1), Deleted),
        ],
    },
    Row {
        situation: "no condition, the key is missing",
        cases: &[case(&[], &["DELEX", "{}"], Int(0), Nothing)],
    },
    Row {
        situation: "the condition holds (`IFEQ` equal, `IFNE` different, `IFDEQ` the digest, `IFDNE` another)",
        cases: &[
            case(&[&["SET", "{}", "hello"]], &["DELEX", "{}", "IFEQ", "hello"], Int(1), Deleted),
            case(&[&["SET", "{}", "hello"]], &["DELEX", "{}", "ifne", "world"], Int(1), Deleted),
            case(&[&["SET", "{}", "hello"]], &["DELEX", "{}", "IFDEQ", HELLO], Int(1), Deleted),
            case(
                &[&["SET", "{}", "hello"]],
                &["DELEX", "{}", "IFDEQ", "9555E8555C62DCFD"],
                Int(1),
                Deleted,
            ),
            case(
                &[&["SET", "{}", "hello"]],
                &["DELEX", "{}", "IFDNE", "0000000000000000"],
                Int(1),
                Deleted,
            ),
        ],
    },
    Row {
        situation: "the condition does not hold",
        cases: &[
            case(&[&["SET", "{}", "hello"]], &["DELEX", "{}", "IFEQ", "world"], Int(0), Nothing),
            case(&[&["SET", "{}", "hello"]], &["DELEX", "{}", "IFNE", "hello"], Int(0), Nothing),
            case(
                &[&["SET", "{}", "hello"]],
                &["DELEX", "{}", "IFDEQ", "zzzzzzzzzzzzzzzz"],
                Int(0),
                Nothing,
            ),
            case(&[&["SET", "{}", "hello"]], &["DELEX", "{}", "IFDNE", HELLO], Int(0), Nothing),
        ],
    },
    Row {
        situation: "a condition on a missing key (even an unknown one)",
        cases: &[
            case(&[], &["DELEX", "{}", "IFEQ", "a"], Int(0), Nothing),
            case(&[], &["DELEX", "{}", "BOGUS", "a"], Int(0), Nothing),
            case(&[], &["DELEX", "{}", "IFDEQ", "123"], Int(0), Nothing),
        ],
    },
    Row {
        situation: "a condition on a key that is not a string",
        cases: &[
            case(
                &[&["RPUSH", "{}", "a"]],
                &["DELEX", "{}", "IFEQ", "a"],
                Error(DELEX_NOT_A_STRING),
                Nothing,
            ),
            case(
                &[&["ZADD", "{}", "1", "a"]],
                &["DELEX", "{}", "BOGUS", "a"],
                Error(DELEX_NOT_A_STRING),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "an unknown condition",
        cases: &[
            case(
                &[&["SET", "{}", "a"]],
                &["DELEX", "{}", "IFXX", "a"],
                Error(DELEX_UNKNOWN_CONDITION),
                Nothing,
            ),
            case(
                &[&["SET", "{}", "a"]],
                &["DELEX", "{}", "IF", "a"],
                Error(DELEX_UNKNOWN_CONDITION),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "a digest not 16 characters long",
        cases: &[
            case(
                &[&["SET", "{}", "a"]],
                &["DELEX", "{}", "IFDEQ", "123"],
                Error(DELEX_DIGEST_LENGTH),
                Nothing,
            ),
            case(
                &[&["SET", "{}", "a"]],
                &["DELEX", "{}", "IFDNE", "9555e8555c62dcfd0"],
                Error(DELEX_DIGEST_LENGTH),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(&[], &["DELEX"], Error(DELEX_ARITY), Nothing),
            case(&[&["SET", "{}", "a"]], &["DELEX", "{}", "IFEQ"], Error(DELEX_ARITY), Nothing),
        ],
    },
];
