//! What operators see in `INFO goblin`: calls and errors of every command in the table, and
//! each command's own outcomes (what ZWINDOW decided, what CAD released), so the rejection
//! rate of a limiter is visible without instrumenting every client.
//!
//! Commands run on the server's main thread; relaxed atomics cost the same as plain integers
//! there and keep the statics safe.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::server::{self, InfoSection, ModuleSpec};

pub struct Counter(AtomicU64);

impl Counter {
    pub const fn new() -> Self {
        Counter(AtomicU64::new(0))
    }

    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

pub struct CommandStats {
    pub calls: Counter,
    pub errors: Counter,
    /// Whether the command was registered (a stand-in is not, where the server has its own).
    pub registered: AtomicBool,
}

impl CommandStats {
    pub const fn new() -> Self {
        CommandStats {
            calls: Counter::new(),
            errors: Counter::new(),
            registered: AtomicBool::new(false),
        }
    }
}

/// The `INFO goblin` section, from the command table. The server prefixes each field with
/// `goblin_`.
pub fn report(module: &ModuleSpec, section: &mut InfoSection) {
    for command in module.commands {
        let spec = command.spec;
        if !spec.stats.registered.load(Ordering::Relaxed) {
            continue;
        }
        let prefix = spec.info_name;
        section.field(&format!("{prefix}_calls"), spec.stats.calls.get());
        section.field(&format!("{prefix}_errors"), spec.stats.errors.get());
        for (outcome, counter) in spec.outcomes {
            section.field(&format!("{prefix}_{outcome}"), counter.get());
        }
    }
    for (name, read) in module.gauges {
        section.field(name, read());
    }
    // 1 if the module was loaded with `allow-unload`.
    section.field("unload_allowed", u64::from(server::unload_allowed()));
}
