//! GOBLIN.LOCK key token milliseconds: a token lock's acquire, `SET key token NX PX ms`, that
//! waits its turn: it fails while anyone waits in line for the key (GOBLIN.BLOCK), so a caller
//! that asks without waiting never takes the lock from one who came earlier. A holder asking
//! again with its own token gets it again, its lease re-armed: a retried acquire whose first
//! reply was lost succeeds.
//!
//! ```text
//! -> OK, or nil
//! ```

use super::{fence_option, granted, lock_lease_ms, take_now, LockArgs};
use crate::commands::{fence_arg, tally};
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Args, Ctx, Reply};
use crate::waiting::{self, Decision};

pub struct GoblinLock;

static STATS: CommandStats = CommandStats::new();
static ACQUIRED: Counter = Counter::new();
static REFUSED: Counter = Counter::new();

impl Command for GoblinLock {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.lock",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        summary: c"Acquires a token lock for milliseconds if nobody holds it and nobody waits for it (SET NX PX that never jumps the line of GOBLIN.BLOCK), or re-arms the caller's own.",
        complexity: c"O(1)",
        since: c"0.3.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::string(c"token"),
            ArgDoc::integer(c"milliseconds"),
            fence_arg(c"Reply the grant's fencing token instead of OK.", Some(c"0.4.0")),
        ],
        stats: &STATS,
        info_name: "lock",
        outcomes: &[("acquired", &ACQUIRED), ("refused", &REFUSED)],
        stand_in: false,
    };

    type Args<'call> = LockArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<LockArgs<'call>, CommandError> {
        let (key, token) = (args.next()?, args.next()?);
        let ms = lock_lease_ms(args.next()?)?;
        let fence = fence_option(key, args.rest())?;
        Ok(LockArgs {
            key,
            token,
            ms,
            fence,
        })
    }

    fn run<'call>(ctx: &'call Ctx, args: LockArgs<'call>) -> Result<Reply<'call>, CommandError> {
        // Never before a caller waiting in line (GOBLIN.BLOCK).
        let reply = waiting::acquire(ctx, args.key, None, |key, _| {
            // Matched, not `map_or`: a nil made and dropped on every grant costs a reply's drop.
            Ok(Decision::Now(match take_now(ctx, key, &args)? {
                Some(token) => granted(token),
                None => Reply::Null,
            }))
        })?;
        tally(&reply, &ACQUIRED, None, Some(&REFUSED));
        Ok(reply)
    }
}
