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

use super::{parse, take_now, wait, RwArgs, FENCE_DOC};
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Args, Ctx, Reply};
use crate::waiting;

pub struct GoblinBrlock;

static STATS: CommandStats = CommandStats::new();
static ACQUIRED: Counter = Counter::new();
static WAITED: Counter = Counter::new();

pub struct BrlockArgs<'call> {
    lock: RwArgs<'call>,
    timeout_ms: i64,
}

impl Command for GoblinBrlock {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.brlock",
        flags: c"write deny-oom blocking",
        acl_categories: c"write sortedset string slow blocking",
        summary: c"Acquires a readers-writer lock's read lease for milliseconds, or waits in the line of its readers and writers (first come, first served) until timeout seconds pass (0: for ever).",
        complexity: c"O(log(N)) with N the readers to acquire or wait; each look at the line is O(W) with W the waiters let in.",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::string(c"token"),
            ArgDoc::integer(c"milliseconds"),
            ArgDoc::double(c"timeout"),
            FENCE_DOC,
        ],
        stats: &STATS,
        info_name: "brlock",
        outcomes: &[("acquired", &ACQUIRED), ("waited", &WAITED)],
        stand_in: false,
    };

    type Args<'call> = BrlockArgs<'call>;

    fn parse<'call>(args: Args<'_, 'call>) -> Result<BrlockArgs<'call>, CommandError> {
        let (lock, timeout_ms) = parse(args, true)?;
        Ok(BrlockArgs { lock, timeout_ms })
    }

    fn run<'call>(ctx: &'call Ctx, args: BrlockArgs<'call>) -> Result<Reply<'call>, CommandError> {
        waiting::timeout_fits(ctx, args.timeout_ms)?;
        // A newcomer comes after the callers already waiting in line.
        waiting::serve_first(ctx, args.lock.key);
        let (someone_waits, _) = waiting::ahead(ctx, args.lock.key);
        let mut key = ctx.open_key(args.lock.key);
        let (granted, holders) = take_now(ctx, &mut key, &args.lock, Mode::Read, someone_waits)?;
        if let Some(reply) = granted {
            ACQUIRED.add(1);
            return Ok(reply);
        }
        drop(key);
        if ctx.placement().no_blocking {
            return Ok(Reply::Null);
        }
        let reply = wait(ctx, &args.lock, Mode::Read, holders, args.timeout_ms);
        if reply == Reply::Blocked {
            WAITED.add(1);
        }
        Ok(reply)
    }
}
