//! The module's life in the server: `RedisModule_OnLoad` (`loadmodule`, `MODULE LOAD`), the
//! module arguments, the promotions followed, and `RedisModule_OnUnload` (`MODULE UNLOAD`).
//! `lib.rs` makes the two entry points with `entry_points!`, handing over its description.
//!
//! Goblin writes these two entry points itself instead of using redismodule-rs's `redis_module!`:
//! the macro keeps a detached thread-safe context (a client with its reply buffer, about 17 KB)
//! for the module's lifetime and nothing frees it, so every load and unload cycle leaked it.
//! Goblin needs no context outside a call, so it allocates nothing that outlives one.

use std::ffi::{c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use redis_module::raw;

use super::probe::info_fields;
use super::register::{LoadCtx, ModuleSpec, Setting};
use super::{Arg, Ctx};

/// The module arguments (`loadmodule /path/libgoblin.so allow-unload`): the server's own, and
/// the settings the module declares (`ModuleSpec::settings`), each with its value.
#[derive(Debug, PartialEq, Eq)]
struct Options {
    /// `allow-unload`: let `MODULE UNLOAD` through (see `RedisModule_OnUnload`).
    allow_unload: bool,
    /// `no-stand-ins`: register only the GOBLIN.* commands, none of the native stand-ins.
    stand_ins: bool,
    /// The settings given, by their index in the module's table, with their values.
    settings: Vec<(usize, i64)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            allow_unload: false,
            stand_ins: true,
            settings: Vec::new(),
        }
    }
}

impl Options {
    fn parse<'a>(
        args: impl IntoIterator<Item = &'a [u8]>,
        settings: &[Setting],
    ) -> Result<Options, String> {
        let mut options = Options::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            if arg.eq_ignore_ascii_case(b"allow-unload") {
                options.allow_unload = true;
            } else if arg.eq_ignore_ascii_case(b"no-stand-ins") {
                options.stand_ins = false;
            } else if let Some(index) = settings
                .iter()
                .position(|setting| arg.eq_ignore_ascii_case(setting.name.as_bytes()))
            {
                let setting = &settings[index];
                let value = milliseconds(setting, args.next())?;
                options.settings.push((index, value));
            } else {
                let known: Vec<String> = ["allow-unload", "no-stand-ins"]
                    .into_iter()
                    .map(String::from)
                    .chain(settings.iter().map(|setting| format!("{} N", setting.name)))
                    .collect();
                return Err(format!(
                    "unknown module argument {:?} (Goblin knows {})",
                    String::from_utf8_lossy(arg),
                    known.join(", ")
                ));
            }
        }
        Ok(options)
    }
}

/// A setting's value: whole milliseconds, at least its least, below 2^40 in size.
fn milliseconds(setting: &Setting, value: Option<&[u8]>) -> Result<i64, String> {
    let name = setting.name;
    let value = value.ok_or_else(|| format!("module argument {name} needs a value"))?;
    std::str::from_utf8(value)
        .ok()
        .and_then(|text| text.parse::<i64>().ok())
        .filter(|ms| *ms >= setting.least && ms.unsigned_abs() < 1 << 40)
        .ok_or_else(|| {
            format!(
                "module argument {name}: {:?} is not a number of milliseconds of at least {}",
                String::from_utf8_lossy(value),
                setting.least
            )
        })
}

static ALLOW_UNLOAD: AtomicBool = AtomicBool::new(false);
/// Set when the server is shutting down (its shutdown event), past the point where it could
/// still change its mind: nothing runs after it, so its unload of the module is let through.
static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);
/// The server's count of commands processed while `RedisModule_OnLoad` ran, or -1 if unknown.
static LOADED_AT_COMMAND: AtomicI64 = AtomicI64::new(-1);

/// Whether `MODULE UNLOAD` is let through (`INFO goblin`).
pub fn unload_allowed() -> bool {
    ALLOW_UNLOAD.load(Ordering::Relaxed)
}

/// `total_commands_processed` of `INFO stats`. The server counts a command when it returns,
/// so the count stays put for the whole command that loads the module, and has moved by the
/// time any other command (`MODULE UNLOAD` among them) runs.
fn commands_processed(ctx: *mut raw::RedisModuleCtx) -> Option<i64> {
    let fields = info_fields(ctx, c"stats", &[c"total_commands_processed"])?;
    fields.into_iter().next().flatten()?.parse().ok()
}

/// The module's entry points for the server, `RedisModule_OnLoad` and `RedisModule_OnUnload`,
/// loading `$module` (a `ModuleSpec`): `lib.rs` hands its description to this layer so, as
/// redismodule-rs's `redis_module!` does, and `server/` names nothing above it.
macro_rules! entry_points {
    ($module:path) => {
        /// The server calls this once when it loads the module.
        ///
        /// # Safety
        /// Called by the server only, with its context and `argc` live argument strings.
        #[no_mangle]
        #[allow(unsafe_code)]
        pub unsafe extern "C" fn RedisModule_OnLoad(
            ctx: *mut redis_module::raw::RedisModuleCtx,
            argv: *mut *mut redis_module::raw::RedisModuleString,
            argc: std::ffi::c_int,
        ) -> std::ffi::c_int {
            // SAFETY: the server's own call, passed on as it came.
            unsafe { $crate::server::on_load(ctx, argv, argc, &$module) }
        }

        /// The server calls this on `MODULE UNLOAD` (see `server::on_unload`).
        ///
        /// # Safety
        /// Called by the server only, with its context.
        #[no_mangle]
        #[allow(unsafe_code)]
        pub unsafe extern "C" fn RedisModule_OnUnload(
            ctx: *mut redis_module::raw::RedisModuleCtx,
        ) -> std::ffi::c_int {
            // SAFETY: the server's own call, passed on as it came.
            unsafe { $crate::server::on_unload(ctx) }
        }
    };
}
pub(crate) use entry_points;

/// `RedisModule_OnLoad` for `module`.
///
/// # Safety
/// The server's load call: its context and `argc` live argument strings.
pub unsafe fn on_load(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    module: &'static ModuleSpec,
) -> c_int {
    // Nothing may allocate before this: the allocator is the server's, reached through the
    // function pointers that Init fills in.
    // SAFETY: the server's context; a static name.
    let init = unsafe {
        raw::Export_RedisModule_Init(
            ctx,
            module.name.as_ptr(),
            module.version,
            raw::REDISMODULE_APIVER_1 as c_int,
        )
    };
    if init == raw::Status::Err as c_int {
        return raw::REDISMODULE_ERR as c_int;
    }
    let load = LoadCtx { ptr: ctx };
    // SAFETY: the server passes `argc` live, non-NULL strings for the duration of this call.
    let args = unsafe { Arg::view(argv, argc) };
    let loaded = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        let options = Options::parse(args.iter().map(|arg| arg.as_bytes()), module.settings)?;
        super::host::detect(ctx);
        super::ctx::make_words(ctx);
        if !super::long_double::init() {
            return Err("this server lacks the module API's long double functions".into());
        }
        let choices = super::register::Choices {
            stand_ins: options.stand_ins,
        };
        super::register::register(&load, module, choices)?;
        // The last step that can fail, as nothing may fail after it subscribes (see `watch`).
        super::config::watch(ctx)?;
        super::info::remember(module);
        super::blocking::subscribe(ctx, module.waiting);
        follow_shutdown(ctx);
        follow_promotions(ctx);
        for &(index, value) in &options.settings {
            (module.settings[index].apply)(value);
        }
        if let Some(load) = std::ptr::NonNull::new(ctx).map(Ctx::new) {
            (module.loaded)(&load);
        }
        // After the fencing tokens' start (`loaded`), which a migration's import moves on.
        super::migration::follow(ctx);
        ALLOW_UNLOAD.store(options.allow_unload, Ordering::Relaxed);
        // After every call the load makes (`watch` reads CONFIG), which the server counts.
        LOADED_AT_COMMAND.store(commands_processed(ctx).unwrap_or(-1), Ordering::Relaxed);
        Ok(())
    }));
    match loaded {
        Ok(Ok(())) => raw::REDISMODULE_OK as c_int,
        Ok(Err(why)) => {
            load.log_warning(&format!("goblin: not loaded: {why}"));
            raw::REDISMODULE_ERR as c_int
        }
        Err(_) => {
            load.log_warning("goblin: not loaded: internal error while loading");
            raw::REDISMODULE_ERR as c_int
        }
    }
}

/// The server's role-change event: a replica promoted tells the module (`ModuleSpec::promoted`).
unsafe extern "C" fn on_role_change(
    ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut std::ffi::c_void,
) {
    if subevent != raw::REDISMODULE_EVENT_REPLROLECHANGED_NOW_MASTER {
        return;
    }
    if let (Some(ctx), Some(module)) = (
        std::ptr::NonNull::new(ctx).map(Ctx::new),
        super::info::loaded(),
    ) {
        (module.promoted)(&ctx);
    }
}

/// Follows replica promotions. Load time, among the last steps, which cannot fail it: a
/// refusal is logged (the module then hears of no promotion).
fn follow_promotions(ctx: *mut raw::RedisModuleCtx) {
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

/// The server's shutdown event: it fires once the shutdown can no longer fail (the final save
/// done, or not wanted), before the server unloads its modules, which Valkey 9.1 does on every
/// clean shutdown.
unsafe extern "C" fn on_shutdown(
    _ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    _subevent: u64,
    _data: *mut std::ffi::c_void,
) {
    SHUTTING_DOWN.store(true, Ordering::Relaxed);
}

/// Follows the server's shutdown, so that its unload at exit is not refused (and logged as a
/// failure). Load time, among the last steps, which cannot fail it: a refusal is logged.
fn follow_shutdown(ctx: *mut raw::RedisModuleCtx) {
    if !super::subscribe(ctx, raw::REDISMODULE_EVENT_SHUTDOWN, on_shutdown) {
        super::log(
            ctx,
            c"warning",
            "goblin: could not subscribe to the shutdown event",
        );
    }
}

/// The server calls this on `MODULE UNLOAD`, before it frees anything; an error cancels the
/// unload and the client gets `ERR Error unloading module: operation not possible.`
///
/// Refused by default, because the server cannot unload a module safely while a client holds
/// a call to one of its commands: a GOBLIN command queued in MULTI, or held by `CLIENT PAUSE
/// WRITE`, keeps a pointer to the command the unload frees, and EXEC (or UNPAUSE) then jumps
/// into the unloaded library and the server dies (redis/redis#4826, #10177). The module
/// cannot see queued or paused calls, so it refuses unless loaded with `allow-unload`.
///
/// One unload is always let through: the server's own, inside the very command that loaded the
/// module, when `MODULE LOADEX` fails after `RedisModule_OnLoad` returned (an unknown `CONFIG`,
/// say). No client can have queued a Goblin command yet, and Redis 8.10 asserts that this
/// unload succeeds (Redis 7.0 keeps a half-loaded module otherwise). The server's count of
/// processed commands, which only moves between commands, tells.
///
/// Goblin holds nothing outside a call, so there is nothing of its own to free: the server
/// frees the commands, their docs and the INFO callback it registered.
///
/// # Safety
/// The server's unload call, with its context.
pub unsafe fn on_unload(ctx: *mut raw::RedisModuleCtx) -> c_int {
    if SHUTTING_DOWN.load(Ordering::Relaxed) {
        // The server exits: no queued or paused call can run any more (Valkey 9.1 unloads
        // every module at a clean shutdown).
        return raw::REDISMODULE_OK as c_int;
    }
    let loaded_at = LOADED_AT_COMMAND.load(Ordering::Relaxed);
    let undoing_its_own_load = loaded_at >= 0 && commands_processed(ctx) == Some(loaded_at);
    if unload_allowed() || undoing_its_own_load {
        return raw::REDISMODULE_OK as c_int;
    }
    super::log(
        ctx,
        c"warning",
        "goblin: MODULE UNLOAD refused. A client may hold a Goblin command queued in MULTI or \
         paused by CLIENT PAUSE, and the server would crash running it after the unload \
         (redis/redis#4826). To allow unloading anyway, on a server where no such call can be \
         pending, load the module with the argument allow-unload.",
    );
    raw::REDISMODULE_ERR as c_int
}

/// A C string for the log, or a placeholder if `message` holds a NUL.
pub(super) fn c_message(message: &str) -> CString {
    CString::new(message).unwrap_or_else(|_| CString::from(c"goblin: (unprintable message)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn margin(_: i64) {}

    const SETTINGS: &[Setting] = &[Setting {
        name: "fence-margin-ms",
        least: 0,
        apply: margin,
    }];

    fn parse<'a>(args: impl IntoIterator<Item = &'a [u8]>) -> Result<Options, String> {
        Options::parse(args, SETTINGS)
    }

    #[test]
    fn no_arguments_refuse_unload() {
        assert_eq!(parse([]), Ok(Options::default()));
    }

    #[test]
    fn allow_unload_in_any_case() {
        for arg in [&b"allow-unload"[..], b"ALLOW-UNLOAD"] {
            assert!(parse([arg]).unwrap().allow_unload);
        }
    }

    #[test]
    fn no_stand_ins_in_any_case() {
        assert!(parse([]).unwrap().stand_ins);
        for arg in [&b"no-stand-ins"[..], b"NO-STAND-INS"] {
            assert!(!parse([arg]).unwrap().stand_ins);
        }
    }

    #[test]
    fn settings_take_milliseconds() {
        let options = parse([&b"FENCE-MARGIN-MS"[..], b"2500", b"allow-unload"]).unwrap();
        assert_eq!(
            (options.settings, options.allow_unload),
            (vec![(0, 2500)], true)
        );
        for bad in [
            &[&b"fence-margin-ms"[..]][..],
            &[b"fence-margin-ms", b"-1"],
            &[b"fence-margin-ms", b"1.5"],
            &[b"fence-margin-ms", b"1099511627776"],
        ] {
            assert!(parse(bad.iter().copied()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn unknown_arguments_stop_the_load_and_say_what_is_known() {
        let error = parse([&b"allow_unload"[..]]).unwrap_err();
        assert!(error.contains("allow_unload"), "{error}");
        assert!(error.contains("fence-margin-ms N"), "{error}");
        let error = parse([&b"fence-clock-offset-ms"[..], b"-200"]).unwrap_err();
        assert!(error.contains("unknown module argument"), "{error}");
    }
}
