//! Fencing tokens on this server: the largest minted so far, the margin they start ahead of the
//! clock when the server starts or a replica is promoted, and the clock they are minted from.
//! What a token is, and why it only grows, is `goblin_core::fence`.

use std::ffi::c_void;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use goblin_core::fence::{self, Stored};
use redis_module::raw;

use super::Ctx;
use crate::error::{fence::CLOCK_BEHIND, CommandError};

/// The margin, by default: a second, well beyond the clock skew NTP keeps servers within.
pub const DEFAULT_MARGIN_MS: i64 = 1000;

/// The largest token minted here (0 before the first start).
static LAST: AtomicI64 = AtomicI64::new(0);
static MARGIN_MS: AtomicI64 = AtomicI64::new(DEFAULT_MARGIN_MS);
/// `fence-clock-offset-ms`, for tests of a skewed clock.
static OFFSET_MS: AtomicI64 = AtomicI64::new(0);
/// The largest stored token read that showed the clock behind (`fence::evidence`).
static SEEN: AtomicI64 = AtomicI64::new(0);
/// Refusals because a stored token was ahead of the clock by more than the margin.
static BEHIND: AtomicU64 = AtomicU64::new(0);

/// How many tokens this server refused to mint because its clock is behind a stored one
/// (`INFO goblin`: `goblin_fence_clock_behind`).
pub fn clock_behind() -> u64 {
    BEHIND.load(Ordering::Relaxed)
}

/// The clock tokens are minted from: the server's, in microseconds, from the command-time
/// snapshot (whole milliseconds on Redis 7.0), shifted by `fence-clock-offset-ms`.
fn clock_us(ctx: &Ctx) -> i64 {
    ctx.now_us()
        .saturating_add(OFFSET_MS.load(Ordering::Relaxed).saturating_mul(1000))
}

/// Where tokens start after the server started, or a replica was promoted, at `clock_us`.
fn restart_from(clock_us: i64) {
    LAST.fetch_max(
        fence::floor_at(clock_us, MARGIN_MS.load(Ordering::Relaxed)),
        Ordering::Relaxed,
    );
}

impl Ctx {
    /// Whether this server can mint a token above `stored` (the largest stored for the key
    /// and its holder) that it can prove larger than those handed out before: not while a
    /// stored token it read, this one or an earlier, is ahead of its clock by more than the
    /// margin (an earlier one only if it was no more than an hour ahead: see
    /// `fence::Stored`). Asked before anything is written.
    pub fn check_fence(&self, stored: Option<i64>) -> Result<(), CommandError> {
        let (clock, margin) = (clock_us(self), MARGIN_MS.load(Ordering::Relaxed));
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

    /// A fencing token above `stored` (the largest stored for the key and its holder) and
    /// every one minted here (after `check_fence`).
    pub fn mint_fence(&self, stored: Option<i64>) -> i64 {
        let token = fence::mint(LAST.load(Ordering::Relaxed), stored, clock_us(self));
        LAST.fetch_max(token, Ordering::Relaxed);
        token
    }
}

/// The server's role-change event: a replica promoted starts its tokens a margin ahead.
unsafe extern "C" fn on_role_change(
    ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    if subevent != raw::REDISMODULE_EVENT_REPLROLECHANGED_NOW_MASTER {
        return;
    }
    if let Some(ctx) = std::ptr::NonNull::new(ctx).map(Ctx::new) {
        restart_from(clock_us(&ctx));
    }
}

/// Load time, among the last steps (which cannot fail it): the settings, the start, and the
/// promotions followed. A refusal to subscribe is logged: tokens then rest on the clock alone
/// after a promotion.
pub(super) fn start(ctx: *mut raw::RedisModuleCtx, margin_ms: i64, offset_ms: i64) {
    MARGIN_MS.store(margin_ms, Ordering::Relaxed);
    OFFSET_MS.store(offset_ms, Ordering::Relaxed);
    if let Some(load) = std::ptr::NonNull::new(ctx).map(Ctx::new) {
        restart_from(clock_us(&load));
    }
    let followed = super::subscribe(
        ctx,
        raw::REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED,
        on_role_change,
    );
    if !followed {
        super::log(
            ctx,
            c"warning",
            "goblin: could not follow replica promotions",
        );
    }
}
