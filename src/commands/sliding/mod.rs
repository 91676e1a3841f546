//! The sliding-window family, on `goblin_core::zwindow` and `goblin_core::swindow`: a log of
//! members in a sorted set (GOBLIN.ZWINDOW, a rate limiter or a lease; GOBLIN.BZWINDOW, a lease
//! waited for in line; GOBLIN.ZWSTATS, read only), and a counter of two weighted windows in one
//! string (GOBLIN.SWINDOW; GOBLIN.SWSTATS, read only). What they share is here: a lease's step
//! and reply, with GOBLIN.ZWINDOW's counters (which GOBLIN.BZWINDOW's steps count in too), and
//! the counter's window and stored counts.

pub mod bzwindow;
pub mod swindow;
pub mod swstats;
pub mod zwindow;
pub mod zwstats;

use goblin_core::swindow::{Stored, View};
use goblin_core::zwindow::{seating, Admission, Seat, Seating};

use crate::commands::separator_arg;
use crate::effects;
use crate::error::swindow::{NOT_A_COUNTER, WINDOW_RANGE};
use crate::error::CommandError;
use crate::grant::{AskedLease, Slots};
use crate::server::command::ArgDoc;
use crate::server::stats::Counter;
use crate::server::{Arg, Ctx, Key, KeyKind, Reply};

/// Newcomers admitted, holders refreshed, newcomers rejected (`INFO goblin`'s zwindow fields).
static ADMITTED: Counter = Counter::new();
static REFRESHED: Counter = Counter::new();
static REJECTED: Counter = Counter::new();
/// Members that left a window, over all calls.
static EVICTED: Counter = Counter::new();

/// `SEPARATOR sep` as COMMAND DOCS gives it, for GOBLIN.ZWINDOW and GOBLIN.BZWINDOW alike.
const LEASE_SEPARATOR: ArgDoc = separator_arg(c"Name every slot member, separator and its index from 0 (redis-semaphore's names), instead of member and its numbered twins.");

/// A lease call's reply: 1 granted, 0 refused; with FENCE, a grant's token instead of 1 (its
/// own, kept, for a holder renewing), kept until the lease ends.
fn lease_reply(granted: Option<Option<i64>>) -> Reply<'static> {
    match granted {
        None => Reply::Int(0),
        Some(token) => Reply::Int(token.unwrap_or(1)),
    }
}

/// One step without `COST`, after the key's type is checked and the grant asked for (its
/// expiry, its fencing tokens, `fenced` if any): evicts, then, if the holder's `slots` get
/// their seat (a holder renewing, or, if `newcomers`, a newcomer under `limit`), grants the
/// lease (`grant::Lease`) and re-arms the TTL. The grant's fencing token if granted (`None`
/// inside: none asked).
#[allow(clippy::too_many_arguments)]
fn step(
    ctx: &Ctx,
    key: &mut Key<'_>,
    asked: &AskedLease<'_, '_>,
    fenced: bool,
    slots: &Slots<'_>,
    cutoff: f64,
    limit: i64,
    now: f64,
    newcomers: bool,
) -> Option<Option<i64>> {
    let eviction = effects::evict(ctx, key, cutoff);
    EVICTED.add(eviction.count as u64);
    // With no room for newcomers, only a member holding its slot is granted (a refresh).
    let limit = if newcomers { limit } else { 0 };
    let members = slots.members();
    // Whether the holder renews matters before its grant is written only to keep its fencing
    // token (`AskedLease::write`'s `holds`); otherwise recording its member may tell.
    let seating = members
        .first()
        .and_then(|holder| seating(key, &eviction, cutoff, limit, holder, members.len(), fenced));
    let Some(seating) = seating else {
        REJECTED.add(1);
        return None;
    };
    let holds = seating == Seating::Known(Seat::Holder);
    let (zadded, token) = asked.write(ctx, key, slots, now, holds);
    match Admission::of(seating.after(zadded), zadded) {
        Admission::Admitted(_) => ADMITTED.add(1),
        Admission::Refreshed(_) => REFRESHED.add(1),
        Admission::Rejected => REJECTED.add(1),
    }
    Some(token)
}

/// The window argument: seconds, as whole milliseconds rounded up.
fn window_ms(arg: Arg<'_>) -> Result<i64, CommandError> {
    let seconds = arg.to_finite_f64()?;
    if seconds <= 0.0 {
        return Err(WINDOW_RANGE);
    }
    // Longer than the millisecond clock: no expiry could be armed for it.
    goblin_core::swindow::window_ms(seconds).ok_or(CommandError::InvalidExpire)
}

/// The counts a key holds: `None` for a missing key.
fn stored(key: Option<&Key<'_>>) -> Result<Option<Stored>, CommandError> {
    let Some(key) = key else {
        return Ok(None);
    };
    match key.kind() {
        KeyKind::Empty => Ok(None),
        KeyKind::String => key
            .string()
            .and_then(Stored::parse)
            .map(Some)
            .ok_or(NOT_A_COUNTER),
        KeyKind::SortedSet | KeyKind::Other => Err(CommandError::WrongType),
    }
}

/// The windows as a reply: `[previous, previous_ttl_ms, current, current_ttl_ms]`.
fn counts<'call>(view: &View) -> [Reply<'call>; 4] {
    [
        Reply::Int(view.previous),
        Reply::Int(view.previous_ttl_ms),
        Reply::Int(view.current),
        Reply::Int(view.current_ttl_ms),
    ]
}
