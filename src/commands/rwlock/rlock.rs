//! GOBLIN.RLOCK key token milliseconds [FENCE]: a readers-writer lock's read acquire that does
//! not wait. Readers share the key: a new reader is let in while no writer holds it and nobody
//! waits in line for it (GOBLIN.BRLOCK, GOBLIN.BWLOCK), so a stream of readers never passes a
//! waiting writer. A reader asking again renews its lease; the writer asking to read is demoted
//! (it reads, and others may read beside it).
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

pub struct GoblinRlock;

static STATS: CommandStats = CommandStats::new();
static ACQUIRED: Counter = Counter::new();
static REFUSED: Counter = Counter::new();

impl Command for GoblinRlock {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.rlock",
        flags: c"write deny-oom fast",
        acl_categories: c"write sortedset string fast",
        summary: c"Acquires a readers-writer lock's read lease for milliseconds if no writer holds it and nobody waits for it, renews the caller's own, or demotes the caller's write lease.",
        complexity: c"O(log(N)) with N the readers, and O(M) more for M lapsed leases removed.",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: ACQUIRE_ARGS,
        stats: &STATS,
        info_name: "rlock",
        outcomes: &[("acquired", &ACQUIRED), ("refused", &REFUSED)],
        stand_in: false,
    };

    type Args<'call> = RwArgs<'call>;

    fn parse<'call>(args: Args<'_, 'call>) -> Result<RwArgs<'call>, CommandError> {
        Ok(parse(args, false)?.0)
    }

    fn run<'call>(ctx: &'call Ctx, args: RwArgs<'call>) -> Result<Reply<'call>, CommandError> {
        acquire_now(ctx, &args, Mode::Read, &ACQUIRED, &REFUSED)
    }
}
