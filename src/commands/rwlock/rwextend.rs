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

use super::lease_end;
use crate::commands::{extend_args, parse_extend, ExtendArgs};
use crate::error::CommandError;
use crate::grant::RwLease;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Args, Ctx, KeyKind, Reply};

pub struct GoblinRwextend;

static STATS: CommandStats = CommandStats::new();
static EXTENDED: Counter = Counter::new();
static NOT_HELD: Counter = Counter::new();

const ARGS: [ArgDoc; 5] = extend_args(None);

impl Command for GoblinRwextend {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.rwextend",
        flags: c"write deny-oom fast",
        acl_categories: c"write sortedset string fast",
        summary: c"Adds milliseconds to the read or write lease token holds on a readers-writer lock (or sets it to milliseconds from now, with REPLACE); replies 0 when token holds none.",
        complexity: c"O(log(N)) with N the readers, and O(M) more for M lapsed leases removed.",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &ARGS,
        stats: &STATS,
        info_name: "rwextend",
        outcomes: &[("extended", &EXTENDED), ("not_held", &NOT_HELD)],
        stand_in: false,
    };

    type Args<'call> = ExtendArgs<'call>;

    fn parse<'call>(args: Args<'_, 'call>) -> Result<ExtendArgs<'call>, CommandError> {
        parse_extend(args)
    }

    fn run<'call>(ctx: &'call Ctx, args: ExtendArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let mut key = ctx.open_key(args.key);
        let now_ms = ctx.now_ms();
        // When the lease `token` holds ends, if one runs: the writer's key's expiry, or the
        // reader's score.
        let kind = key.kind();
        let ends_ms = match kind {
            KeyKind::Empty => None,
            KeyKind::String if key.string_or_empty() == Some(args.token.as_bytes()) => {
                key.present_ttl_ms().map(|left| now_ms.saturating_add(left))
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
        let lease = RwLease {
            name: args.key,
            token: args.token,
            end_ms: lease_end(from_ms, args.ms)?,
            how: How::Again,
            fence: args.fence,
            now_ms,
            kind,
        };
        let token = match kind {
            KeyKind::String => lease.writer(ctx, &mut key)?,
            _ => lease.reader(ctx, &mut key)?,
        };
        EXTENDED.add(1);
        Ok(Reply::Int(token.unwrap_or(1)))
    }
}
