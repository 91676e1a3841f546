//! A readers-writer lock's decisions (GOBLIN.RLOCK, GOBLIN.WLOCK, GOBLIN.BRLOCK, GOBLIN.BWLOCK,
//! GOBLIN.RWEXTEND, GOBLIN.RWUNLOCK, GOBLIN.RWHELD), from plain values: who holds the key, who
//! waits, the time.
//!
//! The key holds the lock in the server's own types, so that `GET`, `ZRANGE`, `PTTL`, a replica
//! and an RDB without the module read it as it is:
//!
//! - free: no key;
//! - a writer: a string holding its token, with a PX lease (GOBLIN.LOCK's lock, exactly);
//! - readers: a sorted set of their tokens, each scored by the end of its lease in Unix
//!   milliseconds (`ZSCORE` is when it ends), the key expiring with the last of them.
//!
//! A reader holds its lease through the millisecond it ends (as a key holds through the
//! millisecond of its `PEXPIREAT`); a lapsed one counts for nobody, and the commands remove
//! what lapsed before they decide.
//!
//! The rules, which the command pages state:
//!
//! - readers share the key, a writer holds it alone;
//! - a token holds one mode at a time: a writer asking to read is **demoted** (it reads, and
//!   others may read beside it), a reader asking to write is **promoted** once its read lease is
//!   the only one left. A holder asking again in its own mode renews its lease. None of these
//!   waits behind the line: a holder takes nothing from those who wait for it to leave;
//! - everyone else comes after those waiting, in one line of readers and writers, first come,
//!   first served: the first who does not fit holds back everyone after it, so a stream of
//!   readers cannot pass a writer waiting for the readers before it to leave. Readers at the
//!   head of the line are let in together;
//! - a reader waiting to be promoted is served before the line (everyone in it waits for that
//!   reader to leave anyway). Two readers waiting to be promoted would wait for each other for
//!   ever: the second is refused at once (`deadlocks`).

pub mod model;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::waitlist::plan::Plan;
use crate::waitlist::{Ask, LineId, State, WaitLists, WaiterId, Want};
use crate::zwindow::SortedWindow;

/// The latest a lease may end, in Unix milliseconds: 2^53, the last integer a sorted set's
/// score (a double) holds exactly, in the year 287,396. A later one is refused as an invalid
/// expire time, so that a reader's score, its replicated `ZADD` and its key's `PEXPIREAT` are
/// one number.
pub const LATEST_END_MS: i64 = 1 << 53;

/// How many read leases a decision counts, at most: it only asks "none, one, or more?".
pub const COUNTED: usize = 2;

/// What a caller asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Read,
    Write,
}

/// The key, as a readers-writer lock reads it for one caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holders {
    Free,
    /// A string: a writer holds the key; `caller`: with the caller's token.
    Writer {
        caller: bool,
    },
    /// A sorted set: `live` read leases running (counted up to [`COUNTED`]); `caller`: the
    /// caller's token holds one of them.
    Readers {
        live: usize,
        caller: bool,
    },
    /// Another type.
    Other,
}

impl Holders {
    /// A set of lapsed leases only is a free key.
    fn settled(self) -> Self {
        match self {
            Holders::Readers { live: 0, .. } => Holders::Free,
            other => other,
        }
    }
}

/// How a grant changes what its holder held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// It held nothing.
    New,
    /// It held the key in this mode already: its lease starts over, and it keeps its fencing
    /// token.
    Again,
    /// It held the key in the other mode: a reader promoted, or a writer demoted. A new grant,
    /// with a new fencing token.
    Switch,
}

/// The key holds another type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongType;

/// Whether a caller asking for `mode` on a key `holders` hold is granted now, and how; `None`
/// when it is not (it is refused, or waits). `someone_waits`: a reader or a writer still waits
/// in the key's line once the line has been served; the caller then comes after them, unless it
/// holds the key already.
pub fn take(mode: Mode, holders: Holders, someone_waits: bool) -> Result<Option<How>, WrongType> {
    let unless_someone_waits = (!someone_waits).then_some(How::New);
    Ok(match (mode, holders.settled()) {
        (_, Holders::Other) => return Err(WrongType),
        (_, Holders::Free) => unless_someone_waits,
        (Mode::Write, Holders::Writer { caller: true }) => Some(How::Again),
        (Mode::Read, Holders::Readers { caller: true, .. }) => Some(How::Again),
        (Mode::Read, Holders::Writer { caller: true }) => Some(How::Switch),
        (_, Holders::Writer { caller: false }) => None,
        (Mode::Read, Holders::Readers { caller: false, .. }) => unless_someone_waits,
        (Mode::Write, Holders::Readers { live, caller }) => {
            (caller && live == 1).then_some(How::Switch)
        }
    })
}

/// Whether a caller asking to write, on a key `holders` hold, would wait for ever: it reads
/// beside other readers (it waits for them to leave), and another of those readers already
/// waits to be promoted (it waits for this one to leave). `another_promotion_waits`: a reader
/// whose read lease runs now waits to write, with a token other than the caller's.
pub fn deadlocks(holders: Holders, another_promotion_waits: bool) -> bool {
    matches!(holders.settled(), Holders::Readers { caller: true, live } if live > 1)
        && another_promotion_waits
}

/// Where a read lease has lapsed, as a score: every one at or below it (it ends before `now_ms`).
pub fn lapsed_through(now_ms: i64) -> f64 {
    now_ms.saturating_sub(1) as f64
}

/// Whether a read lease scored `score` runs at `now_ms`.
pub fn runs(score: f64, now_ms: i64) -> bool {
    score > lapsed_through(now_ms)
}

/// The readers of a sorted set at `now_ms`, as `take` reads them for `caller` (its token, if
/// it is one whose lease the set may hold).
pub fn readers<W: SortedWindow + ?Sized>(
    set: &W,
    caller: Option<&W::Member>,
    now_ms: i64,
) -> Holders {
    let cutoff = lapsed_through(now_ms);
    Holders::Readers {
        live: set.count_above(cutoff, COUNTED),
        caller: caller
            .and_then(|token| set.score(token))
            .is_some_and(|score| runs(score, now_ms)),
    }
}

/// When the first read lease running at `now_ms` lapses, in milliseconds from now (0: it ends
/// in this very millisecond); `None` if none runs.
pub fn next_lapse_in_ms<W: SortedWindow + ?Sized>(set: &W, now_ms: i64) -> Option<i64> {
    let first = set.first_above(lapsed_through(now_ms), |_, score| score)?;
    Some((first.ceil() as i64).saturating_sub(now_ms).max(0))
}

/// When a lease of `ms` taken at `now_ms` ends: `None` past [`LATEST_END_MS`] (an invalid
/// expire time).
pub fn lease_end(now_ms: i64, ms: i64) -> Option<i64> {
    now_ms.checked_add(ms).filter(|&end| end <= LATEST_END_MS)
}

/// When a lease ending at `end_ms` ends once extended by `ms` at `now_ms`: `ms` more, or `ms`
/// from now with `replace`. `None` past [`LATEST_END_MS`].
pub fn extended_end(end_ms: i64, now_ms: i64, ms: i64, replace: bool) -> Option<i64> {
    lease_end(if replace { now_ms } else { end_ms }, ms)
}

/// A read lease's end, from its score: the score itself (an integer, as the commands write
/// it), rounded up if a hand-written one is not.
pub fn end_of(score: f64) -> i64 {
    score.ceil() as i64
}

/// When the readers' key expires, its highest score being `highest`: with the last lease,
/// `None` (its expiry left as it is) for a score no lease could have (written by hand: past
/// [`LATEST_END_MS`], negative, not a number).
pub fn key_expiry(highest: f64) -> Option<i64> {
    (0.0..=LATEST_END_MS as f64)
        .contains(&highest)
        .then(|| end_of(highest))
}

/// What a newcomer needs of its key's line, once it has been served: whether a reader or a
/// writer still waits there (it comes after them: a waiting lock counts as a writer, a waiting
/// lease for nobody), and the tokens of those waiting to be promoted (`deadlocks`).
pub fn ahead(lists: &WaitLists, line: LineId) -> (bool, Vec<&[u8]>) {
    let someone_waits = lists.line(line).is_some_and(|line| {
        line.groups
            .iter()
            .any(|group| !matches!(group.ask, Ask::Lease { .. }))
    });
    let tokens = waiting_promotions(lists, line)
        .into_iter()
        .map(|(_, token)| token)
        .collect();
    (someone_waits, tokens)
}

/// The waiters of `line` waiting to be promoted, with their tokens, in arrival order: the
/// module asks which of them still read (their read lease runs), the ones `serve` lets in
/// first.
pub fn waiting_promotions(lists: &WaitLists, line: LineId) -> Vec<(WaiterId, &[u8])> {
    let Some(line) = lists.line(line) else {
        return Vec::new();
    };
    line.groups
        .iter()
        .filter(|group| group.ask == Ask::Write { promotes: true })
        .flat_map(|group| group.waiters.iter())
        .filter_map(|&id| match lists.waiter(id).map(|waiter| &waiter.want) {
            Some(Want::Write { token, .. }) => Some((id, token.as_slice())),
            _ => None,
        })
        .collect()
}

/// The key, as a look at a readers-writer line sees it (after the lapsed leases are removed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    Free,
    /// A writer, or any string (a lock), with the milliseconds it has left, if it expires.
    Writer {
        expires_in_ms: Option<i64>,
    },
    /// Read leases: `live` of them (counted up to [`COUNTED`]), the first lapsing in
    /// `next_lapse_in_ms`.
    Readers {
        live: usize,
        next_lapse_in_ms: Option<i64>,
    },
    /// Another type, with the milliseconds it has left, if it expires.
    Other {
        expires_in_ms: Option<i64>,
    },
}

/// What the key is, as the look goes on: each grant changes it for those after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Free,
    Written,
    /// Read leases, counted up to [`COUNTED`] and then one per grant.
    Reading(usize),
    Other,
}

/// Serves a readers-writer `line` of `lists` once, on a key `held` so: whom the key lets in now,
/// and when to look again. `promoting`: the waiters waiting to be promoted whose read lease
/// runs now (`waiting_promotions`, asked of the key), served first, in arrival order; then
/// everyone else in arrival order, until the first who does not fit. A waiting lock is a
/// writer's request (the same string); a waiting lease is no reader's nor writer's, and is
/// passed over. While the server is out of memory, each waiter whose turn comes is answered
/// with its error and nothing is granted. Reads only.
pub fn serve(
    lists: &WaitLists,
    line: LineId,
    held: Held,
    promoting: &[WaiterId],
    out_of_memory: bool,
) -> Plan {
    let Some(line) = lists.line(line) else {
        return Plan::default();
    };
    let (mut seen, mut expires_in_ms, mut lapses_in_ms) = match held {
        Held::Free | Held::Readers { live: 0, .. } => (Seen::Free, None, None),
        Held::Writer { expires_in_ms } => (Seen::Written, expires_in_ms, None),
        Held::Readers {
            live,
            next_lapse_in_ms,
        } => (Seen::Reading(live), None, next_lapse_in_ms),
        Held::Other { expires_in_ms } => (Seen::Other, expires_in_ms, None),
    };
    // Everyone else: the next waiter of each group but the leases', the earliest first (ids
    // rise in arrival order).
    let mut next: BinaryHeap<Reverse<(WaiterId, usize, usize)>> = line
        .groups
        .iter()
        .enumerate()
        .filter(|(_, group)| !matches!(group.ask, Ask::Lease { .. }))
        .filter_map(|(group, g)| g.waiters.front().map(|&id| Reverse((id, group, 0))))
        .collect();
    let order = promoting
        .iter()
        .map(|&id| (id, true))
        .chain(std::iter::from_fn(|| {
            let Reverse((id, group, at)) = next.pop()?;
            if let Some(&following) = line.groups[group].waiters.get(at + 1) {
                next.push(Reverse((following, group, at + 1)));
            }
            Some((id, false))
        }));
    let mut plan = Plan::default();
    let mut held_back = false;
    for (id, promotes) in order {
        if !promotes && promoting.contains(&id) {
            continue;
        }
        let Some(want) = lists.waiter(id).map(|waiter| &waiter.want) else {
            continue;
        };
        let fits = match want {
            Want::Write { .. } if promotes => seen == Seen::Reading(1),
            Want::Write { .. } | Want::Lock { .. } => seen == Seen::Free,
            Want::Read { .. } => matches!(seen, Seen::Free | Seen::Reading(_)),
            Want::Lease { .. } => continue,
        };
        if !fits {
            held_back = true;
            break;
        }
        if out_of_memory {
            plan.served.push((id, State::OutOfMemory));
            continue;
        }
        plan.served.push((id, State::Granted));
        match *want {
            Want::Read { ms, .. } => {
                seen = match seen {
                    Seen::Reading(live) => Seen::Reading(live + 1),
                    _ => Seen::Reading(1),
                };
                lapses_in_ms = Some(lapses_in_ms.map_or(ms, |lapse| lapse.min(ms)));
            }
            Want::Write { ms, .. } | Want::Lock { ms, .. } => {
                seen = Seen::Written;
                expires_in_ms = (ms > 0).then_some(ms);
                lapses_in_ms = None;
            }
            Want::Lease { .. } => {}
        }
    }
    // Those held back are looked at again when the key can change by itself: its expiry, or
    // the first read lease's lapse (a promotion waits for the others to go, a writer for all).
    let changes_in_ms = match seen {
        Seen::Written | Seen::Other => expires_in_ms,
        Seen::Reading(_) => lapses_in_ms,
        Seen::Free => None,
    };
    plan.look_again_ms = changes_in_ms
        .filter(|_| held_back)
        .map(|ms| ms.saturating_add(1));
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zwindow::model::ModelWindow;

    const NOW_MS: i64 = 1_700_000_000_000;

    fn read(token: &str) -> Want {
        Want::Read {
            token: token.as_bytes().to_vec(),
            ms: 1000,
            fence: false,
        }
    }

    fn write(token: &str) -> Want {
        Want::Write {
            token: token.as_bytes().to_vec(),
            ms: 1000,
            fence: false,
            promotes: false,
        }
    }

    fn promote(token: &str) -> Want {
        Want::Write {
            token: token.as_bytes().to_vec(),
            ms: 1000,
            fence: false,
            promotes: true,
        }
    }

    fn granted(plan: &Plan) -> Vec<WaiterId> {
        plan.served
            .iter()
            .filter(|(_, state)| *state == State::Granted)
            .map(|(id, _)| *id)
            .collect()
    }

    #[test]
    fn readers_share_and_a_writer_holds_alone() {
        use How::*;
        use Mode::*;
        let free = Holders::Free;
        let readers = Holders::Readers {
            live: 2,
            caller: false,
        };
        let writer = Holders::Writer { caller: false };
        assert_eq!(take(Read, free, false), Ok(Some(New)));
        assert_eq!(take(Write, free, false), Ok(Some(New)));
        assert_eq!(take(Read, readers, false), Ok(Some(New)));
        assert_eq!(take(Write, readers, false), Ok(None));
        assert_eq!(take(Read, writer, false), Ok(None));
        assert_eq!(take(Write, writer, false), Ok(None));
        assert_eq!(take(Read, Holders::Other, false), Err(WrongType));
        assert_eq!(take(Write, Holders::Other, true), Err(WrongType));
    }

    #[test]
    fn a_newcomer_comes_after_those_waiting() {
        use Mode::*;
        let readers = Holders::Readers {
            live: 1,
            caller: false,
        };
        for mode in [Read, Write] {
            assert_eq!(take(mode, Holders::Free, true), Ok(None), "{mode:?}");
            assert_eq!(take(mode, readers, true), Ok(None), "{mode:?}");
        }
    }

    #[test]
    fn a_holder_renews_switches_or_is_promoted_whoever_waits() {
        use How::*;
        use Mode::*;
        let mine = Holders::Writer { caller: true };
        let reading = |live| Holders::Readers { live, caller: true };
        for waits in [false, true] {
            assert_eq!(take(Write, mine, waits), Ok(Some(Again)));
            assert_eq!(take(Read, mine, waits), Ok(Some(Switch)), "demoted");
            assert_eq!(take(Read, reading(2), waits), Ok(Some(Again)));
            assert_eq!(take(Write, reading(1), waits), Ok(Some(Switch)), "promoted");
            assert_eq!(take(Write, reading(2), waits), Ok(None), "others read");
        }
    }

    #[test]
    fn lapsed_leases_leave_a_free_key() {
        let lapsed = Holders::Readers {
            live: 0,
            caller: false,
        };
        assert_eq!(take(Mode::Write, lapsed, false), Ok(Some(How::New)));
        assert_eq!(take(Mode::Read, lapsed, true), Ok(None));
        assert!(!deadlocks(lapsed, true));
    }

    #[test]
    fn a_second_promotion_would_wait_for_ever() {
        let beside = Holders::Readers {
            live: 2,
            caller: true,
        };
        assert!(deadlocks(beside, true));
        assert!(!deadlocks(beside, false));
        let alone = Holders::Readers {
            live: 1,
            caller: true,
        };
        assert!(!deadlocks(alone, true), "promoted at once");
        let not_reading = Holders::Readers {
            live: 2,
            caller: false,
        };
        assert!(!deadlocks(not_reading, true), "waits like any writer");
    }

    #[test]
    fn a_lease_runs_through_the_millisecond_it_ends() {
        assert!(runs(NOW_MS as f64, NOW_MS));
        assert!(!runs((NOW_MS - 1) as f64, NOW_MS));
        assert!(
            runs((NOW_MS as f64) - 0.5, NOW_MS),
            "within its millisecond"
        );
        let set = ModelWindow::of(&[
            ("gone", (NOW_MS - 1) as f64),
            ("a", NOW_MS as f64),
            ("b", (NOW_MS + 500) as f64),
        ]);
        assert_eq!(
            readers(&set, Some(&b"a"[..]), NOW_MS),
            Holders::Readers {
                live: 2,
                caller: true
            }
        );
        assert_eq!(
            readers(&set, Some(&b"gone"[..]), NOW_MS),
            Holders::Readers {
                live: 2,
                caller: false
            }
        );
        assert_eq!(next_lapse_in_ms(&set, NOW_MS), Some(0));
        assert_eq!(next_lapse_in_ms(&set, NOW_MS + 1), Some(499));
        assert_eq!(next_lapse_in_ms(&set, NOW_MS + 501), None);
    }

    #[test]
    fn leases_end_where_a_score_is_exact() {
        assert_eq!(lease_end(NOW_MS, 30_000), Some(NOW_MS + 30_000));
        assert_eq!(lease_end(LATEST_END_MS - 1, 1), Some(LATEST_END_MS));
        assert_eq!(lease_end(LATEST_END_MS, 1), None);
        assert_eq!(lease_end(NOW_MS, i64::MAX), None);
        assert_eq!(
            extended_end(NOW_MS + 10, NOW_MS, 5, false),
            Some(NOW_MS + 15)
        );
        assert_eq!(extended_end(NOW_MS + 10, NOW_MS, 5, true), Some(NOW_MS + 5));
        assert_eq!(key_expiry(NOW_MS as f64), Some(NOW_MS));
        assert_eq!(key_expiry(NOW_MS as f64 + 0.25), Some(NOW_MS + 1));
        for hand_written in [f64::INFINITY, f64::NAN, -1.0, 1e300] {
            assert_eq!(key_expiry(hand_written), None, "{hand_written}");
        }
    }

    fn line_of(wants: Vec<Want>) -> (WaitLists, LineId, Vec<WaiterId>) {
        let mut lists = WaitLists::new();
        let ids = wants
            .into_iter()
            .map(|want| lists.join(0, b"k", want))
            .collect();
        let line = lists.line_of(0, b"k").expect("a line");
        (lists, line, ids)
    }

    #[test]
    fn readers_at_the_head_go_in_together_and_a_writer_holds_back_those_after_it() {
        let (lists, line, ids) = line_of(vec![read("r1"), read("r2"), write("w"), read("r3")]);
        let plan = serve(&lists, line, Held::Free, &[], false);
        assert_eq!(granted(&plan), ids[..2]);
        // The writer waits for the first of the two leases granted to lapse, and r3 behind it.
        assert_eq!(plan.look_again_ms, Some(1001));
    }

    #[test]
    fn a_stream_of_readers_cannot_pass_a_waiting_writer() {
        let (lists, line, _) = line_of(vec![write("w"), read("r1"), read("r2")]);
        let reading = Held::Readers {
            live: 2,
            next_lapse_in_ms: Some(40),
        };
        let plan = serve(&lists, line, reading, &[], false);
        assert_eq!(plan.served, []);
        assert_eq!(plan.look_again_ms, Some(41));
        let plan = serve(&lists, line, Held::Free, &[], false);
        assert_eq!(granted(&plan).len(), 1, "the writer, alone");
        assert_eq!(plan.look_again_ms, Some(1001), "at its lease's end");
    }

    #[test]
    fn a_promotion_goes_before_the_line_once_its_lease_is_the_last() {
        let (lists, line, ids) = line_of(vec![write("w"), read("r"), promote("p")]);
        let p = ids[2];
        let two = Held::Readers {
            live: 2,
            next_lapse_in_ms: Some(300),
        };
        let plan = serve(&lists, line, two, &[p], false);
        assert_eq!(plan.served, []);
        assert_eq!(plan.look_again_ms, Some(301));
        let alone = Held::Readers {
            live: 1,
            next_lapse_in_ms: Some(300),
        };
        let plan = serve(&lists, line, alone, &[p], false);
        assert_eq!(granted(&plan), [p], "promoted; w and r wait for it");
        assert_eq!(plan.look_again_ms, Some(1001));
        // Its read lease lapsed: it is a writer like any other, in its arrival order.
        let plan = serve(&lists, line, Held::Free, &[], false);
        assert_eq!(granted(&plan), [ids[0]]);
    }

    #[test]
    fn a_lock_waits_as_a_writer_and_a_lease_holds_back_nobody() {
        let lease = Want::Lease {
            member: b"m".to_vec(),
            window: 10.0,
            limit: 1,
            permits: 1,
            separator: None,
            fence: false,
        };
        let lock = Want::Lock {
            token: b"l".to_vec(),
            ms: 0,
            fence: false,
        };
        let (lists, line, ids) = line_of(vec![lease, read("r"), lock.clone()]);
        let plan = serve(&lists, line, Held::Free, &[], false);
        assert_eq!(granted(&plan), [ids[1]]);
        let (lists, line, ids) = line_of(vec![lock, read("r")]);
        let plan = serve(&lists, line, Held::Free, &[], false);
        assert_eq!(granted(&plan), [ids[0]]);
        assert_eq!(
            plan.look_again_ms, None,
            "a lock without a lease waits for its release"
        );
    }

    #[test]
    fn out_of_memory_each_whose_turn_comes_is_refused_and_nothing_changes() {
        let (lists, line, ids) = line_of(vec![read("r1"), write("w"), read("r2")]);
        let plan = serve(&lists, line, Held::Free, &[], true);
        assert_eq!(
            plan.served,
            ids.iter()
                .map(|&id| (id, State::OutOfMemory))
                .collect::<Vec<_>>()
        );
        let reading = Held::Readers {
            live: 1,
            next_lapse_in_ms: Some(5),
        };
        let plan = serve(&lists, line, reading, &[], true);
        assert_eq!(plan.served, [(ids[0], State::OutOfMemory)]);
        assert_eq!(plan.look_again_ms, Some(6));
    }

    #[test]
    fn a_key_of_another_type_lets_nobody_in_until_it_goes() {
        let (lists, line, _) = line_of(vec![read("r"), write("w")]);
        let other = Held::Other {
            expires_in_ms: Some(70),
        };
        let plan = serve(&lists, line, other, &[], false);
        assert_eq!((plan.served.len(), plan.look_again_ms), (0, Some(71)));
    }

    #[test]
    fn newcomers_learn_who_waits_ahead() {
        let (lists, line, _) = line_of(vec![promote("p"), read("r")]);
        assert_eq!(ahead(&lists, line), (true, vec![&b"p"[..]]));
        assert_eq!(waiting_promotions(&lists, line).len(), 1);
        let lease = Want::Lease {
            member: b"m".to_vec(),
            window: 10.0,
            limit: 1,
            permits: 1,
            separator: None,
            fence: false,
        };
        let (lists, line, _) = line_of(vec![lease]);
        assert_eq!(ahead(&lists, line), (false, vec![]));
    }
}
