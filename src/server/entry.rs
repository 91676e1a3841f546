//! Where the server calls a command: one generic entry point per command type.

use std::ffi::{c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use redis_module::raw;

use super::api::api;
use super::error::CommandError;
use super::register::key_flags;
use super::{Arg, Args, Ctx};
use crate::server::command::{Command, Spec};

/// The raw callback the server calls.
pub type Callback =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

/// One row of the command table: what a command says of itself, and where the server calls it.
pub struct Registration {
    pub spec: &'static Spec,
    pub callback: Callback,
}

/// The table row of command `C`.
pub const fn registration<C: Command>() -> Registration {
    Registration {
        spec: C::SPEC,
        callback: entry_point::<C>,
    }
}

/// The server-facing entry point of command `C`: borrows argv in place (no copies, no
/// retains), parses, runs, and writes the reply. A panic is caught here and answered as an
/// error, because one unwinding out of a module takes the server down.
extern "C" fn entry_point<C: Command>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    let Some(ctx) = NonNull::new(ctx).map(Ctx::new) else {
        return raw::REDISMODULE_ERR as c_int;
    };
    // SAFETY: the server passes argc non-NULL strings that outlive this call.
    let argv = unsafe { Arg::view(argv, argc) };
    let spec = C::SPEC;
    // SAFETY: a live context.
    if spec.keys.asked_per_call()
        && unsafe { api!(RedisModule_IsKeysPositionRequest)(ctx.raw()) } != 0
    {
        spec.keys.each_position(argv, |position, access| {
            let (Ok(position), flags) = (c_int::try_from(position), key_flags(access)) else {
                return;
            };
            // SAFETY: a key-position request context; a position within argv.
            unsafe { api!(RedisModule_KeyAtPosWithFlags)(ctx.raw(), position, flags as c_int) };
        });
        return raw::REDISMODULE_OK as c_int;
    }
    spec.stats.calls.add(1);
    let watched = super::blocking::waiting().filter(|lines| lines.anyone());
    if let Some(lines) = watched {
        lines.command_begins();
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let args = C::parse(Args::after_name(argv))?;
        let reply = C::run(&ctx, args);
        // Whatever the command wrote may let a waiter in: its keys' lines are looked at now,
        // once, for every command, before any other client's command runs (unless the command
        // served them itself after its last write, or nobody waits at all: most calls ask only
        // that).
        if ctx.wrote_unserved() {
            if let Some(waiting) = super::blocking::waiting().filter(|lines| lines.anyone()) {
                spec.keys.each_position(argv, |position, _| {
                    if let Some(&key) = argv.get(position) {
                        waiting.changed(&ctx, key);
                    }
                });
            }
        }
        reply
    }));
    if let Some(lines) = watched {
        lines.command_ends(&ctx);
    }
    let reply = match outcome {
        Ok(reply) => reply,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            let name = spec.name.to_string_lossy();
            ctx.log_warning(&format!("{name}: internal error: {what}"));
            Err(CommandError::Internal)
        }
    };
    match reply {
        Ok(reply) => reply.send(&ctx),
        Err(error) => {
            spec.stats.errors.add(1);
            let text = error.reply_text(&spec.name.to_string_lossy());
            let text = CString::new(text.into_owned())
                .unwrap_or_else(|_| CString::from(c"ERR goblin internal error"));
            // SAFETY: replying once on a live context.
            unsafe {
                api!(RedisModule_ReplyWithError)(ctx.raw(), text.as_ptr());
            }
        }
    }
    raw::REDISMODULE_OK as c_int
}
