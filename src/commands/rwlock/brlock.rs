//! GOBLIN.BRLOCK key token milliseconds timeout [FENCE]: a readers-writer lock's blocking read
//! acquire. Granted at once as GOBLIN.RLOCK would grant it; otherwise the caller waits inside
//! the server, in the one line of the key's readers and writers, first come first served, and
//! reads the moment its turn comes and no writer holds the key (the readers at the head of the
//! line go in together). `timeout` is in seconds, 0 waiting for ever; on expiry the reply is
//! nil, as BLPOP's. Inside MULTI, a script or a function, and on a replica, it answers at once.
//!
//! ```text
//! -> OK, or nil
//! ```

use goblin_core::rwlock::Mode;

use super::{acquire_or_wait, parse_blocking, BlockingArgs, BLOCKING_ACQUIRE_ARGS};
use crate::error::CommandError;
use crate::server::command::{Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Args, Ctx, Reply};

pub struct GoblinBrlock;

static STATS: CommandStats = CommandStats::new();
static ACQUIRED: Counter = Counter::new();
static WAITED: Counter = Counter::new();

impl Command for GoblinBrlock {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.brlock",
        flags: c"write deny-oom blocking",
        acl_categories: c"write sortedset string slow blocking",
        summary: c"Acquires a readers-writer lock's read lease for milliseconds, or waits in the line of its readers and writers (first come, first served) until timeout seconds pass (0: for ever).",
        complexity: c"O(log(N)) with N the readers to acquire or wait; each look at the line is O(W) with W the waiters let in.",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: BLOCKING_ACQUIRE_ARGS,
        stats: &STATS,
        info_name: "brlock",
        outcomes: &[("acquired", &ACQUIRED), ("waited", &WAITED)],
        stand_in: false,
    };

    type Args<'call> = BlockingArgs<'call>;

    fn parse<'call>(args: Args<'_, 'call>) -> Result<BlockingArgs<'call>, CommandError> {
        parse_blocking(args)
    }

    fn run<'call>(
        ctx: &'call Ctx,
        args: BlockingArgs<'call>,
    ) -> Result<Reply<'call>, CommandError> {
        acquire_or_wait(ctx, &args, Mode::Read, Self::SPEC.name, &ACQUIRED, &WAITED)
    }
}
