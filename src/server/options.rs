//! The module options Goblin declares to the server (`RedisModule_SetModuleOptions`): Redis's
//! `NO_IMPLICIT_SIGNAL_MODIFIED` everywhere, and Valkey's own where the server offers them.
//!
//! Redis and Valkey number their option bits (and their server events) each on its own: a bit
//! Valkey gave a meaning means nothing on Redis today, and may mean something else tomorrow
//! (Redis 8.10 stops at bit 3, and its server event 19 is not Valkey's). So a Valkey option is
//! declared only to a server that is Valkey (`INFO server`'s `valkey_version`) and that lists the
//! bit among the options it knows (`RedisModule_GetModuleOptionsAll`): the server is asked, never
//! its version number.
//!
//! `SetModuleOptions` replaces what was declared before, so every declaration goes through
//! `declare`, which keeps the whole set.

use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, Ordering};

use redis_module::raw;

use super::api::{api, optional_api};
use super::host::{host, Family};

/// `VALKEYMODULE_OPTIONS_SKIP_COMMAND_VALIDATION` (Valkey 8.1): `Replicate` and `EmitAOF` take
/// the command name as given, without looking it up in the command table on every call. Safe for
/// Goblin because the load proves that every command its effects replicate as exists
/// (`ModuleSpec::replicates_as`), and the table never changes after the server starts.
pub const VALKEY_SKIP_COMMAND_VALIDATION: c_int = 1 << 4;

/// `VALKEYMODULE_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION` (Valkey 9.0): the module is correct while
/// `CLUSTER MIGRATESLOTS` moves slots (docs/operations.md, "Atomic slot migration"). Until every
/// loaded module declares it, the server refuses `CLUSTER MIGRATESLOTS`.
pub const VALKEY_HANDLE_ATOMIC_SLOT_MIGRATION: c_int = 1 << 5;

/// What Goblin has declared so far.
static DECLARED: AtomicI32 = AtomicI32::new(0);

/// Whether this server offers `option`, one of Valkey's: a Valkey server whose module API lists
/// it. Never on Redis, whatever its list holds.
pub fn valkey_offers(option: c_int) -> bool {
    if host().family != Family::Valkey {
        return false;
    }
    let Some(all) = optional_api!(RedisModule_GetModuleOptionsAll) else {
        return false;
    };
    // SAFETY: no arguments; returns the mask of every option this server knows.
    let known = unsafe { all() };
    known & option == option
}

/// Runs `close`, the closing of a key the call wrote, with the server's implicit signal of a
/// written key switched on for it alone: `NO_IMPLICIT_SIGNAL_MODIFIED` keeps it off for every
/// key a call opens for writing and then does not write (an error, a refusal), and the server
/// reads the option as it closes each key. The signal at close has the key at hand, where
/// `RedisModule_SignalModifiedKey` takes a name and, on Redis 8.10, looks the key up again.
/// The two calls of `SetModuleOptions` only store the mask.
pub fn signalling_on_close(ctx: *mut raw::RedisModuleCtx, close: impl FnOnce()) {
    let declared = DECLARED.load(Ordering::Relaxed);
    let no_implicit = raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int;
    if declared & no_implicit == 0 {
        // Not declared (yet): the server signals every key it closes anyway.
        return close();
    }
    let set = api!(RedisModule_SetModuleOptions);
    // SAFETY: a live context of the module's own, on the main thread; the whole mask is put
    // back before anything else runs.
    unsafe { set(ctx, declared & !no_implicit) };
    close();
    // SAFETY: as above.
    unsafe { set(ctx, declared) };
}

/// Declares `options` beside those declared before. Load time only.
pub fn declare(ctx: *mut raw::RedisModuleCtx, options: c_int) {
    let all = DECLARED.fetch_or(options, Ordering::Relaxed) | options;
    // SAFETY: a load-time context; the server keeps the mask.
    unsafe { api!(RedisModule_SetModuleOptions)(ctx, all) };
}

/// The options of registration, once the load has proven what they rest on: WATCH and
/// client-side caching see a write only when a command really writes, not whenever it opens a
/// key for writing (an error reply must leave no trace); and on Valkey, `Replicate` skips its
/// command lookup.
pub fn declare_at_registration(ctx: *mut raw::RedisModuleCtx) {
    let mut options = raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int;
    if valkey_offers(VALKEY_SKIP_COMMAND_VALIDATION) {
        options |= VALKEY_SKIP_COMMAND_VALIDATION;
    }
    declare(ctx, options);
}
