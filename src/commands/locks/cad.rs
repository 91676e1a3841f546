//! GOBLIN.CAD key value: compare and delete. Releases a `SET key token NX PX` lock only if it
//! still holds the caller's token, or gives back a GOBLIN.ZWINDOW lease or permit (the member
//! `value`) at once instead of waiting for it to age out.

use crate::commands::{permits_arg, separator_arg, PermitOptions};
use crate::effects::{self, Deletion};
use crate::error::CommandError;
use crate::fencing;
use crate::grant::{Permits, Slots};
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};

pub struct GoblinCad;

static STATS: CommandStats = CommandStats::new();
/// Calls that released a lock or a member.
static RELEASED: Counter = Counter::new();

pub struct CadArgs<'call> {
    key: Arg<'call>,
    value: Arg<'call>,
    /// `PERMITS n` (a holder of `n` slots gives them all back) and `SEPARATOR sep`.
    permits: Permits<'call>,
}

impl Command for GoblinCad {
    // A deletion: allowed under maxmemory like DEL, so a lock can always be released.
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.cad",
        flags: c"write fast",
        acl_categories: c"write fast",
        summary: c"Deletes key if it is a string equal to value, or removes member value if it is a sorted set (releases a lock or a ZWINDOW lease).",
        complexity: c"O(1) for strings, O(log(N)) for a sorted set of N members.",
        since: c"0.1.0",
        keys: Keys::One(KeyAccess::ReadDelete),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::string(c"value"),
            permits_arg(c"Give back the permits slots of a holder of several: value and its numbered twins."),
            separator_arg(c"The slots are named value, separator and the index from 0 (as GOBLIN.ZWINDOW's SEPARATOR)."),
        ],
        stats: &STATS,
        info_name: "cad",
        outcomes: &[("released", &RELEASED)],
        stand_in: false,
    };

    type Args<'call> = CadArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<CadArgs<'call>, CommandError> {
        let (key, value) = (args.next()?, args.next()?);
        let mut permits = PermitOptions::default();
        let mut options = args.rest().iter();
        // Each option once, in either order.
        while let Some(option) = options.next() {
            match options.next() {
                Some(value) if permits.take(*option, *value)? => {}
                _ => return Err(CommandError::Syntax),
            }
        }
        let permits = permits.permits();
        Ok(CadArgs {
            key,
            value,
            permits,
        })
    }

    fn run<'call>(ctx: &'call Ctx, args: CadArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let mut key = ctx.open_key(args.key);
        let released = match key.kind() {
            KeyKind::Empty => false,
            KeyKind::String => {
                let holds_token = key.string() == Some(args.value.as_bytes());
                if holds_token {
                    // A string's delete never blocks, and RM_DeleteKey costs less than
                    // RM_UnlinkKey, which weighs the value for a background free first.
                    effects::deleted(ctx, &mut key, Deletion::AsTheServer);
                }
                holds_token
            }
            KeyKind::SortedSet => {
                let slots = Slots::of(ctx, args.value, args.permits);
                let released = effects::release_members(ctx, &mut key, &slots.members());
                if released {
                    // A lease's holder took its fencing token with it (`FENCE`): it goes too.
                    fencing::lease_released(ctx, args.key, args.value.as_bytes());
                }
                released
            }
            KeyKind::Other => return Err(CommandError::WrongType),
        };
        if released {
            RELEASED.add(1);
        }
        Ok(Reply::Int(i64::from(released)))
    }
}
