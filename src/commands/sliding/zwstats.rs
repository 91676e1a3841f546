//! GOBLIN.ZWSTATS key now window: what GOBLIN.ZWINDOW would count now, read only: the units
//! inside the window (the costs of `COST` entries, or the members of a plain window) and the
//! oldest score inside it.
//!
//! ```text
//! -> [units, oldest score or nil]
//! ```

use goblin_core::decimal::Decimal;
use goblin_core::zwindow::{self, cost, SortedWindow};

use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::CommandStats;
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};

pub struct GoblinZwstats;

static STATS: CommandStats = CommandStats::new();

pub struct ZwstatsArgs<'call> {
    key: Arg<'call>,
    now: goblin_core::clock::Now,
    window: f64,
}

impl Command for GoblinZwstats {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.zwstats",
        flags: c"readonly",
        acl_categories: c"read sortedset slow",
        summary: c"What GOBLIN.ZWINDOW would count now: the units inside the window (the costs of COST entries, or the members) and the oldest score inside it.",
        complexity: c"O(log(N)) for a window written with COST, O(log(N) + M) for M members inside a plain window.",
        since: c"0.3.0",
        keys: Keys::One(KeyAccess::Read),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::one_of(
                c"now",
                &[
                    ArgDoc::double(c"timestamp"),
                    ArgDoc::pure_token(c"server-time", "*"),
                ],
            ),
            ArgDoc::double(c"window"),
        ],
        stats: &STATS,
        info_name: "zwstats",
        outcomes: &[],
        stand_in: false,
    };

    type Args<'call> = ZwstatsArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<ZwstatsArgs<'call>, CommandError> {
        let key = args.next()?;
        let now = args.next()?.to_now()?;
        let window = args.next()?.to_finite_f64()?;
        args.finish()?;
        Ok(ZwstatsArgs { key, now, window })
    }

    fn run<'call>(ctx: &'call Ctx, args: ZwstatsArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let Some(key) = ctx.read_key(args.key) else {
            return Ok(Reply::Array(vec![Reply::Int(0), Reply::Null]));
        };
        if key.kind() != KeyKind::SortedSet {
            return Err(CommandError::WrongType);
        }
        let cutoff = zwindow::cutoff(args.now.resolve(ctx.now_ms()), args.window);
        let (units, oldest) = match cost::usage(&key, cutoff) {
            Ok(usage) => (usage.units, usage.oldest),
            // A plain window: its members inside are its units.
            Err(cost::NotCostEntries) => (
                key.count_above(cutoff, usize::MAX) as u64,
                key.first_above(cutoff, |_, score| score),
            ),
        };
        let oldest = match oldest {
            Some(score) => Reply::Bulk(Decimal::score(score).as_bytes().to_vec().into()),
            None => Reply::Null,
        };
        Ok(Reply::Array(vec![
            Reply::Int(i64::try_from(units).unwrap_or(i64::MAX)),
            oldest,
        ]))
    }
}
