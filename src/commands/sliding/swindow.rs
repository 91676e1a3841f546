//! GOBLIN.SWINDOW key window limit [COST n]: the sliding window counter, the strategy limits,
//! Cloudflare and upstash call "sliding window". Windows of `window` seconds aligned to the
//! server's clock; a request counts the current window's hits plus the previous window's,
//! weighted by how much of it the last `window` seconds still overlap; admitted, it adds its
//! cost to the current window. Both counts are one string key that expires when both windows
//! are over. The algorithm is `goblin_core::swindow`.
//!
//! ```text
//! -> [admitted, previous, previous_ttl_ms, current, current_ttl_ms]
//! ```

use goblin_core::swindow;

use super::{stored, window_ms};
use crate::effects;
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, Reply};

pub struct GoblinSwindow;

static STATS: CommandStats = CommandStats::new();
static ADMITTED: Counter = Counter::new();
static REJECTED: Counter = Counter::new();

pub struct SwindowArgs<'call> {
    key: Arg<'call>,
    window_ms: i64,
    limit: i64,
    cost: i64,
}

impl Command for GoblinSwindow {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.swindow",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        summary: c"A sliding window counter on the server's clock: admits a request costing COST (1 by default) if the current window's count plus the previous window's, weighted by its overlap, leaves room under limit, and counts it.",
        complexity: c"O(1)",
        since: c"0.3.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::double(c"window"),
            ArgDoc::integer(c"limit"),
            ArgDoc::integer(c"cost").token("COST").optional(),
        ],
        stats: &STATS,
        info_name: "swindow",
        outcomes: &[("admitted", &ADMITTED), ("rejected", &REJECTED)],
        stand_in: false,
    };

    type Args<'call> = SwindowArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<SwindowArgs<'call>, CommandError> {
        let key = args.next()?;
        let window_ms = window_ms(args.next()?)?;
        let limit = args.next()?.to_i64().ok_or(CommandError::NotInteger)?;
        let cost = match args.rest() {
            [] => 1,
            [option, value] if option.is("COST") => value.to_count()?,
            _ => return Err(CommandError::Syntax),
        };
        Ok(SwindowArgs {
            key,
            window_ms,
            limit,
            cost,
        })
    }

    fn run<'call>(ctx: &'call Ctx, args: SwindowArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let mut key = ctx.open_key(args.key);
        let stored = stored(Some(&key))?;
        let view = swindow::view(stored, args.window_ms, ctx.now_ms())
            .map_err(|_| CommandError::InvalidExpire)?;
        let recorded = view
            .admits(args.cost, args.limit)
            .then(|| view.record(args.cost))
            .flatten();
        let (admitted, view) = match recorded {
            Some((stored, expires_at_ms)) => {
                ADMITTED.add(1);
                let value = stored.text();
                effects::stored_with_expiry(
                    ctx,
                    &mut key,
                    value.as_bytes(),
                    expires_at_ms,
                    c"swindow",
                );
                (1, view.with(stored))
            }
            None => {
                REJECTED.add(1);
                (0, view)
            }
        };
        // `[admitted, ...counts]`, on the stack: no allocation per call.
        Ok(Reply::Ints(smallvec::smallvec![
            admitted,
            view.previous,
            view.previous_ttl_ms,
            view.current,
            view.current_ttl_ms,
        ]))
    }
}
