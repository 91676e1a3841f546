//! DELIFEQ, the native command of Valkey 9.0, for the servers that lack it:
//!
//! ```text
//! DELIFEQ key value    -> 1 if the key held the string value and was deleted, else 0
//! ```

use crate::effects::{self, Deletion};
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::CommandStats;
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};

pub struct Delifeq;

static STATS: CommandStats = CommandStats::new();

pub struct DelifeqArgs<'call> {
    key: Arg<'call>,
    value: Arg<'call>,
}

impl Command for Delifeq {
    const SPEC: &'static Spec = &Spec {
        name: c"delifeq",
        flags: c"write fast",
        acl_categories: c"write string fast",
        summary: c"Delete key if value matches string.",
        complexity: c"O(1)",
        since: c"9.0.0",
        keys: Keys::One(KeyAccess::Remove),
        args: &[ArgDoc::key(c"key"), ArgDoc::string(c"value")],
        stats: &STATS,
        info_name: "stand_in_delifeq",
        outcomes: &[],
        stand_in: true,
    };

    type Args<'call> = DelifeqArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<DelifeqArgs<'call>, CommandError> {
        let (key, value) = (args.next()?, args.next()?);
        args.finish()?;
        Ok(DelifeqArgs { key, value })
    }

    fn run<'call>(ctx: &'call Ctx, args: DelifeqArgs<'call>) -> Result<Reply<'call>, CommandError> {
        // Looked up as the writing commands look their key up: no hit or miss counted.
        let mut key = ctx.open_key(args.key);
        let holds_value = match key.kind() {
            KeyKind::Empty => false,
            KeyKind::String => key.string() == Some(args.value.as_bytes()),
            KeyKind::SortedSet | KeyKind::Other => return Err(CommandError::WrongType),
        };
        if holds_value {
            effects::deleted(ctx, &mut key, Deletion::AsTheServer);
        }
        Ok(Reply::Int(i64::from(holds_value)))
    }
}
