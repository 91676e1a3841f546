//! The `INFO goblin` section: the server calls it, `stats::report` fills it from the module
//! loaded, which is kept here.

use std::ffi::{c_int, CString};
use std::sync::OnceLock;

use redis_module::raw;

use super::api::api;
use super::ModuleSpec;

/// The `INFO goblin` section being written.
pub struct InfoSection {
    ctx: *mut raw::RedisModuleInfoCtx,
}

impl InfoSection {
    pub fn field(&mut self, name: &str, value: u64) {
        let Ok(name) = CString::new(name) else {
            return;
        };
        // SAFETY: the info context is live for the duration of the callback.
        unsafe {
            api!(RedisModule_InfoAddFieldULongLong)(self.ctx, name.as_ptr(), value);
        }
    }
}

/// Registered by `register`; the server calls it for `INFO goblin` and `INFO everything`.
pub(super) extern "C" fn info_entry_point(
    ctx: *mut raw::RedisModuleInfoCtx,
    _for_crash_report: c_int,
) {
    // SAFETY: a live info context; an empty name makes the section `goblin` itself.
    unsafe {
        if api!(RedisModule_InfoAddSection)(ctx, c"".as_ptr()) != raw::REDISMODULE_OK as c_int {
            return; // this section was not asked for
        }
    }
    if let Some(module) = loaded() {
        super::stats::report(module, &mut InfoSection { ctx });
    }
}

/// The module loaded, as `lib.rs` handed it to `on_load`: what the server's callbacks outside a
/// command read (this section, a promotion).
static LOADED: OnceLock<&'static ModuleSpec> = OnceLock::new();

/// Keeps `module` as the one loaded (`on_load`, once).
pub(super) fn remember(module: &'static ModuleSpec) {
    let _ = LOADED.set(module);
}

pub(super) fn loaded() -> Option<&'static ModuleSpec> {
    LOADED.get().copied()
}
