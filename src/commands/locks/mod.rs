//! The lock family: a token lock is a string holding its holder's token, with a PX lease.
//! GOBLIN.LOCK takes it now, GOBLIN.BLOCK takes it or waits in line for it, GOBLIN.EXTEND
//! extends the holder's lease, GOBLIN.CAD gives it back (and a GOBLIN.ZWINDOW lease). What
//! they share is here: the lease argument, `FENCE`, and a lock taken now.

pub mod block;
pub mod cad;
pub mod extend;
pub mod lock;

use goblin_core::grant::{LockKey, Take};

use crate::error::CommandError;
use crate::grant;
use crate::server::{Arg, Ctx, Key};

pub struct LockArgs<'call> {
    pub key: Arg<'call>,
    pub token: Arg<'call>,
    pub ms: i64,
    /// `FENCE`: reply the grant's fencing token (`crate::fencing`).
    pub fence: bool,
}

// What the lock family shares with the readers-writer lock is `commands`'.
pub use super::{fence_option, granted, lease_of};

/// A lock's lease: as [`lease_ms`], or 0 for none (the key is held until it is released, as
/// redis-py's `Lock` with `timeout=None` holds it: a plain `SET NX`). The argument read once.
pub fn lock_lease_ms(arg: Arg<'_>) -> Result<i64, CommandError> {
    match arg.to_i64() {
        Some(0) => Ok(0),
        read => lease_of(read),
    }
}

/// Takes the lock for `args.token` if nobody holds it, or if the caller holds it already
/// (`grant::take`), as `crate::grant::lock` grants it: with its fencing token if asked (a new
/// one for a new holder, its own for a holder again; `granted` makes the reply); `None`
/// (nothing written) if someone else holds it, or an error for a key of another type, or a
/// token that cannot be minted. The caller has served the line first.
pub fn take_now(
    ctx: &Ctx,
    key: &mut Key<'_>,
    args: &LockArgs<'_>,
) -> Result<Option<Option<i64>>, CommandError> {
    let now_ms = ctx.now_ms();
    // Checked first, as SET PX checks it: an end past 64-bit milliseconds is an error whoever
    // holds the key.
    goblin_core::grant::lock_end(args.ms, now_ms)?;
    // The key read once, for the decision and the grant; the token only against a lock held
    // (a free key is taken, and a key of another type refused, whatever the token).
    let held = grant::lock_key(key);
    let token = match held {
        LockKey::String(_) => args.token.as_bytes(),
        LockKey::Empty | LockKey::Other => &[],
    };
    match goblin_core::grant::take(held, token) {
        Take::Takes => {}
        Take::Held => return Ok(None),
        Take::WrongType => return Err(CommandError::WrongType),
    }
    let decided = goblin_core::grant::lock(held, token, args.ms, now_ms)?;
    let lock = grant::Lock {
        token: args.token,
        ms: args.ms,
        fence: args.fence,
    };
    grant::lock_granted(ctx, key, args.key, lock, decided).map(Some)
}
