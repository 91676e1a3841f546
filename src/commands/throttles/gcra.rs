//! GOBLIN.GCRA key max_burst tokens_per_period period [TOKENS n] [PEEK]: the Generic Cell Rate
//! Algorithm on the server's clock, with the arguments, errors and reply of the `GCRA` command
//! Redis wrote for 8.8 and held back before 8.8 shipped (it is in no release since; Redis 8.10's
//! source still carries it, compiled out). `PEEK` is Goblin's: the reply the same call would
//! get, with nothing written, as GOBLIN.MGCRA's:
//!
//! ```text
//! -> [limited, limit, remaining, retry_after, reset_after]
//! ```
//!
//! Three differences are deliberate: the TAT is a plain string (microseconds), so any server
//! loads the data; replicas and the AOF get `SET key tat PXAT ms`, not the unreleased
//! `GCRASETVALUE`; a string that is not a TAT is an error. The algorithm is
//! `goblin_core::gcra`.

use goblin_core::gcra::Limits;

use super::{parse_limits, peek_key, throttle_key};
use crate::error::gcra::MISSING_TOKENS;
use crate::error::{CommandError, AT_LEAST_ONE};
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::{CommandStats, Counter};
use crate::server::{Arg, Args, Ctx, Reply};

pub struct GoblinGcra;

static STATS: CommandStats = CommandStats::new();
static ALLOWED: Counter = Counter::new();
static LIMITED: Counter = Counter::new();
static PEEKED: Counter = Counter::new();

pub struct GcraArgs<'call> {
    key: Arg<'call>,
    limits: Limits,
    /// `PEEK`: reply, write nothing.
    peek: bool,
}

impl Command for GoblinGcra {
    const SPEC: &'static Spec = &Spec {
        name: c"goblin.gcra",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        summary: c"Rate limits with GCRA (the Generic Cell Rate Algorithm) on the server's clock: allows or limits a request costing TOKENS, and says how many remain, when to retry and when the limit is full again.",
        complexity: c"O(1)",
        since: c"0.2.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::integer(c"max-burst"),
            ArgDoc::integer(c"tokens-per-period"),
            ArgDoc::double(c"period"),
            ArgDoc::integer(c"count").token("TOKENS").optional(),
            ArgDoc::pure_token(c"peek", "PEEK").optional().since(c"0.4.0"),
        ],
        stats: &STATS,
        info_name: "gcra",
        outcomes: &[
            ("allowed", &ALLOWED),
            ("limited", &LIMITED),
            ("peeked", &PEEKED),
        ],
        stand_in: false,
    };

    type Args<'call> = GcraArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<GcraArgs<'call>, CommandError> {
        let key = args.next()?;
        let words = args.rest();
        // The server checks "at least four"; GCRA itself "at most six", before any other (one
        // more with PEEK, which GCRA does not have).
        let with_peek = words.len() == 6 && words[3..].iter().any(|word| word.is("PEEK"));
        if words.len() > 5 + usize::from(with_peek) {
            return Err(CommandError::WrongArity);
        }
        let [max_burst, tokens_per_period, period, options @ ..] = words else {
            return Err(CommandError::WrongArity);
        };
        let limits = parse_limits(*max_burst, *tokens_per_period, *period)?;
        // TOKENS n and PEEK, each once, in either order; GCRA's errors for anything else.
        let (mut cost, mut peek) = (None, false);
        let mut options = options.iter();
        while let Some(option) = options.next() {
            if option.is("TOKENS") && cost.is_none() {
                let count = options.next().ok_or(MISSING_TOKENS)?;
                let count = count.to_i64().ok_or(CommandError::NotInteger)?;
                if count < 0 {
                    return Err(AT_LEAST_ONE);
                }
                cost = Some(count);
            } else if option.is("PEEK") && !peek {
                peek = true;
            } else {
                return Err(CommandError::Syntax);
            }
        }
        // A request costs at least one token; a peek may ask about none.
        let cost = cost.unwrap_or(1);
        if cost == 0 && !peek {
            return Err(AT_LEAST_ONE);
        }
        Ok(GcraArgs {
            key,
            limits: Limits { cost, ..limits },
            peek,
        })
    }

    fn run<'call>(ctx: &'call Ctx, args: GcraArgs<'call>) -> Result<Reply<'call>, CommandError> {
        let throttled = if args.peek {
            PEEKED.add(1);
            peek_key(ctx, args.key, &args.limits)?
        } else {
            let throttled = throttle_key(ctx, args.key, &args.limits)?;
            if throttled.limited {
                LIMITED.add(1);
            } else {
                ALLOWED.add(1);
            }
            throttled
        };
        Ok(Reply::ints(&throttled.reply()))
    }
}
