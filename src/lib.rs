//! Goblin: native rate-limit and lease commands for Redis and Valkey.
//!
//! This file is the command table. Each command lives in its own file (`increx.rs`,
//! `zwindow.rs`, `cad.rs`); the decisions are pure, in the `goblin-core` crate (`core/`);
//! `effects.rs` turns them into writes, replication and notifications; `server.rs` owns every
//! call into the server.

mod cad;
mod effects;
mod increx;
mod server;
mod stats;
mod zwindow;

// The pure engine, under the names the commands use.
use goblin_core::{counter, decimal, error, window};

use server::{ArgDoc, ArgKind, CommandDocs, CommandSpec, KeyAccess};

// ACL categories as core commands get them: the data type, `write`, and `fast` or `slow` to
// match the `fast` flag (the server derives those two only for its own commands).
const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: c"goblin.increx",
        flags: c"write deny-oom fast",
        acl_categories: c"write string fast",
        callback: server::entry_point::<increx::Increx>,
        docs: CommandDocs {
            summary: c"Increments the integer at key and arms a TTL of seconds on the first hit (a fixed-window counter).",
            complexity: c"O(1)",
            since: c"0.1.0",
            arity: 3,
            key_access: KeyAccess::ReadUpdate,
            args: &[
                ArgDoc { name: c"key", kind: ArgKind::Key },
                ArgDoc { name: c"seconds", kind: ArgKind::Integer },
            ],
        },
    },
    CommandSpec {
        name: c"goblin.zwindow",
        flags: c"write deny-oom",
        acl_categories: c"write sortedset slow",
        callback: server::entry_point::<zwindow::Zwindow>,
        docs: CommandDocs {
            summary: c"Admits member into a sliding window of limit members (evicting members at or below now - window), refreshes a holder, or rejects; re-arms the TTL.",
            complexity: c"O(log(N) + M) with N the members in the set and M the members evicted (at most about 1,024 per call).",
            since: c"0.1.0",
            arity: 6,
            key_access: KeyAccess::ReadUpdate,
            args: &[
                ArgDoc { name: c"key", kind: ArgKind::Key },
                ArgDoc { name: c"now", kind: ArgKind::Double },
                ArgDoc { name: c"window", kind: ArgKind::Double },
                ArgDoc { name: c"limit", kind: ArgKind::Integer },
                ArgDoc { name: c"member", kind: ArgKind::String },
            ],
        },
    },
    // A deletion: allowed under maxmemory like DEL, so a lock can always be released.
    CommandSpec {
        name: c"goblin.cad",
        flags: c"write fast",
        acl_categories: c"write fast",
        callback: server::entry_point::<cad::Cad>,
        docs: CommandDocs {
            summary: c"Deletes key if it is a string equal to value, or removes member value if it is a sorted set (releases a lock or a ZWINDOW lease).",
            complexity: c"O(1) for strings, O(log(N)) for a sorted set of N members.",
            since: c"0.1.0",
            arity: 3,
            key_access: KeyAccess::ReadDelete,
            args: &[
                ArgDoc { name: c"key", kind: ArgKind::Key },
                ArgDoc { name: c"value", kind: ArgKind::String },
            ],
        },
    },
];

/// What the server loads: `server::module` registers it in `RedisModule_OnLoad`.
pub(crate) static MODULE: server::ModuleSpec = server::ModuleSpec {
    name: c"goblin",
    version: 100,
    commands: COMMANDS,
    info: stats::report,
};

// The server's allocator in the module, so INFO memory and maxmemory see what Goblin
// allocates; the system one under `cargo test`, where there is no server to allocate from.
#[cfg(not(test))]
#[global_allocator]
static ALLOCATOR: redis_module::alloc::RedisAlloc = redis_module::alloc::RedisAlloc;
