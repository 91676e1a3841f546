//! Goblin: native rate-limit and lease commands for Redis and Valkey.
//!
//! This file is the command table. Each command lives in its own file under `commands/`, in the
//! one shape `server/command.rs` defines; the algorithms are pure, in the `goblin-core` crate
//! (`core/`); `effects.rs` turns decisions into writes, replication and notifications;
//! `server/` owns all the server is told and every call into it, and is the only place
//! `unsafe` compiles.
#![deny(unsafe_code)]

mod commands;
mod effects;
mod error;
mod fencing;
mod server;
mod waiting;

use commands::block::GoblinBlock;
use commands::bzwindow::GoblinBzwindow;
use commands::cad::GoblinCad;
use commands::extend::GoblinExtend;
use commands::fwindow::GoblinFwindow;
use commands::fwstats::GoblinFwstats;
use commands::gcra::GoblinGcra;
use commands::increx::GoblinIncrex;
use commands::lock::GoblinLock;
use commands::mfwindow::GoblinMfwindow;
use commands::mgcra::GoblinMgcra;
use commands::native::cl_throttle::ClThrottle;
use commands::native::delex::Delex;
use commands::native::delifeq::Delifeq;
use commands::native::digest::Digest;
use commands::native::increx::Increx;
use commands::swindow::GoblinSwindow;
use commands::swstats::GoblinSwstats;
use commands::zwindow::GoblinZwindow;
use commands::zwstats::GoblinZwstats;
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
    registration::<Increx>(),
    registration::<Delex>(),
    registration::<Digest>(),
    registration::<Delifeq>(),
    registration::<ClThrottle>(),
];

/// What the server loads: `server::module` registers it in `RedisModule_OnLoad`.
pub(crate) static MODULE: ModuleSpec = ModuleSpec {
    name: c"goblin",
    version: module_version(env!("CARGO_PKG_VERSION")),
    commands: COMMANDS,
    replicates_as: effects::CoreCommand::NAMES,
    waiting: &waiting::LINES,
    gauges: &[
        ("waiting", waiting::waiters),
        ("waiting_keys", waiting::lines),
        ("fence_clock_behind", server::fence_clock_behind),
    ],
};

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
