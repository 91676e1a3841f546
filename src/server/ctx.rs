//! The command call in progress: its clock, its key, and the channels a write is announced on
//! (replication and the AOF, keyspace notifications, the modified-key signal).

use std::ffi::{c_char, c_int, CStr};
use std::ptr::{self, NonNull};

use redis_module::raw;

use super::api::{api, optional_api};
use super::host::host;
use super::keys::Key;
use super::Arg;

/// The most arguments, the key included, that one replicated command may have.
pub const MAX_REPLICATED_ARGS: usize = 16;

/// Keyspace event classes used by Goblin's notifications.
#[derive(Clone, Copy)]
pub enum EventClass {
    Generic,
    /// `n`: a key was created.
    New,
    /// `x`: a key expired.
    Expired,
    String,
    SortedSet,
}

/// The command call in progress.
pub struct Ctx {
    ptr: NonNull<raw::RedisModuleCtx>,
}

impl Ctx {
    pub(super) fn new(ptr: NonNull<raw::RedisModuleCtx>) -> Ctx {
        Ctx { ptr }
    }

    pub(super) fn raw(&self) -> *mut raw::RedisModuleCtx {
        self.ptr.as_ptr()
    }

    /// The server's time in milliseconds, as EXPIRE would take it in this same call.
    ///
    /// Redis 7.2+ and Valkey take one snapshot of the clock when the outermost command starts
    /// (`call()` updates the cached time and `cmd_time_snapshot` from it together), and every
    /// EXPIRE inside that MULTI, script or function counts from it. The cached time is that
    /// snapshot in microseconds. Redis 7.0 has neither, and its EXPIRE reads the wall clock.
    pub fn now_ms(&self) -> i64 {
        match optional_api!(RedisModule_CachedMicroseconds) {
            // SAFETY: no arguments; returns the server's cached time.
            Some(cached_us) => (unsafe { cached_us() }) / 1000,
            // SAFETY: no arguments; returns the server's clock.
            None => unsafe { api!(RedisModule_Milliseconds)() },
        }
    }

    /// Opens `name` for reading and writing, as the server's writing commands look their key
    /// up (no hit or miss counted). Opening does not create the key.
    pub fn open_key<'call>(&'call self, name: Arg<'call>) -> Key<'call> {
        Key::open_write(self, name)
    }

    /// Opens `name` for reading, as the server's reading commands look their key up: a hit or
    /// a miss is counted, and a miss fires `keymiss`. `None` for a missing key.
    pub fn read_key<'call>(&'call self, name: Arg<'call>) -> Option<Key<'call>> {
        Key::open_read(self, name)
    }

    /// Appends one core command on `key` to the replication stream and the AOF (see
    /// `effects::Effect`). The server wraps all of one call's effects in MULTI/EXEC, so
    /// replicas apply them atomically. Any command of up to `MAX_REPLICATED_ARGS` arguments,
    /// the key included, goes through this one path.
    ///
    /// The key is passed as the client's own argument object (shared by reference count, not
    /// copied); each other argument becomes a string object, as the server's `b` format would
    /// make it, freed once the server has taken its own reference.
    pub fn replicate(&self, command: &CStr, key: Arg<'_>, args: &[&[u8]]) {
        let count = args.len() + 1;
        if count > MAX_REPLICATED_ARGS {
            panic!("replicate takes at most {MAX_REPLICATED_ARGS} arguments, got {count}");
        }
        let ctx = self.raw();
        let mut argv = [ptr::null_mut::<raw::RedisModuleString>(); MAX_REPLICATED_ARGS];
        argv[0] = key.raw();
        for (slot, bytes) in argv[1..].iter_mut().zip(args) {
            // An empty slice's pointer is dangling; the server copies 0 bytes from it, but hand
            // it a real one anyway.
            let text = if bytes.is_empty() {
                c"".as_ptr()
            } else {
                bytes.as_ptr().cast()
            };
            // SAFETY: a live context and a byte range that lives across the call; the server
            // copies it.
            *slot = unsafe { api!(RedisModule_CreateString)(ctx, text, bytes.len()) };
        }
        // `s` for each argument: the server reads exactly `count` of the slots.
        let mut format = [b's'; MAX_REPLICATED_ARGS + 1];
        format[count] = 0;
        let a = &argv;
        // SAFETY: the format names `count` live string objects, the first `count` slots; the
        // slots after them are passed and never read (a variadic function may leave arguments
        // unread). The server takes its own references before returning.
        #[rustfmt::skip]
        let status = unsafe {
            api!(RedisModule_Replicate)(
                ctx, command.as_ptr(), format.as_ptr().cast::<c_char>(),
                a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15],
            )
        };
        for &created in &argv[1..count] {
            // SAFETY: each was created above, and is released exactly once.
            unsafe { api!(RedisModule_FreeString)(ctx, created) };
        }
        if status != raw::REDISMODULE_OK as c_int {
            panic!("the server refused to replicate {command:?}");
        }
    }

    /// Fires a keyspace notification for `key`.
    pub fn notify(&self, class: EventClass, event: &CStr, key: Arg<'_>) {
        let class = match class {
            EventClass::Generic => raw::REDISMODULE_NOTIFY_GENERIC,
            EventClass::New => raw::REDISMODULE_NOTIFY_NEW,
            EventClass::Expired => raw::REDISMODULE_NOTIFY_EXPIRED,
            EventClass::String => raw::REDISMODULE_NOTIFY_STRING,
            EventClass::SortedSet => raw::REDISMODULE_NOTIFY_ZSET,
        };
        // SAFETY: live context, static event name, live key name.
        unsafe {
            api!(RedisModule_NotifyKeyspaceEvent)(self.raw(), class, event.as_ptr(), key.raw());
        }
    }

    /// Fires what EXPIRE with a time in the past fires for the key it deletes: `expired` on
    /// Valkey 8.1 and later, `del` elsewhere.
    pub fn notify_expired_at_once(&self, key: Arg<'_>) {
        if host().expire_in_the_past_fires_expired() {
            self.notify(EventClass::Expired, c"expired", key);
        } else {
            self.notify(EventClass::Generic, c"del", key);
        }
    }

    /// Tells WATCH and client-side caching that `key` changed.
    pub fn signal_modified(&self, key: Arg<'_>) {
        // SAFETY: live context and key name.
        unsafe {
            api!(RedisModule_SignalModifiedKey)(self.raw(), key.raw());
        }
    }

    pub(super) fn log_warning(&self, message: &str) {
        super::log(self.raw(), c"warning", message);
    }
}
