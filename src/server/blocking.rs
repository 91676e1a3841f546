//! Waiting inside the server: a client blocked on its key, woken when its turn comes; the
//! module's timers; the keyspace events and deferred jobs that tell the module a key changed.
//! Only the server's side is here: every callback is handed to the `Waiting` the module
//! registers at load (`crate::waiting`), which keeps the lines and decides the grants.
//!
//! Clients block on a key (`RedisModule_BlockClientOnKeys`), not alone: the server then
//! answers them itself when the node stops serving the key's slot, as it answers BLPOP's
//! waiters (`-MOVED` when the slot moves, `-UNBLOCKED` on a role change), times them out, and
//! drops them with their connection. A grant wakes its one waiter by its handle
//! (`Blocked::wake`), never by signalling a key: the server would then ask every client blocked
//! on the key, in turn, and a hand-off would cost as much as the line is long (on Valkey 9.1,
//! more: each client is looked up in the key's list of waiters). For the same reason the key a
//! client blocks on is one nobody writes (`goblin_core::waitlist::blocking_name`).

use std::ffi::{c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use redis_module::raw;

use super::api::{api, optional_api};
use super::{Arg, Ctx, Reply};

pub use goblin_core::waitlist::WaiterId;

/// What the module does when the server calls back. Every method runs on the server's main
/// thread.
pub trait Waiting: Sync {
    /// Whether anyone waits in any line: when nobody does, a write has no line to look at.
    fn anyone(&self) -> bool;
    /// A command of the module's own wrote `key` (it is done, and the key is closed).
    fn changed(&self, ctx: &Ctx, key: Arg<'_>);
    /// A command of the module's own begins while someone waits: the looks its writes'
    /// keyspace events owe are held until it ends, when most are paid by `changed`.
    fn command_begins(&self);
    /// That command ended (after `changed`, or after a panic): the looks it held and that are
    /// still owed are deferred now, as an event's are.
    fn command_ends(&self, ctx: &Ctx);
    /// The waiter's key was signalled: its reply if it was granted (it is then served), or
    /// `None` to keep it waiting.
    fn reply(&self, ctx: &Ctx, waiter: WaiterId) -> Option<Reply<'static>>;
    /// The waiter's time is up, or `CLIENT UNBLOCK ... TIMEOUT`: its reply.
    fn timed_out(&self, ctx: &Ctx, waiter: WaiterId) -> Reply<'static>;
    /// The server unblocked the waiter for another reason: its connection closed, `CLIENT
    /// UNBLOCK ... ERROR`, a role change, its slot moved. No key may be written here.
    fn gone(&self, ctx: &Ctx, waiter: WaiterId);
    /// The server is done with the waiter: nothing more comes for it. No key may be written
    /// here.
    fn freed(&self, ctx: &Ctx, waiter: WaiterId);
    /// A timer the module set went off, or a job it deferred runs: `data` as given.
    fn run(&self, ctx: &Ctx, data: u64);
    /// A keyspace event on `key`, in the db `ctx` has selected. No key may be written here.
    fn event(&self, ctx: &Ctx, event: &CStr, key: Arg<'_>);
    /// A db was flushed (`db`: which one, `None` for all) or two were swapped.
    fn flushed(&self, ctx: &Ctx, db: Option<i32>);
    /// This node handed slots over to another (an atomic slot migration it exported): the keys
    /// of those slots are no longer its to write. No key may be written here.
    fn slots_moved(&self, ctx: &Ctx);
    /// A client's connection is going (the server frees it now): a reply still in its output
    /// buffer never reaches it. No key may be written here.
    fn disconnected(&self, ctx: &Ctx, client: u64);
    /// The server has written out the replies of the clients it served, and freed those that
    /// were closing, and waits for more (the event loop's `after sleep`).
    fn replies_out(&self, ctx: &Ctx);
}

static WAITING: OnceLock<&'static dyn Waiting> = OnceLock::new();

pub(super) fn waiting() -> Option<&'static dyn Waiting> {
    WAITING.get().copied()
}

/// A blocked client's handle, from `Ctx::block_on` until it is woken or the server lets it
/// go (`Waiting::timed_out`, `gone` or `freed`), after which it must not be used.
#[derive(Debug)]
pub struct Blocked(NonNull<raw::RedisModuleBlockedClient>);

// SAFETY: a handle is only ever used on the server's main thread; the lines that keep it are
// behind a mutex only because they are a static.
unsafe impl Send for Blocked {}

impl Blocked {
    /// Wakes the waiter whose grant was written: the server answers it as if its time were up
    /// (`Waiting::timed_out`, which finds it granted). Some servers call that back inside this
    /// call, others once the event loop turns: the caller holds no lock the callback takes.
    /// Only this waiter is asked, whoever else blocks on the key: a hand-off costs the same
    /// with one waiter in line or ten thousand.
    pub fn wake(self, waiter: WaiterId) {
        // SAFETY: a handle the server has not let go of (the caller's contract); the private
        // data is the waiter's, as it was blocked with.
        unsafe {
            api!(RedisModule_UnblockClient)(self.0.as_ptr(), waiter as usize as *mut c_void);
        }
    }
}

impl Ctx {
    /// Blocks the calling client on `key` for `timeout_ms` (0: for ever) as `waiter`; its
    /// handle, or `None` if the server would not block it (the call must then answer at once).
    pub fn block_on(&self, key: Arg<'_>, timeout_ms: i64, waiter: WaiterId) -> Option<Blocked> {
        watch(self.raw());
        let mut keys = [key.raw()];
        let privdata = waiter as usize as *mut c_void;
        // SAFETY: a live command context that may block (the caller checked `placement`); the
        // key array lives across the call, which copies it; the callbacks live as long as the
        // module.
        let blocked = NonNull::new(unsafe {
            api!(RedisModule_BlockClientOnKeys)(
                self.raw(),
                Some(reply_callback),
                Some(timeout_callback),
                Some(free_callback),
                timeout_ms,
                keys.as_mut_ptr(),
                1,
                privdata,
            )
        })?;
        // SAFETY: a live blocked-client handle.
        unsafe { api!(RedisModule_SetDisconnectCallback)(blocked.as_ptr(), Some(gone_callback)) };
        Some(Blocked(blocked))
    }

    /// A timer in `ms` milliseconds that hands `data` to `Waiting::run`; its id.
    pub fn timer(&self, ms: i64, data: u64) -> u64 {
        // SAFETY: a live context; `data` travels as the pointer's value and is never read
        // through.
        unsafe {
            api!(RedisModule_CreateTimer)(
                self.raw(),
                ms.max(0),
                Some(timer_callback),
                data as usize as *mut c_void,
            )
        }
    }

    /// Stops timer `id`, if it has not gone off yet.
    pub fn stop_timer(&self, id: u64) {
        let mut data = ptr::null_mut();
        // SAFETY: a live context; a timer that fired or is not ours is refused, harmlessly.
        unsafe {
            api!(RedisModule_StopTimer)(self.raw(), id, &mut data);
        }
    }

    /// Runs `Waiting::run(data)` once the command, the expiry or the eviction under way is
    /// done (where the server defers such jobs, Redis 7.2+ and Valkey), or as soon as the event
    /// loop can (Redis 7.0).
    pub fn after_this(&self, data: u64) {
        let pd = data as usize as *mut c_void;
        if let Some(add_job) = optional_api!(RedisModule_AddPostNotificationJob) {
            // SAFETY: a live context; `pd` is a value, not a pointer to free.
            if unsafe { add_job(self.raw(), Some(job_callback), pd, None) }
                == raw::REDISMODULE_OK as c_int
            {
                return;
            }
        }
        self.timer(0, data);
    }
}

/// Whether the keyspace, the clients and the event loop are watched: from the first wait on,
/// for as long as the module is loaded (Redis 7.0 cannot unsubscribe).
static WATCHING: AtomicBool = AtomicBool::new(false);

/// Subscribes, once, when the first caller waits (until then no waiter can need them, and every
/// write and every connection on the server is spared the call into the module), to:
/// - the keyspace events that free a lock or a slot (generic, string, sorted set, expired,
///   evicted; about 1,000 instructions per event). A refusal is logged; the waiters then wake
///   on timers and on Goblin's own commands only;
/// - clients going, and the event loop's `after sleep`: a grant answered to a waiter is its
///   holder's only once the server has written the reply out (`Waiting::disconnected`,
///   `Waiting::replies_out`). A refusal is logged; such grants then stay with a client that
///   went before its reply, until their lease ends.
fn watch(ctx: *mut raw::RedisModuleCtx) {
    if WATCHING.swap(true, Ordering::Relaxed) {
        return;
    }
    let clients = super::subscribe(ctx, raw::REDISMODULE_EVENT_CLIENT_CHANGE, client_callback)
        && super::subscribe(ctx, raw::REDISMODULE_EVENT_EVENTLOOP, event_loop_callback);
    if !clients {
        super::log(
            ctx,
            c"warning",
            "goblin: could not subscribe to clients going and to the event loop",
        );
    }
    let types = raw::REDISMODULE_NOTIFY_GENERIC
        | raw::REDISMODULE_NOTIFY_STRING
        | raw::REDISMODULE_NOTIFY_ZSET
        | raw::REDISMODULE_NOTIFY_EXPIRED
        | raw::REDISMODULE_NOTIFY_EVICTED;
    // SAFETY: a live context of this module and a callback that lives as long as the module.
    let subscribed =
        unsafe { api!(RedisModule_SubscribeToKeyspaceEvents)(ctx, types, Some(event_callback)) };
    if subscribed != raw::REDISMODULE_OK as c_int {
        super::log(
            ctx,
            c"warning",
            "goblin: could not subscribe to keyspace events",
        );
    }
}

/// Registers `handler` and subscribes to flushed and swapped dbs (the keyspace events wait
/// for the first waiter: `watch_keyspace`). Load time, once, as its last step: a subscription
/// cannot be taken back on Redis 7.0 if the load failed after it, so a refusal here is logged
/// and the load goes on.
pub(super) fn subscribe(ctx: *mut raw::RedisModuleCtx, handler: &'static dyn Waiting) {
    let _ = WAITING.set(handler);
    for id in [
        raw::REDISMODULE_EVENT_FLUSHDB,
        raw::REDISMODULE_EVENT_SWAPDB,
    ] {
        if !super::subscribe(ctx, id, db_callback) {
            super::log(
                ctx,
                c"warning",
                "goblin: could not subscribe to FLUSHDB and SWAPDB",
            );
        }
    }
}

/// Runs a callback's body, catching a panic (one unwinding out of the module would take the
/// server down) and logging it.
fn guarded<R>(ctx: *mut raw::RedisModuleCtx, fallback: R, body: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        super::log(
            ctx,
            c"warning",
            "goblin: internal error in a blocked client's callback",
        );
        fallback
    })
}

fn waiter_of(ctx: *mut raw::RedisModuleCtx) -> WaiterId {
    // SAFETY: a blocked client's reply, timeout or disconnect context.
    (unsafe { api!(RedisModule_GetBlockedClientPrivateData)(ctx) }) as usize as WaiterId
}

extern "C" fn reply_callback(
    ctx: *mut raw::RedisModuleCtx,
    _argv: *mut *mut raw::RedisModuleString,
    _argc: c_int,
) -> c_int {
    let Some(ctx_ref) = NonNull::new(ctx).map(Ctx::new) else {
        return raw::REDISMODULE_ERR as c_int;
    };
    let Some(handler) = waiting() else {
        return raw::REDISMODULE_ERR as c_int;
    };
    guarded(ctx, raw::REDISMODULE_ERR as c_int, || {
        match handler.reply(&ctx_ref, waiter_of(ctx)) {
            Some(reply) => {
                reply.send(&ctx_ref);
                raw::REDISMODULE_OK as c_int
            }
            None => raw::REDISMODULE_ERR as c_int,
        }
    })
}

extern "C" fn timeout_callback(
    ctx: *mut raw::RedisModuleCtx,
    _argv: *mut *mut raw::RedisModuleString,
    _argc: c_int,
) -> c_int {
    let Some(ctx_ref) = NonNull::new(ctx).map(Ctx::new) else {
        return raw::REDISMODULE_OK as c_int;
    };
    let reply = match waiting() {
        Some(handler) => guarded(ctx, Reply::Null, || {
            handler.timed_out(&ctx_ref, waiter_of(ctx))
        }),
        None => Reply::Null,
    };
    reply.send(&ctx_ref);
    raw::REDISMODULE_OK as c_int
}

unsafe extern "C" fn gone_callback(
    ctx: *mut raw::RedisModuleCtx,
    _blocked: *mut raw::RedisModuleBlockedClient,
) {
    let (Some(ctx_ref), Some(handler)) = (NonNull::new(ctx).map(Ctx::new), waiting()) else {
        return;
    };
    guarded(ctx, (), || handler.gone(&ctx_ref, waiter_of(ctx)));
}

unsafe extern "C" fn free_callback(ctx: *mut raw::RedisModuleCtx, privdata: *mut c_void) {
    let (Some(ctx_ref), Some(handler)) = (NonNull::new(ctx).map(Ctx::new), waiting()) else {
        return;
    };
    guarded(ctx, (), || {
        handler.freed(&ctx_ref, privdata as usize as WaiterId)
    });
}

unsafe extern "C" fn timer_callback(ctx: *mut raw::RedisModuleCtx, data: *mut c_void) {
    let (Some(ctx_ref), Some(handler)) = (NonNull::new(ctx).map(Ctx::new), waiting()) else {
        return;
    };
    guarded(ctx, (), || handler.run(&ctx_ref, data as usize as u64));
}

unsafe extern "C" fn job_callback(ctx: *mut raw::RedisModuleCtx, data: *mut c_void) {
    // SAFETY: the same contract as a timer's callback.
    unsafe { timer_callback(ctx, data) }
}

unsafe extern "C" fn event_callback(
    ctx: *mut raw::RedisModuleCtx,
    _type: c_int,
    event: *const std::ffi::c_char,
    key: *mut raw::RedisModuleString,
) -> c_int {
    let (Some(ctx_ref), Some(handler)) = (NonNull::new(ctx).map(Ctx::new), waiting()) else {
        return raw::REDISMODULE_OK as c_int;
    };
    if event.is_null() || key.is_null() {
        return raw::REDISMODULE_OK as c_int;
    }
    guarded(ctx, (), || {
        // SAFETY: the server's event name and key, live for the callback.
        let (event, key) = unsafe { (CStr::from_ptr(event), Arg::from_raw(key)) };
        handler.event(&ctx_ref, event, key);
    });
    raw::REDISMODULE_OK as c_int
}

unsafe extern "C" fn client_callback(
    ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    data: *mut c_void,
) {
    if subevent != raw::REDISMODULE_SUBEVENT_CLIENT_CHANGE_DISCONNECTED || data.is_null() {
        return;
    }
    let (Some(ctx_ref), Some(handler)) = (NonNull::new(ctx).map(Ctx::new), waiting()) else {
        return;
    };
    // SAFETY: for a client change the server passes a RedisModuleClientInfo, its `id` in every
    // version of it.
    let client = unsafe { (*data.cast::<raw::RedisModuleClientInfo>()).id };
    guarded(ctx, (), || handler.disconnected(&ctx_ref, client));
}

unsafe extern "C" fn event_loop_callback(
    ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    if subevent != raw::REDISMODULE_SUBEVENT_EVENTLOOP_AFTER_SLEEP {
        return;
    }
    let (Some(ctx_ref), Some(handler)) = (NonNull::new(ctx).map(Ctx::new), waiting()) else {
        return;
    };
    guarded(ctx, (), || handler.replies_out(&ctx_ref));
}

unsafe extern "C" fn db_callback(
    ctx: *mut raw::RedisModuleCtx,
    event: raw::RedisModuleEvent,
    subevent: u64,
    data: *mut c_void,
) {
    let (Some(ctx_ref), Some(handler)) = (NonNull::new(ctx).map(Ctx::new), waiting()) else {
        return;
    };
    let db = if event.id == raw::REDISMODULE_EVENT_FLUSHDB {
        if subevent != raw::REDISMODULE_SUBEVENT_FLUSHDB_END || data.is_null() {
            return;
        }
        // SAFETY: for FLUSHDB the server passes a RedisModuleFlushInfo.
        let db = unsafe { (*data.cast::<raw::RedisModuleFlushInfo>()).dbnum };
        (db >= 0).then_some(db)
    } else {
        None
    };
    guarded(ctx, (), || handler.flushed(&ctx_ref, db));
}
