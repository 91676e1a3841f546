//! GOBLIN.BZWINDOW key window limit member timeout: GOBLIN.ZWINDOW's blocking acquire of a
//! lease or a permit, on the server's clock. Refreshes `member`'s slot, or admits it if there is
//! room and nobody waits; otherwise waits inside the server, in line, first come first served,
//! and is admitted the moment a slot frees: a release (GOBLIN.CAD, ZREM, DEL), the key's
//! expiry, or the oldest member ageing out of the window, on a timer set at its deadline.
//! `timeout` is in seconds, 0 waiting for ever; on expiry the reply is nil, as BZPOPMIN's.
//! Inside MULTI, a script or a function, and on a replica, it answers at once.
//!
//! ```text
//! -> 1, or nil
//! ```

use goblin_core::clock::Now;
use goblin_core::waitlist::Want;
use goblin_core::zwindow;

use super::{lease_reply, step, LEASE_SEPARATOR};
use crate::commands::{fence_arg, permits_arg, tally, PermitOptions};
use crate::error::CommandError;
use crate::fencing;
use crate::grant::{self, Permits, Slots};
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};
use crate::waiting::{self, Decision, Waits};

pub struct GoblinBzwindow;

static STATS: CommandStats = CommandStats::new();
static GRANTED: Counter = Counter::new();
static WAITED: Counter = Counter::new();

pub struct BzwindowArgs<'call> {
    key: Arg<'call>,
    window: f64,
    limit: i64,
    member: Arg<'call>,
    timeout_ms: i64,
    /// `PERMITS n` (`n` slots at once, 1 without it), and `SEPARATOR sep`.
    permits: Permits<'call>,
    /// `FENCE`: reply the grant's fencing token.
    fence: bool,
}

impl Command for GoblinBzwindow {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.bzwindow",
        flags: c"write deny-oom blocking",
        acl_categories: c"write sortedset slow blocking",
        summary: c"Refreshes member's slot in a sliding window on the server's clock, admits it if there is room, or waits in line for a slot (first come, first served) until timeout seconds pass (0: for ever).",
        complexity: c"O(log(N) + M) with N the members in the set and M the members evicted; each hand-off is O(W) with W the waiters on the key.",
        since: c"0.3.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::double(c"window"),
            ArgDoc::integer(c"limit"),
            ArgDoc::string(c"member"),
            ArgDoc::double(c"timeout"),
            permits_arg(c"Wait for permits slots at once, all or nothing: member and its numbered twins."),
            LEASE_SEPARATOR,
            fence_arg(c"Reply the grant's fencing token instead of 1.", Some(c"0.4.0")),
        ],
        stats: &STATS,
        info_name: "bzwindow",
        outcomes: &[("granted", &GRANTED), ("waited", &WAITED)],
        stand_in: false,
    };

    type Args<'call> = BzwindowArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<BzwindowArgs<'call>, CommandError> {
        let key = args.next()?;
        let window = args.next()?.to_finite_f64()?;
        let limit = args.next()?.to_i64().ok_or(CommandError::NotInteger)?;
        let member = args.next()?;
        let timeout_ms = args.next()?.to_timeout_ms()?;
        let (mut permits, mut fence) = (PermitOptions::default(), false);
        let mut options = args.rest().iter();
        // Each option once, in either order.
        while let Some(option) = options.next() {
            if option.is("FENCE") && !fence {
                fencing::nameable(key)?;
                fence = true;
                continue;
            }
            match options.next() {
                Some(value) if permits.take(*option, *value)? => {}
                _ => return Err(CommandError::Syntax),
            }
        }
        let permits = permits.permits();
        Ok(BzwindowArgs {
            key,
            window,
            limit,
            member,
            timeout_ms,
            permits,
            fence,
        })
    }

    fn run<'call>(
        ctx: &'call Ctx,
        args: BzwindowArgs<'call>,
    ) -> Result<Reply<'call>, CommandError> {
        waiting::timeout_fits(ctx, args.timeout_ms)?;
        let waits = Waits {
            timeout_ms: args.timeout_ms,
            command: Self::SPEC.name,
        };
        let reply = waiting::acquire(ctx, args.key, Some(waits), |key, _| {
            if !matches!(key.kind(), KeyKind::Empty | KeyKind::SortedSet) {
                return Err(CommandError::WrongType);
            }
            let now_ms = ctx.now_ms();
            let now = Now::Server.resolve(now_ms);
            let cutoff = zwindow::cutoff(now, args.window);
            let lease = grant::Lease {
                member: args.member,
                window: args.window,
                permits: args.permits,
                fence: args.fence,
            };
            let asked = lease.ask(ctx, args.key, now_ms)?;
            let slots = Slots::of(ctx, args.member, args.permits);
            let granted = step(
                ctx, key, &asked, args.fence, &slots, cutoff, args.limit, now, true,
            );
            if granted.is_some() {
                return Ok(Decision::Now(lease_reply(granted)));
            }
            Ok(Decision::Wait(Want::Lease {
                member: args.member.as_bytes().to_vec(),
                window: args.window,
                limit: args.limit,
                permits: args.permits.count,
                separator: args.permits.separator.map(<[u8]>::to_vec),
                fence: args.fence,
            }))
        })?;
        tally(&reply, &GRANTED, Some(&WAITED), None);
        Ok(reply)
    }
}
