//! One grant per kind of holder, made alike by a holder's own command and by the line
//! (`crate::waiting`): a lock's (`lock`: GOBLIN.LOCK, GOBLIN.BLOCK, a lock waiter's turn), a
//! lease's (`Lease`: GOBLIN.ZWINDOW, GOBLIN.BZWINDOW, a lease waiter's turn), and a
//! readers-writer lock's reader's and writer's (`RwLease`: GOBLIN.RLOCK, GOBLIN.WLOCK, their
//! blocking twins, GOBLIN.RWEXTEND, a reader's or writer's turn). Each checks every key it will
//! write, the fencing tokens' included, before it writes anything, writes through `effects`, then
//! mints the holder's token or keeps it; what it decides (when the lease ends, whether it renews)
//! is `goblin_core::grant`'s and `goblin_core::rwlock`'s. So a grant made in line and the same
//! grant made by a command write the same keys, values, expiries, tokens, events and effects.
//!
//! The line asks for a waiter's grant by what it waits for (`in_line`), and gives back the
//! grants of waiters gone before their reply went out (`taken_back`): a new kind of holder is one
//! more function here, and one more arm of each.

use goblin_core::clock::seconds_of;
use goblin_core::grant::{self, LockGrant, LockKey};
use goblin_core::rwlock::{self, Holders, How, Mode};
use goblin_core::waitlist::{plan, Want};
use goblin_core::zwindow::{self, WindowExpiry, Zadded};
use smallvec::SmallVec;

use crate::effects::{self, Deletion};
use crate::error::CommandError;
use crate::fencing::{self, Fence, Holder};
use crate::server::{Arg, Ctx, Key, KeyKind, OwnedString};

/// A lock request: its token (one of the call's strings, which the grant replicates by
/// reference), its lease (milliseconds, 0 for none), and `FENCE`.
#[derive(Clone, Copy)]
pub struct Lock<'a> {
    pub token: Arg<'a>,
    pub ms: i64,
    pub fence: bool,
}

/// The key as a lock request sees it (`grant::take`), as the line's plan sees it too.
pub fn lock_key<'k>(key: &'k Key<'_>) -> LockKey<'k> {
    match key.kind() {
        KeyKind::Empty => LockKey::Empty,
        KeyKind::String => LockKey::String(key.string_or_empty().unwrap_or_default()),
        KeyKind::SortedSet | KeyKind::Other => LockKey::Other,
    }
}

/// The lock `key` (named `name`) granted to `lock` at `now_ms`, the request taking the key as it
/// is (`grant::take`, which the caller asked): written as `SET key token [PXAT end]`, and its
/// fencing token minted, or kept by its holder again. Nothing is written on an error: a lease
/// end past 64-bit milliseconds, or a token the server cannot mint.
pub fn lock(
    ctx: &Ctx,
    key: &mut Key<'_>,
    name: Arg<'_>,
    lock: Lock<'_>,
    now_ms: i64,
) -> Result<Option<i64>, CommandError> {
    let granted = grant::lock(lock_key(key), lock.token.as_bytes(), lock.ms, now_ms)?;
    lock_granted(ctx, key, name, lock, granted)
}

/// As `lock`, its grant (`grant::lock`) made by the caller from the key as it read it.
pub fn lock_granted(
    ctx: &Ctx,
    key: &mut Key<'_>,
    name: Arg<'_>,
    lock: Lock<'_>,
    granted: LockGrant,
) -> Result<Option<i64>, CommandError> {
    let fence = Fence::asked(ctx, lock.fence, name, Holder::Lock(lock.token))?;
    effects::lock_taken(ctx, key, lock.token, granted.at_ms, granted.renewal);
    Ok(fence.map(|fence| fence.grant(ctx, granted.renewal, granted.at_ms)))
}

/// A holder's slots in a window: `PERMITS n` (1 without it) named as `SEPARATOR sep` says
/// (`zwindow::permit_member`).
#[derive(Clone, Copy)]
pub struct Permits<'a> {
    pub count: usize,
    pub separator: Option<&'a [u8]>,
}

/// The members a holder's slots are, made for this call: `member` itself first, unless a
/// separator names every slot (`member`, the separator, the index from 0), then its twins.
pub struct Slots<'a> {
    member: Option<Arg<'a>>,
    named: SmallVec<[OwnedString<'a>; 3]>,
}

impl<'a> Slots<'a> {
    pub fn of(ctx: &'a Ctx, member: Arg<'a>, permits: Permits<'_>) -> Self {
        let first = usize::from(permits.separator.is_none());
        let named = (first..permits.count)
            .map(|index| {
                ctx.string(&zwindow::permit_member(
                    member.as_bytes(),
                    index,
                    permits.separator,
                ))
            })
            .collect();
        Slots {
            member: permits.separator.is_none().then_some(member),
            named,
        }
    }

    /// Every member, the first naming the holder.
    pub fn members(&self) -> SmallVec<[Arg<'_>; 4]> {
        self.member
            .into_iter()
            .chain(self.named.iter().map(OwnedString::arg))
            .collect()
    }
}

/// A lease request: its member and slots, its window, and `FENCE`.
#[derive(Clone, Copy)]
pub struct Lease<'a> {
    pub member: Arg<'a>,
    pub window: f64,
    pub permits: Permits<'a>,
    pub fence: bool,
}

impl<'a> Lease<'a> {
    /// What the grant needs, read and checked before anything is written: its expiry (an error
    /// past 64-bit milliseconds), and its fencing tokens (`FENCE`). The caller then decides
    /// whether it grants (GOBLIN.ZWINDOW evicts and seats it; the line's plan counts the room)
    /// and `write`s it.
    pub fn ask<'c>(
        self,
        ctx: &'c Ctx,
        name: Arg<'_>,
        now_ms: i64,
    ) -> Result<AskedLease<'c, 'a>, CommandError> {
        let expiry = grant::lease_end(self.window, now_ms)?;
        let fence = Fence::asked(ctx, self.fence, name, Holder::lease(self.member))?;
        Ok(AskedLease { expiry, fence })
    }
}

/// A lease grant asked for (`Lease::ask`): nothing written yet.
pub struct AskedLease<'c, 'a> {
    expiry: WindowExpiry,
    fence: Option<Fence<'c, 'a>>,
}

impl AskedLease<'_, '_> {
    /// Writes the grant on `key`: the holder's `slots` recorded at `now` (seconds, the score;
    /// the caller's own clock for GOBLIN.ZWINDOW) with the window's expiry, and its fencing
    /// token minted, or kept by a member that `holds` its slot inside the window (a renewal,
    /// `zwindow::holds`). What the set did for the first slot, and the token.
    pub fn write(
        &self,
        ctx: &Ctx,
        key: &mut Key<'_>,
        slots: &Slots<'_>,
        now: f64,
        holds: bool,
    ) -> (Zadded, Option<i64>) {
        let granted = grant::lease(self.expiry, holds);
        let zadded = effects::admitted(ctx, key, now, &slots.members(), granted.expiry);
        let token = self.fence.as_ref().map(|fence| match granted.expiry {
            WindowExpiry::At(at_ms) => fence.grant(ctx, granted.renewal, Some(at_ms)),
            // A window of 0 or less keeps nothing: its grant is gone as it is made.
            WindowExpiry::Immediately => fence.mint(ctx),
        });
        (zadded, token)
    }
}

/// The key as a readers-writer request reads it (`rwlock::take`): for `token` asking for `mode`
/// at `now_ms`, the key of `kind` (as the caller read it, and hands on to the grant: `RwLease`).
/// Reads only: the lapsed read leases count for nobody, and are removed by the grant that
/// writes. `own_lease`: whether a reader's own read lease is looked for in the readers' set (a
/// writer's always is); where it is not, the caller reads as a new reader.
pub fn holders(
    key: &Key<'_>,
    kind: KeyKind,
    token: Arg<'_>,
    mode: Mode,
    now_ms: i64,
    own_lease: bool,
) -> Holders {
    match kind {
        KeyKind::Empty => Holders::Free,
        KeyKind::String => Holders::Writer {
            caller: key.string_or_empty() == Some(token.as_bytes()),
        },
        KeyKind::SortedSet => {
            let caller = (own_lease || mode == Mode::Write).then_some(&token);
            rwlock::readers(key, caller, now_ms, mode)
        }
        KeyKind::Other => Holders::Other,
    }
}

/// Whether `token` holds a read lease of `key` that runs at `now_ms`.
pub fn reads(ctx: &Ctx, key: &Key<'_>, token: &[u8], now_ms: i64) -> bool {
    key.kind() == KeyKind::SortedSet
        && key
            .score(ctx.string(token).arg())
            .is_some_and(|score| rwlock::runs(score, now_ms))
}

/// A readers-writer lock's lease, as `rwlock::take` allowed it: `token` holds `name` until
/// `end_ms`, as a reader (`reader`) or the writer (`writer`).
pub struct RwLease<'a> {
    pub name: Arg<'a>,
    pub token: Arg<'a>,
    pub end_ms: i64,
    pub how: How,
    /// `FENCE`: the grant's fencing token is its reply.
    pub fence: bool,
    pub now_ms: i64,
    /// The key's kind as the caller read it, before the grant writes (not asked again).
    pub kind: KeyKind,
}

impl RwLease<'_> {
    /// A reader's grant: a new reader, a reader renewing (it keeps its fencing token), or the
    /// writer demoted (its string gives way to the readers' set, with a new token). The key's
    /// type and the fence are checked before anything is written; its token, if asked for.
    pub fn reader(&self, ctx: &Ctx, key: &mut Key<'_>) -> Result<Option<i64>, CommandError> {
        let kind = self.kind;
        if kind == KeyKind::Other {
            return Err(CommandError::WrongType);
        }
        let fence = Fence::asked(ctx, self.fence, self.name, Holder::lease(self.token))?;
        match kind {
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
    /// its read lease's token goes, and it gets a new one). The key's type and the fence are
    /// checked before anything is written; its token, if asked for.
    pub fn writer(&self, ctx: &Ctx, key: &mut Key<'_>) -> Result<Option<i64>, CommandError> {
        let kind = self.kind;
        if kind == KeyKind::Other {
            return Err(CommandError::WrongType);
        }
        let fence = Fence::asked(ctx, self.fence, self.name, Holder::Lock(self.token))?;
        match kind {
            KeyKind::String => effects::expires_at(ctx, key, self.end_ms),
            KeyKind::SortedSet => {
                effects::readers_replaced(ctx, key, self.token, self.end_ms);
                if self.how == How::Switch {
                    fencing::lease_released(ctx, self.name, self.token.as_bytes());
                }
            }
            KeyKind::Empty | KeyKind::Other => {
                effects::lock_taken(ctx, key, self.token, Some(self.end_ms), false);
            }
        }
        Ok(fence.map(|fence| fence.grant(ctx, self.how == How::Again, Some(self.end_ms))))
    }

    /// The grant, in `mode`.
    pub fn grant(
        &self,
        ctx: &Ctx,
        key: &mut Key<'_>,
        mode: Mode,
    ) -> Result<Option<i64>, CommandError> {
        match mode {
            Mode::Read => self.reader(ctx, key),
            Mode::Write => self.writer(ctx, key),
        }
    }
}

/// Gives a read lease back (GOBLIN.RWUNLOCK, or a reader's grant taken back): its member, and
/// its fencing token. Whether it was there.
pub fn reader_released(ctx: &Ctx, key: &mut Key<'_>, name: Arg<'_>, token: &[u8]) -> bool {
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

/// A waiter's grant in line, at `now_ms` on `key` (named `name`), for what it waits for: the
/// very grant its own command would make, with its fencing token if it asked for one. An error
/// (nothing written) if it cannot be made now, in the words its command would get: a token the
/// server cannot mint, a lease end past what the key can hold, a key of another type where a
/// token is kept. `None` where a readers-writer waiter is not let in after all (it waits on).
pub fn in_line(
    ctx: &Ctx,
    key: &mut Key<'_>,
    name: Arg<'_>,
    want: &Want,
    now_ms: i64,
) -> Option<Result<Option<i64>, CommandError>> {
    match want {
        Want::Lock { token, ms, fence } => {
            let token = ctx.string(token);
            let request = Lock {
                token: token.arg(),
                ms: *ms,
                fence: *fence,
            };
            Some(lock(ctx, key, name, request, now_ms))
        }
        Want::Lease {
            member,
            window,
            permits,
            separator,
            fence,
            ..
        } => {
            let member = ctx.string(member);
            let lease = Lease {
                member: member.arg(),
                window: *window,
                permits: Permits {
                    count: *permits,
                    separator: separator.as_deref(),
                },
                fence: *fence,
            };
            let asked = match lease.ask(ctx, name, now_ms) {
                Ok(asked) => asked,
                Err(error) => return Some(Err(error)),
            };
            let slots = Slots::of(ctx, member.arg(), lease.permits);
            let now = seconds_of(now_ms);
            // A renewal as the command's seat reads it: the member inside its window.
            let holds = zwindow::holds(&*key, &member.arg(), zwindow::cutoff(now, *window));
            Some(Ok(asked.write(ctx, key, &slots, now, holds).1))
        }
        Want::Read { token, ms, fence }
        | Want::Write {
            token, ms, fence, ..
        } => {
            let mode = match want {
                Want::Read { .. } => Mode::Read,
                _ => Mode::Write,
            };
            let token = ctx.string(token);
            let token = token.arg();
            // A lease end past what a score holds: refused as the command refuses it.
            let Some(end_ms) = rwlock::lease_end(now_ms, *ms) else {
                return Some(Err(CommandError::InvalidExpire));
            };
            let kind = key.kind();
            let holders = holders(key, kind, token, mode, now_ms, true);
            let how = rwlock::take(mode, holders, false).ok()??;
            let lease = RwLease {
                name,
                token,
                end_ms,
                how,
                fence: *fence,
                now_ms,
                kind,
            };
            Some(lease.grant(ctx, key, mode))
        }
    }
}

/// Takes back the grants of waiters gone before their reply went out (`revoked`,
/// `plan::take_back`): the lock if it still holds one of their tokens, a reader's lease, their
/// members from the window (and a member's fencing token).
pub fn taken_back(ctx: &Ctx, key: &mut Key<'_>, name: Arg<'_>, revoked: &[Want]) {
    if revoked.is_empty() {
        return;
    }
    let value = (key.kind() == KeyKind::String)
        .then(|| key.string())
        .flatten();
    let back = plan::take_back(revoked, value);
    if back.delete_lock {
        effects::deleted(ctx, key, Deletion::Unlink);
    }
    for token in back.readers {
        reader_released(ctx, key, name, token);
    }
    for back in back.members {
        if key.kind() == KeyKind::SortedSet {
            let member = ctx.string(back.member);
            let permits = Permits {
                count: back.permits,
                separator: back.separator,
            };
            let slots = Slots::of(ctx, member.arg(), permits);
            if effects::release_members(ctx, key, &slots.members()) {
                fencing::lease_released(ctx, name, back.member);
            }
        }
    }
}
