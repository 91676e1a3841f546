//! GOBLIN.RWUNLOCK key token: an owner-checked release of a readers-writer lock's lease,
//! whichever mode `token` holds it in: the writer's string deleted, or the reader's member
//! removed (with its fencing token). Replies 1 if `token` held a lease that ran, 0 otherwise;
//! the first in line is let in at once. A release runs at `maxmemory`, as DEL does.
//!
//! ```text
//! -> 1 released, 0 not held by token
//! ```

use goblin_core::rwlock;

use crate::effects::{self, Deletion};
use crate::error::CommandError;
use crate::grant;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, KeyKind, Reply};

pub struct GoblinRwunlock;

static STATS: CommandStats = CommandStats::new();
static RELEASED: Counter = Counter::new();

pub struct RwunlockArgs<'call> {
    key: Arg<'call>,
    token: Arg<'call>,
}

impl Command for GoblinRwunlock {
    // A deletion: allowed under maxmemory like DEL, so a lease can always be given back.
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.rwunlock",
        flags: c"write fast",
        acl_categories: c"write sortedset string fast",
        summary: c"Releases the read or write lease token holds on a readers-writer lock; replies 0 when token holds none.",
        complexity: c"O(log(N)) with N the readers, and O(M) more for M lapsed leases removed.",
        since: c"0.4.0",
        keys: Keys::One(KeyAccess::ReadDelete),
        args: &[ArgDoc::key(c"key"), ArgDoc::string(c"token")],
        stats: &STATS,
        info_name: "rwunlock",
        outcomes: &[("released", &RELEASED)],
        stand_in: false,
    };

    type Args<'call> = RwunlockArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<RwunlockArgs<'call>, CommandError> {
        let (key, token) = (args.next()?, args.next()?);
        Ok(RwunlockArgs { key, token })
    }

    fn run<'call>(
        ctx: &'call Ctx,
        args: RwunlockArgs<'call>,
    ) -> Result<Reply<'call>, CommandError> {
        let mut key = ctx.open_key(args.key);
        let released = match key.kind() {
            KeyKind::Empty => false,
            KeyKind::String => {
                let holds = key.string() == Some(args.token.as_bytes());
                if holds {
                    // A string's delete never blocks (GOBLIN.CAD's reasoning).
                    effects::deleted(ctx, &mut key, Deletion::AsTheServer);
                }
                holds
            }
            KeyKind::SortedSet => {
                // What lapsed goes first: a lapsed lease is not held, and is not released.
                effects::evict(ctx, &mut key, rwlock::lapsed_through(ctx.now_ms()));
                grant::reader_released(ctx, &mut key, args.key, args.token.as_bytes())
            }
            KeyKind::Other => return Err(CommandError::WrongType),
        };
        if released {
            RELEASED.add(1);
        }
        Ok(Reply::Int(i64::from(released)))
    }
}
