//! The floor: a module built only for the benchmark (`scripts/instructions.sh`, `make bench`),
//! never loaded in production and never built by `make test`. Each command does exactly the
//! server-facing work of its Goblin counterpart for one allowed call of that command's
//! benchmark workload (the same key opens, the same reads and writes with the same value bytes
//! and expiry, the same replicated commands, keyspace events and reply), on the cheapest calls
//! the module API offers, and nothing else: no parsing beyond what the API forces, no decision
//! (the workload's constants and the least arithmetic stand in for what Goblin computes), no
//! checks. What it costs under callgrind is what any module pays for that job; what Goblin
//! costs above it is Goblin's own (docs/benchmark.md, "The floor").
//!
//! `api.rs` holds every call into the server, and the only `unsafe` of the crate.
#![deny(unsafe_code)]

mod api;
mod commands;
mod text;

use api::{registration, Registration};
use commands::*;

/// Every floor command, with the flags and key range of its counterpart.
const COMMANDS: &[Registration] = &[
    registration::<Increx>(c"floor.increx", c"write deny-oom fast", (1, 1, 1)),
    registration::<Fwindow>(c"floor.fwindow", c"write deny-oom fast", (1, 1, 1)),
    registration::<Zwindow>(c"floor.zwindow", c"write deny-oom", (1, 1, 1)),
    registration::<Bzwindow>(c"floor.bzwindow", c"write deny-oom", (1, 1, 1)),
    registration::<Swindow>(c"floor.swindow", c"write deny-oom fast", (1, 1, 1)),
    registration::<Gcra>(c"floor.gcra", c"write deny-oom fast", (1, 1, 1)),
    // One key per policy, every fourth argument from the second: a fixed range serves both
    // workloads (1 and 4 policies).
    registration::<Mgcra>(c"floor.mgcra", c"write deny-oom fast", (2, -1, 4)),
    registration::<Lock>(c"floor.lock", c"write deny-oom fast", (1, 1, 1)),
    registration::<Rlock>(c"floor.rlock", c"write deny-oom fast", (1, 1, 1)),
    registration::<Cad>(c"floor.cad", c"write fast", (1, 1, 1)),
    registration::<Park>(c"floor.park", c"write deny-oom", (1, 1, 1)),
    registration::<Handoff>(c"floor.handoff", c"write fast", (1, 1, 1)),
    registration::<Extend>(c"floor.extend", c"write deny-oom fast", (1, 1, 1)),
    registration::<StandInIncrex>(c"floor.standin.increx", c"write deny-oom fast", (1, 1, 1)),
    registration::<StandInDelex>(c"floor.standin.delex", c"write fast", (1, 1, 1)),
];
