//! The throttles, on `goblin_core::gcra` and `goblin_core::mgcra`: GCRA on the server's clock,
//! one policy (GOBLIN.GCRA) or several at one instant, all or nothing (GOBLIN.MGCRA). What they
//! share is here: a policy's limits, the TAT a key holds, GCRA's clock, one request decided and
//! stored.

pub mod gcra;
pub mod mgcra;

use goblin_core::gcra::{decide, peek, read_tat, Limits, Throttle};

use crate::effects;
use crate::error::gcra::{MUST_BE_POSITIVE, PERIOD_RANGE};
use crate::error::CommandError;
use crate::server::{Arg, Ctx, Key, KeyKind};

/// `max_burst tokens_per_period period`, checked in that order with GCRA's errors; the cost 1.
fn parse_limits(
    max_burst: Arg<'_>,
    tokens_per_period: Arg<'_>,
    period: Arg<'_>,
) -> Result<Limits, CommandError> {
    let max_burst = max_burst
        .to_i64()
        .filter(|value| *value >= 0)
        .ok_or(MUST_BE_POSITIVE)?;
    let tokens_per_period = tokens_per_period.to_count()?;
    let period = period.to_f64_as_redis().ok_or(CommandError::NotFloat)?;
    if !(period > 0.0 && period < 1e12) {
        return Err(PERIOD_RANGE);
    }
    Ok(Limits {
        capacity: Limits::capacity_of(max_burst),
        tokens_per_period,
        period,
        cost: 1,
    })
}

/// The TAT a key holds: none for a missing key, an error for a string that is not one or a
/// key of another type.
fn tat_of(key: &Key<'_>) -> Result<Option<i64>, CommandError> {
    match key.string_or_empty() {
        None => Err(CommandError::WrongType),
        // No key, or an empty string (which is no TAT): only the kind tells them apart.
        Some([]) if key.kind() == KeyKind::Empty => Ok(None),
        Some(stored) => Ok(Some(read_tat(stored)?)),
    }
}

/// GCRA's clock: the server's command-time snapshot, a whole millisecond, in microseconds.
fn gcra_now(ctx: &Ctx) -> i64 {
    ctx.now_ms().saturating_mul(1000)
}

/// One request against the TAT at `name`, decided and, when allowed, stored: GOBLIN.GCRA's
/// call, and GOBLIN.MGCRA's with one policy.
fn throttle_key(ctx: &Ctx, name: Arg<'_>, limits: &Limits) -> Result<Throttle, CommandError> {
    let mut key = ctx.open_key(name);
    let decision = decide(tat_of(&key)?, limits, gcra_now(ctx))?;
    if let Some(tat) = decision.new_tat {
        effects::tat_stored(ctx, &mut key, tat);
    }
    Ok(decision.throttle)
}

/// What one request against the TAT at `name` would get, with nothing written: GOBLIN.GCRA's
/// `PEEK`, and GOBLIN.MGCRA's with one policy.
fn peek_key(ctx: &Ctx, name: Arg<'_>, limits: &Limits) -> Result<Throttle, CommandError> {
    let key = ctx.open_key(name);
    Ok(peek(tat_of(&key)?, limits, gcra_now(ctx))?)
}
