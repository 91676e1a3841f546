//! GOBLIN.BLOCK key token milliseconds timeout: a token lock's blocking acquire. Takes the lock
//! (`SET key token NX PX ms`) if nobody holds it and nobody waits, or the caller holds it
//! already; otherwise waits inside the server, in line, first come first served, and gets the
//! lock the moment it is released or expires. `timeout` is in seconds, 0 waiting for ever; on
//! expiry the reply is nil, as BLPOP's. Inside MULTI, a script or a function, and on a
//! replica, it answers at once.
//!
//! ```text
//! -> OK, or nil
//! ```

use goblin_core::waitlist::Want;

use super::{fence_option, granted, lock_lease_ms, take_now, LockArgs};
use crate::commands::{fence_arg, tally};
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Args, Ctx, Reply};
use crate::waiting::{self, Decision, Waits};

pub struct GoblinBlock;

static STATS: CommandStats = CommandStats::new();
static ACQUIRED: Counter = Counter::new();
static WAITED: Counter = Counter::new();

pub struct BlockArgs<'call> {
    lock: LockArgs<'call>,
    timeout_ms: i64,
}

impl Command for GoblinBlock {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.block",
        flags: c"write deny-oom blocking",
        acl_categories: c"write string slow blocking",
        summary: c"Acquires a token lock for milliseconds, or waits in line for it (first come, first served) until timeout seconds pass (0: for ever).",
        complexity: c"O(1) to acquire or wait; each hand-off is O(N) with N the waiters on the key.",
        since: c"0.3.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::string(c"token"),
            ArgDoc::integer(c"milliseconds"),
            ArgDoc::double(c"timeout"),
            fence_arg(c"Reply the grant's fencing token instead of OK.", Some(c"0.4.0")),
        ],
        stats: &STATS,
        info_name: "block",
        outcomes: &[("acquired", &ACQUIRED), ("waited", &WAITED)],
        stand_in: false,
    };

    type Args<'call> = BlockArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<BlockArgs<'call>, CommandError> {
        let (key, token) = (args.next()?, args.next()?);
        let ms = lock_lease_ms(args.next()?)?;
        let timeout_ms = args.next()?.to_timeout_ms()?;
        let fence = fence_option(key, args.rest())?;
        Ok(BlockArgs {
            lock: LockArgs {
                key,
                token,
                ms,
                fence,
            },
            timeout_ms,
        })
    }

    fn run<'call>(ctx: &'call Ctx, args: BlockArgs<'call>) -> Result<Reply<'call>, CommandError> {
        waiting::timeout_fits(ctx, args.timeout_ms)?;
        let waits = Waits {
            timeout_ms: args.timeout_ms,
            command: Self::SPEC.name,
        };
        let lock = &args.lock;
        let reply = waiting::acquire(ctx, lock.key, Some(waits), |key, _| {
            Ok(match take_now(ctx, key, lock)? {
                Some(token) => Decision::Now(granted(token)),
                None => Decision::Wait(Want::Lock {
                    token: lock.token.as_bytes().to_vec(),
                    ms: lock.ms,
                    fence: lock.fence,
                }),
            })
        })?;
        tally(&reply, &ACQUIRED, Some(&WAITED), None);
        Ok(reply)
    }
}
