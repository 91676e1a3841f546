//! GOBLIN.ZWINDOW key now window limit member: a sliding-window log in a sorted set. Evict what
//! left the window, refresh a holder or admit a newcomer if there is room, re-arm the TTL. The
//! algorithm is `goblin_core::zwindow`, run on the key's sorted set.
//!
//! With `COST n` a request takes `n` units of `limit`, all or nothing, as one member whatever
//! `n` (`goblin_core::zwindow::cost`).
//!
//! `now` may be `*`: the server's clock, in seconds with millisecond precision, from the same
//! command-time snapshot its TTLs count from. Leases shared by many machines then do not depend
//! on their clocks agreeing; replicas and the AOF get the resolved time, never `*`.

use goblin_core::clock::Now;
use goblin_core::zwindow::cost;
use goblin_core::zwindow::{self, WindowExpiry};

use super::{lease_reply, step, ADMITTED, EVICTED, LEASE_SEPARATOR, REFRESHED, REJECTED};
use crate::commands::{fence_arg, permits_arg, PermitOptions};
use crate::effects;
use crate::error::zwindow::NOT_COST_ENTRIES;
use crate::error::CommandError;
use crate::fencing;
use crate::grant::{self, Permits, Slots};
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, Key, KeyKind, Reply};
use crate::waiting;

pub struct GoblinZwindow;

static STATS: CommandStats = CommandStats::new();
/// Calls that took `now` from the server's clock (`*`).
static SERVER_CLOCK: Counter = Counter::new();
/// Calls with `COST`.
static COSTED: Counter = Counter::new();

pub struct ZwindowArgs<'call> {
    key: Arg<'call>,
    now: Now,
    window: f64,
    limit: i64,
    member: Arg<'call>,
    /// `COST n`: units instead of members.
    cost: Option<i64>,
    /// `XX`: renew the member's slot, never admit it.
    renew_only: bool,
    /// `PERMITS n` (a holder of `n` slots, 1 without it), and `SEPARATOR sep`.
    permits: Permits<'call>,
    /// `FENCE`: reply a grant's fencing token (`crate::fencing`).
    fence: bool,
}

impl Command for GoblinZwindow {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.zwindow",
        flags: c"write deny-oom",
        acl_categories: c"write sortedset slow",
        summary: c"Admits member into a sliding window of limit members (evicting members at or below now - window), refreshes a holder, or rejects; re-arms the TTL. With COST, the request takes n units of the limit.",
        complexity: c"O(log(N) + M) with N the members in the set and M the members evicted (at most about 1,024 per call).",
        since: c"0.1.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::one_of(
                c"now",
                &[
                    ArgDoc::double(c"timestamp"),
                    ArgDoc::pure_token(c"server-time", "*"),
                ],
            ),
            ArgDoc::double(c"window"),
            ArgDoc::integer(c"limit"),
            ArgDoc::string(c"member"),
            ArgDoc::integer(c"cost").token("COST").optional(),
            ArgDoc::pure_token(c"xx", "XX")
                .summary(c"Only renew the slot member holds: never admit it.")
                .optional(),
            permits_arg(c"Take (or renew) permits slots at once, all or nothing: member and its numbered twins."),
            LEASE_SEPARATOR,
            fence_arg(c"Reply a grant's fencing token instead of 1.", Some(c"0.4.0")),
        ],
        stats: &STATS,
        info_name: "zwindow",
        outcomes: &[
            ("admitted", &ADMITTED),
            ("refreshed", &REFRESHED),
            ("rejected", &REJECTED),
            ("evicted", &EVICTED),
            ("server_clock", &SERVER_CLOCK),
            ("cost", &COSTED),
        ],
        stand_in: false,
    };

    type Args<'call> = ZwindowArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<ZwindowArgs<'call>, CommandError> {
        let (key, now, window, limit, member) = (
            args.next()?,
            args.next()?,
            args.next()?,
            args.next()?,
            args.next()?,
        );
        let (now, window) = (now.to_now()?, window.to_finite_f64()?);
        let limit = limit.to_i64().ok_or(CommandError::NotInteger)?;
        let (mut cost, mut renew_only, mut fence) = (None, false, false);
        let mut permits = PermitOptions::default();
        let mut options = args.rest().iter();
        // Each option once; COST (units of a rate limiter) goes with none of XX, PERMITS,
        // SEPARATOR and FENCE (of a lease).
        while let Some(option) = options.next() {
            if option.is("XX") && !renew_only && cost.is_none() {
                renew_only = true;
                continue;
            }
            if option.is("FENCE") && !fence && cost.is_none() {
                fencing::nameable(key)?;
                fence = true;
                continue;
            }
            match options.next() {
                Some(value)
                    if option.is("COST")
                        && cost.is_none()
                        && !renew_only
                        && !permits.given()
                        && !fence =>
                {
                    cost = Some(value.to_count()?)
                }
                Some(value) if cost.is_none() && permits.take(*option, *value)? => {}
                _ => return Err(CommandError::Syntax),
            }
        }
        Ok(ZwindowArgs {
            key,
            now,
            window,
            limit,
            member,
            cost,
            renew_only,
            permits: permits.permits(),
            fence,
        })
    }

    fn run<'call>(ctx: &'call Ctx, args: ZwindowArgs<'call>) -> Result<Reply<'call>, CommandError> {
        // A newcomer never goes before the callers waiting in line (GOBLIN.BZWINDOW).
        waiting::serve_first(ctx, args.key);
        let mut key = ctx.open_key(args.key);
        if !matches!(key.kind(), KeyKind::Empty | KeyKind::SortedSet) {
            return Err(CommandError::WrongType);
        }
        // One reading of the clock for the expiry and for `*`: the same instant.
        let now_ms = ctx.now_ms();
        if args.now == Now::Server {
            SERVER_CLOCK.add(1);
        }
        let now = args.now.resolve(now_ms);
        let cutoff = zwindow::cutoff(now, args.window);
        if let Some(cost) = args.cost {
            COSTED.add(1);
            // Computed before the first write, so an invalid expiry leaves the key untouched.
            let expiry = zwindow::expiry(args.window, now_ms)?;
            return costed(ctx, &mut key, &args, cost, now, cutoff, expiry);
        }
        let lease = grant::Lease {
            member: args.member,
            window: args.window,
            permits: args.permits,
            fence: args.fence,
        };
        let asked = lease.ask(ctx, args.key, now_ms)?;
        let slots = Slots::of(ctx, args.member, args.permits);
        let granted = step(
            ctx,
            &mut key,
            &asked,
            args.fence,
            &slots,
            cutoff,
            args.limit,
            now,
            !args.renew_only,
        );
        Ok(lease_reply(granted))
    }
}

/// A call with `COST cost`: a request dearer than the limit is refused before anything is
/// written; otherwise the window's units are read (a window written without `COST` is an error,
/// still before any write), then eviction, then one entry for the whole cost, or none.
fn costed<'call>(
    ctx: &'call Ctx,
    key: &mut Key<'call>,
    args: &ZwindowArgs<'call>,
    cost: i64,
    now: f64,
    cutoff: f64,
    expiry: WindowExpiry,
) -> Result<Reply<'call>, CommandError> {
    let cost = cost as u64;
    if !cost::fits(0, cost, args.limit) {
        REJECTED.add(1);
        return Ok(Reply::Int(0));
    }
    let usage = cost::usage(key, cutoff).map_err(|_| NOT_COST_ENTRIES)?;
    let eviction = effects::evict(ctx, key, cutoff);
    EVICTED.add(eviction.count as u64);
    match cost::entry(&usage, args.limit, now, cost, args.member.as_bytes()) {
        Some((score, member)) => {
            ADMITTED.add(1);
            effects::entry_admitted(ctx, key, score, &member, expiry);
            Ok(Reply::Int(1))
        }
        None => {
            REJECTED.add(1);
            Ok(Reply::Int(0))
        }
    }
}
