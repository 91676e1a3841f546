//! Where fencing tokens are kept (`FENCE`): string keys of the module's own beside the lock or
//! the lease (`goblin_core::fence::token_key`), in the same cluster slot, replicated and
//! persisted like any write, so that a restart from the RDB or the AOF, and a failover that
//! did not lose them, keep them.
//!
//! - The key's own (`{tag}\0goblin:fence\0key`) holds the latest token granted for the key,
//!   until that grant's lease ends: a new grant mints above it, and a server whose clock is
//!   behind it learns so. For a lock it holds the holder's token too, after a NUL, the holder
//!   it was granted to (`token\0holder`), so that a renewal keeps it.
//! - A lease holder's (`...\0key\0member`) holds that member's token (a lease has several
//!   holders), until its lease ends, or it gives the lease back.
//!
//! Whether a token can be minted is asked before anything is written (`Fence::asked`): a call
//! that cannot mint one writes nothing. So is whether it can be kept: a key of another type at a
//! token's name (only a client writing the module's own names by hand can make one) refuses the
//! grant, with an error that says which, and is never written over; a holder's token is given
//! back only from a string of the module's own (`lease_released`).

pub mod clock;

use goblin_core::decimal::{parse_integer, Decimal};
use goblin_core::fence::token_key;

use crate::effects::{self, Deletion};
use crate::error::fence::{LATEST_WRONG_TYPE, NO_SLOT_TAG, OWN_WRONG_TYPE};
use crate::error::CommandError;
use crate::server::{Arg, Ctx, Key, KeyKind, OwnedString};

/// Who a grant is for.
#[derive(Clone, Copy)]
pub enum Holder<'a> {
    /// A token lock's holder, by its token (the lock's value), read only where a token is
    /// asked for.
    Lock(Arg<'a>),
    /// A lease's holder, by its member.
    Lease(&'a [u8]),
}

impl<'a> Holder<'a> {
    pub fn lease(member: Arg<'a>) -> Self {
        Holder::Lease(member.as_bytes())
    }
}

/// One key of the module's holding a token: its name, and what it holds now.
struct Kept<'c> {
    name: OwnedString<'c>,
    token: Option<i64>,
    /// After the token, a NUL and the lock holder it was granted to.
    holder: Option<Vec<u8>>,
}

impl<'c> Kept<'c> {
    /// The key `name` and what it holds; `wrong_type`, the error for a key of another type
    /// there, where no token can be kept.
    fn read(ctx: &'c Ctx, name: Vec<u8>, wrong_type: CommandError) -> Result<Self, CommandError> {
        let name = ctx.string(&name);
        let key = ctx.open_key(name.arg());
        if !matches!(key.kind(), KeyKind::Empty | KeyKind::String) {
            return Err(wrong_type);
        }
        let (token, holder) = stored(&key);
        drop(key);
        Ok(Kept {
            name,
            token,
            holder,
        })
    }

    /// Keeps `value` until `at_ms` (for ever with `None`, as the grant's), written as `SET`
    /// writes it.
    fn write(&self, ctx: &Ctx, value: &[u8], at_ms: Option<i64>) {
        let mut key = ctx.open_key(self.name.arg());
        match at_ms {
            Some(at_ms) => effects::stored_with_expiry(ctx, &mut key, value, at_ms, c"set"),
            None => effects::stored(ctx, &mut key, value, c"set"),
        }
    }

    /// Keeps what it holds (`value`) until `at_ms`: a renewal moves only the expiry, as
    /// `PEXPIREAT` does, unless the grant has no lease (then `value` is written without one).
    fn renew(&self, ctx: &Ctx, value: &[u8], at_ms: Option<i64>) {
        match at_ms {
            Some(at_ms) => effects::expires_at(ctx, &mut ctx.open_key(self.name.arg()), at_ms),
            None => self.write(ctx, value, None),
        }
    }
}

/// The tokens a grant's call reads and writes: the key's latest, and a lease holder's own.
pub struct Fence<'c, 'a> {
    holder: Holder<'a>,
    latest: Kept<'c>,
    /// A lease holder's token (`None` for a lock).
    own: Option<Kept<'c>>,
}

impl<'c, 'a> Fence<'c, 'a> {
    /// The tokens of `key` and its `holder`, read, and checked that one can be minted here now
    /// (`clock::check`), when the call `asked` for one (`FENCE`): what a command does before
    /// it writes anything. An error for a key whose slot no key of the module's can share.
    /// Inlined: most calls ask for none.
    #[inline]
    pub fn asked(
        ctx: &'c Ctx,
        asked: bool,
        key: Arg<'_>,
        holder: Holder<'a>,
    ) -> Result<Option<Self>, CommandError> {
        if !asked {
            return Ok(None);
        }
        Self::read(ctx, key, holder).map(Some)
    }

    /// The tokens `asked` reads and checks.
    fn read(ctx: &'c Ctx, key: Arg<'_>, holder: Holder<'a>) -> Result<Self, CommandError> {
        let name = |member| token_key(key.as_bytes(), member).ok_or(NO_SLOT_TAG);
        let latest = Kept::read(ctx, name(None)?, LATEST_WRONG_TYPE)?;
        let own = match holder {
            Holder::Lock(_) => None,
            Holder::Lease(member) => Some(Kept::read(ctx, name(Some(member))?, OWN_WRONG_TYPE)?),
        };
        let fence = Fence {
            holder,
            latest,
            own,
        };
        clock::check(ctx, fence.stored())?;
        Ok(fence)
    }

    /// The largest token stored for the key or its holder.
    fn stored(&self) -> Option<i64> {
        let own = self.own.as_ref().and_then(|own| own.token);
        self.latest.token.max(own)
    }

    /// The token the holder holds now, if it has one.
    fn held(&self) -> Option<i64> {
        match self.holder {
            Holder::Lock(holder) => self
                .latest
                .token
                .filter(|_| self.latest.holder.as_deref() == Some(holder.as_bytes())),
            Holder::Lease(_) => self.own.as_ref().and_then(|own| own.token),
        }
    }

    /// A new token, above those stored and every one minted on this server. Nothing is kept.
    pub fn mint(&self, ctx: &Ctx) -> i64 {
        clock::mint(ctx, self.stored())
    }

    /// The token of a grant lasting until `at_ms` (`None`: no lease), kept as long: the holder's
    /// own for a `renewal` if it has one, else a new one (then the key's latest too).
    pub fn grant(&self, ctx: &Ctx, renewal: bool, at_ms: Option<i64>) -> i64 {
        let held = self.held().filter(|_| renewal);
        let token = held.unwrap_or_else(|| self.mint(ctx));
        let decimal = Decimal::integer(token);
        match (self.holder, &self.own) {
            (Holder::Lock(holder), _) => {
                let mut value = decimal.as_bytes().to_vec();
                value.push(0);
                value.extend_from_slice(holder.as_bytes());
                match held {
                    Some(_) => self.latest.renew(ctx, &value, at_ms),
                    None => self.latest.write(ctx, &value, at_ms),
                }
            }
            (Holder::Lease(_), Some(own)) => match held {
                Some(_) => own.renew(ctx, decimal.as_bytes(), at_ms),
                None => {
                    own.write(ctx, decimal.as_bytes(), at_ms);
                    self.latest.write(ctx, decimal.as_bytes(), at_ms);
                }
            },
            (Holder::Lease(_), None) => {}
        }
        token
    }
}

/// Whether `key` can have tokens kept beside it (its cluster slot can be shared): checked as
/// the arguments are, before anything is read.
pub fn nameable(key: Arg<'_>) -> Result<(), CommandError> {
    token_key(key.as_bytes(), None)
        .map(|_| ())
        .ok_or(NO_SLOT_TAG)
}

/// A lease's holder `member` gave its lease back (GOBLIN.CAD), or was taken back: its token,
/// if it had one, goes with it. The key's latest stays until it ends: tokens minted later
/// still exceed it.
pub fn lease_released(ctx: &Ctx, key: Arg<'_>, member: &[u8]) {
    let Some(name) = token_key(key.as_bytes(), Some(member)) else {
        return;
    };
    let name = ctx.string(&name);
    let mut key = ctx.open_key(name.arg());
    // A key of another type there is not the module's: it is left as it is.
    if key.kind() == KeyKind::String {
        effects::deleted(ctx, &mut key, Deletion::Unlink);
    }
}

/// The token a key of the module's holds, and for a lock the holder after it (a string of
/// another shape, or another type, holds none).
fn stored(key: &Key<'_>) -> (Option<i64>, Option<Vec<u8>>) {
    if key.kind() != KeyKind::String {
        return (None, None);
    }
    let Some(value) = key.string() else {
        return (None, None);
    };
    match value.iter().position(|&byte| byte == 0) {
        Some(nul) => (
            parse_integer(&value[..nul]),
            Some(value[nul + 1..].to_vec()),
        ),
        None => (parse_integer(value), None),
    }
}
