//! What a look at a line reads of its key for the core's plan: a line of locks and leases as
//! `goblin_core::waitlist::plan::serve` takes it (the key's kind and expiry, the room each
//! waiting window has once what left every waiting window is evicted), a line of readers and
//! writers as `goblin_core::rwlock::serve` takes it (the lapsed read leases removed, the
//! readers waiting to be promoted whose lease still runs). Evictions write; the rest reads.

use goblin_core::clock::seconds_of;
use goblin_core::rwlock::{self, Held, COUNTED};
use goblin_core::waitlist::plan::{self, KeyNow, Plan};
use goblin_core::waitlist::{Ask, Line, LineId, WaitLists, WaiterId};
use goblin_core::zwindow::{self, Room, SortedWindow};

use crate::effects;
use crate::grant;
use crate::server::{Ctx, Key, KeyKind};

/// Who is let in now, and when to look again, for `line` on `key` at `now_ms`.
pub(super) fn serve(
    ctx: &Ctx,
    key: &mut Key<'_>,
    lists: &WaitLists,
    line: LineId,
    now_ms: i64,
    out_of_memory: bool,
) -> Plan {
    let Some(state) = lists.line(line) else {
        return Plan::default();
    };
    if state.reads_or_writes() {
        // Readers and writers wait in one order: `rwlock::serve`.
        return readers_and_writers(ctx, key, lists, line, now_ms, out_of_memory);
    }
    let rooms = rooms(ctx, key, state, seconds_of(now_ms));
    plan::serve(lists, line, key_now(key), &rooms, now_ms, out_of_memory)
}

/// Who still waits in a line once it has been served, as a readers-writer newcomer asks
/// (`rwlock::ahead`): whether a reader or a writer waits there (it comes after them), and the
/// tokens of the readers waiting to be promoted.
#[derive(Default)]
pub struct Ahead {
    pub someone_waits: bool,
    pub promotions: Vec<Vec<u8>>,
}

pub(super) fn ahead(lists: &WaitLists, line: LineId) -> Ahead {
    let (someone_waits, promotions) = rwlock::ahead(lists, line);
    Ahead {
        someone_waits,
        promotions: promotions.into_iter().map(<[u8]>::to_vec).collect(),
    }
}

/// What each group's window holds (one entry per group, a lock group's left empty), after the
/// window is evicted of what left every waiting window.
fn rooms(ctx: &Ctx, key: &mut Key<'_>, line: &Line, now: f64) -> Vec<Room> {
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

/// The key, as the plan of locks and leases takes it.
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

/// A look at a line where readers or writers wait: the lapsed read leases removed, the key
/// read, and the plan (`rwlock::serve`), with the readers waiting to be promoted whose read
/// lease still runs served first.
fn readers_and_writers(
    ctx: &Ctx,
    key: &mut Key<'_>,
    lists: &WaitLists,
    line: LineId,
    now_ms: i64,
    out_of_memory: bool,
) -> Plan {
    let lapsed = rwlock::lapsed_through(now_ms);
    let evicted = (key.kind() == KeyKind::SortedSet).then(|| effects::evict(ctx, key, lapsed));
    let held = match key.kind() {
        KeyKind::Empty => Held::Free,
        KeyKind::String => Held::Writer {
            expires_in_ms: key.ttl_ms(),
        },
        // More lapsed leases than one eviction takes, and none running: the set is not gone yet
        // (a waiting lock's string could not be written over it). The rest go on the next look,
        // a millisecond later.
        KeyKind::SortedSet
            if evicted.is_some_and(|eviction| !eviction.complete)
                && key.count_above(lapsed, 1) == 0 =>
        {
            Held::Other {
                expires_in_ms: Some(0),
            }
        }
        KeyKind::SortedSet => Held::Readers {
            live: key.count_above(lapsed, COUNTED),
            next_lapse_in_ms: rwlock::next_lapse_in_ms(key, now_ms),
        },
        KeyKind::Other => Held::Other {
            expires_in_ms: key.ttl_ms(),
        },
    };
    let promoting: Vec<WaiterId> = rwlock::waiting_promotions(lists, line)
        .into_iter()
        .filter(|(_, token)| grant::reads(ctx, key, token, now_ms))
        .map(|(id, _)| id)
        .collect();
    rwlock::serve(lists, line, held, &promoting, out_of_memory)
}
