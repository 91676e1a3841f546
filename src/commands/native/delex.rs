//! DELEX, the native command of Redis 8.4, for the servers that lack it:
//!
//! ```text
//! DELEX key [IFEQ value | IFNE value | IFDEQ digest | IFDNE digest]    -> 1 if deleted, else 0
//! ```
//!
//! Without a condition it deletes a key of any type, as DEL does. With one, the key must be a
//! string, and the checks come in Redis's order: the argument count, then the key (a missing
//! one is 0 before anything else is looked at), its type, the condition's name, a digest's
//! length. The conditions are `goblin_core::native::delex`.

use goblin_core::native::delex::{Condition, ConditionKind};

use crate::effects::{self, Deletion};
use crate::error::{delex::NOT_A_STRING, CommandError};
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
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
    let conditional = argv
        .iter()
        .skip(2)
        .any(|arg| ConditionKind::named(arg.word()).is_some());
    if conditional {
        KeyAccess::CompareDelete
    } else {
        KeyAccess::Remove
    }
}

/// The conditions in `COMMAND DOCS`, one per `ConditionKind`, in its order.
const CONDITIONS: [ArgDoc; 4] = [
    condition_doc(ConditionKind::IfEq, c"ifeq-value"),
    condition_doc(ConditionKind::IfNe, c"ifne-value"),
    condition_doc(ConditionKind::IfDeq, c"ifdeq-digest"),
    condition_doc(ConditionKind::IfDne, c"ifdne-digest"),
];

const fn condition_doc(kind: ConditionKind, name: &'static std::ffi::CStr) -> ArgDoc {
    ArgDoc::string(name).token(kind.token())
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
        keys: Keys::One(KeyAccess::PerCall(key_access)),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::one_of(c"condition", &CONDITIONS).optional(),
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
        let value = key.string().ok_or(NOT_A_STRING)?;
        let condition = Condition::parse(name.word(), operand.as_bytes())?;
        if !condition.holds_for(value) {
            return Ok(Reply::Int(0));
        }
        drop(key);
        let mut key = ctx.open_key(args.key);
        effects::deleted(ctx, &mut key, Deletion::AsTheServer);
        Ok(Reply::Int(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_docs_list_every_condition_in_order_named_after_its_token() {
        let docs: Vec<(&str, String)> = CONDITIONS
            .iter()
            .map(|doc| {
                (
                    doc.token.unwrap_or(""),
                    doc.name.to_string_lossy().into_owned(),
                )
            })
            .collect();
        let expected: Vec<(&str, String)> = ConditionKind::ALL
            .iter()
            .map(|kind| {
                let operand = if kind.takes_digest() {
                    "digest"
                } else {
                    "value"
                };
                let name = format!("{}-{operand}", kind.token().to_lowercase());
                (kind.token(), name)
            })
            .collect();
        assert_eq!(docs, expected);
    }
}
