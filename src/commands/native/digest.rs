//! DIGEST, the native command of Redis 8.4, for the servers that lack it:
//!
//! ```text
//! DIGEST key    -> the XXH3-64 digest of the string value, as 16 lower-case hex digits, or null
//! ```

use goblin_core::native::digest::digest;

use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::CommandStats;
use crate::server::{Arg, Args, Ctx, Reply};

pub struct Digest;

static STATS: CommandStats = CommandStats::new();

pub struct DigestArgs<'call> {
    key: Arg<'call>,
}

impl Command for Digest {
    const SPEC: &'static Spec = &Spec {
        name: c"digest",
        flags: c"readonly fast",
        acl_categories: c"read string fast",
        summary: c"Returns the XXH3 hash of a string value.",
        complexity: c"O(N) where N is the length of the string value.",
        since: c"8.4.0",
        keys: Keys::One(KeyAccess::Read),
        args: &[ArgDoc::key(c"key")],
        stats: &STATS,
        info_name: "stand_in_digest",
        outcomes: &[],
        stand_in: true,
    };

    type Args<'call> = DigestArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<DigestArgs<'call>, CommandError> {
        let key = args.next()?;
        args.finish()?;
        Ok(DigestArgs { key })
    }

    fn run<'call>(ctx: &'call Ctx, args: DigestArgs<'call>) -> Result<Reply<'call>, CommandError> {
        // Looked up as GET does: a hit, or a miss and `keymiss`.
        let Some(key) = ctx.read_key(args.key) else {
            return Ok(Reply::Null);
        };
        let value = key.string().ok_or(CommandError::WrongType)?;
        Ok(Reply::Bulk(digest(value).to_vec().into()))
    }
}
