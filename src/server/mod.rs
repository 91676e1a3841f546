//! The one room that talks to the server's raw module API: every `unsafe` block of Goblin is
//! in this folder (the crate denies `unsafe_code` everywhere else, so the compiler holds the
//! boundary). What it hands out are safe types that live no longer than one command call:
//! `Ctx` (the call), `Arg` (an argument), `Key` (an open key), and `Reply`.
//!
//! | file | concern |
//! |---|---|
//! | `command.rs` | the one shape of a command: what the server is told of it, and what it calls |
//! | `stats.rs` | the counters of `INFO goblin` |
//! | `api.rs` | the table of server functions Goblin calls, checked at load |
//! | `module.rs` | the module's entry points (`entry_points!`, which `lib.rs` calls with its description), the module arguments, the promotions followed |
//! | `register.rs` | load-time checks, the command table, docs, ACL categories |
//! | `options.rs` | the module options declared: Redis's, and Valkey's where the server offers them |
//! | `migration.rs` | Valkey's atomic slot migration: its server event, and its option |
//! | `probe.rs` | questions to the server outside any command (`COMMAND INFO`, `CONFIG GET`, `INFO`) |
//! | `host.rs` | which server this is |
//! | `config.rs` | server settings the stand-ins follow (`lazyfree-lazy-expire`) |
//! | `long_double.rs`, `numbers.c` | the server's `long double` (INCREX BYFLOAT), Redis's double parser (GCRA) |
//! | `entry.rs` | the entry point the server calls for each command |
//! | `ctx.rs` | the call: its clock, replication, notifications |
//! | `blocking.rs` | waiting in the server: blocked clients, timers, keyspace events |
//! | `args.rs` | the arguments |
//! | `keys.rs`, `strings.rs`, `zsets.rs` | the key, and its string or sorted-set value |
//! | `reply.rs` | replies, in the client's protocol |
//! | `error.rs` | the error replies in the server's own words, which `crate::error` re-exports |
//! | `info.rs` | the `INFO goblin` section |
//!
//! It imports nothing of the rest of the crate: `lib.rs` hands it the module's description
//! (`ModuleSpec`: the commands, the waiting lines, the settings, what to do at load and at a
//! promotion). The API is the same C ABI on every server in the matrix. Where they differ in
//! behaviour this layer takes the path that is safe on all of them.
#![allow(unsafe_code)]

use std::ffi::CStr;

use redis_module::raw;

mod api;
mod args;
mod blocking;
pub mod command;
mod config;
mod ctx;
mod entry;
pub mod error;
mod host;
mod info;
mod keys;
mod long_double;
mod migration;
mod module;
mod options;
mod probe;
mod register;
mod reply;
pub mod stats;
mod strings;
mod zsets;

pub use args::{Arg, Args};
pub use blocking::{Blocked, Waiting};
pub use config::lazyfree_lazy_expire;
pub use ctx::{Ctx, EventClass, OwnedString, Served, Word, MAX_REPLICATED_ARGS};
pub use entry::{registration, Registration};
pub use host::{host, Family};
pub use info::InfoSection;
pub use keys::{Key, KeyKind};
pub use long_double::LongDouble;
pub(crate) use module::entry_points;
pub use module::{on_load, on_unload, unload_allowed};
pub use register::{ModuleSpec, Setting};
pub use reply::Reply;

/// A callback for a server event (`RedisModule_SubscribeToServerEvent`).
type EventCallback = unsafe extern "C" fn(
    *mut raw::RedisModuleCtx,
    raw::RedisModuleEvent,
    u64,
    *mut std::ffi::c_void,
);

/// Subscribes `callback` to the server event `id`, at load time; whether the server took it
/// (a server without the API takes none).
fn subscribe(ctx: *mut raw::RedisModuleCtx, id: u64, callback: EventCallback) -> bool {
    let Some(subscribe) = api::optional_api!(RedisModule_SubscribeToServerEvent) else {
        return false;
    };
    let event = raw::RedisModuleEvent { id, dataver: 1 };
    // SAFETY: a load-time context and a callback that lives as long as the module.
    unsafe { subscribe(ctx, event, Some(callback)) == raw::REDISMODULE_OK as std::ffi::c_int }
}

/// Writes `message` to the server's log at `level`.
fn log(ctx: *mut raw::RedisModuleCtx, level: &CStr, message: &str) {
    let message = module::c_message(message);
    // SAFETY: a live context, a static level and format, a NUL-terminated message.
    unsafe {
        api::api!(RedisModule_Log)(ctx, level.as_ptr(), c"%s".as_ptr(), message.as_ptr());
    }
}
