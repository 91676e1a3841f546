//! The server settings the stand-ins follow at command time, known without a
//! `RedisModule_Call` in any command path: read at load, and read again when `CONFIG SET`
//! changes them (the config-change server event).

use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};

use redis_module::raw;

use super::probe::{call_element, Element};

/// `lazyfree-lazy-expire`: whether a key deleted because its expiry has passed goes as
/// `UNLINK` (yes) or `DEL` (no) to replicas and the AOF.
static LAZYFREE_LAZY_EXPIRE: AtomicBool = AtomicBool::new(false);

const LAZY_EXPIRE: &CStr = c"lazyfree-lazy-expire";

pub fn lazyfree_lazy_expire() -> bool {
    LAZYFREE_LAZY_EXPIRE.load(Ordering::Relaxed)
}

/// `CONFIG GET name` through the server, as `yes` / `no`. Never in a command path.
fn read_bool(ctx: *mut raw::RedisModuleCtx, name: &CStr) -> Option<bool> {
    match call_element(ctx, c"CONFIG", c"GET", name, 1)? {
        Element::Text(value) if value == b"yes" => Some(true),
        Element::Text(value) if value == b"no" => Some(false),
        _ => None,
    }
}

/// Reads the settings again; `false` if the server would not say (`CONFIG` renamed away),
/// and they stay as they were.
fn refresh(ctx: *mut raw::RedisModuleCtx) -> bool {
    let Some(lazy) = read_bool(ctx, LAZY_EXPIRE) else {
        return false;
    };
    LAZYFREE_LAZY_EXPIRE.store(lazy, Ordering::Relaxed);
    true
}

/// The server calls this after `CONFIG SET` changed settings.
unsafe extern "C" fn on_config_change(
    ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    data: *mut c_void,
) {
    if subevent != raw::REDISMODULE_SUBEVENT_CONFIG_CHANGE || data.is_null() {
        return;
    }
    // SAFETY: for this event the server passes a RedisModuleConfigChange whose names live for
    // the duration of the callback.
    let changed = unsafe {
        let change = &*data.cast::<raw::RedisModuleConfigChange>();
        (0..change.num_changes as usize).any(|i| {
            let name = *change.config_names.add(i);
            !name.is_null() && CStr::from_ptr(name) == LAZY_EXPIRE
        })
    };
    if changed {
        refresh(ctx);
    }
}

/// Reads the settings and follows their changes (load time). It must be the load's last step
/// that can fail: Redis 7.0 keeps a failed load's subscriptions after it unloads the library,
/// and its next CONFIG SET calls into freed code. (Unsubscribing on failure is no way out: on
/// 7.0, unsubscribing from an event never subscribed adds a listener with a NULL callback.)
pub(super) fn watch(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
    if !refresh(ctx) {
        // Only INCREX's stand-in follows the setting, and only in what it replicates for a key
        // whose new expiry has already passed: DEL or UNLINK, the same data either way.
        super::log(
            ctx,
            c"notice",
            "goblin: CONFIG GET lazyfree-lazy-expire is not answered (CONFIG renamed?): the \
             INCREX stand-in replicates a deletion at an expiry already past as DEL",
        );
    }
    if !super::subscribe(ctx, raw::REDISMODULE_EVENT_CONFIG, on_config_change) {
        return Err("could not subscribe to config changes".into());
    }
    Ok(())
}
