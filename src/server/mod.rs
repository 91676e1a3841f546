//! The one room that talks to the server's raw module API. Every `unsafe` block in Goblin is
//! in this file; what it hands out are safe types that live no longer than one command call:
//! `Ctx` (the call), `Arg` (an argument), `Key` (an open key).
//!
//! The API is the same C ABI on Redis 7.0, Redis 8.2 and Valkey 9.1. Where they differ in
//! behaviour this wrapper takes the path that is safe on all three (see `Key::abs_expire`).

use std::ffi::{c_char, c_int, CStr, CString};
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::OnceLock;

use redis_module::raw;

use crate::error::CommandError;
use crate::stats::CommandStats;

/// Reads a server API function pointer. `register` refuses to load the module unless every
/// pointer named in `REQUIRED_APIS` is present, so a command never finds one missing.
macro_rules! api {
    ($name:ident) => {{
        // SAFETY: the pointers are written once by `RedisModule_Init`, before any command runs,
        // and only read afterwards, on the server's main thread.
        #[allow(unused_unsafe)]
        let function = unsafe { raw::$name };
        match function {
            Some(function) => function,
            None => panic!(concat!(stringify!($name), " is missing")),
        }
    }};
}

/// Reads a server API function pointer that older servers may lack.
macro_rules! optional_api {
    ($name:ident) => {{
        // SAFETY: as for `api!`.
        #[allow(unused_unsafe)]
        let function = unsafe { raw::$name };
        function
    }};
}

mod host;
mod module;
pub use host::host;
use module::LoadCtx;
pub use module::{unload_allowed, ModuleSpec};

/// `(name, present)` for each API the commands call.
fn required_apis() -> [(&'static str, bool); 35] {
    // SAFETY: reads of pointers written once at load time (see `api!`).
    unsafe {
        [
            ("CreateCommand", {
                let function = raw::RedisModule_CreateCommand;
                function.is_some()
            }),
            ("OpenKey", {
                let function = raw::RedisModule_OpenKey;
                function.is_some()
            }),
            ("CloseKey", {
                let function = raw::RedisModule_CloseKey;
                function.is_some()
            }),
            ("KeyType", {
                let function = raw::RedisModule_KeyType;
                function.is_some()
            }),
            ("ValueLength", {
                let function = raw::RedisModule_ValueLength;
                function.is_some()
            }),
            ("UnlinkKey", {
                let function = raw::RedisModule_UnlinkKey;
                function.is_some()
            }),
            ("StringDMA", {
                let function = raw::RedisModule_StringDMA;
                function.is_some()
            }),
            ("StringTruncate", {
                let function = raw::RedisModule_StringTruncate;
                function.is_some()
            }),
            ("GetAbsExpire", {
                let function = raw::RedisModule_GetAbsExpire;
                function.is_some()
            }),
            ("SetAbsExpire", {
                let function = raw::RedisModule_SetAbsExpire;
                function.is_some()
            }),
            ("ZsetAdd", {
                let function = raw::RedisModule_ZsetAdd;
                function.is_some()
            }),
            ("ZsetRem", {
                let function = raw::RedisModule_ZsetRem;
                function.is_some()
            }),
            ("ZsetScore", {
                let function = raw::RedisModule_ZsetScore;
                function.is_some()
            }),
            ("ZsetFirstInScoreRange", {
                let function = raw::RedisModule_ZsetFirstInScoreRange;
                function.is_some()
            }),
            ("ZsetRangeCurrentElement", {
                let function = raw::RedisModule_ZsetRangeCurrentElement;
                function.is_some()
            }),
            ("ZsetRangeNext", {
                let function = raw::RedisModule_ZsetRangeNext;
                function.is_some()
            }),
            ("ZsetLastInScoreRange", {
                let function = raw::RedisModule_ZsetLastInScoreRange;
                function.is_some()
            }),
            ("ZsetRangePrev", {
                let function = raw::RedisModule_ZsetRangePrev;
                function.is_some()
            }),
            ("ZsetRangeEndReached", {
                let function = raw::RedisModule_ZsetRangeEndReached;
                function.is_some()
            }),
            ("ZsetRangeStop", {
                let function = raw::RedisModule_ZsetRangeStop;
                function.is_some()
            }),
            ("FreeString", {
                let function = raw::RedisModule_FreeString;
                function.is_some()
            }),
            ("Replicate", {
                let function = raw::RedisModule_Replicate;
                function.is_some()
            }),
            ("NotifyKeyspaceEvent", {
                let function = raw::RedisModule_NotifyKeyspaceEvent;
                function.is_some()
            }),
            ("SignalModifiedKey", {
                let function = raw::RedisModule_SignalModifiedKey;
                function.is_some()
            }),
            ("Milliseconds", {
                let function = raw::RedisModule_Milliseconds;
                function.is_some()
            }),
            ("SetModuleOptions", {
                let function = raw::RedisModule_SetModuleOptions;
                function.is_some()
            }),
            ("StringPtrLen", {
                let function = raw::RedisModule_StringPtrLen;
                function.is_some()
            }),
            ("StringToLongLong", {
                let function = raw::RedisModule_StringToLongLong;
                function.is_some()
            }),
            ("StringToDouble", {
                let function = raw::RedisModule_StringToDouble;
                function.is_some()
            }),
            ("ReplyWithLongLong", {
                let function = raw::RedisModule_ReplyWithLongLong;
                function.is_some()
            }),
            ("ReplyWithError", {
                let function = raw::RedisModule_ReplyWithError;
                function.is_some()
            }),
            ("RegisterInfoFunc", {
                let function = raw::RedisModule_RegisterInfoFunc;
                function.is_some()
            }),
            ("InfoAddSection", {
                let function = raw::RedisModule_InfoAddSection;
                function.is_some()
            }),
            ("InfoAddFieldULongLong", {
                let function = raw::RedisModule_InfoAddFieldULongLong;
                function.is_some()
            }),
            ("Log", {
                let function = raw::RedisModule_Log;
                function.is_some()
            }),
        ]
    }
}

/// One command argument, borrowed from the server for the duration of the call.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct Arg<'call> {
    ptr: NonNull<raw::RedisModuleString>,
    _call: PhantomData<&'call ()>,
}

impl<'call> Arg<'call> {
    fn raw(self) -> *mut raw::RedisModuleString {
        self.ptr.as_ptr()
    }

    /// The argument's bytes (binary safe).
    pub fn as_bytes(self) -> &'call [u8] {
        let mut len = 0usize;
        // SAFETY: the server keeps argv alive until the command returns, and `'call` ends there.
        unsafe {
            let data = api!(RedisModule_StringPtrLen)(self.raw(), &mut len);
            if data.is_null() || len == 0 {
                return &[];
            }
            std::slice::from_raw_parts(data.cast::<u8>(), len)
        }
    }

    /// A 64-bit integer, by the server's own parser (the one INCRBY and EXPIRE use).
    pub fn to_i64(self) -> Option<i64> {
        let mut value = 0;
        // SAFETY: a live argument and a valid out pointer.
        let status = unsafe { api!(RedisModule_StringToLongLong)(self.raw(), &mut value) };
        (status == raw::REDISMODULE_OK as c_int).then_some(value)
    }

    /// A double, by the server's own parser (the one ZADD uses). May be infinite.
    pub fn to_f64(self) -> Option<f64> {
        let mut value = 0.0;
        // SAFETY: a live argument and a valid out pointer.
        let status = unsafe { api!(RedisModule_StringToDouble)(self.raw(), &mut value) };
        (status == raw::REDISMODULE_OK as c_int).then_some(value)
    }
}

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
    fn raw(&self) -> *mut raw::RedisModuleCtx {
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

    /// Opens `name` for reading and writing. Opening does not create the key.
    pub fn open_key<'call>(&'call self, name: Arg<'call>) -> Key<'call> {
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        // SAFETY: a live context and key name; a write-mode open never returns NULL.
        let ptr = unsafe { api!(RedisModule_OpenKey)(self.raw(), name.raw(), mode) };
        let ptr = NonNull::new(ptr.cast::<raw::RedisModuleKey>())
            .unwrap_or_else(|| panic!("RedisModule_OpenKey returned NULL in write mode"));
        Key {
            ctx: self,
            ptr,
            name,
        }
    }

    /// Appends one core command on `key` to the replication stream and the AOF. The server
    /// wraps all of one call's effects in MULTI/EXEC, so replicas apply them atomically.
    ///
    /// Every argument here costs an allocation in the server, so the key is passed as the
    /// client's own argument object (shared by reference count, not copied).
    pub fn replicate(&self, command: &CStr, key: Arg<'_>, args: &[&[u8]]) {
        let replicate = api!(RedisModule_Replicate);
        let (ctx, cmd, key) = (self.raw(), command.as_ptr(), key.raw());
        // An empty slice's pointer is dangling; the server reads 0 bytes from it, but hand it a
        // real one anyway.
        let b = |i: usize| match args[i] {
            [] => (c"".as_ptr(), 0),
            bytes => (bytes.as_ptr().cast::<c_char>(), bytes.len()),
        };
        // SAFETY: "s" takes a live RedisModuleString; each "b" a (pointer, length) pair that
        // lives across the call. The server copies or retains everything before returning.
        let status = unsafe {
            match args.len() {
                0 => replicate(ctx, cmd, c"s".as_ptr(), key),
                1 => replicate(ctx, cmd, c"sb".as_ptr(), key, b(0).0, b(0).1),
                2 => replicate(
                    ctx,
                    cmd,
                    c"sbb".as_ptr(),
                    key,
                    b(0).0,
                    b(0).1,
                    b(1).0,
                    b(1).1,
                ),
                3 => replicate(
                    ctx,
                    cmd,
                    c"sbbb".as_ptr(),
                    key,
                    b(0).0,
                    b(0).1,
                    b(1).0,
                    b(1).1,
                    b(2).0,
                    b(2).1,
                ),
                n => panic!("replicate takes a key and 0 to 3 arguments, got {n}"),
            }
        };
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
}

/// What a key holds, as far as Goblin cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Empty,
    String,
    SortedSet,
    Other,
}

/// What `Key::zadd` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zadded {
    /// A new member.
    Added,
    /// An existing member, at a new score.
    Moved,
    /// An existing member, already at that score.
    Unchanged,
}

/// A key open for writing; closed when dropped.
pub struct Key<'call> {
    ctx: &'call Ctx,
    ptr: NonNull<raw::RedisModuleKey>,
    name: Arg<'call>,
}

impl<'call> Key<'call> {
    fn raw(&self) -> *mut raw::RedisModuleKey {
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

    /// The bytes of a string key; `None` for any other kind. Valid until the next write.
    pub fn string(&self) -> Option<&[u8]> {
        if self.kind() != KeyKind::String {
            return None;
        }
        let mut len = 0usize;
        let mode = raw::REDISMODULE_READ as c_int;
        // SAFETY: an open string key; the slice borrows `self`, so no write can happen while
        // it is alive (DMA rule 1).
        unsafe {
            let data = api!(RedisModule_StringDMA)(self.raw(), &mut len, mode);
            if data.is_null() {
                return None;
            }
            if len == 0 {
                return Some(&[]);
            }
            Some(std::slice::from_raw_parts(data.cast::<u8>(), len))
        }
    }

    /// Makes the key a string holding `value`, in place: unlike `RedisModule_StringSet`, the
    /// key keeps its TTL, and a counter that grows a digit reuses its allocation.
    pub fn set_string(&mut self, value: &[u8]) {
        // SAFETY: an open write-mode key that is empty or a string (callers checked the kind);
        // DMA is re-obtained after the truncate, as the API requires, and `len` bounds the copy.
        unsafe {
            if api!(RedisModule_StringTruncate)(self.raw(), value.len())
                != raw::REDISMODULE_OK as c_int
            {
                panic!("RedisModule_StringTruncate refused a string key");
            }
            let mut len = 0usize;
            let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
            let data = api!(RedisModule_StringDMA)(self.raw(), &mut len, mode);
            if data.is_null() || len != value.len() {
                panic!(
                    "RedisModule_StringDMA gave {len} bytes for a {}-byte value",
                    value.len()
                );
            }
            ptr::copy_nonoverlapping(value.as_ptr(), data.cast::<u8>(), len);
        }
    }

    /// Arms the TTL at an absolute Unix time in milliseconds. The key must exist.
    /// (There is deliberately no reader of the expiry: Redis 8.2 crashes reading the expiry of
    /// a key that does not exist, and in-place writes make reading it unnecessary.)
    pub fn set_abs_expire(&mut self, at_ms: i64) {
        // SAFETY: an open write-mode key.
        let status = unsafe { api!(RedisModule_SetAbsExpire)(self.raw(), at_ms) };
        if status != raw::REDISMODULE_OK as c_int {
            panic!("RedisModule_SetAbsExpire refused {at_ms}");
        }
    }

    /// Deletes the key; the handle then reads as empty. Unlinked: a large value (a window
    /// deleted by `window <= 0`) is freed in the background where the server can, instead of
    /// blocking this call.
    pub fn delete(&mut self) {
        // SAFETY: an open write-mode key.
        unsafe {
            api!(RedisModule_UnlinkKey)(self.raw());
        }
    }

    /// The score of `member`, if the key is a sorted set holding it.
    pub fn score(&self, member: Arg<'_>) -> Option<f64> {
        let mut score = 0.0;
        // SAFETY: an open key, a live member string, a valid out pointer. Errors (no such
        // member, empty key, other type) come back as a status.
        let status = unsafe { api!(RedisModule_ZsetScore)(self.raw(), member.raw(), &mut score) };
        (status == raw::REDISMODULE_OK as c_int).then_some(score)
    }

    /// Adds `member` at `score`, or moves it there. Creates the sorted set if the key is empty.
    pub fn zadd(&mut self, score: f64, member: Arg<'_>) -> Zadded {
        let mut flags: c_int = 0;
        // SAFETY: an open write-mode key that is empty or a sorted set, a finite score.
        let status =
            unsafe { api!(RedisModule_ZsetAdd)(self.raw(), score, member.raw(), &mut flags) };
        if status != raw::REDISMODULE_OK as c_int {
            panic!("RedisModule_ZsetAdd refused score {score}");
        }
        if flags & raw::REDISMODULE_ZADD_ADDED as c_int != 0 {
            Zadded::Added
        } else if flags & raw::REDISMODULE_ZADD_UPDATED as c_int != 0 {
            Zadded::Moved
        } else {
            Zadded::Unchanged
        }
    }

    /// Removes `member`; returns whether it was there. A set emptied here is deleted by the
    /// server, as ZREM does.
    pub fn zrem(&mut self, member: Arg<'_>) -> bool {
        let mut deleted: c_int = 0;
        // SAFETY: an open write-mode key that is a sorted set, a live member string.
        unsafe {
            api!(RedisModule_ZsetRem)(self.raw(), member.raw(), &mut deleted);
        }
        deleted != 0
    }

    /// Removes members scored at or below `cutoff`, lowest first: all of them, or, once
    /// `budget` are gone, only the rest of the members tied at the last score removed (so that
    /// "everything at or below `through`" stays exactly what was removed, for the replicas).
    ///
    /// Walks the score index from its lowest member in chunks: one O(log n) seek per chunk of
    /// `EVICT_CHUNK`, then a step per member, never visiting a member inside the window. The set
    /// is only modified after the iterator stops. A set emptied here is deleted by the server,
    /// as ZREMRANGEBYSCORE does.
    pub fn evict_up_to(&mut self, cutoff: f64, budget: usize) -> Eviction {
        const EVICT_CHUNK: usize = 64;
        let mut eviction = Eviction {
            count: 0,
            through: cutoff,
            complete: true,
        };
        let mut upper = cutoff;
        loop {
            let mut chunk = [ptr::null_mut::<raw::RedisModuleString>(); EVICT_CHUNK];
            let mut taken = 0;
            let mut last_score = f64::NEG_INFINITY;
            // SAFETY: an open write-mode key; every element the iterator hands out is ours to
            // free, and the iterator is stopped before any removal.
            unsafe {
                let key = self.raw();
                if api!(RedisModule_ZsetFirstInScoreRange)(key, f64::NEG_INFINITY, upper, 0, 0)
                    != raw::REDISMODULE_OK as c_int
                {
                    break;
                }
                while taken < EVICT_CHUNK {
                    let member = api!(RedisModule_ZsetRangeCurrentElement)(key, &mut last_score);
                    if member.is_null() {
                        break;
                    }
                    chunk[taken] = member;
                    taken += 1;
                    if api!(RedisModule_ZsetRangeNext)(key) == 0 {
                        break;
                    }
                }
                api!(RedisModule_ZsetRangeStop)(key);
                for &member in &chunk[..taken] {
                    api!(RedisModule_ZsetRem)(key, member, ptr::null_mut());
                    api!(RedisModule_FreeString)(self.ctx.raw(), member);
                }
            }
            eviction.count += taken;
            if taken < EVICT_CHUNK {
                break;
            }
            if eviction.count >= budget && upper == cutoff {
                // Out of budget: finish only the members tied at the last score removed.
                upper = last_score;
                eviction.through = last_score;
            }
        }
        if upper != cutoff {
            eviction.complete = self.lowest_score().is_none_or(|lowest| lowest > cutoff);
        }
        eviction
    }

    /// The lowest score in the set, if any.
    fn lowest_score(&self) -> Option<f64> {
        let mut score = 0.0;
        // SAFETY: an open key; the element is freed at once and the iterator stopped.
        unsafe {
            let key = self.raw();
            let range = f64::NEG_INFINITY;
            if api!(RedisModule_ZsetFirstInScoreRange)(key, range, f64::INFINITY, 0, 0)
                != raw::REDISMODULE_OK as c_int
            {
                return None;
            }
            let member = api!(RedisModule_ZsetRangeCurrentElement)(key, &mut score);
            api!(RedisModule_ZsetRangeStop)(key);
            if member.is_null() {
                return None;
            }
            api!(RedisModule_FreeString)(self.ctx.raw(), member);
        }
        Some(score)
    }

    /// How many members score above `cutoff`, counting down from the highest and stopping at
    /// `cap`: O(log n + cap). For when old members are still in the set.
    pub fn count_above(&self, cutoff: f64, cap: usize) -> usize {
        let mut count = 0;
        // SAFETY: an open key; the iterator only steps (no elements are created) and is stopped.
        unsafe {
            let key = self.raw();
            if cap == 0
                || api!(RedisModule_ZsetLastInScoreRange)(key, cutoff, f64::INFINITY, 1, 0)
                    != raw::REDISMODULE_OK as c_int
            {
                return 0;
            }
            if api!(RedisModule_ZsetRangeEndReached)(key) == 0 {
                count = 1;
                while count < cap && api!(RedisModule_ZsetRangePrev)(key) != 0 {
                    count += 1;
                }
            }
            api!(RedisModule_ZsetRangeStop)(key);
        }
        count
    }
}

/// What `Key::evict_up_to` removed.
#[derive(Debug, Clone, Copy)]
pub struct Eviction {
    pub count: usize,
    /// Every member scored at or below this was removed (ties included).
    pub through: f64,
    /// Whether no member at or below the cutoff is left.
    pub complete: bool,
}

impl Drop for Key<'_> {
    fn drop(&mut self) {
        // SAFETY: the key was opened by `Ctx::open_key` and is closed exactly once.
        unsafe { api!(RedisModule_CloseKey)(self.raw()) }
    }
}

/// A Goblin command: its name and what it does with one call's arguments.
pub trait Command {
    /// The lower-case name, as registered and as quoted in error replies.
    const NAME: &'static str;
    /// Where its calls and errors are counted, for `INFO goblin`.
    const STATS: &'static CommandStats;
    /// Runs the command; the `Ok` value is the integer reply.
    fn run<'call>(ctx: &'call Ctx, args: &'call [Arg<'call>]) -> Result<i64, CommandError>;
}

/// The raw callback the server calls for command `C`.
pub type Callback =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

/// The server-facing entry point of command `C`: borrows argv in place (no copies, no
/// retains), runs the command, and turns its result into the reply. A panic is caught here
/// and answered as an error, because one unwinding out of a module takes the server down.
pub extern "C" fn entry_point<C: Command>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    let Some(ctx) = NonNull::new(ctx).map(|ptr| Ctx { ptr }) else {
        return raw::REDISMODULE_ERR as c_int;
    };
    let args: &[Arg<'_>] = match usize::try_from(argc) {
        // SAFETY: the server passes argc non-NULL strings that outlive this call; `Arg` is a
        // transparent non-null pointer, so the array can be viewed in place.
        Ok(len) if len > 0 && !argv.is_null() => unsafe {
            std::slice::from_raw_parts(argv.cast::<Arg<'_>>(), len)
        },
        _ => &[],
    };
    C::STATS.calls.add(1);
    let outcome = catch_unwind(AssertUnwindSafe(|| C::run(&ctx, args)));
    let reply = match outcome {
        Ok(reply) => reply,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            log_warning(&ctx, &format!("{}: internal error: {what}", C::NAME));
            Err(CommandError::Internal)
        }
    };
    if reply.is_err() {
        C::STATS.errors.add(1);
    }
    // SAFETY: replying once on a live context.
    unsafe {
        match reply {
            Ok(value) => api!(RedisModule_ReplyWithLongLong)(ctx.raw(), value),
            Err(error) => {
                let text = CString::new(error.reply_text().into_owned())
                    .unwrap_or_else(|_| CString::from(c"ERR goblin internal error"));
                api!(RedisModule_ReplyWithError)(ctx.raw(), text.as_ptr())
            }
        };
    }
    raw::REDISMODULE_OK as c_int
}

fn log_warning(ctx: &Ctx, message: &str) {
    log(ctx.raw(), c"warning", message);
}

/// Writes `message` to the server's log at `level`.
fn log(ctx: *mut raw::RedisModuleCtx, level: &CStr, message: &str) {
    let message = module::c_message(message);
    // SAFETY: a live context, a static level and format, a NUL-terminated message.
    unsafe {
        api!(RedisModule_Log)(ctx, level.as_ptr(), c"%s".as_ptr(), message.as_ptr());
    }
}

/// One row of the command table.
pub struct CommandSpec {
    pub name: &'static CStr,
    /// Command flags, as `RedisModule_CreateCommand` takes them.
    pub flags: &'static CStr,
    /// ACL categories, set only where the server has module ACL categories (Redis >= 7.2,
    /// Valkey); Redis 7.0 files module commands under `@module` alone.
    pub acl_categories: &'static CStr,
    pub callback: Callback,
    pub docs: CommandDocs,
}

/// What `COMMAND DOCS` and `COMMAND INFO` say, and what `redis-cli` shows as hints.
pub struct CommandDocs {
    pub summary: &'static CStr,
    pub complexity: &'static CStr,
    pub since: &'static CStr,
    /// Exact argument count, the command name included; the server checks it before the call.
    pub arity: i32,
    /// How the one key (argument 1) is used.
    pub key_access: KeyAccess,
    /// Every argument after the name, the key first.
    pub args: &'static [ArgDoc],
}

#[derive(Clone, Copy)]
pub enum KeyAccess {
    /// Reads the value and updates it (INCR's and ZADD's access). The server allows one of
    /// update, insert and delete per key spec, so ZWINDOW, which can also empty its set by
    /// eviction, declares its main access.
    ReadUpdate,
    /// Reads, and may delete (a release).
    ReadDelete,
}

pub struct ArgDoc {
    pub name: &'static CStr,
    pub kind: ArgKind,
}

#[derive(Clone, Copy)]
pub enum ArgKind {
    Key,
    String,
    Integer,
    Double,
}

impl KeyAccess {
    fn flags(self) -> u64 {
        let base = raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_ACCESS;
        u64::from(match self {
            KeyAccess::ReadUpdate => base | raw::REDISMODULE_CMD_KEY_UPDATE,
            KeyAccess::ReadDelete => base | raw::REDISMODULE_CMD_KEY_DELETE,
        })
    }
}

impl ArgKind {
    fn raw(self) -> raw::RedisModuleCommandArgType {
        match self {
            ArgKind::Key => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
            ArgKind::String => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
            ArgKind::Integer => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
            ArgKind::Double => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_DOUBLE,
        }
    }
}

/// The `INFO goblin` section being written.
pub struct InfoSection {
    ctx: *mut raw::RedisModuleInfoCtx,
}

impl InfoSection {
    pub fn field(&mut self, name: &CStr, value: u64) {
        // SAFETY: the info context is live for the duration of the callback.
        unsafe {
            api!(RedisModule_InfoAddFieldULongLong)(self.ctx, name.as_ptr(), value);
        }
    }
}

static INFO_REPORT: OnceLock<fn(&mut InfoSection)> = OnceLock::new();

extern "C" fn info_entry_point(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: c_int) {
    let Some(report) = INFO_REPORT.get() else {
        return;
    };
    // SAFETY: a live info context; an empty name makes the section `goblin` itself.
    unsafe {
        if api!(RedisModule_InfoAddSection)(ctx, c"".as_ptr()) != raw::REDISMODULE_OK as c_int {
            return; // this section was not asked for
        }
    }
    report(&mut InfoSection { ctx });
}

/// A zeroed C struct: the terminator of the server's key-spec and argument arrays.
fn zeroed<T>() -> T {
    // SAFETY: only used for plain C structs of pointers and integers, where all-zero is the
    // documented "end of array" value.
    unsafe { std::mem::zeroed() }
}

/// Sets summary, complexity, arity, key spec and argument specs, where the server has
/// `RedisModule_SetCommandInfo` (Redis 7.0 and later, Valkey). The server copies everything.
fn set_docs(context: &LoadCtx, command: *mut raw::RedisModuleCommand, spec: &CommandSpec) -> bool {
    let Some(set_info) = optional_api!(RedisModule_SetCommandInfo) else {
        return true;
    };
    let docs = &spec.docs;
    let version = raw::RedisModuleCommandInfoVersion {
        version: 1,
        sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
        sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
        sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
    };
    let mut key_spec: raw::RedisModuleCommandKeySpec = zeroed();
    key_spec.flags = docs.key_access.flags();
    key_spec.begin_search_type = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
    key_spec.bs.index = raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1 { pos: 1 };
    key_spec.find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
    key_spec.fk.range = raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 {
        lastkey: 0,
        keystep: 1,
        limit: 0,
    };
    let mut key_specs = vec![key_spec, zeroed()];
    let mut args: Vec<raw::RedisModuleCommandArg> = docs
        .args
        .iter()
        .map(|arg| {
            let mut raw_arg: raw::RedisModuleCommandArg = zeroed();
            raw_arg.name = arg.name.as_ptr();
            raw_arg.type_ = arg.kind.raw();
            raw_arg.key_spec_index = if matches!(arg.kind, ArgKind::Key) {
                0
            } else {
                -1
            };
            raw_arg
        })
        .collect();
    args.push(zeroed());
    let info = raw::RedisModuleCommandInfo {
        version: &version,
        summary: docs.summary.as_ptr(),
        complexity: docs.complexity.as_ptr(),
        since: docs.since.as_ptr(),
        history: ptr::null_mut(),
        tips: ptr::null(),
        arity: docs.arity,
        key_specs: key_specs.as_mut_ptr(),
        args: args.as_mut_ptr(),
    };
    // SAFETY: a command handle from GetCommand and an info struct whose arrays end in zeroed
    // entries; all of it outlives the call, and the server copies what it keeps.
    let ok = unsafe { set_info(command, &info) } == raw::REDISMODULE_OK as c_int;
    if !ok {
        context.log_warning(&format!(
            "goblin: the server refused the docs of {:?}",
            spec.name
        ));
    }
    ok
}

/// Whether the server knows each of `names` as a command. Replication names its effects by
/// command; under `rename-command` an effect would be written locally and then fail to
/// propagate, so the module refuses to load instead. Load time only: `COMMAND INFO` through
/// `RedisModule_Call` never runs in a command path.
fn missing_commands(ctx: *mut raw::RedisModuleCtx, names: &[&'static CStr]) -> Vec<&'static CStr> {
    let (Some(call), Some(reply_type), Some(element), Some(free)) = (
        optional_api!(RedisModule_Call),
        optional_api!(RedisModule_CallReplyType),
        optional_api!(RedisModule_CallReplyArrayElement),
        optional_api!(RedisModule_FreeCallReply),
    ) else {
        return Vec::new();
    };
    names
        .iter()
        .copied()
        .filter(|name| {
            // SAFETY: a load-time context; the reply is freed once, its element not separately
            // (elements belong to the reply).
            unsafe {
                let reply = call(
                    ctx,
                    c"COMMAND".as_ptr(),
                    c"cc".as_ptr(),
                    c"INFO".as_ptr(),
                    name.as_ptr(),
                );
                if reply.is_null() {
                    return false; // COMMAND itself unavailable: cannot tell, do not refuse
                }
                let first = element(reply, 0);
                let missing =
                    first.is_null() || reply_type(first) == raw::REDISMODULE_REPLY_NULL as c_int;
                free(reply);
                missing
            }
        })
        .collect()
}

/// The core commands Goblin's effects are replicated as.
const EFFECT_COMMANDS: [&CStr; 7] = [
    c"SET",
    c"INCR",
    c"DEL",
    c"ZADD",
    c"ZREM",
    c"ZREMRANGEBYSCORE",
    c"PEXPIREAT",
];

/// Registers the command table (one key at position 1 for every command) and `INFO goblin`.
fn register(
    context: &LoadCtx,
    commands: &[CommandSpec],
    info: fn(&mut InfoSection),
) -> Result<(), String> {
    let missing: Vec<&str> = required_apis()
        .iter()
        .filter(|(_, present)| !present)
        .map(|(name, _)| *name)
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "this server lacks module APIs Goblin needs: {}",
            missing.join(", ")
        ));
    }
    let ctx = context.ptr;
    let renamed = missing_commands(ctx, &EFFECT_COMMANDS);
    if !renamed.is_empty() {
        return Err(format!(
            "its writes replicate as {renamed:?}, which this server does not know (rename-command?)"
        ));
    }
    // SAFETY: load-time calls on the context the server handed to OnLoad.
    unsafe {
        // WATCH and client-side caching must see a write only when a command really writes,
        // not whenever it opens a key for writing (an error reply must leave no trace).
        api!(RedisModule_SetModuleOptions)(
            ctx,
            raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int,
        );
        for command in commands {
            let created = api!(RedisModule_CreateCommand)(
                ctx,
                command.name.as_ptr(),
                Some(command.callback),
                command.flags.as_ptr(),
                1,
                1,
                1,
            );
            if created != raw::REDISMODULE_OK as c_int {
                return Err(format!("could not create {:?}", command.name));
            }
            let Some(get_command) = optional_api!(RedisModule_GetCommand) else {
                continue;
            };
            let handle = get_command(ctx, command.name.as_ptr());
            if handle.is_null() {
                return Err(format!("no handle for {:?}", command.name));
            }
            if let Some(set_categories) = optional_api!(RedisModule_SetCommandACLCategories) {
                if set_categories(handle, command.acl_categories.as_ptr())
                    != raw::REDISMODULE_OK as c_int
                {
                    return Err(format!(
                        "could not set ACL categories {:?} on {:?}",
                        command.acl_categories, command.name
                    ));
                }
            }
            // Documentation is for people: a server that refuses it still gets the commands.
            set_docs(context, handle, command);
        }
        let _ = INFO_REPORT.set(info);
        if api!(RedisModule_RegisterInfoFunc)(ctx, Some(info_entry_point))
            != raw::REDISMODULE_OK as c_int
        {
            context.log_warning("goblin: could not register the INFO section");
        }
    }
    Ok(())
}
