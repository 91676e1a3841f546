//! GOBLIN.GCRA key max_burst tokens_per_period period [TOKENS n]: the Generic Cell Rate
//! Algorithm on the server's clock, with the arguments, errors and reply of the `GCRA` command
//! Redis wrote (8.10 source) and held out of its release:
//!
//! ```text
//! -> [limited, limit, remaining, retry_after, reset_after]
//! ```
//!
//! Three differences are deliberate: the TAT is a plain string (microseconds), so any server
//! loads the data; replicas and the AOF get `SET key tat PXAT ms`, not the unreleased
//! `GCRASETVALUE`; a string that is not a TAT is an error. The algorithm is
//! `goblin_core::gcra`.

use goblin_core::gcra::{read_tat, throttle, Limits};

use crate::effects::TatKey;
use crate::error::gcra::{MISSING_TOKENS, MUST_BE_POSITIVE, PERIOD_RANGE};
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};

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
        key: KeyAccess::ReadUpdate,
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
        let max_burst = args
            .next()?
            .to_i64()
            .filter(|value| *value >= 0)
            .ok_or(MUST_BE_POSITIVE)?;
        let tokens_per_period = args.next()?.to_count()?;
        let period = args
            .next()?
            .to_f64_as_redis()
            .ok_or(CommandError::NotFloat)?;
        if !(period > 0.0 && period < 1e12) {
            return Err(PERIOD_RANGE);
        }
        let cost = match args.rest() {
            [] => 1,
            [token, ..] if !token.is("TOKENS") => return Err(CommandError::Syntax),
            [_] => return Err(MISSING_TOKENS),
            [_, count] => count.to_count()?,
            _ => return Err(CommandError::WrongArity),
        };
        Ok(GcraArgs {
            key,
            limits: Limits {
                capacity: Limits::capacity_of(max_burst),
                tokens_per_period,
                period,
                cost,
            },
        })
    }

    fn run<'call>(ctx: &'call Ctx, args: GcraArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let mut key = ctx.open_key(args.key);
        let tat = match key.kind() {
            KeyKind::Empty => None,
            KeyKind::String => Some(read_tat(key.string().unwrap_or_default())?),
            KeyKind::SortedSet | KeyKind::Other => return Err(CommandError::WrongType),
        };
        // The server's command-time snapshot: a whole millisecond.
        let now = ctx.now_ms().saturating_mul(1000);
        let mut store = TatKey::new(ctx, &mut key, tat);
        let throttled = throttle(&mut store, &args.limits, now)?;
        if throttled.limited {
            LIMITED.add(1);
        } else {
            ALLOWED.add(1);
        }
        Ok(Reply::Array(
            throttled
                .reply()
                .iter()
                .map(|&field| Reply::Int(field))
                .collect(),
        ))
    }
}
