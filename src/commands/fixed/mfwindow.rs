//! GOBLIN.MFWINDOW numwindows key window limit [key window limit ...] [BY n]: several
//! GOBLIN.FWINDOW counters at once, all or nothing. Each window counts `n` on its key, in order;
//! the call is allowed only if no count goes above its window's limit, and then every key is
//! written; a refusal writes nothing.
//!
//! ```text
//! -> [refused, retry_after_ms, [count, ttl_ms], ...]
//! ```
//!
//! Everything is checked before any key is read, and every key before anything is decided.
//! The decision is `goblin_core::fwindow::several`.

use goblin_core::fwindow::{self, Group};
use smallvec::SmallVec;

use super::{standing, window_ms};
use crate::commands::{counted_groups, Counted, INLINE};
use crate::effects;
use crate::error::{mfwindow::NUMWINDOWS, CommandError};
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, Key, Reply};

pub struct GoblinMfwindow;

static STATS: CommandStats = CommandStats::new();
static ALLOWED: Counter = Counter::new();
static REFUSED: Counter = Counter::new();

/// The arguments of one window.
const WINDOW_WORDS: usize = 3;

pub struct MfwindowArgs<'call> {
    /// Each distinct key once, in the order first named.
    keys: SmallVec<[Arg<'call>; INLINE]>,
    groups: SmallVec<[Group; INLINE]>,
    by: i64,
}

impl Command for GoblinMfwindow {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.mfwindow",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        summary: c"Counts a hit in several fixed windows at once, all or nothing: only if no count goes above its window's limit is every key incremented (each window armed when new). Replies whether it refused, when to retry, and each window's count and milliseconds to reset.",
        complexity: c"O(N) where N is the number of windows",
        since: c"0.4.0",
        keys: Keys::Counted {
            access: KeyAccess::ReadUpdate,
            count_at: 1,
            step: WINDOW_WORDS as i32,
        },
        args: &[
            ArgDoc::integer(c"numwindows"),
            ArgDoc::block(
                c"counter",
                &[
                    ArgDoc::key(c"key"),
                    ArgDoc::integer(c"window"),
                    ArgDoc::integer(c"limit"),
                ],
            )
            .multiple(),
            ArgDoc::integer(c"increment").token("BY").optional(),
        ],
        stats: &STATS,
        info_name: "mfwindow",
        outcomes: &[("allowed", &ALLOWED), ("refused", &REFUSED)],
        stand_in: false,
    };

    type Args<'call> = MfwindowArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<MfwindowArgs<'call>, CommandError> {
        let Counted { keys, groups } =
            counted_groups(&mut args, WINDOW_WORDS, NUMWINDOWS, |key, args| {
                let window_ms = window_ms(args.next()?)?;
                let limit = args.next()?.to_i64().ok_or(CommandError::NotInteger)?;
                // The test build's planted defect `WindowAdmitsOneMore`: one over each limit.
                #[cfg(feature = "planted-defects")]
                let limit = if goblin_core::planted::planted(
                    goblin_core::planted::Defect::WindowAdmitsOneMore,
                ) {
                    limit.saturating_add(1)
                } else {
                    limit
                };
                Ok(Group {
                    key,
                    window_ms,
                    limit,
                })
            })?;
        let by = match args.rest() {
            [] => 1,
            [option, value] if option.is("BY") => value.to_i64().ok_or(CommandError::NotInteger)?,
            _ => return Err(CommandError::Syntax),
        };
        Ok(MfwindowArgs { keys, groups, by })
    }

    fn run<'call>(
        ctx: &'call Ctx,
        args: MfwindowArgs<'call>,
    ) -> Result<Reply<'call>, CommandError> {
        let mut keys: SmallVec<[Key<'call>; INLINE]> =
            args.keys.iter().map(|&name| ctx.open_key(name)).collect();
        let now_ms = ctx.now_ms();
        let standing = keys
            .iter()
            .map(|key| standing(Some(key), now_ms))
            .collect::<Result<SmallVec<[_; INLINE]>, _>>()?;
        let decided = fwindow::several(&standing, &args.groups, args.by, now_ms)?;
        for (index, write) in &decided.writes {
            if let Some(key) = keys.get_mut(*index) {
                if standing
                    .get(*index)
                    .is_some_and(|held| fwindow::ended(*held))
                {
                    effects::drop_ended_window(ctx, key);
                }
                effects::write_counter(ctx, key, write);
            }
        }
        if decided.refused {
            REFUSED.add(1);
        } else {
            ALLOWED.add(1);
        }
        let mut reply = Vec::with_capacity(2 + decided.groups.len());
        reply.push(Reply::Int(i64::from(decided.refused)));
        reply.push(Reply::Int(decided.retry_after_ms));
        reply.extend(
            decided
                .groups
                .iter()
                .map(|group| Reply::Ints(group.iter().copied().collect())),
        );
        Ok(Reply::Array(reply))
    }
}
