//! GOBLIN.INCREX key seconds [COST n]: INCRBY n (1 by default), and EXPIRE on the window's first
//! hit (the result is the cost: the key was missing or held 0), as one atomic command.

use goblin_core::decimal::parse_integer;
use goblin_core::increx;

use crate::effects;
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::CommandStats;
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};

pub struct GoblinIncrex;

static STATS: CommandStats = CommandStats::new();

pub struct GoblinIncrexArgs<'call> {
    key: Arg<'call>,
    seconds: i64,
    cost: i64,
}

impl Command for GoblinIncrex {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.increx",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        summary: c"Increments the integer at key by 1 (or by COST) and arms a TTL of seconds on the window's first hit (a fixed-window counter).",
        complexity: c"O(1)",
        since: c"0.1.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::integer(c"seconds"),
            ArgDoc::integer(c"cost").token("COST").optional(),
        ],
        stats: &STATS,
        info_name: "increx",
        outcomes: &[],
        stand_in: false,
    };

    type Args<'call> = GoblinIncrexArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<GoblinIncrexArgs<'call>, CommandError> {
        let key = args.next()?;
        let seconds = args.next()?.to_i64().ok_or(CommandError::NotInteger)?;
        let cost = match args.rest() {
            [] => 1,
            [option, value] if option.is("COST") => value.to_count()?,
            _ => return Err(CommandError::Syntax),
        };
        Ok(GoblinIncrexArgs { key, seconds, cost })
    }

    fn run<'call>(
        ctx: &'call Ctx,
        args: GoblinIncrexArgs<'call>,
    ) -> Result<Reply<'call>, CommandError> {
        let mut key = ctx.open_key(args.key);
        let current = match key.kind() {
            KeyKind::Empty => None,
            KeyKind::String => Some(
                key.string_or_empty()
                    .and_then(parse_integer)
                    .ok_or(CommandError::NotInteger)?,
            ),
            KeyKind::SortedSet | KeyKind::Other => return Err(CommandError::WrongType),
        };
        let plan = increx::plan(current, args.seconds, args.cost, || ctx.now_ms())?;
        effects::write_counter(ctx, &mut key, &plan);
        Ok(Reply::Int(plan.value))
    }
}
