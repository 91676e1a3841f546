//! The readers-writer lock's commands, one file each, and what they share: the parse of `key
//! token milliseconds [FENCE]`, and the acquires, which decide with the core's `rwlock` and
//! grant as the line grants a waiter (`crate::grant::RwLease`, the key read by
//! `crate::grant::holders`).
//!
//! The key is free (no key), a writer's string holding its token with a PX lease (GOBLIN.LOCK's
//! lock), or the readers' sorted set of tokens scored by their leases' ends in Unix
//! milliseconds, expiring with the last of them (`goblin_core::rwlock`).

pub mod brlock;
pub mod bwlock;
pub mod rlock;
pub mod rwextend;
pub mod rwheld;
pub mod rwunlock;
pub mod wlock;

use std::ffi::CStr;

use goblin_core::rwlock::{self, Holders, Mode};
use goblin_core::waitlist::Want;

use super::{fence_arg, fence_option, granted, lease_ms, tally};
use crate::error::{self, CommandError};
use crate::grant::{self, RwLease};
use crate::server::command::ArgDoc;
use crate::server::stats::Counter;
use crate::server::{Arg, Args, Ctx, Key, Reply};
use crate::waiting::{self, Ahead, Decision, Waits};

/// `key token milliseconds [FENCE]`, as every acquire of the family takes it (the blocking
/// ones with their `timeout` before `FENCE`).
pub struct RwArgs<'call> {
    pub key: Arg<'call>,
    pub token: Arg<'call>,
    /// The lease: at least 1 ms. A readers-writer lock has no lease-less mode: a reader that
    /// dies would hold the key from every writer for ever.
    pub ms: i64,
    pub fence: bool,
}

/// Reads `key token milliseconds`, then `timeout` if `blocking`, then `[FENCE]`.
pub(crate) fn parse<'call>(
    mut args: Args<'_, 'call>,
    blocking: bool,
) -> Result<(RwArgs<'call>, i64), CommandError> {
    let (key, token) = (args.next()?, args.next()?);
    let ms = lease_ms(args.next()?)?;
    let timeout_ms = if blocking {
        args.next()?.to_timeout_ms()?
    } else {
        0
    };
    let fence = fence_option(key, args.rest())?;
    let args = RwArgs {
        key,
        token,
        ms,
        fence,
    };
    Ok((args, timeout_ms))
}

/// When a lease of `ms` taken now ends: the call's error if past what a score holds exactly.
pub(crate) fn lease_end(now_ms: i64, ms: i64) -> Result<i64, CommandError> {
    rwlock::lease_end(now_ms, ms).ok_or(CommandError::InvalidExpire)
}

/// A newcomer asking for `mode` (GOBLIN.RLOCK, GOBLIN.WLOCK, and the blocking ones before they
/// wait), once its key's line has been served: its grant's reply if the key lets it in now, as
/// `rwlock::take` decides (the grant's fencing token, if asked: `granted` makes the reply);
/// `None` (nothing written) if not. Also the key as it read it, for a blocking call to wait on.
fn take_now(
    ctx: &Ctx,
    key: &mut Key<'_>,
    args: &RwArgs<'_>,
    mode: Mode,
    someone_waits: bool,
) -> Result<(Option<Option<i64>>, Holders), CommandError> {
    let now_ms = ctx.now_ms();
    // A reader's own lease tells only whether it goes before those who wait (it reads already)
    // and keeps its fencing token: where nobody waits and no token is asked, a reader is let in
    // alike, its ZADD moving its lease if it had one, and the set is not searched for it.
    let own_lease = someone_waits || args.fence;
    let kind = key.kind();
    let holders = grant::holders(key, kind, args.token, mode, now_ms, own_lease);
    // The key's type first, then what is computed from the clock (the contract's order).
    if holders == Holders::Other {
        return Err(CommandError::WrongType);
    }
    let end_ms = lease_end(now_ms, args.ms)?;
    let how = rwlock::take(mode, holders, someone_waits).map_err(|_| CommandError::WrongType)?;
    let Some(how) = how else {
        return Ok((None, holders));
    };
    let lease = RwLease {
        name: args.key,
        token: args.token,
        end_ms,
        how,
        fence: args.fence,
        now_ms,
        kind,
    };
    Ok((Some(lease.grant(ctx, key, mode)?), holders))
}

/// The arguments of the acquires that do not wait (GOBLIN.RLOCK, GOBLIN.WLOCK).
pub(crate) const ACQUIRE_ARGS: &[ArgDoc] = &[
    ArgDoc::key(c"key"),
    ArgDoc::string(c"token"),
    ArgDoc::integer(c"milliseconds"),
    fence_arg(c"Reply the grant's fencing token instead of OK.", None),
];

/// The arguments of the acquires that wait (GOBLIN.BRLOCK, GOBLIN.BWLOCK): `timeout` before
/// `FENCE`.
pub(crate) const BLOCKING_ACQUIRE_ARGS: &[ArgDoc] = &[
    ArgDoc::key(c"key"),
    ArgDoc::string(c"token"),
    ArgDoc::integer(c"milliseconds"),
    ArgDoc::double(c"timeout"),
    fence_arg(c"Reply the grant's fencing token instead of OK.", None),
];

/// A blocking acquire's arguments: the lock's, and its timeout.
pub struct BlockingArgs<'call> {
    pub lock: RwArgs<'call>,
    pub timeout_ms: i64,
}

/// `key token milliseconds timeout [FENCE]`.
pub(crate) fn parse_blocking<'call>(
    args: Args<'_, 'call>,
) -> Result<BlockingArgs<'call>, CommandError> {
    let (lock, timeout_ms) = parse(args, true)?;
    Ok(BlockingArgs { lock, timeout_ms })
}

/// GOBLIN.RLOCK's and GOBLIN.WLOCK's call, asking for `mode`: never before a caller waiting in
/// line; the grant's reply (counted as `acquired`), or nil (`refused`).
pub(crate) fn acquire_now(
    ctx: &Ctx,
    args: &RwArgs<'_>,
    mode: Mode,
    acquired: &Counter,
    refused: &Counter,
) -> Result<Reply<'static>, CommandError> {
    let reply = waiting::acquire(ctx, args.key, None, |key, ahead| {
        let (token, _) = take_now(ctx, key, args, mode, ahead.someone_waits)?;
        // Matched, not `map_or`: a nil made and dropped on every grant costs a reply's drop.
        Ok(Decision::Now(match token {
            Some(token) => granted(token),
            None => Reply::Null,
        }))
    })?;
    tally(&reply, acquired, None, Some(refused));
    Ok(reply)
}

/// GOBLIN.BRLOCK's and GOBLIN.BWLOCK's call (`command`), asking for `mode`: granted at once as
/// the acquire that does not wait would grant it (counted as `acquired`), or nil where the
/// caller cannot block, or a place in line (`waited`). A reader asking to write while another
/// reader waits to be promoted is refused (`-DEADLOCK`): each would wait for the other for ever.
pub(crate) fn acquire_or_wait(
    ctx: &Ctx,
    args: &BlockingArgs<'_>,
    mode: Mode,
    command: &'static CStr,
    acquired: &Counter,
    waited: &Counter,
) -> Result<Reply<'static>, CommandError> {
    waiting::timeout_fits(ctx, args.timeout_ms)?;
    let waits = Waits {
        timeout_ms: args.timeout_ms,
        command,
    };
    let lock = &args.lock;
    let reply = waiting::acquire(ctx, lock.key, Some(waits), |key, ahead| {
        let (token, holders) = take_now(ctx, key, lock, mode, ahead.someone_waits)?;
        if let Some(token) = token {
            return Ok(Decision::Now(granted(token)));
        }
        if ctx.placement().no_blocking {
            return Ok(Decision::Now(Reply::Null));
        }
        if mode == Mode::Write && would_deadlock(ctx, key, lock.token, holders, ahead) {
            return Err(error::rwlock::DEADLOCK);
        }
        let (token, ms, fence) = (lock.token.as_bytes().to_vec(), lock.ms, lock.fence);
        Ok(Decision::Wait(match mode {
            Mode::Read => Want::Read { token, ms, fence },
            Mode::Write => Want::Write {
                token,
                ms,
                fence,
                // A writer that reads now waits to be promoted.
                promotes: matches!(holders, Holders::Readers { caller: true, .. }),
            },
        }))
    })?;
    tally(&reply, acquired, Some(waited), None);
    Ok(reply)
}

/// Whether a blocking write on `key` (held as `holders` for the caller) would wait for ever:
/// the caller reads beside others, and another reader whose lease runs waits to be promoted
/// (`ahead.promotions`: the tokens waiting so).
fn would_deadlock(
    ctx: &Ctx,
    key: &Key<'_>,
    token: Arg<'_>,
    holders: Holders,
    ahead: &Ahead,
) -> bool {
    let now_ms = ctx.now_ms();
    let another = ahead
        .promotions
        .iter()
        .any(|other| other.as_slice() != token.as_bytes() && grant::reads(ctx, key, other, now_ms));
    rwlock::deadlocks(holders, another)
}
