//! The one place where a decision becomes a write. Each function here changes the key, then
//! fires the keyspace notifications the Lua idiom would have fired, appends the *effect* to the
//! replication stream and the AOF, and signals the key as modified, so no command can forget one.
//!
//! Effects, not commands: replicas and the AOF get plain core commands with absolute expiry
//! times. Re-running GOBLIN.* there would read the replica's clock and restart windows on every
//! AOF reload, and could not load on a server without the module.

use std::ffi::CStr;

use goblin_core::decimal::Decimal;
use goblin_core::gcra::stored_tat;
use goblin_core::increx::{CounterPlan, CounterTtl};
use goblin_core::native::increx::TtlChange;
use goblin_core::rwlock;
use goblin_core::zwindow::{self, Eviction, SortedWindow, WindowExpiry, Zadded};

use smallvec::SmallVec;

use crate::server::{
    lazyfree_lazy_expire, Arg, Ctx, EventClass, Key, KeyKind, Word, MAX_REPLICATED_ARGS,
};

/// Defines the core commands effects are replicated as, and the list of their names that the
/// module checks at load (under `rename-command` an effect would be written and then fail to
/// replicate, so the module refuses to load instead). One list: the two cannot drift.
macro_rules! core_commands {
    ($($command:ident => $name:literal),* $(,)?) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum CoreCommand {
            $($command),*
        }

        impl CoreCommand {
            /// Every name, for the load check.
            pub const NAMES: &'static [&'static std::ffi::CStr] = &[$($name),*];

            pub fn name(self) -> &'static std::ffi::CStr {
                match self {
                    $(CoreCommand::$command => $name),*
                }
            }
        }
    };
}

core_commands! {
    Set => c"SET",
    Incr => c"INCR",
    Incrby => c"INCRBY",
    Del => c"DEL",
    Unlink => c"UNLINK",
    Zadd => c"ZADD",
    Zrem => c"ZREM",
    Zremrangebyscore => c"ZREMRANGEBYSCORE",
    Pexpireat => c"PEXPIREAT",
}

/// One replicated effect on the call's key.
#[derive(Debug, Clone, Copy)]
pub enum Effect<'a> {
    /// `SET key value PXAT at`: a value with its new expiry.
    SetPxat { value: &'a [u8], at_ms: i64 },
    /// `SET key value PXAT at`, the value one of the call's strings (a client's token), by
    /// reference.
    SetArgPxat { value: Arg<'a>, at_ms: i64 },
    /// `SET key value`, the value one of the call's strings, by reference.
    SetArg { value: Arg<'a> },
    /// `SET key value PXAT at`, the expiry's decimal text made by the caller (a TAT's, which is
    /// its own text cut short: `StoredTat::expires_at_text`).
    SetPxatText { value: &'a [u8], at: &'a [u8] },
    /// `SET key value KEEPTTL`: a value, the TTL untouched.
    SetKeepTtl { value: &'a [u8] },
    /// `SET key value`: a value without a TTL.
    Set { value: &'a [u8] },
    /// `INCR key`: the same value on the replica, whose state is the same; the TTL untouched.
    Incr,
    /// `INCRBY key by`: as `INCR`, for a hit that costs more than 1.
    Incrby { by: i64 },
    /// `DEL key`
    Del,
    /// `UNLINK key`
    Unlink,
    /// `ZREMRANGEBYSCORE key -inf through`
    ZremRangeThrough { through: f64 },
    /// `ZADD key score member [score member ...]`: up to four members at one score, each one of
    /// the call's strings (one alone goes by reference).
    Zadd { score: f64, members: &'a [Arg<'a>] },
    /// `ZREM key member [member ...]`: up to eight members.
    Zrem { members: &'a [&'a [u8]] },
    /// `PEXPIREAT key at`
    PexpireAt { at_ms: i64 },
    /// `ZADD key score member`, the score's text made by the caller (a read lease's end, whose
    /// digits are also the key's `PEXPIREAT` time: `reader_held`), the member by reference.
    ZaddText { score: &'a [u8], member: Arg<'a> },
    /// `PEXPIREAT key at`, the time's text made by the caller.
    PexpireAtText { at: &'a [u8] },
}

impl Effect<'_> {
    pub fn command(&self) -> CoreCommand {
        match self {
            Effect::SetPxat { .. }
            | Effect::SetArgPxat { .. }
            | Effect::SetArg { .. }
            | Effect::SetPxatText { .. }
            | Effect::SetKeepTtl { .. }
            | Effect::Set { .. } => CoreCommand::Set,
            Effect::Incr => CoreCommand::Incr,
            Effect::Incrby { .. } => CoreCommand::Incrby,
            Effect::Del => CoreCommand::Del,
            Effect::Unlink => CoreCommand::Unlink,
            Effect::ZremRangeThrough { .. } => CoreCommand::Zremrangebyscore,
            Effect::Zadd { .. } | Effect::ZaddText { .. } => CoreCommand::Zadd,
            Effect::Zrem { .. } => CoreCommand::Zrem,
            Effect::PexpireAt { .. } | Effect::PexpireAtText { .. } => CoreCommand::Pexpireat,
        }
    }

    /// Appends the effect on `key` to the replication stream and the AOF. Numbers are
    /// formatted on the stack: this runs on every write.
    pub fn replicate(&self, ctx: &Ctx, key: Arg<'_>) {
        let command = self.command().name();
        match *self {
            Effect::SetPxat { value, at_ms } => {
                let at = Decimal::integer(at_ms);
                ctx.replicate_with_word(command, key, Some(value), Word::Pxat, Some(at.as_bytes()));
            }
            Effect::SetArgPxat { value, at_ms } => {
                let at = Decimal::integer(at_ms);
                ctx.replicate_arg_with_word(command, key, value, Word::Pxat, at.as_bytes());
            }
            Effect::SetArg { value } => ctx.replicate_with_arg(command, key, None, value, None),
            Effect::SetPxatText { value, at } => {
                ctx.replicate_with_word(command, key, Some(value), Word::Pxat, Some(at));
            }
            Effect::SetKeepTtl { value } => {
                ctx.replicate_with_word(command, key, Some(value), Word::Keepttl, None);
            }
            Effect::Set { value } => ctx.replicate(command, key, &[value]),
            Effect::Incr | Effect::Del | Effect::Unlink => ctx.replicate_key(command, key),
            Effect::Incrby { by } => {
                let by = Decimal::integer(by);
                ctx.replicate(command, key, &[by.as_bytes()]);
            }
            Effect::ZremRangeThrough { through } => {
                let through = Decimal::score(through);
                ctx.replicate_with_word(
                    command,
                    key,
                    None,
                    Word::MinusInf,
                    Some(through.as_bytes()),
                );
            }
            Effect::Zadd { score, members } => {
                let score = Decimal::score(score);
                if let [member] = members {
                    ctx.replicate_with_arg(command, key, Some(score.as_bytes()), *member, None);
                    return;
                }
                let mut args: SmallVec<[&[u8]; MAX_REPLICATED_ARGS]> = SmallVec::new();
                for member in members {
                    args.extend([score.as_bytes(), member.as_bytes()]);
                }
                ctx.replicate(command, key, &args);
            }
            Effect::Zrem { members } => ctx.replicate(command, key, members),
            Effect::PexpireAt { at_ms } => {
                let at = Decimal::integer(at_ms);
                ctx.replicate(command, key, &[at.as_bytes()]);
            }
            Effect::ZaddText { score, member } => {
                ctx.replicate_with_arg(command, key, Some(score), member, None);
            }
            Effect::PexpireAtText { at } => ctx.replicate(command, key, &[at]),
        }
    }
}

/// Drops a fixed window that has ended (`fwindow::ended`: its key expires in this very
/// millisecond, which the server still holds it in) before the write that starts the next one,
/// as the server drops an expired key it meets: removed (unlinked with
/// `lazyfree-lazy-expire`), `expired` fired, and `DEL` (`UNLINK`) replicated, so that the
/// write after it (`INCRBY` for a counter without a window) starts from nothing on replicas
/// and in the AOF too.
pub fn drop_ended_window(ctx: &Ctx, key: &mut Key<'_>) {
    let name = key.name();
    let effect = if lazyfree_lazy_expire() {
        key.unlink();
        Effect::Unlink
    } else {
        key.delete();
        Effect::Del
    };
    ctx.notify(EventClass::Expired, c"expired", name);
    ctx.signal_modified(name);
    effect.replicate(ctx, name);
}

/// Stores the counter chosen by `increx::plan`, with its TTL.
pub fn write_counter(ctx: &Ctx, key: &mut Key<'_>, plan: &CounterPlan) {
    let name = key.name();
    let value = Decimal::integer(plan.value);
    let value = value.as_bytes();
    match plan.ttl {
        CounterTtl::Keep => {
            // In place, so the running window's TTL keeps ticking (or stays absent).
            key.set_string(value);
            ctx.notify(EventClass::String, c"incrby", name);
            // The cheapest effect to propagate: two arguments, or three for a cost.
            match plan.by {
                1 => Effect::Incr,
                by => Effect::Incrby { by },
            }
            .replicate(ctx, name);
        }
        CounterTtl::ArmAt(at_ms) => {
            key.set_string(value);
            key.set_abs_expire(at_ms);
            ctx.notify(EventClass::String, c"incrby", name);
            ctx.notify(EventClass::Generic, c"expire", name);
            Effect::SetPxat { value, at_ms }.replicate(ctx, name);
        }
        CounterTtl::DeleteNow => {
            // INCR then EXPIRE in the past: the key is gone either way, so it is never written.
            // The events are INCR's (`new` for a key it creates, `incrby`) and EXPIRE's. Only
            // a key that existed before this call is a change worth replicating.
            if key.kind() == KeyKind::Empty {
                ctx.notify(EventClass::New, c"new", name);
            } else {
                key.unlink();
                Effect::Del.replicate(ctx, name);
            }
            ctx.notify(EventClass::String, c"incrby", name);
            ctx.notify_expired_at_once(name);
        }
    }
    key.signal_modified();
}

/// INCREX's write: `value` stored with its TTL changed as decided, and `event` (`incrby` or
/// `incrbyfloat`) fired; or, when the new expiry is already past, the key deleted as EXPIRE
/// deletes it (a missing key is simply not created). Replicated as the native command
/// replicates: `SET key value KEEPTTL`, `SET key value` (PERSIST), `SET key value PXAT at`, or
/// `DEL` / `UNLINK` as `lazyfree-lazy-expire` says.
pub fn stored_number(
    ctx: &Ctx,
    key: &mut Key<'_>,
    value: &[u8],
    event: &CStr,
    change: TtlChange,
    existed: bool,
) {
    let name = key.name();
    if change == TtlChange::DeleteNow {
        if existed {
            key.unlink();
            let effect = if lazyfree_lazy_expire() {
                Effect::Unlink
            } else {
                Effect::Del
            };
            effect.replicate(ctx, name);
            key.signal_modified();
            // Redis 8.10's `del`, on Valkey too: the contract is Redis's INCREX (Valkey adds
            // only NX | XX), though Valkey's own SET and GETEX fire `expired` here.
            ctx.notify(EventClass::Generic, c"del", name);
        }
        return;
    }
    // In place, so an untouched TTL keeps ticking.
    key.set_string(value);
    let effect = match change {
        TtlChange::Persist => Effect::Set { value },
        TtlChange::At(at_ms) => {
            key.set_abs_expire(at_ms);
            Effect::SetPxat { value, at_ms }
        }
        TtlChange::Keep | TtlChange::DeleteNow => Effect::SetKeepTtl { value },
    };
    let persisted = change == TtlChange::Persist && key.remove_ttl();
    effect.replicate(ctx, name);
    key.signal_modified();
    ctx.notify(EventClass::String, event, name);
    if persisted {
        ctx.notify(EventClass::Generic, c"persist", name);
    }
    if matches!(change, TtlChange::At(_)) {
        ctx.notify(EventClass::Generic, c"expire", name);
    }
}

/// GOBLIN.GCRA's decision carried out: the new TAT written as a string with its expiry
/// (`gcra::stored_tat`), `gcra` and `expire` fired, and `SET key tat PXAT ms` for the replicas
/// and the AOF.
pub fn tat_stored(ctx: &Ctx, key: &mut Key<'_>, tat: i64) {
    let stored = stored_tat(tat);
    let (value, at_ms) = (stored.text.as_bytes(), stored.expires_at_ms);
    // The string class: the key is a string here (Redis's GCRA fires `gcra` in a class of its
    // own that older servers do not have).
    let at = stored.expires_at_text();
    stored_until(
        ctx,
        key,
        value,
        at_ms,
        Effect::SetPxatText { value, at },
        c"gcra",
    );
}

/// A string key written whole, with its expiry (GOBLIN.GCRA's TAT, GOBLIN.SWINDOW's counts):
/// `event` in the string class and `expire`, and `SET key value PXAT at_ms` for the replicas
/// and the AOF.
pub fn stored_with_expiry(ctx: &Ctx, key: &mut Key<'_>, value: &[u8], at_ms: i64, event: &CStr) {
    stored_until(
        ctx,
        key,
        value,
        at_ms,
        Effect::SetPxat { value, at_ms },
        event,
    );
}

/// `stored_with_expiry`, its `SET ... PXAT` effect given.
fn stored_until(
    ctx: &Ctx,
    key: &mut Key<'_>,
    value: &[u8],
    at_ms: i64,
    effect: Effect<'_>,
    event: &CStr,
) {
    key.set_string(value);
    set_until(ctx, key, at_ms, effect, event);
}

/// What follows a string value's write with its expiry: the expiry set, `event` in the string
/// class and `expire`, `effect` (a `SET ... PXAT`) replicated, the key signalled.
fn set_until(ctx: &Ctx, key: &mut Key<'_>, at_ms: i64, effect: Effect<'_>, event: &CStr) {
    let name = key.name();
    key.set_abs_expire(at_ms);
    ctx.notify(EventClass::String, event, name);
    ctx.notify(EventClass::Generic, c"expire", name);
    effect.replicate(ctx, name);
    key.signal_modified();
}

/// A string key written whole, without a TTL (a token lock without a lease): `event` in the
/// string class, and `SET key value` for the replicas and the AOF (which drops any TTL, as the
/// key's does here).
pub fn stored(ctx: &Ctx, key: &mut Key<'_>, value: &[u8], event: &CStr) {
    key.set_string(value);
    set_for_good(ctx, key, Effect::Set { value }, event);
}

/// What follows a string value's write without a TTL: any TTL removed, `event` in the string
/// class, `effect` (a `SET`) replicated, the key signalled.
fn set_for_good(ctx: &Ctx, key: &mut Key<'_>, effect: Effect<'_>, event: &CStr) {
    let name = key.name();
    key.remove_ttl();
    ctx.notify(EventClass::String, event, name);
    effect.replicate(ctx, name);
    key.signal_modified();
}

/// A token lock taken for `token` (GOBLIN.LOCK, GOBLIN.BLOCK, GOBLIN.WLOCK, a waiter's
/// grant): `SET key token PXAT at_ms`, or `SET key token` without a lease, as SET fires and
/// replicates it; as `stored_with_expiry` and `stored` write a value, with the token, one of
/// the call's strings, replicated by reference. A key that `holds` the token already (its
/// holder again) keeps its value, the same bytes; any other is written the token, sized for it
/// first (`Key::set_string_sized`: a raw string, which the release reads as it is).
pub fn lock_taken(ctx: &Ctx, key: &mut Key<'_>, token: Arg<'_>, at_ms: Option<i64>, holds: bool) {
    if !holds {
        key.set_string_sized(token.as_bytes());
    }
    match at_ms {
        Some(at_ms) => {
            let effect = Effect::SetArgPxat {
                value: token,
                at_ms,
            };
            set_until(ctx, key, at_ms, effect, c"set");
        }
        None => set_for_good(ctx, key, Effect::SetArg { value: token }, c"set"),
    }
}

/// Evicts what left a window at `cutoff` (`zwindow::evict`, which decides how far as it walks
/// the set, within its budget), and says and replicates what ZREMRANGEBYSCORE would have.
pub fn evict(ctx: &Ctx, key: &mut Key<'_>, cutoff: f64) -> Eviction {
    let eviction = zwindow::evict(key, cutoff);
    evicted(ctx, key, &eviction);
    eviction
}

/// What ZREMRANGEBYSCORE would have said and replicated after `eviction`.
fn evicted(ctx: &Ctx, key: &mut Key<'_>, eviction: &Eviction) {
    if eviction.count == 0 {
        return;
    }
    let name = key.name();
    ctx.notify(EventClass::SortedSet, c"zremrangebyscore", name);
    if key.kind() == KeyKind::Empty {
        ctx.notify(EventClass::Generic, c"del", name);
    }
    // Exactly what went: everything at or below `through` (the cutoff, unless the budget ran
    // out first).
    Effect::ZremRangeThrough {
        through: eviction.through,
    }
    .replicate(ctx, name);
    key.signal_modified();
}

/// Slots granted at `score` (GOBLIN.ZWINDOW, GOBLIN.BZWINDOW, a waiter's grant) to `members`:
/// one for a lease, one per permit for a holder of several. Each is added or moved there; ZADD's
/// event and effect (one ZADD, as the idiom's, for up to four members) for those the set did
/// change; then the TTL re-armed. Returns what the set did with the first.
pub fn admitted(
    ctx: &Ctx,
    key: &mut Key<'_>,
    score: f64,
    members: &[Arg<'_>],
    expiry: WindowExpiry,
) -> Zadded {
    let mut first = None;
    let mut changed: SmallVec<[Arg<'_>; 4]> = SmallVec::new();
    for member in members {
        let zadded = key.zadd(score, *member);
        first.get_or_insert(zadded);
        if zadded != Zadded::Unchanged {
            changed.push(*member);
        }
    }
    recorded(ctx, key, &changed, score, expiry);
    first.unwrap_or(Zadded::Unchanged)
}

/// A COST entry (`zwindow::cost::entry`) recorded at `score`, as `admitted` records a member.
pub fn entry_admitted(
    ctx: &Ctx,
    key: &mut Key<'_>,
    score: f64,
    member: &[u8],
    expiry: WindowExpiry,
) {
    let member = ctx.string(member);
    admitted(ctx, key, score, &[member.arg()], expiry);
}

/// ZADD's event and effects for the members the set did change, then the TTL re-armed.
fn recorded(ctx: &Ctx, key: &mut Key<'_>, changed: &[Arg<'_>], score: f64, expiry: WindowExpiry) {
    let name = key.name();
    if !changed.is_empty() {
        ctx.notify(EventClass::SortedSet, c"zadd", name);
        for members in changed.chunks(MAX_REPLICATED_ARGS / 2) {
            Effect::Zadd { score, members }.replicate(ctx, name);
        }
    }
    match expiry {
        WindowExpiry::At(at_ms) => {
            key.set_abs_expire(at_ms);
            ctx.notify(EventClass::Generic, c"expire", name);
            Effect::PexpireAt { at_ms }.replicate(ctx, name);
        }
        WindowExpiry::Immediately => {
            key.unlink();
            ctx.notify_expired_at_once(name);
            Effect::Del.replicate(ctx, name);
        }
    }
    key.signal_modified();
}

/// A readers-writer lock's writer over its readers' sorted set (a reader promoted, or a writer
/// taking a key whose read leases all lapsed): the set goes and the key is the writer's string,
/// as `SET key token PXAT at_ms` replaces a key of another type, with SET's events alone.
pub fn readers_replaced(ctx: &Ctx, key: &mut Key<'_>, token: Arg<'_>, at_ms: i64) {
    key.unlink();
    lock_taken(ctx, key, token, Some(at_ms), false);
}

/// A read lease held by `token` until `at_ms` (a reader's grant or renewal, a writer demoted):
/// its member of the readers' sorted set scored at `at_ms` (ZADD's event and effect, if the set
/// changed), then the key re-armed to expire with the last lease.
pub fn reader_held(ctx: &Ctx, key: &mut Key<'_>, token: Arg<'_>, at_ms: i64) {
    let score = at_ms as f64;
    let name = key.name();
    // The lease's end as text once, for ZADD's score and PEXPIREAT's time: a whole number of
    // milliseconds below 2^53 (every lease's end), whose shortest score text is its digits.
    let at = Decimal::integer(at_ms);
    let exact = at_ms.unsigned_abs() < 1 << f64::MANTISSA_DIGITS;
    if key.zadd(score, token) != Zadded::Unchanged {
        ctx.notify(EventClass::SortedSet, c"zadd", name);
        let members = [token];
        let effect = if exact {
            Effect::ZaddText {
                score: at.as_bytes(),
                member: token,
            }
        } else {
            Effect::Zadd {
                score,
                members: &members,
            }
        };
        effect.replicate(ctx, name);
    }
    // The set's only lease, or one ending at or after the key's expiry (which Goblin keeps at
    // the last lease's end), is the last: no look for the highest score (about 2,000
    // instructions in a compact set). Otherwise, a lease renewed shorter, say, the look.
    let last = key.len() == 1 || key.expires_at_ms().is_some_and(|expiry| at_ms >= expiry);
    if last {
        rearmed_at(ctx, key, at_ms, at.as_bytes());
    } else {
        readers_rearmed(ctx, key);
    }
    key.signal_modified();
}

/// A read lease given back (GOBLIN.RWUNLOCK, a waiter's grant taken back): its member removed
/// as ZREM removes it, and the key re-armed to the last lease left if it was the last to end.
/// Whether it was there.
pub fn reader_released(ctx: &Ctx, key: &mut Key<'_>, token: Arg<'_>) -> bool {
    let score = key.score(token);
    if !release_members(ctx, key, &[token]) {
        return false;
    }
    let highest = key.last(|_, score| score);
    if score.zip(highest).is_some_and(|(gone, left)| gone > left) {
        readers_rearmed(ctx, key);
    }
    true
}

/// The readers' key set to expire with its last lease, its highest score (`expire`, and
/// `PEXPIREAT`); left as it is for a score no lease has (`rwlock::key_expiry`).
fn readers_rearmed(ctx: &Ctx, key: &mut Key<'_>) {
    if let Some(at_ms) = key.last(|_, score| score).and_then(rwlock::key_expiry) {
        rearmed_at(ctx, key, at_ms, Decimal::integer(at_ms).as_bytes());
    }
}

/// The readers' key set to expire at `at_ms` (`at`, its digits), its last lease's end:
/// `expire`, and `PEXPIREAT`.
fn rearmed_at(ctx: &Ctx, key: &mut Key<'_>, at_ms: i64, at: &[u8]) {
    let name = key.name();
    key.set_abs_expire(at_ms);
    ctx.notify(EventClass::Generic, c"expire", name);
    Effect::PexpireAtText { at }.replicate(ctx, name);
}

/// A key's TTL set to expire at `at_ms` (GOBLIN.EXTEND): `expire`, and `PEXPIREAT key at_ms`.
pub fn expires_at(ctx: &Ctx, key: &mut Key<'_>, at_ms: i64) {
    let name = key.name();
    key.set_abs_expire(at_ms);
    ctx.notify(EventClass::Generic, c"expire", name);
    Effect::PexpireAt { at_ms }.replicate(ctx, name);
    key.signal_modified();
}

/// How a key is deleted.
#[derive(Clone, Copy)]
pub enum Deletion {
    /// Unlinked: freed in the background where the server can, for a deletion the caller did
    /// not ask for and whose value may be large (a grant taken back, a holder's fencing token,
    /// a GCRA refund that empties its key).
    Unlink,
    /// As the server's own single-key deletes do: in the background only if
    /// `lazyfree-lazy-server-del` says so (GOBLIN.CAD's release of a lock, DELEX, DELIFEQ).
    AsTheServer,
}

/// Deletes the key (a lock whose token matched, a condition that held): `del`, and `DEL` for
/// the replicas and the AOF.
pub fn deleted(ctx: &Ctx, key: &mut Key<'_>, how: Deletion) {
    let name = key.name();
    match how {
        Deletion::Unlink => key.unlink(),
        Deletion::AsTheServer => key.delete(),
    }
    ctx.notify(EventClass::Generic, c"del", name);
    Effect::Del.replicate(ctx, name);
    key.signal_modified();
}

/// Removes `members` from a sorted set (a lease's member, or each permit of a holder of
/// several), as one ZREM does: one `zrem` event and effect for those that were there. Returns
/// whether the first was. A set emptied here is deleted by the server, as ZREM does.
pub fn release_members(ctx: &Ctx, key: &mut Key<'_>, members: &[Arg<'_>]) -> bool {
    let mut removed: SmallVec<[&[u8]; 4]> = SmallVec::new();
    for member in members {
        if key.zrem(*member) {
            removed.push(member.as_bytes());
        }
    }
    let Some(&first) = removed.first() else {
        return false;
    };
    let name = key.name();
    ctx.notify(EventClass::SortedSet, c"zrem", name);
    if key.kind() == KeyKind::Empty {
        ctx.notify(EventClass::Generic, c"del", name);
    }
    for members in removed.chunks(MAX_REPLICATED_ARGS) {
        Effect::Zrem { members }.replicate(ctx, name);
    }
    key.signal_modified();
    members
        .first()
        .is_some_and(|member| member.as_bytes() == first)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The contract lists the core commands the effects use: the same list as the one the load
    /// check takes, in the same order.
    #[test]
    fn the_documented_core_commands_are_the_ones_checked_at_load() {
        let contract = include_str!("../docs/contract.md");
        let sentence = contract
            .split("The core commands the effects use are ")
            .nth(1)
            .and_then(|rest| rest.split('.').next())
            .expect("docs/contract.md names the core commands");
        let documented: Vec<&str> = sentence.split('`').skip(1).step_by(2).collect();
        let names: Vec<&str> = CoreCommand::NAMES
            .iter()
            .map(|name| name.to_str().expect("ASCII"))
            .collect();
        assert_eq!(documented, names);
    }
}
