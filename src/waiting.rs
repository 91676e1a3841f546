//! The lines GOBLIN.BLOCK's and GOBLIN.BZWINDOW's waiters stand in, and the grants that move
//! them: a token lock, or a slot of a ZWINDOW lease on the server's clock, handed to the first
//! waiter the moment it can be had, in arrival order, with no traffic from the waiters at all.
//!
//! The line itself is `goblin_core::waitlist`. A grant is written here, for the waiter, before
//! the server wakes it (`Blocked::wake`, that one waiter alone): the lock set to its token, or
//! its member admitted, replicated like any other write; the waiter's reply then only says so.
//! Grants are looked for (`reconsider`) wherever the key may have been freed:
//!
//! - inline, after Goblin's own commands that free or change a key (GOBLIN.CAD, DELEX, DELIFEQ,
//!   GOBLIN.ZWINDOW's evictions, GOBLIN.EXTEND), so nobody can take the lock in between;
//! - after a keyspace event on a key with a line (a DEL, an expiry, an eviction, a ZREM ...),
//!   deferred to the end of the command, expiry or eviction under way (never inside the event
//!   itself, which may come before the deletion is replicated);
//! - on a timer at the key's next change: when the lock expires, when the oldest lease ages out
//!   of its window. Never a poll.

use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};

use goblin_core::clock::seconds_of;
use goblin_core::waitlist::{blocking_name, LineId, State, WaitLists, Want};
use goblin_core::zwindow::{self, SortedWindow, Zadded};

use crate::effects::{self, Deletion};
use crate::error::CommandError;
use crate::server::{Arg, Blocked, Ctx, Key, KeyKind, OwnedString, Reply, WaiterId, Waiting};

/// The lines, and the handle of every waiter the server still blocks and nobody has woken.
#[derive(Default)]
struct Book {
    lists: WaitLists,
    handles: HashMap<WaiterId, Blocked>,
}

impl Book {
    /// Takes `waiter` out of its line, and forgets its handle.
    fn leave(&mut self, waiter: WaiterId, revoke: bool) -> Option<goblin_core::waitlist::Waiter> {
        self.handles.remove(&waiter);
        let left = self.lists.leave(waiter, revoke);
        count(&self.lists);
        left
    }
}

/// Waiters to wake, once the book is put down (`wake`).
type Woken = Vec<(Blocked, WaiterId)>;

static BOOK: LazyLock<Mutex<Book>> = LazyLock::new(|| Mutex::new(Book::default()));
/// Everyone in every line, read without the lock: most keyspace events are on keys nobody
/// waits for, and this answers them in a load.
static WAITING: AtomicUsize = AtomicUsize::new(0);

/// Waits a little before trying again while the server holds writes back (CLIENT PAUSE WRITE, a
/// failover under way).
const PAUSED_RETRY_MS: i64 = 10;

/// The book. Callbacks of the server only run between commands, never while one of Goblin's
/// own functions holds it (waking a waiter waits until it is put down, see `wake`); keyspace
/// events can (a write fires one), and they only try it.
fn book() -> MutexGuard<'static, Book> {
    BOOK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn count(lists: &WaitLists) {
    WAITING.store(lists.waiting(), Ordering::Relaxed);
}

/// Wakes the granted waiters. The server may answer one inside the call (`timed_out`, which
/// opens the book), so the book is put down first: `woken` is what `reconsider` gave back.
fn wake(book: MutexGuard<'static, Book>, woken: Woken) {
    drop(book);
    for (blocked, waiter) in woken {
        blocked.wake(waiter);
    }
}

/// How many callers wait, in every line (`INFO goblin`: `goblin_waiting`).
pub fn waiters() -> u64 {
    WAITING.load(Ordering::Relaxed) as u64
}

/// How many keys have a line, waiters or grants to take back (`goblin_waiting_keys`).
pub fn lines() -> u64 {
    book().lists.lines_of(None).len() as u64
}

/// A timeout the server can add to its clock, with a margin for the clock it reads then (as
/// BLPOP's: `ERR timeout is out of range` past it).
pub fn timeout_fits(ctx: &Ctx, timeout_ms: i64) -> Result<(), CommandError> {
    let room = i64::MAX - ctx.now_ms().max(0) - 1_000_000_000;
    if timeout_ms > room {
        return Err(crate::error::timeout::OUT_OF_RANGE);
    }
    Ok(())
}

/// Whether anyone waits for `key`: a newcomer must not go before them.
pub fn waited_for(ctx: &Ctx, key: Arg<'_>) -> bool {
    WAITING.load(Ordering::Relaxed) > 0 && book().lists.has_waiters(ctx.db(), key.as_bytes())
}

/// Puts the caller at the end of `key`'s line for `want`, blocked for `timeout_ms` (0: for
/// ever). `false` if the server would not block it: the caller answers at once.
pub fn wait(ctx: &Ctx, key: Arg<'_>, want: Want, timeout_ms: i64) -> bool {
    let mut book = book();
    let id = book.lists.join(ctx.db(), key.as_bytes(), want);
    // Blocked on a name of the key's slot that is never written (see `blocking_name`), or on
    // the key itself where no such name exists.
    let name = blocking_name(key.as_bytes()).map(|name| ctx.string(&name));
    let blocked_on = name.as_ref().map_or(key, |name| name.arg());
    let Some(blocked) = ctx.block_on(blocked_on, timeout_ms, id) else {
        book.leave(id, false);
        if let Some(line) = book.lists.line_of(ctx.db(), key.as_bytes()) {
            retire(ctx, &mut book.lists, line);
        }
        return false;
    };
    book.handles.insert(id, blocked);
    count(&book.lists);
    // The key is taken: set the timer for its next change.
    let woken = match book.lists.line_of(ctx.db(), key.as_bytes()) {
        Some(line) => reconsider(ctx, &mut book, line, false),
        None => Vec::new(),
    };
    wake(book, woken);
    true
}

/// After a Goblin command freed or changed `key`: the waiters' grants, at once.
pub fn changed(ctx: &Ctx, key: Arg<'_>) {
    if WAITING.load(Ordering::Relaxed) == 0 {
        return;
    }
    let mut book = book();
    let woken = match book.lists.line_of(ctx.db(), key.as_bytes()) {
        Some(line) => reconsider(ctx, &mut book, line, false),
        None => Vec::new(),
    };
    wake(book, woken);
}

/// Removes a line nobody stands in any more, and stops its timer.
fn retire(ctx: &Ctx, lists: &mut WaitLists, line: LineId) {
    if let Some(Some(timer)) = lists.retire_if_idle(line) {
        ctx.stop_timer(timer);
    }
}

/// Marks the data of a line's own timer (the one `Line::timer` names), as against a one-off
/// look at the line (`ctx.timer(0, line)`), which leaves the line's timer as it is.
const OWN_TIMER: u64 = 1 << 63;

/// Sets the line's timer to `ms` from now, replacing the one it had.
fn arm(ctx: &Ctx, lists: &mut WaitLists, line: LineId, ms: Option<i64>) {
    let Some(state) = lists.line_mut(line) else {
        return;
    };
    if let Some(old) = state.timer.take() {
        ctx.stop_timer(old);
    }
    state.timer = ms.map(|ms| ctx.timer(ms, line | OWN_TIMER));
}

/// Looks for grants in `line`: takes back what a gone waiter was granted, then grants the
/// head of the line whatever can be had now, in order, and sets the timer for the key's next
/// change. Returns the granted waiters, to `wake` once the book is put down. `select`: the
/// context is a timer's or a job's, whose db may not be the line's.
fn reconsider(ctx: &Ctx, book: &mut Book, line_id: LineId, select: bool) -> Woken {
    let lists = &mut book.lists;
    let Some(line) = lists.line(line_id) else {
        return Vec::new();
    };
    let (db, name) = (line.db, line.key.clone());
    if select {
        ctx.select_db(db);
    }
    let place = ctx.placement();
    if !place.primary {
        // A replica's waiters are answered by the server (a role change unblocks them).
        return Vec::new();
    }
    if ctx.writes_paused() {
        arm(ctx, lists, line_id, Some(PAUSED_RETRY_MS));
        return Vec::new();
    }
    let name = ctx.string(&name);
    if place.cluster && !ctx.serves(name.arg()) {
        // The slot moved, or migrates and the key has gone with it: the grant is the new
        // owner's to make. The server redirects the waiters (`-MOVED`) once the move is done.
        return Vec::new();
    }
    // As much of the line as one look can serve: a lock's head, or as many of a lease's as
    // the head's limit.
    let serves = match lists.head(line_id) {
        Some((_, Want::Lease { limit, .. })) => usize::try_from(limit).unwrap_or(1).max(1),
        _ => 1,
    };
    let waiting = lists.waiting_first(line_id, serves);
    // The members of the lease waiters, made before the key is opened, which borrows them.
    let members: Vec<_> = waiting
        .iter()
        .map(|(_, want)| match want {
            Want::Lease { member, .. } => Some(ctx.string(member)),
            Want::Lock { .. } => None,
        })
        .collect();
    let revoked = lists
        .line_mut(line_id)
        .map(|line| std::mem::take(&mut line.revoked))
        .unwrap_or_default();
    let revoked_members: Vec<_> = revoked
        .iter()
        .map(|want| match want {
            Want::Lease { member, .. } => Some(ctx.string(member)),
            Want::Lock { .. } => None,
        })
        .collect();
    let mut key = ctx.open_key(name.arg());
    take_back(ctx, &mut key, &revoked, &revoked_members);
    let granted = match waiting.first() {
        None => Vec::new(),
        Some((_, Want::Lock { .. })) => grant_lock(ctx, lists, line_id, &mut key, &waiting),
        Some((_, Want::Lease { .. })) => {
            grant_leases(ctx, lists, line_id, &mut key, &waiting, &members)
        }
    };
    drop(key);
    let mut woken = Vec::with_capacity(granted.len());
    for id in granted {
        book.lists.grant(id);
        if let Some(blocked) = book.handles.remove(&id) {
            woken.push((blocked, id));
        }
    }
    retire(ctx, &mut book.lists, line_id);
    woken
}

/// Takes back the grants of waiters that left before their reply: the lock if it still holds
/// their token, the member from the window (`members`: the leases' members, as strings).
fn take_back<'a>(
    ctx: &Ctx,
    key: &mut Key<'a>,
    revoked: &[Want],
    members: &'a [Option<OwnedString<'a>>],
) {
    for (want, member) in revoked.iter().zip(members) {
        match (want, member) {
            (Want::Lock { token, .. }, _) => {
                if key.string() == Some(token.as_slice()) {
                    effects::deleted(ctx, key, Deletion::Unlink);
                }
            }
            (Want::Lease { .. }, Some(member)) => {
                if key.kind() == KeyKind::SortedSet {
                    effects::release_member(ctx, key, member.arg());
                }
            }
            (Want::Lease { .. }, None) => {}
        }
    }
}

/// A token lock: the key, if it is free, to the first waiter, for its `ms`; otherwise the timer
/// at the lock's expiry.
fn grant_lock(
    ctx: &Ctx,
    lists: &mut WaitLists,
    line: LineId,
    key: &mut Key<'_>,
    waiting: &[(WaiterId, Want)],
) -> Vec<WaiterId> {
    if key.kind() != KeyKind::Empty {
        // Held: look again when it expires (a lock without a TTL waits for its release).
        let expires_in = key.ttl_ms().map(|ms| ms + 1);
        arm(ctx, lists, line, expires_in);
        return Vec::new();
    }
    let Some((id, Want::Lock { token, ms })) = waiting.first() else {
        return Vec::new();
    };
    let at_ms = (*ms > 0).then(|| ctx.now_ms().saturating_add(*ms));
    take_lock(ctx, key, token, at_ms);
    // The new holder's lease runs out at `at_ms`: the next waiter's turn, at the latest (a lock
    // without a lease waits for its release).
    arm(ctx, lists, line, at_ms.map(|_| *ms + 1));
    vec![*id]
}

/// Sets a token lock: `SET key token PXAT at_ms`, or `SET key token` without a lease, as SET
/// fires and replicates it.
pub fn take_lock(ctx: &Ctx, key: &mut Key<'_>, token: &[u8], at_ms: Option<i64>) {
    match at_ms {
        Some(at_ms) => effects::stored_with_expiry(ctx, key, token, at_ms, c"set"),
        None => effects::stored(ctx, key, token, c"set"),
    }
}

/// A lease: evicts what left the window (the head's), then admits the waiters at the head of
/// the line, in order, while each fits under its limit; then the timer at the oldest member's
/// age-out (or the key's expiry, if sooner).
fn grant_leases<'a>(
    ctx: &Ctx,
    lists: &mut WaitLists,
    line: LineId,
    key: &mut Key<'a>,
    waiting: &[(WaiterId, Want)],
    members: &'a [Option<OwnedString<'a>>],
) -> Vec<WaiterId> {
    if !matches!(key.kind(), KeyKind::Empty | KeyKind::SortedSet) {
        arm(ctx, lists, line, None);
        return Vec::new();
    }
    let now_ms = ctx.now_ms();
    let now = seconds_of(now_ms);
    let mut granted = Vec::new();
    let mut head_window = None;
    for ((id, want), member) in waiting.iter().zip(members) {
        let (Want::Lease { window, limit, .. }, Some(member)) = (want, member) else {
            break;
        };
        let member = member.arg();
        head_window.get_or_insert(*window);
        let cutoff = zwindow::cutoff(now, *window);
        let eviction = zwindow::evict(key, cutoff);
        effects::evicted(ctx, key, &eviction);
        let Ok(expiry) = zwindow::expiry(*window, now_ms) else {
            break;
        };
        let admission = zwindow::admit(key, &eviction, cutoff, *limit, now, &member);
        if let Some(zadded) = admission.zadded() {
            let changed = zadded != Zadded::Unchanged;
            effects::recorded(ctx, key, changed, now, member.as_bytes(), expiry);
        }
        if !admission.granted() {
            break;
        }
        granted.push(*id);
    }
    // The next change: the oldest member inside the head's window ages out (or the key goes).
    let still_waiting = waiting.len() > granted.len();
    let next = head_window.filter(|_| still_waiting).and_then(|window| {
        let cutoff = zwindow::cutoff(now, window);
        let ages_out = key
            .first_above(cutoff, |_, score| score + window)
            .map(|at| ((at * 1000.0).ceil() as i64).saturating_sub(now_ms) + 1);
        let expires = key.ttl_ms().map(|ms| ms + 1);
        match (ages_out, expires) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    });
    arm(ctx, lists, line, next);
    granted
}

/// The reply a granted waiter gets.
fn granted_reply(want: &Want) -> Reply<'static> {
    match want {
        Want::Lock { .. } => Reply::Status(c"OK"),
        Want::Lease { .. } => Reply::Int(1),
    }
}

/// The module's side of the server's callbacks.
pub struct Lines;

pub static LINES: Lines = Lines;

impl Waiting for Lines {
    fn reply(&self, ctx: &Ctx, waiter: WaiterId) -> Option<Reply<'static>> {
        // The server asks every client blocked on a key it signalled (where a waiter blocks
        // on its key itself, see `blocking_name`): only a granted one is served, and grants
        // are woken by their handle, so this is one granted as the server signalled.
        let mut book = book();
        if book.lists.waiter(waiter)?.state != State::Granted {
            return None;
        }
        let left = book.leave(waiter, false)?;
        retire(ctx, &mut book.lists, left.line);
        Some(granted_reply(&left.want))
    }

    fn timed_out(&self, ctx: &Ctx, waiter: WaiterId) -> Reply<'static> {
        let mut book = book();
        let Some(left) = book.leave(waiter, false) else {
            return Reply::Null;
        };
        if left.state == State::Granted {
            // Woken (`Blocked::wake`), or its grant and its time came together: it has the
            // lock.
            retire(ctx, &mut book.lists, left.line);
            return granted_reply(&left.want);
        }
        // Whoever came after may fit now (a lease's head that did not).
        ctx.timer(0, left.line);
        Reply::Null
    }

    fn gone(&self, ctx: &Ctx, waiter: WaiterId) {
        if let Some(left) = book().leave(waiter, true) {
            // Its grant, if it had one, goes back; the next waiter may be served.
            ctx.timer(0, left.line);
        }
    }

    fn freed(&self, ctx: &Ctx, waiter: WaiterId) {
        // Still in line: the server let it go without a reply (its connection closed after
        // its grant was written); the grant goes back.
        if let Some(left) = book().leave(waiter, true) {
            ctx.timer(0, left.line);
        }
    }

    fn run(&self, ctx: &Ctx, data: u64) {
        let line = data & !OWN_TIMER;
        if line == 0 {
            return;
        }
        let mut book = book();
        if data & OWN_TIMER != 0 {
            if let Some(state) = book.lists.line_mut(line) {
                // The line's own timer went off: there is none to stop any more.
                state.timer = None;
            }
        }
        let woken = reconsider(ctx, &mut book, line, true);
        wake(book, woken);
    }

    fn event(&self, ctx: &Ctx, _event: &CStr, key: Arg<'_>) {
        if WAITING.load(Ordering::Relaxed) == 0 {
            return;
        }
        // Taken: the event comes from one of Goblin's own writes, which looks for grants itself.
        let Ok(book) = BOOK.try_lock() else {
            return;
        };
        if let Some(line) = book.lists.line_of(ctx.db(), key.as_bytes()) {
            ctx.after_this(line);
        }
    }

    fn flushed(&self, ctx: &Ctx, db: Option<i32>) {
        let book = book();
        for line in book.lists.lines_of(db) {
            ctx.timer(0, line);
        }
    }
}
