//! GOBLIN.GCRA key max_burst tokens_per_period period [TOKENS n]: the Generic Cell Rate
//! Algorithm on the server's clock, with the arguments, errors and reply of the `GCRA` command
//! Redis wrote for 8.8 and held back before 8.8 shipped (it is in no release since; Redis 8.10's
//! source still carries it, compiled out):
//!
//! ```text
//! -> [limited, limit, remaining, retry_after, reset_after]
//! ```
//!
//! Three differences are deliberate: the TAT is a plain string (microseconds), so any server
//! loads the data; replicas and the AOF get `SET key tat PXAT ms`, not the unreleased
//! `GCRASETVALUE`; a string that is not a TAT is an error. The algorithm is
//! `goblin_core::gcra`.

use goblin_core::gcra::Limits;

use super::{parse_limits, throttle_key};
use crate::error::gcra::MISSING_TOKENS;
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, Reply};

pub struct GoblinGcra;

static STATS: CommandStats = CommandStats::new();
static ALLOWED: Counter = Counter::new();
static LIMITED: Counter = Counter::new();

pub struct GcraArgs<'call> {
    key: Arg<'call>,
    limits: Limits,
}

impl Command for GoblinGcra {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.gcra",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        summary: c"Rate limits with GCRA (the Generic Cell Rate Algorithm) on the server's clock: allows or limits a request costing TOKENS, and says how many remain, when to retry and when the limit is full again.",
        complexity: c"O(1)",
        since: c"0.2.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::integer(c"max-burst"),
            ArgDoc::integer(c"tokens-per-period"),
            ArgDoc::double(c"period"),
            ArgDoc::integer(c"count").token("TOKENS").optional(),
        ],
        stats: &STATS,
        info_name: "gcra",
        outcomes: &[("allowed", &ALLOWED), ("limited", &LIMITED)],
        stand_in: false,
    };

    type Args<'call> = GcraArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<GcraArgs<'call>, CommandError> {
        let key = args.next()?;
        // The server checks "at least four"; GCRA itself "at most six", before any other.
        if args.remaining() > 5 {
            return Err(CommandError::WrongArity);
        }
        let limits = parse_limits(args.next()?, args.next()?, args.next()?)?;
        let cost = match args.rest() {
            [] => 1,
            [token, ..] if !token.is("TOKENS") => return Err(CommandError::Syntax),
            [_] => return Err(MISSING_TOKENS),
            [_, count] => count.to_count()?,
            _ => return Err(CommandError::WrongArity),
        };
        Ok(GcraArgs {
            key,
            limits: Limits { cost, ..limits },
        })
    }

    fn run<'call>(ctx: &'call Ctx, args: GcraArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let throttled = throttle_key(ctx, args.key, &args.limits)?;
        if throttled.limited {
            LIMITED.add(1);
        } else {
            ALLOWED.add(1);
        }
        Ok(Reply::Ints(throttled.reply().into_iter().collect()))
    }
}
