//! What a grant is, for each kind of holder, from plain values: whether a request takes the key
//! as it is, when the grant's lease ends, and whether it renews what the holder holds already
//! (which keeps the holder's fencing token). A holder's own command (GOBLIN.LOCK and
//! GOBLIN.BLOCK, GOBLIN.ZWINDOW and GOBLIN.BZWINDOW) and a waiter served in line
//! (`waitlist::plan`) ask the same functions here, and the module carries the answer out through
//! one function per kind (its `grant.rs`): a grant made in line and the same grant made by a
//! command cannot differ.
//!
//! - A lease whose end does not fit 64-bit milliseconds is refused, as `SET PX` refuses it:
//!   nothing is written, and the caller, or the waiter whose turn it was, is answered
//!   `invalid expire time`. A waiter joined the line with an end that fitted then; only the
//!   time it waited can take it past the limit.
//! - A renewal is read from the key at the grant: a lock its token holds, a lease member inside
//!   its window.

use crate::zwindow::{self, ExpireOverflow, WindowExpiry};

/// A key, as a lock request sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKey<'a> {
    Empty,
    /// A string: a lock held by this value.
    String(&'a [u8]),
    /// Any other type.
    Other,
}

/// What a lock request does to a key as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// It takes the key: free, or held by the request's own token (its holder again).
    Takes,
    /// Someone else holds it.
    Held,
    /// The key holds another type.
    WrongType,
}

/// What a request of `token` does to `key`.
pub fn take(key: LockKey<'_>, token: &[u8]) -> Take {
    match key {
        LockKey::Empty => Take::Takes,
        LockKey::String(value) if value == token => Take::Takes,
        LockKey::String(_) => Take::Held,
        LockKey::Other => Take::WrongType,
    }
}

/// A lock's grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockGrant {
    /// When the lease ends (Unix milliseconds); `None` for no lease (a lease of 0).
    pub at_ms: Option<i64>,
    /// The key held by the holder's token already: its lease starts over, and it keeps its
    /// fencing token.
    pub renewal: bool,
}

/// The grant of a lock of `ms` milliseconds (0: no lease) to `token` at `now_ms`, on `key`, which
/// the request takes (`take`).
pub fn lock(
    key: LockKey<'_>,
    token: &[u8],
    ms: i64,
    now_ms: i64,
) -> Result<LockGrant, ExpireOverflow> {
    Ok(LockGrant {
        at_ms: lock_end(ms, now_ms)?,
        renewal: key == LockKey::String(token),
    })
}

/// When a lock of `ms` milliseconds (0: no lease) granted at `now_ms` ends: what a lock command
/// checks before anything else, as `SET PX` does.
pub fn lock_end(ms: i64, now_ms: i64) -> Result<Option<i64>, ExpireOverflow> {
    match ms {
        0 => Ok(None),
        ms => now_ms.checked_add(ms).map(Some).ok_or(ExpireOverflow),
    }
}

/// A lease's grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseGrant {
    /// When the window's key expires, this grant's slots with it.
    pub expiry: WindowExpiry,
    /// The member holds its slot inside the window already: it renews it, and keeps its
    /// fencing token.
    pub renewal: bool,
}

/// When a lease of a `window` of seconds granted at `now_ms` ends, with the window's key: asked
/// before anything is written.
pub fn lease_end(window: f64, now_ms: i64) -> Result<WindowExpiry, ExpireOverflow> {
    zwindow::expiry(window, now_ms)
}

/// The grant of a lease ending at `expiry` (`lease_end`) to a member that `holds` its slot
/// inside the window already or not (`zwindow::holds`).
pub fn lease(expiry: WindowExpiry, holds: bool) -> LeaseGrant {
    LeaseGrant {
        expiry,
        renewal: holds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::seconds_of;
    use crate::waitlist::plan::{self, KeyNow};
    use crate::waitlist::{State, WaitLists, Want};
    use crate::zwindow::model::ModelWindow;
    use crate::zwindow::{Room, Seat, SortedWindowMut};

    /// A small deterministic generator (xorshift64*), so the properties are reproducible.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
            &items[self.below(items.len() as u64) as usize]
        }
    }

    const NOW_MS: i64 = 1_700_000_000_000;

    #[test]
    fn a_lock_takes_a_free_key_or_its_own() {
        assert_eq!(take(LockKey::Empty, b"a"), Take::Takes);
        assert_eq!(take(LockKey::String(b"a"), b"a"), Take::Takes);
        assert_eq!(take(LockKey::String(b"b"), b"a"), Take::Held);
        assert_eq!(take(LockKey::Other, b"a"), Take::WrongType);
    }

    #[test]
    fn a_lock_grant_ends_its_lease_after_ms_and_renews_its_own() {
        let grant = lock(LockKey::Empty, b"a", 1000, NOW_MS).unwrap();
        assert_eq!(
            grant,
            LockGrant {
                at_ms: Some(NOW_MS + 1000),
                renewal: false
            }
        );
        let grant = lock(LockKey::String(b"a"), b"a", 0, NOW_MS).unwrap();
        assert_eq!(
            grant,
            LockGrant {
                at_ms: None,
                renewal: true
            }
        );
        assert_eq!(
            lock(LockKey::Empty, b"a", i64::MAX - NOW_MS, NOW_MS)
                .unwrap()
                .at_ms,
            Some(i64::MAX)
        );
        assert_eq!(
            lock(LockKey::Empty, b"a", i64::MAX - NOW_MS + 1, NOW_MS),
            Err(ExpireOverflow)
        );
    }

    #[test]
    fn a_lease_grant_ends_with_its_window_and_renews_a_member_inside_it() {
        let end = lease_end(10.0, NOW_MS).unwrap();
        assert_eq!(end, WindowExpiry::At(NOW_MS + 10_000));
        assert_eq!(
            lease(end, true),
            LeaseGrant {
                expiry: end,
                renewal: true
            }
        );
        assert_eq!(lease_end(0.0, NOW_MS), Ok(WindowExpiry::Immediately));
        assert_eq!(lease_end(1e16, NOW_MS), Err(ExpireOverflow));
    }

    /// The key as the line reads it (`KeyNow`) and as a command reads it (`LockKey`).
    fn keys<'a>(kind: u64, value: &'a [u8]) -> (KeyNow<'a>, LockKey<'a>) {
        match kind {
            0 => (KeyNow::Empty, LockKey::Empty),
            1 => (
                KeyNow::String {
                    value,
                    expires_in_ms: None,
                },
                LockKey::String(value),
            ),
            2 => (
                KeyNow::SortedSet {
                    expires_in_ms: None,
                },
                LockKey::Other,
            ),
            _ => (
                KeyNow::Other {
                    expires_in_ms: None,
                },
                LockKey::Other,
            ),
        }
    }

    /// For any key and request, a lock waiter alone in line that is granted gets what GOBLIN.LOCK
    /// (or GOBLIN.BLOCK) would: the same lease end or the same refusal past 64-bit milliseconds,
    /// and the same renewal. The one request the command grants and the line does not is a
    /// holder's own token on the key: the line lets a lock waiter in on a free key only.
    #[test]
    fn a_lock_granted_in_line_is_the_lock_its_command_would_take() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let tokens: [&[u8]; 3] = [b"a", b"b", b""];
        for _ in 0..20_000 {
            let token = *rng.pick(&tokens);
            let value = *rng.pick(&tokens);
            let (key_now, lock_key) = keys(rng.below(4), value);
            let now_ms = *rng.pick(&[NOW_MS, 0, i64::MAX - 5, i64::MAX]);
            let ms = *rng.pick(&[0, 1, 30_000, i64::MAX - NOW_MS, i64::MAX]);
            let mut lists = WaitLists::new();
            let waiter = lists.join(
                0,
                b"k",
                Want::Lock {
                    token: token.to_vec(),
                    ms,
                    fence: false,
                },
            );
            let line = lists.line_of(0, b"k").unwrap();
            let planned = plan::serve(&lists, line, key_now, &[], now_ms, false);
            let in_line = planned
                .served
                .iter()
                .any(|&(id, state)| id == waiter && state == State::Granted)
                .then(|| lock(lock_key, token, ms, now_ms));
            let by_command =
                (take(lock_key, token) == Take::Takes).then(|| lock(lock_key, token, ms, now_ms));
            match (in_line, by_command) {
                (Some(line), Some(command)) => assert_eq!(line, command),
                (None, Some(_)) => assert_eq!(
                    lock_key,
                    LockKey::String(token),
                    "the line passed over a free key: {ms} ms at {now_ms}"
                ),
                (Some(_), None) => panic!("granted in line, refused by the command: {key_now:?}"),
                (None, None) => {}
            }
        }
    }

    /// For any window and lease request, a waiter alone in line that is granted gets what
    /// GOBLIN.ZWINDOW (or GOBLIN.BZWINDOW) would grant it: the same expiry, the same renewal.
    /// The one request the command grants and the line does not is a member renewing its slot
    /// in a window full for newcomers: the line does not look each waiter up in the window.
    #[test]
    fn a_lease_granted_in_line_is_the_lease_its_command_would_grant() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let members: [&[u8]; 4] = [b"m", b"n", b"o", b"p"];
        let now = seconds_of(NOW_MS);
        for _ in 0..20_000 {
            let window = *rng.pick(&[0.5, 10.0, 60.0]);
            let limit = 1 + rng.below(4) as i64;
            let member = *rng.pick(&members);
            let mut set = ModelWindow::default();
            for other in members {
                if rng.below(2) == 0 {
                    // Inside the window, or left it (scores up to 90 s old).
                    set.add(now - rng.below(90_000) as f64 / 1000.0, other);
                }
            }
            let cutoff = zwindow::cutoff(now, window);
            let mut evicted = set.clone();
            let eviction = zwindow::evict(&mut evicted, cutoff);
            // The line: its eviction (this one waiter's window), the room, the plan.
            let mut lists = WaitLists::new();
            let waiter = lists.join(
                0,
                b"k",
                Want::Lease {
                    member: member.to_vec(),
                    window,
                    limit,
                    permits: 1,
                    separator: None,
                    fence: false,
                },
            );
            let line = lists.line_of(0, b"k").unwrap();
            let room: Room = zwindow::room(&evicted, &eviction, cutoff, limit);
            let key = KeyNow::SortedSet {
                expires_in_ms: None,
            };
            let planned = plan::serve(&lists, line, key, &[room], NOW_MS, false);
            let in_line = planned
                .served
                .iter()
                .any(|&(id, state)| id == waiter && state == State::Granted)
                .then(|| {
                    lease_end(window, NOW_MS)
                        .map(|end| lease(end, zwindow::holds(&evicted, member, cutoff)))
                });
            // The command: its eviction, then its seat.
            let seat = zwindow::seat(&evicted, &eviction, cutoff, limit, member, 1);
            let by_command = seat
                .map(|seat| lease_end(window, NOW_MS).map(|end| lease(end, seat == Seat::Holder)));
            match (in_line, by_command) {
                (Some(line), Some(command)) => assert_eq!(line, command),
                (None, Some(_)) => assert!(
                    seat == Some(Seat::Holder) && !zwindow::fits_permits(room.in_window, 1, limit),
                    "the line passed over a newcomer with room: {room:?}, limit {limit}"
                ),
                (Some(_), None) => panic!("granted in line, refused by the command: {room:?}"),
                (None, None) => {}
            }
        }
    }
}
