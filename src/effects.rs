//! The one place where a decision becomes a write. Each function here changes the key, then
//! fires the keyspace notifications the Lua idiom would have fired, appends the *effect* to the
//! replication stream and the AOF, and signals the key as modified, so no command can forget one.
//!
//! Effects, not commands: replicas and the AOF get plain core commands with absolute expiry
//! times. Re-running GOBLIN.* there would read the replica's clock and restart windows on every
//! AOF reload, and could not load on a server without the module.

use crate::counter::{self, CounterPlan, CounterTtl};
use crate::server::{Arg, Ctx, EventClass, Key, KeyKind};
use crate::window::{self, WindowExpiry};

/// Stores the counter chosen by `counter::plan`, with its TTL.
pub fn write_counter(ctx: &Ctx, key: &mut Key<'_>, plan: &CounterPlan) {
    let name = key.name();
    let mut digits = [0u8; 20];
    let value = counter::format_value(plan.value, &mut digits);
    match plan.ttl {
        CounterTtl::Keep => {
            // In place, so the running window's TTL keeps ticking (or stays absent).
            key.set_string(value);
            ctx.notify(EventClass::String, c"incrby", name);
            ctx.replicate(c"SET", &[name.as_bytes(), value, b"KEEPTTL"]);
        }
        CounterTtl::ArmAt(at_ms) => {
            key.set_string(value);
            key.set_abs_expire(at_ms);
            ctx.notify(EventClass::String, c"incrby", name);
            ctx.notify(EventClass::Generic, c"expire", name);
            let at = at_ms.to_string();
            ctx.replicate(c"SET", &[name.as_bytes(), value, b"PXAT", at.as_bytes()]);
        }
        CounterTtl::DeleteNow => {
            // INCR then EXPIRE in the past: the key is gone either way. Only a key that existed
            // before this call is a change worth replicating.
            if key.kind() != KeyKind::Empty {
                key.delete();
                ctx.replicate(c"DEL", &[name.as_bytes()]);
            }
            ctx.notify(EventClass::String, c"incrby", name);
            ctx.notify(EventClass::Generic, c"del", name);
        }
    }
    ctx.signal_modified(name);
}

/// Removes the members that have left the window; returns how many.
pub fn evict(ctx: &Ctx, key: &mut Key<'_>, cutoff: f64) -> usize {
    let evicted = key.evict_up_to(cutoff);
    if evicted > 0 {
        let name = key.name();
        ctx.notify(EventClass::SortedSet, c"zremrangebyscore", name);
        if key.kind() == KeyKind::Empty {
            ctx.notify(EventClass::Generic, c"del", name);
        }
        let cutoff = window::format_score(cutoff);
        ctx.replicate(
            c"ZREMRANGEBYSCORE",
            &[name.as_bytes(), b"-inf", cutoff.as_bytes()],
        );
        ctx.signal_modified(name);
    }
    evicted
}

/// Records `member` at `now` (added, or its score moved) and re-arms the key's TTL.
pub fn record(ctx: &Ctx, key: &mut Key<'_>, member: Arg<'_>, now: f64, expiry: WindowExpiry) {
    let name = key.name();
    if key.zadd(now, member) {
        ctx.notify(EventClass::SortedSet, c"zadd", name);
        let score = window::format_score(now);
        ctx.replicate(
            c"ZADD",
            &[name.as_bytes(), score.as_bytes(), member.as_bytes()],
        );
    }
    match expiry {
        WindowExpiry::At(at_ms) => {
            key.set_abs_expire(at_ms);
            ctx.notify(EventClass::Generic, c"expire", name);
            let at = at_ms.to_string();
            ctx.replicate(c"PEXPIREAT", &[name.as_bytes(), at.as_bytes()]);
        }
        WindowExpiry::Immediately => {
            key.delete();
            ctx.notify(EventClass::Generic, c"del", name);
            ctx.replicate(c"DEL", &[name.as_bytes()]);
        }
    }
    ctx.signal_modified(name);
}
