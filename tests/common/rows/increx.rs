//! INCREX: the rows of `docs/commands/increx.md`'s table of situations, as tests (see
//! `table.rs`). They call the command by its native name, so on Redis 8.10 they run on the
//! server's own INCREX, and on the other servers on Goblin's.

use super::super::*;
use Effect::*;
use Expect::{Bulks, Error, Ints};
use Value::Str;

/// The page whose table these rows are.
pub const INCREX_PAGE: &str = "docs/commands/increx.md";

const INVALID_EXPIRE: &str = "ERR invalid expire time in 'increx' command";

pub const INCREX_ROWS: &[Row] = &[
    Row {
        situation: "key missing, no option",
        cases: &[case(
            &[],
            &["INCREX", "{}"],
            Ints(&[1, 1]),
            Persisted { value: Str("1") },
        )],
    },
    Row {
        situation: "`BYINT n` on an integer",
        cases: &[
            case(
                &[&["SET", "{}", "5", "EX", "100"]],
                &["INCREX", "{}", "BYINT", "2"],
                Ints(&[7, 2]),
                TtlKept { value: Str("7") },
            ),
            case(
                &[&["SET", "{}", "5"]],
                &["INCREX", "{}", "byint", "-7"],
                Ints(&[-2, -7]),
                TtlKept { value: Str("-2") },
            ),
        ],
    },
    Row {
        situation: "`BYFLOAT f`",
        cases: &[case(
            &[&["SET", "{}", "1"]],
            &["INCREX", "{}", "BYFLOAT", "1.5"],
            Bulks(&["2.5", "1.5"]),
            TtlKept { value: Str("2.5") },
        )],
    },
    Row {
        situation: "`EX`, `PX`, `EXAT` or `PXAT`",
        cases: &[
            case(
                &[],
                &["INCREX", "{}", "EX", "30"],
                Ints(&[1, 1]),
                Armed {
                    value: Str("1"),
                    ttl_ms: 30_000,
                },
            ),
            case(
                &[&["SET", "{}", "0", "EX", "100"]],
                &["INCREX", "{}", "PX", "1500"],
                Ints(&[1, 1]),
                Armed {
                    value: Str("1"),
                    ttl_ms: 1_500,
                },
            ),
            case(
                &[],
                &["INCREX", "{}", "EXAT", "4102444800"],
                Ints(&[1, 1]),
                ExpiresAt {
                    value: Str("1"),
                    at_ms: 4_102_444_800_000,
                },
            ),
            case(
                &[&["SET", "{}", "1"]],
                &["INCREX", "{}", "PXAT", "4102444800123", "ENX"],
                Ints(&[2, 1]),
                ExpiresAt {
                    value: Str("2"),
                    at_ms: 4_102_444_800_123,
                },
            ),
        ],
    },
    Row {
        situation: "`ENX` on a key with a TTL",
        cases: &[case(
            &[&["SET", "{}", "5", "EX", "100"]],
            &["INCREX", "{}", "EX", "30", "ENX"],
            Ints(&[6, 1]),
            TtlKept { value: Str("6") },
        )],
    },
    Row {
        situation: "`PERSIST`",
        cases: &[case(
            &[&["SET", "{}", "5", "EX", "100"]],
            &["INCREX", "{}", "PERSIST"],
            Ints(&[6, 1]),
            Persisted { value: Str("6") },
        )],
    },
    Row {
        situation: "an absolute expiry already past",
        cases: &[
            case(
                &[&["SET", "{}", "5", "EX", "100"]],
                &["INCREX", "{}", "PXAT", "1"],
                Ints(&[6, 1]),
                Deleted,
            ),
            case(
                &[&["SET", "{}", "5"]],
                &["INCREX", "{}", "EXAT", "1"],
                Ints(&[6, 1]),
                Deleted,
            ),
        ],
    },
    Row {
        situation: "the result outside `LBOUND` / `UBOUND`",
        cases: &[
            case(
                &[&["SET", "{}", "5"]],
                &["INCREX", "{}", "BYINT", "10", "UBOUND", "10"],
                Ints(&[5, 0]),
                Nothing,
            ),
            case(
                &[&["SET", "{}", "5", "EX", "100"]],
                &["INCREX", "{}", "BYINT", "-10", "LBOUND", "0", "EX", "5"],
                Ints(&[5, 0]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "outside, with `SATURATE`",
        cases: &[case(
            &[&["SET", "{}", "5", "EX", "100"]],
            &["INCREX", "{}", "BYINT", "10", "UBOUND", "10", "SATURATE"],
            Ints(&[10, 5]),
            TtlKept { value: Str("10") },
        )],
    },
    Row {
        situation: "the increment not an integer",
        cases: &[Case {
            setup: &[&["SET", "{}", "5"]],
            call: &["INCREX", "{}", "BYINT", "{v}"],
            each: &["abc", "1.5", "", "9223372036854775808", " 1"],
            reply: Error(INCREX_NOT_INTEGER_INCREMENT),
            effect: Nothing,
        }],
    },
    Row {
        situation: "the increment not a float",
        cases: &[Case {
            setup: &[&["SET", "{}", "5"]],
            call: &["INCREX", "{}", "BYFLOAT", "{v}"],
            each: &["abc", "", "1.5x"],
            reply: Error(INCREX_NOT_FLOAT_INCREMENT),
            effect: Nothing,
        }],
    },
    Row {
        situation: "an infinite `BYFLOAT`",
        cases: &[Case {
            setup: &[&["SET", "{}", "5"]],
            call: &["INCREX", "{}", "BYFLOAT", "{v}"],
            each: &["inf", "-inf"],
            reply: Error(INCREX_INFINITE_INCREMENT),
            effect: Nothing,
        }],
    },
    Row {
        situation: "a bound not a number",
        cases: &[
            case(
                &[],
                &["INCREX", "{}", "LBOUND", "abc"],
                Error(INCREX_LBOUND_NOT_INTEGER),
                Nothing,
            ),
            case(
                &[],
                &["INCREX", "{}", "BYINT", "1", "UBOUND", "1.5"],
                Error(INCREX_UBOUND_NOT_INTEGER),
                Nothing,
            ),
            case(
                &[],
                &["INCREX", "{}", "BYFLOAT", "1", "LBOUND", "abc"],
                Error(INCREX_LBOUND_NOT_FLOAT),
                Nothing,
            ),
            case(
                &[],
                &["INCREX", "{}", "UBOUND", "x", "BYFLOAT", "1"],
                Error(INCREX_UBOUND_NOT_FLOAT),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`LBOUND` above `UBOUND`",
        cases: &[case(
            &[],
            &["INCREX", "{}", "LBOUND", "10", "UBOUND", "5"],
            Error(INCREX_BOUNDS_CROSSED),
            Nothing,
        )],
    },
    Row {
        situation: "`ENX` without an expiry",
        cases: &[case(
            &[],
            &["INCREX", "{}", "ENX"],
            Error(INCREX_ENX_ALONE),
            Nothing,
        )],
    },
    Row {
        situation: "the expiry not a positive integer, or past the clock's range",
        cases: &[
            Case {
                setup: &[&["SET", "{}", "5"]],
                call: &["INCREX", "{}", "EX", "{v}"],
                each: &["0", "-1", "9223372036854775807"],
                reply: Error(INVALID_EXPIRE),
                effect: Nothing,
            },
            Case {
                setup: &[],
                call: &["INCREX", "{}", "PX", "{v}"],
                each: &["0", "9223372036854775807"],
                reply: Error(INVALID_EXPIRE),
                effect: Nothing,
            },
            case(
                &[],
                &["INCREX", "{}", "EX", "abc"],
                Error(NOT_INTEGER),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "the value not a number",
        cases: &[
            Case {
                setup: &[&["SET", "{}", "{v}"]],
                call: &["INCREX", "{}"],
                each: &["abc", "1.5", " 5"],
                reply: Error(NOT_INTEGER),
                effect: Nothing,
            },
            case(
                &[&["SET", "{}", "abc"]],
                &["INCREX", "{}", "BYFLOAT", "1"],
                Error(NOT_FLOAT),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`SATURATE` moves the value so far the applied increment overflows",
        cases: &[case(
            &[&["SET", "{}", "-9223372036854775808"]],
            &["INCREX", "{}", "LBOUND", "9223372036854775807", "SATURATE"],
            Error(INCREX_APPLIED_OVERFLOW),
            Nothing,
        )],
    },
    Row {
        situation: "an option repeated, in conflict, unknown, or without its value",
        cases: &[
            case(
                &[],
                &["INCREX", "{}", "BYINT", "1", "BYINT", "2"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["INCREX", "{}", "BYINT", "1", "BYFLOAT", "2"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["INCREX", "{}", "EX", "10", "PX", "10"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["INCREX", "{}", "PERSIST", "EX", "10"],
                Error(SYNTAX),
                Nothing,
            ),
            case(&[], &["INCREX", "{}", "BOGUS"], Error(SYNTAX), Nothing),
            case(&[], &["INCREX", "{}", "UBOUND"], Error(SYNTAX), Nothing),
        ],
    },
    Row {
        situation: "key holds a list, hash, sorted set, ...",
        cases: &[
            case(
                &[&["RPUSH", "{}", "a"]],
                &["INCREX", "{}"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["ZADD", "{}", "1", "a"]],
                &["INCREX", "{}", "BYFLOAT", "1"],
                Error(WRONGTYPE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(&[], &["INCREX"], Error(INCREX_ARITY), Nothing)],
    },
];
