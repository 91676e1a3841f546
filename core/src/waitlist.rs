//! The line that GOBLIN.BLOCK's and GOBLIN.BZWINDOW's waiters stand in, one per key, kept as
//! plain data: who waits, in arrival order, for what, and in which state. How a line is served
//! (who is granted, what is taken back, when to look again) is decided in `plan`, from this and
//! plain values of the key; the module carries the plan out and wakes the waiters.
//!
//! A waiter is `Waiting`, then `Granted` once its lock or slot is written for it (or
//! `OutOfMemory` when its turn came while the server was out of memory), and leaves the line
//! when the server delivers its reply, times it out, or drops it. A waiter dropped after its
//! grant but before its reply leaves a grant nobody will use: the line keeps it as `revoked`,
//! for the module to take back (delete the lock if it still holds that token, remove the
//! member). A grant answered is still not its holder's until the server has written the reply
//! out to the holder's connection: until then it is kept as `delivering`, by client, and a
//! client that goes first has its grants revoked the same way (`disconnected`).
//!
//! Waiters who ask alike (a lock; or a lease of the same window and limit) form a group, served
//! strictly in arrival order. The groups of one key are served in the arrival order of their
//! heads, and a group whose head does not fit does not hold back another's (`plan`). A line of
//! a readers-writer lock's waiters is served otherwise: all of them in one order, and the first
//! who does not fit holds back everyone after it (`crate::rwlock::serve`).

pub mod model;
pub mod plan;

use std::collections::{BTreeMap, VecDeque};

/// A waiter, as the server knows it (its blocked client's private data, never 0).
pub type WaiterId = u64;

/// A line, as timers and deferred jobs name it (never 0).
pub type LineId = u64;

/// What a waiter waits for.
#[derive(Debug, Clone, PartialEq)]
pub enum Want {
    /// A token lock: the key, a string holding `token` for `ms` milliseconds (0: no lease);
    /// `fence`: its grant's reply is its fencing token.
    Lock {
        token: Vec<u8>,
        ms: i64,
        fence: bool,
    },
    /// `permits` slots (1 for a lease) of a GOBLIN.ZWINDOW window of `window` seconds and
    /// `limit` slots, on the server's clock, named after `member` and `separator`
    /// (`zwindow::permit_member`).
    Lease {
        member: Vec<u8>,
        window: f64,
        limit: i64,
        permits: usize,
        separator: Option<Vec<u8>>,
        fence: bool,
    },
    /// A readers-writer lock's read lease: `token` a member of the key's sorted set of readers,
    /// scored by its lease's end, `ms` milliseconds from its grant.
    Read {
        token: Vec<u8>,
        ms: i64,
        fence: bool,
    },
    /// A readers-writer lock's write lease: the key a string holding `token` for `ms`
    /// milliseconds, as a `Lock`'s. `promotes`: it held a read lease when it came, and waits
    /// for the other readers to leave (`crate::rwlock`).
    Write {
        token: Vec<u8>,
        ms: i64,
        fence: bool,
        promotes: bool,
    },
}

impl Want {
    /// Whether waiting can ever end in a grant. A lease needs its slots to exist (`limit` at
    /// least its `permits`, at least 1) and to last (`window` above 0: a shorter one is deleted
    /// the moment it is written). A request that never can is answered at once, and never
    /// stands in a line.
    pub fn can_be_granted(&self) -> bool {
        match *self {
            Want::Lock { .. } | Want::Read { .. } | Want::Write { .. } => true,
            Want::Lease {
                window,
                limit,
                permits,
                ..
            } => permits >= 1 && crate::zwindow::fits_permits(0, permits, limit) && window > 0.0,
        }
    }

    /// What decides whether this waiter fits: waiters who ask alike fit, or do not, together.
    pub fn ask(&self) -> Ask {
        match *self {
            Want::Lock { .. } => Ask::Lock,
            Want::Lease {
                window,
                limit,
                permits,
                ..
            } => Ask::Lease {
                // 0.0 and -0.0 are one window.
                window: (window + 0.0).to_bits(),
                limit,
                permits,
            },
            Want::Read { .. } => Ask::Read,
            Want::Write { promotes, .. } => Ask::Write { promotes },
        }
    }
}

/// The part of a `Want` that decides whether it fits now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// Any lock fits a free key.
    Lock,
    /// A lease fits while its window (the bits of its seconds) has room under `limit` for its
    /// `permits`.
    Lease {
        window: u64,
        limit: i64,
        permits: usize,
    },
    /// A read lease fits while no writer holds the key.
    Read,
    /// A write lease fits a free key; one that `promotes`, a key its own read lease is the last
    /// of.
    Write { promotes: bool },
}

impl Ask {
    /// The window of a lease, in seconds.
    pub fn window(self) -> Option<f64> {
        match self {
            Ask::Lock | Ask::Read | Ask::Write { .. } => None,
            Ask::Lease { window, .. } => Some(f64::from_bits(window)),
        }
    }

    /// Whether the waiters who ask so wait for a readers-writer lock.
    pub fn reads_or_writes(self) -> bool {
        matches!(self, Ask::Read | Ask::Write { .. })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Waiting,
    /// Its lock or slot is written; its reply is on its way.
    Granted,
    /// Its turn came while the server was out of memory: nothing was written, and its reply is
    /// the server's out-of-memory error, as a blocked command of the server's own gets when it
    /// is served then.
    OutOfMemory,
    /// Its turn came, and its grant could not be made: nothing was written, and its reply is the
    /// error its own command would get now (the module keeps which: a token it cannot mint, a
    /// lease end past 64-bit milliseconds, a key of another type where a token is kept).
    Refused,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Waiter {
    pub id: WaiterId,
    pub line: LineId,
    pub want: Want,
    pub state: State,
    /// The fencing token of its grant, when it asked for one.
    pub token: Option<i64>,
}

/// Waiters of one key who ask alike, in arrival order.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub ask: Ask,
    /// Only those still waiting.
    pub waiters: VecDeque<WaiterId>,
}

/// The line of one key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Line {
    pub db: i32,
    pub key: Vec<u8>,
    /// Non-empty groups, in the order they formed.
    pub groups: Vec<Group>,
    /// Waiters served whose reply has not gone yet.
    pub served: usize,
    /// Grants whose waiter left before its reply: to take back.
    pub revoked: Vec<Want>,
    /// The timer set for the key's next change (a lock's expiry, a lease's age-out).
    pub timer: Option<u64>,
    /// A look owed for a keyspace event on the key, not yet paid by any look since: the
    /// module's, to ask for one look however many events come and to skip it once another
    /// look came after them.
    pub event_owed: bool,
}

impl Line {
    /// Whether anyone still waits here.
    pub fn has_waiters(&self) -> bool {
        !self.groups.is_empty()
    }

    /// Whether readers or writers of a readers-writer lock wait here: the line is then served
    /// as one (`crate::rwlock::serve`).
    pub fn reads_or_writes(&self) -> bool {
        self.groups.iter().any(|group| group.ask.reads_or_writes())
    }
}

/// Every line, and every waiter. Ordered maps: they start empty at compile time, and a
/// client's key names cannot be made to collide.
#[derive(Debug, Default)]
pub struct WaitLists {
    lines: BTreeMap<LineId, Line>,
    by_key: BTreeMap<i32, BTreeMap<Vec<u8>, LineId>>,
    waiters: BTreeMap<WaiterId, Waiter>,
    /// Grants answered whose reply the server has not written out yet, by the client they
    /// were answered to (`answered`).
    delivering: BTreeMap<u64, Vec<Delivery>>,
    next_line: LineId,
    next_waiter: WaiterId,
}

/// A grant answered to a client, whose reply is not out yet: where, and what to take back.
#[derive(Debug, Clone, PartialEq)]
struct Delivery {
    db: i32,
    key: Vec<u8>,
    want: Want,
}

impl WaitLists {
    pub const fn new() -> WaitLists {
        WaitLists {
            lines: BTreeMap::new(),
            by_key: BTreeMap::new(),
            waiters: BTreeMap::new(),
            delivering: BTreeMap::new(),
            next_line: 0,
            next_waiter: 0,
        }
    }

    /// How many callers are blocked, waiting or served and not yet answered.
    pub fn waiting(&self) -> usize {
        self.waiters.len()
    }

    /// The line of `key` in `db`, if anyone waits there (or a grant is to be taken back).
    pub fn line_of(&self, db: i32, key: &[u8]) -> Option<LineId> {
        self.by_key.get(&db)?.get(key).copied()
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

    /// A newcomer at the end of the line of `key`, behind everyone, in the group of those who
    /// ask as it does; its id, never 0.
    pub fn join(&mut self, db: i32, key: &[u8], want: Want) -> WaiterId {
        let line = self.line_for(db, key);
        self.next_waiter += 1;
        let id = self.next_waiter;
        let ask = want.ask();
        if let Some(line) = self.lines.get_mut(&line) {
            match line.groups.iter_mut().find(|group| group.ask == ask) {
                #[cfg(feature = "planted-defects")]
                Some(group) if crate::planted::planted(crate::planted::Defect::LastComeFirst) => {
                    group.waiters.push_front(id)
                }
                Some(group) => group.waiters.push_back(id),
                None => line.groups.push(Group {
                    ask,
                    waiters: VecDeque::from([id]),
                }),
            }
        }
        self.waiters.insert(
            id,
            Waiter {
                id,
                line,
                want,
                state: State::Waiting,
                token: None,
            },
        );
        id
    }

    /// Marks `id` served (`Granted`, with its fencing token if it asked for one; or refused):
    /// it waits no more, and its reply is due.
    /// The line of `key`, opened if it has none.
    fn line_for(&mut self, db: i32, key: &[u8]) -> LineId {
        if let Some(line) = self.line_of(db, key) {
            return line;
        }
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
        self.by_key
            .entry(db)
            .or_default()
            .insert(key.to_vec(), line);
        line
    }

    pub fn serve(&mut self, id: WaiterId, state: State, token: Option<i64>) {
        let Some(waiter) = self.waiters.get_mut(&id) else {
            return;
        };
        if waiter.state != State::Waiting {
            return;
        }
        waiter.state = state;
        waiter.token = token;
        if let Some(line) = self.lines.get_mut(&waiter.line) {
            line.served += 1;
            stand_down(line, id);
        }
    }

    /// Takes `id` out of its line (its reply is delivered, its time is up, or it is gone).
    /// Returns what it was. `revoke`: a grant it held is to be taken back.
    pub fn leave(&mut self, id: WaiterId, revoke: bool) -> Option<Waiter> {
        let waiter = self.waiters.remove(&id)?;
        if let Some(line) = self.lines.get_mut(&waiter.line) {
            match waiter.state {
                #[cfg(feature = "planted-defects")]
                State::Waiting
                    if !revoke
                        && crate::planted::planted(
                            crate::planted::Defect::ForgetsWaiterOnTimeout,
                        ) =>
                {
                    stand_down(line, id);
                    forget_next(line, &waiter.want);
                }
                State::Waiting => stand_down(line, id),
                State::Granted | State::OutOfMemory | State::Refused => line.served -= 1,
            }
            if revoke && waiter.state == State::Granted {
                line.revoked.push(waiter.want.clone());
            }
        }
        Some(waiter)
    }

    /// The grants to take back, taken out of the line.
    /// `id` is answered (woken, or served as the server asked), to `client`: it leaves its
    /// line, and a grant it was answered stays revocable until the server has written the reply
    /// out (`delivered`): a client that goes before (`disconnected`) never had it. Client 0 is
    /// none the server names: its grant is its holder's at once. Returns what it was.
    pub fn answered(&mut self, id: WaiterId, client: u64) -> Option<Waiter> {
        let waiter = self.leave(id, false)?;
        if waiter.state == State::Granted && client != 0 {
            let line = self.lines.get(&waiter.line);
            if let Some(line) = line {
                let delivery = Delivery {
                    db: line.db,
                    key: line.key.clone(),
                    want: waiter.want.clone(),
                };
                self.delivering.entry(client).or_default().push(delivery);
            }
        }
        Some(waiter)
    }

    /// Whether a grant answered waits for its reply to go out.
    pub fn delivering(&self) -> bool {
        !self.delivering.is_empty()
    }

    /// The server has written out every reply answered so far: those grants are their
    /// holders'.
    pub fn delivered(&mut self) {
        self.delivering.clear();
    }

    /// `client` is gone: the grants answered to it whose reply never went out are revoked, each
    /// in its key's line (opened again if the key has none). The lines to look at.
    pub fn disconnected(&mut self, client: u64) -> Vec<LineId> {
        let Some(deliveries) = self.delivering.remove(&client) else {
            return Vec::new();
        };
        let mut lines = Vec::with_capacity(deliveries.len());
        for delivery in deliveries {
            let line = self.line_for(delivery.db, &delivery.key);
            if let Some(state) = self.lines.get_mut(&line) {
                state.revoked.push(delivery.want);
            }
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
        lines
    }

    pub fn take_revoked(&mut self, line: LineId) -> Vec<Want> {
        self.lines
            .get_mut(&line)
            .map(|line| std::mem::take(&mut line.revoked))
            .unwrap_or_default()
    }

    /// Removes the line if nobody waits in it, no reply is due from it and nothing is to be
    /// taken back; returns its timer, for the caller to stop.
    pub fn retire_if_idle(&mut self, line: LineId) -> Option<Option<u64>> {
        let idle = self.lines.get(&line).is_some_and(|line| {
            line.groups.is_empty() && line.served == 0 && line.revoked.is_empty()
        });
        if !idle {
            return None;
        }
        let line = self.lines.remove(&line)?;
        if let Some(keys) = self.by_key.get_mut(&line.db) {
            keys.remove(&line.key);
            if keys.is_empty() {
                self.by_key.remove(&line.db);
            }
        }
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

    /// How many keys have a line.
    pub fn lines(&self) -> usize {
        self.lines.len()
    }
}

/// The planted defect `ForgetsWaiterOnTimeout`: the next waiter who asks as `want` does is
/// taken out of the line, unserved.
#[cfg(feature = "planted-defects")]
fn forget_next(line: &mut Line, want: &Want) {
    let ask = want.ask();
    if let Some(group) = line.groups.iter_mut().find(|group| group.ask == ask) {
        group.waiters.pop_front();
    }
    line.groups.retain(|group| !group.waiters.is_empty());
}

/// Takes a waiting `id` out of its group (mostly the head: the line is served in order; a
/// timeout or a dropped connection may leave from anywhere), and a group left empty out of the
/// line.
fn stand_down(line: &mut Line, id: WaiterId) {
    for group in &mut line.groups {
        if group.waiters.front() == Some(&id) {
            group.waiters.pop_front();
        } else if let Some(at) = group.waiters.iter().position(|other| *other == id) {
            group.waiters.remove(at);
        } else {
            continue;
        }
        break;
    }
    line.groups.retain(|group| !group.waiters.is_empty());
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
    let tag = slot_tag(key)?;
    let mut name = Vec::with_capacity(tag.len() + 2 + SUFFIX.len());
    name.push(b'{');
    name.extend_from_slice(tag);
    name.push(b'}');
    name.extend_from_slice(SUFFIX);
    Some(name)
}

/// The tag that names `key`'s cluster slot for a key of the module's own beside it: its hash
/// tag, or the whole key where it has none and no `}` that would end a tag early; `None` where
/// neither can (an empty key, or one with a `}` and no tag).
pub fn slot_tag(key: &[u8]) -> Option<&[u8]> {
    hash_tag(key).or_else(|| (!key.is_empty() && !key.contains(&b'}')).then_some(key))
}

/// The hash tag of a key, as a cluster reads it: between the first `{` and the first `}` after
/// it, if not empty.
fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let rest = &key[open + 1..];
    let close = rest.iter().position(|&b| b == b'}')?;
    (close > 0).then(|| &rest[..close])
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

    pub(super) fn lock(token: &str) -> Want {
        Want::Lock {
            token: token.as_bytes().to_vec(),
            ms: 1000,
            fence: false,
        }
    }

    pub(super) fn lease(member: &str, limit: i64) -> Want {
        Want::Lease {
            member: member.as_bytes().to_vec(),
            window: 10.0,
            limit,
            permits: 1,
            separator: None,
            fence: false,
        }
    }

    #[test]
    fn one_line_per_db_and_key_and_the_line_goes_with_its_last_waiter() {
        let mut lists = WaitLists::new();
        let a = lists.join(0, b"k", lock("a"));
        let b = lists.join(0, b"k", lock("b"));
        let other = lists.join(1, b"k", lock("c"));
        let line = lists.line_of(0, b"k").unwrap();
        assert_ne!(Some(line), lists.line_of(1, b"k"));
        assert_eq!(lists.line(line).unwrap().groups[0].waiters, [a, b]);
        lists.serve(a, State::Granted, None);
        assert_eq!(
            lists.line(line).unwrap().groups[0].waiters,
            [b],
            "a waits no more"
        );
        assert_eq!(
            lists.retire_if_idle(line),
            None,
            "b waits, a's reply is due"
        );
        lists.leave(b, false);
        assert_eq!(lists.retire_if_idle(line), None, "a's reply is due");
        lists.leave(a, false);
        assert_eq!(lists.retire_if_idle(line), Some(None));
        assert_eq!(lists.line_of(0, b"k"), None);
        assert_eq!(lists.waiting(), 1);
        assert!(lists.waiter(other).is_some());
        assert_eq!(lists.lines(), 1);
    }

    #[test]
    fn waiters_who_ask_alike_form_one_group_in_arrival_order() {
        let mut lists = WaitLists::new();
        let a = lists.join(0, b"k", lease("a", 2));
        let b = lists.join(0, b"k", lease("b", 5));
        let c = lists.join(0, b"k", lease("c", 2));
        let d = lists.join(0, b"k", lock("d"));
        let line = lists.line(lists.line_of(0, b"k").unwrap()).unwrap();
        let groups: Vec<Vec<WaiterId>> = line
            .groups
            .iter()
            .map(|group| group.waiters.iter().copied().collect())
            .collect();
        assert_eq!(groups, [vec![a, c], vec![b], vec![d]]);
        // A window of -0.0 is one of 0.0.
        let zero = |window: f64| Want::Lease {
            member: vec![],
            window,
            limit: 1,
            permits: 1,
            separator: None,
            fence: false,
        };
        assert_eq!(zero(0.0).ask(), zero(-0.0).ask());
    }

    #[test]
    fn a_waiter_may_leave_from_anywhere_and_an_emptied_group_goes() {
        let mut lists = WaitLists::new();
        let ids: Vec<_> = (0..4)
            .map(|i| lists.join(0, b"k", lease(&i.to_string(), 2)))
            .collect();
        let odd = lists.join(0, b"k", lease("odd", 9));
        let line = lists.line_of(0, b"k").unwrap();
        lists.leave(ids[2], false);
        lists.leave(ids[0], false);
        lists.leave(odd, false);
        let line = lists.line(line).unwrap();
        assert_eq!(line.groups.len(), 1);
        assert_eq!(line.groups[0].waiters, [ids[1], ids[3]]);
    }

    #[test]
    fn a_grant_whose_waiter_left_is_taken_back() {
        let mut lists = WaitLists::new();
        let a = lists.join(0, b"k", lock("a"));
        let line = lists.line_of(0, b"k").unwrap();
        lists.serve(a, State::Granted, None);
        lists.leave(a, true);
        assert_eq!(lists.line(line).unwrap().revoked, [lock("a")]);
        assert_eq!(lists.retire_if_idle(line), None, "kept until taken back");
        assert_eq!(lists.take_revoked(line), [lock("a")]);
        assert!(lists.retire_if_idle(line).is_some());
    }

    #[test]
    fn a_grant_answered_to_a_client_that_goes_before_its_reply_is_out_is_taken_back() {
        let mut lists = WaitLists::new();
        let a = lists.join(0, b"k", lock("a"));
        let b = lists.join(0, b"k", lock("b"));
        let line = lists.line_of(0, b"k").unwrap();
        lists.serve(a, State::Granted, None);
        assert_eq!(lists.answered(a, 7).map(|waiter| waiter.id), Some(a));
        assert!(lists.delivering());
        assert!(lists.disconnected(8).is_empty(), "another client");
        assert_eq!(lists.disconnected(7), [line]);
        assert_eq!(lists.take_revoked(line), [lock("a")]);
        assert!(lists.disconnected(7).is_empty(), "once");
        assert!(!lists.delivering());
        assert!(lists.waiter(b).is_some(), "b waits on");
    }

    #[test]
    fn a_grant_whose_reply_went_out_is_its_holders() {
        let mut lists = WaitLists::new();
        let a = lists.join(0, b"k", lock("a"));
        let line = lists.line_of(0, b"k").unwrap();
        lists.serve(a, State::Granted, None);
        lists.answered(a, 7);
        assert!(lists.retire_if_idle(line).is_some(), "nobody stands in it");
        lists.delivered();
        assert!(lists.disconnected(7).is_empty());
        assert_eq!(lists.lines(), 0);
    }

    #[test]
    fn a_revoked_grant_opens_its_keys_line_again() {
        let mut lists = WaitLists::new();
        let a = lists.join(3, b"k", lease("a", 1));
        let line = lists.line_of(3, b"k").unwrap();
        lists.serve(a, State::Granted, None);
        lists.answered(a, 7);
        lists.retire_if_idle(line);
        assert_eq!(lists.line_of(3, b"k"), None);
        let opened = lists.disconnected(7);
        assert_eq!(opened.len(), 1);
        assert_eq!(lists.line_of(3, b"k"), Some(opened[0]));
        assert_eq!(
            lists.retire_if_idle(opened[0]),
            None,
            "kept until taken back"
        );
        assert_eq!(lists.take_revoked(opened[0]), [lease("a", 1)]);
        assert!(lists.retire_if_idle(opened[0]).is_some());
    }

    #[test]
    fn only_a_grant_is_delivered() {
        let mut lists = WaitLists::new();
        let a = lists.join(0, b"k", lock("a"));
        let b = lists.join(0, b"k", lock("b"));
        lists.serve(a, State::Refused, None);
        lists.answered(a, 7);
        lists.answered(b, 8);
        let c = lists.join(0, b"k", lock("c"));
        lists.serve(c, State::Granted, None);
        lists.answered(c, 0);
        assert!(
            !lists.delivering(),
            "an error, a waiter not served, a client with no id"
        );
    }

    #[test]
    fn a_waiter_that_leaves_ungranted_takes_nothing_with_it() {
        let mut lists = WaitLists::new();
        let a = lists.join(0, b"k", lock("a"));
        let b = lists.join(0, b"k", lock("b"));
        let line = lists.line_of(0, b"k").unwrap();
        lists.leave(a, true);
        lists.serve(b, State::OutOfMemory, None);
        lists.leave(b, true);
        assert!(
            lists.line(line).unwrap().revoked.is_empty(),
            "nothing was written for b"
        );
        assert!(lists.leave(a, true).is_none(), "once");
        assert!(lists.retire_if_idle(line).is_some());
    }

    #[test]
    fn a_waiter_is_served_once() {
        let mut lists = WaitLists::new();
        let a = lists.join(0, b"k", lock("a"));
        let line = lists.line_of(0, b"k").unwrap();
        lists.serve(a, State::Granted, None);
        lists.serve(a, State::OutOfMemory, None);
        assert_eq!(lists.waiter(a).unwrap().state, State::Granted);
        assert_eq!(lists.line(line).unwrap().served, 1);
    }

    #[test]
    fn only_a_lease_that_can_fill_a_slot_and_keep_it_waits() {
        assert!(lock("a").can_be_granted());
        assert!(lease("a", 1).can_be_granted());
        for limit in [0, -1, i64::MIN] {
            assert!(!lease("a", limit).can_be_granted(), "{limit}");
        }
        for window in [0.0, -0.0, -5.0] {
            let want = Want::Lease {
                member: vec![],
                window,
                limit: 3,
                permits: 1,
                separator: None,
                fence: false,
            };
            assert!(!want.can_be_granted(), "{window}");
        }
        let permits = |permits: usize| Want::Lease {
            member: vec![],
            window: 10.0,
            limit: 3,
            permits,
            separator: None,
            fence: false,
        };
        assert!(permits(3).can_be_granted());
        assert!(!permits(4).can_be_granted(), "more permits than the limit");
        assert!(!permits(0).can_be_granted());
    }
}
