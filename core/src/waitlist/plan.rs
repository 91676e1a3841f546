//! How a line is served, decided from plain values: what the key holds now, what each lease
//! group's window holds, the time, and whether the server is out of memory. The module reads
//! those, asks here, and carries the plan out through its effects (the same writes as
//! GOBLIN.LOCK's and GOBLIN.ZWINDOW's), then wakes the waiters served.
//!
//! The rule, which the command pages state:
//!
//! - each waiter is measured against its own request, as its own GOBLIN.LOCK or GOBLIN.ZWINDOW
//!   call would be: a lock fits a free key; a lease fits while its window has room under its
//!   `limit` for its permits (1, or `PERMITS n`);
//! - waiters are served in the order they came. One that does not fit is passed over, with the
//!   rest of its group (those who ask as it does, who cannot fit either), and the waiters after
//!   it who do fit are served: no request the window cannot satisfy holds anyone back;
//! - each grant counts for those after it (a lease's members, one per permit, are inside
//!   every window from now on; a lock taken is held);
//! - while the server is out of memory nothing is written: each waiter whose turn comes is
//!   answered with the server's out-of-memory error instead, as a blocked command of the
//!   server's own is when it is served then.
//!
//! A newcomer that does not wait (GOBLIN.LOCK, a GOBLIN.ZWINDOW newcomer) comes after the line:
//! the module serves the line first, so it is refused exactly when a waiter who asks as it
//! does is still waiting.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Ask, Line, LineId, State, WaitLists, WaiterId, Want};
use crate::zwindow;

/// The key, as a line sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyNow<'a> {
    Empty,
    /// A string (a lock held by `value`), with the milliseconds it has left, if it expires.
    String {
        value: &'a [u8],
        expires_in_ms: Option<i64>,
    },
    /// A sorted set, with the milliseconds it has left, if it expires.
    SortedSet {
        expires_in_ms: Option<i64>,
    },
    /// Another type: nobody fits until it goes.
    Other {
        expires_in_ms: Option<i64>,
    },
}

impl KeyNow<'_> {
    fn expires_in_ms(&self) -> Option<i64> {
        match *self {
            KeyNow::Empty => None,
            KeyNow::String { expires_in_ms, .. }
            | KeyNow::SortedSet { expires_in_ms }
            | KeyNow::Other { expires_in_ms } => expires_in_ms,
        }
    }
}

/// What the grants of waiters gone before their reply leave to take back: the lock, if the key
/// still holds one of their tokens; and every lease's member with its permits, wherever they
/// still are.
#[derive(Debug, Default, PartialEq)]
pub struct TakeBack<'a> {
    pub delete_lock: bool,
    pub members: Vec<Slots<'a>>,
    /// A readers-writer lock's read leases, by their tokens.
    pub readers: Vec<&'a [u8]>,
}

/// A lease's slots, as `zwindow::permit_member` names them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slots<'a> {
    pub member: &'a [u8],
    pub permits: usize,
    pub separator: Option<&'a [u8]>,
}

/// What to take back of `revoked`, the key holding `value` (a string's, if it is one). A writer's
/// lease is a lock's; one that was a reader's before it was promoted goes whole.
pub fn take_back<'a>(revoked: &'a [Want], value: Option<&[u8]>) -> TakeBack<'a> {
    let mut back = TakeBack::default();
    for want in revoked {
        match want {
            Want::Lock { token, .. } | Want::Write { token, .. } => {
                back.delete_lock |= value == Some(token.as_slice())
            }
            Want::Read { token, .. } => back.readers.push(token),
            Want::Lease {
                member,
                permits,
                separator,
                ..
            } => back.members.push(Slots {
                member,
                permits: *permits,
                separator: separator.as_deref(),
            }),
        }
    }
    back
}

/// Where the line evicts a sorted set before it counts: what has left every waiting window,
/// the cutoff of the longest of them (members at or below it count for nobody). `None`
/// without lease waiters.
pub fn eviction_cutoff(line: &Line, now: f64) -> Option<f64> {
    line.groups
        .iter()
        .filter_map(|group| group.ask.window())
        .map(|window| zwindow::cutoff(now, window))
        .min_by(f64::total_cmp)
}

/// What one look serves, and when the next is due.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// The waiters served, in order: `Granted` (its grant is to be written, as its want says)
    /// or `OutOfMemory`.
    pub served: Vec<(WaiterId, State)>,
    /// When to look again, in milliseconds from now: a lock's expiry, the first member to
    /// leave a waiting window, the key's expiry, whichever comes first. `None`: only a change
    /// of the key can let a waiter in.
    pub look_again_ms: Option<i64>,
}

/// What the key is, as the look goes on: each grant changes it for those after.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Seen {
    Free,
    /// A lock is held.
    Held,
    Window,
    /// Another type.
    Other,
}

/// Serves `line` of `lists` once: whom the key lets in now, in the order above, and when to
/// look again. `rooms` has one entry per group of the line, in its order: what a lease
/// group's window holds now (`zwindow::room`; a lock group's is not read). Reads only.
pub fn serve(
    lists: &WaitLists,
    line: LineId,
    key: KeyNow<'_>,
    rooms: &[zwindow::Room],
    now_ms: i64,
    out_of_memory: bool,
) -> Plan {
    let Some(line) = lists.line(line) else {
        return Plan::default();
    };
    let mut seen = match key {
        KeyNow::Empty => Seen::Free,
        KeyNow::String { .. } => Seen::Held,
        KeyNow::SortedSet { .. } => Seen::Window,
        KeyNow::Other { .. } => Seen::Other,
    };
    // When the key goes, as the grants leave it: each arms its own expiry.
    let mut expires_in_ms = key.expires_in_ms();
    let room = |group: usize| rooms.get(group).copied().unwrap_or_default();
    // The next waiter of each group, the earliest first (ids rise in arrival order).
    let mut next: BinaryHeap<Reverse<(WaiterId, usize, usize)>> = line
        .groups
        .iter()
        .enumerate()
        .filter_map(|(group, g)| g.waiters.front().map(|&id| Reverse((id, group, 0))))
        .collect();
    let mut plan = Plan::default();
    let mut admitted = 0usize;
    let mut passed_over = Vec::new();
    while let Some(Reverse((id, group, at))) = next.pop() {
        let ask = line.groups[group].ask;
        let fits = match ask {
            Ask::Lock => seen == Seen::Free,
            Ask::Lease { limit, permits, .. } => {
                matches!(seen, Seen::Free | Seen::Window)
                    && zwindow::fits_permits(room(group).in_window + admitted, permits, limit)
            }
            // A line with readers or writers is served by `rwlock::serve`.
            Ask::Read | Ask::Write { .. } => false,
        };
        if !fits {
            passed_over.push(group);
            continue;
        }
        if out_of_memory {
            plan.served.push((id, State::OutOfMemory));
        } else {
            plan.served.push((id, State::Granted));
            match lists.waiter(id).map(|waiter| &waiter.want) {
                Some(Want::Lock { ms, .. }) => {
                    seen = Seen::Held;
                    expires_in_ms = (*ms > 0).then_some(*ms);
                }
                Some(Want::Lease {
                    window, permits, ..
                }) => {
                    seen = Seen::Window;
                    admitted += permits;
                    expires_in_ms = Some((window * 1000.0).ceil() as i64);
                }
                Some(Want::Read { .. } | Want::Write { .. }) | None => {}
            }
        }
        if let Some(&following) = line.groups[group].waiters.get(at + 1) {
            next.push(Reverse((following, group, at + 1)));
        }
    }
    // A key that goes lets everyone in; until then, a lease waits for the oldest member
    // inside its window to leave it (one admitted now, if none was there before).
    let key_goes = expires_in_ms.map(|ms| ms + 1);
    plan.look_again_ms = passed_over
        .into_iter()
        .filter_map(|group| match (line.groups[group].ask.window(), seen) {
            (Some(window), Seen::Window | Seen::Free) => {
                // The members admitted now are inside at `now`; one already there, scored
                // later on a caller's clock, leaves after them.
                let now = crate::clock::seconds_of(now_ms);
                let oldest = match room(group).oldest {
                    Some(oldest) if admitted == 0 => oldest,
                    Some(oldest) => oldest.min(now),
                    None => now,
                };
                let leaves = ((oldest + window) * 1000.0).ceil() as i64;
                let leaves_in = leaves.saturating_sub(now_ms).max(0) + 1;
                Some(key_goes.map_or(leaves_in, |ms| leaves_in.min(ms)))
            }
            _ => key_goes,
        })
        .min();
    plan
}

#[cfg(test)]
mod tests {
    use super::super::tests::{lease, lock};
    use super::*;
    use crate::zwindow::Room;

    const NOW_MS: i64 = 1_000_000;

    fn granted(plan: &Plan) -> Vec<WaiterId> {
        plan.served
            .iter()
            .filter(|(_, state)| *state == State::Granted)
            .map(|(id, _)| *id)
            .collect()
    }

    fn rooms(line: &Line, in_window: usize, oldest: Option<f64>) -> Vec<Room> {
        line.groups
            .iter()
            .map(|_| Room { in_window, oldest })
            .collect()
    }

    #[test]
    fn a_free_lock_goes_to_the_first_waiter_and_the_next_look_is_at_its_lease() {
        let mut lists = WaitLists::new();
        let a = lists.join(0, b"k", lock("a"));
        lists.join(0, b"k", lock("b"));
        let line = lists.line_of(0, b"k").unwrap();
        let plan = serve(&lists, line, KeyNow::Empty, &[], NOW_MS, false);
        assert_eq!(plan.served, [(a, State::Granted)]);
        assert_eq!(
            plan.look_again_ms,
            Some(1001),
            "a's lease of 1000 ms, and a ms more"
        );
    }

    #[test]
    fn a_held_lock_is_looked_at_again_when_it_expires_or_when_it_is_released() {
        let mut lists = WaitLists::new();
        lists.join(0, b"k", lock("a"));
        let line = lists.line_of(0, b"k").unwrap();
        let held = |expires_in_ms| KeyNow::String {
            value: b"x",
            expires_in_ms,
        };
        let plan = serve(&lists, line, held(Some(250)), &[], NOW_MS, false);
        assert_eq!((plan.served.len(), plan.look_again_ms), (0, Some(251)));
        let plan = serve(&lists, line, held(None), &[], NOW_MS, false);
        assert_eq!((plan.served.len(), plan.look_again_ms), (0, None));
    }

    #[test]
    fn leases_go_in_order_while_they_fit_and_each_counts_for_the_next() {
        let mut lists = WaitLists::new();
        let ids: Vec<_> = (0..4)
            .map(|i| lists.join(0, b"k", lease(&i.to_string(), 3)))
            .collect();
        let line = lists.line_of(0, b"k").unwrap();
        let window = KeyNow::SortedSet {
            expires_in_ms: Some(9_000),
        };
        let rooms = rooms(lists.line(line).unwrap(), 1, Some(995.5));
        let plan = serve(&lists, line, window, &rooms, NOW_MS, false);
        assert_eq!(granted(&plan), ids[..2]);
        // The oldest member (995.5) leaves the 10 s window at 1005.5 s: 5,500 ms from now.
        assert_eq!(plan.look_again_ms, Some(5_501));
    }

    #[test]
    fn a_waiter_that_cannot_fit_holds_back_nobody_who_can() {
        // The line: a waiter for 1 slot first, then one for 5, on a window holding 3.
        let mut lists = WaitLists::new();
        let small = lists.join(0, b"k", lease("small", 1));
        let big = lists.join(0, b"k", lease("big", 5));
        let small_too = lists.join(0, b"k", lease("small-too", 1));
        let line = lists.line_of(0, b"k").unwrap();
        let window = KeyNow::SortedSet {
            expires_in_ms: None,
        };
        let rooms = rooms(lists.line(line).unwrap(), 3, Some(999.0));
        let plan = serve(&lists, line, window, &rooms, NOW_MS, false);
        assert_eq!(granted(&plan), [big]);
        assert!(!granted(&plan).contains(&small) && !granted(&plan).contains(&small_too));
        // The first lease leaves the window at 1009 s.
        assert_eq!(plan.look_again_ms, Some(9_001));
    }

    #[test]
    fn waiters_who_ask_alike_keep_their_order() {
        let mut lists = WaitLists::new();
        let first = lists.join(0, b"k", lease("first", 2));
        let second = lists.join(0, b"k", lease("second", 2));
        let line = lists.line_of(0, b"k").unwrap();
        let window = KeyNow::SortedSet {
            expires_in_ms: None,
        };
        let rooms = rooms(lists.line(line).unwrap(), 1, Some(999.0));
        let plan = serve(&lists, line, window, &rooms, NOW_MS, false);
        assert_eq!(granted(&plan), [first]);
        assert!(!granted(&plan).contains(&second));
    }

    #[test]
    fn out_of_memory_every_waiter_whose_turn_comes_is_refused_and_nothing_is_granted() {
        let mut lists = WaitLists::new();
        let a = lists.join(0, b"k", lock("a"));
        let b = lists.join(0, b"k", lock("b"));
        let line = lists.line_of(0, b"k").unwrap();
        let plan = serve(&lists, line, KeyNow::Empty, &[], NOW_MS, true);
        assert_eq!(
            plan.served,
            [(a, State::OutOfMemory), (b, State::OutOfMemory)]
        );
        assert_eq!(plan.look_again_ms, None);
    }

    #[test]
    fn a_lock_and_a_lease_on_one_free_key_go_by_arrival_and_the_first_decides_its_type() {
        let mut lists = WaitLists::new();
        let l = lists.join(0, b"k", lease("m", 2));
        let k = lists.join(0, b"k", lock("t"));
        let line = lists.line_of(0, b"k").unwrap();
        let rooms = rooms(lists.line(line).unwrap(), 0, None);
        let plan = serve(&lists, line, KeyNow::Empty, &rooms, NOW_MS, false);
        assert_eq!(
            granted(&plan),
            [l],
            "the key is a sorted set now: no lock for {k}"
        );
        // Nothing was in the window: the lease just admitted leaves it in 10 s.
        assert_eq!(plan.look_again_ms, Some(10_001));
    }

    #[test]
    fn a_key_of_another_type_lets_nobody_in_until_it_goes() {
        let mut lists = WaitLists::new();
        lists.join(0, b"k", lock("t"));
        lists.join(0, b"k", lease("m", 2));
        let line = lists.line_of(0, b"k").unwrap();
        let other = KeyNow::Other {
            expires_in_ms: Some(40),
        };
        let rooms = rooms(lists.line(line).unwrap(), 0, None);
        let plan = serve(&lists, line, other, &rooms, NOW_MS, false);
        assert_eq!((plan.served.len(), plan.look_again_ms), (0, Some(41)));
    }

    #[test]
    fn what_is_taken_back() {
        let revoked = [lock("a"), lease("m", 1), lock("b")];
        assert_eq!(
            take_back(&revoked, Some(b"b")),
            TakeBack {
                delete_lock: true,
                members: vec![Slots {
                    member: b"m",
                    permits: 1,
                    separator: None
                }],
                readers: vec![],
            }
        );
        assert!(!take_back(&revoked, Some(b"c")).delete_lock);
        assert!(!take_back(&revoked, None).delete_lock);
    }

    #[test]
    fn the_line_evicts_only_what_left_every_waiting_window() {
        let mut lists = WaitLists::new();
        lists.join(0, b"k", lock("a"));
        let line = lists.line_of(0, b"k").unwrap();
        assert_eq!(eviction_cutoff(lists.line(line).unwrap(), 100.0), None);
        for (member, window) in [("short", 10.0), ("long", 60.0)] {
            lists.join(
                0,
                b"k",
                Want::Lease {
                    member: member.into(),
                    window,
                    limit: 1,
                    permits: 1,
                    separator: None,
                    fence: false,
                },
            );
        }
        assert_eq!(
            eviction_cutoff(lists.line(line).unwrap(), 100.0),
            Some(40.0)
        );
    }
}
