//! The README's three tables of situations, as tests: see `table.rs`. The situation texts are
//! the README's, verbatim (tests/readme.rs checks it); each row's cases are what the tests that
//! once stood alone for that row asserted, and more.

use super::*;
use Effect::*;
use Expect::{Error, Int};
use Value::{Str, Zset};

pub const INCREX_HEADING: &str = "## GOBLIN.INCREX key seconds";
pub const ZWINDOW_HEADING: &str = "## GOBLIN.ZWINDOW key now window limit member";
pub const CAD_HEADING: &str = "## GOBLIN.CAD key value";

/// What INCR refuses as a counter (`01` and `-0` are not canonical).
const NOT_COUNTERS: &[&str] = &[
    "abc", "1.5", " 5", "5 ", "", "0x10", "1e3", "+1", "01", "-0",
];

pub const INCREX_ROWS: &[Row] = &[
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
        situation: "`seconds` not an integer",
        cases: &[
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
        situation: "value is `9223372036854775807`",
        cases: &[case(
            &[&["SET", "{}", "9223372036854775807"]],
            &["GOBLIN.INCREX", "{}", "10"],
            Error(OVERFLOW),
            Nothing,
        )],
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
                reply: Error(INCREX_INVALID_EXPIRE),
                effect: Nothing,
            },
            case(
                &[&["SET", "{}", "0"]],
                &["GOBLIN.INCREX", "{}", "9223372036854775807"],
                Error(INCREX_INVALID_EXPIRE),
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
            case(&[], &["GOBLIN.INCREX"], Error(INCREX_ARITY), Nothing),
            case(&[], &["GOBLIN.INCREX", "{}"], Error(INCREX_ARITY), Nothing),
            case(
                &[],
                &["GOBLIN.INCREX", "{}", "1", "2"],
                Error(INCREX_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["goblin.increx", "{}", "1", "2"],
                Error(INCREX_ARITY),
                Nothing,
            ),
        ],
    },
];

pub const ZWINDOW_ROWS: &[Row] = &[
    Row {
        situation: "`member` holds a slot in the window",
        cases: &[
            // In a full window; the TTL set by hand is re-armed to the window.
            case(
                &[
                    &["ZADD", "{}", "95", "a", "96", "b"],
                    &["EXPIRE", "{}", "5"],
                ],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "2", "a"],
                Int(1),
                Armed {
                    value: Zset(&["b", "96", "a", "100"]),
                    ttl_ms: 10_000,
                },
            ),
            // Even with a limit since lowered to 0.
            case(
                &[&["ZADD", "{}", "95", "a", "96", "b"]],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "0", "b"],
                Int(1),
                Armed {
                    value: Zset(&["a", "95", "b", "100"]),
                    ttl_ms: 10_000,
                },
            ),
        ],
    },
    Row {
        situation: "window has room",
        cases: &[
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "2", "a"],
                Int(1),
                Armed {
                    value: Zset(&["a", "100"]),
                    ttl_ms: 10_000,
                },
            ),
            case(
                &[&["ZADD", "{}", "95", "x"], &["PEXPIRE", "{}", "77777"]],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "2", "a"],
                Int(1),
                Armed {
                    value: Zset(&["x", "95", "a", "100"]),
                    ttl_ms: 10_000,
                },
            ),
            // Room made by eviction.
            case(
                &[&["ZADD", "{}", "80", "x", "90", "y"]],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "1", "a"],
                Int(1),
                Armed {
                    value: Zset(&["a", "100"]),
                    ttl_ms: 10_000,
                },
            ),
        ],
    },
    Row {
        situation: "window full, or `limit <= 0`",
        cases: &[
            case(
                &[&["ZADD", "{}", "95", "x"], &["PEXPIRE", "{}", "77777"]],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "1", "a"],
                Int(0),
                Nothing,
            ),
            // The eviction stands (as in the Lua idiom); the rest, TTL included, is untouched.
            case(
                &[
                    &["ZADD", "{}", "1", "old", "95", "a", "96", "b"],
                    &["PEXPIRE", "{}", "77777"],
                ],
                &["GOBLIN.ZWINDOW", "{}", "100", "10", "2", "c"],
                Int(0),
                TtlKept {
                    value: Zset(&["a", "95", "b", "96"]),
                },
            ),
            Case {
                setup: &[],
                call: &["GOBLIN.ZWINDOW", "{}", "1", "10", "{v}", "a"],
                each: &["0", "-1", "-9223372036854775808"],
                reply: Int(0),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`window <= 0` and admitted",
        cases: &[
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "0", "1", "a"],
                Int(1),
                Deleted,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "-3", "1", "a"],
                Int(1),
                Deleted,
            ),
            case(
                &[&["ZADD", "{}", "150", "x"]],
                &["GOBLIN.ZWINDOW", "{}", "100", "-10", "2", "a"],
                Int(1),
                Deleted,
            ),
        ],
    },
    Row {
        situation: "the set is emptied by eviction",
        cases: &[case(
            &[&["ZADD", "{}", "1", "a", "2", "b"]],
            &["GOBLIN.ZWINDOW", "{}", "100", "10", "0", "c"],
            Int(0),
            Deleted,
        )],
    },
    Row {
        situation: "`now` or `window` not a finite number (`abc`, `nan`, `inf`, `1e400`)",
        cases: &[
            Case {
                setup: &[&["ZADD", "{}", "1", "old"], &["EXPIRE", "{}", "100"]],
                call: &["GOBLIN.ZWINDOW", "{}", "{v}", "10", "1", "m"],
                each: &["abc", "nan", "inf", "-inf", "1e400"],
                reply: Error(NOT_FLOAT),
                effect: Nothing,
            },
            Case {
                setup: &[&["ZADD", "{}", "1", "old"], &["EXPIRE", "{}", "100"]],
                call: &["GOBLIN.ZWINDOW", "{}", "100", "{v}", "1", "m"],
                each: &["abc", "nan", "inf", "-inf", "1e400"],
                reply: Error(NOT_FLOAT),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`limit` not an integer",
        cases: &[Case {
            setup: &[&["ZADD", "{}", "1", "old"], &["EXPIRE", "{}", "100"]],
            call: &["GOBLIN.ZWINDOW", "{}", "100", "10", "{v}", "m"],
            each: &["abc", "1.5", "9223372036854775808"],
            reply: Error(NOT_INTEGER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "server time + `window` overflows",
        cases: &[Case {
            // Refused before eviction: `old` stays.
            setup: &[&["ZADD", "{}", "1", "old"]],
            call: &["GOBLIN.ZWINDOW", "{}", "1e308", "{v}", "5", "m"],
            each: &["1e300", "9223372036854775.807", "1.7976931348623157e308"],
            reply: Error(ZWINDOW_INVALID_EXPIRE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "key holds a string, hash, list, ...",
        cases: &[
            case(
                &[&["SET", "{}", "1"]],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["HSET", "{}", "f", "1"]],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["RPUSH", "{}", "1"]],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m"],
                Error(WRONGTYPE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(&[], &["GOBLIN.ZWINDOW"], Error(ZWINDOW_ARITY), Nothing),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}"],
                Error(ZWINDOW_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1"],
                Error(ZWINDOW_ARITY),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.ZWINDOW", "{}", "1", "10", "1", "m", "extra"],
                Error(ZWINDOW_ARITY),
                Nothing,
            ),
        ],
    },
];

pub const CAD_ROWS: &[Row] = &[
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
            case(&[], &["GOBLIN.CAD", "{}"], Error(CAD_ARITY), Nothing),
            case(
                &[],
                &["GOBLIN.CAD", "{}", "v", "w"],
                Error(CAD_ARITY),
                Nothing,
            ),
        ],
    },
];
