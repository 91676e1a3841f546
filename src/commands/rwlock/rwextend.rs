//! GOBLIN.RWEXTEND key token milliseconds [REPLACE] [FENCE]: an owner-checked extend of a
//! readers-writer lock's lease, whichever mode `token` holds it in. Adds `milliseconds` to the
//! lease (or, with REPLACE, sets it to `milliseconds` from now) and replies 1; replies 0 and
//! changes nothing if `token` holds no lease that runs now. A time that is not positive is an
//! error, never a release.
//!
//! ```text
//! -> 1 extended (with FENCE: the holder's fencing token), 0 not held by token
//! ```

use goblin_core::rwlock::{self, How};

use super::{lease_end, Grant};
use crate::error::CommandError;
use crate::fencing;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};

pub struct GoblinRwextend;

static STATS: CommandStats = CommandStats::new();
static EXTENDED: Counter = Counter::new();
static NOT_HELD: Counter = Counter::new();

pub struct RwextendArgs<'call> {
    key: Arg<'call>,
    token: Arg<'call>,
    ms: i64,
    replace: bool,
    fence: bool,
}

impl Command for GoblinRwextend {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.rwextend",
        flags: c"write deny-oom fast",
        acl_categories: c"write sortedset string fast",
        summary: c"Adds milliseconds to the read or write lease token holds on a readers-writer lock (or sets it to milliseconds from now, with REPLACE); replies 0 when token holds none.",
        complexity: c"O(log(N)) with N the readers, and O(M) more for M lapsed leases removed.",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::string(c"token"),
            ArgDoc::integer(c"milliseconds"),
            ArgDoc::pure_token(c"replace", "REPLACE")
                .summary(c"The lease ends milliseconds from now, instead of milliseconds later.")
                .optional(),
            ArgDoc::pure_token(c"fence", "FENCE")
                .summary(c"Reply the holder's fencing token instead of 1.")
                .optional(),
        ],
        stats: &STATS,
        info_name: "rwextend",
        outcomes: &[("extended", &EXTENDED), ("not_held", &NOT_HELD)],
        stand_in: false,
    };

    type Args<'call> = RwextendArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<RwextendArgs<'call>, CommandError> {
        let (key, token) = (args.next()?, args.next()?);
        let ms = super::lease_ms(args.next()?)?;
        let (mut replace, mut fence) = (false, false);
        // Each option once, in either order.
        for option in args.rest() {
            if option.is("REPLACE") && !replace {
                replace = true;
            } else if option.is("FENCE") && !fence {
                fencing::nameable(key)?;
                fence = true;
            } else {
                return Err(CommandError::Syntax);
            }
        }
        Ok(RwextendArgs {
            key,
            token,
            ms,
            replace,
            fence,
        })
    }

    fn run<'call>(
        ctx: &'call Ctx,
        args: RwextendArgs<'call>,
    ) -> Result<Reply<'call>, CommandError> {
        let mut key = ctx.open_key(args.key);
        let now_ms = ctx.now_ms();
        // When the lease `token` holds ends, if one runs: the writer's key's expiry, or the
        // reader's score.
        let ends_ms = match key.kind() {
            KeyKind::Empty => None,
            KeyKind::String if key.string() == Some(args.token.as_bytes()) => {
                key.ttl_ms().map(|left| now_ms.saturating_add(left))
            }
            KeyKind::String => None,
            KeyKind::SortedSet => key
                .score(args.token)
                .filter(|&score| rwlock::runs(score, now_ms))
                .map(rwlock::end_of),
            KeyKind::Other => return Err(CommandError::WrongType),
        };
        let Some(ends_ms) = ends_ms else {
            NOT_HELD.add(1);
            return Ok(Reply::Int(0));
        };
        let from_ms = if args.replace { now_ms } else { ends_ms };
        let grant = Grant {
            name: args.key,
            token: args.token,
            end_ms: lease_end(from_ms, args.ms)?,
            how: How::Again,
            fence: args.fence,
            now_ms,
        };
        let token = match key.kind() {
            KeyKind::String => grant.writer(ctx, &mut key)?,
            _ => grant.reader(ctx, &mut key)?,
        };
        EXTENDED.add(1);
        Ok(Reply::Int(token.unwrap_or(1)))
    }
}
