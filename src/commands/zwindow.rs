//! GOBLIN.ZWINDOW key now window limit member: a sliding-window log in a sorted set. Evict what
//! left the window, refresh a holder or admit a newcomer if there is room, re-arm the TTL.

use crate::effects;
use crate::error::CommandError;
use crate::server::{Arg, Command, Ctx, KeyKind, Zadded};
use crate::stats::{self, CommandStats};
use crate::window::{self, Verdict};

pub struct Zwindow;

struct ZwindowArgs<'call> {
    key: Arg<'call>,
    now: f64,
    window: f64,
    limit: i64,
    member: Arg<'call>,
}

/// A finite double, or the error ZADD gives for a bad score.
fn finite(arg: Arg<'_>) -> Result<f64, CommandError> {
    arg.to_f64()
        .filter(|value| value.is_finite())
        .ok_or(CommandError::NotFloat)
}

impl<'call> ZwindowArgs<'call> {
    fn parse(args: &[Arg<'call>]) -> Result<Self, CommandError> {
        let [_, key, now, window, limit, member] = args else {
            return Err(CommandError::WrongArity(Zwindow::NAME));
        };
        Ok(Self {
            key: *key,
            now: finite(*now)?,
            window: finite(*window)?,
            limit: limit.to_i64().ok_or(CommandError::NotInteger)?,
            member: *member,
        })
    }
}

impl Command for Zwindow {
    const NAME: &'static str = "goblin.zwindow";
    const STATS: &'static CommandStats = &stats::ZWINDOW;

    fn run<'call>(ctx: &'call Ctx, args: &'call [Arg<'call>]) -> Result<i64, CommandError> {
        let args = ZwindowArgs::parse(args)?;
        let mut key = ctx.open_key(args.key);
        if !matches!(key.kind(), KeyKind::Empty | KeyKind::SortedSet) {
            return Err(CommandError::WrongType);
        }
        // Computed before the first write, so an invalid expiry leaves the key untouched.
        let expiry = window::expiry(args.window, ctx.now_ms(), Self::NAME)?;

        let cutoff = window::cutoff(args.now, args.window);
        let eviction = effects::evict(ctx, &mut key, cutoff, window::EVICTION_BUDGET);
        stats::EVICTED.add(eviction.count as u64);
        // Only members inside the window count, even when old ones are still waiting to go.
        // The set's length bounds that count, so it settles "is there room?" whenever it is
        // below the limit; only a full-looking set with old members left needs counting.
        let len = key.len();
        let in_window = if eviction.complete || i64::try_from(len).is_ok_and(|n| n < args.limit) {
            len
        } else {
            key.count_above(cutoff, window::count_cap(args.limit))
        };
        let verdict = window::decide(in_window, args.limit, || {
            key.score(args.member).is_some_and(|score| score > cutoff)
        });
        match verdict {
            Verdict::Grant => {
                // A member still waiting to be evicted comes back as a newcomer, though the
                // set only moves its score.
                let stale = !eviction.complete
                    && key.score(args.member).is_some_and(|score| score <= cutoff);
                match effects::record(ctx, &mut key, args.member, args.now, expiry) {
                    Zadded::Added => stats::ADMITTED.add(1),
                    Zadded::Moved | Zadded::Unchanged if stale => stats::ADMITTED.add(1),
                    Zadded::Moved | Zadded::Unchanged => stats::REFRESHED.add(1),
                }
            }
            Verdict::Reject => stats::REJECTED.add(1),
        }
        Ok(verdict.reply())
    }
}
