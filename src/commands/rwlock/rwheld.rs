//! GOBLIN.RWHELD key token: which lease `token` holds on a readers-writer lock now, read only:
//! `write`, `read`, or nil for none (none that runs). What Symfony's `exists` asks, and a
//! holder checking its lease before it acts.
//!
//! ```text
//! -> write, read, or nil
//! ```

use goblin_core::rwlock;

use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::CommandStats;
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};

pub struct GoblinRwheld;

static STATS: CommandStats = CommandStats::new();

pub struct RwheldArgs<'call> {
    key: Arg<'call>,
    token: Arg<'call>,
}

impl Command for GoblinRwheld {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.rwheld",
        flags: c"readonly fast",
        acl_categories: c"read sortedset string fast",
        summary:
            c"Replies which lease token holds on a readers-writer lock now: write, read, or nil.",
        complexity: c"O(log(N)) with N the readers.",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::Read),
        args: &[ArgDoc::key(c"key"), ArgDoc::string(c"token")],
        stats: &STATS,
        info_name: "rwheld",
        outcomes: &[],
        stand_in: false,
    };

    type Args<'call> = RwheldArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<RwheldArgs<'call>, CommandError> {
        let (key, token) = (args.next()?, args.next()?);
        Ok(RwheldArgs { key, token })
    }

    fn run<'call>(ctx: &'call Ctx, args: RwheldArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let Some(key) = ctx.read_key(args.key) else {
            return Ok(Reply::Null);
        };
        let held = match key.kind() {
            KeyKind::String => key.string() == Some(args.token.as_bytes()),
            KeyKind::SortedSet => {
                let reads = key
                    .score(args.token)
                    .is_some_and(|score| rwlock::runs(score, ctx.now_ms()));
                return Ok(if reads {
                    Reply::Status(c"read")
                } else {
                    Reply::Null
                });
            }
            KeyKind::Empty => false,
            KeyKind::Other => return Err(CommandError::WrongType),
        };
        Ok(if held {
            Reply::Status(c"write")
        } else {
            Reply::Null
        })
    }
}
