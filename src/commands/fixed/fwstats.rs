//! GOBLIN.FWSTATS key: a GOBLIN.FWINDOW counter and the time to reset, read only (on replicas
//! too): GET and PTTL in one reply, a window that ends in this very millisecond read as none.
//!
//! ```text
//! -> [count, ttl_ms]      [0, -2] for a missing key
//! ```

use goblin_core::fwindow;

use super::standing;
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::CommandStats;
use crate::server::{Arg, Args, Ctx, Reply};

pub struct GoblinFwstats;

static STATS: CommandStats = CommandStats::new();

pub struct FwstatsArgs<'call> {
    key: Arg<'call>,
}

impl Command for GoblinFwstats {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.fwstats",
        flags: c"readonly fast",
        acl_categories: c"read string fast",
        summary: c"The count of a GOBLIN.FWINDOW counter and the milliseconds until it resets (PTTL), in one reply; [0, -2] for a missing key.",
        complexity: c"O(1)",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::Read),
        args: &[ArgDoc::key(c"key")],
        stats: &STATS,
        info_name: "fwstats",
        outcomes: &[],
        stand_in: false,
    };

    type Args<'call> = FwstatsArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<FwstatsArgs<'call>, CommandError> {
        let key = args.next()?;
        args.finish()?;
        Ok(FwstatsArgs { key })
    }

    fn run<'call>(ctx: &'call Ctx, args: FwstatsArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let key = ctx.read_key(args.key);
        // A window that has ended (its key expiring in this very millisecond) is none.
        let counts = match fwindow::live(standing(key.as_ref(), ctx.now_ms())?) {
            None => [0, -2],
            Some((value, left_ms)) => [value, left_ms.unwrap_or(-1)],
        };
        Ok(Reply::Ints(counts.into_iter().collect()))
    }
}
