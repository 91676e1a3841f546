//! A key open for one call: what it holds, its length, its expiry, its deletion. Strings and
//! sorted sets add their own operations (`strings.rs`, `zsets.rs`).

use std::ffi::c_int;
use std::ptr::NonNull;

use redis_module::raw;

use super::api::api;
use super::host::host;
use super::{options, Arg, Ctx};

/// What a key holds, as far as Goblin cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Empty,
    String,
    SortedSet,
    Other,
}

/// A key open for the call; closed when dropped, and then, where that is cheaper, signalled as
/// modified if it was written (`signal_modified`).
pub struct Key<'call> {
    pub(super) ctx: &'call Ctx,
    ptr: NonNull<raw::RedisModuleKey>,
    name: Arg<'call>,
    /// Written, to be signalled as the server closes it.
    modified: bool,
}

impl<'call> Key<'call> {
    /// Opens `name` in `mode`; `None` where the server returns no handle (a missing key
    /// opened for reading only).
    fn open(ctx: &'call Ctx, name: Arg<'call>, mode: u32) -> Option<Key<'call>> {
        // SAFETY: a live context and key name.
        let ptr = unsafe { api!(RedisModule_OpenKey)(ctx.raw(), name.raw(), mode as c_int) };
        NonNull::new(ptr.cast::<raw::RedisModuleKey>()).map(|ptr| Key {
            ctx,
            ptr,
            name,
            modified: false,
        })
    }

    /// Opens `name` for reading and writing; the server always returns a handle for that.
    pub(super) fn open_write(ctx: &'call Ctx, name: Arg<'call>) -> Key<'call> {
        Key::open(ctx, name, raw::REDISMODULE_READ | raw::REDISMODULE_WRITE)
            .unwrap_or_else(|| panic!("RedisModule_OpenKey returned NULL in write mode"))
    }

    /// Opens `name` for reading; `None` if it does not exist.
    pub(super) fn open_read(ctx: &'call Ctx, name: Arg<'call>) -> Option<Key<'call>> {
        Key::open(ctx, name, raw::REDISMODULE_READ).filter(|key| key.kind() != KeyKind::Empty)
    }

    pub(super) fn raw(&self) -> *mut raw::RedisModuleKey {
        self.ptr.as_ptr()
    }

    pub fn name(&self) -> Arg<'call> {
        self.name
    }

    pub fn kind(&self) -> KeyKind {
        // SAFETY: an open key.
        let kind = unsafe { api!(RedisModule_KeyType)(self.raw()) } as isize;
        match kind {
            raw::REDISMODULE_KEYTYPE_EMPTY => KeyKind::Empty,
            raw::REDISMODULE_KEYTYPE_STRING => KeyKind::String,
            raw::REDISMODULE_KEYTYPE_ZSET => KeyKind::SortedSet,
            _ => KeyKind::Other,
        }
    }

    /// String length, or the number of members of a sorted set; 0 for an empty key.
    pub fn len(&self) -> usize {
        // SAFETY: an open key.
        unsafe { api!(RedisModule_ValueLength)(self.raw()) }
    }

    /// Arms the TTL at an absolute Unix time in milliseconds. The key must exist. (The readers
    /// of the expiry, `expires_at_ms`, `ttl_ms` and `present_ttl_ms`, are for a key known to
    /// exist, or ask first: Redis 8.2 crashes reading the expiry of a key that does not.)
    pub fn set_abs_expire(&mut self, at_ms: i64) {
        // SAFETY: an open write-mode key.
        let status = unsafe { api!(RedisModule_SetAbsExpire)(self.raw(), at_ms) };
        if status != raw::REDISMODULE_OK as c_int {
            panic!("RedisModule_SetAbsExpire refused {at_ms}");
        }
    }

    /// Whether the key has a TTL. Only for a key that exists: Redis 8.2 crashes reading the
    /// expiry of one that does not.
    pub fn has_ttl(&self) -> bool {
        // SAFETY: an open key that exists (the caller's promise).
        let remaining = unsafe { api!(RedisModule_GetExpire)(self.raw()) };
        remaining != raw::REDISMODULE_NO_EXPIRE as i64
    }

    /// When the key expires, in Unix milliseconds: `None` for a key without a TTL. Only for a
    /// key that exists, as `has_ttl`.
    pub fn expires_at_ms(&self) -> Option<i64> {
        // SAFETY: an open key that exists (the caller's promise).
        let at_ms = unsafe { api!(RedisModule_GetAbsExpire)(self.raw()) };
        (at_ms != raw::REDISMODULE_NO_EXPIRE as i64).then_some(at_ms)
    }

    /// The time left before the key expires, in milliseconds: `None` for a key without a TTL,
    /// or none at all.
    pub fn ttl_ms(&self) -> Option<i64> {
        if self.kind() == KeyKind::Empty {
            return None;
        }
        self.present_ttl_ms()
    }

    /// `ttl_ms` of a key the caller has found present (its value read), without asking again.
    pub fn present_ttl_ms(&self) -> Option<i64> {
        // SAFETY: an open key that exists, as the caller found.
        let remaining = unsafe { api!(RedisModule_GetExpire)(self.raw()) };
        (remaining != raw::REDISMODULE_NO_EXPIRE as i64).then_some(remaining)
    }

    /// Removes the TTL; returns whether there was one.
    pub fn remove_ttl(&mut self) -> bool {
        if self.kind() == KeyKind::Empty || !self.has_ttl() {
            return false;
        }
        // SAFETY: an open write-mode key that exists.
        let status =
            unsafe { api!(RedisModule_SetExpire)(self.raw(), raw::REDISMODULE_NO_EXPIRE as i64) };
        status == raw::REDISMODULE_OK as c_int
    }

    /// Deletes the key as the server's DEL of one key does internally (freed in the background
    /// if `lazyfree-lazy-server-del` says so); the handle then reads as empty.
    pub fn delete(&mut self) {
        // SAFETY: an open write-mode key.
        unsafe {
            api!(RedisModule_DeleteKey)(self.raw());
        }
    }

    /// Unlinks the key: it is gone at once, and a large value (a window deleted by
    /// `window <= 0`) is freed in the background where the server can, instead of blocking this
    /// call. The handle then reads as empty.
    pub fn unlink(&mut self) {
        // SAFETY: an open write-mode key.
        unsafe {
            api!(RedisModule_UnlinkKey)(self.raw());
        }
    }

    /// Tells WATCH and client-side caching that the key changed (every write does). Where
    /// `RedisModule_SignalModifiedKey`, which takes a name, looks the key up again (Redis 8.10:
    /// about 400 instructions a write), the server signals it as it closes the key (`Drop`),
    /// with the key at hand; elsewhere at once, which costs the same as the signal at close
    /// without the two stores of the module's options around it.
    pub fn signal_modified(&mut self) {
        self.ctx.count_write();
        if host().signal_looks_the_key_up() {
            self.modified = true;
        } else {
            // SAFETY: a live context and key name.
            unsafe { api!(RedisModule_SignalModifiedKey)(self.ctx.raw(), self.name.raw()) };
        }
    }
}

impl Drop for Key<'_> {
    fn drop(&mut self) {
        let key = self.raw();
        // SAFETY: the key was opened by `Key::open` and is closed exactly once.
        let close = || unsafe { api!(RedisModule_CloseKey)(key) };
        if self.modified {
            options::signalling_on_close(self.ctx.raw(), close);
        } else {
            close();
        }
    }
}
