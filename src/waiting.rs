//! The lines GOBLIN.BLOCK's and GOBLIN.BZWINDOW's waiters stand in, on the module's side: the
//! book of lines (`goblin_core::waitlist`) and of the handles of the clients the server blocks,
//! and one way a line is served. A look (`look`) reads the key, asks the core's plan
//! (`waitlist::plan`) who is let in, makes their grants (`crate::grant`, the very grants
//! GOBLIN.LOCK and GOBLIN.ZWINDOW make), and wakes the waiters served, each by its handle. There
//! is no traffic from the waiters at all.
//!
//! A line is looked at wherever its key may have changed:
//!
//! - after any of Goblin's own commands that wrote the key (`Lines::changed`, which the entry
//!   point calls), so nobody can take the lock in between;
//! - before a newcomer that does not wait decides (`serve_first`): it comes after the line;
//! - after a keyspace event on a key with a line (a DEL, an expiry, an eviction, a ZREM ...),
//!   deferred to the end of the command, expiry or eviction under way (never inside the event
//!   itself, which may come before the deletion is replicated);
//! - on a timer at the key's next change, which the plan says: when the lock expires, when the
//!   oldest lease leaves its window. While the server holds writes back (`CLIENT PAUSE WRITE`,
//!   a failover under way) no grant can be written, and the look is tried again every
//!   `PAUSED_RETRY_MS`: the one time a line is looked at on a clock of its own.

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use goblin_core::clock::seconds_of;
use goblin_core::rwlock;
use goblin_core::waitlist::plan::{self, KeyNow};
use goblin_core::waitlist::{blocking_name, Ask, LineId, State, WaitLists, Waiter, WaiterId, Want};
use goblin_core::zwindow::{self, Room};

use crate::commands;
use crate::effects::{self, Deletion};
use crate::error::{self, CommandError};
use crate::fencing;
use crate::grant::{self, Permits, Slots};
use crate::server::{Arg, Blocked, Ctx, Key, KeyKind, Reply, Served, Waiting};

/// The lines, and the handle of every waiter the server still blocks and nobody has woken.
struct Book {
    lists: WaitLists,
    handles: BTreeMap<WaiterId, Blocked>,
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

static BOOK: Mutex<Book> = Mutex::new(Book {
    lists: WaitLists::new(),
    handles: BTreeMap::new(),
});
/// Everyone in every line, read without the lock: most keyspace events and most commands are
/// on keys nobody waits for, and this answers them in a load.
static WAITING: AtomicUsize = AtomicUsize::new(0);

/// Waits a little before looking again while the server holds writes back (CLIENT PAUSE WRITE,
/// a failover under way).
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

fn anyone_waits() -> bool {
    WAITING.load(Ordering::Relaxed) > 0
}

/// Wakes the waiters served. The server may answer one inside the call (`timed_out`, which
/// opens the book), so the book is put down first: `woken` is what `look` gave back.
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
    book().lists.lines() as u64
}

/// A timeout the server can add to its clock, with a margin for the clock it reads then (as
/// BLPOP's: `ERR timeout is out of range` past it).
pub fn timeout_fits(ctx: &Ctx, timeout_ms: i64) -> Result<(), CommandError> {
    let room = i64::MAX - ctx.now_ms().max(0) - 1_000_000_000;
    if timeout_ms > room {
        return Err(error::timeout::OUT_OF_RANGE);
    }
    Ok(())
}

/// Before a newcomer decides on `key` (GOBLIN.LOCK, GOBLIN.BLOCK, GOBLIN.ZWINDOW,
/// GOBLIN.BZWINDOW): the line is served first, so the newcomer never goes before a waiter. Call
/// it before the command opens the key.
pub fn serve_first(ctx: &Ctx, key: Arg<'_>) {
    look_at_key(ctx, key);
}

/// Serves the line of `key`, if it has one, from a command's own call.
fn look_at_key(ctx: &Ctx, key: Arg<'_>) {
    if !anyone_waits() {
        return;
    }
    let mut book = book();
    let woken = match book.lists.line_of(ctx.db(), key.as_bytes()) {
        Some(line) => look(ctx, &mut book, line, Caller::Command),
        None => Vec::new(),
    };
    wake(book, woken);
}

/// Who still waits in `key`'s line once it has been served (`serve_first`), as a readers-writer
/// newcomer asks (`rwlock::ahead`): whether a reader or a writer waits there (it comes after
/// them), and the tokens of the readers waiting to be promoted.
pub fn ahead(ctx: &Ctx, key: Arg<'_>) -> (bool, Vec<Vec<u8>>) {
    if !anyone_waits() {
        return (false, Vec::new());
    }
    let book = book();
    let Some(line) = book.lists.line_of(ctx.db(), key.as_bytes()) else {
        return (false, Vec::new());
    };
    let (someone_waits, promotions) = rwlock::ahead(&book.lists, line);
    (
        someone_waits,
        promotions.into_iter().map(<[u8]>::to_vec).collect(),
    )
}

/// Puts the caller at the end of `key`'s line for `want`, blocked for `timeout_ms` (0: for
/// ever). `false` if it is not to wait: its request could never be granted, or the server would
/// not block it; the caller then answers at once.
pub fn wait(ctx: &Ctx, key: Arg<'_>, want: Want, timeout_ms: i64) -> bool {
    if !want.can_be_granted() {
        return false;
    }
    let mut book = book();
    let id = book.lists.join(ctx.db(), key.as_bytes(), want);
    // Blocked on a name of the key's slot that is never written (see `blocking_name`), or on
    // the key itself where no such name exists.
    let name = blocking_name(key.as_bytes()).map(|name| ctx.string(&name));
    let blocked_on = name.as_ref().map_or(key, |name| name.arg());
    let Some(blocked) = ctx.block_on(blocked_on, timeout_ms, id) else {
        let line = book.leave(id, false).map(|waiter| waiter.line);
        if let Some(line) = line {
            retire(ctx, &mut book.lists, line);
        }
        return false;
    };
    book.handles.insert(id, blocked);
    count(&book.lists);
    // The key is taken: the look sets the timer for its next change.
    let woken = match book.lists.line_of(ctx.db(), key.as_bytes()) {
        Some(line) => look(ctx, &mut book, line, Caller::Command),
        None => Vec::new(),
    };
    wake(book, woken);
    true
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

/// Who looks at a line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Caller {
    /// A command of the module's own, on the line's key: the server routed it here, and its
    /// db is the line's.
    Command,
    /// A timer or a deferred job, whose db may not be the line's, and in a cluster whose node
    /// may no longer serve its key.
    Elsewhere,
}

/// Looks at `line_id` once: takes back what gone waiters were granted, evicts what left every
/// waiting window, asks the plan who is let in, writes their grants, and sets the timer for the
/// key's next change. Returns the waiters served, to `wake` once the book is put down.
fn look(ctx: &Ctx, book: &mut Book, line_id: LineId, caller: Caller) -> Woken {
    let lists = &mut book.lists;
    let Some(line) = lists.line(line_id) else {
        return Vec::new();
    };
    let (db, name) = (line.db, line.key.clone());
    if caller == Caller::Elsewhere {
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
    if caller == Caller::Elsewhere && place.cluster {
        match ctx.serves(name.arg()) {
            Served::Here => {}
            // The slot moved, migrates and the key has gone with it, or is still being imported
            // here: the grant is the owner's to make. The server redirects the waiters
            // (`-MOVED`) once the move is done.
            Served::Elsewhere => return forsake(ctx, book, line_id),
            // The cluster is down: nothing is written, and the line waits as it is.
            Served::Unknown => return Vec::new(),
        }
    }
    let revoked = lists.take_revoked(line_id);
    let mut key = ctx.open_key(name.arg());
    take_back(ctx, &mut key, name.arg(), &revoked);
    let now_ms = ctx.now_ms();
    let now = seconds_of(now_ms);
    let (plan, wants) = {
        let Some(line) = lists.line(line_id) else {
            return Vec::new();
        };
        let plan = if line.reads_or_writes() {
            // Readers and writers wait in one order: `rwlock::serve`.
            let oom = place.out_of_memory;
            commands::rwlock::line_plan(ctx, &mut key, lists, line_id, now_ms, oom)
        } else {
            let rooms = rooms(ctx, &mut key, line, now);
            let key_now = key_now(&key);
            plan::serve(lists, line_id, key_now, &rooms, now_ms, place.out_of_memory)
        };
        let wants: Vec<Option<Want>> = plan
            .served
            .iter()
            .map(|(id, _)| lists.waiter(*id).map(|waiter| waiter.want.clone()))
            .collect();
        (plan, wants)
    };
    let mut woken = Vec::with_capacity(plan.served.len());
    let mut refused = false;
    for (&(id, state), want) in plan.served.iter().zip(wants) {
        let mut state = state;
        let mut token = None;
        if state == State::Granted {
            let Some(want) = want else {
                continue;
            };
            match grant(ctx, &mut key, name.arg(), &want, now_ms) {
                Some(Ok(minted)) => token = minted,
                None => continue,
                Some(Err(error)) => {
                    // Nothing is written for it, and it is answered the error its own command
                    // would get; those after it, whom the plan counted it for, are looked at
                    // again at once.
                    state = self::refused(error);
                    refused = true;
                }
            }
        }
        book.lists.serve(id, state, token);
        if let Some(blocked) = book.handles.remove(&id) {
            woken.push((blocked, id));
        }
    }
    drop(key);
    arm(ctx, &mut book.lists, line_id, plan.look_again_ms);
    if refused {
        ctx.timer(0, line_id);
    }
    retire(ctx, &mut book.lists, line_id);
    woken
}

/// What is left to do for a line whose key another node serves: nothing. Its key, and with it
/// what its departed waiters were granted, belong to the node that serves it, where those grants
/// end with their leases, as a holder's that died would: this node can take nothing back. The
/// line is forgotten once nobody in it waits for this node's reply (the server answers its
/// waiters `-MOVED` when the move is done), so that a slot moving back finds no line from before.
fn forsake(ctx: &Ctx, book: &mut Book, line: LineId) -> Woken {
    book.lists.take_revoked(line);
    retire(ctx, &mut book.lists, line);
    Vec::new()
}

/// Writes `want`'s grant on `key` (named `name`) at `now_ms`: the very grant its own command
/// would make (`crate::grant`), with its fencing token if it asked for one; an error (nothing
/// written) if it cannot be made: a token the server cannot mint, a lease end past 64-bit
/// milliseconds. `None` where a readers-writer waiter is not let in after all (it waits on).
fn grant(
    ctx: &Ctx,
    key: &mut Key<'_>,
    name: Arg<'_>,
    want: &Want,
    now_ms: i64,
) -> Option<Result<Option<i64>, CommandError>> {
    match want {
        Want::Lock { token, ms, fence } => {
            let lock = grant::Lock {
                token,
                ms: *ms,
                fence: *fence,
            };
            Some(grant::lock(ctx, key, name, lock, now_ms))
        }
        Want::Lease {
            member,
            window,
            permits,
            separator,
            fence,
            ..
        } => {
            let member = ctx.string(member);
            let lease = grant::Lease {
                member: member.arg(),
                window: *window,
                permits: Permits {
                    count: *permits,
                    separator: separator.as_deref(),
                },
                fence: *fence,
            };
            let asked = match lease.ask(ctx, name, now_ms) {
                Ok(asked) => asked,
                Err(error) => return Some(Err(error)),
            };
            let slots = Slots::of(ctx, member.arg(), lease.permits);
            let now = seconds_of(now_ms);
            // A renewal as the command's seat reads it: the member inside its window.
            let holds = zwindow::holds(&*key, &member.arg(), zwindow::cutoff(now, *window));
            Some(Ok(asked.write(ctx, key, &slots, now, holds).1))
        }
        // The readers-writer lock's grants are its family's (`None`: the key does not let the
        // waiter in after all, or its lease would end past what a score holds; it waits on).
        Want::Read { .. } | Want::Write { .. } => {
            commands::rwlock::granted_in_line(ctx, key, name, want, now_ms)
        }
    }
}

/// What a waiter whose grant could not be made is answered (nothing was written for it). Its
/// request was checked when it called; what can change while it waits is the clock: past the
/// end of 64-bit milliseconds for its lease, or behind a stored fencing token.
fn refused(error: CommandError) -> State {
    if error == CommandError::InvalidExpire {
        State::InvalidExpire
    } else {
        State::ClockBehind
    }
}

/// Takes back the grants of waiters that left before their reply (`plan::take_back`): the lock
/// if it still holds one of their tokens, their members from the window (and a member's
/// fencing token).
fn take_back(ctx: &Ctx, key: &mut Key<'_>, name: Arg<'_>, revoked: &[Want]) {
    if revoked.is_empty() {
        return;
    }
    let value = (key.kind() == KeyKind::String)
        .then(|| key.string())
        .flatten();
    let back = plan::take_back(revoked, value);
    if back.delete_lock {
        effects::deleted(ctx, key, Deletion::Unlink);
    }
    for token in back.readers {
        commands::rwlock::reader_taken_back(ctx, key, name, token);
    }
    for back in back.members {
        if key.kind() == KeyKind::SortedSet {
            let member = ctx.string(back.member);
            let permits = Permits {
                count: back.permits,
                separator: back.separator,
            };
            let slots = Slots::of(ctx, member.arg(), permits);
            if effects::release_members(ctx, key, &slots.members()) {
                fencing::lease_released(ctx, name, back.member);
            }
        }
    }
}

/// What each group's window holds (one entry per group, a lock group's left empty), after the
/// window is evicted of what left every waiting window.
fn rooms(ctx: &Ctx, key: &mut Key<'_>, line: &goblin_core::waitlist::Line, now: f64) -> Vec<Room> {
    let cutoff = plan::eviction_cutoff(line, now);
    let eviction = match cutoff {
        Some(cutoff) if key.kind() == KeyKind::SortedSet => effects::evict(ctx, key, cutoff),
        _ => return vec![Room::default(); line.groups.len()],
    };
    line.groups
        .iter()
        .map(|group| match group.ask {
            Ask::Lease { limit, .. } => {
                let window = group.ask.window().unwrap_or_default();
                zwindow::room(key, &eviction, zwindow::cutoff(now, window), limit)
            }
            Ask::Lock | Ask::Read | Ask::Write { .. } => Room::default(),
        })
        .collect()
}

/// The key, as the plan takes it.
fn key_now<'k>(key: &'k Key<'_>) -> KeyNow<'k> {
    let expires_in_ms = key.ttl_ms();
    match key.kind() {
        KeyKind::Empty => KeyNow::Empty,
        KeyKind::String => KeyNow::String {
            value: key.string().unwrap_or_default(),
            expires_in_ms,
        },
        KeyKind::SortedSet => KeyNow::SortedSet { expires_in_ms },
        KeyKind::Other => KeyNow::Other { expires_in_ms },
    }
}

/// The reply of a waiter served: a grant's, or the server's out-of-memory error.
fn served_reply(waiter: &Waiter) -> Option<Reply<'static>> {
    match (waiter.state, &waiter.want, waiter.token) {
        (State::Granted, _, Some(token)) => Some(Reply::Int(token)),
        (State::Granted, Want::Lock { .. } | Want::Read { .. } | Want::Write { .. }, None) => {
            Some(Reply::Status(c"OK"))
        }
        (State::Granted, Want::Lease { .. }, None) => Some(Reply::Int(1)),
        (State::OutOfMemory, _, _) => Some(Reply::Error(error::OUT_OF_MEMORY)),
        (State::ClockBehind, _, _) => Some(Reply::Error(error::fence::CLOCK_BEHIND)),
        (State::InvalidExpire, Want::Lock { .. }, _) => {
            Some(Reply::Error(error::waiting::BLOCK_INVALID_EXPIRE))
        }
        (State::InvalidExpire, Want::Lease { .. }, _) => {
            Some(Reply::Error(error::waiting::BZWINDOW_INVALID_EXPIRE))
        }
        (State::InvalidExpire, Want::Read { .. }, _) => {
            Some(Reply::Error(error::waiting::BRLOCK_INVALID_EXPIRE))
        }
        (State::InvalidExpire, Want::Write { .. }, _) => {
            Some(Reply::Error(error::waiting::BWLOCK_INVALID_EXPIRE))
        }
        (State::Waiting, _, _) => None,
    }
}

/// A waiter left its line without a grant (its time is up, it is gone). In a line of readers
/// and writers the first who does not fit holds back everyone after it, so those after it may
/// fit now: the line is looked at again, on a look of its own (no key may be written here).
fn look_after_leaving(ctx: &Ctx, lists: &WaitLists, left: &Waiter) {
    let held_back = lists
        .line(left.line)
        .is_some_and(|line| line.reads_or_writes());
    if left.state == State::Waiting && held_back {
        ctx.timer(0, left.line);
    }
}

/// The module's side of the server's callbacks.
pub struct Lines;

pub static LINES: Lines = Lines;

impl Waiting for Lines {
    fn anyone(&self) -> bool {
        anyone_waits()
    }

    fn changed(&self, ctx: &Ctx, key: Arg<'_>) {
        look_at_key(ctx, key);
    }

    fn reply(&self, ctx: &Ctx, waiter: WaiterId) -> Option<Reply<'static>> {
        // The server asks every client blocked on a key it signalled (where a waiter blocks
        // on its key itself, see `blocking_name`): only one served is answered, and those are
        // woken by their handle, so this is one served as the server signalled.
        let mut book = book();
        served_reply(book.lists.waiter(waiter)?)?;
        let left = book.leave(waiter, false)?;
        retire(ctx, &mut book.lists, left.line);
        served_reply(&left)
    }

    fn timed_out(&self, ctx: &Ctx, waiter: WaiterId) -> Reply<'static> {
        let mut book = book();
        let Some(left) = book.leave(waiter, false) else {
            return Reply::Null;
        };
        look_after_leaving(ctx, &book.lists, &left);
        retire(ctx, &mut book.lists, left.line);
        // Woken (`Blocked::wake`), or served as its time came: its grant, or the error.
        // Otherwise its time is up; it held nobody back, so nothing else changes.
        served_reply(&left).unwrap_or(Reply::Null)
    }

    fn gone(&self, ctx: &Ctx, waiter: WaiterId) {
        let mut book = book();
        if let Some(left) = book.leave(waiter, true) {
            // A grant it had goes back, on a look of its own (no key may be written here).
            if left.state == State::Granted {
                ctx.timer(0, left.line);
            } else {
                look_after_leaving(ctx, &book.lists, &left);
                retire(ctx, &mut book.lists, left.line);
            }
        }
    }

    fn freed(&self, ctx: &Ctx, waiter: WaiterId) {
        // Still in line: the server let it go without a reply (its connection closed after
        // it was served); a grant goes back.
        self.gone(ctx, waiter);
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
        let woken = look(ctx, &mut book, line, Caller::Elsewhere);
        wake(book, woken);
    }

    fn event(&self, ctx: &Ctx, _event: &CStr, key: Arg<'_>) {
        if !anyone_waits() {
            return;
        }
        // Taken: the event comes from one of Goblin's own writes, whose command looks at the
        // line itself once it is done.
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

    fn slots_moved(&self, ctx: &Ctx) {
        // Each line is looked at: one whose key moved is forsaken (`forsake`).
        self.flushed(ctx, None);
    }
}
