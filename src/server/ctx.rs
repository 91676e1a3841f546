//! The command call in progress: its clock, its key, and the channels a write is announced on
//! (replication and the AOF, keyspace notifications, the modified-key signal).

use std::ffi::{c_char, c_int, CStr};
use std::ptr::NonNull;

use redis_module::raw;

use super::api::{api, optional_api};
use super::host::host;
use super::keys::Key;
use super::Arg;

/// The most arguments after the key that one replicated command may have (`SET key value PXAT
/// ms` has three).
pub const MAX_REPLICATED_ARGS: usize = 8;

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
    /// replicas apply them atomically. Any command of up to `MAX_REPLICATED_ARGS` arguments
    /// after the key goes through this one path.
    ///
    /// Every argument here costs an allocation in the server, so the key is passed as the
    /// client's own argument object (shared by reference count, not copied), and each other
    /// argument as bytes the server copies (the `b` format: no object of ours to make and free).
    pub fn replicate(&self, command: &CStr, key: Arg<'_>, args: &[&[u8]]) {
        if args.len() > MAX_REPLICATED_ARGS {
            panic!(
                "replicate takes at most {MAX_REPLICATED_ARGS} arguments after the key, got {}",
                args.len()
            );
        }
        // `s` for the key, `b` (pointer, length) for each argument.
        let mut format = [b'b'; MAX_REPLICATED_ARGS + 2];
        format[0] = b's';
        format[args.len() + 1] = 0;
        let mut parts = [(c"".as_ptr(), 0usize); MAX_REPLICATED_ARGS];
        for (part, bytes) in parts.iter_mut().zip(args) {
            // An empty slice's pointer is dangling; the server reads 0 bytes from it, but hand
            // it a real one anyway.
            if !bytes.is_empty() {
                *part = (bytes.as_ptr().cast::<c_char>(), bytes.len());
            }
        }
        let (ctx, cmd, format) = (
            self.raw(),
            command.as_ptr(),
            format.as_ptr().cast::<c_char>(),
        );
        let replicate = api!(RedisModule_Replicate);
        // A variadic call takes its arguments at compile time: one call per count, each passing
        // exactly the pairs its format names.
        macro_rules! call {
            ($($count:literal => [$($i:literal)*]),* $(,)?) => {
                match args.len() {
                    $(
                        // SAFETY: "s" takes a live RedisModuleString; each "b" a (pointer,
                        // length) pair that lives across the call. The server copies or
                        // retains everything before returning.
                        $count => unsafe {
                            replicate(ctx, cmd, format, key.raw() $(, parts[$i].0, parts[$i].1)*)
                        },
                    )*
                    _ => unreachable!("checked above"),
                }
            };
        }
        let status = call! {
            0 => [],
            1 => [0],
            2 => [0 1],
            3 => [0 1 2],
            4 => [0 1 2 3],
            5 => [0 1 2 3 4],
            6 => [0 1 2 3 4 5],
            7 => [0 1 2 3 4 5 6],
            8 => [0 1 2 3 4 5 6 7],
        };
        if status != raw::REDISMODULE_OK as c_int {
            panic!("the server refused to replicate {command:?}");
        }
    }

    /// A string object holding `bytes`, made for this call and freed when dropped: a key name
    /// or a member the module made, where the server takes only its own strings.
    pub fn string(&self, bytes: &[u8]) -> OwnedString<'_> {
        let text = if bytes.is_empty() {
            c"".as_ptr()
        } else {
            bytes.as_ptr().cast::<c_char>()
        };
        // SAFETY: a live context and a byte range the server copies.
        let ptr = unsafe { api!(RedisModule_CreateString)(self.raw(), text, bytes.len()) };
        OwnedString {
            ctx: self,
            ptr: NonNull::new(ptr).unwrap_or_else(|| panic!("RedisModule_CreateString gave NULL")),
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

/// A string object of the module's own, freed when dropped.
pub struct OwnedString<'ctx> {
    ctx: &'ctx Ctx,
    ptr: NonNull<raw::RedisModuleString>,
}

impl OwnedString<'_> {
    /// The string, as an argument.
    pub fn arg(&self) -> Arg<'_> {
        // SAFETY: the string lives as long as `self`, which the argument borrows.
        unsafe { Arg::from_raw(self.ptr.as_ptr()) }
    }
}

impl Drop for OwnedString<'_> {
    fn drop(&mut self) {
        // SAFETY: made by `Ctx::string`, released exactly once.
        unsafe { api!(RedisModule_FreeString)(self.ctx.raw(), self.ptr.as_ptr()) }
    }
}
