//! The line that GOBLIN.BLOCK's and GOBLIN.BZWINDOW's waiters stand in, one per key: first
//! come, first served. Who may be granted is decided here, over plain values; the module
//! carries the grants out (writes the lock, admits the member) and tells the server to wake the
//! waiter.
//!
//! A waiter is `Waiting`, then `Granted` once its lock or slot is written for it, and leaves the
//! line when the server delivers its reply, times it out, or drops it. A waiter dropped after
//! its grant but before its reply leaves a grant nobody will use: the line keeps it as a
//! `revoked` grant, for the module to take back (delete the lock if it still holds that token,
//! remove the member).

use std::collections::{HashMap, VecDeque};

/// A waiter, as the server knows it (its blocked client's private data).
pub type WaiterId = u64;

/// A line, as timers and deferred jobs name it.
pub type LineId = u64;

/// What a waiter waits for.
#[derive(Debug, Clone, PartialEq)]
pub enum Want {
    /// A token lock: the key, a string holding `token` for `ms` milliseconds.
    Lock { token: Vec<u8>, ms: i64 },
    /// A slot of a GOBLIN.ZWINDOW window on the server's clock.
    Lease {
        member: Vec<u8>,
        window: f64,
        limit: i64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Waiting,
    /// Its lock or slot is written; its reply is on its way.
    Granted,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Waiter {
    pub id: WaiterId,
    pub line: LineId,
    pub want: Want,
    pub state: State,
}

/// The line of one key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Line {
    pub db: i32,
    pub key: Vec<u8>,
    /// In arrival order.
    pub waiters: VecDeque<WaiterId>,
    /// Grants whose waiter left before its reply: to take back.
    pub revoked: Vec<Want>,
    /// The timer set for the key's next change (a lock's expiry, a lease's age-out).
    pub timer: Option<u64>,
}

/// Every line, and every waiter.
#[derive(Debug, Default)]
pub struct WaitLists {
    lines: HashMap<LineId, Line>,
    by_key: HashMap<(i32, Vec<u8>), LineId>,
    waiters: HashMap<WaiterId, Waiter>,
    next_line: LineId,
    next_waiter: WaiterId,
}

impl WaitLists {
    /// How many wait, in every line.
    pub fn waiting(&self) -> usize {
        self.waiters.len()
    }

    /// The line of `key` in `db`, if anyone waits there (or a grant is to be taken back).
    pub fn line_of(&self, db: i32, key: &[u8]) -> Option<LineId> {
        self.by_key.get(&(db, key.to_vec())).copied()
    }

    pub fn line(&self, line: LineId) -> Option<&Line> {
        self.lines.get(&line)
    }

    pub fn line_mut(&mut self, line: LineId) -> Option<&mut Line> {
        self.lines.get_mut(&line)
    }

    pub fn waiter(&self, id: WaiterId) -> Option<&Waiter> {
        self.waiters.get(&id)
    }

    /// Whether anyone stands in the line of `key`: a newcomer must not go before them.
    pub fn has_waiters(&self, db: i32, key: &[u8]) -> bool {
        self.line_of(db, key)
            .and_then(|line| self.lines.get(&line))
            .is_some_and(|line| !line.waiters.is_empty())
    }

    /// A newcomer at the end of the line of `key`; its id, never 0.
    pub fn join(&mut self, db: i32, key: &[u8], want: Want) -> WaiterId {
        let line = match self.line_of(db, key) {
            Some(line) => line,
            None => {
                self.next_line += 1;
                let line = self.next_line;
                self.lines.insert(
                    line,
                    Line {
                        db,
                        key: key.to_vec(),
                        ..Line::default()
                    },
                );
                self.by_key.insert((db, key.to_vec()), line);
                line
            }
        };
        self.next_waiter += 1;
        let id = self.next_waiter;
        self.waiters.insert(
            id,
            Waiter {
                id,
                line,
                want,
                state: State::Waiting,
            },
        );
        if let Some(line) = self.lines.get_mut(&line) {
            line.waiters.push_back(id);
        }
        id
    }

    /// The first `n` waiters still waiting, first come first, with what they want. A grant
    /// looks at no more of the line than it can serve: the head of a lock's line, as many of a
    /// lease's as its limit.
    pub fn waiting_first(&self, line: LineId, n: usize) -> Vec<(WaiterId, Want)> {
        let Some(line) = self.lines.get(&line) else {
            return Vec::new();
        };
        line.waiters
            .iter()
            .filter_map(|id| self.waiters.get(id))
            .filter(|waiter| waiter.state == State::Waiting)
            .take(n)
            .map(|waiter| (waiter.id, waiter.want.clone()))
            .collect()
    }

    /// The first waiter still waiting.
    pub fn head(&self, line: LineId) -> Option<(WaiterId, Want)> {
        self.waiting_first(line, 1).pop()
    }

    /// Marks `id` granted: its lock or slot is written.
    pub fn grant(&mut self, id: WaiterId) {
        if let Some(waiter) = self.waiters.get_mut(&id) {
            waiter.state = State::Granted;
        }
    }

    /// Takes `id` out of its line (its reply is delivered, its time is up, or it is gone).
    /// Returns what it was; a line left with nobody and nothing to take back goes. `revoke`:
    /// a grant it held is to be taken back.
    pub fn leave(&mut self, id: WaiterId, revoke: bool) -> Option<Waiter> {
        let waiter = self.waiters.remove(&id)?;
        if let Some(line) = self.lines.get_mut(&waiter.line) {
            // Mostly the head leaves (served in order); a timeout or a dropped connection may
            // leave from anywhere.
            if line.waiters.front() == Some(&id) {
                line.waiters.pop_front();
            } else {
                line.waiters.retain(|other| *other != id);
            }
            if revoke && waiter.state == State::Granted {
                line.revoked.push(waiter.want.clone());
            }
        }
        Some(waiter)
    }

    /// Removes the line if nobody waits in it and nothing is to be taken back; returns its
    /// timer, for the caller to stop.
    pub fn retire_if_idle(&mut self, line: LineId) -> Option<Option<u64>> {
        let idle = self
            .lines
            .get(&line)
            .is_some_and(|line| line.waiters.is_empty() && line.revoked.is_empty());
        if !idle {
            return None;
        }
        let line = self.lines.remove(&line)?;
        self.by_key.remove(&(line.db, line.key));
        Some(line.timer)
    }

    /// Every line of `db` (a FLUSHDB, a SWAPDB), or of every db.
    pub fn lines_of(&self, db: Option<i32>) -> Vec<LineId> {
        self.lines
            .iter()
            .filter(|(_, line)| db.is_none_or(|db| line.db == db))
            .map(|(id, _)| *id)
            .collect()
    }
}

/// What a waiter's blocked client names to the server instead of its key: a name in the same
/// cluster slot (so that the server redirects the waiter when the slot moves) that no command
/// writes, so that the server never signals it. Signalled, the key of a sorted set created
/// anew would make the server ask every client blocked on it in turn (and Valkey 9.1 look each
/// of them up in the key's list): a hand-off would cost as much as the line is long, or more.
///
/// The slot of a key is that of its hash tag (the bytes between its first `{` and the next
/// `}`, if any) or of the whole key. The name keeps the tag, or makes the whole key its tag;
/// `None` for the keys whose slot no tag can name (no tag of their own, and a `}`, or empty).
pub fn blocking_name(key: &[u8]) -> Option<Vec<u8>> {
    const SUFFIX: &[u8] = b"\0goblin:line";
    let tag = hash_tag(key).or_else(|| (!key.is_empty() && !key.contains(&b'}')).then_some(key))?;
    let mut name = Vec::with_capacity(tag.len() + 2 + SUFFIX.len());
    name.push(b'{');
    name.extend_from_slice(tag);
    name.push(b'}');
    name.extend_from_slice(SUFFIX);
    Some(name)
}

/// The hash tag of a key, as a cluster reads it: between the first `{` and the first `}` after
/// it, if not empty.
fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let rest = &key[open + 1..];
    let close = rest.iter().position(|&b| b == b'}')?;
    (close > 0).then(|| &rest[..close])
}

/// Which of the waiters at the head of a lease's line take a slot, in order, with `in_window`
/// members in the window now: each needs fewer than its limit, and the grants stop at the first
/// that does not fit, so nobody is served before one who came earlier.
pub fn leases_to_grant(waiting: &[(WaiterId, Want)], mut in_window: usize) -> Vec<WaiterId> {
    let mut granted = Vec::new();
    for (id, want) in waiting {
        let Want::Lease { limit, .. } = want else {
            break;
        };
        let room = i64::try_from(in_window).is_ok_and(|count| count < *limit);
        if !room {
            break;
        }
        granted.push(*id);
        in_window += 1;
    }
    granted
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cluster's key slot: CRC16 (XMODEM) of the hash tag or the key, modulo 16384.
    fn slot(key: &[u8]) -> u16 {
        let hashed = hash_tag(key).unwrap_or(key);
        let mut crc: u16 = 0;
        for &byte in hashed {
            crc ^= u16::from(byte) << 8;
            for _ in 0..8 {
                crc = if crc & 0x8000 != 0 {
                    (crc << 1) ^ 0x1021
                } else {
                    crc << 1
                };
            }
        }
        crc % 16384
    }

    #[test]
    fn the_blocking_name_is_in_the_key_slot() {
        // The reference values of the cluster specification.
        // CRC16 of "123456789" is 0x31C3, below 16384: the slot is the CRC itself.
        assert_eq!(slot(b"123456789"), 0x31C3);
        assert_eq!(slot(b"{user1000}.following"), slot(b"user1000"));
        for key in [
            &b"lock"[..],
            b"lock:{moving}",
            b"{a{b}c",
            b"x{",
            b"{",
            b"\0\xff{\0}",
            b"rl:user42",
        ] {
            let name = blocking_name(key).unwrap_or_else(|| panic!("{key:?}"));
            assert_eq!(slot(&name), slot(key), "{key:?} -> {name:?}");
            assert_ne!(name, key);
        }
        // No tag names the slot of these: the waiter blocks on the key itself.
        for key in [&b""[..], b"a}b", b"}{", b"{}x", b"a{}b{c}"] {
            assert_eq!(blocking_name(key), None, "{key:?}");
        }
    }

    fn lock(token: &str) -> Want {
        Want::Lock {
            token: token.as_bytes().to_vec(),
            ms: 1000,
        }
    }

    fn lease(member: &str, limit: i64) -> Want {
        Want::Lease {
            member: member.as_bytes().to_vec(),
            window: 10.0,
            limit,
        }
    }

    #[test]
    fn first_come_first_served() {
        let mut lists = WaitLists::default();
        let a = lists.join(0, b"k", lock("a"));
        let b = lists.join(0, b"k", lock("b"));
        let other = lists.join(1, b"k", lock("c"));
        assert_ne!(
            lists.line_of(0, b"k"),
            lists.line_of(1, b"k"),
            "one line per db and key"
        );
        let line = lists.line_of(0, b"k").unwrap();
        assert_eq!(lists.head(line).map(|(id, _)| id), Some(a));
        lists.grant(a);
        assert_eq!(
            lists.head(line).map(|(id, _)| id),
            Some(b),
            "the granted one waits no more"
        );
        assert!(lists.has_waiters(0, b"k"));
        lists.leave(a, false);
        lists.leave(b, false);
        assert!(!lists.has_waiters(0, b"k"));
        assert_eq!(lists.retire_if_idle(line), Some(None));
        assert_eq!(lists.line_of(0, b"k"), None);
        assert_eq!(lists.waiting(), 1);
        assert!(lists.waiter(other).is_some());
    }

    #[test]
    fn a_grant_looks_at_no_more_of_the_line_than_it_can_serve() {
        let mut lists = WaitLists::default();
        let ids: Vec<_> = (0..5)
            .map(|i| lists.join(0, b"k", lease(&i.to_string(), 2)))
            .collect();
        let line = lists.line_of(0, b"k").unwrap();
        lists.grant(ids[0]);
        let first: Vec<_> = lists
            .waiting_first(line, 2)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(first, [ids[1], ids[2]], "the granted one is passed over");
        // One from the middle leaves, then the head: the order of the rest holds.
        lists.leave(ids[3], false);
        lists.leave(ids[0], false);
        let rest: Vec<_> = lists
            .waiting_first(line, 9)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(rest, [ids[1], ids[2], ids[4]]);
    }

    #[test]
    fn a_grant_whose_waiter_left_is_taken_back() {
        let mut lists = WaitLists::default();
        let a = lists.join(0, b"k", lock("a"));
        let line = lists.line_of(0, b"k").unwrap();
        lists.grant(a);
        lists.leave(a, true);
        assert_eq!(lists.line(line).unwrap().revoked, [lock("a")]);
        assert_eq!(lists.retire_if_idle(line), None, "kept until taken back");
        lists.line_mut(line).unwrap().revoked.clear();
        assert!(lists.retire_if_idle(line).is_some());
    }

    #[test]
    fn a_waiter_that_leaves_ungranted_takes_nothing_with_it() {
        let mut lists = WaitLists::default();
        let a = lists.join(0, b"k", lock("a"));
        let line = lists.line_of(0, b"k").unwrap();
        lists.leave(a, true);
        assert!(lists.line(line).unwrap().revoked.is_empty());
        assert!(lists.leave(a, true).is_none(), "once");
    }

    #[test]
    fn leases_go_in_order_while_they_fit() {
        let waiting = vec![(1, lease("a", 3)), (2, lease("b", 3)), (3, lease("c", 3))];
        assert_eq!(leases_to_grant(&waiting, 0), [1, 2, 3]);
        assert_eq!(leases_to_grant(&waiting, 1), [1, 2]);
        assert_eq!(leases_to_grant(&waiting, 3), Vec::<WaiterId>::new());
        // c would fit under its own limit of 5, but a does not fit: nobody passes a.
        let waiting = vec![(1, lease("a", 3)), (3, lease("c", 5))];
        assert_eq!(leases_to_grant(&waiting, 3), Vec::<WaiterId>::new());
        let waiting = vec![(1, lease("a", 1)), (2, lease("b", 9))];
        assert_eq!(leases_to_grant(&waiting, 1), Vec::<WaiterId>::new());
    }
}
