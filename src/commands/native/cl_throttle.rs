//! CL.THROTTLE, redis-cell's command (0.5.0), for the servers that have neither redis-cell
//! loaded nor the command built in:
//!
//! ```text
//! CL.THROTTLE key max_burst count_per_period period [quantity]
//!     -> [limited, limit, remaining, retry_after, reset_after]
//! ```
//!
//! redis-cell's integers (`+5`, `007`, a whole `period`), its reply field for field, and its
//! state: the TAT in Unix nanoseconds, as decimal text, expiring when the bucket is full again.
//! A key written by redis-cell reads here, and back. Where redis-cell crashes the server or
//! wraps its arithmetic, this refuses and writes nothing. Unlike redis-cell, the clock is the
//! server's, and replicas and the AOF get the TAT (`SET key tat PXAT ms`), not the command.
//! The decision is `goblin_core::native::cl_throttle`.

use goblin_core::native::cl_throttle::{decide, parse_argument, parse_tat, Limits};

use crate::effects;
use crate::error::cl_throttle::{NOT_A_TAT, NOT_UTF8};
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};

pub struct ClThrottle;

static STATS: CommandStats = CommandStats::new();
static ALLOWED: Counter = Counter::new();
static LIMITED: Counter = Counter::new();

pub struct ClThrottleArgs<'call> {
    key: Arg<'call>,
    limits: Limits,
}

/// An integer as redis-cell reads it.
fn integer(arg: Arg<'_>) -> Result<i64, CommandError> {
    parse_argument(arg.as_bytes()).ok_or(CommandError::NotInteger)
}

impl Command for ClThrottle {
    const SPEC: &'static Spec = &Spec {
        name: c"cl.throttle",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        summary: c"Rate limits with redis-cell's GCRA on the server's clock: allows or limits a request of quantity tokens, and says how many remain, when to retry and when the limit is full again.",
        complexity: c"O(1)",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::integer(c"max-burst"),
            ArgDoc::integer(c"count-per-period"),
            ArgDoc::integer(c"period"),
            ArgDoc::integer(c"quantity").optional(),
        ],
        stats: &STATS,
        info_name: "stand_in_cl_throttle",
        outcomes: &[("allowed", &ALLOWED), ("limited", &LIMITED)],
        stand_in: true,
    };

    type Args<'call> = ClThrottleArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<ClThrottleArgs<'call>, CommandError> {
        let key = args.next()?;
        let numbers = [args.next()?, args.next()?, args.next()?];
        let quantity = args.rest();
        if quantity.len() > 1 {
            return Err(CommandError::WrongArity);
        }
        // redis-cell reads every argument as UTF-8 text first (and aborts the server on one
        // that is not).
        let text = |arg: &Arg<'_>| std::str::from_utf8(arg.as_bytes()).is_ok();
        if ![key].iter().chain(&numbers).chain(quantity).all(text) {
            return Err(NOT_UTF8);
        }
        let [max_burst, count_per_period, period] = [
            integer(numbers[0])?,
            integer(numbers[1])?,
            integer(numbers[2])?,
        ];
        let quantity = match quantity.first() {
            Some(&quantity) => integer(quantity)?,
            None => 1,
        };
        let limits = Limits::new(max_burst, count_per_period, period, quantity)?;
        Ok(ClThrottleArgs { key, limits })
    }

    fn run<'call>(
        ctx: &'call Ctx,
        args: ClThrottleArgs<'call>,
    ) -> Result<Reply<'call>, CommandError> {
        let mut key = ctx.open_key(args.key);
        let tat = match key.kind() {
            KeyKind::Empty => None,
            KeyKind::String => {
                Some(parse_tat(key.string_or_empty().unwrap_or_default()).ok_or(NOT_A_TAT)?)
            }
            KeyKind::SortedSet | KeyKind::Other => return Err(CommandError::WrongType),
        };
        let decision = decide(&args.limits, tat, ctx.now_ms())?;
        if let Some(stored) = decision.store {
            effects::stored_with_expiry(
                ctx,
                &mut key,
                stored.text().as_bytes(),
                stored.expires_at_ms,
                c"cl.throttle",
            );
        }
        if decision.reply.limited {
            LIMITED.add(1);
        } else {
            ALLOWED.add(1);
        }
        Ok(Reply::ints(&decision.reply.reply()))
    }
}
