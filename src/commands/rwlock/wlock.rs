//! GOBLIN.WLOCK key token milliseconds [FENCE]: a readers-writer lock's write acquire that does
//! not wait. A writer holds the key alone: it is let in when nobody holds the key and nobody
//! waits in line for it (GOBLIN.BRLOCK, GOBLIN.BWLOCK). The writer asking again renews its
//! lease; a reader asking to write is promoted if its read lease is the only one left.
//!
//! ```text
//! -> OK, or nil
//! ```

use goblin_core::rwlock::Mode;

use super::{acquire_now, parse, RwArgs, ACQUIRE_ARGS};
use crate::error::CommandError;
use crate::server::command::{Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Args, Ctx, Reply};

pub struct GoblinWlock;

static STATS: CommandStats = CommandStats::new();
static ACQUIRED: Counter = Counter::new();
static REFUSED: Counter = Counter::new();

impl Command for GoblinWlock {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.wlock",
        flags: c"write deny-oom fast",
        acl_categories: c"write sortedset string fast",
        summary: c"Acquires a readers-writer lock's write lease for milliseconds if nobody holds it and nobody waits for it, renews the caller's own, or promotes the caller's read lease if it is the last.",
        complexity: c"O(log(N)) with N the readers, and O(M) more for M lapsed leases removed.",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: ACQUIRE_ARGS,
        stats: &STATS,
        info_name: "wlock",
        outcomes: &[("acquired", &ACQUIRED), ("refused", &REFUSED)],
        stand_in: false,
    };

    type Args<'call> = RwArgs<'call>;

    fn parse<'call>(args: Args<'_, 'call>) -> Result<RwArgs<'call>, CommandError> {
        Ok(parse(args, false)?.0)
    }

    fn run<'call>(ctx: &'call Ctx, args: RwArgs<'call>) -> Result<Reply<'call>, CommandError> {
        acquire_now(ctx, &args, Mode::Write, &ACQUIRED, &REFUSED)
    }
}
