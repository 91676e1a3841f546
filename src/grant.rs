//! One grant per kind of holder, made alike by a holder's own command and by the line
//! (`crate::waiting`): a lock's (`lock`: GOBLIN.LOCK, GOBLIN.BLOCK, a lock waiter's turn) and a
//! lease's (`Lease`: GOBLIN.ZWINDOW, GOBLIN.BZWINDOW, a lease waiter's turn). Each checks the
//! fencing tokens before it writes anything, writes through `effects`, then mints the holder's
//! token or keeps it; what it decides (when the lease ends, whether it renews) is
//! `goblin_core::grant`'s. So a grant made in line and the same grant made by a command write the
//! same keys, values, expiries, tokens, events and effects.
//!
//! A new kind of holder (a reader, a writer) is one more function here, and one more arm of the
//! line's `waiting::grant`.

use goblin_core::grant::{self, LockKey};
use goblin_core::zwindow::{self, WindowExpiry, Zadded};
use smallvec::SmallVec;

use crate::effects;
use crate::error::CommandError;
use crate::fencing::{Fence, Holder};
use crate::server::{Arg, Ctx, Key, KeyKind, OwnedString};

/// A lock request: its token, its lease (milliseconds, 0 for none), and `FENCE`.
#[derive(Clone, Copy)]
pub struct Lock<'a> {
    pub token: &'a [u8],
    pub ms: i64,
    pub fence: bool,
}

/// The key as a lock request sees it (`grant::take`), as the line's plan sees it too.
pub fn lock_key<'k>(key: &'k Key<'_>) -> LockKey<'k> {
    match key.kind() {
        KeyKind::Empty => LockKey::Empty,
        KeyKind::String => LockKey::String(key.string().unwrap_or_default()),
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
    let granted = grant::lock(lock_key(key), lock.token, lock.ms, now_ms)?;
    let fence = Fence::asked(ctx, lock.fence, name, Holder::Lock(lock.token))?;
    effects::lock_taken(ctx, key, lock.token, granted.at_ms);
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
