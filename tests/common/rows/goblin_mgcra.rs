//! GOBLIN.MGCRA: the rows of `docs/commands/goblin.mgcra.md`'s table of situations, as tests
//! (see `table.rs`). `{}` is the first policy's key, whose effect each case states; `{}:b` is a
//! second key of the same case. Nothing written means no key at all (the dirty counter).

use super::super::*;
use Effect::*;
use Expect::{Array, Error, Int, Ints};

pub const GOBLIN_MGCRA_PAGE: &str = "docs/commands/goblin.mgcra.md";

/// Two policies, exact to the second as GOBLIN.GCRA's rows are (emission intervals of 60 s and
/// 10 s, and every case within a second): `{}` 6 at once then 1 a minute, `{}:b` 2 at once
/// then 1 every 10 s.
const TWO: [&str; 10] = [
    "GOBLIN.MGCRA",
    "2",
    "{}",
    "5",
    "1",
    "60",
    "{}:b",
    "1",
    "1",
    "10",
];

/// `{}:b`'s one token taken by GOBLIN.GCRA (capacity 1, 10 s back).
const B_EMPTY: &[&[&str]] = &[&["GOBLIN.GCRA", "{}:b", "0", "1", "10"]];

pub const GOBLIN_MGCRA_ROWS: &[Row] = &[
    Row {
        situation: "every policy allows",
        cases: &[
            case(
                &[],
                &TWO,
                Array(&[
                    Int(0),
                    Int(-1),
                    Ints(&[0, 6, 5, -1, 60]),
                    Ints(&[0, 2, 1, -1, 10]),
                ]),
                Tat {
                    ahead_us: 60_000_000,
                },
            ),
            // A request costing two, in every policy.
            case(
                &[],
                &[
                    "GOBLIN.MGCRA",
                    "2",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "{}:b",
                    "1",
                    "1",
                    "10",
                    "TOKENS",
                    "2",
                ],
                Array(&[
                    Int(0),
                    Int(-1),
                    Ints(&[0, 6, 4, -1, 120]),
                    Ints(&[0, 2, 0, -1, 20]),
                ]),
                Tat {
                    ahead_us: 120_000_000,
                },
            ),
        ],
    },
    Row {
        situation: "one policy refuses",
        cases: &[case(
            B_EMPTY,
            &[
                "GOBLIN.MGCRA",
                "2",
                "{}",
                "5",
                "1",
                "60",
                "{}:b",
                "0",
                "1",
                "10",
            ],
            Array(&[
                Int(1),
                Int(10),
                Ints(&[0, 6, 6, -1, 0]),
                Ints(&[1, 1, 0, 10, 10]),
            ]),
            Nothing,
        )],
    },
    Row {
        situation: "every policy refuses",
        cases: &[case(
            &[
                &["GOBLIN.GCRA", "{}", "0", "1", "60"],
                &["GOBLIN.GCRA", "{}:b", "0", "1", "10"],
            ],
            &[
                "GOBLIN.MGCRA",
                "2",
                "{}",
                "0",
                "1",
                "60",
                "{}:b",
                "0",
                "1",
                "10",
            ],
            Array(&[
                Int(1),
                Int(60),
                Ints(&[1, 1, 0, 60, 60]),
                Ints(&[1, 1, 0, 10, 10]),
            ]),
            Nothing,
        )],
    },
    Row {
        situation: "costs more than a refusing policy's whole quota",
        cases: &[case(
            &[],
            &[
                "GOBLIN.MGCRA",
                "2",
                "{}",
                "5",
                "1",
                "60",
                "{}:b",
                "1",
                "1",
                "10",
                "TOKENS",
                "3",
            ],
            Array(&[
                Int(1),
                Int(-1),
                Ints(&[0, 6, 6, -1, 0]),
                Ints(&[1, 2, 2, -1, 0]),
            ]),
            Nothing,
        )],
    },
    Row {
        situation: "`PEEK`",
        cases: &[
            case(
                &[],
                &[
                    "GOBLIN.MGCRA",
                    "2",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "{}:b",
                    "1",
                    "1",
                    "10",
                    "PEEK",
                ],
                Array(&[
                    Int(0),
                    Int(-1),
                    Ints(&[0, 6, 5, -1, 60]),
                    Ints(&[0, 2, 1, -1, 10]),
                ]),
                Nothing,
            ),
            // A refusal peeked at is the refusal.
            case(
                B_EMPTY,
                &[
                    "GOBLIN.MGCRA",
                    "2",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "{}:b",
                    "0",
                    "1",
                    "10",
                    "peek",
                ],
                Array(&[
                    Int(1),
                    Int(10),
                    Ints(&[0, 6, 6, -1, 0]),
                    Ints(&[1, 1, 0, 10, 10]),
                ]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`TOKENS 0 PEEK`",
        cases: &[
            case(
                &[&["GOBLIN.GCRA", "{}", "5", "1", "60"]],
                &[
                    "GOBLIN.MGCRA",
                    "1",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "TOKENS",
                    "0",
                    "PEEK",
                ],
                Array(&[Int(0), Int(-1), Ints(&[0, 6, 5, -1, 60])]),
                Nothing,
            ),
            // The options in any order.
            case(
                &[&["GOBLIN.GCRA", "{}", "5", "1", "60"]],
                &[
                    "GOBLIN.MGCRA",
                    "1",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "PEEK",
                    "TOKENS",
                    "0",
                ],
                Array(&[Int(0), Int(-1), Ints(&[0, 6, 5, -1, 60])]),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`REFUND`, the key holds a TAT",
        cases: &[
            // 3 taken, 2 given back: the TAT one interval ahead; then a peek at cost 1.
            case(
                &[&["GOBLIN.GCRA", "{}", "5", "1", "60", "TOKENS", "3"]],
                &[
                    "GOBLIN.MGCRA",
                    "1",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "TOKENS",
                    "2",
                    "REFUND",
                ],
                Array(&[Int(0), Int(-1), Ints(&[0, 6, 4, -1, 120])]),
                Tat {
                    ahead_us: 60_000_000,
                },
            ),
            // More back than was taken: a full bucket, and never more.
            case(
                &[&["GOBLIN.GCRA", "{}", "5", "1", "60"]],
                &[
                    "GOBLIN.MGCRA",
                    "1",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "TOKENS",
                    "5",
                    "REFUND",
                ],
                Array(&[Int(0), Int(-1), Ints(&[0, 6, 5, -1, 60])]),
                Deleted,
            ),
        ],
    },
    Row {
        situation: "`REFUND` on a missing key",
        cases: &[case(
            &[],
            &["GOBLIN.MGCRA", "1", "{}", "5", "1", "60", "REFUND"],
            Array(&[Int(0), Int(-1), Ints(&[0, 6, 5, -1, 60])]),
            Nothing,
        )],
    },
    Row {
        situation: "a key shared by two policies",
        cases: &[case(
            &[],
            &[
                "GOBLIN.MGCRA",
                "2",
                "{}",
                "5",
                "1",
                "60",
                "{}",
                "5",
                "1",
                "60",
            ],
            Array(&[
                Int(0),
                Int(-1),
                Ints(&[0, 6, 5, -1, 60]),
                Ints(&[0, 6, 4, -1, 120]),
            ]),
            Tat {
                ahead_us: 120_000_000,
            },
        )],
    },
    Row {
        situation: "`numpolicies` not an integer",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.MGCRA", "{v}", "{}", "5", "1", "60"],
            each: &["x", "1.5", "", "99999999999999999999"],
            reply: Error(NOT_INTEGER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`numpolicies` < 1",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.MGCRA", "{v}", "{}", "5", "1", "60"],
            each: &["0", "-1"],
            reply: Error(MGCRA_NUMPOLICIES),
            effect: Nothing,
        }],
    },
    Row {
        situation: "fewer than 4 arguments for each policy",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.MGCRA", "{v}", "{}", "5", "1", "60", "{}:b", "1"],
            each: &["2", "3", "9223372036854775807"],
            reply: Error(SYNTAX),
            effect: Nothing,
        }],
    },
    Row {
        situation: "a policy's argument out of range",
        cases: &[
            // The second policy's, so that the first is proven untouched.
            case(
                &[],
                &[
                    "GOBLIN.MGCRA",
                    "2",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "{}:b",
                    "-1",
                    "1",
                    "10",
                ],
                Error(GCRA_MUST_BE_POSITIVE),
                Nothing,
            ),
            case(
                &[],
                &[
                    "GOBLIN.MGCRA",
                    "2",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "{}:b",
                    "1",
                    "0",
                    "10",
                ],
                Error(GCRA_AT_LEAST_ONE),
                Nothing,
            ),
            case(
                &[],
                &[
                    "GOBLIN.MGCRA",
                    "2",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "{}:b",
                    "1",
                    "x",
                    "10",
                ],
                Error(NOT_INTEGER),
                Nothing,
            ),
            case(
                &[],
                &[
                    "GOBLIN.MGCRA",
                    "2",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "{}:b",
                    "1",
                    "1",
                    "abc",
                ],
                Error(NOT_FLOAT),
                Nothing,
            ),
            Case {
                setup: &[],
                call: &[
                    "GOBLIN.MGCRA",
                    "2",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "{}:b",
                    "1",
                    "1",
                    "{v}",
                ],
                each: &["0", "-1", "1e12"],
                reply: Error(GCRA_PERIOD_RANGE),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "`TOKENS` without a value",
        cases: &[case(
            &[],
            &["GOBLIN.MGCRA", "1", "{}", "5", "1", "60", "PEEK", "TOKENS"],
            Error(GCRA_MISSING_TOKENS),
            Nothing,
        )],
    },
    Row {
        situation: "`n` not an integer",
        cases: &[Case {
            setup: &[],
            call: &["GOBLIN.MGCRA", "1", "{}", "5", "1", "60", "TOKENS", "{v}"],
            each: &["x", "1.5", ""],
            reply: Error(NOT_INTEGER),
            effect: Nothing,
        }],
    },
    Row {
        situation: "`n` < 1, or 0 without `PEEK`",
        cases: &[
            Case {
                setup: &[&["GOBLIN.GCRA", "{}", "5", "1", "60"]],
                call: &["GOBLIN.MGCRA", "1", "{}", "5", "1", "60", "TOKENS", "{v}"],
                each: &["0", "-1"],
                reply: Error(GCRA_AT_LEAST_ONE),
                effect: Nothing,
            },
            case(
                &[&["GOBLIN.GCRA", "{}", "5", "1", "60"]],
                &[
                    "GOBLIN.MGCRA",
                    "1",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "TOKENS",
                    "0",
                    "REFUND",
                ],
                Error(GCRA_AT_LEAST_ONE),
                Nothing,
            ),
            case(
                &[],
                &[
                    "GOBLIN.MGCRA",
                    "1",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "TOKENS",
                    "-1",
                    "PEEK",
                ],
                Error(GCRA_AT_LEAST_ONE),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "`PEEK` and `REFUND` together, an option given twice, or another word",
        cases: &[
            case(
                &[],
                &["GOBLIN.MGCRA", "1", "{}", "5", "1", "60", "PEEK", "REFUND"],
                Error(SYNTAX),
                Nothing,
            ),
            case(
                &[],
                &["GOBLIN.MGCRA", "1", "{}", "5", "1", "60", "REFUND", "PEEK"],
                Error(SYNTAX),
                Nothing,
            ),
            Case {
                setup: &[],
                call: &["GOBLIN.MGCRA", "1", "{}", "5", "1", "60", "{v}", "{v}"],
                each: &["PEEK", "REFUND"],
                reply: Error(SYNTAX),
                effect: Nothing,
            },
            case(
                &[],
                &[
                    "GOBLIN.MGCRA",
                    "1",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "TOKENS",
                    "1",
                    "TOKENS",
                    "2",
                ],
                Error(SYNTAX),
                Nothing,
            ),
            Case {
                setup: &[],
                call: &["GOBLIN.MGCRA", "1", "{}", "5", "1", "60", "{v}"],
                each: &["NOW", "1", "TOKEN"],
                reply: Error(SYNTAX),
                effect: Nothing,
            },
        ],
    },
    Row {
        situation: "a key holds a string that is not a TAT",
        cases: &[
            case(
                &[&["SET", "{}:b", "hello"]],
                &TWO,
                Error(GCRA_NOT_A_TAT),
                Nothing,
            ),
            case(
                &[&["SET", "{}:b", "-5"]],
                &TWO,
                Error(GCRA_NEGATIVE_TAT),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "a key holds a list, hash, set, sorted set, ...",
        cases: &[case(
            &[&["RPUSH", "{}:b", "x"]],
            &TWO,
            Error(WRONGTYPE),
            Nothing,
        )],
    },
    Row {
        situation: "the arithmetic leaves 64-bit microseconds",
        cases: &[
            case(
                &[],
                &[
                    "GOBLIN.MGCRA",
                    "2",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "{}:b",
                    "1",
                    "1",
                    "60",
                    "TOKENS",
                    "9223372036854775807",
                ],
                Error(GCRA_TOKENS_OVERFLOW),
                Nothing,
            ),
            case(
                &[],
                &[
                    "GOBLIN.MGCRA",
                    "2",
                    "{}",
                    "5",
                    "1",
                    "60",
                    "{}:b",
                    "9223372036854775806",
                    "1",
                    "60",
                ],
                Error(GCRA_BURST_OVERFLOW),
                Nothing,
            ),
        ],
    },
    Row {
        situation: "wrong number of arguments",
        cases: &[case(
            &[],
            &["GOBLIN.MGCRA", "1", "{}", "5", "1"],
            Error(GOBLIN_MGCRA_ARITY),
            Nothing,
        )],
    },
];
