//! The lock family: a token lock is a string holding its holder's token, with a PX lease.
//! GOBLIN.LOCK takes it now, GOBLIN.BLOCK takes it or waits in line for it, GOBLIN.EXTEND
//! extends the holder's lease, GOBLIN.CAD gives it back (and a GOBLIN.ZWINDOW lease). What
//! they share is here: the lease argument, `FENCE`, and a lock taken now.

pub mod block;
pub mod cad;
pub mod extend;
pub mod lock;

use goblin_core::grant::Take;

use crate::error::CommandError;
use crate::grant;
use crate::server::{Arg, Ctx, Key, Reply};

pub struct LockArgs<'call> {
    pub key: Arg<'call>,
    pub token: Arg<'call>,
    pub ms: i64,
    /// `FENCE`: reply the grant's fencing token (`crate::fencing`).
    pub fence: bool,
}

// What the lock family shares with the readers-writer lock is `commands`'.
pub use super::{fence_option, granted, lease_ms};

/// A lock's lease: as [`lease_ms`], or 0 for none (the key is held until it is released, as
/// redis-py's `Lock` with `timeout=None` holds it: a plain `SET NX`).
pub fn lock_lease_ms(arg: Arg<'_>) -> Result<i64, CommandError> {
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
pub fn take_now(
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
