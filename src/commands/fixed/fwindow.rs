//! GOBLIN.FWINDOW key window [BY n] [LIMIT max [RESTART | BLOCK ms | BACKOFF]]: a fixed-window
//! counter in milliseconds. INCRBY n (1 by default), the window armed when the key is new or has
//! no TTL, and with a limit, what a call above it does to the window; the reply carries the
//! count and the time to reset, so a rate limiter needs no second command. The decision is
//! `goblin_core::fwindow`.
//!
//! ```text
//! -> [count, ttl_ms]
//! ```

use goblin_core::fwindow::{self, Hit, Over};

use super::{standing, window_ms};
use crate::effects;
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, Reply};

pub struct GoblinFwindow;

static STATS: CommandStats = CommandStats::new();
/// Calls that left the count above their limit.
static OVER: Counter = Counter::new();

pub struct FwindowArgs<'call> {
    key: Arg<'call>,
    hit: Hit,
}

impl Command for GoblinFwindow {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.fwindow",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        summary: c"Increments the integer at key by 1 (or BY n) in a fixed window of milliseconds, armed when the key is new or has no TTL; with LIMIT, a call above it restarts the window, blocks for ms, or backs off. Replies the count and the milliseconds to reset.",
        complexity: c"O(1)",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::integer(c"window"),
            ArgDoc::integer(c"increment").token("BY").optional(),
            ArgDoc::block(
                c"limit-block",
                &[
                    ArgDoc::integer(c"max").token("LIMIT"),
                    ArgDoc::one_of(
                        c"over",
                        &[
                            ArgDoc::pure_token(c"restart", "RESTART"),
                            ArgDoc::integer(c"milliseconds").token("BLOCK"),
                            ArgDoc::pure_token(c"backoff", "BACKOFF"),
                        ],
                    )
                    .optional(),
                ],
            )
            .optional(),
        ],
        stats: &STATS,
        info_name: "fwindow",
        outcomes: &[("over", &OVER)],
        stand_in: false,
    };

    type Args<'call> = FwindowArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<FwindowArgs<'call>, CommandError> {
        let key = args.next()?;
        let window_ms = window_ms(args.next()?)?;
        let (mut by, mut limit, mut over) = (None, None, None);
        let mut options = args.rest().iter();
        // Each option once, as SET takes its own: a repeated one is a syntax error.
        while let Some(option) = options.next() {
            if option.is("RESTART") && over.is_none() {
                over = Some(Over::Restart);
            } else if option.is("BACKOFF") && over.is_none() {
                over = Some(Over::Backoff);
            } else {
                let value = options.next();
                match value {
                    Some(value) if option.is("BY") && by.is_none() => {
                        by = Some(value.to_i64().ok_or(CommandError::NotInteger)?);
                    }
                    Some(value) if option.is("LIMIT") && limit.is_none() => {
                        limit = Some(value.to_i64().ok_or(CommandError::NotInteger)?);
                    }
                    Some(value) if option.is("BLOCK") && over.is_none() => {
                        let ms = value.to_i64().ok_or(CommandError::NotInteger)?;
                        if ms <= 0 {
                            return Err(CommandError::InvalidExpire);
                        }
                        over = Some(Over::Block(ms));
                    }
                    _ => return Err(CommandError::Syntax),
                }
            }
        }
        // What a call over the limit does needs the limit.
        let limit = match (limit, over) {
            (None, Some(_)) => return Err(CommandError::Syntax),
            (None, None) => None,
            (Some(limit), over) => Some((limit, over.unwrap_or(Over::Count))),
        };
        Ok(FwindowArgs {
            key,
            hit: Hit {
                window_ms,
                by: by.unwrap_or(1),
                limit,
            },
        })
    }

    fn run<'call>(ctx: &'call Ctx, args: FwindowArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let mut key = ctx.open_key(args.key);
        let now_ms = ctx.now_ms();
        let standing = standing(Some(&key), now_ms)?;
        let outcome = fwindow::hit(standing, &args.hit, now_ms)?;
        if args
            .hit
            .limit
            .is_some_and(|(limit, _)| outcome.write.value > limit)
        {
            OVER.add(1);
        }
        if fwindow::ended(standing) {
            effects::drop_ended_window(ctx, &mut key);
        }
        effects::write_counter(ctx, &mut key, &outcome.write);
        Ok(Reply::ints(&outcome.reply()))
    }
}
