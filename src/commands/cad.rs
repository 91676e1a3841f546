//! GOBLIN.CAD key value: compare and delete. Releases a `SET key token NX PX` lock only if it
//! still holds the caller's token, or gives back a GOBLIN.ZWINDOW lease or permit (the member
//! `value`) at once instead of waiting for it to age out.

use crate::effects;
use crate::error::CommandError;
use crate::server::{Arg, Command, Ctx, KeyKind};
use crate::stats::{self, CommandStats};

pub struct Cad;

struct CadArgs<'call> {
    key: Arg<'call>,
    value: Arg<'call>,
}

impl<'call> CadArgs<'call> {
    fn parse(args: &[Arg<'call>]) -> Result<Self, CommandError> {
        let [_, key, value] = args else {
            return Err(CommandError::WrongArity(Cad::NAME));
        };
        Ok(Self {
            key: *key,
            value: *value,
        })
    }
}

impl Command for Cad {
    const NAME: &'static str = "goblin.cad";
    const STATS: &'static CommandStats = &stats::CAD;

    fn run<'call>(ctx: &'call Ctx, args: &'call [Arg<'call>]) -> Result<i64, CommandError> {
        let args = CadArgs::parse(args)?;
        let mut key = ctx.open_key(args.key);
        let released = match key.kind() {
            KeyKind::Empty => false,
            KeyKind::String => {
                let holds_token = key.string() == Some(args.value.as_bytes());
                if holds_token {
                    effects::release_lock(ctx, &mut key);
                }
                holds_token
            }
            KeyKind::SortedSet => effects::release_member(ctx, &mut key, args.value),
            KeyKind::Other => return Err(CommandError::WrongType),
        };
        if released {
            stats::RELEASED.add(1);
        }
        Ok(i64::from(released))
    }
}
