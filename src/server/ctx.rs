//! The command call in progress: its clock, its key, and the channels a write is announced on
//! (replication and the AOF, keyspace notifications, the modified-key signal).

use std::cell::Cell;
use std::ffi::{c_char, c_int, CStr};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};

use redis_module::raw;

use super::api::{api, optional_api};
use super::host::host;
use super::keys::Key;
use super::probe::{with_errno, EPERM};
use super::Arg;

/// The most arguments after the key that one replicated command may have (`SET key value PXAT
/// ms` has three).
pub const MAX_REPLICATED_ARGS: usize = 8;

/// A constant word of a replicated effect, made once at load as a string of the module's own:
/// the server takes it by reference count (the `s` format), where bytes (`b`) would be copied
/// into a new string object, and freed again, on every call (about 150 instructions a word,
/// measured against the floor: bench/results/instructions.md).
#[derive(Debug, Clone, Copy)]
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
    fn text(self) -> &'static CStr {
        WORD_TEXT[self as usize]
    }

    /// The word's string, or NULL before the load made it.
    fn raw(self) -> *mut raw::RedisModuleString {
        WORDS[self as usize].load(Ordering::Relaxed)
    }
}

/// Makes the words, once at load. They live as long as the process: never freed (three small
/// strings; a module loaded again makes its own).
pub(super) fn make_words(ctx: *mut raw::RedisModuleCtx) {
    for (slot, text) in WORDS.iter().zip(WORD_TEXT) {
        if !slot.load(Ordering::Relaxed).is_null() {
            continue;
        }
        let bytes = text.to_bytes();
        // SAFETY: a load-time context and a static text the server copies; a NULL result is
        // kept as NULL, and the word then goes as bytes.
        let word = unsafe { api!(RedisModule_CreateString)(ctx, text.as_ptr(), bytes.len()) };
        slot.store(word, Ordering::Relaxed);
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
    /// How many times the call signalled a key as modified: how often it wrote.
    writes: Cell<u32>,
    /// `writes` when the lines of the call's keys were last served (`lines_served`).
    served_through: Cell<u32>,
}

impl Ctx {
    pub(super) fn new(ptr: NonNull<raw::RedisModuleCtx>) -> Ctx {
        Ctx {
            ptr,
            writes: Cell::new(0),
            served_through: Cell::new(0),
        }
    }

    /// How many writes this call made so far: a call wrote between two readings if they differ.
    pub fn writes(&self) -> u32 {
        self.writes.get()
    }

    /// The command served its keys' lines itself after its last write (`crate::waiting`): the
    /// entry point need not look at them again.
    pub fn lines_served(&self) {
        self.served_through.set(self.writes.get());
    }

    /// Whether the call wrote since its keys' lines were last served.
    pub(super) fn wrote_unserved(&self) -> bool {
        self.writes.get() != self.served_through.get()
    }

    /// The id of the call's client (a blocked client's, in its callbacks); 0 where there is
    /// none (a timer's, a job's).
    pub fn client_id(&self) -> u64 {
        // SAFETY: a live context.
        unsafe { api!(RedisModule_GetClientId)(self.raw()) }
    }

    /// A key was written in this call (a key that signals itself as modified counts it here).
    pub(super) fn count_write(&self) {
        self.writes.set(self.writes.get().wrapping_add(1));
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

    /// The same clock as `now_ms`, in microseconds: the snapshot itself where the server has
    /// it, whole milliseconds on Redis 7.0.
    pub fn now_us(&self) -> i64 {
        match optional_api!(RedisModule_CachedMicroseconds) {
            // SAFETY: no arguments; returns the server's cached time.
            Some(cached_us) => unsafe { cached_us() },
            None => self.now_ms().saturating_mul(1000),
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

    /// `command key` alone (INCR, DEL, UNLINK), as `replicate` appends it: one literal format,
    /// nothing built.
    pub fn replicate_key(&self, command: &CStr, key: Arg<'_>) {
        // SAFETY: "s" takes a live string, the key, which the server retains.
        let status = unsafe {
            api!(RedisModule_Replicate)(self.raw(), command.as_ptr(), c"s".as_ptr(), key.raw())
        };
        if status != raw::REDISMODULE_OK as c_int {
            panic!("the server refused to replicate {command:?}");
        }
    }

    /// `command key [before] word [after]`, as `replicate` appends it, with `word` by
    /// reference (its string made at load): SET's `PXAT` and `KEEPTTL`, ZREMRANGEBYSCORE's
    /// `-inf`. One literal format per shape: nothing built per call.
    pub fn replicate_with_word(
        &self,
        command: &CStr,
        key: Arg<'_>,
        before: Option<&[u8]>,
        word: Word,
        after: Option<&[u8]>,
    ) {
        let made = word.raw();
        if made.is_null() {
            let text = word.text().to_bytes();
            return match (before, after) {
                (Some(b), Some(a)) => self.replicate(command, key, &[b, text, a]),
                (Some(b), None) => self.replicate(command, key, &[b, text]),
                (None, Some(a)) => self.replicate(command, key, &[text, a]),
                (None, None) => self.replicate(command, key, &[text]),
            };
        }
        // SAFETY: the word is the module's for its whole life.
        self.replicate_with_arg(command, key, before, unsafe { Arg::from_raw(made) }, after);
    }

    /// `command key [before] string [after]`, as `replicate_with_word` appends it, with `string`
    /// one of the call's own strings (a client's member), by reference: the server copies
    /// nothing of it, where bytes are made into a new string object and freed again (about 150
    /// instructions).
    pub fn replicate_with_arg(
        &self,
        command: &CStr,
        key: Arg<'_>,
        before: Option<&[u8]>,
        string: Arg<'_>,
        after: Option<&[u8]>,
    ) {
        let made = string.raw();
        let bytes = |b: &[u8]| {
            // An empty slice's pointer is dangling: hand the server a real one.
            let ptr = if b.is_empty() {
                c"".as_ptr()
            } else {
                b.as_ptr().cast::<c_char>()
            };
            (ptr, b.len())
        };
        let (ctx, cmd, key) = (self.raw(), command.as_ptr(), key.raw());
        let replicate = api!(RedisModule_Replicate);
        // SAFETY: each format names exactly the arguments passed after it: "s" a live string
        // (the key and `string`, each alive for the call at least), "b" a
        // (pointer, length) pair that lives across the call. The server copies or retains
        // everything before returning.
        let status = unsafe {
            match (before.map(bytes), after.map(bytes)) {
                (Some((b, bl)), Some((a, al))) => {
                    replicate(ctx, cmd, c"sbsb".as_ptr(), key, b, bl, made, a, al)
                }
                (Some((b, bl)), None) => replicate(ctx, cmd, c"sbs".as_ptr(), key, b, bl, made),
                (None, Some((a, al))) => replicate(ctx, cmd, c"ssb".as_ptr(), key, made, a, al),
                (None, None) => replicate(ctx, cmd, c"ss".as_ptr(), key, made),
            }
        };
        if status != raw::REDISMODULE_OK as c_int {
            panic!("the server refused to replicate {command:?}");
        }
    }

    /// `command key string word after`, with both `string` (one of the call's own strings: a
    /// client's token) and `word` by reference: `SET key token PXAT at`. The server copies
    /// neither, where each as bytes would be made into a new string object and freed again
    /// (about 150 to 250 instructions a string).
    pub fn replicate_arg_with_word(
        &self,
        command: &CStr,
        key: Arg<'_>,
        string: Arg<'_>,
        word: Word,
        after: &[u8],
    ) {
        let made = word.raw();
        if made.is_null() {
            let text = word.text().to_bytes();
            return self.replicate(command, key, &[string.as_bytes(), text, after]);
        }
        let (ctx, cmd, key, string) = (self.raw(), command.as_ptr(), key.raw(), string.raw());
        // An empty slice's pointer is dangling: hand the server a real one.
        let after_ptr = if after.is_empty() {
            c"".as_ptr()
        } else {
            after.as_ptr().cast::<c_char>()
        };
        // SAFETY: the format names exactly the arguments passed after it: "s" a live string
        // (the key and `string`, alive for the call at least; the word, the module's for its
        // whole life), "b" a (pointer, length) pair that lives across the call. The server
        // copies or retains everything before returning.
        let status = unsafe {
            api!(RedisModule_Replicate)(
                ctx,
                cmd,
                c"sssb".as_ptr(),
                key,
                string,
                made,
                after_ptr,
                after.len(),
            )
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

    /// Tells WATCH and client-side caching that `key` changed (every write does).
    pub fn signal_modified(&self, key: Arg<'_>) {
        self.count_write();
        // SAFETY: live context and key name.
        unsafe {
            api!(RedisModule_SignalModifiedKey)(self.raw(), key.raw());
        }
    }

    pub(super) fn log_warning(&self, message: &str) {
        super::log(self.raw(), c"warning", message);
    }
}

/// The command a cluster node calls on a key to learn whether it still serves it
/// (`Ctx::serves`).
pub(super) const SERVES_PROBE: &CStr = c"EXISTS";

/// Where a key is served (`Ctx::serves`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// By this node.
    Here,
    /// By another node: its slot moved away, migrates and the key has gone, or is being
    /// imported here and is not this node's yet.
    Elsewhere,
    /// Not here now, for another reason (the cluster is down), or the server did not say why.
    Unknown,
}

/// What the server's context says about where a call runs.
#[derive(Debug, Clone, Copy)]
pub struct Where {
    /// Inside MULTI, a script, a function, or a call from a module: the call must not block.
    pub no_blocking: bool,
    /// A primary, which may write on its own.
    pub primary: bool,
    /// A node of a cluster, which may stop serving a key's slot while a waiter waits for it.
    pub cluster: bool,
    /// The server is out of memory by its `maxmemory`: it refuses write commands that add
    /// data.
    pub out_of_memory: bool,
}

impl Ctx {
    /// Where this call runs.
    pub fn placement(&self) -> Where {
        // SAFETY: a live context.
        let flags = unsafe { api!(RedisModule_GetContextFlags)(self.raw()) } as u32;
        let no_blocking = raw::REDISMODULE_CTX_FLAGS_DENY_BLOCKING
            | raw::REDISMODULE_CTX_FLAGS_MULTI
            | raw::REDISMODULE_CTX_FLAGS_LUA
            | raw::REDISMODULE_CTX_FLAGS_REPLICATED
            | raw::REDISMODULE_CTX_FLAGS_LOADING;
        Where {
            no_blocking: flags & no_blocking != 0 || flags & raw::REDISMODULE_CTX_FLAGS_SLAVE != 0,
            primary: flags & raw::REDISMODULE_CTX_FLAGS_MASTER != 0,
            cluster: flags & raw::REDISMODULE_CTX_FLAGS_CLUSTER != 0,
            out_of_memory: flags & raw::REDISMODULE_CTX_FLAGS_OOM != 0,
        }
    }

    /// Whether this cluster node would serve a client's call on `key` itself now, as it
    /// decides for any command (no `-MOVED`, no `-ASK`): not once its slot moved away, nor
    /// while the slot migrates and the key has gone, nor while it is imported (an atomic slot
    /// migration writes the slot's keys on the target before the target owns them). The server
    /// answers `RedisModule_Call`'s keyed calls that way, and the module API has no other way
    /// to ask on every server; `SERVES_PROBE` is the cheapest such call. Only asked in a
    /// cluster, before a grant made on a timer or after another client's write: a command of the
    /// module's own runs on a key the server routed to it, so it is never asked there. The load
    /// checks that the server knows the command.
    pub fn serves(&self, key: Arg<'_>) -> Served {
        let (call, free) = (api!(RedisModule_Call), api!(RedisModule_FreeCallReply));
        // SAFETY: a live context and argument.
        let (reply, errno) = with_errno(|| unsafe {
            call(self.raw(), SERVES_PROBE.as_ptr(), c"s".as_ptr(), key.raw())
        });
        if reply.is_null() {
            return if errno == EPERM {
                Served::Elsewhere
            } else {
                Served::Unknown
            };
        }
        // SAFETY: a reply that came back, freed once.
        unsafe { free(reply) };
        Served::Here
    }

    /// Whether writes of the module's own must wait: `CLIENT PAUSE WRITE`, a failover.
    pub fn writes_paused(&self) -> bool {
        // SAFETY: no arguments.
        unsafe { api!(RedisModule_AvoidReplicaTraffic)() != 0 }
    }

    /// The db this call has selected.
    pub fn db(&self) -> i32 {
        // SAFETY: a live context.
        unsafe { api!(RedisModule_GetSelectedDb)(self.raw()) }
    }

    /// Selects `db` for what follows in this context (a timer's, a job's).
    pub fn select_db(&self, db: i32) {
        // SAFETY: a live context; the server checks the db.
        unsafe {
            api!(RedisModule_SelectDb)(self.raw(), db);
        }
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
