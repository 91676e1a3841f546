//! GOBLIN.ZWINDOW key now window limit member: a sliding-window log in a sorted set. Evict what
//! left the window, refresh a holder or admit a newcomer if there is room, re-arm the TTL. The
//! algorithm is `goblin_core::zwindow`, run on the key's sorted set.
//!
//! `now` may be `*`: the server's clock, in seconds with millisecond precision, from the same
//! command-time snapshot its TTLs count from. Leases shared by many machines then do not depend
//! on their clocks agreeing; replicas and the AOF get the resolved time, never `*`.

use goblin_core::clock::Now;
use goblin_core::zwindow::{self, Admission};

use crate::effects;
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};

pub struct GoblinZwindow;

static STATS: CommandStats = CommandStats::new();
/// Newcomers admitted, holders refreshed, newcomers rejected.
static ADMITTED: Counter = Counter::new();
static REFRESHED: Counter = Counter::new();
static REJECTED: Counter = Counter::new();
/// Members that left a window, over all calls.
static EVICTED: Counter = Counter::new();
/// Calls that took `now` from the server's clock (`*`).
static SERVER_CLOCK: Counter = Counter::new();

pub struct ZwindowArgs<'call> {
    key: Arg<'call>,
    now: Now,
    window: f64,
    limit: i64,
    member: Arg<'call>,
}

impl Command for GoblinZwindow {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.zwindow",
        flags: c"write deny-oom",
        acl_categories: c"write sortedset slow",
        summary: c"Admits member into a sliding window of limit members (evicting members at or below now - window), refreshes a holder, or rejects; re-arms the TTL.",
        complexity: c"O(log(N) + M) with N the members in the set and M the members evicted (at most about 1,024 per call).",
        since: c"0.1.0",
        key: KeyAccess::ReadUpdate,
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
        ],
        stats: &STATS,
        info_name: "zwindow",
        outcomes: &[
            ("admitted", &ADMITTED),
            ("refreshed", &REFRESHED),
            ("rejected", &REJECTED),
            ("evicted", &EVICTED),
            ("server_clock", &SERVER_CLOCK),
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
        args.finish()?;
        Ok(ZwindowArgs {
            key,
            now: now.to_now()?,
            window: window.to_finite_f64()?,
            limit: limit.to_i64().ok_or(CommandError::NotInteger)?,
            member,
        })
    }

    fn run<'call>(ctx: &'call Ctx, args: ZwindowArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let mut key = ctx.open_key(args.key);
        if !matches!(key.kind(), KeyKind::Empty | KeyKind::SortedSet) {
            return Err(CommandError::WrongType);
        }
        // One reading of the clock for the expiry and for `*`: the same instant.
        let now_ms = ctx.now_ms();
        // Computed before the first write, so an invalid expiry leaves the key untouched.
        let expiry = zwindow::expiry(args.window, now_ms)?;
        if args.now == Now::Server {
            SERVER_CLOCK.add(1);
        }
        let now = args.now.resolve(now_ms);

        let cutoff = zwindow::cutoff(now, args.window);
        let eviction = zwindow::evict(&mut key, cutoff);
        EVICTED.add(eviction.count as u64);
        effects::evicted(ctx, &key, &eviction);
        let admission = zwindow::admit(&mut key, &eviction, cutoff, args.limit, now, &args.member);
        match admission {
            Admission::Admitted(_) => ADMITTED.add(1),
            Admission::Refreshed(_) => REFRESHED.add(1),
            Admission::Rejected => REJECTED.add(1),
        }
        if admission.granted() {
            effects::recorded(ctx, &mut key, admission, args.member, now, expiry);
        }
        Ok(Reply::Int(i64::from(admission.granted())))
    }
}
