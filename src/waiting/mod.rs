//! The lines the blocking acquires' waiters stand in (GOBLIN.BLOCK, GOBLIN.BZWINDOW,
//! GOBLIN.BRLOCK, GOBLIN.BWLOCK), on the module's side: the book of lines
//! (`goblin_core::waitlist`) and of the clients the server blocks, and one way a line is
//! served. A look (`look`) reads the key (`plan`), asks the core's plan who is let in, makes
//! their grants (`crate::grant::in_line`, the very grants their commands make), and wakes the
//! waiters served, each by its handle. There is no traffic from the waiters at all.
//!
//! A newcomer talks to its key's line once (`acquire`): the line is served first, so the
//! newcomer never goes before a waiter; its own command then decides on the key as it is, with
//! who still waits ahead of it; and if it is to wait, it joins the line and the server blocks it.
//!
//! A line is looked at wherever its key may have changed:
//!
//! - after any of Goblin's own commands that wrote the key (`Lines::changed`, which the entry
//!   point calls unless the command served the line itself), so nobody can take the lock in
//!   between;
//! - before a newcomer decides (`acquire`, `serve_first`): it comes after the line;
//! - after a keyspace event on a key with a line (a DEL, an expiry, an eviction, a ZREM ...),
//!   deferred to the end of the command, expiry or eviction under way (never inside the event
//!   itself, which may come before the deletion is replicated): one look owed however many
//!   events come, and none if another look came after them (the one that ends a command of
//!   Goblin's own that wrote the key, most often);
//! - on a timer at the key's next change, which the plan says: when the lock expires, when the
//!   oldest lease leaves its window, when a read lease lapses. While the server holds writes
//!   back (`CLIENT PAUSE WRITE`, a failover under way) no grant can be written, and the look is
//!   tried again every `PAUSED_RETRY_MS`: the one time a line is looked at on a clock of its
//!   own.
//!
//! A grant is its holder's once the server has written its reply out. A waiter that goes
//! before (its connection closed or killed after its grant was written, in the same
//! transaction, script or turn of the event loop, or while the server was busy) never had it:
//! its grant is taken back on a look at once, and the next in line served (`Lines::gone`,
//! `Lines::disconnected`).

mod plan;

pub use plan::Ahead;

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use goblin_core::waitlist::{blocking_name, LineId, State, WaitLists, Waiter, WaiterId, Want};

use crate::error::{self, CommandError};
use crate::grant;
use crate::server::{Arg, Blocked, Ctx, Key, Reply, Served, Waiting};

/// A waiter the server blocks, as the module keeps it beside its place in line.
struct Parked {
    /// Its handle, until it is woken.
    handle: Option<Blocked>,
    /// Its command's name: its errors are spelled as that command spells them.
    command: &'static CStr,
    /// Why its grant could not be made, when its turn came (`State::Refused`).
    refusal: Option<CommandError>,
}

/// The lines, and every waiter the server still blocks.
struct Book {
    lists: WaitLists,
    parked: BTreeMap<WaiterId, Parked>,
}

impl Book {
    /// Takes `waiter` out of its line (`revoke`: a grant it holds is to be taken back), with
    /// what the module kept of it.
    fn leave(&mut self, waiter: WaiterId, revoke: bool) -> Option<(Waiter, Option<Parked>)> {
        let parked = self.parked.remove(&waiter);
        let left = self.lists.leave(waiter, revoke);
        self.count();
        Some((left?, parked))
    }

    /// Takes `waiter` out of its line as it is answered, to `client`: a grant stays revocable
    /// until its reply is out (`WaitLists::answered`).
    fn answered(&mut self, waiter: WaiterId, client: u64) -> Option<(Waiter, Option<Parked>)> {
        let parked = self.parked.remove(&waiter);
        let left = self.lists.answered(waiter, client);
        self.count();
        Some((left?, parked))
    }

    fn count(&self) {
        WAITING.store(self.lists.waiting(), Ordering::Relaxed);
        DELIVERING.store(self.lists.delivering(), Ordering::Relaxed);
    }
}

/// Waiters to wake, once the book is put down (`wake`).
type Woken = Vec<(Blocked, WaiterId)>;

static BOOK: Mutex<Book> = Mutex::new(Book {
    lists: WaitLists::new(),
    parked: BTreeMap::new(),
});
/// Everyone in every line, read without the lock: most keyspace events and most commands are
/// on keys nobody waits for, and this answers them in a load.
static WAITING: AtomicUsize = AtomicUsize::new(0);
/// Whether a grant answered waits for its reply to go out, read without the lock: every client
/// that goes and every turn of the event loop asks.
static DELIVERING: AtomicBool = AtomicBool::new(false);
/// Clients gone while the book was held (never seen: no client is freed inside the module's
/// own functions), for the next `replies_out` to take their grants back.
static GONE_WHILE_HELD: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Whether one of Goblin's own commands runs while someone waits (`Lines::command_begins`):
/// the looks its writes' events owe are then held in `HELD_FOR_COMMAND` until it ends.
static IN_COMMAND: AtomicBool = AtomicBool::new(false);
/// The lines owed a look by events during the command under way.
static HELD_FOR_COMMAND: Mutex<Vec<LineId>> = Mutex::new(Vec::new());

/// Waits a little before looking again while the server holds writes back (CLIENT PAUSE WRITE,
/// a failover under way).
const PAUSED_RETRY_MS: i64 = 10;

/// The book. Callbacks of the server only run between commands, never while one of Goblin's
/// own functions holds it (waking a waiter waits until it is put down, see `wake`); keyspace
/// events can (a write fires one), and they only try it.
fn book() -> MutexGuard<'static, Book> {
    locked(&BOOK)
}

/// One of the module's statics, locked: a panic caught while one was held leaves it as it was
/// (no waiter is left unanswered for a poisoned lock).
fn locked<T>(mutex: &'static Mutex<T>) -> MutexGuard<'static, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn anyone_waits() -> bool {
    WAITING.load(Ordering::Relaxed) > 0
}

/// Wakes the waiters served. The server may answer one inside the call (`timed_out`, which
/// opens the book), so the book is put down first.
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

/// Before a newcomer that only reads the line's outcome decides on `key` (GOBLIN.LOCK,
/// GOBLIN.ZWINDOW): the line is served first, so the newcomer never goes before a waiter. Call
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

/// What a newcomer's command decides on its key, once the line ahead of it is served.
pub enum Decision {
    /// Its reply now: a grant, or nil.
    Now(Reply<'static>),
    /// Not now: it would wait in line for this.
    Wait(Want),
}

/// How a blocking acquire waits: for `timeout_ms` (0: for ever), answered in the words of
/// `command` (its name, lower case) when its grant cannot be made.
#[derive(Clone, Copy)]
pub struct Waits {
    pub timeout_ms: i64,
    pub command: &'static CStr,
}

/// A newcomer on `key`, in one conversation with its line: the line is served first; `decide`
/// then reads the key (open) with who still waits ahead, and grants, refuses, or asks to wait;
/// a caller that `waits` and may block joins the line then, and is blocked (`Reply::Blocked`),
/// or answered nil where it cannot wait (inside MULTI, a script, on a replica; a request that
/// could never be granted). Whatever `decide` wrote is served to the line before the call ends.
pub fn acquire<'c>(
    ctx: &'c Ctx,
    name: Arg<'c>,
    waits: Option<Waits>,
    decide: impl FnOnce(&mut Key<'c>, &Ahead) -> Result<Decision, CommandError>,
) -> Result<Reply<'static>, CommandError> {
    let mut held = anyone_waits().then(book);
    let mut woken = Vec::new();
    let mut ahead = Ahead::default();
    if let Some(book) = held.as_mut() {
        if let Some(line) = book.lists.line_of(ctx.db(), name.as_bytes()) {
            woken = look(ctx, book, line, Caller::Command);
            ahead = plan::ahead(&book.lists, line);
        }
    }
    let writes = ctx.writes();
    let mut key = ctx.open_key(name);
    let decided = decide(&mut key, &ahead);
    drop(key);
    // What the newcomer wrote for itself may let another in (an eviction frees room), and a
    // newcomer that waits may change when the line must be looked at again: the line is looked
    // at again then, in this same conversation.
    let mut look_again = ctx.writes() != writes;
    let reply = match decided {
        Ok(Decision::Now(reply)) => Ok(reply),
        Ok(Decision::Wait(want)) => Ok(match waits {
            Some(waits) if !ctx.placement().no_blocking && want.can_be_granted() => {
                let book = held.get_or_insert_with(book);
                let (reply, uncovered) = park(ctx, book, name, want, waits);
                look_again |= uncovered;
                reply
            }
            _ => Reply::Null,
        }),
        Err(error) => Err(error),
    };
    if look_again {
        if let Some(book) = held.as_mut() {
            if let Some(line) = book.lists.line_of(ctx.db(), name.as_bytes()) {
                woken.extend(look(ctx, book, line, Caller::Command));
            }
        }
    }
    // Nobody waited when the call began, or its line was served after its last write.
    ctx.lines_served();
    if let Some(book) = held {
        wake(book, woken);
    }
    reply
}

/// The newcomer joins `name`'s line for `want`, and the server blocks it: `Reply::Blocked`, or
/// nil where the server would not block it. Also whether the line must be looked at for the
/// timer of its next change: the newcomer asks as nobody in it does, or no timer is set.
fn park(
    ctx: &Ctx,
    book: &mut Book,
    name: Arg<'_>,
    want: Want,
    waits: Waits,
) -> (Reply<'static>, bool) {
    let ask = want.ask();
    let covered = book
        .lists
        .line_of(ctx.db(), name.as_bytes())
        .and_then(|line| book.lists.line(line))
        .is_some_and(|line| {
            line.timer.is_some() && line.groups.iter().any(|group| group.ask == ask)
        });
    let id = book.lists.join(ctx.db(), name.as_bytes(), want);
    // Blocked on a name of the key's slot that is never written (see `blocking_name`), or on
    // the key itself where no such name exists.
    let blocking = blocking_name(name.as_bytes()).map(|blocking| ctx.string(&blocking));
    let blocked_on = blocking.as_ref().map_or(name, |blocking| blocking.arg());
    let Some(blocked) = ctx.block_on(blocked_on, waits.timeout_ms, id) else {
        if let Some((left, _)) = book.leave(id, false) {
            retire(ctx, &mut book.lists, left.line);
        }
        return (Reply::Null, false);
    };
    book.parked.insert(
        id,
        Parked {
            handle: Some(blocked),
            command: waits.command,
            refusal: None,
        },
    );
    book.count();
    (Reply::Blocked, !covered)
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

/// Marks the data of a look owed for a keyspace event (`Line::event_owed`): skipped if another
/// look came after the event (most often the look that ends the command that wrote the key).
const FOR_EVENT: u64 = 1 << 62;

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

/// Looks at `line_id` once: takes back what gone waiters were granted, asks the plan who is let
/// in (`plan::serve`, which evicts what left every waiting window), writes their grants, and
/// sets the timer for the key's next change. Returns the waiters served, to `wake` once the book
/// is put down.
fn look(ctx: &Ctx, book: &mut Book, line_id: LineId, caller: Caller) -> Woken {
    let lists = &mut book.lists;
    let Some(line) = lists.line_mut(line_id) else {
        return Vec::new();
    };
    // Whatever any event before now asked for, this look sees.
    line.event_owed = false;
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
    grant::taken_back(ctx, &mut key, name.arg(), &revoked);
    let now_ms = ctx.now_ms();
    let mut woken = Vec::new();
    // A waiter whose grant cannot be made is answered its error and nothing is written for it;
    // those after it, whom the plan counted it for, are planned for again in this same look, so
    // that no newcomer finds the key free before them. Each refusal takes a waiter out of the
    // line, so there are no more rounds than the waiters left after the first refusal and one
    // to find none refused (counted then, not on every look); past that (never), a look of its
    // own.
    let mut rounds: Option<usize> = None;
    let look_again_ms = loop {
        let lists = &mut book.lists;
        let plan = plan::serve(ctx, &mut key, lists, line_id, now_ms, place.out_of_memory);
        let mut refused = false;
        for &(id, state) in &plan.served {
            let mut state = state;
            let mut token = None;
            let mut refusal = None;
            if state == State::Granted {
                let Some(want) = book.lists.waiter(id).map(|waiter| waiter.want.clone()) else {
                    continue;
                };
                match grant::in_line(ctx, &mut key, name.arg(), &want, now_ms) {
                    Some(Ok(minted)) => token = minted,
                    None => continue,
                    Some(Err(error)) => {
                        state = State::Refused;
                        refusal = Some(error);
                        refused = true;
                    }
                }
            }
            book.lists.serve(id, state, token);
            if let Some(parked) = book.parked.get_mut(&id) {
                parked.refusal = refusal;
                if let Some(handle) = parked.handle.take() {
                    woken.push((handle, id));
                }
            }
        }
        if !refused {
            break plan.look_again_ms;
        }
        let left = rounds.get_or_insert_with(|| {
            book.lists.line(line_id).map_or(0, |line| {
                line.groups
                    .iter()
                    .map(|group| group.waiters.len())
                    .sum::<usize>()
                    + 1
            })
        });
        if *left == 0 {
            ctx.timer(0, line_id);
            break plan.look_again_ms;
        }
        *left -= 1;
    };
    drop(key);
    arm(ctx, &mut book.lists, line_id, look_again_ms);
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

/// The reply of a waiter served: a grant's, the server's out-of-memory error, or the error its
/// own command would have got when its turn came (`State::Refused`). `None` while it waits.
fn reply_of(waiter: &Waiter, parked: Option<&Parked>) -> Option<Reply<'static>> {
    let command = parked.map_or(c"", |parked| parked.command);
    Some(match (waiter.state, &waiter.want, waiter.token) {
        (State::Waiting, _, _) => return None,
        (State::Granted, _, Some(token)) => Reply::Int(token),
        (State::Granted, Want::Lease { .. }, None) => Reply::Int(1),
        (State::Granted, _, None) => Reply::Status(c"OK"),
        (State::OutOfMemory, _, _) => Reply::Error(error::OUT_OF_MEMORY, command),
        (State::Refused, _, _) => {
            let refusal = parked.and_then(|parked| parked.refusal);
            Reply::Error(refusal.unwrap_or(CommandError::Internal), command)
        }
    })
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

/// Revokes the grants answered to `client` whose reply never went out, each on a look of its
/// own at its line (no key may be written here).
fn revoke_undelivered(ctx: &Ctx, book: &mut Book, client: u64) {
    for line in book.lists.disconnected(client) {
        ctx.timer(0, line);
    }
    book.count();
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

    fn command_begins(&self) {
        IN_COMMAND.store(true, Ordering::Relaxed);
    }

    fn command_ends(&self, ctx: &Ctx) {
        IN_COMMAND.store(false, Ordering::Relaxed);
        let mut held = locked(&HELD_FOR_COMMAND);
        if held.is_empty() {
            return;
        }
        let book = book();
        for line in held.drain(..) {
            if book.lists.line(line).is_some_and(|state| state.event_owed) {
                ctx.after_this(line | FOR_EVENT);
            }
        }
    }

    fn reply(&self, ctx: &Ctx, waiter: WaiterId) -> Option<Reply<'static>> {
        // The server asks every client blocked on a key it signalled (where a waiter blocks
        // on its key itself, see `blocking_name`): only one served is answered, and those are
        // woken by their handle, so this is one served as the server signalled.
        let mut book = book();
        let served = book.lists.waiter(waiter)?;
        reply_of(served, book.parked.get(&waiter))?;
        let (left, parked) = book.answered(waiter, ctx.client_id())?;
        retire(ctx, &mut book.lists, left.line);
        reply_of(&left, parked.as_ref())
    }

    fn timed_out(&self, ctx: &Ctx, waiter: WaiterId) -> Reply<'static> {
        let mut book = book();
        let Some((left, parked)) = book.answered(waiter, ctx.client_id()) else {
            return Reply::Null;
        };
        look_after_leaving(ctx, &book.lists, &left);
        retire(ctx, &mut book.lists, left.line);
        // Woken (`Blocked::wake`), or served as its time came: its grant, or the error.
        // Otherwise its time is up; it held nobody back, so nothing else changes.
        reply_of(&left, parked.as_ref()).unwrap_or(Reply::Null)
    }

    fn gone(&self, ctx: &Ctx, waiter: WaiterId) {
        let mut book = book();
        if let Some((left, _)) = book.leave(waiter, true) {
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

    fn disconnected(&self, ctx: &Ctx, client: u64) {
        if !DELIVERING.load(Ordering::Relaxed) {
            return;
        }
        match BOOK.try_lock() {
            Ok(mut book) => revoke_undelivered(ctx, &mut book, client),
            Err(_) => locked(&GONE_WHILE_HELD).push(client),
        }
    }

    fn replies_out(&self, ctx: &Ctx) {
        if !DELIVERING.load(Ordering::Relaxed) {
            return;
        }
        let mut book = book();
        let gone = std::mem::take(&mut *locked(&GONE_WHILE_HELD));
        for client in gone {
            revoke_undelivered(ctx, &mut book, client);
        }
        book.lists.delivered();
        book.count();
    }

    fn run(&self, ctx: &Ctx, data: u64) {
        let line = data & !(OWN_TIMER | FOR_EVENT);
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
        if data & FOR_EVENT != 0 && !book.lists.line(line).is_some_and(|state| state.event_owed) {
            // A look came after the event: the line is as that look left it.
            return;
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
        let Ok(mut book) = BOOK.try_lock() else {
            return;
        };
        let Some(line) = book.lists.line_of(ctx.db(), key.as_bytes()) else {
            return;
        };
        // One look owed, however many events come before it is paid. During a command of
        // Goblin's own it is held to the command's end, whose look at its key pays it most
        // often (Redis 7.0 would make a timer of it, for about 4,700 instructions).
        if let Some(state) = book.lists.line_mut(line) {
            if !state.event_owed {
                state.event_owed = true;
                if IN_COMMAND.load(Ordering::Relaxed) {
                    locked(&HELD_FOR_COMMAND).push(line);
                } else {
                    ctx.after_this(line | FOR_EVENT);
                }
            }
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
