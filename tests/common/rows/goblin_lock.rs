//! GOBLIN.LOCK, GOBLIN.BLOCK, GOBLIN.EXTEND and GOBLIN.BZWINDOW: the rows of their pages'
//! tables of situations, as tests (see `table.rs`): what each call answers at once. Waiting is
//! proven in tests/waiting.rs.

use super::super::*;
use Effect::*;
use Expect::{Error, Int, Null, Token};
use Value::{Members, Str};

pub const GOBLIN_LOCK_PAGE: &str = "docs/commands/goblin.lock.md";
pub const GOBLIN_BLOCK_PAGE: &str = "docs/commands/goblin.block.md";
pub const GOBLIN_EXTEND_PAGE: &str = "docs/commands/goblin.extend.md";
pub const GOBLIN_BZWINDOW_PAGE: &str = "docs/commands/goblin.bzwindow.md";

const OK: Expect = Expect::Status("OK");

pub const GOBLIN_LOCK_ROWS: &[Row] = &[
    Row {
        situation: "key missing, nobody waiting",
        cases: &[
            case(
                &[],
                &["GOBLIN.LOCK", "{}", "t", "30000"],
                OK,
                Armed {
                    value: Str("t"),
                    ttl_ms: 30_000,
                },
            ),
            // Any string is a token, the empty one too (as SET takes it).
            case(
                &[],
                &["GOBLIN.LOCK", "{}", "", "30000"],
                OK,
                Armed {
                    value: Str(""),
                    ttl_ms: 30_000,
                },
            ),
        ],
    },
    Row {
        situation: "key holds `token`",
        cases: &[case(
            &[&["GOBLIN.LOCK", "{}", "t", "1000"]],
            &["GOBLIN.LOCK", "{}", "t", "30000"],
            OK,
            Armed {
                value: Str("t"),
                ttl_ms: 30_000,
            },
        )],
    },
    Row {
        situation: "key holds another token, or callers wait in line",
        cases: &[
            case(
                &[&["GOBLIN.LOCK", "{}", "a", "30000"]],
                &["GOBLIN.LOCK", "{}", "t", "30000"],
                Null,
                Nothing,
            ),
            case(
                &[&["SET", "{}", "a"]],
                &["GOBLIN.LOCK", "{}", "t", "30000"],
                Null,
                Nothing,
            ),
            case(
                &[&["GOBLIN.LOCK", "{}", "a", "30000", "FENCE"]],
                &["GOBLIN.LOCK", "{}", "t", "30000", "FENCE"],
                Null,
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`FENCE`, key missing or holding `token`",
        cases: &[
            case(
                &[],
                &["GOBLIN.LOCK", "{}", "t", "30000", "FENCE"],
                Token,
                Armed {
                    value: Str("t"),
                    ttl_ms: 30_000,
                },
            ),
            case(
                &[&["GOBLIN.LOCK", "{}", "t", "1000"]],
                &["GOBLIN.LOCK", "{}", "t", "30000", "FENCE"],
                Token,
                Armed {
                    value: Str("t"),
                    ttl_ms: 30_000,
                },
            ),
        ],
    },
    Row {
        situation: "`FENCE`, a token kept for the key ahead of the server's clock by more than `fence-margin-ms`",
        cases: &[case(
            &[&["SET", "{{}}\0goblin:fence\0{}", "9000000000000000000"]],
            &["GOBLIN.LOCK", "{}", "t", "30000", "FENCE"],
            Error(FENCE_CLOCK_BEHIND),
            Nothing,
        )],
    },
    Row {
        situation: "`FENCE` on a key holding a `}` and no hash tag",
        cases: &[case(&[], &["GOBLIN.LOCK", "{}}", "t", "30000", "FENCE"], Error(FENCE_NO_SLOT_TAG), Nothing)],
    },
    Row {
        situation: "`milliseconds` not an integer",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.LOCK", "{}", "t", "{v}"],
            each: &["x", "1.5", ""],
            reply: Error(NOT_INTEGER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`milliseconds` 0, key missing or holding `token`",
        cases: &[
            case(
                &[],
                &["GOBLIN.LOCK", "{}", "t", "0"],
                OK,
                Persisted { value: Str("t") },
            ),
            // Its holder, again without a lease: the TTL goes, as SET's.
            case(
                &[&["GOBLIN.LOCK", "{}", "t", "1000"]],
                &["GOBLIN.LOCK", "{}", "t", "0"],
                OK,
                Persisted { value: Str("t") },
            ),
        ],
    },
    Row {
        situation: "`milliseconds` < 0",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.LOCK", "{}", "t", "{v}"],
            each: &["-1", "-9223372036854775808"],
            reply: Error(GOBLIN_LOCK_INVALID_EXPIRE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "an option other than `FENCE`, or `FENCE` given twice",
        cases: &[
            case(&[], &["GOBLIN.LOCK", "{}", "t", "1", "x"], Error(SYNTAX), Nothing),
            case(
                &[],
                &["GOBLIN.LOCK", "{}", "t", "1", "FENCE", "FENCE"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a list, hash, sorted set, ...",
        cases: &[case(
            &[&["RPUSH", "{}", "a"]],
            &["GOBLIN.LOCK", "{}", "t", "1000"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[
            case(
                &[],
                &["GOBLIN.LOCK", "{}", "t"],
                Error(GOBLIN_LOCK_ARITY),
                Nothing,
            ),
        ],
    },
];

pub const GOBLIN_BLOCK_ROWS: &[Row] = &[
    Row {
        situation: "key missing, nobody waiting",
        cases: &[case(
            &[],
            &["GOBLIN.BLOCK", "{}", "t", "30000", "1"],
            OK,
            Armed {
                value: Str("t"),
                ttl_ms: 30_000,
            },
        )],
    },
    Row {
        situation: "key holds `token`",
        cases: &[case(
            &[&["GOBLIN.LOCK", "{}", "t", "1000"]],
            &["GOBLIN.BLOCK", "{}", "t", "30000", "0"],
            OK,
            Armed {
                value: Str("t"),
                ttl_ms: 30_000,
            },
        )],
    },
    Row {
        situation: "`FENCE`, key missing or holding `token`",
        cases: &[
            case(
                &[],
                &["GOBLIN.BLOCK", "{}", "t", "30000", "1", "FENCE"],
                Token,
                Armed {
                    value: Str("t"),
                    ttl_ms: 30_000,
                },
            ),
            case(
                &[&["GOBLIN.LOCK", "{}", "t", "1000"]],
                &["GOBLIN.BLOCK", "{}", "t", "30000", "1", "FENCE"],
                Token,
                Armed {
                    value: Str("t"),
                    ttl_ms: 30_000,
                },
            ),
        ],
    },
    Row {
        situation: "`FENCE`, a token kept for the key ahead of the server's clock by more than `fence-margin-ms`",
        cases: &[case(
            &[&["SET", "{{}}\0goblin:fence\0{}", "9000000000000000000"]],
            &["GOBLIN.BLOCK", "{}", "t", "30000", "1", "FENCE"],
            Error(FENCE_CLOCK_BEHIND),
            Nothing,
        )],
    },
    Row {
        situation: "`FENCE` on a key holding a `}` and no hash tag",
        cases: &[case(&[], &["GOBLIN.BLOCK", "{}}", "t", "30000", "1", "FENCE"], Error(FENCE_NO_SLOT_TAG), Nothing)],
    },
    Row {
        situation: "inside MULTI or a script, the lock held",
        cases: &[case(
            &[&["GOBLIN.LOCK", "{}", "a", "30000"]],
            &[
                "EVAL",
                "return redis.call('GOBLIN.BLOCK', KEYS[1], 't', 1000, 0)",
                "1",
                "{}",
            ],
            Null,
            Nothing,
        )],
    },
    Row {
        situation: "`timeout` negative",
        cases: &[case(
            &[],
            &["GOBLIN.BLOCK", "{}", "t", "1000", "-1"],
            Error(TIMEOUT_NEGATIVE),
            Nothing,
        )],
    },
    Row {
        situation: "`timeout` not a number",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.BLOCK", "{}", "t", "1000", "{v}"],
            each: &["x", "nan", ""],
            reply: Error(TIMEOUT_NOT_A_FLOAT),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`timeout` too large for the clock",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.BLOCK", "{}", "t", "1000", "{v}"],
            each: &["1e300", "inf", "9223372036854775"],
            reply: Error(TIMEOUT_OUT_OF_RANGE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`milliseconds` 0, key missing",
        cases: &[case(
            &[],
            &["GOBLIN.BLOCK", "{}", "t", "0", "1"],
            OK,
            Persisted { value: Str("t") },
        )],
    },
    Row {
        situation: "`milliseconds` < 0",
        cases: &[case(
            &[],
            &["GOBLIN.BLOCK", "{}", "t", "-1", "1"],
            Error(GOBLIN_BLOCK_INVALID_EXPIRE),
            Nothing,
        )],
    },
    Row {
        situation: "an option other than `FENCE`, or `FENCE` given twice",
        cases: &[
            case(&[], &["GOBLIN.BLOCK", "{}", "t", "1", "1", "x"], Error(SYNTAX), Nothing),
            case(
                &[],
                &["GOBLIN.BLOCK", "{}", "t", "1", "1", "FENCE", "FENCE"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a list, hash, sorted set, ...",
        cases: &[case(
            &[&["ZADD", "{}", "1", "a"]],
            &["GOBLIN.BLOCK", "{}", "t", "1000", "0"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(
            &[],
            &["GOBLIN.BLOCK", "{}", "t", "1000"],
            Error(GOBLIN_BLOCK_ARITY),
            Nothing,
        )],
    },
];

pub const GOBLIN_EXTEND_ROWS: &[Row] = &[
    Row {
        situation: "key holds `token`, with a TTL",
        cases: &[
            case(
                &[&["GOBLIN.LOCK", "{}", "t", "10000"]],
                &["GOBLIN.EXTEND", "{}", "t", "5000"],
                Int(1),
                ExtendedBy {
                    value: Str("t"),
                    by_ms: 5_000,
                },
            ),
            // An empty token is a token: the empty string it holds (not a missing key).
            case(
                &[&["SET", "{}", "", "PX", "10000"]],
                &["GOBLIN.EXTEND", "{}", "", "5000"],
                Int(1),
                ExtendedBy {
                    value: Str(""),
                    by_ms: 5_000,
                },
            ),
        ],
    },
    Row {
        situation: "the same, with `REPLACE`",
        cases: &[case(
            &[&["GOBLIN.LOCK", "{}", "t", "10000"]],
            &["GOBLIN.EXTEND", "{}", "t", "30000", "replace"],
            Int(1),
            Armed {
                value: Str("t"),
                ttl_ms: 30_000,
            },
        )],
    },
    Row {
        situation: "key holds another token, or none",
        cases: &[
            case(
                &[&["GOBLIN.LOCK", "{}", "a", "10000"]],
                &["GOBLIN.EXTEND", "{}", "t", "5000"],
                Int(0),
                Nothing,
            ),
            case(&[], &["GOBLIN.EXTEND", "{}", "t", "5000"], Int(0), Nothing),
            case(&[], &["GOBLIN.EXTEND", "{}", "", "5000"], Int(0), Nothing),
            case(
                &[&["SET", "{}", "", "PX", "10000"]],
                &["GOBLIN.EXTEND", "{}", "t", "5000"],
                Int(0),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds `token` without a TTL",
        cases: &[case(
            &[&["SET", "{}", "t"]],
            &["GOBLIN.EXTEND", "{}", "t", "5000"],
            Int(0),
            Nothing,
        )],
    },
    Row {
        situation: "`FENCE`, key holds `token`, with a TTL",
        cases: &[
            case(
                &[&["GOBLIN.LOCK", "{}", "t", "10000", "FENCE"]],
                &["GOBLIN.EXTEND", "{}", "t", "5000", "FENCE"],
                Token,
                ExtendedBy {
                    value: Str("t"),
                    by_ms: 5000,
                },
            ),
            // A holder that took the lock without FENCE: a token of its own from now.
            case(
                &[&["GOBLIN.LOCK", "{}", "t", "10000"]],
                &["GOBLIN.EXTEND", "{}", "t", "30000", "REPLACE", "FENCE"],
                Token,
                Armed {
                    value: Str("t"),
                    ttl_ms: 30_000,
                },
            ),
        ],
    },
    Row {
        situation: "`FENCE`, key holds another token, or none",
        cases: &[
            case(
                &[&["GOBLIN.LOCK", "{}", "a", "10000", "FENCE"]],
                &["GOBLIN.EXTEND", "{}", "t", "5000", "FENCE"],
                Int(0),
                Nothing,
            ),
            case(&[], &["GOBLIN.EXTEND", "{}", "t", "5000", "FENCE"], Int(0), Nothing),
        ],
    },
    Row {
        situation: "`FENCE`, a token kept for the key ahead of the server's clock by more than `fence-margin-ms`",
        cases: &[case(
            &[
                &["GOBLIN.LOCK", "{}", "t", "10000"],
                &["SET", "{{}}\0goblin:fence\0{}", "9000000000000000000"],
            ],
            &["GOBLIN.EXTEND", "{}", "t", "5000", "FENCE"],
            Error(FENCE_CLOCK_BEHIND),
            Nothing,
        )],
    },
    Row {
        situation: "`FENCE` on a key holding a `}` and no hash tag",
        cases: &[case(
            &[],
            &["GOBLIN.EXTEND", "{}}", "t", "5000", "FENCE"],
            Error(FENCE_NO_SLOT_TAG),
            Nothing,
        )],
    },
    Row {
        situation: "`milliseconds` not an integer",
        cases: &[case(
            &[],
            &["GOBLIN.EXTEND", "{}", "t", "x"],
            Error(NOT_INTEGER),
            Nothing,
        )],
    },
    Row {
        situation: "`milliseconds` <= 0",
        cases: &[Case {
            setup: &[&["GOBLIN.LOCK", "{}", "t", "10000"]],
            call: &["GOBLIN.EXTEND", "{}", "t", "{v}"],
            each: &["0", "-5"],
            reply: Error(GOBLIN_EXTEND_INVALID_EXPIRE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "an option other than `REPLACE` and `FENCE`, or one given twice",
        cases: &[
            case(
                &[],
                &["GOBLIN.EXTEND", "{}", "t", "5000", "KEEP"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.EXTEND", "{}", "t", "5000", "REPLACE", "x"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[&["GOBLIN.LOCK", "{}", "t", "10000"]],
                &["GOBLIN.EXTEND", "{}", "t", "5000", "REPLACE", "REPLACE"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[&["GOBLIN.LOCK", "{}", "t", "10000"]],
                &["GOBLIN.EXTEND", "{}", "t", "5000", "FENCE", "REPLACE", "FENCE"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a list, hash, sorted set, ...",
        cases: &[
            case(
                &[&["HSET", "{}", "f", "v"]],
                &["GOBLIN.EXTEND", "{}", "t", "5000"],
                Error(WRONGTYPE),
                Nothing,
            ),
            case(
                &[&["ZADD", "{}", "1", "t"]],
                &["GOBLIN.EXTEND", "{}", "", "5000"],
                Error(WRONGTYPE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(
            &[],
            &["GOBLIN.EXTEND", "{}", "t"],
            Error(GOBLIN_EXTEND_ARITY),
            Nothing,
        )],
    },
];

pub const GOBLIN_BZWINDOW_ROWS: &[Row] = &[
    Row {
        situation: "`member` holds a slot",
        cases: &[case(
            &[&["GOBLIN.BZWINDOW", "{}", "30", "1", "m", "1"]],
            &["GOBLIN.BZWINDOW", "{}", "30", "1", "m", "1"],
            Int(1),
            Armed {
                value: Members(&["m"]),
                ttl_ms: 30_000,
            },
        )],
    },
    Row {
        situation: "the window has room, nobody waiting",
        cases: &[case(
            &[&["GOBLIN.BZWINDOW", "{}", "30", "2", "a", "1"]],
            &["GOBLIN.BZWINDOW", "{}", "30", "2", "m", "1"],
            Int(1),
            Armed {
                value: Members(&["a", "m"]),
                ttl_ms: 30_000,
            },
        )],
    },
    Row {
        situation: "inside MULTI or a script, the window full",
        cases: &[case(
            &[&["GOBLIN.BZWINDOW", "{}", "30", "1", "a", "1"]],
            &[
                "EVAL",
                "return redis.call('GOBLIN.BZWINDOW', KEYS[1], 30, 1, 'm', 0)",
                "1",
                "{}",
            ],
            Null,
            Nothing,
        )],
    },
    Row {
        situation: "`limit` 0 or less, `member` holding no slot",
        cases: &[Case {
            setup: &[&["GOBLIN.ZWINDOW", "{}", "*", "30", "5", "a"]],
            call: &["GOBLIN.BZWINDOW", "{}", "30", "{v}", "m", "0"],
            each: &["0", "-1", "-9223372036854775808"],
            reply: Null,
            effect: Nothing,
        }],
    },
    Row {
        situation: "`window` 0 or less, the window full",
        cases: &[Case {
            // A member scored far ahead, on a caller's clock: inside any window, now.
            setup: &[&["GOBLIN.ZWINDOW", "{}", "1e12", "30", "1", "a"]],
            call: &["GOBLIN.BZWINDOW", "{}", "{v}", "1", "m", "0"],
            each: &["0", "-0", "-5"],
            reply: Null,
            effect: Nothing,
        }],
    },
    Row {
        situation: "`PERMITS n` above `limit`",
        cases: &[case(
            &[],
            &["GOBLIN.BZWINDOW", "{}", "30", "2", "m", "0", "PERMITS", "3"],
            Null,
            Nothing,
        )],
    },
    Row {
        situation: "`PERMITS n` above 10000",
        cases: &[case(
            &[],
            &[
                "GOBLIN.BZWINDOW",
                "{}",
                "30",
                "20000",
                "m",
                "0",
                "PERMITS",
                "10001",
            ],
            Error(TOO_MANY_PERMITS),
            Nothing,
        )],
    },
    Row {
        situation: "`PERMITS n`, the window has room for `n`",
        cases: &[case(
            &[],
            &["GOBLIN.BZWINDOW", "{}", "30", "3", "m", "1", "PERMITS", "2"],
            Int(1),
            Armed {
                value: Members(&["m", "m\u{0}1"]),
                ttl_ms: 30_000,
            },
        )],
    },
    Row {
        situation: "`SEPARATOR sep`, the window has room for `n` (1 without `PERMITS`)",
        cases: &[
            case(
                &[],
                &[
                    "GOBLIN.BZWINDOW",
                    "{}",
                    "30",
                    "3",
                    "m",
                    "1",
                    "SEPARATOR",
                    "_",
                    "PERMITS",
                    "2",
                ],
                Int(1),
                Armed {
                    value: Members(&["m_0", "m_1"]),
                    ttl_ms: 30_000,
                },
            ),
            case(
                &[],
                &[
                    "GOBLIN.BZWINDOW",
                    "{}",
                    "30",
                    "3",
                    "m",
                    "1",
                    "SEPARATOR",
                    "-",
                ],
                Int(1),
                Armed {
                    value: Members(&["m-0"]),
                    ttl_ms: 30_000,
                },
            ),
        ],
    },
    Row {
        situation: "`FENCE`, and the window has room or `member` holds a slot",
        cases: &[
            case(
                &[],
                &["GOBLIN.BZWINDOW", "{}", "30", "2", "m", "1", "FENCE"],
                Token,
                Armed {
                    value: Members(&["m"]),
                    ttl_ms: 30_000,
                },
            ),
            case(
                &[&["GOBLIN.ZWINDOW", "{}", "*", "10", "1", "m"]],
                &["GOBLIN.BZWINDOW", "{}", "30", "1", "m", "1", "FENCE"],
                Token,
                Armed {
                    value: Members(&["m"]),
                    ttl_ms: 30_000,
                },
            ),
        ],
    },
    Row {
        situation: "`FENCE` on a key holding a `}` and no hash tag",
        cases: &[case(
            &[],
            &["GOBLIN.BZWINDOW", "{}}", "30", "2", "m", "1", "FENCE"],
            Error(FENCE_NO_SLOT_TAG),
            Nothing,
        )],
    },
    Row {
        situation: "`window` not a finite number",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.BZWINDOW", "{}", "{v}", "1", "m", "1"],
            each: &["x", "nan", "inf"],
            reply: Error(NOT_FLOAT),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`limit` not an integer",
        cases: &[case(
            &[],
            &["GOBLIN.BZWINDOW", "{}", "30", "1.5", "m", "1"],
            Error(NOT_INTEGER),
            Nothing,
        )],
    },
    Row {
        situation: "`timeout` negative",
        cases: &[case(
            &[],
            &["GOBLIN.BZWINDOW", "{}", "30", "1", "m", "-1"],
            Error(TIMEOUT_NEGATIVE),
            Nothing,
        )],
    },
    Row {
        situation: "`timeout` not a number",
        cases: &[case(
            &[],
            &["GOBLIN.BZWINDOW", "{}", "30", "1", "m", "x"],
            Error(TIMEOUT_NOT_A_FLOAT),
            Nothing,
        )],
    },
    Row {
        situation: "key holds a string, hash, list, ...",
        cases: &[case(
            &[&["SET", "{}", "x"]],
            &["GOBLIN.BZWINDOW", "{}", "30", "1", "m", "1"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(
            &[],
            &["GOBLIN.BZWINDOW", "{}", "30", "1", "m"],
            Error(GOBLIN_BZWINDOW_ARITY),
            Nothing,
        )],
    },
];
