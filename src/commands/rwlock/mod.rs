//! The readers-writer lock's commands, one file each, and what they share: the parse of `key
//! token milliseconds [FENCE]`, the key read as the core's `rwlock` reads it, and the two
//! grants, a reader's and a writer's, which the commands and the line (`crate::waiting`) both
//! make, in one order: check the fence, write, then mint or keep the token.
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

use goblin_core::rwlock::{self, Held, Holders, How, Mode, COUNTED};
use goblin_core::waitlist::plan::Plan;
use goblin_core::waitlist::{LineId, WaitLists, WaiterId, Want};
use goblin_core::zwindow::SortedWindow;

use super::{fence_option, granted, lease_ms};
use crate::effects::{self, Deletion};
use crate::error::{self, CommandError};
use crate::fencing::{self, Fence, Holder};
use crate::server::command::ArgDoc;
use crate::server::stats::Counter;
use crate::server::{Arg, Args, Ctx, Key, KeyKind, Reply};
use crate::waiting;

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

/// `FENCE` as COMMAND DOCS gives it, for every acquire of the family.
pub(crate) const FENCE_DOC: ArgDoc = ArgDoc::pure_token(c"fence", "FENCE")
    .summary(c"Reply the grant's fencing token instead of OK.")
    .optional();

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

/// The key as `rwlock::take` reads it for `token` asking for `mode` at `now_ms`. Reads only:
/// the lapsed read leases count for nobody, and are removed by the grant that writes.
pub(crate) fn holders(key: &Key<'_>, token: Arg<'_>, mode: Mode, now_ms: i64) -> Holders {
    match key.kind() {
        KeyKind::Empty => Holders::Free,
        KeyKind::String => Holders::Writer {
            caller: key.string() == Some(token.as_bytes()),
        },
        KeyKind::SortedSet => rwlock::readers(key, Some(&token), now_ms, mode),
        KeyKind::Other => Holders::Other,
    }
}

/// When a lease of `ms` taken now ends: the call's error if past what a score holds exactly.
pub(crate) fn lease_end(now_ms: i64, ms: i64) -> Result<i64, CommandError> {
    rwlock::lease_end(now_ms, ms).ok_or(CommandError::InvalidExpire)
}

/// A newcomer asking for `mode` (GOBLIN.RLOCK, GOBLIN.WLOCK, and the blocking ones before they
/// wait), once its key's line has been served: its grant's reply if the key lets it in now, as
/// `rwlock::take` decides; `None` (nothing written) if not. Also the key as it read it, for a
/// blocking call to wait on.
pub(crate) fn take_now(
    ctx: &Ctx,
    key: &mut Key<'_>,
    args: &RwArgs<'_>,
    mode: Mode,
    someone_waits: bool,
) -> Result<(Option<Reply<'static>>, Holders), CommandError> {
    let now_ms = ctx.now_ms();
    let holders = holders(key, args.token, mode, now_ms);
    // The key's type first, then what is computed from the clock (the contract's order).
    if holders == Holders::Other {
        return Err(CommandError::WrongType);
    }
    let end_ms = lease_end(now_ms, args.ms)?;
    let how = rwlock::take(mode, holders, someone_waits).map_err(|_| CommandError::WrongType)?;
    let Some(how) = how else {
        return Ok((None, holders));
    };
    let grant = Grant {
        name: args.key,
        token: args.token,
        end_ms,
        how,
        fence: args.fence,
        now_ms,
    };
    let token = match mode {
        Mode::Read => grant.reader(ctx, key)?,
        Mode::Write => grant.writer(ctx, key)?,
    };
    Ok((Some(granted(token)), holders))
}

/// One grant, as `rwlock::take` allowed it: `token` holds `name` until `end_ms`.
pub(crate) struct Grant<'a> {
    pub name: Arg<'a>,
    pub token: Arg<'a>,
    pub end_ms: i64,
    pub how: How,
    /// `FENCE`: the grant's fencing token is its reply.
    pub fence: bool,
    pub now_ms: i64,
}

impl Grant<'_> {
    /// A reader's grant: a new reader, a reader renewing (it keeps its fencing token), or the
    /// writer demoted (its string gives way to the readers' set, with a new token). The fence
    /// is checked before anything is written; its token, if asked for.
    pub fn reader(&self, ctx: &Ctx, key: &mut Key<'_>) -> Result<Option<i64>, CommandError> {
        if key.kind() == KeyKind::Other {
            return Err(CommandError::WrongType);
        }
        let fence = Fence::asked(ctx, self.fence, self.name, Holder::lease(self.token))?;
        match key.kind() {
            KeyKind::String => effects::deleted(ctx, key, Deletion::Unlink),
            KeyKind::SortedSet => {
                effects::evict(ctx, key, rwlock::lapsed_through(self.now_ms));
            }
            KeyKind::Empty | KeyKind::Other => {}
        }
        effects::reader_held(ctx, key, self.token, self.end_ms);
        Ok(fence.map(|fence| fence.grant(ctx, self.how == How::Again, Some(self.end_ms))))
    }

    /// A writer's grant: a new writer, the writer renewing (its lease moves; it keeps its
    /// fencing token), or the last reader promoted (the readers' set gives way to its string;
    /// its read lease's token goes, and it gets a new one). The fence is checked before anything
    /// is written; its token, if asked for.
    pub fn writer(&self, ctx: &Ctx, key: &mut Key<'_>) -> Result<Option<i64>, CommandError> {
        if key.kind() == KeyKind::Other {
            return Err(CommandError::WrongType);
        }
        let fence = Fence::asked(ctx, self.fence, self.name, Holder::lock(self.token))?;
        let token = self.token.as_bytes();
        match key.kind() {
            KeyKind::String => effects::expires_at(ctx, key, self.end_ms),
            KeyKind::SortedSet => {
                effects::readers_replaced(ctx, key, token, self.end_ms);
                if self.how == How::Switch {
                    fencing::lease_released(ctx, self.name, token);
                }
            }
            KeyKind::Empty | KeyKind::Other => {
                effects::lock_taken(ctx, key, token, Some(self.end_ms));
            }
        }
        Ok(fence.map(|fence| fence.grant(ctx, self.how == How::Again, Some(self.end_ms))))
    }
}

/// A waiter's grant in line (`crate::waiting`), as its own call would write it: `Ok` with its
/// fencing token, or `Err` (nothing written) if the token cannot be minted; `None` if the key
/// does not let it in after all (it waits on); `Err` too for a lease end past what a score
/// holds, as the command refuses it.
pub(crate) fn granted_in_line(
    ctx: &Ctx,
    key: &mut Key<'_>,
    name: Arg<'_>,
    want: &Want,
    now_ms: i64,
) -> Option<Result<Option<i64>, CommandError>> {
    let (mode, token, ms, fence) = match want {
        Want::Read { token, ms, fence } => (Mode::Read, token, *ms, *fence),
        Want::Write {
            token, ms, fence, ..
        } => (Mode::Write, token, *ms, *fence),
        Want::Lock { .. } | Want::Lease { .. } => return None,
    };
    let token = ctx.string(token);
    let token = token.arg();
    // A lease end past what a score holds: refused in line as the command refuses it.
    let Some(end_ms) = rwlock::lease_end(now_ms, ms) else {
        return Some(Err(CommandError::InvalidExpire));
    };
    let how = rwlock::take(mode, holders(key, token, mode, now_ms), false).ok()??;
    let grant = Grant {
        name,
        token,
        end_ms,
        how,
        fence,
        now_ms,
    };
    Some(match mode {
        Mode::Read => grant.reader(ctx, key),
        Mode::Write => grant.writer(ctx, key),
    })
}

/// A look at a line where readers or writers wait (`crate::waiting`): the lapsed read leases
/// removed, the key read, and the plan (`rwlock::serve`), with the readers waiting to be
/// promoted whose read lease still runs served first.
pub(crate) fn line_plan(
    ctx: &Ctx,
    key: &mut Key<'_>,
    lists: &WaitLists,
    line: LineId,
    now_ms: i64,
    out_of_memory: bool,
) -> Plan {
    let lapsed = rwlock::lapsed_through(now_ms);
    let evicted = (key.kind() == KeyKind::SortedSet).then(|| effects::evict(ctx, key, lapsed));
    let held = match key.kind() {
        KeyKind::Empty => Held::Free,
        KeyKind::String => Held::Writer {
            expires_in_ms: key.ttl_ms(),
        },
        // More lapsed leases than one eviction takes, and none running: the set is not gone yet
        // (a waiting lock's string could not be written over it). The rest go on the next look,
        // a millisecond later.
        KeyKind::SortedSet
            if evicted.is_some_and(|eviction| !eviction.complete)
                && key.count_above(lapsed, 1) == 0 =>
        {
            Held::Other {
                expires_in_ms: Some(0),
            }
        }
        KeyKind::SortedSet => Held::Readers {
            live: key.count_above(lapsed, COUNTED),
            next_lapse_in_ms: rwlock::next_lapse_in_ms(key, now_ms),
        },
        KeyKind::Other => Held::Other {
            expires_in_ms: key.ttl_ms(),
        },
    };
    let promoting: Vec<WaiterId> = rwlock::waiting_promotions(lists, line)
        .into_iter()
        .filter(|(_, token)| reads(ctx, key, token, now_ms))
        .map(|(id, _)| id)
        .collect();
    rwlock::serve(lists, line, held, &promoting, out_of_memory)
}

/// Whether `token` holds a read lease of `key` that runs at `now_ms`.
fn reads(ctx: &Ctx, key: &Key<'_>, token: &[u8], now_ms: i64) -> bool {
    key.kind() == KeyKind::SortedSet
        && key
            .score(ctx.string(token).arg())
            .is_some_and(|score| rwlock::runs(score, now_ms))
}

/// Gives a read lease back (GOBLIN.RWUNLOCK, or a waiter's grant taken back when the waiter
/// left before its reply): its member, and its fencing token. Whether it was there.
pub(crate) fn reader_taken_back(ctx: &Ctx, key: &mut Key<'_>, name: Arg<'_>, token: &[u8]) -> bool {
    if key.kind() != KeyKind::SortedSet {
        return false;
    }
    let member = ctx.string(token);
    let released = effects::reader_released(ctx, key, member.arg());
    if released {
        fencing::lease_released(ctx, name, token);
    }
    released
}

/// The arguments of the acquires that do not wait (GOBLIN.RLOCK, GOBLIN.WLOCK).
pub(crate) const ACQUIRE_ARGS: &[ArgDoc] = &[
    ArgDoc::key(c"key"),
    ArgDoc::string(c"token"),
    ArgDoc::integer(c"milliseconds"),
    FENCE_DOC,
];

/// The arguments of the acquires that wait (GOBLIN.BRLOCK, GOBLIN.BWLOCK): `timeout` before
/// `FENCE`.
pub(crate) const BLOCKING_ACQUIRE_ARGS: &[ArgDoc] = &[
    ArgDoc::key(c"key"),
    ArgDoc::string(c"token"),
    ArgDoc::integer(c"milliseconds"),
    ArgDoc::double(c"timeout"),
    FENCE_DOC,
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
    waiting::serve_first(ctx, args.key);
    let (someone_waits, _) = waiting::ahead(ctx, args.key);
    let mut key = ctx.open_key(args.key);
    match take_now(ctx, &mut key, args, mode, someone_waits)?.0 {
        Some(reply) => {
            acquired.add(1);
            Ok(reply)
        }
        None => {
            refused.add(1);
            Ok(Reply::Null)
        }
    }
}

/// GOBLIN.BRLOCK's and GOBLIN.BWLOCK's call, asking for `mode`: granted at once as the acquire
/// that does not wait would grant it (counted as `acquired`), or nil where the caller cannot
/// block, or a place in line (`waited`). A reader asking to write while another reader waits
/// to be promoted is refused (`-DEADLOCK`): each would wait for the other for ever.
pub(crate) fn acquire_or_wait(
    ctx: &Ctx,
    args: &BlockingArgs<'_>,
    mode: Mode,
    acquired: &Counter,
    waited: &Counter,
) -> Result<Reply<'static>, CommandError> {
    waiting::timeout_fits(ctx, args.timeout_ms)?;
    // A newcomer comes after the callers already waiting in line.
    waiting::serve_first(ctx, args.lock.key);
    let (someone_waits, promotions) = waiting::ahead(ctx, args.lock.key);
    let mut key = ctx.open_key(args.lock.key);
    let (granted, holders) = take_now(ctx, &mut key, &args.lock, mode, someone_waits)?;
    if let Some(reply) = granted {
        acquired.add(1);
        return Ok(reply);
    }
    if ctx.placement().no_blocking {
        return Ok(Reply::Null);
    }
    if mode == Mode::Write && would_deadlock(ctx, &key, args.lock.token, holders, &promotions) {
        return Err(error::rwlock::DEADLOCK);
    }
    drop(key);
    let reply = wait(ctx, &args.lock, mode, holders, args.timeout_ms);
    if reply == Reply::Blocked {
        waited.add(1);
    }
    Ok(reply)
}

/// Whether a blocking write on `key` (held as `holders` for the caller) would wait for ever:
/// the caller reads beside others, and another reader whose lease runs waits to be promoted
/// (`promotions`: the tokens waiting so, `rwlock::ahead`).
fn would_deadlock(
    ctx: &Ctx,
    key: &Key<'_>,
    token: Arg<'_>,
    holders: Holders,
    promotions: &[Vec<u8>],
) -> bool {
    let now_ms = ctx.now_ms();
    let another = promotions
        .iter()
        .any(|other| other.as_slice() != token.as_bytes() && reads(ctx, key, other, now_ms));
    rwlock::deadlocks(holders, another)
}

/// What a blocking acquire does when the key does not let it in now (its key closed): answers
/// at once where it cannot block (nil), or waits in line; a writer that reads now waits to be
/// promoted.
fn wait(
    ctx: &Ctx,
    args: &RwArgs<'_>,
    mode: Mode,
    holders: Holders,
    timeout_ms: i64,
) -> Reply<'static> {
    let (token, ms, fence) = (args.token.as_bytes().to_vec(), args.ms, args.fence);
    let want = match mode {
        Mode::Read => Want::Read { token, ms, fence },
        Mode::Write => Want::Write {
            token,
            ms,
            fence,
            promotes: matches!(holders, Holders::Readers { caller: true, .. }),
        },
    };
    if waiting::wait(ctx, args.key, want, timeout_ms) {
        Reply::Blocked
    } else {
        Reply::Null
    }
}
