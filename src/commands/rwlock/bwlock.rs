//! GOBLIN.BWLOCK key token milliseconds timeout [FENCE]: a readers-writer lock's blocking write
//! acquire. Granted at once as GOBLIN.WLOCK would grant it; otherwise the caller waits inside
//! the server, in the one line of the key's readers and writers, first come first served, and
//! holds the key the moment its turn comes and nobody holds it; readers who come after it wait
//! behind it. A reader asking to write waits for the other readers to leave, ahead of the line
//! (everyone in it waits for that reader anyway); if another reader already waits so, each
//! would wait for the other for ever, and the call is refused at once. `timeout` is in seconds,
//! 0 waiting for ever; on expiry the reply is nil. Inside MULTI, a script or a function, and on
//! a replica, it answers at once.
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

pub struct GoblinBwlock;

static STATS: CommandStats = CommandStats::new();
static ACQUIRED: Counter = Counter::new();
static WAITED: Counter = Counter::new();

impl Command for GoblinBwlock {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.bwlock",
        flags: c"write deny-oom blocking",
        acl_categories: c"write sortedset string slow blocking",
        summary: c"Acquires a readers-writer lock's write lease for milliseconds, or waits in the line of its readers and writers (first come, first served; a reader asking to write waits for the other readers to leave) until timeout seconds pass (0: for ever).",
        complexity: c"O(log(N)) with N the readers to acquire or wait; each look at the line is O(W) with W the waiters let in.",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: BLOCKING_ACQUIRE_ARGS,
        stats: &STATS,
        info_name: "bwlock",
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
        acquire_or_wait(ctx, &args, Mode::Write, Self::SPEC.name, &ACQUIRED, &WAITED)
    }
}
