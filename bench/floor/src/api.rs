//! The floor's one room of `unsafe`: every call into the server's module API, each a thin,
//! inlined wrapper around one function pointer, so that what the floor costs is the API's own
//! work and not a layer's. The crate denies `unsafe_code` everywhere else (tests/layout.rs
//! holds the boundary), as Goblin keeps its own in `src/server/`. The floor does not go through
//! Goblin's wrapper: that wrapper's cost is part of what the floor is measured against.
//!
//! Also here: `RedisModule_OnLoad` (a `no_mangle` function is `unsafe_code`) and the entry
//! point the server calls for each command, which views `argv` in place and catches a panic,
//! so that nothing a client sends can take the server down.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_long, CStr};
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};

use redis_module::raw;

/// A function of the server's API. The load checks that every one the floor calls is there.
macro_rules! api {
    ($name:ident) => {{
        // SAFETY: the pointers are written once by `RedisModule_Init`, before any command
        // runs, and only read afterwards, on the server's main thread.
        #[allow(unused_unsafe)]
        let function = unsafe { raw::$name };
        match function {
            Some(function) => function,
            None => panic!(concat!(stringify!($name), " is missing")),
        }
    }};
}

/// Whether every one of these functions is there.
macro_rules! present {
    ($($name:ident),* $(,)?) => {{
        let mut all = true;
        $(
            // SAFETY: a read of a pointer `RedisModule_Init` wrote.
            let function = unsafe { raw::$name };
            all &= function.is_some();
        )*
        all
    }};
}

/// What a command replies instead, on an input the floor is not made for.
pub type Refusal = &'static CStr;

/// The call in progress.
#[derive(Clone, Copy)]
pub struct Ctx<'c> {
    ptr: NonNull<raw::RedisModuleCtx>,
    _call: PhantomData<&'c ()>,
}

/// A string of the server's (an argument), alive for the call.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct Str<'c> {
    ptr: NonNull<raw::RedisModuleString>,
    _call: PhantomData<&'c ()>,
}

/// A key open for the call; closed when dropped, which signals it as modified if it was opened
/// for writing (the server's implicit signal: the floor never writes and then refuses).
pub struct Key<'c> {
    ptr: NonNull<raw::RedisModuleKey>,
    _call: PhantomData<&'c ()>,
}

/// A client blocked on its key until a hand-off wakes it (`Ctx::park`, `Parked::wake`), as
/// GOBLIN.BLOCK's waiter is.
pub struct Parked(NonNull<raw::RedisModuleBlockedClient>);

// SAFETY: a handle is only used on the server's main thread; the floor keeps it in a static
// behind a mutex.
unsafe impl Send for Parked {}

/// A member the sorted-set iterator handed out, freed when dropped.
pub struct Member<'c> {
    ctx: Ctx<'c>,
    ptr: NonNull<raw::RedisModuleString>,
}

/// Keyspace event classes.
#[derive(Clone, Copy)]
pub enum Class {
    Generic,
    String,
    SortedSet,
}

/// A word of a replicated command, made once at load as a string of the module's own: the
/// server takes it by reference count (the `s` format), with no allocation per call, where
/// bytes (`b`) would be copied into a new string object on every call.
#[derive(Clone, Copy)]
pub enum Word {
    Pxat,
    Keepttl,
    MinusInf,
}

static WORDS: [AtomicPtr<raw::RedisModuleString>; 3] = [
    AtomicPtr::new(ptr::null_mut()),
    AtomicPtr::new(ptr::null_mut()),
    AtomicPtr::new(ptr::null_mut()),
];
const WORD_TEXT: [&CStr; 3] = [c"PXAT", c"KEEPTTL", c"-inf"];

impl Word {
    #[inline]
    fn raw(self) -> *mut raw::RedisModuleString {
        WORDS[self as usize].load(Ordering::Relaxed)
    }
}

/// A replicated value: a string of the server's, by reference count (`s`), or bytes the
/// server copies into a new string object (`b`).
#[derive(Clone, Copy)]
pub enum Value<'a> {
    Str(Str<'a>),
    Bytes(&'a [u8]),
}

impl<'c> Str<'c> {
    #[inline]
    pub fn bytes(self) -> &'c [u8] {
        let mut len = 0usize;
        // SAFETY: a live string of the call; the slice lives no longer than the call.
        unsafe {
            let data = api!(RedisModule_StringPtrLen)(self.ptr.as_ptr(), &mut len);
            if data.is_null() || len == 0 {
                return &[];
            }
            std::slice::from_raw_parts(data.cast::<u8>(), len)
        }
    }

    /// A double, by the server's parser (ZADD's).
    #[inline]
    pub fn double(self) -> Option<f64> {
        let mut value = 0.0;
        // SAFETY: a live string and a valid out pointer.
        let status = unsafe { api!(RedisModule_StringToDouble)(self.ptr.as_ptr(), &mut value) };
        (status == raw::REDISMODULE_OK as c_int).then_some(value)
    }
}

impl<'c> Ctx<'c> {
    /// The server's command-time clock in milliseconds (Redis 7.0: its wall clock), as EXPIRE
    /// counts from it.
    #[inline]
    pub fn now_ms(self) -> i64 {
        // SAFETY: no arguments.
        unsafe {
            match raw::RedisModule_CachedMicroseconds {
                Some(cached_us) => cached_us() / 1000,
                None => api!(RedisModule_Milliseconds)(),
            }
        }
    }

    /// Opens `name` for reading and writing (a handle even for a missing key).
    #[inline]
    pub fn open(self, name: Str<'c>) -> Result<Key<'c>, Refusal> {
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        // SAFETY: a live context and key name.
        let ptr = unsafe { api!(RedisModule_OpenKey)(self.ptr.as_ptr(), name.ptr.as_ptr(), mode) };
        NonNull::new(ptr.cast::<raw::RedisModuleKey>())
            .map(|ptr| Key {
                ptr,
                _call: PhantomData,
            })
            .ok_or(c"ERR floor: no key handle")
    }

    /// Opens `name` for reading, as GET looks its key up (a hit or a miss counted); `None` for
    /// a missing key.
    #[inline]
    pub fn open_read(self, name: Str<'c>) -> Option<Key<'c>> {
        let mode = raw::REDISMODULE_READ as c_int;
        // SAFETY: a live context and key name.
        let ptr = unsafe { api!(RedisModule_OpenKey)(self.ptr.as_ptr(), name.ptr.as_ptr(), mode) };
        NonNull::new(ptr.cast::<raw::RedisModuleKey>()).map(|ptr| Key {
            ptr,
            _call: PhantomData,
        })
    }

    /// Blocks the calling client on `key` (for ever) until it is woken by its handle, as
    /// Goblin blocks a waiter (`RedisModule_BlockClientOnKeys`); `None` if the server would
    /// not block it.
    pub fn park(self, key: Str<'c>) -> Option<Parked> {
        let mut keys = [key.ptr.as_ptr()];
        // SAFETY: a live command context; the key array lives across the call, which copies
        // it; the callbacks live as long as the module.
        let blocked = unsafe {
            api!(RedisModule_BlockClientOnKeys)(
                self.ptr.as_ptr(),
                Some(parked_reply),
                Some(parked_woken),
                None,
                0,
                keys.as_mut_ptr(),
                1,
                ptr::null_mut(),
            )
        };
        let blocked = NonNull::new(blocked)?;
        // SAFETY: a live blocked-client handle; the callback lives as long as the module.
        unsafe { api!(RedisModule_SetDisconnectCallback)(blocked.as_ptr(), Some(parked_gone)) };
        Some(Parked(blocked))
    }

    #[inline]
    pub fn notify(self, class: Class, event: &CStr, key: Str<'c>) {
        let class = match class {
            Class::Generic => raw::REDISMODULE_NOTIFY_GENERIC,
            Class::String => raw::REDISMODULE_NOTIFY_STRING,
            Class::SortedSet => raw::REDISMODULE_NOTIFY_ZSET,
        };
        // SAFETY: a live context, a static event name, a live key name.
        unsafe {
            api!(RedisModule_NotifyKeyspaceEvent)(
                self.ptr.as_ptr(),
                class,
                event.as_ptr(),
                key.ptr.as_ptr(),
            );
        }
    }

    /// `command key` to the replication stream and the AOF (`INCR`, `DEL`). Each replicated
    /// shape has its own call with its own literal format: no format is built per call.
    #[inline]
    pub fn replicate_key(self, command: &CStr, key: Str<'c>) -> Result<(), Refusal> {
        // SAFETY: the format names the one string passed after it, which is live.
        let status = unsafe {
            api!(RedisModule_Replicate)(
                self.ptr.as_ptr(),
                command.as_ptr(),
                c"s".as_ptr(),
                key.ptr.as_ptr(),
            )
        };
        replicated(status)
    }

    /// `SET key value PXAT at`.
    #[inline]
    pub fn replicate_set_pxat(
        self,
        key: Str<'c>,
        value: Value<'_>,
        at: &[u8],
    ) -> Result<(), Refusal> {
        let (ctx, set, key, pxat) = (
            self.ptr.as_ptr(),
            c"SET".as_ptr(),
            key.ptr.as_ptr(),
            Word::Pxat.raw(),
        );
        let (at, at_len) = (at.as_ptr().cast::<c_char>(), at.len());
        // SAFETY: each format names exactly the arguments passed after it; every string is
        // live and every buffer lives across the call, which copies or retains what it keeps.
        let status = unsafe {
            match value {
                Value::Str(value) => api!(RedisModule_Replicate)(
                    ctx,
                    set,
                    c"sssb".as_ptr(),
                    key,
                    value.ptr.as_ptr(),
                    pxat,
                    at,
                    at_len,
                ),
                Value::Bytes(value) => api!(RedisModule_Replicate)(
                    ctx,
                    set,
                    c"sbsb".as_ptr(),
                    key,
                    value.as_ptr().cast::<c_char>(),
                    value.len(),
                    pxat,
                    at,
                    at_len,
                ),
            }
        };
        replicated(status)
    }

    /// `SET key value KEEPTTL`.
    #[inline]
    pub fn replicate_set_keepttl(self, key: Str<'c>, value: &[u8]) -> Result<(), Refusal> {
        // SAFETY: as `replicate_set_pxat`.
        let status = unsafe {
            api!(RedisModule_Replicate)(
                self.ptr.as_ptr(),
                c"SET".as_ptr(),
                c"sbs".as_ptr(),
                key.ptr.as_ptr(),
                value.as_ptr().cast::<c_char>(),
                value.len(),
                Word::Keepttl.raw(),
            )
        };
        replicated(status)
    }

    /// `PEXPIREAT key at`.
    #[inline]
    pub fn replicate_pexpireat(self, key: Str<'c>, at: &[u8]) -> Result<(), Refusal> {
        // SAFETY: as `replicate_set_pxat`.
        let status = unsafe {
            api!(RedisModule_Replicate)(
                self.ptr.as_ptr(),
                c"PEXPIREAT".as_ptr(),
                c"sb".as_ptr(),
                key.ptr.as_ptr(),
                at.as_ptr().cast::<c_char>(),
                at.len(),
            )
        };
        replicated(status)
    }

    /// `ZADD key score member`, both the client's own strings.
    #[inline]
    pub fn replicate_zadd(
        self,
        key: Str<'c>,
        score: Str<'c>,
        member: Str<'c>,
    ) -> Result<(), Refusal> {
        // SAFETY: as `replicate_set_pxat`.
        let status = unsafe {
            api!(RedisModule_Replicate)(
                self.ptr.as_ptr(),
                c"ZADD".as_ptr(),
                c"sss".as_ptr(),
                key.ptr.as_ptr(),
                score.ptr.as_ptr(),
                member.ptr.as_ptr(),
            )
        };
        replicated(status)
    }

    /// `ZADD key score member`, the score as bytes the server copies (a computed one).
    #[inline]
    pub fn replicate_zadd_at(
        self,
        key: Str<'c>,
        score: &[u8],
        member: Str<'c>,
    ) -> Result<(), Refusal> {
        // SAFETY: as `replicate_set_pxat`.
        let status = unsafe {
            api!(RedisModule_Replicate)(
                self.ptr.as_ptr(),
                c"ZADD".as_ptr(),
                c"sbs".as_ptr(),
                key.ptr.as_ptr(),
                score.as_ptr().cast::<c_char>(),
                score.len(),
                member.ptr.as_ptr(),
            )
        };
        replicated(status)
    }

    /// `ZREMRANGEBYSCORE key -inf through`.
    #[inline]
    pub fn replicate_zremrangebyscore(self, key: Str<'c>, through: &[u8]) -> Result<(), Refusal> {
        // SAFETY: as `replicate_set_pxat`.
        let status = unsafe {
            api!(RedisModule_Replicate)(
                self.ptr.as_ptr(),
                c"ZREMRANGEBYSCORE".as_ptr(),
                c"ssb".as_ptr(),
                key.ptr.as_ptr(),
                Word::MinusInf.raw(),
                through.as_ptr().cast::<c_char>(),
                through.len(),
            )
        };
        replicated(status)
    }

    #[inline]
    pub fn reply_int(self, value: i64) {
        // SAFETY: a live context.
        unsafe {
            api!(RedisModule_ReplyWithLongLong)(self.ptr.as_ptr(), value);
        }
    }

    /// An array of integers.
    #[inline]
    pub fn reply_ints(self, values: &[i64]) {
        self.reply_array(values.len());
        for &value in values {
            self.reply_int(value);
        }
    }

    /// The length of an array whose elements follow.
    #[inline]
    pub fn reply_array(self, len: usize) {
        // SAFETY: a live context.
        unsafe {
            api!(RedisModule_ReplyWithArray)(self.ptr.as_ptr(), len as c_long);
        }
    }

    #[inline]
    pub fn reply_ok(self) {
        // SAFETY: a live context, a static text.
        unsafe {
            api!(RedisModule_ReplyWithSimpleString)(self.ptr.as_ptr(), c"OK".as_ptr());
        }
    }

    fn reply_error(self, text: &CStr) {
        // SAFETY: a live context, a NUL-terminated text.
        unsafe {
            api!(RedisModule_ReplyWithError)(self.ptr.as_ptr(), text.as_ptr());
        }
    }
}

/// What `RedisModule_Replicate` said.
#[inline]
fn replicated(status: c_int) -> Result<(), Refusal> {
    if status == raw::REDISMODULE_OK as c_int {
        Ok(())
    } else {
        Err(c"ERR floor: the server refused to replicate")
    }
}

impl<'c> Key<'c> {
    /// The string's bytes, for reading and writing in place (empty for a missing key);
    /// `None` for a key of another type. The server makes a compact string a plain one first.
    #[inline]
    pub fn string_rw(&mut self) -> Option<&mut [u8]> {
        let mut len = 0usize;
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        // SAFETY: an open key; the slice borrows the key mutably, so no other call on it can
        // happen while the slice lives (DMA rule 1). A missing key's pointer is a literal the
        // slice never touches (its length is 0).
        unsafe {
            let data = api!(RedisModule_StringDMA)(self.ptr.as_ptr(), &mut len, mode);
            if data.is_null() {
                return None;
            }
            if len == 0 {
                return Some(&mut []);
            }
            Some(std::slice::from_raw_parts_mut(data.cast::<u8>(), len))
        }
    }

    /// The string's bytes, for reading (empty for a missing key); `None` for another type.
    #[inline]
    pub fn string(&self) -> Option<&[u8]> {
        let mut len = 0usize;
        let mode = raw::REDISMODULE_READ as c_int;
        // SAFETY: as `string_rw`, read only.
        unsafe {
            let data = api!(RedisModule_StringDMA)(self.ptr.as_ptr(), &mut len, mode);
            if data.is_null() {
                return None;
            }
            if len == 0 {
                return Some(&[]);
            }
            Some(std::slice::from_raw_parts(data.cast::<u8>(), len))
        }
    }

    /// Makes the string `value.len()` bytes long (creating the key if missing) and writes
    /// `value` into it. The caller calls it only when the length changes or the key is new:
    /// a value of the same length is written through `string_rw`, with no resize.
    #[inline]
    pub fn resize_and_write(&mut self, value: &[u8]) -> Result<(), Refusal> {
        if value.is_empty() {
            return Err(c"ERR floor: no empty values");
        }
        // SAFETY: an open key; the DMA pointer is taken again after the resize (DMA rule 2)
        // and the copy is bounded by the length it gives.
        unsafe {
            if api!(RedisModule_StringTruncate)(self.ptr.as_ptr(), value.len())
                != raw::REDISMODULE_OK as c_int
            {
                return Err(c"WRONGTYPE Operation against a key holding the wrong kind of value");
            }
        }
        match self.string_rw() {
            Some(bytes) if bytes.len() == value.len() => {
                bytes.copy_from_slice(value);
                Ok(())
            }
            _ => Err(c"ERR floor: the string did not resize"),
        }
    }

    /// Makes the key a string holding `value`, a string of the server's (the client's own
    /// argument): the server takes it by reference count, or copies it, as SET takes its
    /// argument. Only for a missing key: any TTL it had would be dropped.
    #[inline]
    pub fn set_string(&mut self, value: Str<'_>) -> Result<(), Refusal> {
        // SAFETY: an open key and a live string.
        let status = unsafe { api!(RedisModule_StringSet)(self.ptr.as_ptr(), value.ptr.as_ptr()) };
        if status == raw::REDISMODULE_OK as c_int {
            Ok(())
        } else {
            Err(c"ERR floor: the string was not set")
        }
    }

    /// Arms the TTL at `at_ms` (Unix milliseconds).
    #[inline]
    pub fn set_abs_expire(&mut self, at_ms: i64) -> Result<(), Refusal> {
        // SAFETY: an open key.
        let status = unsafe { api!(RedisModule_SetAbsExpire)(self.ptr.as_ptr(), at_ms) };
        if status == raw::REDISMODULE_OK as c_int {
            Ok(())
        } else {
            Err(c"ERR floor: no expiry set")
        }
    }

    /// The milliseconds the TTL has left; `None` without one. The key exists (Redis 8.2
    /// crashes reading the expiry of a missing key).
    #[inline]
    pub fn ttl_ms(&self) -> Option<i64> {
        // SAFETY: an open key that exists (the caller's promise).
        let left = unsafe { api!(RedisModule_GetExpire)(self.ptr.as_ptr()) };
        (left != raw::REDISMODULE_NO_EXPIRE as i64).then_some(left)
    }

    /// Deletes the key as the server's DEL of one key does.
    #[inline]
    pub fn delete(&mut self) {
        // SAFETY: an open key.
        unsafe {
            api!(RedisModule_DeleteKey)(self.ptr.as_ptr());
        }
    }

    /// The sorted set's cardinality (a string's length).
    #[inline]
    pub fn len(&self) -> usize {
        // SAFETY: an open key.
        unsafe { api!(RedisModule_ValueLength)(self.ptr.as_ptr()) }
    }

    /// Adds `member` at `score`, or moves it there.
    #[inline]
    pub fn zadd(&mut self, score: f64, member: Str<'_>) -> Result<(), Refusal> {
        let mut flags: c_int = 0;
        // SAFETY: an open key, a live member, a valid out pointer.
        let status = unsafe {
            api!(RedisModule_ZsetAdd)(self.ptr.as_ptr(), score, member.ptr.as_ptr(), &mut flags)
        };
        if status == raw::REDISMODULE_OK as c_int {
            Ok(())
        } else {
            Err(c"WRONGTYPE Operation against a key holding the wrong kind of value")
        }
    }

    /// Takes the members scored at or below `upper`, lowest first, up to `out.len()`: the
    /// iterator is stopped before they are removed (`zrem`). Returns how many.
    #[inline]
    pub fn lowest_at_or_below<'k>(
        &self,
        ctx: Ctx<'k>,
        upper: f64,
        out: &mut [Option<Member<'k>>],
    ) -> usize {
        let mut taken = 0;
        let mut score = 0.0;
        // SAFETY: an open key; every element handed out is owned by a `Member`, which frees
        // it; the iterator is stopped whatever the seek found.
        unsafe {
            let key = self.ptr.as_ptr();
            if api!(RedisModule_ZsetFirstInScoreRange)(key, f64::NEG_INFINITY, upper, 0, 0)
                != raw::REDISMODULE_OK as c_int
            {
                return 0;
            }
            while taken < out.len() {
                let member = api!(RedisModule_ZsetRangeCurrentElement)(key, &mut score);
                let Some(ptr) = NonNull::new(member) else {
                    break;
                };
                out[taken] = Some(Member { ctx, ptr });
                taken += 1;
                if api!(RedisModule_ZsetRangeNext)(key) == 0 {
                    break;
                }
            }
            api!(RedisModule_ZsetRangeStop)(key);
        }
        taken
    }

    /// Removes `member` from the sorted set.
    #[inline]
    pub fn zrem(&mut self, member: &Member<'_>) {
        // SAFETY: an open key and a live member string.
        unsafe {
            api!(RedisModule_ZsetRem)(self.ptr.as_ptr(), member.ptr.as_ptr(), ptr::null_mut());
        }
    }
}

impl Parked {
    /// Wakes the client: the server answers it as if its time were up (`parked_woken`), as
    /// Goblin wakes a waiter it granted.
    #[inline]
    pub fn wake(self) {
        // SAFETY: a handle the server has not let go of: a parked client is woken once, and
        // never times out.
        unsafe {
            api!(RedisModule_UnblockClient)(self.0.as_ptr(), ptr::null_mut());
        }
    }
}

impl Parked {
    /// Whether this is the handle of `blocked`.
    fn is(&self, blocked: *mut raw::RedisModuleBlockedClient) -> bool {
        self.0.as_ptr() == blocked
    }
}

/// A parked client went away before its hand-off: its handle is forgotten, never woken.
unsafe extern "C" fn parked_gone(
    _ctx: *mut raw::RedisModuleCtx,
    blocked: *mut raw::RedisModuleBlockedClient,
) {
    crate::commands::forget_waiter(|parked| parked.is(blocked));
}

/// A parked client's key was signalled: it keeps waiting (only a hand-off wakes it).
unsafe extern "C" fn parked_reply(
    _ctx: *mut raw::RedisModuleCtx,
    _argv: *mut *mut raw::RedisModuleString,
    _argc: c_int,
) -> c_int {
    raw::REDISMODULE_ERR as c_int
}

/// A parked client woken by its hand-off: it holds the lock.
unsafe extern "C" fn parked_woken(
    ctx: *mut raw::RedisModuleCtx,
    _argv: *mut *mut raw::RedisModuleString,
    _argc: c_int,
) -> c_int {
    // SAFETY: the server's context for this reply, a static text.
    unsafe {
        api!(RedisModule_ReplyWithSimpleString)(ctx, c"OK".as_ptr());
    }
    raw::REDISMODULE_OK as c_int
}

impl Drop for Key<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: opened by `Ctx::open` or `open_read`, closed exactly once.
        unsafe { api!(RedisModule_CloseKey)(self.ptr.as_ptr()) }
    }
}

impl Drop for Member<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: a string the iterator handed out, freed exactly once.
        unsafe { api!(RedisModule_FreeString)(self.ctx.ptr.as_ptr(), self.ptr.as_ptr()) }
    }
}

/// A command of the floor: what one call does, on the call's arguments (the name at 0).
pub trait Command {
    fn run(ctx: Ctx<'_>, argv: &[Str<'_>]) -> Result<(), Refusal>;
}

type Callback =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

/// One row of the command table.
pub struct Registration {
    pub name: &'static CStr,
    pub flags: &'static CStr,
    /// The legacy key range: first, last (-1: through the end), step.
    pub keys: (c_int, c_int, c_int),
    callback: Callback,
}

/// The table row of command `C`.
pub const fn registration<C: Command>(
    name: &'static CStr,
    flags: &'static CStr,
    keys: (c_int, c_int, c_int),
) -> Registration {
    Registration {
        name,
        flags,
        keys,
        callback: entry::<C>,
    }
}

/// Where the server calls command `C`: views argv in place and runs it; a refusal or a panic
/// is an error reply, never an unwind into the server.
extern "C" fn entry<C: Command>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    let Some(ptr) = NonNull::new(ctx) else {
        return raw::REDISMODULE_ERR as c_int;
    };
    let ctx = Ctx {
        ptr,
        _call: PhantomData,
    };
    let argv: &[Str<'_>] = match usize::try_from(argc) {
        // SAFETY: the server passes argc non-NULL strings that outlive the call; `Str` is a
        // transparent non-null pointer.
        Ok(len) if len > 0 && !argv.is_null() => unsafe {
            std::slice::from_raw_parts(argv.cast::<Str<'_>>(), len)
        },
        _ => &[],
    };
    match catch_unwind(AssertUnwindSafe(|| C::run(ctx, argv))) {
        Ok(Ok(())) => {}
        Ok(Err(refusal)) => ctx.reply_error(refusal),
        Err(_) => ctx.reply_error(c"ERR floor: internal error"),
    }
    raw::REDISMODULE_OK as c_int
}

/// The server calls this once when it loads the module.
///
/// # Safety
/// Called by the server only, with its context.
#[no_mangle]
pub unsafe extern "C" fn RedisModule_OnLoad(
    ctx: *mut raw::RedisModuleCtx,
    _argv: *mut *mut raw::RedisModuleString,
    _argc: c_int,
) -> c_int {
    // SAFETY: the server's context; a static name.
    let init = unsafe {
        raw::Export_RedisModule_Init(
            ctx,
            c"goblin-floor".as_ptr(),
            1,
            raw::REDISMODULE_APIVER_1 as c_int,
        )
    };
    if init == raw::Status::Err as c_int {
        return raw::REDISMODULE_ERR as c_int;
    }
    let loaded = catch_unwind(AssertUnwindSafe(|| -> bool {
        // Every function a command calls (`CachedMicroseconds` is optional: Redis 7.0 lacks it).
        let present = present![
            RedisModule_CreateCommand,
            RedisModule_CreateString,
            RedisModule_FreeString,
            RedisModule_StringPtrLen,
            RedisModule_StringToDouble,
            RedisModule_Milliseconds,
            RedisModule_OpenKey,
            RedisModule_CloseKey,
            RedisModule_NotifyKeyspaceEvent,
            RedisModule_Replicate,
            RedisModule_ReplyWithLongLong,
            RedisModule_ReplyWithArray,
            RedisModule_ReplyWithSimpleString,
            RedisModule_ReplyWithError,
            RedisModule_StringDMA,
            RedisModule_StringTruncate,
            RedisModule_StringSet,
            RedisModule_SetAbsExpire,
            RedisModule_GetExpire,
            RedisModule_DeleteKey,
            RedisModule_ValueLength,
            RedisModule_ZsetAdd,
            RedisModule_ZsetRem,
            RedisModule_ZsetFirstInScoreRange,
            RedisModule_ZsetRangeCurrentElement,
            RedisModule_ZsetRangeNext,
            RedisModule_ZsetRangeStop,
            RedisModule_BlockClientOnKeys,
            RedisModule_SetDisconnectCallback,
            RedisModule_UnblockClient
        ];
        if !present {
            return false;
        }
        skip_command_validation(ctx);
        for (slot, text) in WORDS.iter().zip(WORD_TEXT) {
            let bytes = text.to_bytes();
            // SAFETY: a load-time context; the string is the module's for its whole life.
            let word = unsafe { api!(RedisModule_CreateString)(ctx, text.as_ptr(), bytes.len()) };
            if word.is_null() {
                return false;
            }
            slot.store(word, Ordering::Relaxed);
        }
        crate::COMMANDS.iter().all(|command| {
            let (first, last, step) = command.keys;
            // SAFETY: a load-time context, static names and flags, a callback that lives as
            // long as the module.
            unsafe {
                api!(RedisModule_CreateCommand)(
                    ctx,
                    command.name.as_ptr(),
                    Some(command.callback),
                    command.flags.as_ptr(),
                    first,
                    last,
                    step,
                ) == raw::REDISMODULE_OK as c_int
            }
        })
    }));
    match loaded {
        Ok(true) => raw::REDISMODULE_OK as c_int,
        _ => raw::REDISMODULE_ERR as c_int,
    }
}

/// `VALKEYMODULE_OPTIONS_SKIP_COMMAND_VALIDATION`: on Valkey 8.1 and later, `Replicate` takes the
/// command name as given instead of looking it up on every call. Goblin declares it where the
/// server offers it (`src/server/options.rs`), so the floor does as well, on the same test: a
/// Valkey server (`INFO server` has `valkey_version`) whose module API lists the bit. Redis
/// numbers its bits on its own: it never gets this one.
const VALKEY_SKIP_COMMAND_VALIDATION: c_int = 1 << 4;

fn skip_command_validation(ctx: *mut raw::RedisModuleCtx) {
    // SAFETY: reads of pointers `RedisModule_Init` wrote.
    let (Some(info), Some(field), Some(free), Some(all)) = (unsafe {
        (
            raw::RedisModule_GetServerInfo,
            raw::RedisModule_ServerInfoGetFieldC,
            raw::RedisModule_FreeServerInfo,
            raw::RedisModule_GetModuleOptionsAll,
        )
    }) else {
        return;
    };
    // SAFETY: a load-time context; the info is read while alive and freed once.
    let valkey = unsafe {
        let data = info(ctx, c"server".as_ptr());
        if data.is_null() {
            return;
        }
        let valkey = !field(data, c"valkey_version".as_ptr()).is_null();
        free(ctx, data);
        valkey
    };
    // SAFETY: no arguments; the mask of the options this server knows.
    if valkey && unsafe { all() } & VALKEY_SKIP_COMMAND_VALIDATION != 0 {
        // SAFETY: a load-time context.
        unsafe { api!(RedisModule_SetModuleOptions)(ctx, VALKEY_SKIP_COMMAND_VALIDATION) };
    }
}
