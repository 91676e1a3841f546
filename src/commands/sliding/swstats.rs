//! GOBLIN.SWSTATS key window: what GOBLIN.SWINDOW would count now, read only.
//!
//! ```text
//! -> [previous, previous_ttl_ms, current, current_ttl_ms]
//! ```

use goblin_core::swindow;

use super::{counts, stored, window_ms};
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::CommandStats;
use crate::server::{Arg, Args, Ctx, Reply};

pub struct GoblinSwstats;

static STATS: CommandStats = CommandStats::new();

pub struct SwstatsArgs<'call> {
    key: Arg<'call>,
    window_ms: i64,
}

impl Command for GoblinSwstats {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.swstats",
        flags: c"readonly fast",
        acl_categories: c"read string fast",
        summary: c"The counts GOBLIN.SWINDOW would weigh now: the previous window's and how long it still weighs, the current window's and how long it lives.",
        complexity: c"O(1)",
        since: c"0.3.0",
        keys: Keys::One(KeyAccess::Read),
        args: &[ArgDoc::key(c"key"), ArgDoc::double(c"window")],
        stats: &STATS,
        info_name: "swstats",
        outcomes: &[],
        stand_in: false,
    };

    type Args<'call> = SwstatsArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<SwstatsArgs<'call>, CommandError> {
        let key = args.next()?;
        let window_ms = window_ms(args.next()?)?;
        args.finish()?;
        Ok(SwstatsArgs { key, window_ms })
    }

    fn run<'call>(ctx: &'call Ctx, args: SwstatsArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let key = ctx.read_key(args.key);
        let stored = stored(key.as_ref())?;
        let view = swindow::view(stored, args.window_ms, ctx.now_ms())
            .map_err(|_| CommandError::InvalidExpire)?;
        Ok(Reply::Array(counts(&view).into()))
    }
}
