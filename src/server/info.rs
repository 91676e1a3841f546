//! The `INFO goblin` section: the server calls it, `stats::report` fills it.

use std::ffi::{c_int, CString};

use redis_module::raw;

use super::api::api;

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
    super::stats::report(&crate::MODULE, &mut InfoSection { ctx });
}
