//! GOBLIN.MGCRA numpolicies key max_burst tokens_per_period period [key ...] [TOKENS n]
//! [PEEK | REFUND]: GOBLIN.GCRA over several policies at one instant, all or nothing. Each
//! policy is one key holding a GOBLIN.GCRA TAT, decided with GCRA's own arithmetic; the request
//! is allowed only if every policy allows it, and then every TAT advances. A refusal writes
//! nothing.
//!
//! ```text
//! -> [limited, retry_after, [limited, limit, remaining, retry_after, reset_after], ...]
//! ```
//!
//! Everything is checked before any key is read, and every key before anything is decided.
//! The decision is `goblin_core::mgcra`.

use goblin_core::gcra::{Limits, Throttle};
use goblin_core::mgcra::{mgcra, Mode, Policy, Write};
use smallvec::SmallVec;

use super::{gcra_now, parse_limits, peek_key, tat_of, throttle_key};
use crate::commands::{group_count, groups_of, Counted, INLINE};
use crate::effects::{self, Deletion};
use crate::error::gcra::MISSING_TOKENS;
use crate::error::{mgcra::NUMPOLICIES, CommandError, AT_LEAST_ONE};
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, Key, Reply};

pub struct GoblinMgcra;

static STATS: CommandStats = CommandStats::new();
static ALLOWED: Counter = Counter::new();
static LIMITED: Counter = Counter::new();
static PEEKED: Counter = Counter::new();
static REFUNDED: Counter = Counter::new();

/// The arguments of one policy.
const POLICY_WORDS: usize = 4;

pub enum MgcraArgs<'call> {
    /// One policy, hit or peeked: GOBLIN.GCRA's call, read without the set's bookkeeping.
    One {
        key: Arg<'call>,
        limits: Limits,
        peek: bool,
    },
    /// Several policies, or a refund.
    Many(Policies<'call>),
}

pub struct Policies<'call> {
    /// Each distinct key once, in the order first named.
    keys: SmallVec<[Arg<'call>; INLINE]>,
    policies: SmallVec<[Policy; INLINE]>,
    mode: Mode,
}

impl Command for GoblinMgcra {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.mgcra",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        summary: c"Rate limits with several GCRA policies at once, all or nothing: allows a request costing TOKENS only if every policy allows it, and then charges every one; or peeks, or refunds.",
        complexity: c"O(N) where N is the number of policies",
        since: c"0.3.0",
        keys: Keys::Counted {
            access: KeyAccess::ReadUpdate,
            count_at: 1,
            step: POLICY_WORDS as i32,
        },
        args: &[
            ArgDoc::integer(c"numpolicies"),
            ArgDoc::block(
                c"policy",
                &[
                    ArgDoc::key(c"key"),
                    ArgDoc::integer(c"max-burst"),
                    ArgDoc::integer(c"tokens-per-period"),
                    ArgDoc::double(c"period"),
                ],
            )
            .multiple(),
            ArgDoc::integer(c"count").token("TOKENS").optional(),
            ArgDoc::one_of(
                c"mode",
                &[
                    ArgDoc::pure_token(c"peek", "PEEK"),
                    ArgDoc::pure_token(c"refund", "REFUND"),
                ],
            )
            .optional(),
        ],
        stats: &STATS,
        info_name: "mgcra",
        outcomes: &[
            ("allowed", &ALLOWED),
            ("limited", &LIMITED),
            ("peeked", &PEEKED),
            ("refunded", &REFUNDED),
        ],
        stand_in: false,
    };

    type Args<'call> = MgcraArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<MgcraArgs<'call>, CommandError> {
        let count = group_count(&mut args, POLICY_WORDS, NUMPOLICIES)?;
        if count == 1 {
            let key = args.next()?;
            let limits = parse_limits(args.next()?, args.next()?, args.next()?)?;
            let (cost, mode) = options(args)?;
            let limits = Limits { cost, ..limits };
            return Ok(match mode {
                Mode::Hit | Mode::Peek => MgcraArgs::One {
                    key,
                    limits,
                    peek: mode == Mode::Peek,
                },
                Mode::Refund => MgcraArgs::Many(Policies {
                    keys: smallvec::smallvec![key],
                    policies: smallvec::smallvec![Policy { key: 0, limits }],
                    mode,
                }),
            });
        }
        let Counted {
            keys,
            groups: mut policies,
        } = groups_of(&mut args, count, |key, args| {
            let limits = parse_limits(args.next()?, args.next()?, args.next()?)?;
            Ok(Policy { key, limits })
        })?;
        let (cost, mode) = options(args)?;
        for policy in &mut policies {
            policy.limits = Limits {
                cost,
                ..policy.limits
            };
        }
        Ok(MgcraArgs::Many(Policies {
            keys,
            policies,
            mode,
        }))
    }

    fn run<'call>(ctx: &'call Ctx, args: MgcraArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let args = match &args {
            MgcraArgs::One { key, limits, peek } => return one_policy(ctx, *key, limits, *peek),
            MgcraArgs::Many(args) => args,
        };
        let mut keys: SmallVec<[Key<'call>; INLINE]> =
            args.keys.iter().map(|&name| ctx.open_key(name)).collect();
        let tats = keys
            .iter()
            .map(tat_of)
            .collect::<Result<SmallVec<[_; INLINE]>, _>>()?;
        let decided = mgcra(&tats, &args.policies, args.mode, gcra_now(ctx))?;
        for &(index, write) in &decided.writes {
            let Some(key) = keys.get_mut(index) else {
                continue;
            };
            match write {
                Write::Store(tat) => effects::tat_stored(ctx, key, tat),
                Write::Delete => effects::deleted(ctx, key, Deletion::Unlink),
            }
        }
        match args.mode {
            Mode::Hit if decided.limited => LIMITED.add(1),
            Mode::Hit => ALLOWED.add(1),
            Mode::Peek => PEEKED.add(1),
            Mode::Refund => REFUNDED.add(1),
        }
        Ok(Reply::Rows {
            head: decided.head(),
            rows: decided.policies.iter().map(Throttle::reply).collect(),
        })
    }
}

/// `[TOKENS n] [PEEK | REFUND]`, each once, in any order, as SET takes its own (a repeated one
/// is a syntax error): the cost of the request, at least one token unless peeked, and the mode.
fn options(args: Args<'_, '_>) -> Result<(i64, Mode), CommandError> {
    let (mut cost, mut mode) = (None, Mode::Hit);
    let mut options = args.rest().iter();
    while let Some(option) = options.next() {
        if option.is("TOKENS") && cost.is_none() {
            let value = options.next().ok_or(MISSING_TOKENS)?;
            let value = value.to_i64().ok_or(CommandError::NotInteger)?;
            if value < 0 {
                return Err(AT_LEAST_ONE);
            }
            cost = Some(value);
        } else if option.is("PEEK") && mode == Mode::Hit {
            mode = Mode::Peek;
        } else if option.is("REFUND") && mode == Mode::Hit {
            mode = Mode::Refund;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    let cost = cost.unwrap_or(1);
    // A request costs at least one token; a peek may ask about none.
    if cost == 0 && mode != Mode::Peek {
        return Err(AT_LEAST_ONE);
    }
    Ok((cost, mode))
}

/// One policy's hit, or peek, is GOBLIN.GCRA's, the reply's two leading fields its own (the
/// tests hold the two paths equal): its decision as GOBLIN.GCRA takes it, without the set's
/// bookkeeping.
fn one_policy<'call>(
    ctx: &'call Ctx,
    name: Arg<'call>,
    limits: &Limits,
    peek: bool,
) -> Result<Reply<'call>, CommandError> {
    let decided = if peek {
        PEEKED.add(1);
        peek_key(ctx, name, limits)?
    } else {
        let decided = throttle_key(ctx, name, limits)?;
        if decided.limited {
            LIMITED.add(1);
        } else {
            ALLOWED.add(1);
        }
        decided
    };
    // A refusal's `retry_after`, or -1: GOBLIN.GCRA's field is already the set's.
    Ok(Reply::Rows {
        head: [i64::from(decided.limited), decided.retry_after],
        rows: smallvec::smallvec![decided.reply()],
    })
}
