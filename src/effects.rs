//! The one place where a decision becomes a write. Each function here changes the key, then
//! fires the keyspace notifications the Lua idiom would have fired, appends the *effect* to the
//! replication stream and the AOF, and signals the key as modified, so no command can forget one.
//!
//! Effects, not commands: replicas and the AOF get plain core commands with absolute expiry
//! times. Re-running GOBLIN.* there would read the replica's clock and restart windows on every
//! AOF reload, and could not load on a server without the module.

use crate::counter::{CounterPlan, CounterTtl};
use crate::decimal::Decimal;
use crate::server::{Arg, Ctx, EventClass, Eviction, Key, KeyKind, Zadded};
use crate::window::WindowExpiry;

/// Stores the counter chosen by `counter::plan`, with its TTL.
pub fn write_counter(ctx: &Ctx, key: &mut Key<'_>, plan: &CounterPlan) {
    let name = key.name();
    let value = Decimal::integer(plan.value);
    let value = value.as_bytes();
    match plan.ttl {
        CounterTtl::Keep => {
            // In place, so the running window's TTL keeps ticking (or stays absent).
            key.set_string(value);
            ctx.notify(EventClass::String, c"incrby", name);
            // INCR on the replica: the same value (the states are identical), the same TTL, and
            // the cheapest effect to propagate (two arguments).
            ctx.replicate(c"INCR", name, &[]);
        }
        CounterTtl::ArmAt(at_ms) => {
            key.set_string(value);
            key.set_abs_expire(at_ms);
            ctx.notify(EventClass::String, c"incrby", name);
            ctx.notify(EventClass::Generic, c"expire", name);
            let at = Decimal::integer(at_ms);
            ctx.replicate(c"SET", name, &[value, b"PXAT", at.as_bytes()]);
        }
        CounterTtl::DeleteNow => {
            // INCR then EXPIRE in the past: the key is gone either way, so it is never written.
            // The events are INCR's (`new` for a key it creates, `incrby`) and EXPIRE's. Only
            // a key that existed before this call is a change worth replicating.
            if key.kind() == KeyKind::Empty {
                ctx.notify(EventClass::New, c"new", name);
            } else {
                key.delete();
                ctx.replicate(c"DEL", name, &[]);
            }
            ctx.notify(EventClass::String, c"incrby", name);
            ctx.notify_expired_at_once(name);
        }
    }
    ctx.signal_modified(name);
}

/// Removes the members that have left the window, at most about `budget` of them.
pub fn evict(ctx: &Ctx, key: &mut Key<'_>, cutoff: f64, budget: usize) -> Eviction {
    let eviction = key.evict_up_to(cutoff, budget);
    if eviction.count > 0 {
        let name = key.name();
        ctx.notify(EventClass::SortedSet, c"zremrangebyscore", name);
        if key.kind() == KeyKind::Empty {
            ctx.notify(EventClass::Generic, c"del", name);
        }
        // Exactly what went: everything at or below `through` (the cutoff, unless the budget
        // ran out first).
        let through = Decimal::score(eviction.through);
        ctx.replicate(c"ZREMRANGEBYSCORE", name, &[b"-inf", through.as_bytes()]);
        ctx.signal_modified(name);
    }
    eviction
}

/// Records `member` at `now` (added, or its score moved) and re-arms the key's TTL.
/// Returns what the sorted set did: a newcomer added, or a holder's score moved (or not).
pub fn record(
    ctx: &Ctx,
    key: &mut Key<'_>,
    member: Arg<'_>,
    now: f64,
    expiry: WindowExpiry,
) -> Zadded {
    let name = key.name();
    let zadded = key.zadd(now, member);
    if zadded != Zadded::Unchanged {
        ctx.notify(EventClass::SortedSet, c"zadd", name);
        let score = Decimal::score(now);
        ctx.replicate(c"ZADD", name, &[score.as_bytes(), member.as_bytes()]);
    }
    match expiry {
        WindowExpiry::At(at_ms) => {
            key.set_abs_expire(at_ms);
            ctx.notify(EventClass::Generic, c"expire", name);
            let at = Decimal::integer(at_ms);
            ctx.replicate(c"PEXPIREAT", name, &[at.as_bytes()]);
        }
        WindowExpiry::Immediately => {
            key.delete();
            ctx.notify_expired_at_once(name);
            ctx.replicate(c"DEL", name, &[]);
        }
    }
    ctx.signal_modified(name);
    zadded
}

/// Deletes a string lock whose token matched.
pub fn release_lock(ctx: &Ctx, key: &mut Key<'_>) {
    let name = key.name();
    key.delete();
    ctx.notify(EventClass::Generic, c"del", name);
    ctx.replicate(c"DEL", name, &[]);
    ctx.signal_modified(name);
}

/// Removes `member` from a sorted set; returns whether it was there. A set emptied here is
/// deleted by the server, as ZREM does.
pub fn release_member(ctx: &Ctx, key: &mut Key<'_>, member: Arg<'_>) -> bool {
    if !key.zrem(member) {
        return false;
    }
    let name = key.name();
    ctx.notify(EventClass::SortedSet, c"zrem", name);
    if key.kind() == KeyKind::Empty {
        ctx.notify(EventClass::Generic, c"del", name);
    }
    ctx.replicate(c"ZREM", name, &[member.as_bytes()]);
    ctx.signal_modified(name);
    true
}
