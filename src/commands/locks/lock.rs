//! GOBLIN.LOCK key token milliseconds: a token lock's acquire, `SET key token NX PX ms`, that
//! waits its turn: it fails while anyone waits in line for the key (GOBLIN.BLOCK), so a caller
//! that asks without waiting never takes the lock from one who came earlier. A holder asking
//! again with its own token gets it again, its lease re-armed: a retried acquire whose first
//! reply was lost succeeds.
//!
//! ```text
//! -> OK, or nil
//! ```

use goblin_core::grant::Take;

use crate::error::CommandError;
use crate::fencing;
use crate::grant;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, Key, Reply};
use crate::waiting;

pub struct GoblinLock;

static STATS: CommandStats = CommandStats::new();
static ACQUIRED: Counter = Counter::new();
static REFUSED: Counter = Counter::new();

pub struct LockArgs<'call> {
    pub key: Arg<'call>,
    pub token: Arg<'call>,
    pub ms: i64,
    /// `FENCE`: reply the grant's fencing token (`crate::fencing`).
    pub fence: bool,
}

/// A trailing `FENCE`, once, and nothing else; checked with the key, before anything is read.
pub(crate) fn fence_option(key: Arg<'_>, rest: &[Arg<'_>]) -> Result<bool, CommandError> {
    match rest {
        [] => Ok(false),
        [option] if option.is("FENCE") => {
            fencing::nameable(key)?;
            Ok(true)
        }
        _ => Err(CommandError::Syntax),
    }
}

/// A grant's reply: `OK`, or its fencing token.
pub(crate) fn granted(token: Option<i64>) -> Reply<'static> {
    token.map_or(Reply::Status(c"OK"), Reply::Int)
}

/// The lease: milliseconds, at least 1, as SET's PX takes them.
pub(crate) fn lease_ms(arg: Arg<'_>) -> Result<i64, CommandError> {
    match arg.to_i64() {
        None => Err(CommandError::NotInteger),
        Some(ms) if ms <= 0 => Err(CommandError::InvalidExpire),
        Some(ms) => Ok(ms),
    }
}

/// A lock's lease: as [`lease_ms`], or 0 for none (the key is held until it is released, as
/// redis-py's `Lock` with `timeout=None` holds it: a plain `SET NX`).
pub(crate) fn lock_lease_ms(arg: Arg<'_>) -> Result<i64, CommandError> {
    match arg.to_i64() {
        Some(0) => Ok(0),
        _ => lease_ms(arg),
    }
}

/// Takes the lock for `args.token` if nobody holds it, or if the caller holds it already
/// (`grant::take`), as `crate::grant::lock` grants it: with its fencing token if asked (a new
/// one for a new holder, its own for a holder again); `None` (nothing written) if someone else
/// holds it, or an error for a key of another type, or a token that cannot be minted. The
/// caller has served the line first.
pub(crate) fn take_now(
    ctx: &Ctx,
    key: &mut Key<'_>,
    args: &LockArgs<'_>,
) -> Result<Option<Reply<'static>>, CommandError> {
    let now_ms = ctx.now_ms();
    // Checked first, as SET PX checks it: an end past 64-bit milliseconds is an error whoever
    // holds the key.
    goblin_core::grant::lock_end(args.ms, now_ms)?;
    match goblin_core::grant::take(grant::lock_key(key), args.token.as_bytes()) {
        Take::Takes => {}
        Take::Held => return Ok(None),
        Take::WrongType => return Err(CommandError::WrongType),
    }
    let lock = grant::Lock {
        token: args.token.as_bytes(),
        ms: args.ms,
        fence: args.fence,
    };
    let token = grant::lock(ctx, key, args.key, lock, now_ms)?;
    Ok(Some(granted(token)))
}

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
            ArgDoc::pure_token(c"fence", "FENCE")
                .since(c"0.4.0")
                .summary(c"Reply the grant's fencing token instead of OK.")
                .optional(),
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
        waiting::serve_first(ctx, args.key);
        let mut key = ctx.open_key(args.key);
        match take_now(ctx, &mut key, &args)? {
            Some(reply) => {
                ACQUIRED.add(1);
                Ok(reply)
            }
            None => {
                REFUSED.add(1);
                Ok(Reply::Null)
            }
        }
    }
}
