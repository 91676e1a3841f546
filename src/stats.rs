//! What operators see in `INFO goblin`: calls and errors per command, and what ZWINDOW decided,
//! so the rejection rate of a limiter is visible without instrumenting every client.
//!
//! Commands run on the server's main thread; relaxed atomics cost the same as plain integers
//! there and keep the statics safe.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::server::{self, InfoSection};

pub struct Counter(AtomicU64);

impl Counter {
    const fn new() -> Self {
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
}

impl CommandStats {
    const fn new() -> Self {
        CommandStats {
            calls: Counter::new(),
            errors: Counter::new(),
        }
    }
}

pub static INCREX: CommandStats = CommandStats::new();
pub static ZWINDOW: CommandStats = CommandStats::new();
pub static CAD: CommandStats = CommandStats::new();

/// ZWINDOW outcomes: newcomers admitted, holders refreshed, newcomers rejected.
pub static ADMITTED: Counter = Counter::new();
pub static REFRESHED: Counter = Counter::new();
pub static REJECTED: Counter = Counter::new();
/// Members that left a window, over all ZWINDOW calls.
pub static EVICTED: Counter = Counter::new();
/// CAD calls that released a lock or a member.
pub static RELEASED: Counter = Counter::new();

/// The `INFO goblin` section. The server prefixes each field with `goblin_`.
pub fn report(section: &mut InfoSection) {
    section.field(c"increx_calls", INCREX.calls.get());
    section.field(c"increx_errors", INCREX.errors.get());
    section.field(c"zwindow_calls", ZWINDOW.calls.get());
    section.field(c"zwindow_errors", ZWINDOW.errors.get());
    section.field(c"zwindow_admitted", ADMITTED.get());
    section.field(c"zwindow_refreshed", REFRESHED.get());
    section.field(c"zwindow_rejected", REJECTED.get());
    section.field(c"zwindow_evicted", EVICTED.get());
    section.field(c"cad_calls", CAD.calls.get());
    section.field(c"cad_errors", CAD.errors.get());
    section.field(c"cad_released", RELEASED.get());
    // 1 if the module was loaded with `allow-unload`.
    section.field(c"unload_allowed", u64::from(server::unload_allowed()));
}
