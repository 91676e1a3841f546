//! The readers-writer lock's commands: the rows of their pages' tables of situations, as tests
//! (see `table.rs`): what each call answers at once, a caller waiting in line (`&`) where a row
//! needs one. Waiting itself is proven in tests/rwlock.rs.

use super::super::*;
use Effect::*;
use Expect::{Error, Int, Null, Token};
use Value::{Members, Str};

pub const GOBLIN_RLOCK_PAGE: &str = "docs/commands/goblin.rlock.md";
pub const GOBLIN_WLOCK_PAGE: &str = "docs/commands/goblin.wlock.md";
pub const GOBLIN_BRLOCK_PAGE: &str = "docs/commands/goblin.brlock.md";
pub const GOBLIN_BWLOCK_PAGE: &str = "docs/commands/goblin.bwlock.md";
pub const GOBLIN_RWEXTEND_PAGE: &str = "docs/commands/goblin.rwextend.md";
pub const GOBLIN_RWUNLOCK_PAGE: &str = "docs/commands/goblin.rwunlock.md";
pub const GOBLIN_RWHELD_PAGE: &str = "docs/commands/goblin.rwheld.md";

const OK: Expect = Expect::Status("OK");

/// A key of the family's own token keys (`FENCE`): the key's latest, ahead of any clock.
const FENCE_AHEAD: &[&str] = &["SET", "{{}}\0goblin:fence\0{}", "9000000000000000000"];
/// Read leases that lapsed long ago, in a key that has not expired yet.
const LAPSED: &[&[&str]] = &[&["ZADD", "{}", "1000", "old"], &["PEXPIRE", "{}", "60000"]];
/// 2^53 ms: a lease that long ends after the latest end a score holds exactly.
const PAST_2_53: &str = "9007199254740992";

const fn reads(ttl_ms: i64, members: &'static [&'static str]) -> Effect {
    Armed {
        value: Members(members),
        ttl_ms,
    }
}

const fn writes(ttl_ms: i64) -> Effect {
    Armed {
        value: Str("t"),
        ttl_ms,
    }
}

pub const GOBLIN_RLOCK_ROWS: &[Row] = &[
    Row {
        situation: "key missing, nobody waiting",
        cases: &[
            case(&[], &["GOBLIN.RLOCK", "{}", "t", "30000"], OK, reads(30_000, &["t"])),
            // Any string is a token, the empty one too (as ZADD takes a member).
            case(&[], &["GOBLIN.RLOCK", "{}", "", "30000"], OK, reads(30_000, &[""])),
        ],
    },
    Row {
        situation: "key holds read leases, nobody waiting",
        cases: &[
            case(
                &[&["GOBLIN.RLOCK", "{}", "a", "60000"]],
                &["GOBLIN.RLOCK", "{}", "t", "30000"],
                OK,
                TtlKept {
                    value: Members(&["t", "a"]),
                },
            ),
            // The new lease ends last: the key's expiry moves with it.
            case(
                &[&["GOBLIN.RLOCK", "{}", "a", "1000"]],
                &["GOBLIN.RLOCK", "{}", "t", "30000"],
                OK,
                reads(30_000, &["a", "t"]),
            ),
        ],
    },
    Row {
        situation: "key holds read leases that have all lapsed, nobody waiting",
        cases: &[case(LAPSED, &["GOBLIN.RLOCK", "{}", "t", "30000"], OK, reads(30_000, &["t"]))],
    },
    Row {
        situation: "`token` reads the key",
        cases: &[
            case(
                &[&["GOBLIN.RLOCK", "{}", "t", "1000"]],
                &["GOBLIN.RLOCK", "{}", "t", "30000"],
                OK,
                reads(30_000, &["t"]),
            ),
            // A writer waits for it: the renewal does not wait behind the writer.
            case(
                &[
                    &["GOBLIN.RLOCK", "{}", "t", "1000"],
                    &["&", "GOBLIN.BWLOCK", "{}", "w", "30000", "0"],
                ],
                &["GOBLIN.RLOCK", "{}", "t", "30000"],
                OK,
                reads(30_000, &["t"]),
            ),
        ],
    },
    Row {
        situation: "`token` writes the key",
        cases: &[
            case(
                &[&["GOBLIN.WLOCK", "{}", "t", "1000"]],
                &["GOBLIN.RLOCK", "{}", "t", "30000"],
                OK,
                reads(30_000, &["t"]),
            ),
            // A reader waits for the writer: once demoted, it reads beside the reader.
            case(
                &[
                    &["GOBLIN.WLOCK", "{}", "a", "60000"],
                    &["&", "GOBLIN.BRLOCK", "{}", "b", "30000", "0"],
                ],
                &["GOBLIN.RLOCK", "{}", "a", "30000"],
                OK,
                reads(30_000, &["a", "b"]),
            ),
        ],
    },
    Row {
        situation: "another token writes the key, or callers wait in line",
        cases: &[
            case(
                &[&["GOBLIN.WLOCK", "{}", "a", "30000"]],
                &["GOBLIN.RLOCK", "{}", "t", "30000"],
                Null,
                Nothing,
            ),
            case(&[&["SET", "{}", "a"]], &["GOBLIN.RLOCK", "{}", "t", "30000"], Null, Nothing),
            case(
                &[
                    &["GOBLIN.RLOCK", "{}", "a", "30000"],
                    &["&", "GOBLIN.BWLOCK", "{}", "w", "30000", "0"],
                ],
                &["GOBLIN.RLOCK", "{}", "t", "30000"],
                Null,
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`FENCE`, the lease granted",
        cases: &[
            case(
                &[],
                &["GOBLIN.RLOCK", "{}", "t", "30000", "FENCE"],
                Token,
                reads(30_000, &["t"]),
            ),
            case(
                &[&["GOBLIN.RLOCK", "{}", "t", "1000", "FENCE"]],
                &["GOBLIN.RLOCK", "{}", "t", "30000", "FENCE"],
                Token,
                reads(30_000, &["t"]),
            ),
        ],
    },
    Row {
        situation: "`FENCE`, a token kept for the key ahead of the server's clock by more than `fence-margin-ms`",
        cases: &[case(
            &[FENCE_AHEAD],
            &["GOBLIN.RLOCK", "{}", "t", "30000", "FENCE"],
            Error(FENCE_CLOCK_BEHIND),
            Nothing,
        )],
    },
    Row {
        situation: "`FENCE` on a key holding a `}` and no hash tag",
        cases: &[case(
            &[],
            &["GOBLIN.RLOCK", "{}}", "t", "30000", "FENCE"],
            Error(FENCE_NO_SLOT_TAG),
            Nothing,
        )],
    },
    Row {
        situation: "`milliseconds` not an integer",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.RLOCK", "{}", "t", "{v}"],
            each: &["x", "1.5", ""],
            reply: Error(NOT_INTEGER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`milliseconds` <= 0, or a lease ending after 2^53 ms",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.RLOCK", "{}", "t", "{v}"],
            each: &["0", "-1", PAST_2_53, "9223372036854775807"],
            reply: Error(GOBLIN_RLOCK_INVALID_EXPIRE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "an option other than `FENCE`, or `FENCE` given twice",
        cases: &[
            case(&[], &["GOBLIN.RLOCK", "{}", "t", "1", "x"], Error(SYNTAX), Nothing),
            case(
                &[],
                &["GOBLIN.RLOCK", "{}", "t", "1", "FENCE", "FENCE"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a list, hash, ...",
        cases: &[case(
            &[&["RPUSH", "{}", "a"]],
            &["GOBLIN.RLOCK", "{}", "t", "1000"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(&[], &["GOBLIN.RLOCK", "{}", "t"], Error(GOBLIN_RLOCK_ARITY), Nothing)],
    },
];

pub const GOBLIN_WLOCK_ROWS: &[Row] = &[
    Row {
        situation: "key missing, nobody waiting",
        cases: &[case(&[], &["GOBLIN.WLOCK", "{}", "t", "30000"], OK, writes(30_000))],
    },
    Row {
        situation: "key holds read leases that have all lapsed, nobody waiting",
        cases: &[case(LAPSED, &["GOBLIN.WLOCK", "{}", "t", "30000"], OK, writes(30_000))],
    },
    Row {
        situation: "`token` writes the key",
        cases: &[
            case(
                &[&["GOBLIN.WLOCK", "{}", "t", "1000"]],
                &["GOBLIN.WLOCK", "{}", "t", "30000"],
                OK,
                writes(30_000),
            ),
            case(
                &[
                    &["GOBLIN.WLOCK", "{}", "t", "1000"],
                    &["&", "GOBLIN.BRLOCK", "{}", "r", "30000", "0"],
                ],
                &["GOBLIN.WLOCK", "{}", "t", "30000"],
                OK,
                writes(30_000),
            ),
        ],
    },
    Row {
        situation: "`token` reads the key, and no other lease runs",
        cases: &[
            case(
                &[&["GOBLIN.RLOCK", "{}", "t", "1000"]],
                &["GOBLIN.WLOCK", "{}", "t", "30000"],
                OK,
                writes(30_000),
            ),
            case(
                &[
                    &["ZADD", "{}", "1000", "old"],
                    &["PEXPIRE", "{}", "60000"],
                    &["GOBLIN.RLOCK", "{}", "t", "1000"],
                ],
                &["GOBLIN.WLOCK", "{}", "t", "30000"],
                OK,
                writes(30_000),
            ),
            // A writer waits for it to leave: it is promoted before the writer.
            case(
                &[
                    &["GOBLIN.RLOCK", "{}", "t", "60000"],
                    &["&", "GOBLIN.BWLOCK", "{}", "w", "30000", "0"],
                ],
                &["GOBLIN.WLOCK", "{}", "t", "30000"],
                OK,
                writes(30_000),
            ),
        ],
    },
    Row {
        situation: "others read the key, beside `token` or not, another token writes it, or callers wait in line",
        cases: &[
            case(
                &[&["GOBLIN.RLOCK", "{}", "a", "30000"]],
                &["GOBLIN.WLOCK", "{}", "t", "30000"],
                Null,
                Nothing,
            ),
            case(
                &[&["GOBLIN.RLOCK", "{}", "a", "30000"], &["GOBLIN.RLOCK", "{}", "t", "30000"]],
                &["GOBLIN.WLOCK", "{}", "t", "30000"],
                Null,
                Nothing,
            ),
            case(
                &[&["GOBLIN.WLOCK", "{}", "a", "30000"]],
                &["GOBLIN.WLOCK", "{}", "t", "30000"],
                Null,
                Nothing,
            ),
            case(
                &[
                    &["GOBLIN.RLOCK", "{}", "a", "30000"],
                    &["&", "GOBLIN.BWLOCK", "{}", "w", "30000", "0"],
                ],
                &["GOBLIN.WLOCK", "{}", "t", "30000"],
                Null,
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`FENCE`, the lease granted",
        cases: &[
            case(&[], &["GOBLIN.WLOCK", "{}", "t", "30000", "FENCE"], Token, writes(30_000)),
            case(
                &[&["GOBLIN.RLOCK", "{}", "t", "1000", "FENCE"]],
                &["GOBLIN.WLOCK", "{}", "t", "30000", "FENCE"],
                Token,
                writes(30_000),
            ),
        ],
    },
    Row {
        situation: "`FENCE`, a token kept for the key ahead of the server's clock by more than `fence-margin-ms`",
        cases: &[case(
            &[FENCE_AHEAD],
            &["GOBLIN.WLOCK", "{}", "t", "30000", "FENCE"],
            Error(FENCE_CLOCK_BEHIND),
            Nothing,
        )],
    },
    Row {
        situation: "`FENCE` on a key holding a `}` and no hash tag",
        cases: &[case(
            &[],
            &["GOBLIN.WLOCK", "{}}", "t", "30000", "FENCE"],
            Error(FENCE_NO_SLOT_TAG),
            Nothing,
        )],
    },
    Row {
        situation: "`milliseconds` not an integer",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.WLOCK", "{}", "t", "{v}"],
            each: &["x", "1.5", ""],
            reply: Error(NOT_INTEGER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`milliseconds` <= 0, or a lease ending after 2^53 ms",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.WLOCK", "{}", "t", "{v}"],
            each: &["0", "-1", PAST_2_53],
            reply: Error(GOBLIN_WLOCK_INVALID_EXPIRE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "an option other than `FENCE`, or `FENCE` given twice",
        cases: &[
            case(&[], &["GOBLIN.WLOCK", "{}", "t", "1", "x"], Error(SYNTAX), Nothing),
            case(
                &[],
                &["GOBLIN.WLOCK", "{}", "t", "1", "FENCE", "FENCE"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a list, hash, ...",
        cases: &[case(
            &[&["HSET", "{}", "f", "v"]],
            &["GOBLIN.WLOCK", "{}", "t", "1000"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(&[], &["GOBLIN.WLOCK", "{}", "t"], Error(GOBLIN_WLOCK_ARITY), Nothing)],
    },
];

pub const GOBLIN_BRLOCK_ROWS: &[Row] = &[
    Row {
        situation: "key missing, nobody waiting",
        cases: &[case(
            &[],
            &["GOBLIN.BRLOCK", "{}", "t", "30000", "1"],
            OK,
            reads(30_000, &["t"]),
        )],
    },
    Row {
        situation: "key holds read leases, nobody waiting",
        cases: &[case(
            &[&["GOBLIN.RLOCK", "{}", "a", "60000"]],
            &["GOBLIN.BRLOCK", "{}", "t", "30000", "1"],
            OK,
            TtlKept {
                value: Members(&["t", "a"]),
            },
        )],
    },
    Row {
        situation: "`token` reads or writes the key",
        cases: &[
            case(
                &[&["GOBLIN.RLOCK", "{}", "t", "1000"]],
                &["GOBLIN.BRLOCK", "{}", "t", "30000", "1"],
                OK,
                reads(30_000, &["t"]),
            ),
            case(
                &[&["GOBLIN.WLOCK", "{}", "t", "1000"]],
                &["GOBLIN.BRLOCK", "{}", "t", "30000", "1"],
                OK,
                reads(30_000, &["t"]),
            ),
        ],
    },
    Row {
        situation: "`FENCE`, the lease granted",
        cases: &[case(
            &[],
            &["GOBLIN.BRLOCK", "{}", "t", "30000", "1", "FENCE"],
            Token,
            reads(30_000, &["t"]),
        )],
    },
    Row {
        situation: "inside MULTI or a script, another token writing the key",
        cases: &[case(
            &[&["GOBLIN.WLOCK", "{}", "a", "30000"]],
            &[
                "EVAL",
                "return redis.call('GOBLIN.BRLOCK', KEYS[1], 't', 1000, 0)",
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
            &["GOBLIN.BRLOCK", "{}", "t", "1000", "-1"],
            Error(TIMEOUT_NEGATIVE),
            Nothing,
        )],
    },
    Row {
        situation: "`timeout` not a number",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.BRLOCK", "{}", "t", "1000", "{v}"],
            each: &["x", "nan", ""],
            reply: Error(TIMEOUT_NOT_A_FLOAT),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`timeout` too large for the clock",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.BRLOCK", "{}", "t", "1000", "{v}"],
            each: &["1e300", "inf", "9223372036854775"],
            reply: Error(TIMEOUT_OUT_OF_RANGE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`milliseconds` <= 0",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.BRLOCK", "{}", "t", "{v}", "1"],
            each: &["0", "-1"],
            reply: Error(GOBLIN_BRLOCK_INVALID_EXPIRE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "an option other than `FENCE`, or `FENCE` given twice",
        cases: &[
            case(
                &[],
                &["GOBLIN.BRLOCK", "{}", "t", "1", "1", "x"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.BRLOCK", "{}", "t", "1", "1", "FENCE", "FENCE"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a list, hash, ...",
        cases: &[case(
            &[&["RPUSH", "{}", "a"]],
            &["GOBLIN.BRLOCK", "{}", "t", "1000", "0"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(
            &[],
            &["GOBLIN.BRLOCK", "{}", "t", "1000"],
            Error(GOBLIN_BRLOCK_ARITY),
            Nothing,
        )],
    },
];

pub const GOBLIN_BWLOCK_ROWS: &[Row] = &[
    Row {
        situation: "key missing, nobody waiting",
        cases: &[case(
            &[],
            &["GOBLIN.BWLOCK", "{}", "t", "30000", "1"],
            OK,
            writes(30_000),
        )],
    },
    Row {
        situation: "`token` writes the key, or reads it and no other lease runs",
        cases: &[
            case(
                &[&["GOBLIN.WLOCK", "{}", "t", "1000"]],
                &["GOBLIN.BWLOCK", "{}", "t", "30000", "1"],
                OK,
                writes(30_000),
            ),
            case(
                &[&["GOBLIN.RLOCK", "{}", "t", "1000"]],
                &["GOBLIN.BWLOCK", "{}", "t", "30000", "1"],
                OK,
                writes(30_000),
            ),
        ],
    },
    Row {
        situation: "`token` reads the key beside others, and another of them waits to be promoted",
        cases: &[case(
            &[
                &["GOBLIN.RLOCK", "{}", "a", "60000"],
                &["GOBLIN.RLOCK", "{}", "t", "60000"],
                &["&", "GOBLIN.BWLOCK", "{}", "a", "30000", "0"],
            ],
            &["GOBLIN.BWLOCK", "{}", "t", "30000", "0"],
            Error(RW_DEADLOCK),
            Nothing,
        )],
    },
    Row {
        situation: "`FENCE`, the lease granted",
        cases: &[case(
            &[],
            &["GOBLIN.BWLOCK", "{}", "t", "30000", "1", "FENCE"],
            Token,
            writes(30_000),
        )],
    },
    Row {
        situation: "inside MULTI or a script, the key held by others",
        cases: &[case(
            &[&["GOBLIN.RLOCK", "{}", "a", "30000"]],
            &[
                "EVAL",
                "return redis.call('GOBLIN.BWLOCK', KEYS[1], 't', 1000, 0)",
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
            &["GOBLIN.BWLOCK", "{}", "t", "1000", "-1"],
            Error(TIMEOUT_NEGATIVE),
            Nothing,
        )],
    },
    Row {
        situation: "`timeout` not a number",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.BWLOCK", "{}", "t", "1000", "{v}"],
            each: &["x", "nan", ""],
            reply: Error(TIMEOUT_NOT_A_FLOAT),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`timeout` too large for the clock",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.BWLOCK", "{}", "t", "1000", "{v}"],
            each: &["1e300", "inf", "9223372036854775"],
            reply: Error(TIMEOUT_OUT_OF_RANGE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`milliseconds` <= 0",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.BWLOCK", "{}", "t", "{v}", "1"],
            each: &["0", "-1"],
            reply: Error(GOBLIN_BWLOCK_INVALID_EXPIRE),
            effect: Nothing,
        }],
    },
    Row {
        situation: "an option other than `FENCE`, or `FENCE` given twice",
        cases: &[
            case(
                &[],
                &["GOBLIN.BWLOCK", "{}", "t", "1", "1", "x"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.BWLOCK", "{}", "t", "1", "1", "FENCE", "FENCE"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a list, hash, ...",
        cases: &[case(
            &[&["SADD", "{}", "a"]],
            &["GOBLIN.BWLOCK", "{}", "t", "1000", "0"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(
            &[],
            &["GOBLIN.BWLOCK", "{}", "t", "1000"],
            Error(GOBLIN_BWLOCK_ARITY),
            Nothing,
        )],
    },
];

pub const GOBLIN_RWEXTEND_ROWS: &[Row] = &[
    Row {
        situation: "`token` writes the key",
        cases: &[case(
            &[&["GOBLIN.WLOCK", "{}", "t", "10000"]],
            &["GOBLIN.RWEXTEND", "{}", "t", "5000"],
            Int(1),
            ExtendedBy {
                value: Str("t"),
                by_ms: 5000,
            },
        )],
    },
    Row {
        situation: "`token` reads the key",
        cases: &[
            case(
                &[&["GOBLIN.RLOCK", "{}", "t", "10000"]],
                &["GOBLIN.RWEXTEND", "{}", "t", "5000"],
                Int(1),
                ExtendedBy {
                    value: Members(&["t"]),
                    by_ms: 5000,
                },
            ),
            // Its lease grows past another's: the key expires with it now.
            case(
                &[&["GOBLIN.RLOCK", "{}", "t", "10000"], &["GOBLIN.RLOCK", "{}", "a", "12000"]],
                &["GOBLIN.RWEXTEND", "{}", "t", "30000", "REPLACE"],
                Int(1),
                reads(30_000, &["a", "t"]),
            ),
        ],
    },
    Row {
        situation: "the same, with `REPLACE`",
        cases: &[
            case(
                &[&["GOBLIN.WLOCK", "{}", "t", "10000"]],
                &["GOBLIN.RWEXTEND", "{}", "t", "30000", "REPLACE"],
                Int(1),
                writes(30_000),
            ),
            case(
                &[&["GOBLIN.RLOCK", "{}", "t", "60000"]],
                &["GOBLIN.RWEXTEND", "{}", "t", "30000", "replace"],
                Int(1),
                reads(30_000, &["t"]),
            ),
        ],
    },
    Row {
        situation: "`token` holds no lease that runs now",
        cases: &[
            case(&[], &["GOBLIN.RWEXTEND", "{}", "t", "5000"], Int(0), Nothing),
            case(
                &[&["GOBLIN.WLOCK", "{}", "a", "10000"]],
                &["GOBLIN.RWEXTEND", "{}", "t", "5000"],
                Int(0),
                Nothing,
            ),
            case(
                &[&["GOBLIN.RLOCK", "{}", "a", "10000"]],
                &["GOBLIN.RWEXTEND", "{}", "t", "5000"],
                Int(0),
                Nothing,
            ),
            case(
                &[&["ZADD", "{}", "1000", "t"], &["PEXPIRE", "{}", "60000"]],
                &["GOBLIN.RWEXTEND", "{}", "t", "5000"],
                Int(0),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`token` writes the key without a TTL (a lock taken without a lease)",
        cases: &[case(
            &[&["GOBLIN.LOCK", "{}", "t", "0"]],
            &["GOBLIN.RWEXTEND", "{}", "t", "5000"],
            Int(0),
            Nothing,
        )],
    },
    Row {
        situation: "`FENCE`, `token` holds a lease",
        cases: &[
            case(
                &[&["GOBLIN.WLOCK", "{}", "t", "10000"]],
                &["GOBLIN.RWEXTEND", "{}", "t", "5000", "FENCE"],
                Token,
                ExtendedBy {
                    value: Str("t"),
                    by_ms: 5000,
                },
            ),
            case(
                &[&["GOBLIN.RLOCK", "{}", "t", "10000", "FENCE"]],
                &["GOBLIN.RWEXTEND", "{}", "t", "30000", "FENCE", "REPLACE"],
                Token,
                reads(30_000, &["t"]),
            ),
        ],
    },
    Row {
        situation: "`FENCE`, a token kept for the key ahead of the server's clock by more than `fence-margin-ms`",
        cases: &[case(
            &[&["GOBLIN.WLOCK", "{}", "t", "10000"], FENCE_AHEAD],
            &["GOBLIN.RWEXTEND", "{}", "t", "5000", "FENCE"],
            Error(FENCE_CLOCK_BEHIND),
            Nothing,
        )],
    },
    Row {
        situation: "`FENCE` on a key holding a `}` and no hash tag",
        cases: &[case(
            &[],
            &["GOBLIN.RWEXTEND", "{}}", "t", "5000", "FENCE"],
            Error(FENCE_NO_SLOT_TAG),
            Nothing,
        )],
    },
    Row {
        situation: "`milliseconds` not an integer",
        cases: &[case(&[], &["GOBLIN.RWEXTEND", "{}", "t", "x"], Error(NOT_INTEGER), Nothing)],
    },
    Row {
        situation: "`milliseconds` <= 0, or a lease ending after 2^53 ms",
        cases: &[
            Case {
                setup: &[],
                call: &["GOBLIN.RWEXTEND", "{}", "t", "{v}"],
                each: &["0", "-1"],
                reply: Error(GOBLIN_RWEXTEND_INVALID_EXPIRE),
                effect: Nothing,
            },
            case(
                &[&["GOBLIN.RLOCK", "{}", "t", "10000"]],
                &["GOBLIN.RWEXTEND", "{}", "t", PAST_2_53],
                Error(GOBLIN_RWEXTEND_INVALID_EXPIRE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "an option other than `REPLACE` and `FENCE`, or one given twice",
        cases: &[
            case(&[], &["GOBLIN.RWEXTEND", "{}", "t", "5000", "KEEP"], Error(SYNTAX), Nothing),
            case(
                &[],
                &["GOBLIN.RWEXTEND", "{}", "t", "5000", "REPLACE", "REPLACE"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.RWEXTEND", "{}", "t", "5000", "FENCE", "REPLACE", "FENCE"],
                Error(SYNTAX),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "key holds a list, hash, ...",
        cases: &[case(
            &[&["RPUSH", "{}", "a"]],
            &["GOBLIN.RWEXTEND", "{}", "t", "5000"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(
            &[],
            &["GOBLIN.RWEXTEND", "{}", "t"],
            Error(GOBLIN_RWEXTEND_ARITY),
            Nothing,
        )],
    },
];

pub const GOBLIN_RWUNLOCK_ROWS: &[Row] = &[
    Row {
        situation: "`token` writes the key",
        cases: &[case(
            &[&["GOBLIN.WLOCK", "{}", "t", "30000"]],
            &["GOBLIN.RWUNLOCK", "{}", "t"],
            Int(1),
            Deleted,
        )],
    },
    Row {
        situation: "`token` reads the key, the only reader",
        cases: &[case(
            &[&["GOBLIN.RLOCK", "{}", "t", "30000"]],
            &["GOBLIN.RWUNLOCK", "{}", "t"],
            Int(1),
            Deleted,
        )],
    },
    Row {
        situation: "`token` reads the key beside others",
        cases: &[case(
            &[
                &["GOBLIN.RLOCK", "{}", "a", "60000"],
                &["GOBLIN.RLOCK", "{}", "t", "30000"],
            ],
            &["GOBLIN.RWUNLOCK", "{}", "t"],
            Int(1),
            TtlKept {
                value: Members(&["a"]),
            },
        )],
    },
    Row {
        situation: "`token` holds no lease that runs now",
        cases: &[
            case(&[], &["GOBLIN.RWUNLOCK", "{}", "t"], Int(0), Nothing),
            case(
                &[&["GOBLIN.WLOCK", "{}", "a", "30000"]],
                &["GOBLIN.RWUNLOCK", "{}", "t"],
                Int(0),
                Nothing,
            ),
            case(
                &[&["GOBLIN.RLOCK", "{}", "a", "30000"]],
                &["GOBLIN.RWUNLOCK", "{}", "t"],
                Int(0),
                Nothing,
            ),
            // Its lease lapsed: it goes, with the others that lapsed, and nothing is released.
            case(
                &[&[
                    "ZADD",
                    "{}",
                    "1000",
                    "t",
                    "2000",
                    "old",
                    "99999999999999",
                    "a",
                ]],
                &["GOBLIN.RWUNLOCK", "{}", "t"],
                Int(0),
                TtlKept {
                    value: Members(&["a"]),
                },
            ),
        ],
    },
    Row {
        situation: "key holds a list, hash, ...",
        cases: &[case(
            &[&["RPUSH", "{}", "a"]],
            &["GOBLIN.RWUNLOCK", "{}", "t"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(
            &[],
            &["GOBLIN.RWUNLOCK", "{}"],
            Error(GOBLIN_RWUNLOCK_ARITY),
            Nothing,
        )],
    },
];

pub const GOBLIN_RWHELD_ROWS: &[Row] = &[
    Row {
        situation: "`token` writes the key",
        cases: &[
            case(
                &[&["GOBLIN.WLOCK", "{}", "t", "30000"]],
                &["GOBLIN.RWHELD", "{}", "t"],
                Expect::Status("write"),
                Nothing,
            ),
            case(
                &[&["GOBLIN.LOCK", "{}", "t", "0"]],
                &["GOBLIN.RWHELD", "{}", "t"],
                Expect::Status("write"),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`token` reads the key",
        cases: &[case(
            &[
                &["GOBLIN.RLOCK", "{}", "a", "30000"],
                &["GOBLIN.RLOCK", "{}", "t", "30000"],
            ],
            &["GOBLIN.RWHELD", "{}", "t"],
            Expect::Status("read"),
            Nothing,
        )],
    },
    Row {
        situation: "`token` holds no lease that runs now, or the key is missing",
        cases: &[
            case(&[], &["GOBLIN.RWHELD", "{}", "t"], Null, Nothing),
            case(
                &[&["GOBLIN.WLOCK", "{}", "a", "30000"]],
                &["GOBLIN.RWHELD", "{}", "t"],
                Null,
                Nothing,
            ),
            case(
                &[&["GOBLIN.RLOCK", "{}", "a", "30000"]],
                &["GOBLIN.RWHELD", "{}", "t"],
                Null,
                Nothing,
            ),
            case(LAPSED, &["GOBLIN.RWHELD", "{}", "old"], Null, Nothing),
        ],
    },
    Row {
        situation: "key holds a list, hash, ...",
        cases: &[case(
            &[&["RPUSH", "{}", "a"]],
            &["GOBLIN.RWHELD", "{}", "t"],
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(
            &[],
            &["GOBLIN.RWHELD", "{}"],
            Error(GOBLIN_RWHELD_ARITY),
            Nothing,
        )],
    },
];
