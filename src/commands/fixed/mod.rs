//! The fixed-window family, on `goblin_core::increx` and `goblin_core::fwindow`: a counter whose
//! TTL is armed on the first hit (GOBLIN.INCREX, in seconds), the same in milliseconds with what
//! a call over its limit does and the time to reset in its reply (GOBLIN.FWINDOW), read only
//! (GOBLIN.FWSTATS), and several at once, all or nothing (GOBLIN.MFWINDOW). What they share is
//! here: the window argument, and the counter as it stands.

pub mod fwindow;
pub mod fwstats;
pub mod increx;
pub mod mfwindow;

use goblin_core::decimal::parse_integer;
use goblin_core::fwindow::Standing;

use crate::error::CommandError;
use crate::server::{Arg, Key, KeyKind};

/// A window in milliseconds: 0 (none) or more, as SET's PX takes them.
fn window_ms(arg: Arg<'_>) -> Result<i64, CommandError> {
    match arg.to_i64() {
        None => Err(CommandError::NotInteger),
        Some(ms) if ms < 0 => Err(CommandError::InvalidExpire),
        Some(ms) => Ok(ms),
    }
}

/// The counter at `key` as it stands at `now_ms`: its value and the milliseconds until its key
/// expires, read from the absolute expiry on the clock the call arms windows on (0 or less: its
/// window has ended, `fwindow::ended`).
fn standing(key: Option<&Key<'_>>, now_ms: i64) -> Result<Standing, CommandError> {
    let Some(key) = key else {
        return Ok(None);
    };
    // The bytes first, one call into the server for a counter: none for a key of another type,
    // and its kind asked only where they are empty (a missing key, or an empty string).
    let value = match key.string_or_empty() {
        None => return Err(CommandError::WrongType),
        Some([]) if key.kind() == KeyKind::Empty => return Ok(None),
        Some(bytes) => parse_integer(bytes).ok_or(CommandError::NotInteger)?,
    };
    Ok(Some((
        value,
        key.expires_at_ms()
            .map(|at_ms| at_ms.saturating_sub(now_ms)),
    )))
}
