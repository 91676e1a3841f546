//! Fencing tokens on this server: the largest minted so far, the margin they start ahead of the
//! clock when the server starts or a replica is promoted, and the clock they are minted from,
//! with the refusal when it is behind a stored token. What a token is, and why it only grows,
//! is `goblin_core::fence`; where tokens are kept is `super`.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use goblin_core::fence::{self, Stored};

use crate::error::{fence::CLOCK_BEHIND, CommandError};
use crate::server::{Ctx, Setting};

/// The margin, by default: a second, well beyond the clock skew NTP keeps servers within.
const DEFAULT_MARGIN_MS: i64 = 1000;

/// The largest token minted here (0 before the first start).
static LAST: AtomicI64 = AtomicI64::new(0);
static MARGIN_MS: AtomicI64 = AtomicI64::new(DEFAULT_MARGIN_MS);
/// A shift of the clock tokens are minted from: `fence-clock-offset-ms`, in the test build
/// only (`--features test-clock-offset`), for tests of a skewed clock.
static OFFSET_MS: AtomicI64 = AtomicI64::new(0);
/// The largest stored token read that showed the clock behind (`fence::evidence`).
static SEEN: AtomicI64 = AtomicI64::new(0);
/// Refusals because a stored token was ahead of the clock by more than the margin.
static BEHIND: AtomicU64 = AtomicU64::new(0);

/// The module arguments of fencing: `fence-margin-ms N`, how far ahead of the clock tokens
/// start when the server starts or is promoted; and in the test build, `fence-clock-offset-ms
/// N`, which the module users load refuses as unknown.
#[cfg(not(feature = "test-clock-offset"))]
pub const SETTINGS: &[Setting] = &[MARGIN];
#[cfg(feature = "test-clock-offset")]
pub const SETTINGS: &[Setting] = &[
    MARGIN,
    Setting {
        name: "fence-clock-offset-ms",
        least: -(1 << 40),
        apply: |ms| OFFSET_MS.store(ms, Ordering::Relaxed),
    },
];

const MARGIN: Setting = Setting {
    name: "fence-margin-ms",
    least: 0,
    apply: |ms| MARGIN_MS.store(ms, Ordering::Relaxed),
};

/// How many tokens this server refused to mint because its clock is behind a stored one
/// (`INFO goblin`: `goblin_fence_clock_behind`).
pub fn clock_behind() -> u64 {
    BEHIND.load(Ordering::Relaxed)
}

/// The clock tokens are minted from: the server's, in microseconds, from the command-time
/// snapshot (whole milliseconds on Redis 7.0), shifted in the test build.
fn clock_us(ctx: &Ctx) -> i64 {
    ctx.now_us()
        .saturating_add(OFFSET_MS.load(Ordering::Relaxed).saturating_mul(1000))
}

/// Where tokens start: a margin ahead of the clock, as the server starts (the load) or a
/// replica is promoted.
pub fn restart(ctx: &Ctx) {
    LAST.fetch_max(
        fence::floor_at(clock_us(ctx), MARGIN_MS.load(Ordering::Relaxed)),
        Ordering::Relaxed,
    );
}

/// Whether this server can mint a token above `stored` (the largest stored for the key and
/// its holder) that it can prove larger than those handed out before: not while a stored token
/// it read, this one or an earlier, is ahead of its clock by more than the margin (an earlier
/// one only if it was no more than an hour ahead: see `fence::Stored`). Asked before anything
/// is written.
pub fn check(ctx: &Ctx, stored: Option<i64>) -> Result<(), CommandError> {
    let (clock, margin) = (clock_us(ctx), MARGIN_MS.load(Ordering::Relaxed));
    let refused = match fence::evidence(stored, LAST.load(Ordering::Relaxed), clock, margin) {
        Stored::InReach => false,
        Stored::ClockBehind(token) => {
            SEEN.fetch_max(token, Ordering::Relaxed);
            true
        }
        Stored::OutOfReach => true,
    };
    if refused || fence::behind(SEEN.load(Ordering::Relaxed), clock, margin) {
        BEHIND.fetch_add(1, Ordering::Relaxed);
        return Err(CLOCK_BEHIND);
    }
    Ok(())
}

/// A fencing token above `stored` (the largest stored for the key and its holder) and every
/// one minted here (after `check`).
pub fn mint(ctx: &Ctx, stored: Option<i64>) -> i64 {
    let token = fence::mint(LAST.load(Ordering::Relaxed), stored, clock_us(ctx));
    LAST.fetch_max(token, Ordering::Relaxed);
    token
}
