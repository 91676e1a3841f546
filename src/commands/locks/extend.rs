//! GOBLIN.EXTEND key token milliseconds [REPLACE]: an owner-checked extend of a token lock. If
//! the key holds `token` and has a TTL, adds `milliseconds` to it (or, with REPLACE, sets it to
//! `milliseconds`) and replies 1; otherwise changes nothing and replies 0: the caller does not
//! hold the lock. A time that is not positive is an error, never a deletion.
//!
//! ```text
//! -> 1 extended, 0 not held by token
//! ```

use crate::commands::{extend_args, parse_extend, ExtendArgs};
use crate::effects;
use crate::error::CommandError;
use crate::fencing::{Fence, Holder};
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Args, Ctx, KeyKind, Reply};

pub struct GoblinExtend;

static STATS: CommandStats = CommandStats::new();
static EXTENDED: Counter = Counter::new();
static NOT_HELD: Counter = Counter::new();

/// `FENCE` came to GOBLIN.EXTEND after it.
const ARGS: [ArgDoc; 5] = extend_args(Some(c"0.4.0"));

impl Command for GoblinExtend {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.extend",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        summary: c"Adds milliseconds to a token lock's TTL (or sets it to milliseconds, with REPLACE) if the key still holds token; replies 0 when it does not.",
        complexity: c"O(1)",
        since: c"0.3.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &ARGS,
        stats: &STATS,
        info_name: "extend",
        outcomes: &[("extended", &EXTENDED), ("not_held", &NOT_HELD)],
        stand_in: false,
    };

    type Args<'call> = ExtendArgs<'call>;

    fn parse<'call>(args: Args<'_, 'call>) -> Result<ExtendArgs<'call>, CommandError> {
        parse_extend(args)
    }

    fn run<'call>(ctx: &'call Ctx, args: ExtendArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let mut key = ctx.open_key(args.key);
        // The value read first, and the kind asked only of an empty one (a missing key reads
        // empty too): one call into the server for a lock's key, not three.
        let held = match key.string_or_empty() {
            None => return Err(CommandError::WrongType),
            Some([]) => {
                key.kind() == KeyKind::String
                    && (args.token.as_bytes().is_empty() || planted_owner())
            }
            Some(stored) => stored == args.token.as_bytes() || planted_owner(),
        };
        // A lock without a TTL is not a lease to extend (as the extend of redis-py's Lock). A
        // key held is there, so its expiry is read without asking.
        let Some(left_ms) = held.then(|| key.present_ttl_ms()).flatten() else {
            NOT_HELD.add(1);
            return Ok(Reply::Int(0));
        };
        let ttl_ms = if args.replace {
            args.ms
        } else {
            left_ms
                .checked_add(args.ms)
                .ok_or(CommandError::InvalidExpire)?
        };
        let at_ms = ctx
            .now_ms()
            .checked_add(ttl_ms)
            .ok_or(CommandError::InvalidExpire)?;
        let fence = Fence::asked(ctx, args.fence, args.key, Holder::Lock(args.token))?;
        effects::expires_at(ctx, &mut key, at_ms);
        EXTENDED.add(1);
        // The holder keeps its token (one is minted if its grant had none), and the token's
        // expiry follows the lock's.
        Ok(match fence {
            Some(fence) => Reply::Int(fence.grant(ctx, true, Some(at_ms))),
            None => Reply::Int(1),
        })
    }
}

/// The planted defect `ExtendIgnoresOwner` (the test build's `planted-defects`): any token
/// extends the lock.
#[cfg(feature = "planted-defects")]
fn planted_owner() -> bool {
    use goblin_core::planted::{planted, Defect};
    planted(Defect::ExtendIgnoresOwner)
}

#[cfg(not(feature = "planted-defects"))]
fn planted_owner() -> bool {
    false
}
