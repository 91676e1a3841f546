//! GOBLIN.INCREX key seconds: INCR, and EXPIRE on the first hit, as one atomic command.

use crate::counter;
use crate::effects;
use crate::error::CommandError;
use crate::server::{Arg, Command, Ctx, KeyKind};
use crate::stats::{self, CommandStats};

pub struct Increx;

struct IncrexArgs<'call> {
    key: Arg<'call>,
    seconds: i64,
}

impl<'call> IncrexArgs<'call> {
    fn parse(args: &[Arg<'call>]) -> Result<Self, CommandError> {
        let [_, key, seconds] = args else {
            return Err(CommandError::WrongArity(Increx::NAME));
        };
        Ok(Self {
            key: *key,
            seconds: seconds.to_i64().ok_or(CommandError::NotInteger)?,
        })
    }
}

impl Command for Increx {
    const NAME: &'static str = "goblin.increx";
    const STATS: &'static CommandStats = &stats::INCREX;

    fn run<'call>(ctx: &'call Ctx, args: &'call [Arg<'call>]) -> Result<i64, CommandError> {
        let args = IncrexArgs::parse(args)?;
        let mut key = ctx.open_key(args.key);
        let current = match key.kind() {
            KeyKind::Empty => None,
            KeyKind::String => Some(
                key.string()
                    .and_then(counter::parse_stored)
                    .ok_or(CommandError::NotInteger)?,
            ),
            KeyKind::SortedSet | KeyKind::Other => return Err(CommandError::WrongType),
        };
        let plan = counter::plan(current, args.seconds, || ctx.now_ms(), Self::NAME)?;
        effects::write_counter(ctx, &mut key, &plan);
        Ok(plan.value)
    }
}
