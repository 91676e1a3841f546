//! INCREX, the native command of Redis 8.8, for the servers that lack it:
//!
//! ```text
//! INCREX key [BYINT n | BYFLOAT f] [LBOUND l] [UBOUND u] [SATURATE]
//!            [EX s | PX ms | EXAT t | PXAT t | PERSIST] [ENX]     -> [new value, applied increment]
//! ```
//!
//! with the `NX | XX` of Valkey's own INCREX on a Valkey server (whose contract is otherwise
//! another: docs/commands/increx.md). Options come in any order; what the server's
//! `increxCommand` refuses, this refuses with the same words and in the same order: each
//! option as it is read (BYINT's and BYFLOAT's values at once), then the bounds, ENX without an
//! expiry, the expiry, and only then the key. The arithmetic is `goblin_core::native::increx`, on `i64`
//! or on the server's long double.

use goblin_core::decimal::{parse_integer, Decimal};
use goblin_core::native::increx::{
    expiry_at, increment, ttl_change, Amount, Bounds, ExpiryOption, ExpiryUnit, Increment,
};

use crate::effects;
use crate::error::increx::{
    APPLIED_INFINITE, APPLIED_OVERFLOW, BOUNDS_CROSSED, ENX_ALONE, INFINITE_INCREMENT,
    INFINITE_VALUE, LBOUND_NOT_FLOAT, LBOUND_NOT_INTEGER, NOT_FLOAT_INCREMENT,
    NOT_INTEGER_INCREMENT, UBOUND_NOT_FLOAT, UBOUND_NOT_INTEGER,
};
use crate::error::CommandError;
use crate::server::command::{ArgDoc, Command, KeyAccess, Keys, Spec};
use crate::server::stats::CommandStats;
use crate::server::{host, Arg, Args, Ctx, Family, Key, KeyKind, LongDouble, Reply};
use smallvec::{smallvec, SmallVec};

pub struct Increx;

static STATS: CommandStats = CommandStats::new();

/// By how much, and within which bounds.
enum Mode {
    Integer {
        by: i64,
        bounds: Bounds<i64>,
    },
    Float {
        by: LongDouble,
        bounds: Bounds<LongDouble>,
    },
}

/// Valkey's NX | XX: whether the key must be missing or present.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Presence {
    Always,
    /// NX: only if the key does not exist.
    IfMissing,
    /// XX: only if it does.
    IfPresent,
}

enum Expiry {
    Keep,
    Persist,
    /// EX, PX, EXAT or PXAT with its value; `only_if_none` is ENX.
    Set {
        value: i64,
        unit: ExpiryUnit,
        only_if_none: bool,
    },
}

pub struct IncrexArgs<'call> {
    key: Arg<'call>,
    mode: Mode,
    saturate: bool,
    expiry: Expiry,
    presence: Presence,
}

/// The options as the first pass reads them: values of the bounds and the expiry are only
/// parsed once the mode is known.
#[derive(Default)]
struct Scanned<'call> {
    by_integer: Option<i64>,
    by_float: Option<LongDouble>,
    lower: Option<Arg<'call>>,
    upper: Option<Arg<'call>>,
    saturate: bool,
    enx: bool,
    persist: bool,
    expire: Option<(Arg<'call>, ExpiryUnit)>,
    presence: Option<Presence>,
}

impl<'call> Scanned<'call> {
    /// Reads the options left to right. An option given twice, one that conflicts with an
    /// earlier one, or one whose value is missing is a syntax error where it stands.
    fn scan(options: &[Arg<'call>]) -> Result<Scanned<'call>, CommandError> {
        let mut s = Scanned::default();
        let valkey = host().family == Family::Valkey;
        let mut i = 0;
        while i < options.len() {
            // The option's text once: a call may carry seven options against a dozen tokens.
            let option = options[i].word();
            let next = options.get(i + 1).copied();
            let by_given = s.by_integer.is_some() || s.by_float.is_some();
            let expiry_given = s.expire.is_some() || s.persist;
            let expiry_unit = [
                ("EX", ExpiryUnit::Seconds),
                ("PX", ExpiryUnit::Milliseconds),
                ("EXAT", ExpiryUnit::UnixSeconds),
                ("PXAT", ExpiryUnit::UnixMilliseconds),
            ]
            .into_iter()
            .find(|(token, _)| option.is(token))
            .map(|(_, unit)| unit);
            match next {
                Some(value) if option.is("BYINT") && !by_given => {
                    s.by_integer = Some(value.to_i64().ok_or(NOT_INTEGER_INCREMENT)?);
                    i += 1;
                }
                Some(value) if option.is("BYFLOAT") && !by_given => {
                    let by = LongDouble::parse(value).ok_or(NOT_FLOAT_INCREMENT)?;
                    if by.is_infinite() {
                        return Err(INFINITE_INCREMENT);
                    }
                    s.by_float = Some(by);
                    i += 1;
                }
                Some(value) if option.is("LBOUND") && s.lower.is_none() => {
                    s.lower = Some(value);
                    i += 1;
                }
                Some(value) if option.is("UBOUND") && s.upper.is_none() => {
                    s.upper = Some(value);
                    i += 1;
                }
                _ if option.is("SATURATE") && !s.saturate => s.saturate = true,
                _ if option.is("ENX") && !s.enx && !s.persist => s.enx = true,
                _ if option.is("PERSIST") && !expiry_given && !s.enx => s.persist = true,
                Some(value) if expiry_unit.is_some() && !expiry_given => {
                    s.expire = expiry_unit.map(|unit| (value, unit));
                    i += 1;
                }
                _ if valkey && option.is("NX") && s.presence.is_none() => {
                    s.presence = Some(Presence::IfMissing);
                }
                _ if valkey && option.is("XX") && s.presence.is_none() => {
                    s.presence = Some(Presence::IfPresent);
                }
                _ => return Err(CommandError::Syntax),
            }
            i += 1;
        }
        Ok(s)
    }

    /// The second pass: the bounds in the mode's type, then ENX, then the expiry's value.
    fn finish(self, key: Arg<'call>) -> Result<IncrexArgs<'call>, CommandError> {
        let mode = match self.by_float {
            Some(by) => {
                let parse = |bound: Option<Arg<'_>>, default: LongDouble, error: CommandError| {
                    bound.map_or(Ok(default), |arg| LongDouble::parse(arg).ok_or(error))
                };
                let max = LongDouble::max();
                let lower = parse(self.lower, max.negated(), LBOUND_NOT_FLOAT)?;
                let upper = parse(self.upper, max, UBOUND_NOT_FLOAT)?;
                if lower.compare(upper).is_gt() {
                    return Err(BOUNDS_CROSSED);
                }
                Mode::Float {
                    by,
                    bounds: Bounds { lower, upper },
                }
            }
            None => {
                let parse = |bound: Option<Arg<'_>>, default: i64, error: CommandError| {
                    bound.map_or(Ok(default), |arg| arg.to_i64().ok_or(error))
                };
                let lower = parse(self.lower, i64::MIN, LBOUND_NOT_INTEGER)?;
                let upper = parse(self.upper, i64::MAX, UBOUND_NOT_INTEGER)?;
                if lower > upper {
                    return Err(BOUNDS_CROSSED);
                }
                Mode::Integer {
                    by: self.by_integer.unwrap_or(1),
                    bounds: Bounds { lower, upper },
                }
            }
        };
        if self.enx && self.expire.is_none() {
            return Err(ENX_ALONE);
        }
        let expiry = match self.expire {
            Some((value, unit)) => Expiry::Set {
                value: value.to_i64().ok_or(CommandError::NotInteger)?,
                unit,
                only_if_none: self.enx,
            },
            None if self.persist => Expiry::Persist,
            None => Expiry::Keep,
        };
        Ok(IncrexArgs {
            key,
            mode,
            saturate: self.saturate,
            expiry,
            presence: self.presence.unwrap_or(Presence::Always),
        })
    }
}

/// One mode's numbers: how the stored value reads, how a value is stored and replied.
trait Number: Amount {
    fn read(ctx: &Ctx, stored: &[u8]) -> Result<Self, CommandError>;
    fn zero() -> Self;
    /// The value's text as stored (on the stack for an integer: no allocation per call).
    fn stored(self, ctx: &Ctx) -> SmallVec<[u8; 24]>;
    fn reply<'call>(self) -> Reply<'call>;
    /// The reply `[value, applied]` (an integer pair on the stack, as GOBLIN.GCRA's).
    fn pair<'call>(value: Self, applied: Self) -> Reply<'call>;
    /// The keyspace event of the write.
    const EVENT: &'static std::ffi::CStr;
    const APPLIED_OVERFLOW: CommandError;
}

impl Number for i64 {
    fn read(_: &Ctx, stored: &[u8]) -> Result<i64, CommandError> {
        parse_integer(stored).ok_or(CommandError::NotInteger)
    }
    fn zero() -> i64 {
        0
    }
    fn stored(self, _: &Ctx) -> SmallVec<[u8; 24]> {
        SmallVec::from_slice(Decimal::integer(self).as_bytes())
    }
    fn reply<'call>(self) -> Reply<'call> {
        Reply::Int(self)
    }
    fn pair<'call>(value: i64, applied: i64) -> Reply<'call> {
        Reply::Ints(smallvec![value, applied])
    }
    const EVENT: &'static std::ffi::CStr = c"incrby";
    const APPLIED_OVERFLOW: CommandError = APPLIED_OVERFLOW;
}

impl Number for LongDouble {
    fn read(ctx: &Ctx, stored: &[u8]) -> Result<LongDouble, CommandError> {
        let value = LongDouble::parse_bytes(ctx, stored).ok_or(CommandError::NotFloat)?;
        if value.is_infinite() {
            return Err(INFINITE_VALUE);
        }
        Ok(value)
    }
    fn zero() -> LongDouble {
        LongDouble::from_i64(0)
    }
    fn stored(self, ctx: &Ctx) -> SmallVec<[u8; 24]> {
        SmallVec::from_vec(self.human(ctx))
    }
    fn reply<'call>(self) -> Reply<'call> {
        Reply::LongDouble(self)
    }
    fn pair<'call>(value: LongDouble, applied: LongDouble) -> Reply<'call> {
        Reply::Array(vec![value.reply(), applied.reply()])
    }
    const EVENT: &'static std::ffi::CStr = c"incrbyfloat";
    const APPLIED_OVERFLOW: CommandError = APPLIED_INFINITE;
}

/// Reads the value, increments it within the bounds, and writes it with its TTL: the whole call
/// after the arguments and the key's type.
fn count<N: Number>(
    ctx: &Ctx,
    key: &mut Key<'_>,
    existed: bool,
    by: N,
    bounds: Bounds<N>,
    args: &IncrexArgs<'_>,
    expiry: ExpiryOption,
) -> Result<Reply<'static>, CommandError> {
    let old = match key.string_or_empty() {
        Some(stored) if existed => N::read(ctx, stored)?,
        _ => N::zero(),
    };
    // Made only when it is the reply.
    let unchanged = || N::pair(old, N::zero());
    let skipped = match args.presence {
        Presence::Always => false,
        Presence::IfMissing => existed,
        Presence::IfPresent => !existed,
    };
    if skipped {
        return Ok(unchanged());
    }
    let (value, applied) = match increment(old, by, bounds, args.saturate) {
        Increment::Applied { value, applied } => (value, applied),
        Increment::Rejected => return Ok(unchanged()),
        Increment::AppliedOverflow => return Err(N::APPLIED_OVERFLOW),
    };
    let had_ttl = existed && key.has_ttl();
    let change = ttl_change(expiry, had_ttl, ctx.now_ms());
    effects::stored_number(ctx, key, &value.stored(ctx), N::EVENT, change, existed);
    Ok(N::pair(value, applied))
}

impl Command for Increx {
    const SPEC: &'static Spec = &Spec {
        name: c"increx",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        summary: c"Increments the numeric value of a key by a number and sets its expiration time. Uses 0 as initial value if the key doesn't exist.",
        complexity: c"O(1)",
        since: c"8.8.0",
        keys: Keys::One(KeyAccess::ReadUpdate),
        args: &[
            ArgDoc::key(c"key"),
            ArgDoc::one_of(
                c"increment",
                &[
                    ArgDoc::double(c"float").token("BYFLOAT"),
                    ArgDoc::integer(c"integer").token("BYINT"),
                ],
            )
            .optional(),
            ArgDoc::pure_token(c"saturate", "SATURATE")
                .summary(c"Saturate the result to LBOUND/UBOUND (or the type limits when no explicit bound is given) when out of bounds. Without this option, out-of-bounds operations are rejected and reply [current_value, 0].")
                .optional(),
            ArgDoc::string(c"lowerbound")
                .token("LBOUND")
                .summary(c"Integer when used with BYINT, floating-point when used with BYFLOAT.")
                .optional(),
            ArgDoc::string(c"upperbound")
                .token("UBOUND")
                .summary(c"Integer when used with BYINT, floating-point when used with BYFLOAT.")
                .optional(),
            ArgDoc::one_of(
                c"expiration",
                &[
                    ArgDoc::integer(c"seconds").token("EX"),
                    ArgDoc::integer(c"milliseconds").token("PX"),
                    ArgDoc::unix_time(c"unix-time-seconds").token("EXAT"),
                    ArgDoc::unix_time(c"unix-time-milliseconds").token("PXAT"),
                    ArgDoc::pure_token(c"persist", "PERSIST"),
                ],
            )
            .optional(),
            ArgDoc::pure_token(c"enx", "ENX")
                .summary(c"Only set the expiration if the key currently has no TTL. Requires one of EX/PX/EXAT/PXAT; cannot be combined with PERSIST.")
                .optional(),
        ],
        stats: &STATS,
        info_name: "stand_in_increx",
        outcomes: &[],
        stand_in: true,
    };

    type Args<'call> = IncrexArgs<'call>;

    fn parse<'call>(mut args: Args<'_, 'call>) -> Result<IncrexArgs<'call>, CommandError> {
        let key = args.next()?;
        Scanned::scan(args.rest())?.finish(key)
    }

    fn run<'call>(ctx: &'call Ctx, args: IncrexArgs<'call>) -> Result<Reply<'call>, CommandError> {
        // The last argument check, before the key: EX and PX count from the server's clock.
        let expiry = match args.expiry {
            Expiry::Keep => ExpiryOption::Keep,
            Expiry::Persist => ExpiryOption::Persist,
            Expiry::Set {
                value,
                unit,
                only_if_none,
            } => ExpiryOption::At {
                at_ms: expiry_at(value, unit, ctx.now_ms())
                    .map_err(|_| CommandError::InvalidExpire)?,
                only_if_none,
            },
        };
        let mut key = ctx.open_key(args.key);
        let existed = match key.kind() {
            KeyKind::Empty => false,
            KeyKind::String => true,
            KeyKind::SortedSet | KeyKind::Other => return Err(CommandError::WrongType),
        };
        match args.mode {
            Mode::Integer { by, bounds } => {
                count(ctx, &mut key, existed, by, bounds, &args, expiry)
            }
            Mode::Float { by, bounds } => count(ctx, &mut key, existed, by, bounds, &args, expiry),
        }
    }
}
