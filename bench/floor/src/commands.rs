//! The floor commands, one per Goblin command that writes, each for its benchmark workload
//! (`scripts/instructions.sh`): what one allowed call of it asks of the server, in the least
//! calls. The workload's arguments are constants here (a window of 60 s, GCRA's limits); what
//! Goblin computes from the stored state is the least arithmetic that gives the same bytes.
//! A call the floor is not made for (another type, a value it did not write) is refused.
//!
//! Each write is said as Goblin says it (`src/effects.rs`): the same events, the same
//! replicated effect; the key is signalled as modified when it is closed.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use crate::api::{Class, Command, Ctx, Key, Member, Parked, Refusal, Str, Value};
use crate::text::parse;
use goblin_core::decimal::Decimal;

const NOT_MADE_FOR: Refusal = c"ERR floor: not the call of the benchmark's workload";
const WRONGTYPE: Refusal = c"WRONGTYPE Operation against a key holding the wrong kind of value";

/// Argument `i`.
#[inline]
fn arg<'c>(argv: &[Str<'c>], i: usize) -> Result<Str<'c>, Refusal> {
    argv.get(i)
        .copied()
        .ok_or(c"ERR wrong number of arguments for a floor command")
}

/// Writes `value` over the string `key` holds, of `held` bytes (0: a new key): in place when
/// the length is the same, resized otherwise.
#[inline]
fn store(key: &mut Key<'_>, held: usize, value: &[u8]) -> Result<(), Refusal> {
    if held == value.len() {
        match key.string_rw() {
            Some(bytes) if bytes.len() == value.len() => {
                bytes.copy_from_slice(value);
                Ok(())
            }
            _ => Err(WRONGTYPE),
        }
    } else {
        key.resize_and_write(value)
    }
}

/// A counter's hit (GOBLIN.INCREX, GOBLIN.FWINDOW): the first arms the window (`SET key 1 PXAT
/// at`, `incrby` and `expire`), a later one counts in place (`INCR key`, `incrby`). Returns
/// the count, and for the first hit its expiry.
#[inline]
fn counter_hit(
    ctx: Ctx<'_>,
    name: Str<'_>,
    key: &mut Key<'_>,
    window_ms: i64,
) -> Result<(i64, bool), Refusal> {
    let bytes = key.string_rw().ok_or(WRONGTYPE)?;
    if bytes.is_empty() {
        key.resize_and_write(b"1")?;
        let at_ms = ctx.now_ms() + window_ms;
        key.set_abs_expire(at_ms)?;
        ctx.notify(Class::String, c"incrby", name);
        ctx.notify(Class::Generic, c"expire", name);
        let at = Decimal::integer(at_ms);
        ctx.replicate_set_pxat(name, Value::Bytes(b"1"), at.as_bytes())?;
        return Ok((1, true));
    }
    let value = parse(bytes).ok_or(NOT_MADE_FOR)? + 1;
    let text = Decimal::integer(value);
    if text.as_bytes().len() == bytes.len() {
        bytes.copy_from_slice(text.as_bytes());
    } else {
        key.resize_and_write(text.as_bytes())?;
    }
    ctx.notify(Class::String, c"incrby", name);
    ctx.replicate_key(c"INCR", name)?;
    Ok((value, false))
}

/// GOBLIN.INCREX key 60.
pub struct Increx;

impl Command for Increx {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        let name = arg(argv, 1)?;
        let mut key = ctx.open(name)?;
        let (count, _) = counter_hit(ctx, name, &mut key, 60_000)?;
        ctx.reply_int(count);
        Ok(())
    }
}

/// GOBLIN.FWINDOW key 60000: a counter's hit, and the reply `[count, ttl_ms]`.
pub struct Fwindow;

impl Command for Fwindow {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        const WINDOW_MS: i64 = 60_000;
        let name = arg(argv, 1)?;
        let mut key = ctx.open(name)?;
        let (count, first) = counter_hit(ctx, name, &mut key, WINDOW_MS)?;
        let ttl_ms = if first {
            WINDOW_MS
        } else {
            key.ttl_ms().ok_or(NOT_MADE_FOR)?
        };
        ctx.reply_ints(&[count, ttl_ms]);
        Ok(())
    }
}

/// GOBLIN.ZWINDOW key now 10000 limit member, `now` the client's (an integer): what left the
/// window removed (`ZREMRANGEBYSCORE key -inf cutoff`), the count read, the member added
/// (`ZADD key now member`), the TTL re-armed (`PEXPIREAT`); replies 1.
pub struct Zwindow;

impl Command for Zwindow {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        const WINDOW: f64 = 10_000.0;
        let (name, now_arg, member) = (arg(argv, 1)?, arg(argv, 2)?, arg(argv, 5)?);
        // The score: ZsetAdd takes a double, so the API forces this parse.
        let now = now_arg.double().ok_or(NOT_MADE_FOR)?;
        let cutoff = now - WINDOW;
        let mut key = ctx.open(name)?;
        let mut removed = 0;
        loop {
            let mut lowest: [Option<Member<'_>>; 8] = Default::default();
            let taken = key.lowest_at_or_below(ctx, cutoff, &mut lowest);
            for member in lowest[..taken].iter().flatten() {
                key.zrem(member);
            }
            removed += taken;
            if taken < lowest.len() {
                break;
            }
        }
        if removed > 0 {
            ctx.notify(Class::SortedSet, c"zremrangebyscore", name);
            if !(cutoff >= 0.0 && cutoff.fract() == 0.0) {
                return Err(NOT_MADE_FOR);
            }
            let through = Decimal::integer(cutoff as i64);
            ctx.replicate_zremrangebyscore(name, through.as_bytes())?;
        }
        // The count a limiter decides on: every sliding log reads it.
        let _in_window = key.len();
        key.zadd(now, member)?;
        ctx.notify(Class::SortedSet, c"zadd", name);
        // The client's own text is the score's shortest decimal here (an integer).
        ctx.replicate_zadd(name, now_arg, member)?;
        let at_ms = ctx.now_ms() + 10_000_000;
        key.set_abs_expire(at_ms)?;
        ctx.notify(Class::Generic, c"expire", name);
        let at = Decimal::integer(at_ms);
        ctx.replicate_pexpireat(name, at.as_bytes())?;
        ctx.reply_int(1);
        Ok(())
    }
}

/// GOBLIN.BZWINDOW key 1000000 limit member timeout, granted at once: GOBLIN.ZWINDOW's call on
/// the server's clock (`now`, a score in seconds with the milliseconds, formatted for the
/// replicated ZADD), with a window of a million seconds (nothing leaves it: the workload's
/// members stay). Replies 1.
pub struct Bzwindow;

impl Command for Bzwindow {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        const WINDOW_MS: i64 = 1_000_000_000;
        let (name, member) = (arg(argv, 1)?, arg(argv, 4)?);
        let now_ms = ctx.now_ms();
        let now = now_ms as f64 / 1000.0;
        let mut key = ctx.open(name)?;
        let mut left: [Option<Member<'_>>; 1] = Default::default();
        if key.lowest_at_or_below(ctx, now - 1_000_000.0, &mut left) > 0 {
            return Err(NOT_MADE_FOR);
        }
        key.zadd(now, member)?;
        ctx.notify(Class::SortedSet, c"zadd", name);
        let score = Decimal::score(now);
        ctx.replicate_zadd_at(name, score.as_bytes(), member)?;
        let at_ms = now_ms + WINDOW_MS;
        key.set_abs_expire(at_ms)?;
        ctx.notify(Class::Generic, c"expire", name);
        let at = Decimal::integer(at_ms);
        ctx.replicate_pexpireat(name, at.as_bytes())?;
        ctx.reply_int(1);
        Ok(())
    }
}

/// GOBLIN.SWINDOW key 60 limit: both windows' counts in one string, `start:current:previous`,
/// counted and written with their expiry (`SET key counts PXAT at`, `swindow` and `expire`);
/// replies `[1, previous, previous_ttl_ms, current, current_ttl_ms]`.
pub struct Swindow;

impl Command for Swindow {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        const WINDOW_MS: i64 = 60_000;
        let name = arg(argv, 1)?;
        let mut key = ctx.open(name)?;
        let now = ctx.now_ms();
        let start = now - now.rem_euclid(WINDOW_MS);
        let end = start + WINDOW_MS;
        let expires_at = end + WINDOW_MS;
        let bytes = key.string_rw().ok_or(WRONGTYPE)?;
        let held = bytes.len();
        let (current, previous) = if bytes.is_empty() {
            (0, 0)
        } else {
            let mut parts = bytes.split(|&byte| byte == b':').map(parse);
            let (Some(Some(stored_start)), Some(Some(stored_current)), Some(Some(stored_previous))) =
                (parts.next(), parts.next(), parts.next())
            else {
                return Err(NOT_MADE_FOR);
            };
            if stored_start == start {
                (stored_current, stored_previous)
            } else if stored_start + WINDOW_MS == start {
                (0, stored_current)
            } else {
                (0, 0)
            }
        };
        let current = current + 1;
        let mut text = [0u8; 64];
        let mut len = 0;
        for (i, number) in [start, current, previous].into_iter().enumerate() {
            if i > 0 {
                text[len] = b':';
                len += 1;
            }
            let digits = Decimal::integer(number);
            text[len..len + digits.as_bytes().len()].copy_from_slice(digits.as_bytes());
            len += digits.as_bytes().len();
        }
        let text = &text[..len];
        store(&mut key, held, text)?;
        key.set_abs_expire(expires_at)?;
        ctx.notify(Class::String, c"swindow", name);
        ctx.notify(Class::Generic, c"expire", name);
        let at = Decimal::integer(expires_at);
        ctx.replicate_set_pxat(name, Value::Bytes(text), at.as_bytes())?;
        let previous_ttl = if previous > 0 { end - now } else { 0 };
        ctx.reply_ints(&[1, previous, previous_ttl, current, expires_at - now]);
        Ok(())
    }
}

/// One GCRA policy of the workloads: its capacity (`max_burst + 1`) and emission interval in
/// microseconds (`period / tokens_per_period`, rounded).
#[derive(Clone, Copy)]
struct Policy {
    capacity: i64,
    emission: i64,
}

/// `GCRA k 1000000 1 60`: a million and one, one a minute (a TAT that stays ahead of the clock
/// through the workload, so that no key expires while it runs).
const GCRA_POLICY: Policy = Policy {
    capacity: 1_000_001,
    emission: 60_000_000,
};

/// One allowed request against the TAT at `name`: the TAT advanced and stored with its expiry
/// (`SET key tat PXAT ms`, `gcra` and `expire`). Returns GOBLIN.GCRA's reply.
#[inline]
fn throttle(ctx: Ctx<'_>, name: Str<'_>, policy: Policy, now_us: i64) -> Result<[i64; 5], Refusal> {
    let mut key = ctx.open(name)?;
    let bytes = key.string_rw().ok_or(WRONGTYPE)?;
    let held = bytes.len();
    let base = if bytes.is_empty() {
        now_us
    } else {
        parse(bytes).ok_or(NOT_MADE_FOR)?.max(now_us)
    };
    let tat = base + policy.emission;
    let text = Decimal::integer(tat);
    store(&mut key, held, text.as_bytes())?;
    let at_ms = tat / 1000;
    key.set_abs_expire(at_ms)?;
    ctx.notify(Class::String, c"gcra", name);
    ctx.notify(Class::Generic, c"expire", name);
    let at = Decimal::integer(at_ms);
    ctx.replicate_set_pxat(name, Value::Bytes(text.as_bytes()), at.as_bytes())?;
    let ttl = tat - now_us;
    let headroom = policy.capacity * policy.emission - ttl;
    let remaining = if headroom > -policy.emission {
        headroom / policy.emission
    } else {
        0
    };
    Ok([
        0,
        policy.capacity,
        remaining,
        -1,
        (ttl + 999_999) / 1_000_000,
    ])
}

/// GOBLIN.GCRA key 1000000 1 60.
pub struct Gcra;

impl Command for Gcra {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        let name = arg(argv, 1)?;
        let reply = throttle(ctx, name, GCRA_POLICY, ctx.now_ms() * 1000)?;
        ctx.reply_ints(&reply);
        Ok(())
    }
}

/// GOBLIN.MGCRA 1 key 1000000 1 60, and GOBLIN.MGCRA 4 with that policy on four keys (told
/// apart by the number of arguments): each policy's request as GOBLIN.GCRA's;
/// replies `[0, -1, policy...]`.
pub struct Mgcra;

impl Command for Mgcra {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        let now_us = ctx.now_ms() * 1000;
        match argv.len() {
            6 => {
                let reply = throttle(ctx, arg(argv, 2)?, GCRA_POLICY, now_us)?;
                ctx.reply_array(3);
                ctx.reply_int(0);
                ctx.reply_int(-1);
                ctx.reply_ints(&reply);
            }
            18 => {
                let mut replies = [[0; 5]; 4];
                for (i, reply) in replies.iter_mut().enumerate() {
                    *reply = throttle(ctx, arg(argv, 2 + 4 * i)?, GCRA_POLICY, now_us)?;
                }
                ctx.reply_array(6);
                ctx.reply_int(0);
                ctx.reply_int(-1);
                for reply in &replies {
                    ctx.reply_ints(reply);
                }
            }
            _ => return Err(NOT_MADE_FOR),
        }
        Ok(())
    }
}

/// GOBLIN.LOCK key token 30000: a free key taken, or its holder's lease re-armed (`SET key
/// token PXAT at`, `set` and `expire`); replies OK. GOBLIN.WLOCK's floor too: a writer taking a
/// free key writes GOBLIN.LOCK's lock exactly.
pub struct Lock;

impl Command for Lock {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        let (name, token) = (arg(argv, 1)?, arg(argv, 2)?);
        let mut key = ctx.open(name)?;
        let held = key.string().ok_or(WRONGTYPE)?;
        if held.is_empty() {
            key.set_string(token)?;
        } else if held != token.bytes() {
            return Err(NOT_MADE_FOR);
        }
        // The holder's own token is already the value: nothing to rewrite.
        let at_ms = ctx.now_ms() + 30_000;
        key.set_abs_expire(at_ms)?;
        ctx.notify(Class::String, c"set", name);
        ctx.notify(Class::Generic, c"expire", name);
        let at = Decimal::integer(at_ms);
        ctx.replicate_set_pxat(name, Value::Str(token), at.as_bytes())?;
        ctx.reply_ok();
        Ok(())
    }
}

/// GOBLIN.RLOCK's workloads: a reader let in, on a free key or beside readers whose leases run
/// (`ZADD key <end> token`, `zadd`), and the key re-armed to the new lease's end, the last of
/// them (`PEXPIREAT key <end>`, `expire`). Lapsed leases are looked for first; there are none.
pub struct Rlock;

impl Command for Rlock {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        let (name, token) = (arg(argv, 1)?, arg(argv, 2)?);
        let now_ms = ctx.now_ms();
        let mut key = ctx.open(name)?;
        let mut lapsed: [Option<Member<'_>>; 1] = Default::default();
        if key.lowest_at_or_below(ctx, (now_ms - 1) as f64, &mut lapsed) > 0 {
            return Err(NOT_MADE_FOR);
        }
        let at_ms = now_ms + 30_000;
        key.zadd(at_ms as f64, token)?;
        ctx.notify(Class::SortedSet, c"zadd", name);
        let at = Decimal::integer(at_ms);
        ctx.replicate_zadd_at(name, at.as_bytes(), token)?;
        key.set_abs_expire(at_ms)?;
        ctx.notify(Class::Generic, c"expire", name);
        ctx.replicate_pexpireat(name, at.as_bytes())?;
        ctx.reply_ok();
        Ok(())
    }
}

/// A waiter parked on a held lock (GOBLIN.BLOCK key token ms timeout, in line): what the
/// hand-off that serves it needs, by key.
struct Waiter {
    parked: Parked,
    token: Vec<u8>,
    ms: i64,
}

static WAITERS: Mutex<BTreeMap<Vec<u8>, Waiter>> = Mutex::new(BTreeMap::new());

/// A parked client went away: its handle (the one `gone` names) is dropped from the waiters,
/// never to be woken.
pub fn forget_waiter(gone: impl Fn(&Parked) -> bool) {
    let mut waiters = WAITERS.lock().unwrap_or_else(PoisonError::into_inner);
    waiters.retain(|_, waiter| !gone(&waiter.parked));
}

/// GOBLIN.BLOCK key token 30000 0 on a lock someone holds (the hand-off row's setup): the
/// caller blocked on its key, for `Handoff` to serve. Replies nothing now.
pub struct Park;

impl Command for Park {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        let (name, token) = (arg(argv, 1)?, arg(argv, 2)?);
        let parked = ctx.park(name).ok_or(NOT_MADE_FOR)?;
        let waiter = Waiter {
            parked,
            token: token.bytes().to_vec(),
            ms: 30_000,
        };
        let mut waiters = WAITERS.lock().unwrap_or_else(PoisonError::into_inner);
        waiters.insert(name.bytes().to_vec(), waiter);
        Ok(())
    }
}

/// GOBLIN.CAD key token of a lock one waiter waits for: the lock released as `Cad` releases
/// it (`del`, `DEL key`), then the waiter's lock taken as `Lock` takes a free key (`SET key
/// its-token PXAT at`, `set` and `expire`), and the waiter woken (it replies OK); replies 1.
pub struct Handoff;

impl Command for Handoff {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        let (name, token) = (arg(argv, 1)?, arg(argv, 2)?);
        let mut key = ctx.open(name)?;
        if key.string().ok_or(NOT_MADE_FOR)? != token.bytes() {
            return Err(NOT_MADE_FOR);
        }
        key.delete();
        ctx.notify(Class::Generic, c"del", name);
        ctx.replicate_key(c"DEL", name)?;
        let waiter = WAITERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(name.bytes())
            .ok_or(NOT_MADE_FOR)?;
        key.resize_and_write(&waiter.token)?;
        let at_ms = ctx.now_ms() + waiter.ms;
        key.set_abs_expire(at_ms)?;
        ctx.notify(Class::String, c"set", name);
        ctx.notify(Class::Generic, c"expire", name);
        let at = Decimal::integer(at_ms);
        ctx.replicate_set_pxat(name, Value::Bytes(&waiter.token), at.as_bytes())?;
        waiter.parked.wake();
        ctx.reply_int(1);
        Ok(())
    }
}

/// GOBLIN.CAD key token: the lock released if the key holds the token (`UNLINK`, `del`, `DEL
/// key`); replies 1, or 0.
pub struct Cad;

impl Command for Cad {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        let (name, token) = (arg(argv, 1)?, arg(argv, 2)?);
        let mut key = ctx.open(name)?;
        if key.string().ok_or(NOT_MADE_FOR)? != token.bytes() {
            ctx.reply_int(0);
            return Ok(());
        }
        // A string: deleting it never blocks, unlinking buys nothing.
        key.delete();
        deleted(ctx, name)
    }
}

/// A key deleted: `del`, and `DEL key` to replicas and the AOF; replies 1.
#[inline]
fn deleted(ctx: Ctx<'_>, name: Str<'_>) -> Result<(), Refusal> {
    ctx.notify(Class::Generic, c"del", name);
    ctx.replicate_key(c"DEL", name)?;
    ctx.reply_int(1);
    Ok(())
}

/// GOBLIN.EXTEND key token 30000: the holder's TTL lengthened by 30 s (`PEXPIREAT key at`,
/// `expire`); replies 1, or 0.
pub struct Extend;

impl Command for Extend {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        let (name, token) = (arg(argv, 1)?, arg(argv, 2)?);
        let mut key = ctx.open(name)?;
        let held = key.string().ok_or(NOT_MADE_FOR)?;
        let left = if !held.is_empty() && held == token.bytes() {
            key.ttl_ms()
        } else {
            None
        };
        let Some(left) = left else {
            ctx.reply_int(0);
            return Ok(());
        };
        let at_ms = ctx.now_ms() + left + 30_000;
        key.set_abs_expire(at_ms)?;
        ctx.notify(Class::Generic, c"expire", name);
        let at = Decimal::integer(at_ms);
        ctx.replicate_pexpireat(name, at.as_bytes())?;
        ctx.reply_int(1);
        Ok(())
    }
}

/// The INCREX stand-in's `INCREX key BYINT 1 EX 60 ENX`: the first hit arms the window (`SET
/// key 1 PXAT at`), a later one, on a key with a TTL, counts keeping it (`SET key n KEEPTTL`);
/// `incrby` (and `expire`); replies `[count, 1]`.
pub struct StandInIncrex;

impl Command for StandInIncrex {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        let name = arg(argv, 1)?;
        let mut key = ctx.open(name)?;
        let bytes = key.string_rw().ok_or(WRONGTYPE)?;
        if bytes.is_empty() {
            key.resize_and_write(b"1")?;
            let at_ms = ctx.now_ms() + 60_000;
            key.set_abs_expire(at_ms)?;
            let at = Decimal::integer(at_ms);
            ctx.replicate_set_pxat(name, Value::Bytes(b"1"), at.as_bytes())?;
            ctx.notify(Class::String, c"incrby", name);
            ctx.notify(Class::Generic, c"expire", name);
            ctx.reply_ints(&[1, 1]);
            return Ok(());
        }
        let value = parse(bytes).ok_or(NOT_MADE_FOR)? + 1;
        let text = Decimal::integer(value);
        if text.as_bytes().len() == bytes.len() {
            bytes.copy_from_slice(text.as_bytes());
        } else {
            key.resize_and_write(text.as_bytes())?;
        }
        // ENX: the TTL is read, as the native reads it, and kept.
        key.ttl_ms().ok_or(NOT_MADE_FOR)?;
        ctx.replicate_set_keepttl(name, text.as_bytes())?;
        ctx.notify(Class::String, c"incrby", name);
        ctx.reply_ints(&[value, 1]);
        Ok(())
    }
}

/// The DELEX stand-in's `DELEX key IFEQ token`: the key read as GET reads it (a hit counted),
/// compared, then deleted as DEL deletes one key (`del`, `DEL key`); replies 1, or 0.
pub struct StandInDelex;

impl Command for StandInDelex {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal> {
        let (name, token) = (arg(argv, 1)?, arg(argv, 3)?);
        let holds = match ctx.open_read(name) {
            Some(key) => key.string().ok_or(NOT_MADE_FOR)? == token.bytes(),
            None => false,
        };
        if !holds {
            ctx.reply_int(0);
            return Ok(());
        }
        ctx.open(name)?.delete();
        deleted(ctx, name)
    }
}
