//! Goblin: native rate-limit and lease commands for Redis and Valkey.
//!
//! This file is the command table, and the module's description it hands the server. Each
//! command lives in its own file under `commands/`, in its family's folder, in the one shape
//! `server/command.rs` defines; the algorithms are pure, in the `goblin-core` crate (`core/`);
//! `effects.rs` turns decisions into writes, replication and notifications; `server/` owns all
//! the server is told and every call into it, imports nothing of the rest, and is the only
//! place `unsafe` compiles.
#![deny(unsafe_code)]

mod commands;
mod effects;
mod error;
mod fencing;
mod grant;
mod server;
mod waiting;

use commands::fixed::{
    fwindow::GoblinFwindow, fwstats::GoblinFwstats, increx::GoblinIncrex, mfwindow::GoblinMfwindow,
};
use commands::locks::{block::GoblinBlock, cad::GoblinCad, extend::GoblinExtend, lock::GoblinLock};
use commands::native::{
    cl_throttle::ClThrottle, delex::Delex, delifeq::Delifeq, digest::Digest, increx::Increx,
};
use commands::rwlock::{
    brlock::GoblinBrlock, bwlock::GoblinBwlock, rlock::GoblinRlock, rwextend::GoblinRwextend,
    rwheld::GoblinRwheld, rwunlock::GoblinRwunlock, wlock::GoblinWlock,
};
use commands::sliding::{
    bzwindow::GoblinBzwindow, swindow::GoblinSwindow, swstats::GoblinSwstats,
    zwindow::GoblinZwindow, zwstats::GoblinZwstats,
};
use commands::throttles::{gcra::GoblinGcra, mgcra::GoblinMgcra};
use server::{registration, ModuleSpec, Registration};

/// Every command of the module, in the order `INFO goblin` lists them: Goblin's own, then
/// the stand-ins for native commands of newer servers, and for redis-cell's.
const COMMANDS: &[Registration] = &[
    registration::<GoblinIncrex>(),
    registration::<GoblinZwindow>(),
    registration::<GoblinCad>(),
    registration::<GoblinGcra>(),
    registration::<GoblinMgcra>(),
    registration::<GoblinZwstats>(),
    registration::<GoblinSwindow>(),
    registration::<GoblinSwstats>(),
    registration::<GoblinLock>(),
    registration::<GoblinBlock>(),
    registration::<GoblinExtend>(),
    registration::<GoblinBzwindow>(),
    registration::<GoblinFwindow>(),
    registration::<GoblinFwstats>(),
    registration::<GoblinMfwindow>(),
    registration::<GoblinRlock>(),
    registration::<GoblinWlock>(),
    registration::<GoblinBrlock>(),
    registration::<GoblinBwlock>(),
    registration::<GoblinRwextend>(),
    registration::<GoblinRwunlock>(),
    registration::<GoblinRwheld>(),
    registration::<Increx>(),
    registration::<Delex>(),
    registration::<Digest>(),
    registration::<Delifeq>(),
    registration::<ClThrottle>(),
];

/// What the server loads: handed to `server/`, which registers it in `RedisModule_OnLoad`.
static MODULE: ModuleSpec = ModuleSpec {
    name: c"goblin",
    version: module_version(env!("CARGO_PKG_VERSION")),
    commands: COMMANDS,
    replicates_as: effects::CoreCommand::NAMES,
    waiting: &waiting::LINES,
    gauges: &[
        ("waiting", waiting::waiters),
        ("waiting_keys", waiting::lines),
        ("fence_clock_behind", fencing::clock::clock_behind),
    ],
    settings: fencing::clock::SETTINGS,
    // Fencing tokens start a margin ahead of the clock as the server starts, as a replica is
    // promoted, and as the node takes over slots another served: the tokens of their keys were
    // minted on that node's clock, up to its margin ahead of it.
    loaded: fencing::clock::restart,
    promoted: fencing::clock::restart,
    took_over: fencing::clock::restart,
};

server::entry_points!(MODULE);

/// The version MODULE LIST shows for Cargo.toml's `major.minor.patch`: major * 10000 + minor *
/// 100 + patch (0.3.0 is 300). goblin_redis derives the version it needs from the same text
/// (tests/layout.rs holds them equal).
const fn module_version(version: &str) -> std::ffi::c_int {
    let bytes = version.as_bytes();
    let (mut total, mut part, mut scale, mut i) = (0, 0, 10000, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'.' => {
                total += part * scale;
                part = 0;
                scale /= 100;
            }
            digit @ b'0'..=b'9' => part = part * 10 + (digit - b'0') as std::ffi::c_int,
            _ => panic!("Cargo.toml's version is major.minor.patch"),
        }
        i += 1;
    }
    total + part * scale
}

// The server's allocator in the module, so INFO memory and maxmemory see what Goblin
// allocates; the system one under `cargo test`, where there is no server to allocate from.
#[cfg(not(test))]
#[global_allocator]
static ALLOCATOR: redis_module::alloc::RedisAlloc = redis_module::alloc::RedisAlloc;
