//! Goblin: native rate-limit and lease commands for Redis and Valkey.
//!
//! This file is the command table. Each command lives in its own file (`increx.rs`,
//! `zwindow.rs`, `cad.rs`); the decisions are pure (`counter.rs`, `window.rs`); `effects.rs` turns them
//! into writes, replication and notifications; `server.rs` owns every call into the server.

mod cad;
mod counter;
mod decimal;
mod effects;
mod error;
mod increx;
mod server;
mod window;
mod zwindow;

use redis_module::{redis_module, Context, RedisString, Status};
use server::CommandSpec;

// ACL categories as core commands get them: the data type, `write`, and `fast` or `slow` to
// match the `fast` flag (the server derives those two only for its own commands).
const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: c"goblin.increx",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        callback: server::entry_point::<increx::Increx>,
    },
    CommandSpec {
        name: c"goblin.zwindow",
        flags: c"write deny-oom",
        acl_categories: c"write sortedset slow",
        callback: server::entry_point::<zwindow::Zwindow>,
    },
    // A deletion: allowed under maxmemory like DEL, so a lock can always be released.
    CommandSpec {
        name: c"goblin.cad",
        flags: c"write fast",
        acl_categories: c"write fast",
        callback: server::entry_point::<cad::Cad>,
    },
];

fn init(ctx: &Context, _args: &[RedisString]) -> Status {
    server::register(ctx, COMMANDS)
}

// The server's allocator in the module, so INFO memory and maxmemory see what Goblin
// allocates; the system one under `cargo test`, where there is no server to allocate from.
#[cfg(not(test))]
redis_module! {
    name: "goblin",
    version: 100,
    allocator: (redis_module::alloc::RedisAlloc, redis_module::alloc::RedisAlloc),
    data_types: [],
    init: init,
}

#[cfg(test)]
redis_module! {
    name: "goblin",
    version: 100,
    allocator: (std::alloc::System, std::alloc::System),
    data_types: [],
    init: init,
}
