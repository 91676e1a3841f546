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

use super::{parse, take_now, wait, would_deadlock, RwArgs, FENCE_DOC};
use crate::error::{self, CommandError};
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Args, Ctx, Reply};
use crate::waiting;

pub struct GoblinBwlock;

static STATS: CommandStats = CommandStats::new();
static ACQUIRED: Counter = Counter::new();
static WAITED: Counter = Counter::new();

pub struct BwlockArgs<'call> {
    lock: RwArgs<'call>,
    timeout_ms: i64,
}

impl Command for GoblinBwlock {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.bwlock",
        flags: c"write deny-oom blocking",
        acl_categories: c"write sortedset string slow blocking",
        summary: c"Acquires a readers-writer lock's write lease for milliseconds, or waits in the line of its readers and writers (first come, first served; a reader asking to write waits for the other readers to leave) until timeout seconds pass (0: for ever).",
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
        info_name: "bwlock",
        outcomes: &[("acquired", &ACQUIRED), ("waited", &WAITED)],
        stand_in: false,
    };

    type Args<'call> = BwlockArgs<'call>;

    fn parse<'call>(args: Args<'_, 'call>) -> Result<BwlockArgs<'call>, CommandError> {
        let (lock, timeout_ms) = parse(args, true)?;
        Ok(BwlockArgs { lock, timeout_ms })
    }

    fn run<'call>(ctx: &'call Ctx, args: BwlockArgs<'call>) -> Result<Reply<'call>, CommandError> {
        waiting::timeout_fits(ctx, args.timeout_ms)?;
        // A newcomer comes after the callers already waiting in line.
        waiting::serve_first(ctx, args.lock.key);
        let (someone_waits, promotions) = waiting::ahead(ctx, args.lock.key);
        let mut key = ctx.open_key(args.lock.key);
        let (granted, holders) = take_now(ctx, &mut key, &args.lock, Mode::Write, someone_waits)?;
        if let Some(reply) = granted {
            ACQUIRED.add(1);
            return Ok(reply);
        }
        if ctx.placement().no_blocking {
            return Ok(Reply::Null);
        }
        if would_deadlock(ctx, &key, args.lock.token, holders, &promotions) {
            return Err(error::rwlock::DEADLOCK);
        }
        drop(key);
        let reply = wait(ctx, &args.lock, Mode::Write, holders, args.timeout_ms);
        if reply == Reply::Blocked {
            WAITED.add(1);
        }
        Ok(reply)
    }
}
