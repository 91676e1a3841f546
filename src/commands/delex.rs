//! DELEX, the native command of Redis 8.4, for the servers that lack it:
//!
//! ```text
//! DELEX key [IFEQ value | IFNE value | IFDEQ digest | IFDNE digest]    -> 1 if deleted, else 0
//! ```
//!
//! Without a condition it deletes a key of any type, as DEL does. With one, the key must be a
//! string, and the checks come in Redis's order: the argument count, then the key (a missing
//! one is 0 before anything else is looked at), its type, the condition's name, a digest's
//! length. The conditions are `goblin_core::delex`.

use goblin_core::delex::{Condition, ConditionError};

use crate::effects::{self, Deletion};
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Spec};
use crate::server::stats::CommandStats;
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};

pub struct Delex;

static STATS: CommandStats = CommandStats::new();

pub struct DelexArgs<'call> {
    key: Arg<'call>,
    /// The condition's name and operand, checked once the key is known to be a string.
    condition: Option<(Arg<'call>, Arg<'call>)>,
}

/// The key's flags for one call, as the server's own DELEX says them: a condition reads the
/// value, so RW; without one the key is only removed, RM. Any condition name after the key
/// counts, wherever it stands.
fn key_access(argv: &[Arg<'_>]) -> KeyAccess {
    let conditional = argv.iter().skip(2).any(|arg| {
        ["IFEQ", "IFNE", "IFDEQ", "IFDNE"]
            .iter()
            .any(|name| arg.is(name))
    });
    if conditional {
        KeyAccess::CompareDelete
    } else {
        KeyAccess::Remove
    }
}

impl Command for Delex {
    const SPEC: &'static Spec = &Spec {
        name: c"delex",
        flags: c"write fast",
        acl_categories: c"write string fast",
        summary: c"Conditionally removes the specified key based on value or digest comparison.",
        complexity:
            c"O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string value.",
        since: c"8.4.0",
        key: KeyAccess::PerCall(key_access),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::one_of(
                c"condition",
                &[
                    ArgDoc::string(c"ifeq-value").token(c"IFEQ"),
                    ArgDoc::string(c"ifne-value").token(c"IFNE"),
                    ArgDoc::string(c"ifdeq-digest").token(c"IFDEQ"),
                    ArgDoc::string(c"ifdne-digest").token(c"IFDNE"),
                ],
            )
            .optional(),
        ],
        stats: &STATS,
        info_name: "stand_in_delex",
        outcomes: &[],
        stand_in: true,
    };

    type Args<'call> = DelexArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<DelexArgs<'call>, CommandError> {
        let key = args.next()?;
        let condition = match args.rest() {
            [] => None,
            [name, operand] => Some((*name, *operand)),
            _ => return Err(CommandError::WrongArity),
        };
        Ok(DelexArgs { key, condition })
    }

    fn run<'call>(ctx: &'call Ctx, args: DelexArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let Some((name, operand)) = args.condition else {
            // As DEL: any type, and no hit or miss counted.
            let mut key = ctx.open_key(args.key);
            if key.kind() == KeyKind::Empty {
                return Ok(Reply::Int(0));
            }
            effects::deleted(ctx, &mut key, Deletion::AsTheServer);
            return Ok(Reply::Int(1));
        };
        // A condition reads the key as GET does: a hit, or a miss and `keymiss`.
        let Some(key) = ctx.read_key(args.key) else {
            return Ok(Reply::Int(0));
        };
        let Some(value) = key.string() else {
            return Err(CommandError::Message(
                "ERR Key should be of string type if conditions are specified",
            ));
        };
        let condition = Condition::parse(name.as_bytes(), operand.as_bytes()).map_err(|error| {
            CommandError::Message(match error {
                ConditionError::Unknown => "ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE",
                ConditionError::DigestLength => "ERR must be exactly 16 hexadecimal characters",
            })
        })?;
        if !condition.holds_for(value) {
            return Ok(Reply::Int(0));
        }
        drop(key);
        let mut key = ctx.open_key(args.key);
        effects::deleted(ctx, &mut key, Deletion::AsTheServer);
        Ok(Reply::Int(1))
    }
}
